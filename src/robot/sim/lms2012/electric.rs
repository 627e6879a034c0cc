//! The world answering d_pwm's ticks: each motor's speed follows its PWM duty, tacho
//! edges are the degrees its shaft crosses, and the colour sensor switches modes and
//! sends what it sees.
//!
//! Level: robot (simulators). No I/O.

use crate::robot::ev3::protocol::device;
use crate::robot::sim::world::{Drive, World};

use super::wire::{Bridge, Edge, Output, SensorData, WorldTick};

/// Sub-steps of one tick.
const SUBSTEPS: usize = 20;
/// How long the colour sensor takes to send in a new mode (s).
const SWITCH_S: f64 = 0.030;

/// Each output port's motor as its bridge drives it, and the sensors' modes.
#[derive(Clone, Debug)]
pub struct Electric {
    /// Shaft speed per output port (deg/s).
    speed: [f64; 4],
    /// The physical angle at the last edge count (deg), per port.
    counted: [f64; 4],
    /// Per input port: the mode sent, the one asked for and when it will be sent.
    modes: [(u8, Option<(u8, f64)>); 4],
    clock: f64,
}

impl Electric {
    pub fn new(world: &World) -> Electric {
        Electric {
            speed: [0.0; 4],
            counted: [0, 1, 2, 3].map(|p| world.angle(p).floor()),
            modes: [(0, None); 4],
            clock: 0.0,
        }
    }

    /// Whether a motor still turns.
    pub fn moving(&self) -> bool {
        self.speed.iter().any(|v| v.abs() > 1.0)
    }

    /// One tick of `dt` seconds with d_pwm's `outputs`.
    pub fn tick(
        &mut self,
        world: &mut World,
        dt: f64,
        outputs: &[Output; 4],
        requests: &[Option<u8>; 4],
    ) -> WorldTick {
        let mut answer = WorldTick::default();
        let h = dt / SUBSTEPS as f64;
        let volts = world.battery();
        for k in 0..SUBSTEPS {
            let mut drives = [Drive::Idle; 4];
            for p in 0..4 {
                // No-load speed at 9 V, time constant, and the duty friction eats (d_pwm's
                // own power floors, 5 % and 20 %, are set to overcome it).
                let (no_load, tau, dead) = match world.output_type(p) {
                    Some(device::LARGE_MOTOR) => (1050.0, 0.060, 0.05),
                    Some(device::MEDIUM_MOTOR) => (1560.0, 0.025, 0.18),
                    _ => continue,
                };
                let o = outputs[p];
                let d = ((o.duty as f64 / 10_000.0 - dead).max(0.0) / (1.0 - dead)) * volts / 9.0;
                let (target, tau) = match o.bridge {
                    Bridge::Forward => (d * no_load, tau),
                    Bridge::Reverse => (-d * no_load, tau),
                    Bridge::Brake => (0.0, tau / 4.0),
                    Bridge::Coast => (0.0, tau * 3.0),
                };
                self.speed[p] += (target - self.speed[p]) * (h / tau).min(1.0);
                // At rest and not pushed (a braked motor's hold servo gives small duties
                // now and then), the motor counts as idle for the mechanism.
                if self.speed[p].abs() > 2.0 {
                    drives[p] = Drive::Velocity(self.speed[p]);
                }
            }
            let before = [0, 1, 2, 3].map(|p| world.angle(p));
            world.step(h, &drives);
            for p in 0..4 {
                let a = world.angle(p);
                let driven = matches!(drives[p], Drive::Velocity(_));
                if driven && (a - before[p]).abs() + 1e-9 < (self.speed[p] * h).abs() * 0.5 {
                    // Held by the mechanism.
                    self.speed[p] = (a - before[p]) / h;
                }
                let at_us = (((k + 1) as f64 * h) * 1e6).round() as u16;
                while a >= self.counted[p] + 1.0 {
                    self.counted[p] += 1.0;
                    answer.edges[p].push(Edge { at_us, dir: 1 });
                }
                while a < self.counted[p] {
                    self.counted[p] -= 1.0;
                    answer.edges[p].push(Edge { at_us, dir: -1 });
                }
            }
        }
        self.clock += dt;
        for p in 0..4 {
            if let Some(m) = requests[p] {
                self.modes[p].1 = Some((m, self.clock + SWITCH_S));
            }
            if let Some((m, at)) = self.modes[p].1 {
                if self.clock >= at {
                    self.modes[p] = (m, None);
                }
            }
            let t = world.input_type(p);
            let (mode, pending) = self.modes[p];
            answer.sensors[p] = match t {
                device::COLOR => {
                    let mut s = SensorData {
                        mode,
                        valid: pending.is_none(),
                        switching: pending.is_some(),
                        values: [0; 4],
                    };
                    let rgb = world.rgb_raw();
                    match mode {
                        4 => {
                            for i in 0..3 {
                                s.values[i] = rgb[i].clamp(0, 1023) as i16;
                            }
                        }
                        _ => {
                            s.values[0] =
                                ((rgb[0] + rgb[1] + rgb[2]) as f64 / 3.0 / 4.0).min(100.0) as i16
                        }
                    }
                    s
                }
                device::INFRARED => SensorData {
                    mode: 0,
                    valid: true,
                    switching: false,
                    values: [26, 0, 0, 0],
                },
                _ => SensorData::default(),
            };
        }
        answer
    }
}
