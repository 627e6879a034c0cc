//! The motors' physics in the simulated world: each mechanism's motor, the angle of its
//! shaft (motor degrees from the end stop the robot homes against), its end stops, and
//! what stops it (a jammed mechanism, a collision).
//!
//! A motor moves as its [`Drive`] says: our brick's controller gives it a kinematic
//! velocity, which the shaft follows as far as the mechanism lets it (its end stops are
//! rigid then); a brick that drives it electrically (duty and bridge mode) turns it through
//! the DC-motor model of [`super::electric`].
//!
//! Level: robot (simulators). Must not depend on a brick, `job` or `cli`. No printing.

use super::electric::{Bridge, Crossing, DcMotor, Load, Shaft};
use super::Drive;

/// One mechanism's motor and the stops of what it turns.
#[derive(Clone, Debug)]
pub struct Body {
    /// The motor's device type (large or medium motor; "none" for the placeholder).
    pub kind: i8,
    /// The motor shaft's angle (motor degrees; what its tacho counts).
    pub angle: f64,
    /// How far the mechanism lags its motor (motor degrees) since its gear skipped (the
    /// `slip` fault): the mechanism is at `angle − slip` ([`Body::mech`]).
    pub slip: f64,
    /// Motor degrees the mechanism has still to lose (a skip under way).
    pub slip_pending: f64,
    /// The mechanism's limits (physical degrees: 0 = the end stop the robot homes
    /// against).
    pub min: f64,
    pub max: f64,
    /// Stopped by a collision or an injected stall: does not move until its motor lets go
    /// (see [`super::World::release`]).
    pub blocked: bool,
    /// Jammed for good (the `jammed` fault): never moves.
    pub jammed: bool,
    /// Present speed (motor degrees per second).
    pub omega: f64,
    /// The motor's electrical model (`None`: no motor, a placeholder).
    pub dc: Option<DcMotor>,
    /// What the mechanism adds to the motor.
    pub load: Load,
}

impl Body {
    pub fn new(
        kind: i8,
        angle: f64,
        (min, max): (f64, f64),
        dc: Option<DcMotor>,
        load: Load,
    ) -> Body {
        Body {
            kind,
            angle,
            slip: 0.0,
            slip_pending: 0.0,
            min,
            max,
            blocked: false,
            jammed: false,
            omega: 0.0,
            dc,
            load,
        }
    }

    /// The mechanism's angle (physical degrees, in motor degrees).
    pub fn mech(&self) -> f64 {
        self.angle - self.slip
    }

    /// The mechanism moved with its motor by `moved` motor degrees in a step: a skip under
    /// way takes its share (the mechanism stood still for it).
    pub fn skip(&mut self, moved: f64) {
        if self.slip_pending > 0.0 && moved != 0.0 {
            let lost = self.slip_pending.min(moved.abs());
            self.slip_pending -= lost;
            self.slip += lost * moved.signum();
        }
    }

    /// Whether the mechanism cannot move now.
    pub fn stuck(&self) -> bool {
        self.blocked || self.jammed
    }

    /// Moves the shaft over `dt` at the kinematic velocity `v` (`None`: not driven, at
    /// rest), within the stops; returns the movement.
    pub fn step_kinematic(&mut self, dt: f64, v: Option<f64>) -> f64 {
        let Some(v) = v.filter(|_| !self.stuck()) else {
            self.omega = 0.0;
            return 0.0;
        };
        let before = self.angle;
        self.angle = (self.angle + v * dt - self.slip).clamp(self.min, self.max) + self.slip;
        let moved = self.angle - before;
        self.omega = moved / dt;
        moved
    }

    /// Moves the shaft over `dt` as `drive` says from a battery of `volts`; the whole
    /// degrees an electrically driven shaft crosses go to `edges`.
    pub fn step(&mut self, dt: f64, drive: &Drive, volts: f64, edges: &mut Vec<Crossing>) {
        match *drive {
            Drive::Idle => {
                self.step_kinematic(dt, None);
            }
            Drive::Velocity(v) => {
                self.step_kinematic(dt, Some(v));
            }
            Drive::Electrical { duty, bridge } => {
                self.step_electrical(dt, duty, bridge, volts, edges);
            }
        }
    }

    /// Moves the shaft over `dt` under `duty` in `bridge` mode from a battery of `volts`
    /// through the motor's DC model ([`Shaft::integrate`]); a jammed or blocked mechanism,
    /// or a port without a motor, does not move.
    pub fn step_electrical(
        &mut self,
        dt: f64,
        duty: u16,
        bridge: Bridge,
        volts: f64,
        edges: &mut Vec<Crossing>,
    ) {
        let Some(dc) = self.dc.filter(|_| !self.stuck()) else {
            self.omega = 0.0;
            return;
        };
        let mut shaft = Shaft {
            angle: self.angle,
            omega: self.omega,
            min: self.min + self.slip,
            max: self.max + self.slip,
        };
        shaft.integrate(&dc, &self.load, dt, duty, bridge, volts, edges);
        self.angle = shaft.angle;
        self.omega = shaft.omega;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::robot::ev3::protocol::device;

    #[test]
    fn a_jammed_mechanism_does_not_move_under_full_duty() {
        let load = Load { j: 0.0, tau_c: 0.0 };
        let mut b = Body::new(
            device::LARGE_MOTOR,
            5.0,
            (0.0, 90.0),
            Some(DcMotor::large()),
            load,
        );
        b.jammed = true;
        let mut edges = Vec::new();
        for _ in 0..100 {
            b.step_electrical(0.002, 10_000, Bridge::Forward, 9.0, &mut edges);
        }
        assert!(edges.is_empty());
        assert_eq!((b.angle, b.omega), (5.0, 0.0));
        b.jammed = false;
        b.step_electrical(0.002, 10_000, Bridge::Forward, 9.0, &mut edges);
        assert!(b.omega > 0.0);
    }
}
