//! The firmware brick: LEGO's own EV3 firmware as the brick cubot talks to.
//!
//! "The firmware is LEGO's, the world is ours." LEGO's VM (lms2012, its stock UI program
//! as the direct-command dispatcher) and LEGO's motor driver (d_pwm, compiled unmodified
//! in user space) run as one separate 32-bit process, built by `scripts/firmware-brick.sh`
//! from LEGO's published sources into `target/lms2012/` (nothing of LEGO's is in this
//! repository; the harness that builds and hosts it is in `tests/lms2012/`). That process
//! sees cubot only through the world link (its messages: `sim::brick`'s wire): host frames in, replies out, and
//! every 2 ms d_pwm's outputs (PWM duty and H-bridge setting per motor) out and the
//! world's answer (tacho edges, what each sensor sends) in. The world is the simulator's
//! own [`World`](super::world::World), the same one our simulated brick drives, stepped
//! in lockstep with d_pwm's tick.
//!
//! ## Time
//!
//! The brick's clock is virtual: it moves only when cubot grants it time (a RUN), in
//! rounds of the VM's scheduler and d_pwm's 2 ms ticks, so a brick run is deterministic
//! for the same frames at the same brick times, and runs faster than real time (the VM
//! idles at about 50x, a busy program at about 20x on one core). The simulator's clock is
//! the brick's since it booted (the stock UI takes about 0.4 s of brick time to start). A
//! round of the [pty server](super::pty) grants at most [`SLICE_US`] at a time, so that
//! at a `--speed` the brick cannot follow it runs as fast as it can and no faster, and
//! the host's frames are never held back by a long grant.
//!
//! ## Where the build is
//!
//! [`BrickKind::Lms2012`] names the build folder; without one, `CUBOT_LMS2012_DIR`, else
//! `target/lms2012` under the working directory.
//!
//! Level: robot (simulators). No printing: the VM's printouts and the shim's notes go to
//! the brick's log.

pub mod process;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use process::{check_build, BrickProcess, ProcessError};

/// Which brick a simulator runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum BrickKind {
    /// cubot's own simulated brick (its interpreter and motor controller).
    #[default]
    Ours,
    /// LEGO's firmware (lms2012) from a build folder (`None`: the default place).
    Lms2012(Option<PathBuf>),
}

impl BrickKind {
    /// The build folder of a firmware brick: the one named, else `CUBOT_LMS2012_DIR`,
    /// else `target/lms2012`.
    pub fn lms2012_dir(named: Option<&Path>) -> PathBuf {
        if let Some(d) = named {
            return d.to_path_buf();
        }
        match std::env::var_os("CUBOT_LMS2012_DIR") {
            Some(d) if !d.is_empty() => PathBuf::from(d),
            _ => PathBuf::from("target/lms2012"),
        }
    }
}

/// The most brick time one round of the pty server grants (µs).
pub const SLICE_US: u64 = 20_000;
/// d_pwm's timer period (µs).
pub const TICK_US: u32 = 2_000;
/// Brick time one round of the VM's scheduler costs (µs): about what a round of the UI
/// program and the communication module's poll take on the brick's ARM9.
pub const ROUND_US: u32 = 50;
/// How long the brick may stay silent (wall time) before it counts as dead: far longer
/// than any grant takes on a loaded machine.
pub const SILENT: Duration = Duration::from_secs(20);
