//! `bench resolve`: colour resolution accuracy and speed on seeded synthetic scans (per
//! palette and scale), or, with `--realdata DIR`, the verdict on every real case file.
//!
//! Level: `cli`. Depends on `cube`, `color`, the shared cli helpers and the synthetic-scan
//! options of [`crate::cli::color`].

use rayon::prelude::*;
use serde_json::json;

use super::resolve_args::{outcome, BenchResolveArgs, Outcome};
use super::stats::{percentile_sorted, sort_times};
use crate::cli::color::one_synthetic;
use crate::cli::common::{thread_cpu, warn_if_cpu_clock_missing};
use crate::cli::output::json_line;
use crate::cli::{CmdResult, Exit, Global};
use crate::color::synth::{Conditions, Palette};
use crate::color::{resolve as resolve_scan, ResolveError, ResolveOptions, Scale};
use crate::cube::Size;

/// One synthetic scan's result: its outcome, the thread CPU time in ms, and for a doubt
/// the probability the resolver gave its best guess.
type Run = (Outcome, f64, Option<f64>);

/// Resolves one seeded synthetic scan.
fn resolve_synthetic(
    a: &BenchResolveArgs,
    model: crate::color::resolve::Model,
    palette: Palette,
    cond: Conditions,
    scale: Scale,
    k: u64,
) -> Run {
    let size = Size::from(a.size);
    let seed = a.seed.wrapping_add(k);
    let (cube, scan) = one_synthetic(palette, cond, scale, size, seed, None);
    let t = thread_cpu();
    let opts = ResolveOptions {
        doubt_threshold: a.doubt,
        model,
        ..ResolveOptions::default()
    };
    let r = resolve_scan(&scan, &opts);
    let ms = thread_cpu().saturating_sub(t).as_secs_f64() * 1e3;
    let p = match &r {
        Err(ResolveError::Ambiguous { best, .. }) => Some(best.probability()),
        _ => None,
    };
    (outcome(&r, &cube), ms, p)
}

/// With `-v`: the command that reproduces each scan that was not resolved exactly.
fn print_misses(a: &BenchResolveArgs, palette: Palette, scale: Scale, results: &[Run]) {
    for (k, r) in results.iter().enumerate() {
        if r.0 != Outcome::Exact {
            let what = match r.0 {
                Outcome::Wrong => "WRONG",
                Outcome::Doubt(_) => "doubt",
                _ => "no-cube",
            };
            outln!(
                "  {what}: cubot synth-scan --palette {} --scale {} --size {} --seed {} (+ the same condition flags)",
                palette.name(),
                scale.name(),
                a.size.n(),
                a.seed.wrapping_add(k as u64)
            );
        }
    }
}

/// One row of the table: the counts of each outcome and the CPU time quantiles.
fn print_row(g: &Global, a: &BenchResolveArgs, palette: Palette, scale: Scale, results: &[Run]) {
    let n = results.len().max(1) as f64;
    let count = |o: Outcome| results.iter().filter(|r| r.0 == o).count();
    let mut times: Vec<f64> = results.iter().map(|r| r.1).collect();
    sort_times(&mut times);
    let median = percentile_sorted(&times, 50).unwrap_or(0.0);
    let p99 = percentile_sorted(&times, 99).unwrap_or(0.0);
    let (ex, dz, right, wr, inv) = (
        count(Outcome::Exact),
        count(Outcome::Doubt(true)) + count(Outcome::Doubt(false)),
        count(Outcome::Doubt(true)),
        count(Outcome::Wrong),
        count(Outcome::Invalid),
    );
    // The probability the doubted best guesses were given, on average.
    let stated: Vec<f64> = results.iter().filter_map(|r| r.2).collect();
    let stated = stated.iter().sum::<f64>() / stated.len().max(1) as f64;
    if g.json {
        json_line(
            &json!({"type": "bench-resolve", "palette": palette.name(), "scale": scale.name(), "size": a.size.n(), "scans": results.len(), "exact": ex, "doubt": dz, "doubt_best_guess_right": right, "doubt_mean_probability": stated, "wrong": wr, "no_cube": inv, "median_ms": median, "p99_ms": p99}),
        );
    } else {
        outln!(
            "{:<12} {:<8} {:>7} {:>9.2} {:>8.2} {:>17} {:>7} {:>7} {:>10.3} {:>10.3}",
            palette.name(),
            scale.name(),
            results.len(),
            100.0 * ex as f64 / n,
            100.0 * dz as f64 / n,
            if dz == 0 {
                "-".to_string()
            } else {
                format!("{right}/{dz} ({:.0} %)", 100.0 * stated)
            },
            wr,
            inv,
            median,
            p99
        );
    }
}

pub fn bench(a: BenchResolveArgs, g: &Global) -> CmdResult {
    if let Some(dir) = &a.realdata {
        return if a.cross_validate {
            super::realdata::cross_validate(dir, &a, g)
        } else if a.with_profile {
            super::profiled::bench_realdata(dir, &a, g)
        } else {
            super::realdata::bench_realdata(dir, &a, g)
        };
    }
    let palettes: Vec<Palette> = if a.palette.is_empty() {
        Palette::ALL.to_vec()
    } else {
        a.palette.iter().map(|&p| p.into()).collect()
    };
    let model = super::realdata::model_of(&a.model)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(a.threads.max(1))
        .build()?;
    if a.with_profile {
        return super::profiled::bench_synthetic(&a, g, &palettes, model, &pool);
    }
    if !g.json {
        outln!(
            "{:<12} {:<8} {:>7} {:>9} {:>8} {:>17} {:>7} {:>7} {:>10} {:>10}",
            "palette",
            "scale",
            "scans",
            "exact%",
            "doubt%",
            "guess right (said)",
            "WRONG",
            "no-cube",
            "median cpu ms",
            "p99 cpu ms"
        );
    }
    for &palette in &palettes {
        for &scale in &a.scale {
            let cond = a.conditions.apply(Conditions::for_palette(palette));
            let results: Vec<Run> = pool.install(|| {
                (0..a.count)
                    .into_par_iter()
                    .map(|k| resolve_synthetic(&a, model, palette, cond, scale, k))
                    .collect()
            });
            if g.verbose > 0 && !g.json {
                print_misses(&a, palette, scale, &results);
            }
            print_row(g, &a, palette, scale, &results);
        }
    }
    warn_if_cpu_clock_missing();
    Ok(Exit::Ok)
}
