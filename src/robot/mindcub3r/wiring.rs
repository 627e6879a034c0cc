//! The MindCub3r's wiring judged: each device where the robot configuration's `[ports]`
//! expect it, or what is there instead and the fix (which cables to swap, which `[ports]`
//! value to set). `robot check` says these findings one by one; connecting refuses wrong
//! wiring with the same words before anything moves.
//!
//! Level: robot (EV3 device types and the configuration's ports). No printing; no driver.

use super::config::Ports;
use crate::robot::ev3::protocol::device;

/// How serious a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Ok,
    Warn,
    Fail,
}

/// One thing the check found.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    pub level: Level,
    /// What it is about: `brick`, `battery`, `port C`, `sensor port 2`, `polarity`,
    /// `homing`, `motor B`, `sensor`.
    pub topic: String,
    pub message: String,
}

pub(super) fn finding(
    level: Level,
    topic: impl Into<String>,
    message: impl Into<String>,
) -> Finding {
    Finding {
        level,
        topic: topic.into(),
        message: message.into(),
    }
}

/// One expected device: where the robot configuration says it is.
struct Expect {
    /// "port C" or "sensor port 2".
    label: String,
    /// Index into the found types: outputs A..D are 0..3, sensor ports 1..4 are 4..7.
    at: usize,
    device: i8,
    /// "the medium motor of the sensor arm".
    role: &'static str,
    /// "sensor arm".
    part: &'static str,
    /// The `[ports]` key.
    key: &'static str,
}

fn label_of(at: usize) -> String {
    if at < 4 {
        format!("port {}", (b'A' + at as u8) as char)
    } else {
        format!("sensor port {}", at - 3)
    }
}

fn value_of(at: usize) -> String {
    if at < 4 {
        format!("\"{}\"", (b'A' + at as u8) as char)
    } else {
        format!("{}", at - 3)
    }
}

/// Every expected device against what GET_TYPEMODE found: `types` holds the device types
/// of outputs A..D then sensor ports 1..4. One finding per expected device; a wrong one
/// says what is there, what the MindCub3r expects, and the fix.
pub fn judge_devices(ports: &Ports, types: &[i8]) -> Vec<Finding> {
    let expect = [
        Expect {
            label: label_of(ports.arm.no() as usize),
            at: ports.arm.no() as usize,
            device: device::LARGE_MOTOR,
            role: "the large motor of the tilt arm",
            key: "arm",
            part: "tilt arm",
        },
        Expect {
            label: label_of(ports.turntable.no() as usize),
            at: ports.turntable.no() as usize,
            device: device::LARGE_MOTOR,
            role: "the large motor of the turntable",
            key: "turntable",
            part: "turntable",
        },
        Expect {
            label: label_of(ports.sensor_arm.no() as usize),
            at: ports.sensor_arm.no() as usize,
            device: device::MEDIUM_MOTOR,
            role: "the medium motor of the sensor arm",
            key: "sensor_arm",
            part: "sensor arm",
        },
        Expect {
            label: label_of(3 + ports.color_sensor as usize),
            at: 3 + ports.color_sensor as usize,
            device: device::COLOR,
            role: "the colour sensor",
            key: "color_sensor",
            part: "",
        },
    ];
    let wrong: Vec<usize> = expect
        .iter()
        .filter(|e| types.get(e.at) != Some(&e.device))
        .map(|e| e.at)
        .collect();
    let mut out = Vec::new();
    for e in &expect {
        let here = types.get(e.at).copied().unwrap_or(device::NONE);
        if here == e.device {
            let what = if e.part.is_empty() {
                device::name(here)
            } else {
                format!("{} ({})", device::name(here), e.part)
            };
            out.push(finding(Level::Ok, e.label.clone(), what));
            continue;
        }
        let holds = match here {
            device::NONE => "holds nothing".to_string(),
            125 | 127 => format!("holds a device the brick cannot identify (type {here})"),
            t => format!("holds {}", with_article(&device::name(t))),
        };
        let same_side = |at: usize| (at < 4) == (e.at < 4);
        // Where the expected device is instead: a port that holds it and is not itself
        // right already.
        let elsewhere = (0..types.len()).find(|&q| {
            q != e.at
                && same_side(q)
                && types[q] == e.device
                && (!expect.iter().any(|x| x.at == q) || wrong.contains(&q))
        });
        let fix = match (elsewhere, here) {
            (Some(q), _) => {
                let other = expect.iter().find(|x| x.at == q);
                match other {
                    Some(o) if types.get(e.at) == Some(&o.device) => format!(
                        "swap the cables of {} and {} (or set ports.{} = {} and ports.{} = {} in the robot configuration)",
                        e.label,
                        label_of(q),
                        e.key,
                        value_of(q),
                        o.key,
                        value_of(e.at)
                    ),
                    _ => format!(
                        "{} is on {}: move its cable to {} (or set ports.{} = {} in the robot configuration)",
                        e.role,
                        label_of(q),
                        e.label,
                        e.key,
                        value_of(q)
                    ),
                }
            }
            (None, device::NONE) => format!(
                "plug {} in there (push the cable in until it clicks)",
                e.role
            ),
            (None, 125 | 127) => {
                "unplug the cable and plug it in again; if that does not help, try another cable"
                    .to_string()
            }
            (None, _) => format!("put {} there instead", e.role),
        };
        out.push(finding(
            Level::Fail,
            e.label.clone(),
            format!(
                "{} {holds}; MindCub3r expects {} there: {fix}",
                e.label, e.role
            ),
        ));
    }
    out
}

fn with_article(name: &str) -> String {
    let vowel = name
        .chars()
        .next()
        .is_some_and(|c| "aeiou".contains(c.to_ascii_lowercase()));
    format!("{} {name}", if vowel { "an" } else { "a" })
}
