//! What driving the MindCub3r can fail with.
//!
//! Level: robot (wraps [`crate::robot::ev3`]'s errors). No printing.

use crate::cube::Size;
use crate::robot::ev3::driver::Ev3Error;

/// Robot-level errors.
#[derive(Debug, thiserror::Error)]
pub enum RobotError {
    #[error(transparent)]
    Ev3(#[from] Ev3Error),
    #[error(transparent)]
    Read(#[from] crate::input::InputFileError),
    #[error("robot configuration {path}: {why}")]
    Config { path: String, why: String },
    #[error("stopped {after}; {}; {state}", stop_note(*stopped))]
    Interrupted {
        /// `after tilt`, or `before its first robot action`.
        after: String,
        state: String,
        /// Whether the brick confirmed the stop of every motor.
        stopped: bool,
    },
    #[error("rescan needs a scan first, with no layer turned since")]
    RescanWithoutScan,
    #[error("bringing a sticker to the top needs a scan frame")]
    NoScanFrame,
    #[error("the scan frame was lost by a layer turn")]
    FrameLost,
    #[error("sticker {sticker} does not exist on a {size}")]
    NoSuchSticker { sticker: usize, size: Size },
    #[error("sticker {sticker} is not readable")]
    Unreadable { sticker: usize },
    #[error("sticker {sticker} is not in the frame")]
    NotInFrame { sticker: usize },
    #[error("a spin or turn takes ±1 or ±2 quarters, not {quarters}")]
    BadQuarters { quarters: i8 },
    #[error("scan program of the scan's face {} of 6 on the brick: {stage} did not finish within its {ms} ms: a motor stalled, held by the cube or a stop (the brick stopped every motor)", .face + 1)]
    ProgramTimeout { face: usize, stage: String, ms: u64 },
    /// `done` of the chunk's `of` actions were done; `stage` says what the program waited
    /// for, and which motor.
    #[error("{} on the brick: {stage} did not finish within the {ms} ms the program allowed, {}: a motor stalled, held by the cube or a stop (the brick stopped every motor)", chunk_of(*of), chunk_progress(*done, *of))]
    ChunkTimeout {
        done: usize,
        of: usize,
        stage: String,
        ms: u64,
    },
    #[error("{primitive} cannot run in a chunk on the brick")]
    NotChunkable {
        primitive: crate::robot::mindcub3r::model::Primitive,
    },
    #[error("{} on the brick: {why}", chunk_of(*of))]
    ChunkProgram {
        of: usize,
        why: crate::robot::ev3::protocol::ProgramError,
    },
    #[error("{what} on the brick: {stage} did not finish within its {ms} ms (the brick stopped every motor)")]
    HomingTimeout {
        what: String,
        stage: String,
        ms: u64,
    },
    /// A device is missing or on the wrong port: what `cubot robot check` says of each.
    #[error("wrong devices on the brick: {}; nothing moved (`cubot robot check` checks the whole robot)", fixes.join("; "))]
    Wiring { fixes: Vec<String> },
    #[error("a homing program on the brick: {why}")]
    HomingProgram {
        why: crate::robot::ev3::protocol::ProgramError,
    },
    #[error("scan program of the scan's face {} of 6 on the brick: {why}", .face + 1)]
    Program {
        face: usize,
        why: crate::robot::ev3::protocol::ProgramError,
    },
}

impl RobotError {
    /// Whether a motor was held short of where it was sent (a stall, or a program's move
    /// that never ended): the cube or the mechanism blocked it. A layer left out of square
    /// (a tight or loose cube) or a cube sitting crooked does this, and no move of the
    /// robot squares it: a person has to.
    pub fn held(&self) -> bool {
        use crate::robot::ev3::driver::Ev3Error;
        matches!(
            self,
            RobotError::ChunkTimeout { .. }
                | RobotError::ProgramTimeout { .. }
                | RobotError::Ev3(Ev3Error::Stalled { .. } | Ev3Error::MoveTimeout { .. })
        )
    }
}

/// What a message says about the motors after a stop: stopped only when the brick confirmed
/// it; otherwise the user must know that a motor may still be driving.
pub fn stop_note(confirmed: bool) -> &'static str {
    if confirmed {
        "motors stopped"
    } else {
        "the brick did not confirm the stop (no reply); every motion on the brick is bounded, so its motors stop by themselves: if one still runs, switch the brick off"
    }
}

/// `a program of 1 robot action`, `a program of 3 robot actions`: the actions the brick
/// runs in one program (a chunk of primitives), in the words of the run's action count.
pub(crate) fn chunk_of(n: usize) -> String {
    format!(
        "a program of {n} robot action{}",
        if n == 1 { "" } else { "s" }
    )
}

/// How far a chunk got: `with its action not done`, `with none of its 3 actions done`,
/// `with 2 of its 3 actions done`.
fn chunk_progress(done: usize, of: usize) -> String {
    match (done, of) {
        (0, 1) => "with its action not done".into(),
        (0, _) => format!("with none of its {of} actions done"),
        _ => format!("with {done} of its {of} actions done"),
    }
}
