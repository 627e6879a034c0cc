//! Cube size: the two cubes the crate models, 2x2x2 and 3x3x3.
//!
//! Level: bottom of `cube`; depends only on `std` and `serde`, never on the other `cube`
//! files, so moves, stickers and pieces can all name a size.

use std::fmt;

/// Cube size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Size {
    /// 2x2x2, 24 stickers.
    Two,
    /// 3x3x3, 54 stickers.
    Three,
}

impl Size {
    /// Edge length in cubies.
    pub fn n(self) -> usize {
        match self {
            Size::Two => 2,
            Size::Three => 3,
        }
    }

    pub fn stickers(self) -> usize {
        6 * self.n() * self.n()
    }

    pub fn per_face(self) -> usize {
        self.n() * self.n()
    }

    pub fn from_n(n: usize) -> Option<Size> {
        match n {
            2 => Some(Size::Two),
            3 => Some(Size::Three),
            _ => None,
        }
    }

    pub fn from_stickers(count: usize) -> Option<Size> {
        match count {
            24 => Some(Size::Two),
            54 => Some(Size::Three),
            _ => None,
        }
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.n();
        write!(f, "{n}x{n}x{n}")
    }
}
