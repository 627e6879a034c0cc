//! The k-best search for legal cubes: every corner and edge slot filled with a distinct
//! real piece under the twist, flip and parity rules (3x3x3), or every colour scheme of a
//! 2x2x2 searched; the cheapest legal colourings within a window, and a bound on the rest.
//!
//! Level: part of `color::resolve`; depends on `cube` (slots and their stickers) and on
//! `color::search` (the k-best assignment). Must not depend on the class models or the
//! light estimate: it sees only a cost per sticker and class.

use crate::color::search::{Assignment, KBest};
use crate::cube::{
    corner_sticker, CornerSlot, EdgeSlot, Face, Size, CORNER_FACELETS, EDGE_FACELETS,
};

/// Legal cubes within the doubt window after which the search stops (the answer is in
/// doubt anyway).
const MAX_RIVALS: usize = 48;

/// A legal colouring found by the search.
#[derive(Clone, Debug)]
pub(super) struct Candidate {
    pub(super) cost: f64,
    /// Class per sticker.
    pub(super) labels: Vec<usize>,
}

/// Result of one constrained search.
pub(super) struct SearchOutcome {
    /// Legal colourings in increasing cost, all within the doubt window of the best, plus
    /// possibly the first one beyond it; each a different cube (no two group the stickers
    /// alike, see [`same_partition`]).
    pub(super) candidates: Vec<Candidate>,
    /// Every legal cube not in `candidates` costs at least this.
    pub(super) unseen_bound: f64,
    pub(super) expanded: usize,
}

/// 3x3x3: classes are faces (class j = the colour of centre j), so two different
/// colourings are always two different cubes.
pub(super) fn search3(cost: &[[f64; 6]], window: f64, budget: usize) -> SearchOutcome {
    let (corner_cost, edge_cost) = piece_costs3(cost);
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
                candidates.push(Candidate {
                    cost: t + centre_cost,
                    labels: labels3(&cs[i], &es[j]),
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

/// 3x3x3: the cost of each (slot, piece, orientation) for the corners and for the edges,
/// `[(slot * pieces + piece) * orientations + orientation]`, as [`KBest`] takes them.
fn piece_costs3(cost: &[[f64; 6]]) -> (Vec<f64>, Vec<f64>) {
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
    (corner_cost, edge_cost)
}

/// 3x3x3: the class of every sticker when the corners and edges are placed as `corners`
/// and `edges` say (centres keep their own face).
fn labels3(corners: &Assignment, edges: &Assignment) -> Vec<usize> {
    let mut labels: Vec<usize> = (0..54).map(|x| x / 9).collect();
    for (s, &(p, o)) in corners.pieces.iter().enumerate() {
        let faces = CornerSlot::ALL[p as usize].faces();
        for k in 0..3 {
            labels[CORNER_FACELETS[s][(k + o as usize) % 3]] = faces[k].index();
        }
    }
    for (s, &(p, o)) in edges.pieces.iter().enumerate() {
        let faces = EdgeSlot::ALL[p as usize].faces();
        for k in 0..2 {
            labels[EDGE_FACELETS[s][(k + o as usize) % 2]] = faces[k].index();
        }
    }
    labels
}

/// The 30 colour schemes of a 2x2x2 up to rotation: `scheme[class] = face`.
pub(super) fn schemes() -> Vec<[usize; 6]> {
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
pub(super) fn search2(cost: &[[f64; 6]], window: f64, budget: usize) -> SearchOutcome {
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
                                    cost[corner_sticker(Size::Two, s, (k + o) % 3)]
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
                    labels[corner_sticker(Size::Two, s, (k + o as usize) % 3)] =
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

/// Whether two labellings group the stickers the same way (equal up to renaming the
/// labels): then they describe the same cube.
pub(super) fn same_partition(a: &[usize], b: &[usize]) -> bool {
    let (mut ab, mut ba) = ([usize::MAX; 6], [usize::MAX; 6]);
    a.len() == b.len()
        && a.iter().zip(b).all(|(&x, &y)| {
            let ok = (ab[x] == usize::MAX || ab[x] == y) && (ba[y] == usize::MAX || ba[y] == x);
            ab[x] = y;
            ba[y] = x;
            ok
        })
}
