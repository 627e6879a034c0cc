//! Integration tests: the world going wrong the way cubes do. A tilt that does not roll the
//! cube, a tight cube's layer left out of square: nothing tells the host, so the check
//! after execution (a re-scan: the simulator runs as its own process, `cubot sim --pty`)
//! or a held motor must catch it, never a "reached" on a cube that is not at the target.
//! Judged by the simulator's own cube (its `--state-file`), on cubot's brick and, where
//! its build is found, on LEGO's firmware brick.

use super::stops::{json, names, resume, run, solved, Sim};
use super::support::{firmware_brick, stderr};

/// The simulator's arguments for `brick` (`None`: cubot's, else the firmware's build).
fn sim_args<'a>(brick: &'a Option<String>, rest: &[&'a str]) -> Vec<&'a str> {
    let mut a = rest.to_vec();
    if let Some(dir) = brick {
        a.extend(["--brick", "lms2012", "--lms2012", dir.as_str()]);
    }
    a
}

/// A tilt of the solution that leaves the cube where it was: the run goes on with a cube
/// it no longer knows, the re-scan after execution sees it is not at the target, and a
/// second round brings it there.
fn a_failed_tilt_is_caught_and_solved_again(brick: Option<String>, speed: &str) {
    let dir = tempfile::tempdir().unwrap();
    // The scan of a 3x3x3 tilts 5 times; the 9th tilt is in the solution.
    let args = sim_args(
        &brick,
        &[
            "--seed",
            "1003",
            "--speed",
            speed,
            "--faults",
            "tilt-fail@9",
        ],
    );
    let sim = Sim::start(dir.path(), &args);
    let j = dir.path().join("j.jsonl");
    let o = run(&sim.path, "mindcub3r", &j, &[]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{brick:?}: {}", stderr(&o));
    let s = json(&o).pop().unwrap();
    assert_eq!(s["reached_target"], true, "{s}");
    let rounds = s["rounds"].as_array().unwrap();
    assert!(rounds.len() >= 2, "the failed tilt went unseen: {s}");
    assert_eq!(rounds[0]["at_target"], false, "{s}");
    assert!(solved(&sim.cube().0), "{brick:?}: {s}");
}

/// A tight cube's layer turn ends 30° short: the arm cannot come down on a cube out of
/// square, so the run stops with the motor held, names the cube the robot holds (the turn
/// counted, as a person squaring the layer would count it) and says to square it by hand;
/// squared (the simulator started again on that cube), the resume finishes.
fn a_layer_left_out_of_square_stops_the_run_and_says_so(brick: Option<String>, speed: &str) {
    let dir = tempfile::tempdir().unwrap();
    let args = sim_args(
        &brick,
        &[
            "--seed",
            "1003",
            "--speed",
            speed,
            "--faults",
            "short-turn@4=30",
        ],
    );
    let sim = Sim::start(dir.path(), &args);
    let j = dir.path().join("j.jsonl");
    let o = run(&sim.path, "mindcub3r", &j, &[]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{brick:?}: {}", stderr(&o));
    assert!(stderr(&o).contains("square it by hand"), "{}", stderr(&o));
    let i = json(&o).pop().unwrap();
    assert_eq!(i["type"], "interrupted", "{i}");
    let (truth, _) = sim.cube();
    let stated: Vec<String> = std::iter::once(&i["robot_state"])
        .chain(i["robot_candidates"].as_array().unwrap())
        .map(|c| names(c.as_str().unwrap()))
        .collect();
    assert!(
        stated.contains(&names(&truth)),
        "{brick:?}: {truth} not in {i}"
    );
    // The person squares the layer.
    drop(sim);
    let mut again = args.clone();
    again.retain(|a| !a.starts_with("short-turn") && *a != "--faults");
    again.extend(["--start", truth.as_str()]);
    let sim = Sim::start(dir.path(), &again);
    // The journal allows the squared cube, and the resume finishes on it. (The robot,
    // started again, has its turntable where it starts up, so the resume's scan sees the
    // cube turned whole: it plans from what it sees.)
    let o = resume(&sim.path, &j);
    assert_eq!(o.status.code(), Some(0), "{brick:?}: {}", stderr(&o));
    let lines = json(&o);
    let r = lines
        .iter()
        .find(|l| l["type"] == "resumed")
        .expect("resumed");
    let allowed: Vec<String> = r["robot_candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| names(c.as_str().unwrap()))
        .collect();
    assert!(allowed.contains(&names(&truth)), "{r}");
    assert_eq!(lines.last().unwrap()["reached_target"], true);
    assert!(solved(&sim.cube().0));
}

/// A tilt of the scan that leaves the cube where it was: the robot reads one face twice
/// and believes the cube turned, so re-reading doubtful stickers reads the wrong ones
/// again. A doubt over more stickers than two pieces hold is met with a whole new scan,
/// and the run goes on from it.
fn a_failed_tilt_in_the_scan_is_met_with_a_whole_new_scan(brick: Option<String>, speed: &str) {
    let dir = tempfile::tempdir().unwrap();
    let args = sim_args(
        &brick,
        &[
            "--seed",
            "1003",
            "--speed",
            speed,
            "--faults",
            "tilt-fail@3",
        ],
    );
    let sim = Sim::start(dir.path(), &args);
    let j = dir.path().join("j.jsonl");
    let o = run(&sim.path, "mindcub3r", &j, &[]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{brick:?}: {}", stderr(&o));
    let lines = json(&o);
    let scanned = lines.iter().find(|l| l["type"] == "scanned").unwrap();
    assert!(scanned["rescans"].as_u64().unwrap() >= 1, "{scanned}");
    assert_eq!(lines.last().unwrap()["reached_target"], true);
    assert!(solved(&sim.cube().0));
}

#[test]
fn a_failed_tilt_in_the_scan_is_met_with_a_whole_new_scan_on_both_verifications() {
    a_failed_tilt_in_the_scan_is_met_with_a_whole_new_scan(None, "100");
    // In-process, the simulator's read-back finds the cube although the new scan began
    // with it turned whole.
    let o = super::support::cubot(&[
        "run",
        "--sim",
        "--seed",
        "1003",
        "--speed",
        "100",
        "--faults",
        "tilt-fail@3",
        "--json",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = json(&o).pop().unwrap();
    assert_eq!(s["verified_by"], "simulator read-back", "{s}");
    assert_eq!(s["reached_target"], true, "{s}");
}

#[test]
fn on_lego_firmware_a_failed_tilt_in_the_scan_is_met_with_a_whole_new_scan() {
    let Some(dir) = firmware_brick() else { return };
    a_failed_tilt_in_the_scan_is_met_with_a_whole_new_scan(Some(dir.to_string_lossy().into()), "4");
}

#[test]
fn a_failed_tilt_is_caught_by_the_check_after_execution() {
    a_failed_tilt_is_caught_and_solved_again(None, "100");
}

#[test]
fn a_layer_left_out_of_square_stops_the_run_and_the_squared_cube_resumes() {
    a_layer_left_out_of_square_stops_the_run_and_says_so(None, "100");
}

#[test]
fn on_lego_firmware_a_failed_tilt_is_caught_by_the_check_after_execution() {
    let Some(dir) = firmware_brick() else { return };
    a_failed_tilt_is_caught_and_solved_again(Some(dir.to_string_lossy().into()), "4");
}

#[test]
fn on_lego_firmware_a_layer_left_out_of_square_stops_the_run_and_says_so() {
    let Some(dir) = firmware_brick() else { return };
    a_layer_left_out_of_square_stops_the_run_and_says_so(Some(dir.to_string_lossy().into()), "4");
}
