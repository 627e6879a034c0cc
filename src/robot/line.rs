//! The line protocol: a small, acknowledged text protocol for Arduino-style cube robots
//! with one motor per face (or five), the host side of it, and the robot's execution-time
//! metric used to pick the cheapest solution.
//!
//! Level: robot (depends on `cube`; no printing). The simulator speaking the same protocol
//! on a pseudo-terminal is [`super::line_sim`].
//!
//! ## The protocol (version 1)
//! ASCII lines ending in `\n` (a `\r` before it is ignored), at any baud rate the link
//! needs (115200 8N1 is usual for an Arduino over USB).
//!
//! Host → robot: `<seq> <VERB> [ARGS...]`. `seq` is a decimal number 1..=65535 that the
//! host increases by one for every new command (65535 wraps to 1). A command sent again
//! with the *same* `seq` (the host saw no reply and retries) is **not executed twice**: the
//! robot replays the replies it gave. A `seq` that is neither the last one nor the next
//! new one is still accepted (the host may have restarted) — sequence numbers make retries
//! safe, they are not a session.
//!
//! Robot → host, for every command:
//! * `<seq> ACK` at once: the line was read and is being executed;
//! * for `MOVE` only, `<seq> DONE <i> <TOKEN>` after the i-th token (0-based) has finished,
//!   so the host always knows which turns were made, even if the link dies mid-line;
//! * then exactly one of `<seq> OK [key=value...]` or `<seq> ERR <CODE> <text>`.
//!
//! Lines starting with `#` are comments the host ignores (a robot may print a banner).
//!
//! | verb | arguments | reply |
//! |------|-----------|-------|
//! | `CAPS` | — | `OK proto=1 name=<id> faces=<which of URFDLB have a motor> parallel=0\|1 quarter_ms=<ms> half_ms=<ms> speed=<pct> state=0\|1 scan=0\|1 size=3\|2 [scale=...]` |
//! | `HOME` | — | `OK` once every face is square (needed once before `MOVE`) |
//! | `SPEED` | `<pct>` 1..=100 | `OK speed=<pct>`; turn times scale with 100/pct |
//! | `MOVE` | tokens | `OK moves=<n>` after all; each token is a face turn in Singmaster (`R`, `U'`, `F2`) or, when `parallel=1`, two turns of opposite faces joined by `+` (`U+D'`) made at the same time |
//! | `STOP` | — | `OK`; a `MOVE` in progress stops after its current token and answers `ERR STOPPED` |
//! | `STATE` | — | `OK state=<facelets>` (only when `state=1`: simulators, or robots that track their cube) |
//! | `SCAN` | [sticker indices] | `OK scan=r,g,b;r,g,b;...` (only when `scan=1`: robots with colour sensors or cameras): one reading per sticker in URFDLB facelet order (or of the stickers named, in that order), on the scale given by `CAPS` `scale=rgb8\|ev3-raw\|unit` |
//!
//! Error codes: `SYNTAX` (unreadable line or token), `VERB` (unknown verb), `FACE` (no motor
//! for that face), `PARALLEL` (a `+` token on a robot without `parallel=1`, or not opposite
//! faces), `RANGE` (speed out of range), `NOT_HOMED` (`MOVE` before `HOME`), `STALL` (a motor
//! did not reach its position: the robot stops; the `DONE` lines say what was made),
//! `STOPPED`, `UNSUPPORTED` (e.g. `STATE` on a robot that does not track its cube).
//!
//! Example:
//! ```text
//! > 1 CAPS
//! < 1 ACK
//! < 1 OK proto=1 name=uno-6 faces=URFDLB parallel=1 quarter_ms=180 half_ms=300 speed=100 state=0
//! > 2 HOME
//! < 2 ACK
//! < 2 OK
//! > 3 MOVE R U' F2 U+D'
//! < 3 ACK
//! < 3 DONE 0 R
//! < 3 DONE 1 U'
//! < 3 DONE 2 F2
//! < 3 DONE 3 U+D'
//! < 3 OK moves=4
//! ```
//!
//! ## Five motors
//! A robot without a motor for one face (`faces=URFDL`, say) still solves every cube: each
//! turn of the missing face is replaced by a 13-move sequence of the other faces that has
//! the same effect on the cube ([`substitute_missing`]).
//!
//! ## Execution-time metric
//! A quarter turn costs `quarter_ms`, a half turn `half_ms` (both × 100/speed); two
//! consecutive turns of opposite faces cost one step (the slower of the two) when the robot
//! says `parallel=1` ([`LineCaps::seconds`]).

use std::fmt;
use std::io::Write;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::cube::{Alg, Face, Move, MoveKind, Turn};

/// Errors of the line robot, each naming the command and what happened.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    #[error("cannot open {path}: {reason}")]
    Open { path: PathBuf, reason: String },
    #[error("link i/o error during `{command}`: {reason}")]
    Io { command: String, reason: String },
    #[error("no reply to `{command}` (seq {seq}) within {waited_ms} ms: the robot is silent (power, cable?)")]
    Timeout {
        seq: u16,
        command: String,
        waited_ms: u64,
    },
    #[error("robot refused `{command}` (seq {seq}): {code} {text}")]
    Robot {
        seq: u16,
        command: String,
        code: String,
        text: String,
    },
    #[error("unexpected line from the robot after `{command}`: {line:?} ({reason})")]
    Protocol {
        command: String,
        line: String,
        reason: String,
    },
    #[error("cannot plan for this robot: {0}")]
    Plan(String),
}

/// What the robot said it can do (`CAPS`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LineCaps {
    pub proto: u32,
    pub name: String,
    /// Faces with a motor.
    pub faces: Vec<Face>,
    pub parallel: bool,
    pub quarter_ms: u32,
    pub half_ms: u32,
    pub speed: u32,
    /// Whether `STATE` answers.
    pub state: bool,
    /// Whether `SCAN` answers, and on which scale.
    pub scan: Option<crate::color::raw::Scale>,
    /// Cube size the robot is built for (3 or 2).
    pub size: u32,
}

impl LineCaps {
    /// Parses the `key=value` words of a `CAPS` reply.
    pub fn parse(words: &str) -> Result<LineCaps, String> {
        let mut caps = LineCaps {
            proto: 0,
            name: String::new(),
            faces: Vec::new(),
            parallel: false,
            quarter_ms: 0,
            half_ms: 0,
            speed: 100,
            state: false,
            scan: None,
            size: 3,
        };
        let mut scan = false;
        let mut scale = crate::color::raw::Scale::Rgb8;
        let num = |k: &str, v: &str| -> Result<u32, String> {
            v.parse::<u32>()
                .map_err(|_| format!("{k}={v:?} is not a number"))
        };
        for w in words.split_whitespace() {
            let Some((k, v)) = w.split_once('=') else {
                return Err(format!("{w:?} is not key=value"));
            };
            match k {
                "proto" => caps.proto = num(k, v)?,
                "name" => caps.name = v.to_string(),
                "faces" => {
                    caps.faces = v
                        .chars()
                        .map(|c| {
                            Face::from_letter(c).ok_or(format!("faces={v:?}: {c:?} is no face"))
                        })
                        .collect::<Result<_, _>>()?
                }
                "parallel" => caps.parallel = v == "1",
                "quarter_ms" => caps.quarter_ms = num(k, v)?,
                "half_ms" => caps.half_ms = num(k, v)?,
                "speed" => caps.speed = num(k, v)?.clamp(1, 100),
                "state" => caps.state = v == "1",
                "scan" => scan = v == "1",
                "scale" => {
                    scale = serde_json::from_value(serde_json::Value::String(v.to_string()))
                        .map_err(|_| format!("scale={v:?} (rgb8, ev3-raw, unit)"))?
                }
                "size" => caps.size = num(k, v)?,
                _ => {} // unknown keys are for newer hosts
            }
        }
        caps.scan = scan.then_some(scale);
        if caps.size != 2 && caps.size != 3 {
            return Err(format!("size={} (2 or 3)", caps.size));
        }
        if caps.proto != 1 {
            return Err(format!(
                "protocol version {} (this host speaks 1)",
                caps.proto
            ));
        }
        if caps.faces.len() < 5 {
            return Err(format!(
                "{} face motors: a cube needs at least five",
                caps.faces.len()
            ));
        }
        if caps.quarter_ms == 0 || caps.half_ms == 0 {
            return Err("quarter_ms and half_ms must be positive".into());
        }
        Ok(caps)
    }

    /// The `CAPS` reply words.
    pub fn to_words(&self) -> String {
        format!(
            "proto={} name={} faces={} parallel={} quarter_ms={} half_ms={} speed={} state={} size={} scan={}{}",
            self.proto,
            self.name,
            self.faces.iter().map(|f| f.letter()).collect::<String>(),
            u8::from(self.parallel),
            self.quarter_ms,
            self.half_ms,
            self.speed,
            u8::from(self.state),
            self.size,
            u8::from(self.scan.is_some()),
            match self.scan {
                Some(sc) => format!(
                    " scale={}",
                    serde_json::to_value(sc)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default()
                ),
                None => String::new(),
            }
        )
    }

    /// Seconds one step (one turn, or two parallel opposite turns) takes.
    pub fn step_seconds(&self, step: &[Move]) -> f64 {
        let scale = 100.0 / self.speed.max(1) as f64 / 1000.0;
        step.iter()
            .map(|m| {
                if m.turn == Turn::Half {
                    self.half_ms
                } else {
                    self.quarter_ms
                }
            })
            .max()
            .unwrap_or(0) as f64
            * scale
    }

    /// Robot seconds for an already-grouped sequence.
    pub fn seconds(&self, steps: &[Vec<Move>]) -> f64 {
        steps.iter().map(|s| self.step_seconds(s)).sum()
    }

    /// The steps this robot executes for a solution: missing faces substituted, opposite
    /// turns paired when the robot can make them together.
    pub fn steps(&self, alg: &Alg) -> Result<Vec<Vec<Move>>, LineError> {
        let alg = substitute_missing(alg, &self.faces)?;
        let mut out: Vec<Vec<Move>> = Vec::new();
        for &m in alg.moves() {
            let MoveKind::Face(f) = m.kind else {
                return Err(LineError::Plan(format!("{m} is not a face turn")));
            };
            if self.parallel {
                if let Some(last) = out.last_mut() {
                    if last.len() == 1 && last[0].kind == MoveKind::Face(f.opposite()) {
                        last.push(m);
                        continue;
                    }
                }
            }
            out.push(vec![m]);
        }
        Ok(out)
    }
}

/// `U` made without turning U (R L' F2 B2 R L' D R' L F2 B2 R' L: the two `R L'` blocks act
/// as a slice move that carries D's turn up to U).
const U_WITHOUT_U: &str = "R L' F2 B2 R L' D R' L F2 B2 R' L";

/// Replaces every turn of a face without a motor by turns of the others.
pub fn substitute_missing(alg: &Alg, faces: &[Face]) -> Result<Alg, LineError> {
    let missing: Vec<Face> = Face::ALL
        .into_iter()
        .filter(|f| !faces.contains(f))
        .collect();
    if missing.is_empty() {
        return Ok(alg.clone());
    }
    if missing.len() > 1 {
        return Err(LineError::Plan(format!(
            "faces without a motor: {}; one may be missing at most",
            missing.iter().map(|f| f.letter()).collect::<String>()
        )));
    }
    let gone = missing[0];
    // A rotation symmetry that takes U to the missing face relabels the identity.
    let sym = super::planner::Symmetry::all(false)
        .into_iter()
        .find(|s| s.map_back(&Alg::parse("U").expect("U")).moves()[0].kind == MoveKind::Face(gone))
        .expect("some rotation takes U anywhere");
    let quarter = sym.map_back(&Alg::parse(U_WITHOUT_U).expect("constant parses"));
    let mut out = Vec::new();
    for &m in alg.moves() {
        if m.kind == MoveKind::Face(gone) {
            let rep = match m.turn {
                Turn::Cw => quarter.clone(),
                Turn::Ccw => quarter.inverse(),
                Turn::Half => quarter.then(&quarter),
            };
            out.extend_from_slice(rep.moves());
        } else {
            out.push(m);
        }
    }
    Ok(Alg::from_moves(out).simplified())
}

/// Formats a step as a `MOVE` token (`R`, `U+D'`).
pub fn token(step: &[Move]) -> String {
    step.iter()
        .map(|m| m.to_string())
        .collect::<Vec<_>>()
        .join("+")
}

/// Reads a `MOVE` token.
pub fn parse_token(tok: &str) -> Option<Vec<Move>> {
    let mut out = Vec::new();
    for part in tok.split('+') {
        let alg = Alg::parse(part).ok()?;
        if alg.len() != 1 || !matches!(alg.moves()[0].kind, MoveKind::Face(_)) {
            return None;
        }
        out.push(alg.moves()[0]);
    }
    (!out.is_empty() && out.len() <= 2).then_some(out)
}

/// A byte link that delivers lines: a tty (serial port, pty) or anything in memory.
pub trait LineLink: Send {
    fn send_line(&mut self, line: &str) -> std::io::Result<()>;
    /// The next line without its terminator, or `None` if none arrived within `timeout`.
    fn recv_line(&mut self, timeout: Duration) -> std::io::Result<Option<String>>;
}

/// A tty (USB serial of an Arduino, a pty of the simulator) in raw mode.
pub struct TtyLink {
    fd: OwnedFd,
    buf: Vec<u8>,
}

impl TtyLink {
    /// Opens a tty path read-write in raw mode (baud left as it is when `baud` is `None`).
    pub fn open(path: &Path, baud: Option<u32>) -> Result<TtyLink, LineError> {
        use nix::fcntl::{open, OFlag};
        use nix::sys::stat::Mode;
        use nix::sys::termios;
        let err = |e: nix::Error| LineError::Open {
            path: path.to_path_buf(),
            reason: e.desc().to_string(),
        };
        let raw = open(
            path,
            OFlag::O_RDWR | OFlag::O_NOCTTY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(err)?;
        // SAFETY: `open` returned a fresh descriptor that nothing else owns.
        let fd = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(raw) };
        let mut t = termios::tcgetattr(fd.as_fd()).map_err(|e| LineError::Open {
            path: path.to_path_buf(),
            reason: format!("not a tty ({})", e.desc()),
        })?;
        termios::cfmakeraw(&mut t);
        if let Some(b) = baud {
            let rate = match b {
                9600 => termios::BaudRate::B9600,
                19200 => termios::BaudRate::B19200,
                38400 => termios::BaudRate::B38400,
                57600 => termios::BaudRate::B57600,
                115200 => termios::BaudRate::B115200,
                230400 => termios::BaudRate::B230400,
                other => {
                    return Err(LineError::Open {
                        path: path.to_path_buf(),
                        reason: format!("unsupported baud rate {other}"),
                    })
                }
            };
            termios::cfsetspeed(&mut t, rate).map_err(err)?;
        }
        termios::tcsetattr(fd.as_fd(), termios::SetArg::TCSANOW, &t).map_err(err)?;
        Ok(TtyLink {
            fd,
            buf: Vec::new(),
        })
    }
}

fn take_line(buf: &mut Vec<u8>) -> Option<String> {
    let pos = buf.iter().position(|&b| b == b'\n')?;
    let line: Vec<u8> = buf.drain(..=pos).collect();
    let s = String::from_utf8_lossy(&line[..line.len() - 1]);
    Some(s.trim_end_matches('\r').to_string())
}

impl LineLink for TtyLink {
    fn send_line(&mut self, line: &str) -> std::io::Result<()> {
        let mut f = std::fs::File::from(self.fd.try_clone()?);
        f.write_all(line.as_bytes())?;
        f.write_all(b"\n")?;
        f.flush()
    }

    fn recv_line(&mut self, timeout: Duration) -> std::io::Result<Option<String>> {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(l) = take_line(&mut self.buf) {
                return Ok(Some(l));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            let ms = PollTimeout::try_from(left.as_millis().clamp(1, 60_000) as u32)
                .unwrap_or(PollTimeout::MAX);
            let mut fds = [PollFd::new(self.fd.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, ms) {
                Ok(0) => continue,
                Ok(_) => {}
                Err(nix::Error::EINTR) => continue,
                Err(e) => return Err(e.into()),
            }
            let revents = fds[0].revents().unwrap_or(PollFlags::empty());
            if revents.contains(PollFlags::POLLIN) {
                let mut chunk = [0u8; 512];
                match nix::unistd::read(self.fd.as_raw_fd(), &mut chunk) {
                    Ok(0) => {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::UnexpectedEof,
                            "the link closed",
                        ))
                    }
                    Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                    Err(nix::Error::EAGAIN) | Err(nix::Error::EINTR) => {}
                    Err(e) => return Err(e.into()),
                }
            } else if revents.intersects(PollFlags::POLLHUP | PollFlags::POLLERR) {
                // A pty whose other side is gone: nothing will come; wait out the timeout
                // so a silent robot and a vanished one look alike to the caller.
                std::thread::sleep(left.min(Duration::from_millis(20)));
            }
        }
    }
}

/// A link made of two in-memory queues (for unit tests of the host side).
#[derive(Default)]
pub struct MemoryLink {
    pub sent: Vec<String>,
    pub replies: std::collections::VecDeque<String>,
}

impl LineLink for MemoryLink {
    fn send_line(&mut self, line: &str) -> std::io::Result<()> {
        self.sent.push(line.to_string());
        Ok(())
    }

    fn recv_line(&mut self, _timeout: Duration) -> std::io::Result<Option<String>> {
        Ok(self.replies.pop_front())
    }
}

/// Host-side timing.
#[derive(Clone, Debug)]
pub struct LineTimeouts {
    /// How long to wait for `ACK` before resending (same seq).
    pub ack: Duration,
    /// Resends before the robot counts as silent.
    pub retries: u32,
    /// Extra wall time allowed beyond a command's expected duration.
    pub slack: Duration,
}

impl Default for LineTimeouts {
    fn default() -> Self {
        LineTimeouts {
            ack: Duration::from_millis(700),
            retries: 3,
            slack: Duration::from_secs(3),
        }
    }
}

/// The host side of a line-protocol robot.
pub struct LineRobot {
    link: Box<dyn LineLink>,
    seq: u16,
    caps: LineCaps,
    pub timeouts: LineTimeouts,
    /// Divides expected durations (a simulator running faster than real time).
    pub time_scale: f64,
}

impl fmt::Debug for LineRobot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LineRobot")
            .field("seq", &self.seq)
            .field("caps", &self.caps)
            .finish()
    }
}

impl LineRobot {
    /// Asks for the capabilities; fails if the robot does not answer in protocol 1.
    pub fn connect(
        link: Box<dyn LineLink>,
        timeouts: LineTimeouts,
    ) -> Result<LineRobot, LineError> {
        let mut r = LineRobot {
            link,
            seq: 0,
            caps: LineCaps {
                proto: 1,
                name: String::new(),
                faces: Face::ALL.to_vec(),
                parallel: false,
                quarter_ms: 1,
                half_ms: 1,
                speed: 100,
                state: false,
                scan: None,
                size: 3,
            },
            timeouts,
            time_scale: 1.0,
        };
        let words = r.command("CAPS", Duration::ZERO, &mut |_, _| {})?;
        r.caps = LineCaps::parse(&words).map_err(|reason| LineError::Protocol {
            command: "CAPS".into(),
            line: words.clone(),
            reason,
        })?;
        Ok(r)
    }

    pub fn caps(&self) -> &LineCaps {
        &self.caps
    }

    pub fn home(&mut self) -> Result<(), LineError> {
        self.command("HOME", Duration::from_secs(5), &mut |_, _| {})
            .map(|_| ())
    }

    pub fn set_speed(&mut self, pct: u32) -> Result<(), LineError> {
        self.command(&format!("SPEED {pct}"), Duration::ZERO, &mut |_, _| {})?;
        self.caps.speed = pct.clamp(1, 100);
        Ok(())
    }

    pub fn stop(&mut self) -> Result<(), LineError> {
        self.command("STOP", Duration::ZERO, &mut |_, _| {})
            .map(|_| ())
    }

    /// The robot's own idea of its cube (simulators): a facelet string.
    pub fn state(&mut self) -> Result<String, LineError> {
        let words = self.command("STATE", Duration::ZERO, &mut |_, _| {})?;
        words
            .split_whitespace()
            .find_map(|w| w.strip_prefix("state="))
            .map(str::to_string)
            .ok_or(LineError::Protocol {
                command: "STATE".into(),
                line: words.clone(),
                reason: "no state=".into(),
            })
    }

    /// Reads stickers (all in URFDLB order when `stickers` is empty).
    pub fn scan(&mut self, stickers: &[usize]) -> Result<Vec<[f64; 3]>, LineError> {
        let mut cmd = String::from("SCAN");
        for s in stickers {
            cmd.push_str(&format!(" {s}"));
        }
        let words = self.command(&cmd, Duration::from_secs(10), &mut |_, _| {})?;
        let bad = |reason: String| LineError::Protocol {
            command: "SCAN".into(),
            line: words.clone(),
            reason,
        };
        let list = words
            .split_whitespace()
            .find_map(|w| w.strip_prefix("scan="))
            .ok_or_else(|| bad("no scan=".into()))?;
        let mut out = Vec::new();
        for triple in list.split(';').filter(|t| !t.is_empty()) {
            let v: Vec<f64> = triple
                .split(',')
                .map(|x| x.parse::<f64>())
                .collect::<Result<_, _>>()
                .map_err(|_| bad(format!("{triple:?} is not r,g,b")))?;
            let [r, g, b] = v[..] else {
                return Err(bad(format!("{triple:?} is not r,g,b")));
            };
            if !(r.is_finite() && g.is_finite() && b.is_finite()) || r < 0.0 || g < 0.0 || b < 0.0 {
                return Err(bad(format!("{triple:?} is not a reading")));
            }
            out.push([r, g, b]);
        }
        let want = if stickers.is_empty() {
            6 * (self.caps.size as usize).pow(2)
        } else {
            stickers.len()
        };
        if out.len() != want {
            return Err(bad(format!("{} readings, expected {want}", out.len())));
        }
        Ok(out)
    }

    /// Executes steps in one `MOVE` line; `done(i, step)` is called as each finishes.
    pub fn execute(
        &mut self,
        steps: &[Vec<Move>],
        done: &mut dyn FnMut(usize, &[Move]),
    ) -> Result<(), LineError> {
        if steps.is_empty() {
            return Ok(());
        }
        let line = format!(
            "MOVE {}",
            steps.iter().map(|s| token(s)).collect::<Vec<_>>().join(" ")
        );
        let expected =
            Duration::from_secs_f64(self.caps.seconds(steps) / self.time_scale.max(1e-6));
        let mut cb = |i: usize, tok: &str| {
            if let Some(step) = steps.get(i) {
                if token(step) == tok {
                    done(i, step);
                }
            }
        };
        self.command(&line, expected, &mut cb).map(|_| ())
    }

    /// Sends one command (with retries of the same seq) and waits for its result.
    fn command(
        &mut self,
        cmd: &str,
        expected: Duration,
        on_done: &mut dyn FnMut(usize, &str),
    ) -> Result<String, LineError> {
        self.seq = if self.seq == u16::MAX {
            1
        } else {
            self.seq + 1
        };
        let seq = self.seq;
        let line = format!("{seq} {cmd}");
        let verb = cmd.split_whitespace().next().unwrap_or("").to_string();
        let io = |e: std::io::Error| LineError::Io {
            command: verb.clone(),
            reason: e.to_string(),
        };
        let mut acked = false;
        let mut sent = 0u32;
        let mut reported = std::collections::BTreeSet::new();
        let started = Instant::now();
        'send: loop {
            self.link.send_line(&line).map_err(io)?;
            sent += 1;
            let ack_deadline = Instant::now() + self.timeouts.ack;
            loop {
                let deadline = if acked {
                    started + expected + self.timeouts.slack
                } else {
                    ack_deadline
                };
                let left = deadline.saturating_duration_since(Instant::now());
                let got = if left.is_zero() {
                    None
                } else {
                    self.link.recv_line(left).map_err(io)?
                };
                let Some(reply) = got else {
                    if !acked && sent <= self.timeouts.retries {
                        continue 'send;
                    }
                    return Err(LineError::Timeout {
                        seq,
                        command: verb.clone(),
                        waited_ms: started.elapsed().as_millis() as u64,
                    });
                };
                let reply = reply.trim();
                if reply.is_empty() || reply.starts_with('#') || reply.starts_with('!') {
                    continue;
                }
                let mut words = reply.splitn(3, ' ');
                let rseq = words.next().and_then(|s| s.parse::<u16>().ok());
                let kind = words.next().unwrap_or("");
                let rest = words.next().unwrap_or("").to_string();
                if rseq != Some(seq) {
                    // A late reply to an earlier command: not ours.
                    continue;
                }
                let protocol = |reason: &str| LineError::Protocol {
                    command: verb.clone(),
                    line: reply.to_string(),
                    reason: reason.to_string(),
                };
                match kind {
                    "ACK" => {
                        acked = true;
                    }
                    "DONE" => {
                        acked = true;
                        let mut it = rest.split_whitespace();
                        let i = it
                            .next()
                            .and_then(|s| s.parse::<usize>().ok())
                            .ok_or_else(|| protocol("DONE without an index"))?;
                        let tok = it.next().unwrap_or("");
                        // A replayed reply repeats DONE lines: report each once.
                        if reported.insert(i) {
                            on_done(i, tok);
                        }
                    }
                    "OK" => return Ok(rest),
                    "ERR" => {
                        let (code, text) = rest.split_once(' ').unwrap_or((rest.as_str(), ""));
                        return Err(LineError::Robot {
                            seq,
                            command: verb.clone(),
                            code: code.to_string(),
                            text: text.to_string(),
                        });
                    }
                    _ => return Err(protocol("expected ACK, DONE, OK or ERR")),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::{random_moves, random_state, Size};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn caps(parallel: bool, faces: &str) -> LineCaps {
        LineCaps::parse(&format!(
            "proto=1 name=t faces={faces} parallel={} quarter_ms=200 half_ms=320 speed=100 state=1",
            u8::from(parallel)
        ))
        .unwrap()
    }

    #[test]
    fn five_face_substitution_is_exact() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for gone in Face::ALL {
            let faces: Vec<Face> = Face::ALL.into_iter().filter(|&f| f != gone).collect();
            let alg = random_moves(Size::Three, 25, &mut rng);
            let sub = substitute_missing(&alg, &faces).unwrap();
            assert!(sub.moves().iter().all(|m| m.kind != MoveKind::Face(gone)));
            let cube = random_state(Size::Three, &mut rng);
            let (mut a, mut b) = (cube.clone(), cube.clone());
            a.apply(&alg).unwrap();
            b.apply(&sub).unwrap();
            assert_eq!(a, b, "without {gone}");
        }
        assert!(substitute_missing(
            &Alg::parse("R").unwrap(),
            &[Face::U, Face::R, Face::F, Face::D]
        )
        .is_err());
    }

    #[test]
    fn parallel_steps_and_costs() {
        let alg = Alg::parse("U D' R2 L F B2 F").unwrap();
        let c = caps(true, "URFDLB");
        let steps = c.steps(&alg).unwrap();
        let toks: Vec<String> = steps.iter().map(|s| token(s)).collect();
        assert_eq!(toks, vec!["U+D'", "R2+L", "F+B2", "F"]);
        assert!((c.seconds(&steps) - (0.2 + 0.32 + 0.32 + 0.2)).abs() < 1e-9);
        let serial = caps(false, "URFDLB");
        let steps = serial.steps(&alg).unwrap();
        assert_eq!(steps.len(), 7);
        for t in &toks {
            assert_eq!(&token(&parse_token(t).unwrap()), t);
        }
        assert!(parse_token("x").is_none());
        assert!(parse_token("R+U+F").is_none());
    }

    #[test]
    fn caps_are_checked() {
        assert!(LineCaps::parse("proto=2 faces=URFDLB quarter_ms=1 half_ms=1").is_err());
        assert!(LineCaps::parse("proto=1 faces=URFD quarter_ms=1 half_ms=1").is_err());
        assert!(LineCaps::parse("proto=1 faces=URFDLB quarter_ms=x half_ms=1").is_err());
        let c = caps(true, "URFDL");
        assert_eq!(LineCaps::parse(&c.to_words()).unwrap(), c);
    }

    #[test]
    fn host_retries_and_reports_errors() {
        let mut link = MemoryLink::default();
        link.replies.extend(
            [
                "# banner",
                "1 ACK",
                "1 OK proto=1 name=m faces=URFDLB parallel=0 quarter_ms=10 half_ms=20 speed=100 state=0",
                "2 ACK",
                "2 DONE 0 R",
                "2 ERR STALL motor R did not reach its position",
            ]
            .map(String::from),
        );
        let mut r = LineRobot::connect(Box::new(link), LineTimeouts::default()).unwrap();
        assert_eq!(r.caps().name, "m");
        let mut done = Vec::new();
        let e = r
            .execute(
                &[
                    vec![Move::face(Face::R, Turn::Cw)],
                    vec![Move::face(Face::U, Turn::Cw)],
                ],
                &mut |i, _| done.push(i),
            )
            .unwrap_err();
        assert_eq!(done, vec![0]);
        assert!(
            matches!(e, LineError::Robot { ref code, .. } if code == "STALL"),
            "{e}"
        );
    }
}
