//! Whole-cube symmetries: the 24 rotations, optionally followed by the L/R mirror. The job
//! poses one problem 48 ways to the solver with them, the MindCub3r frames name orientations
//! by them, and the line robot uses one to rebuild a turn of a face it has no motor for.
//!
//! Level: robot (uses `cube` only). Must not depend on the robot kinds. No printing.

use crate::cube::{Alg, Axis, Face, FaceletCube, Move, MoveKind, Size, Turn};

/// A whole-cube symmetry used to pose the same problem differently to the solver: a
/// rotation (one of 24), optionally followed by the mirror through the plane between L
/// and R. Conjugating start and target by it gives an equivalent problem whose solutions,
/// mapped back with [`Symmetry::map_back`], solve the original one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symmetry {
    /// The rotation, as `x`/`y` moves.
    pub rotation: Alg,
    pub mirror: bool,
    /// `to_new[f]`: the face label that original face `f` gets in the conjugated problem.
    to_new: [Face; 6],
}

impl Symmetry {
    /// The identity.
    pub fn identity() -> Symmetry {
        Symmetry {
            rotation: Alg::new(),
            mirror: false,
            to_new: Face::ALL,
        }
    }

    /// The 24 rotations, and with `mirror` also their 24 mirror images (identity first).
    pub fn all(mirror: bool) -> Vec<Symmetry> {
        let x = Move::new(MoveKind::Rotation(Axis::X), Turn::Cw);
        let y = Move::new(MoveKind::Rotation(Axis::Y), Turn::Cw);
        // Breadth-first over x and y, keyed by where the six centres go.
        let mut rots: Vec<(Alg, [Face; 6])> = vec![(Alg::new(), Face::ALL)];
        let mut i = 0;
        while i < rots.len() {
            let (alg, _) = rots[i].clone();
            for m in [x, y] {
                let mut a = alg.clone();
                a.push(m);
                let map = centre_map(&a);
                if !rots.iter().any(|(_, r)| *r == map) {
                    rots.push((a, map));
                }
            }
            i += 1;
        }
        let mut out: Vec<Symmetry> = rots
            .iter()
            .map(|(alg, map)| Symmetry {
                rotation: alg.clone(),
                mirror: false,
                to_new: *map,
            })
            .collect();
        if mirror {
            let mirrored: Vec<Symmetry> = out
                .iter()
                .map(|s| Symmetry {
                    rotation: s.rotation.clone(),
                    mirror: true,
                    to_new: s.to_new.map(mirror_face),
                })
                .collect();
            out.extend(mirrored);
        }
        out
    }

    /// The conjugated cube: rotated (and mirrored), then relabelled so each sticker names
    /// the face label its colour's centre now has.
    pub fn apply(&self, cube: &FaceletCube) -> FaceletCube {
        let size = cube.size();
        let mut c = FaceletCube::from_colors(size, cube.colors().to_vec()).expect("same size");
        c.apply(&self.rotation).expect("rotations fit every size");
        let mut colors = c.colors().to_vec();
        if self.mirror {
            colors = mirror_facelets(size, &colors);
        }
        let relabelled = colors.iter().map(|&f| self.to_new[f.index()]).collect();
        FaceletCube::from_colors(size, relabelled)
            .expect("same size")
            .with_symbols(
                // Symbols follow the colours: new label g shows the symbol of the face that
                // maps to g.
                std::array::from_fn(|g| {
                    let f = self
                        .to_new
                        .iter()
                        .position(|&n| n.index() == g)
                        .expect("perm");
                    cube.symbols()[f]
                }),
            )
    }

    /// A solution of the conjugated problem, as a solution of the original one.
    pub fn map_back(&self, alg: &Alg) -> Alg {
        Alg::from_moves(
            alg.moves()
                .iter()
                .map(|m| match m.kind {
                    MoveKind::Face(g) => {
                        let f = Face::ALL[self
                            .to_new
                            .iter()
                            .position(|&n| n == g)
                            .expect("permutation")];
                        Move::face(
                            f,
                            if self.mirror {
                                m.turn.inverse()
                            } else {
                                m.turn
                            },
                        )
                    }
                    _ => *m,
                })
                .collect(),
        )
    }
}

/// Where each face's centre goes under a rotation: `out[f]` = the position of face f.
fn centre_map(rotation: &Alg) -> [Face; 6] {
    let mut c = FaceletCube::solved(Size::Three);
    c.apply(rotation).expect("rotation");
    let mut out = Face::ALL;
    for pos in Face::ALL {
        out[c.colors()[pos.index() * 9 + 4].index()] = pos;
    }
    out
}

fn mirror_face(f: Face) -> Face {
    match f {
        Face::L => Face::R,
        Face::R => Face::L,
        other => other,
    }
}

/// The mirror image through the plane between L and R: every face's columns reverse, and
/// the R and L faces swap.
fn mirror_facelets(size: Size, colors: &[Face]) -> Vec<Face> {
    let n = size.n();
    let pf = size.per_face();
    let mut out = colors.to_vec();
    for f in Face::ALL {
        let g = mirror_face(f);
        for r in 0..n {
            for c in 0..n {
                out[g.index() * pf + r * n + (n - 1 - c)] = colors[f.index() * pf + r * n + c];
            }
        }
    }
    out
}

/// Whether `cube` shows the colouring `target` in some whole-cube orientation.
pub fn same_up_to_rotation(cube: &FaceletCube, target: &FaceletCube) -> bool {
    cube.size() == target.size()
        && Symmetry::all(false).iter().any(|s| {
            let mut c = cube.clone();
            c.apply(&s.rotation).expect("rotation");
            c.colors() == target.colors()
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::{random_moves, random_state};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn symmetric_problems_map_back() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let syms = Symmetry::all(true);
        assert_eq!(syms.len(), 48);
        for size in [Size::Three, Size::Two] {
            for s in &syms {
                let cube = random_state(size, &mut rng);
                let alg = random_moves(Size::Three, 12, &mut rng);
                let mut target = cube.clone();
                target.apply(&alg).unwrap();
                // A solution of the conjugated problem...
                let c2 = s.apply(&cube);
                let t2 = s.apply(&target);
                let mut alg2 = Vec::new();
                for m in alg.moves() {
                    let MoveKind::Face(f) = m.kind else {
                        unreachable!()
                    };
                    let g = s.to_new[f.index()];
                    alg2.push(Move::face(
                        g,
                        if s.mirror { m.turn.inverse() } else { m.turn },
                    ));
                }
                let alg2 = Alg::from_moves(alg2);
                let mut reached = c2.clone();
                reached.apply(&alg2).unwrap();
                assert_eq!(reached.colors(), t2.colors(), "{:?}", s);
                // ...maps back to a solution of the original problem.
                let back = s.map_back(&alg2);
                assert_eq!(back, alg);
                if size == Size::Three {
                    // Conjugated cubes keep standard centres.
                    for f in Face::ALL {
                        assert_eq!(c2.colors()[f.index() * 9 + 4], f);
                    }
                }
            }
        }
    }
}
