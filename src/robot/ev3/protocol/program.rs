//! Programs on the brick: a [`Program`] builds a direct command that computes, compares and
//! jumps (labels resolved when it is finished), so the brick can wait for a motor count,
//! read a sensor and store the reading without a round trip to the host. The opcodes, their
//! byte layouts and the firmware's rules for them are in
//! [Programs on the brick](crate::robot::ev3::protocol#programs-on-the-brick).
//!
//! Level: robot (part of the codec; no I/O).

use super::ops::{self, op, Invalid, Role, WalkError};
use super::{push_const, push_global, DirectCommand, OutputPort, Slot, SlotKind, MAX_MESSAGE};

/// Most global memory a direct command can get back: the reply (length, counter, status,
/// globals) must fit in [`MAX_MESSAGE`] bytes. The firmware loads a command that asks for
/// up to 1021 (`MAX_COMMAND_GLOBALS`), but no reply could carry more than this.
pub const MAX_GLOBALS: usize = MAX_MESSAGE - 5;
/// Most local memory: the header's six bits.
pub const MAX_LOCALS: usize = 63;

/// Integer widths of the virtual machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// DATA8
    B1,
    /// DATA16
    B2,
    /// DATA32
    B4,
}

impl Width {
    pub fn bytes(self) -> usize {
        match self {
            Width::B1 => 1,
            Width::B2 => 2,
            Width::B4 => 4,
        }
    }

    /// Offset of this width's member in a width-coded opcode family.
    fn code(self) -> u8 {
        match self {
            Width::B1 => 0,
            Width::B2 => 1,
            Width::B4 => 2,
        }
    }
}

/// A variable: global (in the reply) or local (scratch) memory, byte offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Var {
    Global(usize),
    Local(usize),
}

impl Var {
    /// Its offset in global memory, which the reply carries (`None`: a local variable).
    pub fn global_offset(self) -> Option<usize> {
        match self {
            Var::Global(offset) => Some(offset),
            Var::Local(_) => None,
        }
    }

    /// Where a global variable lands in the reply.
    pub fn slot(self, kind: SlotKind) -> Option<Slot> {
        self.global_offset().map(|offset| Slot { offset, kind })
    }

    /// Element `i` of an array of 32-bit words that starts at this variable.
    pub fn word(self, i: usize) -> Var {
        match self {
            Var::Global(o) => Var::Global(o + 4 * i),
            Var::Local(o) => Var::Local(o + 4 * i),
        }
    }
}

/// An input operand: a constant or a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    Const(i32),
    Var(Var),
}

impl From<Var> for Operand {
    fn from(v: Var) -> Operand {
        Operand::Var(v)
    }
}

impl From<i32> for Operand {
    fn from(v: i32) -> Operand {
        Operand::Const(v)
    }
}

/// The relations of the compare and conditional-jump families, by their offset in
/// `bytecodes.h` (each relation is a family of four widths).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Lt,
    Gt,
    Eq,
    Neq,
    LtEq,
    GtEq,
}

impl Cmp {
    fn family(self) -> u8 {
        match self {
            Cmp::Lt => 0x04,
            Cmp::Gt => 0x08,
            Cmp::Eq => 0x0C,
            Cmp::Neq => 0x10,
            Cmp::LtEq => 0x14,
            Cmp::GtEq => 0x18,
        }
    }

    /// Whether the relation holds (what the brick will decide), for the host's own checks.
    pub fn holds(self, a: i32, b: i32) -> bool {
        match self {
            Cmp::Lt => a < b,
            Cmp::Gt => a > b,
            Cmp::Eq => a == b,
            Cmp::Neq => a != b,
            Cmp::LtEq => a <= b,
            Cmp::GtEq => a >= b,
        }
    }
}

/// A place in a program a jump can go to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Label(usize);

/// Why a program cannot be sent.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProgramError {
    #[error("label {0} is jumped to but never placed")]
    Unbound(usize),
    #[error("a jump of {0} bytes does not fit the 16-bit offset this code writes")]
    TooFar(i64),
    #[error("{0} bytes of global memory asked; a reply carries at most {MAX_GLOBALS}")]
    Globals(usize),
    #[error("{0} bytes of local memory asked; a command has at most {MAX_LOCALS}")]
    Locals(usize),
    #[error("the command is {0} bytes; a message is at most {MAX_MESSAGE}")]
    Size(usize),
    #[error("the operations do not read back: {0}")]
    Walk(WalkError),
    #[error("the firmware's validator would refuse the command: {0}")]
    Invalid(Invalid),
}

/// A direct command with control flow, built in order; [`Program::finish`] resolves the
/// jumps and checks the firmware's limits.
#[derive(Clone, Debug)]
pub struct Program {
    cmd: DirectCommand,
    labels: Vec<Option<usize>>,
    /// (byte where the 16-bit offset goes, end of the jump instruction, target).
    fixups: Vec<(usize, usize, Label)>,
}

impl Default for Program {
    fn default() -> Self {
        Program::new()
    }
}

impl Program {
    /// An empty program that wants a reply.
    pub fn new() -> Program {
        Program {
            cmd: DirectCommand::new(),
            labels: Vec::new(),
            fixups: Vec::new(),
        }
    }

    /// The command built so far (for the plain builder methods of [`DirectCommand`]).
    pub fn cmd(&mut self) -> &mut DirectCommand {
        &mut self.cmd
    }

    /// Bytes of operations so far.
    pub fn len(&self) -> usize {
        self.cmd.ops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cmd.ops.is_empty()
    }

    /// A new local variable, aligned to its width.
    pub fn local(&mut self, w: Width) -> Var {
        let n = w.bytes();
        let at = self.cmd.local.div_ceil(n) * n;
        self.cmd.local = at + n;
        Var::Local(at)
    }

    /// A new global variable (it comes back in the reply), aligned to its width.
    pub fn global(&mut self, w: Width) -> Var {
        let n = w.bytes();
        let at = self.cmd.global.div_ceil(n) * n;
        self.cmd.global = at + n;
        Var::Global(at)
    }

    /// `n` consecutive global variables of width `w` (an array for WRITEx), aligned.
    pub fn global_array(&mut self, w: Width, n: usize) -> Var {
        let first = self.global(w);
        if let Var::Global(at) = first {
            self.cmd.global = at + n * w.bytes();
        }
        first
    }

    /// `n` consecutive local variables of width `w`, aligned.
    pub fn local_array(&mut self, w: Width, n: usize) -> Var {
        let first = self.local(w);
        if let Var::Local(at) = first {
            self.cmd.local = at + n * w.bytes();
        }
        first
    }

    pub fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    /// Places `l` here.
    pub fn bind(&mut self, l: Label) {
        self.labels[l.0] = Some(self.cmd.ops.len());
    }

    fn operand(&mut self, o: Operand) {
        match o {
            Operand::Const(v) => push_const(&mut self.cmd.ops, v),
            Operand::Var(v) => self.variable(v),
        }
    }

    fn variable(&mut self, v: Var) {
        match v {
            Var::Global(o) => push_global(&mut self.cmd.ops, o),
            Var::Local(o) if o < 32 => self.cmd.ops.push(0x40 | o as u8),
            Var::Local(o) => {
                self.cmd.ops.push(0xC1);
                self.cmd.ops.push(o as u8);
            }
        }
    }

    /// A jump offset to `l`, written as LC2 and patched by [`Program::finish`].
    fn offset(&mut self, l: Label) {
        let at = self.cmd.ops.len() + 1;
        self.cmd.ops.extend_from_slice(&[0x82, 0, 0]);
        let end = self.cmd.ops.len();
        self.fixups.push((at, end, l));
    }

    /// Appends the operation `code` (with `sub`, for one that takes a sub-code) with its
    /// parameters as `args`, in the order of the [table of operations](ops): inputs as
    /// constants or variables, outputs as variables, READY_*'s VALUES outputs last; for a
    /// jump, all but its OFFSET, which [`Program::jump_to`] then appends.
    fn instr(&mut self, code: u8, sub: Option<u8>, args: &[Operand]) -> &mut Self {
        if cfg!(debug_assertions) {
            check_args(code, sub, args);
        }
        self.cmd.ops.push(code);
        if let Some(s) = sub {
            push_const(&mut self.cmd.ops, s as i32);
        }
        for &a in args {
            self.operand(a);
        }
        self
    }

    /// The OFFSET of the jump just appended by [`Program::instr`]: to `l`.
    fn jump_to(&mut self, l: Label) -> &mut Self {
        self.offset(l);
        self
    }

    /// JR: always to `l`.
    pub fn jr(&mut self, l: Label) -> &mut Self {
        self.instr(op::JR, None, &[]).jump_to(l)
    }

    /// JR_TRUE / JR_FALSE on a DATA8 flag.
    pub fn jr_flag(&mut self, when: bool, flag: impl Into<Operand>, l: Label) -> &mut Self {
        let code = if when { op::JR_TRUE } else { op::JR_FALSE };
        self.instr(code, None, &[flag.into()]).jump_to(l)
    }

    /// `JR_<cmp><w>`: to `l` when `a cmp b` at width `w`.
    pub fn jr_if(
        &mut self,
        cmp: Cmp,
        w: Width,
        a: impl Into<Operand>,
        b: impl Into<Operand>,
        l: Label,
    ) -> &mut Self {
        let code = 0x60 + cmp.family() + w.code();
        self.instr(code, None, &[a.into(), b.into()]).jump_to(l)
    }

    /// `CP_<cmp><w>`: `flag` (DATA8) = 1 when `a cmp b`, else 0.
    pub fn cp(
        &mut self,
        cmp: Cmp,
        w: Width,
        a: impl Into<Operand>,
        b: impl Into<Operand>,
        flag: Var,
    ) -> &mut Self {
        let code = 0x40 + cmp.family() + w.code();
        self.instr(code, None, &[a.into(), b.into(), flag.into()])
    }

    fn math(&mut self, base: u8, w: Width, a: Operand, b: Operand, dst: Var) -> &mut Self {
        self.instr(base + w.code(), None, &[a, b, dst.into()])
    }

    /// `ADD<w>`: `dst = a + b`.
    pub fn add(
        &mut self,
        w: Width,
        a: impl Into<Operand>,
        b: impl Into<Operand>,
        dst: Var,
    ) -> &mut Self {
        self.math(op::ADD8, w, a.into(), b.into(), dst)
    }

    /// `SUB<w>`: `dst = a − b`.
    pub fn sub(
        &mut self,
        w: Width,
        a: impl Into<Operand>,
        b: impl Into<Operand>,
        dst: Var,
    ) -> &mut Self {
        self.math(op::SUB8, w, a.into(), b.into(), dst)
    }

    /// `MUL<w>`: `dst = a · b`.
    pub fn mul(
        &mut self,
        w: Width,
        a: impl Into<Operand>,
        b: impl Into<Operand>,
        dst: Var,
    ) -> &mut Self {
        self.math(op::MUL8, w, a.into(), b.into(), dst)
    }

    /// `MOVE<from>_<to>`: `dst = src` (narrowing saturates).
    pub fn mov(&mut self, from: Width, to: Width, src: impl Into<Operand>, dst: Var) -> &mut Self {
        let code = 0x30 + 4 * from.code() + to.code();
        self.instr(code, None, &[src.into(), dst.into()])
    }

    /// `READ<w>`: `dst = array[index]`.
    pub fn read_index(
        &mut self,
        w: Width,
        array: Var,
        index: impl Into<Operand>,
        dst: Var,
    ) -> &mut Self {
        let code = op::READ8 + w.code();
        self.instr(code, None, &[array.into(), index.into(), dst.into()])
    }

    /// `WRITE<w>`: `array[index] = src`.
    pub fn write_index(
        &mut self,
        w: Width,
        src: impl Into<Operand>,
        index: impl Into<Operand>,
        array: Var,
    ) -> &mut Self {
        let code = op::WRITE8 + w.code();
        self.instr(code, None, &[src.into(), index.into(), array.into()])
    }

    /// TIMER_READ: `dst` (DATA32) = milliseconds since the command started.
    pub fn timer_read(&mut self, dst: Var) -> &mut Self {
        self.instr(op::TIMER_READ, None, &[dst.into()])
    }

    /// TIMER_WAIT: arms `timer` (a DATA32 variable) to expire `ms` from now.
    pub fn timer_wait(&mut self, ms: impl Into<Operand>, timer: Var) -> &mut Self {
        self.instr(op::TIMER_WAIT, None, &[ms.into(), timer.into()])
    }

    /// TIMER_READY: holds the program until `timer` expires.
    pub fn timer_ready(&mut self, timer: Var) -> &mut Self {
        self.instr(op::TIMER_READY, None, &[timer.into()])
    }

    /// OUTPUT_GET_COUNT into `dst` (DATA32): the sensor count of one motor.
    pub fn get_count(&mut self, port: OutputPort, dst: Var) -> &mut Self {
        let args = [0.into(), (port.no() as i32).into(), dst.into()];
        self.instr(op::OUTPUT_GET_COUNT, None, &args)
    }

    /// OUTPUT_TEST into `dst` (DATA8): 1 while a selected motor runs a step or time job.
    pub fn output_test(&mut self, nos: u8, dst: Var) -> &mut Self {
        let args = [0.into(), (nos as i32).into(), dst.into()];
        self.instr(op::OUTPUT_TEST, None, &args)
    }

    /// OUTPUT_STEP_SPEED with the steps as operands (the sign of `speed` is the direction).
    pub fn step_speed(
        &mut self,
        nos: u8,
        speed: i8,
        steps: [Operand; 3],
        brake: bool,
    ) -> &mut Self {
        let [s1, s2, s3] = steps;
        let args = [
            0.into(),
            (nos as i32).into(),
            (speed as i32).into(),
            s1,
            s2,
            s3,
            (brake as i32).into(),
        ];
        self.instr(op::OUTPUT_STEP_SPEED, None, &args)
    }

    /// INPUT_DEVICE READY_RAW into `out.len()` DATA32 variables.
    pub fn ready_raw(&mut self, input: u8, typ: i8, mode: i8, out: &[Var]) -> &mut Self {
        let mut args: Vec<Operand> = [0, input as i32, typ as i32, mode as i32, out.len() as i32]
            .map(Operand::Const)
            .to_vec();
        args.extend(out.iter().map(|&v| Operand::Var(v)));
        self.instr(op::INPUT_DEVICE, Some(op::INPUT_READY_RAW), &args)
    }

    /// Any operation of the [table](ops) (`code`: the opcode, and its sub-code if it takes
    /// one) and its parameters as operands: constants in their shortest form, variables
    /// where the opcode takes them (outputs, or inputs given as variables).
    pub fn emit(&mut self, code: &[u8], params: &[Operand]) -> &mut Self {
        debug_assert!(
            matches!(code.len(), 1 | 2),
            "an opcode and at most a sub-code"
        );
        self.instr(code[0], code.get(1).copied(), params)
    }

    /// Writes every jump's OFFSET in the shortest constant that holds it (LC0, LC1 or
    /// LC2: 1, 2 or 3 bytes), the operations closed up around them. Shorter offsets move
    /// the targets nearer, so every offset starts at its shortest and only grows until
    /// all fit (the usual relaxation, which ends as each one grows at most twice).
    fn resolve_jumps(&mut self) -> Result<(), ProgramError> {
        let targets = self
            .fixups
            .iter()
            .map(|&(_, _, l)| self.labels[l.0].ok_or(ProgramError::Unbound(l.0)))
            .collect::<Result<Vec<usize>, _>>()?;
        let mut sizes = vec![1usize; self.fixups.len()];
        // Where `pos` of the LC2 layout lands once the offsets before it are shorter
        // (every offset's three bytes start at `at - 1`; no label lies inside one).
        let moved = |sizes: &[usize], pos: usize| -> usize {
            let saved: usize = self
                .fixups
                .iter()
                .zip(sizes)
                .take_while(|((at, _, _), _)| at - 1 < pos)
                .map(|(_, n)| 3 - n)
                .sum();
            pos - saved
        };
        let fits = |v: i64, n: usize| match n {
            1 => (-32..=31).contains(&v),
            2 => (-127..=127).contains(&v),
            _ => i16::try_from(v).is_ok(),
        };
        let offsets = loop {
            let mut grown = false;
            let mut offsets = Vec::with_capacity(sizes.len());
            for (i, &(_, end, _)) in self.fixups.iter().enumerate() {
                let off = moved(&sizes, targets[i]) as i64 - moved(&sizes, end) as i64;
                if !fits(off, 3) {
                    return Err(ProgramError::TooFar(off));
                }
                while !fits(off, sizes[i]) {
                    sizes[i] += 1;
                    grown = true;
                }
                offsets.push(off as i32);
            }
            if !grown {
                break offsets;
            }
        };
        let old = std::mem::take(&mut self.cmd.ops);
        let mut from = 0;
        for (&(at, end, _), off) in self.fixups.iter().zip(offsets) {
            self.cmd.ops.extend_from_slice(&old[from..at - 1]);
            push_const(&mut self.cmd.ops, off);
            from = end;
        }
        self.cmd.ops.extend_from_slice(&old[from..]);
        self.fixups.clear();
        Ok(())
    }

    /// The command: jumps resolved, the firmware's limits checked, its operations read back
    /// through the [table](ops) and passed by the [firmware's validator](ops::validate).
    pub fn finish(mut self) -> Result<DirectCommand, ProgramError> {
        self.resolve_jumps()?;
        if self.cmd.global > MAX_GLOBALS {
            return Err(ProgramError::Globals(self.cmd.global));
        }
        if self.cmd.local > MAX_LOCALS {
            return Err(ProgramError::Locals(self.cmd.local));
        }
        let size = self.cmd.ops.len() + 7;
        if size > MAX_MESSAGE {
            return Err(ProgramError::Size(size));
        }
        // The operations as the brick will read them: in the table, and nothing the
        // firmware's validator refuses.
        let walk = ops::walk(&self.cmd.ops);
        if let Some(e) = walk.error {
            return Err(ProgramError::Walk(e));
        }
        if let Some(v) = ops::validate(&walk.instrs).into_iter().next() {
            return Err(ProgramError::Invalid(v));
        }
        Ok(self.cmd)
    }
}

/// Whether `args` are the parameters the table gives the operation (a debug check of the
/// builders): as many, outputs as variables; a jump's OFFSET left for [`Program::jump_to`].
fn check_args(code: u8, sub: Option<u8>, args: &[Operand]) {
    let Some(op) = ops::find(code, sub) else {
        panic!("opcode 0x{code:02X} {sub:?} is not in the table of operations");
    };
    let mut params: Vec<ops::Par> = op.params.to_vec();
    if params.last().is_some_and(|p| p.role == Role::Offset) {
        params.pop();
    }
    let count = params.len().checked_sub(1).and_then(|k| args.get(k));
    if let (Some(kind), Some(Operand::Const(n))) = (op.values, count) {
        params.extend((0..*n).map(|_| ops::out(kind)));
    }
    assert_eq!(params.len(), args.len(), "{}: {args:?}", op.name);
    for (p, a) in params.iter().zip(args) {
        assert!(
            !p.out || matches!(a, Operand::Var(_)),
            "{}: {args:?}",
            op.name
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::robot::ev3::protocol::from_hex as h;

    #[test]
    fn a_count_down_loop_encodes_as_documented() {
        // P1 of the module docs: LV0 = 5; loop: LV0 -= 1; while LV0 > 0.
        let mut p = Program::new();
        let n = p.local(Width::B4);
        p.mov(Width::B4, Width::B4, 5, n);
        let top = p.label();
        p.bind(top);
        p.sub(Width::B4, n, 1, n);
        p.jr_if(Cmp::Gt, Width::B4, n, 0, top);
        let c = p.finish().unwrap();
        assert_eq!(
            c.encode(0x10),
            h("10 00 | 10 00 | 00 | 00 10 | 3A 05 40 | 16 40 01 40 | 6A 40 00 38")
        );
    }

    #[test]
    fn each_jump_offset_takes_the_shortest_constant_that_holds_it() {
        // Forward over 20, 100 and 300 bytes of operations (MOVE32_32 of a 32-bit constant
        // to a local: 7 bytes each).
        for (movs, offset) in [(3usize, "15"), (14, "81 62"), (43, "82 2D 01")] {
            let mut p = Program::new();
            let n = p.local(Width::B4);
            let l = p.label();
            p.jr(l);
            for _ in 0..movs {
                p.mov(Width::B4, Width::B4, 100_000, n);
            }
            p.bind(l);
            let ops = p.finish().unwrap().ops;
            let want = h(&format!("40 {offset}"));
            assert_eq!(ops[..want.len()], want[..], "over {} bytes", 7 * movs);
            assert_eq!(ops.len(), want.len() + 7 * movs);
        }
    }

    #[test]
    fn limits_are_checked() {
        let mut p = Program::new();
        let l = p.label();
        p.jr(l);
        assert_eq!(p.clone().finish().unwrap_err(), ProgramError::Unbound(0));
        p.bind(l);
        p.global_array(Width::B4, 254);
        assert!(p.clone().finish().is_ok());
        let mut q = Program::new();
        q.global_array(Width::B1, MAX_GLOBALS + 1);
        assert_eq!(
            q.finish().unwrap_err(),
            ProgramError::Globals(MAX_GLOBALS + 1)
        );
        let mut q = Program::new();
        q.local_array(Width::B4, 16);
        assert_eq!(q.finish().unwrap_err(), ProgramError::Locals(64));
    }

    #[test]
    fn a_program_the_firmware_would_refuse_is_not_finished() {
        // DATA8's lowest value as MOVE8_32's first parameter.
        let mut p = Program::new();
        let g = p.global(Width::B4);
        p.mov(Width::B1, Width::B4, -128, g);
        assert!(matches!(
            p.finish().unwrap_err(),
            ProgramError::Invalid(Invalid::Range { value: -128, .. })
        ));
        // A DATA32 variable at global offset 2.
        let mut p = Program::new();
        p.global_array(Width::B1, 8);
        p.add(Width::B4, 1, 2, Var::Global(2));
        assert!(matches!(
            p.finish().unwrap_err(),
            ProgramError::Invalid(Invalid::Alignment { offset: 2, .. })
        ));
        // The same value as a later parameter runs.
        let mut p = Program::new();
        let g = p.global(Width::B1);
        p.add(Width::B1, 1, -128, g);
        assert!(p.finish().is_ok());
    }
}
