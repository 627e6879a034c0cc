//! Validation: is a facelet string a real cube, and if not, every reason why.
//!
//! Level: part of `cube`; depends on `face`, `size`, `slots`, `facelet` and `cubie`. Must not depend on anything outside `cube`; no I/O.

use std::fmt;

use super::cubie::permutation_parity;
use super::face::Face;
use super::facelet::{read_symbols, scheme, FaceletCube, ParseError};
use super::size::Size;
use super::slots::{
    corner_sticker, identify_corner, identify_edge, CornerSlot, EdgeSlot, EDGE_FACELETS,
};

/// Why one corner or edge slot does not hold a real piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PieceFault {
    /// The same colour on two of its stickers.
    RepeatedColour,
    /// Two colours of opposite faces.
    OppositeColours,
    /// The right three colours in mirror-image order (a corner only).
    Mirrored,
}

impl fmt::Display for PieceFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PieceFault::RepeatedColour => "a colour twice",
            PieceFault::OppositeColours => "two opposite colours",
            PieceFault::Mirrored => "its colours in mirror-image order, no such corner exists",
        })
    }
}

/// One thing wrong with a scanned or typed cube. Colours are written in the input's own
/// symbols; slots and pieces by their home position (`URF`, `UF`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum CubeProblem {
    /// Not 54 or 24 stickers, a symbol that cannot be a colour, or more than six colours.
    Unreadable { message: String },
    /// Colours that do not appear n² times: `(symbol, count)` for each wrong one.
    ColourCount {
        wrong: Vec<(char, usize)>,
        expected: usize,
    },
    /// The six centres (3x3x3) are not six different colours.
    Centres { centres: String },
    /// 2x2x2: the colour scheme cannot be read off the corners.
    Scheme { reason: String },
    /// A corner slot whose stickers cannot form a piece.
    BadCorner {
        slot: CornerSlot,
        colours: String,
        fault: PieceFault,
    },
    /// An edge slot whose stickers cannot form a piece.
    BadEdge {
        slot: EdgeSlot,
        colours: String,
        fault: PieceFault,
    },
    /// A piece seen in more than one slot.
    DuplicatePiece {
        piece: String,
        colours: String,
        slots: Vec<String>,
    },
    /// A piece seen nowhere.
    MissingPiece { piece: String, colours: String },
    /// Corner twists do not sum to 0 mod 3; `total` is the sum mod 3.
    Twist { total: u8 },
    /// Edge flips do not sum to 0 mod 2.
    Flip,
    /// Corner and edge permutation parities differ (3x3x3).
    Parity,
}

impl fmt::Display for CubeProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CubeProblem::Unreadable { message } => write!(f, "{message}"),
            CubeProblem::ColourCount { wrong, expected } => {
                let list: Vec<String> = wrong.iter().map(|(c, n)| format!("{c} {n}")).collect();
                write!(
                    f,
                    "wrong colour counts: {} (each colour must appear {expected} times)",
                    list.join(", ")
                )
            }
            CubeProblem::Centres { centres } => {
                write!(f, "the centres are {centres}, not six distinct colours")
            }
            CubeProblem::Scheme { reason } => write!(f, "cannot read the colour scheme: {reason}"),
            CubeProblem::BadCorner {
                slot,
                colours,
                fault,
            } => write!(f, "corner {slot} shows {colours}: {fault}"),
            CubeProblem::BadEdge {
                slot,
                colours,
                fault,
            } => write!(f, "edge {slot} shows {colours}: {fault}"),
            CubeProblem::DuplicatePiece {
                piece,
                colours,
                slots,
            } => {
                write!(
                    f,
                    "the {piece} piece ({colours}) appears twice, at {}",
                    slots.join(" and ")
                )
            }
            CubeProblem::MissingPiece { piece, colours } => {
                write!(f, "the {piece} piece ({colours}) is missing")
            }
            CubeProblem::Twist { total } => {
                let dir = if *total == 1 {
                    "clockwise"
                } else {
                    "anticlockwise"
                };
                write!(f, "a corner is twisted (twists sum to {total} mod 3: one corner turned {dir} in place)")
            }
            CubeProblem::Flip => write!(f, "an edge is flipped (edge flips sum to 1 mod 2)"),
            CubeProblem::Parity => {
                write!(
                    f,
                    "two pieces are swapped (corner and edge permutation parities differ)"
                )
            }
        }
    }
}

/// Every problem found in a state; never empty.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[error("not a real cube: {}", problems.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("; "))]
pub struct InvalidCube {
    pub problems: Vec<CubeProblem>,
}

impl InvalidCube {
    /// Whether the text is not a facelet string at all ([`CubeProblem::Unreadable`]): bad
    /// input, as against a readable state that is not a legal cube.
    pub fn is_unreadable(&self) -> bool {
        self.problems
            .iter()
            .any(|p| matches!(p, CubeProblem::Unreadable { .. }))
    }
}

/// Checks a facelet string; returns the cube, or every problem found.
pub fn validate(input: &str) -> Result<FaceletCube, InvalidCube> {
    let symbols = read_symbols(input).map_err(|e| InvalidCube {
        problems: vec![CubeProblem::Unreadable {
            message: e.to_string(),
        }],
    })?;
    let size = Size::from_stickers(symbols.len()).expect("read_symbols checks the length");
    let mut problems = Vec::new();

    // Colour counts.
    let per_face = size.per_face();
    let mut distinct: Vec<char> = Vec::new();
    for &c in &symbols {
        if !distinct.contains(&c) {
            distinct.push(c);
        }
    }
    let mut wrong: Vec<(char, usize)> = distinct
        .iter()
        .map(|&d| (d, symbols.iter().filter(|&&c| c == d).count()))
        .filter(|&(_, n)| n != per_face)
        .collect();
    wrong.sort_by_key(|&(c, _)| order_key(c));
    if !wrong.is_empty() || distinct.len() != 6 {
        problems.push(CubeProblem::ColourCount {
            wrong,
            expected: per_face,
        });
    }

    // Which symbol is which face.
    let letters = ['U', 'R', 'F', 'D', 'L', 'B'];
    let mapping = match scheme(size, &symbols) {
        Ok(m) => Some(m),
        Err(ParseError::Scheme { reason }) => {
            problems.push(match size {
                Size::Three => CubeProblem::Centres {
                    centres: (0..6).map(|f| symbols[f * 9 + 4]).collect::<String>(),
                },
                Size::Two => CubeProblem::Scheme { reason },
            });
            symbols
                .iter()
                .all(|c| letters.contains(c))
                .then_some(letters)
        }
        Err(e) => {
            problems.push(CubeProblem::Unreadable {
                message: e.to_string(),
            });
            None
        }
    };
    let Some(mapping) = mapping else {
        return Err(InvalidCube { problems });
    };
    let cube = FaceletCube::with_mapping(size, &symbols, mapping);
    check_pieces(&cube, &mut problems);
    if problems.is_empty() {
        Ok(cube)
    } else {
        Err(InvalidCube { problems })
    }
}

fn order_key(c: char) -> usize {
    Face::from_letter(c)
        .map(|f| f.index())
        .unwrap_or(6 + c as usize)
}

fn piece_fault(cols: &[Face]) -> Option<PieceFault> {
    for i in 0..cols.len() {
        for j in i + 1..cols.len() {
            if cols[i] == cols[j] {
                return Some(PieceFault::RepeatedColour);
            }
        }
    }
    for i in 0..cols.len() {
        for j in i + 1..cols.len() {
            if cols[i].opposite() == cols[j] {
                return Some(PieceFault::OppositeColours);
            }
        }
    }
    None
}

/// Every corner (and edge) slot must hold a real piece, each piece once; then the twist,
/// flip and parity rules are checked where every slot holds one.
fn check_pieces(cube: &FaceletCube, problems: &mut Vec<CubeProblem>) {
    let corner_at = check_corners(cube, problems);
    let edge_at = if cube.size() == Size::Three {
        check_edges(cube, problems)
    } else {
        Vec::new()
    };
    check_orientation_and_parity(cube.size(), &corner_at, &edge_at, problems);
}

/// The colours of some stickers written in the cube's own symbols.
fn paint(cube: &FaceletCube, cols: &[Face]) -> String {
    let sym = cube.symbols();
    cols.iter().map(|c| sym[c.index()]).collect::<String>()
}

/// The corner piece (and its twist) in each slot, `None` where the stickers are no real
/// corner; bad, repeated and missing corners are reported.
fn check_corners(cube: &FaceletCube, problems: &mut Vec<CubeProblem>) -> Vec<Option<(usize, u8)>> {
    let size = cube.size();
    let colors = cube.colors();
    let mut corner_at: Vec<Option<(usize, u8)>> = Vec::with_capacity(8);
    for slot in CornerSlot::ALL {
        let cols: [Face; 3] =
            std::array::from_fn(|k| colors[corner_sticker(size, slot as usize, k)]);
        let fault = piece_fault(&cols).or(if identify_corner(cols).is_none() {
            Some(PieceFault::Mirrored)
        } else {
            None
        });
        match fault {
            Some(fault) => {
                problems.push(CubeProblem::BadCorner {
                    slot,
                    colours: paint(cube, &cols),
                    fault,
                });
                corner_at.push(None);
            }
            None => corner_at.push(identify_corner(cols)),
        }
    }
    duplicates_and_missing(
        &corner_at
            .iter()
            .map(|c| c.map(|(p, _)| p))
            .collect::<Vec<_>>(),
        |i| CornerSlot::ALL[i].to_string(),
        |i| paint(cube, &CornerSlot::ALL[i].faces()),
        problems,
    );
    corner_at
}

/// 3x3x3: the edge piece (and its flip) in each slot, `None` where the stickers are no
/// real edge; bad, repeated and missing edges are reported.
fn check_edges(cube: &FaceletCube, problems: &mut Vec<CubeProblem>) -> Vec<Option<(usize, u8)>> {
    let colors = cube.colors();
    let mut edge_at: Vec<Option<(usize, u8)>> = Vec::new();
    for slot in EdgeSlot::ALL {
        let cols = EDGE_FACELETS[slot as usize].map(|i| colors[i]);
        match piece_fault(&cols) {
            Some(fault) => {
                problems.push(CubeProblem::BadEdge {
                    slot,
                    colours: paint(cube, &cols),
                    fault,
                });
                edge_at.push(None);
            }
            None => edge_at.push(identify_edge(cols)),
        }
    }
    duplicates_and_missing(
        &edge_at
            .iter()
            .map(|e| e.map(|(p, _)| p))
            .collect::<Vec<_>>(),
        |i| EdgeSlot::ALL[i].to_string(),
        |i| paint(cube, &EdgeSlot::ALL[i].faces()),
        problems,
    );
    edge_at
}

/// Twist, flip, parity: only meaningful where every slot holds a real piece.
fn check_orientation_and_parity(
    size: Size,
    corner_at: &[Option<(usize, u8)>],
    edge_at: &[Option<(usize, u8)>],
    problems: &mut Vec<CubeProblem>,
) {
    if corner_at.iter().all(|c| c.is_some()) {
        let total = corner_at
            .iter()
            .map(|c| c.expect("checked").1 as u32)
            .sum::<u32>()
            % 3;
        if total != 0 {
            problems.push(CubeProblem::Twist { total: total as u8 });
        }
    }
    if size == Size::Three && edge_at.iter().all(|e| e.is_some()) {
        let total = edge_at
            .iter()
            .map(|e| e.expect("checked").1 as u32)
            .sum::<u32>()
            % 2;
        if total != 0 {
            problems.push(CubeProblem::Flip);
        }
        let cp: Vec<u8> = corner_at
            .iter()
            .filter_map(|c| c.map(|(p, _)| p as u8))
            .collect();
        let ep: Vec<u8> = edge_at
            .iter()
            .filter_map(|e| e.map(|(p, _)| p as u8))
            .collect();
        if is_permutation(&cp)
            && is_permutation(&ep)
            && permutation_parity(&cp) != permutation_parity(&ep)
        {
            problems.push(CubeProblem::Parity);
        }
    }
}

fn is_permutation(p: &[u8]) -> bool {
    let mut seen = vec![false; p.len()];
    p.iter()
        .all(|&x| (x as usize) < p.len() && !std::mem::replace(&mut seen[x as usize], true))
}

fn duplicates_and_missing(
    at: &[Option<usize>],
    name: impl Fn(usize) -> String,
    colours: impl Fn(usize) -> String,
    problems: &mut Vec<CubeProblem>,
) {
    for piece in 0..at.len() {
        let slots: Vec<String> = (0..at.len())
            .filter(|&s| at[s] == Some(piece))
            .map(&name)
            .collect();
        if slots.len() > 1 {
            problems.push(CubeProblem::DuplicatePiece {
                piece: name(piece),
                colours: colours(piece),
                slots,
            });
        }
    }
    // A piece is only reported missing when every slot was readable, so that one bad
    // sticker does not produce a cascade of findings.
    if at.iter().all(|p| p.is_some()) {
        for piece in 0..at.len() {
            if !at.contains(&Some(piece)) {
                problems.push(CubeProblem::MissingPiece {
                    piece: name(piece),
                    colours: colours(piece),
                });
            }
        }
    }
}
