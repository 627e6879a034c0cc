//! Shared helpers for the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// The project root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/realdata` if it is there (the tests also run from `samples/` alone).
pub fn shared_realdata() -> Option<PathBuf> {
    let p = root().join("../shared/realdata");
    p.is_dir().then_some(p)
}

/// A cache directory for solver tables shared by every test of one `cargo test` run.
pub fn cache_dir() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cubot-cache");
    std::fs::create_dir_all(&p).expect("create the test cache dir");
    p
}

/// The built `cubot` binary with `args`, the test cache directory and no colours.
pub fn command(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cubot"));
    c.args(args)
        .env("CUBOT_CACHE_DIR", cache_dir())
        .env("NO_COLOR", "1");
    c
}

/// [`command`] with stdin, stdout and stderr piped, started.
fn spawn_piped(args: &[&str]) -> std::process::Child {
    command(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run cubot")
}

/// Runs the built `cubot` binary with the test cache directory.
pub fn cubot(args: &[&str]) -> Output {
    command(args).output().expect("run cubot")
}

/// Runs `cubot` with `input` on stdin.
pub fn cubot_stdin(args: &[&str], input: &str) -> Output {
    use std::io::Write;
    let mut child = spawn_piped(args);
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("wait for cubot")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `cubot` with `input` on stdin and its stdout closed from the start, as behind
/// `| head` once `head` has exited: returns the exit status and stderr.
pub fn cubot_closed_stdout(args: &[&str], input: &str) -> (std::process::ExitStatus, String) {
    use std::io::{Read, Write};
    let mut child = spawn_piped(args);
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().expect("stdin");
    // The child may stop reading once its output is gone: a failed write is fine.
    let _ = stdin.write_all(input.as_bytes());
    drop(stdin);
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err)
        .expect("read stderr");
    (child.wait().expect("wait for cubot"), err)
}

/// The firmware brick's build folder, building it once from LEGO's sources
/// (`scripts/firmware-brick.sh`; `CUBOT_FIRMWARE_SRC` or `../shared/ev3-firmware`), or
/// `CUBOT_LMS2012_DIR` when set. `None`, with the reason on stderr, when the sources are
/// not there: the firmware tests then skip.
pub fn firmware_brick() -> Option<std::path::PathBuf> {
    use std::sync::OnceLock;
    static BUILT: OnceLock<Result<std::path::PathBuf, String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        if let Some(d) = std::env::var_os("CUBOT_LMS2012_DIR").filter(|d| !d.is_empty()) {
            return Ok(d.into());
        }
        let root = env!("CARGO_MANIFEST_DIR");
        let out = std::process::Command::new("bash")
            .arg(format!("{root}/scripts/firmware-brick.sh"))
            .current_dir(root)
            .output()
            .map_err(|e| format!("cannot run scripts/firmware-brick.sh: {e}"))?;
        match out.status.code() {
            Some(0) => Ok(format!("{root}/target/lms2012").into()),
            Some(3) => Err(String::from_utf8_lossy(&out.stderr).trim().to_string()),
            _ => panic!(
                "scripts/firmware-brick.sh failed ({}):\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    });
    match built {
        Ok(d) => Some(d.clone()),
        Err(why) => {
            eprintln!("skipping a firmware-brick test: {why}");
            None
        }
    }
}

/// A plan-like sequence of primitives with every arm transition the planner writes.
pub fn plan_like() -> Vec<cubot::robot::mindcub3r::model::Primitive> {
    use cubot::robot::mindcub3r::model::Primitive::*;
    vec![
        ArmAway,
        Spin(1),
        ArmHold,
        Turn(1),
        Tilt,
        Turn(-1),
        ArmAway,
        Spin(2),
        ArmHold,
        Turn(2),
        Tilt,
        Tilt,
        Turn(-2),
        ArmAway,
        Spin(-1),
        ArmHold,
        Tilt,
        Turn(1),
    ]
}

/// `cube` after primitive `p` as the model says (a primitive that moves no layer or the
/// whole cube leaves it as it is).
pub fn apply_primitive(
    cube: &mut cubot::cube::FaceletCube,
    p: cubot::robot::mindcub3r::model::Primitive,
) {
    if let Some(m) = p.as_move() {
        cube.apply(&cubot::cube::Alg::from_moves(vec![m]))
            .expect("a primitive's move applies");
    }
}
