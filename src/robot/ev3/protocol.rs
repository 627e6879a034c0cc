//! EV3 direct commands: pure encoding of commands and decoding of replies (and, for the
//! simulated brick, decoding of commands and encoding of replies). No I/O.
//!
//! Wire format, parameter encoding and opcode numbers follow
//! `docs/ev3-direct-commands.md` (§3 framing, §5 parameters, §8 opcodes); the worked byte
//! examples of its §11 are the golden tests at the bottom of this file.
//!
//! Level: robot (depends on nothing else in the crate).

use std::fmt;

/// Message type: direct command, reply wanted.
pub const DIRECT_COMMAND_REPLY: u8 = 0x00;
/// Message type: direct command, no reply.
pub const DIRECT_COMMAND_NO_REPLY: u8 = 0x80;
/// Reply status: ok.
pub const DIRECT_REPLY: u8 = 0x02;
/// Reply status: the command was not (fully) executed.
pub const DIRECT_REPLY_ERROR: u8 = 0x04;
/// System command types (recognised only).
pub const SYSTEM_COMMAND_REPLY: u8 = 0x01;
pub const SYSTEM_COMMAND_NO_REPLY: u8 = 0x81;
pub const SYSTEM_REPLY_ERROR: u8 = 0x05;
/// Largest message on the wire, length field included.
pub const MAX_MESSAGE: usize = 1024;

/// Opcode numbers (doc §8).
pub mod op {
    pub const NOP: u8 = 0x01;
    pub const UI_WRITE: u8 = 0x82;
    pub const UI_WRITE_LED: u8 = 0x1B;
    pub const TIMER_WAIT: u8 = 0x85;
    pub const TIMER_READY: u8 = 0x86;
    pub const SOUND: u8 = 0x94;
    pub const SOUND_TONE: u8 = 0x01;
    pub const SOUND_READY: u8 = 0x96;
    pub const INPUT_DEVICE: u8 = 0x99;
    pub const INPUT_GET_TYPEMODE: u8 = 0x05;
    pub const INPUT_GET_RAW: u8 = 0x0B;
    pub const INPUT_CLR_CHANGES: u8 = 0x1A;
    pub const INPUT_READY_PCT: u8 = 0x1B;
    pub const INPUT_READY_RAW: u8 = 0x1C;
    pub const INPUT_READY_SI: u8 = 0x1D;
    pub const OUTPUT_RESET: u8 = 0xA2;
    pub const OUTPUT_STOP: u8 = 0xA3;
    pub const OUTPUT_POWER: u8 = 0xA4;
    pub const OUTPUT_SPEED: u8 = 0xA5;
    pub const OUTPUT_START: u8 = 0xA6;
    pub const OUTPUT_POLARITY: u8 = 0xA7;
    pub const OUTPUT_READ: u8 = 0xA8;
    pub const OUTPUT_TEST: u8 = 0xA9;
    pub const OUTPUT_READY: u8 = 0xAA;
    pub const OUTPUT_STEP_POWER: u8 = 0xAC;
    pub const OUTPUT_TIME_POWER: u8 = 0xAD;
    pub const OUTPUT_STEP_SPEED: u8 = 0xAE;
    pub const OUTPUT_TIME_SPEED: u8 = 0xAF;
    pub const OUTPUT_CLR_COUNT: u8 = 0xB2;
    pub const OUTPUT_GET_COUNT: u8 = 0xB3;
}

/// Device type numbers reported by GET_TYPEMODE (doc §7).
pub mod device {
    pub const LARGE_MOTOR: i8 = 7;
    pub const MEDIUM_MOTOR: i8 = 8;
    pub const TOUCH: i8 = 16;
    pub const COLOR: i8 = 29;
    pub const ULTRASONIC: i8 = 30;
    pub const INFRARED: i8 = 33;
    pub const NONE: i8 = 126;
    /// Colour sensor mode RGB-RAW (3 values).
    pub const COLOR_RGB_RAW: i8 = 4;

    /// A human name for a device type number.
    pub fn name(t: i8) -> String {
        match t {
            LARGE_MOTOR => "large motor".into(),
            MEDIUM_MOTOR => "medium motor".into(),
            TOUCH => "touch sensor".into(),
            COLOR => "colour sensor".into(),
            ULTRASONIC => "ultrasonic sensor".into(),
            INFRARED => "infrared sensor".into(),
            NONE => "nothing".into(),
            other => format!("device type {other}"),
        }
    }
}

/// What went wrong decoding bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    #[error("message too short: {len} bytes, need at least {need}")]
    Short { len: usize, need: usize },
    #[error("length field says {field} bytes follow but the frame has {actual}")]
    Length { field: usize, actual: usize },
    #[error("unknown message type 0x{0:02X}")]
    Type(u8),
    #[error("parameter at byte {at}: {what}")]
    Param { at: usize, what: String },
    #[error("unknown opcode 0x{code:02X} at byte {at}")]
    Opcode { code: u8, at: usize },
    #[error("global memory has {have} bytes, reading {need} at offset {offset}")]
    Global {
        have: usize,
        need: usize,
        offset: usize,
    },
    #[error("{0}")]
    Other(String),
}

/// An EV3 motor port (output).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum OutputPort {
    A,
    B,
    C,
    D,
}

impl OutputPort {
    pub const ALL: [OutputPort; 4] = [OutputPort::A, OutputPort::B, OutputPort::C, OutputPort::D];

    /// Port number (NO) for OUTPUT_READ / OUTPUT_GET_COUNT: A = 0 .. D = 3.
    pub fn no(self) -> u8 {
        self as u8
    }

    /// Bit in the NOS field: A = 1, B = 2, C = 4, D = 8.
    pub fn bit(self) -> u8 {
        1 << self.no()
    }

    /// The motor read as an input device (ports 16..19).
    pub fn as_input(self) -> u8 {
        16 + self.no()
    }

    pub fn letter(self) -> char {
        (b'A' + self.no()) as char
    }

    pub fn from_letter(c: char) -> Option<OutputPort> {
        match c.to_ascii_uppercase() {
            'A' => Some(OutputPort::A),
            'B' => Some(OutputPort::B),
            'C' => Some(OutputPort::C),
            'D' => Some(OutputPort::D),
            _ => None,
        }
    }

    /// NOS of several ports.
    pub fn nos(ports: &[OutputPort]) -> u8 {
        ports.iter().fold(0, |acc, p| acc | p.bit())
    }
}

impl fmt::Display for OutputPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.letter())
    }
}

/// A decoded parameter (doc §5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Param {
    Const(i32),
    Str(String),
    Local(usize),
    Global(usize),
}

/// Appends the shortest constant form of `v` (LC0, LC1, LC2 or LC4).
pub fn push_const(buf: &mut Vec<u8>, v: i32) {
    if (-32..=31).contains(&v) {
        buf.push((v as u8) & 0x3F);
    } else if (-127..=127).contains(&v) {
        buf.push(0x81);
        buf.push(v as i8 as u8);
    } else if (-32767..=32767).contains(&v) {
        buf.push(0x82);
        buf.extend_from_slice(&(v as i16).to_le_bytes());
    } else {
        buf.push(0x83);
        buf.extend_from_slice(&v.to_le_bytes());
    }
}

/// Appends a global-variable reference (GV0 when it fits, else GV1/GV2).
pub fn push_global(buf: &mut Vec<u8>, offset: usize) {
    if offset < 32 {
        buf.push(0x60 | offset as u8);
    } else if offset < 256 {
        buf.push(0xE1);
        buf.push(offset as u8);
    } else {
        buf.push(0xE2);
        buf.extend_from_slice(&(offset as u16).to_le_bytes());
    }
}

/// Decodes one parameter at `*pos`, advancing it. Accepts every form of doc §5.
pub fn decode_param(bytes: &[u8], pos: &mut usize) -> Result<Param, ProtocolError> {
    let at = *pos;
    let err = |what: &str| ProtocolError::Param {
        at,
        what: what.to_string(),
    };
    let first = *bytes.get(at).ok_or_else(|| err("missing"))?;
    *pos += 1;
    if first & 0x80 == 0 {
        let value = (first & 0x1F) as usize;
        return Ok(match first & 0x60 {
            0x40 => Param::Local(value),
            0x60 => Param::Global(value),
            _ => {
                let mut v = (first & 0x3F) as i32;
                if first & 0x20 != 0 {
                    v |= !0x3F;
                }
                Param::Const(v)
            }
        });
    }
    let variable = first & 0x40 != 0;
    let global = first & 0x20 != 0;
    if first & 0x18 != 0 {
        return Err(err("address/handle forms are not supported"));
    }
    let size = first & 0x07;
    if !variable && (size == 4 || size == 0) {
        let rest = &bytes[*pos..];
        let end = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| err("unterminated string"))?;
        let s = String::from_utf8_lossy(&rest[..end]).into_owned();
        *pos += end + 1;
        return Ok(Param::Str(s));
    }
    let n = match size {
        1 => 1,
        2 => 2,
        3 => 4,
        _ => return Err(err(&format!("bad size code {size}"))),
    };
    let data = bytes
        .get(*pos..*pos + n)
        .ok_or_else(|| err("truncated value"))?;
    *pos += n;
    let value = match n {
        1 => data[0] as i8 as i32,
        2 => i16::from_le_bytes([data[0], data[1]]) as i32,
        _ => i32::from_le_bytes([data[0], data[1], data[2], data[3]]),
    };
    Ok(if !variable {
        Param::Const(value)
    } else {
        // Variable offsets are unsigned.
        let off = match n {
            1 => data[0] as usize,
            2 => u16::from_le_bytes([data[0], data[1]]) as usize,
            _ => u32::from_le_bytes([data[0], data[1], data[2], data[3]]) as usize,
        };
        if global {
            Param::Global(off)
        } else {
            Param::Local(off)
        }
    })
}

/// Where one value lands in the reply's global memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub offset: usize,
    pub kind: SlotKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotKind {
    I8,
    I32,
    F32,
}

impl SlotKind {
    fn size(self) -> usize {
        match self {
            SlotKind::I8 => 1,
            SlotKind::I32 | SlotKind::F32 => 4,
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

    /// Allocates a global slot; 4-byte values aligned to 4 (doc §4.7: allocate them first).
    fn alloc(&mut self, kind: SlotKind) -> Slot {
        let size = kind.size();
        let offset = self.global.div_ceil(size) * size;
        self.global = offset + size;
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

    pub fn nop(&mut self) -> &mut Self {
        self.ops.push(op::NOP);
        self
    }

    /// LED pattern 0..9 (0 off, 1 green, 2 red, 3 orange, +3 flash, +6 pulse).
    pub fn led(&mut self, pattern: u8) -> &mut Self {
        self.ops
            .extend_from_slice(&[op::UI_WRITE, op::UI_WRITE_LED]);
        self.c(pattern as i32)
    }

    pub fn tone(&mut self, volume: u8, freq_hz: u16, ms: u16) -> &mut Self {
        self.ops.extend_from_slice(&[op::SOUND, op::SOUND_TONE]);
        self.c(volume as i32).c(freq_hz as i32).c(ms as i32)
    }

    fn out(&mut self, code: u8, nos: u8) -> &mut Self {
        self.ops.push(code);
        self.c(0).c(nos as i32)
    }

    pub fn output_reset(&mut self, nos: u8) -> &mut Self {
        self.out(op::OUTPUT_RESET, nos)
    }

    pub fn output_stop(&mut self, nos: u8, brake: bool) -> &mut Self {
        self.out(op::OUTPUT_STOP, nos).c(brake as i32)
    }

    pub fn output_power(&mut self, nos: u8, power: i8) -> &mut Self {
        self.out(op::OUTPUT_POWER, nos).c(power as i32)
    }

    pub fn output_speed(&mut self, nos: u8, speed: i8) -> &mut Self {
        self.out(op::OUTPUT_SPEED, nos).c(speed as i32)
    }

    pub fn output_start(&mut self, nos: u8) -> &mut Self {
        self.out(op::OUTPUT_START, nos)
    }

    pub fn output_ready(&mut self, nos: u8) -> &mut Self {
        self.out(op::OUTPUT_READY, nos)
    }

    pub fn output_clr_count(&mut self, nos: u8) -> &mut Self {
        self.out(op::OUTPUT_CLR_COUNT, nos)
    }

    /// OUTPUT_TEST: busy flag (DATA8) of the selected motors.
    pub fn output_test(&mut self, nos: u8) -> Slot {
        self.out(op::OUTPUT_TEST, nos);
        self.g(SlotKind::I8)
    }

    /// OUTPUT_READ: (speed DATA8, movement count DATA32) of one motor.
    pub fn output_read(&mut self, port: OutputPort) -> (Slot, Slot) {
        self.ops.push(op::OUTPUT_READ);
        self.c(0).c(port.no() as i32);
        // The speed byte goes first on the wire; keep the i32 aligned after it.
        let speed = self.g(SlotKind::I8);
        let tacho = self.g(SlotKind::I32);
        (speed, tacho)
    }

    /// OUTPUT_GET_COUNT: sensor tacho count (DATA32) of one motor.
    pub fn output_get_count(&mut self, port: OutputPort) -> Slot {
        self.ops.push(op::OUTPUT_GET_COUNT);
        self.c(0).c(port.no() as i32);
        self.g(SlotKind::I32)
    }

    fn profile(&mut self, code: u8, nos: u8, speed: i8, p: [u32; 3], brake: bool) -> &mut Self {
        self.out(code, nos).c(speed as i32);
        for v in p {
            self.c(v.min(i32::MAX as u32) as i32);
        }
        self.c(brake as i32)
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
        self.ops
            .extend_from_slice(&[op::INPUT_DEVICE, op::INPUT_GET_TYPEMODE]);
        self.c(0).c(input as i32);
        let t = self.g(SlotKind::I8);
        let m = self.g(SlotKind::I8);
        (t, m)
    }

    fn ready(&mut self, sub: u8, input: u8, typ: i8, mode: i8, n: u8, kind: SlotKind) -> Vec<Slot> {
        self.ops.extend_from_slice(&[op::INPUT_DEVICE, sub]);
        self.c(0)
            .c(input as i32)
            .c(typ as i32)
            .c(mode as i32)
            .c(n as i32);
        (0..n).map(|_| self.g(kind)).collect()
    }

    /// INPUT_DEVICE READY_RAW: `n` DATA32 values.
    pub fn ready_raw(&mut self, input: u8, typ: i8, mode: i8, n: u8) -> Vec<Slot> {
        self.ready(op::INPUT_READY_RAW, input, typ, mode, n, SlotKind::I32)
    }

    /// INPUT_DEVICE READY_SI: `n` DATAF values.
    pub fn ready_si(&mut self, input: u8, typ: i8, mode: i8, n: u8) -> Vec<Slot> {
        self.ready(op::INPUT_READY_SI, input, typ, mode, n, SlotKind::F32)
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

/// A decoded reply.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    pub counter: u16,
    pub ok: bool,
    pub globals: Vec<u8>,
}

impl Reply {
    fn bytes(&self, slot: Slot) -> Result<&[u8], ProtocolError> {
        let n = slot.kind.size();
        self.globals
            .get(slot.offset..slot.offset + n)
            .ok_or(ProtocolError::Global {
                have: self.globals.len(),
                need: n,
                offset: slot.offset,
            })
    }

    pub fn i8(&self, slot: Slot) -> Result<i8, ProtocolError> {
        Ok(self.bytes(slot)?[0] as i8)
    }

    pub fn i32(&self, slot: Slot) -> Result<i32, ProtocolError> {
        let b = self.bytes(slot)?;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn f32(&self, slot: Slot) -> Result<f32, ProtocolError> {
        let b = self.bytes(slot)?;
        Ok(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// The header every frame (command or reply) starts with: checks the length field against
/// the frame and returns the message counter and the type byte.
fn frame_header(frame: &[u8]) -> Result<(u16, u8), ProtocolError> {
    if frame.len() < 5 {
        return Err(ProtocolError::Short {
            len: frame.len(),
            need: 5,
        });
    }
    let field = u16::from_le_bytes([frame[0], frame[1]]) as usize;
    if field != frame.len() - 2 {
        return Err(ProtocolError::Length {
            field,
            actual: frame.len() - 2,
        });
    }
    let counter = u16::from_le_bytes([frame[2], frame[3]]);
    Ok((counter, frame[4]))
}

/// Decodes one framed reply (length field included).
pub fn decode_reply(frame: &[u8]) -> Result<Reply, ProtocolError> {
    let (counter, kind) = frame_header(frame)?;
    let ok = match kind {
        DIRECT_REPLY => true,
        DIRECT_REPLY_ERROR => false,
        other => return Err(ProtocolError::Type(other)),
    };
    Ok(Reply {
        counter,
        ok,
        globals: frame[5..].to_vec(),
    })
}

/// Encodes a reply (simulator side).
pub fn encode_reply(counter: u16, ok: bool, globals: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(5 + globals.len());
    out.extend_from_slice(&((3 + globals.len()) as u16).to_le_bytes());
    out.extend_from_slice(&counter.to_le_bytes());
    out.push(if ok { DIRECT_REPLY } else { DIRECT_REPLY_ERROR });
    out.extend_from_slice(globals);
    out
}

/// A decoded command frame (simulator side).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandFrame {
    pub counter: u16,
    pub kind: u8,
    pub global: usize,
    pub local: usize,
    /// Operations (direct) or the system command bytes (system).
    pub body: Vec<u8>,
}

impl CommandFrame {
    pub fn wants_reply(&self) -> bool {
        self.kind == DIRECT_COMMAND_REPLY || self.kind == SYSTEM_COMMAND_REPLY
    }

    pub fn is_system(&self) -> bool {
        self.kind == SYSTEM_COMMAND_REPLY || self.kind == SYSTEM_COMMAND_NO_REPLY
    }
}

/// Decodes one framed command (length field included).
pub fn decode_command(frame: &[u8]) -> Result<CommandFrame, ProtocolError> {
    let (counter, kind) = frame_header(frame)?;
    match kind {
        DIRECT_COMMAND_REPLY | DIRECT_COMMAND_NO_REPLY => {
            if frame.len() < 7 {
                return Err(ProtocolError::Short {
                    len: frame.len(),
                    need: 7,
                });
            }
            let mem = u16::from_le_bytes([frame[5], frame[6]]);
            Ok(CommandFrame {
                counter,
                kind,
                global: (mem & 0x3FF) as usize,
                local: (mem >> 10) as usize,
                body: frame[7..].to_vec(),
            })
        }
        SYSTEM_COMMAND_REPLY | SYSTEM_COMMAND_NO_REPLY => Ok(CommandFrame {
            counter,
            kind,
            global: 0,
            local: 0,
            body: frame[5..].to_vec(),
        }),
        other => Err(ProtocolError::Type(other)),
    }
}

/// Splits a byte stream into frames (length-prefixed), tolerating split and merged reads.
#[derive(Debug, Default)]
pub struct FrameBuffer {
    buf: Vec<u8>,
}

impl FrameBuffer {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete frame, if any.
    pub fn pop(&mut self) -> Option<Vec<u8>> {
        if self.buf.len() < 2 {
            return None;
        }
        let len = u16::from_le_bytes([self.buf[0], self.buf[1]]) as usize;
        if self.buf.len() < len + 2 {
            return None;
        }
        let frame: Vec<u8> = self.buf.drain(..len + 2).collect();
        Some(frame)
    }

    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    pub fn clear(&mut self) {
        self.buf.clear();
    }
}

/// Hex dump, for messages and logs.
pub fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Bytes from the hex dumps of the protocol doc (`"0D 00 | 2A 00"`; `|` separators are
/// ignored), for tests here and in the simulator.
#[cfg(test)]
pub(crate) fn from_hex(s: &str) -> Vec<u8> {
    s.split_whitespace()
        .filter(|t| *t != "|")
        .map(|t| u8::from_str_radix(t, 16).expect("a hex byte"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::from_hex as h;

    #[test]
    fn constant_encodings_of_doc_section_5() {
        let cases: &[(i32, &str)] = &[
            (0, "00"),
            (31, "1F"),
            (-1, "3F"),
            (-5, "3B"),
            (-32, "20"),
            (32, "81 20"),
            (-33, "81 DF"),
            (60, "81 3C"),
            (100, "81 64"),
            (-100, "81 9C"),
            (270, "82 0E 01"),
            (-270, "82 F2 FE"),
            (540, "82 1C 02"),
            (1080, "82 38 04"),
            (-1080, "82 C8 FB"),
            (32767, "82 FF 7F"),
            (32768, "83 00 80 00 00"),
            (-40000, "83 C0 63 FF FF"),
        ];
        for &(v, bytes) in cases {
            let mut b = Vec::new();
            push_const(&mut b, v);
            assert_eq!(b, h(bytes), "value {v}");
            let mut pos = 0;
            assert_eq!(decode_param(&b, &mut pos).unwrap(), Param::Const(v));
            assert_eq!(pos, b.len());
        }
        for (off, byte) in [(0, 0x60), (4, 0x64), (8, 0x68)] {
            let mut b = Vec::new();
            push_global(&mut b, off);
            assert_eq!(b, vec![byte]);
        }
        let mut pos = 0;
        assert_eq!(decode_param(&[0x40], &mut pos).unwrap(), Param::Local(0));
    }

    #[test]
    fn decoder_accepts_long_forms_for_small_values() {
        for (bytes, v) in [
            (h("81 05"), Param::Const(5)),
            (h("82 05 00"), Param::Const(5)),
            (h("83 FB FF FF FF"), Param::Const(-5)),
            (h("E1 04"), Param::Global(4)),
            (h("E2 08 00"), Param::Global(8)),
            (h("C1 02"), Param::Local(2)),
            (h("84 41 42 00"), Param::Str("AB".into())),
        ] {
            let mut pos = 0;
            assert_eq!(decode_param(&bytes, &mut pos).unwrap(), v);
            assert_eq!(pos, bytes.len());
        }
        let mut pos = 0;
        assert!(decode_param(&h("82 05"), &mut pos).is_err());
    }

    #[test]
    fn e1_ping() {
        let mut c = DirectCommand::new();
        c.nop();
        assert_eq!(c.encode(0x2A), h("06 00 | 2A 00 | 00 | 00 00 | 01"));
        let r = decode_reply(&h("03 00 2A 00 02")).unwrap();
        assert_eq!((r.counter, r.ok, r.globals.len()), (0x2A, true, 0));
    }

    #[test]
    fn e2_led() {
        let mut c = DirectCommand::no_reply();
        c.led(5);
        assert_eq!(c.encode(0x2B), h("08 00 | 2B 00 | 80 | 00 00 | 82 1B 05"));
    }

    #[test]
    fn e3_e4_step_speed() {
        let b = OutputPort::B.bit();
        let mut c = DirectCommand::new();
        c.step_speed(b, 40, [30, 210, 30], true).output_ready(b);
        assert_eq!(
            c.encode(1),
            h("13 00 | 01 00 | 00 | 00 00 | AE 00 02 81 28 1E 82 D2 00 1E 01 | AA 00 02")
        );
        let mut c = DirectCommand::no_reply();
        c.step_speed(b, -40, [30, 210, 30], true).output_start(b);
        assert_eq!(
            c.encode(2),
            h("13 00 | 02 00 | 80 | 00 00 | AE 00 02 81 D8 1E 82 D2 00 1E 01 | A6 00 02")
        );
    }

    #[test]
    fn e5_test_busy() {
        let mut c = DirectCommand::new();
        let busy = c.output_test(OutputPort::nos(&[OutputPort::A, OutputPort::B]));
        assert_eq!(c.encode(4), h("09 00 | 04 00 | 00 | 01 00 | A9 00 03 60"));
        let r = decode_reply(&h("04 00 | 04 00 | 02 | 01")).unwrap();
        assert_eq!(r.i8(busy).unwrap(), 1);
    }

    #[test]
    fn e6_rgb_raw() {
        let mut c = DirectCommand::new();
        let slots = c.ready_raw(1, device::COLOR, device::COLOR_RGB_RAW, 3);
        assert_eq!(
            c.encode(3),
            h("0F 00 | 03 00 | 00 | 0C 00 | 99 1C 00 01 1D 04 03 60 64 68")
        );
        let r = decode_reply(&h(
            "0F 00 | 03 00 | 02 | FD 00 00 00  24 01 00 00  B7 00 00 00",
        ))
        .unwrap();
        let rgb: Vec<i32> = slots.iter().map(|&s| r.i32(s).unwrap()).collect();
        assert_eq!(rgb, vec![253, 292, 183]);
    }

    #[test]
    fn e7_e8_positions() {
        let mut c = DirectCommand::new();
        let s = c.ready_si(OutputPort::A.as_input(), device::LARGE_MOTOR, 0, 1);
        assert_eq!(
            c.encode(6),
            h("0D 00 | 06 00 | 00 | 04 00 | 99 1D 00 10 07 00 01 60")
        );
        let r = decode_reply(&h("07 00 | 06 00 | 02 | 00 00 04 C2")).unwrap();
        assert_eq!(r.f32(s[0]).unwrap(), -33.0);
        let mut c = DirectCommand::new();
        let s = c.output_get_count(OutputPort::C);
        assert_eq!(c.encode(5), h("09 00 | 05 00 | 00 | 04 00 | B3 00 02 60"));
        let r = decode_reply(&h("07 00 | 05 00 | 02 | 0E 01 00 00")).unwrap();
        assert_eq!(r.i32(s).unwrap(), 270);
    }

    #[test]
    fn e9_to_e11() {
        let mut c = DirectCommand::no_reply();
        c.output_stop(0x0F, false);
        assert_eq!(c.encode(7), h("09 00 | 07 00 | 80 | 00 00 | A3 00 0F 00"));
        let mut c = DirectCommand::new();
        c.output_reset(2).output_clr_count(2);
        assert_eq!(
            c.encode(8),
            h("0B 00 | 08 00 | 00 | 00 00 | A2 00 02 | B2 00 02")
        );
        let mut c = DirectCommand::no_reply();
        c.time_speed(4, 50, [100, 500, 100], false).output_start(4);
        assert_eq!(
            c.encode(9),
            h("15 00 | 09 00 | 80 | 00 00 | AF 00 04 81 32 81 64 82 F4 01 81 64 00 | A6 00 04")
        );
    }

    #[test]
    fn e12_to_e14() {
        let mut c = DirectCommand::new();
        let s = c.ready_si(0, device::INFRARED, 0, 1);
        assert_eq!(
            c.encode(0x0B),
            h("0E 00 | 0B 00 | 00 | 04 00 | 99 1D 00 00 81 21 00 01 60")
        );
        let r = decode_reply(&h("07 00 | 0B 00 | 02 | 00 00 D0 41")).unwrap();
        assert_eq!(r.f32(s[0]).unwrap(), 26.0);

        let mut c = DirectCommand::new();
        c.ready_si(0x10, 7, 0, 1);
        c.ready_si(0x11, 7, 0, 1);
        c.ready_si(0x12, 8, 0, 1);
        c.output_test(7);
        assert_eq!(
            c.encode(0x0C),
            h("21 00 | 0C 00 | 00 | 0D 00 | 99 1D 00 10 07 00 01 60 | 99 1D 00 11 07 00 01 64 | 99 1D 00 12 08 00 01 68 | A9 00 07 6C")
        );

        let mut c = DirectCommand::new();
        let (sp, ta) = c.output_read(OutputPort::B);
        assert_eq!(
            c.encode(0x0D),
            h("0A 00 | 0D 00 | 00 | 08 00 | A8 00 01 60 64")
        );
        assert_eq!((sp.offset, ta.offset), (0, 4));
    }

    #[test]
    fn e15_error_reply_and_bad_frames() {
        let r = decode_reply(&h("03 00 | 34 12 | 04")).unwrap();
        assert_eq!((r.counter, r.ok), (0x1234, false));
        assert!(decode_reply(&h("04 00 34 12 04")).is_err());
        assert!(decode_reply(&h("03 00 34 12 07")).is_err());
        assert!(decode_reply(&h("03 00")).is_err());
    }

    #[test]
    fn frame_buffer_handles_split_and_merged_reads() {
        let mut fb = FrameBuffer::default();
        fb.push(&h("03"));
        assert!(fb.pop().is_none());
        fb.push(&h("00 2A 00 02 03 00"));
        assert_eq!(fb.pop().unwrap(), h("03 00 2A 00 02"));
        assert!(fb.pop().is_none());
        fb.push(&h("2B 00 02"));
        assert_eq!(fb.pop().unwrap(), h("03 00 2B 00 02"));
    }

    #[test]
    fn command_round_trip() {
        let mut c = DirectCommand::new();
        c.get_typemode(1);
        let f = decode_command(&c.encode(77)).unwrap();
        assert_eq!((f.counter, f.global, f.local), (77, 2, 0));
        assert!(f.wants_reply());
        assert_eq!(f.body, c.ops);
    }
}
