//! The world link's messages: what cubot and the firmware brick's process say to each other
//! over their `SOCK_SEQPACKET` socket, one datagram per message, `[kind: u8][payload]`,
//! integers little-endian, no padding.
//!
//! | kind | from | payload |
//! |------|------|---------|
//! | `C` CONFIG | cubot, first and once | `u32` version (1), `u8` output type ×4 (A..D: 0 none, 7 large motor, 8 medium motor), `u8` input type ×4 (1..4: 0 none, 29 colour sensor, 33 IR sensor), `u32` battery mV, `u32` tick µs (2000), `u32` round µs, `u64` seed, 32 bytes brick name (NUL padded) |
//! | `F` FRAME | cubot | one EV3 command as the host sent it, its 2-byte length first |
//! | `R` RUN | cubot | `u64` µs: the brick may run its clock up to here, then says `I` |
//! | `W` WORLD | cubot, once per `T` | per output port ×4: `u8` n, n × (`u16` µs into the tick, `i8` direction ±1, `u8` 0): the tacho edges of the tick, one per degree; then per input port ×4: `u8` mode, `u8` flags (bit 0 data valid, bit 1 switching mode), `i16` value ×4 |
//! | `Q` QUIT | cubot | none: the process exits |
//! | `B` BOOTED | brick, once | `u64` µs, then the firmware's version text (`V1.04H`) |
//! | `T` TICK | brick | `u64` µs (the tick's start), per output port ×4: `u16` duty 0..10000, `u8` drive (0 coast, 1 forward, 2 reverse, 3 brake); per input port ×4: `u8` mode asked since the last tick (0xFF none) |
//! | `P` REPLY | brick | `u64` µs, the reply bytes |
//! | `I` IDLE | brick | `u64` µs: the clock reached the last RUN's end |
//! | `L` LOG | brick | text |
//!
//! The brick's side of this table is `tests/lms2012/shim/link.c`.
//!
//! Level: robot (simulators). Pure: bytes in, bytes out; no I/O.

use crate::robot::sim::world::{Bridge, Tick};

/// What decoding a message from the brick found wrong.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WireError {
    #[error("an empty message")]
    Empty,
    #[error("a `{kind}` message of {len} bytes, shorter than its {need}")]
    Short { kind: char, len: usize, need: usize },
    #[error("a message of unknown kind 0x{0:02X}")]
    Unknown(u8),
}

/// One output port as d_pwm drives it: PWM duty (0..=10000) and the H-bridge's setting.
pub type Output = (u16, Bridge);

/// The brick's configuration, sent once before it boots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub outputs: [u8; 4],
    pub inputs: [u8; 4],
    pub battery_mv: u32,
    pub tick_us: u32,
    pub round_us: u32,
    pub seed: u64,
    pub name: String,
}

/// A message from the brick.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FromBrick {
    Booted {
        t_us: u64,
        version: String,
    },
    Tick {
        t_us: u64,
        outputs: [Output; 4],
        /// The mode the VM asked of each input port's sensor since the last tick.
        mode_requests: [Option<u8>; 4],
    },
    Reply {
        t_us: u64,
        bytes: Vec<u8>,
    },
    Idle {
        t_us: u64,
    },
    Log(String),
}

/// CONFIG.
pub fn config(c: &Config) -> Vec<u8> {
    let mut m = vec![b'C'];
    m.extend_from_slice(&1u32.to_le_bytes());
    m.extend_from_slice(&c.outputs);
    m.extend_from_slice(&c.inputs);
    m.extend_from_slice(&c.battery_mv.to_le_bytes());
    m.extend_from_slice(&c.tick_us.to_le_bytes());
    m.extend_from_slice(&c.round_us.to_le_bytes());
    m.extend_from_slice(&c.seed.to_le_bytes());
    let mut name = [0u8; 32];
    for (d, s) in name.iter_mut().zip(c.name.bytes().take(31)) {
        *d = s;
    }
    m.extend_from_slice(&name);
    m
}

/// FRAME.
pub fn frame(bytes: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(bytes.len() + 1);
    m.push(b'F');
    m.extend_from_slice(bytes);
    m
}

/// RUN.
pub fn run(until_us: u64) -> Vec<u8> {
    let mut m = vec![b'R'];
    m.extend_from_slice(&until_us.to_le_bytes());
    m
}

/// QUIT.
pub fn quit() -> Vec<u8> {
    crate::robot::sim::lms2012::process::QUIT.to_vec()
}

/// WORLD. At most 255 edges a port go out (a tick of 2 ms never holds more at any speed a
/// motor reaches); the rest are dropped.
pub fn world(w: &Tick) -> Vec<u8> {
    let mut m = vec![b'W'];
    for edges in &w.edges {
        let n = edges.len().min(255);
        m.push(n as u8);
        for e in &edges[..n] {
            m.extend_from_slice(&e.at_us.to_le_bytes());
            m.push(e.dir as u8);
            m.push(0);
        }
    }
    for s in &w.sensors {
        m.push(s.mode);
        m.push(s.valid as u8 | (s.switching as u8) << 1);
        for v in s.values {
            m.extend_from_slice(&v.to_le_bytes());
        }
    }
    m
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// Decodes one message from the brick.
pub fn decode(m: &[u8]) -> Result<FromBrick, WireError> {
    let (&kind, body) = m.split_first().ok_or(WireError::Empty)?;
    let need = |n: usize| {
        if body.len() < n {
            Err(WireError::Short {
                kind: kind as char,
                len: m.len(),
                need: n + 1,
            })
        } else {
            Ok(())
        }
    };
    match kind {
        b'B' => {
            need(8)?;
            Ok(FromBrick::Booted {
                t_us: u64_at(body, 0),
                version: String::from_utf8_lossy(&body[8..])
                    .trim_end_matches('\0')
                    .to_string(),
            })
        }
        b'T' => {
            need(8 + 12 + 4)?;
            let mut outputs = [(0, Bridge::Coast); 4];
            for (p, o) in outputs.iter_mut().enumerate() {
                let at = 8 + 3 * p;
                o.0 = u16::from_le_bytes([body[at], body[at + 1]]);
                o.1 = match body[at + 2] {
                    1 => Bridge::Forward,
                    2 => Bridge::Reverse,
                    3 => Bridge::Brake,
                    _ => Bridge::Coast,
                };
            }
            let mut mode_requests = [None; 4];
            for (p, r) in mode_requests.iter_mut().enumerate() {
                let v = body[20 + p];
                *r = (v != 0xFF).then_some(v);
            }
            Ok(FromBrick::Tick {
                t_us: u64_at(body, 0),
                outputs,
                mode_requests,
            })
        }
        b'P' => {
            need(8)?;
            Ok(FromBrick::Reply {
                t_us: u64_at(body, 0),
                bytes: body[8..].to_vec(),
            })
        }
        b'I' => {
            need(8)?;
            Ok(FromBrick::Idle {
                t_us: u64_at(body, 0),
            })
        }
        b'L' => Ok(FromBrick::Log(String::from_utf8_lossy(body).to_string())),
        other => Err(WireError::Unknown(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::robot::sim::world::{Edge, SensorReport};

    #[test]
    fn config_is_65_bytes_in_the_shims_order() {
        let m = config(&Config {
            outputs: [7, 7, 8, 0],
            inputs: [0, 29, 0, 33],
            battery_mv: 8100,
            tick_us: 2000,
            round_us: 50,
            seed: 1,
            name: "cubot".into(),
        });
        assert_eq!(m.len(), 65);
        assert_eq!(&m[..5], b"C\x01\x00\x00\x00");
        assert_eq!(&m[5..13], &[7, 7, 8, 0, 0, 29, 0, 33]);
        assert_eq!(&m[13..17], &8100u32.to_le_bytes());
        assert_eq!(&m[33..38], b"cubot");
        assert!(m[38..].iter().all(|&b| b == 0));
    }

    #[test]
    fn a_tick_decodes_outputs_and_mode_requests() {
        let mut m = vec![b'T'];
        m.extend_from_slice(&4000u64.to_le_bytes());
        for (duty, drive) in [(5250u16, 1u8), (0, 3), (2032, 2), (0, 0)] {
            m.extend_from_slice(&duty.to_le_bytes());
            m.push(drive);
        }
        m.extend_from_slice(&[0xFF, 4, 0xFF, 0xFF]);
        let FromBrick::Tick {
            t_us,
            outputs,
            mode_requests,
        } = decode(&m).unwrap()
        else {
            panic!()
        };
        assert_eq!(t_us, 4000);
        assert_eq!(outputs[0], (5250, Bridge::Forward));
        assert_eq!(outputs[1].1, Bridge::Brake);
        assert_eq!(outputs[2].1, Bridge::Reverse);
        assert_eq!(outputs[3].1, Bridge::Coast);
        assert_eq!(mode_requests, [None, Some(4), None, None]);
        assert!(matches!(
            decode(&m[..10]),
            Err(WireError::Short { kind: 'T', .. })
        ));
    }

    #[test]
    fn world_lays_out_edges_then_sensors() {
        let mut w = Tick::default();
        w.edges[1] = vec![Edge {
            at_us: 700,
            dir: -1,
        }];
        w.sensors[1] = SensorReport {
            mode: 4,
            valid: true,
            switching: false,
            values: [301, 402, 503, 0],
        };
        let m = world(&w);
        assert_eq!(m.len(), 1 + 4 + 4 + 4 * 10);
        assert_eq!(&m[1..7], &[0, 1, 0xBC, 0x02, 0xFF, 0]);
        let s = &m[9 + 10..9 + 20];
        assert_eq!(&s[..4], &[4, 1, 0x2D, 0x01]);
    }

    #[test]
    fn replies_idle_and_boot_carry_their_times() {
        let mut m = vec![b'P'];
        m.extend_from_slice(&396_000u64.to_le_bytes());
        m.extend_from_slice(&[3, 0, 0, 1, 2]);
        assert_eq!(
            decode(&m).unwrap(),
            FromBrick::Reply {
                t_us: 396_000,
                bytes: vec![3, 0, 0, 1, 2]
            }
        );
        let mut b = vec![b'B'];
        b.extend_from_slice(&392_000u64.to_le_bytes());
        b.extend_from_slice(b"V1.04H");
        assert_eq!(
            decode(&b).unwrap(),
            FromBrick::Booted {
                t_us: 392_000,
                version: "V1.04H".into()
            }
        );
        assert_eq!(decode(&[]), Err(WireError::Empty));
        assert_eq!(decode(b"Z"), Err(WireError::Unknown(b'Z')));
    }
}
