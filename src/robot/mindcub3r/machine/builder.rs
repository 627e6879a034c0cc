//! What every program cubot builds for the brick shares: [`Builder`], with the move
//! routine (one absolute move, emitted once a program and jumped to), the wait routine (a
//! motor's job ended or held short and braked, [`Held`]), the program's own deadline and
//! its named stages; and the reading of a program's reply ([`reply_word`], [`stage_name`],
//! [`report_held`]). The scan ([`super::onbrick`]), the chunks of moves
//! ([`super::chunk`]) and homing ([`super::homing`]) are built from it.
//!
//! Level: robot (part of the machine). No printing.

use super::*;
use crate::robot::ev3::driver::{HELD_SHORT_DEG, STILL_DEG};
use crate::robot::ev3::protocol::{op, Cmp, Label, Operand, Program, SlotKind, Var, Width};

/// How long a motor's count must stand still to count as at rest (ms): under 50 motor °/s.
pub(super) const REST_WINDOW_MS: u64 = 20;

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
/// [`Builder::end`] numbers the stages); a code no stage has is a garbled reply.
pub(super) fn stage_name(stages: &[String], code: i32, command: &str) -> Result<String, Ev3Error> {
    usize::try_from(code)
        .ok()
        .and_then(|c| stages.get(c.checked_sub(1)?))
        .cloned()
        .ok_or_else(|| Ev3Error::Malformed {
            command: command.to_string(),
            detail: format!("stage {code} of a program with {} stages", stages.len()),
        })
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
        let what = format!("{command}: {}", stage_name(stages, stage, command)?);
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
    pub(super) held: Option<Held>,
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
        // What the wait is for, and for which motor: a stage a program ends in is named to
        // the user.
        let motors: Vec<String> = ports.iter().map(|p| p.to_string()).collect();
        self.stage(&format!(
            "{what} (motor{} {})",
            if ports.len() == 1 { "" } else { "s" },
            motors.join(" and ")
        ));
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
    pub(super) fn wait_sensor_near(&mut self, target: i32, what: &str) {
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
    pub(super) fn store(&mut self, recs: Var) {
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

    pub(super) fn read_rgb(&mut self) {
        let input = self.cfg.ports.color_sensor - 1;
        let out = [self.rgb, self.rgb.word(1), self.rgb.word(2)];
        self.p
            .ready_raw(input, device::COLOR, device::COLOR_RGB_RAW, &out);
    }
}
