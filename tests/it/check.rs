//! `cubot robot check` on the simulated brick: every message it can give, each from the
//! fault that causes it, and the polarity a host must set on every connect.

use std::time::Duration;

use cubot::color::{resolve, ResolveOptions};
use cubot::cube::Size;
use cubot::robot::ev3::driver::{Ev3, Ev3Error, Motor, MotorKind};
use cubot::robot::ev3::protocol::OutputPort;
use cubot::robot::link;
use cubot::robot::mindcub3r::{Config, MindCub3r};
use cubot::robot::sim::{spawn_pty, SimConfig};

use super::support::{cubot, stderr, stdout};

/// `cubot robot check --sim` with `faults` (the tray empty unless said otherwise).
fn check(faults: &str) -> std::process::Output {
    cubot(&[
        "robot", "check", "--sim", "--speed", "40", "--faults", faults,
    ])
}

#[test]
fn robot_check_proves_every_message_on_the_simulator() {
    // (faults, exit code, lines that must be printed)
    let cases: &[(&str, i32, &[&str])] = &[
        (
            "empty",
            0,
            &[
                "ok    brick          \"EV3\", firmware V1.09H, hardware V0.60",
                "ok    battery        8.10 V (100 %)",
                "ok    port A         large motor (tilt arm)",
                "ok    port C         medium motor (sensor arm)",
                "ok    sensor port 2  colour sensor",
                "ok    polarity       set to normal on motors A, B and C",
                "ok    homing         the colour-sensor arm and the tilt arm reached their stops",
                "ok    motor A        tilt arm: moved +30° and back as asked",
                "ok    motor B        turntable: moved +30° and back as asked",
                "ok    motor C        colour-sensor arm: moved -30° and back as asked",
                "over the empty turntable",
                "robot check: all well",
            ],
        ),
        (
            "swap=AC,empty",
            1,
            &[
                "FAIL  port A         port A holds a medium motor; MindCub3r expects the large motor of the tilt arm there: swap the cables of port A and port C",
                "FAIL  port C         port C holds a large motor; MindCub3r expects the medium motor of the sensor arm there: swap the cables of port C and port A",
                "WARN  motors         not moved: fix the wiring first",
                "robot check: 2 problems to fix, 1 warning",
            ],
        ),
        (
            "unplugged=B,empty",
            1,
            &["port B holds nothing; MindCub3r expects the large motor of the turntable there: plug the large motor of the turntable in there"],
        ),
        (
            "swap=23,empty",
            1,
            &["sensor port 2 holds nothing; MindCub3r expects the colour sensor there: the colour sensor is on sensor port 3: move its cable to sensor port 2 (or set ports.color_sensor = 3 in the robot configuration)"],
        ),
        (
            "wrong-device,empty",
            1,
            &["sensor port 2 holds an infrared sensor; MindCub3r expects the colour sensor there: put the colour sensor there instead"],
        ),
        (
            "battery=6350,empty",
            0,
            &["WARN  battery        6.35 V (11 %): low; the motors run slower"],
        ),
        (
            "battery=6000,empty",
            1,
            &[
                "FAIL  battery        6.00 V (0 %): flat; the motors will stall",
                "WARN  motors         not moved: charge the battery first",
                "robot check: 1 problem to fix, 1 warning",
            ],
        ),
        (
            "reversed=B,empty",
            0,
            &["ok    motor B        turntable: moved +30° and back as asked", "robot check: all well"],
        ),
        (
            "jammed=B,empty",
            1,
            &[
                "FAIL  motor B        turntable: stalled ",
                "° short of where its 30° test move sent it (no progress for ",
                "something blocks it",
                "WARN  not checked    the colour-sensor arm and the colour sensor: fix the fault above first, then check again",
                "robot check: 1 problem to fix, 1 warning",
            ],
        ),
        (
            "jammed=C,empty",
            1,
            &[
                "FAIL  homing         the colour-sensor arm (motor C) stalled ",
                "° short of where its homing move sent it (",
                "something blocks it",
                "WARN  motors         not moved: fix the homing first",
            ],
        ),
        (
            "covered",
            1,
            &["FAIL  sensor         the colour sensor reads 0, 0, 0: its window is covered"],
        ),
        // `robot check --sim` has the tray empty, as the check asks.
        (
            "",
            0,
            &["over the empty turntable", "robot check: all well"],
        ),
    ];
    for (faults, code, lines) in cases {
        let o = check(faults);
        let out = stdout(&o);
        assert_eq!(
            o.status.code(),
            Some(*code),
            "{faults}: {out}{}",
            stderr(&o)
        );
        for l in *lines {
            assert!(out.contains(l), "{faults}: no {l:?} in\n{out}");
        }
    }
}

#[test]
fn a_stall_anywhere_in_the_check_is_a_row_to_fix_not_an_error() {
    // `stall@N` stalls the motors from the N-th command on: swept over the whole check
    // (homing, the three jogs, the sensor arm's move over the turntable and back), each
    // stall is a FAIL row naming the motor, and the check exits 1 with its summary.
    for n in (1..=72).step_by(3) {
        let faults = format!("stall@{n},empty");
        let o = check(&faults);
        let (out, err) = (stdout(&o), stderr(&o));
        match o.status.code() {
            Some(0) => assert!(out.contains("robot check: all well"), "{faults}: {out}"),
            Some(1) => assert!(
                (out.contains("FAIL  motor ") || out.contains("FAIL  homing "))
                    && out.contains("robot check: 1 problem to fix"),
                "{faults}: {out}"
            ),
            c => panic!("{faults}: exit {c:?}: {out}{err}"),
        }
        assert!(!err.contains("error:"), "{faults}: {err}");
    }
}

#[test]
fn ctrl_c_stops_the_check_with_its_rows_so_far_and_the_motors_stopped() {
    // At speed 1 the check takes some 4 s; a Ctrl-C 1.5 s in lands among its motions.
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_cubot"))
        .args(["robot", "check", "--sim", "--speed", "1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let o = child.wait_with_output().unwrap();
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(out.starts_with("ok    brick"), "{out}");
    assert!(
        err.contains("robot check stopped (Ctrl-C) after ")
            && err.contains(" rows: motors stopped; run it again for the rest"),
        "{err}"
    );
    // The tray is empty for a check: no word of a cube's faces, nor of the pty.
    assert!(!err.contains("cube") && !err.contains("/dev/"), "{err}");
}

#[test]
fn a_link_that_goes_silent_mid_check_keeps_its_rows_and_says_what_next() {
    let o = cubot(&["robot", "check", "--sim", "--faults", "silent@10"]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(out.starts_with("ok    brick"), "{out}");
    assert!(
        err.contains("robot check ended after 7 rows: the simulated brick stopped answering (")
            && err.contains("its motors stop by themselves; check the link")
            && err.contains("then run `cubot robot check` again"),
        "{err}"
    );
}

#[test]
fn a_cube_left_in_the_tray_is_named() {
    // A brick on a port (here a simulated one holding a cube): what a user who forgot to
    // take the cube out sees.
    let h = spawn_pty(SimConfig {
        speed: 40.0,
        ..SimConfig::default()
    })
    .unwrap();
    let o = cubot(&["robot", "check", "--port", h.path().to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(
        out.contains("WARN  sensor         the colour sensor reads")
            && out.contains("take the cube out of the tray"),
        "{out}"
    );
}

#[test]
fn an_arm_that_finds_no_stop_is_named_with_its_home_speed() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("robot.toml");
    std::fs::write(&config, "version = 1\n[timeouts]\nhome_ms = 1500\n").unwrap();
    let o = cubot(&[
        "robot",
        "check",
        "--sim",
        "--speed",
        "40",
        "--faults",
        "free=A,empty",
        "--robot-config",
        config.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(
        out.contains("FAIL  homing         the tilt arm found no end stop within 1500 ms at -25 %: if it turned away from its stop, flip the sign of arm.home_speed"),
        "{out}"
    );
}

#[test]
fn robot_check_json_has_one_line_per_finding_and_a_summary() {
    let o = cubot(&[
        "robot", "check", "--sim", "--speed", "40", "--faults", "swap=AC", "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines
        .iter()
        .any(|l| l["type"] == "check" && l["level"] == "fail" && l["topic"] == "port C"));
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "check-summary");
    assert_eq!(last["problems"], 2);
}

/// Moves motor B by +90° over a fresh driver; returns what the move said and the count
/// change (read by another fresh driver: a driver that saw an impossible count trusts none).
fn move_b(path: &std::path::Path) -> (Result<(), Ev3Error>, i32) {
    let mut ev3 = Ev3::new(link::open(path, None).unwrap());
    let mut b = Motor::new(OutputPort::B, MotorKind::Large, 1050.0);
    let from = ev3.count(OutputPort::B).unwrap();
    b.target = from;
    let r = ev3.move_to("B +90", &mut b, from + 90, 30, (10, 10));
    drop(ev3);
    std::thread::sleep(Duration::from_millis(50));
    let mut ev3 = Ev3::new(link::open(path, None).unwrap());
    (r, ev3.count(OutputPort::B).unwrap() - from)
}

#[test]
fn a_motor_left_reversed_runs_backwards_until_the_host_sets_its_polarity() {
    let cfg = SimConfig {
        seed: 7,
        speed: 40.0,
        faults: "reversed=B".parse().unwrap(),
        ..SimConfig::default()
    };
    let h = spawn_pty(cfg.clone()).unwrap();
    // Reversed, the count runs against the move: the driver's reach check sees a count
    // no forward move can give and stops the motor at once.
    let (r, moved) = move_b(h.path());
    assert!(
        matches!(r, Err(Ev3Error::Implausible { .. })),
        "reversed: {r:?}"
    );
    assert!(moved < -2, "reversed: the count fell by {moved}");
    let mut ev3 = Ev3::new(link::open(h.path(), None).unwrap());
    ev3.set_polarity(OutputPort::B.bit(), 1).unwrap();
    drop(ev3);
    let (r, moved) = move_b(h.path());
    r.unwrap();
    assert!(
        (85..=95).contains(&moved),
        "after OUTPUT_POLARITY 1: {moved}"
    );
    // Connecting sets it: a whole scan with the fault reads the cube.
    let h = spawn_pty(cfg).unwrap();
    let mut r = MindCub3r::connect(link::open(h.path(), None).unwrap(), Config::default()).unwrap();
    let scan = r.scan(Size::Three, &mut |_| {}).unwrap();
    let cube = resolve(&scan, &ResolveOptions::default()).unwrap().cube;
    assert_eq!(cube.to_letters(), h.initial_cube().to_letters());
}

#[test]
fn a_port_where_no_ev3_answers_is_asked_about_not_just_reported() {
    // A line-protocol robot on the port: it never answers EV3 frames.
    use std::io::BufRead;
    let mut sim = std::process::Command::new(env!("CARGO_BIN_EXE_cubot"))
        .args(["sim", "--pty", "--robot", "line", "--speed", "20"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(sim.stdout.take().unwrap()).lines();
    let path = lines.next().unwrap().unwrap();
    let o = cubot(&["robot", "check", "--port", &path]);
    sim.kill().ok();
    sim.wait().ok();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "nothing answered: is the brick on {path} switched on, and is it a MindCub3r's EV3?"
        )) && err.contains("`cubot run --robot line --port PATH`"),
        "{err}"
    );
}
