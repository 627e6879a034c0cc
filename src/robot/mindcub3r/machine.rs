//! The MindCub3r on top of the EV3 driver: start-up (device check, homing), the primitives
//! of [`super::model`] with angles, speeds and over-rotation from the calibration, and the
//! colour-sensor scan mapped to URFDLB facelet indices of the cube as it sat before the scan.
//!
//! ## What a stop leaves
//!
//! Every primitive has at most one move that changes the cube: the tilt arm's move to its
//! apex, the turntable's spin, a layer turn's over-rotating move. The machine remembers
//! whether that move of the primitive under way was sent and whether the brick confirmed it
//! finished, so after any failure [`MindCub3r::in_flight_landed`] can say whether the cube
//! changed: not sent, no; confirmed, yes; otherwise the motor's count decides (and when it
//! stopped half way, nobody can tell). Ctrl-C is checked before every move, so a stop lands
//! between moves, where this is known without asking. A chunk of primitives run on the
//! brick as one program ([`MindCub3r::execute_chunk`]) is settled by
//! [`MindCub3r::chunk_landed`]: the program's own record, or the motor counts (see
//! [Execution on the brick](crate::robot::mindcub3r#execution-on-the-brick)).
//!
//! Level: robot (uses `cube`, `color::raw`, [`crate::robot::ev3`]). No printing: progress
//! through callbacks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::config::Config;
use super::error::RobotError;
use super::model::{Orientation, Primitive, SensorPosition};
use super::scan::{face_samples, perm_of, scan_map, scan_steps, Sample, ScanProgress};
use crate::color::{RawScan, Scale};
use crate::cube::{Face, Permutation, Size};
use crate::robot::ev3::driver::{DeviceExpectation, Ev3, Ev3Error, Motor, MotorKind};
use crate::robot::ev3::protocol::{device, DirectCommand, OutputPort};
use crate::robot::link::Link;

mod chunk;
mod homing;
mod onbrick;

pub use chunk::{ChunkRun, Settled};

/// The move of a primitive that changes the cube (the tilt arm past its apex, the table
/// turning a layer or the whole cube): where its motor started, the target by which the
/// change is complete, and whether the move was confirmed finished.
#[derive(Clone, Copy, Debug)]
struct Effect {
    port: OutputPort,
    from: i32,
    to: i32,
    done: bool,
    tilt: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArmState {
    Unknown,
    Away,
    Hold,
}

/// The robot.
pub struct MindCub3r {
    ev3: Ev3,
    pub config: Config,
    arm: Motor,
    table: Motor,
    sensor: Motor,
    arm_state: ArmState,
    sensor_at: Option<i32>,
    /// Table angle (degrees, + = y) since start-up; the motor target follows it.
    table_deg: f64,
    table_zero: i32,
    /// Cube orientation relative to the cube as it sat at start-up.
    pub orientation: Orientation,
    /// Current position → facelet index in the frame of the last scan start.
    frame: Option<(Size, Permutation)>,
    interrupt: Option<Arc<AtomicBool>>,
    last: Option<Primitive>,
    homed: bool,
    /// The primitive being executed and its cube-changing move, once that move was sent
    /// (cleared when the primitive completes).
    attempt: Option<(Primitive, Option<Effect>)>,
    /// The chunk of primitives sent to the brick as one program, until its outcome is
    /// known.
    chunk: Option<chunk::ChunkAttempt>,
    /// The last move of a chunk that answered before that move ended
    /// (`execution.answer_during_last_move`); whatever moves the robot next waits for it.
    tail: Option<chunk::Tail>,
}

impl MindCub3r {
    /// Connects: ping, device check (exact report on mismatch), every motor's polarity set
    /// to normal (an earlier session may have reversed one; see
    /// [Polarity](crate::robot::ev3::protocol#polarity)), the colour sensor put in the mode
    /// the scan reads it in. Nothing moves.
    pub fn connect(link: Box<dyn Link>, config: Config) -> Result<MindCub3r, RobotError> {
        MindCub3r::with_driver(Ev3::new(link), config)
    }

    /// [`connect`](Self::connect) over a driver already made (its log and counters kept).
    pub fn with_driver(mut ev3: Ev3, config: Config) -> Result<MindCub3r, RobotError> {
        config.check().map_err(|why| RobotError::Config {
            path: "(in memory)".into(),
            why,
        })?;
        ev3.timeouts = config.driver_timeouts();
        let m = &config.motors;
        let p = &config.ports;
        let mut r = MindCub3r {
            ev3,
            arm: Motor::new(p.arm, MotorKind::Large, m.large_full_speed),
            table: Motor::new(p.turntable, MotorKind::Large, m.large_full_speed),
            sensor: Motor::new(p.sensor_arm, MotorKind::Medium, m.medium_full_speed),
            config,
            arm_state: ArmState::Unknown,
            sensor_at: None,
            table_deg: 0.0,
            table_zero: 0,
            orientation: Orientation::IDENTITY,
            frame: None,
            interrupt: None,
            last: None,
            homed: false,
            attempt: None,
            chunk: None,
            tail: None,
        };
        r.guard(|r| {
            r.ev3.nop()?;
            r.check_devices()?;
            let nos = OutputPort::nos(&[r.arm.port, r.table.port, r.sensor.port]);
            r.ev3.set_polarity(nos, 1)?;
            r.sensor_mode()?;
            r.table_zero = r.ev3.count(r.table.port)?;
            r.table.target = r.table_zero;
            Ok(())
        })?;
        Ok(r)
    }

    /// The driver, for logging and low-level use.
    pub fn ev3(&mut self) -> &mut Ev3 {
        &mut self.ev3
    }

    /// The link's round trip (seconds): the median of `n` pings.
    pub fn round_trip(&mut self, n: usize) -> Result<f64, RobotError> {
        let mut t = Vec::with_capacity(n.max(1));
        for _ in 0..n.max(1) {
            let start = std::time::Instant::now();
            self.ev3.nop()?;
            t.push(start.elapsed().as_secs_f64());
        }
        t.sort_by(f64::total_cmp);
        Ok(t[t.len() / 2])
    }

    /// Ctrl-C: checked before every motor move, and by the driver's waits (see
    /// [Ctrl-C](crate::robot::ev3::driver#ctrl-c)).
    pub fn set_interrupt(&mut self, flag: Arc<AtomicBool>) {
        self.ev3.set_interrupt(flag.clone());
        self.interrupt = Some(flag);
    }

    /// After a primitive failed: whether its change to the cube happened, and what says so;
    /// `None` when nobody can tell (the link is dead, or the motor stopped half way). A
    /// primitive whose cube-changing move was never sent did not happen; one whose move was
    /// confirmed finished did; otherwise the motor's count decides: a table within 8° (of
    /// table) of either end, the arm under the hold-to-apex midway or at its apex.
    pub fn in_flight_landed(&mut self) -> Option<(bool, &'static str)> {
        let (_, effect) = self.attempt?;
        let Some(e) = effect else {
            return Some((false, "its cube-changing move was never sent"));
        };
        if e.done {
            return Some((true, "its cube-changing move finished"));
        }
        let count = self.ev3.count(e.port).ok()?;
        let span = (e.to - e.from) as f64;
        if span.abs() < 1.0 {
            return None;
        }
        let frac = (count - e.from) as f64 / span;
        let (lo, hi, by) = if e.tilt {
            (0.5, 0.95, "tilt-arm count")
        } else {
            let quarter = 90.0 * self.config.turntable.ratio;
            let margin = 8.0 * self.config.turntable.ratio / span.abs().max(quarter);
            (margin, 1.0 - margin, "turntable count")
        };
        if frac <= lo {
            Some((false, by))
        } else if frac >= hi {
            Some((true, by))
        } else {
            None
        }
    }

    fn check_devices(&mut self) -> Result<(), Ev3Error> {
        let p = self.config.ports.clone();
        let exp = |role: &str, label: String, input: u8, t: i8| DeviceExpectation {
            role: role.into(),
            port_label: label,
            input,
            expected: t,
        };
        let motor =
            |role: &str, port: OutputPort, t: i8| exp(role, port.to_string(), port.as_input(), t);
        self.ev3.check_devices(&[
            motor("tilt arm", p.arm, device::LARGE_MOTOR),
            motor("turntable", p.turntable, device::LARGE_MOTOR),
            motor("colour-sensor arm", p.sensor_arm, device::MEDIUM_MOTOR),
            exp(
                "colour sensor",
                p.color_sensor.to_string(),
                p.color_sensor - 1,
                device::COLOR,
            ),
        ])
    }

    /// Runs `f`; on any error stops every motor (float) before returning it.
    fn guard<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, RobotError>,
    ) -> Result<T, RobotError> {
        match f(self) {
            Ok(v) => Ok(v),
            Err(RobotError::Ev3(Ev3Error::Interrupted { stopped, .. })) => {
                // Ctrl-C inside a wait: the driver already stopped the motors.
                self.arm_state = ArmState::Unknown;
                self.sensor_at = None;
                Err(RobotError::Interrupted {
                    stopped,
                    after: self
                        .last
                        .map(|p| format!("{p:?}"))
                        .unwrap_or_else(|| "start-up".into()),
                    state: self.state_description(),
                })
            }
            Err(e) => {
                let _ = self.ev3.stop_all();
                self.arm_state = ArmState::Unknown;
                self.sensor_at = None;
                Err(e)
            }
        }
    }

    /// A description of where the cube is, for messages after a stop.
    pub fn state_description(&self) -> String {
        let o = self.orientation;
        let faces: String = [Face::U, Face::R, Face::F, Face::D, Face::L, Face::B]
            .iter()
            .map(|&p| o.at(p).letter())
            .collect();
        format!(
            "the cube's faces at Top,Right,Front,Bottom,Left,Back are {faces} (start-up frame); last completed primitive: {}",
            self.last
                .map(|p| format!("{p:?}"))
                .unwrap_or_else(|| "none".into())
        )
    }

    fn check_interrupt(&mut self) -> Result<(), RobotError> {
        if self
            .interrupt
            .as_ref()
            .is_some_and(|f| f.load(Ordering::SeqCst))
        {
            // A chunk's last move still settling ends first (bounded on the brick; the
            // driver's wait gives it a second), so the motors stop between moves.
            let _ = self.await_tail();
            let stopped = self.ev3.stop_all().is_ok();
            return Err(RobotError::Interrupted {
                stopped,
                after: self
                    .last
                    .map(|p| format!("{p:?}"))
                    .unwrap_or_else(|| "start-up".into()),
                state: self.state_description(),
            });
        }
        Ok(())
    }

    /// Homes the tilt arm and the sensor arm against their stops, then arm away and
    /// sensor clear.
    pub fn home(&mut self) -> Result<(), RobotError> {
        if self.config.execution.on_brick {
            return self.guard(|r| {
                r.home_on_brick()?;
                r.homed = true;
                // Homed against its retracted stop, the arm is at zero: away, unless the
                // calibration puts away elsewhere.
                r.arm_state = if r.config.arm.away == 0 {
                    ArmState::Away
                } else {
                    ArmState::Unknown
                };
                r.arm_to(ArmState::Away)
            });
        }
        self.guard(|r| {
            let (hs, ss) = (r.config.arm.home_speed, r.config.sensor_arm.home_speed);
            let mut sensor = r.sensor;
            r.ev3
                .home("homing the colour-sensor arm", &mut sensor, ss)?;
            r.sensor = sensor;
            r.sensor_at = Some(0);
            let mut arm = r.arm;
            r.ev3.home("homing the tilt arm", &mut arm, hs)?;
            r.arm = arm;
            r.arm_state = ArmState::Unknown;
            r.homed = true;
            r.arm_to(ArmState::Away)?;
            r.sensor_to(r.config.sensor_arm.clear, "sensor arm to clear")?;
            Ok(())
        })
    }

    /// Homed, and no move of a chunk left running.
    fn ensure_homed(&mut self) -> Result<(), RobotError> {
        self.guard(|r| r.await_tail())?;
        if !self.homed {
            self.home()?;
        }
        Ok(())
    }

    /// Waits until the tilt arm has come to rest: its count unchanged over the settle
    /// pause (at least 20 ms). A move's job ends at its count while the motor still runs
    /// on and its brake pulls the overshoot back (see `machine::onbrick`'s `settle`);
    /// a tilt must start from an arm at rest at hold. An arm that never stands still for
    /// a second ends the wait all the same: the next move's own checks catch a problem.
    fn settle(&mut self) -> Result<(), RobotError> {
        let pause = Duration::from_millis(self.config.arm.settle_ms.max(20));
        let port = self.arm.port;
        let mut last = self.ev3.count(port)?;
        for _ in 0..(1000 / pause.as_millis().max(1)).max(1) {
            std::thread::sleep(pause);
            let now = self.ev3.count(port)?;
            if now == last {
                break;
            }
            last = now;
        }
        Ok(())
    }

    fn move_motor(
        &mut self,
        which: OutputPort,
        what: &str,
        target: i32,
        speed: i8,
        ramps: (u32, u32),
    ) -> Result<(), RobotError> {
        self.check_interrupt()?;
        self.await_tail()?;
        let mut m = if which == self.arm.port {
            self.arm
        } else if which == self.table.port {
            self.table
        } else {
            self.sensor
        };
        let res = self.ev3.move_to(what, &mut m, target, speed, ramps);
        if which == self.arm.port {
            self.arm = m;
        } else if which == self.table.port {
            self.table = m;
        } else {
            self.sensor = m;
        }
        res.map_err(RobotError::from)
    }

    fn hold_angle(&self, size: Size) -> i32 {
        match size {
            Size::Three => self.config.arm.hold,
            Size::Two => self.config.arm.hold_2x2,
        }
    }

    fn arm_to(&mut self, s: ArmState) -> Result<(), RobotError> {
        if self.arm_state == s {
            return Ok(());
        }
        let a = self.config.arm.clone();
        let size = self.frame.as_ref().map(|f| f.0).unwrap_or(Size::Three);
        let (target, what) = match s {
            ArmState::Away => (a.away, "arm away"),
            _ => (self.hold_angle(size), "arm to hold"),
        };
        self.move_motor(
            self.arm.port,
            what,
            target,
            a.speed,
            (a.ramp_up, a.ramp_down),
        )?;
        self.settle()?;
        self.arm_state = s;
        Ok(())
    }

    fn sensor_to(&mut self, target: i32, what: &str) -> Result<(), RobotError> {
        if self.sensor_at == Some(target) {
            return Ok(());
        }
        let s = self.config.sensor_arm.clone();
        self.move_motor(self.sensor.port, what, target, s.speed, (s.ramp, s.ramp))?;
        self.sensor_at = Some(target);
        Ok(())
    }

    fn arm_away_and_sensor_to(&mut self, sensor_target: i32) -> Result<(), RobotError> {
        if self.arm_state == ArmState::Away || self.sensor_at == Some(sensor_target) {
            self.arm_to(ArmState::Away)?;
            return self.sensor_to(sensor_target, "sensor arm in");
        }
        let a = self.config.arm.clone();
        let s = self.config.sensor_arm.clone();
        let (mut arm, mut sensor) = (self.arm, self.sensor);
        let da =
            self.ev3
                .start_move_to(&mut arm, a.away, a.speed, (a.ramp_up, a.ramp_down), true)?;
        let ds =
            self.ev3
                .start_move_to(&mut sensor, sensor_target, s.speed, (s.ramp, s.ramp), true)?;
        self.arm = arm;
        self.sensor = sensor;
        let secs = arm
            .nominal_secs(da as f64, a.speed, (a.ramp_up, a.ramp_down))
            .max(sensor.nominal_secs(ds as f64, s.speed, (s.ramp, s.ramp)));
        let budget = Duration::from_secs_f64(2.0 * secs) + self.ev3.timeouts.move_extra;
        self.ev3
            .wait("arm away + sensor arm in", &[arm, sensor], budget)?;
        self.arm_state = ArmState::Away;
        self.sensor_at = Some(sensor_target);
        Ok(())
    }

    fn sensor_clear(&mut self) -> Result<(), RobotError> {
        let clear = self.config.sensor_arm.clear;
        // Anything further out than "clear" is clear too.
        if self.sensor_at.is_some_and(|p| p >= clear) {
            return Ok(());
        }
        self.sensor_to(clear, "sensor arm to clear")
    }

    fn table_target(&self, deg: f64) -> i32 {
        let t = &self.config.turntable;
        self.table_zero + (deg * t.ratio * t.sign as f64).round() as i32
    }

    /// Moves the table to an absolute angle (table degrees since start-up).
    fn table_to(&mut self, deg: f64, speed: i8, what: &str) -> Result<(), RobotError> {
        let t = self.config.turntable.clone();
        let target = self.table_target(deg);
        self.move_motor(
            self.table.port,
            what,
            target,
            speed,
            (t.ramp_up, t.ramp_down),
        )?;
        self.table_deg = deg;
        Ok(())
    }

    /// Executes one primitive (moving the arm first where its precondition needs it).
    pub fn execute(&mut self, p: Primitive) -> Result<(), RobotError> {
        self.check_interrupt()?;
        self.ensure_homed()?;
        self.attempt = Some((p, None));
        self.guard(|r| r.execute_inner(p))?;
        self.attempt = None;
        self.after_primitive(p);
        Ok(())
    }

    /// The bookkeeping of a primitive that happened: the cube's orientation, the scan
    /// frame (lost by a layer turn), the last primitive.
    fn after_primitive(&mut self, p: Primitive) {
        self.orientation = self.orientation.after(p);
        if let Some((size, frame)) = self.frame.take() {
            match p {
                Primitive::Turn(_) => {}
                Primitive::Tilt | Primitive::Spin(_) => {
                    self.frame = Some((size, frame.then(&perm_of(size, p))))
                }
                _ => self.frame = Some((size, frame)),
            }
        }
        self.last = Some(p);
    }

    fn execute_inner(&mut self, p: Primitive) -> Result<(), RobotError> {
        match p {
            Primitive::ArmAway => self.arm_to(ArmState::Away),
            Primitive::ArmHold => self.arm_to(ArmState::Hold),
            Primitive::Tilt => {
                self.sensor_clear()?;
                self.arm_to(ArmState::Hold)?;
                let a = self.config.arm.clone();
                self.effect_begins(self.arm.port, self.arm.target, a.tilt_apex, true);
                self.move_motor(
                    self.arm.port,
                    "tilt: arm to apex",
                    a.tilt_apex,
                    a.tilt_speed,
                    (a.ramp_up, a.ramp_down),
                )?;
                self.effect_done();
                let size = self.frame.as_ref().map(|f| f.0).unwrap_or(Size::Three);
                let hold = self.hold_angle(size);
                self.move_motor(
                    self.arm.port,
                    "tilt: arm back to hold",
                    hold,
                    a.back_speed,
                    (a.ramp_up, a.ramp_down * 2),
                )?;
                self.settle()?;
                Ok(())
            }
            Primitive::Spin(k) => {
                let k = check_quarter(k)?;
                self.arm_to(ArmState::Away)?;
                let deg = self.table_deg + 90.0 * k as f64;
                let speed = self.config.turntable.speed;
                let to = self.table_target(deg);
                self.effect_begins(self.table.port, self.table.target, to, false);
                self.table_to(deg, speed, &format!("spin {k:+}"))?;
                self.effect_done();
                Ok(())
            }
            Primitive::Turn(k) => {
                let k = check_quarter(k)?;
                self.sensor_clear()?;
                self.arm_to(ArmState::Hold)?;
                let t = self.config.turntable.clone();
                let deg = self.table_deg + 90.0 * k as f64;
                let target = self.table_target(deg);
                let over = t.over_rotation * (k.signum() as i32) * t.sign as i32;
                let what = format!("turn {k:+}");
                self.effect_begins(self.table.port, self.table.target, target, false);
                self.move_motor(
                    self.table.port,
                    &format!("{what}: over-rotate"),
                    target + over,
                    t.turn_speed,
                    (t.ramp_up, t.ramp_down),
                )?;
                self.effect_done();
                self.move_motor(
                    self.table.port,
                    &format!("{what}: back to the quarter"),
                    target,
                    t.over_rotation_speed,
                    (0, 0),
                )?;
                self.table_deg = deg;
                Ok(())
            }
            Primitive::Sensor(pos) => {
                let s = self.config.sensor_arm.clone();
                let target = match pos {
                    SensorPosition::Parked => s.parked,
                    SensorPosition::Clear => s.clear,
                    SensorPosition::Corner => s.corner[0],
                    SensorPosition::Edge => s.edge[0],
                    SensorPosition::Centre => s.centre,
                };
                if !matches!(pos, SensorPosition::Parked | SensorPosition::Clear) {
                    // The sensor reaches over the top face: the tilt arm must be away.
                    self.arm_to(ArmState::Away)?;
                }
                self.sensor_to(target, &format!("sensor arm to {pos:?}"))
            }
            Primitive::Read => self.read_rgb().map(|_| ()),
        }
    }

    /// The cube-changing move of the primitive under way is about to be sent.
    fn effect_begins(&mut self, port: OutputPort, from: i32, to: i32, tilt: bool) {
        if let Some((_, effect)) = self.attempt.as_mut() {
            *effect = Some(Effect {
                port,
                from,
                to,
                done: false,
                tilt,
            });
        }
    }

    /// ... and the brick confirmed it finished.
    fn effect_done(&mut self) {
        if let Some((_, Some(e))) = self.attempt.as_mut() {
            e.done = true;
        }
    }

    /// One RGB-RAW reading.
    pub fn read_rgb(&mut self) -> Result<[f64; 3], RobotError> {
        let port = self.config.ports.color_sensor - 1;
        Ok(self.ev3.read_rgb(port)?)
    }

    fn sample_target(&self, size: Size, s: &Sample) -> i32 {
        let a = &self.config.sensor_arm;
        match (s.kind, size) {
            (SensorPosition::Centre, _) => a.centre,
            (SensorPosition::Corner, Size::Two) => a.corner_2x2,
            (SensorPosition::Corner, _) => a.corner[s.slot % 4],
            (SensorPosition::Edge, _) => a.edge[s.slot % 4],
            _ => a.clear,
        }
    }

    /// The colour-sensor scan → readings at the URFDLB facelet indices of the cube as it
    /// sat before the scan. The cube ends in the orientation given in
    /// [Scan order](crate::robot::mindcub3r#scan-order).
    pub fn scan(
        &mut self,
        size: Size,
        progress: &mut dyn FnMut(ScanProgress),
    ) -> Result<RawScan, RobotError> {
        self.scan_with_preview(size, progress, &mut |_| {})
    }

    /// [`MindCub3r::scan`], and on the brick (`scan.on_brick`) `preview` is handed the
    /// readings so far just before the last face's program is sent: the last face's
    /// stickers (and any sample missed on the fly) marked unread. Whoever resolves the
    /// cube may start on them while the robot reads the last face.
    pub fn scan_with_preview(
        &mut self,
        size: Size,
        progress: &mut dyn FnMut(ScanProgress),
        preview: &mut dyn FnMut(&RawScan),
    ) -> Result<RawScan, RobotError> {
        if self.config.scan.on_brick {
            return self.scan_on_brick(size, progress, preview);
        }
        self.ensure_homed()?;
        self.frame = Some((size, Permutation::identity(size.stickers())));
        let map = scan_map(size, self.config.scan.sensor_side);
        let total = map.len();
        let mut facelets = vec![[0.0; 3]; size.stickers()];
        let mut done = 0;
        for (step, prims) in scan_steps().iter().enumerate() {
            for &p in prims {
                self.execute(p)?;
            }
            self.check_interrupt()?;
            let samples: Vec<(Sample, usize)> = map
                .iter()
                .filter(|(s, _, _)| *s == step)
                .map(|&(_, s, i)| (s, i))
                .collect();
            let readings = self.guard(|r| r.scan_face(size, &samples))?;
            for ((_, index), rgb) in samples.iter().zip(readings) {
                facelets[*index] = rgb;
                done += 1;
            }
            progress(ScanProgress {
                done,
                total,
                face_step: step,
            });
        }
        let mut scan = RawScan::new(size, Scale::Ev3Raw, facelets);
        scan.provenance = Some(serde_json::json!({
            "source": "ev3-colour-sensor",
            "port": self.ev3.port_name(),
            "sensor_side": self.config.scan.sensor_side,
        }));
        Ok(scan)
    }

    /// Reads one face: centre at rest, then one revolution sampling on the fly; samples
    /// missed on the fly are read at rest afterwards.
    fn scan_face(
        &mut self,
        size: Size,
        samples: &[(Sample, usize)],
    ) -> Result<Vec<[f64; 3]>, RobotError> {
        let mut out: Vec<Option<[f64; 3]>> = vec![None; samples.len()];
        // Arm away and sensor arm in at the same time (the sensor may reach over the cube
        // while the tilt arm swings between hold and away, never while it tilts).
        let first = samples
            .first()
            .map(|(s, _)| self.sample_target(size, s))
            .unwrap_or(self.config.sensor_arm.clear);
        self.arm_away_and_sensor_to(first)?;
        let base = self.table_deg;
        let mut ring = Vec::new();
        for (i, (s, _)) in samples.iter().enumerate() {
            if s.kind == SensorPosition::Centre {
                let t = self.sample_target(size, s);
                self.sensor_to(t, "sensor arm to the centre")?;
                out[i] = Some(self.read_rgb()?);
            } else {
                ring.push(i);
            }
        }
        if self.config.scan.on_the_fly && !ring.is_empty() {
            self.revolution(size, samples, &ring, base, &mut out)?;
        }
        // Anything not read yet: stop-and-go at rest.
        for &i in &ring {
            if out[i].is_some() {
                continue;
            }
            let s = samples[i].0;
            let speed = self.config.turntable.speed;
            self.table_to(base + s.angle, speed, "turntable to a sticker")?;
            let t = self.sample_target(size, &s);
            self.sensor_to(t, "sensor arm over a sticker")?;
            out[i] = Some(self.read_rgb()?);
        }
        let end = base + 360.0;
        if (self.table_deg - end).abs() > 0.5 {
            let speed = self.config.turntable.speed;
            self.table_to(end, speed, "turntable back to square")?;
        }
        self.sensor_clear()?;
        Ok(out.into_iter().map(|o| o.unwrap_or([0.0; 3])).collect())
    }

    /// One revolution of the turntable with the sensor over one ring of stickers: the table
    /// turns through 360° at scan speed while each round trip reads both counts and the
    /// colour, and the sensor arm moves on to the next ring position as soon as a sample
    /// has its reading.
    fn revolution(
        &mut self,
        size: Size,
        samples: &[(Sample, usize)],
        ring: &[usize],
        base: f64,
        out: &mut [Option<[f64; 3]>],
    ) -> Result<(), RobotError> {
        let t = self.config.turntable.clone();
        let color = self.config.ports.color_sensor - 1;
        let first = self.sample_target(size, &samples[ring[0]].0);
        self.sensor_to(first, "sensor arm to the first sticker ring")?;
        let end = base + 360.0;
        let target = self.table_target(end);
        let mut table = self.table;
        let d = self.ev3.start_move_to(
            &mut table,
            target,
            t.scan_speed,
            (t.ramp_up, t.ramp_down),
            true,
        )?;
        self.table = table;
        let budget = Duration::from_secs_f64(
            2.0 * self
                .table
                .nominal_secs(d as f64, t.scan_speed, (t.ramp_up, t.ramp_down)),
        ) + self.ev3.timeouts.move_extra;
        let started = std::time::Instant::now();
        let mut cursor = RingCursor {
            samples,
            ring,
            next: 0,
            best: None,
            sensor_target: first,
        };
        let mut last_move = (self.ev3.count(self.table.port)?, std::time::Instant::now());
        loop {
            if self
                .interrupt
                .as_ref()
                .is_some_and(|f| f.load(Ordering::SeqCst))
            {
                let stopped = self.ev3.stop_all().is_ok();
                return Err(Ev3Error::Interrupted {
                    command: "scanning revolution".into(),
                    stopped,
                }
                .into());
            }
            let sample = self.scan_sample(color)?;
            let angle = (sample.table - self.table_zero) as f64 / (t.ratio * t.sign as f64) - base;
            let now = std::time::Instant::now();
            if (sample.table - last_move.0).abs() >= 2 {
                last_move = (sample.table, now);
            } else if sample.table_busy
                && (sample.table - target).abs() > 3
                && now - last_move.1 >= self.ev3.timeouts.stall
            {
                return Err(Ev3Error::Stalled {
                    command: "scanning revolution".into(),
                    port: self.table.port,
                    position: sample.table,
                    target,
                    ms: (now - last_move.1).as_millis() as u64,
                }
                .into());
            }
            self.follow_ring(size, &mut cursor, angle, &sample, out)?;
            if !sample.table_busy {
                break;
            }
            if started.elapsed() > budget {
                return Err(Ev3Error::MoveTimeout {
                    command: "scanning revolution".into(),
                    port: self.table.port,
                    position: sample.table,
                    target,
                    ms: budget.as_millis() as u64,
                }
                .into());
            }
            std::thread::sleep(self.ev3.timeouts.poll);
        }
        // Let a sensor-arm move started near the end finish.
        let sensor = self.sensor;
        self.ev3
            .wait("sensor arm settle", &[sensor], Duration::from_secs(3))?;
        self.table_deg = end;
        Ok(())
    }

    /// One round trip during a revolution: turntable and sensor-arm counts, the colour
    /// sensor's raw RGB and whether the turntable is still busy.
    fn scan_sample(&mut self, color: u8) -> Result<ScanSample, RobotError> {
        let mut c = DirectCommand::new();
        let tb = c.output_get_count(self.table.port);
        let sc = c.output_get_count(self.sensor.port);
        let rgb = c.ready_raw(color, device::COLOR, device::COLOR_RGB_RAW, 3);
        let busy = c.output_test(self.table.bit_nos() | self.sensor.bit_nos());
        let name = "scan sample (GET_COUNT turntable + sensor arm, READY_RAW colour)";
        let r = self.ev3.query(name, &c)?;
        let get = |s| {
            r.i32(s).map_err(|e| Ev3Error::Malformed {
                command: name.into(),
                detail: e.to_string(),
            })
        };
        let (table, sensor) = (get(tb)?, get(sc)?);
        let (tp, sp) = (self.table.port, self.sensor.port);
        Ok(ScanSample {
            table: self.ev3.check_count(name, tp, table)?,
            sensor: self.ev3.check_count(name, sp, sensor)?,
            rgb: [
                get(rgb[0])? as f64,
                get(rgb[1])? as f64,
                get(rgb[2])? as f64,
            ],
            table_busy: r.i8(busy).unwrap_or(0) != 0,
        })
    }

    /// Takes the reading of `sample` (table at `angle` from the ring's start) for the ring
    /// positions it serves: the closest reading within the window is kept, and once the
    /// table is past a position the sensor arm starts towards the next one.
    fn follow_ring(
        &mut self,
        size: Size,
        cursor: &mut RingCursor<'_>,
        angle: f64,
        sample: &ScanSample,
        out: &mut [Option<[f64; 3]>],
    ) -> Result<(), RobotError> {
        let window = self.config.scan.window;
        let tol = self.config.scan.sensor_tolerance;
        let ring = cursor.ring;
        while cursor.next < ring.len() {
            let k = cursor.next;
            let s = cursor.samples[ring[k]].0;
            let err = angle - s.angle;
            if err.abs() <= window
                && (sample.sensor - cursor.sensor_target).abs() <= tol
                && cursor.best.is_none_or(|(e, _)| err.abs() < e)
            {
                cursor.best = Some((err.abs(), sample.rgb));
            }
            // Past this sample (or at it with a reading): keep the best reading and
            // start moving the sensor arm for the next one at once.
            if err > window
                || (cursor.best.is_some() && err >= 0.0)
                || (!sample.table_busy && k + 1 == ring.len() && err > -window)
            {
                if let Some((_, rgb)) = cursor.best.take() {
                    out[ring[k]] = Some(rgb);
                }
                cursor.next = k + 1;
                if cursor.next < ring.len() {
                    let next = self.sample_target(size, &cursor.samples[ring[cursor.next]].0);
                    if next != cursor.sensor_target {
                        cursor.sensor_target = next;
                        let sp = self.config.sensor_arm.speed;
                        let ramp = self.config.sensor_arm.ramp;
                        let mut sensor = self.sensor;
                        self.ev3
                            .start_move_to(&mut sensor, next, sp, (ramp, ramp), true)?;
                        self.sensor = sensor;
                        self.sensor_at = Some(next);
                    }
                }
                continue;
            }
            break;
        }
        Ok(())
    }

    /// Re-reads single stickers (facelet indices of the last scan's frame). The cube must
    /// not have had a layer turned since the scan.
    pub fn rescan(&mut self, stickers: &[usize]) -> Result<Vec<[f64; 3]>, RobotError> {
        let (size, _) = self.frame.clone().ok_or(RobotError::RescanWithoutScan)?;
        let side = self.config.scan.sensor_side;
        let samples = face_samples(size, side);
        let mut out = Vec::new();
        for &want in stickers {
            if want >= size.stickers() {
                return Err(RobotError::NoSuchSticker {
                    sticker: want,
                    size,
                });
            }
            let pos = self.bring_to_top(want)?;
            let s = *samples
                .iter()
                .find(|s| s.position == pos)
                .ok_or(RobotError::Unreadable { sticker: want })?;
            let rgb = self.guard(|r| {
                r.arm_to(ArmState::Away)?;
                let base = r.table_deg;
                let speed = r.config.turntable.speed;
                if s.kind != SensorPosition::Centre {
                    r.table_to(base + s.angle, speed, "turntable to a sticker")?;
                }
                let t = r.sample_target(size, &s);
                r.sensor_to(t, "sensor arm over a sticker")?;
                let rgb = r.read_rgb()?;
                r.sensor_clear()?;
                if s.kind != SensorPosition::Centre {
                    // Back to where it was (same orientation).
                    let back = base + if s.angle >= 180.0 { 360.0 } else { 0.0 };
                    r.table_to(back, speed, "turntable back to square")?;
                }
                Ok(rgb)
            })?;
            out.push(rgb);
        }
        Ok(out)
    }

    /// Starts a new scan frame (as a scan does) for a scanner other than the colour sensor
    /// (e.g. a camera over the top face): facelet indices are then those of the cube as it
    /// sits now, and whole-cube moves keep the frame.
    pub fn begin_frame(&mut self, size: Size) {
        self.frame = Some((size, Permutation::identity(size.stickers())));
    }

    /// For each top-face position (robot frame, row-major), the facelet index (frame of the
    /// last scan start) it shows now; `None` before any scan.
    pub fn top_facelets(&self) -> Option<Vec<usize>> {
        self.frame
            .as_ref()
            .map(|(size, f)| f.0[..size.per_face()].iter().map(|&i| i as usize).collect())
    }

    /// Brings facelet `want` (frame of the last scan start) to the top face with as few
    /// whole-cube moves as possible; returns the top-face position it is at then.
    pub fn bring_to_top(&mut self, want: usize) -> Result<usize, RobotError> {
        let (size, _) = self.frame.clone().ok_or(RobotError::NoScanFrame)?;
        if want >= size.stickers() {
            return Err(RobotError::NoSuchSticker {
                sticker: want,
                size,
            });
        }
        let plan = self.plan_to_top(size, want);
        for p in plan {
            self.execute(p)?;
        }
        self.check_interrupt()?;
        let (_, frame) = self.frame.clone().ok_or(RobotError::FrameLost)?;
        frame
            .0
            .iter()
            .position(|&o| o as usize == want)
            .ok_or(RobotError::NotInFrame { sticker: want })
    }

    fn plan_to_top(&self, size: Size, want: usize) -> Vec<Primitive> {
        let (_, frame) = self.frame.clone().expect("checked by the caller");
        let per = size.per_face();
        let on_top = |f: &Permutation| {
            f.0.iter()
                .position(|&o| o as usize == want)
                .is_some_and(|p| p < per)
        };
        // Breadth-first over whole-cube moves (cost ≈ seconds from the timings).
        let moves = [
            Primitive::Tilt,
            Primitive::Spin(1),
            Primitive::Spin(-1),
            Primitive::Spin(2),
        ];
        let mut queue = std::collections::VecDeque::from([(frame, Vec::<Primitive>::new())]);
        while let Some((f, path)) = queue.pop_front() {
            if on_top(&f) {
                return path;
            }
            if path.len() >= 4 {
                continue;
            }
            for &m in &moves {
                let mut p = path.clone();
                p.push(m);
                queue.push_back((f.then(&perm_of(size, m)), p));
            }
        }
        Vec::new()
    }

    /// Stops all motors (float), ends with a beep if all is well. The sensor arm ends at
    /// `clear` exactly (chunks leave it further out), where a scan expects it.
    pub fn finish(&mut self, beep: bool) -> Result<(), RobotError> {
        let r = (|| {
            self.await_tail()?;
            let clear = self.config.sensor_arm.clear;
            if self.sensor_at.is_some_and(|p| p != clear) {
                self.sensor_to(clear, "sensor arm to clear")?;
            } else {
                self.sensor_clear()?;
            }
            self.ev3.stop_all()?;
            if beep {
                self.ev3.beep()?;
            }
            Ok(())
        })();
        if r.is_err() {
            let _ = self.ev3.stop_all();
        }
        r
    }

    /// Stops every motor (after a chunk's last move still settling, bounded on the brick);
    /// whether the brick confirmed it.
    pub fn stop(&mut self) -> bool {
        let _ = self.await_tail();
        self.ev3.stop_all().is_ok()
    }

    /// The port of one of the robot's motors.
    pub fn port_of(&self, part: Part) -> OutputPort {
        match part {
            Part::Arm => self.arm.port,
            Part::Turntable => self.table.port,
            Part::SensorArm => self.sensor.port,
        }
    }

    /// Moves one motor by `degrees` (motor degrees, slowly) and back, reading its sensor
    /// count before, at the far end and after coming back: what `robot check` judges a
    /// motor by. Homes first; the machine's positions are unchanged afterwards.
    pub fn jog(&mut self, part: Part, degrees: i32) -> Result<Jog, RobotError> {
        self.check_interrupt()?;
        self.ensure_homed()?;
        let port = self.port_of(part);
        let mut m = match part {
            Part::Arm => self.arm,
            Part::Turntable => self.table,
            Part::SensorArm => self.sensor,
        };
        let saved = m.target;
        let jog = self.guard(|r| {
            let from = r.ev3.count(port)?;
            let what = format!("check: motor {port} by {degrees:+}° and back");
            r.ev3.move_to(&what, &mut m, from + degrees, 20, (5, 5))?;
            let reached = r.ev3.count(port)?;
            r.ev3.move_to(&what, &mut m, from, 20, (5, 5))?;
            let back = r.ev3.count(port)?;
            Ok(Jog {
                port,
                from,
                target: from + degrees,
                reached,
                back,
            })
        });
        m.target = saved;
        match part {
            Part::Arm => self.arm = m,
            Part::Turntable => self.table = m,
            Part::SensorArm => self.sensor = m,
        }
        jog
    }
}

/// One of the MindCub3r's three motors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The tilt/hold arm (large motor).
    Arm,
    /// The turntable (large motor).
    Turntable,
    /// The colour-sensor arm (medium motor).
    SensorArm,
}

/// A small move of one motor and back ([`MindCub3r::jog`]): sensor counts in degrees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Jog {
    pub port: OutputPort,
    /// Before the move.
    pub from: i32,
    /// Where it was sent.
    pub target: i32,
    /// Where it ended.
    pub reached: i32,
    /// After coming back.
    pub back: i32,
}

/// One round trip of a scanning revolution.
struct ScanSample {
    /// Turntable and sensor-arm sensor counts.
    table: i32,
    sensor: i32,
    /// Raw RGB of the colour sensor.
    rgb: [f64; 3],
    table_busy: bool,
}

/// Where a scanning revolution is in its ring of samples.
struct RingCursor<'a> {
    samples: &'a [(Sample, usize)],
    ring: &'a [usize],
    /// The next ring position to read.
    next: usize,
    /// The best reading of that position so far: (angle error, RGB).
    best: Option<(f64, [f64; 3])>,
    /// Where the sensor arm was sent.
    sensor_target: i32,
}

impl Motor {
    fn bit_nos(&self) -> u8 {
        self.port.bit()
    }
}

fn check_quarter(k: i8) -> Result<i8, RobotError> {
    match k {
        1 | -1 | 2 | -2 => Ok(k),
        other => Err(RobotError::BadQuarters { quarters: other }),
    }
}
