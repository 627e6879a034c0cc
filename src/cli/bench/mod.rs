//! `bench solve|resolve|scan|robot|run|bricks`: the benchmark harnesses, one file each, and the host
//! line every benchmark prints first (its figures mean little without the machine).
//!
//! Level: `cli`. The harnesses call the library directly; no command module depends on them.

use clap::Subcommand;
use serde_json::json;

use super::output::json_line;
use super::{CmdResult, Global};

mod bricks;
mod profiled;
mod realdata;
mod resolve;
mod resolve_args;
pub mod robot;
mod run;
mod scan;
mod solve;
mod stats;

/// The tools of one seeded whole run, as `run` has them by default: the resolver seeded
/// as the run, candidates up to `run`'s default length, and `search` for the robot-cost
/// search (`None`: off).
fn seeded_tools(
    solver: &crate::solver::Solver,
    seed: u64,
    search: Option<crate::solver::costed::CostedOptions>,
) -> crate::job::Tools<'_> {
    crate::job::Tools {
        solver,
        resolve: crate::color::resolve::ResolveOptions {
            seed,
            ..Default::default()
        },
        max_length: super::run::DEFAULT_MAX_LENGTH,
        search,
    }
}

pub use resolve_args::BenchResolveArgs;
pub use scan::BenchScanArgs;
pub use solve::BenchSolveArgs;

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub what: BenchWhat,
}

#[derive(Subcommand, Debug)]
pub enum BenchWhat {
    /// Solver speed and lengths, side by side with the min2phase crate.
    Solve(BenchSolveArgs),
    /// Colour resolution accuracy and speed on synthetic scans.
    Resolve(BenchResolveArgs),
    /// Sticker detection and sampling speed on camera frames.
    Scan(BenchScanArgs),
    /// Robot execution time of planned solutions on the simulator's timings.
    Robot(robot::BenchRobotArgs),
    /// The whole wait (connect, home, scan, solve, execute, verify) on the simulated MindCub3r.
    Run(run::BenchRunArgs),
    /// The same seeded jobs on cubot's simulated brick and on LEGO's firmware brick: logic
    /// differences (must be none) and physical ones with their sizes.
    Bricks(bricks::BenchBricksArgs),
}

pub fn bench(a: BenchArgs, g: &Global) -> CmdResult {
    print_host(g);
    match a.what {
        BenchWhat::Solve(a) => solve::bench(a, g),
        BenchWhat::Resolve(a) => resolve::bench(a, g),
        BenchWhat::Scan(a) => scan::bench(a, g),
        BenchWhat::Robot(a) => robot::bench(a, g),
        BenchWhat::Run(a) => run::bench(a, g),
        BenchWhat::Bricks(a) => bricks::bench(a, g),
    }
}

/// The machine a benchmark ran on: its figures mean little without it. The processor model
/// and the load average are read from `/proc` (Linux); elsewhere they are left out.
struct Host {
    cpu: Option<String>,
    cpus: usize,
    load: Option<[f64; 3]>,
}

impl Host {
    fn read() -> Host {
        let cpu = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        });
        let load = std::fs::read_to_string("/proc/loadavg").ok().and_then(|s| {
            let v: Vec<f64> = s
                .split_whitespace()
                .take(3)
                .filter_map(|w| w.parse().ok())
                .collect();
            v.try_into().ok()
        });
        Host {
            cpu,
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            load,
        }
    }
}

fn print_host(g: &Global) {
    let h = Host::read();
    if g.json {
        json_line(&json!({"type": "bench-host", "cpu": h.cpu, "cpus": h.cpus,
            "load_average": h.load}));
    } else {
        let load = h.load.map_or(String::new(), |l| {
            format!(", load average {:.2} {:.2} {:.2}", l[0], l[1], l[2])
        });
        outln!(
            "host: {}, {} CPU(s){}",
            h.cpu.as_deref().unwrap_or("unknown processor"),
            h.cpus,
            load
        );
    }
}
