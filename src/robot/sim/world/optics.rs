//! The colour sensor's optics in the simulated world: which sticker (if any) lies under
//! the sensor for a given sensor-arm angle and top-face angle, what the sensor sees there
//! (a sticker through `color::synth::Appearance`, with its own wear and the lighting; black
//! plastic or the tray elsewhere), and the faults of the sensor's view: a covered window,
//! an empty tray, two stickers misread as each other.
//!
//! ## Modes
//!
//! The EV3 colour sensor sends data in one mode at a time and powers up in mode 0
//! (COL-REFLECT). Asked for another mode it goes on sending the old mode's data for a
//! while, then sends in the new one ([`ColorSensor`]). Its answers, per mode, in the
//! sensor's raw units ([`Optics::values`]):
//!
//! | Mode | Name | Values |
//! |------|------|--------|
//! | 0 | COL-REFLECT | reflected light, 0..100 |
//! | 1 | COL-AMBIENT | ambient light, 0..100 |
//! | 2 | COL-COLOR | a colour code 0..7 |
//! | 3 | REF-RAW | two raw values, 0..1023 |
//! | 4 | RGB-RAW | r, g, b, 0..1023 each |
//!
//! The switch takes [`MODE_SWITCH_S`] = 20 ms, a measured figure: a Pybricks user's EV3
//! (pybricks/support issue 14) read the old mode's value 18 ms after asking for
//! COL-REFLECT from COL-COLOR and the new one from 22 ms on; ev3dev issue 1401 found the
//! first data message after a switch still stale. That the switch into and out of RGB-RAW
//! takes as long is an assumption.
//!
//! Level: robot (simulators; uses `cube`, `color`). Must not depend on a brick, `job` or
//! `cli`. No printing.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::color::{Appearance, Scale};
use crate::cube::Size;
use crate::robot::sim::misread::MisreadSensor;

use super::mindcub3r::{sticker_geometry, Mechanism, SENSOR_ARM};

/// The time the colour sensor takes to send data in a new mode (simulated seconds; see
/// [Modes](self#modes)).
pub const MODE_SWITCH_S: f64 = 0.020;

/// What a sensor on an input port is sending now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SensorState {
    /// The mode its data is in.
    pub mode: u8,
    /// A switch to another mode is under way (the data is still the old mode's).
    pub switching: bool,
}

/// A colour sensor's mode and the switch under way, if any.
#[derive(Clone, Copy, Debug, Default)]
pub struct ColorSensor {
    mode: u8,
    /// The mode asked for and the time the sensor starts sending in it.
    switch: Option<(u8, f64)>,
    /// Test support: the sensor never finishes a switch.
    #[cfg(test)]
    pub deaf: bool,
}

impl ColorSensor {
    /// The brick asks for `mode` at time `now`.
    pub fn request(&mut self, mode: u8, now: f64) {
        let target = self.switch.map_or(self.mode, |(m, _)| m);
        if target != mode {
            self.switch = (mode != self.mode).then_some((mode, now + MODE_SWITCH_S));
        }
    }

    /// Time has come to `now`: a switch that is due ends.
    pub fn advance(&mut self, now: f64) {
        #[cfg(test)]
        if self.deaf {
            return;
        }
        if let Some((m, at)) = self.switch {
            if now >= at - 1e-9 {
                self.mode = m;
                self.switch = None;
            }
        }
    }

    pub fn state(&self) -> SensorState {
        SensorState {
            mode: self.mode,
            switching: self.switch.is_some(),
        }
    }
}

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

    /// What the colour sensor sends in `mode`, in that mode's raw units (see
    /// [Modes](self#modes)); `None` for a mode not simulated (5, COL-CAL, and above).
    pub fn values(
        &self,
        mode: u8,
        mech: &Mechanism,
        angles: &[f64; 3],
        rng: &mut ChaCha8Rng,
    ) -> Option<Vec<i32>> {
        if mode > 4 {
            return None;
        }
        let [r, g, b] = self.rgb_raw(mech, angles, rng);
        Some(match mode {
            4 => vec![r, g, b],
            0 => vec![((r + g + b) as f64 / 12.0).min(100.0).round() as i32],
            1 => vec![4],
            2 => vec![color_code([r, g, b].map(f64::from))],
            _ => vec![r, b],
        })
    }
}

/// A COL-COLOR code from RGB-RAW (rough; the scans read RGB-RAW).
fn color_code(rgb: [f64; 3]) -> i32 {
    let [r, g, b] = rgb;
    let sum = r + g + b;
    if sum < 60.0 {
        return 1;
    }
    if r > 1.5 * g && r > 1.5 * b {
        5
    } else if g > r && g > 1.5 * b && r < 0.6 * g {
        3
    } else if b > r && b > 0.8 * g {
        2
    } else if r > b * 2.0 && g > b * 2.0 && sum < 700.0 {
        4
    } else {
        6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mode_switch_takes_its_time_and_a_new_request_replaces_it() {
        let mut c = ColorSensor::default();
        assert_eq!(
            c.state(),
            SensorState {
                mode: 0,
                switching: false
            }
        );
        c.request(4, 1.0);
        c.advance(1.0 + MODE_SWITCH_S / 2.0);
        assert_eq!(
            c.state(),
            SensorState {
                mode: 0,
                switching: true
            }
        );
        c.advance(1.0 + MODE_SWITCH_S);
        assert_eq!(
            c.state(),
            SensorState {
                mode: 4,
                switching: false
            }
        );
        // Asking for the mode it is in changes nothing; asking back for the old mode
        // while a switch is under way cancels the switch.
        c.request(4, 2.0);
        assert!(!c.state().switching);
        c.request(2, 3.0);
        c.request(4, 3.001);
        assert_eq!(
            c.state(),
            SensorState {
                mode: 4,
                switching: false
            }
        );
    }
}
