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

/// The words a user types for a position (`robot sensor edge`): parked, clear, corner,
/// edge, centre.
impl std::fmt::Display for SensorPosition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SensorPosition::Parked => "parked",
            SensorPosition::Clear => "clear",
            SensorPosition::Corner => "corner",
            SensorPosition::Edge => "edge",
            SensorPosition::Centre => "centre",
        })
    }
}

/// A primitive as the step command that does it (`robot tilt`, `robot spin -1`, `robot
/// sensor edge`): the words of messages, never a Rust name.
impl std::fmt::Display for Primitive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Primitive::ArmAway => f.write_str("arm away"),
            Primitive::ArmHold => f.write_str("arm hold"),
            Primitive::Tilt => f.write_str("tilt"),
            Primitive::Spin(k) => write!(f, "spin {k}"),
            Primitive::Turn(k) => write!(f, "turn {k}"),
            Primitive::Sensor(p) => write!(f, "sensor {p}"),
            Primitive::Read => f.write_str("read"),
        }
    }
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

    /// This orientation expressed in the frame whose orientation was `base` (both in one
    /// common frame).
    pub fn relative_to(&self, base: &Orientation) -> Orientation {
        Orientation(std::array::from_fn(|pos| base.position_of(self.0[pos])))
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

/// Seconds per primitive, the planner's cost model: each primitive's time on a link
/// without latency, plus the link round trips it waits for times the link's round trip
/// (see [Timings](crate::robot::mindcub3r#timings)). Measured with `cubot robot
/// calibrate-timings`.
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
    /// Seconds of one link round trip: the link's own where a robot is connected (measured
    /// at connect), this value when planning without one.
    pub round_trip: f64,
    /// Link round trips each primitive waits for (the driver's commands that the robot's
    /// motion does not hide), fitted over links of different latency.
    pub round_trips: RoundTrips,
}

/// Link round trips per primitive, keyed as [`Timings`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RoundTrips {
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

/// The priced primitive kinds, in the order of [`Timings`]' fields.
pub const TIMING_KEYS: [&str; 9] = [
    "arm_away_to_hold",
    "arm_hold_to_away",
    "tilt",
    "spin_quarter",
    "spin_half",
    "turn_quarter",
    "turn_half",
    "sensor_move",
    "read",
];

impl RoundTrips {
    pub fn get(&self) -> [f64; 9] {
        [
            self.arm_away_to_hold,
            self.arm_hold_to_away,
            self.tilt,
            self.spin_quarter,
            self.spin_half,
            self.turn_quarter,
            self.turn_half,
            self.sensor_move,
            self.read,
        ]
    }

    pub fn from_values(v: [f64; 9]) -> RoundTrips {
        RoundTrips {
            arm_away_to_hold: v[0],
            arm_hold_to_away: v[1],
            tilt: v[2],
            spin_quarter: v[3],
            spin_half: v[4],
            turn_quarter: v[5],
            turn_half: v[6],
            sensor_move: v[7],
            read: v[8],
        }
    }

    const ZERO: RoundTrips = RoundTrips {
        arm_away_to_hold: 0.0,
        arm_hold_to_away: 0.0,
        tilt: 0.0,
        spin_quarter: 0.0,
        spin_half: 0.0,
        turn_quarter: 0.0,
        turn_half: 0.0,
        sensor_move: 0.0,
        read: 0.0,
    };
}

impl Default for RoundTrips {
    fn default() -> Self {
        RoundTrips::from_values(DEFAULT_ROUND_TRIPS)
    }
}

/// Seconds per primitive on a link without latency, measured on the simulator with the
/// primitives run in chunks on the brick (see [Timings](crate::robot::mindcub3r#timings)).
const DEFAULT_SECONDS: [f64; 9] = [0.401, 0.394, 0.596, 0.687, 1.156, 0.841, 1.311, 0.38, 0.007];
/// Link round trips per primitive (the same calibration).
const DEFAULT_ROUND_TRIPS: [f64; 9] = [0.98, 0.98, 0.0, 0.99, 1.01, 0.03, 0.13, 1.95, 1.0];

impl Timings {
    /// The seconds per primitive, in [`TIMING_KEYS`] order.
    pub fn seconds(&self) -> [f64; 9] {
        [
            self.arm_away_to_hold,
            self.arm_hold_to_away,
            self.tilt,
            self.spin_quarter,
            self.spin_half,
            self.turn_quarter,
            self.turn_half,
            self.sensor_move,
            self.read,
        ]
    }

    /// Timings from seconds per primitive (no link part).
    pub fn from_seconds(v: [f64; 9]) -> Timings {
        Timings {
            arm_away_to_hold: v[0],
            arm_hold_to_away: v[1],
            tilt: v[2],
            spin_quarter: v[3],
            spin_half: v[4],
            turn_quarter: v[5],
            turn_half: v[6],
            sensor_move: v[7],
            read: v[8],
            round_trip: 0.0,
            round_trips: RoundTrips::ZERO,
        }
    }

    /// The same timings on a link whose round trip takes `seconds`.
    pub fn on_link(&self, seconds: f64) -> Timings {
        Timings {
            round_trip: seconds,
            ..self.clone()
        }
    }

    /// What each primitive costs on the link of [`Timings::round_trip`], as plain seconds
    /// (the link part folded in, so applying it again changes nothing).
    pub fn priced(&self) -> Timings {
        let s = self.seconds();
        let k = self.round_trips.get();
        Timings::from_seconds(std::array::from_fn(|i| s[i] + k[i] * self.round_trip))
    }
}

impl Default for Timings {
    fn default() -> Self {
        Timings {
            round_trip: 0.0,
            round_trips: RoundTrips::default(),
            ..Timings::from_seconds(DEFAULT_SECONDS)
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
    fn a_link_prices_each_primitive_by_its_round_trips_once() {
        let t = Timings::default().on_link(0.06);
        let p = t.priced();
        assert!((p.tilt - (t.tilt + t.round_trips.tilt * 0.06)).abs() < 1e-12);
        assert!((p.turn_half - (t.turn_half + t.round_trips.turn_half * 0.06)).abs() < 1e-12);
        assert_eq!(p.priced(), p, "folding the link in twice changes nothing");
        assert_eq!(Timings::default().priced().tilt, Timings::default().tilt);
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
