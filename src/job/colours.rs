//! A resolved scan as the job keeps it, and the colour bookkeeping that lets two scans (or a
//! saved state and a scan) be compared by their measured colours rather than by symbol
//! names: the mean Lab value of each colour, and the matching of one scan's colours to
//! another's.
//!
//! Level: job (uses `color::resolve` and `cube` only; the rest of `job` builds on it). No
//! printing.

use crate::color::resolve::Resolution;
use crate::cube::{Face, FaceletCube};

/// A resolved scan as the job needs it.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub cube: FaceletCube,
    /// How sure the resolver was of it.
    pub doubt: ScanDoubt,
    /// Lab value per sticker (to match colours between scans).
    pub labs: Vec<[f64; 3]>,
}

/// How sure a scan's resolution was: whether of every sticker, the stickers left in doubt
/// (facelet indices of the cube as the scan began), and the rule of real cubes the cube as
/// read breaks when clear readings make one (a cube put together wrong:
/// [`crate::color::resolve::Resolution::contradiction`]). Carried as it is from the
/// resolution to the scan's place and the check's sight.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScanDoubt {
    pub confident: bool,
    pub doubtful: Vec<usize>,
    pub contradiction: Option<String>,
    /// Stickers the cube's rules gave another colour than their clear readings
    /// ([`crate::color::resolve::Resolution::overruled`]).
    pub overruled: Vec<usize>,
}

impl From<&Resolution> for Resolved {
    fn from(r: &Resolution) -> Resolved {
        Resolved {
            cube: r.cube.clone(),
            doubt: ScanDoubt {
                confident: r.confident,
                doubtful: r.doubtful.clone(),
                contradiction: r.contradiction.clone(),
                overruled: r.overruled.clone(),
            },
            labs: r.stickers.iter().map(|s| s.lab).collect(),
        }
    }
}

/// Mean Lab per symbol of a resolved scan.
pub fn color_centroids(r: &Resolved) -> Vec<(char, [f64; 3])> {
    let symbols = r.cube.symbols();
    let mut out = Vec::new();
    for f in Face::ALL {
        let mut sum = [0.0; 3];
        let mut n = 0.0;
        for (i, &c) in r.cube.colors().iter().enumerate() {
            if c == f {
                if let Some(l) = r.labs.get(i) {
                    for k in 0..3 {
                        sum[k] += l[k];
                    }
                    n += 1.0;
                }
            }
        }
        if n > 0.0 {
            out.push((symbols[f.index()], sum.map(|v| v / n)));
        }
    }
    out
}

/// The assignment of `from` symbols to `to` symbols with the least total Lab distance
/// (6! permutations).
pub fn match_colors(
    from: &[(char, [f64; 3])],
    to: &[(char, [f64; 3])],
) -> Option<Vec<(char, char)>> {
    if from.len() != 6 || to.len() != 6 {
        return None;
    }
    let d = |a: &[f64; 3], b: &[f64; 3]| {
        // Lightness matters less than hue between two lights.
        let dl = 0.5 * (a[0] - b[0]);
        (dl * dl + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
    };
    let mut best: Option<(f64, Vec<usize>)> = None;
    let mut perm: Vec<usize> = (0..6).collect();
    permute(&mut perm, 0, &mut |p| {
        let cost: f64 = (0..6).map(|i| d(&from[i].1, &to[p[i]].1)).sum();
        if best.as_ref().is_none_or(|(c, _)| cost < *c) {
            best = Some((cost, p.to_vec()));
        }
    });
    best.map(|(_, p)| (0..6).map(|i| (from[i].0, to[p[i]].0)).collect())
}

fn permute(v: &mut Vec<usize>, k: usize, f: &mut dyn FnMut(&[usize])) {
    if k == v.len() {
        f(v);
        return;
    }
    for i in k..v.len() {
        v.swap(k, i);
        permute(v, k + 1, f);
        v.swap(k, i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_matching_finds_the_permutation() {
        let from = vec![
            ('U', [90.0, 0.0, 0.0]),
            ('R', [50.0, 60.0, 40.0]),
            ('F', [60.0, -50.0, 40.0]),
            ('D', [90.0, -5.0, 80.0]),
            ('L', [65.0, 40.0, 70.0]),
            ('B', [35.0, 10.0, -50.0]),
        ];
        let to: Vec<(char, [f64; 3])> = vec![
            ('w', [85.0, 2.0, 3.0]),
            ('b', [30.0, 12.0, -45.0]),
            ('o', [60.0, 45.0, 65.0]),
            ('y', [88.0, -3.0, 75.0]),
            ('r', [45.0, 55.0, 35.0]),
            ('g', [55.0, -45.0, 35.0]),
        ];
        let m = match_colors(&from, &to).unwrap();
        assert_eq!(
            m,
            vec![
                ('U', 'w'),
                ('R', 'r'),
                ('F', 'g'),
                ('D', 'y'),
                ('L', 'o'),
                ('B', 'b')
            ]
        );
    }
}
