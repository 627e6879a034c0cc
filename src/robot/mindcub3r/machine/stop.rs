//! The end of a job and manual moves: the motors stopped and the sensor arm parked, a
//! stop asked for from outside, and a jog of one motor and back (the calibration check).
//!
//! Level: robot (part of the machine). No printing.

use super::*;

impl MindCub3r {
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
            // Each count is read at rest: a step job ends at its count while the motor
            // still runs on and its brake pulls the overshoot back (LEGO's motor driver).
            r.ev3.move_to(&what, &mut m, from + degrees, 20, (5, 5))?;
            let reached = r.settled_count(port)?;
            r.ev3.move_to(&what, &mut m, from, 20, (5, 5))?;
            let back = r.settled_count(port)?;
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
