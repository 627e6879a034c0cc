//! What a run tells its caller: progress events as it goes ([`RunEvent`], serialised as
//! JSON Lines by the command line) and the final [`RunReport`].
//!
//! Some events carry the evidence behind the progress for a live view (`view`, above this
//! level): each reading as it arrives ([`RunEvent::Readings`]), the camera frames a scan
//! looked at ([`RunEvent::CameraFrame`]), every resolution in full
//! ([`RunEvent::Resolution`]), each round's robot actions ([`RunEvent::Executes`]) and the
//! cube after each action (`state` of [`RunEvent::Executing`]). The command line's text and
//! JSON Lines leave them out, as they leave out the progress counts.
//!
//! Level: job. No printing: the caller decides what to show.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use crate::color::resolve::{ClassSummary, Resolution, StickerVerdict};
use crate::scan::image::RgbImage;

use super::journal::Action;

/// One reading: the facelet index it stands for (frame of the scan's start) and its value
/// on the scanner's scale.
#[derive(Clone, Debug, Serialize)]
pub struct Reading {
    pub index: usize,
    pub value: [f64; 3],
}

/// A sticker found on a camera frame: its outline (image pixels), its sampled colour (8-bit
/// RGB), whether a detected region supported it (else placed from the grid or a rig).
#[derive(Clone, Debug, Serialize)]
pub struct FrameSticker {
    pub quad: [[f64; 2]; 4],
    pub rgb: [f64; 3],
    pub detected: bool,
}

/// A camera frame's pixels, shared (an event is cloned without copying them; not
/// serialised).
#[derive(Clone)]
pub struct FrameImage(pub Arc<RgbImage>);

impl std::fmt::Debug for FrameImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FrameImage({}x{})", self.0.width, self.0.height)
    }
}

/// Progress of a run.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum RunEvent {
    ScanProgress {
        done: usize,
        total: usize,
    },
    /// Readings as they arrive (a face of the MindCub3r's sensor, a camera frame's
    /// stickers, a line robot's whole scan); `reread`: doubtful stickers read again (the
    /// resolver takes the mean of a sticker's readings).
    Readings {
        /// The scanner's scale (`ev3-raw`, `rgb8`, ...).
        scale: Option<String>,
        reread: bool,
        readings: Vec<Reading>,
    },
    /// A camera frame the scanner read: which face it shows (when known), the cube's size
    /// (stickers along an edge), the frame's size and the stickers found on it (image
    /// row-major).
    CameraFrame {
        face: Option<char>,
        n: usize,
        width: usize,
        height: usize,
        stickers: Vec<FrameSticker>,
        #[serde(skip)]
        image: FrameImage,
    },
    /// What the resolver made of a scan, in full: the cube (face letters), whether it is
    /// sure, the best guess's probability, the stickers in doubt and the closest rival
    /// cube, every sticker's colour (CIELAB) and class, the six classes.
    Resolution {
        cube: String,
        confident: bool,
        probability: f64,
        cube_margin: f64,
        doubtful: Vec<usize>,
        rival: Option<String>,
        stickers: Vec<StickerVerdict>,
        classes: Vec<ClassSummary>,
    },
    /// A scan in doubt read again: `stickers` (facelet indices of the cube as the scan
    /// began; with `whole`, the doubt that made a whole new scan), the run's `rescan`-th
    /// re-scan; `size`: stickers along an edge.
    Rereading {
        rescan: usize,
        stickers: Vec<usize>,
        whole: bool,
        size: usize,
    },
    Scanned {
        confident: bool,
        doubtful: Vec<usize>,
        /// Stickers the cube's rules gave another colour than their clear readings.
        overruled: Vec<usize>,
        rescans: usize,
        state: String,
    },
    Solved {
        /// The solver's candidate solutions (the summary's `candidates`; its
        /// `planned_from` adds the robot-cost search's).
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
    /// The robot actions a round is about to execute, its solution, the robot seconds
    /// its plan predicts, and the cube before them (cube frame, first-scan symbols).
    Executes {
        round: usize,
        solution: String,
        actions: Vec<Action>,
        robot_seconds: f64,
        state: String,
    },
    Executing {
        done: usize,
        total: usize,
        robot_seconds: f64,
        /// The cube as it should be now (cube frame, first-scan symbols).
        state: String,
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

impl RunEvent {
    /// Whether the event carries evidence only a live view shows (see the module docs).
    pub fn is_evidence(&self) -> bool {
        matches!(
            self,
            RunEvent::Readings { .. }
                | RunEvent::CameraFrame { .. }
                | RunEvent::Resolution { .. }
                | RunEvent::Executes { .. }
        )
    }

    /// A resolution in full ([`RunEvent::Resolution`]).
    pub fn resolution(r: &Resolution) -> RunEvent {
        RunEvent::Resolution {
            cube: r.cube.to_letters(),
            confident: r.confident,
            probability: r.probability(),
            cube_margin: r.cube_margin,
            doubtful: r.doubtful.clone(),
            rival: r.rival.as_ref().map(|c| c.to_letters()),
            stickers: r.stickers.clone(),
            classes: r.classes.clone(),
        }
    }

    /// Readings (see [`RunEvent::Readings`]).
    pub fn readings(
        scale: Option<crate::color::raw::Scale>,
        reread: bool,
        readings: impl IntoIterator<Item = (usize, [f64; 3])>,
    ) -> RunEvent {
        RunEvent::Readings {
            scale: scale.map(|s| s.name().to_string()),
            reread,
            readings: readings
                .into_iter()
                .map(|(index, value)| Reading { index, value })
                .collect(),
        }
    }
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
    /// The solver's candidate solutions for the first plan, as the `solved` event says.
    pub candidates: usize,
    /// Every candidate the first plan was chosen from: the solver's and those the
    /// robot-cost search added (as many as `candidates` without that search).
    pub planned_from: usize,
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
