//! Move sequences: parsing and formatting Singmaster and numeric notation, inversion,
//! cancellation.
//!
//! Accepted: face turns `U R F D L B`, wide turns `Uw`/`u`, slices `M E S`, rotations
//! `x y z`; suffixes `'` and its look-alikes `’ ‘ ′ ´` and a backtick (anticlockwise: what a phone or a web page types), `2`, `2'` (half), and the numeric style
//! `R1 R2 R3`; groups with repetition `(R U R' U')3`, nested. Spaces are optional.
//!
//! Level: part of `cube`; depends on `face` and `moves`. Must not depend on facelet or cubie
//! cubes; no I/O.

use std::fmt;

use super::face::{Axis, Face, Turn};
use super::moves::{Move, MoveKind, Slice};

/// A sequence of moves.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Alg {
    moves: Vec<Move>,
}

/// Why a move sequence could not be read. Positions count characters from 1.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotationError {
    #[error("position {position}: {found:?} is not a move")]
    NotAMove { position: usize, found: char },
    #[error("position {position}: turn count {count} (expected 1, 2 or 3)")]
    TurnCount { position: usize, count: u64 },
    #[error("position {position}: {found:?} has no opening '('")]
    UnopenedGroup { position: usize, found: char },
    #[error("position {position}: '(' is never closed")]
    UnclosedGroup { position: usize },
    #[error("position {position}: repetition count {count} is too large (at most 1000)")]
    Repetition { position: usize, count: u64 },
    #[error("the sequence expands to more than {limit} moves")]
    TooLong { limit: usize },
}

const MAX_MOVES: usize = 100_000;

impl Alg {
    pub fn new() -> Alg {
        Alg::default()
    }

    pub fn from_moves(moves: Vec<Move>) -> Alg {
        Alg { moves }
    }

    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    pub fn into_moves(self) -> Vec<Move> {
        self.moves
    }

    pub fn len(&self) -> usize {
        self.moves.len()
    }

    pub fn is_empty(&self) -> bool {
        self.moves.is_empty()
    }

    pub fn push(&mut self, mv: Move) {
        self.moves.push(mv);
    }

    /// Length in the half-turn metric.
    pub fn htm(&self) -> u32 {
        self.moves.iter().map(|m| m.htm()).sum()
    }

    /// Length in the quarter-turn metric.
    pub fn qtm(&self) -> u32 {
        self.moves.iter().map(|m| m.qtm()).sum()
    }

    /// The sequence that undoes this one.
    pub fn inverse(&self) -> Alg {
        Alg {
            moves: self.moves.iter().rev().map(|m| m.inverse()).collect(),
        }
    }

    /// `self` followed by `other`.
    pub fn then(&self, other: &Alg) -> Alg {
        let mut moves = self.moves.clone();
        moves.extend_from_slice(&other.moves);
        Alg { moves }
    }

    /// Cancels and merges: consecutive turns of the same layer combine (`R R` → `R2`,
    /// `R R'` → nothing), also across turns of the opposite face, which commute
    /// (`R L R` → `R2 L`).
    pub fn simplified(&self) -> Alg {
        let mut out: Vec<Move> = Vec::with_capacity(self.moves.len());
        for &mv in &self.moves {
            let mut target = None;
            for k in (0..out.len()).rev() {
                let prev = out[k];
                if prev.kind == mv.kind {
                    target = Some(k);
                    break;
                }
                if !commutes(prev, mv) {
                    break;
                }
            }
            match target {
                Some(k) => {
                    let q = out[k].turn.quarters() as i32 + mv.turn.quarters() as i32;
                    match Turn::from_quarters(q) {
                        Some(t) => out[k].turn = t,
                        None => {
                            out.remove(k);
                        }
                    }
                }
                None => out.push(mv),
            }
        }
        Alg { moves: out }
    }

    /// Parses a move sequence (see the module docs).
    pub fn parse(s: &str) -> Result<Alg, NotationError> {
        let chars: Vec<char> = s.chars().collect();
        let mut p = Parser {
            chars: &chars,
            pos: 0,
        };
        let moves = p.sequence(0)?;
        Ok(Alg { moves })
    }

    /// Formats in the numeric style of Kociemba-family tools (`R1 R2 R3`).
    pub fn to_numeric(&self) -> String {
        self.moves
            .iter()
            .map(|m| format!("{}{}", kind_name(m.kind), m.turn.quarters()))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Whether two moves commute in a way `simplified` may use: turns of the two opposite
/// outer layers of one axis.
fn commutes(a: Move, b: Move) -> bool {
    match (a.kind, b.kind) {
        (MoveKind::Face(f), MoveKind::Face(g)) => f.opposite() == g,
        _ => false,
    }
}

fn kind_name(kind: MoveKind) -> String {
    match kind {
        MoveKind::Face(f) => f.letter().to_string(),
        MoveKind::Wide(f) => format!("{}w", f.letter()),
        MoveKind::Slice(s) => s.letter().to_string(),
        MoveKind::Rotation(a) => ["x", "y", "z"][a.index()].to_string(),
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", kind_name(self.kind), self.turn.suffix())
    }
}

/// Singmaster, moves separated by single spaces (`R U' F2`); empty for no moves.
impl fmt::Display for Alg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, m) in self.moves.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{m}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for Alg {
    type Err = NotationError;
    fn from_str(s: &str) -> Result<Alg, NotationError> {
        Alg::parse(s)
    }
}

struct Parser<'a> {
    chars: &'a [char],
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(c) if c.is_whitespace() || c == ',') {
            self.pos += 1;
        }
    }

    fn number(&mut self) -> Option<(usize, u64)> {
        let start = self.pos;
        let mut value: u64 = 0;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            value = value.saturating_mul(10).saturating_add(d as u64);
            self.pos += 1;
        }
        (self.pos > start).then_some((start + 1, value))
    }

    fn sequence(&mut self, depth: usize) -> Result<Vec<Move>, NotationError> {
        let mut out = Vec::new();
        loop {
            self.skip_space();
            let Some(c) = self.peek() else {
                return Ok(out);
            };
            match c {
                '(' => {
                    let open = self.pos + 1;
                    self.pos += 1;
                    let inner = self.sequence(depth + 1)?;
                    if self.peek() != Some(')') {
                        return Err(NotationError::UnclosedGroup { position: open });
                    }
                    self.pos += 1;
                    let times = match self.number() {
                        Some((at, n)) if n > 1000 => {
                            return Err(NotationError::Repetition {
                                position: at,
                                count: n,
                            })
                        }
                        Some((_, n)) => n as usize,
                        None => 1,
                    };
                    let inverted = self.prime();
                    let group: Vec<Move> = if inverted {
                        inner.iter().rev().map(|m| m.inverse()).collect()
                    } else {
                        inner
                    };
                    if out.len() + group.len() * times > MAX_MOVES {
                        return Err(NotationError::TooLong { limit: MAX_MOVES });
                    }
                    for _ in 0..times {
                        out.extend_from_slice(&group);
                    }
                }
                ')' => {
                    if depth == 0 {
                        return Err(NotationError::UnopenedGroup {
                            position: self.pos + 1,
                            found: c,
                        });
                    }
                    return Ok(out);
                }
                _ => {
                    out.push(self.single()?);
                    if out.len() > MAX_MOVES {
                        return Err(NotationError::TooLong { limit: MAX_MOVES });
                    }
                }
            }
        }
    }

    fn prime(&mut self) -> bool {
        if matches!(self.peek(), Some('\'' | '’' | '‘' | '′' | '´' | '`')) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn single(&mut self) -> Result<Move, NotationError> {
        let at = self.pos + 1;
        let c = self.peek().expect("caller checked");
        self.pos += 1;
        let kind = if let Some(f) = Face::from_letter(c) {
            if self.peek() == Some('w') {
                self.pos += 1;
                MoveKind::Wide(f)
            } else {
                MoveKind::Face(f)
            }
        } else if let Some(f) =
            Face::from_letter(c.to_ascii_uppercase()).filter(|_| c.is_ascii_lowercase())
        {
            MoveKind::Wide(f)
        } else {
            match c {
                'M' => MoveKind::Slice(Slice::M),
                'E' => MoveKind::Slice(Slice::E),
                'S' => MoveKind::Slice(Slice::S),
                'x' => MoveKind::Rotation(Axis::X),
                'y' => MoveKind::Rotation(Axis::Y),
                'z' => MoveKind::Rotation(Axis::Z),
                _ => {
                    return Err(NotationError::NotAMove {
                        position: at,
                        found: c,
                    })
                }
            }
        };
        let mut quarters: i32 = 1;
        if let Some((pos, n)) = self.number() {
            quarters = match n {
                1..=3 => n as i32,
                _ => {
                    return Err(NotationError::TurnCount {
                        position: pos,
                        count: n,
                    })
                }
            };
        }
        if self.prime() {
            quarters = -quarters;
        }
        // `R'2` is read as a half turn too.
        if quarters == -1 {
            if let Some((pos, n)) = self.number() {
                quarters = match n {
                    1..=3 => -(n as i32),
                    _ => {
                        return Err(NotationError::TurnCount {
                            position: pos,
                            count: n,
                        })
                    }
                };
            }
        }
        let turn = Turn::from_quarters(quarters).expect("1..3 quarters, signed");
        Ok(Move::new(kind, turn))
    }
}

#[cfg(test)]
mod tests {
    use super::Alg;

    #[test]
    fn a_prime_typed_by_a_phone_or_a_web_page_is_a_prime() {
        let plain = Alg::parse("R' U' F2' D'").unwrap();
        for typed in ["R’ U‘ F2′ D´", "R` U’ F2‘ D′"] {
            assert_eq!(Alg::parse(typed).unwrap(), plain, "{typed}");
        }
    }
}
