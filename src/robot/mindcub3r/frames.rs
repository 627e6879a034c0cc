//! Frames and targets for a run: turning a robot-frame cube back to the frame of the first
//! scan, normalising a target colouring given in any whole-cube orientation, and gathering
//! candidate solutions from the symmetric variants of a problem.
//!
//! Level: robot (depends on `cube`, [`super::model`] and [`crate::robot::symmetry`]; the solver is passed in as a
//! closure so this stays testable without tables). No printing.

use super::model::{Orientation, Primitive};
use crate::cube::{Alg, Axis, FaceletCube, MoveKind, Size};
use crate::robot::symmetry::Symmetry;

/// The whole-cube rotation (as `x`/`y` moves) that takes the identity orientation to `o`.
pub fn rotation_to(o: &Orientation) -> Alg {
    Symmetry::all(false)
        .into_iter()
        .map(|s| s.rotation)
        .find(|r| {
            let mut x = Orientation::IDENTITY;
            for m in r.moves() {
                x = x.after(if m.kind == MoveKind::Rotation(Axis::X) {
                    Primitive::Tilt
                } else {
                    Primitive::Spin(1)
                });
            }
            x == *o
        })
        .expect("one of the 24 orientations")
}

/// The robot-frame cube of a cube-frame cube held in orientation `o`.
pub fn to_robot(cube: &FaceletCube, o: &Orientation) -> FaceletCube {
    let mut c = cube.clone();
    c.apply(&rotation_to(o)).expect("rotations fit");
    c
}

/// The cube-frame cube of a robot-frame cube held in orientation `o` (the inverse of
/// [`to_robot`]).
pub fn to_cube(robot: &FaceletCube, o: &Orientation) -> FaceletCube {
    let mut c = robot.clone();
    c.apply(&rotation_to(o).inverse()).expect("rotations fit");
    c
}

/// The orientation of a robot-frame 3x3x3 relative to a reference cube frame, read from the
/// centres (`None` when the centres do not match any rotation of the reference's).
pub fn orientation_from_centres(
    robot: &FaceletCube,
    reference: &FaceletCube,
) -> Option<Orientation> {
    if robot.size() != Size::Three || reference.size() != Size::Three {
        return None;
    }
    Orientation::all().into_iter().find(|o| {
        let c = to_cube(robot, o);
        (0..6).all(|f| c.colors()[f * 9 + 4] == reference.colors()[f * 9 + 4])
    })
}

/// The whole-cube orientations of `target` (colours kept), deduplicated.
pub fn rotations_of(target: &FaceletCube) -> Vec<FaceletCube> {
    let mut out: Vec<FaceletCube> = Vec::new();
    for s in Symmetry::all(false) {
        let mut c = target.clone();
        c.apply(&s.rotation).expect("rotations fit");
        if !out.iter().any(|o| o.colors() == c.colors()) {
            out.push(c);
        }
    }
    out
}

/// A 3x3x3 target turned whole so its centres sit where `start`'s do (the solver keeps
/// centres fixed). 2x2x2 targets are returned as they are (the solver allows any final
/// orientation). `None` if no rotation matches.
pub fn align_target(start: &FaceletCube, target: &FaceletCube) -> Option<FaceletCube> {
    if start.size() != target.size() {
        return None;
    }
    if start.size() == Size::Two {
        return Some(target.clone());
    }
    rotations_of(target)
        .into_iter()
        .find(|t| (0..6).all(|f| t.colors()[f * 9 + 4] == start.colors()[f * 9 + 4]))
}

/// A solver: `solve(start, target, n)` → up to n solutions.
pub type SolveFn<'a, E> = dyn Fn(&FaceletCube, &FaceletCube, usize) -> Result<Vec<Alg>, E> + 'a;

/// Solutions of `start → target` gathered from symmetric variants of the problem: each
/// symmetry conjugates both cubes, `solve` answers up to `n` solutions of the conjugated
/// problem, and they are mapped back; with `inverse`, also `target → start` solved and
/// inverted. Duplicates are dropped. `solve(start, target, n)`.
pub fn candidates<E>(
    start: &FaceletCube,
    target: &FaceletCube,
    symmetries: &[Symmetry],
    inverse: bool,
    n: usize,
    solve: &SolveFn<'_, E>,
) -> Result<Vec<Alg>, E> {
    let mut out: Vec<Alg> = Vec::new();
    let push = |a: Alg, out: &mut Vec<Alg>| {
        if !out.contains(&a) {
            out.push(a);
        }
    };
    for s in symmetries {
        let (s0, t0) = (s.apply(start), s.apply(target));
        for a in solve(&s0, &t0, n)? {
            push(s.map_back(&a), &mut out);
        }
        if inverse {
            for a in solve(&t0, &s0, n)? {
                push(s.map_back(&a).inverse(), &mut out);
            }
        }
    }
    Ok(out)
}

/// The robot-frame cube after primitives (the cube-frame check the tests and the executor
/// use): applies each primitive's move.
pub fn apply_primitives(cube: &mut FaceletCube, prims: &[Primitive]) {
    for p in prims {
        if let Some(m) = p.as_move() {
            cube.apply(&Alg::from_moves(vec![m]))
                .expect("robot moves fit every size");
        }
    }
}

/// The cube turned whole so that it is seen from `orientation` (robot frame): the sticker at
/// each robot position. `orientation.at(p)` is the cube face at robot position `p`.
pub fn view(cube: &FaceletCube, orientation: &Orientation) -> FaceletCube {
    to_robot(cube, orientation)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::{random_moves, random_state};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn robot_and_cube_frames_invert() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let cube = random_state(Size::Three, &mut rng);
        for o in Orientation::all() {
            let r = to_robot(&cube, &o);
            assert_eq!(to_cube(&r, &o), cube);
            assert_eq!(orientation_from_centres(&r, &cube), Some(o));
        }
    }

    #[test]
    fn target_in_another_orientation_is_aligned() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let start = random_state(Size::Three, &mut rng);
        let target = random_state(Size::Three, &mut rng);
        let mut turned = target.clone();
        turned.apply(&Alg::parse("x y2").unwrap()).unwrap();
        assert_eq!(align_target(&start, &turned).unwrap(), target);
    }

    #[test]
    fn candidates_from_symmetries_solve_the_original() {
        // A "solver" that knows one answer: the inverse of the scramble, conjugated.
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let scramble = random_moves(Size::Three, 10, &mut rng);
        let mut start = FaceletCube::solved(Size::Three);
        start.apply(&scramble).unwrap();
        let target = FaceletCube::solved(Size::Three);
        let syms = Symmetry::all(true);
        // Brute force over a known generator: search the conjugated scramble.
        let solve = |s: &FaceletCube, t: &FaceletCube, _n: usize| -> Result<Vec<Alg>, ()> {
            for sym in &syms {
                let mut c = sym.apply(&start);
                if c.colors() != s.colors() {
                    continue;
                }
                let inv = scramble.inverse();
                let conj: Vec<_> = inv
                    .moves()
                    .iter()
                    .map(|m| {
                        // The move of the conjugated problem that maps back to m.
                        crate::cube::Move::face_moves()
                            .into_iter()
                            .find(|g| sym.map_back(&Alg::from_moves(vec![*g])).moves()[0] == *m)
                            .expect("map_back permutes the face turns")
                    })
                    .collect();
                c.apply(&Alg::from_moves(conj.clone())).unwrap();
                if c.colors() == t.colors() {
                    return Ok(vec![Alg::from_moves(conj)]);
                }
            }
            Ok(vec![])
        };
        let cands = candidates(&start, &target, &syms, false, 1, &solve).unwrap();
        assert!(!cands.is_empty());
        for a in cands {
            let mut c = start.clone();
            c.apply(&a).unwrap();
            assert!(c.is_solved());
        }
    }
}
