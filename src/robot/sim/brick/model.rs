//! The simulated brick itself, without any I/O: an interpreter of the direct commands of
//! [`crate::robot::ev3::protocol`] (every parameter form, one command at a time, error
//! replies as in [Execution on the brick](crate::robot::ev3::protocol#execution-on-the-brick)),
//! motors whose counts move over simulated time, the MindCub3r mechanics applied to a
//! virtual cube, and a colour sensor reading the sticker physically under it.
//!
//! The brick's peer in [`super`] feeds it frames from the
//! [pty server](crate::robot::sim::pty) and advances its clock.
//!
//! Level: robot (simulators; uses `cube`, `color::synth`, [`crate::robot::ev3::protocol`]
//! and the MindCub3r's primitives). No I/O, no printing.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::color::{Appearance, Scale};
use crate::cube::{Face, FaceletCube, Move, Size};
use crate::robot::ev3::protocol::{
    self, decode_command, device, encode_reply, op, CommandFrame, Param,
};
use crate::robot::mindcub3r::model::Primitive;

use super::config::{Faults, Port, SimConfig};
use crate::robot::sim::misread::MisreadSensor;

mod interpreter;
mod vm;

/// Simulation step (simulated seconds).
const DT: f64 = 0.002;
/// Simulated time one bytecode instruction takes (see the interpreter's "Time").
const INSTRUCTION_S: f64 = 10e-6;
/// Instructions a command runs when it arrives, before time moves on.
const SLICE: usize = (DT / INSTRUCTION_S) as usize;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Job {
    Idle,
    /// Degrees: ramp-up, constant, ramp-down; travelled so far; the sensor count (whole
    /// degrees) the job started from.
    Step {
        dir: f64,
        vmax: f64,
        r: [f64; 3],
        done: f64,
        from: f64,
    },
    /// Seconds: ramp-up, constant, ramp-down; elapsed so far.
    Time {
        dir: f64,
        vmax: f64,
        t: [f64; 3],
        elapsed: f64,
    },
    /// OUTPUT_SPEED/POWER + START: runs until stopped.
    Run {
        v: f64,
    },
}

#[derive(Clone, Debug)]
struct SimMotor {
    kind: i8,
    full_speed: f64,
    /// Physical angle (degrees; 0 = the end stop the robot homes against).
    phys: f64,
    /// Sensor count = phys − zero.
    zero: f64,
    /// Movement count = phys − move_zero.
    move_zero: f64,
    job: Job,
    /// Present speed (deg/s, signed).
    v: f64,
    pending_speed: i8,
    polarity: f64,
    /// Mechanical limits (physical degrees).
    min: f64,
    max: f64,
    /// Stalled by a fault: does not move until stopped and restarted.
    blocked: bool,
    /// Jammed for good (the `jammed` fault): never moves.
    jammed: bool,
    overshoot: f64,
}

impl SimMotor {
    fn new(kind: i8, full_speed: f64, phys: f64, zero: f64, min: f64, max: f64) -> SimMotor {
        SimMotor {
            kind,
            full_speed,
            phys,
            zero,
            move_zero: phys,
            job: Job::Idle,
            v: 0.0,
            pending_speed: 0,
            polarity: 1.0,
            min,
            max,
            blocked: false,
            jammed: false,
            overshoot: 0.0,
        }
    }

    fn busy(&self) -> bool {
        matches!(self.job, Job::Step { .. } | Job::Time { .. })
    }

    fn count(&self) -> f64 {
        self.phys - self.zero
    }

    /// Advances by `dt`; returns the movement made.
    fn step(&mut self, dt: f64) -> f64 {
        let (dir, v, finish) = match &mut self.job {
            Job::Idle => {
                self.v = 0.0;
                return 0.0;
            }
            Job::Run { v } => (v.signum(), v.abs(), false),
            Job::Step {
                dir, vmax, r, done, ..
            } => {
                let total = r[0] + r[1] + r[2];
                let s = *done;
                let v = if s < r[0] {
                    *vmax * (s / r[0].max(1e-9)).sqrt().max(0.2)
                } else if s > r[0] + r[1] {
                    *vmax * ((total - s) / r[2].max(1e-9)).sqrt().max(0.15)
                } else {
                    *vmax
                };
                let ds = v * dt;
                let finish = s + ds >= total;
                (*dir, v, finish)
            }
            Job::Time {
                dir,
                vmax,
                t,
                elapsed,
            } => {
                let e = *elapsed;
                let total = t[0] + t[1] + t[2];
                let v = if e < t[0] {
                    *vmax * (e / t[0].max(1e-9)).max(0.1)
                } else if e > t[0] + t[1] {
                    *vmax * ((total - e) / t[2].max(1e-9)).max(0.05)
                } else {
                    *vmax
                };
                *elapsed += dt;
                (*dir, v, *elapsed >= total)
            }
        };
        if self.blocked || self.jammed {
            self.v = 0.0;
            return 0.0;
        }
        let mut ds = dir * v * dt * self.polarity;
        if let Job::Step { r, done, .. } = &self.job {
            if finish {
                ds = dir * self.polarity * ((r[0] + r[1] + r[2] - done) + self.overshoot);
            }
        }
        let before = self.phys;
        self.phys = (self.phys + ds).clamp(self.min, self.max);
        let moved = self.phys - before;
        self.v = moved / dt;
        let mut finish = finish;
        let count = self.count().round();
        if let Job::Step { r, done, from, .. } = &mut self.job {
            // A step job ends only when its count is reached, as the firmware's
            // step-limited outputs do (the count is in whole tacho degrees): held short by a
            // stop or an obstacle, the motor stays busy, pushing, until it is stopped.
            let total = r[0] + r[1] + r[2];
            let held = (moved - ds).abs() > 1e-9;
            *done = (*done + moved.abs()).min(total);
            let counted = (count - *from) * dir * self.polarity;
            finish = if held { counted >= total } else { finish };
        }
        if finish {
            self.job = Job::Idle;
            self.v = 0.0;
        }
        moved
    }

    fn speed_pct(&self) -> i8 {
        (self.v / self.full_speed * 100.0)
            .round()
            .clamp(-100.0, 100.0) as i8
    }
}

/// A running command: suspended by OUTPUT_READY / TIMER_READY / SOUND_READY, or in the
/// middle of its instructions when its time slice ran out.
#[derive(Clone, Debug)]
struct Suspended {
    frame: CommandFrame,
    /// Its operations, decoded against the table of operations.
    code: std::sync::Arc<protocol::ops::Walk>,
    /// The next operation to run (an index into `code`).
    pc: usize,
    globals: Vec<u8>,
    locals: Vec<u8>,
    /// Simulated time the command started (TIMER_READ counts from it).
    started: f64,
}

/// The physical MindCub3r geometry the simulator enforces (motor degrees from the stops).
#[derive(Clone, Debug)]
pub struct Physics {
    /// Arm A: below this it is clear of the cube.
    pub arm_clear: f64,
    /// Arm A: holding between these.
    pub arm_hold: (f64, f64),
    /// Arm A: a tilt happens when it passes this coming up from hold.
    pub arm_apex: f64,
    pub arm_max: f64,
    /// Turntable motor degrees per table degree and its sense (+1: + = y).
    pub ratio: f64,
    pub sign: f64,
    /// Sensor arm C (negative inwards): radius in mm over the top face, piecewise linear.
    pub sensor_radius: Vec<(f64, f64)>,
    pub sensor_min: f64,
    /// Layers misaligned by more than this (table degrees) jam the arm.
    pub align_tolerance: f64,
    /// A tilt needs the bottom layer square with the upper layers within this (table °).
    pub tilt_tolerance: f64,
    /// Play between the tray and a held bottom layer (table °): a layer turned exactly to
    /// the quarter ends this much short, which is why turns over-rotate and come back
    /// (see [Over-rotation](crate::robot::mindcub3r#over-rotation)).
    pub layer_play: f64,
}

impl Default for Physics {
    fn default() -> Self {
        Physics {
            arm_clear: 45.0,
            arm_hold: (70.0, 135.0),
            arm_apex: 165.0,
            arm_max: 230.0,
            ratio: 3.0,
            sign: 1.0,
            sensor_radius: vec![
                (-800.0, -6.6),
                (-750.0, 0.0),
                (-650.0, 19.0),
                (-590.0, 26.9),
                (-400.0, 52.0),
                (0.0, 105.0),
            ],
            sensor_min: -800.0,
            align_tolerance: 20.0,
            tilt_tolerance: 4.0,
            layer_play: 5.0,
        }
    }
}

impl Physics {
    fn radius(&self, c: f64) -> f64 {
        let t = &self.sensor_radius;
        if c <= t[0].0 {
            return t[0].1;
        }
        for w in t.windows(2) {
            if c <= w[1].0 {
                let f = (c - w[0].0) / (w[1].0 - w[0].0);
                return w[0].1 + f * (w[1].1 - w[0].1);
            }
        }
        t[t.len() - 1].1
    }
}

/// Sticker pitch and half-width of the sticker itself (mm).
fn sticker_geometry(size: Size) -> (f64, f64) {
    match size {
        Size::Three => (19.0, 8.0),
        Size::Two => (25.0, 10.5),
    }
}

pub(crate) struct Brick {
    pub size: Size,
    pub clock: f64,
    /// Simulated seconds during which at least one motor was running: the robot's own
    /// motion time, free of the gaps in which the brick waited for the host.
    pub motion: f64,
    /// The motors by mechanism: 0 tilt arm, 1 turntable, 2 sensor arm, 3 nothing (a
    /// placeholder of type "none").
    motors: [SimMotor; 4],
    /// Output port (0..3 = A..D) → the mechanism whose motor is plugged in there (`None`:
    /// the port is empty).
    wiring: [Option<usize>; 4],
    physics: Physics,
    /// Sensor ports (0..3) → device type.
    sensors: [i8; 4],
    /// What COM_GET GET_BRICKNAME and UI_READ GET_FW_VERS / GET_HW_VERS answer.
    pub name: String,
    pub firmware: String,
    pub hardware: String,
    /// Battery voltage (V).
    pub battery: f64,
    /// The colour sensor's window is covered.
    covered: bool,
    /// No cube in the tray.
    empty: bool,
    /// The cube in the robot frame (colours) and the physical sticker at each position.
    colors: Vec<Face>,
    ids: Vec<usize>,
    /// Table degrees the upper layers / the bottom layer have turned since the last
    /// quantisation (+ = y).
    upper: f64,
    bottom: f64,
    /// The tray's angle in the same frame (the bottom layer stays within the play of it).
    tray: f64,
    tilting: bool,
    /// The arm has come to rest at hold since it last was away (a tilt must start there).
    seated: bool,
    arm_region: Region,
    appearance: Appearance,
    rng: ChaCha8Rng,
    suspended: Option<Suspended>,
    /// The direct commands' global memory: one buffer that outlives them (see the
    /// interpreter's "Memory").
    cmd_globals: Vec<u8>,
    /// Replies of commands that ended while time advanced, with the time they ended.
    outbox: Vec<(f64, Vec<u8>)>,
    pub faults: Faults,
    commands: u64,
    /// Commands of at least [`super::config::PROGRAM_BYTES`] received.
    programs: u64,
    silent: bool,
    stall_armed: bool,
    /// The running command whose reply a `drop` fault loses when it ends.
    drop_running: Option<u64>,
    /// The next reply gets one byte corrupted (a `corrupt` fault).
    corrupt_next: bool,
    /// Simulated time until which the link is down (a `dropout` fault).
    link_down_until: f64,
    pub log: Vec<String>,
    pub tilts: u64,
    /// The `misread` fault, while it lasts.
    misread: Option<MisreadSensor>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Region {
    Away,
    Between,
    Hold,
    Tilting,
}

impl Brick {
    pub fn new(cfg: &SimConfig, cube: FaceletCube) -> Brick {
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0xB41C);
        let physics = Physics::default();
        let appearance = Appearance::new(
            cfg.palette,
            crate::color::Conditions::for_palette(cfg.palette),
            cfg.seed,
        );
        let a0 = rng.gen_range(10.0..50.0);
        let c0 = rng.gen_range(-250.0..-60.0);
        let motors = [
            SimMotor::new(
                device::LARGE_MOTOR,
                cfg.large_full_speed,
                a0,
                rng.gen_range(-500.0..500.0),
                0.0,
                physics.arm_max,
            ),
            SimMotor::new(
                device::LARGE_MOTOR,
                cfg.large_full_speed,
                0.0,
                rng.gen_range(-500.0..500.0),
                f64::NEG_INFINITY,
                f64::INFINITY,
            ),
            SimMotor::new(
                device::MEDIUM_MOTOR,
                cfg.medium_full_speed,
                c0,
                rng.gen_range(-500.0..500.0),
                physics.sensor_min,
                0.0,
            ),
            SimMotor::new(126, 1.0, 0.0, 0.0, 0.0, 0.0),
        ];
        let mut sensors = [device::NONE; 4];
        let color_port = cfg.color_port.clamp(1, 4) as usize - 1;
        sensors[color_port] = device::COLOR;
        if color_port != 3 {
            sensors[3] = device::INFRARED;
        }
        let mut wiring = [Some(0), Some(1), Some(2), Some(3)];
        for &(a, b) in &cfg.faults.swaps {
            match (a, b) {
                (Port::Output(x), Port::Output(y)) => wiring.swap(x as usize, y as usize),
                (Port::Sensor(x), Port::Sensor(y)) => sensors.swap(x as usize, y as usize),
                _ => {}
            }
        }
        for &p in &cfg.faults.unplugged {
            match p {
                Port::Output(x) => wiring[x as usize] = None,
                Port::Sensor(x) => sensors[x as usize] = device::NONE,
            }
        }
        let mut motors = motors;
        for &port in &cfg.faults.reversed {
            if let Some(m) = wiring[port as usize] {
                motors[m].polarity = -1.0;
            }
        }
        for &port in &cfg.faults.jammed {
            if let Some(m) = wiring[port as usize] {
                motors[m].jammed = true;
            }
        }
        for &port in &cfg.faults.free {
            if let Some(m) = wiring[port as usize] {
                motors[m].min = f64::NEG_INFINITY;
                motors[m].max = f64::INFINITY;
            }
        }
        let n = cube.size().stickers();
        let arm_region = Region::Away;
        let mut b = Brick {
            size: cube.size(),
            clock: 0.0,
            motion: 0.0,
            motors,
            wiring,
            physics,
            sensors,
            name: cfg.brick_name.clone(),
            firmware: "V1.09H".into(),
            hardware: "V0.60".into(),
            battery: cfg.faults.battery_mv.unwrap_or(cfg.battery_mv) as f64 / 1000.0,
            covered: cfg.faults.covered,
            empty: cfg.faults.empty,
            colors: cube.colors().to_vec(),
            ids: (0..n).collect(),
            upper: 0.0,
            bottom: 0.0,
            tray: 0.0,
            tilting: false,
            seated: false,
            arm_region,
            appearance,
            rng,
            suspended: None,
            cmd_globals: vec![0; protocol::ops::MAX_COMMAND_GLOBALS],
            outbox: Vec::new(),
            faults: cfg.faults.clone(),
            commands: 0,
            programs: 0,
            silent: false,
            stall_armed: false,
            drop_running: None,
            corrupt_next: false,
            link_down_until: 0.0,
            log: Vec::new(),
            tilts: 0,
            misread: None,
        };
        b.ids = identity_of(&cube);
        if let Some(m) = &b.faults.misread {
            // spawn_pty checked the pair.
            if let Ok(pair) = m.pair(&cube, cfg.seed) {
                b.misread = Some(MisreadSensor::new(pair, &b.ids));
                b.note(format!(
                    "fault injected: stickers {} and {} read as each other until a layer turns",
                    pair.0, pair.1
                ));
            }
        }
        if b.faults.wrong_device {
            b.sensors[color_port] = device::INFRARED;
            b.note("fault injected: the colour-sensor port holds an infrared sensor".into());
        }
        for (a, c) in cfg.faults.swaps.clone() {
            b.note(format!(
                "fault injected: the devices of ports {a} and {c} are exchanged"
            ));
        }
        for p in cfg.faults.unplugged.clone() {
            b.note(format!("fault injected: nothing is plugged into port {p}"));
        }
        for m in cfg.faults.free.clone() {
            let port = (b'A' + m) as char;
            b.note(format!(
                "fault injected: the mechanism of motor {port} has no end stop"
            ));
        }
        for m in cfg.faults.jammed.clone() {
            let port = (b'A' + m) as char;
            b.note(format!(
                "fault injected: the mechanism of motor {port} is jammed"
            ));
        }
        for m in cfg.faults.reversed.clone() {
            let port = (b'A' + m) as char;
            b.note(format!(
                "fault injected: motor {port}'s polarity was left reversed by an earlier session"
            ));
        }
        b
    }

    pub fn cube(&self) -> FaceletCube {
        FaceletCube::from_colors(self.size, self.colors.clone()).expect("sizes match")
    }

    /// Whether any motor has a job (a step, time or speed job not yet ended or stopped).
    pub fn motors_running(&self) -> bool {
        self.motors.iter().any(|m| m.job != Job::Idle)
    }

    fn note(&mut self, s: String) {
        self.log.push(format!("[t={:.3}s] {s}", self.clock));
    }

    fn region(&self, a: f64) -> Region {
        let p = &self.physics;
        if a < p.arm_clear {
            Region::Away
        } else if a < p.arm_hold.0 {
            Region::Between
        } else if a <= p.arm_hold.1 {
            Region::Hold
        } else {
            Region::Tilting
        }
    }

    fn apply(&mut self, prim: Primitive) {
        let mv: Move = prim.as_move().expect("a cube move");
        let perm = mv.permutation(self.size);
        self.colors = perm.apply(&self.colors);
        self.ids = perm.apply(&self.ids);
    }

    fn misalignment(&self) -> f64 {
        r90(self.upper).max(self.layer_misalignment())
    }

    /// How far the bottom layer is from square with the upper layers.
    fn layer_misalignment(&self) -> f64 {
        r90(self.bottom - self.upper)
    }

    fn block(&mut self, m: usize, why: String) {
        if !self.motors[m].blocked {
            self.motors[m].blocked = true;
            let port = self.port_letter(m);
            self.note(format!("mechanical fault: motor {port} jammed: {why}"));
        }
    }

    /// Advances simulated time by `dt` seconds (in DT steps).
    pub fn advance(&mut self, dt: f64) {
        let steps = (dt / DT).round().max(0.0) as u64;
        for _ in 0..steps {
            self.step_once();
            self.vm_step();
        }
    }

    fn step_once(&mut self) {
        self.clock += DT;
        if self.motors.iter().any(SimMotor::busy) {
            self.motion += DT;
        }
        let a_before = self.motors[0].phys;
        let da = self.motors[0].step(DT);
        let db = self.motors[1].step(DT);
        self.motors[2].step(DT);
        let a = self.motors[0].phys;
        let c = self.motors[2].phys;
        let new_region = self.region(a);
        let sensor_over_cube = self.physics.radius(c) < self.half_width() + 6.0;
        // The arm swinging over the top collides with a sensor arm over the cube.
        if new_region == Region::Tilting && sensor_over_cube && da > 0.0 {
            self.motors[0].phys = a_before;
            self.block(
                0,
                "tilt arm hit the colour-sensor arm (sensor not at clear)".into(),
            );
        }
        if new_region != self.arm_region {
            if matches!(self.arm_region, Region::Away | Region::Between)
                && matches!(new_region, Region::Hold | Region::Tilting)
                && self.misalignment() > self.physics.align_tolerance
            {
                let m = self.misalignment();
                self.motors[0].phys = a_before;
                self.block(
                    0,
                    format!("arm came down on a cube misaligned by {m:.0}° of table"),
                );
            }
            self.arm_region = self.region(self.motors[0].phys);
        }
        match self.arm_region {
            Region::Hold if self.motors[0].job == Job::Idle => self.seated = true,
            Region::Away | Region::Between => self.seated = false,
            _ => {}
        }
        if self.arm_region == Region::Tilting && !self.seated && !self.tilting && da > 0.0 {
            // Swinging up from away without seating at hold: the arm strikes the cube.
            self.motors[0].phys = a_before;
            self.block(
                0,
                "tilt with the arm coming from away (not seated at hold first)".into(),
            );
        }
        let a = self.motors[0].phys;
        if a >= self.physics.arm_apex && !self.tilting && da > 0.0 {
            if self.misalignment() > self.physics.align_tolerance
                || self.layer_misalignment() > self.physics.tilt_tolerance
            {
                let (m, l) = (r90(self.upper), self.layer_misalignment());
                self.block(
                    0,
                    format!(
                        "tilt of a cube {m:.0}° out of square with the bottom layer {l:.1}° off (a layer turned without enough over-rotation?)"
                    ),
                );
            } else {
                self.tilting = true;
                self.quantise(true);
                self.apply(Primitive::Tilt);
                // The cube rolls over into the tray: the old bottom layer (and any offset it
                // had) is now a side layer, and the new bottom layer and the layers above it
                // land square in the tray.
                self.upper = self.tray;
                self.bottom = self.tray;
                self.quantise(true);
                self.tilts += 1;
            }
        }
        if a < self.physics.arm_hold.1 {
            self.tilting = false;
        }
        if db != 0.0 {
            let table = db / self.physics.ratio * self.physics.sign;
            match self.arm_region {
                Region::Away => {
                    self.upper += table;
                    self.bottom += table;
                    self.tray += table;
                }
                Region::Hold => {
                    // The held layer follows the tray once the play is taken up.
                    self.tray += table;
                    let p = self.physics.layer_play;
                    self.bottom = self.bottom.clamp(self.tray - p, self.tray + p);
                }
                Region::Between | Region::Tilting => {
                    let a = self.motors[0].phys;
                    self.motors[1].phys -= db;
                    self.block(
                        1,
                        format!("turntable moved with the tilt arm at {a:.0}° (neither clear nor holding)"),
                    );
                }
            }
            self.quantise(false);
        }
    }

    fn half_width(&self) -> f64 {
        let (pitch, _) = sticker_geometry(self.size);
        pitch * self.size.n() as f64 / 2.0
    }

    /// Turns accumulated table angles into cube moves once they reach a quarter.
    fn quantise(&mut self, force: bool) {
        let tol = if force { 45.0 } else { 8.0 };
        let k = (self.upper / 90.0).round();
        if k != 0.0 && (self.upper - 90.0 * k).abs() < tol {
            let q = k as i64;
            for _ in 0..q.rem_euclid(4) {
                self.apply(Primitive::Spin(1));
            }
            self.upper -= 90.0 * k;
            self.bottom -= 90.0 * k;
            self.tray -= 90.0 * k;
        }
        let rel = self.bottom - self.upper;
        let k = (rel / 90.0).round();
        if k != 0.0 && (rel - 90.0 * k).abs() < tol {
            let q = k as i64;
            for _ in 0..q.rem_euclid(4) {
                self.apply(Primitive::Turn(1));
            }
            if q.rem_euclid(4) != 0 && self.misread.as_mut().is_some_and(|m| m.layer_turned()) {
                self.note("misread fault over: a layer turned".into());
            }
            self.bottom -= 90.0 * k;
            self.tray -= 90.0 * k;
        }
    }

    /// Which top-face position (robot frame, facelet index) is under the sensor, if a
    /// sticker is.
    fn sticker_under_sensor(&self) -> Option<usize> {
        let r = self.physics.radius(self.motors[2].phys);
        let n = self.size.n();
        let (pitch, half) = sticker_geometry(self.size);
        // Sensor at the front of the top face: picture coordinates x right, y to the front.
        let (px, py) = (0.0, r);
        // The top face has turned by `upper` (+ = clockwise from above): undo it.
        let u = self.upper.to_radians();
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

    fn rgb_raw(&mut self) -> [i32; 3] {
        if self.covered {
            return [0, 0, 0];
        }
        let under = if self.empty {
            None
        } else {
            self.sticker_under_sensor()
        };
        match under {
            Some(at_pos) => {
                // Under a `misread` fault another sticker's reading may stand in.
                let pos = match &self.misread {
                    Some(m) => m.source(at_pos, &self.ids),
                    None => at_pos,
                };
                let color = self.colors[pos];
                let id = self.ids[pos];
                let at = match self.size {
                    Size::Three => at_pos,
                    Size::Two => [0, 2, 6, 8][at_pos % 4] + 9 * (at_pos / 4),
                };
                let v = self
                    .appearance
                    .reading(color, id, at, Scale::Ev3Raw, &mut self.rng);
                v.map(|x| x.round() as i32)
            }
            None => {
                // Black plastic between stickers, or the tray.
                let base = [14.0, 18.0, 9.0];
                base.map(|b: f64| (b * (1.0 + 0.1 * self.rng.gen_range(-1.0..1.0))).round() as i32)
            }
        }
    }
}

/// Distance from the nearest multiple of 90°.
fn r90(x: f64) -> f64 {
    (x - 90.0 * (x / 90.0).round()).abs()
}

/// Physical sticker identities of a cube: for a legal cube, the solved-state facelet each
/// sticker came from (so wear stays with the sticker); otherwise position = identity.
fn identity_of(cube: &FaceletCube) -> Vec<usize> {
    use crate::cube::CubieCube;
    match cube.size() {
        Size::Three => {
            if let Some(cc) = CubieCube::from_facelets(cube) {
                return sticker_sources_3(&cc);
            }
        }
        Size::Two => {}
    }
    (0..cube.size().stickers()).collect()
}

fn sticker_sources_3(cc: &crate::cube::CubieCube) -> Vec<usize> {
    use crate::cube::{CORNER_FACELETS, EDGE_FACELETS};
    let mut ids: Vec<usize> = (0..54).collect();
    for (slot, facelets) in CORNER_FACELETS.iter().enumerate() {
        let piece = cc.cp[slot] as usize;
        let ori = cc.co[slot] as usize;
        for k in 0..3 {
            ids[facelets[(k + ori) % 3]] = CORNER_FACELETS[piece][k];
        }
    }
    for (slot, facelets) in EDGE_FACELETS.iter().enumerate() {
        let piece = cc.ep[slot] as usize;
        let ori = cc.eo[slot] as usize;
        for k in 0..2 {
            ids[facelets[(k + ori) % 2]] = EDGE_FACELETS[piece][k];
        }
    }
    ids
}

#[cfg(test)]
mod mechanics {
    use super::*;

    fn run(b: &mut Brick, ops: &str) {
        let bytes: Vec<u8> = ops
            .split_whitespace()
            .map(|t| u8::from_str_radix(t, 16).unwrap())
            .collect();
        let mut frame = vec![0, 0, 1, 0, 0, 0, 0];
        frame.extend(bytes);
        let len = (frame.len() - 2) as u16;
        frame[..2].copy_from_slice(&len.to_le_bytes());
        b.handle(&frame);
        for _ in 0..400 {
            b.advance(0.01);
            if b.poll_suspended().is_some() || !b.is_waiting() {
                break;
            }
        }
    }

    fn brick() -> Brick {
        let mut b = Brick::new(&SimConfig::default(), FaceletCube::solved(Size::Three));
        // Arm to its stop (physical 0), sensor arm parked.
        b.motors[0].phys = 0.0;
        b.motors[2].phys = 0.0;
        b
    }

    #[test]
    fn a_tilt_straight_from_away_is_a_fault() {
        let mut b = brick();
        // Arm A +200° in one move (no stop at hold), wait.
        run(&mut b, "AE 00 01 81 28 00 82 C8 00 00 01 AA 00 01");
        assert!(
            b.log.iter().any(|l| l.contains("coming from away")),
            "{:?}",
            b.log
        );
        assert!(b.cube().is_solved());
    }

    #[test]
    fn a_turn_needs_the_arm_at_hold_and_a_tilt_needs_the_sensor_clear() {
        let mut b = brick();
        // Arm to hold (100°), then the table +270 (one quarter): bottom layer turned (D').
        run(&mut b, "AE 00 01 81 28 00 81 64 00 01 AA 00 01");
        run(&mut b, "AE 00 02 81 28 00 82 0E 01 00 01 AA 00 02");
        let mut expect = FaceletCube::solved(Size::Three);
        expect
            .apply(&crate::cube::Alg::from_moves(vec![Primitive::Turn(1)
                .as_move()
                .unwrap()]))
            .unwrap();
        assert_eq!(b.cube(), expect);
        // Sensor arm over the centre, then tilt: the arms collide.
        run(&mut b, "AE 00 04 81 C4 00 82 EE 02 00 01 AA 00 04");
        run(&mut b, "AE 00 01 81 28 00 81 5A 00 01 AA 00 01");
        assert!(
            b.log
                .iter()
                .any(|l| l.contains("hit the colour-sensor arm")),
            "{:?}",
            b.log
        );
        assert_eq!(b.cube(), expect, "no tilt happened");
    }

    #[test]
    fn a_layer_turn_must_over_rotate_to_end_square() {
        for over in [false, true] {
            let mut b = brick();
            run(&mut b, "AE 00 01 81 28 00 81 64 00 01 AA 00 01"); // hold
            if over {
                // +288 then back 18 at low speed (the driver's turn).
                run(&mut b, "AE 00 02 81 28 00 82 20 01 00 01 AA 00 02");
                run(&mut b, "AE 00 02 81 F6 00 12 00 01 AA 00 02");
            } else {
                run(&mut b, "AE 00 02 81 28 00 82 0E 01 00 01 AA 00 02");
            }
            run(&mut b, "AE 00 01 81 28 00 81 5A 00 01 AA 00 01"); // up to 190: tilt
            let faulted = b
                .log
                .iter()
                .any(|l| l.contains("without enough over-rotation"));
            assert_eq!(faulted, !over, "over-rotation {over}: {:?}", b.log);
            assert_eq!(b.tilts, over as u64);
        }
    }

    #[test]
    fn the_table_moving_with_the_arm_half_down_jams() {
        let mut b = brick();
        run(&mut b, "AE 00 01 81 28 00 81 37 00 01 AA 00 01"); // arm to 55°: neither
        run(&mut b, "AE 00 02 81 28 00 82 0E 01 00 01 A6 00 02");
        b.advance(1.0);
        assert!(
            b.log
                .iter()
                .any(|l| l.contains("neither clear nor holding")),
            "{:?}",
            b.log
        );
    }
}
