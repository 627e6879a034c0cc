//! Plane geometry for the sticker grid: points, quadrilaterals and a least-squares
//! homography (normalised DLT) between the face's grid coordinates and image pixels.
//!
//! Grid coordinates: the face is the square `[0, n] x [0, n]`, `x` to the right and `y`
//! down as seen in the image; sticker `(row, col)` has its centre at `(col + 0.5, row + 0.5)`.
//!
//! Level: bottom of `scan` (pure Rust); depends on nothing in the crate. Must not depend on
//! images, detection or anything above `scan`.

/// A point `[x, y]` in pixels or grid units.
pub type Pt = [f64; 2];

/// Four corners, in order top-left, top-right, bottom-right, bottom-left (as seen).
pub type Quad = [Pt; 4];

/// A projective map of the plane (3x3, `h[8]` normalised to 1 when possible).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Homography {
    pub h: [f64; 9],
}

impl Homography {
    pub fn identity() -> Homography {
        Homography {
            h: [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
        }
    }

    /// An affine map: `p = origin + x * ex + y * ey`.
    pub fn affine(origin: Pt, ex: Pt, ey: Pt) -> Homography {
        Homography {
            h: [
                ex[0], ey[0], origin[0], ex[1], ey[1], origin[1], 0.0, 0.0, 1.0,
            ],
        }
    }

    /// Maps a point; `None` at or behind the horizon.
    pub fn apply(&self, p: Pt) -> Option<Pt> {
        let h = &self.h;
        let w = h[6] * p[0] + h[7] * p[1] + h[8];
        if w.abs() < 1e-12 || !w.is_finite() {
            return None;
        }
        let x = (h[0] * p[0] + h[1] * p[1] + h[2]) / w;
        let y = (h[3] * p[0] + h[4] * p[1] + h[5]) / w;
        (x.is_finite() && y.is_finite()).then_some([x, y])
    }

    /// The inverse map, `None` when singular.
    pub fn inverse(&self) -> Option<Homography> {
        let m = &self.h;
        let c = [
            m[4] * m[8] - m[5] * m[7],
            m[2] * m[7] - m[1] * m[8],
            m[1] * m[5] - m[2] * m[4],
            m[5] * m[6] - m[3] * m[8],
            m[0] * m[8] - m[2] * m[6],
            m[2] * m[3] - m[0] * m[5],
            m[3] * m[7] - m[4] * m[6],
            m[1] * m[6] - m[0] * m[7],
            m[0] * m[4] - m[1] * m[3],
        ];
        let det = m[0] * c[0] + m[1] * c[3] + m[2] * c[6];
        if det.abs() < 1e-15 || !det.is_finite() {
            return None;
        }
        let mut h = [0.0; 9];
        for i in 0..9 {
            h[i] = c[i] / det;
        }
        Some(Homography { h })
    }

    /// The map `p -> self(inner(p))` (the matrix product `self * inner`).
    pub fn compose(&self, inner: &Homography) -> Homography {
        let (a, b) = (&self.h, &inner.h);
        let mut h = [0.0; 9];
        for r in 0..3 {
            for c in 0..3 {
                h[r * 3 + c] = (0..3).map(|k| a[r * 3 + k] * b[k * 3 + c]).sum();
            }
        }
        Homography { h }
    }

    /// Least-squares fit of `src[i] -> dst[i]` (at least 4 pairs, not all collinear).
    /// Coordinates are normalised (centroid at 0, mean distance sqrt 2) before solving.
    pub fn fit(src: &[Pt], dst: &[Pt]) -> Option<Homography> {
        if src.len() != dst.len() || src.len() < 4 {
            return None;
        }
        let (ts, s2) = normaliser(src)?;
        let (td, d2) = normaliser(dst)?;
        // Unknowns h0..h7 with h8 = 1: two equations per pair, normal equations 8x8.
        let mut ata = [[0.0f64; 8]; 8];
        let mut atb = [0.0f64; 8];
        for (p, q) in s2.iter().zip(&d2) {
            let (x, y, u, v) = (p[0], p[1], q[0], q[1]);
            let rows = [
                ([x, y, 1.0, 0.0, 0.0, 0.0, -u * x, -u * y], u),
                ([0.0, 0.0, 0.0, x, y, 1.0, -v * x, -v * y], v),
            ];
            for (a, b) in rows {
                for i in 0..8 {
                    atb[i] += a[i] * b;
                    for j in 0..8 {
                        ata[i][j] += a[i] * a[j];
                    }
                }
            }
        }
        let sol = solve8(ata, atb)?;
        let hn = Homography {
            h: [
                sol[0], sol[1], sol[2], sol[3], sol[4], sol[5], sol[6], sol[7], 1.0,
            ],
        };
        // H = Td^-1 * Hn * Ts
        let h = td.inverse()?.compose(&hn).compose(&ts);
        let s = if h.h[8].abs() > 1e-12 { h.h[8] } else { 1.0 };
        let mut out = h;
        for v in out.h.iter_mut() {
            *v /= s;
        }
        out.h.iter().all(|v| v.is_finite()).then_some(out)
    }
}

fn normaliser(pts: &[Pt]) -> Option<(Homography, Vec<Pt>)> {
    let n = pts.len() as f64;
    let cx = pts.iter().map(|p| p[0]).sum::<f64>() / n;
    let cy = pts.iter().map(|p| p[1]).sum::<f64>() / n;
    let md = pts
        .iter()
        .map(|p| ((p[0] - cx).powi(2) + (p[1] - cy).powi(2)).sqrt())
        .sum::<f64>()
        / n;
    if md < 1e-12 || !md.is_finite() {
        return None;
    }
    let s = std::f64::consts::SQRT_2 / md;
    let t = Homography {
        h: [s, 0.0, -s * cx, 0.0, s, -s * cy, 0.0, 0.0, 1.0],
    };
    let out = pts
        .iter()
        .map(|p| [s * (p[0] - cx), s * (p[1] - cy)])
        .collect();
    Some((t, out))
}

#[allow(clippy::needless_range_loop)] // index arithmetic mirrors the maths
fn solve8(mut a: [[f64; 8]; 8], mut b: [f64; 8]) -> Option<[f64; 8]> {
    for col in 0..8 {
        let piv = (col..8).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col].abs() < 1e-10 {
            return None;
        }
        a.swap(col, piv);
        b.swap(col, piv);
        for r in 0..8 {
            if r != col {
                let f = a[r][col] / a[col][col];
                if f != 0.0 {
                    for c in col..8 {
                        a[r][c] -= f * a[col][c];
                    }
                    b[r] -= f * b[col];
                }
            }
        }
    }
    let mut x = [0.0; 8];
    for i in 0..8 {
        x[i] = b[i] / a[i][i];
    }
    Some(x)
}

/// Grid-coordinate corners of sticker `(row, col)` when stickers cover `fill` of a cell
/// side (1.0 = the whole cell), in quad order.
pub fn cell_quad(row: usize, col: usize, fill: f64) -> Quad {
    let (cx, cy) = (col as f64 + 0.5, row as f64 + 0.5);
    let h = fill / 2.0;
    [
        [cx - h, cy - h],
        [cx + h, cy - h],
        [cx + h, cy + h],
        [cx - h, cy + h],
    ]
}

/// Maps each corner of a quad; `None` if any lands at infinity.
pub fn map_quad(h: &Homography, q: &Quad) -> Option<Quad> {
    Some([
        h.apply(q[0])?,
        h.apply(q[1])?,
        h.apply(q[2])?,
        h.apply(q[3])?,
    ])
}

/// The quad shrunk towards its centroid by `factor` (0.5 = half the size).
pub fn shrink_quad(q: &Quad, factor: f64) -> Quad {
    let c = quad_centre(q);
    q.map(|p| [c[0] + (p[0] - c[0]) * factor, c[1] + (p[1] - c[1]) * factor])
}

pub fn quad_centre(q: &Quad) -> Pt {
    [
        (q[0][0] + q[1][0] + q[2][0] + q[3][0]) / 4.0,
        (q[0][1] + q[1][1] + q[2][1] + q[3][1]) / 4.0,
    ]
}

/// Whether `p` lies inside the convex quad `q` (either winding).
pub fn in_convex_quad(q: &Quad, p: Pt) -> bool {
    let mut sign = 0.0f64;
    for i in 0..4 {
        let a = q[i];
        let b = q[(i + 1) % 4];
        let cross = (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]);
        if cross.abs() < 1e-12 {
            continue;
        }
        if sign == 0.0 {
            sign = cross.signum();
        } else if cross.signum() != sign {
            return false;
        }
    }
    true
}

pub fn dist(a: Pt, b: Pt) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_recovers_a_projective_map() {
        let truth = Homography {
            h: [40.0, 5.0, 100.0, -3.0, 38.0, 80.0, 0.01, -0.02, 1.0],
        };
        let src: Vec<Pt> = (0..4)
            .flat_map(|i| (0..4).map(move |j| [i as f64, j as f64]))
            .collect();
        let dst: Vec<Pt> = src.iter().map(|p| truth.apply(*p).unwrap()).collect();
        let h = Homography::fit(&src, &dst).unwrap();
        for (s, d) in src.iter().zip(&dst) {
            assert!(dist(h.apply(*s).unwrap(), *d) < 1e-6);
        }
        let inv = h.inverse().unwrap();
        assert!(dist(inv.apply(dst[5]).unwrap(), src[5]) < 1e-6);
    }

    #[test]
    fn degenerate_fits_are_refused() {
        let src = [[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [3.0, 0.0]];
        assert!(Homography::fit(&src, &src).is_none());
        assert!(Homography::fit(&src[..3], &src[..3]).is_none());
    }

    #[test]
    fn quad_containment() {
        let q = cell_quad(0, 0, 1.0);
        assert!(in_convex_quad(&q, [0.5, 0.5]));
        assert!(!in_convex_quad(&q, [1.5, 0.5]));
    }
}
