//! `resolve`, `calibrate` and `synth-scan`: the command-line face of [`crate::color`].
//!
//! Level: `cli`. Depends on `cube`, `color` and the shared cli argument types.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::json;

use super::args::{PaletteArg, SizeArg};
use super::outfile::Writes;
use super::output::json_line;
use super::view::{Live, LiveOptions};
use super::{CmdResult, Exit, Global};
use crate::color::calibrate::{calibrate as learn, CalibrateError};
use crate::color::resolve::facelet_names;
use crate::color::svg::resolution_svg;
use crate::color::synth::{synth_scan as synthesize, Appearance, Conditions, Palette};
use crate::color::{
    resolve as resolve_scan, Profile, RawScan, Resolution, ResolveError, ResolveOptions, Scale,
};
use crate::cube::{random_state, FaceletCube, Size};
use crate::input::{read_text, FileKind};
use crate::job::RunEvent;

#[derive(clap::Args, Debug)]
pub struct ResolveArgs {
    /// A scan file (JSON: size, `facelets`: `[[r,g,b] × 54|24]`, optional scale), or `-`
    /// for standard input. The case files in samples/realdata/cases work as they are.
    pub scan: PathBuf,
    /// A colour profile learned by `cubot calibrate` (a prior, not a requirement).
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// Print the best legal cube even when a rival is too close to call (exit 0).
    #[arg(long)]
    pub best_effort: bool,
    /// Draw the measured net, the resolved net and the a*b* clusters to this SVG file.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// k-means seed.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = crate::cli::args::seed)]
    pub seed: u64,
    /// Doubt threshold in nats (a rival legal cube closer than this is "too close").
    #[arg(long, allow_negative_numbers = true, default_value_t = crate::color::resolve::DEFAULT_DOUBT_NATS,
          value_parser = super::args::finite_non_negative)]
    pub doubt: f64,
}

#[derive(clap::Args, Debug)]
pub struct CalibrateArgs {
    /// A scan of a solved cube (JSON). Leave it out to scan a solved cube on the robot
    /// instead, with --port (or the one EV3 on USB) or --sim. The flags of a robot's scan
    /// (the simulator's --palette, --seed, ...) are refused with it, as they would do nothing.
    #[arg(conflicts_with_all = ["port", "sim", "robot", "scanner", "robot_config", "faults", "seed", "speed", "palette", "baud"])]
    pub scan: Option<PathBuf>,
    /// Where to write the colour profile (TOML).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// A name stored in the profile.
    #[arg(long)]
    pub name: Option<String>,
    /// With a robot: also write its raw scan here (JSON, in the scanner's scale).
    #[arg(long, value_name = "FILE", conflicts_with = "scan")]
    pub raw_out: Option<PathBuf>,
    /// Overwrite a profile shipped in calibration/.
    #[arg(long)]
    pub force: bool,
    /// The robot that scans the solved cube (with --sim: a simulated one holding a solved
    /// cube of --palette).
    #[command(flatten)]
    pub connect: super::connect::ConnectArgs,
    #[command(flatten)]
    pub view: super::view::ViewArgs,
}

#[derive(clap::Args, Debug)]
pub struct SynthScanArgs {
    /// Sticker palette of the scanned cube.
    #[arg(long, value_enum, ignore_case = true, default_value_t = PaletteArg::Standard)]
    pub palette: PaletteArg,
    /// Seed (cube state, appearance and noise).
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = crate::cli::args::seed)]
    pub seed: u64,
    /// Output scale: rgb8 (camera sRGB), ev3-raw (EV3 RGB-RAW counts) or unit.
    #[arg(long, default_value = "rgb8", value_parser = parse_scale)]
    pub scale: Scale,
    /// How many scans (one JSON object a line when more than one), at most 10000.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub count: u64,
    /// Cube size.
    #[arg(long, value_enum, default_value_t = SizeArg::Three)]
    pub size: SizeArg,
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
    #[arg(long, allow_negative_numbers = true, value_parser = super::args::finite_non_negative)]
    pub brightness_spread: Option<f64>,
    /// Mean wear toward grey (0..1).
    #[arg(long, allow_negative_numbers = true, value_parser = super::args::unit_interval)]
    pub fade: Option<f64>,
    /// σ of the light's per-channel log cast (EV3: gain spread).
    #[arg(long, allow_negative_numbers = true, value_parser = super::args::finite_non_negative)]
    pub cast: Option<f64>,
    /// Light fall-off toward face corners (EV3: per-position level spread).
    #[arg(long, allow_negative_numbers = true, value_parser = super::args::finite_non_negative)]
    pub vignette: Option<f64>,
    /// Per-read noise (fraction of the signal).
    #[arg(long, allow_negative_numbers = true, value_parser = super::args::finite_non_negative)]
    pub noise: Option<f64>,
    /// Exposure (1 = white near full scale).
    #[arg(long, allow_negative_numbers = true, value_parser = super::args::finite_positive)]
    pub exposure: Option<f64>,
}

impl ConditionArgs {
    /// The conditions `c` with every given override set.
    pub fn apply(&self, mut c: Conditions) -> Conditions {
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

/// Parses `--scale`: rgb8, ev3-raw (or ev3) or unit.
pub fn parse_scale(s: &str) -> Result<Scale, String> {
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
    let text = read_text(path, FileKind::Scan)?;
    RawScan::from_json(&text).map_err(|e| {
        // Scans one a line, as `synth-scan --count` writes them.
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        if lines.len() > 1 && RawScan::from_json(lines[0]).is_ok() {
            anyhow::anyhow!(
                "{} holds {} scans, one a line (as `cubot synth-scan --count` writes them); this command takes one scan a file: take one line out, e.g. `sed -n 1p {} > one.json`",
                path.display(),
                lines.len(),
                path.display()
            )
        } else {
            anyhow::Error::from(e).context(format!("{} is not a scan", path.display()))
        }
    })
}

/// The colour profile at `p`, given with `--profile`: an error that does not name the file
/// (a version or a colour count out of range) is said with the flag and the file.
pub fn load_profile(p: &Path) -> anyhow::Result<Profile> {
    Profile::load(p).map_err(|e| {
        let said = e.to_string();
        if said.contains(&p.display().to_string()) {
            anyhow::anyhow!(said)
        } else {
            anyhow::anyhow!("--profile {}: {said}", p.display())
        }
    })
}

/// The colour profile `--profile` names, checked against the scale the scanner reads
/// before anything moves or is captured (exit 2 when it was learned on another scale).
/// `scan_file`: the readings come from a scan file (`resolve`), not a scanner at hand.
pub fn profile_for(
    path: Option<&Path>,
    scale: Scale,
    scan_file: bool,
) -> anyhow::Result<Option<Profile>> {
    let Some(p) = path else {
        return Ok(None);
    };
    let profile = load_profile(p)?;
    if let Err(ResolveError::ProfileScale { profile: ps, scan }) =
        crate::color::resolve::profile_fits_scale(Some(&profile), scale)
    {
        if scan_file {
            bail!(
                "--profile {} was learned on {} readings, but this scan holds {} readings: give a profile learned on {} readings, or learn one from a scan of the solved cube on that scale (`cubot calibrate SOLVED.json -o FILE`)",
                p.display(),
                ps.name(),
                scan.name(),
                scan.name()
            );
        }
        // The command that learns a profile on the scale this scanner reads.
        let how = match scale {
            Scale::Ev3Raw => format!(
                "`{}` with the cube solved in the robot",
                crate::job::error::calibrate_command(
                    crate::job::RobotKind::Mindcub3r,
                    crate::job::ScannerKind::Sensor
                )
            ),
            _ => "`cubot calibrate SCAN.json -o FILE` from this scanner's scan of the solved cube (`scan --raw-out SCAN.json`)".to_string(),
        };
        bail!(
            "--profile {} was learned on {} readings, but this scanner reads {}: learn one with it, {how}",
            p.display(),
            ps.name(),
            scan.name()
        );
    }
    Ok(Some(profile))
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
    // The closest rival legal cube (the `rivals` of the resolution line are all those
    // within --doubt), and how far behind the best it is.
    if let Some(r) = &res.rival {
        json_line(
            &json!({"type": "rival", "cube": r.to_letters(), "closest": true,
                          "nats_behind": res.cube_margin}),
        );
    }
    for (i, s) in res.stickers.iter().enumerate() {
        let mut line = json!({
            "type": "sticker",
            "index": i,
            "facelet": crate::color::resolve::facelet_name(i, size),
            "lab": s.lab.map(|v| (v * 100.0).round() / 100.0),
            "face": s.face.letter().to_string(),
            "margin": (s.margin * 100.0).round() / 100.0,
            "runner_up": s.runner_up.map(|f| f.letter().to_string()),
            "doubtful": res.doubtful.contains(&i),
        });
        if !s.read {
            line["read"] = json!(false);
        }
        json_line(&line);
    }
}

/// How likely a best guess is, as a percentage a reader can take in ("about 73 %", "over
/// 99.9 %").
pub(crate) fn likelihood_text(res: &Resolution) -> String {
    let p = 100.0 * res.probability();
    if !res.contradicted.is_empty() {
        "not likely at all (readings deny it)".to_string()
    } else if p > 99.9 {
        "over 99.9 %".to_string()
    } else if p >= 99.0 {
        format!("about {p:.1} %")
    } else {
        format!("about {p:.0} %")
    }
}

/// A resolved scan: the `resolution` line (JSON) or the state's letters (text), as
/// `resolve` and `scan` print it. A best-effort answer that is not sure says so on stderr:
/// how likely it is, how far the closest rival is, and which stickers are in doubt.
pub(crate) fn print_resolution(g: &Global, res: &Resolution) {
    let letters = res.cube.to_letters();
    let unread = res.unread();
    if g.json {
        // Stickers by name, as a JSON list.
        let names = |stickers: &[usize]| {
            json!(facelet_names(stickers, res.cube.size())
                .split_whitespace()
                .collect::<Vec<_>>())
        };
        let mut line = json!({
            "type": "resolution",
            "cube": letters,
            "confident": res.confident,
            "cube_margin": res.cube_margin,
            "probability": res.probability(),
            "doubtful": names(&res.doubtful),
            "rivals": res.close_rivals.iter().map(|c| c.to_letters()).collect::<Vec<_>>(),
        });
        if !unread.is_empty() {
            line["unread"] = names(&unread);
        }
        if !res.overruled.is_empty() {
            line["overruled"] = names(&res.overruled);
        }
        json_line(&line);
    } else {
        outln!("{letters}");
        if !unread.is_empty() && !g.quiet {
            errln!(
                "note: stickers {} were not read; the cube's rules filled them in",
                facelet_names(&unread, res.cube.size())
            );
        }
        if !res.overruled.is_empty() && !g.quiet {
            errln!("{}", overruled_note(&res.overruled, res.cube.size()));
        }
        if !res.confident && !g.quiet {
            errln!(
                "note: best effort, not sure: this cube is {} likely; stickers in doubt: {} {}",
                likelihood_text(res),
                facelet_names(&res.doubtful, res.cube.size()),
                doubt_basis(res)
            );
        }
    }
}

/// Stickers read clearly as colours the cube's rules do not allow there, given the only
/// colours a legal cube can have: said, so that the user looks at them.
pub(crate) fn overruled_note(overruled: &[usize], size: crate::cube::Size) -> String {
    format!(
        "note: the cube's rules overrule the clear readings of {} {}: the cube as read is not a real one there (a misread, worn or swapped sticker?); look at {} if the answer seems wrong",
        if overruled.len() == 1 { "sticker" } else { "stickers" },
        facelet_names(overruled, size),
        if overruled.len() == 1 { "it" } else { "them" }
    )
}

/// What the named stickers are: where the best guess and its close rivals differ, or the
/// least certain ones when no rival cube was reached.
pub(crate) fn doubt_basis(res: &Resolution) -> String {
    if let Some(rule) = &res.contradiction {
        return format!(
            "read clearly as colours no legal cube has there: the cube as read, {}, is not a real cube ({rule})",
            res.as_read().to_letters()
        );
    }
    if res.profile_disagrees {
        return "are where the readings alone and the colour profile say different cubes (a profile of another cube, or learned in another light?)".to_string();
    }
    match res.close_rivals.len() {
        0 => "are the least certain (no rival cube was reached to compare)".to_string(),
        1 => format!(
            "are where a rival legal cube {:.1} nats behind differs from the best",
            res.cube_margin
        ),
        n => format!(
            "are where the {n} rival legal cubes within --doubt differ from the best (the closest {:.1} nats behind)",
            res.cube_margin
        ),
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
            "probability": best.probability(),
            "rivals": best.close_rivals.iter().map(|c| c.to_letters()).collect::<Vec<_>>(),
            "contradiction": best.contradiction,
            "as_read": best.as_read().to_letters(),
        }));
    } else {
        // Re-scanning cannot settle a quarrel with the profile; leaving it out or learning
        // one on this cube can.
        let next = if best.contradiction.is_some() {
            "look at the cube (a corner turned in place, an edge flipped, a piece put back wrong) and re-scan; --best-effort gives the nearest legal cube"
        } else if best.profile_disagrees {
            "leave out --profile, or learn one on this cube (`cubot calibrate`)"
        } else {
            "re-scan those stickers or use --best-effort"
        };
        outln!(
            "doubt: stickers {names} {}; best guess {letters}, {} likely; {next}",
            doubt_basis(best),
            likelihood_text(best)
        );
    }
}

/// No legal cube within the resolver's budget: the `doubt` line naming the least certain
/// stickers, as `resolve` and `scan` print it.
pub(crate) fn print_no_legal_cube(g: &Global, e: &ResolveError) {
    let ResolveError::NoLegalCube {
        expanded,
        suspects,
        size,
    } = e
    else {
        return;
    };
    let names = facelet_names(suspects, *size);
    if g.json {
        json_line(&json!({
            "type": "doubt",
            "message": e.to_string(),
            "expanded": expanded,
            "doubtful": names.split_whitespace().collect::<Vec<_>>(),
            "doubtful_indices": suspects,
        }));
    } else {
        outln!("doubt: {e}");
    }
}

pub fn resolve(a: ResolveArgs, g: &Global) -> CmdResult {
    if let Some(p) = &a.svg {
        super::outfile::check_output(p, "--svg", Writes::Svg)?;
    }
    let scan = read_scan(&a.scan)?;
    let opts = ResolveOptions {
        // A profile of another scale is refused naming the command that learns a fitting one.
        profile: profile_for(a.profile.as_deref(), scan.effective_scale(), true)?,
        best_effort: a.best_effort,
        seed: a.seed,
        doubt_threshold: a.doubt,
        ..ResolveOptions::default()
    };
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
                errln!(
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
        Err(e @ ResolveError::NoLegalCube { .. }) => {
            print_no_legal_cube(g, &e);
            Ok(Exit::No)
        }
        Err(e) => {
            Err(anyhow::Error::from(e).context(format!("cannot resolve {}", a.scan.display())))
        }
    }
}

pub fn calibrate(a: CalibrateArgs, g: &Global) -> CmdResult {
    super::outfile::check_output(&a.output, "-o", Writes::File(FileKind::Profile))?;
    if super::common::is_shipped_config(&a.output) && a.output.exists() && !a.force {
        bail!(
            "-o {}: a profile shipped with cubot; write your own (e.g. -o mycube.toml), or add --force; {}",
            a.output.display(),
            if a.scan.is_some() {
                "nothing was learned or written"
            } else {
                "nothing was scanned"
            }
        );
    }
    if let Some(p) = &a.raw_out {
        super::outfile::check_output(p, "--raw-out", Writes::File(FileKind::Scan))?;
    }
    let stop = super::connect::stop_on_ctrlc();
    let live = Live::start(
        &a.view,
        g,
        LiveOptions {
            stop: Some(stop.clone()),
            time_scale: if a.connect.sim { a.connect.speed } else { 1.0 },
            ..LiveOptions::default()
        },
    )?;
    let r = (|| {
        let scan = match &a.scan {
            Some(p) => read_scan(p)?,
            None => {
                live.phase("connect and home");
                scan_solved_on_robot(&a, g, &stop, &live)?
            }
        };
        learn_and_save(&scan, &a, g, &live)
    })()
    .map_err(super::connect::scan_stopped);
    live.ended(&r);
    r
}

/// `calibrate --port/--sim`: the robot's scan of the solved cube in it (a simulated robot
/// starts with a solved cube).
fn scan_solved_on_robot(
    a: &CalibrateArgs,
    g: &Global,
    stop: &std::sync::Arc<std::sync::atomic::AtomicBool>,
    live: &Live,
) -> anyhow::Result<RawScan> {
    let size: Size = a.connect.size.into();
    let start = a.connect.sim.then(|| FaceletCube::solved(size));
    let mut robot = super::connect::connect(&a.connect, start, stop)?;
    let scale = robot.scan_scale();
    let bar = super::output::progress_allowed(g).then(|| {
        let b = indicatif::ProgressBar::new(size.stickers() as u64);
        b.set_message("scanning the solved cube");
        b
    });
    if bar.is_none() && !g.quiet && !g.json {
        errln!("scanning the solved cube: {} stickers…", size.stickers());
    }
    let (scan, _) = robot.scan(size, &mut |step| {
        if let Some(frame) = step.frame {
            live.event(frame);
        }
        live.event(&RunEvent::readings(
            scale,
            false,
            step.readings.iter().copied(),
        ));
        if let Some(b) = &bar {
            b.set_length(step.total as u64);
            b.set_position(step.done as u64);
        }
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if let Some(p) = &a.raw_out {
        std::fs::write(p, scan.to_json())
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    Ok(scan)
}

/// The learned classes for the live page: each colour's mean and spread, and where every
/// sticker of the calibration scan reads.
fn calibration_note(profile: &Profile, output: &Path) -> serde_json::Value {
    json!({
        "type": "calibration",
        "text": format!("learned {} colours; saved to {}", profile.colors.len(), output.display()),
        "classes": profile.colors.iter().map(|c| json!({
            "face": c.face.to_string(), "mean": c.lab, "spread": c.spread,
        })).collect::<Vec<_>>(),
        "stickers": profile.stickers.iter().flatten().map(|lab| json!({"lab": lab})).collect::<Vec<_>>(),
    })
}

fn learn_and_save(scan: &RawScan, a: &CalibrateArgs, g: &Global, live: &Live) -> CmdResult {
    if live.on() {
        if let Ok(res) = resolve_scan(scan, &ResolveOptions::default()) {
            live.event(&RunEvent::resolution(&res));
        }
    }
    match learn(scan, a.name.clone(), 1) {
        Ok(profile) => {
            profile.save(&a.output)?;
            live.note(calibration_note(&profile, &a.output));
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
            // Calibration learns each face's colour from a solved cube's face.
            let said = format!(
                "not solved: the scan resolves to {cube}; stickers off their face: {off}; calibrate learns from a solved cube: solve it and calibrate again (a new scan of it)"
            );
            live.text(&said);
            if g.json {
                json_line(&json!({"type": "not-solved", "cube": cube, "off": off}));
            } else {
                outln!("{said}");
            }
            Ok(Exit::No)
        }
        Err(
            e @ (CalibrateError::NotDistinct { .. }
            | CalibrateError::NotUniform { .. }
            | CalibrateError::Unread { .. }),
        ) => {
            live.text(&format!("refused: {e}"));
            if g.json {
                json_line(&json!({"type": "refused", "reason": e.to_string()}));
            } else {
                outln!("refused: {e}");
            }
            Ok(Exit::No)
        }
        Err(CalibrateError::Resolve(ResolveError::Ambiguous { doubtful, .. })) => {
            outln!(
                "doubt: stickers {} (calibrate needs a clear scan of a solved cube): check the light and that the cube is solved, then calibrate again (a new scan)",
                facelet_names(&doubtful, scan.cube_size())
            );
            Ok(Exit::No)
        }
        Err(CalibrateError::Resolve(ResolveError::NoLegalCube { .. })) => {
            outln!("invalid: no legal cube fits the readings: is it a solved cube, sitting square and evenly lit? Then calibrate again (a new scan)");
            Ok(Exit::No)
        }
        Err(CalibrateError::Resolve(ResolveError::NoCube(why))) if a.scan.is_none() => bail!(
            "the scan sees no cube: {why}; nothing was written: put the solved cube in the tray (or uncover the sensor), then calibrate again"
        ),
        Err(e) => Err(e.into()),
    }
}

/// One seeded synthetic scan of `state` (a random cube of `size` when `None`): the cube
/// and its scan.
pub fn one_synthetic(
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

pub fn synth_scan(a: SynthScanArgs, g: &Global) -> CmdResult {
    let size = Size::from(a.size);
    let palette = Palette::from(a.palette);
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
    let cond = a.conditions.apply(Conditions::for_palette(palette));
    for k in 0..a.count {
        let seed = a.seed.wrapping_add(k);
        let (cube, mut scan) = one_synthetic(palette, cond, a.scale, size, seed, state.as_ref());
        if let Some(serde_json::Value::Object(m)) = &mut scan.provenance {
            m.insert("expected".into(), json!(cube.to_letters()));
            m.insert("seed".into(), json!(seed));
        }
        if g.json {
            // A scan file's fields with the line's type (which a scan's reader ignores).
            let mut line = serde_json::to_value(&scan)?;
            line["type"] = "scan".into();
            json_line(&line);
        } else if a.count == 1 {
            outln!("{}", scan.to_json());
        } else {
            outln!("{}", serde_json::to_string(&scan)?);
        }
    }
    Ok(Exit::Ok)
}
