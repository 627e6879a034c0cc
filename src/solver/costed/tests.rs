//! Unit tests of the automaton and the costed search.

use super::automaton::INF;
use super::search::bound_tables;
use super::*;
use crate::solver::tables::N_MOVES;

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
