//! What to simulate on the brick: the configuration, the injected faults and what can go
//! wrong starting it.
//!
//! Level: robot (simulators; uses `cube`, `color`). No printing.

use std::str::FromStr;

use crate::color::Palette;
use crate::cube::{FaceletCube, Size};
use crate::robot::sim::pty::PtyError;

/// Injected faults (`--faults drop@N,stall@N,wrong-device,silent@N`; N counts commands
/// received from 1; without `@N` a fault happens at once).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Faults {
    pub drop_at: Option<u64>,
    pub stall_at: Option<u64>,
    pub wrong_device: bool,
    pub silent_at: Option<u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("bad fault spec {spec:?}: {why} (expected a comma list of drop[@N], stall[@N], wrong-device, silent[@N])")]
    FaultSpec { spec: String, why: String },
    #[error(transparent)]
    Pty(#[from] PtyError),
    #[error("starting cube: the starting cube is a {cube}, the simulator a {sim}")]
    StartSize { cube: Size, sim: Size },
}

impl FromStr for Faults {
    type Err = SimError;

    fn from_str(spec: &str) -> Result<Faults, SimError> {
        let mut f = Faults::default();
        let bad = |why: &str| SimError::FaultSpec {
            spec: spec.to_string(),
            why: why.to_string(),
        };
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (kind, at) = match item.split_once('@') {
                Some((k, n)) => {
                    let n: u64 = n
                        .parse()
                        .map_err(|_| bad(&format!("{n:?} is not a command number")))?;
                    if n == 0 {
                        return Err(bad("commands count from 1"));
                    }
                    (k, n)
                }
                None => (item, 1),
            };
            match kind {
                "drop" => f.drop_at = Some(at),
                "stall" => f.stall_at = Some(at),
                "silent" => f.silent_at = Some(at),
                "wrong-device" => f.wrong_device = true,
                other => return Err(bad(&format!("unknown fault {other:?}"))),
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
    /// Transport latency added to every reply (simulated ms; USB ≈ 10, Bluetooth ≈ 60).
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
                silent_at: Some(7)
            }
        );
        let f: Faults = "silent".parse().unwrap();
        assert_eq!(f.silent_at, Some(1));
        assert!("explode@2".parse::<Faults>().is_err());
        assert!("drop@x".parse::<Faults>().is_err());
        assert!("drop@0".parse::<Faults>().is_err());
    }
}
