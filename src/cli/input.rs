//! Reading states and files named on the command line: a literal, `@FILE` or `-` (standard
//! input, one state a line). A file (`@FILE`, and `run --target-file`) holds either a state
//! saved by `cubot save` (JSON) or states one a line (blank lines and `#` comments skipped);
//! [`read_state_file`] is the one reader of both.
//!
//! Level: `cli`, a leaf: depends on no other cli module (but the outcome types of [`super`]); reads files through
//! [`crate::input`] (a regular file, size-capped) and saved states through [`crate::job`].

use std::io::{BufRead, Read};

use std::path::Path;

use anyhow::Result;

use super::{Answer, CmdResult};
use crate::input::{read_text, FileKind};
use crate::job::{parse_saved, SavedState, TargetError};

/// Where the states come from.
pub enum States {
    One(String),
    /// `@FILE`: its states, in order, each with its line number (the file's name kept for
    /// messages).
    File(String, Vec<(usize, String)>),
    Stdin,
}

/// A line of states (a file's or standard input's) without its `#` comment and blanks;
/// `None` for a line that holds no state.
pub fn state_of_line(line: &str) -> Option<&str> {
    Some(line.split('#').next().unwrap_or("").trim()).filter(|l| !l.is_empty())
}

/// The states of a file's text: one a line, blank lines and `#` comments skipped.
pub fn file_states(text: &str) -> Vec<String> {
    numbered_states(text).into_iter().map(|(_, s)| s).collect()
}

/// [`file_states`] with each state's line number (from 1), for messages about one of them.
pub fn numbered_states(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, l)| state_of_line(l).map(|s| (i + 1, s.to_string())))
        .collect()
}

/// What a file of states holds.
pub enum StateFile {
    /// A state saved by `cubot save` (its colours' Lab values kept).
    Saved(SavedState),
    /// States, one a line, at least one, each with its line number.
    Lines(Vec<(usize, String)>),
}

/// Reads a file of states (`kind`: [`FileKind::States`] for `@FILE`, [`FileKind::Target`]
/// for `--target-file`): JSON must be a saved state; anything else is states one a line. A
/// file that is another kind (a scan, a journal, a profile) is refused naming its flag.
pub fn read_state_file(path: &Path, kind: FileKind) -> Result<StateFile> {
    let text = read_text(path, kind)?;
    let head = text.trim_start();
    if head.starts_with('{') || head.starts_with('[') {
        return match parse_saved(path, &text) {
            Ok(saved) => Ok(StateFile::Saved(saved)),
            Err(TargetError::NotSaved { source, .. }) => anyhow::bail!(
                "{} is JSON but not a state saved by `cubot save` ({source}); a file of states holds one saved state, or facelet strings one a line",
                path.display()
            ),
            Err(e) => Err(e.into()),
        };
    }
    let states = numbered_states(&text);
    if states.is_empty() {
        anyhow::bail!(
            "{} holds no state (blank lines and # comments only)",
            path.display()
        );
    }
    Ok(StateFile::Lines(states))
}

/// For a STATE argument that did not read as a state but looks like a file's name (it has
/// a `/` or a `.`, or names an existing file): how to read a state from that file.
pub fn file_hint(arg: &str) -> Option<String> {
    let arg = arg.trim();
    let looks = arg.contains('/') || arg.contains('.') || Path::new(arg).is_file();
    (looks && !arg.is_empty() && !arg.starts_with('@'))
        .then(|| format!("to read a state from a file, write @{arg}"))
}

/// Interprets a STATE argument.
pub fn state_arg(arg: &str) -> Result<States> {
    if arg == "-" {
        return Ok(States::Stdin);
    }
    if let Some(path) = arg.strip_prefix('@') {
        let states = match read_state_file(Path::new(path), FileKind::States)? {
            StateFile::Saved(saved) => vec![(1, saved.state)],
            StateFile::Lines(states) => states,
        };
        return Ok(States::File(path.to_string(), states));
    }
    Ok(States::One(arg.to_string()))
}

/// The commands that take several states, said where one was wanted.
const SEVERAL: &str = "`solve`, `validate` and `apply` take several, as @FILE or `-`";

/// Reads one argument that must be a single state (`-`: standard input holding one state;
/// `@FILE` of one state).
pub fn single_state(arg: &str) -> Result<String> {
    match state_arg(arg)? {
        States::One(s) => Ok(s),
        States::File(_, mut v) if v.len() == 1 => Ok(v.remove(0).1),
        States::File(path, v) => anyhow::bail!(
            "{path} holds {} states, one a line; this command takes one ({SEVERAL})",
            v.len()
        ),
        States::Stdin => {
            let mut states = Vec::new();
            for line in stdin_lines() {
                if let Some(t) = state_of_line(&line?) {
                    states.push(t.to_string());
                }
            }
            match states.len() {
                1 => Ok(states.remove(0)),
                0 => anyhow::bail!("standard input ('-') holds no state"),
                n => anyhow::bail!(
                    "standard input ('-') holds {n} states, one a line; this command takes one ({SEVERAL})"
                ),
            }
        }
    }
}

/// Longest line read from standard input (a state or a move sequence is far shorter).
pub const MAX_STDIN_LINE: u64 = 64 << 10;

/// The lines of standard input, each at most [`MAX_STDIN_LINE`] bytes: a longer line (or an
/// endless stream with no newline) is an error after that many bytes, not a growing buffer.
pub fn stdin_lines() -> impl Iterator<Item = Result<String>> {
    let mut input = std::io::stdin().lock();
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let mut buf = Vec::new();
        let r = (&mut input)
            .take(MAX_STDIN_LINE + 1)
            .read_until(b'\n', &mut buf);
        match r {
            Err(e) => {
                done = true;
                Some(Err(
                    anyhow::Error::from(e).context("cannot read standard input")
                ))
            }
            Ok(0) => None,
            Ok(_) if buf.len() as u64 > MAX_STDIN_LINE => {
                done = true;
                Some(Err(anyhow::anyhow!(
                    "standard input: a line longer than {} KiB",
                    MAX_STDIN_LINE >> 10
                )))
            }
            Ok(_) => match String::from_utf8(buf) {
                Ok(s) => Some(Ok(s.trim_end_matches(['\n', '\r']).to_string())),
                Err(_) => {
                    done = true;
                    Some(Err(anyhow::anyhow!("standard input is not UTF-8 text")))
                }
            },
        }
    })
}

/// Calls `f` for each state: once for a literal, once per state line of `@FILE` or of
/// stdin for `-` (blank lines and `#` comments skipped, as in a file), with the state's
/// line number where it came from a line; the outcome is the gravest of its answers.
pub fn for_each_state(
    arg: &str,
    mut f: impl FnMut(Option<usize>, &str) -> Result<Answer>,
) -> CmdResult {
    let mut all = Answer::Yes;
    match state_arg(arg)? {
        States::One(s) => all = all.and(f(None, &s)?),
        States::File(_, states) => {
            for (n, s) in states {
                all = all.and(f(Some(n), &s)?);
            }
        }
        States::Stdin => {
            let mut any = false;
            for (i, line) in stdin_lines().enumerate() {
                if let Some(s) = state_of_line(&line?) {
                    any = true;
                    all = all.and(f(Some(i + 1), s)?);
                }
            }
            if !any {
                anyhow::bail!("standard input ('-') holds no state (blank lines and # comments only, or nothing)");
            }
        }
    }
    all.exit()
}

/// How an answer about one state of several names it: " (line 3)", nothing for a state
/// given on the command line.
pub fn at_line(line: Option<usize>) -> String {
    line.map(|n| format!(" (line {n})")).unwrap_or_default()
}
