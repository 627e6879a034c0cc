//! Two bricks, one verdict: the same seeded job on two simulated bricks (cubot's own and
//! LEGO's firmware), in the same world (one seed gives both the same cube, colours and
//! sensor), with every byte of the host's link recorded; then the two runs side by side.
//! Where they differ in logic (a reply's status or a value that is no measurement, a
//! program's record, a decision of the host, the outcome) one brick is wrong; where they
//! differ physically (counts, speeds, readings, times) the sizes are the measure of how
//! far the two motor and world models are apart.
//!
//! The host's decisions are read from the run's events: each event with its measured
//! evidence taken out (sensor readings, colour probabilities and margins, measured
//! times), so what is left is what the host decided (the cube it saw, the stickers it
//! re-read, the plan it chose, the rounds, the checks). The exchange is compared by
//! [`crate::robot::ev3::protocol::exchange`].
//!
//! The brick is reached over its pty as a real one would be (the run verifies by
//! re-scanning), and the recording is stamped with the brick's clock, so times compare
//! in simulated seconds whichever brick runs faster on this machine.
//!
//! ## Where the two bricks still differ: the world model
//!
//! Over seeded 3x3x3 jobs at 60 ms every command until the end of the scan gets the same
//! status and the same values and records from both bricks; the differences there are
//! physical (a sample's turntable count, the sensor arm's, the readings, the replies'
//! times). LEGO's motor driver brings a medium motor to a count later and less exactly
//! than cubot's controller (ramps, the brake's hold), so a scan program on the firmware
//! brick takes a ring sample later in its window, and the host, judging what the program
//! recorded, reads some stickers again at rest with moves it polls: from there the two
//! conversations part. What follows is the host acting on other measurements (and, on a
//! loaded machine, its own stall checks, timed on its clock), not two bricks answering
//! one command differently. OUTPUT_READ's movement count also differs in kind: d_pwm's
//! `TachoCounts` is zeroed when a job starts and counted phase by phase, cubot's counts
//! from the last OUTPUT_RESET; no host of cubot reads it. The figures are
//! `cubot bench bricks`'s.
//!
//! Level: job (uses `robot`'s simulators and codec). No printing.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use serde_json::Value;

use crate::color::synth::Palette;
use crate::cube::Size;
use crate::robot::ev3::protocol::exchange::{self, Comparison, Tolerances, Turn};
use crate::robot::link::Tap;
use crate::robot::mindcub3r::Config;
use crate::robot::sim::lms2012::BrickKind;
use crate::robot::sim::{spawn_pty, SimConfig, SimError};

use super::{ConnectError, ConnectOptions, Link, RunEvent, RunOptions, Tools};

/// One job, the same on both bricks.
#[derive(Clone, Debug)]
pub struct Job {
    pub seed: u64,
    pub size: Size,
    pub latency_ms: u32,
    pub speed: f64,
    pub palette: Palette,
    pub config: Config,
    pub solutions: usize,
    /// Where the run's journal goes (removed afterwards).
    pub journal: PathBuf,
}

/// What one brick's run came to.
#[derive(Clone, Debug, Serialize)]
pub struct BrickRun {
    #[serde(skip)]
    pub turns: Vec<Turn>,
    /// The host's decisions, in order (each an event, its measured evidence taken out).
    pub decisions: Vec<Value>,
    /// The outcome: reached or not, the final state, the rounds, or the error.
    pub outcome: Value,
    /// Whether the simulator's own cube ended at the target.
    pub truth: bool,
    /// Seconds of brick time, and of wall time, the run took.
    pub brick_seconds: f64,
    pub wall_seconds: f64,
}

/// Why a brick could not be run at all.
#[derive(Debug, thiserror::Error)]
pub enum BricksError {
    #[error(transparent)]
    Sim(#[from] SimError),
}

/// Keys whose values are measurements or clock readings, left out of a decision: the
/// readings and what the resolver weighed them at (its closest rival cube among them: the
/// cube it decided on stays), measured times, the predicted robot
/// seconds (priced on the link's round trip, which is measured over a port) and whether
/// the plan was ready before the scan ended (a race of the host's threads).
const MEASURED: &[&str] = &[
    "readings",
    "probability",
    "cube_margin",
    "rival",
    "stickers",
    "classes",
    "measured_seconds",
    "robot_seconds",
    "baseline_seconds",
    "ahead",
    "journal",
];

fn decision(e: &RunEvent) -> Option<Value> {
    // Progress counts repeat as often as the clock ticks; what a run reports on is the rest.
    if matches!(
        e,
        RunEvent::ScanProgress { .. } | RunEvent::Executing { .. } | RunEvent::CameraFrame { .. }
    ) {
        return None;
    }
    let mut v = serde_json::to_value(e).ok()?;
    strip(&mut v);
    Some(v)
}

/// Takes the measured keys out of a decision or an outcome (as kept by an older run too).
pub fn strip(v: &mut Value) {
    if let Value::Object(m) = v {
        for k in MEASURED {
            m.remove(*k);
        }
        for x in m.values_mut() {
            strip(x);
        }
    } else if let Value::Array(a) = v {
        a.iter_mut().for_each(strip);
    }
}

/// Runs `job` on `brick`, recording the link.
pub fn run_on(brick: BrickKind, job: &Job, tools: &Tools) -> Result<BrickRun, BricksError> {
    let wall = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let sim = spawn_pty(SimConfig {
        seed: job.seed,
        speed: job.speed,
        palette: job.palette,
        latency_ms: job.latency_ms as f64,
        size: job.size,
        brick: brick.clone(),
        ..SimConfig::default()
    })?;
    let tap = Tap::with_clock(sim.clock_source());
    let o = ConnectOptions {
        robot: super::RobotKind::Mindcub3r,
        scanner: super::ScannerKind::Sensor,
        link: Link::Port(sim.path().to_path_buf()),
        config: job.config.clone(),
        faults: None,
        brick,
        seed: job.seed,
        speed: job.speed,
        palette: job.palette,
        size: job.size,
        start: None,
        stop: stop.clone(),
        baud: super::connect::SERIAL_BAUD,
        note: None,
        tap: Some(tap.clone()),
        sim_latency: Some(job.latency_ms as f64 / 1000.0),
        wire_log: None,
    };
    let opts = RunOptions {
        size: job.size,
        target: None,
        solutions: job.solutions,
        symmetries: false,
        mirror: false,
        inverse: true,
        max_rescans: 3,
        max_rounds: 3,
        journal: job.journal.clone(),
        stop,
        page_stop: None,
        connection: serde_json::Value::Null,
    };
    let mut decisions = Vec::new();
    let outcome = match super::connect(&o) {
        Err(e) => outcome_of_error(&e),
        Ok(mut robot) => {
            let r = super::run(robot.as_mut(), tools, &opts, &mut |e| {
                decisions.extend(decision(&e));
            });
            match r {
                Ok(rep) => {
                    let mut v = serde_json::to_value(&rep).unwrap_or(Value::Null);
                    strip(&mut v);
                    if let Value::Object(m) = &mut v {
                        // Predicted figures stay (the plan is a decision); nothing timed.
                        m.remove("measured_seconds");
                    }
                    v
                }
                Err(e) => serde_json::json!({ "error": e.to_string() }),
            }
        }
    };
    let _ = std::fs::remove_file(&job.journal);
    let truth = sim.cube().is_solved();
    let brick_seconds = sim.clock();
    let turns = exchange::turns(&tap.take_timed());
    Ok(BrickRun {
        turns,
        decisions,
        outcome,
        truth,
        brick_seconds,
        wall_seconds: wall.elapsed().as_secs_f64(),
    })
}

fn outcome_of_error(e: &ConnectError) -> Value {
    serde_json::json!({ "error": e.to_string() })
}

/// A decision or outcome that differs between the two runs.
#[derive(Clone, Debug, Serialize)]
pub struct Disagreement {
    /// `decision N` or `outcome`.
    pub what: String,
    pub a: Value,
    pub b: Value,
}

/// The verdict on one job run on two bricks.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    pub exchange: Comparison,
    pub decisions: Vec<Disagreement>,
    pub truth: (bool, bool),
}

impl Verdict {
    /// Differences in logic, all told: the exchange's, the decisions', the outcome's.
    pub fn logic(&self) -> usize {
        self.exchange.logic.len() + self.decisions.len() + (self.truth.0 != self.truth.1) as usize
    }
}

/// Runs `a` beside `b` (see the module docs).
pub fn compare(a: &BrickRun, b: &BrickRun, tol: &Tolerances) -> Verdict {
    let mut decisions = Vec::new();
    let n = a.decisions.len().max(b.decisions.len());
    for k in 0..n {
        let (x, y) = (a.decisions.get(k), b.decisions.get(k));
        if x != y {
            decisions.push(Disagreement {
                what: format!("decision {k}"),
                a: x.cloned().unwrap_or(Value::Null),
                b: y.cloned().unwrap_or(Value::Null),
            });
        }
    }
    if a.outcome != b.outcome {
        decisions.push(Disagreement {
            what: "outcome".into(),
            a: a.outcome.clone(),
            b: b.outcome.clone(),
        });
    }
    Verdict {
        exchange: exchange::compare(&a.turns, &b.turns, tol),
        decisions,
        truth: (a.truth, b.truth),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decision_keeps_what_the_host_decided_and_drops_what_it_measured() {
        let e = RunEvent::Planned {
            solution: "R U".into(),
            face_turns: 2,
            actions: 5,
            robot_seconds: 3.2,
            baseline_seconds: Some(4.0),
            ahead: true,
        };
        let v = decision(&e).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"type": "planned", "solution": "R U", "face_turns": 2, "actions": 5})
        );
        let r = RunEvent::readings(None, true, [(4, [1.0, 2.0, 3.0])]);
        assert_eq!(
            decision(&r).unwrap(),
            serde_json::json!({"type": "readings", "scale": null, "reread": true})
        );
        assert!(decision(&RunEvent::ScanProgress { done: 1, total: 6 }).is_none());
    }

    fn run(decisions: Vec<Value>, reached: bool) -> BrickRun {
        BrickRun {
            turns: Vec::new(),
            decisions,
            outcome: serde_json::json!({"reached_target": reached}),
            truth: reached,
            brick_seconds: 1.0,
            wall_seconds: 1.0,
        }
    }

    #[test]
    fn decisions_outcomes_and_truth_count_as_logic() {
        let d = |s: &str| serde_json::json!({"type": "planned", "solution": s});
        let tol = Tolerances::default();
        let same = compare(&run(vec![d("R")], true), &run(vec![d("R")], true), &tol);
        assert_eq!(same.logic(), 0);
        let v = compare(&run(vec![d("R")], true), &run(vec![d("U")], false), &tol);
        // The plan, the outcome and the simulator's cube.
        assert_eq!(v.logic(), 3, "{v:?}");
        assert_eq!(v.decisions[0].what, "decision 0");
        assert_eq!(v.decisions[1].what, "outcome");
    }
}
