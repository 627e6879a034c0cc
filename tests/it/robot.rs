//! Integration tests: robot. Every test goes through a real pseudo-terminal: the driver
//! (or the raw EV3 link) against the in-process simulated brick, and `cubot sim --pty` as
//! a separate process driven by `cubot scan --robot` or by the driver in this process
//! (with fault injection).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cubot::color::{resolve, Palette, ResolveOptions};
use cubot::cube::{Alg, FaceletCube, Size};
use cubot::robot::ev3::driver::{Ev3, Ev3Error};
use cubot::robot::ev3::link::Ev3Link;
use cubot::robot::ev3::protocol::{decode_reply, DirectCommand, OutputPort, Reply};
use cubot::robot::mindcub3r::model::Primitive;
use cubot::robot::mindcub3r::{Config, MindCub3r, RobotError};
use cubot::robot::sim::{spawn_pty, SimConfig, SimHandle};

use super::support::{apply_primitive, plan_like, stderr, stdout};

fn sim_with(cfg: SimConfig) -> SimHandle {
    spawn_pty(cfg).expect("start the simulated brick")
}

fn sim(seed: u64, speed: f64) -> SimHandle {
    sim_with(SimConfig {
        seed,
        speed,
        ..SimConfig::default()
    })
}

fn connect(h: &SimHandle) -> MindCub3r {
    let link = cubot::robot::link::open(h.path(), Some(115_200)).expect("open the pty");
    MindCub3r::connect(link, Config::default()).expect("connect")
}

#[test]
fn primitives_move_the_virtual_cube_as_the_model_says() {
    let h = sim(1, 20.0);
    let mut r = connect(&h);
    r.home().unwrap();
    let mut expect = h.initial_cube().clone();
    for p in [
        Primitive::Tilt,
        Primitive::Spin(1),
        Primitive::Turn(1),
        Primitive::Turn(-1),
        Primitive::Spin(2),
        Primitive::Turn(2),
        Primitive::Tilt,
        Primitive::Spin(-1),
        Primitive::Turn(-2),
    ] {
        r.execute(p).unwrap();
        expect
            .apply(&Alg::from_moves(vec![p.as_move().unwrap()]))
            .unwrap();
        assert_eq!(
            h.cube().to_letters(),
            expect.to_letters(),
            "after {p:?}: {:?}",
            h.take_log()
        );
    }
    let log = h.take_log();
    assert!(log.iter().all(|l| !l.contains("fault")), "{log:?}");
}

fn scan_and_resolve(h: &SimHandle, size: Size) -> FaceletCube {
    let mut r = connect(h);
    r.home().unwrap();
    let t0 = h.clock();
    let scan = r.scan(size, &mut |_| {}).unwrap();
    let log = h.take_log();
    assert!(log.is_empty(), "simulator complained: {log:?}");
    assert!(h.clock() > t0);
    resolve(&scan, &ResolveOptions::default())
        .unwrap_or_else(|e| panic!("resolve: {e}"))
        .cube
}

#[test]
fn scan_of_a_solved_cube_resolves_to_solved() {
    let h = sim_with(SimConfig {
        seed: 3,
        speed: 25.0,
        start: Some(FaceletCube::solved(Size::Three)),
        ..SimConfig::default()
    });
    let cube = scan_and_resolve(&h, Size::Three);
    assert!(cube.is_solved(), "{}", cube.to_letters());
}

#[test]
fn scan_of_scrambled_cubes_gives_the_cube_as_it_sat_before_the_scan() {
    for (seed, palette) in [(11, Palette::Standard), (12, Palette::Faded)] {
        let h = sim_with(SimConfig {
            seed,
            speed: 25.0,
            palette,
            ..SimConfig::default()
        });
        let cube = scan_and_resolve(&h, Size::Three);
        assert_eq!(
            cube.to_letters(),
            h.initial_cube().to_letters(),
            "seed {seed}"
        );
        // The scan leaves the cube in the orientation given in "Scan order" of robot::mindcub3r's docs.
        assert_ne!(h.cube().to_letters(), h.initial_cube().to_letters());
    }
}

#[test]
fn scan_of_a_2x2x2() {
    let h = sim_with(SimConfig {
        seed: 21,
        speed: 25.0,
        size: Size::Two,
        ..SimConfig::default()
    });
    let cube = scan_and_resolve(&h, Size::Two);
    assert_eq!(cube.colors(), h.initial_cube().colors());
}

#[test]
fn rescan_reads_the_same_physical_stickers_again() {
    let h = sim(31, 25.0);
    let mut r = connect(&h);
    let scan = r.scan(Size::Three, &mut |_| {}).unwrap();
    let which = [0usize, 4, 13, 26, 40, 53];
    let again = r.rescan(&which).unwrap();
    for (&i, rgb) in which.iter().zip(&again) {
        let old = scan.facelets[i];
        let d: f64 = (0..3).map(|k| (old[k] - rgb[k]).abs()).sum::<f64>();
        let size: f64 = old.iter().sum::<f64>();
        assert!(d < 0.25 * size + 15.0, "sticker {i}: {old:?} then {rgb:?}");
    }
    assert!(h.take_log().is_empty());
}

#[test]
fn a_scan_takes_no_more_simulated_time_than_the_stock_program() {
    // robot::mindcub3r's "Timings": about 30 s for the whole scan. Counted as the simulated robot's motion
    // time (seconds with a motor running), so a busy host that is slow to send the next
    // command does not count against the scan's own sequence of moves.
    let h = sim(41, 3.0);
    let mut r = connect(&h);
    r.home().unwrap();
    let t0 = h.motion_seconds();
    r.scan(Size::Three, &mut |_| {}).unwrap();
    let took = h.motion_seconds() - t0;
    eprintln!("colour-sensor scan: {took:.1} simulated seconds of motion");
    assert!(
        took <= 30.0,
        "scan took {took:.1} simulated seconds of motion"
    );
}

/// `cubot sim --pty ...` as a child process: (child, pty path, cube line).
fn sim_process(args: &[&str]) -> (Child, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cubot"))
        .arg("sim")
        .arg("--pty")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start cubot sim");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let path = lines.next().unwrap().unwrap();
    let cube = lines.next().unwrap().unwrap();
    (child, path, cube)
}

fn scan_process(path: &str) -> std::process::Output {
    scan_process_with(path, &[])
}

fn scan_process_with(path: &str, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cubot"))
        .args(["scan", "--robot", "--port", path])
        .args(extra)
        .env("NO_COLOR", "1")
        .output()
        .expect("run cubot scan")
}

/// A copy of the shipped robot configuration in `dir` with every motion sent and polled
/// by the host (no programs on the brick; the shipped scanning speed suits host polling).
fn host_polled_config(dir: &std::path::Path) -> std::path::PathBuf {
    let text =
        std::fs::read_to_string(super::support::root().join("calibration/mindcub3r.toml")).unwrap();
    let text = text.replace("on_brick = true", "on_brick = false");
    let path = dir.join("host-polled.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn two_processes_sim_then_scan_prints_the_simulators_cube() {
    let (mut child, path, cube) = sim_process(&["--seed", "7", "--speed", "40"]);
    let out = scan_process(&path);
    child.kill().ok();
    child.wait().ok();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).split_whitespace().next(), Some(cube.as_str()));
}

#[test]
fn faults_give_exit_2_and_a_message_naming_the_command() {
    // Every motion polled by the host: each fault lands on a command of its own.
    let dir = tempfile::tempdir().unwrap();
    let config = host_polled_config(dir.path());
    let host = ["--robot-config", config.to_str().unwrap()];
    // A lost reply to a read is sent again: the scan goes on.
    let (mut child, path, cube) =
        sim_process(&["--seed", "8", "--speed", "40", "--faults", "drop@25"]);
    let out = scan_process_with(&path, &host);
    child.kill().ok();
    child.wait().ok();
    assert_eq!(out.status.code(), Some(0), "drop@25: {}", stderr(&out));
    assert_eq!(stdout(&out).split_whitespace().next(), Some(cube.as_str()));
    for (fault, expect) in [
        ("silent@40", "did not answer"),
        ("stall@38", "stalled"),
        (
            "wrong-device",
            "sensor port 2 holds an infrared sensor; MindCub3r expects the colour sensor there",
        ),
    ] {
        let (mut child, path, _) =
            sim_process(&["--seed", "8", "--speed", "40", "--faults", fault]);
        let out = scan_process_with(&path, &host);
        child.kill().ok();
        child.wait().ok();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{fault}: {err}");
        assert!(err.contains(expect), "{fault}: {err}");
        assert!(!err.contains("panicked"), "{fault}: {err}");
        if fault != "wrong-device" {
            // The message names the command that failed, in words (no opcode names),
            // and says the motors stopped.
            assert!(
                err.contains("motor ")
                    || err.contains("motors ")
                    || err.contains("colour sensor")
                    || err.contains("scan sample"),
                "{fault}: {err}"
            );
            assert!(
                !err.contains("OUTPUT_") && !err.contains("INPUT_"),
                "{fault}: {err}"
            );
            // Stopped only when the brick confirmed it; a silent brick cannot.
            let stop = match fault {
                "silent@40" => "the brick did not confirm the stop",
                _ => "motors stopped",
            };
            assert!(err.contains(stop), "{fault}: {err}");
        }
    }
    // Homing and the scan as programs on the brick (the default): a program that meets a
    // jammed turntable stops every motor itself and says what it waited for; a tilt arm
    // that turns freely finds no stop; a brick that goes silent during a program cannot
    // confirm a stop.
    for (fault, expect, stop) in [
        (
            "jammed=B",
            "did not finish within",
            "the brick stopped every motor",
        ),
        ("free=A", "did not reach its end stop", "motors stopped"),
        (
            "silent@p4",
            "did not answer",
            "the brick did not confirm the stop",
        ),
    ] {
        let (mut child, path, _) =
            sim_process(&["--seed", "8", "--speed", "40", "--faults", fault]);
        let out = scan_process(&path);
        child.kill().ok();
        child.wait().ok();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{fault}: {err}");
        assert!(err.contains(expect) && err.contains(stop), "{fault}: {err}");
        assert!(!err.contains("panicked"), "{fault}: {err}");
    }
}

#[test]
fn a_dead_port_is_exit_2() {
    let out = scan_process("/dev/cubot-no-such-port");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("--port /dev/cubot-no-such-port: no such port"),
        "{err}"
    );
    // The way to make a Bluetooth port is said as the README shows it.
    let readme =
        std::fs::read_to_string(env!("CARGO_MANIFEST_DIR").to_string() + "/README.md").unwrap();
    let bind = "sudo rfcomm bind 0 AA:BB:CC:DD:EE:FF 1";
    assert!(err.contains(bind) && readme.contains(bind), "{err}");
    // A USB serial port's name gets the USB hint only (a line robot's Arduino, say).
    let o = super::support::cubot(&["run", "--robot", "line", "--port", "/dev/ttyUSB97"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no such port: a USB serial port appears when the robot is plugged in")
            && !err.contains("rfcomm"),
        "{err}"
    );
}

/// A port another process holds (here this test, as a second cubot would) is said so,
/// not as the serial library's lock error.
#[test]
fn a_port_another_program_holds_is_said_so() {
    let h = sim(3, 20.0);
    let held = cubot::robot::link::open(h.path(), Some(115_200)).expect("open the pty");
    let path = h.path().to_str().unwrap().to_string();
    let o = super::support::cubot(&["robot", "home", "--port", &path]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "cannot open {path}: another program holds it (another cubot, or a terminal program)"
        )),
        "{err}"
    );
    drop(held);
}

#[test]
fn ctrl_c_stops_after_the_current_primitive_and_says_where_the_cube_is() {
    let (mut child, path, _) = sim_process(&["--seed", "9", "--speed", "5"]);
    let scan = Command::new(env!("CARGO_BIN_EXE_cubot"))
        .args(["scan", "--robot", "--port", &path])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Inside the scan (about 3.5 s at speed 5, after homing).
    std::thread::sleep(std::time::Duration::from_millis(1500));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(scan.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = scan.wait_with_output().unwrap();
    child.kill().ok();
    child.wait().ok();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("Ctrl-C: stopped ")
            && err.contains("motors stopped")
            && !err.contains("error:"),
        "{err}"
    );
    assert!(
        err.contains("the cube's faces now at top, right, front, bottom, left and back are"),
        "{err}"
    );
}

#[test]
fn the_scan_on_the_brick_uses_the_link_once_a_face_whatever_its_latency() {
    // 120 ms of reply latency: the host-polled scan lost its samples to it; the brick times
    // them itself, with one command per face.
    let h = sim_with(SimConfig {
        seed: 17,
        speed: 20.0,
        latency_ms: 120.0,
        palette: Palette::Faded,
        ..SimConfig::default()
    });
    let mut r = connect(&h);
    r.home().unwrap();
    let before = r.ev3().commands_sent;
    let scan = r.scan(Size::Three, &mut |_| {}).unwrap();
    let commands = r.ev3().commands_sent - before;
    assert_eq!(commands, 6, "one program per face");
    assert_eq!(
        scan.provenance.as_ref().unwrap()["read_at_rest"],
        serde_json::json!(0)
    );
    let cube = resolve(&scan, &ResolveOptions::default()).unwrap().cube;
    assert_eq!(cube.to_letters(), h.initial_cube().to_letters());
    assert!(h.take_log().is_empty());
}

#[test]
fn a_scan_program_stuck_on_a_motor_ends_at_its_deadline_naming_what_it_waited_for() {
    // A centre position past the sensor arm's mechanical stop: the arm pushes against the
    // stop and never gets there. The brick ends the program at its deadline (stopping the
    // motors itself: it answers nothing else meanwhile) and says what it was waiting for.
    let h = sim(5, 40.0);
    let link = cubot::robot::link::open(h.path(), Some(115_200)).unwrap();
    let mut config = Config::default();
    config.sensor_arm.centre = -900;
    let mut r = MindCub3r::connect(link, config).unwrap();
    r.home().unwrap();
    let e = r.scan(Size::Three, &mut |_| {}).unwrap_err();
    assert!(
        matches!(&e, RobotError::ProgramTimeout { face: 0, stage, .. } if stage.contains("centre")),
        "{e}"
    );
    assert!(
        e.to_string().contains("the brick stopped every motor"),
        "{e}"
    );
    // The brick answers again.
    r.ev3().nop().unwrap();
}

#[test]
#[ignore = "measurement: prints the simulated scan time at 0, 60 and 120 ms of link latency"]
fn measure_scan_time_with_link_latency() {
    // Simulated time follows wall time (speed 1), so the host's round trips count in full.
    let runs: Vec<(bool, f64)> = [true, false]
        .into_iter()
        .flat_map(|on_brick| [0.0, 60.0, 120.0].map(|l| (on_brick, l)))
        .collect();
    let out: Vec<String> = std::thread::scope(|sc| {
        let handles: Vec<_> = runs
            .iter()
            .map(|&(on_brick, latency)| {
                sc.spawn(move || {
                    let h = sim_with(SimConfig {
                        seed: 41,
                        speed: 1.0,
                        latency_ms: latency,
                        ..SimConfig::default()
                    });
                    let link = cubot::robot::link::open(h.path(), Some(115_200)).unwrap();
                    let mut config = Config::default();
                    config.scan.on_brick = on_brick;
                    let mut r = MindCub3r::connect(link, config).unwrap();
                    r.home().unwrap();
                    let t0 = h.clock();
                    let scan = r.scan(Size::Three, &mut |_| {}).unwrap();
                    let ok = resolve(&scan, &ResolveOptions::default())
                        .is_ok_and(|res| res.cube.to_letters() == h.initial_cube().to_letters());
                    format!(
                        "scan {}, {latency:>3} ms latency: {:.1} simulated seconds, read at rest {}, resolved exactly: {ok}",
                        if on_brick { "on the brick" } else { "polled by the host" },
                        h.clock() - t0,
                        scan.provenance.as_ref().and_then(|p| p.get("read_at_rest")).map_or("-".into(), |v| v.to_string()),
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for line in out {
        eprintln!("{line}");
    }
}

#[test]
fn step_by_step_commands_move_the_cube_on_the_simulator() {
    let (mut child, path, cube) = sim_process(&["--seed", "12", "--speed", "40"]);
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_cubot"))
            .arg("robot")
            .args(args)
            .args(["--port", &path])
            .output()
            .unwrap()
    };
    for args in [&["home"][..], &["tilt"], &["spin", "-1"], &["turn", "2"]] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    }
    let bad = run(&["spin", "3"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("not 3"));
    let out = scan_process(&path);
    child.kill().ok();
    child.wait().ok();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Tilt = x, spin -1 = y', turn 2 = D2 in the robot frame.
    let mut expect = FaceletCube::parse(&cube).unwrap();
    expect.apply(&Alg::parse("x y' D2").unwrap()).unwrap();
    // The scan names colours by the centres where they now sit: relabel the same way.
    let expect = FaceletCube::parse(&expect.to_letters()).unwrap();
    assert_eq!(
        stdout(&out).split_whitespace().next(),
        Some(expect.to_letters().as_str())
    );
}

#[test]
fn shipped_calibration_parses_and_matches_defaults() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("calibration/mindcub3r.toml");
    let c = Config::load(&path).unwrap();
    assert_eq!(c, Config::default());
    assert!(Config::parse("version = 2")
        .unwrap_err()
        .contains("version 2"));
    assert!(Config::parse("version = 1\n[arm]\nbogus = 3").is_err());
}

/// The raw EV3 link on a simulator's pty: messages as written, no driver in between.
fn raw_link(path: &std::path::Path) -> Ev3Link {
    Ev3Link::new(cubot::robot::link::open(path, Some(115_200)).expect("open the pty"))
}

/// Every reply that arrives within `wall`.
fn replies_within(link: &mut Ev3Link, wall: Duration) -> Vec<Reply> {
    let until = Instant::now() + wall;
    let mut out = Vec::new();
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return out;
        }
        match link.recv_message(left).unwrap() {
            Some(f) => out.push(decode_reply(&f).unwrap()),
            None => return out,
        }
    }
}

/// A turntable move of 270° (30/210/30 at 40 %, braked) that blocks on the brick until
/// the motor is done (E3 of the codec's worked examples).
fn blocking_move(reply: bool) -> DirectCommand {
    let b = OutputPort::B.bit();
    let mut c = if reply {
        DirectCommand::new()
    } else {
        DirectCommand::no_reply()
    };
    c.step_speed(b, 40, [30, 210, 30], true).output_ready(b);
    c
}

fn ping() -> DirectCommand {
    let mut c = DirectCommand::new();
    c.nop();
    c
}

#[test]
fn a_command_sent_while_another_runs_waits_and_runs_after_it() {
    let h = sim(51, 10.0);
    let mut link = raw_link(h.path());
    // Two commands that want a reply, back to back in one write: a move that runs for
    // about 0.7 simulated seconds, then a ping that arrives while it runs. The brick does
    // not read the ping until the move has ended, as LEGO's firmware does; then both
    // replies come, in order.
    let mut bytes = blocking_move(true).encode(1);
    bytes.extend(ping().encode(2));
    link.send(&bytes).unwrap();
    let got = replies_within(&mut link, Duration::from_millis(1500));
    let counters: Vec<(u16, bool)> = got.iter().map(|r| (r.counter, r.ok)).collect();
    assert_eq!(
        counters,
        [(1, true), (2, true)],
        "the move's, then the ping's"
    );
    let log = h.take_log();
    assert!(
        log.iter()
            .any(|l| l.contains("command 2 arrived while another was running")),
        "{log:?}"
    );
    // Free again: the next ping is answered.
    link.send(&ping().encode(3)).unwrap();
    let got = replies_within(&mut link, Duration::from_millis(500));
    assert_eq!(got.iter().map(|r| r.counter).collect::<Vec<_>>(), [3]);
}

#[test]
fn a_reply_command_during_a_no_reply_one_waits_for_it_too() {
    let h = sim(52, 10.0);
    let mut link = raw_link(h.path());
    let mut bytes = blocking_move(false).encode(1);
    bytes.extend(ping().encode(2));
    link.send(&bytes).unwrap();
    // The ping waits the move's 0.7 simulated seconds (70 ms of wall time here): not
    // answered at once.
    let early = replies_within(&mut link, Duration::from_millis(20));
    assert!(early.is_empty(), "{early:?}");
    let got = replies_within(&mut link, Duration::from_millis(1500));
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!((got[0].counter, got[0].ok), (2, true));
}

/// Round trips of pings through the driver, in wall milliseconds.
fn ping_round_trips(h: &SimHandle, n: usize) -> Vec<f64> {
    let mut ev3 = Ev3::new(cubot::robot::link::open(h.path(), Some(115_200)).unwrap());
    (0..n)
        .map(|_| {
            let t = Instant::now();
            ev3.nop().unwrap();
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect()
}

#[test]
fn latency_and_jitter_delay_every_reply() {
    let h = sim_with(SimConfig {
        seed: 53,
        speed: 1.0,
        faults: "latency=30,jitter=20".parse().unwrap(),
        ..SimConfig::default()
    });
    let rt = ping_round_trips(&h, 16);
    let (min, max) = rt
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
    // 30 ± 20 ms on every reply: never under 10 ms, and not all alike.
    assert!(min >= 9.0, "{rt:?}");
    assert!(max - min >= 8.0, "no jitter seen: {rt:?}");
    assert!(max < 1000.0, "{rt:?}");
}

#[test]
fn a_link_drop_out_loses_replies_for_its_time_then_the_brick_answers_again() {
    // The simulator as a process of its own, at wall speed: command 3 starts a drop-out
    // of 1.5 s.
    let (mut child, path, _) = sim_process(&["--seed", "54", "--faults", "dropout@3=1500"]);
    let mut ev3 = Ev3::new(cubot::robot::link::open(path.as_ref(), Some(115_200)).unwrap());
    ev3.timeouts.reply = Duration::from_millis(250);
    // Single pings (`nop` would send a lost one again).
    let nop = |ev3: &mut Ev3| ev3.call("NOP (ping)", &ping()).map(|_| ());
    nop(&mut ev3).unwrap();
    nop(&mut ev3).unwrap();
    let t0 = Instant::now();
    let e = nop(&mut ev3).unwrap_err();
    assert!(
        matches!(&e, Ev3Error::Timeout { command, .. } if command == "NOP (ping)"),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .starts_with("NOP (ping): the brick did not answer"),
        "{e}"
    );
    assert!(e.link_failed());
    // Keep pinging: lost until the drop-out ends, answered after.
    let back = loop {
        match nop(&mut ev3) {
            Ok(()) => break t0.elapsed(),
            Err(Ev3Error::Timeout { .. }) => {}
            Err(e) => panic!("{e}"),
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "never answered again"
        );
    };
    child.kill().ok();
    child.wait().ok();
    assert!(
        back >= Duration::from_millis(1400),
        "answered after {back:?}"
    );
    assert!(ev3.stale_discarded == 0, "lost replies never arrive late");
}

#[test]
fn a_drop_out_during_a_job_is_a_typed_error_naming_the_command() {
    let (mut child, path, _) = sim_process(&[
        "--seed",
        "55",
        "--speed",
        "10",
        "--faults",
        "dropout@40=30000",
    ]);
    let link = cubot::robot::link::open(path.as_ref(), Some(115_200)).unwrap();
    let mut r = MindCub3r::connect(link, Config::default()).unwrap();
    r.ev3().timeouts.reply = Duration::from_millis(400);
    let e = r
        .home()
        .and_then(|()| {
            for p in [Primitive::Tilt, Primitive::Spin(1), Primitive::Turn(1)].repeat(10) {
                r.execute(p)?;
            }
            Ok(())
        })
        .unwrap_err();
    child.kill().ok();
    child.wait().ok();
    match &e {
        RobotError::Ev3(Ev3Error::Timeout { command, ms, .. }) => {
            assert!(!command.is_empty());
            assert_eq!(*ms, 400);
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(
        e.to_string().contains("did not answer within 400 ms"),
        "{e}"
    );
}

/// `cubot run` of a line robot whose simulator (seed `seed`, speed 500) is its own process
/// on a pty; it must exit 0.
fn line_run_over_a_port(seed: &str, extra: &[&str]) -> std::process::Output {
    let (mut child, path, _) = sim_process(&["--robot", "line", "--seed", seed, "--speed", "500"]);
    let out = Command::new(env!("CARGO_BIN_EXE_cubot"))
        .args([
            "run",
            "--port",
            &path,
            "--robot",
            "line",
            "--search-ms",
            "0",
        ])
        .args(extra)
        .env("CUBOT_CACHE_DIR", super::support::cache_dir())
        .env("NO_COLOR", "1")
        .output()
        .expect("run cubot run");
    child.kill().ok();
    child.wait().ok();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    out
}

#[test]
fn a_run_over_a_port_verifies_by_re_scanning_and_says_so() {
    // The simulator as its own process: cubot cannot read its cube back, so it scans again.
    let out = line_run_over_a_port("5", &["--json"]);
    let lines: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let verifying = lines.iter().find(|v| v["type"] == "verifying").unwrap();
    assert_eq!(verifying["by"], "re-scan");
    let summary = lines.last().unwrap();
    assert_eq!(summary["verified_by"], "re-scan");
    assert_eq!(summary["reached_target"], true);
}

#[test]
fn chunks_on_the_brick_move_the_virtual_cube_as_the_model_says() {
    let h = sim(2, 20.0);
    let mut r = connect(&h);
    r.home().unwrap();
    let prims = plan_like();
    let mut expect = h.initial_cube().clone();
    let mut i = 0;
    let mut chunks = 0;
    while i < prims.len() {
        let n = r.chunk_len(&prims[i..]);
        let before = r.ev3().commands_sent;
        r.execute_chunk(&prims[i..i + n])
            .unwrap_or_else(|e| panic!("chunk at {i}: {e}: {:?}", h.take_log()));
        assert_eq!(r.ev3().commands_sent - before, 1, "one command a chunk");
        for &p in &prims[i..i + n] {
            apply_primitive(&mut expect, p);
        }
        assert_eq!(
            h.cube().to_letters(),
            expect.to_letters(),
            "after the chunk at {i}: {:?}",
            h.take_log()
        );
        i += n;
        chunks += 1;
    }
    // A second of motion holds an arm move with the tilt or turn beside it.
    assert!(chunks < prims.len(), "{chunks} chunks of {}", prims.len());
    let log = h.take_log();
    assert!(log.iter().all(|l| !l.contains("fault")), "{log:?}");
}

#[test]
fn a_chunk_answers_while_its_last_move_settles_and_what_follows_waits_for_it() {
    use Primitive::*;
    let busy_after = |early: bool| {
        let h = sim(4, 1.0);
        let link = cubot::robot::link::open(h.path(), Some(115_200)).expect("open the pty");
        let mut cfg = Config::default();
        cfg.execution.answer_during_last_move = early;
        let mut r = MindCub3r::connect(link, cfg).expect("connect");
        r.home().unwrap();
        let table = OutputPort::B;
        let arm = OutputPort::A;
        let mut expect = h.initial_cube().clone();
        let mut busy = Vec::new();
        // A layer turn (the table backs off its over-rotation), a tilt (the arm swings
        // back to hold), a spin (nothing left moving: it is the cube-changing move).
        for (chunk, port) in [
            (&[ArmHold, Turn(1)][..], table),
            (&[Tilt][..], arm),
            (&[ArmAway, Spin(1)][..], table),
            (&[ArmHold, Turn(-1)][..], table),
        ] {
            r.execute_chunk(chunk)
                .unwrap_or_else(|e| panic!("{chunk:?}: {e}: {:?}", h.take_log()));
            busy.push(r.ev3().status(&[port]).unwrap().busy);
            for &p in chunk {
                apply_primitive(&mut expect, p);
            }
        }
        // A stop waits for the last move to settle: nothing is left half way.
        assert!(r.stop());
        assert_eq!(h.cube().to_letters(), expect.to_letters());
        let log = h.take_log();
        assert!(log.iter().all(|l| !l.contains("fault")), "{log:?}");
        busy
    };
    assert_eq!(busy_after(true), [true, true, false, true]);
    assert_eq!(busy_after(false), [false, false, false, false]);
}

#[test]
fn ctrl_c_stops_calibrate_timings_before_it_writes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("timings.toml");
    let run = Command::new(env!("CARGO_BIN_EXE_cubot"))
        .args([
            "robot",
            "--sim",
            "calibrate-timings",
            "--write",
            "--cubes",
            "1",
        ])
        .args(["--latencies", "0", "--robot-config"])
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut run = run;
    // The solver's tables are loaded (Ctrl-C there exits at once) once the note says it
    // measures; two seconds later the robot is homed and moving.
    let mut lines = BufReader::new(run.stderr.take().unwrap()).lines();
    let mut err = String::new();
    for l in lines.by_ref() {
        let l = l.unwrap();
        err += &l;
        err += "\n";
        if l.starts_with("measuring:") {
            break;
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(2000));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(run.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let started = std::time::Instant::now();
    for l in lines {
        err += &l.unwrap();
        err += "\n";
    }
    let status = run.wait().unwrap();
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "it went on measuring: {err}"
    );
    assert!(
        err.contains("nothing was fitted or written") && err.contains("motors stopped"),
        "{err}"
    );
    assert!(
        !file.exists(),
        "a stopped measurement wrote {}",
        file.display()
    );
}

#[test]
fn a_run_over_a_port_says_its_execution_was_timed_on_this_computers_clock() {
    // A simulator on a pty runs at a speed the host does not know: its measured time is
    // wall time, and the summary says so rather than calling it the simulator's; this
    // one runs at speed 500, and the summary says what a time so far under the plan is.
    let out = line_run_over_a_port("6", &[]);
    let text = stdout(&out);
    assert!(
        text.contains("s measured (on this computer's clock: under half the plan, as a simulator faster than real time"),
        "{text}"
    );
}

#[test]
fn scan_on_the_simulator_takes_a_speed_like_every_simulated_command() {
    let scan = |speed: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_cubot"))
            .args([
                "scan", "--robot", "--sim", "--seed", "3", "-q", "--speed", speed,
            ])
            .env("CUBOT_CACHE_DIR", super::support::cache_dir())
            .output()
            .expect("run cubot scan");
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stdout(&o)
    };
    // The same seeded cube, read at either speed.
    assert_eq!(scan("100"), scan("300"));
    let o = Command::new(env!("CARGO_BIN_EXE_cubot"))
        .args(["scan", "--robot", "--speed", "100", "--port", "/dev/null"])
        .output()
        .expect("run cubot scan");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("add --sim"), "{}", stderr(&o));
}

#[test]
fn a_cube_of_the_other_size_is_refused_before_any_turn_naming_what_the_sensor_saw() {
    // A 3x3x3 in the robot, scanned as a 2x2x2: the corners alone look like a 2x2x2.
    let (mut child, path, _) = sim_process(&["--seed", "7", "--speed", "40"]);
    let out = scan_process_with(&path, &["--size", "2"]);
    child.kill().ok();
    child.wait().ok();
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains("holds a 3x3x3 cube, not 2x2x2")
            && err.contains("top face's centre reads a sticker")
            && err.contains("--size 3"),
        "{err}"
    );
    // A 2x2x2 scanned as a 3x3x3: its centres are the gaps where four pieces meet.
    let (mut child, path, _) = sim_process(&["--seed", "7", "--speed", "40", "--size", "2"]);
    let out = scan_process(&path);
    child.kill().ok();
    child.wait().ok();
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains("holds a 2x2x2 cube, not 3x3x3") && err.contains("--size 2"),
        "{err}"
    );
}

#[test]
fn a_twisted_corner_in_the_robot_is_a_broken_rule_never_a_reached_target() {
    // The solved cube with one corner turned in place: no legal cube, and `run` says
    // which rule, exit 1, before anything turns.
    let twisted = "UUUUUUUUFURRRRRRRRFFRFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB";
    let (mut child, path, _) = sim_process(&["--speed", "40", "--start", twisted]);
    let out = super::support::cubot(&["run", "--port", &path]);
    child.kill().ok();
    child.wait().ok();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains("a corner is twisted")
            && err.contains("nothing was turned")
            && !err.contains("reached"),
        "{err}"
    );
}

#[test]
fn a_homing_failure_in_a_run_says_nothing_turned_and_what_to_look_at() {
    for fault in ["free=A", "jammed=C"] {
        let o = super::support::cubot(&["run", "--sim", "--faults", fault]);
        assert_eq!(o.status.code(), Some(2), "{fault}");
        let err = stderr(&o);
        assert!(
            err.contains("; motors stopped; no layer was turned (homing comes first)")
                && err.contains("`cubot robot check`"),
            "{fault}: {err}"
        );
    }
}
