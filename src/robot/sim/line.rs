//! A simulated line-protocol robot (one motor per face, or five) on a pseudo-terminal: a
//! peer of the shared [`PtyServer`] that speaks [`crate::robot::line::protocol`], turns a
//! virtual cube, keeps a simulated clock, and can inject faults.
//!
//! Level: robot (simulators; uses `cube`, `color::synth` and the line protocol). Must not
//! depend on the line robot's host. No printing.
//!
//! Simulated time runs `speed` times faster than wall time; robot time is reported in
//! simulated seconds ([`LineSimHandle::clock`]).
//!
//! Faults (`--faults` for `--robot line`): a comma list of `KIND[@N]`:
//! * `drop@N` — the replies to the N-th command are lost (the command is executed; a host
//!   that resends the same sequence number gets them replayed);
//! * `stall@N` — the N-th face-turn step does not happen and its `MOVE` answers
//!   `ERR STALL` (once);
//! * `silent@N` — from the N-th face-turn step on the robot answers nothing (a dead
//!   battery: the step is not made);
//! * `latency=MS` — every reply arrives MS simulated milliseconds late;
//! * `jitter=MS` — every reply's delay moves by a seeded draw in ±MS (never below zero,
//!   never overtaking the reply before it, as on a serial line);
//! * `dropout@N=MS` — when command N arrives the link drops out for MS: command N runs,
//!   but every reply and every line the host sends meanwhile is lost;
//! * `corrupt@N` — one byte of the replies to command N (a seeded byte of a seeded one of
//!   its first three reply lines) is replaced by a seeded other byte;
//! * `misread[=A:B]` — until the first face turn, `SCAN` reports stickers A and B (indices
//!   or names such as `U3` of the starting cube; a seeded pair without a value) as each
//!   other ([`super::misread`]).
//!
//! Without `@N`, N = 1. Commands count from 1, resends of the same sequence number not
//! included.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::color::raw::Scale;
use crate::color::synth::{Appearance, Conditions, Palette};
use crate::cube::{random_state, Alg, Face, FaceletCube, Move, Size};
use crate::robot::line::protocol::{parse_token, token, LineCaps};
use crate::robot::sim::misread::{Misread, MisreadSensor};
use crate::robot::sim::pty::{Peer, PtyError, PtyServer};

#[derive(Debug, thiserror::Error)]
pub enum LineSimError {
    #[error(transparent)]
    Pty(#[from] PtyError),
    #[error("bad fault {spec:?}: {reason}")]
    Fault { spec: String, reason: String },
    #[error("bad fault: {0}")]
    Misread(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineFaultKind {
    Drop,
    Stall,
    Silent,
    Latency,
    Jitter,
    Dropout,
    Corrupt,
    /// Two stickers read as each other until a face turns (the stickers are in
    /// [`LineFault::misread`]).
    Misread,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineFault {
    pub kind: LineFaultKind,
    pub at: u32,
    /// Simulated milliseconds (`latency`, `jitter`, `dropout`).
    pub ms: u32,
    /// The two stickers of a `misread`.
    pub misread: Option<Misread>,
}

/// The faults the line robot's simulator takes, by name.
const LINE_FAULTS: [&str; 8] = [
    "drop", "stall", "silent", "latency", "jitter", "dropout", "corrupt", "misread",
];

/// The line robot's faults, for messages.
const LINE_FAULT_LIST: &str =
    "drop@N, stall@N, silent@N, latency=MS, jitter=MS, dropout@N=MS, corrupt@N, misread[=A:B]";

/// The faults only the simulated MindCub3r takes (its brick, ports and mechanics).
const MINDCUB3R_FAULTS: [&str; 13] = [
    "wrong-device",
    "swap",
    "unplugged",
    "reversed",
    "jammed",
    "free",
    "battery",
    "covered",
    "empty",
    "short-turn",
    "overshoot",
    "tilt-fail",
    "slip",
];

/// Parses a fault list (`drop@2,stall@5,latency=40,dropout@9=500,corrupt@12`).
pub fn parse_faults(spec: &str) -> Result<Vec<LineFault>, LineSimError> {
    let mut out = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = |reason: String| LineSimError::Fault {
            spec: part.into(),
            reason,
        };
        if let Some(rest) = part.strip_prefix("misread") {
            if rest.is_empty() || rest.starts_with('=') {
                out.push(LineFault {
                    kind: LineFaultKind::Misread,
                    at: 1,
                    ms: 0,
                    misread: Some(Misread::parse(rest.strip_prefix('=')).map_err(bad)?),
                });
                continue;
            }
        }
        // The fault's name first: a MindCub3r fault or a typo is named as such, before its
        // value is read as a line fault's.
        let name = part.split(['=', '@']).next().unwrap_or("").trim();
        if !LINE_FAULTS.contains(&name) {
            return Err(bad(if MINDCUB3R_FAULTS.contains(&name) {
                format!("{name} is a MindCub3r fault; the line robot takes {LINE_FAULT_LIST}")
            } else {
                format!("unknown fault {name:?} (the line robot takes {LINE_FAULT_LIST})")
            }));
        }
        let (head, ms) = match part.split_once('=') {
            Some((h, v)) => (
                h,
                Some(
                    v.parse::<u32>()
                        .map_err(|_| bad(format!("{v:?} is not a whole number of ms")))?,
                ),
            ),
            None => (part, None),
        };
        let (kind, at) = match head.split_once('@') {
            Some((k, n)) => (
                k,
                Some(
                    n.parse::<u32>()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| bad(format!("{n:?} is not a positive count")))?,
                ),
            ),
            None => (head, None),
        };
        let kind = match kind {
            "drop" => LineFaultKind::Drop,
            "stall" => LineFaultKind::Stall,
            "silent" => LineFaultKind::Silent,
            "latency" => LineFaultKind::Latency,
            "jitter" => LineFaultKind::Jitter,
            "dropout" => LineFaultKind::Dropout,
            "corrupt" => LineFaultKind::Corrupt,
            other => {
                return Err(bad(format!(
                    "unknown kind {other:?} (drop, stall, silent, latency=MS, jitter=MS, dropout@N=MS, corrupt@N, misread[=A:B])"
                )))
            }
        };
        let timed = matches!(
            kind,
            LineFaultKind::Latency | LineFaultKind::Jitter | LineFaultKind::Dropout
        );
        match (timed, ms) {
            (true, None) => return Err(bad("needs =MS".into())),
            (false, Some(_)) => return Err(bad("takes no =MS".into())),
            _ => {}
        }
        if matches!(kind, LineFaultKind::Latency | LineFaultKind::Jitter) && at.is_some() {
            return Err(bad("applies to every reply: no @N".into()));
        }
        out.push(LineFault {
            kind,
            at: at.unwrap_or(1),
            ms: ms.unwrap_or(0),
            misread: None,
        });
    }
    Ok(out)
}

/// How the simulated robot is built and behaves.
#[derive(Clone, Debug)]
pub struct LineSimConfig {
    pub seed: u64,
    /// Simulated seconds per wall second.
    pub speed: f64,
    pub caps: LineCaps,
    pub faults: Vec<LineFault>,
    /// The cube it holds; a seeded random one of `size` when `None`.
    pub start: Option<FaceletCube>,
    pub size: Size,
    /// The cube's stickers as its colour sensors see them.
    pub palette: Palette,
}

impl Default for LineSimConfig {
    fn default() -> Self {
        LineSimConfig {
            seed: 1,
            speed: 1.0,
            caps: LineCaps {
                proto: 1,
                name: "cubot-line-sim".into(),
                faces: Face::ALL.to_vec(),
                parallel: true,
                quarter_ms: 180,
                half_ms: 300,
                speed: 100,
                state: true,
                scan: Some(Scale::Rgb8),
                size: 3,
            },
            faults: Vec::new(),
            start: None,
            size: Size::Three,
            palette: Palette::Standard,
        }
    }
}

struct Shared {
    /// Whether a step is turning now.
    turning: bool,
    cube: FaceletCube,
    /// Which physical sticker is at each facelet (for stable wear across re-reads).
    ids: Vec<usize>,
    clock: f64,
}

/// A running simulated line robot; stops when dropped.
pub struct LineSimHandle {
    server: PtyServer,
    initial: FaceletCube,
    shared: Arc<Mutex<Shared>>,
}

impl LineSimHandle {
    /// The pty slave path a host opens.
    pub fn path(&self) -> &Path {
        self.server.path()
    }

    /// The cube as it was handed to the robot.
    pub fn initial_cube(&self) -> FaceletCube {
        self.initial.clone()
    }

    /// The cube now.
    pub fn cube(&self) -> FaceletCube {
        self.shared
            .lock()
            .map(|s| s.cube.clone())
            .unwrap_or_else(|p| p.into_inner().cube.clone())
    }

    /// Whether a step is turning now.
    pub fn motors_running(&self) -> bool {
        self.shared
            .lock()
            .map(|s| s.turning)
            .unwrap_or_else(|p| p.into_inner().turning)
    }

    /// Simulated seconds spent turning.
    pub fn clock(&self) -> f64 {
        self.shared
            .lock()
            .map(|s| s.clock)
            .unwrap_or_else(|p| p.into_inner().clock)
    }
}

/// Opens a pty and serves the line protocol on it in a thread.
pub fn spawn_pty(cfg: LineSimConfig) -> Result<LineSimHandle, LineSimError> {
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let initial = cfg
        .start
        .clone()
        .unwrap_or_else(|| random_state(cfg.size, &mut rng));
    let mut cfg = cfg;
    cfg.caps.size = initial.size().n() as u32;
    let misread = match cfg.faults.iter().find_map(|f| f.misread.as_ref()) {
        Some(m) => {
            let pair = m.pair(&initial, cfg.seed).map_err(LineSimError::Misread)?;
            let ids: Vec<usize> = (0..initial.size().stickers()).collect();
            Some(MisreadSensor::new(pair, &ids))
        }
        None => None,
    };
    let shared = Arc::new(Mutex::new(Shared {
        turning: false,
        cube: initial.clone(),
        ids: (0..initial.size().stickers()).collect(),
        clock: 0.0,
    }));
    let appearance = Appearance::new(cfg.palette, Conditions::for_palette(cfg.palette), cfg.seed);
    let speed = cfg.speed;
    let sum = |k: LineFaultKind| {
        cfg.faults
            .iter()
            .filter(|f| f.kind == k)
            .map(|f| f.ms as f64 / 1000.0)
            .sum::<f64>()
    };
    let latency = sum(LineFaultKind::Latency);
    let jitter = sum(LineFaultKind::Jitter);
    let faults_rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x11_4E5E);
    let peer = LinePeer {
        jitter,
        latency,
        last_stamp: f64::NEG_INFINITY,
        link_down_until: f64::NEG_INFINITY,
        corrupt: None,
        faults_rng,
        inbuf: Vec::new(),
        pending: VecDeque::new(),
        speed_pct: cfg.caps.speed,
        cfg,
        shared: shared.clone(),
        homed: false,
        commands: 0,
        steps: 0,
        silent: false,
        last: None,
        appearance,
        rng: ChaCha8Rng::seed_from_u64(cfg_seed_noise(&shared)),
        now: 0.0,
        busy: None,
        outbox: Vec::new(),
        misread,
    };
    let server = PtyServer::spawn("line-sim", peer, speed.max(1e-6), latency)?;
    Ok(LineSimHandle {
        server,
        initial,
        shared,
    })
}

/// Work in progress that ends at a simulated time.
enum Busy {
    /// A `SCAN` whose readings are ready at `until`.
    Scan {
        until: f64,
        seq: u16,
        dropped: bool,
        reply: String,
    },
    /// A `MOVE` whose step `index` ends at `until` (taking `secs`).
    Move {
        until: f64,
        secs: f64,
        seq: u16,
        dropped: bool,
        steps: Vec<Vec<Move>>,
        index: usize,
    },
}

impl Busy {
    fn until(&self) -> f64 {
        match self {
            Busy::Scan { until, .. } | Busy::Move { until, .. } => *until,
        }
    }
}

/// The line robot as a peer of the pty server: lines in, one command at a time, replies
/// out as simulated time passes.
struct LinePeer {
    inbuf: Vec<u8>,
    pending: VecDeque<String>,
    cfg: LineSimConfig,
    shared: Arc<Mutex<Shared>>,
    homed: bool,
    commands: u32,
    steps: u32,
    silent: bool,
    /// Last seq and every reply line it got (replayed on a resend).
    last: Option<(u16, Vec<String>)>,
    speed_pct: u32,
    appearance: Appearance,
    rng: ChaCha8Rng,
    /// Simulated time of what is being handled.
    now: f64,
    busy: Option<Busy>,
    /// Replies written since the last round, with the simulated time they were written.
    outbox: Vec<(f64, Vec<u8>)>,
    /// `jitter=MS` spread and `latency=MS` (simulated seconds), and the last stamp given.
    jitter: f64,
    latency: f64,
    last_stamp: f64,
    /// A `dropout` under way: nothing gets through before this simulated time.
    link_down_until: f64,
    /// `corrupt@N`: the reply line (of the command being handled) still to corrupt.
    corrupt: Option<(u16, usize)>,
    faults_rng: ChaCha8Rng,
    /// The `misread` fault, while it lasts.
    misread: Option<MisreadSensor>,
}

fn cfg_seed_noise(shared: &Arc<Mutex<Shared>>) -> u64 {
    // Per-read noise differs from the appearance's seed but stays reproducible.
    shared
        .lock()
        .map(|s| {
            s.cube.colors().iter().fold(0x9e37_79b9_u64, |h, f| {
                h.wrapping_mul(31).wrapping_add(f.index() as u64)
            })
        })
        .unwrap_or(0)
}

impl Peer for LinePeer {
    fn receive(&mut self, bytes: &[u8]) {
        self.inbuf.extend_from_slice(bytes);
    }

    fn run_until(&mut self, now: f64, out: &mut Vec<(f64, Vec<u8>)>) -> f64 {
        loop {
            match self.busy.take() {
                Some(b) if b.until() > now => {
                    self.busy = Some(b);
                    break;
                }
                Some(b) => {
                    self.now = b.until();
                    self.finish(b);
                }
                None => {
                    let Some(line) = self.pending.pop_front().or_else(|| self.take_line()) else {
                        break;
                    };
                    self.now = now;
                    self.handle(&line);
                }
            }
        }
        out.append(&mut self.outbox);
        let turning = matches!(self.busy, Some(Busy::Move { .. }));
        if let Ok(mut s) = self.shared.lock() {
            s.turning = turning;
        }
        now
    }
}

impl LinePeer {
    /// One complete line from what the host wrote, trimmed.
    fn take_line(&mut self) -> Option<String> {
        let pos = self.inbuf.iter().position(|&b| b == b'\n')?;
        let l: Vec<u8> = self.inbuf.drain(..=pos).collect();
        Some(
            String::from_utf8_lossy(&l[..l.len() - 1])
                .trim()
                .to_string(),
        )
    }

    fn write(&mut self, line: &str) {
        if self.silent || self.now < self.link_down_until {
            return;
        }
        let mut bytes = format!("{line}\n").into_bytes();
        if let Some((seq, left)) = self.corrupt {
            if line.split_whitespace().next() == Some(seq.to_string().as_str()) {
                if left == 0 {
                    let i = self.faults_rng.gen_range(0..bytes.len());
                    let old = bytes[i];
                    bytes[i] = loop {
                        let b: u8 = self.faults_rng.gen();
                        if b != old {
                            break b;
                        }
                    };
                    self.corrupt = None;
                } else {
                    self.corrupt = Some((seq, left - 1));
                }
            }
        }
        let mut stamp = self.now;
        if self.jitter > 0.0 {
            let d: f64 = self.faults_rng.gen_range(-self.jitter..=self.jitter);
            stamp += d.max(-self.latency);
        }
        stamp = stamp.max(self.last_stamp);
        self.last_stamp = stamp;
        self.outbox.push((stamp, bytes));
    }

    /// Sends a reply line for the current command (recorded for replays).
    fn reply(&mut self, seq: u16, text: &str, dropped: bool) {
        let line = format!("{seq} {text}");
        if let Some((s, lines)) = &mut self.last {
            if *s == seq {
                lines.push(line.clone());
            }
        }
        if !dropped {
            self.write(&line);
        }
    }

    /// Ends what `busy` was waiting for.
    fn finish(&mut self, busy: Busy) {
        match busy {
            Busy::Scan {
                seq,
                dropped,
                reply,
                ..
            } => self.reply(seq, &reply, dropped),
            Busy::Move {
                secs,
                seq,
                dropped,
                steps,
                index,
                ..
            } => self.step_made(secs, seq, dropped, steps, index),
        }
    }

    fn handle(&mut self, line: &str) {
        if self.silent || line.is_empty() {
            return;
        }
        let mut words = line.split_whitespace();
        if self.now < self.link_down_until {
            return; // lost in a drop-out
        }
        let Some(seq) = words.next().and_then(|s| s.parse::<u16>().ok()) else {
            self.write(&format!("0 ERR SYNTAX no sequence number in {line:?}"));
            return;
        };
        let verb = words.next().unwrap_or("").to_ascii_uppercase();
        let args: Vec<String> = words.map(str::to_string).collect();
        // A resend of the last command: replay, do not execute again.
        if let Some((s, lines)) = &self.last {
            if *s == seq {
                for l in lines.clone() {
                    self.write(&l);
                }
                return;
            }
        }
        self.commands += 1;
        let n = self.commands;
        if let Some(f) = self
            .cfg
            .faults
            .iter()
            .find(|f| f.kind == LineFaultKind::Dropout && f.at == n)
        {
            // Command N gets through and runs; then the link is down.
            self.link_down_until = self.now + f.ms as f64 / 1000.0;
        }
        if self.fault_at(LineFaultKind::Corrupt, n) {
            let line = self.faults_rng.gen_range(0..3);
            self.corrupt = Some((seq, line));
        }
        let dropped = self
            .cfg
            .faults
            .iter()
            .any(|f| f.kind == LineFaultKind::Drop && f.at == self.commands);
        self.last = Some((seq, Vec::new()));
        self.reply(seq, "ACK", dropped);
        match verb.as_str() {
            "CAPS" => {
                let mut caps = self.cfg.caps.clone();
                caps.speed = self.speed_pct;
                self.reply(seq, &format!("OK {}", caps.to_words()), dropped)
            }
            "HOME" => {
                self.homed = true;
                self.reply(seq, "OK", dropped)
            }
            "SPEED" => match args.first().and_then(|a| a.parse::<u32>().ok()) {
                Some(p) if (1..=100).contains(&p) => {
                    self.speed_pct = p;
                    self.reply(seq, &format!("OK speed={p}"), dropped)
                }
                _ => self.reply(seq, "ERR RANGE speed is 1..100 percent", dropped),
            },
            "STOP" => self.reply(seq, "OK", dropped),
            "STATE" => {
                let s = self
                    .shared
                    .lock()
                    .map(|s| s.cube.to_string())
                    .unwrap_or_default();
                self.reply(seq, &format!("OK state={s}"), dropped)
            }
            "MOVE" => self.moves(seq, &args, dropped),
            "SCAN" => self.scan(seq, &args, dropped),
            other => self.reply(seq, &format!("ERR VERB unknown verb {other:?}"), dropped),
        }
    }

    fn scan(&mut self, seq: u16, args: &[String], dropped: bool) {
        let Some(scale) = self.cfg.caps.scan else {
            return self.reply(seq, "ERR UNSUPPORTED no colour sensors", dropped);
        };
        let got = self
            .shared
            .lock()
            .map(|s| (s.cube.clone(), s.ids.clone()))
            .ok();
        let Some((cube, ids)) = got else {
            return self.reply(seq, "ERR UNSUPPORTED simulator state lost", dropped);
        };
        let n = cube.size().stickers();
        let mut which = Vec::new();
        for a in args {
            match a.parse::<usize>() {
                Ok(i) if i < n => which.push(i),
                _ => return self.reply(seq, &format!("ERR RANGE sticker {a:?} (0..{n})"), dropped),
            }
        }
        if which.is_empty() {
            which = (0..n).collect();
        }
        let three = |i: usize| match cube.size() {
            Size::Three => i,
            Size::Two => (i / 4) * 9 + [0, 2, 6, 8][i % 4],
        };
        let mut parts = Vec::new();
        for &i in &which {
            // Under a `misread` fault another sticker's reading may stand in.
            let src = self.misread.as_ref().map_or(i, |m| m.source(i, &ids));
            let v = self.appearance.reading(
                cube.colors()[src],
                three(ids[src]),
                three(i),
                scale,
                &mut self.rng,
            );
            parts.push(format!("{},{},{}", v[0], v[1], v[2]));
        }
        // Reading takes half a simulated second.
        self.busy = Some(Busy::Scan {
            until: self.now + 0.5,
            seq,
            dropped,
            reply: format!("OK scan={}", parts.join(";")),
        });
    }

    fn moves(&mut self, seq: u16, args: &[String], dropped: bool) {
        if !self.homed {
            return self.reply(seq, "ERR NOT_HOMED send HOME first", dropped);
        }
        match self.check_tokens(args) {
            Ok(steps) => self.start_step(seq, dropped, steps, 0),
            Err(e) => self.reply(seq, &e, dropped),
        }
    }

    /// The whole line checked before anything turns: the steps, or the `ERR` text.
    fn check_tokens(&self, args: &[String]) -> Result<Vec<Vec<Move>>, String> {
        let mut steps: Vec<Vec<Move>> = Vec::new();
        for (i, tok) in args.iter().enumerate() {
            let Some(step) = parse_token(tok) else {
                return Err(format!("ERR SYNTAX token {i} {tok:?}"));
            };
            for m in &step {
                if let crate::cube::MoveKind::Face(f) = m.kind {
                    if !self.cfg.caps.faces.contains(&f) {
                        return Err(format!("ERR FACE no motor for {f}"));
                    }
                }
            }
            if step.len() == 2 {
                let opposite = matches!((step[0].kind, step[1].kind),
                    (crate::cube::MoveKind::Face(a), crate::cube::MoveKind::Face(b)) if a.opposite() == b);
                if !self.cfg.caps.parallel || !opposite {
                    return Err(format!(
                        "ERR PARALLEL token {i} {tok:?} cannot turn together"
                    ));
                }
            }
            steps.push(step);
        }
        Ok(steps)
    }

    fn fault_at(&self, kind: LineFaultKind, step: u32) -> bool {
        self.cfg
            .faults
            .iter()
            .any(|f| f.kind == kind && f.at == step)
    }

    /// Starts step `index` of a `MOVE` (or answers `OK` after the last one), unless an
    /// injected fault stops it.
    fn start_step(&mut self, seq: u16, dropped: bool, steps: Vec<Vec<Move>>, index: usize) {
        let Some(step) = steps.get(index) else {
            return self.reply(seq, &format!("OK moves={}", steps.len()), dropped);
        };
        self.steps += 1;
        let n = self.steps;
        if self.fault_at(LineFaultKind::Silent, n) {
            self.silent = true;
            return;
        }
        if self.fault_at(LineFaultKind::Stall, n) {
            return self.reply(
                seq,
                &format!(
                    "ERR STALL motor {} did not reach its position at token {index}",
                    token(step)
                ),
                dropped,
            );
        }
        let mut caps = self.cfg.caps.clone();
        caps.speed = self.speed_pct;
        let secs = caps.step_seconds(step);
        self.busy = Some(Busy::Move {
            until: self.now + secs,
            secs,
            seq,
            dropped,
            steps,
            index,
        });
    }

    /// Step `index` has turned: the cube changes, `DONE` goes out, and a `STOP` that
    /// arrived meanwhile ends the line; otherwise the next step starts.
    fn step_made(
        &mut self,
        secs: f64,
        seq: u16,
        dropped: bool,
        steps: Vec<Vec<Move>>,
        index: usize,
    ) {
        let step = &steps[index];
        if let Ok(mut s) = self.shared.lock() {
            let alg = Alg::from_moves(step.clone());
            let _ = s.cube.apply(&alg);
            let size = s.cube.size();
            for m in step {
                s.ids = m.permutation(size).apply(&s.ids);
            }
            s.clock += secs;
        }
        if let Some(m) = self.misread.as_mut() {
            m.layer_turned();
        }
        self.reply(seq, &format!("DONE {index} {}", token(step)), dropped);
        if let Some(l) = self.take_line() {
            let is_stop = l
                .split_whitespace()
                .nth(1)
                .is_some_and(|v| v.eq_ignore_ascii_case("STOP"));
            if is_stop {
                self.reply(seq, "ERR STOPPED after a STOP", dropped);
                self.handle(&l);
                return;
            }
            self.pending.push_back(l);
        }
        self.start_step(seq, dropped, steps, index + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::robot::line::{LineError, LineRobot, LineTimeouts};
    use std::time::Duration;

    fn robot(h: &LineSimHandle) -> LineRobot {
        let link = crate::robot::link::open(h.path(), None).unwrap();
        let t = LineTimeouts {
            ack: Duration::from_millis(300),
            retries: 2,
            slack: Duration::from_secs(2),
        };
        let mut r = LineRobot::connect(link, t).unwrap();
        r.time_scale = 1000.0;
        r
    }

    #[test]
    fn solves_through_a_pty() {
        let alg = Alg::parse("R U R' U' F2 D L' B2").unwrap();
        let mut start = FaceletCube::solved(Size::Three);
        start.apply(&alg.inverse()).unwrap();
        let h = spawn_pty(LineSimConfig {
            speed: 1000.0,
            start: Some(start.clone()),
            ..Default::default()
        })
        .unwrap();
        let mut r = robot(&h);
        assert!(r.caps().parallel);
        r.home().unwrap();
        let steps = r.caps().steps(&alg).unwrap();
        let mut done = Vec::new();
        r.execute(&steps, &mut |i, _| done.push(i)).unwrap();
        assert_eq!(done, (0..steps.len()).collect::<Vec<_>>());
        assert!(h.cube().is_solved());
        assert_eq!(FaceletCube::parse(&r.state().unwrap()).unwrap(), h.cube());
        assert!((h.clock() - r.caps().seconds(&steps)).abs() < 1e-9);
    }

    #[test]
    fn dropped_reply_is_retried_without_repeating_the_move() {
        let h = spawn_pty(LineSimConfig {
            speed: 1000.0,
            start: Some(FaceletCube::solved(Size::Three)),
            faults: parse_faults("drop@3").unwrap(),
            ..Default::default()
        })
        .unwrap();
        let mut r = robot(&h);
        r.home().unwrap();
        let steps = vec![vec![Move::face(Face::R, crate::cube::Turn::Cw)]];
        r.execute(&steps, &mut |_, _| {}).unwrap();
        let mut expect = FaceletCube::solved(Size::Three);
        expect.apply(&Alg::parse("R").unwrap()).unwrap();
        assert_eq!(h.cube(), expect);
    }

    #[test]
    fn stall_and_silence_are_reported() {
        let h = spawn_pty(LineSimConfig {
            speed: 1000.0,
            start: Some(FaceletCube::solved(Size::Three)),
            faults: parse_faults("stall@2,silent@4").unwrap(),
            ..Default::default()
        })
        .unwrap();
        let mut r = robot(&h);
        r.home().unwrap();
        let steps = Alg::parse("R U F D")
            .unwrap()
            .moves()
            .iter()
            .map(|&m| vec![m])
            .collect::<Vec<_>>();
        let mut done = Vec::new();
        let e = r.execute(&steps, &mut |i, _| done.push(i)).unwrap_err();
        assert!(
            matches!(e, LineError::Robot { ref code, .. } if code == "STALL"),
            "{e}"
        );
        assert_eq!(done, vec![0]);
        let mut done = Vec::new();
        let e = r
            .execute(&steps[1..], &mut |i, _| done.push(i))
            .unwrap_err();
        assert!(matches!(e, LineError::Timeout { .. }), "{e}");
        assert_eq!(done, vec![0]); // U made (step 3), F (step 4) never
        let mut expect = FaceletCube::solved(Size::Three);
        expect.apply(&Alg::parse("R U").unwrap()).unwrap();
        assert_eq!(h.cube(), expect);
    }

    #[test]
    fn errors_name_the_problem() {
        let h = spawn_pty(LineSimConfig {
            speed: 1000.0,
            caps: LineCaps {
                parallel: false,
                faces: vec![Face::U, Face::R, Face::F, Face::D, Face::L],
                ..LineSimConfig::default().caps
            },
            ..Default::default()
        })
        .unwrap();
        let mut r = robot(&h);
        let b = vec![vec![Move::face(Face::B, crate::cube::Turn::Cw)]];
        let e = r.execute(&b, &mut |_, _| {}).unwrap_err();
        assert!(matches!(e, LineError::Robot { ref code, .. } if code == "NOT_HOMED"));
        r.home().unwrap();
        let e = r.execute(&b, &mut |_, _| {}).unwrap_err();
        assert!(matches!(e, LineError::Robot { ref code, .. } if code == "FACE"));
        assert!(r.set_speed(0).is_err());
        r.set_speed(50).unwrap();
        assert!(parse_faults("melt@2").is_err());
        assert!(parse_faults("stall@x").is_err());
    }
}

#[cfg(test)]
mod scan_tests {
    use super::*;
    use crate::robot::line::{LineRobot, LineTimeouts};

    #[test]
    fn scan_reads_every_sticker_and_rereads_stably() {
        let h = spawn_pty(LineSimConfig {
            speed: 1000.0,
            seed: 3,
            ..Default::default()
        })
        .unwrap();
        let link = crate::robot::link::open(h.path(), None).unwrap();
        let mut r = LineRobot::connect(link, LineTimeouts::default()).unwrap();
        assert_eq!(r.caps().scan, Some(Scale::Rgb8));
        let all = r.scan(&[]).unwrap();
        assert_eq!(all.len(), 54);
        let again = r.scan(&[4, 13]).unwrap();
        assert_eq!(again.len(), 2);
        for (k, &i) in [4usize, 13].iter().enumerate() {
            for c in 0..3 {
                assert!(
                    (again[k][c] - all[i][c]).abs() < 40.0,
                    "{:?} vs {:?}",
                    again[k],
                    all[i]
                );
            }
        }
        assert!(r.scan(&[54]).is_err());
    }

    #[test]
    fn a_misread_swaps_two_readings_until_a_face_turns() {
        let faults = parse_faults("misread=U1:F3").unwrap();
        let spawn = |faults: Vec<LineFault>| {
            let h = spawn_pty(LineSimConfig {
                speed: 1000.0,
                seed: 5,
                faults,
                ..Default::default()
            })
            .unwrap();
            let link = crate::robot::link::open(h.path(), None).unwrap();
            let r = LineRobot::connect(link, LineTimeouts::default()).unwrap();
            (h, r)
        };
        let (_plain, mut p) = spawn(Vec::new());
        let (h, mut r) = spawn(faults);
        let colors = h.initial_cube().colors().to_vec();
        assert_ne!(colors[0], colors[20], "two stickers of different colours");
        let truth = p.scan(&[]).unwrap();
        let near = |a: [f64; 3], b: [f64; 3]| (0..3).all(|c| (a[c] - b[c]).abs() < 40.0);
        // Sticker 0 reads as sticker 20, and the other way round, in scans and re-reads.
        let all = r.scan(&[]).unwrap();
        assert!(near(all[0], truth[20]) && near(all[20], truth[0]));
        assert!(near(all[1], truth[1]));
        let again = r.scan(&[20, 0]).unwrap();
        assert!(near(again[0], truth[0]) && near(again[1], truth[20]));
        // A face turn (D leaves U1 and F3 where they are) ends it.
        r.home().unwrap();
        let d = Alg::parse("D").unwrap().moves().to_vec();
        r.execute(&[d], &mut |_, _| {}).unwrap();
        let after = r.scan(&[0, 20]).unwrap();
        assert!(near(after[0], truth[0]) && near(after[1], truth[20]));
        assert!(parse_faults("misread=U1").is_err());
    }
}
