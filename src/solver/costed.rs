//! Cost-aware two-phase search: finds solutions that are cheap under a caller-supplied
//! cost of *sequences* of face turns (a robot's execution time, say), not merely short.
//!
//! The cost is a small min-plus automaton ([`SequenceCost`]): after a face turn the
//! executor is in one of `K` states (for a turntable robot: which way the turned face
//! is heading, which way the table last moved); doing move `m` first costs `start[m][j]`
//! and ends in state `j`, doing `m` after `p` from state `i` costs `step[p][m][i][j]`.
//! The search is Kociemba's two-phase algorithm over the same tables as
//! `super::search` (three axes × the inverse problem as six variants), carrying along
//! every path the vector of cheapest costs per automaton state, and pruning a node when
//! that vector plus an exact lower bound on the cost of the moves still needed (at least
//! the phase-1 moves left, or the phase-2 distance, each priced by the automaton itself)
//! reaches the cheapest solution found so far. Unlike the length search it accepts
//! longer solutions when they are cheaper, allows both orders of commuting opposite
//! faces (their costs differ), tries the cheapest children first, and keeps finding
//! cheaper solutions until it has proved none is left (within the length limit) or its
//! time or node budget ends. The inverse problem is priced backwards (the automaton's
//! suffix costs), so both directions are searched under the same cost.
//!
//! Level: solver (depends on `cube` only; the automaton is plain numbers).

// Index loops over parallel arrays (states, moves) read best as they are.
#![allow(clippy::needless_range_loop)]

use std::time::{Duration, Instant};

use super::coord::{CornerPerm, DEdges, Flip, SliceSorted, Twist, UEdges};
use super::cubie::{sym_table, Cc};
use super::search::{inverse_move, prefetch, Tables3};
use super::tables::{N_MOVES, P2_MOVES};
use super::{Solver, SolverError};
use crate::cube::{Alg, Face, FaceletCube, Move, Size, Turn};

/// What [`SequenceCost::floor_for_random`] proves about a uniformly random position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostFloor {
    /// No solver's mean cost over uniformly random positions can be below this.
    pub mean: f64,
    /// At least half of all positions cost at least this much.
    pub median: f64,
    /// Counting resolution (cost units).
    pub quantum: f64,
}

/// Marks an impossible transition in integer costs.
const NONE_U: u32 = u32::MAX;
/// Most sequence summaries [`SequenceCost::count_by_cost`] will track (a few thousand
/// occur for the MindCub3r's timings).
pub const MAX_SUMMARIES: usize = 1_000_000;

/// Cost vectors relative to their minimum, interned (see
/// [`SequenceCost::floor_for_random`]).
#[derive(Default)]
struct RelVectors {
    vectors: Vec<Vec<u32>>,
    index: std::collections::HashMap<Vec<u32>, u32>,
}

impl RelVectors {
    /// The id of `v − min v` and `min v` (`NONE_U` entries stay `NONE_U`).
    fn intern(&mut self, v: &[u32]) -> (u32, u32) {
        let lo = v.iter().copied().min().unwrap_or(NONE_U);
        let rel: Vec<u32> = v
            .iter()
            .map(|&x| if x == NONE_U { NONE_U } else { x - lo })
            .collect();
        if let Some(&id) = self.index.get(&rel) {
            return (id, lo);
        }
        let id = self.vectors.len() as u32;
        self.index.insert(rel.clone(), id);
        self.vectors.push(rel);
        (id, lo)
    }
}

/// Largest number of automaton states.
pub const MAX_STATES: usize = 16;
const INF: f32 = f32::INFINITY;
/// Longest solution the search can represent.
const MAX_DEPTH: usize = 32;

/// The cost of face-turn sequences as a min-plus automaton (see the module docs). Move
/// indices are 0..18 in the order U U2 U' R R2 R' F F2 F' D D2 D' L L2 L' B B2 B'.
#[derive(Clone, Debug)]
pub struct SequenceCost {
    k: usize,
    /// `start[m * k + j]`.
    start: Vec<f32>,
    /// `step[((p * 18 + m) * k + i) * k + j]`.
    step: Vec<f32>,
}

impl SequenceCost {
    /// `states` = K; `start` has 18·K entries (`[m][j]`), `step` 18·18·K·K
    /// (`[p][m][i][j]`); entries are seconds (or any additive cost), `f64::INFINITY` for
    /// impossible transitions. Turns of the same face twice in a row are never priced.
    pub fn new(states: usize, start: &[f64], step: &[f64]) -> Result<SequenceCost, SolverError> {
        let bad = |reason: String| Err(SolverError::CostModel { reason });
        if states == 0 || states > MAX_STATES {
            return bad(format!("{states} states (1..={MAX_STATES} supported)"));
        }
        if start.len() != N_MOVES * states || step.len() != N_MOVES * N_MOVES * states * states {
            return bad(format!(
                "{} start and {} step entries for {states} states (need {} and {})",
                start.len(),
                step.len(),
                N_MOVES * states,
                N_MOVES * N_MOVES * states * states
            ));
        }
        if let Some(x) = start.iter().chain(step).find(|x| x.is_nan() || **x < 0.0) {
            return bad(format!("cost {x} (costs must be ≥ 0 or infinite)"));
        }
        let mut step: Vec<f32> = step.iter().map(|&x| x as f32).collect();
        let kk = states * states;
        for p in 0..N_MOVES {
            for m in 0..N_MOVES {
                if p / 3 == m / 3 {
                    step[(p * N_MOVES + m) * kk..(p * N_MOVES + m + 1) * kk].fill(INF);
                }
            }
        }
        Ok(SequenceCost {
            k: states,
            start: start.iter().map(|&x| x as f32).collect(),
            step,
        })
    }

    pub fn states(&self) -> usize {
        self.k
    }

    #[inline(always)]
    fn st(&self, p: u8, m: u8) -> &[f32] {
        let kk = self.k * self.k;
        let o = (p as usize * N_MOVES + m as usize) * kk;
        &self.step[o..o + kk]
    }

    #[inline(always)]
    fn start_of(&self, m: u8) -> &[f32] {
        &self.start[m as usize * self.k..(m as usize + 1) * self.k]
    }

    /// The automaton's cost of a face-turn sequence (0 for the empty one), taking each
    /// pair of consecutive turns of opposite faces in the cheaper order (they commute);
    /// `None` when a move is not a face turn or the sequence cannot be executed.
    pub fn cost(&self, alg: &Alg) -> Option<f64> {
        let mut moves = Vec::with_capacity(alg.len());
        for m in alg.moves() {
            moves.push(m.face_index()? as u8);
        }
        let c = self.cost_commuting(&moves);
        c.is_finite().then_some(c as f64)
    }

    /// See [`SequenceCost::cost`]: the cost vectors after each prefix, one per possible
    /// last move (two after a swappable pair).
    fn cost_commuting(&self, moves: &[u8]) -> f32 {
        let mut alts: Vec<(u8, [f32; MAX_STATES])> = Vec::new();
        let then = |alts: &[(u8, [f32; MAX_STATES])], m: u8| {
            let mut w = [INF; MAX_STATES];
            if alts.is_empty() {
                w[..self.k].copy_from_slice(self.start_of(m));
            }
            for (last, v) in alts {
                let x = self.forward(v, *last, m);
                for j in 0..self.k {
                    w[j] = w[j].min(x[j]);
                }
            }
            w
        };
        let mut i = 0;
        while i < moves.len() {
            let a = moves[i];
            match moves.get(i + 1) {
                Some(&b) if a / 3 != b / 3 && a / 3 % 3 == b / 3 % 3 => {
                    let mut next = Vec::with_capacity(2);
                    for (x, y) in [(a, b), (b, a)] {
                        let v = then(&alts, x);
                        next.push((y, self.forward(&v, x, y)));
                    }
                    alts = next;
                    i += 2;
                }
                _ => {
                    alts = vec![(a, then(&alts, a))];
                    i += 1;
                }
            }
        }
        alts.iter()
            .flat_map(|(_, v)| v[..self.k].iter().copied())
            .fold(if moves.is_empty() { 0.0 } else { INF }, f32::min)
    }

    /// A provable floor under this cost for a uniformly random element of a group with
    /// `positions` elements, solved by face turns from the start state. A sequence solves
    /// exactly one position, so if at most `N(T)` face-turn sequences cost `≤ T`, at most
    /// `N(T)` positions do, and `P(cost > T) ≥ 1 − N(T) / positions` for every solver and
    /// executor this automaton prices; `N(T)` comes from [`SequenceCost::count_by_cost`].
    /// For the floor to bind a robot, the automaton must not overprice anything it can do
    /// (price it as its clock counts, with every option it has), and a half turn must cost
    /// no more than two quarter turns of the same face (sequences never turn one face twice
    /// in a row). `None` when the counting is not possible (see `count_by_cost`).
    pub fn floor_for_random(&self, positions: f64, quantum: f64) -> Option<CostFloor> {
        let q = quantum.max(1e-6);
        let mut cumulative = 1.0; // the empty sequence
        let (mut mean, mut median, mut half) = (0.0, 0.0, false);
        let counted = self.count_by_cost(q, |t, here| {
            cumulative += here;
            let share = (cumulative / positions).min(1.0);
            // P(cost > T) ≥ P(cost > t q) ≥ 1 − share for T in [(t − 1) q, t q).
            mean += q * (1.0 - share);
            if !half && share >= 0.5 {
                // At (t − 1) q the share was still below one half.
                half = true;
                median = (t - 1) as f64 * q;
            }
            share < 1.0
        });
        counted.then_some(CostFloor {
            mean,
            median,
            quantum: q,
        })
    }

    /// Counts the face-turn sequences (no face twice in a row) by cost: calls
    /// `visit(t, n)` for t = 1, 2, … with the number `n` of sequences whose cost, in whole
    /// quanta of `quantum` (each step rounded down, after allowing for `f32` storage), is
    /// `t`, until `visit` returns false. Each sequence is counted once, at its cheapest
    /// path through the automaton: it is summarised by its last move and its cost vector
    /// over the states *relative to its minimum* (the minimum is its cost); the next
    /// move's vector depends only on that summary, and few summaries occur, so the count
    /// is a dynamic programme over (cost, last move, relative vector). Returns false
    /// (having visited nothing) when a step is free (the count is unbounded) or the
    /// summaries exceed [`MAX_SUMMARIES`].
    pub fn count_by_cost(&self, quantum: f64, mut visit: impl FnMut(usize, f64) -> bool) -> bool {
        let k = self.k;
        let q = quantum.max(1e-6);
        let units = |c: f32| -> u32 {
            if c.is_finite() {
                ((c as f64 / q) * (1.0 + 1e-6)).floor().max(0.0) as u32
            } else {
                NONE_U
            }
        };
        let step_u: Vec<u32> = self.step.iter().map(|&c| units(c)).collect();
        let start_u: Vec<u32> = self.start.iter().map(|&c| units(c)).collect();
        // Interned relative vectors; a node is (last move, vector id).
        let mut rel = RelVectors::default();
        let mut node_of: std::collections::HashMap<(u8, u32), usize> = Default::default();
        let mut nodes: Vec<(u8, u32)> = Vec::new();
        // edges[n]: (next node, cost increment) for every allowed next move.
        let mut edges: Vec<Vec<(usize, u32)>> = Vec::new();
        let mut first: Vec<(usize, u32)> = Vec::new();
        let mut add_node = |key: (u8, u32),
                            nodes: &mut Vec<(u8, u32)>,
                            edges: &mut Vec<Vec<(usize, u32)>>|
         -> usize {
            *node_of.entry(key).or_insert_with(|| {
                nodes.push(key);
                edges.push(Vec::new());
                nodes.len() - 1
            })
        };
        for m in 0..N_MOVES {
            let (id, lo) = rel.intern(&start_u[m * k..m * k + k]);
            if lo != NONE_U {
                let n = add_node((m as u8, id), &mut nodes, &mut edges);
                first.push((n, lo));
            }
        }
        let mut done = 0;
        while done < nodes.len() {
            if nodes.len() > MAX_SUMMARIES {
                return false;
            }
            let (p, id) = nodes[done];
            let r = rel.vectors[id as usize].clone();
            let mut out = Vec::with_capacity(N_MOVES);
            for m in 0..N_MOVES {
                if p as usize / 3 == m / 3 {
                    continue;
                }
                let o = (p as usize * N_MOVES + m) * k * k;
                let mut w = vec![NONE_U; k];
                for i in 0..k {
                    if r[i] == NONE_U {
                        continue;
                    }
                    for j in 0..k {
                        let c = step_u[o + i * k + j];
                        if c != NONE_U {
                            w[j] = w[j].min(r[i] + c);
                        }
                    }
                }
                let (id2, lo) = rel.intern(&w);
                if lo != NONE_U {
                    let n2 = add_node((m as u8, id2), &mut nodes, &mut edges);
                    out.push((n2, lo));
                }
            }
            edges[done] = out;
            done += 1;
        }
        let all = || first.iter().chain(edges.iter().flatten());
        if nodes.is_empty() || all().any(|e| e.1 == 0) {
            return false;
        }
        // ways[t % ring][n]: sequences summarised by node n that cost t quanta.
        let ring = all().map(|e| e.1 as usize).max().unwrap_or(0) + 1;
        let mut ways = vec![vec![0.0f64; nodes.len()]; ring];
        for &(n, c) in &first {
            ways[c as usize % ring][n] += 1.0;
        }
        let mut t = 1usize;
        loop {
            let slot = t % ring;
            let here = std::mem::replace(&mut ways[slot], vec![0.0; nodes.len()]);
            let mut total = 0.0;
            for (n, &x) in here.iter().enumerate() {
                if x != 0.0 {
                    total += x;
                    for &(n2, c) in &edges[n] {
                        ways[(t + c as usize) % ring][n2] += x;
                    }
                }
            }
            if !visit(t, total) {
                return true;
            }
            t += 1;
        }
    }

    /// `w[j] = min_i v[i] + step[p][m][i][j]`.
    #[inline(always)]
    fn forward(&self, v: &[f32; MAX_STATES], p: u8, m: u8) -> [f32; MAX_STATES] {
        let k = self.k;
        let s = self.st(p, m);
        let mut w = [INF; MAX_STATES];
        for i in 0..k {
            let vi = v[i];
            if vi == INF {
                continue;
            }
            let row = &s[i * k..i * k + k];
            for j in 0..k {
                w[j] = w[j].min(vi + row[j]);
            }
        }
        w
    }

    /// `w[i] = min_j step[q][m][i][j] + v[j]`: prepending `q` before `m`.
    #[inline(always)]
    fn backward(&self, v: &[f32; MAX_STATES], q: u8, m: u8) -> [f32; MAX_STATES] {
        let k = self.k;
        let s = self.st(q, m);
        let mut w = [INF; MAX_STATES];
        for i in 0..k {
            let row = &s[i * k..i * k + k];
            let mut b = INF;
            for j in 0..k {
                b = b.min(row[j] + v[j]);
            }
            w[i] = b;
        }
        w
    }
}

/// Budgets and limits of a costed search.
#[derive(Clone, Debug)]
pub struct CostedOptions {
    /// Longest solution considered (face turns).
    pub max_length: u32,
    /// Wall-clock budget.
    pub time_limit: Duration,
    /// Node budget (deterministic, whatever the machine's load); `None`: no limit.
    pub max_nodes: Option<u64>,
    /// Only solutions cheaper than this are wanted (e.g. the cost of a plan already in
    /// hand); `None`: any.
    pub bound: Option<f64>,
    /// How many of the cheapest solutions found to return.
    pub solutions: usize,
}

impl Default for CostedOptions {
    fn default() -> Self {
        CostedOptions {
            max_length: 24,
            time_limit: Duration::from_millis(1500),
            max_nodes: None,
            bound: None,
            solutions: 8,
        }
    }
}

/// A solution and its cost under the automaton.
#[derive(Clone, Debug, PartialEq)]
pub struct CostedSolution {
    pub alg: Alg,
    pub cost: f64,
}

/// What a costed search found.
#[derive(Clone, Debug)]
pub struct CostedOutcome {
    /// Cheapest first; empty when nothing beat the bound within the budget.
    pub solutions: Vec<CostedSolution>,
    /// Search nodes visited (phase 1 and phase 2).
    pub nodes: u64,
    pub phase2_nodes: u64,
    /// Phase-1 solutions reached (each priced for a phase-2 continuation).
    pub phase1_ends: u64,
    /// The phase-1 length the search had reached when it ended.
    pub phase1_length: u32,
    /// Each improvement: when (seconds since the start), its cost, its phase-1 length.
    pub improvements: Vec<(f64, f64, u32)>,
    /// True when the search ended because nothing cheaper can exist (within the length
    /// limit and the two-phase structure), not because a budget ran out.
    pub complete: bool,
    pub elapsed: Duration,
}

impl Solver {
    /// Solutions taking `start` to `target` (3x3x3, exactly) that are cheap under `cost`,
    /// cheapest first; every one is checked by applying it to the start.
    pub fn solve_costed(
        &self,
        start: &FaceletCube,
        target: &FaceletCube,
        cost: &SequenceCost,
        opts: &CostedOptions,
    ) -> Result<CostedOutcome, SolverError> {
        if start.size() != target.size() {
            return Err(SolverError::DifferentSizes {
                start: start.size(),
                target: target.size(),
            });
        }
        if start.size() != Size::Three {
            return Err(SolverError::CostModel {
                reason: "the costed search solves 3x3x3 cubes only".into(),
            });
        }
        let (s, t, y) = super::problem3(start, target)?;
        let t0 = Instant::now();
        let mut search = Search::new(&self.three, cost, opts, t0);
        search.run(&y);
        let mut solutions = Vec::with_capacity(search.found.len());
        for (c, moves) in &search.found {
            let alg = Alg::from_moves(
                moves
                    .iter()
                    .map(|&m| Move::face(Face::ALL[m as usize / 3], Turn::ALL[m as usize % 3]))
                    .collect(),
            );
            let reached = moves.iter().fold(s, |c, &m| {
                c.apply_face(Face::ALL[m as usize / 3], Turn::ALL[m as usize % 3])
            });
            if reached != t {
                return Err(SolverError::Internal {
                    moves: alg.to_string(),
                });
            }
            solutions.push(CostedSolution {
                alg,
                cost: *c as f64,
            });
        }
        Ok(CostedOutcome {
            solutions,
            nodes: search.nodes,
            phase2_nodes: search.nodes2,
            phase1_ends: search.ends,
            phase1_length: search.d1 as u32,
            improvements: search.improvements.clone(),
            complete: !search.stop,
            elapsed: t0.elapsed(),
        })
    }
}

#[inline(always)]
const fn is_p2_move(m: u8) -> bool {
    let f = m / 3;
    f == 0 || f == 3 || m % 3 == 1
}

#[inline(always)]
fn vmin(v: &[f32; MAX_STATES]) -> f32 {
    v.iter().copied().fold(INF, f32::min)
}

/// A child of a search node: move, its lower bound, its cost vector and coordinates.
#[derive(Clone, Copy)]
struct Kid {
    m: u8,
    i: u8,
    lb: f32,
    a: u16,
    b: u16,
    c: u16,
    f: u32,
}

struct Search<'a> {
    t: &'a Tables3,
    sc: &'a SequenceCost,
    k: usize,
    max_len: usize,
    /// Cheapest cost of at least `n` more moves (up to `max_len`) after move m left
    /// state j: `suf_least[(n * 18 + m) * k + j]` (see [`bound_tables`]).
    suf_least: Vec<f32>,
    /// Cheapest cost of at least `n` moves from the start, then m, ending in state j.
    pre_least: Vec<f32>,
    /// `suf` and `pre` with only the phase-2 moves of each axis's variants.
    p2: [(Vec<f32>, Vec<f32>); 3],
    // The variant being searched.
    axis: usize,
    back: [u8; N_MOVES],
    inverse: bool,
    cc_root: Cc,
    path: [u8; MAX_DEPTH],
    /// The real move of each path entry (inverse variants: the inverse move).
    real: [u8; MAX_DEPTH],
    /// Cost vectors: forward, after `real[..n]` (state of `real[n-1]`); inverse, of the
    /// moves after `real[n-1]` in the solution (which come before it in the path).
    vecs: [[f32; MAX_STATES]; MAX_DEPTH + 1],
    best: f32,
    found: Vec<(f32, Vec<u8>)>,
    keep: usize,
    nodes: u64,
    nodes2: u64,
    /// Variant-frame moves as moves of the other two axes' frames.
    axis_moves: [[u8; N_MOVES]; 2],
    ends: u64,
    /// The current job is out of budget (or the search is stopped).
    cut: bool,
    job_end: u64,
    d1: usize,
    improvements: Vec<(f64, f64, u32)>,
    t0: Instant,
    deadline: Instant,
    max_nodes: u64,
    stop: bool,
}

impl<'a> Search<'a> {
    fn new(t: &'a Tables3, sc: &'a SequenceCost, o: &CostedOptions, t0: Instant) -> Search<'a> {
        let k = sc.k;
        let max_len = (o.max_length as usize).min(MAX_DEPTH - 1);
        let layer = N_MOVES * k;
        let (suf, pre) = bound_tables(sc, max_len, u32::MAX);
        let least = |exact: &[f32]| {
            let mut l = exact.to_vec();
            for n in (0..max_len).rev() {
                for x in 0..layer {
                    l[n * layer + x] = l[n * layer + x].min(l[(n + 1) * layer + x]);
                }
            }
            l
        };
        let (suf_least, pre_least) = (least(&suf), least(&pre));
        // Phase 2 of the variant on axis a uses the real moves its symmetry maps the
        // phase-2 moves to (the inverse keeps the set).
        let syms = sym_table();
        let p2: [(Vec<f32>, Vec<f32>); 3] = std::array::from_fn(|a| {
            let back = syms.mconj[syms.inv[16 * a] as usize];
            let mask = P2_MOVES
                .iter()
                .fold(0u32, |acc, &m| acc | 1 << back[m as usize]);
            bound_tables(sc, max_len, mask)
        });
        Search {
            t,
            sc,
            k,
            max_len,
            suf_least,
            pre_least,
            p2,
            axis: 0,
            back: std::array::from_fn(|m| m as u8),
            inverse: false,
            cc_root: Cc::ID,
            path: [0; MAX_DEPTH],
            real: [0; MAX_DEPTH],
            vecs: [[INF; MAX_STATES]; MAX_DEPTH + 1],
            best: o.bound.map(|b| b as f32).unwrap_or(INF),
            found: Vec::new(),
            keep: o.solutions.max(1),
            nodes: 0,
            nodes2: 0,
            axis_moves: std::array::from_fn(|a| syms.mconj[16 * (a + 1)]),
            ends: 0,
            cut: false,
            job_end: u64::MAX,
            d1: 0,
            improvements: Vec::new(),
            t0,
            deadline: t0 + o.time_limit,
            max_nodes: o.max_nodes.unwrap_or(u64::MAX),
            stop: false,
        }
    }

    #[inline]
    fn tick(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes >= self.max_nodes {
            self.stop = true;
        }
        if self.nodes & 1023 == 0 && Instant::now() >= self.deadline {
            self.stop = true;
        }
        if self.stop || self.nodes >= self.job_end {
            self.cut = true;
        }
        self.cut
    }

    /// The cost vector after appending variant move `m` at depth `n`, and its real move.
    #[inline(always)]
    fn advance(&self, n: usize, m: u8) -> ([f32; MAX_STATES], u8) {
        let r = self.back[m as usize];
        if self.inverse {
            let r = inverse_move(r);
            if n == 0 {
                let mut w = [INF; MAX_STATES];
                w[..self.k].fill(0.0);
                (w, r)
            } else {
                (self.sc.backward(&self.vecs[n], r, self.real[n - 1]), r)
            }
        } else if n == 0 {
            let mut w = [INF; MAX_STATES];
            w[..self.k].copy_from_slice(self.sc.start_of(r));
            (w, r)
        } else {
            (self.sc.forward(&self.vecs[n], self.real[n - 1], r), r)
        }
    }

    /// Lower bound on any solution through vector `w` (last real move `r`) with `rem`
    /// more moves (`least`: at least `rem`).
    #[inline(always)]
    fn bound(&self, w: &[f32; MAX_STATES], r: u8, rem: usize, least: bool) -> f32 {
        if rem > self.max_len {
            return INF;
        }
        let k = self.k;
        let o = (rem * N_MOVES + r as usize) * k;
        let tab = match (self.inverse, least) {
            (false, false) => &self.p2[self.axis].0[o..o + k],
            (false, true) => &self.suf_least[o..o + k],
            (true, false) => &self.p2[self.axis].1[o..o + k],
            (true, true) => &self.pre_least[o..o + k],
        };
        let mut b = INF;
        for j in 0..k {
            b = b.min(w[j] + tab[j]);
        }
        b
    }

    /// Move `m` may follow the path `..n` (never the same face twice, never three turns
    /// on one axis; both orders of opposite faces are allowed, their costs differ).
    #[inline(always)]
    fn allowed(&self, n: usize, m: u8) -> bool {
        if n == 0 {
            return true;
        }
        let (f, l) = (m / 3, self.path[n - 1] / 3);
        if f == l {
            return false;
        }
        !(f % 3 == l % 3 && n >= 2 && (self.path[n - 2] / 3) % 3 == f % 3)
    }

    fn run(&mut self, c: &Cc) {
        if *c == Cc::ID {
            self.found.push((0.0, Vec::new()));
            return;
        }
        let syms = sym_table();
        let mut variants = Vec::with_capacity(6);
        for inverse in [false, true] {
            for k in 0..3 {
                let x = if inverse { c.inv() } else { *c };
                let x = x.conj(16 * k);
                let (tw, fl, sl) = (Twist::get(&x).0, Flip::get(&x).0, SliceSorted::get(&x).0);
                let h = self.t.p1.get(self.t.small.p1_index(tw, fl, sl)) as usize;
                let key = (x.cp, x.co, x.ep, x.eo);
                variants.push((16 * k, inverse, x, (tw, fl, sl), h, key));
            }
        }
        // Conjugates that coincide search the same tree: keep one.
        let mut seen = Vec::new();
        variants.retain(|v| {
            let dup = seen.contains(&v.5);
            seen.push(v.5);
            !dup
        });
        // Jobs (variant, phase-1 length), searched in rounds with a node budget per job
        // that doubles every round: every phase-1 length gets its cheapest branches
        // tried early (the cheapest solutions often have long phase 1 and short phase 2),
        // and a job that finished is proved and not searched again.
        let mut jobs: Vec<(usize, usize)> = Vec::new();
        for d1 in 0..=self.max_len {
            for (v, var) in variants.iter().enumerate() {
                if var.4 <= d1 {
                    jobs.push((v, d1));
                }
            }
        }
        let mut budget = 4096u64;
        while !jobs.is_empty() && !self.stop {
            let mut left = Vec::with_capacity(jobs.len());
            for &(v, d1) in &jobs {
                // Every solution of this job has at least d1 moves.
                let root_lb = (0..N_MOVES)
                    .map(|m| {
                        let o = ((d1.max(1) - 1) * N_MOVES + m) * self.k;
                        self.pre_least[o..o + self.k]
                            .iter()
                            .copied()
                            .fold(INF, f32::min)
                    })
                    .fold(INF, f32::min);
                if root_lb >= self.best {
                    continue;
                }
                let (sym, inverse, x, root, _, _) = &variants[v];
                self.d1 = d1;
                self.back = syms.mconj[syms.inv[*sym] as usize];
                self.inverse = *inverse;
                self.axis = *sym / 16;
                self.cc_root = *x;
                self.cut = false;
                self.job_end = self.nodes.saturating_add(budget);
                let (tw, fl, sl) = *root;
                if d1 == 0 {
                    self.phase2_start(0, sl);
                } else {
                    let fs = self.t.small.fs_sym[(sl as usize / 24) * 2048 + fl as usize];
                    let ax: Ax = std::array::from_fn(|a| {
                        let y = x.conj(16 * (a + 1));
                        (Twist::get(&y).0, Flip::get(&y).0, SliceSorted::get(&y).0)
                    });
                    self.phase1(tw, fs, sl, ax, 0, d1);
                }
                if self.stop {
                    return;
                }
                if self.cut {
                    left.push((v, d1));
                }
            }
            jobs = left;
            budget = budget.saturating_mul(2);
        }
    }

    /// Phase 1 with exactly `togo` moves left. The edge coordinate travels as its
    /// symmetry class and symmetry (`fs`: class << 4 | sym, moved through the class move
    /// table, as in [`super::search`]); the children's pruning entries are prefetched
    /// before any is read.
    #[allow(clippy::too_many_arguments)]
    fn phase1(&mut self, tw: u16, fs: u32, sl: u16, ax: Ax, n: usize, togo: usize) {
        if self.tick() {
            return;
        }
        let t = self.t;
        let s = &t.small;
        let axis_moves = self.axis_moves;
        let (class, sym) = ((fs >> 4) as usize, (fs & 15) as usize);
        let row = &s.fs_symmove[class * N_MOVES..class * N_MOVES + N_MOVES];
        let mconj = &s.mconj[sym * N_MOVES..sym * N_MOVES + N_MOVES];
        // (move, twist, fs, slice, pruning index)
        let mut cand = [(0u8, 0u16, 0u32, 0u16, 0usize); N_MOVES];
        let mut nc = 0;
        for m in 0..N_MOVES as u8 {
            if !self.allowed(n, m) || (togo == 1 && is_p2_move(m)) {
                continue;
            }
            let mi = m as usize;
            let tw2 = s.twist_move[tw as usize * N_MOVES + mi];
            let sl2 = s.slice_move[sl as usize * N_MOVES + mi];
            let y = row[mconj[mi] as usize];
            let class2 = y >> 4;
            let sym2 = s.symmult[(y & 15) as usize * 16 + sym] as u32;
            let i = class2 as usize * Twist::COUNT
                + s.twist_conj[tw2 as usize * 16 + sym2 as usize] as usize;
            prefetch(self.t.p1.words.as_ptr().wrapping_add(i >> 4));
            cand[nc] = (m, tw2, class2 << 4 | sym2, sl2, i);
            nc += 1;
        }
        let mut kids = [Kid {
            m: 0,
            i: 0,
            lb: 0.0,
            a: 0,
            b: 0,
            c: 0,
            f: 0,
        }; N_MOVES];
        let mut nk = 0;
        let mut vs = [[INF; MAX_STATES]; N_MOVES];
        let mut axs = [ax; N_MOVES];
        for &(m, tw2, fs2, sl2, i) in &cand[..nc] {
            let h = self.t.p1.get(i) as usize;
            if togo == 1 {
                // The last phase-1 move ends in the subgroup.
                if h != 0 {
                    continue;
                }
            } else if h > togo - 1 || (h == 0 && togo - 1 < 5) {
                continue;
            }
            let (w, r) = self.advance(n, m);
            let lb = self.bound(&w, r, togo - 1, true);
            if lb >= self.best {
                continue;
            }
            // The other two axes: the whole solution still needs at least their phase-1
            // distances.
            let mut ax2 = ax;
            let mut rem = togo - 1;
            for (a, c) in ax2.iter_mut().enumerate() {
                let mk = axis_moves[a][m as usize] as usize;
                *c = (
                    s.twist_move[c.0 as usize * N_MOVES + mk],
                    s.flip_move[c.1 as usize * N_MOVES + mk],
                    s.slice_move[c.2 as usize * N_MOVES + mk],
                );
                rem = rem.max(self.t.p1.get(s.p1_index(c.0, c.1, c.2)) as usize);
            }
            let lb = if rem > togo - 1 {
                self.bound(&w, r, rem, true)
            } else {
                lb
            };
            if lb >= self.best {
                continue;
            }
            vs[nk] = w;
            axs[nk] = ax2;
            kids[nk] = Kid {
                m,
                i: r,
                lb,
                a: tw2,
                b: j_index(nk),
                c: sl2,
                f: fs2,
            };
            nk += 1;
        }
        sort_kids(&mut kids[..nk], &mut vs[..nk]);
        for j in 0..nk {
            let kd = kids[j];
            if kd.lb >= self.best {
                continue;
            }
            self.path[n] = kd.m;
            self.real[n] = kd.i;
            self.vecs[n + 1] = vs[j];
            if togo == 1 {
                self.phase2_start(n + 1, kd.c);
            } else {
                self.phase1(kd.a, kd.f, kd.c, axs[kd.b as usize], n + 1, togo - 1);
            }
            if self.cut {
                return;
            }
        }
    }

    fn phase2_start(&mut self, n1: usize, sl: u16) {
        let s = &self.t.small;
        let x = &self.cc_root;
        let (mut cp, mut ue, mut de) = (CornerPerm::get(x).0, UEdges::get(x).0, DEdges::get(x).0);
        for &m in &self.path[..n1] {
            let m = m as usize;
            cp = s.corner_move[cp as usize * N_MOVES + m];
            ue = s.uedge_move[ue as usize * N_MOVES + m];
            de = s.dedge_move[de as usize * N_MOVES + m];
        }
        let ud = s.ud_from_ud[ue as usize * 24 + de as usize % 24];
        if ud == u16::MAX {
            return;
        }
        let h = (s.cornslice[cp as usize * 24 + sl as usize] as usize)
            .max(self.t.p2.get(s.p2_index(cp, ud)) as usize);
        self.ends += 1;
        for d2 in h..=self.max_len.saturating_sub(n1) {
            if n1 + d2 > self.max_len {
                break;
            }
            if n1 > 0 {
                let lb = self.bound(&self.vecs[n1], self.real[n1 - 1], d2, false);
                if lb >= self.best {
                    continue;
                }
            }
            self.phase2(cp, ud, sl, n1, d2);
            if self.cut {
                return;
            }
        }
    }

    fn phase2(&mut self, cp: u16, ud: u16, sp: u16, n: usize, togo: usize) {
        if togo == 0 {
            if cp == 0 && ud == 0 && sp == 0 {
                self.record(n);
            }
            return;
        }
        self.nodes2 += 1;
        if self.tick() {
            return;
        }
        let s = &self.t.small;
        let mut kids = [Kid {
            m: 0,
            i: 0,
            lb: 0.0,
            a: 0,
            b: 0,
            c: 0,
            f: 0,
        }; 10];
        let mut vs = [[INF; MAX_STATES]; 10];
        let mut nk = 0;
        for (i, &m) in P2_MOVES.iter().enumerate() {
            if !self.allowed(n, m) {
                continue;
            }
            let mi = m as usize;
            let cp2 = s.corner_move[cp as usize * N_MOVES + mi];
            let sp2 = s.slice_move[sp as usize * N_MOVES + mi];
            let rest = togo - 1;
            if s.cornslice[cp2 as usize * 24 + sp2 as usize] as usize > rest {
                continue;
            }
            let ud2 = s.ud_move[ud as usize * P2_MOVES.len() + i];
            if self.t.p2.get(s.p2_index(cp2, ud2)) as usize > rest {
                continue;
            }
            let (w, r) = self.advance(n, m);
            let lb = self.bound(&w, r, rest, false);
            if lb >= self.best {
                continue;
            }
            vs[nk] = w;
            kids[nk] = Kid {
                m,
                i: r,
                lb,
                a: cp2,
                b: ud2,
                c: sp2,
                f: 0,
            };
            nk += 1;
        }
        sort_kids(&mut kids[..nk], &mut vs[..nk]);
        for j in 0..nk {
            let kd = kids[j];
            if kd.lb >= self.best {
                continue;
            }
            self.path[n] = kd.m;
            self.real[n] = kd.i;
            self.vecs[n + 1] = vs[j];
            self.phase2(kd.a, kd.b, kd.c, n + 1, togo - 1);
            if self.cut {
                return;
            }
        }
    }

    fn record(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        let (cost, moves) = if self.inverse {
            let first = self.real[n - 1];
            let st = self.sc.start_of(first);
            let c = (0..self.k)
                .map(|j| st[j] + self.vecs[n][j])
                .fold(INF, f32::min);
            (c, self.real[..n].iter().rev().copied().collect::<Vec<u8>>())
        } else {
            (vmin(&self.vecs[n]), self.real[..n].to_vec())
        };
        if cost >= self.best {
            return;
        }
        self.best = cost;
        self.improvements
            .push((self.t0.elapsed().as_secs_f64(), cost as f64, self.d1 as u32));
        if self.found.iter().any(|(_, m)| *m == moves) {
            return;
        }
        self.found.insert(0, (cost, moves));
        self.found.truncate(self.keep);
    }
}

/// Lower-bound tables over the moves in `mask` (bit m): `suf[(n * 18 + m) * k + j]`, the
/// cheapest cost of exactly n more moves from the set after move m left state j, and
/// `pre[(n * 18 + m) * k + j]`, of exactly n moves from the set from the start, then m
/// (any move, included), ending in state j.
fn bound_tables(sc: &SequenceCost, max_len: usize, mask: u32) -> (Vec<f32>, Vec<f32>) {
    let k = sc.k;
    let layer = N_MOVES * k;
    let mut suf = vec![INF; (max_len + 1) * layer];
    suf[..layer].fill(0.0);
    let mut pre = vec![INF; (max_len + 1) * layer];
    pre[..layer].copy_from_slice(&sc.start);
    for n in 1..=max_len {
        for m in 0..N_MOVES as u8 {
            for m2 in 0..N_MOVES as u8 {
                let s = sc.st(m, m2);
                for i in 0..k {
                    for j in 0..k {
                        let c = s[i * k + j];
                        if mask >> m2 & 1 == 1 {
                            // After m in state i: m2 (state j), then n-1 more.
                            let a = c + suf[((n - 1) * N_MOVES + m2 as usize) * k + j];
                            let x = &mut suf[(n * N_MOVES + m as usize) * k + i];
                            *x = x.min(a);
                        }
                        if mask >> m & 1 == 1 {
                            // n-1 moves, then m (state i), then m2 (state j).
                            let b = pre[((n - 1) * N_MOVES + m as usize) * k + i] + c;
                            let y = &mut pre[(n * N_MOVES + m2 as usize) * k + j];
                            *y = y.min(b);
                        }
                    }
                }
            }
        }
    }
    (suf, pre)
}

/// The phase-1 coordinates (twist, flip, slice) of the other two axes.
type Ax = [(u16, u16, u16); 2];

#[inline(always)]
fn j_index(j: usize) -> u16 {
    j as u16
}

/// Sorts children by lower bound (cheapest first), keeping vectors alongside.
fn sort_kids(kids: &mut [Kid], vs: &mut [[f32; MAX_STATES]]) {
    for a in 1..kids.len() {
        let mut b = a;
        while b > 0 && kids[b - 1].lb > kids[b].lb {
            kids.swap(b - 1, b);
            vs.swap(b - 1, b);
            b -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One state; every move costs 1 after a move of another axis, 3 after an opposite
    /// face, the first move 2.
    fn toy() -> SequenceCost {
        let start = vec![2.0; N_MOVES];
        let step: Vec<f64> = (0..N_MOVES * N_MOVES)
            .map(|pm| {
                let (p, m) = (pm / N_MOVES, pm % N_MOVES);
                if p / 3 % 3 == m / 3 % 3 {
                    3.0
                } else {
                    1.0
                }
            })
            .collect();
        SequenceCost::new(1, &start, &step).unwrap()
    }

    #[test]
    fn sequence_cost_prices_sequences() {
        let sc = toy();
        assert_eq!(sc.cost(&Alg::new()), Some(0.0));
        assert_eq!(sc.cost(&Alg::parse("R").unwrap()), Some(2.0));
        assert_eq!(sc.cost(&Alg::parse("R U F2").unwrap()), Some(4.0));
        assert_eq!(sc.cost(&Alg::parse("R L U").unwrap()), Some(6.0));
        assert_eq!(sc.cost(&Alg::parse("U R L").unwrap()), Some(6.0));
        // The same face twice is never priced; slices and rotations are not face turns.
        assert_eq!(sc.cost(&Alg::parse("R R").unwrap()), None);
        assert_eq!(sc.cost(&Alg::parse("R x").unwrap()), None);
    }

    #[test]
    fn the_counting_floor_matches_a_hand_count() {
        // Every move costs 1: 18 · 15^(n−1) sequences of n moves, 1 + Σ of them of cost
        // ≤ n: 19, 289, 4339, 65089, 976339. Over 10^6 positions at least half cost more
        // than 4 (65089 < 500000 ≤ 976339), and the mean is at least
        // Σ_t (1 − N(t) / 10^6) = 5 − 1.046075.
        let sc = SequenceCost::new(1, &[1.0; N_MOVES], &[1.0; N_MOVES * N_MOVES]).unwrap();
        let f = sc.floor_for_random(1e6, 1.0).unwrap();
        assert_eq!(f.median, 4.0);
        assert!((f.mean - 3.953925).abs() < 1e-9, "{f:?}");
        // A finer quantum counts the same sequences: the floors cannot drop.
        let g = sc.floor_for_random(1e6, 0.25).unwrap();
        assert!(g.mean >= f.mean - 1e-9 && g.median >= f.median, "{g:?}");
        // A second, dearer state changes no sequence's cheapest cost: same floor.
        let mut step2 = vec![0.0; N_MOVES * N_MOVES * 4];
        for (x, v) in step2.iter_mut().enumerate() {
            *v = if x % 2 == 0 { 1.0 } else { 1.5 };
        }
        let two = SequenceCost::new(2, &[1.0, 1.5].repeat(N_MOVES), &step2).unwrap();
        assert_eq!(two.floor_for_random(1e6, 0.25).unwrap(), g);
        // A free step proves nothing.
        let free = SequenceCost::new(1, &[0.0; N_MOVES], &[1.0; N_MOVES * N_MOVES]).unwrap();
        assert!(free.floor_for_random(1e6, 1.0).is_none());
    }

    #[test]
    fn sequences_are_counted_once_at_their_cheapest_path() {
        // A seeded 3-state automaton with costs 9..30 quanta; every sequence of up to four
        // moves priced by brute force (minimum over all state paths). Five moves cost at
        // least 45, so below that the counts must agree exactly.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let k = 3;
        let start: Vec<f64> = (0..N_MOVES * k)
            .map(|_| rng.gen_range(9..=30) as f64)
            .collect();
        let step: Vec<f64> = (0..N_MOVES * N_MOVES * k * k)
            .map(|_| rng.gen_range(9..=30) as f64)
            .collect();
        let sc = SequenceCost::new(k, &start, &step).unwrap();
        let mut brute = vec![0.0f64; 45];
        fn walk(sc: &SequenceCost, v: [f32; MAX_STATES], last: u8, len: usize, out: &mut [f64]) {
            if len == 4 {
                return;
            }
            for m in 0..N_MOVES as u8 {
                if m / 3 == last / 3 {
                    continue;
                }
                let w = sc.forward(&v, last, m);
                let c = w[..sc.k].iter().copied().fold(INF, f32::min) as usize;
                if c < out.len() {
                    out[c] += 1.0;
                    walk(sc, w, m, len + 1, out);
                }
            }
        }
        for m in 0..N_MOVES as u8 {
            let mut v = [INF; MAX_STATES];
            v[..k].copy_from_slice(sc.start_of(m));
            let c = v[..k].iter().copied().fold(INF, f32::min) as usize;
            if c < brute.len() {
                brute[c] += 1.0;
                walk(&sc, v, m, 1, &mut brute);
            }
        }
        let mut counted = vec![0.0f64; 45];
        assert!(sc.count_by_cost(1.0, |t, n| {
            if t < 45 {
                counted[t] = n;
            }
            t < 45
        }));
        assert_eq!(counted, brute);
        assert!(brute.iter().sum::<f64>() > 1000.0);
    }

    #[test]
    fn bad_automata_are_refused() {
        let e = |r: Result<SequenceCost, SolverError>| match r {
            Err(SolverError::CostModel { reason }) => reason,
            other => panic!("{other:?}"),
        };
        assert!(e(SequenceCost::new(0, &[], &[])).contains("0 states"));
        assert!(e(SequenceCost::new(2, &[1.0; 18], &[1.0; 18 * 18 * 4])).contains("36"));
        let mut step = vec![1.0; 18 * 18];
        step[5] = -1.0;
        assert!(e(SequenceCost::new(1, &[1.0; 18], &step)).contains("-1"));
        step[5] = f64::NAN;
        assert!(SequenceCost::new(1, &[1.0; 18], &step).is_err());
        step[5] = f64::INFINITY;
        assert!(SequenceCost::new(1, &[1.0; 18], &step).is_ok());
    }

    #[test]
    fn bound_tables_are_lower_bounds() {
        // Exactly n more moves after any move costs at least n (toy: 1 per move), and
        // with only U/D moves allowed every step after the first is an opposite face (3).
        let sc = toy();
        let (suf, pre) = bound_tables(&sc, 6, u32::MAX);
        for n in 0..=6 {
            for m in 0..N_MOVES {
                assert_eq!(suf[n * N_MOVES + m], n as f32);
                assert_eq!(pre[n * N_MOVES + m], 2.0 + n as f32);
            }
        }
        let ud = (0..N_MOVES)
            .filter(|m| m / 3 % 3 == 0)
            .fold(0, |a, m| a | 1 << m);
        let (suf, _) = bound_tables(&sc, 3, ud);
        // After R: one U/D move (1), then each further one is opposite (3).
        assert_eq!(suf[2 * N_MOVES + 3], 4.0);
    }
}
