//! The wire audit: decodes every frame a host sends and every frame the brick answers, and
//! checks each against rules taken from LEGO's firmware, independently of the encoder that
//! built them. The encoder and the simulated brick share the codec, so a mistake in the
//! codec would pass every round trip between them unnoticed; the audit reads the bytes
//! with its own table of what the firmware expects, so it catches such a mistake.
//!
//! Level: robot (pure: bytes in, violations out; uses [`super`]'s parameter decoder and
//! frame buffer). No I/O, no printing.
//!
//! Feed it the two byte streams of a link as they went past ([`Audit::host`] and
//! [`Audit::brick`], in any chunks), then read [`Audit::violations`]. A test captures the
//! streams with [`crate::robot::link::TapLink`].
//!
//! ## Rules and where they come from
//!
//! | Rule | What is checked | Source |
//! |------|-----------------|--------|
//! | `length` | a frame's length field counts the bytes after it; no frame is longer than 1024 bytes | `c_com.c`, `MAX_MSG_SIZE` in `c_com.h` |
//! | `type` | a host frame is a direct command (`0x00`, `0x80`); a brick frame is a direct reply (`0x02`, `0x04`) | `c_com.h` |
//! | `memory` | the header's global bytes (10 bits) and local bytes (6 bits) cover every variable an operation names | `c_com.c` (the header sizes the command's memory) |
//! | `opcode` | every operation is an opcode (and sub-code) of the table below, with exactly its parameters | `bytecodes.h`, the parameter table of `lms2012.c` |
//! | `encoding` | every parameter decodes (short or long form; no handles); a constant fits the parameter's type (DATA8 −128..127, DATA16, DATA32); an output is a variable, never a constant | `lms2012.c` (`PrimParPointer`), `bytecodes.h` (PRIMPAR bits) |
//! | `alignment` | a DATA16 output at an even offset, DATA32 and DATAF at a multiple of 4 | the firmware's note on global variables (`lms2012.h`, memory layout) |
//! | `overlap` | no two outputs of one command write the same global bytes | the reply carries one value per byte |
//! | `layer` | LAYER is 0: the brick at the end of the link | `c_output.c`, `c_input.c` (layers are daisy-chained bricks) |
//! | `port` | NOS is a bit field 1..15 (A = 1 … D = 8); NO a port number 0..3; an input 0..3 (sensor ports 1..4) or 16..19 (motors A..D as inputs) | `c_output.c` (`No < OUTPUTS`), `c_input.c` |
//! | `value` | SPEED and POWER −100..100; BRAKE 0 or 1; polarity −1, 0, 1; steps and times ≥ 0 and not all 0 (a job of no steps never ends); LED pattern 0..9; tone volume 0..100 and 250..10000 Hz; READY_* asks 1..8 values | `c_output.c`, `d_pwm.c`, `c_ui.c`, `c_sound.c`, `c_input.c` |
//! | `string` | a string output gets a LENGTH of 1..127 (not −1, "no check") and that many bytes of global memory; the brick's string ends within them | `c_ui.c`, `c_com.c` (`snprintf` into LENGTH bytes) |
//! | `in-flight` | no command is sent while one that wants a reply has not been answered (the brick drops it) | `c_com.c` |
//! | `counter` | a reply-wanting command's counter is not one still awaiting its reply; every reply carries the counter of a command awaiting one | `c_com.c` (the reply copies the counter) |
//! | `reply-size` | a DIRECT_REPLY carries exactly the command's global bytes (an error reply may carry none) | `c_com.c` |
//! | `reply` | no reply comes for a no-reply command; no DIRECT_REPLY_ERROR comes at all (a correct host never causes one) | `c_com.c` |
//! | `unanswered` | at the end, every reply-wanting command was answered and no partial frame is left | — |
//!
//! ## Operations known to the audit
//!
//! `*` marks an output. Types: 8 = DATA8, 16 = DATA16, 32 = DATA32, F = DATAF, S = string.
//!
//! | Code | Operation | Parameters |
//! |------|-----------|------------|
//! | `0x01` | NOP | — |
//! | `0x82 0x1B` | UI_WRITE LED | PATTERN:8 |
//! | `0x81 0x01` | UI_READ GET_VBATT | *VALUE:F |
//! | `0x81 0x12` | UI_READ GET_LBATT | *PCT:8 |
//! | `0x81 0x09` / `0x0A` | UI_READ GET_HW_VERS / GET_FW_VERS | LENGTH:8 *TEXT:S |
//! | `0xD3 0x0D` | COM_GET GET_BRICKNAME | LENGTH:8 *TEXT:S |
//! | `0x94 0x01` | SOUND TONE | VOLUME:8 FREQ:16 DURATION:16 |
//! | `0x94 0x00` | SOUND BREAK | — |
//! | `0x96` | SOUND_READY | — |
//! | `0x85` | TIMER_WAIT | TIME:32 *TIMER:32 |
//! | `0x86` | TIMER_READY | TIMER:32 |
//! | `0x99 0x05` | INPUT_DEVICE GET_TYPEMODE | LAYER:8 NO:8 *TYPE:8 *MODE:8 |
//! | `0x99 0x0B` | INPUT_DEVICE GET_RAW | LAYER:8 NO:8 *VALUE:32 |
//! | `0x99 0x1A` | INPUT_DEVICE CLR_CHANGES | LAYER:8 NO:8 |
//! | `0x99 0x1B` / `0x1C` / `0x1D` | INPUT_DEVICE READY_PCT / _RAW / _SI | LAYER:8 NO:8 TYPE:8 MODE:8 VALUES:8, then VALUES × *8 / *32 / *F |
//! | `0xA2`, `0xA6`, `0xAA`, `0xB2` | OUTPUT_RESET, _START, _READY, _CLR_COUNT | LAYER:8 NOS:8 |
//! | `0xA3` | OUTPUT_STOP | LAYER:8 NOS:8 BRAKE:8 |
//! | `0xA4` / `0xA5` | OUTPUT_POWER / _SPEED | LAYER:8 NOS:8 POWER:8 |
//! | `0xA7` | OUTPUT_POLARITY | LAYER:8 NOS:8 POL:8 |
//! | `0xA8` | OUTPUT_READ | LAYER:8 NO:8 *SPEED:8 *COUNT:32 |
//! | `0xA9` | OUTPUT_TEST | LAYER:8 NOS:8 *BUSY:8 |
//! | `0xAC`–`0xAF` | OUTPUT_STEP_POWER, _TIME_POWER, _STEP_SPEED, _TIME_SPEED | LAYER:8 NOS:8 SPEED:8 P1:32 P2:32 P3:32 BRAKE:8 |
//! | `0xB3` | OUTPUT_GET_COUNT | LAYER:8 NO:8 *COUNT:32 |
//!
//! The operations of [programs on the brick](super#programs-on-the-brick) (`w` is the
//! family's width, 8, 16 or 32; OFFSET counts from the end of the jump; ARRAY is a
//! variable, the array's first element):
//!
//! | Code | Operation | Parameters |
//! |------|-----------|------------|
//! | `0x10`–`0x1A` | ADD*w*, SUB*w*, MUL*w* | A:w B:w *DST:w |
//! | `0x30`–`0x3A` | MOVE*f*_*t* | SRC:f *DST:t |
//! | `0x40` | JR | OFFSET:32 |
//! | `0x41` / `0x42` | JR_FALSE / JR_TRUE | FLAG:8 OFFSET:32 |
//! | `0x44`–`0x5A` | CP_LT … CP_GTEQ *w* | A:w B:w *FLAG:8 |
//! | `0x64`–`0x7A` | JR_LT … JR_GTEQ *w* | A:w B:w OFFSET:32 |
//! | `0x87` | TIMER_READ | *TIME:32 |
//! | `0xC8`–`0xCA` | READ*w* | ARRAY:w INDEX:8 *DST:w |
//! | `0xCC`–`0xCE` | WRITE*w* | SRC:w INDEX:8 ARRAY:w |
//!
//! For them two more rules hold: `jump` (a constant OFFSET lands on the first byte of an
//! operation of the same command, or just past its last), and `array` (ARRAY is a
//! variable). A command that jumps is a program: it may write a variable more than once,
//! so the `overlap` rule applies only to commands without jumps.
//!
//! An operation outside this table is a violation until it is added here, with its
//! parameters from the firmware's table: the audit never guesses a parameter count.

use std::collections::BTreeMap;
use std::fmt;

use super::{
    decode_param, hex, op, FrameBuffer, Param, DIRECT_COMMAND_NO_REPLY, DIRECT_COMMAND_REPLY,
    DIRECT_REPLY, DIRECT_REPLY_ERROR, MAX_MESSAGE,
};

/// A parameter's data type, as the firmware's table names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// DATA8
    I8,
    /// DATA16
    I16,
    /// DATA32
    I32,
    /// DATAF
    F32,
    /// A string (its size given by the LENGTH before it).
    Str,
}

impl Ty {
    fn size(self) -> usize {
        match self {
            Ty::I8 => 1,
            Ty::I16 => 2,
            Ty::I32 | Ty::F32 => 4,
            Ty::Str => 1,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Ty::I8 => "DATA8",
            Ty::I16 => "DATA16",
            Ty::I32 => "DATA32",
            Ty::F32 => "DATAF",
            Ty::Str => "string",
        }
    }
}

/// What a parameter means, for the `value` and `port` rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// No rule beyond its type.
    Any,
    /// LAYER: 0.
    Layer,
    /// NOS: a motor bit field 1..15.
    Nos,
    /// NO: one motor number 0..3.
    No,
    /// An input: 0..3 or 16..19.
    Input,
    /// SPEED or POWER: −100..100.
    Speed,
    /// BRAKE: 0 or 1.
    Brake,
    /// Polarity: −1, 0 or 1.
    Pol,
    /// Steps or milliseconds of a motor job: ≥ 0 (the three together not all 0).
    Steps,
    /// LED pattern 0..9.
    Pattern,
    /// Volume 0..100.
    Volume,
    /// Tone frequency 250..10000 Hz.
    Freq,
    /// Milliseconds ≥ 0.
    Millis,
    /// LENGTH of the string output after it: 1..127.
    Length,
    /// A device type for READY_*: 0 (keep) or a type number 1..127.
    DeviceType,
    /// A mode for READY_*: −1 (keep) or 0..7.
    Mode,
    /// VALUES of READY_*: 1..8 outputs follow.
    Values,
    /// A jump's OFFSET: lands on an operation of the command.
    Offset,
    /// The first element of an array (READ/WRITE): a variable.
    Array,
}

/// One parameter of an operation.
#[derive(Clone, Copy, Debug)]
pub struct P {
    pub ty: Ty,
    pub out: bool,
    pub role: Role,
}

const fn i(ty: Ty, role: Role) -> P {
    P {
        ty,
        out: false,
        role,
    }
}

const fn o(ty: Ty) -> P {
    P {
        ty,
        out: true,
        role: Role::Any,
    }
}

/// The values a READY_* sub-command writes after its VALUES parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tail {
    None,
    /// VALUES outputs of this type follow the parameters.
    Values(Ty),
}

/// An operation the audit knows: an opcode, or an opcode with a sub-code.
#[derive(Clone, Copy, Debug)]
pub struct OpSpec {
    pub code: u8,
    pub sub: Option<u8>,
    pub name: &'static str,
    pub params: &'static [P],
    pub tail: Tail,
}

use Role as R;
use Ty::{F32, I16, I32, I8};

const LAYER_NOS: &[P] = &[i(I8, R::Layer), i(I8, R::Nos)];
const PROFILE: &[P] = &[
    i(I8, R::Layer),
    i(I8, R::Nos),
    i(I8, R::Speed),
    i(I32, R::Steps),
    i(I32, R::Steps),
    i(I32, R::Steps),
    i(I8, R::Brake),
];
const READY: &[P] = &[
    i(I8, R::Layer),
    i(I8, R::Input),
    i(I8, R::DeviceType),
    i(I8, R::Mode),
    i(I8, R::Values),
];

const TEXT: &[P] = &[i(I8, R::Length), o(Ty::Str)];

const fn spec(code: u8, name: &'static str, params: &'static [P]) -> OpSpec {
    OpSpec {
        code,
        sub: None,
        name,
        params,
        tail: Tail::None,
    }
}

const fn sub(code: u8, s: u8, name: &'static str, params: &'static [P]) -> OpSpec {
    OpSpec {
        code,
        sub: Some(s),
        name,
        params,
        tail: Tail::None,
    }
}

/// Every operation the audit knows (see the module docs' table).
pub const OPS: &[OpSpec] = &[
    spec(op::NOP, "NOP", &[]),
    sub(
        op::UI_WRITE,
        op::UI_WRITE_LED,
        "UI_WRITE LED",
        &[i(I8, R::Pattern)],
    ),
    sub(
        op::UI_READ,
        op::UI_READ_GET_VBATT,
        "UI_READ GET_VBATT",
        &[o(F32)],
    ),
    sub(
        op::UI_READ,
        op::UI_READ_GET_LBATT,
        "UI_READ GET_LBATT",
        &[o(I8)],
    ),
    sub(
        op::UI_READ,
        op::UI_READ_GET_HW_VERS,
        "UI_READ GET_HW_VERS",
        TEXT,
    ),
    sub(
        op::UI_READ,
        op::UI_READ_GET_FW_VERS,
        "UI_READ GET_FW_VERS",
        TEXT,
    ),
    sub(
        op::COM_GET,
        op::COM_GET_BRICKNAME,
        "COM_GET GET_BRICKNAME",
        TEXT,
    ),
    sub(op::SOUND, 0x00, "SOUND BREAK", &[]),
    sub(
        op::SOUND,
        op::SOUND_TONE,
        "SOUND TONE",
        &[i(I8, R::Volume), i(I16, R::Freq), i(I16, R::Millis)],
    ),
    spec(op::SOUND_READY, "SOUND_READY", &[]),
    spec(op::TIMER_WAIT, "TIMER_WAIT", &[i(I32, R::Millis), o(I32)]),
    spec(op::TIMER_READY, "TIMER_READY", &[i(I32, R::Any)]),
    sub(
        op::INPUT_DEVICE,
        op::INPUT_GET_TYPEMODE,
        "INPUT_DEVICE GET_TYPEMODE",
        &[i(I8, R::Layer), i(I8, R::Input), o(I8), o(I8)],
    ),
    sub(
        op::INPUT_DEVICE,
        op::INPUT_GET_RAW,
        "INPUT_DEVICE GET_RAW",
        &[i(I8, R::Layer), i(I8, R::Input), o(I32)],
    ),
    sub(
        op::INPUT_DEVICE,
        op::INPUT_CLR_CHANGES,
        "INPUT_DEVICE CLR_CHANGES",
        &[i(I8, R::Layer), i(I8, R::Input)],
    ),
    OpSpec {
        tail: Tail::Values(I8),
        ..sub(
            op::INPUT_DEVICE,
            op::INPUT_READY_PCT,
            "INPUT_DEVICE READY_PCT",
            READY,
        )
    },
    OpSpec {
        tail: Tail::Values(I32),
        ..sub(
            op::INPUT_DEVICE,
            op::INPUT_READY_RAW,
            "INPUT_DEVICE READY_RAW",
            READY,
        )
    },
    OpSpec {
        tail: Tail::Values(F32),
        ..sub(
            op::INPUT_DEVICE,
            op::INPUT_READY_SI,
            "INPUT_DEVICE READY_SI",
            READY,
        )
    },
    spec(op::OUTPUT_RESET, "OUTPUT_RESET", LAYER_NOS),
    spec(
        op::OUTPUT_STOP,
        "OUTPUT_STOP",
        &[i(I8, R::Layer), i(I8, R::Nos), i(I8, R::Brake)],
    ),
    spec(
        op::OUTPUT_POWER,
        "OUTPUT_POWER",
        &[i(I8, R::Layer), i(I8, R::Nos), i(I8, R::Speed)],
    ),
    spec(
        op::OUTPUT_SPEED,
        "OUTPUT_SPEED",
        &[i(I8, R::Layer), i(I8, R::Nos), i(I8, R::Speed)],
    ),
    spec(op::OUTPUT_START, "OUTPUT_START", LAYER_NOS),
    spec(
        op::OUTPUT_POLARITY,
        "OUTPUT_POLARITY",
        &[i(I8, R::Layer), i(I8, R::Nos), i(I8, R::Pol)],
    ),
    spec(
        op::OUTPUT_READ,
        "OUTPUT_READ",
        &[i(I8, R::Layer), i(I8, R::No), o(I8), o(I32)],
    ),
    spec(
        op::OUTPUT_TEST,
        "OUTPUT_TEST",
        &[i(I8, R::Layer), i(I8, R::Nos), o(I8)],
    ),
    spec(op::OUTPUT_READY, "OUTPUT_READY", LAYER_NOS),
    spec(op::OUTPUT_STEP_POWER, "OUTPUT_STEP_POWER", PROFILE),
    spec(op::OUTPUT_TIME_POWER, "OUTPUT_TIME_POWER", PROFILE),
    spec(op::OUTPUT_STEP_SPEED, "OUTPUT_STEP_SPEED", PROFILE),
    spec(op::OUTPUT_TIME_SPEED, "OUTPUT_TIME_SPEED", PROFILE),
    spec(op::OUTPUT_CLR_COUNT, "OUTPUT_CLR_COUNT", LAYER_NOS),
    spec(
        op::OUTPUT_GET_COUNT,
        "OUTPUT_GET_COUNT",
        &[i(I8, R::Layer), i(I8, R::No), o(I32)],
    ),
];

const fn by_width(code: u8, lists: [&'static [P]; 3]) -> &'static [P] {
    lists[(code & 0x03) as usize]
}

const MATH: [&[P]; 3] = [
    &[i(I8, R::Any), i(I8, R::Any), o(I8)],
    &[i(I16, R::Any), i(I16, R::Any), o(I16)],
    &[i(I32, R::Any), i(I32, R::Any), o(I32)],
];
const CMP: [&[P]; 3] = [
    &[i(I8, R::Any), i(I8, R::Any), o(I8)],
    &[i(I16, R::Any), i(I16, R::Any), o(I8)],
    &[i(I32, R::Any), i(I32, R::Any), o(I8)],
];
const JR_CMP: [&[P]; 3] = [
    &[i(I8, R::Any), i(I8, R::Any), i(I32, R::Offset)],
    &[i(I16, R::Any), i(I16, R::Any), i(I32, R::Offset)],
    &[i(I32, R::Any), i(I32, R::Any), i(I32, R::Offset)],
];
const READ_W: [&[P]; 3] = [
    &[i(I8, R::Array), i(I8, R::Any), o(I8)],
    &[i(I16, R::Array), i(I8, R::Any), o(I16)],
    &[i(I32, R::Array), i(I8, R::Any), o(I32)],
];
const WRITE_W: [&[P]; 3] = [
    &[i(I8, R::Any), i(I8, R::Any), i(I8, R::Array)],
    &[i(I16, R::Any), i(I8, R::Any), i(I16, R::Array)],
    &[i(I32, R::Any), i(I8, R::Any), i(I32, R::Array)],
];
/// MOVE*f*_*t*, by (f, t).
const MOVES: [[&[P]; 3]; 3] = [
    [
        &[i(I8, R::Any), o(I8)],
        &[i(I8, R::Any), o(I16)],
        &[i(I8, R::Any), o(I32)],
    ],
    [
        &[i(I16, R::Any), o(I8)],
        &[i(I16, R::Any), o(I16)],
        &[i(I16, R::Any), o(I32)],
    ],
    [
        &[i(I32, R::Any), o(I8)],
        &[i(I32, R::Any), o(I16)],
        &[i(I32, R::Any), o(I32)],
    ],
];

const fn math(code: u8, name: &'static str) -> OpSpec {
    spec(code, name, by_width(code, MATH))
}

const fn mov(code: u8, name: &'static str) -> OpSpec {
    spec(
        code,
        name,
        MOVES[((code >> 2) & 0x03) as usize][(code & 0x03) as usize],
    )
}

const fn cmp(code: u8, name: &'static str) -> OpSpec {
    spec(code, name, by_width(code, CMP))
}

const fn jr_cmp(code: u8, name: &'static str) -> OpSpec {
    spec(code, name, by_width(code, JR_CMP))
}

const fn read_w(code: u8, name: &'static str) -> OpSpec {
    spec(code, name, by_width(code, READ_W))
}

const fn write_w(code: u8, name: &'static str) -> OpSpec {
    spec(code, name, by_width(code, WRITE_W))
}

/// The operations of programs on the brick (see the module docs' second table).
pub const PROGRAM_OPS: &[OpSpec] = &[
    math(0x10, "ADD8"),
    math(0x11, "ADD16"),
    math(0x12, "ADD32"),
    math(0x14, "SUB8"),
    math(0x15, "SUB16"),
    math(0x16, "SUB32"),
    math(0x18, "MUL8"),
    math(0x19, "MUL16"),
    math(0x1A, "MUL32"),
    mov(0x30, "MOVE8_8"),
    mov(0x31, "MOVE8_16"),
    mov(0x32, "MOVE8_32"),
    mov(0x34, "MOVE16_8"),
    mov(0x35, "MOVE16_16"),
    mov(0x36, "MOVE16_32"),
    mov(0x38, "MOVE32_8"),
    mov(0x39, "MOVE32_16"),
    mov(0x3A, "MOVE32_32"),
    spec(0x40, "JR", &[i(I32, R::Offset)]),
    spec(0x41, "JR_FALSE", &[i(I8, R::Any), i(I32, R::Offset)]),
    spec(0x42, "JR_TRUE", &[i(I8, R::Any), i(I32, R::Offset)]),
    cmp(0x44, "CP_LT8"),
    cmp(0x45, "CP_LT16"),
    cmp(0x46, "CP_LT32"),
    cmp(0x48, "CP_GT8"),
    cmp(0x49, "CP_GT16"),
    cmp(0x4A, "CP_GT32"),
    cmp(0x4C, "CP_EQ8"),
    cmp(0x4D, "CP_EQ16"),
    cmp(0x4E, "CP_EQ32"),
    cmp(0x50, "CP_NEQ8"),
    cmp(0x51, "CP_NEQ16"),
    cmp(0x52, "CP_NEQ32"),
    cmp(0x54, "CP_LTEQ8"),
    cmp(0x55, "CP_LTEQ16"),
    cmp(0x56, "CP_LTEQ32"),
    cmp(0x58, "CP_GTEQ8"),
    cmp(0x59, "CP_GTEQ16"),
    cmp(0x5A, "CP_GTEQ32"),
    jr_cmp(0x64, "JR_LT8"),
    jr_cmp(0x65, "JR_LT16"),
    jr_cmp(0x66, "JR_LT32"),
    jr_cmp(0x68, "JR_GT8"),
    jr_cmp(0x69, "JR_GT16"),
    jr_cmp(0x6A, "JR_GT32"),
    jr_cmp(0x6C, "JR_EQ8"),
    jr_cmp(0x6D, "JR_EQ16"),
    jr_cmp(0x6E, "JR_EQ32"),
    jr_cmp(0x70, "JR_NEQ8"),
    jr_cmp(0x71, "JR_NEQ16"),
    jr_cmp(0x72, "JR_NEQ32"),
    jr_cmp(0x74, "JR_LTEQ8"),
    jr_cmp(0x75, "JR_LTEQ16"),
    jr_cmp(0x76, "JR_LTEQ32"),
    jr_cmp(0x78, "JR_GTEQ8"),
    jr_cmp(0x79, "JR_GTEQ16"),
    jr_cmp(0x7A, "JR_GTEQ32"),
    spec(0x87, "TIMER_READ", &[o(I32)]),
    read_w(0xC8, "READ8"),
    read_w(0xC9, "READ16"),
    read_w(0xCA, "READ32"),
    write_w(0xCC, "WRITE8"),
    write_w(0xCD, "WRITE16"),
    write_w(0xCE, "WRITE32"),
];

/// Every operation the audit knows.
fn all_ops() -> impl Iterator<Item = &'static OpSpec> {
    OPS.iter().chain(PROGRAM_OPS)
}

/// Which side sent a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Host,
    Brick,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Host => "host",
            Side::Brick => "brick",
        })
    }
}

/// One broken rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Frames seen from that side before this one (0 = the first).
    pub frame: usize,
    pub side: Side,
    /// The rule's name, as in the module docs' table.
    pub rule: &'static str,
    pub detail: String,
    /// The frame, in hex.
    pub bytes: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} frame {}: [{}] {} ({})",
            self.side, self.frame, self.rule, self.detail, self.bytes
        )
    }
}

/// What went past, counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditStats {
    pub commands: usize,
    pub no_reply_commands: usize,
    pub replies: usize,
    pub error_replies: usize,
    /// Operations sent, by name.
    pub ops: BTreeMap<&'static str, usize>,
}

/// A string output of a command: where its bytes are.
#[derive(Clone, Copy, Debug)]
struct StrSlot {
    offset: usize,
    len: usize,
}

/// A reply-wanting command that has not been answered yet.
#[derive(Clone, Debug)]
struct Pending {
    counter: u16,
    global: usize,
    strings: Vec<StrSlot>,
}

/// The audit (see the module docs).
#[derive(Debug, Default)]
pub struct Audit {
    host: FrameBuffer,
    brick: FrameBuffer,
    host_frames: usize,
    brick_frames: usize,
    pending: Vec<Pending>,
    pub violations: Vec<Violation>,
    pub stats: AuditStats,
}

/// An output slot of one operation.
struct Out {
    global: bool,
    offset: usize,
    size: usize,
    op: &'static str,
}

impl Audit {
    pub fn new() -> Audit {
        Audit::default()
    }

    /// Bytes the host wrote, in any chunks.
    pub fn host(&mut self, bytes: &[u8]) {
        self.host.push(bytes);
        while let Some(f) = self.host.pop() {
            self.command(&f);
            self.host_frames += 1;
        }
    }

    /// Bytes the brick sent, in any chunks.
    pub fn brick(&mut self, bytes: &[u8]) {
        self.brick.push(bytes);
        while let Some(f) = self.brick.pop() {
            self.reply(&f);
            self.brick_frames += 1;
        }
    }

    /// The host dropped what the brick had sent and it had not read (after a garbled
    /// frame): the brick's stream starts again at a frame boundary.
    pub fn brick_discarded(&mut self) {
        self.brick.clear();
    }

    /// The end of the conversation: partial frames and unanswered commands are violations.
    pub fn finish(&mut self) {
        for (side, left) in [
            (Side::Host, self.host.pending()),
            (Side::Brick, self.brick.pending()),
        ] {
            if left > 0 {
                let frame = match side {
                    Side::Host => self.host_frames,
                    Side::Brick => self.brick_frames,
                };
                self.violations.push(Violation {
                    frame,
                    side,
                    rule: "unanswered",
                    detail: format!("{left} bytes of a partial frame left at the end"),
                    bytes: String::new(),
                });
            }
        }
        for p in std::mem::take(&mut self.pending) {
            self.violations.push(Violation {
                frame: self.host_frames,
                side: Side::Host,
                rule: "unanswered",
                detail: format!("command {} never got its reply", p.counter),
                bytes: String::new(),
            });
        }
    }

    /// Whether nothing was broken.
    pub fn clean(&self) -> bool {
        self.violations.is_empty()
    }

    fn flag(&mut self, side: Side, frame: &[u8], rule: &'static str, detail: String) {
        let index = match side {
            Side::Host => self.host_frames,
            Side::Brick => self.brick_frames,
        };
        self.violations.push(Violation {
            frame: index,
            side,
            rule,
            detail,
            bytes: hex(frame),
        });
    }

    fn command(&mut self, f: &[u8]) {
        let h = |s: &mut Self, rule, d: String| s.flag(Side::Host, f, rule, d);
        if f.len() > MAX_MESSAGE {
            h(
                self,
                "length",
                format!("{} bytes, more than {MAX_MESSAGE}", f.len()),
            );
            return;
        }
        if f.len() < 5 {
            h(
                self,
                "length",
                format!("{} bytes: shorter than a message header", f.len()),
            );
            return;
        }
        let counter = u16::from_le_bytes([f[2], f[3]]);
        let kind = f[4];
        let wants = match kind {
            DIRECT_COMMAND_REPLY => true,
            DIRECT_COMMAND_NO_REPLY => false,
            other => {
                h(
                    self,
                    "type",
                    format!("type 0x{other:02X} is not a direct command"),
                );
                return;
            }
        };
        if f.len() < 7 {
            h(
                self,
                "length",
                format!("{} bytes: shorter than a direct command's header", f.len()),
            );
            return;
        }
        self.stats.commands += 1;
        if !wants {
            self.stats.no_reply_commands += 1;
        }
        if let Some(p) = self.pending.first() {
            let c = p.counter;
            h(
                self,
                "in-flight",
                format!("sent while command {c} still awaits its reply (the brick drops it)"),
            );
        }
        if wants && self.pending.iter().any(|p| p.counter == counter) {
            h(
                self,
                "counter",
                format!("counter {counter} is still awaiting a reply"),
            );
        }
        let mem = u16::from_le_bytes([f[5], f[6]]);
        let global = (mem & 0x3FF) as usize;
        let local = (mem >> 10) as usize;
        let mut strings = Vec::new();
        self.operations(f, &f[7..], global, local, &mut strings);
        if wants {
            self.pending.push(Pending {
                counter,
                global,
                strings,
            });
        }
    }

    /// Decodes the operations of one command against [`OPS`].
    fn operations(
        &mut self,
        frame: &[u8],
        ops: &[u8],
        global: usize,
        local: usize,
        strings: &mut Vec<StrSlot>,
    ) {
        let mut pc = 0;
        let mut outs: Vec<Out> = Vec::new();
        // Where each operation starts, and where constant jumps land.
        let mut starts = std::collections::BTreeSet::new();
        let mut jumps: Vec<(&'static str, i64)> = Vec::new();
        while pc < ops.len() {
            let at = pc;
            starts.insert(at);
            let code = ops[pc];
            pc += 1;
            let has_sub = all_ops().any(|s| s.code == code && s.sub.is_some());
            let mut sub_code = None;
            if has_sub {
                match decode_param(ops, &mut pc) {
                    Ok(Param::Const(v)) if (0..=255).contains(&v) => sub_code = Some(v as u8),
                    other => {
                        self.flag(
                            Side::Host,
                            frame,
                            "encoding",
                            format!(
                                "opcode 0x{code:02X} at byte {}: its sub-code must be a constant, got {other:?}",
                                7 + at
                            ),
                        );
                        return;
                    }
                }
            }
            let Some(spec) = all_ops().find(|s| s.code == code && s.sub == sub_code) else {
                let what = match sub_code {
                    Some(s) => format!("opcode 0x{code:02X} sub-code 0x{s:02X}"),
                    None => format!("opcode 0x{code:02X}"),
                };
                self.flag(
                    Side::Host,
                    frame,
                    "opcode",
                    format!("{what} at byte {} is not in the audit's table", 7 + at),
                );
                return;
            };
            *self.stats.ops.entry(spec.name).or_default() += 1;
            let mut values = Vec::with_capacity(spec.params.len());
            let mut length: Option<i32> = None;
            let mut params: Vec<P> = spec.params.to_vec();
            let mut k = 0;
            while k < params.len() {
                let p = params[k];
                let start = pc;
                let decoded = match decode_param(ops, &mut pc) {
                    Ok(d) => d,
                    Err(e) => {
                        self.flag(
                            Side::Host,
                            frame,
                            "encoding",
                            format!("{}: parameter {} does not decode: {e}", spec.name, k + 1),
                        );
                        return;
                    }
                };
                let name = spec.name;
                if p.out {
                    let size = if p.ty == Ty::Str {
                        match length.take() {
                            Some(n) if n > 0 => n as usize,
                            _ => {
                                self.flag(
                                    Side::Host,
                                    frame,
                                    "string",
                                    format!("{name}: a string output without a LENGTH of 1..127"),
                                );
                                1
                            }
                        }
                    } else {
                        p.ty.size()
                    };
                    match decoded {
                        Param::Global(off) | Param::Local(off) => {
                            let is_global = matches!(decoded, Param::Global(_));
                            let limit = if is_global { global } else { local };
                            if off + size > limit {
                                self.flag(
                                    Side::Host,
                                    frame,
                                    "memory",
                                    format!(
                                        "{name}: output of {size} bytes at {} variable {off} is beyond the header's {limit} bytes",
                                        if is_global { "global" } else { "local" }
                                    ),
                                );
                            }
                            let align = match p.ty {
                                Ty::I16 => 2,
                                Ty::I32 | Ty::F32 => 4,
                                _ => 1,
                            };
                            if off % align != 0 {
                                self.flag(
                                    Side::Host,
                                    frame,
                                    "alignment",
                                    format!(
                                        "{name}: a {} output at offset {off}, not a multiple of {align}",
                                        p.ty.name()
                                    ),
                                );
                            }
                            if is_global && p.ty == Ty::Str {
                                strings.push(StrSlot {
                                    offset: off,
                                    len: size,
                                });
                            }
                            outs.push(Out {
                                global: is_global,
                                offset: off,
                                size,
                                op: name,
                            });
                        }
                        other => self.flag(
                            Side::Host,
                            frame,
                            "encoding",
                            format!(
                                "{name}: output parameter {} is {other:?}, not a variable",
                                k + 1
                            ),
                        ),
                    }
                    values.push(None);
                    k += 1;
                    continue;
                }
                if p.role == R::Array && !matches!(decoded, Param::Global(_) | Param::Local(_)) {
                    self.flag(
                        Side::Host,
                        frame,
                        "array",
                        format!(
                            "{name}: the array parameter {} is {decoded:?}, not a variable",
                            k + 1
                        ),
                    );
                }
                if p.role == R::Offset {
                    if let Param::Const(v) = decoded {
                        jumps.push((name, pc as i64 + v as i64));
                    }
                }
                let value = match decoded {
                    Param::Const(v) => Some(v),
                    Param::Global(off) | Param::Local(off) => {
                        let is_global = matches!(decoded, Param::Global(_));
                        let limit = if is_global { global } else { local };
                        if off + p.ty.size() > limit {
                            self.flag(
                                Side::Host,
                                frame,
                                "memory",
                                format!("{name}: input variable at {off} is beyond the header's {limit} bytes"),
                            );
                        }
                        None
                    }
                    Param::Str(_) => {
                        if p.ty != Ty::Str {
                            self.flag(
                                Side::Host,
                                frame,
                                "encoding",
                                format!(
                                    "{name}: a string where parameter {} is a {}",
                                    k + 1,
                                    p.ty.name()
                                ),
                            );
                        }
                        None
                    }
                };
                if let Some(v) = value {
                    let (lo, hi) = match p.ty {
                        Ty::I8 => (i8::MIN as i32, i8::MAX as i32),
                        Ty::I16 => (i16::MIN as i32, i16::MAX as i32),
                        _ => (i32::MIN, i32::MAX),
                    };
                    if v < lo || v > hi {
                        self.flag(
                            Side::Host,
                            frame,
                            "encoding",
                            format!(
                                "{name}: constant {v} (bytes {}) does not fit {}",
                                hex(&ops[start..pc]),
                                p.ty.name()
                            ),
                        );
                    }
                    if let Some(why) = role_rule(p.role, v) {
                        let rule = if matches!(p.role, R::Layer) {
                            "layer"
                        } else if matches!(p.role, R::Nos | R::No | R::Input) {
                            "port"
                        } else if matches!(p.role, R::Length) {
                            "string"
                        } else {
                            "value"
                        };
                        self.flag(
                            Side::Host,
                            frame,
                            rule,
                            format!("{name}: parameter {} = {v}: {why}", k + 1),
                        );
                    }
                    if p.role == R::Length {
                        length = Some(v);
                    }
                    if p.role == R::Values {
                        if let Tail::Values(ty) = spec.tail {
                            for _ in 0..v.clamp(0, 8) {
                                params.push(o(ty));
                            }
                        }
                    }
                }
                values.push(value);
                k += 1;
            }
            // Steps or times of a motor job: not all zero (such a job never ends).
            let steps: Vec<Option<i32>> = spec
                .params
                .iter()
                .zip(&values)
                .filter(|(p, _)| p.role == R::Steps)
                .map(|(_, v)| *v)
                .collect();
            if steps.len() == 3 && steps.iter().all(|v| *v == Some(0)) {
                self.flag(
                    Side::Host,
                    frame,
                    "value",
                    format!("{}: steps or times all 0: a job that never ends", spec.name),
                );
            }
        }
        for &(name, to) in &jumps {
            let lands = to == ops.len() as i64 || (to >= 0 && starts.contains(&(to as usize)));
            if !lands {
                self.flag(
                    Side::Host,
                    frame,
                    "jump",
                    format!("{name} to byte {} of the operations, not the start of one (nor their end, {})", to, ops.len()),
                );
            }
        }
        // Outputs of one command must not overlap (a program, which jumps, writes its
        // variables again by design).
        if !jumps.is_empty() {
            return;
        }
        for (a, x) in outs.iter().enumerate() {
            for y in &outs[a + 1..] {
                if x.global == y.global
                    && x.offset < y.offset + y.size
                    && y.offset < x.offset + x.size
                {
                    self.flag(
                        Side::Host,
                        frame,
                        "overlap",
                        format!(
                            "{} and {} both write {} bytes {}..{}",
                            x.op,
                            y.op,
                            if x.global { "global" } else { "local" },
                            x.offset.max(y.offset),
                            (x.offset + x.size).min(y.offset + y.size)
                        ),
                    );
                }
            }
        }
    }

    fn reply(&mut self, f: &[u8]) {
        let b = |s: &mut Self, rule, d: String| s.flag(Side::Brick, f, rule, d);
        if f.len() > MAX_MESSAGE {
            b(
                self,
                "length",
                format!("{} bytes, more than {MAX_MESSAGE}", f.len()),
            );
            return;
        }
        if f.len() < 5 {
            b(
                self,
                "length",
                format!("{} bytes: shorter than a reply's header", f.len()),
            );
            return;
        }
        let counter = u16::from_le_bytes([f[2], f[3]]);
        let ok = match f[4] {
            DIRECT_REPLY => true,
            DIRECT_REPLY_ERROR => false,
            other => {
                b(
                    self,
                    "type",
                    format!("type 0x{other:02X} is not a direct reply"),
                );
                return;
            }
        };
        self.stats.replies += 1;
        let Some(at) = self.pending.iter().position(|p| p.counter == counter) else {
            b(
                self,
                "counter",
                format!("reply {counter} answers no command awaiting a reply"),
            );
            return;
        };
        let p = self.pending.remove(at);
        let globals = &f[5..];
        if !ok {
            self.stats.error_replies += 1;
            b(
                self,
                "reply",
                format!("DIRECT_REPLY_ERROR to command {counter}: the brick refused it"),
            );
            if !globals.is_empty() && globals.len() != p.global {
                b(
                    self,
                    "reply-size",
                    format!(
                        "an error reply with {} global bytes; the command has {}",
                        globals.len(),
                        p.global
                    ),
                );
            }
            return;
        }
        if globals.len() != p.global {
            b(
                self,
                "reply-size",
                format!(
                    "{} global bytes; command {counter} asked for {}",
                    globals.len(),
                    p.global
                ),
            );
            return;
        }
        for s in &p.strings {
            let bytes =
                &globals[s.offset.min(globals.len())..(s.offset + s.len).min(globals.len())];
            if !bytes.contains(&0) {
                b(
                    self,
                    "string",
                    format!(
                        "the string at global {} does not end within its {} bytes",
                        s.offset, s.len
                    ),
                );
            }
        }
    }
}

/// The `value`/`port`/`layer` rule of a role, or `None` when `v` passes.
fn role_rule(role: Role, v: i32) -> Option<String> {
    let bad = |s: &str| Some(s.to_string());
    match role {
        R::Any => None,
        R::Layer if v != 0 => bad("LAYER must be 0, the brick at the end of the link"),
        R::Nos if !(1..=15).contains(&v) => bad("NOS is a bit field of motors A..D: 1..15"),
        R::No if !(0..=3).contains(&v) => bad("NO is one motor number 0..3 (not a bit field)"),
        R::Input if !((0..=3).contains(&v) || (16..=19).contains(&v)) => {
            bad("an input is 0..3 (sensor ports 1..4) or 16..19 (motors A..D)")
        }
        R::Speed if !(-100..=100).contains(&v) => bad("SPEED/POWER is −100..100"),
        R::Brake if !(0..=1).contains(&v) => bad("BRAKE is 0 or 1"),
        R::Pol if !(-1..=1).contains(&v) => bad("polarity is −1, 0 (toggle) or 1"),
        R::Steps | R::Millis if v < 0 => {
            bad("steps and times are ≥ 0 (the sign of SPEED is the direction)")
        }
        R::Pattern if !(0..=9).contains(&v) => bad("an LED pattern is 0..9"),
        R::Volume if !(0..=100).contains(&v) => bad("volume is 0..100"),
        R::Freq if !(250..=10_000).contains(&v) => bad("a tone is 250..10000 Hz"),
        R::Length if !(1..=127).contains(&v) => {
            bad("a string LENGTH is 1..127 (−1 means no check)")
        }
        R::DeviceType if !(0..=127).contains(&v) => bad("a device type is 0 (keep) or 1..127"),
        R::Mode if !(-1..=7).contains(&v) => bad("a mode is −1 (keep) or 0..7"),
        R::Values if !(1..=8).contains(&v) => bad("READY_* reads 1..8 values"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{encode_reply, from_hex as h, DirectCommand, OutputPort};
    use super::*;

    fn rules(a: &Audit) -> Vec<&'static str> {
        a.violations.iter().map(|v| v.rule).collect()
    }

    /// Host sends `cmd`, the brick answers `reply`; returns the rules broken.
    fn exchange(cmd: &str, reply: Option<&str>) -> Vec<&'static str> {
        let mut a = Audit::new();
        a.host(&h(cmd));
        if let Some(r) = reply {
            a.brick(&h(r));
        }
        a.finish();
        rules(&a)
    }

    #[test]
    fn programs_jump_to_operations_only() {
        // P1 of "Programs on the brick": clean, though it writes LV0 twice.
        let p1 = "12 00 10 00 00 00 10 3A 05 40 16 40 01 40 6A 40 00 82 F6 FF";
        assert!(exchange(p1, Some("03 00 10 00 02")).is_empty());
        // The same jump one byte short: into the middle of MOVE32_32.
        let bad = "12 00 10 00 00 00 10 3A 05 40 16 40 01 40 6A 40 00 82 F5 FF";
        assert_eq!(exchange(bad, Some("03 00 10 00 02")), vec!["jump"]);
        // READ32 from a constant "array".
        let r = "09 00 11 00 00 04 00 CA 05 00 60";
        assert_eq!(
            exchange(r, Some("07 00 11 00 02 00 00 00 00")),
            vec!["array"]
        );
    }

    #[test]
    fn the_worked_examples_are_clean() {
        let cases: &[(&str, Option<&str>)] = &[
            ("06 00 2A 00 00 00 00 01", Some("03 00 2A 00 02")),
            ("08 00 2B 00 80 00 00 82 1B 05", None),
            (
                "13 00 01 00 00 00 00 AE 00 02 81 28 1E 82 D2 00 1E 01 AA 00 02",
                Some("03 00 01 00 02"),
            ),
            (
                "09 00 04 00 00 01 00 A9 00 03 60",
                Some("04 00 04 00 02 01"),
            ),
            (
                "0F 00 03 00 00 0C 00 99 1C 00 01 1D 04 03 60 64 68",
                Some("0F 00 03 00 02 FD 00 00 00 24 01 00 00 B7 00 00 00"),
            ),
            (
                "0D 00 06 00 00 04 00 99 1D 00 10 07 00 01 60",
                Some("07 00 06 00 02 00 00 04 C2"),
            ),
            (
                "09 00 05 00 00 04 00 B3 00 02 60",
                Some("07 00 05 00 02 0E 01 00 00"),
            ),
            ("09 00 07 00 80 00 00 A3 00 0F 00", None),
            (
                "15 00 09 00 80 00 00 AF 00 04 81 32 81 64 82 F4 01 81 64 00 A6 00 04",
                None,
            ),
            (
                "0E 00 0B 00 00 04 00 99 1D 00 00 81 21 00 01 60",
                Some("07 00 0B 00 02 00 00 D0 41"),
            ),
            (
                "0A 00 0D 00 00 08 00 A8 00 01 60 64",
                Some("0B 00 0D 00 02 00 00 00 00 0E 01 00 00"),
            ),
        ];
        for (cmd, reply) in cases {
            assert_eq!(exchange(cmd, *reply), Vec::<&str>::new(), "{cmd}");
        }
    }

    #[test]
    fn every_rule_fires_on_its_mistake() {
        let cases: &[(&str, Option<&str>, &str)] = &[
            // A bit field where OUTPUT_GET_COUNT takes a number (motor C = 4 as NOS).
            (
                "09 00 05 00 00 04 00 B3 00 04 60",
                Some("07 00 05 00 02 00 00 00 00"),
                "port",
            ),
            // A number where OUTPUT_TEST takes a bit field: NOS 0 selects nothing.
            (
                "09 00 04 00 00 01 00 A9 00 00 60",
                Some("04 00 04 00 02 00"),
                "port",
            ),
            // Layer 1.
            ("09 00 07 00 80 00 00 A3 01 0F 00", None, "layer"),
            // An output given as a constant.
            (
                "09 00 05 00 00 04 00 B3 00 02 00",
                Some("07 00 05 00 02 00 00 00 00"),
                "encoding",
            ),
            // An output beyond the header's global memory.
            (
                "09 00 05 00 00 02 00 B3 00 02 60",
                Some("05 00 05 00 02 00 00"),
                "memory",
            ),
            // A DATA32 output at offset 1.
            (
                "09 00 05 00 00 08 00 B3 00 02 61",
                Some("0B 00 05 00 02 00 00 00 00 00 00 00 00"),
                "alignment",
            ),
            // Speed 120.
            (
                "13 00 01 00 00 00 00 AE 00 02 81 78 1E 82 D2 00 1E 01 A6 00 02",
                Some("03 00 01 00 02"),
                "value",
            ),
            // A step job of no steps.
            (
                "0F 00 01 00 00 00 00 AE 00 02 81 28 00 00 00 01 A6 00 02",
                Some("03 00 01 00 02"),
                "value",
            ),
            // An unknown opcode.
            ("06 00 77 00 00 00 00 FE", Some("03 00 77 00 02"), "opcode"),
            // A reply of the wrong size.
            (
                "09 00 05 00 00 04 00 B3 00 02 60",
                Some("03 00 05 00 02"),
                "reply-size",
            ),
            // A reply to a counter nobody asked.
            ("06 00 2A 00 00 00 00 01", Some("03 00 2B 00 02"), "counter"),
            // A reply to a no-reply command.
            ("06 00 2A 00 80 00 00 01", Some("03 00 2A 00 02"), "counter"),
            // An error reply.
            ("06 00 2A 00 00 00 00 01", Some("03 00 2A 00 04"), "reply"),
            // No reply at all.
            ("06 00 2A 00 00 00 00 01", None, "unanswered"),
            // A string that does not end within its slot.
            (
                "09 00 01 00 00 04 00 D3 0D 04 60",
                Some("07 00 01 00 02 45 56 33 34"),
                "string",
            ),
            // A string output with LENGTH -1 (no check).
            (
                "09 00 01 00 00 04 00 D3 0D 3F 60",
                Some("07 00 01 00 02 45 56 33 00"),
                "string",
            ),
            // A system command.
            ("04 00 2A 00 01 9D", None, "type"),
        ];
        for (cmd, reply, rule) in cases {
            let got = exchange(cmd, *reply);
            assert!(got.contains(rule), "{cmd}: expected [{rule}], got {got:?}");
        }
        // Two commands in flight; a reused counter.
        let mut a = Audit::new();
        a.host(&h("06 00 2A 00 00 00 00 01"));
        a.host(&h("06 00 2A 00 00 00 00 01"));
        let r = rules(&a);
        assert!(r.contains(&"in-flight") && r.contains(&"counter"), "{r:?}");
        // Two outputs on the same bytes.
        let mut a = Audit::new();
        a.host(&h("0D 00 05 00 00 04 00 B3 00 02 60 B3 00 01 60"));
        assert_eq!(rules(&a), vec!["overlap"]);
    }

    #[test]
    fn the_encoder_passes_for_every_builder_and_chunking() {
        let mut a = Audit::new();
        let mut counter = 0;
        let mut send = |a: &mut Audit, c: &DirectCommand, chunk: usize| {
            counter += 1;
            let bytes = c.encode(counter);
            for part in bytes.chunks(chunk) {
                a.host(part);
            }
            if c.reply {
                let r = encode_reply(counter, true, &vec![0; c.global]);
                for part in r.chunks(chunk) {
                    a.brick(part);
                }
            }
        };
        let mut c = DirectCommand::new();
        c.nop().led(3).tone(20, 880, 150);
        send(&mut a, &c, 1);
        let mut c = DirectCommand::new();
        c.brick_name(32);
        c.firmware_version(16);
        c.hardware_version(8);
        c.battery_volts();
        c.battery_level();
        c.output_polarity(7, 1);
        send(&mut a, &c, 5);
        let mut c = DirectCommand::new();
        c.output_get_count(OutputPort::D);
        c.output_read(OutputPort::A);
        c.output_test(0x0F);
        c.get_typemode(19);
        c.ready_raw(1, 29, 4, 3);
        c.ready_si(16, 7, 0, 1);
        send(&mut a, &c, 3);
        let mut c = DirectCommand::no_reply();
        c.output_reset(2)
            .step_speed(2, -40, [30, 210, 30], true)
            .time_power(4, 50, [100, 500, 100], false)
            .output_speed(1, -25)
            .output_start(7)
            .output_stop(15, false)
            .output_clr_count(2);
        send(&mut a, &c, 7);
        a.finish();
        assert!(a.clean(), "{:?}", a.violations);
        assert_eq!(a.stats.commands, 4);
        assert_eq!(a.stats.replies, 3);
        assert_eq!(a.stats.ops["OUTPUT_GET_COUNT"], 1);
    }
}
