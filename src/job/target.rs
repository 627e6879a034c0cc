//! The target of a job: solved, a facelet string in the first scan's symbols, or a state
//! saved by `cubot save` whose colours are matched to the first scan's by their measured
//! Lab values (two scans name the same colours differently); and the saved-state file.
//!
//! Level: job. No printing.

use crate::input::{read_text, FileKind, InputFileError};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::cube::{FaceletCube, InvalidCube, Size};

use super::colours::{color_centroids, match_colors, Resolved};
use super::journal;

/// The symbols a scan names its colours with: the face letters (the resolver names each
/// colour by the face whose centre has it).
pub const SCAN_SYMBOLS: [char; 6] = ['U', 'R', 'F', 'D', 'L', 'B'];

/// Why a target cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("{state:?} must use the first scan's symbols {} ({stickers} stickers)", symbols.iter().collect::<String>())]
    Symbols {
        state: String,
        symbols: [char; 6],
        stickers: usize,
    },
    #[error("{state:?} is not a cube: {reason}")]
    Unreadable {
        state: String,
        reason: crate::cube::ParseError,
    },
    #[error("the saved file does not list six colours")]
    SavedColours,
    #[error("saved state {0:?} uses unknown symbols")]
    SavedSymbols(String),
    #[error("a {target} target for a {cube} cube")]
    Size { target: Size, cube: Size },
    #[error("{0}")]
    Invalid(InvalidCube),
    #[error("its centres are not the cube's centres in any orientation (different cube?)")]
    Centres,
    #[error(transparent)]
    Read(#[from] InputFileError),
    #[error("{} is not a saved state: {source}", path.display())]
    NotSaved {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// A journal's start line names a state that does not decode with its symbols.
    #[error("journal: bad {0}")]
    Journal(&'static str),
}

/// A target: a facelet string in the first scan's symbols, or a saved state whose colours
/// are matched to the first scan's by their Lab values.
#[derive(Clone, Debug)]
pub enum TargetSpec {
    State(String),
    Saved(SavedState),
}

/// A saved cube state (`cubot save`): the state in its scan's symbols, the Lab centroid of
/// each symbol (so another scan, with other symbol names, can be matched), when, and how.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct SavedState {
    pub version: u32,
    pub saved: String,
    pub size: u32,
    pub state: String,
    /// Symbol → mean Lab of its stickers.
    pub colors: Vec<(char, [f64; 3])>,
    /// Free-form: robot, scanner, calibration file used.
    #[serde(default)]
    pub calibration: serde_json::Value,
}

/// Reads a saved state file.
pub fn read_saved(path: &Path) -> Result<SavedState, TargetError> {
    let text = read_text(path, FileKind::Target)?;
    parse_saved(path, &text)
}

/// Reads the text of a saved state file (`path` names it in errors): the one reader of a
/// saved state, whichever flag named the file.
pub fn parse_saved(path: &Path, text: &str) -> Result<SavedState, TargetError> {
    serde_json::from_str(text).map_err(|source| TargetError::NotSaved {
        path: path.to_path_buf(),
        source,
    })
}

/// Checks a target before the robot moves, as far as it can be without the scan: a
/// facelet string (or saved state) that reads as a cube of `size` in its own symbols (six
/// of them, mapped by its centres, or by the corner at DBL on a 2x2x2) and is a legal cube.
/// A facelet string must be in the face letters URFDLB, the symbols every scan is named
/// in (a saved state's colours are matched to the scan's after it, [`target_cube`]).
pub fn check_spec(spec: &TargetSpec, size: Size) -> Result<(), TargetError> {
    let state = match spec {
        TargetSpec::State(s) => {
            if journal::decode(s, &SCAN_SYMBOLS).is_none() && FaceletCube::parse(s).is_ok() {
                return Err(TargetError::Symbols {
                    state: s.clone(),
                    symbols: SCAN_SYMBOLS,
                    stickers: size.stickers(),
                });
            }
            s
        }
        TargetSpec::Saved(saved) => {
            if saved.colors.len() != 6 {
                return Err(TargetError::SavedColours);
            }
            &saved.state
        }
    };
    let t = FaceletCube::parse(state).map_err(|reason| TargetError::Unreadable {
        state: state.clone(),
        reason,
    })?;
    check_target(&t, size)
}

/// The target in the first scan's colour naming (not yet aligned).
pub fn target_cube(
    first: &Resolved,
    spec: Option<&TargetSpec>,
) -> Result<FaceletCube, TargetError> {
    let symbols = first.cube.symbols();
    let size = first.cube.size();
    let t = match spec {
        None => return Ok(FaceletCube::solved(size).with_symbols(symbols)),
        Some(TargetSpec::State(s)) => {
            journal::decode(s, &symbols).ok_or_else(|| TargetError::Symbols {
                state: s.clone(),
                symbols,
                stickers: size.stickers(),
            })?
        }
        Some(TargetSpec::Saved(saved)) => {
            let map = match_colors(&saved.colors, &color_centroids(first))
                .ok_or(TargetError::SavedColours)?;
            let state: String = saved
                .state
                .chars()
                .filter(|c| !c.is_whitespace())
                .map(|c| {
                    map.iter()
                        .find(|(a, _)| *a == c)
                        .map(|(_, b)| *b)
                        .unwrap_or('?')
                })
                .collect();
            journal::decode(&state, &symbols)
                .ok_or_else(|| TargetError::SavedSymbols(saved.state.clone()))?
        }
    };
    check_target(&t, size)?;
    Ok(t)
}

fn check_target(t: &FaceletCube, size: Size) -> Result<(), TargetError> {
    if t.size() != size {
        return Err(TargetError::Size {
            target: t.size(),
            cube: size,
        });
    }
    crate::cube::validate(&t.to_letters())
        .map(|_| ())
        .map_err(TargetError::Invalid)
}
