//! The 3x3x3 tables: flat move tables, symmetry-class tables, the two large packed
//! pruning tables (FlipSlice-class × Twist for phase 1, CornerPerm-class × UdEdges for
//! phase 2, 4 bits per entry, exact distances up to 14, 15 = "15 or more"), and the seven
//! corner-set tables (CornerPerm-class × Twist, one per small phase-2 budget; see
//! [`PrunKind::CornerSet`]).
//!
//! The small tables are computed at start-up (well under a second); the pruning tables are
//! built with rayon by breadth-first search (forward while the frontier is small, backward
//! once most entries are reached) and cached on disk (see [`super::cache`]).
//!
//! Level: part of `solver`; depends on the solver's coordinates and cubie arithmetic
//! (and through them on `cube`). Must not depend on the searches that read these tables,
//! nor on anything above `solver`.
//!
//! Files: `small` (move, symmetry and conjugation tables), `prune` (the pruning tables
//! and their breadth-first build), `huge` (page-aligned storage for the big tables); this
//! file holds the shared constants and the packed 4-bit table.

// Index loops over parallel arrays (slots, pieces, moves) read best as they are.
#![allow(clippy::needless_range_loop)]

mod huge;
mod prune;
mod small;
#[cfg(test)]
mod tests;

pub(crate) use huge::{huge_zeroed, HugeTable};
pub(crate) use prune::{build_prun, PrunKind, CORNER_SET_MAX_BUDGET};
pub(crate) use small::{bfs_distances, Small, CORNER_REACH_T};

pub(crate) const N_MOVES: usize = 18;
/// The ten phase-2 moves (U, D turns and half turns of the others), as face-turn indices.
pub(crate) const P2_MOVES: [u8; 10] = [0, 1, 2, 4, 7, 9, 10, 11, 13, 16];
pub(crate) const N_FLIPSLICE_CLASSES: usize = 64430;
pub(crate) const N_CORNER_CLASSES: usize = 2768;
/// The value of a pruning entry not (yet) reached, and the cap of stored distances.
pub(crate) const UNSEEN: u8 = 15;

/// Progress callback: (label, done, total).
pub(crate) type Progress<'a> = &'a (dyn Fn(&str, u64, u64) + Sync);

/// A packed table of 4-bit entries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Nibbles {
    pub words: Vec<u64>,
    pub len: usize,
}

impl Nibbles {
    #[inline(always)]
    pub fn get(&self, i: usize) -> u8 {
        // SAFETY-free fast path: indices are produced by the coordinate tables and are
        // always < len; a bad index panics (bounds check) rather than reading garbage.
        ((self.words[i >> 4] >> ((i & 15) * 4)) & 15) as u8
    }

    pub fn bytes(&self) -> usize {
        self.words.len() * 8
    }
}
