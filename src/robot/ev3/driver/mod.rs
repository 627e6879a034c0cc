//! The EV3 driver: direct commands over a byte link, one in flight at a time, message
//! counters checked, typed errors naming the command, device checks, motors positioned by
//! absolute targets, homing against end stops and stall detection.
//!
//! Level: robot (uses [`super::protocol`] and, through [`super::link`], the byte link of
//! [`crate::robot::link`]). Must not depend on the MindCub3r, the simulators, `job` or
//! `cli`. No printing: an optional log callback receives one line per exchange.
//!
//! The wire format (framing, parameters, opcodes, ports, the brick's execution rules) is
//! documented in [the codec](crate::robot::ev3::protocol); the sections below and those of
//! the submodules are what the driver adds on top of it, and why: [`motion`] (absolute
//! targets, time budgets, stall detection, homing), [`queries`] (device check, polarity,
//! brick queries), [`colour`] (colour readings, sampling while moving).
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
//! The brick runs one direct command at a time and reads nothing while it runs: a command
//! sent meanwhile waits in the link and runs only after the running one has answered (see
//! [Execution on the brick](crate::robot::ev3::protocol#execution-on-the-brick)). So the
//! driver never pipelines: every command it sends asks for a reply, and the next command
//! is sent only after that reply (or a timeout; a late reply is then told apart by its
//! counter). Motor moves are started without
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
//! | `stall_ms` | 400 | a motor busy but not moving for this long (brick time; three times this before it first moves) has stalled |
//! | `move_extra_ms` | 1500 | allowance on top of twice a move's nominal time |
//! | `home_ms` | 6000 | longest homing run |
//!
//! A silent link is a timeout. Transport failures and timeouts count as link failures
//! (`link_failed`): there is no point sending STOP over that link. A read whose reply is
//! lost is sent again (three times in all); once a read has gone unanswered all three
//! times, the brick counts as silent and later reads are sent once each until a reply
//! arrives again, so that what a stop asks of a dead link (where the motors are) ends in
//! seconds, not in three times as many.
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
//! A reply is garbled when it does not decode, or when its number is none the driver sent
//! lately: one numbered up to [`STALE_WINDOW`] commands back is a late answer to a command
//! given up on (discarded); any other is a changed byte, and waiting on would only end in
//! a timeout that blames a silent brick.
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
//! ## Stopping
//!
//! A lost link does not stop the motors: the Bluetooth code of the firmware never touches
//! the outputs, which are reset only when the output module opens or closes (`c_bt.c`,
//! `c_output.c`). Every error path therefore stops all motors (OUTPUT_STOP on `0x0F`,
//! coasting, with a short 500 ms reply timeout). Moves are step jobs that end on the brick
//! by themselves, and so does the homing run (a time job).
//!
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
    /// `answered`: replies the brick had sent on this link before (none: it may be no
    /// EV3 at all; some: the link or the brick went silent). `sent`: how many times the
    /// command went out, each waiting `ms` (a read is sent again after a lost reply).
    #[error("{command}: {}", silence(*ms, *sent, *answered))]
    Timeout {
        command: String,
        ms: u64,
        sent: u32,
        answered: u64,
    },
    #[error("{command}: the brick answered with an error reply (DIRECT_REPLY_ERROR): command not executed")]
    ErrorReply { command: String },
    #[error("{command}: the brick's reply came garbled ({detail}): check the link (the cable or Bluetooth)")]
    Malformed { command: String, detail: String },
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
    #[error("{command}: stopped by the user; {}", if *stopped { "motors stopped" } else { "the brick did not confirm the stop" })]
    Interrupted { command: String, stopped: bool },
}

/// The longest move the driver sends (motor degrees): a whole scanning revolution of the
/// turntable is 1080.
pub const MAX_MOVE: i32 = 2000;

/// Reads sent again after a lost or garbled reply.
const READ_RETRIES: u32 = 2;

/// The speed reading (% of full speed) from which the brick is taken to read a motor as
/// turning (2 %: some 20 °/s on a large motor; a stalled motor reads 0).
pub const TURNING_PCT: u8 = 2;

/// Degrees of count change within `stall_ms` below which a busy motor stands still (see
/// [Stall detection](crate::robot::ev3::driver::motion#stall-detection); the host's waits
/// and the programs on the brick share it).
pub const STILL_DEG: i32 = 2;

/// Degrees from its target within which a motor standing still is held short (its step
/// job would never end): stopped with the brake, the move done. Farther, it has stalled.
pub const HELD_SHORT_DEG: i32 = 3;

/// Reopenings of a failed link per command.
const REOPENS: u32 = 3;
/// A reply numbered at most this many commands before the one awaited is a late answer to
/// an earlier command (discarded); any other number is a garbled reply (see [Lost replies
/// and dropped links](crate::robot::ev3::driver#lost-replies-and-dropped-links)).
pub const STALE_WINDOW: u16 = 256;

/// Degrees a count may stray outside what its motion can reach (overshoot, play). On
/// LEGO's firmware the sensor arm at its speed of 75 % runs up to 58° past its target
/// before the brake pulls it back: this leaves room for that and then some, and a count
/// corrupted on the link (a flipped byte) is still off by far more.
pub const SLACK: i32 = 90;

/// A missing reply, in words that tell a brick that never answered from one that stopped.
fn silence(ms: u64, sent: u32, answered: u64) -> String {
    let within = match sent {
        0 | 1 => format!("within {ms} ms"),
        n => format!("within {ms} ms, sent {n} times"),
    };
    match answered {
        0 => format!("the brick did not answer {within} (nothing has answered on this link)"),
        n => format!(
            "the brick did not answer {within}, though it had answered {n} command{} before (link lost, or the brick busy or switched off)",
            if n == 1 { "" } else { "s" }
        ),
    }
}

impl Ev3Error {
    /// Whether the brick has never answered on this link: the port may hold no EV3 (or
    /// another kind of robot).
    pub fn never_answered(&self) -> bool {
        matches!(self, Ev3Error::Timeout { answered: 0, .. })
    }

    /// The motor a motion fault (a stall, a move out of time, no end stop) names.
    pub fn motion_fault_port(&self) -> Option<OutputPort> {
        match self {
            Ev3Error::Stalled { port, .. }
            | Ev3Error::MoveTimeout { port, .. }
            | Ev3Error::NoEndStop { port, .. } => Some(*port),
            _ => None,
        }
    }

    /// Whether the link itself failed (no point sending STOP over it).
    pub fn link_failed(&self) -> bool {
        matches!(self, Ev3Error::Link { .. } | Ev3Error::Timeout { .. })
    }
}

/// Motor kinds; their nominal full speeds are in
/// [Time budgets](crate::robot::ev3::driver::motion#time-budgets).
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

/// One poll of the motors: busy flag, per port (count, speed), and the brick's clock when
/// it read them.
#[derive(Clone, Debug)]
pub struct MotorStatus {
    pub busy: bool,
    pub counts: Vec<(OutputPort, i32, i8)>,
    /// The brick's free-running microsecond clock (TIMER_READ_US; wraps, so only
    /// differences, taken with `wrapping_sub`, mean anything).
    pub clock_us: u32,
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

pub mod colour;
pub mod motion;
pub mod queries;

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
    /// Replies received (whole frames, whatever their counter or status).
    pub replies_received: u64,
    log: Option<Log>,
    /// Sensor counts of motors seen at rest by [`Ev3::settle`] (saves a round trip before
    /// the next move; consumed by that move).
    idle_count: [Option<i32>; 4],
    /// Where each motor can be (counts, inclusive), when known.
    reach: [Option<(i32, i32)>; 4],
    /// Where the last motion of each motor was sent: a braked motor the brick calls idle
    /// is still pulled there.
    aim: [Option<i32>; 4],
    interrupt: Option<Arc<AtomicBool>>,
    /// Commands sent again after a lost reply, and links reopened.
    pub recoveries: u64,
    /// Moves held short of their target and stopped with the brake (by the host's waits
    /// or by a program on the brick).
    pub held_short: u64,
    /// A read went unanswered on every try, and no reply has come since (see
    /// [Timeouts](crate::robot::ev3::driver#timeouts)).
    silent: bool,
}

impl Ev3 {
    pub fn new(link: Box<dyn Link>) -> Ev3 {
        Ev3 {
            link: Ev3Link::new(link),
            counter: 0,
            timeouts: DriverTimeouts::default(),
            stale_discarded: 0,
            commands_sent: 0,
            replies_received: 0,
            log: None,
            idle_count: [None; 4],
            reach: [None; 4],
            aim: [None; 4],
            interrupt: None,
            recoveries: 0,
            held_short: 0,
            silent: false,
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
        self.aim[port.no() as usize] = Some(to);
    }

    /// The motor was seen at rest at `count`: that is where it is.
    fn rests_at(&mut self, port: OutputPort, count: i32) {
        self.reach[port.no() as usize] = Some((count, count));
        self.aim[port.no() as usize] = None;
    }

    /// The brick calls the motor idle at `count`: its job has ended, but a braked motor
    /// may still be pulled back to where its last motion was sent, so it is somewhere
    /// between the two.
    fn idle_at(&mut self, port: OutputPort, count: i32) {
        let aim = self.aim[port.no() as usize].unwrap_or(count);
        self.reach[port.no() as usize] = Some((count.min(aim), count.max(aim)));
    }

    /// Sends a command that changes nothing on the brick, again after a lost or garbled
    /// reply, and over a reopened link after a link failure.
    pub fn query(&mut self, command: &str, cmd: &DirectCommand) -> Result<Reply, Ev3Error> {
        let mut tries = 0;
        // A silent brick is asked once: three tries each would only multiply the wait.
        let retries = if self.silent { 0 } else { READ_RETRIES };
        loop {
            match self.call(command, cmd) {
                Err(Ev3Error::Timeout {
                    command,
                    ms,
                    sent,
                    answered,
                }) if tries >= retries => {
                    self.silent = true;
                    return Err(Ev3Error::Timeout {
                        command,
                        ms,
                        sent: sent + tries,
                        answered,
                    });
                }
                Err(e) if tries < retries && Self::retryable(&e) => {
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

    /// Counts a move held short and stopped with the brake, and logs it (`-vv`) with
    /// `what` names the wait: a program on the brick reports its own this way.
    /// `None`: a stop the program counted without its details.
    pub fn held_short(&mut self, what: &str, motor: Option<(OutputPort, i32)>) {
        self.held_short += 1;
        self.log(|| match motor {
            Some((port, short)) => {
                format!("{what}: motor {port} held {short}° short, stopped with the brake")
            }
            None => format!("{what}: a motor held short, stopped with the brake"),
        });
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
    /// replies with an earlier counter (late answers to timed-out commands) are discarded,
    /// any other counter is a garbled reply.
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
                    sent: 1,
                    answered: self.replies_received,
                });
            }
            let frame = match self.link.recv_message(left) {
                Ok(Some(f)) => f,
                Ok(None) => {
                    return Err(Ev3Error::Timeout {
                        command: command.to_string(),
                        ms: timeout.as_millis() as u64,
                        sent: 1,
                        answered: self.replies_received,
                    })
                }
                Err(source) => {
                    return Err(Ev3Error::Link {
                        command: command.to_string(),
                        source,
                    })
                }
            };
            self.replies_received += 1;
            self.silent = false;
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
                if counter.wrapping_sub(reply.counter) <= STALE_WINDOW {
                    self.stale_discarded += 1;
                    continue;
                }
                // Not a number this driver sent lately: the frame is not to be trusted.
                self.link.discard_input();
                return Err(Ev3Error::Malformed {
                    command: command.to_string(),
                    detail: format!(
                        "numbered {:#06x}, not {counter:#06x} as the command ({})",
                        reply.counter,
                        protocol::hex(&frame)
                    ),
                });
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
        // The log names the operations too (the command's label is in the user's words).
        self.log(|| {
            format!(
                "-> {command}{note} [{}]: {}",
                op_names(&cmd.ops),
                protocol::hex(&bytes)
            )
        });
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
        self.query("checking that the brick answers", &c)
            .map(|_| ())
    }

    /// Reopens the link after a link failure.
    pub fn reconnect(&mut self) -> Result<(), Ev3Error> {
        self.link.reopen().map_err(|source| Ev3Error::Link {
            command: "reconnect".into(),
            source,
        })
    }

    /// Something other than this driver's motions (a program running on the brick) may move
    /// `port` anywhere between `from` and `to`: counts there are plausible.
    pub fn may_move(&mut self, port: OutputPort, from: i32, to: i32) {
        self.may_reach(port, from, to);
    }

    /// Forgets the settled motor counts: a program that ran on the brick may have moved
    /// the motors since, so the next move reads its count afresh.
    pub fn forget_counts(&mut self) {
        self.idle_count = [None; 4];
    }

    /// A program on the brick is about to drive `port` to an end stop nobody knows the
    /// position of: no plausibility check of its count until it is found.
    pub fn position_unknown(&mut self, port: OutputPort) {
        self.idle_count = [None; 4];
        self.reach[port.no() as usize] = None;
        self.aim[port.no() as usize] = None;
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
        self.call_within("stopping every motor", &c, Duration::from_millis(500))
            .map(|_| ())
    }

    /// A short beep (end of a job).
    pub fn beep(&mut self) -> Result<(), Ev3Error> {
        let mut c = DirectCommand::new();
        c.tone(20, 880, 150);
        self.call("a beep", &c).map(|_| ())
    }

    pub fn led(&mut self, pattern: u8) -> Result<(), Ev3Error> {
        let mut c = DirectCommand::new();
        c.led(pattern);
        self.call("setting the brick's light", &c).map(|_| ())
    }
}

/// The operations of a command, each name once in the order first sent (`OUTPUT_RESET,
/// OUTPUT_STEP_SPEED`), for the `-vv` log.
fn op_names(ops: &[u8]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for i in protocol::ops::walk(ops).instrs {
        if !names.contains(&i.op.name) {
            names.push(i.op.name);
        }
    }
    names.join(", ")
}

#[cfg(test)]
mod tests;
