//! Facelet-level cubes: 54 (or 24) stickers, each coloured with the face whose colour it
//! shows, and parsing of facelet strings in any alphabet of six symbols.
//!
//! Level: part of `cube`; depends on `face`, `size`, `slots`, `moves` and `notation`. Must not
//! depend on cubie cubes or validation; no I/O.

use std::fmt;

use super::face::Face;
use super::moves::Move;
use super::notation::Alg;
use super::size::Size;
use super::slots::{pocket_index, CORNER_FACELETS};

/// Why a facelet string could not even be read as six colours on 24 or 54 stickers.
/// (Whether those colours form a real cube is [`super::validate`]'s business.)
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("a facelet string has 54 (3x3x3) or 24 (2x2x2) stickers, found {found}")]
    Length { found: usize },
    #[error("position {position}: {} cannot be a sticker colour{}", shown(*symbol), if matches!(symbol, '\'' | '(' | ')') { " (a move sequence? `cubot apply solved MOVES` prints the state it makes)" } else { "" })]
    Symbol { position: usize, symbol: char },
    /// `rarest`: the colours seen least often, beyond six, with the stickers that show them
    /// (named as [`sticker_name`] names them: face letter, then 1–9 or 1–4 row by row).
    #[error("more than six colours: {} ({})", symbols.iter().collect::<String>(), rarest.iter().map(|(c, at)| format!("{} at {}", shown(*c), at.join(", "))).collect::<Vec<_>>().join("; "))]
    TooManySymbols {
        symbols: Vec<char>,
        rarest: Vec<(char, Vec<String>)>,
    },
    #[error("cannot tell which colour belongs to which face: {reason}")]
    Scheme { reason: String },
}

impl ParseError {
    /// Whether the text is not a facelet string at all (wrong length, a symbol that cannot be
    /// a colour, more than six colours), as against a string of stickers whose colour scheme
    /// cannot be read (a state that is not a cube).
    pub fn is_unreadable(&self) -> bool {
        !matches!(self, ParseError::Scheme { .. })
    }
}

/// A cube as stickers. `colors[i]` is the face whose colour sticker `i` shows (see the
/// numbering diagram in [`crate::cube`]); `symbols[f]` is the user's symbol for face `f`,
/// kept so output uses the alphabet the input used.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FaceletCube {
    size: Size,
    colors: Vec<Face>,
    symbols: [char; 6],
}

impl FaceletCube {
    /// The solved cube with letters URFDLB.
    pub fn solved(size: Size) -> FaceletCube {
        let colors = (0..size.stickers())
            .map(|i| Face::ALL[i / size.per_face()])
            .collect();
        FaceletCube {
            size,
            colors,
            symbols: ['U', 'R', 'F', 'D', 'L', 'B'],
        }
    }

    /// Builds a cube from sticker colours (URFDLB letters as symbols).
    pub fn from_colors(size: Size, colors: Vec<Face>) -> Option<FaceletCube> {
        (colors.len() == size.stickers()).then_some(FaceletCube {
            size,
            colors,
            symbols: ['U', 'R', 'F', 'D', 'L', 'B'],
        })
    }

    /// Parses a facelet string: 54 or 24 symbols in URFDLB order, at most six distinct
    /// ones, mapped to faces by the centres (3x3x3) or by the corner at DBL (2x2x2).
    /// Whitespace is ignored.
    pub fn parse(s: &str) -> Result<FaceletCube, ParseError> {
        let symbols = read_symbols(s)?;
        let size = Size::from_stickers(symbols.len()).ok_or(ParseError::Length {
            found: symbols.len(),
        })?;
        let mapping = scheme(size, &symbols)?;
        Ok(Self::with_mapping(size, &symbols, mapping))
    }

    pub(crate) fn with_mapping(size: Size, symbols: &[char], mapping: [char; 6]) -> FaceletCube {
        let colors = symbols
            .iter()
            .map(|c| Face::ALL[mapping.iter().position(|m| m == c).expect("mapped symbol")])
            .collect();
        FaceletCube {
            size,
            colors,
            symbols: mapping,
        }
    }

    pub fn size(&self) -> Size {
        self.size
    }

    pub fn colors(&self) -> &[Face] {
        &self.colors
    }

    /// The user's symbol for each face, in URFDLB order.
    pub fn symbols(&self) -> [char; 6] {
        self.symbols
    }

    /// Same stickers, written with another alphabet.
    pub fn with_symbols(mut self, symbols: [char; 6]) -> FaceletCube {
        self.symbols = symbols;
        self
    }

    pub fn is_solved(&self) -> bool {
        let pf = self.size.per_face();
        self.colors
            .chunks(pf)
            .all(|face| face.iter().all(|&c| c == face[0]))
    }

    /// Applies one move. Panics never: a slice on a 2x2x2 is rejected by [`Self::apply`].
    fn apply_move_unchecked(&mut self, mv: Move) {
        self.colors = mv.permutation(self.size).apply(&self.colors);
    }

    /// Applies a sequence of moves; fails (cube unchanged) if a move needs a middle layer
    /// the cube does not have.
    pub fn apply(&mut self, alg: &Alg) -> Result<(), Move> {
        if let Some(bad) = alg.moves().iter().find(|m| !m.fits(self.size)) {
            return Err(*bad);
        }
        for &mv in alg.moves() {
            self.apply_move_unchecked(mv);
        }
        Ok(())
    }

    /// Writes the facelet string with the cube's symbols.
    pub fn to_string_with_symbols(&self) -> String {
        self.colors
            .iter()
            .map(|c| self.symbols[c.index()])
            .collect()
    }

    /// Writes the facelet string with URFDLB letters.
    pub fn to_letters(&self) -> String {
        self.colors.iter().map(|c| c.letter()).collect()
    }
}

impl fmt::Display for FaceletCube {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_with_symbols())
    }
}

/// Reads the non-whitespace characters of a facelet string, checking that each can be a
/// colour symbol and that there are at most six distinct ones.
pub(crate) fn read_symbols(s: &str) -> Result<Vec<char>, ParseError> {
    let mut out = Vec::with_capacity(54);
    let mut distinct: Vec<char> = Vec::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_whitespace() {
            continue;
        }
        if c.is_control() || matches!(c, '(' | ')' | '\'' | '"' | ',' | ';') {
            return Err(ParseError::Symbol {
                position: i + 1,
                symbol: c,
            });
        }
        if !distinct.contains(&c) {
            distinct.push(c);
        }
        out.push(c);
    }
    // The length first: a sticker too many also reads as a seventh colour.
    if out.len() != 24 && out.len() != 54 {
        return Err(ParseError::Length { found: out.len() });
    }
    if distinct.len() > 6 {
        // The colours beyond six that the fewest stickers show: the likely typos.
        let size = if out.len() == 24 {
            Size::Two
        } else {
            Size::Three
        };
        let at = |c: char| -> Vec<String> {
            out.iter()
                .enumerate()
                .filter(|&(_, &x)| x == c)
                .map(|(i, _)| sticker_name(i, size))
                .collect()
        };
        let mut by_count: Vec<(char, Vec<String>)> = distinct.iter().map(|&c| (c, at(c))).collect();
        by_count.sort_by_key(|(_, a)| a.len());
        by_count.truncate(distinct.len() - 6);
        return Err(ParseError::TooManySymbols {
            symbols: distinct,
            rarest: by_count,
        });
    }
    Ok(out)
}

/// Sticker `i` (the facelet string's order) as every message names it: its face's letter,
/// then its place on the face, 1–9 (3x3x3) or 1–4 (2x2x2), row by row as the net shows it.
pub fn sticker_name(i: usize, size: Size) -> String {
    let per = size.per_face();
    format!("{}{}", Face::ALL[(i / per) % 6].letter(), i % per + 1)
}

/// A symbol as a message shows it: in quotes, or named when quotes would not show it.
fn shown(c: char) -> String {
    match c {
        '"' => "a double quote".to_string(),
        c if c.is_control() => format!("the control character U+{:04X}", c as u32),
        c => format!("\"{c}\""),
    }
}

/// Finds which symbol names which face: `mapping[f]` is the symbol of face `f`.
pub(crate) fn scheme(size: Size, symbols: &[char]) -> Result<[char; 6], ParseError> {
    match size {
        Size::Three => {
            let centres: Vec<char> = (0..6).map(|f| symbols[f * 9 + 4]).collect();
            let mut sorted = centres.clone();
            sorted.sort_unstable();
            sorted.dedup();
            if sorted.len() != 6 {
                return Err(ParseError::Scheme {
                    reason: format!(
                        "the centres are {}, not six distinct colours",
                        centres.iter().collect::<String>()
                    ),
                });
            }
            Ok(std::array::from_fn(|f| centres[f]))
        }
        Size::Two => pocket_scheme(symbols),
    }
}

/// 2x2x2: the corner at DBL names D, B and L; the colour never seen on a corner with a
/// face's colour is the opposite face's colour.
fn pocket_scheme(symbols: &[char]) -> Result<[char; 6], ParseError> {
    let corner_syms: Vec<[char; 3]> = CORNER_FACELETS
        .iter()
        .map(|fs| fs.map(|i| symbols[pocket_index(i)]))
        .collect();
    let mut distinct: Vec<char> = symbols.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() != 6 {
        return Err(ParseError::Scheme {
            reason: format!("{} colours, a cube has 6", distinct.len()),
        });
    }
    let opposite = |c: char| -> Result<char, ParseError> {
        let never: Vec<char> = distinct
            .iter()
            .copied()
            .filter(|&o| {
                o != c
                    && !corner_syms
                        .iter()
                        .any(|cs| cs.contains(&c) && cs.contains(&o))
            })
            .collect();
        match never.as_slice() {
            [o] => Ok(*o),
            _ => Err(ParseError::Scheme {
                reason: format!("cannot tell which colour is opposite {c:?} from the corners"),
            }),
        }
    };
    // DBL is corner slot 6: stickers (D, B, L).
    let [d, b, l] = corner_syms[6];
    if d == b || b == l || d == l {
        return Err(ParseError::Scheme {
            reason: format!("the corner at DBL shows {d}{b}{l}, not three colours"),
        });
    }
    let (u, f, r) = (opposite(d)?, opposite(b)?, opposite(l)?);
    let mapping = [u, r, f, d, l, b];
    let mut check = mapping.to_vec();
    check.sort_unstable();
    check.dedup();
    if check.len() != 6 {
        return Err(ParseError::Scheme {
            reason: "the opposite colours of the DBL corner overlap".into(),
        });
    }
    Ok(mapping)
}
