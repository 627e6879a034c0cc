//! `cubot journals`: the run journals in the cache directory, newest first, each with what
//! became of its run; `--prune` removes old ones (never one that can still be resumed
//! unless told). And the directory and `latest` lookup `run --resume latest` uses.
//!
//! Level: `cli`. Depends on `job::journals` and [`super::common`].

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context, Result};
use serde_json::json;

use super::common::cache_dir;
use super::output::{json_line, plural};
use super::{CmdResult, Exit, Global};
use crate::job::journal;
use crate::job::journals::{self, JournalEntry, Pruned};

#[derive(clap::Args, Debug)]
pub struct JournalsArgs {
    /// Remove old journals: those beyond the newest --keep, and those older than
    /// --older-than; one whose run can still be resumed only with --unfinished-too.
    #[arg(long)]
    pub prune: bool,
    /// With --prune: how many of the newest journals to keep.
    #[arg(long, default_value_t = 20, requires = "prune")]
    pub keep: usize,
    /// With --prune: also remove journals last written more than DAYS days ago.
    #[arg(long, value_name = "DAYS", requires = "prune")]
    pub older_than: Option<u64>,
    /// With --prune: remove journals of stopped runs too (they say where a stopped
    /// robot's cube is: resume them first).
    #[arg(long, requires = "prune")]
    pub unfinished_too: bool,
}

/// Where runs keep their journals: the cache directory's `journals/`.
pub fn journal_dir(g: &Global) -> PathBuf {
    cache_dir(g)
        .unwrap_or_else(std::env::temp_dir)
        .join("journals")
}

/// `run --resume latest`: the newest run's journal, taken as if named by its file (a
/// finished run is checked again, one stopped before it turned says so). An older stopped
/// run is never taken in its stead: the newest may have moved the cube.
pub fn latest(g: &Global) -> Result<PathBuf> {
    let dir = journal_dir(g);
    match journals::newest_run(&dir).with_context(|| format!("cannot list {}", dir.display()))? {
        Some(e) => Ok(e.path),
        None => bail!(
            "--resume latest: no journal in {} yet (`cubot run` writes one per run)",
            dir.display()
        ),
    }
}

/// A journal named on the command line: the path as given when it is there, else a bare
/// file name (as `cubot journals` lists them) in the journals folder.
pub fn named(g: &Global, p: &Path) -> PathBuf {
    if p.exists() || p.components().count() != 1 {
        return p.to_path_buf();
    }
    let listed = journal_dir(g).join(p);
    if listed.is_file() {
        listed
    } else {
        p.to_path_buf()
    }
}

/// A stop's reason in a few words, for a listing: its first clause (up to the first
/// colon, semicolon or bracket) of more than one word (not a lone `robot:`), at most 60
/// characters.
pub fn gist(reason: &str) -> String {
    let mut rest = reason;
    let clause = loop {
        let end = rest.find([':', ';', '(']).unwrap_or(rest.len());
        let clause = rest[..end].trim();
        if clause.contains(' ') || end == rest.len() {
            break clause;
        }
        rest = &rest[end + 1..];
    };
    match clause.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &clause[..i]),
        None => clause.to_string(),
    }
}

/// `2026-11-27 09:50 UTC`.
fn when(t: SystemTime) -> String {
    date_time(t)
        .and_then(|d| {
            d.format(time::macros::format_description!(
                "[year]-[month]-[day] [hour]:[minute] UTC"
            ))
            .ok()
        })
        .unwrap_or_else(|| "?".into())
}

/// A file's time as `--json` gives it: RFC 3339, UTC, to the second.
fn when_json(t: SystemTime) -> Option<String> {
    date_time(t).and_then(|d| {
        d.format(&time::format_description::well_known::Rfc3339)
            .ok()
    })
}

fn date_time(t: SystemTime) -> Option<time::OffsetDateTime> {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    time::OffsetDateTime::from_unix_timestamp(secs).ok()
}

/// What a journal's run was: robot, size and the robot actions it confirmed of its plan
/// (and in all, once a resume or a later round planned again).
fn what(e: &JournalEntry) -> String {
    match &e.record {
        Ok(r) if r.plan_len == 0 && r.resumes > 0 => format!(
            "{} {}, {} in all; its latest resume had nothing to turn",
            r.start.robot,
            r.start.size,
            plural(r.steps, "action")
        ),
        Ok(r) if r.resumes > 0 || r.round > 1 => format!(
            "{} {}, {} of {} of its latest plan, {} in all",
            r.start.robot,
            r.start.size,
            r.plan_done,
            plural(r.plan_len, "action"),
            plural(r.steps, "action")
        ),
        // Stopped between the scan and the first action: nothing turned, yet worth resuming.
        Ok(r) if r.steps == 0 && r.in_flight.is_empty() && r.plan_len > 0 && r.ended.is_none() => {
            format!(
                "{} {}, scanned, 0 of {} (a resume keeps the scan)",
                r.start.robot,
                r.start.size,
                plural(r.plan_len, "action")
            )
        }
        Ok(r) => format!(
            "{} {}, {} of {}",
            r.start.robot,
            r.start.size,
            r.plan_done,
            plural(r.plan_len, "action")
        ),
        Err(journal::JournalError::NothingTurned { begun, reason, .. }) => match reason {
            Some(why) => format!("{} {}: {}", begun.robot, begun.size, gist(why)),
            None => format!("{} {}", begun.robot, begun.size),
        },
        Err(why) => why.to_string(),
    }
}

pub fn journals(a: JournalsArgs, g: &Global) -> CmdResult {
    let dir = journal_dir(g);
    let entries = journals::list(&dir).with_context(|| format!("cannot list {}", dir.display()))?;
    if a.prune {
        let plan = journals::prune(
            &entries,
            a.keep,
            a.older_than.map(|d| Duration::from_secs(d * 86_400)),
            a.unfinished_too,
            SystemTime::now(),
        );
        let count = |what: Pruned| plan.iter().filter(|&&p| p == what).count();
        for (e, _) in entries
            .iter()
            .zip(&plan)
            .filter(|(_, &p)| p == Pruned::Removed)
        {
            std::fs::remove_file(&e.path)
                .with_context(|| format!("cannot remove {}", e.path.display()))?;
        }
        let removed = count(Pruned::Removed);
        let (kept, resumable, under_way) = (
            count(Pruned::Kept),
            count(Pruned::KeptResumable),
            count(Pruned::KeptUnderWay),
        );
        if g.json {
            json_line(&json!({"type": "pruned", "removed": removed,
                "kept": entries.len() - removed, "kept_resumable": resumable,
                "kept_under_way": under_way, "dir": dir}));
        } else {
            let mut why = Vec::new();
            if kept > 0 || resumable + under_way == 0 {
                why.push(match a.older_than {
                    None => format!("{kept} newest kept"),
                    Some(d) => format!(
                        "{kept} kept: among the {} newest and not older than {}",
                        a.keep,
                        plural(d as usize, "day")
                    ),
                });
            }
            if resumable > 0 {
                why.push(format!(
                    "{} kept: {} can still be resumed",
                    plural(resumable, "stopped run"),
                    if resumable == 1 { "it" } else { "they" }
                ));
            }
            if under_way > 0 {
                why.push(format!("{} kept: under way now", plural(under_way, "run")));
            }
            outln!(
                "removed {removed} of {} in {} ({})",
                plural(entries.len(), "journal"),
                dir.display(),
                why.join("; ")
            );
        }
        return Ok(Exit::Ok);
    }
    if entries.is_empty() && !g.json {
        errln!(
            "no journals in {} yet: `cubot run` writes one per run",
            dir.display()
        );
    }
    // Each entry's words once; columns as wide as their widest entry.
    let words: Vec<(&str, String)> = entries
        .iter()
        .map(|e| (e.state().words(), what(e)))
        .collect();
    let widths = words.iter().fold((0, 0), |(s, w), (state, what)| {
        (s.max(state.chars().count()), w.max(what.chars().count()))
    });
    for (e, (state_words, what)) in entries.iter().zip(&words) {
        let state = e.state();
        if g.json {
            let mut line = json!({
                "type": "journal", "path": e.path, "modified": when_json(e.modified),
                "state": state, "resumable": state.resumable(),
            });
            if let Ok(r) = &e.record {
                line["robot"] = json!(r.start.robot);
                line["size"] = json!(r.start.size.to_string());
                line["actions"] = json!(r.plan_done);
                line["plan_actions"] = json!(r.plan_len);
                line["actions_in_all"] = json!(r.steps);
                line["reason"] = json!(r.interrupted);
            }
            if let Err(journal::JournalError::NothingTurned { begun, reason, .. }) = &e.record {
                line["robot"] = json!(begun.robot);
                line["size"] = json!(begun.size.to_string());
                line["reason"] = json!(reason);
            }
            json_line(&line);
        } else {
            outln!(
                "{}  {:<sw$}  {:<ww$}  {}",
                when(e.modified),
                state_words,
                what,
                e.path.display(),
                sw = widths.0,
                ww = widths.1,
            );
        }
    }
    Ok(Exit::Ok)
}
