//! The LEGO MINDSTORMS EV3 brick: the direct-command codec ([`protocol`], pure) and the
//! driver that exchanges commands with a brick ([`driver`]).
//!
//! Level: robot (uses [`crate::robot::link`]). Must not depend on the MindCub3r, the
//! simulators, `job` or `cli`. No printing.

pub mod driver;
pub mod link;
pub mod protocol;
