//! The simulated brick's virtual-machine opcodes: arithmetic, moves between integer
//! widths, compares, relative jumps, the program timer and indexed reads and writes, so a
//! direct command can run a small program on the brick (wait for a motor count in a loop,
//! read the colour sensor, store the reading). Each opcode reads its operands at the width
//! the firmware gives it (`lms2012.c` `PrimParPointer`: a constant is widened to 32 bits and
//! then read at the opcode's width, a variable is read at its address at that width), as
//! [Programs on the brick](crate::robot::ev3::protocol#programs-on-the-brick) documents.
//!
//! Level: robot (simulators; uses [`crate::robot::ev3::protocol`]). No I/O, no printing.

use super::*;
use crate::robot::ev3::protocol::ops::{Instr, Kind, Walk};

/// A constant as a parameter of `kind` reads it: the firmware widens it to 32 bits, the
/// operation reads its own width there (two's complement truncation, sign-extended).
pub(super) fn narrow(kind: Kind, v: i32) -> i32 {
    match kind {
        Kind::D8 | Kind::Str => v as i8 as i32,
        Kind::D16 => v as i16 as i32,
        Kind::D32 | Kind::F => v,
    }
}

/// The "not a number" pattern the firmware's moves carry over between widths
/// (`DATA8_NAN` 0x80, `DATA16_NAN` 0x8000, `DATA32_NAN` 0x80000000).
fn nan(kind: Kind) -> i32 {
    match kind {
        Kind::D8 | Kind::Str => i8::MIN as i32,
        Kind::D16 => i16::MIN as i32,
        Kind::D32 | Kind::F => i32::MIN,
    }
}

/// Where a variable lives: global or local memory, byte offset.
pub(super) type Var = (bool, usize);

impl Brick {
    /// Runs one VM operation of the [table](crate::robot::ev3::protocol::ops): arithmetic,
    /// moves, compares, jumps, the program timer, indexed reads and writes. Each reads its
    /// parameters at the kinds the table gives them.
    pub(super) fn vm_op(
        &mut self,
        ins: &Instr,
        code: &Walk,
        s: &mut Suspended,
    ) -> Result<(), String> {
        let c = ins.op.code;
        match c {
            op::JR => {
                let off = self.int(ins, 0, s)?;
                self.jump(ins, code, s, off)?;
            }
            op::JR_FALSE | op::JR_TRUE => {
                let flag = self.int(ins, 0, s)?;
                let off = self.int(ins, 1, s)?;
                if (flag != 0) == (c == op::JR_TRUE) {
                    self.jump(ins, code, s, off)?;
                }
            }
            op::TIMER_READ => {
                let dst = self.dst(ins, 0)?;
                let ms = ((self.clock - s.started) * 1000.0).floor() as i32;
                self.store(s, dst, Kind::D32, ms)?;
            }
            op::TIMER_READ_US => {
                // The free-running clock since the brick booted, wrapping as LEGO's does.
                let dst = self.dst(ins, 0)?;
                let us = (self.clock * 1e6).floor() as u64 as u32 as i32;
                self.store(s, dst, Kind::D32, us)?;
            }
            _ => match c & 0xFC {
                0x10 | 0x14 | 0x18 => self.arith(ins, s)?,
                0x30 | 0x34 | 0x38 => self.mov(ins, s)?,
                0x44..=0x58 => {
                    let (a, b) = (self.int(ins, 0, s)?, self.int(ins, 1, s)?);
                    let dst = self.dst(ins, 2)?;
                    self.store(s, dst, Kind::D8, holds(c - 0x40, a, b) as i32)?;
                }
                0x64..=0x78 => {
                    let (a, b) = (self.int(ins, 0, s)?, self.int(ins, 1, s)?);
                    let off = self.int(ins, 2, s)?;
                    if holds(c - 0x60, a, b) {
                        self.jump(ins, code, s, off)?;
                    }
                }
                0xC8 => self.read_indexed(ins, s)?,
                0xCC => self.write_indexed(ins, s)?,
                _ => return Err(format!("{} not simulated", ins.op.name)),
            },
        }
        Ok(())
    }

    /// ADD, SUB, MUL: SOURCE1, SOURCE2, *DESTINATION (wrapping, as the firmware's C
    /// arithmetic does).
    fn arith(&mut self, ins: &Instr, s: &mut Suspended) -> Result<(), String> {
        let a = self.int(ins, 0, s)?;
        let b = self.int(ins, 1, s)?;
        let dst = self.dst(ins, 2)?;
        let v = match ins.op.code & 0xFC {
            0x10 => a.wrapping_add(b),
            0x14 => a.wrapping_sub(b),
            _ => a.wrapping_mul(b),
        };
        self.store(s, dst, ins.args[2].par.kind, v)
    }

    /// MOVEx_y: SOURCE at width x into *DESTINATION at width y, as `c_move.c` does: a move
    /// within one width copies; between widths the "not a number" pattern carries over and
    /// any other value is held to DATA8_MIN..DATA8_MAX (−127..127) or DATA16_MIN..DATA16_MAX
    /// (−32767..32767), so narrowing never makes a "not a number".
    fn mov(&mut self, ins: &Instr, s: &mut Suspended) -> Result<(), String> {
        let (from, to) = (ins.args[0].par.kind, ins.args[1].par.kind);
        let v = self.int(ins, 0, s)?;
        let dst = self.dst(ins, 1)?;
        let out = if from == to {
            v
        } else if v == nan(from) {
            nan(to)
        } else {
            let (lo, hi) = to.range().unwrap_or((i32::MIN, i32::MAX));
            v.clamp(lo, hi)
        };
        self.store(s, dst, to, out)
    }

    /// READx: SOURCE (the first element of an array, a variable), INDEX (DATA8),
    /// *DESTINATION. The firmware does not check the index; the simulator refuses one
    /// that leaves the command's memory.
    fn read_indexed(&mut self, ins: &Instr, s: &mut Suspended) -> Result<(), String> {
        let w = ins.args[0].par.kind;
        let base = self.dst(ins, 0)?;
        let i = self.int(ins, 1, s)?;
        let dst = self.dst(ins, 2)?;
        let at = element(base, i, w)?;
        let v = load(s, at, w)?;
        self.store(s, dst, w, v)
    }

    /// WRITEx: SOURCE, INDEX (DATA8), DESTINATION (the first element of an array).
    fn write_indexed(&mut self, ins: &Instr, s: &mut Suspended) -> Result<(), String> {
        let w = ins.args[2].par.kind;
        let v = self.int(ins, 0, s)?;
        let i = self.int(ins, 1, s)?;
        let base = self.dst(ins, 2)?;
        let at = element(base, i, w)?;
        self.store(s, at, w, v)
    }

    /// A relative jump: `off` bytes from the end of the jump instruction. Landing on the
    /// command's end finishes it (the firmware appends OBJECT_END there); anywhere outside
    /// the command, or inside an operation, is refused.
    fn jump(
        &mut self,
        ins: &Instr,
        code: &Walk,
        s: &mut Suspended,
        off: i32,
    ) -> Result<(), String> {
        let len = s.frame.body.len();
        let to = ins.end as i64 + off as i64;
        if to < 0 || to > len as i64 {
            return Err(format!(
                "jump by {off} from byte {} leaves the command ({len} bytes)",
                ins.end
            ));
        }
        let to = to as usize;
        s.pc = if to == len {
            code.instrs.len()
        } else {
            code.instrs
                .binary_search_by_key(&to, |i| i.at)
                .map_err(|_| {
                    format!(
                        "jump by {off} from byte {} lands inside an operation",
                        ins.end
                    )
                })?
        };
        Ok(())
    }

    fn store(&self, s: &mut Suspended, dst: Var, kind: Kind, v: i32) -> Result<(), String> {
        let bytes = v.to_le_bytes();
        self.write(s, dst, &bytes[..kind.bytes()])
    }
}

/// Whether the relation coded in the low bits of a compare or jump family holds: after
/// subtracting the family base, 0x04 LT, 0x08 GT, 0x0C EQ, 0x10 NEQ, 0x14 LTEQ, 0x18 GTEQ.
fn holds(rel: u8, a: i32, b: i32) -> bool {
    match rel & 0xFC {
        0x04 => a < b,
        0x08 => a > b,
        0x0C => a == b,
        0x10 => a != b,
        0x14 => a <= b,
        _ => a >= b,
    }
}

fn element(base: Var, i: i32, kind: Kind) -> Result<Var, String> {
    if i < 0 {
        return Err(format!("negative array index {i}"));
    }
    Ok((base.0, base.1 + i as usize * kind.bytes()))
}

/// The value of `kind` at a variable (a DATAF's bits as an integer).
pub(super) fn load(s: &Suspended, at: Var, kind: Kind) -> Result<i32, String> {
    let mem = if at.0 { &s.globals } else { &s.locals };
    let b = mem.get(at.1..at.1 + kind.bytes()).ok_or_else(|| {
        format!(
            "variable at {} of {} memory outside its {} bytes",
            at.1,
            if at.0 { "global" } else { "local" },
            mem.len()
        )
    })?;
    Ok(match b.len() {
        1 => b[0] as i8 as i32,
        2 => i16::from_le_bytes([b[0], b[1]]) as i32,
        _ => i32::from_le_bytes([b[0], b[1], b[2], b[3]]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::Size;
    use crate::robot::ev3::protocol::{
        decode_reply, Cmp, OutputPort, Program, SlotKind, Width as W,
    };

    fn brick() -> Brick {
        Brick::new(&SimConfig::default(), FaceletCube::solved(Size::Three))
    }

    /// Sends `p` and lets simulated time run until its reply (at most `limit` seconds).
    fn run(b: &mut Brick, p: Program, limit: f64) -> (crate::robot::ev3::protocol::Reply, f64) {
        let t0 = b.clock;
        let c = p.finish().unwrap();
        if let Some(r) = b.handle(&c.encode(7)) {
            return (decode_reply(&r).unwrap(), 0.0);
        }
        while b.clock - t0 < limit {
            b.advance(DT);
            if let Some((t, r)) = b.take_replies().into_iter().next() {
                return (decode_reply(&r).unwrap(), t - t0);
            }
        }
        panic!("no reply within {limit} s");
    }

    #[test]
    fn a_loop_runs_on_the_brick_and_takes_its_instructions_time() {
        // Count 0..10000 in a local, copy it to a global: 3 instructions a round.
        let mut b = brick();
        let mut p = Program::new();
        let (n, out) = (p.local(W::B4), p.global(W::B4));
        p.mov(W::B4, W::B4, 0, n);
        let top = p.label();
        p.bind(top);
        p.add(W::B4, n, 1, n);
        p.mov(W::B4, W::B4, n, out);
        p.jr_if(Cmp::Lt, W::B4, n, 10_000, top);
        let (r, took) = run(&mut b, p, 5.0);
        assert!(r.ok);
        assert_eq!(r.i32(out.slot(SlotKind::I32).unwrap()).unwrap(), 10_000);
        let want = 30_001.0 * INSTRUCTION_S;
        assert!(
            (took - want).abs() <= 2.0 * DT,
            "took {took} s, {want} s of instructions"
        );
    }

    #[test]
    fn the_documented_count_down_answers_as_documented() {
        // P1 of the codec's "Programs on the brick".
        use crate::robot::ev3::protocol::from_hex as h;
        let mut b = brick();
        let r = b.handle(&h(
            "12 00 | 10 00 | 00 | 00 10 | 3A 05 40 | 16 40 01 40 | 6A 40 00 82 F6 FF",
        ));
        assert_eq!(r.unwrap(), h("03 00 | 10 00 | 02"));
    }

    #[test]
    fn narrowing_moves_saturate_and_compares_set_a_flag() {
        let mut b = brick();
        let mut p = Program::new();
        let (small, flag, wide) = (p.global(W::B1), p.global(W::B1), p.global(W::B4));
        let nan = p.local(W::B1);
        let (low, low16) = (p.global(W::B1), p.global(W::B2));
        p.mov(W::B4, W::B1, 300, small);
        // Narrowing stops at −127 / −32767: DATA8's and DATA16's lowest values are their
        // "not a number", which only a "not a number" becomes.
        p.mov(W::B4, W::B1, -300, low);
        p.mov(W::B4, W::B2, -40_000, low16);
        p.cp(Cmp::GtEq, W::B4, -5, -7, flag);
        // -128 is DATA8's "not a number" (as a constant first parameter the firmware's
        // validator refuses it, so it is made by arithmetic, which wraps).
        p.sub(W::B1, -127, 1, nan);
        p.mov(W::B1, W::B4, nan, wide);
        let (r, _) = run(&mut b, p, 1.0);
        assert_eq!(r.globals[0] as i8, 127);
        assert_eq!(r.globals[1], 1);
        assert_eq!(r.globals[8] as i8, -127);
        assert_eq!(i16::from_le_bytes([r.globals[10], r.globals[11]]), -32767);
        assert_eq!(r.i32(wide.slot(SlotKind::I32).unwrap()).unwrap(), i32::MIN);
    }

    #[test]
    fn a_program_waits_for_a_motor_count_and_runs_nothing_else_meanwhile() {
        let mut b = brick();
        let nos = OutputPort::B.bit();
        let mut p = Program::new();
        let (now, seen) = (p.local(W::B4), p.global(W::B4));
        let t = p.global(W::B4);
        p.get_count(OutputPort::B, now);
        p.add(W::B4, now, 270, now);
        let cmd = p.cmd();
        cmd.output_reset(nos)
            .step_speed(nos, 50, [0, 300, 0], true)
            .output_start(nos);
        let target = p.local(W::B4);
        p.mov(W::B4, W::B4, now, target);
        let wait = p.label();
        p.bind(wait);
        p.get_count(OutputPort::B, now);
        p.jr_if(Cmp::Lt, W::B4, now, target, wait);
        p.mov(W::B4, W::B4, now, seen);
        p.timer_read(t);
        let c = p.finish().unwrap();
        let start = b.count(1).round() as i32;
        assert!(b.handle(&c.encode(1)).is_none(), "still waiting");
        // A ping meanwhile waits, unread, and is answered right after the program.
        b.advance(0.1);
        assert!(b
            .handle(&crate::robot::ev3::protocol::from_hex(
                "06 00 09 00 00 00 00 01"
            ))
            .is_none());
        let mut reply = None;
        for _ in 0..1000 {
            b.advance(DT);
            let replies = b.take_replies();
            if let Some((_, r)) = replies.first() {
                reply = Some(decode_reply(r).unwrap());
                let ping = replies.get(1).expect("the ping's reply right after");
                assert_eq!(
                    ping.1,
                    crate::robot::ev3::protocol::from_hex("03 00 09 00 02")
                );
                break;
            }
        }
        let r = reply.expect("a reply once the count is reached");
        let got = r.i32(seen.slot(SlotKind::I32).unwrap()).unwrap();
        assert!(
            (start + 270..=start + 272).contains(&got),
            "{got} from {start}"
        );
        // 270° at 525 °/s: about half a second.
        let ms = r.i32(t.slot(SlotKind::I32).unwrap()).unwrap();
        assert!((450..650).contains(&ms), "{ms} ms");
    }

    #[test]
    fn a_jump_out_of_the_command_and_too_much_global_memory_are_refused() {
        let mut b = brick();
        // JR by +100 from a 4-byte command.
        let r = b
            .handle(&crate::robot::ev3::protocol::from_hex(
                "09 00 01 00 00 00 00 40 82 64 00",
            ))
            .unwrap();
        assert!(!decode_reply(&r).unwrap().ok);
        assert!(
            b.log.iter().any(|l| l.contains("leaves the command")),
            "{:?}",
            b.log
        );
        // 1020 bytes of global memory: no reply could carry them.
        let r = b
            .handle(&crate::robot::ev3::protocol::from_hex(
                "06 00 02 00 00 FC 03 01",
            ))
            .unwrap();
        assert_eq!(r, crate::robot::ev3::protocol::from_hex("03 00 02 00 04"));
    }
}
