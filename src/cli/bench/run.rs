//! `bench run`: the whole wait of a user, phase by phase, over seeded runs of the simulated
//! MindCub3r at one or more link latencies: connect and home, scan, solve and plan, execute,
//! verify. Each run is `cubot run --port` in this process against a simulated brick started
//! on a pty at `--speed` (1: simulated time is wall time, so the host's own work and every
//! link round trip count as they would on a real brick, and verification re-scans the cube
//! as it must on a real robot); the phases are timed by the run's events on the wall clock.
//! Whether the cube really reached the target is read from the simulator itself. Beside the measured execution it prints what the planner predicted, the greedy
//! per-move table on the first solution (the open MindCub3r programs' way) and the floor
//! no solver and planner can beat on the same timings.
//!
//! Level: `cli`. Calls `job` and the planner directly.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use serde_json::json;

use super::robot::execute_floor;
use crate::cli::args::PaletteArg;
use crate::cli::common::progress_bar;
use crate::cli::connect::load_solver;
use crate::cli::connect::robot_config;
use crate::cli::output::{json_line, plural};
use crate::cli::{CmdResult, Exit, Global};
use crate::color::synth::Palette;
use crate::cube::Size;
use crate::job::{self, ConnectOptions, Link, RunEvent, RunOptions};
use crate::robot::mindcub3r::Config;
use crate::robot::sim::{spawn_pty, SimConfig};
use crate::solver::costed::CostedOptions;
use crate::solver::Solver;

/// Longest link latency a run may be given (ms).
const MAX_LATENCY: u32 = 1000;

#[derive(clap::Args, Debug)]
pub struct BenchRunArgs {
    /// Seeded runs per latency (the same cubes at every latency).
    #[arg(long, default_value_t = 10)]
    pub runs: usize,
    /// Seed of the first run.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = crate::cli::args::seed)]
    pub seed: u64,
    /// Link latencies to run at, ms (comma-separated; USB ≈ 10, Bluetooth ≈ 60).
    #[arg(long, value_delimiter = ',', default_value = "0,60", value_parser = latency)]
    pub latencies: Vec<u32>,
    /// Runs at a time, each with its own simulator (a run mostly waits on its robot).
    #[arg(long, default_value_t = 4)]
    pub jobs: usize,
    /// Simulated seconds per wall second. At 1 the figures are what a user waits; faster
    /// runs squeeze the host's share and the link's.
    #[arg(long, allow_negative_numbers = true, default_value_t = 1.0, value_parser = crate::cli::args::sim_speed)]
    pub speed: f64,
    #[arg(long, value_enum, default_value_t = PaletteArg::Standard)]
    pub palette: PaletteArg,
    /// MindCub3r configuration (default: calibration/mindcub3r.toml if present).
    #[arg(long, value_name = "FILE")]
    pub robot_config: Option<PathBuf>,
    /// Solutions asked of the solver, as `cubot run --solutions`.
    #[arg(long, default_value_t = 100)]
    pub solutions: usize,
    /// Robot-cost search per run (ms), as `cubot run --search-ms`.
    #[arg(long, allow_negative_numbers = true, default_value_t = 1500, value_parser = crate::cli::args::millis)]
    pub search_ms: u64,
    /// Also print the README's figures row.
    #[arg(long)]
    pub markdown: bool,
    #[command(flatten)]
    pub brick: crate::cli::args::BrickArgs,
}

fn latency(s: &str) -> Result<u32, String> {
    let v: u32 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a whole number of milliseconds"))?;
    if v > MAX_LATENCY {
        return Err(format!("{v} ms is more than {MAX_LATENCY} ms"));
    }
    Ok(v)
}

/// The phases of one run, in seconds of wall clock.
#[derive(Clone, Copy, Debug, Default)]
struct Phases {
    home: f64,
    scan: f64,
    solve: f64,
    execute: f64,
    verify: f64,
}

impl Phases {
    fn total(&self) -> f64 {
        self.home + self.scan + self.solve + self.execute + self.verify
    }

    fn get(&self, k: usize) -> f64 {
        [
            self.home,
            self.scan,
            self.solve,
            self.execute,
            self.verify,
            self.total(),
        ][k]
    }
}

const PHASES: [&str; 6] = [
    "connect+home",
    "scan",
    "solve+plan",
    "execute",
    "verify",
    "total",
];
const KEYS: [&str; 6] = ["home", "scan", "solve", "execute", "verify", "total"];

/// What one run came to.
#[derive(Clone, Debug)]
struct RunResult {
    latency: u32,
    seed: u64,
    outcome: Result<Done, String>,
}

#[derive(Clone, Debug)]
struct Done {
    phases: Phases,
    reached: bool,
    /// The simulator's own cube is at the target (the pipeline's word aside).
    truth: bool,
    planned: f64,
    /// The execution's own wall-clock seconds, as the run reports them.
    measured: Option<f64>,
    baseline: Option<f64>,
    face_turns: usize,
}

impl Done {
    /// Planned over measured execution time, minus one.
    fn prediction_error(&self) -> Option<f64> {
        self.measured
            .filter(|&m| m > 0.0)
            .map(|m| self.planned / m - 1.0)
    }
}

/// About how long one whole job takes in robot time (connect to verified), for the
/// estimate of wall time a run of the bench announces: measured 96.4 s mean over 20
/// seeded runs at a 60 ms link (the README's table).
const WHOLE_WAIT_S: f64 = 100.0;

pub fn bench(a: BenchRunArgs, g: &Global) -> CmdResult {
    if a.runs == 0 || a.latencies.is_empty() {
        bail!("nothing to run: give --runs > 0 and at least one latency");
    }
    a.brick.check(true, true)?;
    if !g.quiet && !g.json {
        errln!(
            "bench run: {} of the whole job on simulated robots at speed {} (each about {:.0} s of wall time), {} at a time",
            plural(a.runs * a.latencies.len(), "run"),
            a.speed,
            WHOLE_WAIT_S / a.speed,
            a.jobs.clamp(1, a.runs * a.latencies.len())
        );
    }
    let config = robot_config(a.robot_config.as_deref())?;
    let solver = load_solver(g)?;
    let results = run_all(&a, g, &solver, &config);
    // The floor on each link's timings (its round trip is about its latency).
    let floors: Vec<Option<f64>> = a
        .latencies
        .iter()
        .map(|&l| execute_floor(&config.timings.on_link(l as f64 / 1000.0)).map(|f| f.mean))
        .collect();
    print(&a, g, &results, &floors)?;
    let clean = results
        .iter()
        .all(|r| matches!(&r.outcome, Ok(d) if d.reached && d.truth));
    Ok(if clean { Exit::Ok } else { Exit::No })
}

/// Every (latency, seed) pair, `--jobs` at a time.
fn run_all(a: &BenchRunArgs, g: &Global, solver: &Solver, config: &Config) -> Vec<RunResult> {
    let work: Vec<(u32, u64)> = a
        .latencies
        .iter()
        .flat_map(|&l| (0..a.runs as u64).map(move |k| (l, k)))
        .map(|(l, k)| (l, a.seed.wrapping_add(k)))
        .collect();
    let bar = progress_bar(g, "runs");
    if let Some(b) = &bar {
        b.set_length(work.len() as u64);
    }
    let next = AtomicUsize::new(0);
    let out = Mutex::new(Vec::with_capacity(work.len()));
    let dir = std::env::temp_dir().join(format!("cubot-bench-run-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    std::thread::scope(|scope| {
        for _ in 0..a.jobs.clamp(1, work.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(latency, seed)) = work.get(i) else {
                    break;
                };
                let journal = dir.join(format!("run-{latency}-{seed}.jsonl"));
                let outcome = one(a, solver, config, latency, seed, journal.clone());
                let _ = std::fs::remove_file(&journal);
                if let Some(b) = &bar {
                    b.inc(1);
                } else if !g.quiet && !g.json {
                    // Not a terminal: a line a run says what the wait is for.
                    let what = match &outcome {
                        Ok(d) if d.reached && d.truth => {
                            format!("reached, {:.1} s of robot time", d.phases.total())
                        }
                        Ok(_) => "NOT reached".to_string(),
                        Err(e) => format!("failed: {e}"),
                    };
                    errln!(
                        "run {}/{} (seed {seed}, {latency} ms): {what}",
                        i + 1,
                        work.len()
                    );
                }
                if let Ok(mut o) = out.lock() {
                    o.push(RunResult {
                        latency,
                        seed,
                        outcome,
                    });
                }
            });
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let _ = std::fs::remove_dir_all(&dir);
    let mut v = out.into_inner().unwrap_or_default();
    v.sort_by_key(|r| (r.latency, r.seed));
    v
}

/// One seeded run at one latency, timed phase by phase.
fn one(
    a: &BenchRunArgs,
    solver: &Solver,
    config: &Config,
    latency: u32,
    seed: u64,
    journal: PathBuf,
) -> Result<Done, String> {
    let stop = Arc::new(AtomicBool::new(false));
    // The simulator is reached over its port, as a real brick would be: the run cannot read
    // the simulator's cube back, so it verifies by re-scanning, as on a real robot.
    let sim = spawn_pty(SimConfig {
        seed,
        speed: a.speed,
        palette: Palette::from(a.palette),
        latency_ms: latency as f64,
        brick: a.brick.kind(),
        ..SimConfig::default()
    })
    .map_err(|e| e.to_string())?;
    let o = ConnectOptions {
        robot: job::RobotKind::Mindcub3r,
        scanner: job::ScannerKind::Sensor,
        link: Link::Port(sim.path().to_path_buf()),
        config: config.clone(),
        faults: None,
        brick: Default::default(),
        seed,
        speed: a.speed,
        palette: Palette::from(a.palette),
        size: Size::Three,
        start: None,
        stop: stop.clone(),
        baud: job::connect::SERIAL_BAUD,
        note: None,
        tap: None,
        sim_latency: Some(latency as f64 / 1000.0),
        wire_log: None,
    };
    let opts = RunOptions {
        size: Size::Three,
        target: None,
        solutions: a.solutions,
        symmetries: false,
        mirror: false,
        inverse: true,
        max_rescans: 3,
        max_rounds: 3,
        journal,
        stop,
        page_stop: None,
        connection: serde_json::Value::Null,
    };
    let tools = super::seeded_tools(
        solver,
        seed,
        (a.search_ms > 0).then(|| CostedOptions {
            time_limit: Duration::from_millis(a.search_ms),
            ..CostedOptions::default()
        }),
    );
    // Every figure is in robot time: the simulator's own clock (a firmware brick that cannot
    // follow the speed asked runs slower than the wall clock times the speed).
    let clock = sim.clock_source();
    let (t0, c0) = (Instant::now(), clock());
    let mut robot = job::connect(&o).map_err(|e| e.to_string())?;
    let mut marks: [Option<f64>; 4] = [None; 4];
    let r = job::run(robot.as_mut(), &tools, &opts, &mut |e| {
        let k = match e {
            // The robot is homed and about to read the first face.
            RunEvent::ScanProgress { done: 0, .. } => 0,
            RunEvent::Scanned { .. } => 1,
            RunEvent::Planned { .. } => 2,
            RunEvent::Verifying { .. } => 3,
            _ => return,
        };
        marks[k].get_or_insert_with(|| clock());
    });
    let (wall, end) = (t0.elapsed().as_secs_f64(), clock());
    let truth = sim.cube().is_solved();
    let rep = r.map_err(|e| e.to_string())?;
    let at = |k: usize| marks[k].unwrap_or(end);
    let secs = |from: f64, to: f64| (to - from).max(0.0);
    // The host measures its execution on the wall clock: robot seconds per wall second.
    let rate = if wall > 0.0 {
        (end - c0) / wall
    } else {
        a.speed
    };
    Ok(Done {
        phases: Phases {
            home: secs(c0, at(0)),
            scan: secs(at(0), at(1)),
            solve: secs(at(1), at(2)),
            execute: secs(at(2), at(3)),
            verify: secs(at(3), end),
        },
        reached: rep.reached_target,
        truth,
        planned: rep.robot_seconds,
        measured: rep.measured_seconds.map(|m| m * rate),
        baseline: rep.baseline_seconds,
        face_turns: rep.face_turns,
    })
}

/// Mean and worst of one phase over the runs that finished.
fn mean_worst(done: &[&Done], k: usize) -> (f64, f64) {
    let n = done.len().max(1) as f64;
    let v = done.iter().map(|d| d.phases.get(k));
    let worst = v.clone().fold(0.0, f64::max);
    (v.sum::<f64>() / n, worst)
}

fn mean(v: impl Iterator<Item = f64>) -> Option<f64> {
    let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| s / n as f64)
}

/// Per-latency summaries (text or JSON), then the README row.
fn print(
    a: &BenchRunArgs,
    g: &Global,
    results: &[RunResult],
    floors: &[Option<f64>],
) -> Result<()> {
    let last = a.seed.wrapping_add(a.runs as u64 - 1);
    if g.json {
        for r in results {
            json_line(&match &r.outcome {
                Ok(d) => json!({
                    "type": "bench-run-one", "latency_ms": r.latency, "seed": r.seed,
                    "home": d.phases.home, "scan": d.phases.scan, "solve": d.phases.solve,
                    "execute": d.phases.execute,
                    "verify": d.phases.verify, "total": d.phases.total(),
                    "reached_target": d.reached, "simulator_at_target": d.truth,
                    "planned_robot_seconds": d.planned, "measured_robot_seconds": d.measured,
                    "baseline_seconds": d.baseline,
                    "face_turns": d.face_turns,
                }),
                Err(e) => json!({
                    "type": "bench-run-one", "latency_ms": r.latency, "seed": r.seed,
                    "error": e,
                }),
            });
        }
    } else {
        outln!(
            "whole wait, {} per latency (seeds {}..{last}), simulator at speed {}, {}; mean / worst, seconds of robot time{}",
            plural(a.runs, "seeded run"), a.seed, a.speed, format!("{} at a time", a.jobs.clamp(1, a.runs * a.latencies.len())),
            if a.speed == 1.0 { " (= wall time)".to_string() } else { format!(" (wall time × {})", a.speed) }
        );
        let mut head = format!("{:<8}", "latency");
        for p in PHASES {
            head.push_str(&format!(" {p:>13}"));
        }
        outln!("{head}  reached");
        for r in results {
            if let Err(e) = &r.outcome {
                outln!("  {} ms seed {}: failed: {e}", r.latency, r.seed);
            }
        }
    }
    let mut row = Vec::new();
    for (&l, &floor) in a.latencies.iter().zip(floors) {
        let done: Vec<&Done> = results
            .iter()
            .filter(|r| r.latency == l)
            .filter_map(|r| r.outcome.as_ref().ok())
            .collect();
        let reached = done.iter().filter(|d| d.reached && d.truth).count();
        let false_reached = done.iter().filter(|d| d.reached && !d.truth).count();
        let stats: Vec<(f64, f64)> = (0..PHASES.len()).map(|k| mean_worst(&done, k)).collect();
        let planned = mean(done.iter().map(|d| d.planned));
        let baseline = mean(done.iter().filter_map(|d| d.baseline));
        let turns = mean(done.iter().map(|d| d.face_turns as f64));
        let errors: Vec<f64> = done.iter().filter_map(|d| d.prediction_error()).collect();
        let mean_error = mean(errors.iter().map(|e| e.abs()));
        let worst_error = errors
            .iter()
            .map(|e| e.abs())
            .fold(None, |w: Option<f64>, e| Some(w.map_or(e, |w| w.max(e))));
        if g.json {
            let mut phases = serde_json::Map::new();
            for (k, (m, w)) in stats.iter().enumerate() {
                phases.insert(KEYS[k].into(), json!({"mean": m, "worst": w}));
            }
            json_line(&json!({
                "type": "bench-run", "latency_ms": l, "runs": a.runs, "first_seed": a.seed,
                "speed": a.speed, "jobs": a.jobs, "finished": done.len(),
                "reached": reached, "false_reached": false_reached, "phases": phases,
                "execute_planned_mean": planned, "execute_baseline_mean": baseline,
                "execute_floor_mean": floor, "face_turns_mean": turns,
                "prediction_error_mean": mean_error, "prediction_error_worst": worst_error,
            }));
        } else {
            let mut line = format!("{:<8}", format!("{l} ms"));
            for (m, w) in &stats {
                line.push_str(&format!(" {:>13}", format!("{m:.1} / {w:.1}")));
            }
            outln!(
                "{line}  {reached}/{}{}",
                a.runs,
                if false_reached > 0 {
                    format!(" ({false_reached} FALSE)")
                } else {
                    String::new()
                }
            );
            let f = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:.1} s"));
            let pct = |x: Option<f64>| x.map_or("-".into(), |v| format!("{:.1} %", 100.0 * v));
            outln!(
                "         execute: {:.1} s measured, {} planned (off by {} on average, {} at worst); greedy per-move table on the first solution {}; floor {}",
                stats[3].0,
                f(planned),
                pct(mean_error),
                pct(worst_error),
                f(baseline),
                floor.map_or(
                    "none (no provable bound on these timings)".to_string(),
                    |v| format!("{v:.1} s (mean over random cubes, any solver and planner, same timings)")
                )
            );
        }
        row.push(format!(
            "{l} ms: mean **{:.1} s** (worst {:.1}; connect and home {:.1}, scan {:.1}, solve {:.1}, execute {:.1}, verify {:.1}), {reached}/{} reached",
            stats[5].0, stats[5].1, stats[0].0, stats[1].0, stats[2].0, stats[3].0, stats[4].0, a.runs
        ));
    }
    if a.markdown && !g.json {
        let lat: Vec<String> = a.latencies.iter().map(|l| l.to_string()).collect();
        outln!(
            "| whole wait, MindCub3r on the simulator, {} per latency | {} | `cubot bench run --runs {} --latencies {} --jobs {}` |",
            plural(a.runs, "run"),
            row.join("; "),
            a.runs,
            lat.join(","),
            a.jobs
        );
    }
    Ok(())
}
