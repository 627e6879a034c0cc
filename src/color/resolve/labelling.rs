//! Labellings (a colour class per sticker) as cubes: the cube a labelling describes, and
//! the whole-class recolourings of a 3x3x3 labelling by a cube rotation (centres kept),
//! which the refinement and the doubt test both weigh.
//!
//! Level: part of `color::resolve`; depends on `cube` and the permutation helper of
//! [`super::classes`]. Must not depend on the refinement, the doubt test or the search.

use super::classes::permute;
use crate::cube::{CubieCube, Face, FaceletCube, Size};

/// The legal 3x3x3 labellings obtained from `labels` by recolouring every non-centre
/// sticker with a permutation of the six colours that a whole-cube rotation induces.
pub(super) fn conjugates(labels: &[usize]) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut perm = [0usize, 1, 2, 3, 4, 5];
    permute(&mut perm, 0, &mut |p| {
        let keeps_axes = Face::ALL
            .iter()
            .all(|f| Face::ALL[p[f.opposite().index()]] == Face::ALL[p[f.index()]].opposite());
        if !keeps_axes || *p == [0, 1, 2, 3, 4, 5] {
            return;
        }
        let l: Vec<usize> = labels
            .iter()
            .enumerate()
            .map(|(i, &c)| if i % 9 == 4 { c } else { p[c] })
            .collect();
        let legal = cube_of(Size::Three, &l)
            .and_then(|(c, _)| CubieCube::from_facelets(&c))
            .is_some_and(|c| c.is_solvable());
        if legal {
            out.push(l);
        }
    });
    out
}

/// The 24 permutations of the six faces that a whole-cube rotation makes: `p[f]` is where
/// face `f` goes (opposite faces stay opposite, and the turn sense is kept).
pub(super) fn rotations() -> Vec<[usize; 6]> {
    let n = |i: usize| Face::ALL[i].normal();
    let cross = |a: [i32; 3], b: [i32; 3]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let (u, r, f) = (Face::U.index(), Face::R.index(), Face::F.index());
    let hand = |p: &[usize; 6]| cross(n(p[u]), n(p[r])) == n(p[f]);
    let want = hand(&[0, 1, 2, 3, 4, 5]);
    let mut out = Vec::new();
    let mut perm = [0usize, 1, 2, 3, 4, 5];
    permute(&mut perm, 0, &mut |p| {
        let keeps_axes = Face::ALL
            .iter()
            .all(|f| Face::ALL[p[f.opposite().index()]] == Face::ALL[p[f.index()]].opposite());
        if keeps_axes && hand(p) == want {
            out.push(*p);
        }
    });
    out
}

/// The cube of a labelling (class per sticker) and the face of each class.
pub(super) fn cube_of(size: Size, labels: &[usize]) -> Option<(FaceletCube, [Face; 6])> {
    match size {
        Size::Three => {
            let colors: Vec<Face> = labels.iter().map(|&c| Face::ALL[c]).collect();
            let cube = FaceletCube::from_colors(size, colors)?;
            Some((cube, Face::ALL))
        }
        Size::Two => {
            // A 2x2x2 has no centres: the parser names the faces by the corner it keeps
            // fixed, and the cube is written in face letters like a 3x3x3.
            let s: String = labels.iter().map(|&c| char::from(b'a' + c as u8)).collect();
            let cube = FaceletCube::parse(&s).ok()?;
            let cube = FaceletCube::from_colors(size, cube.colors().to_vec())?;
            let mut map = [Face::U; 6];
            for (i, &c) in labels.iter().enumerate() {
                map[c] = cube.colors()[i];
            }
            Some((cube, map))
        }
    }
}
