//! Seeded random cubes and scrambles. Every function takes the random generator, so a seed
//! reproduces its output.
//!
//! Level: part of `cube`; depends on `face`, `size`, `moves`, `notation`, `facelet` and
//! `cubie`. Must not depend on anything outside `cube`; no I/O.

use rand::seq::SliceRandom;
use rand::Rng;

use super::cubie::{permutation_parity, CubieCube, PocketCube};
use super::face::{Face, Turn};
use super::facelet::FaceletCube;
use super::moves::Move;
use super::notation::Alg;
use super::size::Size;

/// A uniformly random 3x3x3 (centres at home) or 2x2x2 (DBL corner at home, which fixes
/// the 2x2x2's free orientation), as stickers.
pub fn random_state<R: Rng + ?Sized>(size: Size, rng: &mut R) -> FaceletCube {
    match size {
        Size::Three => random_cubie(rng).to_facelets(),
        Size::Two => random_pocket(rng).to_facelets(),
    }
}

/// A uniformly random solvable 3x3x3.
pub fn random_cubie<R: Rng + ?Sized>(rng: &mut R) -> CubieCube {
    let mut c = CubieCube::SOLVED;
    c.cp.shuffle(rng);
    c.ep.shuffle(rng);
    if permutation_parity(&c.cp) != permutation_parity(&c.ep) {
        c.ep.swap(0, 1);
    }
    for i in 0..7 {
        c.co[i] = rng.gen_range(0..3);
    }
    c.co[7] = (3 - c.co[..7].iter().map(|&x| x as u32).sum::<u32>() % 3) as u8 % 3;
    for i in 0..11 {
        c.eo[i] = rng.gen_range(0..2);
    }
    c.eo[11] = (c.eo[..11].iter().map(|&x| x as u32).sum::<u32>() % 2) as u8;
    c
}

/// A uniformly random 2x2x2 with the DBL corner solved.
pub fn random_pocket<R: Rng + ?Sized>(rng: &mut R) -> PocketCube {
    const DBL: usize = 6;
    let mut others: Vec<u8> = (0..8).filter(|&p| p != DBL as u8).collect();
    others.shuffle(rng);
    let mut c = PocketCube::SOLVED;
    let mut it = others.into_iter();
    for slot in 0..8 {
        if slot != DBL {
            c.cp[slot] = it.next().expect("seven pieces");
        }
    }
    let mut sum = 0u32;
    let last = if DBL == 7 { 6 } else { 7 };
    for slot in 0..8 {
        if slot != DBL && slot != last {
            c.co[slot] = rng.gen_range(0..3);
            sum += c.co[slot] as u32;
        }
    }
    c.co[last] = ((3 - sum % 3) % 3) as u8;
    c
}

/// A random sequence of `len` face turns with no two consecutive turns of one face and no
/// three consecutive turns of one axis. On a 2x2x2 only U, R and F turn (the DBL corner
/// stays put), as is usual for 2x2x2 scrambles.
pub fn random_moves<R: Rng + ?Sized>(size: Size, len: usize, rng: &mut R) -> Alg {
    let faces: &[Face] = match size {
        Size::Three => &Face::ALL,
        Size::Two => &[Face::U, Face::R, Face::F],
    };
    let mut moves: Vec<Move> = Vec::with_capacity(len);
    while moves.len() < len {
        let f = faces[rng.gen_range(0..faces.len())];
        let n = moves.len();
        let face_of = |m: &Move| match m.kind {
            super::moves::MoveKind::Face(f) => f,
            _ => unreachable!("only face turns here"),
        };
        if n >= 1 && face_of(&moves[n - 1]) == f {
            continue;
        }
        if n >= 2
            && face_of(&moves[n - 1]).axis() == f.axis()
            && face_of(&moves[n - 2]).axis() == f.axis()
        {
            continue;
        }
        moves.push(Move::face(f, Turn::ALL[rng.gen_range(0..3)]));
    }
    Alg::from_moves(moves)
}
