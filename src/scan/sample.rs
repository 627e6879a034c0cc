//! Robust colour of one sticker: the pixels inside a (shrunken) sticker quad, minus the
//! darkest (black plastic border, shadow) and brightest (specular highlight) ones, minus
//! colour outliers around the median; the mean of what is left.
//!
//! Level: `scan` (pure Rust).

use super::geom::{in_convex_quad, Quad};
use super::image::RgbImage;

/// At most this many pixels are looked at per sticker (a regular subsample beyond that).
const MAX_PIXELS: f64 = 1200.0;

/// Share of the darkest pixels dropped (border, shadow).
const DROP_DARK: f64 = 0.12;
/// Share of the brightest pixels dropped (specular highlights).
const DROP_BRIGHT: f64 = 0.10;

/// The colour of one region and how many pixels it came from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub rgb: [f64; 3],
    /// Pixels that contributed after trimming.
    pub pixels: usize,
    /// Mean distance (RGB units) of those pixels from the result: low for a clean sticker.
    pub spread: f64,
}

/// Samples the pixels inside `quad` (image pixel coordinates). `None` when the quad holds
/// no pixel of the image.
pub fn sample_quad(img: &RgbImage, quad: &Quad) -> Option<Sample> {
    if img.is_empty() {
        return None;
    }
    let xs = quad.iter().map(|p| p[0]);
    let ys = quad.iter().map(|p| p[1]);
    let x0 = xs.clone().fold(f64::INFINITY, f64::min).floor().max(0.0);
    let x1 = xs
        .fold(f64::NEG_INFINITY, f64::max)
        .ceil()
        .min(img.width as f64 - 1.0);
    let y0 = ys.clone().fold(f64::INFINITY, f64::min).floor().max(0.0);
    let y1 = ys
        .fold(f64::NEG_INFINITY, f64::max)
        .ceil()
        .min(img.height as f64 - 1.0);
    if !(x0 <= x1 && y0 <= y1) {
        return None;
    }
    let area = (x1 - x0 + 1.0) * (y1 - y0 + 1.0);
    let step = ((area / MAX_PIXELS).sqrt().floor() as usize).max(1);
    let mut px: Vec<[u8; 3]> = Vec::new();
    let mut y = y0 as usize;
    while y as f64 <= y1 {
        let mut x = x0 as usize;
        while x as f64 <= x1 {
            if in_convex_quad(quad, [x as f64 + 0.5, y as f64 + 0.5]) {
                px.push(img.get(x, y));
            }
            x += step;
        }
        y += step;
    }
    robust_mean(&mut px)
}

/// The trimmed, outlier-rejected mean of a set of pixels (reorders `px`).
pub fn robust_mean(px: &mut [[u8; 3]]) -> Option<Sample> {
    if px.is_empty() {
        return None;
    }
    px.sort_unstable_by_key(|p| 77 * p[0] as u32 + 150 * p[1] as u32 + 29 * p[2] as u32);
    let n = px.len();
    let lo = ((n as f64) * DROP_DARK).floor() as usize;
    let hi = n - ((n as f64) * DROP_BRIGHT).floor() as usize;
    let kept = if hi > lo { &px[lo..hi] } else { &px[..] };
    let median = channel_medians(kept);
    let mut d: Vec<f64> = kept.iter().map(|p| dist(p, &median)).collect();
    d.sort_by(f64::total_cmp);
    let limit = (2.5 * d[d.len() / 2]).max(12.0);
    let mut sum = [0.0; 3];
    let mut count = 0usize;
    for p in kept {
        if dist(p, &median) <= limit {
            for c in 0..3 {
                sum[c] += p[c] as f64;
            }
            count += 1;
        }
    }
    if count == 0 {
        return None;
    }
    let rgb = sum.map(|s| s / count as f64);
    let spread = kept
        .iter()
        .filter(|p| dist(p, &median) <= limit)
        .map(|p| dist(p, &rgb))
        .sum::<f64>()
        / count as f64;
    Some(Sample {
        rgb,
        pixels: count,
        spread,
    })
}

fn channel_medians(px: &[[u8; 3]]) -> [f64; 3] {
    let mut out = [0.0; 3];
    for (c, o) in out.iter_mut().enumerate() {
        let mut hist = [0usize; 256];
        for p in px {
            hist[p[c] as usize] += 1;
        }
        let half = px.len().div_ceil(2);
        let mut acc = 0;
        for (v, &h) in hist.iter().enumerate() {
            acc += h;
            if acc >= half {
                *o = v as f64;
                break;
            }
        }
    }
    out
}

fn dist(p: &[u8; 3], m: &[f64; 3]) -> f64 {
    ((p[0] as f64 - m[0]).powi(2) + (p[1] as f64 - m[1]).powi(2) + (p[2] as f64 - m[2]).powi(2))
        .sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlight_and_border_are_ignored() {
        let mut img = RgbImage::new(40, 40, [20, 20, 20]);
        for y in 4..36 {
            for x in 4..36 {
                img.put(x, y, [200, 40, 30]);
            }
        }
        for y in 10..14 {
            for x in 10..16 {
                img.put(x, y, [255, 255, 255]);
            }
        }
        let q = [[2.0, 2.0], [38.0, 2.0], [38.0, 38.0], [2.0, 38.0]];
        let s = sample_quad(&img, &q).unwrap();
        assert!((s.rgb[0] - 200.0).abs() < 1.0, "{:?}", s.rgb);
        assert!((s.rgb[1] - 40.0).abs() < 1.0, "{:?}", s.rgb);
    }

    #[test]
    fn empty_regions_give_none() {
        let img = RgbImage::new(10, 10, [0, 0, 0]);
        let q = [[20.0, 20.0], [30.0, 20.0], [30.0, 30.0], [20.0, 30.0]];
        assert!(sample_quad(&img, &q).is_none());
    }
}
