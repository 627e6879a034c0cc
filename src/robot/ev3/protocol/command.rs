//! Building a direct command: [`DirectCommand`]'s builders lay out each operation from the
//! [table of operations](super::ops) and hand out the global memory its outputs land in.
//!
//! Level: robot (part of the codec; no I/O).
//!
//! ## Global memory
//!
//! Value types: DATA8 = `i8`, DATA16 = `i16`, DATA32 = `i32`, DATAF = `f32`. A value at
//! global offset `o` is at byte `5 + o` of the reply. The firmware's validator refuses a
//! DATA32 or DATAF variable at an offset not divisible by 4 (DATA16: by 2);
//! [`DirectCommand`] hands out slots in the order the operations are added and rounds each
//! slot up to the next multiple of its size (so OUTPUT_READ puts its speed byte at 0 and
//! its count at 4, see E14 of the [worked examples](super#worked-examples)).
//!
//! The firmware does not clear global memory between direct commands: one buffer serves
//! them all (`c_com.h:1566`) and loading a command clears only the program's own memory,
//! locals included (`lms2012.c:1426-1449`), so a byte no operation of a command writes
//! comes back as an earlier command left it. Every byte this code reads is one an operation
//! of the same command wrote.

use super::params::{push_const, push_global};
use super::{op, ops, OutputPort, DIRECT_COMMAND_NO_REPLY, DIRECT_COMMAND_REPLY};

/// Where one value lands in the reply's global memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub offset: usize,
    pub kind: SlotKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotKind {
    I8,
    I16,
    I32,
    F32,
    /// A string of at most this many bytes, its terminating zero included.
    Str(u8),
}

impl SlotKind {
    /// The slot of an output of `kind` ([`ops::Kind`]); a string gets `len` bytes.
    fn of(kind: ops::Kind, len: i32) -> SlotKind {
        match kind {
            ops::Kind::D8 => SlotKind::I8,
            ops::Kind::D16 => SlotKind::I16,
            ops::Kind::D32 => SlotKind::I32,
            ops::Kind::F => SlotKind::F32,
            ops::Kind::Str => SlotKind::Str(len.clamp(1, 127) as u8),
        }
    }

    pub(super) fn size(self) -> usize {
        match self {
            SlotKind::I8 => 1,
            SlotKind::I16 => 2,
            SlotKind::I32 | SlotKind::F32 => 4,
            SlotKind::Str(n) => n as usize,
        }
    }

    /// The offsets a slot of this kind may start at are multiples of this.
    fn align(self) -> usize {
        match self {
            SlotKind::I16 => 2,
            SlotKind::I32 | SlotKind::F32 => 4,
            SlotKind::I8 | SlotKind::Str(_) => 1,
        }
    }
}

/// A direct command being built: operations plus the global memory they write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirectCommand {
    pub ops: Vec<u8>,
    pub global: usize,
    pub local: usize,
    pub reply: bool,
}

impl Default for DirectCommand {
    fn default() -> Self {
        DirectCommand::new()
    }
}

impl DirectCommand {
    /// A command that asks for a reply.
    pub fn new() -> DirectCommand {
        DirectCommand {
            ops: Vec::new(),
            global: 0,
            local: 0,
            reply: true,
        }
    }

    /// A fire-and-forget command.
    pub fn no_reply() -> DirectCommand {
        DirectCommand {
            reply: false,
            ..DirectCommand::new()
        }
    }

    /// Allocates a global slot in the order of the operations, rounding a 4-byte slot up to an
    /// offset divisible by 4 (see [Global memory](self#global-memory)).
    fn alloc(&mut self, kind: SlotKind) -> Slot {
        let align = kind.align();
        let offset = self.global.div_ceil(align) * align;
        self.global = offset + kind.size();
        Slot { offset, kind }
    }

    fn c(&mut self, v: i32) -> &mut Self {
        push_const(&mut self.ops, v);
        self
    }

    fn g(&mut self, kind: SlotKind) -> Slot {
        let s = self.alloc(kind);
        push_global(&mut self.ops, s.offset);
        s
    }

    /// Appends the operation `code` (with `sub`, for one that takes a sub-code) of the
    /// [table of operations](ops): its inputs `ins` in the table's order, each in its
    /// shortest constant form, and a global slot for each output the table lists, in
    /// order (a string output as long as the LENGTH input before it; READY_*'s VALUES
    /// outputs after the parameters). Returns the slots.
    fn call(&mut self, code: u8, sub: Option<u8>, ins: &[i32]) -> Vec<Slot> {
        let Some(op) = ops::find(code, sub) else {
            unreachable!("the builders call operations of the table, not 0x{code:02X}")
        };
        self.ops.push(code);
        if let Some(s) = sub {
            self.c(s as i32);
        }
        let mut ins = ins.iter().copied();
        let mut slots = Vec::new();
        // The last input: a string output's LENGTH, READY_*'s VALUES.
        let mut last = 0;
        for par in op.params {
            if par.out {
                slots.push(self.g(SlotKind::of(par.kind, last)));
            } else {
                last = ins.next().unwrap_or(0);
                self.c(last);
            }
        }
        if let Some(kind) = op.values {
            for _ in 0..last {
                slots.push(self.g(SlotKind::of(kind, 0)));
            }
        }
        debug_assert!(ins.next().is_none(), "{}: too many inputs", op.name);
        slots
    }

    pub fn nop(&mut self) -> &mut Self {
        self.call(op::NOP, None, &[]);
        self
    }

    /// LED pattern 0..9 (0 off, 1 green, 2 red, 3 orange, +3 flash, +6 pulse).
    pub fn led(&mut self, pattern: u8) -> &mut Self {
        self.call(op::UI_WRITE, Some(op::UI_WRITE_LED), &[pattern as i32]);
        self
    }

    /// UI_READ GET_VBATT: battery voltage (DATAF).
    pub fn battery_volts(&mut self) -> Slot {
        self.call(op::UI_READ, Some(op::UI_READ_GET_VBATT), &[])[0]
    }

    /// UI_READ GET_LBATT: battery level 0..100 (DATA8).
    pub fn battery_level(&mut self) -> Slot {
        self.call(op::UI_READ, Some(op::UI_READ_GET_LBATT), &[])[0]
    }

    /// A string query (UI_READ or COM_GET with `sub`): LENGTH `len` (1..127), then a string
    /// slot of `len` bytes.
    fn text(&mut self, code: u8, sub: u8, len: u8) -> Slot {
        let len = len.clamp(1, 127);
        self.call(code, Some(sub), &[len as i32])[0]
    }

    /// UI_READ GET_FW_VERS: the firmware version, at most `len` bytes with its zero.
    pub fn firmware_version(&mut self, len: u8) -> Slot {
        self.text(op::UI_READ, op::UI_READ_GET_FW_VERS, len)
    }

    /// UI_READ GET_HW_VERS: the hardware version, at most `len` bytes with its zero.
    pub fn hardware_version(&mut self, len: u8) -> Slot {
        self.text(op::UI_READ, op::UI_READ_GET_HW_VERS, len)
    }

    /// COM_GET GET_BRICKNAME: the brick's name, at most `len` bytes with its zero.
    pub fn brick_name(&mut self, len: u8) -> Slot {
        self.text(op::COM_GET, op::COM_GET_BRICKNAME, len)
    }

    /// OUTPUT_POLARITY: −1 reversed, 0 toggle, 1 normal (see [Polarity](crate::robot::ev3::protocol#polarity)).
    pub fn output_polarity(&mut self, nos: u8, pol: i8) -> &mut Self {
        self.out(op::OUTPUT_POLARITY, &[nos as i32, pol as i32]);
        self
    }

    pub fn tone(&mut self, volume: u8, freq_hz: u16, ms: u16) -> &mut Self {
        let ins = [volume as i32, freq_hz as i32, ms as i32];
        self.call(op::SOUND, Some(op::SOUND_TONE), &ins);
        self
    }

    /// An OUTPUT_* operation on LAYER 0: its inputs after LAYER, its output slots.
    fn out(&mut self, code: u8, ins: &[i32]) -> Vec<Slot> {
        let mut all = vec![0];
        all.extend_from_slice(ins);
        self.call(code, None, &all)
    }

    pub fn output_reset(&mut self, nos: u8) -> &mut Self {
        self.out(op::OUTPUT_RESET, &[nos as i32]);
        self
    }

    pub fn output_stop(&mut self, nos: u8, brake: bool) -> &mut Self {
        self.out(op::OUTPUT_STOP, &[nos as i32, brake as i32]);
        self
    }

    pub fn output_power(&mut self, nos: u8, power: i8) -> &mut Self {
        self.out(op::OUTPUT_POWER, &[nos as i32, power as i32]);
        self
    }

    pub fn output_speed(&mut self, nos: u8, speed: i8) -> &mut Self {
        self.out(op::OUTPUT_SPEED, &[nos as i32, speed as i32]);
        self
    }

    pub fn output_start(&mut self, nos: u8) -> &mut Self {
        self.out(op::OUTPUT_START, &[nos as i32]);
        self
    }

    pub fn output_ready(&mut self, nos: u8) -> &mut Self {
        self.out(op::OUTPUT_READY, &[nos as i32]);
        self
    }

    pub fn output_clr_count(&mut self, nos: u8) -> &mut Self {
        self.out(op::OUTPUT_CLR_COUNT, &[nos as i32]);
        self
    }

    /// OUTPUT_TEST: busy flag (DATA8) of the selected motors.
    pub fn output_test(&mut self, nos: u8) -> Slot {
        self.out(op::OUTPUT_TEST, &[nos as i32])[0]
    }

    /// OUTPUT_READ: (speed DATA8, movement count DATA32) of one motor. The speed byte goes
    /// first on the wire; the count's slot is aligned after it.
    pub fn output_read(&mut self, port: OutputPort) -> (Slot, Slot) {
        let s = self.out(op::OUTPUT_READ, &[port.no() as i32]);
        (s[0], s[1])
    }

    /// TIMER_READ_US: the brick's free-running microsecond clock (DATA32, wrapping): the
    /// brick's own time, for windows that must not stretch when replies are held back.
    pub fn timer_read_us(&mut self) -> Slot {
        self.call(op::TIMER_READ_US, None, &[])[0]
    }

    /// OUTPUT_GET_COUNT: sensor tacho count (DATA32) of one motor.
    pub fn output_get_count(&mut self, port: OutputPort) -> Slot {
        self.out(op::OUTPUT_GET_COUNT, &[port.no() as i32])[0]
    }

    fn profile(&mut self, code: u8, nos: u8, speed: i8, p: [u32; 3], brake: bool) -> &mut Self {
        let [p1, p2, p3] = p.map(|v| v.min(i32::MAX as u32) as i32);
        let ins = [nos as i32, speed as i32, p1, p2, p3, brake as i32];
        self.out(code, &ins);
        self
    }

    /// OUTPUT_STEP_SPEED: ramp-up, constant, ramp-down degrees; direction = sign of speed.
    pub fn step_speed(&mut self, nos: u8, speed: i8, steps: [u32; 3], brake: bool) -> &mut Self {
        self.profile(op::OUTPUT_STEP_SPEED, nos, speed, steps, brake)
    }

    pub fn step_power(&mut self, nos: u8, power: i8, steps: [u32; 3], brake: bool) -> &mut Self {
        self.profile(op::OUTPUT_STEP_POWER, nos, power, steps, brake)
    }

    /// OUTPUT_TIME_SPEED: ramp-up, constant, ramp-down milliseconds.
    pub fn time_speed(&mut self, nos: u8, speed: i8, ms: [u32; 3], brake: bool) -> &mut Self {
        self.profile(op::OUTPUT_TIME_SPEED, nos, speed, ms, brake)
    }

    pub fn time_power(&mut self, nos: u8, power: i8, ms: [u32; 3], brake: bool) -> &mut Self {
        self.profile(op::OUTPUT_TIME_POWER, nos, power, ms, brake)
    }

    /// INPUT_DEVICE GET_TYPEMODE: (type, mode), both DATA8.
    pub fn get_typemode(&mut self, input: u8) -> (Slot, Slot) {
        let s = self.call(
            op::INPUT_DEVICE,
            Some(op::INPUT_GET_TYPEMODE),
            &[0, input as i32],
        );
        (s[0], s[1])
    }

    fn ready(&mut self, sub: u8, input: u8, typ: i8, mode: i8, n: u8) -> Vec<Slot> {
        let ins = [0, input as i32, typ as i32, mode as i32, n as i32];
        self.call(op::INPUT_DEVICE, Some(sub), &ins)
    }

    /// INPUT_DEVICE READY_RAW: `n` DATA32 values.
    pub fn ready_raw(&mut self, input: u8, typ: i8, mode: i8, n: u8) -> Vec<Slot> {
        self.ready(op::INPUT_READY_RAW, input, typ, mode, n)
    }

    /// INPUT_DEVICE READY_SI: `n` DATAF values.
    pub fn ready_si(&mut self, input: u8, typ: i8, mode: i8, n: u8) -> Vec<Slot> {
        self.ready(op::INPUT_READY_SI, input, typ, mode, n)
    }

    /// The whole message with `counter`.
    pub fn encode(&self, counter: u16) -> Vec<u8> {
        let len = 5 + self.ops.len();
        let mut out = Vec::with_capacity(len + 2);
        out.extend_from_slice(&(len as u16).to_le_bytes());
        out.extend_from_slice(&counter.to_le_bytes());
        out.push(if self.reply {
            DIRECT_COMMAND_REPLY
        } else {
            DIRECT_COMMAND_NO_REPLY
        });
        let mem = ((self.local as u16) << 10) | (self.global as u16 & 0x3FF);
        out.extend_from_slice(&mem.to_le_bytes());
        out.extend_from_slice(&self.ops);
        out
    }
}
