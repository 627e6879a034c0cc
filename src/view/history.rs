//! History: the run journals in the cache directory's `journals/`, listed, and one of them
//! turned into the messages a live run would have sent the page (its first scan, each
//! round's plan, the cube after every confirmed action, the checks, a stop and the
//! resumes), which the page replays through the same code as a live run.
//!
//! Journal lines are read as JSON, each on its own, so that a journal cut short or of an
//! older version shows what it has. States become cube-frame states (the frame of the first
//! scan) as a live run reports them.
//!
//! Level: part of `view`; reads journals as `job::journal` writes them and turns robot-frame
//! states into cube-frame ones (`robot::mindcub3r::frames`). No printing.

use std::path::Path;

use serde_json::{json, Value};

use crate::job::journal::{decode, encode, symbols_of, JournalStart};
use crate::robot::mindcub3r::frames::to_cube;
use crate::robot::mindcub3r::model::Orientation;

/// Journals listed at most (the newest).
const LISTED: usize = 100;
/// A journal longer than this is not read.
const MAX_BYTES: u64 = 8 << 20;

/// Whether `name` is a plain journal file name (no path, no way out of the directory).
fn plain(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 200
        && name.ends_with(".jsonl")
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

fn read(dir: &Path, name: &str) -> Result<String, String> {
    if !plain(name) {
        return Err(format!("{name:?} is not a journal's name"));
    }
    let path = dir.join(name);
    let meta = std::fs::metadata(&path).map_err(|e| format!("{name}: {e}"))?;
    if !meta.is_file() || meta.len() > MAX_BYTES {
        return Err(format!("{name}: not a journal file of at most 8 MiB"));
    }
    std::fs::read_to_string(&path).map_err(|e| format!("{name}: {e}"))
}

/// A start line longer than this is not read (a long plan makes a long first line).
const MAX_FIRST_LINE: u64 = 1 << 20;

/// The first line of the file at `path`, read up to [`MAX_FIRST_LINE`] bytes.
fn first_line(path: &Path) -> Result<String, String> {
    use std::io::{BufRead, Read};
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut line = Vec::new();
    std::io::BufReader::new(f.take(MAX_FIRST_LINE))
        .read_until(b'\n', &mut line)
        .map_err(|e| e.to_string())?;
    String::from_utf8(line).map_err(|_| "its first line is not text".to_string())
}

/// Whether `first`, a file's first line, starts a run journal (a `start` record as
/// `job::journal` writes it, with six face symbols); if not, what its first line is.
fn starts_a_journal(first: &str) -> Result<(), String> {
    let v: Value = serde_json::from_str(first.trim())
        .map_err(|_| "its first line is not a one-line JSON record".to_string())?;
    match v["type"].as_str() {
        Some("start") => {}
        // A run's first line since it is written before the scan (`job::journal`).
        Some("begun") if v["created"].is_string() => return Ok(()),
        Some(other) => {
            return Err(format!(
                "its first line is a {other:?} record, not a journal's \"start\""
            ))
        }
        None => return Err("its first line is JSON without a journal's \"type\"".into()),
    }
    let start: JournalStart = serde_json::from_value(v)
        .map_err(|e| format!("its start line is not one cubot writes ({e})"))?;
    symbols_of(&start.symbols).map(|_| ()).ok_or_else(|| {
        format!(
            "its start line names no six face symbols ({:?})",
            start.symbols
        )
    })
}

/// Whether the file at `path` is a run journal (its first line is a journal's start
/// record); if not, why not, for a person to read after the file's name.
pub fn is_journal(path: &Path) -> Result<(), String> {
    starts_a_journal(&first_line(path)?)
}

fn lines(text: &str) -> impl Iterator<Item = Value> + '_ {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
}

/// The first line and the last few lines of a journal: what the list needs, read in
/// bounded time however long the journal is.
fn head_and_tail(dir: &Path, name: &str) -> String {
    use std::io::{Read, Seek, SeekFrom};
    const PART: u64 = 4096;
    let Ok(mut f) = std::fs::File::open(dir.join(name)) else {
        return String::new();
    };
    let len = f.metadata().map_or(0, |m| m.len());
    let mut head = vec![0u8; PART.min(len) as usize];
    let _ = f.read_exact(&mut head);
    let mut text = first_line(&dir.join(name))
        .unwrap_or_default()
        .trim_end()
        .to_string();
    if len > PART && f.seek(SeekFrom::Start(len - PART)).is_ok() {
        let mut tail = Vec::new();
        let _ = f.take(PART).read_to_end(&mut tail);
        // The first line of the tail may be cut: left out.
        for l in String::from_utf8_lossy(&tail).lines().skip(1) {
            text.push('\n');
            text.push_str(l);
        }
    } else {
        text = String::from_utf8_lossy(&head).to_string();
    }
    text
}

/// The journals in `dir`, newest first: name, size, when it was last written (Unix
/// seconds), the robot, and how the run ended as far as the journal's last lines say.
/// Only files whose first line is a journal's start are listed (a `resolve --json` output
/// saved as `.jsonl` beside them is not a run).
pub fn list(dir: &Path) -> Value {
    let mut found: Vec<(u64, String, u64)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let meta = e.metadata().ok()?;
            let modified = meta
                .modified()
                .ok()?
                .duration_since(std::time::UNIX_EPOCH)
                .ok()?
                .as_secs();
            (plain(&name) && meta.is_file()).then_some((modified, name, meta.len()))
        })
        .collect();
    found.sort_by(|a, b| b.cmp(a));
    let items: Vec<Value> = found
        .into_iter()
        .filter(|(_, name, _)| is_journal(&dir.join(name)).is_ok())
        .take(LISTED)
        .map(|(modified, name, bytes)| {
            let (mut robot, mut outcome, mut steps) = (Value::Null, "unfinished", 0u64);
            {
                let text = head_and_tail(dir, &name);
                // A journal of a begun line alone: its run ended before anything turned.
                let started = lines(&text).any(|l| l["type"] != "begun");
                if !started {
                    outcome = "nothing turned";
                }
                for l in lines(&text) {
                    match l["type"].as_str() {
                        Some("begun") | Some("start") => robot = l["robot"].clone(),
                        Some("step") => steps = l["n"].as_u64().unwrap_or(steps),
                        Some("interrupted") => outcome = "stopped",
                        Some("end") if l["reached_target"] == true => {
                            outcome = "reached the target"
                        }
                        Some("end") => outcome = "ended off the target",
                        _ => {}
                    }
                }
            }
            json!({"name": name, "bytes": bytes, "modified": modified, "robot": robot,
                   "outcome": outcome, "actions": steps})
        })
        .collect();
    Value::Array(items)
}

/// A robot-frame state of the journal as the cube-frame state a live run reports.
fn cube_state(state: &Value, orientation: &Value, symbols: &[char; 6]) -> Value {
    let Some(s) = state.as_str() else {
        return Value::Null;
    };
    let o: Orientation =
        serde_json::from_value(orientation.clone()).unwrap_or(Orientation::IDENTITY);
    match decode(s, symbols) {
        Some(c) => Value::String(encode(&to_cube(&c, &o), symbols)),
        None => Value::Null,
    }
}

/// The journal `name` of `dir` as the messages a live run sends the page (see the module
/// docs).
pub fn replay(dir: &Path, name: &str) -> Result<Value, String> {
    let text = read(dir, name)?;
    starts_a_journal(text.lines().next().unwrap_or(""))
        .map_err(|why| format!("{name} is not a run journal: {why}"))?;
    let mut out = Vec::new();
    let mut symbols = ['U', 'R', 'F', 'D', 'L', 'B'];
    // Steps confirmed before the plan in force, and that plan's length.
    let (mut base, mut planned, mut steps) = (0u64, 0u64, 0u64);
    let mut state = Value::Null;
    for l in lines(&text) {
        match l["type"].as_str() {
            Some("start") => {
                symbols = l["symbols"]
                    .as_str()
                    .and_then(symbols_of)
                    .ok_or_else(|| format!("{name}: its start line names no six symbols"))?;
                state = cube_state(&l["state"], &l["orientation"], &symbols);
                planned = l["plan"].as_array().map_or(0, |p| p.len() as u64);
                out.push(json!({"type": "journal", "name": name, "robot": l["robot"],
                                "created": l["created"], "symbols": l["symbols"]}));
                out.push(json!({"type": "palette", "colors": l["colors"]}));
                out.push(
                    json!({"type": "scanned", "state": l["first_scan"], "confident": true,
                                "doubtful": [], "rescans": 0}),
                );
                out.push(
                    json!({"type": "executes", "round": 1, "solution": l["solution"],
                                "actions": l["plan"], "robot_seconds": l["planned_seconds"],
                                "state": state}),
                );
            }
            Some("step") => {
                steps = l["n"].as_u64().unwrap_or(steps + 1);
                state = cube_state(&l["state"], &l["orientation"], &symbols);
                out.push(
                    json!({"type": "executing", "done": steps, "total": base + planned,
                                "robot_seconds": l["seconds"], "state": state}),
                );
            }
            Some("plan") => {
                base = steps;
                planned = l["plan"].as_array().map_or(0, |p| p.len() as u64);
                state = cube_state(&l["state"], &l["orientation"], &symbols);
                out.push(
                    json!({"type": "executes", "round": l["round"].as_u64().unwrap_or(1),
                                "solution": l["solution"], "actions": l["plan"],
                                "robot_seconds": l["planned_seconds"], "state": state}),
                );
            }
            Some("verify") => {
                let seen = if l["seen"].is_string() {
                    cube_state(&l["seen"], &l["orientation"], &symbols)
                } else {
                    state.clone()
                };
                out.push(
                    json!({"type": "checked", "round": l["round"], "by": l["by"],
                                "at_target": l["at_target"], "state": seen,
                                "confident": l["confident"]}),
                );
            }
            Some("interrupted") => {
                out.push(json!({"type": "stopped", "reason": l["reason"],
                                "in_flight": l["in_flight"], "motors_stopped": l["motors_stopped"],
                                "state": state, "candidates": [],
                                "resume": format!("cubot run --resume {name} (in the journals directory, with the run's connection flags)")}));
            }
            Some("resume") => {
                out.push(json!({"type": "resumed", "seen": l["seen"], "by": l["by"],
                                "decision": l["decision"]}));
            }
            Some("end") => {
                out.push(
                    json!({"type": "summary", "reached_target": l["reached_target"],
                                "final_state": state}),
                );
            }
            _ => {}
        }
    }
    if out.is_empty() {
        return Err(if text.contains("\"begun\"") {
            format!("{name}: nothing turned in its run (nothing to replay)")
        } else {
            format!("{name}: no journal lines")
        });
    }
    Ok(Value::Array(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names_in_the_directory_are_read() {
        for bad in [
            "../x.jsonl",
            "a/b.jsonl",
            ".x.jsonl",
            "x.json",
            "",
            "x y.jsonl",
        ] {
            assert!(!plain(bad), "{bad}");
        }
        assert!(plain("run-1700000000000-42.jsonl"));
    }

    #[test]
    fn a_journal_replays_as_a_run_reports_itself() {
        let dir = tempfile::tempdir().unwrap();
        let solved = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB";
        let id = serde_json::to_value(Orientation::IDENTITY).unwrap();
        let text = [
            json!({"type": "start", "version": 3, "created": "now", "robot": "line", "size": "Three",
                   "symbols": "URFDLB", "first_scan": solved, "target": solved, "state": solved,
                   "orientation": id, "solution": "U", "planned_seconds": 1.0,
                   "plan": [{"turns": "U"}], "colors": [], "raw_colors": []}),
            json!({"type": "step", "n": 1, "action": {"turns": "U"}, "state": solved,
                   "seconds": 0.5}),
            json!({"type": "interrupted", "reason": "stopped", "in_flight": [],
                   "motors_stopped": true}),
        ]
        .map(|v| v.to_string())
        .join("\n");
        std::fs::write(dir.path().join("run-1.jsonl"), text).unwrap();
        let events = replay(dir.path(), "run-1.jsonl").unwrap();
        let types: Vec<&str> = events
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            types,
            [
                "journal",
                "palette",
                "scanned",
                "executes",
                "executing",
                "stopped"
            ]
        );
        assert_eq!(events[4]["total"], 1);
        assert_eq!(events[4]["state"], solved);
        let listed = list(dir.path());
        assert_eq!(listed[0]["name"], "run-1.jsonl");
        assert_eq!(listed[0]["outcome"], "stopped");
        assert!(replay(dir.path(), "../run-1.jsonl").is_err());
    }

    #[test]
    fn what_is_not_a_journal_says_what_its_first_line_is() {
        let no = |line: &str| starts_a_journal(line).unwrap_err();
        assert!(no("[colors]").contains("not a one-line JSON record"));
        assert!(no(r#"{"type":"resolution","state":"x"}"#).contains(r#""resolution" record"#));
        assert!(no(r#"{"faces":{}}"#).contains("without a journal's"));
        assert!(no(r#"{"type":"start","robot":"line"}"#).contains("not one cubot writes"));
    }
}
