//! The simulated brick itself, without any I/O: a direct-command interpreter (doc §10),
//! motors whose counts move over simulated time, the MindCub3r mechanics applied to a
//! virtual cube, and a colour sensor reading the sticker physically under it.
//!
//! The pty server in `sim/mod.rs` feeds it frames and advances its clock.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::color::{Appearance, Scale};
use crate::cube::{Face, FaceletCube, Move, Size};
use crate::robot::model::Primitive;
use crate::robot::protocol::{
    self, decode_command, decode_param, device, encode_reply, op, CommandFrame, Param,
};

use super::{Faults, SimConfig};

/// Simulation step (simulated seconds).
const DT: f64 = 0.002;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Job {
    Idle,
    /// Degrees: ramp-up, constant, ramp-down; travelled so far.
    Step {
        dir: f64,
        vmax: f64,
        r: [f64; 3],
        done: f64,
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
            Job::Step { dir, vmax, r, done } => {
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
        if self.blocked {
            self.v = 0.0;
            return 0.0;
        }
        let mut ds = dir * v * dt * self.polarity;
        if let Job::Step { r, done, .. } = &mut self.job {
            let total = r[0] + r[1] + r[2];
            if finish {
                ds = dir * self.polarity * ((total - *done) + self.overshoot);
            }
            *done += (v * dt).min(total - *done);
        }
        let before = self.phys;
        self.phys = (self.phys + ds).clamp(self.min, self.max);
        let moved = self.phys - before;
        self.v = moved / dt;
        let clamped = (moved - ds).abs() > 1e-9;
        let near_end = match self.job {
            Job::Step { r, done, .. } => r[0] + r[1] + r[2] - done < 5.0,
            _ => false,
        };
        // A step job ending against a stop within a few degrees counts as done (the
        // firmware's regulation accepts it); further away it is a stall.
        if finish || (clamped && near_end) {
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

/// A command suspended by OUTPUT_READY / TIMER_READY / SOUND_READY.
#[derive(Clone, Debug)]
struct Suspended {
    frame: CommandFrame,
    pc: usize,
    globals: Vec<u8>,
    locals: Vec<u8>,
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
    /// (mechanics doc §3.1).
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
    motors: [SimMotor; 4],
    physics: Physics,
    /// Sensor ports (0..3) → device type.
    sensors: [i8; 4],
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
    pub faults: Faults,
    commands: u64,
    silent: bool,
    stall_armed: bool,
    pub log: Vec<String>,
    pub tilts: u64,
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
        let n = cube.size().stickers();
        let arm_region = Region::Away;
        let mut b = Brick {
            size: cube.size(),
            clock: 0.0,
            motion: 0.0,
            motors,
            physics,
            sensors,
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
            faults: cfg.faults.clone(),
            commands: 0,
            silent: false,
            stall_armed: false,
            log: Vec::new(),
            tilts: 0,
        };
        b.ids = identity_of(&cube);
        if b.faults.wrong_device {
            b.sensors[color_port] = device::INFRARED;
            b.note("fault injected: the colour-sensor port holds an infrared sensor".into());
        }
        b
    }

    pub fn cube(&self) -> FaceletCube {
        FaceletCube::from_colors(self.size, self.colors.clone()).expect("sizes match")
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
            let port = (b'A' + m as u8) as char;
            self.note(format!("mechanical fault: motor {port} jammed: {why}"));
        }
    }

    /// Advances simulated time by `dt` seconds (in DT steps).
    pub fn advance(&mut self, dt: f64) {
        let steps = (dt / DT).round().max(0.0) as u64;
        for _ in 0..steps {
            self.step_once();
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
        match self.sticker_under_sensor() {
            Some(pos) => {
                let color = self.colors[pos];
                let id = self.ids[pos];
                let at = match self.size {
                    Size::Three => pos,
                    Size::Two => [0, 2, 6, 8][pos % 4] + 9 * (pos / 4),
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

    /// Handles one frame; returns the reply bytes to send (if any).
    pub fn handle(&mut self, frame: &[u8]) -> Option<Vec<u8>> {
        self.commands += 1;
        let n = self.commands;
        if self.faults.silent_at.is_some_and(|s| n >= s) {
            if !self.silent {
                self.silent = true;
                self.note(format!("fault injected: link silent from command {n} on"));
            }
            return None;
        }
        if self.faults.stall_at == Some(n) {
            self.stall_armed = true;
            self.note(format!(
                "fault injected: the next positioning move from command {n} on stalls"
            ));
        }
        let drop = self.faults.drop_at == Some(n);
        let reply = self.handle_inner(frame);
        if drop && reply.is_some() {
            self.note(format!("fault injected: reply to command {n} lost"));
            return None;
        }
        reply
    }

    fn handle_inner(&mut self, frame: &[u8]) -> Option<Vec<u8>> {
        let f = match decode_command(frame) {
            Ok(f) => f,
            Err(e) => {
                self.note(format!("undecodable frame ({e}): {}", protocol::hex(frame)));
                if frame.len() >= 5 && frame[4] & 0x80 == 0 {
                    let counter = u16::from_le_bytes([frame[2], frame[3]]);
                    return Some(encode_reply(counter, false, &[]));
                }
                return None;
            }
        };
        if f.is_system() {
            if !f.wants_reply() {
                return None;
            }
            let cmd = f.body.first().copied().unwrap_or(0);
            let mut out = vec![0, 0];
            out.extend_from_slice(&f.counter.to_le_bytes());
            out.extend_from_slice(&[protocol::SYSTEM_REPLY_ERROR, cmd, 0x0A]);
            let len = (out.len() - 2) as u16;
            out[..2].copy_from_slice(&len.to_le_bytes());
            return Some(out);
        }
        if self.suspended.is_some() {
            // One command at a time (doc §10.7).
            if f.wants_reply() {
                self.note(format!(
                    "command {} arrived while another was running: error reply",
                    f.counter
                ));
                return Some(encode_reply(f.counter, false, &vec![0; f.global]));
            }
            self.note(format!(
                "no-reply command {} arrived while another was running: ignored",
                f.counter
            ));
            return None;
        }
        let s = Suspended {
            globals: vec![0; f.global],
            locals: vec![0; f.local],
            pc: 0,
            frame: f,
        };
        self.run(s)
    }

    /// Resumes a suspended command if its wait is over; returns its reply.
    pub fn poll_suspended(&mut self) -> Option<Vec<u8>> {
        let s = self.suspended.take()?;
        self.run(s)
    }

    pub fn is_waiting(&self) -> bool {
        self.suspended.is_some()
    }

    fn run(&mut self, mut s: Suspended) -> Option<Vec<u8>> {
        let ops = s.frame.body.clone();
        let result = loop {
            if s.pc >= ops.len() {
                break Ok(());
            }
            let start = s.pc;
            match self.exec(&ops, &mut s) {
                Ok(true) => {}
                Ok(false) => {
                    // Blocked: rewind to the blocking op and wait.
                    s.pc = start;
                    self.suspended = Some(s);
                    return None;
                }
                Err(e) => break Err(e),
            }
        };
        let f = &s.frame;
        match result {
            Ok(()) => f
                .wants_reply()
                .then(|| encode_reply(f.counter, true, &s.globals)),
            Err(e) => {
                self.note(format!(
                    "error reply to command {}: {e} ({})",
                    f.counter,
                    protocol::hex(&f.body)
                ));
                f.wants_reply()
                    .then(|| encode_reply(f.counter, false, &vec![0; f.global]))
            }
        }
    }

    fn int(&self, ops: &[u8], s: &mut Suspended) -> Result<i32, String> {
        let p = decode_param(ops, &mut s.pc).map_err(|e| e.to_string())?;
        match p {
            Param::Const(v) => Ok(v),
            Param::Global(o) => read_i32(&s.globals, o),
            Param::Local(o) => read_i32(&s.locals, o),
            Param::Str(_) => Err("string where a number was expected".into()),
        }
    }

    fn out_param(&self, ops: &[u8], s: &mut Suspended) -> Result<(bool, usize), String> {
        match decode_param(ops, &mut s.pc).map_err(|e| e.to_string())? {
            Param::Global(o) => Ok((true, o)),
            Param::Local(o) => Ok((false, o)),
            other => Err(format!(
                "output parameter must be a variable, got {other:?}"
            )),
        }
    }

    fn write(&self, s: &mut Suspended, dst: (bool, usize), bytes: &[u8]) -> Result<(), String> {
        let mem = if dst.0 { &mut s.globals } else { &mut s.locals };
        let end = dst.1 + bytes.len();
        if end > mem.len() {
            return Err(format!(
                "writes {} bytes at {} beyond {} bytes of {} memory",
                bytes.len(),
                dst.1,
                mem.len(),
                if dst.0 { "global" } else { "local" }
            ));
        }
        mem[dst.1..end].copy_from_slice(bytes);
        Ok(())
    }

    fn motors_of(nos: i32) -> Result<Vec<usize>, String> {
        if !(0..=15).contains(&nos) {
            return Err(format!("bad NOS {nos}"));
        }
        Ok((0..4).filter(|i| nos & (1 << i) != 0).collect())
    }

    fn start_job(&mut self, m: usize, job: Job) {
        let motor = &mut self.motors[m];
        motor.job = job;
        motor.blocked = false;
        motor.overshoot = if matches!(job, Job::Step { .. }) {
            self.rng.gen_range(0.0..2.5)
        } else {
            0.0
        };
        // A run without a target (homing) is meant to end against a stop: the injected
        // stall hits the next positioning job.
        if self.stall_armed && !matches!(job, Job::Run { .. }) {
            self.stall_armed = false;
            self.motors[m].blocked = true;
            let port = (b'A' + m as u8) as char;
            self.note(format!("fault injected: motor {port} stalls"));
        }
    }

    /// Executes one op; Ok(false) = must wait.
    fn exec(&mut self, ops: &[u8], s: &mut Suspended) -> Result<bool, String> {
        let at = s.pc;
        let code = ops[at];
        s.pc += 1;
        match code {
            op::NOP => {}
            op::UI_WRITE => {
                let sub = self.int(ops, s)?;
                if sub as u8 != op::UI_WRITE_LED {
                    return Err(format!("UI_WRITE sub-command {sub} not simulated"));
                }
                self.int(ops, s)?;
            }
            op::SOUND => {
                let sub = self.int(ops, s)?;
                match sub {
                    0 => {}
                    1 => {
                        for _ in 0..3 {
                            self.int(ops, s)?;
                        }
                    }
                    _ => return Err(format!("SOUND sub-command {sub} not simulated")),
                }
            }
            op::SOUND_READY => {}
            op::TIMER_WAIT => {
                let ms = self.int(ops, s)?;
                let dst = self.out_param(ops, s)?;
                let until = (self.clock * 1000.0) as i32 + ms;
                self.write(s, dst, &until.to_le_bytes())?;
            }
            op::TIMER_READY => {
                let until = self.int(ops, s)?;
                if ((self.clock * 1000.0) as i32) < until {
                    return Ok(false);
                }
            }
            op::INPUT_DEVICE => return self.input_device(ops, s),
            op::OUTPUT_RESET
            | op::OUTPUT_STOP
            | op::OUTPUT_POWER
            | op::OUTPUT_SPEED
            | op::OUTPUT_START
            | op::OUTPUT_POLARITY
            | op::OUTPUT_TEST
            | op::OUTPUT_READY
            | op::OUTPUT_STEP_POWER
            | op::OUTPUT_TIME_POWER
            | op::OUTPUT_STEP_SPEED
            | op::OUTPUT_TIME_SPEED
            | op::OUTPUT_CLR_COUNT => {
                let _layer = self.int(ops, s)?;
                let nos = self.int(ops, s)?;
                let ms = Self::motors_of(nos)?;
                match code {
                    op::OUTPUT_RESET => {
                        for &m in &ms {
                            self.motors[m].move_zero = self.motors[m].phys;
                        }
                    }
                    op::OUTPUT_STOP => {
                        self.int(ops, s)?;
                        for &m in &ms {
                            self.motors[m].job = Job::Idle;
                            self.motors[m].v = 0.0;
                            self.motors[m].blocked = false;
                        }
                    }
                    op::OUTPUT_POWER | op::OUTPUT_SPEED => {
                        let v = self.int(ops, s)?.clamp(-100, 100) as i8;
                        for &m in &ms {
                            self.motors[m].pending_speed = v;
                        }
                    }
                    op::OUTPUT_START => {
                        for &m in &ms {
                            if !self.motors[m].busy() {
                                let v = self.motors[m].pending_speed as f64 / 100.0
                                    * self.motors[m].full_speed;
                                self.start_job(m, Job::Run { v });
                            }
                        }
                    }
                    op::OUTPUT_POLARITY => {
                        let p = self.int(ops, s)?;
                        for &m in &ms {
                            self.motors[m].polarity = match p {
                                0 => -self.motors[m].polarity,
                                p if p < 0 => -1.0,
                                _ => 1.0,
                            };
                        }
                    }
                    op::OUTPUT_TEST => {
                        let dst = self.out_param(ops, s)?;
                        let busy = ms.iter().any(|&m| self.motors[m].busy()) as u8;
                        self.write(s, dst, &[busy])?;
                    }
                    op::OUTPUT_READY => {
                        if ms.iter().any(|&m| self.motors[m].busy()) {
                            return Ok(false);
                        }
                    }
                    op::OUTPUT_CLR_COUNT => {
                        for &m in &ms {
                            self.motors[m].zero = self.motors[m].phys;
                        }
                    }
                    _ => {
                        // STEP_/TIME_ SPEED/POWER: SPEED, P1, P2, P3, BRAKE.
                        let speed = self.int(ops, s)?.clamp(-100, 100);
                        let mut p = [0.0; 3];
                        for x in &mut p {
                            let v = self.int(ops, s)?;
                            if v < 0 {
                                return Err(format!("negative step/time {v}"));
                            }
                            *x = v as f64;
                        }
                        self.int(ops, s)?;
                        for &m in &ms {
                            let vmax =
                                speed.unsigned_abs() as f64 / 100.0 * self.motors[m].full_speed;
                            let dir = speed.signum() as f64;
                            let job =
                                if matches!(code, op::OUTPUT_STEP_SPEED | op::OUTPUT_STEP_POWER) {
                                    Job::Step {
                                        dir,
                                        vmax,
                                        r: p,
                                        done: 0.0,
                                    }
                                } else {
                                    Job::Time {
                                        dir,
                                        vmax,
                                        t: p.map(|ms| ms / 1000.0),
                                        elapsed: 0.0,
                                    }
                                };
                            if speed != 0 {
                                self.start_job(m, job);
                            }
                        }
                    }
                }
            }
            op::OUTPUT_READ | op::OUTPUT_GET_COUNT => {
                let _layer = self.int(ops, s)?;
                let no = self.int(ops, s)?;
                if !(0..4).contains(&no) {
                    return Err(format!("motor number {no} out of range (0..3)"));
                }
                let m = &self.motors[no as usize];
                let (count, speed, mv) = (m.count(), m.speed_pct(), m.phys - m.move_zero);
                if code == op::OUTPUT_READ {
                    let d1 = self.out_param(ops, s)?;
                    let d2 = self.out_param(ops, s)?;
                    self.write(s, d1, &[speed as u8])?;
                    self.write(s, d2, &(mv.round() as i32).to_le_bytes())?;
                } else {
                    let d = self.out_param(ops, s)?;
                    self.write(s, d, &(count.round() as i32).to_le_bytes())?;
                }
            }
            other => return Err(format!("unknown opcode 0x{other:02X} at byte {at}")),
        }
        Ok(true)
    }

    fn device_at(&self, no: i32) -> Result<(i8, Option<usize>), String> {
        match no {
            0..=3 => Ok((self.sensors[no as usize], None)),
            16..=19 => {
                let m = (no - 16) as usize;
                Ok((self.motors[m].kind, Some(m)))
            }
            _ => Err(format!("input {no} out of range")),
        }
    }

    fn input_device(&mut self, ops: &[u8], s: &mut Suspended) -> Result<bool, String> {
        let sub = self.int(ops, s)? as u8;
        let _layer = self.int(ops, s)?;
        let no = self.int(ops, s)?;
        let (dtype, motor) = self.device_at(no)?;
        match sub {
            op::INPUT_GET_TYPEMODE => {
                let d1 = self.out_param(ops, s)?;
                let d2 = self.out_param(ops, s)?;
                let mode = if dtype == device::COLOR { 4 } else { 0 };
                self.write(s, d1, &[dtype as u8])?;
                self.write(s, d2, &[mode])?;
            }
            op::INPUT_CLR_CHANGES => {}
            op::INPUT_GET_RAW => {
                let d = self.out_param(ops, s)?;
                let v = match motor {
                    Some(m) => self.motors[m].count().round() as i32,
                    None => 0,
                };
                self.write(s, d, &v.to_le_bytes())?;
            }
            op::INPUT_READY_PCT | op::INPUT_READY_RAW | op::INPUT_READY_SI => {
                let typ = self.int(ops, s)?;
                let mode = self.int(ops, s)?;
                let n = self.int(ops, s)?;
                if !(0..=8).contains(&n) {
                    return Err(format!("{n} values requested"));
                }
                if typ != 0 && typ as i8 != dtype {
                    return Err(format!(
                        "input {no} holds {} (type {dtype}), asked for type {typ}",
                        device::name(dtype)
                    ));
                }
                let values: Vec<f64> = if dtype == device::NONE {
                    return Err(format!("nothing connected on input {no}"));
                } else if let Some(m) = motor {
                    let mo = &self.motors[m];
                    match mode {
                        1 => vec![mo.count() / 360.0],
                        2 => vec![mo.speed_pct() as f64],
                        _ => vec![mo.count()],
                    }
                } else if dtype == device::COLOR {
                    let rgb = self.rgb_raw().map(|v| v as f64);
                    let m = if mode < 0 { 4 } else { mode };
                    match m {
                        4 => rgb.to_vec(),
                        0 => vec![((rgb[0] + rgb[1] + rgb[2]) / 3.0 / 4.0).min(100.0)],
                        1 => vec![4.0],
                        2 => vec![color_code(rgb)],
                        3 => vec![rgb[0], rgb[2]],
                        _ => return Err(format!("colour sensor mode {m} not simulated")),
                    }
                } else {
                    // Infrared proximity: a cube sits in the tray.
                    vec![26.0]
                };
                for i in 0..n as usize {
                    let v = values.get(i).copied().unwrap_or(0.0);
                    let d = self.out_param(ops, s)?;
                    let bytes = match sub {
                        op::INPUT_READY_PCT => vec![v.round().clamp(-128.0, 127.0) as i8 as u8],
                        op::INPUT_READY_RAW => (v.round() as i32).to_le_bytes().to_vec(),
                        _ => (v as f32).to_le_bytes().to_vec(),
                    };
                    self.write(s, d, &bytes)?;
                }
            }
            other => {
                return Err(format!(
                    "INPUT_DEVICE sub-command 0x{other:02X} not simulated"
                ))
            }
        }
        Ok(true)
    }
}

/// Distance from the nearest multiple of 90°.
fn r90(x: f64) -> f64 {
    (x - 90.0 * (x / 90.0).round()).abs()
}

fn read_i32(mem: &[u8], o: usize) -> Result<i32, String> {
    mem.get(o..o + 4)
        .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| format!("variable at {o} outside memory"))
}

/// COL-COLOR code from RGB-RAW (rough; not used by the scan).
fn color_code(rgb: [f64; 3]) -> f64 {
    let [r, g, b] = rgb;
    let sum = r + g + b;
    if sum < 60.0 {
        return 1.0;
    }
    if r > 1.5 * g && r > 1.5 * b {
        5.0
    } else if g > r && g > 1.5 * b && r < 0.6 * g {
        3.0
    } else if b > r && b > 0.8 * g {
        2.0
    } else if r > b * 2.0 && g > b * 2.0 && sum < 700.0 {
        4.0
    } else {
        6.0
    }
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
mod tests {
    use super::*;
    use crate::robot::protocol::{decode_reply, DirectCommand, OutputPort};

    use crate::robot::protocol::from_hex as h;

    fn brick() -> Brick {
        let cfg = SimConfig::default();
        Brick::new(&cfg, FaceletCube::solved(Size::Three))
    }

    #[test]
    fn answers_the_doc_examples_byte_for_byte() {
        let mut b = brick();
        // E1 ping.
        assert_eq!(
            b.handle(&h("06 00 2A 00 00 00 00 01")).unwrap(),
            h("03 00 2A 00 02")
        );
        // E2 LED, no reply.
        assert!(b.handle(&h("08 00 2B 00 80 00 00 82 1B 05")).is_none());
        // E10 reset + clear count.
        assert_eq!(
            b.handle(&h("0B 00 08 00 00 00 00 A2 00 02 B2 00 02"))
                .unwrap(),
            h("03 00 08 00 02")
        );
        // E8 count of C after clearing it: 0.
        b.handle(&h("0B 00 08 00 00 00 00 A2 00 04 B2 00 04"));
        assert_eq!(
            b.handle(&h("09 00 05 00 00 04 00 B3 00 02 60")).unwrap(),
            h("07 00 05 00 02 00 00 00 00")
        );
        // E5 busy? nothing running.
        assert_eq!(
            b.handle(&h("09 00 04 00 00 01 00 A9 00 03 60")).unwrap(),
            h("04 00 04 00 02 00")
        );
        // E6 RGB-RAW: 12 bytes of global memory.
        let r = b
            .handle(&h("0F 00 03 00 00 0C 00 99 1C 00 01 1D 04 03 60 64 68"))
            .unwrap();
        assert_eq!(&r[..5], &h("0F 00 03 00 02")[..]);
        // E12 IR proximity on port 4 (index 3): type 33 as LC1.
        let r = b
            .handle(&h("0E 00 0B 00 00 04 00 99 1D 00 03 81 21 00 01 60"))
            .unwrap();
        assert_eq!(r, h("07 00 0B 00 02 00 00 D0 41"));
        // E15: unknown opcode → error reply with the same global size.
        assert_eq!(
            b.handle(&h("06 00 77 00 00 04 00 FE")).unwrap(),
            h("07 00 77 00 04 00 00 00 00")
        );
        // E13 layout: 13 bytes of globals.
        let r = b
            .handle(&h("21 00 0C 00 00 0D 00 99 1D 00 10 07 00 01 60 99 1D 00 11 07 00 01 64 99 1D 00 12 08 00 01 68 A9 00 07 6C"))
            .unwrap();
        assert_eq!(&r[..5], &h("10 00 0C 00 02")[..]);
        assert_eq!(r.len(), 5 + 13);
    }

    #[test]
    fn the_driver_encoding_is_what_the_simulator_decodes() {
        // Every parameter form: GET_COUNT of C with LC1/LC2/LC4 port numbers and GV1/GV2
        // outputs gives the same answer as the shortest form.
        let mut b = brick();
        let mut c = DirectCommand::new();
        let s = c.output_get_count(OutputPort::C);
        let short = decode_reply(&b.handle(&c.encode(1)).unwrap()).unwrap();
        let want = short.i32(s).unwrap();
        for ops in [
            "B3 81 00 81 02 E1 00",
            "B3 82 00 00 82 02 00 E2 00 00",
            "B3 83 00 00 00 00 83 02 00 00 00 60",
        ] {
            let mut frame = h("00 00 09 00 00 04 00");
            frame.extend(h(ops));
            let len = (frame.len() - 2) as u16;
            frame[..2].copy_from_slice(&len.to_le_bytes());
            let r = decode_reply(&b.handle(&frame).unwrap()).unwrap();
            assert!(r.ok, "{ops}");
            assert_eq!(r.i32(s).unwrap(), want, "{ops}");
        }
        // An output parameter given as a constant is malformed → error reply.
        let r = decode_reply(&b.handle(&h("09 00 02 00 00 04 00 B3 00 02 00")).unwrap()).unwrap();
        assert!(!r.ok);
    }

    #[test]
    fn one_command_at_a_time() {
        let mut b = brick();
        // E3: a blocking move of B; its reply comes when the move is done.
        assert!(b
            .handle(&h(
                "13 00 01 00 00 00 00 AE 00 02 81 28 1E 82 D2 00 1E 01 AA 00 02"
            ))
            .is_none());
        // A reply command meanwhile is refused, a no-reply one ignored.
        assert_eq!(
            b.handle(&h("06 00 09 00 00 00 00 01")).unwrap(),
            h("03 00 09 00 04")
        );
        assert!(b.handle(&h("09 00 0A 00 80 00 00 A3 00 0F 00")).is_none());
        b.advance(0.3);
        assert!(b.poll_suspended().is_none(), "still moving after 0.3 s");
        b.advance(1.0);
        assert_eq!(b.poll_suspended().unwrap(), h("03 00 01 00 02"));
        // 270° of the turntable at the table = one spin with the arm away.
        let mut expect = FaceletCube::solved(Size::Three);
        expect
            .apply(&crate::cube::Alg::from_moves(vec![Primitive::Spin(1)
                .as_move()
                .unwrap()]))
            .unwrap();
        assert_eq!(b.cube(), expect);
    }
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
