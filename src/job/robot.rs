//! The robot as the job sees it: a [`RunRobot`] scans, re-reads stickers, plans the
//! cheapest execution of candidate solutions on its own timings, and executes a plan action
//! by action, confirming each (so the journal can record it). The line robot
//! (`LineRun`), the MindCub3r (`Mc3Run`) and a camera over either (`CameraRun`, feature
//! `vision`) implement it, each in a file of its own that depends on this one.
//!
//! Level: job (over `robot`, `color`, `cube`, `solver`). No printing.

use serde::Serialize;

use crate::color::raw::{RawScan, Scale};
use crate::cube::{Alg, FaceletCube, Size};
use crate::robot::line::parse_token;
use crate::robot::mindcub3r::cost::RobotState;
use crate::robot::mindcub3r::frames::apply_primitives;
use crate::robot::mindcub3r::model::Orientation;
use crate::solver::costed::SequenceCost;

use super::error::RunError;
use super::journal::Action;

/// A robot the job can drive.
pub trait RunRobot {
    /// `mindcub3r` or `line`.
    fn kind(&self) -> &'static str;
    /// Scans the cube: readings in the frame of the cube as it sat when the scan began, and
    /// the cube's orientation afterwards relative to that frame.
    fn scan(
        &mut self,
        size: Size,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<(RawScan, Orientation), RunError>;
    /// The scale of this robot's scans (`None`: it cannot scan), known before it moves.
    fn scan_scale(&self) -> Option<Scale>;
    /// Reads stickers again (facelet indices of the frame the last scan began in).
    fn rescan(&mut self, stickers: &[usize]) -> Result<Vec<[f64; 3]>, RunError>;
    /// The cheapest execution among candidate solutions, and the baseline's time for the
    /// first candidate.
    fn plan(&self, candidates: &[Alg], start: &RobotState) -> Result<RobotPlan, RunError>;
    /// The robot's execution time of face-turn sequences from `start` as a cost
    /// automaton for the solver's robot-cost search; `None`: no such model.
    fn sequence_cost(&self, _start: &RobotState) -> Option<SequenceCost> {
        None
    }
    /// Executes; `done` is called after each action the robot confirmed, and may stop the
    /// run by returning an error.
    fn execute(
        &mut self,
        plan: &RobotPlan,
        done: &mut dyn FnMut(&Action, f64) -> Result<(), RunError>,
    ) -> Result<(), RunError>;
    /// A simulator's (initial, current) robot-frame cube, in its own colour naming.
    fn read_back(&mut self) -> Option<(FaceletCube, FaceletCube)>;
    /// Whether the cube's orientation changes as the robot works (false: fixed motors).
    fn reorients(&self) -> bool;
}

/// An execution plan for some robot.
#[derive(Clone, Debug, Serialize)]
pub struct RobotPlan {
    #[serde(serialize_with = "ser_alg")]
    pub alg: Alg,
    pub actions: Vec<Action>,
    pub seconds: f64,
    /// The baseline (first candidate, the open ports' per-move table) for comparison.
    pub baseline_seconds: Option<f64>,
    /// Which candidate won.
    pub chosen: usize,
    /// The robot state the plan starts from (its orientation relative to the cube frame).
    pub start: RobotState,
}

fn ser_alg<S: serde::Serializer>(alg: &Alg, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&alg.to_string())
}

/// The robot-frame cube after one action.
pub fn apply_action(cube: &mut FaceletCube, action: &Action) {
    match action {
        Action::Primitive(p) => apply_primitives(cube, &[*p]),
        Action::Turns(t) => {
            if let Some(moves) = parse_token(t) {
                let _ = cube.apply(&Alg::from_moves(moves));
            }
        }
    }
}

pub(crate) fn orientation_after(o: Orientation, action: &Action) -> Orientation {
    match action {
        Action::Primitive(p) => o.after(*p),
        Action::Turns(_) => o,
    }
}
