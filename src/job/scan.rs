//! Scanning within a job: the robot's scan (colour sensor or camera, whichever the
//! [`RunRobot`] wraps), resolved to a legal cube, re-reading the stickers the resolver
//! doubts until it is sure or the re-scans run out; and the colour bookkeeping that lets two
//! scans (or a saved state and a scan) be compared by their measured colours rather than by
//! symbol names.
//!
//! Level: job (uses `color::resolve` and the robot). No printing: progress goes to the
//! [`RunEvent`] callback.

use crate::color::raw::RawScan;
use crate::color::resolve::{resolve, Resolution, ResolveError, ResolveOptions};
use crate::cube::{Face, FaceletCube, Size};
use crate::robot::mindcub3r::model::Orientation;

use super::error::RunError;
use super::report::RunEvent;
use super::robot::RunRobot;

/// A resolved scan as the job needs it.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub cube: FaceletCube,
    /// Facelet indices in doubt.
    pub doubtful: Vec<usize>,
    pub confident: bool,
    /// Lab value per sticker (to match colours between scans).
    pub labs: Vec<[f64; 3]>,
}

impl From<&Resolution> for Resolved {
    fn from(r: &Resolution) -> Resolved {
        Resolved {
            cube: r.cube.clone(),
            doubtful: r.doubtful.clone(),
            confident: r.confident,
            labs: r.stickers.iter().map(|s| s.lab).collect(),
        }
    }
}

/// A scan, resolved, with what it took.
#[derive(Clone, Debug)]
pub struct Scanned {
    pub resolved: Resolved,
    /// The cube's orientation after the scan, relative to where it sat when the scan began.
    pub orientation: Orientation,
    /// Rounds of re-reading.
    pub rescans: usize,
}

/// Scans and resolves, re-reading doubtful stickers up to `max_rescans` times.
pub fn scan_and_resolve(
    robot: &mut dyn RunRobot,
    resolve_opts: &ResolveOptions,
    size: Size,
    max_rescans: usize,
    events: &mut dyn FnMut(RunEvent),
) -> Result<Scanned, RunError> {
    let (mut raw, orientation) = robot.scan(size, &mut |done, total| {
        events(RunEvent::ScanProgress { done, total })
    })?;
    let mut rescans = 0;
    // Every reading of each sticker, averaged.
    let mut reads: Vec<Vec<[f64; 3]>> = raw.facelets.iter().map(|&r| vec![r]).collect();
    loop {
        match resolve(&raw, resolve_opts) {
            Ok(r) if r.doubtful.is_empty() || rescans >= max_rescans => {
                let resolved = Resolved::from(&r);
                events(RunEvent::Scanned {
                    confident: resolved.confident,
                    doubtful: resolved.doubtful.clone(),
                    rescans,
                    state: resolved.cube.to_string(),
                });
                return Ok(Scanned {
                    resolved,
                    orientation,
                    rescans,
                });
            }
            Ok(r) => {
                reread(robot, &mut raw, &mut reads, &r.doubtful)?;
            }
            Err(ResolveError::Ambiguous { doubtful, .. }) => {
                if rescans >= max_rescans || doubtful.is_empty() {
                    return Err(RunError::Ambiguous { doubtful, rescans });
                }
                reread(robot, &mut raw, &mut reads, &doubtful)?;
            }
            Err(e) => {
                if rescans >= max_rescans {
                    return Err(RunError::Unresolved(e));
                }
                // Nothing names a sticker: read the whole cube's stickers again.
                let all: Vec<usize> = (0..raw.facelets.len()).collect();
                reread(robot, &mut raw, &mut reads, &all)?;
            }
        }
        rescans += 1;
    }
}

/// Reads `stickers` again and stores, for each, the mean of all its readings so far.
fn reread(
    robot: &mut dyn RunRobot,
    raw: &mut RawScan,
    reads: &mut [Vec<[f64; 3]>],
    stickers: &[usize],
) -> Result<(), RunError> {
    let fresh = robot.rescan(stickers)?;
    for (&i, v) in stickers.iter().zip(fresh) {
        if let Some(list) = reads.get_mut(i) {
            list.push(v);
            let n = list.len() as f64;
            raw.facelets[i] = std::array::from_fn(|k| list.iter().map(|r| r[k]).sum::<f64>() / n);
            // A re-read's own error is not known: the resolver's device model applies.
            raw.sigma = None;
        }
    }
    Ok(())
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
