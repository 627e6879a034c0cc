//! Reading states and files named on the command line: a literal, `@FILE` (its first
//! line) or `-` (standard input, one state a line).
//!
//! Level: `cli`, a leaf: depends on no other cli module and on nothing else in the crate.

use std::io::BufRead;

use anyhow::{Context, Result};

/// Where the states come from.
pub enum States {
    One(String),
    Stdin,
}

/// Interprets a STATE argument.
pub fn state_arg(arg: &str) -> Result<States> {
    if arg == "-" {
        return Ok(States::Stdin);
    }
    if let Some(path) = arg.strip_prefix('@') {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {path}"))?;
        let first = text.lines().next().unwrap_or("").trim().to_string();
        return Ok(States::One(first));
    }
    Ok(States::One(arg.to_string()))
}

/// Reads one argument that must be a single state (`-` not allowed).
pub fn single_state(arg: &str) -> Result<String> {
    match state_arg(arg)? {
        States::One(s) => Ok(s),
        States::Stdin => anyhow::bail!("'-' (read from stdin) is not allowed here"),
    }
}

/// Calls `f` for each state: once for a literal or `@FILE`, once per stdin line for `-`.
pub fn for_each_state(arg: &str, mut f: impl FnMut(&str) -> Result<bool>) -> Result<bool> {
    let mut all_ok = true;
    match state_arg(arg)? {
        States::One(s) => all_ok &= f(&s)?,
        States::Stdin => {
            for line in std::io::stdin().lock().lines() {
                let line = line.context("cannot read standard input")?;
                all_ok &= f(line.trim())?;
            }
        }
    }
    Ok(all_ok)
}
