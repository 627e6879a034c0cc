//! The resolver: raw readings → white balance → CIELAB → six colour classes (k-means first,
//! then class models re-fitted to the legal cube) → the most likely *legal* cube by k-best
//! search over piece assignments, with per-sticker margins and a cube-level doubt test.
//!
//! Level: part of `color`; depends on `cube`. No printing.
//!
//! Likelihood model: each reading carries its own measurement variance in Lab (the
//! device's noise, quantisation plus a small multiplicative part, with clipped channels
//! very uncertain, propagated through the conversion by finite differences). Each colour
//! class is a Student-t per axis of its own frame (lightness, chroma along the class's hue,
//! hue across it: wear pulls a sticker toward grey along the chroma axis, light moves it
//! in lightness, the hue is the stable part), fitted robustly (re-weighted moments) to the
//! stickers assigned to it, its spread being what the scatter leaves after the readings'
//! own noise, shrunk toward the median class spread (and its mean toward a calibration
//! profile's centroid when one is given). A sticker's cost for a class is its negative
//! log-likelihood; a cube's cost is the sum. 3x3x3: the six centres define the classes and
//! so the faces; the k-best search fills the 8 corner and 12 edge slots with distinct real
//! pieces under the twist, flip and parity rules. 2x2x2: the classes come from k-means, and
//! every colour scheme (which classes are opposite, and the handedness: 30 up to rotation)
//! is searched.
//!
//! Doubt: the legal cubes the search finds near the best (and, on a 3x3x3, the best's
//! whole-class recolourings by a cube rotation, centres kept) are each scored under their
//! OWN re-estimated light and re-fitted classes (a profile likelihood per hypothesis), not
//! under the model fitted to the best; a rival within the doubt window puts the stickers
//! where it differs in doubt. A candidate that only renames the best's colour groups is
//! the same cube. When the cheapest under its own model is not the cube the model was
//! settled on, the refinement restarts from it before the final search is trusted.

use palette::{FromColor, Lab, LinSrgb, Srgb};

use super::profile::Profile;
use super::raw::{RawScan, RawScanError, Scale};
use super::search::{Assignment, KBest};
use super::synth::EV3_WHITE_COUNTS;
use crate::cube::{
    CornerSlot, CubieCube, EdgeSlot, Face, FaceletCube, PocketCube, Size, CORNER_FACELETS,
    EDGE_FACELETS,
};

/// Options of [`resolve`].
#[derive(Clone, Debug)]
pub struct ResolveOptions {
    /// Calibration prior (centroids, EV3 gains).
    pub profile: Option<Profile>,
    /// Return the best legal cube even when a close second exists.
    pub best_effort: bool,
    /// Seed for k-means.
    pub seed: u64,
    /// A second legal cube within this many nats (log-likelihood) of the best puts the
    /// stickers where they differ in doubt.
    pub doubt_threshold: f64,
    /// Search budget: node expansions per k-best search.
    pub node_budget: usize,
}

impl Default for ResolveOptions {
    fn default() -> ResolveOptions {
        ResolveOptions {
            profile: None,
            best_effort: false,
            seed: 1,
            doubt_threshold: DEFAULT_DOUBT_NATS,
            node_budget: 200_000,
        }
    }
}

/// Default doubt threshold in nats: a rival legal cube less than e^8 ≈ 3000 times less
/// likely than the best is "too close to call".
pub const DEFAULT_DOUBT_NATS: f64 = 8.0;

/// The verdict on one sticker.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct StickerVerdict {
    /// Measured colour (CIELAB, D65, after white balance).
    pub lab: [f64; 3],
    /// The face whose colour the sticker shows in the resolved cube.
    pub face: Face,
    /// Cost of the runner-up colour minus the chosen one's (nats; negative when the legal
    /// cube overrode this sticker's own nearest colour).
    pub margin: f64,
    pub runner_up: Option<Face>,
}

/// One colour class as resolved.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ClassSummary {
    pub face: Face,
    pub mean: [f64; 3],
    pub spread: [f64; 3],
}

/// A resolved scan.
#[derive(Clone, Debug)]
pub struct Resolution {
    pub cube: FaceletCube,
    pub stickers: Vec<StickerVerdict>,
    /// Facelet indices in doubt (where a close rival legal cube differs).
    pub doubtful: Vec<usize>,
    pub confident: bool,
    /// Cost of the best rival legal cube minus the best's (nats); a lower bound when the
    /// rival was not reached within the search (then `rival_exact` is false).
    pub cube_margin: f64,
    pub rival_exact: bool,
    /// The closest rival legal cube found (scored under its own re-fitted classes).
    pub rival: Option<FaceletCube>,
    /// The six classes (face order of `cube`).
    pub classes: Vec<ClassSummary>,
    /// The k-means first estimate: cluster per sticker and cluster centroids (Lab).
    pub clusters: Vec<usize>,
    pub cluster_centroids: Vec<[f64; 3]>,
    /// White balance applied (divisor per channel before Lab; 1 for camera sRGB).
    pub white_balance: [f64; 3],
    /// Node expansions spent in the k-best searches.
    pub expanded: usize,
}

/// Why no cube is returned.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error(transparent)]
    Scan(#[from] RawScanError),
    /// A rival legal cube is too close; `best.cube_margin` says how close.
    #[error("ambiguous scan: a second legal cube is within {:.1} nats of the best; stickers in doubt: {}", .best.cube_margin, facelet_names(.doubtful, .best.cube.size()))]
    Ambiguous {
        doubtful: Vec<usize>,
        best: Box<Resolution>,
    },
    #[error("no legal cube found within {expanded} search nodes; least certain stickers (indices): {suspects:?}")]
    NoLegalCube {
        expanded: usize,
        suspects: Vec<usize>,
    },
    #[error("the profile was learned on scale {profile:?} but the scan is {scan:?}")]
    ProfileScale { profile: Scale, scan: Scale },
}

/// `U1 R5 ...` names of facelet indices.
pub fn facelet_names(idx: &[usize], size: Size) -> String {
    idx.iter()
        .map(|&i| facelet_name(i, size))
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn facelet_name(i: usize, size: Size) -> String {
    let per = size.per_face();
    format!("{}{}", Face::ALL[(i / per) % 6].letter(), i % per + 1)
}

/// The balanced linear RGB of every reading and the divisor used.
pub fn linear_readings(scan: &RawScan, profile: Option<&Profile>) -> (Vec<[f64; 3]>, [f64; 3]) {
    let scale = scan.effective_scale();
    // EV3: the sensor's own LED lights the sticker, so its channel gains are a property of
    // the sensor. A profile measures them; otherwise the nominal gains of the EV3 colour
    // sensor (white ≈ [258, 424, 250] counts) are the physical prior. The k-means and the
    // class models adapt to the scan itself, so a unit whose gains differ somewhat from
    // nominal only distorts the metric a little.
    let gains = match scale {
        Scale::Rgb8 => [1.0; 3],
        Scale::Ev3Raw | Scale::Unit => profile
            .and_then(|p| p.gains)
            .unwrap_or(EV3_WHITE_COUNTS.map(|w| w / 0.85)),
    };
    let mut lin: Vec<[f64; 3]> = scan
        .facelets
        .iter()
        .map(|v| match scale {
            Scale::Rgb8 => {
                let s: Srgb<f64> = Srgb::new(v[0] / 255.0, v[1] / 255.0, v[2] / 255.0);
                let l: LinSrgb<f64> = s.into_linear();
                [l.red, l.green, l.blue]
            }
            Scale::Ev3Raw => std::array::from_fn(|k| v[k] / gains[k]),
            Scale::Unit => std::array::from_fn(|k| v[k] / gains[k]),
        })
        .collect();
    // Exposure: one global factor so that the bright stickers sit near 0.8 (a dark scan is
    // otherwise squeezed into a few Lab units). Camera values may be clipped at 255, so
    // they are only ever brightened.
    let mut peaks: Vec<f64> = lin
        .iter()
        .map(|c| c.iter().cloned().fold(0.0, f64::max))
        .collect();
    peaks.sort_by(f64::total_cmp);
    let q = peaks[(peaks.len() * 9) / 10].max(1e-6);
    let mut factor = (0.8 / q).min(32.0);
    if scale == Scale::Rgb8 {
        factor = factor.max(1.0);
    }
    for c in &mut lin {
        for v in c.iter_mut() {
            *v *= factor;
        }
    }
    (lin, gains.map(|g| g / factor))
}

/// Linear RGB of one raw reading under the white balance `wb` of [`linear_readings`].
fn to_linear(v: [f64; 3], scale: Scale, wb: [f64; 3]) -> [f64; 3] {
    match scale {
        Scale::Rgb8 => {
            let s: Srgb<f64> = Srgb::new(v[0] / 255.0, v[1] / 255.0, v[2] / 255.0);
            let l: LinSrgb<f64> = s.into_linear();
            [l.red / wb[0], l.green / wb[1], l.blue / wb[2]]
        }
        Scale::Ev3Raw | Scale::Unit => std::array::from_fn(|k| v[k] / wb[k]),
    }
}

/// Standard deviation of one raw channel value as the device reports it: quantisation of
/// the (averaged) value plus a small multiplicative part (exposure and LED flicker). A
/// value at the top of the range is clipped: the true value may lie well above it.
fn device_sigma(v: f64, scale: Scale) -> f64 {
    match scale {
        Scale::Rgb8 if v >= 254.5 => CLIPPED_SIGMA * 255.0,
        Scale::Rgb8 => 0.5f64.hypot(0.002 * v),
        Scale::Ev3Raw if v >= 1019.5 => CLIPPED_SIGMA * 1020.0,
        Scale::Ev3Raw => 1.0f64.hypot(0.004 * v),
        Scale::Unit => 0.002f64.hypot(0.004 * v),
    }
}

/// Whether a raw channel value sits at the top of the device's range.
fn clipped(v: f64, scale: Scale) -> bool {
    match scale {
        Scale::Rgb8 => v >= 254.5,
        Scale::Ev3Raw => v >= 1019.5,
        Scale::Unit => false,
    }
}

/// Relative size of the uncertainty of a clipped reading.
const CLIPPED_SIGMA: f64 = 0.08;

/// Measurement variance per Lab channel of a raw reading, read under the relative light
/// `gain` (device noise propagated through the conversion by finite differences: a
/// near-black reading has a huge variance in a* and b*, a bright one a small one).
///
/// `own`: the reading's own standard error per raw channel when the scan carries one
/// (`RawScan::sigma`, e.g. from the pixels an image sampler averaged); it replaces the
/// device model, except for a clipped channel, which stays very uncertain whatever its
/// measured spread (every pixel at the top of the range has no spread).
fn reading_noise(
    v: [f64; 3],
    own: Option<[f64; 3]>,
    scale: Scale,
    wb: [f64; 3],
    gain: f64,
    lab: &[f64; 3],
) -> [f64; 3] {
    let mut var = [0.0; 3];
    for c in 0..3 {
        let mut w = v;
        w[c] += match own {
            Some(s) if !clipped(v[c], scale) => s[c],
            _ => device_sigma(v[c], scale),
        };
        let l2 = lab_of_linear(to_linear(w, scale, wb).map(|x| x / gain));
        for k in 0..3 {
            var[k] += (l2[k] - lab[k]).powi(2);
        }
    }
    var
}

/// CIELAB (D65) of linear RGB.
pub fn lab_of_linear(c: [f64; 3]) -> [f64; 3] {
    let lab: Lab<palette::white_point::D65, f64> = Lab::from_color(LinSrgb::new(c[0], c[1], c[2]));
    [lab.l, lab.a, lab.b]
}

/// Lab of every reading (white-balanced) and the balance used.
pub fn scan_lab(scan: &RawScan, profile: Option<&Profile>) -> (Vec<[f64; 3]>, [f64; 3]) {
    let (lin, wb) = linear_readings(scan, profile);
    (lin.into_iter().map(lab_of_linear).collect(), wb)
}

fn d2(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    (0..3).map(|k| (a[k] - b[k]).powi(2)).sum()
}

/// k-means (seeded, four restarts, best inertia) into six clusters.
fn kmeans6(labs: &[[f64; 3]], seed: u64) -> (Vec<usize>, Vec<[f64; 3]>) {
    use kmeans_colors::get_kmeans;
    type LabF = Lab<palette::white_point::D65, f32>;
    let buf: Vec<LabF> = labs
        .iter()
        .map(|l| LabF::new(l[0] as f32, l[1] as f32, l[2] as f32))
        .collect();
    let mut best: Option<(f64, Vec<usize>, Vec<[f64; 3]>)> = None;
    for r in 0..4u64 {
        let km = get_kmeans(6, 30, 0.01, false, &buf, seed.wrapping_add(r * 7919));
        let labels: Vec<usize> = km.indices.iter().map(|&i| i as usize).collect();
        let cents: Vec<[f64; 3]> = km
            .centroids
            .iter()
            .map(|c| [c.l as f64, c.a as f64, c.b as f64])
            .collect();
        let inertia: f64 = labs
            .iter()
            .zip(&labels)
            .map(|(x, &l)| d2(x, &cents[l.min(cents.len() - 1)]))
            .sum();
        if best.as_ref().is_none_or(|b| inertia < b.0) {
            best = Some((inertia, labels, cents));
        }
    }
    let (_, labels, mut cents) = best.expect("four runs");
    cents.resize(6, [50.0, 0.0, 0.0]);
    (labels, cents)
}

/// One colour class: a Student-t per axis of its own frame in Lab, (lightness, chroma along
/// the class's hue direction, hue across it). Wear and fading pull a sticker toward grey
/// (radially, keeping its hue) and light changes lightness; the hue direction is the
/// stable one, and each class learns its own spread along each axis.
#[derive(Clone, Copy, Debug)]
struct Class {
    mean: [f64; 3],
    /// Variance along (L, radial, tangential).
    var: [f64; 3],
    /// Unit hue direction (cos, sin) in the a*b* plane.
    dir: [f64; 2],
}

/// The unit hue direction of a Lab colour (a* axis for a neutral one).
fn hue_dir(m: &[f64; 3]) -> [f64; 2] {
    let h = m[1].hypot(m[2]);
    if h < 1e-9 {
        [1.0, 0.0]
    } else {
        [m[1] / h, m[2] / h]
    }
}

/// A Lab difference in a class frame.
fn to_frame(d: [f64; 3], dir: [f64; 2]) -> [f64; 3] {
    let [c, s] = dir;
    [d[0], d[1] * c + d[2] * s, -d[1] * s + d[2] * c]
}

fn from_frame(f: [f64; 3], dir: [f64; 2]) -> [f64; 3] {
    let [c, s] = dir;
    [f[0], f[1] * c - f[2] * s, f[1] * s + f[2] * c]
}

/// A reading's (diagonal Lab) noise variance along the frame axes.
fn noise_frame(e: &[f64; 3], dir: [f64; 2]) -> [f64; 3] {
    let [c, s] = dir;
    [
        e[0],
        e[1] * c * c + e[2] * s * s,
        e[1] * s * s + e[2] * c * c,
    ]
}

impl Class {
    /// Negative log-likelihood of a reading `x` whose own measurement variance is `noise`
    /// (per Lab channel), under a Student-t per frame axis (heavy tails: one glare spot or
    /// mis-sampled sticker must not outvote the cube's rules).
    fn cost(&self, x: &[f64; 3], noise: &[f64; 3]) -> f64 {
        let d = to_frame(std::array::from_fn(|k| x[k] - self.mean[k]), self.dir);
        let e = noise_frame(noise, self.dir);
        (0..3)
            .map(|k| {
                let v = self.var[k] + e[k];
                0.5 * (NU + 1.0) * (d[k] * d[k] / v / NU).ln_1p() + 0.5 * v.ln()
            })
            .sum()
    }
}

/// Legal cubes within the doubt window after which the search stops (the answer is in
/// doubt anyway).
const MAX_RIVALS: usize = 48;
/// How many of the least certain stickers a doubt names when no rival cube was reached
/// to say where it differs.
const UNSURE_NAMED: usize = 6;
/// Restarts of the refinement from a cube the final search finds to fit better under its
/// own model than the settled one.
const MAX_RESTARTS: usize = 2;
/// Extra nats searched beyond the doubt window under the shared model, for rivals that
/// their own re-fitted classes bring closer.
const REFIT_SLACK: f64 = 8.0;
/// Degrees of freedom of the per-channel Student-t.
const NU: f64 = 4.0;
/// Minimum intrinsic class spread in Lab units (the readings' own noise comes on top).
const MIN_SIGMA: f64 = 0.2;
/// Pseudo-count of the typical class spread in each class's variance (one reading's worth).
const KAPPA_VAR: f64 = 1.0;
/// Re-weighting rounds of the class fit.
const FIT_ROUNDS: usize = 3;
/// Pseudo-count of a profile centroid in a class mean.
const KAPPA_MEAN: f64 = 2.0;

/// Fits the six class models to labelled readings. A class's spread is what the readings'
/// scatter leaves after their own measurement noise (the moment estimate), shrunk toward
/// the pooled spread of all classes; means weight each reading by its precision, so a
/// reading whose colour the sensor cannot resolve (near black, clipped) hardly moves them.
fn fit(
    labs: &[[f64; 3]],
    noise: &[[f64; 3]],
    labels: &[usize],
    prior: Option<&[[f64; 3]; 6]>,
) -> [Class; 6] {
    let floor = MIN_SIGMA.powi(2);
    // Pass 1: plain means, pooled intrinsic spread (in each class's frame).
    let mut sum = [[0.0; 3]; 6];
    let mut n = [0.0f64; 6];
    for (x, &l) in labs.iter().zip(labels) {
        n[l] += 1.0;
        for k in 0..3 {
            sum[l][k] += x[k];
        }
    }
    let mut classes: [Class; 6] = std::array::from_fn(|j| {
        let mean = std::array::from_fn(|k| if n[j] > 0.0 { sum[j][k] / n[j] } else { 50.0 });
        Class {
            mean,
            var: [floor; 3],
            dir: hue_dir(&mean),
        }
    });
    let mut pooled = [0.0; 3];
    for ((x, &l), e) in labs.iter().zip(labels).zip(noise) {
        let c = &classes[l];
        let d = to_frame(std::array::from_fn(|k| x[k] - c.mean[k]), c.dir);
        let ef = noise_frame(e, c.dir);
        for k in 0..3 {
            pooled[k] += (d[k] * d[k] - ef[k]).max(0.0);
        }
    }
    let pooled: [f64; 3] = pooled.map(|v| (v / labs.len() as f64).max(floor));
    for c in classes.iter_mut() {
        c.var = pooled;
    }
    // Pass 2: Student-t fit by iteratively re-weighted moments: each reading weighted by
    // its precision and by the t weight (ν+1)/(ν+z²), so one glare spot or shadowed
    // sticker does not widen its class for all the others. A profile centroid counts as
    // KAPPA_MEAN readings of average precision.
    for _ in 0..FIT_ROUNDS {
        let mut wsum = [[0.0; 3]; 6];
        let mut wx = [[0.0; 3]; 6];
        let mut usum = [[0.0; 3]; 6];
        let mut uss = [[0.0; 3]; 6];
        for ((x, &l), e) in labs.iter().zip(labels).zip(noise) {
            let c = &classes[l];
            let d = to_frame(std::array::from_fn(|k| x[k] - c.mean[k]), c.dir);
            let ef = noise_frame(e, c.dir);
            for k in 0..3 {
                let v = c.var[k] + ef[k];
                let d2 = d[k] * d[k];
                let u = (NU + 1.0) / (NU + d2 / v);
                wsum[l][k] += u / v;
                wx[l][k] += u / v * d[k];
                usum[l][k] += u;
                uss[l][k] += u * (d2 - ef[k]).max(0.0);
            }
        }
        // The typical class spread (median over the six: one broad class, say a clipped
        // pink, must not widen the tight ones) is the prior each class is shrunk toward.
        let typical: [f64; 3] = std::array::from_fn(|k| {
            let raw: Vec<f64> = (0..6).map(|j| uss[j][k] / usum[j][k].max(1e-9)).collect();
            median(raw).max(floor)
        });
        for j in 0..6 {
            let c = classes[j];
            let pf = prior.map(|p| to_frame(std::array::from_fn(|k| p[j][k] - c.mean[k]), c.dir));
            let offset: [f64; 3] = std::array::from_fn(|k| match pf {
                Some(pf) => {
                    let wbar = if n[j] > 0.0 {
                        wsum[j][k] / n[j]
                    } else {
                        1.0 / pooled[k]
                    };
                    (wx[j][k] + KAPPA_MEAN * wbar * pf[k]) / (wsum[j][k] + KAPPA_MEAN * wbar)
                }
                None if wsum[j][k] > 0.0 => wx[j][k] / wsum[j][k],
                None => 0.0,
            });
            let back = from_frame(offset, c.dir);
            let mean: [f64; 3] = std::array::from_fn(|k| c.mean[k] + back[k]);
            classes[j] = Class {
                mean,
                var: std::array::from_fn(|k| {
                    ((uss[j][k] + KAPPA_VAR * typical[k]) / (n[j] + KAPPA_VAR)).max(floor)
                }),
                dir: hue_dir(&mean),
            };
        }
    }
    classes
}

/// A legal colouring found by the search.
#[derive(Clone, Debug)]
struct Candidate {
    cost: f64,
    /// Class per sticker.
    labels: Vec<usize>,
}

/// Result of one constrained search.
struct SearchOutcome {
    /// Legal colourings in increasing cost, all within the doubt window of the best, plus
    /// possibly the first one beyond it; each a different cube (no two group the stickers
    /// alike, see [`same_partition`]).
    candidates: Vec<Candidate>,
    /// Every legal cube not in `candidates` costs at least this.
    unseen_bound: f64,
    expanded: usize,
}

/// 3x3x3: classes are faces (class j = the colour of centre j), so two different
/// colourings are always two different cubes.
fn search3(cost: &[[f64; 6]], window: f64, budget: usize) -> SearchOutcome {
    let corner_cost: Vec<f64> = (0..8)
        .flat_map(|s| {
            (0..8).flat_map(move |p| {
                (0..3).map(move |o| {
                    let faces = CornerSlot::ALL[p].faces();
                    (0..3)
                        .map(|k| cost[CORNER_FACELETS[s][(k + o) % 3]][faces[k].index()])
                        .sum::<f64>()
                })
            })
        })
        .collect();
    let edge_cost: Vec<f64> = (0..12)
        .flat_map(|s| {
            (0..12).flat_map(move |p| {
                (0..2).map(move |o| {
                    let faces = EdgeSlot::ALL[p].faces();
                    (0..2)
                        .map(|k| cost[EDGE_FACELETS[s][(k + o) % 2]][faces[k].index()])
                        .sum::<f64>()
                })
            })
        })
        .collect();
    let centre_cost: f64 = (0..6).map(|f| cost[f * 9 + 4][f]).sum();
    let mut kc = KBest::new(8, 3, corner_cost);
    let mut ke = KBest::new(12, 2, edge_cost);
    let mut cs: Vec<Assignment> = Vec::new();
    let mut es: Vec<Assignment> = Vec::new();
    let lb = |kb: &KBest| {
        if kb.is_exhausted() {
            f64::INFINITY
        } else {
            kb.frontier
        }
    };
    // Pull the first of each.
    if let Some(a) = kc.next_solution(budget) {
        cs.push(a);
    }
    if let Some(a) = ke.next_solution(budget) {
        es.push(a);
    }
    loop {
        let cmin = cs.first().map_or(lb(&kc), |a| a.cost);
        let emin = es.first().map_or(lb(&ke), |a| a.cost);
        let unseen = (lb(&kc) + emin).min(cmin + lb(&ke));
        // Seen legal pairs.
        let mut totals: Vec<(f64, usize, usize)> = Vec::new();
        for (i, c) in cs.iter().enumerate() {
            for (j, e) in es.iter().enumerate() {
                if c.parity == e.parity {
                    totals.push((c.cost + e.cost, i, j));
                }
            }
        }
        totals.sort_by(|a, b| a.0.total_cmp(&b.0));
        let done = match totals.first() {
            // Best certified, and the window after it fully seen (or the rival beyond it).
            Some(&(t1, _, _)) => {
                t1 <= unseen
                    && (t1 + window <= unseen
                        || totals
                            .get(1)
                            .is_some_and(|t| t.0 > t1 + window && t.0 <= unseen))
            }
            None => false,
        };
        // Too many rivals within the window: the answer is in doubt whatever comes next.
        let crowded = totals.first().is_some_and(|&(t1, _, _)| {
            totals.iter().filter(|t| t.0 <= t1 + window).count() >= MAX_RIVALS
        });
        let spent = |kb: &KBest| kb.is_exhausted() || kb.expanded >= budget;
        let stuck = spent(&kc) && spent(&ke);
        if done || crowded || stuck {
            let t1 = totals.first().map_or(f64::INFINITY, |t| t.0);
            let mut candidates = Vec::new();
            for &(t, i, j) in &totals {
                if t > t1 + window && candidates.len() >= 2 {
                    break;
                }
                if t > unseen && !candidates.is_empty() {
                    break;
                }
                let mut labels: Vec<usize> = (0..54).map(|x| x / 9).collect();
                for (s, &(p, o)) in cs[i].pieces.iter().enumerate() {
                    let faces = CornerSlot::ALL[p as usize].faces();
                    for k in 0..3 {
                        labels[CORNER_FACELETS[s][(k + o as usize) % 3]] = faces[k].index();
                    }
                }
                for (s, &(p, o)) in es[j].pieces.iter().enumerate() {
                    let faces = EdgeSlot::ALL[p as usize].faces();
                    for k in 0..2 {
                        labels[EDGE_FACELETS[s][(k + o as usize) % 2]] = faces[k].index();
                    }
                }
                candidates.push(Candidate {
                    cost: t + centre_cost,
                    labels,
                });
            }
            return SearchOutcome {
                candidates,
                unseen_bound: unseen + centre_cost,
                expanded: kc.expanded + ke.expanded,
            };
        }
        // Extend the side whose next solution could matter soonest.
        let grow_corners = if kc.is_exhausted() || kc.expanded >= budget {
            false
        } else if ke.is_exhausted() || ke.expanded >= budget {
            true
        } else {
            lb(&kc) + emin <= cmin + lb(&ke)
        };
        if grow_corners {
            if let Some(a) = kc.next_solution(budget) {
                cs.push(a);
            }
        } else if let Some(a) = ke.next_solution(budget) {
            es.push(a);
        }
    }
}

/// The 30 colour schemes of a 2x2x2 up to rotation: `scheme[class] = face`.
fn schemes() -> Vec<[usize; 6]> {
    let mut out = Vec::new();
    // Class 0 on U; its opposite on D; the lowest remaining class on F; its opposite on B;
    // the last two on R and L in either order (the handedness).
    for opp0 in 1..6 {
        let rest: Vec<usize> = (1..6).filter(|&c| c != opp0).collect();
        let f = rest[0];
        for &oppf in &rest[1..] {
            let lr: Vec<usize> = rest[1..].iter().cloned().filter(|&c| c != oppf).collect();
            for (r, l) in [(lr[0], lr[1]), (lr[1], lr[0])] {
                let mut s = [0usize; 6];
                s[0] = Face::U.index();
                s[opp0] = Face::D.index();
                s[f] = Face::F.index();
                s[oppf] = Face::B.index();
                s[r] = Face::R.index();
                s[l] = Face::L.index();
                out.push(s);
            }
        }
    }
    out
}

/// 2x2x2: classes are k-means clusters; every scheme is searched.
fn search2(cost: &[[f64; 6]], window: f64, budget: usize) -> SearchOutcome {
    let schemes = schemes();
    let mut searches: Vec<(KBest, [usize; 6])> = schemes
        .iter()
        .map(|sch| {
            // class_of_face[f] = class shown by face f's colour.
            let mut class_of_face = [0usize; 6];
            for (class, &face) in sch.iter().enumerate() {
                class_of_face[face] = class;
            }
            let c: Vec<f64> = (0..8)
                .flat_map(|s| {
                    (0..8).flat_map(move |p| {
                        (0..3).map(move |o| {
                            let faces = CornerSlot::ALL[p].faces();
                            (0..3)
                                .map(|k| {
                                    cost[corner_sticker_index(Size::Two, s, (k + o) % 3)]
                                        [class_of_face[faces[k].index()]]
                                })
                                .sum::<f64>()
                        })
                    })
                })
                .collect();
            (KBest::new(8, 3, c), class_of_face)
        })
        .collect();
    let mut found: Vec<Candidate> = Vec::new();
    let per_budget = budget / 8;
    loop {
        let lb = |kb: &KBest| {
            if kb.is_exhausted() || kb.expanded >= per_budget {
                f64::INFINITY
            } else {
                kb.frontier
            }
        };
        let (idx, bound) = searches
            .iter()
            .enumerate()
            .map(|(i, (kb, _))| (i, lb(kb)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .expect("30 schemes");
        let t1 = found.first().map_or(f64::INFINITY, |c| c.cost);
        let enough = (found.len() >= 2 && found.last().is_some_and(|c| c.cost > t1 + window))
            || found.len() >= MAX_RIVALS;
        if bound.is_infinite() || (t1 + window <= bound) || enough {
            let expanded = searches.iter().map(|s| s.0.expanded).sum();
            return SearchOutcome {
                candidates: found,
                unseen_bound: bound,
                expanded,
            };
        }
        let (kb, class_of_face) = &mut searches[idx];
        if let Some(a) = kb.next_solution(per_budget) {
            let mut labels = vec![0usize; 24];
            for (s, &(p, o)) in a.pieces.iter().enumerate() {
                let faces = CornerSlot::ALL[p as usize].faces();
                for k in 0..3 {
                    labels[corner_sticker_index(Size::Two, s, (k + o as usize) % 3)] =
                        class_of_face[faces[k].index()];
                }
            }
            // Two schemes can name the same grouping of the stickers differently (swap
            // two classes everywhere): one cube, kept once, at its cheaper naming.
            if !found.iter().any(|c| same_partition(&c.labels, &labels)) {
                found.push(Candidate {
                    cost: a.cost,
                    labels,
                });
            }
        }
    }
}

/// The 2x2x2 sticker index of corner slot `slot`'s k-th sticker (3x3x3 corner stickers
/// sit at local indices 0, 2, 6, 8 of a face; a 2x2x2 face has them as 0, 1, 2, 3).
fn corner_sticker_index(_size: Size, slot: usize, k: usize) -> usize {
    let i3 = CORNER_FACELETS[slot][k];
    let local = match i3 % 9 {
        0 => 0,
        2 => 1,
        6 => 2,
        _ => 3,
    };
    (i3 / 9) * 4 + local
}

/// The light each sticker was read under, relative to the scan's average: one factor per
/// face (each face is photographed or read separately: exposure, angle to the lamp) times
/// one per sticker kind on a 3x3x3 (corner / edge / centre: lens vignette, or the EV3 arm's
/// distance to the sticker). Estimated robustly (medians of log luminance ratios to the
/// sticker's class) from the current assignment.
#[derive(Clone)]
struct Illumination {
    size: Size,
    face: [f64; 6],
    kind: [f64; 3],
}

impl Illumination {
    fn new(size: Size) -> Illumination {
        Illumination {
            size,
            face: [0.0; 6],
            kind: [0.0; 3],
        }
    }

    fn face_of(&self, i: usize) -> usize {
        i / self.size.per_face()
    }

    fn kind_of(&self, i: usize) -> usize {
        match self.size {
            Size::Two => 0,
            Size::Three => match i % 9 {
                4 => 2,
                1 | 3 | 5 | 7 => 1,
                _ => 0,
            },
        }
    }

    /// Multiplicative gain of sticker `i`.
    fn gain(&self, i: usize) -> f64 {
        (self.face[self.face_of(i)] + self.kind[self.kind_of(i)]).exp()
    }

    /// Re-estimates from linear readings and class labels; returns the largest change of a
    /// log gain.
    fn estimate(&mut self, lin: &[[f64; 3]], labels: &[usize]) -> f64 {
        let ly: Vec<f64> = lin
            .iter()
            .map(|c| {
                (0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2])
                    .max(1e-4)
                    .ln()
            })
            .collect();
        let old = (self.face, self.kind);
        for _ in 0..3 {
            // Class log-luminance under the current light.
            let mut sum = [0.0f64; 6];
            let mut n = [0.0f64; 6];
            for (i, &l) in labels.iter().enumerate() {
                sum[l] += ly[i] - self.face[self.face_of(i)] - self.kind[self.kind_of(i)];
                n[l] += 1.0;
            }
            let class: [f64; 6] = std::array::from_fn(|j| sum[j] / n[j].max(1.0));
            for f in 0..6 {
                let r: Vec<f64> = (0..lin.len())
                    .filter(|&i| self.face_of(i) == f)
                    .map(|i| ly[i] - self.kind[self.kind_of(i)] - class[labels[i]])
                    .collect();
                self.face[f] = shrunk_median(r);
            }
            let mean = self.face.iter().sum::<f64>() / 6.0;
            self.face
                .iter_mut()
                .for_each(|v| *v = (*v - mean).clamp(-0.7, 0.7));
            if self.size == Size::Three {
                for k in 0..3 {
                    let r: Vec<f64> = (0..lin.len())
                        .filter(|&i| self.kind_of(i) == k)
                        .map(|i| ly[i] - self.face[self.face_of(i)] - class[labels[i]])
                        .collect();
                    self.kind[k] = shrunk_median(r);
                }
                let mean = (4.0 * self.kind[0] + 4.0 * self.kind[1] + self.kind[2]) / 9.0;
                self.kind
                    .iter_mut()
                    .for_each(|v| *v = (*v - mean).clamp(-0.7, 0.7));
            }
        }
        self.face
            .iter()
            .zip(old.0.iter())
            .chain(self.kind.iter().zip(old.1.iter()))
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max)
    }
}

/// Prior weight, in stickers, of even light: each face's and each sticker kind's gain is
/// the robust (median) estimate shrunk toward zero as if `LIGHT_PRIOR` more stickers had
/// read no change. A face whose stickers all share one colour carries no evidence on its
/// own light (its gain and its class's brightness trade off freely); without the prior
/// such a gain drifts to its bound and lets a class absorb a brightness difference that
/// tells two colours apart (a dark orange and a red that differ mainly in lightness).
const LIGHT_PRIOR: f64 = 3.0;

/// The median of log-gain residuals, shrunk toward even light by [`LIGHT_PRIOR`].
fn shrunk_median(r: Vec<f64>) -> f64 {
    let n = r.len() as f64;
    median(r) * n / (n + LIGHT_PRIOR)
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// Resolves a scan to the most likely legal cube.
pub fn resolve(scan: &RawScan, opts: &ResolveOptions) -> Result<Resolution, ResolveError> {
    scan.check()?;
    let size = scan.cube_size();
    let scale = scan.effective_scale();
    if let Some(p) = &opts.profile {
        if let Some(ps) = p.scale {
            let compatible = ps == scale
                || matches!(
                    (ps, scale),
                    (Scale::Ev3Raw, Scale::Unit) | (Scale::Unit, Scale::Ev3Raw)
                );
            if !compatible {
                return Err(ResolveError::ProfileScale {
                    profile: ps,
                    scan: scale,
                });
            }
        }
    }
    let (labs, wb) = scan_lab(scan, opts.profile.as_ref());
    let (clusters, centroids) = kmeans6(&labs, opts.seed);

    // Initial labels: 3x3x3 maps clusters to the centres' faces by the cheapest matching.
    let labels: Vec<usize> = match size {
        Size::Three => {
            let centres: Vec<[f64; 3]> = (0..6).map(|f| labs[f * 9 + 4]).collect();
            let perm = best_matching(&centres, &centroids);
            // perm[face] = cluster.
            let mut cluster_face = [0usize; 6];
            for (face, &cl) in perm.iter().enumerate() {
                cluster_face[cl] = face;
            }
            let mut l: Vec<usize> = clusters.iter().map(|&c| cluster_face[c.min(5)]).collect();
            for f in 0..6 {
                l[f * 9 + 4] = f;
            }
            l
        }
        Size::Two => clusters.iter().map(|&c| c.min(5)).collect(),
    };
    // Profile prior, matched to the classes.
    let prior: Option<[[f64; 3]; 6]> = opts.profile.as_ref().map(|p| {
        let pc = p.centroids();
        let anchors: Vec<[f64; 3]> = match size {
            Size::Three => (0..6).map(|f| labs[f * 9 + 4]).collect(),
            Size::Two => centroids.clone(),
        };
        let perm = best_matching(&anchors, &pc);
        std::array::from_fn(|j| pc[perm[j]])
    });

    let window = opts.doubt_threshold;
    let lin = linear_readings(scan, opts.profile.as_ref()).0;
    let noise_of = |labs: &[[f64; 3]], gain: &dyn Fn(usize) -> f64| -> Vec<[f64; 3]> {
        scan.facelets
            .iter()
            .zip(labs)
            .enumerate()
            .map(|(i, (v, lab))| {
                let own = scan.sigma.as_ref().and_then(|s| s.get(i).copied());
                reading_noise(*v, own, scale, wb, gain(i), lab)
            })
            .collect()
    };
    let cost_of = |labs: &[[f64; 3]], noise: &[[f64; 3]], classes: &[Class; 6]| -> Vec<[f64; 6]> {
        labs.iter()
            .zip(noise)
            .map(|(x, e)| std::array::from_fn(|j| classes[j].cost(x, e)))
            .collect()
    };
    let run = |cost: &[[f64; 6]], window: f64| match size {
        Size::Three => search3(cost, window, opts.node_budget),
        Size::Two => search2(cost, window, opts.node_budget),
    };
    // The readings re-expressed under a light estimate.
    let relight = |il: &Illumination| -> (Vec<[f64; 3]>, Vec<[f64; 3]>) {
        let labs: Vec<[f64; 3]> = lin
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let g = il.gain(i);
                lab_of_linear(c.map(|v| v / g))
            })
            .collect();
        let noise = noise_of(&labs, &|i| il.gain(i));
        (labs, noise)
    };
    // Refinement: best legal cube → class models and light re-fitted to it → again, until
    // the assignment and the light settle. Only the best is needed here.
    let refine = |mut labels: Vec<usize>,
                  mut illum: Illumination,
                  mut labs: Vec<[f64; 3]>,
                  mut noise: Vec<[f64; 3]>| {
        let mut expanded = 0;
        let mut rounds = 0;
        loop {
            let classes = fit(&labs, &noise, &labels, prior.as_ref());
            let outcome = run(&cost_of(&labs, &noise, &classes), 0.0);
            expanded += outcome.expanded;
            let Some(best) = outcome.candidates.first() else {
                break;
            };
            rounds += 1;
            let same = best.labels == labels;
            labels = best.labels.clone();
            // Re-estimate the light on each face (and the fall-off by sticker kind) from
            // the stickers' classes, then re-express the readings under even light.
            let shift = illum.estimate(&lin, &labels);
            (labs, noise) = relight(&illum);
            if (same && shift < 0.01) || rounds >= 8 {
                break;
            }
        }
        (labels, illum, labs, noise, expanded)
    };
    // Every hypothesis under its own model: re-estimate the light and re-fit the six
    // classes to its labels, and score it under them (a profile likelihood per
    // hypothesis, so a rival is not judged by a model fitted to the best). (The light's
    // gains have zero mean log, so re-expressing the readings under another hypothesis'
    // light leaves the Jacobian term unchanged.)
    let own_model = |labels: &[usize], start: &Illumination| {
        let mut il = start.clone();
        il.estimate(&lin, labels);
        let (labs, noise) = relight(&il);
        let classes = fit(&labs, &noise, labels, prior.as_ref());
        let total: f64 = labs
            .iter()
            .zip(&noise)
            .zip(labels)
            .map(|((x, e), &l)| classes[l].cost(x, e))
            .sum();
        (total, labs, noise, classes)
    };
    let noise = noise_of(&labs, &|_| 1.0);
    let (mut labels, mut illum, mut labs, mut noise, mut expanded) =
        refine(labels, Illumination::new(size), labs, noise);
    // 3x3x3: the refinement can settle on the right pieces with the wrong colour for
    // whole classes (two faded colours swapped everywhere but on their centres, which a
    // heavy-tailed class then treats as outliers). Those alternatives are the cube's own
    // colours permuted by a whole-cube rotation, centres kept: score each legal one under
    // its own model and restart from the best if it wins.
    // Cost of a labelling under classes re-fitted to it, the light held fixed (for the
    // far, whole-class alternatives below, where the light hardly depends on them).
    let own_fixed = |labels: &[usize], labs: &[[f64; 3]], noise: &[[f64; 3]]| -> f64 {
        let classes = fit(labs, noise, labels, prior.as_ref());
        labs.iter()
            .zip(noise)
            .zip(labels)
            .map(|((x, e), &l)| classes[l].cost(x, e))
            .sum()
    };
    if size == Size::Three {
        let base = own_fixed(&labels, &labs, &noise);
        let better = conjugates(&labels)
            .into_iter()
            .map(|l| (own_fixed(&l, &labs, &noise), l))
            .filter(|(c, _)| *c < base)
            .min_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((_, l)) = better {
            let (l2, il2, labs2, noise2, e2) =
                refine(l, illum.clone(), labs.clone(), noise.clone());
            (labels, illum, labs, noise) = (l2, il2, labs2, noise2);
            expanded += e2;
        }
    }
    // The final search, with the doubt window, under the settled model. When another
    // cube it finds fits better under its own model than the one the model was settled
    // on, the refinement had stopped at a local optimum: it restarts from that cube, so
    // that the final search (and its bound on the cubes it did not reach) is made under
    // the model of the cube that is returned.
    let mut restarts = 0;
    let (outcome, cost, own) = loop {
        let classes = fit(&labs, &noise, &labels, prior.as_ref());
        let cost = cost_of(&labs, &noise, &classes);
        let outcome = run(&cost, window + REFIT_SLACK);
        expanded += outcome.expanded;
        // Each candidate's cost under its own model.
        let own: Vec<f64> = outcome
            .candidates
            .iter()
            .map(|c| own_model(&c.labels, &illum).0)
            .collect();
        if restarts < MAX_RESTARTS && own.len() > 1 {
            let k = (0..own.len())
                .min_by(|&a, &b| own[a].total_cmp(&own[b]))
                .expect("non-empty");
            if k != 0 && own[k] < own[0] {
                let (l2, il2, labs2, noise2, e2) = refine(
                    outcome.candidates[k].labels.clone(),
                    illum.clone(),
                    labs.clone(),
                    noise.clone(),
                );
                (labels, illum, labs, noise) = (l2, il2, labs2, noise2);
                expanded += e2;
                restarts += 1;
                continue;
            }
        }
        break (outcome, cost, own);
    };
    if outcome.candidates.is_empty() {
        let mut suspects: Vec<usize> = (0..labs.len()).collect();
        let margin = |i: usize| {
            let mut c = cost[i];
            c.sort_by(f64::total_cmp);
            c[1] - c[0]
        };
        suspects.sort_by(|&a, &b| margin(a).total_cmp(&margin(b)));
        suspects.truncate(6);
        suspects.sort_unstable();
        return Err(ResolveError::NoLegalCube { expanded, suspects });
    }
    let rescored: Vec<(f64, &Candidate)> = own.into_iter().zip(&outcome.candidates).collect();
    let best_idx = (0..rescored.len())
        .min_by(|&a, &b| rescored[a].0.total_cmp(&rescored[b].0))
        .expect("non-empty");
    let best = rescored[best_idx].1.clone();
    let best_own = rescored[best_idx].0;
    let (_, labs, noise, classes) = own_model(&best.labels, &illum);
    let cost = cost_of(&labs, &noise, &classes);

    // The cube.
    let (cube, face_of_class) = cube_of(size, &best.labels).ok_or(ResolveError::NoLegalCube {
        expanded,
        suspects: Vec::new(),
    })?;
    let legal = match size {
        Size::Three => CubieCube::from_facelets(&cube).is_some_and(|c| c.is_solvable()),
        Size::Two => PocketCube::from_facelets(&cube).is_some_and(|c| c.is_solvable()),
    };
    if !legal {
        return Err(ResolveError::NoLegalCube {
            expanded,
            suspects: Vec::new(),
        });
    }

    let stickers: Vec<StickerVerdict> = labs
        .iter()
        .enumerate()
        .map(|(i, lab)| {
            let chosen = best.labels[i];
            let runner = (0..6)
                .filter(|&j| j != chosen)
                .min_by(|&a, &b| cost[i][a].total_cmp(&cost[i][b]));
            StickerVerdict {
                lab: *lab,
                face: face_of_class[chosen],
                margin: runner.map_or(f64::INFINITY, |r| cost[i][r] - cost[i][chosen]),
                runner_up: runner.map(|r| face_of_class[r]),
            }
        })
        .collect();
    // The closest rival under its own model; candidates beyond the search are bounded by
    // the shared model's bound (a re-fit can only lower a hypothesis' cost by what its own
    // classes gain, which the bound does not see; the search window is widened for that).
    // (The candidates are distinct cubes: a renaming of the best's colour groups, which
    // would score the same under its own model, is not among them.)
    let rival = (0..rescored.len())
        .filter(|&k| k != best_idx)
        .min_by(|&a, &b| rescored[a].0.total_cmp(&rescored[b].0));
    let unseen_margin = (outcome.unseen_bound - outcome.candidates[0].cost - REFIT_SLACK).max(0.0);
    let (cube_margin, rival_exact, rival_cube) = match rival {
        Some(k) if rescored[k].0 - best_own <= unseen_margin => {
            (rescored[k].0 - best_own, true, Some(rescored[k].1))
        }
        Some(k) => (unseen_margin, false, Some(rescored[k].1)),
        None => (unseen_margin, false, None),
    };
    let mut doubtful: Vec<usize> = Vec::new();
    for (own, c) in &rescored {
        if *own - best_own < window {
            for i in 0..labs.len() {
                if c.labels[i] != best.labels[i] && !doubtful.contains(&i) {
                    doubtful.push(i);
                }
            }
        }
    }
    let mut rival = rival_cube.and_then(|r| cube_of(size, &r.labels).map(|(c, _)| c));
    let (mut cube_margin, mut rival_exact) = (cube_margin, rival_exact);
    // The whole-class recolourings of the best (see above) are rivals too.
    if size == Size::Three {
        let base = own_fixed(&best.labels, &labs, &noise);
        let closest = conjugates(&best.labels)
            .into_iter()
            .map(|l| (own_fixed(&l, &labs, &noise) - base, l))
            .min_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((m, l)) = closest {
            if m < cube_margin {
                cube_margin = m.max(0.0);
                rival_exact = true;
                rival = cube_of(size, &l).map(|(c, _)| c);
            }
            if m < window {
                for (i, (a, b)) in l.iter().zip(&best.labels).enumerate() {
                    if a != b && !doubtful.contains(&i) {
                        doubtful.push(i);
                    }
                }
            }
        }
    }
    let confident = cube_margin >= window;
    if !confident && doubtful.is_empty() {
        // The closest rival was only bounded (not reached by the search), so no cube says
        // where it would differ: name the least certain stickers instead.
        let mut order: Vec<usize> = (0..stickers.len()).collect();
        order.sort_by(|&a, &b| stickers[a].margin.total_cmp(&stickers[b].margin));
        doubtful.extend(order.into_iter().take(UNSURE_NAMED));
    }
    doubtful.sort_unstable();
    let class_summaries = (0..6)
        .map(|j| ClassSummary {
            face: face_of_class[j],
            mean: classes[j].mean,
            spread: classes[j].var.map(f64::sqrt),
        })
        .collect();
    let resolution = Resolution {
        cube,
        stickers,
        doubtful: doubtful.clone(),
        confident,
        cube_margin,
        rival_exact,
        rival,
        classes: class_summaries,
        clusters,
        cluster_centroids: centroids,
        white_balance: wb,
        expanded,
    };
    if !confident && !opts.best_effort {
        return Err(ResolveError::Ambiguous {
            doubtful,
            best: Box::new(resolution),
        });
    }
    Ok(resolution)
}

/// The legal 3x3x3 labellings obtained from `labels` by recolouring every non-centre
/// sticker with a permutation of the six colours that a whole-cube rotation induces.
fn conjugates(labels: &[usize]) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut perm = [0usize, 1, 2, 3, 4, 5];
    permute(&mut perm, 0, &mut |p| {
        let keeps_axes = Face::ALL
            .iter()
            .all(|f| Face::ALL[p[f.opposite().index()]] == Face::ALL[p[f.index()]].opposite());
        if !keeps_axes || *p == [0, 1, 2, 3, 4, 5] {
            return;
        }
        let l: Vec<usize> = labels
            .iter()
            .enumerate()
            .map(|(i, &c)| if i % 9 == 4 { c } else { p[c] })
            .collect();
        let legal = cube_of(Size::Three, &l)
            .and_then(|(c, _)| CubieCube::from_facelets(&c))
            .is_some_and(|c| c.is_solvable());
        if legal {
            out.push(l);
        }
    });
    out
}

/// Whether two labellings group the stickers the same way (equal up to renaming the
/// labels): then they describe the same cube.
fn same_partition(a: &[usize], b: &[usize]) -> bool {
    let (mut ab, mut ba) = ([usize::MAX; 6], [usize::MAX; 6]);
    a.len() == b.len()
        && a.iter().zip(b).all(|(&x, &y)| {
            let ok = (ab[x] == usize::MAX || ab[x] == y) && (ba[y] == usize::MAX || ba[y] == x);
            ab[x] = y;
            ba[y] = x;
            ok
        })
}

/// The cube of a labelling (class per sticker) and the face of each class.
fn cube_of(size: Size, labels: &[usize]) -> Option<(FaceletCube, [Face; 6])> {
    match size {
        Size::Three => {
            let colors: Vec<Face> = labels.iter().map(|&c| Face::ALL[c]).collect();
            let cube = FaceletCube::from_colors(size, colors)?;
            Some((cube, Face::ALL))
        }
        Size::Two => {
            let s: String = labels.iter().map(|&c| char::from(b'a' + c as u8)).collect();
            let cube = FaceletCube::parse(&s).ok()?;
            let mut map = [Face::U; 6];
            for (i, &c) in labels.iter().enumerate() {
                map[c] = cube.colors()[i];
            }
            Some((cube, map))
        }
    }
}

/// `perm[i]` = index into `b` matched to `a[i]`, minimising the total squared distance
/// (exhaustive over the 720 permutations).
fn best_matching(a: &[[f64; 3]], b: &[[f64; 3]]) -> [usize; 6] {
    let mut best = (f64::INFINITY, [0, 1, 2, 3, 4, 5]);
    let mut perm = [0usize, 1, 2, 3, 4, 5];
    permute(&mut perm, 0, &mut |p| {
        let c: f64 = (0..6).map(|i| d2(&a[i], &b[p[i]])).sum();
        if c < best.0 {
            best = (c, *p);
        }
    });
    best.1
}

fn permute(p: &mut [usize; 6], k: usize, f: &mut dyn FnMut(&[usize; 6])) {
    if k == 6 {
        f(p);
        return;
    }
    for i in k..6 {
        p.swap(k, i);
        permute(p, k + 1, f);
        p.swap(k, i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renamed_grouping_is_the_same_partition() {
        assert!(same_partition(&[0, 0, 1, 2, 1], &[3, 3, 0, 5, 0]));
        assert!(same_partition(&[0, 1, 2], &[0, 1, 2]));
        // Two groups merged, or one split: different cubes.
        assert!(!same_partition(&[0, 0, 1, 2], &[0, 0, 1, 1]));
        assert!(!same_partition(&[0, 0, 1, 1], &[0, 1, 2, 2]));
        assert!(!same_partition(&[0, 1], &[0, 1, 1]));
    }

    #[test]
    fn a_reading_s_own_error_replaces_the_device_model_except_when_clipped() {
        let wb = [1.0; 3];
        let v = [120.0, 80.0, 40.0];
        let lab = lab_of_linear(to_linear(v, Scale::Rgb8, wb));
        let device = reading_noise(v, None, Scale::Rgb8, wb, 1.0, &lab);
        let own = reading_noise(v, Some([0.1; 3]), Scale::Rgb8, wb, 1.0, &lab);
        let large = reading_noise(v, Some([3.0; 3]), Scale::Rgb8, wb, 1.0, &lab);
        for k in 0..3 {
            assert!(
                own[k] < device[k] && device[k] < large[k],
                "{own:?} {device:?} {large:?}"
            );
        }
        let hot = [255.0, 80.0, 40.0];
        let lab = lab_of_linear(to_linear(hot, Scale::Rgb8, wb));
        let a = reading_noise(hot, None, Scale::Rgb8, wb, 1.0, &lab);
        let b = reading_noise(hot, Some([0.1; 3]), Scale::Rgb8, wb, 1.0, &lab);
        assert!(b[0] > 0.5 * a[0], "clipped stays uncertain: {a:?} {b:?}");
    }

    #[test]
    fn reading_noise_follows_the_device() {
        // Relative to its own chroma, a near-black camera reading hardly resolves its hue
        // (a count is a large step there); a bright one does; a clipped channel is
        // uncertain in absolute terms.
        let lab_var = |v: [f64; 3], scale: Scale, wb: [f64; 3]| {
            let lab = lab_of_linear(to_linear(v, scale, wb));
            (lab, reading_noise(v, None, scale, wb, 1.0, &lab))
        };
        let rel = |(lab, var): ([f64; 3], [f64; 3])| {
            (var[1] + var[2]) / (lab[1].powi(2) + lab[2].powi(2))
        };
        let one = [1.0; 3];
        let dark = lab_var([6.0, 3.0, 2.0], Scale::Rgb8, one);
        let bright = lab_var([200.0, 100.0, 67.0], Scale::Rgb8, one);
        assert!(rel(dark) > 20.0 * rel(bright), "{dark:?} {bright:?}");
        let clipped = lab_var([255.0, 100.0, 67.0], Scale::Rgb8, one);
        assert!(clipped.1[1] > 20.0 * bright.1[1], "{clipped:?} {bright:?}");
        // EV3 counts: the same relation.
        let wb = [300.0, 500.0, 290.0];
        let dark = lab_var([9.0, 7.5, 5.0], Scale::Ev3Raw, wb);
        let bright = lab_var([240.0, 200.0, 130.0], Scale::Ev3Raw, wb);
        assert!(rel(dark) > 20.0 * rel(bright), "{dark:?} {bright:?}");
    }

    #[test]
    fn class_frame_separates_fading_from_hue() {
        // A class of oranges whose wear pulls some toward grey: the fit puts the spread on
        // the chroma axis, not across the hue.
        let base = [60.0, 40.0, 50.0];
        let labs: Vec<[f64; 3]> = (0..9)
            .map(|k| {
                let w = 1.0 - 0.05 * k as f64;
                [base[0] + 0.3 * k as f64, base[1] * w, base[2] * w]
            })
            .collect();
        let noise = vec![[0.01; 3]; 9];
        let labels = vec![0usize; 9];
        let c = fit(&labs, &noise, &labels, None)[0];
        assert!(c.var[1] > 10.0 * c.var[2], "{:?}", c.var);
        // A grey-shifted orange costs less than one turned toward red by the same amount.
        let faded = [60.0, 30.0, 37.5];
        let redder = [60.0, 40.0 + 7.7, 50.0 - 9.6];
        assert!(c.cost(&faded, &[0.0; 3]) < c.cost(&redder, &[0.0; 3]));
    }

    #[test]
    fn whole_cube_recolourings_are_legal_and_keep_centres() {
        use crate::cube::{random_state, FaceletCube};
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for _ in 0..5 {
            let cube = random_state(Size::Three, &mut rng);
            let labels: Vec<usize> = cube.colors().iter().map(|f| f.index()).collect();
            let alts = conjugates(&labels);
            // Rotations that keep every axis (the three half turns) always give legal
            // cubes; others may break the twist or flip and are left out.
            assert!((3..=23).contains(&alts.len()), "{}", alts.len());
            let z2: Vec<usize> = labels
                .iter()
                .enumerate()
                .map(|(i, &c)| {
                    let f = Face::ALL[c];
                    match f {
                        _ if i % 9 == 4 => c,
                        Face::U | Face::D | Face::R | Face::L => f.opposite().index(),
                        _ => c,
                    }
                })
                .collect();
            assert!(alts.contains(&z2));
            for l in &alts {
                assert_ne!(l, &labels);
                for f in 0..6 {
                    assert_eq!(l[f * 9 + 4], f);
                }
                let colors: Vec<Face> = l.iter().map(|&c| Face::ALL[c]).collect();
                let c = FaceletCube::from_colors(Size::Three, colors).unwrap();
                assert!(CubieCube::from_facelets(&c).is_some_and(|c| c.is_solvable()));
            }
        }
    }

    #[test]
    fn thirty_schemes_all_distinct() {
        let s = schemes();
        assert_eq!(s.len(), 30);
        for (i, a) in s.iter().enumerate() {
            for b in &s[i + 1..] {
                assert_ne!(a, b);
            }
            let mut seen = [false; 6];
            for &f in a {
                seen[f] = true;
            }
            assert!(seen.iter().all(|&x| x));
        }
    }

    #[test]
    fn illumination_recovers_face_and_kind_gains() {
        use crate::cube::FaceletCube;
        let cube = FaceletCube::solved(Size::Three);
        let labels: Vec<usize> = cube.colors().iter().map(|f| f.index()).collect();
        let face_gain: [f64; 6] = [0.2, -0.1, 0.0, 0.3, -0.2, -0.2];
        let kind_gain = [-0.1, 0.05, 0.2];
        let base = [0.5, 0.3, 0.2];
        let mut il = Illumination::new(Size::Three);
        let lin: Vec<[f64; 3]> = (0..54)
            .map(|i| {
                let g = (face_gain[il.face_of(i)] + kind_gain[il.kind_of(i)]).exp();
                // Every class has the same colour here, scaled by its index.
                let k = 1.0 + labels[i] as f64 * 0.1;
                base.map(|v| v * g * k)
            })
            .collect();
        for _ in 0..8 {
            il.estimate(&lin, &labels);
        }
        // Solved cube: face and class coincide, so only the kind pattern is identifiable;
        // the faces' gains carry no evidence and stay at even light (the prior), and the
        // kind pattern is recovered, shrunk toward even light by the prior's weight.
        assert!(il.face.iter().all(|g| g.abs() < 1e-9), "{:?}", il.face);
        let mean = (4.0 * kind_gain[0] + 4.0 * kind_gain[1] + kind_gain[2]) / 9.0;
        for (est, truth) in il.kind.iter().zip(kind_gain) {
            let ratio = est / (truth - mean);
            assert!((0.6..=1.0).contains(&ratio), "{:?}", il.kind);
        }
    }

    #[test]
    fn resolves_a_synthetic_scan_and_reports_margins() {
        use crate::color::synth::{synth_scan, Appearance, Conditions, Palette};
        use crate::cube::random_state;
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
        let cube = random_state(Size::Three, &mut rng);
        let app = Appearance::new(
            Palette::Standard,
            Conditions::for_palette(Palette::Standard),
            9,
        );
        let scan = synth_scan(&cube, &app, Scale::Rgb8, &mut rng);
        let res = resolve(&scan, &ResolveOptions::default()).unwrap();
        assert_eq!(res.cube.colors(), cube.colors());
        assert!(res.confident && res.doubtful.is_empty());
        assert!(res.cube_margin >= DEFAULT_DOUBT_NATS);
        assert_eq!(res.stickers.len(), 54);
        assert!(res.stickers.iter().filter(|s| s.margin > 0.0).count() > 45);
        // Same seed, same answer.
        let again = resolve(&scan, &ResolveOptions::default()).unwrap();
        assert_eq!(again.cube.colors(), res.cube.colors());
    }

    #[test]
    fn a_wrong_count_is_an_error_not_a_panic() {
        let scan = RawScan::new(Size::Three, Scale::Rgb8, vec![[1.0, 2.0, 3.0]; 53]);
        assert!(matches!(
            resolve(&scan, &ResolveOptions::default()),
            Err(ResolveError::Scan(_))
        ));
        // Every reading identical: no information at all; never a panic, never confident.
        let flat = RawScan::new(Size::Three, Scale::Rgb8, vec![[100.0, 100.0, 100.0]; 54]);
        match resolve(&flat, &ResolveOptions::default()) {
            Ok(r) => assert!(r.cube.is_solved() || !r.confident),
            Err(ResolveError::Ambiguous { .. }) | Err(ResolveError::NoLegalCube { .. }) => {}
            Err(e) => panic!("{e}"),
        }
        let flat2 = RawScan::new(Size::Two, Scale::Ev3Raw, vec![[0.0, 0.0, 0.0]; 24]);
        let _ = resolve(&flat2, &ResolveOptions::default());
    }
}
