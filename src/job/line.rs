//! The line-protocol robot in a job: its sensors' scan (all stickers at once, no
//! reorientation), its plan (the candidate with the fewest robot seconds on its own step
//! timings, steps grouped as its `MOVE` tokens) and its execution in small chunks.
//!
//! A chunk is one `MOVE` line of at most [`CHUNK`] steps: its intent is journaled before it
//! is sent, and every `DONE` the robot sends is journaled, also after a stop was asked for
//! (a turn the robot confirmed is never dropped). Ctrl-C between chunks stops before the next
//! one; during a chunk the host sends `STOP`, which the robot obeys after its current token
//! (three steps of at most 0.3 s each bound the wait even if it does not). A chunk whose
//! replies were lost is resolved by resending its sequence number (the robot replays every
//! `DONE`), and failing that by the robot's `STATE` ([`RunRobot::settle`]).
//!
//! Level: job. No printing.

use crate::color::raw::RawScan;
use crate::cube::{Alg, FaceletCube, Move, Size};
use crate::robot::line::{parse_token, token, LineError, LineRobot};
use crate::robot::mindcub3r::cost::{PlanError, RobotState};
use crate::robot::mindcub3r::model::Orientation;
use crate::robot::sim::line::LineSimHandle;

use super::error::RunError;
use super::journal::Action;
use super::robot::{Answer, Progress, RobotPlan, RunRobot, ScanStep};

/// Steps per `MOVE` line: short enough that a robot finishing its chunk after Ctrl-C stops
/// within a second, long enough that a chunk's round trip is small beside its turns.
pub const CHUNK: usize = 3;

/// A line-protocol robot driven by a job (plus its simulator, if any).
pub struct LineRun {
    pub robot: LineRobot,
    pub sim: Option<LineSimHandle>,
    /// Steps per `MOVE` line (smaller stops sooner on Ctrl-C).
    pub chunk: usize,
}

impl RunRobot for LineRun {
    fn kind(&self) -> &'static str {
        "line"
    }

    fn scan(
        &mut self,
        size: Size,
        progress: &mut dyn FnMut(ScanStep<'_>),
    ) -> Result<(RawScan, Orientation), RunError> {
        let Some(scale) = self.robot.caps().scan else {
            return Err(RunError::NoColourSensor {
                robot: self.robot.caps().name.clone(),
            });
        };
        if self.robot.caps().size as usize != size.n() {
            return Err(RunError::WrongSize {
                holds: self.robot.caps().size as usize,
                wanted: size,
                evidence: format!("its CAPS say size={}", self.robot.caps().size),
            });
        }
        // One command reads every sticker: the progress counts stickers, as for any robot.
        let total = size.stickers();
        progress(ScanStep::count(0, total));
        let readings = self.robot.scan(&[])?;
        let read: Vec<(usize, [f64; 3])> = readings.iter().copied().enumerate().collect();
        progress(ScanStep {
            done: total,
            total,
            readings: &read,
            frame: None,
        });
        Ok((RawScan::new(size, scale, readings), Orientation::IDENTITY))
    }

    fn scan_scale(&self) -> Option<crate::color::raw::Scale> {
        self.robot.caps().scan
    }

    fn rescan(&mut self, stickers: &[usize]) -> Result<Vec<[f64; 3]>, RunError> {
        Ok(self.robot.scan(stickers)?)
    }

    fn plan(&self, cands: &[Alg], start: &RobotState) -> Result<RobotPlan, RunError> {
        let caps = self.robot.caps();
        let mut best: Option<(usize, Vec<Vec<Move>>, f64, Alg)> = None;
        for (i, a) in cands.iter().enumerate() {
            let steps = caps.steps(a)?;
            let secs = caps.seconds(&steps);
            if best.as_ref().is_none_or(|b| secs < b.2 - 1e-9) {
                best = Some((i, steps, secs, a.clone()));
            }
        }
        let (chosen, steps, seconds, alg) = best.ok_or(PlanError::NoCandidates)?;
        let baseline = cands
            .first()
            .map(|a| caps.steps(a).map(|s| caps.seconds(&s)))
            .transpose()?;
        Ok(RobotPlan {
            alg,
            actions: steps.iter().map(|s| Action::Turns(token(s))).collect(),
            seconds,
            baseline_seconds: baseline,
            chosen,
            start: *start,
        })
    }

    fn execute(
        &mut self,
        plan: &RobotPlan,
        progress: &mut dyn FnMut(Progress<'_>) -> Result<(), RunError>,
    ) -> Result<(), RunError> {
        let steps: Vec<Vec<Move>> = plan
            .actions
            .iter()
            .filter_map(|a| match a {
                Action::Turns(t) => parse_token(t),
                Action::Primitive(_) => None,
            })
            .collect();
        self.robot.home()?;
        let caps = self.robot.caps().clone();
        let mut secs = 0.0;
        for chunk in steps.chunks(self.chunk.max(1)) {
            let actions: Vec<Action> = chunk.iter().map(|s| Action::Turns(token(s))).collect();
            progress(Progress::Sending(&actions))?;
            let mut stop: Option<RunError> = None;
            let r = self.robot.execute(chunk, &mut |i, step| {
                secs += caps.step_seconds(step);
                // Every confirmed turn is recorded, even after a stop was asked for.
                if let Err(e) = progress(Progress::Done(&actions[i], secs)) {
                    stop.get_or_insert(e);
                }
            });
            r?;
            if let Some(e) = stop {
                return Err(e);
            }
        }
        Ok(())
    }

    fn settle(&mut self, _in_flight: &[Action], cause: &RunError) -> Answer {
        // An ERR reply ends the line: its DONE lines said what was made, nothing else was.
        if let RunError::Line(LineError::Robot { .. }) = cause {
            return Answer::Landed {
                count: 0,
                by: "the robot's ERR reply",
            };
        }
        match self.own_state() {
            Some(cube) => Answer::State(cube),
            None => Answer::Unknown,
        }
    }

    fn stop(&mut self) -> Option<bool> {
        Some(self.robot.stop().is_ok())
    }

    fn own_state(&mut self) -> Option<FaceletCube> {
        if !self.robot.caps().state {
            return None;
        }
        let text = self.robot.state().ok()?;
        FaceletCube::parse(&text).ok()
    }

    fn read_back(&mut self) -> Option<(FaceletCube, FaceletCube)> {
        self.sim.as_ref().map(|s| (s.initial_cube(), s.cube()))
    }

    fn sim_clock(&self) -> Option<f64> {
        self.sim.as_ref().map(|s| s.clock())
    }

    fn reorients(&self) -> bool {
        false
    }
}
