//! Refinement: the scan's fixed evidence (readings, white balance, profile prior) and the
//! loop that settles on a cube. The best legal cube re-fits the class models and the light,
//! which re-score the stickers, which may move the best cube, until both settle; then a
//! final search with the doubt window, restarted from any candidate that fits better
//! under its own model than the one the model was settled on.
//!
//! Unread stickers: the evidence holds which stickers were read; the costs, class fits,
//! light and hypothesis scores see those only, and with some unread a hypothesis' score
//! carries the Occam factor of its class means ([`Evidence`]'s `occam`).
//!
//! Level: part of `color::resolve`; depends on its siblings (readings, classes, light,
//! legal search, whole-class recolourings) and on `cube::Size`. Must not depend on
//! the public result types of [`super`] or on anything above `color`.

use super::classes::{fit, Class, ClassPrior};
use super::labelling::conjugates;
use super::legal::{search2, search3, SearchOutcome};
use super::light::Illumination;
use super::model::Model;
use super::readings::{lab_of_linear, linear_readings, reading_noise};
use crate::color::raw::{RawScan, Scale};
use crate::cube::Size;

/// Restarts of the refinement from a cube the final search finds to fit better under its
/// own model than the settled one.
const MAX_RESTARTS: usize = 2;
/// Extra nats searched beyond the doubt window under the shared model, for rivals that
/// their own re-fitted classes bring closer.
pub(super) const REFIT_SLACK: f64 = 8.0;

/// What the refinement reads and never changes: the readings, how they were measured,
/// the profile prior matched to the classes, and the search budget.
pub(super) struct Evidence<'a> {
    scan: &'a RawScan,
    pub(super) size: Size,
    scale: Scale,
    wb: [f64; 3],
    /// White-balanced linear RGB of every reading.
    lin: Vec<[f64; 3]>,
    /// Whether each sticker was read: an unread one carries no evidence (no cost for any
    /// class, no part in the class fits or the light).
    read: Vec<bool>,
    prior: Option<[ClassPrior; 6]>,
    node_budget: usize,
    pub(super) model: Model,
}

/// One hypothesis with the light fitted to it: a class per sticker, the light, and the
/// readings (and their noise) re-expressed under that light.
#[derive(Clone)]
pub(super) struct Settled {
    pub(super) labels: Vec<usize>,
    pub(super) illum: Illumination,
    pub(super) labs: Vec<[f64; 3]>,
    pub(super) noise: Vec<[f64; 3]>,
}

/// A hypothesis scored under its own re-fitted light and classes.
pub(super) struct OwnModel {
    /// Its total cost (nats).
    pub(super) total: f64,
    pub(super) labs: Vec<[f64; 3]>,
    pub(super) noise: Vec<[f64; 3]>,
    pub(super) classes: [Class; 6],
}

/// The final search with the doubt window and what it was run under.
pub(super) struct FinalSearch {
    pub(super) outcome: SearchOutcome,
    /// Cost per sticker and class under the settled model.
    pub(super) cost: Vec<[f64; 6]>,
    /// Each candidate's cost under its own model.
    pub(super) own: Vec<f64>,
    pub(super) settled: Settled,
}

/// What the classes' distances from a calibration profile's colours cost (0 without one).
fn prior_cost(classes: &[Class; 6]) -> f64 {
    classes.iter().map(|c| c.prior_cost).sum()
}

/// Cost of each sticker for each class.
pub(super) fn cost_of(
    labs: &[[f64; 3]],
    noise: &[[f64; 3]],
    classes: &[Class; 6],
) -> Vec<[f64; 6]> {
    labs.iter()
        .zip(noise)
        .map(|(x, e)| std::array::from_fn(|j| classes[j].cost(x, e)))
        .collect()
}

impl<'a> Evidence<'a> {
    pub(super) fn new(
        scan: &'a RawScan,
        profile: Option<&crate::color::profile::Profile>,
        wb: [f64; 3],
        prior: Option<[ClassPrior; 6]>,
        node_budget: usize,
        model: Model,
    ) -> Evidence<'a> {
        Evidence {
            scan,
            size: scan.cube_size(),
            scale: scan.effective_scale(),
            wb,
            lin: linear_readings(scan, profile).0,
            read: scan.read_mask(),
            prior,
            node_budget,
            model,
        }
    }

    /// Each reading's measurement variance in Lab, read under the light `gain(i)`.
    pub(super) fn noise_of(&self, labs: &[[f64; 3]], gain: &dyn Fn(usize) -> f64) -> Vec<[f64; 3]> {
        self.scan
            .facelets
            .iter()
            .zip(labs)
            .enumerate()
            .map(|(i, (v, lab))| {
                let own = self.scan.sigma.as_ref().and_then(|s| s.get(i).copied());
                reading_noise(*v, own, self.scale, self.wb, gain(i), lab, &self.model)
            })
            .collect()
    }

    /// Cost of each sticker for each class ([`cost_of`]), nothing for an unread sticker.
    pub(super) fn cost(
        &self,
        labs: &[[f64; 3]],
        noise: &[[f64; 3]],
        classes: &[Class; 6],
    ) -> Vec<[f64; 6]> {
        let mut cost = cost_of(labs, noise, classes);
        for (c, _) in cost.iter_mut().zip(&self.read).filter(|(_, &r)| !r) {
            *c = [0.0; 6];
        }
        cost
    }

    /// The Occam factor of the class means (nats), when some stickers are unread: each
    /// class's mean is fitted to its read stickers, and a hypothesis that gives a class
    /// fewer of them fits that mean more freely. With every sticker read each legal cube
    /// gives every class all its stickers and the factor is the same for all (so it is left
    /// out, 0); with a face unread the number of read stickers of a class differs between
    /// cubes (the unread centre's class may have none), and without the factor the profile
    /// likelihood prefers a cube that lends that class a few stickers of another colour,
    /// which its freshly fitted mean then explains closely. The factor is what integrating
    /// the mean over a broad prior costs instead of maximising over it: ½ ln(1 + n r²) per
    /// axis for a class of n read stickers, r the prior spread of a mean in units of the
    /// spread of a class's readings ([`Model::mean_spread`]), 0 for a class with none. The
    /// spread ratio is a constant, not each hypothesis' own fitted spreads: those would
    /// charge the tighter (right) grouping of close colours more and move the margins of
    /// every scan; a constant charges only the number of read stickers, which cubes alike
    /// but for the unread face share to within a sticker or two.
    fn occam(&self, labels: &[usize]) -> f64 {
        if self.read.iter().all(|&r| r) {
            return 0.0;
        }
        let r2 = self.model.mean_spread.powi(2);
        let mut n = [0.0f64; 6];
        for (&l, _) in labels.iter().zip(&self.read).filter(|(_, &r)| r) {
            n[l] += 1.0;
        }
        n.iter().map(|&n| 1.5 * (n * r2).ln_1p()).sum()
    }

    /// Cost of a labelling's read stickers under `classes`.
    fn labelled_cost(
        &self,
        labs: &[[f64; 3]],
        noise: &[[f64; 3]],
        labels: &[usize],
        classes: &[Class; 6],
    ) -> f64 {
        labs.iter()
            .zip(noise)
            .zip(labels)
            .zip(&self.read)
            .filter(|(_, &r)| r)
            .map(|(((x, e), &l), _)| classes[l].cost(x, e))
            .sum::<f64>()
    }

    /// The legal search for the cube's size.
    fn run(&self, cost: &[[f64; 6]], window: f64) -> SearchOutcome {
        match self.size {
            Size::Three => search3(cost, window, self.node_budget),
            Size::Two => search2(cost, window, self.node_budget),
        }
    }

    /// The readings re-expressed under a light estimate.
    fn relight(&self, il: &Illumination) -> (Vec<[f64; 3]>, Vec<[f64; 3]>) {
        let labs: Vec<[f64; 3]> = self
            .lin
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let g = il.gain(i);
                lab_of_linear(c.map(|v| v / g))
            })
            .collect();
        let noise = self.noise_of(&labs, &|i| il.gain(i));
        (labs, noise)
    }

    /// The six class models fitted to a labelling's read stickers.
    pub(super) fn fit(
        &self,
        labs: &[[f64; 3]],
        noise: &[[f64; 3]],
        labels: &[usize],
    ) -> [Class; 6] {
        if self.read.iter().all(|&r| r) {
            return fit(labs, noise, labels, self.prior.as_ref(), &self.model);
        }
        let keep = |i: &usize| self.read[*i];
        let idx: Vec<usize> = (0..labs.len()).filter(keep).collect();
        let labs: Vec<[f64; 3]> = idx.iter().map(|&i| labs[i]).collect();
        let noise: Vec<[f64; 3]> = idx.iter().map(|&i| noise[i]).collect();
        let labels: Vec<usize> = idx.iter().map(|&i| labels[i]).collect();
        fit(&labs, &noise, &labels, self.prior.as_ref(), &self.model)
    }

    /// Refinement: best legal cube → class models and light re-fitted to it → again, until
    /// the assignment and the light settle. Only the best is needed here. Returns the
    /// settled hypothesis and the search nodes spent.
    fn refine(&self, start: Settled) -> (Settled, usize) {
        let mut state = start;
        let mut expanded = 0;
        for _ in 0..8 {
            let Some((next, same, shift, spent)) = self.round(&state) else {
                break;
            };
            expanded += spent;
            state = next;
            if same && shift < 0.01 {
                break;
            }
        }
        (state, expanded)
    }

    /// One round of the refinement: the best legal cube under classes fitted to the
    /// current labels, and the light re-estimated from it (the readings re-expressed under
    /// even light). Returns the new state, whether the labels stayed, the largest change of
    /// a log gain and the search nodes spent; `None` when no legal cube was found.
    fn round(&self, s: &Settled) -> Option<(Settled, bool, f64, usize)> {
        let classes = self.fit(&s.labs, &s.noise, &s.labels);
        let outcome = self.run(&self.cost(&s.labs, &s.noise, &classes), 0.0);
        let best = outcome.candidates.first()?;
        let same = best.labels == s.labels;
        let labels = best.labels.clone();
        let mut illum = s.illum.clone();
        let shift = illum.estimate(&self.lin, &labels, Some(&self.read));
        let (labs, noise) = self.relight(&illum);
        let next = Settled {
            labels,
            illum,
            labs,
            noise,
        };
        Some((next, same, shift, outcome.expanded))
    }

    /// The state after the first round from first labels (under even light), the nodes
    /// spent, and whether the round found no legal cube (the state is then the start's, and
    /// refining it would repeat the same search): two starts that reach the same state
    /// settle alike.
    pub(super) fn first_round(
        &self,
        labels: Vec<usize>,
        labs: &[[f64; 3]],
    ) -> (Settled, usize, bool) {
        let labs = labs.to_vec();
        let noise = self.noise_of(&labs, &|_| 1.0);
        let start = Settled {
            labels,
            illum: Illumination::new(self.size, self.model.light_prior),
            labs,
            noise,
        };
        match self.round(&start) {
            Some((next, _, _, spent)) => (next, spent, false),
            None => (start, 0, true),
        }
    }

    /// A hypothesis under its own model: re-estimate the light and re-fit the six classes
    /// to its labels, and score it under them (a profile likelihood per hypothesis, so a
    /// rival is not judged by a model fitted to the best). (The light's gains have zero
    /// mean log, so re-expressing the readings under another hypothesis' light leaves the
    /// Jacobian term unchanged.)
    pub(super) fn own_model(&self, labels: &[usize], start: &Illumination) -> OwnModel {
        let mut il = start.clone();
        il.estimate(&self.lin, labels, Some(&self.read));
        let (labs, noise) = self.relight(&il);
        let classes = self.fit(&labs, &noise, labels);
        let total = self.labelled_cost(&labs, &noise, labels, &classes)
            + prior_cost(&classes)
            + self.occam(labels);
        OwnModel {
            total,
            labs,
            noise,
            classes,
        }
    }

    /// Cost of a labelling under its own model, the light estimated from even light until
    /// it settles (for scoring a cube named from outside, e.g. a labelled scan's).
    pub(super) fn settled_cost(&self, labels: &[usize]) -> f64 {
        let mut il = Illumination::new(self.size, self.model.light_prior);
        for _ in 0..8 {
            if il.estimate(&self.lin, labels, Some(&self.read)) < 0.01 {
                break;
            }
        }
        self.own_model(labels, &il).total
    }

    /// Cost of a labelling under classes re-fitted to it, the light held fixed (for the
    /// far, whole-class alternatives, where the light hardly depends on them).
    pub(super) fn own_fixed(&self, labels: &[usize], labs: &[[f64; 3]], noise: &[[f64; 3]]) -> f64 {
        let classes = self.fit(labs, noise, labels);
        self.labelled_cost(labs, noise, labels, &classes)
            + prior_cost(&classes)
            + self.occam(labels)
    }

    /// Settles on a cube from a first state ([`Self::first_round`]): refines, then
    /// (3x3x3) checks the whole-class recolourings. The refinement can settle on the right
    /// pieces with the wrong colour for whole classes (two faded colours swapped everywhere
    /// but on their centres, which a heavy-tailed class then treats as outliers). Those
    /// alternatives are the cube's own colours permuted by a whole-cube rotation, centres
    /// kept: each legal one is scored under its own model and the refinement restarts from
    /// the best if it wins. `stuck`: the first round found no legal cube from `start`, so
    /// the refinement is skipped (it would repeat that search and stop where it starts).
    pub(super) fn settle(&self, start: Settled, stuck: bool) -> (Settled, usize) {
        let (mut settled, mut expanded) = if stuck {
            (start, 0)
        } else {
            self.refine(start)
        };
        if self.size == Size::Three {
            let base = self.own_fixed(&settled.labels, &settled.labs, &settled.noise);
            let better = conjugates(&settled.labels)
                .into_iter()
                .map(|l| (self.own_fixed(&l, &settled.labs, &settled.noise), l))
                .filter(|(c, _)| *c < base)
                .min_by(|a, b| a.0.total_cmp(&b.0));
            if let Some((_, l)) = better {
                let restart = Settled {
                    labels: l,
                    ..settled.clone()
                };
                let (s2, e2) = self.refine(restart);
                settled = s2;
                expanded += e2;
            }
        }
        (settled, expanded)
    }

    /// The final search, with the doubt window, under the settled model. When another
    /// cube it finds fits better under its own model than the one the model was settled
    /// on, the refinement had stopped at a local optimum: it restarts from that cube, so
    /// that the final search (and its bound on the cubes it did not reach) is made under
    /// the model of the cube that is returned. Returns the search and the nodes spent.
    pub(super) fn final_search(&self, mut settled: Settled, window: f64) -> (FinalSearch, usize) {
        let mut expanded = 0;
        let mut restarts = 0;
        loop {
            let classes = self.fit(&settled.labs, &settled.noise, &settled.labels);
            let cost = self.cost(&settled.labs, &settled.noise, &classes);
            let outcome = self.run(&cost, window + REFIT_SLACK);
            expanded += outcome.expanded;
            let own: Vec<f64> = outcome
                .candidates
                .iter()
                .map(|c| self.own_model(&c.labels, &settled.illum).total)
                .collect();
            if restarts < MAX_RESTARTS && own.len() > 1 {
                let k = (0..own.len())
                    .min_by(|&a, &b| own[a].total_cmp(&own[b]))
                    .expect("non-empty");
                if k != 0 && own[k] < own[0] {
                    let restart = Settled {
                        labels: outcome.candidates[k].labels.clone(),
                        ..settled.clone()
                    };
                    let (s2, e2) = self.refine(restart);
                    settled = s2;
                    expanded += e2;
                    restarts += 1;
                    continue;
                }
            }
            let search = FinalSearch {
                outcome,
                cost,
                own,
                settled,
            };
            return (search, expanded);
        }
    }
}
