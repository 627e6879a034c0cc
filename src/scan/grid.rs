//! Fitting the n x n sticker grid to candidate sticker quadrilaterals.
//!
//! Candidates (from any detector) are grouped by size; for a seed candidate the lattice
//! axes come from the group's edge directions and the pitch from nearest-neighbour
//! distances. Every candidate that falls on a lattice node is assigned integer lattice
//! coordinates, the assignment is refined with a least-squares affine map and then a
//! homography (perspective), and the n x n window holding the most candidates is kept.
//! When several windows hold as many (a row or column wholly hidden), `cell_score` breaks
//! the tie by how sticker-like the unsupported cells look. Cells without a candidate are
//! recovered from the fitted grid.
//!
//! *Strips* (a sticker partly hidden by something straight lying across it, such as a robot
//! arm) support cells too. A strip keeps the sticker's full width and one of its true edges,
//! so it is completed to the two squares it can be part of ([`completions`]); a completion
//! may take a lattice node that no whole sticker takes, at most one per strip. This is what
//! lets a 2x2x2 face with one row under an arm (two whole stickers and two strips) be found.
//!
//! Level: part of `scan` (pure Rust); depends on `scan::geom`. Must not depend on images,
//! OpenCV or anything above `scan`.

use super::geom::{dist, Homography, Pt, Quad};

/// One candidate sticker.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub quad: Quad,
    pub centre: Pt,
    /// Square root of the area (pixels).
    pub side: f64,
    /// Edge direction in radians, folded into `(-pi/4, pi/4]`.
    pub angle: f64,
}

/// A fitted grid.
#[derive(Clone, Debug)]
pub struct GridFit {
    /// Grid coordinates (`[0, n]^2`, x right, y down) to image pixels.
    pub h: Homography,
    /// Per cell (row-major), the candidate that supports it.
    pub support: Vec<Option<usize>>,
    /// Sticker side as a share of the pitch (from the supporting candidates).
    pub fill: f64,
    /// Per cell (row-major), the strip (index into the strips given) that supports it: a
    /// sticker seen only in part, the rest hidden.
    pub strip: Vec<Option<usize>>,
    /// RMS distance of supporting centres from their cells, in pitches.
    pub residual: f64,
}

impl GridFit {
    /// Whether a whole sticker or a strip supports cell `i`.
    pub fn supported_cell(&self, i: usize) -> bool {
        self.support[i].is_some() || self.strip[i].is_some()
    }

    /// Cells supported by a whole sticker or a strip.
    pub fn supported(&self) -> usize {
        (0..self.support.len())
            .filter(|&i| self.supported_cell(i))
            .count()
    }
}

/// The two squares a strip can be the visible part of: it keeps its long side (the
/// sticker's width) and one of its long edges, and the hidden part lies beyond the other.
pub fn completions(strip: &Candidate) -> [Candidate; 2] {
    let q = &strip.quad;
    let a = [q[1][0] - q[0][0], q[1][1] - q[0][1]];
    let b = [q[2][0] - q[1][0], q[2][1] - q[1][1]];
    let (la, lb) = (a[0].hypot(a[1]), b[0].hypot(b[1]));
    // u along the long side, v across; lengths grown by the pixel dilated edges take off.
    let (u, lu, v, lv) = if la >= lb {
        (a, la, b, lb)
    } else {
        (b, lb, a, la)
    };
    let (long, short) = (lu + 2.0, lv + 2.0);
    let u = [u[0] / lu.max(1e-9), u[1] / lu.max(1e-9)];
    let v = [v[0] / lv.max(1e-9), v[1] / lv.max(1e-9)];
    let shift = (long - short).max(0.0) / 2.0;
    [1.0, -1.0].map(|sign| {
        let c = [
            strip.centre[0] + sign * shift * v[0],
            strip.centre[1] + sign * shift * v[1],
        ];
        let h = long / 2.0;
        let quad = [
            [c[0] - h * u[0] - h * v[0], c[1] - h * u[1] - h * v[1]],
            [c[0] + h * u[0] - h * v[0], c[1] + h * u[1] - h * v[1]],
            [c[0] + h * u[0] + h * v[0], c[1] + h * u[1] + h * v[1]],
            [c[0] - h * u[0] + h * v[0], c[1] - h * u[1] + h * v[1]],
        ];
        Candidate {
            quad,
            centre: c,
            side: long,
            angle: fold_angle(u[1].atan2(u[0])),
        }
    })
}

/// The minimum number of supporting candidates for a face to count as found.
pub fn min_support(n: usize) -> usize {
    if n >= 3 {
        4
    } else {
        3
    }
}

/// Folds an angle (radians) into `(-pi/4, pi/4]`.
pub fn fold_angle(a: f64) -> f64 {
    let q = std::f64::consts::FRAC_PI_2;
    let mut x = a % q;
    if x > q / 2.0 {
        x -= q;
    } else if x <= -q / 2.0 {
        x += q;
    }
    x
}

struct Hyp {
    fit: GridFit,
    /// Cells supported, of them by whole stickers, how sticker-like the n x n cells look
    /// (the sum of `cell_score`), residual.
    score: (usize, usize, f64, f64),
}

impl Hyp {
    /// More support wins, then more whole stickers; between lattices equal in both (a
    /// cube's stickers, or the holes of a LEGO beam beside it), the cells that look more
    /// like stickers on dark plastic, unless the two look alike: then the better fit.
    fn beats(&self, other: &Hyp) -> bool {
        let (a, b) = (self.score, other.score);
        if a.0 != b.0 {
            return a.0 > b.0;
        }
        if (a.2 - b.2).abs() > 0.5 {
            return a.2 > b.2;
        }
        if a.1 != b.1 {
            return a.1 > b.1;
        }
        a.3 < b.3
    }
}

/// Whole stickers and strip completions in one list: `origin[i]` is the strip a completion
/// came from (`None` for a whole sticker).
struct Pool {
    all: Vec<Candidate>,
    origin: Vec<Option<usize>>,
    /// Whole-sticker regions clearly longer than wide.
    oblong: Vec<bool>,
    whole: usize,
}

/// A region whose long side exceeds its short side by more than this is *oblong*: a
/// sticker seen at a slant, or one partly under an arm. It is offered both as a whole
/// sticker and as a strip, and the lattice decides (the nearer to a node wins).
pub const OBLONG: f64 = 1.2;

/// Long side over short side of a quadrilateral.
fn aspect(q: &Quad) -> f64 {
    let e = dist(q[0], q[1]) + dist(q[2], q[3]);
    let f = dist(q[1], q[2]) + dist(q[3], q[0]);
    e.max(f) / e.min(f).max(1e-9)
}

/// Fits the grid to whole-sticker candidates and strips (stickers partly hidden); `None`
/// when no lattice holds at least [`min_support`] cells, two of them whole stickers.
pub fn fit_grid(
    cands: &[Candidate],
    strips: &[Candidate],
    n: usize,
    cell_score: &dyn Fn(&Homography, usize, usize) -> f64,
) -> Option<GridFit> {
    if cands.len() < 2 || cands.len() + strips.len() < min_support(n) {
        return None;
    }
    let mut pool = Pool {
        all: cands.to_vec(),
        origin: vec![None; cands.len()],
        oblong: cands.iter().map(|c| aspect(&c.quad) > OBLONG).collect(),
        whole: cands.len(),
    };
    for (k, s) in strips.iter().enumerate() {
        for c in completions(s) {
            pool.all.push(c);
            pool.origin.push(Some(k));
            pool.oblong.push(false);
        }
    }
    // Seeds: whole stickers with the most similar-sized neighbours (a strip counted once).
    let mut order: Vec<(usize, usize)> = (0..cands.len())
        .map(|i| {
            let s = cands[i].side;
            let near = |c: &Candidate| {
                c.side > 0.75 * s && c.side < 1.33 * s && dist(c.centre, cands[i].centre) < 4.0 * s
            };
            let k = cands.iter().filter(|c| near(c)).count()
                + strips
                    .iter()
                    .filter(|t| completions(t).iter().any(near))
                    .count();
            (k, i)
        })
        .collect();
    order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut best: Option<Hyp> = None;
    // A candidate already on a tried lattice would only find that lattice again.
    let mut tried = vec![false; cands.len()];
    let mut attempts = 0;
    for &(k, seed) in order.iter() {
        if k < min_support(n) || attempts >= 64 {
            break;
        }
        if tried[seed] {
            continue;
        }
        if let Some(best) = &best {
            if best.score.0 > k.min(n * n) {
                // No seed with fewer similar neighbours can beat this.
                break;
            }
        }
        attempts += 1;
        tried[seed] = true;
        if let Some(h) = hypothesis(&pool, n, seed, cell_score) {
            for i in h.fit.support.iter().flatten() {
                tried[*i] = true;
            }
            if best.as_ref().is_none_or(|b| h.beats(b)) {
                best = Some(h);
            }
        }
    }
    best.map(|h| h.fit)
}

fn hypothesis(
    pool: &Pool,
    n: usize,
    seed: usize,
    cell_score: &dyn Fn(&Homography, usize, usize) -> f64,
) -> Option<Hyp> {
    let cands = &pool.all;
    let s0 = &cands[seed];
    let group: Vec<usize> = (0..cands.len())
        .filter(|&i| {
            let c = &cands[i];
            c.side > 0.7 * s0.side
                && c.side < 1.43 * s0.side
                && dist(c.centre, s0.centre) < 1.6 * n as f64 * s0.side * 1.5
        })
        .collect();
    // Axis: the seed's angle refined by the group's whole stickers (relative, folded).
    let mut rel: Vec<f64> = group
        .iter()
        .filter(|&&i| i < pool.whole)
        .map(|&i| fold_angle(cands[i].angle - s0.angle))
        .collect();
    rel.sort_by(f64::total_cmp);
    let theta = fold_angle(s0.angle + rel[rel.len() / 2]);
    // Pitch: nearest similar neighbour of each whole sticker in the group (completions
    // come in pairs whose spacing is not a pitch).
    let mut nn: Vec<f64> = group
        .iter()
        .filter(|&&i| i < pool.whole)
        .filter_map(|&i| nearest_whole(pool, &group, i))
        .collect();
    if nn.is_empty() {
        return None;
    }
    nn.sort_by(f64::total_cmp);
    // The group's typical spacing, and the seed's own when it differs (the group may hold
    // a regular pattern of similar size nearby, such as a beam's windows).
    let mut pitches = vec![nn[nn.len() / 2]];
    if let Some(own) = nearest_whole(pool, &group, seed) {
        if (own / pitches[0] - 1.0).abs() > 0.15 {
            pitches.push(own);
        }
    }
    let mut best: Option<Hyp> = None;
    for pitch in pitches {
        if let Some(h) = lattice(pool, n, seed, &group, theta, pitch, cell_score) {
            if best.as_ref().is_none_or(|b| h.beats(b)) {
                best = Some(h);
            }
        }
    }
    best
}

/// Distance from candidate `i` to the nearest whole sticker of `group` at a plausible
/// pitch for its size (0.7–2.2 sides).
fn nearest_whole(pool: &Pool, group: &[usize], i: usize) -> Option<f64> {
    let c = &pool.all[i];
    group
        .iter()
        .filter(|&&j| j != i && j < pool.whole)
        .map(|&j| dist(c.centre, pool.all[j].centre))
        .filter(|&d| d > 0.7 * c.side && d < 2.2 * c.side)
        .min_by(f64::total_cmp)
}

/// A candidate placed on a lattice node: (node, candidate index, distance to the node in
/// lattice units).
type Cell = ((i64, i64), usize, f64);

/// Assigns the group to a lattice with axis `theta` and `pitch` through the seed, keeps the
/// best n x n window and refines the map (see [`fit_grid`]).
fn lattice(
    pool: &Pool,
    n: usize,
    seed: usize,
    group: &[usize],
    theta: f64,
    pitch: f64,
    cell_score: &dyn Fn(&Homography, usize, usize) -> f64,
) -> Option<Hyp> {
    let s0 = &pool.all[seed];
    let ex = [theta.cos() * pitch, theta.sin() * pitch];
    let ey = [-theta.sin() * pitch, theta.cos() * pitch];
    // Lattice coordinates relative to the seed (seed at (0.5, 0.5) of its own cell).
    let mut map = Homography::affine(
        [
            s0.centre[0] - 0.5 * ex[0] - 0.5 * ey[0],
            s0.centre[1] - 0.5 * ex[1] - 0.5 * ey[1],
        ],
        ex,
        ey,
    );
    let mut assigned: Vec<Cell> = Vec::new();
    for pass in 0..4 {
        let inv = map.inverse()?;
        let tol = if pass == 0 { 0.3 } else { 0.25 };
        let mut cells = snap_to_lattice(pool, group, &inv, tol, n as i64 - 1);
        one_completion_per_strip(pool, &mut cells);
        // Keep only the best n x n window of lattice nodes.
        let window = best_window(&cells, pool.whole, n, &map, cell_score)?;
        cells.retain(|c| in_window(c.0, window, n));
        if let Some(h) = refit(pool, &cells, pass, pitch) {
            map = h;
        }
        // Shift so that the window starts at lattice (0, 0).
        let shift = Homography::affine([window.0 as f64, window.1 as f64], [1.0, 0.0], [0.0, 1.0]);
        if pass == 3 {
            map = map.compose(&shift);
            for c in cells.iter_mut() {
                c.0 = (c.0 .0 - window.0, c.0 .1 - window.1);
            }
            assigned = cells;
        }
    }
    grid_hypothesis(pool, n, map, &assigned, cell_score)
}

/// Each candidate of the group near a lattice node (within `tol`, at most `2·span` nodes
/// from the seed), one per node: a whole sticker before a completion, then the nearer.
fn snap_to_lattice(
    pool: &Pool,
    group: &[usize],
    inv: &Homography,
    tol: f64,
    span: i64,
) -> Vec<Cell> {
    let cands = &pool.all;
    let mut cells: Vec<Cell> = Vec::new();
    for &i in group {
        let g = match inv.apply(cands[i].centre) {
            Some(g) => g,
            None => continue,
        };
        let (gx, gy) = (g[0] - 0.5, g[1] - 0.5);
        let (ix, iy) = (gx.round(), gy.round());
        let r = ((gx - ix).powi(2) + (gy - iy).powi(2)).sqrt();
        if r > tol || (ix as i64).abs() > span * 2 || (iy as i64).abs() > span * 2 {
            continue;
        }
        let key = (ix as i64, iy as i64);
        // A whole sticker before a completion, then the nearer; an oblong region
        // (perhaps a sticker cut by an arm) competes with completions on distance.
        let rank = |j: usize, r: f64| (pool.origin[j].is_some() || pool.oblong[j], r);
        match cells.iter_mut().find(|c| c.0 == key) {
            Some(c) if rank(c.1, c.2) <= rank(i, r) => {}
            Some(c) => *c = (key, i, r),
            None => cells.push((key, i, r)),
        }
    }
    cells
}

/// At most one completion per strip: the nearer.
fn one_completion_per_strip(pool: &Pool, cells: &mut Vec<Cell>) {
    let mut k = 0;
    while k < cells.len() {
        let (i, r) = (cells[k].1, cells[k].2);
        let clash = pool.origin[i].is_some()
            && cells
                .iter()
                .any(|c| c.1 != i && pool.origin[c.1] == pool.origin[i] && (c.2, c.1) < (r, i));
        if clash {
            cells.remove(k);
        } else {
            k += 1;
        }
    }
}

/// The lattice map re-fitted to the window's cells (a homography from the second pass on,
/// when the cells spread in two dimensions and it is sane; else affine). The map is fitted
/// to whole stickers when they span both axes; a completion's centre is only as good as
/// the straight edge the strip was cut by. Oblong regions (perhaps cut) are left out too
/// when the rest suffice.
fn refit(pool: &Pool, cells: &[Cell], pass: usize, pitch: f64) -> Option<Homography> {
    let square: Vec<_> = cells
        .iter()
        .filter(|c| c.1 < pool.whole && !pool.oblong[c.1])
        .cloned()
        .collect();
    let whole: Vec<_> = cells.iter().filter(|c| c.1 < pool.whole).cloned().collect();
    let fit_cells: &[Cell] = [&square, &whole]
        .into_iter()
        .find(|f| f.len() >= 3 && spans_2d(f))
        .map_or(cells, |f| f.as_slice());
    let src: Vec<Pt> = fit_cells
        .iter()
        .map(|c| [c.0 .0 as f64 + 0.5, c.0 .1 as f64 + 0.5])
        .collect();
    let dst: Vec<Pt> = fit_cells.iter().map(|c| pool.all[c.1].centre).collect();
    if pass >= 1 && spread_2d(fit_cells) {
        Homography::fit(&src, &dst).filter(|h| sane(h, &src, &dst, pitch))
    } else {
        None
    }
    .or_else(|| fit_affine(&src, &dst))
}

/// The grid hypothesis of the final assignment: which candidate supports each cell, the
/// sticker fill, the fit residual, and its score; `None` when too few cells are supported.
fn grid_hypothesis(
    pool: &Pool,
    n: usize,
    map: Homography,
    assigned: &[Cell],
    cell_score: &dyn Fn(&Homography, usize, usize) -> f64,
) -> Option<Hyp> {
    let whole = assigned.iter().filter(|c| c.1 < pool.whole).count();
    if assigned.len() < min_support(n) || whole < 2 {
        return None;
    }
    let mut support = vec![None; n * n];
    let mut strip = vec![None; n * n];
    let mut sq = 0.0;
    for c in assigned {
        let cell = c.0 .1 as usize * n + c.0 .0 as usize;
        match pool.origin[c.1] {
            None => support[cell] = Some(c.1),
            Some(k) => strip[cell] = Some(k),
        }
        sq += c.2 * c.2;
    }
    let mut fills: Vec<f64> = assigned
        .iter()
        .filter(|c| c.1 < pool.whole)
        .map(|c| pool.all[c.1].side / local_pitch(&map, c.0))
        .collect();
    fills.sort_by(f64::total_cmp);
    let fill = fills[fills.len() / 2].clamp(0.5, 0.98);
    let residual = (sq / assigned.len() as f64).sqrt();
    let mut look = 0.0;
    for r in 0..n {
        for c in 0..n {
            look += cell_score(&map, r, c);
        }
    }
    Some(Hyp {
        score: (assigned.len(), whole, look, residual),
        fit: GridFit {
            h: map,
            support,
            strip,
            fill,
            residual,
        },
    })
}

fn local_pitch(h: &Homography, cell: (i64, i64)) -> f64 {
    let c = [cell.0 as f64 + 0.5, cell.1 as f64 + 0.5];
    let a = h.apply([c[0] - 0.5, c[1]]);
    let b = h.apply([c[0] + 0.5, c[1]]);
    let u = h.apply([c[0], c[1] - 0.5]);
    let d = h.apply([c[0], c[1] + 0.5]);
    match (a, b, u, d) {
        (Some(a), Some(b), Some(u), Some(d)) => ((dist(a, b) * dist(u, d)).sqrt()).max(1e-6),
        _ => 1.0,
    }
}

fn in_window(c: (i64, i64), w: (i64, i64), n: usize) -> bool {
    let n = n as i64;
    c.0 >= w.0 && c.0 < w.0 + n && c.1 >= w.1 && c.1 < w.1 + n
}

/// The n x n window of lattice nodes with the most supported cells, then the most whole
/// stickers (`cells[..].1 < whole`), then the most sticker-like empty cells.
fn best_window(
    cells: &[((i64, i64), usize, f64)],
    whole: usize,
    n: usize,
    map: &Homography,
    cell_score: &dyn Fn(&Homography, usize, usize) -> f64,
) -> Option<(i64, i64)> {
    if cells.is_empty() {
        return None;
    }
    let span = n as i64 - 1;
    let xs = cells.iter().map(|c| c.0 .0);
    let ys = cells.iter().map(|c| c.0 .1);
    let (xmin, xmax) = (xs.clone().min()?, xs.max()?);
    let (ymin, ymax) = (ys.clone().min()?, ys.max()?);
    let mut best: Option<((i64, i64), (usize, usize))> = None;
    let mut ties: Vec<(i64, i64)> = Vec::new();
    for wx in (xmin - span)..=xmax {
        for wy in (ymin - span)..=ymax {
            let inside = cells.iter().filter(|c| in_window(c.0, (wx, wy), n));
            let k = (
                inside.clone().count(),
                inside.filter(|c| c.1 < whole).count(),
            );
            match best {
                Some((_, bk)) if bk > k => {}
                Some((_, bk)) if bk == k => ties.push((wx, wy)),
                _ => {
                    best = Some(((wx, wy), k));
                    ties = vec![(wx, wy)];
                }
            }
        }
    }
    if ties.len() <= 1 {
        return best.map(|b| b.0);
    }
    // Several windows hold as many candidates: prefer the one whose empty cells look most
    // like stickers.
    ties.into_iter()
        .map(|w| {
            let shifted = map.compose(&Homography::affine(
                [w.0 as f64, w.1 as f64],
                [1.0, 0.0],
                [0.0, 1.0],
            ));
            let mut s = 0.0;
            for r in 0..n {
                for c in 0..n {
                    let key = (w.0 + c as i64, w.1 + r as i64);
                    if !cells.iter().any(|x| x.0 == key) {
                        s += cell_score(&shifted, r, c);
                    }
                }
            }
            (w, s)
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|x| x.0)
}

/// Whether the supporting cells pin down a perspective map: at least five, covering every
/// row and every column of the window (with fewer, extrapolating perspective to a hidden
/// row amplifies noise, and the affine map is the safer model).
fn spread_2d(cells: &[Cell]) -> bool {
    cells.len() >= 5 && spans_2d(cells)
}

/// Whether the cells cover at least two rows and two columns.
fn spans_2d(cells: &[Cell]) -> bool {
    let mut xs: Vec<i64> = cells.iter().map(|c| c.0 .0).collect();
    let mut ys: Vec<i64> = cells.iter().map(|c| c.0 .1).collect();
    xs.sort();
    xs.dedup();
    ys.sort();
    ys.dedup();
    xs.len() >= 2 && ys.len() >= 2
}

/// A homography is kept only if it reproduces the centres and keeps cells convex and of a
/// plausible size.
fn sane(h: &Homography, src: &[Pt], dst: &[Pt], pitch: f64) -> bool {
    for (s, d) in src.iter().zip(dst) {
        match h.apply(*s) {
            Some(p) if dist(p, *d) < 0.3 * pitch => {}
            _ => return false,
        }
    }
    let xs = src.iter().map(|p| p[0]);
    let ys = src.iter().map(|p| p[1]);
    let (x0, x1) = (
        xs.clone().fold(f64::MAX, f64::min),
        xs.fold(f64::MIN, f64::max),
    );
    let (y0, y1) = (
        ys.clone().fold(f64::MAX, f64::min),
        ys.fold(f64::MIN, f64::max),
    );
    for gx in [x0 - 2.5, x1 + 2.5] {
        for gy in [y0 - 2.5, y1 + 2.5] {
            let p = [gx, gy];
            let a = h.apply(p);
            let b = h.apply([gx + 1.0, gy]);
            let c = h.apply([gx, gy + 1.0]);
            match (a, b, c) {
                (Some(a), Some(b), Some(c)) => {
                    let (da, db) = (dist(a, b), dist(a, c));
                    if !(da > 0.4 * pitch
                        && da < 2.5 * pitch
                        && db > 0.4 * pitch
                        && db < 2.5 * pitch)
                    {
                        return false;
                    }
                }
                _ => return false,
            }
        }
    }
    true
}

/// Least-squares affine map (at least 3 points not all on one line), else a translation
/// of the current pitch is not possible and `None` is returned.
fn fit_affine(src: &[Pt], dst: &[Pt]) -> Option<Homography> {
    if src.len() < 3 {
        return None;
    }
    // Solve [x y 1] * M = [u v] via normal equations (3x3).
    let mut ata = [[0.0f64; 3]; 3];
    let mut atu = [0.0f64; 3];
    let mut atv = [0.0f64; 3];
    for (s, d) in src.iter().zip(dst) {
        let a = [s[0], s[1], 1.0];
        for i in 0..3 {
            atu[i] += a[i] * d[0];
            atv[i] += a[i] * d[1];
            for j in 0..3 {
                ata[i][j] += a[i] * a[j];
            }
        }
    }
    let inv = inv3(&ata)?;
    let mu: Vec<f64> = (0..3)
        .map(|i| (0..3).map(|j| inv[i][j] * atu[j]).sum())
        .collect();
    let mv: Vec<f64> = (0..3)
        .map(|i| (0..3).map(|j| inv[i][j] * atv[j]).sum())
        .collect();
    let h = Homography {
        h: [mu[0], mu[1], mu[2], mv[0], mv[1], mv[2], 0.0, 0.0, 1.0],
    };
    h.inverse().map(|_| h)
}

#[allow(clippy::needless_range_loop)] // index arithmetic mirrors the maths
fn inv3(m: &[[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    let det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
        - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    if det.abs() < 1e-9 {
        return None;
    }
    let mut r = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            let (a, b) = ((j + 1) % 3, (j + 2) % 3);
            let (c, d) = ((i + 1) % 3, (i + 2) % 3);
            r[i][j] = (m[a][c] * m[b][d] - m[a][d] * m[b][c]) / det;
        }
    }
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::geom::{cell_quad, map_quad};

    fn cand(h: &Homography, r: usize, c: usize) -> Candidate {
        let q = map_quad(h, &cell_quad(r, c, 0.85)).unwrap();
        let centre = h.apply([c as f64 + 0.5, r as f64 + 0.5]).unwrap();
        let e = [q[1][0] - q[0][0], q[1][1] - q[0][1]];
        Candidate {
            quad: q,
            centre,
            side: (e[0] * e[0] + e[1] * e[1]).sqrt(),
            angle: fold_angle(e[1].atan2(e[0])),
        }
    }

    #[test]
    fn recovers_a_tilted_grid_with_a_missing_sticker_and_clutter() {
        let truth = Homography {
            h: [50.0, -8.0, 120.0, 9.0, 48.0, 60.0, 0.0005, 0.0008, 1.0],
        };
        let mut cands: Vec<Candidate> = Vec::new();
        for r in 0..3 {
            for c in 0..3 {
                if (r, c) != (0, 2) {
                    cands.push(cand(&truth, r, c));
                }
            }
        }
        // A lone square of another size elsewhere.
        let other = Homography::affine([400.0, 300.0], [20.0, 0.0], [0.0, 20.0]);
        cands.push(cand(&other, 0, 0));
        let fit = fit_grid(&cands, &[], 3, &|_, _, _| 0.0).unwrap();
        assert_eq!(fit.supported(), 8);
        for r in 0..3 {
            for c in 0..3 {
                let p = fit.h.apply([c as f64 + 0.5, r as f64 + 0.5]).unwrap();
                let t = truth.apply([c as f64 + 0.5, r as f64 + 0.5]).unwrap();
                assert!(dist(p, t) < 1.0, "cell {r},{c}: {p:?} vs {t:?}");
            }
        }
    }

    /// The visible part of cell (r, c) when everything above grid row `cut` is hidden.
    fn strip(h: &Homography, r: usize, c: usize, fill: f64, cut: f64) -> Candidate {
        let m = (1.0 - fill) / 2.0;
        let (x0, x1) = (c as f64 + m, c as f64 + 1.0 - m);
        let (y0, y1) = (cut.max(r as f64 + m), r as f64 + 1.0 - m);
        let q = [[x0, y0], [x1, y0], [x1, y1], [x0, y1]].map(|p| h.apply(p).unwrap());
        let e = [q[1][0] - q[0][0], q[1][1] - q[0][1]];
        Candidate {
            quad: q,
            centre: h.apply([(x0 + x1) / 2.0, (y0 + y1) / 2.0]).unwrap(),
            side: (e[0] * e[0] + e[1] * e[1]).sqrt(),
            angle: fold_angle(e[1].atan2(e[0])),
        }
    }

    #[test]
    fn a_strip_completes_to_the_sticker_it_was_cut_from() {
        let h = Homography::affine([100.0, 50.0], [40.0, 0.0], [0.0, 40.0]);
        let s = strip(&h, 0, 1, 0.85, 0.6);
        let want = h.apply([1.5, 0.5]).unwrap();
        let got = completions(&s);
        let best = got
            .iter()
            .map(|c| dist(c.centre, want))
            .fold(f64::MAX, f64::min);
        assert!(best < 1.5, "completions {got:?}, want centre {want:?}");
    }

    #[test]
    fn a_two_by_two_face_with_a_row_under_an_arm_is_found_from_its_strips() {
        let truth = Homography {
            h: [60.0, 6.0, 150.0, -5.0, 58.0, 90.0, 0.0003, -0.0004, 1.0],
        };
        // Row 0 is hidden above y = 0.7 (grid units): two whole stickers, two strips, and
        // a lone square elsewhere.
        let cands = vec![
            cand(&truth, 1, 0),
            cand(&truth, 1, 1),
            cand(
                &Homography::affine([400.0, 20.0], [50.0, 0.0], [0.0, 50.0]),
                0,
                0,
            ),
        ];
        let strips = vec![
            strip(&truth, 0, 0, 0.85, 0.7),
            strip(&truth, 0, 1, 0.85, 0.7),
        ];
        let fit = fit_grid(&cands, &strips, 2, &|_, _, _| 0.0).unwrap();
        assert_eq!(fit.supported(), 4);
        assert_eq!(fit.strip.iter().flatten().count(), 2);
        for r in 0..2 {
            for c in 0..2 {
                let p = fit.h.apply([c as f64 + 0.5, r as f64 + 0.5]).unwrap();
                let t = truth.apply([c as f64 + 0.5, r as f64 + 0.5]).unwrap();
                assert!(dist(p, t) < 0.1 * 58.0, "cell {r},{c}: {p:?} vs {t:?}");
            }
        }
        // Without the strips two stickers are not a grid.
        assert!(fit_grid(&cands, &[], 2, &|_, _, _| 0.0).is_none());
    }

    #[test]
    fn too_few_candidates_is_no_grid() {
        let truth = Homography::affine([0.0, 0.0], [30.0, 0.0], [0.0, 30.0]);
        let cands = vec![cand(&truth, 0, 0), cand(&truth, 2, 2)];
        assert!(fit_grid(&cands, &[], 3, &|_, _, _| 0.0).is_none());
    }
}
