//! `robot check`: everything a MindCub3r needs before its first run, checked in the order a
//! person would, each finding saying what is wrong and how to fix it.
//!
//! Level: robot (uses the EV3 driver and [`super::machine`]). No printing: findings go to a
//! callback as they are made, and come back as a list.
//!
//! ## Steps
//!
//! | Step | How | A finding when |
//! |------|-----|----------------|
//! | brick | COM_GET GET_BRICKNAME, UI_READ GET_FW_VERS / GET_HW_VERS | always (its name and firmware); a warning when the firmware is not LEGO's `V1.x` |
//! | battery | UI_READ GET_VBATT / GET_LBATT | below [`LOW_BATTERY_V`] a warning, below [`FLAT_BATTERY_V`] a failure |
//! | ports | GET_TYPEMODE on motors A..D and sensor ports 1..4, one round trip | each expected device that is not where the robot configuration says, with the fix: which cables to swap, or which `[ports]` value to set |
//! | polarity | OUTPUT_POLARITY 1 on the three motors | always (it is set; the firmware does not reset it for a host, see [Polarity](crate::robot::ev3::protocol#polarity)) |
//! | homing | the sensor arm, then the tilt arm, against their stops | a motor that finds no stop or stalls on the way |
//! | motors | each motor [`JOG_DEGREES`] away from its stop (the turntable either way) and back, slowly | a motor that did not move, ran backwards, stopped short or stalled |
//! | sensor | the colour sensor over the centre of the turntable, one RGB-RAW reading | (0, 0, 0): covered or not reading; saturated; bright: something is in the tray |
//!
//! Wrong devices stop the check before anything moves: driving a motor on the wrong port
//! could run an arm into the cube. A flat battery stops it there too: its motors would
//! stall and read as blocked. Each stop says so in a `motors: not moved` row, as does a
//! homing that failed (the motor tests start from the homed arms); a motor that fails its
//! test ends the check too, with a `not checked` row naming the steps left. The wording of each finding is what the tests check; the
//! ports' findings are [`super::wiring`]'s, which connecting also says.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::config::Config;
use super::error::RobotError;
use super::machine::{Jog, MindCub3r, Part};
use super::model::{Primitive, SensorPosition};
use super::wiring::finding;
pub use super::wiring::{judge_devices, Finding, Level};
use crate::robot::ev3::driver::{BrickInfo, Ev3, Ev3Error};
use crate::robot::ev3::protocol::OutputPort;

/// Below this battery voltage the check warns: motors run slower than the timings assume
/// and may stall (about a quarter of the firmware's battery gauge, 6.2–7.5 V).
pub const LOW_BATTERY_V: f64 = 6.5;
/// Below this the check fails: the firmware's own low-battery warning level for six AA
/// cells (`lms2012.h`, `BATT_WARNING_HIGH`).
pub const FLAT_BATTERY_V: f64 = 6.2;
/// How far each motor is moved and back (motor degrees).
pub const JOG_DEGREES: i32 = 30;
/// A jog that ends this close to its target (motor degrees) reached it.
pub const JOG_TOLERANCE: i32 = 5;

/// Runs the check over a driver (see the module docs). Link failures are errors; everything
/// the robot itself gets wrong is a finding. `stop` (Ctrl-C) ends it after the current step.
pub fn check(
    mut ev3: Ev3,
    config: Config,
    stop: Option<Arc<AtomicBool>>,
    report: &mut dyn FnMut(&Finding),
) -> Result<Vec<Finding>, RobotError> {
    let mut out = Vec::new();
    let mut add = |f: Finding, out: &mut Vec<Finding>| {
        report(&f);
        out.push(f);
    };
    ev3.nop()?;
    let info = ev3.brick_info()?;
    let mut flat = false;
    for f in judge_brick(&info) {
        flat |= f.topic == "battery" && f.level == Level::Fail;
        add(f, &mut out);
    }
    let inputs: Vec<u8> = OutputPort::ALL
        .iter()
        .map(|p| p.as_input())
        .chain(0..4)
        .collect();
    let found = ev3.typemodes(&inputs)?;
    let types: Vec<i8> = found.iter().map(|&(t, _)| t).collect();
    let devices = judge_devices(&config.ports, &types);
    let wiring_ok = devices.iter().all(|f| f.level == Level::Ok);
    for f in devices {
        add(f, &mut out);
    }
    let not_moved = |why: &str| finding(Level::Warn, "motors", format!("not moved: {why}"));
    if !wiring_ok {
        add(
            not_moved(
                "fix the wiring first (a motor on the wrong port could drive an arm into the cube)",
            ),
            &mut out,
        );
        return Ok(out);
    }
    if flat {
        add(
            not_moved("charge the battery first (on a flat battery a motor stalls as if blocked)"),
            &mut out,
        );
        return Ok(out);
    }
    let p = &config.ports;
    let nos = OutputPort::nos(&[p.arm, p.turntable, p.sensor_arm]);
    ev3.set_polarity(nos, 1)?;
    add(
        finding(
            Level::Ok,
            "polarity",
            format!(
                "set to normal on motors {}, {} and {} (an earlier session may have reversed one; the firmware resets it only when a program starts or ends)",
                p.arm, p.turntable, p.sensor_arm
            ),
        ),
        &mut out,
    );
    let home_speeds = (config.arm.home_speed, config.sensor_arm.home_speed);
    let mut robot = MindCub3r::with_driver(ev3, config)?;
    if let Some(s) = stop {
        robot.set_interrupt(s);
    }
    match robot.home() {
        Ok(()) => add(
            finding(
                Level::Ok,
                "homing",
                "the colour-sensor arm and the tilt arm reached their stops",
            ),
            &mut out,
        ),
        Err(e) => {
            add(
                judge_homing(robot.port_of(Part::Arm), e, home_speeds)?,
                &mut out,
            );
            add(
                not_moved("fix the homing first (the motor tests start from the homed arms)"),
                &mut out,
            );
            return Ok(out);
        }
    }
    const PARTS: [Part; 3] = [Part::Arm, Part::Turntable, Part::SensorArm];
    // The steps after a motor that failed its jog, named in one row.
    let not_checked = |after: usize| {
        let motors: Vec<String> = PARTS[after + 1..]
            .iter()
            .map(|&p| format!("the {}", part_name(p)))
            .collect();
        let names = if motors.is_empty() {
            "the colour sensor".to_string()
        } else {
            format!("{} and the colour sensor", motors.join(", "))
        };
        finding(
            Level::Warn,
            "not checked",
            format!("{names}: fix the fault above first, then check again"),
        )
    };
    for (i, part) in PARTS.into_iter().enumerate() {
        // Away from the stop the motor homed against (the turntable has none).
        let degrees = match part {
            Part::Arm => -home_speeds.0.signum() as i32 * JOG_DEGREES,
            Part::SensorArm => -home_speeds.1.signum() as i32 * JOG_DEGREES,
            Part::Turntable => JOG_DEGREES,
        };
        let port = robot.port_of(part);
        match robot.jog(part, degrees) {
            Ok(j) => {
                let f = judge_jog(part, &j);
                let bad = f.level == Level::Fail;
                add(f, &mut out);
                if bad {
                    robot.stop();
                    add(not_checked(i), &mut out);
                    return Ok(out);
                }
            }
            Err(RobotError::Ev3(e))
                if !e.link_failed() && !matches!(e, Ev3Error::Interrupted { .. }) =>
            {
                add(judge_motion_error(part, port, &e), &mut out);
                add(not_checked(i), &mut out);
                return Ok(out);
            }
            Err(e) => return Err(e),
        }
    }
    let read = (|| {
        robot.execute(Primitive::Sensor(SensorPosition::Centre))?;
        let rgb = robot.read_rgb()?;
        robot.finish(false)?;
        Ok(rgb)
    })();
    match read {
        Ok(rgb) => add(judge_reading(rgb), &mut out),
        Err(RobotError::Ev3(e)) if e.motion_fault_port().is_some() => {
            robot.stop();
            let part = [Part::Arm, Part::Turntable, Part::SensorArm]
                .into_iter()
                .find(|&p| e.motion_fault_port() == Some(robot.port_of(p)))
                .unwrap_or(Part::SensorArm);
            add(judge_reading_motion(part, &e), &mut out);
        }
        Err(e) => return Err(e),
    }
    Ok(out)
}

/// A motion fault while the sensor arm went over the turntable to read it, or back to
/// where it clears the cube: that motor's row.
fn judge_reading_motion(part: Part, e: &Ev3Error) -> Finding {
    let name = part_name(part);
    let (topic, what) = match e {
        Ev3Error::Stalled {
            port,
            position,
            target,
            ms,
            ..
        }
        | Ev3Error::MoveTimeout {
            port,
            position,
            target,
            ms,
            ..
        } => {
            let short = (target - position).abs();
            let what = if matches!(e, Ev3Error::Stalled { .. }) {
                format!("stalled {short}° short of where it was sent (no progress for {ms} ms)")
            } else {
                format!("still {short}° short of where it was sent after {ms} ms")
            };
            (format!("motor {port}"), what)
        }
        other => ("sensor".to_string(), other.to_string()),
    };
    finding(
        Level::Fail,
        topic,
        format!("{name}, moving the sensor over the turntable to read it: {what}: something blocks it (the tray must be empty, the arm's path clear)"),
    )
}

/// The brick's name, firmware and battery.
pub fn judge_brick(info: &BrickInfo) -> Vec<Finding> {
    let mut out = vec![finding(
        Level::Ok,
        "brick",
        format!(
            "{:?}, firmware {}, hardware {}",
            info.name, info.firmware, info.hardware
        ),
    )];
    if !info.firmware.starts_with("V1.") {
        out.push(finding(
            Level::Warn,
            "brick",
            format!(
                "firmware {:?} is not LEGO's stock firmware (V1.x): cubot speaks LEGO's direct commands; reinstall the stock firmware if commands fail",
                info.firmware
            ),
        ));
    }
    let v = info.battery_volts;
    let pct = info.battery_level;
    out.push(if v < FLAT_BATTERY_V {
        finding(
            Level::Fail,
            "battery",
            format!("{v:.2} V ({pct} %): flat; the motors will stall: put in fresh batteries or charge the pack"),
        )
    } else if v < LOW_BATTERY_V {
        finding(
            Level::Warn,
            "battery",
            format!("{v:.2} V ({pct} %): low; the motors run slower than the timings assume and may stall: put in fresh batteries or charge the pack before a run"),
        )
    } else {
        finding(Level::Ok, "battery", format!("{v:.2} V ({pct} %)"))
    });
    out
}

fn part_name(part: Part) -> &'static str {
    match part {
        Part::Arm => "tilt arm",
        Part::Turntable => "turntable",
        Part::SensorArm => "colour-sensor arm",
    }
}

/// A jog: reached its target, did not move, ran backwards, or stopped short.
pub fn judge_jog(part: Part, j: &Jog) -> Finding {
    let topic = format!("motor {}", j.port);
    let name = part_name(part);
    let asked = j.target - j.from;
    let moved = j.reached - j.from;
    if (j.reached - j.target).abs() <= JOG_TOLERANCE && (j.back - j.from).abs() <= JOG_TOLERANCE {
        return finding(
            Level::Ok,
            topic,
            format!("{name}: moved {asked:+}° and back as asked"),
        );
    }
    if (j.reached - j.target).abs() <= JOG_TOLERANCE {
        let back = j.back - j.from;
        let message = if back.signum() == -asked.signum() {
            format!("{name}: moved {asked:+}° but on the way back went past its start, to {back:+}°: it does not hold where it stops (a loose gear, or a motor other than the one expected)")
        } else {
            format!("{name}: moved {asked:+}° but came back only to {back:+}°: something blocks it on the way back")
        };
        return finding(Level::Fail, topic, message);
    }
    if moved.signum() == asked.signum() && moved.abs() > asked.abs() + JOG_TOLERANCE {
        return finding(
            Level::Fail,
            topic,
            format!("{name}: asked to move {asked:+}°, it ran on to {moved:+}°: it does not hold where it stops (a loose gear, or a motor other than the one expected)"),
        );
    }
    let message = if moved.abs() < 3 {
        format!(
            "{name}: asked to move {asked:+}°, it did not move: the brick sees the motor, so check that nothing blocks it and that its cable is pushed home"
        )
    } else if moved.signum() == -asked.signum() {
        format!(
            "{name}: asked to move {asked:+}°, it ran backwards ({moved:+}°): its polarity is reversed although it was set to normal; switch the brick off and on, then check again"
        )
    } else {
        format!("{name}: asked to move {asked:+}°, it stopped at {moved:+}°: something blocks it")
    };
    finding(Level::Fail, topic, message)
}

/// A motion error of a jog.
fn judge_motion_error(part: Part, port: OutputPort, e: &Ev3Error) -> Finding {
    let name = part_name(part);
    let hint = match part {
        Part::Arm => "; if the arm rests on its stop on the other side, flip the sign of arm.home_speed",
        Part::SensorArm => "; if the arm rests on its stop on the other side, flip the sign of sensor_arm.home_speed",
        Part::Turntable => "",
    };
    let what = match e {
        Ev3Error::Stalled {
            position,
            target,
            ms,
            ..
        } => format!(
            "stalled {}° short of where its {JOG_DEGREES}° test move sent it (no progress for {ms} ms)",
            (target - position).abs()
        ),
        other => other.to_string(),
    };
    finding(
        Level::Fail,
        format!("motor {port}"),
        format!("{name}: {what}: something blocks it{hint}"),
    )
}

/// Homing failed: which arm, and what to do. Link failures (and anything that is not a
/// motion fault) stay errors.
fn judge_homing(
    arm: OutputPort,
    e: RobotError,
    home_speeds: (i8, i8),
) -> Result<Finding, RobotError> {
    let ev3 = match e {
        RobotError::Ev3(ev3) if !ev3.link_failed() => ev3,
        other => return Err(other),
    };
    let (part, key, speed) = match &ev3 {
        Ev3Error::NoEndStop { port, .. } | Ev3Error::Stalled { port, .. } if *port == arm => {
            (Part::Arm, "arm.home_speed", home_speeds.0)
        }
        _ => (Part::SensorArm, "sensor_arm.home_speed", home_speeds.1),
    };
    let name = part_name(part);
    let message = match &ev3 {
        Ev3Error::NoEndStop { ms, .. } => format!(
            "the {name} found no end stop within {ms} ms at {speed} %: if it turned away from its stop, flip the sign of {key}; if it did not turn, check that nothing holds it"
        ),
        Ev3Error::Stalled {
            command,
            port,
            position,
            target,
            ms,
        } => format!(
            "the {name} (motor {port}) stalled {}° short of where its homing move sent it ({}; no progress for {ms} ms): something blocks it",
            (target - position).abs(),
            command.strip_prefix("homing: ").unwrap_or(command)
        ),
        other => format!("the {name} while homing: {other}: something blocks it"),
    };
    Ok(finding(Level::Fail, "homing", message))
}

/// The reading over the turntable.
pub fn judge_reading(rgb: [f64; 3]) -> Finding {
    let [r, g, b] = rgb;
    let shown = format!("{r:.0}, {g:.0}, {b:.0}");
    if rgb.iter().all(|&v| v <= 0.0) {
        return finding(
            Level::Fail,
            "sensor",
            format!("the colour sensor reads {shown}: its window is covered or it is not reading; clean it and check its cable"),
        );
    }
    if rgb.iter().any(|&v| v >= 1019.0) {
        return finding(
            Level::Warn,
            "sensor",
            format!("the colour sensor reads {shown}: saturated; something very bright or shiny is under it"),
        );
    }
    if r + g + b > 150.0 {
        return finding(
            Level::Warn,
            "sensor",
            format!("the colour sensor reads {shown}: something bright is under it; take the cube out of the tray for this check"),
        );
    }
    finding(
        Level::Ok,
        "sensor",
        format!("the colour sensor reads {shown} over the empty turntable"),
    )
}

#[cfg(test)]
mod tests {
    use super::super::config::Ports;
    use super::*;
    use crate::robot::ev3::protocol::device;

    fn types(outputs: [i8; 4], sensors: [i8; 4]) -> Vec<i8> {
        outputs.iter().chain(sensors.iter()).copied().collect()
    }

    const L: i8 = device::LARGE_MOTOR;
    const M: i8 = device::MEDIUM_MOTOR;
    const C: i8 = device::COLOR;
    const N: i8 = device::NONE;
    const IR: i8 = device::INFRARED;

    fn messages(found: &[i8]) -> Vec<String> {
        judge_devices(&Ports::default(), found)
            .into_iter()
            .filter(|f| f.level == Level::Fail)
            .map(|f| f.message)
            .collect()
    }

    #[test]
    fn right_wiring_is_all_ok() {
        assert!(messages(&types([L, L, M, N], [N, C, N, IR])).is_empty());
    }

    #[test]
    fn swapped_motors_name_both_ports_and_the_swap() {
        let m = messages(&types([M, L, L, N], [N, C, N, IR]));
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(m[0].starts_with("port A holds a medium motor; MindCub3r expects the large motor of the tilt arm there: swap the cables of port A and port C"), "{}", m[0]);
        assert!(m[1].starts_with("port C holds a large motor; MindCub3r expects the medium motor of the sensor arm there: swap the cables of port C and port A"), "{}", m[1]);
    }

    #[test]
    fn a_sensor_in_another_port_says_where_it_is() {
        let m = messages(&types([L, L, M, N], [N, N, C, IR]));
        assert_eq!(
            m,
            vec!["sensor port 2 holds nothing; MindCub3r expects the colour sensor there: the colour sensor is on sensor port 3: move its cable to sensor port 2 (or set ports.color_sensor = 3 in the robot configuration)".to_string()]
        );
    }

    #[test]
    fn an_empty_port_and_an_unknown_device() {
        let m = messages(&types([L, N, M, N], [N, 125, N, IR]));
        assert!(m[0].contains("port B holds nothing; MindCub3r expects the large motor of the turntable there: plug the large motor of the turntable in there"), "{m:?}");
        assert!(
            m[1].contains("a device the brick cannot identify (type 125)"),
            "{m:?}"
        );
    }

    #[test]
    fn jogs_are_judged_by_their_counts() {
        let j = |from, reached, back| Jog {
            port: OutputPort::B,
            from,
            target: from + 30,
            reached,
            back,
        };
        let level = |jog: Jog| judge_jog(Part::Turntable, &jog);
        assert_eq!(level(j(100, 131, 101)).level, Level::Ok);
        let f = level(j(100, 70, 100));
        assert!(f.message.contains("ran backwards (-30°)"), "{}", f.message);
        let f = level(j(100, 101, 100));
        assert!(f.message.contains("did not move"), "{}", f.message);
        let f = level(j(100, 112, 100));
        assert!(f.message.contains("stopped at +12°"), "{}", f.message);
        let f = level(j(100, 130, 115));
        assert!(
            f.message.contains("came back only to +15°"),
            "{}",
            f.message
        );
        let f = level(j(100, 130, 90));
        assert!(
            f.message.contains("went past its start, to -10°"),
            "{}",
            f.message
        );
        let f = level(j(100, 140, 100));
        assert!(f.message.contains("ran on to +40°"), "{}", f.message);
    }

    #[test]
    fn readings_and_batteries() {
        assert_eq!(judge_reading([0.0, 0.0, 0.0]).level, Level::Fail);
        assert_eq!(judge_reading([14.0, 18.0, 9.0]).level, Level::Ok);
        assert_eq!(judge_reading([250.0, 290.0, 180.0]).level, Level::Warn);
        let b = |v: f64| BrickInfo {
            name: "EV3".into(),
            firmware: "V1.09H".into(),
            hardware: "V0.60".into(),
            battery_volts: v,
            battery_level: 50,
        };
        let mut stock = b(8.0);
        stock.firmware = "ev3dev".into();
        assert_eq!(judge_brick(&stock)[1].level, Level::Warn);
        let level = |v| judge_brick(&b(v))[1].level;
        assert_eq!(level(8.0), Level::Ok);
        assert_eq!(level(6.4), Level::Warn);
        assert_eq!(level(6.0), Level::Fail);
    }
}
