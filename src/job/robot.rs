//! The robot as the job sees it: a [`RunRobot`] scans, re-reads stickers, plans the
//! cheapest execution of candidate solutions on its own timings, and executes a plan in
//! chunks: it says which actions it is about to send ([`Progress::Sending`], so the journal
//! writes its intent first) and confirms each action the robot made ([`Progress::Done`]).
//! After a failure it tells what it can about the actions sent but never confirmed
//! ([`RunRobot::settle`]: the EV3's tacho counts, a line robot's own `STATE`), stops its
//! motors and says whether the robot confirmed that ([`RunRobot::stop`]). The line robot
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
use super::report::RunEvent;

/// A robot the job can drive.
pub trait RunRobot {
    /// `mindcub3r` or `line`.
    fn kind(&self) -> &'static str;
    /// Scans the cube: readings in the frame of the cube as it sat when the scan began, and
    /// the cube's orientation afterwards relative to that frame.
    fn scan(
        &mut self,
        size: Size,
        progress: &mut dyn FnMut(ScanStep<'_>),
    ) -> Result<(RawScan, Orientation), RunError>;
    /// [`RunRobot::scan`], and where the robot reads its last face by itself (the
    /// MindCub3r's colour sensor), `preview` is handed the readings of the others first
    /// (the last face's stickers marked unread) with the orientation the scan will leave
    /// the cube in, so that a job can think while the last face is read. Robots that read
    /// otherwise never call it.
    fn scan_with_preview(
        &mut self,
        size: Size,
        progress: &mut dyn FnMut(ScanStep<'_>),
        _preview: &mut dyn FnMut(&RawScan, Orientation),
    ) -> Result<(RawScan, Orientation), RunError> {
        self.scan(size, progress)
    }
    /// A copy of what [`RunRobot::plan`] and [`RunRobot::sequence_cost`] use after a
    /// fresh scan, for another thread while this robot works; `None`: plan only here.
    fn planning(&self) -> Option<Box<dyn Planning + Send + Sync>> {
        None
    }
    /// What reads the stickers: the robot's own sensor unless a camera wraps it.
    fn scanner(&self) -> super::kind::ScannerKind {
        super::kind::ScannerKind::Sensor
    }
    /// The scale of this robot's scans (`None`: it cannot scan), known before it moves.
    fn scan_scale(&self) -> Option<Scale>;
    /// Reads stickers again (facelet indices of the frame the last scan began in).
    fn rescan(&mut self, stickers: &[usize]) -> Result<Vec<[f64; 3]>, RunError>;
    /// One reading at the top face's centre, where a 3x3x3 has a sticker and a 2x2x2 the
    /// gap where four pieces meet ([`crate::color::resolve::other_size`]); `None` from a
    /// scanner that cannot aim there, or that knows its cube's size otherwise.
    fn read_top_centre(&mut self) -> Result<Option<[f64; 3]>, RunError> {
        Ok(None)
    }
    /// The cheapest execution among candidate solutions, and the baseline's time for the
    /// first candidate.
    fn plan(&self, candidates: &[Alg], start: &RobotState) -> Result<RobotPlan, RunError>;
    /// The robot's execution time of face-turn sequences from `start` as a cost
    /// automaton for the solver's robot-cost search; `None`: no such model.
    fn sequence_cost(&self, _start: &RobotState) -> Option<SequenceCost> {
        None
    }
    /// Executes: `progress` hears [`Progress::Sending`] before each chunk is sent and
    /// [`Progress::Done`] after each action the robot confirmed (every one of them, even after
    /// `progress` returned an error, which stops the run once the chunk has ended).
    fn execute(
        &mut self,
        plan: &RobotPlan,
        progress: &mut dyn FnMut(Progress<'_>) -> Result<(), RunError>,
    ) -> Result<(), RunError>;
    /// After a failed execution: what the robot itself can tell about `in_flight`, the
    /// actions sent whose confirmation never came (in order).
    /// `cause` is what stopped it.
    fn settle(&mut self, _in_flight: &[Action], _cause: &RunError) -> Answer {
        Answer::Unknown
    }
    /// Stops every motor; whether the robot confirmed it (`None`: nothing was asked).
    fn stop(&mut self) -> Option<bool> {
        None
    }
    /// The robot's own idea of its cube, if it keeps one (robot frame, its own colour
    /// naming): a line robot with `STATE`.
    fn own_state(&mut self) -> Option<FaceletCube> {
        None
    }
    /// From now on, sticker indices given to [`RunRobot::rescan`] are those of the cube as
    /// it sits now, whose orientation relative to the first scan's frame is `base` (a
    /// resume reads stickers without having scanned).
    fn mark_frame(&mut self, _size: Size, _base: Orientation) {}
    /// The frame [`RunRobot::mark_frame`] marked had orientation `base` (relative to the
    /// first scan's frame), not the one it was told then.
    fn rebase(&mut self, _base: Orientation) {}
    /// The cube's orientation in the robot now, relative to the first scan's frame (or to
    /// the frame [`RunRobot::mark_frame`] gave); identity for robots that never reorient it.
    fn orientation(&self) -> Orientation {
        Orientation::IDENTITY
    }
    /// For every set of faces (bit `f`: face `f` of the cube as it sits now, URFDLB), the
    /// robot's estimated seconds to read exactly those faces from where it is (index 0
    /// unused); `None`: it cannot read single faces.
    fn face_read_costs(&self, _size: Size) -> Option<Vec<f64>> {
        None
    }
    /// Reads the faces in `faces` (bits as in [`RunRobot::face_read_costs`]) the cheapest
    /// way: readings at the facelet indices of the cube as it sits now (`None`: not read).
    /// Like a scan, it starts a new frame for [`RunRobot::rescan`]; the cube's orientation
    /// relative to the first scan's frame stays known.
    fn read_faces(&mut self, _size: Size, _faces: u8) -> Result<Vec<Option<[f64; 3]>>, RunError> {
        Err(RunError::NoFaceReads)
    }
    /// A simulator's (initial, current) robot-frame cube, in its own colour naming.
    fn read_back(&mut self) -> Option<(FaceletCube, FaceletCube)>;
    /// A simulator's clock (simulated seconds), when the robot is one: execution times
    /// are measured on it, whatever its speed against the wall and however far a slow
    /// brick falls behind it. `None`: a real robot, measured on the wall clock.
    fn sim_clock(&self) -> Option<f64> {
        None
    }
    /// Whether the cube's orientation changes as the robot works (false: fixed motors).
    fn reorients(&self) -> bool;
}

/// What a scan tells as it goes: stickers read so far of all, what this step read (facelet
/// index in the frame of the scan's start, value on the scanner's scale), and the camera
/// frame it read them from, if any.
#[derive(Clone, Copy, Debug)]
pub struct ScanStep<'a> {
    pub done: usize,
    pub total: usize,
    pub readings: &'a [(usize, [f64; 3])],
    pub frame: Option<&'a RunEvent>,
}

impl ScanStep<'_> {
    /// A step that read nothing yet (or says nothing of what it read).
    pub fn count(done: usize, total: usize) -> ScanStep<'static> {
        ScanStep {
            done,
            total,
            readings: &[],
            frame: None,
        }
    }
}

/// What planning needs of a robot: the cheapest execution of candidate solutions on its
/// own timings, and its cost automaton (see [`RunRobot::plan`]).
pub trait Planning {
    fn plan(&self, candidates: &[Alg], start: &RobotState) -> Result<RobotPlan, RunError>;
    fn sequence_cost(&self, _start: &RobotState) -> Option<SequenceCost> {
        None
    }
}

/// A robot's own planning, through [`Planning`].
pub struct PlansOf<'a>(pub &'a dyn RunRobot);

impl Planning for PlansOf<'_> {
    fn plan(&self, candidates: &[Alg], start: &RobotState) -> Result<RobotPlan, RunError> {
        self.0.plan(candidates, start)
    }
    fn sequence_cost(&self, start: &RobotState) -> Option<SequenceCost> {
        self.0.sequence_cost(start)
    }
}

/// What a robot tells the job while it executes a plan.
#[derive(Clone, Copy, Debug)]
pub enum Progress<'a> {
    /// These actions are about to be sent as one chunk: the robot may make any prefix of
    /// them.
    Sending(&'a [Action]),
    /// The robot confirmed this action; robot seconds of motion so far.
    Done(&'a Action, f64),
}

/// What a robot can say about actions it was sent but never confirmed.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// This many of them (a prefix) happened, as the robot measured; `by` says how.
    Landed { count: usize, by: &'static str },
    /// At least `at_least` and at most `at_most` of them (a prefix) happened; the
    /// robot cannot tell which between.
    Between {
        at_least: usize,
        at_most: usize,
        by: &'static str,
    },
    /// The robot's own idea of its cube (robot frame, its own colour naming).
    State(FaceletCube),
    /// It cannot tell.
    Unknown,
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
