//! The simulated EV3 MindCub3r brick on a pseudo-terminal, or on an in-memory USB HID pipe.
//!
//! [`spawn_pty`] serves EV3 direct commands on a pty through the shared
//! [`PtyServer`], as over Bluetooth; [`spawn_hid`] serves the same brick over an in-memory
//! HID pipe in the EV3's USB report framing (see
//! [Report framing](crate::robot::link::hid#report-framing)), and hands back the host's
//! [`HidLink`]: framing with split and merged reads,
//! every parameter form, one command at a time, motors whose counts move over simulated
//! time, the MindCub3r mechanics applied to a virtual cube, and a colour sensor reading the
//! sticker physically under it through `color::synth::Appearance` (the sensor follows each
//! physical sticker as the cube moves). Simulated time runs `speed` times faster than wall
//! time; everything reported (the clock, the fault log) is in simulated seconds.
//!
//! ## As the firmware does
//!
//! Where a host could come to depend on it, the simulated brick does what LEGO's LMS2012
//! firmware does (its `c_com.c`, `c_bt.c` and `d_pwm.c`; see
//! [Execution on the brick](crate::robot::ev3::protocol#execution-on-the-brick)):
//!
//! * **One command at a time; the others wait.** A frame arriving while a command runs
//!   (one suspended on OUTPUT_READY, TIMER_READY or SOUND_READY, or a program still
//!   looping) is not read: it waits and runs after that command ends, in arrival order,
//!   whether or not either wants a reply (`c_com.c`: a direct command closes the `VmReady`
//!   gate and no channel is read until the command's reply has been written). A host that
//!   sends a second command before the first one's reply gets both replies, the second
//!   only once the first command has ended; a STOP sent to cut a running program runs
//!   after the program.
//! * **A step move ends at its count.** OUTPUT_STEP_* ends when the motor's count (whole
//!   tacho degrees) has moved by the steps asked for, never within a tolerance of it: a
//!   motor held short by an end stop, the cube or an injected stall stays busy, pushing,
//!   until OUTPUT_STOP. A free move runs at the speed and ramps asked for and ends with a
//!   small random overshoot past its count, as a braked motor does.
//! * **A lost link leaves the motors running** (`c_bt.c`): nothing the link does, a
//!   drop-out included, stops a motor.
//!
//! ## Faults
//!
//! `--faults` ([`Faults`]) injects faults of the link ([`crate::robot::sim::link`]), of
//! this brick (`stall`, `reversed`) and of the world (the mechanism, the cube, the
//! sensors, the wiring: [`crate::robot::sim::world`]); the table is in
//! [Faults](crate::robot::sim::config#faults).
//!
//! The brick answers the brick queries of
//! [the codec](crate::robot::ev3::protocol#brick-queries) as the firmware does: its name
//! ([`SimConfig::brick_name`], `EV3`), firmware `V1.09H`, hardware `V0.60`, and the
//! battery's voltage and level.
//!
//! The log ([`SimHandle::take_log`]) has one line for every injected fault and for
//! every frame or reply a drop-out swallowed.
//!
//! Level: robot (simulators; uses `cube`, `color::synth`, [`crate::robot::ev3::protocol`]).
//! No printing: the log is read through [`SimHandle::take_log`].

mod firmware;
mod model;
pub mod wire;

pub use crate::robot::sim::config::{Dropout, Faults, Port, SimConfig, SimError};

use std::path::Path;
use std::sync::{Arc, Mutex};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::cube::{random_state, FaceletCube};
use crate::robot::link::hid::{report_pipe, HidLink, PipeDevice};
use crate::robot::sim::link::{self, Link};
use crate::robot::sim::lms2012::BrickKind;
use crate::robot::sim::pty::{Endpoint, PtyServer, Server};
use crate::robot::sim::world::World;
use firmware::FirmwareBrick;

use model::Brick;

/// What a running brick shares with its handle (published after every round).
pub(crate) struct Shared {
    pub clock: f64,
    pub motion: f64,
    /// Whether any motor has a job (is driving).
    pub running: bool,
    pub cube: FaceletCube,
    /// The cube with anything out of square taken to its nearest quarter.
    pub squared: FaceletCube,
    pub tilts: u64,
    pub log: Vec<String>,
}

/// The server behind a simulated brick.
enum Serving {
    Pty(PtyServer),
    Hid(Server),
}

/// A running simulated brick. Stops (and closes the pty) on drop.
pub struct SimHandle {
    server: Serving,
    /// The pty's path, or `usb (simulated)`.
    path: std::path::PathBuf,
    initial: FaceletCube,
    shared: Arc<Mutex<Shared>>,
}

impl SimHandle {
    /// The pty slave path the host opens as if it were the brick's Bluetooth tty (for a
    /// brick on the HID pipe, `usb (simulated)`: nothing to open).
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

    /// The cube as a person squaring it by hand would leave it: a layer or the whole cube
    /// left out of square (a tight cube, a failed move) taken to its nearest quarter. The
    /// same as [`cube`](Self::cube) while everything is square.
    pub fn squared_cube(&self) -> FaceletCube {
        self.lock().squared.clone()
    }

    /// Simulated seconds since start.
    pub fn clock(&self) -> f64 {
        self.lock().clock
    }

    /// The brick's clock as a function that outlives this borrow (simulated seconds since
    /// start, as [`clock`](Self::clock)), for a [`Tap`](crate::robot::link::Tap) to stamp
    /// the host's traffic with the brick's time.
    pub fn clock_source(&self) -> crate::robot::link::tap::Clock {
        let shared = self.shared.clone();
        Arc::new(move || shared.lock().unwrap_or_else(|e| e.into_inner()).clock)
    }

    /// Simulated seconds during which a motor was running: the robot's motion time, which
    /// (unlike [`clock`](Self::clock)) does not grow when the host is slow to send the next
    /// command.
    pub fn motion_seconds(&self) -> f64 {
        self.lock().motion
    }

    /// Whether any motor is driving now (a job under way, or a run not yet stopped).
    pub fn motors_running(&self) -> bool {
        self.lock().running
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
        match &mut self.server {
            Serving::Pty(s) => s.stop(),
            Serving::Hid(s) => s.stop(),
        }
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

/// Our brick behind its link, the starting cube, and what the handle shares with it.
type Served = (Link<BrickPeer>, FaceletCube, Arc<Mutex<Shared>>);

/// The brick behind its link, and what its handle shares with it.
fn brick_peer(cfg: &SimConfig) -> Result<Served, SimError> {
    let cube = starting_cube(cfg)?;
    if let Some(m) = &cfg.faults.misread {
        m.pair(&cube, cfg.seed).map_err(SimError::Misread)?;
    }
    let shared = Arc::new(Mutex::new(Shared {
        clock: 0.0,
        motion: 0.0,
        running: false,
        cube: cube.clone(),
        squared: cube.clone(),
        tilts: 0,
        log: Vec::new(),
    }));
    let peer = BrickPeer {
        brick: Brick::new(cfg, cube.clone()),
        shared: shared.clone(),
    };
    Ok((Link::new(peer, cfg), cube, shared))
}

/// Starts a simulated brick on a new pty, served by a thread: ours, or LEGO's firmware
/// ([`SimConfig::brick`]).
pub fn spawn_pty(cfg: SimConfig) -> Result<SimHandle, SimError> {
    if let BrickKind::Lms2012(dir) = &cfg.brick {
        return spawn_firmware_pty(&cfg, &BrickKind::lms2012_dir(dir.as_deref()));
    }
    let (peer, initial, shared) = brick_peer(&cfg)?;
    let latency = Link::<BrickPeer>::latency_of(&cfg);
    let server = PtyServer::spawn("ev3-sim", peer, cfg.speed, latency)?;
    Ok(SimHandle {
        path: server.path().to_path_buf(),
        server: Serving::Pty(server),
        initial,
        shared,
    })
}

/// LEGO's firmware as the brick, on a new pty: its process started and booted, the same
/// world and link around it as around ours.
fn spawn_firmware_pty(cfg: &SimConfig, dir: &Path) -> Result<SimHandle, SimError> {
    if let Some(item) = cfg.faults.brick_only().into_iter().next() {
        return Err(SimError::NotOnFirmware(item));
    }
    let cube = starting_cube(cfg)?;
    if let Some(m) = &cfg.faults.misread {
        m.pair(&cube, cfg.seed).map_err(SimError::Misread)?;
    }
    let shared = Arc::new(Mutex::new(Shared {
        clock: 0.0,
        motion: 0.0,
        running: false,
        cube: cube.clone(),
        squared: cube.clone(),
        tilts: 0,
        log: Vec::new(),
    }));
    let world = World::new(cfg, &cube);
    let brick = FirmwareBrick::start(dir, cfg, world, shared.clone())?;
    let latency = Link::<FirmwareBrick>::latency_of(cfg);
    let server = PtyServer::spawn("ev3-lms2012", Link::new(brick, cfg), cfg.speed, latency)?;
    Ok(SimHandle {
        path: server.path().to_path_buf(),
        server: Serving::Pty(server),
        initial: cube,
        shared,
    })
}

/// Starts a simulated brick on an in-memory USB HID pipe, served by a thread: the same
/// brick as [`spawn_pty`]'s, in the EV3's HID report framing. Returns the host's link to
/// it. Every output report the host writes is checked to be an EV3 report (the id 0 and
/// 1024 bytes); one that is not is refused and noted in the log.
pub fn spawn_hid(cfg: SimConfig) -> Result<(SimHandle, HidLink), SimError> {
    let (peer, initial, shared) = brick_peer(&cfg)?;
    let latency = Link::<BrickPeer>::latency_of(&cfg);
    let (host, device) = report_pipe();
    let end = HidEnd {
        device,
        shared: shared.clone(),
    };
    let server = Server::spawn("ev3-sim-usb", end, peer, cfg.speed, latency)?;
    let handle = SimHandle {
        path: "usb (simulated)".into(),
        server: Serving::Hid(server),
        initial,
        shared,
    };
    Ok((handle, HidLink::new(Box::new(host), "usb (simulated)")))
}

/// The device's end of the HID pipe as the server's endpoint: one message per report.
struct HidEnd {
    device: PipeDevice,
    shared: Arc<Mutex<Shared>>,
}

impl Endpoint for HidEnd {
    fn recv(&mut self, buf: &mut [u8]) -> Option<usize> {
        let m = self.device.recv(std::time::Duration::from_millis(1));
        if !self.device.refused.is_empty() {
            let mut s = self.shared.lock().unwrap_or_else(|e| e.into_inner());
            for why in self.device.refused.drain(..) {
                s.log.push(format!("usb: refused {why}"));
            }
        }
        let m = m?;
        let n = m.len().min(buf.len());
        buf[..n].copy_from_slice(&m[..n]);
        Some(n)
    }

    fn send(&mut self, replies: &[Vec<u8>]) {
        for r in replies {
            self.device.send(r);
        }
    }
}

/// Our brick as the link serves it: whole frames in, replies out, its state published
/// for the handle after every round.
struct BrickPeer {
    brick: Brick,
    shared: Arc<Mutex<Shared>>,
}

impl link::Brick for BrickPeer {
    fn deliver(&mut self, frame: &[u8], out: &mut Vec<(f64, Vec<u8>)>) {
        if let Some(r) = self.brick.handle(frame) {
            out.push((self.brick.clock, r));
        }
    }

    fn run_until(&mut self, now: f64, out: &mut Vec<(f64, Vec<u8>)>) -> f64 {
        let brick = &mut self.brick;
        if now > brick.clock {
            brick.advance(now - brick.clock);
        }
        out.extend(brick.take_replies());
        brick.clock
    }

    fn clock(&self) -> f64 {
        self.brick.clock
    }

    fn note(&mut self, line: String) {
        self.brick.note(line);
    }

    fn publish(&mut self) {
        let brick = &mut self.brick;
        let mut s = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        s.clock = brick.clock;
        s.motion = brick.motion;
        s.running = brick.motors_running();
        s.tilts = brick.tilts();
        s.cube = brick.cube();
        s.squared = brick.squared_cube();
        s.log.append(&mut brick.log);
    }
}
