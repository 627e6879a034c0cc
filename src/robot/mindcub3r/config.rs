//! The MindCub3r calibration: ports, motor speeds, arm and turntable angles, sensor spots,
//! timeouts and measured timings, read from a versioned TOML file.
//!
//! Level: robot (uses [`crate::robot::ev3`] for port names and driver timeouts). No printing.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::error::RobotError;
use super::model::Timings;
use crate::robot::ev3::driver::DriverTimeouts;
use crate::robot::ev3::protocol::OutputPort;

/// Largest motor speed a configuration may give (°/s at 100 %); real EV3 motors do ~1,600.
pub const MAX_DEG_PER_S: f64 = 10_000.0;
/// Largest turntable gear ratio.
pub const MAX_RATIO: f64 = 100.0;
/// Longest time a configuration may give one primitive (s).
pub const MAX_PRIMITIVE_S: f64 = 60.0;
/// Largest motor angle (degrees) a configuration may name.
pub const MAX_ANGLE: i64 = 10_000;
/// Most link round trips a primitive may wait for.
pub const MAX_ROUND_TRIPS: f64 = 1000.0;
/// Longest ramp (motor degrees).
pub const MAX_RAMP: i64 = 3_600;
/// Longest time limit or pause (ms): ten minutes.
pub const MAX_MS: u64 = 600_000;

/// The calibration file version this code reads.
pub const CONFIG_VERSION: u32 = 1;

/// Ports (defaults in [The machine](crate::robot::mindcub3r#the-machine); verified with
/// GET_TYPEMODE at start-up).
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

/// Nominal full speeds (°/s at 100 %), used only for time budgets (see
/// [Time budgets](crate::robot::ev3::driver::motion#time-budgets)).
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
    /// Below this the arm is clear of the cube: the turntable may turn (the ev3dev demo
    /// moves the arm away before a spin only when it is above 35°).
    pub clear: i32,
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
    /// After each arm move, how long (ms) its count must stand still (see
    /// [Speeds](crate::robot::mindcub3r#speeds)).
    pub settle_ms: u64,
    /// Hold angle for a 2x2x2 (clamps the top layer only; UNCERTAIN).
    pub hold_2x2: i32,
}

impl Default for Arm {
    fn default() -> Self {
        Arm {
            away: 20,
            clear: 35,
            hold: 100,
            tilt_apex: 190,
            speed: 35,
            tilt_speed: 40,
            back_speed: 40,
            ramp_up: 15,
            ramp_down: 50,
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
    /// Motor degrees past the target on a layer turn, then back (see
    /// [Over-rotation](crate::robot::mindcub3r#over-rotation)).
    pub over_rotation: i32,
    pub over_rotation_speed: i8,
    /// Percent for the scanning revolution. The sensor arm must reach each sticker's
    /// position while the sticker passes: under LEGO's motor driver (its ramps end in a
    /// crawl) 70 % left the arm late on the firmware brick and the scan in doubt; 45 %
    /// reads every sticker in place.
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
            scan_speed: 45,
            ramp_up: 30,
            ramp_down: 120,
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
    /// Run each face's reading (and the tilt before it) as one program on the brick, which
    /// times the samples itself (see [Scan on the brick](crate::robot::mindcub3r#scan-on-the-brick));
    /// false: the host polls every sample over the link.
    pub on_brick: bool,
}

impl Default for ScanConfig {
    fn default() -> Self {
        ScanConfig {
            sensor_side: SensorSide::Front,
            on_the_fly: true,
            window: 12.0,
            sensor_tolerance: 12,
            on_brick: true,
        }
    }
}

/// Executing a plan's primitives.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExecutionConfig {
    /// Send the primitives in chunks that the brick runs back to back as one program (see
    /// [Execution on the brick](crate::robot::mindcub3r#execution-on-the-brick)), and home
    /// the arms by programs too ([Start-up](crate::robot::mindcub3r#start-up)); false: the
    /// host sends every move and polls until it ends.
    pub on_brick: bool,
    /// Longest nominal motion time of one chunk, seconds. A stop asked for (Ctrl-C) waits
    /// for the chunk under way to end, so this bounds how long that takes.
    pub chunk_seconds: f64,
    /// The turntable starts a spin once the tilt arm, on its way away, is below `arm.clear`.
    pub table_starts_at_clear: bool,
    /// The tilt arm starts down to hold while the turntable decelerates at the end of a
    /// spin, timed so it reaches `arm.clear` only after the table has stopped.
    pub arm_lowers_while_table_stops: bool,
    /// Safety factor of that timing: when the arm starts, the table's remaining time is
    /// the arm's nominal time from away to `arm.clear` divided by this.
    pub overlap_margin: f64,
    /// A chunk answers as soon as its last primitive, a tilt or a layer turn, has changed
    /// the cube, while the arm swings back to hold or the layer backs off its
    /// over-rotation; the next program waits for that move on the brick. The link's round
    /// trip then passes while the robot still moves.
    pub answer_during_last_move: bool,
}

impl Default for ExecutionConfig {
    fn default() -> Self {
        ExecutionConfig {
            on_brick: true,
            chunk_seconds: 1.0,
            table_starts_at_clear: true,
            arm_lowers_while_table_stops: true,
            overlap_margin: 1.5,
            answer_during_last_move: true,
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
    pub execution: ExecutionConfig,
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
            execution: ExecutionConfig::default(),
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
        let said = |e: toml::de::Error| crate::input::toml_error(text, &e);
        let v: V = toml::from_str(text).map_err(said)?;
        match v.version {
            Some(CONFIG_VERSION) => {}
            Some(other) => {
                return Err(format!(
                    "version {other} is not supported (this build reads version {CONFIG_VERSION})"
                ))
            }
            None => {
                return Err(format!(
                    "missing `version = {CONFIG_VERSION}` (the line a robot configuration \
                     starts with; calibration/mindcub3r.toml shows the whole file)"
                ))
            }
        }
        let c: Config = toml::from_str(text).map_err(said)?;
        c.check()?;
        Ok(c)
    }

    pub fn load(path: &Path) -> Result<Config, RobotError> {
        let text = crate::input::read_text(path, crate::input::FileKind::RobotConfig)?;
        Config::parse(&text).map_err(|why| RobotError::Config {
            path: path.display().to_string(),
            why,
        })
    }

    pub(super) fn check(&self) -> Result<(), String> {
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
        self.check_numbers()?;
        self.check_order()?;
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

    /// The positions in the order the mechanism needs, so that a mistyped angle is refused
    /// before a motor drives into the cube or a stop: the tilt arm from its stop out
    /// `0 <= away < clear < hold (and hold_2x2) < tilt_apex`; each reading position of the
    /// sensor arm beyond `clear` on the same side of `parked`.
    fn check_order(&self) -> Result<(), String> {
        let a = &self.arm;
        let chain = [
            ("arm.away", a.away),
            ("arm.clear", a.clear),
            ("arm.hold", a.hold),
            ("arm.tilt_apex", a.tilt_apex),
        ];
        if a.away < 0 {
            return Err(format!(
                "arm.away must be 0 or more (degrees out from the arm's stop), is {}",
                a.away
            ));
        }
        for w in chain.windows(2) {
            if w[0].1 >= w[1].1 {
                return Err(format!(
                    "{} ({}) must be below {} ({}): the arm goes away < clear < hold < tilt_apex",
                    w[0].0, w[0].1, w[1].0, w[1].1
                ));
            }
        }
        if !(a.clear < a.hold_2x2 && a.hold_2x2 < a.tilt_apex) {
            return Err(format!(
                "arm.hold_2x2 ({}) must lie between arm.clear ({}) and arm.tilt_apex ({})",
                a.hold_2x2, a.clear, a.tilt_apex
            ));
        }
        let s = &self.sensor_arm;
        let out = |p: i32| (p - s.parked) * (s.clear - s.parked).signum();
        if s.clear == s.parked {
            return Err("sensor_arm.clear must differ from sensor_arm.parked".into());
        }
        let mut reads = vec![
            ("sensor_arm.centre".to_string(), s.centre),
            ("sensor_arm.corner_2x2".to_string(), s.corner_2x2),
        ];
        reads.extend(
            s.edge
                .iter()
                .enumerate()
                .map(|(k, &v)| (format!("sensor_arm.edge[{k}]"), v)),
        );
        reads.extend(
            s.corner
                .iter()
                .enumerate()
                .map(|(k, &v)| (format!("sensor_arm.corner[{k}]"), v)),
        );
        for (name, v) in reads {
            if out(v) <= out(s.clear) {
                return Err(format!(
                    "{name} ({v}) must lie beyond sensor_arm.clear ({}) as seen from sensor_arm.parked ({}): the sensor reads over the cube",
                    s.clear, s.parked
                ));
            }
        }
        Ok(())
    }

    /// Every number finite and in its range, so that nothing downstream (time budgets, the
    /// planner's costs, angle arithmetic) meets a NaN, a negative time or an overflow; the
    /// message names the section and the field.
    fn check_numbers(&self) -> Result<(), String> {
        let real = |name: &str, v: f64, lo: f64, hi: f64| {
            if v.is_finite() && v > lo && v <= hi {
                Ok(())
            } else {
                Err(format!(
                    "{name} must be a finite number > {lo} and ≤ {hi}, is {v}"
                ))
            }
        };
        let m = &self.motors;
        real(
            "motors.large_full_speed",
            m.large_full_speed,
            0.0,
            MAX_DEG_PER_S,
        )?;
        real(
            "motors.medium_full_speed",
            m.medium_full_speed,
            0.0,
            MAX_DEG_PER_S,
        )?;
        real("turntable.ratio", self.turntable.ratio, 0.0, MAX_RATIO)?;
        real("scan.window", self.scan.window, 0.0, 45.0)?;
        real(
            "execution.chunk_seconds",
            self.execution.chunk_seconds,
            0.0,
            MAX_PRIMITIVE_S,
        )?;
        real(
            "execution.overlap_margin",
            self.execution.overlap_margin,
            0.99,
            10.0,
        )?;
        let t = &self.timings;
        for (name, v) in [
            ("timings.arm_away_to_hold", t.arm_away_to_hold),
            ("timings.arm_hold_to_away", t.arm_hold_to_away),
            ("timings.tilt", t.tilt),
            ("timings.spin_quarter", t.spin_quarter),
            ("timings.spin_half", t.spin_half),
            ("timings.turn_quarter", t.turn_quarter),
            ("timings.turn_half", t.turn_half),
            ("timings.sensor_move", t.sensor_move),
            ("timings.read", t.read),
        ] {
            real(name, v, 0.0, MAX_PRIMITIVE_S)?;
        }
        let non_negative = |name: &str, v: f64, hi: f64| {
            if v.is_finite() && (0.0..=hi).contains(&v) {
                Ok(())
            } else {
                Err(format!(
                    "{name} must be a finite number ≥ 0 and ≤ {hi}, is {v}"
                ))
            }
        };
        non_negative("timings.round_trip", t.round_trip, MAX_PRIMITIVE_S)?;
        for (name, v) in super::model::TIMING_KEYS.iter().zip(t.round_trips.get()) {
            non_negative(&format!("timings.round_trips.{name}"), v, MAX_ROUND_TRIPS)?;
        }
        let whole = |name: &str, v: i64, lo: i64, hi: i64| {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(format!("{name} must be {lo}..={hi}, is {v}"))
            }
        };
        let (a, tt, s) = (&self.arm, &self.turntable, &self.sensor_arm);
        let angles = [
            ("arm.away", a.away),
            ("arm.clear", a.clear),
            ("arm.hold", a.hold),
            ("arm.tilt_apex", a.tilt_apex),
            ("arm.hold_2x2", a.hold_2x2),
            ("turntable.over_rotation", tt.over_rotation),
            ("sensor_arm.parked", s.parked),
            ("sensor_arm.clear", s.clear),
            ("sensor_arm.centre", s.centre),
            ("sensor_arm.corner_2x2", s.corner_2x2),
        ];
        for (name, v) in angles {
            whole(name, v.into(), -MAX_ANGLE, MAX_ANGLE)?;
        }
        for (k, v) in s.edge.iter().enumerate() {
            whole(
                &format!("sensor_arm.edge[{k}]"),
                (*v).into(),
                -MAX_ANGLE,
                MAX_ANGLE,
            )?;
        }
        for (k, v) in s.corner.iter().enumerate() {
            whole(
                &format!("sensor_arm.corner[{k}]"),
                (*v).into(),
                -MAX_ANGLE,
                MAX_ANGLE,
            )?;
        }
        whole(
            "scan.sensor_tolerance",
            self.scan.sensor_tolerance.into(),
            0,
            360,
        )?;
        for (name, v) in [
            ("arm.ramp_up", a.ramp_up),
            ("arm.ramp_down", a.ramp_down),
            ("turntable.ramp_up", tt.ramp_up),
            ("turntable.ramp_down", tt.ramp_down),
            ("sensor_arm.ramp", s.ramp),
        ] {
            whole(name, v.into(), 0, MAX_RAMP)?;
        }
        for (name, v) in [
            ("arm.home_speed", a.home_speed),
            ("sensor_arm.home_speed", s.home_speed),
        ] {
            if v == 0 || !(-100..=100).contains(&v) {
                return Err(format!(
                    "{name} must be -100..=100 percent and not 0, is {v}"
                ));
            }
        }
        let ms = |name: &str, v: u64, lo: u64| {
            if (lo..=MAX_MS).contains(&v) {
                Ok(())
            } else {
                Err(format!("{name} must be {lo}..={MAX_MS} ms, is {v}"))
            }
        };
        let to = &self.timeouts;
        ms("arm.settle_ms", a.settle_ms, 0)?;
        ms("timeouts.reply_ms", to.reply_ms, 1)?;
        ms("timeouts.poll_ms", to.poll_ms, 0)?;
        ms("timeouts.stall_ms", to.stall_ms, 1)?;
        ms("timeouts.move_extra_ms", to.move_extra_ms, 0)?;
        ms("timeouts.home_ms", to.home_ms, 1)?;
        Ok(())
    }

    pub(super) fn driver_timeouts(&self) -> DriverTimeouts {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn why(text: &str) -> String {
        Config::parse(&format!("version = 1\n{text}")).expect_err(text)
    }

    #[test]
    fn numbers_out_of_range_are_refused_naming_section_and_field() {
        for bad in ["-5.0", "nan", "1e308", "inf", "0.0"] {
            let w = why(&format!("[timings]\ntilt = {bad}"));
            assert!(w.contains("timings.tilt"), "{bad}: {w}");
        }
        assert!(why("[turntable]\nratio = nan").contains("turntable.ratio"));
        assert!(why("[motors]\nlarge_full_speed = 1e308").contains("motors.large_full_speed"));
        assert!(why("[scan]\nwindow = -1.0").contains("scan.window"));
        assert!(why("[arm]\ntilt_apex = 2000000000").contains("arm.tilt_apex"));
        assert!(why("[arm]\nhold = 1000").contains("arm.hold (1000) must be below arm.tilt_apex"));
        assert!(why("[arm]\naway = 50").contains("arm.away (50) must be below arm.clear"));
        assert!(
            why("[sensor_arm]\ncentre = -300").contains("sensor_arm.centre (-300) must lie beyond")
        );
        assert!(why("[arm]\nhome_speed = 0").contains("arm.home_speed"));
        assert!(why("[timeouts]\nreply_ms = 18446744073709551615").contains("reply_ms"));
        assert!(why("[sensor_arm]\nedge = [0, 0, 99999, 0]").contains("sensor_arm.edge[2]"));
    }

    #[test]
    fn unknown_timings_keys_are_refused() {
        assert!(why("[timings]\ntilt_time = 0.5").contains("tilt_time"));
        assert!(why("[timings.round_trips]\ntilts = 2.0").contains("tilts"));
    }

    #[test]
    fn round_trips_are_checked_like_the_seconds() {
        let w = why("[timings.round_trips]\ntilt = -1.0");
        assert!(w.contains("timings.round_trips.tilt"), "{w}");
        assert!(why("[timings]\nround_trip = nan").contains("timings.round_trip"));
        Config::parse(
            "version = 1\n[timings]\nround_trip = 0.06\n[timings.round_trips]\ntilt = 0.0",
        )
        .expect("zero round trips are allowed");
    }

    #[test]
    fn the_defaults_pass_the_checks() {
        Config::default().check().expect("defaults");
        Config::parse("version = 1").expect("an empty file is the defaults");
    }
}
