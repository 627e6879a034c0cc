//! The colour-sensor scan as programs on the brick: one direct command per face
//! ([Programs on the brick](crate::robot::ev3::protocol#programs-on-the-brick)) that tilts
//! the cube if the face needs it, reads the centre and the ring while the turntable turns,
//! and answers with every reading and the motor counts it was taken at. The link is used
//! once per face, whatever its latency. The same programs read a chosen set of faces only
//! ([`MindCub3r::read_faces`], for a check that needs no full scan); the design is in
//! [Scan on the brick](crate::robot::mindcub3r#scan-on-the-brick).
//!
//! Level: robot (part of the machine). No printing.

use super::super::scan::{revolution_turns, ring_samples, scan_map_turning, FaceRead};
use super::*;
use crate::robot::ev3::driver::{HELD_SHORT_DEG, STILL_DEG};
use crate::robot::ev3::protocol::{
    op, Cmp, DirectCommand, Label, Operand, Program, SlotKind, Var, Width,
};

/// Words of one reading in the reply: R, G, B, turntable count, sensor-arm count.
const REC: usize = 5;
/// How long a motor's count must stand still to count as at rest (ms): under 50 motor °/s.
pub(super) const REST_WINDOW_MS: u64 = 20;
/// Most samples a face has (centre and eight).
const MAX_SAMPLES: usize = 9;

/// What one face's program does.
struct FaceSpec<'a> {
    face: usize,
    /// Tilt first (from the arm away, the sensor arm anywhere over or off the cube).
    tilt: bool,
    samples: &'a [(Sample, usize)],
    /// Ring direction (+1 `y`, −1 `y'`) and the quarters the revolution goes on after its
    /// full turn (the next step's spin).
    dir: i8,
    extra: i8,
    /// Table angle (since start-up) where the face starts.
    base: f64,
    /// Bring the sensor arm back to clear and wait for it (the last face).
    last: bool,
}

/// Where the program's results are in the reply.
struct Layout {
    err: Var,
    recs: usize,
    stages: Vec<String>,
    /// The program's own deadline (ms since it started).
    deadline_ms: i32,
    /// None: the face's waits poll the busy flag alone (see [`Builder::wait_idle`]).
    held: Option<Held>,
}

/// The 32-bit word a program left at global offset `at` of its reply (`command` names the
/// command in the error).
pub(super) fn reply_word(
    reply: &crate::robot::ev3::protocol::Reply,
    command: &str,
    at: usize,
) -> Result<i32, Ev3Error> {
    reply
        .i32(crate::robot::ev3::protocol::Slot {
            offset: at,
            kind: SlotKind::I32,
        })
        .map_err(|e| Ev3Error::Malformed {
            command: command.to_string(),
            detail: e.to_string(),
        })
}

/// Where a program's result variable lands in its reply: results are kept in global
/// memory, which the brick sends back (its local memory it does not).
pub(super) fn reply_offset(v: Var) -> usize {
    v.global_offset()
        .unwrap_or_else(|| unreachable!("results are global"))
}

/// The name of the stage a program's timeout path recorded (`code`, counted from 1, as
/// [`Builder::end`] numbers the stages).
pub(super) fn stage_name(stages: &[String], code: i32) -> String {
    usize::try_from(code)
        .ok()
        .and_then(|c| stages.get(c.checked_sub(1)?))
        .cloned()
        .unwrap_or_else(|| format!("stage {code}"))
}

/// Reports to the driver the held-short stops a program recorded ([`Held`]), each under
/// the stage it waited in, as the host's waits report theirs.
pub(super) fn report_held(
    ev3: &mut Ev3,
    reply: &crate::robot::ev3::protocol::Reply,
    command: &str,
    held: Held,
    stages: &[String],
) -> Result<(), Ev3Error> {
    let byte = |v: Var, i: usize| {
        reply
            .i8(crate::robot::ev3::protocol::Slot {
                offset: reply_offset(v) + i,
                kind: SlotKind::I8,
            })
            .map_err(|e| Ev3Error::Malformed {
                command: command.to_string(),
                detail: e.to_string(),
            })
    };
    let n = byte(held.count, 0)? as u8 as usize;
    for i in 0..n.min(HELD_RECORDS) {
        let (stage, port) = (byte(held.at, i)? as i32, byte(held.port, i)?);
        let by = reply_word(reply, command, reply_offset(held.by) + 4 * i)?;
        let port = OutputPort::ALL[(port as usize).min(3)];
        let what = format!("{command}: {}", stage_name(stages, stage));
        ev3.held_short(&what, Some((port, by.abs())));
    }
    for _ in HELD_RECORDS..n {
        ev3.held_short(command, None);
    }
    Ok(())
}

/// The program being built and its variables. Every motor move goes through one routine
/// placed after the main code ([`Builder::call_move`]): a call sets the routine's inputs
/// and a return number, jumps to it, and the routine jumps back by that number, so the
/// dozen moves of a face fit in one command.
pub(super) struct Builder<'a> {
    pub(super) p: Program,
    pub(super) cfg: &'a Config,
    pub(super) arm: OutputPort,
    pub(super) table: OutputPort,
    pub(super) sensor: OutputPort,
    pub(super) now: Var,
    pub(super) cnt: Var,
    pub(super) scnt: Var,
    pub(super) d: Var,
    pub(super) r1: Var,
    pub(super) r2: Var,
    pub(super) r3: Var,
    /// The move routine's target; in the ring, the sample's sensor-arm target.
    pub(super) mt: Var,
    /// The ring sample's turntable count.
    pub(super) ttgt: Var,
    pub(super) rgb: Var,
    pub(super) busy: Var,
    pub(super) k: Var,
    pub(super) idx: Var,
    pub(super) stage: Var,
    pub(super) ret: Var,
    pub(super) no: Var,
    pub(super) nos: Var,
    pub(super) v: Var,
    pub(super) sp: Var,
    /// The wait routine's second motor (the first is `no`).
    pub(super) wn: Var,
    pub(super) timeout: Label,
    pub(super) routine: Label,
    pub(super) returns: Vec<Label>,
    pub(super) stages: Vec<String>,
    pub(super) deadline_ms: i32,
    /// The wait routine ([`Builder::wait_idle`]), its stall window and its callers (by
    /// their stage number, and where each goes on).
    wait: Label,
    wait1: Label,
    stall_ms: i32,
    waits: Vec<(i32, Label)>,
    /// Each motor's target, by port number, as the move routine last set it (a program
    /// without waits has none).
    targets: Option<Var>,
    /// What the wait routine reports: see [`Held`].
    held: Option<Held>,
}

/// Where a program records the moves its waits found held short and stopped with the
/// brake: how many, and for the first [`HELD_RECORDS`] of them the stage, the port
/// number and the degrees short.
#[derive(Clone, Copy, Debug)]
pub(super) struct Held {
    count: Var,
    at: Var,
    port: Var,
    by: Var,
}

/// Held-short stops a program records in full (it counts them all).
const HELD_RECORDS: usize = 4;

impl<'a> Builder<'a> {
    /// A program with its own deadline and the driver's stall window (`stall`,
    /// `timeouts.stall_ms`).
    pub(super) fn new(cfg: &'a Config, deadline_ms: i32, stall: Duration) -> Builder<'a> {
        let mut p = Program::new();
        // The most used first: a local among the first 32 bytes takes one byte an
        // operand, the others two.
        let w1 = |p: &mut Program| p.local(Width::B1);
        let (busy, k, idx, stage) = (w1(&mut p), w1(&mut p), w1(&mut p), w1(&mut p));
        let (ret, no, nos, v, sp) = (w1(&mut p), w1(&mut p), w1(&mut p), w1(&mut p), w1(&mut p));
        let wn = w1(&mut p);
        let w4 = |p: &mut Program| p.local(Width::B4);
        let (now, cnt, d, r1, r3) = (w4(&mut p), w4(&mut p), w4(&mut p), w4(&mut p), w4(&mut p));
        let (mt, r2, scnt, ttgt) = (w4(&mut p), w4(&mut p), w4(&mut p), w4(&mut p));
        let rgb = p.local_array(Width::B4, 3);
        let timeout = p.label();
        let routine = p.label();
        let (wait, wait1) = (p.label(), p.label());
        Builder {
            p,
            cfg,
            arm: cfg.ports.arm,
            table: cfg.ports.turntable,
            sensor: cfg.ports.sensor_arm,
            now,
            cnt,
            scnt,
            d,
            r1,
            r2,
            r3,
            mt,
            ttgt,
            rgb,
            busy,
            k,
            idx,
            stage,
            ret,
            no,
            nos,
            v,
            sp,
            wn,
            timeout,
            routine,
            returns: Vec::new(),
            stages: Vec::new(),
            deadline_ms,
            wait,
            wait1,
            stall_ms: stall.as_millis().min(i32::MAX as u128) as i32,
            waits: Vec::new(),
            targets: None,
            held: None,
        }
    }

    /// The wait routine's memory: the records of held-short stops and the motors' targets,
    /// in global memory after the program's own results (whose operands are then the
    /// shorter). All of it is zeroed here, count and records alike: LEGO's firmware does
    /// not clear a direct command's globals, so a record the program never writes would
    /// come back holding what an earlier command left there (a tacho count, a target),
    /// which two bricks in the same world need not share. Called once, before the first
    /// move.
    pub(super) fn waits_recorded(&mut self) -> Held {
        let (b1, b4) = (Width::B1, Width::B4);
        let p = &mut self.p;
        // One run of words: the stages and the ports (a byte a record), the degrees
        // short, the targets (a word each).
        let bytes = HELD_RECORDS.div_ceil(4);
        let words = 2 * bytes + HELD_RECORDS + 4;
        let at = p.global_array(b4, words);
        let (port, by) = (at.word(bytes), at.word(2 * bytes));
        let held = Held {
            count: p.global(b1),
            at,
            port,
            by,
        };
        self.targets = Some(by.word(HELD_RECORDS));
        p.mov(b1, b1, 0, self.k);
        let zero = p.label();
        p.bind(zero);
        p.write_index(b4, 0, self.k, at);
        p.add(b1, self.k, 1, self.k);
        p.jr_if(Cmp::Lt, b1, self.k, words as i32, zero);
        p.mov(b1, b1, 0, held.count);
        self.held = Some(held);
        held
    }

    fn wait_memory(&self) -> (Var, Held) {
        match (self.targets, self.held) {
            (Some(t), Some(h)) => (t, h),
            _ => unreachable!("a program that waits calls waits_recorded first"),
        }
    }

    /// Names what the program waits for next (reported if the deadline passes).
    pub(super) fn stage(&mut self, what: &str) {
        self.stages.push(what.to_string());
        let id = self.stages.len() as i32;
        self.p.mov(Width::B1, Width::B1, id, self.stage);
    }

    /// Ends a program: the normal path jumps past the timeout path, which stops every
    /// motor and leaves in `err` the stage it was waiting for; then the shared move
    /// routine. The command (or why it cannot be built) and the stages' names.
    pub(super) fn end(
        mut self,
        err: Var,
    ) -> (
        Result<DirectCommand, crate::robot::ev3::protocol::ProgramError>,
        Vec<String>,
    ) {
        let end = self.p.label();
        self.p.jr(end);
        self.p.bind(self.timeout);
        self.p
            .cmd()
            .output_stop(OutputPort::nos(&OutputPort::ALL), false);
        self.p.mov(Width::B1, Width::B4, self.stage, err);
        self.p.jr(end);
        self.emit_routine();
        if !self.waits.is_empty() {
            self.emit_wait();
        }
        self.p.bind(end);
        let stages = std::mem::take(&mut self.stages);
        (self.p.finish(), stages)
    }

    /// To the timeout path once the program's deadline has passed.
    pub(super) fn check_deadline(&mut self) {
        self.p.timer_read(self.now);
        self.p
            .jr_if(Cmp::Gt, Width::B4, self.now, self.deadline_ms, self.timeout);
    }

    /// Waits until no motor of `ports` (one or two) runs a step job, through the wait
    /// routine ([`Builder::emit_wait`]): a motor held short of its target is stopped there
    /// as the host's waits stop it. The call names the stage, which the routine returns by.
    pub(super) fn wait_idle(&mut self, ports: &[OutputPort], what: &str) {
        assert!(
            matches!(ports.len(), 1 | 2),
            "a wait is for one or two motors"
        );
        self.stage(what);
        if self.held.is_none() {
            // A program without the routine (a scan face: the routine does not fit beside
            // it in one command yet) polls the busy flag alone, to its deadline.
            let l = self.p.label();
            self.p.bind(l);
            self.check_deadline();
            self.p.output_test(OutputPort::nos(ports), self.busy);
            self.p.jr_flag(true, self.busy, l);
            return;
        }
        let b1 = Width::B1;
        self.p.mov(b1, b1, ports[0].no() as i32, self.no);
        let entry = match ports {
            [_, second] => {
                self.p.mov(b1, b1, second.no() as i32, self.wn);
                self.wait
            }
            _ => self.wait1,
        };
        let back = self.p.label();
        self.waits.push((self.stages.len() as i32, back));
        self.p.jr(entry);
        self.p.bind(back);
    }

    /// A motor that may still run from before the program (the move of an earlier one)
    /// has `target`, for the wait routine's held-short test.
    pub(super) fn running_to(&mut self, port: OutputPort, target: i32) {
        if self.held.is_none() {
            return;
        }
        let (targets, _) = self.wait_memory();
        self.p
            .write_index(Width::B4, target, port.no() as i32, targets);
    }

    /// The wait routine, for motor `no` and then motor `wn`: it loops until the motor's
    /// step job has ended. A motor whose count has not changed by [`STILL_DEG`] for the
    /// driver's `stall_ms` while it runs, within [`HELD_SHORT_DEG`] of its target, is held
    /// short (its step job would never end: LEGO's motor driver pushes on at up to full
    /// power, `ev3-firmware-audit.md` B3): it is stopped with the brake, the move counts as
    /// done and the program records it ([`Held`]), as the host's waits do
    /// ([stall detection](crate::robot::ev3::driver::motion#stall-detection)). Standing
    /// still farther from its target, it is left to the program's deadline. The count is
    /// the brick's and so is the clock, so no speed reading is needed to tell a motor
    /// standing still. Then back to the caller numbered by the stage.
    fn emit_wait(&mut self) {
        let (b1, b4) = (Width::B1, Width::B4);
        let (targets, h) = self.wait_memory();
        let (last, since) = (self.r1, self.r3);
        let (port, bit, more, lp, moved, next, done) = (
            self.p.label(),
            self.p.label(),
            self.p.label(),
            self.p.label(),
            self.p.label(),
            self.p.label(),
            self.p.label(),
        );
        self.p.bind(moved);
        self.p.mov(b4, b4, self.cnt, last);
        self.p.mov(b4, b4, self.now, since);
        self.p.jr(lp);
        // A wait for one motor enters here, one for two below.
        self.p.bind(self.wait1);
        self.p.mov(Width::B1, Width::B1, self.no, self.wn);
        self.p.bind(self.wait);
        self.p.bind(port);
        // The motor's bit (OUTPUT_TEST and OUTPUT_STOP take a set of motors).
        self.p.mov(b1, b1, 1, self.nos);
        self.p.mov(b1, b1, self.no, self.sp);
        self.p.bind(bit);
        self.p.jr_if(Cmp::LtEq, b1, self.sp, 0, more);
        self.p.add(b1, self.nos, self.nos, self.nos);
        self.p.sub(b1, self.sp, 1, self.sp);
        self.p.jr(bit);
        self.p.bind(more);
        self.p.emit(
            &[op::OUTPUT_GET_COUNT],
            &[0.into(), self.no.into(), last.into()],
        );
        self.p.timer_read(since);
        self.p.bind(lp);
        self.check_deadline();
        self.p.emit(
            &[op::OUTPUT_TEST],
            &[0.into(), self.nos.into(), self.busy.into()],
        );
        self.p.jr_flag(false, self.busy, next);
        self.p.emit(
            &[op::OUTPUT_GET_COUNT],
            &[0.into(), self.no.into(), self.cnt.into()],
        );
        self.p.sub(b4, self.cnt, last, self.d);
        self.p.jr_if(Cmp::GtEq, b4, self.d, STILL_DEG, moved);
        self.p.jr_if(Cmp::LtEq, b4, self.d, -STILL_DEG, moved);
        self.p.sub(b4, self.now, since, self.d);
        self.p.jr_if(Cmp::Lt, b4, self.d, self.stall_ms, lp);
        // Still for the stall window: held short, or stalled (left to the deadline).
        self.p.read_index(b4, targets, self.no, self.d);
        self.p.sub(b4, self.d, self.cnt, self.d);
        self.p.jr_if(Cmp::Gt, b4, self.d, HELD_SHORT_DEG, lp);
        self.p.jr_if(Cmp::Lt, b4, self.d, -HELD_SHORT_DEG, lp);
        self.p
            .emit(&[op::OUTPUT_STOP], &[0.into(), self.nos.into(), 1.into()]);
        let skip = self.p.label();
        self.p
            .jr_if(Cmp::GtEq, b1, h.count, HELD_RECORDS as i32, skip);
        self.p.write_index(b1, self.stage, h.count, h.at);
        self.p.write_index(b1, self.no, h.count, h.port);
        self.p.write_index(b4, self.d, h.count, h.by);
        self.p.bind(skip);
        self.p.add(b1, h.count, 1, h.count);
        // The second motor, if another.
        self.p.bind(next);
        self.p.jr_if(Cmp::Eq, b1, self.no, self.wn, done);
        self.p.mov(b1, b1, self.wn, self.no);
        self.p.jr(port);
        self.p.bind(done);
        for (id, back) in self.waits.clone() {
            self.p.jr_if(Cmp::Eq, b1, self.stage, id, back);
        }
    }

    /// Loops until the sensor arm's count is within the scan's tolerance of `target`.
    fn wait_sensor_near(&mut self, target: i32, what: &str) {
        self.stage(what);
        let l = self.p.label();
        self.p.bind(l);
        self.check_deadline();
        self.p.get_count(self.sensor, self.scnt);
        self.p.sub(Width::B4, self.scnt, target, self.d);
        self.abs_d();
        let tol = self.cfg.scan.sensor_tolerance;
        self.p.jr_if(Cmp::Gt, Width::B4, self.d, tol, l);
    }

    pub(super) fn abs_d(&mut self) {
        let pos = self.p.label();
        self.p.jr_if(Cmp::GtEq, Width::B4, self.d, 0, pos);
        self.p.sub(Width::B4, 0, self.d, self.d);
        self.p.bind(pos);
    }

    /// Waits until `port`'s motor has come to rest: its count unchanged over `ms` (at
    /// least [`REST_WINDOW_MS`]), under the stage waited for before. A step job ends when
    /// its count is reached, not when the motor stops: LEGO's motor driver reaches the
    /// count of a move at about a third of its speed and its brake then pulls the
    /// overshoot back, which takes far longer than a fixed pause (`ev3-firmware-audit.md`
    /// B5, measured on the firmware brick). A tilt started before the arm has settled at
    /// hold strikes the cube instead of rolling it.
    pub(super) fn settle(&mut self, port: OutputPort, ms: u64) {
        let l = self.p.label();
        self.p.bind(l);
        self.check_deadline();
        // `r2` is the move routine's scratch, free between moves.
        self.p.get_count(port, self.r2);
        self.pause(ms.max(REST_WINDOW_MS));
        self.p.get_count(port, self.d);
        self.p.jr_if(Cmp::Neq, Width::B4, self.d, self.r2, l);
    }

    pub(super) fn pause(&mut self, ms: u64) {
        if ms > 0 {
            self.p.timer_wait(ms.min(i32::MAX as u64) as i32, self.cnt);
            self.p.timer_ready(self.cnt);
        }
    }

    /// Starts `port` towards the absolute `target` (a constant, or the variable `mt`
    /// itself) at `speed` percent with ramps `r`, through the move routine.
    pub(super) fn call_move(
        &mut self,
        port: OutputPort,
        target: Operand,
        speed: i8,
        r: (u32, u32),
    ) {
        let b1 = Width::B1;
        self.p.mov(b1, b1, port.no() as i32, self.no);
        self.p.mov(b1, b1, port.bit() as i32, self.nos);
        if target != Operand::Var(self.mt) {
            self.p.mov(Width::B4, Width::B4, target, self.mt);
        }
        let v = speed.unsigned_abs().clamp(1, 100) as i32;
        self.p.mov(b1, b1, v, self.v);
        self.p.mov(Width::B4, Width::B4, r.0 as i32, self.r1);
        self.p.mov(Width::B4, Width::B4, r.1 as i32, self.r3);
        let back = self.p.label();
        self.returns.push(back);
        self.p.mov(b1, b1, self.returns.len() as i32, self.ret);
        self.p.jr(self.routine);
        self.p.bind(back);
    }

    /// The move routine: reads the motor's count, moves by the difference to `mt` (none
    /// within 2°, the driver's deadband), with the ramps when they fit in the distance and
    /// none when they do not, then jumps back to the caller numbered `ret`. The driver's
    /// [absolute targets](crate::robot::ev3::driver::motion#absolute-targets), on the brick: no
    /// OUTPUT_START after STEP_SPEED (the job starts itself; a START that reaches a motor
    /// whose short job has already ended runs it on, unregulated and not busy).
    pub(super) fn emit_routine(&mut self) {
        use crate::robot::ev3::protocol::op as o;
        let (b1, b4) = (Width::B1, Width::B4);
        self.p.bind(self.routine);
        if let Some(targets) = self.targets {
            self.p.write_index(b4, self.mt, self.no, targets);
        }
        self.p.emit(
            &[o::OUTPUT_GET_COUNT],
            &[0.into(), self.no.into(), self.cnt.into()],
        );
        self.p.sub(b4, self.mt, self.cnt, self.d);
        self.p.mov(b1, b1, self.v, self.sp);
        let (pos, back, go) = (self.p.label(), self.p.label(), self.p.label());
        self.p.jr_if(Cmp::GtEq, b4, self.d, 0, pos);
        self.p.sub(b4, 0, self.d, self.d);
        self.p.sub(b1, 0, self.v, self.sp);
        self.p.bind(pos);
        self.p.jr_if(Cmp::LtEq, b4, self.d, 2, back);
        self.p.sub(b4, self.d, self.r1, self.r2);
        self.p.sub(b4, self.r2, self.r3, self.r2);
        self.p.jr_if(Cmp::GtEq, b4, self.r2, 0, go);
        self.p.mov(b4, b4, 0, self.r1);
        self.p.mov(b4, b4, 0, self.r3);
        self.p.mov(b4, b4, self.d, self.r2);
        self.p.bind(go);
        let nos: Operand = self.nos.into();
        self.p.emit(&[o::OUTPUT_RESET], &[0.into(), nos]);
        self.p.emit(
            &[o::OUTPUT_STEP_SPEED],
            &[
                0.into(),
                nos,
                self.sp.into(),
                self.r1.into(),
                self.r2.into(),
                self.r3.into(),
                1.into(),
            ],
        );
        self.p.bind(back);
        for (i, &l) in self.returns.clone().iter().enumerate() {
            self.p.jr_if(Cmp::Eq, b1, self.ret, i as i32 + 1, l);
        }
    }

    /// Copies the readings of `rgb`, `cnt` and `scnt` to record `idx` of `recs`.
    fn store(&mut self, recs: Var) {
        let words = [
            self.rgb,
            self.rgb.word(1),
            self.rgb.word(2),
            self.cnt,
            self.scnt,
        ];
        for (j, w) in words.into_iter().enumerate() {
            if j > 0 {
                self.p.add(Width::B1, self.idx, 1, self.idx);
            }
            self.p.write_index(Width::B4, w, self.idx, recs);
        }
    }

    fn read_rgb(&mut self) {
        let input = self.cfg.ports.color_sensor - 1;
        let out = [self.rgb, self.rgb.word(1), self.rgb.word(2)];
        self.p
            .ready_raw(input, device::COLOR, device::COLOR_RGB_RAW, &out);
    }
}

impl MindCub3r {
    /// Puts the colour sensor in RGB-RAW, at rest. LEGO's firmware starts a colour sensor
    /// in mode 0; the first READY_RAW in another mode switches it and holds the program
    /// until the sensor sends in that mode (up to 1.2 s, `MAX_DEVICE_BUSY_TIME`). Inside a
    /// scan program that hold falls between the turntable count a sample is filed with and
    /// the reading itself, while the table turns (22-30 ms, 6-8 table degrees on the
    /// firmware brick, `ev3-firmware-audit.md` A1). A sensor that cannot switch gives
    /// 'not a number' values, ignored here: the scan's plausibility check catches them.
    pub(super) fn sensor_mode(&mut self) -> Result<(), Ev3Error> {
        let input = self.config.ports.color_sensor - 1;
        let mut c = DirectCommand::new();
        c.ready_raw(input, device::COLOR, device::COLOR_RGB_RAW, 3);
        self.ev3
            .call(
                &format!("READY_RAW colour sensor port {} (mode RGB-RAW)", input + 1),
                &c,
            )
            .map(|_| ())
    }

    /// The colour-sensor scan with one program on the brick per face (see the module docs).
    pub(super) fn scan_on_brick(
        &mut self,
        size: Size,
        progress: &mut dyn FnMut(ScanProgress),
        preview: &mut dyn FnMut(&RawScan),
    ) -> Result<RawScan, RobotError> {
        self.ensure_homed()?;
        self.frame = Some((size, Permutation::identity(size.stickers())));
        let turns = revolution_turns();
        let dirs: [i8; 6] = std::array::from_fn(|i| turns[i].0);
        let map = scan_map_turning(size, self.config.scan.sensor_side, &dirs);
        let total = map.len();
        let mut facelets = vec![[0.0; 3]; size.stickers()];
        let mut missed = Vec::new();
        let mut done = 0;
        // Homed: the reading begins.
        progress(ScanProgress {
            done,
            total,
            face_step: 0,
            readings: &[],
        });
        for (step, prims) in scan_steps().iter().enumerate() {
            self.check_interrupt()?;
            let samples: Vec<(Sample, usize)> = map
                .iter()
                .filter(|(s, _, _)| *s == step)
                .map(|&(_, s, i)| (s, i))
                .collect();
            if step + 1 == scan_steps().len() {
                let mut unread: Vec<usize> = samples.iter().map(|&(_, i)| i).collect();
                unread.extend_from_slice(&missed);
                let partial = RawScan::new(size, Scale::Ev3Raw, facelets.clone());
                preview(&partial.with_unread(&unread));
            }
            let spec = FaceSpec {
                face: step,
                tilt: prims.contains(&Primitive::Tilt),
                samples: &samples,
                dir: turns[step].0,
                extra: turns[step].1,
                base: self.table_deg,
                last: step + 1 == scan_steps().len(),
            };
            let readings = self.guard(|r| r.run_face(size, &spec))?;
            let mut read = Vec::with_capacity(samples.len());
            for ((_, index), rgb) in samples.iter().zip(readings) {
                match rgb {
                    Some(rgb) => {
                        facelets[*index] = rgb;
                        read.push((*index, rgb));
                    }
                    None => missed.push(*index),
                }
                done += 1;
            }
            progress(ScanProgress {
                done,
                total,
                face_step: step,
                readings: &read,
            });
        }
        let at_rest = missed.len();
        if !missed.is_empty() {
            // Samples the program could not take within their window: read at rest.
            let again = self.rescan(&missed)?;
            for (i, rgb) in missed.into_iter().zip(again) {
                facelets[i] = rgb;
            }
        }
        let mut scan = RawScan::new(size, Scale::Ev3Raw, facelets);
        scan.provenance = Some(serde_json::json!({
            "source": "ev3-colour-sensor",
            "port": self.ev3.port_name(),
            "sensor_side": self.config.scan.sensor_side,
            "on_brick": true,
            "read_at_rest": at_rest,
        }));
        Ok(scan)
    }

    /// Reads only some faces ([`FaceRead`]: the primitives that bring each up, which face of
    /// the cube as it sits now it is): readings at the facelet indices of the cube as it
    /// sat when the reading began (`None`: not read), which starts a new frame as a scan
    /// does. On the brick each face is the scan's own program (a tilt that ends the moves
    /// before it, the revolution, a spin that begins the next face's moves folded into the
    /// revolution); otherwise each face is read as the host-polled scan reads it.
    pub fn read_faces(
        &mut self,
        size: Size,
        steps: &[FaceRead],
    ) -> Result<Vec<Option<[f64; 3]>>, RobotError> {
        self.ensure_homed()?;
        self.begin_frame(size);
        let side = self.config.scan.sensor_side;
        let on_brick = self.config.scan.on_brick;
        let mut out = vec![None; size.stickers()];
        let mut frame = Permutation::identity(size.stickers());
        let mut missed = Vec::new();
        let mut folded = false;
        for (k, step) in steps.iter().enumerate() {
            self.check_interrupt()?;
            for &p in &step.before {
                frame = frame.then(&perm_of(size, p));
            }
            // What the host still has to do before this face (a spin may have been done
            // by the previous face's revolution).
            let mut host: Vec<Primitive> = step.before[usize::from(folded)..].to_vec();
            let tilt = on_brick && host.last() == Some(&Primitive::Tilt);
            if tilt {
                host.pop();
            }
            for p in host {
                self.execute(p)?;
            }
            let next = steps.get(k + 1).map(|n| n.before.as_slice()).unwrap_or(&[]);
            let (dir, extra) = match next.first() {
                Some(&Primitive::Spin(e)) if on_brick => (e.signum(), e),
                _ => (1, 0),
            };
            folded = extra != 0;
            let samples: Vec<(Sample, usize)> = ring_samples(size, side, dir)
                .into_iter()
                .map(|s| (s, frame.0[s.position] as usize))
                .collect();
            if on_brick {
                // The sensor arm goes back to clear where the host moves the cube next.
                let host_next = next.len() > usize::from(folded)
                    && !(next.len() == usize::from(folded) + 1
                        && next.last() == Some(&Primitive::Tilt));
                let spec = FaceSpec {
                    face: step.face,
                    tilt,
                    samples: &samples,
                    dir,
                    extra,
                    base: self.table_deg,
                    last: k + 1 == steps.len() || host_next,
                };
                let readings = self.guard(|r| r.run_face(size, &spec))?;
                for ((_, index), rgb) in samples.iter().zip(readings) {
                    match rgb {
                        Some(rgb) => out[*index] = Some(rgb),
                        None => missed.push(*index),
                    }
                }
            } else {
                let readings = self.guard(|r| r.scan_face(size, &samples))?;
                for ((_, index), rgb) in samples.iter().zip(readings) {
                    out[*index] = Some(rgb);
                }
            }
        }
        if !missed.is_empty() {
            let again = self.rescan(&missed)?;
            for (i, rgb) in missed.into_iter().zip(again) {
                out[i] = Some(rgb);
            }
        }
        Ok(out)
    }

    /// Builds, sends and reads back one face's program; the readings in sample order
    /// (`None`: not taken within its window, to be read at rest).
    fn run_face(
        &mut self,
        size: Size,
        spec: &FaceSpec<'_>,
    ) -> Result<Vec<Option<[f64; 3]>>, RobotError> {
        let t = self.config.turntable.clone();
        let end_deg = spec.base + spec.dir as f64 * 360.0 + 90.0 * spec.extra as f64;
        let (cmd, layout) = self.face_program(size, spec, end_deg)?;
        let name = format!("scan program of face {}", spec.face);
        let wait =
            Duration::from_millis(layout.deadline_ms.max(0) as u64) + self.ev3.timeouts.reply;
        // Where the program may take each motor, for the driver's plausibility checks.
        let (a, s) = (&self.config.arm, &self.config.sensor_arm);
        let arm = [a.away, a.clear, a.hold, a.hold_2x2, a.tilt_apex];
        let sensor = [s.parked, s.clear, s.centre, s.corner_2x2]
            .into_iter()
            .chain(s.edge)
            .chain(s.corner);
        let (slo, shi) = sensor.fold((i32::MAX, i32::MIN), |(l, h), v| (l.min(v), h.max(v)));
        let over = (t.over_rotation as f64 * t.ratio).abs().round() as i32;
        let (from, to) = (self.table.target, self.table_target(end_deg));
        self.ev3.may_move(
            self.arm.port,
            *arm.iter().min().unwrap_or(&0),
            *arm.iter().max().unwrap_or(&0),
        );
        self.ev3.may_move(self.sensor.port, slo, shi);
        self.ev3
            .may_move(self.table.port, from.min(to) - over, from.max(to) + over);
        let reply = self.ev3.call_within(&name, &cmd, wait);
        // Whatever happened, the motors moved on the brick.
        self.ev3.forget_counts();
        let reply = reply?;
        if let Some(held) = layout.held {
            report_held(&mut self.ev3, &reply, &name, held, &layout.stages)?;
        }
        let word = |at: usize| reply_word(&reply, &name, at);
        let err = word(reply_offset(layout.err))?;
        if err != 0 {
            self.arm_state = ArmState::Unknown;
            self.sensor_at = None;
            return Err(RobotError::ProgramTimeout {
                face: spec.face,
                stage: stage_name(&layout.stages, err),
                ms: layout.deadline_ms.max(0) as u64,
            });
        }
        // The program's motions, in the bookkeeping.
        if spec.tilt {
            self.moved(Primitive::Tilt);
        }
        self.table_deg = end_deg;
        self.table.target = self.table_target(end_deg);
        if spec.extra != 0 {
            self.moved(Primitive::Spin(spec.extra));
        }
        self.arm_state = ArmState::Away;
        self.arm.target = self.config.arm.away;
        self.sensor.target = self.config.sensor_arm.clear;
        self.sensor_at = spec.last.then_some(self.config.sensor_arm.clear);
        let mut out = Vec::with_capacity(spec.samples.len());
        for (i, (s, _)) in spec.samples.iter().enumerate() {
            let at = layout.recs + 4 * REC * i;
            let rgb = [word(at)?, word(at + 4)?, word(at + 8)?].map(|v| v as f64);
            let (table, sensor) = (word(at + 12)?, word(at + 16)?);
            let target = self.sample_target(size, s);
            let mut ok = (sensor - target).abs() <= self.config.scan.sensor_tolerance;
            // A reading the sensor cannot give is a reply garbled on the way: read again.
            ok &= device::rgb_raw_possible(&rgb);
            if s.kind != SensorPosition::Centre {
                let angle =
                    (table - self.table_zero) as f64 / (t.ratio * t.sign as f64) - spec.base;
                ok &= (angle - s.angle).abs() <= self.config.scan.window;
            }
            out.push(ok.then_some(rgb));
        }
        Ok(out)
    }

    /// One face's program and where its results land.
    fn face_program(
        &self,
        size: Size,
        spec: &FaceSpec<'_>,
        end_deg: f64,
    ) -> Result<(DirectCommand, Layout), RobotError> {
        let cfg = &self.config;
        let (a, t, s) = (&cfg.arm, &cfg.turntable, &cfg.sensor_arm);
        let hold = self.hold_angle(size);
        let dir_motor = spec.dir as i32 * t.sign as i32;
        let end_count = self.table_target(end_deg);
        let ring: Vec<Sample> = spec
            .samples
            .iter()
            .map(|(s, _)| *s)
            .filter(|s| s.kind != SensorPosition::Centre)
            .collect();
        let centre = spec
            .samples
            .iter()
            .find(|(s, _)| s.kind == SensorPosition::Centre)
            .map(|(s, _)| self.sample_target(size, s));
        let ring_targets: Vec<i32> = ring.iter().map(|x| self.sample_target(size, x)).collect();
        let table_targets: Vec<i32> = ring
            .iter()
            .map(|x| self.table_target(spec.base + x.angle))
            .collect();
        // Ramps of the ring's sensor-arm moves: the configured ramp, or less if the ring's
        // positions are closer together than two ramps.
        let closest = ring_targets
            .windows(2)
            .map(|w| (w[1] - w[0]).unsigned_abs())
            .filter(|&d| d > 2)
            .min()
            .unwrap_or(u32::MAX);
        let ring_ramp = s.ramp.min(closest.saturating_sub(4) / 2);
        let deadline_ms = self.face_deadline_ms(size, spec, end_deg);
        let mut b = Builder::new(cfg, deadline_ms, self.ev3.timeouts.stall);
        let err = b.p.global(Width::B4);
        let recs = b.p.global_array(Width::B4, REC * MAX_SAMPLES);
        let starts = b.p.global_array(Width::B4, ring.len().max(1));
        b.p.mov(Width::B4, Width::B4, 0, err);
        for (i, &st) in ring_targets.iter().enumerate() {
            b.p.mov(Width::B4, Width::B4, st, starts.word(i));
        }
        let (arm, table, sensor) = (b.arm, b.table, b.sensor);
        let c = |v: i32| Operand::Const(v);
        if spec.tilt {
            // Arm to hold while the sensor arm goes out of its way; tilt once both are there.
            b.running_to(table, self.table.target);
            b.wait_idle(&[table], "the turntable's revolution");
            b.call_move(arm, c(hold), a.speed, (a.ramp_up, a.ramp_down));
            b.call_move(sensor, c(s.clear), s.speed, (s.ramp, s.ramp));
            b.wait_idle(&[arm, sensor], "tilt arm to hold, sensor arm to clear");
            b.settle(arm, a.settle_ms);
            b.call_move(arm, c(a.tilt_apex), a.tilt_speed, (a.ramp_up, a.ramp_down));
            b.wait_idle(&[arm], "tilt: arm to apex");
            b.call_move(arm, c(hold), a.back_speed, (a.ramp_up, a.ramp_down * 2));
            b.wait_idle(&[arm], "tilt: arm back to hold");
            // The arm leaves at once: only a pause between moves.
            b.pause(a.settle_ms);
        }
        // Arm away while the sensor arm comes in over the cube.
        let first = ring_targets.first().copied().or(centre).unwrap_or(s.clear);
        b.call_move(arm, c(a.away), a.speed, (a.ramp_up, a.ramp_down));
        b.call_move(sensor, c(first), s.speed, (s.ramp, s.ramp));
        // The revolution may start once the arm is past `clear`, on its way away.
        b.stage("tilt arm clear of the cube");
        let away = b.p.label();
        b.p.bind(away);
        b.check_deadline();
        b.p.get_count(arm, b.cnt);
        b.p.jr_if(Cmp::Gt, Width::B4, b.cnt, a.clear.max(a.away), away);
        // The revolution, the ring read on the fly.
        b.call_move(table, c(end_count), t.scan_speed, (t.ramp_up, t.ramp_down));
        if !ring.is_empty() {
            let first_rec = if centre.is_some() { REC as i32 } else { 0 };
            // Sample k's turntable count: the first one's plus k steps (within a count of
            // each sample's own rounding).
            let t0 = table_targets[0];
            let step = if ring.len() > 1 {
                (table_targets[ring.len() - 1] - t0) as f64 / (ring.len() - 1) as f64
            } else {
                0.0
            }
            .round() as i32;
            b.p.mov(Width::B1, Width::B1, 0, b.k);
            let top = b.p.label();
            b.p.bind(top);
            b.p.read_index(Width::B4, starts, b.k, b.mt);
            let mt = Operand::Var(b.mt);
            b.call_move(sensor, mt, s.speed, (ring_ramp, ring_ramp));
            b.p.mov(Width::B1, Width::B4, b.k, b.ttgt);
            b.p.mul(Width::B4, b.ttgt, step, b.ttgt);
            b.p.add(Width::B4, b.ttgt, t0, b.ttgt);
            b.stage("the turntable reaching a sticker");
            let (wait, read) = (b.p.label(), b.p.label());
            b.p.bind(wait);
            b.check_deadline();
            b.p.get_count(table, b.cnt);
            let before = if dir_motor > 0 { Cmp::Lt } else { Cmp::Gt };
            b.p.jr_if(before, Width::B4, b.cnt, b.ttgt, wait);
            b.p.get_count(sensor, b.scnt);
            b.p.sub(Width::B4, b.scnt, b.mt, b.d);
            b.abs_d();
            b.p.jr_if(Cmp::LtEq, Width::B4, b.d, cfg.scan.sensor_tolerance, read);
            // The sensor arm is not there yet: wait while the sticker is within the window.
            if dir_motor > 0 {
                b.p.sub(Width::B4, b.cnt, b.ttgt, b.d);
            } else {
                b.p.sub(Width::B4, b.ttgt, b.cnt, b.d);
            }
            let window = (cfg.scan.window * t.ratio).round() as i32;
            b.p.jr_if(Cmp::Lt, Width::B4, b.d, window, wait);
            b.p.bind(read);
            b.read_rgb();
            b.p.mul(Width::B1, b.k, REC as i32, b.idx);
            b.p.add(Width::B1, b.idx, first_rec, b.idx);
            b.store(recs);
            b.p.add(Width::B1, b.k, 1, b.k);
            b.p.jr_if(Cmp::Lt, Width::B1, b.k, ring.len() as i32, top);
        }
        if let Some(centre) = centre {
            // The centre last: it is on the turntable's axis, so it reads the same while
            // the table runs on or slows down, and the ring's first sticker is not missed
            // for want of time to get from the centre to the corner radius.
            b.call_move(sensor, c(centre), s.speed, (s.ramp, s.ramp));
            b.wait_sensor_near(centre, "sensor arm over the centre");
            b.read_rgb();
            b.p.get_count(table, b.cnt);
            b.p.mov(Width::B1, Width::B1, 0, b.idx);
            b.store(recs);
        }
        // The sensor arm goes out at once (the next face's tilt waits for it).
        b.call_move(sensor, c(s.clear), s.speed, (s.ramp, s.ramp));
        if spec.last {
            b.wait_idle(&[table, sensor], "the turntable's revolution");
        }
        let held = b.held;
        let (cmd, stages) = b.end(err);
        let cmd = cmd.map_err(|why| RobotError::Program {
            face: spec.face,
            why,
        })?;
        Ok((
            cmd,
            Layout {
                err,
                recs: reply_offset(recs),
                stages,
                deadline_ms,
                held,
            },
        ))
    }

    /// The program's own time limit: twice the nominal time of its moves and pauses (as
    /// the driver's [time budgets](crate::robot::ev3::driver::motion#time-budgets)), plus the
    /// configured allowance.
    fn face_deadline_ms(&self, size: Size, spec: &FaceSpec<'_>, end_deg: f64) -> i32 {
        let (a, t, s) = (
            &self.config.arm,
            &self.config.turntable,
            &self.config.sensor_arm,
        );
        let arm_ramps = (a.ramp_up, a.ramp_down);
        let hold = self.hold_angle(size) as f64;
        let mut secs = 0.0;
        if spec.tilt {
            let swing = (a.tilt_apex as f64 - hold).abs();
            secs += self
                .arm
                .nominal_secs(hold - a.away as f64, a.speed, arm_ramps)
                + self.arm.nominal_secs(swing, a.tilt_speed, arm_ramps)
                + self.arm.nominal_secs(swing, a.back_speed, arm_ramps)
                + self
                    .sensor
                    .nominal_secs((s.centre - s.clear) as f64, s.speed, (s.ramp, s.ramp))
                + 2.0 * a.settle_ms as f64 / 1000.0;
        }
        let turn = (end_deg - spec.base).abs() * t.ratio;
        secs += self
            .arm
            .nominal_secs(hold - a.away as f64, a.speed, arm_ramps)
            + a.settle_ms as f64 / 1000.0
            + self
                .table
                .nominal_secs(turn, t.scan_speed, (t.ramp_up, t.ramp_down))
            + 2.0
                * self
                    .sensor
                    .nominal_secs((s.centre - s.clear) as f64, s.speed, (s.ramp, s.ramp));
        let ms = 2000.0 * secs + self.ev3.timeouts.move_extra.as_millis() as f64;
        ms.min(i32::MAX as f64) as i32
    }

    /// The bookkeeping of a whole-cube move the brick made (as [`MindCub3r::execute`] keeps it).
    fn moved(&mut self, p: Primitive) {
        self.orientation = self.orientation.after(p);
        if let Some((size, frame)) = self.frame.take() {
            self.frame = Some((size, frame.then(&perm_of(size, p))));
        }
        self.last = Some(p);
    }
}
