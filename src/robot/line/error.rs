//! What the line robot can fail with, each variant naming the command and what happened.
//!
//! Level: robot. No printing.

use crate::cube::{Face, Move};
use crate::robot::link::LinkError;

/// Errors of the line robot, each naming the command and what happened.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    #[error("link i/o error during `{command}`: {source}")]
    Link { command: String, source: LinkError },
    /// Ctrl-C: `STOP` was sent and the robot did not end its `MOVE` within a second.
    #[error("`{command}` (seq {seq}) stopped by the user; the robot did not confirm the stop within a second")]
    Stopped { seq: u16, command: String },
    #[error("no reply to `{command}` (seq {seq}) within {waited_ms} ms: the robot is silent (power, cable?)")]
    Timeout {
        seq: u16,
        command: String,
        waited_ms: u64,
    },
    #[error(
        "no line-protocol reply to `{command}` (seq {seq}) within {waited_ms} ms, but {bytes} \
         other bytes (wrong baud rate, or not a line robot?), starting \"{start}\""
    )]
    Garbage {
        seq: u16,
        command: String,
        waited_ms: u64,
        /// Bytes received that were not protocol lines.
        bytes: usize,
        /// The first of them, escaped.
        start: String,
    },
    #[error(
        "the robot sent a line longer than {limit} bytes after `{command}`: refused \
         (starting \"{start}\")"
    )]
    Overlong {
        command: String,
        limit: usize,
        /// The line's first bytes, escaped.
        start: String,
    },
    #[error(
        "the robot refused `{command}` (seq {seq}): {} ({code}, in its words: {text})",
        code_words(code)
    )]
    Robot {
        seq: u16,
        command: String,
        code: String,
        text: String,
    },
    #[error("unexpected line from the robot after `{command}`: {line:?} ({reason})")]
    Protocol {
        command: String,
        line: String,
        reason: String,
    },
    #[error("cannot plan for this robot: {mv} is not a face turn")]
    NotFaceTurn { mv: Move },
    #[error(
        "cannot plan for this robot: faces without a motor: {}; one may be missing at most",
        faces.iter().map(|f| f.letter()).collect::<String>()
    )]
    MissingFaces { faces: Vec<Face> },
}

impl LineError {
    /// Whether a motor was held short of where it was sent (`ERR STALL`): the cube or the
    /// mechanism blocked it, and a layer may be left out of square.
    pub fn held(&self) -> bool {
        matches!(self, LineError::Robot { code, .. } if code == "STALL")
    }
}

/// A line-protocol error code in words (see [the protocol](crate::robot::line::protocol)).
fn code_words(code: &str) -> &'static str {
    match code {
        "STALL" => "a motor stalled short of its position, held by the cube or the mechanism",
        "SYNTAX" => "it could not read the line",
        "VERB" => "it does not know that command",
        "FACE" => "it has no motor for that face",
        "PARALLEL" => "it cannot turn those faces together",
        "RANGE" => "a value out of its range",
        "NOT_HOMED" => "it was not homed first",
        "STOPPED" => "it was stopped",
        "UNSUPPORTED" => "it does not support that",
        _ => "an error of its own",
    }
}
