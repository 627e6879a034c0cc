//! The LEGO MINDSTORMS EV3 MindCub3r: its primitives and orientations, its calibration, the
//! machine that drives it over [`crate::robot::ev3`], the colour-sensor scan, the motion
//! planner that turns a face-turn solution into the cheapest primitives, and the frames a
//! run moves between.
//!
//! Level: robot (uses `cube`, `solver::costed`, `color::raw`, [`crate::robot::ev3`] and
//! [`crate::robot::symmetry`]). Must not depend on `job`, `scan` or `cli`. No printing.

pub mod config;
pub mod cost;
pub mod error;
pub mod frames;
pub mod machine;
pub mod model;
pub mod planner;
pub mod scan;

pub use config::Config;
pub use error::RobotError;
pub use machine::MindCub3r;
pub use scan::scan_steps;
