//! Integration tests: the firmware brick. LEGO's EV3 VM and motor driver (built by
//! `scripts/firmware-brick.sh` from LEGO's sources) run as the brick, the simulator's world
//! around them; cubot's driver talks to it over a pty as to a brick.

use cubot::cube::Alg;
use cubot::robot::mindcub3r::model::Primitive;
use cubot::robot::mindcub3r::{Config, MindCub3r};
use cubot::robot::sim::lms2012::BrickKind;
use cubot::robot::sim::{spawn_pty, SimConfig, SimHandle};

use super::support::firmware_brick;

pub(super) fn brick(seed: u64, speed: f64) -> Option<SimHandle> {
    let dir = firmware_brick()?;
    Some(
        spawn_pty(SimConfig {
            seed,
            speed,
            brick: BrickKind::Lms2012(Some(dir)),
            ..SimConfig::default()
        })
        .expect("start the firmware brick"),
    )
}

pub(super) fn connect(h: &SimHandle) -> MindCub3r {
    let link = cubot::robot::link::open(h.path(), Some(115_200)).expect("open the pty");
    MindCub3r::connect(link, Config::default()).expect("connect")
}

#[test]
fn primitives_on_lego_firmware_move_the_cube_as_the_model_says() {
    let Some(h) = brick(1, 20.0) else { return };
    let mut r = connect(&h);
    r.home()
        .unwrap_or_else(|e| panic!("home: {e}: {:#?}", h.take_log()));
    let mut expect = h.initial_cube().clone();
    for p in [
        Primitive::Tilt,
        Primitive::Spin(1),
        Primitive::Turn(1),
        Primitive::Turn(-1),
        Primitive::Spin(2),
    ] {
        r.execute(p)
            .unwrap_or_else(|e| panic!("{p:?}: {e}: {:#?}", h.take_log()));
        expect
            .apply(&Alg::from_moves(vec![p.as_move().unwrap()]))
            .unwrap();
        assert_eq!(
            h.cube().to_letters(),
            expect.to_letters(),
            "after {p:?}: {:#?}",
            h.take_log()
        );
    }
}

/// A whole `cubot run` (scan, solve, execute, verify) with LEGO's firmware as the brick.
fn whole_run(size: &str, seed: &str, latency: &str) {
    let Some(dir) = firmware_brick() else { return };
    let dir = dir.to_string_lossy().to_string();
    let faults = format!("latency={latency}");
    let o = super::support::cubot(&[
        "run",
        "--sim",
        "--brick",
        "lms2012",
        "--lms2012",
        &dir,
        "--size",
        size,
        "--seed",
        seed,
        "--faults",
        &faults,
        "-q",
    ]);
    let (out, err) = (super::support::stdout(&o), super::support::stderr(&o));
    assert!(
        o.status.success(),
        "run --size {size} --seed {seed} on LEGO's firmware: {:?}\n{out}\n{err}",
        o.status
    );
    assert!(out.contains("verified by"), "{out}");
}

/// The scan's tilts and the solution's tilts start from an arm at rest at hold (the
/// programs wait for the count to stand still: LEGO's driver ends a move still running),
/// and the arm's moves arrive slowly enough that the driver's count does not slip.
#[test]
fn a_whole_3x3x3_run_on_lego_firmware_reaches_its_target() {
    whole_run("3", "2", "0");
}

#[test]
fn a_whole_2x2x2_run_on_lego_firmware_reaches_its_target() {
    whole_run("2", "1", "0");
}

#[test]
fn a_whole_run_over_a_60_ms_link_on_lego_firmware_reaches_its_target() {
    whole_run("3", "3", "60");
}

/// A robot at rest reads as at rest on the firmware brick (the state file's `idle`, which
/// stop campaigns wait for), although LEGO's driver keeps a braked motor powered to hold
/// it where it stopped.
#[test]
fn the_firmware_brick_reads_at_rest_once_its_moves_end() {
    let Some(h) = brick(4, 20.0) else { return };
    let mut r = connect(&h);
    r.home()
        .unwrap_or_else(|e| panic!("home: {e}: {:#?}", h.take_log()));
    for p in [Primitive::Tilt, Primitive::Turn(1), Primitive::Spin(-1)] {
        r.execute(p)
            .unwrap_or_else(|e| panic!("{p:?}: {e}: {:#?}", h.take_log()));
    }
    let ended = h.clock();
    let wall = std::time::Instant::now();
    while h.clock() < ended + 2.0 && wall.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(h.clock() >= ended + 2.0, "the brick's clock stood still");
    assert!(
        !h.motors_running(),
        "2 s of brick time after its last move the robot still reads as running"
    );
}

/// A fault of cubot's own brick (`stall`, `reversed`) is refused on LEGO's firmware, not
/// left out: a campaign would count a stall that never happened.
#[test]
fn the_firmware_brick_refuses_our_bricks_faults() {
    for spec in ["stall@p3", "stall@5", "reversed=B", "battery=6000"] {
        let e = spawn_pty(SimConfig {
            faults: spec.parse().unwrap(),
            brick: BrickKind::Lms2012(Some("/nonexistent".into())),
            ..SimConfig::default()
        })
        .err()
        .unwrap_or_else(|| panic!("{spec} accepted on the firmware brick"));
        assert!(e.to_string().contains(spec), "{spec}: {e}");
    }
}

/// `robot check` on a fault-free robot is all well on LEGO's firmware at the simulator's
/// default speed: each jog's count is read once the motor has come to rest (LEGO's driver
/// ends a step job at its count while the motor runs on and its brake pulls back).
#[test]
fn robot_check_finds_a_fault_free_robot_on_lego_firmware_all_well() {
    let Some(dir) = firmware_brick() else { return };
    let dir = dir.to_string_lossy().to_string();
    for seed in ["1", "2"] {
        let o = super::support::cubot(&[
            "robot",
            "--sim",
            "--brick",
            "lms2012",
            "--lms2012",
            &dir,
            "--seed",
            seed,
            "check",
        ]);
        let (out, err) = (super::support::stdout(&o), super::support::stderr(&o));
        assert_eq!(o.status.code(), Some(0), "seed {seed}:\n{out}\n{err}");
        assert!(out.contains("all well"), "seed {seed}:\n{out}\n{err}");
    }
}

/// A running brick's code is its own: rebuilding the firmware brick rewrites its VM and
/// libraries, and a rewrite in place (`cp` onto the files; target/ trees seeded by hard
/// links share them) pulled the libraries' pages of a running VM from under it (SIGBUS, or SIGSEGV on
/// unrelocated pages read again: four VMs of two campaigns died at the same instant as a
/// build in another tree). Here a copy of the build is truncated in place while its brick
/// runs, and the brick goes on moving the cube.
#[test]
fn a_running_firmware_brick_survives_its_build_being_rewritten() {
    let Some(built) = firmware_brick() else {
        return;
    };
    let copy = tempfile::tempdir().expect("a temporary folder");
    let dir = copy.path();
    for part in ["bin", "lib"] {
        std::fs::create_dir(dir.join(part)).unwrap();
    }
    std::fs::copy(built.join("bin/lms2012"), dir.join("bin/lms2012")).unwrap();
    // The libraries, not the VM: Linux refuses to open a running program for writing
    // (ETXTBSY), but not a library mapped into one.
    let mut libs = Vec::new();
    for entry in std::fs::read_dir(built.join("lib")).unwrap() {
        let entry = entry.unwrap();
        let to = dir.join("lib").join(entry.file_name());
        std::fs::copy(entry.path(), &to).unwrap();
        libs.push(to);
    }
    copy_tree(&built.join("root"), &dir.join("root"));
    let h = spawn_pty(SimConfig {
        seed: 5,
        speed: 20.0,
        brick: BrickKind::Lms2012(Some(dir.to_path_buf())),
        ..SimConfig::default()
    })
    .expect("start the firmware brick");
    let mut r = connect(&h);
    r.home()
        .unwrap_or_else(|e| panic!("home: {e}: {:#?}", h.take_log()));
    // Every library emptied in place (same inode), as a copy onto it begins.
    for f in &libs {
        let file = std::fs::OpenOptions::new().write(true).open(f).unwrap();
        file.set_len(0).unwrap();
    }
    let mut expect = h.initial_cube().clone();
    for p in [Primitive::Turn(1), Primitive::Tilt, Primitive::Spin(-1)] {
        r.execute(p)
            .unwrap_or_else(|e| panic!("{p:?} after the rewrite: {e}: {:#?}", h.take_log()));
        expect
            .apply(&Alg::from_moves(vec![p.as_move().unwrap()]))
            .unwrap();
    }
    assert_eq!(h.cube().to_letters(), expect.to_letters());
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            copy_tree(&entry.path(), &dest);
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path()).unwrap(), dest).unwrap();
        } else {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}

/// A terminal's Ctrl-C signals the whole foreground process group: the firmware brick (a
/// process of its own) must not hear it, so that the run's stop is confirmed as on a real
/// brick; the resume the run prints runs on LEGO's firmware again and reaches the target.
#[test]
fn a_terminals_ctrl_c_stops_a_firmware_run_confirmed_and_its_resume_stays_on_firmware() {
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let Some(dir) = firmware_brick() else { return };
    let dir = dir.to_string_lossy().to_string();
    let scratch = tempfile::tempdir().unwrap();
    let journal = scratch.path().join("fw.jsonl");
    let j = journal.to_str().unwrap();
    let child = super::support::command(&["run", "--sim", "--brick", "lms2012", "--lms2012", &dir])
        .args(["--seed", "40", "--journal", j])
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(120) {
        let steps = std::fs::read_to_string(&journal)
            .map(|t| t.matches("\"type\":\"step\"").count())
            .unwrap_or(0);
        if steps >= 3 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // As a terminal does: the signal goes to every process of the group.
    nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let o = child.wait_with_output().unwrap();
    let err = super::support::stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("\n  motors stopped\n"), "{err}");
    let resume = format!(
        "resume with: cubot run --resume {j} --sim --brick lms2012 --lms2012 {dir} --seed 40"
    );
    assert!(err.contains(&resume), "{err}");
    let o = super::support::cubot(&["run", "--resume", j, "--sim", "--lms2012", &dir]);
    let (out, err) = (super::support::stdout(&o), super::support::stderr(&o));
    assert!(o.status.success(), "{out}{err}");
    assert!(
        err.contains(
            "simulator: --brick lms2012 --seed 40 --palette standard, as in the journal's run"
        ),
        "{err}"
    );
    assert!(out.contains("reached the target"), "{out}");
}
