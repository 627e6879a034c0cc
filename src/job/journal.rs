//! The execution journal: a JSON Lines file with one line per executed robot action and
//! the cube state it leaves, so a run that stops (Ctrl-C, a fault, a dead battery, a silent
//! link) can say exactly where the cube is and be finished later without a new scan.
//!
//! Level: job (depends on `cube` and the robot's model of orientations and primitives;
//! nothing below `job` depends on it). No printing.
//!
//! ## Format (version 1)
//! Line 1, `{"type":"start", ...}` ([`JournalStart`]): robot kind, cube size, the colour
//! symbols of the first scan (`symbols`, URFDLB order), the cube as first scanned
//! (`first_scan`, cube frame), the target colouring, the robot-frame cube when execution
//! began (`state`), the solution and the plan.
//! Then one `{"type":"step","n":N,"action":{...},"state":FACELETS,"seconds":S}` per action
//! *after* the robot confirmed it (`state` is the robot-frame cube it leaves, written with the
//! first scan's symbols; `seconds` is robot time so far). Last, if the run ended normally,
//! `{"type":"end","reached_target":BOOL}`, or, when it stopped, `{"type":"interrupted",
//! "reason":TEXT}`. A file cut short in the middle of a line (power loss) is read up to its
//! last complete line.
//!
//! Every line is flushed before the next action starts.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::cube::{Face, FaceletCube, Size};
use crate::robot::mindcub3r::model::{Orientation, Primitive};

/// Why a journal could not be written or read back.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("journal {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("journal {}: {source}", path.display())]
    Encode {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error(transparent)]
    Read(#[from] crate::input::InputFileError),
    #[error("journal {} line {line}: {problem}", path.display())]
    Format {
        path: PathBuf,
        line: usize,
        problem: FormatProblem,
    },
}

/// What is wrong with one line of a journal.
#[derive(Debug, thiserror::Error)]
pub enum FormatProblem {
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    #[error("symbols {0:?} must be six characters")]
    SymbolCount(String),
    #[error("bad symbols {0:?}")]
    BadSymbols(String),
    #[error("bad state {0:?}")]
    BadState(String),
    #[error("a second start line")]
    SecondStart,
    #[error("no start line before it")]
    NoStart,
    #[error("empty journal")]
    Empty,
}

/// One executed action.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// A MindCub3r primitive.
    Primitive(Primitive),
    /// Face turns of a line-protocol robot (one `MOVE` token, `U` or `U+D'`).
    Turns(String),
}

/// The first line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JournalStart {
    pub version: u32,
    /// RFC 3339 UTC.
    pub created: String,
    /// `mindcub3r` or `line`.
    pub robot: String,
    pub size: Size,
    /// The first scan's symbol for each face (URFDLB).
    pub symbols: String,
    /// The cube as first scanned (cube frame).
    pub first_scan: String,
    /// The target colouring (first-scan symbols; reached in any whole-cube orientation).
    pub target: String,
    /// The robot-frame cube when execution began.
    pub state: String,
    /// Its orientation relative to the first scan's frame.
    pub orientation: Orientation,
    /// The face-turn solution being executed.
    pub solution: String,
    pub planned_seconds: f64,
    /// The actions planned, in order.
    pub plan: Vec<Action>,
    /// Mean Lab per symbol of the first scan (to match a later re-scan's colours).
    #[serde(default)]
    pub colors: Vec<(char, [f64; 3])>,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
enum Line {
    Start(JournalStart),
    Step {
        n: usize,
        action: Action,
        state: String,
        seconds: f64,
        /// The cube's orientation in the robot relative to the first scan's frame.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        orientation: Option<Orientation>,
    },
    End {
        reached_target: bool,
    },
    Interrupted {
        reason: String,
    },
}

/// An open journal being written.
pub struct Journal {
    path: PathBuf,
    file: std::fs::File,
    steps: usize,
    symbols: [char; 6],
}

fn io_err(path: &Path, source: std::io::Error) -> JournalError {
    JournalError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes a cube with given symbols (URFDLB order).
pub fn encode(cube: &FaceletCube, symbols: &[char; 6]) -> String {
    cube.colors().iter().map(|f| symbols[f.index()]).collect()
}

/// Reads a facelet string written with `symbols` back into the same colour naming (unlike
/// [`FaceletCube::parse`], which names colours by the centres it finds).
pub fn decode(state: &str, symbols: &[char; 6]) -> Option<FaceletCube> {
    let colors: Option<Vec<Face>> = state
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| symbols.iter().position(|&s| s == c).map(|i| Face::ALL[i]))
        .collect();
    let colors = colors?;
    let size = Size::from_stickers(colors.len())?;
    FaceletCube::from_colors(size, colors).map(|c| c.with_symbols(*symbols))
}

pub fn symbols_of(s: &str) -> Option<[char; 6]> {
    let v: Vec<char> = s.chars().collect();
    <[char; 6]>::try_from(v).ok()
}

impl Journal {
    /// Creates (truncates) the journal and writes its first line.
    pub fn create(path: &Path, start: &JournalStart) -> Result<Journal, JournalError> {
        let symbols = symbols_of(&start.symbols).ok_or(JournalError::Format {
            path: path.to_path_buf(),
            line: 1,
            problem: FormatProblem::SymbolCount(start.symbols.clone()),
        })?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io_err(path, e))?;
        }
        let file = std::fs::File::create(path).map_err(|e| io_err(path, e))?;
        let mut j = Journal {
            path: path.to_path_buf(),
            file,
            steps: 0,
            symbols,
        };
        j.write(&Line::Start(start.clone()))?;
        Ok(j)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn write(&mut self, line: &Line) -> Result<(), JournalError> {
        let text = serde_json::to_string(line).map_err(|source| JournalError::Encode {
            path: self.path.clone(),
            source,
        })?;
        writeln!(self.file, "{text}").map_err(|e| io_err(&self.path, e))?;
        self.file.flush().map_err(|e| io_err(&self.path, e))
    }

    /// Records one confirmed action and the robot-frame cube it left.
    pub fn step(
        &mut self,
        action: Action,
        state: &FaceletCube,
        orientation: Option<Orientation>,
        seconds: f64,
    ) -> Result<(), JournalError> {
        self.steps += 1;
        let state = encode(state, &self.symbols);
        self.write(&Line::Step {
            n: self.steps,
            action,
            state,
            seconds,
            orientation,
        })
    }

    pub fn end(&mut self, reached_target: bool) -> Result<(), JournalError> {
        self.write(&Line::End { reached_target })
    }

    pub fn interrupted(&mut self, reason: &str) -> Result<(), JournalError> {
        self.write(&Line::Interrupted {
            reason: reason.to_string(),
        })
    }
}

/// A journal read back.
#[derive(Clone, Debug)]
pub struct JournalRecord {
    pub start: JournalStart,
    pub symbols: [char; 6],
    /// Steps confirmed.
    pub steps: usize,
    /// Robot-frame cube after the last confirmed step (first-scan naming).
    pub state: FaceletCube,
    pub seconds: f64,
    /// Orientation relative to the first scan's frame after the last confirmed step.
    pub orientation: Orientation,
    /// `Some(reached)` if the run ended normally.
    pub ended: Option<bool>,
    pub interrupted: Option<String>,
}

/// Reads a journal; a last line cut short is ignored.
pub fn read(path: &Path) -> Result<JournalRecord, JournalError> {
    let text = crate::input::read_text(path, crate::input::FileKind::Journal)?;
    let lines: Vec<&str> = text.lines().collect();
    let fmt = |line: usize, problem: FormatProblem| JournalError::Format {
        path: path.to_path_buf(),
        line,
        problem,
    };
    let mut rec: Option<JournalRecord> = None;
    let count = lines.len();
    for (i, text) in lines.iter().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        let parsed: Line = match serde_json::from_str(text) {
            Ok(l) => l,
            Err(_) if i + 1 == count && i > 0 => break, // cut short while writing
            Err(e) => return Err(fmt(i + 1, e.into())),
        };
        match (parsed, rec.as_mut()) {
            (Line::Start(start), None) => {
                let symbols = symbols_of(&start.symbols)
                    .ok_or_else(|| fmt(1, FormatProblem::BadSymbols(start.symbols.clone())))?;
                let state = decode(&start.state, &symbols)
                    .ok_or_else(|| fmt(1, FormatProblem::BadState(start.state.clone())))?;
                let orientation = start.orientation;
                rec = Some(JournalRecord {
                    orientation,
                    start,
                    symbols,
                    steps: 0,
                    state,
                    seconds: 0.0,
                    ended: None,
                    interrupted: None,
                });
            }
            (Line::Start(_), Some(_)) => return Err(fmt(i + 1, FormatProblem::SecondStart)),
            (_, None) => return Err(fmt(i + 1, FormatProblem::NoStart)),
            (
                Line::Step {
                    n,
                    state,
                    seconds,
                    orientation,
                    ..
                },
                Some(r),
            ) => {
                if let Some(o) = orientation {
                    r.orientation = o;
                }
                r.state = decode(&state, &r.symbols)
                    .ok_or_else(|| fmt(i + 1, FormatProblem::BadState(state.clone())))?;
                r.steps = n;
                r.seconds = seconds;
            }
            (Line::End { reached_target }, Some(r)) => r.ended = Some(reached_target),
            (Line::Interrupted { reason }, Some(r)) => r.interrupted = Some(reason),
        }
    }
    rec.ok_or_else(|| fmt(1, FormatProblem::Empty))
}

/// Now, RFC 3339 UTC.
pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::Alg;

    #[test]
    fn round_trip_keeps_the_colour_naming() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        let first =
            FaceletCube::parse("wwwwwwwwwrrrrrrrrrgggggggggyyyyyyyyyooooooooobbbbbbbbb").unwrap();
        let symbols = first.symbols();
        let mut robot = first.clone();
        robot.apply(&Alg::parse("x y").unwrap()).unwrap();
        let start = JournalStart {
            version: 1,
            created: now_rfc3339(),
            robot: "mindcub3r".into(),
            size: Size::Three,
            symbols: symbols.iter().collect(),
            first_scan: first.to_string(),
            target: first.to_string(),
            state: encode(&robot, &symbols),
            orientation: Orientation::IDENTITY,
            solution: "R".into(),
            planned_seconds: 1.0,
            plan: vec![Action::Primitive(Primitive::Tilt)],
            colors: vec![('U', [90.0, 0.0, 1.0])],
        };
        let mut j = Journal::create(&path, &start).unwrap();
        let mut after = robot.clone();
        after.apply(&Alg::parse("x").unwrap()).unwrap();
        j.step(
            Action::Primitive(Primitive::Tilt),
            &after,
            Some(Orientation::IDENTITY.after(Primitive::Tilt)),
            0.7,
        )
        .unwrap();
        drop(j);
        // A half-written line at the end is ignored.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"type\":\"step\",\"n\":2,")
            .unwrap();
        let rec = read(&path).unwrap();
        assert_eq!(rec.steps, 1);
        assert_eq!(rec.state.colors(), after.colors());
        assert_eq!(encode(&rec.state, &rec.symbols), encode(&after, &symbols));
        assert_eq!(rec.start, start);
        assert_eq!(
            rec.orientation,
            Orientation::IDENTITY.after(Primitive::Tilt)
        );
        assert!(rec.ended.is_none());
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.jsonl");
        std::fs::write(&path, "not json\n").unwrap();
        assert!(matches!(
            read(&path),
            Err(JournalError::Format { line: 1, .. })
        ));
        assert!(read(&dir.path().join("missing")).is_err());
    }
}
