//! `calibrate-camera` and `camera list`: the command-line face of the camera rig and the
//! cameras. With a live camera (`--camera INDEX`, or `--sim`'s rendered frames) the rig is
//! aligned on the live page (`--view`): every frame with the grid found on it, and Save
//! writes the rig from the newest frame whose every sticker was detected.
//!
//! Level: `cli`. Depends on `cube`, `scan` (features `vision`, `camera`) and the shared cli
//! argument types; without those features the commands answer that they were left out.

use clap::Subcommand;

use super::args::SizeArg;
use super::{CmdResult, Global};

#[derive(clap::Args, Debug)]
pub struct CalibrateCameraArgs {
    /// A photo of the cube on the rig (one face, as the camera sees it), or a directory of
    /// six face images (U R F D L B naming) to calibrate every face.
    #[arg(required_unless_present_any = ["camera", "sim"])]
    pub image: Option<std::path::PathBuf>,
    /// Align a live camera instead (see `cubot camera list`), on the live page (--view):
    /// Save there writes the rig.
    #[arg(long, value_name = "INDEX", conflicts_with = "image")]
    pub camera: Option<u32>,
    /// Align a simulated camera (rendered frames of a cube face) on the live page.
    #[arg(long, conflicts_with_all = ["image", "camera"])]
    pub sim: bool,
    /// With --sim: seed of the simulated face and frames.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = crate::cli::args::seed)]
    pub seed: u64,
    /// Where to write the camera rig (TOML).
    #[arg(short, long, value_name = "FILE")]
    pub output: std::path::PathBuf,
    /// Cube size.
    #[arg(long, value_enum, default_value_t = SizeArg::Three)]
    pub size: SizeArg,
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
    /// Overwrite a rig shipped in calibration/.
    #[arg(long)]
    pub force: bool,
    /// Start from this camera rig (TOML from an earlier `calibrate-camera`) and keep its
    /// other faces.
    #[arg(long, value_name = "FILE", alias = "update")]
    pub rig: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub view: super::view::ViewArgs,
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

#[cfg(not(feature = "vision"))]
mod imp {
    use super::*;
    pub fn calibrate_camera(_a: CalibrateCameraArgs, _g: &Global) -> CmdResult {
        anyhow::bail!("camera calibration needs OpenCV: rebuilt without feature vision")
    }
}

#[cfg(feature = "vision")]
mod imp {
    use std::path::{Path, PathBuf};

    use anyhow::{bail, Context};

    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    use super::*;
    use crate::cli::connect::{standing_still, stop_on_ctrlc};
    use crate::cli::view::{Live, LiveOptions};
    use crate::cli::Exit;
    use crate::cube::Face;
    use crate::job::camera::frame_event;
    use crate::scan::detect::{read_face, FaceReading};
    use crate::scan::io;
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

    /// The rig to start from: `--rig FILE` (of the same size), else the tracker layout.
    fn starting_rig(a: &CalibrateCameraArgs, n: usize) -> anyhow::Result<Rig> {
        let Some(p) = &a.rig else {
            return Ok(Rig::tracker(n));
        };
        let rig = Rig::load(p)?;
        if rig.size != n {
            bail!(
                "--size {} but {} is for {}x{}",
                n,
                p.display(),
                rig.size,
                rig.size
            );
        }
        Ok(rig)
    }

    /// The faces `--faces` names.
    fn named_faces(a: &CalibrateCameraArgs) -> anyhow::Result<Vec<Face>> {
        a.faces
            .chars()
            .map(|ch| {
                Face::from_letter(ch.to_ascii_uppercase())
                    .with_context(|| format!("--faces: {ch:?} is not a face letter"))
            })
            .collect()
    }

    /// Which image calibrates which face: the six faces of a directory, or the single
    /// image for every face `--faces` names.
    fn face_jobs(a: &CalibrateCameraArgs, image: &Path) -> anyhow::Result<Vec<(Face, PathBuf)>> {
        if image.is_dir() {
            let paths = io::find_face_images(image)?;
            return Ok(Face::ALL
                .iter()
                .map(|f| (*f, paths[f.index()].clone()))
                .collect());
        }
        Ok(named_faces(a)?
            .into_iter()
            .map(|f| (f, image.to_path_buf()))
            .collect())
    }

    /// Stores a face's sticker regions, as detected on an image `w` x `h`, in the rig.
    fn store_face(
        rig: &mut Rig,
        face: Face,
        reading: &FaceReading,
        (w, h): (usize, usize),
        orient: &[(Face, Orientation)],
    ) {
        let mut rf: RigFace = rig.face(face);
        if let Some((_, o)) = orient.iter().find(|(f, _)| *f == face) {
            rf.orientation = *o;
        }
        rf.image_size = Some([w, h]);
        rf.stickers = reading
            .stickers
            .iter()
            .map(|s| s.quad.map(|p| p.map(|v| (v * 10.0).round() / 10.0)))
            .collect();
        rig.set_face(face, rf);
    }

    /// A detected image: its path, the reading and the image's width and height.
    type Detected = (PathBuf, crate::scan::detect::FaceReading, usize, usize);

    /// Says how many stickers of `face` were detected (a JSON line, or a note on stderr).
    fn report_face(g: &Global, face: Face, path: &Path, found: usize, n: usize) {
        if g.json {
            crate::cli::output::json_line(&serde_json::json!({
                "type": "calibrated-face", "face": face.letter().to_string(),
                "image": path.display().to_string(), "detected": found, "stickers": n * n,
            }));
        } else if !g.quiet {
            let rest = if found < n * n {
                " (the rest placed from the grid)"
            } else {
                ""
            };
            errln!(
                "face {}: {} of {} stickers detected in {}{rest}",
                face.letter(),
                found,
                n * n,
                path.display()
            );
        }
    }

    pub fn calibrate_camera(a: CalibrateCameraArgs, g: &Global) -> CmdResult {
        use crate::cli::outfile::{check_output, Writes};
        check_output(&a.output, "-o", Writes::File(crate::input::FileKind::Rig))?;
        if crate::cli::common::is_shipped_config(&a.output) && a.output.exists() && !a.force {
            anyhow::bail!(
                "-o {}: a rig shipped with cubot; write your own (e.g. -o my-rig.toml, and \
                 start from this one with --rig {0}), or add --force; nothing was written",
                a.output.display()
            );
        }
        let save = Arc::new(AtomicBool::new(false));
        let aligning = a.camera.is_some() || a.sim;
        // Every input of a live alignment (the camera too) is checked before the page's
        // address is given.
        let work = match &a.image {
            Some(image) => Work::Images(image.clone()),
            None => Work::Align(prepare(&a)?),
        };
        let live = Live::start(
            &a.view,
            g,
            LiveOptions {
                stop: Some(stop_on_ctrlc()),
                save: aligning.then(|| save.clone()),
                ..LiveOptions::default()
            },
        )?;
        let r = match work {
            Work::Images(image) => from_images(&a, &image, g, &live),
            Work::Align(p) => align(&a, p, g, &live, &save),
        };
        live.ended(&r);
        r
    }

    fn from_images(a: &CalibrateCameraArgs, image: &Path, g: &Global, live: &Live) -> CmdResult {
        let n = a.size.n();
        let mut rig = starting_rig(a, n)?;
        rig.name = a.name.clone().or_else(|| rig_name_of(&a.output));
        let jobs = face_jobs(a, image)?;
        let orient = match &a.orient {
            Some(s) => parse_orient(s)?,
            None => Vec::new(),
        };
        // Each image is detected once, however many faces it stands for.
        let mut cache: Vec<Detected> = Vec::new();
        for (face, path) in &jobs {
            if !cache.iter().any(|c| &c.0 == path) {
                let img = io::load_image(path)?;
                let reading = read_face(&img, n, None)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
                live.event(&frame_event(&img, &reading, Some(*face)));
                cache.push((path.clone(), reading, img.width, img.height));
            }
            let (_, reading, w, h) = cache.iter().find(|c| &c.0 == path).expect("cached");
            store_face(&mut rig, *face, reading, (*w, *h), &orient);
            let found = reading.stickers.iter().filter(|s| s.detected).count();
            report_face(g, *face, path, found, n);
        }
        rig.save(&a.output)?;
        live.text(&format!("wrote the rig {}", a.output.display()));
        if !g.json {
            outln!("wrote {}", a.output.display());
        }
        Ok(Exit::Ok)
    }

    /// Where live frames come from.
    enum Source {
        #[cfg(feature = "camera")]
        Camera(Box<crate::scan::camera::Capture>),
        /// Rendered frames of one face of a seeded cube, each from another pose.
        Sim {
            colors: Vec<[u8; 3]>,
            seed: u64,
            frames: u64,
        },
    }

    /// Simulated frames a second (a real camera gives its own).
    const SIM_FPS: u64 = 4;

    impl Source {
        fn open(a: &CalibrateCameraArgs) -> anyhow::Result<Source> {
            if let Some(_index) = a.camera {
                #[cfg(feature = "camera")]
                return Ok(Source::Camera(Box::new(
                    crate::scan::camera::Capture::open(_index)?,
                )));
                #[cfg(not(feature = "camera"))]
                bail!("cameras need nokhwa: rebuilt without feature camera");
            }
            use rand::SeedableRng;
            let n = a.size.n();
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(a.seed);
            let cube = crate::cube::random_state(a.size.into(), &mut rng);
            let palette = crate::color::Palette::Standard;
            let look = crate::color::synth::Appearance::new(
                palette,
                crate::color::synth::Conditions::for_palette(palette),
                a.seed,
            );
            let colors = (0..n * n)
                .map(|i| {
                    look.reading(cube.colors()[i], i, i, crate::color::Scale::Rgb8, &mut rng)
                        .map(|v| v.round().clamp(0.0, 255.0) as u8)
                })
                .collect();
            Ok(Source::Sim {
                colors,
                seed: a.seed,
                frames: 0,
            })
        }

        fn frame(&mut self, n: usize) -> anyhow::Result<crate::scan::RgbImage> {
            match self {
                #[cfg(feature = "camera")]
                Source::Camera(c) => Ok(c.frame(0)?),
                Source::Sim {
                    colors,
                    seed,
                    frames,
                } => {
                    std::thread::sleep(std::time::Duration::from_millis(1000 / SIM_FPS));
                    *frames += 1;
                    let opts = crate::scan::render::RenderOptions::default();
                    let k = seed.wrapping_mul(1000).wrapping_add(*frames);
                    Ok(crate::scan::render::render_face(colors, n, &opts, k))
                }
            }
        }
    }

    /// What `calibrate-camera` does: fit photos, or align a live camera.
    enum Work {
        Images(std::path::PathBuf),
        Align(Prepared),
    }

    /// What a live alignment needs, checked and opened before it starts.
    struct Prepared {
        faces: Vec<Face>,
        orient: Vec<(Face, Orientation)>,
        rig: Rig,
        source: Source,
    }

    fn prepare(a: &CalibrateCameraArgs) -> anyhow::Result<Prepared> {
        if !a.view.view && a.view.view_addr.is_none() {
            bail!("a live camera is aligned on the live page: add --view");
        }
        let faces = named_faces(a)?;
        let orient = match &a.orient {
            Some(s) => parse_orient(s)?,
            None => Vec::new(),
        };
        let mut rig = starting_rig(a, a.size.n())?;
        rig.name = a.name.clone().or_else(|| rig_name_of(&a.output));
        let source = Source::open(a)?;
        Ok(Prepared {
            faces,
            orient,
            rig,
            source,
        })
    }

    /// Live alignment: frames with the grid found on them go to the page until Save (or a
    /// stop); Save writes the rig from the newest frame whose every sticker was detected.
    fn align(
        a: &CalibrateCameraArgs,
        p: Prepared,
        g: &Global,
        live: &Live,
        save: &AtomicBool,
    ) -> CmdResult {
        let Prepared {
            faces,
            orient,
            mut rig,
            mut source,
        } = p;
        let n = a.size.n();
        let stop = stop_on_ctrlc();
        live.phase("align the camera");
        const ALIGN: &str = "move the camera (or the cube) until every sticker is outlined in solid green, then press Save";
        live.text(ALIGN);
        if !g.quiet {
            errln!("on the live page: {ALIGN} (Ctrl-C: leave without writing a rig)");
        }
        // Nothing moves while the camera is aligned: Ctrl-C leaves at once (130); the
        // page's Stop ends the loop as an error.
        let (reading, size) = standing_still(
            "stopped (Ctrl-C) before Save: no rig written",
            || -> anyhow::Result<(FaceReading, (usize, usize))> {
                let mut good: Option<(FaceReading, (usize, usize))> = None;
                loop {
                    if stop.load(Ordering::SeqCst) {
                        bail!("stopped before Save: no rig written");
                    }
                    let img = source.frame(n)?;
                    match read_face(&img, n, None) {
                        Ok(reading) => {
                            live.event(&frame_event(&img, &reading, None));
                            if reading.stickers.iter().all(|s| s.detected) {
                                good = Some((reading, (img.width, img.height)));
                            }
                        }
                        Err(_) => live.event(&frame_event(&img, &no_grid(n), None)),
                    }
                    if !save.swap(false, Ordering::SeqCst) {
                        continue;
                    }
                    match good.take() {
                        Some(found) => return Ok(found),
                        None => live.text(
                            "no frame has shown the whole grid yet: align the cube, then Save again",
                        ),
                    }
                }
            },
        )?;
        for &face in &faces {
            store_face(&mut rig, face, &reading, size, &orient);
            report_face(g, face, Path::new("live camera"), n * n, n);
        }
        rig.save(&a.output)?;
        live.text(&format!("saved the rig to {}", a.output.display()));
        if !g.json {
            outln!("wrote {}", a.output.display());
        }
        Ok(Exit::Ok)
    }

    /// A reading of a frame where no grid was found: no stickers.
    fn no_grid(n: usize) -> FaceReading {
        FaceReading {
            n,
            stickers: Vec::new(),
            grid: None,
            candidates: Vec::new(),
            from_rig: false,
        }
    }
}

pub use imp::calibrate_camera;

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
        super::output::json_line(&serde_json::json!({"type": "cameras", "count": cams.len()}));
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

/// A rig without `--name` is named after its file (`rig.toml` → `rig`), not after the
/// photo convention it starts from.
#[cfg(feature = "vision")]
fn rig_name_of(output: &std::path::Path) -> Option<String> {
    output
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .filter(|s| !s.is_empty())
}
