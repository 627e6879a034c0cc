//! `solve`, `tables`, `bench solve`: the command-line face of [`crate::solver`].

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rayon::prelude::*;
use serde_json::json;

use super::input::{single_state, state_arg, States};
use super::output::{json_line, progress_allowed, stdout_gone};
use super::{CmdResult, Exit, Global};
use crate::cube::{validate, Alg, FaceletCube, InvalidCube, Size};
use crate::solver::{
    table_status, Metric, SolveOptions, Solver, SolverError, TableOptions, TableState,
};

#[derive(clap::Args, Debug)]
pub struct SolveArgs {
    /// The state: a facelet string (54 or 24 symbols), @FILE, or - (stdin, one state a
    /// line; one solution a line out, in order; an empty line for a state already at the
    /// target).
    pub state: String,
    /// Solve to this state instead of solved: a facelet string or @FILE.
    #[arg(long, value_name = "STATE", conflicts_with = "target_moves")]
    pub target: Option<String>,
    /// Solve to the state these moves make from solved (e.g. "R U R' U'").
    #[arg(long, value_name = "ALG")]
    pub target_moves: Option<String>,
    /// Longest solution accepted (in the chosen metric).
    #[arg(long, default_value_t = 20)]
    pub max_length: u32,
    /// Time limit per state in milliseconds.
    #[arg(long, value_name = "MS")]
    pub timeout: Option<u64>,
    /// How many distinct solutions to print (shortest first).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=10000))]
    pub solutions: u64,
    /// htm (half-turn metric) or qtm (quarter-turn metric).
    #[arg(long, default_value = "htm")]
    pub metric: Metric,
    /// Keep looking for shorter solutions until the time limit.
    #[arg(long, requires = "timeout")]
    pub keep_searching: bool,
    /// Print every optimal solution and nothing longer (any 2x2x2; a 3x3x3 within 7
    /// moves of the target). Commuting opposite-face turns are listed in one order.
    #[arg(long, conflicts_with_all = ["solutions", "keep_searching"])]
    pub all_optimal: bool,
}

#[derive(clap::Args, Debug)]
pub struct TablesArgs {
    #[command(subcommand)]
    pub what: TablesWhat,
}

#[derive(clap::Subcommand, Debug)]
pub enum TablesWhat {
    /// Load the tables, building (and caching) any missing, old or corrupt one.
    Build {
        /// Rebuild even when valid cached copies exist.
        #[arg(long)]
        force: bool,
    },
    /// Check every cached table file (header and checksum); exit 1 if one is not usable.
    Verify,
    /// Print where the tables are cached.
    Path,
}

#[derive(clap::Args, Debug)]
pub struct BenchSolveArgs {
    /// States, one facelet string a line (3x3x3 or 2x2x2); default
    /// ../shared/states/random-3x3x3-1000.txt next to the repository.
    #[arg(long, value_name = "FILE")]
    pub states: Option<PathBuf>,
    /// Longest solution accepted.
    #[arg(long, default_value_t = 20)]
    pub max_length: u32,
    /// Threads for the per-solve timings (1: one solve at a time).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: u64,
    /// Only the first N states.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
    /// Skip the min2phase row.
    #[arg(long)]
    pub no_peer: bool,
    /// Skip the batch-throughput measurement.
    #[arg(long)]
    pub no_batch: bool,
}

/// Loads the solver with a progress bar (when allowed) and prints its notes.
pub fn load_solver(g: &Global) -> Result<Solver> {
    load_solver_with(g, false)
}

fn load_solver_with(g: &Global, rebuild: bool) -> Result<Solver> {
    let bar = progress_allowed(g).then(|| {
        let pb = indicatif::ProgressBar::new(1);
        pb.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg:24} [{bar:40}] {percent:>3}% {elapsed_precise}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        Arc::new(pb)
    });
    let progress: Option<crate::solver::ProgressFn> = bar.clone().map(|pb| {
        let f: crate::solver::ProgressFn = Arc::new(move |label: &str, done: u64, total: u64| {
            pb.set_message(label.to_string());
            pb.set_length(total);
            pb.set_position(done);
        });
        f
    });
    let solver = Solver::new(&TableOptions {
        cache_dir: g.cache_dir.clone(),
        progress,
        rebuild,
    })
    .context("cannot load the solver tables")?;
    if let Some(pb) = bar {
        pb.finish_and_clear();
    }
    if !g.quiet {
        for n in solver.notes() {
            eprintln!("warning: {n}");
        }
    }
    Ok(solver)
}

fn print_invalid(g: &Global, state: &str, what: &str, e: &InvalidCube) {
    if g.json {
        let problems = super::cube::problems_json(e);
        json_line(&json!({"type": "invalid", "state": state, "which": what, "problems": problems}));
    } else {
        let list: Vec<String> = e.problems.iter().map(|p| p.to_string()).collect();
        outln!("invalid {what}: {}", list.join("; "));
    }
}

/// The target for one start state.
enum Target {
    Solved,
    State(FaceletCube),
    Moves(Alg),
}

impl Target {
    fn for_start(&self, start: &FaceletCube) -> Result<FaceletCube, String> {
        match self {
            Target::Solved => Ok(FaceletCube::solved(start.size()).with_symbols(start.symbols())),
            Target::State(t) => Ok(t.clone()),
            Target::Moves(alg) => {
                let mut t = FaceletCube::solved(start.size()).with_symbols(start.symbols());
                t.apply(alg).map_err(|mv| {
                    format!(
                        "--target-moves: {mv:?} needs a middle layer, which a {} does not have",
                        start.size()
                    )
                })?;
                Ok(t)
            }
        }
    }
}

/// The outcome for one state, ready to print.
enum Outcome {
    Solved(Vec<Alg>),
    Invalid(&'static str, InvalidCube),
    No(String),
}

fn solve_one(solver: &Solver, text: &str, target: &Target, opts: &SolveOptions) -> Outcome {
    let start = match validate(text) {
        Ok(c) => c,
        Err(e) => return Outcome::Invalid("start", e),
    };
    let target = match target.for_start(&start) {
        Ok(t) => t,
        Err(e) => return Outcome::No(e),
    };
    match solver.solve(&start, &target, opts) {
        Ok(algs) => Outcome::Solved(algs),
        Err(SolverError::Invalid(e)) => Outcome::Invalid("start", e),
        Err(SolverError::InvalidTarget(e)) => Outcome::Invalid("target", e),
        Err(e) => Outcome::No(e.to_string()),
    }
}

fn print_outcome(g: &Global, state: &str, out: &Outcome, metric: Metric, one_line: bool) -> bool {
    match out {
        Outcome::Solved(algs) => {
            if g.json {
                for (i, a) in algs.iter().enumerate() {
                    let len = match metric {
                        Metric::Htm => a.htm(),
                        Metric::Qtm => a.qtm(),
                    };
                    json_line(&json!({"type": "solution", "state": state, "index": i,
                        "moves": a.to_string(), "length": len, "metric": metric.to_string()}));
                }
            } else if one_line {
                let list: Vec<String> = algs.iter().map(|a| a.to_string()).collect();
                outln!("{}", list.join(", "));
            } else {
                for a in algs {
                    outln!("{a}");
                }
            }
            true
        }
        Outcome::Invalid(what, e) => {
            print_invalid(g, state, what, e);
            false
        }
        Outcome::No(msg) => {
            if g.json {
                json_line(&json!({"type": "no-solution", "state": state, "message": msg}));
            } else {
                outln!("no solution: {msg}");
            }
            false
        }
    }
}

pub fn solve(a: SolveArgs, g: &Global) -> CmdResult {
    let target = if let Some(t) = &a.target {
        let text = single_state(t)?;
        match validate(&text) {
            Ok(c) => Target::State(c),
            Err(e) => {
                print_invalid(g, &text, "target", &e);
                return Ok(Exit::No);
            }
        }
    } else if let Some(m) = &a.target_moves {
        Target::Moves(Alg::parse(m).with_context(|| format!("cannot read --target-moves {m:?}"))?)
    } else {
        Target::Solved
    };
    let opts = SolveOptions {
        max_length: a.max_length,
        timeout: a.timeout.map(Duration::from_millis),
        solutions: a.solutions as usize,
        metric: a.metric,
        keep_searching: a.keep_searching,
        all_optimal: a.all_optimal,
    };
    let source = state_arg(&a.state)?;
    let solver = load_solver(g)?;
    match source {
        States::One(text) => {
            let out = with_slow_note(g, &opts, || solve_one(&solver, &text, &target, &opts));
            let ok = print_outcome(g, &text, &out, opts.metric, false);
            Ok(if ok { Exit::Ok } else { Exit::No })
        }
        States::Stdin => {
            let stdin = std::io::stdin();
            let mut lines = stdin.lock().lines();
            let mut all_ok = true;
            loop {
                let mut chunk = Vec::with_capacity(256);
                for line in lines.by_ref().take(256) {
                    chunk.push(
                        line.context("cannot read standard input")?
                            .trim()
                            .to_string(),
                    );
                }
                if chunk.is_empty() {
                    break;
                }
                let outs: Vec<Outcome> = chunk
                    .par_iter()
                    .map(|s| solve_one(&solver, s, &target, &opts))
                    .collect();
                for (s, o) in chunk.iter().zip(&outs) {
                    all_ok &= print_outcome(g, s, o, opts.metric, true);
                }
                std::io::stdout().flush().ok();
                if stdout_gone() {
                    // Nobody reads the answers any more (`| head`): stop solving.
                    break;
                }
            }
            Ok(if all_ok { Exit::Ok } else { Exit::No })
        }
    }
}

/// How long a one-state search without `--timeout` runs before `solve` says so on stderr.
const SLOW_NOTE_AFTER: Duration = Duration::from_secs(3);

/// Runs `work` (one state's search); if it takes longer than [`SLOW_NOTE_AFTER`] and no
/// time limit was given, says on stderr (unless `--quiet`) that the search goes on and
/// how to bound it: a length limit below a cube's distance makes the two-phase search
/// exhaust every split, which can take hours. Batches (`solve -`) get no note: a chunk of
/// states takes seconds anyway, so its time says nothing about any one search.
fn with_slow_note<T>(g: &Global, opts: &SolveOptions, work: impl FnOnce() -> T) -> T {
    if g.quiet || opts.timeout.is_some() {
        return work();
    }
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let max = opts.max_length;
    let watcher = std::thread::spawn(move || {
        if wait.recv_timeout(SLOW_NOTE_AFTER) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
            eprintln!(
                "note: still searching for a solution of at most {max} moves after {} s; \
                 if that is below this cube's distance, none exists and the search can take \
                 hours to prove it (--timeout MS bounds the search)",
                SLOW_NOTE_AFTER.as_secs()
            );
        }
    });
    let out = work();
    drop(done);
    watcher.join().ok();
    out
}

pub fn tables(a: TablesArgs, g: &Global) -> CmdResult {
    match a.what {
        TablesWhat::Build { force } => {
            let t0 = Instant::now();
            let solver = load_solver_with(g, force)?;
            let secs = t0.elapsed().as_secs_f64();
            let mb = solver.table_bytes() as f64 / (1 << 20) as f64;
            if g.json {
                json_line(
                    &json!({"type": "tables", "action": "build", "seconds": secs,
                    "memory_bytes": solver.table_bytes(), "notes": solver.notes()}),
                );
            } else {
                outln!("tables ready in {secs:.2} s ({mb:.1} MiB in memory)");
            }
            Ok(Exit::Ok)
        }
        TablesWhat::Verify => {
            let status = table_status(g.cache_dir.as_deref())?;
            let mut ok = true;
            for s in &status {
                let (word, reason) = match &s.state {
                    TableState::Ok => ("ok", String::new()),
                    TableState::Missing => ("missing", String::new()),
                    TableState::Bad(r) => ("bad", r.clone()),
                };
                ok &= s.state == TableState::Ok;
                if g.json {
                    json_line(
                        &json!({"type": "table", "name": s.name, "path": s.path.display().to_string(),
                        "entries": s.entries, "state": word, "reason": reason}),
                    );
                } else if reason.is_empty() {
                    outln!("{word:8}{} {}", s.name, s.path.display());
                } else {
                    outln!("{word:8}{} {}: {reason}", s.name, s.path.display());
                }
            }
            Ok(if ok { Exit::Ok } else { Exit::No })
        }
        TablesWhat::Path => {
            let status = table_status(g.cache_dir.as_deref())?;
            let dir = status
                .first()
                .and_then(|s| s.path.parent())
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            if g.json {
                let files: Vec<String> = status
                    .iter()
                    .map(|s| s.path.display().to_string())
                    .collect();
                json_line(&json!({"type": "tables-path", "dir": dir, "files": files}));
            } else {
                outln!("{dir}");
                for s in &status {
                    outln!("{}", s.path.display());
                }
            }
            Ok(Exit::Ok)
        }
    }
}

/// Per-solve statistics.
struct Row {
    name: &'static str,
    times: Vec<Duration>,
    cpu: Vec<Duration>,
    lengths: Vec<u32>,
    failures: usize,
}

/// CPU time of the calling thread (immune to waiting for a busy machine's cores).
fn thread_cpu() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(
        t.tv_sec.max(0) as u64,
        t.tv_nsec.clamp(0, 999_999_999) as u32,
    )
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

/// The `q` quantile (nearest rank) of `values`; the default value when there are none.
fn quantile_of<T: Ord + Copy + Default>(values: &[T], q: f64) -> T {
    let mut t = values.to_vec();
    t.sort_unstable();
    if t.is_empty() {
        return T::default();
    }
    let i = ((t.len() as f64 - 1.0) * q).round() as usize;
    t[i.min(t.len() - 1)]
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

fn default_states() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/states/random-3x3x3-1000.txt")
}

pub fn bench(a: BenchSolveArgs, g: &Global) -> CmdResult {
    let path = a.states.clone().unwrap_or_else(default_states);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read the states file {}", path.display()))?;
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
    if let Some(n) = a.count {
        states.truncate(usize::try_from(n).unwrap_or(usize::MAX));
    }
    let size = states[0].size();
    anyhow::ensure!(
        states.iter().all(|s| s.size() == size),
        "{} mixes cube sizes",
        path.display()
    );
    let t0 = Instant::now();
    let solver = load_solver(g)?;
    let load = t0.elapsed();
    let opts = SolveOptions {
        max_length: a.max_length,
        ..SolveOptions::default()
    };
    let solved = |c: &FaceletCube| FaceletCube::solved(c.size()).with_symbols(c.symbols());
    // Warm up (page in the tables).
    for s in states.iter().take(20) {
        let _ = solver.solve(s, &solved(s), &opts);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(a.threads as usize)
        .build()
        .context("cannot start the thread pool")?;
    let counted: Vec<(Timed, u64)> = pool.install(|| {
        states
            .par_iter()
            .with_max_len(1)
            .map(|s| {
                let mut nodes = 0;
                let (t, c) = (Instant::now(), thread_cpu());
                let r = solver.solve_counted(s, &solved(s), &opts, &mut nodes);
                let (dt, dc) = (t.elapsed(), thread_cpu().saturating_sub(c));
                let len = r.ok().and_then(|algs| {
                    let alg = algs.into_iter().next()?;
                    let mut c = s.clone();
                    c.apply(&alg).ok()?;
                    (c.is_solved() && alg.htm() <= a.max_length).then_some(alg.htm())
                });
                ((dt, dc, len), nodes)
            })
            .collect()
    });
    let (results, nodes): (Vec<Timed>, Vec<u64>) = counted.into_iter().unzip();
    let ours = row("cubot", &results);
    let mb = solver.table_bytes() as f64 / (1 << 20) as f64;
    if g.json {
        json_line(
            &json!({"type": "bench-solve", "states": states.len(), "file": path.display().to_string(),
            "size": size.n(), "max_length": a.max_length, "threads": a.threads,
            "table_load_seconds": load.as_secs_f64(), "table_memory_bytes": solver.table_bytes()}),
        );
    } else {
        outln!(
            "{} {} states from {}, at most {} moves, {} thread(s); tables loaded in {:.2} s, {:.1} MiB",
            states.len(),
            size,
            path.display(),
            a.max_length,
            a.threads,
            load.as_secs_f64(),
            mb
        );
    }
    ours.print(g);
    // The search's work, which (unlike its time) the machine's load does not change.
    let nq = |q: f64| quantile_of(&nodes, q);
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
    if g.verbose > 0 {
        // The slowest states, for whoever chases the tail.
        let mut order: Vec<usize> = (0..results.len()).collect();
        order.sort_by(|&a, &b| results[b].1.cmp(&results[a].1));
        for &i in order.iter().take(5) {
            eprintln!(
                "slow: state {} ({:.1} ms cpu, {} nodes): {}",
                i + 1,
                results[i].1.as_secs_f64() * 1e3,
                nodes[i],
                states[i].to_letters()
            );
        }
    }
    let peer = if size == Size::Three && !a.no_peer {
        peer_row(&states, a.max_length, &pool)
    } else {
        None
    };
    if let Some(peer) = &peer {
        peer.print(g);
        let r = |q: f64| peer.quantile(q).as_secs_f64() / ours.quantile(q).as_secs_f64().max(1e-12);
        let rc = |q: f64| {
            peer.cpu_quantile(q).as_secs_f64() / ours.cpu_quantile(q).as_secs_f64().max(1e-12)
        };
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
    if !a.no_batch {
        let batch = |threads: usize| -> Result<f64> {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .context("cannot start the thread pool")?;
            let t = Instant::now();
            pool.install(|| {
                states.par_iter().for_each(|s| {
                    let _ = solver.solve(s, &solved(s), &opts);
                })
            });
            Ok(states.len() as f64 / t.elapsed().as_secs_f64())
        };
        // One thread before and after the parallel run; the better one counts, so a busy
        // moment of the machine does not flatter the speed-up.
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
    }
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
        let len = Alg::parse(&moves).ok().and_then(|alg| {
            let mut c = s.clone();
            c.apply(&alg).ok()?;
            (c.is_solved() && alg.htm() <= max_length).then_some(alg.htm())
        });
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
