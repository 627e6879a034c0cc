//! Homing as programs on the brick (with `execution.on_brick`): each arm is driven against
//! its end stop by a program that watches the motor's count itself, so finding the stop
//! costs no link round trips; the design is in
//! [Start-up](crate::robot::mindcub3r#start-up).
//!
//! Level: robot (part of the machine). No printing.

use std::time::Instant;

use super::builder::{reply_offset, reply_word, stage_name, Builder};
use super::*;
use crate::robot::ev3::protocol::{Cmp, Operand, Width};

/// Longest time job of one homing program (ms): a program answers nothing while it runs,
/// so a stop asked for waits at most this and the stall time (a second in all) before it
/// is heard. A motor
/// still moving when its job ends is sent another, until `timeouts.home_ms`.
const WINDOW_MS: u32 = 600;

/// Where a homing program's results are in the reply.
struct Layout {
    err: usize,
    found: usize,
    stages: Vec<String>,
    deadline_ms: i32,
}

impl MindCub3r {
    /// Homes the sensor arm, then the tilt arm while the sensor arm goes out to clear,
    /// each by programs on the brick (see the module docs).
    pub(super) fn home_on_brick(&mut self) -> Result<(), RobotError> {
        let (hs, ss) = (
            self.config.arm.home_speed,
            self.config.sensor_arm.home_speed,
        );
        let clear = self.config.sensor_arm.clear;
        let start = Instant::now();
        for (motor, speed, what, then_clear) in [
            (self.sensor, ss, "homing the colour-sensor arm", false),
            (self.arm, hs, "homing the tilt arm", true),
        ] {
            let port = motor.port;
            self.ev3.position_unknown(port);
            if then_clear {
                self.ev3.may_move(self.sensor.port, clear, 0);
            }
            let mut garbled = 0;
            loop {
                self.check_interrupt()?;
                let (cmd, layout) = self.homing_program(port, speed, then_clear)?;
                let wait = std::time::Duration::from_millis(layout.deadline_ms.max(0) as u64)
                    + self.ev3.timeouts.reply;
                let read = self.ev3.call_within(what, &cmd, wait).and_then(|reply| {
                    let word = |at: usize| reply_word(&reply, what, at);
                    let err = word(layout.err)?;
                    let stage = match err {
                        0 => None,
                        e => Some(stage_name(&layout.stages, e, what)?),
                    };
                    Ok((stage, word(layout.found)?))
                });
                let (stage, found) = match read {
                    // A garbled reply: the program ended on the brick all the same, and
                    // homing again from wherever the arm is comes to the same stop.
                    Err(Ev3Error::Malformed { .. }) if garbled < 2 => {
                        garbled += 1;
                        continue;
                    }
                    r => r?,
                };
                if let Some(stage) = stage {
                    return Err(RobotError::HomingTimeout {
                        what: what.to_string(),
                        stage,
                        ms: layout.deadline_ms.max(0) as u64,
                    });
                }
                if found != 0 {
                    self.ev3.zeroed(port);
                    break;
                }
                // The job ended with the motor still on its way: push again.
                if start.elapsed() >= self.ev3.timeouts.home {
                    let _ = self.ev3.stop_all();
                    return Err(Ev3Error::NoEndStop {
                        command: what.to_string(),
                        port,
                        ms: self.ev3.timeouts.home.as_millis() as u64,
                    }
                    .into());
                }
            }
            if port == self.arm.port {
                self.arm.target = 0;
            } else {
                self.sensor.target = 0;
            }
        }
        // The sensor arm was started out to clear while the tilt arm was homed.
        self.sensor.target = clear;
        let s = &self.config.sensor_arm;
        let secs = self
            .sensor
            .nominal_secs(clear.abs() as f64, s.speed, (s.ramp, s.ramp));
        let budget = std::time::Duration::from_secs_f64(2.0 * secs) + self.ev3.timeouts.move_extra;
        self.ev3.wait(
            "homing: the sensor arm out to clear",
            &[self.sensor],
            budget,
        )?;
        self.sensor_at = Some(clear);
        Ok(())
    }

    /// One homing program: `port` at `speed` (its sign towards the stop) for at most
    /// [`WINDOW_MS`]; found when its count has not changed by 2° for `timeouts.stall_ms`
    /// while the job drives, or when the whole job ended without moving it; then stopped
    /// with the brake and its count cleared there. With `then_clear` the sensor arm
    /// (homed before) is started out to `sensor_arm.clear` meanwhile (the host waits for
    /// it, with the driver's stall check).
    fn homing_program(
        &self,
        port: OutputPort,
        speed: i8,
        then_clear: bool,
    ) -> Result<(DirectCommand, Layout), RobotError> {
        let cfg = &self.config;
        let stall_ms = self.ev3.timeouts.stall.as_millis().min(i32::MAX as u128) as i32;
        let extra = self
            .ev3
            .timeouts
            .move_extra
            .as_millis()
            .min(i32::MAX as u128) as i32;
        let s = &cfg.sensor_arm;
        let deadline_ms = WINDOW_MS as i32 + stall_ms + extra;
        let mut b = Builder::new(cfg, deadline_ms, self.ev3.timeouts.stall);
        let w = Width::B4;
        let err = b.p.global(w);
        let found = b.p.global(w);
        b.p.mov(w, w, 0, err);
        b.p.mov(w, w, 0, found);
        // The builder's own variables, free here: the count at the start, the last count
        // that differed, and when it changed (the move routine is done with `mt`).
        let (first, last, since) = (b.scnt, b.ttgt, b.mt);
        let nos = port.bit();
        b.p.cmd()
            .output_reset(nos)
            .time_speed(nos, speed, [0, WINDOW_MS, 0], true);
        if then_clear {
            let sensor = b.sensor;
            b.call_move(sensor, Operand::Const(s.clear), s.speed, (s.ramp, s.ramp));
        }
        b.p.get_count(port, first);
        b.p.mov(w, w, first, last);
        b.p.timer_read(since);
        b.stage("the motor against its end stop");
        let (lp, still, more, hit, end) = (
            b.p.label(),
            b.p.label(),
            b.p.label(),
            b.p.label(),
            b.p.label(),
        );
        b.p.bind(lp);
        b.check_deadline();
        b.p.get_count(port, b.cnt);
        b.p.sub(w, b.cnt, last, b.d);
        b.abs_d();
        b.p.jr_if(Cmp::Lt, w, b.d, 2, still);
        b.p.mov(w, w, b.cnt, last);
        b.p.mov(w, w, b.now, since);
        b.p.jr(more);
        b.p.bind(still);
        b.p.sub(w, b.now, since, b.d);
        b.p.jr_if(Cmp::GtEq, w, b.d, stall_ms, hit);
        b.p.bind(more);
        b.p.output_test(nos, b.busy);
        b.p.jr_flag(true, b.busy, lp);
        // The job ended by its time: pushed against the stop all along, the motor did not
        // move (found); it moved: not there yet.
        b.p.sub(w, b.cnt, first, b.d);
        b.abs_d();
        b.p.jr_if(Cmp::GtEq, w, b.d, 2, end);
        b.p.bind(hit);
        b.p.cmd().output_stop(nos, true);
        b.p.cmd().output_reset(nos).output_clr_count(nos);
        b.p.mov(w, w, 1, found);
        b.p.bind(end);
        let (cmd, stages) = b.end(err);
        let cmd = cmd.map_err(|why| RobotError::HomingProgram { why })?;
        let at = reply_offset;
        Ok((
            cmd,
            Layout {
                err: at(err),
                found: at(found),
                stages,
                deadline_ms,
            },
        ))
    }
}
