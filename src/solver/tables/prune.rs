//! The symmetry-reduced pruning tables (phase 1, phase 2, and the corner-set tables of
//! small phase-2 budgets) and their parallel breadth-first build over symmetry classes.
//!
//! Level: part of `solver::tables`; depends on the small tables and the solver's
//! coordinates. Must not depend on the searches or the cache.

// Index loops over parallel arrays (slots, pieces, moves) read best as they are.
#![allow(clippy::needless_range_loop)]

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::{
    huge_zeroed, Nibbles, Progress, Small, N_CORNER_CLASSES, N_FLIPSLICE_CLASSES, N_MOVES,
    P2_MOVES, UNSEEN,
};
use crate::solver::coord::*;

/// Largest phase-2 budget a [`PrunKind::CornerSet`] table is kept for. At 8 the set
/// holds 39 % of the corner permutations and the table cost more time than it saved
/// (measured: the ≤ 19 median 5–10 % slower); at 7 and below it pays.
pub(crate) const CORNER_SET_MAX_BUDGET: usize = 7;

/// Which of the symmetry-reduced pruning tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PrunKind {
    Phase1,
    Phase2,
    /// For a phase-2 budget `b` (1..=[`CORNER_SET_MAX_BUDGET`]): the distance, over all
    /// 18 turns in the whole corner group (corner-permutation class × twist), to the set
    /// "twist 0 and a corner permutation that phase 2 solves in at most `b` moves". A
    /// phase-1 node whose phase 2 may take at most `b` moves cannot finish phase 1 in
    /// fewer: it joins the twist that phase 1 must end with and the corners that phase 2
    /// must then solve, so it prunes where neither part alone does.
    CornerSet(u8),
}

pub(super) const CORNER_SET_NAMES: [&str; CORNER_SET_MAX_BUDGET] = [
    "corner-set-twist-b1",
    "corner-set-twist-b2",
    "corner-set-twist-b3",
    "corner-set-twist-b4",
    "corner-set-twist-b5",
    "corner-set-twist-b6",
    "corner-set-twist-b7",
];

impl PrunKind {
    pub fn name(self) -> &'static str {
        match self {
            PrunKind::Phase1 => "phase1-flipslice-twist",
            PrunKind::Phase2 => "phase2-corner-udedges",
            PrunKind::CornerSet(b) => CORNER_SET_NAMES[b as usize - 1],
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            PrunKind::Phase1 => "phase-1 pruning table",
            PrunKind::Phase2 => "phase-2 pruning table",
            PrunKind::CornerSet(_) => "corner-set tables",
        }
    }
    pub fn entries(self) -> usize {
        match self {
            PrunKind::Phase1 => N_FLIPSLICE_CLASSES * Twist::COUNT,
            PrunKind::Phase2 => N_CORNER_CLASSES * UdEdges::COUNT,
            PrunKind::CornerSet(_) => N_CORNER_CLASSES * Twist::COUNT,
        }
    }
}

const _: () = assert!(std::mem::align_of::<AtomicU64>() == std::mem::align_of::<u64>());

pub(super) struct Atomic4<'a> {
    words: &'a [AtomicU64],
}

impl Atomic4<'_> {
    fn new(words: &mut [u64]) -> Atomic4<'_> {
        // SAFETY: AtomicU64 has the same size and (checked above) alignment as u64, and the
        // exclusive borrow guarantees no other access while the atomic view lives.
        let words = unsafe { &*(words as *mut [u64] as *const [AtomicU64]) };
        Atomic4 { words }
    }

    #[inline(always)]
    fn get(&self, i: usize) -> u8 {
        ((self.words[i >> 4].load(Ordering::Relaxed) >> ((i & 15) * 4)) & 15) as u8
    }
    /// Lowers an unseen (15) entry to `v`.
    #[inline(always)]
    fn set(&self, i: usize, v: u8) {
        let mask = !(((UNSEEN ^ v) as u64) << ((i & 15) * 4));
        self.words[i >> 4].fetch_and(mask, Ordering::Relaxed);
    }
}

/// Builds a pruning table by breadth-first search over symmetry classes: forward from the
/// current depth while the frontier is small, backward (each unseen entry looks for a
/// neighbour at the current depth) once it holds more than a quarter of what is unseen.
pub(crate) fn build_prun(small: &Small, kind: PrunKind, progress: Progress) -> Nibbles {
    let len = kind.entries();
    let mut words = huge_zeroed(len.div_ceil(16));
    words.par_iter_mut().for_each(|w| *w = u64::MAX);
    let bfs = Bfs::new(small, kind, &mut words);
    bfs.seed();
    let mut seen: u64 = (0..len).filter(|&i| bfs.table.get(i) == 0).count() as u64;
    let mut counts = vec![seen];
    let total = len as u64;
    progress(kind.label(), seen, total);
    let mut depth = 0u8;
    while depth + 1 < UNSEEN && seen < total {
        let frontier = counts[depth as usize];
        let unseen = total - seen;
        bfs.expand(depth, frontier > unseen / 4);
        depth += 1;
        let count = bfs.count(depth);
        if count == 0 {
            break;
        }
        counts.push(count);
        seen += count;
        progress(kind.label(), seen, total);
    }
    progress(kind.label(), total, total);
    Nibbles { words, len }
}

/// One pruning table under construction: entries (class, r) at `class · raw + r`, where
/// `r` is the raw coordinate conjugated into the class representative's frame.
struct Bfs<'a> {
    small: &'a Small,
    kind: PrunKind,
    table: Atomic4<'a>,
    len: usize,
    /// Raw coordinate count per class.
    raw: usize,
    /// Stabiliser of each class (bit s: symmetry s fixes the representative).
    stab: &'a [u16],
    /// The raw coordinate conjugated by each symmetry: `conj[r · 16 + s]`.
    conj: &'a [u16],
    nmoves: usize,
}

impl<'a> Bfs<'a> {
    fn new(small: &'a Small, kind: PrunKind, words: &'a mut [u64]) -> Bfs<'a> {
        let (raw, stab, conj, nmoves): (usize, &[u16], &[u16], usize) = match kind {
            PrunKind::Phase1 => (Twist::COUNT, &small.fs_stab, &small.twist_conj, N_MOVES),
            PrunKind::Phase2 => (
                UdEdges::COUNT,
                &small.c_stab,
                &small.ud_conj,
                P2_MOVES.len(),
            ),
            PrunKind::CornerSet(_) => (Twist::COUNT, &small.c_stab, &small.twist_conj, N_MOVES),
        };
        Bfs {
            small,
            kind,
            len: kind.entries(),
            table: Atomic4::new(words),
            raw,
            stab,
            conj,
            nmoves,
        }
    }

    /// Neighbour of entry (class, r) by move index m.
    #[inline(always)]
    fn neighbour(&self, class: usize, r: usize, m: usize) -> (usize, usize) {
        let small = self.small;
        match self.kind {
            PrunKind::Phase1 => {
                let fs = small.fs_rep[class] as usize;
                let (slice, flip) = (fs / 2048, fs % 2048);
                let s2 = small.slice_move[slice * 24 * N_MOVES + m] as usize / 24;
                let f2 = small.flip_move[flip * N_MOVES + m] as usize;
                let y = small.fs_sym[s2 * 2048 + f2];
                let t2 = small.twist_move[r * N_MOVES + m] as usize;
                (
                    (y >> 4) as usize,
                    small.twist_conj[t2 * 16 + (y & 15) as usize] as usize,
                )
            }
            PrunKind::Phase2 => {
                let cp = small.c_rep[class] as usize;
                let cp2 = small.corner_move[cp * N_MOVES + P2_MOVES[m] as usize] as usize;
                let y = small.c_sym[cp2];
                let u2 = small.ud_move[r * P2_MOVES.len() + m] as usize;
                (
                    (y >> 4) as usize,
                    small.ud_conj[u2 * 16 + (y & 15) as usize] as usize,
                )
            }
            PrunKind::CornerSet(_) => {
                let cp = small.c_rep[class] as usize;
                let cp2 = small.corner_move[cp * N_MOVES + m] as usize;
                let y = small.c_sym[cp2];
                let t2 = small.twist_move[r * N_MOVES + m] as usize;
                (
                    (y >> 4) as usize,
                    small.twist_conj[t2 * 16 + (y & 15) as usize] as usize,
                )
            }
        }
    }

    /// Sets an entry and its symmetric twins.
    #[inline(always)]
    fn set_all(&self, class: usize, r: usize, v: u8) {
        let (table, raw) = (&self.table, self.raw);
        table.set(class * raw + r, v);
        let mut mask = self.stab[class] & !1;
        while mask != 0 {
            let s = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let r2 = self.conj[r * 16 + s] as usize;
            if table.get(class * raw + r2) == UNSEEN {
                table.set(class * raw + r2, v);
            }
        }
    }

    /// The entries at distance 0.
    fn seed(&self) {
        match self.kind {
            PrunKind::Phase1 | PrunKind::Phase2 => self.set_all(0, 0, 0),
            // The sources: twist 0 with every corner permutation class phase 2 solves within
            // the budget (row 0 of the corner-reach table is the phase-2 corner distance).
            PrunKind::CornerSet(b) => {
                for class in 0..N_CORNER_CLASSES {
                    if self.small.corner_reach[self.small.c_rep[class] as usize] <= b {
                        self.set_all(class, 0, 0);
                    }
                }
            }
        }
    }

    /// Marks the entries at `depth + 1`, forward or backward.
    fn expand(&self, depth: u8, backward: bool) {
        let (table, len, raw, nmoves) = (&self.table, self.len, self.raw, self.nmoves);
        (0..table.words.len())
            .into_par_iter()
            .with_min_len(256)
            .for_each(|w| {
                let word = table.words[w].load(Ordering::Relaxed);
                for k in 0..16 {
                    let i = w * 16 + k;
                    if i >= len {
                        break;
                    }
                    let v = ((word >> (k * 4)) & 15) as u8;
                    let (class, r) = (i / raw, i % raw);
                    if backward {
                        if v != UNSEEN {
                            continue;
                        }
                        for m in 0..nmoves {
                            let (c2, r2) = self.neighbour(class, r, m);
                            if table.get(c2 * raw + r2) == depth {
                                self.set_all(class, r, depth + 1);
                                break;
                            }
                        }
                    } else {
                        if v != depth {
                            continue;
                        }
                        for m in 0..nmoves {
                            let (c2, r2) = self.neighbour(class, r, m);
                            if table.get(c2 * raw + r2) == UNSEEN {
                                self.set_all(c2, r2, depth + 1);
                            }
                        }
                    }
                }
            });
    }

    /// How many entries are at `depth`.
    fn count(&self, depth: u8) -> u64 {
        let (table, len) = (&self.table, self.len);
        (0..table.words.len())
            .into_par_iter()
            .map(|w| {
                let word = table.words[w].load(Ordering::Relaxed);
                (0..16)
                    .filter(|&k| w * 16 + k < len && ((word >> (k * 4)) & 15) as u8 == depth)
                    .count() as u64
            })
            .sum::<u64>()
    }
}
