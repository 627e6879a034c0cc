//! `run`, `save`, `restore` (filled in by the pipeline work).

use super::{CmdResult, Global};

#[derive(clap::Args, Debug)]
pub struct RunArgs {}

#[derive(clap::Args, Debug)]
pub struct SaveArgs {
    pub file: std::path::PathBuf,
}

#[derive(clap::Args, Debug)]
pub struct RestoreArgs {
    pub file: std::path::PathBuf,
}

pub fn run(_a: RunArgs, _g: &Global) -> CmdResult {
    anyhow::bail!("the pipeline is not part of this build yet")
}

pub fn save(_a: SaveArgs, _g: &Global) -> CmdResult {
    anyhow::bail!("the pipeline is not part of this build yet")
}

pub fn restore(_a: RestoreArgs, _g: &Global) -> CmdResult {
    anyhow::bail!("the pipeline is not part of this build yet")
}

#[derive(clap::Args, Debug)]
pub struct BenchRobotArgs {}

pub fn bench(_a: BenchRobotArgs, _g: &Global) -> CmdResult {
    anyhow::bail!("this benchmark is not part of this build yet")
}
