//! Unit tests of the 3x3x3 tables against the cubie model and known counts.

use super::small::sym_classes;
use super::*;
use crate::solver::coord::*;
use crate::solver::cubie::{move_cube, Cc};
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
