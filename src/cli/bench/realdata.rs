//! `bench resolve --realdata DIR`: the resolver on real scans (case files with an
//! `expected` cube where one is known), per source; with `--cross-validate`, every figure
//! is of a source whose scans the model's constants were not chosen on.
//!
//! Groups. A case's group is its source: the part of its id before the first `-` (`rcr`,
//! `trk`, `ms` in `samples/realdata`), else its file name. A scan that is a near copy of a
//! scan in another group (the same readings published twice) goes with it: it is left out
//! of the training set of the other's fold.
//!
//! Re-dealt scans (`--redeal N`): each labelled scan also gives N scans of random cubes
//! made of its own readings ([`crate::color::resolve::redeal`]). They count for the group
//! of the scan they were made from, so a re-dealt scan is never scored with constants
//! chosen on its own readings.
//!
//! Cross-validation (leave one group out). For each group: the model's constants are
//! chosen on the other groups' labelled scans (real and re-dealt) by coordinate descent
//! over a small grid per constant, minimising the log loss of the true cube,
//! `log(1 + e^(-m/T))` where m is the true cube's margin in the model's nats (positive
//! when it is the best guess, negative when another cube beats it) and the temperature T
//! (at least 1) is fitted with them; a constant moves only when the gain is real (at least
//! 0.001 nats per scan) and beyond the noise of the training scans (twice the standard
//! error of the per-scan gains). Then the group is resolved under those constants and the
//! calibrated doubt threshold. The tables give, per group, what the held-out scans
//! came to, and how often a best guess was wrong at each calibrated margin.
//!
//! Level: `cli`. Depends on `cube`, `color` and the shared cli helpers.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::Context;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde_json::json;

use super::resolve_args::{BenchResolveArgs, UnreadFace};
use crate::cli::output::json_line;
use crate::cli::{CmdResult, Exit, Global};
use crate::color::resolve::{cube_cost, redeal, Model};
use crate::color::{resolve as resolve_scan, RawScan, ResolveError, ResolveOptions};
use crate::cube::{random_state, validate, FaceletCube};

/// One case file.
pub(super) struct RealCase {
    pub(super) id: String,
    pub(super) group: String,
    pub(super) scan: RawScan,
    /// The expected cube, where known (a 2x2x2's letters normalised, so that cubes equal up
    /// to a relabelling compare equal).
    pub(super) truth: Option<FaceletCube>,
}

/// A scan to resolve: a case file's, or one re-dealt from it.
#[derive(Clone)]
pub(super) struct Trial {
    /// Index of the case it is or was made from.
    pub(super) case: usize,
    /// Which re-deal of that case (`None`: the case's own scan).
    pub(super) redealt: Option<u64>,
    pub(super) scan: RawScan,
    pub(super) truth: Option<FaceletCube>,
}

/// What one resolution came to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Verdict {
    Exact,
    /// In doubt; whether the best guess is the expected cube (`None`: no expected cube).
    Doubt(Option<bool>),
    /// A confident answer that is not the expected cube.
    Wrong,
    /// A confident legal answer to a scan with no expected cube.
    Legal,
    Illegal,
    /// No legal cube within the search budget (a doubt without a best guess).
    NoCube,
}

/// A verdict and, on a labelled scan, the true cube's margin (nats of the model before
/// calibration: positive when the true cube is the best guess, by the rival's distance;
/// negative when another cube is preferred, by how much).
#[derive(Clone, Debug)]
pub(super) struct Judged {
    pub(super) verdict: Verdict,
    /// The best guess (letters), if any.
    pub(super) cube: Option<String>,
    truth_margin: Option<f64>,
    /// The best guess's calibrated margin to its rival.
    pub(super) margin: f64,
    /// The temperature the margin was calibrated with.
    temperature: f64,
    /// The best guess is not the expected cube, yet the expected cube costs less under the
    /// model: the search, not the model, missed it.
    missed: bool,
}

/// Loads every `*.json` case file of `dir`, in file-name order.
pub(super) fn load_cases(dir: &Path) -> anyhow::Result<Vec<RealCase>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    if files.is_empty() {
        anyhow::bail!("no case files (*.json) in {}", dir.display());
    }
    files
        .iter()
        .map(|path| {
            let text = crate::input::read_text(path, crate::input::FileKind::Scan)?;
            let case: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("{} is not JSON", path.display()))?;
            let scan = RawScan::from_json(&text)
                .with_context(|| format!("{} is not a scan", path.display()))?;
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let id = case["id"].as_str().map_or(stem, str::to_string);
            let group = id.split('-').next().unwrap_or(&id).to_string();
            let truth = match case["expected"].as_str() {
                Some(e) => Some(FaceletCube::parse(e).with_context(|| {
                    format!("{}: expected {e:?} is not a cube", path.display())
                })?),
                None => None,
            };
            Ok(RealCase {
                id,
                group,
                scan,
                truth,
            })
        })
        .collect()
}

/// Whether two scans are the same readings published twice: same size and scale, and nine
/// in ten readings within 1 % of full scale of each other.
fn near_copy(a: &RawScan, b: &RawScan) -> bool {
    let scale = a.effective_scale();
    if a.size != b.size || scale != b.effective_scale() {
        return false;
    }
    let tol = 0.01 * scale.max_value();
    let close = a
        .facelets
        .iter()
        .zip(&b.facelets)
        .filter(|(x, y)| (0..3).all(|k| (x[k] - y[k]).abs() <= tol))
        .count();
    close * 10 >= a.facelets.len() * 9
}

/// Resolves one trial under `opts` and judges it.
pub(super) fn judge(trial: &Trial, opts: &ResolveOptions) -> Judged {
    let opts = ResolveOptions {
        best_effort: true,
        ..opts.clone()
    };
    let res = match resolve_scan(&trial.scan, &opts) {
        Ok(r) => r,
        Err(ResolveError::NoLegalCube { .. })
        | Err(ResolveError::Ambiguous { .. })
        | Err(ResolveError::NoCube(_)) => {
            return Judged {
                verdict: Verdict::NoCube,
                cube: None,
                truth_margin: trial.truth.as_ref().map(|_| 0.0),
                margin: 0.0,
                temperature: opts.model.temperature,
                missed: false,
            }
        }
        Err(_) => {
            return Judged {
                verdict: Verdict::Illegal,
                cube: None,
                truth_margin: trial.truth.as_ref().map(|_| 0.0),
                margin: 0.0,
                temperature: opts.model.temperature,
                missed: false,
            }
        }
    };
    let letters = res.cube.to_letters();
    let legal = validate(&letters).is_ok();
    let best = FaceletCube::parse(&letters).ok();
    let right = trial
        .truth
        .as_ref()
        .map(|t| best.as_ref().is_some_and(|b| b.colors() == t.colors()));
    let t = opts.model.temperature;
    let mut missed = false;
    let truth_margin = match (right, &trial.truth) {
        (Some(true), _) => Some(res.cube_margin * t),
        (Some(false), Some(truth)) => {
            let cost = |c: &FaceletCube| {
                cube_cost(&trial.scan, &opts, c)
                    .ok()
                    .flatten()
                    .unwrap_or(f64::INFINITY)
            };
            let gap = match &best {
                Some(b) => cost(b) - cost(truth),
                None => f64::NEG_INFINITY,
            };
            missed = gap > 0.0;
            // The resolver preferred another cube: the truth is not its best guess, however
            // the two score from an even start.
            Some(gap.min(0.0))
        }
        _ => None,
    };
    let verdict = match (legal, right, res.confident) {
        (false, _, _) => Verdict::Illegal,
        (true, Some(true), true) => Verdict::Exact,
        (true, Some(false), true) => Verdict::Wrong,
        (true, None, true) => Verdict::Legal,
        (true, r, false) => Verdict::Doubt(r),
    };
    Judged {
        verdict,
        cube: Some(letters),
        truth_margin,
        margin: res.cube_margin,
        temperature: t,
        missed,
    }
}

/// Counts of verdicts for one group.
#[derive(Clone, Copy, Default)]
struct Tally {
    scans: usize,
    labelled: usize,
    exact: usize,
    doubt: usize,
    /// Doubts on labelled scans, and how many of their best guesses were right.
    doubt_labelled: usize,
    doubt_right: usize,
    wrong: usize,
    legal: usize,
    illegal: usize,
    no_cube: usize,
}

impl Tally {
    fn add(&mut self, trial: &Trial, v: Verdict) {
        self.scans += 1;
        if trial.truth.is_some() {
            self.labelled += 1;
        }
        match v {
            Verdict::Exact => self.exact += 1,
            Verdict::Doubt(r) => {
                self.doubt += 1;
                if r.is_some() {
                    self.doubt_labelled += 1;
                }
                if r == Some(true) {
                    self.doubt_right += 1;
                }
            }
            Verdict::Wrong => self.wrong += 1,
            Verdict::Legal => self.legal += 1,
            Verdict::Illegal => self.illegal += 1,
            Verdict::NoCube => self.no_cube += 1,
        }
    }
}

fn verdict_name(v: Verdict) -> &'static str {
    match v {
        Verdict::Exact => "exact",
        Verdict::Doubt(Some(true)) => "doubt (best guess right)",
        Verdict::Doubt(Some(false)) => "doubt (best guess WRONG)",
        Verdict::Doubt(None) => "doubt",
        Verdict::Wrong => "WRONG",
        Verdict::Legal => "legal",
        Verdict::Illegal => "ILLEGAL",
        Verdict::NoCube => "no cube",
    }
}

fn print_tallies(g: &Global, what: &str, tallies: &BTreeMap<String, Tally>) {
    if !g.json {
        outln!(
            "{:<22} {:>6} {:>9} {:>6} {:>6} {:>11} {:>7} {:>6} {:>8} {:>8}",
            what,
            "scans",
            "labelled",
            "exact",
            "doubt",
            "guess right",
            "WRONG",
            "legal",
            "ILLEGAL",
            "no cube"
        );
    }
    for (group, t) in tallies {
        if g.json {
            json_line(
                &json!({"type": "realdata-group", "set": what, "group": group,
                "scans": t.scans, "labelled": t.labelled, "exact": t.exact, "doubt": t.doubt,
                "doubt_best_guess_right": t.doubt_right, "wrong": t.wrong, "legal": t.legal,
                "illegal": t.illegal, "no_cube": t.no_cube}),
            );
        } else {
            outln!(
                "{:<22} {:>6} {:>9} {:>6} {:>6} {:>11} {:>7} {:>6} {:>8} {:>8}",
                group,
                t.scans,
                t.labelled,
                t.exact,
                t.doubt,
                format!("{} of {}", t.doubt_right, t.doubt_labelled),
                t.wrong,
                t.legal,
                t.illegal,
                t.no_cube
            );
        }
    }
}

/// The model `--model NAME=VALUE,...` describes: the defaults with those constants set.
pub fn model_of(spec: &[String]) -> anyhow::Result<Model> {
    let mut m = Model::default();
    for item in spec {
        let (name, value) = item
            .split_once('=')
            .with_context(|| format!("--model {item:?}: expected NAME=VALUE"))?;
        let v: f64 = value
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v > 0.0)
            .with_context(|| format!("--model {item:?}: {value:?} is not a positive number"))?;
        if name == "temperature" {
            m.temperature = v.max(1.0);
            continue;
        }
        if name == "profile_weight" {
            m.profile_weight = v;
            continue;
        }
        if name == "mean_spread" {
            m.mean_spread = v;
            continue;
        }
        let knob = KNOBS.iter().find(|k| k.name == name).with_context(|| {
            let names: Vec<&str> = KNOBS.iter().map(|k| k.name).collect();
            format!(
                "--model {item:?}: unknown constant (known: {}, profile_weight, mean_spread, temperature)",
                names.join(", ")
            )
        })?;
        (knob.set)(&mut m, v);
    }
    Ok(m)
}

/// The choices of `--unread-face`, each with the trials as it leaves them: without the
/// option, the trials as they are (and no heading); with it, every trial's scan with that
/// face unread (re-dealt scans are dealt from the full scan first).
fn unread_choices(a: &BenchResolveArgs, all: &[Trial]) -> Vec<(Option<UnreadFace>, Vec<Trial>)> {
    if a.unread_face.is_empty() {
        return vec![(None, all.to_vec())];
    }
    a.unread_face
        .iter()
        .map(|&u| {
            let masked = all
                .iter()
                .map(|t| Trial {
                    scan: u.apply(&t.scan),
                    ..t.clone()
                })
                .collect();
            (Some(u), masked)
        })
        .collect()
}

/// The heading of one `--unread-face` choice's tables.
fn print_unread_heading(g: &Global, u: UnreadFace) {
    if g.json {
        json_line(&json!({"type": "unread-face", "face": u.name()}));
    } else {
        match u.0 {
            Some(f) => outln!("unread face {f}: every scan resolved from the other five"),
            None => outln!("unread face none: every scan resolved from all six"),
        }
    }
}

/// `bench resolve --realdata DIR` without cross-validation: every case under the default
/// model (or `--model`).
pub fn bench_realdata(dir: &Path, a: &BenchResolveArgs, g: &Global) -> CmdResult {
    let cases = load_cases(dir)?;
    let all = trials(&cases, a.redeal, a.seed);
    if let Some(d) = &a.write_redealt {
        write_redealt(d, &cases, &all)?;
    }
    let opts = ResolveOptions {
        doubt_threshold: a.doubt,
        model: model_of(&a.model)?,
        ..ResolveOptions::default()
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(a.threads.max(1))
        .build()?;
    let mut bad = false;
    for (u, trials) in unread_choices(a, &all) {
        if let Some(u) = u {
            print_unread_heading(g, u);
        }
        let judged: Vec<Judged> =
            pool.install(|| trials.par_iter().map(|t| judge(t, &opts)).collect());
        report(g, &cases, &trials, &judged);
        bad |= judged
            .iter()
            .any(|j| matches!(j.verdict, Verdict::Wrong | Verdict::Illegal));
    }
    Ok(if bad { Exit::No } else { Exit::Ok })
}

/// The case files' own scans, then `redeal` re-dealt scans of each labelled one.
pub(super) fn trials(cases: &[RealCase], redeal_count: u64, seed: u64) -> Vec<Trial> {
    let mut out: Vec<Trial> = cases
        .iter()
        .enumerate()
        .map(|(i, c)| Trial {
            case: i,
            redealt: None,
            scan: c.scan.clone(),
            truth: c.truth.clone(),
        })
        .collect();
    for (i, c) in cases.iter().enumerate() {
        let Some(truth) = &c.truth else { continue };
        for k in 0..redeal_count {
            let mut rng = ChaCha8Rng::seed_from_u64(seed.wrapping_add(1000 * i as u64 + k));
            let target = random_state(c.scan.cube_size(), &mut rng);
            if let Some(scan) = redeal(&c.scan, truth, &target) {
                let truth = FaceletCube::parse(&target.to_letters()).unwrap_or(target);
                out.push(Trial {
                    case: i,
                    redealt: Some(k),
                    scan,
                    truth: Some(truth),
                });
            }
        }
    }
    out
}

/// Writes every re-dealt trial as a case file in `dir`.
fn write_redealt(dir: &Path, cases: &[RealCase], trials: &[Trial]) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for t in trials {
        let Some(k) = t.redealt else { continue };
        let id = format!("{}-redealt-{k}", cases[t.case].id);
        let mut v = serde_json::to_value(&t.scan)?;
        v["id"] = json!(id);
        v["expected"] = json!(t.truth.as_ref().map(|c| c.to_letters()));
        v["provenance"] = json!({"redealt_from": cases[t.case].id, "deal": k});
        let path = dir.join(format!("{id}.json"));
        std::fs::write(&path, serde_json::to_string_pretty(&v)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// Per-case lines (with `-v` or `--json`) and the per-group tables.
fn report(g: &Global, cases: &[RealCase], trials: &[Trial], judged: &[Judged]) {
    let mut real: BTreeMap<String, Tally> = BTreeMap::new();
    let mut dealt: BTreeMap<String, Tally> = BTreeMap::new();
    for (t, j) in trials.iter().zip(judged) {
        let c = &cases[t.case];
        let group = format!("{} {}", c.group, c.scan.cube_size());
        let id = match t.redealt {
            Some(k) => {
                dealt.entry(group.clone()).or_default().add(t, j.verdict);
                format!("{}-redealt-{k}", c.id)
            }
            None => {
                real.entry(group.clone()).or_default().add(t, j.verdict);
                c.id.clone()
            }
        };
        let shown = t.redealt.is_none() || g.verbose > 1;
        if !shown {
            continue;
        }
        if g.json {
            json_line(&json!({"type": "case", "id": id, "group": group,
                "verdict": verdict_name(j.verdict), "margin": j.margin,
                "truth_margin": j.truth_margin, "search_missed_truth": j.missed}));
        } else if g.verbose > 0 {
            let tm = j.truth_margin.map_or(String::new(), |m| {
                let miss = if j.missed { " (search missed it)" } else { "" };
                format!("  true cube's margin {m:.2}{miss}")
            });
            outln!(
                "{:<40} {:<26} margin {:>6.2}{tm}",
                id,
                verdict_name(j.verdict),
                j.margin
            );
        }
    }
    print_tallies(g, "real scans", &real);
    if !dealt.is_empty() {
        print_tallies(g, "re-dealt scans", &dealt);
    }
    if !g.json {
        outln!("(exact, WRONG: labelled scans answered sure; legal: unlabelled ones answered sure; doubt, ILLEGAL, no cube: any scan; guess right: of the labelled doubts)");
    }
    // The log loss of the true cubes at the calibrated margins.
    for (what, redealt) in [("real scans", false), ("re-dealt scans", true)] {
        let m: Vec<f64> = trials
            .iter()
            .zip(judged)
            .filter(|(t, _)| t.redealt.is_some() == redealt)
            .filter_map(|(_, j)| j.truth_margin.map(|m| m / j.temperature))
            .collect();
        if m.is_empty() {
            continue;
        }
        let loss = m.iter().map(|&x| softplus(-x)).sum::<f64>() / m.len() as f64;
        let (t, fitted) = fit_temperature(&m);
        if g.json {
            json_line(
                &json!({"type": "log-loss", "set": what, "labelled": m.len(),
                "log_loss": loss, "best_further_temperature": t, "log_loss_at_it": fitted}),
            );
        } else {
            outln!(
                "log loss of the true cubes, {what}: {loss:.4} nats ({} labelled); {fitted:.4} with the margins divided by a further {t}",
                m.len()
            );
        }
    }
}

/// One constant of the model that the cross-validation chooses, and the values it tries
/// (the default among them).
struct Knob {
    name: &'static str,
    values: &'static [f64],
    set: fn(&mut Model, f64),
    get: fn(&Model) -> f64,
}

const KNOBS: [Knob; 5] = [
    Knob {
        name: "nu",
        values: &[2.0, 3.0, 4.0, 6.0, 10.0],
        set: |m, v| m.nu = v,
        get: |m| m.nu,
    },
    Knob {
        name: "light_prior",
        values: &[1.0, 3.0, 9.0],
        set: |m, v| m.light_prior = v,
        get: |m| m.light_prior,
    },
    Knob {
        name: "spread_prior",
        values: &[0.5, 1.0, 2.0, 4.0],
        set: |m, v| m.spread_prior = v,
        get: |m| m.spread_prior,
    },
    Knob {
        name: "noise_scale",
        values: &[0.5, 1.0, 2.0, 4.0],
        set: |m, v| m.noise_scale = v,
        get: |m| m.noise_scale,
    },
    Knob {
        name: "clipped_sigma",
        values: &[0.04, 0.08, 0.16],
        set: |m, v| m.clipped_sigma = v,
        get: |m| m.clipped_sigma,
    },
];

/// Temperatures tried when calibrating the margins (never below 1: the model is not made
/// more sure of itself than its own likelihoods say).
const TEMPERATURES: [f64; 10] = [1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0];

/// Doubt threshold (model nats) of the runs that measure margins: wide enough that a margin
/// is measured, not only bounded, up to the calibrated threshold at the largest temperature
/// that matters.
const MEASURING_WINDOW: f64 = 16.0;

/// Every trial judged under a model (temperature 1, the measuring window), each model once.
struct Evaluations<'a> {
    trials: &'a [Trial],
    seed: u64,
    memo: HashMap<Vec<u64>, Vec<Judged>>,
    pool: rayon::ThreadPool,
    bar: Option<indicatif::ProgressBar>,
}

impl Evaluations<'_> {
    fn judged(&mut self, model: Model) -> &[Judged] {
        let key: Vec<u64> = KNOBS.iter().map(|k| (k.get)(&model).to_bits()).collect();
        if !self.memo.contains_key(&key) {
            let opts = ResolveOptions {
                seed: self.seed,
                doubt_threshold: MEASURING_WINDOW,
                model: Model {
                    temperature: 1.0,
                    ..model
                },
                ..ResolveOptions::default()
            };
            let trials = self.trials;
            let judged: Vec<Judged> = self
                .pool
                .install(|| trials.par_iter().map(|t| judge(t, &opts)).collect());
            if let Some(b) = &self.bar {
                b.inc(1);
            }
            self.memo.insert(key.clone(), judged);
        }
        &self.memo[&key]
    }
}

/// log(1 + e^x), without overflow.
fn softplus(x: f64) -> f64 {
    if x > 30.0 {
        x
    } else {
        x.exp().ln_1p()
    }
}

/// The temperature (of [`TEMPERATURES`]) that minimises the mean log loss of true cubes
/// with these margins, and that loss.
fn fit_temperature(margins: &[f64]) -> (f64, f64) {
    let loss = |t: f64| {
        margins.iter().map(|m| softplus(-m / t)).sum::<f64>() / margins.len().max(1) as f64
    };
    TEMPERATURES
        .iter()
        .map(|&t| (t, loss(t)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .expect("temperatures")
}

/// The true cubes' margins of the trials `train`.
fn train_margins(judged: &[Judged], train: &[usize]) -> Vec<f64> {
    train
        .iter()
        .filter_map(|&i| judged[i].truth_margin)
        .collect()
}

/// The model chosen on `train`: coordinate descent over [`KNOBS`] from `start`, each model
/// scored by its log loss at its own fitted temperature. A constant moves only when the
/// training scans show a real gain beyond its noise ([`clearly_lower`]): scans that every
/// model gets right, or one scan that moves a little, leave the constants where they
/// were.
fn choose(evals: &mut Evaluations, start: Model, train: &[usize]) -> (Model, f64) {
    let losses = |margins: &[f64], t: f64| -> Vec<f64> {
        margins.iter().map(|m| softplus(-m / t)).collect()
    };
    let mut model = start;
    let margins = train_margins(evals.judged(model), train);
    let mut best = fit_temperature(&margins);
    let mut best_losses = losses(&margins, best.0);
    for _sweep in 0..3 {
        let mut moved = false;
        for knob in &KNOBS {
            for &v in knob.values {
                let mut m = model;
                (knob.set)(&mut m, v);
                if m == model {
                    continue;
                }
                let margins = train_margins(evals.judged(m), train);
                let fit = fit_temperature(&margins);
                let these = losses(&margins, fit.0);
                if clearly_lower(&best_losses, &these) {
                    best = fit;
                    best_losses = these;
                    model = m;
                    moved = true;
                }
            }
        }
        if !moved {
            break;
        }
    }
    model.temperature = best.0;
    (model, best.1)
}

/// Least mean gain in log loss (nats per labelled scan) that moves a constant: over a few
/// hundred scans, about what one best guess at a margin of 1.5 nats costs.
const MIN_GAIN: f64 = 1e-3;

/// Whether the per-scan losses `new` are lower than `old` by at least [`MIN_GAIN`] on
/// average and by more than twice the standard error of the mean difference.
fn clearly_lower(old: &[f64], new: &[f64]) -> bool {
    let n = old.len().min(new.len());
    if n < 2 {
        return false;
    }
    let d: Vec<f64> = old.iter().zip(new).map(|(a, b)| a - b).collect();
    let mean = d.iter().sum::<f64>() / n as f64;
    let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    mean >= MIN_GAIN && mean > 2.0 * (var / n as f64).sqrt()
}

/// Calibration bins of the held-out best guesses: calibrated margin from, to.
const BINS: [(f64, f64); 6] = [
    (0.0, 1.0),
    (1.0, 2.0),
    (2.0, 4.0),
    (4.0, 8.0),
    (8.0, 16.0),
    (16.0, f64::INFINITY),
];

/// `bench resolve --realdata DIR --cross-validate` (with `--unread-face`, the whole
/// procedure once per choice, the constants chosen on scans with that face unread too).
pub fn cross_validate(dir: &Path, a: &BenchResolveArgs, g: &Global) -> CmdResult {
    let cases = load_cases(dir)?;
    let all = trials(&cases, a.redeal, a.seed);
    if let Some(d) = &a.write_redealt {
        write_redealt(d, &cases, &all)?;
    }
    let mut bad = false;
    for (u, trials) in unread_choices(a, &all) {
        if let Some(u) = u {
            print_unread_heading(g, u);
        }
        bad |= cross_validate_trials(&cases, &trials, a, g)?;
    }
    Ok(if bad { Exit::No } else { Exit::Ok })
}

/// The leave-one-group-out procedure on `trials`; whether a held-out answer was wrong or
/// illegal.
fn cross_validate_trials(
    cases: &[RealCase],
    trials: &[Trial],
    a: &BenchResolveArgs,
    g: &Global,
) -> anyhow::Result<bool> {
    let mut groups: Vec<String> = cases.iter().map(|c| c.group.clone()).collect();
    groups.sort();
    groups.dedup();
    // copies[i]: the groups holding a near copy of case i.
    let copies: Vec<Vec<&str>> = cases
        .iter()
        .map(|c| {
            cases
                .iter()
                .filter(|d| d.group != c.group && near_copy(&c.scan, &d.scan))
                .map(|d| d.group.as_str())
                .collect()
        })
        .collect();
    let start = model_of(&a.model)?;
    let bar = crate::cli::common::progress_bar(g, "models");
    let mut evals = Evaluations {
        trials,
        seed: a.seed,
        memo: HashMap::new(),
        pool: rayon::ThreadPoolBuilder::new()
            .num_threads(a.threads.max(1))
            .build()?,
        bar,
    };
    let mut held_out: Vec<Option<Judged>> = vec![None; trials.len()];
    for group in &groups {
        let train: Vec<usize> = (0..trials.len())
            .filter(|&i| {
                let c = trials[i].case;
                cases[c].group != *group && !copies[c].contains(&group.as_str())
            })
            .collect();
        let (model, loss) = choose(&mut evals, start, &train);
        let test: Vec<usize> = (0..trials.len())
            .filter(|&i| cases[trials[i].case].group == *group)
            .collect();
        let opts = ResolveOptions {
            seed: a.seed,
            doubt_threshold: a.doubt,
            model,
            ..ResolveOptions::default()
        };
        let judged: Vec<Judged> = evals
            .pool
            .install(|| test.par_iter().map(|&i| judge(&trials[i], &opts)).collect());
        for (&i, j) in test.iter().zip(judged) {
            held_out[i] = Some(j);
        }
        print_fold(g, group, &model, loss, train.len());
    }
    if let Some(b) = &evals.bar {
        b.finish_and_clear();
    }
    let held_out: Vec<Judged> = held_out
        .into_iter()
        .map(|j| j.expect("every group"))
        .collect();
    report(g, cases, trials, &held_out);
    print_calibration(g, trials, &held_out);
    Ok(held_out
        .iter()
        .any(|j| matches!(j.verdict, Verdict::Wrong | Verdict::Illegal)))
}

fn print_fold(g: &Global, group: &str, model: &Model, loss: f64, train: usize) {
    if g.json {
        let mut v = json!({"type": "cv-fold", "held_out": group, "training_scans": train,
            "training_log_loss": loss, "temperature": model.temperature});
        for k in &KNOBS {
            v[k.name] = json!((k.get)(model));
        }
        json_line(&v);
    } else {
        let knobs: Vec<String> = KNOBS
            .iter()
            .map(|k| format!("{} {}", k.name, (k.get)(model)))
            .collect();
        outln!(
            "fold {group:<6} chosen on {train} scans: {}, temperature {} (log loss {loss:.4})",
            knobs.join(", "),
            model.temperature
        );
    }
}

/// How often a held-out best guess was wrong at each calibrated margin, beside how often
/// the margin says it should be (1 / (1 + e^m)).
fn print_calibration(g: &Global, trials: &[Trial], judged: &[Judged]) {
    if !g.json {
        outln!(
            "{:<14} {:>7} {:>7} {:>10} {:>10}",
            "margin (nats)",
            "guesses",
            "wrong",
            "wrong %",
            "expected %"
        );
    }
    for (lo, hi) in BINS {
        let inside: Vec<(&Trial, &Judged)> = trials
            .iter()
            .zip(judged)
            .filter(|(t, j)| {
                t.truth.is_some() && j.verdict != Verdict::NoCube && j.margin >= lo && j.margin < hi
            })
            .collect();
        let n = inside.len();
        let wrong = inside
            .iter()
            .filter(|(_, j)| matches!(j.verdict, Verdict::Wrong | Verdict::Doubt(Some(false))))
            .count();
        let expected: f64 = inside
            .iter()
            .map(|(_, j)| 1.0 / (1.0 + j.margin.exp()))
            .sum();
        let pct = |x: f64| if n == 0 { 0.0 } else { 100.0 * x / n as f64 };
        let label = if hi.is_infinite() {
            format!("{lo}+")
        } else {
            format!("{lo}-{hi}")
        };
        if g.json {
            json_line(
                &json!({"type": "calibration", "from": lo, "to": if hi.is_infinite() { None } else { Some(hi) },
                "guesses": n, "wrong": wrong, "expected_wrong": expected}),
            );
        } else {
            outln!(
                "{label:<14} {n:>7} {wrong:>7} {:>10.2} {:>10.2}",
                pct(wrong as f64),
                pct(expected)
            );
        }
    }
}
