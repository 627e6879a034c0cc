//! The small 3x3x3 tables, computed at start-up: moves on every coordinate, the
//! FlipSlice and corner-permutation symmetry classes, conjugation by the 16 symmetries,
//! the corner-reach bound and the exact phase-2 corner-and-slice distances.
//!
//! Level: part of `solver::tables`; depends on the solver's coordinates and cubie
//! arithmetic. Must not depend on the pruning tables or the searches.

// Index loops over parallel arrays (slots, pieces, moves) read best as they are.
#![allow(clippy::needless_range_loop)]

use rayon::prelude::*;

use super::{HugeTable, N_FLIPSLICE_CLASSES, N_MOVES, P2_MOVES};
use crate::solver::coord::*;
use crate::solver::cubie::{move_cube, sym_table, Cc};

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
pub(super) fn corner_reach_table(corner_move: &[u16]) -> Vec<u8> {
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
pub(super) fn bfs_small(count: usize, next: impl Fn(usize, usize) -> usize) -> Vec<u8> {
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
pub(super) fn pack4(v: &[u8]) -> Vec<u8> {
    v.chunks(2)
        .map(|c| c[0].min(15) | c.get(1).map_or(0, |&h| h.min(15) << 4))
        .collect()
}

pub(super) fn move_table(
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

pub(super) fn conj_table(
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

/// Symmetry classes of a coordinate: class << 4 | symmetry per value, the class
/// representatives, and each representative's stabiliser (bit s: symmetry s fixes it).
type SymClasses = (Vec<u32>, Vec<u32>, Vec<u16>);

/// Classes of a coordinate under the 16 U–D symmetries: (class<<4|sym per value,
/// representatives, stabiliser masks).
pub(super) fn sym_classes(
    count: usize,
    set: impl Fn(usize, &mut Cc),
    get: impl Fn(&Cc) -> usize,
) -> SymClasses {
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
        let ((fs_sym, fs_rep, fs_stab), (c_sym, c_rep32, c_stab)) = flipslice_and_corner_classes();
        let c_rep = c_rep32.iter().map(|&x| x as u16).collect();
        let cornslice = cornslice_table(&corner_move, &slice_move);
        let ud_from_ud = ud_from_ud_table();
        let fs_symmove = fs_symmove_table(&fs_rep, &fs_sym, &slice_move, &flip_move);
        let slicepos_move: Vec<u16> = (0..495 * N_MOVES)
            .map(|i| slice_move[(i / N_MOVES) * 24 * N_MOVES + i % N_MOVES] / 24)
            .collect();
        let (ts_dist, fs_dist, corner_reach) =
            distance_tables(&slicepos_move, &twist_move, &fs_symmove, &corner_move);
        let fs_next = fs_symmove
            .iter()
            .map(|&y| y | (fs_dist[(y >> 4) as usize] as u32) << 24)
            .collect();
        let (symmult, mconj, mconj_inv) = symmetry_tables();
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
pub(super) fn cornslice_table(corner_move: &[u16], slice_move: &[u16]) -> Vec<u8> {
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

/// `ud_from_ud[u·24 + d mod 24]`: the phase-2 UD-edge coordinate of the U-edge and D-edge
/// coordinates (`u16::MAX` where they do not come from a phase-2 position).
fn ud_from_ud_table() -> Vec<u16> {
    let mut ud_from_ud = vec![u16::MAX; UEdges::COUNT * 24];
    for ud in 0..UdEdges::COUNT {
        let mut c = Cc::ID;
        UdEdges(ud as u16).set(&mut c);
        let (u, d) = (UEdges::get(&c).0 as usize, DEdges::get(&c).0 as usize);
        ud_from_ud[u * 24 + d % 24] = ud as u16;
    }
    ud_from_ud
}

/// The FlipSlice class move table: `fs_symmove[class·18 + m]` = class << 4 | symmetry of
/// the class representative moved by `m`.
fn fs_symmove_table(
    fs_rep: &[u32],
    fs_sym: &[u32],
    slice_move: &[u16],
    flip_move: &[u16],
) -> Vec<u32> {
    (0..N_FLIPSLICE_CLASSES * N_MOVES)
        .map(|i| {
            let (c, m) = (i / N_MOVES, i % N_MOVES);
            let fs = fs_rep[c] as usize;
            let (slice, flip) = (fs / 2048, fs % 2048);
            let s2 = slice_move[slice * 24 * N_MOVES + m] as usize / 24;
            let f2 = flip_move[flip * N_MOVES + m] as usize;
            fs_sym[s2 * 2048 + f2]
        })
        .collect()
}

/// Products of the 16 U-D symmetries (`symmult[a·16 + b]`), and each symmetry's
/// conjugation of the 18 moves and its inverse (`[s·18 + m]`).
fn symmetry_tables() -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let st = sym_table();
    let symmult: Vec<u8> = (0..256)
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
    (symmult, mconj, mconj_inv)
}

/// Symmetry classes (class << 4 | symmetry per coordinate, representatives, stabilisers)
/// of FlipSlice and of the corner permutation, built side by side.
fn flipslice_and_corner_classes() -> (SymClasses, SymClasses) {
    rayon::join(
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
    )
}

/// The small exact distance tables, built side by side: twist × slice positions (packed),
/// FlipSlice classes, and the corner reach.
fn distance_tables(
    slicepos_move: &[u16],
    twist_move: &[u16],
    fs_symmove: &[u32],
    corner_move: &[u16],
) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
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
            (fs_dist, corner_reach_table(corner_move))
        },
    );
    (ts_dist, fs_dist, corner_reach)
}
