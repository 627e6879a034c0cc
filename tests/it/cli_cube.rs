//! The cube subcommands through the built binary: stdout, `--json`, exit codes.

use crate::support::{cubot, cubot_stdin, stderr, stdout};

const SOLVED: &str = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB";

#[test]
fn validate_valid_and_invalid() {
    let o = cubot(&["validate", SOLVED]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o).trim(), "valid");

    let twisted = cubot(&["apply", "solved", "R U"]);
    let mut s: Vec<char> = stdout(&twisted).trim().chars().collect();
    s.swap(8, 9); // twist-like damage at URF
    let s: String = s.into_iter().collect();
    let o = cubot(&["validate", &s]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).starts_with("invalid: "));

    let o = cubot(&["--json", "validate", &s]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).expect("one JSON line");
    assert_eq!(v["type"], "validation");
    assert_eq!(v["valid"], false);
    assert!(!v["problems"].as_array().unwrap().is_empty());
    assert!(v["problems"][0]["message"].is_string());
}

/// `solved` is a legal state to validate as to show; a string of the wrong length is named
/// as such before its extra symbol is taken for a seventh colour.
#[test]
fn validate_takes_solved_and_names_a_wrong_length_first() {
    let o = cubot(&["validate", "solved"]);
    assert_eq!((o.status.code(), stdout(&o).trim()), (Some(0), "valid"));
    let o = cubot(&["--json", "validate", "solved", "--size", "2"]);
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).expect("one JSON line");
    assert_eq!(
        (v["valid"].as_bool(), v["size"].as_u64()),
        (Some(true), Some(2))
    );
    // The state as a facelet string, not the word given.
    assert_eq!(v["state"], "UUUURRRRFFFFDDDDLLLLBBBB");
    let o = cubot(&["validate", &format!("{SOLVED}X")]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stdout(&o).trim(),
        "malformed: a facelet string has 54 (3x3x3) or 24 (2x2x2) stickers, found 55"
    );
}

#[test]
fn validate_reads_stdin_one_answer_a_line() {
    // A line that is not a facelet string is malformed input: every line is answered, and
    // the exit is 2 (a readable but illegal state alone would give 1).
    // Blank lines and `#` comments are skipped as in a file, and a bad state is named by
    // its line.
    let input = format!("# states\n{SOLVED}\n\nnot a cube\n{SOLVED} # solved\n");
    let o = cubot_stdin(&["validate", "-"], &input);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o), "");
    let lines: Vec<String> = stdout(&o).lines().map(String::from).collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0], "valid");
    assert!(lines[1].starts_with("malformed (line 4): "), "{}", lines[1]);
    assert_eq!(lines[2], "valid");
    let o = cubot_stdin(&["--json", "validate", "-"], &input);
    let v: serde_json::Value = serde_json::from_str(stdout(&o).lines().nth(1).unwrap()).unwrap();
    assert_eq!(v["line"], 4);
    // Nothing on standard input is said, not a silent success.
    let o = cubot_stdin(&["validate", "-"], "# nothing\n\n");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("holds no state"), "{}", stderr(&o));
    let flipped = SOLVED
        .replacen("UUUUUUUU", "UUUUUUUF", 1)
        .replacen("FFFFFFF", "UFFFFFF", 1);
    let o = cubot_stdin(&["validate", "-"], &format!("{SOLVED}\n{flipped}\n"));
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
}

#[test]
fn validate_reads_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("state.txt");
    std::fs::write(&p, format!("# a comment\n{SOLVED}\n\n")).unwrap();
    let o = cubot(&["validate", &format!("@{}", p.display())]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "valid\n");
    // Every line is a state: none is ignored.
    std::fs::write(&p, format!("{SOLVED}\nnot a cube\n")).unwrap();
    let o = cubot(&["validate", &format!("@{}", p.display())]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stdout(&o).lines().count(), 2, "{}", stdout(&o));
    let o = cubot(&["validate", "@/nonexistent/file"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot read"));
}

#[test]
fn apply_invert_simplify() {
    let o = cubot(&["apply", "solved", "(R U R' U')6"]);
    assert_eq!(stdout(&o).trim(), SOLVED);
    let o = cubot(&["apply", "solved", "R U R' X"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("position 8: 'X' is not a move"),
        "{}",
        stderr(&o)
    );
    let o = cubot(&["invert", "R U' F2 (x M)2"]);
    assert_eq!(stdout(&o).trim(), "M' x' M' x' F2 U R'");
    let o = cubot(&["simplify", "R L R U U' L2 D2 D2"]);
    assert_eq!(stdout(&o).trim(), "R2 L'");
    let o = cubot(&["simplify", "--numeric", "R R R U2'"]);
    assert_eq!(stdout(&o).trim(), "R3 U2");
    let o = cubot(&["apply", "--size", "2", "solved", "M"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn apply_keeps_the_input_alphabet() {
    let wy = SOLVED
        .replace('U', "W")
        .replace('D', "Y")
        .replace('F', "G")
        .replace('L', "O");
    let o = cubot(&["apply", &wy, "U"]);
    let out = stdout(&o);
    assert!(out.trim().starts_with("WWWWWWWWWBBB"), "{out}");
}

#[test]
fn random_is_seeded_and_valid() {
    let a = stdout(&cubot(&["random", "--seed", "5", "--count", "3"]));
    let b = stdout(&cubot(&["random", "--seed", "5", "--count", "3"]));
    assert_eq!(a, b);
    assert_eq!(a.lines().count(), 3);
    let o = cubot_stdin(&["validate", "-"], &a);
    assert_eq!(o.status.code(), Some(0));
    let two = stdout(&cubot(&["random", "--size", "2", "--seed", "1"]));
    assert_eq!(two.trim().len(), 24);
}

#[test]
fn show_draws_the_net_and_svg() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("net.svg");
    let o = cubot(&["show", SOLVED, "--svg", svg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    assert!(text.contains("U U U"), "{text}");
    assert!(
        !text.contains('\x1b'),
        "no colours when stdout is not a terminal"
    );
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(svg_text.starts_with("<svg") && svg_text.matches("<rect").count() >= 55);
}

#[test]
fn usage_errors_exit_2() {
    let o = cubot(&["validate"]);
    assert_eq!(o.status.code(), Some(2));
    let o = cubot(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn sizes_are_checked_at_parse_time() {
    for cmd in [
        &["random", "--size", "4"][..],
        &["show", "solved", "--size", "1"],
        &["synth-scan", "--size", "5"],
    ] {
        let o = cubot(cmd);
        assert_eq!(o.status.code(), Some(2), "{cmd:?}");
        assert!(
            stderr(&o).contains("possible values: 3, 2"),
            "{cmd:?}: {}",
            stderr(&o)
        );
    }
    let o = cubot(&["show", "solved", "--size", "2", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("\"size\":2"), "{}", stdout(&o));
}

/// `cubot ARGS` run in an empty directory (no `samples/` next to it).
fn cubot_elsewhere(args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().expect("tempdir");
    std::process::Command::new(env!("CARGO_BIN_EXE_cubot"))
        .args(args)
        .current_dir(dir.path())
        .env("CUBOT_CACHE_DIR", crate::support::cache_dir())
        .output()
        .expect("run cubot")
}

#[test]
fn benchmark_defaults_come_from_the_working_directory() {
    let o = cubot_elsewhere(&["bench", "solve", "--no-peer", "--no-batch", "-q"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("samples/states/random-3x3x3-1000.txt") && err.contains("--states FILE"),
        "{err}"
    );
    let o = cubot_elsewhere(&["bench", "scan", "--renders", "0", "-q"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    if cfg!(feature = "vision") {
        assert!(err.contains("--images DIR"), "{err}");
    }
    // The help says where the defaults come from.
    let help = stdout(&cubot(&["bench", "solve", "--help"]));
    assert!(
        help.contains("samples/states/random-3x3x3-1000.txt"),
        "{help}"
    );
    assert!(!help.contains("../shared"), "{help}");
}

/// A state saved by `cubot save` (the format `run --target-file` reads), written by hand.
fn saved_state(state: &str) -> String {
    let colors: Vec<String> = ["U", "R", "F", "D", "L", "B"]
        .iter()
        .enumerate()
        .map(|(i, c)| format!("[\"{c}\", [{}.0, 0.0, 0.0]]", 10 * i + 20))
        .collect();
    format!(
        "{{\"version\": 1, \"saved\": \"2026-01-01T00:00:00Z\", \"size\": 3, \"state\": \"{state}\", \"colors\": [{}]}}",
        colors.join(", ")
    )
}

#[test]
fn at_file_takes_a_saved_state() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("saved.json");
    let scrambled = stdout(&cubot(&["apply", "solved", "R U F'"]))
        .trim()
        .to_string();
    std::fs::write(&p, saved_state(&scrambled)).unwrap();
    let at = format!("@{}", p.display());
    let o = cubot(&["validate", &at]);
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(0), "valid\n"));
    let o = cubot(&["solve", &at]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "F U' R'");
    let o = cubot(&["solve", SOLVED, "--target", &at]);
    assert_eq!(stdout(&o).trim(), "R U F'", "{}", stderr(&o));
    let o = cubot(&["show", &at]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    // JSON that is not a saved state: one message, exit 2.
    std::fs::write(&p, "{\"state\": 3}\n").unwrap();
    for cmd in ["validate", "solve", "show"] {
        let o = cubot(&[cmd, &at]);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", stdout(&o));
        assert_eq!(stdout(&o), "", "{cmd}");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{cmd}: {err}");
        assert!(
            err.contains("is JSON but not a state saved by `cubot save`"),
            "{cmd}: {err}"
        );
    }
    // A scan is named as a scan.
    std::fs::write(&p, "{\"size\": 3, \"facelets\": []}").unwrap();
    let o = cubot(&["solve", &at]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is a scan, not a states file"),
        "{}",
        stderr(&o)
    );
}

/// Malformed input (text that is not a facelet string, start and target in different
/// symbols) exits 2 in every cube command; a readable state that is not a legal cube is
/// the well-formed "no", 1.
#[test]
fn malformed_input_exits_2_an_illegal_cube_1() {
    let twisted = {
        let mut s: Vec<char> = SOLVED.chars().collect();
        // Corner URF turned in place: U sticker 8, R sticker 9, F sticker 20.
        (s[8], s[9], s[20]) = ('F', 'U', 'R');
        s.into_iter().collect::<String>()
    };
    let o = cubot(&["validate", &twisted]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let o = cubot(&["--json", "validate", "xyz"]);
    assert_eq!(o.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).expect("one JSON line");
    assert_eq!(v["problems"][0]["kind"], "unreadable");
    let o = cubot(&["solve", &twisted]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let cases: [&[&str]; 7] = [
        &["validate", "xyz"],
        &["solve", "xyz"],
        &["solve", SOLVED, "--target", "xyz"],
        &["show", "xyz"],
        &["apply", "xyz", "R"],
        &["invert", "R X"],
        &["simplify", "Q"],
    ];
    for args in cases {
        let o = cubot(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stdout(&o));
        let said = stdout(&o) + &stderr(&o);
        assert!(
            said.contains("54 (3x3x3) or 24 (2x2x2) stickers") || said.contains("is not a move"),
            "{args:?}: {said}"
        );
    }
    // Start and target in different symbols.
    let other = "WWWWWWWWWRRRRRRRRRGGGGGGGGGYYYYYYYYYOOOOOOOOOBBBBBBBBB";
    let o = cubot(&["solve", SOLVED, "--target", other]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("both must use the same six colour symbols"),
        "{}",
        stdout(&o)
    );
    // No states asked for is a usage error, not silence.
    let o = cubot(&["random", "--count", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--count"), "{}", stderr(&o));
}

#[test]
fn bad_usage_with_json_is_a_json_error_line_too() {
    for args in [
        &["--json", "validate"][..],
        &["--json", "valdate", "x"][..],
        &["solve", "--json", "--max-length", "x", "solved"][..],
    ] {
        let o = cubot(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let out = stdout(&o);
        let line: serde_json::Value = serde_json::from_str(out.trim())
            .unwrap_or_else(|e| panic!("{args:?}: not one JSON line ({e}): {out}"));
        assert_eq!(line["type"], "error", "{line}");
        let message = line["message"].as_str().unwrap();
        assert!(!message.is_empty() && !message.contains('\n'), "{line}");
        // The person reading stderr still gets clap's words.
        assert!(stderr(&o).starts_with("error: "), "{}", stderr(&o));
    }
    // Without --json stdout stays empty; help is no error.
    let o = cubot(&["validate"]);
    assert_eq!((o.status.code(), stdout(&o).is_empty()), (Some(2), true));
    assert_eq!(cubot(&["--help"]).status.code(), Some(0));
}

/// What is wrong with a state is said in words a user can act on: a mirrored corner's fault
/// in kebab-case (no Rust names), a move sequence given as a state pointed to `apply`, a
/// seventh colour placed.
#[test]
fn a_bad_state_is_said_in_words() {
    let mut s: Vec<char> = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"
        .chars()
        .collect();
    s.swap(9, 20); // R1 and F3: the URF corner's colours in mirror-image order
    let s: String = s.into_iter().collect();
    let o = cubot(&["--json", "validate", &s]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).expect("one JSON line");
    let faults: Vec<&str> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["fault"].as_str())
        .collect();
    assert!(faults.contains(&"mirrored"), "{v}");

    let o = cubot(&["solve", "R U R' U'"]);
    assert_eq!(o.status.code(), Some(2));
    let out = stdout(&o);
    assert!(
        out.contains(
            "\"'\" cannot be a sticker colour (a move sequence? `cubot apply solved MOVES`"
        ),
        "{out}"
    );

    let mut odd = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB".to_string();
    odd.replace_range(53..54, "X");
    let o = cubot(&["validate", &odd]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stdout(&o).contains("more than six colours: URFDLBX (\"X\" at B9)"),
        "{}",
        stdout(&o)
    );
}
