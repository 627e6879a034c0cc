//! What driving the MindCub3r can fail with.
//!
//! Level: robot (wraps [`crate::robot::ev3`]'s errors). No printing.

use crate::robot::ev3::driver::Ev3Error;

/// Robot-level errors.
#[derive(Debug, thiserror::Error)]
pub enum RobotError {
    #[error(transparent)]
    Ev3(#[from] Ev3Error),
    #[error("calibration {path}: {why}")]
    Config { path: String, why: String },
    #[error("interrupted after {after}; motors stopped; {state}")]
    Interrupted { after: String, state: String },
    #[error("{0}")]
    Precondition(String),
}
