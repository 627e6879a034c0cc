//! Solver-side cubie cubes: like [`crate::cube::CubieCube`] but able to hold the
//! mirror-image symmetries (corner orientations 3..6 mark a reflected corner, as in
//! Kociemba's papers), and the 48 symmetries of the cube as cubie cubes.
//!
//! Level: bottom of `solver`; depends on `cube`. Must not depend on the coordinates, tables or
//! searches, nor on anything above `solver`.

// Index loops over parallel arrays (slots, pieces, moves) read best as they are.
#![allow(clippy::needless_range_loop)]

use std::sync::OnceLock;

use crate::cube::{CubieCube, Face, Turn};

/// A cubie cube whose corners may be mirrored (orientation 3..6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Cc {
    pub cp: [u8; 8],
    pub co: [u8; 8],
    pub ep: [u8; 12],
    pub eo: [u8; 12],
}

impl Cc {
    pub const ID: Cc = Cc {
        cp: [0, 1, 2, 3, 4, 5, 6, 7],
        co: [0; 8],
        ep: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
        eo: [0; 12],
    };

    pub fn from_cubie(c: &CubieCube) -> Cc {
        Cc {
            cp: c.cp,
            co: c.co,
            ep: c.ep,
            eo: c.eo,
        }
    }

    /// `self`, then `o` (the same order as [`CubieCube::multiply`]).
    pub fn mul(&self, o: &Cc) -> Cc {
        let mut r = Cc::ID;
        for i in 0..8 {
            let j = o.cp[i] as usize;
            r.cp[i] = self.cp[j];
            let a = self.co[j] as i8;
            let b = o.co[i] as i8;
            r.co[i] = match (a < 3, b < 3) {
                (true, true) => (a + b) % 3,
                (true, false) => {
                    let x = a + b;
                    if x >= 6 {
                        x - 3
                    } else {
                        x
                    }
                }
                (false, true) => {
                    let x = a - b;
                    if x < 3 {
                        x + 3
                    } else {
                        x
                    }
                }
                (false, false) => {
                    let x = a - b;
                    if x < 0 {
                        x + 3
                    } else {
                        x
                    }
                }
            } as u8;
        }
        for i in 0..12 {
            let j = o.ep[i] as usize;
            r.ep[i] = self.ep[j];
            r.eo[i] = (self.eo[j] + o.eo[i]) & 1;
        }
        r
    }

    pub fn inv(&self) -> Cc {
        let mut r = Cc::ID;
        for i in 0..8 {
            let p = self.cp[i] as usize;
            r.cp[p] = i as u8;
            let o = self.co[i];
            r.co[p] = if o >= 3 { o } else { (3 - o) % 3 };
        }
        for i in 0..12 {
            let p = self.ep[i] as usize;
            r.ep[p] = i as u8;
            r.eo[p] = self.eo[i];
        }
        r
    }

    /// `S · self · S⁻¹` for symmetry `s`.
    pub fn conj(&self, s: usize) -> Cc {
        let t = sym_table();
        t.cubes[s].mul(self).mul(&t.cubes[t.inv[s] as usize])
    }
}

/// The cubie cube of face turn `m` (0..18, order U U2 U' R … B').
pub(crate) fn move_cube(m: usize) -> Cc {
    Cc::from_cubie(CubieCube::face_move(Face::ALL[m / 3], Turn::ALL[m % 3]))
}

/// The 48 symmetries. Index `16·a + 8·b + 2·c + d` is `URF3^a · F2^b · U4^c · LR2^d`, so
/// indices 0..16 are the symmetries that keep the U–D axis (D4h).
pub(crate) struct SymTable {
    pub cubes: Vec<Cc>,
    pub inv: [u8; 48],
    /// `mconj[s][m]`: the face turn `S_s · M_m · S_s⁻¹`.
    pub mconj: [[u8; 18]; 48],
}

/// 120° turn about the URF–DBL diagonal.
const URF3: Cc = Cc {
    cp: [0, 4, 5, 1, 3, 7, 6, 2],
    co: [1, 2, 1, 2, 2, 1, 2, 1],
    ep: [1, 8, 5, 9, 3, 11, 7, 10, 0, 4, 6, 2],
    eo: [1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1, 1],
};
/// 180° turn about the F–B axis.
const F2: Cc = Cc {
    cp: [5, 4, 7, 6, 1, 0, 3, 2],
    co: [0; 8],
    ep: [6, 5, 4, 7, 2, 1, 0, 3, 9, 8, 11, 10],
    eo: [0; 12],
};
/// 90° turn about the U–D axis.
const U4: Cc = Cc {
    cp: [3, 0, 1, 2, 7, 4, 5, 6],
    co: [0; 8],
    ep: [3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10],
    eo: [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1],
};
/// Reflection in the plane between L and R.
const LR2: Cc = Cc {
    cp: [1, 0, 3, 2, 5, 4, 7, 6],
    co: [3; 8],
    ep: [2, 1, 0, 3, 6, 5, 4, 7, 9, 8, 11, 10],
    eo: [0; 12],
};

fn power(c: &Cc, n: usize) -> Cc {
    (0..n).fold(Cc::ID, |acc, _| acc.mul(c))
}

pub(crate) fn sym_table() -> &'static SymTable {
    static T: OnceLock<SymTable> = OnceLock::new();
    T.get_or_init(|| {
        let mut cubes = Vec::with_capacity(48);
        for a in 0..3 {
            for b in 0..2 {
                for c in 0..4 {
                    for d in 0..2 {
                        cubes.push(
                            power(&URF3, a)
                                .mul(&power(&F2, b))
                                .mul(&power(&U4, c))
                                .mul(&power(&LR2, d)),
                        );
                    }
                }
            }
        }
        let mut inv = [0u8; 48];
        for s in 0..48 {
            inv[s] = (0..48)
                .find(|&t| cubes[s].mul(&cubes[t]) == Cc::ID)
                .expect("every symmetry has an inverse") as u8;
        }
        let moves: Vec<Cc> = (0..18).map(move_cube).collect();
        let mut mconj = [[0u8; 18]; 48];
        for s in 0..48 {
            for m in 0..18 {
                let c = cubes[s].mul(&moves[m]).mul(&cubes[inv[s] as usize]);
                mconj[s][m] = moves
                    .iter()
                    .position(|x| *x == c)
                    .expect("a symmetry maps face turns to face turns")
                    as u8;
            }
        }
        SymTable { cubes, inv, mconj }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetries_form_a_group_of_48_that_maps_moves_to_moves() {
        let t = sym_table();
        for i in 0..48 {
            for j in 0..i {
                assert_ne!(t.cubes[i], t.cubes[j], "symmetries {i} and {j} coincide");
            }
        }
        assert_eq!(power(&URF3, 3), Cc::ID);
        assert_eq!(power(&U4, 4), Cc::ID);
        assert_eq!(power(&F2, 2), Cc::ID);
        assert_eq!(power(&LR2, 2), Cc::ID);
        // The first 16 keep the U-D axis: U turns go to U or D turns.
        for s in 0..16 {
            for m in 0..3 {
                let f = t.mconj[s][m] / 3;
                assert!(f == 0 || f == 3, "symmetry {s} moves U to face {f}");
            }
        }
        // URF3 cycles the axes.
        let axes: Vec<u8> = [0, 16, 32].iter().map(|&s| t.mconj[s][0] / 3 % 3).collect();
        assert_eq!(axes[0], 0);
        assert!(
            axes[1] != 0 && axes[2] != 0 && axes[1] != axes[2],
            "URF3 cycles the axes"
        );
    }

    #[test]
    fn mirrored_multiplication_is_associative_and_inverse_works() {
        let t = sym_table();
        let r = move_cube(3).mul(&move_cube(1)).mul(&move_cube(16));
        for s in 0..48 {
            let c = &t.cubes[s];
            assert_eq!(c.mul(&c.inv()), Cc::ID);
            assert_eq!(c.mul(&r).mul(&c.inv()), r.conj(s));
            assert_eq!(
                c.mul(&r).mul(&t.cubes[(s * 7) % 48]),
                c.mul(&r.mul(&t.cubes[(s * 7) % 48]))
            );
        }
    }
}
