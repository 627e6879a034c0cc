//! The costed two-phase search: Kociemba's two phases over the length search's tables
//! (three axes × the inverse problem), carrying the automaton's cost vector along every
//! path, pruned by exact lower bounds on the cost of the moves still needed, cheapest
//! children first, until nothing cheaper can exist or a budget ends.
//!
//! Level: part of `solver::costed`; depends on the solver's coordinates, symmetry, move
//! and pruning tables and on [`super::SequenceCost`]. Must not depend on `cube`'s
//! user-facing types beyond what the tables use, nor on anything above `solver`.

// Index loops over parallel arrays (states, moves) read best as they are.
#![allow(clippy::needless_range_loop)]

use std::time::Instant;

use super::automaton::{SequenceCost, INF, MAX_STATES};
use super::CostedOptions;
use crate::solver::coord::{CornerPerm, DEdges, Flip, SliceSorted, Twist, UEdges};
use crate::solver::cubie::{sym_table, Cc};
use crate::solver::search::{inverse_move, prefetch, Tables3};
use crate::solver::tables::{N_MOVES, P2_MOVES};

/// Longest solution the search can represent.
const MAX_DEPTH: usize = 32;

#[inline(always)]
pub(super) const fn is_p2_move(m: u8) -> bool {
    let f = m / 3;
    f == 0 || f == 3 || m % 3 == 1
}

#[inline(always)]
pub(super) fn vmin(v: &[f32; MAX_STATES]) -> f32 {
    v.iter().copied().fold(INF, f32::min)
}

/// A child of a search node: move, its lower bound, its cost vector and coordinates.
#[derive(Clone, Copy)]
pub(super) struct Kid {
    m: u8,
    i: u8,
    lb: f32,
    a: u16,
    b: u16,
    c: u16,
    f: u32,
}

pub(super) struct Search<'a> {
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
    pub(super) found: Vec<(f32, Vec<u8>)>,
    keep: usize,
    pub(super) nodes: u64,
    pub(super) nodes2: u64,
    /// Variant-frame moves as moves of the other two axes' frames.
    axis_moves: [[u8; N_MOVES]; 2],
    pub(super) ends: u64,
    /// The current job is out of budget (or the search is stopped).
    cut: bool,
    job_end: u64,
    pub(super) d1: usize,
    pub(super) improvements: Vec<(f64, f64, u32)>,
    t0: Instant,
    deadline: Instant,
    max_nodes: u64,
    cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    pub(super) stop: bool,
}

impl<'a> Search<'a> {
    pub(super) fn new(
        t: &'a Tables3,
        sc: &'a SequenceCost,
        o: &CostedOptions,
        t0: Instant,
    ) -> Search<'a> {
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
            cancel: o.cancel.clone(),
            stop: false,
        }
    }

    #[inline]
    fn tick(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes >= self.max_nodes {
            self.stop = true;
        }
        if self.nodes & 1023 == 0
            && (Instant::now() >= self.deadline
                || self
                    .cancel
                    .as_ref()
                    .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)))
        {
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

    pub(super) fn run(&mut self, c: &Cc) {
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
pub(super) fn bound_tables(sc: &SequenceCost, max_len: usize, mask: u32) -> (Vec<f32>, Vec<f32>) {
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
pub(super) type Ax = [(u16, u16, u16); 2];

#[inline(always)]
pub(super) fn j_index(j: usize) -> u16 {
    j as u16
}

/// Sorts children by lower bound (cheapest first), keeping vectors alongside.
pub(super) fn sort_kids(kids: &mut [Kid], vs: &mut [[f32; MAX_STATES]]) {
    for a in 1..kids.len() {
        let mut b = a;
        while b > 0 && kids[b - 1].lb > kids[b].lb {
            kids.swap(b - 1, b);
            vs.swap(b - 1, b);
            b -= 1;
        }
    }
}
