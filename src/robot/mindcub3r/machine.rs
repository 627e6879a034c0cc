//! The MindCub3r on top of the EV3 driver: start-up (device check, homing), the primitives
//! of [`super::model`] with angles, speeds and over-rotation from the calibration, and the
//! colour-sensor scan mapped to URFDLB facelet indices of the cube as it sat before the scan.
//!
//! ## What a stop leaves
//!
//! Every primitive has at most one move that changes the cube: the tilt arm's move to its
//! apex, the turntable's spin, a layer turn's over-rotating move. The machine remembers
//! whether that move of the primitive under way was sent and whether the brick confirmed it
//! finished, so after any failure [`MindCub3r::in_flight_landed`] can say whether the cube
//! changed: not sent, no; confirmed, yes; otherwise the motor's count decides (and when it
//! stopped half way, nobody can tell). Ctrl-C is checked before every move, so a stop lands
//! between moves, where this is known without asking. A chunk of primitives run on the
//! brick as one program ([`MindCub3r::execute_chunk`]) is settled by
//! [`MindCub3r::chunk_landed`]: the program's own record, or the motor counts (see
//! [Execution on the brick](crate::robot::mindcub3r#execution-on-the-brick)).
//!
//! Level: robot (uses `cube`, `color::raw`, [`crate::robot::ev3`]). No printing: progress
//! through callbacks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::config::Config;
use super::error::RobotError;
use super::model::{Orientation, Primitive, SensorPosition};
use super::scan::{face_samples, perm_of, scan_map, scan_steps, Sample, ScanProgress};
use crate::color::{RawScan, Scale};
use crate::cube::{Face, Permutation, Size};
use crate::robot::ev3::driver::{Ev3, Ev3Error, Motor, MotorKind};
use crate::robot::ev3::protocol::{device, DirectCommand, OutputPort};
use crate::robot::link::Link;

mod builder;
mod chunk;
mod homing;
mod onbrick;
mod scanning;
mod steps;
mod stop;

pub use chunk::{ChunkRun, Settled};
pub use stop::{Jog, Part};

/// The move of a primitive that changes the cube (the tilt arm past its apex, the table
/// turning a layer or the whole cube): where its motor started, the target by which the
/// change is complete, and whether the move was confirmed finished.
#[derive(Clone, Copy, Debug)]
struct Effect {
    port: OutputPort,
    from: i32,
    to: i32,
    done: bool,
    tilt: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArmState {
    Unknown,
    Away,
    Hold,
}

/// The robot.
pub struct MindCub3r {
    ev3: Ev3,
    pub config: Config,
    arm: Motor,
    table: Motor,
    sensor: Motor,
    arm_state: ArmState,
    sensor_at: Option<i32>,
    /// Table angle (degrees, + = y) since start-up; the motor target follows it.
    table_deg: f64,
    table_zero: i32,
    /// Cube orientation relative to the cube as it sat at start-up.
    pub orientation: Orientation,
    /// Current position → facelet index in the frame of the last scan start.
    frame: Option<(Size, Permutation)>,
    interrupt: Option<Arc<AtomicBool>>,
    last: Option<Primitive>,
    homed: bool,
    /// The primitive being executed and its cube-changing move, once that move was sent
    /// (cleared when the primitive completes).
    attempt: Option<(Primitive, Option<Effect>)>,
    /// The chunk of primitives sent to the brick as one program, until its outcome is
    /// known.
    chunk: Option<chunk::ChunkAttempt>,
    /// The last move of a chunk that answered before that move ended
    /// (`execution.answer_during_last_move`); whatever moves the robot next waits for it.
    tail: Option<chunk::Tail>,
}

impl MindCub3r {
    /// Connects: ping, device check (exact report on mismatch), every motor's polarity set
    /// to normal (an earlier session may have reversed one; see
    /// [Polarity](crate::robot::ev3::protocol#polarity)), the colour sensor put in the mode
    /// the scan reads it in. Nothing moves.
    pub fn connect(link: Box<dyn Link>, config: Config) -> Result<MindCub3r, RobotError> {
        MindCub3r::with_driver(Ev3::new(link), config)
    }

    /// [`connect`](Self::connect) over a driver already made (its log and counters kept).
    pub fn with_driver(mut ev3: Ev3, config: Config) -> Result<MindCub3r, RobotError> {
        config.check().map_err(|why| RobotError::Config {
            path: "(in memory)".into(),
            why,
        })?;
        ev3.timeouts = config.driver_timeouts();
        let m = &config.motors;
        let p = &config.ports;
        let mut r = MindCub3r {
            ev3,
            arm: Motor::new(p.arm, MotorKind::Large, m.large_full_speed),
            table: Motor::new(p.turntable, MotorKind::Large, m.large_full_speed),
            sensor: Motor::new(p.sensor_arm, MotorKind::Medium, m.medium_full_speed),
            config,
            arm_state: ArmState::Unknown,
            sensor_at: None,
            table_deg: 0.0,
            table_zero: 0,
            orientation: Orientation::IDENTITY,
            frame: None,
            interrupt: None,
            last: None,
            homed: false,
            attempt: None,
            chunk: None,
            tail: None,
        };
        r.guard(|r| {
            r.ev3.nop()?;
            r.check_devices()?;
            let nos = OutputPort::nos(&[r.arm.port, r.table.port, r.sensor.port]);
            r.ev3.set_polarity(nos, 1)?;
            r.sensor_mode()?;
            r.table_zero = r.ev3.count(r.table.port)?;
            r.table.target = r.table_zero;
            Ok(())
        })?;
        Ok(r)
    }

    /// The driver, for logging and low-level use.
    pub fn ev3(&mut self) -> &mut Ev3 {
        &mut self.ev3
    }

    /// The link's round trip (seconds): the median of `n` pings.
    pub fn round_trip(&mut self, n: usize) -> Result<f64, RobotError> {
        let mut t = Vec::with_capacity(n.max(1));
        for _ in 0..n.max(1) {
            let start = std::time::Instant::now();
            self.ev3.nop()?;
            t.push(start.elapsed().as_secs_f64());
        }
        t.sort_by(f64::total_cmp);
        Ok(t[t.len() / 2])
    }

    /// Ctrl-C: checked before every motor move, and by the driver's waits (see
    /// [Ctrl-C](crate::robot::ev3::driver#ctrl-c)).
    pub fn set_interrupt(&mut self, flag: Arc<AtomicBool>) {
        self.ev3.set_interrupt(flag.clone());
        self.interrupt = Some(flag);
    }

    /// After a primitive failed: whether its change to the cube happened, and what says so;
    /// `None` when nobody can tell (the link is dead, or the motor stopped half way). A
    /// primitive whose cube-changing move was never sent did not happen; one whose move was
    /// confirmed finished did; otherwise the motor's count decides: a table within 8° (of
    /// table) of either end, the arm under the hold-to-apex midway or at its apex.
    pub fn in_flight_landed(&mut self) -> Option<(bool, &'static str)> {
        let (_, effect) = self.attempt?;
        let Some(e) = effect else {
            return Some((false, "its cube-changing move was never sent"));
        };
        if e.done {
            return Some((true, "its cube-changing move finished"));
        }
        let count = self.ev3.count(e.port).ok()?;
        let span = (e.to - e.from) as f64;
        if span.abs() < 1.0 {
            return None;
        }
        let frac = (count - e.from) as f64 / span;
        let (lo, hi, by) = if e.tilt {
            (0.5, 0.95, "tilt-arm count")
        } else {
            let quarter = 90.0 * self.config.turntable.ratio;
            let margin = 8.0 * self.config.turntable.ratio / span.abs().max(quarter);
            (margin, 1.0 - margin, "turntable count")
        };
        if frac <= lo {
            Some((false, by))
        } else if frac >= hi {
            Some((true, by))
        } else {
            None
        }
    }

    /// Every device where the configuration's ports expect it; else each wrong port with
    /// its fix, as `cubot robot check` says it ([`super::wiring::judge_devices`]).
    fn check_devices(&mut self) -> Result<(), RobotError> {
        let inputs: Vec<u8> = OutputPort::ALL
            .iter()
            .map(|p| p.as_input())
            .chain(0..4)
            .collect();
        let types: Vec<i8> = self
            .ev3
            .typemodes(&inputs)?
            .iter()
            .map(|&(t, _)| t)
            .collect();
        let fixes: Vec<String> = super::wiring::judge_devices(&self.config.ports, &types)
            .into_iter()
            .filter(|f| f.level == super::wiring::Level::Fail)
            .map(|f| f.message)
            .collect();
        if fixes.is_empty() {
            Ok(())
        } else {
            Err(RobotError::Wiring { fixes })
        }
    }

    /// Runs `f`; on any error stops every motor (float) before returning it.
    fn guard<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, RobotError>,
    ) -> Result<T, RobotError> {
        match f(self) {
            Ok(v) => Ok(v),
            Err(RobotError::Ev3(Ev3Error::Interrupted { stopped, .. })) => {
                // Ctrl-C inside a wait: the driver already stopped the motors.
                self.arm_state = ArmState::Unknown;
                self.sensor_at = None;
                Err(RobotError::Interrupted {
                    stopped,
                    after: self
                        .last
                        .map(|p| format!("after {p}"))
                        .unwrap_or_else(|| "before its first robot action".into()),
                    state: self.state_description(),
                })
            }
            Err(e) => {
                let _ = self.ev3.stop_all();
                self.arm_state = ArmState::Unknown;
                self.sensor_at = None;
                Err(e)
            }
        }
    }

    /// A description of where the cube is, for messages after a stop.
    pub fn state_description(&self) -> String {
        let o = self.orientation;
        let faces: String = [Face::U, Face::R, Face::F, Face::D, Face::L, Face::B]
            .iter()
            .map(|&p| o.at(p).letter())
            .collect();
        format!(
            "the cube's faces now at top, right, front, bottom, left and back are {faces} (named as the cube was put in); the last robot action done: {}",
            self.last
                .map(|p| format!("{p}"))
                .unwrap_or_else(|| "none yet".into())
        )
    }

    /// Ends with [`RobotError::Interrupted`] (every motor stopped) if a stop was asked
    /// for: between moves, and by a step command whose move under way ended first.
    pub fn check_interrupt(&mut self) -> Result<(), RobotError> {
        if self
            .interrupt
            .as_ref()
            .is_some_and(|f| f.load(Ordering::SeqCst))
        {
            // A chunk's last move still settling ends first (bounded on the brick; the
            // driver's wait gives it a second), so the motors stop between moves.
            let _ = self.await_tail();
            let stopped = self.ev3.stop_all().is_ok();
            return Err(RobotError::Interrupted {
                stopped,
                after: self
                    .last
                    .map(|p| format!("after {p}"))
                    .unwrap_or_else(|| "before its first robot action".into()),
                state: self.state_description(),
            });
        }
        Ok(())
    }

    /// Homes the tilt arm and the sensor arm against their stops, then arm away and
    /// sensor clear.
    pub fn home(&mut self) -> Result<(), RobotError> {
        if self.config.execution.on_brick {
            return self.guard(|r| {
                r.home_on_brick()?;
                r.homed = true;
                // Homed against its retracted stop, the arm is at zero: away, unless the
                // calibration puts away elsewhere.
                r.arm_state = if r.config.arm.away == 0 {
                    ArmState::Away
                } else {
                    ArmState::Unknown
                };
                r.arm_to(ArmState::Away)
            });
        }
        self.guard(|r| {
            let (hs, ss) = (r.config.arm.home_speed, r.config.sensor_arm.home_speed);
            let mut sensor = r.sensor;
            r.ev3
                .home("homing the colour-sensor arm", &mut sensor, ss)?;
            r.sensor = sensor;
            r.sensor_at = Some(0);
            let mut arm = r.arm;
            r.ev3.home("homing the tilt arm", &mut arm, hs)?;
            r.arm = arm;
            r.arm_state = ArmState::Unknown;
            r.homed = true;
            r.arm_to(ArmState::Away)?;
            r.sensor_to(r.config.sensor_arm.clear, "sensor arm to clear")?;
            Ok(())
        })
    }

    /// Homed, and no move of a chunk left running.
    fn ensure_homed(&mut self) -> Result<(), RobotError> {
        self.guard(|r| r.await_tail())?;
        if !self.homed {
            self.home()?;
        }
        Ok(())
    }
}

impl Motor {
    fn bit_nos(&self) -> u8 {
        self.port.bit()
    }
}

fn check_quarter(k: i8) -> Result<i8, RobotError> {
    match k {
        1 | -1 | 2 | -2 => Ok(k),
        other => Err(RobotError::BadQuarters { quarters: other }),
    }
}
