//! The MindCub3r on top of the EV3 driver: calibration (`calibration/mindcub3r.toml`),
//! start-up (device check, homing), the primitives of `model.rs` with angles, speeds and
//! over-rotation from the calibration, and the colour-sensor scan (mechanics doc §6) mapped
//! to URFDLB facelet indices of the cube as it sat before the scan.
//!
//! Level: robot (uses `cube`, `color::raw`). No printing: progress through callbacks.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ev3::{DeviceExpectation, DriverTimeouts, Ev3, Ev3Error, Motor, MotorKind};
use super::model::{Orientation, Primitive, SensorPosition, Timings};
use super::protocol::{device, DirectCommand, OutputPort};
use super::transport::Transport;
use crate::color::{RawScan, Scale};
use crate::cube::{Face, Permutation, Size};

/// The calibration file version this code reads.
pub const CONFIG_VERSION: u32 = 1;

/// Ports (mechanics doc §1; verified with GET_TYPEMODE at start-up).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Ports {
    pub arm: OutputPort,
    pub turntable: OutputPort,
    pub sensor_arm: OutputPort,
    /// Sensor port 1..4.
    pub color_sensor: u8,
}

impl Default for Ports {
    fn default() -> Self {
        Ports {
            arm: OutputPort::A,
            turntable: OutputPort::B,
            sensor_arm: OutputPort::C,
            color_sensor: 2,
        }
    }
}

/// Nominal full speeds (doc §8.5), used for time budgets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Motors {
    pub large_full_speed: f64,
    pub medium_full_speed: f64,
}

impl Default for Motors {
    fn default() -> Self {
        Motors {
            large_full_speed: 1050.0,
            medium_full_speed: 1560.0,
        }
    }
}

/// Tilt/hold arm, motor degrees from the homed zero (retracted stop).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Arm {
    pub away: i32,
    pub hold: i32,
    pub tilt_apex: i32,
    /// Percent for away ↔ hold.
    pub speed: i8,
    /// Percent for hold → apex, and apex → hold.
    pub tilt_speed: i8,
    pub back_speed: i8,
    pub ramp_up: u32,
    pub ramp_down: u32,
    /// Percent for homing; the sign points at the retracted stop.
    pub home_speed: i8,
    /// Pause after each arm move (ms, mechanics doc §4.1).
    pub settle_ms: u64,
    /// Hold angle for a 2x2x2 (clamps the top layer only; UNCERTAIN).
    pub hold_2x2: i32,
}

impl Default for Arm {
    fn default() -> Self {
        Arm {
            away: 0,
            hold: 100,
            tilt_apex: 190,
            speed: 45,
            tilt_speed: 50,
            back_speed: 55,
            ramp_up: 15,
            ramp_down: 25,
            home_speed: -25,
            settle_ms: 30,
            hold_2x2: 100,
        }
    }
}

/// Turntable (motor degrees; `ratio` motor degrees per table degree).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Turntable {
    pub ratio: f64,
    /// +1 when a positive motor move turns the table clockwise seen from above (`y`).
    pub sign: i8,
    /// Percent for spins.
    pub speed: i8,
    /// Percent for bottom-layer turns.
    pub turn_speed: i8,
    /// Motor degrees past the target on a layer turn, then back (mechanics doc §3.1).
    pub over_rotation: i32,
    pub over_rotation_speed: i8,
    /// Percent for the scanning revolution.
    pub scan_speed: i8,
    pub ramp_up: u32,
    pub ramp_down: u32,
}

impl Default for Turntable {
    fn default() -> Self {
        Turntable {
            ratio: 3.0,
            sign: 1,
            speed: 55,
            turn_speed: 55,
            over_rotation: 18,
            over_rotation_speed: 15,
            scan_speed: 50,
            ramp_up: 30,
            ramp_down: 45,
        }
    }
}

/// Colour-sensor arm, motor degrees from the homed zero (parked stop); negative inwards.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SensorArm {
    pub speed: i8,
    /// Percent for homing; the sign points at the parked stop.
    pub home_speed: i8,
    pub parked: i32,
    pub clear: i32,
    pub centre: i32,
    /// Positions for the four edge samples of a revolution (table 90°, 180°, 270°, 360°).
    pub edge: [i32; 4],
    /// Positions for the four corner samples (table 45°, 135°, 225°, 315°).
    pub corner: [i32; 4],
    /// 2x2x2: the one corner radius.
    pub corner_2x2: i32,
    pub ramp: u32,
}

impl Default for SensorArm {
    fn default() -> Self {
        SensorArm {
            speed: 75,
            home_speed: 30,
            parked: 0,
            clear: -400,
            centre: -750,
            edge: [-655, -655, -650, -645],
            corner: [-595, -600, -600, -590],
            corner_2x2: -650,
            ramp: 20,
        }
    }
}

/// Robot side over which the colour sensor reaches the top face.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SensorSide {
    Front,
    Right,
    Back,
    Left,
}

/// Scanning.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScanConfig {
    pub sensor_side: SensorSide,
    /// Sample on the fly during one revolution (else stop at every 45°).
    pub on_the_fly: bool,
    /// Accept an on-the-fly sample this many table degrees from its ideal angle.
    pub window: f64,
    /// Sensor-arm position error (motor degrees) tolerated for a reading.
    pub sensor_tolerance: i32,
}

impl Default for ScanConfig {
    fn default() -> Self {
        ScanConfig {
            sensor_side: SensorSide::Front,
            on_the_fly: true,
            window: 12.0,
            sensor_tolerance: 12,
        }
    }
}

/// Time limits (wall clock).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Timeouts {
    pub reply_ms: u64,
    pub poll_ms: u64,
    pub stall_ms: u64,
    pub move_extra_ms: u64,
    pub home_ms: u64,
}

impl Default for Timeouts {
    fn default() -> Self {
        let d = DriverTimeouts::default();
        Timeouts {
            reply_ms: d.reply.as_millis() as u64,
            poll_ms: d.poll.as_millis() as u64,
            stall_ms: d.stall.as_millis() as u64,
            move_extra_ms: d.move_extra.as_millis() as u64,
            home_ms: d.home.as_millis() as u64,
        }
    }
}

/// `calibration/mindcub3r.toml`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub version: u32,
    pub ports: Ports,
    pub motors: Motors,
    pub arm: Arm,
    pub turntable: Turntable,
    pub sensor_arm: SensorArm,
    pub scan: ScanConfig,
    pub timeouts: Timeouts,
    pub timings: Timings,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            version: CONFIG_VERSION,
            ports: Ports::default(),
            motors: Motors::default(),
            arm: Arm::default(),
            turntable: Turntable::default(),
            sensor_arm: SensorArm::default(),
            scan: ScanConfig::default(),
            timeouts: Timeouts::default(),
            timings: Timings::default(),
        }
    }
}

impl Config {
    pub fn parse(text: &str) -> Result<Config, String> {
        #[derive(Deserialize)]
        struct V {
            version: Option<u32>,
        }
        let v: V = toml::from_str(text).map_err(|e| e.to_string())?;
        match v.version {
            Some(CONFIG_VERSION) => {}
            Some(other) => {
                return Err(format!(
                    "version {other} is not supported (this program reads version {CONFIG_VERSION})"
                ))
            }
            None => return Err("missing `version`".into()),
        }
        let c: Config = toml::from_str(text).map_err(|e| e.to_string())?;
        c.check()?;
        Ok(c)
    }

    pub fn load(path: &Path) -> Result<Config, RobotError> {
        let text = std::fs::read_to_string(path).map_err(|e| RobotError::Config {
            path: path.display().to_string(),
            why: e.to_string(),
        })?;
        Config::parse(&text).map_err(|why| RobotError::Config {
            path: path.display().to_string(),
            why,
        })
    }

    fn check(&self) -> Result<(), String> {
        let p = &self.ports;
        if p.arm == p.turntable || p.arm == p.sensor_arm || p.turntable == p.sensor_arm {
            return Err("ports.arm, ports.turntable and ports.sensor_arm must differ".into());
        }
        if !(1..=4).contains(&p.color_sensor) {
            return Err("ports.color_sensor must be 1..4".into());
        }
        if self.turntable.sign != 1 && self.turntable.sign != -1 {
            return Err("turntable.sign must be 1 or -1".into());
        }
        if self.turntable.ratio.is_nan() || self.turntable.ratio <= 0.0 {
            return Err("turntable.ratio must be positive".into());
        }
        for (name, v) in [
            ("arm.speed", self.arm.speed),
            ("arm.tilt_speed", self.arm.tilt_speed),
            ("arm.back_speed", self.arm.back_speed),
            ("turntable.speed", self.turntable.speed),
            ("turntable.turn_speed", self.turntable.turn_speed),
            ("turntable.scan_speed", self.turntable.scan_speed),
            (
                "turntable.over_rotation_speed",
                self.turntable.over_rotation_speed,
            ),
            ("sensor_arm.speed", self.sensor_arm.speed),
        ] {
            if !(1..=100).contains(&v) {
                return Err(format!("{name} must be 1..100 percent, is {v}"));
            }
        }
        Ok(())
    }

    fn driver_timeouts(&self) -> DriverTimeouts {
        let t = &self.timeouts;
        DriverTimeouts {
            reply: Duration::from_millis(t.reply_ms),
            poll: Duration::from_millis(t.poll_ms),
            stall: Duration::from_millis(t.stall_ms),
            move_extra: Duration::from_millis(t.move_extra_ms),
            home: Duration::from_millis(t.home_ms),
        }
    }
}

/// Robot-level errors.
#[derive(Debug, thiserror::Error)]
pub enum RobotError {
    #[error(transparent)]
    Ev3(#[from] Ev3Error),
    #[error("calibration {path}: {why}")]
    Config { path: String, why: String },
    #[error("interrupted after {after}; motors stopped; {state}")]
    Interrupted { after: String, state: String },
    #[error("{0}")]
    Precondition(String),
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
}

/// The spots on the top face (robot frame) the sensor reads: (centre, edge at table 0°,
/// the corner that will be under it 45° later measured after the next quarter).
fn spots(size: Size, side: SensorSide) -> (Option<usize>, Option<usize>, usize) {
    let n = size.n();
    // Front side: edge U8 (row n-1, middle), corner U7 (row n-1, col 0).
    let (centre, edge) = if n % 2 == 1 {
        (Some(n * n / 2), Some((n - 1) * n + n / 2))
    } else {
        (None, None)
    };
    let corner = (n - 1) * n;
    let q = match side {
        SensorSide::Front => 0,
        SensorSide::Right => 1,
        SensorSide::Back => 2,
        SensorSide::Left => 3,
    };
    let perm = y_power(size, q);
    (
        centre,
        edge.map(|e| perm.0[e] as usize),
        perm.0[corner] as usize,
    )
}

fn perm_of(size: Size, p: Primitive) -> Permutation {
    p.as_move()
        .map(|m| m.permutation(size).clone())
        .unwrap_or_else(|| Permutation::identity(size.stickers()))
}

fn y_power(size: Size, q: i64) -> Permutation {
    let mut p = Permutation::identity(size.stickers());
    for _ in 0..q.rem_euclid(4) {
        p = p.then(&perm_of(size, Primitive::Spin(1)));
    }
    p
}

/// One sample of a face: where it is read and which top-face position (robot frame, at
/// the face's start) it shows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Table angle (degrees, + = y) from the face's start.
    pub angle: f64,
    pub kind: SensorPosition,
    /// Index into the calibration's edge/corner lists.
    pub slot: usize,
    /// Facelet index (robot frame at the face's start).
    pub position: usize,
}

/// The samples of one face, in reading order: centre, then one revolution in + direction
/// alternating corner and edge (mechanics doc §6.2); 2x2x2: four corners.
pub fn face_samples(size: Size, side: SensorSide) -> Vec<Sample> {
    let (centre, edge, corner) = spots(size, side);
    let mut out = Vec::new();
    if let Some(c) = centre {
        out.push(Sample {
            angle: 0.0,
            kind: SensorPosition::Centre,
            slot: 0,
            position: c,
        });
    }
    for k in 0..4i64 {
        // 45° + 90°k: the corner that y^(k+1) brings to the corner spot.
        out.push(Sample {
            angle: 45.0 + 90.0 * k as f64,
            kind: SensorPosition::Corner,
            slot: k as usize,
            position: y_power(size, k + 1).0[corner] as usize,
        });
        if let Some(e) = edge {
            // 90°(k+1): the edge that y^(k+1) brings to the edge spot.
            out.push(Sample {
                angle: 90.0 * (k + 1) as f64,
                kind: SensorPosition::Edge,
                slot: k as usize,
                position: y_power(size, k + 1).0[e] as usize,
            });
        }
    }
    out
}

/// The scan sequence: primitives before each face's reading (mechanics doc §6.1).
pub fn scan_steps() -> [Vec<Primitive>; 6] {
    use Primitive::*;
    [
        vec![],
        vec![Tilt],
        vec![Tilt],
        vec![Spin(-1), Tilt],
        vec![Spin(1), Tilt],
        vec![Tilt],
    ]
}

/// For every sample of the scan: (face step, sample, facelet index in the cube's frame at
/// the scan start). Derived from the primitives' permutations in `model.rs`.
pub fn scan_map(size: Size, side: SensorSide) -> Vec<(usize, Sample, usize)> {
    let mut frame = Permutation::identity(size.stickers());
    let mut out = Vec::new();
    for (step, prims) in scan_steps().iter().enumerate() {
        for &p in prims {
            frame = frame.then(&perm_of(size, p));
        }
        for s in face_samples(size, side) {
            out.push((step, s, frame.0[s.position] as usize));
        }
    }
    out
}

/// What a scan progress callback receives.
#[derive(Clone, Copy, Debug)]
pub struct ScanProgress {
    pub done: usize,
    pub total: usize,
    pub face_step: usize,
}

impl MindCub3r {
    /// Connects: ping, device check (exact report on mismatch), homing of both arms.
    pub fn connect(transport: Box<dyn Transport>, config: Config) -> Result<MindCub3r, RobotError> {
        config.check().map_err(|why| RobotError::Config {
            path: "(in memory)".into(),
            why,
        })?;
        let mut ev3 = Ev3::new(transport);
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
        };
        r.guard(|r| {
            r.ev3.nop()?;
            r.check_devices()?;
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

    /// Ctrl-C: checked before every primitive.
    pub fn set_interrupt(&mut self, flag: Arc<AtomicBool>) {
        self.interrupt = Some(flag);
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
            let _ = self.ev3.stop_all();
            return Err(RobotError::Interrupted {
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

    fn ensure_homed(&mut self) -> Result<(), RobotError> {
        if !self.homed {
            self.home()?;
        }
        Ok(())
    }

    fn settle(&self) {
        std::thread::sleep(Duration::from_millis(self.config.arm.settle_ms));
    }

    fn move_motor(
        &mut self,
        which: OutputPort,
        what: &str,
        target: i32,
        speed: i8,
        ramps: (u32, u32),
    ) -> Result<(), RobotError> {
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
        self.settle();
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
        self.guard(|r| r.execute_inner(p))?;
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
        Ok(())
    }

    fn execute_inner(&mut self, p: Primitive) -> Result<(), RobotError> {
        match p {
            Primitive::ArmAway => self.arm_to(ArmState::Away),
            Primitive::ArmHold => self.arm_to(ArmState::Hold),
            Primitive::Tilt => {
                self.sensor_clear()?;
                self.arm_to(ArmState::Hold)?;
                let a = self.config.arm.clone();
                self.move_motor(
                    self.arm.port,
                    "tilt: arm to apex",
                    a.tilt_apex,
                    a.tilt_speed,
                    (a.ramp_up, a.ramp_down),
                )?;
                let size = self.frame.as_ref().map(|f| f.0).unwrap_or(Size::Three);
                let hold = self.hold_angle(size);
                self.move_motor(
                    self.arm.port,
                    "tilt: arm back to hold",
                    hold,
                    a.back_speed,
                    (a.ramp_up, a.ramp_down * 2),
                )?;
                self.settle();
                Ok(())
            }
            Primitive::Spin(k) => {
                let k = check_quarter(k)?;
                self.arm_to(ArmState::Away)?;
                let deg = self.table_deg + 90.0 * k as f64;
                let speed = self.config.turntable.speed;
                self.table_to(deg, speed, &format!("spin {k:+}"))
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
                self.move_motor(
                    self.table.port,
                    &format!("{what}: over-rotate"),
                    target + over,
                    t.turn_speed,
                    (t.ramp_up, t.ramp_down),
                )?;
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
    /// sat before the scan. The cube ends in the orientation of mechanics doc §6.1.
    pub fn scan(
        &mut self,
        size: Size,
        progress: &mut dyn FnMut(ScanProgress),
    ) -> Result<RawScan, RobotError> {
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

    fn revolution(
        &mut self,
        size: Size,
        samples: &[(Sample, usize)],
        ring: &[usize],
        base: f64,
        out: &mut [Option<[f64; 3]>],
    ) -> Result<(), RobotError> {
        let t = self.config.turntable.clone();
        let window = self.config.scan.window;
        let tol = self.config.scan.sensor_tolerance;
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
        let mut k = 0; // next ring sample
        let mut best: Option<(f64, [f64; 3])> = None;
        let mut sensor_target = first;
        let mut last_move = (self.ev3.count(self.table.port)?, std::time::Instant::now());
        loop {
            let mut c = DirectCommand::new();
            let tb = c.output_get_count(self.table.port);
            let sc = c.output_get_count(self.sensor.port);
            let rgb = c.ready_raw(color, device::COLOR, device::COLOR_RGB_RAW, 3);
            let busy = c.output_test(self.table.bit_nos() | self.sensor.bit_nos());
            let name = "scan sample (GET_COUNT turntable + sensor arm, READY_RAW colour)";
            let r = self.ev3.call(name, &c)?;
            let get = |s| {
                r.i32(s).map_err(|e| Ev3Error::Malformed {
                    command: name.into(),
                    detail: e.to_string(),
                })
            };
            let tcount = get(tb)?;
            let scount = get(sc)?;
            let reading = [
                get(rgb[0])? as f64,
                get(rgb[1])? as f64,
                get(rgb[2])? as f64,
            ];
            let table_busy = r.i8(busy).unwrap_or(0) != 0;
            let angle = (tcount - self.table_zero) as f64 / (t.ratio * t.sign as f64) - base;
            let now = std::time::Instant::now();
            if (tcount - last_move.0).abs() >= 2 {
                last_move = (tcount, now);
            } else if table_busy
                && (tcount - target).abs() > 3
                && now - last_move.1 >= self.ev3.timeouts.stall
            {
                return Err(Ev3Error::Stalled {
                    command: "scanning revolution".into(),
                    port: self.table.port,
                    position: tcount,
                    target,
                    ms: (now - last_move.1).as_millis() as u64,
                }
                .into());
            }
            while k < ring.len() {
                let s = samples[ring[k]].0;
                let err = angle - s.angle;
                if err.abs() <= window
                    && (scount - sensor_target).abs() <= tol
                    && best.is_none_or(|(e, _)| err.abs() < e)
                {
                    best = Some((err.abs(), reading));
                }
                // Past this sample (or at it with a reading): keep the best reading and
                // start moving the sensor arm for the next one at once.
                if err > window
                    || (best.is_some() && err >= 0.0)
                    || (!table_busy && k + 1 == ring.len() && err > -window)
                {
                    if let Some((_, rgb)) = best.take() {
                        out[ring[k]] = Some(rgb);
                    }
                    k += 1;
                    if k < ring.len() {
                        let next = self.sample_target(size, &samples[ring[k]].0);
                        if next != sensor_target {
                            sensor_target = next;
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
            if !table_busy {
                break;
            }
            if started.elapsed() > budget {
                return Err(Ev3Error::MoveTimeout {
                    command: "scanning revolution".into(),
                    port: self.table.port,
                    position: tcount,
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

    /// Re-reads single stickers (facelet indices of the last scan's frame). The cube must
    /// not have had a layer turned since the scan.
    pub fn rescan(&mut self, stickers: &[usize]) -> Result<Vec<[f64; 3]>, RobotError> {
        let (size, _) = self.frame.clone().ok_or_else(|| {
            RobotError::Precondition("rescan needs a scan first, with no layer turned since".into())
        })?;
        let side = self.config.scan.sensor_side;
        let samples = face_samples(size, side);
        let mut out = Vec::new();
        for &want in stickers {
            if want >= size.stickers() {
                return Err(RobotError::Precondition(format!(
                    "sticker {want} does not exist on a {size}"
                )));
            }
            let pos = self.bring_to_top(want)?;
            let s = *samples.iter().find(|s| s.position == pos).ok_or_else(|| {
                RobotError::Precondition(format!("sticker {want} is not readable"))
            })?;
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
        let (size, _) = self.frame.clone().ok_or_else(|| {
            RobotError::Precondition("bringing a sticker to the top needs a scan frame".into())
        })?;
        if want >= size.stickers() {
            return Err(RobotError::Precondition(format!(
                "sticker {want} does not exist on a {size}"
            )));
        }
        let plan = self.plan_to_top(size, want);
        for p in plan {
            self.execute(p)?;
        }
        self.check_interrupt()?;
        let (_, frame) = self.frame.clone().ok_or_else(|| {
            RobotError::Precondition("the scan frame was lost by a layer turn".into())
        })?;
        frame
            .0
            .iter()
            .position(|&o| o as usize == want)
            .ok_or_else(|| RobotError::Precondition(format!("sticker {want} is not in the frame")))
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

    /// Stops all motors (float), ends with a beep if all is well.
    pub fn finish(&mut self, beep: bool) -> Result<(), RobotError> {
        let r = (|| {
            self.sensor_clear()?;
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

    /// Stops everything now (best effort).
    pub fn stop(&mut self) {
        let _ = self.ev3.stop_all();
    }
}

impl Motor {
    fn bit_nos(&self) -> u8 {
        self.port.bit()
    }
}

fn check_quarter(k: i8) -> Result<i8, RobotError> {
    match k {
        1 | -1 | 2 | -2 => Ok(k),
        other => Err(RobotError::Precondition(format!(
            "a spin or turn takes ±1 or ±2 quarters, not {other}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_calibration_parses_and_matches_defaults() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("calibration/mindcub3r.toml");
        let c = Config::load(&path).unwrap();
        assert_eq!(c, Config::default());
        assert!(Config::parse("version = 2")
            .unwrap_err()
            .contains("version 2"));
        assert!(Config::parse("version = 1\n[arm]\nbogus = 3").is_err());
    }

    #[test]
    fn face_u_is_read_in_the_doc_order() {
        // Mechanics doc §6.2: U centre 5, then 9 6 3 2 1 4 7 8 (1-based within the face).
        let s = face_samples(Size::Three, SensorSide::Front);
        let got: Vec<usize> = s.iter().map(|s| s.position + 1).collect();
        assert_eq!(got, vec![5, 9, 6, 3, 2, 1, 4, 7, 8]);
    }

    #[test]
    fn scan_map_covers_every_facelet_once_and_matches_the_doc() {
        for size in [Size::Three, Size::Two] {
            let map = scan_map(size, SensorSide::Front);
            let mut seen = vec![0; size.stickers()];
            for (_, _, i) in &map {
                seen[*i] += 1;
            }
            assert!(seen.iter().all(|&n| n == 1), "{size}: {seen:?}");
        }
        // Faces on top in scan order: U F D L B R (doc §6.1); centres land on them.
        let map = scan_map(Size::Three, SensorSide::Front);
        let centres: Vec<char> = map
            .iter()
            .filter(|(_, s, _)| s.kind == SensorPosition::Centre)
            .map(|(_, _, i)| Face::ALL[i / 9].letter())
            .collect();
        assert_eq!(centres, vec!['U', 'F', 'D', 'L', 'B', 'R']);
        // The demo's scan_order table (doc §6.2, rubiks-color-resolver numbering: faces
        // U L F R B D, 1..54), derived here from the model's permutations alone.
        let doc: [[usize; 9]; 6] = [
            [5, 9, 6, 3, 2, 1, 4, 7, 8],
            [23, 27, 24, 21, 20, 19, 22, 25, 26],
            [50, 54, 51, 48, 47, 46, 49, 52, 53],
            [14, 10, 13, 16, 17, 18, 15, 12, 11],
            [41, 43, 44, 45, 42, 39, 38, 37, 40],
            [32, 34, 35, 36, 33, 30, 29, 28, 31],
        ];
        // Resolver face order U L F R B D → our URFDLB face index.
        let ours = [0usize, 4, 2, 1, 5, 3];
        for (step, row) in doc.iter().enumerate() {
            let want: Vec<usize> = row
                .iter()
                .map(|&n| ours[(n - 1) / 9] * 9 + (n - 1) % 9)
                .collect();
            let got: Vec<usize> = map
                .iter()
                .filter(|(st, _, _)| *st == step)
                .map(|(_, _, i)| *i)
                .collect();
            assert_eq!(got, want, "face step {step}");
        }
    }
}
