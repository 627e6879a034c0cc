//! Learning a colour profile from a scan of a solved cube.
//!
//! Level: part of `color`; depends on `cube`, `color::raw`, `color::profile` and the
//! resolver. Must not depend on anything above `color`. No printing.
//!
//! The scan is resolved first (so a slightly rotated or mis-scanned cube is noticed), and
//! must come out solved, or at least leave the solved cube within the doubt threshold of
//! the best reading (under harsh light a solved cube's own scan can be in doubt). EV3 channel gains: if one face's colour is close to neutral under
//! the sensor's nominal gains (a white or grey face), its mean counts define the gains
//! (that face is taken as reflectance 0.85 in every channel, the value the nominal gains
//! assume); a cube without a near-neutral face keeps the nominal gains, since nothing in
//! the scan says what "neutral" is. The centroids are then the per-face Lab means.

use super::profile::{Profile, ProfileColor, PROFILE_VERSION};
use super::raw::{RawScan, Scale};
use super::resolve::{
    cube_cost, evenly_lit_labs, facelet_names, resolve, scan_lab, ResolveError, ResolveOptions,
};
use crate::cube::{Face, FaceletCube, Size};

/// Why calibration failed.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    #[error(
        "the scan is not of a solved cube: it resolves to {cube} (stickers off their face: {off})"
    )]
    NotSolved { cube: String, off: String },
}

/// Chroma (C*ab) below which a face counts as neutral for the EV3 gains.
const NEUTRAL_CHROMA: f64 = 18.0;

/// Learns a profile (see the module docs).
pub fn calibrate(
    scan: &RawScan,
    name: Option<String>,
    seed: u64,
) -> Result<Profile, CalibrateError> {
    let opts = ResolveOptions {
        best_effort: true,
        seed,
        ..ResolveOptions::default()
    };
    let res = resolve(scan, &opts)?;
    let size = scan.cube_size();
    let per = size.per_face();
    // Position-based faces: face of sticker i is i / per. A 3x3x3 face's colour is its
    // centre's; a 2x2x2 has no centre, so its face's colour is the one most of its stickers
    // show (the resolver's labels are relative to the DBL corner there).
    let colors = res.cube.colors();
    let face_color: Vec<_> = (0..6)
        .map(|f| {
            let face = &colors[f * per..(f + 1) * per];
            match size.n() % 2 {
                1 => face[per / 2],
                _ => *face
                    .iter()
                    .max_by_key(|c| face.iter().filter(|d| d == c).count())
                    .unwrap_or(&face[0]),
            }
        })
        .collect();
    let off: Vec<usize> = (0..colors.len())
        .filter(|&i| colors[i] != face_color[i / per])
        .collect();
    if !off.is_empty() && !solved_is_plausible(scan, &opts, &res.cube)? {
        return Err(CalibrateError::NotSolved {
            cube: res.cube.to_letters(),
            off: facelet_names(&off, size),
        });
    }
    // The colour each face showed: the resolved cube's, or, when the solved cube was only
    // plausible, the faces' own letters.
    let first_of_face: Vec<Face> = (0..6)
        .map(|f| {
            if off.is_empty() {
                colors[f * per]
            } else {
                Face::ALL[f]
            }
        })
        .collect();
    let scale = scan.effective_scale();
    let mut gains = None;
    if scale != Scale::Rgb8 {
        let (labs, wb) = scan_lab(scan, None);
        // The most neutral bright face.
        let best = (0..6)
            .map(|f| {
                let m = mean(&labs[f * per..(f + 1) * per]);
                (f, (m[1] * m[1] + m[2] * m[2]).sqrt(), m[0])
            })
            .filter(|&(_, c, l)| c < NEUTRAL_CHROMA && l > 40.0)
            .max_by(|a, b| a.2.total_cmp(&b.2));
        gains = Some(match best {
            Some((f, _, _)) if scale == Scale::Ev3Raw => {
                let m = mean(&scan.facelets[f * per..(f + 1) * per]);
                m.map(|v| v / 0.85)
            }
            // Unit vectors: only the gain ratios matter; or no neutral face: keep the balance
            // the resolver used.
            Some((f, _, _)) => {
                let m = mean(&scan.facelets[f * per..(f + 1) * per]);
                m.map(|v| v / 0.85)
            }
            None => wb,
        });
    }
    let provisional = Profile {
        version: PROFILE_VERSION,
        name: name.clone(),
        scale: Some(scale),
        gains,
        colors: Vec::new(),
        stickers: None,
    };
    // Each sticker's class: the face its colour belongs to, by position.
    let labels: Vec<usize> = (0..size.stickers()).map(|i| i / per).collect();
    let labs = evenly_lit_labs(scan, Some(&provisional), &labels);
    let colors_out = (0..6)
        .map(|f| {
            let xs = &labs[f * per..(f + 1) * per];
            let m = mean(xs);
            let spread = std::array::from_fn(|k| {
                (xs.iter().map(|x| (x[k] - m[k]).powi(2)).sum::<f64>() / xs.len() as f64)
                    .sqrt()
                    .max(0.5)
            });
            ProfileColor {
                face: face_letter(size, f, first_of_face[f]),
                lab: m.map(round2),
                spread: spread.map(round2),
            }
        })
        .collect();
    Ok(Profile {
        colors: colors_out,
        gains: gains.map(|g| g.map(round2)),
        stickers: Some(labs.iter().map(|l| l.map(round2)).collect()),
        ..provisional
    })
}

/// Whether the readings leave the solved cube within the doubt threshold of the
/// resolver's best guess: the user says the cube is solved, and under harsh light the
/// solved cube may be only the second-best reading of a scan that does not contradict it.
fn solved_is_plausible(
    scan: &RawScan,
    opts: &ResolveOptions,
    best: &FaceletCube,
) -> Result<bool, CalibrateError> {
    let solved = FaceletCube::solved(scan.cube_size());
    let cost = |c: &FaceletCube| cube_cost(scan, opts, c).map(|v| v.unwrap_or(f64::INFINITY));
    let gap = cost(&solved)? - cost(best)?;
    Ok(gap < opts.doubt_threshold * opts.model.temperature)
}

fn face_letter(size: Size, position_face: usize, resolved: Face) -> char {
    match size {
        Size::Three => Face::ALL[position_face].letter(),
        Size::Two => resolved.letter(),
    }
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

fn mean(xs: &[[f64; 3]]) -> [f64; 3] {
    let n = xs.len().max(1) as f64;
    std::array::from_fn(|k| xs.iter().map(|x| x[k]).sum::<f64>() / n)
}
