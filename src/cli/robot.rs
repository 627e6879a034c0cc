//! `ports`, `sim`, `robot ...`, and the `scan --robot --port` route.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde_json::json;

use super::args::{PaletteArg, RobotKind, SizeArg};
use super::connect::{brick_link, connect_brick, stop_on_ctrlc, BrickLink, BrickPlace};
use super::output::{json_line, progress_allowed};
use super::view::{Live, LiveOptions, ViewArgs};
use super::{session, CmdResult, Exit, Global};
use crate::color::{resolve as resolve_scan, Palette, RawScan, ResolveError, ResolveOptions};
use crate::cube::{FaceletCube, Size};
use crate::job::RunEvent;
use crate::robot::mindcub3r::error::stop_note;
use crate::robot::mindcub3r::model::{Primitive, SensorPosition};
use crate::robot::mindcub3r::{MindCub3r, RobotError};
use crate::robot::sim::line::{self as line_sim, LineSimConfig};
use crate::robot::sim::{spawn_pty, Faults, SimConfig};

#[derive(clap::Args, Debug)]
pub struct PortsArgs {
    /// List the ports without asking the bricks on them for their names.
    #[arg(long)]
    pub no_ask: bool,
}

#[derive(clap::Args, Debug)]
pub struct SimArgs {
    /// Serve on a new pseudo-terminal: prints its path on line 1 and the cube (facelet
    /// string as it sits in the robot, before any move) on line 2, then serves until killed.
    /// As it sits in the robot: U is the face on top, F the side a tilt brings to the top.
    #[arg(long)]
    pub pty: bool,
    /// Seed of the cube, the sensor noise and the sticker wear (1, as `run --sim`: the same cube).
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = crate::cli::args::seed)]
    pub seed: u64,
    /// Simulated seconds per wall second (at most 10000).
    #[arg(long, allow_negative_numbers = true, default_value_t = 1.0, value_parser = super::args::sim_speed)]
    pub speed: f64,
    /// Sticker palette.
    #[arg(long, value_enum, default_value_t = PaletteArg::Standard)]
    pub palette: PaletteArg,
    /// Faults: comma list of `drop[@N]` (the reply to command N lost; N is 1 when left
    /// out), `stall[@N]` (the first motor move from command N on stalls), `silent[@N]` (no
    /// reply from command N on), `latency=MS`, `jitter=MS` (seeded, ± MS per reply), `dropout@N=MS` (from command N the link loses everything for
    /// MS), `corrupt@N` (one seeded byte of command N's replies changed) and
    /// `misread[=A:B]` (stickers A and B, such as U3 and F3, read as each other until a layer
    /// turns; a seeded pair without a value); for the
    /// MindCub3r also `drop@pK`, `stall@pK`, `silent@pK`, `dropout@pK=MS`, `corrupt@pK` (the same at the
    /// K-th program on the brick), `wrong-device`, `swap=AC` or `swap=23` (two cables exchanged),
    /// `unplugged=P`, `reversed=M` (polarity left reversed), `jammed=M`, `free=M` (no end
    /// stop), `battery=MV` (millivolts), `covered` (sensor reads 0), `empty` (no cube),
    /// `short-turn[@K][=DEG]` / `overshoot[@K][=DEG]` (the K-th layer turn ends DEG table
    /// degrees short of / past the tray), `tilt-fail[@K]` (the K-th tilt does not roll the
    /// cube) and `slip[@K]=M[:DEG]` (motor M's gear skips DEG degrees at its K-th start);
    /// left-out K and DEG are seeded. With `--brick lms2012` all but `stall`, `reversed` and
    /// `battery` (cubot's own brick's).
    #[arg(long, default_value = "")]
    pub faults: String,
    /// Cube size.
    #[arg(long, value_enum, default_value_t = SizeArg::Three)]
    pub size: SizeArg,
    /// Start from this cube (facelet string as it sits in the robot: U on top, F the side a
    /// tilt brings up) instead of a random one.
    #[arg(long, value_name = "STATE")]
    pub start: Option<String>,
    #[command(flatten)]
    pub brick: super::args::BrickArgs,
    /// Transport latency added to every reply, in simulated ms (USB ≈ 10, Bluetooth ≈ 60).
    #[arg(long, allow_negative_numbers = true, default_value_t = 0.0, value_parser = super::args::latency_ms)]
    pub latency: f64,
    /// Which robot to simulate: the EV3 MindCub3r, or a line-protocol robot.
    #[arg(long, value_enum, default_value = "mindcub3r")]
    pub robot: RobotKind,
    /// Keep the simulator's own cube in FILE, rewritten whenever it changes: line 1 the
    /// facelet string (as it sits in the robot; a layer or the cube left out of square counts at its
    /// nearest quarter, as a person squaring it by hand would leave it), line 2 a form that
    /// is the same for any whole-cube rotation and renaming of its colours (so a reader sees
    /// whether a layer turned), line 3 `running` while a motor drives, else `idle`. For
    /// tests and campaigns that judge a host by the robot's real cube; a host never reads it.
    #[arg(long, value_name = "FILE")]
    pub state_file: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct RobotArgs {
    #[command(subcommand)]
    pub action: RobotAction,
    /// The brick's port: `usb` (or `usb:PATH`), a Bluetooth rfcomm tty, a simulator's pty, or
    /// the brick's name (see `cubot ports`). Default: the one EV3 on USB.
    #[arg(long, global = true, value_name = "PORT")]
    pub port: Option<PathBuf>,
    /// Start a simulated brick in this process instead of opening a port.
    #[arg(long, global = true, conflicts_with = "port")]
    pub sim: bool,
    /// With --sim: faults to inject, as `cubot sim --faults` takes them (e.g. `swap=AC`,
    /// `reversed=B`, `battery=6100`, `covered`, `empty`). `robot check --sim` always has
    /// the tray empty, as the check asks.
    #[arg(long, global = true, value_name = "SPEC")]
    pub faults: Option<String>,
    /// With --sim: the simulated cube's sticker palette.
    #[arg(long, global = true, value_enum, default_value_t = PaletteArg::Standard)]
    pub palette: PaletteArg,
    /// With --sim: seed of the simulated cube and sensor noise.
    #[arg(long, global = true, default_value_t = 1, allow_negative_numbers = true, value_parser = crate::cli::args::seed)]
    pub seed: u64,
    /// With --sim: simulated seconds per wall second (at most 10000) [default: 20].
    /// `calibrate-timings` measures at speed 1 and refuses it.
    #[arg(long, allow_negative_numbers = true, global = true, value_parser = super::args::sim_speed)]
    pub speed: Option<f64>,
    /// MindCub3r configuration (default: calibration/mindcub3r.toml if present, else the
    /// built-in defaults, which equal that file).
    #[arg(long, global = true, value_name = "FILE")]
    pub robot_config: Option<PathBuf>,
    /// Try a value without editing the file: `section.key=value` (e.g. `arm.hold=105`,
    /// `sensor_arm.edge=[-650,-650,-645,-640]`), checked as the file is; repeatable.
    #[arg(long = "set", global = true, value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    #[command(flatten)]
    pub view: ViewArgs,
    #[command(flatten)]
    pub brick: super::args::BrickArgs,
}

impl RobotArgs {
    /// The simulator's speed: `--speed`, or the default.
    fn sim_speed(&self) -> f64 {
        self.speed.unwrap_or(super::connect::DEFAULT_SIM_SPEED)
    }
}

#[derive(clap::Subcommand, Debug)]
pub enum RobotAction {
    /// Check the robot before a first run: the brick and its firmware, the battery, the
    /// device on every port (with the fix for each wrong one), polarity, homing, each motor
    /// moved a little and back, the colour sensor over the empty turntable. Exit 1 when
    /// something must be fixed. Take the cube out of the tray first.
    Check,
    /// Check the devices and home the tilt arm and the sensor arm.
    Home,
    /// Tilt the cube once (Front goes to Top).
    Tilt,
    /// Spin the whole cube by N quarter turns (+1 = y, -1 = y', 2).
    Spin {
        #[arg(allow_hyphen_values = true, value_parser = quarter_turns)]
        n: i8,
    },
    /// Turn the bottom layer by N quarter turns (+1 = D', -1 = D, 2 = D2).
    Turn {
        #[arg(allow_hyphen_values = true, value_parser = quarter_turns)]
        n: i8,
    },
    /// Tilt arm away or hold.
    Arm { position: ArmPos },
    /// Move the colour-sensor arm (edge and corner: the angle of sample SLOT 1-4).
    Sensor {
        position: SensorPos,
        #[arg(value_parser = clap::value_parser!(u8).range(1..=4))]
        slot: Option<u8>,
    },
    /// Read the colour sensor (RGB-RAW) with the sensor arm at POSITION (default centre;
    /// edge and corner at the angle of sample SLOT 1-4).
    Read {
        position: Option<SensorPos>,
        #[arg(value_parser = clap::value_parser!(u8).range(1..=4))]
        slot: Option<u8>,
    },
    /// Steps from standard input, one a line (`tilt`, `sensor edge 2`, `read`, `set
    /// arm.hold=105`, `show`, `help`, `quit`), on one connection: homed once, the sensor
    /// arm left where the last step put it.
    Session,
    /// Full colour-sensor scan, resolved (like `cubot scan --robot`, with more options).
    Scan(RobotScanArgs),
    /// Measure each primitive's time (and the link's round trips) on the robot, or on
    /// simulated bricks with --sim, and fit the planner's `[timings]`.
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
    /// Also write the raw readings (JSON, EV3 RGB-RAW counts, scale "ev3-raw") here: the
    /// input of `cubot calibrate SCAN` and `cubot resolve`.
    #[arg(long, value_name = "FILE")]
    pub raw_out: Option<PathBuf>,
    /// Rounds of re-reading doubtful stickers before giving up.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub rescans: u32,
    /// Print the best legal cube even when a rival is too close (exit 0).
    #[arg(long)]
    pub best_effort: bool,
    /// Colour profile (TOML from `cubot calibrate`) of this cube on this robot: the
    /// resolver's prior.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
}

pub fn ports(a: PortsArgs, g: &Global) -> CmdResult {
    let found = super::connect::find_ports(!a.no_ask)?;
    for f in &found {
        let brick = match &f.brick {
            Some(Ok(b)) => Some(format!(
                "EV3 {:?}, firmware {}, battery {:.1} V",
                b.name, b.firmware, b.battery_volts
            )),
            Some(Err(why)) => Some(format!("no brick answered: {why}")),
            None if a.no_ask => Some("not asked (--no-ask)".to_string()),
            None if f.kind != "USB" => Some(
                "not asked (neither Bluetooth nor an EV3's name): `--port PATH` tries it"
                    .to_string(),
            ),
            None => None,
        };
        if g.json {
            let b = match &f.brick {
                Some(Ok(b)) => {
                    json!({"name": b.name, "firmware": b.firmware, "battery_volts": b.battery_volts})
                }
                Some(Err(why)) => json!({"error": why}),
                None => serde_json::Value::Null,
            };
            json_line(&json!({"type": "port", "path": f.port, "kind": f.kind, "brick": b}));
        } else {
            outln!("{}\t{}\t{}", f.port, f.kind, brick.unwrap_or_default());
        }
    }
    if found.is_empty() && !g.json {
        errln!(
            "no bricks or serial ports found: plug the EV3 in by USB, or pair it over Bluetooth and bind it with {}",
            super::connect::RFCOMM_BIND
        );
    } else if !found.iter().any(|f| matches!(f.brick, Some(Ok(_)))) && !g.json && !a.no_ask {
        let asked = found.iter().filter(|f| f.brick.is_some()).count();
        let heard = if asked == 0 {
            format!(
                "no EV3 found ({} listed, none a brick's to ask)",
                super::output::plural(found.len(), "port")
            )
        } else {
            format!(
                "no EV3 answered ({} asked)",
                super::output::plural(asked, "port")
            )
        };
        errln!(
            "{heard}: plug the EV3 in by USB, or pair it over Bluetooth and bind it with {}; a line-protocol robot is not asked (give its port to --port with --robot line)",
            super::connect::RFCOMM_BIND
        );
    }
    if !cfg!(feature = "usb") && !g.quiet {
        errln!("note: this cubot was rebuilt without feature `usb`: bricks on USB are not listed");
    }
    if !cfg!(feature = "serial") && !g.quiet {
        errln!(
            "note: this cubot was rebuilt without feature `serial`: serial ports are not listed"
        );
    }
    Ok(Exit::Ok)
}

pub fn sim(a: SimArgs, g: &Global) -> CmdResult {
    if !a.pty {
        bail!("add --pty: the simulated brick serves on a pseudo-terminal (`cubot sim --pty`)");
    }
    let palette: Palette = a.palette.into();
    let faults: Faults = a.faults.parse()?;
    let size: Size = a.size.into();
    let start = match &a.start {
        Some(s) => Some(super::cube::parse_state(s, size).context("--start")?),
        None => None,
    };
    a.brick.check(true, a.robot == RobotKind::Mindcub3r)?;
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
        brick: a.brick.kind(),
        ..SimConfig::default()
    })?;
    // Ctrl-C is said from the moment the pty is announced.
    super::connect::until_ctrlc(SIM_ENDED, || -> CmdResult {
        announce_sim(g, "mindcub3r", handle.path(), handle.initial_cube())?;
        let mut kept = StateFile::new(a.state_file.as_deref());
        loop {
            kept.keep(&handle.squared_cube(), handle.motors_running())?;
            std::thread::sleep(std::time::Duration::from_millis(20));
            for line in handle.take_log() {
                if !g.quiet {
                    errln!("sim: {line}");
                }
            }
        }
    })
}

/// What `sim --pty` says as Ctrl-C ends it.
const SIM_ENDED: &str =
    "sim: ended (Ctrl-C); its pty is gone: a cubot still connected to it loses the link";

/// The cube's colours renamed a, b, c, ... in the order they first appear.
fn first_seen_names(cube: &FaceletCube) -> String {
    let mut names: Vec<crate::cube::Face> = Vec::new();
    cube.colors()
        .iter()
        .map(|c| {
            let i = names.iter().position(|n| n == c).unwrap_or_else(|| {
                names.push(*c);
                names.len() - 1
            });
            (b'a' + i as u8) as char
        })
        .collect()
}

/// `sim --state-file`: the simulator's cube kept in a file, replaced whole (write, then
/// rename) whenever it changes, so a reader never sees half a state.
struct StateFile<'a> {
    path: Option<&'a Path>,
    last: Option<String>,
}

impl<'a> StateFile<'a> {
    fn new(path: Option<&'a Path>) -> StateFile<'a> {
        StateFile { path, last: None }
    }

    fn keep(&mut self, cube: &FaceletCube, running: bool) -> anyhow::Result<()> {
        let Some(path) = self.path else {
            return Ok(());
        };
        let motors = if running { "running" } else { "idle" };
        let text = format!("{}\n{motors}", cube.to_letters());
        if self.last.as_deref() == Some(text.as_str()) {
            return Ok(());
        }
        let tmp = path.with_extension("tmp");
        let canonical = crate::robot::symmetry::Symmetry::all(false)
            .iter()
            .map(|s| {
                let mut c = cube.clone();
                let _ = c.apply(&s.rotation);
                first_seen_names(&c)
            })
            .min()
            .unwrap_or_default();
        let (facelets, motors) = text.split_once('\n').unwrap_or((&text, ""));
        std::fs::write(&tmp, format!("{facelets}\n{canonical}\n{motors}\n"))
            .and_then(|()| std::fs::rename(&tmp, path))
            .with_context(|| format!("cannot write the state file {}", path.display()))?;
        self.last = Some(text);
        Ok(())
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
    if !g.quiet && !g.json {
        let name = match robot {
            "line" => "line-protocol robot",
            _ => "MindCub3r",
        };
        errln!(
            "sim: a simulated {name} serves on {} (give it to --port); the line above is its cube in face letters, as it sits in the tray; Ctrl-C ends it",
            path.display()
        );
    }
    Ok(())
}

/// Where `robot ...` finds its brick. `robot check --sim` has the tray empty: the check
/// asks for the cube out of it.
fn place(a: &RobotArgs) -> Result<BrickPlace, anyhow::Error> {
    a.brick.check(a.sim, true)?;
    if !a.sim {
        super::connect::sim_only(
            a.faults.is_some(),
            a.sim_speed() != super::connect::DEFAULT_SIM_SPEED || super::given("speed"),
            a.palette != PaletteArg::Standard,
        )?;
    }
    let sim = if a.sim {
        // The user's list is parsed as given (its errors quote it), then the tray emptied.
        let mut faults: Faults = a.faults.clone().unwrap_or_default().parse()?;
        if matches!(a.action, RobotAction::Check) {
            faults.empty = true;
        }
        Some(SimConfig {
            seed: a.seed,
            speed: a.sim_speed(),
            palette: a.palette.into(),
            faults,
            brick: a.brick.kind(),
            ..SimConfig::default()
        })
    } else {
        None
    };
    Ok(BrickPlace {
        port: a.port.clone(),
        sim,
    })
}

impl From<SensorPos> for SensorPosition {
    fn from(p: SensorPos) -> SensorPosition {
        match p {
            SensorPos::Parked => SensorPosition::Parked,
            SensorPos::Clear => SensorPosition::Clear,
            SensorPos::Corner => SensorPosition::Corner,
            SensorPos::Edge => SensorPosition::Edge,
            SensorPos::Centre => SensorPosition::Centre,
        }
    }
}

/// The robot configuration of a step command: the file (or the default), with `--set`.
fn step_config(a: &RobotArgs) -> anyhow::Result<crate::robot::mindcub3r::Config> {
    let config = super::connect::robot_config(a.robot_config.as_deref())?;
    if a.set.is_empty() {
        return Ok(config);
    }
    session::apply_sets(&config, &a.set).context("--set")
}

pub fn robot(a: RobotArgs, g: &Global) -> CmdResult {
    let live = Live::start(
        &a.view,
        g,
        LiveOptions {
            stop: Some(stop_on_ctrlc()),
            // calibrate-timings runs its own simulated bricks, at speed 1.
            time_scale: match a.action {
                RobotAction::CalibrateTimings(_) => 1.0,
                _ if a.sim => a.sim_speed(),
                _ => 1.0,
            },
            ..LiveOptions::default()
        },
    )?;
    live.phase(&format!("robot {}", action_name(&a.action)));
    let r = robot_live(a, g, &live);
    live.ended(&r);
    r
}

/// The action's name as typed.
fn action_name(a: &RobotAction) -> String {
    let debug = format!("{a:?}");
    let name: String = debug
        .chars()
        .take_while(|c| c.is_alphanumeric())
        .enumerate()
        .flat_map(|(i, c)| {
            let dash = (i > 0 && c.is_uppercase()).then_some('-');
            dash.into_iter().chain(c.to_lowercase())
        })
        .collect();
    name
}

/// `spin N` / `turn N`: quarter turns, 1, -1, 2 or -2.
fn quarter_turns(text: &str) -> Result<i8, String> {
    match text.trim().parse::<i8>() {
        Ok(n) if matches!(n, 1 | -1 | 2 | -2) => Ok(n),
        _ => Err(format!(
            "a spin or turn takes 1, -1, 2 or -2 quarter turns, not {text}"
        )),
    }
}

fn robot_live(a: RobotArgs, g: &Global, live: &Live) -> CmdResult {
    if let RobotAction::Sensor {
        position,
        slot: Some(_),
    }
    | RobotAction::Read {
        position: Some(position),
        slot: Some(_),
    } = &a.action
    {
        if !matches!(position, SensorPos::Edge | SensorPos::Corner) {
            bail!("only edge and corner have slots 1-4");
        }
    }
    let place = place(&a)?;
    if let RobotAction::Scan(s) = &a.action {
        // Checked before the robot moves.
        super::color::profile_for(s.profile.as_deref(), crate::color::Scale::Ev3Raw, false)?;
        if let Some(p) = &s.raw_out {
            super::outfile::check_output(
                p,
                "--raw-out",
                super::outfile::Writes::File(crate::input::FileKind::Scan),
            )?;
        }
    }
    if let RobotAction::CalibrateTimings(c) = &a.action {
        if let Some(speed) = a.speed {
            super::timings::refuse_speed(speed)?;
        }
        let c = super::timings::CalibrateTimingsArgs {
            sim: a.sim,
            seed: a.seed,
            ..c.clone()
        };
        return super::timings::calibrate(&c, &place, a.robot_config.as_deref(), g);
    }
    let config = step_config(&a)?;
    if let RobotAction::Check = a.action {
        return check(&place, config, g, live);
    }
    let (mut r, _sim) = connect_brick(&place, config, g)?;
    let result = match &a.action {
        // A session's `show` names what differs from the file, `--set` included.
        RobotAction::Session => super::connect::robot_config(a.robot_config.as_deref())
            .and_then(|file| session::run_session(&mut r, &file, g, live, std::io::stdin().lock())),
        // A Ctrl-C while the step's move was under way: the move ended first, and the
        // step is a stop all the same (said so, exit 2), as everywhere the robot moves.
        action => run_action(&mut r, action, g, live).and_then(|exit| {
            r.check_interrupt()?;
            Ok(exit)
        }),
    };
    let result = stopped_on_error(&mut r, result);
    if let RobotAction::Scan(_) = a.action {
        return result.map_err(super::connect::scan_stopped);
    }
    result
}

/// `cubot robot check`: each finding printed as it is made; exit 1 when one must be fixed.
fn check(
    place: &BrickPlace,
    config: crate::robot::mindcub3r::Config,
    g: &Global,
    live: &Live,
) -> CmdResult {
    use crate::robot::mindcub3r::check::{check as run_check, Level};
    let BrickLink { link, sim } = brick_link(place)?;
    let brick = match sim {
        Some(_) => "the simulated brick".to_string(),
        None => format!("the brick on {}", link.name()),
    };
    let mut ev3 = crate::robot::ev3::driver::Ev3::new(link);
    if g.verbose >= 2 {
        ev3.set_log(|l| errln!("ev3: {l}"));
    }
    let mut rows = 0;
    let checked = run_check(ev3, config, Some(stop_on_ctrlc()), &mut |f| {
        rows += 1;
        live.text(&format!("{:?} {}: {}", f.level, f.topic, f.message));
        if g.json {
            json_line(
                &json!({"type": "check", "level": f.level, "topic": f.topic, "message": f.message}),
            );
        } else {
            let level = match f.level {
                Level::Ok => "ok",
                Level::Warn => "WARN",
                Level::Fail => "FAIL",
            };
            outln!("{level:<5} {:<14} {}", f.topic, f.message);
        }
    });
    let findings = match checked {
        Ok(findings) => findings,
        Err(RobotError::Interrupted { stopped, .. }) => {
            return Err(super::connect::user_stopped(format!(
                "robot check stopped ({}) after {}: {}; run it again for the rest",
                super::connect::stop_words(),
                super::output::plural(rows, "row"),
                crate::robot::mindcub3r::error::stop_note(stopped)
            )))
        }
        Err(RobotError::Ev3(e)) if e.link_failed() && rows > 0 => bail!(
            "robot check ended after {}: {brick} stopped answering ({e}); every motion on the brick is bounded, so its motors stop by themselves; check the link (the cable or Bluetooth, the brick switched on and its battery), then run `cubot robot check` again",
            super::output::plural(rows, "row"),
        ),
        Err(RobotError::Ev3(e @ crate::robot::ev3::driver::Ev3Error::Malformed { .. })) if rows > 0 => bail!(
            "robot check ended after {}: {e}; the robot stands still (a garbled reply ends the check, a moving motor stops by itself): run `cubot robot check` again",
            super::output::plural(rows, "row"),
        ),
        Err(e) => return Err(super::connect::brick_error(e.into(), &brick)),
    };
    let count = |l| findings.iter().filter(|f| f.level == l).count();
    let (fails, warns) = (count(Level::Fail), count(Level::Warn));
    if g.json {
        json_line(&json!({"type": "check-summary", "problems": fails, "warnings": warns}));
    } else if fails == 0 && warns == 0 {
        outln!("robot check: all well");
    } else {
        use super::output::plural;
        outln!(
            "robot check: {} to fix, {}",
            plural(fails, "problem"),
            plural(warns, "warning")
        );
    }
    Ok(if fails > 0 { Exit::No } else { Exit::Ok })
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
            // A scan that sees no cube: where a cube that is not there sits means nothing.
            let no_cube = e.chain().any(|c| {
                matches!(
                    c.downcast_ref::<crate::color::resolve::ResolveError>(),
                    Some(crate::color::resolve::ResolveError::NoCube(_))
                )
            });
            if interrupted {
                // "Ctrl-C: stopped after tilt; motors stopped; the cube's faces now ...".
                Err(e.context(super::connect::stop_words()))
            } else if no_cube {
                Err(anyhow::anyhow!(
                    "{}; {}; no layer turned (a scan only tilts and spins the cube): put the cube in the tray (or uncover the sensor), then scan again",
                    super::output::error_message(&e),
                    stop_note(stopped)
                ))
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

fn run_action(r: &mut MindCub3r, action: &RobotAction, g: &Global, live: &Live) -> CmdResult {
    let prim = match action {
        RobotAction::Check => unreachable!("robot check runs before connecting"),
        RobotAction::CalibrateTimings(_) => unreachable!("handled before connecting"),
        RobotAction::Home => {
            r.home()?;
            live.text("done: home");
            session::print_done(g, "home");
            return Ok(Exit::Ok);
        }
        RobotAction::Session => unreachable!("a session runs with the file's configuration"),
        RobotAction::Scan(s) => return scan_with(r, s, g, live),
        RobotAction::Tilt => Primitive::Tilt,
        RobotAction::Spin { n } => Primitive::Spin(*n),
        RobotAction::Turn { n } => Primitive::Turn(*n),
        RobotAction::Arm { position } => match position {
            ArmPos::Away => Primitive::ArmAway,
            ArmPos::Hold => Primitive::ArmHold,
        },
        RobotAction::Sensor { position, slot } => {
            let place = session::SensorPlace {
                position: (*position).into(),
                slot: slot.unwrap_or(1) as usize,
            };
            session::move_sensor(r, place.position, place.slot)?;
            r.finish(false)?;
            session::print_done(g, &format!("sensor {place}"));
            return Ok(Exit::Ok);
        }
        RobotAction::Read { position, slot } => {
            let place = session::SensorPlace {
                position: position.unwrap_or(SensorPos::Centre).into(),
                slot: slot.unwrap_or(1) as usize,
            };
            session::move_sensor(r, place.position, place.slot)?;
            let rgb = session::read_at(r, Some(place))?;
            r.finish(false)?;
            live.text(&format!("read {} {} {}", rgb[0], rgb[1], rgb[2]));
            session::print_reading(g, r, Some(place), rgb);
            return Ok(Exit::Ok);
        }
    };
    r.execute(prim)?;
    r.finish(false)?;
    live.text(&format!("done: {prim}"));
    session::print_done(g, &prim.to_string());
    Ok(Exit::Ok)
}

/// `cubot scan --robot --port PATH [--size N] [--raw-out FILE] [--best-effort]`.
pub fn scan_robot(
    place: &BrickPlace,
    robot_config: Option<&Path>,
    a: &RobotScanArgs,
    g: &Global,
    live: &Live,
) -> CmdResult {
    super::color::profile_for(a.profile.as_deref(), crate::color::Scale::Ev3Raw, false)?;
    if let Some(p) = &a.raw_out {
        super::outfile::check_output(
            p,
            "--raw-out",
            super::outfile::Writes::File(crate::input::FileKind::Scan),
        )?;
    }
    let (mut r, _sim) = connect_brick(place, super::connect::robot_config(robot_config)?, g)?;
    let res = scan_with(&mut r, a, g, live);
    stopped_on_error(&mut r, res)
}

fn scan_with(r: &mut MindCub3r, a: &RobotScanArgs, g: &Global, live: &Live) -> CmdResult {
    let raw_scale = Some(crate::color::Scale::Ev3Raw);
    let size: Size = a.size.into();
    r.home()?;
    let bar = progress_allowed(g).then(|| {
        let b = indicatif::ProgressBar::new(size.stickers() as u64);
        b.set_message("colour-sensor scan");
        b
    });
    if bar.is_none() && !g.quiet && !g.json {
        errln!(
            "scanning: {} stickers with the robot's sensor…",
            size.stickers()
        );
    }
    let mut scan: RawScan = r.scan(size, &mut |p| {
        live.event(&RunEvent::readings(
            raw_scale,
            false,
            p.readings.iter().copied(),
        ));
        if let Some(b) = &bar {
            b.set_position(p.done as u64);
        }
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    // A cube of another size than --size: said before anything is resolved.
    let top_centre = match size {
        Size::Two => Some(r.read_top_centre()?),
        Size::Three => None,
    };
    crate::job::scan::size_seen(&scan, top_centre)?;
    let opts = ResolveOptions {
        best_effort: a.best_effort,
        profile: super::color::profile_for(
            a.profile.as_deref(),
            crate::color::Scale::Ev3Raw,
            false,
        )?,
        ..ResolveOptions::default()
    };
    let mut round = 0;
    let outcome = loop {
        let outcome = resolve_scan(&scan, &opts);
        match &outcome {
            Ok(res) => live.event(&RunEvent::resolution(res)),
            Err(ResolveError::Ambiguous { best, .. }) => live.event(&RunEvent::resolution(best)),
            _ => {}
        }
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
                    errln!(
                        "re-reading {} doubtful stickers: {}",
                        doubtful.len(),
                        crate::color::resolve::facelet_names(&doubtful, size)
                    );
                }
                let fresh = r.rescan(&doubtful)?;
                live.event(&RunEvent::readings(
                    raw_scale,
                    true,
                    doubtful.iter().copied().zip(fresh.iter().copied()),
                ));
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
                    &json!({"type": "scan", "cube": res.cube.to_letters(), "confident": res.confident, "probability": res.probability(), "rescans": round}),
                );
            } else {
                outln!("{}", res.cube.to_letters());
                if !res.overruled.is_empty() && !g.quiet {
                    errln!(
                        "{}",
                        crate::cli::color::overruled_note(&res.overruled, res.cube.size())
                    );
                }
                if !res.confident && !g.quiet {
                    errln!(
                        "note: best effort, not sure: this cube is {} likely",
                        crate::cli::color::likelihood_text(&res)
                    );
                }
            }
            Ok(Exit::Ok)
        }
        Err(ResolveError::Ambiguous { doubtful, best, .. }) => {
            let names = crate::color::resolve::facelet_names(&doubtful, size);
            if g.json {
                json_line(
                    &json!({"type": "doubt", "doubtful": names.split_whitespace().collect::<Vec<_>>(), "best": best.cube.to_letters(), "probability": best.probability()}),
                );
            } else {
                outln!(
                    "doubt: stickers {names} {}, still after {}; best guess {}, {} likely; use --best-effort to take it",
                    crate::cli::color::doubt_basis(&best),
                    super::output::plural(round as usize, "re-read"),
                    best.cube.to_letters(),
                    crate::cli::color::likelihood_text(&best)
                );
            }
            Ok(Exit::No)
        }
        Err(e @ ResolveError::NoLegalCube { .. }) => {
            crate::cli::color::print_no_legal_cube(g, &e);
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
    super::connect::until_ctrlc(SIM_ENDED, || -> CmdResult {
        announce_sim(g, "line", handle.path(), &handle.initial_cube())?;
        let mut kept = StateFile::new(a.state_file.as_deref());
        loop {
            kept.keep(&handle.cube(), handle.motors_running())?;
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    })
}
