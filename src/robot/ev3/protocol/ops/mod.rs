//! The table of operations: every opcode (and sub-code) cubot sends or the simulated brick
//! answers, with its parameters, as pure data; the walk that decodes a command's operations
//! against it; and the firmware's validator over the result. The encoder's builders, the
//! wire audit and the simulated brick's interpreter all read operations through this one
//! table, so each opcode's parameters are written down once.
//!
//! Level: robot (part of the codec; no I/O). Uses [`super`]'s parameter decoder only.
//!
//! ## The table
//!
//! An [`Op`] is an opcode, or an opcode and a sub-code (the sub-code is the opcode's first
//! parameter, a constant, and selects the rest), its name, and its parameters in order. A
//! [`Par`] has a [`Kind`] (DATA8, DATA16, DATA32, DATAF, or a string, which the firmware
//! treats as a DATA8 array), a direction (input, or output: a variable the operation
//! writes) and a [`Role`], what the value means (LAYER, NOS, SPEED, …) for the wire audit's
//! value rules. READY_PCT/_RAW/_SI end in VALUES, a count: that many outputs of the kind
//! [`Op::values`] names follow. The kinds are those of the firmware's parameter table
//! (`bytecodes.c:143-357` for opcodes, `:484-648` for sub-codes); the
//! directions come from the handlers (`c_output.c`, `c_input.c`, `c_ui.c`, `c_com.c`,
//! `c_math.c`, `c_move.c`, `c_compare.c`, `c_branch.c`, `c_timer.c`).
//!
//! | Code | Operation | Parameters (`*` output; 8, 16, 32, F: DATA8, DATA16, DATA32, DATAF; S: string) |
//! |------|-----------|------------|
//! | `0x01` | NOP | — |
//! | `0x82 0x1B` | UI_WRITE LED | PATTERN:8 |
//! | `0x81 0x01` | UI_READ GET_VBATT | *VALUE:F |
//! | `0x81 0x12` | UI_READ GET_LBATT | *PCT:8 |
//! | `0x81 0x09` / `0x0A` | UI_READ GET_HW_VERS / GET_FW_VERS | LENGTH:8 *TEXT:S |
//! | `0xD3 0x0D` | COM_GET GET_BRICKNAME | LENGTH:8 *TEXT:S |
//! | `0x94 0x00` | SOUND BREAK | — |
//! | `0x94 0x01` | SOUND TONE | VOLUME:8 FREQ:16 DURATION:16 |
//! | `0x96` | SOUND_READY | — |
//! | `0x85` | TIMER_WAIT | TIME:32 *TIMER:32 |
//! | `0x86` | TIMER_READY | TIMER:32 |
//! | `0x87` | TIMER_READ | *TIME:32 |
//! | `0x8F` | TIMER_READ_US | *TIME:32 |
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
//! | `0x10`–`0x1A` | ADD*w*, SUB*w*, MUL*w* (*w* 8, 16, 32) | A:w B:w *DST:w |
//! | `0x30`–`0x3A` | MOVE*f*_*t* | SRC:f *DST:t |
//! | `0x40` | JR | OFFSET:32 |
//! | `0x41` / `0x42` | JR_FALSE / JR_TRUE | FLAG:8 OFFSET:32 |
//! | `0x44`–`0x5A` | CP_LT … CP_GTEQ *w* | A:w B:w *FLAG:8 |
//! | `0x64`–`0x7A` | JR_LT … JR_GTEQ *w* | A:w B:w OFFSET:32 |
//! | `0xC8`–`0xCA` | READ*w* | ARRAY:w INDEX:8 *DST:w |
//! | `0xCC`–`0xCE` | WRITE*w* | SRC:w INDEX:8 ARRAY:w |
//!
//! The float members of the width-coded families (`0x13`, `0x3B`, `0x47`, …) and every
//! other opcode of the firmware are not in the table: cubot sends none, and the walk refuses
//! them rather than guess their parameters.
//!
//! ## The firmware's validator
//!
//! File names are those of LEGO's published LMS2012 source (V1.04H): `validate.c`,
//! `bytecodes.c`, `bytecodes.h`, `lms2012.c` and `lms2012.h` in `lms2012/source/`, `c_com.c`
//! in `c_com/source/`.
//!
//! The firmware checks a whole direct command before it runs any of it: `c_com.c` wraps the
//! operations in a one-object image (appending OBJECT_END) and `ProgramReset` runs the
//! validator over it (`lms2012.c:1416`); a command it refuses is answered
//! DIRECT_REPLY_ERROR and nothing of it runs. What `validate.c` (`cValidateBytecode`,
//! lines 1155-1646) refuses, as the code reads:
//!
//! * **An opcode the firmware's table does not name** (`validate.c:1173`).
//! * **A constant first parameter outside its kind's range**: DATA8 −127..127, DATA16
//!   −32767..32767, DATA32 −2147483647..2147483647 (`validate.c:1524`; `ParMin`/`ParMax`,
//!   `bytecodes.c:95-107`; `DATA8_MIN` … `DATA32_MAX`, `bytecodes.h:1497-1502`). The lowest
//!   value of each kind is its "not a number" (`DATA8_NAN` −128 …, `bytecodes.h:1492-1494`).
//!   Only the first parameter counts: the result starts as FAIL once per opcode
//!   (`validate.c:1190`), a passing parameter sets it to OK and a failing range test never
//!   sets it back (`validate.c:1515-1533`), so a later parameter's constant is never
//!   refused. For an opcode with a sub-code the first parameter is the sub-code. DATAF
//!   constants are not range-checked (`validate.c:1529-1532`).
//! * **A variable at an offset its kind does not allow**: DATA16 at an odd offset, DATA32
//!   and DATAF at one not divisible by 4, global or local, input or output
//!   (`cValidateCheckAlignment`, `validate.c:1110-1152`, called at `:1594` and `:1622`;
//!   a failure ends the check, `:1636`). The outputs after a VALUES count are not checked:
//!   the flag that skips the check is set at the count and not cleared again for that
//!   opcode (`validate.c:1541`, `:1572`).
//! * **Operations that do not end exactly at the end of the command** (a parameter cut
//!   short, `validate.c:1740`).
//!
//! Two things the validator lets through that the walk here refuses, because nothing could
//! say what runs: an unknown sub-code (the validator leaves the result as the sub-code
//! parameter set it and reads the bytes after it as the next opcodes,
//! `validate.c:1207-1223`), and a VALUES count that is not a constant 0..127 (no values are
//! then expected and the bytes after it are read as opcodes, `validate.c:1538-1552`). The
//! validator checks no direction: a constant where an output is expected passes, and the
//! virtual machine writes that output into a scratch word (`lms2012.c:699`).
//!
//! Before the validator, `cComDirectCommand` refuses a command with 1022 bytes of
//! operations or more, more than [`MAX_COMMAND_GLOBALS`] = 1021 global bytes or more than
//! [`MAX_COMMAND_LOCALS`] = 64 local bytes (`c_com.c:448`, `:456`;
//! `lms2012.h:274-275`); the header's six bits give 63 local bytes at most, and a message
//! of at most 1024 bytes carries at most 1017 bytes of operations.

use std::fmt;

use super::{decode_param, Param, ProtocolError};

mod table;
pub use table::{op, OPS};

/// A parameter's data type, as the firmware's parameter table names it (`PAR8`, `PAR16`,
/// `PAR32`, `PARF`); a string output is a DATA8 array to the firmware.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// DATA8
    D8,
    /// DATA16
    D16,
    /// DATA32
    D32,
    /// DATAF
    F,
    /// A string (its size given by the LENGTH before it).
    Str,
}

impl Kind {
    /// Bytes of one value (of one character for a string).
    pub const fn bytes(self) -> usize {
        match self {
            Kind::D8 | Kind::Str => 1,
            Kind::D16 => 2,
            Kind::D32 | Kind::F => 4,
        }
    }

    /// A variable of this kind sits at an offset divisible by this (what the validator
    /// asks, `validate.c:1110-1152`).
    pub const fn align(self) -> usize {
        match self {
            Kind::D16 => 2,
            Kind::D32 | Kind::F => 4,
            Kind::D8 | Kind::Str => 1,
        }
    }

    /// The constants the validator accepts for this kind (`None`: not checked).
    pub const fn range(self) -> Option<(i32, i32)> {
        match self {
            Kind::D8 => Some((-127, 127)),
            Kind::D16 => Some((-32767, 32767)),
            Kind::D32 => Some((-i32::MAX, i32::MAX)),
            Kind::F | Kind::Str => None,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Kind::D8 => "DATA8",
            Kind::D16 => "DATA16",
            Kind::D32 => "DATA32",
            Kind::F => "DATAF",
            Kind::Str => "string",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a parameter means (for the wire audit's value and port rules).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// No meaning beyond its kind.
    Any,
    /// LAYER: the brick in a daisy chain.
    Layer,
    /// NOS: a motor bit field (A = 1 … D = 8).
    Nos,
    /// NO: one motor number 0..3.
    No,
    /// An input: sensor ports 0..3, motors 16..19.
    Input,
    /// SPEED or POWER, percent.
    Speed,
    /// BRAKE: 0 coast, 1 brake.
    Brake,
    /// Polarity: −1, 0 (toggle), 1.
    Pol,
    /// Steps or milliseconds of a motor job.
    Steps,
    /// LED pattern.
    Pattern,
    /// Sound volume, percent.
    Volume,
    /// Tone frequency, Hz.
    Freq,
    /// Milliseconds.
    Millis,
    /// LENGTH of the string output after it.
    Length,
    /// A device type for READY_* (0 keeps the type).
    DeviceType,
    /// A mode for READY_* (−1 keeps the mode).
    Mode,
    /// VALUES of READY_*: that many outputs follow.
    Values,
    /// A jump's OFFSET, counted from the end of the jump.
    Offset,
    /// The first element of an array (READ/WRITE): a variable.
    Array,
}

/// One parameter of an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Par {
    pub kind: Kind,
    /// An output: a variable the operation writes.
    pub out: bool,
    pub role: Role,
}

/// An input parameter of `kind` meaning `role`.
pub const fn input(kind: Kind, role: Role) -> Par {
    Par {
        kind,
        out: false,
        role,
    }
}

/// An output parameter of `kind`.
pub const fn out(kind: Kind) -> Par {
    Par {
        kind,
        out: true,
        role: Role::Any,
    }
}

/// An operation: an opcode, or an opcode with a sub-code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    pub code: u8,
    pub sub: Option<u8>,
    pub name: &'static str,
    pub params: &'static [Par],
    /// VALUES outputs of this kind follow the parameters (READY_*).
    pub values: Option<Kind>,
}

/// Whether `code` takes a sub-code.
pub fn has_sub(code: u8) -> bool {
    OPS.iter().any(|o| o.code == code && o.sub.is_some())
}

/// The table's entry for `code` (with `sub` for an opcode that takes a sub-code).
pub fn find(code: u8, sub: Option<u8>) -> Option<&'static Op> {
    OPS.iter().find(|o| o.code == code && o.sub == sub)
}

/// One parameter of an operation, as it stands in a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    /// What the table says of it (for a VALUES output: an output of [`Op::values`]).
    pub par: Par,
    pub param: Param,
    /// Its bytes in the operations: `at..end`.
    pub at: usize,
    pub end: usize,
}

/// One operation of a command, decoded against [`OPS`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instr {
    /// Its bytes in the operations: `at..end` (the opcode, the sub-code, the parameters).
    pub at: usize,
    pub end: usize,
    pub op: &'static Op,
    /// The parameters of [`Op::params`], then the VALUES outputs, if any.
    pub args: Vec<Arg>,
}

impl Instr {
    /// The outputs after a VALUES count (empty for an operation without them).
    pub fn values(&self) -> &[Arg] {
        &self.args[self.op.params.len().min(self.args.len())..]
    }
}

/// Why the walk stopped before the end of the operations.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WalkError {
    #[error("{} at byte {at} is not in the table of operations", describe(*code, *sub))]
    Unknown {
        at: usize,
        code: u8,
        sub: Option<u8>,
    },
    #[error("opcode 0x{code:02X} at byte {at}: its sub-code must be a constant, got {got}")]
    SubCode { at: usize, code: u8, got: String },
    #[error("{name} at byte {at}: parameter {index} does not decode: {err}")]
    Param {
        at: usize,
        name: &'static str,
        /// Counted from 1.
        index: usize,
        err: ProtocolError,
    },
    #[error("{name} at byte {at}: VALUES must be a constant 0..127, got {got:?}")]
    Values {
        at: usize,
        name: &'static str,
        got: Param,
    },
}

fn describe(code: u8, sub: Option<u8>) -> String {
    match sub {
        Some(s) => format!("opcode 0x{code:02X} sub-code 0x{s:02X}"),
        None => format!("opcode 0x{code:02X}"),
    }
}

/// A command's operations, decoded: every operation up to the end, or up to the one that
/// stopped the walk.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Walk {
    pub instrs: Vec<Instr>,
    pub error: Option<WalkError>,
}

/// Decodes a command's operations against [`OPS`], in order, until the end or the first
/// operation that is not in the table or does not decode.
pub fn walk(ops: &[u8]) -> Walk {
    let mut instrs = Vec::new();
    let mut pc = 0;
    while pc < ops.len() {
        match decode_op(ops, pc) {
            Ok(instr) => {
                pc = instr.end;
                instrs.push(instr);
            }
            Err(e) => {
                return Walk {
                    instrs,
                    error: Some(e),
                }
            }
        }
    }
    Walk {
        instrs,
        error: None,
    }
}

/// The operation that starts at byte `at`.
fn decode_op(ops: &[u8], at: usize) -> Result<Instr, WalkError> {
    let code = ops[at];
    let mut pc = at + 1;
    let mut sub_code = None;
    if has_sub(code) {
        match decode_param(ops, &mut pc) {
            Ok(Param::Const(v)) if (0..=255).contains(&v) => sub_code = Some(v as u8),
            other => {
                let got = match other {
                    Ok(p) => format!("{p:?}"),
                    Err(e) => e.to_string(),
                };
                return Err(WalkError::SubCode { at, code, got });
            }
        }
    }
    let op = find(code, sub_code).ok_or(WalkError::Unknown {
        at,
        code,
        sub: sub_code,
    })?;
    let mut args = Vec::with_capacity(op.params.len());
    let mut values = 0;
    let mut k = 0;
    while k < op.params.len() + values {
        let par = op.params.get(k).copied().unwrap_or_else(|| {
            // After the parameters: the VALUES outputs.
            out(op.values.unwrap_or(Kind::D8))
        });
        let start = pc;
        let param = decode_param(ops, &mut pc).map_err(|err| WalkError::Param {
            at,
            name: op.name,
            index: k + 1,
            err,
        })?;
        if par.role == Role::Values && op.values.is_some() {
            match param {
                Param::Const(n) if (0..=127).contains(&n) => values = n as usize,
                ref got => {
                    return Err(WalkError::Values {
                        at,
                        name: op.name,
                        got: got.clone(),
                    })
                }
            }
        }
        args.push(Arg {
            par,
            param,
            at: start,
            end: pc,
        });
        k += 1;
    }
    Ok(Instr {
        at,
        end: pc,
        op,
        args,
    })
}

/// What the firmware's validator refuses in operations that decoded (see
/// [The firmware's validator](self#the-firmwares-validator)).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    #[error("{name} at byte {at}: its first parameter, the constant {value}, is outside {kind}'s {lo}..{hi}")]
    Range {
        at: usize,
        name: &'static str,
        value: i32,
        kind: Kind,
        lo: i32,
        hi: i32,
    },
    #[error("{name} at byte {at}: parameter {index}, a {kind} variable, is at {} offset {offset}, not a multiple of {}", if *global { "global" } else { "local" }, kind.align())]
    Alignment {
        at: usize,
        name: &'static str,
        /// Counted from 1.
        index: usize,
        offset: usize,
        global: bool,
        kind: Kind,
    },
}

/// What the firmware's validator refuses in decoded operations, in order: a constant first
/// parameter outside its kind's range, a variable at an offset its kind does not allow.
/// An empty list: the firmware runs the command (as far as these operations go; a
/// [`Walk::error`] is a refusal of its own).
pub fn validate(instrs: &[Instr]) -> Vec<Invalid> {
    let mut out = Vec::new();
    for ins in instrs {
        // The first parameter: the sub-code, which the table's entry matched, or args[0].
        if ins.op.sub.is_none() {
            if let Some(Arg {
                par,
                param: Param::Const(v),
                ..
            }) = ins.args.first()
            {
                if let Some((lo, hi)) = par.kind.range() {
                    if !(lo..=hi).contains(v) {
                        out.push(Invalid::Range {
                            at: ins.at,
                            name: ins.op.name,
                            value: *v,
                            kind: par.kind,
                            lo,
                            hi,
                        });
                    }
                }
            }
        }
        // Every variable but the VALUES outputs (the validator skips those).
        for (k, a) in ins.args.iter().take(ins.op.params.len()).enumerate() {
            let (offset, global) = match a.param {
                Param::Global(o) => (o, true),
                Param::Local(o) => (o, false),
                _ => continue,
            };
            if offset % a.par.kind.align() != 0 {
                out.push(Invalid::Alignment {
                    at: ins.at,
                    name: ins.op.name,
                    index: k + 1,
                    offset,
                    global,
                    kind: a.par.kind,
                });
                // The validator stops at the first misaligned variable of an operation.
                break;
            }
        }
    }
    out
}

/// Most global bytes the firmware loads for a direct command (`MAX_COMMAND_GLOBALS`,
/// `lms2012.h:275`, checked at `c_com.c:456`).
pub const MAX_COMMAND_GLOBALS: usize = 1021;
/// Most local bytes the firmware loads for a direct command (`MAX_COMMAND_LOCALS`,
/// `lms2012.h:274`, checked at `c_com.c:456`; the header's six bits give 63).
pub const MAX_COMMAND_LOCALS: usize = 64;
/// Most bytes of operations the firmware loads (the image buffer, `c_com.c:448`).
pub const MAX_COMMAND_OPS: usize = 1021;

#[cfg(test)]
mod tests;
