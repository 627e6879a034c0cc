//! `robot calibrate-timings`: measures what each MindCub3r primitive takes on the robot (or
//! on simulated bricks at several link latencies) and fits the planner's timings: seconds
//! per primitive on a link without latency, plus the link round trips each waits for.
//!
//! The primitives are measured as runs use them: the planned executions of seeded random
//! cubes, so every context a run meets (the arm's position, the count the driver must read
//! first, the settle pause, the overlaps) is in the mean. Run from the host, each primitive
//! is timed on the wall clock from the moment it is sent until the robot confirms it; run
//! in chunks on the brick (`execution.on_brick`), each is timed by the brick's own clock
//! from the end of the one before (a chunk's last move that settles after its answer
//! counts for its own primitive, by the next program's record of waiting for it), and the
//! wall-clock time from one chunk to the next beyond the brick's clock (the link round
//! trip that the settling move did not hide) is shared equally among its primitives, so
//! the fitted round trips per primitive are fractions. The link's round
//! trip is the median of NOP pings. With samples at two or more latencies each primitive
//! is fitted as `seconds + round_trips × round_trip` by least squares; at one latency (a
//! real brick has one link) the round trips of the configuration are kept, as they
//! belong to the driver's protocol rather than to the motors, and only the seconds are
//! fitted.
//!
//! Level: `cli`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde_json::json;

use super::connect::load_solver;
use super::connect::{connect_brick, robot_config, BrickPlace};
use super::output::json_line;
use super::{CmdResult, Exit, Global};
use crate::cube::{random_state, FaceletCube, Size};
use crate::robot::mindcub3r::cost::{CostModel, RobotState};
use crate::robot::mindcub3r::model::{
    Orientation, Primitive, RoundTrips, SensorPosition, Timings, TIMING_KEYS,
};
use crate::robot::mindcub3r::planner::Planner;
use crate::robot::mindcub3r::{Config, MindCub3r, RobotError};
use crate::robot::sim::{spawn_pty, SimConfig};
use crate::solver::{SolveOptions, Solver};

#[derive(clap::Args, Debug, Clone)]
pub struct CalibrateTimingsArgs {
    /// `robot --sim`: measure simulated bricks started here (at speed 1, one per latency)
    /// instead of the brick on --port.
    #[arg(skip)]
    pub sim: bool,
    /// With --sim: the link latencies to measure at, ms (two or more fit the round trips).
    #[arg(long, value_delimiter = ',', default_value = "0,60")]
    pub latencies: Vec<u32>,
    /// Random cubes whose planned executions are measured, per link.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub cubes: u32,
    /// `robot --seed`: seed of the cubes (and of the simulated bricks).
    #[arg(skip)]
    pub seed: u64,
    /// Write the fitted timings into the robot configuration file given with
    /// --robot-config, replacing its `[timings]` section (a file that does not exist yet
    /// is made from the built-in defaults). The shipped calibration/mindcub3r.toml is
    /// written only with --force.
    #[arg(long)]
    pub write: bool,
    /// With --write: overwrite the shipped calibration/mindcub3r.toml.
    #[arg(long, requires = "write")]
    pub force: bool,
}

/// Refuses `--speed` (given explicitly, even at its default): the simulated bricks run at
/// speed 1, the robot's own. A primitive is timed on the wall clock (the brick's clock for
/// chunks on the brick, plus the wall-clock time between chunks); a simulator N times
/// faster divides the simulated motors' and link's share by N but not the host's own time,
/// so no one factor turns times measured at another speed into the robot's.
pub fn refuse_speed(speed: f64) -> Result<()> {
    bail!(
        "--speed {speed}: calibrate-timings measures at the robot's real speed (its simulated bricks at speed 1): times are read on the wall clock, and a faster simulator would shrink the motors' and the link's share but not the host's; leave --speed out (nothing was measured)"
    )
}

/// What `calibrate-timings` says it is about to do.
fn measuring_note(a: &CalibrateTimingsArgs) -> String {
    format!(
        "measuring: the plans of {} on {}, each primitive timed (about a minute a cube on each link)…",
        super::output::plural(a.cubes as usize, "random cube"),
        if a.sim {
            format!(
                "simulated bricks at {} ms latency, at speed 1",
                a.latencies
                    .iter()
                    .map(|l| l.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else {
            "the robot".to_string()
        }
    )
}

/// Where `--write` puts the timings, checked before anything is measured: the
/// `--robot-config` file (made from the defaults if it does not exist), or the shipped
/// file with `--force`.
fn write_target(a: &CalibrateTimingsArgs, config_path: Option<&Path>) -> Result<Option<PathBuf>> {
    if !a.write {
        return Ok(None);
    }
    let shipped = Path::new("calibration/mindcub3r.toml");
    let path = match config_path {
        Some(p) => p.to_path_buf(),
        None if shipped.is_file() => shipped.to_path_buf(),
        None => bail!(
            "--write needs a file to write: give --robot-config FILE (made from the built-in defaults if it does not exist); nothing was measured"
        ),
    };
    if super::common::is_shipped_config(&path) && !a.force {
        bail!(
            "--write would overwrite {}, the configuration shipped with cubot: copy it (`cp {0} my-robot.toml`) and pass --robot-config my-robot.toml, or add --force; nothing was measured",
            path.display()
        );
    }
    super::outfile::check_output(
        &path,
        "--write",
        super::outfile::Writes::File(crate::input::FileKind::RobotConfig),
    )?;
    Ok(Some(path))
}

/// Samples of one link: its round trip and each primitive's durations.
struct LinkSamples {
    label: String,
    round_trip: f64,
    durations: [Vec<f64>; 9],
}

/// The timing key a primitive is priced under (as [`CostModel::cost`] prices it), if any.
fn key_of(p: Primitive) -> Option<usize> {
    Some(match p {
        Primitive::ArmHold => 0,
        Primitive::ArmAway => 1,
        Primitive::Tilt => 2,
        Primitive::Spin(k) if k.abs() == 2 => 4,
        Primitive::Spin(_) => 3,
        Primitive::Turn(k) if k.abs() == 2 => 6,
        Primitive::Turn(_) => 5,
        Primitive::Sensor(_) => 7,
        Primitive::Read => 8,
    })
}

pub fn calibrate(
    a: &CalibrateTimingsArgs,
    place: &BrickPlace,
    config_path: Option<&Path>,
    g: &Global,
) -> CmdResult {
    let target = write_target(a, config_path)?;
    // A --robot-config file that does not exist yet is written from the defaults.
    let config_path = config_path.filter(|p| target.as_deref() != Some(*p) || p.exists());
    let config = robot_config(config_path)?;
    let solver = load_solver(g)?;
    if !g.quiet && !g.json {
        errln!("{}", measuring_note(a));
    }
    let links: Result<Vec<LinkSamples>> = if a.sim {
        if a.latencies.is_empty() {
            bail!("--latencies needs at least one value");
        }
        let brick = place
            .sim
            .as_ref()
            .map(|c| c.brick.clone())
            .unwrap_or_default();
        std::thread::scope(|scope| {
            let handles: Vec<_> = a
                .latencies
                .iter()
                .map(|&l| {
                    let (config, solver) = (&config, &solver);
                    let brick = brick.clone();
                    scope.spawn(move || measure_sim(a, config, solver, l, brick))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| bail!("a measurement panicked")))
                .collect::<Result<Vec<_>>>()
        })
    } else {
        let (mut r, _sim) = connect_brick(place, robot_config(config_path)?, g)?;
        let label = match (&place.port, &place.sim) {
            (Some(p), _) => p.display().to_string(),
            (None, Some(_)) => "simulated brick".to_string(),
            (None, None) => String::new(),
        };
        measure(&mut r, &config, &solver, a, label).map(|l| vec![l])
    };
    let links = links.map_err(|e| {
        let stopped = e
            .chain()
            .any(|c| matches!(c.downcast_ref::<RobotError>(), Some(RobotError::Interrupted { .. })));
        if stopped {
            e.context(format!(
                "calibrate-timings stopped: nothing was fitted{}; run the same command again to measure",
                if target.is_some() { " or written" } else { "" }
            ))
        } else {
            e
        }
    })?;
    let fitted = fit(&config.timings, &links);
    report(g, &config.timings, &fitted, &links);
    match target {
        Some(path) => {
            write_timings(&path, &fitted, &links)?;
            if !g.quiet {
                errln!("timings written to {}", path.display());
            }
        }
        None if !g.quiet && !g.json => errln!(
            "nothing written: add --write (with --robot-config FILE) to fit these timings into that file's [timings]"
        ),
        None => {}
    }
    Ok(Exit::Ok)
}

/// One simulated brick at `latency` ms, speed 1 (its clock is the wall clock).
fn measure_sim(
    a: &CalibrateTimingsArgs,
    config: &Config,
    solver: &Solver,
    latency: u32,
    brick: crate::robot::sim::lms2012::BrickKind,
) -> Result<LinkSamples> {
    let h = spawn_pty(SimConfig {
        seed: a.seed,
        speed: 1.0,
        latency_ms: latency as f64,
        brick,
        ..SimConfig::default()
    })?;
    let mut r = crate::job::connect::open_mindcub3r(h.path(), None, config.clone())
        .with_context(|| format!("simulated brick at {latency} ms"))?;
    r.set_interrupt(super::connect::stop_on_ctrlc());
    measure(
        &mut r,
        config,
        solver,
        a,
        format!("the simulator at {latency} ms latency"),
    )
}

/// Homes, pings, then runs and times the planned executions of `a.cubes` random cubes and
/// a few sensor-arm moves and readings.
fn measure(
    r: &mut MindCub3r,
    config: &Config,
    solver: &Solver,
    a: &CalibrateTimingsArgs,
    label: String,
) -> Result<LinkSamples> {
    use rand::SeedableRng;
    r.home()?;
    let round_trip = r.round_trip(15)?;
    let mut durations: [Vec<f64>; 9] = Default::default();
    let timed = |r: &mut MindCub3r, p: Primitive, durations: &mut [Vec<f64>; 9]| -> Result<()> {
        let t = Instant::now();
        r.execute(p)?;
        if let Some(k) = key_of(p) {
            durations[k].push(t.elapsed().as_secs_f64());
        }
        Ok(())
    };
    let planner = Planner::new(CostModel::new(config.timings.clone()));
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(a.seed);
    let solved = FaceletCube::solved(Size::Three);
    for _ in 0..a.cubes {
        let cube = random_state(Size::Three, &mut rng);
        let alg = solver
            .solve(&cube, &solved, &SolveOptions::default())?
            .into_iter()
            .next()
            .context("no solution")?;
        let plan = planner.plan(&alg, RobotState::new(Orientation::IDENTITY))?;
        // Every plan starts with the arm away, as after a scan.
        r.execute(Primitive::ArmAway)?;
        if config.execution.on_brick {
            chunked(r, &plan.primitives, &mut durations)?;
        } else {
            for &p in &plan.primitives {
                timed(r, p, &mut durations)?;
            }
        }
    }
    r.execute(Primitive::ArmAway)?;
    for _ in 0..3 {
        timed(r, Primitive::Sensor(SensorPosition::Centre), &mut durations)?;
        timed(r, Primitive::Read, &mut durations)?;
        timed(r, Primitive::Sensor(SensorPosition::Clear), &mut durations)?;
    }
    r.finish(false)?;
    Ok(LinkSamples {
        label,
        round_trip,
        durations,
    })
}

/// Runs `prims` in chunks on the brick as a run does. A primitive's time is the brick's
/// clock from the end of the one before it to its own end; a chunk's last primitive, when
/// the chunk answered while its last move still settled, also gets the time the next
/// program waited for that move (and the first primitive of that program loses it). What
/// the wall clock shows beyond the brick's clock, from sending a chunk to sending the next
/// (its link round trip and the host's time, less what the settling move hid), is shared
/// equally among the chunk's primitives. A chunk whose reply was lost is not timed.
fn chunked(r: &mut MindCub3r, prims: &[Primitive], durations: &mut [Vec<f64>; 9]) -> Result<()> {
    struct Sent {
        chunk: Vec<Primitive>,
        at: Instant,
        ends: Option<Vec<i32>>,
        settled: f64,
    }
    let mut sent: Vec<Sent> = Vec::new();
    let mut i = 0;
    while i < prims.len() {
        let n = r.chunk_len(&prims[i..]);
        let at = Instant::now();
        let run = r.execute_chunk(&prims[i..i + n])?;
        sent.push(Sent {
            chunk: prims[i..i + n].to_vec(),
            at,
            ends: run.ends_ms,
            settled: run.settled_ms.unwrap_or(0).max(0) as f64 / 1000.0,
        });
        i += n;
    }
    r.await_settled()?;
    let end = Instant::now();
    for (k, c) in sent.iter().enumerate() {
        let Some(ends) = &c.ends else {
            continue;
        };
        let next = sent.get(k + 1);
        let span = next
            .map_or(end, |n| n.at)
            .duration_since(c.at)
            .as_secs_f64();
        let mut brick: Vec<f64> = Vec::with_capacity(ends.len());
        let mut before = c.settled;
        for &e in ends {
            let e = e as f64 / 1000.0;
            brick.push((e - before).max(0.0));
            before = e;
        }
        if let (Some(last), Some(n)) = (brick.last_mut(), next) {
            *last += n.settled;
        }
        let on_brick = ends.last().copied().unwrap_or(0) as f64 / 1000.0;
        let share = (span - on_brick).max(0.0) / brick.len().max(1) as f64;
        for (&p, b) in c.chunk.iter().zip(brick) {
            if let Some(key) = key_of(p) {
                durations[key].push(b + share);
            }
        }
    }
    Ok(())
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Fits each primitive's seconds and round trips (see the module docs); a primitive with
/// no sample keeps its configured values.
fn fit(old: &Timings, links: &[LinkSamples]) -> Timings {
    let secs = old.seconds();
    let trips = old.round_trips.get();
    let mut out_s = secs;
    let mut out_k = trips;
    for i in 0..9 {
        let pts: Vec<(f64, f64)> = links
            .iter()
            .flat_map(|l| l.durations[i].iter().map(move |&d| (l.round_trip, d)))
            .collect();
        if pts.is_empty() {
            continue;
        }
        let n = pts.len() as f64;
        let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
        let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
        let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
        let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let spread = links
            .iter()
            .filter(|l| !l.durations[i].is_empty())
            .map(|l| l.round_trip)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
                (lo.min(x), hi.max(x))
            });
        let k = if spread.1 - spread.0 > 0.005 && sxx > 0.0 {
            (sxy / sxx).max(0.0)
        } else {
            trips[i]
        };
        out_k[i] = round(k, 2);
        out_s[i] = round((my - k * mx).max(0.001), 3);
    }
    Timings {
        round_trip: old.round_trip,
        round_trips: RoundTrips::from_values(out_k),
        ..Timings::from_seconds(out_s)
    }
}

/// A number as TOML writes a float (`0.0`, not `0`).
fn toml_float(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}

fn round(v: f64, places: i32) -> f64 {
    let f = 10f64.powi(places);
    (v * f).round() / f
}

fn report(g: &Global, old: &Timings, new: &Timings, links: &[LinkSamples]) {
    let (os, ns, nk) = (old.seconds(), new.seconds(), new.round_trips.get());
    if g.json {
        for l in links {
            json_line(&json!({
                "type": "timings-link", "link": l.label, "round_trip": l.round_trip,
                "samples": l.durations.iter().map(Vec::len).collect::<Vec<_>>(),
            }));
        }
        for (i, key) in TIMING_KEYS.iter().enumerate() {
            json_line(&json!({
                "type": "timing", "primitive": key, "seconds": ns[i], "round_trips": nk[i],
                "was": os[i],
                "measured": links.iter().map(|l| json!({
                    "round_trip": l.round_trip, "mean": mean(&l.durations[i]),
                    "samples": l.durations[i].len(),
                })).collect::<Vec<_>>(),
            }));
        }
        return;
    }
    for l in links {
        outln!("{}: round trip {:.1} ms", l.label, l.round_trip * 1000.0);
    }
    let mut head = format!("{:<18} {:>8}", "primitive", "table");
    for l in links {
        head.push_str(&format!(
            " {:>16}",
            format!("at {:.0} ms", l.round_trip * 1000.0)
        ));
    }
    outln!("{head} {:>9} {:>12}", "seconds", "round trips");
    for (i, key) in TIMING_KEYS.iter().enumerate() {
        let mut line = format!("{key:<18} {:>8.3}", os[i]);
        for l in links {
            let d = &l.durations[i];
            line.push_str(&format!(
                " {:>16}",
                mean(d).map_or("-".into(), |m| format!("{m:.3} ({})", d.len()))
            ));
        }
        outln!("{line} {:>9.3} {:>12.2}", ns[i], nk[i]);
    }
}

/// Replaces the `[timings]` section (and `[timings.round_trips]`) of the file with the
/// fitted values, keeping everything else as it is.
fn write_timings(path: &Path, t: &Timings, links: &[LinkSamples]) -> Result<()> {
    let text = if path.exists() {
        crate::input::read_text(path, crate::input::FileKind::RobotConfig)
            .with_context(|| format!("reading {}", path.display()))?
    } else {
        toml::to_string(&Config::default()).context("the built-in robot configuration")?
    };
    let mut out = String::new();
    let mut skipping = false;
    for line in text.lines() {
        let header = line.trim_start().starts_with('[');
        if header {
            let name = line.trim();
            skipping = name == "[timings]" || name == "[timings.round_trips]";
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
    }
    let measured_on: Vec<String> = links
        .iter()
        .map(|l| format!("{} ({:.1} ms round trip)", l.label, l.round_trip * 1000.0))
        .collect();
    let mut block = String::from("[timings]\n");
    block.push_str(
        "# Seconds per primitive on a link without latency, and the link round trips each waits\n\
         # for: a primitive costs seconds + round_trips x round_trip. Measured by\n",
    );
    block.push_str("# `cubot robot calibrate-timings` on:\n");
    for m in &measured_on {
        block.push_str(&format!("#   {m}\n"));
    }
    for (key, v) in TIMING_KEYS.iter().zip(t.seconds()) {
        block.push_str(&format!("{key} = {}\n", toml_float(v)));
    }
    block.push_str(&format!(
        "round_trip = {}       # seconds; a connected robot's own link is measured instead\n",
        toml_float(t.round_trip)
    ));
    block.push_str("\n[timings.round_trips]\n");
    for (key, v) in TIMING_KEYS.iter().zip(t.round_trips.get()) {
        block.push_str(&format!("{key} = {}\n", toml_float(v)));
    }
    let out = format!("{}\n\n{block}", out.trim_end());
    Config::parse(&out)
        .map_err(|why| anyhow::anyhow!("the rewritten file does not parse: {why}"))?;
    std::fs::write(path, out).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_measuring_note_counts_its_cubes() {
        let mut a = CalibrateTimingsArgs {
            sim: true,
            latencies: vec![0, 60],
            cubes: 1,
            seed: 1,
            write: false,
            force: false,
        };
        assert!(
            measuring_note(&a).starts_with("measuring: the plans of 1 random cube on simulated bricks at 0, 60 ms latency, at speed 1,"),
            "{}",
            measuring_note(&a)
        );
        a.cubes = 3;
        assert!(measuring_note(&a).contains("the plans of 3 random cubes on"));
    }
}
