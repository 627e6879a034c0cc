//! `scan --images DIR` and `scan --camera INDEX`: six face images → sticker detection and
//! sampling → `RawScan` → resolved cube (the vision work; routed from `cli/scan.rs`).

use std::path::PathBuf;

use super::{CmdResult, Global};

/// What `scan --images DIR` / `scan --camera INDEX` was asked.
#[derive(Clone, Debug, Default)]
pub struct ImageScan {
    /// A directory of six face images.
    pub images: Option<PathBuf>,
    /// A camera index.
    pub camera: Option<u32>,
    /// The camera rig (from `cubot calibrate-camera`).
    pub rig: Option<PathBuf>,
    /// Detect the stickers even where the rig stores their regions.
    pub detect: bool,
    /// Cube size: 3 or 2; default from the rig, else 3.
    pub size: Option<usize>,
    /// Where to write the raw readings.
    pub raw_out: Option<PathBuf>,
    /// Where to write the annotated face images.
    pub annotate: Option<PathBuf>,
    /// Print the most likely cube even when the resolver is not sure.
    pub best_effort: bool,
    /// The colour profile to resolve with.
    pub profile: Option<PathBuf>,
}

#[cfg(not(feature = "vision"))]
pub fn scan(_a: ImageScan, _g: &Global, _live: &super::view::Live) -> CmdResult {
    anyhow::bail!("scanning images needs OpenCV: rebuilt without feature vision (build with --features vision)")
}

#[cfg(feature = "vision")]
pub use imp::*;

#[cfg(feature = "vision")]
mod imp {
    use std::path::Path;

    use anyhow::{bail, Context};

    use super::*;
    use crate::cli::view::Live;
    use crate::cli::Exit;
    use crate::cube::Face;
    use crate::job::camera::frame_event;
    use crate::job::RunEvent;
    use crate::scan::detect::{scan_faces_with, unclipped_scan, FaceReading, ReadOptions};
    use crate::scan::io;
    use crate::scan::{RawScan, RgbImage, Rig};

    /// Refuses a scan in which two faces read alike sticker for sticker (in any turn of
    /// the photo): the same face photographed twice, or one file copied under two names. A
    /// legal cube never shows that, and the resolver would only say that no cube fits.
    fn same_photo_twice(raw: &RawScan, names: &[String]) -> anyhow::Result<()> {
        let per = (raw.size * raw.size) as usize;
        let faces: Vec<Vec<[f64; 3]>> = raw
            .facelets
            .chunks(per)
            .map(|f| {
                let mut v = f.to_vec();
                v.sort_by(|a, b| a.iter().sum::<f64>().total_cmp(&b.iter().sum::<f64>()));
                v
            })
            .collect();
        for i in 0..faces.len() {
            for j in i + 1..faces.len() {
                let diff: f64 = faces[i]
                    .iter()
                    .zip(&faces[j])
                    .flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| (x - y).abs()))
                    .sum::<f64>()
                    / (3 * per) as f64;
                if diff < 1.5 {
                    let name = |k: usize| {
                        let face = Face::ALL[k].letter();
                        match names.get(k) {
                            Some(n) => format!("{face} ({n})"),
                            None => face.to_string(),
                        }
                    };
                    bail!(
                        "faces {} and {} look alike, sticker for sticker: the same face photographed twice, or one photo under two names; take a photo of each face",
                        name(i),
                        name(j)
                    );
                }
            }
        }
        Ok(())
    }

    pub fn scan(a: ImageScan, g: &Global, live: &Live) -> CmdResult {
        let profile =
            crate::cli::color::profile_for(a.profile.as_deref(), crate::color::Scale::Rgb8, false)?;
        let rig = match &a.rig {
            Some(p) => Some(Rig::load(p)?),
            None => None,
        };
        let n = match (a.size, &rig) {
            (Some(n), Some(r)) if n != r.size => bail!(
                "--size {n} but the rig {} is for {}x{}",
                a.rig
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                r.size,
                r.size
            ),
            (Some(n), _) => n,
            (None, Some(r)) => r.size,
            (None, None) => 3,
        };
        if n != 2 && n != 3 {
            bail!("--size {n}: only 2 and 3 are supported");
        }
        if let Some(p) = &a.raw_out {
            use crate::cli::outfile::{check_output, Writes};
            check_output(p, "--raw-out", Writes::File(crate::input::FileKind::Scan))?;
        }
        let (faces, names) = if let Some(dir) = &a.images {
            load_dir(dir)?
        } else if let Some(index) = a.camera {
            capture(index, g)?
        } else {
            bail!("give --images DIR or --camera INDEX");
        };
        let opts = ReadOptions {
            force_detect: a.detect,
            ..ReadOptions::default()
        };
        let (mut raw, readings) = scan_faces_with(&faces, n, rig.as_ref(), &opts)?;
        if live.on() {
            for face in Face::ALL {
                let i = face.index();
                live.event(&frame_event(&faces[i], &readings[i], Some(face)));
            }
            let read = raw.facelets.iter().copied().enumerate();
            live.event(&RunEvent::readings(
                Some(crate::color::Scale::Rgb8),
                false,
                read,
            ));
        }
        raw.provenance = Some(serde_json::json!({
            "source": if a.images.is_some() { "images" } else { "camera" },
            "images": names,
            "calibration": a.rig.as_ref().map(|p| p.display().to_string()),
            "detected": readings.iter().map(|r| r.stickers.iter().filter(|s| s.detected).count()).collect::<Vec<_>>(),
        }));
        let raw = second_opinion(raw, &readings, rig.as_ref(), g);
        same_photo_twice(&raw, &names)?;
        if let Some(path) = &a.raw_out {
            write_raw(path, &raw)?;
        }
        let outcome = resolve_scan(&raw, a.best_effort, profile, g, live)?;
        if let Some(dir) = &a.annotate {
            let rig_face = |f: Face| rig.as_ref().map(|r| r.face(f)).unwrap_or_default();
            std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
            for face in Face::ALL {
                let reading: &FaceReading = &readings[face.index()];
                let labels: Option<Vec<String>> = outcome.letters.as_ref().map(|letters| {
                    // Facelet labels back to image order.
                    let o = rig_face(face).orientation;
                    let mut v = vec![String::new(); n * n];
                    for r in 0..n {
                        for c in 0..n {
                            let f = o.facelet_of(n, r, c);
                            v[r * n + c] = letters[face.index() * n * n + f].to_string();
                        }
                    }
                    v
                });
                let img = io::annotate(&faces[face.index()], reading, labels.as_deref())?;
                let path = dir.join(format!("{}.png", face.letter()));
                io::save_image(&path, &img)?;
            }
        }
        Ok(outcome.exit)
    }

    fn write_raw(path: &Path, raw: &RawScan) -> anyhow::Result<()> {
        let facelets: Vec<[u8; 3]> = raw
            .facelets
            .iter()
            .map(|c| c.map(|v| v.round().clamp(0.0, 255.0) as u8))
            .collect();
        let mut text = String::from("{\n  \"size\": ");
        text.push_str(&raw.size.to_string());
        text.push_str(",\n  \"scale\": \"rgb8\",\n  \"value_scale\": \"8-bit RGB 0..255 (cubot scan: trimmed mean of each sticker's centre)\",\n");
        text.push_str("  \"facelet_order\": \"kociemba facelet order U1..U9 R1..R9 F1..F9 D1..D9 L1..L9 B1..B9\",\n");
        if let Some(p) = &raw.provenance {
            text.push_str(&format!("  \"provenance\": {p},\n"));
        }
        text.push_str("  \"facelets\": [\n");
        for (i, f) in facelets.iter().enumerate() {
            let sep = if i + 1 < facelets.len() { "," } else { "" };
            text.push_str(&format!("    [{}, {}, {}]{sep}\n", f[0], f[1], f[2]));
        }
        text.push_str("  ]");
        if let Some(sigma) = &raw.sigma {
            // Each reading's standard error per channel (see calibration/README.md).
            text.push_str(",\n  \"sigma\": [\n");
            for (i, s) in sigma.iter().enumerate() {
                let sep = if i + 1 < sigma.len() { "," } else { "" };
                text.push_str(&format!(
                    "    [{:.3}, {:.3}, {:.3}]{sep}\n",
                    s[0], s[1], s[2]
                ));
            }
            text.push_str("  ]");
        }
        text.push_str("\n}\n");
        std::fs::write(path, text).with_context(|| format!("write {}", path.display()))
    }

    fn load_dir(dir: &Path) -> anyhow::Result<([RgbImage; 6], Vec<String>)> {
        let paths = io::find_face_images(dir)?;
        let mut imgs = Vec::with_capacity(6);
        for p in &paths {
            imgs.push(io::load_image(p)?);
        }
        let names = paths.iter().map(|p| p.display().to_string()).collect();
        Ok((
            imgs.try_into().map_err(|_| anyhow::anyhow!("six images"))?,
            names,
        ))
    }

    #[cfg(feature = "camera")]
    fn capture(index: u32, g: &Global) -> anyhow::Result<([RgbImage; 6], Vec<String>)> {
        use std::io::BufRead;
        let mut cam = crate::scan::camera::Capture::open(index)?;
        let mut imgs = Vec::with_capacity(6);
        let stdin = std::io::stdin();
        for face in Face::ALL {
            if !g.quiet {
                errln!(
                    "show face {} to camera {index} (upright as in the net, or as the calibration says), then press Enter",
                    face.letter()
                );
            }
            let mut line = String::new();
            stdin.lock().read_line(&mut line).context("read stdin")?;
            imgs.push(cam.frame(3)?);
        }
        let names = Face::ALL
            .iter()
            .map(|f| format!("camera {index} face {}", f.letter()))
            .collect();
        Ok((
            imgs.try_into().map_err(|_| anyhow::anyhow!("six frames"))?,
            names,
        ))
    }

    #[cfg(not(feature = "camera"))]
    fn capture(_index: u32, _g: &Global) -> anyhow::Result<([RgbImage; 6], Vec<String>)> {
        bail!("cameras need nokhwa: rebuilt without feature camera")
    }

    /// What the resolver concluded.
    pub struct Outcome {
        pub exit: Exit,
        /// Resolved face letter per facelet (URFDLB), when there is an answer to draw.
        pub letters: Option<Vec<char>>,
    }

    /// The scan to resolve: as read, unless its colours are in doubt and reading the
    /// saturated stickers from their unsaturated pixels ([`unclipped_scan`]) makes the
    /// resolver confident. Which one was used goes into the provenance (and `-v`).
    fn second_opinion(
        raw: RawScan,
        readings: &[FaceReading],
        rig: Option<&Rig>,
        g: &Global,
    ) -> RawScan {
        use crate::color::{resolve, ResolveOptions};
        let confident = |r: &RawScan| resolve(r, &ResolveOptions::default()).is_ok();
        if confident(&raw) {
            return raw;
        }
        let Some(mut alt) = unclipped_scan(&raw, readings, rig) else {
            return raw;
        };
        if !confident(&alt) {
            return raw;
        }
        let rebuilt: usize = readings
            .iter()
            .map(|r| r.stickers.iter().filter(|s| s.unclipped.is_some()).count())
            .sum();
        if let Some(serde_json::Value::Object(p)) = alt.provenance.as_mut() {
            p.insert("unclipped_stickers".into(), rebuilt.into());
        }
        if !g.json && g.verbose > 0 {
            errln!(
                "in doubt as read; confident with the {rebuilt} saturated sticker(s) read from their unsaturated pixels"
            );
        }
        alt
    }

    /// Resolves the scan and prints the result: the state as the first word (exit 0), or
    /// `doubt: ...` / `invalid: ...` (exit 1), as `cubot resolve` does.
    fn resolve_scan(
        raw: &RawScan,
        best_effort: bool,
        profile: Option<crate::color::Profile>,
        g: &Global,
        live: &Live,
    ) -> anyhow::Result<Outcome> {
        use crate::cli::color::{print_ambiguous, print_no_legal_cube, print_resolution};
        use crate::color::{resolve, ResolveError, ResolveOptions};
        let opts = ResolveOptions {
            best_effort,
            profile,
            ..ResolveOptions::default()
        };
        let size = raw.cube_size();
        let resolved = resolve(raw, &opts);
        match &resolved {
            Ok(res) => live.event(&RunEvent::resolution(res)),
            Err(ResolveError::Ambiguous { best, .. }) => live.event(&RunEvent::resolution(best)),
            _ => {}
        }
        match resolved {
            Ok(res) => {
                print_resolution(g, &res);
                if !g.json && g.verbose > 0 {
                    errln!(
                        "margin to the best rival legal cube: {:.1} nats{}",
                        res.cube_margin,
                        if res.confident {
                            ""
                        } else {
                            " (best effort: not confident)"
                        }
                    );
                }
                Ok(Outcome {
                    exit: Exit::Ok,
                    letters: Some(res.cube.to_letters().chars().collect()),
                })
            }
            Err(ResolveError::Ambiguous { doubtful, best }) => {
                print_ambiguous(g, &doubtful, &best);
                if doubtful.len() > crate::job::FRAME_DOUBT {
                    wide_doubt_note(
                        g,
                        size,
                        "this many stickers in doubt is rarely wear or light",
                    );
                }
                Ok(Outcome {
                    exit: Exit::No,
                    letters: Some(best.cube.to_letters().chars().collect()),
                })
            }
            Err(e @ ResolveError::NoLegalCube { .. }) => {
                print_no_legal_cube(g, &e);
                wide_doubt_note(g, size, "no legal cube fits these readings");
                Ok(Outcome {
                    exit: Exit::No,
                    letters: None,
                })
            }
            Err(e) => Err(anyhow::Error::from(e).context("cannot resolve the scanned colours")),
        }
    }

    /// A doubt over more stickers than worn or badly lit ones make: photos whose stickers
    /// were not where they were read (another cube size, a rig of another camera or
    /// distance) look like this; said with the way to look.
    fn wide_doubt_note(g: &Global, size: crate::cube::Size, what: &str) {
        if !g.quiet && !g.json {
            let n = size.n();
            errln!(
                "note: {what}: are the photos of a {n}x{n}x{n} cube (--size) and does the rig fit this camera and distance (--rig)? `--annotate DIR` draws where each sticker was read"
            );
        }
    }
}
