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
    "--search-ms",
    "300",
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

/// `cubot ARGS --json` with the [`FAST`] options.
fn fast(args: &[&str]) -> std::process::Output {
    let mut all = args.to_vec();
    all.push("--json");
    all.extend_from_slice(FAST);
    cubot(&all)
}

fn run(extra: &[&str]) -> std::process::Output {
    fast(&[&["run"], extra].concat())
}

/// `cubot run --resume JOURNAL --sim`, fast.
fn resume(journal: &str) -> std::process::Output {
    fast(&["run", "--resume", journal, "--sim"])
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
        o = resume(i["journal"].as_str().unwrap());
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
    // Begun before the scan, started when execution began.
    assert_eq!(lines[0]["type"], "begun");
    assert_eq!(lines[1]["type"], "start");
    let steps = lines.iter().filter(|l| l["type"] == "step").count();
    if resumes == 0 {
        assert_eq!(steps as u64, s["actions"].as_u64().unwrap());
    }
    assert_eq!(lines.last().unwrap()["type"], "end");
}

#[test]
fn the_mindcub3r_plans_while_its_last_face_is_read_and_the_line_robot_after_its_scan() {
    for (robot, ahead) in [("mindcub3r", true), ("line", false)] {
        let o = run(&["--sim", "--robot", robot, "--seed", "21"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let events = json_lines(&stdout(&o));
        let planned = events.iter().find(|e| e["type"] == "planned").unwrap();
        assert_eq!(planned["ahead"], ahead, "{robot}: {planned}");
        // The plan is the one executed, for the cube the whole scan saw.
        let s = events.last().unwrap();
        check_summary(s);
        assert_eq!(s["solution"], planned["solution"], "{robot}");
    }
}

#[test]
fn search_nodes_makes_the_robot_cost_search_deterministic() {
    // A node budget instead of a time budget: the same run twice plans the same solution.
    let args = ["--sim", "--seed", "5", "--search-nodes", "20000"];
    let (a, b) = (run(&args), run(&args));
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    assert_eq!(b.status.code(), Some(0), "{}", stderr(&b));
    let (a, b) = (last(&a), last(&b));
    check_summary(&a);
    assert_eq!(a["solution"], b["solution"]);
    assert_eq!(a["robot_seconds"], b["robot_seconds"]);
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
    let o = fast(&["restore", f.to_str().unwrap(), "--sim", "--seed", "22"]);
    let (s, _) = to_the_end(o);
    check_summary(&s);
    assert_eq!(s["target"].as_str().unwrap(), state);
    // `--target @FILE` takes the same file as --target-file does.
    let at = format!("@{}", f.display());
    let (s, _) = to_the_end(run(&["--sim", "--seed", "23", "--target", &at]));
    check_summary(&s);
    assert_eq!(s["target"].as_str().unwrap(), state);
    // And `solve @FILE` solves the saved state.
    let o = cubot(&["solve", &at]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 1, "{}", stdout(&o));
}

#[test]
fn interrupted_run_resumes_from_its_journal() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j.jsonl");
    // The link goes silent part way through the execution: from the brick's 13th
    // program on (three homing the arms, six scan faces, then chunks of primitives).
    let o = run(&[
        "--sim",
        "--seed",
        "16",
        "--faults",
        "silent@p13",
        "--journal",
        j.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let i = last(&o);
    assert_eq!(i["type"], "interrupted", "{i}");
    assert_eq!(i["journal"].as_str().unwrap(), j.to_str().unwrap());
    assert!(i["actions"].as_u64().unwrap() > 0);
    let state = i["state"].as_str().unwrap();
    assert_eq!(state.len(), 54);
    assert!(stderr(&o).contains("--resume"));
    let (s, _) = to_the_end(resume(j.to_str().unwrap()));
    check_summary(&s);
    assert_eq!(s["resumed"], true);
}

/// A resume says whether the cube it found is one the journal allows, and that it plans
/// the rest from it (it always does: a resume's plan starts from where it finds the cube).
#[test]
fn a_resume_says_which_state_it_found_and_plans_the_rest_from_it() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j.jsonl");
    let j = j.to_str().unwrap();
    let o = run(&[
        "--sim",
        "--seed",
        "16",
        "--faults",
        "silent@p13",
        "--journal",
        j,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // FAST but for -q: the resume's line is a note on stderr.
    let loud: Vec<&str> = FAST.iter().copied().filter(|a| *a != "-q").collect();
    let o = cubot(&[&["run", "--resume", j, "--sim"][..], &loud].concat());
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("resume: the cube is "))
        .unwrap_or_else(|| panic!("{err}"));
    // The link fell silent with actions in flight: two states are possible.
    assert!(
        line.ends_with(
            "one of the 2 states the journal allows (actions were in flight); planning the rest from it"
        ),
        "{line}"
    );
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
    assert_eq!(i["actions"], 5);
    assert!(i["reason"].as_str().unwrap().contains("STALL"));
    let o = resume(j.to_str().unwrap());
    assert!(o.status.success(), "{}", stderr(&o));
    let s = last(&o);
    check_summary(&s);
    assert_eq!(s["robot"], "line");
}

#[test]
fn a_sim_resume_simulates_the_journals_cube_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("pink.jsonl");
    let j = j.to_str().unwrap();
    let o = run(&[
        "--sim",
        "--robot",
        "line",
        "--seed",
        "43",
        "--palette",
        "no-white",
        "--faults",
        "stall@6",
        "--journal",
        j,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let start: serde_json::Value = std::fs::read_to_string(j)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|l| l["type"] == "start")
        .unwrap();
    assert_eq!(
        start["connection"]["simulator"],
        serde_json::json!({"seed": 43, "palette": "no-white"}),
        "{start}"
    );
    // A new run is not let overwrite the stopped run's journal.
    let o = cubot(&["run", "--sim", "--journal", j, "-q"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("it holds a run that did not finish")
            && stderr(&o).contains(&format!(
                "resume it with `cubot run --resume {j} --sim --seed 43 --palette no-white --speed"
            )),
        "{}",
        stderr(&o)
    );
    // A given palette that differs is warned of (and the run still goes on with it).
    let resume = |extra: &[&str]| {
        let args = [
            "run",
            "--resume",
            j,
            "--sim",
            "--speed",
            "5000",
            "--search-ms",
            "300",
        ];
        cubot(&[&args[..], extra].concat())
    };
    let o = resume(&["--palette", "faded", "--journal", &format!("{j}.copy")]);
    assert!(
        stderr(&o).contains("note: the simulator differs from the journal's run: --palette faded (the journal's run: no-white)"),
        "{}",
        stderr(&o)
    );
    // Left out, the journal's seed and palette are taken, and said.
    let o = resume(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("simulator: --seed 43 --palette no-white, as in the journal's run"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn vv_logs_a_line_robots_lines_as_sent_and_received() {
    let o = cubot(&[
        "run",
        "--sim",
        "--robot",
        "line",
        "--seed",
        "46",
        "--speed",
        "5000",
        "--search-ms",
        "0",
        "-vv",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("line > 1 CAPS\n"), "{e}");
    assert!(e.contains("line < 1 OK proto=1 "), "{e}");
    assert!(
        e.lines()
            .any(|l| l.starts_with("line > ") && l.contains(" MOVE ")),
        "{e}"
    );
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

// ----- the robot-cost search (library level, shared solver tables) -----

fn solver() -> &'static cubot::solver::Solver {
    static SOLVER: std::sync::OnceLock<cubot::solver::Solver> = std::sync::OnceLock::new();
    SOLVER.get_or_init(|| {
        cubot::solver::Solver::new(&cubot::solver::TableOptions {
            cache_dir: Some(crate::support::cache_dir()),
            ..Default::default()
        })
        .expect("solver tables")
    })
}

fn after_scan() -> cubot::robot::mindcub3r::cost::RobotState {
    let o = cubot::robot::mindcub3r::scan_steps().iter().flatten().fold(
        cubot::robot::mindcub3r::model::Orientation::IDENTITY,
        |o, &p| o.after(p),
    );
    cubot::robot::mindcub3r::cost::RobotState::new(o)
}

fn budget(nodes: u64, bound: Option<f64>) -> cubot::solver::costed::CostedOptions {
    cubot::solver::costed::CostedOptions {
        max_nodes: Some(nodes),
        time_limit: std::time::Duration::from_secs(120),
        bound,
        solutions: 4,
        ..Default::default()
    }
}

#[test]
fn costed_search_returns_valid_solutions_and_never_loses() {
    use cubot::robot::mindcub3r::cost::CostModel;
    use cubot::robot::mindcub3r::planner::Planner;
    use rand::SeedableRng;
    let solver = solver();
    let planner = Planner::new(CostModel::default());
    let start = after_scan();
    let sc = planner.sequence_cost(start);
    let solved = FaceletCube::solved(Size::Three);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(8);
    let (mut old_total, mut new_total) = (0.0, 0.0);
    for _ in 0..6 {
        let cube = cubot::cube::random_state(Size::Three, &mut rng);
        let opts = cubot::solver::SolveOptions {
            solutions: 20,
            max_length: 21,
            ..Default::default()
        };
        let cands = solver.solve(&cube, &solved, &opts).unwrap();
        let (_, old) = planner.choose(&cands, start).unwrap();
        let out = solver
            .solve_costed(&cube, &solved, &sc, &budget(150_000, Some(old.seconds)))
            .unwrap();
        assert!(out.nodes >= 150_000 || out.complete);
        for w in out.solutions.windows(2) {
            assert!(w[0].cost <= w[1].cost, "cheapest first");
        }
        for s in &out.solutions {
            assert!(s.cost < old.seconds, "{} ≥ bound {}", s.cost, old.seconds);
            let mut c = cube.clone();
            c.apply(&s.alg).unwrap();
            assert!(c.is_solved(), "{} does not solve {cube}", s.alg);
            // The search priced its order; the automaton and the DP may swap commuting
            // pairs (cheaper or equal), and agree with each other exactly.
            let priced = sc.cost(&s.alg).unwrap();
            assert!(priced <= s.cost + 1e-3);
            let plan = planner.plan(&s.alg, start).unwrap();
            assert!((plan.seconds - priced).abs() < 1e-3);
            let mut robot = cubot::robot::mindcub3r::frames::to_robot(&cube, &start.orientation);
            cubot::robot::mindcub3r::frames::apply_primitives(&mut robot, &plan.primitives);
            assert!(robot.is_solved());
        }
        let mut all = cands.clone();
        all.extend(out.solutions.iter().map(|s| s.alg.clone()));
        let (_, new) = planner.choose(&all, start).unwrap();
        assert!(new.seconds <= old.seconds + 1e-9);
        old_total += old.seconds;
        new_total += new.seconds;
    }
    assert!(
        new_total < 0.97 * old_total,
        "costed {new_total} vs candidates {old_total}"
    );
}

#[test]
fn costed_search_reaches_any_target_and_refuses_what_it_cannot_do() {
    use cubot::robot::mindcub3r::cost::CostModel;
    use cubot::robot::mindcub3r::planner::Planner;
    use rand::SeedableRng;
    let solver = solver();
    let sc = Planner::new(CostModel::default()).sequence_cost(after_scan());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let start = cubot::cube::random_state(Size::Three, &mut rng);
    let target = cubot::cube::random_state(Size::Three, &mut rng);
    let out = solver
        .solve_costed(&start, &target, &sc, &budget(50_000, None))
        .unwrap();
    assert!(!out.solutions.is_empty());
    for s in &out.solutions {
        let mut c = start.clone();
        c.apply(&s.alg).unwrap();
        assert_eq!(c.colors(), target.colors());
    }
    // Already at the target: the empty solution, free.
    let out = solver
        .solve_costed(&start, &start, &sc, &budget(1000, None))
        .unwrap();
    assert_eq!(out.solutions[0].alg, Alg::new());
    assert_eq!(out.solutions[0].cost, 0.0);
    // A bound nothing can beat: no solutions, no error.
    let out = solver
        .solve_costed(&start, &target, &sc, &budget(20_000, Some(1.0)))
        .unwrap();
    assert!(out.solutions.is_empty());
    // 2x2x2 and mismatched sizes are refused with a reason.
    let two = FaceletCube::solved(Size::Two);
    assert!(solver
        .solve_costed(&two, &two, &sc, &budget(10, None))
        .is_err());
    assert!(solver
        .solve_costed(&start, &two, &sc, &budget(10, None))
        .is_err());
}

#[test]
fn bench_robot_reports_baseline_candidates_and_costed_search() {
    let out = cubot(&[
        "--json",
        "bench",
        "robot",
        "--cubes",
        "2",
        "--solutions",
        "5",
        "--search-nodes",
        "20000",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let rows: Vec<_> = lines
        .iter()
        .filter(|v| v["type"] == "bench-robot")
        .collect();
    assert_eq!(rows.len(), 3);
    let secs = |i: usize| rows[i]["mean_robot_seconds"].as_f64().unwrap();
    // The costed row never loses to the candidates it was bounded by (up to the backlash
    // estimate the planner weighs and the simulator's clock does not count).
    assert!(secs(2) <= secs(1) + 0.1, "{} > {}", secs(2), secs(1));
    assert!(secs(1) < secs(0));
    for r in &rows {
        assert!(r["mean_face_turns"].as_f64().unwrap() > 5.0);
        assert!(r["mean_solve_seconds"].as_f64().is_some());
    }
    let ratio = lines
        .iter()
        .find(|v| v["type"] == "bench-robot-ratio")
        .unwrap();
    assert!(ratio["ratio"].as_f64().unwrap() < 1.0);
    // The counting floor holds for any planner: the plans executed here are above it,
    // and on the timings of calibration/mindcub3r.toml it is 37.15 s.
    let floor = lines
        .iter()
        .find(|v| v["type"] == "bench-robot-floor")
        .unwrap();
    let f = floor["mean_robot_seconds_at_least"].as_f64().unwrap();
    assert!(f > 37.1 && f < 37.2, "{floor}");
    assert!(f < secs(2), "{f} >= {}", secs(2));
}

#[test]
fn bench_robot_end_to_end_runs_in_parallel_and_judges_by_the_simulator() {
    let out = cubot(&[
        "bench",
        "robot",
        "--cubes",
        "0",
        "--runs",
        "3",
        "--jobs",
        "3",
        "--palettes",
        "faded",
        "--seed",
        "4242",
        "--json",
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let v = last(&out);
    assert_eq!(v["type"], "bench-robot-e2e");
    assert_eq!(v["palette"], "faded");
    assert_eq!(v["runs"], 3);
    assert_eq!(v["reached"], 3, "{v}");
    assert_eq!(v["false_success"], 0);
    let bad = cubot(&[
        "bench",
        "robot",
        "--cubes",
        "0",
        "--runs",
        "1",
        "--palettes",
        "plaid",
    ]);
    assert_eq!(bad.status.code(), Some(2), "stderr: {}", stderr(&bad));
}

#[test]
fn bench_run_times_every_phase_and_judges_by_the_simulator() {
    let out = cubot(&[
        "--json",
        "bench",
        "run",
        "--runs",
        "1",
        "--latencies",
        "0,60",
        "--speed",
        "20",
        "--search-ms",
        "200",
        "--solutions",
        "3",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&stdout(&out));
    let rows: Vec<_> = lines.iter().filter(|v| v["type"] == "bench-run").collect();
    assert_eq!(rows.len(), 2);
    for r in rows {
        assert_eq!(r["reached"], 1, "{r}");
        assert_eq!(r["false_reached"], 0, "{r}");
        let phase = |k: &str| r["phases"][k]["mean"].as_f64().unwrap();
        for k in ["home", "scan", "solve", "execute", "verify"] {
            assert!(phase(k) >= 0.0, "{k}: {r}");
        }
        // Reading six faces and executing a plan take real (simulated) time.
        assert!(phase("scan") > 0.0 && phase("execute") > 0.0, "{r}");
        let sum: f64 = ["home", "scan", "solve", "execute", "verify"]
            .iter()
            .map(|k| phase(k))
            .sum();
        assert!((sum - phase("total")).abs() < 1e-6, "{r}");
    }
}

#[test]
fn bench_run_plans_at_the_links_latency_whatever_the_simulators_speed() {
    // The simulator runs on a pty at `--speed`; a round trip measured on the wall clock
    // would shrink with the speed and make the plan's predicted robot time depend on it.
    let planned = |speed: &str| {
        let o = cubot(&[
            "--json",
            "bench",
            "run",
            "--runs",
            "1",
            "--seed",
            "4",
            "--latencies",
            "60",
            "--speed",
            speed,
            "--search-ms",
            "0",
            "--jobs",
            "1",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let lines = json_lines(&stdout(&o));
        let one = lines
            .iter()
            .find(|v| v["type"] == "bench-run-one")
            .expect("a run's line");
        assert_eq!(one["simulator_at_target"], true, "{one}");
        one["planned_robot_seconds"].as_f64().expect("planned")
    };
    let (slow, fast) = (planned("20"), planned("60"));
    assert!(slow > 10.0, "{slow}");
    assert_eq!(slow, fast, "the plan's robot time at speed 20 and at 60");
}

#[test]
fn a_camera_run_on_the_simulator_measures_its_execution_on_the_simulators_clock() {
    // The camera scanner wraps the robot; the execution is still the robot's, timed in
    // robot time (at speed 50 the wall clock would show a fiftieth of it).
    let o = cubot(&[
        "--json",
        "run",
        "--sim",
        "--scanner",
        "camera",
        "--speed",
        "50",
        "--search-ms",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines = json_lines(&stdout(&o));
    let summary = lines.last().expect("a summary");
    let planned = summary["robot_seconds"].as_f64().expect("planned");
    let measured = summary["measured_seconds"].as_f64().expect("measured");
    assert!(
        (measured - planned).abs() < 0.25 * planned,
        "planned {planned} s, measured {measured} s: {summary}"
    );
}

/// A reader that goes away (`cubot run … 2>&1 | head`) loses the rest of the output, not
/// the run: it goes on to its end, its journal complete, and exits as it would have.
#[test]
fn a_run_whose_output_is_closed_early_still_ends_as_it_would_have() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j.jsonl");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_cubot"))
        .args([
            "run",
            "--sim",
            "--seed",
            "13",
            "--speed",
            "200",
            "--journal",
        ])
        .arg(&j)
        .env("CUBOT_CACHE_DIR", super::support::cache_dir())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
    let text = std::fs::read_to_string(&j).unwrap();
    assert!(text.contains("\"type\":\"end\""), "{text}");
}

/// The `solved` record and the summary count the same candidates (the solver's); the
/// summary's `planned_from` adds the robot-cost search's.
#[test]
fn the_solved_record_and_the_summary_agree_on_the_candidates() {
    // Here the robot-cost search adds one candidate to the solver's 130.
    let o = run(&["--sim", "--seed", "15", "--search-nodes", "100000"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let events = json_lines(&stdout(&o));
    let solved = events.iter().find(|e| e["type"] == "solved").unwrap();
    let s = events.last().unwrap();
    check_summary(s);
    assert_eq!(s["candidates"], solved["candidates"], "{s}");
    assert!(
        s["planned_from"].as_u64().unwrap() > s["candidates"].as_u64().unwrap(),
        "{s}"
    );
}

/// A cube at its target already: one line says so in place of the solve and the plan,
/// and the summary's solution is not an empty string; both robots' solve lines read well.
#[test]
fn a_cube_at_its_target_already_is_said_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j.jsonl");
    let j = j.to_str().unwrap();
    let args = ["--speed", "5000", "--search-ms", "0"];
    let o = cubot(&[&["run", "--sim", "--seed", "21", "--journal", j][..], &args].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = cubot(&[&["run", "--resume", j, "--sim"][..], &args].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.lines()
            .any(|l| l == "solved: the cube is at its target already; nothing turns"),
        "{err}"
    );
    assert!(!err.contains("plan:"), "{err}");
    assert!(
        stdout(&o).contains("\nsolution     none (the cube was at its target already)\n"),
        "{}",
        stdout(&o)
    );
    let o = cubot(
        &[
            &["run", "--sim", "--robot", "line", "--seed", "21"][..],
            &args,
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "; the plan is the cheapest of them for the robot, not always the fewest turns"
        ),
        "{}",
        stderr(&o)
    );
}

/// Each round of re-reading is said as it begins (a `rereading` line naming the stickers),
/// and a doubt that is the colour profile against steady readings (a profile of another
/// cube: here the standard cube's, on a cube with no white) is not read again for minutes:
/// it is said at once, with what to do.
#[test]
fn rereads_are_told_and_a_profile_of_another_cube_is_said_without_rereading() {
    let o = run(&[
        "--sim", "--robot", "line", "--seed", "4", "--faults", "misread",
    ]);
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let rereads: Vec<&serde_json::Value> =
        lines.iter().filter(|l| l["type"] == "rereading").collect();
    assert!(!rereads.is_empty(), "{}", stdout(&o));
    for (k, r) in rereads.iter().enumerate() {
        assert_eq!(r["rescan"], k + 1, "{r}");
        assert_eq!(r["whole"], false, "{r}");
        assert!(!r["stickers"].as_array().unwrap().is_empty(), "{r}");
    }
    let o = run(&[
        "--sim",
        "--seed",
        "2026",
        "--palette",
        "no-white",
        "--profile",
        "calibration/ev3-standard.toml",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!stdout(&o).contains("\"rereading\""), "{}", stdout(&o));
    let e = stderr(&o);
    assert!(
        e.contains("is in doubt (not re-scanned)") && e.contains("Run without --profile"),
        "{e}"
    );
}
