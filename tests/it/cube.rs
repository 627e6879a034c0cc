//! The cube model: algebra (property tests), agreement with an independent model,
//! validation of crafted broken states, and parsers that never panic.

use cubot::cube::{
    random_moves, random_state, validate, Alg, CubeProblem, CubieCube, Face, FaceletCube, Move,
    MoveKind, Size, Turn,
};
use proptest::prelude::*;
use rand::SeedableRng;

const SOLVED: &str = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB";

fn apply(state: &str, moves: &str) -> String {
    let mut c = FaceletCube::parse(state).expect("parse");
    c.apply(&Alg::parse(moves).expect("moves")).expect("fits");
    c.to_string()
}

fn all_moves(size: Size) -> Vec<Move> {
    let mut kinds: Vec<MoveKind> = Vec::new();
    for f in Face::ALL {
        kinds.push(MoveKind::Face(f));
        kinds.push(MoveKind::Wide(f));
    }
    for s in cubot::cube::Slice::ALL {
        kinds.push(MoveKind::Slice(s));
    }
    for a in cubot::cube::Axis::ALL {
        kinds.push(MoveKind::Rotation(a));
    }
    kinds
        .into_iter()
        .flat_map(|k| Turn::ALL.map(|t| Move::new(k, t)))
        .filter(|m| m.fits(size))
        .collect()
}

// ---- an independent model: Kociemba's published cubie definitions of the six face turns,
// typed from his description, with their own composition and sticker painting ----

mod independent {
    pub struct C {
        pub cp: [usize; 8],
        pub co: [usize; 8],
        pub ep: [usize; 12],
        pub eo: [usize; 12],
    }

    // Corners URF UFL ULB UBR DFR DLF DBL DRB = 0..7; edges UR UF UL UB DR DF DL DB FR FL BL BR = 0..11.
    pub fn basic(face: char) -> C {
        match face {
            'U' => C {
                cp: [3, 0, 1, 2, 4, 5, 6, 7],
                co: [0; 8],
                ep: [3, 0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11],
                eo: [0; 12],
            },
            'R' => C {
                cp: [4, 1, 2, 0, 7, 5, 6, 3],
                co: [2, 0, 0, 1, 1, 0, 0, 2],
                ep: [8, 1, 2, 3, 11, 5, 6, 7, 4, 9, 10, 0],
                eo: [0; 12],
            },
            'F' => C {
                cp: [1, 5, 2, 3, 0, 4, 6, 7],
                co: [1, 2, 0, 0, 2, 1, 0, 0],
                ep: [0, 9, 2, 3, 4, 8, 6, 7, 1, 5, 10, 11],
                eo: [0, 1, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0],
            },
            'D' => C {
                cp: [0, 1, 2, 3, 5, 6, 7, 4],
                co: [0; 8],
                ep: [0, 1, 2, 3, 5, 6, 7, 4, 8, 9, 10, 11],
                eo: [0; 12],
            },
            'L' => C {
                cp: [0, 2, 6, 3, 4, 1, 5, 7],
                co: [0, 1, 2, 0, 0, 2, 1, 0],
                ep: [0, 1, 10, 3, 4, 5, 9, 7, 8, 2, 6, 11],
                eo: [0; 12],
            },
            'B' => C {
                cp: [0, 1, 3, 7, 4, 5, 2, 6],
                co: [0, 0, 1, 2, 0, 0, 2, 1],
                ep: [0, 1, 2, 11, 4, 5, 6, 10, 8, 9, 3, 7],
                eo: [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 1],
            },
            _ => unreachable!(),
        }
    }

    pub fn solved() -> C {
        C {
            cp: [0, 1, 2, 3, 4, 5, 6, 7],
            co: [0; 8],
            ep: std::array::from_fn(|i| i),
            eo: [0; 12],
        }
    }

    pub fn mul(a: &C, b: &C) -> C {
        C {
            cp: std::array::from_fn(|i| a.cp[b.cp[i]]),
            co: std::array::from_fn(|i| (a.co[b.cp[i]] + b.co[i]) % 3),
            ep: std::array::from_fn(|i| a.ep[b.ep[i]]),
            eo: std::array::from_fn(|i| (a.eo[b.ep[i]] + b.eo[i]) % 2),
        }
    }

    // Sticker numbers (1-based within a face) of each slot, U/D sticker first, clockwise.
    const CF: [[(char, usize); 3]; 8] = [
        [('U', 9), ('R', 1), ('F', 3)],
        [('U', 7), ('F', 1), ('L', 3)],
        [('U', 1), ('L', 1), ('B', 3)],
        [('U', 3), ('B', 1), ('R', 3)],
        [('D', 3), ('F', 9), ('R', 7)],
        [('D', 1), ('L', 9), ('F', 7)],
        [('D', 7), ('B', 9), ('L', 7)],
        [('D', 9), ('R', 9), ('B', 7)],
    ];
    const EF: [[(char, usize); 2]; 12] = [
        [('U', 6), ('R', 2)],
        [('U', 8), ('F', 2)],
        [('U', 4), ('L', 2)],
        [('U', 2), ('B', 2)],
        [('D', 6), ('R', 8)],
        [('D', 2), ('F', 8)],
        [('D', 4), ('L', 8)],
        [('D', 8), ('B', 8)],
        [('F', 6), ('R', 4)],
        [('F', 4), ('L', 6)],
        [('B', 6), ('L', 4)],
        [('B', 4), ('R', 6)],
    ];

    fn idx((f, n): (char, usize)) -> usize {
        "URFDLB".find(f).unwrap() * 9 + n - 1
    }

    pub fn paint(c: &C) -> String {
        let mut s: Vec<char> = (0..54)
            .map(|i| "URFDLB".as_bytes()[i / 9] as char)
            .collect();
        for slot in 0..8 {
            for k in 0..3 {
                s[idx(CF[slot][(k + c.co[slot]) % 3])] = CF[c.cp[slot]][k].0;
            }
        }
        for slot in 0..12 {
            for k in 0..2 {
                s[idx(EF[slot][(k + c.eo[slot]) % 2])] = EF[c.ep[slot]][k].0;
            }
        }
        s.into_iter().collect()
    }

    pub fn apply(moves: &[(char, usize)]) -> String {
        let mut c = solved();
        for &(f, q) in moves {
            for _ in 0..q {
                c = mul(&c, &basic(f));
            }
        }
        paint(&c)
    }
}

#[test]
fn face_turn_cubies_match_kociembas_definitions() {
    for f in Face::ALL {
        let ours = CubieCube::face_move(f, Turn::Cw);
        let theirs = independent::basic(f.letter());
        assert_eq!(ours.cp.map(|x| x as usize), theirs.cp, "{f} corners");
        assert_eq!(ours.co.map(|x| x as usize), theirs.co, "{f} twists");
        assert_eq!(ours.ep.map(|x| x as usize), theirs.ep, "{f} edges");
        assert_eq!(ours.eo.map(|x| x as usize), theirs.eo, "{f} flips");
    }
}

#[test]
fn cubot_apply_agrees_with_the_independent_model_on_random_sequences() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut input = String::new();
    let mut expected = Vec::new();
    let mut algs = Vec::new();
    for _ in 0..40 {
        let alg = random_moves(Size::Three, 25, &mut rng);
        let seq: Vec<(char, usize)> = alg
            .moves()
            .iter()
            .map(|m| match m.kind {
                MoveKind::Face(f) => (f.letter(), m.turn.quarters() as usize),
                _ => unreachable!(),
            })
            .collect();
        expected.push(independent::apply(&seq));
        algs.push(alg.to_string());
        input.push_str(SOLVED);
        input.push('\n');
    }
    // One binary run per sequence, through the real CLI.
    for (alg, want) in algs.iter().zip(&expected) {
        let out = crate::support::cubot(&["apply", "solved", alg]);
        assert!(out.status.success(), "{}", crate::support::stderr(&out));
        assert_eq!(crate::support::stdout(&out).trim(), want, "moves {alg}");
    }
}

#[test]
fn known_states() {
    assert_eq!(
        apply(SOLVED, "R U"),
        "UUUUUUFFFUBBRRRRRRRRRFFDFFDDDBDDBDDBFFDLLLLLLLLLUBBUBB"
    );
    assert_eq!(apply(SOLVED, "(R U R' U')6"), SOLVED);
    // Superflip (Reid's 20-move sequence) flips every edge in place.
    let sf = apply(SOLVED, "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2");
    let c = CubieCube::from_facelets(&FaceletCube::parse(&sf).unwrap()).unwrap();
    assert_eq!(c.cp, CubieCube::SOLVED.cp);
    assert_eq!(c.ep, CubieCube::SOLVED.ep);
    assert_eq!(c.eo, [1; 12]);
}

#[test]
fn slices_wide_turns_and_rotations_agree_with_face_turn_definitions() {
    let pairs = [
        ("M", "R L' x'"),
        ("E", "U D' y'"),
        ("S", "F' B z"),
        ("Rw", "L x"),
        ("r", "L x"),
        ("Uw", "D y"),
        ("Fw", "B z"),
        ("Lw", "R x'"),
        ("Dw", "U y'"),
        ("Bw", "F z'"),
        ("M2", "R2 L2 x2"),
        ("x", "Rw L'"),
        ("y", "Uw D'"),
        ("z", "Fw B'"),
    ];
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let start = random_state(Size::Three, &mut rng).to_string();
    for (a, b) in pairs {
        assert_eq!(apply(&start, a), apply(&start, b), "{a} vs {b}");
    }
}

#[test]
fn pocket_moves_are_the_corner_stickers_of_the_3x3x3_moves() {
    let corner_local = [0usize, 2, 6, 8];
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    for _ in 0..20 {
        let alg = random_moves(Size::Three, 15, &mut rng);
        let mut big = FaceletCube::solved(Size::Three);
        big.apply(&alg).unwrap();
        let mut small = FaceletCube::solved(Size::Two);
        small.apply(&alg).unwrap();
        let want: String = (0..6)
            .flat_map(|f| corner_local.iter().map(move |&k| f * 9 + k))
            .map(|i| big.to_letters().as_bytes()[i] as char)
            .collect();
        assert_eq!(small.to_letters(), want, "{alg}");
    }
}

fn arb_alg(size: Size) -> impl Strategy<Value = Alg> {
    let moves = all_moves(size);
    proptest::collection::vec(0..moves.len(), 0..30)
        .prop_map(move |ix| Alg::from_moves(ix.iter().map(|&i| moves[i]).collect()))
}

fn arb_size() -> impl Strategy<Value = Size> {
    prop_oneof![Just(Size::Two), Just(Size::Three)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn move_times_inverse_is_identity(size in arb_size(), seed in any::<u64>()) {
        let moves = all_moves(size);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let start = random_state(size, &mut rng);
        for m in moves {
            let mut c = start.clone();
            c.apply(&Alg::from_moves(vec![m, m.inverse()])).unwrap();
            prop_assert_eq!(&c, &start, "{}", m);
            let q = Move::new(m.kind, Turn::Cw);
            let mut c = start.clone();
            c.apply(&Alg::from_moves(vec![q; 4])).unwrap();
            prop_assert_eq!(&c, &start, "four quarter turns of {}", q);
        }
    }

    #[test]
    fn alg_then_inverse_is_identity(size in arb_size(), alg in arb_size().prop_flat_map(arb_alg)) {
        let alg = Alg::from_moves(alg.moves().iter().copied().filter(|m| m.fits(size)).collect());
        let mut c = FaceletCube::solved(size);
        c.apply(&alg.then(&alg.inverse())).unwrap();
        prop_assert!(c.is_solved());
    }

    #[test]
    fn simplified_sequences_do_the_same(alg in arb_alg(Size::Three)) {
        let mut a = FaceletCube::solved(Size::Three);
        a.apply(&alg).unwrap();
        let mut b = FaceletCube::solved(Size::Three);
        let s = alg.simplified();
        b.apply(&s).unwrap();
        prop_assert_eq!(a, b);
        prop_assert!(s.len() <= alg.len());
        prop_assert_eq!(s.simplified(), s.clone(), "simplify is idempotent");
    }

    #[test]
    fn parse_format_round_trips(alg in arb_alg(Size::Three)) {
        prop_assert_eq!(Alg::parse(&alg.to_string()).unwrap(), alg.clone());
        prop_assert_eq!(Alg::parse(&alg.to_numeric()).unwrap(), alg);
    }

    #[test]
    fn facelet_cubie_round_trip(seed in any::<u64>()) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let f = random_state(Size::Three, &mut rng);
        let c = CubieCube::from_facelets(&f).unwrap();
        prop_assert!(c.is_solvable());
        prop_assert_eq!(c.to_facelets(), f.clone());
        prop_assert_eq!(c.multiply(&c.inverse()), CubieCube::SOLVED);
        prop_assert!(validate(&f.to_string()).is_ok());
        let p = random_state(Size::Two, &mut rng);
        let pc = cubot::cube::PocketCube::from_facelets(&p).unwrap();
        prop_assert_eq!(pc.to_facelets(), p.clone());
        prop_assert!(validate(&p.to_string()).is_ok());
    }

    #[test]
    fn cubie_moves_agree_with_sticker_moves(seed in any::<u64>(), alg in arb_alg(Size::Three)) {
        let alg = Alg::from_moves(alg.moves().iter().copied().filter(|m| matches!(m.kind, MoveKind::Face(_))).collect());
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let f = random_state(Size::Three, &mut rng);
        let mut g = f.clone();
        g.apply(&alg).unwrap();
        let c = CubieCube::from_facelets(&f).unwrap().apply_alg(&alg).unwrap();
        prop_assert_eq!(c.to_facelets(), g);
    }

    #[test]
    fn parsers_never_panic(s in "\\PC{0,80}") {
        let _ = FaceletCube::parse(&s);
        let _ = validate(&s);
        let _ = Alg::parse(&s);
        let _ = cubot::color::RawScan::from_json(&s);
    }

    #[test]
    fn parsers_never_panic_on_near_misses(s in "[URFDLBWYOG()'2 3xyzMESw]{0,70}") {
        let _ = FaceletCube::parse(&s);
        let _ = validate(&s);
        let _ = Alg::parse(&s);
    }
}

// ---- validation: one crafted state per problem ----

fn problems(s: &str) -> Vec<CubeProblem> {
    validate(s).expect_err("should be invalid").problems
}

fn swap(s: &str, i: usize, j: usize) -> String {
    let mut v: Vec<char> = s.chars().collect();
    v.swap(i, j);
    v.into_iter().collect()
}

fn set(s: &str, i: usize, c: char) -> String {
    let mut v: Vec<char> = s.chars().collect();
    v[i] = c;
    v.into_iter().collect()
}

#[test]
fn wrong_length_and_symbols() {
    let p = problems(&SOLVED[..53]);
    assert!(p[0].to_string().contains("found 53"), "{p:?}");
    let p = problems(&set(SOLVED, 0, 'X'));
    assert!(p[0].to_string().contains("more than six colours"), "{p:?}");
}

#[test]
fn colour_counts_name_the_colours() {
    let p = problems(&set(SOLVED, 0, 'R'));
    let msg = p[0].to_string();
    assert!(msg.contains("U 8") && msg.contains("R 10"), "{msg}");
}

#[test]
fn centres_not_distinct() {
    let s = set(SOLVED, 13, 'U');
    let p = problems(&s);
    assert!(
        p.iter().any(|p| matches!(p, CubeProblem::Centres { .. })),
        "{p:?}"
    );
    assert!(
        p.iter()
            .any(|p| matches!(p, CubeProblem::ColourCount { .. })),
        "{p:?}"
    );
}

#[test]
fn impossible_pieces_name_position_and_colours() {
    // U9 (corner URF) and D3 (corner DFR) swapped: URF shows D R F: with opposite... no —
    // make URF show U and D at once: put a D sticker on R1 and a R sticker on D-face.
    let s = swap(SOLVED, 9, 29); // R1 <-> D3: URF = U D F, DFR = R F R
    let p = problems(&s);
    let text: Vec<String> = p.iter().map(|x| x.to_string()).collect();
    assert!(
        text.iter()
            .any(|t| t.contains("corner URF shows UDF: two opposite colours")),
        "{text:?}"
    );
    assert!(
        text.iter()
            .any(|t| t.contains("corner DFR shows RFR: a colour twice")),
        "{text:?}"
    );
    // Edge UF made of U and D.
    let s = swap(SOLVED, 19, 28); // F2 <-> D2: UF = U D, DF = F F
    let text: Vec<String> = problems(&s).iter().map(|x| x.to_string()).collect();
    assert!(
        text.iter()
            .any(|t| t.contains("edge UF shows UD: two opposite colours")),
        "{text:?}"
    );
    assert!(
        text.iter()
            .any(|t| t.contains("edge DF shows FF: a colour twice")),
        "{text:?}"
    );
}

#[test]
fn mirrored_corner() {
    // Swap two stickers of one corner: URF reads U F R (mirror order).
    let s = swap(SOLVED, 9, 20);
    let text: Vec<String> = problems(&s).iter().map(|x| x.to_string()).collect();
    assert!(
        text.iter()
            .any(|t| t.contains("corner URF") && t.contains("mirror")),
        "{text:?}"
    );
}

#[test]
fn duplicate_and_missing_piece() {
    // Repaint the UBR corner as a second URF corner and URF... keep counts: exchange colours so
    // that UBR (U3 B1 R3) shows U R F-like colours: U3=U, B1=R, R3=F; and make up counts
    // elsewhere is not possible without more changes, so only check the piece findings.
    let mut s = set(SOLVED, 45, 'R');
    s = set(&s, 11, 'F');
    let p = problems(&s);
    let text: Vec<String> = p.iter().map(|x| x.to_string()).collect();
    assert!(
        text.iter()
            .any(|t| t.contains("URF piece (URF) appears twice, at URF and UBR")),
        "{text:?}"
    );
    assert!(
        text.iter()
            .any(|t| t.contains("UBR piece (UBR) is missing")),
        "{text:?}"
    );
}

#[test]
fn twist_flip_parity_and_two_at_once() {
    let solved = FaceletCube::solved(Size::Three);
    let mut c = CubieCube::from_facelets(&solved).unwrap();
    c.co[0] = 1;
    let p = problems(&c.to_facelets().to_string());
    assert_eq!(p, vec![CubeProblem::Twist { total: 1 }]);
    assert!(p[0].to_string().contains("a corner is twisted"));

    let mut c = CubieCube::SOLVED;
    c.eo[3] = 1;
    let p = problems(&c.to_facelets().to_string());
    assert_eq!(p, vec![CubeProblem::Flip]);
    assert!(p[0].to_string().contains("an edge is flipped"));

    let mut c = CubieCube::SOLVED;
    c.ep.swap(0, 1);
    let p = problems(&c.to_facelets().to_string());
    assert_eq!(p, vec![CubeProblem::Parity]);
    assert!(p[0].to_string().contains("two pieces are swapped"));

    let mut c = CubieCube::SOLVED;
    c.co[2] = 2;
    c.eo[5] = 1;
    c.cp.swap(6, 7);
    let p = problems(&c.to_facelets().to_string());
    assert_eq!(
        p,
        vec![
            CubeProblem::Twist { total: 2 },
            CubeProblem::Flip,
            CubeProblem::Parity
        ]
    );
}

#[test]
fn other_alphabets_and_pocket_cubes() {
    let wy = SOLVED
        .replace('U', "W")
        .replace('D', "Y")
        .replace('F', "G")
        .replace('R', "r")
        .replace('L', "O")
        .replace('B', "b");
    assert!(validate(&wy).is_ok());
    let mut c = CubieCube::SOLVED;
    c.co[0] = 2;
    c.co[1] = 2;
    let digits: String = c
        .to_facelets()
        .to_string()
        .chars()
        .map(|ch| (b'0' + Face::from_letter(ch).unwrap() as u8) as char)
        .collect();
    assert_eq!(problems(&digits), vec![CubeProblem::Twist { total: 1 }]);

    // 2x2x2: any orientation is fine; a twisted corner is not.
    assert!(validate("UUUURRRRFFFFDDDDLLLLBBBB").is_ok());
    let mut p = cubot::cube::PocketCube::SOLVED;
    p.co[3] = 1;
    let s = p.to_facelets().to_string();
    assert_eq!(problems(&s), vec![CubeProblem::Twist { total: 1 }]);
}

#[test]
fn every_shared_random_state_is_valid() {
    for file in ["random-3x3x3-1000.txt", "random-2x2x2-1000.txt"] {
        let path = crate::support::root().join("samples/states").join(file);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut n = 0;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            assert!(validate(line).is_ok(), "{line}: {:?}", validate(line));
            n += 1;
        }
        assert_eq!(n, 1000);
    }
}
