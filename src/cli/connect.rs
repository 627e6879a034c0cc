//! The robot connection and simulator options shared by `run`, `save` and `restore`, and
//! the one place that turns options into a connected robot (`job::connect` does the work):
//! a job's robot for `run`/`save`/`restore`/`bench robot`, or a bare MindCub3r brick for
//! `robot ...` and `scan --robot`.
//!
//! Level: `cli`. Depends on [`super::args`] and `job`; no command module is imported here.

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
    /// The robot's serial port (EV3 Bluetooth rfcomm tty, Arduino USB serial).
    #[arg(long, value_name = "PATH")]
    pub port: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "mindcub3r")]
    pub robot: RobotKind,
    #[arg(long, value_enum, default_value = "sensor")]
    pub scanner: ScannerKind,
    /// MindCub3r configuration (default: calibration/mindcub3r.toml if present).
    #[arg(long, value_name = "FILE")]
    pub robot_config: Option<PathBuf>,
    /// Simulator fault injection: a comma list as `cubot sim --faults` takes (see its help).
    #[arg(long, value_name = "SPEC")]
    pub faults: Option<String>,
    /// Seed of the simulated cube, its colours and the resolver.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Simulated seconds per wall second (at most 10000).
    #[arg(long, default_value_t = 20.0, value_parser = super::args::sim_speed)]
    pub speed: f64,
    /// Sticker palette of the simulated cube.
    #[arg(long, value_enum, default_value_t = PaletteArg::Standard)]
    pub palette: PaletteArg,
    /// Cube size.
    #[arg(long, value_enum, default_value_t = SizeArg::Three)]
    pub size: SizeArg,
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

/// A stop flag that Ctrl-C sets.
pub fn stop_on_ctrlc() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    // A second handler cannot be installed; ignore (the first one sets the same flag).
    let _ = ctrlc::set_handler(move || s.store(true, Ordering::SeqCst));
    stop
}

/// What `job::connect` needs, from the options.
pub fn connect_options(
    a: &ConnectArgs,
    start: Option<FaceletCube>,
    stop: &Arc<AtomicBool>,
) -> Result<ConnectOptions> {
    let link = match (&a.port, a.sim) {
        (_, true) => Link::Sim,
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
        seed: a.seed,
        speed: a.speed,
        palette: a.palette.into(),
        size: a.size.into(),
        start,
        stop: stop.clone(),
    })
}

/// The robot, connected (and its simulator started when `--sim`), with its scanner.
pub fn connect(
    a: &ConnectArgs,
    start: Option<FaceletCube>,
    stop: &Arc<AtomicBool>,
) -> Result<Box<dyn RunRobot>> {
    let o = connect_options(a, start, stop)?;
    Ok(job::connect(&o)?)
}

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
    let Some(port) = &place.port else {
        bail!("say which port with --port PATH (see `cubot ports`), or --sim");
    };
    if !cfg!(feature = "serial") {
        bail!(
            "this cubot was rebuilt without feature `serial`: cannot open {}",
            port.display()
        );
    }
    let link = crate::robot::link::open(port, Some(job::connect::SERIAL_BAUD))
        .with_context(|| format!("opening the brick's port {}", port.display()))?;
    Ok(BrickLink { link, sim: None })
}

/// A MindCub3r brick for step-by-step commands (`robot ...`, `scan --robot`): devices
/// checked, polarity set, nothing moved, Ctrl-C wired to stop its motors; with the
/// simulator behind it, if any, which must live as long as it.
pub fn connect_brick(
    place: &BrickPlace,
    config: Option<&Path>,
    g: &Global,
) -> Result<(MindCub3r, Option<crate::robot::sim::SimHandle>)> {
    let config = robot_config(config)?;
    let BrickLink { link, sim } = brick_link(place)?;
    let name = link.name();
    let mut ev3 = crate::robot::ev3::driver::Ev3::new(link);
    if g.verbose >= 2 {
        ev3.set_log(|l| eprintln!("ev3: {l}"));
    }
    let mut robot = MindCub3r::with_driver(ev3, config)
        .with_context(|| format!("talking to the brick on {name}"))?;
    robot.set_interrupt(stop_on_ctrlc());
    Ok((robot, sim))
}
