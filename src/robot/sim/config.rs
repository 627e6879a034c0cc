//! What to simulate on the brick: the configuration, the injected faults and what can go
//! wrong starting it.
//!
//! ## Faults
//!
//! [`Faults`] (`--faults` of `cubot sim` and of the commands that start a simulator, such
//! as `cubot run --sim`) is a comma list; N counts the commands the brick received, from
//! 1; durations are simulated milliseconds; random draws come from the simulator's seed,
//! so a seed replays the same faults. Each fault belongs to one layer: the link
//! ([`super::link`], any brick), our simulated brick ([`super::brick`]), or the world
//! ([`super::world`], any brick that drives it). LEGO's firmware brick runs LEGO's code
//! unmodified, so it refuses the faults of our brick's layer, and the battery its PC build
//! does not read ([`SimError::NotOnFirmware`]), rather than leave them out.
//!
//! | Item | Layer | Fault |
//! |------|-------|-------|
//! | `drop[@N]` | link | the reply to command N is lost (the command runs) |
//! | `silent[@N]` | link | the brick answers nothing from command N on |
//! | `latency=MS` | link | every reply arrives MS later (added to [`SimConfig::latency_ms`]) |
//! | `jitter=MS` | link | every reply's delay moves by a seeded draw in ±MS (never below zero; replies keep their order, as on a serial link) |
//! | `dropout@N=MS` | link | the link drops out when command N arrives: command N runs, but for MS every reply and every frame the host sends is lost (lost frames are not counted as commands); then the brick answers again (repeatable) |
//! | `corrupt@N` | link | one byte of the reply to command N (seeded position, seeded new value) is changed on the way, as a noisy link does (repeatable) |
//! | `stall[@N]` | brick | the first positioning move from command N on stalls |
//! | `drop@pK`, `stall@pK`, `silent@pK`, `dropout@pK=MS`, `corrupt@pK` | link, brick | the same at (from) the K-th program: a command of at least 160 bytes (a scan face's program, a chunk of primitives), so a fault lands in a given face or chunk whatever the count of polls before it |
//! | `reversed=M` | brick | motor M (A..D) starts with its polarity reversed, as an earlier session can leave it: its moves run backwards and its count falls until a host sends OUTPUT_POLARITY (see [Polarity](crate::robot::ev3::protocol#polarity)) (repeatable) |
//! | `wrong-device` | world | the colour-sensor port holds an infrared sensor |
//! | `swap=XY` | world | the devices of two output ports (`swap=AC`) or two sensor ports (`swap=23`) are exchanged: a cable in the wrong socket (repeatable) |
//! | `unplugged=P` | world | nothing in port P (A..D or 1..4) (repeatable) |
//! | `jammed=M` | world | the mechanism of motor M (A..D) is jammed: the motor never turns (repeatable) |
//! | `free=M` | world | the mechanism of motor M lost its end stops (a gear slipped off): the motor turns freely and homing finds no stop (repeatable) |
//! | `battery=MV` | world | the battery holds MV millivolts (default [`SimConfig::battery_mv`], 8100) |
//! | `covered` | world | the colour sensor's window is covered: it reads (0, 0, 0) |
//! | `empty` | world | no cube in the tray: the colour sensor sees the tray wherever it looks |
//! | `misread[=A:B]` | world | until the first layer turn, the colour sensor reads stickers A and B (indices or names such as `U3` of the starting cube, robot frame; a seeded pair without a value) as each other ([`super::misread`]) |
//! | `short-turn[@K][=DEG]` | world | a tight cube: the K-th layer turn (the table turning while the arm holds; from 1) leaves the bottom layer DEG table degrees short of where the tray takes it, so it ends misaligned or a quarter short (DEG 1..180; seeded K in 1..6 and DEG in 10..40 when left out) (repeatable) |
//! | `overshoot[@K][=DEG]` | world | a loose cube: the K-th layer turn carries the bottom layer DEG table degrees past where the tray takes it (as `short-turn`) (repeatable) |
//! | `tilt-fail[@K]` | world | the K-th tilt (from 1) does not roll the cube over: the arm swings up and back, the cube slides back as it was (seeded K in 1..5 when left out) (repeatable) |
//! | `slip[@K]=M[:DEG]` | world | the gear of motor M's mechanism (A..D) skips at the K-th time the motor starts it from rest: the mechanism stands still for the motor's first DEG degrees of that move, and lags its motor by DEG from then on (DEG 1..360 motor degrees; seeded K in 2..6, the first start being homing's, and DEG in 10..40 when left out) (repeatable) |
//!
//! Level: robot (simulators; uses `cube`, `color`). No printing.

use std::str::FromStr;

use crate::color::Palette;
use crate::cube::{FaceletCube, Size};
use crate::robot::sim::misread::Misread;
use crate::robot::sim::pty::PtyError;

/// Injected faults, parsed from a `--faults` list: the items and what each does are in
/// [Faults](crate::robot::sim::brick#faults).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Faults {
    pub drop_at: Option<u64>,
    pub stall_at: Option<u64>,
    /// `drop@pK` / `stall@pK` / `silent@pK`: the same, at the K-th program (a command of
    /// at least [`PROGRAM_BYTES`] bytes: a scan face or a chunk of primitives on the brick).
    pub drop_program: Option<u64>,
    pub stall_program: Option<u64>,
    pub silent_program: Option<u64>,
    pub wrong_device: bool,
    pub silent_at: Option<u64>,
    /// Extra delay of every reply (simulated ms).
    pub latency_ms: u32,
    /// Spread of the delay of every reply: ± this many simulated ms.
    pub jitter_ms: u32,
    /// Link drop-outs, in the order given.
    pub dropouts: Vec<Dropout>,
    /// Commands one byte of whose reply is corrupted.
    pub corrupt: Vec<u64>,
    /// Programs one byte of whose reply is corrupted.
    pub corrupt_programs: Vec<u64>,
    /// Pairs of ports whose devices are exchanged (both outputs or both sensor ports).
    pub swaps: Vec<(Port, Port)>,
    /// Ports with nothing plugged in.
    pub unplugged: Vec<Port>,
    /// Output ports (0..3 = A..D) whose motor an earlier session left with reversed
    /// polarity.
    pub reversed: Vec<u8>,
    /// Output ports (0..3 = A..D) whose mechanism is jammed: the motor never turns.
    pub jammed: Vec<u8>,
    /// Output ports (0..3 = A..D) whose mechanism lost its end stops (a gear slipped off):
    /// the motor turns freely, and homing finds no stop.
    pub free: Vec<u8>,
    /// The battery's voltage, in millivolts (instead of [`SimConfig::battery_mv`]).
    pub battery_mv: Option<u32>,
    /// The colour sensor's window is covered: it reads (0, 0, 0).
    pub covered: bool,
    /// No cube in the tray: the sensor sees the tray wherever it looks.
    pub empty: bool,
    /// Two stickers the colour sensor reads as each other until a layer turns.
    pub misread: Option<Misread>,
    /// `short-turn` and `overshoot`: layer turns that end short of or past the tray.
    pub layer_turns: Vec<LayerTurnFault>,
    /// `tilt-fail`: tilts that do not roll the cube over (`None`: a seeded one).
    pub tilt_fails: Vec<Option<u64>>,
    /// `slip`: gears that skip when their motor starts.
    pub slips: Vec<SlipFault>,
}

/// A layer turn that ends off the tray (`short-turn`, `overshoot`); `None`: seeded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerTurnFault {
    /// Which layer turn (from 1).
    pub at: Option<u64>,
    /// How far (table degrees).
    pub degrees: Option<u32>,
    /// Short of the tray (a tight cube), or past it (a loose one).
    pub short: bool,
}

/// A gear that skips (`slip`); `None`: seeded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlipFault {
    /// The output port (0..3 = A..D) of the motor whose mechanism slips.
    pub port: u8,
    /// At which start of the motor from rest (from 1).
    pub at: Option<u64>,
    /// How far (motor degrees).
    pub degrees: Option<u32>,
}

/// Commands at least this long count as programs for `@pK` faults (ordinary commands are
/// under 100 bytes, programs several hundred).
pub const PROGRAM_BYTES: usize = 160;

/// A port of the brick, as a fault names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Port {
    /// Output A..D as 0..3.
    Output(u8),
    /// Sensor port 1..4 as 0..3.
    Sensor(u8),
}

impl Port {
    fn parse(s: &str) -> Option<Port> {
        match s.as_bytes() {
            [c @ b'A'..=b'D'] => Some(Port::Output(c - b'A')),
            [c @ b'a'..=b'd'] => Some(Port::Output(c - b'a')),
            [c @ b'1'..=b'4'] => Some(Port::Sensor(c - b'1')),
            _ => None,
        }
    }
}

impl std::fmt::Display for Port {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Port::Output(n) => write!(f, "{}", (b'A' + n) as char),
            Port::Sensor(n) => write!(f, "{}", n + 1),
        }
    }
}

/// A link drop-out: from the arrival of command `at` (or, with `program`, of the `at`-th
/// program), for `ms` simulated milliseconds, nothing gets through in either direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dropout {
    pub at: u64,
    pub ms: u32,
    pub program: bool,
}

/// The most millivolts `battery=MV` takes (six fresh AA cells hold about 9600).
pub const MAX_BATTERY_MV: u32 = 10_000;

/// The items `--faults` takes, for messages.
const FAULT_ITEMS: &str = "drop[@N], stall[@N], drop@pK, stall@pK, silent@pK, wrong-device, silent[@N], latency=MS, jitter=MS, dropout@N=MS, dropout@pK=MS, corrupt@N, corrupt@pK, swap=XY, unplugged=P, reversed=M, jammed=M, free=M, battery=MV, covered, empty, misread[=A:B], short-turn[@K][=DEG], overshoot[@K][=DEG], tilt-fail[@K], slip[@K]=M[:DEG]";

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("bad fault spec {spec:?}: {why} (expected a comma list of {FAULT_ITEMS})")]
    FaultSpec { spec: String, why: String },
    #[error(transparent)]
    Pty(#[from] PtyError),
    #[error("starting cube: the starting cube is a {cube}, the simulator a {sim}")]
    StartSize { cube: Size, sim: Size },
    #[error("bad fault spec: {0}")]
    Misread(String),
    #[error(transparent)]
    Firmware(#[from] crate::robot::sim::lms2012::ProcessError),
    #[error("the fault {0} is simulated only on cubot's own brick: LEGO's firmware runs as it is, its motor driver neither stalls nor runs reversed on command, and built for a PC it reads its battery as 9.0 V (use --brick ours, or a fault of the link or the world)")]
    NotOnFirmware(String),
}

impl Faults {
    /// The faults of this list that only cubot's own brick can inject (`stall`,
    /// `reversed`, `battery`), as `--faults` items: LEGO's firmware runs unmodified, so a
    /// brick fault has no place there, and one silently left out would make a campaign count
    /// a case that never happened. (The battery: LEGO's `cUiUpdatePower` is compiled out
    /// for `Linux_X86`, so the VM keeps its initial 9.0 V whatever the analog memory says.)
    pub fn brick_only(&self) -> Vec<String> {
        let mut items = Vec::new();
        if let Some(n) = self.stall_at {
            items.push(format!("stall@{n}"));
        }
        if let Some(k) = self.stall_program {
            items.push(format!("stall@p{k}"));
        }
        for &m in &self.reversed {
            items.push(format!("reversed={}", (b'A' + m) as char));
        }
        if let Some(mv) = self.battery_mv {
            items.push(format!("battery={mv}"));
        }
        items
    }
}

impl FromStr for Faults {
    type Err = SimError;

    fn from_str(spec: &str) -> Result<Faults, SimError> {
        let mut f = Faults::default();
        let bad = |why: String| SimError::FaultSpec {
            spec: spec.to_string(),
            why,
        };
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if let Some(rest) = item.strip_prefix("misread") {
                if rest.is_empty() || rest.starts_with('=') {
                    f.misread = Some(Misread::parse(rest.strip_prefix('=')).map_err(bad)?);
                    continue;
                }
            }
            let (head, value) = match item.split_once('=') {
                Some((h, v)) => (h.trim(), Some(v.trim())),
                None => (item, None),
            };
            if let Some((k, n)) = head
                .split_once("@p")
                .filter(|(k, _)| matches!(*k, "drop" | "stall" | "silent" | "dropout" | "corrupt"))
            {
                let n: u64 = n
                    .parse()
                    .map_err(|_| bad(format!("{n:?} is not a program number")))?;
                if n == 0 {
                    return Err(bad("programs count from 1".into()));
                }
                match (k, value) {
                    ("dropout", Some(ms)) => f.dropouts.push(Dropout {
                        at: n,
                        ms: ms
                            .parse()
                            .map_err(|_| bad(format!("{ms:?} is not a whole number")))?,
                        program: true,
                    }),
                    ("dropout", None) => return Err(bad("dropout needs =MS".into())),
                    (_, Some(_)) => return Err(bad(format!("{k} takes no value"))),
                    ("drop", None) => f.drop_program = Some(n),
                    ("corrupt", None) => f.corrupt_programs.push(n),
                    ("stall", None) => f.stall_program = Some(n),
                    _ => f.silent_program = Some(n),
                }
                continue;
            }
            if parse_world_item(&mut f, head, value).map_err(bad)? {
                continue;
            }
            let (kind, at) = match head.split_once('@') {
                Some((k, n)) => {
                    let n: u64 = n
                        .parse()
                        .map_err(|_| bad(format!("{n:?} is not a command number")))?;
                    if n == 0 {
                        return Err(bad("commands count from 1".into()));
                    }
                    (k, Some(n))
                }
                None => (head, None),
            };
            const KINDS: [&str; 17] = [
                "drop",
                "stall",
                "silent",
                "wrong-device",
                "latency",
                "jitter",
                "dropout",
                "corrupt",
                "battery",
                "swap",
                "unplugged",
                "reversed",
                "jammed",
                "free",
                "covered",
                "empty",
                "misread",
            ];
            if !KINDS.contains(&kind) {
                return Err(bad(format!("unknown fault {kind:?}")));
            }
            let takes_at = matches!(kind, "drop" | "stall" | "silent" | "dropout" | "corrupt");
            if at.is_some() && !takes_at {
                return Err(bad(format!("{kind} applies from the start: no @N")));
            }
            let value_kind = match kind {
                "latency" | "jitter" | "dropout" => Some("=MS"),
                "battery" => Some("=MV (millivolts)"),
                "swap" => Some("=XY (two output ports A..D or two sensor ports 1..4)"),
                "unplugged" => Some("=P (a port A..D or 1..4)"),
                "reversed" | "jammed" | "free" => Some("=M (a motor port A..D)"),
                _ => None,
            };
            let value = match (value_kind, value) {
                (Some(what), None) => return Err(bad(format!("{kind} needs {what}"))),
                (None, Some(_)) => return Err(bad(format!("{kind} takes no value"))),
                (_, v) => v.unwrap_or(""),
            };
            let number = || -> Result<u32, SimError> {
                value
                    .parse()
                    .map_err(|_| bad(format!("{value:?} is not a whole number")))
            };
            let port = |p: &str| {
                Port::parse(p).ok_or_else(|| bad(format!("{p:?} is not a port (A..D or 1..4)")))
            };
            let at1 = at.unwrap_or(1);
            match kind {
                "drop" => f.drop_at = Some(at1),
                "stall" => f.stall_at = Some(at1),
                "silent" => f.silent_at = Some(at1),
                "wrong-device" => f.wrong_device = true,
                "latency" => f.latency_ms = number()?,
                "jitter" => f.jitter_ms = number()?,
                "dropout" => f.dropouts.push(Dropout {
                    at: at1,
                    ms: number()?,
                    program: false,
                }),
                "corrupt" => f.corrupt.push(at1),
                "battery" => {
                    // Six fresh AA cells hold about 9600 mV; the EV3's own pack 7400.
                    let mv = number()?;
                    if !(1..=MAX_BATTERY_MV).contains(&mv) {
                        return Err(bad(format!(
                            "battery={mv}: a battery holds 1..={MAX_BATTERY_MV} millivolts"
                        )));
                    }
                    f.battery_mv = Some(mv);
                }
                "swap" => {
                    let (a, b) = value.split_at(value.len().min(1));
                    let (a, b) = (port(a)?, port(b)?);
                    let same_kind = matches!(
                        (a, b),
                        (Port::Output(_), Port::Output(_)) | (Port::Sensor(_), Port::Sensor(_))
                    );
                    if !same_kind || a == b {
                        return Err(bad(format!(
                            "swap={value}: two different output ports or two different sensor ports"
                        )));
                    }
                    f.swaps.push((a, b));
                }
                "unplugged" => f.unplugged.push(port(value)?),
                "reversed" => match port(value)? {
                    Port::Output(n) => f.reversed.push(n),
                    Port::Sensor(_) => {
                        return Err(bad(format!("reversed={value}: a motor port A..D")))
                    }
                },
                "jammed" | "free" => match port(value)? {
                    Port::Output(n) if kind == "jammed" => f.jammed.push(n),
                    Port::Output(n) => f.free.push(n),
                    Port::Sensor(_) => {
                        return Err(bad(format!("{kind}={value}: a motor port A..D")))
                    }
                },
                "covered" => f.covered = true,
                "empty" => f.empty = true,
                other => return Err(bad(format!("unknown fault {other:?}"))),
            }
        }
        Ok(f)
    }
}

/// The world faults of a cube and a mechanism (`short-turn`, `overshoot`, `tilt-fail`,
/// `slip`) into `f`; `Ok(false)` when `head` is none of them.
fn parse_world_item(f: &mut Faults, head: &str, value: Option<&str>) -> Result<bool, String> {
    let (kind, at) = match head.split_once('@') {
        Some((k, n)) => (k, Some(n)),
        None => (head, None),
    };
    if !matches!(kind, "short-turn" | "overshoot" | "tilt-fail" | "slip") {
        return Ok(false);
    }
    let what = match kind {
        "tilt-fail" => "tilts",
        "slip" => "starts of a motor",
        _ => "layer turns",
    };
    let at = at
        .map(|n| match n.parse::<u64>() {
            Ok(0) => Err(format!("{kind}@{n}: {what} count from 1")),
            Ok(k) => Ok(k),
            Err(_) => Err(format!("{kind}@{n}: {n:?} is not a count of {what}")),
        })
        .transpose()?;
    let degrees = |d: &str, most: u32, unit: &str| -> Result<u32, String> {
        match d.trim().parse::<u32>() {
            Ok(x) if (1..=most).contains(&x) => Ok(x),
            _ => Err(format!(
                "{kind}: {d:?} is not a whole number of {unit} degrees in 1..{most}"
            )),
        }
    };
    match (kind, value) {
        ("short-turn" | "overshoot", v) => f.layer_turns.push(LayerTurnFault {
            at,
            degrees: v.map(|d| degrees(d, 180, "table")).transpose()?,
            short: kind == "short-turn",
        }),
        ("tilt-fail", None) => f.tilt_fails.push(at),
        ("tilt-fail", Some(_)) => return Err("tilt-fail takes no value (tilt-fail[@K])".into()),
        (_, None) => return Err("slip needs =M[:DEG] (a motor port A..D)".into()),
        (_, Some(v)) => {
            let (m, d) = match v.split_once(':') {
                Some((m, d)) => (m.trim(), Some(d)),
                None => (v.trim(), None),
            };
            let port = match Port::parse(m) {
                Some(Port::Output(n)) => n,
                _ => return Err(format!("slip={v}: {m:?} is not a motor port A..D")),
            };
            f.slips.push(SlipFault {
                port,
                at,
                degrees: d.map(|d| degrees(d, 360, "motor")).transpose()?,
            });
        }
    }
    Ok(true)
}

/// What to simulate.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub seed: u64,
    /// Simulated seconds per wall second.
    pub speed: f64,
    pub palette: Palette,
    pub faults: Faults,
    /// The cube in the robot frame (default: a random legal cube from `seed`).
    pub start: Option<FaceletCube>,
    pub size: Size,
    /// Sensor port (1..4) holding the colour sensor.
    pub color_port: u8,
    pub large_full_speed: f64,
    pub medium_full_speed: f64,
    /// Transport latency added to every reply (simulated ms; USB ≈ 10, Bluetooth ≈ 60);
    /// the `latency=MS` fault adds to it.
    pub latency_ms: f64,
    /// What COM_GET GET_BRICKNAME answers.
    pub brick_name: String,
    /// The battery's voltage in millivolts (the `battery=MV` fault replaces it).
    pub battery_mv: u32,
    /// Which brick runs the commands: ours, or LEGO's firmware.
    pub brick: crate::robot::sim::lms2012::BrickKind,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 0,
            speed: 1.0,
            palette: Palette::Standard,
            faults: Faults::default(),
            start: None,
            size: Size::Three,
            color_port: 2,
            large_full_speed: 1050.0,
            medium_full_speed: 1560.0,
            latency_ms: 0.0,
            brick_name: "EV3".into(),
            battery_mv: 8100,
            brick: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_specs_parse() {
        let f: Faults = "drop@3,stall@10,wrong-device,silent@7".parse().unwrap();
        assert_eq!(
            f,
            Faults {
                drop_at: Some(3),
                stall_at: Some(10),
                wrong_device: true,
                silent_at: Some(7),
                ..Faults::default()
            }
        );
        let f: Faults = "latency=40, jitter=15,dropout@9=500,dropout@30=2000"
            .parse()
            .unwrap();
        assert_eq!((f.latency_ms, f.jitter_ms), (40, 15));
        assert_eq!(
            f.dropouts,
            vec![
                Dropout {
                    at: 9,
                    ms: 500,
                    program: false
                },
                Dropout {
                    at: 30,
                    ms: 2000,
                    program: false
                }
            ]
        );
        let f: Faults = "dropout=100".parse().unwrap();
        assert_eq!(
            f.dropouts,
            vec![Dropout {
                at: 1,
                ms: 100,
                program: false
            }]
        );
        let f: Faults = "dropout@p12=300".parse().unwrap();
        assert_eq!(
            f.dropouts,
            vec![Dropout {
                at: 12,
                ms: 300,
                program: true
            }]
        );
        assert!("dropout@p3".parse::<Faults>().is_err());
        assert!("stall@p3=5".parse::<Faults>().is_err());
        for bad in [
            "latency",
            "latency@3=10",
            "jitter=-5",
            "jitter=x",
            "dropout@4",
            "drop@2=10",
            "dropout@0=10",
        ] {
            assert!(bad.parse::<Faults>().is_err(), "{bad}");
        }
        let f: Faults = "misread=U3:F3,drop@4".parse().unwrap();
        assert_eq!(
            f.misread.unwrap().stickers,
            Some(("U3".into(), "F3".into()))
        );
        assert_eq!(f.drop_at, Some(4));
        assert!("misread".parse::<Faults>().unwrap().misread.is_some());
        assert!("misread=U3".parse::<Faults>().is_err());
        let f: Faults =
            "swap=AC, swap=23, unplugged=B, unplugged=4, reversed=b, battery=6100, covered, empty"
                .parse()
                .unwrap();
        assert_eq!(
            f.swaps,
            vec![
                (Port::Output(0), Port::Output(2)),
                (Port::Sensor(1), Port::Sensor(2))
            ]
        );
        assert_eq!(f.unplugged, vec![Port::Output(1), Port::Sensor(3)]);
        assert_eq!(f.reversed, vec![1]);
        assert_eq!(f.battery_mv, Some(6100));
        assert!(f.covered && f.empty);
        for bad in [
            "swap=A2",
            "swap=AA",
            "swap=A",
            "swap",
            "unplugged=E",
            "reversed=2",
            "battery",
            "battery=x",
            "covered=1",
            "reversed@3=A",
        ] {
            assert!(bad.parse::<Faults>().is_err(), "{bad}");
        }
        let f: Faults = "short-turn@3=60, overshoot, tilt-fail@2, tilt-fail, slip@4=C:25, slip=a"
            .parse()
            .unwrap();
        assert_eq!(
            f.layer_turns,
            vec![
                LayerTurnFault {
                    at: Some(3),
                    degrees: Some(60),
                    short: true
                },
                LayerTurnFault {
                    at: None,
                    degrees: None,
                    short: false
                }
            ]
        );
        assert_eq!(f.tilt_fails, vec![Some(2), None]);
        assert_eq!(
            f.slips,
            vec![
                SlipFault {
                    port: 2,
                    at: Some(4),
                    degrees: Some(25)
                },
                SlipFault {
                    port: 0,
                    at: None,
                    degrees: None
                }
            ]
        );
        for (bad, why) in [
            ("short-turn@0=10", "count from 1"),
            ("short-turn@x", "not a count"),
            ("short-turn=0", "1..180"),
            ("overshoot=200", "1..180"),
            ("short-turn=9.5", "whole number"),
            ("tilt-fail=3", "no value"),
            ("slip", "needs =M"),
            ("slip=2", "motor port"),
            ("slip=B:0", "1..360"),
            ("slip@0=B", "count from 1"),
        ] {
            let e = bad.parse::<Faults>().unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
        let f: Faults = "silent".parse().unwrap();
        assert_eq!(f.silent_at, Some(1));
        assert!("explode@2".parse::<Faults>().is_err());
        assert!("drop@x".parse::<Faults>().is_err());
        assert!("drop@0".parse::<Faults>().is_err());
    }
}
