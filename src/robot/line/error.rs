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
    #[error("robot refused `{command}` (seq {seq}): {code} {text}")]
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
