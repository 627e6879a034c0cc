//! What a run tells its caller: progress events as it goes ([`RunEvent`], serialised as
//! JSON Lines by the command line) and the final [`RunReport`].
//!
//! Level: job. No printing: the caller decides what to show.

use std::path::PathBuf;

use serde::Serialize;

/// Progress of a run.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum RunEvent {
    ScanProgress {
        done: usize,
        total: usize,
    },
    Scanned {
        confident: bool,
        doubtful: Vec<usize>,
        rescans: usize,
        state: String,
    },
    Solved {
        candidates: usize,
        shortest: usize,
    },
    Planned {
        solution: String,
        face_turns: usize,
        actions: usize,
        robot_seconds: f64,
        baseline_seconds: Option<f64>,
        /// Thought out while the scan's last face was read (see `job::run`).
        ahead: bool,
    },
    Executing {
        done: usize,
        total: usize,
        robot_seconds: f64,
    },
    Verifying {
        by: String,
    },
    /// The check after round `round`: how, whether the cube is at the target, the state it
    /// established (cube frame), and what follows: `done`, `replan` (round `round + 1` from
    /// what was seen) or `stop` (`reason` says why).
    Checked {
        round: usize,
        by: String,
        at_target: bool,
        state: String,
        /// Whether the scan behind it was sure of every sticker (no scan: absent).
        #[serde(skip_serializing_if = "Option::is_none")]
        confident: Option<bool>,
        next: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A resume established the cube: what it saw (cube frame), how, and what it decided
    /// (`continue`, `replan`).
    Resumed {
        seen: String,
        /// The same, as the robot held it when the resume began (robot frame).
        robot_seen: String,
        by: String,
        decision: String,
        candidates: usize,
        /// The states the journal allowed, robot frame.
        robot_candidates: Vec<String>,
    },
}

/// One round of execute-and-check.
#[derive(Clone, Debug, Serialize)]
pub struct RoundReport {
    pub round: usize,
    pub solution: String,
    pub face_turns: usize,
    pub actions: usize,
    pub robot_seconds: f64,
    /// How the cube was checked afterwards, and whether it was at the target.
    pub checked_by: String,
    pub at_target: bool,
    /// The state the check established (cube frame of the first scan, first-scan symbols).
    pub state: String,
    /// What a scan saw, when one was made (the next round plans from it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seen: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seen_confident: Option<bool>,
}

/// The final report. The plan's figures (`solution` to `candidates`) are the first round's;
/// `rounds` lists every round this process executed.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    pub reached_target: bool,
    /// Cube frame of the first scan, first-scan symbols.
    pub final_state: String,
    pub target: String,
    pub first_scan: String,
    pub face_turns: usize,
    pub robot_seconds: f64,
    /// Wall-clock seconds the execution took (on a simulator, simulated seconds only at
    /// speed 1).
    pub measured_seconds: Option<f64>,
    pub baseline_seconds: Option<f64>,
    pub solution: String,
    pub actions: usize,
    pub candidates: usize,
    pub scan_confident: bool,
    pub rescans: usize,
    pub verified_by: String,
    pub journal: PathBuf,
    pub robot: String,
    pub resumed: bool,
    pub rounds: Vec<RoundReport>,
    /// Why the run stopped off the target (the rounds spent, a doubt, nothing to prove it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}
