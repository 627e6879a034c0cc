//! Checking a job: after a plan was executed, is the cube at the target, and if not, what
//! state is it really in? [`check`] answers with how it knows ([`VerifiedBy`]): a simulator
//! in this process reads its own cube back (its colour naming matched to the job's sticker
//! by sticker); a real robot scans again ([`look`]: the whole cube read and resolved, its
//! colours matched to the first scan's by their Lab values, its orientation in the robot
//! established as [`super::observe`] does for a resume); a robot that can do neither leaves
//! only the tracked state, which proves nothing.
//!
//! The rule is that a check never says "at the target" on a cube that is not: only a
//! read-back or a scan sure of every sticker proves it, in any whole-cube orientation. A
//! scan left in doubt proves nothing, even when its best guess is the target.
//!
//! What the job plans again from, when the cube is off the target, is always what a scan
//! saw ([`Sight`]), never a simulator's read-back: a real robot has no read-back. So after a
//! read-back that finds the cube off the target, [`look`] scans before a new round.
//!
//! The cheaper check, on a robot that reads single faces (the MindCub3r): a real cube is
//! always a legal cube, so the target is proven by any set of faces on which no other real
//! cube shows the target's colours ([`crate::cube::prove`], decided for the target at hand,
//! in any whole-cube orientation). Of the sets that prove it, the one the robot reads
//! cheapest from where the cube sits is read ([`RunRobot::face_read_costs`]; on the
//! MindCub3r usually five faces of a 3x3x3, fewer of a 2x2x2), each sticker classified by
//! the first scan's raw colours. Only when every sticker read is surely the one expected
//! does the check say "at the target" ([`VerifiedBy::Proof`]). A sticker left unsure is read
//! once more (a noisy reading: about one run in twenty on the simulated brick, which
//! otherwise paid a whole scan for it); one still unsure is usually worn, and a whole scan
//! settles it better. Any other colour, or a doubt the re-read does not settle, falls back
//! to [`look`], whose scan the next round plans from. The faces are
//! chosen from the belief, but the belief proves nothing: a wrong belief can only make the
//! readings disagree.
//!
//! Level: job. No printing.

use crate::color::resolve::{facelet_names, ResolveOptions};
use crate::cube::{face_mask, prove, Face, FaceletCube, Size};
use crate::robot::mindcub3r::frames::{
    align_target, orientation_from_centres, rotations_of, to_cube, to_robot,
};
use crate::robot::mindcub3r::model::Orientation;
use crate::robot::symmetry::same_up_to_rotation;

use super::colours::ScanDoubt;
use super::error::RunError;
use super::observe::{classify, full_scan, Candidate, Known, Seen};
use super::report::RunEvent;
use super::robot::RunRobot;

/// How the final state was established.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifiedBy {
    /// The simulator's own cube.
    ReadBack,
    /// Only these faces were read, and every sticker of them was surely the target's: a
    /// proof, as no other real cube shows those colours there.
    Proof { faces: u32 },
    /// A fresh scan.
    Rescan,
    /// Only the job's own tracking: not a verification.
    Tracking,
}

impl VerifiedBy {
    /// How the summary, the journal and the progress messages name it.
    pub fn label(self) -> String {
        match self {
            VerifiedBy::ReadBack => "simulator read-back".into(),
            VerifiedBy::Proof { faces } => {
                format!("proof by {faces} face{}", if faces == 1 { "" } else { "s" })
            }
            VerifiedBy::Rescan => "re-scan".into(),
            VerifiedBy::Tracking => "tracking (no read-back)".into(),
        }
    }
}

/// What the job believes after executing, to be checked.
pub struct Belief<'a> {
    /// The robot-frame cube as tracked through every confirmed action.
    pub tracked: &'a FaceletCube,
    /// The cube's orientation in the robot relative to the first scan's frame.
    pub orientation: Orientation,
    /// What the job believes a simulator's initial cube is (robot frame).
    pub initial: &'a FaceletCube,
    /// The first scan's symbols (URFDLB) and its colours' mean Lab values.
    pub symbols: [char; 6],
    pub first_colors: &'a [(char, [f64; 3])],
}

/// What a scan of the cube showed, as a new plan starts from it.
#[derive(Clone, Debug, PartialEq)]
pub struct Sight {
    /// Cube frame of the first scan, first-scan naming.
    pub cube: FaceletCube,
    /// The cube's orientation in the robot now, relative to the first scan's frame.
    pub orientation: Orientation,
    /// How sure the scan was (re-reads included); with a contradiction its best guess is
    /// not the cube in the robot.
    pub doubt: ScanDoubt,
}

/// The outcome of a check.
#[derive(Clone, Debug)]
pub struct Check {
    pub by: VerifiedBy,
    /// Proven at the target (any whole-cube orientation).
    pub at_target: bool,
    /// The state established: cube frame of the first scan, first-scan naming.
    pub cube: FaceletCube,
    /// What a scan saw, when the check made one.
    pub sight: Option<Sight>,
}

/// Checks the cube against `target` (cube frame, first-scan naming): a simulator's
/// read-back, else a full scan, else tracking alone (see the module docs).
pub fn check(
    robot: &mut dyn RunRobot,
    belief: &Belief,
    known: &Known,
    target: &FaceletCube,
    resolve: &ResolveOptions,
    max_rescans: usize,
    events: &mut dyn FnMut(RunEvent),
) -> Result<Check, RunError> {
    let announce = |by: VerifiedBy, events: &mut dyn FnMut(RunEvent)| {
        events(RunEvent::Verifying { by: by.label() })
    };
    if let Some((initial, now)) = robot.read_back() {
        announce(VerifiedBy::ReadBack, events);
        let map = colour_map(&initial, belief.initial).ok_or(RunError::SimulatorMismatch)?;
        let robot_frame = relabel(&now, &map, belief.symbols);
        let cube = to_cube(&robot_frame, &belief.orientation);
        return Ok(Check {
            by: VerifiedBy::ReadBack,
            at_target: same_up_to_rotation(&cube, target),
            cube,
            sight: None,
        });
    }
    if belief.first_colors.len() != 6 {
        announce(VerifiedBy::Tracking, events);
        return Ok(Check {
            by: VerifiedBy::Tracking,
            at_target: false,
            cube: to_cube(belief.tracked, &belief.orientation),
            sight: None,
        });
    }
    let mut moved = None;
    if let Some(faces) = proof_faces(robot, belief, known, target) {
        let by = VerifiedBy::Proof {
            faces: faces.count_ones(),
        };
        announce(by, events);
        // One round of re-reads: a sticker still unsure after it is usually worn, which the
        // whole scan's cube rules settle better than more reading.
        if read_proves(robot, belief, known, faces, max_rescans.min(1))? {
            return Ok(Check {
                by,
                at_target: true,
                cube: to_cube(belief.tracked, &belief.orientation),
                sight: None,
            });
        }
        // The reading turned the cube whole: the belief follows it.
        let now = robot.orientation();
        moved = Some((
            to_robot(&to_cube(belief.tracked, &belief.orientation), &now),
            now,
        ));
        events(RunEvent::Verifying {
            by: format!(
                "{} (the {} faces read did not prove the target)",
                VerifiedBy::Rescan.label(),
                faces.count_ones()
            ),
        });
    } else {
        announce(VerifiedBy::Rescan, events);
    }
    let turned;
    let belief = match &moved {
        Some((tracked, orientation)) => {
            turned = Belief {
                tracked,
                orientation: *orientation,
                initial: belief.initial,
                symbols: belief.symbols,
                first_colors: belief.first_colors,
            };
            &turned
        }
        None => belief,
    };
    let sight = look(robot, belief, known, resolve, max_rescans, events)?;
    Ok(Check {
        by: VerifiedBy::Rescan,
        at_target: sight.doubt.confident && same_up_to_rotation(&sight.cube, target),
        cube: sight.cube.clone(),
        sight: Some(sight),
    })
}

/// The cheapest set of faces (bit `f`: face `f` of the cube as it sits now) whose reading
/// proves the target, when the cheaper check applies: the robot reads single faces, re-reads
/// can be classified by the first scan's raw colours, the job believes the cube is at the
/// target, and fewer than six faces prove it (six are a full scan, and [`look`] does that
/// better). The belief chooses the faces; only the readings can confirm it.
fn proof_faces(
    robot: &dyn RunRobot,
    belief: &Belief,
    known: &Known,
    target: &FaceletCube,
) -> Option<u8> {
    let raw_fits =
        known.raw_colors.len() == 6 && robot.scan_scale().map(|s| s.name()) == known.raw_scale;
    if !raw_fits || !same_up_to_rotation(&to_cube(belief.tracked, &belief.orientation), target) {
        return None;
    }
    let costs = robot.face_read_costs(belief.tracked.size())?;
    cheapest_proof(belief.tracked, &costs)
}

/// The cheapest set of faces of fewer than six whose reading proves `expected` (robot
/// frame), by `costs` per set (see [`RunRobot::face_read_costs`]).
pub fn cheapest_proof(expected: &FaceletCube, costs: &[f64]) -> Option<u8> {
    let all = costs.get(63).copied().unwrap_or(f64::INFINITY);
    let mut sets: Vec<u8> = (1u8..63)
        .filter(|&m| costs.get(m as usize).is_some_and(|&c| c < all))
        .collect();
    sets.sort_by(|a, b| costs[*a as usize].total_cmp(&costs[*b as usize]));
    sets.into_iter()
        .find(|&m| prove(expected, &face_mask(expected.size(), m)).is_proven())
}

/// Reads `faces` and says whether every sticker of them was surely the one `belief` expects
/// there (classified by the first scan's raw colours, as [`super::observe`] does). A sticker
/// the reading leaves unsure is read again, up to `max_rescans` times, as a scan's doubtful
/// stickers are; one surely of another colour, or still unsure, is no proof.
fn read_proves(
    robot: &mut dyn RunRobot,
    belief: &Belief,
    known: &Known,
    faces: u8,
    max_rescans: usize,
) -> Result<bool, RunError> {
    let size = belief.tracked.size();
    let readings = robot.read_faces(size, faces)?;
    let want = face_mask(size, faces);
    if readings.len() != want.len() {
        return Ok(false);
    }
    let expected = |i: usize| known.symbols[belief.tracked.colors()[i].index()];
    // The stickers still to judge, with their latest reading (`None`: not read).
    let mut pending: Vec<(usize, Option<[f64; 3]>)> = want
        .iter()
        .zip(readings)
        .enumerate()
        .filter(|(_, (&w, _))| w)
        .map(|(i, (_, r))| (i, r))
        .collect();
    for round in 0..=max_rescans {
        let mut unsure = Vec::new();
        for &(i, rgb) in &pending {
            let Some(rgb) = rgb else {
                return Ok(false);
            };
            match classify(rgb, known.raw_colors) {
                Some(c) if c == expected(i) => {}
                Some(_) => return Ok(false),
                None => unsure.push(i),
            }
        }
        if unsure.is_empty() {
            return Ok(true);
        }
        if round == max_rescans {
            break;
        }
        let again = robot.rescan(&unsure)?;
        if again.len() != unsure.len() {
            return Ok(false);
        }
        pending = unsure
            .into_iter()
            .zip(again.into_iter().map(Some))
            .collect();
    }
    Ok(false)
}

/// Scans the whole cube and says what it shows in the first scan's frame and naming, and
/// how the robot holds it now. A doubt is reported, not refused: the scan is resolved to
/// its most likely legal cube, and its [`ScanDoubt::confident`] says whether it was sure.
pub fn look(
    robot: &mut dyn RunRobot,
    belief: &Belief,
    known: &Known,
    resolve: &ResolveOptions,
    max_rescans: usize,
    events: &mut dyn FnMut(RunEvent),
) -> Result<Sight, RunError> {
    let expected = [Candidate {
        robot: belief.tracked.clone(),
        orientation: belief.orientation,
    }];
    let resolve = ResolveOptions {
        best_effort: true,
        ..resolve.clone()
    };
    let (seen, doubt) = full_scan(robot, &expected, known, &resolve, max_rescans, events)?;
    let (cube, orientation) = match seen.seen {
        Seen::Agrees(_) => (
            to_cube(belief.tracked, &belief.orientation),
            robot.orientation(),
        ),
        Seen::Differs { cube, orientation } => (cube, orientation),
        Seen::Foreign { why, .. } => return Err(RunError::RescanColours(why)),
    };
    Ok(Sight {
        cube,
        orientation,
        doubt,
    })
}

/// Why a check that found the cube off the target leads to no new round before anything
/// more is read: the check proves nothing (tracking only), or no round is left.
pub fn no_round_left(check: &Check, rounds_left: usize, max_rounds: usize) -> Option<String> {
    if check.by == VerifiedBy::Tracking {
        return Some(
            "the robot can neither read its cube back nor scan it: nothing proves where it is"
                .into(),
        );
    }
    if rounds_left == 0 {
        return Some(format!(
            "{max_rounds} round{} of execute-and-check spent",
            if max_rounds == 1 { "" } else { "s" }
        ));
    }
    None
}

/// Why what a scan saw after a check cannot be planned from, if it cannot: it shows the
/// target (a read-back that disagrees, or a doubt whose best guess is the target: either
/// way nothing is proven and nothing is left to turn), or it is in doubt and best guesses
/// are not to be executed.
pub fn cannot_plan_from(
    check: &Check,
    sight: &Sight,
    target: &FaceletCube,
    best_effort: bool,
) -> Option<String> {
    let size = sight.cube.size();
    let doubt = || facelet_names(&sight.doubt.doubtful, size);
    // A cube put together wrong: the rule it breaks, and what sets it right.
    let broken = || {
        sight
            .doubt.contradiction
            .as_ref()
            .map(|rule| {
                format!(
                    "; the cube as read breaks a rule of real cubes: {rule} (a corner turned in place, an edge flipped or a piece put back wrong is set right by hand)"
                )
            })
            .unwrap_or_default()
    };
    if same_up_to_rotation(&sight.cube, target) {
        return Some(if check.by == VerifiedBy::ReadBack {
            "the simulator's cube is not at the target, yet a scan sees the target".into()
        } else {
            format!(
                "the check's scan is in doubt (stickers {}) and its best guess is the target: not proven{}",
                doubt(),
                broken()
            )
        });
    }
    if !sight.doubt.confident && !best_effort {
        return Some(format!(
            "the check's scan is in doubt (stickers {}){}; --best-effort would solve again from its best guess",
            doubt(),
            broken()
        ));
    }
    None
}

/// The final cube and the target as the report shows them: in the first scan's orientation
/// (3x3x3: by its centres); a 2x2x2 at its target shows the target as the cube shows it.
pub fn shown(
    final_cube: &FaceletCube,
    reached: bool,
    first_scan: &FaceletCube,
    target: &FaceletCube,
) -> (FaceletCube, FaceletCube) {
    let final_state = match orientation_from_centres(final_cube, first_scan) {
        Some(o) => to_cube(final_cube, &o),
        None => final_cube.clone(),
    };
    let target_out = if reached && final_cube.size() == Size::Two {
        // A 2x2x2 has no centres: show the target as the cube now shows it.
        rotations_of(target)
            .into_iter()
            .find(|t| t.colors() == final_state.colors())
            .unwrap_or_else(|| target.clone())
    } else {
        // Turned whole to the first scan's orientation (3x3x3: its centres).
        align_target(first_scan, target).unwrap_or_else(|| target.clone())
    };
    (final_state, target_out)
}

/// Which of the belief's labels each of the simulator's colours is: from the simulator's
/// starting cube against the belief's first scan, as the cube sat then. A whole scan made
/// again (a scan whose frame was lost) began with the cube turned whole from where it
/// started, so the starting cube is tried in each whole-cube rotation and the map that
/// agrees with the first scan on the most stickers is taken (a map from the cube as it
/// started can be a permutation by chance and still be wrong).
fn colour_map(initial: &FaceletCube, believed: &FaceletCube) -> Option<[Face; 6]> {
    crate::robot::symmetry::Symmetry::all(false)
        .iter()
        .filter_map(|s| {
            let mut turned = initial.clone();
            turned.apply(&s.rotation).ok()?;
            let map = majority_labels(&turned, believed)?;
            let agree = turned
                .colors()
                .iter()
                .zip(believed.colors())
                .filter(|(a, b)| map[a.index()] == **b)
                .count();
            Some((agree, map))
        })
        // The first of the best: the cube as it started, when that ties.
        .min_by_key(|(agree, _)| std::cmp::Reverse(*agree))
        .map(|(_, map)| map)
}

/// The relabelling of `actual`'s colours that agrees best with `believed` sticker by
/// sticker (a permutation), or `None`.
fn majority_labels(actual: &FaceletCube, believed: &FaceletCube) -> Option<[Face; 6]> {
    if actual.size() != believed.size() {
        return None;
    }
    let mut counts = [[0usize; 6]; 6];
    for (a, b) in actual.colors().iter().zip(believed.colors()) {
        counts[a.index()][b.index()] += 1;
    }
    let map: [Face; 6] = std::array::from_fn(|a| {
        let best = (0..6).max_by_key(|&b| counts[a][b]).expect("six");
        Face::ALL[best]
    });
    let mut seen = [false; 6];
    for f in map {
        if std::mem::replace(&mut seen[f.index()], true) {
            return None;
        }
    }
    Some(map)
}

fn relabel(cube: &FaceletCube, map: &[Face; 6], symbols: [char; 6]) -> FaceletCube {
    let colors = cube.colors().iter().map(|c| map[c.index()]).collect();
    FaceletCube::from_colors(cube.size(), colors)
        .expect("same size")
        .with_symbols(symbols)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::Alg;

    #[test]
    fn majority_labels_is_a_permutation_or_nothing() {
        let a = FaceletCube::solved(Size::Three);
        let mut b = a.clone();
        b.apply(&Alg::parse("R").unwrap()).unwrap();
        assert_eq!(majority_labels(&a, &a), Some(Face::ALL));
        assert_eq!(majority_labels(&b, &b), Some(Face::ALL));
    }

    /// The simulator's colours are mapped to the belief's labels from the cube as it
    /// started, in whichever whole-cube rotation the belief's first scan saw it (a scan
    /// made again after its frame was lost), on both sizes.
    #[test]
    fn the_colour_map_finds_the_labels_in_every_whole_cube_rotation() {
        use crate::robot::symmetry::Symmetry;
        let perm = [Face::F, Face::U, Face::L, Face::B, Face::R, Face::D];
        for size in [Size::Three, Size::Two] {
            let mut initial = FaceletCube::solved(size);
            initial
                .apply(&Alg::parse("R U2 F' L D B2 R' U F2").unwrap())
                .unwrap();
            for s in Symmetry::all(false) {
                let mut turned = initial.clone();
                turned.apply(&s.rotation).unwrap();
                let believed = relabel(&turned, &perm, ['U', 'R', 'F', 'D', 'L', 'B']);
                assert_eq!(
                    colour_map(&initial, &believed),
                    Some(perm),
                    "{size:?} {s:?}"
                );
            }
        }
    }

    fn cube(alg: &str) -> FaceletCube {
        let mut c = FaceletCube::solved(Size::Three);
        c.apply(&Alg::parse(alg).unwrap()).unwrap();
        c
    }

    fn sight(alg: &str, confident: bool) -> Sight {
        Sight {
            cube: cube(alg),
            orientation: Orientation::IDENTITY,
            doubt: ScanDoubt {
                confident,
                doubtful: if confident { vec![] } else { vec![2, 20] },
                contradiction: None,
                overruled: vec![],
            },
        }
    }

    #[test]
    fn the_cheapest_proof_is_five_faces_of_a_3x3x3_and_fewer_of_a_2x2x2() {
        use crate::robot::mindcub3r::model::Timings;
        use crate::robot::mindcub3r::scan::face_read_plans;
        let t = Timings::default();
        for (size, most) in [(Size::Three, 5), (Size::Two, 4)] {
            let costs: Vec<f64> = face_read_plans(size, &t)
                .iter()
                .map(|p| p.as_ref().map_or(f64::INFINITY, |(_, c)| *c))
                .collect();
            for alg in ["", "R U R' U'", "F2 B2 L2"] {
                let mut c = FaceletCube::solved(size);
                c.apply(&Alg::parse(alg).unwrap()).unwrap();
                let faces = cheapest_proof(&c, &costs).unwrap();
                assert!(prove(&c, &face_mask(size, faces)).is_proven());
                assert!(faces.count_ones() <= most, "{alg}: {faces:06b}");
                // Nothing cheaper proves it.
                for m in 1u8..63 {
                    if costs[m as usize] < costs[faces as usize] {
                        assert!(!prove(&c, &face_mask(size, m)).is_proven());
                    }
                }
            }
        }
    }

    /// A robot whose readings are scripted: each sticker's readings in turn (the last one
    /// repeated), the first from `read_faces`, the others from re-reads.
    struct Scripted {
        readings: Vec<Vec<[f64; 3]>>,
        asked: Vec<usize>,
        rescans: usize,
    }

    impl RunRobot for Scripted {
        fn kind(&self) -> &'static str {
            "mindcub3r"
        }
        fn scan(
            &mut self,
            _: Size,
            _: &mut dyn FnMut(super::super::robot::ScanStep<'_>),
        ) -> Result<(crate::color::raw::RawScan, Orientation), RunError> {
            unreachable!("the proof reads faces")
        }
        fn scan_scale(&self) -> Option<crate::color::raw::Scale> {
            Some(crate::color::raw::Scale::Ev3Raw)
        }
        fn rescan(&mut self, stickers: &[usize]) -> Result<Vec<[f64; 3]>, RunError> {
            self.rescans += 1;
            Ok(stickers
                .iter()
                .map(|&i| {
                    self.asked[i] += 1;
                    let r = &self.readings[i];
                    r[self.asked[i].min(r.len() - 1)]
                })
                .collect())
        }
        fn plan(
            &self,
            _: &[Alg],
            _: &crate::robot::mindcub3r::cost::RobotState,
        ) -> Result<super::super::robot::RobotPlan, RunError> {
            unreachable!("the proof plans nothing")
        }
        fn execute(
            &mut self,
            _: &super::super::robot::RobotPlan,
            _: &mut dyn FnMut(super::super::robot::Progress<'_>) -> Result<(), RunError>,
        ) -> Result<(), RunError> {
            unreachable!("the proof moves nothing")
        }
        fn read_faces(&mut self, _: Size, faces: u8) -> Result<Vec<Option<[f64; 3]>>, RunError> {
            let want = face_mask(Size::Three, faces);
            Ok(want
                .iter()
                .zip(&self.readings)
                .map(|(&w, r)| w.then_some(r[0]))
                .collect())
        }
        fn read_back(&mut self) -> Option<(FaceletCube, FaceletCube)> {
            None
        }
        fn reorients(&self) -> bool {
            true
        }
    }

    #[test]
    fn a_proof_reads_unsure_stickers_again_and_never_passes_another_colour() {
        let solved = FaceletCube::solved(Size::Three);
        let symbols = ['U', 'R', 'F', 'D', 'L', 'B'];
        // Six raw colours far apart; "between" is as near blue as green: sure of neither.
        let raw: Vec<(char, [f64; 3])> = symbols
            .iter()
            .zip([
                [300.0, 300.0, 300.0],
                [300.0, 40.0, 30.0],
                [40.0, 250.0, 60.0],
                [300.0, 300.0, 40.0],
                [300.0, 120.0, 30.0],
                [30.0, 60.0, 250.0],
            ])
            .map(|(c, m)| (*c, m))
            .collect();
        let between = [35.0, 140.0, 140.0];
        assert_eq!(classify(between, &raw), None);
        let known = Known {
            symbols,
            colors: &[],
            raw_colors: &raw,
            raw_scale: Some("ev3-raw"),
            first_scan: &solved,
        };
        let belief = Belief {
            tracked: &solved,
            orientation: Orientation::IDENTITY,
            initial: &solved,
            symbols,
            first_colors: &[],
        };
        let faces = 0b011111; // U R F D L
        let blue = raw[5].1;
        let green = raw[2].1;
        let b1 = Face::B.index() * 9 + 1;
        let f4 = Face::F.index() * 9 + 4;
        let f0 = Face::F.index() * 9;
        let robot = |script: &[(usize, Vec<[f64; 3]>)]| {
            let mut readings: Vec<Vec<[f64; 3]>> = solved
                .colors()
                .iter()
                .map(|c| vec![raw[c.index()].1])
                .collect();
            for (i, r) in script {
                readings[*i] = r.clone();
            }
            Scripted {
                readings,
                asked: vec![0; 54],
                rescans: 0,
            }
        };
        // Every sticker sure: proven without a re-read.
        let mut r = robot(&[]);
        assert!(read_proves(&mut r, &belief, &known, faces, 2).unwrap());
        assert_eq!(r.rescans, 0);
        // An unsure sticker read again and then sure of the expected colour: proven.
        let mut r = robot(&[(f4, vec![between, green])]);
        assert!(read_proves(&mut r, &belief, &known, faces, 2).unwrap());
        assert_eq!((r.rescans, r.asked[f4]), (1, 1));
        // Unsure on every re-read: no proof, after `max_rescans` re-reads; none allowed: none.
        let mut r = robot(&[(f4, vec![between])]);
        assert!(!read_proves(&mut r, &belief, &known, faces, 2).unwrap());
        assert_eq!(r.rescans, 2);
        let mut r = robot(&[(f4, vec![between, green])]);
        assert!(!read_proves(&mut r, &belief, &known, faces, 0).unwrap());
        // Unsure, then surely another colour: no proof, whatever the other stickers say.
        let mut r = robot(&[(f4, vec![between, blue])]);
        assert!(!read_proves(&mut r, &belief, &known, faces, 3).unwrap());
        // Surely another colour at once: no proof and no re-read.
        let mut r = robot(&[(f0, vec![blue, green]), (f4, vec![between, green])]);
        assert!(!read_proves(&mut r, &belief, &known, faces, 3).unwrap());
        assert_eq!(r.rescans, 0);
        // A face not read cannot spoil the proof.
        let mut r = robot(&[(b1, vec![green])]);
        assert!(read_proves(&mut r, &belief, &known, faces, 2).unwrap());
    }

    #[test]
    fn another_round_only_from_a_scan_that_can_be_planned_from() {
        let target = cube("");
        let off = |by| Check {
            by,
            at_target: false,
            cube: cube("R U R'"),
            sight: None,
        };
        // Tracking proves nothing; no round left is no round.
        assert!(no_round_left(&off(VerifiedBy::Tracking), 2, 3).is_some());
        let spent = no_round_left(&off(VerifiedBy::Rescan), 0, 3).unwrap();
        assert!(spent.contains("3 rounds"), "{spent}");
        assert_eq!(no_round_left(&off(VerifiedBy::ReadBack), 1, 3), None);
        // A sure scan off the target: plan from it.
        let rescan = off(VerifiedBy::Rescan);
        assert_eq!(
            cannot_plan_from(&rescan, &sight("R U R'", true), &target, false),
            None
        );
        // In doubt: only with --best-effort, and never when its best guess is the target.
        let why = cannot_plan_from(&rescan, &sight("R U R'", false), &target, false).unwrap();
        assert!(
            why.contains("U3 F3") && why.contains("--best-effort"),
            "{why}"
        );
        assert_eq!(
            cannot_plan_from(&rescan, &sight("R U R'", false), &target, true),
            None
        );
        let why = cannot_plan_from(&rescan, &sight("y", false), &target, true).unwrap();
        assert!(why.contains("not proven"), "{why}");
        // A cube put together wrong: the check says which rule, not only "in doubt".
        let mut twisted = sight("y", false);
        twisted.doubt.contradiction = Some("a corner is twisted in place".into());
        let why = cannot_plan_from(&rescan, &twisted, &target, true).unwrap();
        assert!(
            why.contains("not proven")
                && why.contains("breaks a rule of real cubes: a corner is twisted in place"),
            "{why}"
        );
        // A read-back off the target while the scan sees it: nothing to plan.
        let why =
            cannot_plan_from(&off(VerifiedBy::ReadBack), &sight("", true), &target, true).unwrap();
        assert!(why.contains("yet a scan sees the target"), "{why}");
    }
}
