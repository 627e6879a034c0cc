//! One-command calibration on the robot (`cubot calibrate --sim/--port`), its refusals, and
//! one flag per kind of file: each file checked to be its kind and of the scanner's scale
//! before anything moves.

use crate::support::{cubot, root, stderr, stdout};

fn path(dir: &tempfile::TempDir, name: &str) -> String {
    dir.path().join(name).to_str().unwrap().to_string()
}

#[test]
fn calibrate_on_the_simulated_robot_then_run_with_the_profile() {
    let dir = tempfile::tempdir().unwrap();
    let (profile, raw) = (path(&dir, "mycube.toml"), path(&dir, "solved.json"));
    let o = cubot(&[
        "calibrate",
        "--sim",
        "--speed",
        "500",
        "--palette",
        "no-white",
        "-o",
        &profile,
        "--raw-out",
        &raw,
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), format!("wrote {profile}"));
    let text = std::fs::read_to_string(&profile).unwrap();
    assert!(text.contains("scale = \"ev3-raw\""), "{text}");
    // The raw scan is a scan of the solved cube in EV3 counts: calibrating from it again
    // gives the same profile.
    let raw_text = std::fs::read_to_string(&raw).unwrap();
    assert!(raw_text.contains("\"scale\": \"ev3-raw\""), "{raw_text}");
    let again = path(&dir, "again.toml");
    let o = cubot(&["calibrate", &raw, "-o", &again]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&again).unwrap(), text);
    // A run uses it.
    let o = cubot(&[
        "run",
        "--sim",
        "--seed",
        "21",
        "--palette",
        "no-white",
        "--speed",
        "2000",
        "--profile",
        &profile,
        "--search-ms",
        "200",
        "--solutions",
        "3",
        "-q",
        "--json",
    ]);
    let last: serde_json::Value = stdout(&o)
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no JSON: {}", stderr(&o)));
    assert_eq!(o.status.code(), Some(0), "{last}; {}", stderr(&o));
    assert_eq!(last["reached_target"], true, "{last}");
    assert_eq!(last["scan_confident"], true, "{last}");
}

#[test]
fn calibrate_refuses_scans_that_cannot_be_of_a_solved_cube() {
    let dir = tempfile::tempdir().unwrap();
    let out = path(&dir, "p.toml");
    // A scan that sees no cube stops as it does everywhere (exit 2), before a profile.
    for (faults, why) in [
        (
            "covered",
            "the scan sees no cube: every reading is dark (the brightest is 0, 0, 0",
        ),
        ("empty", "the scan sees no cube: every reading is dark"),
    ] {
        let o = cubot(&[
            "calibrate",
            "--sim",
            "--speed",
            "500",
            "--faults",
            faults,
            "-o",
            &out,
            "-q",
        ]);
        assert_eq!(o.status.code(), Some(2), "{faults}: {}", stderr(&o));
        assert!(stderr(&o).contains(why), "{faults}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("nothing was written: put the solved cube in the tray (or uncover the sensor), then calibrate again"),
            "{faults}: {}",
            stderr(&o)
        );
        assert!(!std::path::Path::new(&out).exists());
    }
    // An all-zero scan file, and a scrambled cube.
    let zero = path(&dir, "zero.json");
    let facelets = vec![[0, 0, 0]; 54];
    std::fs::write(
        &zero,
        serde_json::json!({"size": 3, "scale": "ev3-raw", "facelets": facelets}).to_string(),
    )
    .unwrap();
    let o = cubot(&["calibrate", &zero, "-o", &out]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("every reading is dark"),
        "{}",
        stderr(&o)
    );
    // A robot's flags with a scan file would do nothing: refused, naming both.
    let o = cubot(&["calibrate", &zero, "-o", &out, "--palette", "no-white"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot be used with") && stderr(&o).contains("--palette"),
        "{}",
        stderr(&o)
    );
    assert!(!std::path::Path::new(&out).exists());
    // A real solved scan (EV3) with two stickers of different colours swapped.
    let real = root().join("samples/realdata/cases/ms-solved-2024-06-05_23-36-17.json");
    let mut case: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(real).unwrap()).unwrap();
    let f = case["facelets"].as_array_mut().unwrap();
    f.swap(0, 9);
    let swapped = path(&dir, "swapped.json");
    std::fs::write(&swapped, case.to_string()).unwrap();
    let o = cubot(&["calibrate", &swapped, "-o", &out]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("refused: stickers U1 R1 look more like another face's colour")
            && stdout(&o).contains("Then calibrate again (a new scan)"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn each_kind_of_file_is_checked_before_anything_moves() {
    let dir = tempfile::tempdir().unwrap();
    let cal = root().join("calibration");
    let f = |n: &str| cal.join(n).to_str().unwrap().to_string();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["run".into(), "--sim".into(), "--profile".into(), f("camera-1920x1080-example.toml")],
            "is a camera rig, not a colour profile: a camera rig goes with --rig, a colour profile with --profile",
        ),
        (
            vec!["run".into(), "--sim".into(), "--robot-config".into(), f("standard.toml")],
            "is a colour profile, not a robot configuration",
        ),
        (
            vec!["robot".into(), "scan".into(), "--sim".into(), "--profile".into(), f("mindcub3r.toml")],
            "is a robot configuration, not a colour profile",
        ),
        (
            vec!["robot".into(), "scan".into(), "--sim".into(), "--profile".into(), f("standard.toml")],
            "was learned on rgb8 readings, but this scanner reads ev3-raw: learn one with it, `cubot calibrate -o FILE` with the cube solved in the robot",
        ),
        (
            vec!["resolve".into(), f("ev3-standard.toml")],
            "is a colour profile, not a scan",
        ),
        (
            // A sensor's scan with a camera's profile: the flag named, and how to learn one.
            vec![
                "resolve".into(),
                root()
                    .join("samples/realdata/cases/ms-solved-2024-06-05_23-36-17.json")
                    .to_str()
                    .unwrap()
                    .to_string(),
                "--profile".into(),
                f("standard.toml"),
            ],
            "standard.toml was learned on rgb8 readings, but this scan holds ev3-raw readings: give a profile learned on ev3-raw readings, or learn one from a scan of the solved cube on that scale (`cubot calibrate SOLVED.json -o FILE`)",
        ),
        (
            vec![
                "calibrate".into(),
                "--sim".into(),
                "-o".into(),
                // A robot configuration in the way of the output.
                {
                    let p = dir.path().join("robot.toml");
                    std::fs::copy(cal.join("mindcub3r.toml"), &p).unwrap();
                    p.to_str().unwrap().to_string()
                },
            ],
            "will not overwrite",
        ),
    ];
    for (args, msg) in cases {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = cubot(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(msg), "{a:?}: {}", stderr(&o));
        // Refused before the robot moved: nothing on stdout.
        assert!(stdout(&o).is_empty(), "{a:?}: {}", stdout(&o));
    }
}

#[test]
fn a_scrambled_cube_is_refused_saying_calibration_needs_it_solved() {
    let dir = tempfile::tempdir().unwrap();
    let scan = dir.path().join("scrambled.json");
    let o = cubot(&["synth-scan", "--seed", "5"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::write(&scan, &o.stdout).unwrap();
    let out = dir.path().join("p.toml");
    let o = cubot(&[
        "calibrate",
        scan.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("not solved: the scan resolves to ")
            && stdout(&o)
                .contains("calibrate learns from a solved cube: solve it and calibrate again"),
        "{}",
        stdout(&o)
    );
    assert!(!out.exists());
}
