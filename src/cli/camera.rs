//! `calibrate-camera` and `camera list`: the command-line face of the camera rig and the
//! cameras.
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
    pub image: std::path::PathBuf,
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
    /// Start from this camera rig (TOML from an earlier `calibrate-camera`) and keep its
    /// other faces.
    #[arg(long, value_name = "FILE", alias = "update")]
    pub rig: Option<std::path::PathBuf>,
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

    use super::*;
    use crate::cli::Exit;
    use crate::cube::Face;
    use crate::scan::detect::read_face;
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

    /// Which image calibrates which face: the six faces of a directory, or the single
    /// image for every face `--faces` names.
    fn face_jobs(a: &CalibrateCameraArgs) -> anyhow::Result<Vec<(Face, PathBuf)>> {
        let mut jobs = Vec::new();
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
        Ok(jobs)
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
            eprintln!(
                "face {}: {} of {} stickers detected in {}{rest}",
                face.letter(),
                found,
                n * n,
                path.display()
            );
        }
    }

    pub fn calibrate_camera(a: CalibrateCameraArgs, g: &Global) -> CmdResult {
        let n = a.size.n();
        let mut rig = starting_rig(&a, n)?;
        rig.name = a.name.clone().or(rig.name);
        let jobs = face_jobs(&a)?;
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
            report_face(g, *face, path, found, n);
        }
        rig.save(&a.output)?;
        if !g.json {
            outln!("{}", a.output.display());
        }
        Ok(Exit::Ok)
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
