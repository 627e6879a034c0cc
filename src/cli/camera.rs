//! `calibrate-camera`, `camera list`, `bench scan` (the vision work).

use clap::Subcommand;

use super::{CmdResult, Global};

#[derive(clap::Args, Debug)]
pub struct CalibrateCameraArgs {
    /// A photo of the cube on the rig (one face, as the camera sees it), or a directory of
    /// six face images (U R F D L B naming) to calibrate every face.
    pub image: std::path::PathBuf,
    /// Where to write the rig calibration (TOML).
    #[arg(short, long, value_name = "FILE")]
    pub output: std::path::PathBuf,
    /// Cube size: 3 or 2.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub size: usize,
    /// Faces the single image stands for (the camera sees each face at the same place),
    /// e.g. `URFDLB`.
    #[arg(long, default_value = "URFDLB", value_name = "FACES")]
    pub faces: String,
    /// Orientations per face: `U=90,D=180m` (degrees clockwise; `m` = then mirrored).
    /// Default: every face upright as in the net (the rubiks-cube-tracker convention).
    #[arg(long, value_name = "LIST")]
    pub orient: Option<String>,
    /// A name for the rig.
    #[arg(long)]
    pub name: Option<String>,
    /// Start from an existing calibration (keeps its other faces).
    #[arg(long, value_name = "FILE")]
    pub update: Option<std::path::PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct CameraArgs {
    #[command(subcommand)]
    pub what: CameraWhat,
}

#[derive(Subcommand, Debug)]
pub enum CameraWhat {
    /// The cameras found on this machine.
    List,
}

#[derive(clap::Args, Debug)]
pub struct BenchScanArgs {
    /// Face images to time (a directory with six faces); default: the 1920x1080 sample set.
    #[arg(long, value_name = "DIR")]
    pub images: Option<std::path::PathBuf>,
    /// Timed repetitions of each image.
    #[arg(long, default_value_t = 15)]
    pub repeat: usize,
    /// Synthetic renders to check detection on (0 = none).
    #[arg(long, default_value_t = 2000)]
    pub renders: usize,
    /// Cube size of the renders.
    #[arg(long, default_value_t = 3)]
    pub size: usize,
    /// Seed of the first render.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Share of renders with an occluding bar.
    #[arg(long, default_value_t = 0.3)]
    pub occlusion: f64,
    /// Write each failing render (annotated with what was found) into this directory.
    #[arg(long, value_name = "DIR")]
    pub failures: Option<std::path::PathBuf>,
}

#[cfg(not(feature = "vision"))]
mod imp {
    use super::*;
    pub fn calibrate_camera(_a: CalibrateCameraArgs, _g: &Global) -> CmdResult {
        anyhow::bail!("camera calibration needs OpenCV: rebuilt without feature vision")
    }
    pub fn bench(_a: BenchScanArgs, _g: &Global) -> CmdResult {
        anyhow::bail!("the scan benchmark needs OpenCV: rebuilt without feature vision")
    }
}

#[cfg(feature = "vision")]
mod imp {
    use std::path::PathBuf;
    use std::time::Instant;

    use anyhow::{bail, Context};

    use super::*;
    use crate::cli::Exit;
    use crate::cube::Face;
    use crate::scan::detect::{read_face, read_face_with, ReadOptions};
    use crate::scan::geom::{dist, quad_centre};
    use crate::scan::io;
    use crate::scan::render::{render_face_truth, RenderOptions};
    use crate::scan::rig::Orientation;
    use crate::scan::{Rig, RigFace};

    fn parse_orient(s: &str) -> anyhow::Result<Vec<(Face, Orientation)>> {
        let mut out = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (f, v) = part
                .split_once('=')
                .with_context(|| format!("--orient {part:?}: use FACE=DEGREES[m], e.g. U=90"))?;
            let face = f
                .trim()
                .chars()
                .next()
                .and_then(Face::from_letter)
                .with_context(|| format!("--orient {part:?}: {f:?} is not a face letter"))?;
            let v = v.trim();
            let (deg, mirror) = match v.strip_suffix('m') {
                Some(d) => (d, true),
                None => (v, false),
            };
            let rotate: u16 = deg
                .parse()
                .ok()
                .filter(|d| d % 90 == 0 && *d < 360)
                .with_context(|| format!("--orient {part:?}: degrees must be 0, 90, 180 or 270"))?;
            out.push((face, Orientation { rotate, mirror }));
        }
        Ok(out)
    }

    pub fn calibrate_camera(a: CalibrateCameraArgs, g: &Global) -> CmdResult {
        if a.size != 2 && a.size != 3 {
            bail!("--size {}: only 2 and 3 are supported", a.size);
        }
        let mut rig = match &a.update {
            Some(p) => Rig::load(p)?,
            None => Rig::tracker(a.size),
        };
        if rig.size != a.size {
            bail!(
                "--size {} but {} is for {}x{}",
                a.size,
                a.update.as_ref().unwrap().display(),
                rig.size,
                rig.size
            );
        }
        rig.name = a.name.clone().or(rig.name);
        // Which image calibrates which face.
        let mut jobs: Vec<(Face, PathBuf)> = Vec::new();
        if a.image.is_dir() {
            let paths = io::find_face_images(&a.image)?;
            for f in Face::ALL {
                jobs.push((f, paths[f.index()].clone()));
            }
        } else {
            for ch in a.faces.chars() {
                let f = Face::from_letter(ch.to_ascii_uppercase())
                    .with_context(|| format!("--faces: {ch:?} is not a face letter"))?;
                jobs.push((f, a.image.clone()));
            }
        }
        let orient = match &a.orient {
            Some(s) => parse_orient(s)?,
            None => Vec::new(),
        };
        let mut cache: Vec<(PathBuf, crate::scan::detect::FaceReading, usize, usize)> = Vec::new();
        for (face, path) in &jobs {
            if !cache.iter().any(|c| &c.0 == path) {
                let img = io::load_image(path)?;
                let reading = read_face(&img, a.size, None)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
                cache.push((path.clone(), reading, img.width, img.height));
            }
            let (_, reading, w, h) = cache.iter().find(|c| &c.0 == path).expect("cached");
            let mut rf: RigFace = rig.face(*face);
            if let Some((_, o)) = orient.iter().find(|(f, _)| f == face) {
                rf.orientation = *o;
            }
            rf.image_size = Some([*w, *h]);
            rf.stickers = reading
                .stickers
                .iter()
                .map(|s| s.quad.map(|p| p.map(|v| (v * 10.0).round() / 10.0)))
                .collect();
            rig.set_face(*face, rf);
            let found = reading.stickers.iter().filter(|s| s.detected).count();
            if g.json {
                crate::cli::output::json_line(&serde_json::json!({
                    "type": "calibrated-face", "face": face.letter().to_string(),
                    "image": path.display().to_string(), "detected": found, "stickers": a.size * a.size,
                }));
            } else if !g.quiet {
                let rest = if found < a.size * a.size {
                    " (the rest placed from the grid)"
                } else {
                    ""
                };
                eprintln!(
                    "face {}: {} of {} stickers detected in {}{rest}",
                    face.letter(),
                    found,
                    a.size * a.size,
                    path.display()
                );
            }
        }
        rig.save(&a.output)?;
        if !g.json {
            outln!("{}", a.output.display());
        }
        Ok(Exit::Ok)
    }

    /// CPU time of the calling thread in milliseconds: on a loaded machine the wall clock
    /// measures the neighbours, this measures the work (OpenCV runs on this thread only).
    fn thread_cpu_ms() -> f64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec into the pointer we own.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        if rc != 0 {
            return f64::NAN;
        }
        ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
    }

    fn median(v: &mut [f64]) -> f64 {
        v.sort_by(f64::total_cmp);
        if v.is_empty() {
            f64::NAN
        } else {
            v[v.len() / 2]
        }
    }

    pub fn bench(a: BenchScanArgs, g: &Global) -> CmdResult {
        if a.size != 2 && a.size != 3 {
            bail!("--size {}: only 2 and 3 are supported", a.size);
        }
        // One core, as the goal says.
        opencv::core::set_num_threads(1).ok();
        let dir = a.images.clone().or_else(|| {
            let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
            [
                root.join("samples/images/camera-1920x1080/3x3x3-random-01"),
                root.join("../shared/realdata/images/camera-1920x1080/3x3x3-random-01"),
            ]
            .into_iter()
            .find(|p| p.is_dir())
        });
        if let Some(dir) = dir {
            let paths = io::find_face_images(&dir)?;
            let mut detect_ms = Vec::new();
            let mut detect_cpu = Vec::new();
            let mut rig_ms = Vec::new();
            let (mut w, mut h) = (0, 0);
            for p in &paths {
                let img = io::load_image(p)?;
                (w, h) = (img.width, img.height);
                let reading = read_face(&img, 3, None)?;
                let rf = RigFace {
                    orientation: Orientation::default(),
                    image_size: Some([img.width, img.height]),
                    stickers: reading.stickers.iter().map(|s| s.quad).collect(),
                };
                for _ in 0..a.repeat.max(1) {
                    let (t, c) = (Instant::now(), thread_cpu_ms());
                    let r = read_face(&img, 3, None)?;
                    detect_cpu.push(thread_cpu_ms() - c);
                    detect_ms.push(t.elapsed().as_secs_f64() * 1e3);
                    std::hint::black_box(r);
                    let t = Instant::now();
                    let r = read_face_with(&img, 3, Some(&rf), &ReadOptions::default())?;
                    rig_ms.push(t.elapsed().as_secs_f64() * 1e3);
                    std::hint::black_box(r);
                }
            }
            let frames = detect_ms.len();
            let (dm, rm) = (median(&mut detect_ms), median(&mut rig_ms));
            let dc = median(&mut detect_cpu);
            let p90 = detect_ms[(frames * 9 / 10).min(frames - 1)];
            if g.json {
                crate::cli::output::json_line(&serde_json::json!({
                    "type": "bench-scan-speed", "images": dir.display().to_string(), "width": w, "height": h,
                    "frames": frames, "detect_median_ms": dm, "detect_median_cpu_ms": dc, "detect_p90_ms": p90, "fixed_rig_median_ms": rm, "threads": 1,
                }));
            } else {
                outln!(
                    "speed: {frames} frames {w}x{h} from {}, one thread: detection + sampling median {dm:.2} ms wall (p90 {p90:.2} ms), {dc:.2} ms thread CPU; fixed-rig sampling median {rm:.2} ms",
                    dir.display()
                );
            }
        } else if !g.quiet {
            eprintln!("no 1920x1080 sample images found: speed not measured (give --images DIR)");
        }
        if a.renders > 0 {
            let palette: [[u8; 3]; 6] = [
                [235, 235, 235],
                [200, 20, 30],
                [20, 150, 60],
                [240, 210, 20],
                [240, 110, 20],
                [20, 60, 190],
            ];
            let opts = RenderOptions {
                occlusion: a.occlusion,
                ..RenderOptions::default()
            };
            let n = a.size;
            let (mut ok, mut found, mut occluded, mut occluded_ok) =
                (0usize, 0usize, 0usize, 0usize);
            let mut failures: Vec<String> = Vec::new();
            let t = Instant::now();
            for k in 0..a.renders {
                let seed = a.seed + k as u64;
                use rand::{Rng, SeedableRng};
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
                let colors: Vec<[u8; 3]> =
                    (0..n * n).map(|_| palette[rng.gen_range(0..6)]).collect();
                let truth = render_face_truth(&colors, n, &opts, seed);
                if truth.occluded {
                    occluded += 1;
                }
                let result = read_face(&truth.image, n, None);
                let good = match &result {
                    Ok(r) => {
                        found += 1;
                        r.stickers.iter().zip(&truth.stickers).all(|(s, q)| {
                            let pitch = dist(q[0], q[1]) / opts.sticker_fill;
                            dist(quad_centre(&s.quad), quad_centre(q)) < 0.25 * pitch
                        })
                    }
                    Err(_) => false,
                };
                if let (false, Some(dir)) = (good, &a.failures) {
                    std::fs::create_dir_all(dir)
                        .with_context(|| format!("create {}", dir.display()))?;
                    let img = match &result {
                        Ok(r) => io::annotate(&truth.image, r, None)?,
                        Err(_) => truth.image.clone(),
                    };
                    let kind = match (result.is_ok(), truth.occluded) {
                        (true, true) => "misplaced-occluded",
                        (true, false) => "misplaced",
                        (false, true) => "no-grid-occluded",
                        (false, false) => "no-grid",
                    };
                    io::save_image(&dir.join(format!("render-{seed}-{kind}.png")), &img)?;
                }
                if good {
                    ok += 1;
                    if truth.occluded {
                        occluded_ok += 1;
                    }
                } else if failures.len() < 10 {
                    failures.push(seed.to_string());
                }
            }
            let secs = t.elapsed().as_secs_f64();
            let pct = 100.0 * ok as f64 / a.renders as f64;
            if g.json {
                crate::cli::output::json_line(&serde_json::json!({
                    "type": "bench-scan-renders", "size": n, "renders": a.renders, "seed": a.seed,
                    "found": found, "all_in_place": ok, "percent": pct, "occluded": occluded,
                    "occluded_all_in_place": occluded_ok, "failed_seeds": failures, "seconds": secs,
                }));
            } else {
                outln!(
                    "renders: {ok}/{} faces ({pct:.2}%) with every sticker in place ({n}x{n}, seeds {}..{}; occluded {occluded_ok}/{occluded}; a grid found on {found}); first failures: seeds {}",
                    a.renders,
                    a.seed,
                    a.seed + a.renders as u64 - 1,
                    if failures.is_empty() { "none".to_string() } else { failures.join(" ") }
                );
            }
        }
        Ok(Exit::Ok)
    }
}

pub use imp::{bench, calibrate_camera};

pub fn camera(a: CameraArgs, g: &Global) -> CmdResult {
    match a.what {
        CameraWhat::List => list(g),
    }
}

#[cfg(feature = "camera")]
fn list(g: &Global) -> CmdResult {
    let cams = crate::scan::camera::list_cameras()?;
    if g.json {
        for c in &cams {
            super::output::json_line(&serde_json::json!({
                "type": "camera", "index": c.index, "name": c.name, "description": c.description,
            }));
        }
    } else if cams.is_empty() {
        outln!("no cameras found");
    } else {
        for c in &cams {
            outln!("{}\t{}\t{}", c.index, c.name, c.description);
        }
    }
    Ok(super::Exit::Ok)
}

#[cfg(not(feature = "camera"))]
fn list(_g: &Global) -> CmdResult {
    anyhow::bail!("cameras need nokhwa: rebuilt without feature camera")
}
