//! Piece slots and where their stickers sit: the corner and edge slots in Kociemba order,
//! the sticker indices of each slot, and naming a piece from the colours it shows.
//!
//! Level: bottom of `cube`, beside [`super::size`]. Both the sticker view
//! ([`super::FaceletCube`]) and the piece view ([`super::CubieCube`]) read these tables,
//! so this file must not depend on either of them (nor on moves or notation).

use std::fmt;

use super::face::Face;
use super::size::Size;

/// Corner slots (and pieces) in Kociemba order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum CornerSlot {
    URF,
    UFL,
    ULB,
    UBR,
    DFR,
    DLF,
    DBL,
    DRB,
}

impl CornerSlot {
    pub const ALL: [CornerSlot; 8] = [
        CornerSlot::URF,
        CornerSlot::UFL,
        CornerSlot::ULB,
        CornerSlot::UBR,
        CornerSlot::DFR,
        CornerSlot::DLF,
        CornerSlot::DBL,
        CornerSlot::DRB,
    ];

    /// The three faces of the slot, U/D face first, then clockwise.
    pub fn faces(self) -> [Face; 3] {
        CORNER_FACELETS[self as usize].map(|i| Face::ALL[i / 9])
    }
}

impl fmt::Display for CornerSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

/// Edge slots (and pieces) in Kociemba order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum EdgeSlot {
    UR,
    UF,
    UL,
    UB,
    DR,
    DF,
    DL,
    DB,
    FR,
    FL,
    BL,
    BR,
}

impl EdgeSlot {
    pub const ALL: [EdgeSlot; 12] = [
        EdgeSlot::UR,
        EdgeSlot::UF,
        EdgeSlot::UL,
        EdgeSlot::UB,
        EdgeSlot::DR,
        EdgeSlot::DF,
        EdgeSlot::DL,
        EdgeSlot::DB,
        EdgeSlot::FR,
        EdgeSlot::FL,
        EdgeSlot::BL,
        EdgeSlot::BR,
    ];

    pub fn faces(self) -> [Face; 2] {
        EDGE_FACELETS[self as usize].map(|i| Face::ALL[i / 9])
    }
}

impl fmt::Display for EdgeSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

/// 3x3x3 sticker indices of each corner slot: U/D sticker first, then clockwise.
pub const CORNER_FACELETS: [[usize; 3]; 8] = [
    [8, 9, 20],   // URF: U9 R1 F3
    [6, 18, 38],  // UFL: U7 F1 L3
    [0, 36, 47],  // ULB: U1 L1 B3
    [2, 45, 11],  // UBR: U3 B1 R3
    [29, 26, 15], // DFR: D3 F9 R7
    [27, 44, 24], // DLF: D1 L9 F7
    [33, 53, 42], // DBL: D7 B9 L7
    [35, 17, 51], // DRB: D9 R9 B7
];

/// 3x3x3 sticker indices of each edge slot.
pub const EDGE_FACELETS: [[usize; 2]; 12] = [
    [5, 10],  // UR
    [7, 19],  // UF
    [3, 37],  // UL
    [1, 46],  // UB
    [32, 16], // DR
    [28, 25], // DF
    [30, 43], // DL
    [34, 52], // DB
    [23, 12], // FR
    [21, 41], // FL
    [50, 39], // BL
    [48, 14], // BR
];

/// The 2x2x2 sticker index of a 3x3x3 corner sticker index.
pub(crate) fn pocket_index(i3: usize) -> usize {
    let (face, k) = (i3 / 9, i3 % 9);
    let local = match k {
        0 => 0,
        2 => 1,
        6 => 2,
        8 => 3,
        _ => unreachable!("not a corner sticker: {i3}"),
    };
    face * 4 + local
}

/// Sticker index of corner slot `slot`, sticker `k`, on a cube of `size`.
pub(crate) fn corner_sticker(size: Size, slot: usize, k: usize) -> usize {
    match size {
        Size::Three => CORNER_FACELETS[slot][k],
        Size::Two => pocket_index(CORNER_FACELETS[slot][k]),
    }
}

/// Which corner piece shows colours `cols` (in slot sticker order) and its twist.
pub(crate) fn identify_corner(cols: [Face; 3]) -> Option<(usize, u8)> {
    let ori = cols.iter().position(|&c| c == Face::U || c == Face::D)?;
    let (c1, c2) = (cols[(ori + 1) % 3], cols[(ori + 2) % 3]);
    let piece = CornerSlot::ALL.iter().position(|s| {
        let f = s.faces();
        f[0] == cols[ori] && f[1] == c1 && f[2] == c2
    })?;
    Some((piece, ori as u8))
}

/// Which edge piece shows colours `cols` (in slot sticker order) and its flip.
pub(crate) fn identify_edge(cols: [Face; 2]) -> Option<(usize, u8)> {
    EdgeSlot::ALL.iter().enumerate().find_map(|(i, s)| {
        let f = s.faces();
        if f == cols {
            Some((i, 0))
        } else if f == [cols[1], cols[0]] {
            Some((i, 1))
        } else {
            None
        }
    })
}
