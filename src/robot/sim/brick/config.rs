//! What to simulate on the brick: the configuration, the injected faults and what can go
//! wrong starting it.
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
    /// Two stickers the colour sensor reads as each other until a layer turns.
    pub misread: Option<Misread>,
}

/// A link drop-out: from the arrival of command `at`, for `ms` simulated milliseconds,
/// nothing gets through in either direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dropout {
    pub at: u64,
    pub ms: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("bad fault spec {spec:?}: {why} (expected a comma list of drop[@N], stall[@N], wrong-device, silent[@N], latency=MS, jitter=MS, dropout@N=MS, corrupt@N, misread[=A:B])")]
    FaultSpec { spec: String, why: String },
    #[error(transparent)]
    Pty(#[from] PtyError),
    #[error("starting cube: the starting cube is a {cube}, the simulator a {sim}")]
    StartSize { cube: Size, sim: Size },
    #[error("bad fault spec: {0}")]
    Misread(String),
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
                Some((h, v)) => {
                    let ms: u32 = v
                        .trim()
                        .parse()
                        .map_err(|_| bad(format!("{v:?} is not a whole number of ms")))?;
                    (h.trim(), Some(ms))
                }
                None => (item, None),
            };
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
            let needs_ms = matches!(kind, "latency" | "jitter" | "dropout");
            match (needs_ms, value) {
                (true, None) => return Err(bad(format!("{kind} needs =MS"))),
                (false, Some(_)) => return Err(bad(format!("{kind} takes no =MS"))),
                _ => {}
            }
            if matches!(kind, "latency" | "jitter") && at.is_some() {
                return Err(bad(format!("{kind} applies to every reply: no @N")));
            }
            let at1 = at.unwrap_or(1);
            let ms = value.unwrap_or(0);
            match kind {
                "drop" => f.drop_at = Some(at1),
                "stall" => f.stall_at = Some(at1),
                "silent" => f.silent_at = Some(at1),
                "wrong-device" => f.wrong_device = true,
                "latency" => f.latency_ms = ms,
                "jitter" => f.jitter_ms = ms,
                "dropout" => f.dropouts.push(Dropout { at: at1, ms }),
                "corrupt" => f.corrupt.push(at1),
                other => return Err(bad(format!("unknown fault {other:?}"))),
            }
        }
        Ok(f)
    }
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
            vec![Dropout { at: 9, ms: 500 }, Dropout { at: 30, ms: 2000 }]
        );
        let f: Faults = "dropout=100".parse().unwrap();
        assert_eq!(f.dropouts, vec![Dropout { at: 1, ms: 100 }]);
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
        let f: Faults = "silent".parse().unwrap();
        assert_eq!(f.silent_at, Some(1));
        assert!("explode@2".parse::<Faults>().is_err());
        assert!("drop@x".parse::<Faults>().is_err());
        assert!("drop@0".parse::<Faults>().is_err());
    }
}
