//! Scanning within a job: the robot's scan (colour sensor or camera, whichever the
//! [`RunRobot`] wraps), resolved to a legal cube, re-reading the stickers the resolver
//! doubts until it is sure or the re-scans run out.
//!
//! A doubt that a re-read leaves over more stickers than two pieces hold
//! ([`FRAME_DOUBT`]) is not a few worn or badly lit stickers: the scan's frame is likely
//! wrong (a tilt that did not roll the cube, a cube that slipped in the tray), so that
//! re-reading stickers where the robot believes them to be reads the wrong ones again.
//! The next round is then a whole new scan, resolved on its own readings and given re-reads
//! of its own. So is the round after a scan that no legal cube fits at all: a face read
//! twice leaves nothing to re-read. At most [`WHOLE_SCANS`] scans are made again, so a cube
//! that cannot be read ends in bounded time.
//!
//! A doubt where the colour profile and the readings alone point at different cubes is
//! read again once at most, and not at all when it covers more than [`FRAME_DOUBT`]
//! stickers: readings that are steady disagree with the profile the same way each time (a
//! profile of another cube, or of another light), and only the user can change that.
//! Every round of re-reading is told as an event ([`RunEvent::Rereading`]), so a wait of
//! minutes on a robot is never silent.
//!
//! Level: job (uses `color::resolve` and the robot). No printing: progress goes to the
//! [`RunEvent`] callback.

use crate::color::raw::{RawScan, Scale};
use crate::color::resolve::{
    other_size, profile_fits_scale, reading_words, resolve, ResolveError, ResolveOptions,
};
use crate::cube::Size;
use crate::robot::mindcub3r::model::Orientation;

use super::colours::Resolved;
use super::error::RunError;
use super::kind::{RobotKind, ScannerKind};
use super::report::RunEvent;
use super::robot::RunRobot;

/// More stickers in doubt than this after a re-read: scan the whole cube again rather than
/// re-read them (two pieces, a corner and an edge or two corners, hold at most 6).
pub const FRAME_DOUBT: usize = 6;

/// Whole scans made again at most, in one scan-and-resolve (each with its own re-reads).
pub const WHOLE_SCANS: usize = 2;

/// A scan, resolved, with what it took.
#[derive(Clone, Debug)]
pub struct Scanned {
    pub resolved: Resolved,
    /// The cube's orientation after the scan, relative to where it sat when the scan began.
    pub orientation: Orientation,
    /// Rounds of re-reading.
    pub rescans: usize,
    /// Mean raw reading per symbol (the scan's own scale), to classify later re-reads of
    /// a few stickers; and that scale.
    pub raw_colors: Vec<(char, [f64; 3])>,
    pub scale: Option<Scale>,
}

/// Mean raw reading of each colour of a resolved scan.
fn raw_means(raw: &RawScan, resolved: &Resolved) -> Vec<(char, [f64; 3])> {
    let symbols = resolved.cube.symbols();
    crate::cube::Face::ALL
        .iter()
        .filter_map(|&f| {
            let v: Vec<&[f64; 3]> = raw
                .facelets
                .iter()
                .zip(resolved.cube.colors())
                .filter(|(_, c)| **c == f)
                .map(|(r, _)| r)
                .collect();
            let n = v.len() as f64;
            (n > 0.0).then(|| {
                (
                    symbols[f.index()],
                    std::array::from_fn(|k| v.iter().map(|r| r[k]).sum::<f64>() / n),
                )
            })
        })
        .collect()
}

/// Refuses a colour profile learned on another scale than `scale`, which `robot`'s
/// `scanner` reads (before anything moves).
pub fn check_profile(
    resolve_opts: &ResolveOptions,
    scale: Scale,
    robot: RobotKind,
    scanner: ScannerKind,
) -> Result<(), RunError> {
    match profile_fits_scale(resolve_opts.profile.as_ref(), scale) {
        Err(ResolveError::ProfileScale { profile, scan }) => Err(RunError::ProfileScale {
            profile,
            scale: scan,
            robot,
            scanner,
        }),
        _ => Ok(()),
    }
}

/// Scans and resolves, re-reading doubtful stickers up to `max_rescans` times per whole
/// scan, and scanning the whole cube again (at most [`WHOLE_SCANS`] times) when its frame
/// looks lost.
pub fn scan_and_resolve(
    robot: &mut dyn RunRobot,
    resolve_opts: &ResolveOptions,
    size: Size,
    max_rescans: usize,
    events: &mut dyn FnMut(RunEvent),
) -> Result<Scanned, RunError> {
    scan_and_resolve_previewed(
        robot,
        resolve_opts,
        size,
        max_rescans,
        events,
        &mut |_, _| {},
    )
}

/// [`scan_and_resolve`], handing `preview` the readings before the last face (see
/// [`RunRobot::scan_with_preview`]).
pub fn scan_and_resolve_previewed(
    robot: &mut dyn RunRobot,
    resolve_opts: &ResolveOptions,
    size: Size,
    max_rescans: usize,
    events: &mut dyn FnMut(RunEvent),
    preview: &mut dyn FnMut(&RawScan, Orientation),
) -> Result<Scanned, RunError> {
    let (kind, scanner) = (RobotKind::from_journal(robot.kind()), robot.scanner());
    if let Some(scale) = robot.scan_scale() {
        check_profile(resolve_opts, scale, kind, scanner)?;
    }
    let scale = robot.scan_scale();
    let (mut raw, mut orientation) = whole_scan(robot, size, scale, events, preview)?;
    check_size(robot, &raw)?;
    // Rounds after the first scan (reported), re-reads since the last whole scan (each
    // scan has `max_rescans` of its own), and whole scans made again.
    let (mut rescans, mut rereads, mut wholes) = (0, 0, 0);
    // Every reading of each sticker, averaged.
    let mut reads = first_reads(&raw);
    loop {
        let resolved = resolve(&raw, resolve_opts);
        match &resolved {
            Ok(r) => events(RunEvent::resolution(r)),
            Err(ResolveError::Ambiguous { best, .. }) => events(RunEvent::resolution(best)),
            _ => {}
        }
        let spent = rereads >= max_rescans;
        // The profile against steady readings: re-reading does not change that (a best
        // effort goes on with its guess as a doubt does stop).
        let profile_stands = |disagrees: bool, doubtful: usize| {
            disagrees && (rereads >= 1 || doubtful > FRAME_DOUBT)
        };
        // The stickers to look at again and whether the doubt may be a lost frame (not
        // when the profile is what disagrees with the readings), or `None` for a whole
        // new scan.
        let again: Option<(Vec<usize>, bool)> = match resolved {
            Ok(r)
                if r.doubtful.is_empty()
                    || spent
                    || profile_stands(r.profile_disagrees, r.doubtful.len()) =>
            {
                let resolved = Resolved::from(&r);
                events(RunEvent::Scanned {
                    confident: resolved.doubt.confident,
                    doubtful: resolved.doubt.doubtful.clone(),
                    overruled: resolved.doubt.overruled.clone(),
                    rescans,
                    state: resolved.cube.to_string(),
                });
                return Ok(Scanned {
                    raw_colors: raw_means(&raw, &resolved),
                    scale: raw.scale,
                    resolved,
                    orientation,
                    rescans,
                });
            }
            Ok(r) => Some((r.doubtful, !r.profile_disagrees)),
            Err(ResolveError::Ambiguous { doubtful, best }) => {
                if spent
                    || doubtful.is_empty()
                    || profile_stands(best.profile_disagrees, doubtful.len())
                {
                    return Err(RunError::Ambiguous {
                        doubtful,
                        rescans,
                        best: best.cube.to_string(),
                        margin: best.cube_margin,
                        profile_disagrees: best.profile_disagrees,
                        contradiction: best.contradiction.clone(),
                        as_read: best.as_read().to_string(),
                    });
                }
                Some((doubtful, !best.profile_disagrees))
            }
            Err(ResolveError::ProfileScale { profile, scan }) => {
                return Err(RunError::ProfileScale {
                    profile,
                    scale: scan,
                    robot: kind,
                    scanner,
                });
            }
            // A covered sensor or an empty tray (the resolver's own check), said at once
            // rather than after re-reads.
            Err(ResolveError::NoCube(e)) => return Err(RunError::NoCube(e.to_string())),
            // No legal cube at all, and nothing names a sticker: the readings hold a
            // face twice or none (a tilt that did not roll the cube), so re-reading where
            // the robot believes the stickers are would read the same wrong ones.
            Err(e) => {
                if max_rescans == 0 || wholes >= WHOLE_SCANS {
                    return Err(RunError::Unresolved(e));
                }
                None
            }
        };
        // A whole new scan when nothing names a sticker, or when a doubt a re-read left
        // wide says the frame is lost.
        let whole = !matches!(&again, Some((d, frame))
            if !frame || rereads == 0 || d.len() <= FRAME_DOUBT || wholes >= WHOLE_SCANS);
        let stickers = again.map(|(d, _)| d).unwrap_or_default();
        events(RunEvent::Rereading {
            rescan: rescans + 1,
            stickers: stickers.clone(),
            whole,
            size: size.n(),
        });
        match whole {
            false => {
                reread(robot, &mut raw, &mut reads, &stickers, events)?;
                rereads += 1;
            }
            true => {
                (raw, orientation) = whole_scan(robot, size, scale, events, preview)?;
                reads = first_reads(&raw);
                (rereads, wholes) = (0, wholes + 1);
            }
        }
        rescans += 1;
    }
}

/// The robot's scan of the whole cube, its steps told as events.
fn whole_scan(
    robot: &mut dyn RunRobot,
    size: Size,
    scale: Option<Scale>,
    events: &mut dyn FnMut(RunEvent),
    preview: &mut dyn FnMut(&RawScan, Orientation),
) -> Result<(RawScan, Orientation), RunError> {
    robot.scan_with_preview(
        size,
        &mut |step| {
            if let Some(frame) = step.frame {
                events(frame.clone());
            }
            if !step.readings.is_empty() {
                events(RunEvent::readings(
                    scale,
                    false,
                    step.readings.iter().copied(),
                ));
            }
            events(RunEvent::ScanProgress {
                done: step.done,
                total: step.total,
            })
        },
        preview,
    )
}

/// Refuses a scan whose sensor saw a cube of another size than it scanned for (see
/// [`other_size`]): a 2x2x2's scan of a 3x3x3 reads only its corners, and would solve and
/// "prove" them alone. A 2x2x2's scan costs one more reading, at the top face's centre.
fn check_size(robot: &mut dyn RunRobot, raw: &RawScan) -> Result<(), RunError> {
    if robot.scanner() != ScannerKind::Sensor {
        return Ok(());
    }
    let top_centre = match raw.cube_size() {
        Size::Two => robot.read_top_centre()?,
        Size::Three => None,
    };
    size_seen(raw, top_centre)
}

/// [`RunError::WrongSize`] when a sensor's scan (and, of a 2x2x2's, `top_centre`, a reading
/// at the top face's centre) shows a cube of another size (see [`other_size`]).
pub fn size_seen(raw: &RawScan, top_centre: Option<[f64; 3]>) -> Result<(), RunError> {
    let size = raw.cube_size();
    match other_size(raw, top_centre) {
        Some(holds) => Err(RunError::WrongSize {
            holds: holds.n(),
            wanted: size,
            evidence: match holds {
                Size::Three => format!(
                    "the top face's centre reads a sticker ({}), where a 2x2x2's four corners meet",
                    reading_words(top_centre.unwrap_or_default())
                ),
                Size::Two => {
                    "all six face centres read dark, as the gaps between a 2x2x2's pieces do"
                        .to_string()
                }
            },
        }),
        None => Ok(()),
    }
}

/// Each sticker's readings so far: a new scan's own.
fn first_reads(raw: &RawScan) -> Vec<Vec<[f64; 3]>> {
    raw.facelets.iter().map(|&r| vec![r]).collect()
}

/// Reads `stickers` again and stores, for each, the mean of all its readings so far.
fn reread(
    robot: &mut dyn RunRobot,
    raw: &mut RawScan,
    reads: &mut [Vec<[f64; 3]>],
    stickers: &[usize],
    events: &mut dyn FnMut(RunEvent),
) -> Result<(), RunError> {
    let fresh = robot.rescan(stickers)?;
    events(RunEvent::readings(
        raw.scale,
        true,
        stickers.iter().copied().zip(fresh.iter().copied()),
    ));
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
