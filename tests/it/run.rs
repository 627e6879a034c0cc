//! Integration tests: run. Every test drives a simulated robot through a real pty, in the
//! `cubot` process (`--sim`), at a high simulation speed.

use crate::support::{cubot, stderr, stdout};
use cubot::cube::{Alg, FaceletCube, Size};

const FAST: &[&str] = &[
    "--speed",
    "5000",
    "--solutions",
    "3",
    "--max-length",
    "20",
    "-q",
];

fn json_lines(out: &str) -> Vec<serde_json::Value> {
    out.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn last(out: &std::process::Output) -> serde_json::Value {
    json_lines(&stdout(out))
        .pop()
        .unwrap_or_else(|| panic!("no JSON; stderr: {}", stderr(out)))
}

fn run(extra: &[&str]) -> std::process::Output {
    let mut args = vec!["run", "--json"];
    args.extend_from_slice(FAST);
    args.extend_from_slice(extra);
    cubot(&args)
}

/// Runs to the end: a run the simulated brick stops with a mechanical fault (its layer-play
/// model can jam a tilt) must exit 2 with a well-formed `interrupted` line, and resuming
/// from its journal must carry on; returns the final summary and the number of resumes.
fn to_the_end(first: std::process::Output) -> (serde_json::Value, usize) {
    let mut o = first;
    for resumes in 0..8 {
        if o.status.success() {
            return (last(&o), resumes);
        }
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let i = last(&o);
        assert_eq!(i["type"], "interrupted", "{i}; {}", stderr(&o));
        assert_eq!(i["state"].as_str().unwrap().len(), 54);
        let j = i["journal"].as_str().unwrap().to_string();
        let mut args = vec!["run", "--resume", &j, "--sim", "--json"];
        args.extend_from_slice(FAST);
        o = cubot(&args);
    }
    panic!("still interrupted after 8 resumes: {}", stderr(&o));
}

fn check_summary(s: &serde_json::Value) {
    assert_eq!(s["type"], "summary", "{s}");
    assert_eq!(s["reached_target"], true, "{s}");
    assert_eq!(s["final_state"], s["target"], "{s}");
    assert!(s["face_turns"].as_u64().unwrap() <= 20);
    assert!(s["robot_seconds"].as_f64().unwrap() > 0.0);
}

#[test]
fn run_sim_mindcub3r_solves() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j.jsonl");
    let o = run(&["--sim", "--seed", "13", "--journal", j.to_str().unwrap()]);
    let (s, resumes) = to_the_end(o);
    check_summary(&s);
    assert_eq!(s["verified_by"], "simulator read-back");
    assert!(s["final_state"]
        .as_str()
        .map(|f| FaceletCube::parse(f).unwrap().is_solved())
        .unwrap());
    // The journal has every action, each with the state it left.
    let text = std::fs::read_to_string(&j).unwrap();
    let lines = json_lines(&text);
    assert_eq!(lines[0]["type"], "start");
    let steps = lines.iter().filter(|l| l["type"] == "step").count();
    if resumes == 0 {
        assert_eq!(steps as u64, s["actions"].as_u64().unwrap());
    }
    assert_eq!(lines.last().unwrap()["type"], "end");
}

#[test]
fn run_sim_to_a_target_in_any_orientation() {
    // A target written in the first scan's symbols (centre letters), turned whole.
    let mut t = FaceletCube::solved(Size::Three);
    t.apply(&Alg::parse("R U F' D2 L").unwrap()).unwrap();
    let mut turned = t.clone();
    turned.apply(&Alg::parse("x y2").unwrap()).unwrap();
    let target = turned.to_letters();
    let o = run(&["--sim", "--seed", "12", "--target", &target]);
    let (s, _) = to_the_end(o);
    check_summary(&s);
    assert_eq!(s["target"].as_str().unwrap(), t.to_letters());
}

#[test]
fn save_then_restore_reaches_the_saved_state() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("game.json");
    let o = cubot(&[
        "save",
        f.to_str().unwrap(),
        "--sim",
        "--seed",
        "14",
        "--speed",
        "5000",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    assert!(saved["saved"].as_str().unwrap().contains('T'));
    assert_eq!(saved["colors"].as_array().unwrap().len(), 6);
    let state = saved["state"].as_str().unwrap().to_string();
    assert_eq!(stdout(&o).trim(), state);
    let mut args = vec![
        "restore",
        f.to_str().unwrap(),
        "--sim",
        "--seed",
        "22",
        "--json",
    ];
    args.extend_from_slice(&[
        "--speed",
        "5000",
        "--solutions",
        "3",
        "--max-length",
        "20",
        "-q",
    ]);
    let (s, _) = to_the_end(cubot(&args));
    check_summary(&s);
    assert_eq!(s["target"].as_str().unwrap(), state);
}

#[test]
fn interrupted_run_resumes_from_its_journal() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j.jsonl");
    // The link goes silent part way through the solve (after the scan).
    let o = run(&[
        "--sim",
        "--seed",
        "16",
        "--faults",
        "silent@800",
        "--journal",
        j.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let i = last(&o);
    assert_eq!(i["type"], "interrupted", "{i}");
    assert_eq!(i["journal"].as_str().unwrap(), j.to_str().unwrap());
    assert!(i["steps"].as_u64().unwrap() > 0);
    let state = i["state"].as_str().unwrap();
    assert_eq!(state.len(), 54);
    assert!(stderr(&o).contains("--resume"));
    let mut args = vec!["run", "--resume", j.to_str().unwrap(), "--sim", "--json"];
    args.extend_from_slice(FAST);
    let (s, _) = to_the_end(cubot(&args));
    check_summary(&s);
    assert_eq!(s["resumed"], true);
}

#[test]
fn line_robot_runs_and_resumes() {
    let o = run(&["--sim", "--robot", "line", "--seed", "41"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = last(&o);
    check_summary(&s);
    assert_eq!(s["robot"], "line");
    // A stall part way: exit 2, then resume finishes.
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("line.jsonl");
    let o = run(&[
        "--sim",
        "--robot",
        "line",
        "--seed",
        "42",
        "--faults",
        "stall@6",
        "--journal",
        j.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let i = last(&o);
    assert_eq!(i["type"], "interrupted");
    assert_eq!(i["steps"], 5);
    assert!(i["reason"].as_str().unwrap().contains("STALL"));
    let o = cubot(&[
        "run",
        "--resume",
        j.to_str().unwrap(),
        "--sim",
        "--json",
        "--speed",
        "5000",
        "--solutions",
        "3",
        "--max-length",
        "20",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = last(&o);
    check_summary(&s);
    assert_eq!(s["robot"], "line");
}

#[test]
fn run_sim_two_by_two() {
    let o = run(&["--sim", "--size", "2", "--seed", "51"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = last(&o);
    check_summary(&s);
    assert_eq!(s["final_state"].as_str().unwrap().len(), 24);
    assert!(s["face_turns"].as_u64().unwrap() <= 11);
}

#[test]
fn bad_usage_exits_2() {
    let o = cubot(&["run", "-q"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--sim"));
    let o = cubot(&["run", "--sim", "--faults", "melt", "-q"]);
    assert_eq!(o.status.code(), Some(2));
    let o = cubot(&[
        "run",
        "--resume",
        "/nonexistent/journal.jsonl",
        "--sim",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[cfg(feature = "vision")]
#[test]
fn camera_scanner_runs_end_to_end() {
    // The simulator renders a top-camera frame of each face the robot presents; the vision
    // pipeline reads them. MindCub3r (its scan's tilt/spin face sequence) and the line robot
    // (all six faces directly).
    let o = run(&["--sim", "--scanner", "camera", "--seed", "21"]);
    let scanned = json_lines(&stdout(&o))
        .into_iter()
        .find(|l| l["type"] == "scanned")
        .unwrap_or_else(|| panic!("no scan: {}", stderr(&o)));
    assert_eq!(scanned["state"].as_str().unwrap().len(), 54);
    let (s, _) = to_the_end(o);
    check_summary(&s);
    assert_eq!(s["verified_by"], "simulator read-back");

    let o = run(&[
        "--sim",
        "--robot",
        "line",
        "--scanner",
        "camera",
        "--seed",
        "22",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = last(&o);
    check_summary(&s);
    assert_eq!(s["robot"], "line");
}
