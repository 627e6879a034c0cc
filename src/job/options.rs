//! What a run is asked: the cube size, the target, how many solutions from which
//! variants of the problem, how many re-scans and rounds, where the journal goes, and the
//! stop flag. Whether a doubtful scan's best guess may be executed is the resolver's
//! `best_effort` (in [`super::Tools`]).
//!
//! Level: job. No printing.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::cube::Size;

use super::target::TargetSpec;

/// Options of a run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub size: Size,
    /// The target colouring, in the first scan's symbols; solved when `None`.
    pub target: Option<TargetSpec>,
    /// Solutions asked of the solver per symmetric variant.
    pub solutions: usize,
    /// Solve the 24 rotated variants of the problem too (and with `mirror` their mirror
    /// images); otherwise only the problem as posed.
    pub symmetries: bool,
    pub mirror: bool,
    pub inverse: bool,
    pub max_rescans: usize,
    /// Rounds of execute-and-check at most: when the check after executing finds the cube
    /// off the target, it is solved again from what the check saw (at least 1).
    pub max_rounds: usize,
    pub journal: PathBuf,
    /// Set (e.g. by Ctrl-C) to stop after the current action.
    pub stop: Arc<AtomicBool>,
    /// Set with `stop` by the live page's Stop button (and only by it): a stop is then
    /// said to be the page's rather than Ctrl-C's.
    pub page_stop: Option<Arc<AtomicBool>>,
    /// How the robot was connected, kept in the journal's start line (free-form; `Null`
    /// keeps nothing).
    pub connection: serde_json::Value,
}

impl RunOptions {
    /// The error of a stop the user asked for, saying whose it was.
    pub fn stopped(&self) -> super::RunError {
        super::RunError::Stopped {
            from_page: self
                .page_stop
                .as_ref()
                .is_some_and(|p| p.load(std::sync::atomic::Ordering::SeqCst)),
        }
    }
}
