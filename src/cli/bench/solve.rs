//! `bench solve`: solver speed, solution lengths and search nodes on a file of states, side
//! by side with the min2phase crate (feature `bench-peers`), plus batch throughput.
//!
//! Level: `cli`. Depends on `cube`, `solver` and the shared cli helpers; no command module.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rayon::prelude::*;
use serde_json::json;

use super::stats::quantile_of;
use crate::cli::common::{thread_cpu, warn_if_cpu_clock_missing};
use crate::cli::connect::load_solver;
use crate::cli::output::json_line;
use crate::cli::{CmdResult, Exit, Global};
use crate::cube::{validate, Alg, FaceletCube, Size};
use crate::solver::{SolveOptions, Solver};

/// The states file used when `--states` is left out, relative to the working directory.
const DEFAULT_STATES: &str = "samples/states/random-3x3x3-1000.txt";

#[derive(clap::Args, Debug)]
pub struct BenchSolveArgs {
    /// States, one facelet string a line (3x3x3 or 2x2x2); default
    /// samples/states/random-3x3x3-1000.txt in the working directory (a checkout).
    #[arg(long, value_name = "FILE")]
    pub states: Option<PathBuf>,
    /// Longest solution accepted.
    #[arg(long, default_value_t = 20)]
    pub max_length: u32,
    /// Threads for the per-solve timings (1: one solve at a time).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: u64,
    /// Only the first N states.
    #[arg(long, value_parser = crate::cli::args::at_least_one)]
    pub count: Option<u64>,
    /// Skip the min2phase row.
    #[arg(long)]
    pub no_peer: bool,
    /// Skip the batch-throughput measurement.
    #[arg(long)]
    pub no_batch: bool,
}

/// Per-solve statistics.
struct Row {
    name: &'static str,
    times: Vec<Duration>,
    cpu: Vec<Duration>,
    lengths: Vec<u32>,
    failures: usize,
}

/// One timed solve: wall time, thread CPU time, verified length (None: failed).
type Timed = (Duration, Duration, Option<u32>);

fn row(name: &'static str, results: &[Timed]) -> Row {
    Row {
        name,
        times: results.iter().map(|r| r.0).collect(),
        cpu: results.iter().map(|r| r.1).collect(),
        lengths: results.iter().filter_map(|r| r.2).collect(),
        failures: results.iter().filter(|r| r.2.is_none()).count(),
    }
}

impl Row {
    fn cpu_quantile(&self, q: f64) -> Duration {
        quantile_of(&self.cpu, q)
    }

    fn quantile(&self, q: f64) -> Duration {
        quantile_of(&self.times, q)
    }
    fn max(&self) -> Duration {
        self.times.iter().max().copied().unwrap_or_default()
    }
    fn mean_length(&self) -> f64 {
        self.lengths.iter().map(|&l| l as f64).sum::<f64>() / self.lengths.len().max(1) as f64
    }
    fn max_length(&self) -> u32 {
        self.lengths.iter().max().copied().unwrap_or(0)
    }
    /// Solves that took longer than a second (the ceiling at ≤ 19 moves).
    fn over_a_second(&self) -> usize {
        self.times.iter().filter(|t| t.as_secs_f64() > 1.0).count()
    }
    fn print(&self, g: &Global) {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        if g.json {
            json_line(&json!({"type": "bench-solve-row", "solver": self.name,
                "states": self.times.len(), "median_ms": ms(self.quantile(0.5)),
                "p90_ms": ms(self.quantile(0.9)), "max_ms": ms(self.max()),
                "cpu_median_ms": ms(self.cpu_quantile(0.5)), "cpu_p90_ms": ms(self.cpu_quantile(0.9)),
                "mean_length": self.mean_length(), "max_length": self.max_length(),
                "over_1s": self.over_a_second(), "failures": self.failures}));
        } else {
            outln!(
                "{:10} median {:8.4} ms  p90 {:8.4} ms  max {:9.4} ms  (cpu median {:8.4} ms  p90 {:8.4} ms)  mean length {:5.2}  longest {:2}  over 1 s {}  failures {}",
                self.name,
                ms(self.quantile(0.5)),
                ms(self.quantile(0.9)),
                ms(self.max()),
                ms(self.cpu_quantile(0.5)),
                ms(self.cpu_quantile(0.9)),
                self.mean_length(),
                self.max_length(),
                self.over_a_second(),
                self.failures
            );
        }
    }
}

/// The states file: `--states`, else [`DEFAULT_STATES`] when the working directory holds it.
fn states_path(a: &BenchSolveArgs) -> Result<PathBuf> {
    if let Some(p) = &a.states {
        return Ok(p.clone());
    }
    let p = PathBuf::from(DEFAULT_STATES);
    anyhow::ensure!(
        p.is_file(),
        "no states to time: {DEFAULT_STATES} is not in the working directory; pass \
         --states FILE or run from a checkout of cubot"
    );
    Ok(p)
}

/// Reads the states (blank lines and `#` comments skipped), keeps the first `count`, and
/// checks they are valid and of one size.
fn read_states(path: &Path, count: Option<u64>) -> Result<Vec<FaceletCube>> {
    let text = crate::input::read_text(path, crate::input::FileKind::States)?;
    let mut states = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let c = validate(line).map_err(|e| anyhow::anyhow!("{}:{}: {e}", path.display(), i + 1))?;
        states.push(c);
    }
    anyhow::ensure!(!states.is_empty(), "{} holds no states", path.display());
    if let Some(n) = count {
        states.truncate(usize::try_from(n).unwrap_or(usize::MAX));
    }
    let size = states[0].size();
    anyhow::ensure!(
        states.iter().all(|s| s.size() == size),
        "{} mixes cube sizes",
        path.display()
    );
    Ok(states)
}

fn solved(c: &FaceletCube) -> FaceletCube {
    FaceletCube::solved(c.size()).with_symbols(c.symbols())
}

/// The length of `alg` when it solves `s` within `max_length`.
fn verified_length(s: &FaceletCube, alg: &Alg, max_length: u32) -> Option<u32> {
    let mut c = s.clone();
    c.apply(alg).ok()?;
    (c.is_solved() && alg.htm() <= max_length).then_some(alg.htm())
}

/// Times every solve on `pool` (one state per task): the timings and the search nodes.
fn time_solves(
    solver: &Solver,
    states: &[FaceletCube],
    opts: &SolveOptions,
    pool: &rayon::ThreadPool,
) -> (Vec<Timed>, Vec<u64>) {
    let counted: Vec<(Timed, u64)> = pool.install(|| {
        states
            .par_iter()
            .with_max_len(1)
            .map(|s| {
                let mut nodes = 0;
                let (t, c) = (Instant::now(), thread_cpu());
                let r = solver.solve_counted(s, &solved(s), opts, &mut nodes);
                let (dt, dc) = (t.elapsed(), thread_cpu().saturating_sub(c));
                let len = r.ok().and_then(|algs| {
                    let alg = algs.into_iter().next()?;
                    verified_length(s, &alg, opts.max_length)
                });
                ((dt, dc, len), nodes)
            })
            .collect()
    });
    counted.into_iter().unzip()
}

/// The first line: what was timed, and how long the tables took to load.
fn print_header(
    g: &Global,
    a: &BenchSolveArgs,
    path: &Path,
    states: &[FaceletCube],
    solver: &Solver,
    load: Duration,
) {
    let size = states[0].size();
    let mb = solver.table_bytes() as f64 / (1 << 20) as f64;
    if g.json {
        json_line(
            &json!({"type": "bench-solve", "states": states.len(), "file": path.display().to_string(),
            "size": size.n(), "max_length": a.max_length, "threads": a.threads,
            "table_load_seconds": load.as_secs_f64(), "table_memory_bytes": solver.table_bytes()}),
        );
    } else {
        // A 2x2x2 is solved optimally (11 moves at most), in tables of its own built on
        // the first solve; the 3x3x3 tables are loaded all the same.
        let bound = match size {
            Size::Two => "optimal solutions".to_string(),
            _ => format!("at most {} moves", a.max_length),
        };
        let tables = match size {
            Size::Two => "tables (3x3x3 and 2x2x2)",
            _ => "tables",
        };
        outln!(
            "{} {} states from {}, {bound}, {}; {tables} loaded in {:.2} s, {:.1} MiB",
            states.len(),
            size,
            path.display(),
            super::super::output::plural(a.threads as usize, "thread"),
            load.as_secs_f64(),
            mb
        );
    }
}

/// The search's work, which (unlike its time) the machine's load does not change.
fn print_nodes(g: &Global, nodes: &[u64]) {
    let nq = |q: f64| quantile_of(nodes, q);
    let total: u64 = nodes.iter().sum();
    if g.json {
        json_line(&json!({"type": "bench-solve-nodes", "solver": "cubot",
            "median": nq(0.5), "p90": nq(0.9), "max": nq(1.0), "total": total}));
    } else {
        outln!(
            "{:10} search nodes per solve: median {}  p90 {}  max {}  total {}",
            "",
            nq(0.5),
            nq(0.9),
            nq(1.0),
            total
        );
    }
}

/// The slowest states on stderr, for whoever chases the tail.
fn print_slowest(results: &[Timed], nodes: &[u64], states: &[FaceletCube]) {
    let mut order: Vec<usize> = (0..results.len()).collect();
    order.sort_by(|&a, &b| results[b].1.cmp(&results[a].1));
    for &i in order.iter().take(5) {
        errln!(
            "slow: state {} ({:.1} ms cpu, {} nodes): {}",
            i + 1,
            results[i].1.as_secs_f64() * 1e3,
            nodes[i],
            states[i].to_letters()
        );
    }
}

/// The peer's row and how many times faster cubot is.
fn print_peer(g: &Global, peer: &Row, ours: &Row) {
    peer.print(g);
    let r = |q: f64| peer.quantile(q).as_secs_f64() / ours.quantile(q).as_secs_f64().max(1e-12);
    let rc =
        |q: f64| peer.cpu_quantile(q).as_secs_f64() / ours.cpu_quantile(q).as_secs_f64().max(1e-12);
    if g.json {
        json_line(&json!({"type": "bench-solve-ratio", "peer": peer.name,
            "median": r(0.5), "p90": r(0.9), "cpu_median": rc(0.5), "cpu_p90": rc(0.9)}));
    } else {
        outln!(
            "ratio      {} / cubot: median {:.1}x, p90 {:.1}x; cpu median {:.1}x, p90 {:.1}x (higher = cubot faster)",
            peer.name,
            r(0.5),
            r(0.9),
            rc(0.5),
            rc(0.9)
        );
    }
}

/// States per second on one thread and on every core. One thread runs before and after the
/// parallel run; the better one counts, so a busy moment of the machine does not flatter
/// the speed-up.
fn measure_batch(
    g: &Global,
    solver: &Solver,
    states: &[FaceletCube],
    opts: &SolveOptions,
) -> Result<()> {
    let batch = |threads: usize| -> Result<f64> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .context("cannot start the thread pool")?;
        let t = Instant::now();
        pool.install(|| {
            states.par_iter().for_each(|s| {
                let _ = solver.solve(s, &solved(s), opts);
            })
        });
        Ok(states.len() as f64 / t.elapsed().as_secs_f64())
    };
    let first = batch(1)?;
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let many = batch(cores)?;
    let one = first.max(batch(1)?);
    if g.json {
        json_line(&json!({"type": "bench-solve-batch", "threads": cores,
            "one_thread_per_s": one, "all_threads_per_s": many, "speedup": many / one}));
    } else {
        outln!(
            "batch      1 thread {one:.0} states/s, {cores} threads {many:.0} states/s ({:.2}x)",
            many / one
        );
    }
    Ok(())
}

pub fn bench(a: BenchSolveArgs, g: &Global) -> CmdResult {
    let path = states_path(&a)?;
    let states = read_states(&path, a.count)?;
    let t0 = Instant::now();
    let solver = load_solver(g)?;
    let load = t0.elapsed();
    let opts = SolveOptions {
        max_length: a.max_length,
        ..SolveOptions::default()
    };
    // Warm up (page in the tables).
    for s in states.iter().take(20) {
        let _ = solver.solve(s, &solved(s), &opts);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(a.threads as usize)
        .build()
        .context("cannot start the thread pool")?;
    let (results, nodes) = time_solves(&solver, &states, &opts, &pool);
    let ours = row("cubot", &results);
    print_header(g, &a, &path, &states, &solver, load);
    ours.print(g);
    print_nodes(g, &nodes);
    if g.verbose > 0 {
        print_slowest(&results, &nodes, &states);
    }
    let peer = if states[0].size() == Size::Three && !a.no_peer {
        peer_row(&states, a.max_length, &pool)
    } else {
        None
    };
    if let Some(peer) = &peer {
        print_peer(g, peer, &ours);
    }
    if !a.no_batch {
        measure_batch(g, &solver, &states, &opts)?;
    }
    warn_if_cpu_clock_missing();
    let failed = ours.failures + peer.as_ref().map(|p| p.failures).unwrap_or(0);
    Ok(if failed == 0 { Exit::Ok } else { Exit::No })
}

#[cfg(feature = "bench-peers")]
fn peer_row(states: &[FaceletCube], max_length: u32, pool: &rayon::ThreadPool) -> Option<Row> {
    let run = |s: &FaceletCube| -> Timed {
        let letters = s.to_letters();
        let (t, c) = (Instant::now(), thread_cpu());
        let out = min2phase::solve(&letters, max_length.min(255) as u8);
        let (dt, dc) = (t.elapsed(), thread_cpu().saturating_sub(c));
        let moves = out.split('(').next().unwrap_or("").trim().to_string();
        if out.starts_with("Error") {
            return (dt, dc, None);
        }
        let len = Alg::parse(&moves)
            .ok()
            .and_then(|alg| verified_length(s, &alg, max_length));
        (dt, dc, len)
    };
    // min2phase builds its tables on first use: do that before timing.
    for s in states.iter().take(20) {
        let _ = run(s);
    }
    let results: Vec<Timed> = pool.install(|| states.par_iter().with_max_len(1).map(run).collect());
    Some(row("min2phase", &results))
}

#[cfg(not(feature = "bench-peers"))]
fn peer_row(_: &[FaceletCube], _: u32, _: &rayon::ThreadPool) -> Option<Row> {
    None
}
