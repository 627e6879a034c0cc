//! The simulated EV3 MindCub3r brick on a pseudo-terminal.
//!
//! [`spawn_pty`] opens a pty pair (master kept here, both sides in raw mode), and serves
//! EV3 direct commands on it from a thread: framing with split and merged reads, every
//! parameter form, one command at a time, motors whose counts move over simulated time,
//! the MindCub3r mechanics applied to a virtual cube, and a colour sensor reading the
//! sticker physically under it through `color::synth::Appearance` (the sensor follows each
//! physical sticker as the cube moves). Simulated time runs `speed` times faster than wall
//! time; everything reported (the clock, the fault log) is in simulated seconds.
//!
//! Level: robot (uses `cube`, `color::synth`). No printing: the log is read through
//! [`SimHandle::take_log`].

mod brick;
pub mod line;

pub use brick::Physics;

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::color::Palette;
use crate::cube::{random_state, FaceletCube, Size};
use crate::robot::ev3::protocol::FrameBuffer;

use brick::Brick;

/// Injected faults (`--faults drop@N,stall@N,wrong-device,silent@N`; N counts commands
/// received from 1; without `@N` a fault happens at once).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Faults {
    pub drop_at: Option<u64>,
    pub stall_at: Option<u64>,
    pub wrong_device: bool,
    pub silent_at: Option<u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("bad fault spec {spec:?}: {why} (expected a comma list of drop[@N], stall[@N], wrong-device, silent[@N])")]
    FaultSpec { spec: String, why: String },
    #[error("pseudo-terminal: {0}")]
    Pty(String),
    #[error("starting cube: {0}")]
    Start(String),
}

impl FromStr for Faults {
    type Err = SimError;

    fn from_str(spec: &str) -> Result<Faults, SimError> {
        let mut f = Faults::default();
        let bad = |why: &str| SimError::FaultSpec {
            spec: spec.to_string(),
            why: why.to_string(),
        };
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (kind, at) = match item.split_once('@') {
                Some((k, n)) => {
                    let n: u64 = n
                        .parse()
                        .map_err(|_| bad(&format!("{n:?} is not a command number")))?;
                    if n == 0 {
                        return Err(bad("commands count from 1"));
                    }
                    (k, n)
                }
                None => (item, 1),
            };
            match kind {
                "drop" => f.drop_at = Some(at),
                "stall" => f.stall_at = Some(at),
                "silent" => f.silent_at = Some(at),
                "wrong-device" => f.wrong_device = true,
                other => return Err(bad(&format!("unknown fault {other:?}"))),
            }
        }
        Ok(f)
    }
}

/// What to simulate.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub seed: u64,
    /// Simulated seconds per wall second.
    pub speed: f64,
    pub palette: Palette,
    pub faults: Faults,
    /// The cube in the robot frame (default: a random legal cube from `seed`).
    pub start: Option<FaceletCube>,
    pub size: Size,
    /// Sensor port (1..4) holding the colour sensor.
    pub color_port: u8,
    pub large_full_speed: f64,
    pub medium_full_speed: f64,
    /// Transport latency added to every reply (simulated ms; USB ≈ 10, Bluetooth ≈ 60).
    pub latency_ms: f64,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 0,
            speed: 1.0,
            palette: Palette::Standard,
            faults: Faults::default(),
            start: None,
            size: Size::Three,
            color_port: 2,
            large_full_speed: 1050.0,
            medium_full_speed: 1560.0,
            latency_ms: 0.0,
        }
    }
}

struct Shared {
    clock: f64,
    motion: f64,
    cube: FaceletCube,
    tilts: u64,
    log: Vec<String>,
}

/// A running simulated brick. Stops (and closes the pty) on drop.
pub struct SimHandle {
    path: PathBuf,
    initial: FaceletCube,
    shared: Arc<Mutex<Shared>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl SimHandle {
    /// The pty slave path the host opens as if it were the brick's Bluetooth tty.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The cube as it sat before any move (robot frame).
    pub fn initial_cube(&self) -> &FaceletCube {
        &self.initial
    }

    /// The cube now (robot frame).
    pub fn cube(&self) -> FaceletCube {
        self.lock().cube.clone()
    }

    /// Simulated seconds since start.
    pub fn clock(&self) -> f64 {
        self.lock().clock
    }

    /// Simulated seconds during which a motor was running: the robot's motion time, which
    /// (unlike [`clock`](Self::clock)) does not grow when the host is slow to send the next
    /// command.
    pub fn motion_seconds(&self) -> f64 {
        self.lock().motion
    }

    /// Tilts performed so far.
    pub fn tilts(&self) -> u64 {
        self.lock().tilts
    }

    /// Log lines (faults, protocol errors) since the last call.
    pub fn take_log(&self) -> Vec<String> {
        std::mem::take(&mut self.lock().log)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stops serving.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        self.stop();
    }
}

fn set_raw(fd: impl AsFd) -> Result<(), SimError> {
    use nix::sys::termios;
    let mut t = termios::tcgetattr(fd.as_fd()).map_err(|e| SimError::Pty(e.to_string()))?;
    termios::cfmakeraw(&mut t);
    termios::tcsetattr(fd.as_fd(), termios::SetArg::TCSANOW, &t)
        .map_err(|e| SimError::Pty(e.to_string()))
}

/// The starting cube: `cfg.start`, or a random legal cube from `cfg.seed`.
pub fn starting_cube(cfg: &SimConfig) -> Result<FaceletCube, SimError> {
    match &cfg.start {
        Some(c) => {
            if c.size() != cfg.size {
                return Err(SimError::Start(format!(
                    "the starting cube is a {}, the simulator a {}",
                    c.size(),
                    cfg.size
                )));
            }
            Ok(c.clone())
        }
        None => {
            let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
            Ok(random_state(cfg.size, &mut rng))
        }
    }
}

/// Starts a simulated brick on a new pty, served by a thread.
pub fn spawn_pty(cfg: SimConfig) -> Result<SimHandle, SimError> {
    let cube = starting_cube(&cfg)?;
    let pty = nix::pty::openpty(None, None).map_err(|e| SimError::Pty(e.to_string()))?;
    set_raw(&pty.master)?;
    set_raw(&pty.slave)?;
    let path = nix::unistd::ttyname(&pty.slave).map_err(|e| SimError::Pty(e.to_string()))?;
    let brick = Brick::new(&cfg, cube.clone());
    let shared = Arc::new(Mutex::new(Shared {
        clock: 0.0,
        motion: 0.0,
        cube: cube.clone(),
        tilts: 0,
        log: Vec::new(),
    }));
    let stop = Arc::new(AtomicBool::new(false));
    let thread = {
        let shared = shared.clone();
        let stop = stop.clone();
        let speed = cfg.speed.max(1e-3);
        let latency = cfg.latency_ms.max(0.0) / 1000.0;
        std::thread::Builder::new()
            .name("ev3-sim".into())
            .spawn(move || serve(pty.master, pty.slave, brick, speed, latency, shared, stop))
            .map_err(|e| SimError::Pty(e.to_string()))?
    };
    Ok(SimHandle {
        path,
        initial: cube,
        shared,
        stop,
        thread: Some(thread),
    })
}

fn serve(
    master: OwnedFd,
    // Kept open so the master never sees a hang-up while the host reconnects.
    _slave: OwnedFd,
    mut brick: Brick,
    speed: f64,
    latency: f64,
    shared: Arc<Mutex<Shared>>,
    stop: Arc<AtomicBool>,
) {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let start = Instant::now();
    let mut frames = FrameBuffer::default();
    let mut buf = [0u8; 1024];
    let mut out: Vec<u8> = Vec::new();
    // Replies waiting for their simulated delivery time.
    let mut queue: std::collections::VecDeque<(f64, Vec<u8>)> = Default::default();
    while !stop.load(Ordering::SeqCst) {
        let readable = {
            let mut fds = [PollFd::new(master.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, PollTimeout::from(1u8)) {
                Ok(n) if n > 0 => fds[0]
                    .revents()
                    .is_some_and(|r| r.contains(PollFlags::POLLIN)),
                _ => false,
            }
        };
        if readable {
            match nix::unistd::read(master.as_raw_fd(), &mut buf) {
                Ok(n) if n > 0 => frames.push(&buf[..n]),
                _ => {}
            }
        }
        // Simulated time follows wall time.
        let target = start.elapsed().as_secs_f64() * speed;
        if target > brick.clock {
            brick.advance(target - brick.clock);
        }
        if brick.is_waiting() {
            if let Some(r) = brick.poll_suspended() {
                queue.push_back((brick.clock + latency, r));
            }
        }
        while let Some(f) = frames.pop() {
            if f.len() > crate::robot::ev3::protocol::MAX_MESSAGE {
                continue;
            }
            if let Some(r) = brick.handle(&f) {
                queue.push_back((brick.clock + latency, r));
            }
        }
        while queue.front().is_some_and(|(due, _)| *due <= brick.clock) {
            if let Some((_, r)) = queue.pop_front() {
                out.extend(r);
            }
        }
        if !out.is_empty() {
            let mut written = 0;
            while written < out.len() {
                match nix::unistd::write(&master, &out[written..]) {
                    Ok(n) => written += n,
                    Err(nix::errno::Errno::EAGAIN) | Err(nix::errno::Errno::EINTR) => {
                        std::thread::sleep(std::time::Duration::from_millis(1))
                    }
                    Err(_) => break,
                }
            }
            out.clear();
        }
        let mut s = shared.lock().unwrap_or_else(|e| e.into_inner());
        s.clock = brick.clock;
        s.motion = brick.motion;
        s.tilts = brick.tilts;
        s.cube = brick.cube();
        s.log.append(&mut brick.log);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_specs_parse() {
        let f: Faults = "drop@3,stall@10,wrong-device,silent@7".parse().unwrap();
        assert_eq!(
            f,
            Faults {
                drop_at: Some(3),
                stall_at: Some(10),
                wrong_device: true,
                silent_at: Some(7)
            }
        );
        let f: Faults = "silent".parse().unwrap();
        assert_eq!(f.silent_at, Some(1));
        assert!("explode@2".parse::<Faults>().is_err());
        assert!("drop@x".parse::<Faults>().is_err());
        assert!("drop@0".parse::<Faults>().is_err());
    }
}
