//! Integration tests: solver. One table build shared by every test (and by the CLI runs,
//! through the shared cache directory).

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use cubot::cube::{
    random_moves, random_state, Alg, Axis, CubieCube, Face, FaceletCube, Move, MoveKind,
    PocketCube, Size, Turn,
};
use cubot::solver::{Metric, SolveOptions, Solver, SolverError, TableOptions};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::support;

fn solver() -> &'static Solver {
    static SOLVER: OnceLock<Solver> = OnceLock::new();
    SOLVER.get_or_init(|| {
        Solver::new(&TableOptions {
            cache_dir: Some(support::cache_dir()),
            ..TableOptions::default()
        })
        .expect("solver tables")
    })
}

fn solved(size: Size) -> FaceletCube {
    FaceletCube::solved(size)
}

fn solve(start: &FaceletCube, opts: &SolveOptions) -> Vec<Alg> {
    solver()
        .solve(start, &solved(start.size()), opts)
        .unwrap_or_else(|e| panic!("{start}: {e}"))
}

fn scrambled(size: Size, alg: &Alg) -> FaceletCube {
    let mut c = solved(size);
    c.apply(alg).expect("face turns");
    c
}

fn applied(start: &FaceletCube, alg: &Alg) -> FaceletCube {
    let mut c = start.clone();
    c.apply(alg).expect("face turns");
    c
}

/// Exact distances of every 3x3x3 within `depth` face turns, by breadth-first search on
/// the cubie model (independent of the solver's coordinates and tables).
fn bfs3(depth: u32) -> HashMap<CubieCube, u32> {
    bfs(CubieCube::SOLVED, &Face::ALL, depth, |c, f, t| {
        c.apply_face(f, t)
    })
}

/// Breadth-first distances from `solved` over the turns of `faces`, to `depth`.
fn bfs<C: Copy + Eq + std::hash::Hash>(
    solved: C,
    faces: &[Face],
    depth: u32,
    turn: impl Fn(&C, Face, Turn) -> C,
) -> HashMap<C, u32> {
    let mut dist = HashMap::new();
    dist.insert(solved, 0);
    let mut frontier = vec![solved];
    for d in 1..=depth {
        let mut next = Vec::new();
        for c in &frontier {
            for &f in faces {
                for t in Turn::ALL {
                    let n = turn(c, f, t);
                    if let std::collections::hash_map::Entry::Vacant(e) = dist.entry(n) {
                        e.insert(d);
                        next.push(n);
                    }
                }
            }
        }
        frontier = next;
    }
    dist
}

#[test]
fn histograms_are_the_golden_ones() {
    let h = solver().histograms();
    let by = |n: &str| h.iter().find(|t| t.name == n).expect("table").clone();
    // Phase 1 over the full coordinate space (twist × flip × slice = 2,217,093,120):
    // Kociemba's published phase-1 distance distribution.
    assert_eq!(
        by("phase1-flipslice-twist").states,
        vec![
            1, 4, 50, 592, 7156, 87236, 1043817, 12070278, 124946368, 821605960, 1199128738,
            58202444, 476
        ]
    );
    assert_eq!(
        by("phase1-flipslice-twist").stored,
        GOLDEN_P1_STORED.to_vec()
    );
    assert_eq!(
        by("phase2-corner-udedges").stored,
        GOLDEN_P2_STORED.to_vec()
    );
    assert_eq!(
        by("phase2-corner-udedges").states.iter().sum::<u64>(),
        40320 * 40320
    );
    // The corner-set tables, expanded over their symmetry classes: the distributions a
    // breadth-first search over all 88,179,840 corner states (twist × permutation, no
    // symmetry, all 18 turns) gave, computed once outside the solver.
    for b in 1..=7 {
        let t = by(&format!("corner-set-twist-b{b}"));
        assert_eq!(t.states.iter().sum::<u64>(), 2187 * 40320, "b{b}");
        assert_eq!(t.stored, GOLDEN_CSET_STORED[b - 1].to_vec(), "b{b}");
    }
    assert_eq!(
        by("corner-set-twist-b4").states,
        vec![1160, 7672, 63104, 386976, 2226688, 10014464, 33248160, 38837952, 3392832, 832]
    );
    assert_eq!(
        by("corner-set-twist-b5").states,
        vec![2560, 16064, 131488, 797056, 4487456, 18328544, 43560160, 20589792, 266720]
    );
    assert_eq!(
        by("corner-set-twist-b6").states,
        vec![5312, 31648, 257024, 1516960, 8302592, 29213568, 42071680, 6758272, 22784]
    );
    assert_eq!(
        by("corner-set-twist-b7").states,
        vec![9696, 52544, 427616, 2478656, 13117760, 38722432, 31511360, 1858368, 1408]
    );
    // The 2x2x2 (God's number 11 HTM, 14 QTM).
    assert_eq!(
        by("pocket-htm").states,
        vec![1, 9, 54, 321, 1847, 9992, 50136, 227536, 870072, 1887748, 623800, 2644]
    );
    assert_eq!(
        by("pocket-qtm").states,
        vec![
            1, 6, 27, 120, 534, 2256, 8969, 33058, 114149, 360508, 930588, 1350852, 782536, 90280,
            276
        ]
    );
}

/// Stored (symmetry-reduced) entries per distance.
const GOLDEN_P1_STORED: [u64; 13] = [
    1, 1, 5, 44, 487, 5841, 68364, 776568, 7950748, 52098876, 76236234, 3771112, 129,
];
/// Stored (symmetry-reduced) entries per distance of the corner-set tables, budgets 1..=7.
const GOLDEN_CSET_STORED: [&[u64]; 7] = [
    &[
        4, 16, 134, 1224, 8937, 51429, 252369, 1035383, 2835522, 1835422, 33176,
    ],
    &[
        14, 70, 631, 4509, 26942, 137976, 624752, 2117132, 2831423, 309981, 186,
    ],
    &[
        45, 259, 2010, 12264, 70514, 342736, 1369724, 3036240, 1213215, 6609,
    ],
    &[
        118, 598, 4460, 26234, 152016, 691666, 2276840, 2663369, 238255, 60,
    ],
    &[
        234, 1184, 9194, 54508, 309766, 1264734, 2980968, 1413737, 19291,
    ],
    &[
        420, 2256, 17854, 105134, 574968, 2007496, 2877930, 465922, 1636,
    ],
    &[
        712, 3624, 29840, 173082, 907484, 2655886, 2153268, 129628, 92,
    ],
];
/// Stored (symmetry-reduced) entries per distance; 15 = "15 or more".
const GOLDEN_P2_STORED: [u64; 16] = [
    1, 3, 10, 52, 285, 1318, 5671, 26502, 115467, 470846, 1853056, 6535823, 18349792, 32843350,
    34118883, 17284701,
];

#[test]
fn known_positions() {
    let opts = SolveOptions::default();
    // Solved: the empty solution.
    let s = solve(&solved(Size::Three), &opts);
    assert_eq!(s.len(), 1);
    assert!(s[0].is_empty());
    let s = solve(&solved(Size::Two), &opts);
    assert!(s[0].is_empty());
    // A 4-move scramble gets 4 moves.
    let start = scrambled(Size::Three, &Alg::parse("R U F' D2").expect("alg"));
    let s = solve(&start, &opts);
    assert_eq!(s[0].htm(), 4, "{}", s[0]);
    assert!(applied(&start, &s[0]).is_solved());
    // The checkerboard (M2 E2 S2) needs 6 face turns.
    let start = scrambled(Size::Three, &Alg::parse("M2 E2 S2").expect("alg"));
    let s = solve(&start, &opts);
    assert_eq!(s[0].htm(), 6, "{}", s[0]);
    assert!(applied(&start, &s[0]).is_solved());
    // The superflip needs 20.
    let superflip = Alg::parse("U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2").expect("alg");
    let start = scrambled(Size::Three, &superflip);
    let s = solve(&start, &opts);
    assert_eq!(s[0].htm(), 20);
    assert!(applied(&start, &s[0]).is_solved());
    let mut c = CubieCube::SOLVED;
    c.eo = [1; 12];
    assert_eq!(c.to_facelets(), start, "the superflip");
    assert!(solver()
        .solve(
            &start,
            &solved(Size::Three),
            &SolveOptions {
                max_length: 19,
                timeout: Some(Duration::from_millis(300)),
                ..opts.clone()
            }
        )
        .is_err());
}

#[test]
fn short_scrambles_get_optimal_solutions() {
    let exact = bfs3(4);
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let opts = SolveOptions::default();
    for len in 1..=7 {
        for _ in 0..6 {
            let alg = random_moves(Size::Three, len, &mut rng);
            let start = scrambled(Size::Three, &alg);
            let s = solve(&start, &opts);
            let got = s[0].htm();
            assert!(applied(&start, &s[0]).is_solved());
            assert!(got as usize <= len, "{alg}: {} is longer", s[0]);
            let cubie = CubieCube::SOLVED.apply_alg(&alg).expect("face turns");
            if let Some(&d) = exact.get(&cubie) {
                assert_eq!(got, d, "{alg}: breadth-first search says {d}");
            }
            // Nothing shorter exists.
            if got > 0 {
                let shorter = SolveOptions {
                    max_length: got - 1,
                    ..opts.clone()
                };
                assert!(
                    matches!(
                        solver().solve(&start, &solved(Size::Three), &shorter),
                        Err(SolverError::NoSolution { .. })
                    ),
                    "{alg}: a solution shorter than {got} exists"
                );
            }
        }
    }
}

#[test]
fn random_states_of_both_sizes_are_solved_within_the_limit() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for (size, max) in [(Size::Three, 20), (Size::Three, 21), (Size::Two, 11)] {
        for _ in 0..20 {
            let start = random_state(size, &mut rng);
            let opts = SolveOptions {
                max_length: max,
                ..SolveOptions::default()
            };
            let s = solve(&start, &opts);
            assert!(s[0].htm() <= max, "{start}: {} over {max}", s[0]);
            assert!(
                applied(&start, &s[0]).is_solved(),
                "{start}: {} does not solve it",
                s[0]
            );
        }
    }
}

#[test]
fn pocket_lengths_equal_breadth_first_search() {
    // Breadth-first search on the cubie model with U, R, F (DBL fixed) to depth 7.
    let dist = bfs(
        PocketCube::SOLVED,
        &[Face::U, Face::R, Face::F],
        7,
        |c, f, t| c.apply_face(f, t),
    );
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let mut compared = 0;
    for i in 0..300 {
        let start = if i % 2 == 0 {
            scrambled(Size::Two, &random_moves(Size::Two, 1 + i % 9, &mut rng))
        } else {
            random_state(Size::Two, &mut rng)
        };
        let s = solve(&start, &SolveOptions::default());
        assert!(applied(&start, &s[0]).is_solved());
        let p = PocketCube::from_facelets(&start).expect("pocket");
        match dist.get(&p) {
            Some(&d) => {
                assert_eq!(s[0].htm(), d, "{start}");
                compared += 1;
            }
            None => assert!(
                s[0].htm() > 7,
                "{start}: BFS says more than 7, got {}",
                s[0]
            ),
        }
    }
    assert!(compared > 100);
}

#[test]
fn pocket_in_any_orientation_and_all_optimal_solutions() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let rotations = ["x", "y2", "z'", "x y", "x2 z"];
    for r in rotations {
        let start = random_state(Size::Two, &mut rng);
        let best = solve(&start, &SolveOptions::default())[0].htm();
        let mut turned = start.clone();
        turned
            .apply(&Alg::parse(r).expect("rotation"))
            .expect("fits");
        let reread = FaceletCube::parse(&turned.to_string()).expect("parse");
        let s = solve(&reread, &SolveOptions::default());
        assert_eq!(s[0].htm(), best, "turned by {r}");
        assert!(applied(&reread, &s[0]).is_solved());
        assert!(
            applied(&turned, &s[0]).is_solved(),
            "as typed, turned by {r}"
        );
    }
    // All optimal solutions of a 2x2x2 position: distinct, optimal, shortest first.
    let start = scrambled(Size::Two, &Alg::parse("R U R' U'").expect("alg"));
    let s = solve(
        &start,
        &SolveOptions {
            solutions: 50,
            ..SolveOptions::default()
        },
    );
    assert!(s.len() > 1);
    assert_eq!(s[0].htm(), 4);
    for w in s.windows(2) {
        assert!(w[0].htm() <= w[1].htm());
        assert_ne!(w[0], w[1]);
    }
    for a in &s {
        assert!(applied(&start, a).is_solved(), "{a}");
    }
}

#[test]
fn short_limits_search_with_premoves_and_stay_correct() {
    // At ≤ 19 (and below) the search also solves `q · cube` for the moves `q` outside each
    // axis's phase-2 group and appends `q`: every solution must still solve the cube,
    // respect the limit (after merging a last move with `q`), and be distinct, in both
    // metrics.
    let mut rng = ChaCha8Rng::seed_from_u64(19);
    for _ in 0..6 {
        let start = random_state(Size::Three, &mut rng);
        let opts = SolveOptions {
            max_length: 19,
            solutions: 3,
            ..SolveOptions::default()
        };
        let s = solve(&start, &opts);
        assert_eq!(s.len(), 3, "{start}");
        for (i, a) in s.iter().enumerate() {
            assert!(a.htm() <= 19, "{start}: {a}");
            assert!(applied(&start, a).is_solved(), "{start}: {a}");
            let moves = a.moves();
            for w in moves.windows(2) {
                assert_ne!(
                    w[0].face_index().map(|m| m / 3),
                    w[1].face_index().map(|m| m / 3),
                    "{a}: a face twice in a row"
                );
            }
            assert!(s[..i].iter().all(|b| b != a));
        }
    }
    // Quarter-turn metric (a half-turn premove costs 2): a 9-move scramble has a solution
    // of at most 18 quarter turns.
    for _ in 0..4 {
        let alg = random_moves(Size::Three, 9, &mut rng);
        let start = scrambled(Size::Three, &alg);
        let bound = alg.qtm();
        let q = SolveOptions {
            metric: Metric::Qtm,
            max_length: bound,
            ..SolveOptions::default()
        };
        let s = solve(&start, &q);
        assert!(s[0].qtm() <= bound, "{alg}: {}", s[0]);
        assert!(applied(&start, &s[0]).is_solved(), "{alg}: {}", s[0]);
    }
}

#[test]
fn several_distinct_solutions_and_quarter_turns() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let start = random_state(Size::Three, &mut rng);
    let s = solve(
        &start,
        &SolveOptions {
            solutions: 5,
            ..SolveOptions::default()
        },
    );
    assert_eq!(s.len(), 5);
    for (i, a) in s.iter().enumerate() {
        assert!(applied(&start, a).is_solved());
        assert!(a.htm() <= 20);
        for b in &s[..i] {
            assert_ne!(a, b);
        }
    }
    for w in s.windows(2) {
        assert!(w[0].htm() <= w[1].htm());
    }
    // Quarter-turn metric.
    let q = SolveOptions {
        metric: Metric::Qtm,
        max_length: 30,
        ..SolveOptions::default()
    };
    let s = solve(&start, &q);
    assert!(s[0].qtm() <= 30 && applied(&start, &s[0]).is_solved());
    let start = scrambled(Size::Three, &Alg::parse("R2 U F").expect("alg"));
    let s = solve(&start, &q);
    assert_eq!(s[0].qtm(), 4, "{}", s[0]);
    let start = scrambled(Size::Two, &Alg::parse("R2 U F2").expect("alg"));
    let s = solve(&start, &q);
    assert!((4..=5).contains(&s[0].qtm()), "{}", s[0]);
    assert!(applied(&start, &s[0]).is_solved());
}

#[test]
fn limits_are_reported() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let start = random_state(Size::Three, &mut rng);
    let opts = SolveOptions {
        max_length: 14,
        timeout: Some(Duration::from_millis(100)),
        ..SolveOptions::default()
    };
    match solver().solve(&start, &solved(Size::Three), &opts) {
        Err(SolverError::NoSolution { limit, .. }) => assert!(limit.contains("time"), "{limit}"),
        other => panic!("{other:?}"),
    }
    let start = scrambled(Size::Three, &Alg::parse("R U F D L B").expect("alg"));
    let opts = SolveOptions {
        max_length: 3,
        ..SolveOptions::default()
    };
    match solver().solve(&start, &solved(Size::Three), &opts) {
        Err(SolverError::NoSolution { limit, .. }) => assert!(limit.contains("3 moves"), "{limit}"),
        other => panic!("{other:?}"),
    }
    // Keep searching: never longer than the first answer.
    let start = random_state(Size::Three, &mut rng);
    let first = solve(&start, &SolveOptions::default())[0].htm();
    let more = solve(
        &start,
        &SolveOptions {
            keep_searching: true,
            timeout: Some(Duration::from_millis(300)),
            ..SolveOptions::default()
        },
    );
    assert!(more[0].htm() <= first);
    assert!(applied(&start, &more[0]).is_solved());
    // A limit far beyond any cube's distance is accepted as it is (in both metrics and
    // sizes, with many solutions asked for): the searches stop at LONGEST_SEARCHED.
    for size in [Size::Three, Size::Two] {
        let start = random_state(size, &mut rng);
        for metric in [Metric::Htm, Metric::Qtm] {
            let opts = SolveOptions {
                max_length: u32::MAX,
                solutions: 200,
                metric,
                ..SolveOptions::default()
            };
            let s = solve(&start, &opts);
            assert_eq!(s.len(), 200, "{start} {metric}");
            assert!(s.iter().all(|a| applied(&start, a).is_solved()), "{start}");
        }
    }
}

#[test]
fn any_state_to_any_target_round_trips() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for size in [Size::Three, Size::Two] {
        for _ in 0..10 {
            let a = random_state(size, &mut rng);
            let b = random_state(size, &mut rng);
            let s = solver()
                .solve(&a, &b, &SolveOptions::default())
                .expect("solve");
            assert_eq!(
                applied(&a, &s[0]).to_letters(),
                b.to_letters(),
                "{a} -> {b}"
            );
            // Near targets get optimal answers: B = A + 3 moves.
            let alg = random_moves(size, 3, &mut rng);
            let near = applied(&a, &alg);
            let s = solver()
                .solve(&a, &near, &SolveOptions::default())
                .expect("solve");
            assert_eq!(applied(&a, &s[0]).to_letters(), near.to_letters());
            assert!(s[0].htm() <= 3, "{alg} vs {}", s[0]);
        }
    }
    // Own colour symbols, the same on both sides.
    let recolour = |c: &FaceletCube| -> FaceletCube {
        FaceletCube::parse(
            &c.to_letters()
                .chars()
                .map(|x| match x {
                    'U' => 'W',
                    'R' => 'R',
                    'F' => 'G',
                    'D' => 'Y',
                    'L' => 'O',
                    _ => 'B',
                })
                .collect::<String>(),
        )
        .expect("parse")
    };
    let a = recolour(&random_state(Size::Three, &mut rng));
    let b = recolour(&random_state(Size::Three, &mut rng));
    let s = solver()
        .solve(&a, &b, &SolveOptions::default())
        .expect("solve");
    assert_eq!(applied(&a, &s[0]).to_string(), b.to_string());
    // A 2x2x2 target held in another orientation is reached up to that rotation.
    let a = random_state(Size::Two, &mut rng);
    let b = random_state(Size::Two, &mut rng);
    let mut turned = b.clone();
    turned
        .apply(&Alg::parse("x y").expect("rotation"))
        .expect("fits");
    let turned = FaceletCube::parse(&turned.to_string()).expect("parse");
    let s = solver()
        .solve(&a, &turned, &SolveOptions::default())
        .expect("solve");
    assert_eq!(applied(&a, &s[0]).to_letters(), b.to_letters());
}

#[test]
fn bad_inputs_are_refused_with_evidence() {
    let a = solved(Size::Three);
    let mut letters: Vec<char> = a.to_letters().chars().collect();
    letters.swap(0, 9 + 1); // a U sticker and an R sticker: two wrong pieces.
    let bad = FaceletCube::parse(&letters.iter().collect::<String>()).expect("parse");
    match solver().solve(&bad, &a, &SolveOptions::default()) {
        Err(SolverError::Invalid(e)) => assert!(!e.problems.is_empty()),
        other => panic!("{other:?}"),
    }
    match solver().solve(&a, &bad, &SolveOptions::default()) {
        Err(SolverError::InvalidTarget(_)) => {}
        other => panic!("{other:?}"),
    }
    let other_colours = FaceletCube::parse(
        &"W".repeat(9)
            .chars()
            .chain(a.to_letters().chars().skip(9))
            .collect::<String>(),
    )
    .expect("parse");
    assert!(matches!(
        solver().solve(&a, &other_colours, &SolveOptions::default()),
        Err(SolverError::DifferentColours { .. })
    ));
    assert!(matches!(
        solver().solve(&a, &solved(Size::Two), &SolveOptions::default()),
        Err(SolverError::DifferentSizes { .. })
    ));
    // The same colours but the target's centres elsewhere (a whole-cube rotation).
    let mut turned = a.clone();
    turned
        .apply(&Alg::from_moves(vec![Move::new(
            MoveKind::Rotation(Axis::Y),
            Turn::Cw,
        )]))
        .expect("fits");
    let turned = FaceletCube::parse(&turned.to_string()).expect("parse");
    assert!(matches!(
        solver().solve(&a, &turned, &SolveOptions::default()),
        Err(SolverError::DifferentCentres { .. })
    ));
}

#[test]
fn pruning_values_never_exceed_true_distances() {
    let exact = bfs3(4);
    for (c, &d) in exact.iter().take(5000) {
        let (h1, _) = solver().lower_bounds(c);
        assert!(h1 <= d, "lower bound {h1} over the distance {d}");
    }
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    for len in 5..=12 {
        for _ in 0..20 {
            let alg = random_moves(Size::Three, len, &mut rng);
            let c = CubieCube::SOLVED.apply_alg(&alg).expect("face turns");
            let (h1, _) = solver().lower_bounds(&c);
            assert!(h1 as usize <= len, "{alg}: lower bound {h1}");
            // Phase-2 scrambles: the phase-2 bound never exceeds their length.
            let p2: Vec<Move> = (0..len)
                .map(|i| {
                    let f = Face::ALL[(i * 7 + len) % 6];
                    let t = if matches!(f, Face::U | Face::D) {
                        Turn::ALL[i % 3]
                    } else {
                        Turn::Half
                    };
                    Move::face(f, t)
                })
                .collect();
            let alg = Alg::from_moves(p2).simplified();
            let c = CubieCube::SOLVED.apply_alg(&alg).expect("face turns");
            let (h1, h2) = solver().lower_bounds(&c);
            assert!(h1 as usize <= alg.len());
            let h2 = h2.expect("a phase-2 position");
            assert!(h2 as usize <= alg.len(), "{alg}: phase-2 bound {h2}");
        }
    }
}

#[test]
fn cli_solves_one_state_and_batches_in_order() {
    solver();
    let start = scrambled(Size::Three, &Alg::parse("R U2 F'").expect("alg"));
    let o = support::cubot(&["solve", &start.to_string()]);
    assert_eq!(o.status.code(), Some(0), "{}", support::stderr(&o));
    let alg = Alg::parse(support::stdout(&o).trim()).expect("moves");
    assert_eq!(alg.htm(), 3);
    assert!(applied(&start, &alg).is_solved());

    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let states: Vec<FaceletCube> = (0..6)
        .map(|_| random_state(Size::Three, &mut rng))
        .collect();
    let pocket = random_state(Size::Two, &mut rng);
    let mut input: Vec<String> = states.iter().map(|s| s.to_string()).collect();
    input.insert(2, solved(Size::Three).to_string());
    input.push(pocket.to_string());
    input.push("UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBF".into());
    let o = support::cubot_stdin(&["solve", "-"], &(input.join("\n") + "\n"));
    assert_eq!(o.status.code(), Some(1), "an invalid line makes exit 1");
    let out = support::stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), input.len(), "{out}");
    assert_eq!(lines[2], "", "a solved state gives an empty line");
    for (i, text) in input.iter().enumerate().take(input.len() - 1) {
        let start = FaceletCube::parse(text).expect("parse");
        let alg = Alg::parse(lines[i]).expect("moves");
        assert!(applied(&start, &alg).is_solved(), "line {i}: {}", lines[i]);
    }
    assert!(lines.last().expect("line").starts_with("invalid"), "{out}");
}

#[test]
fn cli_targets_json_and_errors() {
    solver();
    let target = "R U R' U'";
    let o = support::cubot(&[
        "solve",
        &solved(Size::Three).to_string(),
        "--target-moves",
        target,
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", support::stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(support::stdout(&o).lines().next().expect("line")).expect("json");
    assert_eq!(v["type"], "solution");
    assert_eq!(v["length"], 4);
    let alg = Alg::parse(v["moves"].as_str().expect("moves")).expect("alg");
    assert_eq!(
        applied(&solved(Size::Three), &alg),
        scrambled(Size::Three, &Alg::parse(target).expect("alg"))
    );
    // --target STATE, several solutions.
    let goal = scrambled(Size::Three, &Alg::parse("F2 D").expect("alg"));
    let o = support::cubot(&[
        "solve",
        &solved(Size::Three).to_string(),
        "--target",
        &goal.to_string(),
        "--solutions",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let out = support::stdout(&o);
    assert_eq!(out.lines().count(), 3, "{out}");
    assert_eq!(
        Alg::parse(out.lines().next().expect("line"))
            .expect("alg")
            .htm(),
        2
    );
    // Invalid start: every problem named, exit 1.
    let o = support::cubot(&[
        "solve",
        "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBF",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        support::stdout(&o).contains("invalid"),
        "{}",
        support::stdout(&o)
    );
    // No solution within the limit: exit 1, the limit named.
    let o = support::cubot(&[
        "solve",
        &random_state(Size::Three, &mut ChaCha8Rng::seed_from_u64(1)).to_string(),
        "--max-length",
        "12",
        "--timeout",
        "100",
    ]);
    assert_eq!(o.status.code(), Some(1));
    // Which limit stops the search first depends on the machine: either is named.
    let out = support::stdout(&o);
    assert!(
        out.contains("time limit") || out.contains("within 12 moves"),
        "{out}"
    );
    // Usage error: exit 2.
    let o = support::cubot(&["solve", "x", "--metric", "furlongs"]);
    assert_eq!(o.status.code(), Some(2));
    // Every optimal solution: the checkerboard's six; a far 3x3x3 is refused with exit 1
    // and the reason; --all-optimal with --solutions is a usage error.
    let checker = scrambled(Size::Three, &Alg::parse("U2 D2 F2 B2 L2 R2").expect("alg"));
    let o = support::cubot(&["solve", &checker.to_string(), "--all-optimal"]);
    assert_eq!(o.status.code(), Some(0), "{}", support::stderr(&o));
    assert_eq!(support::stdout(&o).lines().count(), 6);
    let far = random_state(Size::Three, &mut ChaCha8Rng::seed_from_u64(2)).to_string();
    let o = support::cubot(&["solve", &far, "--all-optimal"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        support::stdout(&o).contains("within 7 moves")
            && !support::stdout(&o).contains("no solution")
            && support::stdout(&o).contains("leave out --all-optimal"),
        "{}",
        support::stdout(&o)
    );
    let o = support::cubot(&["solve", &far, "--all-optimal", "--solutions", "2"]);
    assert_eq!(o.status.code(), Some(2));
    // Tables: path and verify on the shared cache.
    let o = support::cubot(&["tables", "verify"]);
    assert_eq!(o.status.code(), Some(0), "{}", support::stdout(&o));
    let o = support::cubot(&["tables", "path"]);
    assert!(support::stdout(&o).contains("cubot-cache"));
}

#[test]
fn cli_output_into_a_closed_pipe_is_not_a_panic() {
    // `cubot solve … | head -1`: once the reader is gone, the lines are dropped and the
    // command ends normally (a batch stops early), with no panic.
    solver();
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let states: Vec<String> = (0..600)
        .map(|_| random_state(Size::Three, &mut rng).to_string())
        .collect();
    let (status, err) = support::cubot_closed_stdout(&["solve", "-"], &states.join("\n"));
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(status.code(), Some(0), "{err}");
    let (status, err) =
        support::cubot_closed_stdout(&["solve", &states[0], "--solutions", "20"], "");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(status.code(), Some(0), "{err}");
    let (status, err) = support::cubot_closed_stdout(&["--json", "show", &states[0]], "");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(status.code(), Some(0), "{err}");
}

#[test]
fn cli_tables_verify_finds_a_corrupt_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = support::cache_dir();
    solver();
    let mut copied = 0;
    for e in std::fs::read_dir(&src).expect("cache dir") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "tbl") {
            let dst = dir.path().join(p.file_name().expect("name"));
            std::fs::copy(&p, &dst).expect("copy");
            copied += 1;
        }
    }
    assert!(copied >= 2);
    let dir_s = dir.path().to_str().expect("utf-8");
    let o = support::cubot(&["--cache-dir", dir_s, "tables", "verify"]);
    assert_eq!(o.status.code(), Some(0), "{}", support::stdout(&o));
    // A table the solver uses (a stray file in the directory would not count).
    let victim = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("phase2-corner-udedges."))
        })
        .expect("the phase-2 table file");
    let mut bytes = std::fs::read(&victim).expect("read");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x10;
    std::fs::write(&victim, &bytes).expect("write");
    let o = support::cubot(&["--cache-dir", dir_s, "tables", "verify"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        support::stdout(&o).contains("checksum"),
        "{}",
        support::stdout(&o)
    );
    assert!(support::stderr(&o).contains("`cubot tables build` builds the missing and bad ones"));
    // The next solve rebuilds it, and says what the wait is for (stderr is no terminal
    // here, so no progress bar: a line of text).
    let o = support::cubot(&[
        "--cache-dir",
        dir_s,
        "solve",
        "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", support::stderr(&o));
    assert!(
        support::stderr(&o).contains("building the solver's tables (once"),
        "{}",
        support::stderr(&o)
    );
}

#[test]
fn cli_bench_runs_on_a_small_file() {
    solver();
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("states.txt");
    let o = support::cubot(&["random", "--size", "2", "--seed", "5", "--count", "20"]);
    std::fs::write(&file, support::stdout(&o)).expect("write");
    let o = support::cubot(&[
        "bench",
        "solve",
        "--states",
        file.to_str().expect("utf-8"),
        "--no-peer",
        "--no-batch",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", support::stderr(&o));
    let out = support::stdout(&o);
    assert!(
        out.contains("median") && out.contains("over 1 s 0") && out.contains("failures 0"),
        "{out}"
    );
    assert!(out.contains("search nodes per solve: median"), "{out}");
    // Figures mean little without the machine they were measured on.
    assert!(out.starts_with("host: ") && out.contains("CPU(s)"), "{out}");
}

#[test]
fn search_nodes_are_counted_the_same_on_every_run() {
    // The node count is what benchmarks compare across machines: it must not depend on
    // anything but the cube and the options, and a solved cube needs no search.
    let s = solver();
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    let opts = SolveOptions::default();
    for size in [Size::Three, Size::Two] {
        let mut none = 0;
        let target = solved(size);
        let plain = s.solve_counted(&target, &target, &opts, &mut none);
        assert_eq!(plain.expect("solved").len(), 1);
        assert_eq!(none, 0, "{size}");
        let start = random_state(size, &mut rng);
        let (mut a, mut b) = (0, 0);
        let first = s
            .solve_counted(&start, &target, &opts, &mut a)
            .expect("solvable");
        let again = s
            .solve_counted(&start, &target, &opts, &mut b)
            .expect("solvable");
        assert!(a > 0, "{start}");
        assert_eq!((a, &first), (b, &again), "{start}");
        assert_eq!(first, solve(&start, &opts), "{start}");
    }
}

/// A length limit below the cube's distance makes the search exhaust every split, which
/// takes hours: without `--timeout`, `solve` bounds it (60 s) and says so on stderr at
/// once; with one, it stops at the limit and says which limit it was.
#[test]
fn cli_says_when_a_search_without_a_time_limit_runs_long() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let superflip = "UBULURUFURURFRBRDRFUFLFRFDFDFDLDRDBDLULBLFLDLBUBRBLBDB";
    // Build the tables first, so the wait below is the search's alone.
    let o = support::cubot(&["tables", "build"]);
    assert!(o.status.success(), "{}", support::stderr(&o));
    let mut child = Command::new(env!("CARGO_BIN_EXE_cubot"))
        .args(["solve", superflip, "--max-length", "19"])
        .env("CUBOT_CACHE_DIR", support::cache_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run cubot");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let mut seen = Vec::new();
    let noted = loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if line.contains("may be shorter than some cubes need") => break Some(line),
            Ok(line) => seen.push(line),
            Err(_) => break None,
        }
    };
    child.kill().ok();
    child.wait().ok();
    let noted = noted.unwrap_or_else(|| panic!("no note on stderr; saw {seen:?}"));
    assert!(noted.contains("at most 19 moves (htm)"), "{noted}");
    assert!(noted.contains("stops after 60 s"), "{noted}");
    assert!(noted.contains("--timeout"), "{noted}");

    let o = support::cubot(&[
        "solve",
        superflip,
        "--max-length",
        "19",
        "--timeout",
        "3500",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", support::stderr(&o));
    assert!(
        support::stdout(&o).contains("time limit"),
        "{}",
        support::stdout(&o)
    );
    assert!(!support::stderr(&o).contains("may be shorter"));
}

/// Every sequence of exactly `len` turns of `faces` in canonical order (never one face
/// twice in a row; of two opposite faces, the one earlier in URFDLB first) that takes
/// `start` to `goal`, by brute force on the cubie model.
fn canonical_solutions<C: Copy + Eq>(
    start: C,
    goal: C,
    faces: &[Face],
    len: u32,
    turn: &impl Fn(&C, Face, Turn) -> C,
) -> Vec<Vec<(Face, Turn)>> {
    fn walk<C: Copy + Eq>(
        c: C,
        goal: C,
        faces: &[Face],
        left: u32,
        path: &mut Vec<(Face, Turn)>,
        out: &mut Vec<Vec<(Face, Turn)>>,
        turn: &impl Fn(&C, Face, Turn) -> C,
    ) {
        if left == 0 {
            if c == goal {
                out.push(path.clone());
            }
            return;
        }
        for &f in faces {
            if let Some(&(l, _)) = path.last() {
                let (fi, li) = (f.index(), l.index());
                if fi == li || (fi % 3 == li % 3 && fi < li) {
                    continue;
                }
            }
            for t in Turn::ALL {
                path.push((f, t));
                walk(turn(&c, f, t), goal, faces, left - 1, path, out, turn);
                path.pop();
            }
        }
    }
    let mut out = Vec::new();
    walk(start, goal, faces, len, &mut Vec::new(), &mut out, turn);
    out
}

/// The face turns of a solution, for comparing with [`canonical_solutions`].
fn turns_of(a: &Alg) -> Vec<(Face, Turn)> {
    a.moves()
        .iter()
        .map(|m| {
            let i = m.face_index().expect("face turns only");
            (Face::ALL[i / 3], Turn::ALL[i % 3])
        })
        .collect()
}

#[test]
fn all_optimal_lists_exactly_the_optimal_solutions() {
    let all = SolveOptions {
        all_optimal: true,
        ..SolveOptions::default()
    };
    let sorted = |mut v: Vec<Vec<(Face, Turn)>>| {
        v.sort_by_key(|s| format!("{s:?}"));
        v
    };
    // 2x2x2 (U, R and F turns, the DBL corner held): random scrambles of 3 to 6 turns,
    // against every canonical sequence of the optimal length.
    let mut rng = ChaCha8Rng::seed_from_u64(23);
    for n in 3..=6 {
        let start = scrambled(Size::Two, &random_moves(Size::Two, n, &mut rng));
        let s = solve(&start, &all);
        let d = solve(&start, &SolveOptions::default())[0].htm();
        assert!(s.iter().all(|a| a.htm() == d), "{start}: not all optimal");
        let p = PocketCube::from_facelets(&start).expect("pocket");
        let brute = canonical_solutions(
            p,
            PocketCube::SOLVED,
            &[Face::U, Face::R, Face::F],
            d,
            &|c: &PocketCube, f, t| c.apply_face(f, t),
        );
        assert_eq!(
            sorted(s.iter().map(turns_of).collect()),
            sorted(brute),
            "{start}"
        );
    }
    // 3x3x3 within reach of the optimal search: the checkerboard has its three axes in
    // any order (3! = 6 solutions), and random 4-turn scrambles.
    let checker = scrambled(Size::Three, &Alg::parse("U2 D2 F2 B2 L2 R2").expect("alg"));
    let s = solve(&checker, &all);
    assert_eq!(s.len(), 6, "{s:?}");
    assert!(s.iter().all(|a| a.htm() == 6));
    for _ in 0..3 {
        let start = scrambled(Size::Three, &random_moves(Size::Three, 4, &mut rng));
        let s = solve(&start, &all);
        let d = s[0].htm();
        let c = CubieCube::from_facelets(&start).expect("cubie");
        let brute = canonical_solutions(c, CubieCube::SOLVED, &Face::ALL, d, &|c, f, t| {
            c.apply_face(f, t)
        });
        assert_eq!(
            sorted(s.iter().map(turns_of).collect()),
            sorted(brute),
            "{start}"
        );
    }
    // Beyond it: a precise refusal, not a guess; and a length limit below the distance.
    let far = random_state(Size::Three, &mut rng);
    assert!(matches!(
        solver().solve(&far, &solved(Size::Three), &all),
        Err(SolverError::OptimalOutOfReach)
    ));
    let five = scrambled(Size::Three, &Alg::parse("R U F D L B").expect("alg"));
    let short = SolveOptions {
        max_length: 5,
        ..all.clone()
    };
    assert!(matches!(
        solver().solve(&five, &solved(Size::Three), &short),
        Err(SolverError::NoSolution { .. })
    ));
}

/// A 2x2x2 is searched turned whole so that its DBL corner is home; the moves returned are
/// for the cube as given, so they solve it even when it was held in another orientation.
#[test]
fn pocket_solutions_apply_to_the_cube_as_held() {
    let mut rng = ChaCha8Rng::seed_from_u64(22);
    for rotation in ["x", "y", "z", "x y", "x2 z", "y' x'"] {
        let mut start = random_state(Size::Two, &mut rng);
        start
            .apply(&Alg::parse(rotation).expect("alg"))
            .expect("rotation");
        let s = solve(&start, &SolveOptions::default());
        let end = applied(&start, &s[0]);
        assert!(
            cubot::robot::symmetry::same_up_to_rotation(&end, &solved(Size::Two)),
            "{rotation}: {start} + {} gives {end}",
            s[0]
        );
    }
}
