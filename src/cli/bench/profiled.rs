//! `bench resolve --with-profile`: what a colour profile learned from a solved scan of the
//! same cube changes. Every scan is resolved twice, without a profile and with one, and
//! the two sets of verdicts are set side by side.
//!
//! Synthetic: the profile is learned (`calibrate`) from a scan of the same cube, solved,
//! under the same light and camera or sensor (the same appearance: wear, cast, exposure),
//! with fresh read noise: `cubot synth-scan --state solved` with the scan's seed and
//! conditions. Real data (`--realdata DIR`): each labelled scan of a solved cube
//! is a profile for the other scans of its source with the same size and scale, and for
//! the scans re-dealt from them (`--redeal N`), never for its own.
//!
//! Level: `cli`. Depends on `cube`, `color` and the other benchmark files.

use std::collections::BTreeMap;
use std::path::Path;

use rayon::prelude::*;
use serde_json::json;

use super::realdata::{judge, load_cases, trials, Judged, Verdict};
use super::resolve_args::{outcome, BenchResolveArgs, Outcome};
use crate::cli::color::one_synthetic;
use crate::cli::output::json_line;
use crate::cli::{CmdResult, Exit, Global};
use crate::color::calibrate::calibrate;
use crate::color::resolve::{profile_fits_scale, Model};
use crate::color::synth::{Conditions, Palette};
use crate::color::{resolve as resolve_scan, ResolveOptions, Scale};
use crate::cube::{FaceletCube, Size};

/// Counts of outcomes without and with the profile.
#[derive(Clone, Default)]
struct Pair {
    scans: usize,
    /// Calibration refused (the solved scan did not resolve to a solved cube): the scan
    /// is resolved without a profile both times.
    refused: usize,
    without: [usize; 4],
    with: [usize; 4],
    /// The best guesses' margins (calibrated nats), without and with.
    margins: (Vec<f64>, Vec<f64>),
}

fn name(o: Outcome) -> &'static str {
    match o {
        Outcome::Exact => "exact",
        Outcome::Doubt(_) => "doubt",
        Outcome::Wrong => "WRONG",
        Outcome::Invalid => "no cube",
    }
}

fn slot(o: Outcome) -> usize {
    match o {
        Outcome::Exact => 0,
        Outcome::Doubt(_) => 1,
        Outcome::Wrong => 2,
        Outcome::Invalid => 3,
    }
}

/// One synthetic scan resolved without and with a profile learned from the same cube,
/// solved: the two outcomes, and whether calibration was refused.
fn one(
    a: &BenchResolveArgs,
    model: Model,
    palette: Palette,
    cond: Conditions,
    scale: Scale,
    k: u64,
) -> (Outcome, Outcome, bool) {
    let size = Size::from(a.size);
    let seed = a.seed.wrapping_add(k);
    let (cube, scan) = one_synthetic(palette, cond, scale, size, seed, None);
    // The same cube and light, solved (`synth-scan --state solved` with the same seed).
    let (_, solved) = one_synthetic(
        palette,
        cond,
        scale,
        size,
        seed,
        Some(&FaceletCube::solved(size)),
    );
    let profile = calibrate(&solved, None, 1).ok();
    let opts = ResolveOptions {
        doubt_threshold: a.doubt,
        model,
        ..ResolveOptions::default()
    };
    let without = outcome(&resolve_scan(&scan, &opts), &cube);
    let refused = profile.is_none();
    let with = match profile {
        Some(p) => {
            let opts = ResolveOptions {
                profile: Some(p),
                ..opts
            };
            outcome(&resolve_scan(&scan, &opts), &cube)
        }
        None => without,
    };
    (without, with, refused)
}

/// `bench resolve --with-profile` on synthetic scans: one row per palette and scale.
pub fn bench_synthetic(
    a: &BenchResolveArgs,
    g: &Global,
    palettes: &[Palette],
    model: Model,
    pool: &rayon::ThreadPool,
) -> CmdResult {
    if !g.json {
        outln!(
            "{:<12} {:<8} {:>6}   {:>17} {:>17} {:>13} {:>8}",
            "palette",
            "scale",
            "scans",
            "exact: no profile",
            "doubt: no profile",
            "WRONG: no",
            "refused"
        );
        outln!(
            "{:<12} {:<8} {:>6}   {:>17} {:>17} {:>13}",
            "",
            "",
            "",
            "-> profile",
            "-> profile",
            "-> profile"
        );
    }
    for &palette in palettes {
        for &scale in &a.scale {
            let cond = a.conditions.apply(Conditions::for_palette(palette));
            let results: Vec<(Outcome, Outcome, bool)> = pool.install(|| {
                (0..a.count)
                    .into_par_iter()
                    .map(|k| one(a, model, palette, cond, scale, k))
                    .collect()
            });
            let mut p = Pair::default();
            if g.verbose > 0 && !g.json {
                for (k, r) in results.iter().enumerate() {
                    if r.0 != r.1 {
                        outln!(
                            "  seed {}: {} -> {}",
                            a.seed.wrapping_add(k as u64),
                            name(r.0),
                            name(r.1)
                        );
                    }
                }
            }
            for (w, p2, refused) in results {
                p.scans += 1;
                p.without[slot(w)] += 1;
                p.with[slot(p2)] += 1;
                p.refused += usize::from(refused);
            }
            if g.json {
                json_line(
                    &json!({"type": "bench-resolve-profile", "palette": palette.name(),
                    "scale": scale.name(), "size": a.size.n(), "scans": p.scans,
                    "refused": p.refused, "without": counts(&p.without), "with": counts(&p.with)}),
                );
            } else {
                let arrow = |i: usize| format!("{} -> {}", p.without[i], p.with[i]);
                outln!(
                    "{:<12} {:<8} {:>6}   {:>17} {:>17} {:>13} {:>8}",
                    palette.name(),
                    scale.name(),
                    p.scans,
                    arrow(0),
                    arrow(1),
                    arrow(2),
                    p.refused
                );
            }
        }
    }
    Ok(Exit::Ok)
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn counts(c: &[usize; 4]) -> serde_json::Value {
    json!({"exact": c[0], "doubt": c[1], "wrong": c[2], "no_cube": c[3]})
}

/// A real-data verdict as a synthetic outcome (a confident legal answer to an unlabelled
/// scan counts as exact: there is nothing to compare it with).
fn as_outcome(v: Verdict) -> Outcome {
    match v {
        Verdict::Exact | Verdict::Legal => Outcome::Exact,
        Verdict::Doubt(r) => Outcome::Doubt(r == Some(true)),
        Verdict::Wrong => Outcome::Wrong,
        Verdict::Illegal | Verdict::NoCube => Outcome::Invalid,
    }
}

/// `bench resolve --realdata DIR --with-profile`.
pub fn bench_realdata(dir: &Path, a: &BenchResolveArgs, g: &Global) -> CmdResult {
    let cases = load_cases(dir)?;
    let trials = trials(&cases, a.redeal, a.seed);
    let model = super::realdata::model_of(&a.model)?;
    let base = ResolveOptions {
        seed: a.seed,
        doubt_threshold: a.doubt,
        model,
        ..ResolveOptions::default()
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(a.threads.max(1))
        .build()?;
    let without: Vec<Judged> =
        pool.install(|| trials.par_iter().map(|t| judge(t, &base)).collect());
    let sources: Vec<usize> = (0..cases.len())
        .filter(|&i| cases[i].truth.as_ref().is_some_and(|t| t.is_solved()))
        .collect();
    let mut pairs: BTreeMap<String, Pair> = BTreeMap::new();
    // Profiles used, per source and size.
    let mut profiles: BTreeMap<String, usize> = BTreeMap::new();
    let mut changed = 0;
    for &p in &sources {
        let src = &cases[p];
        let Ok(profile) = calibrate(&src.scan, None, 1) else {
            continue;
        };
        let family = format!("{} {}", src.group, src.scan.cube_size());
        *profiles.entry(family.clone()).or_default() += 1;
        let targets: Vec<usize> = (0..trials.len())
            .filter(|&i| {
                let c = &cases[trials[i].case];
                trials[i].case != p
                    && c.group == src.group
                    && c.scan.cube_size() == src.scan.cube_size()
                    && profile_fits_scale(Some(&profile), trials[i].scan.effective_scale()).is_ok()
            })
            .collect();
        let opts = ResolveOptions {
            profile: Some(profile),
            ..base.clone()
        };
        let with: Vec<Judged> = pool.install(|| {
            targets
                .par_iter()
                .map(|&i| judge(&trials[i], &opts))
                .collect()
        });
        for (&i, w) in targets.iter().zip(&with) {
            let t = &trials[i];
            let set = match (t.redealt.is_some(), t.truth.is_some()) {
                (true, _) => "re-dealt",
                (false, true) => "real labelled",
                (false, false) => "real unlabelled",
            };
            let pair = pairs.entry(format!("{family} {set}")).or_default();
            pair.scans += 1;
            pair.without[slot(as_outcome(without[i].verdict))] += 1;
            pair.with[slot(as_outcome(w.verdict))] += 1;
            pair.margins.0.push(without[i].margin);
            pair.margins.1.push(w.margin);
            if t.truth.is_none()
                && without[i].verdict == Verdict::Legal
                && w.verdict == Verdict::Legal
                && without[i].cube != w.cube
            {
                changed += 1;
            }
        }
    }
    if !g.json {
        outln!(
            "{:<30} {:>8} {:>10} {:>12} {:>12} {:>10} {:>12} {:>16}",
            "profiled scans",
            "profiles",
            "scans",
            "exact/legal",
            "doubt",
            "WRONG",
            "ILLEGAL",
            "median margin"
        );
    }
    for (key, p) in &pairs {
        let family: String = key.split(' ').take(2).collect::<Vec<_>>().join(" ");
        let profiles = profiles.get(&family).copied().unwrap_or(0);
        let (m0, m1) = (median(&p.margins.0), median(&p.margins.1));
        if g.json {
            json_line(
                &json!({"type": "realdata-profile", "set": key, "profiles": profiles,
                "resolutions": p.scans, "without": counts(&p.without), "with": counts(&p.with),
                "median_margin_without": m0, "median_margin_with": m1}),
            );
        } else {
            let arrow = |i: usize| format!("{} -> {}", p.without[i], p.with[i]);
            outln!(
                "{:<30} {:>8} {:>10} {:>12} {:>12} {:>10} {:>12} {:>16}",
                key,
                profiles,
                p.scans,
                arrow(0),
                arrow(1),
                arrow(2),
                arrow(3),
                format!("{m0:.1} -> {m1:.1}")
            );
        }
    }
    if g.json {
        json_line(
            &json!({"type": "realdata-profile-changed", "unlabelled_answers_changed": changed}),
        );
    } else {
        outln!("confident answers to unlabelled scans that a profile changed: {changed}");
    }
    let bad = pairs.values().any(|p| p.with[2] > 0);
    Ok(if bad { Exit::No } else { Exit::Ok })
}
