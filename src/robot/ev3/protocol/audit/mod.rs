//! The wire audit: decodes every frame a host sends and every frame the brick answers, and
//! checks each against rules taken from LEGO's firmware, independently of the encoder that
//! built them. The encoder and the simulated brick share the codec, so a mistake in how a
//! command is laid out would pass every round trip between them unnoticed; the audit
//! decodes the bytes as they went past, against [the table of operations](super::ops) (the
//! one place each opcode's parameters are written down, from the firmware's parameter
//! tables) and the rules below, so it catches such a mistake.
//!
//! Level: robot (pure: bytes in, violations out; uses [`super::ops`]'s table, walk and
//! validator and [`super`]'s frame buffer). No I/O, no printing.
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
//! | `opcode` | every operation is an opcode (and sub-code) of [the table of operations](super::ops), with exactly its parameters | `bytecodes.h`, the parameter tables of `bytecodes.c` |
//! | `validator` | nothing the firmware's validator refuses: a constant first parameter outside its kind's range, a DATA16/DATA32/DATAF variable (input or output, global or local) at an offset not divisible by 2 / 4; the brick answers such a command DIRECT_REPLY_ERROR and runs none of it | `validate.c`, see [the firmware's validator](super::ops#the-firmwares-validator) |
//! | `encoding` | every parameter decodes (short or long form; no handles); a constant of a later parameter is within the same ranges (DATA8 −127..127, DATA16 −32767..32767, DATA32 −2147483647..2147483647: the lowest value of each kind is its "not a number"), which the validator does not check; an output is a variable, never a constant | `lms2012.c` (`PrimParPointer`), `bytecodes.h` (PRIMPAR bits, `DATA8_MIN` …) |
//! | `alignment` | READY_*'s value outputs, which the validator skips, are aligned as the other variables must be | the firmware's note on global variables (`lms2012.h`, memory layout) |
//! | `overlap` | no two outputs of one command write the same global bytes | the reply carries one value per byte |
//! | `layer` | LAYER is 0: the brick at the end of the link | `c_output.c`, `c_input.c` (layers are daisy-chained bricks) |
//! | `port` | NOS is a bit field 1..15 (A = 1 … D = 8); NO a port number 0..3; an input 0..3 (sensor ports 1..4) or 16..19 (motors A..D as inputs) | `c_output.c` (`No < OUTPUTS`), `c_input.c` |
//! | `value` | SPEED and POWER −100..100; BRAKE 0 or 1; polarity −1, 0, 1; steps and times ≥ 0 and not all 0 (a job of no steps never ends); LED pattern 0..9; tone volume 0..100 and 250..10000 Hz; READY_* asks 1..8 values, given as a constant | `c_output.c`, `d_pwm.c`, `c_ui.c`, `c_sound.c`, `c_input.c` |
//! | `string` | a string output gets a LENGTH of 1..127 (not −1, "no check") and that many bytes of global memory; the brick's string ends within them | `c_ui.c`, `c_com.c` (`snprintf` into LENGTH bytes) |
//! | `in-flight` | no command is sent while one that wants a reply has not been answered: the brick does not read the link while a command runs, so the new one waits in the link's buffer and runs only after the running one has ended and answered (the driver never relies on that queue) | `c_com.c` (`VmReady`) |
//! | `counter` | a reply-wanting command's counter is not one still awaiting its reply; every reply carries the counter of a command awaiting one | `c_com.c` (the reply copies the counter) |
//! | `reply-size` | a DIRECT_REPLY carries exactly the command's global bytes (an error reply may carry none) | `c_com.c` |
//! | `reply` | no reply comes for a no-reply command; no DIRECT_REPLY_ERROR comes at all (a correct host never causes one) | `c_com.c` |
//! | `unanswered` | at the end, every reply-wanting command was answered and no partial frame is left | — |
//!
//! The operations and their parameters are those of [the table](super::ops), which the
//! encoder and the simulated brick read too: the audit is independent of how the encoder
//! builds a command, not of what it takes an opcode's parameters to be. Two rules hold for
//! the operations of [programs on the brick](super#programs-on-the-brick): `jump` (a
//! constant OFFSET lands on the first byte of an operation of the same command, or just past
//! its last), and `array` (ARRAY is a variable). A command that jumps is a program: it may
//! write a variable more than once, so the `overlap` rule applies only to commands without
//! jumps.
//!
//! An operation outside the table is a violation until it is added there, with its
//! parameters from the firmware's table: the audit never guesses a parameter count.

use std::collections::BTreeSet;

use super::ops::{self, Instr, Role, WalkError};
use super::{
    hex, FrameBuffer, Param, DIRECT_COMMAND_NO_REPLY, DIRECT_COMMAND_REPLY, DIRECT_REPLY,
    DIRECT_REPLY_ERROR, MAX_MESSAGE,
};

use Role as R;

mod report;
pub use report::{AuditStats, Side, Violation};

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

/// What the operations of one command write and where they jump.
#[derive(Default)]
struct Found {
    strings: Vec<StrSlot>,
    outs: Vec<Out>,
    /// Constant jumps: the operation's name and the byte they land on.
    jumps: Vec<(&'static str, i64)>,
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
        self.stats.largest_command = self.stats.largest_command.max(f.len());
        if !wants {
            self.stats.no_reply_commands += 1;
        }
        if let Some(p) = self.pending.first() {
            let c = p.counter;
            h(
                self,
                "in-flight",
                format!(
                    "sent while command {c} still awaits its reply (the brick runs it only after that one)"
                ),
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
        let strings = self.operations(f, &f[7..], global, local);
        if wants {
            self.pending.push(Pending {
                counter,
                global,
                strings,
            });
        }
    }

    /// Decodes the operations of one command with the [table](super::ops) and checks them.
    fn operations(
        &mut self,
        frame: &[u8],
        ops: &[u8],
        global: usize,
        local: usize,
    ) -> Vec<StrSlot> {
        let walk = ops::walk(ops);
        let mut found = Found::default();
        for ins in &walk.instrs {
            self.operation(frame, ops, ins, (global, local), &mut found);
        }
        for v in ops::validate(&walk.instrs) {
            self.flag(
                Side::Host,
                frame,
                "validator",
                format!("{v}: the brick refuses the whole command"),
            );
        }
        if let Some(e) = walk.error {
            let rule = match e {
                WalkError::Unknown { .. } => "opcode",
                WalkError::Values { .. } => "value",
                WalkError::SubCode { .. } | WalkError::Param { .. } => "encoding",
            };
            self.flag(Side::Host, frame, rule, e.to_string());
            return found.strings;
        }
        let starts: BTreeSet<usize> = walk.instrs.iter().map(|i| i.at).collect();
        for &(name, to) in &found.jumps {
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
        if !found.jumps.is_empty() {
            return found.strings;
        }
        let outs = &found.outs;
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
        found.strings
    }

    /// The rules of one decoded operation's parameters (`memory` is the header's global
    /// and local bytes).
    fn operation(
        &mut self,
        frame: &[u8],
        ops: &[u8],
        ins: &Instr,
        memory: (usize, usize),
        found: &mut Found,
    ) {
        let name = ins.op.name;
        *self.stats.ops.entry(name).or_default() += 1;
        let mut length: Option<i32> = None;
        let mut steps: Vec<Option<i32>> = Vec::new();
        for (k, a) in ins.args.iter().enumerate() {
            let p = a.par;
            let var = match a.param {
                Param::Global(off) => Some((true, off)),
                Param::Local(off) => Some((false, off)),
                _ => None,
            };
            let size = if p.out && p.kind == ops::Kind::Str {
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
                p.kind.bytes()
            };
            if let Some((is_global, off)) = var {
                let limit = if is_global { memory.0 } else { memory.1 };
                if off + size > limit {
                    self.flag(
                        Side::Host,
                        frame,
                        "memory",
                        format!(
                            "{name}: {} of {size} bytes at {} variable {off} is beyond the header's {limit} bytes",
                            if p.out { "output" } else { "input" },
                            if is_global { "global" } else { "local" }
                        ),
                    );
                }
            }
            if p.out {
                match var {
                    Some((is_global, off)) => {
                        // The validator checks every variable but the VALUES outputs.
                        let align = p.kind.align();
                        if k >= ins.op.params.len() && off % align != 0 {
                            self.flag(
                                Side::Host,
                                frame,
                                "alignment",
                                format!(
                                    "{name}: a {} output at offset {off}, not a multiple of {align}",
                                    p.kind
                                ),
                            );
                        }
                        if is_global && p.kind == ops::Kind::Str {
                            found.strings.push(StrSlot {
                                offset: off,
                                len: size,
                            });
                        }
                        found.outs.push(Out {
                            global: is_global,
                            offset: off,
                            size,
                            op: name,
                        });
                    }
                    None => self.flag(
                        Side::Host,
                        frame,
                        "encoding",
                        format!(
                            "{name}: output parameter {} is {:?}, not a variable",
                            k + 1,
                            a.param
                        ),
                    ),
                }
                continue;
            }
            if p.role == R::Array && var.is_none() {
                self.flag(
                    Side::Host,
                    frame,
                    "array",
                    format!(
                        "{name}: the array parameter {} is {:?}, not a variable",
                        k + 1,
                        a.param
                    ),
                );
            }
            let value = match a.param {
                Param::Const(v) => Some(v),
                Param::Str(_) if p.kind != ops::Kind::Str => {
                    self.flag(
                        Side::Host,
                        frame,
                        "encoding",
                        format!("{name}: a string where parameter {} is a {}", k + 1, p.kind),
                    );
                    None
                }
                _ => None,
            };
            if p.role == R::Steps {
                steps.push(value);
            }
            let Some(v) = value else { continue };
            if p.role == R::Offset {
                found.jumps.push((name, a.end as i64 + v as i64));
            }
            // The validator checks only an operation's first parameter (the sub-code, for
            // one that has it); the others are held to the same ranges here.
            let first = k == 0 && ins.op.sub.is_none();
            if let Some((lo, hi)) = p.kind.range().filter(|_| !first) {
                if !(lo..=hi).contains(&v) {
                    self.flag(
                        Side::Host,
                        frame,
                        "encoding",
                        format!(
                            "{name}: constant {v} (bytes {}) is outside {}'s {lo}..{hi}",
                            hex(&ops[a.at..a.end]),
                            p.kind
                        ),
                    );
                }
            }
            if let Some(why) = role_rule(p.role, v) {
                let rule = match p.role {
                    R::Layer => "layer",
                    R::Nos | R::No | R::Input => "port",
                    R::Length => "string",
                    _ => "value",
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
        }
        // Steps or times of a motor job: not all zero (such a job never ends).
        if steps.len() == 3 && steps.iter().all(|v| *v == Some(0)) {
            self.flag(
                Side::Host,
                frame,
                "value",
                format!("{name}: steps or times all 0: a job that never ends"),
            );
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
mod tests;
