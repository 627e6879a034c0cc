//! The simulated EV3 MindCub3r brick on a pseudo-terminal.
//!
//! [`spawn_pty`] serves EV3 direct commands on a pty through the shared
//! [`PtyServer`]: framing with split and merged reads,
//! every parameter form, one command at a time, motors whose counts move over simulated
//! time, the MindCub3r mechanics applied to a virtual cube, and a colour sensor reading the
//! sticker physically under it through `color::synth::Appearance` (the sensor follows each
//! physical sticker as the cube moves). Simulated time runs `speed` times faster than wall
//! time; everything reported (the clock, the fault log) is in simulated seconds.
//!
//! Level: robot (simulators; uses `cube`, `color::synth`, [`crate::robot::ev3::protocol`]).
//! No printing: the log is read through [`SimHandle::take_log`].

pub mod config;
mod model;

pub use config::{Faults, SimConfig, SimError};
pub use model::Physics;

use std::path::Path;
use std::sync::{Arc, Mutex};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::cube::{random_state, FaceletCube};
use crate::robot::ev3::protocol::{FrameBuffer, MAX_MESSAGE};
use crate::robot::sim::pty::{Peer, PtyServer};

use model::Brick;

struct Shared {
    clock: f64,
    motion: f64,
    cube: FaceletCube,
    tilts: u64,
    log: Vec<String>,
}

/// A running simulated brick. Stops (and closes the pty) on drop.
pub struct SimHandle {
    server: PtyServer,
    initial: FaceletCube,
    shared: Arc<Mutex<Shared>>,
}

impl SimHandle {
    /// The pty slave path the host opens as if it were the brick's Bluetooth tty.
    pub fn path(&self) -> &Path {
        self.server.path()
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
        self.server.stop();
    }
}

/// The starting cube: `cfg.start`, or a random legal cube from `cfg.seed`.
pub fn starting_cube(cfg: &SimConfig) -> Result<FaceletCube, SimError> {
    match &cfg.start {
        Some(c) => {
            if c.size() != cfg.size {
                return Err(SimError::StartSize {
                    cube: c.size(),
                    sim: cfg.size,
                });
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
    let shared = Arc::new(Mutex::new(Shared {
        clock: 0.0,
        motion: 0.0,
        cube: cube.clone(),
        tilts: 0,
        log: Vec::new(),
    }));
    let peer = BrickPeer {
        brick: Brick::new(&cfg, cube.clone()),
        frames: FrameBuffer::default(),
        shared: shared.clone(),
    };
    let server = PtyServer::spawn("ev3-sim", peer, cfg.speed, cfg.latency_ms / 1000.0)?;
    Ok(SimHandle {
        server,
        initial: cube,
        shared,
    })
}

/// The brick as a peer of the pty server: whole frames in, replies out, its state
/// published for the handle after every round.
struct BrickPeer {
    brick: Brick,
    frames: FrameBuffer,
    shared: Arc<Mutex<Shared>>,
}

impl Peer for BrickPeer {
    fn receive(&mut self, bytes: &[u8]) {
        self.frames.push(bytes);
    }

    fn run_until(&mut self, now: f64, out: &mut Vec<(f64, Vec<u8>)>) -> f64 {
        let brick = &mut self.brick;
        if now > brick.clock {
            brick.advance(now - brick.clock);
        }
        if brick.is_waiting() {
            if let Some(r) = brick.poll_suspended() {
                out.push((brick.clock, r));
            }
        }
        while let Some(f) = self.frames.pop() {
            if f.len() > MAX_MESSAGE {
                continue;
            }
            if let Some(r) = brick.handle(&f) {
                out.push((brick.clock, r));
            }
        }
        let mut s = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        s.clock = brick.clock;
        s.motion = brick.motion;
        s.tilts = brick.tilts;
        s.cube = brick.cube();
        s.log.append(&mut brick.log);
        brick.clock
    }
}
