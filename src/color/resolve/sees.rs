//! Whether a scan can be of a cube at all: some reading is lit, and the readings show six
//! colours. A covered sensor, an empty tray, a cloth or a wall reads dark or as one surface;
//! the resolver would otherwise fit the nearest legal cube to the noise and name stickers to
//! re-scan, when nothing there is a cube.
//!
//! The six-colour test picks readings farthest-first in CIELAB (each pick the reading
//! farthest from those picked before) and measures the sixth pick's distance to its nearest
//! earlier one. For a cube that is about the distance between its two closest colours less
//! their scatter; for one surface it is the surface's noise. Over the real scans in
//! `samples/realdata/cases` (EV3 sensor and camera, worn and speedcubes) the smallest is
//! 17.3 ΔE\*ab, over seeded synthetic scans of every palette (faded ones down to 40 % worn)
//! 18.1; one grey surface with ±3 counts of noise gives 0.6. The line is drawn at
//! [`MIN_DISTINCT_DE`], the distance under which two colours look alike.
//!
//! Level: part of `color::resolve`; depends on `color::raw` and the readings' Lab. Must
//! not depend on the class models, the search, or anything above `color`.

use super::readings::scan_lab;
use crate::color::raw::RawScan;
use crate::cube::Size;

/// A scan whose brightest reading stays under this share of its scale's largest value is
/// dark (5 %: 51 EV3 counts, 13 of 255).
pub const DARK_SHARE: f64 = 0.05;

/// Two colours closer than this in CIELAB (ΔE\*ab, after white balance) look alike.
pub const MIN_DISTINCT_DE: f64 = 8.0;

/// Why a scan is not of a cube.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NoCube {
    #[error("every reading is dark (the brightest is {brightest}, under {share:.0} % of the {scale} scale): the sensor is covered or unplugged, or the tray is empty")]
    Dark {
        brightest: String,
        share: f64,
        scale: &'static str,
    },
    #[error("its readings show fewer than six colours (the sixth most distinct is ΔE {distance:.1} from the others; a cube's colours are at least {min:.0} apart): the scanner sees one surface, not a cube; is the cube in place and lit?")]
    OneSurface { distance: f64, min: f64 },
}

/// A reading darker than this share of the scan's reference sticker brightness (see
/// [`other_size`]) is of the gap between pieces, not of a sticker.
pub const GAP_SHARE: f64 = 0.5;

/// The size of the cube a robot's sensor scan shows when it is not the size scanned for,
/// from where the sensor saw stickers and where the dark gaps between pieces. A 3x3x3's
/// scan reads each face's centre, which on a 2x2x2 is where four pieces meet: all six
/// centres dark say a 2x2x2. A 2x2x2's scan reads the corners only (on a 3x3x3 they fall on
/// its corners), so it needs `top_centre`, one more reading at the top face's centre: a
/// sticker there says a 3x3x3. Dark is under [`GAP_SHARE`] of the scan's fourth-dimmest
/// corner reading (a colour class has four corner stickers at least, so an odd dim reading
/// does not set the bar), brightness being the sum of the three channels. A scan that does
/// not see a cube at all ([`check_sees_a_cube`]) says nothing of its size.
pub fn other_size(scan: &RawScan, top_centre: Option<[f64; 3]>) -> Option<Size> {
    if check_sees_a_cube(scan).is_err() {
        return None;
    }
    let size = scan.cube_size();
    let per = size.per_face();
    let corner = |i: usize| match size {
        Size::Two => true,
        Size::Three => matches!(i % per, 0 | 2 | 6 | 8),
    };
    let mut corners: Vec<f64> = (0..scan.facelets.len())
        .filter(|&i| corner(i) && scan.is_read(i))
        .map(|i| scan.facelets[i].iter().sum())
        .collect();
    corners.sort_by(f64::total_cmp);
    let reference = *corners.get(3).or(corners.last())?;
    let gap = |rgb: &[f64; 3]| rgb.iter().sum::<f64>() < GAP_SHARE * reference;
    match size {
        Size::Three => {
            let centres: Vec<usize> = (0..6).map(|f| f * per + 4).collect();
            (centres.iter().all(|&i| scan.is_read(i))
                && centres.iter().all(|&i| gap(&scan.facelets[i])))
            .then_some(Size::Two)
        }
        Size::Two => top_centre.filter(|c| !gap(c)).map(|_| Size::Three),
    }
}

/// A reading as a message shows it: its three channels in whole counts of its scale.
pub fn reading_words(rgb: [f64; 3]) -> String {
    format!("{:.0}, {:.0}, {:.0}", rgb[0], rgb[1], rgb[2])
}

/// Refuses a scan that is dark or shows fewer than six colours (see the module docs).
pub fn check_sees_a_cube(scan: &RawScan) -> Result<(), NoCube> {
    let scale_max = scan.effective_scale().max_value();
    let read = scan.read_mask();
    let brightest = scan
        .facelets
        .iter()
        .zip(&read)
        .filter(|(_, &r)| r)
        .map(|(f, _)| *f)
        .max_by(|a, b| a.iter().sum::<f64>().total_cmp(&b.iter().sum::<f64>()))
        .unwrap_or([0.0; 3]);
    if brightest.iter().all(|&v| v < DARK_SHARE * scale_max) {
        return Err(NoCube::Dark {
            brightest: reading_words(brightest),
            share: DARK_SHARE * 100.0,
            scale: scan.effective_scale().name(),
        });
    }
    let (labs, _) = scan_lab(scan, None);
    let distance = sixth_colour_distance(&labs, &read);
    if distance < MIN_DISTINCT_DE {
        return Err(NoCube::OneSurface {
            distance,
            min: MIN_DISTINCT_DE,
        });
    }
    Ok(())
}

/// The distance (ΔE\*ab) from the sixth reading picked farthest-first to its nearest earlier
/// pick; unread stickers are left out. 0 with fewer than six readings apart.
pub fn sixth_colour_distance(labs: &[[f64; 3]], read: &[bool]) -> f64 {
    let pts: Vec<[f64; 3]> = labs
        .iter()
        .zip(read)
        .filter(|(_, &r)| r)
        .map(|(l, _)| *l)
        .collect();
    let Some(&first) = pts.first() else {
        return 0.0;
    };
    let de = |a: &[f64; 3], b: &[f64; 3]| (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f64>().sqrt();
    // The first pick is the reading farthest from the first one read, so where the scan
    // starts matters little.
    let far = pts
        .iter()
        .copied()
        .max_by(|a, b| de(a, &first).total_cmp(&de(b, &first)))
        .unwrap_or(first);
    // Each reading's distance to its nearest pick so far.
    let mut near: Vec<f64> = pts.iter().map(|p| de(p, &far)).collect();
    let mut last = 0.0;
    for _ in 1..6 {
        let Some((i, &d)) = near.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)) else {
            return 0.0;
        };
        last = d;
        let pick = pts[i];
        for (n, p) in near.iter_mut().zip(&pts) {
            *n = n.min(de(p, &pick));
        }
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::color::raw::Scale;
    use crate::color::synth::{synth_scan, Appearance, Conditions, Palette};
    use crate::cube::{random_state, Size};
    use rand::SeedableRng;

    fn flat(v: impl Fn(usize) -> [f64; 3], scale: Scale) -> RawScan {
        RawScan::new(Size::Three, scale, (0..54).map(v).collect())
    }

    #[test]
    fn a_covered_sensor_and_one_grey_surface_are_no_cube() {
        let dark = flat(|i| [3.0 + (i % 3) as f64, 4.0, 2.0], Scale::Ev3Raw);
        assert!(matches!(check_sees_a_cube(&dark), Err(NoCube::Dark { .. })));
        let grey = flat(|i| [120.0 + (i % 7) as f64 - 3.0; 3], Scale::Rgb8);
        let e = check_sees_a_cube(&grey).unwrap_err();
        assert!(
            matches!(e, NoCube::OneSurface { distance, .. } if distance < 2.0),
            "{e}"
        );
        // Two surfaces (half the tray lit, half shaded) are still no cube.
        let two = flat(
            |i| {
                if i < 27 {
                    [200.0; 3]
                } else {
                    [60.0, 62.0, 58.0]
                }
            },
            Scale::Rgb8,
        );
        assert!(matches!(
            check_sees_a_cube(&two),
            Err(NoCube::OneSurface { .. })
        ));
    }

    #[test]
    fn every_palette_worn_or_not_sees_a_cube() {
        for pal in Palette::ALL {
            for scale in [Scale::Rgb8, Scale::Ev3Raw] {
                for seed in 0..40u64 {
                    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
                    let size = if seed % 4 == 0 {
                        Size::Two
                    } else {
                        Size::Three
                    };
                    let cube = random_state(size, &mut rng);
                    let mut c = Conditions::for_palette(pal);
                    c.fade = c.fade.max((seed % 5) as f64 * 0.1);
                    let scan = synth_scan(&cube, &Appearance::new(pal, c, seed), scale, &mut rng);
                    assert_eq!(
                        check_sees_a_cube(&scan),
                        Ok(()),
                        "{} seed {seed}",
                        pal.name()
                    );
                }
            }
        }
    }
}
