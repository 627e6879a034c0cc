//! Calibrating a MindCub3r by hand: the step commands (`robot tilt`, `robot read edge 2`,
//! ...), `robot session` (the same steps read from standard input, one a line, on one
//! connection: homed once, the sensor arm left where the last step put it, so a reading is
//! taken where the user moved it), and `--set section.key=value` (an angle tried without
//! editing the TOML file, checked as the file is).
//!
//! Why a session and not a "homed" state kept between processes: a process that ends lets
//! the motors float, and a brick that was switched off, or an arm pushed by hand, would make
//! a remembered position a lie the next command drives into the cube. One process that
//! holds the brick knows where its arms are.
//!
//! Level: `cli`. Depends on `robot::mindcub3r` (the machine and its configuration) and
//! [`super::output`]; no other command module.

use std::io::BufRead;

use anyhow::{anyhow, bail, Context, Result};
use serde_json::json;

use super::output::json_line;
use super::{CmdResult, Exit, Global};
use crate::robot::mindcub3r::model::{Primitive, SensorPosition};
use crate::robot::mindcub3r::{Config, MindCub3r};

/// One step a user asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Home,
    Move(Primitive),
    /// The sensor arm to a position; edge and corner with their sample slot (1..4).
    Sensor(SensorPosition, usize),
    /// Read the colour sensor where it is now, or first move it to a position (as the
    /// one-shot `robot read POS [SLOT]`).
    Read(Option<(SensorPosition, usize)>),
    /// `set section.key=value`: change the configuration for the steps that follow.
    Set(String),
    /// Print the keys changed so far, as TOML lines to paste into the file.
    Show,
    Help,
    Quit,
}

/// What `robot session` understands, shown by `help` and on a line it cannot read.
pub const SESSION_HELP: &str = "steps: home | tilt | spin N | turn N (N = 1, -1, 2, -2) | arm away | arm hold | \
sensor parked|clear|centre | sensor edge|corner [SLOT 1-4] | read [POSITION [SLOT]] | set SECTION.KEY=VALUE | show | help | quit";

/// A quarter-turn count of a spin or a turn: 1, -1, 2 or -2.
pub fn quarters(n: i8) -> Result<i8> {
    if matches!(n, 1 | -1 | 2 | -2) {
        Ok(n)
    } else {
        bail!("a spin or turn takes 1, -1, 2 or -2 quarter turns, not {n}")
    }
}

/// A sensor position by its word.
pub fn sensor_position(word: &str) -> Result<SensorPosition> {
    Ok(match word {
        "parked" => SensorPosition::Parked,
        "clear" => SensorPosition::Clear,
        "centre" | "center" => SensorPosition::Centre,
        "edge" => SensorPosition::Edge,
        "corner" => SensorPosition::Corner,
        other => bail!("no sensor position {other:?}: parked, clear, centre, edge or corner"),
    })
}

/// A sample slot 1..4 (edge and corner positions have one per quarter of the table's
/// revolution), default 1.
pub fn slot(word: Option<&str>) -> Result<usize> {
    match word {
        None => Ok(1),
        Some(w) => match w.parse::<usize>() {
            Ok(k @ 1..=4) => Ok(k),
            _ => bail!("a sensor slot is 1, 2, 3 or 4, not {w:?}"),
        },
    }
}

/// Reads one session line: `None` for a blank line or a `#` comment.
/// A sensor position and its slot, as `sensor` and `read` take them.
fn place(pos: &str, k: Option<&str>) -> Result<(SensorPosition, usize)> {
    let p = sensor_position(pos)?;
    let k = slot(k)?;
    if k != 1 && !matches!(p, SensorPosition::Edge | SensorPosition::Corner) {
        bail!("only edge and corner have slots 1-4");
    }
    Ok((p, k))
}

pub fn parse_step(line: &str) -> Result<Option<Step>> {
    let line = line.split('#').next().unwrap_or("").trim();
    let words: Vec<&str> = line.split_whitespace().collect();
    let number = |w: Option<&&str>| -> Result<i8> {
        let w = w.ok_or_else(|| anyhow!("say how many quarter turns: 1, -1, 2 or -2"))?;
        quarters(
            w.parse()
                .map_err(|_| anyhow!("{w:?} is not 1, -1, 2 or -2"))?,
        )
    };
    let step = match words.as_slice() {
        [] => return Ok(None),
        ["home"] => Step::Home,
        ["tilt"] => Step::Move(Primitive::Tilt),
        ["spin", rest @ ..] if rest.len() <= 1 => {
            Step::Move(Primitive::Spin(number(rest.first())?))
        }
        ["turn", rest @ ..] if rest.len() <= 1 => {
            Step::Move(Primitive::Turn(number(rest.first())?))
        }
        ["arm", "away"] => Step::Move(Primitive::ArmAway),
        ["arm", "hold"] => Step::Move(Primitive::ArmHold),
        ["sensor", pos, rest @ ..] if rest.len() <= 1 => {
            let (p, k) = place(pos, rest.first().copied())?;
            Step::Sensor(p, k)
        }
        ["read"] => Step::Read(None),
        ["read", pos, rest @ ..] if rest.len() <= 1 => {
            Step::Read(Some(place(pos, rest.first().copied())?))
        }
        ["set", kv] => Step::Set(kv.to_string()),
        ["show"] => Step::Show,
        ["help"] => Step::Help,
        ["quit"] | ["exit"] => Step::Quit,
        _ => bail!("cannot read {line:?}: {SESSION_HELP}"),
    };
    Ok(Some(step))
}

/// The configuration with `section.key=value` settings applied, each checked as the TOML
/// file is (an unknown key, a value of the wrong type or out of range is refused, naming
/// it). A value is read as TOML (`105`, `-1`, `true`, `[-650, -650, -645, -640]`), else as
/// a string (`ports.arm=D`).
pub fn apply_sets(config: &Config, sets: &[String]) -> Result<Config> {
    let mut value = toml::Value::try_from(config).context("the robot configuration")?;
    for kv in sets {
        let (key, raw) = kv
            .split_once('=')
            .ok_or_else(|| anyhow!("{kv:?}: write SECTION.KEY=VALUE, e.g. arm.hold=105"))?;
        let (key, raw) = (key.trim(), raw.trim());
        let (section, field) = key
            .split_once('.')
            .ok_or_else(|| anyhow!("{kv:?}: name a key in a section, e.g. arm.hold"))?;
        let table = value
            .get_mut(section)
            .and_then(toml::Value::as_table_mut)
            .ok_or_else(|| anyhow!("{kv:?}: no section [{section}] in the robot configuration"))?;
        if !table.contains_key(field) {
            let known: Vec<&str> = table.keys().map(String::as_str).collect();
            bail!(
                "{kv:?}: [{section}] has no key {field:?} (it has {})",
                known.join(", ")
            );
        }
        let parsed = toml::from_str::<toml::Table>(&format!("v = {raw}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(raw.to_string()));
        table.insert(field.to_string(), parsed);
    }
    let text = toml::to_string(&value).context("the robot configuration")?;
    Config::parse(&text).map_err(|why| {
        // A TOML error points into the text made here: its last line says what is wrong.
        let what = why
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or(&why);
        // Its place ("line 7 (`hold = …` in `[arm]`), column 8: ") is in that text, not the
        // user's.
        let what = what
            .split_once(", column ")
            .and_then(|(_, rest)| rest.split_once(": "))
            .map_or(what, |(_, msg)| msg);
        anyhow!(
            "{}: {}",
            sets.join(" "),
            crate::input::plain_types(what.trim())
        )
    })
}

/// The keys where `now` differs from `was`, as `section.key = value` TOML lines.
pub fn changed_keys(was: &Config, now: &Config) -> Vec<String> {
    let (Ok(a), Ok(b)) = (toml::Value::try_from(was), toml::Value::try_from(now)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let (Some(a), Some(b)) = (a.as_table(), b.as_table()) {
        for (section, bt) in b {
            let (Some(at), Some(bt)) = (a.get(section).and_then(|v| v.as_table()), bt.as_table())
            else {
                continue;
            };
            for (k, v) in bt {
                if at.get(k) != Some(v) {
                    out.push(format!("{section}.{k} = {v}"));
                }
            }
        }
    }
    out
}

/// The configured motor angle of a sensor position (slot 1..4 for edge and corner).
pub fn sensor_angle(config: &Config, pos: SensorPosition, slot: usize) -> i32 {
    let s = &config.sensor_arm;
    let k = slot.clamp(1, 4) - 1;
    match pos {
        SensorPosition::Parked => s.parked,
        SensorPosition::Clear => s.clear,
        SensorPosition::Centre => s.centre,
        SensorPosition::Edge => s.edge[k],
        SensorPosition::Corner => s.corner[k],
    }
}

/// Where the sensor arm was sent last in this process, to say where a reading was taken.
#[derive(Clone, Copy, Debug)]
pub struct SensorPlace {
    pub position: SensorPosition,
    pub slot: usize,
}

impl std::fmt::Display for SensorPlace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.position {
            SensorPosition::Edge | SensorPosition::Corner => {
                write!(f, "{} {}", self.position, self.slot)
            }
            p => write!(f, "{p}"),
        }
    }
}

/// Moves the sensor arm to a position: edge and corner at their slot's angle (the machine
/// moves to slot 1's, so the slot's angle stands in for it during the move).
pub fn move_sensor(r: &mut MindCub3r, pos: SensorPosition, slot: usize) -> Result<()> {
    let keep = r.config.sensor_arm.clone();
    let k = slot.clamp(1, 4) - 1;
    r.config.sensor_arm.edge[0] = keep.edge[k];
    r.config.sensor_arm.corner[0] = keep.corner[k];
    let moved = r.execute(Primitive::Sensor(pos));
    r.config.sensor_arm = keep;
    Ok(moved?)
}

/// A reading with the sensor where `at` says: over a corner the table is turned the 45° the
/// scan turns it for a corner sample (and back square), so the reading is the corner
/// sticker's, and a corner angle can be checked.
pub fn read_at(r: &mut MindCub3r, at: Option<SensorPlace>) -> Result<[f64; 3]> {
    let offset = match at {
        Some(SensorPlace {
            position: SensorPosition::Corner,
            ..
        }) => 45.0,
        _ => 0.0,
    };
    Ok(r.read_rgb_turned(offset)?)
}

/// Prints a reading: where it was taken, at which motor angle, the three RGB-RAW counts.
pub fn print_reading(g: &Global, r: &MindCub3r, at: Option<SensorPlace>, rgb: [f64; 3]) {
    if g.json {
        json_line(&json!({
            "type": "reading",
            "rgb_raw": rgb,
            "sensor": at.map(|p| p.to_string()),
            "angle": at.map(|p| sensor_angle(&r.config, p.position, p.slot)),
        }));
    } else {
        let counts = format!("{} {} {}", rgb[0], rgb[1], rgb[2]);
        match at {
            Some(p) => outln!(
                "{counts}  (RGB-RAW, sensor {p} at {}°)",
                sensor_angle(&r.config, p.position, p.slot)
            ),
            None => outln!("{counts}  (RGB-RAW, sensor arm where it was)"),
        }
    }
    if rgb.iter().all(|&v| v <= 0.0) && !g.quiet {
        errln!("warning: no light at all: the sensor's window is covered or it is not reading; clean it and check its cable (`cubot robot check` checks it)");
    }
}

/// Says a step is done, in the words of the step.
pub fn print_done(g: &Global, what: &str) {
    if g.json {
        json_line(&json!({"type": "robot", "done": what}));
    } else {
        outln!("done: {what}");
    }
}

/// `cubot robot session`: one step a line from `input` on one connection. A step that
/// fails for the user's words (a bad line, a bad `set`) is reported and the session goes
/// on; a robot error ends it (the caller stops the motors and says where the cube is).
///
/// `file` is the configuration as the file (or the default) has it: `show` and the closing
/// note name every key that differs from it, those `--set` changed included.
pub fn run_session(
    r: &mut MindCub3r,
    file: &Config,
    g: &Global,
    live: &super::view::Live,
    input: impl BufRead,
) -> CmdResult {
    let start = file.clone();
    // Each step said on stdout and on the live page alike.
    let print_done = |g: &Global, what: &str| {
        print_done(g, what);
        live.text(&format!("done: {what}"));
    };
    let mut at: Option<SensorPlace> = None;
    let mut bad_lines = 0usize;
    if !g.quiet && !g.json {
        errln!("session: one step a line; `help` lists them, `quit` (or end of input) ends");
    }
    let mut lines = input.lines().enumerate();
    while let Some((n, line)) = super::connect::standing_still(
        format!(
            "session ended (Ctrl-C) between steps; the motors stand still; {}",
            r.state_description()
        ),
        || lines.next(),
    ) {
        let line = line.context("cannot read standard input")?;
        let step = match parse_step(&line) {
            Ok(Some(s)) => s,
            Ok(None) => continue,
            Err(e) => {
                bad_lines += 1;
                errln!("line {}: {e}", n + 1);
                continue;
            }
        };
        match step {
            Step::Quit => break,
            Step::Help => errln!("{SESSION_HELP}"),
            Step::Show => {
                let changed = changed_keys(&start, &r.config);
                if changed.is_empty() {
                    outln!("no key changed");
                }
                for c in changed {
                    outln!("{c}");
                }
            }
            Step::Set(kv) => {
                if kv.trim_start().starts_with("ports.") {
                    bad_lines += 1;
                    errln!("line {}: the ports are read when the session connects: start it again with --set {kv}", n + 1);
                    continue;
                }
                match apply_sets(&r.config, std::slice::from_ref(&kv)) {
                    Ok(c) => {
                        r.config = c;
                        print_done(g, &format!("set {kv}"));
                    }
                    Err(e) => {
                        bad_lines += 1;
                        errln!("line {}: {e}", n + 1);
                    }
                }
            }
            Step::Home => {
                r.home()?;
                at = Some(SensorPlace {
                    position: SensorPosition::Clear,
                    slot: 1,
                });
                print_done(g, "home");
            }
            Step::Move(p) => {
                r.execute(p)?;
                print_done(g, &p.to_string());
            }
            Step::Sensor(pos, k) => {
                move_sensor(r, pos, k)?;
                let place = SensorPlace {
                    position: pos,
                    slot: k,
                };
                at = Some(place);
                print_done(g, &format!("sensor {place}"));
            }
            Step::Read(to) => {
                if let Some((pos, k)) = to {
                    move_sensor(r, pos, k)?;
                    at = Some(SensorPlace {
                        position: pos,
                        slot: k,
                    });
                }
                let rgb = read_at(r, at)?;
                print_reading(g, r, at, rgb);
            }
        }
    }
    r.finish(false)?;
    let changed = changed_keys(&start, &r.config);
    if !changed.is_empty() && !g.quiet && !g.json {
        errln!(
            "changed in this session (not written; put them in your robot configuration): {}",
            changed.join("; ")
        );
    }
    if bad_lines > 0 {
        // Lines it could not read or do are bad usage (exit 2), as for any command; the
        // steps around them were done.
        bail!(
            "{} of the session's lines could not be done (said above, by line number); the other steps were done",
            bad_lines
        );
    }
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_read_as_typed() {
        assert_eq!(parse_step("  # a note").unwrap(), None);
        assert_eq!(
            parse_step("spin -1").unwrap(),
            Some(Step::Move(Primitive::Spin(-1)))
        );
        assert_eq!(
            parse_step("sensor edge 3").unwrap(),
            Some(Step::Sensor(SensorPosition::Edge, 3))
        );
        assert!(parse_step("spin 3").is_err());
        assert!(parse_step("sensor centre 2").is_err());
        assert!(parse_step("dance").is_err());
    }

    #[test]
    fn set_is_checked_as_the_file_is() {
        let c = Config::default();
        let d = apply_sets(&c, &["arm.hold=105".into()]).unwrap();
        assert_eq!(d.arm.hold, 105);
        assert_eq!(changed_keys(&c, &d), vec!["arm.hold = 105".to_string()]);
        let e = apply_sets(&c, &["sensor_arm.edge=[-650, -650, -645, -640]".into()]).unwrap();
        assert_eq!(e.sensor_arm.edge, [-650, -650, -645, -640]);
        let p = apply_sets(&c, &["ports.arm=D".into()]).unwrap();
        assert_eq!(changed_keys(&c, &p), vec!["ports.arm = \"D\"".to_string()]);
        for bad in [
            "arm.hodl=1",
            "arm=1",
            "nosuch.key=1",
            "arm.speed=200",
            "arm.hold=x",
            "turntable.sign=2",
        ] {
            assert!(apply_sets(&c, &[bad.into()]).is_err(), "{bad}");
        }
    }
}
