//! The simulated brick itself, without any I/O: an interpreter of the direct commands of
//! [`crate::robot::ev3::protocol`] (every parameter form, one command at a time, error
//! replies as in [Execution on the brick](crate::robot::ev3::protocol#execution-on-the-brick))
//! and a motor controller whose jobs drive the simulated [`World`] (the MindCub3r's
//! motors, mechanism, cube and colour sensor).
//!
//! The brick's peer in [`super`] feeds it frames from the
//! [pty server](crate::robot::sim::pty) and advances its clock.
//!
//! Level: robot (simulators; uses `cube`, [`crate::robot::ev3::protocol`] and the world
//! of [`crate::robot::sim::world`]). No I/O, no printing.

use rand::Rng;

use crate::cube::FaceletCube;
use crate::robot::ev3::protocol::{
    self, decode_command, device, encode_reply, op, CommandFrame, Param,
};

use crate::robot::sim::config::{Faults, SimConfig};
use crate::robot::sim::world::{Drive, World};

mod controller;
mod interpreter;
mod vm;

use controller::{Job, SimMotor};

/// Simulation step (simulated seconds).
const DT: f64 = 0.002;
/// Simulated time one bytecode instruction takes (see the interpreter's "Time").
const INSTRUCTION_S: f64 = 10e-6;
/// Instructions a command runs when it arrives, before time moves on.
const SLICE: usize = (DT / INSTRUCTION_S) as usize;

/// A running command: suspended by OUTPUT_READY / TIMER_READY / SOUND_READY, or in the
/// middle of its instructions when its time slice ran out.
#[derive(Clone, Debug)]
struct Suspended {
    frame: CommandFrame,
    /// Its operations, decoded against the table of operations.
    code: std::sync::Arc<protocol::ops::Walk>,
    /// The next operation to run (an index into `code`).
    pc: usize,
    globals: Vec<u8>,
    locals: Vec<u8>,
    /// Simulated time the command started (TIMER_READ counts from it).
    started: f64,
}

pub(crate) struct Brick {
    pub clock: f64,
    /// Simulated seconds during which at least one motor was running: the robot's own
    /// motion time, free of the gaps in which the brick waited for the host.
    pub motion: f64,
    /// The motors' controllers by output port (0..3 = A..D).
    motors: [SimMotor; 4],
    /// The physical world the motors drive and the sensors read.
    pub world: World,
    /// What COM_GET GET_BRICKNAME and UI_READ GET_FW_VERS / GET_HW_VERS answer.
    pub name: String,
    pub firmware: String,
    pub hardware: String,
    suspended: Option<Suspended>,
    /// The direct commands' global memory: one buffer that outlives them (see the
    /// interpreter's "Memory").
    cmd_globals: Vec<u8>,
    /// The mode the brick last set on each input port's sensor (0, COL-REFLECT, at
    /// power-up), and since when a READY_* has waited for it to send in that mode.
    device_mode: [u8; 4],
    sensor_busy_since: [Option<f64>; 4],
    /// Frames that arrived while a command ran, waiting to be read, oldest first.
    queue: std::collections::VecDeque<Vec<u8>>,
    /// Replies of commands that ended while time advanced, with the time they ended.
    outbox: Vec<(f64, Vec<u8>)>,
    pub faults: Faults,
    commands: u64,
    /// Commands of at least [`crate::robot::sim::config::PROGRAM_BYTES`] received.
    programs: u64,
    /// A `stall` fault waits for the next positioning move.
    stall_armed: bool,
    pub log: Vec<String>,
}

impl Brick {
    pub fn new(cfg: &SimConfig, cube: FaceletCube) -> Brick {
        let mut world = World::new(cfg, &cube);
        let motors: [SimMotor; 4] = std::array::from_fn(|port| {
            let full_speed = match world.output_type(port) {
                Some(device::LARGE_MOTOR) => cfg.large_full_speed,
                Some(device::MEDIUM_MOTOR) => cfg.medium_full_speed,
                _ => 1.0,
            };
            // The counts an earlier session left: anything.
            let zero = if port < 3 {
                world.rng().gen_range(-500.0..500.0)
            } else {
                0.0
            };
            SimMotor::new(full_speed, world.angle(port), zero)
        });
        let log = world.take_log();
        let mut b = Brick {
            clock: 0.0,
            motion: 0.0,
            motors,
            world,
            name: cfg.brick_name.clone(),
            firmware: "V1.09H".into(),
            hardware: "V0.60".into(),
            suspended: None,
            cmd_globals: vec![0; protocol::ops::MAX_COMMAND_GLOBALS],
            device_mode: [0; 4],
            sensor_busy_since: [None; 4],
            queue: std::collections::VecDeque::new(),
            outbox: Vec::new(),
            faults: cfg.faults.clone(),
            commands: 0,
            programs: 0,
            stall_armed: false,
            log,
        };
        for &port in &cfg.faults.reversed {
            if b.world.output_type(port as usize).is_some() {
                b.motors[port as usize].polarity = -1.0;
            }
        }
        for m in cfg.faults.reversed.clone() {
            let port = (b'A' + m) as char;
            b.note(format!(
                "fault injected: motor {port}'s polarity was left reversed by an earlier session"
            ));
        }
        b
    }

    pub fn cube(&self) -> FaceletCube {
        self.world.cube()
    }

    pub fn squared_cube(&self) -> FaceletCube {
        self.world.squared_cube()
    }

    pub fn tilts(&self) -> u64 {
        self.world.tilts()
    }

    /// Whether any motor has a job (a step, time or speed job not yet ended or stopped).
    pub fn motors_running(&self) -> bool {
        self.motors.iter().any(|m| m.job != Job::Idle)
    }

    pub fn note(&mut self, s: String) {
        self.log.push(format!("[t={:.3}s] {s}", self.clock));
    }

    /// The tacho count of the motor on output port `port` (degrees, not rounded).
    fn count(&self, port: usize) -> f64 {
        self.world.angle(port) - self.motors[port].zero
    }

    /// Advances simulated time by `dt` seconds (in DT steps).
    pub fn advance(&mut self, dt: f64) {
        let steps = (dt / DT).round().max(0.0) as u64;
        for _ in 0..steps {
            self.step_once();
            self.vm_step();
        }
    }

    /// One step: each port's job gives the world its drive, the world moves, the jobs
    /// take stock of how far their motors went.
    fn step_once(&mut self) {
        self.clock += DT;
        if self.motors.iter().any(SimMotor::busy) {
            self.motion += DT;
        }
        let mut drives = [Drive::Idle; 4];
        let mut plans = [None; 4];
        for port in 0..4 {
            let stuck = self.world.stuck(port);
            (drives[port], plans[port]) = self.motors[port].plan(DT, stuck);
        }
        let moved = self.world.step(DT, &drives);
        self.log.append(&mut self.world.take_log());
        for port in 0..4 {
            let count = self.count(port).round();
            self.motors[port].settle(DT, plans[port], moved[port], count);
        }
    }
}

#[cfg(test)]
mod mechanics {
    use super::*;
    use crate::cube::Size;
    use crate::robot::mindcub3r::model::Primitive;

    fn run(b: &mut Brick, ops: &str) {
        let bytes: Vec<u8> = ops
            .split_whitespace()
            .map(|t| u8::from_str_radix(t, 16).unwrap())
            .collect();
        let mut frame = vec![0, 0, 1, 0, 0, 0, 0];
        frame.extend(bytes);
        let len = (frame.len() - 2) as u16;
        frame[..2].copy_from_slice(&len.to_le_bytes());
        b.handle(&frame);
        for _ in 0..400 {
            b.advance(0.01);
            if b.poll_suspended().is_some() || !b.is_waiting() {
                break;
            }
        }
    }

    fn brick() -> Brick {
        let mut b = Brick::new(&SimConfig::default(), FaceletCube::solved(Size::Three));
        // Arm to its stop (physical 0), sensor arm parked.
        b.world.place(0, 0.0);
        b.world.place(2, 0.0);
        b
    }

    #[test]
    fn a_tilt_straight_from_away_is_a_fault() {
        let mut b = brick();
        // Arm A +200° in one move (no stop at hold), wait.
        run(&mut b, "AE 00 01 81 28 00 82 C8 00 00 01 AA 00 01");
        assert!(
            b.log.iter().any(|l| l.contains("coming from away")),
            "{:?}",
            b.log
        );
        assert!(b.cube().is_solved());
    }

    #[test]
    fn a_turn_needs_the_arm_at_hold_and_a_tilt_needs_the_sensor_clear() {
        let mut b = brick();
        // Arm to hold (100°), then the table +270 (one quarter): bottom layer turned (D').
        run(&mut b, "AE 00 01 81 28 00 81 64 00 01 AA 00 01");
        run(&mut b, "AE 00 02 81 28 00 82 0E 01 00 01 AA 00 02");
        let mut expect = FaceletCube::solved(Size::Three);
        expect
            .apply(&crate::cube::Alg::from_moves(vec![Primitive::Turn(1)
                .as_move()
                .unwrap()]))
            .unwrap();
        assert_eq!(b.cube(), expect);
        // Sensor arm over the centre, then tilt: the arms collide.
        run(&mut b, "AE 00 04 81 C4 00 82 EE 02 00 01 AA 00 04");
        run(&mut b, "AE 00 01 81 28 00 81 5A 00 01 AA 00 01");
        assert!(
            b.log
                .iter()
                .any(|l| l.contains("hit the colour-sensor arm")),
            "{:?}",
            b.log
        );
        assert_eq!(b.cube(), expect, "no tilt happened");
    }

    #[test]
    fn a_layer_turn_must_over_rotate_to_end_square() {
        for over in [false, true] {
            let mut b = brick();
            run(&mut b, "AE 00 01 81 28 00 81 64 00 01 AA 00 01"); // hold
            if over {
                // +288 then back 18 at low speed (the driver's turn).
                run(&mut b, "AE 00 02 81 28 00 82 20 01 00 01 AA 00 02");
                run(&mut b, "AE 00 02 81 F6 00 12 00 01 AA 00 02");
            } else {
                run(&mut b, "AE 00 02 81 28 00 82 0E 01 00 01 AA 00 02");
            }
            run(&mut b, "AE 00 01 81 28 00 81 5A 00 01 AA 00 01"); // up to 190: tilt
            let faulted = b
                .log
                .iter()
                .any(|l| l.contains("without enough over-rotation"));
            assert_eq!(faulted, !over, "over-rotation {over}: {:?}", b.log);
            assert_eq!(b.tilts(), over as u64);
        }
    }

    #[test]
    fn the_table_moving_with_the_arm_half_down_jams() {
        let mut b = brick();
        run(&mut b, "AE 00 01 81 28 00 81 37 00 01 AA 00 01"); // arm to 55°: neither
        run(&mut b, "AE 00 02 81 28 00 82 0E 01 00 01 A6 00 02");
        b.advance(1.0);
        assert!(
            b.log
                .iter()
                .any(|l| l.contains("neither clear nor holding")),
            "{:?}",
            b.log
        );
    }
}
