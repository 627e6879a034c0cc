//! Sticker detection and sampling in one face image (OpenCV), and six faces to a
//! [`RawScan`].
//!
//! Public entry points: [`read_face`] / [`read_face_with`] (one image → [`FaceReading`],
//! stickers in image row-major order) and [`scan_faces`] / [`scan_faces_with`] (six images
//! in URFDLB order → [`RawScan`] in facelet order, using each face's orientation from the
//! [`Rig`]). The method is described in the [`crate::scan`] module docs.
//!
//! Level: part of `scan` (feature `vision`); depends on `cube`, `color::raw` and the scan
//! geometry, grid, rig and sampling. Must not depend on anything above `scan`.

use opencv::core::{self, Mat, Point, Point2f, Vec3b, Vector};
use opencv::imgproc;
use opencv::prelude::*;

use super::geom::{cell_quad, map_quad, shrink_quad, Homography, Pt, Quad};
use super::grid::{fit_grid, fold_angle, min_support, Candidate, GridFit, OBLONG};
use super::image::RgbImage;
use super::rig::{Rig, RigFace, DEFAULT_SAMPLE_FILL};
use super::sample::{sample_sticker, Sample};
use super::VisionError;
use crate::color::raw::{RawScan, Scale};
use crate::cube::{Face, Size};

/// Share of a strip (the visible part of a sticker partly under an arm) that is sampled:
/// well inside both its true edge and the blurred edge of the arm.
const STRIP_SAMPLE_FILL: f64 = 0.6;
/// Largest difference of channel shares (r, g, b over their sum) between two readings
/// taken to be the same surface under different light.
const SAME_SURFACE_SHARE: f64 = 0.03;

/// Detection runs on a copy reduced by the smallest integer factor that brings the long
/// side to at most this many pixels.
pub const WORK_SIZE: usize = 480;

/// Options for reading a face.
#[derive(Clone, Debug)]
pub struct ReadOptions {
    /// Detect even when the rig stores sticker regions.
    pub force_detect: bool,
    /// Share of a sticker's side that is sampled (centred).
    pub sample_fill: f64,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            force_detect: false,
            sample_fill: DEFAULT_SAMPLE_FILL,
        }
    }
}

/// One sticker as read.
#[derive(Clone, Debug, PartialEq)]
pub struct StickerReading {
    /// The sticker's outline in image pixels.
    pub quad: Quad,
    /// The region that was sampled.
    pub sampled: Quad,
    /// Mean colour of the sampled region after trimming (8-bit RGB scale).
    pub rgb: [f64; 3],
    /// Mean distance of the kept pixels from `rgb` (low = a clean, uniform sticker).
    pub spread: f64,
    /// When the sampled centre is a saturated plateau: the colour rebuilt from the sticker's
    /// unsaturated pixels (`scan::sample` docs), the second opinion [`unclipped_scan`] uses.
    pub unclipped: Option<Sample>,
    /// Standard error of `rgb` per channel (8-bit counts), from the pixels averaged.
    pub sigma: [f64; 3],
    /// Whether a detected region supported this sticker (false: placed from the grid, or
    /// taken from the rig).
    pub detected: bool,
}

/// One face as read: `n*n` stickers in image row-major order.
#[derive(Clone, Debug)]
pub struct FaceReading {
    pub n: usize,
    pub stickers: Vec<StickerReading>,
    /// Grid coordinates → image pixels (`None` in fixed-rig mode).
    pub grid: Option<Homography>,
    /// Candidate regions found (image pixels), for pictures and diagnostics.
    pub candidates: Vec<Quad>,
    /// Whether the regions came from the rig rather than detection.
    pub from_rig: bool,
}

/// Reads one face with default options (rig regions used when present).
pub fn read_face(
    img: &RgbImage,
    n: usize,
    rig: Option<&RigFace>,
) -> Result<FaceReading, VisionError> {
    read_face_with(img, n, rig, &ReadOptions::default())
}

/// Reads one face: the rig's stored regions (unless `force_detect`), else detection.
pub fn read_face_with(
    img: &RgbImage,
    n: usize,
    rig: Option<&RigFace>,
    opts: &ReadOptions,
) -> Result<FaceReading, VisionError> {
    if img.is_empty() || img.data.len() != img.width * img.height * 3 {
        return Err(VisionError::Other(format!(
            "an image of {}x{} with {} bytes is not an RGB frame",
            img.width,
            img.height,
            img.data.len()
        )));
    }
    if let Some(regions) = rig
        .filter(|_| !opts.force_detect)
        .and_then(|r| r.regions_for(img.width, img.height))
    {
        if regions.len() != n * n {
            return Err(VisionError::SizeMismatch {
                rig: (regions.len() as f64).sqrt().round() as usize,
                asked: n,
            });
        }
        let mut stickers = Vec::with_capacity(n * n);
        for (i, q) in regions.iter().enumerate() {
            let sampled = shrink_quad(q, opts.sample_fill);
            let s = sample_sticker(img, q, &sampled).ok_or(VisionError::OutOfFrame {
                width: img.width,
                height: img.height,
                n,
                sticker: i,
            })?;
            stickers.push(sticker(*q, sampled, s, false));
        }
        return Ok(FaceReading {
            n,
            stickers,
            grid: None,
            candidates: Vec::new(),
            from_rig: true,
        });
    }
    detect_face(img, n, opts)
}

fn sticker(
    quad: Quad,
    sampled: Quad,
    (s, unclipped): (Sample, Option<Sample>),
    detected: bool,
) -> StickerReading {
    StickerReading {
        quad,
        sampled,
        unclipped,
        rgb: s.rgb,
        spread: s.spread,
        sigma: s.sigma,
        detected,
    }
}

/// The downscaled working copy: its channel maximum and the scale factor (work/full).
struct Work {
    rgb: RgbImage,
    scale: f64,
}

fn working_copy(img: &RgbImage) -> Result<Work, VisionError> {
    let long = img.width.max(img.height);
    // An integer reduction (OpenCV's area resampling has a fast path for those).
    let factor = long.div_ceil(WORK_SIZE).max(1);
    let scale = 1.0 / factor as f64;
    let src =
        Mat::new_rows_cols_with_bytes::<Vec3b>(img.height as i32, img.width as i32, &img.data)?;
    if scale == 1.0 {
        return Ok(Work {
            rgb: img.clone(),
            scale,
        });
    }
    let w = ((img.width as f64 * scale).round() as i32).max(1);
    let h = ((img.height as f64 * scale).round() as i32).max(1);
    let mut small = Mat::default();
    imgproc::resize(
        &src,
        &mut small,
        core::Size::new(w, h),
        0.0,
        0.0,
        imgproc::INTER_AREA,
    )?;
    let data = small.data_bytes()?.to_vec();
    Ok(Work {
        rgb: RgbImage {
            width: w as usize,
            height: h as usize,
            data,
        },
        scale,
    })
}

fn chroma(img: &RgbImage) -> Vec<u8> {
    img.data
        .chunks_exact(3)
        .map(|p| p[0].max(p[1]).max(p[2]) - p[0].min(p[1]).min(p[2]))
        .collect()
}

fn channel_max(img: &RgbImage) -> Vec<u8> {
    img.data
        .chunks_exact(3)
        .map(|p| p[0].max(p[1]).max(p[2]))
        .collect()
}

/// Sticker-like regions of a frame: whole stickers, and strips (a sticker partly hidden by
/// something lying across it, e.g. a robot arm), both in working-image pixels.
struct Regions {
    stickers: Vec<Candidate>,
    strips: Vec<Candidate>,
}

/// Candidate sticker regions of a frame, in its own pixels (the same step [`read_face`]
/// starts with; for diagnostics and pictures).
pub fn sticker_candidates(img: &RgbImage) -> Result<Vec<Candidate>, VisionError> {
    let work = working_copy(img)?;
    let k = 1.0 / work.scale;
    Ok(candidates(&work.rgb)?
        .stickers
        .into_iter()
        .map(|c| Candidate {
            quad: c.quad.map(|p| [p[0] * k, p[1] * k]),
            centre: [c.centre[0] * k, c.centre[1] * k],
            side: c.side * k,
            angle: c.angle,
        })
        .collect())
}

/// Candidate sticker regions in the working image.
fn candidates(work: &RgbImage) -> Result<Regions, VisionError> {
    let v = channel_max(work);
    let vmat = Mat::new_rows_cols_with_bytes::<u8>(work.height as i32, work.width as i32, &v)?;
    let mut blur = Mat::default();
    imgproc::gaussian_blur_def(&vmat, &mut blur, core::Size::new(5, 5), 0.0)?;
    // Chroma (channel max - min): a coloured sticker against a grey arm of about its
    // brightness has no edge in the channel maximum, but a strong one here.
    let ch = chroma(work);
    let cmat = Mat::new_rows_cols_with_bytes::<u8>(work.height as i32, work.width as i32, &ch)?;
    let mut cblur = Mat::default();
    imgproc::gaussian_blur_def(&cmat, &mut cblur, core::Size::new(5, 5), 0.0)?;
    let frame_area = (work.width * work.height) as f64;
    let short = work.width.min(work.height) as f64;
    let mut out: Vec<Candidate> = Vec::new();
    let mut strips: Vec<Candidate> = Vec::new();
    for (lo, hi) in [(20.0, 60.0), (40.0, 110.0)] {
        let contours = edge_regions(&blur, &cblur, lo, hi)?;
        for c in contours.iter() {
            if c.len() < 4 {
                continue;
            }
            let area = imgproc::contour_area_def(&c)?;
            // A sticker is at least ~1/30 and at most ~1/2.6 of the frame's short side.
            let side = area.sqrt();
            if side < (short / 30.0).max(6.0) || side > short / 2.6 || area > frame_area / 6.0 {
                continue;
            }
            let rect = imgproc::min_area_rect(&c)?;
            let (rw, rh) = (rect.size.width as f64, rect.size.height as f64);
            if rw < 1.0 || rh < 1.0 {
                continue;
            }
            let aspect = rw.max(rh) / rw.min(rh);
            let extent = area / (rw * rh);
            if extent < 0.72 {
                continue;
            }
            if aspect > 1.5 {
                if aspect < 6.0 && rw.max(rh) > short / 30.0 && rw.max(rh) < short / 2.6 {
                    let mut pts = [Point2f::default(); 4];
                    rect.points(&mut pts)?;
                    let quad = order_quad(pts.map(|p| [p.x as f64 + 0.5, p.y as f64 + 0.5]));
                    let centre = [rect.center.x as f64 + 0.5, rect.center.y as f64 + 0.5];
                    push_strip(&mut strips, quad, centre, rw.min(rh));
                }
                continue;
            }
            let mut hull: Vector<Point> = Vector::new();
            imgproc::convex_hull_def(&c, &mut hull)?;
            let hull_area = imgproc::contour_area_def(&hull)?;
            if hull_area <= 0.0 || area / hull_area < 0.9 {
                continue;
            }
            let mut pts = [Point2f::default(); 4];
            rect.points(&mut pts)?;
            let quad = order_quad(pts.map(|p| [p.x as f64 + 0.5, p.y as f64 + 0.5]));
            // Dilated edges shrink the region by about a pixel each side.
            let centre = [rect.center.x as f64 + 0.5, rect.center.y as f64 + 0.5];
            let e = [quad[1][0] - quad[0][0], quad[1][1] - quad[0][1]];
            let cand = Candidate {
                quad,
                centre,
                side: side + 2.0,
                angle: fold_angle(e[1].atan2(e[0])),
            };
            if aspect > OBLONG {
                // Oblong: a sticker seen at a slant, or one whose edge is under an arm.
                // The grid decides which (`grid::fit_grid`).
                push_strip(&mut strips, quad, centre, rw.min(rh));
            }
            keep_larger(&mut out, cand);
        }
    }
    Ok(Regions {
        stickers: out,
        strips,
    })
}

/// The regions between edges at one Canny threshold pair: edges of the blurred channel
/// maximum (and, at the sensitive thresholds, of the blurred chroma), thickened, inverted,
/// and traced as contours.
fn edge_regions(
    blur: &Mat,
    cblur: &Mat,
    lo: f64,
    hi: f64,
) -> Result<Vector<Vector<Point>>, VisionError> {
    let mut vedges = Mat::default();
    imgproc::canny_def(blur, &mut vedges, lo, hi)?;
    // Chroma edges at the sensitive thresholds only (the second pair is for noisy
    // frames, where chroma noise is worse still).
    let edges = if lo < 30.0 {
        let mut cedges = Mat::default();
        imgproc::canny_def(cblur, &mut cedges, lo, hi)?;
        let mut both = Mat::default();
        core::bitwise_or_def(&vedges, &cedges, &mut both)?;
        both
    } else {
        vedges
    };
    let kernel = imgproc::get_structuring_element_def(imgproc::MORPH_RECT, core::Size::new(3, 3))?;
    let mut thick = Mat::default();
    imgproc::dilate_def(&edges, &mut thick, &kernel)?;
    let mut regions = Mat::default();
    core::bitwise_not_def(&thick, &mut regions)?;
    let mut contours: Vector<Vector<Point>> = Vector::new();
    imgproc::find_contours_def(
        &regions,
        &mut contours,
        imgproc::RETR_LIST,
        imgproc::CHAIN_APPROX_SIMPLE,
    )?;
    Ok(contours)
}

/// Adds a sticker candidate; the same region found twice (two threshold pairs, nested
/// contours) is kept once, the larger.
fn keep_larger(out: &mut Vec<Candidate>, cand: Candidate) {
    match out
        .iter_mut()
        .find(|o| super::geom::dist(o.centre, cand.centre) < 0.3 * o.side.min(cand.side))
    {
        Some(o) => {
            if cand.side > o.side && cand.side < 1.3 * o.side {
                *o = cand;
            }
        }
        None => out.push(cand),
    }
}

/// Adds a strip unless the other threshold pair already found it.
fn push_strip(strips: &mut Vec<Candidate>, quad: Quad, centre: Pt, short: f64) {
    let e = [quad[1][0] - quad[0][0], quad[1][1] - quad[0][1]];
    let f = [quad[2][0] - quad[1][0], quad[2][1] - quad[1][1]];
    let strip = Candidate {
        quad,
        centre,
        side: e[0].hypot(e[1]).max(f[0].hypot(f[1])) + 2.0,
        angle: fold_angle(e[1].atan2(e[0])),
    };
    if !strips
        .iter()
        .any(|s| super::geom::dist(s.centre, strip.centre) < (0.25 * short).max(2.0))
    {
        strips.push(strip);
    }
}

/// Orders four corners as top-left, top-right, bottom-right, bottom-left (image axes).
fn order_quad(p: [Pt; 4]) -> Quad {
    let c = [
        (p[0][0] + p[1][0] + p[2][0] + p[3][0]) / 4.0,
        (p[0][1] + p[1][1] + p[2][1] + p[3][1]) / 4.0,
    ];
    let mut v = p.to_vec();
    v.sort_by(|a, b| {
        let aa = (a[1] - c[1]).atan2(a[0] - c[0]);
        let bb = (b[1] - c[1]).atan2(b[0] - c[0]);
        aa.total_cmp(&bb)
    });
    // Angles from -pi: the first is up-left-ish; pick the one with the smallest x+y as TL.
    let start = (0..4)
        .min_by(|&i, &j| (v[i][0] + v[i][1]).total_cmp(&(v[j][0] + v[j][1])))
        .unwrap_or(0);
    [
        v[start],
        v[(start + 1) % 4],
        v[(start + 2) % 4],
        v[(start + 3) % 4],
    ]
}

/// Brightness (channel maximum) that separates black plastic from stickers in this frame:
/// midway between the candidates' interiors and the ring just outside them.
fn dark_threshold(work: &RgbImage, cands: &[Candidate]) -> f64 {
    let v = |p: Pt| -> Option<f64> {
        let (x, y) = (p[0].floor(), p[1].floor());
        (x >= 0.0 && y >= 0.0 && (x as usize) < work.width && (y as usize) < work.height).then(
            || {
                let q = work.get(x as usize, y as usize);
                q[0].max(q[1]).max(q[2]) as f64
            },
        )
    };
    let mut inner = Vec::new();
    let mut ring = Vec::new();
    for c in cands {
        if let Some(x) = v(c.centre) {
            inner.push(x);
        }
        for k in 0..4 {
            let a = c.quad[k];
            let b = c.quad[(k + 1) % 4];
            let mid = [(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0];
            // A little outside the edge midpoint.
            let out = [
                c.centre[0] + (mid[0] - c.centre[0]) * 1.12,
                c.centre[1] + (mid[1] - c.centre[1]) * 1.12,
            ];
            if let Some(x) = v(out) {
                ring.push(x);
            }
        }
    }
    if inner.is_empty() || ring.is_empty() {
        return 60.0;
    }
    inner.sort_by(f64::total_cmp);
    ring.sort_by(f64::total_cmp);
    let sticker = inner[inner.len() / 5];
    let plastic = ring[ring.len() / 4];
    ((sticker + plastic) / 2.0).clamp(20.0, 200.0)
}

/// How much an unsupported grid cell looks like a (possibly partly hidden) sticker: the
/// share of its outline that is dark plastic times the share of its interior that is not.
fn cell_score(
    work: &RgbImage,
    strips: &[Candidate],
    dark: f64,
    h: &Homography,
    r: usize,
    c: usize,
) -> f64 {
    let v = |g: Pt| -> Option<f64> {
        let p = h.apply(g)?;
        let (x, y) = (p[0].floor(), p[1].floor());
        (x >= 0.0 && y >= 0.0 && (x as usize) < work.width && (y as usize) < work.height).then(
            || {
                let q = work.get(x as usize, y as usize);
                q[0].max(q[1]).max(q[2]) as f64
            },
        )
    };
    let (x0, y0) = (c as f64, r as f64);
    let (mut edge_dark, mut edge_n) = (0usize, 0usize);
    for k in 1..10 {
        let t = k as f64 / 10.0;
        for g in [
            [x0 + t, y0],
            [x0 + t, y0 + 1.0],
            [x0, y0 + t],
            [x0 + 1.0, y0 + t],
        ] {
            edge_n += 1;
            if v(g).is_some_and(|x| x < dark) {
                edge_dark += 1;
            }
        }
    }
    let (mut bright, mut inner_n) = (0usize, 0usize);
    for i in 0..6 {
        for j in 0..6 {
            let g = [
                x0 + 0.15 + 0.7 * i as f64 / 5.0,
                y0 + 0.15 + 0.7 * j as f64 / 5.0,
            ];
            inner_n += 1;
            if v(g).is_some_and(|x| x >= dark) {
                bright += 1;
            }
        }
    }
    let mut score = (edge_dark as f64 / edge_n as f64) * (bright as f64 / inner_n as f64);
    // A strip of sticker (the rest hidden) inside the cell, as long as a sticker is wide.
    if let Some(inv) = h.inverse() {
        let cell_side = super::geom::dist(
            h.apply([x0, y0 + 0.5]).unwrap_or([0.0, 0.0]),
            h.apply([x0 + 1.0, y0 + 0.5]).unwrap_or([0.0, 0.0]),
        );
        if strips.iter().any(|s| {
            s.side > 0.55 * cell_side
                && s.side < 1.1 * cell_side
                && inv
                    .apply(s.centre)
                    .is_some_and(|g| g[0] > x0 && g[0] < x0 + 1.0 && g[1] > y0 && g[1] < y0 + 1.0)
        }) {
            score += 1.0;
        }
    }
    score
}

fn detect_face(img: &RgbImage, n: usize, opts: &ReadOptions) -> Result<FaceReading, VisionError> {
    let work = working_copy(img)?;
    let regions = candidates(&work.rgb)?;
    let cands = regions.stickers;
    let fit: Option<GridFit> = {
        let w = &work.rgb;
        let dark = dark_threshold(w, &cands);
        let strips = &regions.strips;
        fit_grid(&cands, strips, n, &|h, r, c| {
            cell_score(w, strips, dark, h, r, c)
        })
    };
    let fit = match fit {
        Some(f) => f,
        None => {
            return Err(VisionError::NoCube {
                width: img.width,
                height: img.height,
                n,
                candidates: cands.len(),
                best: best_partial(&cands, n),
                needed: min_support(n),
            })
        }
    };
    // Grid → full-resolution pixels.
    let inv_scale = 1.0 / work.scale;
    let to_full = Homography {
        h: [inv_scale, 0.0, 0.0, 0.0, inv_scale, 0.0, 0.0, 0.0, 1.0],
    };
    let full = to_full.compose(&fit.h);
    let mut stickers = Vec::with_capacity(n * n);
    for r in 0..n {
        for c in 0..n {
            let i = r * n + c;
            let oof = VisionError::OutOfFrame {
                width: img.width,
                height: img.height,
                n,
                sticker: i,
            };
            let quad =
                map_quad(&full, &cell_quad(r, c, fit.fill)).ok_or_else(|| oof_clone(&oof))?;
            // A sticker seen only as a strip (the rest under an arm) is read from the strip.
            let seen = match (fit.support[i], fit.strip[i]) {
                (None, Some(k)) => Some(
                    regions.strips[k]
                        .quad
                        .map(|p| [p[0] * inv_scale, p[1] * inv_scale]),
                ),
                _ => None,
            };
            let centre = super::geom::quad_centre(&quad);
            if centre[0] < 0.0
                || centre[1] < 0.0
                || centre[0] >= img.width as f64
                || centre[1] >= img.height as f64
            {
                return Err(oof);
            }
            let in_cell = map_quad(&full, &cell_quad(r, c, fit.fill * opts.sample_fill))
                .ok_or_else(|| oof_clone(&oof))?;
            let cell = sample_sticker(img, &quad, &in_cell).ok_or_else(|| oof_clone(&oof))?;
            let (sampled, s) = match &seen {
                Some(q) => {
                    let in_strip = shrink_quad(q, STRIP_SAMPLE_FILL);
                    match sample_sticker(img, q, &in_strip) {
                        Some(s) if !same_surface_better_lit(&cell.0, &s.0) => (in_strip, s),
                        _ => (in_cell, cell),
                    }
                }
                None => (in_cell, cell),
            };
            stickers.push(sticker(quad, sampled, s, fit.supported_cell(i)));
        }
    }
    let candidates = cands
        .iter()
        .map(|c| c.quad.map(|p| [p[0] * inv_scale, p[1] * inv_scale]))
        .collect();
    Ok(FaceReading {
        n,
        stickers,
        grid: Some(full),
        candidates,
        from_rig: false,
    })
}

/// Whether the cell's centre shows the same surface as the strip found in it, only better
/// lit: the same chromaticity (channel shares within [`SAME_SURFACE_SHARE`]) and brighter.
/// Then the strip is a shaded band of a sticker whose outline was lost, not the visible
/// part of one under an arm, and the cell is the better reading.
fn same_surface_better_lit(cell: &Sample, strip: &Sample) -> bool {
    let sum = |s: &Sample| s.rgb[0] + s.rgb[1] + s.rgb[2];
    let share = |s: &Sample| s.rgb.map(|x| x / sum(s).max(1.0));
    let (a, b) = (share(cell), share(strip));
    let close = (0..3).all(|k| (a[k] - b[k]).abs() <= SAME_SURFACE_SHARE);
    close && sum(cell) > sum(strip)
}

fn oof_clone(e: &VisionError) -> VisionError {
    match e {
        VisionError::OutOfFrame {
            width,
            height,
            n,
            sticker,
        } => VisionError::OutOfFrame {
            width: *width,
            height: *height,
            n: *n,
            sticker: *sticker,
        },
        other => VisionError::Other(other.to_string()),
    }
}

/// For the error message: the most candidates on one lattice, however few.
fn best_partial(cands: &[Candidate], n: usize) -> usize {
    if cands.is_empty() {
        return 0;
    }
    // Count similar-sized candidates near each one (an upper bound on a lattice's support).
    cands
        .iter()
        .map(|a| {
            cands
                .iter()
                .filter(|b| {
                    b.side > 0.75 * a.side
                        && b.side < 1.33 * a.side
                        && super::geom::dist(a.centre, b.centre) < 1.5 * n as f64 * a.side
                })
                .count()
                .min(n * n)
        })
        .max()
        .unwrap_or(0)
        .min(min_support(n).saturating_sub(1))
}

/// Reads six faces (URFDLB order) into a scan, with default options.
pub fn scan_faces(
    faces: &[RgbImage; 6],
    n: usize,
    rig: Option<&Rig>,
) -> Result<RawScan, VisionError> {
    scan_faces_with(faces, n, rig, &ReadOptions::default()).map(|(scan, _)| scan)
}

/// Reads six faces (URFDLB order): the scan (facelet order, `Scale::Rgb8`) and each face's
/// reading (image order).
pub fn scan_faces_with(
    faces: &[RgbImage; 6],
    n: usize,
    rig: Option<&Rig>,
    opts: &ReadOptions,
) -> Result<(RawScan, Vec<FaceReading>), VisionError> {
    let size = Size::from_n(n).ok_or(VisionError::SizeMismatch { rig: n, asked: n })?;
    if let Some(r) = rig {
        if r.size != n {
            return Err(VisionError::SizeMismatch {
                rig: r.size,
                asked: n,
            });
        }
    }
    let mut facelets = Vec::with_capacity(6 * n * n);
    let mut sigma = Vec::with_capacity(6 * n * n);
    let mut readings = Vec::with_capacity(6);
    for face in Face::ALL {
        let rf = rig.map(|r| r.face(face));
        let mut o = opts.clone();
        if let Some(r) = rig {
            o.sample_fill = r.sample_fill;
        }
        let reading = read_face_with(&faces[face.index()], n, rf.as_ref(), &o).map_err(|e| {
            VisionError::Face {
                face: face.letter(),
                error: Box::new(e),
            }
        })?;
        let orientation = rf.map(|r| r.orientation).unwrap_or_default();
        let rgbs: Vec<[f64; 3]> = reading.stickers.iter().map(|s| s.rgb).collect();
        facelets.extend(orientation.to_facelets(n, &rgbs));
        let sigmas: Vec<[f64; 3]> = reading.stickers.iter().map(|s| s.sigma).collect();
        sigma.extend(orientation.to_facelets(n, &sigmas));
        readings.push(reading);
    }
    let mut scan = RawScan::new(size, Scale::Rgb8, facelets);
    scan.sigma = Some(sigma);
    Ok((scan, readings))
}

/// The second opinion on a scan whose colours are in doubt: `scan` with every sticker whose
/// centre was a saturated plateau read instead from its unsaturated pixels
/// (`StickerReading::unclipped`; a yellow that photographs almost white keeps its hue
/// there). `readings` and `rig` as given to and returned by [`scan_faces_with`]; `None`
/// when no sticker was saturated.
pub fn unclipped_scan(
    scan: &RawScan,
    readings: &[FaceReading],
    rig: Option<&Rig>,
) -> Option<RawScan> {
    if !readings
        .iter()
        .any(|r| r.stickers.iter().any(|s| s.unclipped.is_some()))
    {
        return None;
    }
    let mut facelets = Vec::with_capacity(scan.facelets.len());
    let mut sigma = Vec::with_capacity(scan.facelets.len());
    for (face, reading) in Face::ALL.iter().zip(readings) {
        let orientation = rig.map(|r| r.face(*face).orientation).unwrap_or_default();
        let pick = |s: &StickerReading| s.unclipped.map_or((s.rgb, s.sigma), |u| (u.rgb, u.sigma));
        let rgbs: Vec<[f64; 3]> = reading.stickers.iter().map(|s| pick(s).0).collect();
        let sigmas: Vec<[f64; 3]> = reading.stickers.iter().map(|s| pick(s).1).collect();
        facelets.extend(orientation.to_facelets(reading.n, &rgbs));
        sigma.extend(orientation.to_facelets(reading.n, &sigmas));
    }
    let mut out = scan.clone();
    out.facelets = facelets;
    out.sigma = Some(sigma);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(rgb: [f64; 3]) -> Sample {
        Sample {
            rgb,
            pixels: 100,
            spread: 2.0,
            sigma: [0.5; 3],
        }
    }

    #[test]
    fn a_shaded_band_of_a_sticker_yields_to_the_cell() {
        // A green sticker's shadowed lower band (real 320x240 webcam frame) and its centre.
        let band = reading([91.0, 105.0, 66.0]);
        let centre = reading([179.0, 216.0, 139.0]);
        assert!(same_surface_better_lit(&centre, &band));
        // The arm over a white sticker: a light grey arm is darker than the visible white.
        let white = reading([228.0, 230.0, 232.0]);
        let arm = reading([170.0, 170.0, 175.0]);
        assert!(!same_surface_better_lit(&arm, &white));
        // A red strip beside a dark arm: different surfaces.
        let red = reading([180.0, 30.0, 25.0]);
        let dark_arm = reading([60.0, 60.0, 64.0]);
        assert!(!same_surface_better_lit(&dark_arm, &red));
    }
}
