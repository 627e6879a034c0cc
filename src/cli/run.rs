//! `run`, `save`, `restore`, `bench robot`: thin layers over `robot::pipeline`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

use super::{CmdResult, Exit, Global};
use crate::color::resolve::ResolveOptions;
use crate::color::synth::Palette;
use crate::cube::{Alg, FaceletCube, Size};
use crate::robot::journal;
use crate::robot::line::{LineRobot, LineTimeouts};
use crate::robot::mindcub3r::cost::CostModel;
use crate::robot::mindcub3r::planner::Planner;
use crate::robot::pipeline::{
    self, LineRun, RunError, RunEvent, RunOptions, RunReport, RunRobot, Services, TargetSpec,
};
use crate::robot::sim::line::{self as line_sim, LineSimConfig};
use crate::solver::costed::{CostedOptions, SequenceCost};
use crate::solver::{SolveOptions, Solver, TableOptions};

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RobotKind {
    /// LEGO EV3 MindCub3r (EV3 direct commands).
    Mindcub3r,
    /// A line-protocol robot (one motor per face, or five).
    Line,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScannerKind {
    /// The robot's own colour sensor(s).
    Sensor,
    /// A fixed camera looking at the top face (the simulator renders frames).
    Camera,
}

/// How to reach the robot, shared by `run`, `save` and `restore`.
#[derive(clap::Args, Debug, Clone)]
pub struct RobotOpts {
    /// Start the simulated robot in this process, on a pseudo-terminal.
    #[arg(long, conflicts_with = "port")]
    pub sim: bool,
    /// The robot's serial port (EV3 Bluetooth rfcomm tty, Arduino USB serial).
    #[arg(long, value_name = "PATH")]
    pub port: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "mindcub3r")]
    pub robot: RobotKind,
    #[arg(long, value_enum, default_value = "sensor")]
    pub scanner: ScannerKind,
    /// Cube colour profile (TOML from `cubot calibrate`), used as the resolver's prior.
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// MindCub3r calibration (default: calibration/mindcub3r.toml if present).
    #[arg(long, value_name = "FILE")]
    pub robot_config: Option<PathBuf>,
    /// Simulator fault injection: comma list of `KIND[@N]` (see `cubot sim --help`).
    #[arg(long, value_name = "SPEC")]
    pub faults: Option<String>,
    /// Seed of the simulated cube, its colours and the resolver.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Simulated seconds per wall second.
    #[arg(long, default_value_t = 20.0)]
    pub speed: f64,
    /// Sticker palette of the simulated cube (standard, no-white, fluorescent, faded).
    #[arg(long, default_value = "standard")]
    pub palette: String,
    /// Cube size: 3 or 2.
    #[arg(long, default_value_t = 3)]
    pub size: u8,
    /// Re-scans of doubtful stickers before giving up.
    #[arg(long, default_value_t = 3)]
    pub max_rescans: usize,
    /// MindCub3r, 3x3x3: milliseconds of robot-cost search for solutions that are cheap
    /// for the robot (not merely short), on top of the solver's candidates (0: off).
    #[arg(long, default_value_t = 1500, value_name = "MS")]
    pub search_ms: u64,
}

/// Where the run is journaled and what the solver is asked, shared by `run` and `restore`.
#[derive(clap::Args, Debug, Clone)]
pub struct ExecuteOpts {
    /// Where to write the journal (default: the cache dir's journals/).
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// Solutions asked of the solver (per variant of the problem); the robot executes the
    /// one its planner finds cheapest.
    #[arg(long, default_value_t = 100)]
    pub solutions: usize,
    /// Longest solution considered (face turns).
    #[arg(long, default_value_t = 21)]
    pub max_length: u32,
}

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub robot: RobotOpts,
    /// Target state (facelet string in the first scan's symbols, or @FILE); solved when absent.
    #[arg(long, conflicts_with = "target_file")]
    pub target: Option<String>,
    /// Target from a file: a state saved by `cubot save`, or a facelet string.
    #[arg(long, value_name = "FILE")]
    pub target_file: Option<PathBuf>,
    /// Finish the run a journal records (no re-scan).
    #[arg(long, value_name = "JOURNAL")]
    pub resume: Option<PathBuf>,
    #[command(flatten)]
    pub execute: ExecuteOpts,
    /// Also solve the 48 whole-cube symmetric variants of the problem.
    #[arg(long)]
    pub symmetries: bool,
}

#[derive(clap::Args, Debug)]
pub struct SaveArgs {
    /// Where to store the state (JSON).
    pub file: PathBuf,
    #[command(flatten)]
    pub robot: RobotOpts,
}

#[derive(clap::Args, Debug)]
pub struct RestoreArgs {
    /// A state stored by `cubot save`.
    pub file: PathBuf,
    #[command(flatten)]
    pub robot: RobotOpts,
    #[command(flatten)]
    pub execute: ExecuteOpts,
}

fn size_of(n: u8) -> Result<Size> {
    Size::from_n(n as usize).ok_or_else(|| anyhow!("--size is 3 or 2, not {n}"))
}

fn cache_dir(g: &Global) -> Option<PathBuf> {
    g.cache_dir
        .clone()
        .or_else(|| std::env::var_os("CUBOT_CACHE_DIR").map(PathBuf::from))
        .or_else(|| dirs::cache_dir().map(|d| d.join("cubot")))
}

fn default_journal(g: &Global) -> PathBuf {
    let stamp = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
    cache_dir(g)
        .unwrap_or_else(std::env::temp_dir)
        .join("journals")
        .join(format!("run-{stamp}-{}.jsonl", std::process::id()))
}

fn load_solver(g: &Global) -> Result<Solver> {
    let bar = progress_bar(g, "tables");
    let progress: Option<crate::solver::ProgressFn> = bar.clone().map(|b| {
        let f: crate::solver::ProgressFn = Arc::new(move |label: &str, done: u64, total: u64| {
            b.set_length(total);
            b.set_position(done);
            b.set_message(label.to_string());
        });
        f
    });
    let solver = Solver::new(&TableOptions {
        cache_dir: g.cache_dir.clone(),
        progress,
        rebuild: false,
    })
    .context("solver tables")?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if !g.quiet {
        for n in solver.notes() {
            eprintln!("note: {n}");
        }
    }
    Ok(solver)
}

fn progress_bar(g: &Global, what: &str) -> Option<indicatif::ProgressBar> {
    if !super::output::progress_allowed(g) {
        return None;
    }
    let b = indicatif::ProgressBar::new(1);
    b.set_style(
        indicatif::ProgressStyle::with_template("{prefix:>10} [{bar:30}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    b.set_prefix(what.to_string());
    Some(b)
}

fn resolve_options(o: &RobotOpts) -> Result<ResolveOptions> {
    let mut opts = ResolveOptions {
        seed: o.seed,
        ..Default::default()
    };
    if let Some(p) = &o.calibration {
        opts.profile = Some(
            crate::color::profile::Profile::load(p)
                .map_err(|e| anyhow!("{e}"))
                .with_context(|| format!("colour profile {}", p.display()))?,
        );
    }
    Ok(opts)
}

/// The robot, connected (and its simulator started when `--sim`).
fn connect(
    o: &RobotOpts,
    start: Option<FaceletCube>,
    stop: &Arc<AtomicBool>,
) -> Result<Box<dyn RunRobot>> {
    let size = size_of(o.size)?;
    let palette: Palette = o.palette.parse().map_err(|e| anyhow!("--palette: {e}"))?;
    if !o.sim && o.port.is_none() {
        bail!("give --sim (the built-in simulator) or --port PATH (the robot's serial port)");
    }
    #[cfg(not(feature = "vision"))]
    if o.scanner == ScannerKind::Camera {
        bail!("--scanner camera reads camera frames: cubot was rebuilt without feature `vision`");
    }
    let camera = o.scanner == ScannerKind::Camera;
    match o.robot {
        RobotKind::Line => {
            let mut sim = None;
            let path = if o.sim {
                let faults = match &o.faults {
                    Some(f) => line_sim::parse_faults(f)?,
                    None => Vec::new(),
                };
                let h = line_sim::spawn_pty(LineSimConfig {
                    seed: o.seed,
                    speed: o.speed,
                    faults,
                    start,
                    size,
                    palette,
                    ..Default::default()
                })?;
                let p = h.path().to_path_buf();
                sim = Some(h);
                p
            } else {
                o.port.clone().expect("checked")
            };
            let link = crate::robot::link::open(&path, if o.sim { None } else { Some(115_200) })?;
            let mut robot = LineRobot::connect(link, LineTimeouts::default())?;
            if o.sim {
                robot.time_scale = o.speed.max(1e-3);
            }
            let run = LineRun {
                robot,
                sim,
                chunk: 4,
            };
            #[cfg(feature = "vision")]
            if camera {
                use super::run_camera::{CameraRun, Presenter};
                return Ok(Box::new(CameraRun::new(
                    Presenter::Line(Box::new(run)),
                    palette,
                    o.seed,
                )));
            }
            Ok(Box::new(run))
        }
        RobotKind::Mindcub3r => {
            let run = connect_mindcub3r(o, size, palette, start, stop)?;
            #[cfg(feature = "vision")]
            if camera {
                use super::run_camera::{CameraRun, Presenter};
                return Ok(Box::new(CameraRun::new(
                    Presenter::Mc3(run),
                    palette,
                    o.seed,
                )));
            }
            let _ = camera;
            Ok(run as Box<dyn RunRobot>)
        }
    }
}

#[cfg(feature = "serial")]
fn connect_mindcub3r(
    o: &RobotOpts,
    size: Size,
    palette: Palette,
    start: Option<FaceletCube>,
    stop: &Arc<AtomicBool>,
) -> Result<Box<pipeline::Mc3Run>> {
    use crate::robot::mindcub3r::{Config, MindCub3r};
    use crate::robot::sim::{self, SimConfig};
    let config = match &o.robot_config {
        Some(p) => Config::load(p)?,
        None => {
            let p = Path::new("calibration/mindcub3r.toml");
            if p.is_file() {
                Config::load(p)?
            } else {
                Config::default()
            }
        }
    };
    let mut handle = None;
    let path = if o.sim {
        let faults: sim::Faults = match &o.faults {
            Some(f) => f.parse()?,
            None => Default::default(),
        };
        let h = sim::spawn_pty(SimConfig {
            seed: o.seed,
            speed: o.speed,
            palette,
            faults,
            start,
            size,
            ..Default::default()
        })?;
        let p = h.path().to_path_buf();
        handle = Some(h);
        p
    } else {
        o.port.clone().expect("checked")
    };
    let link = crate::robot::link::open(&path, if o.sim { None } else { Some(115_200) })?;
    let timings = config.timings.clone();
    let mut robot = MindCub3r::connect(link, config)?;
    robot.set_interrupt(stop.clone());
    robot.home()?;
    let planner = Planner::new(CostModel::new(timings));
    Ok(Box::new(pipeline::Mc3Run::new(robot, handle, planner)))
}

#[cfg(not(feature = "serial"))]
fn connect_mindcub3r(
    _o: &RobotOpts,
    _size: Size,
    _palette: Palette,
    _start: Option<FaceletCube>,
    _stop: &Arc<AtomicBool>,
) -> Result<Box<pipeline::Mc3Run>> {
    bail!("the MindCub3r needs serial ports: cubot was rebuilt without feature `serial` (the line robot works without it)")
}

/// Shared state for event printing.
struct Reporter {
    json: bool,
    quiet: bool,
    scan_bar: Option<indicatif::ProgressBar>,
    exec_bar: Option<indicatif::ProgressBar>,
}

impl Reporter {
    fn new(g: &Global) -> Reporter {
        Reporter {
            json: g.json,
            quiet: g.quiet,
            scan_bar: progress_bar(g, "scan"),
            exec_bar: progress_bar(g, "execute"),
        }
    }

    fn event(&mut self, e: RunEvent) {
        match &e {
            RunEvent::ScanProgress { done, total } => {
                if let Some(b) = &self.scan_bar {
                    b.set_length(*total as u64);
                    b.set_position(*done as u64);
                }
                return;
            }
            RunEvent::Executing {
                done,
                total,
                robot_seconds,
            } => {
                if let Some(b) = &self.exec_bar {
                    b.set_length(*total as u64);
                    b.set_position(*done as u64);
                    b.set_message(format!("{robot_seconds:.1} s"));
                }
                return;
            }
            RunEvent::Scanned { .. } => {
                if let Some(b) = &self.scan_bar {
                    b.finish_and_clear();
                }
            }
            RunEvent::Verifying { .. } => {
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
                RunEvent::Scanned {
                    confident,
                    doubtful,
                    rescans,
                    state,
                } => eprintln!(
                    "scanned: {state} ({}{})",
                    if confident { "confident" } else { "not confident" },
                    if doubtful.is_empty() && rescans == 0 {
                        String::new()
                    } else {
                        format!(", {rescans} re-scans, still doubtful: {doubtful:?}")
                    }
                ),
                RunEvent::Solved {
                    candidates,
                    shortest,
                } => eprintln!("solved: {candidates} candidate solutions, shortest {shortest} moves"),
                RunEvent::Planned {
                    solution,
                    face_turns,
                    actions,
                    robot_seconds,
                    baseline_seconds,
                } => eprintln!(
                    "plan: {solution} ({face_turns} face turns, {actions} robot actions, {robot_seconds:.1} s{})",
                    baseline_seconds
                        .map(|b| format!("; per-move table on the first solution: {b:.1} s"))
                        .unwrap_or_default()
                ),
                RunEvent::Verifying { by } => eprintln!("verifying by {by}"),
                _ => {}
            }
        }
    }
}

fn install_ctrlc(stop: &Arc<AtomicBool>) {
    let s = stop.clone();
    // A second handler cannot be installed; ignore (the first one sets the same flag).
    let _ = ctrlc::set_handler(move || s.store(true, Ordering::SeqCst));
}

fn report(g: &Global, r: &RunReport) -> Exit {
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
        out.push_str(&format!(
            "solution     {} ({} face turns)",
            r.solution, r.face_turns
        ));
        out.push('\n');
        out.push_str(&format!(
            "robot time   {:.1} s planned{}",
            r.robot_seconds,
            r.baseline_seconds
                .map(|b| format!(" (per-move table on the first solution: {b:.1} s)"))
                .unwrap_or_default()
        ));
        out.push('\n');
        out.push_str(&format!("actions      {}", r.actions));
        out.push('\n');
        out.push_str(&format!(
            "scan         {}{}",
            if r.scan_confident {
                "confident"
            } else {
                "not confident"
            },
            if r.rescans > 0 {
                format!(", {} re-scans", r.rescans)
            } else {
                String::new()
            }
        ));
        out.push('\n');
        out.push_str(&format!("verified by  {}", r.verified_by));
        out.push('\n');
        out.push_str(&format!("journal      {}", r.journal.display()));
        out.push('\n');
        let _ = std::io::stdout().lock().write_all(out.as_bytes());
    }
    if r.reached_target {
        Exit::Ok
    } else {
        Exit::No
    }
}

/// Prints where the cube is and exits 2 (the last JSON line must be the interruption).
fn interrupted(g: &Global, e: &RunError) -> ! {
    if let RunError::Interrupted {
        reason,
        journal,
        state,
        robot_state,
        steps,
        seconds,
    } = e
    {
        if g.json {
            super::output::json_line(&serde_json::json!({
                "type": "interrupted",
                "journal": journal,
                "state": state,
                "robot_state": robot_state,
                "steps": steps,
                "robot_seconds": seconds,
                "reason": reason,
            }));
        }
        eprintln!("error: {e}");
    }
    let _ = std::io::stdout().flush();
    std::process::exit(2)
}

fn outcome(g: &Global, r: Result<RunReport, RunError>) -> CmdResult {
    match r {
        Ok(r) => Ok(report(g, &r)),
        Err(e @ RunError::Interrupted { .. }) => interrupted(g, &e),
        Err(e) if e.is_no() => {
            if g.json {
                super::output::json_line(
                    &serde_json::json!({"type": "no", "message": e.to_string()}),
                );
            }
            eprintln!("{e}");
            Ok(Exit::No)
        }
        Err(e) => Err(anyhow!(e)),
    }
}

/// Runs `f` with the pipeline's services built from the options.
fn with_services<T>(
    g: &Global,
    o: &RobotOpts,
    max_length: u32,
    f: impl FnOnce(&Services) -> T,
) -> Result<T> {
    let solver = load_solver(g)?;
    with_solver(&solver, o, max_length, f)
}

fn with_solver<T>(
    solver: &Solver,
    o: &RobotOpts,
    max_length: u32,
    f: impl FnOnce(&Services) -> T,
) -> Result<T> {
    let ropts = resolve_options(o)?;
    let resolve = pipeline::resolve_with(ropts);
    let solve = move |s: &FaceletCube, t: &FaceletCube, n: usize| -> Result<Vec<Alg>, String> {
        solver
            .solve(
                s,
                t,
                &SolveOptions {
                    solutions: n,
                    max_length,
                    timeout: Some(Duration::from_secs(10)),
                    ..Default::default()
                },
            )
            .map_err(|e| e.to_string())
    };
    let search = Duration::from_millis(o.search_ms);
    let costed = move |s: &FaceletCube,
                       t: &FaceletCube,
                       cost: &SequenceCost,
                       bound: Option<f64>|
          -> Result<Vec<Alg>, String> {
        solver
            .solve_costed(
                s,
                t,
                cost,
                &CostedOptions {
                    time_limit: search,
                    bound,
                    ..CostedOptions::default()
                },
            )
            .map(|o| o.solutions.into_iter().map(|s| s.alg).collect())
            .map_err(|e| e.to_string())
    };
    let services = Services {
        resolve: &resolve,
        solve: &solve,
        solve_costed: (o.search_ms > 0).then_some(&costed as &pipeline::CostedFn),
    };
    Ok(f(&services))
}

fn target_spec(a: &RunArgs) -> Result<Option<TargetSpec>> {
    if let Some(t) = &a.target {
        return Ok(Some(TargetSpec::State(super::input::single_state(t)?)));
    }
    if let Some(p) = &a.target_file {
        let text =
            std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
        if text.trim_start().starts_with('{') {
            return Ok(Some(TargetSpec::Saved(pipeline::read_saved(p)?)));
        }
        let first = text.lines().next().unwrap_or("").trim().to_string();
        return Ok(Some(TargetSpec::State(first)));
    }
    Ok(None)
}

/// The pipeline's options for `run` (and `restore`, and `run --resume`).
fn run_options(
    a: &RunArgs,
    size: Size,
    target: Option<TargetSpec>,
    journal: PathBuf,
    stop: &Arc<AtomicBool>,
) -> RunOptions {
    RunOptions {
        size,
        target,
        solutions: a.execute.solutions,
        symmetries: a.symmetries,
        mirror: a.symmetries,
        inverse: true,
        max_rescans: a.robot.max_rescans,
        journal,
        stop: stop.clone(),
    }
}

pub fn run(a: RunArgs, g: &Global) -> CmdResult {
    let stop = Arc::new(AtomicBool::new(false));
    install_ctrlc(&stop);
    let journal_path = a
        .execute
        .journal
        .clone()
        .unwrap_or_else(|| default_journal(g));
    if let Some(jpath) = &a.resume {
        return resume(&a, g, jpath, journal_path, stop);
    }
    let size = size_of(a.robot.size)?;
    let target = target_spec(&a)?;
    let opts = run_options(&a, size, target, journal_path, &stop);
    let mut robot = connect(&a.robot, None, &stop)?;
    let mut rep = Reporter::new(g);
    let r = with_services(g, &a.robot, a.execute.max_length, |s| {
        pipeline::run(robot.as_mut(), s, &opts, &mut |e| rep.event(e))
    })?;
    outcome(g, r)
}

fn resume(
    a: &RunArgs,
    g: &Global,
    jpath: &Path,
    journal_path: PathBuf,
    stop: Arc<AtomicBool>,
) -> CmdResult {
    let rec = journal::read(jpath)?;
    if rec.ended == Some(true) {
        eprintln!("note: the journal's run already reached its target; checking again");
    }
    let pos = pipeline::resume_position(&rec).map_err(|e| anyhow!(e))?;
    let size = pos.cube.size();
    let mut ropts = a.robot.clone();
    ropts.size = size.n() as u8;
    ropts.robot = match rec.start.robot.as_str() {
        "line" => RobotKind::Line,
        _ => RobotKind::Mindcub3r,
    };
    // The simulator starts from the cube the journal left.
    let start = ropts.sim.then(|| rec.state.clone());
    // Carry on in the same journal unless told otherwise.
    let journal = if a.execute.journal.is_some() {
        journal_path
    } else {
        jpath.to_path_buf()
    };
    let opts = run_options(a, size, None, journal, &stop);
    let mut robot = connect(&ropts, start, &stop)?;
    let mut rep = Reporter::new(g);
    let colors = rec.start.colors.clone();
    let r = with_services(g, &ropts, a.execute.max_length, |s| {
        pipeline::finish(
            robot.as_mut(),
            s,
            &pos,
            &opts,
            &colors,
            true,
            0,
            true,
            &mut |e| rep.event(e),
        )
    })?;
    outcome(g, r)
}

pub fn save(a: SaveArgs, g: &Global) -> CmdResult {
    let stop = Arc::new(AtomicBool::new(false));
    install_ctrlc(&stop);
    let size = size_of(a.robot.size)?;
    let mut robot = connect(&a.robot, None, &stop)?;
    let mut rep = Reporter::new(g);
    let calibration = serde_json::json!({
        "robot": robot.kind(),
        "scanner": format!("{:?}", a.robot.scanner).to_lowercase(),
        "profile": a.robot.calibration,
        "robot_config": a.robot.robot_config,
    });
    let r = with_services(g, &a.robot, 20, |s| {
        pipeline::save(
            robot.as_mut(),
            s,
            size,
            a.robot.max_rescans,
            calibration,
            &mut |e| rep.event(e),
        )
    })?;
    match r {
        Ok(saved) => {
            let text = serde_json::to_string_pretty(&saved)?;
            std::fs::write(&a.file, text + "\n")
                .with_context(|| format!("cannot write {}", a.file.display()))?;
            if g.json {
                super::output::json_line(&serde_json::json!({
                    "type": "saved", "file": a.file, "state": saved.state, "saved": saved.saved,
                }));
            } else {
                let _ = writeln!(std::io::stdout().lock(), "{}", saved.state);
                if !g.quiet {
                    eprintln!("saved to {}", a.file.display());
                }
            }
            Ok(Exit::Ok)
        }
        Err(e) if e.is_no() => {
            eprintln!("{e}");
            Ok(Exit::No)
        }
        Err(e) => Err(anyhow!(e)),
    }
}

pub fn restore(a: RestoreArgs, g: &Global) -> CmdResult {
    let args = RunArgs {
        robot: a.robot,
        target: None,
        target_file: Some(a.file),
        resume: None,
        execute: a.execute,
        symmetries: false,
    };
    run(args, g)
}

#[derive(clap::Args, Debug)]
pub struct BenchRobotArgs {
    /// Seeded random cubes to plan.
    #[arg(long, default_value_t = 200)]
    pub cubes: usize,
    #[arg(long, default_value_t = 2026)]
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
    /// Palettes for the end-to-end runs.
    #[arg(long, default_value = "standard,faded")]
    pub palettes: String,
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
    #[arg(long, default_value_t = 1000)]
    pub search_ms: u64,
    /// Robot-cost search: node budget per cube (deterministic whatever the load).
    #[arg(long)]
    pub search_nodes: Option<u64>,
    /// Robot-cost search: longest solution considered.
    #[arg(long, default_value_t = 24)]
    pub search_max_length: u32,
}

fn timings(path: Option<&Path>) -> Result<crate::robot::mindcub3r::model::Timings> {
    use crate::robot::mindcub3r::Config;
    let p = path.unwrap_or(Path::new("calibration/mindcub3r.toml"));
    Ok(if path.is_some() || p.is_file() {
        Config::load(p)?.timings
    } else {
        Config::default().timings
    })
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

fn bench_plan(a: &BenchRobotArgs, g: &Global) -> Result<()> {
    use crate::robot::mindcub3r::cost::{Arm, RobotState};
    use crate::robot::mindcub3r::model::{Orientation, Primitive};
    use crate::robot::mindcub3r::planner::{greedy, Plan};
    use rand::SeedableRng;
    let solver = load_solver(g)?;
    let t = timings(a.robot_config.as_deref())?;
    let plain = CostModel::plain(t.clone());
    let planner = Planner::new(CostModel::new(t));
    // The orientation the MindCub3r scan leaves the cube in (mechanics doc §6.1).
    let mut o = Orientation::IDENTITY;
    for step in crate::robot::mindcub3r::scan_steps() {
        for p in step {
            o = o.after(p);
        }
    }
    let start = RobotState {
        orientation: o,
        arm: Arm::Away,
        turntable: 0,
    };
    let automaton = planner.sequence_cost(start);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(a.seed);
    let solved = FaceletCube::solved(Size::Three);

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
    let (mut base, mut many, mut costed) = (Sum::default(), Sum::default(), Sum::default());
    let (mut cand_total, mut nodes, mut complete, mut improved) = (0usize, 0u64, 0usize, 0usize);
    let bar = progress_bar(g, "plan");
    if let Some(b) = &bar {
        b.set_length(a.cubes as u64);
    }
    let t0 = std::time::Instant::now();
    let syms = crate::robot::symmetry::Symmetry::all(true);
    // Every plan is checked: executing its primitives must solve the cube.
    let check = |i: usize, cube: &FaceletCube, p: &Plan, what: &str| -> Result<()> {
        let mut robot = crate::robot::mindcub3r::frames::to_robot(cube, &start.orientation);
        crate::robot::mindcub3r::frames::apply_primitives(&mut robot, &p.primitives);
        if !robot.is_solved() {
            bail!("cube {i}: the {what} plan does not solve the cube");
        }
        Ok(())
    };
    for i in 0..a.cubes {
        let cube = crate::cube::random_state(Size::Three, &mut rng);
        let t1 = std::time::Instant::now();
        let first = solver
            .solve(&cube, &solved, &SolveOptions::default())
            .map_err(|e| anyhow!("cube {i}: {e}"))?;
        let first = first
            .into_iter()
            .next()
            .ok_or_else(|| anyhow!("cube {i}: no solution"))?;
        let b = greedy(&first, start, &plain)?;
        check(i, &cube, &b, "baseline")?;
        base.add(b.seconds, &b, t1.elapsed().as_secs_f64());

        // The length-driven candidates: N shortest solutions (+ the inverse problem).
        let t1 = std::time::Instant::now();
        let solve = |s: &FaceletCube, tg: &FaceletCube, n: usize| -> Result<Vec<Alg>, String> {
            solver
                .solve(
                    s,
                    tg,
                    &SolveOptions {
                        solutions: n,
                        max_length: a.max_length,
                        ..Default::default()
                    },
                )
                .map_err(|e| e.to_string())
        };
        let mut cands = if a.solutions > 0 {
            crate::robot::mindcub3r::frames::candidates(
                &cube,
                &solved,
                &syms[..a.symmetries.min(syms.len())],
                true,
                a.solutions,
                &solve,
            )
            .map_err(|e| anyhow!("cube {i}: {e}"))?
        } else {
            Vec::new()
        };
        if !cands.contains(&first) {
            cands.push(first.clone());
        }
        cand_total += cands.len();
        let (_, p) = planner.choose_screened(&cands, start, 32)?;
        let many_solve = t1.elapsed().as_secs_f64();
        check(i, &cube, &p, "candidate")?;
        many.add(plain.run(start, &p.primitives)?.1, &p, many_solve);

        // The robot-cost search, bounded by that plan, then the same exact DP.
        let t1 = std::time::Instant::now();
        let out = solver
            .solve_costed(
                &cube,
                &solved,
                &automaton,
                &CostedOptions {
                    max_length: a.search_max_length,
                    time_limit: Duration::from_millis(a.search_ms),
                    max_nodes: a.search_nodes,
                    bound: Some(p.seconds),
                    solutions: 8,
                },
            )
            .map_err(|e| anyhow!("cube {i}: {e}"))?;
        nodes += out.nodes;
        complete += usize::from(out.complete);
        let mut all: Vec<Alg> = out.solutions.iter().map(|s| s.alg.clone()).collect();
        all.push(p.alg.clone());
        let (chosen, q) = planner.choose(&all, start)?;
        improved += usize::from(chosen + 1 < all.len());
        check(i, &cube, &q, "costed")?;
        costed.add(
            plain.run(start, &q.primitives)?.1,
            &q,
            many_solve + t1.elapsed().as_secs_f64(),
        );
        if let Some(b) = &bar {
            b.inc(1);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
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
    let rows = [
        row(
            "baseline: first <=20 two-phase solution + per-move table".into(),
            &base,
        ),
        row(
            format!(
                "N shortest solutions (N={}, <={}) + inverse, orientation DP",
                a.solutions, a.max_length
            ),
            &many,
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
            &costed,
        ),
    ];
    let ratio = costed.seconds / base.seconds.max(1e-9);
    let ratio_many = many.seconds / base.seconds.max(1e-9);
    // What no planner can beat on these timings (a counting bound, see
    // `SequenceCost::floor_for_random`): the 3x3x3 has 43,252,003,274,489,856,000 positions.
    // Priced as the simulator's clock counts (no backlash estimate) and with half turns
    // allowed either way: a relaxation of every plan the robot could execute.
    let relaxed = Planner::new(CostModel {
        both_half_directions: true,
        ..plain.clone()
    });
    // Valid only while a half turn is no dearer than two quarter turns (see
    // `SequenceCost::floor_for_random`).
    let floor = (plain.timings.turn_half <= 2.0 * plain.timings.turn_quarter)
        .then(|| {
            relaxed
                .sequence_cost(start)
                .floor_for_random(43_252_003_274_489_856_000u128 as f64, 0.01)
        })
        .flatten();
    if g.json {
        for r in &rows {
            super::output::json_line(r);
        }
        super::output::json_line(&serde_json::json!({
            "type": "bench-robot-ratio", "ratio": ratio, "reduction": 1.0 - ratio,
            "ratio_candidates_only": ratio_many,
            "mean_candidates": cand_total as f64 / n,
            "mean_search_nodes": nodes as f64 / n,
            "searches_complete": complete, "search_improved": improved,
            "wall_seconds": t0.elapsed().as_secs_f64(),
        }));
        if let Some(floor) = floor {
            super::output::json_line(&serde_json::json!({
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
             complete {complete}; {} cubes in {:.1} s",
            100.0 * (1.0 - ratio),
            cand_total as f64 / n,
            nodes as f64 / n,
            a.cubes,
            a.cubes,
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
    palette: &str,
    seed: u64,
    journal: PathBuf,
) -> E2eOutcome {
    let o = RobotOpts {
        sim: true,
        port: None,
        robot: a.robot,
        scanner: a.scanner,
        calibration: None,
        robot_config: a.robot_config.clone(),
        faults: None,
        seed,
        speed: 5000.0,
        palette: palette.to_string(),
        size: 3,
        max_rescans: 3,
        search_ms: 0,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let opts = RunOptions {
        size: Size::Three,
        target: None,
        solutions: 2,
        symmetries: false,
        mirror: false,
        inverse: true,
        max_rescans: 3,
        journal,
        stop: stop.clone(),
    };
    let mut robot = match connect(&o, None, &stop) {
        Ok(r) => r,
        Err(e) => return E2eOutcome::Failed(format!("{e:#}")),
    };
    let r = match with_solver(solver, &o, 21, |s| {
        pipeline::run(robot.as_mut(), s, &opts, &mut |_| {})
    }) {
        Ok(r) => r,
        Err(e) => return E2eOutcome::Failed(format!("{e:#}")),
    };
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

/// `bench robot --runs N`: seeded end-to-end runs per palette, `--jobs` at a time (a run
/// mostly waits on its simulator, so more jobs than cores pay), every miss named by seed.
fn bench_e2e(a: &BenchRobotArgs, g: &Global, solver: &Solver) -> Result<()> {
    use std::sync::atomic::AtomicUsize;
    let dir = tempfile_dir()?;
    let jobs = a.jobs.max(1);
    for palette in a
        .palettes
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        palette
            .parse::<Palette>()
            .map_err(|e| anyhow!("--palettes: {e}"))?;
        let started = std::time::Instant::now();
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
                    let out = e2e_once(a, solver, palette, seed, journal.clone());
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
                super::output::json_line(&serde_json::json!({
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
            super::output::json_line(&v);
        } else {
            outln!(
                "end to end, {palette} (seeds {}..{}): {ok}/{} reached the target ({:.2}%), {not_reached} not reached, {no} refused (ambiguous/invalid scan), {failed} failed; success reported on a cube not at the target: {false_success}  [{secs:.0} s, {jobs} jobs]",
                a.seed,
                a.seed.wrapping_add(a.runs.saturating_sub(1) as u64),
                a.runs,
                100.0 * ok as f64 / a.runs.max(1) as f64
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

/// `cubot sim --robot line --pty`: the line-protocol simulator, served until killed.
pub fn sim_line(
    a: &super::robot::SimArgs,
    palette: Palette,
    start: Option<FaceletCube>,
    size: Size,
    g: &Global,
) -> CmdResult {
    let faults = line_sim::parse_faults(&a.faults)?;
    let handle = line_sim::spawn_pty(LineSimConfig {
        seed: a.seed,
        speed: a.speed,
        faults,
        start,
        size,
        palette,
        ..Default::default()
    })?;
    super::robot::announce_sim(g, "line", handle.path(), &handle.initial_cube())?;
    loop {
        std::thread::sleep(Duration::from_millis(200));
    }
}
