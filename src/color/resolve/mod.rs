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
//! Unread stickers (`RawScan::unread`, one face's at most: a scanner that skips a face, or
//! that is still reading its last): an unread sticker carries no evidence. It costs nothing
//! for any class, takes no part in the k-means, the class fits or the light, and the legal
//! search gives it whatever colour the cube's rules allow, so the [`Resolution`] is still
//! the whole cube (its [`StickerVerdict::read`] false). With a 3x3x3's face unread its
//! centre is unread too: its class is the one colour no read centre shows, its stickers
//! found on the other faces by clusters grown from the five read centres and the reading
//! farthest from them (beside the usual starts). Its face needs no finding: classes are
//! faces, and the corners fix the scheme's opposites and handedness through the legal
//! search. Since a class's read stickers then vary in number between cubes, each class's
//! mean pays its Occam factor (see `refine`), else a cube that lends the unread colour a
//! few stickers of another colour would win. Five faces do not always fix the cube: when
//! the unread face's edges show the same colour on their read sides in two pairs, or three
//! alike, two or more legal cubes show every read sticker alike, they tie, and the doubt
//! test says so (about 1 random 3x3x3 in 10; a 2x2x2's unread face is always decided).
//!
//! Doubt: the legal cubes the search finds near the best (and, on a 3x3x3, the best's
//! whole-class recolourings by a cube rotation, centres kept) are each scored under their
//! OWN re-estimated light and re-fitted classes (a profile likelihood per hypothesis), not
//! under the model fitted to the best; a rival within the doubt window puts the stickers
//! where it differs in doubt. A candidate that only renames the best's colour groups is
//! the same cube. When the cheapest under its own model is not the cube the model was
//! settled on, the refinement restarts from it before the final search is trusted.
//!
//! Contradiction: the best legal cube may give a sticker a colour its own reading clearly
//! denies (a sticker margin below `-doubt_threshold`). Where the readings so denied, taken
//! as they are, make a cube of real pieces and right colour counts that breaks only the
//! twist, flip or parity rule, the cube in the robot was put together wrong (a corner
//! turned in place, an edge flipped, two pieces swapped), and no legal answer is true:
//! such a scan is never confident ([`Resolution::contradicted`]), and the cube as read
//! ([`Resolution::as_read`]) names the rule it breaks. Which piece is at fault the colours
//! cannot say (turning any corner undoes a twist), so the stickers named are where the
//! nearest legal cube and the readings part. A worn or misread sticker instead makes a
//! colour too many or a piece that does not exist; there the cube's rules decide, as
//! everywhere. No real or re-dealt scan is affected (the lowest sticker margin of a
//! confident one is -7.0 nats anyway).
//!
//! Calibrated doubt: a margin of `m` nats says the best guess is `e^m` times as likely as
//! its closest rival, so it is wrong with a chance of about `1 / (1 + e^m)` if the model's
//! likelihoods are right; `Resolution::log_odds` weighs every rival found, and that is
//! the probability a doubt and `--best-effort` state. Whether the likelihoods are right is
//! measured on real scans the model was not fitted to: `cubot bench resolve --realdata
//! samples/realdata/cases --cross-validate --redeal 20` chooses the model constants and a
//! margin temperature (which divides every margin when real scans say they are too sharp)
//! on all sources but one and scores that one. Every fold chooses temperature 1, and the
//! margins hold on the 882 real and re-dealt labelled scans: the 856 best guesses 8 nats
//! or more ahead were all right (the model expects under 0.01 % wrong there), the 23
//! between 1 and 8 nats too (1.4 wrong expected), and 2 of the 3 under 1 nat were wrong
//! (44 % expected). So a confident answer (8 nats, the default `--doubt`) means under
//! 1 in 1,000 wrong on real scans by the model's own account and by the count, and a doubt
//! under 1 nat is close to a coin toss. On the harsh synthetic set the stated probability
//! of a doubted best guess is 81–95 % and the share right 76–96 % (faded camera scans the
//! least, where the model is a little too sure).

mod classes;
mod doubt;
mod evaluate;
mod labelling;
mod legal;
mod light;
mod model;
mod readings;
mod refine;
mod sees;
#[cfg(test)]
mod tests;

use classes::{
    anchored_kmeans, best_matching, best_matching_some, d2, kmeans6, kmeans_runs, Class, ClassPrior,
};
use doubt::Best;
pub use evaluate::{cube_cost, evenly_lit_labs, misfit_stickers, redeal};
use labelling::cube_of;
use legal::Candidate;
pub use model::Model;
pub use readings::{combine_reads, lab_of_linear, linear_readings, scan_lab};
use refine::Evidence;
pub use sees::{
    check_sees_a_cube, other_size, reading_words, sixth_colour_distance, NoCube, DARK_SHARE,
    GAP_SHARE, MIN_DISTINCT_DE,
};

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
    /// Measured colour (CIELAB, D65, after white balance); for an unread sticker, the mean
    /// of the class it was given (what it would be expected to read).
    pub lab: [f64; 3],
    /// The face whose colour the sticker shows in the resolved cube.
    pub face: Face,
    /// Cost of the runner-up colour minus the chosen one's (nats; negative when the legal
    /// cube overrode this sticker's own nearest colour); 0 for an unread sticker, whose
    /// colour only the cube's rules give.
    pub margin: f64,
    pub runner_up: Option<Face>,
    /// Whether the sticker was read (else the cube's rules filled it in).
    pub read: bool,
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
    /// Facelet indices in doubt: where any of the `close_rivals` rival legal cubes within
    /// the doubt window differs from `cube`; when none was reached (the closest only
    /// bounded), the least certain stickers.
    pub doubtful: Vec<usize>,
    /// The distinct rival legal cubes within the doubt window, closest first (then the
    /// first is `rival`); none: the doubt names the least certain stickers instead.
    pub close_rivals: Vec<FaceletCube>,
    /// The doubt is the colour profile's: the readings alone confidently say `cube`, the
    /// profile says the one rival (another cube, or another light than it was learned in).
    pub profile_disagrees: bool,
    /// Read stickers to which the best legal cube gives a colour their own readings
    /// clearly deny (a sticker margin below `-doubt_threshold`): no legal cube explains
    /// the readings there. A doubt of its own kind, never confident: a twisted corner, a
    /// flipped edge or swapped pieces in the cube, or a reading of something else.
    /// [`Resolution::as_read`] is the cube these readings show.
    pub contradicted: Vec<usize>,
    /// When any sticker is contradicted: the rules of real cubes the cube as read breaks,
    /// in the validator's words ("a corner is twisted (…)"). Which piece is at fault the
    /// colours cannot say (turning any corner in place undoes a twist), so the stickers
    /// named are only where the best guess and the readings part.
    pub contradiction: Option<String>,
    /// Read stickers whose readings clearly deny the colour the best legal cube gives them
    /// (as `contradicted`), where the cube as read is no cube put together wrong but one of
    /// impossible pieces or colour counts (a misread, worn or swapped sticker): the cube's
    /// rules decide, and the answer may still be confident, but these are worth a look.
    pub overruled: Vec<usize>,
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

impl Resolution {
    /// The facelets that were not read (filled in from the cube's rules), in order.
    pub fn unread(&self) -> Vec<usize> {
        (0..self.stickers.len())
            .filter(|&i| !self.stickers[i].read)
            .collect()
    }

    /// The probability that `cube` is the scanned cube, against every rival the resolver
    /// found, from the calibrated likelihoods (`1 / (1 + e^-log_odds)`). A best guess
    /// that contradicts clear readings is not the scanned cube, whatever its rivals: 0.
    pub fn probability(&self) -> f64 {
        if !self.contradicted.is_empty() {
            return 0.0;
        }
        1.0 / (1.0 + (-self.log_odds).exp())
    }

    /// The cube as the readings show it: the best guess with each contradicted sticker
    /// given the colour its own reading shows (not a legal cube when any was contradicted).
    pub fn as_read(&self) -> FaceletCube {
        with_readings(&self.cube, &self.stickers, &self.contradicted)
            .unwrap_or_else(|| self.cube.clone())
    }
}

/// `cube` with each sticker of `idx` given the colour its own reading shows (its verdict's
/// runner-up, which a negative margin makes the reading's nearest); `None` when one has no
/// runner-up (an unread sticker).
fn with_readings(
    cube: &FaceletCube,
    stickers: &[StickerVerdict],
    idx: &[usize],
) -> Option<FaceletCube> {
    let mut colors = cube.colors().to_vec();
    for &i in idx {
        colors[i] = stickers[i].runner_up?;
    }
    Some(
        FaceletCube::from_colors(cube.size(), colors)
            .expect("one colour per sticker")
            .with_symbols(cube.symbols()),
    )
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
    /// No legal cube explains the readings (within the search's budget).
    #[error("no legal cube fits the readings (searched {expanded} nodes){}; re-scan, and if none fits again the stickers were not read where the scan believes them (a cube sitting crooked, the sensor's or camera's positions off) or the cube is put together wrong", least_certain_words(.suspects, *.size))]
    NoLegalCube {
        expanded: usize,
        /// The least certain stickers (facelet indices), to re-read first.
        suspects: Vec<usize>,
        size: Size,
    },
    /// The readings cannot be of a cube at all: dark, or one surface.
    #[error("the scan sees no cube: {0}")]
    NoCube(#[from] NoCube),
    #[error("the profile was learned on scale {} but the scan is {}", profile.name(), scan.name())]
    ProfileScale { profile: Scale, scan: Scale },
    /// Stickers unread on more than one face: the resolver fills in one face's at most.
    #[error("stickers unread on faces {} ({}): the resolver fills in the unread stickers of one face at most", faces.iter().map(|f| f.letter().to_string()).collect::<Vec<_>>().join(", "), facelet_names(unread, *size))]
    UnreadFaces {
        faces: Vec<Face>,
        unread: Vec<usize>,
        size: Size,
    },
}

/// `U1 R5 ...` names of facelet indices.
/// "; the least certain stickers: U1 F5 ..." (nothing when there are none).
fn least_certain_words(suspects: &[usize], size: Size) -> String {
    if suspects.is_empty() {
        return String::new();
    }
    format!(
        "; the least certain stickers: {}",
        facelet_names(suspects, size)
    )
}

pub fn facelet_names(idx: &[usize], size: Size) -> String {
    idx.iter()
        .map(|&i| facelet_name(i, size))
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn facelet_name(i: usize, size: Size) -> String {
    crate::cube::sticker_name(i, size)
}

/// Resolves a scan to the most likely legal cube.
///
/// With a profile, the scan is also resolved without it: a profile is a prior learned on
/// another scan, and where the readings alone are decisive and disagree with it (another
/// cube, another light), the disagreement is a doubt, never the profile's answer. Where the
/// readings alone are in doubt, the profile decides (`reconcile`).
pub fn resolve(scan: &RawScan, opts: &ResolveOptions) -> Result<Resolution, ResolveError> {
    scan.check()?;
    check_unread(scan)?;
    check_profile_scale(scan, opts.profile.as_ref())?;
    check_sees_a_cube(scan)?;
    let res = match &opts.profile {
        None => resolve_once(scan, opts)?,
        Some(_) => {
            let plain = resolve_once(
                scan,
                &ResolveOptions {
                    profile: None,
                    ..opts.clone()
                },
            );
            match (plain, resolve_once(scan, opts)) {
                (Ok(plain), Ok(with)) => reconcile(plain, with),
                (Err(_), with) => with?,
                // No legal cube under the profile: it contradicts the readings.
                (Ok(plain), Err(_)) => Resolution {
                    confident: false,
                    close_rivals: Vec::new(),
                    doubtful: least_certain_of(&plain),
                    ..plain
                },
            }
        }
    };
    if !res.confident && !opts.best_effort {
        return Err(ResolveError::Ambiguous {
            doubtful: res.doubtful.clone(),
            best: Box::new(res),
        });
    }
    Ok(res)
}

/// The answer with a profile, checked against the answer without it. When the readings
/// alone confidently say another cube, the two are rivals (a doubt naming the stickers
/// where they differ, the readings' own answer the best guess). When both say the same
/// cube, the surer of the two answers: a profile never makes a scan less certain that the
/// readings alone decide, unless it says another cube. Otherwise the profile's answer.
fn reconcile(plain: Resolution, with: Resolution) -> Resolution {
    let differ: Vec<usize> = (0..with.cube.colors().len())
        .filter(|&i| with.cube.colors()[i] != plain.cube.colors()[i])
        .collect();
    if differ.is_empty() {
        return if plain.cube_margin > with.cube_margin {
            plain
        } else {
            with
        };
    }
    if !plain.confident {
        return with;
    }
    Resolution {
        confident: false,
        close_rivals: vec![with.cube.clone()],
        profile_disagrees: true,
        doubtful: differ,
        cube_margin: 0.0,
        rival_exact: true,
        log_odds: 0.0,
        rival: Some(with.cube),
        ..plain
    }
}

/// The read stickers of a resolution with the smallest margins, in facelet order.
fn least_certain_of(res: &Resolution) -> Vec<usize> {
    let mut order: Vec<usize> = (0..res.stickers.len())
        .filter(|&i| res.stickers[i].read)
        .collect();
    order.sort_by(|&a, &b| res.stickers[a].margin.total_cmp(&res.stickers[b].margin));
    order.truncate(6);
    order.sort_unstable();
    order
}

/// One resolution under `opts` (its profile, if any), always with a best guess.
fn resolve_once(scan: &RawScan, opts: &ResolveOptions) -> Result<Resolution, ResolveError> {
    let size = scan.cube_size();
    let read = scan.read_mask();
    let (labs, wb) = scan_lab(scan, opts.profile.as_ref());
    // The first estimate sees the read stickers only; an unread one's cluster is settled
    // with its class at the end.
    let (read_clusters, centroids) = kmeans6(&only_read(&labs, &read), opts.seed);
    let mut clusters = to_all(&read_clusters, &read, |_| 0);
    // The search and the doubt test work in the model's own nats.
    let t = opts.model.temperature;
    let window = opts.doubt_threshold * t;
    // Refine from each first estimate; go on from the one that settles on the cheapest
    // cube under its own model.
    let mut expanded = 0;
    let mut settled_all: Vec<(f64, Evidence, refine::Settled)> = Vec::new();
    // Starts whose first round reaches a state already settled go no further.
    let mut reached: Vec<(Vec<usize>, Option<[usize; 6]>)> = Vec::new();
    let estimates = first_estimates(
        opts.profile.as_ref(),
        size,
        &labs,
        &read,
        &clusters,
        &centroids,
        opts.seed,
    );
    for (labels, matched) in estimates {
        let evidence = Evidence::new(
            scan,
            opts.profile.as_ref(),
            wb,
            matched.map(|m| m.1),
            opts.node_budget,
            opts.model,
        );
        let (first, spent, stuck) = evidence.first_round(labels, &labs);
        expanded += spent;
        let key = (first.labels.clone(), matched.map(|m| m.0));
        if reached.contains(&key) {
            continue;
        }
        reached.push(key);
        let (settled, spent) = evidence.settle(first, stuck);
        expanded += spent;
        let own = evidence.own_model(&settled.labels, &settled.illum).total;
        settled_all.push((own, evidence, settled));
    }
    let pick = (0..settled_all.len())
        .min_by(|&a, &b| settled_all[a].0.total_cmp(&settled_all[b].0))
        .expect("at least one start");
    let chosen = settled_all.swap_remove(pick);
    // The other starts' cubes, each under its own model: rivals too (with a profile, each
    // start may read the profile's colours onto the cube another way round).
    let alternatives: Vec<(f64, Vec<usize>)> = settled_all
        .into_iter()
        .map(|(own, _, s)| (own, s.labels))
        .collect();
    let (_, evidence, settled) = chosen;
    let (search, spent) = evidence.final_search(settled, window);
    expanded += spent;
    if search.outcome.candidates.is_empty() {
        let suspects = least_certain(&search.cost, &read, size);
        return Err(ResolveError::NoLegalCube {
            expanded,
            suspects,
            size,
        });
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
    let cost = evidence.cost(&own.labs, &own.noise, &own.classes);

    let (cube, face_of_class) =
        legal_cube(size, &best.labels).ok_or(ResolveError::NoLegalCube {
            expanded,
            suspects: Vec::new(),
            size,
        })?;
    let mut stickers = sticker_verdicts(
        &own.labs,
        &read,
        &best.labels,
        &cost,
        &own.classes,
        &face_of_class,
    );
    // An unread sticker's cluster: the one nearest its class's mean.
    for (i, s) in stickers.iter().enumerate().filter(|(_, s)| !s.read) {
        clusters[i] = (0..centroids.len())
            .min_by(|&a, &b| d2(&s.lab, &centroids[a]).total_cmp(&d2(&s.lab, &centroids[b])))
            .unwrap_or(0);
    }
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
            alternatives: &alternatives,
        },
        window,
        t,
    );
    for s in &mut stickers {
        s.margin /= t;
    }
    let denied: Vec<usize> = (0..stickers.len())
        .filter(|&i| stickers[i].read && stickers[i].margin < -opts.doubt_threshold)
        .collect();
    let (contradicted, contradiction, overruled) = match assembled_wrong(&cube, &stickers, &denied)
    {
        Some(rule) => (denied, Some(rule), Vec::new()),
        None => (Vec::new(), None, denied),
    };
    let confident = doubt.confident && contradicted.is_empty();
    let mut doubtful = doubt.doubtful.clone();
    if !contradicted.is_empty() {
        doubtful.extend(&contradicted);
        doubtful.sort_unstable();
        doubtful.dedup();
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
        doubtful,
        profile_disagrees: false,
        close_rivals: if doubt.confident {
            Vec::new()
        } else {
            doubt.close_rivals
        },
        contradicted,
        contradiction,
        overruled,
        confident,
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
    Ok(resolution)
}

/// The rules the readings break, where they clearly deny the best legal cube (`denied`)
/// and show a cube put together wrong: the cube as read has every colour n² times and real
/// pieces only, and breaks nothing but the twist, flip or parity rules (the validator's
/// words). A worn or misread sticker gives a colour too many or a piece that does not
/// exist: `None`, and the cube's rules decide (see [Contradiction](self)).
fn assembled_wrong(
    cube: &FaceletCube,
    stickers: &[StickerVerdict],
    denied: &[usize],
) -> Option<String> {
    use crate::cube::CubeProblem;
    if denied.is_empty() {
        return None;
    }
    let as_read = with_readings(cube, stickers, denied)?;
    let problems = crate::cube::validate(&as_read.to_letters()).err()?.problems;
    problems
        .iter()
        .all(|p| {
            matches!(
                p,
                CubeProblem::Twist { .. } | CubeProblem::Flip | CubeProblem::Parity
            )
        })
        .then(|| {
            problems
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join("; ")
        })
}

/// Unread stickers the resolver can fill in: any of one face's (a scanner that skipped a
/// face, or stopped part way through its last). Unread stickers on two faces are refused:
/// on a 3x3x3 two centres could be unread, and nothing would then tell their two classes
/// apart but the corners, which the start of the refinement does not weigh.
pub fn check_unread(scan: &RawScan) -> Result<(), ResolveError> {
    let size = scan.cube_size();
    let mut faces: Vec<Face> = scan
        .unread
        .iter()
        .map(|&i| Face::ALL[(i / size.per_face()) % 6])
        .collect();
    faces.sort_by_key(|f| f.index());
    faces.dedup();
    if faces.len() > 1 {
        return Err(ResolveError::UnreadFaces {
            faces,
            unread: scan.unread.clone(),
            size,
        });
    }
    Ok(())
}

/// The values of the read stickers, in facelet order.
fn only_read<T: Copy>(xs: &[T], read: &[bool]) -> Vec<T> {
    xs.iter()
        .zip(read)
        .filter(|(_, &r)| r)
        .map(|(x, _)| *x)
        .collect()
}

/// Labels of the read stickers (in facelet order) spread back over every sticker, an
/// unread sticker `i` given `fill(i)`.
fn to_all(read_labels: &[usize], read: &[bool], fill: impl Fn(usize) -> usize) -> Vec<usize> {
    let mut next = read_labels.iter();
    (0..read.len())
        .map(|i| {
            if read[i] {
                *next.next().expect("one label per read sticker")
            } else {
                fill(i)
            }
        })
        .collect()
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

/// The first estimates the refinement starts from, each a class per sticker. A 3x3x3: the
/// k-means clusters mapped to the centres' faces by the cheapest matching (each centre
/// keeps its own face), and every sticker given the face of the centre it reads closest
/// to. An unread centre's face takes the cluster the read centres leave, and that
/// cluster's mean stands in for the centre: the one colour no read centre shows. A 2x2x2:
/// the k-means clusters as classes, from each run that groups the stickers differently.
/// The k-means see the read stickers only; an unread sticker starts as its own face's
/// class (its label is the search's to choose, at no cost).
fn starts(
    size: Size,
    labs: &[[f64; 3]],
    read: &[bool],
    clusters: &[usize],
    centroids: &[[f64; 3]],
    seed: u64,
) -> Vec<Vec<usize>> {
    let per = size.per_face();
    let unread_at_face = |mut labels: Vec<usize>| {
        for (i, l) in labels.iter_mut().enumerate() {
            if !read[i] {
                *l = i / per;
            }
        }
        labels
    };
    match size {
        Size::Three => {
            let read_centres: Vec<Option<[f64; 3]>> = (0..6)
                .map(|f| read[f * 9 + 4].then_some(labs[f * 9 + 4]))
                .collect();
            let perm = best_matching_some(&read_centres, centroids);
            let centres: Vec<[f64; 3]> = (0..6)
                .map(|f| read_centres[f].unwrap_or(centroids[perm[f]]))
                .collect();
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
            let (by_cluster, by_centre) = (unread_at_face(by_cluster), unread_at_face(by_centre));
            let mut out = vec![by_cluster];
            if by_centre != out[0] {
                out.push(by_centre);
            }
            if read_centres.iter().any(Option::is_none) {
                // The k-means may have merged the unread centre's colour with a close one
                // (a faded red and orange) and split another; clusters grown from the read
                // centres and the reading farthest from all of them find it instead.
                let grown = anchored_kmeans(&only_read(labs, read), &read_centres);
                let mut grown = unread_at_face(to_all(&grown, read, |i| i / per));
                for f in 0..6 {
                    grown[f * 9 + 4] = f;
                }
                if !out.contains(&grown) {
                    out.push(grown);
                }
            }
            out
        }
        Size::Two => {
            // Each k-means run that groups the stickers differently, best inertia first.
            let mut runs = kmeans_runs(&only_read(labs, read), seed);
            runs.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut out: Vec<Vec<usize>> = Vec::new();
            for (_, labels, _) in runs {
                let labels: Vec<usize> = labels.iter().map(|&c| c.min(5)).collect();
                let labels = to_all(&labels, read, |i| i / per);
                if !out.iter().any(|o| legal::same_partition(o, &labels)) {
                    out.push(labels);
                }
            }
            out
        }
    }
}

/// A profile's colours matched to the classes: `perm[class]` = profile colour, and the
/// prior it gives each class.
type Matched = ([usize; 6], [ClassPrior; 6]);

/// The first estimates the refinement starts from: a class per sticker and, with a
/// profile, the profile's colours matched to the classes (the matching and the prior). Without a profile, [`starts`].
/// With one, each start with each of the two closest matchings of the profile's colours to
/// its classes, and each matching's own start (every sticker given the class whose
/// profile colour it reads closest to, centres keeping their own).
fn first_estimates(
    profile: Option<&Profile>,
    size: Size,
    labs: &[[f64; 3]],
    read: &[bool],
    clusters: &[usize],
    centroids: &[[f64; 3]],
    seed: u64,
) -> Vec<(Vec<usize>, Option<Matched>)> {
    let base = starts(size, labs, read, clusters, centroids, seed);
    let Some(p) = profile else {
        return base.into_iter().map(|l| (l, None)).collect();
    };
    let mut out: Vec<(Vec<usize>, Option<Matched>)> = Vec::new();
    let mut seen: Vec<(Vec<usize>, [usize; 6])> = Vec::new();
    for labels in base {
        for (perm, prior) in profile_priors(p, size, &class_means(labs, read, &labels), 2) {
            let mut near: Vec<usize> = labs
                .iter()
                .map(|x| {
                    (0..6)
                        .min_by(|&a, &b| d2(x, &prior[a].mean).total_cmp(&d2(x, &prior[b].mean)))
                        .expect("six classes")
                })
                .collect();
            if size == Size::Three {
                for f in 0..6 {
                    near[f * 9 + 4] = f;
                }
            }
            for l in [labels.clone(), near] {
                if !seen.iter().any(|(sl, sp)| *sl == l && *sp == perm) {
                    seen.push((l.clone(), perm));
                    out.push((l, Some((perm, prior))));
                }
            }
        }
    }
    out
}

/// The profile's colours matched to the classes: `prior[class]`. A 3x3x3's classes are its
/// centres' faces, and a profile knows its colours' faces, so the match is the whole-cube
/// rotation (one of 24: opposite colours stay opposite) that brings the profile's colours
/// closest to the classes' first means; a 2x2x2's classes are k-means clusters, matched to
/// the profile's colours one to one by the cheapest pairing.
fn profile_prior(profile: &Profile, size: Size, anchors: &[[f64; 3]]) -> [ClassPrior; 6] {
    profile_priors(profile, size, anchors, 1)
        .pop()
        .expect("one matching")
        .1
}

/// The `n` closest matchings of [`profile_prior`], closest first: the matching
/// (`perm[class]` = profile colour) and the prior it gives.
fn profile_priors(profile: &Profile, size: Size, anchors: &[[f64; 3]], n: usize) -> Vec<Matched> {
    let pc = profile.centroids();
    let stickers = profile.stickers_by_face();
    let perms: Vec<[usize; 6]> = match size {
        Size::Three => {
            let cost = |p: &[usize; 6]| (0..6).map(|j| d2(&anchors[j], &pc[p[j]])).sum::<f64>();
            let mut all = labelling::rotations();
            all.sort_by(|a, b| cost(a).total_cmp(&cost(b)));
            all.truncate(n.max(1));
            all
        }
        Size::Two => vec![best_matching(anchors, &pc)],
    };
    perms
        .into_iter()
        .map(|perm| {
            let prior = std::array::from_fn(|j| {
                let f = perm[j];
                let mut offsets = [[0.0; 3]; 9];
                let members = stickers[f].len().min(9);
                for (o, s) in offsets.iter_mut().zip(&stickers[f]) {
                    *o = std::array::from_fn(|k| s[k] - pc[f][k]);
                }
                ClassPrior {
                    mean: pc[f],
                    offsets,
                    members,
                }
            });
            (perm, prior)
        })
        .collect()
}

/// The mean reading of each class of a labelling, over the read stickers (a class with no
/// sticker read: mid-grey).
fn class_means(labs: &[[f64; 3]], read: &[bool], labels: &[usize]) -> Vec<[f64; 3]> {
    (0..6)
        .map(|j| {
            let xs: Vec<&[f64; 3]> = labs
                .iter()
                .zip(labels)
                .zip(read)
                .filter(|p| *p.0 .1 == j && *p.1)
                .map(|p| p.0 .0)
                .collect();
            if xs.is_empty() {
                return [50.0, 0.0, 0.0];
            }
            let n = xs.len() as f64;
            std::array::from_fn(|k| xs.iter().map(|x| x[k]).sum::<f64>() / n)
        })
        .collect()
}

/// When no legal cube was found: the six read stickers with the smallest margin between
/// their two cheapest classes, in facelet order. Centres are left out: a
/// centre defines its face's class (the search never relabels it), so the misfit lies elsewhere.
fn least_certain(cost: &[[f64; 6]], read: &[bool], size: Size) -> Vec<usize> {
    let face = size.n() * size.n();
    let centre = |i: usize| size.n() % 2 == 1 && i % face == face / 2;
    let mut suspects: Vec<usize> = (0..cost.len()).filter(|&i| read[i] && !centre(i)).collect();
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

/// Each sticker's chosen face, and its margin to the cheapest other class (an unread
/// sticker: its class's mean for its reading, no margin and no runner-up).
fn sticker_verdicts(
    labs: &[[f64; 3]],
    read: &[bool],
    labels: &[usize],
    cost: &[[f64; 6]],
    classes: &[Class; 6],
    face_of_class: &[Face; 6],
) -> Vec<StickerVerdict> {
    labs.iter()
        .enumerate()
        .map(|(i, lab)| {
            let chosen = labels[i];
            if !read[i] {
                return StickerVerdict {
                    lab: classes[chosen].mean,
                    face: face_of_class[chosen],
                    margin: 0.0,
                    runner_up: None,
                    read: false,
                };
            }
            let runner = (0..6)
                .filter(|&j| j != chosen)
                .min_by(|&a, &b| cost[i][a].total_cmp(&cost[i][b]));
            StickerVerdict {
                lab: *lab,
                face: face_of_class[chosen],
                margin: runner.map_or(f64::INFINITY, |r| cost[i][r] - cost[i][chosen]),
                runner_up: runner.map(|r| face_of_class[r]),
                read: true,
            }
        })
        .collect()
}
