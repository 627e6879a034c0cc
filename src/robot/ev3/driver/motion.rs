//! Motion on the host's side: absolute moves, waiting for them with stall detection, and
//! homing against an end stop, all polled over the link.
//!
//! Level: robot (part of the driver). No printing.
//!
//! ## Absolute targets
//!
//! OUTPUT_STEP_SPEED moves *relative* to where the motor is and overshoots a little, so
//! relative moves alone drift. Following `ev3_dc`, each motor keeps a software target in
//! absolute sensor-count degrees, and a move to `T`:
//!
//! 1. reads the present sensor count `P` (OUTPUT_GET_COUNT, or the count the last status
//!    poll saw while the motor was idle, which saves a round trip);
//! 2. does nothing if `|T − P| ≤ 2` (a deadband, so a motor resting on its end stop is not
//!    pushed into it over a rounding degree);
//! 3. sends one command: OUTPUT_RESET, OUTPUT_STEP_SPEED with speed `±|speed|` (sign of
//!    `T − P`) and profile `r1, |T − P| − r1 − r3, r3`; the ramps shrink in proportion
//!    when they are longer than the distance. No OUTPUT_START: a step job starts itself,
//!    and on LEGO's firmware a START that reaches a motor whose job has already ended (a
//!    short move, the brick's VM descheduled between the two) runs it on unregulated with
//!    its busy flag clear (`d_pwm.c`; shown on the firmware brick, `ev3-firmware-audit.md`
//!    B2);
//! 4. records `T` (not the measured end) as the motor's target, so rounding errors never
//!    pile up; the next move reads the count again.
//!
//!
//! ## Time budgets
//!
//! The nominal time of a move is `(d + min(r1 + r3, d)) / v` with `v` = speed percent of
//! the motor's full speed (ramps count at about half speed). A move fails with
//! `MoveTimeout` when still busy after twice that plus `move_extra_ms` of the brick's time
//! (see [Whose clock](#whose-clock)). Full speeds, used
//! only for these budgets, are 1050 °/s for the large motor and 1560 °/s for the medium one
//! (the ev3dev kernel driver's motor table; LEGO's `d_pwm.c` gives about 2 ms and 1.25 ms
//! per tacho pulse at full speed). The real scale is not known exactly and motors are
//! slower under load or on a weak battery, hence the factor two; both speeds are
//! calibration values.
//!
//!
//! ## Stall detection
//!
//! A step job ends only when its count is reached (`d_pwm.c`): a motor held short of its
//! target by an obstacle stays busy for ever, and a position tolerance would never notice.
//! So while waiting, every poll reads in one round trip the sensor count and speed of each
//! motor, the busy flag of all of them and the brick's clock; a motor whose count has not
//! changed by 2° ([`STILL_DEG`]) for `stall_ms` of the brick's time while it is more than 3° ([`HELD_SHORT_DEG`]) from its
//! target, and that the brick reads as standing still (speed under [`TURNING_PCT`]), has
//! stalled (`Stalled`, with the position and the target).
//!
//! ### Whose clock
//!
//! Every window here (the stall time, a move's budget, homing's stall time, settling) is
//! measured on the brick's own clock (TIMER_READ_US, read with the counts), not the
//! host's. The two differ when a link holds replies back, and a simulated brick (LEGO's
//! firmware in virtual time on a loaded machine) can lag far behind its nominal speed:
//! on the firmware brick a motor starting from rest stands still for 150-300 ms of the
//! brick's time while LEGO's speed regulation builds up power (an arm leaving hold, a
//! turntable restarting after a ramp-down that undershot), and a stop campaign with two
//! firmware bricks on two cores flagged such starts as stalls after 400 ms of the host's
//! time ("turntable to a sticker: motor B stalled ... blocked for 538 ms"). A brick whose
//! clock stands still ends a wait after five times its window of the host's time. A start
//! from rest is given three stall times: the 150-300 ms a start stands still on the
//! firmware brick (the regulation adds power by a few units a tick from nothing) lie too
//! close to the 400 ms of one, while a motor held by a real obstacle is still found
//! within about a second and a quarter.
//!
//! A motor that stops moving within 3° of its target but stays busy (held a degree or two
//! short by friction or a stop: the step job never ends) is not a stall: after `stall_ms`
//! it is stopped with the brake and the move counts as done, instead of failing only when
//! the whole move budget has gone. The programs on the brick wait the same way
//! (`machine/onbrick.rs`, the wait routine), with the same constants and `stall_ms`.
//!
//!
//! ## Settling
//!
//! LEGO's driver ends a step job when its count is reached, not when the motor stops: a
//! move reaches its count still turning (the arm leaving hold at about 30 % of full speed),
//! runs on 15-25° and is braked back to where the job ended. A count read then is not where
//! the motor will rest, and a move started from it (it is relative) ends off its target by
//! whatever the motor still had to go. [`Ev3::settle`] waits until a motor's count has not
//! changed over a window of the brick's time (the rule the programs on the brick follow,
//! `machine::onbrick`'s `settle`) and gives the count it rests at; the MindCub3r settles
//! its tilt arm and turntable after every move from the host. Only a settled count is
//! kept for the next move; any other move reads its count first. A motor reported idle
//! (busy flag clear) is only known to lie between that count and its target: on LEGO's
//! firmware the sensor arm was read 50-60° past an edge position it was still being
//! pulled back to, and a move to `clear` started from that count ended as far past
//! `clear`.
//!
//!
//! ## Homing
//!
//! The tilt arm and the sensor arm have no absolute encoder, so each is driven slowly
//! against its end stop, as every open MindCub3r port does: OUTPUT_RESET, then
//! OUTPUT_TIME_SPEED at the homing speed (its sign points at the stop) for at most `home_ms`
//! — a job the brick ends by itself, so a host that dies during homing leaves the motor
//! stopped; then the sensor count and the busy flag are polled. The stop is found when the
//! count has not changed by 2° for `stall_ms` while the job still drives, or when a whole
//! job ended without moving the motor (a fast simulator or a slow link can let the brick's
//! clock run out before the host's stall time; a job that ended while the motor still moved
//! is simply sent again). Then the motor is stopped with the brake, and OUTPUT_RESET +
//! OUTPUT_CLR_COUNT make that spot zero. No stop within `home_ms` (host time) stops the
//! motor and fails with `NoEndStop`: a motor that turns freely keeps moving job after job.
//! The sensor count is zeroed nowhere else.
//!
//!
//! ## Safe without the host
//!
//! Every motion the driver starts is a step job (a move) or a time job (homing): the brick
//! ends it by itself. Nothing runs open-ended, so a dead link or a killed host leaves the
//! motors stopped within one motion.

use std::time::{Duration, Instant};

use super::{Ev3, Ev3Error, Motor, MotorStatus, HELD_SHORT_DEG, MAX_MOVE, STILL_DEG, TURNING_PCT};
use crate::robot::ev3::protocol::{DirectCommand, OutputPort};

impl Ev3 {
    /// Sensor tacho count (absolute position) of a motor, checked against where its motion
    /// can take it.
    pub fn count(&mut self, port: OutputPort) -> Result<i32, Ev3Error> {
        let (name, count) = self.raw_count(port)?;
        self.check_count(&name, port, count)
    }

    /// The count as read, unchecked (homing, towards an unknown end stop).
    fn raw_count(&mut self, port: OutputPort) -> Result<(String, i32), Ev3Error> {
        let mut c = DirectCommand::new();
        let s = c.output_get_count(port);
        let name = format!("reading motor {port}'s position");
        let r = self.query(&name, &c)?;
        let count = r.i32(s).map_err(|e| Self::malformed(&name, e))?;
        Ok((name, count))
    }

    /// The sensor count of one motor, whether it is busy and the brick's clock, in one
    /// round trip, without the plausibility check (for homing, where nobody knows where
    /// the motor is).
    fn count_and_busy(&mut self, port: OutputPort) -> Result<(i32, bool, u32), Ev3Error> {
        let mut c = DirectCommand::new();
        let s = c.output_get_count(port);
        let b = c.output_test(port.bit());
        let t = c.timer_read_us();
        let name = format!("reading motor {port}'s position");
        let r = self.query(&name, &c)?;
        let count = r.i32(s).map_err(|e| Self::malformed(&name, e))?;
        let busy = r.i8(b).map_err(|e| Self::malformed(&name, e))? != 0;
        let clock = r.i32(t).map_err(|e| Self::malformed(&name, e))? as u32;
        Ok((count, busy, clock))
    }

    /// Waits until `port`'s motor has come to rest: its count unchanged over `window` of
    /// the brick's time (see [Settling](crate::robot::ev3::driver::motion#settling)).
    /// Returns the count it rests at. A motor that never stands still for `limit` of the
    /// brick's time ends the wait all the same (the next move's own checks catch a
    /// problem).
    pub fn settle(
        &mut self,
        port: OutputPort,
        window: Duration,
        limit: Duration,
    ) -> Result<i32, Ev3Error> {
        let wall = Instant::now();
        let (first, _, t0) = self.count_and_busy(port)?;
        let (mut last, mut since) = (first, t0);
        loop {
            std::thread::sleep(self.timeouts.poll);
            let (count, busy, t) = self.count_and_busy(port)?;
            let name = format!("reading motor {port}'s position");
            let count = self.check_count(&name, port, count)?;
            if count != last {
                (last, since) = (count, t);
                continue;
            }
            let still = brick_time(since, t) >= window;
            if still || brick_time(t0, t) >= limit || wall.elapsed() >= WALL_CAP * limit {
                if !busy {
                    self.idle_count[port.no() as usize] = Some(count);
                    self.rests_at(port, count);
                }
                return Ok(count);
            }
        }
    }

    /// Busy flag, positions and speeds of some motors in one round trip.
    pub fn status(&mut self, ports: &[OutputPort]) -> Result<MotorStatus, Ev3Error> {
        let mut c = DirectCommand::new();
        let mut slots = Vec::new();
        for &p in ports {
            let count = c.output_get_count(p);
            slots.push((p, count));
        }
        let mut speeds = Vec::new();
        for &p in ports {
            let (speed, _) = c.output_read(p);
            speeds.push(speed);
        }
        let busy = c.output_test(OutputPort::nos(ports));
        let clock = c.timer_read_us();
        let name = format!(
            "reading the positions of motors {}",
            ports.iter().map(|p| p.letter()).collect::<String>()
        );
        let r = self.query(&name, &c)?;
        let mut counts = Vec::new();
        for ((p, s), sp) in slots.into_iter().zip(speeds) {
            let count = r.i32(s).map_err(|e| Self::malformed(&name, e))?;
            counts.push((
                p,
                self.check_count(&name, p, count)?,
                r.i8(sp).map_err(|e| Self::malformed(&name, e))?,
            ));
        }
        let busy = r.i8(busy).map_err(|e| Self::malformed(&name, e))? != 0;
        let clock_us = r.i32(clock).map_err(|e| Self::malformed(&name, e))? as u32;
        // Idle is not at rest: a count read here may still move (see Settling), so it
        // narrows where the motor can be but never starts the next move.
        for &(p, c, _) in &counts {
            self.idle_count[p.no() as usize] = None;
            if !busy {
                self.idle_at(p, c);
            }
        }
        Ok(MotorStatus {
            busy,
            counts,
            clock_us,
        })
    }

    /// Starts moving `motor` to the absolute `target` (see [Absolute targets](crate::robot::ev3::driver::motion#absolute-targets)): reads the present sensor
    /// count, then RESET + STEP_SPEED(relative). Keeps `target` as the motor's
    /// software position. Returns the signed distance started.
    pub fn start_move_to(
        &mut self,
        motor: &mut Motor,
        target: i32,
        speed: i8,
        ramps: (u32, u32),
        brake: bool,
    ) -> Result<i32, Ev3Error> {
        let now = match self.idle_count[motor.port.no() as usize].take() {
            Some(c) => c,
            None => self.count(motor.port)?,
        };
        motor.target = target;
        let d = target - now;
        // Within the deadband: already there (and never push a motor into its end stop
        // over a rounding degree).
        if d.abs() <= 2 {
            return Ok(0);
        }
        let dist = d.unsigned_abs();
        let (mut r1, mut r3) = ramps;
        if r1 + r3 > dist {
            // Shrink the ramps proportionally (as ev3_dc does).
            let total = (r1 + r3).max(1);
            r1 = dist * r1 / total;
            r3 = dist * r3 / total;
        }
        let r2 = dist - r1 - r3;
        let v = speed.unsigned_abs().clamp(1, 100) as i8 * d.signum() as i8;
        let nos = motor.port.bit();
        let name = format!("moving motor {} to {target}° (by {d}°)", motor.port);
        if d.abs() > MAX_MOVE {
            return Err(Ev3Error::MoveTooLong {
                command: name,
                degrees: d,
            });
        }
        let mut c = DirectCommand::new();
        c.output_reset(nos).step_speed(nos, v, [r1, r2, r3], brake);
        self.may_reach(motor.port, now, target);
        match self.call(&name, &c) {
            Ok(_) => Ok(d),
            Err(e) if Self::retryable(&e) => {
                // The reply is lost: did the move start? Busy, or already moved, means yes.
                self.recoveries += 1;
                if let Ev3Error::Link { .. } = e {
                    self.reopen_bounded(&name, e)?;
                }
                let st = self.status(&[motor.port])?;
                let moved = st
                    .counts
                    .first()
                    .is_some_and(|&(_, c, _)| (c - now).abs() > 2);
                if !(st.busy || moved) {
                    self.call(&name, &c)?;
                }
                Ok(d)
            }
            Err(e) => Err(e),
        }
    }

    /// Polls until every motor in `motors` is idle. Errors: a motor that is busy without
    /// moving for `timeouts.stall` (stall), or still busy after `budget`.
    pub fn wait(&mut self, what: &str, motors: &[Motor], budget: Duration) -> Result<(), Ev3Error> {
        let ports: Vec<OutputPort> = motors.iter().map(|m| m.port).collect();
        let start = Instant::now();
        // The brick's clock at the first poll: the budget and the stall windows count in
        // the brick's time; the host's only bounds a brick whose clock stands still.
        let mut t0: Option<u32> = None;
        let mut last: Vec<(i32, Duration)> = Vec::new();
        // Whether each motor has moved since the first poll: a start from rest gets longer.
        let mut started: Vec<bool> = Vec::new();
        let mut interrupted_at: Option<Instant> = None;
        let mut idle_off_target = false;
        loop {
            let st = self.status(&ports)?;
            let now = Instant::now();
            let bt = brick_time(*t0.get_or_insert(st.clock_us), st.clock_us);
            if !st.busy {
                // An idle flag with a motor far from its target is read twice (one garbled
                // byte must not end a wait while the motor still runs).
                let off = st
                    .counts
                    .iter()
                    .zip(motors)
                    .any(|(&(_, c, _), m)| (c - m.target).abs() > 6);
                if !off || idle_off_target {
                    return Ok(());
                }
                idle_off_target = true;
                std::thread::sleep(self.timeouts.poll);
                continue;
            }
            idle_off_target = false;
            if self.interrupted() {
                let since = *interrupted_at.get_or_insert(now);
                // The move under way is bounded on the brick: let it end, a second at most.
                if now - since >= Duration::from_secs(1) {
                    let stopped = self.stop_all().is_ok();
                    return Err(Ev3Error::Interrupted {
                        command: what.to_string(),
                        stopped,
                    });
                }
            }
            if last.is_empty() {
                last = st.counts.iter().map(|&(_, c, _)| (c, bt)).collect();
                started = vec![false; last.len()];
            }
            for (i, &(port, count, speed)) in st.counts.iter().enumerate() {
                let target = motors[i].target;
                // The brick's own speed reading, taken with the count: a motor it reads
                // turning is not stalled, however long the host waited between two counts
                // (the host's clock is not the brick's when a link holds replies back or a
                // simulated brick lags behind its clock).
                // A motor starting from rest gets three stall times to get going.
                let window = self.timeouts.stall * if started[i] { 1 } else { START_WINDOWS };
                if (count - last[i].0).abs() >= STILL_DEG || speed.unsigned_abs() >= TURNING_PCT {
                    started[i] |= (count - last[i].0).abs() >= STILL_DEG;
                    last[i] = (count, bt);
                } else if bt - last[i].1 >= window {
                    if (count - target).abs() > HELD_SHORT_DEG {
                        return Err(Ev3Error::Stalled {
                            command: what.to_string(),
                            port,
                            position: count,
                            target,
                            ms: (bt - last[i].1).as_millis() as u64,
                        });
                    }
                    // Held a degree or two short: the step job would never end. Close
                    // enough; stop it with the brake.
                    let mut c = DirectCommand::new();
                    c.output_stop(port.bit(), true);
                    self.call(
                        &format!(
                            "{what}: stopping motor {port} (held {}° short)",
                            (target - count).abs()
                        ),
                        &c,
                    )?;
                    self.held_short(what, Some((port, (target - count).abs())));
                    last[i] = (count, bt);
                }
            }
            if bt >= budget || now - start >= WALL_CAP * budget {
                let (port, position, _) = st.counts[0];
                return Err(Ev3Error::MoveTimeout {
                    command: what.to_string(),
                    port,
                    position,
                    target: motors[0].target,
                    ms: budget.as_millis() as u64,
                });
            }
            std::thread::sleep(self.timeouts.poll);
        }
    }

    /// Moves to an absolute target and waits, with a budget of twice the nominal time.
    pub fn move_to(
        &mut self,
        what: &str,
        motor: &mut Motor,
        target: i32,
        speed: i8,
        ramps: (u32, u32),
    ) -> Result<(), Ev3Error> {
        let d = self.start_move_to(motor, target, speed, ramps, true)?;
        if d == 0 {
            return Ok(());
        }
        let budget = Duration::from_secs_f64(2.0 * motor.nominal_secs(d as f64, speed, ramps))
            + self.timeouts.move_extra;
        self.wait(what, &[*motor], budget)
    }

    /// Homing by stalling (see [Homing](crate::robot::ev3::driver::motion#homing)): run at `speed` percent (sign = towards the stop)
    /// until the count stops changing, stop with brake, clear the sensor count.
    pub fn home(&mut self, what: &str, motor: &mut Motor, speed: i8) -> Result<(), Ev3Error> {
        self.idle_count = [None; 4];
        let nos = motor.port.bit();
        // A time job: the brick ends it after `home` even if nothing else ever arrives.
        let ms = self.timeouts.home.as_millis().min(u32::MAX as u128) as u32;
        // Towards an end stop nobody knows the position of: no check until it is found.
        self.reach[motor.port.no() as usize] = None;
        let start = Instant::now();
        let settled = 'search: loop {
            let mut c = DirectCommand::new();
            c.output_reset(nos).time_speed(nos, speed, [0, ms, 0], true);
            self.call(
                &format!(
                    "{what}: pushing motor {} at {speed}% for {ms} ms",
                    motor.port
                ),
                &c,
            )?;
            let (first, _, t0) = self.count_and_busy(motor.port)?;
            let mut last = (first, t0);
            loop {
                std::thread::sleep(self.timeouts.poll);
                if self.interrupted() {
                    let stopped = self.stop_all().is_ok();
                    return Err(Ev3Error::Interrupted {
                        command: what.to_string(),
                        stopped,
                    });
                }
                let (now_count, busy, t) = self.count_and_busy(motor.port)?;
                if start.elapsed() >= self.timeouts.home {
                    break 'search false;
                }
                if !busy {
                    // The brick ended the job by its time limit. Pushed against the stop the
                    // whole job, the motor did not move: found. Moved: not there yet (the
                    // host may be slower than the brick's clock), so push again.
                    if (now_count - first).abs() < 2 {
                        break 'search true;
                    }
                    continue 'search;
                }
                if (now_count - last.0).abs() >= 2 {
                    last = (now_count, t);
                } else if brick_time(last.1, t) >= self.timeouts.stall {
                    break 'search true;
                }
            }
        };
        let mut c = DirectCommand::new();
        c.output_stop(nos, true);
        self.call(&format!("{what}: stopping motor {}", motor.port), &c)?;
        if !settled {
            return Err(Ev3Error::NoEndStop {
                command: what.to_string(),
                port: motor.port,
                ms: self.timeouts.home.as_millis() as u64,
            });
        }
        let mut c = DirectCommand::new();
        c.output_reset(nos).output_clr_count(nos);
        self.call(&format!("{what}: zeroing motor {}'s count", motor.port), &c)?;
        // The count starts again from zero here.
        self.rests_at(motor.port, 0);
        motor.target = 0;
        Ok(())
    }
}

/// How many stall times a motor that has not moved yet since its move began gets before it
/// counts as stalled (see [Whose clock](self#whose-clock)).
const START_WINDOWS: u32 = 3;

/// How many times a window of the brick's time the host waits at most for it to pass: a
/// brick whose clock stands still (a dead link is caught by the reply time-out) still ends
/// every wait.
const WALL_CAP: u32 = 5;

/// The brick's time from clock reading `from` to `to` (the clock wraps).
fn brick_time(from: u32, to: u32) -> Duration {
    Duration::from_micros(u64::from(to.wrapping_sub(from)))
}
