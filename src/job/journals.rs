//! The journals a user has: every run's journal in the cache directory's `journals/`,
//! newest first, each with what became of its run (reached, not reached, stopped and
//! resumable, or unreadable), the one `run --resume latest` takes, and pruning old ones.
//!
//! A journal whose run did not end is never pruned unless asked for: it is the only record
//! of where a stopped robot's cube is.
//!
//! Level: job. Depends on [`super::journal`]; no printing.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::journal::{self, JournalRecord};

/// One journal file and what became of its run.
#[derive(Debug)]
pub struct JournalEntry {
    pub path: PathBuf,
    /// Last written.
    pub modified: SystemTime,
    /// The journal read back, or why it could not be (a run that stopped before anything
    /// turned has no record: [`journal::JournalError::NothingTurned`]).
    pub record: Result<JournalRecord, journal::JournalError>,
    /// Whether a process holds its lock: its run or a resume of it is under way now.
    pub in_use: bool,
}

/// What became of a journal's run, in a word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum JournalState {
    /// Being written now: its run, or a resume of it, is under way in another process.
    UnderWay,
    /// Ended at its target.
    Reached,
    /// Ended off its target (rounds spent, or a check in doubt).
    NotReached,
    /// Stopped while executing (Ctrl-C, a stall, a lost link): `run --resume` finishes it.
    Stopped,
    /// Neither ended nor stopped: the process was killed; `run --resume` finishes it.
    Unfinished,
    /// Stopped (or ended: a scan in doubt) before anything turned: nothing to finish.
    NothingTurned,
    /// Not a journal this program can read.
    Unreadable,
}

impl JournalState {
    /// Whether `run --resume` has something to finish.
    pub fn resumable(self) -> bool {
        matches!(self, JournalState::Stopped | JournalState::Unfinished)
    }

    /// The words `cubot journals` prints.
    pub fn words(self) -> &'static str {
        match self {
            JournalState::UnderWay => "under way now (another cubot holds it)",
            JournalState::Reached => "reached the target",
            JournalState::NotReached => "ended, NOT at the target",
            JournalState::Stopped => "stopped: resume it",
            JournalState::Unfinished => "cut off (process ended): resume it",
            JournalState::NothingTurned => "nothing turned: run again",
            JournalState::Unreadable => "unreadable",
        }
    }
}

impl JournalEntry {
    pub fn state(&self) -> JournalState {
        if self.in_use {
            return JournalState::UnderWay;
        }
        match &self.record {
            Err(journal::JournalError::NothingTurned { .. }) => JournalState::NothingTurned,
            Err(_) => JournalState::Unreadable,
            Ok(r) => match r.ended {
                Some(true) => JournalState::Reached,
                Some(false) => JournalState::NotReached,
                None if r.interrupted.is_some() => JournalState::Stopped,
                None => JournalState::Unfinished,
            },
        }
    }
}

/// Every `*.jsonl` file in `dir`, newest first (an absent directory holds none).
pub fn list(dir: &Path) -> std::io::Result<Vec<JournalEntry>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for e in entries {
        let e = e?;
        let path = e.path();
        if path.extension().and_then(|x| x.to_str()) != Some("jsonl") {
            continue;
        }
        let meta = e.metadata()?;
        if !meta.is_file() {
            continue;
        }
        out.push(JournalEntry {
            record: journal::read(&path),
            in_use: journal::in_use(&path),
            modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            path,
        });
    }
    out.sort_by(|a, b| b.modified.cmp(&a.modified).then(b.path.cmp(&a.path)));
    Ok(out)
}

/// The newest run's journal (unreadable files left out), for `run --resume latest`: it
/// takes only that run, whatever became of it. An older stopped run is not taken in its
/// stead: the newest run may have moved the cube (scanning turns it over) or put another
/// in the tray.
pub fn newest_run(dir: &Path) -> std::io::Result<Option<JournalEntry>> {
    Ok(list(dir)?
        .into_iter()
        .find(|e| e.state() != JournalState::Unreadable))
}

/// What a prune does with one journal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pruned {
    Removed,
    /// Among the newest `keep` and young enough.
    Kept,
    /// Old enough to go, but its run can still be resumed (and `unfinished_too` not given).
    KeptResumable,
    /// Old enough to go, but its run or a resume of it is under way now.
    KeptUnderWay,
}

/// What a prune does with each journal (as listed, newest first): it removes those beyond
/// the newest `keep` and (when given) those older than `older_than`; a resumable one only
/// when `unfinished_too`, and never one under way.
pub fn prune(
    entries: &[JournalEntry],
    keep: usize,
    older_than: Option<std::time::Duration>,
    unfinished_too: bool,
    now: SystemTime,
) -> Vec<Pruned> {
    entries
        .iter()
        .enumerate()
        .map(|(k, e)| {
            let old =
                older_than.is_some_and(|age| now.duration_since(e.modified).is_ok_and(|d| d > age));
            if k < keep && !old {
                Pruned::Kept
            } else if e.state() == JournalState::UnderWay {
                Pruned::KeptUnderWay
            } else if e.state().resumable() && !unfinished_too {
                Pruned::KeptResumable
            } else {
                Pruned::Removed
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn entry(age_days: u64) -> JournalEntry {
        JournalEntry {
            path: PathBuf::from(format!("run-{age_days}.jsonl")),
            modified: SystemTime::UNIX_EPOCH + Duration::from_secs(100 * 86400 - age_days * 86400),
            record: Err(journal::JournalError::Format {
                path: PathBuf::from("test"),
                line: 1,
                problem: journal::FormatProblem::Empty,
            }),
            in_use: false,
        }
    }

    #[test]
    fn prune_keeps_the_newest_and_spares_the_young() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(100 * 86400);
        let e: Vec<JournalEntry> = (0..5).map(|d| entry(d * 10)).collect();
        let removed = |p: Vec<Pruned>| -> Vec<usize> {
            (0..p.len()).filter(|&k| p[k] == Pruned::Removed).collect()
        };
        assert_eq!(removed(prune(&e, 3, None, false, now)), vec![3, 4]);
        assert_eq!(
            removed(prune(
                &e,
                10,
                Some(Duration::from_secs(15 * 86400)),
                false,
                now
            )),
            vec![2, 3, 4]
        );
        // One under way is never pruned, whatever its age or place.
        let mut e = e;
        e[4].in_use = true;
        let p = prune(&e, 3, None, true, now);
        assert_eq!(removed(p.clone()), vec![3]);
        assert_eq!(p[4], Pruned::KeptUnderWay);
    }

    #[test]
    fn a_journal_locked_by_a_run_is_in_use_and_free_once_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        std::fs::write(&path, "").unwrap();
        assert!(!journal::in_use(&path));
        let held = journal::lock(&path).unwrap();
        assert!(journal::in_use(&path));
        drop(held);
        assert!(!journal::in_use(&path));
        // The instant's look leaves the lock to a run that takes it.
        assert!(journal::lock(&path).is_ok());
    }
}
