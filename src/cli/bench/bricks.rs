//! `bench bricks`: two bricks, one verdict. Every seed's whole job (connect and home, scan,
//! solve, execute, verify by re-scanning) runs on cubot's simulated brick and on LEGO's
//! firmware brick in the same world, and the two runs are compared
//! ([`crate::job::bricks`]): differences of logic (statuses, values that are no
//! measurement, program records, the host's decisions, the outcome), which must be none,
//! and physical differences with their sizes, kind by kind.
//!
//! Level: `cli`. Calls `job::bricks`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{bail, Result};
use serde_json::json;

use crate::cli::args::{PaletteArg, SizeArg};
use crate::cli::common::progress_bar;
use crate::cli::connect::load_solver;
use crate::cli::connect::robot_config;
use crate::cli::output::{json_line, plural};
use crate::cli::{CmdResult, Exit, Global};
use crate::color::synth::Palette;
use crate::cube::Size;
use crate::job::bricks::{self, BrickRun, Job, Verdict};
use crate::robot::ev3::protocol::exchange::compare::Sizes;
use crate::robot::ev3::protocol::exchange::Tolerances;
use crate::robot::sim::lms2012::BrickKind;
use crate::solver::costed::CostedOptions;

#[derive(clap::Args, Debug)]
pub struct BenchBricksArgs {
    /// Seeded jobs (each on both bricks).
    #[arg(long, default_value_t = 20)]
    pub runs: usize,
    /// Seed of the first job.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = crate::cli::args::seed)]
    pub seed: u64,
    /// Link latency, ms.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub latency: u32,
    /// Cube size.
    #[arg(long, value_enum, default_value_t = SizeArg::Three)]
    pub size: SizeArg,
    /// Simulated seconds per wall second (the firmware brick may run slower than asked).
    #[arg(long, allow_negative_numbers = true, default_value_t = 20.0, value_parser = crate::cli::args::sim_speed)]
    pub speed: f64,
    /// Jobs at a time (each runs its two bricks one after the other).
    #[arg(long, default_value_t = 2)]
    pub jobs: usize,
    #[arg(long, value_enum, default_value_t = PaletteArg::Standard)]
    pub palette: PaletteArg,
    /// MindCub3r configuration (default: calibration/mindcub3r.toml if present).
    #[arg(long, value_name = "FILE")]
    pub robot_config: Option<PathBuf>,
    /// Robot-cost search on a node budget (deterministic, so both bricks get the same
    /// plan); 0: off.
    #[arg(long, default_value_t = 100_000)]
    pub search_nodes: u64,
    /// With the firmware brick: its build folder (default: $CUBOT_LMS2012_DIR, else
    /// target/lms2012).
    #[arg(long, value_name = "DIR")]
    pub lms2012: Option<PathBuf>,
    /// Print every logic difference found (else the first few per job).
    #[arg(long)]
    pub all: bool,
    /// Keep each run's exchange and decisions here, as JSON Lines (SEED-ours.jsonl,
    /// SEED-lms2012.jsonl: one line per command, then one per decision, then the outcome).
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
    /// Run no brick: compare the runs an earlier `--keep DIR` kept (the same seeds).
    #[arg(long, value_name = "DIR", conflicts_with = "keep")]
    pub from: Option<PathBuf>,
}

/// One seed's two runs and their verdict.
struct Outcome {
    seed: u64,
    result: Result<(BrickRun, BrickRun, Verdict), String>,
}

pub fn bench(a: BenchBricksArgs, g: &Global) -> CmdResult {
    if a.runs == 0 {
        bail!("nothing to run: give --runs > 0");
    }
    let tol = Tolerances::default();
    if let Some(dir) = &a.from {
        let results = (0..a.runs as u64)
            .map(|k| {
                let seed = a.seed.wrapping_add(k);
                let result = load(dir, seed).map(|(x, y)| {
                    let v = bricks::compare(&x, &y, &tol);
                    (x, y, v)
                });
                Outcome { seed, result }
            })
            .collect::<Vec<_>>();
        print(&a, g, &results, &tol);
        return Ok(verdict(&results));
    }
    // The firmware brick's build is checked before any work (else every job fails alone
    // and the table comes out empty).
    let dir = crate::robot::sim::lms2012::BrickKind::lms2012_dir(a.lms2012.as_deref());
    crate::robot::sim::lms2012::check_build(&dir)?;
    let config = robot_config(a.robot_config.as_deref())?;
    let solver = load_solver(g)?;
    if !g.quiet && !g.json {
        errln!(
            "bench bricks: {} ({}x{}x{}, {} ms), each on cubot's brick and on LEGO's firmware, {} at a time",
            plural(a.runs, "seeded job"),
            Size::from(a.size).n(),
            Size::from(a.size).n(),
            Size::from(a.size).n(),
            a.latency,
            a.jobs.clamp(1, a.runs)
        );
    }
    let results = run_all(&a, g, &solver, &config, &tol);
    print(&a, g, &results, &tol);
    Ok(verdict(&results))
}

fn verdict(results: &[Outcome]) -> Exit {
    let clean = results
        .iter()
        .all(|r| matches!(&r.result, Ok((_, _, v)) if v.logic() == 0));
    if clean {
        Exit::Ok
    } else {
        Exit::No
    }
}

/// One seed's two runs as `--keep` wrote them.
fn load(dir: &std::path::Path, seed: u64) -> Result<(BrickRun, BrickRun), String> {
    let one = |name: &str| -> Result<BrickRun, String> {
        let path = dir.join(format!("{seed}-{name}.jsonl"));
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let mut b = BrickRun {
            turns: Vec::new(),
            decisions: Vec::new(),
            outcome: serde_json::Value::Null,
            truth: false,
            brick_seconds: 0.0,
            wall_seconds: 0.0,
        };
        for (n, line) in text.lines().enumerate() {
            let bad = |e: &dyn std::fmt::Display| format!("{} line {}: {e}", path.display(), n + 1);
            let v: serde_json::Value = serde_json::from_str(line).map_err(|e| bad(&e))?;
            match v["type"].as_str() {
                Some("command") => b
                    .turns
                    .push(serde_json::from_value(v).map_err(|e| bad(&e))?),
                Some("decision") => {
                    let mut d = v["decision"].clone();
                    bricks::strip(&mut d);
                    b.decisions.push(d);
                }
                Some("outcome") => {
                    b.outcome = v["outcome"].clone();
                    bricks::strip(&mut b.outcome);
                    b.truth = v["simulator_at_target"].as_bool().unwrap_or(false);
                    b.brick_seconds = v["brick_seconds"].as_f64().unwrap_or(0.0);
                    b.wall_seconds = v["wall_seconds"].as_f64().unwrap_or(0.0);
                }
                _ => return Err(bad(&"not a line `--keep` writes")),
            }
        }
        Ok(b)
    };
    Ok((one("ours")?, one("lms2012")?))
}

fn run_all(
    a: &BenchBricksArgs,
    g: &Global,
    solver: &crate::solver::Solver,
    config: &crate::robot::mindcub3r::Config,
    tol: &Tolerances,
) -> Vec<Outcome> {
    let seeds: Vec<u64> = (0..a.runs as u64).map(|k| a.seed.wrapping_add(k)).collect();
    let bar = progress_bar(g, "seeds");
    if let Some(b) = &bar {
        b.set_length(seeds.len() as u64);
    }
    let next = AtomicUsize::new(0);
    let out = Mutex::new(Vec::new());
    let dir = std::env::temp_dir().join(format!("cubot-bench-bricks-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    std::thread::scope(|scope| {
        for _ in 0..a.jobs.clamp(1, seeds.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&seed) = seeds.get(i) else { break };
                let tools = super::seeded_tools(
                    solver,
                    seed,
                    (a.search_nodes > 0).then(|| CostedOptions {
                        time_limit: Duration::from_secs(3600),
                        max_nodes: Some(a.search_nodes),
                        ..CostedOptions::default()
                    }),
                );
                let job = |name: &str| Job {
                    seed,
                    size: a.size.into(),
                    latency_ms: a.latency,
                    speed: a.speed,
                    palette: Palette::from(a.palette),
                    config: config.clone(),
                    solutions: 100,
                    journal: dir.join(format!("{seed}-{name}.jsonl")),
                };
                let run = |kind: BrickKind, name: &str| {
                    bricks::run_on(kind, &job(name), &tools).map_err(|e| e.to_string())
                };
                let result = run(BrickKind::Ours, "ours").and_then(|x| {
                    let y = run(BrickKind::Lms2012(a.lms2012.clone()), "lms2012")?;
                    if let Some(dir) = &a.keep {
                        for (b, name) in [(&x, "ours"), (&y, "lms2012")] {
                            keep(&dir.join(format!("{seed}-{name}.jsonl")), b)
                                .map_err(|e| format!("--keep {}: {e}", dir.display()))?;
                        }
                    }
                    let v = bricks::compare(&x, &y, tol);
                    Ok((x, y, v))
                });
                if let Some(b) = &bar {
                    b.inc(1);
                } else if !g.quiet && !g.json {
                    let what = match &result {
                        Ok((_, _, v)) => format!("{} logic differences", v.logic()),
                        Err(e) => format!("failed: {e}"),
                    };
                    errln!("seed {seed} ({}/{}): {what}", i + 1, seeds.len());
                }
                if let Ok(mut o) = out.lock() {
                    o.push(Outcome { seed, result });
                }
            });
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let _ = std::fs::remove_dir_all(&dir);
    let mut v = out.into_inner().unwrap_or_default();
    v.sort_by_key(|r| r.seed);
    v
}

/// Writes one run's exchange, decisions and outcome as JSON Lines.
fn keep(path: &std::path::Path, b: &BrickRun) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d)?;
    }
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    for t in &b.turns {
        let mut v = serde_json::to_value(t).unwrap_or_default();
        if let Some(m) = v.as_object_mut() {
            m.insert(
                "ops".into(),
                json!(crate::robot::ev3::protocol::hex(&t.ops)),
            );
            m.insert("type".into(), json!("command"));
        }
        writeln!(f, "{v}")?;
    }
    for d in &b.decisions {
        writeln!(f, "{}", json!({"type": "decision", "decision": d}))?;
    }
    writeln!(
        f,
        "{}",
        json!({"type": "outcome", "outcome": b.outcome, "simulator_at_target": b.truth,
            "brick_seconds": b.brick_seconds, "wall_seconds": b.wall_seconds})
    )?;
    f.flush()
}

/// The physical kinds' units, for the text.
fn unit(kind: &str) -> &'static str {
    match kind {
        "count" | "movement" => "°",
        "speed" => " %",
        "sensor" => " raw",
        "time" => " ms",
        "time-us" => " µs",
        "repeats" => "×",
        "reply" | "interval" => " s",
        _ => "",
    }
}

fn print(a: &BenchBricksArgs, g: &Global, results: &[Outcome], tol: &Tolerances) {
    let mut total: BTreeMap<String, Sizes> = BTreeMap::new();
    let mut shared: BTreeMap<String, Sizes> = BTreeMap::new();
    let mut before = 0;
    let mut parted = 0;
    let mut logic = 0;
    let mut failed = 0;
    for r in results {
        let (x, y, v) = match &r.result {
            Ok(t) => t,
            Err(e) => {
                failed += 1;
                if g.json {
                    json_line(&json!({"type": "bench-bricks-one", "seed": r.seed, "error": e}));
                } else {
                    outln!("seed {}: failed: {e}", r.seed);
                }
                continue;
            }
        };
        logic += v.logic();
        before += v.exchange.logic_before_parting;
        parted += v.exchange.parted.is_some() as usize;
        for (k, s) in &v.exchange.physical {
            total.entry(k.clone()).or_default().merge(s);
        }
        for (k, s) in &v.exchange.physical_before_parting {
            shared.entry(k.clone()).or_default().merge(s);
        }
        if g.json {
            json_line(&json!({
                "type": "bench-bricks-one", "seed": r.seed,
                "logic_differences": v.logic(),
                "exchange": &v.exchange, "decisions": &v.decisions,
                "simulator_at_target": [v.truth.0, v.truth.1],
                "brick_seconds": [x.brick_seconds, y.brick_seconds],
                "wall_seconds": [x.wall_seconds, y.wall_seconds],
            }));
            continue;
        }
        let reached = |b: &BrickRun| {
            b.outcome
                .get("reached_target")
                .and_then(|v| v.as_bool())
                .unwrap_or(false)
        };
        let parted = match v.exchange.parted {
            Some((x, y)) => format!(
                " ({} in the exchange before the host's paths part at step {} / {})",
                v.exchange.logic_before_parting,
                x.map_or("-".into(), |k| k.to_string()),
                y.map_or("-".into(), |k| k.to_string())
            ),
            None => String::new(),
        };
        outln!(
            "seed {}: {} logic differences{parted}; commands {} / {} (steps {} / {}); reached {} / {}; brick time {:.1} / {:.1} s, wall {:.1} / {:.1} s (ours / firmware)",
            r.seed,
            v.logic(),
            v.exchange.commands.0,
            v.exchange.commands.1,
            v.exchange.steps.0,
            v.exchange.steps.1,
            reached(x),
            reached(y),
            x.brick_seconds,
            y.brick_seconds,
            x.wall_seconds,
            y.wall_seconds
        );
        for d in &v.exchange.identity {
            outln!(
                "  identity: {}: ours {}, firmware {}",
                d.what,
                d.in_a,
                d.in_b
            );
        }
        let shown = if a.all { usize::MAX } else { 5 };
        for d in v.exchange.logic.iter().take(shown) {
            outln!(
                "  step {:?}/{:?} [{}]: {}: ours {}, firmware {}",
                d.a,
                d.b,
                d.shape,
                d.what,
                d.in_a,
                d.in_b
            );
        }
        for d in v.decisions.iter().take(shown) {
            let cut = |v: &serde_json::Value| {
                let s = v.to_string();
                s.chars().take(300).collect::<String>()
            };
            outln!("  {}: ours {}, firmware {}", d.what, cut(&d.a), cut(&d.b));
        }
    }
    if g.json {
        let sizes = |m: &BTreeMap<String, Sizes>| -> serde_json::Map<String, serde_json::Value> {
            m.iter()
                .map(|(k, s)| {
                    (
                        k.clone(),
                        json!({"n": s.n, "differing": s.differing, "max": s.max, "mean": s.mean(), "over_tolerance": s.over}),
                    )
                })
                .collect()
        };
        json_line(&json!({
            "type": "bench-bricks", "runs": a.runs, "first_seed": a.seed,
            "size": Size::from(a.size).n(), "latency_ms": a.latency, "speed": a.speed,
            "failed": failed, "logic_differences": logic,
            "logic_before_parting": before, "parted": parted,
            "physical": sizes(&total), "physical_before_parting": sizes(&shared),
            "tolerances": tol,
        }));
        return;
    }
    outln!(
        "{} (seeds {}..{}), {} failed: {}",
        plural(results.len(), "job"),
        a.seed,
        a.seed.wrapping_add(a.runs as u64 - 1),
        failed,
        plural(logic, "logic difference")
    );
    outln!(
        "  of them {before} in the exchange before the host's paths part; the paths part in {parted} of {}",
        plural(results.len() - failed, "job")
    );
    outln!("physical differences (ours − firmware, |size|), before the paths part: kind: compared, differing, max, mean, over tolerance");
    print_sizes(&shared, tol);
    outln!("physical differences over whole runs (after a parting the aligned commands may stand in different places):");
    print_sizes(&total, tol);
}

fn print_sizes(total: &BTreeMap<String, Sizes>, tol: &Tolerances) {
    for (k, s) in total {
        outln!(
            "  {k:<9} {:>7} {:>7}  max {:.3}{u}  mean {:.3}{u}  {} over {}{u}",
            s.n,
            s.differing,
            s.max,
            s.mean(),
            s.over,
            tol.of(k),
            u = unit(k)
        );
    }
}
