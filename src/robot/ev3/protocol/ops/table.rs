//! The table's rows: the opcode numbers and [`OPS`], every operation with its parameters
//! (see [the table](super#the-table)).
//!
//! Level: robot (part of the codec; no I/O).

use super::{input as i, out, Kind, Op, Par, Role};

/// Opcode and sub-code numbers (`bytecodes.h`; see [Opcodes](crate::robot::ev3::protocol#opcodes)
/// for what they do).
pub mod op {
    pub const NOP: u8 = 0x01;
    pub const UI_READ: u8 = 0x81;
    pub const UI_READ_GET_VBATT: u8 = 0x01;
    pub const UI_READ_GET_HW_VERS: u8 = 0x09;
    pub const UI_READ_GET_FW_VERS: u8 = 0x0A;
    pub const UI_READ_GET_LBATT: u8 = 0x12;
    pub const UI_WRITE: u8 = 0x82;
    pub const UI_WRITE_LED: u8 = 0x1B;
    pub const COM_GET: u8 = 0xD3;
    pub const COM_GET_BRICKNAME: u8 = 0x0D;
    pub const TIMER_WAIT: u8 = 0x85;
    pub const TIMER_READY: u8 = 0x86;
    pub const SOUND: u8 = 0x94;
    pub const SOUND_BREAK: u8 = 0x00;
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
    // The virtual machine's arithmetic, move, compare, branch, timer and array opcodes.
    // Each width-coded family holds DATA8, DATA16, DATA32 and DATAF members at
    // consecutive codes; the float members are not used.
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
    pub const TIMER_READ_US: u8 = 0x8F;
    pub const READ8: u8 = 0xC8;
    pub const READ32: u8 = 0xCA;
    pub const WRITE8: u8 = 0xCC;
    pub const WRITE32: u8 = 0xCE;
}

use Kind::{D16, D32, D8, F};
use Role as R;

const LAYER_NOS: &[Par] = &[i(D8, R::Layer), i(D8, R::Nos)];
const PROFILE: &[Par] = &[
    i(D8, R::Layer),
    i(D8, R::Nos),
    i(D8, R::Speed),
    i(D32, R::Steps),
    i(D32, R::Steps),
    i(D32, R::Steps),
    i(D8, R::Brake),
];
const READY: &[Par] = &[
    i(D8, R::Layer),
    i(D8, R::Input),
    i(D8, R::DeviceType),
    i(D8, R::Mode),
    i(D8, R::Values),
];
const TEXT: &[Par] = &[i(D8, R::Length), out(Kind::Str)];

/// An operation without a sub-code.
const fn plain(code: u8, name: &'static str, params: &'static [Par]) -> Op {
    Op {
        code,
        sub: None,
        name,
        params,
        values: None,
    }
}

const fn sub(code: u8, s: u8, name: &'static str, params: &'static [Par]) -> Op {
    Op {
        code,
        sub: Some(s),
        name,
        params,
        values: None,
    }
}

const fn ready(s: u8, name: &'static str, values: Kind) -> Op {
    Op {
        values: Some(values),
        ..sub(op::INPUT_DEVICE, s, name, READY)
    }
}

/// The member of a width-coded family its code's low two bits name (0 DATA8, 1 DATA16,
/// 2 DATA32).
const fn by_width(code: u8, lists: [&'static [Par]; 3]) -> &'static [Par] {
    lists[(code & 0x03) as usize]
}

const MATH: [&[Par]; 3] = [
    &[i(D8, R::Any), i(D8, R::Any), out(D8)],
    &[i(D16, R::Any), i(D16, R::Any), out(D16)],
    &[i(D32, R::Any), i(D32, R::Any), out(D32)],
];
const CMP: [&[Par]; 3] = [
    &[i(D8, R::Any), i(D8, R::Any), out(D8)],
    &[i(D16, R::Any), i(D16, R::Any), out(D8)],
    &[i(D32, R::Any), i(D32, R::Any), out(D8)],
];
const JR_CMP: [&[Par]; 3] = [
    &[i(D8, R::Any), i(D8, R::Any), i(D32, R::Offset)],
    &[i(D16, R::Any), i(D16, R::Any), i(D32, R::Offset)],
    &[i(D32, R::Any), i(D32, R::Any), i(D32, R::Offset)],
];
const READ_W: [&[Par]; 3] = [
    &[i(D8, R::Array), i(D8, R::Any), out(D8)],
    &[i(D16, R::Array), i(D8, R::Any), out(D16)],
    &[i(D32, R::Array), i(D8, R::Any), out(D32)],
];
const WRITE_W: [&[Par]; 3] = [
    &[i(D8, R::Any), i(D8, R::Any), i(D8, R::Array)],
    &[i(D16, R::Any), i(D8, R::Any), i(D16, R::Array)],
    &[i(D32, R::Any), i(D8, R::Any), i(D32, R::Array)],
];
/// MOVE*f*_*t*, by (f, t).
const MOVES: [[&[Par]; 3]; 3] = [
    [
        &[i(D8, R::Any), out(D8)],
        &[i(D8, R::Any), out(D16)],
        &[i(D8, R::Any), out(D32)],
    ],
    [
        &[i(D16, R::Any), out(D8)],
        &[i(D16, R::Any), out(D16)],
        &[i(D16, R::Any), out(D32)],
    ],
    [
        &[i(D32, R::Any), out(D8)],
        &[i(D32, R::Any), out(D16)],
        &[i(D32, R::Any), out(D32)],
    ],
];

const fn math(code: u8, name: &'static str) -> Op {
    plain(code, name, by_width(code, MATH))
}

const fn mov(code: u8, name: &'static str) -> Op {
    plain(
        code,
        name,
        MOVES[((code >> 2) & 0x03) as usize][(code & 0x03) as usize],
    )
}

const fn cmp(code: u8, name: &'static str) -> Op {
    plain(code, name, by_width(code, CMP))
}

const fn jr_cmp(code: u8, name: &'static str) -> Op {
    plain(code, name, by_width(code, JR_CMP))
}

const fn read_w(code: u8, name: &'static str) -> Op {
    plain(code, name, by_width(code, READ_W))
}

const fn write_w(code: u8, name: &'static str) -> Op {
    plain(code, name, by_width(code, WRITE_W))
}

/// Every operation (see the module docs' table).
pub const OPS: &[Op] = &[
    plain(op::NOP, "NOP", &[]),
    sub(
        op::UI_WRITE,
        op::UI_WRITE_LED,
        "UI_WRITE LED",
        &[i(D8, R::Pattern)],
    ),
    sub(
        op::UI_READ,
        op::UI_READ_GET_VBATT,
        "UI_READ GET_VBATT",
        &[out(F)],
    ),
    sub(
        op::UI_READ,
        op::UI_READ_GET_LBATT,
        "UI_READ GET_LBATT",
        &[out(D8)],
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
    sub(op::SOUND, op::SOUND_BREAK, "SOUND BREAK", &[]),
    sub(
        op::SOUND,
        op::SOUND_TONE,
        "SOUND TONE",
        &[i(D8, R::Volume), i(D16, R::Freq), i(D16, R::Millis)],
    ),
    plain(op::SOUND_READY, "SOUND_READY", &[]),
    plain(op::TIMER_WAIT, "TIMER_WAIT", &[i(D32, R::Millis), out(D32)]),
    plain(op::TIMER_READY, "TIMER_READY", &[i(D32, R::Any)]),
    plain(op::TIMER_READ, "TIMER_READ", &[out(D32)]),
    plain(op::TIMER_READ_US, "TIMER_READ_US", &[out(D32)]),
    sub(
        op::INPUT_DEVICE,
        op::INPUT_GET_TYPEMODE,
        "INPUT_DEVICE GET_TYPEMODE",
        &[i(D8, R::Layer), i(D8, R::Input), out(D8), out(D8)],
    ),
    sub(
        op::INPUT_DEVICE,
        op::INPUT_GET_RAW,
        "INPUT_DEVICE GET_RAW",
        &[i(D8, R::Layer), i(D8, R::Input), out(D32)],
    ),
    sub(
        op::INPUT_DEVICE,
        op::INPUT_CLR_CHANGES,
        "INPUT_DEVICE CLR_CHANGES",
        &[i(D8, R::Layer), i(D8, R::Input)],
    ),
    ready(op::INPUT_READY_PCT, "INPUT_DEVICE READY_PCT", D8),
    ready(op::INPUT_READY_RAW, "INPUT_DEVICE READY_RAW", D32),
    ready(op::INPUT_READY_SI, "INPUT_DEVICE READY_SI", F),
    plain(op::OUTPUT_RESET, "OUTPUT_RESET", LAYER_NOS),
    plain(
        op::OUTPUT_STOP,
        "OUTPUT_STOP",
        &[i(D8, R::Layer), i(D8, R::Nos), i(D8, R::Brake)],
    ),
    plain(
        op::OUTPUT_POWER,
        "OUTPUT_POWER",
        &[i(D8, R::Layer), i(D8, R::Nos), i(D8, R::Speed)],
    ),
    plain(
        op::OUTPUT_SPEED,
        "OUTPUT_SPEED",
        &[i(D8, R::Layer), i(D8, R::Nos), i(D8, R::Speed)],
    ),
    plain(op::OUTPUT_START, "OUTPUT_START", LAYER_NOS),
    plain(
        op::OUTPUT_POLARITY,
        "OUTPUT_POLARITY",
        &[i(D8, R::Layer), i(D8, R::Nos), i(D8, R::Pol)],
    ),
    plain(
        op::OUTPUT_READ,
        "OUTPUT_READ",
        &[i(D8, R::Layer), i(D8, R::No), out(D8), out(D32)],
    ),
    plain(
        op::OUTPUT_TEST,
        "OUTPUT_TEST",
        &[i(D8, R::Layer), i(D8, R::Nos), out(D8)],
    ),
    plain(op::OUTPUT_READY, "OUTPUT_READY", LAYER_NOS),
    plain(op::OUTPUT_STEP_POWER, "OUTPUT_STEP_POWER", PROFILE),
    plain(op::OUTPUT_TIME_POWER, "OUTPUT_TIME_POWER", PROFILE),
    plain(op::OUTPUT_STEP_SPEED, "OUTPUT_STEP_SPEED", PROFILE),
    plain(op::OUTPUT_TIME_SPEED, "OUTPUT_TIME_SPEED", PROFILE),
    plain(op::OUTPUT_CLR_COUNT, "OUTPUT_CLR_COUNT", LAYER_NOS),
    plain(
        op::OUTPUT_GET_COUNT,
        "OUTPUT_GET_COUNT",
        &[i(D8, R::Layer), i(D8, R::No), out(D32)],
    ),
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
    plain(op::JR, "JR", &[i(D32, R::Offset)]),
    plain(
        op::JR_FALSE,
        "JR_FALSE",
        &[i(D8, R::Any), i(D32, R::Offset)],
    ),
    plain(op::JR_TRUE, "JR_TRUE", &[i(D8, R::Any), i(D32, R::Offset)]),
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
    read_w(0xC8, "READ8"),
    read_w(0xC9, "READ16"),
    read_w(0xCA, "READ32"),
    write_w(0xCC, "WRITE8"),
    write_w(0xCD, "WRITE16"),
    write_w(0xCE, "WRITE32"),
];
