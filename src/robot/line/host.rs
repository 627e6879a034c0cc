//! The host side of a line-protocol robot ([`super::protocol`]): lines over a byte link,
//! numbered commands with acknowledgements, resends of the same sequence number, per-token
//! progress and typed errors.
//!
//! A port that fails (closed under the host: a USB adapter unplugged and plugged back, a
//! board that resets) is reopened, at most three times per command, and the command is sent
//! again with the same sequence number, so a robot that had run it replays its replies
//! instead of running it twice.
//!
//! With a stop flag set ([`LineRobot::interrupt`], Ctrl-C) while a `MOVE` runs, the host
//! sends `STOP` (the robot ends the line after its current token with `ERR STOPPED`, its
//! `DONE` lines saying what was made) and waits for that end at most a second; every other
//! command waits for its reply as usual.
//!
//! Level: robot (depends on `cube`, [`crate::robot::link`] and [`super::protocol`]).
//! No printing.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::error::LineError;
use super::protocol::{token, LineCaps};
use crate::cube::{Face, Move};
use crate::robot::link::{Link, LinkError};

/// Longest line accepted from a robot, in bytes (the longest reply, a 2x2x2's or 3x3x3's
/// `SCAN` readings, is well under 2 KiB): a longer one is refused, not buffered.
pub const MAX_LINE: usize = 4096;

/// Reopenings of a failed port per command.
const LINK_REOPENS: u32 = 3;

/// How many bytes of a stray or overlong input an error quotes.
const QUOTED: usize = 32;

/// Line framing on top of a byte link: writes a line and its `\n`, reads up to the next
/// `\n` (a `\r` before it is dropped). A line longer than [`MAX_LINE`] is refused and the
/// rest of it skipped up to its `\n` without being stored.
pub struct LineLink {
    link: Box<dyn Link>,
    buf: Vec<u8>,
    /// Inside an overlong line: drop bytes up to the next `\n`.
    skipping: bool,
    /// The last line returned, as received.
    last: Vec<u8>,
    /// Told every line sent (`> ...`) and received (`< ...`), when set (`-vv`).
    log: Option<fn(&str)>,
}

/// What [`LineLink::recv_line`] can fail with besides the link itself.
#[derive(Debug)]
pub enum RecvError {
    Link(LinkError),
    /// A line longer than [`MAX_LINE`]; its first bytes.
    Overlong(Vec<u8>),
}

impl From<LinkError> for RecvError {
    fn from(e: LinkError) -> RecvError {
        RecvError::Link(e)
    }
}

/// The first 32 bytes of `bytes`, escaped for a message.
pub fn quote(bytes: &[u8]) -> String {
    let head = &bytes[..bytes.len().min(QUOTED)];
    let more = if bytes.len() > QUOTED { "..." } else { "" };
    format!("{}{more}", head.escape_ascii())
}

/// The next line of `buf` as raw bytes, without its `\n` (and a `\r` before it).
fn take_line(buf: &mut Vec<u8>) -> Option<Vec<u8>> {
    let pos = buf.iter().position(|&b| b == b'\n')?;
    let mut line: Vec<u8> = buf.drain(..=pos).collect();
    line.pop();
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Some(line)
}

impl LineLink {
    pub fn new(link: Box<dyn Link>) -> LineLink {
        LineLink {
            link,
            buf: Vec::new(),
            skipping: false,
            last: Vec::new(),
            log: None,
        }
    }

    /// The bytes of the last line [`LineLink::recv_line`] returned, as received.
    pub fn last_raw(&self) -> &[u8] {
        &self.last
    }

    /// Bytes received that do not yet end a line.
    pub fn pending(&self) -> &[u8] {
        &self.buf
    }

    /// Closes and reopens the port, dropping what was buffered.
    pub fn reopen(&mut self) -> Result<(), LinkError> {
        self.buf.clear();
        self.skipping = false;
        self.link.reopen()
    }

    pub fn send_line(&mut self, line: &str) -> Result<(), LinkError> {
        if let Some(log) = self.log {
            log(&format!("line > {line}"));
        }
        self.link.write_all(line.as_bytes())?;
        self.link.write_all(b"\n")
    }

    /// The next line without its terminator, or `None` if none arrived within `timeout`.
    /// A line longer than [`MAX_LINE`] is an error as soon as that many bytes have come
    /// without a `\n`.
    pub fn recv_line(&mut self, timeout: Duration) -> Result<Option<String>, RecvError> {
        let deadline = Instant::now() + timeout;
        let mut chunk = [0u8; 512];
        loop {
            if self.skipping {
                match self.buf.iter().position(|&b| b == b'\n') {
                    Some(pos) => {
                        self.buf.drain(..=pos);
                        self.skipping = false;
                    }
                    None => self.buf.clear(),
                }
            }
            if !self.skipping {
                if let Some(l) = take_line(&mut self.buf) {
                    let s = String::from_utf8_lossy(&l).into_owned();
                    if let Some(log) = self.log {
                        log(&format!("line < {}", l.escape_ascii()));
                    }
                    self.last = l;
                    return Ok(Some(s));
                }
                if self.buf.len() > MAX_LINE {
                    let start = self.buf[..QUOTED.min(self.buf.len())].to_vec();
                    self.buf.clear();
                    self.skipping = true;
                    return Err(RecvError::Overlong(start));
                }
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            match self.link.read(&mut chunk, deadline)? {
                0 => return Ok(None),
                n => self.buf.extend_from_slice(&chunk[..n]),
            }
        }
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
    link: LineLink,
    seq: u16,
    caps: LineCaps,
    pub timeouts: LineTimeouts,
    /// Divides expected durations (a simulator running faster than real time).
    pub time_scale: f64,
    /// Set (Ctrl-C) to stop a `MOVE` after its current token.
    pub interrupt: Option<Arc<AtomicBool>>,
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
    pub fn connect(link: Box<dyn Link>, timeouts: LineTimeouts) -> Result<LineRobot, LineError> {
        Self::connect_logged(link, timeouts, None)
    }

    /// [`LineRobot::connect`], telling `log` every line sent and received from the first.
    pub fn connect_logged(
        link: Box<dyn Link>,
        timeouts: LineTimeouts,
        log: Option<fn(&str)>,
    ) -> Result<LineRobot, LineError> {
        let mut link = LineLink::new(link);
        link.log = log;
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
            interrupt: None,
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
        let mut reported = vec![false; steps.len()];
        let mut cb = |i: usize, tok: &str| {
            if let Some(step) = steps.get(i) {
                if token(step) == tok && !reported[i] {
                    reported[i] = true;
                    done(i, step);
                }
            }
        };
        self.command(&line, expected, &mut cb)?;
        // `OK` means every token was made: one whose DONE line was lost or garbled too.
        for (i, step) in steps.iter().enumerate() {
            if !reported[i] {
                done(i, step);
            }
        }
        Ok(())
    }

    fn next_seq(&mut self) -> u16 {
        self.seq = if self.seq == u16::MAX {
            1
        } else {
            self.seq + 1
        };
        self.seq
    }

    fn interrupted(&self) -> bool {
        self.interrupt
            .as_ref()
            .is_some_and(|f| f.load(Ordering::SeqCst))
    }

    /// Sends one command (with retries of the same seq) and waits for its result.
    fn command(
        &mut self,
        cmd: &str,
        expected: Duration,
        on_done: &mut dyn FnMut(usize, &str),
    ) -> Result<String, LineError> {
        let seq = self.next_seq();
        let mut reopened = 0;
        loop {
            match self.exchange(seq, cmd, expected, on_done) {
                // The port failed (unplugged, reset): reopen it and send the same sequence
                // number again; a robot that already ran the command replays its replies.
                Err(LineError::Link { .. }) if reopened < LINK_REOPENS => {
                    reopened += 1;
                    std::thread::sleep(Duration::from_millis(200 * reopened as u64));
                    let _ = self.link.reopen();
                }
                other => return other,
            }
        }
    }

    /// One command's exchange under sequence number `seq`.
    fn exchange(
        &mut self,
        seq: u16,
        cmd: &str,
        expected: Duration,
        on_done: &mut dyn FnMut(usize, &str),
    ) -> Result<String, LineError> {
        let line = format!("{seq} {cmd}");
        let verb = cmd.split_whitespace().next().unwrap_or("").to_string();
        let io = |source: LinkError| LineError::Link {
            command: verb.clone(),
            source,
        };
        let recv_err = |e: RecvError| match e {
            RecvError::Link(source) => io(source),
            RecvError::Overlong(start) => LineError::Overlong {
                command: verb.clone(),
                limit: MAX_LINE,
                start: quote(&start),
            },
        };
        // Input that is not the protocol: how many bytes, and the first of them.
        let mut stray_bytes = 0usize;
        let mut stray: Vec<u8> = Vec::new();
        let mut acked = false;
        let mut sent = 0u32;
        let mut reported = std::collections::BTreeSet::new();
        let started = Instant::now();
        let stoppable = verb == "MOVE";
        let mut stop_sent: Option<Instant> = None;
        'send: loop {
            self.link.send_line(&line).map_err(io)?;
            sent += 1;
            let ack_deadline = Instant::now() + self.timeouts.ack;
            loop {
                if stoppable && stop_sent.is_none() && self.interrupted() {
                    let stop_seq = self.next_seq();
                    self.link
                        .send_line(&format!("{stop_seq} STOP"))
                        .map_err(io)?;
                    stop_sent = Some(Instant::now());
                }
                let mut deadline = if acked {
                    started + expected + self.timeouts.slack
                } else {
                    ack_deadline
                };
                if let Some(at) = stop_sent {
                    deadline = deadline.min(at + Duration::from_secs(1));
                }
                let left = deadline.saturating_duration_since(Instant::now());
                // Short waits, so a stop flag is seen soon.
                let slice = if stoppable && stop_sent.is_none() {
                    left.min(Duration::from_millis(50))
                } else {
                    left
                };
                let got = if left.is_zero() {
                    None
                } else {
                    self.link.recv_line(slice).map_err(recv_err)?
                };
                if got.is_none() && Instant::now() < deadline {
                    continue;
                }
                if got.is_none() && stop_sent.is_some() {
                    return Err(LineError::Stopped {
                        seq,
                        command: verb.clone(),
                    });
                }
                let Some(reply) = got else {
                    if !acked && sent <= self.timeouts.retries {
                        continue 'send;
                    }
                    let pending = self.link.pending();
                    if stray_bytes + pending.len() > 0 {
                        if stray.len() < QUOTED {
                            stray.extend_from_slice(pending);
                        }
                        return Err(LineError::Garbage {
                            seq,
                            command: verb.clone(),
                            waited_ms: started.elapsed().as_millis() as u64,
                            bytes: stray_bytes + pending.len(),
                            start: quote(&stray),
                        });
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
                if rseq.is_none() {
                    // Not a protocol line (noise, another baud rate, another device).
                    let raw = self.link.last_raw();
                    stray_bytes += raw.len() + 1;
                    if stray.len() < QUOTED {
                        stray.extend_from_slice(raw);
                        stray.push(b'\n');
                    }
                    continue;
                }
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
    use crate::cube::Turn;
    use crate::robot::link::MemoryLink;

    #[test]
    fn host_retries_and_reports_errors() {
        let mut link = MemoryLink::default();
        for line in [
                "# banner",
                "1 ACK",
                "1 OK proto=1 name=m faces=URFDLB parallel=0 quarter_ms=10 half_ms=20 speed=100 state=0",
                "2 ACK",
                "2 DONE 0 R",
                "2 ERR STALL motor R did not reach its position",
        ] {
            link.queue(format!("{line}\n").as_bytes());
        }
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
