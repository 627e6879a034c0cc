//! `solve`, `tables` (filled in by the solver work).

use super::{CmdResult, Global};

#[derive(clap::Args, Debug)]
pub struct SolveArgs {
    pub state: String,
}

#[derive(clap::Args, Debug)]
pub struct TablesArgs {}

pub fn solve(_a: SolveArgs, _g: &Global) -> CmdResult {
    anyhow::bail!("the solver is not part of this build yet")
}

pub fn tables(_a: TablesArgs, _g: &Global) -> CmdResult {
    anyhow::bail!("the solver is not part of this build yet")
}

#[derive(clap::Args, Debug)]
pub struct BenchSolveArgs {}

pub fn bench(_a: BenchSolveArgs, _g: &Global) -> CmdResult {
    anyhow::bail!("this benchmark is not part of this build yet")
}
