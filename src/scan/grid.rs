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
//! Level: `scan` (pure Rust).

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
    /// RMS distance of supporting centres from their cells, in pitches.
    pub residual: f64,
}

impl GridFit {
    pub fn supported(&self) -> usize {
        self.support.iter().filter(|s| s.is_some()).count()
    }
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
    score: (usize, f64),
}

/// Fits the grid; `None` when no lattice holds at least [`min_support`] candidates.
pub fn fit_grid(
    cands: &[Candidate],
    n: usize,
    cell_score: &dyn Fn(&Homography, usize, usize) -> f64,
) -> Option<GridFit> {
    if cands.len() < min_support(n) {
        return None;
    }
    // Seeds: candidates with the most similar-sized neighbours first.
    let mut order: Vec<(usize, usize)> = (0..cands.len())
        .map(|i| {
            let s = cands[i].side;
            let k = cands
                .iter()
                .filter(|c| {
                    c.side > 0.75 * s
                        && c.side < 1.33 * s
                        && dist(c.centre, cands[i].centre) < 4.0 * s
                })
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
            if best.score.0 >= k.min(n * n) {
                // No seed with fewer similar neighbours can beat this.
                break;
            }
        }
        attempts += 1;
        tried[seed] = true;
        if let Some(h) = hypothesis(cands, n, seed, cell_score) {
            for i in h.fit.support.iter().flatten() {
                tried[*i] = true;
            }
            let better = match &best {
                None => true,
                Some(b) => {
                    h.score.0 > b.score.0 || (h.score.0 == b.score.0 && h.score.1 < b.score.1)
                }
            };
            if better {
                best = Some(h);
            }
        }
    }
    best.map(|h| h.fit)
}

fn hypothesis(
    cands: &[Candidate],
    n: usize,
    seed: usize,
    cell_score: &dyn Fn(&Homography, usize, usize) -> f64,
) -> Option<Hyp> {
    let s0 = &cands[seed];
    let group: Vec<usize> = (0..cands.len())
        .filter(|&i| {
            let c = &cands[i];
            c.side > 0.7 * s0.side
                && c.side < 1.43 * s0.side
                && dist(c.centre, s0.centre) < 1.6 * n as f64 * s0.side * 1.5
        })
        .collect();
    // Axis: the seed's angle refined by the group's (relative, folded).
    let mut rel: Vec<f64> = group
        .iter()
        .map(|&i| fold_angle(cands[i].angle - s0.angle))
        .collect();
    rel.sort_by(f64::total_cmp);
    let theta = fold_angle(s0.angle + rel[rel.len() / 2]);
    // Pitch: nearest similar neighbour of each group member.
    let mut nn: Vec<f64> = group
        .iter()
        .filter_map(|&i| {
            group
                .iter()
                .filter(|&&j| j != i)
                .map(|&j| dist(cands[i].centre, cands[j].centre))
                .filter(|&d| d > 0.7 * cands[i].side && d < 2.2 * cands[i].side)
                .min_by(f64::total_cmp)
        })
        .collect();
    if nn.is_empty() {
        return None;
    }
    nn.sort_by(f64::total_cmp);
    let pitch = nn[nn.len() / 2];
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
    let span = n as i64 - 1;
    let mut assigned: Vec<((i64, i64), usize, f64)> = Vec::new();
    for pass in 0..4 {
        let inv = map.inverse()?;
        let tol = if pass == 0 { 0.3 } else { 0.25 };
        let mut cells: Vec<((i64, i64), usize, f64)> = Vec::new();
        for &i in &group {
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
            match cells.iter_mut().find(|c| c.0 == key) {
                Some(c) if c.2 <= r => {}
                Some(c) => *c = (key, i, r),
                None => cells.push((key, i, r)),
            }
        }
        // Keep only the best n x n window of lattice nodes.
        let window = best_window(&cells, n, &map, cell_score)?;
        cells.retain(|c| in_window(c.0, window, n));
        let src: Vec<Pt> = cells
            .iter()
            .map(|c| [c.0 .0 as f64 + 0.5, c.0 .1 as f64 + 0.5])
            .collect();
        let dst: Vec<Pt> = cells.iter().map(|c| cands[c.1].centre).collect();
        let refit = if pass >= 1 && spread_2d(&cells, n) {
            Homography::fit(&src, &dst).filter(|h| sane(h, &src, &dst, pitch))
        } else {
            None
        }
        .or_else(|| fit_affine(&src, &dst));
        if let Some(h) = refit {
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
    if assigned.len() < min_support(n) {
        return None;
    }
    let mut support = vec![None; n * n];
    let mut sq = 0.0;
    for c in &assigned {
        support[c.0 .1 as usize * n + c.0 .0 as usize] = Some(c.1);
        sq += c.2 * c.2;
    }
    let mut fills: Vec<f64> = assigned
        .iter()
        .map(|c| cands[c.1].side / local_pitch(&map, c.0))
        .collect();
    fills.sort_by(f64::total_cmp);
    let fill = fills[fills.len() / 2].clamp(0.5, 0.98);
    let residual = (sq / assigned.len() as f64).sqrt();
    Some(Hyp {
        score: (assigned.len(), residual),
        fit: GridFit {
            h: map,
            support,
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

fn best_window(
    cells: &[((i64, i64), usize, f64)],
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
    let mut best: Option<((i64, i64), usize)> = None;
    let mut ties: Vec<(i64, i64)> = Vec::new();
    for wx in (xmin - span)..=xmax {
        for wy in (ymin - span)..=ymax {
            let k = cells.iter().filter(|c| in_window(c.0, (wx, wy), n)).count();
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
fn spread_2d(cells: &[((i64, i64), usize, f64)], n: usize) -> bool {
    if cells.len() < 5 {
        return false;
    }
    let mut xs: Vec<i64> = cells.iter().map(|c| c.0 .0).collect();
    let mut ys: Vec<i64> = cells.iter().map(|c| c.0 .1).collect();
    xs.sort();
    xs.dedup();
    ys.sort();
    ys.dedup();
    let _ = n;
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
        let fit = fit_grid(&cands, 3, &|_, _, _| 0.0).unwrap();
        assert_eq!(fit.supported(), 8);
        for r in 0..3 {
            for c in 0..3 {
                let p = fit.h.apply([c as f64 + 0.5, r as f64 + 0.5]).unwrap();
                let t = truth.apply([c as f64 + 0.5, r as f64 + 0.5]).unwrap();
                assert!(dist(p, t) < 1.0, "cell {r},{c}: {p:?} vs {t:?}");
            }
        }
    }

    #[test]
    fn too_few_candidates_is_no_grid() {
        let truth = Homography::affine([0.0, 0.0], [30.0, 0.0], [0.0, 30.0]);
        let cands = vec![cand(&truth, 0, 0), cand(&truth, 2, 2)];
        assert!(fit_grid(&cands, 3, &|_, _, _| 0.0).is_none());
    }
}
