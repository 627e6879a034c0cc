//! The world's faults: what the mechanism, the cube, the sensors and the wiring can do
//! wrong, whatever brick drives the world (the table of every fault is in
//! [Faults](crate::robot::sim::config#faults)). They act physically: a jammed mechanism
//! does not move, a tight cube's layer ends short of the tray, a tilt that fails leaves
//! the cube where it was, a slipping gear leaves its mechanism behind its motor; nothing
//! tells a check what happened.
//!
//! The items that leave out which turn, tilt or start they hit, or by how much, get a
//! seeded draw here, from a stream of its own (the sensor's noise is the same with or
//! without them); the log names what was drawn.
//!
//! Level: robot (simulators). Must not depend on a brick, `job` or `cli`. No printing.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::cube::FaceletCube;
use crate::robot::sim::config::SimConfig;
use crate::robot::sim::misread::MisreadSensor;

use super::World;

/// A gear that skips: mechanism `mech` at its motor's `at`-th start from rest, by `deg`
/// motor degrees.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slip {
    pub mech: usize,
    pub at: u64,
    pub deg: f64,
}

/// The speed below which a motor is at rest, for counting its starts (motor °/s).
pub const REST_DPS: f64 = 10.0;

/// "1st", "2nd", ... for notes.
fn nth(k: u64) -> String {
    let suffix = match (k % 10, k % 100) {
        (1, x) if x != 11 => "st",
        (2, x) if x != 12 => "nd",
        (3, x) if x != 13 => "rd",
        _ => "th",
    };
    format!("{k}{suffix}")
}

impl World {
    /// Puts the world faults of `cfg` in place (the starting cube `cube`), each noted in
    /// the log.
    pub(super) fn install_faults(&mut self, cfg: &SimConfig, cube: &FaceletCube) {
        let f = &cfg.faults;
        for &port in &f.jammed {
            if let Some(m) = self.wiring.outputs[port as usize] {
                self.bodies[m].jammed = true;
            }
        }
        for &port in &f.free {
            if let Some(m) = self.wiring.outputs[port as usize] {
                self.bodies[m].min = f64::NEG_INFINITY;
                self.bodies[m].max = f64::INFINITY;
            }
        }
        if let Some(m) = &f.misread {
            // spawn_pty checked the pair.
            if let Ok(pair) = m.pair(cube, cfg.seed) {
                self.optics.misread = Some(MisreadSensor::new(pair, &self.mech.ids));
                self.note(format!(
                    "fault injected: stickers {} and {} read as each other until a layer turns",
                    pair.0, pair.1
                ));
            }
        }
        if f.wrong_device {
            self.note("fault injected: the colour-sensor port holds an infrared sensor".into());
        }
        for (a, c) in &f.swaps {
            self.note(format!(
                "fault injected: the devices of ports {a} and {c} are exchanged"
            ));
        }
        for p in &f.unplugged {
            self.note(format!("fault injected: nothing is plugged into port {p}"));
        }
        for m in &f.free {
            let port = (b'A' + m) as char;
            self.note(format!(
                "fault injected: the mechanism of motor {port} has no end stop"
            ));
        }
        for m in &f.jammed {
            let port = (b'A' + m) as char;
            self.note(format!(
                "fault injected: the mechanism of motor {port} is jammed"
            ));
        }
        self.install_cube_faults(cfg);
    }

    /// `short-turn`, `overshoot`, `tilt-fail` and `slip`, with their seeded draws.
    fn install_cube_faults(&mut self, cfg: &SimConfig) {
        let f = &cfg.faults;
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0xFA_0175);
        for t in &f.layer_turns {
            let k = t.at.unwrap_or_else(|| rng.gen_range(1..=6));
            let deg = t.degrees.unwrap_or_else(|| rng.gen_range(10..=40)) as f64;
            let (off, how) = if t.short {
                (-deg, "short of the tray (a tight cube)")
            } else {
                (deg, "past the tray (a loose cube)")
            };
            self.mech.faults.layer_turns.push((k, off));
            self.note(format!(
                "fault injected: the {} layer turn leaves the layer {deg}° {how}",
                nth(k)
            ));
        }
        for t in &f.tilt_fails {
            let k = t.unwrap_or_else(|| rng.gen_range(1..=5));
            self.mech.faults.tilt_fails.push(k);
            self.note(format!(
                "fault injected: the {} tilt does not roll the cube over",
                nth(k)
            ));
        }
        for s in &f.slips {
            let at = s.at.unwrap_or_else(|| rng.gen_range(2..=6));
            let deg = s.degrees.unwrap_or_else(|| rng.gen_range(10..=40)) as f64;
            let letter = (b'A' + s.port) as char;
            match self.wiring.outputs[s.port as usize].filter(|&m| m < 3) {
                Some(mech) => {
                    self.slips.push(Slip { mech, at, deg });
                    self.note(format!(
                        "fault injected: the gear of motor {letter}'s mechanism skips {deg}° at the motor's {} start",
                        nth(at)
                    ));
                }
                None => self.note(format!(
                    "fault not injected: no mechanism on port {letter} to slip"
                )),
            }
        }
    }

    /// Motor `m` moved by `moved` in a step of `dt`: counts its starts from rest and
    /// sets off the skip of a `slip` fault at its start.
    pub(super) fn count_start(&mut self, m: usize, moved: f64, dt: f64) {
        let moving = moved.abs() >= REST_DPS * dt;
        if moving && !self.was_moving[m] {
            self.starts[m] += 1;
            let k = self.starts[m];
            if let Some(s) = self
                .slips
                .iter()
                .find(|s| s.mech == m && s.at == k)
                .copied()
            {
                self.bodies[m].slip_pending += s.deg;
                let letter = self.wiring.port_letter(m);
                self.note(format!(
                    "fault: the gear of motor {letter}'s mechanism skips {}° as the motor starts",
                    s.deg
                ));
            }
        }
        self.was_moving[m] = moving;
        self.bodies[m].skip(moved);
    }
}

#[cfg(test)]
mod tests {
    use super::nth;
    use crate::cube::{Alg, FaceletCube, Size};
    use crate::robot::mindcub3r::model::Primitive;
    use crate::robot::sim::config::SimConfig;
    use crate::robot::sim::world::{Drive, World};

    const DT: f64 = 0.002;

    fn world(faults: &str) -> World {
        let cfg = SimConfig {
            faults: faults.parse().unwrap(),
            ..SimConfig::default()
        };
        let mut w = World::new(&cfg, &FaceletCube::solved(Size::Three));
        w.place(0, 0.0);
        w.step(DT, &[Drive::Idle; 4]);
        w
    }

    /// Turns the motor on `port` by `deg` at 400 °/s (kinematically), then lets it rest.
    fn turn(w: &mut World, port: usize, deg: f64) {
        let from = w.angle(port);
        let mut drives = [Drive::Idle; 4];
        drives[port] = Drive::Velocity(400.0 * deg.signum());
        let mut n = 0;
        while (w.angle(port) - from).abs() < deg.abs() - 1e-9 && n < 5000 {
            let left = deg.abs() - (w.angle(port) - from).abs();
            drives[port] = Drive::Velocity(deg.signum() * (400.0f64).min(left / DT));
            w.step(DT, &drives);
            n += 1;
        }
        for _ in 0..5 {
            w.step(DT, &[Drive::Idle; 4]);
        }
    }

    fn after(moves: &[Primitive]) -> FaceletCube {
        let mut c = FaceletCube::solved(Size::Three);
        let alg = Alg::from_moves(moves.iter().map(|p| p.as_move().unwrap()).collect());
        c.apply(&alg).unwrap();
        c
    }

    /// A layer turn as the robot makes it: arm to hold, the table a quarter and 6 table
    /// degrees more, back 6, arm away.
    fn layer_turn(w: &mut World) {
        turn(w, 0, 100.0);
        turn(w, 1, 288.0);
        turn(w, 1, -18.0);
        turn(w, 0, -100.0);
    }

    /// A tilt: arm to hold, up past the apex, back to hold, away.
    fn tilt(w: &mut World) {
        turn(w, 0, 100.0);
        turn(w, 0, 90.0);
        turn(w, 0, -90.0);
        turn(w, 0, -100.0);
    }

    #[test]
    fn a_tight_or_loose_cube_leaves_its_layer_off_the_tray() {
        // Without a fault the layer turns a quarter.
        let mut w = world("");
        layer_turn(&mut w);
        assert_eq!(w.cube(), after(&[Primitive::Turn(1)]));
        assert!(w.mech.layer_misalignment() < 1.0);
        // 60° short: no quarter, a layer 30-odd degrees out of square.
        let mut w = world("short-turn@1=60");
        layer_turn(&mut w);
        assert!(w.cube().is_solved());
        let off = w.mech.layer_misalignment();
        assert!((25.0..40.0).contains(&off), "{off}");
        // A whole quarter past: the layer turns half a turn.
        let mut w = world("overshoot@2=90");
        layer_turn(&mut w);
        assert_eq!(
            w.cube(),
            after(&[Primitive::Turn(1)]),
            "the first turn is sound"
        );
        layer_turn(&mut w);
        assert_eq!(w.cube(), after(&[Primitive::Turn(1), Primitive::Turn(2)]));
        assert!(w
            .take_log()
            .iter()
            .any(|l| l.contains("layer turn 2 goes on")));
    }

    #[test]
    fn a_failed_tilt_leaves_the_cube_as_it_was() {
        let mut w = world("tilt-fail@2");
        tilt(&mut w);
        assert_eq!(w.cube(), after(&[Primitive::Tilt]));
        tilt(&mut w);
        assert_eq!(
            w.cube(),
            after(&[Primitive::Tilt]),
            "the second tilt failed"
        );
        tilt(&mut w);
        assert_eq!(w.cube(), after(&[Primitive::Tilt, Primitive::Tilt]));
        assert_eq!(w.tilts(), 2);
        assert!(w
            .take_log()
            .iter()
            .any(|l| l.contains("without rolling over")));
    }

    #[test]
    fn a_slipping_gear_leaves_the_arm_behind_its_motor() {
        let mut w = world("slip@2=A:30");
        turn(&mut w, 0, 50.0);
        assert_eq!(w.bodies[0].mech(), w.angle(0), "the first start is sound");
        turn(&mut w, 0, 50.0);
        let lag = w.angle(0) - w.bodies[0].mech();
        assert!((lag - 30.0).abs() < 1e-6, "{lag}");
        // The arm stood still for the first 30° of the move.
        assert!((w.bodies[0].mech() - 70.0).abs() < 1e-6);
        // Back to the stop: the motor stops 30° before its count's zero.
        turn(&mut w, 0, -100.0);
        assert!((w.bodies[0].mech() - 0.0).abs() < 1e-6);
        assert!((w.angle(0) - 30.0).abs() < 1e-6, "{}", w.angle(0));
    }

    #[test]
    fn left_out_counts_and_degrees_are_drawn_from_the_seed() {
        let draw = |seed: u64| {
            let cfg = SimConfig {
                seed,
                faults: "short-turn, tilt-fail, slip=C".parse().unwrap(),
                ..SimConfig::default()
            };
            let w = World::new(&cfg, &FaceletCube::solved(Size::Three));
            (
                w.mech.faults.layer_turns.clone(),
                w.mech.faults.tilt_fails.clone(),
                w.slips.clone(),
            )
        };
        assert_eq!(draw(5), draw(5));
        let all: Vec<_> = (0..20).map(draw).collect();
        assert!(all.iter().any(|d| *d != all[0]), "the seed chooses");
        for (turns, tilts, slips) in all {
            let (k, off) = turns[0];
            assert!((1..=6).contains(&k) && (-40.0..=-10.0).contains(&off));
            assert!((1..=5).contains(&tilts[0]));
            assert!(slips[0].mech == 2 && (2..=6).contains(&slips[0].at));
        }
    }

    #[test]
    fn ordinals_read_as_english() {
        let got: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 101].map(nth).to_vec();
        assert_eq!(
            got,
            ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"]
        );
    }
}
