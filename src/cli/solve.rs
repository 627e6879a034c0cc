//! `solve` and `tables`: the command-line face of [`crate::solver`].
//!
//! Level: `cli`. Depends on `cube`, `solver` and the shared cli helpers.

use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rayon::prelude::*;
use serde_json::json;

use super::connect::{load_solver, load_solver_with};
use super::input::{single_state, state_arg, States};
use super::output::{json_line, stdout_gone};
use super::{Answer, CmdResult, Exit, Global};
use crate::cube::{Alg, FaceletCube, InvalidCube};

/// Checks a state; `solved` is the solved 3x3x3, as `validate`, `show` and `apply` read it.
fn validate(text: &str) -> Result<FaceletCube, InvalidCube> {
    if text.trim().eq_ignore_ascii_case("solved") {
        return Ok(FaceletCube::solved(crate::cube::Size::Three));
    }
    crate::cube::validate(text)
}
use crate::solver::{table_status, Metric, SolveOptions, Solver, SolverError, TableState};

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
    /// Longest solution accepted, in the chosen metric; the search stops at the first
    /// solution this short, so a higher limit can give a longer answer sooner
    /// (--keep-searching looks on) [default: 20 in htm, 26 in qtm: every cube has a
    /// solution that short].
    #[arg(long)]
    pub max_length: Option<u32>,
    /// Time limit per state in milliseconds [default: 60000 when --max-length is below
    /// the default, where a cube may have no solution and proving it can take hours].
    #[arg(long, allow_negative_numbers = true, value_name = "MS", value_parser = super::args::millis)]
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

pub(super) fn print_invalid(g: &Global, state: &str, what: &str, e: &InvalidCube) {
    if g.json {
        let problems = super::cube::problems_json(e);
        json_line(&json!({"type": "invalid", "state": state, "which": what, "problems": problems}));
    } else {
        let list: Vec<String> = e.problems.iter().map(|p| p.to_string()).collect();
        // Malformed input (exit 2) and an illegal cube (exit 1) start with different words.
        let word = if e.is_unreadable() {
            "malformed"
        } else {
            "invalid"
        };
        outln!("{word} {what}: {}", list.join("; "));
    }
    if e.is_unreadable() {
        if let Some(hint) = super::input::file_hint(state) {
            errln!("hint: {hint}");
        }
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
    /// No solution: the whole line to print (it says so itself).
    No(String),
    /// Start and target that cannot be one problem (different symbols or sizes).
    Mismatched(String),
}

fn solve_one(solver: &Solver, text: &str, target: &Target, opts: &SolveOptions) -> Outcome {
    let (start, target) = match problem(text, target) {
        Ok(p) => p,
        Err(out) => return out,
    };
    match solver.solve(&start, &target, opts) {
        Ok(algs) => Outcome::Solved(algs),
        Err(SolverError::Invalid(e)) => Outcome::Invalid("start", e),
        Err(SolverError::InvalidTarget(e)) => Outcome::Invalid("target", e),
        Err(e @ (SolverError::DifferentColours { .. } | SolverError::DifferentSizes { .. })) => {
            Outcome::Mismatched(e.to_string())
        }
        Err(SolverError::NoSolution { limit, timed_out }) => Outcome::No(format!(
            "no solution within {limit}: {}",
            if timed_out {
                "give the search longer with --timeout, or allow longer solutions with --max-length"
            } else {
                "allow longer solutions with --max-length"
            }
        )),
        // Not "no solution": one exists, only the proof of optimality is out of reach.
        Err(e @ SolverError::OptimalOutOfReach) => {
            Outcome::No(format!("{e}; leave out --all-optimal for a short solution"))
        }
        Err(e) => Outcome::No(format!("no solution: {e}")),
    }
}

/// The start and the target of one state's problem, or the outcome that ends it before any
/// search (checked before the tables are loaded).
fn problem(text: &str, target: &Target) -> Result<(FaceletCube, FaceletCube), Outcome> {
    let start = validate(text).map_err(|e| Outcome::Invalid("start", e))?;
    let target = target
        .for_start(&start)
        .map_err(|e| Outcome::No(format!("no solution: {e}")))?;
    Ok((start, target))
}

/// Prints one state's outcome; says how it answers (an unreadable state, or start and target
/// that cannot be one problem, is malformed input).
fn print_outcome(g: &Global, state: &str, out: &Outcome, metric: Metric, one_line: bool) -> Answer {
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
            if !g.json && !g.quiet && algs.iter().all(|a| a.is_empty()) {
                errln!("note: already at the target: no moves (an empty solution)");
            }
            Answer::Yes
        }
        Outcome::Invalid(what, e) => {
            print_invalid(g, state, what, e);
            if e.is_unreadable() {
                Answer::BadInput
            } else {
                Answer::No
            }
        }
        Outcome::No(msg) => {
            if g.json {
                json_line(&json!({"type": "no-solution", "state": state, "message": msg}));
            } else {
                outln!("{msg}");
            }
            Answer::No
        }
        Outcome::Mismatched(msg) => {
            if g.json {
                json_line(&json!({"type": "error", "state": state, "message": msg}));
            } else {
                outln!("error: {msg}");
            }
            Answer::BadInput
        }
    }
}

pub fn solve(a: SolveArgs, g: &Global) -> CmdResult {
    let target = if let Some(t) = &a.target {
        let text = single_state(t)?;
        // `--target solved` is the solved cube of each start's size, as the default is.
        if text.trim().eq_ignore_ascii_case("solved") {
            Target::Solved
        } else {
            match validate(&text) {
                Ok(c) => Target::State(c),
                Err(e) => {
                    print_invalid(g, &text, "target", &e);
                    return if e.is_unreadable() {
                        Answer::BadInput.exit()
                    } else {
                        Ok(Exit::No)
                    };
                }
            }
        }
    } else if let Some(m) = &a.target_moves {
        Target::Moves(Alg::parse(m).with_context(|| format!("cannot read --target-moves {m:?}"))?)
    } else {
        Target::Solved
    };
    // Every cube is within 20 face turns (htm) or 26 quarter turns (qtm) of any other: at
    // those lengths a solution exists and the two-phase search finds one in seconds.
    let reachable = match a.metric {
        Metric::Htm => 20,
        Metric::Qtm => 26,
    };
    let max_length = a.max_length.unwrap_or(reachable);
    let timeout = match a.timeout {
        Some(ms) => Some(ms),
        None if max_length < reachable => {
            if !g.quiet {
                errln!(
                    "note: at most {} ({}) may be shorter than some cubes need; the search stops after {} s without one (--timeout MS to change)",
                    super::output::plural(max_length as usize, "move"),
                    a.metric,
                    UNREACHABLE_BOUND_MS / 1000
                );
            }
            Some(UNREACHABLE_BOUND_MS)
        }
        None => None,
    };
    let opts = SolveOptions {
        max_length,
        timeout: timeout.map(Duration::from_millis),
        solutions: a.solutions as usize,
        metric: a.metric,
        keep_searching: a.keep_searching,
        all_optimal: a.all_optimal,
    };
    let source = state_arg(&a.state)?;
    // A single state that is no problem is said before the tables load (up to 20 s).
    if let States::One(text) = &source {
        if let Err(out) = problem(text, &target) {
            return print_outcome(g, text, &out, opts.metric, false).exit();
        }
    }
    let solver = load_solver(g)?;
    match source {
        States::One(text) => {
            let out = with_slow_note(g, &opts, || solve_one(&solver, &text, &target, &opts));
            print_outcome(g, &text, &out, opts.metric, false).exit()
        }
        States::File(_, states) => {
            let mut all = Answer::Yes;
            for (_, text) in states {
                let out = solve_one(&solver, &text, &target, &opts);
                all = all.and(print_outcome(g, &text, &out, opts.metric, true));
            }
            all.exit()
        }
        States::Stdin => solve_batch(g, &solver, &target, &opts),
    }
}

/// `solve -`: states from stdin in chunks of 256 solved in parallel, the answers printed
/// in input order, one line per state.
fn solve_batch(g: &Global, solver: &Solver, target: &Target, opts: &SolveOptions) -> CmdResult {
    let mut lines = super::input::stdin_lines();
    let mut all = Answer::Yes;
    loop {
        let mut chunk = Vec::with_capacity(256);
        for line in lines.by_ref() {
            if let Some(s) = super::input::state_of_line(&line?) {
                chunk.push(s.to_string());
                if chunk.len() == 256 {
                    break;
                }
            }
        }
        if chunk.is_empty() {
            break;
        }
        let outs: Vec<Outcome> = chunk
            .par_iter()
            .map(|s| solve_one(solver, s, target, opts))
            .collect();
        for (s, o) in chunk.iter().zip(&outs) {
            all = all.and(print_outcome(g, s, o, opts.metric, true));
        }
        std::io::stdout().flush().ok();
        if stdout_gone() {
            // Nobody reads the answers any more (`| head`): stop solving.
            break;
        }
    }
    all.exit()
}

/// The time bound of a search whose `--max-length` may be out of reach, when no
/// `--timeout` is given.
const UNREACHABLE_BOUND_MS: u64 = 60_000;

/// How long a one-state search without `--timeout` runs before `solve` says so on stderr.
const SLOW_NOTE_AFTER: Duration = Duration::from_secs(3);

/// Runs `work` (one state's search); if it takes longer than [`SLOW_NOTE_AFTER`] and no
/// time limit was given, says on stderr (unless `--quiet`) that the search goes on and
/// how to bound it. Without a time limit the length limit is at least every cube's
/// distance (a shorter one gets a time bound up front), so a solution exists and the note
/// says only that the search is slow, never that there may be none. Batches (`solve -`)
/// get no note: a chunk of states takes seconds anyway, so its time says nothing about
/// any one search.
fn with_slow_note<T>(g: &Global, opts: &SolveOptions, work: impl FnOnce() -> T) -> T {
    if g.quiet || opts.timeout.is_some() {
        return work();
    }
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let (max, metric) = (opts.max_length, opts.metric);
    let watcher = std::thread::spawn(move || {
        if wait.recv_timeout(SLOW_NOTE_AFTER) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
            errln!(
                "note: still searching after {} s; every cube has a solution of at most \
                 {max} moves ({metric}), and this one is slow to find (--timeout MS bounds \
                 the search)",
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
        TablesWhat::Build { force } => tables_build(g, force),
        TablesWhat::Verify => tables_verify(g),
        TablesWhat::Path => tables_path(g),
    }
}

/// `tables build`: loads (or rebuilds) the tables and says how long it took.
fn tables_build(g: &Global, force: bool) -> CmdResult {
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

/// `tables verify`: one line per cached table file; exit 1 if one is not usable.
fn tables_verify(g: &Global) -> CmdResult {
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
    if !ok && !g.json && !g.quiet {
        errln!("next: `cubot tables build` builds the missing and bad ones again (11–20 s)");
    }
    Ok(if ok { Exit::Ok } else { Exit::No })
}

/// `tables path`: the cache directory, then every table file in it.
fn tables_path(g: &Global) -> CmdResult {
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
