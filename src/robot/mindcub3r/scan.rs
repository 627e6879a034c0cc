//! The colour-sensor scan of the MindCub3r: which primitives bring each face up, where the
//! sensor reads on the top face, and which facelet of the cube (as it sat before the scan)
//! each reading shows.
//!
//! Level: robot (uses `cube` and [`super::model`]). No printing.

use super::config::SensorSide;
use super::model::{Primitive, SensorPosition};
use crate::cube::{Permutation, Size};

/// The spots on the top face (robot frame) the sensor reads: (centre, edge at table 0°,
/// the corner that will be under it 45° later measured after the next quarter).
fn spots(size: Size, side: SensorSide) -> (Option<usize>, Option<usize>, usize) {
    let n = size.n();
    // Front side: edge U8 (row n-1, middle), corner U7 (row n-1, col 0).
    let (centre, edge) = if n % 2 == 1 {
        (Some(n * n / 2), Some((n - 1) * n + n / 2))
    } else {
        (None, None)
    };
    let corner = (n - 1) * n;
    let q = match side {
        SensorSide::Front => 0,
        SensorSide::Right => 1,
        SensorSide::Back => 2,
        SensorSide::Left => 3,
    };
    let perm = y_power(size, q);
    (
        centre,
        edge.map(|e| perm.0[e] as usize),
        perm.0[corner] as usize,
    )
}

pub(super) fn perm_of(size: Size, p: Primitive) -> Permutation {
    p.as_move()
        .map(|m| m.permutation(size).clone())
        .unwrap_or_else(|| Permutation::identity(size.stickers()))
}

fn y_power(size: Size, q: i64) -> Permutation {
    let mut p = Permutation::identity(size.stickers());
    for _ in 0..q.rem_euclid(4) {
        p = p.then(&perm_of(size, Primitive::Spin(1)));
    }
    p
}

/// One sample of a face: where it is read and which top-face position (robot frame, at
/// the face's start) it shows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Table angle (degrees, + = y) from the face's start.
    pub angle: f64,
    pub kind: SensorPosition,
    /// Index into the calibration's edge/corner lists.
    pub slot: usize,
    /// Facelet index (robot frame at the face's start).
    pub position: usize,
}

/// The samples of one face, in reading order: centre, then one revolution in + direction
/// alternating corner and edge ([Sticker order](crate::robot::mindcub3r#sticker-order));
/// 2x2x2: four corners.
pub fn face_samples(size: Size, side: SensorSide) -> Vec<Sample> {
    ring_samples(size, side, 1)
}

/// The samples of one face with the revolution in direction `dir` (+1: `y`, −1: `y'`):
/// centre, then corner and edge alternating at table angles `dir`·45°, `dir`·90°, …
/// Calibration slots follow the table angle modulo 360° (a sample at −90° uses the
/// slot of +270°), so each slot stays with its place on the tray.
pub fn ring_samples(size: Size, side: SensorSide, dir: i8) -> Vec<Sample> {
    let (centre, edge, corner) = spots(size, side);
    let d = if dir < 0 { -1i64 } else { 1 };
    let mut out = Vec::new();
    if let Some(c) = centre {
        out.push(Sample {
            angle: 0.0,
            kind: SensorPosition::Centre,
            slot: 0,
            position: c,
        });
    }
    for k in 0..4i64 {
        // Turning by +45°: the corner y brings to the corner spot arrives half-way; by
        // −45°: the one already at the corner spot leaves it half-way.
        let (quarters, corner_at) = if d > 0 { (k + 1, k) } else { (-k, 3 - k) };
        out.push(Sample {
            angle: (d * (45 + 90 * k)) as f64,
            kind: SensorPosition::Corner,
            slot: corner_at as usize,
            position: y_power(size, quarters).0[corner] as usize,
        });
        if let Some(e) = edge {
            // d·90°(k+1): the edge that y^(d(k+1)) brings to the edge spot.
            let q = d * (k + 1);
            out.push(Sample {
                angle: (q * 90) as f64,
                kind: SensorPosition::Edge,
                slot: (q - 1).rem_euclid(4) as usize,
                position: y_power(size, q).0[e] as usize,
            });
        }
    }
    out
}

/// The scan sequence: primitives before each face's reading
/// ([Scan order](crate::robot::mindcub3r#scan-order)).
pub fn scan_steps() -> [Vec<Primitive>; 6] {
    use Primitive::*;
    [
        vec![],
        vec![Tilt],
        vec![Tilt],
        vec![Spin(-1), Tilt],
        vec![Spin(1), Tilt],
        vec![Tilt],
    ]
}

/// For every sample of the scan: (face step, sample, facelet index in the cube's frame at
/// the scan start). Derived from the primitives' permutations in `model.rs`.
pub fn scan_map(size: Size, side: SensorSide) -> Vec<(usize, Sample, usize)> {
    scan_map_turning(size, side, &[1; 6])
}

/// [`scan_map`] with each face's revolution in its own direction (`dirs[step]`).
pub fn scan_map_turning(
    size: Size,
    side: SensorSide,
    dirs: &[i8; 6],
) -> Vec<(usize, Sample, usize)> {
    let mut frame = Permutation::identity(size.stickers());
    let mut out = Vec::new();
    for (step, prims) in scan_steps().iter().enumerate() {
        for &p in prims {
            frame = frame.then(&perm_of(size, p));
        }
        for s in ring_samples(size, side, dirs[step]) {
            out.push((step, s, frame.0[s.position] as usize));
        }
    }
    out
}

/// The turn each face's revolution may end with, for free: the spin the next step begins
/// with (in [`scan_steps`]), done by running the revolution a quarter further in that
/// direction. (Direction of each face's revolution, its extra quarters.)
pub fn revolution_turns() -> [(i8, i8); 6] {
    let steps = scan_steps();
    std::array::from_fn(|i| match steps.get(i + 1).and_then(|s| s.first()) {
        Some(&Primitive::Spin(k)) => (k.signum(), k),
        _ => (1, 0),
    })
}

/// One face of a partial scan: the primitives that bring it to the top, and which face of
/// the cube as it sat when the reading began it is (URFDLB index).
#[derive(Clone, Debug, PartialEq)]
pub struct FaceRead {
    pub before: Vec<Primitive>,
    pub face: usize,
}

/// For every set of faces (bit `f`: face `f` of the cube as it sits now, URFDLB), the
/// cheapest order to read exactly those faces and its estimated seconds (`None` for the
/// empty set). One shortest-path search over (orientation, faces read so far) with the
/// whole-cube primitives priced by `timings` and a face's reading priced as one revolution
/// of the turntable with the sensor arm in and out; a spin after a reading costs what a
/// spin costs, as the face programs end their revolution a quarter further for it.
pub fn face_read_plans(
    size: Size,
    timings: &super::model::Timings,
) -> Vec<Option<(Vec<FaceRead>, f64)>> {
    use std::collections::{BinaryHeap, HashMap};
    let per = size.per_face();
    let moves = [
        (Primitive::Tilt, timings.tilt),
        (Primitive::Spin(1), timings.spin_quarter),
        (Primitive::Spin(-1), timings.spin_quarter),
        (Primitive::Spin(2), timings.spin_half),
    ];
    let read = 4.0 * timings.spin_quarter + 2.0 * timings.sensor_move + timings.read;
    // Orientation key: the faces (of the start frame) now at robot U and F.
    type Key = (u8, u8, u8);
    let key =
        |f: &Permutation, mask: u8| -> Key { (f.0[0] / per as u8, f.0[2 * per] / per as u8, mask) };
    #[derive(PartialEq)]
    struct Item(f64, Permutation, u8);
    impl Eq for Item {}
    impl PartialOrd for Item {
        fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
            Some(self.cmp(o))
        }
    }
    impl Ord for Item {
        fn cmp(&self, o: &Self) -> std::cmp::Ordering {
            o.0.total_cmp(&self.0)
        }
    }
    // Best cost per state, and how it was reached.
    // How a state was reached: the state before and the primitive (`None`: a reading).
    type Via = Option<(Key, Option<Primitive>)>;
    let mut best: HashMap<Key, (f64, Via)> = HashMap::new();
    let start = Permutation::identity(size.stickers());
    best.insert(key(&start, 0), (0.0, None));
    let mut heap = BinaryHeap::from([Item(0.0, start, 0)]);
    while let Some(Item(cost, frame, mask)) = heap.pop() {
        let here = key(&frame, mask);
        if best.get(&here).is_some_and(|b| b.0 < cost) {
            continue;
        }
        let top = (frame.0[0] as usize / per) as u8;
        let mut next: Vec<(Permutation, u8, f64, Option<Primitive>)> = moves
            .iter()
            .map(|&(p, c)| (frame.then(&perm_of(size, p)), mask, c, Some(p)))
            .collect();
        if mask & (1 << top) == 0 {
            next.push((frame.clone(), mask | 1 << top, read, None));
        }
        for (f, m, c, how) in next {
            let k = key(&f, m);
            let total = cost + c;
            if best.get(&k).is_none_or(|b| total < b.0 - 1e-9) {
                best.insert(k, (total, Some((here, how))));
                heap.push(Item(total, f, m));
            }
        }
    }
    (0u8..64)
        .map(|mask| {
            if mask == 0 {
                return None;
            }
            let (&end, &(cost, _)) = best
                .iter()
                .filter(|(k, _)| k.2 == mask)
                .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0))?;
            // Walk back to the start, then forward: primitives gather until a read takes
            // them (the face read is the one on top there).
            let mut events: Vec<(Option<Primitive>, usize)> = Vec::new();
            let mut at = end;
            while let Some((_, Some((prev, how)))) = best.get(&at) {
                events.push((*how, at.0 as usize));
                at = *prev;
            }
            let mut order: Vec<FaceRead> = Vec::new();
            let mut before = Vec::new();
            for (how, face) in events.into_iter().rev() {
                match how {
                    Some(p) => before.push(p),
                    None => order.push(FaceRead {
                        before: std::mem::take(&mut before),
                        face,
                    }),
                }
            }
            Some((order, cost))
        })
        .collect()
}

/// What a scan progress callback receives.
#[derive(Clone, Copy, Debug)]
pub struct ScanProgress<'a> {
    pub done: usize,
    pub total: usize,
    pub face_step: usize,
    /// What this step read: facelet index (frame of the scan's start) and RGB-RAW reading,
    /// as each face's readings arrive (a live view places them on the net).
    pub readings: &'a [(usize, [f64; 3])],
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::Face;

    #[test]
    fn face_read_plans_bring_up_each_face_once_and_cost_no_more_than_the_scan() {
        let t = super::super::model::Timings::default();
        for size in [Size::Three, Size::Two] {
            let plans = face_read_plans(size, &t);
            assert!(plans[0].is_none());
            for mask in 1u8..64 {
                let (steps, cost) = plans[mask as usize].clone().unwrap();
                let mut frame = Permutation::identity(size.stickers());
                let mut got = 0u8;
                for s in &steps {
                    for &p in &s.before {
                        frame = frame.then(&perm_of(size, p));
                    }
                    // The face named is the one on top.
                    assert_eq!(frame.0[0] as usize / size.per_face(), s.face);
                    assert_eq!(got & 1 << s.face, 0, "face read twice");
                    got |= 1 << s.face;
                }
                assert_eq!(got, mask);
                assert!(cost > 0.0);
            }
            // Reading U needs no move; the scan's own order is one way to read all six.
            assert!(plans[1].as_ref().unwrap().0[0].before.is_empty());
            let moves: f64 = scan_steps()
                .iter()
                .flatten()
                .map(|p| match p {
                    Primitive::Tilt => t.tilt,
                    _ => t.spin_quarter,
                })
                .sum();
            let all = plans[63].as_ref().unwrap().1;
            let one = plans[1].as_ref().unwrap().1;
            assert!(
                all <= moves + 6.0 * one + 1e-9,
                "{all} > {moves} + 6 × {one}"
            );
        }
    }

    #[test]
    fn face_u_is_read_in_the_documented_order() {
        // Sticker order (module docs): U centre 5, then 9 6 3 2 1 4 7 8 (1-based within the face).
        let s = face_samples(Size::Three, SensorSide::Front);
        let got: Vec<usize> = s.iter().map(|s| s.position + 1).collect();
        assert_eq!(got, vec![5, 9, 6, 3, 2, 1, 4, 7, 8]);
    }

    #[test]
    fn scan_map_covers_every_facelet_once_and_matches_the_demo_table() {
        for size in [Size::Three, Size::Two] {
            let map = scan_map(size, SensorSide::Front);
            let mut seen = vec![0; size.stickers()];
            for (_, _, i) in &map {
                seen[*i] += 1;
            }
            assert!(seen.iter().all(|&n| n == 1), "{size}: {seen:?}");
        }
        // Faces on top in scan order: U F D L B R ("Scan order" in the module docs); centres
        // land on them.
        let map = scan_map(Size::Three, SensorSide::Front);
        let centres: Vec<char> = map
            .iter()
            .filter(|(_, s, _)| s.kind == SensorPosition::Centre)
            .map(|(_, _, i)| Face::ALL[i / 9].letter())
            .collect();
        assert_eq!(centres, vec!['U', 'F', 'D', 'L', 'B', 'R']);
        // The ev3dev MindCub3r demo's scan_order table ("Scan map" in the module docs;
        // rubiks-color-resolver numbering: faces
        // U L F R B D, 1..54), derived here from the model's permutations alone.
        let demo: [[usize; 9]; 6] = [
            [5, 9, 6, 3, 2, 1, 4, 7, 8],
            [23, 27, 24, 21, 20, 19, 22, 25, 26],
            [50, 54, 51, 48, 47, 46, 49, 52, 53],
            [14, 10, 13, 16, 17, 18, 15, 12, 11],
            [41, 43, 44, 45, 42, 39, 38, 37, 40],
            [32, 34, 35, 36, 33, 30, 29, 28, 31],
        ];
        // Resolver face order U L F R B D → our URFDLB face index.
        let ours = [0usize, 4, 2, 1, 5, 3];
        for (step, row) in demo.iter().enumerate() {
            let want: Vec<usize> = row
                .iter()
                .map(|&n| ours[(n - 1) / 9] * 9 + (n - 1) % 9)
                .collect();
            let got: Vec<usize> = map
                .iter()
                .filter(|(st, _, _)| *st == step)
                .map(|(_, _, i)| *i)
                .collect();
            assert_eq!(got, want, "face step {step}");
        }
    }
}
