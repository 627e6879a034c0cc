//! The six colour classes: a first k-means estimate, and the robust class model (a
//! Student-t per axis of the class's own lightness / chroma / hue frame) fitted to
//! labelled readings, with its cost of a reading; plus the small matching helpers that
//! pair classes with centres or profile centroids.
//!
//! Level: part of `color::resolve`; pure arithmetic on Lab triples. Must not depend on the
//! cube model, the legal search or the light estimate.

use palette::Lab;

use super::model::Model;

pub(super) fn d2(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    (0..3).map(|k| (a[k] - b[k]).powi(2)).sum()
}

/// k-means (seeded, four restarts, best inertia) into six clusters.
pub(super) fn kmeans6(labs: &[[f64; 3]], seed: u64) -> (Vec<usize>, Vec<[f64; 3]>) {
    let (_, labels, cents) = kmeans_runs(labs, seed)
        .into_iter()
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .expect("four runs");
    (labels, cents)
}

/// Four seeded k-means runs into six clusters: (inertia, cluster per reading, centroids)
/// each.
pub(super) fn kmeans_runs(labs: &[[f64; 3]], seed: u64) -> Vec<(f64, Vec<usize>, Vec<[f64; 3]>)> {
    use kmeans_colors::get_kmeans;
    type LabF = Lab<palette::white_point::D65, f32>;
    let buf: Vec<LabF> = labs
        .iter()
        .map(|l| LabF::new(l[0] as f32, l[1] as f32, l[2] as f32))
        .collect();
    (0..4u64)
        .map(|r| {
            let km = get_kmeans(6, 30, 0.01, false, &buf, seed.wrapping_add(r * 7919));
            let labels: Vec<usize> = km.indices.iter().map(|&i| i as usize).collect();
            let mut cents: Vec<[f64; 3]> = km
                .centroids
                .iter()
                .map(|c| [c.l as f64, c.a as f64, c.b as f64])
                .collect();
            let inertia: f64 = labs
                .iter()
                .zip(&labels)
                .map(|(x, &l)| d2(x, &cents[l.min(cents.len() - 1)]))
                .sum();
            cents.resize(6, [50.0, 0.0, 0.0]);
            (inertia, labels, cents)
        })
        .collect()
}

/// One colour class: a Student-t per axis of its own frame in Lab, (lightness, chroma along
/// the class's hue direction, hue across it). Wear and fading pull a sticker toward grey
/// (radially, keeping its hue) and light changes lightness; the hue direction is the
/// stable one, and each class learns its own spread along each axis.
#[derive(Clone, Copy, Debug)]
pub(super) struct Class {
    pub(super) mean: [f64; 3],
    /// Degrees of freedom of the Student-t.
    pub(super) nu: f64,
    /// Variance along (L, radial, tangential).
    pub(super) var: [f64; 3],
    /// Unit hue direction (cos, sin) in the a*b* plane.
    pub(super) dir: [f64; 2],
}

/// The unit hue direction of a Lab colour (a* axis for a neutral one).
pub(super) fn hue_dir(m: &[f64; 3]) -> [f64; 2] {
    let h = m[1].hypot(m[2]);
    if h < 1e-9 {
        [1.0, 0.0]
    } else {
        [m[1] / h, m[2] / h]
    }
}

/// A Lab difference in a class frame.
pub(super) fn to_frame(d: [f64; 3], dir: [f64; 2]) -> [f64; 3] {
    let [c, s] = dir;
    [d[0], d[1] * c + d[2] * s, -d[1] * s + d[2] * c]
}

pub(super) fn from_frame(f: [f64; 3], dir: [f64; 2]) -> [f64; 3] {
    let [c, s] = dir;
    [f[0], f[1] * c - f[2] * s, f[1] * s + f[2] * c]
}

/// A reading's (diagonal Lab) noise variance along the frame axes.
pub(super) fn noise_frame(e: &[f64; 3], dir: [f64; 2]) -> [f64; 3] {
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
    pub(super) fn cost(&self, x: &[f64; 3], noise: &[f64; 3]) -> f64 {
        let d = to_frame(std::array::from_fn(|k| x[k] - self.mean[k]), self.dir);
        let e = noise_frame(noise, self.dir);
        (0..3)
            .map(|k| {
                let v = self.var[k] + e[k];
                let nu = self.nu;
                0.5 * (nu + 1.0) * (d[k] * d[k] / v / nu).ln_1p() + 0.5 * v.ln()
            })
            .sum()
    }
}

/// Minimum intrinsic class spread in Lab units (the readings' own noise comes on top).
const MIN_SIGMA: f64 = 0.2;
/// Re-weighting rounds of the class fit.
const FIT_ROUNDS: usize = 3;
/// Pseudo-count of a profile centroid in a class mean.
const KAPPA_MEAN: f64 = 2.0;

/// Fits the six class models to labelled readings. A class's spread is what the readings'
/// scatter leaves after their own measurement noise (the moment estimate), shrunk toward
/// the pooled spread of all classes; means weight each reading by its precision, so a
/// reading whose colour the sensor cannot resolve (near black, clipped) hardly moves them.
pub(super) fn fit(
    labs: &[[f64; 3]],
    noise: &[[f64; 3]],
    labels: &[usize],
    prior: Option<&[[f64; 3]; 6]>,
    model: &Model,
) -> [Class; 6] {
    let floor = MIN_SIGMA.powi(2);
    let nu = model.nu;
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
            nu,
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
                let u = (nu + 1.0) / (nu + d2 / v);
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
            let kv = model.spread_prior;
            classes[j] = Class {
                mean,
                nu,
                var: std::array::from_fn(|k| {
                    ((uss[j][k] + kv * typical[k]) / (n[j] + kv)).max(floor)
                }),
                dir: hue_dir(&mean),
            };
        }
    }
    classes
}

pub(super) fn median(mut v: Vec<f64>) -> f64 {
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

/// `perm[i]` = index into `b` matched to `a[i]`, minimising the total squared distance
/// (exhaustive over the 720 permutations).
pub(super) fn best_matching(a: &[[f64; 3]], b: &[[f64; 3]]) -> [usize; 6] {
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

pub(super) fn permute(p: &mut [usize; 6], k: usize, f: &mut dyn FnMut(&[usize; 6])) {
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
