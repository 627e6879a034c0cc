//! Integration tests: stops and resumes, as a real user's robot is used. The simulator runs
//! as its own process (`cubot sim --pty`, its own cube, never restarted from a journal);
//! `cubot run --port` drives it through the pty; the test judges every claim by the
//! simulator's own cube (its `--state-file`, which cubot never reads). Interruptions land
//! at points defined by work done (steps in the journal, command counts), not by clocks.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use super::support::{cache_dir, stderr, stdout};

/// `cubot sim --pty` as its own process, keeping its cube in a state file.
pub(super) struct Sim {
    child: Child,
    pub(super) path: String,
    pub(super) state: PathBuf,
    /// The cube it started with (robot frame, its own naming).
    pub(super) initial: String,
}

impl Sim {
    pub(super) fn start(dir: &Path, args: &[&str]) -> Sim {
        let state = dir.join(format!("sim-{}.txt", args.join("_").replace('/', "")));
        let mut child = Command::new(env!("CARGO_BIN_EXE_cubot"))
            .args(["sim", "--pty", "--state-file"])
            .arg(&state)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start cubot sim");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let path = lines.next().unwrap().unwrap();
        let initial = lines.next().unwrap().unwrap();
        Sim {
            child,
            path,
            state,
            initial,
        }
    }

    /// The simulator's cube (robot frame, its own naming) and its rotation- and
    /// naming-free form, once its motors are at rest (a robot finishes on its own what it
    /// was sent before its host died).
    pub(super) fn cube(&self) -> (String, String) {
        let t0 = Instant::now();
        loop {
            let text = std::fs::read_to_string(&self.state).unwrap_or_default();
            let l: Vec<&str> = text.lines().collect();
            if l.len() == 3 && l[2] == "idle" {
                std::thread::sleep(Duration::from_millis(50));
                let again = std::fs::read_to_string(&self.state).unwrap_or_default();
                if again == text {
                    return (l[0].into(), l[1].into());
                }
            }
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "motors never at rest"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

const RUN: &[&str] = &["--search-ms", "0", "--solutions", "3", "--json", "-q"];

fn cubot_cmd(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cubot"));
    c.args(args)
        .args(RUN)
        .env("CUBOT_CACHE_DIR", cache_dir())
        .env("NO_COLOR", "1");
    c
}

pub(super) fn run(port: &str, robot: &str, journal: &Path, extra: &[&str]) -> Command {
    let mut c = cubot_cmd(&["run", "--port", port, "--robot", robot]);
    c.arg("--journal").arg(journal).args(extra);
    c
}

pub(super) fn resume(port: &str, journal: &Path) -> Output {
    cubot_cmd(&["run", "--resume", journal.to_str().unwrap(), "--port", port])
        .output()
        .expect("run cubot run --resume")
}

pub(super) fn json(o: &Output) -> Vec<serde_json::Value> {
    stdout(o)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// A facelet string with its colours renamed in order of first appearance.
pub(super) fn names(s: &str) -> String {
    let mut seen: Vec<char> = Vec::new();
    s.chars()
        .map(|c| {
            let i = seen.iter().position(|&x| x == c).unwrap_or_else(|| {
                seen.push(c);
                seen.len() - 1
            });
            (b'a' + i as u8) as char
        })
        .collect()
}

pub(super) fn solved(s: &str) -> bool {
    let n = s.len() / 6;
    (0..6).all(|f| {
        s[f * n..(f + 1) * n]
            .chars()
            .all(|c| s[f * n..].starts_with(c))
    })
}

/// Starts a run and signals it once its journal holds `steps` confirmed steps.
fn stop_after_steps(mut cmd: Command, journal: &Path, steps: usize, signal: i32) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run cubot run");
    let t0 = Instant::now();
    loop {
        let done = std::fs::read_to_string(journal)
            .map(|t| {
                t.lines()
                    .filter(|l| l.contains("\"type\":\"step\""))
                    .count()
            })
            .unwrap_or(0);
        if done >= steps || t0.elapsed() > Duration::from_secs(60) {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::try_from(signal).unwrap(),
    )
    .unwrap();
    let t = Instant::now();
    let out = child.wait_with_output().unwrap();
    if signal == libc_sigint() {
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    }
    out
}

fn libc_sigint() -> i32 {
    nix::sys::signal::Signal::SIGINT as i32
}

pub(super) fn sigkill() -> i32 {
    nix::sys::signal::Signal::SIGKILL as i32
}

/// Resumes until the run ends; the simulator's cube must be solved.
fn resume_to_the_end(sim: &Sim, journal: &Path, truth: &str) -> Vec<serde_json::Value> {
    let o = resume(&sim.path, journal);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines = json(&o);
    let r = lines
        .iter()
        .find(|l| l["type"] == "resumed")
        .expect("resumed");
    // The journal allowed the simulator's cube, and the robot's answer picked it.
    let cands: Vec<String> = r["robot_candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| names(c.as_str().unwrap()))
        .collect();
    assert!(cands.contains(&names(truth)), "{r}");
    assert_eq!(
        names(r["robot_seen"].as_str().unwrap()),
        names(truth),
        "{r}"
    );
    assert_eq!(r["decision"], "continue");
    assert_eq!(lines.last().unwrap()["reached_target"], true);
    assert!(solved(&sim.cube().0));
    lines
}

/// The journal keeps the first run's history: one start line, the stop, the resume.
fn check_history(journal: &Path) {
    let text = std::fs::read_to_string(journal).unwrap();
    let types: Vec<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|v| v["type"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(types.iter().filter(|t| *t == "start").count(), 1);
    assert!(types.iter().any(|t| t == "resume"), "{types:?}");
    assert!(types.iter().any(|t| t == "plan"), "{types:?}");
    assert_eq!(types.last().map(String::as_str), Some("end"));
    assert!(types.iter().any(|t| t == "sent"));
}

#[test]
fn sigkill_mid_move_line_robot_then_resume_finishes_on_the_robots_own_cube() {
    let dir = tempfile::tempdir().unwrap();
    let sim = Sim::start(
        dir.path(),
        &["--robot", "line", "--seed", "31", "--speed", "4"],
    );
    let j = dir.path().join("j.jsonl");
    let o = stop_after_steps(run(&sim.path, "line", &j, &[]), &j, 2, sigkill());
    assert_eq!(o.status.code(), None, "killed");
    let (truth, _) = sim.cube();
    resume_to_the_end(&sim, &j, &truth);
    check_history(&j);
}

#[test]
fn sigkill_mid_primitive_mindcub3r_then_resume_finishes_on_the_robots_own_cube() {
    let dir = tempfile::tempdir().unwrap();
    let sim = Sim::start(dir.path(), &["--seed", "32", "--speed", "60"]);
    let j = dir.path().join("j.jsonl");
    let o = stop_after_steps(run(&sim.path, "mindcub3r", &j, &[]), &j, 12, sigkill());
    assert_eq!(o.status.code(), None, "killed");
    let (truth, _) = sim.cube();
    resume_to_the_end(&sim, &j, &truth);
    check_history(&j);
}

#[test]
fn ctrl_c_stops_within_a_second_and_states_the_robots_own_cube_both_robots() {
    for (robot, args, steps) in [
        (
            "line",
            &["--robot", "line", "--seed", "33", "--speed", "2"][..],
            2,
        ),
        ("mindcub3r", &["--seed", "34", "--speed", "20"][..], 8),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let sim = Sim::start(dir.path(), args);
        let j = dir.path().join("j.jsonl");
        let o = stop_after_steps(run(&sim.path, robot, &j, &[]), &j, steps, libc_sigint());
        assert_eq!(o.status.code(), Some(2), "{robot}: {}", stderr(&o));
        let i = json(&o).pop().unwrap();
        assert_eq!(i["type"], "interrupted", "{robot}: {i}");
        assert_eq!(i["motors_stopped"], true, "{robot}: {i}");
        assert_eq!(i["reason"], "stopped by the user: Ctrl-C", "{robot}: {i}");
        // Every turn the robot made is in the stated state: nothing in flight remains.
        let (truth, _) = sim.cube();
        assert_eq!(
            names(i["robot_state"].as_str().unwrap()),
            names(&truth),
            "{robot}: {i}"
        );
        assert!(stderr(&o).contains("motors stopped"), "{}", stderr(&o));
        resume_to_the_end(&sim, &j, &truth);
    }
}

#[test]
fn lost_replies_and_a_link_drop_out_are_ridden_out() {
    // Inside execution: the line robot's 5th command is a MOVE; the brick's 13th program is
    // its fourth chunk of primitives (after three homing the arms and six scan faces), and
    // the link drops out as its 20th arrives (3 s of the simulator's clock: its reply is
    // lost).
    for (robot, args) in [
        (
            "line",
            &[
                "--robot", "line", "--seed", "35", "--speed", "50", "--faults", "drop@5",
            ][..],
        ),
        (
            "mindcub3r",
            &["--seed", "36", "--speed", "100", "--faults", "drop@p13"],
        ),
        (
            "mindcub3r",
            &[
                "--seed",
                "37",
                "--speed",
                "100",
                "--faults",
                "dropout@p20=3000",
            ],
        ),
        (
            // A byte of three scan faces' replies garbled on the way: a reading the sensor
            // cannot give, or a count off its sample's angle, is read again at rest.
            "mindcub3r",
            &[
                "--seed",
                "41",
                "--speed",
                "100",
                "--faults",
                "corrupt@p4,corrupt@p5,corrupt@p6",
            ],
        ),
        (
            "line",
            &[
                "--robot",
                "line",
                "--seed",
                "38",
                "--speed",
                "50",
                "--faults",
                "dropout@6=300",
            ],
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let sim = Sim::start(dir.path(), args);
        let j = dir.path().join("j.jsonl");
        let o = run(&sim.path, robot, &j, &[]).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert!(solved(&sim.cube().0), "{args:?}");
    }
}

#[test]
fn a_stall_states_the_robots_own_cube_and_the_resume_finishes() {
    for (robot, args) in [
        (
            "mindcub3r",
            // The third chunk of primitives on the brick (after three homing programs and
            // six scan faces).
            &["--seed", "39", "--speed", "100", "--faults", "stall@p12"][..],
        ),
        (
            "line",
            &[
                "--robot", "line", "--seed", "40", "--speed", "50", "--faults", "stall@4",
            ],
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let sim = Sim::start(dir.path(), args);
        let j = dir.path().join("j.jsonl");
        let o = run(&sim.path, robot, &j, &[]).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let i = json(&o).pop().unwrap();
        assert_eq!(i["type"], "interrupted", "{i}");
        let (truth, _) = sim.cube();
        let stated: Vec<String> = std::iter::once(i["robot_state"].as_str().unwrap().to_string())
            .chain(
                i["robot_candidates"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c.as_str().unwrap().to_string()),
            )
            .map(|s| names(&s))
            .collect();
        assert!(stated.contains(&names(&truth)), "{args:?}: {i}");
        resume_to_the_end(&sim, &j, &truth);
    }
}

#[test]
fn a_chunk_stopped_by_its_deadline_with_its_reply_lost_is_settled_by_the_motor_counts() {
    // A chunk of primitives on the brick stalls (its program stops every motor at its
    // deadline) and its reply is lost: what happened is settled from the motor counts,
    // or stated as the candidates they leave; the simulator's own cube is among them.
    for (seed, k) in [("43", 11), ("44", 14)] {
        let dir = tempfile::tempdir().unwrap();
        let f = format!("stall@p{k},drop@p{k}");
        let sim = Sim::start(
            dir.path(),
            &["--seed", seed, "--speed", "100", "--faults", &f],
        );
        let j = dir.path().join("j.jsonl");
        let o = run(&sim.path, "mindcub3r", &j, &[]).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{f}: {}", stderr(&o));
        let i = json(&o).pop().unwrap();
        assert_eq!(i["type"], "interrupted", "{i}");
        assert_eq!(i["motors_stopped"], true, "{i}");
        let (truth, _) = sim.cube();
        let stated: Vec<String> = std::iter::once(i["robot_state"].as_str().unwrap())
            .chain(
                i["robot_candidates"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c.as_str().unwrap()),
            )
            .map(names)
            .collect();
        assert!(stated.contains(&names(&truth)), "{f}: {i}");
        // The journal holds the chunk's intent, and what the counts settled of it.
        let text = std::fs::read_to_string(&j).unwrap();
        assert!(text.contains("\"type\":\"sent\""), "{text}");
        resume_to_the_end(&sim, &j, &truth);
        check_history(&j);
    }
}

#[test]
fn a_corrupted_count_stops_the_run_at_once_or_is_read_again() {
    // One byte of a reply changed during execution: never a runaway motor, a hang or a
    // wrong state.
    for n in [880, 905, 930] {
        let dir = tempfile::tempdir().unwrap();
        let f = format!("corrupt@{n}");
        let sim = Sim::start(
            dir.path(),
            &["--seed", "41", "--speed", "100", "--faults", &f],
        );
        let j = dir.path().join("j.jsonl");
        let o = run(&sim.path, "mindcub3r", &j, &[]).output().unwrap();
        match o.status.code() {
            Some(0) => assert!(solved(&sim.cube().0), "{f}"),
            Some(2) => {
                let i = json(&o).pop().unwrap();
                assert_eq!(i["type"], "interrupted", "{f}: {}", stderr(&o));
                let (truth, _) = sim.cube();
                resume_to_the_end(&sim, &j, &truth);
            }
            other => panic!("{f}: exit {other:?}: {}", stderr(&o)),
        }
    }
}

/// A reply with a byte changed on the way is garbled, said as such: never a silent brick
/// (a reply numbered as no command was), never a stalled motor (a stage no program has);
/// a homing or a chunk whose reply came garbled is confirmed on the brick instead.
#[test]
fn a_garbled_reply_is_said_as_one_and_a_homing_or_chunk_goes_on() {
    let o = super::support::cubot(&["robot", "check", "--sim", "--faults", "corrupt@4"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("robot check ended after 6 rows: setting the direction of motors ABC (normal): the brick's reply came garbled (numbered 0x2304, not 0x0004")
            && err.contains("run `cubot robot check` again")
            && !err.contains("answer"),
        "{err}"
    );
    // The first program homes the sensor arm; later ones are the scan's and the chunks'.
    for k in [1, 2, 9, 14] {
        let f = format!("corrupt@p{k}");
        let o = super::support::cubot(&["run", "--sim", "--speed", "100", "--faults", &f]);
        let (out, err) = (stdout(&o), stderr(&o));
        assert_eq!(o.status.code(), Some(0), "{f}: {err}");
        assert!(out.contains("reached the target"), "{f}: {out}");
    }
}

#[test]
fn resume_on_another_state_replans_and_on_another_cube_refuses_before_turning() {
    let dir = tempfile::tempdir().unwrap();
    let sim = Sim::start(
        dir.path(),
        &[
            "--robot", "line", "--seed", "42", "--speed", "50", "--faults", "stall@5",
        ],
    );
    let j = dir.path().join("j.jsonl");
    let o = run(&sim.path, "line", &j, &[]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    drop(sim);
    let saved = std::fs::read(&j).unwrap();
    // Another cube of other colours (pink for white): refused, exit 1, nothing turned.
    let other = Sim::start(
        dir.path(),
        &[
            "--robot",
            "line",
            "--seed",
            "43",
            "--speed",
            "50",
            "--palette",
            "no-white",
        ],
    );
    let (_, before) = other.cube();
    let o = resume(&other.path, &j);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("not the journal's cube"), "{err}");
    // Each cube named once: another palette in the journal's arrangement is said as such.
    assert!(
        (err.contains("the journal's is") && err.contains("the robot's is"))
            || err.contains("in other colours"),
        "{err}"
    );
    assert!(err.contains("put the journal's cube back in"), "{err}");
    assert_eq!(other.cube().1, before, "a layer turned");
    drop(other);
    // The same cube turned by hand (another state of it): planned again, finished.
    std::fs::write(&j, &saved).unwrap();
    let same = Sim::start(
        dir.path(),
        &["--robot", "line", "--seed", "44", "--speed", "50"],
    );
    let o = resume(&same.path, &j);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines = json(&o);
    let r = lines.iter().find(|l| l["type"] == "resumed").unwrap();
    assert_eq!(r["decision"], "replan", "{r}");
    assert!(solved(&same.cube().0));
}

#[test]
fn a_version_1_journal_is_still_read() {
    // A stopped run's journal rewritten as the first format wrote it: no intents, no raw
    // colours, no in-flight list.
    let dir = tempfile::tempdir().unwrap();
    let sim = Sim::start(
        dir.path(),
        &[
            "--robot", "line", "--seed", "45", "--speed", "50", "--faults", "stall@4",
        ],
    );
    let j = dir.path().join("j.jsonl");
    let o = run(&sim.path, "line", &j, &[]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let v1: Vec<String> = std::fs::read_to_string(&j)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).ok()?;
            let m = v.as_object_mut()?;
            match m["type"].as_str()? {
                // Version 1 wrote no intent lines, nor a line before the scan.
                "sent" | "begun" => return None,
                "start" => {
                    m.insert("version".into(), 1.into());
                    m.remove("raw_colors");
                    m.remove("raw_scale");
                }
                "interrupted" => {
                    m.remove("in_flight");
                    m.remove("motors_stopped");
                }
                _ => {}
            }
            Some(v.to_string())
        })
        .collect();
    std::fs::write(&j, v1.join("\n") + "\n").unwrap();
    let (truth, _) = sim.cube();
    resume_to_the_end(&sim, &j, &truth);
}

#[test]
fn a_host_killed_at_any_moment_leaves_the_bricks_motors_stopped() {
    // Every motion is bounded on the brick (homing included): whatever the host was doing
    // when it died, the simulator's motors come to rest by themselves.
    for (i, wait_ms) in [60u64, 250, 600, 1200, 2500].into_iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        let seed = (50 + i).to_string();
        let sim = Sim::start(dir.path(), &["--seed", &seed, "--speed", "20"]);
        let j = dir.path().join("j.jsonl");
        let mut child = run(&sim.path, "mindcub3r", &j, &[])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(wait_ms));
        child.kill().unwrap();
        child.wait().unwrap();
        // The longest motion (homing, 6 s of brick time) is 0.3 s at this speed.
        let t0 = Instant::now();
        let idle = loop {
            let text = std::fs::read_to_string(&sim.state).unwrap_or_default();
            if text.lines().nth(2) == Some("idle") {
                break true;
            }
            if t0.elapsed() > Duration::from_secs(5) {
                break false;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(idle, "killed after {wait_ms} ms: a motor still drives");
    }
}

#[test]
fn ctrl_c_while_the_tables_are_built_says_so_and_keeps_no_half_table() {
    // An empty cache: `solve` builds its tables (seconds); Ctrl-C meanwhile says what it
    // stopped, exits 130, and leaves no table file (each is written whole or not at all).
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().to_str().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cubot"))
        .args(["--cache-dir", cache, "solve"])
        .arg("DLUBUULRRBBRDRRLLDUDDUFFUBBRDDRDDUUFFLFRLFBFFBFRBBULLL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The note that the tables are being built comes first: then the build is under way.
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    assert!(first.contains("building the solver's tables"), "{first}");
    std::thread::sleep(Duration::from_millis(300));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{rest}");
    assert!(
        rest.contains(
            "stopped (Ctrl-C) while the solver's tables were loading (or being built); a table not finished is not kept"
        ),
        "{rest}"
    );
    let files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        files.iter().all(|f| f.to_string_lossy().ends_with(".tbl")),
        "{files:?}"
    );
}
