//! `scan`: from face images (`--images`), a camera (`--camera`) or the robot's colour
//! sensor (`--robot --port`). Each source lives with its own work; this file only routes.

use super::args::SizeArg;
use super::{CmdResult, Global};

#[derive(clap::Args, Debug)]
pub struct ScanArgs {
    /// A directory of six face images (U R F D L B, or rubiks-side-U.png naming). One
    /// source at a time: --images, --camera or --robot.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["camera", "robot"])]
    pub images: Option<std::path::PathBuf>,
    /// A camera index (see `cubot camera list`).
    #[arg(long, value_name = "INDEX", conflicts_with = "robot")]
    pub camera: Option<u32>,
    /// Scan with the robot's colour sensor (--port, the one EV3 on USB by default, or --sim).
    #[arg(long)]
    pub robot: bool,
    /// With --robot: the brick's port (`usb`, a Bluetooth rfcomm tty, or its name; default:
    /// the one EV3 on USB).
    #[arg(long, value_name = "PORT", conflicts_with = "sim")]
    pub port: Option<std::path::PathBuf>,
    /// With --robot: scan on a simulated MindCub3r started in this process.
    #[arg(long)]
    pub sim: bool,
    /// With --sim: seed of the simulated cube and its sensor noise.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = crate::cli::args::seed)]
    pub seed: u64,
    /// With --sim: the simulated cube's sticker palette.
    #[arg(long, value_enum, default_value_t = super::args::PaletteArg::Standard)]
    pub palette: super::args::PaletteArg,
    /// With --sim: faults to inject, as `cubot sim --faults` takes them.
    #[arg(long, value_name = "SPEC")]
    pub faults: Option<String>,
    /// With --sim: simulated seconds per wall second (1: real time).
    #[arg(long, default_value_t = super::connect::DEFAULT_SIM_SPEED, value_parser = super::args::sim_speed)]
    pub speed: f64,
    /// MindCub3r configuration for `--robot` (default: calibration/mindcub3r.toml if
    /// present).
    #[arg(long, value_name = "FILE")]
    pub robot_config: Option<std::path::PathBuf>,
    /// Camera rig (from `cubot calibrate-camera`): face orientation and fixed sticker
    /// regions.
    #[arg(long, value_name = "FILE")]
    pub rig: Option<std::path::PathBuf>,
    /// Detect the stickers even where the rig stores their regions.
    #[arg(long)]
    pub detect: bool,
    /// Cube size; default from the rig, else 3.
    #[arg(long, value_enum)]
    pub size: Option<SizeArg>,
    /// Write the raw readings (URFDLB) as JSON in the shape of a case file, in the
    /// scanner's scale: 8-bit sRGB from images or a camera, EV3 RGB-RAW counts from
    /// --robot. The input of `cubot calibrate SCAN` and `cubot resolve`.
    #[arg(long, value_name = "FILE")]
    pub raw_out: Option<std::path::PathBuf>,
    /// Colour profile (TOML from `cubot calibrate`) learned with this scanner: the
    /// resolver's prior. Checked against the scanner's scale before scanning.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<std::path::PathBuf>,
    /// Write each face image with the detected grid, sampled regions and colours drawn.
    #[arg(long, value_name = "DIR")]
    pub annotate: Option<std::path::PathBuf>,
    /// Print the most likely cube even when the resolver is not sure.
    #[arg(long)]
    pub best_effort: bool,
    #[command(flatten)]
    pub view: super::view::ViewArgs,
}

pub fn scan(a: ScanArgs, g: &Global) -> CmdResult {
    if a.sim && !a.robot {
        anyhow::bail!("--sim scans on a simulated robot: add --robot (`cubot scan --robot --sim`)");
    }
    if !a.sim {
        super::connect::sim_only(
            a.faults.is_some(),
            a.speed != super::connect::DEFAULT_SIM_SPEED || super::given("speed"),
            a.palette != super::args::PaletteArg::Standard,
        )?;
    }
    let live = super::view::Live::start(
        &a.view,
        g,
        super::view::LiveOptions {
            stop: Some(super::connect::stop_on_ctrlc()),
            ..Default::default()
        },
    )?;
    let r = scan_live(a, g, &live);
    live.ended(&r);
    r
}

fn scan_live(a: ScanArgs, g: &Global, live: &super::view::Live) -> CmdResult {
    if a.robot {
        let sim = if a.sim {
            Some(crate::robot::sim::SimConfig {
                seed: a.seed,
                speed: a.speed,
                palette: a.palette.into(),
                faults: a.faults.as_deref().unwrap_or("").parse()?,
                ..crate::robot::sim::SimConfig::default()
            })
        } else {
            None
        };
        let place = super::connect::BrickPlace {
            port: a.port.clone(),
            sim,
        };
        let opts = super::robot::RobotScanArgs {
            size: a.size.unwrap_or(SizeArg::Three),
            rescans: 2,
            raw_out: a.raw_out,
            best_effort: a.best_effort,
            profile: a.profile,
        };
        return super::robot::scan_robot(&place, a.robot_config.as_deref(), &opts, g, live);
    }
    if a.images.is_some() || a.camera.is_some() {
        return super::scan_images::scan(
            super::scan_images::ImageScan {
                images: a.images,
                camera: a.camera,
                rig: a.rig,
                detect: a.detect,
                size: a.size.map(SizeArg::n),
                raw_out: a.raw_out,
                annotate: a.annotate,
                best_effort: a.best_effort,
                profile: a.profile,
            },
            g,
            live,
        );
    }
    anyhow::bail!(
        "say what to scan: --images DIR, --camera INDEX, or --robot (with --port PORT, or --sim)"
    )
}
