//! The line-protocol robot in a job: its sensors' scan (all stickers at once, no
//! reorientation), its plan (the candidate with the fewest robot seconds on its own step
//! timings, steps grouped as its `MOVE` tokens) and its execution in small chunks so a stop
//! takes effect soon.
//!
//! Level: job. No printing.

use crate::color::raw::RawScan;
use crate::cube::{Alg, FaceletCube, Move, Size};
use crate::robot::line::{parse_token, token, LineRobot};
use crate::robot::mindcub3r::cost::{PlanError, RobotState};
use crate::robot::mindcub3r::model::Orientation;
use crate::robot::sim::line::LineSimHandle;

use super::error::RunError;
use super::journal::Action;
use super::robot::{RobotPlan, RunRobot};

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
        progress: &mut dyn FnMut(usize, usize),
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
            });
        }
        progress(0, 1);
        let readings = self.robot.scan(&[])?;
        progress(1, 1);
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
        done: &mut dyn FnMut(&Action, f64) -> Result<(), RunError>,
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
            let mut stop: Option<RunError> = None;
            let r = self.robot.execute(chunk, &mut |_, step| {
                secs += caps.step_seconds(step);
                if stop.is_none() {
                    if let Err(e) = done(&Action::Turns(token(step)), secs) {
                        stop = Some(e);
                    }
                }
            });
            if let Some(e) = stop {
                return Err(e);
            }
            r?;
        }
        Ok(())
    }

    fn read_back(&mut self) -> Option<(FaceletCube, FaceletCube)> {
        self.sim.as_ref().map(|s| (s.initial_cube(), s.cube()))
    }

    fn reorients(&self) -> bool {
        false
    }
}
