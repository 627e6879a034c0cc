//! From a known position to the report: align the target, solve, plan, execute with a
//! journal, check. [`finish`] reads as those steps; a fresh run gets its position from a
//! scan (`job::run`), a resumed one from its journal and what the robot shows
//! (`job::resume`).
//!
//! ## Rounds
//!
//! A first scan can be wrong and still look sure (a misread the resolver mends into the
//! wrong legal cube), or be in doubt with a best guess that `--best-effort` executes. Either
//! way the plan was right for a cube the robot does not hold, and only the check after
//! execution finds out. So a run is a loop of *rounds*: plan, execute, check
//! ([`super::verify::check`]); when the check proves the target, the run ends; when it finds
//! the cube elsewhere, the state a scan saw ([`super::verify::look`]; never a simulator's
//! read-back, which a real robot does not have) is solved again, and that plan is the next
//! round, up to [`RunOptions::max_rounds`] rounds. A wrong guess costs a check and a short
//! second solution, not the job.
//!
//! The loop stops off the target, with the state it established, when the rounds are
//! spent, when nothing can prove where the cube is (tracking only), or when what was seen
//! cannot be planned from: a scan still in doubt (without `--best-effort`), a doubt whose
//! best guess is the target, or a scan that sees the target where the read-back does not.
//! It never ends "at the target" on anything but a read-back or a scan sure of every
//! sticker.
//!
//! Each check is a `verify` line of the journal, with the state a scan saw; each later
//! round's plan a `plan` line with its round number. A run stopped anywhere in a later
//! round resumes from there like any other (`job::resume`).
//!
//! Execution journals each chunk's intent before it is sent and each confirmed action
//! after (see [`super::journal`]). When it stops, it first asks the robot about the actions
//! in flight ([`RunRobot::settle`]), journals what that settles, then stops the motors and
//! says whether the robot confirmed it; the error names the last confirmed state and, when
//! the robot could not tell, the state after each prefix of what was in flight. A stop
//! during the final check is journaled too, so a resume only checks again.
//!
//! Level: job. No printing: progress goes to the [`RunEvent`] callback.

use std::sync::atomic::Ordering;

use crate::cube::FaceletCube;
use crate::robot::mindcub3r::cost::{Arm, RobotState};
use crate::robot::mindcub3r::frames::{align_target, to_cube, to_robot};
use crate::robot::mindcub3r::model::Orientation;

use super::error::{Interruption, RunError};
use super::journal::{
    self, Action, Journal, JournalPlan, JournalRecord, JournalResume, JournalStart, JournalVerify,
};
use super::observe::{match_state, prefix_states, Known};
use super::options::RunOptions;
use super::report::{RoundReport, RunEvent, RunReport};
use super::robot::{
    apply_action, orientation_after, Answer, Planning, PlansOf, Progress, RobotPlan, RunRobot,
};
use super::solve::{add_robot_cost_solutions, solve_candidates, Tools};
use super::target::TargetError;
use super::verify::{cannot_plan_from, check, look, no_round_left, shown, Belief};

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

/// How the journal is written: a new one, or carried on after a resume.
#[derive(Clone, Debug)]
pub enum JournalMode {
    Create,
    /// Append to the journal read back as `record`, first saying what the resume saw.
    Append {
        record: Box<JournalRecord>,
        resume: JournalResume,
    },
}

/// Everything [`finish`] starts from: the position and what is known of the first scan.
#[derive(Clone, Debug)]
pub struct Start {
    pub position: Position,
    /// Mean Lab per symbol of the first scan (to match a verifying re-scan's colours).
    pub first_colors: Vec<(char, [f64; 3])>,
    /// Mean raw reading per symbol of the first scan, and its scale's name.
    pub raw_colors: Vec<(char, [f64; 3])>,
    pub raw_scale: Option<String>,
    pub scan_confident: bool,
    pub rescans: usize,
    /// A run resumed from its journal (no first scan in this process).
    pub resumed: bool,
    /// The robot-frame cube when this process connected, where known (a resume: what it
    /// established; a simulator started here starts from it).
    pub connected_cube: Option<FaceletCube>,
    pub journal: JournalMode,
    /// The round execution starts in (1 for a fresh run; a resume's from its journal).
    pub round: usize,
}

/// Solves, plans and executes from a known position, journaling every action, then
/// checks the cube; when the check finds it off the target, solves again from what it saw
/// and executes that, up to [`RunOptions::max_rounds`] rounds (see the module docs).
pub fn finish(
    robot: &mut dyn RunRobot,
    tools: &Tools,
    start: &Start,
    opts: &RunOptions,
    events: &mut dyn FnMut(RunEvent),
) -> Result<RunReport, RunError> {
    finish_thought(robot, tools, start, opts, events, None)
}

/// [`finish`], with the first round's thinking done already (for this very position:
/// see `job::run`, which thinks while the last face is read).
pub fn finish_thought(
    robot: &mut dyn RunRobot,
    tools: &Tools,
    start: &Start,
    opts: &RunOptions,
    events: &mut dyn FnMut(RunEvent),
    ready: Option<Thought>,
) -> Result<RunReport, RunError> {
    let pos = &start.position;
    let first = match ready {
        Some(t) => t.report(events),
        None => plan_from(robot, tools, pos, opts, events)?,
    };
    let mut run = Execution::begin(robot.kind(), start, &first.plan, opts)?;
    let symbols = pos.first_scan.symbols();
    let known = Known {
        symbols,
        colors: &start.first_colors,
        raw_colors: &start.raw_colors,
        raw_scale: start.raw_scale.as_deref(),
        first_scan: &pos.first_scan,
    };
    let max_rounds = opts.max_rounds.max(1);
    let mut round = start.round.max(1);
    let mut plan = first.plan.clone();
    let mut rounds: Vec<RoundReport> = Vec::new();
    // What the host believes a simulator's initial cube is: the first scan (a fresh run
    // scans from the simulator's start) or what the resume established (a simulator
    // started for a resume starts from the journal's cube).
    let initial = match (&start.connected_cube, start.resumed) {
        (Some(c), true) => c.clone(),
        (None, true) => run.initial.clone(),
        _ => pos.first_scan.clone(),
    };
    // The first round's execution time as measured, beside its plan's prediction.
    let mut measured = None;
    loop {
        events(RunEvent::Executes {
            round,
            solution: plan.alg.to_string(),
            actions: plan.actions.clone(),
            robot_seconds: plan.seconds,
            state: run.cube_state(),
        });
        let (executing, sim_from) = (std::time::Instant::now(), robot.sim_clock());
        run.execute(robot, &plan, opts, events)?;
        let took = match (sim_from, robot.sim_clock()) {
            (Some(a), Some(b)) => b - a,
            _ => executing.elapsed().as_secs_f64(),
        };
        measured.get_or_insert(took);
        let belief = Belief {
            tracked: &run.tracked.clone(),
            orientation: run.orientation,
            initial: &initial,
            symbols,
            first_colors: &start.first_colors,
        };
        let checked = check(
            robot,
            &belief,
            &known,
            &pos.target,
            &tools.resolve,
            opts.max_rescans,
            events,
        );
        let check = match checked {
            Ok(c) => c,
            Err(e) => {
                let of = run.done;
                return Err(run.interrupted(robot, e, opts, of));
            }
        };
        // Off the target: another round, planned from what a scan saw, or a reason not to.
        let mut stop = None;
        let mut sight = check.sight.clone();
        if !check.at_target {
            stop = no_round_left(&check, max_rounds - rounds.len() - 1, max_rounds);
            if stop.is_none() && sight.is_none() {
                // The read-back judged; what a new round plans from is what a scan sees.
                events(RunEvent::Verifying {
                    by: format!(
                        "re-scan (the {} found the cube off the target)",
                        check.by.label()
                    ),
                });
                let looked = look(
                    robot,
                    &belief,
                    &known,
                    &tools.resolve,
                    opts.max_rescans,
                    events,
                );
                match looked {
                    Ok(s) => sight = Some(s),
                    Err(e) => {
                        let of = run.done;
                        return Err(run.interrupted(robot, e, opts, of));
                    }
                }
            }
            if let (None, Some(s)) = (&stop, &sight) {
                stop = cannot_plan_from(&check, s, &pos.target, tools.resolve.best_effort);
            }
        }
        run.journal.verify(&JournalVerify {
            round,
            by: check.by.label(),
            at_target: check.at_target,
            seen: sight
                .as_ref()
                .map(|s| journal::encode(&to_robot(&s.cube, &s.orientation), &symbols)),
            orientation: sight.as_ref().map(|s| s.orientation),
            confident: sight.as_ref().map(|s| s.doubt.confident),
        })?;
        let (final_state, target) =
            shown(&check.cube, check.at_target, &pos.first_scan, &pos.target);
        let next = match (check.at_target, &stop) {
            (true, _) => "done",
            (false, Some(_)) => "stop",
            (false, None) => "replan",
        };
        events(RunEvent::Checked {
            round,
            by: check.by.label(),
            at_target: check.at_target,
            state: journal::encode(&final_state, &symbols),
            confident: sight.as_ref().map(|s| s.doubt.confident),
            next: next.into(),
            reason: stop.clone(),
        });
        rounds.push(RoundReport {
            round,
            solution: plan.alg.to_string(),
            face_turns: plan.alg.len(),
            actions: plan.actions.len(),
            robot_seconds: plan.seconds,
            checked_by: check.by.label(),
            at_target: check.at_target,
            state: journal::encode(&final_state, &symbols),
            seen: sight.as_ref().map(|s| {
                journal::encode(
                    &shown(&s.cube, false, &pos.first_scan, &pos.target).0,
                    &symbols,
                )
            }),
            seen_confident: sight.as_ref().map(|s| s.doubt.confident),
        });
        match (next, sight) {
            ("replan", Some(sight)) => {
                let from = Position {
                    cube: sight.cube.clone(),
                    robot: RobotState {
                        orientation: sight.orientation,
                        arm: Arm::Away,
                        turntable: 0,
                    },
                    first_scan: pos.first_scan.clone(),
                    target: pos.target.clone(),
                };
                plan = match plan_from(robot, tools, &from, opts, events) {
                    Ok(p) => p.plan,
                    Err(e) => {
                        let of = run.done;
                        return Err(run.interrupted(robot, e, opts, of));
                    }
                };
                round += 1;
                run.next_round(&from, &plan, round)?;
            }
            _ => {
                run.journal.end(check.at_target)?;
                return Ok(RunReport {
                    reached_target: check.at_target,
                    final_state: journal::encode(&final_state, &symbols),
                    target: journal::encode(&target, &symbols),
                    first_scan: journal::encode(&pos.first_scan, &symbols),
                    face_turns: first.plan.alg.len(),
                    robot_seconds: first.plan.seconds,
                    measured_seconds: measured,
                    baseline_seconds: first.plan.baseline_seconds,
                    solution: first.plan.alg.to_string(),
                    actions: first.plan.actions.len(),
                    candidates: first.solver_candidates,
                    planned_from: first.candidates,
                    scan_confident: start.scan_confident,
                    rescans: start.rescans,
                    verified_by: check.by.label(),
                    journal: opts.journal.clone(),
                    robot: robot.kind().into(),
                    resumed: start.resumed,
                    rounds,
                    stopped: stop,
                });
            }
        }
    }
}

/// A plan and how many candidate solutions it was chosen from.
#[derive(Clone, Debug)]
struct Planned {
    plan: RobotPlan,
    /// Every candidate the plan was chosen from: the solver's and the robot-cost search's.
    candidates: usize,
    /// The solver's candidates alone (what the `solved` event says).
    solver_candidates: usize,
}

/// What a job thinks before it moves: the solver's candidates (how many, the shortest),
/// and the plan chosen among them and what the robot-cost search added.
#[derive(Clone, Debug)]
pub struct Thought {
    solved: usize,
    shortest: usize,
    planned: Planned,
}

impl Thought {
    /// A thought of just this plan (tests elsewhere in the job).
    #[cfg(test)]
    pub(crate) fn of_plan(plan: RobotPlan) -> Thought {
        Thought {
            solved: 1,
            shortest: plan.alg.len(),
            planned: Planned {
                plan,
                candidates: 1,
                solver_candidates: 1,
            },
        }
    }

    /// The plan's robot state at its start.
    pub fn start(&self) -> &RobotState {
        &self.planned.plan.start
    }

    /// Says what was thought, as [`plan_from`] does as it goes.
    fn report(self, events: &mut dyn FnMut(RunEvent)) -> Planned {
        events(RunEvent::Solved {
            candidates: self.solved,
            shortest: self.shortest,
        });
        planned_event(&self.planned.plan, true, events);
        self.planned
    }
}

fn planned_event(plan: &RobotPlan, ahead: bool, events: &mut dyn FnMut(RunEvent)) {
    events(RunEvent::Planned {
        solution: plan.alg.to_string(),
        face_turns: plan.alg.len(),
        actions: plan.actions.len(),
        robot_seconds: plan.seconds,
        baseline_seconds: plan.baseline_seconds,
        ahead,
    });
}

/// Aligns the target, solves, and plans the cheapest execution from `pos` with `plans`
/// (the robot's own planning, or a copy another thread holds); `solved` hears of the
/// solver's candidates (how many, the shortest) before the robot-cost search starts.
pub fn think(
    plans: &dyn Planning,
    tools: &Tools,
    pos: &Position,
    opts: &RunOptions,
    solved: &mut dyn FnMut(usize, usize),
) -> Result<Thought, RunError> {
    let aligned = align_target(&pos.cube, &pos.target).ok_or(TargetError::Centres)?;
    let cands = solve_candidates(tools, &pos.cube, &aligned, opts)?;
    let (n, shortest) = (
        cands.len(),
        cands.iter().map(|a| a.len()).min().unwrap_or(0),
    );
    solved(n, shortest);
    let cands = add_robot_cost_solutions(plans, tools, &pos.cube, &aligned, &pos.robot, cands)?;
    let plan = plans.plan(&cands, &pos.robot)?;
    Ok(Thought {
        solved: n,
        shortest,
        planned: Planned {
            plan,
            candidates: cands.len(),
            solver_candidates: n,
        },
    })
}

/// [`think`] on the robot's own planning, saying what it found as it goes.
fn plan_from(
    robot: &mut dyn RunRobot,
    tools: &Tools,
    pos: &Position,
    opts: &RunOptions,
    events: &mut dyn FnMut(RunEvent),
) -> Result<Planned, RunError> {
    let t = think(
        &PlansOf(robot),
        tools,
        pos,
        opts,
        &mut |candidates, shortest| {
            events(RunEvent::Solved {
                candidates,
                shortest,
            })
        },
    )?;
    planned_event(&t.planned.plan, false, events);
    Ok(t.planned)
}

/// A plan being executed: the journal, and the robot-frame cube and orientation tracked
/// through every action the robot confirmed, and what was sent but not yet confirmed.
struct Execution {
    journal: Journal,
    symbols: [char; 6],
    /// The robot-frame cube when execution began.
    initial: FaceletCube,
    tracked: FaceletCube,
    orientation: Orientation,
    in_flight: Vec<Action>,
    done: usize,
    seconds: f64,
}

impl Execution {
    /// Opens the journal: a start line for a new run; for a resume, what it saw and its
    /// new plan, appended.
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
        let journal = match &start.journal {
            JournalMode::Create => Journal::create(
                &opts.journal,
                &JournalStart {
                    version: journal::VERSION,
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
                    raw_colors: start.raw_colors.clone(),
                    raw_scale: start.raw_scale.clone(),
                    connection: opts.connection.clone(),
                },
            )?,
            JournalMode::Append { record, resume } => {
                let mut j = Journal::append(&opts.journal, record)?;
                j.resume(resume)?;
                j.plan(&JournalPlan {
                    state: journal::encode(&tracked, &symbols),
                    orientation,
                    solution: plan.alg.to_string(),
                    planned_seconds: plan.seconds,
                    plan: plan.actions.clone(),
                    round: Some(start.round.max(1)),
                })?;
                j
            }
        };
        let done = journal.steps();
        Ok(Execution {
            journal,
            symbols,
            initial: tracked.clone(),
            tracked,
            orientation,
            in_flight: Vec::new(),
            done,
            seconds: 0.0,
        })
    }

    /// Opens round `round`: its plan from `pos` is journaled, and tracking starts again
    /// from it.
    fn next_round(
        &mut self,
        pos: &Position,
        plan: &RobotPlan,
        round: usize,
    ) -> Result<(), RunError> {
        self.tracked = to_robot(&pos.cube, &plan.start.orientation);
        self.orientation = plan.start.orientation;
        self.in_flight.clear();
        self.journal.plan(&JournalPlan {
            state: journal::encode(&self.tracked, &self.symbols),
            orientation: self.orientation,
            solution: plan.alg.to_string(),
            planned_seconds: plan.seconds,
            plan: plan.actions.clone(),
            round: Some(round),
        })?;
        Ok(())
    }

    /// Executes the plan, journaling each chunk's intent and each confirmed action; a
    /// failure or a stop becomes [`RunError::Interrupted`] saying where the cube is.
    fn execute(
        &mut self,
        robot: &mut dyn RunRobot,
        plan: &RobotPlan,
        opts: &RunOptions,
        events: &mut dyn FnMut(RunEvent),
    ) -> Result<(), RunError> {
        let total = self.done + plan.actions.len();
        let stop = opts.stop.clone();
        let result = robot.execute(plan, &mut |p| match p {
            Progress::Sending(actions) => {
                if stop.load(Ordering::SeqCst) {
                    return Err(opts.stopped());
                }
                self.journal.intent(actions)?;
                self.in_flight = actions.to_vec();
                Ok(())
            }
            Progress::Done(action, secs) => {
                self.confirmed(action, secs, None)?;
                events(RunEvent::Executing {
                    done: self.done,
                    total,
                    robot_seconds: secs,
                    state: self.cube_state(),
                });
                if stop.load(Ordering::SeqCst) {
                    return Err(opts.stopped());
                }
                Ok(())
            }
        });
        result.map_err(|e| self.interrupted(robot, e, opts, total))
    }

    /// The cube as tracked (cube frame, first-scan symbols).
    fn cube_state(&self) -> String {
        journal::encode(&to_cube(&self.tracked, &self.orientation), &self.symbols)
    }

    /// One action the robot confirmed (`by`: what confirmed it when its reply did not).
    fn confirmed(&mut self, action: &Action, secs: f64, by: Option<&str>) -> Result<(), RunError> {
        apply_action(&mut self.tracked, action);
        self.orientation = orientation_after(self.orientation, action);
        self.done += 1;
        self.seconds = secs;
        if self.in_flight.first() == Some(action) {
            self.in_flight.remove(0);
        }
        self.journal.step(
            action.clone(),
            &self.tracked,
            Some(self.orientation),
            secs,
            by,
        )?;
        Ok(())
    }

    /// Settles what it can of the actions in flight by asking the robot, stops the motors,
    /// and records why execution stopped and where the cube is.
    fn interrupted(
        &mut self,
        robot: &mut dyn RunRobot,
        cause: RunError,
        opts: &RunOptions,
        of: usize,
    ) -> RunError {
        let cause = if opts.stop.load(Ordering::SeqCst) && !matches!(cause, RunError::Journal(_)) {
            opts.stopped()
        } else {
            cause
        };
        if !self.in_flight.is_empty() {
            let landed = match robot.settle(&self.in_flight, &cause) {
                Answer::Landed { count, by } => Some((count, by)),
                Answer::Between {
                    at_least,
                    at_most,
                    by,
                } => {
                    // The first `at_least` happened; the candidates are the prefixes of
                    // the rest up to `at_most`.
                    let secs = self.seconds;
                    for a in self.in_flight.clone().iter().take(at_least) {
                        let _ = self.confirmed(a, secs, Some(by));
                    }
                    self.in_flight.truncate(at_most.saturating_sub(at_least));
                    None
                }
                Answer::State(seen) => {
                    let states = prefix_states(&self.tracked, self.orientation, &self.in_flight);
                    let robots: Vec<FaceletCube> = states.into_iter().map(|(c, _)| c).collect();
                    match_state(&seen, &robots).map(|k| (k, "the robot's STATE"))
                }
                Answer::Unknown => None,
            };
            if let Some((count, by)) = landed {
                let secs = self.seconds;
                for a in self.in_flight.clone().iter().take(count) {
                    let _ = self.confirmed(a, secs, Some(by));
                }
                self.in_flight.clear();
            }
        }
        let stopped = robot.stop();
        let _ = self
            .journal
            .interrupted(&cause.reason(), &self.in_flight, stopped);
        let states = if self.in_flight.is_empty() {
            Vec::new()
        } else {
            prefix_states(&self.tracked, self.orientation, &self.in_flight)
        };
        let candidates = states
            .iter()
            .map(|(c, o)| journal::encode(&to_cube(c, o), &self.symbols))
            .collect();
        let robot_candidates = states
            .iter()
            .map(|(c, _)| journal::encode(c, &self.symbols))
            .collect();
        RunError::Interrupted(Box::new(Interruption {
            cause,
            journal: opts.journal.clone(),
            state: journal::encode(&to_cube(&self.tracked, &self.orientation), &self.symbols),
            robot_state: journal::encode(&self.tracked, &self.symbols),
            steps: self.done,
            of,
            seconds: self.seconds,
            candidates,
            robot_candidates,
            motors_stopped: stopped,
        }))
    }
}
