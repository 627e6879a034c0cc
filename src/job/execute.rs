//! From a known position to the report: align the target, solve, plan, execute with a
//! journal, verify. [`finish`] reads as those steps; a fresh run gets its position from a
//! scan (`job::run`), a resumed one from its journal ([`resume_position`]).
//!
//! Level: job. No printing: progress goes to the [`RunEvent`] callback.

use std::sync::atomic::Ordering;

use crate::cube::FaceletCube;
use crate::robot::mindcub3r::cost::{Arm, RobotState};
use crate::robot::mindcub3r::frames::{align_target, to_cube, to_robot};
use crate::robot::mindcub3r::model::Orientation;

use super::error::RunError;
use super::journal::{self, Action, Journal, JournalRecord, JournalStart};
use super::options::RunOptions;
use super::report::{RunEvent, RunReport};
use super::robot::{apply_action, orientation_after, RobotPlan, RunRobot};
use super::solve::{add_robot_cost_solutions, solve_candidates, Tools};
use super::target::TargetError;
use super::verify::{final_cube, judge, Belief};

/// Where execution starts from: the cube in its scan's (first-scan) frame and naming, the
/// robot's state, and what the journal should record.
#[derive(Clone, Debug)]
pub struct Position {
    /// Cube frame of the first scan.
    pub cube: FaceletCube,
    pub robot: RobotState,
    pub first_scan: FaceletCube,
    pub target: FaceletCube,
}

/// Everything [`finish`] starts from: the position and what is known of the first scan.
#[derive(Clone, Debug)]
pub struct Start {
    pub position: Position,
    /// Mean Lab per symbol of the first scan (to match a verifying re-scan's colours).
    pub first_colors: Vec<(char, [f64; 3])>,
    pub scan_confident: bool,
    pub rescans: usize,
    /// A run resumed from its journal (no scan in this process).
    pub resumed: bool,
}

/// The position a journal left (for `--resume`): a resumed run has not scanned, so its
/// first scan counts as confident with no re-scans.
pub fn resume_start(rec: &JournalRecord) -> Result<Start, RunError> {
    Ok(Start {
        position: resume_position(rec)?,
        first_colors: rec.start.colors.clone(),
        scan_confident: true,
        rescans: 0,
        resumed: true,
    })
}

/// The position a journal left.
pub fn resume_position(rec: &JournalRecord) -> Result<Position, RunError> {
    let symbols = rec.symbols;
    let first_scan = journal::decode(&rec.start.first_scan, &symbols)
        .ok_or(TargetError::Journal("first_scan"))?;
    let target =
        journal::decode(&rec.start.target, &symbols).ok_or(TargetError::Journal("target"))?;
    Ok(Position {
        cube: to_cube(&rec.state, &rec.orientation),
        robot: RobotState {
            orientation: rec.orientation,
            arm: Arm::Away,
            turntable: 0,
        },
        first_scan,
        target,
    })
}

/// Solves, plans and executes from a known position, journaling every action, then
/// verifies.
pub fn finish(
    robot: &mut dyn RunRobot,
    tools: &Tools,
    start: &Start,
    opts: &RunOptions,
    events: &mut dyn FnMut(RunEvent),
) -> Result<RunReport, RunError> {
    let pos = &start.position;
    let aligned = align_target(&pos.cube, &pos.target).ok_or(TargetError::Centres)?;
    let cands = solve_candidates(tools, &pos.cube, &aligned, opts)?;
    events(RunEvent::Solved {
        candidates: cands.len(),
        shortest: cands.iter().map(|a| a.len()).min().unwrap_or(0),
    });
    let cands = add_robot_cost_solutions(robot, tools, &pos.cube, &aligned, &pos.robot, cands)?;
    let plan = robot.plan(&cands, &pos.robot)?;
    events(RunEvent::Planned {
        solution: plan.alg.to_string(),
        face_turns: plan.alg.len(),
        actions: plan.actions.len(),
        robot_seconds: plan.seconds,
        baseline_seconds: plan.baseline_seconds,
    });
    let mut run = Execution::begin(robot.kind(), start, &plan, opts)?;
    let executing = std::time::Instant::now();
    run.execute(robot, &plan, opts, events)?;
    let measured = executing.elapsed().as_secs_f64();
    let symbols = pos.first_scan.symbols();
    // What the host believes a simulator's initial cube is: the first scan (a fresh run
    // scans from the simulator's start) or this execution's start (a resumed simulator
    // starts from the journal's cube).
    let initial = if start.resumed {
        &run.initial
    } else {
        &pos.first_scan
    };
    let belief = Belief {
        tracked: &run.tracked,
        orientation: run.orientation,
        initial,
        symbols,
        first_colors: &start.first_colors,
    };
    let (cube, verified_by) = final_cube(robot, &belief, &tools.resolve, opts.max_rescans, events)?;
    let (reached, final_state, target) = judge(&cube, verified_by, &pos.first_scan, &pos.target);
    run.journal.end(reached)?;
    Ok(RunReport {
        reached_target: reached,
        final_state: journal::encode(&final_state, &symbols),
        target: journal::encode(&target, &symbols),
        first_scan: journal::encode(&pos.first_scan, &symbols),
        face_turns: plan.alg.len(),
        robot_seconds: plan.seconds,
        measured_seconds: Some(measured),
        baseline_seconds: plan.baseline_seconds,
        solution: plan.alg.to_string(),
        actions: plan.actions.len(),
        candidates: cands.len(),
        scan_confident: start.scan_confident,
        rescans: start.rescans,
        verified_by: verified_by.as_str().into(),
        journal: opts.journal.clone(),
        robot: robot.kind().into(),
        resumed: start.resumed,
    })
}

/// A plan being executed: the journal, and the robot-frame cube and orientation tracked
/// through every action the robot confirmed.
struct Execution {
    journal: Journal,
    symbols: [char; 6],
    /// The robot-frame cube when execution began.
    initial: FaceletCube,
    tracked: FaceletCube,
    orientation: Orientation,
    done: usize,
    seconds: f64,
}

impl Execution {
    /// Opens the journal with its start line.
    fn begin(
        robot_kind: &str,
        start: &Start,
        plan: &RobotPlan,
        opts: &RunOptions,
    ) -> Result<Execution, RunError> {
        let pos = &start.position;
        let symbols = pos.first_scan.symbols();
        let tracked = to_robot(&pos.cube, &plan.start.orientation);
        let orientation = plan.start.orientation;
        let journal = Journal::create(
            &opts.journal,
            &JournalStart {
                version: 1,
                created: journal::now_rfc3339(),
                robot: robot_kind.into(),
                size: pos.cube.size(),
                symbols: symbols.iter().collect(),
                first_scan: journal::encode(&pos.first_scan, &symbols),
                target: journal::encode(&pos.target, &symbols),
                state: journal::encode(&tracked, &symbols),
                orientation,
                solution: plan.alg.to_string(),
                planned_seconds: plan.seconds,
                plan: plan.actions.clone(),
                colors: start.first_colors.clone(),
            },
        )?;
        Ok(Execution {
            journal,
            symbols,
            initial: tracked.clone(),
            tracked,
            orientation,
            done: 0,
            seconds: 0.0,
        })
    }

    /// Executes the plan, recording each confirmed action; a failure or a stop becomes
    /// [`RunError::Interrupted`] saying where the cube is.
    fn execute(
        &mut self,
        robot: &mut dyn RunRobot,
        plan: &RobotPlan,
        opts: &RunOptions,
        events: &mut dyn FnMut(RunEvent),
    ) -> Result<(), RunError> {
        let total = plan.actions.len();
        let stop = opts.stop.clone();
        let result = robot.execute(plan, &mut |action, secs| {
            self.confirmed(action, secs)?;
            events(RunEvent::Executing {
                done: self.done,
                total,
                robot_seconds: secs,
            });
            if stop.load(Ordering::SeqCst) {
                return Err(RunError::Stopped);
            }
            Ok(())
        });
        result.map_err(|e| self.interrupted(e, opts))
    }

    /// One action the robot confirmed.
    fn confirmed(&mut self, action: &Action, secs: f64) -> Result<(), RunError> {
        apply_action(&mut self.tracked, action);
        self.orientation = orientation_after(self.orientation, action);
        self.done += 1;
        self.seconds = secs;
        self.journal
            .step(action.clone(), &self.tracked, Some(self.orientation), secs)?;
        Ok(())
    }

    /// Records why execution stopped and where the cube is.
    fn interrupted(&mut self, cause: RunError, opts: &RunOptions) -> RunError {
        let _ = self.journal.interrupted(&cause.reason());
        RunError::Interrupted {
            cause: Box::new(cause),
            journal: opts.journal.clone(),
            state: journal::encode(&to_cube(&self.tracked, &self.orientation), &self.symbols),
            robot_state: journal::encode(&self.tracked, &self.symbols),
            steps: self.done,
            seconds: self.seconds,
        }
    }
}
