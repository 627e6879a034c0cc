//! Coordinates: numbers that index one aspect of a cube (corner twist, edge flip, where the
//! four middle-slice edges are, …). Each is a typed newtype with `get` (read it off a
//! cubie cube), `set` (a cubie cube that has it) and `COUNT`.
//!
//! Level: part of `solver`; depends on the solver's cubie cubes. Must not depend on the
//! tables or the searches, nor on anything above `solver`.

// Index loops over parallel arrays (slots, pieces, moves) read best as they are.
#![allow(clippy::needless_range_loop)]

use super::cubie::Cc;

/// Binomial coefficients C(n, k) for n < 12, k ≤ 4.
const fn binom(n: usize, k: usize) -> usize {
    if k > n {
        return 0;
    }
    let mut r = 1;
    let mut i = 0;
    while i < k {
        r = r * (n - i) / (i + 1);
        i += 1;
    }
    r
}

const FACT: [usize; 9] = [1, 1, 2, 6, 24, 120, 720, 5040, 40320];

/// Lehmer rank of a permutation of `0..p.len()` (identity → 0).
pub(crate) fn perm_rank(p: &[u8]) -> usize {
    let n = p.len();
    let mut r = 0;
    for i in 0..n {
        let smaller = p[i + 1..].iter().filter(|&&x| x < p[i]).count();
        r += smaller * FACT[n - 1 - i];
    }
    r
}

/// Inverse of [`perm_rank`].
pub(crate) fn perm_unrank(mut r: usize, out: &mut [u8]) {
    let n = out.len();
    let mut avail: Vec<u8> = (0..n as u8).collect();
    for i in 0..n {
        let f = FACT[n - 1 - i];
        let k = r / f;
        r %= f;
        out[i] = avail.remove(k);
    }
}

macro_rules! newtype {
    ($(#[$m:meta])* $name:ident, $t:ty, $count:expr) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub $t);
        impl $name {
            pub const COUNT: usize = $count;
        }
    };
}

newtype!(
    /// Corner twist 0..2187 (the twists of URF..DBL in base 3; DRB follows).
    Twist, u16, 2187
);
newtype!(
    /// Edge flip 0..2048 (the flips of UR..BL in base 2; BR follows).
    Flip, u16, 2048
);
newtype!(
    /// Where the four middle-slice edges FR FL BL BR are and in which order: 0..11880,
    /// 0 when solved; `/ 24` gives the unordered positions (0..495), and in phase 2
    /// (`< 24`) it is the slice permutation.
    SliceSorted, u16, 11880
);
newtype!(
    /// Where the U-layer edges UR UF UL UB are, in order (0..11880).
    UEdges, u16, 11880
);
newtype!(
    /// Where the D-layer edges DR DF DL DB are, in order (0..11880).
    DEdges, u16, 11880
);
newtype!(
    /// Corner permutation 0..40320 (0 when solved).
    CornerPerm, u16, 40320
);
newtype!(
    /// Permutation of the eight U- and D-layer edges in phase 2 (0..40320).
    UdEdges, u16, 40320
);
newtype!(
    /// `slice · 2048 + flip`: the phase-1 edge coordinate (0..1013760).
    FlipSlice, u32, 495 * 2048
);

/// A coordinate reduced by the 16 symmetries that keep the U–D axis: the class (its
/// smallest member is the representative) and the symmetry `s` with
/// `rep = S_s · x · S_s⁻¹`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SymCoord {
    pub class: u32,
    pub sym: u8,
}

impl Twist {
    pub(crate) fn get(c: &Cc) -> Twist {
        Twist(c.co[..7].iter().fold(0u16, |a, &o| a * 3 + o as u16))
    }
    pub(crate) fn set(self, c: &mut Cc) {
        let mut v = self.0;
        let mut sum = 0;
        for i in (0..7).rev() {
            c.co[i] = (v % 3) as u8;
            sum += c.co[i];
            v /= 3;
        }
        c.co[7] = (3 - sum % 3) % 3;
    }
}

impl Flip {
    pub(crate) fn get(c: &Cc) -> Flip {
        Flip(c.eo[..11].iter().fold(0u16, |a, &o| a * 2 + o as u16))
    }
    pub(crate) fn set(self, c: &mut Cc) {
        let mut v = self.0;
        let mut sum = 0;
        for i in (0..11).rev() {
            c.eo[i] = (v & 1) as u8;
            sum += c.eo[i];
            v >>= 1;
        }
        c.eo[11] = sum & 1;
    }
}

/// Positions (as a combination, 0 when the pieces `base..base+4` sit in slots 8..12) and
/// order of four edges.
fn edge4_get(c: &Cc, base: u8) -> u16 {
    let mut comb = 0;
    let mut k = 0;
    let mut order = [0u8; 4];
    // Slots from 11 down to 0 are the numbers 0..12 of the combinatorial number system.
    for (n, slot) in (0..12).rev().enumerate() {
        let p = c.ep[slot];
        if (base..base + 4).contains(&p) {
            comb += binom(n, k + 1);
            order[3 - k] = p - base;
            k += 1;
        }
    }
    (comb * 24 + perm_rank(&order)) as u16
}

fn edge4_set(v: u16, c: &mut Cc, base: u8) {
    let (mut comb, perm) = (v as usize / 24, v as usize % 24);
    let mut order = [0u8; 4];
    perm_unrank(perm, &mut order);
    let mut slots = [0usize; 4];
    let mut k = 4;
    let mut n = 12;
    while k > 0 {
        n -= 1;
        if binom(n, k) <= comb {
            comb -= binom(n, k);
            k -= 1;
            slots[k] = 11 - n;
        }
    }
    // slots[] are in increasing slot order after the reversal below.
    slots.sort_unstable();
    let mut others = (0..12u8).filter(|p| !(base..base + 4).contains(p));
    let mut is_group = [false; 12];
    for (i, &s) in slots.iter().enumerate() {
        c.ep[s] = base + order[i];
        is_group[s] = true;
    }
    for s in 0..12 {
        if !is_group[s] {
            c.ep[s] = others.next().expect("eight other edges");
        }
    }
}

impl SliceSorted {
    pub(crate) fn get(c: &Cc) -> SliceSorted {
        SliceSorted(edge4_get(c, 8))
    }
    pub(crate) fn set(self, c: &mut Cc) {
        edge4_set(self.0, c, 8)
    }
}

impl UEdges {
    pub(crate) fn get(c: &Cc) -> UEdges {
        UEdges(edge4_get(c, 0))
    }
    pub(crate) fn set(self, c: &mut Cc) {
        edge4_set(self.0, c, 0)
    }
}

impl DEdges {
    pub(crate) fn get(c: &Cc) -> DEdges {
        DEdges(edge4_get(c, 4))
    }
    pub(crate) fn set(self, c: &mut Cc) {
        edge4_set(self.0, c, 4)
    }
}

impl CornerPerm {
    pub(crate) fn get(c: &Cc) -> CornerPerm {
        CornerPerm(perm_rank(&c.cp) as u16)
    }
    pub(crate) fn set(self, c: &mut Cc) {
        perm_unrank(self.0 as usize, &mut c.cp)
    }
}

impl UdEdges {
    /// Only meaningful when the eight U/D edges are in the U and D layers.
    pub(crate) fn get(c: &Cc) -> UdEdges {
        UdEdges(perm_rank(&c.ep[..8]) as u16)
    }
    pub(crate) fn set(self, c: &mut Cc) {
        perm_unrank(self.0 as usize, &mut c.ep[..8]);
        for i in 8..12 {
            c.ep[i] = i as u8;
        }
    }
    /// The phase-2 edge permutation from the U- and D-edge coordinates of a cube in phase 2.
    #[cfg(test)]
    pub(crate) fn from_u_d(u: UEdges, d: DEdges) -> UdEdges {
        let mut c = Cc::ID;
        u.set(&mut c);
        let ue = c.ep;
        d.set(&mut c);
        let mut ep = [0u8; 8];
        for s in 0..8 {
            ep[s] = if ue[s] < 4 { ue[s] } else { c.ep[s] };
        }
        UdEdges(perm_rank(&ep) as u16)
    }
}

impl FlipSlice {
    pub(crate) fn get(c: &Cc) -> FlipSlice {
        FlipSlice((SliceSorted::get(c).0 as u32 / 24) * 2048 + Flip::get(c).0 as u32)
    }
    pub(crate) fn set(self, c: &mut Cc) {
        SliceSorted((self.0 / 2048 * 24) as u16).set(c);
        Flip((self.0 % 2048) as u16).set(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_round_trip_and_solved_is_zero() {
        let id = Cc::ID;
        assert_eq!(Twist::get(&id).0, 0);
        assert_eq!(Flip::get(&id).0, 0);
        assert_eq!(SliceSorted::get(&id).0, 0);
        assert_eq!(CornerPerm::get(&id).0, 0);
        assert_eq!(UdEdges::get(&id).0, 0);
        for v in 0..Twist::COUNT as u16 {
            let mut c = Cc::ID;
            Twist(v).set(&mut c);
            assert_eq!(Twist::get(&c).0, v);
        }
        for v in 0..Flip::COUNT as u16 {
            let mut c = Cc::ID;
            Flip(v).set(&mut c);
            assert_eq!(Flip::get(&c).0, v);
        }
        for v in 0..SliceSorted::COUNT as u16 {
            let mut c = Cc::ID;
            SliceSorted(v).set(&mut c);
            assert_eq!(SliceSorted::get(&c).0, v);
            UEdges(v).set(&mut c);
            assert_eq!(UEdges::get(&c).0, v);
            DEdges(v).set(&mut c);
            assert_eq!(DEdges::get(&c).0, v);
        }
        for v in (0..CornerPerm::COUNT as u16).step_by(7) {
            let mut c = Cc::ID;
            CornerPerm(v).set(&mut c);
            assert_eq!(CornerPerm::get(&c).0, v);
            UdEdges(v).set(&mut c);
            assert_eq!(UdEdges::get(&c).0, v);
            let (u, d) = (UEdges::get(&c), DEdges::get(&c));
            assert_eq!(UdEdges::from_u_d(u, d).0, v);
        }
    }
}
