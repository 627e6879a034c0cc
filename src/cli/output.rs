//! Output helpers: JSON Lines on stdout, terminal detection.
//!
//! Level: `cli`. Depends only on [`super::args::Global`]; every command prints through it.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a write to stdout found its reader gone (`cubot … | head`).
static STDOUT_GONE: AtomicBool = AtomicBool::new(false);
/// `-vv`: every EV3 command and reply logged in hex on stderr (a line robot's lines as
/// text).
static WIRE_LOG: AtomicBool = AtomicBool::new(false);

pub fn set_wire_log(on: bool) {
    WIRE_LOG.store(on, Ordering::Relaxed);
}

/// The EV3 wire log for a connection (`-vv`), if asked for.
pub fn wire_log() -> Option<fn(&str)> {
    fn log(line: &str) {
        if line.starts_with("line ") {
            errln!("{line}");
        } else {
            errln!("ev3: {line}");
        }
    }
    WIRE_LOG.load(Ordering::Relaxed).then_some(log as fn(&str))
}

/// The first write to stdout that failed other than on a closed pipe (a full disk, a
/// device that takes nothing): the command then ends with exit 2, saying so.
static STDOUT_FAILED: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Takes the result of a write to stdout: a closed pipe is remembered (see
/// [`stdout_gone`]), not raised (`cubot … | head` ends quietly); any other failure is
/// remembered for [`output_failure`].
pub fn note_write(r: std::io::Result<()>) {
    match r {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            STDOUT_GONE.store(true, Ordering::Relaxed);
        }
        Err(e) => {
            let mut failed = STDOUT_FAILED.lock().unwrap_or_else(|p| p.into_inner());
            failed.get_or_insert_with(|| e.to_string());
        }
    }
}

/// Why the command's output did not all reach stdout (after flushing what is left), if it
/// did not: the output is then incomplete, and the command must not say it succeeded.
pub fn output_failure() -> Option<String> {
    note_write(std::io::stdout().lock().flush());
    STDOUT_FAILED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
}

/// Whether stdout's reader has gone away, so that further output would be lost: a batch
/// stops early then.
pub fn stdout_gone() -> bool {
    STDOUT_GONE.load(Ordering::Relaxed)
}

/// Where results go: text or JSON Lines on stdout.
#[derive(Clone, Copy, Debug)]
pub struct Out {
    pub json: bool,
}

impl Out {
    pub fn new(g: &super::args::Global) -> Out {
        Out { json: g.json }
    }
}

/// Prints one JSON object as a line on stdout, its fractional numbers to
/// [`SIGNIFICANT`] digits (see [`readable`]).
pub fn json_line(value: &serde_json::Value) {
    let value = readable(value.clone());
    let mut stdout = std::io::stdout().lock();
    note_write(writeln!(stdout, "{value}"));
}

/// Significant digits of a fractional number in a JSON line: more than any measurement
/// here holds (a clock's milliseconds over hours, a colour's hundredths), fewer than the
/// sums of floats carry as noise (`51.46699999999998` is printed `51.467`).
pub const SIGNIFICANT: usize = 7;

/// `value` with every fractional number rounded to [`SIGNIFICANT`] digits; whole numbers,
/// and everything else, as they are.
pub fn readable(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Number(n) if n.is_f64() => {
            let x = n.as_f64().unwrap_or_default();
            let rounded: f64 = format!("{:.*e}", SIGNIFICANT - 1, x).parse().unwrap_or(x);
            serde_json::Number::from_f64(rounded)
                .map(Value::Number)
                .unwrap_or(Value::Number(n))
        }
        Value::Array(a) => Value::Array(a.into_iter().map(readable).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, readable(v))).collect()),
        other => other,
    }
}

/// Whether stdout is a terminal that should get colours (`NO_COLOR` turns them off).
pub fn color_stdout() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
}

/// Whether stderr may show progress bars.
pub fn progress_allowed(g: &super::args::Global) -> bool {
    !g.quiet && std::io::stderr().is_terminal()
}

/// The progress bar last drawn on stderr (see [`bar_shown`]).
static SHOWN_BAR: std::sync::Mutex<Option<indicatif::ProgressBar>> = std::sync::Mutex::new(None);

/// Notes that `b` is the progress bar on screen: a message on stderr ([`above_bar`]) clears
/// it first, and [`clear_bar`] takes it away before the command's last word.
pub fn bar_shown(b: &indicatif::ProgressBar) {
    if let Ok(mut shown) = SHOWN_BAR.lock() {
        *shown = Some(b.clone());
    }
}

/// Runs `say` (which writes a line on stderr) with the progress bar on screen, if any,
/// cleared, and draws the bar again below it: without this a message (`stopping: …` after
/// Ctrl-C) would start where the bar's line ends.
pub fn above_bar<T>(say: impl FnOnce() -> T) -> T {
    // Cloned out of the lock: the Ctrl-C handler's thread says things too.
    let bar = SHOWN_BAR
        .lock()
        .ok()
        .and_then(|b| b.clone())
        .filter(|b| !b.is_finished());
    match bar {
        Some(b) => b.suspend(say),
        None => say(),
    }
}

/// Takes the progress bar on screen away (a run stopped part-way leaves its bar unfinished).
pub fn clear_bar() {
    let bar = SHOWN_BAR.lock().ok().and_then(|mut b| b.take());
    if let Some(b) = bar.filter(|b| !b.is_finished()) {
        b.finish_and_clear();
    }
}

/// An error and its causes on one line, `outer: inner: ...`, leaving out a cause whose text
/// the message already holds (the library's errors name their source in their own text, so
/// `{:#}` would print it twice).
pub fn error_message(e: &anyhow::Error) -> String {
    let mut msg = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if text.is_empty() || msg.contains(&text) {
            continue;
        }
        if !msg.is_empty() {
            msg.push_str(": ");
        }
        msg.push_str(&text);
    }
    msg
}

/// `1 face turn`, `2 face turns`: a count with its noun in agreement.
pub fn plural(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::readable;
    use serde_json::json;

    #[test]
    fn json_numbers_drop_the_noise_of_float_sums_and_keep_their_digits() {
        let v = readable(json!({
            "a": 51.46699999999998, "b": [0.1 + 0.2, 1e-9 / 3.0], "c": 12, "d": 0.9999999,
            "e": -2.5, "f": "51.46699999999998",
        }));
        assert_eq!(
            v.to_string(),
            r#"{"a":51.467,"b":[0.3,3.333333e-10],"c":12,"d":0.9999999,"e":-2.5,"f":"51.46699999999998"}"#
        );
    }
}
