//! Doubt: how far the closest rival legal cube is from the best, each scored under its own
//! re-fitted model, and which stickers are in doubt. The rivals are the other cubes the
//! final search found and, on a 3x3x3, the best's whole-class recolourings by a cube
//! rotation (centres kept). When the closest rival was only bounded, not reached, the
//! least certain stickers are named instead.
//!
//! Level: part of `color::resolve`; depends on `cube`, the refinement's evidence and the
//! labellings. Must not depend on anything above `color`.

use super::labelling::{conjugates, cube_of};
use super::legal::{same_partition, Candidate};
use super::refine::{Evidence, REFIT_SLACK};
use super::StickerVerdict;
use crate::cube::{FaceletCube, Size};

/// How many of the least certain stickers a doubt names when no rival cube was reached
/// to say where it differs.
const UNSURE_NAMED: usize = 6;

/// The verdict on the best cube against its rivals.
pub(super) struct Doubt {
    /// Cost of the closest rival minus the best's (nats), or a lower bound on it.
    pub(super) cube_margin: f64,
    /// Whether the rival was reached (else `cube_margin` is a bound).
    pub(super) rival_exact: bool,
    pub(super) rival: Option<FaceletCube>,
    /// The log of the odds that the best is the scanned cube against all its rivals
    /// together (calibrated nats: minus the log of the summed calibrated likelihood ratios
    /// of every rival found to the best, and of one more at the bound on those not found).
    pub(super) log_odds: f64,
    /// Facelet indices in doubt, sorted: where any of the `close_rivals` differs from
    /// the best, or (none reached) the least certain stickers.
    pub(super) doubtful: Vec<usize>,
    /// The distinct rival cubes within the doubt window, closest first.
    pub(super) close_rivals: Vec<FaceletCube>,
    pub(super) confident: bool,
}

/// Puts the stickers where `rival`, `margin` nats behind the best, differs from `best` in
/// doubt, and counts the rival once among `close` (a cube reached twice, by two routes,
/// is one rival, at the smaller margin).
fn note_close(
    margin: f64,
    rival: &[usize],
    best: &[usize],
    close: &mut Vec<(f64, Vec<usize>)>,
    doubtful: &mut Vec<usize>,
) {
    if rival == best {
        return;
    }
    if let Some(c) = close.iter_mut().find(|c| c.1 == rival) {
        c.0 = c.0.min(margin);
        return;
    }
    close.push((margin, rival.to_vec()));
    for (i, (a, b)) in rival.iter().zip(best).enumerate() {
        if a != b && !doubtful.contains(&i) {
            doubtful.push(i);
        }
    }
}

/// Everything the doubt test reads about the best cube.
pub(super) struct Best<'r> {
    /// Every candidate with its cost under its own model.
    pub(super) rescored: &'r [(f64, &'r Candidate)],
    pub(super) index: usize,
    /// The best's readings and noise under its own model.
    pub(super) labs: &'r [[f64; 3]],
    pub(super) noise: &'r [[f64; 3]],
    pub(super) stickers: &'r [StickerVerdict],
    /// The search's bound on the cubes it did not reach, and its cheapest candidate.
    pub(super) unseen_bound: f64,
    pub(super) first_cost: f64,
    /// The cubes the other first estimates settled on, each with its cost under its own
    /// model.
    pub(super) alternatives: &'r [(f64, Vec<usize>)],
}

/// Weighs the best against its rivals within the doubt window `window` (in the model's
/// nats; `temperature` calibrates them for the odds).
pub(super) fn weigh(evidence: &Evidence, best: &Best, window: f64, temperature: f64) -> Doubt {
    let (best_own, best_labels) = (
        best.rescored[best.index].0,
        &best.rescored[best.index].1.labels,
    );
    let mut close: Vec<(f64, Vec<usize>)> = Vec::new();
    let mut doubt = rival_among_candidates(evidence.size, best, best_own, window, &mut close);
    let mut doubtful = std::mem::take(&mut doubt.doubtful);
    // Every rival's likelihood relative to the best: the other candidates, one more at the
    // bound on the cubes not reached, and the recolourings below.
    let mut gaps: Vec<f64> = best
        .rescored
        .iter()
        .enumerate()
        .filter(|&(k, _)| k != best.index)
        .map(|(_, r)| (r.0 - best_own).max(0.0))
        .collect();
    gaps.push((best.unseen_bound - best.first_cost - REFIT_SLACK).max(0.0));
    // The whole-class recolourings of the best are rivals too.
    if evidence.size == Size::Three {
        let base = evidence.own_fixed(best_labels, best.labs, best.noise);
        let recoloured: Vec<(f64, Vec<usize>)> = conjugates(best_labels)
            .into_iter()
            .map(|l| (evidence.own_fixed(&l, best.labs, best.noise) - base, l))
            .collect();
        gaps.extend(recoloured.iter().map(|r| r.0.max(0.0)));
        let closest = recoloured.into_iter().min_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((m, l)) = closest {
            if m < doubt.cube_margin {
                doubt.cube_margin = m.max(0.0);
                doubt.rival_exact = true;
                doubt.rival = cube_of(evidence.size, &l).map(|(c, _)| c);
            }
            if m < window {
                note_close(m.max(0.0), &l, best_labels, &mut close, &mut doubtful);
            }
        }
    }
    // The other starts' cubes.
    for (own, l) in best.alternatives {
        if same_partition(l, best_labels) {
            continue;
        }
        let m = (own - best_own).max(0.0);
        gaps.push(m);
        if m < doubt.cube_margin {
            doubt.cube_margin = m;
            doubt.rival_exact = true;
            doubt.rival = cube_of(evidence.size, l).map(|(c, _)| c);
        }
        if m < window {
            note_close(m, l, best_labels, &mut close, &mut doubtful);
        }
    }
    doubt.log_odds = -log_sum_exp_neg(&gaps.iter().map(|g| g / temperature).collect::<Vec<_>>());
    doubt.confident = doubt.cube_margin >= window;
    if !doubt.confident && doubtful.is_empty() {
        // The closest rival was only bounded (not reached by the search), so no cube says
        // where it would differ: name the least certain stickers instead.
        let stickers = best.stickers;
        let mut order: Vec<usize> = (0..stickers.len()).filter(|&i| stickers[i].read).collect();
        order.sort_by(|&a, &b| stickers[a].margin.total_cmp(&stickers[b].margin));
        doubtful.extend(order.into_iter().take(UNSURE_NAMED));
    }
    doubtful.sort_unstable();
    doubt.doubtful = doubtful;
    // Closest first: the first is the closest rival (`rival`) when it is within the window.
    close.sort_by(|a, b| a.0.total_cmp(&b.0));
    doubt.close_rivals = close
        .iter()
        .filter_map(|(_, l)| cube_of(evidence.size, l).map(|(c, _)| c))
        .collect();
    doubt
}

/// The closest rival among the searched candidates, under its own model; candidates
/// beyond the search are bounded by the shared model's bound (a re-fit can only lower a
/// hypothesis' cost by what its own classes gain, which the bound does not see; the
/// search window is widened for that). (The candidates are distinct cubes: a renaming of
/// the best's colour groups, which would score the same under its own model, is not among
/// them.) The stickers where a candidate within the window differs from the best are in
/// doubt.
fn rival_among_candidates(
    size: Size,
    best: &Best,
    best_own: f64,
    window: f64,
    close: &mut Vec<(f64, Vec<usize>)>,
) -> Doubt {
    let rescored = best.rescored;
    let best_labels = &rescored[best.index].1.labels;
    let rival = (0..rescored.len())
        .filter(|&k| k != best.index)
        .min_by(|&a, &b| rescored[a].0.total_cmp(&rescored[b].0));
    let unseen_margin = (best.unseen_bound - best.first_cost - REFIT_SLACK).max(0.0);
    let (cube_margin, rival_exact, rival_cube) = match rival {
        Some(k) if rescored[k].0 - best_own <= unseen_margin => {
            (rescored[k].0 - best_own, true, Some(rescored[k].1))
        }
        Some(k) => (unseen_margin, false, Some(rescored[k].1)),
        None => (unseen_margin, false, None),
    };
    let mut doubtful: Vec<usize> = Vec::new();
    for (own, c) in rescored {
        if *own - best_own < window {
            note_close(
                (*own - best_own).max(0.0),
                &c.labels,
                best_labels,
                close,
                &mut doubtful,
            );
        }
    }
    Doubt {
        cube_margin,
        rival_exact,
        rival: rival_cube.and_then(|r| cube_of(size, &r.labels).map(|(c, _)| c)),
        doubtful,
        close_rivals: Vec::new(),
        log_odds: cube_margin,
        confident: false,
    }
}

/// `ln Σ e^(-g)` over the gaps, computed from the smallest (∞ when there are none).
fn log_sum_exp_neg(gaps: &[f64]) -> f64 {
    let Some(min) = gaps.iter().copied().min_by(f64::total_cmp) else {
        return f64::NEG_INFINITY;
    };
    let sum: f64 = gaps.iter().map(|g| (min - g).exp()).sum();
    -min + sum.ln()
}
