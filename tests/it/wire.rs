//! The EV3 wire audit over real traffic: every frame of a full scan and of a whole run,
//! captured on the link between the driver and the simulated brick on its pty, decoded
//! against the firmware's rules (`cubot::robot::ev3::protocol::audit`): 0 violations.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use cubot::color::{resolve, ResolveOptions};
use cubot::cube::Size;
use cubot::job::{self, RunOptions, Tools};
use cubot::robot::ev3::link::audit;
use cubot::robot::ev3::protocol::audit::Audit;
use cubot::robot::link::{self, Tap, TapLink};
use cubot::robot::mindcub3r::cost::CostModel;
use cubot::robot::mindcub3r::planner::Planner;
use cubot::robot::mindcub3r::{Config, MindCub3r};
use cubot::robot::sim::{spawn_hid, spawn_pty, SimConfig, SimHandle};
use cubot::solver::{Solver, TableOptions};

use super::support::cache_dir;

/// A MindCub3r on a simulated brick, its link tapped.
fn tapped(cfg: SimConfig) -> (SimHandle, MindCub3r, Tap) {
    tapped_with(cfg, Config::default())
}

fn tapped_with(cfg: SimConfig, config: Config) -> (SimHandle, MindCub3r, Tap) {
    let h = spawn_pty(cfg).expect("start the simulated brick");
    let port = link::open(h.path(), None).expect("open the pty");
    let (tap_link, tap) = TapLink::new(port);
    let r = MindCub3r::connect(Box::new(tap_link), config).expect("connect");
    (h, r, tap)
}

fn assert_clean(what: &str, a: &Audit, at_least: usize) {
    let shown: Vec<String> = a
        .violations
        .iter()
        .take(10)
        .map(|v| v.to_string())
        .collect();
    assert!(
        a.violations.is_empty(),
        "{what}: {} violations, first: {shown:#?}",
        a.violations.len()
    );
    assert!(
        a.stats.commands >= at_least,
        "{what}: only {} commands",
        a.stats.commands
    );
    eprintln!(
        "{what}: {} commands ({} without reply), {} replies, 0 violations; operations: {:?}",
        a.stats.commands, a.stats.no_reply_commands, a.stats.replies, a.stats.ops
    );
}

#[test]
fn every_frame_of_a_full_scan_passes_the_wire_audit() {
    // Both scans: the brick's programs (one a face) and the host's polling.
    for on_brick in [true, false] {
        let mut config = Config::default();
        config.scan.on_brick = on_brick;
        // Homing as programs too, or polled by the host.
        config.execution.on_brick = on_brick;
        let (h, mut r, tap) = tapped_with(
            SimConfig {
                seed: 5,
                speed: 40.0,
                ..SimConfig::default()
            },
            config,
        );
        r.home().unwrap();
        let scan = r.scan(Size::Three, &mut |_| {}).unwrap();
        r.finish(true).unwrap();
        drop(r);
        let cube = resolve(&scan, &ResolveOptions::default()).unwrap().cube;
        assert_eq!(cube.to_letters(), h.initial_cube().to_letters());
        let a = audit(&tap.take());
        if on_brick {
            // Connecting, homing (a few programs), six face programs, the end.
            assert_clean("full scan on the brick", &a, 12);
            // Six programs, each with its loops (every wait checks the program's deadline),
            // jumps and indexed stores.
            assert!(a.stats.ops["TIMER_READ"] >= 6, "{:?}", a.stats.ops);
            for op in [
                "JR", "JR_TRUE", "JR_LT32", "JR_EQ8", "READ32", "WRITE32", "MUL8",
            ] {
                assert!(a.stats.ops.contains_key(op), "{op}: {:?}", a.stats.ops);
            }
        } else {
            assert_clean("full scan polled by the host", &a, 300);
        }
    }
}

#[test]
fn every_frame_of_robot_check_passes_the_wire_audit() {
    use cubot::robot::ev3::driver::Ev3;
    use cubot::robot::mindcub3r::check::{check, Level};
    let h = spawn_pty(SimConfig {
        seed: 8,
        speed: 40.0,
        faults: "empty".parse().unwrap(),
        ..SimConfig::default()
    })
    .unwrap();
    let (tap_link, tap) = TapLink::new(link::open(h.path(), None).unwrap());
    let findings = check(
        Ev3::new(Box::new(tap_link)),
        Config::default(),
        None,
        &mut |_| {},
    )
    .unwrap();
    assert!(
        findings.iter().all(|f| f.level == Level::Ok),
        "{findings:?}"
    );
    let a = audit(&tap.take());
    for op in [
        "COM_GET GET_BRICKNAME",
        "UI_READ GET_VBATT",
        "OUTPUT_POLARITY",
    ] {
        assert!(a.stats.ops.contains_key(op), "{op}: {:?}", a.stats.ops);
    }
    assert_clean("robot check", &a, 50);
}

#[test]
fn a_whole_scan_travels_over_usb_hid_reports_to_the_same_brick() {
    let (h, hid) = spawn_hid(SimConfig {
        seed: 6,
        speed: 40.0,
        latency_ms: 10.0,
        ..SimConfig::default()
    })
    .expect("start the simulated brick on its HID pipe");
    let (tap_link, tap) = TapLink::new(Box::new(hid));
    let mut r = MindCub3r::connect(Box::new(tap_link), Config::default()).expect("connect");
    r.home().unwrap();
    let scan = r.scan(Size::Three, &mut |_| {}).unwrap();
    r.finish(true).unwrap();
    drop(r);
    let cube = resolve(&scan, &ResolveOptions::default()).unwrap().cube;
    assert_eq!(cube.to_letters(), h.initial_cube().to_letters());
    let log = h.take_log();
    assert!(log.is_empty(), "the brick refused or complained: {log:?}");
    assert_eq!(h.path().to_str(), Some("usb (simulated)"));
    assert_clean("full scan over USB", &audit(&tap.take()), 12);
}

#[test]
fn every_frame_of_a_whole_run_passes_the_wire_audit() {
    // Scan faces and chunks of primitives are one program each: few, long frames.
    whole_run_audit(200.0, 50);
}

/// The same at real speed (the driver polls homing as it would on a brick: more frames).
#[test]
#[ignore = "takes about two minutes: cargo test --test it wire::measure -- --ignored --nocapture"]
fn measure_the_wire_audit_of_a_whole_run_at_real_speed() {
    whole_run_audit(1.0, 60);
}

fn whole_run_audit(speed: f64, at_least: usize) {
    let (h, mut r, tap) = tapped(SimConfig {
        seed: 9,
        speed,
        ..SimConfig::default()
    });
    r.home().unwrap();
    let solver = Solver::new(&TableOptions {
        cache_dir: Some(cache_dir()),
        ..TableOptions::default()
    })
    .expect("solver tables");
    let tools = Tools {
        solver: &solver,
        resolve: ResolveOptions {
            seed: 9,
            ..ResolveOptions::default()
        },
        max_length: 20,
        search: None,
    };
    let dir = tempfile::tempdir().unwrap();
    let opts = RunOptions {
        size: Size::Three,
        target: None,
        solutions: 2,
        symmetries: false,
        mirror: false,
        inverse: false,
        max_rescans: 3,
        max_rounds: 1,
        journal: dir.path().join("run.jsonl"),
        stop: Arc::new(AtomicBool::new(false)),
        page_stop: None,
        connection: serde_json::Value::Null,
    };
    let planner = Planner::new(CostModel::new(Config::default().timings));
    let mut run = job::mindcub3r::Mc3Run::new(r, Some(h), planner);
    let report = job::run(&mut run, &tools, &opts, &mut |_| {}).expect("the run");
    assert!(report.reached_target, "{report:?}");
    drop(run);
    assert_clean("whole run", &audit(&tap.take()), at_least);
}

/// The largest command of each kind of program on the brick (3x3x3 and 2x2x2 scan faces,
/// chunks as long as a command holds, homing), in bytes: each fits one message, with the
/// figures printed.
#[test]
fn every_program_on_the_brick_fits_one_message() {
    use cubot::robot::ev3::protocol::MAX_MESSAGE;
    use cubot::robot::mindcub3r::model::Primitive::*;
    let mut figures = Vec::new();
    for size in [Size::Three, Size::Two] {
        let (h, mut r, tap) = tapped(SimConfig {
            seed: 10,
            speed: 40.0,
            size,
            ..SimConfig::default()
        });
        r.home().unwrap();
        figures.push(("homing", audit(&tap.take()).stats.largest_command));
        let scan = r.scan(size, &mut |_| {}).unwrap();
        let cube = resolve(&scan, &ResolveOptions::default()).unwrap().cube;
        assert_eq!(cube.to_letters(), h.initial_cube().to_letters());
        let what = if size == Size::Three {
            "3x3x3 face"
        } else {
            "2x2x2 face"
        };
        figures.push((what, audit(&tap.take()).stats.largest_command));
    }
    // Chunks bounded by the command's size only (not by their time).
    let mut config = Config::default();
    config.execution.chunk_seconds = 60.0;
    let (_h, mut r, tap) = tapped_with(
        SimConfig {
            seed: 11,
            speed: 40.0,
            ..SimConfig::default()
        },
        config,
    );
    r.home().unwrap();
    tap.take();
    let mut prims = super::support::plan_like();
    prims.extend([Tilt, Spin(1)]);
    let mut lens = Vec::new();
    let mut i = 0;
    while i < prims.len() {
        let n = r.chunk_len(&prims[i..]);
        r.execute_chunk(&prims[i..i + n]).unwrap();
        lens.push(n);
        i += n;
    }
    figures.push(("chunk", audit(&tap.take()).stats.largest_command));
    eprintln!("largest command (bytes): {figures:?}; chunks of {lens:?} primitives");
    for (what, n) in figures {
        assert!(n > 0 && n <= MAX_MESSAGE, "{what}: {n} bytes");
    }
}
