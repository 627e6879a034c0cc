//! The MindCub3r in a job: its colour-sensor scan and re-reads, the planner's cheapest
//! execution of the candidates (and the per-move table on the first one, for comparison),
//! the robot-cost automaton the solver's costed search prices sequences with, and execution
//! in chunks the brick runs back to back (or primitive by primitive from the host). Also what a camera scanner needs of it: presenting each face, or
//! one sticker, to a camera over the top face.
//!
//! Level: job. No printing.

use crate::color::raw::RawScan;
use crate::cube::{Alg, FaceletCube, Size};
use crate::robot::mindcub3r::cost::{Arm, CostModel, RobotState};
use crate::robot::mindcub3r::model::{Orientation, Primitive};
use crate::robot::mindcub3r::planner::{self, Planner};
use crate::robot::mindcub3r::scan::{face_read_plans, ScanProgress};
use crate::robot::mindcub3r::{scan_steps, MindCub3r, Settled};
use crate::robot::sim::SimHandle;
use crate::solver::costed::SequenceCost;

use super::error::RunError;
use super::journal::Action;
use super::robot::{Answer, Planning, Progress, RobotPlan, RunRobot, ScanStep};

/// The MindCub3r's planning apart from the robot ([`RunRobot::planning`]): the planner, from
/// a start state as given (after a fresh scan that is where the robot plans from).
struct Mc3Planning {
    planner: Planner,
}

impl Planning for Mc3Planning {
    fn plan(&self, cands: &[Alg], start: &RobotState) -> Result<RobotPlan, RunError> {
        mindcub3r_plan(&self.planner, cands, start)
    }
    fn sequence_cost(&self, start: &RobotState) -> Option<SequenceCost> {
        Some(self.planner.sequence_cost(*start))
    }
}

/// A planner-backed plan for the MindCub3r: the cheapest candidate by the DP, and the
/// baseline (greedy table on the first candidate).
pub fn mindcub3r_plan(
    planner: &Planner,
    cands: &[Alg],
    start: &RobotState,
) -> Result<RobotPlan, RunError> {
    let (chosen, plan) = planner.choose_screened(cands, *start, 32)?;
    let baseline = cands
        .first()
        .map(|a| {
            planner::greedy(
                a,
                *start,
                &CostModel::plain(planner.costs().timings.clone()),
            )
        })
        .transpose()?
        .map(|p| p.seconds);
    let mut actions = Vec::with_capacity(plan.primitives.len() + 1);
    // The arm's real position is not known after a scan or a fault: start from "away".
    if start.arm == Arm::Away
        && plan
            .primitives
            .first()
            .is_some_and(|p| matches!(p, Primitive::Spin(_)))
    {
        actions.push(Action::Primitive(Primitive::ArmAway));
    }
    actions.extend(plan.primitives.iter().map(|&p| Action::Primitive(p)));
    let seconds = CostModel::plain(planner.costs().timings.clone())
        .run(*start, &plan.primitives)?
        .1;
    Ok(RobotPlan {
        alg: plan.alg,
        actions,
        seconds,
        baseline_seconds: baseline,
        chosen,
        start: *start,
    })
}

/// The robot's scan progress as the job's: each face's readings as they arrive.
fn step_of<'a>(p: &ScanProgress<'a>) -> ScanStep<'a> {
    ScanStep {
        done: p.done,
        total: p.total,
        readings: p.readings,
        frame: None,
    }
}

/// A MindCub3r driven by a job (plus its simulated brick, if any).
pub struct Mc3Run {
    pub robot: MindCub3r,
    pub sim: Option<SimHandle>,
    pub planner: Planner,
    /// The robot's orientation (start-up frame) when the last scan began.
    scan_start: Orientation,
    /// After a resume's [`RunRobot::mark_frame`]: the robot's orientation (start-up frame)
    /// then, and the cube's orientation relative to the first scan's frame then.
    origin: Option<(Orientation, Orientation)>,
    /// Robot seconds of motion executed so far (by the plan's cost model).
    seconds: f64,
    scanned: bool,
}

impl Mc3Run {
    pub fn new(robot: MindCub3r, sim: Option<SimHandle>, planner: Planner) -> Mc3Run {
        Mc3Run {
            scan_start: robot.orientation,
            origin: None,
            robot,
            sim,
            planner,
            seconds: 0.0,
            scanned: false,
        }
    }

    /// A scan by a scanner that looks at the top face (a camera): runs the colour-sensor
    /// scan's face sequence ([`scan_steps`]) on the robot, so the
    /// orientation bookkeeping is the scan's, and calls `look` at each face with the face
    /// step, what each top-face position shows (facelet index of the cube as it sat when
    /// the scan began, top positions row-major) and the simulator, if any. Returns the
    /// cube's orientation afterwards relative to the scan start, like [`RunRobot::scan`].
    pub fn present_faces(
        &mut self,
        size: Size,
        look: &mut FaceLook<'_>,
    ) -> Result<Orientation, RunError> {
        self.scan_start = self.robot.orientation;
        self.scanned = true;
        self.robot.begin_frame(size);
        for (step, prims) in scan_steps().iter().enumerate() {
            for &p in prims {
                self.robot.execute(p)?;
            }
            let top = self.robot.top_facelets().ok_or(RunError::ScanFrameLost)?;
            look(step, &top, self.sim.as_ref())?;
        }
        Ok(self.relative_orientation())
    }

    /// Brings facelet `want` (frame of the last scan start) to the top face; returns the
    /// top-face position it shows at, and the simulator, if any.
    pub fn present_sticker(
        &mut self,
        want: usize,
    ) -> Result<(usize, Option<&SimHandle>), RunError> {
        let pos = self.robot.bring_to_top(want)?;
        Ok((pos, self.sim.as_ref()))
    }

    /// The cube's orientation relative to the frame the last scan began in.
    pub fn relative_orientation(&self) -> Orientation {
        self.robot.orientation.relative_to(&self.scan_start)
    }
}

impl Mc3Run {
    /// The cube's orientation in the robot relative to the first scan's frame: relative to
    /// the last scan's start in a fresh run (that scan was the first), through the frame a
    /// resume marked otherwise.
    fn cube_orientation(&self) -> Orientation {
        match self.origin {
            Some((then, base)) => {
                let rel = self.robot.orientation.relative_to(&then);
                Orientation(std::array::from_fn(|pos| base.0[rel.0[pos].index()]))
            }
            None => self.relative_orientation(),
        }
    }
}

/// What [`Mc3Run::present_faces`] calls at each face: the face step, the facelet index each
/// top-face position shows (scan-start frame, row-major), the simulator if any.
pub type FaceLook<'a> = dyn FnMut(usize, &[usize], Option<&SimHandle>) -> Result<(), RunError> + 'a;

impl Mc3Run {
    /// Where planning starts: re-reads may have turned the cube since the scan, so from
    /// where it is now (a resumed run did not scan: the journal's orientation holds).
    fn plan_start(&self, start: &RobotState) -> RobotState {
        if self.scanned {
            RobotState {
                orientation: self.cube_orientation(),
                arm: Arm::Away,
                turntable: 0,
            }
        } else {
            *start
        }
    }
}

impl RunRobot for Mc3Run {
    fn kind(&self) -> &'static str {
        "mindcub3r"
    }

    fn scan(
        &mut self,
        size: Size,
        progress: &mut dyn FnMut(ScanStep<'_>),
    ) -> Result<(RawScan, Orientation), RunError> {
        self.scan_start = self.robot.orientation;
        self.scanned = true;
        let raw = self.robot.scan(size, &mut |p| progress(step_of(&p)))?;
        Ok((raw, self.relative_orientation()))
    }

    fn scan_with_preview(
        &mut self,
        size: Size,
        progress: &mut dyn FnMut(ScanStep<'_>),
        preview: &mut dyn FnMut(&RawScan, Orientation),
    ) -> Result<(RawScan, Orientation), RunError> {
        self.scan_start = self.robot.orientation;
        self.scanned = true;
        // Where the scan leaves the cube, relative to where it began.
        let end = scan_steps()
            .iter()
            .flatten()
            .fold(Orientation::IDENTITY, |o, &p| o.after(p));
        let raw =
            self.robot
                .scan_with_preview(size, &mut |p| progress(step_of(&p)), &mut |partial| {
                    preview(partial, end)
                })?;
        Ok((raw, self.relative_orientation()))
    }

    fn planning(&self) -> Option<Box<dyn Planning + Send + Sync>> {
        Some(Box::new(Mc3Planning {
            planner: self.planner.clone(),
        }))
    }

    fn scan_scale(&self) -> Option<crate::color::raw::Scale> {
        Some(crate::color::raw::Scale::Ev3Raw)
    }

    fn rescan(&mut self, stickers: &[usize]) -> Result<Vec<[f64; 3]>, RunError> {
        Ok(self.robot.rescan(stickers)?)
    }

    fn read_top_centre(&mut self) -> Result<Option<[f64; 3]>, RunError> {
        Ok(Some(self.robot.read_top_centre()?))
    }

    fn face_read_costs(&self, size: Size) -> Option<Vec<f64>> {
        let plans = face_read_plans(size, &self.planner.costs().timings);
        Some(
            plans
                .iter()
                .map(|p| p.as_ref().map_or(f64::INFINITY, |(_, c)| *c))
                .collect(),
        )
    }

    fn read_faces(&mut self, size: Size, faces: u8) -> Result<Vec<Option<[f64; 3]>>, RunError> {
        let plans = face_read_plans(size, &self.planner.costs().timings);
        let Some(Some((steps, _))) = plans.get(faces as usize) else {
            return Err(RunError::NoFaceReads);
        };
        // A new frame (indices of the cube as it sits now), the orientation kept.
        let base = self.cube_orientation();
        self.robot.begin_frame(size);
        self.scan_start = self.robot.orientation;
        self.origin = Some((self.robot.orientation, base));
        self.scanned = true;
        Ok(self.robot.read_faces(size, steps)?)
    }

    fn plan(&self, cands: &[Alg], start: &RobotState) -> Result<RobotPlan, RunError> {
        mindcub3r_plan(&self.planner, cands, &self.plan_start(start))
    }

    fn sequence_cost(&self, start: &RobotState) -> Option<SequenceCost> {
        Some(self.planner.sequence_cost(self.plan_start(start)))
    }

    fn execute(
        &mut self,
        plan: &RobotPlan,
        progress: &mut dyn FnMut(Progress<'_>) -> Result<(), RunError>,
    ) -> Result<(), RunError> {
        let costs = CostModel::plain(self.planner.costs().timings.clone());
        let mut state = plan.start;
        let prims = plan
            .actions
            .iter()
            .map(|a| match a {
                Action::Primitive(p) => Ok(*p),
                other => Err(RunError::NotAPrimitive(other.clone())),
            })
            .collect::<Result<Vec<Primitive>, RunError>>()?;
        let on_brick = self.robot.config.execution.on_brick;
        let mut i = 0;
        while i < prims.len() {
            let n = if on_brick && MindCub3r::chunkable(prims[i]) {
                self.robot.chunk_len(&prims[i..])
            } else {
                1
            };
            let actions = &plan.actions[i..i + n];
            progress(Progress::Sending(actions))?;
            if on_brick && MindCub3r::chunkable(prims[i]) {
                self.robot.execute_chunk(&prims[i..i + n])?;
            } else {
                self.robot.execute(prims[i])?;
            }
            // Every primitive the robot confirmed is reported, even after a stop was asked.
            let mut stop = None;
            for (a, &p) in actions.iter().zip(&prims[i..i + n]) {
                self.seconds += costs.cost(&state, p);
                state = state.after(p);
                if let Err(e) = progress(Progress::Done(a, self.seconds)) {
                    stop.get_or_insert(e);
                }
            }
            if let Some(e) = stop {
                return Err(e);
            }
            i += n;
        }
        Ok(self.robot.finish(true)?)
    }

    fn settle(&mut self, in_flight: &[Action], _cause: &RunError) -> Answer {
        // A chunk run on the brick: its program's record, or the motor counts (see
        // `MindCub3r::chunk_landed`). One primitive run from here: its motors say whether
        // its effect on the cube (the layer turned, the cube spun or tilted) happened.
        if self.robot.config.execution.on_brick {
            match self.robot.chunk_landed() {
                Settled::Exactly(count, by) => {
                    return Answer::Landed { count, by };
                }
                Settled::Between(at_least, at_most, by) => {
                    return Answer::Between {
                        at_least,
                        at_most,
                        by,
                    };
                }
                Settled::Unknown if in_flight.len() > 1 => return Answer::Unknown,
                Settled::Unknown => {}
            }
        }
        if in_flight.len() != 1 {
            return Answer::Unknown;
        }
        match self.robot.in_flight_landed() {
            Some((landed, by)) => Answer::Landed {
                count: landed as usize,
                by,
            },
            None => Answer::Unknown,
        }
    }

    fn stop(&mut self) -> Option<bool> {
        Some(self.robot.stop())
    }

    fn mark_frame(&mut self, size: Size, base: Orientation) {
        self.robot.begin_frame(size);
        self.scan_start = self.robot.orientation;
        self.origin = Some((self.robot.orientation, base));
        self.scanned = true;
    }

    fn orientation(&self) -> Orientation {
        self.cube_orientation()
    }

    fn rebase(&mut self, base: Orientation) {
        if let Some((_, b)) = self.origin.as_mut() {
            *b = base;
        }
    }

    fn read_back(&mut self) -> Option<(FaceletCube, FaceletCube)> {
        self.sim
            .as_ref()
            .map(|s| (s.initial_cube().clone(), s.cube()))
    }

    fn sim_clock(&self) -> Option<f64> {
        self.sim.as_ref().map(|s| s.clock())
    }

    fn reorients(&self) -> bool {
        true
    }
}
