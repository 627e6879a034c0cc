//! The wiring of the simulated robot: which mechanism's motor is plugged into each output
//! port (A..D) and which sensor into each input port (1..4), with the cabling faults
//! (`swap`, `unplugged`, `wrong-device`) applied.
//!
//! Level: robot (simulators; uses the device numbers of [`crate::robot::ev3::protocol`]).
//! Must not depend on a brick, `job` or `cli`. No printing.

use crate::robot::ev3::protocol::device;
use crate::robot::sim::config::{Port, SimConfig};

/// Ports to devices.
#[derive(Clone, Debug)]
pub struct Wiring {
    /// Output port (0..3 = A..D) → the mechanism whose motor is plugged in there (`None`:
    /// the port is empty).
    pub outputs: [Option<usize>; 4],
    /// Sensor ports (0..3) → device type.
    pub inputs: [i8; 4],
}

impl Wiring {
    /// The MindCub3r's cabling: the tilt arm on A, the turntable on B, the sensor arm on
    /// C, D free (a placeholder mechanism of type "none"); the colour sensor on
    /// `cfg.color_port`, the infrared sensor on 4 (unless the colour sensor is there); then
    /// `swap` and `unplugged` faults, in that order.
    pub fn new(cfg: &SimConfig) -> Wiring {
        let mut inputs = [device::NONE; 4];
        let color_port = cfg.color_port.clamp(1, 4) as usize - 1;
        inputs[color_port] = device::COLOR;
        if color_port != 3 {
            inputs[3] = device::INFRARED;
        }
        let mut outputs = [Some(0), Some(1), Some(2), Some(3)];
        for &(a, b) in &cfg.faults.swaps {
            match (a, b) {
                (Port::Output(x), Port::Output(y)) => outputs.swap(x as usize, y as usize),
                (Port::Sensor(x), Port::Sensor(y)) => inputs.swap(x as usize, y as usize),
                _ => {}
            }
        }
        for &p in &cfg.faults.unplugged {
            match p {
                Port::Output(x) => outputs[x as usize] = None,
                Port::Sensor(x) => inputs[x as usize] = device::NONE,
            }
        }
        if cfg.faults.wrong_device {
            inputs[color_port] = device::INFRARED;
        }
        Wiring { outputs, inputs }
    }

    /// The output port (0..3) a mechanism's motor is plugged into (its own index when it
    /// is not plugged in anywhere).
    pub fn port_of(&self, m: usize) -> usize {
        self.outputs.iter().position(|&w| w == Some(m)).unwrap_or(m)
    }

    /// The output port letter of a mechanism's motor, for notes.
    pub fn port_letter(&self, m: usize) -> char {
        (b'A' + self.port_of(m) as u8) as char
    }
}
