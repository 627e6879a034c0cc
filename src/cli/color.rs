//! `resolve`, `calibrate`, `synth-scan` and `bench resolve`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde_json::json;

use super::output::json_line;
use super::{CmdResult, Exit, Global};
use crate::color::calibrate::{calibrate as learn, CalibrateError};
use crate::color::resolve::facelet_names;
use crate::color::svg::resolution_svg;
use crate::color::synth::{synth_scan as synthesize, Appearance, Conditions, Palette};
use crate::color::{
    resolve as resolve_scan, Profile, RawScan, Resolution, ResolveError, ResolveOptions, Scale,
};
use crate::cube::{random_state, FaceletCube, Size};

#[derive(clap::Args, Debug)]
pub struct ResolveArgs {
    /// A scan file (JSON: size, `facelets`: `[[r,g,b] × 54|24]`, optional scale). The shared
    /// real-data case files work as they are.
    pub scan: PathBuf,
    /// A colour profile learned by `cubot calibrate` (a prior, not a requirement).
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// Print the best legal cube even when a rival is too close to call (exit 0).
    #[arg(long)]
    pub best_effort: bool,
    /// Draw the measured net, the resolved net and the a*b* clusters to this SVG file.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// k-means seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Doubt threshold in nats (a rival legal cube closer than this is "too close").
    #[arg(long, default_value_t = crate::color::resolve::DEFAULT_DOUBT_NATS)]
    pub doubt: f64,
}

#[derive(clap::Args, Debug)]
pub struct CalibrateArgs {
    /// A scan of a solved cube.
    pub scan: PathBuf,
    /// Where to write the profile (TOML).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// A name stored in the profile.
    #[arg(long)]
    pub name: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct SynthScanArgs {
    /// standard, no-white, fluorescent or faded.
    #[arg(long, default_value = "standard")]
    pub palette: Palette,
    /// Seed (cube state, appearance and noise).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output scale: rgb8 (camera sRGB), ev3-raw (EV3 RGB-RAW counts) or unit.
    #[arg(long, default_value = "rgb8", value_parser = parse_scale)]
    pub scale: Scale,
    /// How many scans (one JSON object a line when more than one).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub count: u64,
    /// Cube size.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(2..=3))]
    pub size: u8,
    /// A state to scan (facelet string or `solved`); random when left out.
    #[arg(long)]
    pub state: Option<String>,
    #[command(flatten)]
    pub conditions: ConditionArgs,
}

/// Overrides of the palette's preset conditions.
#[derive(clap::Args, Debug, Clone)]
pub struct ConditionArgs {
    /// σ of per-sticker log brightness.
    #[arg(long)]
    pub brightness_spread: Option<f64>,
    /// Mean wear toward grey (0..1).
    #[arg(long)]
    pub fade: Option<f64>,
    /// σ of the light's per-channel log cast (EV3: gain spread).
    #[arg(long)]
    pub cast: Option<f64>,
    /// Light fall-off toward face corners (EV3: per-position level spread).
    #[arg(long)]
    pub vignette: Option<f64>,
    /// Per-read noise (fraction of the signal).
    #[arg(long)]
    pub noise: Option<f64>,
    /// Exposure (1 = white near full scale).
    #[arg(long)]
    pub exposure: Option<f64>,
}

impl ConditionArgs {
    fn apply(&self, mut c: Conditions) -> Conditions {
        let set = |v: &mut f64, o: Option<f64>| {
            if let Some(x) = o {
                *v = x;
            }
        };
        set(&mut c.brightness_spread, self.brightness_spread);
        set(&mut c.fade, self.fade);
        set(&mut c.cast, self.cast);
        set(&mut c.vignette, self.vignette);
        set(&mut c.noise, self.noise);
        set(&mut c.exposure, self.exposure);
        c
    }
}

fn parse_scale(s: &str) -> Result<Scale, String> {
    match s {
        "rgb8" => Ok(Scale::Rgb8),
        "ev3-raw" | "ev3" => Ok(Scale::Ev3Raw),
        "unit" => Ok(Scale::Unit),
        _ => Err(format!(
            "unknown scale {s:?}: expected rgb8, ev3-raw or unit"
        )),
    }
}

/// Reads a scan file; every problem is an operational error (exit 2) naming the file.
pub fn read_scan(path: &Path) -> anyhow::Result<RawScan> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    RawScan::from_json(&text).with_context(|| format!("{} is not a scan", path.display()))
}

fn load_profile(p: &Option<PathBuf>) -> anyhow::Result<Option<Profile>> {
    p.as_ref()
        .map(|p| Profile::load(p).map_err(anyhow::Error::from))
        .transpose()
}

fn verdict_lines(res: &crate::color::Resolution) {
    let size = res.cube.size();
    let r2 = |v: [f64; 3]| v.map(|x| (x * 100.0).round() / 100.0);
    for c in &res.classes {
        json_line(&json!({
            "type": "class",
            "face": c.face.letter().to_string(),
            "mean": r2(c.mean),
            "spread": r2(c.spread),
        }));
    }
    if let Some(r) = &res.rival {
        json_line(&json!({"type": "rival", "cube": r.to_letters()}));
    }
    for (i, s) in res.stickers.iter().enumerate() {
        json_line(&json!({
            "type": "sticker",
            "index": i,
            "facelet": crate::color::resolve::facelet_name(i, size),
            "lab": s.lab.map(|v| (v * 100.0).round() / 100.0),
            "face": s.face.letter().to_string(),
            "margin": (s.margin * 100.0).round() / 100.0,
            "runner_up": s.runner_up.map(|f| f.letter().to_string()),
            "doubtful": res.doubtful.contains(&i),
        }));
    }
}

/// A resolved scan: the `resolution` line (JSON) or the state's letters (text), as
/// `resolve` and `scan` print it.
pub(crate) fn print_resolution(g: &Global, res: &Resolution) {
    let letters = res.cube.to_letters();
    if g.json {
        json_line(&json!({
            "type": "resolution",
            "cube": letters,
            "confident": res.confident,
            "cube_margin": res.cube_margin,
            "doubtful": facelet_names(&res.doubtful, res.cube.size()).split_whitespace().collect::<Vec<_>>(),
        }));
    } else {
        outln!("{letters}");
    }
}

/// A scan too close to call: the `doubt` line naming the doubtful stickers and the best
/// guess, as `resolve` and `scan` print it.
pub(crate) fn print_ambiguous(g: &Global, doubtful: &[usize], best: &Resolution) {
    let margin = best.cube_margin;
    let names = facelet_names(doubtful, best.cube.size());
    let letters = best.cube.to_letters();
    if g.json {
        json_line(&json!({
            "type": "doubt",
            "doubtful": names.split_whitespace().collect::<Vec<_>>(),
            "doubtful_indices": doubtful,
            "cube_margin": margin,
            "best": letters,
        }));
    } else {
        outln!(
            "doubt: stickers {names} (a rival legal cube is {margin:.1} nats from the best; best guess {letters}; re-scan them or use --best-effort)"
        );
    }
}

/// No legal cube within the resolver's budget: the `doubt` line naming the least certain
/// stickers, as `resolve` and `scan` print it.
pub(crate) fn print_no_legal_cube(g: &Global, expanded: usize, suspects: &[usize], size: Size) {
    let names = facelet_names(suspects, size);
    if g.json {
        json_line(&json!({
            "type": "doubt",
            "message": "no legal cube found within the search budget",
            "expanded": expanded,
            "doubtful": names.split_whitespace().collect::<Vec<_>>(),
            "doubtful_indices": suspects,
        }));
    } else {
        outln!(
            "doubt: no legal cube found within the search budget ({expanded} nodes); least certain stickers: {names} (re-scan them)"
        );
    }
}

pub fn resolve(a: ResolveArgs, g: &Global) -> CmdResult {
    let scan = read_scan(&a.scan)?;
    let opts = ResolveOptions {
        profile: load_profile(&a.calibration)?,
        best_effort: a.best_effort,
        seed: a.seed,
        doubt_threshold: a.doubt,
        ..ResolveOptions::default()
    };
    let size = scan.cube_size();
    match resolve_scan(&scan, &opts) {
        Ok(res) => {
            if let Some(p) = &a.svg {
                std::fs::write(p, resolution_svg(&res))
                    .with_context(|| format!("cannot write {}", p.display()))?;
            }
            print_resolution(g, &res);
            if g.json {
                verdict_lines(&res);
            } else if g.verbose > 0 {
                eprintln!(
                    "margin to the best rival legal cube: {}{:.1} nats{} ({} search nodes)",
                    if res.rival_exact { "" } else { "≥ " },
                    res.cube_margin,
                    if res.confident {
                        ""
                    } else {
                        " (best effort: not confident)"
                    },
                    res.expanded
                );
            }
            Ok(Exit::Ok)
        }
        Err(ResolveError::Ambiguous { doubtful, best }) => {
            if let Some(p) = &a.svg {
                std::fs::write(p, resolution_svg(&best))
                    .with_context(|| format!("cannot write {}", p.display()))?;
            }
            print_ambiguous(g, &doubtful, &best);
            if g.json {
                verdict_lines(&best);
            }
            Ok(Exit::No)
        }
        Err(ResolveError::NoLegalCube { expanded, suspects }) => {
            print_no_legal_cube(g, expanded, &suspects, size);
            Ok(Exit::No)
        }
        Err(e) => {
            Err(anyhow::Error::from(e).context(format!("cannot resolve {}", a.scan.display())))
        }
    }
}

pub fn calibrate(a: CalibrateArgs, g: &Global) -> CmdResult {
    let scan = read_scan(&a.scan)?;
    match learn(&scan, a.name.clone(), 1) {
        Ok(profile) => {
            profile.save(&a.output)?;
            if g.json {
                json_line(
                    &json!({"type": "profile", "path": a.output.display().to_string(), "gains": profile.gains, "colors": profile.colors.iter().map(|c| json!({"face": c.face.to_string(), "lab": c.lab, "spread": c.spread})).collect::<Vec<_>>()}),
                );
            } else {
                outln!("wrote {}", a.output.display());
            }
            Ok(Exit::Ok)
        }
        Err(CalibrateError::NotSolved { cube, off }) => {
            if g.json {
                json_line(&json!({"type": "not-solved", "cube": cube, "off": off}));
            } else {
                outln!("not solved: the scan resolves to {cube}; stickers off their face: {off}");
            }
            Ok(Exit::No)
        }
        Err(CalibrateError::Resolve(ResolveError::Ambiguous { doubtful, .. })) => {
            outln!(
                "doubt: stickers {} (calibrate needs a clear scan of a solved cube)",
                facelet_names(&doubtful, scan.cube_size())
            );
            Ok(Exit::No)
        }
        Err(CalibrateError::Resolve(ResolveError::NoLegalCube { .. })) => {
            outln!("invalid: no legal cube fits the readings");
            Ok(Exit::No)
        }
        Err(e) => Err(e.into()),
    }
}

fn one_synthetic(
    palette: Palette,
    cond: Conditions,
    scale: Scale,
    size: Size,
    seed: u64,
    state: Option<&FaceletCube>,
) -> (FaceletCube, RawScan) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let cube = match state {
        Some(c) => c.clone(),
        None => random_state(size, &mut rng),
    };
    let app = Appearance::new(palette, cond, seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let scan = synthesize(&cube, &app, scale, &mut rng);
    (cube, scan)
}

pub fn synth_scan_cmd(a: SynthScanArgs, _g: &Global) -> CmdResult {
    let size = Size::from_n(a.size as usize).expect("clap range");
    let state = match &a.state {
        Some(s) => {
            Some(super::cube::parse_state(s, size).with_context(|| format!("bad --state {s:?}"))?)
        }
        None => None,
    };
    if let Some(s) = &state {
        if s.size() != size {
            bail!("--state is a {} but --size is {}", s.size(), size);
        }
    }
    let cond = a.conditions.apply(Conditions::for_palette(a.palette));
    for k in 0..a.count {
        let seed = a.seed.wrapping_add(k);
        let (cube, mut scan) = one_synthetic(a.palette, cond, a.scale, size, seed, state.as_ref());
        if let Some(serde_json::Value::Object(m)) = &mut scan.provenance {
            m.insert("expected".into(), json!(cube.to_letters()));
            m.insert("seed".into(), json!(seed));
        }
        if a.count == 1 {
            outln!("{}", scan.to_json());
        } else {
            outln!("{}", serde_json::to_string(&scan)?);
        }
    }
    Ok(Exit::Ok)
}

pub fn synth_scan(a: SynthScanArgs, g: &Global) -> CmdResult {
    synth_scan_cmd(a, g)
}

#[derive(clap::Args, Debug)]
pub struct BenchResolveArgs {
    /// Scans per condition.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub count: u64,
    /// Palettes (comma-separated); all four when left out.
    #[arg(long, value_delimiter = ',')]
    pub palette: Vec<Palette>,
    /// Scales (comma-separated): rgb8, ev3-raw, unit.
    #[arg(long, value_delimiter = ',', value_parser = parse_scale, default_value = "rgb8,ev3-raw")]
    pub scale: Vec<Scale>,
    /// Cube size.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(2..=3))]
    pub size: u8,
    /// First seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Instead of synthetic scans, resolve every case file (`*.json` with `expected`, like
    /// `../shared/realdata/cases`) in this directory and report per case and per group.
    #[arg(long, value_name = "DIR")]
    pub realdata: Option<PathBuf>,
    /// Doubt threshold in nats (see `resolve --doubt`).
    #[arg(long, default_value_t = crate::color::resolve::DEFAULT_DOUBT_NATS)]
    pub doubt: f64,
    /// Worker threads (timings are per scan on one thread each).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    #[command(flatten)]
    pub conditions: Box<ConditionArgs>,
}

/// CPU time of the calling thread (seconds): timings stay meaningful on a loaded machine.
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the valid pointer we pass.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        return START.get_or_init(Instant::now).elapsed().as_secs_f64();
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

#[derive(Clone, Copy, PartialEq)]
enum Outcome {
    Exact,
    Doubt,
    Wrong,
    Invalid,
}

/// Same string up to a one-to-one relabelling of the symbols (2x2x2 answers).
fn same_up_to_relabelling(a: &str, b: &str) -> bool {
    let (mut fwd, mut back) = (
        std::collections::HashMap::new(),
        std::collections::HashMap::new(),
    );
    a.len() == b.len()
        && a.chars()
            .zip(b.chars())
            .all(|(x, y)| *fwd.entry(x).or_insert(y) == y && *back.entry(y).or_insert(x) == x)
}

fn bench_realdata(dir: &Path, a: &BenchResolveArgs, g: &Global) -> CmdResult {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    // group -> [exact, doubt, wrong, legal (unlabelled), illegal]
    let mut groups: std::collections::BTreeMap<String, [usize; 5]> = Default::default();
    for path in &files {
        let text = std::fs::read_to_string(path)?;
        let case: serde_json::Value = serde_json::from_str(&text)?;
        let scan = RawScan::from_json(&text)
            .with_context(|| format!("{} is not a scan", path.display()))?;
        let id = case["id"].as_str().unwrap_or("?").to_string();
        let expected = case["expected"].as_str();
        let source = id.split('-').next().unwrap_or("?");
        let group = format!(
            "{source} {} {}",
            scan.cube_size(),
            if expected.is_some() {
                "labelled"
            } else {
                "unlabelled"
            }
        );
        let opts = ResolveOptions {
            doubt_threshold: a.doubt,
            ..ResolveOptions::default()
        };
        let (verdict, slot) = match resolve_scan(&scan, &opts) {
            Ok(res) => {
                let got = res.cube.to_letters();
                let legal = crate::cube::validate(&got).is_ok();
                match expected {
                    _ if !legal => ("ILLEGAL", 4),
                    Some(e)
                        if got == e
                            || (scan.cube_size() == Size::Two
                                && same_up_to_relabelling(&got, e)) =>
                    {
                        ("exact", 0)
                    }
                    Some(_) => ("WRONG", 2),
                    None => ("legal", 3),
                }
            }
            Err(ResolveError::Ambiguous { .. }) | Err(ResolveError::NoLegalCube { .. }) => {
                ("doubt", 1)
            }
            Err(e) => return Err(anyhow::Error::from(e).context(id)),
        };
        groups.entry(group.clone()).or_default()[slot] += 1;
        if g.json {
            json_line(&json!({"type": "case", "id": id, "group": group, "verdict": verdict}));
        } else if g.verbose > 0 {
            outln!("{id:<45} {verdict}");
        }
    }
    if !g.json {
        outln!(
            "{:<28} {:>6} {:>6} {:>6} {:>6} {:>8}",
            "group",
            "exact",
            "doubt",
            "WRONG",
            "legal",
            "ILLEGAL"
        );
    }
    for (group, c) in &groups {
        if g.json {
            json_line(
                &json!({"type": "group", "group": group, "exact": c[0], "doubt": c[1], "wrong": c[2], "legal": c[3], "illegal": c[4]}),
            );
        } else {
            outln!(
                "{group:<28} {:>6} {:>6} {:>6} {:>6} {:>8}",
                c[0],
                c[1],
                c[2],
                c[3],
                c[4]
            );
        }
    }
    let bad = groups.values().any(|c| c[2] + c[4] > 0);
    Ok(if bad { Exit::No } else { Exit::Ok })
}

pub fn bench(a: BenchResolveArgs, g: &Global) -> CmdResult {
    if let Some(dir) = &a.realdata {
        return bench_realdata(dir, &a, g);
    }
    let size = Size::from_n(a.size as usize).expect("clap range");
    let palettes = if a.palette.is_empty() {
        Palette::ALL.to_vec()
    } else {
        a.palette.clone()
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(a.threads.max(1))
        .build()?;
    if !g.json {
        outln!(
            "{:<12} {:<8} {:>7} {:>9} {:>8} {:>7} {:>7} {:>10} {:>10}",
            "palette",
            "scale",
            "scans",
            "exact%",
            "doubt%",
            "WRONG",
            "no-cube",
            "median cpu ms",
            "p99 cpu ms"
        );
    }
    let mut any_wrong = false;
    for &palette in &palettes {
        for &scale in &a.scale {
            let cond = a.conditions.apply(Conditions::for_palette(palette));
            let results: Vec<(Outcome, f64)> = pool.install(|| {
                (0..a.count)
                    .into_par_iter()
                    .map(|k| {
                        let seed = a.seed.wrapping_add(k);
                        let (cube, scan) = one_synthetic(palette, cond, scale, size, seed, None);
                        let t = thread_cpu_seconds();
                        let opts = ResolveOptions {
                            doubt_threshold: a.doubt,
                            ..ResolveOptions::default()
                        };
                        let r = resolve_scan(&scan, &opts);
                        let ms = (thread_cpu_seconds() - t) * 1e3;
                        let o = match r {
                            Ok(res) => {
                                let same = match size {
                                    Size::Three => res.cube.colors() == cube.colors(),
                                    Size::Two => {
                                        FaceletCube::parse(&cube.to_letters())
                                            .map(|c| c.colors().to_vec())
                                            .ok()
                                            .as_deref()
                                            == Some(res.cube.colors())
                                    }
                                };
                                if same {
                                    Outcome::Exact
                                } else {
                                    Outcome::Wrong
                                }
                            }
                            Err(ResolveError::Ambiguous { .. }) => Outcome::Doubt,
                            Err(_) => Outcome::Invalid,
                        };
                        (o, ms)
                    })
                    .collect()
            });
            if g.verbose > 0 && !g.json {
                for (k, r) in results.iter().enumerate() {
                    if r.0 != Outcome::Exact {
                        let what = match r.0 {
                            Outcome::Wrong => "WRONG",
                            Outcome::Doubt => "doubt",
                            _ => "no-cube",
                        };
                        outln!(
                            "  {what}: cubot synth-scan --palette {} --scale {} --size {} --seed {} (+ the same condition flags)",
                            palette.name(),
                            scale.name(),
                            a.size,
                            a.seed.wrapping_add(k as u64)
                        );
                    }
                }
            }
            let n = results.len().max(1) as f64;
            let count = |o: Outcome| results.iter().filter(|r| r.0 == o).count();
            let mut times: Vec<f64> = results.iter().map(|r| r.1).collect();
            times.sort_by(f64::total_cmp);
            let median = times.get(times.len() / 2).copied().unwrap_or(0.0);
            let p99 = times.get((times.len() * 99) / 100).copied().unwrap_or(0.0);
            let (ex, dz, wr, inv) = (
                count(Outcome::Exact),
                count(Outcome::Doubt),
                count(Outcome::Wrong),
                count(Outcome::Invalid),
            );
            any_wrong |= wr > 0;
            if g.json {
                json_line(
                    &json!({"type": "bench-resolve", "palette": palette.name(), "scale": scale.name(), "size": a.size, "scans": results.len(), "exact": ex, "doubt": dz, "wrong": wr, "no_cube": inv, "median_ms": median, "p99_ms": p99}),
                );
            } else {
                outln!(
                    "{:<12} {:<8} {:>7} {:>9.2} {:>8.2} {:>7} {:>7} {:>10.3} {:>10.3}",
                    palette.name(),
                    scale.name(),
                    results.len(),
                    100.0 * ex as f64 / n,
                    100.0 * dz as f64 / n,
                    wr,
                    inv,
                    median,
                    p99
                );
            }
        }
    }
    let _ = any_wrong;
    Ok(Exit::Ok)
}
