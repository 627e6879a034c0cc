//! The execution journal: a JSON Lines file that says, after any stop (Ctrl-C, a fault, a
//! dead battery, a silent link, a killed process, a power cut), what the cube is: the last
//! state the robot confirmed, plus exactly what was in flight. A run that stopped is
//! finished later (`cubot run --resume`) from it without a new full scan.
//!
//! Level: job (depends on `cube` and the robot's model of orientations and primitives;
//! nothing below `job` depends on it). No printing.
//!
//! ## Intent, then confirmation
//!
//! A journal that records only what the robot confirmed loses the action that was being
//! sent when the process died: the robot may well have made it. So before the host sends
//! anything that can change the cube, it writes an *intent* line naming the actions about to
//! be sent (one MindCub3r primitive, a line robot's whole `MOVE` chunk, or any chunk of
//! primitives run back to back in one direct command), flushes it, and only then sends. Each
//! action the robot confirms gets its own *step* line with the state it leaves. A reader
//! therefore knows the last confirmed state, and the actions that may or may not have
//! happened after it, in order: the cube is in the state after one *prefix* of them (the
//! robot runs a chunk in order and stops anywhere in it). Those states are the only
//! candidates; `cubot run --resume` tells them apart by asking the robot or reading the few
//! stickers on which they differ ([`crate::job::observe`]). When the host itself could ask the
//! robot at the stop (the EV3's tacho counts, a line robot's replayed replies or its `STATE`),
//! the answer is journaled at once as step lines (`"by"` says what decided) and the in-flight
//! list of the stop line is what stays unknown (usually nothing).
//!
//! A resume appends to the same file: the first run's steps and its reason for stopping
//! stay. It writes what it saw and what it decided, then the new plan, and goes on counting
//! steps.
//!
//! ## Rounds
//!
//! After a plan is executed the cube is checked ([`crate::job::verify`]); the check is a
//! *verify* line. When the cube is not at the target (a misread first scan executed the
//! wrong cube's solution), the run solves again from what the check saw and executes that:
//! a new *round*, whose plan is a *plan* line carrying its round number. A verify line that
//! found the cube elsewhere names the state it saw, so a run stopped between the check and
//! the next plan resumes from what was seen, not from what was believed.
//!
//! ## Format (version 4)
//! * `{"type":"begun","created":...,"robot":...,"size":N}` ([`JournalBegun`]), first, written
//!   before the scan (since version 4): a journal of this line alone is a run that
//!   stopped, or ended in a doubt, before anything turned.
//! * `{"type":"start", ...}` ([`JournalStart`]), once, when execution begins: robot kind, cube size, the
//!   colour symbols of the first scan (`symbols`, URFDLB order), the cube as first scanned
//!   (`first_scan`, cube frame), the target colouring, the robot-frame cube when execution
//!   began (`state`) and its `orientation`, the solution, the plan, the first scan's colours
//!   (mean Lab per symbol, `colors`; and mean raw reading per symbol, `raw_colors`, on the
//!   scale `raw_scale`).
//! * `{"type":"sent","n":N,"actions":[...]}`: the actions numbered N, N+1, ... are about to be
//!   sent (intent).
//! * `{"type":"step","n":N,"action":{...},"state":FACELETS,"orientation":[...],"seconds":S}`
//!   after the robot confirmed action N (`state`: the robot-frame cube it leaves, first-scan
//!   symbols; `seconds`: robot time so far); `"by":TEXT` when the confirmation came from asking
//!   the robot after its reply was lost (e.g. `"turntable count"`, `"robot STATE"`).
//! * `{"type":"interrupted","reason":TEXT,"in_flight":[...],"motors_stopped":BOOL}` when a run
//!   stopped: `in_flight` lists the actions sent whose outcome nobody could tell (empty when
//!   the robot's answer settled them); `motors_stopped` whether the robot confirmed its stop.
//! * `{"type":"resume","created":TIME,"seen":FACELETS,"by":TEXT,"decision":"continue"|"replan"|"refuse"}`
//!   when a resume established the cube (`seen`: robot frame, first-scan symbols, or for
//!   `refuse` the robot's cube as it named its colours; `by`: the robot's answer, N
//!   stickers, or a full scan).
//! * `{"type":"plan","state":FACELETS,"orientation":[...],"solution":ALG,"planned_seconds":S,
//!   "plan":[...],"round":R}`: a new plan from that state, in round R: a resume's (the round
//!   it stopped in, or the next one when it stopped after a check found the cube elsewhere),
//!   or the next round's after such a check.
//! * `{"type":"verify","round":R,"by":TEXT,"at_target":BOOL,"seen":FACELETS,"orientation":[...],
//!   "confident":BOOL}` after round R's plan was executed: how the cube was checked
//!   (`by`: `simulator read-back`, `re-scan`, ...), whether it is at the target, and, when a
//!   scan was made, the state it saw (robot frame as the cube sits after the scan, first-scan
//!   symbols), the cube's orientation then and whether the scan was sure (without `seen`, the
//!   state stays the last one confirmed).
//! * `{"type":"end","reached_target":BOOL}` when a run ended normally.
//!
//! Every line is flushed before the robot is sent anything further. A file cut short in the
//! middle of a line (power loss) is read up to its last complete line, and a resume cuts that
//! partial line off before appending. Version 1 journals (no intents, no resumes) and
//! version 2 journals (no verify lines, no rounds) read the same way: a version 1 journal's
//! in-flight list is empty, and both are in round 1 until their end.

use std::io::{Seek, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::cube::{Face, FaceletCube, Size};
use crate::robot::mindcub3r::model::{Orientation, Primitive};

/// A journal held by the process whose run (or resume) writes it: an advisory lock on the
/// file, released when this is dropped or the process ends (however it ends), so that two
/// processes never write one journal at once. A file system without locks goes unlocked.
pub struct JournalLock {
    file: FileLock,
}

enum FileLock {
    Held(nix::fcntl::Flock<std::fs::File>),
    Unlocked(std::fs::File),
}

impl std::ops::Deref for FileLock {
    type Target = std::fs::File;
    fn deref(&self) -> &std::fs::File {
        match self {
            FileLock::Held(f) => f,
            FileLock::Unlocked(f) => f,
        }
    }
}

impl JournalLock {
    fn on(path: &Path, file: std::fs::File) -> Result<JournalLock, JournalError> {
        use nix::errno::Errno;
        use nix::fcntl::{Flock, FlockArg};
        // `cubot journals` takes a shared lock for an instant to see whether a journal is
        // in use: a lock found held is asked again for a while before it counts as a run's.
        let mut file = file;
        let mut tries = 0;
        let file = loop {
            match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
                Ok(held) => break FileLock::Held(held),
                Err((again, Errno::EWOULDBLOCK)) if tries < LOCK_TRIES => {
                    tries += 1;
                    file = again;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err((_, Errno::EWOULDBLOCK)) => {
                    return Err(JournalError::InUse {
                        path: path.to_path_buf(),
                    })
                }
                Err((file, Errno::ENOLCK | Errno::EOPNOTSUPP)) => break FileLock::Unlocked(file),
                Err((_, e)) => return Err(io_err(path, std::io::Error::from(e))),
            }
        };
        Ok(JournalLock { file })
    }
}

/// How often a journal's lock found held is asked again (20 ms apart) before the journal
/// counts as in use.
const LOCK_TRIES: u32 = 10;

/// Whether a process holds the journal's lock now: its run or resume is under way. A
/// journal that cannot be opened or locked (no locks on its file system) counts as free.
pub fn in_use(path: &Path) -> bool {
    use nix::errno::Errno;
    use nix::fcntl::{Flock, FlockArg};
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    matches!(
        Flock::lock(file, FlockArg::LockSharedNonblock),
        Err((_, Errno::EWOULDBLOCK))
    )
}

/// Takes an existing journal's lock (a resume holds it from before it moves anything).
pub fn lock(path: &Path) -> Result<JournalLock, JournalError> {
    let file = std::fs::File::open(path).map_err(|e| io_err(path, e))?;
    JournalLock::on(path, file)
}

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
    /// A run that began (its `begun` line) and stopped before it executed anything;
    /// `reason` is what stopped it, when the run could record it.
    #[error("journal {}: its run (begun {}) stopped before anything turned: there is nothing to resume; run again", path.display(), begun.created)]
    NothingTurned {
        path: PathBuf,
        begun: Box<JournalBegun>,
        reason: Option<String>,
    },
    /// Another process holds the journal's lock: its run (or a resume) is under way.
    #[error("journal {}: another cubot is running or resuming its run right now (it holds the journal's lock); nothing moved: wait for it to end (or stop it), then look again with `cubot journals`", path.display())]
    InUse { path: PathBuf },
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
    #[error("a begun line after the first")]
    LateBegun,
    #[error("no start line before it")]
    NoStart,
    #[error("empty journal")]
    Empty,
    /// The first line is not one a run writes: another kind of file.
    #[error("this is not a run journal: its first line is not one `cubot run` writes ({0})")]
    NotAJournal(serde_json::Error),
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

/// The journal format this build writes (it reads every earlier one too).
pub const VERSION: u32 = 4;

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
    /// Mean raw reading per symbol of the first scan, on the scanner's scale (to classify a
    /// few re-read stickers without a whole scan's white balance).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub raw_colors: Vec<(char, [f64; 3])>,
    /// The scale of `raw_colors` (`ev3-raw`, `rgb8`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_scale: Option<String>,
    /// How the run was connected, as the front end describes it (free-form, e.g. a
    /// simulator's seed and palette), so that a resume can connect alike.
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub connection: serde_json::Value,
}

/// A new plan (the first plan is in the start line): a resume's, or a later round's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JournalPlan {
    /// The robot-frame cube the plan starts from (first-scan symbols).
    pub state: String,
    pub orientation: Orientation,
    pub solution: String,
    pub planned_seconds: f64,
    pub plan: Vec<Action>,
    /// The round this plan belongs to (absent in version 2 journals: round 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<usize>,
}

/// The check after a round's plan was executed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JournalVerify {
    pub round: usize,
    /// How the cube was checked.
    pub by: String,
    pub at_target: bool,
    /// What a scan saw, if one was made: robot frame as the cube sits after it, first-scan
    /// symbols; and the cube's orientation then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seen: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orientation: Option<Orientation>,
    /// Whether that scan was sure of every sticker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confident: Option<bool>,
}

/// What a resume saw before moving, and what it decided.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JournalResume {
    pub created: String,
    /// The cube as established (robot frame, first-scan symbols).
    pub seen: String,
    /// How: the robot's answer, some stickers, a full scan.
    pub by: String,
    /// `continue` (it is a state the journal allows), `replan` (another state of the same
    /// cube) or `refuse` (not the journal's cube).
    pub decision: String,
}

/// The line a run writes before it scans: a run stopped before anything turned (Ctrl-C
/// while scanning, a killed process, a scan in doubt) still has a journal, which says so,
/// and the newest journal is the newest run's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JournalBegun {
    pub version: u32,
    /// RFC 3339 UTC.
    pub created: String,
    /// `mindcub3r` or `line`.
    pub robot: String,
    pub size: Size,
    /// How the run was connected (as the start line's `connection`): a run stopped
    /// before anything turned is run again alike.
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub connection: serde_json::Value,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
enum Line {
    Begun(JournalBegun),
    Start(Box<JournalStart>),
    Sent {
        n: usize,
        actions: Vec<Action>,
    },
    Step {
        n: usize,
        action: Action,
        state: String,
        seconds: f64,
        /// The cube's orientation in the robot relative to the first scan's frame.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        orientation: Option<Orientation>,
        /// What confirmed it when the robot's own reply was lost.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
    },
    End {
        reached_target: bool,
    },
    Interrupted {
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        in_flight: Option<Vec<Action>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        motors_stopped: Option<bool>,
    },
    Resume(JournalResume),
    Plan(JournalPlan),
    Verify(JournalVerify),
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

/// Appends one line to the journal at `path` (through `file`): one write per line, so a
/// line is on disk whole or cut short, never interleaved.
fn write_line(path: &Path, file: &mut impl Write, line: &Line) -> Result<(), JournalError> {
    let text = serde_json::to_string(line).map_err(|source| JournalError::Encode {
        path: path.to_path_buf(),
        source,
    })?;
    file.write_all(format!("{text}\n").as_bytes())
        .map_err(|e| io_err(path, e))?;
    file.flush().map_err(|e| io_err(path, e))
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
    /// Starts the journal of a run before it scans (see [`JournalBegun`]): a new file.
    /// Returns the journal's lock, which the run holds to its end.
    pub fn begin(path: &Path, begun: &JournalBegun) -> Result<JournalLock, JournalError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io_err(path, e))?;
        }
        // Locked before it is emptied: a journal another process holds is left whole.
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| io_err(path, e))?;
        let lock = JournalLock::on(path, file)?;
        lock.file.set_len(0).map_err(|e| io_err(path, e))?;
        let file = lock.file.try_clone().map_err(|e| io_err(path, e))?;
        let mut j = Journal {
            path: path.to_path_buf(),
            file,
            steps: 0,
            symbols: ['U', 'R', 'F', 'D', 'L', 'B'],
        };
        j.write(&Line::Begun(begun.clone()))?;
        Ok(lock)
    }

    /// Records what stopped a run before anything turned (its journal holds only its
    /// `begun` line), so that `cubot journals` can say why. A journal that records more
    /// (its run executed, and its own stop is written) is left as it is.
    pub fn stopped_before_turning(
        path: &Path,
        lock: &JournalLock,
        reason: &str,
    ) -> Result<(), JournalError> {
        if !matches!(
            read(path),
            Err(JournalError::NothingTurned { reason: None, .. })
        ) {
            return Ok(());
        }
        let line = Line::Interrupted {
            reason: reason.to_string(),
            in_flight: None,
            motors_stopped: None,
        };
        let mut file: &std::fs::File = &lock.file;
        file.seek(std::io::SeekFrom::End(0))
            .map_err(|e| io_err(path, e))?;
        write_line(path, &mut file, &line)
    }

    /// Opens the journal of a run as it begins to execute: after its `begun` line when it
    /// has one, else a new file.
    pub fn create(path: &Path, start: &JournalStart) -> Result<Journal, JournalError> {
        let symbols = symbols_of(&start.symbols).ok_or(JournalError::Format {
            path: path.to_path_buf(),
            line: 1,
            problem: FormatProblem::SymbolCount(start.symbols.clone()),
        })?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io_err(path, e))?;
        }
        let begun = matches!(read(path), Err(JournalError::NothingTurned { .. }));
        let file = if begun {
            std::fs::OpenOptions::new().append(true).open(path)
        } else {
            std::fs::File::create(path)
        }
        .map_err(|e| io_err(path, e))?;
        let mut j = Journal {
            path: path.to_path_buf(),
            file,
            steps: 0,
            symbols,
        };
        j.write(&Line::Start(Box::new(start.clone())))?;
        Ok(j)
    }

    /// Opens a journal to carry on writing it (a resume): a last line cut short is cut off
    /// first, so what is appended starts on a line of its own; step numbers go on from the
    /// record's.
    pub fn append(path: &Path, rec: &JournalRecord) -> Result<Journal, JournalError> {
        let text = std::fs::read(path).map_err(|e| io_err(path, e))?;
        let keep = match text.iter().rposition(|&b| b == b'\n') {
            Some(i) => i + 1,
            None => 0,
        };
        // A whole line that only lacks its newline is kept (the reader counted it).
        let tail = &text[keep..];
        let whole = serde_json::from_slice::<serde_json::Value>(tail).is_ok();
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| io_err(path, e))?;
        if !whole {
            file.set_len(keep as u64).map_err(|e| io_err(path, e))?;
        }
        drop(file);
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| io_err(path, e))?;
        if whole && !tail.is_empty() {
            file.write_all(b"\n").map_err(|e| io_err(path, e))?;
        }
        Ok(Journal {
            path: path.to_path_buf(),
            file,
            steps: rec.steps,
            symbols: rec.symbols,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Steps numbered so far.
    pub fn steps(&self) -> usize {
        self.steps
    }

    fn write(&mut self, line: &Line) -> Result<(), JournalError> {
        write_line(&self.path, &mut self.file, line)
    }

    /// Records that `actions` are about to be sent (numbered from the next step on).
    pub fn intent(&mut self, actions: &[Action]) -> Result<(), JournalError> {
        self.write(&Line::Sent {
            n: self.steps + 1,
            actions: actions.to_vec(),
        })
    }

    /// Records one confirmed action and the robot-frame cube it left; `by` names what
    /// confirmed it when the robot's own reply did not.
    pub fn step(
        &mut self,
        action: Action,
        state: &FaceletCube,
        orientation: Option<Orientation>,
        seconds: f64,
        by: Option<&str>,
    ) -> Result<(), JournalError> {
        self.steps += 1;
        let state = encode(state, &self.symbols);
        self.write(&Line::Step {
            n: self.steps,
            action,
            state,
            seconds,
            orientation,
            by: by.map(str::to_string),
        })
    }

    pub fn end(&mut self, reached_target: bool) -> Result<(), JournalError> {
        self.write(&Line::End { reached_target })
    }

    /// Records a stop: why, the actions sent whose outcome is unknown, and whether the
    /// robot confirmed that its motors stopped (`None`: not asked).
    pub fn interrupted(
        &mut self,
        reason: &str,
        in_flight: &[Action],
        motors_stopped: Option<bool>,
    ) -> Result<(), JournalError> {
        self.write(&Line::Interrupted {
            reason: reason.to_string(),
            in_flight: Some(in_flight.to_vec()),
            motors_stopped,
        })
    }

    /// Records what a resume saw and decided.
    pub fn resume(&mut self, r: &JournalResume) -> Result<(), JournalError> {
        self.write(&Line::Resume(r.clone()))
    }

    /// Records a new plan (a resume's, or a later round's).
    pub fn plan(&mut self, p: &JournalPlan) -> Result<(), JournalError> {
        self.write(&Line::Plan(p.clone()))
    }

    /// Records the check after a round.
    pub fn verify(&mut self, v: &JournalVerify) -> Result<(), JournalError> {
        self.write(&Line::Verify(v.clone()))
    }
}

/// A journal read back.
#[derive(Clone, Debug)]
pub struct JournalRecord {
    pub start: JournalStart,
    pub symbols: [char; 6],
    /// Steps confirmed (over every run of the journal).
    pub steps: usize,
    /// The current plan's length (the start's, or a later round's or resume's plan) and the
    /// steps confirmed of it.
    pub plan_len: usize,
    pub plan_done: usize,
    /// Robot-frame cube after the last confirmed step (first-scan naming).
    pub state: FaceletCube,
    pub seconds: f64,
    /// Orientation relative to the first scan's frame after the last confirmed step.
    pub orientation: Orientation,
    /// Actions sent after the last confirmed step whose outcome is not known, in order: the
    /// cube is in the state after one prefix of them.
    pub in_flight: Vec<Action>,
    /// Whether the last stop's motors were confirmed stopped (`None`: not recorded).
    pub motors_stopped: Option<bool>,
    /// `Some(reached)` if the run ended normally.
    pub ended: Option<bool>,
    pub interrupted: Option<String>,
    /// Resumes so far.
    pub resumes: usize,
    /// The round the journal is in (1 until a check found the cube off the target).
    pub round: usize,
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
    let mut begun: Option<JournalBegun> = None;
    let mut stopped_before: Option<String> = None;
    let count = lines.len();
    for (i, text) in lines.iter().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        let parsed: Line = match serde_json::from_str(text) {
            Ok(l) => l,
            Err(_) if i + 1 == count && i > 0 => break, // cut short while writing
            Err(e) if rec.is_none() && begun.is_none() => {
                return Err(fmt(i + 1, FormatProblem::NotAJournal(e)))
            }
            Err(e) => return Err(fmt(i + 1, e.into())),
        };
        let state_of = |s: &str, symbols: &[char; 6]| {
            decode(s, symbols).ok_or_else(|| fmt(i + 1, FormatProblem::BadState(s.to_string())))
        };
        match (parsed, rec.as_mut()) {
            (Line::Begun(b), None) if begun.is_none() => begun = Some(b),
            (Line::Begun(_), _) => return Err(fmt(i + 1, FormatProblem::LateBegun)),
            (Line::Start(start), None) => {
                let symbols = symbols_of(&start.symbols)
                    .ok_or_else(|| fmt(1, FormatProblem::BadSymbols(start.symbols.clone())))?;
                let state = decode(&start.state, &symbols)
                    .ok_or_else(|| fmt(1, FormatProblem::BadState(start.state.clone())))?;
                let orientation = start.orientation;
                rec = Some(JournalRecord {
                    orientation,
                    plan_len: start.plan.len(),
                    plan_done: 0,
                    start: *start,
                    symbols,
                    steps: 0,
                    state,
                    seconds: 0.0,
                    in_flight: Vec::new(),
                    motors_stopped: None,
                    ended: None,
                    interrupted: None,
                    resumes: 0,
                    round: 1,
                });
            }
            (Line::Start(_), Some(_)) => return Err(fmt(i + 1, FormatProblem::SecondStart)),
            // What stopped a run before anything turned.
            (Line::Interrupted { reason, .. }, None) if begun.is_some() => {
                stopped_before = Some(reason)
            }
            (_, None) => return Err(fmt(i + 1, FormatProblem::NoStart)),
            (Line::Sent { actions, .. }, Some(r)) => r.in_flight = actions,
            (
                Line::Step {
                    n,
                    state,
                    seconds,
                    orientation,
                    action,
                    ..
                },
                Some(r),
            ) => {
                if let Some(o) = orientation {
                    r.orientation = o;
                }
                r.state = state_of(&state, &r.symbols)?;
                // One action a step line.
                r.plan_done = (r.plan_done + 1).min(r.plan_len);
                r.steps = n;
                r.seconds = seconds;
                // The first action in flight is now known to have happened.
                if r.in_flight.first() == Some(&action) {
                    r.in_flight.remove(0);
                } else {
                    r.in_flight.clear();
                }
            }
            (Line::End { reached_target }, Some(r)) => {
                r.ended = Some(reached_target);
                r.in_flight.clear();
            }
            (
                Line::Interrupted {
                    reason,
                    in_flight,
                    motors_stopped,
                },
                Some(r),
            ) => {
                r.interrupted = Some(reason);
                if let Some(f) = in_flight {
                    r.in_flight = f;
                }
                r.motors_stopped = motors_stopped;
            }
            // A refused resume moved nothing: the run stays stopped as it was.
            (Line::Resume(x), Some(_)) if x.decision == "refuse" => {}
            (Line::Resume(_), Some(r)) => {
                r.resumes += 1;
                r.ended = None;
                r.interrupted = None;
            }
            (Line::Plan(p), Some(r)) => {
                r.plan_len = p.plan.len();
                r.plan_done = 0;
                r.state = state_of(&p.state, &r.symbols)?;
                r.orientation = p.orientation;
                r.in_flight.clear();
                if let Some(round) = p.round {
                    r.round = round;
                }
            }
            (Line::Verify(v), Some(r)) => {
                // Off the target, whatever is executed next is a new round.
                r.round = if v.at_target { v.round } else { v.round + 1 };
                if !v.at_target {
                    // What the check saw is where the next round starts.
                    if let (Some(seen), Some(o)) = (&v.seen, v.orientation) {
                        r.state = state_of(seen, &r.symbols)?;
                        r.orientation = o;
                        r.in_flight.clear();
                    }
                }
            }
        }
    }
    match (rec, begun) {
        (Some(r), _) => Ok(r),
        (None, Some(begun)) => Err(JournalError::NothingTurned {
            path: path.to_path_buf(),
            begun: Box::new(begun),
            reason: stopped_before,
        }),
        (None, None) => Err(fmt(1, FormatProblem::Empty)),
    }
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
            raw_colors: Vec::new(),
            raw_scale: None,
            connection: serde_json::Value::Null,
        };
        // Begun before the scan: a journal with nothing to resume, which says when.
        let begun = JournalBegun {
            version: VERSION,
            created: now_rfc3339(),
            robot: "mindcub3r".into(),
            size: Size::Three,
            connection: serde_json::json!({"simulator": {"seed": 7}}),
        };
        Journal::begin(&path, &begun).unwrap();
        match read(&path) {
            Err(JournalError::NothingTurned { begun: b, .. }) => assert_eq!(*b, begun),
            other => panic!("{other:?}"),
        }
        // Executing, it carries on after the begun line.
        let mut j = Journal::create(&path, &start).unwrap();
        let mut after = robot.clone();
        after.apply(&Alg::parse("x").unwrap()).unwrap();
        j.step(
            Action::Primitive(Primitive::Tilt),
            &after,
            Some(Orientation::IDENTITY.after(Primitive::Tilt)),
            0.7,
            None,
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
        assert_eq!((rec.plan_done, rec.plan_len), (1, 1));
        // A later plan (a resume that replanned, another round) is counted on its own.
        let mut j = Journal::append(&path, &rec).unwrap();
        let plan = vec![Action::Primitive(Primitive::Tilt); 4];
        j.plan(&JournalPlan {
            state: encode(&after, &symbols),
            orientation: rec.orientation,
            solution: String::new(),
            planned_seconds: 2.8,
            plan,
            round: Some(2),
        })
        .unwrap();
        let mut again = after.clone();
        again.apply(&Alg::parse("x").unwrap()).unwrap();
        j.step(Action::Primitive(Primitive::Tilt), &again, None, 0.7, None)
            .unwrap();
        drop(j);
        let rec = read(&path).unwrap();
        assert_eq!((rec.steps, rec.plan_done, rec.plan_len), (2, 1, 4));
    }

    #[test]
    fn intents_leave_what_was_in_flight_and_a_resume_appends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        let cube = FaceletCube::solved(Size::Three);
        let symbols = cube.symbols();
        let turns = |t: &str| Action::Turns(t.into());
        let start = JournalStart {
            version: VERSION,
            created: now_rfc3339(),
            robot: "line".into(),
            size: Size::Three,
            symbols: symbols.iter().collect(),
            first_scan: cube.to_string(),
            target: cube.to_string(),
            state: encode(&cube, &symbols),
            orientation: Orientation::IDENTITY,
            solution: "R U F".into(),
            planned_seconds: 1.0,
            plan: vec![turns("R"), turns("U"), turns("F")],
            colors: Vec::new(),
            raw_colors: Vec::new(),
            raw_scale: None,
            connection: serde_json::Value::Null,
        };
        let mut j = Journal::create(&path, &start).unwrap();
        j.intent(&start.plan).unwrap();
        let mut after = cube.clone();
        after.apply(&Alg::parse("R").unwrap()).unwrap();
        j.step(turns("R"), &after, None, 0.2, None).unwrap();
        drop(j);
        // Killed while writing the next line.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"type\":\"step\",")
            .unwrap();
        let rec = read(&path).unwrap();
        assert_eq!(rec.steps, 1);
        assert_eq!(rec.in_flight, vec![turns("U"), turns("F")]);
        assert_eq!(rec.interrupted, None);
        // A resume refused (another cube in the robot) moved nothing: the run is as it was.
        let mut j = Journal::append(&path, &rec).unwrap();
        j.interrupted("Ctrl-C", &[turns("U")], Some(true)).unwrap();
        j.resume(&JournalResume {
            created: now_rfc3339(),
            seen: encode(&cube, &symbols),
            by: "4 stickers".into(),
            decision: "refuse".into(),
        })
        .unwrap();
        drop(j);
        let rec = read(&path).unwrap();
        assert_eq!(rec.interrupted.as_deref(), Some("Ctrl-C"));
        assert_eq!((rec.resumes, rec.in_flight.clone()), (0, vec![turns("U")]));
        // A resume appends after cutting the partial line; the history stays.
        let mut j = Journal::append(&path, &rec).unwrap();
        j.resume(&JournalResume {
            created: now_rfc3339(),
            seen: encode(&after, &symbols),
            by: "robot STATE".into(),
            decision: "continue".into(),
        })
        .unwrap();
        j.plan(&JournalPlan {
            state: encode(&after, &symbols),
            orientation: Orientation::IDENTITY,
            solution: "R'".into(),
            planned_seconds: 0.2,
            plan: vec![turns("R'")],
            round: None,
        })
        .unwrap();
        j.intent(&[turns("R'")]).unwrap();
        j.step(turns("R'"), &cube, None, 0.4, None).unwrap();
        j.end(true).unwrap();
        drop(j);
        let rec = read(&path).unwrap();
        assert_eq!((rec.steps, rec.resumes, rec.ended), (2, 1, Some(true)));
        assert!(rec.in_flight.is_empty());
        assert_eq!(rec.interrupted, None);
        assert_eq!(rec.state, cube);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().filter(|l| l.contains("\"step\"")).count(), 2);
    }

    #[test]
    fn a_check_off_the_target_starts_the_next_round_from_what_it_saw() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        let cube = FaceletCube::solved(Size::Three);
        let symbols = cube.symbols();
        let turns = |t: &str| Action::Turns(t.into());
        let mut scrambled = cube.clone();
        scrambled.apply(&Alg::parse("R U").unwrap()).unwrap();
        let start = JournalStart {
            version: VERSION,
            created: now_rfc3339(),
            robot: "line".into(),
            size: Size::Three,
            symbols: symbols.iter().collect(),
            first_scan: encode(&scrambled, &symbols),
            target: cube.to_string(),
            state: encode(&scrambled, &symbols),
            orientation: Orientation::IDENTITY,
            solution: "U' R'".into(),
            planned_seconds: 0.4,
            plan: vec![turns("U'"), turns("R'")],
            colors: Vec::new(),
            raw_colors: Vec::new(),
            raw_scale: None,
            connection: serde_json::Value::Null,
        };
        let mut j = Journal::create(&path, &start).unwrap();
        j.intent(&start.plan).unwrap();
        let mut believed = scrambled.clone();
        for t in ["U'", "R'"] {
            believed.apply(&Alg::parse(t).unwrap()).unwrap();
            j.step(turns(t), &believed, None, 0.2, None).unwrap();
        }
        // The check sees another state than the one believed (the first scan was wrong).
        let mut seen = cube.clone();
        seen.apply(&Alg::parse("F").unwrap()).unwrap();
        j.verify(&JournalVerify {
            round: 1,
            by: "re-scan".into(),
            at_target: false,
            seen: Some(encode(&seen, &symbols)),
            orientation: Some(Orientation::IDENTITY),
            confident: Some(true),
        })
        .unwrap();
        drop(j);
        // Stopped before the next plan: the record starts round 2 from what was seen.
        let rec = read(&path).unwrap();
        assert_eq!((rec.round, rec.steps), (2, 2));
        assert_eq!(rec.state, seen);
        assert!(rec.in_flight.is_empty() && rec.ended.is_none());
        let mut j = Journal::append(&path, &rec).unwrap();
        j.plan(&JournalPlan {
            state: encode(&seen, &symbols),
            orientation: Orientation::IDENTITY,
            solution: "F'".into(),
            planned_seconds: 0.2,
            plan: vec![turns("F'")],
            round: Some(2),
        })
        .unwrap();
        j.intent(&[turns("F'")]).unwrap();
        j.step(turns("F'"), &cube, None, 0.2, None).unwrap();
        j.verify(&JournalVerify {
            round: 2,
            by: "re-scan".into(),
            at_target: true,
            seen: Some(encode(&cube, &symbols)),
            orientation: Some(Orientation::IDENTITY),
            confident: Some(true),
        })
        .unwrap();
        j.end(true).unwrap();
        drop(j);
        let rec = read(&path).unwrap();
        assert_eq!((rec.round, rec.steps, rec.ended), (2, 3, Some(true)));
        assert_eq!(rec.state, cube);
        // A journal of the previous version (no verify lines, no rounds) is in round 1.
        let v2: String = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .filter(|l| !l.contains("\"verify\""))
            .map(|l| l.replace(",\"round\":2", "") + "\n")
            .collect();
        std::fs::write(&path, v2).unwrap();
        assert_eq!(read(&path).unwrap().round, 1);
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
