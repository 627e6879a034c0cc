//! Connecting a job to its robot: over a serial port (a MindCub3r's Bluetooth rfcomm tty, a
//! line robot's USB serial port), or to a simulator started in this process on a
//! pseudo-terminal; with the scanner chosen (the robot's colour sensor, or a camera over
//! its top face).
//!
//! Level: job. No printing; no command-line parsing (the `cli` maps its flags onto
//! [`ConnectOptions`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::color::synth::Palette;
use crate::cube::{FaceletCube, Size};
use crate::robot::line::{LineError, LineRobot, LineTimeouts};
use crate::robot::link::{self, LinkError};
use crate::robot::mindcub3r::{Config, MindCub3r, RobotError};
use crate::robot::sim::line::{self as line_sim, LineSimConfig, LineSimError};
use crate::robot::sim::SimError;

use super::line::LineRun;
use super::mindcub3r::Mc3Run;
use super::robot::RunRobot;

/// The serial speed of a real robot's port (a simulator's pty has none).
pub const SERIAL_BAUD: u32 = 115_200;

pub use super::kind::{RobotKind, ScannerKind};

/// The scale a robot's scans come in, known before connecting: EV3 raw counts from the
/// MindCub3r's sensor, sRGB from a camera; `None` for a line robot's own sensors (it says
/// which scale in its handshake, before it moves).
pub fn scan_scale(robot: RobotKind, scanner: ScannerKind) -> Option<crate::color::raw::Scale> {
    use crate::color::raw::Scale;
    match (robot, scanner) {
        (_, ScannerKind::Camera) => Some(Scale::Rgb8),
        (RobotKind::Mindcub3r, ScannerKind::Sensor) => Some(Scale::Ev3Raw),
        (RobotKind::Line, ScannerKind::Sensor) => None,
    }
}

/// How the robot is reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    /// A simulator started in this process, on a pseudo-terminal.
    Sim,
    /// The robot's serial port.
    Port(PathBuf),
}

/// Everything needed to reach a robot (and, for [`Link::Sim`], to start its simulator).
#[derive(Clone, Debug)]
pub struct ConnectOptions {
    pub robot: RobotKind,
    pub scanner: ScannerKind,
    pub link: Link,
    /// The MindCub3r's configuration (angles, speeds, timings).
    pub config: Config,
    /// Simulator fault injection, in the simulator's own syntax (`KIND[@N]`, comma list).
    pub faults: Option<String>,
    /// The simulated MindCub3r's brick: ours, or LEGO's firmware.
    pub brick: crate::robot::sim::lms2012::BrickKind,
    /// Seed of the simulated cube, its colours and the camera's frames.
    pub seed: u64,
    /// Simulated seconds per wall second.
    pub speed: f64,
    /// Sticker palette of the simulated cube.
    pub palette: Palette,
    pub size: Size,
    /// The simulator's starting cube (robot frame); a seeded random one when `None`.
    pub start: Option<FaceletCube>,
    /// Set (e.g. by Ctrl-C) to stop the robot after its current motion.
    pub stop: Arc<AtomicBool>,
    /// The serial port's baud rate (a real port; a simulator's pty keeps its own).
    pub baud: u32,
    /// Told what the connection found that the user should know but that does not stop
    /// it (a low battery).
    pub note: Option<fn(&str)>,
    /// Records the MindCub3r's link, every byte each way (a comparison of bricks reads it).
    pub tap: Option<link::Tap>,
    /// The latency (seconds) of a simulator the caller started and reaches on a
    /// [`Link::Port`]: runs plan at it, as on a simulator started here, rather than at a
    /// round trip measured on the wall clock (which a simulator faster than real time
    /// shrinks, and noise makes differ from one connect to the next).
    pub sim_latency: Option<f64>,
    /// Told every EV3 command and reply, in hex (`-vv`).
    pub wire_log: Option<fn(&str)>,
}

/// Why no robot could be reached.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error(transparent)]
    LineSim(#[from] LineSimError),
    #[error(transparent)]
    Link(#[from] LinkError),
    #[error(transparent)]
    Line(#[from] LineError),
    #[error(transparent)]
    Robot(#[from] RobotError),
    /// A motor that homing could not bring to its stop: mechanical, so the message says
    /// what to look at.
    #[error("{error}; {}; no layer was turned (homing comes first). See that nothing holds that arm or stands in its way (the cube in the tray, a finger) and that its cable is in, then `cubot robot check`: it homes each motor and names the one at fault", crate::robot::mindcub3r::error::stop_note(*stopped))]
    Homing { error: RobotError, stopped: bool },
    /// The link failed while the arms homed: the homing run on the brick ends by itself.
    #[error("{0}; no layer was turned (homing comes first), and the brick ends a homing run by itself: check the link (the cable or Bluetooth, the brick switched on), then run the same command again")]
    HomingLink(RobotError),
    #[error("the MindCub3r needs serial ports: cubot was rebuilt without feature `serial` (the line robot works without it)")]
    NoSerial,
    #[error("--scanner camera reads camera frames: cubot was rebuilt without feature `vision`")]
    NoVision,
    /// Checked before the first motion, as `robot check` judges it.
    #[error("the brick's battery is flat ({volts:.2} V, under {min:.1} V): the motors would stall mid-move; nothing moved: put in fresh batteries or charge the pack (`cubot robot check` says more)")]
    FlatBattery { volts: f64, min: f64 },
}

/// The robot, connected (and its simulator started for [`Link::Sim`]), with its scanner.
pub fn connect(o: &ConnectOptions) -> Result<Box<dyn RunRobot>, ConnectError> {
    if o.scanner == ScannerKind::Camera && !cfg!(feature = "vision") {
        return Err(ConnectError::NoVision);
    }
    match o.robot {
        RobotKind::Line => {
            let run = connect_line(o)?;
            #[cfg(feature = "vision")]
            if o.scanner == ScannerKind::Camera {
                use super::camera::{CameraRun, Presenter};
                return Ok(Box::new(CameraRun::new(
                    Presenter::Line(Box::new(run)),
                    o.palette,
                    o.seed,
                )));
            }
            Ok(Box::new(run))
        }
        RobotKind::Mindcub3r => {
            let run = connect_mindcub3r(o)?;
            #[cfg(feature = "vision")]
            if o.scanner == ScannerKind::Camera {
                use super::camera::{CameraRun, Presenter};
                return Ok(Box::new(CameraRun::new(
                    Presenter::Mc3(run),
                    o.palette,
                    o.seed,
                )));
            }
            Ok(run)
        }
    }
}

/// A line robot on its port, or on a line simulator started now.
fn connect_line(o: &ConnectOptions) -> Result<LineRun, ConnectError> {
    let mut sim = None;
    let path = match &o.link {
        Link::Sim => {
            let faults = match &o.faults {
                Some(f) => line_sim::parse_faults(f)?,
                None => Vec::new(),
            };
            let h = line_sim::spawn_pty(LineSimConfig {
                seed: o.seed,
                speed: o.speed,
                faults,
                start: o.start.clone(),
                size: o.size,
                palette: o.palette,
                ..Default::default()
            })?;
            let p = h.path().to_path_buf();
            sim = Some(h);
            p
        }
        Link::Port(p) => p.clone(),
    };
    let simulated = o.link == Link::Sim;
    let link = link::open(&path, (!simulated).then_some(o.baud))?;
    let mut robot = LineRobot::connect_logged(link, LineTimeouts::default(), o.wire_log)?;
    if simulated {
        robot.time_scale = o.speed.max(1e-3);
    }
    robot.interrupt = Some(o.stop.clone());
    Ok(LineRun {
        robot,
        sim,
        chunk: super::line::CHUNK,
    })
}

/// A MindCub3r on its port, or on a simulated brick started now; homed.
#[cfg(feature = "serial")]
fn connect_mindcub3r(o: &ConnectOptions) -> Result<Box<Mc3Run>, ConnectError> {
    use crate::robot::mindcub3r::cost::CostModel;
    use crate::robot::mindcub3r::planner::Planner;
    use crate::robot::sim::{self, SimConfig};
    let mut handle = None;
    let mut sim_latency = 0.0;
    let path = match &o.link {
        Link::Sim => {
            let faults: sim::Faults = match &o.faults {
                Some(f) => f.parse()?,
                None => Default::default(),
            };
            sim_latency = faults.latency_ms as f64 / 1000.0;
            let h = sim::spawn_pty(SimConfig {
                seed: o.seed,
                speed: o.speed,
                palette: o.palette,
                faults,
                start: o.start.clone(),
                size: o.size,
                brick: o.brick.clone(),
                ..Default::default()
            })?;
            let p = h.path().to_path_buf();
            handle = Some(h);
            p
        }
        Link::Port(p) => p.clone(),
    };
    let timings = o.config.timings.clone();
    let baud = (o.link != Link::Sim).then_some(o.baud);
    // The battery, first, as `robot check` asks it: a flat one stalls the motors mid-move.
    let mut port = link::open(&path, baud)?;
    if let Some(tap) = &o.tap {
        port = Box::new(link::TapLink::recording(port, tap.clone()));
    }
    let mut ev3 = crate::robot::ev3::driver::Ev3::new(port);
    if let Some(log) = o.wire_log {
        ev3.set_log(log);
    }
    let volts = ev3.brick_info().map_err(RobotError::from)?.battery_volts;
    let mut robot = MindCub3r::with_driver(ev3, o.config.clone())?;
    robot.set_interrupt(o.stop.clone());
    if let (Some(low), Some(note)) = (judge_battery(volts)?, o.note) {
        note(&low);
    }
    if let Err(e) = robot.home() {
        return Err(homing_failed(e, &mut robot));
    }
    // The planner prices the link's round trips at this link's own: a real link's is
    // measured (to the millisecond, so that a run plans alike from one connect to the
    // next); a simulator started here (or by the caller) has the latency it was given,
    // so its runs plan deterministically.
    let round_trip = match (&o.link, o.sim_latency) {
        (Link::Sim, _) => sim_latency,
        (Link::Port(_), Some(l)) => l,
        (Link::Port(_), None) => (robot.round_trip(3)? * 1000.0).round() / 1000.0,
    };
    let planner = Planner::new(CostModel::new(timings.on_link(round_trip)));
    Ok(Box::new(Mc3Run::new(robot, handle, planner)))
}

/// The brick's battery before the first motion: a flat one is refused (it would stall
/// the motors mid-move), a low one gets a note.
pub fn judge_battery(volts: f64) -> Result<Option<String>, ConnectError> {
    use crate::robot::mindcub3r::check::{FLAT_BATTERY_V, LOW_BATTERY_V};
    if volts < FLAT_BATTERY_V {
        return Err(ConnectError::FlatBattery {
            volts,
            min: FLAT_BATTERY_V,
        });
    }
    Ok((volts < LOW_BATTERY_V).then(|| format!("the brick's battery is low ({volts:.2} V): the motors run slower than the timings assume and may stall; charge it before long runs")))
}

/// A homing error that is the mechanism's (a motor held, no end stop found) says so, with
/// the motors stopped; any other (the link, a stop) is the robot's error as it is.
#[cfg(feature = "serial")]
fn homing_failed(e: RobotError, robot: &mut MindCub3r) -> ConnectError {
    use crate::robot::ev3::driver::Ev3Error;
    let mechanical = e.held()
        || matches!(
            e,
            RobotError::HomingTimeout { .. } | RobotError::Ev3(Ev3Error::NoEndStop { .. })
        );
    if mechanical {
        ConnectError::Homing {
            error: e,
            stopped: robot.stop(),
        }
    } else if matches!(&e, RobotError::Ev3(ev3) if ev3.link_failed()) {
        ConnectError::HomingLink(e)
    } else {
        ConnectError::Robot(e)
    }
}

#[cfg(not(feature = "serial"))]
fn connect_mindcub3r(_o: &ConnectOptions) -> Result<Box<Mc3Run>, ConnectError> {
    Err(ConnectError::NoSerial)
}

/// Opens a MindCub3r's port (at `baud`, or a simulator's pty as it is with `None`) and
/// checks its devices (no motion).
#[cfg(feature = "serial")]
pub fn open_mindcub3r(
    port: &Path,
    baud: Option<u32>,
    config: Config,
) -> Result<MindCub3r, ConnectError> {
    let link = link::open(port, baud)?;
    Ok(MindCub3r::connect(link, config)?)
}

/// Without serial ports no MindCub3r can be reached.
#[cfg(not(feature = "serial"))]
pub fn open_mindcub3r(
    _port: &Path,
    _baud: Option<u32>,
    _config: Config,
) -> Result<MindCub3r, ConnectError> {
    Err(ConnectError::NoSerial)
}
