//! Verifying a job: after execution, what state is the cube really in? A simulator reads
//! its cube back (its colour naming is matched to the job's sticker by sticker); a real
//! robot scans again (colours matched to the first scan's by their Lab values); a robot that
//! can do neither leaves only the tracked state, which proves nothing.
//!
//! Level: job. No printing.

use crate::color::resolve::ResolveOptions;
use crate::cube::{Face, FaceletCube, Size};
use crate::robot::mindcub3r::frames::{
    align_target, orientation_from_centres, rotations_of, to_cube,
};
use crate::robot::mindcub3r::model::Orientation;
use crate::robot::symmetry::same_up_to_rotation;

use super::colours::{color_centroids, match_colors};
use super::error::RunError;
use super::report::RunEvent;
use super::robot::RunRobot;
use super::scan::scan_and_resolve;

/// How the final state was established.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifiedBy {
    /// The simulator's own cube.
    ReadBack,
    /// A fresh scan.
    Rescan,
    /// Only the job's own tracking: not a verification.
    Tracking,
}

impl VerifiedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            VerifiedBy::ReadBack => "simulator read-back",
            VerifiedBy::Rescan => "re-scan",
            VerifiedBy::Tracking => "tracking (no read-back)",
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

/// The final cube in the first scan's cube frame and naming, and how it was established.
pub fn final_cube(
    robot: &mut dyn RunRobot,
    belief: &Belief,
    resolve: &ResolveOptions,
    max_rescans: usize,
    events: &mut dyn FnMut(RunEvent),
) -> Result<(FaceletCube, VerifiedBy), RunError> {
    let mut announce = |by: VerifiedBy| {
        events(RunEvent::Verifying {
            by: by.as_str().into(),
        })
    };
    if let Some((initial, now)) = robot.read_back() {
        announce(VerifiedBy::ReadBack);
        let map = majority_labels(&initial, belief.initial).ok_or(RunError::SimulatorMismatch)?;
        let robot_frame = relabel(&now, &map, belief.symbols);
        return Ok((
            to_cube(&robot_frame, &belief.orientation),
            VerifiedBy::ReadBack,
        ));
    }
    if belief.first_colors.len() != 6 {
        announce(VerifiedBy::Tracking);
        return Ok((
            to_cube(belief.tracked, &belief.orientation),
            VerifiedBy::Tracking,
        ));
    }
    // A real robot: scan again and match the colours to the first scan's. A fresh scan's
    // frame is the cube as it sits now.
    announce(VerifiedBy::Rescan);
    let size = belief.tracked.size();
    let again = scan_and_resolve(robot, resolve, size, max_rescans, events)?.resolved;
    let map = match_colors(&color_centroids(&again), belief.first_colors)
        .ok_or(RunError::RescanColours)?;
    let symbols = belief.symbols;
    let face_map: [Face; 6] = std::array::from_fn(|i| {
        let s = again.cube.symbols()[i];
        let t = map
            .iter()
            .find(|(a, _)| *a == s)
            .map(|(_, b)| *b)
            .unwrap_or(s);
        Face::ALL[symbols.iter().position(|&x| x == t).unwrap_or(i)]
    });
    Ok((relabel(&again.cube, &face_map, symbols), VerifiedBy::Rescan))
}

/// Whether the final cube is the target (in any whole-cube orientation), and the two as the
/// report shows them: in the first scan's orientation (3x3x3: by its centres).
pub fn judge(
    final_cube: &FaceletCube,
    verified_by: VerifiedBy,
    first_scan: &FaceletCube,
    target: &FaceletCube,
) -> (bool, FaceletCube, FaceletCube) {
    let reached = same_up_to_rotation(final_cube, target) && verified_by != VerifiedBy::Tracking;
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
    (reached, final_state, target_out)
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
}
