//! Integration tests: every input checked up front. Numbers that are not finite or not in
//! range, files that are not regular files or too large, bad robot configs, targets and
//! profiles refused before the robot moves, fake line robots each with their own message,
//! the printed resume command, and a small seeded fuzz of the parsers.

use crate::support::{cubot, stderr, stdout};

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
        // A negative number is the option's value, refused for its range.
        (
            &["resolve", scan, "--doubt", "-1"],
            "expected a finite number ≥ 0",
        ),
        (&["run", "--sim", "--speed", "-1"], "--speed <SPEED>"),
        // A count given below 0: said so, not as Rust's "invalid digit".
        (
            &["journals", "--prune", "--keep", "-1"],
            "invalid value '-1' for '--keep <KEEP>': give a whole number, 0 or more",
        ),
        (
            &["run", "--sim", "--max-rescans", "-2"],
            "'--max-rescans <MAX_RESCANS>': give a whole number, 0 or more",
        ),
        (
            &["random", "--count", "0"],
            "'--count <COUNT>': must be at least 1",
        ),
        (&["run", "--sim", "--speed", "1e9"], "--speed"),
        (&["run", "--sim", "--speed", "inf"], "--speed"),
        (&["sim", "--pty", "--speed", "0"], "--speed"),
        (&["sim", "--pty", "--latency", "1e308"], "--latency"),
        (&["sim", "--pty", "--latency", "nan"], "--latency"),
        (&["synth-scan", "--fade", "2"], "--fade"),
        (&["synth-scan", "--noise", "nan"], "--noise"),
        (&["synth-scan", "--exposure", "0"], "--exposure"),
        (&["synth-scan", "--count", "65536"], "--count"),
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

/// A scratch directory of this test process.
fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("inputs-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

#[test]
fn input_files_that_are_devices_or_too_large_are_refused_naming_file_kind_and_limit() {
    let dir = scratch("files");
    // Sparse: no bytes written, but 17 MiB long.
    let big = dir.join("big.json");
    std::fs::File::create(&big)
        .and_then(|f| f.set_len(17 << 20))
        .expect("sparse file");
    let big = big.to_str().expect("utf-8 path");
    let big_toml = dir.join("big.toml");
    std::fs::File::create(&big_toml)
        .and_then(|f| f.set_len(2 << 20))
        .expect("sparse file");
    let big_toml = big_toml.to_str().expect("utf-8 path");
    let scan = "samples/realdata/cases/ms-hard-to-solve-v1.json";
    let z = "/dev/zero";
    let device = "is a character device, not a regular file";
    let cases: Vec<(Vec<&str>, String)> = vec![
        (vec!["resolve", z], format!("scan {z} {device}")),
        (vec!["resolve", "/"], "scan / is a directory".into()),
        (
            vec!["resolve", big],
            format!("scan {big} is larger than the 16 MiB limit"),
        ),
        (
            vec!["calibrate", z, "-o", "/dev/null"],
            format!("scan {z} {device}"),
        ),
        (
            vec!["resolve", scan, "--profile", z],
            format!("profile {z} {device}"),
        ),
        (
            vec!["resolve", scan, "--profile", big_toml],
            format!("profile {big_toml} is larger than the 1 MiB limit"),
        ),
        (
            vec!["run", "--resume", z, "--sim"],
            format!("journal {z} {device}"),
        ),
        (
            vec!["run", "--resume", big, "--sim"],
            "16 MiB limit for a journal".into(),
        ),
        (
            vec!["run", "--sim", "--target-file", z],
            format!("target file {z} {device}"),
        ),
        (
            vec!["run", "--sim", "--robot-config", z],
            format!("robot configuration {z} {device}"),
        ),
        (
            vec!["scan", "--images", "samples", "--rig", z],
            format!("camera rig {z} {device}"),
        ),
        (
            vec!["solve", "@/dev/zero"],
            format!("states file {z} {device}"),
        ),
        (
            vec!["bench", "solve", "--states", z],
            format!("states file {z} {device}"),
        ),
    ];
    for (args, needle) in &cases {
        refused(args, needle);
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_endless_standard_input_is_refused_after_one_long_line() {
    for args in [&["solve", "-"][..], &["validate", "-"][..]] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_cubot"))
            .args(args)
            .env("CUBOT_CACHE_DIR", crate::support::cache_dir())
            .stdin(std::fs::File::open("/dev/zero").expect("/dev/zero"))
            .output()
            .expect("run cubot");
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("a line longer than 64 KiB"),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn a_robot_config_with_numbers_out_of_range_is_refused_before_the_robot_moves() {
    let dir = scratch("config");
    for (body, field) in [
        ("[timings]\ntilt = -5.0", "timings.tilt"),
        ("[timings]\ntilt = nan", "timings.tilt"),
        ("[timings]\nspin_half = 1e308", "timings.spin_half"),
        ("[timings]\nbogus = 1.0", "bogus"),
        ("[turntable]\nratio = inf", "turntable.ratio"),
    ] {
        let p = dir.join("mindcub3r.toml");
        std::fs::write(&p, format!("version = 1\n{body}\n")).expect("write config");
        let p = p.to_str().expect("utf-8 path");
        let o = cubot(&["run", "--sim", "--robot-config", p, "--json", "-q"]);
        assert_eq!(o.status.code(), Some(2), "{body}: {}", stderr(&o));
        assert!(stderr(&o).contains(field), "{body}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{body}: {}", stderr(&o));
        assert!(
            !crate::support::stdout(&o).contains("\"scan\""),
            "refused before scanning: {body}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A colour profile learned on a synthetic solved cube of `scale`, written in `dir`.
fn profile(dir: &std::path::Path, scale: &str) -> String {
    let scan = crate::support::cubot(&["synth-scan", "--state", "solved", "--scale", scale]);
    assert!(scan.status.success(), "{}", stderr(&scan));
    let s = dir.join(format!("solved-{scale}.json"));
    std::fs::write(&s, &scan.stdout).expect("write scan");
    let p = dir.join(format!("{scale}.toml"));
    let (s, p) = (s.to_str().expect("utf-8"), p.to_str().expect("utf-8"));
    let o = cubot(&["calibrate", s, "-o", p]);
    assert!(o.status.success(), "{}", stderr(&o));
    p.to_string()
}

/// `run ARGS --json -q` must exit 2 with `needle` on stderr and no scan on stdout.
fn refused_before_scanning(args: &[&str], needle: &str) {
    let mut all = args.to_vec();
    all.extend(["--json", "-q", "--speed", "5000"]);
    let o = cubot(&all);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    let out = crate::support::stdout(&o);
    assert!(!out.contains("\"scanned\""), "{args:?} scanned: {out}");
}

#[test]
fn bad_targets_and_profiles_of_the_wrong_scale_are_refused_before_the_robot_moves() {
    let dir = scratch("before");
    let rgb = profile(&dir, "rgb8");
    let ev3 = profile(&dir, "ev3-raw");
    let twisted = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBF";
    let bad_file = dir.join("target.txt");
    std::fs::write(&bad_file, "not a cube\n").expect("write target");
    let bad_file = bad_file.to_str().expect("utf-8");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["run", "--sim", "--target", "garbage"], "bad target"),
        (
            vec!["run", "--sim", "--size", "2", "--target", twisted],
            "a 3x3x3 target for a 2x2x2",
        ),
        (
            vec!["run", "--sim", "--target-file", bad_file],
            "bad target",
        ),
        (vec!["restore", bad_file, "--sim"], "bad target"),
        // Each names the command that learns a profile with the scanner at hand.
        (
            vec!["run", "--sim", "--profile", &rgb],
            "learned on scale rgb8 but the scanner reads ev3-raw: learn one with this scanner, `cubot calibrate -o FILE`",
        ),
        (
            vec!["run", "--sim", "--scanner", "camera", "--profile", &ev3],
            "learned on scale ev3-raw but the scanner reads rgb8: learn one with this scanner, `cubot calibrate --scanner camera -o FILE`",
        ),
        (
            vec!["save", "x.json", "--sim", "--profile", &rgb],
            "learned on scale rgb8",
        ),
        // The line robot says its scale in its handshake, before it moves.
        (
            vec!["run", "--sim", "--robot", "line", "--profile", &ev3],
            "`cubot calibrate --robot line -o FILE`",
        ),
    ];
    for (args, needle) in &cases {
        refused_before_scanning(args, needle);
    }
    // The profile is named by its flag and file.
    refused_before_scanning(
        &["run", "--sim", "--profile", &rgb],
        &format!("--profile {rgb}: the colour profile was learned on scale rgb8"),
    );
    // A readable target that is no legal cube is a well-formed "no" (exit 1) for `run` as
    // for `solve --target`, said the same way, before anything turns.
    let o = cubot(&["run", "--sim", "--target", twisted, "-q", "--speed", "5000"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("invalid target: "), "{}", stdout(&o));
    assert!(stderr(&o).contains("nothing turned"), "{}", stderr(&o));
    assert!(!stdout(&o).contains("scanned"), "{}", stdout(&o));
    let s = cubot(&["solve", "solved", "--target", twisted]);
    assert_eq!(s.status.code(), Some(1), "{}", stderr(&s));
    assert_eq!(stdout(&s), stdout(&o));
    std::fs::remove_dir_all(&dir).ok();
}

/// How a fake line robot on a pty answers.
#[derive(Clone, Copy)]
enum Fake {
    /// Reads every command, answers nothing.
    Silent,
    /// Answers every command with bytes that are not the protocol.
    Garbage,
    /// Answers the first command with one 10 MB line.
    Overlong,
}

/// A fake robot on a new pty: its slave path, the thread serving its master and the flag
/// that ends it.
type FakeRobot = (
    String,
    std::thread::JoinHandle<()>,
    std::sync::Arc<std::sync::atomic::AtomicBool>,
);

fn fake_robot(kind: Fake) -> FakeRobot {
    use nix::sys::termios;
    use std::io::{Read, Write};
    let pty = nix::pty::openpty(None, None).expect("openpty");
    for fd in [&pty.master, &pty.slave] {
        let mut t = termios::tcgetattr(fd).expect("tcgetattr");
        termios::cfmakeraw(&mut t);
        termios::tcsetattr(fd, termios::SetArg::TCSANOW, &t).expect("tcsetattr");
    }
    let path = nix::unistd::ttyname(&pty.slave).expect("ttyname");
    let path = path.to_str().expect("utf-8").to_string();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopped = stop.clone();
    let thread = std::thread::spawn(move || {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        use std::os::fd::AsFd;
        let _slave = pty.slave;
        let mut master = std::fs::File::from(pty.master);
        let mut buf = [0u8; 256];
        let mut answered = false;
        while !stopped.load(std::sync::atomic::Ordering::SeqCst) {
            let mut fds = [PollFd::new(master.as_fd(), PollFlags::POLLIN)];
            if poll(&mut fds, PollTimeout::from(50u16)).unwrap_or(0) == 0 {
                continue;
            }
            let Ok(n) = master.read(&mut buf) else { break };
            if n == 0 {
                break;
            }
            let sent = match kind {
                Fake::Silent => Ok(()),
                Fake::Garbage => master.write_all(b"\x00\xff\xfeAT+OK\r\n\x13\x37"),
                Fake::Overlong if !answered => {
                    answered = true;
                    // 10 MB in small writes, each only when the pty can take it: the
                    // host stops reading long before the end.
                    let chunk = [b'7'; 4096];
                    let mut left = 2560;
                    while left > 0 && !stopped.load(std::sync::atomic::Ordering::SeqCst) {
                        let mut fds = [PollFd::new(master.as_fd(), PollFlags::POLLOUT)];
                        if poll(&mut fds, PollTimeout::from(50u16)).unwrap_or(0) > 0 {
                            if master.write(&chunk).is_err() {
                                break;
                            }
                            left -= 1;
                        }
                    }
                    Ok(())
                }
                Fake::Overlong => Ok(()),
            };
            if sent.is_err() {
                break;
            }
        }
    });
    (path, thread, stop)
}

#[test]
fn fake_line_robots_that_are_silent_send_garbage_or_overlong_lines_each_get_their_own_message() {
    let cases = [
        (Fake::Silent, "the robot is silent"),
        (
            Fake::Garbage,
            "other bytes (wrong baud rate, or not a line robot?), starting \"\\x00\\xff\\xfeAT+OK",
        ),
        (
            Fake::Overlong,
            "a line longer than 4096 bytes after `CAPS`: refused (starting \"7777",
        ),
    ];
    let runs: Vec<_> = cases
        .iter()
        .map(|&(kind, needle)| {
            let (path, thread, stop) = fake_robot(kind);
            let child = std::thread::spawn(move || {
                cubot(&["run", "--port", &path, "--robot", "line", "-q"])
            });
            (needle, child, thread, stop)
        })
        .collect();
    for (needle, child, thread, stop) in runs {
        let o = child.join().expect("cubot thread");
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains(needle),
            "want {needle:?}: {}",
            stderr(&o)
        );
        if !needle.contains("silent") {
            assert!(!stderr(&o).contains("silent"), "{}", stderr(&o));
        }
        // Not joined: the thread ends at its next poll; the test need not wait for it.
        drop(thread);
    }
}

#[test]
fn the_printed_resume_command_names_the_connection_and_works_as_printed() {
    let dir = scratch("resume");
    let journal = dir.join("run.jsonl");
    let journal = journal.to_str().expect("utf-8");
    let o = cubot(&[
        "run",
        "--sim",
        "--robot",
        "line",
        "--faults",
        "silent@5",
        "--speed",
        "5000",
        "--seed",
        "3",
        "--journal",
        journal,
        "--search-ms",
        "200",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    let cmd = err
        .lines()
        .find_map(|l| l.strip_prefix("resume with: "))
        .unwrap_or_else(|| panic!("no resume command: {err}"));
    assert!(cmd.contains(" --sim") && cmd.contains("--seed 3"), "{cmd}");
    let words: Vec<&str> = cmd.split_whitespace().collect();
    assert_eq!(&words[..4], &["cubot", "run", "--resume", journal], "{cmd}");
    // Run exactly as printed (no quoting needed for this path): accepted, and it finishes.
    let mut args = words[1..].to_vec();
    args.push("-q");
    let r = cubot(&args);
    assert_eq!(r.status.code(), Some(0), "{cmd}: {}", stderr(&r));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_small_seeded_parser_fuzz_finds_no_panic_and_no_hang() {
    // The full run is `scripts/fuzz-cli.sh` (3,000 cases); this is a fast subset of it.
    if std::process::Command::new("python3")
        .arg("-V")
        .output()
        .is_err()
    {
        eprintln!("skipped: the fuzz script needs python3");
        return;
    }
    let o = std::process::Command::new("scripts/fuzz-cli.sh")
        .args(["40", "7"])
        .env("CUBOT", env!("CARGO_BIN_EXE_cubot"))
        .env("CUBOT_CACHE_DIR", crate::support::cache_dir())
        .output()
        .expect("run scripts/fuzz-cli.sh");
    let out = crate::support::stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(out.contains("panics: 0; hangs: 0"), "{out}");
}

#[test]
fn a_run_target_in_colour_letters_is_refused_before_the_robot_scans() {
    let o = cubot(&[
        "run",
        "--sim",
        "--target",
        "WWWWWWWWWRRRRRRRRRGGGGGGGGGYYYYYYYYYOOOOOOOOOBBBBBBBBB",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.starts_with("error: bad target:") && e.contains("URFDLB"),
        "{e}"
    );
    assert!(!e.contains("scanning"), "{e}");
}

#[test]
fn a_file_name_where_a_state_is_expected_is_told_to_write_at_file() {
    let o = cubot(&["validate", "nonexist.txt"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("to read a state from a file, write @nonexist.txt"),
        "{}",
        stderr(&o)
    );
    refused(
        &["run", "--sim", "--target", "saved.json"],
        "write @saved.json, or --target-file FILE for a saved target",
    );
    // A state that is merely wrong gets no such hint.
    let o = cubot(&["validate", "UUUU"]);
    assert!(!stderr(&o).contains("@"), "{}", stderr(&o));
}

#[test]
fn fault_typos_and_faults_of_the_other_robot_are_named() {
    refused(
        &["run", "--sim", "--faults", "stalll@60"],
        "unknown fault \"stalll\"",
    );
    refused(
        &["run", "--sim", "--faults", "foo@3"],
        "unknown fault \"foo\"",
    );
    refused(
        &["run", "--sim", "--robot", "line", "--faults", "swap=AC"],
        "swap is a MindCub3r fault; the line robot takes drop@N",
    );
    refused(
        &["run", "--sim", "--robot", "line", "--faults", "stalll@2"],
        "unknown fault \"stalll\" (the line robot takes",
    );
    refused(
        &["run", "--sim", "--faults", "battery=99999"],
        "a battery holds 1..=10000 millivolts",
    );
    refused(
        &["run", "--sim", "--solutions", "0"],
        "'--solutions <SOLUTIONS>': must be at least 1",
    );
}

#[test]
fn solve_takes_the_word_solved_as_validate_does() {
    let o = cubot(&["solve", "solved"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(crate::support::stdout(&o).trim(), "");
    assert!(stderr(&o).contains("already at the target: no moves"));
}

#[test]
fn a_resumed_run_refuses_the_flags_its_journal_decides() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j.jsonl");
    let j = j.to_str().unwrap();
    let fast = [
        "--speed",
        "5000",
        "--search-ms",
        "0",
        "--solutions",
        "3",
        "-q",
    ];
    let o = cubot(&[&["run", "--sim", "--seed", "5", "--journal", j][..], &fast].concat());
    assert!(o.status.code().is_some_and(|c| c < 2), "{}", stderr(&o));
    for (flag, value) in [
        ("--target", "solved"),
        ("--target-file", "t.json"),
        ("--robot", "line"),
        ("--size", "2"),
    ] {
        let o = cubot(&["run", "--resume", j, "--sim", flag, value]);
        assert_eq!(o.status.code(), Some(2), "{flag}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.starts_with(&format!("error: {flag} cannot change a journal's run")),
            "{e}"
        );
        assert!(
            e.contains(&format!("To resume it, leave out {flag}"))
                && e.contains("start a new run (without --resume)"),
            "{e}"
        );
    }
}

#[test]
fn a_run_that_ends_off_the_target_names_the_next_step() {
    let o = cubot(&[
        "run",
        "--sim",
        "--seed",
        "1003",
        "--faults",
        "tilt-fail@20",
        "--max-rounds",
        "1",
        "--speed",
        "5000",
        "--search-ms",
        "0",
        "--solutions",
        "3",
    ]);
    if o.status.code() == Some(1) {
        assert!(
            stderr(&o).contains("next: raise --max-rounds (a new `run --sim` simulates a new cube"),
            "{}",
            stderr(&o)
        );
    } else {
        assert!(!stderr(&o).contains("next: "), "{}", stderr(&o));
    }
}

/// A command that takes one state reads it from standard input with `-`, as the README
/// says a STATE can be; more than one state there is refused.
#[test]
fn one_state_can_come_from_standard_input() {
    let solved = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB";
    let o = super::support::cubot_stdin(&["show", "-"], &format!("# a comment\n{solved}\n"));
    assert_eq!(o.status.code(), Some(0), "{}", super::support::stderr(&o));
    let o = super::support::cubot_stdin(&["show", "-"], &format!("{solved}\n{solved}\n"));
    assert_eq!(o.status.code(), Some(2));
    assert!(super::support::stderr(&o).contains("holds 2 states"));
}

/// A colour profile that does not fit the cube in the robot (the shipped EV3 profile of a
/// standard cube against the simulator's): the run stops in doubt and says the profile is
/// what disagrees, after the re-reads alone (no whole scans made again for it).
#[test]
fn a_run_in_doubt_because_of_its_profile_says_so() {
    let o = cubot(&[
        "run",
        "--sim",
        "--seed",
        "14",
        "--speed",
        "100",
        "--profile",
        "calibration/ev3-standard.toml",
        "-q",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the readings alone and the colour profile say different cubes"),
        "{err}"
    );
    // Steady readings against the profile: said at once, not after minutes of re-reads.
    assert!(err.contains("is in doubt (not re-scanned)"), "{err}");
    assert!(err.contains("Run without --profile"), "{err}");
}

/// Inputs a solve needs are checked before its tables are built: a `--cache-dir` that is a
/// file is refused at once, and a malformed state is answered with no table built.
#[test]
fn solve_checks_its_state_and_cache_folder_before_building_tables() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let o = cubot(&["solve", "R U", "--cache-dir", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is a file, not a folder"),
        "{}",
        stderr(&o)
    );
    let cache = dir.path().join("cache");
    let o = cubot(&["solve", "R U", "--cache-dir", cache.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(super::support::stdout(&o).contains("found 2"), "{:?}", o);
    let built = std::fs::read_dir(&cache).map(|d| d.count()).unwrap_or(0);
    assert_eq!(built, 0, "tables were built for a malformed state");
}

/// A scan whose scale is none cubot knows is told so, with the scales there are.
#[test]
fn a_scan_of_an_unknown_scale_names_the_scales_there_are() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.json");
    std::fs::write(&f, r#"{"size": 3, "scale": "srgb", "facelets": []}"#).unwrap();
    refused(
        &["resolve", f.to_str().unwrap()],
        r#"the scan's "scale" is "srgb", which is not a scale cubot knows: it takes "rgb8""#,
    );
    let o = cubot(&["resolve", f.to_str().unwrap()]);
    assert!(!stderr(&o).contains("variant"), "{}", stderr(&o));
}

#[test]
fn solve_to_solved_takes_the_size_of_the_start() {
    let o = cubot(&["solve", "UFFFDDDULLRBFRDRLULURBBB", "--target", "solved"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let alg = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let back = cubot(&["apply", "UFFFDDDULLRBFRDRLULURBBB", &alg]);
    assert_eq!(
        String::from_utf8_lossy(&back.stdout).trim(),
        "UUUURRRRFFFFDDDDLLLLBBBB"
    );
}

#[test]
fn a_file_that_cannot_be_read_is_said_once_with_its_flag_and_in_words() {
    for (args, says) in [
        (
            &["run", "--sim", "--profile", "/tmp"][..],
            "error: colour profile /tmp is a directory, not a regular file (given with --profile)",
        ),
        (
            &["run", "--sim", "--robot-config", "/no/such.toml"],
            "error: cannot read robot configuration /no/such.toml (given with --robot-config): no such file",
        ),
        (
            &["resolve", "/no/such.json"],
            "error: cannot read scan /no/such.json: no such file",
        ),
    ] {
        let o = cubot(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = stderr(&o);
        assert!(
            err.starts_with(says) && !err.contains("os error"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_missing_usb_device_or_port_is_said_once_with_what_to_do() {
    let o = cubot(&["robot", "check", "--port", "usb:/dev/hidraw-none"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("--port usb:/dev/hidraw-none: no such USB device")
            && err.contains("cubot ports")
            && !err.contains("hidapi"),
        "{err}"
    );
    // No --port, no --sim, no brick on USB: what to give is said once.
    let o = cubot(&["run"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.matches("--sim").count(), 1, "{err}");
}

#[test]
fn an_empty_file_is_said_empty_and_a_bad_step_value_in_the_users_words() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("scan.json");
    std::fs::write(&empty, "\n").unwrap();
    let o = cubot(&["resolve", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("scan.json is empty"), "{}", stderr(&o));
    // Scans one a line: said so, with the way to take one.
    let many = dir.path().join("many.json");
    let o = cubot(&["synth-scan", "--count", "3"]);
    std::fs::write(&many, stdout(&o)).unwrap();
    let o = cubot(&["resolve", many.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("holds 3 scans, one a line") && stderr(&o).contains("sed -n 1p"),
        "{}",
        stderr(&o)
    );
    let o = cubot(&["robot", "turn", "x", "--sim"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("a spin or turn takes 1, -1, 2 or -2 quarter turns, not x"),
        "{}",
        stderr(&o)
    );
    // An address not this computer's for the live page (192.0.2.1 is for documentation).
    let o = cubot(&[
        "scan",
        "--robot",
        "--sim",
        "--view",
        "--view-addr",
        "192.0.2.1:8080",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("not one of this computer's (--view-addr 127.0.0.1:PORT"),
        "{}",
        stderr(&o)
    );
    // The place of a bad value is in a text made from the settings, not the user's: left out.
    let o = cubot(&["robot", "tilt", "--sim", "--set", "arm.hold=abc"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("arm.hold=abc: \"abc\" is not a number (a whole number is wanted here)")
            && !err.contains("line "),
        "{err}"
    );
}

/// A camera beside a real robot is not supported: said before any port is looked for.
#[test]
fn the_camera_scanner_without_the_simulator_is_refused_first() {
    for args in [
        &["calibrate", "-o", "never.toml", "--scanner", "camera"][..],
        &["run", "--port", "/dev/null", "--scanner", "camera"],
    ] {
        let o = cubot(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("--scanner camera works only with --sim")
                && !err.contains("--port")
                && !err.contains("/dev/null"),
            "{args:?}: {err}"
        );
    }
}
