//! The resolver: raw readings → white balance → CIELAB → six colour classes (k-means first,
//! then class models re-fitted to the legal cube) → the most likely *legal* cube by k-best
//! search over piece assignments, with per-sticker margins and a cube-level doubt test.
//!
//! Level: part of `color`; depends on `cube` and on `color`'s raw scans, profiles and
//! k-best search. Must not depend on `scan`, `solver`, `robot` or anything above; no
//! printing.
//!
//! Files: `readings` (raw values to Lab and their noise), `classes` (k-means and the
//! class model), `light` (per-face and per-kind light), `legal` (the k-best search for
//! legal cubes), `labelling` (labellings as cubes, whole-class recolourings), `refine`
//! (settling on a cube), `doubt` (rivals and stickers in doubt); this file holds the
//! public types and [`resolve`], which runs them in order.
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

mod classes;
mod doubt;
mod evaluate;
mod labelling;
mod legal;
mod light;
mod model;
mod readings;
mod refine;
#[cfg(test)]
mod tests;

use classes::{best_matching, d2, kmeans6, kmeans_runs};
use doubt::Best;
pub use evaluate::{cube_cost, redeal};
use labelling::cube_of;
use legal::Candidate;
pub use model::Model;
pub use readings::{lab_of_linear, linear_readings, scan_lab};
use refine::{cost_of, Evidence};

use super::profile::Profile;
use super::raw::{RawScan, RawScanError, Scale};
use crate::cube::{CubieCube, Face, FaceletCube, PocketCube, Size};

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
    /// The likelihood model's constants.
    pub model: Model,
}

impl Default for ResolveOptions {
    fn default() -> ResolveOptions {
        ResolveOptions {
            profile: None,
            best_effort: false,
            seed: 1,
            doubt_threshold: DEFAULT_DOUBT_NATS,
            node_budget: 200_000,
            model: Model::default(),
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
    /// The log of the odds (nats) that `cube` is the scanned cube against every rival the
    /// search found together (each rival's likelihood ratio to the best, summed); at most
    /// `cube_margin`.
    pub log_odds: f64,
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
    #[error("the profile was learned on scale {} but the scan is {}", profile.name(), scan.name())]
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

/// Resolves a scan to the most likely legal cube.
pub fn resolve(scan: &RawScan, opts: &ResolveOptions) -> Result<Resolution, ResolveError> {
    scan.check()?;
    check_profile_scale(scan, opts.profile.as_ref())?;
    let size = scan.cube_size();
    let (labs, wb) = scan_lab(scan, opts.profile.as_ref());
    let (clusters, centroids) = kmeans6(&labs, opts.seed);
    // The search and the doubt test work in the model's own nats.
    let t = opts.model.temperature;
    let window = opts.doubt_threshold * t;
    // Refine from each first estimate; go on from the one that settles on the cheapest
    // cube under its own model.
    let mut expanded = 0;
    let mut chosen: Option<(f64, Evidence, refine::Settled)> = None;
    for (labels, anchors) in starts(size, &labs, &clusters, &centroids, opts.seed) {
        let prior = opts
            .profile
            .as_ref()
            .map(|p| profile_prior(p, size, &labs, &anchors));
        let evidence = Evidence::new(
            scan,
            opts.profile.as_ref(),
            wb,
            prior,
            opts.node_budget,
            opts.model,
        );
        let (settled, spent) = evidence.settle(labels, &labs);
        expanded += spent;
        let own = evidence.own_model(&settled.labels, &settled.illum).total;
        if chosen.as_ref().is_none_or(|c| own < c.0) {
            chosen = Some((own, evidence, settled));
        }
    }
    let (_, evidence, settled) = chosen.expect("at least one start");
    let (search, spent) = evidence.final_search(settled, window);
    expanded += spent;
    if search.outcome.candidates.is_empty() {
        let suspects = least_certain(&search.cost);
        return Err(ResolveError::NoLegalCube { expanded, suspects });
    }

    // The best under its own model, re-scored under it.
    let rescored: Vec<(f64, &Candidate)> = search
        .own
        .iter()
        .copied()
        .zip(&search.outcome.candidates)
        .collect();
    let best_idx = (0..rescored.len())
        .min_by(|&a, &b| rescored[a].0.total_cmp(&rescored[b].0))
        .expect("non-empty");
    let best = rescored[best_idx].1;
    let own = evidence.own_model(&best.labels, &search.settled.illum);
    let cost = cost_of(&own.labs, &own.noise, &own.classes);

    let (cube, face_of_class) =
        legal_cube(size, &best.labels).ok_or(ResolveError::NoLegalCube {
            expanded,
            suspects: Vec::new(),
        })?;
    let mut stickers = sticker_verdicts(&own.labs, &best.labels, &cost, &face_of_class);
    let doubt = doubt::weigh(
        &evidence,
        &Best {
            rescored: &rescored,
            index: best_idx,
            labs: &own.labs,
            noise: &own.noise,
            stickers: &stickers,
            unseen_bound: search.outcome.unseen_bound,
            first_cost: search.outcome.candidates[0].cost,
        },
        window,
        t,
    );
    for s in &mut stickers {
        s.margin /= t;
    }
    let classes = (0..6)
        .map(|j| ClassSummary {
            face: face_of_class[j],
            mean: own.classes[j].mean,
            spread: own.classes[j].var.map(f64::sqrt),
        })
        .collect();
    let resolution = Resolution {
        cube,
        stickers,
        doubtful: doubt.doubtful.clone(),
        confident: doubt.confident,
        cube_margin: doubt.cube_margin / t,
        log_odds: doubt.log_odds,
        rival_exact: doubt.rival_exact,
        rival: doubt.rival,
        classes,
        clusters,
        cluster_centroids: centroids,
        white_balance: wb,
        expanded,
    };
    if !doubt.confident && !opts.best_effort {
        return Err(ResolveError::Ambiguous {
            doubtful: doubt.doubtful,
            best: Box::new(resolution),
        });
    }
    Ok(resolution)
}

/// A profile learned on another scale than the scan's cannot be used (the EV3's raw counts
/// and its 0..1 values are one scale).
fn check_profile_scale(scan: &RawScan, profile: Option<&Profile>) -> Result<(), ResolveError> {
    profile_fits_scale(profile, scan.effective_scale())
}

/// Whether a profile (if any) can be used on scans of `scale`: the check [`resolve`] makes,
/// for a caller that knows its scanner's scale before it scans.
pub fn profile_fits_scale(profile: Option<&Profile>, scale: Scale) -> Result<(), ResolveError> {
    if let Some(ps) = profile.and_then(|p| p.scale) {
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
    Ok(())
}

/// The first estimates the refinement starts from, each a class per sticker and the colour
/// of each class to match a profile's colours against. A 3x3x3: the k-means clusters mapped
/// to the centres' faces by the cheapest matching (each centre keeps its own face), and
/// every sticker given the face of the centre it reads closest to; the centres are the
/// anchors. A 2x2x2: the k-means clusters as classes, their centroids the anchors.
fn starts(
    size: Size,
    labs: &[[f64; 3]],
    clusters: &[usize],
    centroids: &[[f64; 3]],
    seed: u64,
) -> Vec<(Vec<usize>, Vec<[f64; 3]>)> {
    match size {
        Size::Three => {
            let centres: Vec<[f64; 3]> = (0..6).map(|f| labs[f * 9 + 4]).collect();
            let perm = best_matching(&centres, centroids);
            // perm[face] = cluster.
            let mut cluster_face = [0usize; 6];
            for (face, &cl) in perm.iter().enumerate() {
                cluster_face[cl] = face;
            }
            let mut by_cluster: Vec<usize> =
                clusters.iter().map(|&c| cluster_face[c.min(5)]).collect();
            for f in 0..6 {
                by_cluster[f * 9 + 4] = f;
            }
            let by_centre: Vec<usize> = labs
                .iter()
                .map(|x| {
                    (0..6)
                        .min_by(|&a, &b| d2(x, &centres[a]).total_cmp(&d2(x, &centres[b])))
                        .expect("six centres")
                })
                .collect();
            let mut out = vec![(by_cluster, centres.clone())];
            if by_centre != out[0].0 {
                out.push((by_centre, centres));
            }
            out
        }
        Size::Two => {
            // Each k-means run that groups the stickers differently, best inertia first.
            let mut runs = kmeans_runs(labs, seed);
            runs.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut out: Vec<(Vec<usize>, Vec<[f64; 3]>)> = Vec::new();
            for (_, labels, cents) in runs {
                let labels: Vec<usize> = labels.iter().map(|&c| c.min(5)).collect();
                if !out.iter().any(|o| legal::same_partition(&o.0, &labels)) {
                    out.push((labels, cents));
                }
            }
            out
        }
    }
}

/// The profile's centroids matched to the classes (to the centres on a 3x3x3, to the
/// k-means centroids on a 2x2x2): `prior[class]`.
fn profile_prior(
    profile: &Profile,
    size: Size,
    labs: &[[f64; 3]],
    centroids: &[[f64; 3]],
) -> [[f64; 3]; 6] {
    let pc = profile.centroids();
    let anchors: Vec<[f64; 3]> = match size {
        Size::Three => (0..6).map(|f| labs[f * 9 + 4]).collect(),
        Size::Two => centroids.to_vec(),
    };
    let perm = best_matching(&anchors, &pc);
    std::array::from_fn(|j| pc[perm[j]])
}

/// When no legal cube was found: the six stickers with the smallest margin between their
/// two cheapest classes, in facelet order.
fn least_certain(cost: &[[f64; 6]]) -> Vec<usize> {
    let mut suspects: Vec<usize> = (0..cost.len()).collect();
    let margin = |i: usize| {
        let mut c = cost[i];
        c.sort_by(f64::total_cmp);
        c[1] - c[0]
    };
    suspects.sort_by(|&a, &b| margin(a).total_cmp(&margin(b)));
    suspects.truncate(6);
    suspects.sort_unstable();
    suspects
}

/// The cube of a labelling and the face of each class, if it is a legal cube.
fn legal_cube(size: Size, labels: &[usize]) -> Option<(FaceletCube, [Face; 6])> {
    let (cube, face_of_class) = cube_of(size, labels)?;
    let legal = match size {
        Size::Three => CubieCube::from_facelets(&cube).is_some_and(|c| c.is_solvable()),
        Size::Two => PocketCube::from_facelets(&cube).is_some_and(|c| c.is_solvable()),
    };
    legal.then_some((cube, face_of_class))
}

/// Each sticker's chosen face, and its margin to the cheapest other class.
fn sticker_verdicts(
    labs: &[[f64; 3]],
    labels: &[usize],
    cost: &[[f64; 6]],
    face_of_class: &[Face; 6],
) -> Vec<StickerVerdict> {
    labs.iter()
        .enumerate()
        .map(|(i, lab)| {
            let chosen = labels[i];
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
        .collect()
}
