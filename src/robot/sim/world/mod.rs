//! The simulated physical world of the MindCub3r: the motors and what they turn, the
//! mechanism (arms, turntable, end stops, collisions, the cube in the tray), the colour
//! sensor's optics, the wiring of ports to mechanisms and the faults the world can have.
//!
//! "The firmware is LEGO's, the world is ours": one world serves every brick that drives
//! it. Our simulated brick ([`super::brick`]) runs its own interpreter and motor
//! controller and drives the world with a kinematic velocity per output port
//! ([`Drive::Velocity`]); it reads the motors' angles back and asks the colour sensor for
//! readings. A brick running LEGO's motor driver (`d_pwm`) drives it every 2 ms tick with a
//! PWM duty and a bridge mode per output port ([`Drive::Electrical`],
//! [`World::tick_electrical`]) and reads back tacho edges, as its hardware would.
//!
//! ## The API
//!
//! * [`World::new`] builds the world of a [`SimConfig`] around a starting cube.
//! * [`World::step`] advances it by `dt` with one [`Drive`] per output port (A..D) and
//!   returns how far each port's motor turned (motor degrees).
//! * [`World::tick_electrical`] is one tick of a brick that drives the motors
//!   electrically: a duty and a [`Bridge`] mode per output port in, the tacho edges of the
//!   tick (one per whole degree crossed, with its time in the tick and its direction) and
//!   what each input port's sensor sends out ([`Tick`]).
//! * [`World::angle`], [`World::output_type`], [`World::input_type`], [`World::stuck`]
//!   answer what a brick can sense of the motors and ports.
//! * [`World::request_mode`] asks the sensor on an input port for a mode;
//!   [`World::sensor`] says which mode its data is in now (and whether a switch is under
//!   way), [`World::sensor_values`] what it sends, in that mode's raw units (see
//!   [Modes](optics#modes)).
//! * [`World::stall`] / [`World::release`]: a mechanism stopped by an injected stall, and
//!   a motor letting go of a blocked mechanism.
//! * [`World::cube`], [`World::tilts`], [`World::take_log`] report to the simulator's
//!   handle.
//!
//! The world's faults (a jammed mechanism, a tight cube, a tilt that fails, a slipping
//! gear, a covered sensor, a cable in the wrong socket, ...) live in [`faults`]: they act
//! the same whatever brick drives the world.
//!
//! Level: robot (simulators; uses `cube`, `color`, the MindCub3r's primitives and the
//! device numbers of [`crate::robot::ev3::protocol`]). Must not depend on a brick, `job`
//! or `cli`. No printing: the log is read through [`World::take_log`].

pub mod electric;
pub mod faults;
pub mod mindcub3r;
pub mod motor;
pub mod optics;
pub mod wiring;

pub use electric::Bridge;
pub use mindcub3r::Physics;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::color::Appearance;
use crate::cube::FaceletCube;
use crate::robot::ev3::protocol::device;
use crate::robot::sim::config::SimConfig;

use electric::{Crossing, DcMotor, Load};
use faults::Slip;
use mindcub3r::{Event, Mechanism, Motion, TILT_ARM};
use motor::Body;
use optics::{ColorSensor, Optics, SensorState};
use wiring::Wiring;

/// Below this speed (motor °/s) the tilt arm at hold counts as at rest: the cube seats
/// under it before a tilt.
const SEAT_SPEED: f64 = 40.0;

/// What drives one output port's motor during a step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Drive {
    /// Nothing: no job runs on the motor, which stays where it is.
    Idle,
    /// Our brick's controller: the shaft turns at this many motor degrees per second
    /// (signed), as far as the mechanism lets it.
    Velocity(f64),
    /// LEGO's motor driver: a PWM duty (0..10000) and the bridge's mode; the motor turns
    /// as its DC-motor model and its load say ([`electric`]).
    Electrical { duty: u16, bridge: Bridge },
}

/// A tacho edge in a tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    /// Microseconds from the tick's start.
    pub at_us: u16,
    /// +1: the count goes up (forward), −1: down.
    pub dir: i8,
}

/// What a sensor on an input port sends in a tick.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SensorReport {
    /// The mode its data is in.
    pub mode: u8,
    /// The data is valid (a sensor is there and sends).
    pub valid: bool,
    /// A mode switch is under way.
    pub switching: bool,
    /// The values in that mode's raw units (unused ones 0).
    pub values: [i16; 4],
}

/// The world's answer to one electrical tick.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tick {
    /// The tacho edges of each output port's motor, in time order.
    pub edges: [Vec<Edge>; 4],
    /// What each input port's sensor sends now.
    pub sensors: [SensorReport; 4],
}

/// The physical world around a brick.
pub struct World {
    clock: f64,
    /// The motors by mechanism: 0 tilt arm, 1 turntable, 2 sensor arm, 3 nothing (a
    /// placeholder of type "none").
    bodies: [Body; 4],
    wiring: Wiring,
    mech: Mechanism,
    optics: Optics,
    /// The colour sensors' modes, by input port.
    sensors: [Option<ColorSensor>; 4],
    /// The whole degrees each mechanism's motor crossed in the last step while driven
    /// electrically (time from the step's start, direction).
    crossings: [Vec<Crossing>; 3],
    /// The `slip` faults, and each mechanism's motor's starts from rest so far.
    slips: Vec<Slip>,
    starts: [u64; 3],
    was_moving: [bool; 3],
    /// Battery voltage (V).
    battery: f64,
    /// The world's seeded stream (sensor noise, the arms' starting angles). Our brick
    /// draws from it too (see [`World::rng`]), so a seed replays the same run.
    rng: ChaCha8Rng,
    log: Vec<String>,
}

impl World {
    /// The world of `cfg` with `cube` in the tray (robot frame): the tilt arm and the
    /// sensor arm at seeded angles near their stops, the world's faults of `cfg.faults`
    /// in place (each noted in the log).
    pub fn new(cfg: &SimConfig, cube: &FaceletCube) -> World {
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0xB41C);
        let mech = Mechanism::new(cube);
        let appearance = Appearance::new(
            cfg.palette,
            crate::color::Conditions::for_palette(cfg.palette),
            cfg.seed,
        );
        let a0 = rng.gen_range(10.0..50.0);
        let c0 = rng.gen_range(-250.0..-60.0);
        let p = &mech.physics;
        let free = (f64::NEG_INFINITY, f64::INFINITY);
        let large = Some(DcMotor::large());
        let bodies = [
            Body::new(
                device::LARGE_MOTOR,
                a0,
                (0.0, p.arm_max),
                large,
                Load::TILT_ARM,
            ),
            Body::new(device::LARGE_MOTOR, 0.0, free, large, Load::TURNTABLE),
            Body::new(
                device::MEDIUM_MOTOR,
                c0,
                (p.sensor_min, 0.0),
                Some(DcMotor::medium()),
                Load::SENSOR_ARM,
            ),
            Body::new(
                device::NONE,
                0.0,
                (0.0, 0.0),
                None,
                Load { j: 0.0, tau_c: 0.0 },
            ),
        ];
        let wiring = Wiring::new(cfg);
        let sensors = wiring
            .inputs
            .map(|t| (t == device::COLOR).then(ColorSensor::default));
        let mut w = World {
            clock: 0.0,
            bodies,
            wiring,
            mech,
            optics: Optics {
                appearance,
                covered: cfg.faults.covered,
                empty: cfg.faults.empty,
                misread: None,
            },
            sensors,
            crossings: Default::default(),
            slips: Vec::new(),
            starts: [0; 3],
            was_moving: [false; 3],
            battery: cfg.faults.battery_mv.unwrap_or(cfg.battery_mv) as f64 / 1000.0,
            rng,
            log: Vec::new(),
        };
        w.install_faults(cfg, cube);
        w
    }

    fn note(&mut self, s: String) {
        self.log.push(format!("[t={:.3}s] {s}", self.clock));
    }

    /// Log lines (faults, mechanical events) since the last call.
    pub fn take_log(&mut self) -> Vec<String> {
        std::mem::take(&mut self.log)
    }

    /// The world's seeded stream. Our brick draws from the same stream (its motors'
    /// starting counts, the overshoot of its step moves), so that a seed replays one run.
    pub(crate) fn rng(&mut self) -> &mut ChaCha8Rng {
        &mut self.rng
    }

    /// The cube now (robot frame).
    pub fn cube(&self) -> FaceletCube {
        self.mech.cube()
    }

    /// The cube with anything out of square taken to its nearest quarter, as a person
    /// squaring it by hand would (robot frame).
    pub fn squared_cube(&self) -> FaceletCube {
        self.mech.squared()
    }

    /// Tilts performed so far.
    pub fn tilts(&self) -> u64 {
        self.mech.tilts
    }

    /// The battery's voltage (V).
    pub fn battery(&self) -> f64 {
        self.battery
    }

    /// The mechanism on output port `port` (0..3), if a motor is plugged in there.
    fn mechanism(&self, port: usize) -> Option<usize> {
        self.wiring.outputs.get(port).copied().flatten()
    }

    /// The device type of the motor on output port `port` (0..3), `None` when the port is
    /// empty.
    pub fn output_type(&self, port: usize) -> Option<i8> {
        self.mechanism(port).map(|m| self.bodies[m].kind)
    }

    /// The device type on input port `port` (0..3).
    pub fn input_type(&self, port: usize) -> i8 {
        self.wiring.inputs[port]
    }

    /// The physical angle of the motor on output port `port` (motor degrees from the
    /// mechanism's homing stop; 0 for an empty port).
    pub fn angle(&self, port: usize) -> f64 {
        self.mechanism(port).map_or(0.0, |m| self.bodies[m].angle)
    }

    /// Whether the mechanism on `port` cannot move now (jammed, or blocked until its
    /// motor lets go).
    pub fn stuck(&self, port: usize) -> bool {
        self.mechanism(port).is_some_and(|m| self.bodies[m].stuck())
    }

    /// An injected stall: the mechanism on `port` stops where it is until its motor lets
    /// go ([`release`](Self::release)).
    pub fn stall(&mut self, port: usize) {
        if let Some(m) = self.mechanism(port) {
            self.bodies[m].blocked = true;
        }
    }

    /// The motor on `port` stopped pushing (stopped, or started afresh): a mechanism
    /// blocked by a collision or a stall comes free.
    pub fn release(&mut self, port: usize) {
        if let Some(m) = self.mechanism(port) {
            self.bodies[m].blocked = false;
        }
    }

    /// The output port letter of a mechanism's motor, for notes.
    fn port_letter(&self, m: usize) -> char {
        self.wiring.port_letter(m)
    }

    fn block(&mut self, m: usize, why: String) {
        if !self.bodies[m].blocked {
            self.bodies[m].blocked = true;
            let port = self.port_letter(m);
            self.note(format!("mechanical fault: motor {port} jammed: {why}"));
        }
    }

    /// Advances the world by `dt` seconds with `drives[p]` on output port `p`; returns
    /// how far each port's motor turned (motor degrees, after the mechanism's reaction).
    pub fn step(&mut self, dt: f64, drives: &[Drive; 4]) -> [f64; 4] {
        self.clock += dt;
        for c in self.sensors.iter_mut().flatten() {
            c.advance(self.clock);
        }
        let mut by_mech = [Drive::Idle; 4];
        for (port, d) in drives.iter().enumerate() {
            if let Some(m) = self.mechanism(port) {
                by_mech[m] = *d;
            }
        }
        let before = [0, 1, 2].map(|m| self.bodies[m].angle);
        let mech_before = [0, 1, 2].map(|m| self.bodies[m].mech());
        for (m, d) in by_mech.iter().enumerate().take(3) {
            self.crossings[m].clear();
            self.bodies[m].step(dt, d, self.battery, &mut self.crossings[m]);
            self.count_start(m, self.bodies[m].angle - before[m], dt);
        }
        let mut motion = Motion {
            before: mech_before,
            after: [0, 1, 2].map(|m| self.bodies[m].mech()),
            // At rest: no job drives it (our brick), or a driven motor barely moves (a braked
            // motor's hold, the end of a ramp): the cube seats under it.
            arm_idle: match by_mech[TILT_ARM] {
                Drive::Idle => true,
                Drive::Velocity(_) => false,
                Drive::Electrical { .. } => self.bodies[TILT_ARM].omega.abs() < SEAT_SPEED,
            },
        };
        let events = self.mech.react(&mut motion);
        for m in 0..3 {
            let b = &mut self.bodies[m];
            if motion.after[m] != b.mech() {
                // The mechanism put the shaft back: the edges follow it.
                let back = motion.after[m] + b.slip;
                b.omega = 0.0;
                electric::crossings(b.angle, back, dt, 0.0, &mut self.crossings[m]);
                b.angle = back;
            }
        }
        for e in events {
            match e {
                Event::Jam(m, why) => self.block(m, why),
                Event::LayerTurned => {
                    if self
                        .optics
                        .misread
                        .as_mut()
                        .is_some_and(|m| m.layer_turned())
                    {
                        self.note("misread fault over: a layer turned".into());
                    }
                }
                Event::Tilted => {}
                Event::LayerFault(k, off) => self.note(format!(
                    "fault: layer turn {k} goes on with a layer that ends {:.0}° {} the tray",
                    off.abs(),
                    if off < 0.0 { "short of" } else { "past" }
                )),
                Event::TiltFailed(k) => self.note(format!(
                    "fault: tilt {k}: the cube slid back into the tray without rolling over"
                )),
            }
        }
        let mut moved = [0.0; 4];
        for (port, out) in moved.iter_mut().enumerate() {
            if let Some(m) = self.mechanism(port).filter(|&m| m < 3) {
                *out = self.bodies[m].angle - before[m];
            }
        }
        moved
    }

    /// The brick asks the sensor on input port `port` (0..3) for `mode` (a colour sensor
    /// switches in [`optics::MODE_SWITCH_S`]; other sensors have one mode here).
    pub fn request_mode(&mut self, port: usize, mode: u8) {
        let now = self.clock;
        if let Some(c) = self.sensors.get_mut(port).and_then(Option::as_mut) {
            c.request(mode, now);
        }
    }

    /// The mode the data of the sensor on input port `port` is in now; `None` when the
    /// port holds no sensor.
    pub fn sensor(&self, port: usize) -> Option<SensorState> {
        match self.sensors.get(port).copied().flatten() {
            Some(c) => Some(c.state()),
            None => (self.input_type(port) != device::NONE).then_some(SensorState {
                mode: 0,
                switching: false,
            }),
        }
    }

    /// What the sensor on input port `port` sends now, in its present mode's raw units:
    /// one sample of the colour sensor (see [Modes](optics#modes)), the infrared sensor's
    /// proximity of a cube in the tray. `None` when the port holds no sensor or the mode
    /// is not simulated.
    pub fn sensor_values(&mut self, port: usize) -> Option<Vec<i32>> {
        match self.input_type(port) {
            device::COLOR => {
                let mode = self.sensor(port)?.mode;
                let angles = [0, 1, 2].map(|m| self.bodies[m].mech());
                self.optics.values(mode, &self.mech, &angles, &mut self.rng)
            }
            device::INFRARED => Some(vec![26]),
            _ => None,
        }
    }

    /// The present speed of the motor on output port `port` (motor degrees per second).
    pub fn speed(&self, port: usize) -> f64 {
        self.mechanism(port).map_or(0.0, |m| self.bodies[m].omega)
    }

    /// One tick of `dt` seconds for a brick that drives the motors electrically: output
    /// port `p` gets `outputs[p]` (duty 0..10000, bridge mode). Returns each output port's
    /// tacho edges during the tick and what each input port's sensor sends at its end.
    pub fn tick_electrical(&mut self, dt: f64, outputs: &[(u16, Bridge); 4]) -> Tick {
        // A motor let go (its output floats) frees a mechanism a collision blocked, as
        // our brick's stop or next job does ([`World::release`]): otherwise a firmware
        // brick's arm jammed once stays jammed through every later run.
        for (port, &(_, bridge)) in outputs.iter().enumerate() {
            if bridge == Bridge::Coast {
                self.release(port);
            }
        }
        let drives = outputs.map(|(duty, bridge)| Drive::Electrical { duty, bridge });
        self.step(dt, &drives);
        let mut tick = Tick::default();
        for (port, edges) in tick.edges.iter_mut().enumerate() {
            if let Some(m) = self.mechanism(port).filter(|&m| m < 3) {
                let dt_us = (dt * 1e6).round();
                edges.extend(self.crossings[m].iter().map(|&(t, dir)| Edge {
                    at_us: (t * 1e6).round().clamp(0.0, dt_us) as u16,
                    dir,
                }));
            }
        }
        for port in 0..4 {
            let Some(state) = self.sensor(port) else {
                continue;
            };
            let mut values = [0i16; 4];
            if let Some(v) = self.sensor_values(port) {
                for (slot, x) in values.iter_mut().zip(v) {
                    *slot = x.clamp(i16::MIN as i32, i16::MAX as i32) as i16;
                }
            }
            tick.sensors[port] = SensorReport {
                mode: state.mode,
                valid: true,
                switching: state.switching,
                values,
            };
        }
        tick
    }

    /// Test support: the colour sensor on input `port` never finishes a mode switch.
    #[cfg(test)]
    pub fn deafen_sensor(&mut self, port: usize) {
        if let Some(c) = self.sensors[port].as_mut() {
            c.deaf = true;
        }
    }

    /// Test support: puts the motor on `port` at `angle` (physical degrees).
    #[cfg(test)]
    pub fn place(&mut self, port: usize, angle: f64) {
        if let Some(m) = self.mechanism(port) {
            self.bodies[m].angle = angle;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::Size;
    use crate::robot::mindcub3r::model::Primitive;

    const TICK: f64 = 0.002;

    #[test]
    fn a_blocked_mechanism_comes_free_when_its_output_floats() {
        let mut w = World::new(&SimConfig::default(), &FaceletCube::solved(Size::Three));
        w.place(0, 0.0);
        let mut outputs = [(0, Bridge::Coast); 4];
        outputs[1] = (5000, Bridge::Forward);
        w.stall(1);
        let start = w.angle(1);
        for _ in 0..50 {
            w.tick_electrical(TICK, &outputs);
        }
        assert_eq!(w.angle(1), start, "blocked, pushed");
        outputs[1] = (0, Bridge::Coast);
        w.tick_electrical(TICK, &outputs);
        outputs[1] = (5000, Bridge::Forward);
        for _ in 0..50 {
            w.tick_electrical(TICK, &outputs);
        }
        assert!(w.angle(1) > start + 5.0, "let go, then driven again");
    }

    #[test]
    fn electrical_ticks_turn_the_table_and_report_edges_and_the_sensor() {
        let mut w = World::new(&SimConfig::default(), &FaceletCube::solved(Size::Three));
        w.place(0, 0.0); // the tilt arm clear of the cube
        let start = w.angle(1);
        let mut net = 0i64;
        let mut outputs = [(0, Bridge::Coast); 4];
        outputs[1] = (2500, Bridge::Forward);
        let mut ticks = 0;
        while w.angle(1) - start < 268.0 {
            let t = w.tick_electrical(TICK, &outputs);
            assert!(t.edges[1].windows(2).all(|e| e[0].at_us <= e[1].at_us));
            assert!(t.edges[1].iter().all(|e| e.at_us <= 2000));
            assert!(t.edges[0].is_empty() && t.edges[2].is_empty());
            net += t.edges[1].iter().map(|e| e.dir as i64).sum::<i64>();
            ticks += 1;
            assert!(ticks < 5000, "the table never got there");
        }
        outputs[1] = (0, Bridge::Brake);
        for _ in 0..250 {
            let t = w.tick_electrical(TICK, &outputs);
            net += t.edges[1].iter().map(|e| e.dir as i64).sum::<i64>();
        }
        assert_eq!(net, (w.angle(1).floor() - start.floor()) as i64);
        assert!(w.speed(1).abs() < 1.0);
        // A quarter of the table with the arm away: the whole cube turned.
        let mut spun = FaceletCube::solved(Size::Three);
        spun.apply(&crate::cube::Alg::from_moves(vec![Primitive::Spin(1)
            .as_move()
            .unwrap()]))
            .unwrap();
        assert_eq!(w.cube(), spun, "table at {}", w.angle(1) - start);
        // The colour sensor (input 2) sends COL-REFLECT until asked for RGB-RAW.
        let s = w.tick_electrical(TICK, &outputs).sensors[1];
        assert_eq!((s.mode, s.valid, s.switching), (0, true, false));
        assert!((0..=100).contains(&s.values[0]));
        w.request_mode(1, 4);
        let s = w.tick_electrical(TICK, &outputs).sensors[1];
        assert_eq!((s.mode, s.switching), (0, true));
        for _ in 0..10 {
            w.tick_electrical(TICK, &outputs);
        }
        let s = w.tick_electrical(TICK, &outputs).sensors[1];
        assert_eq!((s.mode, s.switching), (4, false));
        assert!(s.values[..3].iter().all(|v| (0..=1023).contains(v)));
        // The infrared sensor on 4; nothing on 1 and 3.
        let t = w.tick_electrical(TICK, &outputs);
        assert!(t.sensors[3].valid && !t.sensors[0].valid && !t.sensors[2].valid);
    }
}
