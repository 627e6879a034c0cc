//! The MindCub3r's time cost model: the robot state a primitive runs in (orientation, tilt
//! arm, last turntable direction), what each primitive costs there, and the arm
//! preconditions every primitive must meet.
//!
//! Level: robot (uses `cube` and [`super::model`]). No printing.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::model::{Orientation, Primitive, Timings};

/// Why a move sequence cannot be planned.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("move {index} ({mv}) is not a face turn; the robot plans face turns only")]
    NotFaceTurn { index: usize, mv: String },
    #[error("no candidate solutions to plan")]
    NoCandidates,
    #[error("primitive {index} ({primitive}) needs the tilt arm {needs}, but it is {arm}")]
    Precondition {
        index: usize,
        primitive: Primitive,
        needs: Arm,
        arm: Arm,
    },
}

/// Where the tilt arm is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arm {
    Away,
    Hold,
}

impl fmt::Display for Arm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Arm::Away => "away",
            Arm::Hold => "holding",
        })
    }
}

/// The robot's mechanical state as far as planning cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RobotState {
    /// Which cube face is at each robot position.
    pub orientation: Orientation,
    pub arm: Arm,
    /// Sign of the turntable's last motion (+1, −1), 0 when unknown.
    pub turntable: i8,
}

impl RobotState {
    /// A state with the arm away and the turntable direction unknown.
    pub fn new(orientation: Orientation) -> RobotState {
        RobotState {
            orientation,
            arm: Arm::Away,
            turntable: 0,
        }
    }

    /// The state after one primitive (no precondition check; see [`CostModel::run`]).
    pub fn after(&self, p: Primitive) -> RobotState {
        let mut s = *self;
        s.orientation = self.orientation.after(p);
        match p {
            Primitive::ArmAway => s.arm = Arm::Away,
            Primitive::ArmHold | Primitive::Tilt => s.arm = Arm::Hold,
            Primitive::Spin(k) | Primitive::Turn(k) if k != 0 => s.turntable = k.signum(),
            _ => {}
        }
        s
    }
}

/// Seconds per primitive plus the planner's own refinements.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostModel {
    pub timings: Timings,
    /// Extra seconds when the turntable reverses direction (gear backlash to take up before
    /// the table moves). An estimate (a few motor degrees at turntable speed), not a
    /// measurement; 0 disables it.
    pub reversal: f64,
    /// Whether half turns may go either way (`Turn(-2)`) to save a reversal. Off by
    /// default: on the simulated brick's layer-play model a reversed half turn can leave
    /// the layer out of square for the next tilt (under investigation).
    pub both_half_directions: bool,
}

impl Default for CostModel {
    fn default() -> Self {
        CostModel::new(Timings::default())
    }
}

impl CostModel {
    /// The cost model of `timings` on their link (see [`Timings::priced`]).
    pub fn new(timings: Timings) -> CostModel {
        CostModel {
            timings: timings.priced(),
            reversal: 0.03,
            both_half_directions: false,
        }
    }

    /// The same timings without the backlash refinement (what the simulator's clock counts).
    pub fn plain(timings: Timings) -> CostModel {
        CostModel {
            timings: timings.priced(),
            reversal: 0.0,
            both_half_directions: false,
        }
    }

    /// Seconds one primitive takes from state `s` (arm moves that change nothing are free).
    pub fn cost(&self, s: &RobotState, p: Primitive) -> f64 {
        let t = &self.timings;
        let reversal = |k: i8| {
            if s.turntable != 0 && k.signum() != s.turntable {
                self.reversal
            } else {
                0.0
            }
        };
        match p {
            Primitive::ArmAway => match s.arm {
                Arm::Hold => t.arm_hold_to_away,
                Arm::Away => 0.0,
            },
            Primitive::ArmHold => match s.arm {
                Arm::Away => t.arm_away_to_hold,
                Arm::Hold => 0.0,
            },
            Primitive::Tilt => t.tilt,
            Primitive::Spin(k) => {
                (if k.abs() == 2 {
                    t.spin_half
                } else {
                    t.spin_quarter
                }) + reversal(k)
            }
            Primitive::Turn(k) => {
                (if k.abs() == 2 {
                    t.turn_half
                } else {
                    t.turn_quarter
                }) + reversal(k)
            }
            Primitive::Sensor(_) => t.sensor_move,
            Primitive::Read => t.read,
        }
    }

    /// Runs primitives from `start`, checking the arm preconditions (tilt and turn need the
    /// arm holding, a spin needs it away); returns the end state and the seconds taken.
    pub fn run(
        &self,
        start: RobotState,
        prims: &[Primitive],
    ) -> Result<(RobotState, f64), PlanError> {
        let mut s = start;
        let mut total = 0.0;
        for (index, &p) in prims.iter().enumerate() {
            let needs = match p {
                Primitive::Tilt | Primitive::Turn(_) => Some(Arm::Hold),
                Primitive::Spin(_) => Some(Arm::Away),
                _ => None,
            };
            if let Some(needs) = needs {
                if s.arm != needs {
                    return Err(PlanError::Precondition {
                        index,
                        primitive: p,
                        needs,
                        arm: s.arm,
                    });
                }
            }
            total += self.cost(&s, p);
            s = s.after(p);
        }
        Ok((s, total))
    }
}
