//! The line-protocol robot: the protocol itself ([`protocol`]) and its host ([`host`]).
//!
//! Level: robot (uses `cube` and [`crate::robot::link`]). Must not depend on the MindCub3r,
//! the simulators, `job` or `cli`. No printing.

pub mod error;
pub mod host;
pub mod protocol;

pub use error::LineError;
pub use host::{LineRobot, LineTimeouts};
pub use protocol::{parse_token, token, LineCaps};
