//! `ports`, `sim`, `robot ...`, and the `scan --robot --port` route.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde_json::json;

use super::args::{PaletteArg, RobotKind, SizeArg};
use super::connect::connect_brick;
use super::output::{json_line, progress_allowed};
use super::{CmdResult, Exit, Global};
use crate::color::{resolve as resolve_scan, Palette, RawScan, ResolveError, ResolveOptions};
use crate::cube::{FaceletCube, Size};
use crate::robot::mindcub3r::error::stop_note;
use crate::robot::mindcub3r::model::{Primitive, SensorPosition};
use crate::robot::mindcub3r::{MindCub3r, RobotError};
use crate::robot::sim::line::{self as line_sim, LineSimConfig};
use crate::robot::sim::{spawn_pty, Faults, SimConfig};

#[derive(clap::Args, Debug)]
pub struct PortsArgs {}

#[derive(clap::Args, Debug)]
pub struct SimArgs {
    /// Serve on a new pseudo-terminal: prints its path on line 1 and the cube (facelet
    /// string, robot frame, before any move) on line 2, then serves until killed.
    #[arg(long)]
    pub pty: bool,
    /// Seed of the cube, the sensor noise and the sticker wear.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Simulated seconds per wall second (at most 10000).
    #[arg(long, default_value_t = 1.0, value_parser = super::args::sim_speed)]
    pub speed: f64,
    /// Sticker palette.
    #[arg(long, value_enum, default_value_t = PaletteArg::Standard)]
    pub palette: PaletteArg,
    /// Faults: comma list of `drop[@N]`, `stall[@N]`, `wrong-device`, `silent[@N]` (N = command
    /// number); for the MindCub3r also `latency=MS`, `jitter=MS` (seeded, ± MS per reply) and
    /// `dropout@N=MS` (from command N the link loses everything for MS).
    #[arg(long, default_value = "")]
    pub faults: String,
    /// Cube size.
    #[arg(long, value_enum, default_value_t = SizeArg::Three)]
    pub size: SizeArg,
    /// Start from this cube (facelet string in the robot frame) instead of a random one.
    #[arg(long, value_name = "STATE")]
    pub start: Option<String>,
    /// Transport latency added to every reply, in simulated ms (USB ≈ 10, Bluetooth ≈ 60).
    #[arg(long, default_value_t = 0.0, value_parser = super::args::latency_ms)]
    pub latency: f64,
    /// Which robot to simulate: the EV3 MindCub3r, or a line-protocol robot.
    #[arg(long, value_enum, default_value = "mindcub3r")]
    pub robot: RobotKind,
}

#[derive(clap::Args, Debug)]
pub struct RobotArgs {
    #[command(subcommand)]
    pub action: RobotAction,
    /// Serial port of the brick (Bluetooth rfcomm tty, or the simulator's pty).
    #[arg(long, global = true, value_name = "PATH")]
    pub port: Option<PathBuf>,
    /// MindCub3r configuration (default: calibration/mindcub3r.toml if present, else the
    /// built-in defaults, which equal that file).
    #[arg(long, global = true, value_name = "FILE")]
    pub robot_config: Option<PathBuf>,
}

#[derive(clap::Subcommand, Debug)]
pub enum RobotAction {
    /// Check the devices and home the tilt arm and the sensor arm.
    Home,
    /// Tilt the cube once (Front goes to Top).
    Tilt,
    /// Spin the whole cube by N quarter turns (+1 = y, -1 = y', 2).
    Spin {
        #[arg(allow_hyphen_values = true)]
        n: i8,
    },
    /// Turn the bottom layer by N quarter turns (+1 = D', -1 = D, 2 = D2).
    Turn {
        #[arg(allow_hyphen_values = true)]
        n: i8,
    },
    /// Tilt arm away or hold.
    Arm { position: ArmPos },
    /// Move the colour-sensor arm.
    Sensor { position: SensorPos },
    /// Read the colour sensor (RGB-RAW).
    Read,
    /// Full colour-sensor scan, resolved (like `cubot scan --robot`, with more options).
    Scan(RobotScanArgs),
    /// Measure each primitive's time (and the link's round trips) on the robot, or on
    /// simulated bricks with --sim, and fit the planner's [timings].
    CalibrateTimings(super::timings::CalibrateTimingsArgs),
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum ArmPos {
    Away,
    Hold,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum SensorPos {
    Parked,
    Clear,
    Corner,
    Edge,
    Centre,
}

#[derive(clap::Args, Debug, Clone)]
pub struct RobotScanArgs {
    /// Cube size.
    #[arg(long, value_enum, default_value_t = SizeArg::Three)]
    pub size: SizeArg,
    /// Also write the raw scan (JSON) here.
    #[arg(long, value_name = "FILE")]
    pub raw_out: Option<PathBuf>,
    /// Rounds of re-reading doubtful stickers before giving up.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub rescans: u32,
    /// Print the best legal cube even when a rival is too close (exit 0).
    #[arg(long)]
    pub best_effort: bool,
}

pub fn ports(_a: PortsArgs, g: &Global) -> CmdResult {
    #[cfg(feature = "serial")]
    {
        let ports = crate::robot::link::list_ports().context("listing serial ports")?;
        for (name, what) in &ports {
            if g.json {
                json_line(&json!({"type": "port", "path": name, "kind": what}));
            } else {
                outln!("{name}\t{what}");
            }
        }
        if ports.is_empty() && !g.json {
            eprintln!(
                "no serial ports found; pair the EV3 over Bluetooth and bind it with `rfcomm bind 0 <brick address> 1` (see README)"
            );
        }
        Ok(Exit::Ok)
    }
    #[cfg(not(feature = "serial"))]
    {
        let _ = g;
        bail!("this cubot was rebuilt without feature `serial`: no serial ports")
    }
}

pub fn sim(a: SimArgs, g: &Global) -> CmdResult {
    if !a.pty {
        bail!("say --pty: the simulated brick serves on a pseudo-terminal");
    }
    let palette: Palette = a.palette.into();
    let faults: Faults = a.faults.parse()?;
    let size: Size = a.size.into();
    let start = match &a.start {
        Some(s) => Some(super::cube::parse_state(s, size)?),
        None => None,
    };
    if a.robot == RobotKind::Line {
        return sim_line(&a, palette, start, size, g);
    }
    let handle = spawn_pty(SimConfig {
        seed: a.seed,
        speed: a.speed,
        palette,
        faults,
        start,
        size,
        latency_ms: a.latency,
        ..SimConfig::default()
    })?;
    announce_sim(g, "mindcub3r", handle.path(), handle.initial_cube())?;
    loop {
        std::thread::sleep(std::time::Duration::from_millis(50));
        for line in handle.take_log() {
            if !g.quiet {
                eprintln!("sim: {line}");
            }
        }
    }
}

/// A simulator's first two lines on stdout: the pty path, then the cube it holds (robot
/// frame, before any move); with `--json` one `sim` line carrying both.
pub(super) fn announce_sim(
    g: &Global,
    robot: &str,
    path: &Path,
    cube: &crate::cube::FaceletCube,
) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if g.json {
        writeln!(
            out,
            "{}",
            json!({"type": "sim", "robot": robot, "path": path, "cube": cube.to_letters()})
        )?;
    } else {
        writeln!(out, "{}", path.display())?;
        writeln!(out, "{}", cube.to_letters())?;
    }
    out.flush()?;
    Ok(())
}

pub fn robot(a: RobotArgs, g: &Global) -> CmdResult {
    if let RobotAction::Spin { n } | RobotAction::Turn { n } = &a.action {
        if !matches!(n, 1 | -1 | 2 | -2) {
            bail!("a spin or turn takes 1, -1, 2 or -2 quarter turns, not {n}");
        }
    }
    if let RobotAction::CalibrateTimings(c) = &a.action {
        return super::timings::calibrate(c, a.port.as_deref(), a.robot_config.as_deref(), g);
    }
    let mut r = connect_brick(a.port.as_deref(), a.robot_config.as_deref(), g)?;
    let result = run_action(&mut r, &a.action, g);
    stopped_on_error(&mut r, result)
}

/// On an error: stop every motor (again, best effort) and say so with the cube's state.
fn stopped_on_error(r: &mut MindCub3r, result: CmdResult) -> CmdResult {
    match result {
        Ok(x) => Ok(x),
        Err(e) => {
            let stopped = r.stop();
            let interrupted = e
                .downcast_ref::<RobotError>()
                .is_some_and(|e| matches!(e, RobotError::Interrupted { .. }));
            if interrupted {
                Err(e)
            } else {
                Err(anyhow::anyhow!(
                    "{}; {}; {}",
                    super::output::error_message(&e),
                    stop_note(stopped),
                    r.state_description()
                ))
            }
        }
    }
}

fn run_action(r: &mut MindCub3r, action: &RobotAction, g: &Global) -> CmdResult {
    let prim = match action {
        RobotAction::Home => {
            r.home()?;
            if g.json {
                json_line(&json!({"type": "robot", "done": "home"}));
            } else {
                outln!("homed");
            }
            return Ok(Exit::Ok);
        }
        RobotAction::Scan(s) => return scan_with(r, s, g),
        RobotAction::CalibrateTimings(_) => unreachable!("handled before connecting"),
        RobotAction::Tilt => Primitive::Tilt,
        RobotAction::Spin { n } => Primitive::Spin(*n),
        RobotAction::Turn { n } => Primitive::Turn(*n),
        RobotAction::Arm { position } => match position {
            ArmPos::Away => Primitive::ArmAway,
            ArmPos::Hold => Primitive::ArmHold,
        },
        RobotAction::Sensor { position } => Primitive::Sensor(match position {
            SensorPos::Parked => SensorPosition::Parked,
            SensorPos::Clear => SensorPosition::Clear,
            SensorPos::Corner => SensorPosition::Corner,
            SensorPos::Edge => SensorPosition::Edge,
            SensorPos::Centre => SensorPosition::Centre,
        }),
        RobotAction::Read => {
            r.home()?;
            r.execute(Primitive::Sensor(SensorPosition::Centre))?;
            let rgb = r.read_rgb()?;
            r.finish(false)?;
            if g.json {
                json_line(&json!({"type": "reading", "rgb_raw": rgb}));
            } else {
                outln!("{} {} {}", rgb[0], rgb[1], rgb[2]);
            }
            return Ok(Exit::Ok);
        }
    };
    r.execute(prim)?;
    r.finish(false)?;
    if g.json {
        json_line(&json!({"type": "robot", "done": prim}));
    } else {
        outln!("done: {prim:?}");
    }
    Ok(Exit::Ok)
}

/// `cubot scan --robot --port PATH [--size N] [--raw-out FILE] [--best-effort]`.
pub fn scan_robot(
    port: Option<&Path>,
    robot_config: Option<&Path>,
    a: &RobotScanArgs,
    g: &Global,
) -> CmdResult {
    let mut r = connect_brick(port, robot_config, g)?;
    let res = scan_with(&mut r, a, g);
    stopped_on_error(&mut r, res)
}

fn scan_with(r: &mut MindCub3r, a: &RobotScanArgs, g: &Global) -> CmdResult {
    let size: Size = a.size.into();
    r.home()?;
    let bar = progress_allowed(g).then(|| {
        let b = indicatif::ProgressBar::new(size.stickers() as u64);
        b.set_message("colour-sensor scan");
        b
    });
    let mut scan: RawScan = r.scan(size, &mut |p| {
        if let Some(b) = &bar {
            b.set_position(p.done as u64);
        }
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let opts = ResolveOptions {
        best_effort: a.best_effort,
        ..ResolveOptions::default()
    };
    let mut round = 0;
    let outcome = loop {
        let outcome = resolve_scan(&scan, &opts);
        // Re-read what the resolver doubts (or, with no legal cube, suspects).
        let reread = match &outcome {
            Err(ResolveError::Ambiguous { doubtful, .. }) => doubtful.clone(),
            Err(ResolveError::NoLegalCube { suspects, .. }) => suspects.clone(),
            _ => Vec::new(),
        };
        match outcome {
            Err(_) if round < a.rescans && !reread.is_empty() => {
                let doubtful = reread;
                round += 1;
                if g.verbose > 0 {
                    eprintln!(
                        "re-reading {} doubtful stickers: {doubtful:?}",
                        doubtful.len()
                    );
                }
                let fresh = r.rescan(&doubtful)?;
                for (&i, rgb) in doubtful.iter().zip(fresh) {
                    let old = scan.facelets[i];
                    scan.facelets[i] = std::array::from_fn(|k| (old[k] + rgb[k]) / 2.0);
                }
            }
            other => break other,
        }
    };
    if let Some(p) = &a.raw_out {
        std::fs::write(p, scan.to_json())
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    r.finish(true)?;
    match outcome {
        Ok(res) => {
            if g.json {
                json_line(
                    &json!({"type": "scan", "cube": res.cube.to_letters(), "confident": res.confident, "rescans": round}),
                );
            } else {
                outln!("{}", res.cube.to_letters());
            }
            Ok(Exit::Ok)
        }
        Err(ResolveError::Ambiguous { doubtful, best, .. }) => {
            let names = crate::color::resolve::facelet_names(&doubtful, size);
            if g.json {
                json_line(
                    &json!({"type": "doubt", "doubtful": names.split_whitespace().collect::<Vec<_>>(), "best": best.cube.to_letters()}),
                );
            } else {
                outln!(
                    "doubt: stickers {names} still doubtful after {round} re-reads (best guess {})",
                    best.cube.to_letters()
                );
            }
            Ok(Exit::No)
        }
        Err(ResolveError::NoLegalCube { expanded, .. }) => {
            if g.json {
                json_line(
                    &json!({"type": "invalid", "message": "no legal cube fits the readings", "expanded": expanded}),
                );
            } else {
                outln!("invalid: no legal cube fits the readings (searched {expanded} nodes)");
            }
            Ok(Exit::No)
        }
        Err(e) => Err(e.into()),
    }
}

/// `cubot sim --robot line --pty`: the line-protocol simulator, served until killed.
pub fn sim_line(
    a: &SimArgs,
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
    announce_sim(g, "line", handle.path(), &handle.initial_cube())?;
    loop {
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}
