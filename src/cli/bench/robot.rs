//! `bench robot`: robot execution time of planned solutions on the MindCub3r's timings
//! (the baseline per-move table, the N shortest solutions through the planner, and the
//! robot-cost search), and seeded end-to-end runs on the simulators (`--runs`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Result};

use crate::cli::args::{PaletteArg, RobotKind, ScannerKind};
use crate::cli::common::progress_bar;
use crate::cli::connect::load_solver;
use crate::cli::connect::robot_config;
use crate::cli::output::plural;
use crate::cli::{CmdResult, Exit, Global};
use crate::color::synth::Palette;
use crate::cube::{Alg, FaceletCube, Size};
use crate::job::{self, ConnectOptions, Link, RunOptions};
use crate::robot::mindcub3r::cost::{Arm, CostModel, RobotState};
use crate::robot::mindcub3r::model::{Orientation, Primitive, Timings};
use crate::robot::mindcub3r::planner::{greedy, Plan, Planner};
use crate::robot::symmetry::Symmetry;
use crate::solver::costed::CostedOptions;
use crate::solver::costed::{CostFloor, SequenceCost};
use crate::solver::{SolveOptions, Solver};

#[derive(clap::Args, Debug)]
pub struct BenchRobotArgs {
    /// Seeded random cubes to plan.
    #[arg(long, default_value_t = 200)]
    pub cubes: usize,
    #[arg(long, default_value_t = 2026, allow_negative_numbers = true, value_parser = crate::cli::args::seed)]
    pub seed: u64,
    /// Solutions asked of the solver per cube (and per symmetric variant): the candidates
    /// whose best plan bounds the robot-cost search (0: the first solution only).
    #[arg(long, default_value_t = 1000)]
    pub solutions: usize,
    /// Longest solution our planner may choose (the baseline always uses ≤ 20).
    #[arg(long, default_value_t = 22)]
    pub max_length: u32,
    /// Whole-cube symmetric variants of each problem to solve (1..48: rotations, then mirrors).
    #[arg(long, default_value_t = 1)]
    pub symmetries: usize,
    /// Also end-to-end simulated runs: this many per palette (0: none).
    #[arg(long, default_value_t = 0)]
    pub runs: usize,
    /// Palettes for the end-to-end runs (comma-separated).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "standard,faded"
    )]
    pub palettes: Vec<PaletteArg>,
    /// Robot for the end-to-end runs.
    #[arg(long, value_enum, default_value = "mindcub3r")]
    pub robot: RobotKind,
    /// Scanner for the end-to-end runs (camera: the simulator renders frames for the vision
    /// pipeline).
    #[arg(long, value_enum, default_value = "sensor")]
    pub scanner: ScannerKind,
    /// End-to-end runs at a time (each with its own simulator on its own pty).
    #[arg(long, default_value_t = 8)]
    pub jobs: usize,
    /// MindCub3r calibration whose timings the planner uses (default: calibration/mindcub3r.toml).
    #[arg(long, value_name = "FILE")]
    pub robot_config: Option<PathBuf>,
    /// Robot-cost search: wall-clock budget per cube (ms).
    #[arg(long, allow_negative_numbers = true, default_value_t = 1000, value_parser = crate::cli::args::millis)]
    pub search_ms: u64,
    /// Robot-cost search: node budget per cube (deterministic whatever the load).
    #[arg(long)]
    pub search_nodes: Option<u64>,
    /// Robot-cost search: longest solution considered.
    #[arg(long, default_value_t = 24)]
    pub search_max_length: u32,
}

fn timings(path: Option<&Path>) -> Result<Timings> {
    Ok(robot_config(path)?.timings)
}

pub fn bench(a: BenchRobotArgs, g: &Global) -> CmdResult {
    if a.cubes > 0 {
        bench_plan(&a, g)?;
    }
    if a.runs > 0 {
        let solver = load_solver(g)?;
        bench_e2e(&a, g, &solver)?;
    }
    Ok(Exit::Ok)
}

/// Sums over the cubes for one planner.
#[derive(Default)]
struct Sum {
    seconds: f64,
    turns: usize,
    tilts: usize,
    spins: usize,
    solve_seconds: f64,
}

impl Sum {
    fn add(&mut self, secs: f64, p: &Plan, solve: f64) {
        self.seconds += secs;
        self.turns += p.alg.len();
        self.tilts += p.count(|p| p == Primitive::Tilt);
        self.spins += p.count(|p| matches!(p, Primitive::Spin(_)));
        self.solve_seconds += solve;
    }
}

/// What the three planners came to over all cubes.
#[derive(Default)]
struct Totals {
    base: Sum,
    many: Sum,
    costed: Sum,
    cand_total: usize,
    nodes: u64,
    complete: usize,
    improved: usize,
}

/// The planners compared on one cube after another, and what they share.
struct PlanBench<'a> {
    a: &'a BenchRobotArgs,
    solver: &'a Solver,
    /// The simulator's clock (no backlash estimate): what every plan is priced with.
    plain: CostModel,
    planner: Planner,
    /// Where the robot stands after its scan.
    start: RobotState,
    automaton: SequenceCost,
    syms: Vec<Symmetry>,
    solved: FaceletCube,
}

impl<'a> PlanBench<'a> {
    fn new(a: &'a BenchRobotArgs, solver: &'a Solver) -> Result<PlanBench<'a>> {
        let t = timings(a.robot_config.as_deref())?;
        let planner = Planner::new(CostModel::new(t.clone()));
        let start = scan_end();
        Ok(PlanBench {
            a,
            solver,
            plain: CostModel::plain(t),
            automaton: planner.sequence_cost(start),
            planner,
            start,
            syms: Symmetry::all(true),
            solved: FaceletCube::solved(Size::Three),
        })
    }

    /// Every plan is checked: executing its primitives must solve the cube.
    fn check(&self, i: usize, cube: &FaceletCube, p: &Plan, what: &str) -> Result<()> {
        let mut robot = crate::robot::mindcub3r::frames::to_robot(cube, &self.start.orientation);
        crate::robot::mindcub3r::frames::apply_primitives(&mut robot, &p.primitives);
        if !robot.is_solved() {
            bail!("cube {i}: the {what} plan does not solve the cube");
        }
        Ok(())
    }

    /// Cube `i` through the three planners.
    fn cube(&self, i: usize, cube: &FaceletCube, t: &mut Totals) -> Result<()> {
        let t1 = Instant::now();
        let first = self.baseline(i, cube, t, t1)?;
        let t1 = Instant::now();
        let p = self.candidates(i, cube, &first, t)?;
        let many_solve = t1.elapsed().as_secs_f64();
        self.costed(i, cube, &p, many_solve, t)
    }

    /// The baseline: the first <= 20 two-phase solution on the per-move table.
    fn baseline(&self, i: usize, cube: &FaceletCube, t: &mut Totals, t1: Instant) -> Result<Alg> {
        let first = self
            .solver
            .solve(cube, &self.solved, &SolveOptions::default())
            .map_err(|e| anyhow!("cube {i}: {e}"))?;
        let first = first
            .into_iter()
            .next()
            .ok_or_else(|| anyhow!("cube {i}: no solution"))?;
        let b = greedy(&first, self.start, &self.plain)?;
        self.check(i, cube, &b, "baseline")?;
        t.base.add(b.seconds, &b, t1.elapsed().as_secs_f64());
        Ok(first)
    }

    /// The length-driven candidates: N shortest solutions (+ the inverse problem), the
    /// cheapest by the planner's DP.
    fn candidates(
        &self,
        i: usize,
        cube: &FaceletCube,
        first: &Alg,
        t: &mut Totals,
    ) -> Result<Plan> {
        let a = self.a;
        let solve = |s: &FaceletCube, tg: &FaceletCube, n: usize| {
            self.solver.solve(
                s,
                tg,
                &SolveOptions {
                    solutions: n,
                    max_length: a.max_length,
                    ..Default::default()
                },
            )
        };
        let mut cands = if a.solutions > 0 {
            crate::robot::mindcub3r::frames::candidates(
                cube,
                &self.solved,
                &self.syms[..a.symmetries.min(self.syms.len())],
                true,
                a.solutions,
                &solve,
            )
            .map_err(|e| anyhow!("cube {i}: {e}"))?
        } else {
            Vec::new()
        };
        if !cands.contains(first) {
            cands.push(first.clone());
        }
        t.cand_total += cands.len();
        let (_, p) = self.planner.choose_screened(&cands, self.start, 32)?;
        Ok(p)
    }

    /// The robot-cost search, bounded by the candidates' plan `p`, then the same exact DP.
    fn costed(
        &self,
        i: usize,
        cube: &FaceletCube,
        p: &Plan,
        many_solve: f64,
        t: &mut Totals,
    ) -> Result<()> {
        let a = self.a;
        self.check(i, cube, p, "candidate")?;
        t.many
            .add(self.plain.run(self.start, &p.primitives)?.1, p, many_solve);
        let t1 = Instant::now();
        let out = self
            .solver
            .solve_costed(
                cube,
                &self.solved,
                &self.automaton,
                &CostedOptions {
                    max_length: a.search_max_length,
                    time_limit: Duration::from_millis(a.search_ms),
                    max_nodes: a.search_nodes,
                    bound: Some(p.seconds),
                    ..CostedOptions::default()
                },
            )
            .map_err(|e| anyhow!("cube {i}: {e}"))?;
        t.nodes += out.nodes;
        t.complete += usize::from(out.complete);
        let mut all: Vec<Alg> = out.solutions.iter().map(|s| s.alg.clone()).collect();
        all.push(p.alg.clone());
        let (chosen, q) = self.planner.choose(&all, self.start)?;
        t.improved += usize::from(chosen + 1 < all.len());
        self.check(i, cube, &q, "costed")?;
        t.costed.add(
            self.plain.run(self.start, &q.primitives)?.1,
            &q,
            many_solve + t1.elapsed().as_secs_f64(),
        );
        Ok(())
    }

    /// What no planner can beat on these timings (a counting bound, see
    /// `SequenceCost::floor_for_random`): the 3x3x3 has 43,252,003,274,489,856,000
    /// positions. Priced as the simulator's clock counts (no backlash estimate) and with
    /// half turns allowed either way: a relaxation of every plan the robot could execute.
    /// Valid only while a half turn is no dearer than two quarter turns.
    fn floor(&self) -> Option<CostFloor> {
        floor_from(&self.plain, self.start)
    }
}

/// The floor of [`PlanBench::floor`] for plans that start where the MindCub3r's scan leaves
/// the cube, on `timings` (what `bench run` prints beside the measured execution).
pub(super) fn execute_floor(timings: &Timings) -> Option<CostFloor> {
    floor_from(&CostModel::plain(timings.clone()), scan_end())
}

fn floor_from(plain: &CostModel, start: RobotState) -> Option<CostFloor> {
    let relaxed = Planner::new(CostModel {
        both_half_directions: true,
        ..plain.clone()
    });
    (plain.timings.turn_half <= 2.0 * plain.timings.turn_quarter)
        .then(|| {
            relaxed
                .sequence_cost(start)
                .floor_for_random(43_252_003_274_489_856_000u128 as f64, 0.01)
        })
        .flatten()
}

/// Where the robot stands after its scan: the orientation the scan's face sequence leaves,
/// the arm away.
fn scan_end() -> RobotState {
    let mut o = Orientation::IDENTITY;
    for step in crate::robot::mindcub3r::scan_steps() {
        for p in step {
            o = o.after(p);
        }
    }
    RobotState {
        orientation: o,
        arm: Arm::Away,
        turntable: 0,
    }
}

fn bench_plan(a: &BenchRobotArgs, g: &Global) -> Result<()> {
    use rand::SeedableRng;
    let solver = load_solver(g)?;
    let bench = PlanBench::new(a, &solver)?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(a.seed);
    let mut totals = Totals::default();
    let bar = progress_bar(g, "plan");
    if let Some(b) = &bar {
        b.set_length(a.cubes as u64);
    }
    let t0 = Instant::now();
    for i in 0..a.cubes {
        let cube = crate::cube::random_state(Size::Three, &mut rng);
        bench.cube(i, &cube, &mut totals)?;
        if let Some(b) = &bar {
            b.inc(1);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    print_plan(a, g, &totals, bench.floor(), t0)
}

/// One JSON row per planner: its means over the cubes.
fn plan_rows(a: &BenchRobotArgs, totals: &Totals) -> [serde_json::Value; 3] {
    let n = a.cubes.max(1) as f64;
    let row = |name: String, s: &Sum| {
        serde_json::json!({
            "type": "bench-robot",
            "planner": name,
            "cubes": a.cubes,
            "mean_robot_seconds": s.seconds / n,
            "mean_face_turns": s.turns as f64 / n,
            "mean_tilts": s.tilts as f64 / n,
            "mean_spins": s.spins as f64 / n,
            "mean_solve_seconds": s.solve_seconds / n,
        })
    };
    [
        row(
            "baseline: first <=20 two-phase solution + per-move table".into(),
            &totals.base,
        ),
        row(
            format!(
                "N shortest solutions (N={}, <={}) + inverse, orientation DP",
                a.solutions, a.max_length
            ),
            &totals.many,
        ),
        row(
            format!(
                "cubot: robot-cost search (<={}, {} ms{}) + DP",
                a.search_max_length,
                a.search_ms,
                a.search_nodes
                    .map(|n| format!(", {n} nodes"))
                    .unwrap_or_default()
            ),
            &totals.costed,
        ),
    ]
}

/// The three planners' means, their ratios, and the floor.
fn print_plan(
    a: &BenchRobotArgs,
    g: &Global,
    totals: &Totals,
    floor: Option<CostFloor>,
    t0: Instant,
) -> Result<()> {
    let Totals {
        base,
        many,
        costed,
        cand_total,
        nodes,
        complete,
        improved,
    } = totals;
    let (cand_total, nodes, complete, improved) = (*cand_total, *nodes, *complete, *improved);
    let n = a.cubes.max(1) as f64;
    let rows = plan_rows(a, totals);
    let ratio = costed.seconds / base.seconds.max(1e-9);
    let ratio_many = many.seconds / base.seconds.max(1e-9);
    if g.json {
        for r in &rows {
            crate::cli::output::json_line(r);
        }
        crate::cli::output::json_line(&serde_json::json!({
            "type": "bench-robot-ratio", "ratio": ratio, "reduction": 1.0 - ratio,
            "ratio_candidates_only": ratio_many,
            "mean_candidates": cand_total as f64 / n,
            "mean_search_nodes": nodes as f64 / n,
            "searches_complete": complete, "search_improved": improved,
            "wall_seconds": t0.elapsed().as_secs_f64(),
        }));
        if let Some(floor) = floor {
            crate::cli::output::json_line(&serde_json::json!({
                "type": "bench-robot-floor",
                "mean_robot_seconds_at_least": floor.mean,
                "median_robot_seconds_at_least": floor.median,
                "baseline_ratio_at_least": floor.mean / (base.seconds / n).max(1e-9),
            }));
        }
    } else {
        outln!(
            "{:<70} {:>8} {:>6} {:>6} {:>6} {:>8}",
            "planner",
            "robot s",
            "turns",
            "tilts",
            "spins",
            "solve s"
        );
        for r in &rows {
            outln!(
                "{:<70} {:>8.2} {:>6.2} {:>6.2} {:>6.2} {:>8.3}",
                r["planner"].as_str().unwrap_or(""),
                r["mean_robot_seconds"].as_f64().unwrap_or(0.0),
                r["mean_face_turns"].as_f64().unwrap_or(0.0),
                r["mean_tilts"].as_f64().unwrap_or(0.0),
                r["mean_spins"].as_f64().unwrap_or(0.0),
                r["mean_solve_seconds"].as_f64().unwrap_or(0.0),
            );
        }
        outln!(
            "ratio to baseline {ratio:.3} ({:.1}% less robot time; candidates alone {ratio_many:.3}); \
             {:.1} candidates and {:.0} search nodes per cube; search improved {improved}/{}, \
             complete {complete}; {} in {:.1} s",
            100.0 * (1.0 - ratio),
            cand_total as f64 / n,
            nodes as f64 / n,
            a.cubes,
            plural(a.cubes, "cube"),
            t0.elapsed().as_secs_f64()
        );
        match floor {
            Some(floor) => outln!(
                "floor on these timings, any solver and planner, uniformly random cubes: mean >= {:.2} s \
                 (ratio to this baseline >= {:.3}), median >= {:.2} s",
                floor.mean,
                floor.mean / (base.seconds / n).max(1e-9),
                floor.median
            ),
            None => outln!("floor: not computable for these timings"),
        }
    }
    Ok(())
}

/// What one seeded end-to-end run came to.
enum E2eOutcome {
    Reached,
    /// The pipeline said "reached" but the simulator's cube is not solved.
    FalseSuccess,
    NotReached,
    Refused(String),
    Failed(String),
}

/// One seeded `run --sim` in this process: scan, resolve, solve, plan, execute, verify,
/// judged against the simulator's own cube (not the pipeline's word).
fn e2e_once(
    a: &BenchRobotArgs,
    solver: &Solver,
    palette: Palette,
    seed: u64,
    journal: PathBuf,
) -> E2eOutcome {
    let stop = Arc::new(AtomicBool::new(false));
    let config = match robot_config(a.robot_config.as_deref()) {
        Ok(c) => c,
        Err(e) => return E2eOutcome::Failed(format!("{e:#}")),
    };
    let o = ConnectOptions {
        robot: a.robot.into(),
        scanner: a.scanner.into(),
        link: Link::Sim,
        config,
        faults: None,
        brick: Default::default(),
        seed,
        speed: 5000.0,
        palette,
        size: Size::Three,
        start: None,
        stop: stop.clone(),
        baud: job::connect::SERIAL_BAUD,
        note: None,
        tap: None,
        sim_latency: None,
        wire_log: None,
    };
    let opts = RunOptions {
        size: Size::Three,
        target: None,
        solutions: 2,
        symmetries: false,
        mirror: false,
        inverse: true,
        max_rescans: 3,
        max_rounds: 1,
        journal,
        stop: stop.clone(),
        page_stop: None,
        connection: serde_json::Value::Null,
    };
    let mut robot = match job::connect(&o) {
        Ok(r) => r,
        Err(e) => return E2eOutcome::Failed(format!("{e:#}")),
    };
    let tools = super::seeded_tools(solver, seed, None);
    let r = job::run(robot.as_mut(), &tools, &opts, &mut |_| {});
    // The truth, independent of the pipeline: the simulator's cube itself.
    let truth = robot.read_back().map(|(_, now)| now.is_solved());
    match r {
        Ok(rep) if rep.reached_target && truth == Some(true) => E2eOutcome::Reached,
        Ok(rep) if rep.reached_target => E2eOutcome::FalseSuccess,
        Ok(_) => E2eOutcome::NotReached,
        Err(e) if e.is_no() => E2eOutcome::Refused(e.to_string()),
        Err(e) => E2eOutcome::Failed(e.to_string()),
    }
}

/// `--runs` seeded runs of one palette, `--jobs` at a time, by seed.
fn e2e_runs(
    a: &BenchRobotArgs,
    g: &Global,
    solver: &Solver,
    palette: &str,
    look: Palette,
    dir: &Path,
) -> Vec<(u64, E2eOutcome)> {
    use std::sync::atomic::AtomicUsize;
    let jobs = a.jobs.max(1);
    let bar = progress_bar(g, palette);
    if let Some(b) = &bar {
        b.set_length(a.runs as u64);
    }
    let next = AtomicUsize::new(0);
    let results: std::sync::Mutex<Vec<(u64, E2eOutcome)>> =
        std::sync::Mutex::new(Vec::with_capacity(a.runs));
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(a.runs.max(1)) {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= a.runs {
                    break;
                }
                let seed = a.seed.wrapping_add(k as u64);
                let journal = dir.join(format!("{palette}-{seed}.jsonl"));
                let out = e2e_once(a, solver, look, seed, journal.clone());
                let _ = std::fs::remove_file(&journal);
                if let Some(b) = &bar {
                    b.inc(1);
                }
                if let Ok(mut r) = results.lock() {
                    r.push((seed, out));
                }
            });
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let mut results = results.into_inner().unwrap_or_default();
    results.sort_by_key(|(s, _)| *s);
    results
}

/// `bench robot --runs N`: seeded end-to-end runs per palette, `--jobs` at a time (a run
/// mostly waits on its simulator, so more jobs than cores pay), every miss named by seed.
fn bench_e2e(a: &BenchRobotArgs, g: &Global, solver: &Solver) -> Result<()> {
    let dir = tempfile_dir()?;
    let jobs = a.jobs.max(1);
    for &arg in &a.palettes {
        let look = Palette::from(arg);
        let palette = look.name();
        let started = std::time::Instant::now();
        let results = e2e_runs(a, g, solver, palette, look, &dir);
        let (mut ok, mut not_reached, mut no, mut failed, mut false_success) = (0, 0, 0, 0, 0);
        for (seed, out) in &results {
            let (kind, why) = match out {
                E2eOutcome::Reached => {
                    ok += 1;
                    continue;
                }
                E2eOutcome::FalseSuccess => {
                    false_success += 1;
                    (
                        "false-success",
                        "reported reached, simulator's cube not solved",
                    )
                }
                E2eOutcome::NotReached => {
                    not_reached += 1;
                    ("not-reached", "executed, target not reached")
                }
                E2eOutcome::Refused(e) => {
                    no += 1;
                    ("refused", e.as_str())
                }
                E2eOutcome::Failed(e) => {
                    failed += 1;
                    ("failed", e.as_str())
                }
            };
            if g.json {
                crate::cli::output::json_line(&serde_json::json!({
                    "type": "bench-robot-e2e-miss", "palette": palette, "seed": seed,
                    "outcome": kind, "error": why,
                }));
            } else {
                outln!("  {palette} seed {seed}: {kind}: {why}");
            }
        }
        let secs = started.elapsed().as_secs_f64();
        let v = serde_json::json!({
            "type": "bench-robot-e2e", "palette": palette, "runs": a.runs,
            "first_seed": a.seed, "scanner": format!("{:?}", a.scanner).to_lowercase(),
            "robot": format!("{:?}", a.robot).to_lowercase(), "reached": ok,
            "not_reached": not_reached, "refused": no, "failed": failed,
            "false_success": false_success,
            "success_rate": ok as f64 / a.runs.max(1) as f64,
            "jobs": jobs, "wall_seconds": secs,
        });
        if g.json {
            crate::cli::output::json_line(&v);
        } else {
            outln!(
                "end to end, {palette} (seeds {}..{}): {ok}/{} reached the target ({:.2}%), {not_reached} not reached, {no} refused (ambiguous/invalid scan), {failed} failed; success reported on a cube not at the target: {false_success}  [{secs:.0} s, {}]",
                a.seed,
                a.seed.wrapping_add(a.runs.saturating_sub(1) as u64),
                a.runs,
                100.0 * ok as f64 / a.runs.max(1) as f64,
                plural(jobs, "job")
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn tempfile_dir() -> Result<PathBuf> {
    let d = std::env::temp_dir().join(format!("cubot-bench-{}", std::process::id()));
    std::fs::create_dir_all(&d)?;
    Ok(d)
}
