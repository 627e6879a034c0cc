//! Integration tests: every input checked up front. Numbers that are not finite or not in
//! range, files that are not regular files or too large, bad robot configs, targets and
//! profiles refused before the robot moves, fake line robots each with their own message,
//! the printed resume command, and a small seeded fuzz of the parsers.

use crate::support::{cubot, stderr};

/// Exit 2, and stderr names `needle`.
fn refused(args: &[&str], needle: &str) {
    let o = cubot(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
}

#[test]
fn numeric_flags_that_are_not_finite_or_in_range_are_refused_at_parse_time() {
    let scan = "samples/realdata/cases/missing.json";
    let cases: &[(&[&str], &str)] = &[
        (&["resolve", scan, "--doubt", "nan"], "--doubt"),
        (&["resolve", scan, "--doubt=-1"], "--doubt"),
        (&["run", "--sim", "--speed", "1e9"], "--speed"),
        (&["run", "--sim", "--speed", "inf"], "--speed"),
        (&["sim", "--pty", "--speed", "0"], "--speed"),
        (&["sim", "--pty", "--latency", "1e308"], "--latency"),
        (&["sim", "--pty", "--latency", "nan"], "--latency"),
        (&["synth-scan", "--fade", "2"], "--fade"),
        (&["synth-scan", "--noise", "nan"], "--noise"),
        (&["synth-scan", "--exposure", "0"], "--exposure"),
        (
            &["solve", "solved", "--timeout", "99999999999999"],
            "--timeout",
        ),
        (
            &["run", "--sim", "--search-ms", "18446744073709551615"],
            "--search-ms",
        ),
        (&["bench", "resolve", "--doubt", "inf"], "--doubt"),
        (&["bench", "scan", "--occlusion", "1.5"], "--occlusion"),
    ];
    for (args, flag) in cases {
        refused(args, flag);
    }
}
