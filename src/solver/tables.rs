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
//! Level: solver (depends on `cube` only).

// Index loops over parallel arrays (slots, pieces, moves) read best as they are.
#![allow(clippy::needless_range_loop)]

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::coord::*;
use super::cubie::{move_cube, sym_table, Cc};

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

/// The small tables: moves on coordinates, symmetry classes and conjugation.
pub(crate) struct Small {
    pub twist_move: HugeTable<u16>,
    pub flip_move: Vec<u16>,
    pub slice_move: HugeTable<u16>,
    pub uedge_move: HugeTable<u16>,
    pub dedge_move: HugeTable<u16>,
    pub corner_move: HugeTable<u16>,
    /// Phase-2 moves (index into [`P2_MOVES`]) on [`UdEdges`].
    pub ud_move: HugeTable<u16>,
    /// `twist_conj[t·16 + s]` = twist of `S_s · T · S_s⁻¹`.
    pub twist_conj: HugeTable<u16>,
    pub ud_conj: HugeTable<u16>,
    /// `fs_sym[flipslice]` = class << 4 | sym.
    pub fs_sym: Vec<u32>,
    pub fs_rep: Vec<u32>,
    /// Bit `s` set when `S_s` maps the class representative to itself.
    pub fs_stab: Vec<u16>,
    pub c_sym: HugeTable<u32>,
    pub c_rep: Vec<u16>,
    pub c_stab: Vec<u16>,
    /// Exact phase-2 distance of (corner permutation, slice permutation): `cp·24 + sp`.
    pub cornslice: HugeTable<u8>,
    /// `fs_symmove[class·18 + m]` = class << 4 | sym of (representative · move m).
    pub fs_symmove: Vec<u32>,
    /// `symmult[a·16 + b]`: the symmetry `S_a · S_b` (both keeping the U–D axis).
    pub symmult: Vec<u8>,
    /// `mconj[s·18 + m]`: the move `S_s · M_m · S_s⁻¹`.
    pub mconj: Vec<u8>,
    /// `mconj_inv[s·18 + j]`: the move `m` with `mconj[s·18 + m] = j`.
    pub mconj_inv: Vec<u8>,
    /// `ud_from_ud[u·24 + d % 24]`: [`UdEdges`] of a phase-2 cube from its U- and
    /// D-edge coordinates (`u16::MAX` where `u` has a U edge outside the U/D layers).
    pub ud_from_ud: HugeTable<u16>,
    /// `slicepos_move[p·18 + m]`: the unordered slice positions (`SliceSorted / 24`,
    /// 0..495) after move m; small enough to stay in L1 during phase 1.
    pub slicepos_move: Vec<u16>,
    /// Exact distance to phase 2 of the flip × slice-position coordinate alone, per
    /// FlipSlice symmetry class (a lower bound on the phase-1 distance; 64,430 bytes).
    pub fs_dist: Vec<u8>,
    /// Exact distance to phase 2 of twist × slice positions alone, packed two 4-bit
    /// entries a byte at `(p·2187 + twist) / 2` (a lower bound on the phase-1 distance;
    /// 541 KB, so it answers from cache where the big table would go to memory).
    pub ts_dist: HugeTable<u8>,
    /// `fs_next[class·18 + m]`: [`Small::fs_symmove`] with the child's [`Small::fs_dist`]
    /// in bits 24.. (class << 4 | sym below), so the first check costs no extra read.
    pub fs_next: HugeTable<u32>,
    /// `corner_reach[t·40320 + cp]`: the fewest phase-2 moves that can solve the corner
    /// permutation after at most `t` further arbitrary face turns from `cp` (t ≤
    /// [`CORNER_REACH_T`]): a lower bound on the phase-2 length a phase-1 node with `t`
    /// moves to go can still lead to.
    pub corner_reach: HugeTable<u8>,
    /// The largest [`Small::corner_reach`] value of each `t` (a budget at or above it
    /// cannot be pruned, so the entry is not read).
    pub corner_reach_max: Vec<u8>,
}

/// Deepest phase-1 remainder [`Small::corner_reach`] covers.
pub(crate) const CORNER_REACH_T: usize = 6;

/// See [`Small::corner_reach`].
fn corner_reach_table(corner_move: &[u16]) -> Vec<u8> {
    let n = CornerPerm::COUNT;
    let mut dist = vec![u8::MAX; n];
    dist[0] = 0;
    let mut frontier = vec![0usize];
    let mut d = 0u8;
    while !frontier.is_empty() {
        let mut grown = Vec::new();
        for &x in &frontier {
            for &m in &P2_MOVES {
                let y = corner_move[x * N_MOVES + m as usize] as usize;
                if dist[y] == u8::MAX {
                    dist[y] = d + 1;
                    grown.push(y);
                }
            }
        }
        frontier = grown;
        d += 1;
    }
    let mut out = dist.clone();
    for t in 1..=CORNER_REACH_T {
        let prev = out[(t - 1) * n..t * n].to_vec();
        out.extend((0..n).map(|cp| {
            (0..N_MOVES)
                .map(|m| prev[corner_move[cp * N_MOVES + m] as usize])
                .fold(prev[cp], u8::min)
        }));
    }
    out
}

/// Distances of a small coordinate space from 0 by breadth-first search; `next(x, m)`
/// is the neighbour of `x` by move `m` (0..18).
fn bfs_small(count: usize, next: impl Fn(usize, usize) -> usize) -> Vec<u8> {
    let all: Vec<usize> = (0..N_MOVES).collect();
    bfs_distances(count, &all, next)
}

/// Distances from 0 by breadth-first search over `count` states, using the moves
/// `moves`; `next(x, m)` is the neighbour of `x` by move `m`.
pub(crate) fn bfs_distances(
    count: usize,
    moves: &[usize],
    next: impl Fn(usize, usize) -> usize,
) -> Vec<u8> {
    let mut dist = vec![u8::MAX; count];
    dist[0] = 0;
    let mut frontier = vec![0u32];
    let mut d = 0u8;
    while !frontier.is_empty() {
        let mut grown = Vec::new();
        for &x in &frontier {
            for &m in moves {
                let y = next(x as usize, m);
                if dist[y] == u8::MAX {
                    dist[y] = d + 1;
                    grown.push(y as u32);
                }
            }
        }
        frontier = grown;
        d += 1;
    }
    dist
}

/// Packs 4-bit values two a byte (low nibble first).
fn pack4(v: &[u8]) -> Vec<u8> {
    v.chunks(2)
        .map(|c| c[0].min(15) | c.get(1).map_or(0, |&h| h.min(15) << 4))
        .collect()
}

fn move_table(
    count: usize,
    moves: &[u8],
    set: impl Fn(usize, &mut Cc) + Sync,
    get: impl Fn(&Cc) -> usize + Sync,
) -> Vec<u16> {
    let cubes: Vec<Cc> = moves.iter().map(|&m| move_cube(m as usize)).collect();
    (0..count)
        .into_par_iter()
        .flat_map_iter(|v| {
            let mut c = Cc::ID;
            set(v, &mut c);
            cubes
                .iter()
                .map(|m| get(&c.mul(m)) as u16)
                .collect::<Vec<_>>()
        })
        .collect()
}

fn conj_table(
    count: usize,
    set: impl Fn(usize, &mut Cc) + Sync,
    get: impl Fn(&Cc) -> usize + Sync,
) -> Vec<u16> {
    (0..count)
        .into_par_iter()
        .flat_map_iter(|v| {
            let mut c = Cc::ID;
            set(v, &mut c);
            (0..16).map(|s| get(&c.conj(s)) as u16).collect::<Vec<_>>()
        })
        .collect()
}

/// Classes of a coordinate under the 16 U–D symmetries: (class<<4|sym per value,
/// representatives, stabiliser masks).
fn sym_classes(
    count: usize,
    set: impl Fn(usize, &mut Cc),
    get: impl Fn(&Cc) -> usize,
) -> (Vec<u32>, Vec<u32>, Vec<u16>) {
    let inv = sym_table().inv;
    let mut sym = vec![u32::MAX; count];
    let mut reps = Vec::new();
    let mut stabs = Vec::new();
    for v in 0..count {
        if sym[v] != u32::MAX {
            continue;
        }
        let class = reps.len() as u32;
        let mut c = Cc::ID;
        set(v, &mut c);
        let mut stab = 0u16;
        for s in 0..16 {
            let w = get(&c.conj(s));
            if w == v {
                stab |= 1 << s;
            }
            if sym[w] == u32::MAX {
                sym[w] = class << 4 | inv[s] as u32;
            }
        }
        reps.push(v as u32);
        stabs.push(stab);
    }
    (sym, reps, stabs)
}

impl Small {
    pub fn build() -> Small {
        let all: Vec<u8> = (0..N_MOVES as u8).collect();
        let twist_move = move_table(
            Twist::COUNT,
            &all,
            |v, c| Twist(v as u16).set(c),
            |c| Twist::get(c).0 as usize,
        );
        let flip_move = move_table(
            Flip::COUNT,
            &all,
            |v, c| Flip(v as u16).set(c),
            |c| Flip::get(c).0 as usize,
        );
        let slice_move = move_table(
            SliceSorted::COUNT,
            &all,
            |v, c| SliceSorted(v as u16).set(c),
            |c| SliceSorted::get(c).0 as usize,
        );
        let uedge_move = move_table(
            UEdges::COUNT,
            &all,
            |v, c| UEdges(v as u16).set(c),
            |c| UEdges::get(c).0 as usize,
        );
        let dedge_move = move_table(
            DEdges::COUNT,
            &all,
            |v, c| DEdges(v as u16).set(c),
            |c| DEdges::get(c).0 as usize,
        );
        let corner_move = move_table(
            CornerPerm::COUNT,
            &all,
            |v, c| CornerPerm(v as u16).set(c),
            |c| CornerPerm::get(c).0 as usize,
        );
        let ud_move = move_table(
            UdEdges::COUNT,
            &P2_MOVES,
            |v, c| UdEdges(v as u16).set(c),
            |c| UdEdges::get(c).0 as usize,
        );
        let twist_conj = conj_table(
            Twist::COUNT,
            |v, c| Twist(v as u16).set(c),
            |c| Twist::get(c).0 as usize,
        );
        let ud_conj = conj_table(
            UdEdges::COUNT,
            |v, c| UdEdges(v as u16).set(c),
            |c| UdEdges::get(c).0 as usize,
        );
        let ((fs_sym, fs_rep, fs_stab), (c_sym, c_rep32, c_stab)) = rayon::join(
            || {
                sym_classes(
                    FlipSlice::COUNT,
                    |v, c| FlipSlice(v as u32).set(c),
                    |c| FlipSlice::get(c).0 as usize,
                )
            },
            || {
                sym_classes(
                    CornerPerm::COUNT,
                    |v, c| CornerPerm(v as u16).set(c),
                    |c| CornerPerm::get(c).0 as usize,
                )
            },
        );
        let c_rep = c_rep32.iter().map(|&x| x as u16).collect();
        let cornslice = cornslice_table(&corner_move, &slice_move);
        let mut ud_from_ud = vec![u16::MAX; UEdges::COUNT * 24];
        for ud in 0..UdEdges::COUNT {
            let mut c = Cc::ID;
            UdEdges(ud as u16).set(&mut c);
            let (u, d) = (UEdges::get(&c).0 as usize, DEdges::get(&c).0 as usize);
            ud_from_ud[u * 24 + d % 24] = ud as u16;
        }
        let fs_symmove: Vec<u32> = (0..N_FLIPSLICE_CLASSES * N_MOVES)
            .map(|i| {
                let (c, m) = (i / N_MOVES, i % N_MOVES);
                let fs = fs_rep[c] as usize;
                let (slice, flip) = (fs / 2048, fs % 2048);
                let s2 = slice_move[slice * 24 * N_MOVES + m] as usize / 24;
                let f2 = flip_move[flip * N_MOVES + m] as usize;
                fs_sym[s2 * 2048 + f2]
            })
            .collect();
        let slicepos_move: Vec<u16> = (0..495 * N_MOVES)
            .map(|i| slice_move[(i / N_MOVES) * 24 * N_MOVES + i % N_MOVES] / 24)
            .collect();
        let (ts_dist, (fs_dist, corner_reach)) = rayon::join(
            || {
                pack4(&bfs_small(495 * Twist::COUNT, |x, m| {
                    let (p, t) = (x / Twist::COUNT, x % Twist::COUNT);
                    slicepos_move[p * N_MOVES + m] as usize * Twist::COUNT
                        + twist_move[t * N_MOVES + m] as usize
                }))
            },
            || {
                let fs_dist = bfs_small(N_FLIPSLICE_CLASSES, |c, m| {
                    (fs_symmove[c * N_MOVES + m] >> 4) as usize
                });
                (fs_dist, corner_reach_table(&corner_move))
            },
        );
        let fs_next = fs_symmove
            .iter()
            .map(|&y| y | (fs_dist[(y >> 4) as usize] as u32) << 24)
            .collect();
        let st = sym_table();
        let symmult = (0..256)
            .map(|i| {
                let p = st.cubes[i / 16].mul(&st.cubes[i % 16]);
                (0..16)
                    .find(|&k| st.cubes[k] == p)
                    .expect("the U-D symmetries form a group") as u8
            })
            .collect();
        let mconj: Vec<u8> = (0..16 * N_MOVES)
            .map(|i| st.mconj[i / N_MOVES][i % N_MOVES])
            .collect();
        let mut mconj_inv = vec![0u8; 16 * N_MOVES];
        for (i, &j) in mconj.iter().enumerate() {
            mconj_inv[i / N_MOVES * N_MOVES + j as usize] = (i % N_MOVES) as u8;
        }
        let corner_reach_max = corner_reach
            .chunks(CornerPerm::COUNT)
            .map(|c| c.iter().copied().max().unwrap_or(0))
            .collect();
        Small {
            slicepos_move,
            fs_dist,
            ts_dist: HugeTable::from_vec(ts_dist),
            fs_next: HugeTable::from_vec(fs_next),
            corner_reach_max,
            corner_reach: HugeTable::from_vec(corner_reach),
            fs_symmove,
            symmult,
            mconj,
            mconj_inv,
            twist_move: HugeTable::from_vec(twist_move),
            flip_move,
            slice_move: HugeTable::from_vec(slice_move),
            uedge_move: HugeTable::from_vec(uedge_move),
            dedge_move: HugeTable::from_vec(dedge_move),
            corner_move: HugeTable::from_vec(corner_move),
            ud_move: HugeTable::from_vec(ud_move),
            twist_conj: HugeTable::from_vec(twist_conj),
            ud_conj: HugeTable::from_vec(ud_conj),
            fs_sym,
            fs_rep,
            fs_stab,
            c_sym: HugeTable::from_vec(c_sym),
            c_rep,
            c_stab,
            cornslice: HugeTable::from_vec(cornslice),
            ud_from_ud: HugeTable::from_vec(ud_from_ud),
        }
    }

    /// Bytes held, counting each huge-page table at its whole 2 MiB-rounded allocation.
    pub fn bytes(&self) -> usize {
        self.twist_move.bytes()
            + self.slice_move.bytes()
            + self.uedge_move.bytes()
            + self.dedge_move.bytes()
            + self.corner_move.bytes()
            + self.ud_move.bytes()
            + self.twist_conj.bytes()
            + self.ud_conj.bytes()
            + self.c_sym.bytes()
            + self.cornslice.bytes()
            + self.ud_from_ud.bytes()
            + self.ts_dist.bytes()
            + self.fs_next.bytes()
            + self.corner_reach.bytes()
            + 2 * (self.flip_move.len()
                + self.c_rep.len()
                + self.c_stab.len()
                + self.fs_stab.len()
                + self.slicepos_move.len())
            + 4 * (self.fs_sym.len() + self.fs_rep.len() + self.fs_symmove.len())
            + self.symmult.len()
            + self.mconj.len()
            + self.mconj_inv.len()
            + self.fs_dist.len()
            + self.corner_reach_max.len()
    }

    /// Index of a phase-1 state in the phase-1 pruning table.
    #[inline(always)]
    pub fn p1_index(&self, twist: u16, flip: u16, slice: u16) -> usize {
        let fs = (slice as usize / 24) * 2048 + flip as usize;
        let y = self.fs_sym[fs];
        (y >> 4) as usize * Twist::COUNT
            + self.twist_conj[twist as usize * 16 + (y & 15) as usize] as usize
    }

    /// Index of a corner state (permutation, twist) in a corner-set table.
    #[inline(always)]
    pub fn cset_index(&self, corner: u16, twist: u16) -> usize {
        let y = self.c_sym[corner as usize];
        (y >> 4) as usize * Twist::COUNT
            + self.twist_conj[twist as usize * 16 + (y & 15) as usize] as usize
    }

    /// Index of a phase-2 state in the phase-2 pruning table.
    #[inline(always)]
    pub fn p2_index(&self, corner: u16, ud: u16) -> usize {
        let y = self.c_sym[corner as usize];
        (y >> 4) as usize * UdEdges::COUNT
            + self.ud_conj[ud as usize * 16 + (y & 15) as usize] as usize
    }
}

/// Exact phase-2 distances over (corner permutation, slice permutation), by BFS.
fn cornslice_table(corner_move: &[u16], slice_move: &[u16]) -> Vec<u8> {
    let n = CornerPerm::COUNT * 24;
    let mut dist = vec![u8::MAX; n];
    dist[0] = 0;
    let mut frontier = vec![0u32];
    let mut d = 0u8;
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for &x in &frontier {
            let (cp, sp) = (x as usize / 24, x as usize % 24);
            for &m in &P2_MOVES {
                let cp2 = corner_move[cp * N_MOVES + m as usize] as usize;
                let sp2 = slice_move[sp * N_MOVES + m as usize] as usize;
                let y = cp2 * 24 + sp2;
                if dist[y] == u8::MAX {
                    dist[y] = d + 1;
                    next.push(y as u32);
                }
            }
        }
        frontier = next;
        d += 1;
    }
    dist
}

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

const CORNER_SET_NAMES: [&str; CORNER_SET_MAX_BUDGET] = [
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

/// A zeroed table of `words` u64, backed by transparent huge pages where the system
/// offers them (the pruning tables are read at random: 4 KiB pages would make nearly
/// every probe a TLB miss).
pub(crate) fn huge_zeroed(words: usize) -> Vec<u64> {
    let v = vec![0u64; words];
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let p = v.as_ptr() as usize;
        let start = (p + HUGE - 1) & !(HUGE - 1);
        let end = (p + words * 8) & !(HUGE - 1);
        if end > start {
            // SAFETY: the range lies inside the allocation of `v`; MADV_HUGEPAGE only
            // changes how the kernel backs it, never its contents.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    v
}

/// A read-only table in memory aligned to 2 MiB and advised onto transparent huge pages:
/// the small tables are read at random too, and together they span more 4 KiB pages than
/// the TLB holds. Dereferences to a slice.
pub(crate) struct HugeTable<T: Copy> {
    ptr: std::ptr::NonNull<T>,
    len: usize,
    layout: std::alloc::Layout,
}

// SAFETY: the table owns its memory and is never written after construction.
unsafe impl<T: Copy + Send> Send for HugeTable<T> {}
// SAFETY: as above; shared access is read-only.
unsafe impl<T: Copy + Sync> Sync for HugeTable<T> {}

impl<T: Copy> HugeTable<T> {
    pub fn from_vec(v: Vec<T>) -> HugeTable<T> {
        const HUGE: usize = 2 << 20;
        let bytes = (v.len() * std::mem::size_of::<T>())
            .max(1)
            .next_multiple_of(HUGE);
        let layout =
            std::alloc::Layout::from_size_align(bytes, HUGE.max(std::mem::align_of::<T>()))
                .expect("a table of at most a few MiB has a valid layout");
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { std::alloc::alloc(layout) };
        let Some(ptr) = std::ptr::NonNull::new(raw as *mut T) else {
            std::alloc::handle_alloc_error(layout)
        };
        #[cfg(target_os = "linux")]
        // SAFETY: the range is exactly the allocation just made; MADV_HUGEPAGE only changes
        // how the kernel backs it.
        unsafe {
            libc::madvise(raw as *mut libc::c_void, bytes, libc::MADV_HUGEPAGE);
        }
        // SAFETY: the allocation holds at least `v.len()` values of T and does not overlap `v`.
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), ptr.as_ptr(), v.len()) };
        HugeTable {
            ptr,
            len: v.len(),
            layout,
        }
    }
}

impl<T: Copy> HugeTable<T> {
    /// Bytes allocated (a multiple of 2 MiB).
    pub fn bytes(&self) -> usize {
        self.layout.size()
    }
}

impl<T: Copy> std::ops::Deref for HugeTable<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` values were initialised in `from_vec` and live as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> Drop for HugeTable<T> {
    fn drop(&mut self) {
        // SAFETY: allocated in `from_vec` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr() as *mut u8, self.layout) }
    }
}

const _: () = assert!(std::mem::align_of::<AtomicU64>() == std::mem::align_of::<u64>());

struct Atomic4<'a> {
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

/// Builds a pruning table by breadth-first search over symmetry classes.
pub(crate) fn build_prun(small: &Small, kind: PrunKind, progress: Progress) -> Nibbles {
    let (raw, stab, conj, nmoves) = match kind {
        PrunKind::Phase1 => (Twist::COUNT, &small.fs_stab, &small.twist_conj, N_MOVES),
        PrunKind::Phase2 => (
            UdEdges::COUNT,
            &small.c_stab,
            &small.ud_conj,
            P2_MOVES.len(),
        ),
        PrunKind::CornerSet(_) => (Twist::COUNT, &small.c_stab, &small.twist_conj, N_MOVES),
    };
    let len = kind.entries();
    let mut words = huge_zeroed(len.div_ceil(16));
    words.par_iter_mut().for_each(|w| *w = u64::MAX);
    let table = Atomic4::new(&mut words);
    // Neighbour of entry (class, r) by move index m.
    let neighbour = |class: usize, r: usize, m: usize| -> (usize, usize) {
        match kind {
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
    };
    // Sets an entry and its symmetric twins.
    let set_all = |class: usize, r: usize, v: u8| {
        table.set(class * raw + r, v);
        let mut mask = stab[class] & !1;
        while mask != 0 {
            let s = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let r2 = conj[r * 16 + s] as usize;
            if table.get(class * raw + r2) == UNSEEN {
                table.set(class * raw + r2, v);
            }
        }
    };
    match kind {
        PrunKind::Phase1 | PrunKind::Phase2 => set_all(0, 0, 0),
        // The sources: twist 0 with every corner permutation class phase 2 solves within
        // the budget (row 0 of the corner-reach table is the phase-2 corner distance).
        PrunKind::CornerSet(b) => {
            for class in 0..N_CORNER_CLASSES {
                if small.corner_reach[small.c_rep[class] as usize] <= b {
                    set_all(class, 0, 0);
                }
            }
        }
    }
    let mut seen: u64 = (0..len).filter(|&i| table.get(i) == 0).count() as u64;
    let mut counts = vec![seen];
    let total = len as u64;
    progress(kind.label(), seen, total);
    let mut depth = 0u8;
    while depth + 1 < UNSEEN && seen < total {
        let frontier = counts[depth as usize];
        let unseen = total - seen;
        let backward = frontier > unseen / 4;
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
                            let (c2, r2) = neighbour(class, r, m);
                            if table.get(c2 * raw + r2) == depth {
                                set_all(class, r, depth + 1);
                                break;
                            }
                        }
                    } else {
                        if v != depth {
                            continue;
                        }
                        for m in 0..nmoves {
                            let (c2, r2) = neighbour(class, r, m);
                            if table.get(c2 * raw + r2) == UNSEEN {
                                set_all(c2, r2, depth + 1);
                            }
                        }
                    }
                }
            });
        depth += 1;
        let count = (0..table.words.len())
            .into_par_iter()
            .map(|w| {
                let word = table.words[w].load(Ordering::Relaxed);
                (0..16)
                    .filter(|&k| w * 16 + k < len && ((word >> (k * 4)) & 15) as u8 == depth)
                    .count() as u64
            })
            .sum::<u64>();
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn random_cc(rng: &mut rand_chacha::ChaCha8Rng) -> Cc {
        let f = crate::cube::random_state(crate::cube::Size::Three, rng);
        Cc::from_cubie(&crate::cube::CubieCube::from_facelets(&f).expect("a cube"))
    }

    /// A random cube in phase 2 (<U, D, R2, L2, F2, B2>).
    fn random_phase2(rng: &mut rand_chacha::ChaCha8Rng) -> Cc {
        use rand::Rng;
        (0..30).fold(Cc::ID, |c, _| {
            c.mul(&move_cube(
                P2_MOVES[rng.gen_range(0..P2_MOVES.len())] as usize,
            ))
        })
    }

    #[test]
    fn move_tables_agree_with_the_cubie_model() {
        let s = Small::build();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for _ in 0..300 {
            let c = random_cc(&mut rng);
            for m in 0..N_MOVES {
                let d = c.mul(&move_cube(m));
                let step = |t: &[u16], v: u16| t[v as usize * N_MOVES + m];
                assert_eq!(step(&s.twist_move, Twist::get(&c).0), Twist::get(&d).0);
                assert_eq!(step(&s.flip_move, Flip::get(&c).0), Flip::get(&d).0);
                assert_eq!(
                    step(&s.slice_move, SliceSorted::get(&c).0),
                    SliceSorted::get(&d).0
                );
                assert_eq!(step(&s.uedge_move, UEdges::get(&c).0), UEdges::get(&d).0);
                assert_eq!(step(&s.dedge_move, DEdges::get(&c).0), DEdges::get(&d).0);
                assert_eq!(
                    step(&s.corner_move, CornerPerm::get(&c).0),
                    CornerPerm::get(&d).0
                );
            }
            let p = random_phase2(&mut rng);
            for (i, &m) in P2_MOVES.iter().enumerate() {
                let d = p.mul(&move_cube(m as usize));
                assert_eq!(
                    s.ud_move[UdEdges::get(&p).0 as usize * P2_MOVES.len() + i],
                    UdEdges::get(&d).0
                );
            }
        }
        // Every coordinate value and every move: the table entry is the coordinate of
        // (a cube with that value) · move.
        for (count, table, set, get) in [
            (
                Twist::COUNT,
                &s.twist_move[..],
                (|v, c| Twist(v).set(c)) as fn(u16, &mut Cc),
                (|c| Twist::get(c).0) as fn(&Cc) -> u16,
            ),
            (
                Flip::COUNT,
                &s.flip_move[..],
                |v, c| Flip(v).set(c),
                |c| Flip::get(c).0,
            ),
            (
                SliceSorted::COUNT,
                &s.slice_move[..],
                |v, c| SliceSorted(v).set(c),
                |c| SliceSorted::get(c).0,
            ),
            (
                CornerPerm::COUNT,
                &s.corner_move[..],
                |v, c| CornerPerm(v).set(c),
                |c| CornerPerm::get(c).0,
            ),
        ] {
            for v in 0..count {
                let mut c = Cc::ID;
                set(v as u16, &mut c);
                let cf = c;
                for m in 0..N_MOVES {
                    assert_eq!(table[v * N_MOVES + m], get(&cf.mul(&move_cube(m))));
                }
            }
        }
    }

    #[test]
    fn symmetric_positions_share_pruning_indices() {
        let s = Small::build();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
        for _ in 0..300 {
            let c = random_cc(&mut rng);
            let p = random_phase2(&mut rng);
            let i1 = s.p1_index(Twist::get(&c).0, Flip::get(&c).0, SliceSorted::get(&c).0);
            let i2 = s.p2_index(CornerPerm::get(&p).0, UdEdges::get(&p).0);
            let (c1, c2) = (i1 / Twist::COUNT, i2 / UdEdges::COUNT);
            for sym in 0..16 {
                // The same class; the same entry unless the class representative is
                // itself symmetric (then the twin entries are filled alike).
                let x = c.conj(sym);
                let j1 = s.p1_index(Twist::get(&x).0, Flip::get(&x).0, SliceSorted::get(&x).0);
                assert_eq!(j1 / Twist::COUNT, c1);
                assert!(j1 == i1 || s.fs_stab[c1] != 1);
                let y = p.conj(sym);
                let j2 = s.p2_index(CornerPerm::get(&y).0, UdEdges::get(&y).0);
                assert_eq!(j2 / UdEdges::COUNT, c2);
                assert!(j2 == i2 || s.c_stab[c2] != 1);
            }
        }
        assert_eq!(s.fs_rep.len(), N_FLIPSLICE_CLASSES);
        assert_eq!(s.c_rep.len(), N_CORNER_CLASSES);
        // Phase 1 checks a class row in the row's own move frame and maps the result
        // back: that needs the inverse conjugation, and half turns staying half turns
        // (a move's cost is read in either frame).
        for sym in 0..16 {
            for m in 0..N_MOVES {
                let j = s.mconj[sym * N_MOVES + m] as usize;
                assert_eq!(s.mconj_inv[sym * N_MOVES + j] as usize, m);
                assert_eq!(j % 3 == 1, m % 3 == 1, "sym {sym} move {m}");
            }
        }
    }

    /// A distance table is the exact BFS distance when 0 marks only the origin, no move
    /// changes it by more than one, and every other entry has a neighbour one closer.
    fn assert_exact_distance(
        dist: impl Fn(usize) -> u8,
        count: usize,
        next: impl Fn(usize, usize) -> usize,
    ) {
        for x in 0..count {
            let d = dist(x);
            assert_eq!(d == 0, x == 0, "entry {x}");
            let mut closer = false;
            for m in 0..N_MOVES {
                let e = dist(next(x, m));
                assert!(e.abs_diff(d) <= 1, "entry {x} move {m}: {d} then {e}");
                closer |= e + 1 == d;
            }
            assert!(d == 0 || closer, "entry {x} ({d}) has no closer neighbour");
        }
    }

    #[test]
    fn partial_phase1_bounds_are_exact_distances() {
        let s = Small::build();
        assert_exact_distance(
            |c| s.fs_dist[c],
            N_FLIPSLICE_CLASSES,
            |c, m| (s.fs_symmove[c * N_MOVES + m] >> 4) as usize,
        );
        let ts = |i: usize| s.ts_dist[i >> 1] >> ((i & 1) * 4) & 15;
        assert_exact_distance(ts, 495 * Twist::COUNT, |x, m| {
            let (p, t) = (x / Twist::COUNT, x % Twist::COUNT);
            s.slicepos_move[p * N_MOVES + m] as usize * Twist::COUNT
                + s.twist_move[t * N_MOVES + m] as usize
        });
        // The class row with the distance folded in agrees with its two sources.
        for (i, &y) in s.fs_next.iter().enumerate() {
            assert_eq!(y & 0xff_ffff, s.fs_symmove[i]);
            assert_eq!((y >> 24) as u8, s.fs_dist[(s.fs_symmove[i] >> 4) as usize]);
        }
    }

    #[test]
    fn corner_set_tables_bound_the_phase1_moves_left() {
        // A random cube in phase 2 whose corners phase 2 solves in p moves, walked back k
        // random turns: from there, k turns reach it, so every corner-set table of a budget
        // b ≥ p must say at most k (the search prunes a node only when the table exceeds
        // the phase-1 moves it has left). Symmetric images share the entry.
        let s = Small::build();
        let tables: Vec<Nibbles> = (4..=6u8)
            .map(|b| build_prun(&s, PrunKind::CornerSet(b), &|_: &str, _, _| {}))
            .collect();
        let index = |c: &Cc| s.cset_index(CornerPerm::get(c).0, Twist::get(c).0);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut tight = 0;
        for _ in 0..3000 {
            use rand::Rng;
            let g = random_phase2(&mut rng);
            let p = s.corner_reach[CornerPerm::get(&g).0 as usize];
            let k = rng.gen_range(0..=8);
            let x = (0..k).fold(g, |c, _| c.mul(&move_cube(rng.gen_range(0..N_MOVES))));
            for (i, t) in tables.iter().enumerate() {
                let b = i as u8 + 4;
                let v = t.get(index(&x));
                if p <= b {
                    assert!(v as usize <= k, "budget {b}: {v} > {k} turns");
                    tight += (v as usize == k) as u32;
                }
                for sym in [1, 5, 9] {
                    assert_eq!(t.get(index(&x.conj(sym))), v, "symmetry {sym}");
                }
            }
        }
        // Not vacuous: often the bound is exactly the walk's length.
        assert!(tight > 100, "{tight}");
    }

    #[test]
    fn corner_reach_bounds_the_phase2_corner_distance() {
        let s = Small::build();
        let n = CornerPerm::COUNT;
        let r = |t: usize, cp: usize| s.corner_reach[t * n + cp];
        for cp in 0..n {
            // t = 0 is the corner distance alone: never above corner × slice.
            let cs = (0..24).map(|sp| s.cornslice[cp * 24 + sp]).min();
            assert_eq!(Some(r(0, cp)), cs, "corner permutation {cp}");
            for t in 1..=CORNER_REACH_T {
                assert!(r(t, cp) <= r(t - 1, cp));
                for m in 0..N_MOVES {
                    assert!(r(t, cp) <= r(t - 1, s.corner_move[cp * N_MOVES + m] as usize));
                }
            }
        }
        // A random phase-1 tail of t turns followed by any phase-2 solution of the
        // corners: the bound at the start never exceeds the true phase-2 corner length.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for _ in 0..2000 {
            use rand::Rng;
            let cp0 = rng.gen_range(0..n);
            let t = rng.gen_range(0..=CORNER_REACH_T);
            let cp1 = (0..t).fold(cp0, |c, _| {
                s.corner_move[c * N_MOVES + rng.gen_range(0..N_MOVES)] as usize
            });
            assert!(r(t, cp0) <= r(0, cp1));
        }
    }

    #[test]
    fn class_counts_are_the_known_ones() {
        let (_, reps, _) = sym_classes(
            CornerPerm::COUNT,
            |v, c| CornerPerm(v as u16).set(c),
            |c| CornerPerm::get(c).0 as usize,
        );
        assert_eq!(reps.len(), N_CORNER_CLASSES);
    }
}
