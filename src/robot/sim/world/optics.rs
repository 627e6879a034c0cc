//! The colour sensor's optics in the simulated world: which sticker (if any) lies under
//! the sensor for a given sensor-arm angle and top-face angle, what the sensor sees there
//! (a sticker through `color::synth::Appearance`, with its own wear and the lighting; black
//! plastic or the tray elsewhere), and the faults of the sensor's view: a covered window,
//! an empty tray, two stickers misread as each other.
//!
//! Level: robot (simulators; uses `cube`, `color`). Must not depend on a brick, `job` or
//! `cli`. No printing.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::color::{Appearance, Scale};
use crate::cube::Size;
use crate::robot::sim::misread::MisreadSensor;

use super::mindcub3r::{sticker_geometry, Mechanism, SENSOR_ARM};

/// What the sensor's window looks at.
pub struct Optics {
    pub appearance: Appearance,
    /// The window is covered (the `covered` fault): everything reads black.
    pub covered: bool,
    /// No cube in the tray (the `empty` fault).
    pub empty: bool,
    /// The `misread` fault, while it lasts.
    pub misread: Option<MisreadSensor>,
}

impl Optics {
    /// Which top-face position (robot frame, facelet index) is under the sensor with the
    /// sensor arm at `arm` degrees, if a sticker is.
    pub fn sticker_under_sensor(mech: &Mechanism, arm: f64) -> Option<usize> {
        let r = mech.physics.radius(arm);
        let n = mech.size.n();
        let (pitch, half) = sticker_geometry(mech.size);
        // Sensor at the front of the top face: picture coordinates x right, y to the front.
        let (px, py) = (0.0, r);
        // The top face has turned by `upper` (+ = clockwise from above): undo it.
        let u = mech.upper.to_radians();
        let (x, y) = (px * u.cos() + py * u.sin(), -px * u.sin() + py * u.cos());
        let offset = (n as f64 - 1.0) / 2.0;
        let col = (x / pitch + offset).round();
        let row = (y / pitch + offset).round();
        if col < 0.0 || row < 0.0 || col >= n as f64 || row >= n as f64 {
            return None;
        }
        let cx = (col - offset) * pitch;
        let cy = (row - offset) * pitch;
        if (x - cx).abs() > half || (y - cy).abs() > half {
            return None;
        }
        Some(row as usize * n + col as usize)
    }

    /// One RGB-RAW sample (r, g, b in 0..1023) of what lies under the sensor, the sensor
    /// arm at `angles[SENSOR_ARM]`.
    pub fn rgb_raw(&self, mech: &Mechanism, angles: &[f64; 3], rng: &mut ChaCha8Rng) -> [i32; 3] {
        if self.covered {
            return [0, 0, 0];
        }
        let under = if self.empty {
            None
        } else {
            Self::sticker_under_sensor(mech, angles[SENSOR_ARM])
        };
        match under {
            Some(at_pos) => {
                // Under a `misread` fault another sticker's reading may stand in.
                let pos = match &self.misread {
                    Some(m) => m.source(at_pos, &mech.ids),
                    None => at_pos,
                };
                let color = mech.colors[pos];
                let id = mech.ids[pos];
                let at = match mech.size {
                    Size::Three => at_pos,
                    Size::Two => [0, 2, 6, 8][at_pos % 4] + 9 * (at_pos / 4),
                };
                let v = self.appearance.reading(color, id, at, Scale::Ev3Raw, rng);
                v.map(|x| x.round() as i32)
            }
            None => {
                // Black plastic between stickers, or the tray.
                let base = [14.0, 18.0, 9.0];
                base.map(|b: f64| (b * (1.0 + 0.1 * rng.gen_range(-1.0..1.0))).round() as i32)
            }
        }
    }
}
