//! The MindCub3r mechanism of the simulated world: the tilt arm's regions (away, between,
//! hold, tilting), the turntable and the layers it turns, tilts, the collisions that jam
//! a mechanism, the quantisation of table angles into cube moves, and the cube itself (its
//! colours and the physical identity of every sticker).
//!
//! The mechanism reacts to the motors' movement in each world step (see
//! [`super::World::step`]): it never drives a motor, it only stops one (a collision) or
//! takes it back (a table turned with the arm half down).
//!
//! Level: robot (simulators; uses `cube` and the MindCub3r's primitives). Must not depend
//! on a brick (ours or the firmware's), `job` or `cli`. No printing.

use crate::cube::{Face, FaceletCube, Move, Size};
use crate::robot::mindcub3r::model::Primitive;

/// The physical MindCub3r geometry the simulator enforces (motor degrees from the stops).
#[derive(Clone, Debug)]
pub struct Physics {
    /// Arm A: below this it is clear of the cube.
    pub arm_clear: f64,
    /// Arm A: holding between these.
    pub arm_hold: (f64, f64),
    /// Arm A: a tilt happens when it passes this coming up from hold.
    pub arm_apex: f64,
    pub arm_max: f64,
    /// Turntable motor degrees per table degree and its sense (+1: + = y).
    pub ratio: f64,
    pub sign: f64,
    /// Sensor arm C (negative inwards): radius in mm over the top face, piecewise linear.
    pub sensor_radius: Vec<(f64, f64)>,
    pub sensor_min: f64,
    /// Layers misaligned by more than this (table degrees) jam the arm.
    pub align_tolerance: f64,
    /// A tilt needs the bottom layer square with the upper layers within this (table °).
    pub tilt_tolerance: f64,
    /// Play between the tray and a held bottom layer (table °): a layer turned exactly to
    /// the quarter ends this much short, which is why turns over-rotate and come back
    /// (see [Over-rotation](crate::robot::mindcub3r#over-rotation)).
    pub layer_play: f64,
    /// How far (table °) the tray may turn while the arm is neither clear nor holding
    /// before the cube catches on it.
    pub between_play: f64,
}

impl Default for Physics {
    fn default() -> Self {
        Physics {
            arm_clear: 45.0,
            arm_hold: (70.0, 135.0),
            arm_apex: 165.0,
            arm_max: 230.0,
            ratio: 3.0,
            sign: 1.0,
            sensor_radius: vec![
                (-800.0, -6.6),
                (-750.0, 0.0),
                (-650.0, 19.0),
                (-590.0, 26.9),
                (-400.0, 52.0),
                (0.0, 105.0),
            ],
            sensor_min: -800.0,
            align_tolerance: 20.0,
            tilt_tolerance: 4.0,
            layer_play: 5.0,
            between_play: 1.0,
        }
    }
}

impl Physics {
    /// The sensor's radius over the top face (mm) with the sensor arm at `c` degrees.
    pub fn radius(&self, c: f64) -> f64 {
        let t = &self.sensor_radius;
        if c <= t[0].0 {
            return t[0].1;
        }
        for w in t.windows(2) {
            if c <= w[1].0 {
                let f = (c - w[0].0) / (w[1].0 - w[0].0);
                return w[0].1 + f * (w[1].1 - w[0].1);
            }
        }
        t[t.len() - 1].1
    }
}

/// Sticker pitch and half-width of the sticker itself (mm).
pub fn sticker_geometry(size: Size) -> (f64, f64) {
    match size {
        Size::Three => (19.0, 8.0),
        Size::Two => (25.0, 10.5),
    }
}

/// Where the tilt arm is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Region {
    Away,
    Between,
    Hold,
    Tilting,
}

/// The mechanisms, by index: what each output port's motor turns (see
/// [`super::wiring`]).
pub const TILT_ARM: usize = 0;
pub const TURNTABLE: usize = 1;
pub const SENSOR_ARM: usize = 2;

/// What the cube and the arms did in one step, in order, for the world's log and faults.
#[derive(Debug, PartialEq)]
pub enum Event {
    /// A mechanism jammed (it stays where it was until its motor lets go), and why.
    Jam(usize, String),
    /// The bottom layer turned by a quarter or more relative to the upper layers.
    LayerTurned,
    /// The cube tilted.
    Tilted,
    /// Layer turn K began, and a fault makes it end this many table degrees past the
    /// tray (negative: short of it).
    LayerFault(u64, f64),
    /// Tilt K did not roll the cube over (a fault).
    TiltFailed(u64),
}

/// The faults a cube brings to the mechanism (resolved from the `short-turn`,
/// `overshoot` and `tilt-fail` items of the faults).
#[derive(Clone, Debug, Default)]
pub struct CubeFaults {
    /// Layer turn (from 1) → table degrees its layer ends past the tray (negative: short).
    pub layer_turns: Vec<(u64, f64)>,
    /// Tilts (from 1) that do not roll the cube over.
    pub tilt_fails: Vec<u64>,
}

/// A layer turn under way: how far the tray has turned since it began, the turn's
/// sense, and how far a fault carries the layer off the tray (table degrees, signed as
/// the turn).
#[derive(Clone, Copy, Debug)]
struct Turn {
    travel: f64,
    sense: f64,
    off: f64,
}

/// The cube in the tray and the state of the arms around it.
#[derive(Clone, Debug)]
pub struct Mechanism {
    pub physics: Physics,
    pub size: Size,
    /// The cube in the robot frame (colours) and the physical sticker at each position.
    pub colors: Vec<Face>,
    pub ids: Vec<usize>,
    /// Table degrees the upper layers / the bottom layer have turned since the last
    /// quantisation (+ = y).
    pub upper: f64,
    pub bottom: f64,
    /// The tray's angle in the same frame (the bottom layer stays within the play of it).
    pub tray: f64,
    tilting: bool,
    /// The arm has come to rest at hold since it last was away (a tilt must start there).
    seated: bool,
    arm_region: Region,
    pub tilts: u64,
    /// Table degrees the tray has turned while the arm was neither clear nor holding
    /// (since it got there): the cube gives that much before it catches on the arm.
    between_travel: f64,
    /// The tilt arm's last non-zero move (motor degrees, signed).
    arm_last_move: f64,
    /// Tilts tried (rolled over or not) and layer turns begun, from 1.
    tilt_tries: u64,
    layer_turns: u64,
    turn: Option<Turn>,
    pub faults: CubeFaults,
}

/// The mechanisms' angles before and after the motors moved in a step, and whether the
/// tilt arm's motor is driven at all.
pub struct Motion {
    /// Tilt arm, turntable and sensor arm angles (motor degrees) before the step.
    pub before: [f64; 3],
    /// The same after the motors moved; the reaction may change them.
    pub after: [f64; 3],
    /// The tilt arm's motor has no job (it is not driven).
    pub arm_idle: bool,
}

impl Mechanism {
    pub fn new(cube: &FaceletCube) -> Mechanism {
        Mechanism {
            physics: Physics::default(),
            size: cube.size(),
            colors: cube.colors().to_vec(),
            ids: identity_of(cube),
            upper: 0.0,
            bottom: 0.0,
            tray: 0.0,
            tilting: false,
            seated: false,
            arm_region: Region::Away,
            tilts: 0,
            between_travel: 0.0,
            arm_last_move: 0.0,
            tilt_tries: 0,
            layer_turns: 0,
            turn: None,
            faults: CubeFaults::default(),
        }
    }

    pub fn cube(&self) -> FaceletCube {
        FaceletCube::from_colors(self.size, self.colors.clone()).expect("sizes match")
    }

    /// The cube as a person squaring it would leave it: the cube in the tray and its
    /// bottom layer each taken to the nearest quarter. The same as [`Mechanism::cube`]
    /// while everything is square.
    pub fn squared(&self) -> FaceletCube {
        let mut m = self.clone();
        m.quantise(true, &mut Vec::new());
        m.cube()
    }

    fn region(&self, a: f64) -> Region {
        let p = &self.physics;
        if a < p.arm_clear {
            Region::Away
        } else if a < p.arm_hold.0 {
            Region::Between
        } else if a <= p.arm_hold.1 {
            Region::Hold
        } else {
            Region::Tilting
        }
    }

    fn apply(&mut self, prim: Primitive) {
        let mv: Move = prim.as_move().expect("a cube move");
        let perm = mv.permutation(self.size);
        self.colors = perm.apply(&self.colors);
        self.ids = perm.apply(&self.ids);
    }

    fn misalignment(&self) -> f64 {
        r90(self.upper).max(self.layer_misalignment())
    }

    /// How far the bottom layer is from square with the upper layers.
    pub fn layer_misalignment(&self) -> f64 {
        r90(self.bottom - self.upper)
    }

    /// Half the cube's width (mm).
    pub fn half_width(&self) -> f64 {
        let (pitch, _) = sticker_geometry(self.size);
        pitch * self.size.n() as f64 / 2.0
    }

    /// The cube's and the arms' answer to the motors' movement in one step: collisions
    /// put a mechanism back where it was and jam it, a tilt arm passing its apex tilts the
    /// cube, the turntable turns the cube or its bottom layer.
    pub fn react(&mut self, m: &mut Motion) -> Vec<Event> {
        let mut out = Vec::new();
        let a_before = m.before[TILT_ARM];
        let da = m.after[TILT_ARM] - m.before[TILT_ARM];
        let db = m.after[TURNTABLE] - m.before[TURNTABLE];
        let a = m.after[TILT_ARM];
        let c = m.after[SENSOR_ARM];
        let new_region = self.region(a);
        let sensor_over_cube = self.physics.radius(c) < self.half_width() + 6.0;
        // The arm swinging over the top collides with a sensor arm over the cube.
        if new_region == Region::Tilting && sensor_over_cube && da > 0.0 {
            m.after[TILT_ARM] = a_before;
            out.push(Event::Jam(
                TILT_ARM,
                "tilt arm hit the colour-sensor arm (sensor not at clear)".into(),
            ));
        }
        if new_region != self.arm_region {
            if matches!(self.arm_region, Region::Away | Region::Between)
                && matches!(new_region, Region::Hold | Region::Tilting)
                && self.misalignment() > self.physics.align_tolerance
            {
                let mis = self.misalignment();
                m.after[TILT_ARM] = a_before;
                out.push(Event::Jam(
                    TILT_ARM,
                    format!("arm came down on a cube misaligned by {mis:.0}° of table"),
                ));
            }
            self.arm_region = self.region(m.after[TILT_ARM]);
            self.between_travel = 0.0;
        }
        // The arm comes to rest at hold: it is not driven, or it turns back there (a
        // braked motor pulling back its overshoot).
        let turned_back = da * self.arm_last_move < 0.0;
        if da != 0.0 {
            self.arm_last_move = da;
        }
        match self.arm_region {
            Region::Hold if m.arm_idle || turned_back => self.seated = true,
            Region::Away | Region::Between => self.seated = false,
            _ => {}
        }
        if self.arm_region != Region::Hold {
            // The arm let go: a layer turn under way is over.
            self.turn = None;
        }
        if self.arm_region == Region::Tilting && !self.seated && !self.tilting && da > 0.0 {
            // Swinging up from away without seating at hold: the arm strikes the cube.
            m.after[TILT_ARM] = a_before;
            out.push(Event::Jam(
                TILT_ARM,
                "tilt with the arm coming from away (not seated at hold first)".into(),
            ));
        }
        let a = m.after[TILT_ARM];
        if a >= self.physics.arm_apex && !self.tilting && da > 0.0 {
            if self.misalignment() > self.physics.align_tolerance
                || self.layer_misalignment() > self.physics.tilt_tolerance
            {
                let (mis, l) = (r90(self.upper), self.layer_misalignment());
                out.push(Event::Jam(
                    TILT_ARM,
                    format!(
                        "tilt of a cube {mis:.0}° out of square with the bottom layer {l:.1}° off (a layer turned without enough over-rotation?)"
                    ),
                ));
            } else if self.tilt_fails() {
                // The cube slides back into the tray as it was.
                self.tilting = true;
                out.push(Event::TiltFailed(self.tilt_tries));
            } else {
                self.tilting = true;
                self.quantise(true, &mut out);
                self.apply(Primitive::Tilt);
                // The cube rolls over into the tray: the old bottom layer (and any offset it
                // had) is now a side layer, and the new bottom layer and the layers above it
                // land square in the tray.
                self.upper = self.tray;
                self.bottom = self.tray;
                self.quantise(true, &mut out);
                self.tilts += 1;
                out.push(Event::Tilted);
            }
        }
        if a < self.physics.arm_hold.1 {
            self.tilting = false;
        }
        if db != 0.0 {
            let table = db / self.physics.ratio * self.physics.sign;
            match self.arm_region {
                Region::Away => {
                    self.upper += table;
                    self.bottom += table;
                    self.tray += table;
                }
                Region::Hold => {
                    if self.turn.is_none() {
                        self.layer_turns += 1;
                        let k = self.layer_turns;
                        let off = self.faults.layer_turns.iter().find(|f| f.0 == k);
                        let off = off.map_or(0.0, |f| f.1);
                        if off != 0.0 {
                            out.push(Event::LayerFault(k, off));
                        }
                        self.turn = Some(Turn {
                            travel: 0.0,
                            sense: table.signum(),
                            off,
                        });
                    }
                    if let Some(t) = self.turn.as_mut() {
                        t.travel += table;
                    }
                    // The held layer follows the tray once the play is taken up; a tight
                    // or loose cube's layer falls behind or runs ahead of it over the
                    // first quarter of the turn.
                    self.tray += table;
                    let mut follow = self.tray;
                    if let Some(t) = self.turn.filter(|t| t.off != 0.0) {
                        let share = (t.travel.abs() / 90.0).min(1.0);
                        follow += t.sense * t.off * share;
                    }
                    let p = self.physics.layer_play;
                    self.bottom = self.bottom.clamp(follow - p, follow + p);
                }
                Region::Between | Region::Tilting
                    if (self.between_travel + table.abs()) <= self.physics.between_play =>
                {
                    // A tray settling by a fraction of a degree under an arm on its way
                    // moves the cube within its play.
                    self.between_travel += table.abs();
                    self.upper += table;
                    self.bottom += table;
                    self.tray += table;
                }
                Region::Between | Region::Tilting => {
                    m.after[TURNTABLE] -= db;
                    out.push(Event::Jam(
                        TURNTABLE,
                        format!("turntable moved with the tilt arm at {a:.0}° (neither clear nor holding)"),
                    ));
                }
            }
            self.quantise(false, &mut out);
        }
        out
    }

    /// A tilt is tried: whether a fault makes this one fail.
    fn tilt_fails(&mut self) -> bool {
        self.tilt_tries += 1;
        self.faults.tilt_fails.contains(&self.tilt_tries)
    }

    /// Turns accumulated table angles into cube moves once they reach a quarter.
    fn quantise(&mut self, force: bool, out: &mut Vec<Event>) {
        let tol = if force { 45.0 } else { 8.0 };
        let k = (self.upper / 90.0).round();
        if k != 0.0 && (self.upper - 90.0 * k).abs() < tol {
            let q = k as i64;
            for _ in 0..q.rem_euclid(4) {
                self.apply(Primitive::Spin(1));
            }
            self.upper -= 90.0 * k;
            self.bottom -= 90.0 * k;
            self.tray -= 90.0 * k;
        }
        let rel = self.bottom - self.upper;
        let k = (rel / 90.0).round();
        if k != 0.0 && (rel - 90.0 * k).abs() < tol {
            let q = k as i64;
            for _ in 0..q.rem_euclid(4) {
                self.apply(Primitive::Turn(1));
            }
            if q.rem_euclid(4) != 0 {
                out.push(Event::LayerTurned);
            }
            self.bottom -= 90.0 * k;
            self.tray -= 90.0 * k;
        }
    }
}

/// Distance from the nearest multiple of 90°.
fn r90(x: f64) -> f64 {
    (x - 90.0 * (x / 90.0).round()).abs()
}

/// Physical sticker identities of a cube: for a legal cube, the solved-state facelet each
/// sticker came from (so wear stays with the sticker); otherwise position = identity.
fn identity_of(cube: &FaceletCube) -> Vec<usize> {
    use crate::cube::CubieCube;
    match cube.size() {
        Size::Three => {
            if let Some(cc) = CubieCube::from_facelets(cube) {
                return sticker_sources_3(&cc);
            }
        }
        Size::Two => {}
    }
    (0..cube.size().stickers()).collect()
}

fn sticker_sources_3(cc: &crate::cube::CubieCube) -> Vec<usize> {
    use crate::cube::{CORNER_FACELETS, EDGE_FACELETS};
    let mut ids: Vec<usize> = (0..54).collect();
    for (slot, facelets) in CORNER_FACELETS.iter().enumerate() {
        let piece = cc.cp[slot] as usize;
        let ori = cc.co[slot] as usize;
        for k in 0..3 {
            ids[facelets[(k + ori) % 3]] = CORNER_FACELETS[piece][k];
        }
    }
    for (slot, facelets) in EDGE_FACELETS.iter().enumerate() {
        let piece = cc.ep[slot] as usize;
        let ori = cc.eo[slot] as usize;
        for k in 0..2 {
            ids[facelets[(k + ori) % 2]] = EDGE_FACELETS[piece][k];
        }
    }
    ids
}
