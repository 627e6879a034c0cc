//! `run`, `save`, `restore`: thin layers over `job` (arguments → job → print).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};

use super::args::{BrickArg, SizeArg};
use super::common::progress_bar;
use super::connect::{connect, stop_on_ctrlc, ConnectArgs, DEFAULT_SIM_SPEED};
use super::input::StateFile;
use super::view::{Live, LiveOptions, ViewArgs};
use super::{CmdResult, Exit, Global};
use crate::color::resolve::ResolveOptions;
use crate::input::FileKind;
use crate::job::{
    self, journal, RunError, RunEvent, RunOptions, RunReport, SavedState, TargetSpec, Tools,
};
use crate::solver::costed::CostedOptions;
use crate::solver::Solver;

/// How scans are resolved, shared by `run`, `save` and `restore`.
#[derive(clap::Args, Debug, Clone)]
pub struct ScanOpts {
    /// Cube colour profile (TOML from `cubot calibrate`), used as the resolver's prior.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// Re-reads of the doubtful stickers (per whole scan) before giving up; a doubt too wide
    /// to be a few stickers, or readings no legal cube fits, get a whole new scan instead
    /// (twice at most; none with 0).
    #[arg(long, default_value_t = 3)]
    pub max_rescans: usize,
    /// When re-scans leave a doubt, go on with the resolver's most likely legal cube (a
    /// run executes it and checks the result) instead of stopping with exit 1.
    #[arg(long)]
    pub best_effort: bool,
}

/// Where the run is journaled and what the solver is asked, shared by `run` and `restore`.
#[derive(clap::Args, Debug, Clone)]
pub struct ExecuteOpts {
    /// Where to write the journal (default: the cache dir's journals/).
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// Solutions asked of the solver (per variant of the problem); the robot executes the
    /// one its planner finds cheapest.
    #[arg(long, default_value_t = 100, value_parser = super::args::at_least_one)]
    pub solutions: u64,
    /// Longest solution considered (face turns) [default: 21 for the solver's candidates,
    /// 24 for the robot-cost search].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=30))]
    pub max_length: Option<u32>,
    /// MindCub3r, 3x3x3: milliseconds of robot-cost search for solutions that are cheap
    /// for the robot (not merely short), on top of the solver's candidates (0: off).
    #[arg(long, allow_negative_numbers = true, default_value_t = 1500, value_name = "MS", value_parser = super::args::millis)]
    pub search_ms: u64,
    /// Robot-cost search on a node budget instead of `--search-ms` (deterministic whatever
    /// the machine's load).
    #[arg(long, value_name = "N")]
    pub search_nodes: Option<u64>,
    /// Rounds of execute-and-check at most: when the check after executing finds the cube
    /// off the target (a misread), it is solved again from what the check saw.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub max_rounds: u32,
}

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,
    #[command(flatten)]
    pub scan: ScanOpts,
    /// Target state (facelet string in the first scan's symbols, or @FILE); solved when
    /// absent (or `solved`).
    #[arg(long, conflicts_with = "target_file")]
    pub target: Option<String>,
    /// Target from a file: a state saved by `cubot save`, or a facelet string.
    #[arg(long, value_name = "FILE")]
    pub target_file: Option<PathBuf>,
    /// Finish the run a journal records, from the cube it left: a few stickers are read
    /// to tell which state the robot holds (a full scan only when none fits); a finished
    /// run's cube is checked again. `latest`: the newest run (an older one is named by its
    /// file, as `cubot journals` lists them).
    #[arg(long, value_name = "JOURNAL")]
    pub resume: Option<PathBuf>,
    #[command(flatten)]
    pub execute: ExecuteOpts,
    /// Also solve the 48 whole-cube symmetric variants of the problem.
    #[arg(long)]
    pub symmetries: bool,
    #[command(flatten)]
    pub view: ViewArgs,
}

#[derive(clap::Args, Debug)]
pub struct SaveArgs {
    /// Where to store the state (JSON).
    pub file: PathBuf,
    #[command(flatten)]
    pub connect: ConnectArgs,
    #[command(flatten)]
    pub scan: ScanOpts,
    #[command(flatten)]
    pub view: ViewArgs,
}

#[derive(clap::Args, Debug)]
pub struct RestoreArgs {
    /// A state stored by `cubot save`.
    pub file: PathBuf,
    #[command(flatten)]
    pub connect: ConnectArgs,
    #[command(flatten)]
    pub scan: ScanOpts,
    #[command(flatten)]
    pub execute: ExecuteOpts,
    #[command(flatten)]
    pub view: ViewArgs,
}

fn default_journal(g: &Global) -> PathBuf {
    let stamp = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
    super::journals::journal_dir(g).join(format!("run-{stamp}-{}.jsonl", std::process::id()))
}

/// The resolver's options: seeded like the simulator, with the colour profile if given.
pub(super) fn resolve_options(seed: u64, profile: Option<&Path>) -> Result<ResolveOptions> {
    let mut opts = ResolveOptions {
        seed,
        ..Default::default()
    };
    if let Some(p) = profile {
        opts.profile = Some(super::color::load_profile(p)?);
    }
    Ok(opts)
}

/// The resolver's options, checked against the scanner before anything moves: a colour
/// profile learned on another scale than the robot's scanner reads is refused here.
fn checked_resolve_options(connect: &ConnectArgs, scan: &ScanOpts) -> Result<ResolveOptions> {
    let mut opts = resolve_options(connect.seed, scan.profile.as_deref())?;
    opts.best_effort = scan.best_effort;
    let (robot, scanner) = (connect.robot.into(), connect.scanner.into());
    if let Some(scale) = job::connect::scan_scale(robot, scanner) {
        // Named by its flag and file, before anything moves.
        job::scan::check_profile(&opts, scale, robot, scanner).map_err(|e| {
            let file = scan.profile.as_deref().unwrap_or(Path::new("?"));
            anyhow!("--profile {}: {e}; nothing moved", file.display())
        })?;
    }
    Ok(opts)
}

/// Longest candidate solution asked of the solver when `--max-length` is not given.
pub(super) const DEFAULT_MAX_LENGTH: u32 = 21;

/// The solver, the resolver's options and the search budget of a run.
fn tools<'a>(solver: &'a Solver, a: &RunArgs, resolve: ResolveOptions) -> Tools<'a> {
    let e = &a.execute;
    let search = match (e.search_nodes, e.search_ms) {
        (Some(nodes), _) => Some(CostedOptions {
            // The node budget binds; the clock only guards against a runaway search.
            time_limit: Duration::from_secs(3600),
            max_nodes: Some(nodes),
            ..CostedOptions::default()
        }),
        (None, 0) => None,
        (None, ms) => Some(CostedOptions {
            time_limit: Duration::from_millis(ms),
            ..CostedOptions::default()
        }),
    };
    // An explicit --max-length bounds every solution, the robot-cost search's too.
    let search = search.map(|s| CostedOptions {
        max_length: e.max_length.unwrap_or(s.max_length),
        ..s
    });
    Tools {
        solver,
        resolve,
        max_length: e.max_length.unwrap_or(DEFAULT_MAX_LENGTH),
        search,
    }
}

fn target_spec(a: &RunArgs) -> Result<Option<TargetSpec>> {
    if let Some(t) = &a.target {
        // `solved`, as `show` and `apply` take it: the default target.
        if t == "solved" {
            return Ok(None);
        }
        if let Some(path) = t.strip_prefix('@') {
            return file_target(Path::new(path), "--target @", FileKind::States).map(Some);
        }
        return Ok(Some(TargetSpec::State(super::input::single_state(t)?)));
    }
    if let Some(p) = &a.target_file {
        return file_target(p, "--target-file ", FileKind::Target).map(Some);
    }
    Ok(None)
}

/// The target a file holds (`--target @FILE` and `--target-file` read it alike): a state
/// saved by `cubot save` keeps its colours, to be matched to the scan's by their Lab
/// values; a file of states must hold one.
fn file_target(path: &Path, flag: &str, kind: FileKind) -> Result<TargetSpec> {
    match super::input::read_state_file(path, kind)? {
        StateFile::Saved(saved) => Ok(TargetSpec::Saved(saved)),
        StateFile::Lines(mut states) if states.len() == 1 => {
            Ok(TargetSpec::State(states.remove(0).1))
        }
        StateFile::Lines(states) => anyhow::bail!(
            "{flag}{}: holds {} states; a target file holds one (a facelet string, or a state saved by `cubot save`)",
            path.display(),
            states.len()
        ),
    }
}

/// The job's options for `run` (and `restore`, and `run --resume`).
fn run_options(
    a: &RunArgs,
    size: crate::cube::Size,
    target: Option<TargetSpec>,
    journal: PathBuf,
    stop: &Arc<AtomicBool>,
) -> RunOptions {
    RunOptions {
        size,
        target,
        solutions: a.execute.solutions as usize,
        symmetries: a.symmetries,
        mirror: a.symmetries,
        inverse: true,
        max_rescans: a.scan.max_rescans,
        max_rounds: a.execute.max_rounds as usize,
        journal,
        stop: stop.clone(),
        page_stop: Some(super::connect::page_stop()),
        connection: sim_connection(&a.connect),
    }
}

/// What a journal keeps of a simulated run's set-up (the simulated cube's seed and
/// palette, and the brick when it is LEGO's firmware), so that a `--sim` resume simulates
/// the same cube on the same brick.
fn sim_connection(c: &ConnectArgs) -> serde_json::Value {
    if !c.sim {
        return serde_json::Value::Null;
    }
    let mut sim = serde_json::json!({"seed": c.seed, "palette": value_name(c.palette)});
    if c.brick.brick != BrickArg::Ours {
        sim["brick"] = value_name(c.brick.brick).into();
    }
    serde_json::json!({ "simulator": sim })
}

/// The command that runs a journal's run again when it stopped before anything turned:
/// its robot and size, and a simulated run's seed and palette (the same simulated cube)
/// at the speed the refused resume was given;
/// a robot's port as the user gives it.
fn run_again_command(begun: &journal::JournalBegun, connect: &ConnectArgs) -> String {
    let mut w = vec!["cubot run".to_string()];
    if begun.robot == "line" {
        w.push("--robot line".into());
    }
    if begun.size == crate::cube::Size::Two {
        w.push("--size 2".into());
    }
    match journal_sim(&begun.connection) {
        Some(JournalSim {
            seed,
            palette,
            brick,
        }) => {
            w.push("--sim".into());
            if brick != BrickArg::Ours {
                w.push(format!("--brick {}", value_name(brick)));
            }
            if let Some(seed) = seed {
                w.push(format!("--seed {seed}"));
            }
            match palette {
                Some(p) if p != super::args::PaletteArg::Standard => {
                    w.push(format!("--palette {}", value_name(p)))
                }
                _ => {}
            }
            // As fast as the resume that was refused was asked to run.
            w.push(format!("--speed {}", connect.speed));
        }
        None => {
            w.push("--port PORT".into());
            return format!("the command that started it (`{} ...`)", w.join(" "));
        }
    }
    format!("`{}`", w.join(" "))
}

/// A value's name as its option takes it (`--palette no-white`, `--brick lms2012`).
fn value_name(v: impl clap::ValueEnum) -> String {
    v.to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}

/// The simulator a journal's run was connected to (its `connection`), each part when
/// recorded: `None` for a run on a port.
struct JournalSim {
    seed: Option<u64>,
    palette: Option<super::args::PaletteArg>,
    /// Recorded only for LEGO's firmware brick: cubot's own otherwise.
    brick: BrickArg,
}

fn journal_sim(connection: &serde_json::Value) -> Option<JournalSim> {
    use clap::ValueEnum;
    let sim = connection.get("simulator")?;
    let word = |key: &str| sim.get(key).and_then(serde_json::Value::as_str);
    Some(JournalSim {
        seed: sim.get("seed").and_then(serde_json::Value::as_u64),
        palette: word("palette").and_then(|p| super::args::PaletteArg::from_str(p, true).ok()),
        brick: word("brick")
            .and_then(|b| BrickArg::from_str(b, true).ok())
            .unwrap_or_default(),
    })
}

/// A `--sim` resume simulates the journal's cube: its seed and palette unless given (and
/// said), a given one that differs is warned of.
fn sim_from_journal(c: &mut ConnectArgs, start: &journal::JournalStart, g: &Global) {
    let Some(JournalSim {
        seed,
        palette,
        brick,
    }) = journal_sim(&start.connection).filter(|_| c.sim)
    else {
        return;
    };
    let mut taken = Vec::new();
    let mut differ = Vec::new();
    // The brick is taken as the journal's run had it, or a given one said to differ (the
    // same cube either way: only the motor driver differs).
    if !super::given("brick") {
        c.brick.brick = brick;
        if brick != BrickArg::Ours {
            taken.push(format!("--brick {}", value_name(brick)));
        }
    } else if c.brick.brick != brick {
        errln!(
            "note: --brick {} (the journal's run: {}): the same simulated cube, on another brick",
            value_name(c.brick.brick),
            value_name(brick)
        );
    }
    if let Some(seed) = seed {
        if !super::given("seed") {
            c.seed = seed;
            taken.push(format!("--seed {seed}"));
        } else if c.seed != seed {
            differ.push(format!("--seed {} (the journal's run: {seed})", c.seed));
        }
    }
    if let Some(p) = palette {
        if !super::given("palette") {
            c.palette = p;
            taken.push(format!("--palette {}", value_name(p)));
        } else if c.palette != p {
            differ.push(format!(
                "--palette {} (the journal's run: {})",
                value_name(c.palette),
                value_name(p)
            ));
        }
    }
    if !differ.is_empty() {
        errln!(
            "note: the simulator differs from the journal's run: {}; it holds the journal's cube but reads it otherwise (the seed sets the sensor's noise and the stickers' wear, the palette their colours): the resume reads a few stickers, goes on if they show the journal's cube, and refuses it (exit 1, nothing turned) if they show other colours (a palette that differs only in stickers it does not read goes unseen)",
            differ.join(", ")
        );
    }
    if !taken.is_empty() && !g.quiet {
        errln!("simulator: {}, as in the journal's run", taken.join(" "));
    }
}

/// The live page of a command that connects to a robot (`--view`): Stop does what Ctrl-C
/// does; a simulator's time runs `--speed` times the robot's.
fn live(
    view: &ViewArgs,
    g: &Global,
    connect: &ConnectArgs,
    stop: &Arc<AtomicBool>,
) -> Result<Live> {
    Live::start(
        view,
        g,
        LiveOptions {
            stop: Some(stop.clone()),
            time_scale: if connect.sim { connect.speed } else { 1.0 },
            ..LiveOptions::default()
        },
    )
}

pub fn run(a: RunArgs, g: &Global) -> CmdResult {
    let stop = stop_on_ctrlc();
    let live = live(&a.view, g, &a.connect, &stop)?;
    let r = run_live(&a, g, stop, &live);
    live.ended(&r);
    r
}

fn run_live(a: &RunArgs, g: &Global, stop: Arc<AtomicBool>, live: &Live) -> CmdResult {
    let journal_path = a
        .execute
        .journal
        .clone()
        .unwrap_or_else(|| default_journal(g));
    if let Some(jpath) = &a.resume {
        let jpath = if jpath.as_os_str() == "latest" && !jpath.exists() {
            let latest = super::journals::latest(g)?;
            if !g.quiet {
                errln!("resuming {}", latest.display());
            }
            latest
        } else {
            super::journals::named(g, jpath)
        };
        return resume(a, g, &jpath, journal_path, stop, live);
    }
    let size = a.connect.size.into();
    // Everything that can be checked is checked before the robot moves.
    if let Some(j) = &a.execute.journal {
        super::outfile::check_output(
            j,
            "--journal",
            super::outfile::Writes::File(crate::input::FileKind::Journal),
        )?;
        // A stopped run's journal is the only record of where its cube is: not overwritten.
        if let Ok(rec) = journal::read(j) {
            if rec.ended.is_none() {
                anyhow::bail!(
                    "--journal {}: it holds a run that did not finish (the only record of where its cube is): resume it with `{}`, or give another --journal",
                    j.display(),
                    journal_resume_command(a, Some(&rec), j)
                );
            }
        }
    }
    let target = target_spec(a)?;
    if let Some(t) = &target {
        if let Err(e) = job::check_spec(t, size) {
            // A readable target that is not a legal cube is a well-formed "no" (exit 1),
            // as `solve --target` answers it; anything else about it is bad input.
            if let job::TargetError::Invalid(invalid) = &e {
                if !invalid.is_unreadable() {
                    let state = match t {
                        job::TargetSpec::State(s) => s.as_str(),
                        job::TargetSpec::Saved(saved) => saved.state.as_str(),
                    };
                    super::solve::print_invalid(g, state, "target", invalid);
                    errln!("nothing turned: the target is not a cube that can be reached");
                    return Ok(Exit::No);
                }
            }
            let unreadable = matches!(e, job::TargetError::Unreadable { .. });
            let hint = a
                .target
                .as_deref()
                .filter(|_| unreadable)
                .and_then(super::input::file_hint)
                .map(|h| format!(" ({h}, or --target-file FILE for a saved target)"))
                .unwrap_or_default();
            return Err(anyhow!("bad target: {e}{hint}"));
        }
    }
    let resolve = checked_resolve_options(&a.connect, &a.scan)?;
    super::connect::set_resume_hint(
        &journal_path,
        resume_command(&a.connect, &a.scan, &journal_path),
    );
    let opts = run_options(a, size, target, journal_path, &stop);
    live.phase("connect and home");
    let mut robot = connect_unturned(g, a, &a.connect, None, &stop, &Turned::Before(false))?;
    let mut rep = Reporter::new(g);
    rep.stop = Some(stop.clone());
    let solver = super::connect::load_solver_standing_still(g, false)?;
    let tools = tools(&solver, a, resolve);
    rep.searching = searches(&a.connect, &tools);
    let r = job::run(robot.as_mut(), &tools, &opts, &mut |e| {
        live.event(&e);
        rep.event(e)
    });
    let r = stop_note(robot.as_mut(), r);
    outcome(g, r, a, &a.connect, Turned::Before(rep.turning), live)
}

/// The flags that define a job, which a resumed run takes from its journal: one given
/// anyway is refused before anything connects (a `--robot` or `--size` the journal holds
/// too is harmless and taken).
fn refuse_journal_flags(a: &RunArgs, start: &journal::JournalStart) -> Result<()> {
    let cannot = |flag: &str, holds: &str| {
        anyhow!("{flag} cannot change a journal's run: the journal holds its {holds}. To resume it, leave out {flag}; for another {}, start a new run (without --resume)", holds.split(" (").next().unwrap_or(holds))
    };
    if super::given("target") {
        return Err(cannot("--target", "target"));
    }
    if super::given("target_file") {
        return Err(cannot("--target-file", "target"));
    }
    let robot: super::args::RobotKind = job::RobotKind::from_journal(&start.robot).into();
    if super::given("robot") && a.connect.robot != robot {
        return Err(cannot("--robot", &format!("robot ({})", start.robot)));
    }
    let size: crate::cube::Size = a.connect.size.into();
    if super::given("size") && size != start.size {
        return Err(cannot("--size", &format!("cube's size ({})", start.size)));
    }
    Ok(())
}

fn resume(
    a: &RunArgs,
    g: &Global,
    jpath: &Path,
    journal_path: PathBuf,
    stop: Arc<AtomicBool>,
    live: &Live,
) -> CmdResult {
    // Held to the end: a second resume of this journal meanwhile is refused, and so is
    // one of a run under way (before its journal is read half written).
    let _lock = match jpath.is_file() {
        true => Some(journal::lock(jpath)?),
        false => None,
    };
    let rec = match journal::read(jpath) {
        Err(journal::JournalError::NothingTurned {
            path,
            begun,
            reason,
        }) => anyhow::bail!(
            "journal {}: its run (begun {}) stopped before anything turned{}: there is nothing to resume; run it again: {}{}",
            path.display(),
            begun.created,
            reason
                .map(|r| format!(" ({})", super::journals::gist(&r)))
                .unwrap_or_default(),
            run_again_command(&begun, &a.connect),
            older_resumable(a, g)
        ),
        r => r?,
    };
    refuse_journal_flags(a, &rec.start)?;
    if rec.ended == Some(true) {
        errln!(
            "note: the journal's run already reached its target; checking again{}",
            older_resumable(a, g)
        );
    }
    let size = rec.start.size;
    let mut connect_args = a.connect.clone();
    connect_args.size = match size {
        crate::cube::Size::Two => SizeArg::Two,
        _ => SizeArg::Three,
    };
    connect_args.robot = job::RobotKind::from_journal(&rec.start.robot).into();
    if !connect_args.sim
        && connect_args.port.is_none()
        && rec.start.connection.get("simulator").is_some()
    {
        anyhow::bail!(
            "the journal {}'s run was on the simulator: resume it with --sim (`cubot run --resume {} --sim`: the journal's seed and palette); nothing moved",
            jpath.display(),
            shell_word(jpath)
        );
    }
    sim_from_journal(&mut connect_args, &rec.start, g);
    // A simulator started here starts from the journal's last confirmed cube (one started
    // on its own, behind --port, keeps whatever cube it has).
    let sim_start = connect_args.sim.then(|| rec.state.clone());
    // Carry on in the same journal; with --journal, in a copy of it there.
    let journal = match &a.execute.journal {
        Some(_) if journal_path != jpath => {
            std::fs::copy(jpath, &journal_path).with_context(|| {
                format!("cannot copy the journal to {}", journal_path.display())
            })?;
            journal_path
        }
        _ => jpath.to_path_buf(),
    };
    let resolve = checked_resolve_options(&connect_args, &a.scan)?;
    super::connect::set_resume_hint(&journal, resume_command(&connect_args, &a.scan, &journal));
    let opts = run_options(a, size, None, journal.clone(), &stop);
    live.phase("connect and home");
    let mut robot = connect_unturned(
        g,
        a,
        &connect_args,
        sim_start,
        &stop,
        &Turned::Resuming {
            turned: false,
            journal: journal.clone(),
        },
    )?;
    let mut rep = Reporter::new(g);
    rep.stop = Some(stop.clone());
    let solver = super::connect::load_solver_standing_still(g, true)?;
    let tools = tools(&solver, a, resolve);
    rep.searching = searches(&connect_args, &tools);
    let r = job::resume(robot.as_mut(), &tools, &rec, &opts, &mut |e| {
        live.event(&e);
        rep.event(e)
    });
    let r = stop_note(robot.as_mut(), r);
    outcome(
        g,
        r,
        a,
        &connect_args,
        Turned::Resuming {
            turned: rep.turning,
            journal,
        },
        live,
    )
}

pub fn save(a: SaveArgs, g: &Global) -> CmdResult {
    super::outfile::check_output(
        &a.file,
        "save",
        super::outfile::Writes::File(crate::input::FileKind::Target),
    )?;
    let stop = stop_on_ctrlc();
    let live = live(&a.view, g, &a.connect, &stop)?;
    let r = save_live(&a, g, &stop, &live).map_err(super::connect::scan_stopped);
    live.ended(&r);
    r
}

fn save_live(a: &SaveArgs, g: &Global, stop: &Arc<AtomicBool>, live: &Live) -> CmdResult {
    let size = a.connect.size.into();
    let resolve = checked_resolve_options(&a.connect, &a.scan)?;
    live.phase("connect and home");
    let mut robot = connect(&a.connect, None, stop)?;
    let mut rep = Reporter::new(g);
    let calibration = serde_json::json!({
        "robot": robot.kind(),
        "scanner": format!("{:?}", a.connect.scanner).to_lowercase(),
        "profile": a.scan.profile,
        "robot_config": a.connect.robot_config,
    });
    let r = job::save(
        robot.as_mut(),
        &resolve,
        size,
        a.scan.max_rescans,
        calibration,
        &mut |e| {
            live.event(&e);
            rep.event(e)
        },
    );
    match r {
        Ok(saved) => {
            live.text(&format!("saved {} to {}", saved.state, a.file.display()));
            saved_state(g, &a.file, &saved)
        }
        Err(e) if e.is_no() => {
            live.text(&e.to_string());
            errln!("{e}");
            Ok(Exit::No)
        }
        Err(e) => Err(anyhow!(e)),
    }
}

/// Writes a saved state and says so.
fn saved_state(g: &Global, file: &Path, saved: &SavedState) -> CmdResult {
    let text = serde_json::to_string_pretty(saved)?;
    std::fs::write(file, text + "\n")
        .with_context(|| format!("cannot write {}", file.display()))?;
    if g.json {
        super::output::json_line(&serde_json::json!({
            "type": "saved", "file": file, "state": saved.state, "saved": saved.saved,
        }));
    } else {
        let _ = writeln!(std::io::stdout().lock(), "{}", saved.state);
        if !g.quiet {
            errln!("saved to {}", file.display());
        }
    }
    Ok(Exit::Ok)
}

pub fn restore(a: RestoreArgs, g: &Global) -> CmdResult {
    let args = RunArgs {
        connect: a.connect,
        scan: a.scan,
        target: None,
        target_file: Some(a.file),
        resume: None,
        execute: a.execute,
        symmetries: false,
        view: a.view,
    };
    run(args, g)
}

/// Whether the robot-cost search adds solutions of its own (the MindCub3r's 3x3x3), which
/// may be shorter than the solver's shortest candidate.
fn searches(c: &ConnectArgs, tools: &Tools) -> bool {
    tools.search.is_some()
        && c.robot == super::args::RobotKind::Mindcub3r
        && c.size == SizeArg::Three
}

use super::output::plural;

/// Shared state for event printing.
struct Reporter {
    json: bool,
    quiet: bool,
    scan_bar: Option<indicatif::ProgressBar>,
    exec_bar: Option<indicatif::ProgressBar>,
    /// Scans resolved so far.
    scans: usize,
    /// Whether the scan or the execution under way was announced (no progress bar).
    said_scanning: bool,
    said_executing: bool,
    /// Whether execution began (a layer may have turned).
    turning: bool,
    /// Whether the robot-cost search adds its own solutions to the solver's.
    searching: bool,
    /// Whether the last solve found the cube at its target already (said instead of the
    /// solve and the plan).
    at_target: bool,
    /// The stop flag (Ctrl-C, the live page's Stop): once it is set, what the solver and
    /// the planner found is not said, as nothing of it will be executed.
    stop: Option<Arc<AtomicBool>>,
}

impl Drop for Reporter {
    /// A run that ended part-way (a stop, an error) leaves its bar unfinished: it goes
    /// before the account of the end is said.
    fn drop(&mut self) {
        super::output::clear_bar();
    }
}

impl Reporter {
    fn new(g: &Global) -> Reporter {
        Reporter {
            json: g.json,
            quiet: g.quiet,
            scan_bar: progress_bar(g, "scan"),
            exec_bar: progress_bar(g, "execute"),
            scans: 0,
            said_scanning: false,
            said_executing: false,
            turning: false,
            searching: false,
            at_target: false,
            stop: None,
        }
    }

    /// Whether a stop was asked for.
    fn stopping(&self) -> bool {
        self.stop.as_ref().is_some_and(|s| s.load(Ordering::SeqCst))
    }

    fn event(&mut self, e: RunEvent) {
        if e.is_evidence() {
            return;
        }
        match &e {
            RunEvent::ScanProgress { done, total } => {
                if let Some(b) = &self.scan_bar {
                    super::output::bar_shown(b);
                    b.set_length(*total as u64);
                    b.set_position(*done as u64);
                } else if !self.said_scanning && !self.quiet && !self.json {
                    // Not a terminal: one line says what the wait is for.
                    errln!("scanning: {total} stickers…");
                }
                self.said_scanning = true;
                return;
            }
            RunEvent::Executing {
                done,
                total,
                robot_seconds,
                ..
            } => {
                self.turning = true;
                if let Some(b) = &self.exec_bar {
                    super::output::bar_shown(b);
                    b.set_length(*total as u64);
                    b.set_position(*done as u64);
                    b.set_message(format!("{robot_seconds:.1} s robot time"));
                } else if !self.said_executing && !self.quiet && !self.json {
                    // Counts run over the whole journal: after a resume or in a later round,
                    // `done` starts past the actions confirmed before (the first event
                    // follows one action).
                    let left = (total + 1).saturating_sub(*done);
                    if left < *total {
                        errln!(
                            "executing: {} (the run's {} to {total})…",
                            plural(left, "robot action"),
                            total - left + 1
                        );
                    } else {
                        errln!("executing: {total} robot actions…");
                    }
                }
                self.said_executing = true;
                // With --json each action goes on as its line below: a program that
                // follows the run sees it move, not only its plan and its end.
                if !self.json {
                    return;
                }
            }
            RunEvent::Scanned { .. } => {
                self.scans += 1;
                self.said_scanning = false;
                if let Some(b) = &self.scan_bar {
                    b.finish_and_clear();
                }
            }
            RunEvent::Verifying { .. } => {
                self.said_executing = false;
                if let Some(b) = &self.exec_bar {
                    b.finish_and_clear();
                }
            }
            _ => {}
        }
        if self.json {
            if let Ok(v) = serde_json::to_value(&e) {
                super::output::json_line(&v);
            }
        } else if !self.quiet {
            match e {
                RunEvent::Rereading {
                    rescan,
                    stickers,
                    whole,
                    size,
                } => {
                    let names = crate::cube::Size::from_n(size)
                        .map(|size| crate::color::resolve::facelet_names(&stickers, size))
                        .unwrap_or_default();
                    if whole {
                        errln!(
                            "re-scan {rescan}: {}, more than a few worn stickers (a cube that slipped, a tilt that did not roll it?): scanning the whole cube again…",
                            if stickers.is_empty() {
                                "no legal cube fits the readings".to_string()
                            } else {
                                format!("{} in doubt", plural(stickers.len(), "sticker"))
                            }
                        );
                    } else {
                        errln!(
                            "re-scan {rescan}: reading {} in doubt again ({names})…",
                            plural(stickers.len(), "sticker")
                        );
                    }
                }
                RunEvent::Scanned {
                    confident,
                    doubtful,
                    overruled,
                    rescans,
                    state,
                } => {
                    let size = crate::cube::Size::from_stickers(state.chars().count());
                    let names = size
                        .map(|size| crate::color::resolve::facelet_names(&doubtful, size))
                        .unwrap_or_default();
                    errln!(
                        "scanned: {state} ({}{})",
                        if confident {
                            "confident"
                        } else {
                            "not confident"
                        },
                        if doubtful.is_empty() && rescans == 0 {
                            String::new()
                        } else if doubtful.is_empty() {
                            format!(", {}", plural(rescans, "re-scan"))
                        } else {
                            format!(", {}, still in doubt: {names}", plural(rescans, "re-scan"))
                        }
                    );
                    if let (Some(size), false) = (size, overruled.is_empty()) {
                        errln!("{}", super::color::overruled_note(&overruled, size));
                    }
                    // A check's own doubt is reported with the check.
                    if !confident && self.scans == 1 {
                        errln!("going on with the best guess (--best-effort); the check after execution tells");
                    }
                }
                RunEvent::Solved { .. } | RunEvent::Planned { .. } if self.stopping() => {}
                RunEvent::Solved {
                    candidates,
                    shortest,
                } => {
                    // The solver's shortest is empty only for a cube at its target.
                    self.at_target = shortest == 0;
                    if self.at_target {
                        errln!("solved: the cube is at its target already; nothing turns");
                    } else if candidates == 1 && !self.searching {
                        // One solution and no search: the plan is that solution.
                        errln!(
                            "solved: 1 candidate solution from the solver, {}; the plan turns it",
                            plural(shortest, "face turn")
                        );
                    } else {
                        errln!(
                            "solved: {} from the solver, {}{}; the plan is the cheapest of {} for the robot, not always the fewest turns",
                            plural(candidates, "candidate solution"),
                            if candidates == 1 {
                                plural(shortest, "face turn")
                            } else {
                                format!("the shortest of them {}", plural(shortest, "face turn"))
                            },
                            if self.searching {
                                "; the robot-cost search adds more (some may be shorter)"
                            } else {
                                ""
                            },
                            // The search's own solutions can be shorter than the solver's
                            // shortest.
                            if self.searching { "all of them" } else { "them" }
                        )
                    }
                }
                RunEvent::Planned {
                    face_turns: 0,
                    actions: 0,
                    ..
                } if self.at_target => {}
                RunEvent::Planned {
                    solution,
                    face_turns,
                    actions,
                    robot_seconds,
                    baseline_seconds,
                    ahead,
                } => errln!(
                    "plan: {} ({}, {}, {robot_seconds:.1} s of robot time{}){}",
                    if solution.is_empty() {
                        "nothing to turn"
                    } else {
                        &solution
                    },
                    plural(face_turns, "face turn"),
                    plural(actions, "robot action"),
                    baseline_seconds.map(baseline_words).unwrap_or_default(),
                    if ahead {
                        ", thought out while the last face was read"
                    } else {
                        ""
                    }
                ),
                RunEvent::Verifying { by } => errln!("verifying: {by}"),
                RunEvent::Checked {
                    round,
                    at_target,
                    state,
                    confident,
                    next,
                    reason,
                    ..
                } => {
                    if !at_target {
                        errln!(
                            "check, round {round}: NOT at the target; the cube is {state}{}",
                            if confident == Some(false) {
                                " (the scan is in doubt)"
                            } else {
                                ""
                            }
                        );
                    }
                    match (next.as_str(), reason) {
                        ("replan", _) => {
                            errln!(
                                "solving again from what the check saw (round {})",
                                round + 1
                            )
                        }
                        ("stop", Some(why)) => errln!("stopping: {why}"),
                        _ => {}
                    }
                }
                RunEvent::Resumed {
                    seen,
                    by,
                    decision,
                    candidates,
                    ..
                } => {
                    // A resume plans the rest from the cube it found either way: whether the
                    // journal foresaw that state is what the line tells.
                    let allowed = match candidates {
                        1 => "the state the journal left".to_string(),
                        n => format!(
                            "one of the {n} states the journal allows (actions were in flight)"
                        ),
                    };
                    let verdict = if decision == "continue" {
                        allowed
                    } else {
                        format!("not {allowed}, though in the journal cube's colours (turned by hand since, or another cube of those colours)")
                    };
                    errln!("resume: the cube is {seen} (by {by}): {verdict}; planning the rest from it")
                }
                _ => {}
            }
        }
    }
}

/// Which clock measured the execution: a simulator in this process its own (robot time,
/// though the host's own time between commands counts `--speed` times over on it, which
/// the note says when it shows); over a port this computer's, which is robot time only for
/// a real robot (a simulator on a pty runs at a speed the host does not know). Measured
/// under half the plan over a port, no robot was that fast: the note says what it most
/// likely was.
fn clock_note(sim_speed: Option<f64>, planned: f64, measured: f64) -> String {
    match sim_speed {
        // The simulated robot waits for the host between commands, on its own clock: at a
        // high speed each millisecond the host takes counts that many times over (a lost
        // reply's wait of seconds, hundreds of seconds).
        Some(speed) if speed > DEFAULT_SIM_SPEED && measured > 1.15 * planned => format!(
            " (on the simulator's clock; at --speed {speed} each millisecond this computer takes between commands, or waits for a lost reply, counts {speed} ms there: compare with the plan at --speed {DEFAULT_SIM_SPEED} or less)"
        ),
        Some(_) if measured > SLOW * planned => format!(
            " (on the simulator's clock{})",
            slower(planned, measured, true)
        ),
        Some(_) => " (on the simulator's clock)".into(),
        None if measured < 0.5 * planned => " (on this computer's clock: under half the plan, as a simulator faster than real time (`sim --speed`) gives; a robot's times compare only at speed 1)".into(),
        None if measured > SLOW * planned => format!(
            " (on this computer's clock{})",
            slower(planned, measured, false)
        ),
        None => " (on this computer's clock)".into(),
    }
}

/// Measured over this many times the plan, the clock note says why it may be.
const SLOW: f64 = 1.3;

/// Why a robot took much longer than planned: the plan's timings are another robot's (a
/// MindCub3r's defaults are cubot's simulated brick's; LEGO's motor driver is slower), or
/// replies were lost and waited for. On a simulator faster than real time a wait for a
/// lost reply counts `--speed` times over, so that is named first there.
fn slower(planned: f64, measured: f64, simulated: bool) -> String {
    let (lost, timings) = (
        "lost replies were waited for (each wait of seconds on this computer",
        "its timings are not this robot's (`cubot robot calibrate-timings --write` measures them)",
    );
    let over = 100.0 * (measured / planned - 1.0);
    if simulated {
        format!("; {over:.0} % over the plan: {lost}, times the simulator's speed), or {timings}")
    } else {
        format!("; {over:.0} % over the plan: {timings}, or {lost})")
    }
}

/// The summary of a run that ended (`sim_speed`: the simulator's `--speed`, when `--sim`).
fn report(g: &Global, r: &RunReport, sim_speed: Option<f64>) -> Exit {
    if g.json {
        let mut v = serde_json::to_value(r).unwrap_or_default();
        if let Some(m) = v.as_object_mut() {
            m.insert("type".into(), "summary".into());
        }
        super::output::json_line(&v);
    } else {
        let mut out = String::new();
        out.push_str(if r.reached_target {
            "reached the target"
        } else {
            "NOT at the target"
        });
        out.push('\n');
        out.push_str(&format!("final state  {}", r.final_state));
        out.push('\n');
        out.push_str(&format!("target       {}", r.target));
        out.push('\n');
        if r.solution.is_empty() {
            out.push_str("solution     none (the cube was at its target already)");
        } else {
            out.push_str(&format!(
                "solution     {} ({}{})",
                r.solution,
                plural(r.face_turns, "face turn"),
                if r.resumed {
                    ", from where the resume found the cube"
                } else {
                    ""
                }
            ));
        }
        out.push('\n');
        if r.actions == 0 && r.solution.is_empty() {
            out.push_str("robot time   none (nothing to turn)");
        } else {
            out.push_str(&format!(
                "robot time   {:.1} s planned{}{}",
                r.robot_seconds,
                r.measured_seconds
                    .map(|m| format!(
                        ", {m:.1} s measured{}",
                        clock_note(sim_speed, r.robot_seconds, m)
                    ))
                    .unwrap_or_default(),
                r.baseline_seconds.map(baseline_words).unwrap_or_default()
            ));
        }
        out.push('\n');
        out.push_str(&format!("actions      {}", r.actions));
        // A resume's own actions; the stopped run's before them are in its journal.
        if r.resumed {
            if let Ok(rec) = job::journal::read(&r.journal) {
                out.push_str(&format!(
                    " (this resume; {} in all, as `cubot journals` counts them)",
                    rec.steps
                ));
            }
        }
        out.push('\n');
        out.push_str(&format!(
            "scan         {}{}",
            if r.scan_confident {
                "confident"
            } else {
                "not confident"
            },
            match (r.rescans, r.resumed) {
                (0, false) => String::new(),
                (0, true) => " (the first run's scan)".to_string(),
                (n, false) => format!(", {}", plural(n, "re-scan")),
                (n, true) => format!(", {} (the first run's scan)", plural(n, "re-scan")),
            }
        ));
        out.push('\n');
        out.push_str(&format!("verified by  {}", r.verified_by));
        out.push('\n');
        if r.rounds.len() > 1 || r.stopped.is_some() {
            out.push_str(&format!("rounds       {}", r.rounds.len()));
            if let Some(why) = &r.stopped {
                out.push_str(&format!(" (stopped: {why})"));
            }
            out.push('\n');
            for k in &r.rounds {
                out.push_str(&format!(
                    "  round {}   {} ({} face turns, {:.1} s planned); {} by {}\n",
                    k.round,
                    if k.solution.is_empty() {
                        "-"
                    } else {
                        &k.solution
                    },
                    k.face_turns,
                    k.robot_seconds,
                    if k.at_target {
                        "at the target"
                    } else {
                        "NOT at the target"
                    },
                    k.checked_by
                ));
            }
        }
        out.push_str(&format!("journal      {}", r.journal.display()));
        out.push('\n');
        let _ = std::io::stdout().lock().write_all(out.as_bytes());
        if !r.reached_target && !g.quiet {
            if sim_speed.is_some() {
                // The simulated cube ends with the process: a new run simulates another.
                errln!("next: raise --max-rounds (a new `run --sim` simulates a new cube; on a robot, running again solves from where the cube is)");
            } else {
                errln!("next: run again to solve from where the cube is, or raise --max-rounds");
            }
        }
    }
    if r.reached_target {
        Exit::Ok
    } else {
        Exit::No
    }
}

/// A path as one shell word: as it is when it holds only safe characters, else in
/// single quotes.
fn shell_word(p: &Path) -> String {
    let s = p.display().to_string();
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        s
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The exact command that resumes a stopped run from `journal`: the same connection
/// (`--port PATH` or `--sim` with its seed, palette and speed), scanner, robot
/// configuration and colour profile. The robot and the cube's size come from the journal.
pub fn resume_command(connect: &ConnectArgs, scan: &ScanOpts, journal: &Path) -> String {
    let mut w: Vec<String> = vec!["cubot".into(), "run".into(), "--resume".into()];
    w.push(shell_word(journal));
    if connect.sim {
        w.push("--sim".into());
        if connect.brick.brick != BrickArg::Ours {
            w.push(format!("--brick {}", value_name(connect.brick.brick)));
            if let Some(dir) = &connect.brick.lms2012 {
                w.push(format!("--lms2012 {}", shell_word(dir)));
            }
        }
        w.push(format!("--seed {}", connect.seed));
        if connect.palette != super::args::PaletteArg::Standard {
            w.push(format!("--palette {}", value_name(connect.palette)));
        }
        w.push(format!("--speed {}", connect.speed));
    } else if let Some(p) = &connect.port {
        w.push(format!("--port {}", shell_word(p)));
    }
    if connect.scanner == super::args::ScannerKind::Camera {
        w.push("--scanner camera".into());
    }
    if let Some(c) = &connect.robot_config {
        w.push(format!("--robot-config {}", shell_word(c)));
    }
    if let Some(p) = &scan.profile {
        w.push(format!("--profile {}", shell_word(p)));
    }
    if scan.best_effort {
        w.push("--best-effort".into());
    }
    w.join(" ")
}

/// For `--resume latest` that found the newest run with nothing to resume: the newest older
/// run that can be resumed, named (never taken in its stead: the newest run may have moved
/// the cube or put another in the robot, which the resume then checks).
fn older_resumable(a: &RunArgs, g: &Global) -> String {
    if a.resume.as_deref() != Some(Path::new("latest")) {
        return String::new();
    }
    let dir = super::journals::journal_dir(g);
    let Some(e) = job::journals::list(&dir)
        .ok()
        .and_then(|l| l.into_iter().find(|e| e.state().resumable()))
    else {
        return String::new();
    };
    format!(
        "; or, if the cube in the robot is still where an older run left it, resume that run by name (the resume checks the cube first): {}",
        journal_resume_command(a, e.record.as_ref().ok(), &e.path)
    )
}

/// The command that resumes the journal `path` (its record `rec`): this command's
/// connection, and a simulated run's simulator of its own seed and palette.
fn journal_resume_command(
    a: &RunArgs,
    rec: Option<&journal::JournalRecord>,
    path: &Path,
) -> String {
    let mut connect = a.connect.clone();
    if let Some(sim) = rec.and_then(|r| journal_sim(&r.start.connection)) {
        connect.sim = true;
        connect.seed = sim.seed.unwrap_or(connect.seed);
        connect.palette = sim.palette.unwrap_or(connect.palette);
        connect.brick.brick = sim.brick;
    }
    resume_command(&connect, &a.scan, path)
}

/// Reports a stopped run (where the cube is, and the exact command that resumes it) and
/// exits 2.
fn interrupted(g: &Global, e: &RunError, a: &RunArgs, connect: &ConnectArgs, live: &Live) -> ! {
    if let RunError::Interrupted(i) = e {
        let job::error::Interruption {
            cause,
            journal,
            state,
            robot_state,
            steps,
            of,
            seconds,
            candidates,
            robot_candidates,
            motors_stopped,
        } = i.as_ref();
        let resume = resume_command(connect, &a.scan, journal);
        let mut line = serde_json::json!({
            "type": "interrupted",
            "journal": journal,
            "state": state,
            "robot_state": robot_state,
            "actions": steps,
            "total_actions": of,
            "robot_seconds": seconds,
            "reason": cause.reason(),
            "candidates": candidates,
            "robot_candidates": robot_candidates,
            "motors_stopped": motors_stopped,
            "resume": resume,
        });
        super::connect::last_word(|| {
            if g.json {
                super::output::json_line(&line);
            }
            // A stop the user asked for is the run's account, not an error.
            let head = if super::connect::user_stop(cause).is_some() {
                ""
            } else {
                "error: "
            };
            errln!("{head}{e}");
            errln!("resume with: {resume}");
        });
        line["type"] = "stopped".into();
        live.note(line);
    }
    let _ = std::io::stdout().flush();
    live.end(2, Some(e.to_string()));
    super::view::linger(2);
    std::process::exit(2)
}

/// A robot's failure outside execution (scanning, checking): stop every motor and say
/// whether the robot confirmed it (execution stops say so themselves).
fn stop_note(
    robot: &mut dyn job::RunRobot,
    r: Result<RunReport, RunError>,
) -> Result<RunReport, RunError> {
    use crate::robot::mindcub3r::RobotError;
    match r {
        Err(e @ (RunError::Mindcub3r(_) | RunError::Line(_)))
            if !matches!(e, RunError::Mindcub3r(RobotError::Interrupted { .. })) =>
        {
            let note = match robot.stop() {
                Some(true) => "motors stopped",
                Some(false) => job::error::unconfirmed_stop(&e),
                None => "",
            };
            Err(RunError::Stopping {
                cause: Box::new(e),
                note,
            })
        }
        other => other,
    }
}

/// Whether the run, or the resume under way, had begun turning layers when it ended.
#[derive(Clone)]
enum Turned {
    /// A new run: nothing of it turned unless execution began.
    Before(bool),
    /// A resume: its journal's run turned layers; this resume turned any only if its
    /// execution began.
    Resuming { turned: bool, journal: PathBuf },
}

/// A stop by the user (`stopped` as [`super::connect::user_stop`] gives it) before the run,
/// or the resume, turned a layer: what it left and the command that goes on, said as JSON
/// too; `None` once layers turned (the journal's account says where the cube is).
fn stopped_unturned(
    g: &Global,
    a: &RunArgs,
    connect: &ConnectArgs,
    turned: &Turned,
    why: Why,
) -> Option<anyhow::Error> {
    let head = match why {
        Why::User(stopped) => {
            let motors = super::connect::motors_after_stop(stopped);
            let words = super::connect::stop_words();
            match turned {
                Turned::Before(_) => format!("stopped ({words}) before any layer turned; {motors}"),
                Turned::Resuming { .. } => {
                    format!("stopped ({words}) before this resume turned a layer; {motors}")
                }
            }
        }
        Why::Fault { cause, note } => {
            let held = if cause.held() {
                format!(
                    "; {}",
                    job::error::held_advice(matches!(turned, Turned::Resuming { .. }))
                )
            } else {
                String::new()
            };
            let what = match turned {
                Turned::Before(_) => "no layer turned",
                Turned::Resuming { .. } => "this resume turned no layer",
            };
            let note = if note.is_empty() {
                String::new()
            } else {
                format!("; {note}")
            };
            format!("{cause}{note}; {what}{held}")
        }
    };
    let message = match turned {
        Turned::Before(false) => format!(
            "{head}; the cube is as it was, perhaps turned whole in the tray: run the same command again to start over"
        ),
        Turned::Resuming {
            turned: false,
            journal,
        } => format!(
            "{head}; the cube is where the journal {} left it, perhaps turned whole in the tray (a resume reads it again): resume with: {}",
            journal.display(),
            resume_command(connect, &a.scan, journal)
        ),
        _ => return None,
    };
    if g.json {
        super::output::json_line(&serde_json::json!({
            "type": "stopped", "turned": false, "message": message,
        }));
    }
    Some(match why {
        Why::User(_) => super::connect::user_stopped(message),
        Why::Fault { .. } => anyhow!(message),
    })
}

/// Why a run or resume ended before it turned a layer.
enum Why<'a> {
    /// Ctrl-C or the live page's Stop (`stopped` as [`super::connect::user_stop`] gives it).
    User(Option<bool>),
    /// A robot's failure while it homed, scanned or read stickers; `note` says the motors.
    Fault {
        cause: &'a RunError,
        note: &'static str,
    },
}

/// Connects as [`connect`] does; a stop by the user while it homes is said as
/// [`stopped_unturned`] says it.
fn connect_unturned(
    g: &Global,
    a: &RunArgs,
    connect_args: &ConnectArgs,
    start: Option<crate::cube::FaceletCube>,
    stop: &Arc<AtomicBool>,
    turned: &Turned,
) -> Result<Box<dyn job::RunRobot>> {
    connect(connect_args, start, stop).map_err(|e| {
        match super::connect::stop_in(&e)
            .and_then(|stopped| stopped_unturned(g, a, connect_args, turned, Why::User(stopped)))
        {
            Some(said) => said,
            None => e,
        }
    })
}

/// Says how a run (or a resume) ended, with `connect` (the journal's robot and simulator
/// for a resume) in any resume command it names.
fn outcome(
    g: &Global,
    r: Result<RunReport, RunError>,
    a: &RunArgs,
    connect: &ConnectArgs,
    turned: Turned,
    live: &Live,
) -> CmdResult {
    if let Err(e) = &r {
        let why = match (super::connect::user_stop(e), e) {
            (Some(stopped), _) => Some(Why::User(stopped)),
            (None, RunError::Stopping { cause, note }) => Some(Why::Fault { cause, note }),
            _ => None,
        };
        if let Some(e) = why.and_then(|why| stopped_unturned(g, a, connect, &turned, why)) {
            return Err(e);
        }
    }
    match r {
        Ok(r) => {
            if live.on() {
                let mut v = serde_json::to_value(&r).unwrap_or_default();
                v["type"] = "summary".into();
                live.note(v);
            }
            Ok(report(g, &r, connect.sim.then_some(connect.speed)))
        }
        Err(e @ RunError::Interrupted(_)) => interrupted(g, &e, a, connect, live),
        Err(e) if e.is_no() => {
            live.text(&e.to_string());
            if g.json {
                let mut v = serde_json::json!({"type": "no", "message": e.to_string()});
                if let RunError::Ambiguous {
                    doubtful,
                    rescans,
                    best,
                    margin,
                    ..
                } = &e
                {
                    let names = crate::cube::Size::from_stickers(best.chars().count())
                        .map(|size| crate::color::resolve::facelet_names(doubtful, size))
                        .unwrap_or_default();
                    v["doubt"] = serde_json::json!({
                        "stickers": names.split(' ').filter(|s| !s.is_empty()).collect::<Vec<_>>(),
                        "best_guess": best,
                        "margin": margin,
                        "rescans": rescans,
                    });
                }
                super::output::json_line(&v);
            }
            errln!("{e}");
            Ok(Exit::No)
        }
        Err(e) => Err(anyhow!(e)),
    }
}

/// The plan's baseline in words, for either robot: the solver's first solution turned move
/// by move, as a robot without the planner would turn it.
fn baseline_words(seconds: f64) -> String {
    format!("; {seconds:.1} s for the solver's first solution turned move by move, unplanned")
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_agree_with_their_nouns() {
        assert_eq!(
            super::plural(1, "candidate solution"),
            "1 candidate solution"
        );
        assert_eq!(super::plural(0, "face turn"), "0 face turns");
        assert_eq!(super::plural(18, "face turn"), "18 face turns");
    }

    #[test]
    fn a_robot_much_slower_than_its_plan_is_told_why_it_may_be() {
        use super::clock_note;
        assert_eq!(
            clock_note(Some(20.0), 45.9, 46.7),
            " (on the simulator's clock)"
        );
        // LEGO's motor driver under cubot's brick's timings: 24.1 s planned, 44.1 measured.
        let note = clock_note(Some(20.0), 24.1, 44.1);
        assert!(
            note.starts_with(" (on the simulator's clock; 83 % over the plan: lost replies were waited for (each wait of seconds on this computer, times the simulator's speed), or its timings are not this robot's (`cubot robot calibrate-timings --write` measures them)"),
            "{note}"
        );
        assert!(clock_note(None, 40.0, 60.0)
            .contains("50 % over the plan: its timings are not this robot's"));
        assert_eq!(clock_note(None, 40.0, 41.0), " (on this computer's clock)");
    }
}
