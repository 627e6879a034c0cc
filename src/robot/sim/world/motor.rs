//! The motors' physics in the simulated world: each mechanism's motor, the angle of its
//! shaft (motor degrees from the end stop the robot homes against), its end stops, and
//! what stops it (a jammed mechanism, a collision).
//!
//! A motor moves as its [`Drive`] says: our brick's controller gives it a kinematic
//! velocity, which the shaft follows as far as the mechanism lets it.
//!
//! Level: robot (simulators). Must not depend on a brick, `job` or `cli`. No printing.

use super::Drive;

/// One mechanism's motor and the stops of what it turns.
#[derive(Clone, Debug)]
pub struct Body {
    /// The motor's device type (large or medium motor; "none" for the placeholder).
    pub kind: i8,
    /// Physical angle (motor degrees; 0 = the end stop the robot homes against).
    pub angle: f64,
    /// Mechanical limits (physical degrees).
    pub min: f64,
    pub max: f64,
    /// Stopped by a collision or an injected stall: does not move until its motor lets go
    /// (see [`super::World::release`]).
    pub blocked: bool,
    /// Jammed for good (the `jammed` fault): never moves.
    pub jammed: bool,
}

impl Body {
    pub fn new(kind: i8, angle: f64, min: f64, max: f64) -> Body {
        Body {
            kind,
            angle,
            min,
            max,
            blocked: false,
            jammed: false,
        }
    }

    /// Whether the mechanism cannot move now.
    pub fn stuck(&self) -> bool {
        self.blocked || self.jammed
    }

    /// Moves the shaft over `dt` as `drive` says, within the stops; returns the movement.
    pub fn step(&mut self, dt: f64, drive: &Drive) -> f64 {
        let v = match *drive {
            Drive::Idle => return 0.0,
            Drive::Velocity(v) => v,
        };
        if self.stuck() {
            return 0.0;
        }
        let before = self.angle;
        self.angle = (self.angle + v * dt).clamp(self.min, self.max);
        self.angle - before
    }
}
