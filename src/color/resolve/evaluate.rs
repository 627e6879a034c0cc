//! What an evaluation of the resolver needs beyond [`super::resolve`]: the cost the model
//! gives a named cube (so that on a labelled scan the margin of the true cube is known even
//! when the resolver prefers another), and re-dealt scans.
//!
//! A re-dealt scan is a labelled real scan whose pieces are dealt into another legal cube:
//! each corner and edge takes the readings of the same piece in the real scan (its stickers
//! in the new orientation), centres stay. The readings stay real (the sensor's noise, the
//! stickers' wear, gloss and shadows, clipping), only their arrangement is new, so one real
//! scan yields many labelled scans of the same cube, sensor and light. A reading moved to
//! another face is relit by the ratio of the two faces' light as the resolver estimates it
//! from the labelled scan (the sticker kind, corner or edge, does not change), and a
//! clipped channel stays clipped.
//!
//! Level: part of `color::resolve`; depends on `cube`, `color::raw` and the resolver's
//! readings, light and refinement. Must not depend on anything above `color`.

use palette::{LinSrgb, Srgb};

use super::light::Illumination;
use super::readings::{clipped, lab_of_linear, linear_readings, scan_lab};
use super::refine::Evidence;
use super::{check_profile_scale, check_unread, ResolveError, ResolveOptions};
use crate::color::profile::Profile;
use crate::color::raw::{RawScan, Scale};
use crate::cube::corner_sticker;
use crate::cube::{Face, FaceletCube, Size, EDGE_FACELETS};

/// The cost (nats: negative log-likelihood) of `cube` as an explanation of `scan`, scored
/// as the resolver scores its candidates: the light and the six classes re-fitted to that
/// cube. Lower is better; two cubes' costs differ by the log of their likelihood ratio.
/// `None` when `cube` is not of the scan's size.
pub fn cube_cost(
    scan: &RawScan,
    opts: &ResolveOptions,
    cube: &FaceletCube,
) -> Result<Option<f64>, ResolveError> {
    scan.check()?;
    check_unread(scan)?;
    check_profile_scale(scan, opts.profile.as_ref())?;
    let size = scan.cube_size();
    if cube.size() != size {
        return Ok(None);
    }
    let (labs, wb) = scan_lab(scan, opts.profile.as_ref());
    let labels: Vec<usize> = cube.colors().iter().map(|f| f.index()).collect();
    // The profile's colours matched to this cube's classes (by their mean readings).
    let read = scan.read_mask();
    let prior = opts
        .profile
        .as_ref()
        .map(|p| super::profile_prior(p, size, &super::class_means(&labs, &read, &labels)));
    let evidence = Evidence::new(
        scan,
        opts.profile.as_ref(),
        wb,
        prior,
        opts.node_budget,
        opts.model,
    );
    Ok(Some(evidence.settled_cost(&labels)))
}

/// The stickers that a labelling (`labels`, a class per sticker) explains worse, by more
/// than `nats`, than the same labelling with that one sticker given another class: the
/// readings that clearly show another colour than the labelling says, under the light and
/// classes the resolver fits. Each sticker's alternatives are scored like
/// [`cube_cost`] (light and classes re-fitted), so a sticker that is only worn or shaded
/// toward a neighbouring colour is not one of them. An unread sticker is never one.
pub fn misfit_stickers(
    scan: &RawScan,
    opts: &ResolveOptions,
    labels: &[usize],
    nats: f64,
) -> Result<Vec<usize>, ResolveError> {
    scan.check()?;
    check_unread(scan)?;
    check_profile_scale(scan, opts.profile.as_ref())?;
    let (_, wb) = scan_lab(scan, opts.profile.as_ref());
    let evidence = Evidence::new(
        scan,
        opts.profile.as_ref(),
        wb,
        None,
        opts.node_budget,
        opts.model,
    );
    let base = evidence.settled_cost(labels);
    let mut trial = labels.to_vec();
    let mut off = Vec::new();
    for i in (0..labels.len()).filter(|&i| scan.is_read(i)) {
        let better = (0..6).filter(|&c| c != labels[i]).any(|c| {
            trial[i] = c;
            let cost = evidence.settled_cost(&trial);
            trial[i] = labels[i];
            cost < base - nats
        });
        if better {
            off.push(i);
        }
    }
    Ok(off)
}

/// The Lab of every reading of `scan` re-expressed under even light, the light estimated
/// as the resolver does (one level per face and one per sticker kind) with the stickers'
/// classes known (`labels`, a class per sticker): what calibration stores, so that a
/// profile's colours do not carry the calibration scan's vignette. The light is estimated
/// from the read stickers; an unread sticker's entry is its placeholder's.
pub fn evenly_lit_labs(
    scan: &RawScan,
    profile: Option<&Profile>,
    labels: &[usize],
) -> Vec<[f64; 3]> {
    let (lin, _) = linear_readings(scan, profile);
    let mut light = Illumination::new(scan.cube_size(), super::Model::default().light_prior);
    let read = scan.read_mask();
    for _ in 0..8 {
        if light.estimate(&lin, labels, Some(&read)) < 1e-3 {
            break;
        }
    }
    lin.iter()
        .enumerate()
        .map(|(i, c)| {
            let g = light.gain(i);
            lab_of_linear(c.map(|v| v / g))
        })
        .collect()
}

/// `scan` (whose cube is `truth`) with its pieces dealt as in `target` (see the module
/// docs). `None` when the sizes differ, `truth` is not a cube whose pieces can be named, or
/// some stickers of `scan` were not read (re-deal the full scan, then leave stickers unread).
pub fn redeal(scan: &RawScan, truth: &FaceletCube, target: &FaceletCube) -> Option<RawScan> {
    let size = scan.cube_size();
    if truth.size() != size || target.size() != size || scan.check().is_err() || !scan.is_complete()
    {
        return None;
    }
    let scale = scan.effective_scale();
    let (lin, wb) = linear_readings(scan, None);
    let labels: Vec<usize> = truth.colors().iter().map(|f| f.index()).collect();
    let mut light = Illumination::new(size, super::Model::default().light_prior);
    for _ in 0..8 {
        if light.estimate(&lin, &labels, None) < 1e-3 {
            break;
        }
    }
    // source[i]: the facelet of the real scan whose reading goes to facelet i.
    let mut source: Vec<usize> = (0..size.stickers()).collect();
    let tc = truth.colors();
    let gc = target.colors();
    for slot in 0..8 {
        let dest: [usize; 3] = std::array::from_fn(|k| corner_sticker(size, slot, k));
        let want: [Face; 3] = dest.map(|i| gc[i]);
        let from = (0..8).find_map(|s| {
            let src: [usize; 3] = std::array::from_fn(|k| corner_sticker(size, s, k));
            let cols = src.map(|i| tc[i]);
            same_set(&cols, &want).then_some(src)
        })?;
        for k in 0..3 {
            source[dest[k]] = *from.iter().find(|&&i| tc[i] == want[k])?;
        }
    }
    if size == Size::Three {
        for dest in EDGE_FACELETS {
            let want = dest.map(|i| gc[i]);
            let from = EDGE_FACELETS
                .iter()
                .find(|src| same_set(&src.map(|i| tc[i]), &want))?;
            for k in 0..2 {
                source[dest[k]] = *from.iter().find(|&&i| tc[i] == want[k])?;
            }
        }
    }
    let facelets = source
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let ratio = light.face_gain(i) / light.face_gain(s);
            let raw = scan.facelets[s];
            let moved: [f64; 3] = std::array::from_fn(|k| lin[s][k] * ratio * wb[k]);
            to_raw(moved, raw, scale)
        })
        .collect();
    let mut out = RawScan::new(size, scale, facelets);
    out.sigma = scan
        .sigma
        .as_ref()
        .map(|sig| source.iter().map(|&s| sig[s]).collect());
    Some(out)
}

/// Same multiset of faces (a piece's colours, in any order).
fn same_set<const N: usize>(a: &[Face; N], b: &[Face; N]) -> bool {
    let mut x = a.map(|f| f.index());
    let mut y = b.map(|f| f.index());
    x.sort_unstable();
    y.sort_unstable();
    x == y
}

/// A relit linear reading back on the scan's own scale; a channel that was clipped stays
/// at the top of the range.
fn to_raw(linear: [f64; 3], original: [f64; 3], scale: Scale) -> [f64; 3] {
    let out: [f64; 3] = match scale {
        Scale::Rgb8 => {
            let c = linear.map(|v| v.clamp(0.0, 1.0));
            let s: Srgb<f64> = Srgb::from_linear(LinSrgb::new(c[0], c[1], c[2]));
            [s.red, s.green, s.blue].map(|v| (v * 255.0).round())
        }
        Scale::Ev3Raw => linear.map(|v| (v.clamp(0.0, 1020.0) * 5.0).round() / 5.0),
        Scale::Unit => {
            let n = linear.iter().map(|v| v * v).sum::<f64>().sqrt().max(1e-12);
            linear.map(|v| v / n)
        }
    };
    std::array::from_fn(|k| {
        if clipped(original[k], scale) {
            original[k]
        } else {
            out[k].min(scale.max_value())
        }
    })
}
