//! From raw readings to CIELAB: white balance and exposure, the Lab of linear RGB, and
//! each reading's own measurement variance in Lab (device noise or the reading's own
//! standard error, propagated through the conversion by finite differences).
//!
//! Level: part of `color::resolve`; depends on `color::raw` (with the EV3 sensor's nominal
//! white) and `color::profile`. Must not depend on the class models, the search, the
//! synthetic scans or anything above `color`.

use palette::{FromColor, Lab, LinSrgb, Srgb};

use super::model::Model;
use crate::color::profile::Profile;
use crate::color::raw::{RawScan, Scale, EV3_WHITE_COUNTS};

/// The balanced linear RGB of every reading and the divisor used.
pub fn linear_readings(scan: &RawScan, profile: Option<&Profile>) -> (Vec<[f64; 3]>, [f64; 3]) {
    let scale = scan.effective_scale();
    // EV3: the sensor's own LED lights the sticker, so its channel gains are a property of
    // the sensor. A profile measures them; otherwise the nominal gains of the EV3 colour
    // sensor (white ≈ [258, 424, 250] counts) are the physical prior. The k-means and the
    // class models adapt to the scan itself, so a unit whose gains differ somewhat from
    // nominal only distorts the metric a little.
    let gains = match scale {
        Scale::Rgb8 => [1.0; 3],
        Scale::Ev3Raw | Scale::Unit => profile
            .and_then(|p| p.gains)
            .unwrap_or(EV3_WHITE_COUNTS.map(|w| w / 0.85)),
    };
    let mut lin: Vec<[f64; 3]> = scan
        .facelets
        .iter()
        .map(|v| match scale {
            Scale::Rgb8 => {
                let s: Srgb<f64> = Srgb::new(v[0] / 255.0, v[1] / 255.0, v[2] / 255.0);
                let l: LinSrgb<f64> = s.into_linear();
                [l.red, l.green, l.blue]
            }
            Scale::Ev3Raw => std::array::from_fn(|k| v[k] / gains[k]),
            Scale::Unit => std::array::from_fn(|k| v[k] / gains[k]),
        })
        .collect();
    // Exposure: one global factor so that the bright stickers sit near 0.8 (a dark scan is
    // otherwise squeezed into a few Lab units). Camera values may be clipped at 255, so
    // they are only ever brightened. Unread stickers' placeholders do not count.
    let mut peaks: Vec<f64> = lin
        .iter()
        .enumerate()
        .filter(|&(i, _)| scan.is_read(i))
        .map(|(_, c)| c.iter().cloned().fold(0.0, f64::max))
        .collect();
    peaks.sort_by(f64::total_cmp);
    let q = peaks
        .get((peaks.len() * 9) / 10)
        .copied()
        .unwrap_or(0.0)
        .max(1e-6);
    let mut factor = (0.8 / q).min(32.0);
    if scale == Scale::Rgb8 {
        factor = factor.max(1.0);
    }
    for c in &mut lin {
        for v in c.iter_mut() {
            *v *= factor;
        }
    }
    (lin, gains.map(|g| g / factor))
}

/// Linear RGB of one raw reading under the white balance `wb` of [`linear_readings`].
pub(super) fn to_linear(v: [f64; 3], scale: Scale, wb: [f64; 3]) -> [f64; 3] {
    match scale {
        Scale::Rgb8 => {
            let s: Srgb<f64> = Srgb::new(v[0] / 255.0, v[1] / 255.0, v[2] / 255.0);
            let l: LinSrgb<f64> = s.into_linear();
            [l.red / wb[0], l.green / wb[1], l.blue / wb[2]]
        }
        Scale::Ev3Raw | Scale::Unit => std::array::from_fn(|k| v[k] / wb[k]),
    }
}

/// Standard deviation of one raw channel value as the device reports it: quantisation of
/// the (averaged) value plus a small multiplicative part (exposure and LED flicker). A
/// value at the top of the range is clipped: the true value may lie well above it.
pub(super) fn device_sigma(v: f64, scale: Scale, model: &Model) -> f64 {
    let rel = model.noise_scale;
    match scale {
        Scale::Rgb8 if v >= 254.5 => model.clipped_sigma * 255.0,
        Scale::Rgb8 => 0.5f64.hypot(0.002 * rel * v),
        Scale::Ev3Raw if v >= 1019.5 => model.clipped_sigma * 1020.0,
        Scale::Ev3Raw => 1.0f64.hypot(0.004 * rel * v),
        Scale::Unit => 0.002f64.hypot(0.004 * rel * v),
    }
}

/// Whether a raw channel value sits at the top of the device's range.
pub(super) fn clipped(v: f64, scale: Scale) -> bool {
    match scale {
        Scale::Rgb8 => v >= 254.5,
        Scale::Ev3Raw => v >= 1019.5,
        Scale::Unit => false,
    }
}

/// Measurement variance per Lab channel of a raw reading, read under the relative light
/// `gain` (device noise propagated through the conversion by finite differences: a
/// near-black reading has a huge variance in a* and b*, a bright one a small one).
///
/// `own`: the reading's own standard error per raw channel when the scan carries one
/// (`RawScan::sigma`, e.g. from the pixels an image sampler averaged); it replaces the
/// device model, except for a clipped channel, which stays very uncertain whatever its
/// measured spread (every pixel at the top of the range has no spread).
pub(super) fn reading_noise(
    v: [f64; 3],
    own: Option<[f64; 3]>,
    scale: Scale,
    wb: [f64; 3],
    gain: f64,
    lab: &[f64; 3],
    model: &Model,
) -> [f64; 3] {
    let mut var = [0.0; 3];
    for c in 0..3 {
        let mut w = v;
        w[c] += match own {
            Some(s) if !clipped(v[c], scale) => s[c],
            _ => device_sigma(v[c], scale, model),
        };
        let l2 = lab_of_linear(to_linear(w, scale, wb).map(|x| x / gain));
        for k in 0..3 {
            var[k] += (l2[k] - lab[k]).powi(2);
        }
    }
    var
}

/// CIELAB (D65) of linear RGB.
pub fn lab_of_linear(c: [f64; 3]) -> [f64; 3] {
    let lab: Lab<palette::white_point::D65, f64> = Lab::from_color(LinSrgb::new(c[0], c[1], c[2]));
    [lab.l, lab.a, lab.b]
}

/// Lab of every reading (white-balanced) and the balance used.
pub fn scan_lab(scan: &RawScan, profile: Option<&Profile>) -> (Vec<[f64; 3]>, [f64; 3]) {
    let (lin, wb) = linear_readings(scan, profile);
    (lin.into_iter().map(lab_of_linear).collect(), wb)
}

/// A scan from several readings of each sticker (at least one each): each sticker's value
/// is the mean of its readings, and its `sigma` the standard error of that mean per
/// channel, from the readings' own spread where there are two or more (a sticker read at
/// several positions of the sensor or the cube varies by more than the device's noise),
/// never below the device's noise over the square root of their number.
pub fn combine_reads(size: crate::cube::Size, scale: Scale, reads: &[Vec<[f64; 3]>]) -> RawScan {
    let model = Model::default();
    let mut facelets = Vec::with_capacity(reads.len());
    let mut sigma = Vec::with_capacity(reads.len());
    for r in reads {
        let n = r.len().max(1) as f64;
        let mean: [f64; 3] = std::array::from_fn(|k| r.iter().map(|v| v[k]).sum::<f64>() / n);
        let se: [f64; 3] = std::array::from_fn(|k| {
            let device = device_sigma(mean[k], scale, &model) / n.sqrt();
            if r.len() < 2 {
                return device;
            }
            let var = r.iter().map(|v| (v[k] - mean[k]).powi(2)).sum::<f64>() / (n - 1.0);
            (var / n).sqrt().max(device)
        });
        facelets.push(mean);
        sigma.push(se);
    }
    let mut scan = RawScan::new(size, scale, facelets);
    scan.sigma = Some(sigma);
    scan
}
