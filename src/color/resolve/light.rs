//! The light each sticker was read under: one gain per face and one per sticker kind,
//! estimated robustly from the current class labels and shrunk toward even light.
//!
//! Level: part of `color::resolve`; depends on `cube::Size` and the median helper of
//! [`super::classes`]. Must not depend on the legal search.

use crate::cube::Size;

/// The light each sticker was read under, relative to the scan's average: one factor per
/// face (each face is photographed or read separately: exposure, angle to the lamp) times
/// one per sticker kind on a 3x3x3 (corner / edge / centre: lens vignette, or the EV3 arm's
/// distance to the sticker). Estimated robustly (medians of log luminance ratios to the
/// sticker's class) from the current assignment.
#[derive(Clone)]
pub(super) struct Illumination {
    size: Size,
    /// Weight of the even-light prior ([`super::Model::light_prior`]).
    prior: f64,
    pub(super) face: [f64; 6],
    pub(super) kind: [f64; 3],
}

impl Illumination {
    pub(super) fn new(size: Size, prior: f64) -> Illumination {
        Illumination {
            size,
            prior,
            face: [0.0; 6],
            kind: [0.0; 3],
        }
    }

    pub(super) fn face_of(&self, i: usize) -> usize {
        i / self.size.per_face()
    }

    pub(super) fn kind_of(&self, i: usize) -> usize {
        match self.size {
            Size::Two => 0,
            Size::Three => match i % 9 {
                4 => 2,
                1 | 3 | 5 | 7 => 1,
                _ => 0,
            },
        }
    }

    /// Multiplicative gain of the face sticker `i` is on.
    pub(super) fn face_gain(&self, i: usize) -> f64 {
        self.face[self.face_of(i)].exp()
    }

    /// Multiplicative gain of sticker `i`.
    pub(super) fn gain(&self, i: usize) -> f64 {
        (self.face[self.face_of(i)] + self.kind[self.kind_of(i)]).exp()
    }

    /// Re-estimates from linear readings and class labels, over the stickers that were read
    /// (`read[i]`; all when `None`: an unread sticker's placeholder says nothing about the
    /// light, and a face with none read keeps the even-light prior); returns the largest
    /// change of a log gain.
    pub(super) fn estimate(
        &mut self,
        lin: &[[f64; 3]],
        labels: &[usize],
        read: Option<&[bool]>,
    ) -> f64 {
        let read = |i: usize| read.is_none_or(|r| r[i]);
        let ly: Vec<f64> = lin
            .iter()
            .map(|c| {
                (0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2])
                    .max(1e-4)
                    .ln()
            })
            .collect();
        let old = (self.face, self.kind);
        let mut scratch: Vec<f64> = Vec::with_capacity(lin.len());
        // The median of `value(i)` over the stickers `i` that `keep` selects.
        let mut median_of = |keep: &dyn Fn(usize) -> bool, value: &dyn Fn(usize) -> f64| {
            scratch.clear();
            scratch.extend((0..lin.len()).filter(|&i| read(i) && keep(i)).map(value));
            (median_in_place(&mut scratch), scratch.len())
        };
        for _ in 0..3 {
            // Class log-luminance under the current light: the median of its stickers (a
            // sticker in deep shadow or glare must not move its class's level, which every
            // face's light is then measured against).
            let (face, kind) = (self.face, self.kind);
            let class: [f64; 6] = std::array::from_fn(|j| {
                median_of(&|i| labels[i] == j, &|i| {
                    ly[i] - face[self.face_of(i)] - kind[self.kind_of(i)]
                })
                .0
            });
            for f in 0..6 {
                let (m, n) = median_of(&|i| self.face_of(i) == f, &|i| {
                    ly[i] - kind[self.kind_of(i)] - class[labels[i]]
                });
                self.face[f] = shrink(m, n, self.prior);
            }
            let mean = self.face.iter().sum::<f64>() / 6.0;
            self.face
                .iter_mut()
                .for_each(|v| *v = (*v - mean).clamp(-0.7, 0.7));
            if self.size == Size::Three {
                let face = self.face;
                for k in 0..3 {
                    let (m, n) = median_of(&|i| self.kind_of(i) == k, &|i| {
                        ly[i] - face[self.face_of(i)] - class[labels[i]]
                    });
                    self.kind[k] = shrink(m, n, self.prior);
                }
                let mean = (4.0 * self.kind[0] + 4.0 * self.kind[1] + self.kind[2]) / 9.0;
                self.kind
                    .iter_mut()
                    .for_each(|v| *v = (*v - mean).clamp(-0.7, 0.7));
            }
        }
        self.face
            .iter()
            .zip(old.0.iter())
            .chain(self.kind.iter().zip(old.1.iter()))
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max)
    }
}

/// The prior of even light ([`super::Model::light_prior`], in stickers): each face's and
/// each sticker kind's gain is the robust (median) estimate shrunk toward zero as if that
/// many more stickers had read no change. A face whose stickers all share one colour
/// carries no evidence on its own light (its gain and its class's brightness trade off
/// freely); without the prior such a gain drifts to its bound and lets a class absorb a
/// brightness difference that tells two colours apart (a dark orange and a red that differ
/// mainly in lightness).
fn shrink(median: f64, n: usize, prior: f64) -> f64 {
    let n = n as f64;
    median * n / (n + prior)
}

/// The median of the values (0 for none), reordering them.
fn median_in_place(v: &mut [f64]) -> f64 {
    let n = v.len();
    if n == 0 {
        return 0.0;
    }
    let (_, hi, _) = v.select_nth_unstable_by(n / 2, f64::total_cmp);
    let hi = *hi;
    if n % 2 == 1 {
        hi
    } else {
        let lo = v[..n / 2].iter().copied().fold(f64::NEG_INFINITY, f64::max);
        0.5 * (lo + hi)
    }
}
