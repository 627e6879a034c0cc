//! A fresh run (scan, resolve, validate, then [`finish`](super::execute::finish)) and `save` (scan, resolve,
//! validate, and return the state with its colours' Lab values).
//!
//! ## Thinking while the last face is read
//!
//! A robot that reads its faces one by one (the MindCub3r) hands the readings of all but
//! the last to [`RunRobot::scan_with_preview`] before it reads the last (about 3 s on the
//! MindCub3r). The run resolves those five faces (the resolver fills in an unread face from
//! the cube's rules, `color::resolve`) and, when it is sure of a legal cube, solves and
//! plans for it on another thread ([`think`], on [`RunRobot::planning`]'s copy of the
//! robot's planning) while the robot reads on. The six faces decide: the plan thought
//! ahead is used only when the whole scan resolves to the same cube and target, with no
//! re-read between (which would move the cube), from the same robot state; otherwise the
//! run thinks again as it always would. So five faces never choose a cube, they only save
//! the wait: the sixth face is never given up (five faces leave about one random cube in
//! ten undecided, and their margins are less sure). A scan that fails ends the early
//! search at once.
//!
//! Level: job. No printing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::color::raw::RawScan;
use crate::color::resolve::{resolve, ResolveOptions};
use crate::cube::{FaceletCube, Size};
use crate::robot::mindcub3r::cost::{Arm, RobotState};
use crate::robot::mindcub3r::model::Orientation;
use crate::solver::costed::CostedOptions;

use super::colours::{color_centroids, Resolved};
use super::error::RunError;
use super::execute::{finish_thought, think, JournalMode, Position, Start, Thought};
use super::journal;
use super::options::RunOptions;
use super::report::{RunEvent, RunReport};
use super::robot::{Planning, RunRobot};
use super::scan::{scan_and_resolve, scan_and_resolve_previewed};
use super::solve::Tools;
use super::target::{target_cube, SavedState};

/// The position a fresh scan gives: its cube, the robot as the scan leaves it (`end`,
/// relative to where the scan began, the arm away), the target for it.
fn position(first: &Resolved, end: Orientation, target: FaceletCube) -> Position {
    Position {
        cube: first.cube.clone(),
        robot: RobotState {
            orientation: end,
            arm: Arm::Away,
            turntable: 0,
        },
        first_scan: first.cube.clone(),
        target,
    }
}

/// The search thought ahead may run this many times its budget while the last face is
/// read (it is cancelled once the scan has ended and the budget has passed).
const AHEAD_SEARCH_FACTOR: u32 = 4;

/// A plan thought ahead from five faces, and the cube and target it is for.
struct Ahead {
    cube: FaceletCube,
    target: FaceletCube,
    thought: Thought,
}

/// Thinks from the scan before its last face (see the module docs): `None` unless the
/// readings give a legal cube surely.
fn think_ahead(
    plans: &dyn Planning,
    tools: &Tools,
    opts: &RunOptions,
    partial: &RawScan,
    end: Orientation,
    cancel: Arc<AtomicBool>,
) -> Option<Ahead> {
    let r = resolve(partial, &tools.resolve).ok()?;
    if !r.confident {
        return None;
    }
    let first = Resolved::from(&r);
    crate::cube::validate(&first.cube.to_letters()).ok()?;
    let target = target_cube(&first, opts.target.as_ref()).ok()?;
    let pos = position(&first, end, target.clone());
    // The robot-cost search may go on until the scan has ended and its own budget has
    // passed (`run` cancels it then), whichever is later.
    let tools = Tools {
        search: tools.search.clone().map(|s| CostedOptions {
            cancel: Some(cancel),
            time_limit: s.time_limit * AHEAD_SEARCH_FACTOR,
            ..s
        }),
        ..tools.clone()
    };
    let thought = think(plans, &tools, &pos, opts, &mut |_, _| {}).ok()?;
    Some(Ahead {
        cube: first.cube,
        target,
        thought,
    })
}

/// The plan thought ahead, if it is for `position` exactly: the same cube and target, the
/// same robot state, no re-read between (it would have moved the cube).
fn adopt(ahead: Option<Ahead>, rescans: usize, position: &Position) -> Option<Thought> {
    ahead
        .filter(|a| {
            rescans == 0
                && a.cube == position.cube
                && a.target == position.target
                && *a.thought.start() == position.robot
        })
        .map(|a| a.thought)
}

/// A fresh run: scan, resolve, validate, then [`finish`](super::execute::finish) (planning while the last face
/// is read, where the robot allows; see the module docs).
pub fn run(
    robot: &mut dyn RunRobot,
    tools: &Tools,
    opts: &RunOptions,
    events: &mut dyn FnMut(RunEvent),
) -> Result<RunReport, RunError> {
    let lock = super::journal::Journal::begin(
        &opts.journal,
        &super::journal::JournalBegun {
            version: super::journal::VERSION,
            created: super::journal::now_rfc3339(),
            robot: robot.kind().into(),
            size: opts.size,
            connection: opts.connection.clone(),
        },
    )?;
    let result = scan_and_finish(robot, tools, opts, events);
    if let Err(e) = &result {
        // Best effort: the stop itself is what the caller must hear of.
        let _ =
            super::journal::Journal::stopped_before_turning(&opts.journal, &lock, &e.to_string());
    }
    result
}

/// [`run`] once its journal has begun.
fn scan_and_finish(
    robot: &mut dyn RunRobot,
    tools: &Tools,
    opts: &RunOptions,
    events: &mut dyn FnMut(RunEvent),
) -> Result<RunReport, RunError> {
    let planning = robot.planning();
    let cancel = Arc::new(AtomicBool::new(false));
    let (scanned, ahead) = std::thread::scope(|s| {
        let mut handle = None;
        let scanned = scan_and_resolve_previewed(
            robot,
            &tools.resolve,
            opts.size,
            opts.max_rescans,
            events,
            &mut |partial, end| {
                if let (Some(plans), None) = (planning.as_deref(), handle.as_ref()) {
                    let partial = partial.clone();
                    let cancel = cancel.clone();
                    handle = Some((
                        Instant::now(),
                        s.spawn(move || think_ahead(plans, tools, opts, &partial, end, cancel)),
                    ));
                }
            },
        );
        // The search thought ahead ends now, or once its own budget has passed; one on a
        // node budget (deterministic) runs to its end, unless the scan failed.
        match (&scanned, handle.as_ref(), tools.search.as_ref()) {
            (Ok(_), Some(_), Some(search)) if search.max_nodes.is_some() => {}
            (Ok(_), Some((began, _)), Some(search)) => {
                std::thread::sleep(search.time_limit.saturating_sub(began.elapsed()));
                cancel.store(true, Ordering::SeqCst);
            }
            _ => cancel.store(true, Ordering::SeqCst),
        }
        let handle = handle.map(|(_, h)| h);
        let ahead = handle.and_then(|h| h.join().ok().flatten());
        (scanned, ahead)
    });
    let scanned = scanned?;
    let first = &scanned.resolved;
    crate::cube::validate(&first.cube.to_letters())?;
    let target = target_cube(first, opts.target.as_ref())?;
    let position = position(first, scanned.orientation, target);
    let ready = adopt(ahead, scanned.rescans, &position);
    let start = Start {
        position,
        first_colors: color_centroids(first),
        raw_colors: scanned.raw_colors.clone(),
        raw_scale: scanned.scale.map(|s| s.name().into()),
        scan_confident: first.doubt.confident,
        rescans: scanned.rescans,
        resumed: false,
        connected_cube: None,
        journal: JournalMode::Create,
        round: 1,
    };
    finish_thought(robot, tools, &start, opts, events, ready)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::colours::ScanDoubt;
    use crate::job::robot::RobotPlan;

    #[test]
    fn a_plan_thought_ahead_is_used_only_for_the_very_position_it_was_made_for() {
        let cube = |moves: &str| {
            let mut c = FaceletCube::solved(Size::Three);
            c.apply(&moves.parse().unwrap()).unwrap();
            Resolved {
                cube: c,
                doubt: ScanDoubt {
                    confident: true,
                    ..ScanDoubt::default()
                },
                labs: vec![[50.0, 0.0, 0.0]; 54],
            }
        };
        let solved = FaceletCube::solved(Size::Three);
        let end = Orientation::IDENTITY.after(crate::robot::mindcub3r::model::Primitive::Tilt);
        let ahead = |r: &Resolved, o: Orientation, target: &FaceletCube| {
            let pos = position(r, o, target.clone());
            Some(Ahead {
                cube: r.cube.clone(),
                target: target.clone(),
                thought: Thought::of_plan(RobotPlan {
                    alg: "F U' R'".parse().unwrap(),
                    actions: vec![],
                    seconds: 3.0,
                    baseline_seconds: None,
                    chosen: 0,
                    start: pos.robot,
                }),
            })
        };
        let (a, b) = (cube("R U F"), cube("R U F'"));
        let here = position(&a, end, solved.clone());
        assert!(adopt(ahead(&a, end, &solved), 0, &here).is_some());
        // Another cube (the last face told otherwise), a re-read between, another start,
        // another target: thought again.
        assert!(adopt(ahead(&b, end, &solved), 0, &here).is_none());
        assert!(adopt(ahead(&a, end, &solved), 1, &here).is_none());
        assert!(adopt(ahead(&a, Orientation::IDENTITY, &solved), 0, &here).is_none());
        assert!(adopt(ahead(&a, end, &b.cube), 0, &here).is_none());
        assert!(adopt(None, 0, &here).is_none());
    }
}
