//! The exchange of a host and a brick, command by command, with every value a reply carries
//! classified by what it is: a reply's status, a value that is no measurement (a device's
//! type and mode, a motor's busy flag, a name), a program's record (a value a program
//! wrote from constants: a stage code, a flag), or a physical measurement (a tacho count,
//! a speed, a sensor reading, a time, the battery). Two bricks that run the same commands
//! in the same world must agree on everything but the measurements; [`compare()`] aligns two
//! exchanges and says where they differ, in logic and by how much in measurement.
//!
//! The classes come from [the table of operations](super::ops), not from how the driver
//! built a command: the operations that measure are OUTPUT_READ, OUTPUT_GET_COUNT,
//! INPUT_DEVICE GET_RAW and READY_*, TIMER_READ, TIMER_READ_US, TIMER_WAIT and UI_READ GET_VBATT /
//! GET_LBATT; in a program a value computed (ADD, SUB, MUL, MOVE, READ, WRITE) from a
//! measured one is measured too, found by following the program's data flow to a fixed
//! point. A comparison's flag (CP_*) is a record: it is a decision the program took on
//! its measurements, and two bricks must take the same ones. A record computed from the
//! command's own wide constants (a motor's target the host put in the program) carries
//! those constants along (see [`Field::args`]): where they differ, so may it. A global
//! byte no operation
//! writes holds what the command before left there (LEGO's firmware does not clear a
//! direct command's globals): it takes that byte's class, and one never written since
//! the connection is a value, the brick's logic and not the world's. The
//! brick's name and versions are its identity (LEGO's published source is V1.04H, a
//! brick in a shop V1.09H): which brick it is, not how it behaves.
//!
//! Level: robot (part of the codec; pure: recorded traffic in, classified turns out; no
//! I/O, no printing). Uses [`super::ops`], [`super::frame`], [`crate::robot::link::Traffic`].

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::ops::{self, op, Instr, Kind, Role};
use super::{FrameBuffer, Param, DIRECT_COMMAND_REPLY};
use crate::robot::link::Traffic;

pub mod compare;
pub use compare::{compare, Comparison, Difference, Tolerances};

/// What a physical measurement measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Measure {
    /// A tacho count (degrees).
    Count,
    /// OUTPUT_READ's movement count (degrees): d_pwm's `TachoCounts`, which its motor
    /// jobs zero and count down phase by phase; no host of cubot reads it.
    Movement,
    /// A motor's speed (percent).
    Speed,
    /// A sensor's reading (raw counts).
    Sensor,
    /// A time on the brick (ms: TIMER_READ, TIMER_WAIT).
    Time,
    /// A time on the brick in microseconds (TIMER_READ_US): the brick's clock since it
    /// started, so two bricks differ by their start-up as well as by their jobs' times.
    Microseconds,
    /// The battery (volts or percent).
    Battery,
    /// Not measured by the brick but computed by the host from what it measured: a byte a
    /// command leaves over from a record that echoed the host's constants (see
    /// [`Field::args`]).
    Argument,
}

impl Measure {
    pub fn name(self) -> &'static str {
        match self {
            Measure::Count => "count",
            Measure::Movement => "movement",
            Measure::Speed => "speed",
            Measure::Sensor => "sensor",
            Measure::Time => "time",
            Measure::Microseconds => "time-us",
            Measure::Battery => "battery",
            Measure::Argument => "argument",
        }
    }
}

/// What a value of a reply is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Not a measurement: a device's type or mode, a busy flag, a text, an unwritten byte.
    Value,
    /// Written by a program from constants, or a comparison's flag.
    Record,
    /// Which brick it is, not how it behaves: its name, its firmware's and hardware's
    /// versions.
    Identity,
    /// A measurement of the world.
    Physical(Measure),
}

/// One value of a reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Field {
    /// The operation that wrote it and where (`OUTPUT_TEST@0`).
    pub name: String,
    pub class: Class,
    pub offset: usize,
    pub value: Val,
    /// The command's wide constants ([`Turn::args`], by index) the value was computed
    /// from, when it is no measurement: a record that echoes what the host computed (a
    /// motor's target) differs between two bricks exactly when those constants do.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<usize>,
}

/// A value as the reply carries it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Val {
    Int(i64),
    Float(f64),
    Text(String),
}

impl Val {
    /// The value as a number (a text: none).
    pub fn number(&self) -> Option<f64> {
        match self {
            Val::Int(v) => Some(*v as f64),
            Val::Float(v) => Some(*v),
            Val::Text(_) => None,
        }
    }
}

/// One command and its reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// When the host sent it and when its reply came (seconds of the tap's clock).
    pub sent: f64,
    pub answered: Option<f64>,
    /// The command's operations (what the brick is asked to do), in hex in JSON.
    #[serde(with = "hex_bytes")]
    pub ops: Vec<u8>,
    /// The operations with their DATA32 and DATA16 constants taken out (`#`): what the
    /// command asks whatever the host computed its counts and times from.
    pub key: String,
    /// Those constants, in order (steps, counts, times: often computed from what the host
    /// measured before).
    pub args: Vec<i64>,
    /// Its operations' names, in order (`OUTPUT_STEP_SPEED OUTPUT_READY ...`).
    pub shape: String,
    pub wants_reply: bool,
    /// Whether it jumps: a program on the brick.
    pub program: bool,
    /// The reply's type byte (`0x02` DIRECT_REPLY, `0x04` DIRECT_REPLY_ERROR).
    pub status: Option<u8>,
    pub fields: Vec<Field>,
}

/// Bytes as hex text (`3A 00 60`), as [`super::hex`] writes them.
mod hex_bytes {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::super::hex(b))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let t = String::deserialize(d)?;
        t.split_whitespace()
            .map(|w| u8::from_str_radix(w, 16).map_err(D::Error::custom))
            .collect()
    }
}

/// A region of global memory one operation writes.
#[derive(Clone, Debug)]
struct Region {
    offset: usize,
    size: usize,
    kind: Kind,
    class: Class,
    name: String,
    /// An array WRITE fills: the classes of its writes in program order, which a record
    /// of several words repeats (element `k` takes class `k mod n`).
    cycle: Vec<Class>,
    /// The wide constants it is computed from (see [`Field::args`]).
    args: Vec<usize>,
}

/// The measurement an operation's output `k` (its index among the args) takes from the
/// world, if it does.
fn measured(ins: &Instr, k: usize) -> Option<Measure> {
    let sub = ins.op.sub;
    let motor_input = || matches!(ins.args.get(1).map(|a| &a.param), Some(Param::Const(n)) if (16..=19).contains(n));
    match ins.op.code {
        op::OUTPUT_READ => Some(if k == 2 {
            Measure::Speed
        } else {
            Measure::Count
        }),
        op::OUTPUT_GET_COUNT => Some(Measure::Count),
        op::TIMER_READ | op::TIMER_WAIT => Some(Measure::Time),
        op::TIMER_READ_US => Some(Measure::Microseconds),
        op::UI_READ if sub == Some(op::UI_READ_GET_VBATT) || sub == Some(op::UI_READ_GET_LBATT) => {
            Some(Measure::Battery)
        }
        op::INPUT_DEVICE
            if matches!(
                sub,
                Some(op::INPUT_GET_RAW)
                    | Some(op::INPUT_READY_PCT)
                    | Some(op::INPUT_READY_RAW)
                    | Some(op::INPUT_READY_SI)
            ) =>
        {
            Some(if motor_input() {
                Measure::Count
            } else {
                Measure::Sensor
            })
        }
        _ => None,
    }
}

/// Whether an operation moves data from its inputs to its outputs (so a measured input
/// makes a measured output).
fn carries(code: u8) -> bool {
    (0x10..=0x1A).contains(&code)
        || (0x30..=0x3A).contains(&code)
        || (op::READ8..=op::READ32).contains(&code)
        || (op::WRITE8..=op::WRITE32).contains(&code)
}

/// Where a variable lives: (global?, offset).
type Var = (bool, usize);

fn var(p: &Param) -> Option<Var> {
    match p {
        Param::Global(o) => Some((true, *o)),
        Param::Local(o) => Some((false, *o)),
        _ => None,
    }
}

/// The regions of global memory a command's operations write, each classified.
fn regions(instrs: &[Instr]) -> Vec<Region> {
    // The data flow: which variables hold a measurement, to a fixed point (programs loop).
    let mut taint: BTreeMap<Var, Measure> = BTreeMap::new();
    let program = instrs.iter().any(|i| is_jump(i.op.code));
    for _ in 0..8 {
        let before = taint.len();
        for ins in instrs {
            for (k, a) in ins.args.iter().enumerate() {
                if !a.par.out {
                    continue;
                }
                let Some(v) = var(&a.param) else { continue };
                let m = measured(ins, k).or_else(|| {
                    carries(ins.op.code)
                        .then(|| {
                            ins.args
                                .iter()
                                .filter(|b| !b.par.out || b.par.role == Role::Array)
                                .filter_map(|b| var(&b.param))
                                .find_map(|w| taint.get(&w).copied())
                        })
                        .flatten()
                });
                if let Some(m) = m {
                    taint.entry(v).or_insert(m);
                }
            }
            // WRITE's array is an input by the table, but the operation writes into it.
            if (op::WRITE8..=op::WRITE32).contains(&ins.op.code) {
                if let (Some(src), Some(arr)) = (
                    ins.args.first().and_then(|a| var(&a.param)),
                    ins.args.get(2).and_then(|a| var(&a.param)),
                ) {
                    if let Some(m) = taint.get(&src).copied() {
                        taint.entry(arr).or_insert(m);
                    }
                }
            }
        }
        if taint.len() == before {
            break;
        }
    }
    let from = arguments(instrs);
    let mut cycles: BTreeMap<usize, Vec<Class>> = BTreeMap::new();
    for ins in instrs {
        if (op::WRITE8..=op::WRITE32).contains(&ins.op.code) {
            if let (Some(src), Some(Param::Global(base))) =
                (ins.args.first(), ins.args.get(2).map(|a| a.param.clone()))
            {
                let class = match var(&src.param).and_then(|v| taint.get(&v)) {
                    Some(&m) => Class::Physical(m),
                    None => Class::Record,
                };
                cycles.entry(base).or_default().push(class);
            }
        }
    }
    let mut out = Vec::new();
    for ins in instrs {
        let written = ins.args.iter().enumerate().filter(|(_, a)| a.par.out);
        let array = (op::WRITE8..=op::WRITE32)
            .contains(&ins.op.code)
            .then(|| ins.args.get(2).map(|a| (2usize, a)))
            .flatten();
        for (k, a) in written.chain(array) {
            let Param::Global(offset) = a.param else {
                continue;
            };
            let cycle = cycles.get(&offset).cloned().unwrap_or_default();
            let class = match taint.get(&(true, offset)) {
                _ if !cycle.is_empty() => cycle[0],
                Some(&m) => Class::Physical(m),
                None if program => Class::Record,
                None => Class::Value,
            };
            let identity = (ins.op.code == op::UI_READ
                && matches!(
                    ins.op.sub,
                    Some(op::UI_READ_GET_FW_VERS) | Some(op::UI_READ_GET_HW_VERS)
                ))
                || (ins.op.code == op::COM_GET && ins.op.sub == Some(op::COM_GET_BRICKNAME));
            let class = match (class, ins.op.code) {
                (Class::Value, c) if (0x44..=0x5A).contains(&c) => Class::Record,
                (Class::Value, _) if identity => Class::Identity,
                (c, _) => c,
            };
            let size = match a.par.kind {
                Kind::Str => ins
                    .args
                    .get(k.wrapping_sub(1))
                    .and_then(|l| match l.param {
                        Param::Const(n) if n > 0 => Some(n as usize),
                        _ => None,
                    })
                    .unwrap_or(1),
                kind => kind.bytes(),
            };
            out.push(Region {
                offset,
                size,
                kind: a.par.kind,
                class,
                name: format!("{}@{offset}", name(ins)),
                cycle,
                args: from
                    .get(&(true, offset))
                    .map(|s| s.iter().copied().collect())
                    .unwrap_or_default(),
            });
        }
    }
    out
}

/// Which of the command's arguments (its wide constants, numbered as in [`Turn::args`])
/// each variable's value is computed from, to a fixed point: the value WRITE stores and
/// READ fetches, every input of the other operations that move data ([`carries`]).
fn arguments(instrs: &[Instr]) -> BTreeMap<Var, BTreeSet<usize>> {
    let mut n = 0;
    let numbered: Vec<Vec<Option<usize>>> = instrs
        .iter()
        .map(|ins| {
            ins.args
                .iter()
                .map(|a| {
                    wide(a).then(|| {
                        n += 1;
                        n - 1
                    })
                })
                .collect()
        })
        .collect();
    let mut from: BTreeMap<Var, BTreeSet<usize>> = BTreeMap::new();
    loop {
        let mut grew = false;
        for (ins, index) in instrs.iter().zip(&numbered) {
            let code = ins.op.code;
            if !carries(code) {
                continue;
            }
            let write = (op::WRITE8..=op::WRITE32).contains(&code);
            let read = (op::READ8..=op::READ32).contains(&code);
            let mut sources = BTreeSet::new();
            let mut dests = Vec::new();
            for (k, a) in ins.args.iter().enumerate() {
                let input = if write || read {
                    k == 0
                } else {
                    !a.par.out || a.par.role == Role::Array
                };
                if input {
                    match (index[k], var(&a.param)) {
                        (Some(i), _) => {
                            sources.insert(i);
                        }
                        (None, Some(v)) => sources.extend(from.get(&v).into_iter().flatten()),
                        _ => {}
                    }
                }
                if (a.par.out && !write) || (write && k == 2) {
                    dests.extend(var(&a.param));
                }
            }
            if sources.is_empty() {
                continue;
            }
            for d in dests {
                let set = from.entry(d).or_default();
                let before = set.len();
                set.extend(&sources);
                grew |= set.len() > before;
            }
        }
        if !grew {
            return from;
        }
    }
}

/// A command's operations with its wide constants masked, and those constants (see
/// [`Turn::key`]). Operations the walk could not decode stay as they are.
fn key(body: &[u8], instrs: &[Instr]) -> (String, Vec<i64>) {
    let mut key = String::with_capacity(body.len() * 2);
    let mut args = Vec::new();
    let mut at = 0;
    for ins in instrs {
        for a in &ins.args {
            if let (true, Param::Const(v)) = (wide(a), &a.param) {
                for b in &body[at..a.at] {
                    key.push_str(&format!("{b:02X}"));
                }
                key.push('#');
                args.push(*v as i64);
                at = a.end;
            }
        }
    }
    for b in &body[at..] {
        key.push_str(&format!("{b:02X}"));
    }
    (key, args)
}

/// Whether an operand is one of the command's arguments ([`Turn::args`]): a DATA32 or
/// DATA16 constant.
fn wide(a: &ops::Arg) -> bool {
    matches!(a.par.kind, Kind::D32 | Kind::D16) && matches!(a.param, Param::Const(_))
}

fn is_jump(code: u8) -> bool {
    (op::JR..=op::JR_TRUE).contains(&code) || (0x64..=0x7A).contains(&code)
}

fn name(ins: &Instr) -> String {
    ins.op.name.to_string()
}

fn read(globals: &[u8], offset: usize, size: usize, kind: Kind) -> Option<Val> {
    let b = globals.get(offset..offset + size)?;
    Some(match kind {
        Kind::Str => {
            let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
            Val::Text(String::from_utf8_lossy(&b[..end]).into_owned())
        }
        Kind::F => Val::Float(f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64),
        Kind::D8 => Val::Int(b[0] as i8 as i64),
        Kind::D16 => Val::Int(i16::from_le_bytes([b[0], b[1]]) as i64),
        Kind::D32 => Val::Int(i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as i64),
    })
}

/// The fields of a reply's global memory, by the regions the command writes: every byte
/// once (the first region to claim it names it; a measured claim wins over the others);
/// the elements of an array written by WRITE, up to the next region, take its class;
/// bytes nobody writes are values one byte each.
fn fields(regions: &[Region], globals: &[u8]) -> Vec<Field> {
    let mut by_offset: BTreeMap<usize, Region> = BTreeMap::new();
    for r in regions {
        by_offset
            .entry(r.offset)
            .and_modify(|e| {
                if matches!(r.class, Class::Physical(_)) && !matches!(e.class, Class::Physical(_)) {
                    *e = r.clone();
                }
            })
            .or_insert_with(|| r.clone());
    }
    let starts: Vec<usize> = by_offset.keys().copied().collect();
    let mut out = Vec::new();
    let mut at = 0;
    while at < globals.len() {
        if let Some(r) = by_offset.get(&at) {
            let n = r.size.max(1).min(globals.len() - at);
            if let Some(value) = read(globals, at, n, r.kind) {
                out.push(Field {
                    name: r.name.clone(),
                    class: r.class,
                    offset: at,
                    value,
                    args: r.args.clone(),
                });
            }
            at += n;
            continue;
        }
        // Inside an array that starts before `at`: the class of the array's region.
        let owner = starts
            .iter()
            .rev()
            .find(|&&s| s < at)
            .and_then(|s| by_offset.get(s))
            .filter(|r| r.name.starts_with("WRITE"));
        let next = starts
            .iter()
            .find(|&&s| s > at)
            .copied()
            .unwrap_or(globals.len());
        match owner {
            Some(r) => {
                let n = r.kind.bytes().min(next - at).max(1);
                let k = (at - r.offset) / r.kind.bytes().max(1);
                let class = match r.cycle.len() {
                    0 => r.class,
                    len => r.cycle[k % len],
                };
                if let Some(value) = read(
                    globals,
                    at,
                    n,
                    if n == r.kind.bytes() {
                        r.kind
                    } else {
                        Kind::D8
                    },
                ) {
                    out.push(Field {
                        name: format!("{}[{at}]", r.name),
                        class,
                        offset: at,
                        value,
                        args: r.args.clone(),
                    });
                }
                at += n;
            }
            None => {
                out.push(Field {
                    name: format!("unwritten@{at}"),
                    class: Class::Value,
                    offset: at,
                    value: Val::Int(globals[at] as i64),
                    args: Vec::new(),
                });
                at += 1;
            }
        }
    }
    out
}

/// Classes the bytes of a reply no operation of its command wrote by what the command before
/// left there, and records what this reply leaves (`len` bytes of globals). A leftover of
/// a record that echoed the host's constants is an [`Measure::Argument`]; a byte never
/// written since the connection stays a value.
fn left_over(fields: &mut [Field], memory: &mut Vec<Option<Class>>, len: usize) {
    for f in fields.iter_mut() {
        if f.name.starts_with("unwritten@") {
            if let Some(Some(c)) = memory.get(f.offset) {
                f.class = *c;
            }
        }
    }
    if memory.len() < len {
        memory.resize(len, None);
    }
    for (k, f) in fields.iter().enumerate() {
        let end = fields.get(k + 1).map_or(len, |n| n.offset).min(len);
        let class = match f.class {
            Class::Record | Class::Value if !f.args.is_empty() => {
                Class::Physical(Measure::Argument)
            }
            c => c,
        };
        for b in memory.iter_mut().take(end).skip(f.offset) {
            *b = Some(class);
        }
    }
}

/// The exchange a tap recorded, turn by turn: every command the host sent with the reply
/// that answered it (matched by the message counter), in the order they were sent.
/// Bytes that never make a whole frame, and replies nothing asked for, are left out.
pub fn turns(traffic: &[(f64, Traffic)]) -> Vec<Turn> {
    let mut host = FrameBuffer::default();
    let mut brick = FrameBuffer::default();
    let mut out: Vec<Turn> = Vec::new();
    // Per turn awaiting a reply: its counter and its regions.
    let mut waiting: Vec<(usize, u16, Vec<Region>)> = Vec::new();
    // The brick's direct-command globals, byte by byte, as the last reply left them: the
    // class of what was there (the firmware does not clear them between commands).
    let mut memory: Vec<Option<Class>> = Vec::new();
    for (t, tr) in traffic {
        match tr {
            Traffic::Host(b) => {
                host.push(b);
                while let Some(f) = host.pop() {
                    let Ok(c) = super::decode_command(&f) else {
                        continue;
                    };
                    let w = ops::walk(&c.body);
                    let shape: Vec<&str> = w.instrs.iter().map(|i| i.op.name).collect();
                    let (key, args) = key(&c.body, &w.instrs);
                    let wants = c.kind == DIRECT_COMMAND_REPLY;
                    if wants {
                        waiting.push((out.len(), c.counter, regions(&w.instrs)));
                    }
                    out.push(Turn {
                        sent: *t,
                        answered: None,
                        ops: c.body.clone(),
                        key,
                        args,
                        shape: shape.join(" "),
                        wants_reply: wants,
                        program: w.instrs.iter().any(|i| is_jump(i.op.code)),
                        status: None,
                        fields: Vec::new(),
                    });
                }
            }
            Traffic::Robot(b) => {
                brick.push(b);
                while let Some(f) = brick.pop() {
                    if f.len() < 5 {
                        continue;
                    }
                    let counter = u16::from_le_bytes([f[2], f[3]]);
                    let Some(i) = waiting.iter().position(|w| w.1 == counter) else {
                        continue;
                    };
                    let (k, _, regions) = waiting.remove(i);
                    let turn = &mut out[k];
                    turn.answered = Some(*t);
                    turn.status = Some(f[4]);
                    turn.fields = fields(&regions, &f[5..]);
                    left_over(&mut turn.fields, &mut memory, f.len() - 5);
                }
            }
            Traffic::Discarded | Traffic::Reopened => brick.clear(),
        }
    }
    out
}

#[cfg(test)]
mod tests;
