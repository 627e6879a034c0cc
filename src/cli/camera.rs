//! `calibrate-camera`, `camera list` (filled in by the vision work).

use super::{CmdResult, Global};

#[derive(clap::Args, Debug)]
pub struct CalibrateCameraArgs {
    pub image: std::path::PathBuf,
}

#[derive(clap::Args, Debug)]
pub struct CameraArgs {}

pub fn calibrate_camera(_a: CalibrateCameraArgs, _g: &Global) -> CmdResult {
    anyhow::bail!("camera calibration is not part of this build yet")
}

pub fn camera(_a: CameraArgs, _g: &Global) -> CmdResult {
    anyhow::bail!("cameras are not part of this build yet")
}

#[derive(clap::Args, Debug)]
pub struct BenchScanArgs {}

pub fn bench(_a: BenchScanArgs, _g: &Global) -> CmdResult {
    anyhow::bail!("this benchmark is not part of this build yet")
}
