//! Motion planning for the MindCub3r: from a face-turn solution to robot primitives, with a
//! time cost per primitive, choosing what is cheapest *for the robot*.
//!
//! Level: robot (depends on `cube` and [`super::model`] only; the solver-driven candidate
//! generation lives in `job`, the level above).
//!
//! ## The model
//! The robot can only turn the bottom layer and tilts one way, so every face turn needs the
//! face brought to the bottom first (see
//! [Why every face goes to the bottom](#why-every-face-goes-to-the-bottom)). A robot state is the
//! cube's [`Orientation`] (24) × the tilt arm ([`Arm::Away`] / [`Arm::Hold`]) × the last
//! direction the turntable moved in (+, −, unknown: reversing the turntable takes up the
//! gear backlash, [`CostModel::reversal`]). Between two face turns the robot walks this
//! 144-node graph with whole-cube primitives (`ArmAway`, `ArmHold`, `Tilt`, `Spin(±1)`,
//! `Spin(±2)`); the cheapest walk between any two nodes is precomputed (Dijkstra from every
//! node), so planning a solution of n moves is a dynamic programme over n layers
//! (see [Where the dynamic programme comes from](#where-the-dynamic-programme-comes-from))
//! that also
//! * picks the direction of every half turn (`Turn(2)` or `Turn(-2)`) and half spin,
//! * merges arm transitions (a tilt ends holding, so a following turn needs no `ArmHold`),
//! * looks ahead across moves: the orientation chosen for move *i* is the one that makes
//!   moves *i+1…n* cheapest, not the one closest to move *i−1*,
//! * tries both orders of two consecutive turns of opposite faces (they commute).
//!
//! [`greedy`] is the baseline the open MindCub3r ports use ([The baseline table](#the-baseline-table)): a fixed per-move
//! lookup table from where the face currently is, no look-ahead.
//!
//! Choosing among solutions ([`Planner::choose`]) and among the whole-cube symmetric
//! variants of the problem ([`Symmetry`](crate::robot::symmetry::Symmetry), [`Symmetry::all`](crate::robot::symmetry::Symmetry::all): 24 rotations × mirror) is how
//! the big savings come: the solver's N shortest solutions of each of the 48 conjugated
//! problems are mapped back to the real cube and the cheapest plan wins.
//!
//! ## Why every face goes to the bottom
//!
//! The MindCub3r turns only its bottom layer (the arm holds the two above it while the
//! turntable turns) and tilts the cube one way only (Front → Top → Back → Bottom). A face
//! turn `X` therefore costs the whole-cube moves that bring face `X` to the Bottom
//! position, then one `Turn`: `X` is `Turn(-1)` (clockwise seen from the face is `D` in the
//! robot frame), `X'` is `Turn(+1)` and `X2` is `Turn(2)` (or `Turn(-2)`). The primitives,
//! their preconditions and their moves in the robot frame are in
//! [Primitives](crate::robot::mindcub3r#primitives); their costs are the seconds of
//! [Timings](crate::robot::mindcub3r#timings).
//!
//! ## The baseline table
//!
//! [`greedy`] is the conversion of the ev3dev MindCub3r demo
//! (`ev3dev/ev3dev-lang-python-demo`, `robots/MINDCUB3R/mindcuber.py`): for each move, look
//! up where its face is now and apply a fixed prefix, updating the orientation as it goes;
//! no look-ahead, and the solver's output is used as it is.
//!
//! | Face is at | Before the `Turn` |
//! |------------|-------------------|
//! | Bottom | — |
//! | Back | `Tilt` |
//! | Top | `Tilt`, `Tilt` |
//! | Front | `Spin(2)`, `Tilt` |
//! | Left | `Spin(+1)`, `Tilt` |
//! | Right | `Spin(-1)`, `Tilt` |
//!
//! Other published conversions: the direct-command ports (`Pedro-Beirao/mindcuber-python`,
//! `Steve-Zheng/mindcuber-python-ev3`) keep the L–R axis level and reach R and L by spin,
//! tilt, turn, tilt, spin back, which spends more tilts; CUBOTino (Andrea Favero's servo
//! robot with the same three primitives) uses per-move tables and a small peephole pass.
//! None of them plans the tilts of a whole solution together.
//!
//! ## Where the dynamic programme comes from
//!
//! The planner is this crate's own design, not taken from a source. Its core is a graph
//! whose nodes are the robot's states (orientation × tilt arm, here also × the turntable's
//! last direction) and whose edges are the whole-cube primitives with their costs; the
//! cheapest walks between all pairs of nodes are computed once. Planning n moves is then a
//! dynamic programme over n layers, where layer i holds the states with move i's face at
//! the Bottom: the cost of reaching state `o` after move i is the least, over the states
//! `o'` of layer i − 1, of their cost + the walk `o' → o` + the turn. On the default
//! timings the programme alone saves several percent of robot time over the baseline table
//! (about 7 % on random 20-move sequences in the model); the larger savings come from
//! choosing among several solutions, as suggested in `efrantar/rob-twophase` issue #13, and
//! among the symmetric variants of the problem.

use serde::Serialize;

use super::cost::{Arm, CostModel, PlanError, RobotState};
use super::model::{Orientation, Primitive};
use crate::cube::{Alg, Face, Move, MoveKind, Turn};
use crate::solver::costed::SequenceCost;

/// A planned execution.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Plan {
    /// The face turns in the order executed (opposite-face pairs may be swapped).
    #[serde(serialize_with = "ser_alg")]
    pub alg: Alg,
    pub primitives: Vec<Primitive>,
    /// Robot seconds by the cost model used to plan.
    pub seconds: f64,
    pub end: RobotState,
}

fn ser_alg<S: serde::Serializer>(alg: &Alg, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&alg.to_string())
}

impl Plan {
    pub fn face_turns(&self) -> usize {
        self.alg.len()
    }

    pub fn count(&self, f: impl Fn(Primitive) -> bool) -> usize {
        self.primitives.iter().filter(|&&p| f(p)).count()
    }
}

fn face_turns(alg: &Alg) -> Result<Vec<(Face, Turn)>, PlanError> {
    alg.moves()
        .iter()
        .enumerate()
        .map(|(index, m)| match m.kind {
            MoveKind::Face(f) => Ok((f, m.turn)),
            _ => Err(PlanError::NotFaceTurn {
                index,
                mv: m.to_string(),
            }),
        })
        .collect()
}

/// The turntable arguments that execute `turn` of the face at the bottom.
fn turn_options(turn: Turn, both: bool) -> &'static [i8] {
    match turn {
        // Clockwise seen from the face = D in the robot frame = Turn(-1).
        Turn::Cw => &[-1],
        Turn::Ccw => &[1],
        Turn::Half if both => &[2, -2],
        Turn::Half => &[2],
    }
}

/// The baseline of the open MindCub3r ports (see
/// [The baseline table](crate::robot::mindcub3r::planner#the-baseline-table)): bring each face to the
/// bottom with a fixed table from where it is now, no look-ahead; `X` → `Turn(-1)`, `X'` →
/// `Turn(+1)`, `X2` → `Turn(2)`; the arm is moved only when a primitive needs it.
pub fn greedy(alg: &Alg, start: RobotState, costs: &CostModel) -> Result<Plan, PlanError> {
    let moves = face_turns(alg)?;
    let mut prims = Vec::new();
    let mut s = start;
    let push = |p: Primitive, s: &mut RobotState, prims: &mut Vec<Primitive>| {
        let need = match p {
            Primitive::Tilt | Primitive::Turn(_) => Some(Arm::Hold),
            Primitive::Spin(_) => Some(Arm::Away),
            _ => None,
        };
        match need {
            Some(Arm::Hold) if s.arm == Arm::Away => {
                prims.push(Primitive::ArmHold);
                *s = s.after(Primitive::ArmHold);
            }
            Some(Arm::Away) if s.arm == Arm::Hold => {
                prims.push(Primitive::ArmAway);
                *s = s.after(Primitive::ArmAway);
            }
            _ => {}
        }
        prims.push(p);
        *s = s.after(p);
    };
    for (face, turn) in moves {
        let pos = s.orientation.position_of(face);
        let pre: &[Primitive] = match pos {
            Face::D => &[],
            Face::B => &[Primitive::Tilt],
            Face::U => &[Primitive::Tilt, Primitive::Tilt],
            Face::F => &[Primitive::Spin(2), Primitive::Tilt],
            Face::L => &[Primitive::Spin(1), Primitive::Tilt],
            Face::R => &[Primitive::Spin(-1), Primitive::Tilt],
        };
        for &p in pre {
            push(p, &mut s, &mut prims);
        }
        let k = match turn {
            Turn::Cw => -1,
            Turn::Ccw => 1,
            Turn::Half => 2,
        };
        push(Primitive::Turn(k), &mut s, &mut prims);
    }
    let (end, seconds) = costs.run(start, &prims)?;
    Ok(Plan {
        alg: alg.clone(),
        primitives: prims,
        seconds,
        end,
    })
}

const ARMS: [Arm; 2] = [Arm::Away, Arm::Hold];
const DIRS: [i8; 3] = [0, 1, -1];
const NODES: usize = 24 * 2 * 3;
const WHOLE_CUBE: [Primitive; 7] = [
    Primitive::ArmAway,
    Primitive::ArmHold,
    Primitive::Tilt,
    Primitive::Spin(1),
    Primitive::Spin(-1),
    Primitive::Spin(2),
    Primitive::Spin(-2),
];

/// The optimal planner: all-pairs cheapest whole-cube walks, then a DP per solution.
#[derive(Clone, Debug)]
pub struct Planner {
    costs: CostModel,
    orientations: Vec<Orientation>,
    /// `dist[a * NODES + b]`: cheapest seconds from node a to node b.
    dist: Vec<f64>,
    /// `pred[a * NODES + b]`: (previous node, primitive) on that walk.
    pred: Vec<Option<(u16, Primitive)>>,
}

impl Planner {
    pub fn new(costs: CostModel) -> Planner {
        let orientations = Orientation::all();
        let mut p = Planner {
            costs,
            orientations,
            dist: vec![f64::INFINITY; NODES * NODES],
            pred: vec![None; NODES * NODES],
        };
        for src in 0..NODES {
            p.dijkstra(src);
        }
        p
    }

    pub fn costs(&self) -> &CostModel {
        &self.costs
    }

    fn node(&self, s: &RobotState) -> usize {
        let o = self
            .orientations
            .iter()
            .position(|o| *o == s.orientation)
            .expect("one of the 24 orientations");
        let a = ARMS.iter().position(|&a| a == s.arm).expect("arm");
        let d = DIRS
            .iter()
            .position(|&d| d == s.turntable.signum())
            .expect("direction");
        (o * 2 + a) * 3 + d
    }

    fn state(&self, n: usize) -> RobotState {
        RobotState {
            orientation: self.orientations[n / 6],
            arm: ARMS[(n / 3) % 2],
            turntable: DIRS[n % 3],
        }
    }

    fn edges(&self, n: usize) -> impl Iterator<Item = (usize, Primitive, f64)> + '_ {
        let s = self.state(n);
        WHOLE_CUBE.iter().filter_map(move |&p| {
            let ok = match p {
                Primitive::ArmAway => s.arm == Arm::Hold,
                Primitive::ArmHold => s.arm == Arm::Away,
                Primitive::Tilt => s.arm == Arm::Hold,
                Primitive::Spin(_) => s.arm == Arm::Away,
                _ => false,
            };
            ok.then(|| (self.node(&s.after(p)), p, self.costs.cost(&s, p)))
        })
    }

    fn dijkstra(&mut self, src: usize) {
        let row = src * NODES;
        self.dist[row + src] = 0.0;
        let mut done = [false; NODES];
        loop {
            let mut best = None;
            for (v, &d) in done.iter().enumerate() {
                if !d && self.dist[row + v].is_finite() {
                    match best {
                        Some(b) if self.dist[row + b] <= self.dist[row + v] => {}
                        _ => best = Some(v),
                    }
                }
            }
            let Some(u) = best else { break };
            done[u] = true;
            let du = self.dist[row + u];
            let edges: Vec<_> = self.edges(u).collect();
            for (v, p, c) in edges {
                if du + c < self.dist[row + v] - 1e-12 {
                    self.dist[row + v] = du + c;
                    self.pred[row + v] = Some((u as u16, p));
                }
            }
        }
    }

    /// The primitives of the cheapest whole-cube walk from node a to node b.
    fn walk(&self, a: usize, b: usize) -> Vec<Primitive> {
        let mut out = Vec::new();
        let mut v = b;
        while v != a {
            let (u, p) = self.pred[a * NODES + v].expect("every node is reachable");
            out.push(p);
            v = u as usize;
        }
        out.reverse();
        out
    }

    /// Cheapest seconds of a whole-cube walk between two states.
    pub fn distance(&self, a: &RobotState, b: &RobotState) -> f64 {
        self.dist[self.node(a) * NODES + self.node(b)]
    }

    /// The cheapest execution of `alg` from `start` under this planner's cost model.
    pub fn plan(&self, alg: &Alg, start: RobotState) -> Result<Plan, PlanError> {
        let moves = face_turns(alg)?;
        // Segments: one move, or two turns of opposite faces (which commute: both orders).
        let mut segments: Vec<Vec<Vec<(Face, Turn)>>> = Vec::new();
        let mut i = 0;
        while i < moves.len() {
            if i + 1 < moves.len() && moves[i + 1].0 == moves[i].0.opposite() {
                let (a, b) = (moves[i], moves[i + 1]);
                segments.push(vec![vec![a, b], vec![b, a]]);
                i += 2;
            } else {
                segments.push(vec![vec![moves[i]]]);
                i += 1;
            }
        }

        // One DP step: a face turn from every reachable node.
        type Back = Option<(u16, u16, i8)>; // (from node, pre-turn node, turn arg)
        let step = |layer: &[f64], (face, turn): (Face, Turn)| -> (Vec<f64>, Vec<Back>) {
            let mut next = vec![f64::INFINITY; NODES];
            let mut back: Vec<Back> = vec![None; NODES];
            // Pre-turn nodes: the face at the bottom, the arm holding.
            let pres: Vec<usize> = (0..NODES)
                .filter(|&n| {
                    let s = self.state(n);
                    s.arm == Arm::Hold && s.orientation.at(Face::D) == face
                })
                .collect();
            for (from, &c0) in layer.iter().enumerate() {
                if !c0.is_finite() {
                    continue;
                }
                for &pre in &pres {
                    let c1 = c0 + self.dist[from * NODES + pre];
                    let s = self.state(pre);
                    for &k in turn_options(turn, self.costs.both_half_directions) {
                        let p = Primitive::Turn(k);
                        let c = c1 + self.costs.cost(&s, p);
                        let to = self.node(&s.after(p));
                        if c < next[to] - 1e-12 {
                            next[to] = c;
                            back[to] = Some((from as u16, pre as u16, k));
                        }
                    }
                }
            }
            (next, back)
        };

        let mut layer = vec![f64::INFINITY; NODES];
        layer[self.node(&start)] = 0.0;
        // Per segment, per end node: (alternative, [(from, pre, k)] per move).
        type SegBack = Option<(usize, Vec<(u16, u16, i8)>)>;
        let mut backs: Vec<Vec<SegBack>> = Vec::new();
        for seg in &segments {
            let mut best = vec![f64::INFINITY; NODES];
            let mut seg_back = vec![None; NODES];
            for (alt, seq) in seg.iter().enumerate() {
                let mut l = layer.clone();
                let mut inner: Vec<Vec<Back>> = Vec::new();
                for &mv in seq {
                    let (n, b) = step(&l, mv);
                    l = n;
                    inner.push(b);
                }
                for end in 0..NODES {
                    if l[end] < best[end] - 1e-12 {
                        best[end] = l[end];
                        let mut chain = Vec::new();
                        let mut v = end;
                        for b in inner.iter().rev() {
                            let (from, pre, k) = b[v].expect("finite cost has a back pointer");
                            chain.push((from, pre, k));
                            v = from as usize;
                        }
                        chain.reverse();
                        seg_back[end] = Some((alt, chain));
                    }
                }
            }
            layer = best;
            backs.push(seg_back);
        }

        // The cheapest end node, then back through the segments.
        let mut end = self.node(&start);
        if !segments.is_empty() {
            end = (0..NODES)
                .filter(|&n| layer[n].is_finite())
                .min_by(|&a, &b| layer[a].total_cmp(&layer[b]))
                .expect("every orientation is reachable");
        }
        let mut order: Vec<(Face, Turn)> = Vec::with_capacity(moves.len());
        let mut steps: Vec<(u16, u16, i8)> = Vec::with_capacity(moves.len());
        let mut v = end;
        for (seg, back) in segments.iter().zip(&backs).rev() {
            let (alt, chain) = back[v].clone().expect("reached node has a back pointer");
            for (mv, st) in seg[alt].iter().zip(&chain).rev() {
                order.push(*mv);
                steps.push(*st);
            }
            v = chain[0].0 as usize;
        }
        order.reverse();
        steps.reverse();
        let mut prims = Vec::new();
        for &(from, pre, k) in &steps {
            prims.extend(self.walk(from as usize, pre as usize));
            prims.push(Primitive::Turn(k));
        }
        let (end_state, seconds) = self.costs.run(start, &prims)?;
        Ok(Plan {
            alg: Alg::from_moves(order.iter().map(|&(f, t)| Move::face(f, t)).collect()),
            primitives: prims,
            seconds,
            end: end_state,
        })
    }

    /// The robot's time for face-turn sequences from `start`, as the min-plus automaton the
    /// solver's costed search prices paths with ([`SequenceCost`]). After a face turn the
    /// robot holds that face at the bottom with the arm at hold; its state is which of the
    /// four orientations with that face down it is in × the turntable's last direction
    /// (8 states). Entries are exactly this planner's DP steps (cheapest whole-cube walk +
    /// the turn), so [`SequenceCost::cost`] of a sequence is what [`Planner::plan`] gives.
    pub fn sequence_cost(&self, start: RobotState) -> SequenceCost {
        const K: usize = 8;
        let down: Vec<Vec<Orientation>> = Face::ALL
            .iter()
            .map(|&f| {
                self.orientations
                    .iter()
                    .copied()
                    .filter(|o| o.at(Face::D) == f)
                    .collect()
            })
            .collect();
        // Automaton state j of a move of face f: (heading h = j / 2, direction j % 2).
        let state_node = |f: Face, j: usize| {
            self.node(&RobotState {
                orientation: down[f.index()][j / 2],
                arm: Arm::Hold,
                turntable: if j % 2 == 0 { 1 } else { -1 },
            })
        };
        // From robot node `a`, move m: the cost to end in each state j.
        let row = |a: usize, m: usize| -> [f64; K] {
            let face = Face::ALL[m / 3];
            let turn = Turn::ALL[m % 3];
            let mut out = [f64::INFINITY; K];
            for (h, &o) in down[face.index()].iter().enumerate() {
                for d in DIRS {
                    let s = RobotState {
                        orientation: o,
                        arm: Arm::Hold,
                        turntable: d,
                    };
                    let walk = self.dist[a * NODES + self.node(&s)];
                    for &k in turn_options(turn, self.costs.both_half_directions) {
                        let p = Primitive::Turn(k);
                        let j = h * 2 + usize::from(k < 0);
                        out[j] = out[j].min(walk + self.costs.cost(&s, p));
                    }
                }
            }
            out
        };
        let from = self.node(&start);
        let mut first = Vec::with_capacity(18 * K);
        for m in 0..18 {
            first.extend(row(from, m));
        }
        let mut step = Vec::with_capacity(18 * 18 * K * K);
        for p in 0..18 {
            for m in 0..18 {
                for i in 0..K {
                    step.extend(row(state_node(Face::ALL[p / 3], i), m));
                }
            }
        }
        SequenceCost::new(K, &first, &step).expect("8 states, finite non-negative costs")
    }

    /// [`Planner::choose`] for many candidates: prices every candidate with the automaton
    /// of [`Planner::sequence_cost`] (a few hundred additions per move), then plans the
    /// `keep` cheapest exactly (the automaton's price is the DP's; planning also yields
    /// the primitives).
    pub fn choose_screened(
        &self,
        candidates: &[Alg],
        start: RobotState,
        keep: usize,
    ) -> Result<(usize, Plan), PlanError> {
        if candidates.len() <= keep {
            return self.choose(candidates, start);
        }
        let sc = self.sequence_cost(start);
        let mut priced: Vec<(f64, usize)> = candidates
            .iter()
            .enumerate()
            .map(|(i, a)| (sc.cost(a).unwrap_or(f64::NAN), i))
            .collect();
        if priced.iter().any(|p| p.0.is_nan()) {
            // Something the automaton cannot price (not face turns): the DP says why.
            return self.choose(candidates, start);
        }
        priced.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        priced.truncate(keep.max(1));
        let short: Vec<Alg> = priced.iter().map(|&(_, i)| candidates[i].clone()).collect();
        let (j, plan) = self.choose(&short, start)?;
        Ok((priced[j].1, plan))
    }

    /// Plans every candidate and returns the index and plan of the cheapest (ties: the
    /// fewer face turns, then the earlier candidate).
    pub fn choose(
        &self,
        candidates: &[Alg],
        start: RobotState,
    ) -> Result<(usize, Plan), PlanError> {
        let mut best: Option<(usize, Plan)> = None;
        for (i, alg) in candidates.iter().enumerate() {
            let plan = self.plan(alg, start)?;
            let better = match &best {
                None => true,
                Some((_, b)) => {
                    plan.seconds < b.seconds - 1e-9
                        || ((plan.seconds - b.seconds).abs() <= 1e-9
                            && plan.face_turns() < b.face_turns())
                }
            };
            if better {
                best = Some((i, plan));
            }
        }
        best.ok_or(PlanError::NoCandidates)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::{random_moves, random_state, CubieCube, FaceletCube, Size};
    use crate::robot::mindcub3r::frames::{apply_primitives, view};
    use crate::robot::mindcub3r::model::Timings;
    use crate::robot::symmetry::same_up_to_rotation;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// The orientation the MindCub3r scan leaves the cube in (its own sequence).
    fn after_scan() -> Orientation {
        crate::robot::mindcub3r::scan_steps()
            .iter()
            .flatten()
            .fold(Orientation::IDENTITY, |o, &p| o.after(p))
    }

    /// Executing the plan on the robot-frame cube reaches the solution's state, up to the
    /// final orientation.
    fn check_plan(cube: &FaceletCube, alg: &Alg, start: RobotState, plan: &Plan) {
        let mut robot = view(cube, &start.orientation);
        apply_primitives(&mut robot, &plan.primitives);
        let mut expect = cube.clone();
        expect.apply(alg).unwrap();
        // Turn the robot's cube back to the cube frame by the plan's end orientation.
        let back = view(&expect, &plan.end.orientation);
        assert_eq!(robot.colors(), back.colors(), "plan {:?}", plan.primitives);
        assert!(same_up_to_rotation(&robot, &expect));
        let turns = plan.count(|p| matches!(p, Primitive::Turn(_)));
        assert_eq!(turns, alg.len());
        let (end, secs) = CostModel::default().run(start, &plan.primitives).unwrap();
        assert_eq!(end, plan.end);
        assert!((secs - plan.seconds).abs() < 1e-9);
    }

    #[test]
    fn view_matches_primitives() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let cube = random_state(Size::Three, &mut rng);
        let mut o = Orientation::IDENTITY;
        let mut robot = cube.clone();
        for p in [
            Primitive::Tilt,
            Primitive::Spin(1),
            Primitive::Tilt,
            Primitive::Spin(2),
        ] {
            o = o.after(p);
            apply_primitives(&mut robot, &[p]);
            assert_eq!(view(&cube, &o).colors(), robot.colors());
        }
    }

    #[test]
    fn greedy_and_optimal_plans_execute_the_solution() {
        let costs = CostModel::default();
        let planner = Planner::new(costs.clone());
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for i in 0..60 {
            let size = if i % 5 == 4 { Size::Two } else { Size::Three };
            let cube = random_state(size, &mut rng);
            let alg = random_moves(Size::Three, 1 + i % 22, &mut rng);
            let orientation = Orientation::all()[i % 24];
            let start = RobotState {
                orientation,
                arm: if i % 2 == 0 { Arm::Away } else { Arm::Hold },
                turntable: [0, 1, -1][i % 3],
            };
            let g = greedy(&alg, start, &costs).unwrap();
            check_plan(&cube, &alg, start, &g);
            let p = planner.plan(&alg, start).unwrap();
            // The executed order may swap opposite faces; it is the same element.
            let a = CubieCube::default().apply_alg(&alg).unwrap();
            let b = CubieCube::default().apply_alg(&p.alg).unwrap();
            assert_eq!(a, b);
            check_plan(&cube, &p.alg, start, &p);
            assert!(
                p.seconds <= g.seconds + 1e-9,
                "{} > {}",
                p.seconds,
                g.seconds
            );
        }
    }

    #[test]
    fn sequence_cost_is_the_dp_cost() {
        // The automaton prices a sequence exactly as the DP plans it (both taking each
        // commuting opposite-face pair in the cheaper order).
        let planner = Planner::new(CostModel::default());
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        let mut swaps = 0;
        for i in 0..40 {
            let start = RobotState {
                orientation: Orientation::all()[i % 24],
                arm: if i % 3 == 0 { Arm::Hold } else { Arm::Away },
                turntable: [0, 1, -1][i % 3],
            };
            let sc = planner.sequence_cost(start);
            let alg = random_moves(Size::Three, 1 + i % 21, &mut rng);
            let plan = planner.plan(&alg, start).unwrap();
            let c = sc.cost(&alg).unwrap();
            assert!(c >= plan.seconds - 1e-4, "{alg}: {c} < {}", plan.seconds);
            let opposite_pair = alg
                .moves()
                .windows(2)
                .any(|w| w[0].face_index().unwrap() / 3 % 3 == w[1].face_index().unwrap() / 3 % 3);
            if opposite_pair {
                swaps += 1;
            } else {
                assert!(
                    (c - plan.seconds).abs() < 1e-4,
                    "{alg}: {c} vs {}",
                    plan.seconds
                );
            }
        }
        assert!(swaps < 40);
        assert_eq!(
            planner
                .sequence_cost(RobotState::new(Orientation::IDENTITY))
                .cost(&Alg::new()),
            Some(0.0)
        );
    }

    #[test]
    fn screening_keeps_the_cheapest() {
        let planner = Planner::new(CostModel::default());
        let start = RobotState::new(after_scan());
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let cands: Vec<Alg> = (0..60)
            .map(|_| random_moves(Size::Three, 18, &mut rng))
            .collect();
        let (i, all) = planner.choose(&cands, start).unwrap();
        let (j, screened) = planner.choose_screened(&cands, start, 8).unwrap();
        assert_eq!(screened, planner.plan(&cands[j], start).unwrap());
        // The automaton prices exactly as the DP: the screen loses nothing.
        assert!((screened.seconds - all.seconds).abs() < 1e-6, "{i} vs {j}");
        assert_eq!(
            planner.choose_screened(&cands[..3], start, 8).unwrap().0,
            planner.choose(&cands[..3], start).unwrap().0
        );
    }

    #[test]
    fn known_costs() {
        let costs = CostModel::plain(Timings::default());
        let t = &costs.timings;
        let planner = Planner::new(costs.clone());
        let start = RobotState::new(Orientation::IDENTITY);
        // D from D-down: hold + quarter turn.
        let p = planner.plan(&Alg::parse("D").unwrap(), start).unwrap();
        assert_eq!(p.primitives, vec![Primitive::ArmHold, Primitive::Turn(-1)]);
        assert!((p.seconds - (t.arm_away_to_hold + t.turn_quarter)).abs() < 1e-9);
        // B: one tilt.
        let p = planner.plan(&Alg::parse("B'").unwrap(), start).unwrap();
        assert_eq!(
            p.primitives,
            vec![Primitive::ArmHold, Primitive::Tilt, Primitive::Turn(1)]
        );
        // Empty solution: nothing to do.
        let p = planner.plan(&Alg::new(), start).unwrap();
        assert!(p.primitives.is_empty());
        assert_eq!(p.seconds, 0.0);
    }

    #[test]
    fn look_ahead_beats_greedy_on_average() {
        let costs = CostModel::default();
        let planner = Planner::new(costs.clone());
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let (mut g, mut o) = (0.0, 0.0);
        for _ in 0..100 {
            let alg = random_moves(Size::Three, 20, &mut rng);
            let start = RobotState::new(after_scan());
            g += greedy(&alg, start, &costs).unwrap().seconds;
            o += planner.plan(&alg, start).unwrap().seconds;
        }
        assert!(o < 0.97 * g, "optimal {o} vs greedy {g}");
    }

    #[test]
    fn half_turn_direction_follows_the_turntable() {
        let costs = CostModel {
            both_half_directions: true,
            ..CostModel::default()
        };
        let planner = Planner::new(costs);
        let start = RobotState {
            orientation: Orientation::IDENTITY,
            arm: Arm::Hold,
            turntable: -1,
        };
        let p = planner.plan(&Alg::parse("D2").unwrap(), start).unwrap();
        assert_eq!(p.primitives, vec![Primitive::Turn(-2)]);
    }

    #[test]
    fn non_face_moves_are_rejected() {
        let planner = Planner::new(CostModel::default());
        let e = planner
            .plan(
                &Alg::parse("R x U").unwrap(),
                RobotState::new(Orientation::IDENTITY),
            )
            .unwrap_err();
        assert!(matches!(e, PlanError::NotFaceTurn { index: 1, .. }));
        assert_eq!(
            planner.choose(&[], RobotState::new(Orientation::IDENTITY)),
            Err(PlanError::NoCandidates)
        );
    }

    #[test]
    fn preconditions_are_checked() {
        let costs = CostModel::default();
        let e = costs
            .run(RobotState::new(Orientation::IDENTITY), &[Primitive::Tilt])
            .unwrap_err();
        assert!(matches!(e, PlanError::Precondition { index: 0, .. }));
    }
}
