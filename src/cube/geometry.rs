//! Sticker geometry: where each facelet sits in space, and the sticker permutation of any
//! layer rotation, derived by rotating those positions. Every move of the crate (face
//! turns, slices, wide turns, rotations, for both sizes) comes from [`layer_rotation`];
//! no move table is typed by hand.
//!
//! Coordinates are doubled integers centred on the cube: a cubie of an n-cube sits at
//! `2k − (n − 1)` along each axis (`−2, 0, 2` for n = 3; `−1, 1` for n = 2). A sticker is
//! identified by the position of its cubie and its outward normal.
//!
//! Level: part of `cube`; depends on `face` only. Must not depend on moves, stickers or pieces,
//! which are derived from it; no I/O.

use super::face::{Axis, Face};

pub(crate) type Vec3 = [i32; 3];

/// A permutation of sticker positions: after the move, position `i` shows the sticker that
/// was at `self.0[i]` before it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Permutation(pub Vec<u8>);

impl Permutation {
    pub fn identity(len: usize) -> Self {
        Permutation((0..len as u8).collect())
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `self` followed by `next`.
    pub fn then(&self, next: &Permutation) -> Permutation {
        Permutation(next.0.iter().map(|&i| self.0[i as usize]).collect())
    }

    pub fn inverse(&self) -> Permutation {
        let mut inv = vec![0u8; self.0.len()];
        for (i, &j) in self.0.iter().enumerate() {
            inv[j as usize] = i as u8;
        }
        Permutation(inv)
    }

    pub fn is_identity(&self) -> bool {
        self.0.iter().enumerate().all(|(i, &j)| i == j as usize)
    }

    /// Applies the permutation to a sequence of sticker values.
    pub fn apply<T: Copy>(&self, values: &[T]) -> Vec<T> {
        self.0.iter().map(|&i| values[i as usize]).collect()
    }
}

/// The in-face directions of a face as drawn in the net: (column direction, row direction).
fn face_frame(face: Face) -> (Vec3, Vec3) {
    match face {
        Face::U => ([1, 0, 0], [0, 0, 1]),
        Face::R => ([0, 0, -1], [0, -1, 0]),
        Face::F => ([1, 0, 0], [0, -1, 0]),
        Face::D => ([1, 0, 0], [0, 0, -1]),
        Face::L => ([0, 0, 1], [0, -1, 0]),
        Face::B => ([-1, 0, 0], [0, -1, 0]),
    }
}

/// Position (cubie centre) and normal of sticker `index` of an `n`-cube.
pub(crate) fn sticker(n: usize, index: usize) -> (Vec3, Vec3) {
    let per_face = n * n;
    let face = Face::from_index(index / per_face).expect("sticker index in range");
    let (row, col) = ((index % per_face) / n, (index % per_face) % n);
    let coord = |k: usize| 2 * k as i32 - (n as i32 - 1);
    let normal = face.normal();
    let (right, down) = face_frame(face);
    let mut pos = [0; 3];
    for a in 0..3 {
        pos[a] = normal[a] * (n as i32 - 1) + right[a] * coord(col) + down[a] * coord(row);
    }
    (pos, normal)
}

/// Index of the sticker at `pos` with outward normal `normal`.
pub(crate) fn sticker_index(n: usize, pos: Vec3, normal: Vec3) -> Option<usize> {
    (0..6 * n * n).find(|&i| sticker(n, i) == (pos, normal))
}

fn dot(a: Vec3, b: Vec3) -> i32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Quarter turn clockwise as seen from the tip of the unit vector `axis`.
fn rotate_cw(axis: Vec3, v: Vec3) -> Vec3 {
    let d = dot(axis, v);
    let c = cross(axis, v);
    [axis[0] * d - c[0], axis[1] * d - c[1], axis[2] * d - c[2]]
}

/// The sticker permutation of turning, clockwise as seen from the tip of `axis` by
/// `quarters` quarter turns, every layer whose coordinate along `axis` satisfies
/// `in_layer`. Layer coordinates are doubled (see the module docs).
pub(crate) fn layer_rotation(
    n: usize,
    axis: Vec3,
    quarters: u8,
    in_layer: impl Fn(i32) -> bool,
) -> Permutation {
    let count = 6 * n * n;
    let mut perm: Vec<u8> = (0..count as u8).collect();
    for i in 0..count {
        let (mut pos, mut normal) = sticker(n, i);
        if !in_layer(dot(pos, axis)) {
            continue;
        }
        for _ in 0..quarters {
            pos = rotate_cw(axis, pos);
            normal = rotate_cw(axis, normal);
        }
        let dest = sticker_index(n, pos, normal).expect("a rotation maps stickers to stickers");
        perm[dest] = i as u8;
    }
    Permutation(perm)
}

/// Unit vector of an axis, pointing to its positive face.
pub(crate) fn axis_vector(axis: Axis) -> Vec3 {
    axis.positive_face().normal()
}
