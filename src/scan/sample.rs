//! Robust colour of one sticker: the pixels inside a (shrunken) sticker quad, minus the
//! darkest (black plastic border, shadow) and brightest (specular highlight) ones, minus
//! colour outliers around the median; the mean of what is left, with its standard error.
//!
//! Standard error per channel (`Sample::sigma`, carried into `RawScan::sigma` so the
//! resolver weighs each reading by what was actually measured): the spread of the kept
//! pixels over the square root of the number of *independent* pixels (neighbouring pixels
//! share noise through demosaicing, so pixels closer than [`NOISE_CORRELATION_PX`] count
//! as one), combined with two floors that averaging cannot remove:
//! - rounding to 8 bits: when the pixels do not dither (a flat or saturated patch all at
//!   one value) the true mean is only known within the step, a uniform error of
//!   1/√12 count;
//! - exposure and gain that differ between the separate frames of the six faces (auto
//!   exposure, white balance): the same 0.2 % of the value the resolver's 8-bit device
//!   model assumes for a single reading.
//!
//! Saturated stickers ([`sample_sticker`]): a white or pale yellow sticker under bright
//! light can clip the sensor, so the centre of the sticker is a flat plateau near full scale
//! whose channel ratios say nothing about its colour (a cream yellow and a white then read
//! within 2-3 counts of each other). The hue survives where the light is weaker: towards the
//! sticker's rim, pixels fall below saturation, and because darkening a surface scales all
//! three encoded channels by about the same factor (sRGB is close to a power law), their
//! channel *ratios* are the sticker's own. So when most of the centre is saturated,
//! [`sample_sticker`] also returns a second reading built from the brightest unsaturated
//! pixels of the whole sticker (the darker ones mix with the black border), scaled up to
//! the plateau's brightness: the dimmest colour consistent with the clipped centre. The
//! scan uses it as a second opinion when the colours as read are in doubt
//! (`scan::detect::unclipped_scan`): on a webcam's small stickers the unclipped ring lies
//! within a few pixels of the border and catches the neighbours' colours through chroma
//! subsampling, so it is not the first choice.
//!
//! Level: part of `scan` (pure Rust); depends on `scan::geom` and `scan::image`. Must not
//! depend on detection or anything above `scan`.

use super::geom::{in_convex_quad, Quad};
use super::image::RgbImage;

/// At most this many pixels are looked at per sticker (a regular subsample beyond that).
const MAX_PIXELS: f64 = 1200.0;

/// At most this many pixels are looked at per saturated sticker's rim (only a thin ring is
/// bright but unclipped, so it is read at full resolution up to this).
const MAX_RIM_PIXELS: f64 = 40_000.0;

/// Share of the darkest pixels dropped (border, shadow).
const DROP_DARK: f64 = 0.12;
/// Share of the brightest pixels dropped (specular highlights).
const DROP_BRIGHT: f64 = 0.10;

/// Distance (full-resolution pixels) over which a camera's pixel noise is correlated:
/// Bayer demosaicing interpolates each colour from a 2-pixel neighbourhood.
pub const NOISE_CORRELATION_PX: f64 = 2.0;

/// Standard deviation of the rounding to an 8-bit value (uniform over one step).
const ROUNDING_SIGMA: f64 = 0.288_675_134_594_812_9; // 1/sqrt(12)

/// Relative frame-to-frame exposure and gain variation (see the module docs).
const FRAME_GAIN_SIGMA: f64 = 0.002;

/// The colour of one region and how many pixels it came from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub rgb: [f64; 3],
    /// Pixels that contributed after trimming.
    pub pixels: usize,
    /// Mean distance (RGB units) of those pixels from the result: low for a clean sticker.
    pub spread: f64,
    /// Standard error of `rgb` per channel (8-bit counts), see the module docs.
    pub sigma: [f64; 3],
}

/// A pixel whose largest channel reaches this is taken as clipped by the sensor.
const SATURATED: u8 = 250;

/// The centre counts as a saturated plateau when at least this share of it is clipped.
const SATURATED_SHARE: f64 = 0.5;

/// Rim pixels used for a saturated sticker are at least this bright (luma, share of the
/// plateau's): just below clipping, little mixed with the black border.
const NEAR_PLATEAU: f64 = 0.8;

/// Fewest unsaturated pixels of the whole sticker needed to rebuild a saturated reading.
const MIN_RIM_PIXELS: usize = 24;

/// One sticker's colour: the robust mean of its centred region `sampled` (see the module
/// docs) and, when that region is a saturated plateau, the colour rebuilt from the
/// unsaturated pixels of the whole sticker `quad` (`None` when the centre is not saturated
/// or too few such pixels exist). `None` when `sampled` holds no pixel of the image.
pub fn sample_sticker(
    img: &RgbImage,
    quad: &Quad,
    sampled: &Quad,
) -> Option<(Sample, Option<Sample>)> {
    let (mut px, step) = pixels_in(img, sampled, MAX_PIXELS)?;
    let clipped = px.iter().filter(|p| saturated(p)).count();
    let plain = robust_mean(&mut px).map(|s| with_sigma(s, step))?;
    let rebuilt = ((clipped as f64) >= SATURATED_SHARE * px.len() as f64)
        .then(|| desaturated(img, quad, &plain))
        .flatten();
    Some((plain, rebuilt))
}

fn saturated(p: &[u8; 3]) -> bool {
    p[0].max(p[1]).max(p[2]) >= SATURATED
}

fn luma_f(p: &[f64; 3]) -> f64 {
    77.0 * p[0] + 150.0 * p[1] + 29.0 * p[2]
}

fn luma(p: &[u8; 3]) -> u32 {
    77 * p[0] as u32 + 150 * p[1] as u32 + 29 * p[2] as u32
}

/// The saturated sticker's colour from its brightest unsaturated pixels (the upper half,
/// by luma, of those in the sticker), scaled so that its largest channel matches the
/// plateau's. `None` when too few such pixels exist.
fn desaturated(img: &RgbImage, quad: &Quad, plateau: &Sample) -> Option<Sample> {
    let (all, step) = pixels_in(img, quad, MAX_RIM_PIXELS)?;
    let floor = NEAR_PLATEAU * luma_f(&plateau.rgb);
    let mut bright: Vec<[u8; 3]> = all
        .into_iter()
        .filter(|p| !saturated(p) && luma(p) as f64 >= floor)
        .collect();
    if bright.len() < MIN_RIM_PIXELS {
        return None;
    }
    let rim = with_sigma(robust_mean(&mut bright)?, step);
    let top = rim.rgb.iter().copied().fold(0.0, f64::max);
    let want = plateau.rgb.iter().copied().fold(0.0, f64::max);
    if top <= 0.0 {
        return None;
    }
    let k = want / top;
    Some(Sample {
        rgb: rim.rgb.map(|v| (v * k).min(255.0)),
        pixels: rim.pixels,
        spread: rim.spread * k,
        sigma: rim.sigma.map(|v| v * k),
    })
}

/// Samples the pixels inside `quad` (image pixel coordinates). `None` when the quad holds
/// no pixel of the image.
pub fn sample_quad(img: &RgbImage, quad: &Quad) -> Option<Sample> {
    let (mut px, step) = pixels_in(img, quad, MAX_PIXELS)?;
    robust_mean(&mut px).map(|s| with_sigma(s, step))
}

/// The pixels inside `quad` (a regular subsample of at most `most`) and the
/// subsampling step. `None` when the quad lies outside the image.
fn pixels_in(img: &RgbImage, quad: &Quad, most: f64) -> Option<(Vec<[u8; 3]>, usize)> {
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
    let step = ((area / most).sqrt().floor() as usize).max(1);
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
    (!px.is_empty()).then_some((px, step))
}

/// Fills `sigma` for a sample whose pixels were taken `step` pixels apart.
fn with_sigma(mut s: Sample, step: usize) -> Sample {
    let per = (step as f64 / NOISE_CORRELATION_PX).min(1.0).powi(2);
    let independent = (s.pixels as f64 * per).max(1.0);
    for c in 0..3 {
        let mean_error = s.sigma[c] / independent.sqrt();
        let floor = ROUNDING_SIGMA.hypot(FRAME_GAIN_SIGMA * s.rgb[c]);
        s.sigma[c] = mean_error.hypot(floor);
    }
    s
}

/// The trimmed, outlier-rejected mean of a set of pixels (reorders `px`); its `sigma` is
/// the per-channel standard deviation of the kept pixels (not yet an error of the mean).
pub fn robust_mean(px: &mut [[u8; 3]]) -> Option<Sample> {
    if px.is_empty() {
        return None;
    }
    px.sort_unstable_by_key(luma);
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
    let inliers = || kept.iter().filter(|p| dist(p, &median) <= limit);
    let spread = inliers().map(|p| dist(p, &rgb)).sum::<f64>() / count as f64;
    let mut var = [0.0; 3];
    for p in inliers() {
        for c in 0..3 {
            var[c] += (p[c] as f64 - rgb[c]).powi(2);
        }
    }
    let sd = var.map(|v| (v / (count.max(2) - 1) as f64).sqrt());
    Some(Sample {
        rgb,
        pixels: count,
        spread,
        sigma: sd,
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
    fn standard_error_has_floors_and_grows_with_pixel_noise() {
        let q = [[2.0, 2.0], [38.0, 2.0], [38.0, 38.0], [2.0, 38.0]];
        let flat = RgbImage::new(40, 40, [200, 100, 50]);
        let s = sample_quad(&flat, &q).unwrap();
        for c in 0..3 {
            let floor = ROUNDING_SIGMA.hypot(FRAME_GAIN_SIGMA * s.rgb[c]);
            assert!((s.sigma[c] - floor).abs() < 1e-9, "{:?}", s.sigma);
        }
        let mut noisy = RgbImage::new(40, 40, [0, 0, 0]);
        for y in 0..40 {
            for x in 0..40 {
                let d = if (x + y) % 2 == 0 { 8 } else { 0 };
                noisy.put(x, y, [196 + d, 96 + d, 46 + d]);
            }
        }
        let n = sample_quad(&noisy, &q).unwrap();
        assert!(
            n.sigma.iter().zip(&s.sigma).all(|(a, b)| a > b),
            "{:?}",
            n.sigma
        );
        assert!(n.sigma.iter().all(|&v| v < 1.0), "{:?}", n.sigma);
    }

    /// A cream sticker clipped to a near-white plateau in its middle, its true hue only in
    /// the unclipped ring around it: the plain reading is the plateau, the rebuilt one has
    /// the cream's channel ratios at the plateau's brightness. An unclipped sticker gets no
    /// rebuilt reading.
    #[test]
    fn a_saturated_sticker_is_rebuilt_from_its_unclipped_pixels() {
        let cream = [228.0, 236.0, 200.0];
        let mut img = RgbImage::new(60, 60, [15, 15, 15]);
        for y in 5..55 {
            for x in 5..55 {
                let r = ((x as f64 - 29.5).powi(2) + (y as f64 - 29.5).powi(2)).sqrt();
                // Light falls off from the middle: clipped within 22 px, below beyond.
                let gain = 1.7 - 0.02 * r;
                let p = cream.map(|c: f64| (c * gain).min(252.0) as u8);
                img.put(x, y, p);
            }
        }
        let quad = [[5.0, 5.0], [55.0, 5.0], [55.0, 55.0], [5.0, 55.0]];
        let centre = [[18.0, 18.0], [42.0, 18.0], [42.0, 42.0], [18.0, 42.0]];
        let (plain, rebuilt) = sample_sticker(&img, &quad, &centre).unwrap();
        assert!(plain.rgb.iter().all(|&c| c > 245.0), "{:?}", plain.rgb);
        let r = rebuilt.expect("saturated centre");
        assert!((r.rgb[1] - 252.0).abs() < 1.5, "{:?}", r.rgb);
        for c in 0..3 {
            let want = cream[c] / cream[1] * 252.0;
            assert!((r.rgb[c] - want).abs() < 4.0, "{:?} vs {want}", r.rgb);
        }
        let flat = RgbImage::new(60, 60, [200, 120, 40]);
        let (_, none) = sample_sticker(&flat, &quad, &centre).unwrap();
        assert!(none.is_none());
    }

    #[test]
    fn empty_regions_give_none() {
        let img = RgbImage::new(10, 10, [0, 0, 0]);
        let q = [[20.0, 20.0], [30.0, 20.0], [30.0, 30.0], [20.0, 30.0]];
        assert!(sample_quad(&img, &q).is_none());
    }
}
