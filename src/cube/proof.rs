//! Which stickers prove a state: given a target and the sticker positions read, is the
//! target the only real cube (in any whole-cube orientation) that shows the target's
//! colours on every one of them?
//!
//! A real cube is always a legal cube, so a reading need not cover all stickers to prove a
//! state: the rest may be forced by the pieces the cube has and the three laws every real
//! cube obeys (corner twists sum to 0 mod 3, edge flips to 0 mod 2, and the corner, edge and
//! centre permutations have matching parity). [`prove`] decides it by a small constraint
//! search: for every corner and edge slot, the (piece, orientation) pairs whose colours agree
//! with the target on the slot's read stickers; for a 3x3x3, the whole-cube orientations
//! whose centres agree with the read centres. Slots with the fewest candidates are filled
//! first, each piece once; every complete assignment that obeys the laws is a cube that
//! shows what was read. If one of them is not a whole-cube turn of the target, it is the
//! counter-example; if none is, the reading proves the target.
//!
//! Orientation laws under whole-cube turns: twist is the position of a corner's U/D colour
//! among its slot's stickers (U/D sticker first, then clockwise), flip whether an edge's
//! reference colour (U/D, else F/B) sits on its slot's reference sticker. A whole-cube turn
//! is a product of face and slice turns, none of which changes either sum; a slice quarter
//! turn is a 4-cycle of edges and of centres, so the corner, edge and centre parities sum
//! to 0 mod 2 (the centres' parity is that of the orientation, as a permutation of the six
//! faces). A 2x2x2 has no centres and no edges: every corner permutation with twists summing
//! to 0 is some whole-cube orientation of a real cube.
//!
//! The search is exact but bounded ([`NODE_LIMIT`]): past the bound it answers
//! [`Proof::Undecided`], which a caller must treat as "not proven". The bound is far above
//! what face-sized readings need (a few hundred nodes for five faces of a 3x3x3).
//!
//! Level: part of `cube`; depends on `face`, `size`, `slots`, `moves`, `notation`, `facelet`
//! and `cubie`. No I/O.

use super::cubie::permutation_parity;
use super::face::Face;
use super::facelet::FaceletCube;
use super::geometry::Permutation;
use super::notation::Alg;
use super::size::Size;
use super::slots::EDGE_FACELETS;
use super::slots::{corner_sticker, identify_corner, identify_edge, CornerSlot, EdgeSlot};

/// Search nodes after which [`prove`] gives up ([`Proof::Undecided`]).
pub const NODE_LIMIT: usize = 2_000_000;

/// What a reading proves.
#[derive(Clone, Debug, PartialEq)]
pub enum Proof {
    /// Every real cube that shows the target's colours on the read stickers is the target,
    /// up to a whole-cube turn.
    Proven,
    /// A real cube that shows the same colours on the read stickers and is not the target.
    Counter(FaceletCube),
    /// The target is not a real cube in its own colour naming, or the search hit its bound:
    /// not proven.
    Undecided,
}

impl Proof {
    pub fn is_proven(&self) -> bool {
        *self == Proof::Proven
    }
}

/// The sticker mask of the faces in `faces` (bit `f` = [`Face::ALL`]`[f]`).
pub fn face_mask(size: Size, faces: u8) -> Vec<bool> {
    let per = size.per_face();
    (0..size.stickers())
        .map(|i| faces & (1 << (i / per)) != 0)
        .collect()
}

/// The 24 whole-cube orientations as sticker permutations of `size`.
pub fn rotation_permutations(size: Size) -> Vec<Permutation> {
    let gens: Vec<Permutation> = ["x", "y"]
        .iter()
        .map(|s| {
            Alg::parse(s).expect("rotation").moves()[0]
                .permutation(size)
                .clone()
        })
        .collect();
    let mut out = vec![Permutation::identity(size.stickers())];
    let mut k = 0;
    while k < out.len() {
        for g in &gens {
            let p = out[k].then(g);
            if !out.contains(&p) {
                out.push(p);
            }
        }
        k += 1;
    }
    out
}

/// Whether the stickers marked in `read` prove `target` (see the module docs).
pub fn prove(target: &FaceletCube, read: &[bool]) -> Proof {
    let size = target.size();
    if read.len() != size.stickers() {
        return Proof::Undecided;
    }
    let t = target.colors();
    // The target must be a real cube's colouring in its own naming: its pieces are the
    // pieces every candidate is made of.
    let corners_ok = (0..8)
        .all(|s| identify_corner(std::array::from_fn(|k| t[corner_sticker(size, s, k)])).is_some());
    let edges_ok = size == Size::Two
        || EDGE_FACELETS
            .iter()
            .all(|st| identify_edge(st.map(|i| t[i])).is_some());
    if !corners_ok || !edges_ok {
        return Proof::Undecided;
    }
    let rotations = rotation_permutations(size);
    let targets: Vec<Vec<Face>> = rotations.iter().map(|r| r.apply(t)).collect();
    // Whole-cube orientations of the centres that agree with the read centres (3x3x3).
    let centres: Vec<([Face; 6], u8)> = if size == Size::Three {
        let solved = FaceletCube::solved(size);
        let mut out: Vec<([Face; 6], u8)> = Vec::new();
        for r in &rotations {
            let c = r.apply(solved.colors());
            let faces: [Face; 6] = std::array::from_fn(|f| c[f * 9 + 4]);
            let agrees = (0..6).all(|f| !read[f * 9 + 4] || faces[f] == t[f * 9 + 4]);
            if agrees && !out.iter().any(|(o, _)| *o == faces) {
                let perm: [u8; 6] = faces.map(|x| x.index() as u8);
                out.push((faces, permutation_parity(&perm)));
            }
        }
        out
    } else {
        Vec::new()
    };
    if size == Size::Three && centres.is_empty() {
        // The read centres are no whole-cube orientation: no real cube shows them.
        return Proof::Proven;
    }
    let mut slots: Vec<SlotCands> = Vec::new();
    for s in 0..8 {
        let st: Vec<usize> = (0..3).map(|k| corner_sticker(size, s, k)).collect();
        let mut cands = Vec::new();
        for (p, slot) in CornerSlot::ALL.iter().enumerate() {
            let piece = slot.faces();
            for ori in 0..3 {
                if (0..3).all(|j| !read[st[j]] || t[st[j]] == piece[(j + 3 - ori) % 3]) {
                    cands.push((p as u8, ori as u8));
                }
            }
        }
        slots.push(SlotCands {
            edge: false,
            index: s,
            cands,
        });
    }
    if size == Size::Three {
        for (s, st) in EDGE_FACELETS.iter().enumerate() {
            let mut cands = Vec::new();
            for (p, slot) in EdgeSlot::ALL.iter().enumerate() {
                let piece = slot.faces();
                for ori in 0..2 {
                    if (0..2).all(|j| !read[st[j]] || t[st[j]] == piece[(j + 2 - ori) % 2]) {
                        cands.push((p as u8, ori as u8));
                    }
                }
            }
            slots.push(SlotCands {
                edge: true,
                index: s,
                cands,
            });
        }
    }
    slots.sort_by_key(|s| s.cands.len());
    // Where the last corner and the last edge are placed: their sums are final there.
    let last = |edge: bool| slots.iter().rposition(|s| s.edge == edge);
    let (last_corner, last_edge) = (last(false), last(true));
    let mut search = Search {
        size,
        slots: &slots,
        last_corner,
        last_edge,
        centres: &centres,
        targets: &targets,
        cp: [0; 8],
        co: [0; 8],
        ep: [0; 12],
        eo: [0; 12],
        nodes: 0,
    };
    match search.dfs(0, 0, 0, 0, 0) {
        Step::Found(c) => Proof::Counter(c),
        Step::Limit => Proof::Undecided,
        Step::None => Proof::Proven,
    }
}

struct SlotCands {
    edge: bool,
    index: usize,
    cands: Vec<(u8, u8)>,
}

enum Step {
    None,
    Found(FaceletCube),
    Limit,
}

struct Search<'a> {
    size: Size,
    slots: &'a [SlotCands],
    last_corner: Option<usize>,
    last_edge: Option<usize>,
    centres: &'a [([Face; 6], u8)],
    targets: &'a [Vec<Face>],
    cp: [u8; 8],
    co: [u8; 8],
    ep: [u8; 12],
    eo: [u8; 12],
    nodes: usize,
}

impl Search<'_> {
    fn dfs(&mut self, k: usize, used_c: u8, used_e: u16, twist: u8, flip: u8) -> Step {
        self.nodes += 1;
        if self.nodes > NODE_LIMIT {
            return Step::Limit;
        }
        if k == self.slots.len() {
            return self.leaf(twist, flip);
        }
        let slot = &self.slots[k];
        for &(p, o) in &slot.cands {
            let step = if slot.edge {
                let flip = (flip + o) % 2;
                if used_e & (1 << p) != 0 || (self.last_edge == Some(k) && flip != 0) {
                    continue;
                }
                self.ep[slot.index] = p;
                self.eo[slot.index] = o;
                self.dfs(k + 1, used_c, used_e | 1 << p, twist, flip)
            } else {
                let twist = (twist + o) % 3;
                if used_c & (1 << p) != 0 || (self.last_corner == Some(k) && twist != 0) {
                    continue;
                }
                self.cp[slot.index] = p;
                self.co[slot.index] = o;
                self.dfs(k + 1, used_c | 1 << p, used_e, twist, flip)
            };
            if !matches!(step, Step::None) {
                return step;
            }
        }
        Step::None
    }

    /// A complete assignment: a counter-example if it obeys the laws and is no turn of the
    /// target.
    fn leaf(&self, twist: u8, flip: u8) -> Step {
        if twist != 0 || flip != 0 {
            return Step::None;
        }
        let mut colors = vec![Face::U; self.size.stickers()];
        for slot in 0..8 {
            let piece = CornerSlot::ALL[self.cp[slot] as usize].faces();
            for k in 0..3 {
                colors[corner_sticker(self.size, slot, (k + self.co[slot] as usize) % 3)] =
                    piece[k];
            }
        }
        if self.size == Size::Two {
            return self.judge(colors);
        }
        for slot in 0..12 {
            let piece = EdgeSlot::ALL[self.ep[slot] as usize].faces();
            for k in 0..2 {
                colors[EDGE_FACELETS[slot][(k + self.eo[slot] as usize) % 2]] = piece[k];
            }
        }
        let parity = permutation_parity(&self.cp) ^ permutation_parity(&self.ep);
        for (faces, p) in self.centres {
            if *p != parity {
                continue;
            }
            for f in 0..6 {
                colors[f * 9 + 4] = faces[f];
            }
            if let Step::Found(c) = self.judge(colors.clone()) {
                return Step::Found(c);
            }
        }
        Step::None
    }

    fn judge(&self, colors: Vec<Face>) -> Step {
        if self.targets.contains(&colors) {
            return Step::None;
        }
        Step::Found(FaceletCube::from_colors(self.size, colors).expect("sized"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::{random_state, CubieCube, PocketCube};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// An independent legality test: some whole-cube turn puts the centres home and the
    /// pieces then form a solvable cube (3x3x3); the corners are real pieces with twists
    /// summing to 0 (2x2x2).
    fn legal(c: &FaceletCube) -> bool {
        match c.size() {
            Size::Three => rotation_permutations(Size::Three).iter().any(|r| {
                let turned = FaceletCube::from_colors(Size::Three, r.apply(c.colors())).unwrap();
                (0..6).all(|f| turned.colors()[f * 9 + 4] == Face::ALL[f])
                    && CubieCube::from_facelets(&turned).is_some_and(|x| x.is_solvable())
            }),
            Size::Two => PocketCube::from_facelets(c).is_some_and(|x| x.is_solvable()),
        }
    }

    fn turn_of(a: &FaceletCube, b: &FaceletCube) -> bool {
        rotation_permutations(a.size())
            .iter()
            .any(|r| r.apply(a.colors()) == b.colors())
    }

    /// Every legal cube within two turns (faces and slices) of `target`, each in all 24
    /// orientations: the brute-force neighbourhood counter-examples are looked for in.
    fn neighbourhood(target: &FaceletCube) -> Vec<Vec<Face>> {
        let size = target.size();
        let names: &[&str] = if size == Size::Three {
            &[
                "U", "U2", "U'", "R", "R2", "R'", "F", "F2", "F'", "D", "D2", "D'", "L", "L2",
                "L'", "B", "B2", "B'", "M", "M2", "M'", "E", "E2", "E'", "S", "S2", "S'",
            ]
        } else {
            &[
                "U", "U2", "U'", "R", "R2", "R'", "F", "F2", "F'", "D", "D2", "D'", "L", "L2",
                "L'", "B", "B2", "B'",
            ]
        };
        let perms: Vec<Permutation> = names
            .iter()
            .map(|s| Alg::parse(s).unwrap().moves()[0].permutation(size).clone())
            .collect();
        let mut level = vec![target.colors().to_vec()];
        let mut all = level.clone();
        for _ in 0..2 {
            let mut next = Vec::new();
            for c in &level {
                for p in &perms {
                    next.push(p.apply(c));
                }
            }
            all.extend(next.iter().cloned());
            level = next;
        }
        let rots = rotation_permutations(size);
        let mut out = Vec::new();
        for c in all {
            for r in &rots {
                out.push(r.apply(&c));
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// Checks `prove` on one reading against the brute-force neighbourhood and checks any
    /// counter-example it gives.
    fn check(target: &FaceletCube, read: &[bool], near: &[Vec<Face>]) -> Proof {
        let proof = prove(target, read);
        let agrees = |c: &[Face]| (0..read.len()).all(|i| !read[i] || c[i] == target.colors()[i]);
        let brute = near.iter().find(|c| {
            agrees(c)
                && !turn_of(
                    &FaceletCube::from_colors(target.size(), c.to_vec()).unwrap(),
                    target,
                )
        });
        match &proof {
            Proof::Proven => assert!(
                brute.is_none(),
                "proven, yet {:?} agrees",
                brute.map(|c| FaceletCube::from_colors(target.size(), c.clone())
                    .unwrap()
                    .to_string())
            ),
            Proof::Counter(c) => {
                assert!(legal(c), "counter-example not legal: {c}");
                assert!(agrees(c.colors()), "counter-example disagrees: {c}");
                assert!(!turn_of(c, target), "counter-example is the target: {c}");
            }
            Proof::Undecided => panic!("undecided: {target} {read:?}"),
        }
        proof
    }

    #[test]
    fn the_laws_hold_in_every_whole_cube_orientation() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..20 {
            let c = random_state(Size::Three, &mut rng);
            for r in rotation_permutations(Size::Three) {
                let turned = FaceletCube::from_colors(Size::Three, r.apply(c.colors())).unwrap();
                assert!(legal(&turned));
                // Reading every sticker proves the cube, in any orientation.
                assert_eq!(prove(&turned, &[true; 54]), Proof::Proven);
            }
        }
        assert_eq!(rotation_permutations(Size::Two).len(), 24);
    }

    #[test]
    fn five_faces_prove_a_solved_3x3x3_and_four_do_not() {
        let solved = FaceletCube::solved(Size::Three);
        let near = neighbourhood(&solved);
        for faces in 0u8..64 {
            let proof = check(&solved, &face_mask(Size::Three, faces), &near);
            assert_eq!(
                proof.is_proven(),
                faces.count_ones() >= 5,
                "faces {faces:06b}: {proof:?}"
            );
        }
    }

    #[test]
    fn face_readings_of_scrambled_and_pocket_cubes_agree_with_brute_force() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for size in [Size::Three, Size::Two] {
            let mut targets = vec![FaceletCube::solved(size)];
            targets.push(random_state(size, &mut rng));
            for t in targets {
                let near = neighbourhood(&t);
                let proven: Vec<u8> = (0u8..64)
                    .filter(|&f| check(&t, &face_mask(size, f), &near).is_proven())
                    .collect();
                // Reading everything proves; reading nothing does not.
                assert!(proven.contains(&63) && !proven.contains(&0));
                // Proofs are monotone: more faces never unprove.
                for &f in &proven {
                    for g in 0u8..64 {
                        if g & f == f {
                            assert!(proven.contains(&g), "{f:06b} proves, {g:06b} not");
                        }
                    }
                }
            }
        }
        // A 2x2x2 needs fewer faces than a 3x3x3: three faces around one corner leave that
        // corner's three stickers unread, and the twist law fixes it.
        let pocket = FaceletCube::solved(Size::Two);
        let urf = (1 << Face::U.index()) | (1 << Face::R.index()) | (1 << Face::F.index());
        assert!(prove(&pocket, &face_mask(Size::Two, urf)).is_proven());
    }

    #[test]
    fn random_sticker_sets_agree_with_brute_force() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for size in [Size::Three, Size::Two] {
            let t = random_state(size, &mut rng);
            let near = neighbourhood(&t);
            for _ in 0..40 {
                let keep = rng.gen_range(0.5..1.0);
                let read: Vec<bool> = (0..size.stickers()).map(|_| rng.gen_bool(keep)).collect();
                check(&t, &read, &near);
            }
        }
    }

    #[test]
    fn a_swap_of_two_edges_hides_from_four_faces() {
        // Four faces read (U, F, D, B): the edges of L and R show one sticker each, and the
        // search finds a real cube that differs there.
        let solved = FaceletCube::solved(Size::Three);
        let faces = (1 << Face::U.index())
            | (1 << Face::F.index())
            | (1 << Face::D.index())
            | (1 << Face::B.index());
        let Proof::Counter(c) = prove(&solved, &face_mask(Size::Three, faces)) else {
            panic!("four faces proved a solved cube");
        };
        assert!(legal(&c) && c.colors() != solved.colors());
    }
}
