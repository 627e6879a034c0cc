//! The `misread` fault, shared by both simulators: until the cube's first layer turn, the
//! colour sensor reports two chosen stickers as each other (each one's reading is the other
//! sticker's, with that sticker's own wear and tint), every time they are read. A re-read
//! therefore repeats the misread, as a sensor that mistakes a sticker in one lighting or
//! position keeps mistaking it; once a layer has turned the stickers sit elsewhere and read
//! true. It is what a host's recovery must survive: a first scan that resolves to the wrong
//! cube (or to a doubt whose best guess is wrong), found out only by the check after the
//! solution was executed.
//!
//! The two stickers are facelet indices (`misread=2:20`) or names (`misread=U3:F3`, faces
//! URFDLB, stickers counted from 1 row by row) of the cube as the simulator starts (robot
//! frame); without a value a seeded pair is chosen: two edge or corner stickers of different
//! colours.
//!
//! Level: robot (simulators; uses `cube`). No printing.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::cube::{Face, FaceletCube, Size};

/// Which two stickers a `misread` fault swaps: as given (text, resolved once the cube's
/// size is known) or a seeded pair.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Misread {
    /// `Some((a, b))`: the two stickers as written; `None`: chosen from the seed.
    pub stickers: Option<(String, String)>,
}

impl Misread {
    /// Parses the value of `misread[=A:B]` (`None`: no value).
    pub fn parse(value: Option<&str>) -> Result<Misread, String> {
        let Some(v) = value else {
            return Ok(Misread::default());
        };
        let (a, b) = v
            .split_once(':')
            .ok_or_else(|| format!("misread={v}: expected two stickers A:B"))?;
        let (a, b) = (a.trim(), b.trim());
        // Checked for form now; for range once the size is known.
        for s in [a, b] {
            if sticker_index(s, Size::Three).is_none() && sticker_index(s, Size::Two).is_none() {
                return Err(format!(
                    "misread={v}: {s:?} is not a sticker (an index, or a name such as U3)"
                ));
            }
        }
        if a == b {
            return Err(format!("misread={v}: two different stickers"));
        }
        Ok(Misread {
            stickers: Some((a.to_string(), b.to_string())),
        })
    }

    /// The two facelet indices of `cube` (robot frame at start): as given, or a seeded pair
    /// of non-centre stickers of different colours.
    pub fn pair(&self, cube: &FaceletCube, seed: u64) -> Result<(usize, usize), String> {
        let size = cube.size();
        if let Some((a, b)) = &self.stickers {
            let idx = |s: &str| {
                sticker_index(s, size).ok_or_else(|| {
                    format!(
                        "misread: {s:?} is no sticker of a {size} (0..{}, or U1..B{})",
                        size.stickers(),
                        size.per_face()
                    )
                })
            };
            let (a, b) = (idx(a)?, idx(b)?);
            if a == b {
                return Err(format!("misread: {a} twice"));
            }
            return Ok((a, b));
        }
        let per = size.per_face();
        let centre = |i: usize| size == Size::Three && i % per == 4;
        let colors = cube.colors();
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x4D15_2EAD);
        loop {
            let a = rng.gen_range(0..size.stickers());
            let b = rng.gen_range(0..size.stickers());
            if !centre(a) && !centre(b) && colors[a] != colors[b] {
                return Ok((a, b));
            }
        }
    }
}

/// A facelet index written as a number or a name (`U1`: face letter, then the sticker on
/// it counted from 1 row by row).
pub fn sticker_index(s: &str, size: Size) -> Option<usize> {
    if let Ok(i) = s.parse::<usize>() {
        return (i < size.stickers()).then_some(i);
    }
    let mut chars = s.chars();
    let face = Face::from_letter(chars.next()?.to_ascii_uppercase())?;
    let k: usize = chars.as_str().parse().ok()?;
    (1..=size.per_face())
        .contains(&k)
        .then(|| face.index() * size.per_face() + k - 1)
}

/// The fault as a sensor model applies it: the physical identities of the two stickers,
/// and whether no layer has turned yet.
#[derive(Clone, Debug)]
pub struct MisreadSensor {
    ids: (usize, usize),
    active: bool,
}

impl MisreadSensor {
    /// The fault on stickers `pair` (positions at start), whose physical identities are
    /// `ids[pair.0]` and `ids[pair.1]`.
    pub fn new(pair: (usize, usize), ids: &[usize]) -> MisreadSensor {
        MisreadSensor {
            ids: (ids[pair.0], ids[pair.1]),
            active: true,
        }
    }

    /// The position whose sticker the sensor reports when it looks at `pos` (`ids`: the
    /// physical sticker at each position now).
    pub fn source(&self, pos: usize, ids: &[usize]) -> usize {
        if !self.active {
            return pos;
        }
        let other = match ids.get(pos) {
            Some(&id) if id == self.ids.0 => self.ids.1,
            Some(&id) if id == self.ids.1 => self.ids.0,
            _ => return pos,
        };
        ids.iter().position(|&i| i == other).unwrap_or(pos)
    }

    /// A layer turned: the fault ends. True the first time (for a log line).
    pub fn layer_turned(&mut self) -> bool {
        std::mem::replace(&mut self.active, false)
    }

    pub fn active(&self) -> bool {
        self.active
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stickers_parse_as_indices_or_names_and_pairs_are_seeded() {
        assert_eq!(sticker_index("U1", Size::Three), Some(0));
        assert_eq!(sticker_index("f3", Size::Three), Some(20));
        assert_eq!(sticker_index("B9", Size::Three), Some(53));
        assert_eq!(sticker_index("B9", Size::Two), None);
        assert_eq!(sticker_index("B4", Size::Two), Some(23));
        assert_eq!(sticker_index("54", Size::Three), None);
        assert_eq!(sticker_index("X1", Size::Three), None);
        for bad in ["U1", "U1:U1", "U1:Q2", "U0:F1", "a:b"] {
            assert!(Misread::parse(Some(bad)).is_err(), "{bad}");
        }
        let m = Misread::parse(Some("U3:20")).unwrap();
        let cube = crate::cube::random_state(Size::Three, &mut ChaCha8Rng::seed_from_u64(3));
        assert_eq!(m.pair(&cube, 0), Ok((2, 20)));
        let seeded = Misread::parse(None).unwrap();
        let (a, b) = seeded.pair(&cube, 7).unwrap();
        assert_eq!(seeded.pair(&cube, 7), Ok((a, b)));
        assert!(a % 9 != 4 && b % 9 != 4 && cube.colors()[a] != cube.colors()[b]);
    }

    #[test]
    fn the_two_stickers_read_as_each_other_until_a_layer_turns() {
        let ids: Vec<usize> = (0..54).rev().collect();
        let mut m = MisreadSensor::new((3, 40), &ids);
        assert_eq!(m.source(3, &ids), 40);
        assert_eq!(m.source(40, &ids), 3);
        assert_eq!(m.source(4, &ids), 4);
        // The stickers moved (a whole-cube turn): the fault follows them.
        let mut moved = ids.clone();
        moved.swap(3, 10);
        assert_eq!(m.source(10, &moved), 40);
        assert!(m.layer_turned());
        assert!(!m.layer_turned());
        assert_eq!(m.source(10, &moved), 10);
    }
}
