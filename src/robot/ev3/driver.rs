//! The EV3 driver: direct commands over a byte link, one in flight at a time, message
//! counters checked, typed errors naming the command, device checks, motors positioned by
//! absolute targets, homing against end stops and stall detection.
//!
//! Level: robot (uses [`super::protocol`] and, through [`super::link`], the byte link of
//! [`crate::robot::link`]). Must not depend on the MindCub3r, the simulators, `job` or
//! `cli`. No printing: an optional log callback receives one line per exchange.
//!
//! The wire format (framing, parameters, opcodes, ports, the brick's execution rules) is
//! documented in [the codec](crate::robot::ev3::protocol); the sections below are what the
//! driver adds on top of it, and why.
//!
//! ## Sources
//!
//! * LEGO's LMS2012 firmware source (`c_com.c`: one command at a time; `c_bt.c`,
//!   `c_output.c`, `d_pwm.c`: what the motors do on their own) and the LEGO MINDSTORMS
//!   "EV3 Communication Developer Kit".
//! * Christoph Gaukel's `ev3_dc` (`ChristophGaukel/ev3-python3`): absolute moves built
//!   from relative steps (`Motor.start_move_to`), counter matching, round-trip times.
//! * The open MindCub3r ports that home by stalling (the ev3dev MindCub3r demo,
//!   `Steve-Zheng/mindcuber-python-ev3`).
//! * `c4ev3/ev3duder` issue #27 and `scratchfoundation/scratch-link` PR #17 (Bluetooth
//!   serial links: raw mode, split replies, pairing PIN).
//!
//! ## The byte link
//!
//! Over Bluetooth (Serial Port Profile, an `rfcomm` tty on Linux) and on the simulator's
//! pseudo-terminal a message is a plain byte stream: read the two-byte length, then exactly
//! that many bytes. One reply may arrive in several reads and several in one read; the
//! frame buffer of [`super::link::Ev3Link`] reassembles both. The tty must be fully raw (no echo, no canonical mode, no
//! CR/LF translation, no XON/XOFF, 8 bits): ordinary traffic contains bytes such as `0x03`,
//! `0x0A`, `0x11`, `0x13` and `0x7F`, and a cooked `rfcomm` tty breaks the link. An
//! `rfcomm` tty ignores its baud rate (the port is opened at 115 200 all the same). The
//! brick's default Bluetooth PIN is `1234`.
//!
//! Round trips seen with `ev3_dc`: USB about 6–13 ms, Bluetooth 12–120 ms (typically
//! 50–70 ms). Every poll below costs one round trip.
//!
//! ## One command in flight
//!
//! The brick runs one direct command per connection and silently drops a command that
//! arrives while another runs (see
//! [Execution on the brick](crate::robot::ev3::protocol#execution-on-the-brick)). So the
//! driver never pipelines: every command it sends asks for a reply, and the next command
//! is sent only after that reply (or a timeout). Motor moves are started without
//! OUTPUT_READY, so their reply comes at once and the brick stays free for the polls that
//! watch them.
//!
//! ## Counters
//!
//! Each command gets the next message counter (a `u16` that wraps). A reply with another
//! counter is a late answer to a command that already timed out: it is counted in
//! `stale_discarded` and skipped, and the wait goes on for the right one. A frame that does
//! not decode drops whatever is buffered (to find the next frame boundary again) and fails
//! the command. A reply whose global memory is not the size the command asked for fails
//! too.
//!
//! ## Timeouts
//!
//! | Setting (`[timeouts]` of the calibration) | Default | Meaning |
//! |-------------------------------------------|---------|---------|
//! | `reply_ms` | 2000 | a reply to a command that does not block |
//! | `poll_ms` | 5 | pause between polls of a running motor |
//! | `stall_ms` | 400 | a motor busy but not moving for this long has stalled |
//! | `move_extra_ms` | 1500 | allowance on top of twice a move's nominal time |
//! | `home_ms` | 6000 | longest homing run |
//!
//! A silent link is a timeout. Transport failures and timeouts count as link failures
//! (`link_failed`): there is no point sending STOP over that link.
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
//!    `T − P`) and profile `r1, |T − P| − r1 − r3, r3`, OUTPUT_START; the ramps shrink in
//!    proportion when they are longer than the distance;
//! 4. records `T` (not the measured end) as the motor's target, so rounding errors never
//!    pile up; the next move reads the count again.
//!
//! ## Time budgets
//!
//! The nominal time of a move is `(d + min(r1 + r3, d)) / v` with `v` = speed percent of
//! the motor's full speed (ramps count at about half speed). A move fails with
//! `MoveTimeout` when still busy after twice that plus `move_extra_ms`. Full speeds, used
//! only for these budgets, are 1050 °/s for the large motor and 1560 °/s for the medium one
//! (the ev3dev kernel driver's motor table; LEGO's `d_pwm.c` gives about 2 ms and 1.25 ms
//! per tacho pulse at full speed). The real scale is not known exactly and motors are
//! slower under load or on a weak battery, hence the factor two; both speeds are
//! calibration values.
//!
//! ## Stall detection
//!
//! A step job ends only when its count is reached (`d_pwm.c`): a motor held short of its
//! target by an obstacle stays busy for ever, and a position tolerance would never notice.
//! So while waiting, every poll reads in one round trip the sensor count and speed of each
//! motor and the busy flag of all of them; a motor whose count has not changed by 2° for
//! `stall_ms` while it is more than 3° from its target has stalled (`Stalled`, with the
//! position and the target).
//!
//! ## Homing
//!
//! The tilt arm and the sensor arm have no absolute encoder, so each is driven slowly
//! against its end stop, as every open MindCub3r port does: OUTPUT_RESET, OUTPUT_SPEED at
//! the homing speed (its sign points at the stop), OUTPUT_START; then the sensor count is
//! polled until it has not changed by 2° for `stall_ms`, the motor is stopped with the
//! brake, and OUTPUT_RESET + OUTPUT_CLR_COUNT make that spot zero. No stall within
//! `home_ms` stops the motor and fails with `NoEndStop`. The sensor count is zeroed nowhere
//! else.
//!
//! ## Sampling while moving
//!
//! Scanning reads the colour sensor while the turntable turns, so the turntable move is
//! started (not waited for) and each sample is one command holding OUTPUT_GET_COUNT of the
//! motors, INPUT_DEVICE READY_RAW of the colour sensor (type 29, mode 4, three values) and
//! OUTPUT_TEST: one round trip gives a reading together with where the table was.
//!
//! ## Device check
//!
//! Ports differ between builds, so at start-up INPUT_DEVICE GET_TYPEMODE is asked for every
//! expected device (motors as inputs 16..19, sensors as 0..3). On any mismatch the error
//! lists every port, what was expected and what was found.
//!
//! ## Stopping
//!
//! A lost link does not stop the motors: the Bluetooth code of the firmware never touches
//! the outputs, which are reset only when the output module opens or closes (`c_bt.c`,
//! `c_output.c`). Every error path therefore stops all motors (OUTPUT_STOP on `0x0F`,
//! coasting, with a short 500 ms reply timeout). Moves are step jobs that end on the brick
//! by themselves; the homing run is not (it runs until the driver stops it).
//!
//! Not done here: the firmware restores a motor's default direction only when a user
//! program starts, not when a host connects (`d_pwm.c`); the driver sends no
//! OUTPUT_POLARITY, and the turntable's sense is a calibration sign instead.

use std::time::{Duration, Instant};

use super::link::Ev3Link;
use super::protocol::{self, decode_reply, device, DirectCommand, OutputPort, Reply};
use crate::robot::link::{Link, LinkError};

/// Everything the driver can fail with; every variant names the command.
#[derive(Debug, thiserror::Error)]
pub enum Ev3Error {
    #[error("{command}: {source}")]
    Link { command: String, source: LinkError },
    #[error("{command}: the brick did not answer within {ms} ms (link silent or brick busy)")]
    Timeout { command: String, ms: u64 },
    #[error("{command}: the brick answered with an error reply (DIRECT_REPLY_ERROR): command not executed")]
    ErrorReply { command: String },
    #[error("{command}: malformed reply: {detail}")]
    Malformed { command: String, detail: String },
    #[error("wrong devices on the brick: {report}")]
    WrongDevice { report: String },
    #[error(
        "{command}: motor {port} stalled at {position}° (target {target}°): blocked for {ms} ms"
    )]
    Stalled {
        command: String,
        port: OutputPort,
        position: i32,
        target: i32,
        ms: u64,
    },
    #[error(
        "{command}: motor {port} did not finish within {ms} ms (at {position}°, target {target}°)"
    )]
    MoveTimeout {
        command: String,
        port: OutputPort,
        position: i32,
        target: i32,
        ms: u64,
    },
    #[error("{command}: motor {port} did not reach its end stop within {ms} ms")]
    NoEndStop {
        command: String,
        port: OutputPort,
        ms: u64,
    },
}

impl Ev3Error {
    /// Whether the link itself failed (no point sending STOP over it).
    pub fn link_failed(&self) -> bool {
        matches!(self, Ev3Error::Link { .. } | Ev3Error::Timeout { .. })
    }
}

/// Motor kinds; their nominal full speeds are in
/// [Time budgets](crate::robot::ev3::driver#time-budgets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MotorKind {
    Large,
    Medium,
}

impl MotorKind {
    pub fn device_type(self) -> i8 {
        match self {
            MotorKind::Large => device::LARGE_MOTOR,
            MotorKind::Medium => device::MEDIUM_MOTOR,
        }
    }
}

/// A motor with its software target (absolute, sensor-count degrees).
#[derive(Clone, Copy, Debug)]
pub struct Motor {
    pub port: OutputPort,
    pub kind: MotorKind,
    pub target: i32,
    /// Nominal degrees per second at 100 %.
    pub full_speed: f64,
}

impl Motor {
    pub fn new(port: OutputPort, kind: MotorKind, full_speed: f64) -> Motor {
        Motor {
            port,
            kind,
            target: 0,
            full_speed,
        }
    }

    /// Nominal seconds for a move of `degrees` at `speed` percent with ramps.
    pub fn nominal_secs(&self, degrees: f64, speed: i8, ramps: (u32, u32)) -> f64 {
        let v = (speed.unsigned_abs() as f64 / 100.0 * self.full_speed).max(1.0);
        let r = (ramps.0 + ramps.1) as f64;
        let d = degrees.abs();
        // Ramps run at about half the speed on average.
        (d + r.min(d)) / v
    }
}

/// One poll of the motors: busy flag, and per port (count, speed).
#[derive(Clone, Debug)]
pub struct MotorStatus {
    pub busy: bool,
    pub counts: Vec<(OutputPort, i32, i8)>,
}

/// What one expected device is and where.
#[derive(Clone, Debug)]
pub struct DeviceExpectation {
    /// Human name of the role ("tilt arm").
    pub role: String,
    /// Port label as the user writes it ("A", "2").
    pub port_label: String,
    /// The input number GET_TYPEMODE takes.
    pub input: u8,
    pub expected: i8,
}

/// How long to wait for things.
#[derive(Clone, Debug)]
pub struct DriverTimeouts {
    /// A reply to a command that does not block.
    pub reply: Duration,
    /// Pause between polls of a running motor.
    pub poll: Duration,
    /// A motor busy but not moving for this long is stalled.
    pub stall: Duration,
    /// Allowance on top of twice a move's nominal time.
    pub move_extra: Duration,
    /// Longest homing run.
    pub home: Duration,
}

impl Default for DriverTimeouts {
    fn default() -> Self {
        DriverTimeouts {
            reply: Duration::from_millis(2000),
            poll: Duration::from_millis(5),
            stall: Duration::from_millis(400),
            move_extra: Duration::from_millis(1500),
            home: Duration::from_millis(6000),
        }
    }
}

type Log = Box<dyn FnMut(&str) + Send>;

/// The driver.
pub struct Ev3 {
    link: Ev3Link,
    counter: u16,
    pub timeouts: DriverTimeouts,
    /// Replies discarded because their counter did not match.
    pub stale_discarded: u64,
    /// Commands sent.
    pub commands_sent: u64,
    log: Option<Log>,
    /// Sensor counts of motors seen idle by the last status poll (saves a round trip
    /// before the next move; consumed by that move).
    idle_count: [Option<i32>; 4],
}

impl Ev3 {
    pub fn new(link: Box<dyn Link>) -> Ev3 {
        Ev3 {
            link: Ev3Link::new(link),
            counter: 0,
            timeouts: DriverTimeouts::default(),
            stale_discarded: 0,
            commands_sent: 0,
            log: None,
            idle_count: [None; 4],
        }
    }

    /// One line per exchange (hex dumps), for `-vv`.
    pub fn set_log(&mut self, log: impl FnMut(&str) + Send + 'static) {
        self.log = Some(Box::new(log));
    }

    pub fn port_name(&self) -> String {
        self.link.name()
    }

    fn log(&mut self, line: impl FnOnce() -> String) {
        if let Some(l) = self.log.as_mut() {
            l(&line());
        }
    }

    fn next_counter(&mut self) -> u16 {
        self.counter = self.counter.wrapping_add(1);
        self.counter
    }

    /// Sends a command that wants a reply and waits for the reply with its counter;
    /// replies with another counter (late answers to timed-out commands) are discarded.
    pub fn call(&mut self, command: &str, cmd: &DirectCommand) -> Result<Reply, Ev3Error> {
        self.call_within(command, cmd, self.timeouts.reply)
    }

    pub fn call_within(
        &mut self,
        command: &str,
        cmd: &DirectCommand,
        timeout: Duration,
    ) -> Result<Reply, Ev3Error> {
        debug_assert!(cmd.reply);
        let counter = self.transmit(command, cmd, "")?;
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Ev3Error::Timeout {
                    command: command.to_string(),
                    ms: timeout.as_millis() as u64,
                });
            }
            let frame = match self.link.recv_message(left) {
                Ok(Some(f)) => f,
                Ok(None) => {
                    return Err(Ev3Error::Timeout {
                        command: command.to_string(),
                        ms: timeout.as_millis() as u64,
                    })
                }
                Err(source) => {
                    return Err(Ev3Error::Link {
                        command: command.to_string(),
                        source,
                    })
                }
            };
            self.log(|| format!("<- {command}: {}", protocol::hex(&frame)));
            let reply = match decode_reply(&frame) {
                Ok(r) => r,
                Err(e) => {
                    // A garbled frame: resynchronise by dropping what is buffered.
                    self.link.discard_input();
                    return Err(Ev3Error::Malformed {
                        command: command.to_string(),
                        detail: format!("{e} ({})", protocol::hex(&frame)),
                    });
                }
            };
            if reply.counter != counter {
                self.stale_discarded += 1;
                continue;
            }
            if !reply.ok {
                return Err(Ev3Error::ErrorReply {
                    command: command.to_string(),
                });
            }
            if reply.globals.len() != cmd.global {
                return Err(Ev3Error::Malformed {
                    command: command.to_string(),
                    detail: format!(
                        "{} bytes of global memory, expected {}",
                        reply.globals.len(),
                        cmd.global
                    ),
                });
            }
            return Ok(reply);
        }
    }

    /// Sends a command without waiting for anything.
    pub fn send_no_reply(&mut self, command: &str, cmd: &DirectCommand) -> Result<(), Ev3Error> {
        self.idle_count = [None; 4];
        self.transmit(command, cmd, " (no reply)").map(|_| ())
    }

    /// Encodes `cmd` with the next message counter, logs and sends it; returns the counter.
    fn transmit(
        &mut self,
        command: &str,
        cmd: &DirectCommand,
        note: &str,
    ) -> Result<u16, Ev3Error> {
        let counter = self.next_counter();
        let bytes = cmd.encode(counter);
        self.log(|| format!("-> {command}{note}: {}", protocol::hex(&bytes)));
        self.commands_sent += 1;
        self.link.send(&bytes).map_err(|source| Ev3Error::Link {
            command: command.to_string(),
            source,
        })?;
        Ok(counter)
    }

    fn malformed(command: &str, e: protocol::ProtocolError) -> Ev3Error {
        Ev3Error::Malformed {
            command: command.to_string(),
            detail: e.to_string(),
        }
    }

    /// Ping.
    pub fn nop(&mut self) -> Result<(), Ev3Error> {
        let mut c = DirectCommand::new();
        c.nop();
        self.call("NOP (ping)", &c).map(|_| ())
    }

    /// Reopens the link after a link failure.
    pub fn reconnect(&mut self) -> Result<(), Ev3Error> {
        self.link.reopen().map_err(|source| Ev3Error::Link {
            command: "reconnect".into(),
            source,
        })
    }

    /// Type and mode of the device on an input (sensor port 0..3 or motor 16..19).
    pub fn typemode(&mut self, input: u8) -> Result<(i8, i8), Ev3Error> {
        let mut c = DirectCommand::new();
        let (t, m) = c.get_typemode(input);
        let name = format!("INPUT_DEVICE GET_TYPEMODE input {input}");
        let r = self.call(&name, &c)?;
        Ok((
            r.i8(t).map_err(|e| Self::malformed(&name, e))?,
            r.i8(m).map_err(|e| Self::malformed(&name, e))?,
        ))
    }

    /// Checks every expected device; the error lists what was found on every port.
    pub fn check_devices(&mut self, expect: &[DeviceExpectation]) -> Result<(), Ev3Error> {
        let mut report = Vec::new();
        let mut bad = false;
        for e in expect {
            let (t, _) = self.typemode(e.input)?;
            let ok = t == e.expected;
            bad |= !ok;
            report.push(format!(
                "port {} ({}): expected {}, found {}{}",
                e.port_label,
                e.role,
                device::name(e.expected),
                device::name(t),
                if ok { "" } else { "  <-- wrong" }
            ));
        }
        if bad {
            return Err(Ev3Error::WrongDevice {
                report: report.join("; "),
            });
        }
        Ok(())
    }

    /// Sensor tacho count (absolute position) of a motor.
    pub fn count(&mut self, port: OutputPort) -> Result<i32, Ev3Error> {
        let mut c = DirectCommand::new();
        let s = c.output_get_count(port);
        let name = format!("OUTPUT_GET_COUNT motor {port}");
        let r = self.call(&name, &c)?;
        r.i32(s).map_err(|e| Self::malformed(&name, e))
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
        let name = format!(
            "OUTPUT_TEST/GET_COUNT motors {}",
            ports.iter().map(|p| p.letter()).collect::<String>()
        );
        let r = self.call(&name, &c)?;
        let mut counts = Vec::new();
        for ((p, s), sp) in slots.into_iter().zip(speeds) {
            counts.push((
                p,
                r.i32(s).map_err(|e| Self::malformed(&name, e))?,
                r.i8(sp).map_err(|e| Self::malformed(&name, e))?,
            ));
        }
        let busy = r.i8(busy).map_err(|e| Self::malformed(&name, e))? != 0;
        for &(p, c, _) in &counts {
            self.idle_count[p.no() as usize] = (!busy).then_some(c);
        }
        Ok(MotorStatus { busy, counts })
    }

    /// Starts moving `motor` to the absolute `target` (see [Absolute targets](crate::robot::ev3::driver#absolute-targets)): reads the present sensor
    /// count, then RESET + STEP_SPEED(relative) + START. Keeps `target` as the motor's
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
        let mut c = DirectCommand::new();
        c.output_reset(nos)
            .step_speed(nos, v, [r1, r2, r3], brake)
            .output_start(nos);
        self.call(
            &format!(
                "OUTPUT_STEP_SPEED motor {} to {target}° (by {d}°)",
                motor.port
            ),
            &c,
        )?;
        Ok(d)
    }

    /// Polls until every motor in `motors` is idle. Errors: a motor that is busy without
    /// moving for `timeouts.stall` (stall), or still busy after `budget`.
    pub fn wait(&mut self, what: &str, motors: &[Motor], budget: Duration) -> Result<(), Ev3Error> {
        let ports: Vec<OutputPort> = motors.iter().map(|m| m.port).collect();
        let start = Instant::now();
        let deadline = start + budget;
        let mut last: Vec<(i32, Instant)> = Vec::new();
        loop {
            let st = self.status(&ports)?;
            if !st.busy {
                return Ok(());
            }
            let now = Instant::now();
            if last.is_empty() {
                last = st.counts.iter().map(|&(_, c, _)| (c, now)).collect();
            }
            for (i, &(port, count, _)) in st.counts.iter().enumerate() {
                let target = motors[i].target;
                if (count - last[i].0).abs() >= 2 {
                    last[i] = (count, now);
                } else if (count - target).abs() > 3 && now - last[i].1 >= self.timeouts.stall {
                    return Err(Ev3Error::Stalled {
                        command: what.to_string(),
                        port,
                        position: count,
                        target,
                        ms: (now - last[i].1).as_millis() as u64,
                    });
                }
            }
            if now >= deadline {
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

    /// Homing by stalling (see [Homing](crate::robot::ev3::driver#homing)): run at `speed` percent (sign = towards the stop)
    /// until the count stops changing, stop with brake, clear the sensor count.
    pub fn home(&mut self, what: &str, motor: &mut Motor, speed: i8) -> Result<(), Ev3Error> {
        self.idle_count = [None; 4];
        let nos = motor.port.bit();
        let mut c = DirectCommand::new();
        c.output_reset(nos)
            .output_speed(nos, speed)
            .output_start(nos);
        self.call(
            &format!("{what}: OUTPUT_SPEED {speed}% + START motor {}", motor.port),
            &c,
        )?;
        let start = Instant::now();
        let mut last = (self.count(motor.port)?, Instant::now());
        let settled = loop {
            std::thread::sleep(self.timeouts.poll);
            let now_count = self.count(motor.port)?;
            let now = Instant::now();
            if (now_count - last.0).abs() >= 2 {
                last = (now_count, now);
            } else if now - last.1 >= self.timeouts.stall {
                break true;
            }
            if now - start >= self.timeouts.home {
                break false;
            }
        };
        let mut c = DirectCommand::new();
        c.output_stop(nos, true);
        self.call(&format!("{what}: OUTPUT_STOP motor {}", motor.port), &c)?;
        if !settled {
            return Err(Ev3Error::NoEndStop {
                command: what.to_string(),
                port: motor.port,
                ms: self.timeouts.home.as_millis() as u64,
            });
        }
        let mut c = DirectCommand::new();
        c.output_reset(nos).output_clr_count(nos);
        self.call(
            &format!("{what}: OUTPUT_RESET + CLR_COUNT motor {}", motor.port),
            &c,
        )?;
        motor.target = 0;
        Ok(())
    }

    /// RGB-RAW of the colour sensor on `input` (0..3).
    pub fn read_rgb(&mut self, input: u8) -> Result<[f64; 3], Ev3Error> {
        let mut c = DirectCommand::new();
        let s = c.ready_raw(input, device::COLOR, device::COLOR_RGB_RAW, 3);
        let name = format!("INPUT_DEVICE READY_RAW colour sensor port {}", input + 1);
        let r = self.call(&name, &c)?;
        let mut out = [0.0; 3];
        for (o, slot) in out.iter_mut().zip(s) {
            *o = r.i32(slot).map_err(|e| Self::malformed(&name, e))? as f64;
        }
        Ok(out)
    }

    /// Colour reading and one motor's count in one round trip (sampling on the fly).
    pub fn read_rgb_at(
        &mut self,
        input: u8,
        port: OutputPort,
    ) -> Result<([f64; 3], i32), Ev3Error> {
        let mut c = DirectCommand::new();
        let count = c.output_get_count(port);
        let s = c.ready_raw(input, device::COLOR, device::COLOR_RGB_RAW, 3);
        let name = format!(
            "READY_RAW colour sensor port {} + GET_COUNT motor {port}",
            input + 1
        );
        let r = self.call(&name, &c)?;
        let mut out = [0.0; 3];
        for (o, slot) in out.iter_mut().zip(s) {
            *o = r.i32(slot).map_err(|e| Self::malformed(&name, e))? as f64;
        }
        Ok((out, r.i32(count).map_err(|e| Self::malformed(&name, e))?))
    }

    /// Forgets the motor counts the last status poll saw: a program that ran on the brick
    /// may have moved the motors since, so the next move reads its count afresh.
    pub fn forget_counts(&mut self) {
        self.idle_count = [None; 4];
    }

    /// Stops all motors (float). Best effort: used on every error path.
    pub fn stop_all(&mut self) -> Result<(), Ev3Error> {
        self.idle_count = [None; 4];
        let mut c = DirectCommand::new();
        c.output_stop(0x0F, false);
        self.call_within("OUTPUT_STOP all motors", &c, Duration::from_millis(500))
            .map(|_| ())
    }

    /// A short beep (end of a job).
    pub fn beep(&mut self) -> Result<(), Ev3Error> {
        let mut c = DirectCommand::new();
        c.tone(20, 880, 150);
        self.call("SOUND TONE", &c).map(|_| ())
    }

    pub fn led(&mut self, pattern: u8) -> Result<(), Ev3Error> {
        let mut c = DirectCommand::new();
        c.led(pattern);
        self.call("UI_WRITE LED", &c).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::robot::ev3::protocol::encode_reply;
    use crate::robot::link::MemoryLink;

    #[test]
    fn stale_replies_are_discarded_and_counters_match() {
        // Answer each command twice: once with a stale counter, then with the right one.
        let t = MemoryLink::with_responder(|m| {
            let c = u16::from_le_bytes([m[2], m[3]]);
            vec![
                encode_reply(c.wrapping_sub(7), true, &[]),
                encode_reply(c, true, &[]),
            ]
        });
        let mut ev3 = Ev3::new(Box::new(t));
        ev3.nop().unwrap();
        ev3.nop().unwrap();
        assert_eq!(ev3.stale_discarded, 2);
    }

    #[test]
    fn error_reply_names_the_command() {
        let t = MemoryLink::with_responder(|m| {
            vec![encode_reply(u16::from_le_bytes([m[2], m[3]]), false, &[])]
        });
        let mut ev3 = Ev3::new(Box::new(t));
        let e = ev3.count(OutputPort::C).unwrap_err();
        assert!(matches!(e, Ev3Error::ErrorReply { .. }));
        assert!(e.to_string().contains("OUTPUT_GET_COUNT motor C"), "{e}");
    }

    #[test]
    fn silence_is_a_timeout() {
        let mut ev3 = Ev3::new(Box::new(MemoryLink::new()));
        ev3.timeouts.reply = Duration::from_millis(10);
        let e = ev3.nop().unwrap_err();
        assert!(matches!(e, Ev3Error::Timeout { .. }), "{e}");
        assert!(e.link_failed());
    }

    #[test]
    fn wrong_device_report_says_what_is_where() {
        let t = MemoryLink::with_responder(|m| {
            let c = u16::from_le_bytes([m[2], m[3]]);
            // GET_TYPEMODE: input number is the 4th ops byte; answer "large motor" for
            // motors and "infrared" for sensor port 2.
            let input = m[10];
            let t = if input >= 16 { 7 } else { 33 };
            vec![encode_reply(c, true, &[t, 0])]
        });
        let mut ev3 = Ev3::new(Box::new(t));
        let e = ev3
            .check_devices(&[
                DeviceExpectation {
                    role: "tilt arm".into(),
                    port_label: "A".into(),
                    input: 16,
                    expected: device::LARGE_MOTOR,
                },
                DeviceExpectation {
                    role: "colour sensor".into(),
                    port_label: "2".into(),
                    input: 1,
                    expected: device::COLOR,
                },
            ])
            .unwrap_err();
        let s = e.to_string();
        assert!(
            s.contains("port 2 (colour sensor): expected colour sensor, found infrared sensor"),
            "{s}"
        );
        assert!(
            s.contains("port A (tilt arm): expected large motor, found large motor"),
            "{s}"
        );
    }
}
