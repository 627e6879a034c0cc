//! The cost of face-turn sequences as a small min-plus automaton: after a face turn the
//! executor is in one of `K` states; a move's cost depends on the previous move and the
//! state. Prices sequences (taking commuting opposite-face pairs in the cheaper order),
//! counts sequences by cost for a floor on what any solver can reach, and steps cost
//! vectors forward and backward for the search.
//!
//! Level: part of `solver::costed`; depends on `cube` (algorithms) and the solver's move
//! count. Must not depend on the search or the pruning tables.

// Index loops over parallel arrays (states, moves) read best as they are.
#![allow(clippy::needless_range_loop)]

use crate::cube::Alg;
use crate::solver::tables::N_MOVES;
use crate::solver::SolverError;

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
pub(super) const NONE_U: u32 = u32::MAX;
/// Most sequence summaries [`SequenceCost::count_by_cost`] will track (a few thousand
/// occur for the MindCub3r's timings).
pub const MAX_SUMMARIES: usize = 1_000_000;

/// Cost vectors relative to their minimum, interned (see
/// [`SequenceCost::floor_for_random`]).
#[derive(Default)]
pub(super) struct RelVectors {
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
pub(super) const INF: f32 = f32::INFINITY;

/// The cost of face-turn sequences as a min-plus automaton (see the module docs). Move
/// indices are 0..18 in the order U U2 U' R R2 R' F F2 F' D D2 D' L L2 L' B B2 B'.
#[derive(Clone, Debug)]
pub struct SequenceCost {
    pub(super) k: usize,
    /// `start[m * k + j]`.
    pub(super) start: Vec<f32>,
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
    pub(super) fn st(&self, p: u8, m: u8) -> &[f32] {
        let kk = self.k * self.k;
        let o = (p as usize * N_MOVES + m as usize) * kk;
        &self.step[o..o + kk]
    }

    #[inline(always)]
    pub(super) fn start_of(&self, m: u8) -> &[f32] {
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
    pub(super) fn forward(&self, v: &[f32; MAX_STATES], p: u8, m: u8) -> [f32; MAX_STATES] {
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
    pub(super) fn backward(&self, v: &[f32; MAX_STATES], q: u8, m: u8) -> [f32; MAX_STATES] {
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
