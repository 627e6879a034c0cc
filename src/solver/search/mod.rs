//! The 3x3x3 searches: Kociemba's two-phase algorithm (the three axes × the inverse as
//! six searches taken in turn at each phase-1 depth; phase-1 solutions extended only
//! while they can still beat the best length found) and a short optimal IDA* (heuristic:
//! the largest phase-1 distance over the three axes) that answers positions near the
//! target optimally.
//!
//! Files: this one holds the two-phase search and what both searches share (tables,
//! limits, clock, solutions); `short` holds the short optimal search.
//!
//! Level: part of `solver`; depends on the coordinates, cubie arithmetic and tables. Must not
//! depend on the costed search or anything above `solver`.

// Index loops over parallel arrays (slots, pieces, moves) read best as they are.
#![allow(clippy::needless_range_loop)]

mod short;

use std::time::Instant;

use super::coord::{CornerPerm, DEdges, Flip, SliceSorted, Twist, UEdges};
use super::cubie::{move_cube, sym_table, Cc};
use super::tables::{Nibbles, Small, CORNER_REACH_T, CORNER_SET_MAX_BUDGET, N_MOVES, P2_MOVES};
use short::short_first;

/// Corner permutation, U-edge and D-edge coordinates, carried along phase 1 for phase 2.
type P2Coords = (u16, u16, u16);

/// Positions this close to the target get the optimal search first.
pub(crate) const SHORT_OPTIMAL: u32 = 7;

/// The loaded 3x3x3 tables.
pub(crate) struct Tables3 {
    pub small: Small,
    pub p1: Nibbles,
    pub p2: Nibbles,
    /// The corner-set tables for phase-2 budgets 1..=7 (index budget − 1).
    pub cset: Vec<Nibbles>,
}

impl Tables3 {
    #[inline(always)]
    fn h1(&self, tw: u16, fl: u16, sl: u16) -> u32 {
        self.p1.get(self.small.p1_index(tw, fl, sl)) as u32
    }

    #[inline(always)]
    fn h2(&self, cp: u16, ud: u16, sp: u16) -> u32 {
        let a = self.small.cornslice[cp as usize * 24 + sp as usize] as u32;
        let b = self.p2.get(self.small.p2_index(cp, ud)) as u32;
        a.max(b)
    }

    /// The corner-set table for a phase-2 budget, and how many phase-1 moves from the
    /// subgroup it is read; none outside budgets 1..=[`CORNER_SET_MAX_BUDGET`].
    #[inline(always)]
    fn corner_set(&self, budget2: i64) -> Option<(&Nibbles, usize)> {
        usize::try_from(budget2)
            .ok()
            .filter(|b| (1..=CORNER_SET_MAX_BUDGET).contains(b))
            .map(|b| (&self.cset[b - 1], CORNER_SET_REACH[b - 1]))
    }

    pub fn bytes(&self) -> usize {
        self.small.bytes()
            + self.p1.bytes()
            + self.p2.bytes()
            + self.cset.iter().map(Nibbles::bytes).sum::<usize>()
    }
}

/// What the caller asked for, in search terms.
pub(crate) struct Limits {
    /// Largest solution cost accepted (in the chosen metric).
    pub max_cost: u32,
    pub deadline: Option<Instant>,
    pub solutions: usize,
    pub keep_searching: bool,
    pub qtm: bool,
    /// Every optimal solution, nothing longer (`solutions` is then unbounded).
    pub all_optimal: bool,
}

/// A solution: face-turn indices 0..18 and its cost in the chosen metric.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    pub moves: Vec<u8>,
    pub cost: u32,
}

/// The node count and time limit of a depth-first search.
pub(crate) struct Clock {
    pub nodes: u64,
    deadline: Option<Instant>,
    pub timed_out: bool,
}

impl Clock {
    pub fn new(deadline: Option<Instant>) -> Clock {
        Clock {
            nodes: 0,
            deadline,
            timed_out: false,
        }
    }

    /// Counts a node; true once the deadline has passed (looked at every 1024 nodes).
    #[inline]
    pub fn tick(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes & 1023 == 0 {
            if let Some(d) = self.deadline {
                if Instant::now() >= d {
                    self.timed_out = true;
                }
            }
        }
        self.timed_out
    }
}

/// Records `path` (of cost `cost`) as a solution; true when `want` are in hand.
pub(crate) fn record(found: &mut Vec<Found>, path: &[u8], cost: u32, want: usize) -> bool {
    found.push(Found {
        moves: path.to_vec(),
        cost,
    });
    found.len() >= want
}

/// Why a search ended with no solution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ended {
    /// Every sequence up to the maximum cost was ruled out (two-phase: every phase-1
    /// depth was searched).
    Exhausted,
    TimedOut,
    /// All optimal solutions were asked of a 3x3x3 further than [`SHORT_OPTIMAL`] from
    /// its target.
    BeyondOptimal,
}

const NONE: u8 = 255;
/// A phase-1 child whose corner-reach or corner-set entry cannot prune (not read).
const NO_REACH: usize = usize::MAX;
/// Per budget (index budget − 1), the most phase-1 moves left at which a child is
/// looked up in the corner-set table: the largest count that at least 5 % of all corner
/// states exceed (from the tables' distributions, pinned by the golden test). Further
/// from the subgroup the lookup almost never prunes and only costs its reads.
const CORNER_SET_REACH: [usize; CORNER_SET_MAX_BUDGET] = [8, 7, 7, 6, 6, 6, 5];

/// `ALLOWED[last_face + 1]`: bit m set when move m may follow a move of `last_face`
/// (never the same face, and opposite faces only in U-before-D order).
const fn allowed_masks() -> [u32; 7] {
    let mut a = [0u32; 7];
    let mut lf = 0;
    while lf < 7 {
        let mut m = 0;
        while m < 18 {
            let f = m / 3;
            let ok = if lf == 0 {
                true
            } else {
                let l = lf - 1;
                f != l && !(f % 3 == l % 3 && f < l)
            };
            if ok {
                a[lf] |= 1 << m;
            }
            m += 1;
        }
        lf += 1;
    }
    a
}
const ALLOWED: [u32; 7] = allowed_masks();

/// The moves (bit m) that may follow `last` (`NONE`: any).
#[inline(always)]
fn allowed_after(last: u8) -> u32 {
    ALLOWED[if last == NONE {
        0
    } else {
        last as usize / 3 + 1
    }]
}

#[inline(always)]
fn allowed(last: u8, m: u8) -> bool {
    allowed_after(last) >> m & 1 == 1
}

fn move_costs(qtm: bool) -> [u8; 18] {
    std::array::from_fn(|m| if qtm && m % 3 == 1 { 2 } else { 1 })
}

const fn is_p2_move(m: u8) -> bool {
    let f = m / 3;
    f == 0 || f == 3 || m % 3 == 1
}

/// Largest length limit for which premove variants are searched too.
const PREMOVES_UP_TO: u32 = 19;

/// The inverse of face turn `m`.
pub(crate) fn inverse_move(m: u8) -> u8 {
    m / 3 * 3 + (2 - m % 3)
}

/// Appends `m` to `moves`, merging it with a last move of the same face.
fn push_merged(moves: &mut Vec<u8>, m: u8) {
    match moves.last() {
        Some(&l) if l / 3 == m / 3 => {
            moves.pop();
            let quarters = (l % 3 + 1 + m % 3 + 1) % 4;
            if quarters != 0 {
                moves.push(m / 3 * 3 + quarters - 1);
            }
        }
        _ => moves.push(m),
    }
}

struct Variant {
    /// Symmetry conjugating the cube into this variant (0, 16 or 32: URF3^k).
    sym: usize,
    inverse: bool,
    /// A move done before the cube (so after the variant's solution), or `NONE`.
    pre: u8,
    tw: u16,
    fl: u16,
    sl: u16,
    cp: u16,
    ue: u16,
    de: u16,
    h: u32,
}

impl Variant {
    fn new(t: &Tables3, c: &Cc, sym: usize, inverse: bool) -> Variant {
        Variant::with_premove(t, c, sym, inverse, NONE)
    }

    /// The variant that solves `pre · c` (or `pre · c⁻¹`): its solution followed by `pre`
    /// solves `c` (its inverse), so it finds solutions that end with one move outside
    /// the phase-2 group after phase 2, which plain two-phase reaches only with a long
    /// phase 1.
    fn with_premove(t: &Tables3, c: &Cc, sym: usize, inverse: bool, pre: u8) -> Variant {
        let x = if inverse { c.inv() } else { *c };
        let x = if pre == NONE {
            x
        } else {
            move_cube(pre as usize).mul(&x)
        };
        let x = x.conj(sym);
        let (tw, fl, sl) = (Twist::get(&x).0, Flip::get(&x).0, SliceSorted::get(&x).0);
        Variant {
            sym,
            inverse,
            pre,
            tw,
            fl,
            sl,
            cp: CornerPerm::get(&x).0,
            ue: UEdges::get(&x).0,
            de: DEdges::get(&x).0,
            h: t.h1(tw, fl, sl),
        }
    }

    fn key(&self) -> (u16, u16, u16, u16, u16, u16) {
        (self.tw, self.fl, self.sl, self.cp, self.ue, self.de)
    }
}

/// Keeps the best `n` distinct solutions.
struct Keeper {
    n: usize,
    found: Vec<Found>,
}

impl Keeper {
    /// Largest cost a new solution may have to be worth keeping.
    fn limit(&self, max_cost: u32, keep_searching: bool) -> i64 {
        if self.found.len() < self.n {
            max_cost as i64
        } else if keep_searching || self.n > 1 {
            self.found.iter().map(|f| f.cost).max().unwrap_or(0) as i64 - 1
        } else {
            -1
        }
    }

    fn offer(&mut self, f: Found) -> bool {
        if self.found.iter().any(|g| g.moves == f.moves) {
            return false;
        }
        self.found.push(f);
        self.found.sort_by_key(|g| g.cost);
        self.found.truncate(self.n);
        true
    }
}

struct TwoPhase<'a> {
    t: &'a Tables3,
    lim: &'a Limits,
    cost: [u8; 18],
    /// `ends_ok[min(t, 3)]`: the moves that may be taken with `t` cost left, as far as
    /// ending phase 1 goes: a move that uses up the last of it must leave the phase-2
    /// group (a phase-2 move there would make a shorter phase 1 end in the subgroup).
    ends_ok: [u32; 4],
    keep: Keeper,
    sym_back: usize,
    inverse: bool,
    /// The current variant's premove (`NONE`) and its cost.
    pre: u8,
    pre_cost: u32,
    /// The current path: a phase-1 and phase-2 sequence of at most
    /// [`super::LONGEST_SEARCHED`] moves.
    path: [u8; super::LONGEST_SEARCHED as usize + 1],
    d1: u32,
    clock: Clock,
    stop: bool,
}

impl TwoPhase<'_> {
    fn limit(&self) -> i64 {
        self.keep.limit(self.lim.max_cost, self.lim.keep_searching) - self.pre_cost as i64
    }

    #[inline]
    fn tick(&mut self) -> bool {
        if self.clock.tick() {
            self.stop = true;
        }
        self.stop
    }

    /// Phase-1 IDA* with exactly `togo` cost left. The edge coordinate travels as its
    /// symmetry class and symmetry (`fs`: class << 4 | sym), moved through the class move
    /// table, so each node reads one row of it; `sp` is the unordered slice positions
    /// (0..495). A child is first checked against the two cache-resident partial bounds
    /// (flip × slice by class, twist × slice); only the survivors probe the big table,
    /// and their probes are all prefetched before any is read, so the memory latencies
    /// overlap.
    #[allow(clippy::too_many_arguments)]
    fn phase1(&mut self, tw: u16, fs: u32, sl: u16, p2c: P2Coords, n: usize, togo: u32, last: u8) {
        let (cp, ue, de) = p2c;
        let s = &self.t.small;
        let sp = sl as usize / 24;
        let (class, sym) = ((fs >> 4) as usize, (fs & 15) as usize);
        let row: &[u32; N_MOVES] = s.fs_next[class * N_MOVES..class * N_MOVES + N_MOVES]
            .try_into()
            .expect("a class row has one entry per move");
        let mconj = &s.mconj[sym * N_MOVES..sym * N_MOVES + N_MOVES];
        // Stage 1: the flip × slice bound (carried in the class row) and the leaves;
        // the survivors' twist × slice entries are prefetched. The bound is checked for
        // the whole row at once, branch-free, in the class's own move frame; the passing
        // moves are then mapped into this node's frame (a symmetry maps half turns to
        // half turns, so a move's cost is the same in both).
        let mut fits = 0u32;
        for j in 0..N_MOVES {
            fits |= (((row[j] >> 24) + self.cost[j] as u32 <= togo) as u32) << j;
        }
        let minv = &s.mconj_inv[sym * N_MOVES..sym * N_MOVES + N_MOVES];
        let mut mask = 0u32;
        while fits != 0 {
            mask |= 1 << minv[fits.trailing_zeros() as usize];
            fits &= fits - 1;
        }
        mask &= allowed_after(last) & self.ends_ok[togo.min(3) as usize];
        let mut kids = [(0u8, 0u16, 0u32, 0usize); N_MOVES];
        let mut k = 0;
        while mask != 0 {
            let m = mask.trailing_zeros() as u8;
            mask &= mask - 1;
            let c = self.cost[m as usize] as u32;
            let mi = m as usize;
            let y = row[mconj[mi] as usize] & 0xff_ffff;
            let tw2 = s.twist_move[tw as usize * N_MOVES + mi];
            if c == togo {
                // The last phase-1 move: the child must be in the subgroup (twist 0 and
                // the class of flip 0, slice 0, which is the class 0 alone).
                if tw2 == 0 && y >> 4 == 0 {
                    self.path[n] = m;
                    let cp2 = s.corner_move[cp as usize * N_MOVES + mi];
                    let sl2 = s.slice_move[sl as usize * N_MOVES + mi];
                    let ue2 = s.uedge_move[ue as usize * N_MOVES + mi];
                    let de2 = s.dedge_move[de as usize * N_MOVES + mi];
                    self.phase2_start(n + 1, cp2, sl2, ue2, de2);
                    if self.tick() {
                        return;
                    }
                }
                continue;
            }
            let ti = s.slicepos_move[sp * N_MOVES + mi] as usize * Twist::COUNT + tw2 as usize;
            prefetch(s.ts_dist.as_ptr().wrapping_add(ti >> 1));
            kids[k] = (m, tw2, y, ti);
            k += 1;
        }
        // Stage 2: the twist × slice bound; the survivors' big-table entries (and, where
        // it can prune, their corner-reach entries) prefetched, and their class rows, so
        // that a row arrives while the big table is awaited rather than after it.
        let budget2 = self.limit() - self.d1 as i64;
        // Where the phase-2 budget is small, the corner-set table of that budget replaces
        // the corner-reach bound (it implies it, and reaches further from the subgroup).
        let cset = self.t.corner_set(budget2);
        let mut kids2 = [(0u8, 0u32, 0usize, 0u16, NO_REACH); N_MOVES];
        let mut k2 = 0;
        for j in 0..k {
            let (m, tw2, y, ti) = kids[j];
            let mi = m as usize;
            let rest = togo - self.cost[mi] as u32;
            if (s.ts_dist[ti >> 1] >> ((ti & 1) * 4) & 15) as u32 > rest {
                continue;
            }
            let class2 = y >> 4;
            // Already in the subgroup with little left: a shorter phase 1 covers it.
            if tw2 == 0 && class2 == 0 && rest < 5 {
                continue;
            }
            let sym2 = s.symmult[(y & 15) as usize * 16 + sym] as u32;
            let i = class2 as usize * Twist::COUNT
                + s.twist_conj[tw2 as usize * 16 + sym2 as usize] as usize;
            prefetch(self.t.p1.words.as_ptr().wrapping_add(i >> 4));
            // The child's class row, a big-table wait ahead of its descent.
            prefetch_row(&s.fs_next, class2 as usize);
            let cp2 = s.corner_move[cp as usize * N_MOVES + mi];
            let r = rest as usize;
            let ri = match cset {
                Some((t, reach)) if r <= reach => {
                    let ci = s.cset_index(cp2, tw2);
                    prefetch(t.words.as_ptr().wrapping_add(ci >> 4));
                    ci
                }
                Some(_) => NO_REACH,
                None if r <= CORNER_REACH_T && budget2 < s.corner_reach_max[r] as i64 => {
                    let ri = r * CornerPerm::COUNT + cp2 as usize;
                    prefetch(s.corner_reach.as_ptr().wrapping_add(ri));
                    ri
                }
                _ => NO_REACH,
            };
            kids2[k2] = (m, class2 << 4 | sym2, i, cp2, ri);
            kids[k2].1 = tw2;
            k2 += 1;
        }
        // Stage 3: the corner-reach bound, then the big table; what the passing children
        // read first is prefetched.
        let mut pass = [(0u8, 0u16, (0u16, 0u16, 0u16)); N_MOVES];
        let mut np = 0;
        for j in 0..k2 {
            let (m, _, i, cp2, ri) = kids2[j];
            let mi = m as usize;
            let rest = togo - self.cost[mi] as u32;
            if ri != NO_REACH {
                let out = match cset {
                    Some((t, _)) => t.get(ri) as u32 > rest,
                    None => s.corner_reach[ri] as i64 > budget2,
                };
                if out {
                    continue;
                }
            }
            if self.t.p1.get(i) as u32 > rest {
                continue;
            }
            // The child's twist row, and the coordinates carried along for phase 2 and
            // their rows (whole rows: they may straddle two cache lines); its class row
            // was requested in stage 2.
            let tw2 = kids[j].1;
            prefetch_row(&s.twist_move, tw2 as usize);
            let sl2 = s.slice_move[sl as usize * N_MOVES + mi];
            let ue2 = s.uedge_move[ue as usize * N_MOVES + mi];
            let de2 = s.dedge_move[de as usize * N_MOVES + mi];
            prefetch_row(&s.corner_move, cp2 as usize);
            prefetch_row(&s.slice_move, sl2 as usize);
            prefetch_row(&s.uedge_move, ue2 as usize);
            prefetch_row(&s.dedge_move, de2 as usize);
            pass[np] = (j as u8, sl2, (cp2, ue2, de2));
            np += 1;
        }
        for &(j, sl2, p2c2) in &pass[..np] {
            let (m, fs2, _, _, _) = kids2[j as usize];
            let tw2 = kids[j as usize].1;
            let rest = togo - self.cost[m as usize] as u32;
            self.path[n] = m;
            self.phase1(tw2, fs2, sl2, p2c2, n + 1, rest, m);
            if self.tick() {
                return;
            }
        }
    }

    fn phase2_start(&mut self, n1: usize, cp: u16, sl: u16, ue: u16, de: u16) {
        let budget = self.limit() - self.d1 as i64;
        if budget < 0 {
            return;
        }
        let s = &self.t.small;
        // The three independent first reads start together: the corner × slice bound,
        // and the two the big-table index needs first.
        let udi = ue as usize * 24 + de as usize % 24;
        prefetch(s.ud_from_ud.as_ptr().wrapping_add(udi));
        prefetch(s.c_sym.as_ptr().wrapping_add(cp as usize));
        // The cheap corner × slice bound first; the edges only when it passes.
        let cs = s.cornslice[cp as usize * 24 + sl as usize] as u32;
        if cs as i64 > budget {
            return;
        }
        let ud = s.ud_from_ud[udi];
        debug_assert!(ud != u16::MAX, "phase 1 ended outside the subgroup");
        let h = cs.max(self.t.p2.get(s.p2_index(cp, ud)) as u32);
        if h as i64 > budget {
            return;
        }
        let last = if n1 == 0 { NONE } else { self.path[n1 - 1] };
        for d2 in h..=budget as u32 {
            if self.phase2(cp, ud, sl, n1, d2, last) || self.stop {
                return;
            }
        }
    }

    /// Depth-first phase 2 with exactly `togo` cost left; true when a solution was kept.
    /// Like phase 1, the children are checked in stages whose memory reads are all
    /// prefetched before any is used: first the corner × slice bound (and the rows of
    /// the symmetry tables the big-table index needs), then the big table.
    fn phase2(&mut self, cp: u16, ud: u16, sp: u16, n: usize, togo: u32, last: u8) -> bool {
        if togo == 0 {
            return cp == 0 && ud == 0 && sp == 0 && self.record(n);
        }
        if self.tick() {
            return false;
        }
        let s = &self.t.small;
        let nm = P2_MOVES.len();
        let mut kids = [(0u8, 0u16, 0u16, 0u16); 10];
        let mut k = 0;
        for (i, &m) in P2_MOVES.iter().enumerate() {
            if !allowed(last, m) || self.cost[m as usize] as u32 > togo {
                continue;
            }
            let mi = m as usize;
            let cp2 = s.corner_move[cp as usize * N_MOVES + mi];
            let sp2 = s.slice_move[sp as usize * N_MOVES + mi];
            let ud2 = s.ud_move[ud as usize * nm + i];
            prefetch(
                s.cornslice
                    .as_ptr()
                    .wrapping_add(cp2 as usize * 24 + sp2 as usize),
            );
            prefetch(s.c_sym.as_ptr().wrapping_add(cp2 as usize));
            prefetch(s.ud_conj.as_ptr().wrapping_add(ud2 as usize * 16));
            kids[k] = (m, cp2, sp2, ud2);
            k += 1;
        }
        let mut pass = [(0u8, 0u16, 0u16, 0u16, 0usize); 10];
        let mut np = 0;
        for &(m, cp2, sp2, ud2) in &kids[..k] {
            let rest = togo - self.cost[m as usize] as u32;
            if s.cornslice[cp2 as usize * 24 + sp2 as usize] as u32 > rest {
                continue;
            }
            let i = s.p2_index(cp2, ud2);
            prefetch(self.t.p2.words.as_ptr().wrapping_add(i >> 4));
            // The rows the child reads first.
            prefetch(s.corner_move.as_ptr().wrapping_add(cp2 as usize * N_MOVES));
            prefetch(s.ud_move.as_ptr().wrapping_add(ud2 as usize * nm));
            pass[np] = (m, cp2, sp2, ud2, i);
            np += 1;
        }
        let mut any = false;
        for &(m, cp2, sp2, ud2, i) in &pass[..np] {
            let rest = togo - self.cost[m as usize] as u32;
            if self.t.p2.get(i) as u32 > rest {
                continue;
            }
            self.path[n] = m;
            if self.phase2(cp2, ud2, sp2, n + 1, rest, m) {
                any = true;
                if self.stop || self.lim.solutions == 1 {
                    return true;
                }
            }
            if self.stop {
                break;
            }
        }
        any
    }

    fn record(&mut self, n: usize) -> bool {
        let mconj = &sym_table().mconj[self.sym_back];
        // The path never turns a face twice in a row; only the premove may meet its face.
        let mut moves: Vec<u8> = self.path[..n].iter().map(|&m| mconj[m as usize]).collect();
        if self.pre != NONE {
            push_merged(&mut moves, self.pre);
        }
        if self.inverse {
            moves.reverse();
            for m in moves.iter_mut() {
                *m = inverse_move(*m);
            }
        }
        let cost = moves.iter().map(|&m| self.cost[m as usize] as u32).sum();
        let kept = self.keep.offer(Found { moves, cost });
        if self.keep.found.len() >= self.lim.solutions && !self.lim.keep_searching {
            self.stop = true;
        }
        kept
    }
}

/// Solves `c` (at the cubie level, to solved); adds the nodes searched to `nodes`.
///
/// Steps: the search variants (three axes × the inverse, then the premove variants where
/// short solutions are asked for); the short optimal search for cubes near solved; then
/// the two-phase search over the variants, cost spent before phase 2 by cost spent.
pub(crate) fn solve(
    t: &Tables3,
    c: &Cc,
    lim: &Limits,
    nodes: &mut u64,
) -> Result<Vec<Found>, Ended> {
    if *c == Cc::ID {
        return Ok(vec![Found {
            moves: Vec::new(),
            cost: 0,
        }]);
    }
    let cost = move_costs(lim.qtm);
    let mut variants = plain_variants(t, c);
    let lower = variants.first().map_or(0, |v| v.h);
    if lim.max_cost <= PREMOVES_UP_TO {
        add_premove_variants(t, c, &mut variants);
    }
    let mut keep = Keeper {
        n: lim.solutions.max(1),
        found: Vec::new(),
    };
    if lower <= SHORT_OPTIMAL.min(lim.max_cost) {
        if let Some(done) = short_first(t, c, lim, cost, lower, &mut keep, nodes) {
            return done;
        }
    }
    if lim.all_optimal {
        // Nothing within the optimal search's reach: the cube is further than the length
        // limit, or than the optimal search goes.
        return Err(if lower > lim.max_cost || lim.max_cost < SHORT_OPTIMAL {
            Ended::Exhausted
        } else {
            Ended::BeyondOptimal
        });
    }
    let mut tp = TwoPhase::new(t, lim, cost, keep);
    tp.run(&variants);
    *nodes += tp.clock.nodes;
    if tp.keep.found.is_empty() {
        Err(if tp.clock.timed_out {
            Ended::TimedOut
        } else {
            Ended::Exhausted
        })
    } else {
        Ok(tp.keep.found)
    }
}

/// The three axes × the inverse as up to six variants (symmetric cubes give fewer
/// distinct ones), largest phase-1 distance first.
fn plain_variants(t: &Tables3, c: &Cc) -> Vec<Variant> {
    let mut variants: Vec<Variant> = Vec::with_capacity(6);
    for inverse in [false, true] {
        for k in 0..3 {
            let v = Variant::new(t, c, 16 * k, inverse);
            if !variants.iter().any(|w| w.key() == v.key()) {
                variants.push(v);
            }
        }
    }
    // Within each phase-1 depth, the variants whose phase-1 distance is largest go first:
    // at depth d1 they have the fewest spare moves, so their searches are the cheapest
    // (a variant with none left descends the exact table straight), while their
    // phase-1 solutions get the same phase-2 budget as everyone's. On the 1000 random
    // states this cut the search work (phase-1 and phase-2 nodes) of the median cube by 12 %.
    variants.sort_by_key(|v| std::cmp::Reverse(v.h));
    variants
}

/// Premove variants (after the plain ones at each cost) where short solutions are asked
/// for: they reach the solutions that end with a move outside the phase-2 group, at a
/// phase-1 depth one less.
fn add_premove_variants(t: &Tables3, c: &Cc, variants: &mut Vec<Variant>) {
    let syms = sym_table();
    let plain = variants.len();
    for inverse in [false, true] {
        for k in 0..3 {
            for q in 0..N_MOVES as u8 {
                // Only moves outside this axis's phase-2 group: any other premove
                // could be part of phase 2 already.
                if is_p2_move(syms.mconj[16 * k][q as usize]) {
                    continue;
                }
                let v = Variant::with_premove(t, c, 16 * k, inverse, q);
                if !variants.iter().any(|w| w.key() == v.key()) {
                    variants.push(v);
                }
            }
        }
    }
    variants[plain..].sort_by_key(|v| std::cmp::Reverse(v.h));
}

impl<'a> TwoPhase<'a> {
    fn new(t: &'a Tables3, lim: &'a Limits, cost: [u8; 18], keep: Keeper) -> TwoPhase<'a> {
        TwoPhase {
            t,
            lim,
            cost,
            ends_ok: std::array::from_fn(|t| {
                (0..N_MOVES as u8)
                    .filter(|&m| !(cost[m as usize] as usize == t && is_p2_move(m)))
                    .fold(0, |a, m| a | 1 << m)
            }),
            keep,
            sym_back: 0,
            inverse: false,
            pre: NONE,
            pre_cost: 0,
            path: [0; super::LONGEST_SEARCHED as usize + 1],
            d1: 0,
            clock: Clock::new(lim.deadline),
            stop: false,
        }
    }

    /// Runs the variants' searches. The searches go in order of the cost spent before
    /// phase 2 (phase 1 and the premove), so that every search at one step leaves phase 2
    /// the same budget: a premove variant's phase 1 runs one depth shorter than the plain
    /// ones beside it. (Ordering by phase-1 depth alone ran a premove variant's depth d1
    /// beside the plain d1 with a phase-2 budget one smaller; on the 1000 random states at
    /// ≤ 19 this order searched 4 % fewer nodes for the median cube, 11 % fewer in all,
    /// and took the slowest cube from 16.9 M nodes to 9.0 M.)
    fn run(&mut self, variants: &[Variant]) {
        let t = self.t;
        let mut order: Vec<usize> = (0..variants.len()).collect();
        for spent in 0..=self.lim.max_cost {
            self.pre = NONE;
            self.pre_cost = 0;
            if spent as i64 > self.limit() {
                break;
            }
            // Where phase 2 is left a small budget, the variants (plain ones first, then
            // the premove ones) go in order of their corners' distance to what that budget
            // can finish (the corner-set table at the root), then as above: the fewer of
            // the phase-1 moves the corners need, the likelier a phase-1 solution leaves
            // corners phase 2 can solve in time. (1000 random states at ≤ 19: total nodes
            // −11 %, the slowest cube 9.0 M → 4.3 M nodes; on 1000 other random states
            // −11 % and 18.9 M → 7.6 M. At ≤ 20 the median is unchanged.)
            let cset = t.corner_set(self.limit() - spent as i64);
            order.sort_by_key(|&i| {
                let v = &variants[i];
                let corners =
                    cset.map_or(0, |(table, _)| table.get(t.small.cset_index(v.cp, v.tw)));
                (v.pre != NONE, corners, i)
            });
            for v in order.iter().map(|&i| &variants[i]) {
                self.search_variant(v, spent);
                if self.stop {
                    return;
                }
            }
        }
    }

    /// The search of one variant with `spent` cost before phase 2 (its premove's cost,
    /// then phase 1).
    fn search_variant(&mut self, v: &Variant, spent: u32) {
        let pre_cost = if v.pre == NONE {
            0
        } else {
            self.cost[v.pre as usize] as u32
        };
        let Some(d1) = spent.checked_sub(pre_cost) else {
            return;
        };
        if v.h > d1 {
            return;
        }
        self.d1 = d1;
        self.sym_back = sym_table().inv[v.sym] as usize;
        self.inverse = v.inverse;
        self.pre = v.pre;
        self.pre_cost = pre_cost;
        if d1 as i64 > self.limit() {
            return;
        }
        if d1 == 0 {
            self.phase2_start(0, v.cp, v.sl, v.ue, v.de);
        } else {
            let fs = (v.sl as usize / 24) * 2048 + v.fl as usize;
            self.phase1(
                v.tw,
                self.t.small.fs_sym[fs],
                v.sl,
                (v.cp, v.ue, v.de),
                0,
                d1,
                NONE,
            );
        }
    }
}

/// See [`super::Solver::lower_bounds`].
pub(crate) fn lower_bounds(t: &Tables3, c: &Cc) -> (u32, Option<u32>) {
    let mut h1 = 0;
    for inverse in [false, true] {
        for k in 0..3 {
            h1 = h1.max(Variant::new(t, c, 16 * k, inverse).h);
        }
    }
    let (tw, fl, sl) = (Twist::get(c).0, Flip::get(c).0, SliceSorted::get(c).0);
    let h2 = (tw == 0 && fl == 0 && sl < 24).then(|| {
        let s = &t.small;
        let ud = s.ud_from_ud[UEdges::get(c).0 as usize * 24 + DEdges::get(c).0 as usize % 24];
        t.h2(CornerPerm::get(c).0, ud, sl)
    });
    (h1, h2)
}

/// Prefetches row `r` of a move-indexed table (`N_MOVES` entries a row): its first and
/// last entries, so both lines of a row that straddles a line boundary are requested.
#[inline(always)]
fn prefetch_row<T>(table: &[T], r: usize) {
    let p = table.as_ptr().wrapping_add(r * N_MOVES);
    prefetch(p);
    prefetch(p.wrapping_add(N_MOVES - 1));
}

/// Asks the CPU to start loading the cache line at `p` (a hint; no effect on results).
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint that never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_premove_merges_with_a_last_move_of_its_face() {
        // Moves: U U2 U' R R2 R' … (0, 1, 2, 3, 4, 5 …).
        let merged = |start: &[u8], m: u8| {
            let mut v = start.to_vec();
            push_merged(&mut v, m);
            v
        };
        assert_eq!(merged(&[3], 0), [3, 0]); // R then U
        assert_eq!(merged(&[3], 3), [4]); // R R = R2
        assert_eq!(merged(&[3], 5), Vec::<u8>::new()); // R R' = nothing
        assert_eq!(merged(&[0, 4], 3), [0, 5]); // R2 R = R'
        assert_eq!(merged(&[4], 4), Vec::<u8>::new()); // R2 R2 = nothing
        assert_eq!(merged(&[], 17), [17]);
    }
}
