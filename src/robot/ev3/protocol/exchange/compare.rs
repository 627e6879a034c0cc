//! Two exchanges side by side: the same host's conversation with two bricks, aligned
//! command by command, and every difference between them either a difference of logic
//! (a command one brick was sent and the other not, a status, a value that is no
//! measurement, a program's record) or a physical one, with its size.
//!
//! A host that polls (OUTPUT_TEST until a motor is idle, a program that waits) sends the
//! same command as often as the brick keeps it waiting, which is the world's doing: a run
//! of identical consecutive commands is one step, its length a count (a physical
//! difference, `repeats`), and only its last reply, the one the host acted on, is
//! compared. The steps are aligned on their operations' bytes with the wide (DATA16,
//! DATA32) constants masked (longest common subsequence): a host computes steps, counts
//! and times from what it measured, so those constants are compared as physical
//! (`argument`), the rest of a command as logic, and so is a record a program computed
//! from constants that differ. A step without a partner is a logic
//! difference.
//!
//! Level: robot (part of the codec; pure). No printing.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Class, Turn};

/// How far physical differences may go before they are called out (they are never logic).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Tolerances {
    /// Tacho degrees.
    pub count: f64,
    /// Speed percent.
    pub speed: f64,
    /// Raw sensor counts.
    pub sensor: f64,
    /// Milliseconds of brick time (TIMER_READ).
    pub time: f64,
    /// Microseconds of brick time (TIMER_READ_US).
    pub time_us: f64,
    /// Volts or percent.
    pub battery: f64,
    /// Repeats of a polled command.
    pub repeats: f64,
    /// Seconds between a command and its reply.
    pub reply: f64,
    /// A command's wide constants (steps, counts, times the host computed).
    pub argument: f64,
}

impl Default for Tolerances {
    fn default() -> Tolerances {
        Tolerances {
            count: 15.0,
            speed: 100.0,
            sensor: 400.0,
            time: 2000.0,
            time_us: 2_000_000.0,
            battery: 0.01,
            repeats: 50.0,
            reply: 2.0,
            argument: 30.0,
        }
    }
}

impl Tolerances {
    /// The tolerance of a kind of physical difference (by its name in [`Comparison::physical`]).
    pub fn of(&self, kind: &str) -> f64 {
        match kind {
            "count" | "movement" => self.count,
            "speed" => self.speed,
            "sensor" => self.sensor,
            "time" => self.time,
            "time-us" => self.time_us,
            "battery" => self.battery,
            "repeats" => self.repeats,
            "argument" => self.argument,
            _ => self.reply,
        }
    }
}

/// A difference of logic between the two exchanges.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Difference {
    /// The step in each exchange (none: the step has no partner there).
    pub a: Option<usize>,
    pub b: Option<usize>,
    /// The command's operations (`OUTPUT_TEST`, …).
    pub shape: String,
    pub what: String,
    pub in_a: String,
    pub in_b: String,
}

/// The sizes of one kind of physical difference.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Sizes {
    pub n: usize,
    /// How many differed at all.
    pub differing: usize,
    pub max: f64,
    pub sum: f64,
    /// How many were beyond the tolerance.
    pub over: usize,
}

impl Sizes {
    pub fn add(&mut self, d: f64, tolerance: f64) {
        let d = d.abs();
        self.n += 1;
        self.differing += (d > 0.0) as usize;
        self.max = self.max.max(d);
        self.sum += d;
        self.over += (d > tolerance) as usize;
    }

    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum / self.n as f64
        }
    }

    pub fn merge(&mut self, o: &Sizes) {
        self.n += o.n;
        self.differing += o.differing;
        self.max = self.max.max(o.max);
        self.sum += o.sum;
        self.over += o.over;
    }
}

/// What the comparison found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Comparison {
    /// Commands sent, and steps (runs of one command), in each exchange.
    pub commands: (usize, usize),
    pub steps: (usize, usize),
    pub logic: Vec<Difference>,
    /// Where the host's paths part: the first step without a partner (in each exchange)
    /// and how many of [`logic`](Self::logic) come before it. What follows a parting is
    /// the host acting on what it found, not two bricks answering one command.
    pub parted: Option<(Option<usize>, Option<usize>)>,
    pub logic_before_parting: usize,
    /// Differences of the bricks' identities (name, versions): not logic.
    pub identity: Vec<Difference>,
    /// By kind (`count`, `speed`, `sensor`, `time`, `battery`, `repeats`, `reply`, …).
    pub physical: BTreeMap<String, Sizes>,
    /// The same, of the steps before the host's paths part only: like for like.
    pub physical_before_parting: BTreeMap<String, Sizes>,
}

/// A run of identical consecutive commands.
struct Step<'a> {
    last: &'a Turn,
    n: usize,
}

fn steps(turns: &[Turn]) -> Vec<Step<'_>> {
    let mut out: Vec<Step> = Vec::new();
    for t in turns {
        match out.last_mut() {
            Some(s) if s.last.key == t.key && s.last.wants_reply == t.wants_reply => {
                s.last = t;
                s.n += 1;
            }
            _ => out.push(Step { last: t, n: 1 }),
        }
    }
    out
}

/// Pairs of indices of a longest common subsequence of `a` and `b` under `same`.
fn align<T>(a: &[T], b: &[T], same: impl Fn(&T, &T) -> bool) -> Vec<(usize, usize)> {
    let mut pre = 0;
    while pre < a.len() && pre < b.len() && same(&a[pre], &b[pre]) {
        pre += 1;
    }
    let mut suf = 0;
    while suf < a.len() - pre
        && suf < b.len() - pre
        && same(&a[a.len() - 1 - suf], &b[b.len() - 1 - suf])
    {
        suf += 1;
    }
    let (ma, mb) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    let mut pairs: Vec<(usize, usize)> = (0..pre).map(|i| (i, i)).collect();
    if ma.len() * mb.len() <= 16_000_000 {
        // lcs[i][j]: of ma[i..] and mb[j..].
        let w = mb.len() + 1;
        let mut lcs = vec![0u32; (ma.len() + 1) * w];
        for i in (0..ma.len()).rev() {
            for j in (0..mb.len()).rev() {
                lcs[i * w + j] = if same(&ma[i], &mb[j]) {
                    lcs[(i + 1) * w + j + 1] + 1
                } else {
                    lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < ma.len() && j < mb.len() {
            if same(&ma[i], &mb[j]) {
                pairs.push((pre + i, pre + j));
                i += 1;
                j += 1;
            } else if lcs[(i + 1) * w + j] >= lcs[i * w + j + 1] {
                i += 1;
            } else {
                j += 1;
            }
        }
    }
    pairs.extend((0..suf).map(|k| (a.len() - suf + k, b.len() - suf + k)));
    pairs
}

fn describe(t: &Turn) -> String {
    let mut s = t.shape.clone();
    if s.len() > 160 {
        s.truncate(160);
        s.push('…');
    }
    s
}

/// Compares exchange `a` with exchange `b` (see the module docs).
pub fn compare(a: &[Turn], b: &[Turn], tol: &Tolerances) -> Comparison {
    let (sa, sb) = (steps(a), steps(b));
    let pairs = align(&sa, &sb, |x, y| {
        x.last.key == y.last.key && x.last.wants_reply == y.last.wants_reply
    });
    let mut c = Comparison {
        commands: (a.len(), b.len()),
        steps: (sa.len(), sb.len()),
        ..Comparison::default()
    };
    let add = |c: &mut Comparison, kind: &str, d: f64| {
        c.physical
            .entry(kind.to_string())
            .or_default()
            .add(d, tol.of(kind));
        if !c.logic.iter().any(|d| d.a.is_none() || d.b.is_none()) {
            c.physical_before_parting
                .entry(kind.to_string())
                .or_default()
                .add(d, tol.of(kind));
        }
    };
    // Steps without a partner.
    let (mut ia, mut ib) = (0, 0);
    let unmatched =
        |c: &mut Comparison, upto_a: usize, upto_b: usize, ia: &mut usize, ib: &mut usize| {
            while *ia < upto_a {
                c.logic.push(Difference {
                    a: Some(*ia),
                    b: None,
                    shape: describe(sa[*ia].last),
                    what: "a command only one brick was sent".into(),
                    in_a: format!("sent {}×", sa[*ia].n),
                    in_b: "not sent".into(),
                });
                *ia += 1;
            }
            while *ib < upto_b {
                c.logic.push(Difference {
                    a: None,
                    b: Some(*ib),
                    shape: describe(sb[*ib].last),
                    what: "a command only one brick was sent".into(),
                    in_a: "not sent".into(),
                    in_b: format!("sent {}×", sb[*ib].n),
                });
                *ib += 1;
            }
        };
    let mut prev: Option<(f64, f64)> = None;
    for &(i, j) in &pairs {
        unmatched(&mut c, i, j, &mut ia, &mut ib);
        ia = i + 1;
        ib = j + 1;
        let (x, y) = (&sa[i], &sb[j]);
        let logic = |c: &mut Comparison, what: String, in_a: String, in_b: String| {
            c.logic.push(Difference {
                a: Some(i),
                b: Some(j),
                shape: describe(x.last),
                what,
                in_a,
                in_b,
            })
        };
        if x.n != y.n {
            add(&mut c, "repeats", x.n as f64 - y.n as f64);
        } else {
            add(&mut c, "repeats", 0.0);
        }
        // The time since the step before, and the command's own time to its reply.
        if let Some((pa, pb)) = prev {
            add(&mut c, "interval", (x.last.sent - pa) - (y.last.sent - pb));
        }
        prev = Some((x.last.sent, y.last.sent));
        if let (Some(ra), Some(rb)) = (x.last.answered, y.last.answered) {
            add(&mut c, "reply", (ra - x.last.sent) - (rb - y.last.sent));
        }
        for (p, q) in x.last.args.iter().zip(&y.last.args) {
            add(&mut c, "argument", (p - q) as f64);
        }
        if x.last.status != y.last.status {
            let s = |v: Option<u8>| v.map_or("no reply".into(), |v| format!("0x{v:02X}"));
            logic(
                &mut c,
                "reply status".into(),
                s(x.last.status),
                s(y.last.status),
            );
            continue;
        }
        let (fa, fb) = (&x.last.fields, &y.last.fields);
        if fa.len() != fb.len() {
            logic(
                &mut c,
                "reply layout".into(),
                format!("{} values", fa.len()),
                format!("{} values", fb.len()),
            );
            continue;
        }
        for (p, q) in fa.iter().zip(fb) {
            if p.offset != q.offset || p.class != q.class {
                logic(
                    &mut c,
                    format!("value {}", p.name),
                    p.name.clone(),
                    q.name.clone(),
                );
                continue;
            }
            match p.class {
                Class::Physical(m) => {
                    let d = match (p.value.number(), q.value.number()) {
                        (Some(u), Some(v)) => u - v,
                        _ => 0.0,
                    };
                    add(&mut c, m.name(), d);
                }
                Class::Identity if p.value != q.value => c.identity.push(Difference {
                    a: Some(i),
                    b: Some(j),
                    shape: describe(x.last),
                    what: format!("identity {}", p.name),
                    in_a: format!("{:?}", p.value),
                    in_b: format!("{:?}", q.value),
                }),
                // A record computed from arguments that differ: the arguments' difference.
                Class::Value | Class::Record
                    if p.value != q.value
                        && p.args
                            .iter()
                            .any(|&k| x.last.args.get(k) != y.last.args.get(k)) =>
                {
                    let d = match (p.value.number(), q.value.number()) {
                        (Some(u), Some(v)) => u - v,
                        _ => 0.0,
                    };
                    add(&mut c, "argument", d);
                }
                Class::Value | Class::Record if p.value != q.value => {
                    let kind = if p.class == Class::Record {
                        "record"
                    } else {
                        "value"
                    };
                    logic(
                        &mut c,
                        format!("{kind} {}", p.name),
                        format!("{:?}", p.value),
                        format!("{:?}", q.value),
                    );
                }
                _ => {}
            }
        }
    }
    unmatched(&mut c, sa.len(), sb.len(), &mut ia, &mut ib);
    let parting = c.logic.iter().position(|d| d.a.is_none() || d.b.is_none());
    c.parted = parting.map(|k| (c.logic[k].a, c.logic[k].b));
    c.logic_before_parting = parting.unwrap_or(c.logic.len());
    c
}
