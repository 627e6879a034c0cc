//! What the audit reports: the broken rules, which side broke them, and what went past.
//!
//! Level: robot (part of the wire audit; no I/O).

use std::collections::BTreeMap;
use std::fmt;

/// Which side sent a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Host,
    Brick,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Host => "host",
            Side::Brick => "brick",
        })
    }
}

/// One broken rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Frames seen from that side before this one (0 = the first).
    pub frame: usize,
    pub side: Side,
    /// The rule's name, as in the module docs' table.
    pub rule: &'static str,
    pub detail: String,
    /// The frame, in hex.
    pub bytes: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} frame {}: [{}] {} ({})",
            self.side, self.frame, self.rule, self.detail, self.bytes
        )
    }
}

/// What went past, counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditStats {
    pub commands: usize,
    pub no_reply_commands: usize,
    pub replies: usize,
    pub error_replies: usize,
    /// Bytes of the largest command sent, length field included (a message is at most
    /// 1024).
    pub largest_command: usize,
    /// Operations sent, by name.
    pub ops: BTreeMap<&'static str, usize>,
}
