//! The line protocol: a small, acknowledged text protocol for Arduino-style cube robots
//! with one motor per face (or five): capabilities, move tokens, the substitution for a
//! missing face and the robot's execution-time metric used to pick the cheapest solution.
//! Pure: no I/O. The host is [`super::host`]; the simulator speaking the same protocol on a
//! pseudo-terminal is [`crate::robot::sim::line`].
//!
//! Level: robot (depends on `cube`, `color::raw` and [`crate::robot::symmetry`]). Must not
//! depend on the link or the simulators. No printing.
//!
//! ## The protocol (version 1)
//! ASCII lines ending in `\n` (a `\r` before it is ignored), at any baud rate the link
//! needs (115200 8N1 is usual for an Arduino over USB).
//!
//! Host → robot: `<seq> <VERB> [ARGS...]`. `seq` is a decimal number 1..=65535 that the
//! host increases by one for every new command (65535 wraps to 1). A command sent again
//! with the *same* `seq` (the host saw no reply and retries) is **not executed twice**: the
//! robot replays the replies it gave. A `seq` that is neither the last one nor the next
//! new one is still accepted (the host may have restarted) — sequence numbers make retries
//! safe, they are not a session.
//!
//! Robot → host, for every command:
//! * `<seq> ACK` at once: the line was read and is being executed;
//! * for `MOVE` only, `<seq> DONE <i> <TOKEN>` after the i-th token (0-based) has finished,
//!   so the host always knows which turns were made, even if the link dies mid-line;
//! * then exactly one of `<seq> OK [key=value...]` or `<seq> ERR <CODE> <text>`.
//!
//! Lines starting with `#` are comments the host ignores (a robot may print a banner).
//!
//! | verb | arguments | reply |
//! |------|-----------|-------|
//! | `CAPS` | — | `OK proto=1 name=<id> faces=<which of URFDLB have a motor> parallel=0\|1 quarter_ms=<ms> half_ms=<ms> speed=<pct> state=0\|1 scan=0\|1 size=3\|2 [scale=...]` |
//! | `HOME` | — | `OK` once every face is square (needed once before `MOVE`) |
//! | `SPEED` | `<pct>` 1..=100 | `OK speed=<pct>`; turn times scale with 100/pct |
//! | `MOVE` | tokens | `OK moves=<n>` after all; each token is a face turn in Singmaster (`R`, `U'`, `F2`) or, when `parallel=1`, two turns of opposite faces joined by `+` (`U+D'`) made at the same time |
//! | `STOP` | — | `OK`; a `MOVE` in progress stops after its current token and answers `ERR STOPPED` |
//! | `STATE` | — | `OK state=<facelets>` (only when `state=1`: simulators, or robots that track their cube) |
//! | `SCAN` | [sticker indices] | `OK scan=r,g,b;r,g,b;...` (only when `scan=1`: robots with colour sensors or cameras): one reading per sticker in URFDLB facelet order (or of the stickers named, in that order), on the scale given by `CAPS` `scale=rgb8\|ev3-raw\|unit` |
//!
//! Error codes: `SYNTAX` (unreadable line or token), `VERB` (unknown verb), `FACE` (no motor
//! for that face), `PARALLEL` (a `+` token on a robot without `parallel=1`, or not opposite
//! faces), `RANGE` (speed out of range), `NOT_HOMED` (`MOVE` before `HOME`), `STALL` (a motor
//! did not reach its position: the robot stops; the `DONE` lines say what was made),
//! `STOPPED`, `UNSUPPORTED` (e.g. `STATE` on a robot that does not track its cube).
//!
//! Example:
//! ```text
//! > 1 CAPS
//! < 1 ACK
//! < 1 OK proto=1 name=uno-6 faces=URFDLB parallel=1 quarter_ms=180 half_ms=300 speed=100 state=0
//! > 2 HOME
//! < 2 ACK
//! < 2 OK
//! > 3 MOVE R U' F2 U+D'
//! < 3 ACK
//! < 3 DONE 0 R
//! < 3 DONE 1 U'
//! < 3 DONE 2 F2
//! < 3 DONE 3 U+D'
//! < 3 OK moves=4
//! ```
//!
//! ## Five motors
//! A robot without a motor for one face (`faces=URFDL`, say) still solves every cube: each
//! turn of the missing face is replaced by a 13-move sequence of the other faces that has
//! the same effect on the cube ([`substitute_missing`]).
//!
//! ## Execution-time metric
//! A quarter turn costs `quarter_ms`, a half turn `half_ms` (both × 100/speed); two
//! consecutive turns of opposite faces cost one step (the slower of the two) when the robot
//! says `parallel=1` ([`LineCaps::seconds`]).

use super::error::LineError;
use crate::cube::{Alg, Face, Move, MoveKind, Turn};
use crate::robot::symmetry::Symmetry;

/// What the robot said it can do (`CAPS`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LineCaps {
    pub proto: u32,
    pub name: String,
    /// Faces with a motor.
    pub faces: Vec<Face>,
    pub parallel: bool,
    pub quarter_ms: u32,
    pub half_ms: u32,
    pub speed: u32,
    /// Whether `STATE` answers.
    pub state: bool,
    /// Whether `SCAN` answers, and on which scale.
    pub scan: Option<crate::color::raw::Scale>,
    /// Cube size the robot is built for (3 or 2).
    pub size: u32,
}

impl LineCaps {
    /// Parses the `key=value` words of a `CAPS` reply.
    pub fn parse(words: &str) -> Result<LineCaps, String> {
        let mut caps = LineCaps {
            proto: 0,
            name: String::new(),
            faces: Vec::new(),
            parallel: false,
            quarter_ms: 0,
            half_ms: 0,
            speed: 100,
            state: false,
            scan: None,
            size: 3,
        };
        let mut scan = false;
        let mut scale = crate::color::raw::Scale::Rgb8;
        let num = |k: &str, v: &str| -> Result<u32, String> {
            v.parse::<u32>()
                .map_err(|_| format!("{k}={v:?} is not a number"))
        };
        for w in words.split_whitespace() {
            let Some((k, v)) = w.split_once('=') else {
                return Err(format!("{w:?} is not key=value"));
            };
            match k {
                "proto" => caps.proto = num(k, v)?,
                "name" => caps.name = v.to_string(),
                "faces" => {
                    caps.faces = v
                        .chars()
                        .map(|c| {
                            Face::from_letter(c).ok_or(format!("faces={v:?}: {c:?} is no face"))
                        })
                        .collect::<Result<_, _>>()?
                }
                "parallel" => caps.parallel = v == "1",
                "quarter_ms" => caps.quarter_ms = num(k, v)?,
                "half_ms" => caps.half_ms = num(k, v)?,
                "speed" => caps.speed = num(k, v)?.clamp(1, 100),
                "state" => caps.state = v == "1",
                "scan" => scan = v == "1",
                "scale" => {
                    scale = serde_json::from_value(serde_json::Value::String(v.to_string()))
                        .map_err(|_| format!("scale={v:?} (rgb8, ev3-raw, unit)"))?
                }
                "size" => caps.size = num(k, v)?,
                _ => {} // unknown keys are for newer hosts
            }
        }
        caps.scan = scan.then_some(scale);
        if caps.size != 2 && caps.size != 3 {
            return Err(format!("size={} (2 or 3)", caps.size));
        }
        if caps.proto != 1 {
            return Err(format!(
                "protocol version {} (this host speaks 1)",
                caps.proto
            ));
        }
        if caps.faces.len() < 5 {
            return Err(format!(
                "{} face motors: a cube needs at least five",
                caps.faces.len()
            ));
        }
        if caps.quarter_ms == 0 || caps.half_ms == 0 {
            return Err("quarter_ms and half_ms must be positive".into());
        }
        Ok(caps)
    }

    /// The `CAPS` reply words.
    pub fn to_words(&self) -> String {
        format!(
            "proto={} name={} faces={} parallel={} quarter_ms={} half_ms={} speed={} state={} size={} scan={}{}",
            self.proto,
            self.name,
            self.faces.iter().map(|f| f.letter()).collect::<String>(),
            u8::from(self.parallel),
            self.quarter_ms,
            self.half_ms,
            self.speed,
            u8::from(self.state),
            self.size,
            u8::from(self.scan.is_some()),
            match self.scan {
                Some(sc) => format!(
                    " scale={}",
                    serde_json::to_value(sc)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default()
                ),
                None => String::new(),
            }
        )
    }

    /// Seconds one step (one turn, or two parallel opposite turns) takes.
    pub fn step_seconds(&self, step: &[Move]) -> f64 {
        let scale = 100.0 / self.speed.max(1) as f64 / 1000.0;
        step.iter()
            .map(|m| {
                if m.turn == Turn::Half {
                    self.half_ms
                } else {
                    self.quarter_ms
                }
            })
            .max()
            .unwrap_or(0) as f64
            * scale
    }

    /// Robot seconds for an already-grouped sequence.
    pub fn seconds(&self, steps: &[Vec<Move>]) -> f64 {
        steps.iter().map(|s| self.step_seconds(s)).sum()
    }

    /// The steps this robot executes for a solution: missing faces substituted, opposite
    /// turns paired when the robot can make them together.
    pub fn steps(&self, alg: &Alg) -> Result<Vec<Vec<Move>>, LineError> {
        let alg = substitute_missing(alg, &self.faces)?;
        let mut out: Vec<Vec<Move>> = Vec::new();
        for &m in alg.moves() {
            let MoveKind::Face(f) = m.kind else {
                return Err(LineError::NotFaceTurn { mv: m });
            };
            if self.parallel {
                if let Some(last) = out.last_mut() {
                    if last.len() == 1 && last[0].kind == MoveKind::Face(f.opposite()) {
                        last.push(m);
                        continue;
                    }
                }
            }
            out.push(vec![m]);
        }
        Ok(out)
    }
}

/// `U` made without turning U (R L' F2 B2 R L' D R' L F2 B2 R' L: the two `R L'` blocks act
/// as a slice move that carries D's turn up to U).
const U_WITHOUT_U: &str = "R L' F2 B2 R L' D R' L F2 B2 R' L";

/// Replaces every turn of a face without a motor by turns of the others.
pub fn substitute_missing(alg: &Alg, faces: &[Face]) -> Result<Alg, LineError> {
    let missing: Vec<Face> = Face::ALL
        .into_iter()
        .filter(|f| !faces.contains(f))
        .collect();
    if missing.is_empty() {
        return Ok(alg.clone());
    }
    if missing.len() > 1 {
        return Err(LineError::MissingFaces { faces: missing });
    }
    let gone = missing[0];
    // A rotation symmetry that takes U to the missing face relabels the identity.
    let sym = Symmetry::all(false)
        .into_iter()
        .find(|s| s.map_back(&Alg::parse("U").expect("U")).moves()[0].kind == MoveKind::Face(gone))
        .expect("some rotation takes U anywhere");
    let quarter = sym.map_back(&Alg::parse(U_WITHOUT_U).expect("constant parses"));
    let mut out = Vec::new();
    for &m in alg.moves() {
        if m.kind == MoveKind::Face(gone) {
            let rep = match m.turn {
                Turn::Cw => quarter.clone(),
                Turn::Ccw => quarter.inverse(),
                Turn::Half => quarter.then(&quarter),
            };
            out.extend_from_slice(rep.moves());
        } else {
            out.push(m);
        }
    }
    Ok(Alg::from_moves(out).simplified())
}

/// Formats a step as a `MOVE` token (`R`, `U+D'`).
pub fn token(step: &[Move]) -> String {
    step.iter()
        .map(|m| m.to_string())
        .collect::<Vec<_>>()
        .join("+")
}

/// Reads a `MOVE` token.
pub fn parse_token(tok: &str) -> Option<Vec<Move>> {
    let mut out = Vec::new();
    for part in tok.split('+') {
        let alg = Alg::parse(part).ok()?;
        if alg.len() != 1 || !matches!(alg.moves()[0].kind, MoveKind::Face(_)) {
            return None;
        }
        out.push(alg.moves()[0]);
    }
    (!out.is_empty() && out.len() <= 2).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::{random_moves, random_state, Size};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn caps(parallel: bool, faces: &str) -> LineCaps {
        LineCaps::parse(&format!(
            "proto=1 name=t faces={faces} parallel={} quarter_ms=200 half_ms=320 speed=100 state=1",
            u8::from(parallel)
        ))
        .unwrap()
    }

    #[test]
    fn five_face_substitution_is_exact() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for gone in Face::ALL {
            let faces: Vec<Face> = Face::ALL.into_iter().filter(|&f| f != gone).collect();
            let alg = random_moves(Size::Three, 25, &mut rng);
            let sub = substitute_missing(&alg, &faces).unwrap();
            assert!(sub.moves().iter().all(|m| m.kind != MoveKind::Face(gone)));
            let cube = random_state(Size::Three, &mut rng);
            let (mut a, mut b) = (cube.clone(), cube.clone());
            a.apply(&alg).unwrap();
            b.apply(&sub).unwrap();
            assert_eq!(a, b, "without {gone}");
        }
        assert!(substitute_missing(
            &Alg::parse("R").unwrap(),
            &[Face::U, Face::R, Face::F, Face::D]
        )
        .is_err());
    }

    #[test]
    fn parallel_steps_and_costs() {
        let alg = Alg::parse("U D' R2 L F B2 F").unwrap();
        let c = caps(true, "URFDLB");
        let steps = c.steps(&alg).unwrap();
        let toks: Vec<String> = steps.iter().map(|s| token(s)).collect();
        assert_eq!(toks, vec!["U+D'", "R2+L", "F+B2", "F"]);
        assert!((c.seconds(&steps) - (0.2 + 0.32 + 0.32 + 0.2)).abs() < 1e-9);
        let serial = caps(false, "URFDLB");
        let steps = serial.steps(&alg).unwrap();
        assert_eq!(steps.len(), 7);
        for t in &toks {
            assert_eq!(&token(&parse_token(t).unwrap()), t);
        }
        assert!(parse_token("x").is_none());
        assert!(parse_token("R+U+F").is_none());
    }

    #[test]
    fn caps_are_checked() {
        assert!(LineCaps::parse("proto=2 faces=URFDLB quarter_ms=1 half_ms=1").is_err());
        assert!(LineCaps::parse("proto=1 faces=URFD quarter_ms=1 half_ms=1").is_err());
        assert!(LineCaps::parse("proto=1 faces=URFDLB quarter_ms=x half_ms=1").is_err());
        let c = caps(true, "URFDL");
        assert_eq!(LineCaps::parse(&c.to_words()).unwrap(), c);
    }
}
