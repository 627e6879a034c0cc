//! Faces, axes and turn amounts: the vocabulary every move is derived from.
//!
//! Level: bottom of `cube`; depends on nothing. Must not depend on anything outside `cube`; no I/O.

use std::fmt;

/// A face of the cube, in Kociemba's URFDLB order (the order of facelet strings).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Face {
    U = 0,
    R = 1,
    F = 2,
    D = 3,
    L = 4,
    B = 5,
}

impl Face {
    /// All six faces in URFDLB order.
    pub const ALL: [Face; 6] = [Face::U, Face::R, Face::F, Face::D, Face::L, Face::B];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn from_index(i: usize) -> Option<Face> {
        Face::ALL.get(i).copied()
    }

    pub fn letter(self) -> char {
        ['U', 'R', 'F', 'D', 'L', 'B'][self.index()]
    }

    pub fn from_letter(c: char) -> Option<Face> {
        Face::ALL.iter().copied().find(|f| f.letter() == c)
    }

    /// The face on the other side of the cube.
    pub fn opposite(self) -> Face {
        Face::ALL[(self.index() + 3) % 6]
    }

    /// The axis this face lies on (U/D → y, R/L → x, F/B → z).
    pub fn axis(self) -> Axis {
        match self {
            Face::R | Face::L => Axis::X,
            Face::U | Face::D => Axis::Y,
            Face::F | Face::B => Axis::Z,
        }
    }

    /// +1 for U, R, F (the positive end of their axis), −1 for D, L, B.
    pub fn sign(self) -> i32 {
        if self.index() < 3 {
            1
        } else {
            -1
        }
    }

    /// Outward normal as an integer vector (x right, y up, z towards the viewer).
    pub fn normal(self) -> [i32; 3] {
        let mut v = [0; 3];
        v[self.axis().index()] = self.sign();
        v
    }

    /// The face whose outward normal is `v` (a unit axis vector).
    pub fn from_normal(v: [i32; 3]) -> Option<Face> {
        Face::ALL.iter().copied().find(|f| f.normal() == v)
    }
}

impl fmt::Display for Face {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.letter())
    }
}

/// A rotation axis. `X` follows R, `Y` follows U, `Z` follows F (as the rotations `x y z`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Axis {
    X = 0,
    Y = 1,
    Z = 2,
}

impl Axis {
    pub const ALL: [Axis; 3] = [Axis::X, Axis::Y, Axis::Z];

    pub fn index(self) -> usize {
        self as usize
    }

    /// The face at the positive end of the axis (R, U, F).
    pub fn positive_face(self) -> Face {
        match self {
            Axis::X => Face::R,
            Axis::Y => Face::U,
            Axis::Z => Face::F,
        }
    }
}

/// How far a layer turns: clockwise quarter, half, or anticlockwise quarter, seen from
/// the face the move is named after.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Turn {
    Cw = 1,
    Half = 2,
    Ccw = 3,
}

impl Turn {
    pub const ALL: [Turn; 3] = [Turn::Cw, Turn::Half, Turn::Ccw];

    /// Number of clockwise quarter turns (1, 2, 3).
    pub fn quarters(self) -> u8 {
        self as u8
    }

    /// Turn from a number of clockwise quarter turns; `None` for a multiple of four.
    pub fn from_quarters(q: i32) -> Option<Turn> {
        match q.rem_euclid(4) {
            1 => Some(Turn::Cw),
            2 => Some(Turn::Half),
            3 => Some(Turn::Ccw),
            _ => None,
        }
    }

    pub fn inverse(self) -> Turn {
        Turn::from_quarters(4 - self.quarters() as i32).expect("non-zero")
    }

    /// Cost in the quarter-turn metric.
    pub fn qtm(self) -> u32 {
        if self == Turn::Half {
            2
        } else {
            1
        }
    }

    /// Singmaster suffix: "", "2", "'".
    pub fn suffix(self) -> &'static str {
        match self {
            Turn::Cw => "",
            Turn::Half => "2",
            Turn::Ccw => "'",
        }
    }
}
