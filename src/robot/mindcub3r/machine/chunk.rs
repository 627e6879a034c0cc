//! A plan's primitives as programs on the brick: a chunk of tilts, spins, layer turns and
//! arm moves is one direct command that the brick runs back to back, with the overlaps
//! the mechanism allows, and answers once with what it completed. The design is in
//! [Execution on the brick](crate::robot::mindcub3r#execution-on-the-brick).
//!
//! Level: robot (part of the machine). No printing.

use super::builder::{reply_offset, reply_word, report_held, stage_name, Builder, Held};
use super::*;
use crate::robot::ev3::protocol::{Cmp, Operand, Var, Width};

/// Most primitives one chunk carries (the command's size is checked besides).
const MAX_CHUNK: usize = 10;
/// Sensor-arm degrees per primitive of the progress marks (see [`Marks`]).
const MARK_STEP: i32 = 18;

/// The program's progress, kept where a later command can read it: the colour-sensor
/// arm, idle during execution and free to move anywhere outwards of `sensor_arm.clear`,
/// steps `MARK_STEP / 2` degrees (in parallel, without being waited for) each time a
/// primitive's cube-changing move completes and again when the primitive completes. Its
/// count after a lost reply gives the same record the reply would have.
#[derive(Clone, Copy, Debug)]
struct Marks {
    base: i32,
    dir: i32,
}

impl Marks {
    /// Marks starting where the sensor arm is, towards whichever side has room for `n`
    /// primitives between `clear` and 40° short of `parked`.
    fn new(at: i32, clear: i32, parked: i32, n: usize) -> Marks {
        let (lo, hi) = (clear.min(parked - 40), parked - 40);
        let need = MARK_STEP * n as i32;
        let at = at.clamp(lo, hi.max(lo));
        let dir = if hi - at >= need { 1 } else { -1 };
        Marks { base: at, dir }
    }

    /// The sensor arm's target after `half` half-steps.
    fn at(self, half: usize) -> i32 {
        self.base + self.dir * MARK_STEP / 2 * half as i32
    }

    /// (done, effected) from the sensor arm's count; `None` if it is not on the marks.
    fn read(self, count: i32, n: usize) -> Option<(usize, usize)> {
        let half = MARK_STEP / 2;
        let tol = 4;
        let x = (count - self.base) * self.dir;
        if x < -tol || x > half * 2 * n as i32 + tol {
            return None;
        }
        // Past a mark by more than the tolerance: the arm was on its way to the next,
        // which it starts for only once that step happened.
        let h = ((x - tol) as f64 / half as f64).ceil().max(0.0) as usize;
        let h = h.min(2 * n);
        Some((h / 2, h / 2 + h % 2))
    }
}

/// One primitive of a chunk and where it leaves the motors.
#[derive(Clone, Copy, Debug)]
struct Step {
    prim: Primitive,
    /// Turntable target count before and after it (equal for tilts and arm moves).
    table_from: i32,
    table_to: i32,
    /// Table angle (degrees since start-up) after it.
    table_deg: f64,
    /// The tilt arm's target after it.
    arm_to: i32,
    /// Nominal seconds of its moves (arm moves its preconditions need included).
    secs: f64,
}

/// The last move of a chunk that answered before that move ended
/// (`execution.answer_during_last_move`): the tilt arm swinging back to hold after a
/// tilt's apex, or the table backing off a layer turn's over-rotation. The cube has
/// changed by then; the move only settles the mechanism, bounded on the brick like every
/// step job, and whatever moves the robot next waits for it (the next chunk on the brick,
/// anything else from here).
#[derive(Clone, Copy, Debug)]
pub(super) struct Tail {
    /// The motor still moving, with its target.
    motor: Motor,
    /// Nominal seconds of the move (and the arm's settle pause after it).
    secs: f64,
}

/// A chunk sent to the brick, kept until its outcome is known.
#[derive(Clone, Debug)]
pub(super) struct ChunkAttempt {
    steps: Vec<Step>,
    /// The sensor arm's progress marks of its program.
    marks: Marks,
    /// Whether the program was sent (before that, nothing of it happened).
    sent: bool,
    /// From the program's reply: primitives it completed, and those whose cube-changing
    /// move completed (one more than `done` when it stopped after that move).
    record: Option<(usize, usize)>,
    /// The tilt arm was still settling from the chunk before when this one was sent, so an
    /// arm short of hold may be that move's, not this chunk's first tilt.
    after_arm_tail: bool,
    /// The program stopped while still waiting for the chunk before to settle: none of
    /// its own primitives began.
    stopped_before_start: bool,
}

/// What the robot can say about a chunk whose outcome was not confirmed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settled {
    /// Exactly this many primitives (a prefix) happened; the text says what tells.
    Exactly(usize, &'static str),
    /// At least and at most this many (the motors cannot count tilts made between two
    /// table moves).
    Between(usize, usize, &'static str),
    /// Nobody can tell (the link is dead, or a motor stopped half way through a move that
    /// changes the cube).
    Unknown,
}

/// A chunk the brick completed: for each primitive, the brick's clock (ms since the
/// program started) when it ended, and the wall-clock seconds from sending to the reply.
/// `None` when the reply was lost and the motors' counts confirmed the chunk.
#[derive(Clone, Debug)]
pub struct ChunkRun {
    pub ends_ms: Option<Vec<i32>>,
    /// The brick's clock when the program had waited for the chunk before to settle
    /// (that chunk's last move, see [`MindCub3r::await_settled`]); `None`: nothing was
    /// left moving.
    pub settled_ms: Option<i32>,
    pub wall: f64,
}

/// Where the program's results are in the reply.
struct Layout {
    err: usize,
    done: usize,
    effected: usize,
    times: usize,
    stages: Vec<String>,
    deadline_ms: i32,
    /// The program first waits for the chunk before to settle (its first stage).
    waits_for_tail: bool,
    /// Where it records the brick's clock when that wait ended.
    settled: Option<usize>,
    /// The move it leaves running when it answers.
    tail: Option<Tail>,
    held: Held,
}

impl MindCub3r {
    /// Whether a primitive can run in a chunk on the brick (the scan's sensor moves and
    /// readings cannot).
    pub fn chunkable(p: Primitive) -> bool {
        matches!(
            p,
            Primitive::ArmAway
                | Primitive::ArmHold
                | Primitive::Tilt
                | Primitive::Spin(_)
                | Primitive::Turn(_)
        )
    }

    /// How many of `prims` (from the first) the next chunk takes: chunkable ones whose
    /// nominal motion fits `execution.chunk_seconds` (at least one), as many as fit in one
    /// command.
    pub fn chunk_len(&self, prims: &[Primitive]) -> usize {
        let run = prims
            .iter()
            .take(MAX_CHUNK)
            .take_while(|p| Self::chunkable(**p))
            .count();
        let Ok(steps) = self.chunk_steps(&prims[..run]) else {
            return 1;
        };
        let limit = self.config.execution.chunk_seconds;
        let mut n = 0;
        let mut secs = 0.0;
        for s in &steps {
            if n > 0 && secs + s.secs > limit {
                break;
            }
            secs += s.secs;
            n += 1;
        }
        // A chunk that answers during its last move hides the link's round trip: where
        // the chunk is cut short anyway, cut it after a tilt or a layer turn, unless that
        // would halve it.
        let tails = |s: &Step| matches!(s.prim, Primitive::Tilt | Primitive::Turn(_));
        if self.config.execution.answer_during_last_move && n < steps.len() && !tails(&steps[n - 1])
        {
            let mut sum = secs;
            for m in (1..n).rev() {
                sum -= steps[m].secs;
                if sum < limit / 2.0 {
                    break;
                }
                if tails(&steps[m - 1]) {
                    n = m;
                    break;
                }
            }
        }
        let s = &self.config.sensor_arm;
        while n > 1
            && self
                .chunk_program(
                    &steps[..n],
                    Marks::new(s.clear, s.clear, s.parked, n),
                    self.tail,
                )
                .is_err()
        {
            n -= 1;
        }
        n.max(1)
    }

    /// Waits for the last move a chunk left running, if any (every other motion does so
    /// by itself); on any error every motor is stopped.
    pub fn await_settled(&mut self) -> Result<(), RobotError> {
        self.guard(|r| r.await_tail())
    }

    /// Waits (from here) for a chunk's last move still settling, if any.
    pub(super) fn await_tail(&mut self) -> Result<(), RobotError> {
        let Some(t) = self.tail.take() else {
            return Ok(());
        };
        let budget = Duration::from_secs_f64(2.0 * t.secs) + self.ev3.timeouts.move_extra;
        self.ev3
            .wait("the last move of a chunk", &[t.motor], budget)?;
        if t.motor.port == self.arm.port {
            self.settle()?;
        }
        Ok(())
    }

    /// Runs `prims` back to back as one program on the brick (see the module docs).
    /// On success the bookkeeping follows all of them. On failure every motor is stopped
    /// and [`MindCub3r::chunk_landed`] tells what happened.
    pub fn execute_chunk(&mut self, prims: &[Primitive]) -> Result<ChunkRun, RobotError> {
        self.attempt = None;
        self.chunk = None;
        let s = &self.config.sensor_arm;
        let (clear, parked) = (s.clear, s.parked);
        let steps = self.chunk_steps(prims)?;
        let marks = Marks::new(clear, clear, parked, steps.len());
        self.chunk = Some(ChunkAttempt {
            steps,
            marks,
            sent: false,
            record: None,
            after_arm_tail: false,
            stopped_before_start: false,
        });
        self.check_interrupt()?;
        if !self.homed {
            self.home()?;
        }
        // The sensor arm out of the tilt arm's way (normally there already), at a count
        // the marks start from.
        self.guard(|r| r.sensor_clear())?;
        let at = match self.sensor_at {
            Some(p) => p,
            None => self.ev3.count(self.sensor.port)?,
        };
        // Homing and the sensor arm's move may have changed what the arm is known to do.
        let steps = self.chunk_steps(prims)?;
        let marks = Marks::new(at, clear, parked, steps.len());
        let prior = self.tail;
        let (cmd, layout) = self.chunk_program(&steps, marks, prior)?;
        self.chunk = Some(ChunkAttempt {
            steps: steps.clone(),
            marks,
            sent: true,
            record: None,
            after_arm_tail: prior.is_some_and(|t| t.motor.port == self.arm.port),
            stopped_before_start: false,
        });
        let (a, t) = (&self.config.arm, &self.config.turntable);
        let arm = [a.away, a.clear, a.hold, a.hold_2x2, a.tilt_apex];
        let over = t.over_rotation.abs() + (8.0 * t.ratio).round() as i32;
        let (mut lo, mut hi) = (self.table.target, self.table.target);
        for s in &steps {
            lo = lo.min(s.table_to);
            hi = hi.max(s.table_to);
        }
        self.ev3.may_move(
            self.arm.port,
            *arm.iter().min().unwrap_or(&0),
            *arm.iter().max().unwrap_or(&0),
        );
        self.ev3.may_move(self.table.port, lo - over, hi + over);
        let (m0, m1) = (marks.at(0), marks.at(2 * steps.len()));
        self.ev3
            .may_move(self.sensor.port, m0.min(m1) - 5, m0.max(m1) + 5);
        let name = crate::robot::mindcub3r::error::chunk_of(steps.len());
        let wait =
            Duration::from_millis(layout.deadline_ms.max(0) as u64) + self.ev3.timeouts.reply;
        let sent = std::time::Instant::now();
        let reply = self.ev3.call_within(&name, &cmd, wait);
        let wall = sent.elapsed().as_secs_f64();
        self.ev3.forget_counts();
        self.arm_state = ArmState::Unknown;
        // Whatever the outcome, the tail before was waited for by the program (or the
        // motors are stopped below); this chunk may leave its own.
        self.tail = None;
        // The reply, its words, and the stage a failure names, read as one: any of them
        // garbled is a reply that cannot be trusted.
        let n = steps.len();
        let read = reply.and_then(|reply| {
            report_held(&mut self.ev3, &reply, &name, layout.held, &layout.stages)?;
            let word = |at: usize| reply_word(&reply, &name, at);
            let (err, done, effected) = (
                word(layout.err)?,
                word(layout.done)?,
                word(layout.effected)?,
            );
            let stage = match err {
                0 => String::new(),
                e => stage_name(&layout.stages, e, &name)?,
            };
            let mut ends = Vec::with_capacity(n);
            for i in 0..n {
                ends.push(word(layout.times + 4 * i)?);
            }
            let settled_ms = match layout.settled {
                Some(at) => Some(word(at)?),
                None => None,
            };
            Ok((err, done, effected, stage, ends, settled_ms))
        });
        let (err, done, effected, stage, ends, settled_ms) = match read {
            Ok(r) => r,
            Err(
                e @ (Ev3Error::Timeout { .. } | Ev3Error::Link { .. } | Ev3Error::Malformed { .. }),
            ) => {
                // The reply is lost or garbled; the program ran to its end (or its
                // deadline) on the brick by now. The motors' counts confirm the whole
                // chunk, or the chunk stays unsettled for the job to ask about.
                self.recovered_chunk(e)?;
                self.tail = layout.tail;
                return Ok(ChunkRun {
                    ends_ms: None,
                    settled_ms: None,
                    wall,
                });
            }
            Err(e) => {
                let _ = self.ev3.stop_all();
                return Err(e.into());
            }
        };
        let done = (done.max(0) as usize).min(n);
        let effected = (effected.max(0) as usize).clamp(done, (done + 1).min(n));
        if err != 0 {
            if let Some(c) = self.chunk.as_mut() {
                c.record = Some((done, effected));
                c.stopped_before_start = layout.waits_for_tail && err == 1;
            }
            let _ = self.ev3.stop_all();
            self.sensor_at = None;
            return Err(RobotError::ChunkTimeout {
                done,
                of: n,
                stage,
                ms: layout.deadline_ms.max(0) as u64,
            });
        }
        self.chunk_completed(n);
        self.tail = layout.tail;
        Ok(ChunkRun {
            ends_ms: Some(ends),
            settled_ms,
            wall,
        })
    }

    /// After a lost chunk reply: the counts confirm all of it, or the error stands (every
    /// motor stopped).
    fn recovered_chunk(&mut self, e: Ev3Error) -> Result<(), RobotError> {
        let n = self.chunk.as_ref().map_or(0, |c| c.steps.len());
        match self.chunk_outcome() {
            Settled::Exactly(k, _) if k == n => {
                self.chunk_completed(n);
                Ok(())
            }
            _ => {
                let _ = self.ev3.stop_all();
                Err(e.into())
            }
        }
    }

    /// The bookkeeping of the first `k` primitives of the chunk under way, which happened.
    fn chunk_completed(&mut self, k: usize) {
        let Some(c) = self.chunk.take() else {
            return;
        };
        for s in c.steps.iter().take(k) {
            self.table_deg = s.table_deg;
            self.table.target = s.table_to;
            self.arm.target = s.arm_to;
            self.after_primitive(s.prim);
        }
        let mark = c.marks.at(2 * k);
        self.sensor.target = mark;
        self.sensor_at = (k == c.steps.len()).then_some(mark);
        if k == c.steps.len() {
            if let Some(last) = c.steps.last() {
                self.arm_state = if last.arm_to == self.config.arm.away {
                    ArmState::Away
                } else {
                    ArmState::Hold
                };
            }
        } else {
            self.arm_state = ArmState::Unknown;
        }
    }

    /// After a chunk failed: how many of its primitives happened (see the module docs of
    /// [`crate::robot::mindcub3r`], "What a stop leaves"). The program's own record
    /// decides when its reply came; otherwise the motors' counts.
    pub fn chunk_landed(&mut self) -> Settled {
        let settled = self.chunk_outcome();
        if let Settled::Exactly(k, _) = settled {
            self.chunk_completed(k);
        }
        settled
    }

    /// [`MindCub3r::chunk_landed`] without the bookkeeping.
    fn chunk_outcome(&mut self) -> Settled {
        let Some(c) = self.chunk.clone() else {
            return Settled::Unknown;
        };
        let n = c.steps.len();
        if !c.sent {
            return Settled::Exactly(0, "the chunk was never sent");
        }
        match c.record {
            Some(_) if c.stopped_before_start => Settled::Exactly(
                0,
                "the program's record (it stopped waiting for the chunk before)",
            ),
            Some((done, effected)) if effected > done => {
                Settled::Exactly(effected, "the program's record")
            }
            Some((done, _)) if done >= n => Settled::Exactly(n, "the program's record"),
            Some((done, _)) => self.in_progress_by_count(&c, done),
            // A brick that does not answer this read will not answer the motors' either.
            None => match self.ev3.count(self.sensor.port) {
                Err(e) if e.link_failed() => Settled::Unknown,
                read => match read.ok().and_then(|v| c.marks.read(v, n)) {
                    Some((done, _)) if done >= n => {
                        Settled::Exactly(n, "the sensor arm's progress marks")
                    }
                    Some((done, effected)) if effected > done => {
                        Settled::Exactly(effected, "the sensor arm's progress marks")
                    }
                    Some((done, _)) => self.in_progress_by_count(&c, done),
                    None => self.settle_by_counts(&c.steps),
                },
            },
        }
    }

    /// Primitive `done` was under way when the program stopped: its cube-changing move,
    /// if it has one, happened or not by the motor's count. A first tilt after the chunk
    /// before left the arm settling cannot be told from that arm move by the count alone
    /// once the arm is past the midway: both states stay.
    fn in_progress_by_count(&mut self, c: &ChunkAttempt, done: usize) -> Settled {
        let by = "the program's record and the motor counts";
        let s = &c.steps[done];
        let ambiguous = done == 0 && c.after_arm_tail && s.prim == Primitive::Tilt;
        let (port, from, to, tilt) = match s.prim {
            Primitive::Tilt => {
                let hold = self.hold_angle(self.size());
                (self.arm.port, hold, self.config.arm.tilt_apex, true)
            }
            Primitive::Spin(_) | Primitive::Turn(_) => {
                (self.table.port, s.table_from, s.table_to, false)
            }
            _ => return Settled::Exactly(done, "the program's record"),
        };
        let Ok(count) = self.ev3.count(port) else {
            return Settled::Between(done, done + 1, "the program's record");
        };
        let span = (to - from) as f64;
        let frac = (count - from) as f64 / span;
        let (lo, hi) = if tilt {
            // The arm back down after its apex is recorded as the effect done; below the
            // midway the tilt did not happen.
            (0.5, 0.95)
        } else {
            let m = 8.0 * self.config.turntable.ratio / span.abs().max(1.0);
            (m, 1.0 - m)
        };
        if frac <= lo {
            Settled::Exactly(done, by)
        } else if frac >= hi && !ambiguous {
            Settled::Exactly(done + 1, by)
        } else {
            Settled::Between(done, done + 1, by)
        }
    }

    /// No record from the program: the prefixes whose resting turntable count matches the
    /// count read now (within 8° of table), narrowed by the tilt arm's count; prefixes that
    /// differ only in arm moves leave the cube alike and count as the shortest.
    fn settle_by_counts(&mut self, steps: &[Step]) -> Settled {
        let by = "the motor counts";
        let (Ok(table), Ok(arm)) = (
            self.ev3.count(self.table.port),
            self.ev3.count(self.arm.port),
        ) else {
            return Settled::Unknown;
        };
        let margin = (8.0 * self.config.turntable.ratio).round() as i32;
        let start_arm = self.arm.target;
        let rest = |k: usize| -> (i32, i32) {
            match k {
                0 => (steps.first().map_or(table, |s| s.table_from), start_arm),
                k => (steps[k - 1].table_to, steps[k - 1].arm_to),
            }
        };
        let by_table: Vec<usize> = (0..=steps.len())
            .filter(|&k| (rest(k).0 - table).abs() <= margin)
            .collect();
        if by_table.is_empty() {
            // The table stopped between two squares: a layer or the cube is half turned.
            return Settled::Unknown;
        }
        let by_arm: Vec<usize> = by_table
            .iter()
            .copied()
            .filter(|&k| (rest(k).1 - arm).abs() <= 15)
            .collect();
        let ks = if by_arm.is_empty() { by_table } else { by_arm };
        let (lo, hi) = (ks[0], ks[ks.len() - 1]);
        let changes = steps[lo..hi]
            .iter()
            .any(|s| !matches!(s.prim, Primitive::ArmAway | Primitive::ArmHold));
        if changes {
            Settled::Between(lo, hi, by)
        } else {
            Settled::Exactly(lo, by)
        }
    }

    fn size(&self) -> Size {
        self.frame.as_ref().map(|f| f.0).unwrap_or(Size::Three)
    }

    /// Where each primitive leaves the motors, and its nominal time.
    fn chunk_steps(&self, prims: &[Primitive]) -> Result<Vec<Step>, RobotError> {
        let (a, t) = (&self.config.arm, &self.config.turntable);
        let hold = self.hold_angle(self.size());
        let arm_ramps = (a.ramp_up, a.ramp_down);
        let swing = (hold - a.away) as f64;
        let settle = a.settle_ms as f64 / 1000.0;
        let arm_move = self.arm.nominal_secs(swing, a.speed, arm_ramps) + settle;
        let mut arm = match self.arm_state {
            ArmState::Away => Some(a.away),
            ArmState::Hold => Some(hold),
            ArmState::Unknown => None,
        };
        let mut deg = self.table_deg;
        let mut table = self.table.target;
        let mut out = Vec::with_capacity(prims.len());
        for &p in prims {
            let from = table;
            let needs = |want: i32, arm: &mut Option<i32>| {
                let secs = if *arm == Some(want) { 0.0 } else { arm_move };
                *arm = Some(want);
                secs
            };
            let secs = match p {
                Primitive::ArmAway => needs(a.away, &mut arm),
                Primitive::ArmHold => needs(hold, &mut arm),
                Primitive::Tilt => {
                    let up = (a.tilt_apex - hold) as f64;
                    needs(hold, &mut arm)
                        + self.arm.nominal_secs(up, a.tilt_speed, arm_ramps)
                        + self
                            .arm
                            .nominal_secs(up, a.back_speed, (a.ramp_up, a.ramp_down * 2))
                        + settle
                }
                Primitive::Spin(k) | Primitive::Turn(k) => {
                    let k = check_quarter(k)?;
                    let turn = matches!(p, Primitive::Turn(_));
                    let pre = needs(if turn { hold } else { a.away }, &mut arm);
                    deg += 90.0 * k as f64;
                    table = self.table_target(deg);
                    let d = (table - from) as f64;
                    pre + if turn {
                        let over = t.over_rotation.abs() as f64;
                        self.table.nominal_secs(
                            d.abs() + over,
                            t.turn_speed,
                            (t.ramp_up, t.ramp_down),
                        ) + self.table.nominal_secs(over, t.over_rotation_speed, (0, 0))
                    } else {
                        self.table
                            .nominal_secs(d, t.speed, (t.ramp_up, t.ramp_down))
                    }
                }
                other => {
                    return Err(RobotError::NotChunkable { primitive: other });
                }
            };
            out.push(Step {
                prim: p,
                table_from: from,
                table_to: table,
                table_deg: deg,
                arm_to: arm.unwrap_or(a.away),
                secs,
            });
        }
        Ok(out)
    }

    /// Turntable motor degrees before a spin's end at which the tilt arm may start down to
    /// hold: the table then needs the arm's nominal time to reach `arm.clear` divided by
    /// `overlap_margin` to stop (its speed falling at a constant rate over its ramp-down).
    fn lowering_lead(&self) -> i32 {
        let (a, t, x) = (
            &self.config.arm,
            &self.config.turntable,
            &self.config.execution,
        );
        let arm = self
            .arm
            .nominal_secs((a.clear - a.away) as f64, a.speed, (a.ramp_up, 0));
        let tau = arm / x.overlap_margin;
        let v = (t.speed.unsigned_abs() as f64 / 100.0 * self.table.full_speed).max(1.0);
        let ramp = t.ramp_down as f64;
        let stop = 2.0 * ramp / v;
        let r = if tau <= stop && ramp > 0.0 {
            (tau * v).powi(2) / (4.0 * ramp)
        } else {
            ramp + (tau - stop) * v
        };
        r.ceil() as i32
    }

    /// The chunk's program and where its results land.
    fn chunk_program(
        &self,
        steps: &[Step],
        marks: Marks,
        prior: Option<Tail>,
    ) -> Result<(DirectCommand, Layout), RobotError> {
        let cfg = &self.config;
        let (a, t, x) = (&cfg.arm, &cfg.turntable, &cfg.execution);
        let hold = self.hold_angle(self.size());
        let arm_ramps = (a.ramp_up, a.ramp_down);
        let nominal: f64 =
            steps.iter().map(|s| s.secs).sum::<f64>() + prior.map_or(0.0, |t| t.secs);
        let ms = 2000.0 * nominal + self.ev3.timeouts.move_extra.as_millis() as f64;
        let deadline_ms = ms.min(i32::MAX as f64) as i32;
        let mut b = Builder::new(cfg, deadline_ms, self.ev3.timeouts.stall);
        let w = Width::B4;
        let err = b.p.global(w);
        let done = b.p.global(w);
        let effected = b.p.global(w);
        let times = b.p.global_array(w, steps.len().max(1));
        let settled = prior.map(|_| b.p.global(w));
        let held = b.waits_recorded();
        for v in [err, done, effected] {
            b.p.mov(w, w, 0, v);
        }
        let (arm, table) = (b.arm, b.table);
        if let (Some(tail), Some(at)) = (prior, settled) {
            // Stage 1: the chunk before's last move settling.
            b.running_to(tail.motor.port, tail.motor.target);
            b.wait_idle(&[arm, table], "the moves before settling");
            if tail.motor.port == arm {
                b.settle(arm, a.settle_ms);
            }
            b.p.timer_read(at);
        }
        // The last primitive may answer once it has changed the cube (see [`Tail`]).
        let last = steps.len().saturating_sub(1);
        let tail_of = |i: usize, p: Primitive| -> Option<Tail> {
            if !x.answer_during_last_move || i != last {
                return None;
            }
            let settle = a.settle_ms as f64 / 1000.0;
            match p {
                Primitive::Tilt => {
                    let up = (a.tilt_apex - hold) as f64;
                    Some(Tail {
                        motor: Motor {
                            target: hold,
                            ..self.arm
                        },
                        secs: self
                            .arm
                            .nominal_secs(up, a.back_speed, (a.ramp_up, a.ramp_down * 2))
                            + settle,
                    })
                }
                Primitive::Turn(_) => Some(Tail {
                    motor: Motor {
                        target: steps[i].table_to,
                        ..self.table
                    },
                    secs: self.table.nominal_secs(
                        t.over_rotation.abs() as f64,
                        t.over_rotation_speed,
                        (0, 0),
                    ),
                }),
                _ => None,
            }
        };
        let mut tail = None;
        let c = Operand::Const;
        let mut arm_at = match self.arm_state {
            ArmState::Away => Some(a.away),
            ArmState::Hold => Some(hold),
            ArmState::Unknown => None,
        };
        // The arm was started down to hold during the spin before.
        let mut lowering = false;
        let arm_to = |b: &mut Builder<'_>, target: i32, at: &mut Option<i32>, what: &str| {
            if *at != Some(target) {
                b.call_move(arm, c(target), a.speed, arm_ramps);
                b.wait_idle(&[arm], what);
                b.settle(arm, a.settle_ms);
                *at = Some(target);
            }
        };
        // The arm away; before a spin the table may start as soon as it is past `clear`.
        let arm_away = |b: &mut Builder<'_>, at: &mut Option<i32>, spin_next: bool| {
            if *at == Some(a.away) {
                return;
            }
            if spin_next && x.table_starts_at_clear {
                b.call_move(arm, c(a.away), a.speed, arm_ramps);
                b.stage("the tilt arm moving clear of the cube");
                let l = b.p.label();
                b.p.bind(l);
                b.check_deadline();
                b.p.get_count(arm, b.cnt);
                b.p.jr_if(Cmp::Gt, w, b.cnt, a.clear.max(a.away), l);
            } else {
                b.call_move(arm, c(a.away), a.speed, arm_ramps);
                b.wait_idle(&[arm], "the tilt arm moving away from the cube");
                b.settle(arm, a.settle_ms);
            }
            *at = Some(a.away);
        };
        // A record in the reply, and the sensor arm a half-step on (see [`Marks`]).
        let sensor = b.sensor;
        let s_speed = cfg.sensor_arm.speed;
        let mark = |b: &mut Builder<'_>, var: Var, i: usize| {
            b.p.mov(w, w, i as i32 + 1, var);
            let half = 2 * i + if var == done { 2 } else { 1 };
            b.call_move(sensor, c(marks.at(half)), s_speed, (0, 0));
        };
        for (i, s) in steps.iter().enumerate() {
            let next = steps.get(i + 1).map(|n| n.prim);
            match s.prim {
                Primitive::ArmAway => arm_away(
                    &mut b,
                    &mut arm_at,
                    matches!(next, Some(Primitive::Spin(_))),
                ),
                Primitive::ArmHold => {
                    if lowering {
                        b.wait_idle(&[arm, table], "the tilt arm coming down to hold the cube");
                        b.settle(arm, a.settle_ms);
                        lowering = false;
                    } else {
                        arm_to(
                            &mut b,
                            hold,
                            &mut arm_at,
                            "the tilt arm moving to hold the cube",
                        );
                    }
                }
                Primitive::Tilt => {
                    arm_to(
                        &mut b,
                        hold,
                        &mut arm_at,
                        "the tilt arm moving to hold the cube",
                    );
                    b.call_move(arm, c(a.tilt_apex), a.tilt_speed, arm_ramps);
                    b.wait_idle(&[arm], "tilting the cube, the tilt arm pushing it over");
                    mark(&mut b, effected, i);
                    b.call_move(arm, c(hold), a.back_speed, (a.ramp_up, a.ramp_down * 2));
                    tail = tail_of(i, s.prim);
                    if tail.is_none() {
                        b.wait_idle(
                            &[arm],
                            "tilting the cube, the tilt arm coming back to hold it",
                        );
                        b.settle(arm, a.settle_ms);
                    }
                }
                Primitive::Spin(_) => {
                    arm_away(&mut b, &mut arm_at, true);
                    b.call_move(table, c(s.table_to), t.speed, (t.ramp_up, t.ramp_down));
                    if next == Some(Primitive::ArmHold) && x.arm_lowers_while_table_stops {
                        let lead = self.lowering_lead();
                        b.stage("the turntable slowing down");
                        let l = b.p.label();
                        b.p.bind(l);
                        b.check_deadline();
                        b.p.get_count(table, b.cnt);
                        if s.table_to >= s.table_from {
                            b.p.sub(w, s.table_to, b.cnt, b.d);
                        } else {
                            b.p.sub(w, b.cnt, s.table_to, b.d);
                        }
                        b.p.jr_if(Cmp::Gt, w, b.d, lead, l);
                        b.call_move(arm, c(hold), a.speed, arm_ramps);
                        arm_at = Some(hold);
                        lowering = true;
                        b.wait_idle(&[table], "spinning the cube on the turntable");
                    } else {
                        b.wait_idle(&[table, arm], "spinning the cube on the turntable");
                    }
                    mark(&mut b, effected, i);
                }
                Primitive::Turn(k) => {
                    arm_to(
                        &mut b,
                        hold,
                        &mut arm_at,
                        "the tilt arm moving to hold the cube",
                    );
                    let over = t.over_rotation * (k.signum() as i32) * t.sign as i32;
                    let speed = t.turn_speed;
                    b.call_move(table, c(s.table_to + over), speed, (t.ramp_up, t.ramp_down));
                    b.wait_idle(&[table], "turning a layer, the turntable going a little past the quarter before it comes back");
                    mark(&mut b, effected, i);
                    b.call_move(table, c(s.table_to), t.over_rotation_speed, (0, 0));
                    tail = tail_of(i, s.prim);
                    if tail.is_none() {
                        b.wait_idle(
                            &[table],
                            "turning a layer, the turntable coming back to the quarter",
                        );
                    }
                }
                _ => {}
            }
            mark(&mut b, done, i);
            let at = times.word(i);
            b.p.timer_read(at);
        }
        match tail {
            Some(t) if t.motor.port == arm => b.wait_idle(&[table], "the last move"),
            Some(_) => b.wait_idle(&[arm], "the last move"),
            None => b.wait_idle(&[arm, table], "the last move"),
        }
        let (cmd, stages) = b.end(err);
        let cmd = cmd.map_err(|why| RobotError::ChunkProgram {
            of: steps.len(),
            why,
        })?;
        let at = reply_offset;
        Ok((
            cmd,
            Layout {
                err: at(err),
                done: at(done),
                effected: at(effected),
                times: at(times),
                stages,
                deadline_ms,
                waits_for_tail: prior.is_some(),
                settled: settled.map(at),
                tail,
                held,
            },
        ))
    }
}
