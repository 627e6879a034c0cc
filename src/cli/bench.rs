//! `bench solve|resolve|scan|robot`: each benchmark lives with its own work; this file
//! only routes.

use clap::Subcommand;

use super::{CmdResult, Global};

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub what: BenchWhat,
}

#[derive(Subcommand, Debug)]
pub enum BenchWhat {
    /// Solver speed and lengths, side by side with the min2phase crate.
    Solve(super::solve::BenchSolveArgs),
    /// Colour resolution accuracy and speed on synthetic scans.
    Resolve(super::color::BenchResolveArgs),
    /// Sticker detection and sampling speed on camera frames.
    Scan(super::camera::BenchScanArgs),
    /// Robot execution time of planned solutions on the simulator's timings.
    Robot(super::run::BenchRobotArgs),
}

pub fn bench(a: BenchArgs, g: &Global) -> CmdResult {
    match a.what {
        BenchWhat::Solve(a) => super::solve::bench(a, g),
        BenchWhat::Resolve(a) => super::color::bench(a, g),
        BenchWhat::Scan(a) => super::camera::bench(a, g),
        BenchWhat::Robot(a) => super::run::bench(a, g),
    }
}
