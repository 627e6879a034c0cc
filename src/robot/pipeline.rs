//! The whole job as a library: scan → resolve (re-scanning doubtful stickers) → validate →
//! solve to the target (from the symmetric variants of the problem) → plan the cheapest
//! execution for this robot → execute with a journal → verify. `cubot run`, `save`,
//! `restore` and `bench robot` are thin layers over this.
//!
//! Level: robot (depends on `cube`, `color`, the robot modules; the solver and the colour
//! resolver are passed in as [`Services`] so robots, simulators and tests can combine them).
//! No printing: progress goes to a [`RunEvent`] callback.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::Serialize;

use super::journal::{self, Action, Journal, JournalError, JournalStart};
use super::line::{parse_token, token, LineError, LineRobot};
use super::mindcub3r::cost::{Arm, CostModel, PlanError, RobotState};
use super::mindcub3r::frames::{
    self, align_target, apply_primitives, candidates, to_cube, to_robot,
};
use super::mindcub3r::model::{Orientation, Primitive};
use super::mindcub3r::planner::{self, Planner};
use super::sim::line::LineSimHandle;
use super::symmetry::{same_up_to_rotation, Symmetry};
use crate::color::raw::RawScan;
use crate::cube::{Alg, Face, FaceletCube, Size};
use crate::solver::costed::SequenceCost;

/// What went wrong, with the evidence. [`RunError::is_no`] tells a well-formed "no"
/// (exit 1) from an operational failure (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("scan failed: {0}")]
    Scan(String),
    #[error("the scan stays ambiguous after {rescans} re-scans; stickers in doubt: {doubtful:?}")]
    Ambiguous {
        doubtful: Vec<usize>,
        rescans: usize,
    },
    #[error("the scanned cube is not a legal cube: {0}")]
    Invalid(String),
    #[error("bad target: {0}")]
    Target(String),
    #[error("no solution: {0}")]
    Solve(String),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error("robot: {0}")]
    Robot(String),
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error("stopped after {steps} actions ({reason}); the cube is now {state} (robot frame {robot_state}); resume with: cubot run --resume {}", journal.display())]
    Interrupted {
        reason: String,
        journal: PathBuf,
        /// Cube frame of the first scan, first-scan symbols.
        state: String,
        /// As it sits in the robot now.
        robot_state: String,
        steps: usize,
        seconds: f64,
    },
}

impl RunError {
    /// A well-formed "no" (exit 1) rather than an operational error (exit 2).
    pub fn is_no(&self) -> bool {
        matches!(
            self,
            RunError::Ambiguous { .. }
                | RunError::Invalid(_)
                | RunError::Target(_)
                | RunError::Solve(_)
        )
    }
}

impl From<LineError> for RunError {
    fn from(e: LineError) -> Self {
        RunError::Robot(e.to_string())
    }
}

/// A resolved scan as the pipeline needs it.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub cube: FaceletCube,
    /// Facelet indices in doubt.
    pub doubtful: Vec<usize>,
    pub confident: bool,
    /// Lab value per sticker (to match colours between scans).
    pub labs: Vec<[f64; 3]>,
}

/// Why the resolver gave no cube.
#[derive(Clone, Debug)]
pub enum ResolveFailure {
    /// Too close to call between legal cubes: re-read these.
    Ambiguous {
        doubtful: Vec<usize>,
        best: Box<Resolved>,
    },
    /// No legal cube (a message naming the evidence).
    Failed(String),
}

/// The solver and the colour resolver.
pub struct Services<'a> {
    pub resolve: &'a (dyn Fn(&RawScan) -> Result<Resolved, ResolveFailure> + Sync),
    /// `solve(start, target, n)`: up to n solutions, shortest first (3x3x3: exactly to the
    /// target; 2x2x2: up to a whole-cube rotation).
    pub solve: &'a frames::SolveFn<'a, String>,
    /// `solve_costed(start, target, cost, bound)`: 3x3x3 solutions that are cheap under a
    /// robot's cost automaton (only those cheaper than `bound`), cheapest first; `None`:
    /// the robot executes the cheapest of the `solve` candidates.
    pub solve_costed: Option<&'a CostedFn<'a>>,
}

/// See [`Services::solve_costed`].
pub type CostedFn<'a> =
    dyn Fn(&FaceletCube, &FaceletCube, &SequenceCost, Option<f64>) -> Result<Vec<Alg>, String> + 'a;

/// A robot the pipeline can drive.
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

fn orientation_after(o: Orientation, action: &Action) -> Orientation {
    match action {
        Action::Primitive(p) => o.after(*p),
        Action::Turns(_) => o,
    }
}

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

/// A target: a facelet string in the first scan's symbols, or a saved state whose colours
/// are matched to the first scan's by their Lab values.
#[derive(Clone, Debug)]
pub enum TargetSpec {
    State(String),
    Saved(SavedState),
}

/// A saved cube state (`cubot save`): the state in its scan's symbols, the Lab centroid of
/// each symbol (so another scan, with other symbol names, can be matched), when, and how.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct SavedState {
    pub version: u32,
    pub saved: String,
    pub size: u32,
    pub state: String,
    /// Symbol → mean Lab of its stickers.
    pub colors: Vec<(char, [f64; 3])>,
    /// Free-form: robot, scanner, calibration file used.
    #[serde(default)]
    pub calibration: serde_json::Value,
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

/// Mean Lab per symbol of a resolved scan.
pub fn color_centroids(r: &Resolved) -> Vec<(char, [f64; 3])> {
    let symbols = r.cube.symbols();
    let mut out = Vec::new();
    for f in Face::ALL {
        let mut sum = [0.0; 3];
        let mut n = 0.0;
        for (i, &c) in r.cube.colors().iter().enumerate() {
            if c == f {
                if let Some(l) = r.labs.get(i) {
                    for k in 0..3 {
                        sum[k] += l[k];
                    }
                    n += 1.0;
                }
            }
        }
        if n > 0.0 {
            out.push((symbols[f.index()], sum.map(|v| v / n)));
        }
    }
    out
}

/// The assignment of `from` symbols to `to` symbols with the least total Lab distance
/// (6! permutations).
fn match_colors(from: &[(char, [f64; 3])], to: &[(char, [f64; 3])]) -> Option<Vec<(char, char)>> {
    if from.len() != 6 || to.len() != 6 {
        return None;
    }
    let d = |a: &[f64; 3], b: &[f64; 3]| {
        // Lightness matters less than hue between two lights.
        let dl = 0.5 * (a[0] - b[0]);
        (dl * dl + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
    };
    let mut best: Option<(f64, Vec<usize>)> = None;
    let mut perm: Vec<usize> = (0..6).collect();
    permute(&mut perm, 0, &mut |p| {
        let cost: f64 = (0..6).map(|i| d(&from[i].1, &to[p[i]].1)).sum();
        if best.as_ref().is_none_or(|(c, _)| cost < *c) {
            best = Some((cost, p.to_vec()));
        }
    });
    best.map(|(_, p)| (0..6).map(|i| (from[i].0, to[p[i]].0)).collect())
}

fn permute(v: &mut Vec<usize>, k: usize, f: &mut dyn FnMut(&[usize])) {
    if k == v.len() {
        f(v);
        return;
    }
    for i in k..v.len() {
        v.swap(k, i);
        permute(v, k + 1, f);
        v.swap(k, i);
    }
}

/// The relabelling of `actual`'s colours that agrees best with `believed` sticker by
/// sticker (a permutation), or `None`.
fn majority_labels(actual: &FaceletCube, believed: &FaceletCube) -> Option<[Face; 6]> {
    if actual.size() != believed.size() {
        return None;
    }
    let mut counts = [[0usize; 6]; 6];
    for (a, b) in actual.colors().iter().zip(believed.colors()) {
        counts[a.index()][b.index()] += 1;
    }
    let map: [Face; 6] = std::array::from_fn(|a| {
        let best = (0..6).max_by_key(|&b| counts[a][b]).expect("six");
        Face::ALL[best]
    });
    let mut seen = [false; 6];
    for f in map {
        if std::mem::replace(&mut seen[f.index()], true) {
            return None;
        }
    }
    Some(map)
}

fn relabel(cube: &FaceletCube, map: &[Face; 6], symbols: [char; 6]) -> FaceletCube {
    let colors = cube.colors().iter().map(|c| map[c.index()]).collect();
    FaceletCube::from_colors(cube.size(), colors)
        .expect("same size")
        .with_symbols(symbols)
}

/// Scans and resolves, re-reading doubtful stickers up to `max_rescans` times.
pub fn scan_and_resolve(
    robot: &mut dyn RunRobot,
    services: &Services,
    size: Size,
    max_rescans: usize,
    events: &mut dyn FnMut(RunEvent),
) -> Result<(Resolved, Orientation, usize), RunError> {
    let (mut raw, orientation) = robot.scan(size, &mut |done, total| {
        events(RunEvent::ScanProgress { done, total })
    })?;
    let mut rescans = 0;
    // Every reading of each sticker, averaged.
    let mut reads: Vec<Vec<[f64; 3]>> = raw.facelets.iter().map(|&r| vec![r]).collect();
    loop {
        match (services.resolve)(&raw) {
            Ok(r) if r.doubtful.is_empty() || rescans >= max_rescans => {
                events(RunEvent::Scanned {
                    confident: r.confident,
                    doubtful: r.doubtful.clone(),
                    rescans,
                    state: r.cube.to_string(),
                });
                return Ok((r, orientation, rescans));
            }
            Ok(r) => {
                let doubtful = r.doubtful.clone();
                reread(robot, &mut raw, &mut reads, &doubtful)?;
            }
            Err(ResolveFailure::Ambiguous { doubtful, .. }) => {
                if rescans >= max_rescans || doubtful.is_empty() {
                    return Err(RunError::Ambiguous { doubtful, rescans });
                }
                reread(robot, &mut raw, &mut reads, &doubtful)?;
            }
            Err(ResolveFailure::Failed(msg)) => {
                if rescans >= max_rescans {
                    return Err(RunError::Invalid(msg));
                }
                // Nothing names a sticker: read the whole cube's stickers again.
                let all: Vec<usize> = (0..raw.facelets.len()).collect();
                reread(robot, &mut raw, &mut reads, &all)?;
            }
        }
        rescans += 1;
    }
}

fn reread(
    robot: &mut dyn RunRobot,
    raw: &mut RawScan,
    reads: &mut [Vec<[f64; 3]>],
    stickers: &[usize],
) -> Result<(), RunError> {
    let fresh = robot.rescan(stickers)?;
    for (&i, v) in stickers.iter().zip(fresh) {
        if let Some(list) = reads.get_mut(i) {
            list.push(v);
            let n = list.len() as f64;
            raw.facelets[i] = std::array::from_fn(|k| list.iter().map(|r| r[k]).sum::<f64>() / n);
            // A re-read's own error is not known: the resolver's device model applies.
            raw.sigma = None;
        }
    }
    Ok(())
}

/// The target in the first scan's colour naming (not yet aligned).
pub fn target_cube(first: &Resolved, spec: Option<&TargetSpec>) -> Result<FaceletCube, RunError> {
    let symbols = first.cube.symbols();
    let size = first.cube.size();
    match spec {
        None => Ok(FaceletCube::solved(size).with_symbols(symbols)),
        Some(TargetSpec::State(s)) => {
            let t = journal::decode(s, &symbols).ok_or_else(|| {
                RunError::Target(format!(
                    "{s:?} must use the first scan's symbols {} ({} stickers)",
                    symbols.iter().collect::<String>(),
                    size.stickers()
                ))
            })?;
            check_target(&t, size)?;
            Ok(t)
        }
        Some(TargetSpec::Saved(saved)) => {
            let map = match_colors(&saved.colors, &color_centroids(first)).ok_or_else(|| {
                RunError::Target("the saved file does not list six colours".into())
            })?;
            let state: String = saved
                .state
                .chars()
                .filter(|c| !c.is_whitespace())
                .map(|c| {
                    map.iter()
                        .find(|(a, _)| *a == c)
                        .map(|(_, b)| *b)
                        .unwrap_or('?')
                })
                .collect();
            let t = journal::decode(&state, &symbols).ok_or_else(|| {
                RunError::Target(format!(
                    "saved state {:?} uses unknown symbols",
                    saved.state
                ))
            })?;
            check_target(&t, size)?;
            Ok(t)
        }
    }
}

fn check_target(t: &FaceletCube, size: Size) -> Result<(), RunError> {
    if t.size() != size {
        return Err(RunError::Target(format!(
            "a {} target for a {size} cube",
            t.size()
        )));
    }
    crate::cube::validate(&t.to_letters())
        .map(|_| ())
        .map_err(|e| RunError::Target(e.to_string()))
}

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

/// Solves, plans and executes from a known position, journaling every action, then
/// verifies.
#[allow(clippy::too_many_arguments)]
pub fn finish(
    robot: &mut dyn RunRobot,
    services: &Services,
    pos: &Position,
    opts: &RunOptions,
    first_colors: &[(char, [f64; 3])],
    scan_confident: bool,
    rescans: usize,
    resumed: bool,
    events: &mut dyn FnMut(RunEvent),
) -> Result<RunReport, RunError> {
    let symbols = pos.first_scan.symbols();
    let size = pos.cube.size();
    let aligned = align_target(&pos.cube, &pos.target).ok_or_else(|| {
        RunError::Target(
            "its centres are not the cube's centres in any orientation (different cube?)".into(),
        )
    })?;
    let plain =
        |c: &FaceletCube| FaceletCube::from_colors(c.size(), c.colors().to_vec()).expect("size");
    // Even a robot with fixed motors gains: the solver answers each variant differently.
    let mut syms = Symmetry::all(opts.mirror);
    if !opts.symmetries {
        syms.truncate(1);
    }
    let cands = candidates(
        &plain(&pos.cube),
        &plain(&aligned),
        &syms,
        opts.inverse,
        opts.solutions.max(1),
        services.solve,
    )
    .map_err(RunError::Solve)?;
    // Keep only candidates that really reach the target (cheap insurance).
    let cands: Vec<Alg> = cands
        .into_iter()
        .filter(|a| {
            let mut c = plain(&pos.cube);
            c.apply(a).is_ok()
                && (if size == Size::Three {
                    c.colors() == plain(&aligned).colors()
                } else {
                    same_up_to_rotation(&c, &plain(&aligned))
                })
        })
        .collect();
    if cands.is_empty() {
        return Err(RunError::Solve(
            "the solver returned no solution that reaches the target".into(),
        ));
    }
    events(RunEvent::Solved {
        candidates: cands.len(),
        shortest: cands.iter().map(|a| a.len()).min().unwrap_or(0),
    });
    // A robot with a cost model: search for solutions that are cheap for it, bounded by
    // the best plan of the candidates (each one checked like the candidates).
    let mut cands = cands;
    if let (Some(costed), Some(sc), Size::Three) =
        (services.solve_costed, robot.sequence_cost(&pos.robot), size)
    {
        let bound = robot.plan(&cands, &pos.robot)?.seconds;
        if let Ok(more) = costed(&plain(&pos.cube), &plain(&aligned), &sc, Some(bound)) {
            for a in more {
                let mut c = plain(&pos.cube);
                if c.apply(&a).is_ok()
                    && c.colors() == plain(&aligned).colors()
                    && !cands.contains(&a)
                {
                    cands.push(a);
                }
            }
        }
    }
    let plan = robot.plan(&cands, &pos.robot)?;
    events(RunEvent::Planned {
        solution: plan.alg.to_string(),
        face_turns: plan.alg.len(),
        actions: plan.actions.len(),
        robot_seconds: plan.seconds,
        baseline_seconds: plan.baseline_seconds,
    });

    let mut tracked = to_robot(&pos.cube, &plan.start.orientation);
    let mut orientation = plan.start.orientation;
    let mut journal = Journal::create(
        &opts.journal,
        &JournalStart {
            version: 1,
            created: journal::now_rfc3339(),
            robot: robot.kind().into(),
            size,
            symbols: symbols.iter().collect(),
            first_scan: journal::encode(&pos.first_scan, &symbols),
            target: journal::encode(&pos.target, &symbols),
            state: journal::encode(&tracked, &symbols),
            orientation,
            solution: plan.alg.to_string(),
            planned_seconds: plan.seconds,
            plan: plan.actions.clone(),
            colors: first_colors.to_vec(),
        },
    )?;
    // What the host believes a simulator's initial cube is: the first scan (a fresh run
    // scans from the simulator's start) or this execution's start (a resumed simulator
    // starts from the journal's cube).
    let believed_initial = if resumed {
        tracked.clone()
    } else {
        pos.first_scan.clone()
    };
    let total = plan.actions.len();
    let mut done = 0usize;
    let mut seconds = 0.0;
    let stop = opts.stop.clone();
    let result = robot.execute(&plan, &mut |action, secs| {
        apply_action(&mut tracked, action);
        orientation = orientation_after(orientation, action);
        done += 1;
        seconds = secs;
        journal.step(action.clone(), &tracked, Some(orientation), secs)?;
        events(RunEvent::Executing {
            done,
            total,
            robot_seconds: secs,
        });
        if stop.load(Ordering::SeqCst) {
            return Err(RunError::Robot("stopped by the user (Ctrl-C)".into()));
        }
        Ok(())
    });
    if let Err(e) = result {
        let reason = match &e {
            RunError::Robot(r) => r.clone(),
            other => other.to_string(),
        };
        let _ = journal.interrupted(&reason);
        return Err(RunError::Interrupted {
            reason,
            journal: opts.journal.clone(),
            state: journal::encode(&to_cube(&tracked, &orientation), &symbols),
            robot_state: journal::encode(&tracked, &symbols),
            steps: done,
            seconds,
        });
    }

    // Verify: a simulator's read-back, compared in the first scan's colour naming.
    events(RunEvent::Verifying {
        by: "simulator read-back".into(),
    });
    let (final_robot, verified_by) = match robot.read_back() {
        Some((initial, now)) => match majority_labels(&initial, &believed_initial) {
            Some(map) => (relabel(&now, &map, symbols), "simulator read-back"),
            None => {
                return Err(RunError::Robot(
                    "the simulator's cube does not match the scanned one at all".into(),
                ))
            }
        },
        None => match first_colors.len() == 6 {
            // A real robot: scan again and match the colours to the first scan's.
            true => {
                let (again, _, _) =
                    scan_and_resolve(robot, services, size, opts.max_rescans, events)?;
                let map =
                    match_colors(&color_centroids(&again), first_colors).ok_or_else(|| {
                        RunError::Scan("cannot match the colours of the re-scan".into())
                    })?;
                let face_map: [Face; 6] = std::array::from_fn(|i| {
                    let s = again.cube.symbols()[i];
                    let t = map
                        .iter()
                        .find(|(a, _)| *a == s)
                        .map(|(_, b)| *b)
                        .unwrap_or(s);
                    Face::ALL[symbols.iter().position(|&x| x == t).unwrap_or(i)]
                });
                let c = relabel(&again.cube, &face_map, symbols);
                orientation = Orientation::IDENTITY;
                (c, "re-scan")
            }
            false => (tracked.clone(), "tracking (no read-back)"),
        },
    };
    let final_cube = if verified_by == "re-scan" {
        final_robot.clone()
    } else {
        to_cube(&final_robot, &orientation)
    };
    let reached =
        same_up_to_rotation(&final_cube, &pos.target) && (verified_by != "tracking (no read-back)");
    journal.end(reached)?;
    // Report the final state in the first scan's orientation (3x3x3: by its centres).
    let final_state = match frames::orientation_from_centres(&final_cube, &pos.first_scan) {
        Some(o) => to_cube(&final_cube, &o),
        None => final_cube.clone(),
    };
    let target_out = if reached && size == Size::Two {
        // A 2x2x2 has no centres: show the target as the cube now shows it.
        frames::rotations_of(&pos.target)
            .into_iter()
            .find(|t| t.colors() == final_state.colors())
            .unwrap_or_else(|| pos.target.clone())
    } else {
        // Turned whole to the first scan's orientation (3x3x3: its centres).
        align_target(&pos.first_scan, &pos.target).unwrap_or_else(|| pos.target.clone())
    };
    Ok(RunReport {
        reached_target: reached,
        final_state: journal::encode(&final_state, &symbols),
        target: journal::encode(&target_out, &symbols),
        first_scan: journal::encode(&pos.first_scan, &symbols),
        face_turns: plan.alg.len(),
        robot_seconds: plan.seconds,
        baseline_seconds: plan.baseline_seconds,
        solution: plan.alg.to_string(),
        actions: plan.actions.len(),
        candidates: cands.len(),
        scan_confident,
        rescans,
        verified_by: verified_by.into(),
        journal: opts.journal.clone(),
        robot: robot.kind().into(),
        resumed,
    })
}

/// A fresh run: scan, resolve, validate, then [`finish`].
pub fn run(
    robot: &mut dyn RunRobot,
    services: &Services,
    opts: &RunOptions,
    events: &mut dyn FnMut(RunEvent),
) -> Result<RunReport, RunError> {
    let (first, orientation, rescans) =
        scan_and_resolve(robot, services, opts.size, opts.max_rescans, events)?;
    crate::cube::validate(&first.cube.to_letters())
        .map_err(|e| RunError::Invalid(e.to_string()))?;
    let target = target_cube(&first, opts.target.as_ref())?;
    let pos = Position {
        cube: first.cube.clone(),
        robot: RobotState {
            orientation,
            arm: Arm::Away,
            turntable: 0,
        },
        first_scan: first.cube.clone(),
        target,
    };
    finish(
        robot,
        services,
        &pos,
        opts,
        &color_centroids(&first),
        first.confident,
        rescans,
        false,
        events,
    )
}

/// The position a journal left (for `--resume`).
pub fn resume_position(rec: &journal::JournalRecord) -> Result<Position, RunError> {
    let symbols = rec.symbols;
    let bad = |what: &str| RunError::Target(format!("journal: bad {what}"));
    let first_scan =
        journal::decode(&rec.start.first_scan, &symbols).ok_or_else(|| bad("first_scan"))?;
    let target = journal::decode(&rec.start.target, &symbols).ok_or_else(|| bad("target"))?;
    let cube = to_cube(&rec.state, &rec.orientation);
    Ok(Position {
        cube,
        robot: RobotState {
            orientation: rec.orientation,
            arm: Arm::Away,
            turntable: 0,
        },
        first_scan,
        target,
    })
}

/// Scans and returns what `cubot save` stores.
pub fn save(
    robot: &mut dyn RunRobot,
    services: &Services,
    size: Size,
    max_rescans: usize,
    calibration: serde_json::Value,
    events: &mut dyn FnMut(RunEvent),
) -> Result<SavedState, RunError> {
    let (first, _, _) = scan_and_resolve(robot, services, size, max_rescans, events)?;
    crate::cube::validate(&first.cube.to_letters())
        .map_err(|e| RunError::Invalid(e.to_string()))?;
    Ok(SavedState {
        version: 1,
        saved: journal::now_rfc3339(),
        size: size.n() as u32,
        state: first.cube.to_string(),
        colors: color_centroids(&first),
        calibration,
    })
}

/// Reads a saved state file.
pub fn read_saved(path: &Path) -> Result<SavedState, RunError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| RunError::Target(format!("cannot read {}: {e}", path.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| RunError::Target(format!("{} is not a saved state: {e}", path.display())))
}

// ----- the line-protocol robot -----

/// A line-protocol robot driven by the pipeline (plus its simulator, if any).
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
            return Err(RunError::Scan(format!(
                "robot {:?} has no colour sensors (CAPS scan=0); give the state with --state",
                self.robot.caps().name
            )));
        };
        if self.robot.caps().size as usize != size.n() {
            return Err(RunError::Scan(format!(
                "the robot holds a {}x{0}x{0} cube, not {size}",
                self.robot.caps().size
            )));
        }
        progress(0, 1);
        let readings = self.robot.scan(&[])?;
        progress(1, 1);
        Ok((RawScan::new(size, scale, readings), Orientation::IDENTITY))
    }

    fn rescan(&mut self, stickers: &[usize]) -> Result<Vec<[f64; 3]>, RunError> {
        Ok(self.robot.scan(stickers)?)
    }

    fn plan(&self, cands: &[Alg], _start: &RobotState) -> Result<RobotPlan, RunError> {
        let caps = self.robot.caps();
        let mut best: Option<(usize, Vec<Vec<crate::cube::Move>>, f64, Alg)> = None;
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
            start: *_start,
        })
    }

    fn execute(
        &mut self,
        plan: &RobotPlan,
        done: &mut dyn FnMut(&Action, f64) -> Result<(), RunError>,
    ) -> Result<(), RunError> {
        let steps: Vec<Vec<crate::cube::Move>> = plan
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

/// The colour resolver as a pipeline service.
pub fn resolve_with(
    opts: crate::color::resolve::ResolveOptions,
) -> impl Fn(&RawScan) -> Result<Resolved, ResolveFailure> + Sync {
    use crate::color::resolve::{resolve, Resolution, ResolveError};
    let conv = |r: &Resolution| Resolved {
        cube: r.cube.clone(),
        doubtful: r.doubtful.clone(),
        confident: r.confident,
        labs: r.stickers.iter().map(|s| s.lab).collect(),
    };
    move |scan: &RawScan| match resolve(scan, &opts) {
        Ok(r) => Ok(conv(&r)),
        Err(ResolveError::Ambiguous { doubtful, best, .. }) => Err(ResolveFailure::Ambiguous {
            doubtful,
            best: Box::new(conv(&best)),
        }),
        Err(e) => Err(ResolveFailure::Failed(e.to_string())),
    }
}

// ----- the MindCub3r -----

/// A MindCub3r driven by the pipeline (plus its simulated brick, if any).
pub struct Mc3Run {
    pub robot: super::mindcub3r::MindCub3r,
    pub sim: Option<super::sim::SimHandle>,
    pub planner: Planner,
    /// The robot's orientation (start-up frame) when the last scan began.
    scan_start: Orientation,
    /// Robot seconds of motion executed so far (by the plan's cost model).
    seconds: f64,
    scanned: bool,
}

impl Mc3Run {
    pub fn new(
        robot: super::mindcub3r::MindCub3r,
        sim: Option<super::sim::SimHandle>,
        planner: Planner,
    ) -> Mc3Run {
        Mc3Run {
            scan_start: robot.orientation,
            robot,
            sim,
            planner,
            seconds: 0.0,
            scanned: false,
        }
    }

    /// A scan by a scanner that looks at the top face (a camera): runs the colour-sensor
    /// scan's face sequence ([`super::mindcub3r::scan_steps`]) on the robot, so the
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
        for (step, prims) in super::mindcub3r::scan_steps().iter().enumerate() {
            for &p in prims {
                self.robot.execute(p).map_err(robot_err)?;
            }
            let top = self
                .robot
                .top_facelets()
                .ok_or_else(|| RunError::Scan("the scan frame was lost".into()))?;
            look(step, &top, self.sim.as_ref())?;
        }
        Ok(self.relative_orientation())
    }

    /// Brings facelet `want` (frame of the last scan start) to the top face; returns the
    /// top-face position it shows at, and the simulator, if any.
    pub fn present_sticker(
        &mut self,
        want: usize,
    ) -> Result<(usize, Option<&super::sim::SimHandle>), RunError> {
        let pos = self.robot.bring_to_top(want).map_err(robot_err)?;
        Ok((pos, self.sim.as_ref()))
    }

    /// The cube's orientation relative to the frame the last scan began in.
    pub fn relative_orientation(&self) -> Orientation {
        relative(&self.scan_start, &self.robot.orientation)
    }
}

/// `now` expressed in the frame whose orientation was `base` (both in one common frame).
fn relative(base: &Orientation, now: &Orientation) -> Orientation {
    Orientation(std::array::from_fn(|pos| base.position_of(now.0[pos])))
}

/// What [`Mc3Run::present_faces`] calls at each face: the face step, the facelet index each
/// top-face position shows (scan-start frame, row-major), the simulator if any.
pub type FaceLook<'a> =
    dyn FnMut(usize, &[usize], Option<&super::sim::SimHandle>) -> Result<(), RunError> + 'a;

impl Mc3Run {
    /// Where planning starts: re-reads may have turned the cube since the scan, so from
    /// where it is now (a resumed run did not scan: the journal's orientation holds).
    fn plan_start(&self, start: &RobotState) -> RobotState {
        if self.scanned {
            RobotState {
                orientation: self.relative_orientation(),
                arm: Arm::Away,
                turntable: 0,
            }
        } else {
            *start
        }
    }
}

fn robot_err(e: super::mindcub3r::RobotError) -> RunError {
    RunError::Robot(e.to_string())
}

impl RunRobot for Mc3Run {
    fn kind(&self) -> &'static str {
        "mindcub3r"
    }

    fn scan(
        &mut self,
        size: Size,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<(RawScan, Orientation), RunError> {
        self.scan_start = self.robot.orientation;
        self.scanned = true;
        let raw = self
            .robot
            .scan(size, &mut |p| progress(p.done, p.total))
            .map_err(robot_err)?;
        Ok((raw, self.relative_orientation()))
    }

    fn rescan(&mut self, stickers: &[usize]) -> Result<Vec<[f64; 3]>, RunError> {
        self.robot.rescan(stickers).map_err(robot_err)
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
        done: &mut dyn FnMut(&Action, f64) -> Result<(), RunError>,
    ) -> Result<(), RunError> {
        let costs = CostModel::plain(self.planner.costs().timings.clone());
        let mut state = plan.start;
        for a in &plan.actions {
            let Action::Primitive(p) = a else {
                return Err(RunError::Robot(format!(
                    "{a:?} is not a MindCub3r primitive"
                )));
            };
            self.robot.execute(*p).map_err(robot_err)?;
            self.seconds += costs.cost(&state, *p);
            state = state.after(*p);
            done(a, self.seconds)?;
        }
        self.robot.finish(true).map_err(robot_err)
    }

    fn read_back(&mut self) -> Option<(FaceletCube, FaceletCube)> {
        self.sim
            .as_ref()
            .map(|s| (s.initial_cube().clone(), s.cube()))
    }

    fn reorients(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_matching_finds_the_permutation() {
        let from = vec![
            ('U', [90.0, 0.0, 0.0]),
            ('R', [50.0, 60.0, 40.0]),
            ('F', [60.0, -50.0, 40.0]),
            ('D', [90.0, -5.0, 80.0]),
            ('L', [65.0, 40.0, 70.0]),
            ('B', [35.0, 10.0, -50.0]),
        ];
        let to: Vec<(char, [f64; 3])> = vec![
            ('w', [85.0, 2.0, 3.0]),
            ('b', [30.0, 12.0, -45.0]),
            ('o', [60.0, 45.0, 65.0]),
            ('y', [88.0, -3.0, 75.0]),
            ('r', [45.0, 55.0, 35.0]),
            ('g', [55.0, -45.0, 35.0]),
        ];
        let m = match_colors(&from, &to).unwrap();
        assert_eq!(
            m,
            vec![
                ('U', 'w'),
                ('R', 'r'),
                ('F', 'g'),
                ('D', 'y'),
                ('L', 'o'),
                ('B', 'b')
            ]
        );
    }

    #[test]
    fn majority_labels_is_a_permutation_or_nothing() {
        let a = FaceletCube::solved(Size::Three);
        let mut b = a.clone();
        b.apply(&Alg::parse("R").unwrap()).unwrap();
        assert_eq!(majority_labels(&a, &a), Some(Face::ALL));
        assert_eq!(majority_labels(&b, &b), Some(Face::ALL));
    }
}
