//! What a newcomer met on the simulator, one test each, through the built binary where a
//! user sees it: the step commands that serve calibration, the checks before work, the
//! messages in the user's words, and the journals.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::support::{cache_dir, cubot, cubot_stdin, root, stderr, stdout};

fn both(o: &std::process::Output) -> String {
    format!("{}{}", stdout(o), stderr(o))
}

// 1. The step commands serve calibration.

#[test]
fn robot_read_reads_where_it_is_told_and_a_session_keeps_its_place() {
    let edge = cubot(&["robot", "--sim", "read", "edge", "2"]);
    assert_eq!(edge.status.code(), Some(0), "{}", stderr(&edge));
    assert!(
        stdout(&edge).contains("(RGB-RAW, sensor edge 2 at -655°)"),
        "{}",
        stdout(&edge)
    );
    let centre = cubot(&["robot", "--sim", "read"]);
    assert!(
        stdout(&centre).contains("sensor centre at -750°"),
        "{}",
        stdout(&centre)
    );
    let counts = |o: &std::process::Output| stdout(o).split("  ").next().unwrap().to_string();
    assert_ne!(
        counts(&edge),
        counts(&centre),
        "the edge sticker is not the centre one"
    );
    // A corner is read with the table turned 45°, as the scan reads it: on this cube the
    // corner sticker there is another colour than the edge sticker under the square table.
    let corner = cubot(&["robot", "--sim", "read", "corner", "1"]);
    assert_eq!(corner.status.code(), Some(0), "{}", stderr(&corner));
    let edge1 = cubot(&["robot", "--sim", "read", "edge", "1"]);
    assert_ne!(counts(&corner), counts(&edge1), "the corner reads the edge");
    // A session: one connection, the sensor left where the last step put it; `set` tries
    // an angle, `show` prints it for the file.
    let steps = "sensor corner 3\nread\nset sensor_arm.corner=[-595,-600,-610,-590]\nsensor corner 3\nread\nshow\nspin 5\nquit\ntilt\n";
    let o = cubot_stdin(&["robot", "--sim", "session"], steps);
    let out = stdout(&o);
    assert!(out.contains("sensor corner 3 at -600°"), "{out}");
    assert!(out.contains("sensor corner 3 at -610°"), "{out}");
    assert!(
        out.contains("sensor_arm.corner = [-595, -600, -610, -590]"),
        "{out}"
    );
    assert!(!out.contains("done: tilt"), "quit ends the session: {out}");
    assert!(
        stderr(&o).contains("line 7: a spin or turn takes 1, -1, 2 or -2 quarter turns, not 5"),
        "{}",
        stderr(&o)
    );
    assert_eq!(o.status.code(), Some(2), "a line it could not do: exit 2");
    // `show` names what --set changed too: it differs from the file.
    let o = cubot_stdin(
        &[
            "robot",
            "--sim",
            "--set",
            "sensor_arm.edge=[-600,-600,-600,-600]",
            "session",
        ],
        "sensor edge 2\nshow\nread corner 3\n",
    );
    assert!(
        stdout(&o).contains("sensor_arm.edge = [-600, -600, -600, -600]"),
        "{}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains("sensor corner 3 at -600°"),
        "{}",
        stdout(&o)
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // --set is checked as the file is, before anything moves.
    for (bad, says) in [
        ("arm.hodl=100", "[arm] has no key \"hodl\""),
        ("arm.speed=300", "expected a whole number"),
        ("turntable.sign=2", "turntable.sign must be 1 or -1"),
        (
            "arm.hold=1000",
            "arm.hold (1000) must be below arm.tilt_apex (190)",
        ),
    ] {
        let o = cubot(&["robot", "--sim", "--set", bad, "tilt"]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(stderr(&o).contains(says), "{bad}: {}", stderr(&o));
    }
}

#[test]
fn step_commands_name_what_they_did_in_the_users_words() {
    for (args, done) in [
        (&["tilt"][..], "done: tilt"),
        (&["spin", "-1"], "done: spin -1"),
        (&["sensor", "centre"], "done: sensor centre"),
        (&["arm", "hold"], "done: arm hold"),
    ] {
        let mut a = vec!["robot", "--sim"];
        a.extend(args);
        let o = cubot(&a);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stdout(&o).trim(), done);
    }
    let o = cubot(&["robot", "--sim", "spin", "1", "--json"]);
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["done"], "spin 1");
}

#[test]
fn robot_check_on_the_simulator_has_the_tray_empty_as_it_asks() {
    let o = cubot(&["robot", "check", "--sim"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("over the empty turntable"),
        "{}",
        stdout(&o)
    );
    assert!(!stdout(&o).contains("bright"), "{}", stdout(&o));
}

// 2. An unbounded search gets a bound; qtm's default length answers.

#[test]
fn solve_in_qtm_answers_at_its_default_length() {
    let state = stdout(&cubot(&["random", "--seed", "3"]))
        .trim()
        .to_string();
    let o = cubot(&["solve", &state, "--metric", "qtm", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).lines().next().unwrap()).unwrap();
    assert!(v["length"].as_u64().unwrap() <= 26, "{v}");
    assert!(!stderr(&o).contains("may be shorter"), "{}", stderr(&o));
}

// 4. Files to write are checked before the work.

#[test]
fn calibrate_timings_write_is_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    // Outside a checkout: no file to write unless --robot-config names one.
    let o = Command::new(env!("CARGO_BIN_EXE_cubot"))
        .args(["robot", "--sim", "calibrate-timings", "--write"])
        .current_dir(dir.path())
        .env("CUBOT_CACHE_DIR", cache_dir())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("give --robot-config FILE")
            && stderr(&o).contains("nothing was measured"),
        "{}",
        stderr(&o)
    );
    // In the checkout: the shipped file only with --force.
    let o = Command::new(env!("CARGO_BIN_EXE_cubot"))
        .args(["robot", "--sim", "calibrate-timings", "--write"])
        .current_dir(root())
        .env("CUBOT_CACHE_DIR", cache_dir())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("the configuration shipped with cubot")
            && stderr(&o).contains("--force"),
        "{}",
        stderr(&o)
    );
    // A directory that is not there.
    let o = cubot(&[
        "robot",
        "--sim",
        "calibrate-timings",
        "--write",
        "--robot-config",
        "/nonexistent/r.toml",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("does not exist"), "{}", stderr(&o));
    // --speed: the timings are measured at speed 1, so a given --speed is refused, not
    // ignored (even at its default).
    for args in [
        &["robot", "--sim", "calibrate-timings", "--speed", "20"][..],
        &["robot", "--sim", "--speed", "5", "calibrate-timings"],
    ] {
        let o = cubot(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).contains("measures at the robot's real speed")
                && stderr(&o).contains("nothing was measured"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "refused only after {:?}",
        t.elapsed()
    );
}

#[test]
fn outputs_are_checked_before_the_robot_moves() {
    for args in [
        &["save", "/nonexistent/s.json", "--sim"][..],
        &["calibrate", "-o", "/nonexistent/p.toml", "--sim"],
        &[
            "scan",
            "--robot",
            "--sim",
            "--raw-out",
            "/nonexistent/r.json",
        ],
        &["run", "--sim", "--journal", "/nonexistent/j.jsonl"],
    ] {
        let o = cubot(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).contains("does not exist (nothing was done)"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    let o = cubot(&[
        "calibrate",
        "-o",
        root().join("calibration/standard.toml").to_str().unwrap(),
        "--sim",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("a profile shipped with cubot")
            && stderr(&o).contains("nothing was scanned"),
        "{}",
        stderr(&o)
    );
    // From a scan file nothing is scanned anyway: the message says nothing was learned.
    let dir = tempfile::tempdir().unwrap();
    let scan = dir.path().join("scan.json");
    let o = cubot(&["synth-scan", "--state", "solved"]);
    std::fs::write(&scan, stdout(&o)).unwrap();
    let o = cubot(&[
        "calibrate",
        scan.to_str().unwrap(),
        "-o",
        root().join("calibration/standard.toml").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("a profile shipped with cubot")
            && stderr(&o).contains("nothing was learned or written")
            && !stderr(&o).contains("scanned"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn help_lists_every_exit_code() {
    let o = cubot(&["--help"]);
    let help = stdout(&o);
    let codes = help
        .split("Exit codes:")
        .nth(1)
        .expect("an exit-code paragraph");
    let codes = codes.split_whitespace().collect::<Vec<_>>().join(" ");
    for code in [
        "0 ok",
        "1 a well-formed",
        "2 operational error",
        "130 Ctrl-C",
    ] {
        assert!(codes.contains(code), "{code}: {codes}");
    }
}

// 5. scan --robot runs on the simulator, with a palette.

#[test]
fn scan_robot_and_robot_scan_run_on_the_simulator() {
    let o = cubot(&["scan", "--robot", "--sim", "--seed", "4"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let cube = stdout(&o).trim().to_string();
    assert_eq!(cube.len(), 54);
    assert!(cube.chars().all(|c| "URFDLB".contains(c)), "{cube}");
    let o = cubot(&["robot", "--sim", "--palette", "fluorescent", "scan"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The simulator's options without --sim are refused, naming them.
    let o = cubot(&[
        "run",
        "--port",
        "/dev/null",
        "--speed",
        "3",
        "--faults",
        "covered",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--faults, --speed set the simulator: add --sim"),
        "{}",
        stderr(&o)
    );
}

// 6. and 7. The sensor that sees no cube, and the battery, before the work.

#[test]
fn run_says_at_once_when_the_sensor_sees_no_cube() {
    for fault in ["covered", "empty"] {
        let o = cubot(&["run", "--sim", "--speed", "200", "--faults", fault]);
        assert_eq!(o.status.code(), Some(2), "{fault}: {}", both(&o));
        let err = stderr(&o);
        assert!(
            err.contains("the scan sees no cube: every reading is dark"),
            "{fault}: {err}"
        );
        assert!(err.contains("nothing was turned"), "{fault}: {err}");
        assert!(
            !err.contains("re-scan") && !err.contains("solved:"),
            "{fault}: {err}"
        );
    }
}

#[test]
fn run_checks_the_battery_before_the_first_motion() {
    let o = cubot(&["run", "--sim", "--speed", "200", "--faults", "battery=6100"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("battery is flat (6.10 V, under 6.2 V)")
            && stderr(&o).contains("nothing moved"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("scanning"), "{}", stderr(&o));
    let o = cubot(&[
        "run",
        "--sim",
        "--speed",
        "200",
        "--faults",
        "battery=6400",
        "--search-ms",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("warning: the brick's battery is low (6.40 V)"),
        "{}",
        stderr(&o)
    );
}

/// The commands that scan or step the robot check the battery as `run` does.
#[test]
fn scans_and_single_steps_check_the_battery_before_they_move() {
    for cmd in [
        &["robot", "scan"][..],
        &["robot", "tilt"],
        &["robot", "spin", "1"],
        &["scan", "--robot"],
    ] {
        let o = cubot(&[cmd, &["--sim", "--faults", "battery=5000"]].concat());
        assert_eq!(o.status.code(), Some(2), "{cmd:?}");
        let err = stderr(&o);
        assert!(
            err.contains("battery is flat (5.00 V, under 6.2 V)") && err.contains("nothing moved"),
            "{cmd:?}: {err}"
        );
        assert!(
            !err.contains("scanning") && stdout(&o).is_empty(),
            "{cmd:?}: {err}"
        );
    }
    let o = cubot(&["robot", "tilt", "--sim", "--faults", "battery=6300"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("warning: the brick's battery is low (6.30 V)"),
        "{}",
        stderr(&o)
    );
}

/// A robot scan of an empty tray says so and what to do, not where a cube that is not
/// there sits.
#[test]
fn a_robot_scan_of_an_empty_tray_says_no_layer_turned_and_what_to_do() {
    for cmd in [&["robot", "scan"][..], &["scan", "--robot"]] {
        let o = cubot(&[cmd, &["--sim", "--faults", "empty"]].concat());
        assert_eq!(o.status.code(), Some(2), "{cmd:?}");
        let err = stderr(&o);
        assert!(
            err.contains("the scan sees no cube")
                && err.contains("no layer turned")
                && err.contains("put the cube in the tray")
                && !err.contains("named as the cube was put in"),
            "{cmd:?}: {err}"
        );
    }
}

// 8. A doubt says what its sticker list is, and the list is that.

#[test]
fn a_doubts_stickers_are_where_its_rivals_differ_from_the_best() {
    let scan = "samples/realdata/cases/rcr-3x3x3-random-02-v2017.json";
    let path = root().join(scan);
    let o = cubot(&["resolve", path.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let doubt: serde_json::Value = stdout(&o)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["type"] == "doubt")
        .expect("a doubt line");
    let best: Vec<char> = doubt["best"].as_str().unwrap().chars().collect();
    let mut differ: Vec<u64> = Vec::new();
    for r in doubt["rivals"].as_array().unwrap() {
        for (i, c) in r.as_str().unwrap().chars().enumerate() {
            if c != best[i] && !differ.contains(&(i as u64)) {
                differ.push(i as u64);
            }
        }
    }
    differ.sort_unstable();
    // The rivals come closest first: the `rival` line is the first of them.
    let rival = stdout(&o)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["type"] == "rival")
        .expect("a rival line");
    assert_eq!(rival["cube"], doubt["rivals"][0], "{doubt}");
    let named: Vec<u64> = doubt["doubtful_indices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(named, differ);
    let text = stdout(&cubot(&["resolve", path.to_str().unwrap()]));
    assert!(
        text.contains(&format!(
            "are where the {} rival legal cubes within --doubt differ from the best",
            doubt["rivals"].as_array().unwrap().len()
        )),
        "{text}"
    );
}

// 9. @FILE: every state, comments and blank lines skipped.

#[test]
fn at_file_reads_every_state_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("states.txt");
    let solved = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB";
    let flipped = stdout(&cubot(&["apply", solved, "R U R' U'"]))
        .trim()
        .to_string();
    std::fs::write(
        &f,
        format!("# two states\n{solved}\n\n{flipped}   # a sexy move\n"),
    )
    .unwrap();
    let arg = format!("@{}", f.display());
    let o = cubot(&["validate", &arg]);
    assert_eq!(stdout(&o), "valid\nvalid\n", "{}", stderr(&o));
    let o = cubot(&["solve", &arg]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o).lines().count(), 2, "{}", stdout(&o));
    let o = cubot(&["show", &arg]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("holds 2 states"), "{}", stderr(&o));
}

// 10. The serial port's speed is a flag.

#[test]
fn the_baud_rate_is_a_flag_checked_at_parse_time() {
    let o = cubot(&["run", "--help"]);
    assert!(
        stdout(&o).contains("--baud <BAUD>") && stdout(&o).contains("[default: 115200]"),
        "{}",
        stdout(&o)
    );
    let o = cubot(&["run", "--sim", "--baud", "12"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--baud"), "{}", stderr(&o));
}

// 11. bench run says what it waits for and times in robot time.

#[test]
fn bench_run_says_what_it_waits_for_in_robot_time() {
    let o = cubot(&[
        "bench",
        "run",
        "--runs",
        "1",
        "--latencies",
        "0",
        "--speed",
        "50",
        "--search-ms",
        "0",
        "--jobs",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(
        err.starts_with("bench run: 1 run of the whole job on simulated robots at speed 50 (each about 2 s of wall time), 1 at a time"),
        "{err}"
    );
    assert!(
        out.contains(
            "whole wait, 1 seeded run per latency (seeds 1..1), simulator at speed 50, 1 at a time;"
        ),
        "{out}"
    );
    assert!(err.contains("run 1/1 (seed 1, 0 ms): reached"), "{err}");
    assert!(
        out.contains("seconds of robot time (wall time × 50)"),
        "{out}"
    );
}

// 12. A 2x2x2 is written in face letters.

#[test]
fn a_2x2x2_run_prints_face_letters() {
    let o = cubot(&[
        "run",
        "--sim",
        "--size",
        "2",
        "--speed",
        "200",
        "--search-ms",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let scanned = stderr(&o)
        .lines()
        .find_map(|l| {
            l.strip_prefix("scanned: ")
                .map(|s| s.split(' ').next().unwrap().to_string())
        })
        .expect("a scanned line");
    assert_eq!(scanned.len(), 24);
    assert!(scanned.chars().all(|c| "URFDLB".contains(c)), "{scanned}");
    assert!(
        stdout(&o).contains("final state  UUUURRRRFFFFDDDDLLLLBBBB"),
        "{}",
        stdout(&o)
    );
    // One vocabulary: counts agree with their nouns, robot time is named.
    let err = stderr(&o);
    // The count is the solver's shortest candidate; the plan may be another (cheaper for
    // the robot, or shorter from the robot-cost search): the message says which is which.
    assert!(
        err.contains("candidate solutions from the solver, the shortest of them")
            && err.contains("not always the fewest turns"),
        "{err}"
    );
    assert!(err.contains("s of robot time"), "{err}");
    assert!(
        stdout(&o).contains("s measured (on the simulator's clock"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn one_candidate_solution_is_not_called_the_shortest_of_them() {
    let o = cubot(&[
        "run",
        "--sim",
        "--size",
        "2",
        "--speed",
        "200",
        "--search-ms",
        "0",
        "--solutions",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let err = stderr(&o);
    let line = err
        .lines()
        .find(|l| l.starts_with("solved: "))
        .expect("a solved line");
    assert!(
        line.starts_with("solved: 1 candidate solution from the solver, ")
            && line.ends_with("; the plan turns it")
            && !line.contains("of them"),
        "{line}"
    );
}

// The messages that left a newcomer stuck.

#[test]
fn a_file_given_as_port_is_refused_with_the_flag_it_belongs_to() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("saved.json");
    std::fs::write(&saved, "{}\n").unwrap();
    let o = cubot(&["run", "--port", saved.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("is a file, not a port") && err.contains("--target-file"),
        "{err}"
    );
    assert!(!err.contains("typewriter"), "{err}");
    // A device that is no terminal is no port either, for a job and for a bare brick.
    for args in [
        &["run", "--port", "/dev/null"][..],
        &["run", "--robot", "line", "--port", "/dev/null"],
        &["robot", "--port", "/dev/null", "home"],
    ] {
        let o = cubot(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = stderr(&o);
        assert!(
            err.contains("--port /dev/null: is not a serial port") && err.contains("`cubot ports`"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("typewriter"), "{args:?}: {err}");
    }
}

/// A scan of no cube (one grey surface, an empty tray) says so with exit 2 on every command
/// that resolves one, `--best-effort` included, rather than naming stickers to re-scan.
#[test]
fn a_scan_of_one_surface_is_no_cube_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let grey = dir.path().join("grey.json");
    let facelets: Vec<[u8; 3]> = (0..54).map(|i| [126 + (i % 5) as u8; 3]).collect();
    std::fs::write(
        &grey,
        serde_json::json!({"size": 3, "facelets": facelets}).to_string(),
    )
    .unwrap();
    let g = grey.to_str().unwrap();
    for args in [
        &["resolve", g][..],
        &["resolve", g, "--best-effort"],
        &[
            "scan",
            "--robot",
            "--sim",
            "--faults",
            "empty",
            "--best-effort",
        ],
        &["robot", "scan", "--sim", "--faults", "empty"],
    ] {
        let o = cubot(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("the scan sees no cube"), "{args:?}: {err}");
        assert!(stdout(&o).trim().is_empty(), "{args:?}: {}", stdout(&o));
    }
}

/// `cubot view JOURNAL` with no such journal says so before it serves anything.
#[test]
fn view_of_a_missing_journal_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nonexist.jsonl");
    for arg in [missing.to_str().unwrap(), "run-0-0.jsonl"] {
        let o = Command::new(env!("CARGO_BIN_EXE_cubot"))
            .args(["view", arg, "--cache-dir"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{arg}: {}", stderr(&o));
        assert!(stderr(&o).contains("no such journal"), "{}", stderr(&o));
    }
}

/// A brick choice that would be ignored is refused before anything starts: for a real
/// robot (it brings its own brick), for the line robot (no EV3 brick), and a firmware build
/// folder given for cubot's own brick.
#[test]
fn a_brick_choice_that_would_be_ignored_is_refused() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["run", "--port", "/dev/null", "--brick", "lms2012"],
            "add --sim",
        ),
        (&["robot", "check", "--brick", "lms2012"], "add --sim"),
        (
            &["run", "--sim", "--robot", "line", "--brick", "lms2012"],
            "the line robot has none",
        ),
        (
            &["sim", "--pty", "--robot", "line", "--lms2012", "x"],
            "the line robot has none",
        ),
        (&["run", "--sim", "--lms2012", "x"], "add --brick lms2012"),
    ];
    for (args, says) in cases {
        let o = cubot(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn a_photo_given_to_resolve_points_to_scan_images() {
    let png = root().join("samples/images/lego-webcam-320x240/3x3x3-random-01/rubiks-side-U.png");
    let o = cubot(&["resolve", png.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("it is a PNG image") && stderr(&o).contains("cubot scan --images DIR"),
        "{}",
        stderr(&o)
    );
    // A photo larger than a profile may be is said to be a photo all the same.
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.png");
    let mut bytes = std::fs::read(&png).unwrap();
    bytes.resize(2 << 20, 0);
    std::fs::write(&big, bytes).unwrap();
    let o = cubot(&["run", "--sim", "--profile", big.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("it is a PNG image"), "{}", stderr(&o));
    // Another kind of text file given as a journal is said not to be one.
    let readme = root().join("README.md");
    let o = cubot(&["run", "--resume", readme.to_str().unwrap(), "--sim"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("this is not a run journal"),
        "{}",
        stderr(&o)
    );
}

#[cfg(feature = "vision")]
#[test]
fn a_repeated_photo_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let src = root().join("samples/images/lego-webcam-320x240/3x3x3-random-01");
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.path().join(e.file_name())).unwrap();
    }
    std::fs::copy(
        src.join("rubiks-side-F.png"),
        dir.path().join("rubiks-side-R.png"),
    )
    .unwrap();
    let o = cubot(&["scan", "--images", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("faces R (") && stderr(&o).contains("look alike, sticker for sticker"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_silent_robot_gets_the_hint_to_check_the_robot_kind() {
    use cubot::robot::sim::line::{spawn_pty, LineSimConfig};
    let sim = spawn_pty(LineSimConfig::default()).unwrap();
    let o = cubot(&[
        "run",
        "--port",
        sim.path().to_str().unwrap(),
        "--search-ms",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("A line-protocol robot needs --robot line"),
        "{}",
        stderr(&o)
    );
}

/// A brick that answered and then fell silent (here while homing) is not told it may be
/// another kind of robot: the message says how many commands it answered before.
#[test]
fn a_brick_that_falls_silent_after_answering_is_not_taken_for_another_robot() {
    use cubot::robot::sim::{spawn_pty, SimConfig};
    let sim = spawn_pty(SimConfig {
        speed: 50.0,
        faults: "silent@p3".parse().unwrap(),
        ..Default::default()
    })
    .unwrap();
    let o = cubot(&["run", "--port", sim.path().to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("did not answer within"), "{err}");
    assert!(err.contains(", though it had answered "), "{err}");
    assert!(!err.contains("needs --robot line"), "{err}");
}

/// A line robot's text sent to a simulated MindCub3r (a wrong `--robot`) does not leave
/// the brick deaf: the next command with the right robot is answered.
#[test]
fn a_wrong_robot_kind_does_not_leave_the_simulated_brick_deaf() {
    use cubot::robot::sim::{spawn_pty, SimConfig};
    let sim = spawn_pty(SimConfig {
        speed: 50.0,
        ..Default::default()
    })
    .unwrap();
    let port = sim.path().to_str().unwrap();
    let o = cubot(&["run", "--robot", "line", "--port", port, "--search-ms", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = cubot(&["robot", "check", "--port", port]);
    assert_ne!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!stderr(&o).contains("did not answer"), "{}", stderr(&o));
}

/// `cubot run --sim` at speed 1 with stderr piped: the lines it prints, as they come.
fn run_lines(extra: &[&str]) -> (std::process::Child, std::sync::mpsc::Receiver<String>) {
    let mut args = vec!["run", "--sim", "--speed", "1"];
    args.extend(extra);
    lines_of(&args, None)
}

/// `cubot ARGS` (in `dir` if given) with stderr piped: the lines it prints, as they come.
fn lines_of(
    args: &[&str],
    dir: Option<&std::path::Path>,
) -> (std::process::Child, std::sync::mpsc::Receiver<String>) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cubot"));
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    let mut child = cmd
        .args(args)
        .env("CUBOT_CACHE_DIR", cache_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(err).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

fn wait_for(rx: &std::sync::mpsc::Receiver<String>, what: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut seen = Vec::new();
    while let Ok(l) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        let hit = l.contains(what);
        seen.push(l);
        if hit {
            return seen;
        }
    }
    panic!("no line with {what:?}; saw {seen:?}");
}

fn interrupt(child: &std::process::Child) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
}

#[test]
fn ctrl_c_during_the_scan_says_nothing_turned_and_a_second_one_names_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("j.jsonl");
    let (mut child, rx) = run_lines(&["--journal", journal.to_str().unwrap()]);
    wait_for(&rx, "scanning:");
    interrupt(&child);
    let seen = wait_for(&rx, "stopped (Ctrl-C)");
    assert_eq!(child.wait().unwrap().code(), Some(2));
    let last = seen.last().unwrap();
    // The user's own stop is the run's account, not an error.
    assert!(
        last.starts_with("stopped (Ctrl-C) before any layer turned")
            && last.contains("run the same command again"),
        "{seen:?}"
    );

    let (mut child, rx) = run_lines(&["--journal", journal.to_str().unwrap()]);
    wait_for(&rx, "scanning:");
    interrupt(&child);
    wait_for(&rx, "stopping:");
    interrupt(&child);
    let seen = wait_for(&rx, "second Ctrl-C");
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert!(
        seen.last()
            .unwrap()
            .contains("nothing was turned yet: run again"),
        "{seen:?}"
    );
}

/// Every `--json` line has a type: synth-scan's scans (still read as scans), and camera
/// list ends with a count, 0 included, so that no cameras is not silence.
#[test]
fn json_lines_of_synth_scan_and_camera_list_have_a_type() {
    let o = cubot(&["--json", "synth-scan", "--count", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<String> = stdout(&o).lines().map(String::from).collect();
    assert_eq!(lines.len(), 2);
    let dir = tempfile::tempdir().unwrap();
    for l in &lines {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["type"], "scan", "{l}");
        let f = dir.path().join("s.json");
        std::fs::write(&f, l).unwrap();
        let r = cubot(&["resolve", f.to_str().unwrap()]);
        assert!(r.status.success(), "{}", stderr(&r));
    }
    let o = cubot(&["--json", "camera", "list"]);
    if o.status.success() {
        let v: Vec<serde_json::Value> = stdout(&o)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(v.iter().all(|v| v["type"].is_string()), "{v:?}");
        let last = v.last().expect("a summary line");
        assert_eq!(last["type"], "cameras");
        assert_eq!(last["count"].as_u64(), Some(v.len() as u64 - 1));
    }
}

/// Motors on swapped ports stop a run at connect with the fix `robot check` gives.
#[test]
fn swapped_motor_cables_stop_a_run_with_the_fix() {
    let o = cubot(&["run", "--sim", "--faults", "swap=AC"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    for part in [
        "port A holds a medium motor; MindCub3r expects the large motor of the tilt arm there",
        "swap the cables of port A and port C (or set ports.arm = \"C\"",
        "nothing moved (`cubot robot check` checks the whole robot)",
    ] {
        assert!(e.contains(part), "{part:?} in {e}");
    }
}

/// A Ctrl-C in a command that only scans says that no layer turned, nothing was written,
/// and what to do next.
#[test]
fn ctrl_c_in_a_scan_only_command_says_nothing_turned_nor_written_and_what_next() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["calibrate", "--sim", "--speed", "1", "-o", "x.toml"][..],
        &["save", "s.json", "--sim", "--speed", "1"],
        &[
            "robot",
            "--sim",
            "--speed",
            "1",
            "scan",
            "--raw-out",
            "r.json",
        ],
    ] {
        let (mut child, rx) = lines_of(args, Some(dir.path()));
        wait_for(&rx, "scanning");
        interrupt(&child);
        let seen = wait_for(&rx, "stopped (Ctrl-C)");
        assert_eq!(child.wait().unwrap().code(), Some(2), "{args:?}");
        let last = seen.last().unwrap();
        for part in [
            "stopped (Ctrl-C) before the scan ended; motors stopped",
            "no layer turned",
            "nothing was written",
            "run the same command again",
        ] {
            assert!(last.contains(part), "{args:?}: {part:?} in {seen:?}");
        }
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{args:?} wrote {left:?}");
    }
}

/// The journal of a simulated run (seed 43) stopped by a stall after it turned layers.
fn stopped_run_journal(dir: &std::path::Path) -> std::path::PathBuf {
    let journal = dir.join("j.jsonl");
    let o = cubot(&[
        "run",
        "--sim",
        "--seed",
        "43",
        "--speed",
        "200",
        "--faults",
        "stall@p40",
        "--journal",
        journal.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    journal
}

/// A Ctrl-C while a resume homes or reads its stickers turns no layer: it says so, leaves
/// the journal as it was, and names the resume command with the journal's simulator.
#[test]
fn ctrl_c_before_a_resume_turns_says_the_journal_still_holds_and_how_to_resume() {
    let dir = tempfile::tempdir().unwrap();
    let journal = stopped_run_journal(dir.path());
    let j = journal.to_str().unwrap();
    let before = std::fs::read(&journal).unwrap();
    let (mut child, rx) = lines_of(&["run", "--resume", j, "--sim", "--speed", "1"], None);
    wait_for(&rx, "simulator: --seed 43");
    std::thread::sleep(Duration::from_millis(300));
    interrupt(&child);
    let seen = wait_for(&rx, "stopped (Ctrl-C)");
    assert_eq!(child.wait().unwrap().code(), Some(2));
    assert!(!seen.iter().any(|l| l.starts_with("resume:")), "{seen:?}");
    let last = seen.last().unwrap();
    for part in [
        "stopped (Ctrl-C) before this resume turned a layer; motors stopped",
        "resume with: cubot run --resume",
        "--sim --seed 43",
    ] {
        assert!(last.contains(part), "{part:?} in {seen:?}");
    }
    assert_eq!(std::fs::read(&journal).unwrap(), before);
    // Resumed without --sim: the journal's run was simulated, and the message says so.
    let o = cubot(&["run", "--resume", j]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("run was on the simulator: resume it with --sim")
            && stderr(&o).contains("nothing moved"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&journal).unwrap(), before);
}

/// A turntable jammed while the run scans (or while a resume reads its stickers) stops it
/// before any layer turned: it says so, and what goes on: the same command again, or the
/// resume with the journal left as it was.
#[test]
fn a_jam_before_any_layer_turned_says_so_and_what_goes_on() {
    let o = cubot(&["run", "--sim", "--speed", "200", "--faults", "jammed=B"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    for part in [
        "motors stopped; no layer turned; a motor was held: see that nothing blocks the turntable or the arms",
        "the cube is as it was, perhaps turned whole in the tray: run the same command again",
    ] {
        assert!(err.contains(part), "{part:?} in {err}");
    }
    assert!(!err.contains("before you run again"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let journal = stopped_run_journal(dir.path());
    let j = journal.to_str().unwrap();
    let before = std::fs::read(&journal).unwrap();
    let o = cubot(&[
        "run", "--resume", j, "--sim", "--speed", "200", "--faults", "jammed=B",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    for part in [
        "motors stopped; this resume turned no layer",
        "the cube is where the journal",
        "resume with: cubot run --resume",
        "--sim --seed 43",
    ] {
        assert!(err.contains(part), "{part:?} in {err}");
    }
    assert_eq!(std::fs::read(&journal).unwrap(), before);
}

/// Two resumes of one journal at once would mix their records: the second is refused
/// before it moves anything, and the journal is left to the first.
#[test]
fn a_second_resume_of_a_journal_in_use_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let journal = stopped_run_journal(dir.path());
    let j = journal.to_str().unwrap();
    let (mut first, rx) = lines_of(&["run", "--resume", j, "--sim", "--speed", "1"], None);
    wait_for(&rx, "simulator: --seed 43");
    let lines = std::fs::read_to_string(&journal).unwrap().lines().count();
    let o = cubot(&["run", "--resume", j, "--sim", "--speed", "200"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("another cubot is running or resuming its run right now")
            && stderr(&o).contains("nothing moved"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("simulator:"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&journal).unwrap().lines().count(),
        lines
    );
    interrupt(&first);
    assert_eq!(first.wait().unwrap().code(), Some(2));
}

/// A second Ctrl-C while a stopped run says where its cube is: one account of the end,
/// never both the run's and the second Ctrl-C's.
#[test]
fn a_second_ctrl_c_leaves_one_account_of_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("j.jsonl");
    // The second Ctrl-C at once and a little later, where the run's own account comes.
    for delay in [0, 100, 200, 300, 400] {
        let (mut child, rx) = run_lines(&["--journal", journal.to_str().unwrap()]);
        wait_for(&rx, "scanning:");
        interrupt(&child);
        wait_for(&rx, "stopping:");
        std::thread::sleep(Duration::from_millis(delay));
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(child.id() as i32),
            nix::sys::signal::Signal::SIGINT,
        );
        let code = child.wait().unwrap().code();
        let rest: Vec<String> = rx.iter().collect();
        let second = rest.iter().filter(|l| l.contains("second Ctrl-C")).count();
        let own = rest.iter().filter(|l| l.starts_with("stopped ")).count();
        assert_eq!(second + own, 1, "delay {delay} ms, exit {code:?}: {rest:?}");
        // After the run's own account a second Ctrl-C only ends the process sooner.
        let codes: &[i32] = if second == 1 { &[130] } else { &[2, 130] };
        assert!(codes.contains(&code.unwrap_or(-1)), "{code:?}: {rest:?}");
    }
}

// 5 (issue): journals a user can find.

/// A cache directory of its own for journals, its tables linked from the shared test cache.
fn journal_cache() -> tempfile::TempDir {
    let cache = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(cache_dir()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "tbl") {
            std::os::unix::fs::symlink(&p, cache.path().join(p.file_name().unwrap())).unwrap();
        }
    }
    cache
}

/// A run under way holds its journal: `journals` lists it as such (not as stopped), and
/// a prune leaves it, whatever it is told.
#[test]
fn a_run_under_way_is_listed_as_under_way_and_never_pruned() {
    let cache = journal_cache();
    let c = cache.path().to_str().unwrap();
    let (mut child, rx) = lines_of(
        &[
            "--cache-dir",
            c,
            "run",
            "--sim",
            "--speed",
            "1",
            "--search-ms",
            "0",
        ],
        None,
    );
    wait_for(&rx, "scanning");
    let listed = stdout(&cubot(&["--cache-dir", c, "journals"]));
    let o = cubot(&[
        "--cache-dir",
        c,
        "journals",
        "--prune",
        "--keep",
        "0",
        "--unfinished-too",
    ]);
    let pruned = stdout(&o);
    let left = std::fs::read_dir(cache.path().join("journals"))
        .unwrap()
        .count();
    child.kill().ok();
    child.wait().ok();
    assert!(
        listed.lines().count() == 1 && listed.contains("under way now (another cubot holds it)"),
        "{listed}"
    );
    assert!(
        pruned.starts_with("removed 0 of 1 journal in ")
            && pruned.trim_end().ends_with("(1 run kept: under way now)"),
        "{pruned}"
    );
    assert_eq!(left, 1);
}

#[test]
fn a_run_stopped_before_anything_turned_is_listed_and_not_passed_over_by_latest() {
    let cache = journal_cache();
    let c = cache.path().to_str().unwrap();
    let run = |extra: &[&str]| {
        let args = [
            "--cache-dir",
            c,
            "run",
            "--sim",
            "--speed",
            "500",
            "--search-ms",
            "0",
        ];
        cubot(&[&args[..], extra].concat())
    };
    // A stopped run, resumable; then a newer one that stops before anything turns (its
    // sensor sees no cube).
    let stopped = run(&["--seed", "44", "--faults", "stall@40", "-q"]);
    assert_eq!(stopped.status.code(), Some(2), "{}", stderr(&stopped));
    std::thread::sleep(std::time::Duration::from_millis(20));
    let dark = run(&["--seed", "45", "--faults", "covered", "-q"]);
    assert_eq!(dark.status.code(), Some(2), "{}", stderr(&dark));
    let listed = stdout(&cubot(&["--cache-dir", c, "journals"]));
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].contains("nothing turned: run again")
            && lines[0].contains("mindcub3r 3x3x3: the scan sees no cube"),
        "{lines:?}"
    );
    assert!(lines[1].contains("stopped: resume it"), "{lines:?}");
    // `latest` is the newest run, which has nothing to resume: the older stopped run is
    // not taken in its stead (the newer one turned the cube over as it scanned). Named by
    // its file, its journal says the same.
    let newest = lines[0].split_whitespace().last().unwrap();
    for journal in ["latest", newest] {
        let o = cubot(&[
            "--cache-dir",
            c,
            "run",
            "--resume",
            journal,
            "--sim",
            "--speed",
            "7",
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains(
                "stopped before anything turned (the scan sees no cube): there is nothing to resume; run it again: `cubot run --sim --seed 45 --speed 7`"
            ),
            "{journal}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn journals_are_listed_newest_first_and_the_latest_stopped_one_resumes() {
    let cache = journal_cache();
    let c = cache.path().to_str().unwrap();
    let o = cubot(&["--cache-dir", c, "journals"]);
    assert!(stderr(&o).contains("no journals in"), "{}", stderr(&o));
    let done = cubot(&[
        "--cache-dir",
        c,
        "run",
        "--sim",
        "--speed",
        "200",
        "--search-ms",
        "0",
    ]);
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    // A run that stalls while executing: stopped, resumable.
    let stopped = cubot(&[
        "--cache-dir",
        c,
        "run",
        "--sim",
        "--speed",
        "100",
        "--search-ms",
        "0",
        "--seed",
        "39",
        "--faults",
        "stall@p12",
    ]);
    assert_eq!(stopped.status.code(), Some(2), "{}", both(&stopped));
    // The stall is said in words: what the robot was doing, which motor, how far it got.
    assert!(
        stderr(&stopped).contains(": a program of 1 robot action on the brick: tilting the cube, the tilt arm pushing it over (motor A) did not finish within the ")
            && stderr(&stopped).contains("with its action not done"),
        "{}",
        both(&stopped)
    );
    // Pruning every journal but the newest none spares the stopped run, and says why.
    let copy = tempfile::tempdir().unwrap();
    std::fs::create_dir(copy.path().join("journals")).unwrap();
    for e in std::fs::read_dir(cache.path().join("journals")).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(
            &p,
            copy.path().join("journals").join(p.file_name().unwrap()),
        )
        .unwrap();
    }
    let o = cubot(&[
        "--cache-dir",
        copy.path().to_str().unwrap(),
        "journals",
        "--prune",
        "--keep",
        "0",
    ]);
    assert!(
        stdout(&o).starts_with("removed 1 of 2 journals")
            && stdout(&o)
                .trim_end()
                .ends_with("(1 stopped run kept: it can still be resumed)"),
        "{}",
        stdout(&o)
    );
    let o = cubot(&["--cache-dir", c, "journals"]);
    let lines: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].contains("stopped: resume it"), "{lines:?}");
    assert!(lines[1].contains("reached the target"), "{lines:?}");
    // Columns line up: the paths start at one place.
    let at: Vec<Option<usize>> = lines.iter().map(|l| l.find(c)).collect();
    assert!(at[0].is_some() && at[0] == at[1], "{lines:?}");
    // --json gives the time as RFC 3339.
    let o = cubot(&["--cache-dir", c, "journals", "--json"]);
    let first: serde_json::Value =
        serde_json::from_str(stdout(&o).lines().next().unwrap()).unwrap();
    let modified = first["modified"].as_str().unwrap();
    assert!(
        modified.len() == 20 && modified.as_bytes()[10] == b'T' && modified.ends_with('Z'),
        "{modified}"
    );
    let o = cubot(&[
        "--cache-dir",
        c,
        "run",
        "--resume",
        "latest",
        "--sim",
        "--speed",
        "100",
        "--seed",
        "39",
        "--search-ms",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert!(stderr(&o).starts_with("resuming "), "{}", stderr(&o));
    // The summary's actions are the resume's, said so, with the run's in all.
    assert!(
        stdout(&o).contains(" from where the resume found the cube)")
            && stdout(&o).contains(" in all, as `cubot journals` counts them)"),
        "{}",
        both(&o)
    );
    // The resumed run is listed with what it did in all, not only its latest plan.
    let o = cubot(&["--cache-dir", c, "journals"]);
    let first = stdout(&o).lines().next().unwrap_or_default().to_string();
    assert!(
        first.contains("reached the target") && first.contains(" of its latest plan, "),
        "{first}"
    );
    let in_all: usize = first
        .split(" of its latest plan, ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("a count in all");
    assert!(in_all > 0, "{first}");
    // A journal named as `journals` lists it, by its file name alone, and `latest`: the
    // newest run reached its target, so its cube is checked again either way; nothing
    // turns, and the listing says so.
    let o = cubot(&["--cache-dir", c, "--json", "journals"]);
    let newest: serde_json::Value =
        serde_json::from_str(stdout(&o).lines().next().unwrap()).unwrap();
    let name = std::path::Path::new(newest["path"].as_str().unwrap())
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    for journal in ["latest", name.as_str()] {
        let o = cubot(&[
            "--cache-dir",
            c,
            "run",
            "--resume",
            journal,
            "--sim",
            "--speed",
            "200",
            "--seed",
            "39",
            "--search-ms",
            "0",
        ]);
        assert_eq!(o.status.code(), Some(0), "{journal}: {}", both(&o));
        assert!(
            stderr(&o).contains("the journal's run already reached its target; checking again"),
            "{journal}: {}",
            both(&o)
        );
        let o = cubot(&["--cache-dir", c, "journals"]);
        let first = stdout(&o).lines().next().unwrap_or_default().to_string();
        assert!(
            first.contains("reached the target")
                && first.contains(&format!(", {in_all} actions in all"))
                && first.contains(" in all; its latest resume had nothing to turn"),
            "{journal}: {first}"
        );
    }
    let o = cubot(&["--cache-dir", c, "journals", "--prune", "--keep", "1"]);
    assert!(
        stdout(&o).starts_with("removed 1 of 2 journals") && stdout(&o).contains("(1 newest kept)"),
        "{}",
        stdout(&o)
    );
}

/// No solution within the limits is said once, with what to try.
#[test]
fn no_solution_is_said_once_with_what_to_try() {
    let state = stdout(&cubot(&["random", "--seed", "3"]))
        .trim()
        .to_string();
    for (args, says) in [
        (
            &["--max-length", "15", "--timeout", "500"][..],
            "no solution within the time limit of 500 ms: give the search longer with --timeout, or allow longer solutions with --max-length",
        ),
        (
            &["--max-length", "4", "--timeout", "60000"],
            "no solution within 4 moves (htm): allow longer solutions with --max-length",
        ),
    ] {
        let o = cubot(&[&["solve", &state][..], args].concat());
        assert_eq!(o.status.code(), Some(1), "{}", both(&o));
        assert_eq!(stdout(&o).trim(), says, "{args:?}");
    }
}

/// A stall in a layer turn on the brick says in words what the robot was doing, with which
/// motor, how far the program got and the time it allowed.
#[test]
fn a_stall_in_a_layer_turn_is_said_in_words() {
    let o = cubot(&[
        "run",
        "--sim",
        "--faults",
        // The 13th program on the brick: a layer turn of this seed's plan, whatever the
        // count of polls before it (a machine's load moves a command count).
        "stall@p13",
        "--seed",
        "11",
        "--speed",
        "200",
        "--search-nodes",
        "20000",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", both(&o));
    let err = stderr(&o);
    assert!(
        err.contains(": a program of 1 robot action on the brick: turning a layer, the turntable going a little past the quarter before it comes back (motor B) did not finish within the ")
            && err.contains(" ms the program allowed, with its action not done: a motor stalled"),
        "{err}"
    );
    for jargon in ["over-rotate", "after 0 of them", "primitive"] {
        assert!(!err.contains(jargon), "{jargon}: {err}");
    }
}

/// A port where no EV3 answers: the message names what was asked in words, not in the
/// brick's opcodes.
#[test]
fn a_silent_port_is_told_what_was_asked_in_words() {
    let pty = nix::pty::openpty(None, None).unwrap();
    let path = nix::unistd::ttyname(&pty.slave).unwrap();
    let o = cubot(&["run", "--port", path.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("asking the brick's name, firmware and battery: the brick did not answer"),
        "{err}"
    );
    for opcode in ["COM_GET", "UI_READ", "GET_", "OUTPUT_", "INPUT_"] {
        assert!(!err.contains(opcode), "{opcode}: {err}");
    }
}

/// Ctrl-C while the run solves: what the solver and planner found is not said (nothing of
/// it runs); the stop is.
#[test]
fn ctrl_c_while_solving_says_no_plan_and_stops() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("j.jsonl");
    let (mut child, rx) = lines_of(
        &[
            "run",
            "--sim",
            "--speed",
            "100",
            "--seed",
            "5",
            "--search-ms",
            "6000",
            "--journal",
            journal.to_str().unwrap(),
        ],
        None,
    );
    wait_for(&rx, "scanned:");
    interrupt(&child);
    let seen = wait_for(
        &rx,
        "stopped (Ctrl-C) after the scan, before the first robot action (nothing turned; a resume keeps the scan)",
    );
    assert_eq!(child.wait().unwrap().code(), Some(2), "{seen:?}");
    assert!(
        seen.iter()
            .all(|l| !l.starts_with("solved:") && !l.starts_with("plan:")),
        "{seen:?}"
    );
    assert!(
        seen.last()
            .unwrap()
            .contains("stopped (Ctrl-C) after the scan, before the first robot action (nothing turned; a resume keeps the scan)"),
        "{seen:?}"
    );
}

/// Output that cannot be written (a full disk: /dev/full) is an operational error, exit 2,
/// said on stderr; a reader that goes away (`| head`) still ends quietly.
#[test]
fn output_that_cannot_be_written_is_exit_2_not_success() {
    for args in [
        &["random", "--count", "3", "--seed", "1"][..],
        &["synth-scan", "--seed", "1"],
        &["validate", "solved"],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let o = super::support::command(args)
            .stdout(Stdio::from(full))
            .output()
            .unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(
            e.contains("could not be written to standard output") && e.contains("incomplete"),
            "{args:?}: {e}"
        );
    }
    let mut child = super::support::command(&["random", "--count", "100000", "--seed", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(first.trim().len(), 54);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// `-` is standard input for a scan (`synth-scan | resolve -`); a flag's bad state names
/// the flag; one state wanted from a file of several names the commands that take several.
#[test]
fn a_scan_from_a_pipe_and_states_said_with_their_flag() {
    let scan = cubot(&["synth-scan", "--seed", "3"]);
    assert!(scan.status.success());
    let o = cubot_stdin(&["resolve", "-"], &stdout(&scan));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim().len(), 54, "{}", stdout(&o));
    let o = cubot(&["sim", "--pty", "--start", "UUUU"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--start: a facelet string"),
        "{}",
        stderr(&o)
    );
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("two.txt");
    std::fs::write(&f, "solved\nsolved\n").unwrap();
    let o = cubot(&["show", &format!("@{}", f.display())]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("this command takes one (`solve`, `validate` and `apply` take several"),
        "{}",
        stderr(&o)
    );
}

/// `sim --pty` prints its pseudo-terminal and its cube on standard output, one per line,
/// for scripts, and says on standard error what the two lines are, and that Ctrl-C ended it.
#[test]
fn the_simulators_two_lines_are_said_for_a_person() {
    let mut child = super::support::command(&["sim", "--pty", "--seed", "5"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    let path = out.next().unwrap().unwrap();
    let cube = out.next().unwrap().unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut note = String::new();
    err.read_line(&mut note).unwrap();
    // Ctrl-C ends it, in words.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let mut end = String::new();
    err.read_to_string(&mut end).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130), "{end}");
    assert!(
        end.contains("sim: ended (Ctrl-C); its pty is gone"),
        "{end}"
    );
    assert!(path.starts_with("/dev/"), "{path}");
    assert_eq!(cube.len(), 54, "{cube}");
    assert!(
        note.starts_with(&format!(
            "sim: a simulated MindCub3r serves on {path} (give it to --port); the line above is its cube"
        )),
        "{note}"
    );
}

/// Small promises of the twelfth tour: a simulator flag with a real port is refused even at
/// its default value; a run with nothing to turn has no robot time; a reading of no light
/// at all is warned of.
#[test]
fn simulator_flags_on_a_port_nothing_to_turn_and_a_dark_reading_are_said() {
    for args in [
        &["run", "--port", "/dev/null", "--speed", "20"][..],
        &["robot", "check", "--port", "/dev/null", "--speed", "20"][..],
    ] {
        let o = cubot(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).contains("--speed sets the simulator: add --sim"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    // The simulated cube saved, then taken to that state: nothing turns.
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("saved.json");
    let s = saved.to_str().unwrap();
    let o = cubot(&["save", s, "--sim", "--speed", "200", "--seed", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = cubot(&[
        "run",
        "--sim",
        "--speed",
        "200",
        "--seed",
        "3",
        "--target-file",
        s,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("robot time   none (nothing to turn)"),
        "{}",
        stdout(&o)
    );
    let o = cubot(&["robot", "read", "edge", "2", "--sim", "--faults", "covered"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("0 0 0  (RGB-RAW, sensor edge 2"),
        "{}",
        stdout(&o)
    );
    assert!(
        stderr(&o).contains("warning: no light at all: the sensor's window is covered"),
        "{}",
        stderr(&o)
    );
}

/// A lost reply to the homing program (a program is not sent again: it moves motors) stops
/// the run saying nothing turned, that the brick ends its homing by itself, and what next.
#[test]
fn a_link_lost_while_homing_says_nothing_turned_and_what_next() {
    let o = cubot(&[
        "run", "--sim", "--speed", "200", "--seed", "3", "--faults", "drop@p2",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no layer was turned (homing comes first), and the brick ends a homing run by itself: check the link")
            && err.contains("then run the same command again"),
        "{err}"
    );
}

/// `cubot ports` sums up what its rows say: ports it did not ask are not counted as ports
/// where no brick answered.
#[test]
fn ports_sums_up_its_own_rows() {
    let o = cubot(&["ports"]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    let rows: Vec<&str> = out.lines().collect();
    let asked = rows.iter().filter(|r| !r.contains("not asked")).count();
    let answered = rows.iter().filter(|r| r.contains("\tEV3 \"")).count();
    if rows.is_empty() {
        assert!(err.contains("no bricks or serial ports found"), "{err}");
    } else if answered == 0 && asked == 0 {
        let listed = match rows.len() {
            1 => "1 port".to_string(),
            n => format!("{n} ports"),
        };
        assert!(
            err.contains(&format!(
                "no EV3 found ({listed} listed, none a brick's to ask)"
            )),
            "{out}{err}"
        );
    } else if answered == 0 {
        assert!(err.contains("no EV3 answered ("), "{out}{err}");
    }
    let o = cubot(&["ports", "--no-ask"]);
    assert!(!stderr(&o).contains("no EV3"), "{}", stderr(&o));
}

/// Ctrl-C while a session waits for its next line ends it at once, saying where the cube's
/// faces are after the steps it did; a step's own Ctrl-C is said as the user's stop, not as
/// an error.
#[test]
fn ctrl_c_in_a_session_says_where_the_cube_is() {
    use std::io::Write;
    let mut child = super::support::command(&["robot", "session", "--sim", "--speed", "20"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "tilt").unwrap();
    stdin.flush().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(out.next().unwrap().unwrap(), "done: tilt");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130), "{err}");
    assert!(
        err.contains("session ended (Ctrl-C) between steps; the motors stand still; the cube's faces now at top, right, front, bottom, left and back are FRDBLU (named as the cube was put in); the last robot action done: tilt"),
        "{err}"
    );
    drop(stdin);
}

/// A line robot's stall is said in words with the squaring advice; its silence gets no
/// MindCub3r's promise of motions bounded on the brick.
#[test]
fn a_line_robots_stall_and_silence_are_said_for_a_line_robot() {
    let o = cubot(&[
        "run", "--sim", "--robot", "line", "--speed", "200", "--faults", "stall@5",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("a motor stalled short of its position, held by the cube or the mechanism (STALL, in its words: ")
            && err.contains("square it by hand without turning a layer, and see that nothing blocks the robot, before you resume"),
        "{err}"
    );
    let o = cubot(&[
        "run", "--sim", "--robot", "line", "--speed", "200", "--faults", "silent@5",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("the robot did not confirm the stop (no reply): if a motor still runs, switch the robot off")
            && !err.contains("MindCub3r"),
        "{err}"
    );
}

/// `--resume latest` takes the newest run only; when that run turned nothing, it names the
/// newest older run that can be resumed, with the command that resumes it (its own seed).
#[test]
fn resume_latest_of_a_run_that_turned_nothing_names_an_older_resumable_run() {
    let cache = journal_cache();
    let c = cache.path().to_str().unwrap();
    let run = |extra: &[&str]| {
        cubot(
            &[
                &[
                    "--cache-dir",
                    c,
                    "run",
                    "--sim",
                    "--speed",
                    "200",
                    "--search-ms",
                    "0",
                ][..],
                extra,
            ]
            .concat(),
        )
    };
    let stopped = run(&["--seed", "39", "--faults", "stall@p12"]);
    assert_eq!(stopped.status.code(), Some(2), "{}", stderr(&stopped));
    let nothing = run(&["--seed", "4", "--faults", "covered"]);
    assert_eq!(nothing.status.code(), Some(2), "{}", stderr(&nothing));
    let older = std::fs::read_dir(cache.path().join("journals"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            text.contains("\"interrupted\"") && text.contains("\"type\":\"start\"")
        })
        .expect("the stopped run's journal");
    let o = cubot(&["--cache-dir", c, "run", "--resume", "latest", "--sim"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("there is nothing to resume; run it again: `cubot run --sim --seed 4 --speed")
            && err.contains(&format!(
                "resume that run by name (the resume checks the cube first): cubot run --resume {} --sim --seed 39",
                older.display()
            )),
        "{err}"
    );
}

/// A Ctrl-C while a step command's move is under way: the move ends first, then the step
/// stops as every robot stop does (exit 2, motors stopped, where the cube's faces are),
/// not "done" with exit 0.
#[test]
fn ctrl_c_during_a_step_commands_move_is_a_stop() {
    // Homing takes about 1.8 s at speed 1, the spin then 1.2 s: the signal lands in the
    // spin (or, on a slow machine, in the homing: a stop all the same).
    let (child, rx) = lines_of(&["robot", "spin", "2", "--sim", "--speed", "1"], None);
    std::thread::sleep(Duration::from_millis(2400));
    interrupt(&child);
    let seen = wait_for(&rx, "Ctrl-C: stopped ");
    let mut child = child;
    assert_eq!(child.wait().unwrap().code(), Some(2), "{seen:?}");
    let last = seen.last().unwrap();
    assert!(
        last.contains("motors stopped")
            && last
                .contains("the cube's faces now at top, right, front, bottom, left and back are"),
        "{seen:?}"
    );
    assert!(seen.iter().all(|l| !l.contains("error:")), "{seen:?}");
}

/// A file to write in a directory where nothing can be created (`/proc`, whoever runs
/// it) is refused before the robot moves, not after the scan.
#[test]
fn an_output_nothing_can_create_is_refused_before_the_robot_moves() {
    let o = cubot(&[
        "scan",
        "--robot",
        "--sim",
        "--speed",
        "200",
        "--raw-out",
        "/proc/cubot-x.json",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--raw-out /proc/cubot-x.json: cannot create a file in /proc (")
            && err.contains("nothing was done")
            && !err.contains("scanning"),
        "{err}"
    );
}

/// Clear readings the cube's rules overrule (two stickers read as each other: a cube of
/// impossible pieces, not one put together wrong) still give the legal answer, and are
/// named wherever a scan is reported: `run`, `scan --robot`, `resolve` (and its JSON).
#[test]
fn readings_the_cubes_rules_overrule_are_named() {
    let note = "note: the cube's rules overrule the clear readings of stickers U2 F4";
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("b.json");
    let o = cubot(&[
        "scan",
        "--robot",
        "--sim",
        "--seed",
        "12",
        "--faults",
        "misread=U2:F4",
        "--raw-out",
        raw.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains(note), "{}", stderr(&o));
    let o = cubot(&["resolve", raw.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains(note), "{}", stderr(&o));
    let o = cubot(&["--json", "resolve", raw.to_str().unwrap()]);
    let line: serde_json::Value = stdout(&o)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .find(|v: &serde_json::Value| v["type"] == "resolution")
        .expect("a resolution line");
    assert_eq!(line["overruled"], serde_json::json!(["U2", "F4"]), "{line}");
    let o = cubot(&[
        "run",
        "--sim",
        "--seed",
        "12",
        "--speed",
        "100",
        "--faults",
        "misread=U2:F4",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains(note), "{}", stderr(&o));
    // A scan read right names nothing.
    let o = cubot(&["scan", "--robot", "--sim", "--seed", "12"]);
    assert!(!stderr(&o).contains("overrule"), "{}", stderr(&o));
}
