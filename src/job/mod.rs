//! The whole job as a library: scan → resolve (re-scanning doubtful stickers) → validate →
//! solve to the target (from the symmetric variants of the problem) → plan the cheapest
//! execution for this robot → execute with a journal → verify; and `save` (scan and store a
//! state), `restore` (a run to a saved state) and `resume` (finish what a journal records).
//! `cubot run`, `save`, `restore` and `bench robot` are thin layers over this.
//!
//! | file          | what                                                                |
//! |---------------|---------------------------------------------------------------------|
//! | `connect`     | a robot over a serial port, or a simulator started on a pty          |
//! | `robot`       | [`RunRobot`]: what the job needs of a robot; [`RobotPlan`]           |
//! | `line`        | the line-protocol robot                                              |
//! | `mindcub3r`   | the MindCub3r                                                        |
//! | `camera`      | a camera over either robot's top face (feature `vision`)             |
//! | `scan`        | scan and resolve with re-reads; matching colours between scans       |
//! | `target`      | the target: solved, a state, or a saved state; saved-state files     |
//! | `solve`       | candidates from the solver, and its robot-cost search                |
//! | `execute`     | [`finish`]: solve, plan, execute with the journal, verify, report    |
//! | `verify`      | the final state: simulator read-back, re-scan, or tracking only      |
//! | `journal`     | the execution journal (JSON Lines) and reading it back               |
//! | `error`       | [`RunError`]                                                         |
//!
//! Level: job: above `robot`, `scan`, `solver`, `color` and `cube`, which must not depend
//! on it; only `cli` does. No printing: progress goes to a [`RunEvent`] callback.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde::Serialize;

use crate::color::resolve::ResolveOptions;
use crate::cube::Size;
use crate::robot::planner::{Arm, RobotState};

#[cfg(feature = "vision")]
pub mod camera;
pub mod connect;
pub mod error;
pub mod execute;
pub mod journal;
pub mod line;
pub mod mindcub3r;
pub mod robot;
pub mod scan;
pub mod solve;
pub mod target;
pub mod verify;

pub use connect::{connect, ConnectError, ConnectOptions, Link, RobotKind, ScannerKind};
pub use error::RunError;
pub use execute::{finish, resume_start, Position, Start};
pub use robot::{RobotPlan, RunRobot};
pub use scan::{color_centroids, scan_and_resolve, Resolved, Scanned};
pub use solve::Tools;
pub use target::{read_saved, target_cube, SavedState, TargetError, TargetSpec};

/// Progress of a run.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum RunEvent {
    ScanProgress {
        done: usize,
        total: usize,
    },
    Scanned {
        confident: bool,
        doubtful: Vec<usize>,
        rescans: usize,
        state: String,
    },
    Solved {
        candidates: usize,
        shortest: usize,
    },
    Planned {
        solution: String,
        face_turns: usize,
        actions: usize,
        robot_seconds: f64,
        baseline_seconds: Option<f64>,
    },
    Executing {
        done: usize,
        total: usize,
        robot_seconds: f64,
    },
    Verifying {
        by: String,
    },
}

/// Options of a run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub size: Size,
    /// The target colouring, in the first scan's symbols; solved when `None`.
    pub target: Option<TargetSpec>,
    /// Solutions asked of the solver per symmetric variant.
    pub solutions: usize,
    /// Solve the 24 rotated variants of the problem too (and with `mirror` their mirror
    /// images); otherwise only the problem as posed.
    pub symmetries: bool,
    pub mirror: bool,
    pub inverse: bool,
    pub max_rescans: usize,
    pub journal: PathBuf,
    /// Set (e.g. by Ctrl-C) to stop after the current action.
    pub stop: Arc<AtomicBool>,
}

/// The final report.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    pub reached_target: bool,
    /// Cube frame of the first scan, first-scan symbols.
    pub final_state: String,
    pub target: String,
    pub first_scan: String,
    pub face_turns: usize,
    pub robot_seconds: f64,
    pub baseline_seconds: Option<f64>,
    pub solution: String,
    pub actions: usize,
    pub candidates: usize,
    pub scan_confident: bool,
    pub rescans: usize,
    pub verified_by: String,
    pub journal: PathBuf,
    pub robot: String,
    pub resumed: bool,
}

/// A fresh run: scan, resolve, validate, then [`finish`].
pub fn run(
    robot: &mut dyn RunRobot,
    tools: &Tools,
    opts: &RunOptions,
    events: &mut dyn FnMut(RunEvent),
) -> Result<RunReport, RunError> {
    let scanned = scan_and_resolve(robot, &tools.resolve, opts.size, opts.max_rescans, events)?;
    let first = &scanned.resolved;
    crate::cube::validate(&first.cube.to_letters())?;
    let target = target_cube(first, opts.target.as_ref())?;
    let start = Start {
        position: Position {
            cube: first.cube.clone(),
            robot: RobotState {
                orientation: scanned.orientation,
                arm: Arm::Away,
                turntable: 0,
            },
            first_scan: first.cube.clone(),
            target,
        },
        first_colors: color_centroids(first),
        scan_confident: first.confident,
        rescans: scanned.rescans,
        resumed: false,
    };
    finish(robot, tools, &start, opts, events)
}

/// Scans and returns what `cubot save` stores.
pub fn save(
    robot: &mut dyn RunRobot,
    resolve: &ResolveOptions,
    size: Size,
    max_rescans: usize,
    calibration: serde_json::Value,
    events: &mut dyn FnMut(RunEvent),
) -> Result<SavedState, RunError> {
    let first = scan_and_resolve(robot, resolve, size, max_rescans, events)?.resolved;
    crate::cube::validate(&first.cube.to_letters())?;
    Ok(SavedState {
        version: 1,
        saved: journal::now_rfc3339(),
        size: size.n() as u32,
        state: first.cube.to_string(),
        colors: color_centroids(&first),
        calibration,
    })
}
