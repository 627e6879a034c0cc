//! Cubie-level cubes: where each corner and edge piece is and how it is turned.
//!
//! Conventions are Kociemba's: corner slots URF UFL ULB UBR DFR DLF DBL DRB, edge slots
//! UR UF UL UB DR DF DL DB FR FL BL BR; a corner's orientation counts clockwise twists of
//! its U/D sticker away from the U/D face, an edge's is 1 when flipped. Multiplication
//! `a.multiply(&b)` is "`a`, then `b`". The face-turn cubies are derived from the sticker
//! geometry, not typed.
//!
//! Level: part of `cube`; depends on `face`, `size`, `slots`, `moves`, `notation` and
//! `facelet`. Must not depend on validation, random cubes or pictures; no I/O.

use std::sync::OnceLock;

use super::face::{Face, Turn};
use super::facelet::FaceletCube;
use super::moves::{Move, MoveKind};
use super::notation::Alg;
use super::size::Size;
use super::slots::{
    corner_sticker, identify_corner, identify_edge, CornerSlot, EdgeSlot, CORNER_FACELETS,
    EDGE_FACELETS,
};

/// A 3x3x3 at the cubie level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CubieCube {
    /// `cp[slot]` = corner piece in that slot.
    pub cp: [u8; 8],
    /// Clockwise twist 0..3 of the corner in each slot.
    pub co: [u8; 8],
    /// `ep[slot]` = edge piece in that slot.
    pub ep: [u8; 12],
    /// Flip 0..2 of the edge in each slot.
    pub eo: [u8; 12],
}

impl Default for CubieCube {
    fn default() -> Self {
        Self::SOLVED
    }
}

impl CubieCube {
    pub const SOLVED: CubieCube = CubieCube {
        cp: [0, 1, 2, 3, 4, 5, 6, 7],
        co: [0; 8],
        ep: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
        eo: [0; 12],
    };

    /// `self`, then `other`.
    pub fn multiply(&self, other: &CubieCube) -> CubieCube {
        let mut r = CubieCube::SOLVED;
        for i in 0..8 {
            let j = other.cp[i] as usize;
            r.cp[i] = self.cp[j];
            r.co[i] = (self.co[j] + other.co[i]) % 3;
        }
        for i in 0..12 {
            let j = other.ep[i] as usize;
            r.ep[i] = self.ep[j];
            r.eo[i] = (self.eo[j] + other.eo[i]) % 2;
        }
        r
    }

    pub fn inverse(&self) -> CubieCube {
        let mut r = CubieCube::SOLVED;
        for i in 0..8 {
            let p = self.cp[i] as usize;
            r.cp[p] = i as u8;
            r.co[p] = (3 - self.co[i]) % 3;
        }
        for i in 0..12 {
            let p = self.ep[i] as usize;
            r.ep[p] = i as u8;
            r.eo[p] = self.eo[i];
        }
        r
    }

    /// The cubie cube of one of the 18 face turns, derived from the sticker geometry.
    pub fn face_move(face: Face, turn: Turn) -> &'static CubieCube {
        static MOVES: OnceLock<Vec<CubieCube>> = OnceLock::new();
        let table = MOVES.get_or_init(|| {
            Move::face_moves()
                .iter()
                .map(|&mv| {
                    let mut f = FaceletCube::solved(Size::Three);
                    f.apply(&Alg::from_moves(vec![mv])).expect("face turns fit");
                    CubieCube::from_facelets(&f).expect("a face turn of the solved cube is a cube")
                })
                .collect()
        });
        &table[face.index() * 3 + turn.quarters() as usize - 1]
    }

    /// Applies a face turn (`self`, then the move).
    pub fn apply_face(&self, face: Face, turn: Turn) -> CubieCube {
        self.multiply(Self::face_move(face, turn))
    }

    /// Applies face turns; other moves (slices, rotations) move centres and are rejected.
    pub fn apply_alg(&self, alg: &Alg) -> Result<CubieCube, Move> {
        let mut c = *self;
        for &mv in alg.moves() {
            match mv.kind {
                MoveKind::Face(f) => c = c.apply_face(f, mv.turn),
                _ => return Err(mv),
            }
        }
        Ok(c)
    }

    /// Reads pieces off stickers. Returns `None` if some slot does not hold a real piece or
    /// a piece is missing; [`super::validate`] explains such cubes in detail.
    pub fn from_facelets(f: &FaceletCube) -> Option<CubieCube> {
        if f.size() != Size::Three {
            return None;
        }
        let c = f.colors();
        let mut cube = CubieCube::SOLVED;
        for (slot, stickers) in CORNER_FACELETS.iter().enumerate() {
            let cols = stickers.map(|i| c[i]);
            let (piece, twist) = identify_corner(cols)?;
            cube.cp[slot] = piece as u8;
            cube.co[slot] = twist;
        }
        for (slot, stickers) in EDGE_FACELETS.iter().enumerate() {
            let cols = stickers.map(|i| c[i]);
            let (piece, flip) = identify_edge(cols)?;
            cube.ep[slot] = piece as u8;
            cube.eo[slot] = flip;
        }
        let mut seen_c = [false; 8];
        let mut seen_e = [false; 12];
        for &p in &cube.cp {
            seen_c[p as usize] = true;
        }
        for &p in &cube.ep {
            seen_e[p as usize] = true;
        }
        (seen_c.iter().all(|&s| s) && seen_e.iter().all(|&s| s)).then_some(cube)
    }

    /// Paints the stickers (centres at home).
    pub fn to_facelets(&self) -> FaceletCube {
        let mut colors: Vec<Face> = FaceletCube::solved(Size::Three).colors().to_vec();
        for slot in 0..8 {
            let piece = CornerSlot::ALL[self.cp[slot] as usize].faces();
            let ori = self.co[slot] as usize;
            for k in 0..3 {
                colors[CORNER_FACELETS[slot][(k + ori) % 3]] = piece[k];
            }
        }
        for slot in 0..12 {
            let piece = EdgeSlot::ALL[self.ep[slot] as usize].faces();
            let ori = self.eo[slot] as usize;
            for k in 0..2 {
                colors[EDGE_FACELETS[slot][(k + ori) % 2]] = piece[k];
            }
        }
        FaceletCube::from_colors(Size::Three, colors).expect("54 stickers")
    }

    /// Sum of corner twists mod 3 (0 for a real cube).
    pub fn twist_sum(&self) -> u8 {
        self.co.iter().map(|&x| x as u32).sum::<u32>() as u8 % 3
    }

    /// Sum of edge flips mod 2 (0 for a real cube).
    pub fn flip_sum(&self) -> u8 {
        self.eo.iter().map(|&x| x as u32).sum::<u32>() as u8 % 2
    }

    /// Parity of the corner permutation (0 even, 1 odd).
    pub fn corner_parity(&self) -> u8 {
        permutation_parity(&self.cp)
    }

    /// Parity of the edge permutation (0 even, 1 odd).
    pub fn edge_parity(&self) -> u8 {
        permutation_parity(&self.ep)
    }

    /// True when the cube can be reached from solved by face turns.
    pub fn is_solvable(&self) -> bool {
        self.twist_sum() == 0 && self.flip_sum() == 0 && self.corner_parity() == self.edge_parity()
    }
}

pub(crate) fn permutation_parity(p: &[u8]) -> u8 {
    let mut inversions = 0u32;
    for i in 0..p.len() {
        for j in i + 1..p.len() {
            if p[i] > p[j] {
                inversions += 1;
            }
        }
    }
    (inversions % 2) as u8
}

/// A 2x2x2 at the cubie level: corners only, same conventions as [`CubieCube`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PocketCube {
    pub cp: [u8; 8],
    pub co: [u8; 8],
}

impl Default for PocketCube {
    fn default() -> Self {
        Self::SOLVED
    }
}

impl PocketCube {
    pub const SOLVED: PocketCube = PocketCube {
        cp: [0, 1, 2, 3, 4, 5, 6, 7],
        co: [0; 8],
    };

    pub fn multiply(&self, other: &PocketCube) -> PocketCube {
        let mut r = PocketCube::SOLVED;
        for i in 0..8 {
            let j = other.cp[i] as usize;
            r.cp[i] = self.cp[j];
            r.co[i] = (self.co[j] + other.co[i]) % 3;
        }
        r
    }

    pub fn inverse(&self) -> PocketCube {
        let mut r = PocketCube::SOLVED;
        for i in 0..8 {
            let p = self.cp[i] as usize;
            r.cp[p] = i as u8;
            r.co[p] = (3 - self.co[i]) % 3;
        }
        r
    }

    /// The corner part of a face turn.
    pub fn face_move(face: Face, turn: Turn) -> PocketCube {
        let c = CubieCube::face_move(face, turn);
        PocketCube { cp: c.cp, co: c.co }
    }

    pub fn apply_face(&self, face: Face, turn: Turn) -> PocketCube {
        self.multiply(&Self::face_move(face, turn))
    }

    /// Reads the corners off a 2x2x2's stickers (colours already mapped to faces).
    pub fn from_facelets(f: &FaceletCube) -> Option<PocketCube> {
        if f.size() != Size::Two {
            return None;
        }
        let mut cube = PocketCube::SOLVED;
        let mut seen = [false; 8];
        for slot in 0..8 {
            let cols: [Face; 3] =
                std::array::from_fn(|k| f.colors()[corner_sticker(Size::Two, slot, k)]);
            let (piece, twist) = identify_corner(cols)?;
            cube.cp[slot] = piece as u8;
            cube.co[slot] = twist;
            seen[piece] = true;
        }
        seen.iter().all(|&s| s).then_some(cube)
    }

    pub fn to_facelets(&self) -> FaceletCube {
        let mut colors = FaceletCube::solved(Size::Two).colors().to_vec();
        for slot in 0..8 {
            let piece = CornerSlot::ALL[self.cp[slot] as usize].faces();
            let ori = self.co[slot] as usize;
            for k in 0..3 {
                colors[corner_sticker(Size::Two, slot, (k + ori) % 3)] = piece[k];
            }
        }
        FaceletCube::from_colors(Size::Two, colors).expect("24 stickers")
    }

    pub fn twist_sum(&self) -> u8 {
        self.co.iter().map(|&x| x as u32).sum::<u32>() as u8 % 3
    }

    pub fn is_solvable(&self) -> bool {
        self.twist_sum() == 0
    }
}
