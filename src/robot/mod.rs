//! The robot: EV3 direct-command protocol (pure), transports, the MindCub3r driver and
//! primitives, the motion planner, the line-protocol robot, and the simulators that speak
//! the same protocols on a pseudo-terminal.
//!
//! Level: depends on `cube`, `solver` (N-best selection) and `color` (the simulator's
//! sensor model). No printing.

pub mod ev3;
pub mod frames;
pub mod line;
pub mod line_sim;
pub mod mindcub3r;
pub mod model;
pub mod planner;
pub mod protocol;
pub mod sim;
pub mod transport;
