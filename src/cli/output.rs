//! Output helpers: JSON Lines on stdout, terminal detection.

use std::io::{IsTerminal, Write};

/// Where results go: text or JSON Lines on stdout.
#[derive(Clone, Copy, Debug)]
pub struct Out {
    pub json: bool,
}

impl Out {
    pub fn new(g: &super::Global) -> Out {
        Out { json: g.json }
    }
}

/// Prints one JSON object as a line on stdout.
pub fn json_line(value: &serde_json::Value) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{value}");
}

/// Whether stdout is a terminal that should get colours (`NO_COLOR` turns them off).
pub fn color_stdout() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
}

/// Whether stderr may show progress bars.
pub fn progress_allowed(g: &super::Global) -> bool {
    !g.quiet && std::io::stderr().is_terminal()
}
