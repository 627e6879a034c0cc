//! Where is the cube? Given the states the journal allows (candidates: the last confirmed
//! state, and the state after each prefix of what was in flight), establish which one the
//! robot holds, as cheaply as it can be done honestly:
//!
//! 1. **A few stickers.** [`stickers_to_tell_apart`] picks the stickers on which the
//!    candidates differ, plus four spot checks (one corner sticker on each of four faces),
//!    and the robot re-reads only those. Each reading is classified by the first scan's own
//!    mean raw reading of each colour ([`classify`]); when every reading is sure and
//!    exactly one candidate shows those colours there, that is the answer.
//! 2. **The robot's own word.** A robot that cannot read stickers but keeps its cube (a
//!    line robot's `STATE`) is asked; its colour naming is its own, so a candidate agrees
//!    when one renaming of colours maps the one onto the other exactly ([`match_state`]).
//! 3. **A full scan**, when the few stickers were not conclusive (a reading unsure, or
//!    colours no candidate shows): the whole cube is read and resolved, its colours matched
//!    to the first scan's by their Lab values, and it is compared with every candidate in
//!    every whole-cube orientation (a tilt or a spin in flight changes only the orientation).
//!
//! What is seen is one of: a candidate ([`Seen::Agrees`]: carry on from it); another state
//! of the same cube ([`Seen::Differs`]: someone turned it, or a fault moved it: plan again
//! from what is seen); or **not the journal's cube** ([`Seen::Foreign`]). A cube is the
//! journal's cube when its six colours can be paired with the first scan's six colours with
//! no pair further apart than [`FOREIGN_DELTA`] (CIE76-like, lightness at half weight: the
//! spread the same stickers show under two lights stays well inside it, while a sticker
//! set of another cube, such as pink for white, does not). Only a full scan can say
//! *foreign*; a robot that can only state its cube is trusted to hold the journal's.
//!
//! [`observe`] is the whole step; [`full_scan`] is its last stage alone, which the check
//! after execution ([`super::verify`]) uses with the one state it expects.
//!
//! Level: job. No printing.

use crate::color::resolve::ResolveOptions;
use crate::cube::{Face, FaceletCube, Size};
use crate::robot::mindcub3r::frames::{orientation_from_centres, to_cube};
use crate::robot::mindcub3r::model::Orientation;

use super::colours::{color_centroids, match_colors, ScanDoubt};
use super::error::RunError;
use super::journal::{self, Action};
use super::report::RunEvent;
use super::robot::{apply_action, orientation_after, RunRobot};
use super::scan::scan_and_resolve;

/// The farthest two colours paired between two scans of one cube may be (Lab units, the
/// distance of [`match_colors`]).
pub const FOREIGN_DELTA: f64 = 30.0;

/// One state the cube may be in: the robot-frame cube (first-scan naming) and its
/// orientation relative to the first scan's frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub robot: FaceletCube,
    pub orientation: Orientation,
}

/// What is known of the first scan's colours.
#[derive(Clone, Copy, Debug)]
pub struct Known<'a> {
    /// The first scan's symbols (URFDLB).
    pub symbols: [char; 6],
    /// Its mean Lab per symbol.
    pub colors: &'a [(char, [f64; 3])],
    /// Its mean raw reading per symbol, and their scale's name.
    pub raw_colors: &'a [(char, [f64; 3])],
    pub raw_scale: Option<&'a str>,
    /// The cube as first scanned (cube frame), for the orientation of a re-scan.
    pub first_scan: &'a FaceletCube,
}

/// What was seen.
#[derive(Clone, Debug, PartialEq)]
pub enum Seen {
    /// Candidate `k`.
    Agrees(usize),
    /// Another state of the journal's cube: the cube frame state and the orientation the
    /// robot holds it in now.
    Differs {
        cube: FaceletCube,
        orientation: Orientation,
    },
    /// Not the journal's cube: what was seen (robot frame, as the robot named its colours)
    /// and why it is not.
    Foreign { seen: String, why: String },
}

/// What [`observe`] established and how.
#[derive(Clone, Debug)]
pub struct Observation {
    pub seen: Seen,
    /// `N stickers`, `the robot's STATE`, `a full scan`.
    pub by: String,
    /// Stickers read (a full scan counts them all).
    pub stickers_read: usize,
}

/// The cube after each prefix of `in_flight` (none of it, the first action, ...): robot
/// frame and orientation.
pub fn prefix_states(
    robot: &FaceletCube,
    orientation: Orientation,
    in_flight: &[Action],
) -> Vec<(FaceletCube, Orientation)> {
    let mut out = vec![(robot.clone(), orientation)];
    let (mut c, mut o) = (robot.clone(), orientation);
    for a in in_flight {
        apply_action(&mut c, a);
        o = orientation_after(o, a);
        out.push((c.clone(), o));
    }
    out
}

/// The candidates a journal allows: its last confirmed state and the state after each
/// prefix of what was in flight.
pub fn candidates(rec: &journal::JournalRecord) -> Vec<Candidate> {
    prefix_states(&rec.state, rec.orientation, &rec.in_flight)
        .into_iter()
        .map(|(robot, orientation)| Candidate { robot, orientation })
        .collect()
}

/// The first of `candidates` that `seen` shows up to a renaming of its colours (a robot
/// names colours its own way), if any.
pub fn match_state(seen: &FaceletCube, candidates: &[FaceletCube]) -> Option<usize> {
    candidates.iter().position(|c| renaming(seen, c).is_some())
}

/// The renaming of `from`'s colours that turns it into `to` exactly, if there is one.
fn renaming(from: &FaceletCube, to: &FaceletCube) -> Option<[Option<Face>; 6]> {
    if from.size() != to.size() {
        return None;
    }
    let mut map: [Option<Face>; 6] = [None; 6];
    let mut used = [false; 6];
    for (a, b) in from.colors().iter().zip(to.colors()) {
        match map[a.index()] {
            Some(m) if m != *b => return None,
            Some(_) => {}
            None => {
                if std::mem::replace(&mut used[b.index()], true) {
                    return None;
                }
                map[a.index()] = Some(*b);
            }
        }
    }
    Some(map)
}

/// `rel` (relative to a frame) expressed relative to the frame that frame is `base` of
/// (the inverse of [`Orientation::relative_to`]).
pub fn compose(base: Orientation, rel: Orientation) -> Orientation {
    Orientation(std::array::from_fn(|pos| base.0[rel.0[pos].index()]))
}

/// The stickers (robot-frame facelet indices) to read: for every pair of candidates not yet
/// told apart, one on which they differ; then four spot checks, the first sticker of faces
/// U, F, D and B (a corner), which catch most cubes that are none of the candidates.
pub fn stickers_to_tell_apart(candidates: &[FaceletCube]) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    let Some(first) = candidates.first() else {
        return out;
    };
    let size = first.size();
    for i in 0..candidates.len() {
        for j in i + 1..candidates.len() {
            let (a, b) = (candidates[i].colors(), candidates[j].colors());
            if out.iter().any(|&s| a[s] != b[s]) || a == b {
                continue;
            }
            if let Some(s) = (0..a.len()).find(|&s| a[s] != b[s]) {
                out.push(s);
            }
        }
    }
    for f in [Face::U, Face::F, Face::D, Face::B] {
        let s = f.index() * size.per_face();
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// The first scan's colour (symbol) a raw reading shows, when it is sure: the nearest mean
/// raw reading of the first scan by the distance of channel log-ratios (a dimmer light
/// moves every channel alike), near enough (0.35) and clearly nearer than the second
/// nearest (by a factor 0.6).
pub fn classify(reading: [f64; 3], raw_colors: &[(char, [f64; 3])]) -> Option<char> {
    let d = |a: &[f64; 3], b: &[f64; 3]| {
        let l = |x: f64| (x.max(0.0) + 8.0).ln();
        let r: Vec<f64> = (0..3).map(|k| l(a[k]) - l(b[k])).collect();
        let mean = r.iter().sum::<f64>() / 3.0;
        // Chromaticity counts fully, overall brightness at a third.
        let chroma: f64 = r.iter().map(|x| (x - mean).powi(2)).sum();
        (chroma + (mean / 3.0).powi(2)).sqrt()
    };
    let mut ds: Vec<(f64, char)> = raw_colors
        .iter()
        .map(|(c, m)| (d(&reading, m), *c))
        .collect();
    ds.sort_by(|a, b| a.0.total_cmp(&b.0));
    match ds.as_slice() {
        [(d1, c), (d2, _), ..] if *d1 < 0.35 && *d1 < 0.6 * d2 => Some(*c),
        _ => None,
    }
}

/// Establishes which of `candidates` the robot holds (see the module docs). Afterwards the
/// robot's frame marks are set so that its orientation is right for what was seen.
pub fn observe(
    robot: &mut dyn RunRobot,
    candidates: &[Candidate],
    known: &Known,
    resolve: &ResolveOptions,
    max_rescans: usize,
    events: &mut dyn FnMut(RunEvent),
) -> Result<Observation, RunError> {
    let Some(first) = candidates.first() else {
        return Err(RunError::Undecided(0));
    };
    let size = first.robot.size();
    robot.mark_frame(size, first.orientation);
    let robots: Vec<FaceletCube> = candidates.iter().map(|c| c.robot.clone()).collect();
    let raw_fits =
        known.raw_colors.len() == 6 && robot.scan_scale().map(|s| s.name()) == known.raw_scale;
    if raw_fits {
        let stickers = stickers_to_tell_apart(&robots);
        let readings = robot.rescan(&stickers)?;
        let shown: Option<Vec<char>> = readings
            .iter()
            .map(|&r| classify(r, known.raw_colors))
            .collect();
        if let Some(shown) = shown {
            let fits: Vec<usize> = (0..robots.len())
                .filter(|&k| {
                    stickers
                        .iter()
                        .zip(&shown)
                        .all(|(&s, &c)| known.symbols[robots[k].colors()[s].index()] == c)
                })
                .collect();
            // Candidates alike in what the robot holds (a primitive that moves no cube, such
            // as the arm moving away, leaves the state as it was) are one answer.
            let alike = fits
                .windows(2)
                .all(|w| candidates[w[0]] == candidates[w[1]]);
            if let (Some(&k), true) = (fits.last(), alike) {
                robot.rebase(candidates[k].orientation);
                return Ok(Observation {
                    seen: Seen::Agrees(k),
                    by: format!("{} stickers", stickers.len()),
                    stickers_read: stickers.len(),
                });
            }
        }
    } else if robot.scan_scale().is_none() {
        let Some(own) = robot.own_state() else {
            return match candidates.len() {
                1 => Ok(Observation {
                    seen: Seen::Agrees(0),
                    by: "the journal alone (the robot can neither read nor state its cube)".into(),
                    stickers_read: 0,
                }),
                n => Err(RunError::Undecided(n)),
            };
        };
        let by = "the robot's STATE".to_string();
        if let Some(k) = match_state(&own, &robots) {
            robot.rebase(candidates[k].orientation);
            return Ok(Observation {
                seen: Seen::Agrees(k),
                by,
                stickers_read: 0,
            });
        }
        // The robot never reorients the cube, so its frame is the cube's.
        let cube = match renaming_by_centres(&own, &first.robot) {
            Some(c) => c,
            None => {
                return Ok(Observation {
                    seen: Seen::Foreign {
                        seen: own.to_string(),
                        why: "its colours cannot be named as the journal's".into(),
                    },
                    by,
                    stickers_read: 0,
                })
            }
        };
        return Ok(Observation {
            seen: Seen::Differs {
                cube: to_cube(&cube, &first.orientation),
                orientation: first.orientation,
            },
            by,
            stickers_read: 0,
        });
    }
    Ok(full_scan(robot, candidates, known, resolve, max_rescans, events)?.0)
}

/// A robot's own naming turned into the journal's by the centres (3x3x3), or by the
/// majority of stickers agreeing with `like` (2x2x2).
fn renaming_by_centres(own: &FaceletCube, like: &FaceletCube) -> Option<FaceletCube> {
    if own.size() != like.size() {
        return None;
    }
    let per = own.size().per_face();
    let map: Vec<Face> = if own.size() == Size::Three {
        let mut m = vec![Face::U; 6];
        for f in Face::ALL {
            m[own.colors()[f.index() * per + 4].index()] = like.colors()[f.index() * per + 4];
        }
        m
    } else {
        let mut counts = [[0usize; 6]; 6];
        for (a, b) in own.colors().iter().zip(like.colors()) {
            counts[a.index()][b.index()] += 1;
        }
        (0..6)
            .map(|a| Face::ALL[(0..6).max_by_key(|&b| counts[a][b]).unwrap_or(a)])
            .collect()
    };
    let mut seen = [false; 6];
    if map
        .iter()
        .any(|f| std::mem::replace(&mut seen[f.index()], true))
    {
        return None;
    }
    let colors = own.colors().iter().map(|c| map[c.index()]).collect();
    FaceletCube::from_colors(own.size(), colors).map(|c| c.with_symbols(like.symbols()))
}

/// Reads the whole cube and compares it with every candidate in every orientation; also
/// says how sure the scan was (a resolver asked for its best effort returns a doubt rather
/// than refusing). Afterwards the robot's frame marks are set for what was seen.
pub fn full_scan(
    robot: &mut dyn RunRobot,
    candidates: &[Candidate],
    known: &Known,
    resolve: &ResolveOptions,
    max_rescans: usize,
    events: &mut dyn FnMut(RunEvent),
) -> Result<(Observation, ScanDoubt), RunError> {
    let Some(first) = candidates.first() else {
        return Err(RunError::Undecided(0));
    };
    let size = first.robot.size();
    let before = robot.orientation();
    let scanned = scan_and_resolve(robot, resolve, size, max_rescans, events)?;
    let doubt = scanned.resolved.doubt.clone();
    let seen = place_scan(robot, candidates, known, &scanned, before)?;
    Ok((seen, doubt))
}

/// A resolved full scan in the journal's naming, compared with the candidates.
fn place_scan(
    robot: &mut dyn RunRobot,
    candidates: &[Candidate],
    known: &Known,
    scanned: &super::scan::Scanned,
    before: Orientation,
) -> Result<Observation, RunError> {
    let size = candidates[0].robot.size();
    let by = "a full scan".to_string();
    let stickers_read = size.stickers();
    let seen_colors = color_centroids(&scanned.resolved);
    let own = scanned.resolved.cube.clone();
    let foreign = |why: String| Observation {
        seen: Seen::Foreign {
            seen: own.to_string(),
            why,
        },
        by: by.clone(),
        stickers_read,
    };
    if known.colors.len() != 6 {
        // A journal without the first scan's colours: name them by the centres, and take
        // the cube for the journal's.
        let Some(seen) = renaming_by_centres(&own, &candidates[0].robot) else {
            return Ok(foreign(
                "its colours cannot be named as the journal's".into(),
            ));
        };
        return Ok(place(
            robot,
            candidates,
            known,
            &seen,
            scanned,
            before,
            by,
            stickers_read,
        ));
    }
    let Some(pairs) = match_colors(&seen_colors, known.colors) else {
        return Ok(foreign(
            "six colours cannot be paired with the journal's".into(),
        ));
    };
    let worst = pairs
        .iter()
        .filter_map(|(a, b)| {
            let la = seen_colors.iter().find(|(c, _)| c == a)?.1;
            let lb = known.colors.iter().find(|(c, _)| c == b)?.1;
            let dl = 0.5 * (la[0] - lb[0]);
            Some((dl * dl + (la[1] - lb[1]).powi(2) + (la[2] - lb[2]).powi(2)).sqrt())
        })
        .fold(0.0_f64, f64::max);
    if worst > FOREIGN_DELTA {
        return Ok(foreign(format!(
            "its colours differ from the journal's by up to {worst:.0} (Lab), more than {FOREIGN_DELTA:.0}"
        )));
    }
    // The scan in the journal's naming, robot frame at the scan's start.
    let symbols = known.symbols;
    let colors = own
        .colors()
        .iter()
        .map(|c| {
            let s = own.symbols()[c.index()];
            let t = pairs
                .iter()
                .find(|(a, _)| *a == s)
                .map(|(_, b)| *b)
                .unwrap_or(s);
            Face::ALL[symbols.iter().position(|&x| x == t).unwrap_or(c.index())]
        })
        .collect();
    let seen = FaceletCube::from_colors(size, colors)
        .ok_or(RunError::ScanFrameLost)?
        .with_symbols(symbols);
    Ok(place(
        robot,
        candidates,
        known,
        &seen,
        scanned,
        before,
        by,
        stickers_read,
    ))
}

/// A scanned cube in the journal's naming (robot frame at the scan's start) compared with
/// the candidates; the robot's frame marked accordingly.
#[allow(clippy::too_many_arguments)]
fn place(
    robot: &mut dyn RunRobot,
    candidates: &[Candidate],
    known: &Known,
    seen: &FaceletCube,
    scanned: &super::scan::Scanned,
    before: Orientation,
    by: String,
    stickers_read: usize,
) -> Observation {
    let size = seen.size();
    // Which candidate, in which orientation at the scan's start. A tilt or a spin in flight
    // changes only the orientation, so candidates before and after it are one cube: the
    // answer is the one whose own orientation, moved as the robot moved the cube since the
    // observation began (`before`, tracked from the first candidate's), is the one seen;
    // failing that, a candidate in any orientation (the cube turned in the hand).
    let moved = before.relative_to(&candidates[0].orientation);
    let fits = |k: usize| {
        let c = &candidates[k];
        let want = to_cube(&c.robot, &c.orientation);
        Orientation::all()
            .into_iter()
            .filter(move |o| to_cube(seen, o).colors() == want.colors())
    };
    let exact = (0..candidates.len()).rev().find_map(|k| {
        let expected = compose(candidates[k].orientation, moved);
        fits(k).find(|o| *o == expected).map(|o| (k, o))
    });
    let any = || (0..candidates.len()).find_map(|k| fits(k).next().map(|o| (k, o)));
    if let Some((k, o)) = exact.or_else(any) {
        robot.mark_frame(size, compose(o, scanned.orientation));
        return Observation {
            seen: Seen::Agrees(k),
            by,
            stickers_read,
        };
    }
    // Another state: its orientation from the centres (3x3x3), else as the robot tracked it.
    let o = orientation_from_centres(seen, known.first_scan).unwrap_or(before);
    let now = compose(o, scanned.orientation);
    robot.mark_frame(size, now);
    Observation {
        seen: Seen::Differs {
            cube: to_cube(seen, &o),
            orientation: now,
        },
        by,
        stickers_read,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::Alg;

    fn cube(alg: &str) -> FaceletCube {
        let mut c = FaceletCube::solved(Size::Three);
        c.apply(&Alg::parse(alg).unwrap()).unwrap();
        c
    }

    #[test]
    fn prefixes_and_renamed_states_are_matched() {
        let start = cube("R U");
        let flight = vec![Action::Turns("F".into()), Action::Turns("D2".into())];
        let states = prefix_states(&start, Orientation::IDENTITY, &flight);
        assert_eq!(states.len(), 3);
        assert_eq!(states[2].0, cube("R U F D2"));
        let robots: Vec<FaceletCube> = states.iter().map(|s| s.0.clone()).collect();
        // The robot names its colours otherwise: a renaming still matches.
        let own = FaceletCube::parse(
            &cube("R U F")
                .to_letters()
                .chars()
                .map(|c| match c {
                    'U' => 'w',
                    'R' => 'r',
                    'F' => 'g',
                    'D' => 'y',
                    'L' => 'o',
                    _ => 'b',
                })
                .collect::<String>(),
        )
        .unwrap();
        assert_eq!(match_state(&own, &robots), Some(1));
        assert_eq!(match_state(&cube("L"), &robots), None);
    }

    #[test]
    fn chosen_stickers_tell_every_pair_apart() {
        let cands = vec![cube("R"), cube("R U"), cube("R U F"), cube("R U F L")];
        let s = stickers_to_tell_apart(&cands);
        for i in 0..cands.len() {
            for j in i + 1..cands.len() {
                assert!(
                    s.iter()
                        .any(|&k| cands[i].colors()[k] != cands[j].colors()[k]),
                    "{i} {j}"
                );
            }
        }
        assert!(s.len() <= 3 + 4);
    }

    #[test]
    fn readings_are_classified_only_when_sure() {
        let raw = vec![
            ('U', [200.0, 200.0, 200.0]),
            ('R', [180.0, 30.0, 20.0]),
            ('F', [30.0, 160.0, 40.0]),
            ('D', [200.0, 190.0, 30.0]),
            ('L', [200.0, 90.0, 20.0]),
            ('B', [20.0, 40.0, 150.0]),
        ];
        assert_eq!(classify([150.0, 150.0, 155.0], &raw), Some('U'));
        assert_eq!(classify([170.0, 35.0, 25.0], &raw), Some('R'));
        // Half way between red and orange: not sure.
        assert_eq!(classify([190.0, 58.0, 20.0], &raw), None);
        // Pink is no colour of this cube.
        assert_eq!(classify([230.0, 120.0, 190.0], &raw), None);
    }
}
