//! Solvers: Kociemba's two-phase algorithm for the 3x3x3 (symmetry-reduced coordinates,
//! flat move tables, packed pruning tables, six searches over the three axes and the
//! inverse taken in turn at each phase-1 depth, optimal answers for positions within
//! `SHORT_OPTIMAL` (7) moves), an optimal 2x2x2 solver over a full distance table, and
//! solving from any state to any target (`target⁻¹ · start` solved at the cubie level).
//!
//! Level: above `cube`, beside `color`; depends on `cube` only. Must not depend on `color`,
//! `scan`, `robot`, `job` or `cli`. No printing: table progress goes through
//! [`TableOptions::progress`], warnings about cached tables come back as [`Solver::notes`].

pub mod cache;
pub mod coord;
pub mod costed;
pub(crate) mod cubie;
pub(crate) mod pocket;
pub(crate) mod search;
pub(crate) mod tables;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cube::{
    validate, Alg, Axis, CubieCube, Face, FaceletCube, InvalidCube, Move, MoveKind, PocketCube,
    Size, Turn,
};

use cubie::Cc;
use pocket::PocketTables;
use search::{Ended, Found, Limits, Tables3};
use tables::{build_prun, PrunKind, Small, CORNER_SET_MAX_BUDGET};

/// Progress callback: (label, done, total).
pub type ProgressFn = Arc<dyn Fn(&str, u64, u64) + Send + Sync>;

/// Where tables are cached and how building them is reported.
#[derive(Clone, Default)]
pub struct TableOptions {
    /// Cache directory; `None`: `$CUBOT_CACHE_DIR`, else the platform cache dir + `cubot`.
    pub cache_dir: Option<PathBuf>,
    /// Called while a table is built: (label, entries done, entries total).
    pub progress: Option<ProgressFn>,
    /// Rebuild the tables even when a valid cached copy exists.
    pub rebuild: bool,
}

impl std::fmt::Debug for TableOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableOptions")
            .field("cache_dir", &self.cache_dir)
            .field("progress", &self.progress.is_some())
            .field("rebuild", &self.rebuild)
            .finish()
    }
}

/// How solution length is counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Half-turn metric: every face turn counts 1.
    #[default]
    Htm,
    /// Quarter-turn metric: a half turn counts 2.
    Qtm,
}

impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Metric::Htm => "htm",
            Metric::Qtm => "qtm",
        })
    }
}

impl std::str::FromStr for Metric {
    type Err = String;
    fn from_str(s: &str) -> Result<Metric, String> {
        match s.to_ascii_lowercase().as_str() {
            "htm" | "half" => Ok(Metric::Htm),
            "qtm" | "quarter" => Ok(Metric::Qtm),
            _ => Err(format!("unknown metric {s:?} (htm or qtm)")),
        }
    }
}

/// The longest solution any search looks for, whatever the limit asked: every cube is
/// solved within 20 face turns (26 quarter turns), so a larger limit cannot change
/// whether a solution exists, and the solutions come shortest first. It bounds the
/// searches' path buffers.
pub const LONGEST_SEARCHED: u32 = 40;

/// What a solve asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SolveOptions {
    /// Longest solution accepted, in `metric` (default 20).
    pub max_length: u32,
    /// Give up (or, with `keep_searching`, stop improving) after this long.
    pub timeout: Option<Duration>,
    /// How many distinct solutions (default 1).
    pub solutions: usize,
    pub metric: Metric,
    /// Keep looking for shorter solutions until `timeout` (or until none can exist).
    pub keep_searching: bool,
    /// Every optimal solution and nothing longer (`solutions` is then ignored): a 2x2x2
    /// always; a 3x3x3 only within [`OPTIMAL_3X3X3_UP_TO`] moves of its target, else
    /// [`SolverError::OptimalOutOfReach`]. Turns of opposite faces that commute are listed
    /// in one order only (U before D, R before L, F before B).
    pub all_optimal: bool,
}

/// The longest 3x3x3 distance for which solutions are proven optimal (the short IDA*
/// that runs before the two-phase search).
pub const OPTIMAL_3X3X3_UP_TO: u32 = search::SHORT_OPTIMAL;

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            max_length: 20,
            timeout: None,
            solutions: 1,
            metric: Metric::Htm,
            keep_searching: false,
            all_optimal: false,
        }
    }
}

/// Why a solve or a table load failed.
#[derive(Debug, thiserror::Error)]
pub enum SolverError {
    /// The start state is not a real cube (every problem listed).
    #[error("the start is {0}")]
    Invalid(InvalidCube),
    /// The target state is not a real cube (every problem listed).
    #[error("the target is {0}")]
    InvalidTarget(InvalidCube),
    /// Nothing within the limits; `limit` names the one that bound, `timed_out` whether it
    /// was the time limit (else the length).
    #[error("no solution within {limit}")]
    NoSolution { limit: String, timed_out: bool },
    #[error("the start uses the colours {start} but the target uses {target}; both must use the same six colour symbols")]
    DifferentColours { start: String, target: String },
    #[error("the start is a {start} and the target a {target}")]
    DifferentSizes { start: Size, target: Size },
    #[error("the target's centres ({target}, URFDLB) differ from the start's ({start}); face turns never move centres, so turn the whole target to match")]
    DifferentCentres { start: String, target: String },
    #[error("table {}: {reason}", path.display())]
    Table { path: PathBuf, reason: String },
    #[error("no cache directory: set --cache-dir or CUBOT_CACHE_DIR")]
    NoCacheDir,
    #[error("robot-cost search: {reason}")]
    CostModel { reason: String },
    #[error("internal error: the solution {moves} does not reach the target")]
    Internal { moves: String },
    /// All optimal solutions were asked for a 3x3x3 further from its target than the
    /// optimal search reaches.
    #[error("all optimal solutions are searched for a 3x3x3 only within {OPTIMAL_3X3X3_UP_TO} moves of its target; this one is further (the two-phase search finds short solutions, not proven optimal ones)")]
    OptimalOutOfReach,
}

/// The state of one cached table file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableState {
    Ok,
    Missing,
    Bad(String),
}

/// One cached table: name, file, state.
#[derive(Clone, Debug)]
pub struct TableStatus {
    pub name: &'static str,
    pub path: PathBuf,
    pub entries: usize,
    pub state: TableState,
}

/// Per-depth counts of one table (see [`Solver::histograms`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableHistogram {
    pub name: &'static str,
    pub stored: Vec<u64>,
    pub states: Vec<u64>,
}

/// The solver: 3x3x3 and 2x2x2 tables in memory. Cheap to share between threads.
pub struct Solver {
    three: Tables3,
    /// Built on the first 2x2x2 solve (a fraction of a second).
    pocket: std::sync::OnceLock<PocketTables>,
    notes: Vec<String>,
}

const KINDS: [PrunKind; 2 + CORNER_SET_MAX_BUDGET] = [
    PrunKind::Phase1,
    PrunKind::Phase2,
    PrunKind::CornerSet(1),
    PrunKind::CornerSet(2),
    PrunKind::CornerSet(3),
    PrunKind::CornerSet(4),
    PrunKind::CornerSet(5),
    PrunKind::CornerSet(6),
    PrunKind::CornerSet(7),
];

/// The cached table files and whether each is usable (header and checksum checked).
pub fn table_status(cache_dir: Option<&std::path::Path>) -> Result<Vec<TableStatus>, SolverError> {
    let dir = cache::cache_dir(cache_dir).ok_or(SolverError::NoCacheDir)?;
    Ok(KINDS
        .iter()
        .map(|&k| {
            let path = cache::table_path(&dir, k.name());
            let state = match cache::load(&path, k.name(), k.entries()) {
                Ok(_) => TableState::Ok,
                Err(cache::LoadFailure::Missing) => TableState::Missing,
                Err(cache::LoadFailure::Bad(r)) => TableState::Bad(r),
            };
            TableStatus {
                name: k.name(),
                path,
                entries: k.entries(),
                state,
            }
        })
        .collect())
}

impl Solver {
    /// Loads the tables from the cache, or builds (and caches) the ones missing, old or
    /// corrupt; each rebuilt-because-unusable table leaves a note.
    pub fn new(opts: &TableOptions) -> Result<Solver, SolverError> {
        let small = Small::build();
        let mut notes = Vec::new();
        let dir = cache::cache_dir(opts.cache_dir.as_deref());
        if dir.is_none() {
            notes.push("no cache directory (set --cache-dir or CUBOT_CACHE_DIR): tables are built in memory and not kept".to_string());
        }
        let quiet = |_: &str, _: u64, _: u64| {};
        let mut prun = Vec::new();
        for kind in KINDS {
            let path = dir.as_ref().map(|d| cache::table_path(d, kind.name()));
            let loaded = match (&path, opts.rebuild) {
                (Some(p), false) => match cache::load(p, kind.name(), kind.entries()) {
                    Ok(t) => Some(t),
                    Err(cache::LoadFailure::Missing) => None,
                    Err(cache::LoadFailure::Bad(reason)) => {
                        notes.push(format!(
                            "the cached {} at {} cannot be used ({reason}); rebuilding it",
                            kind.label(),
                            p.display()
                        ));
                        None
                    }
                },
                _ => None,
            };
            let table = match loaded {
                Some(t) => t,
                None => {
                    let t = match &opts.progress {
                        Some(p) => build_prun(&small, kind, &|l: &str, d, n| p(l, d, n)),
                        None => build_prun(&small, kind, &quiet),
                    };
                    if let Some(p) = &path {
                        cache::sweep_stale(p);
                        if let Err(e) = cache::save(p, kind.name(), &t) {
                            notes.push(format!("cannot cache the {}: {e}", kind.label()));
                        }
                    }
                    t
                }
            };
            prun.push(table);
        }
        let cset = prun.split_off(2);
        let p2 = prun.pop().expect("two tables");
        let p1 = prun.pop().expect("two tables");
        Ok(Solver {
            three: Tables3 {
                small,
                p1,
                p2,
                cset,
            },
            pocket: std::sync::OnceLock::new(),
            notes,
        })
    }

    /// Warnings from loading the tables (a cached file rebuilt, a cache not written).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    fn pocket(&self) -> &PocketTables {
        self.pocket.get_or_init(PocketTables::build)
    }

    /// Bytes of all tables in memory (the 2x2x2 tables once built).
    pub fn table_bytes(&self) -> usize {
        self.three.bytes() + self.pocket.get().map(|p| p.bytes()).unwrap_or(0)
    }

    /// Per-depth counts of each table: the entries as stored, and the states of the full
    /// coordinate space they stand for (a symmetry class with stabiliser S stands for
    /// 16/|S| states). Index = distance; for the 3x3x3 tables, 15 means "15 or more".
    pub fn histograms(&self) -> Vec<TableHistogram> {
        let trim = |mut v: Vec<u64>| {
            while v.last() == Some(&0) {
                v.pop();
            }
            v
        };
        let sym = |t: &tables::Nibbles, raw: usize, stab: &[u16]| {
            let mut stored = vec![0u64; 16];
            let mut states = vec![0u64; 16];
            for (c, &st) in stab.iter().enumerate() {
                let w = 16 / st.count_ones() as u64;
                for r in 0..raw {
                    let d = t.get(c * raw + r) as usize;
                    stored[d] += 1;
                    states[d] += w;
                }
            }
            (trim(stored), trim(states))
        };
        let dist = |t: &[u8]| {
            let mut h = vec![0u64; 1 + *t.iter().max().unwrap_or(&0) as usize];
            for &d in t {
                h[d as usize] += 1;
            }
            h
        };
        let small = &self.three.small;
        let (s1, f1) = sym(&self.three.p1, coord::Twist::COUNT, &small.fs_stab);
        let (s2, f2) = sym(&self.three.p2, coord::UdEdges::COUNT, &small.c_stab);
        let (ph, pq) = (dist(&self.pocket().htm), dist(&self.pocket().qtm));
        let corner_sets = self.three.cset.iter().enumerate().map(|(i, t)| {
            let (stored, states) = sym(t, coord::Twist::COUNT, &small.c_stab);
            TableHistogram {
                name: PrunKind::CornerSet(i as u8 + 1).name(),
                stored,
                states,
            }
        });
        let mut all = vec![
            TableHistogram {
                name: PrunKind::Phase1.name(),
                stored: s1,
                states: f1,
            },
            TableHistogram {
                name: PrunKind::Phase2.name(),
                stored: s2,
                states: f2,
            },
            TableHistogram {
                name: "pocket-htm",
                stored: ph.clone(),
                states: ph,
            },
            TableHistogram {
                name: "pocket-qtm",
                stored: pq.clone(),
                states: pq,
            },
        ];
        all.extend(corner_sets);
        all
    }

    /// Admissible lower bounds for solving `c`: the largest phase-1 distance over the
    /// three axes and the inverse, and (when `c` is in phase 2, <U,D,R2,L2,F2,B2>) the
    /// phase-2 pruning value (a lower bound on phase-2 moves).
    pub fn lower_bounds(&self, c: &CubieCube) -> (u32, Option<u32>) {
        search::lower_bounds(&self.three, &Cc::from_cubie(c))
    }

    /// Solves `start` to `target`: up to `opts.solutions` distinct solutions, shortest
    /// first. 3x3x3: applying a solution to `start` gives exactly `target`; 2x2x2: `target`
    /// up to a whole-cube rotation.
    pub fn solve(
        &self,
        start: &FaceletCube,
        target: &FaceletCube,
        opts: &SolveOptions,
    ) -> Result<Vec<Alg>, SolverError> {
        self.solve_counted(start, target, opts, &mut 0)
    }

    /// [`Solver::solve`], adding the search nodes it visited to `nodes`: a measure of
    /// the search's work that, unlike its time, does not depend on the machine or its
    /// load (benchmarks report it).
    pub fn solve_counted(
        &self,
        start: &FaceletCube,
        target: &FaceletCube,
        opts: &SolveOptions,
        nodes: &mut u64,
    ) -> Result<Vec<Alg>, SolverError> {
        if start.size() != target.size() {
            return Err(SolverError::DifferentSizes {
                start: start.size(),
                target: target.size(),
            });
        }
        let sorted = |c: &FaceletCube| {
            let mut s = c.symbols();
            s.sort_unstable();
            s
        };
        if sorted(start) != sorted(target) {
            return Err(SolverError::DifferentColours {
                start: sorted(start).iter().collect(),
                target: sorted(target).iter().collect(),
            });
        }
        let lim = Limits {
            max_cost: opts.max_length.min(LONGEST_SEARCHED),
            deadline: opts.timeout.map(|t| Instant::now() + t),
            solutions: if opts.all_optimal {
                usize::MAX
            } else {
                opts.solutions.max(1)
            },
            keep_searching: opts.keep_searching && !opts.all_optimal,
            all_optimal: opts.all_optimal,
            qtm: opts.metric == Metric::Qtm,
        };
        // A turn of face `relabel[g]` of `start` is a turn of face g of the cube searched
        // (a 2x2x2 is searched turned whole so that its DBL corner is home).
        let mut relabel = Face::ALL;
        let (found, check): (Result<Vec<Found>, Ended>, Check) = match start.size() {
            Size::Three => {
                let (s, t, y) = problem3(start, target)?;
                (
                    search::solve(&self.three, &y, &lim, nodes),
                    Box::new(move |moves: &[u8]| {
                        moves.iter().fold(s, |c, &m| {
                            c.apply_face(Face::ALL[m as usize / 3], Turn::ALL[m as usize % 3])
                        }) == t
                    }),
                )
            }
            Size::Two => {
                let (s, turned) =
                    pocket_of(start, start.symbols()).map_err(SolverError::Invalid)?;
                let (t, _) =
                    pocket_of(target, start.symbols()).map_err(SolverError::InvalidTarget)?;
                relabel = faces_after(turned);
                let y = t.inverse().multiply(&s);
                (
                    self.pocket().solve(&y, &lim, nodes),
                    Box::new(move |moves: &[u8]| {
                        moves.iter().fold(s, |c, &m| {
                            c.apply_face(Face::ALL[m as usize / 3], Turn::ALL[m as usize % 3])
                        }) == t
                    }),
                )
            }
        };
        let found = found.map_err(|e| match e {
            Ended::Exhausted => SolverError::NoSolution {
                limit: format!(
                    "{} move{} ({})",
                    opts.max_length,
                    if opts.max_length == 1 { "" } else { "s" },
                    opts.metric
                ),
                timed_out: false,
            },
            Ended::TimedOut => SolverError::NoSolution {
                limit: format!(
                    "the time limit of {} ms",
                    opts.timeout.map(|t| t.as_millis()).unwrap_or(0)
                ),
                timed_out: true,
            },
            Ended::BeyondOptimal => SolverError::OptimalOutOfReach,
        })?;
        let mut algs = Vec::with_capacity(found.len());
        for f in &found {
            let alg = to_alg(&f.moves, &relabel);
            if !check(&f.moves) {
                return Err(SolverError::Internal {
                    moves: alg.to_string(),
                });
            }
            algs.push(alg);
        }
        Ok(algs)
    }
}

/// Checks that a solution (face-turn indices) takes the start to the target.
type Check = Box<dyn Fn(&[u8]) -> bool>;

/// Face-turn indices as moves, face g read as `relabel[g]`.
fn to_alg(moves: &[u8], relabel: &[Face; 6]) -> Alg {
    Alg::from_moves(
        moves
            .iter()
            .map(|&m| Move::face(relabel[m as usize / 3], Turn::ALL[m as usize % 3]))
            .collect(),
    )
}

/// For a cube turned whole by `rotation`: the face of the cube before it that sits at each
/// face position after it (a rotation keeps handedness, so turns keep their direction).
fn faces_after(rotation: &Alg) -> [Face; 6] {
    let mut c = FaceletCube::solved(Size::Three);
    if c.apply(rotation).is_err() {
        return Face::ALL;
    }
    std::array::from_fn(|p| c.colors()[p * 9 + 4])
}

/// Every problem of a cube that is not solvable.
fn problems(c: &FaceletCube) -> InvalidCube {
    match validate(&c.to_string()) {
        Err(e) => e,
        Ok(_) => InvalidCube {
            problems: vec![crate::cube::CubeProblem::Unreadable {
                message: "its stickers do not form a solvable cube".into(),
            }],
        },
    }
}

/// The 3x3x3 problem `start` → `target` at the cubie level: both cubies (validated) and the
/// cube `target⁻¹ · start` the searches solve to identity; both must share their centres.
pub(crate) fn problem3(
    start: &FaceletCube,
    target: &FaceletCube,
) -> Result<(CubieCube, CubieCube, Cc), SolverError> {
    let s = cubie_of(start).map_err(SolverError::Invalid)?;
    let t = cubie_of(target).map_err(SolverError::InvalidTarget)?;
    if start.symbols() != target.symbols() {
        return Err(SolverError::DifferentCentres {
            start: start.symbols().iter().collect(),
            target: target.symbols().iter().collect(),
        });
    }
    let y = Cc::from_cubie(&t.inverse().multiply(&s));
    Ok((s, t, y))
}

fn cubie_of(c: &FaceletCube) -> Result<CubieCube, InvalidCube> {
    match CubieCube::from_facelets(c) {
        Some(x) if x.is_solvable() => Ok(x),
        _ => Err(problems(c)),
    }
}

/// The 24 whole-cube orientations as rotation sequences.
fn orientations() -> &'static [Alg] {
    static ALL: std::sync::OnceLock<Vec<Alg>> = std::sync::OnceLock::new();
    ALL.get_or_init(build_orientations)
}

fn build_orientations() -> Vec<Alg> {
    let rot = |a: Axis, t: Turn| Move::new(MoveKind::Rotation(a), t);
    let firsts: [Vec<Move>; 6] = [
        vec![],
        vec![rot(Axis::X, Turn::Cw)],
        vec![rot(Axis::X, Turn::Half)],
        vec![rot(Axis::X, Turn::Ccw)],
        vec![rot(Axis::Z, Turn::Cw)],
        vec![rot(Axis::Z, Turn::Ccw)],
    ];
    let mut out = Vec::with_capacity(24);
    for f in &firsts {
        for y in [None, Some(Turn::Cw), Some(Turn::Half), Some(Turn::Ccw)] {
            let mut m = f.clone();
            if let Some(t) = y {
                m.push(rot(Axis::Y, t));
            }
            out.push(Alg::from_moves(m));
        }
    }
    out
}

/// A 2x2x2 read with the colour naming `symbols` (face → symbol), turned as a whole so
/// that the DBL corner is home, and the rotation that turned it.
fn pocket_of(
    c: &FaceletCube,
    symbols: [char; 6],
) -> Result<(PocketCube, &'static Alg), InvalidCube> {
    let chars: Vec<char> = c.to_string().chars().collect();
    let named = FaceletCube::with_mapping(Size::Two, &chars, symbols);
    for rot in orientations() {
        let mut r = named.clone();
        if r.apply(rot).is_err() {
            continue;
        }
        if let Some(p) = PocketCube::from_facelets(&r) {
            if p.cp[6] == 6 && p.co[6] == 0 {
                return if p.is_solvable() {
                    Ok((p, rot))
                } else {
                    Err(problems(c))
                };
            }
        }
    }
    Err(problems(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn there_are_24_distinct_orientations() {
        let mut seen = std::collections::HashSet::new();
        for r in orientations() {
            let mut c = FaceletCube::solved(Size::Three);
            c.apply(r).expect("rotations fit");
            seen.insert(c.to_letters());
        }
        assert_eq!(seen.len(), 24);
    }

    #[test]
    fn metric_parses() {
        assert_eq!("QTM".parse::<Metric>(), Ok(Metric::Qtm));
        assert!("x".parse::<Metric>().is_err());
    }
}
