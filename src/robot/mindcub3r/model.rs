//! The MindCub3r's vocabulary, shared by the planner, the driver and the simulator:
//! robot positions, the cube's orientation in the robot, and the primitives with their
//! effect on the cube.
//!
//! The robot frame is a cube frame: Top = U, Right = R, Front = F, Bottom = D, Left = L,
//! Back = B, where Back is the side that goes to the bottom when the arm tilts the cube
//! (see [Robot frame](crate::robot::mindcub3r#robot-frame)). In that frame every primitive is a move:
//!
//! | primitive  | move in the robot frame |
//! |------------|-------------------------|
//! | `Tilt`     | `x` (Front → Top → Back → Bottom → Front) |
//! | `Spin(+1)` | `y` (Right → Front → Left → Back) |
//! | `Spin(-1)` | `y'` |
//! | `Spin(2)`  | `y2` |
//! | `Turn(+1)` | `D'` (the bottom layer, upper layers held) |
//! | `Turn(-1)` | `D` |
//! | `Turn(2)`  | `D2` |
//!
//! The sign of the turntable is one calibration flag (`mindcub3r.toml`), so the physical
//! sense of `+` can be fixed per robot without touching this table.
//!
//! Level: robot (uses `cube` only). Must not depend on the driver, the planner or the
//! simulators, which all build on it. No printing.

use serde::{Deserialize, Serialize};

use crate::cube::{Axis, Face, Move, MoveKind, Turn};

/// Where the colour-sensor arm can be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SensorPosition {
    Parked,
    Clear,
    Corner,
    Edge,
    Centre,
}

/// One robot action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "op", content = "arg", rename_all = "kebab-case")]
pub enum Primitive {
    /// Tilt arm clear of the cube.
    ArmAway,
    /// Tilt arm pressing the upper layers.
    ArmHold,
    /// Tilt the whole cube once (the arm must hold first).
    Tilt,
    /// Turn the whole cube on the turntable, arm away: +1, −1 (quarter turns) or 2.
    Spin(i8),
    /// Turn the bottom layer, arm holding: +1, −1 (quarter turns) or 2.
    Turn(i8),
    /// Move the colour-sensor arm.
    Sensor(SensorPosition),
    /// Read the colour sensor (RGB-RAW).
    Read,
}

impl Primitive {
    /// The move this primitive makes in the robot frame, if it moves the cube.
    pub fn as_move(self) -> Option<Move> {
        match self {
            Primitive::Tilt => Some(Move::new(MoveKind::Rotation(Axis::X), Turn::Cw)),
            Primitive::Spin(k) => Some(Move::new(
                MoveKind::Rotation(Axis::Y),
                quarter_turn(k as i32),
            )),
            Primitive::Turn(k) => Some(Move::new(
                MoveKind::Face(Face::D),
                quarter_turn(-(k as i32)),
            )),
            _ => None,
        }
    }
}

fn quarter_turn(k: i32) -> Turn {
    Turn::from_quarters(k).unwrap_or(Turn::Half)
}

/// Which cube face (named by its centre colour) is at each robot position, indexed by the
/// position's face in the robot frame (URFDLB order: Top, Right, Front, Bottom, Left, Back).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Orientation(pub [Face; 6]);

impl Default for Orientation {
    fn default() -> Self {
        Orientation::IDENTITY
    }
}

impl Orientation {
    /// U on top, F in front.
    pub const IDENTITY: Orientation = Orientation(Face::ALL);

    /// All 24 orientations.
    pub fn all() -> Vec<Orientation> {
        let mut out = vec![Orientation::IDENTITY];
        let mut i = 0;
        while i < out.len() {
            let o = out[i];
            for next in [o.after(Primitive::Tilt), o.after(Primitive::Spin(1))] {
                if !out.contains(&next) {
                    out.push(next);
                }
            }
            i += 1;
        }
        out
    }

    /// The cube face at a robot position.
    pub fn at(&self, position: Face) -> Face {
        self.0[position.index()]
    }

    /// The robot position of a cube face.
    pub fn position_of(&self, face: Face) -> Face {
        Face::ALL[self
            .0
            .iter()
            .position(|&f| f == face)
            .expect("each face once")]
    }

    /// The orientation after a whole-cube primitive (others leave it unchanged).
    pub fn after(&self, p: Primitive) -> Orientation {
        match p.as_move() {
            Some(mv) if matches!(mv.kind, MoveKind::Rotation(_)) => {
                // Centres move like any sticker: read the rotation's effect on the six
                // centres of a 3x3x3.
                let perm = mv.permutation(crate::cube::Size::Three);
                Orientation(std::array::from_fn(|pos| {
                    let from = perm.0[pos * 9 + 4] as usize / 9;
                    self.0[from]
                }))
            }
            _ => *self,
        }
    }
}

/// Seconds per primitive, used by the planner's cost model and the simulator's clock.
/// Defaults are idealised estimates from the ev3dev MindCub3r demo's angles and speeds, not
/// measurements (see [Timings](crate::robot::mindcub3r#timings)).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Timings {
    pub arm_away_to_hold: f64,
    pub arm_hold_to_away: f64,
    pub tilt: f64,
    pub spin_quarter: f64,
    pub spin_half: f64,
    pub turn_quarter: f64,
    pub turn_half: f64,
    pub sensor_move: f64,
    pub read: f64,
}

impl Default for Timings {
    fn default() -> Self {
        Timings {
            arm_away_to_hold: 0.28,
            arm_hold_to_away: 0.28,
            tilt: 0.71,
            spin_quarter: 0.68,
            spin_half: 1.35,
            turn_quarter: 0.90,
            turn_half: 1.57,
            sensor_move: 0.3,
            read: 0.02,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tilt_moves_front_to_top_and_top_to_back() {
        let o = Orientation::IDENTITY.after(Primitive::Tilt);
        assert_eq!(o.at(Face::U), Face::F);
        assert_eq!(o.at(Face::B), Face::U);
        assert_eq!(o.at(Face::D), Face::B);
        assert_eq!(o.at(Face::F), Face::D);
        assert_eq!(o.at(Face::L), Face::L);
    }

    #[test]
    fn spin_plus_moves_right_to_front() {
        let o = Orientation::IDENTITY.after(Primitive::Spin(1));
        assert_eq!(o.at(Face::F), Face::R);
        assert_eq!(o.at(Face::L), Face::F);
        assert_eq!(o.at(Face::U), Face::U);
    }

    #[test]
    fn twenty_four_orientations() {
        assert_eq!(Orientation::all().len(), 24);
    }

    #[test]
    fn scan_sequence_ends_in_the_documented_orientation() {
        // U, tilt F, tilt D, spin -1 tilt L, spin +1 tilt B, tilt R: [Top,Bottom,Front,Left,Back,Right] = R L F U B D
        let mut o = Orientation::IDENTITY;
        for p in [
            Primitive::Tilt,
            Primitive::Tilt,
            Primitive::Spin(-1),
            Primitive::Tilt,
            Primitive::Spin(1),
            Primitive::Tilt,
            Primitive::Tilt,
        ] {
            o = o.after(p);
        }
        let got: Vec<Face> = [Face::U, Face::D, Face::F, Face::L, Face::B, Face::R]
            .iter()
            .map(|&p| o.at(p))
            .collect();
        assert_eq!(
            got,
            vec![Face::R, Face::L, Face::F, Face::U, Face::B, Face::D]
        );
    }
}
