//! The simulators: a simulated EV3 MindCub3r brick ([`brick`]) and a simulated
//! line-protocol robot ([`mod@line`]), each a peer of one pseudo-terminal server ([`pty`]) so a
//! host talks to them through the same link it would use for the real robot.
//!
//! Level: robot (uses `cube`, `color::synth` and the protocol modules
//! [`crate::robot::ev3::protocol`] and [`crate::robot::line::protocol`]). Must not depend on
//! the hosts' drivers, `job` or `cli`. No printing.

pub mod brick;
pub mod config;
pub mod line;
pub mod link;
pub mod lms2012;
pub mod misread;
pub mod pty;
pub mod world;

pub use brick::{spawn_hid, spawn_pty, starting_cube, SimHandle};
pub use config::{Dropout, Faults, Port, SimConfig, SimError};
pub use world::Physics;
