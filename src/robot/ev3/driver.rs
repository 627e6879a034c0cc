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
//!    `T − P`) and profile `r1, |T − P| − r1 − r3, r3`; the ramps shrink in proportion
//!    when they are longer than the distance. No OUTPUT_START: a step job starts itself,
//!    and on LEGO's firmware a START that reaches a motor whose job has already ended (a
//!    short move, the brick's VM descheduled between the two) runs it on unregulated with
//!    its busy flag clear (`d_pwm.c`; shown on the firmware brick, `ev3-firmware-audit.md`
//!    B2);
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
//! A motor that stops moving within 3° of its target but stays busy (held a degree or two
//! short by friction or a stop: the step job never ends) is not a stall: after `stall_ms`
//! it is stopped with the brake and the move counts as done, instead of failing only when
//! the whole move budget has gone.
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
//! ## Safe without the host
//!
//! Every motion the driver starts is a step job (a move) or a time job (homing): the brick
//! ends it by itself. Nothing runs open-ended, so a dead link or a killed host leaves the
//! motors stopped within one motion.
//!
//! ## Readings that cannot be true
//!
//! A corrupted count (one flipped byte of a reply) once made a move's distance enormous: the
//! motor ran away and the wait for it never ended. So every count read is checked against
//! where the motor can be: between where it was when the driver last knew it and the
//! target of the move it was given since, with [`SLACK`] degrees to spare (overshoot, play,
//! a hand on the table). The check needs no clock, so it holds whatever the link's delays
//! and a simulator's speed. A count outside fails at once with `Implausible` (and the
//! MindCub3r stops every motor). Only homing, whose end is the unknown end stop, is not
//! checked; the zero it sets starts the check again. A move longer than [`MAX_MOVE`]
//! degrees is refused before it is sent.
//!
//! ## Lost replies and dropped links
//!
//! Reads (counts, status, colours, device types, pings) change nothing on the brick, so a
//! read whose reply was lost, garbled or cut off by the link is sent again (twice at most).
//! A move whose reply was lost may or may not have started: the motor's busy flag and count
//! are read back, and the move is sent again only if it did not start. A link that fails
//! (the port closed) is reopened, at most three times per command, before the command fails.
//!
//! ## Ctrl-C
//!
//! With a stop flag set ([`Ev3::set_interrupt`]), a wait lets the move under way end (it is
//! bounded on the brick) for at most a second, then stops every motor and fails with
//! `Interrupted`; homing stops at once. The MindCub3r checks the flag before each move, so a
//! stop lands between moves, where the cube's state is known.
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
//! by themselves, and so does the homing run (a time job).
//!
//! ## Polarity
//!
//! The firmware restores a motor's default direction only when a user program starts or
//! ends, not when a host connects (see [Polarity](crate::robot::ev3::protocol#polarity)),
//! so [`Ev3::set_polarity`] exists for the robot to set it on every connect (the MindCub3r
//! does). The turntable's sense is a calibration sign, not a polarity. On LEGO's firmware
//! OUTPUT_POLARITY also re-applies to each motor the power its last job left set (d_pwm
//! sets the power again on POLARITY, and a coast stop or a job's end does not clear it):
//! after an earlier session ended in a coast stop, an idle motor would start running at
//! its driver's floor duty (about 20 % for the medium motor) until its next command. So
//! [`Ev3::set_polarity`] stops the motors (coast) in the same command.
//!
//! ## Brick queries
//!
//! [`Ev3::brick_info`] asks in one round trip for the brick's name, firmware and hardware
//! versions, battery voltage and level; [`Ev3::typemodes`] for the device type and mode of
//! several inputs. Both only read.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
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
    #[error("{command}: motor {port} reads {count}°, outside {lo}°..{hi}° where its motion can take it (a corrupted reply?)")]
    Implausible {
        command: String,
        port: OutputPort,
        count: i32,
        lo: i32,
        hi: i32,
    },
    #[error("{command}: a move of {degrees}° is longer than any the robot makes (at most {MAX_MOVE}°); not sent")]
    MoveTooLong { command: String, degrees: i32 },
    #[error("{command}: stopped by the user (Ctrl-C); {}", if *stopped { "motors stopped" } else { "the brick did not confirm the stop" })]
    Interrupted { command: String, stopped: bool },
}

/// The longest move the driver sends (motor degrees): a whole scanning revolution of the
/// turntable is 1080.
pub const MAX_MOVE: i32 = 2000;

/// Reads sent again after a lost or garbled reply.
const READ_RETRIES: u32 = 2;

/// Reopenings of a failed link per command.
const REOPENS: u32 = 3;

/// Degrees a count may stray outside what its motion can reach (overshoot, play).
pub const SLACK: i32 = 60;

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

/// What the brick says about itself ([`Ev3::brick_info`]).
#[derive(Clone, Debug, PartialEq)]
pub struct BrickInfo {
    /// The brick's name (Settings → Brick Info; `EV3` unless renamed).
    pub name: String,
    /// Firmware version, e.g. `V1.09H`.
    pub firmware: String,
    /// Hardware version, e.g. `V0.60`.
    pub hardware: String,
    /// Battery voltage (V).
    pub battery_volts: f64,
    /// The firmware's battery level, 0..100 (see
    /// [Brick queries](crate::robot::ev3::protocol#brick-queries)).
    pub battery_level: u8,
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
    /// Where each motor can be (counts, inclusive), when known.
    reach: [Option<(i32, i32)>; 4],
    interrupt: Option<Arc<AtomicBool>>,
    /// Commands sent again after a lost reply, and links reopened.
    pub recoveries: u64,
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
            reach: [None; 4],
            interrupt: None,
            recoveries: 0,
        }
    }

    /// A flag (Ctrl-C) that ends waits: see [Ctrl-C](crate::robot::ev3::driver#ctrl-c).
    pub fn set_interrupt(&mut self, flag: Arc<AtomicBool>) {
        self.interrupt = Some(flag);
    }

    fn interrupted(&self) -> bool {
        self.interrupt
            .as_ref()
            .is_some_and(|f| f.load(Ordering::SeqCst))
    }

    /// Checks a count just read against where the motor can be (see [Readings that cannot
    /// be true](crate::robot::ev3::driver#readings-that-cannot-be-true)).
    pub fn check_count(
        &mut self,
        command: &str,
        port: OutputPort,
        count: i32,
    ) -> Result<i32, Ev3Error> {
        let slot = &mut self.reach[port.no() as usize];
        match *slot {
            Some((lo, hi)) if count < lo - SLACK || count > hi + SLACK => {
                Err(Ev3Error::Implausible {
                    command: command.to_string(),
                    port,
                    count,
                    lo: lo - SLACK,
                    hi: hi + SLACK,
                })
            }
            Some(_) => Ok(count),
            None => {
                *slot = Some((count, count));
                Ok(count)
            }
        }
    }

    /// A motion of `port` from `from` to `to` was sent: its count may be anywhere between,
    /// or still anywhere the motion before could take it (it may not have ended).
    fn may_reach(&mut self, port: OutputPort, from: i32, to: i32) {
        let slot = &mut self.reach[port.no() as usize];
        let (lo, hi) = slot.unwrap_or((from, from));
        *slot = Some((lo.min(from).min(to), hi.max(from).max(to)));
    }

    /// The motor was seen idle at `count`: that is where it is.
    fn rests_at(&mut self, port: OutputPort, count: i32) {
        self.reach[port.no() as usize] = Some((count, count));
    }

    /// Sends a command that changes nothing on the brick, again after a lost or garbled
    /// reply, and over a reopened link after a link failure.
    pub fn query(&mut self, command: &str, cmd: &DirectCommand) -> Result<Reply, Ev3Error> {
        let mut tries = 0;
        loop {
            match self.call(command, cmd) {
                Err(e) if tries < READ_RETRIES && Self::retryable(&e) => {
                    tries += 1;
                    self.recoveries += 1;
                    if matches!(e, Ev3Error::Link { .. }) {
                        self.reopen_bounded(command, e)?;
                    } else {
                        // Whatever half frame a garbled length left behind goes.
                        self.link.discard_input();
                    }
                }
                other => return other,
            }
        }
    }

    fn retryable(e: &Ev3Error) -> bool {
        matches!(
            e,
            Ev3Error::Timeout { .. } | Ev3Error::Malformed { .. } | Ev3Error::Link { .. }
        )
    }

    /// Reopens the link up to [`REOPENS`] times; `cause` if it never comes back.
    fn reopen_bounded(&mut self, command: &str, cause: Ev3Error) -> Result<(), Ev3Error> {
        for i in 0..REOPENS {
            std::thread::sleep(Duration::from_millis(100 * (i as u64 + 1)));
            if self.link.reopen().is_ok() {
                self.recoveries += 1;
                let name = self.link.name();
                self.log(|| format!("reopened {name} after: {command}"));
                return Ok(());
            }
        }
        Err(cause)
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
        self.query("NOP (ping)", &c).map(|_| ())
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
        let r = self.query(&name, &c)?;
        Ok((
            r.i8(t).map_err(|e| Self::malformed(&name, e))?,
            r.i8(m).map_err(|e| Self::malformed(&name, e))?,
        ))
    }

    /// Type and mode of the devices on several inputs (sensor ports 0..3, motors 16..19), in
    /// one round trip, in the order given.
    pub fn typemodes(&mut self, inputs: &[u8]) -> Result<Vec<(i8, i8)>, Ev3Error> {
        let mut c = DirectCommand::new();
        let slots: Vec<_> = inputs.iter().map(|&i| c.get_typemode(i)).collect();
        let name = format!("INPUT_DEVICE GET_TYPEMODE inputs {inputs:?}");
        let r = self.query(&name, &c)?;
        slots
            .into_iter()
            .map(|(t, m)| {
                Ok((
                    r.i8(t).map_err(|e| Self::malformed(&name, e))?,
                    r.i8(m).map_err(|e| Self::malformed(&name, e))?,
                ))
            })
            .collect()
    }

    /// The brick's name, firmware and hardware versions and battery, in one round trip.
    pub fn brick_info(&mut self) -> Result<BrickInfo, Ev3Error> {
        let mut c = DirectCommand::new();
        let name = c.brick_name(32);
        let fw = c.firmware_version(16);
        let hw = c.hardware_version(16);
        let volts = c.battery_volts();
        let level = c.battery_level();
        let what = "COM_GET GET_BRICKNAME + UI_READ GET_FW_VERS, GET_HW_VERS, GET_VBATT, GET_LBATT";
        let r = self.call(what, &c)?;
        let m = |e| Self::malformed(what, e);
        Ok(BrickInfo {
            name: r.string(name).map_err(m)?,
            firmware: r.string(fw).map_err(m)?,
            hardware: r.string(hw).map_err(m)?,
            battery_volts: r.f32(volts).map_err(m)? as f64,
            battery_level: r.i8(level).map_err(m)?.clamp(0, 100) as u8,
        })
    }

    /// OUTPUT_POLARITY of the motors in `nos`: 1 normal, −1 reversed (see
    /// [Polarity](crate::robot::ev3::driver#polarity)), and OUTPUT_STOP (coast) of the
    /// same motors after it: LEGO's firmware re-applies their last power on POLARITY.
    pub fn set_polarity(&mut self, nos: u8, pol: i8) -> Result<(), Ev3Error> {
        let mut c = DirectCommand::new();
        c.output_polarity(nos, pol).output_stop(nos, false);
        let ports: String = OutputPort::ALL
            .iter()
            .filter(|p| nos & p.bit() != 0)
            .map(|p| p.letter())
            .collect();
        self.call(&format!("OUTPUT_POLARITY {pol} motors {ports}"), &c)
            .map(|_| ())
    }

    /// Checks every expected device; the error lists what was found on every port.
    pub fn check_devices(&mut self, expect: &[DeviceExpectation]) -> Result<(), Ev3Error> {
        let mut report = Vec::new();
        let mut bad = false;
        let inputs: Vec<u8> = expect.iter().map(|e| e.input).collect();
        let found = self.typemodes(&inputs)?;
        for (e, &(t, _)) in expect.iter().zip(&found) {
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
        let name = format!("OUTPUT_GET_COUNT motor {port}");
        let r = self.query(&name, &c)?;
        let count = r.i32(s).map_err(|e| Self::malformed(&name, e))?;
        Ok((name, count))
    }

    /// The sensor count of one motor and whether it is busy, in one round trip, without the
    /// plausibility check (for homing, where nobody knows where the motor is).
    fn count_and_busy(&mut self, port: OutputPort) -> Result<(i32, bool), Ev3Error> {
        let mut c = DirectCommand::new();
        let s = c.output_get_count(port);
        let b = c.output_test(port.bit());
        let name = format!("OUTPUT_GET_COUNT/TEST motor {port}");
        let r = self.query(&name, &c)?;
        let count = r.i32(s).map_err(|e| Self::malformed(&name, e))?;
        let busy = r.i8(b).map_err(|e| Self::malformed(&name, e))? != 0;
        Ok((count, busy))
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
        for &(p, c, _) in &counts {
            self.idle_count[p.no() as usize] = (!busy).then_some(c);
            if !busy {
                self.rests_at(p, c);
            }
        }
        Ok(MotorStatus { busy, counts })
    }

    /// Starts moving `motor` to the absolute `target` (see [Absolute targets](crate::robot::ev3::driver#absolute-targets)): reads the present sensor
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
        let name = format!(
            "OUTPUT_STEP_SPEED motor {} to {target}° (by {d}°)",
            motor.port
        );
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
        let deadline = start + budget;
        let mut last: Vec<(i32, Instant)> = Vec::new();
        let mut interrupted_at: Option<Instant> = None;
        let mut idle_off_target = false;
        loop {
            let st = self.status(&ports)?;
            let now = Instant::now();
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
                last = st.counts.iter().map(|&(_, c, _)| (c, now)).collect();
            }
            for (i, &(port, count, _)) in st.counts.iter().enumerate() {
                let target = motors[i].target;
                if (count - last[i].0).abs() >= 2 {
                    last[i] = (count, now);
                } else if now - last[i].1 >= self.timeouts.stall {
                    if (count - target).abs() > 3 {
                        return Err(Ev3Error::Stalled {
                            command: what.to_string(),
                            port,
                            position: count,
                            target,
                            ms: (now - last[i].1).as_millis() as u64,
                        });
                    }
                    // Held a degree or two short: the step job would never end. Close
                    // enough; stop it with the brake.
                    let mut c = DirectCommand::new();
                    c.output_stop(port.bit(), true);
                    self.call(
                        &format!(
                            "{what}: OUTPUT_STOP motor {port} (held {}° short)",
                            (target - count).abs()
                        ),
                        &c,
                    )?;
                    last[i] = (count, now);
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
                    "{what}: OUTPUT_TIME_SPEED {speed}% for {ms} ms motor {}",
                    motor.port
                ),
                &c,
            )?;
            let (first, _) = self.count_and_busy(motor.port)?;
            let mut last = (first, Instant::now());
            loop {
                std::thread::sleep(self.timeouts.poll);
                if self.interrupted() {
                    let stopped = self.stop_all().is_ok();
                    return Err(Ev3Error::Interrupted {
                        command: what.to_string(),
                        stopped,
                    });
                }
                let (now_count, busy) = self.count_and_busy(motor.port)?;
                let now = Instant::now();
                if now - start >= self.timeouts.home {
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
                    last = (now_count, now);
                } else if now - last.1 >= self.timeouts.stall {
                    break 'search true;
                }
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
        // The count starts again from zero here.
        self.rests_at(motor.port, 0);
        motor.target = 0;
        Ok(())
    }

    /// RGB-RAW of the colour sensor on `input` (0..3).
    pub fn read_rgb(&mut self, input: u8) -> Result<[f64; 3], Ev3Error> {
        let mut c = DirectCommand::new();
        let s = c.ready_raw(input, device::COLOR, device::COLOR_RGB_RAW, 3);
        let name = format!("INPUT_DEVICE READY_RAW colour sensor port {}", input + 1);
        Ok(self.query_rgb(&name, &c, &s, |_| Ok(()))?.0)
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
        // A garbled colour is asked again: the sample then carries the later count it was
        // taken at.
        let (rgb, at) = self.query_rgb(&name, &c, &s, |r| r.i32(count))?;
        Ok((rgb, self.check_count(&name, port, at)?))
    }

    /// Sends `c`, whose reply holds an RGB-RAW reading at `slots` and whatever else `also`
    /// reads from it, until the colour is one the sensor can give
    /// ([`device::rgb_raw_possible`]); a garbled one is asked again up to the read retries.
    fn query_rgb<T>(
        &mut self,
        name: &str,
        c: &DirectCommand,
        slots: &[protocol::Slot],
        also: impl Fn(&Reply) -> Result<T, protocol::ProtocolError>,
    ) -> Result<([f64; 3], T), Ev3Error> {
        let mut tries = 0;
        loop {
            let r = self.query(name, c)?;
            let mut out = [0.0; 3];
            for (o, &slot) in out.iter_mut().zip(slots) {
                *o = r.i32(slot).map_err(|e| Self::malformed(name, e))? as f64;
            }
            let more = also(&r).map_err(|e| Self::malformed(name, e))?;
            if device::rgb_raw_possible(&out) {
                return Ok((out, more));
            }
            if tries >= READ_RETRIES {
                return Err(Ev3Error::Malformed {
                    command: name.to_string(),
                    detail: format!("RGB-RAW {out:?} outside 0..{}", device::RGB_RAW_MAX),
                });
            }
            tries += 1;
            self.recoveries += 1;
        }
    }

    /// Forgets the motor counts the last status poll saw: a program that ran on the brick
    /// may have moved the motors since, so the next move reads its count afresh.
    /// Something other than this driver's motions (a program running on the brick) may move
    /// `port` anywhere between `from` and `to`: counts there are plausible.
    pub fn may_move(&mut self, port: OutputPort, from: i32, to: i32) {
        self.may_reach(port, from, to);
    }

    pub fn forget_counts(&mut self) {
        self.idle_count = [None; 4];
    }

    /// A program on the brick is about to drive `port` to an end stop nobody knows the
    /// position of: no plausibility check of its count until it is found.
    pub fn position_unknown(&mut self, port: OutputPort) {
        self.idle_count = [None; 4];
        self.reach[port.no() as usize] = None;
    }

    /// A program on the brick found `port`'s end stop and cleared its count there, as
    /// [`Ev3::home`] does: it rests at zero.
    pub fn zeroed(&mut self, port: OutputPort) {
        self.rests_at(port, 0);
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
    fn a_count_no_motion_can_reach_stops_at_once() {
        // The motor reads 100, then (one corrupted byte) 100 + 2^24.
        let counts = std::sync::Mutex::new(vec![100i32, 100 + (1 << 24)].into_iter());
        let t = MemoryLink::with_responder(move |m| {
            let c = u16::from_le_bytes([m[2], m[3]]);
            let v = counts.lock().unwrap().next().unwrap_or(0);
            vec![encode_reply(c, true, &v.to_le_bytes())]
        });
        let mut ev3 = Ev3::new(Box::new(t));
        assert_eq!(ev3.count(OutputPort::B).unwrap(), 100);
        let e = ev3.count(OutputPort::B).unwrap_err();
        assert!(matches!(e, Ev3Error::Implausible { .. }), "{e}");
        assert!(e.to_string().contains("corrupted"), "{e}");
        // A move that long is refused before it is sent.
        let mut m = Motor::new(OutputPort::A, MotorKind::Large, 1050.0);
        ev3.idle_count[0] = Some(0);
        let e = ev3
            .start_move_to(&mut m, 5000, 50, (10, 10), true)
            .unwrap_err();
        assert!(matches!(e, Ev3Error::MoveTooLong { .. }), "{e}");
    }

    #[test]
    fn a_colour_the_sensor_cannot_give_is_read_again() {
        // One corrupted byte turns a red channel of 120 into 120 + 2^28; the read is sent
        // again and the true reading comes back.
        let replies =
            std::sync::Mutex::new(vec![[120 + (1 << 28), 40, 20], [120i32, 40, 20]].into_iter());
        let t = MemoryLink::with_responder(move |m| {
            let c = u16::from_le_bytes([m[2], m[3]]);
            let rgb = replies.lock().unwrap().next().unwrap_or([0, 0, 0]);
            let g: Vec<u8> = rgb.iter().flat_map(|v| v.to_le_bytes()).collect();
            vec![encode_reply(c, true, &g)]
        });
        let mut ev3 = Ev3::new(Box::new(t));
        assert_eq!(ev3.read_rgb(1).unwrap(), [120.0, 40.0, 20.0]);
        assert_eq!(ev3.recoveries, 1);
    }

    #[test]
    fn a_lost_read_reply_is_read_again() {
        // The first reply is lost; the same read sent again is answered.
        let n = std::sync::atomic::AtomicU32::new(0);
        let t = MemoryLink::with_responder(move |m| {
            let c = u16::from_le_bytes([m[2], m[3]]);
            if n.fetch_add(1, Ordering::SeqCst) == 0 {
                return vec![];
            }
            vec![encode_reply(c, true, &42i32.to_le_bytes())]
        });
        let mut ev3 = Ev3::new(Box::new(t));
        ev3.timeouts.reply = Duration::from_millis(20);
        assert_eq!(ev3.count(OutputPort::C).unwrap(), 42);
        assert_eq!(ev3.recoveries, 1);
    }

    #[test]
    fn wrong_device_report_says_what_is_where() {
        let t = MemoryLink::with_responder(|m| {
            let c = u16::from_le_bytes([m[2], m[3]]);
            // One GET_TYPEMODE per device, six bytes each after the seven-byte header, the
            // input number the fourth; answer "large motor" for motors and "infrared" for
            // sensor port 2.
            let global: Vec<u8> = m[7..]
                .chunks(6)
                .flat_map(|op| [if op[3] >= 16 { 7 } else { 33 }, 0])
                .collect();
            vec![encode_reply(c, true, &global)]
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
