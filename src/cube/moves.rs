//! Moves: every move is a `MoveKind × Turn`, and its sticker permutation is derived from
//! the geometry (see [`super::geometry`]), for either cube size.
//!
//! Level: part of `cube`; depends on `face`, `size` and `geometry`. Must not depend on
//! notation, facelet or cubie cubes; no I/O.

use std::sync::OnceLock;

use super::face::{Axis, Face, Turn};
use super::geometry::{axis_vector, layer_rotation, Permutation};
use super::size::Size;

/// A middle slice, named as in Singmaster notation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Slice {
    /// Between L and R, turning as L.
    M,
    /// Between U and D, turning as D.
    E,
    /// Between F and B, turning as F.
    S,
}

impl Slice {
    pub const ALL: [Slice; 3] = [Slice::M, Slice::E, Slice::S];

    /// The face whose direction the slice follows.
    pub fn follows(self) -> Face {
        match self {
            Slice::M => Face::L,
            Slice::E => Face::D,
            Slice::S => Face::F,
        }
    }

    pub fn letter(self) -> char {
        match self {
            Slice::M => 'M',
            Slice::E => 'E',
            Slice::S => 'S',
        }
    }
}

/// What turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MoveKind {
    /// One outer layer.
    Face(Face),
    /// An outer layer and the layer next to it (`Rw`, `r`).
    Wide(Face),
    /// A middle slice (3x3x3 only).
    Slice(Slice),
    /// The whole cube (`x`, `y`, `z`).
    Rotation(Axis),
}

/// A move: what turns, and how far.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    pub kind: MoveKind,
    pub turn: Turn,
}

impl Move {
    pub fn new(kind: MoveKind, turn: Turn) -> Move {
        Move { kind, turn }
    }

    pub fn face(face: Face, turn: Turn) -> Move {
        Move::new(MoveKind::Face(face), turn)
    }

    /// The 18 face turns in the solver's order: U U2 U' R R2 R' F … B'.
    pub fn face_moves() -> [Move; 18] {
        std::array::from_fn(|i| Move::face(Face::ALL[i / 3], Turn::ALL[i % 3]))
    }

    /// Index 0..18 of a face turn in [`Move::face_moves`] order.
    pub fn face_index(self) -> Option<usize> {
        match self.kind {
            MoveKind::Face(f) => Some(f.index() * 3 + self.turn.quarters() as usize - 1),
            _ => None,
        }
    }

    pub fn inverse(self) -> Move {
        Move::new(self.kind, self.turn.inverse())
    }

    /// Face turns in the half-turn metric (a slice counts 2, a rotation 0).
    pub fn htm(self) -> u32 {
        match self.kind {
            MoveKind::Face(_) | MoveKind::Wide(_) => 1,
            MoveKind::Slice(_) => 2,
            MoveKind::Rotation(_) => 0,
        }
    }

    /// Quarter turns of outer layers (the quarter-turn metric).
    pub fn qtm(self) -> u32 {
        self.htm() * self.turn.qtm()
    }

    /// Whether the move exists on a cube of this size (slices need a middle layer).
    pub fn fits(self, size: Size) -> bool {
        !matches!(self.kind, MoveKind::Slice(_)) || size == Size::Three
    }

    /// The sticker permutation of this move on a cube of `size`, computed once per size.
    pub fn permutation(self, size: Size) -> &'static Permutation {
        static TABLES: [OnceLock<Vec<Permutation>>; 2] = [OnceLock::new(), OnceLock::new()];
        let slot = match size {
            Size::Two => 0,
            Size::Three => 1,
        };
        let table = TABLES[slot].get_or_init(|| {
            (0..KIND_COUNT * 3)
                .map(|i| {
                    let mv = Move::new(kind_from_index(i / 3), Turn::ALL[i % 3]);
                    mv.derive_permutation(size)
                })
                .collect()
        });
        &table[kind_index(self.kind) * 3 + self.turn.quarters() as usize - 1]
    }

    fn derive_permutation(self, size: Size) -> Permutation {
        let n = size.n();
        let outer = n as i32 - 1;
        let q = self.turn.quarters();
        match self.kind {
            MoveKind::Face(f) => layer_rotation(n, f.normal(), q, |c| c == outer),
            MoveKind::Wide(f) => layer_rotation(n, f.normal(), q, |c| c >= outer - 2),
            MoveKind::Slice(s) => layer_rotation(n, s.follows().normal(), q, |c| c == 0),
            MoveKind::Rotation(a) => layer_rotation(n, axis_vector(a), q, |_| true),
        }
    }
}

const KIND_COUNT: usize = 6 + 6 + 3 + 3;

fn kind_index(kind: MoveKind) -> usize {
    match kind {
        MoveKind::Face(f) => f.index(),
        MoveKind::Wide(f) => 6 + f.index(),
        MoveKind::Slice(s) => 12 + s as usize,
        MoveKind::Rotation(a) => 15 + a.index(),
    }
}

fn kind_from_index(i: usize) -> MoveKind {
    match i {
        0..=5 => MoveKind::Face(Face::ALL[i]),
        6..=11 => MoveKind::Wide(Face::ALL[i - 6]),
        12..=14 => MoveKind::Slice(Slice::ALL[i - 12]),
        _ => MoveKind::Rotation(Axis::ALL[i - 15]),
    }
}
