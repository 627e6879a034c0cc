//! The robot: EV3 direct-command protocol (pure), transports, the MindCub3r driver and
//! primitives, the motion planner, the line-protocol robot, and the simulators that speak
//! the same protocols on a pseudo-terminal.
//!
//! Level: depends on `cube`, `solver` (N-best selection) and `color` (the simulator's
//! sensor model). No printing.

pub mod ev3;
pub mod journal;
pub mod line;
pub mod link;
pub mod mindcub3r;
pub mod pipeline;
pub mod sim;
pub mod symmetry;
