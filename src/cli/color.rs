//! `resolve`, `calibrate`, `synth-scan` (filled in by the colour work).

use super::{CmdResult, Global};

#[derive(clap::Args, Debug)]
pub struct ResolveArgs {
    pub scan: std::path::PathBuf,
}

#[derive(clap::Args, Debug)]
pub struct CalibrateArgs {
    pub scan: std::path::PathBuf,
}

#[derive(clap::Args, Debug)]
pub struct SynthScanArgs {}

pub fn resolve(_a: ResolveArgs, _g: &Global) -> CmdResult {
    anyhow::bail!("the colour resolver is not part of this build yet")
}

pub fn calibrate(_a: CalibrateArgs, _g: &Global) -> CmdResult {
    anyhow::bail!("the colour resolver is not part of this build yet")
}

pub fn synth_scan(_a: SynthScanArgs, _g: &Global) -> CmdResult {
    anyhow::bail!("the colour resolver is not part of this build yet")
}

#[derive(clap::Args, Debug)]
pub struct BenchResolveArgs {}

pub fn bench(_a: BenchResolveArgs, _g: &Global) -> CmdResult {
    anyhow::bail!("this benchmark is not part of this build yet")
}
