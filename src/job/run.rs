//! A fresh run (scan, resolve, validate, then [`finish`]) and `save` (scan, resolve,
//! validate, and return the state with its colours' Lab values).
//!
//! Level: job. No printing.

use crate::color::resolve::ResolveOptions;
use crate::cube::Size;
use crate::robot::mindcub3r::cost::{Arm, RobotState};

use super::colours::color_centroids;
use super::error::RunError;
use super::execute::{finish, JournalMode, Position, Start};
use super::journal;
use super::options::RunOptions;
use super::report::{RunEvent, RunReport};
use super::robot::RunRobot;
use super::scan::scan_and_resolve;
use super::solve::Tools;
use super::target::{target_cube, SavedState};

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
        raw_colors: scanned.raw_colors.clone(),
        raw_scale: scanned.scale.map(|s| s.name().into()),
        scan_confident: first.confident,
        rescans: scanned.rescans,
        resumed: false,
        connected_cube: None,
        journal: JournalMode::Create,
        round: 1,
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
