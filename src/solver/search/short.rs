//! The short optimal search: IDA* over all 18 moves with the largest phase-1 distance
//! over the three axes as its heuristic, run first for cubes near the target so that they
//! get optimal answers.
//!
//! Level: part of `solver::search`; depends on the parent's tables, clock and solution
//! bookkeeping, and on the solver's coordinates. Must not depend on the two-phase search
//! beside it, nor on anything above `solver`.

use super::{allowed, record, Clock, Ended, Found, Keeper, Limits, Tables3, NONE, SHORT_OPTIMAL};
use crate::solver::coord::{CornerPerm, DEdges, Flip, SliceSorted, Twist, UEdges};
use crate::solver::cubie::{sym_table, Cc};
use crate::solver::tables::N_MOVES;

/// Short optimal search: IDA* over all 18 moves, heuristic = largest phase-1 distance
/// over the three axes. Returns the solutions of the smallest cost ≤ `max_cost` (up to
/// `keep.n`, then the next costs if more are wanted), or nothing when none exists.
struct Short<'a> {
    t: &'a Tables3,
    cost: [u8; 18],
    axis_moves: [[u8; 18]; 3],
    path: Vec<u8>,
    found: Vec<Found>,
    want: usize,
    clock: Clock,
    solved_ue: u16,
    solved_de: u16,
}

#[derive(Clone, Copy)]
struct ShortNode {
    ax: [(u16, u16, u16); 3],
    cp: u16,
    ue: u16,
    de: u16,
}

impl Short<'_> {
    fn h(&self, n: &ShortNode) -> u32 {
        n.ax.iter()
            .map(|&(tw, fl, sl)| self.t.h1(tw, fl, sl))
            .max()
            .unwrap_or(0)
    }

    fn is_solved(&self, n: &ShortNode) -> bool {
        n.ax[0] == (0, 0, 0) && n.cp == 0 && n.ue == self.solved_ue && n.de == self.solved_de
    }

    fn step(&self, n: &ShortNode, m: usize) -> ShortNode {
        let s = &self.t.small;
        let mut ax = n.ax;
        for (k, a) in ax.iter_mut().enumerate() {
            let mk = self.axis_moves[k][m] as usize;
            *a = (
                s.twist_move[a.0 as usize * N_MOVES + mk],
                s.flip_move[a.1 as usize * N_MOVES + mk],
                s.slice_move[a.2 as usize * N_MOVES + mk],
            );
        }
        ShortNode {
            ax,
            cp: s.corner_move[n.cp as usize * N_MOVES + m],
            ue: s.uedge_move[n.ue as usize * N_MOVES + m],
            de: s.dedge_move[n.de as usize * N_MOVES + m],
        }
    }

    fn dfs(&mut self, node: &ShortNode, togo: u32, last: u8) -> bool {
        if togo == 0 {
            if self.is_solved(node) {
                let cost = self
                    .path
                    .iter()
                    .map(|&m| self.cost[m as usize] as u32)
                    .sum();
                return record(&mut self.found, &self.path, cost, self.want);
            }
            return false;
        }
        if self.clock.tick() {
            return true;
        }
        for m in 0..N_MOVES as u8 {
            if !allowed(last, m) {
                continue;
            }
            let c = self.cost[m as usize] as u32;
            if c > togo {
                continue;
            }
            let next = self.step(node, m as usize);
            if self.h(&next) > togo - c {
                continue;
            }
            self.path.push(m);
            let done = self.dfs(&next, togo - c, m);
            self.path.pop();
            if done {
                return true;
            }
        }
        false
    }
}

/// The short optimal search, bound by bound from `lower`; its solutions go to `keep`.
/// Returns the answer when it settles the question (out of time, enough optimal
/// solutions), `None` when the two-phase search must go on.
pub(super) fn short_first(
    t: &Tables3,
    c: &Cc,
    lim: &Limits,
    cost: [u8; 18],
    lower: u32,
    keep: &mut Keeper,
    nodes: &mut u64,
) -> Option<Result<Vec<Found>, Ended>> {
    let syms = sym_table();
    let short_max = SHORT_OPTIMAL.min(lim.max_cost);
    let root = ShortNode {
        ax: std::array::from_fn(|k| {
            let x = c.conj(16 * k);
            (Twist::get(&x).0, Flip::get(&x).0, SliceSorted::get(&x).0)
        }),
        cp: CornerPerm::get(c).0,
        ue: UEdges::get(c).0,
        de: DEdges::get(c).0,
    };
    let mut short = Short {
        t,
        cost,
        axis_moves: std::array::from_fn(|k| syms.mconj[16 * k]),
        path: Vec::new(),
        found: Vec::new(),
        want: keep.n,
        clock: Clock::new(lim.deadline),
        solved_ue: UEdges::get(&Cc::ID).0,
        solved_de: DEdges::get(&Cc::ID).0,
    };
    for bound in lower..=short_max {
        // With every optimal solution asked for, the first cost that has any is the
        // last one searched.
        if short.dfs(&root, bound, NONE) || (lim.all_optimal && !short.found.is_empty()) {
            break;
        }
    }
    *nodes += short.clock.nodes;
    for f in short.found.drain(..) {
        keep.offer(f);
    }
    if short.clock.timed_out {
        return Some(if keep.found.is_empty() {
            Err(Ended::TimedOut)
        } else {
            Ok(std::mem::take(&mut keep.found))
        });
    }
    // Optimal solutions: nothing shorter exists, so keep-searching has nothing to do.
    if keep.found.len() >= keep.n || (lim.all_optimal && !keep.found.is_empty()) {
        return Some(Ok(std::mem::take(&mut keep.found)));
    }
    None
}
