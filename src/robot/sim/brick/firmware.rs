//! The firmware brick as the [link](crate::robot::sim::link) serves it: frames go to the
//! VM's process ([`crate::robot::sim::lms2012`]), time is granted in slices, every tick
//! the VM asks for is answered by the world, and replies come back stamped with the
//! brick's clock. It sits beside our own brick ([`super::model`]) so that both publish
//! the same [`Shared`] state and the firmware's process and wire know nothing of serving.
//!
//! Level: robot (simulators). No printing.

use std::sync::{Arc, Mutex};

use super::wire::{self, FromBrick};
use super::Shared;
use crate::robot::sim::config::SimConfig;
use crate::robot::sim::link::{self, Brick as _};
use crate::robot::sim::lms2012::process::{BrickProcess, ProcessError};
use crate::robot::sim::lms2012::{ROUND_US, SILENT, SLICE_US, TICK_US};
use crate::robot::sim::world::{Bridge, World};

/// How long every mechanism must have stood still before the robot counts as at rest
/// (µs of brick time): longer than a program's pauses between two moves (the arm's
/// settle window), so that a program still running between its moves is not taken for
/// a robot at rest.
pub const REST_US: u64 = 300_000;

/// LEGO's VM in its process, and the world it drives.
pub struct FirmwareBrick {
    process: BrickProcess,
    world: World,
    /// The brick's clock at boot (µs): the simulator's time 0.
    boot_us: u64,
    /// The brick's clock (µs since its process started).
    clock_us: u64,
    /// The firmware's version as the brick said it at boot.
    pub version: String,
    /// Why the brick stopped answering, once it has.
    dead: Option<String>,
    /// Simulated seconds during which some motor was driven.
    motion: f64,
    /// Whether the robot is in motion, for [`Shared::running`]: some mechanism turned in
    /// the last [`REST_US`] of brick time. Power is no sign of a job here: d_pwm holds a
    /// braked motor with a duty of 400 per count it was pushed off, for as long as it
    /// stays there.
    running: bool,
    /// The brick's clock when a mechanism last turned (µs).
    moved_us: u64,
    log: Vec<String>,
    shared: Arc<Mutex<Shared>>,
}

impl FirmwareBrick {
    /// Starts the VM of the build in `dir` around `world`, and lets it boot.
    pub(crate) fn start(
        dir: &std::path::Path,
        cfg: &SimConfig,
        world: World,
        shared: Arc<Mutex<Shared>>,
    ) -> Result<FirmwareBrick, ProcessError> {
        let mut process = BrickProcess::spawn(dir)?;
        let outputs = [0, 1, 2, 3].map(|p| world.output_type(p).map_or(0, |t| t as u8));
        let inputs = [0, 1, 2, 3].map(|p| match world.input_type(p) {
            t if t < 0 || t == crate::robot::ev3::protocol::device::NONE => 0,
            t => t as u8,
        });
        process.send(&wire::config(&wire::Config {
            outputs,
            inputs,
            battery_mv: (world.battery() * 1000.0).round() as u32,
            tick_us: TICK_US,
            round_us: ROUND_US,
            seed: cfg.seed,
            name: cfg.brick_name.clone(),
        }))?;
        let mut b = FirmwareBrick {
            process,
            world,
            boot_us: 0,
            clock_us: 0,
            version: String::new(),
            dead: None,
            motion: 0.0,
            running: false,
            moved_us: 0,
            log: Vec::new(),
            shared,
        };
        loop {
            let m = b.process.recv(SILENT)?.to_vec();
            match wire::decode(&m) {
                Ok(FromBrick::Booted { t_us, version }) => {
                    b.boot_us = t_us;
                    b.clock_us = t_us;
                    b.version = version;
                    break;
                }
                Ok(FromBrick::Tick {
                    t_us,
                    outputs,
                    mode_requests,
                }) => b.tick(t_us, &outputs, &mode_requests)?,
                Ok(FromBrick::Log(text)) => b.vm_note(&text),
                Ok(other) => b.note(format!("firmware brick, before boot: {other:?}")),
                Err(e) => b.note(format!("firmware brick: {e}")),
            }
        }
        let v = b.version.clone();
        b.note(format!(
            "LEGO firmware {v} booted in {:.3} s of brick time",
            b.boot_us as f64 / 1e6
        ));
        Ok(b)
    }

    fn seconds(&self, t_us: u64) -> f64 {
        t_us.saturating_sub(self.boot_us) as f64 / 1e6
    }

    fn vm_note(&mut self, text: &str) {
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            self.note(format!("firmware: {}", line.trim_end()));
        }
    }

    /// Answers the VM's tick at `t_us` with the world's.
    fn tick(
        &mut self,
        t_us: u64,
        outputs: &[wire::Output; 4],
        requests: &[Option<u8>; 4],
    ) -> Result<(), ProcessError> {
        let dt = TICK_US as f64 / 1e6;
        for (port, mode) in requests.iter().enumerate() {
            if let Some(m) = mode {
                self.world.request_mode(port, *m);
            }
        }
        let answer = self.world.tick_electrical(dt, outputs);
        let moving = (0..4).any(|p| self.world.speed(p).abs() > 1.0);
        let driven = outputs
            .iter()
            .any(|&(duty, bridge)| duty > 0 && bridge != Bridge::Coast);
        if (driven || moving) && t_us >= self.boot_us {
            self.motion += dt;
        }
        if moving {
            self.moved_us = t_us;
        }
        self.running = t_us < self.moved_us.saturating_add(REST_US);
        self.process.send(&wire::world(&answer))
    }

    /// Runs the brick's clock to `until_us`, answering its ticks; replies go to `out`.
    fn run_to(&mut self, until_us: u64, out: &mut Vec<(f64, Vec<u8>)>) -> Result<(), ProcessError> {
        self.process.send(&wire::run(until_us))?;
        loop {
            let m = self.process.recv(SILENT)?.to_vec();
            match wire::decode(&m) {
                Ok(FromBrick::Tick {
                    t_us,
                    outputs,
                    mode_requests,
                }) => {
                    self.clock_us = self.clock_us.max(t_us);
                    self.tick(t_us, &outputs, &mode_requests)?;
                }
                Ok(FromBrick::Reply { t_us, bytes }) => {
                    self.clock_us = self.clock_us.max(t_us);
                    out.push((self.seconds(t_us), bytes));
                }
                Ok(FromBrick::Idle { t_us }) => {
                    self.clock_us = self.clock_us.max(t_us);
                    return Ok(());
                }
                Ok(FromBrick::Log(text)) => self.vm_note(&text),
                Ok(FromBrick::Booted { .. }) => {}
                Err(e) => self.note(format!("firmware brick: {e}")),
            }
        }
    }

    fn died(&mut self, e: ProcessError) {
        if self.dead.is_none() {
            self.note(format!("the firmware brick stopped: {e}"));
            self.dead = Some(e.to_string());
        }
    }
}

impl link::Brick for FirmwareBrick {
    fn deliver(&mut self, frame: &[u8], _out: &mut Vec<(f64, Vec<u8>)>) {
        if self.dead.is_some() {
            return;
        }
        if let Err(e) = self.process.send(&wire::frame(frame)) {
            self.died(e);
        }
    }

    fn run_until(&mut self, now: f64, out: &mut Vec<(f64, Vec<u8>)>) -> f64 {
        let target = self.boot_us + (now.max(0.0) * 1e6) as u64;
        if self.dead.is_some() {
            // A dead brick answers nothing; its clock still follows the host's.
            self.clock_us = self.clock_us.max(target);
        } else if target > self.clock_us {
            let until = target.min(self.clock_us + SLICE_US);
            if let Err(e) = self.run_to(until, out) {
                self.died(e);
            }
        }
        self.seconds(self.clock_us)
    }

    fn clock(&self) -> f64 {
        self.seconds(self.clock_us)
    }

    fn note(&mut self, line: String) {
        let t = self.clock();
        self.log.push(format!("[t={t:.3}s] {line}"));
    }

    fn publish(&mut self) {
        let clock = self.clock();
        self.log.append(&mut self.world.take_log());
        let mut s = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        s.clock = clock;
        s.motion = self.motion;
        s.running = self.running;
        s.tilts = self.world.tilts();
        s.cube = self.world.cube();
        s.squared = self.world.squared_cube();
        s.log.append(&mut self.log);
    }
}
