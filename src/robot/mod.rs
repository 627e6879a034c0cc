//! The robot, in layers: a byte link ([`link`]) under two robots, the LEGO EV3 MindCub3r
//! ([`ev3`]: the direct-command codec and driver; [`mindcub3r`]: the machine, its scan and
//! its motion planner) and the line-protocol robot ([`mod@line`]); the simulators of both on a
//! pseudo-terminal ([`sim`]); and whole-cube symmetries shared by the planners
//! ([`symmetry`]). The whole job on a robot (scan to verified cube, with its journal) is the
//! level above, `job`.
//!
//! ```text
//!   mindcub3r ──▶ ev3 ──▶ link ◀── line          sim ──▶ ev3::protocol, line::protocol
//!        └──────────▶ symmetry ◀──────┘
//! ```
//!
//! Level: depends on `cube`, `solver` (N-best selection) and `color` (the simulator's
//! sensor model). Must not depend on `scan` or `cli`. No printing.

pub mod ev3;
pub mod line;
pub mod link;
pub mod mindcub3r;
pub mod sim;
pub mod symmetry;
