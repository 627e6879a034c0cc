//! The robot connection and simulator options shared by `run`, `save` and `restore`, and
//! the one place that turns options into a connected robot (`job::connect` does the work):
//! a job's robot for `run`/`save`/`restore`/`bench robot`, or a bare MindCub3r brick for
//! `robot ...` and `scan --robot`.
//!
//! Level: `cli`. Depends on [`super::args`] and `job`; no command module is imported here.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{bail, Context, Result};

use super::args::{PaletteArg, RobotKind, ScannerKind, SizeArg};
use super::Global;
use crate::cube::FaceletCube;
use crate::job::{self, ConnectOptions, Link, RunRobot};
use crate::robot::mindcub3r::{Config, MindCub3r};

impl From<RobotKind> for job::RobotKind {
    fn from(k: RobotKind) -> job::RobotKind {
        match k {
            RobotKind::Mindcub3r => job::RobotKind::Mindcub3r,
            RobotKind::Line => job::RobotKind::Line,
        }
    }
}

impl From<job::RobotKind> for RobotKind {
    fn from(k: job::RobotKind) -> RobotKind {
        match k {
            job::RobotKind::Mindcub3r => RobotKind::Mindcub3r,
            job::RobotKind::Line => RobotKind::Line,
        }
    }
}

impl From<ScannerKind> for job::ScannerKind {
    fn from(k: ScannerKind) -> job::ScannerKind {
        match k {
            ScannerKind::Sensor => job::ScannerKind::Sensor,
            ScannerKind::Camera => job::ScannerKind::Camera,
        }
    }
}

/// How to reach the robot (or start its simulator), shared by `run`, `save` and `restore`.
#[derive(clap::Args, Debug, Clone)]
pub struct ConnectArgs {
    /// Start the simulated robot in this process, on a pseudo-terminal.
    #[arg(long, conflicts_with = "port")]
    pub sim: bool,
    /// The robot's port: for the MindCub3r `usb` (or `usb:PATH`), a Bluetooth rfcomm tty or
    /// the brick's name (default: the one EV3 on USB); an Arduino's USB serial port.
    #[arg(long, value_name = "PORT")]
    pub port: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "mindcub3r")]
    pub robot: RobotKind,
    #[arg(long, value_enum, default_value = "sensor")]
    pub scanner: ScannerKind,
    /// MindCub3r configuration (default: calibration/mindcub3r.toml if present).
    #[arg(long, value_name = "FILE")]
    pub robot_config: Option<PathBuf>,
    /// With --sim: fault injection, a comma list as `cubot sim --faults` takes (see its help).
    #[arg(long, value_name = "SPEC")]
    pub faults: Option<String>,
    /// Seed of the simulated cube, its colours and the resolver.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = crate::cli::args::seed)]
    pub seed: u64,
    /// With --sim: simulated seconds per wall second (at most 10000).
    #[arg(long, allow_negative_numbers = true, default_value_t = DEFAULT_SIM_SPEED, value_parser = super::args::sim_speed)]
    pub speed: f64,
    /// With --sim: sticker palette of the simulated cube.
    #[arg(long, value_enum, default_value_t = PaletteArg::Standard)]
    pub palette: PaletteArg,
    /// Cube size.
    #[arg(long, value_enum, default_value_t = SizeArg::Three)]
    pub size: SizeArg,
    /// The serial port's speed in baud (a line robot's USB serial port, a Bluetooth tty).
    #[arg(long, default_value_t = job::connect::SERIAL_BAUD, value_parser = clap::value_parser!(u32).range(300..=4_000_000))]
    pub baud: u32,
    #[command(flatten)]
    pub brick: super::args::BrickArgs,
}

/// The MindCub3r configuration: the file given, else calibration/mindcub3r.toml in the
/// working directory when present, else the built-in defaults (which equal that file).
pub fn robot_config(path: Option<&Path>) -> Result<Config> {
    let default = Path::new("calibration/mindcub3r.toml");
    Ok(match path {
        Some(p) => Config::load(p)?,
        None if default.is_file() => Config::load(default)?,
        None => Config::default(),
    })
}

/// The stop flag that Ctrl-C sets (one for the process: the live page's Stop button sets
/// the same). The robot stops within a second and the run says where the cube is; a second
/// Ctrl-C exits at once (130) without waiting for that (every motion is bounded on the
/// robot, and the journal already names what was in flight).
pub fn stop_on_ctrlc() -> Arc<AtomicBool> {
    STOPPABLE.store(true, Ordering::SeqCst);
    ctrlc_handler()
}

/// Set by [`stop_on_ctrlc`]: the command has something for Ctrl-C to stop (a robot, a
/// page); in any other (a solve) Ctrl-C exits at once, as without a handler.
static STOPPABLE: AtomicBool = AtomicBool::new(false);

/// Installs the one Ctrl-C handler (once) and gives its stop flag.
fn ctrlc_handler() -> Arc<AtomicBool> {
    static STOP: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    STOP.get_or_init(|| {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        // A handler another library installed first cannot be replaced: Ctrl-C then does
        // what it does, and the flag still works for the page's Stop.
        let _ = ctrlc::set_handler(move || {
            if let Some((note, code)) = QUIT_AT_ONCE.lock().ok().and_then(|n| n.clone()) {
                if !note.is_empty() {
                    errln!("{note}");
                }
                super::output::clear_bar();
                std::process::exit(code);
            }
            if !STOPPABLE.load(Ordering::SeqCst) {
                super::output::clear_bar();
                std::process::exit(130);
            }
            if s.swap(true, Ordering::SeqCst) {
                // One account of the end: the command's own, if it is said already (or
                // being said: this waits for it), else this one, held until the exit.
                let said = LAST_WORD.lock().unwrap_or_else(|e| e.into_inner());
                if !*said {
                    errln!("{}", second_ctrlc_note());
                }
                super::output::clear_bar();
                std::process::exit(130);
            } else {
                errln!("stopping: the robot stops when the move under way ends (Ctrl-C again: exit at once)");
            }
        });
        stop
    })
    .clone()
}

/// Set with the stop flag by the live page's Stop button (and only by it), so that a stop
/// is said as the page's rather than Ctrl-C's.
pub fn page_stop() -> Arc<AtomicBool> {
    static PRESSED: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    PRESSED
        .get_or_init(|| Arc::new(AtomicBool::new(false)))
        .clone()
}

/// Who stopped the command, in the user's words: "Ctrl-C" or "Stop on the live page".
pub fn stop_words() -> &'static str {
    job::stop_words(page_stop().load(Ordering::SeqCst))
}

/// Whether a Ctrl-C (or the live page's Stop) ended the job: `Some` of whether the robot
/// confirmed its motors' stop (`None`: it cannot say).
pub fn user_stop(e: &job::RunError) -> Option<Option<bool>> {
    use crate::robot::mindcub3r::RobotError;
    match e {
        job::RunError::Stopped { .. } => Some(None),
        job::RunError::Mindcub3r(RobotError::Interrupted { stopped, .. }) => Some(Some(*stopped)),
        job::RunError::Stopping { cause, .. } => user_stop(cause),
        _ => None,
    }
}

/// Whether an error anywhere in a command's chain of causes is a stop by the user (as
/// [`user_stop`] gives it): one while connecting and homing too.
pub fn stop_in(e: &anyhow::Error) -> Option<Option<bool>> {
    use crate::robot::mindcub3r::RobotError;
    e.chain().find_map(|c| {
        let robot = |r: &RobotError| match r {
            RobotError::Interrupted { stopped, .. } => Some(Some(*stopped)),
            _ => None,
        };
        if let Some(r) = c.downcast_ref::<job::RunError>() {
            user_stop(r)
        } else if let Some(r) = c.downcast_ref::<RobotError>() {
            robot(r)
        } else {
            match c.downcast_ref::<job::ConnectError>() {
                Some(job::ConnectError::Robot(r) | job::ConnectError::Homing { error: r, .. }) => {
                    robot(r)
                }
                _ => None,
            }
        }
    })
}

/// A command's account of a stop the user asked for (Ctrl-C, the live page's Stop): what it
/// left and what next. Said on its own, not as an error (the exit is 2 all the same: the
/// job did not finish).
#[derive(Debug)]
pub struct UserStop(pub String);

impl std::fmt::Display for UserStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UserStop {}

/// A [`UserStop`] saying `message`.
pub fn user_stopped(message: String) -> anyhow::Error {
    anyhow::Error::new(UserStop(message))
}

/// Whether `e` ended the command because the user stopped it (its account, a robot's
/// interruption, or a run stopped part way): then it is said without "error:".
pub fn is_user_stop(e: &anyhow::Error) -> bool {
    stop_in(e).is_some()
        || e.chain().any(|c| {
            c.is::<UserStop>()
                || matches!(
                    c.downcast_ref::<job::RunError>(),
                    Some(job::RunError::Interrupted(i)) if user_stop(&i.cause).is_some()
                )
        })
}

/// The motors after a stop, in words (`stopped` as [`user_stop`] gives it).
pub fn motors_after_stop(stopped: Option<bool>) -> &'static str {
    match stopped {
        Some(false) => job::error::UNCONFIRMED_STOP,
        _ => "motors stopped",
    }
}

/// A Ctrl-C in a command that only scans (`calibrate`, `save`, `robot scan`: they tilt
/// and spin the cube whole, never turn a layer, and write only at the end), said with what
/// it left and the next step; any other error as it is.
pub fn scan_stopped(e: anyhow::Error) -> anyhow::Error {
    match stop_in(&e) {
        Some(stopped) => user_stopped(format!(
            "stopped ({}) before the scan ended; {}; no layer turned (a scan only tilts and spins the cube whole) and nothing was written: run the same command again to start over",
            stop_words(),
            motors_after_stop(stopped)
        )),
        None => e,
    }
}

/// Whether the command's own account of how it ended has been said (see [`last_word`]).
static LAST_WORD: std::sync::Mutex<bool> = std::sync::Mutex::new(false);

/// Says how the command ended (`say`), once: a second Ctrl-C exiting at once meanwhile
/// says nothing more than this, and once it has said its own account this waits for its
/// exit rather than say a second, different one.
pub fn last_word<T>(say: impl FnOnce() -> T) -> T {
    let mut said = LAST_WORD.lock().unwrap_or_else(|e| e.into_inner());
    *said = true;
    say()
}

/// Set while the robot stands still (the solver's tables loading, a session waiting for
/// its next line, a live page kept up after the job): Ctrl-C then exits at once with this
/// code, saying this (when not empty), instead of waiting for a motion to end.
static QUIT_AT_ONCE: std::sync::Mutex<Option<(Cow<'static, str>, i32)>> =
    std::sync::Mutex::new(None);

/// While `work` runs the robot stands still: Ctrl-C exits at once (130) and says `note`.
pub fn standing_still<T>(note: impl Into<Cow<'static, str>>, work: impl FnOnce() -> T) -> T {
    quitting_at_once(note, 130, work)
}

/// While `work` runs Ctrl-C exits at once with `code`, saying `note` (nothing when empty),
/// once [`stop_on_ctrlc`] has installed the handler; then as before.
pub fn quitting_at_once<T>(
    note: impl Into<Cow<'static, str>>,
    code: i32,
    work: impl FnOnce() -> T,
) -> T {
    let set = |v| {
        QUIT_AT_ONCE
            .lock()
            .map(|mut q| std::mem::replace(&mut *q, v))
            .ok()
            .flatten()
    };
    let before = set(Some((note.into(), code)));
    let out = work();
    set(before);
    out
}

/// Runs `work` (a simulator serving until Ctrl-C) with Ctrl-C exiting at once (130),
/// saying `note`.
pub fn until_ctrlc<T>(note: &'static str, work: impl FnOnce() -> T) -> T {
    ctrlc_handler();
    quitting_at_once(note, 130, work)
}

/// While the solver's tables load (or are built, the first time), Ctrl-C exits at once
/// (130) saying so, unless the command has said already what such an exit means (a run:
/// nothing turned). A table is written whole or not at all, so none is left half-built.
pub fn tables_loading<T>(work: impl FnOnce() -> T) -> T {
    ctrlc_handler();
    let said = QUIT_AT_ONCE.lock().map(|q| q.is_some()).unwrap_or(false);
    if said {
        return work();
    }
    quitting_at_once(
        "stopped (Ctrl-C) while the solver's tables were loading (or being built); a table not finished is not kept (the next solve builds it again)",
        130,
        work,
    )
}

/// Loads the solver with Ctrl-C exiting at once meanwhile (see [`standing_still`]), a
/// resume's stop said as before it turned a layer (its journal's run turned some).
pub fn load_solver_standing_still(g: &Global, resume: bool) -> Result<crate::solver::Solver> {
    let said = if resume {
        "stopped (Ctrl-C) while the solver's tables were loading (or being built), before this resume scanned or turned anything: the robot stands still, the cube as the journal left it: run the same command again"
    } else {
        "stopped (Ctrl-C) while the solver's tables were loading (or being built), before the scan: the robot stands still and nothing turned: run the same command again"
    };
    standing_still(said, || load_solver(g))
}

/// Loads the solver's tables (`common::tables`); Ctrl-C meanwhile says so and
/// exits 130 ([`tables_loading`]).
pub fn load_solver(g: &Global) -> Result<crate::solver::Solver> {
    load_solver_with(g, false)
}

/// [`load_solver`], rebuilding every table when `rebuild` is set.
pub fn load_solver_with(g: &Global, rebuild: bool) -> Result<crate::solver::Solver> {
    tables_loading(|| super::common::tables(g, rebuild))
}

/// The journal of the run under way and the command that resumes it, for a second
/// Ctrl-C that exits at once.
static RESUME_HINT: std::sync::Mutex<Option<(PathBuf, String)>> = std::sync::Mutex::new(None);

/// Tells a second Ctrl-C which journal to name and how to resume from it.
pub fn set_resume_hint(journal: &Path, command: String) {
    if let Ok(mut h) = RESUME_HINT.lock() {
        *h = Some((journal.to_path_buf(), command));
    }
}

/// What a second Ctrl-C says as it exits: where the run's journal is and how to resume,
/// or that nothing was turned yet.
fn second_ctrlc_note() -> String {
    let hint = RESUME_HINT.lock().ok().and_then(|h| h.clone());
    let head = "exiting at once (second Ctrl-C); every motion is bounded on the robot, so the motors stop by themselves";
    // A journal of its begun line alone: the run had not started executing.
    let executing = |j: &Path| {
        j.exists()
            && !matches!(
                job::journal::read(j),
                Err(job::journal::JournalError::NothingTurned { .. })
            )
    };
    match hint {
        Some((journal, cmd)) if executing(&journal) => format!(
            "{head}; the journal {} says where the cube is: resume with: {cmd}",
            journal.display()
        ),
        Some(_) => format!("{head}; nothing was turned yet: run again"),
        None => head.to_string(),
    }
}

/// The default `--speed` of a simulator started in this process.
pub const DEFAULT_SIM_SPEED: f64 = 20.0;

/// Refuses the simulator's options without `--sim`: a real robot has no faults to inject,
/// runs at its own speed and holds the cube it holds.
pub fn sim_only(faults: bool, speed: bool, palette: bool) -> Result<()> {
    let given: Vec<&str> = [
        (faults, "--faults"),
        (speed, "--speed"),
        (palette, "--palette"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect();
    if !given.is_empty() {
        bail!(
            "{} {} the simulator: add --sim, or leave {} out for a real robot",
            given.join(", "),
            if given.len() == 1 { "sets" } else { "set" },
            if given.len() == 1 { "it" } else { "them" }
        );
    }
    Ok(())
}

/// What `job::connect` needs, from the options.
pub fn connect_options(
    a: &ConnectArgs,
    start: Option<FaceletCube>,
    stop: &Arc<AtomicBool>,
) -> Result<ConnectOptions> {
    if !a.sim {
        sim_only(
            a.faults.is_some(),
            a.speed != DEFAULT_SIM_SPEED || super::given("speed"),
            a.palette != PaletteArg::Standard,
        )?;
    }
    a.brick.check(a.sim, a.robot == RobotKind::Mindcub3r)?;
    if a.scanner == ScannerKind::Camera && !a.sim {
        bail!("--scanner camera works only with --sim (the simulator renders the camera's frames): a camera beside a real robot is not supported yet; use --scanner sensor, or photos with `cubot scan --images`");
    }
    if let Some(p) = &a.port {
        check_port_path(p)?;
    }
    let link = match (&a.port, a.sim) {
        (_, true) => Link::Sim,
        (p, false) if a.robot == RobotKind::Mindcub3r => {
            // Its errors say what to give (--port, --sim).
            Link::Port(resolve_port(p.as_deref())?)
        }
        (Some(p), false) => Link::Port(p.clone()),
        (None, false) => {
            bail!("give --sim (the built-in simulator) or --port PATH (the robot's serial port)")
        }
    };
    let config = match a.robot {
        RobotKind::Mindcub3r => robot_config(a.robot_config.as_deref())?,
        RobotKind::Line => Config::default(),
    };
    Ok(ConnectOptions {
        robot: a.robot.into(),
        scanner: a.scanner.into(),
        link,
        config,
        faults: a.faults.clone(),
        brick: a.brick.kind(),
        seed: a.seed,
        speed: a.speed,
        palette: a.palette.into(),
        size: a.size.into(),
        start,
        stop: stop.clone(),
        baud: a.baud,
        note: Some(|n| errln!("warning: {n}")),
        tap: None,
        sim_latency: None,
        wire_log: super::output::wire_log(),
    })
}

/// The robot, connected (and its simulator started when `--sim`), with its scanner. A
/// robot that does not answer gets the hint that it may be the other kind (`--robot`).
pub fn connect(
    a: &ConnectArgs,
    start: Option<FaceletCube>,
    stop: &Arc<AtomicBool>,
) -> Result<Box<dyn RunRobot>> {
    let o = connect_options(a, start, stop)?;
    job::connect(&o).map_err(|e| {
        use crate::robot::link::LinkError;
        if let (Link::Port(p), job::ConnectError::Link(LinkError::NotATerminal { .. })) =
            (&o.link, &e)
        {
            return not_a_port(p);
        }
        let text = e.to_string();
        // Silence from the first command on: maybe no robot of this kind on the port. (A
        // brick that answered and then fell silent gets no such hint.)
        let silent = text.contains("nothing has answered") || text.contains("no reply");
        match (&o.link, silent) {
            (Link::Port(p), true) => {
                let hint = match a.robot {
                    RobotKind::Mindcub3r => "is the brick switched on, and is it a MindCub3r? A line-protocol robot needs --robot line",
                    RobotKind::Line => "is the robot powered, and does it speak the line protocol? A LEGO MindCub3r needs --robot mindcub3r (the default)",
                };
                // What was asked and how long it waited, then what to look at.
                anyhow::anyhow!("nothing answered on {} ({text}): {hint}", p.display())
            }
            _ => e.into(),
        }
    })
}

/// A `--port` that opened but is no terminal (`/dev/null`): not a serial port.
fn not_a_port(p: &Path) -> anyhow::Error {
    anyhow::anyhow!(
        "--port {}: is not a serial port (it opens, but is not a terminal device): --port names the robot's serial port, `usb` or the brick's name (see `cubot ports`); --sim runs the simulator",
        p.display()
    )
}

/// Refuses, before anything is opened, a `--port` that cannot be a port: a regular file
/// (a saved state or a journal given to the wrong flag) or a directory.
pub fn check_port_path(p: &Path) -> Result<()> {
    if p.is_file() {
        bail!(
            "--port {}: is a file, not a port: --port names the robot's serial port, `usb` or the brick's name (see `cubot ports`); a state saved by `cubot save` goes to --target-file, a journal to --resume",
            p.display()
        );
    }
    if p.is_dir() {
        bail!(
            "--port {}: is a directory, not a port (see `cubot ports`)",
            p.display()
        );
    }
    // `usb:/dev/hidrawN`, as `cubot ports` lists a brick on USB.
    if let Some(hid) = p.to_str().and_then(|s| s.strip_prefix("usb:")) {
        let hid = Path::new(hid);
        if !hid.exists() {
            bail!(
                "--port {}: no such USB device: the brick's hidraw device appears when it is plugged in and switched on; `cubot ports` lists the EV3s there are (`--port usb` takes the one on USB)",
                p.display()
            );
        }
        if std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(hid)
            .is_err()
        {
            bail!(
                "--port {}: this user may not open it: allow it with a udev rule for the EV3 (see the README's 'By USB'), then plug the brick in again",
                p.display()
            );
        }
    }
    if !p.exists() && p.starts_with("/dev") {
        // Said for the kind of port its name is: a Bluetooth tty, a USB serial one, or either.
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let appears = if name.starts_with("rfcomm") {
            format!("a Bluetooth tty appears after {RFCOMM_BIND}")
        } else if name.starts_with("ttyUSB") || name.starts_with("ttyACM") {
            "a USB serial port appears when the robot is plugged in (and switched on)".to_string()
        } else {
            format!("a Bluetooth tty appears after {RFCOMM_BIND}, a USB serial port when the robot is plugged in")
        };
        bail!(
            "--port {}: no such port: {appears}; `cubot ports` lists what is there (--sim: the simulator)",
            p.display()
        );
    }
    Ok(())
}

/// How a paired brick's Bluetooth serial port is made, as the README's "Or by Bluetooth"
/// shows it (its address as `bluetoothctl` lists it).
pub const RFCOMM_BIND: &str =
    "`sudo rfcomm bind 0 AA:BB:CC:DD:EE:FF 1` (the brick's address, as `bluetoothctl` lists it; the README's 'Or by Bluetooth')";

/// Where a bare MindCub3r brick is, for `robot ...`, `scan --robot`: a port, or a
/// simulated brick started in this process.
#[derive(Clone, Debug, Default)]
pub struct BrickPlace {
    pub port: Option<PathBuf>,
    /// Start a simulated brick here with this configuration.
    pub sim: Option<crate::robot::sim::SimConfig>,
}

/// A brick's link, and the simulator behind it when there is one (kept alive with it).
pub struct BrickLink {
    pub link: Box<dyn crate::robot::link::Link>,
    pub sim: Option<crate::robot::sim::SimHandle>,
}

/// Opens the link to a bare brick (see [`BrickPlace`]).
pub fn brick_link(place: &BrickPlace) -> Result<BrickLink> {
    if let Some(cfg) = &place.sim {
        let h = crate::robot::sim::spawn_pty(cfg.clone())?;
        let link = crate::robot::link::open(h.path(), None)?;
        return Ok(BrickLink { link, sim: Some(h) });
    }
    if let Some(p) = &place.port {
        check_port_path(p)?;
    }
    let port = resolve_port(place.port.as_deref())?;
    if crate::robot::link::usb_name(&port).is_none() && !cfg!(feature = "serial") {
        bail!(
            "this cubot was rebuilt without feature `serial`: cannot open {}",
            port.display()
        );
    }
    let link = match crate::robot::link::open(&port, Some(job::connect::SERIAL_BAUD)) {
        Err(crate::robot::link::LinkError::NotATerminal { .. }) => return Err(not_a_port(&port)),
        r => r.with_context(|| format!("opening the brick's port {}", port.display()))?,
    };
    Ok(BrickLink { link, sim: None })
}

/// A brick found on a port: the port, what kind it is, and what the brick said.
#[derive(Clone, Debug)]
pub struct FoundPort {
    /// What to pass as `--port`.
    pub port: String,
    /// `USB`, `Bluetooth`, or the serial port's description.
    pub kind: String,
    /// The brick's answer, or why there was none; `None`: not asked (not a brick's port).
    pub brick: Option<Result<crate::robot::ev3::driver::BrickInfo, String>>,
}

/// Asks the brick on `port` for its name, firmware and battery, giving up after `wait`.
#[cfg(any(feature = "usb", feature = "serial"))]
fn probe(
    port: &str,
    wait: std::time::Duration,
) -> Result<crate::robot::ev3::driver::BrickInfo, String> {
    let port = PathBuf::from(port);
    let (tx, rx) = std::sync::mpsc::channel();
    // Opening an rfcomm tty of a brick that is off blocks for seconds: ask from a thread
    // and stop waiting for it after `wait`.
    std::thread::spawn(move || {
        let answer = (|| {
            let link = crate::robot::link::open(&port, Some(job::connect::SERIAL_BAUD))
                .map_err(|e| e.to_string())?;
            let mut ev3 = crate::robot::ev3::driver::Ev3::new(link);
            ev3.timeouts.reply = std::time::Duration::from_millis(1500);
            ev3.brick_info().map_err(|e| e.to_string())
        })();
        let _ = tx.send(answer);
    });
    rx.recv_timeout(wait)
        .unwrap_or_else(|_| Err(format!("no answer within {} s", wait.as_secs())))
}

/// An error talking to `brick` (`the brick on PATH`, `the simulated brick`) in context: one
/// where nothing ever answered asks whether it is a MindCub3r's EV3, switched on.
pub fn brick_error(e: anyhow::Error, brick: &str) -> anyhow::Error {
    if format!("{e:#}").contains("nothing has answered") {
        e.context(format!("nothing answered: is {brick} switched on, and is it a MindCub3r's EV3? (`cubot robot ...` drives a MindCub3r only; a line-protocol robot runs with `cubot run --robot line --port PATH`)"))
    } else {
        e.context(format!("talking to {brick}"))
    }
}

/// Every port a brick may be on: the EV3s on USB and the serial ports, the bricks among them
/// asked for their name when `ask` (Bluetooth serial ports and rfcomm ttys; a serial port of
/// another kind is listed, not opened).
pub fn find_ports(ask: bool) -> Result<Vec<FoundPort>> {
    let mut out = usb_ports(ask)?;
    out.extend(serial_ports(ask)?);
    Ok(out)
}

/// How long `cubot ports` waits for one brick's answer.
#[cfg(any(feature = "usb", feature = "serial"))]
const PROBE_WAIT: std::time::Duration = std::time::Duration::from_secs(4);

#[cfg(feature = "usb")]
fn usb_ports(ask: bool) -> Result<Vec<FoundPort>> {
    let bricks = crate::robot::link::hid::list_bricks().context("listing USB devices")?;
    Ok(bricks
        .into_iter()
        .map(|b| {
            let port = format!("usb:{}", b.path);
            let brick = ask.then(|| probe(&port, PROBE_WAIT));
            FoundPort {
                port,
                kind: "USB".into(),
                brick,
            }
        })
        .collect())
}

#[cfg(not(feature = "usb"))]
fn usb_ports(_ask: bool) -> Result<Vec<FoundPort>> {
    Ok(Vec::new())
}

#[cfg(feature = "serial")]
fn serial_ports(ask: bool) -> Result<Vec<FoundPort>> {
    let ports = crate::robot::link::list_ports().context("listing serial ports")?;
    Ok(ports
        .into_iter()
        .map(|(name, what)| {
            let bricky =
                what.starts_with("Bluetooth") || name.contains("rfcomm") || name.contains("EV3");
            let brick = (ask && bricky).then(|| probe(&name, PROBE_WAIT));
            FoundPort {
                port: name,
                kind: what,
                brick,
            }
        })
        .collect())
}

#[cfg(not(feature = "serial"))]
fn serial_ports(_ask: bool) -> Result<Vec<FoundPort>> {
    Ok(Vec::new())
}

/// The port `--port` names: a path, `usb` or `usb:PATH` as given; otherwise a brick's name,
/// looked up among the bricks `cubot ports` finds. Without `--port`, the one EV3 on USB.
pub fn resolve_port(port: Option<&Path>) -> Result<PathBuf> {
    match port {
        // A path (even one that does not exist: opening it says so).
        Some(p)
            if crate::robot::link::usb_name(p).is_some()
                || p.exists()
                || p.to_string_lossy().contains(['/', '\\']) =>
        {
            Ok(p.to_path_buf())
        }
        Some(p) => {
            let name = p.to_string_lossy().to_string();
            let found = find_ports(true)?;
            let matching: Vec<&FoundPort> = found
                .iter()
                .filter(|f| matches!(&f.brick, Some(Ok(b)) if b.name.eq_ignore_ascii_case(&name)))
                .collect();
            match matching.as_slice() {
                [one] => Ok(PathBuf::from(&one.port)),
                [] => bail!(
                    "no port {name:?}, and no brick of that name on USB or a bound Bluetooth port (see `cubot ports`)"
                ),
                many => bail!(
                    "{} bricks are called {name:?} ({}): give the port instead",
                    many.len(),
                    many.iter().map(|f| f.port.as_str()).collect::<Vec<_>>().join(", ")
                ),
            }
        }
        None => {
            if !cfg!(feature = "usb") {
                bail!("say which port with --port PATH (see `cubot ports`), or --sim for the simulator");
            }
            let usb: Vec<FoundPort> = find_ports(false)?
                .into_iter()
                .filter(|f| f.kind == "USB")
                .collect();
            match usb.as_slice() {
                [one] => Ok(PathBuf::from(&one.port)),
                [] => bail!(
                    "no --port given and no EV3 on USB: plug the brick in with its USB cable, or give --port (a Bluetooth rfcomm tty; see `cubot ports`), or --sim for the simulator"
                ),
                many => bail!(
                    "{} EV3 bricks on USB ({}): name one with --port",
                    many.len(),
                    many.iter().map(|f| f.port.as_str()).collect::<Vec<_>>().join(", ")
                ),
            }
        }
    }
}

/// A MindCub3r brick for step-by-step commands (`robot ...`, `scan --robot`): devices
/// checked, polarity set, nothing moved, Ctrl-C wired to stop its motors; with the
/// simulator behind it, if any, which must live as long as it.
pub fn connect_brick(
    place: &BrickPlace,
    config: Config,
    g: &Global,
) -> Result<(MindCub3r, Option<crate::robot::sim::SimHandle>)> {
    let BrickLink { link, sim } = brick_link(place)?;
    let name = link.name();
    let mut ev3 = crate::robot::ev3::driver::Ev3::new(link);
    if g.verbose >= 2 {
        ev3.set_log(|l| errln!("ev3: {l}"));
    }
    let mut robot = MindCub3r::with_driver(ev3, config)
        .map_err(|e| brick_error(e.into(), &format!("the brick on {name}")))?;
    // The battery before the first motion, as `run` checks it (`robot check` reports it
    // instead: it connects without this).
    let volts = robot
        .ev3()
        .brick_info()
        .map_err(crate::robot::mindcub3r::RobotError::from)?
        .battery_volts;
    if let Some(low) = job::connect::judge_battery(volts)? {
        if !g.quiet {
            errln!("warning: {low}");
        }
    }
    robot.set_interrupt(stop_on_ctrlc());
    Ok((robot, sim))
}
