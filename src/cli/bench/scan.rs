//! `bench scan`: sticker detection and sampling speed on real camera frames (one thread),
//! and detection accuracy on seeded synthetic renders of a face.
//!
//! Level: `cli`. Depends on `scan` (OpenCV, feature `vision`) and the shared cli helpers;
//! without `vision` the command answers that it was left out of the build.

use std::path::PathBuf;

use crate::cli::args::SizeArg;
use crate::cli::{CmdResult, Global};

/// The face images timed when `--images` is left out, relative to the working directory.
#[cfg(feature = "vision")]
const DEFAULT_IMAGES: &str = "samples/images/camera-1920x1080/3x3x3-random-01";

#[derive(clap::Args, Debug)]
pub struct BenchScanArgs {
    /// Face images to time (a directory with six faces); default
    /// samples/images/camera-1920x1080/3x3x3-random-01 in the working directory (a checkout).
    #[arg(long, value_name = "DIR")]
    pub images: Option<PathBuf>,
    /// Timed repetitions of each image.
    #[arg(long, default_value_t = 15)]
    pub repeat: usize,
    /// Synthetic renders to check detection on (0 = none).
    #[arg(long, default_value_t = 2000)]
    pub renders: usize,
    /// Cube size of the renders.
    #[arg(long, value_enum, default_value_t = SizeArg::Three)]
    pub size: SizeArg,
    /// Seed of the first render.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = crate::cli::args::seed)]
    pub seed: u64,
    /// Share of renders with an occluding bar.
    #[arg(long, allow_negative_numbers = true, default_value_t = 0.3, value_parser = crate::cli::args::unit_interval)]
    pub occlusion: f64,
    /// Write each failing render (annotated with what was found) into this directory.
    #[arg(long, value_name = "DIR")]
    pub failures: Option<PathBuf>,
}

/// The face images to time: `--images`, else [`DEFAULT_IMAGES`] when the working directory
/// holds it.
#[cfg(feature = "vision")]
fn images_dir(a: &BenchScanArgs) -> anyhow::Result<PathBuf> {
    if let Some(p) = &a.images {
        return Ok(p.clone());
    }
    let p = PathBuf::from(DEFAULT_IMAGES);
    anyhow::ensure!(
        p.is_dir(),
        "no face images to time: {DEFAULT_IMAGES} is not in the working directory; pass \
         --images DIR or run from a checkout of cubot"
    );
    Ok(p)
}

#[cfg(not(feature = "vision"))]
pub fn bench(_a: BenchScanArgs, _g: &Global) -> CmdResult {
    anyhow::bail!("the scan benchmark needs OpenCV: rebuilt without feature vision")
}

#[cfg(feature = "vision")]
pub use imp::bench;

#[cfg(feature = "vision")]
mod imp {
    use std::path::Path;
    use std::time::Instant;

    use anyhow::Context;
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::cli::bench::stats::{percentile_sorted, sort_times};
    use crate::cli::common::{thread_cpu, warn_if_cpu_clock_missing};
    use crate::cli::output::json_line;
    use crate::cli::Exit;
    use crate::scan::detect::{read_face, read_face_with, ReadOptions};
    use crate::scan::geom::{dist, quad_centre};
    use crate::scan::io;
    use crate::scan::render::{render_face_truth, RenderOptions};
    use crate::scan::rig::Orientation;
    use crate::scan::RigFace;

    /// Thread CPU time in milliseconds.
    fn cpu_ms() -> f64 {
        thread_cpu().as_secs_f64() * 1e3
    }

    fn median(v: &mut [f64]) -> f64 {
        sort_times(v);
        percentile_sorted(v, 50).unwrap_or(f64::NAN)
    }

    /// Times detection + sampling (and sampling at fixed rig regions) on every face image
    /// of `dir`, `repeat` times each, and prints the medians.
    fn time_images(dir: &Path, a: &BenchScanArgs, g: &Global) -> anyhow::Result<()> {
        let paths = io::find_face_images(dir)?;
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
                let (t, c) = (Instant::now(), cpu_ms());
                let r = read_face(&img, 3, None)?;
                detect_cpu.push(cpu_ms() - c);
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
        let p90 = percentile_sorted(&detect_ms, 90).unwrap_or(f64::NAN);
        if g.json {
            json_line(&serde_json::json!({
                "type": "bench-scan-speed", "images": dir.display().to_string(), "width": w, "height": h,
                "frames": frames, "detect_median_ms": dm, "detect_median_cpu_ms": dc, "detect_p90_ms": p90, "fixed_rig_median_ms": rm, "threads": 1,
            }));
        } else {
            outln!(
                "speed: {frames} frames {w}x{h} from {}, one thread: detection + sampling median {dm:.2} ms wall (p90 {p90:.2} ms), {dc:.2} ms thread CPU; fixed-rig sampling median {rm:.2} ms",
                dir.display()
            );
        }
        Ok(())
    }

    /// What became of the renders.
    #[derive(Default)]
    struct RenderTally {
        ok: usize,
        found: usize,
        occluded: usize,
        occluded_ok: usize,
        /// Seeds of the first ten failures.
        failures: Vec<String>,
    }

    /// Sticker colours of the renders: white, red, green, yellow, orange, blue.
    const RENDER_PALETTE: [[u8; 3]; 6] = [
        [235, 235, 235],
        [200, 20, 30],
        [20, 150, 60],
        [240, 210, 20],
        [240, 110, 20],
        [20, 60, 190],
    ];

    /// Renders one face from `seed`, detects it and counts the outcome; a failure is
    /// written (annotated) into `--failures DIR` when given.
    fn check_render(
        a: &BenchScanArgs,
        opts: &RenderOptions,
        seed: u64,
        tally: &mut RenderTally,
    ) -> anyhow::Result<()> {
        let n = a.size.n();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
        let colors: Vec<[u8; 3]> = (0..n * n)
            .map(|_| RENDER_PALETTE[rng.gen_range(0..6)])
            .collect();
        let truth = render_face_truth(&colors, n, opts, seed);
        if truth.occluded {
            tally.occluded += 1;
        }
        let result = read_face(&truth.image, n, None);
        let good = match &result {
            Ok(r) => {
                tally.found += 1;
                r.stickers.iter().zip(&truth.stickers).all(|(s, q)| {
                    let pitch = dist(q[0], q[1]) / opts.sticker_fill;
                    dist(quad_centre(&s.quad), quad_centre(q)) < 0.25 * pitch
                })
            }
            Err(_) => false,
        };
        if let (false, Some(dir)) = (good, &a.failures) {
            std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
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
            tally.ok += 1;
            if truth.occluded {
                tally.occluded_ok += 1;
            }
        } else if tally.failures.len() < 10 {
            tally.failures.push(seed.to_string());
        }
        Ok(())
    }

    /// Detection on `--renders` synthetic faces: how many have every sticker in place.
    fn check_renders(a: &BenchScanArgs, g: &Global) -> anyhow::Result<()> {
        let opts = RenderOptions {
            occlusion: a.occlusion,
            ..RenderOptions::default()
        };
        let n = a.size.n();
        let mut tally = RenderTally::default();
        let t = Instant::now();
        for k in 0..a.renders {
            check_render(a, &opts, a.seed + k as u64, &mut tally)?;
        }
        let secs = t.elapsed().as_secs_f64();
        let RenderTally {
            ok,
            found,
            occluded,
            occluded_ok,
            failures,
        } = tally;
        let pct = 100.0 * ok as f64 / a.renders as f64;
        if g.json {
            json_line(&serde_json::json!({
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
        Ok(())
    }

    pub fn bench(a: BenchScanArgs, g: &Global) -> CmdResult {
        let dir = images_dir(&a)?;
        // One core, as the goal says.
        opencv::core::set_num_threads(1).ok();
        time_images(&dir, &a, g)?;
        if a.renders > 0 {
            check_renders(&a, g)?;
        }
        warn_if_cpu_clock_missing();
        Ok(Exit::Ok)
    }
}
