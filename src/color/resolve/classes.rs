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

/// Six clusters grown from anchors: each given anchor is its cluster's first centroid, and
/// each missing one (`None`) starts at the reading farthest from every centroid so far (the
/// colour no anchor shows: on a 3x3x3 with a face unread, its centre's). Then Lloyd's
/// iterations; a cluster left empty keeps its centroid. Returns the cluster of each reading
/// (cluster `j` grew from anchor `j`). Deterministic.
pub(super) fn anchored_kmeans(labs: &[[f64; 3]], anchors: &[Option<[f64; 3]>]) -> Vec<usize> {
    let mut cents: Vec<[f64; 3]> = Vec::with_capacity(anchors.len());
    let given: Vec<[f64; 3]> = anchors.iter().flatten().copied().collect();
    let nearest_d2 =
        |x: &[f64; 3], cs: &[[f64; 3]]| cs.iter().map(|c| d2(x, c)).fold(f64::INFINITY, f64::min);
    let mut placed = given.clone();
    for a in anchors {
        let c = match a {
            Some(c) => *c,
            None => {
                let far = labs
                    .iter()
                    .max_by(|x, y| nearest_d2(x, &placed).total_cmp(&nearest_d2(y, &placed)))
                    .copied()
                    .unwrap_or([50.0, 0.0, 0.0]);
                placed.push(far);
                far
            }
        };
        cents.push(c);
    }
    let nearest = |x: &[f64; 3], cs: &[[f64; 3]]| {
        (0..cs.len())
            .min_by(|&a, &b| d2(x, &cs[a]).total_cmp(&d2(x, &cs[b])))
            .expect("centroids")
    };
    let mut labels: Vec<usize> = labs.iter().map(|x| nearest(x, &cents)).collect();
    for _ in 0..30 {
        for (j, c) in cents.iter_mut().enumerate() {
            let members: Vec<&[f64; 3]> = labs
                .iter()
                .zip(&labels)
                .filter(|p| *p.1 == j)
                .map(|p| p.0)
                .collect();
            if !members.is_empty() {
                let n = members.len() as f64;
                *c = std::array::from_fn(|k| members.iter().map(|x| x[k]).sum::<f64>() / n);
            }
        }
        let next: Vec<usize> = labs.iter().map(|x| nearest(x, &cents)).collect();
        if next == labels {
            break;
        }
        labels = next;
    }
    labels
}

/// A calibration profile's colour for one class: its mean, and where its stickers read.
#[derive(Clone, Copy, Debug)]
pub(super) struct ClassPrior {
    pub(super) mean: [f64; 3],
    /// Where each of the class's stickers read, relative to `mean`, the first `members`
    /// (none when the profile did not keep its stickers).
    pub(super) offsets: [[f64; 3]; 9],
    pub(super) members: usize,
}

/// One colour class: a Student-t per axis of its own frame in Lab, (lightness, chroma along
/// the class's hue direction, hue across it). Wear and fading pull a sticker toward grey
/// (radially, keeping its hue) and light changes lightness; the hue direction is the
/// stable one, and each class learns its own spread along each axis.
#[derive(Clone, Copy, Debug)]
pub(super) struct Class {
    pub(super) mean: [f64; 3],
    /// Minus the log prior density of the mean where a calibration profile gave one (0
    /// without): a hypothesis that pulls a class away from the colour the profile saw
    /// pays for it.
    pub(super) prior_cost: f64,
    /// Degrees of freedom of the Student-t.
    pub(super) nu: f64,
    /// Variance along (L, radial, tangential).
    pub(super) var: [f64; 3],
    /// Unit hue direction (cos, sin) in the a*b* plane.
    pub(super) dir: [f64; 2],
    /// With a calibration profile that saw each sticker: where the class's stickers read
    /// relative to its mean (Lab), the first `members` of them. The class is then a
    /// mixture, one component per physical sticker, each spread by `var`: a worn sticker
    /// is expected where it read when calibrated, not only near the class's mean.
    pub(super) offsets: [[f64; 3]; 9],
    pub(super) members: usize,
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
        let e = noise_frame(noise, self.dir);
        let at = |centre: [f64; 3]| {
            let d = to_frame(std::array::from_fn(|k| x[k] - centre[k]), self.dir);
            (0..3)
                .map(|k| {
                    let v = self.var[k] + e[k];
                    let nu = self.nu;
                    0.5 * (nu + 1.0) * (d[k] * d[k] / v / nu).ln_1p() + 0.5 * v.ln()
                })
                .sum::<f64>()
        };
        if self.members == 0 {
            return at(self.mean);
        }
        // Minus the log of the mean likelihood over the stickers.
        let costs: Vec<f64> = self.offsets[..self.members]
            .iter()
            .map(|o| at(std::array::from_fn(|k| self.mean[k] + o[k])))
            .collect();
        let best = costs.iter().copied().fold(f64::INFINITY, f64::min);
        let sum: f64 = costs.iter().map(|c| (best - c).exp()).sum();
        best - (sum / self.members as f64).ln()
    }

    /// A reading's difference, in the class frame, from the class's nearest component (its
    /// mean, or the nearest of its stickers).
    fn residual(&self, x: &[f64; 3]) -> [f64; 3] {
        let d = |o: &[f64; 3]| {
            to_frame(
                std::array::from_fn(|k| x[k] - self.mean[k] - o[k]),
                self.dir,
            )
        };
        if self.members == 0 {
            return d(&[0.0; 3]);
        }
        self.offsets[..self.members]
            .iter()
            .map(d)
            .min_by(|a, b| {
                let n = |v: &[f64; 3]| v.iter().map(|x| x * x).sum::<f64>();
                n(a).total_cmp(&n(b))
            })
            .expect("members")
    }
}

/// Minimum intrinsic class spread in Lab units (the readings' own noise comes on top).
const MIN_SIGMA: f64 = 0.2;
/// Re-weighting rounds of the class fit.
const FIT_ROUNDS: usize = 3;

/// Fits the six class models to labelled readings. A class's spread is what the readings'
/// scatter leaves after their own measurement noise (the moment estimate), shrunk toward
/// the pooled spread of all classes; means weight each reading by its precision, so a
/// reading whose colour the sensor cannot resolve (near black, clipped) hardly moves them.
pub(super) fn fit(
    labs: &[[f64; 3]],
    noise: &[[f64; 3]],
    labels: &[usize],
    prior: Option<&[ClassPrior; 6]>,
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
            prior_cost: 0.0,
            nu,
            var: [floor; 3],
            dir: hue_dir(&mean),
            offsets: prior.map_or([[0.0; 3]; 9], |p| p[j].offsets),
            members: prior.map_or(0, |p| p[j].members),
        }
    });
    let mut pooled = [0.0; 3];
    for ((x, &l), e) in labs.iter().zip(labels).zip(noise) {
        let c = &classes[l];
        let d = c.residual(x);
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
    // sticker does not widen its class for all the others.
    for _ in 0..FIT_ROUNDS {
        let mut wsum = [[0.0; 3]; 6];
        let mut wx = [[0.0; 3]; 6];
        let mut usum = [[0.0; 3]; 6];
        let mut uss = [[0.0; 3]; 6];
        for ((x, &l), e) in labs.iter().zip(labels).zip(noise) {
            let c = &classes[l];
            let d = to_frame(std::array::from_fn(|k| x[k] - c.mean[k]), c.dir);
            // The spread is about the nearest component (the mean, or the nearest sticker
            // the profile saw); the mean moves with every reading.
            let r = c.residual(x);
            let ef = noise_frame(e, c.dir);
            for k in 0..3 {
                let v = c.var[k] + ef[k];
                let r2 = r[k] * r[k];
                let u = (nu + 1.0) / (nu + r2 / v);
                wsum[l][k] += u / v;
                wx[l][k] += u / v * d[k];
                usum[l][k] += u;
                uss[l][k] += u * (r2 - ef[k]).max(0.0);
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
            // A profile colour counts as `profile_weight` readings of average precision in
            // the class's mean.
            let kp = model.profile_weight;
            let pf =
                prior.map(|p| to_frame(std::array::from_fn(|k| p[j].mean[k] - c.mean[k]), c.dir));
            let wbar: [f64; 3] = std::array::from_fn(|k| {
                if n[j] > 0.0 {
                    wsum[j][k] / n[j]
                } else {
                    1.0 / pooled[k]
                }
            });
            let data: [f64; 3] = std::array::from_fn(|k| {
                if wsum[j][k] > 0.0 {
                    wx[j][k] / wsum[j][k]
                } else {
                    0.0
                }
            });
            let (offset, prior_cost) = match pf {
                Some(d) => {
                    let p = &prior.expect("prior")[j];
                    pull_toward(data, wsum[j], d, kp, wbar, p.mean)
                }
                None => (data, 0.0),
            };
            let back = from_frame(offset, c.dir);
            let mean: [f64; 3] = std::array::from_fn(|k| c.mean[k] + back[k]);
            let var: [f64; 3] = std::array::from_fn(|k| {
                let w = model.spread_prior;
                ((uss[j][k] + w * typical[k]) / (n[j] + w)).max(floor)
            });
            classes[j] = Class {
                mean,
                prior_cost,
                nu,
                var,
                dir: hue_dir(&mean),
                ..c
            };
        }
    }
    classes
}

/// A class mean's offset (class frame) between what its readings say (`data`, with
/// weights `w` per axis) and a profile colour's offset `d` that counts as `kp` readings of
/// precision `wbar`; and minus the log prior density at the result. The light in which a
/// solved cube was calibrated cannot be told from its colours (each face holds one colour),
/// so a profile colour may read lighter or darker in another scan: along the line from
/// black through it (in the lightness–chroma plane) the prior leaves the mean free, and
/// holds it across that line and in hue.
fn pull_toward(
    data: [f64; 3],
    w: [f64; 3],
    d: [f64; 3],
    kp: f64,
    wbar: [f64; 3],
    colour: [f64; 3],
) -> ([f64; 3], f64) {
    // Hue (tangential): a plain weighted mean.
    let k2 = kp * wbar[2];
    let o2 = (w[2] * data[2] + k2 * d[2]) / (w[2] + k2);
    // Lightness and chroma: the prior acts across the light's direction r only.
    let chroma = colour[1].hypot(colour[2]);
    let (r0, r1) = (colour[0] + 16.0, chroma);
    let norm = r0.hypot(r1).max(1e-9);
    let (r0, r1) = (r0 / norm, r1 / norm);
    // P = I - r r^T.
    let p = [[1.0 - r0 * r0, -r0 * r1], [-r0 * r1, 1.0 - r1 * r1]];
    let kb = kp * 0.5 * (wbar[0] + wbar[1]);
    let a = [
        [w[0] + kb * p[0][0], kb * p[0][1]],
        [kb * p[1][0], w[1] + kb * p[1][1]],
    ];
    let b = [
        w[0] * data[0] + kb * (p[0][0] * d[0] + p[0][1] * d[1]),
        w[1] * data[1] + kb * (p[1][0] * d[0] + p[1][1] * d[1]),
    ];
    let det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    let (o0, o1) = if det.abs() > 1e-12 {
        (
            (b[0] * a[1][1] - a[0][1] * b[1]) / det,
            (a[0][0] * b[1] - a[1][0] * b[0]) / det,
        )
    } else {
        (data[0], data[1])
    };
    let e = [o0 - d[0], o1 - d[1]];
    let across = [
        p[0][0] * e[0] + p[0][1] * e[1],
        p[1][0] * e[0] + p[1][1] * e[1],
    ];
    let cost =
        0.5 * kb * (across[0] * across[0] + across[1] * across[1]) + 0.5 * k2 * (o2 - d[2]).powi(2);
    ([o0, o1, o2], cost)
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
    let a: Vec<Option<[f64; 3]>> = a.iter().copied().map(Some).collect();
    best_matching_some(&a, b)
}

/// [`best_matching`] where some of `a` are missing (`None`): those take whichever of `b`
/// the others leave, at no cost.
pub(super) fn best_matching_some(a: &[Option<[f64; 3]>], b: &[[f64; 3]]) -> [usize; 6] {
    let mut best = (f64::INFINITY, [0, 1, 2, 3, 4, 5]);
    let mut perm = [0usize, 1, 2, 3, 4, 5];
    permute(&mut perm, 0, &mut |p| {
        let c: f64 = (0..6).map(|i| a[i].map_or(0.0, |x| d2(&x, &b[p[i]]))).sum();
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
