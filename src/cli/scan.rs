//! `scan`: from face images (`--images`), a camera (`--camera`) or the robot's colour
//! sensor (`--robot --port`). Each source lives with its own work; this file only routes.

use super::{CmdResult, Global};

#[derive(clap::Args, Debug)]
pub struct ScanArgs {
    /// A directory of six face images (U R F D L B, or rubiks-side-U.png naming).
    #[arg(long, value_name = "DIR")]
    pub images: Option<std::path::PathBuf>,
    /// A camera index (see `cubot camera list`).
    #[arg(long, value_name = "INDEX")]
    pub camera: Option<u32>,
    /// Scan with the robot's colour sensor (needs --port).
    #[arg(long)]
    pub robot: bool,
    /// Serial port of the robot.
    #[arg(long, value_name = "PATH")]
    pub port: Option<std::path::PathBuf>,
}

pub fn scan(a: ScanArgs, g: &Global) -> CmdResult {
    if a.robot {
        return super::robot::scan_robot(a.port.as_deref(), g);
    }
    anyhow::bail!("scanning is not part of this build yet")
}
