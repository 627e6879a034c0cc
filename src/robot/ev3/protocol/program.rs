//! Programs on the brick: a [`Program`] builds a direct command that computes, compares and
//! jumps (labels resolved when it is finished), so the brick can wait for a motor count,
//! read a sensor and store the reading without a round trip to the host. The opcodes, their
//! byte layouts and the firmware's rules for them are in
//! [Programs on the brick](crate::robot::ev3::protocol#programs-on-the-brick).
//!
//! Level: robot (part of the codec; no I/O).

use super::{push_const, push_global, DirectCommand, OutputPort, Slot, SlotKind, MAX_MESSAGE};

/// Opcode numbers of the virtual machine's arithmetic, move, compare, branch, timer and
/// array opcodes (`bytecodes.h`). Each width-coded family holds DATA8, DATA16, DATA32 and
/// DATAF members at consecutive codes; the float members are not used.
pub mod op {
    pub const ADD8: u8 = 0x10;
    pub const ADD16: u8 = 0x11;
    pub const ADD32: u8 = 0x12;
    pub const SUB8: u8 = 0x14;
    pub const SUB16: u8 = 0x15;
    pub const SUB32: u8 = 0x16;
    pub const MUL8: u8 = 0x18;
    pub const MUL16: u8 = 0x19;
    pub const MUL32: u8 = 0x1A;
    pub const MOVE8_8: u8 = 0x30;
    pub const MOVE8_32: u8 = 0x32;
    pub const MOVE16_16: u8 = 0x35;
    pub const MOVE32_8: u8 = 0x38;
    pub const MOVE32_32: u8 = 0x3A;
    pub const JR: u8 = 0x40;
    pub const JR_FALSE: u8 = 0x41;
    pub const JR_TRUE: u8 = 0x42;
    pub const CP_LT8: u8 = 0x44;
    pub const CP_LT32: u8 = 0x46;
    pub const CP_GTEQ32: u8 = 0x5A;
    pub const JR_LT8: u8 = 0x64;
    pub const JR_LT32: u8 = 0x66;
    pub const JR_GT32: u8 = 0x6A;
    pub const JR_GTEQ32: u8 = 0x7A;
    pub const TIMER_READ: u8 = 0x87;
    pub const READ8: u8 = 0xC8;
    pub const READ32: u8 = 0xCA;
    pub const WRITE8: u8 = 0xCC;
    pub const WRITE32: u8 = 0xCE;
}

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

    /// JR: always to `l`.
    pub fn jr(&mut self, l: Label) -> &mut Self {
        self.cmd.ops.push(op::JR);
        self.offset(l);
        self
    }

    /// JR_TRUE / JR_FALSE on a DATA8 flag.
    pub fn jr_flag(&mut self, when: bool, flag: impl Into<Operand>, l: Label) -> &mut Self {
        self.cmd
            .ops
            .push(if when { op::JR_TRUE } else { op::JR_FALSE });
        self.operand(flag.into());
        self.offset(l);
        self
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
        self.cmd.ops.push(0x60 + cmp.family() + w.code());
        self.operand(a.into());
        self.operand(b.into());
        self.offset(l);
        self
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
        self.cmd.ops.push(0x40 + cmp.family() + w.code());
        self.operand(a.into());
        self.operand(b.into());
        self.variable(flag);
        self
    }

    fn math(&mut self, base: u8, w: Width, a: Operand, b: Operand, dst: Var) -> &mut Self {
        self.cmd.ops.push(base + w.code());
        self.operand(a);
        self.operand(b);
        self.variable(dst);
        self
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
        self.cmd.ops.push(0x30 + 4 * from.code() + to.code());
        self.operand(src.into());
        self.variable(dst);
        self
    }

    /// `READ<w>`: `dst = array[index]`.
    pub fn read_index(
        &mut self,
        w: Width,
        array: Var,
        index: impl Into<Operand>,
        dst: Var,
    ) -> &mut Self {
        self.cmd.ops.push(op::READ8 + w.code());
        self.variable(array);
        self.operand(index.into());
        self.variable(dst);
        self
    }

    /// `WRITE<w>`: `array[index] = src`.
    pub fn write_index(
        &mut self,
        w: Width,
        src: impl Into<Operand>,
        index: impl Into<Operand>,
        array: Var,
    ) -> &mut Self {
        self.cmd.ops.push(op::WRITE8 + w.code());
        self.operand(src.into());
        self.operand(index.into());
        self.variable(array);
        self
    }

    /// TIMER_READ: `dst` (DATA32) = milliseconds since the command started.
    pub fn timer_read(&mut self, dst: Var) -> &mut Self {
        self.cmd.ops.push(op::TIMER_READ);
        self.variable(dst);
        self
    }

    /// TIMER_WAIT: arms `timer` (a DATA32 variable) to expire `ms` from now.
    pub fn timer_wait(&mut self, ms: impl Into<Operand>, timer: Var) -> &mut Self {
        self.cmd.ops.push(super::op::TIMER_WAIT);
        self.operand(ms.into());
        self.variable(timer);
        self
    }

    /// TIMER_READY: holds the program until `timer` expires.
    pub fn timer_ready(&mut self, timer: Var) -> &mut Self {
        self.cmd.ops.push(super::op::TIMER_READY);
        self.variable(timer);
        self
    }

    /// OUTPUT_GET_COUNT into `dst` (DATA32): the sensor count of one motor.
    pub fn get_count(&mut self, port: OutputPort, dst: Var) -> &mut Self {
        self.cmd.ops.push(super::op::OUTPUT_GET_COUNT);
        push_const(&mut self.cmd.ops, 0);
        push_const(&mut self.cmd.ops, port.no() as i32);
        self.variable(dst);
        self
    }

    /// OUTPUT_TEST into `dst` (DATA8): 1 while a selected motor runs a step or time job.
    pub fn output_test(&mut self, nos: u8, dst: Var) -> &mut Self {
        self.cmd.ops.push(super::op::OUTPUT_TEST);
        push_const(&mut self.cmd.ops, 0);
        push_const(&mut self.cmd.ops, nos as i32);
        self.variable(dst);
        self
    }

    /// OUTPUT_STEP_SPEED with the steps as operands (the sign of `speed` is the direction).
    pub fn step_speed(
        &mut self,
        nos: u8,
        speed: i8,
        steps: [Operand; 3],
        brake: bool,
    ) -> &mut Self {
        self.cmd.ops.push(super::op::OUTPUT_STEP_SPEED);
        push_const(&mut self.cmd.ops, 0);
        push_const(&mut self.cmd.ops, nos as i32);
        push_const(&mut self.cmd.ops, speed as i32);
        for s in steps {
            self.operand(s);
        }
        push_const(&mut self.cmd.ops, brake as i32);
        self
    }

    /// INPUT_DEVICE READY_RAW into `out.len()` DATA32 variables.
    pub fn ready_raw(&mut self, input: u8, typ: i8, mode: i8, out: &[Var]) -> &mut Self {
        self.cmd
            .ops
            .extend_from_slice(&[super::op::INPUT_DEVICE, super::op::INPUT_READY_RAW]);
        for v in [0, input as i32, typ as i32, mode as i32, out.len() as i32] {
            push_const(&mut self.cmd.ops, v);
        }
        for &v in out {
            self.variable(v);
        }
        self
    }

    /// Any opcode (with its sub-command bytes, if any) and its parameters as operands:
    /// constants in their shortest form, variables where the opcode takes them (outputs,
    /// or inputs given as variables).
    pub fn emit(&mut self, code: &[u8], params: &[Operand]) -> &mut Self {
        self.cmd.ops.extend_from_slice(code);
        for &p in params {
            self.operand(p);
        }
        self
    }

    /// The command: jumps resolved, the firmware's limits checked.
    pub fn finish(mut self) -> Result<DirectCommand, ProgramError> {
        for &(at, end, l) in &self.fixups {
            let target = self.labels[l.0].ok_or(ProgramError::Unbound(l.0))?;
            let off = target as i64 - end as i64;
            let v = i16::try_from(off).map_err(|_| ProgramError::TooFar(off))?;
            self.cmd.ops[at..at + 2].copy_from_slice(&v.to_le_bytes());
        }
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
        Ok(self.cmd)
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
            h("12 00 | 10 00 | 00 | 00 10 | 3A 05 40 | 16 40 01 40 | 6A 40 00 82 F6 FF")
        );
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
}
