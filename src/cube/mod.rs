//! The cube model: faces, facelets, cubies, moves, notation, validation, pictures.
//!
//! Level: bottom of the crate. Depends on nothing else in the crate and does no I/O; must
//! not import from `solver`, `color`, `scan`, `robot`, `job` or `cli`. Inside, the files form a
//! chain: `face`, `size` → `geometry`, `slots` → `moves` → `notation` → `facelet` →
//! `cubie` → `validate`, `random`, `net`.
//!
//! ## Facelet numbering (the one diagram)
//!
//! Facelet strings list the stickers in Kociemba's URFDLB order, each face row by row as
//! drawn in this net (3x3x3 shown; a 2x2x2 keeps only the corner stickers, 4 per face,
//! in the same order):
//!
//! ```text
//!              |U1 U2 U3|
//!              |U4 U5 U6|
//!              |U7 U8 U9|
//!     |L1 L2 L3|F1 F2 F3|R1 R2 R3|B1 B2 B3|
//!     |L4 L5 L6|F4 F5 F6|R4 R5 R6|B4 B5 B6|
//!     |L7 L8 L9|F7 F8 F9|R7 R8 R9|B7 B8 B9|
//!              |D1 D2 D3|
//!              |D4 D5 D6|
//!              |D7 D8 D9|
//! ```
//!
//! String index = face index × n² + (row × n + column), faces U=0 R=1 F=2 D=3 L=4 B=5.

mod cubie;
mod face;
mod facelet;
mod geometry;
mod moves;
mod net;
mod notation;
mod proof;
mod random;
mod size;
mod slots;
mod validate;

pub use cubie::{CubieCube, PocketCube};
pub use face::{Axis, Face, Turn};
pub use facelet::{sticker_name, FaceletCube, ParseError};
pub use geometry::Permutation;
pub use moves::{Move, MoveKind, Slice};
pub use net::{net_svg, net_text, NetStyle};
pub use notation::{Alg, NotationError};
pub use proof::{face_mask, prove, rotation_permutations, Proof, NODE_LIMIT};
pub use random::{random_moves, random_pocket, random_state};
pub use size::Size;
pub(crate) use slots::corner_sticker;
pub use slots::{CornerSlot, EdgeSlot, CORNER_FACELETS, EDGE_FACELETS};
pub use validate::{validate, CubeProblem, InvalidCube};
