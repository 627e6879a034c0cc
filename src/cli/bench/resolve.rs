//! `bench resolve`: colour resolution accuracy and speed on seeded synthetic scans (per
//! palette and scale), or, with `--realdata DIR`, the verdict on every real case file.
//!
//! Level: `cli`. Depends on `cube`, `color`, the shared cli helpers and the synthetic-scan
//! options of [`crate::cli::color`].

use rayon::prelude::*;
use serde_json::json;

use super::resolve_args::{outcome, BenchResolveArgs, Outcome, UnreadFace};
use super::stats::{percentile_sorted, sort_times};
use crate::cli::color::one_synthetic;
use crate::cli::common::{thread_cpu, warn_if_cpu_clock_missing};
use crate::cli::output::json_line;
use crate::cli::{CmdResult, Exit, Global};
use crate::color::synth::{Conditions, Palette};
use crate::color::{resolve as resolve_scan, ResolveError, ResolveOptions, Scale};
use crate::cube::{prove, Size};

/// One synthetic scan's result.
struct Run {
    outcome: Outcome,
    /// Thread CPU time of the resolution (ms).
    ms: f64,
    /// For a doubt, the probability the resolver gave its best guess.
    stated: Option<f64>,
    /// Whether the stickers read prove the cube (every real cube that shows their colours
    /// is this one): always with six faces; with one unread, not when the unread face's
    /// pieces can be placed in more than one legal way.
    determined: bool,
}

/// Resolves one seeded synthetic scan, with one face left unread if `unread` says so.
fn resolve_synthetic(
    a: &BenchResolveArgs,
    model: crate::color::resolve::Model,
    palette: Palette,
    cond: Conditions,
    scale: Scale,
    unread: UnreadFace,
    k: u64,
) -> Run {
    let size = Size::from(a.size);
    let seed = a.seed.wrapping_add(k);
    let (cube, scan) = one_synthetic(palette, cond, scale, size, seed, None);
    let scan = unread.apply(&scan);
    let t = thread_cpu();
    let opts = ResolveOptions {
        doubt_threshold: a.doubt,
        model,
        ..ResolveOptions::default()
    };
    let r = resolve_scan(&scan, &opts);
    let ms = thread_cpu().saturating_sub(t).as_secs_f64() * 1e3;
    let stated = match &r {
        Err(ResolveError::Ambiguous { best, .. }) => Some(best.probability()),
        _ => None,
    };
    let determined = scan.is_complete() || prove(&cube, &scan.read_mask()).is_proven();
    Run {
        outcome: outcome(&r, &cube),
        ms,
        stated,
        determined,
    }
}

/// With `-v`: the command that reproduces each scan that was not resolved exactly.
fn print_misses(
    a: &BenchResolveArgs,
    palette: Palette,
    scale: Scale,
    unread: UnreadFace,
    results: &[Run],
) {
    let unread = match unread.0 {
        Some(f) => format!(", face {f} left unread"),
        None => String::new(),
    };
    for (k, r) in results.iter().enumerate() {
        if r.outcome != Outcome::Exact {
            let what = match r.outcome {
                Outcome::Wrong => "WRONG",
                Outcome::Doubt(_) => "doubt",
                _ => "no-cube",
            };
            outln!(
                "  {what}: cubot synth-scan --palette {} --scale {} --size {} --seed {} (+ the same condition flags{unread})",
                palette.name(),
                scale.name(),
                a.size.n(),
                a.seed.wrapping_add(k as u64)
            );
        }
    }
}

/// One row of the table: the counts of each outcome and the CPU time quantiles (and, with
/// `--unread-face`, which face was left unread).
fn print_row(
    g: &Global,
    a: &BenchResolveArgs,
    palette: Palette,
    scale: Scale,
    unread: Option<UnreadFace>,
    results: &[Run],
) {
    let n = results.len().max(1) as f64;
    let count = |o: Outcome| results.iter().filter(|r| r.outcome == o).count();
    let mut times: Vec<f64> = results.iter().map(|r| r.ms).collect();
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
    let stated: Vec<f64> = results.iter().filter_map(|r| r.stated).collect();
    // Scans the read stickers do not determine, and how many of them had a confident
    // answer (a guess, whether or not it was right).
    let undetermined = results.iter().filter(|r| !r.determined).count();
    let sure_anyway = results
        .iter()
        .filter(|r| !r.determined && matches!(r.outcome, Outcome::Exact | Outcome::Wrong))
        .count();
    let stated = stated.iter().sum::<f64>() / stated.len().max(1) as f64;
    if g.json {
        let mut row = json!({"type": "bench-resolve", "palette": palette.name(), "scale": scale.name(), "size": a.size.n(), "scans": results.len(), "exact": ex, "doubt": dz, "doubt_best_guess_right": right, "doubt_mean_probability": stated, "wrong": wr, "no_cube": inv, "median_ms": median, "p99_ms": p99});
        if let Some(u) = unread {
            row["unread"] = json!(u.name());
            row["undetermined"] = json!(undetermined);
            row["undetermined_confident"] = json!(sure_anyway);
        }
        json_line(&row);
    } else {
        outln!(
            "{:<12} {:<8}{} {:>7} {:>9.2} {:>8.2} {:>17} {:>7} {:>7} {:>10.3} {:>10.3}",
            palette.name(),
            scale.name(),
            unread.map_or(String::new(), |u| {
                let sure = if sure_anyway > 0 {
                    format!(" ({sure_anyway} sure)")
                } else {
                    String::new()
                };
                format!(" {:<6} {:>12}", u.name(), format!("{undetermined}{sure}"))
            }),
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
    // Without `--unread-face`, every face read and no column for it.
    let unread: Vec<Option<UnreadFace>> = if a.unread_face.is_empty() {
        vec![None]
    } else {
        a.unread_face.iter().copied().map(Some).collect()
    };
    if !g.json {
        outln!(
            "{:<12} {:<8}{} {:>7} {:>9} {:>8} {:>17} {:>7} {:>7} {:>10} {:>10}",
            "palette",
            "scale",
            if a.unread_face.is_empty() {
                String::new()
            } else {
                format!(" {:<6} {:>12}", "unread", "undetermined")
            },
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
            for &u in &unread {
                let cond = a.conditions.apply(Conditions::for_palette(palette));
                let face = u.unwrap_or(UnreadFace(None));
                let results: Vec<Run> = pool.install(|| {
                    (0..a.count)
                        .into_par_iter()
                        .map(|k| resolve_synthetic(&a, model, palette, cond, scale, face, k))
                        .collect()
                });
                if g.verbose > 0 && !g.json {
                    print_misses(&a, palette, scale, face, &results);
                }
                print_row(g, &a, palette, scale, u, &results);
            }
        }
    }
    warn_if_cpu_clock_missing();
    Ok(Exit::Ok)
}
