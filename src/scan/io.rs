//! Image files: loading face photos (any format OpenCV reads) into [`RgbImage`], finding
//! the six face images of a directory, writing PNGs, JPEG bytes for a live view, and
//! annotated pictures of a reading.
//!
//! Level: part of `scan` (feature `vision`); depends on `cube` and the scan detection,
//! geometry and image. Must not depend on anything above `scan`.

use std::path::{Path, PathBuf};

use opencv::core::{self, Mat, Point, Scalar, Vec3b, Vector};
use opencv::imgcodecs;
use opencv::imgproc;
use opencv::prelude::*;

use super::detect::FaceReading;
use super::geom::Quad;
use super::image::RgbImage;
use super::VisionError;
use crate::cube::Face;

fn io_err(path: &Path, reason: impl ToString) -> VisionError {
    VisionError::Io {
        path: path.display().to_string(),
        reason: reason.to_string(),
    }
}

/// Loads an image file as 8-bit RGB.
pub fn load_image(path: &Path) -> Result<RgbImage, VisionError> {
    if !path.is_file() {
        return Err(io_err(path, "no such file"));
    }
    let bgr = imgcodecs::imread(path.to_string_lossy().as_ref(), imgcodecs::IMREAD_COLOR)
        .map_err(|e| io_err(path, e))?;
    if bgr.empty() {
        return Err(io_err(path, "not an image OpenCV can read"));
    }
    mat_to_rgb(&bgr).map_err(|e| io_err(path, e))
}

/// A BGR `Mat` (8UC3) to an [`RgbImage`].
pub fn mat_to_rgb(bgr: &Mat) -> Result<RgbImage, VisionError> {
    let mut rgb = Mat::default();
    imgproc::cvt_color_def(bgr, &mut rgb, imgproc::COLOR_BGR2RGB)?;
    let rgb = if rgb.is_continuous() {
        rgb
    } else {
        rgb.try_clone()?
    };
    let (w, h) = (rgb.cols() as usize, rgb.rows() as usize);
    let data = rgb.data_bytes()?.to_vec();
    RgbImage::from_raw(w, h, data)
        .ok_or_else(|| VisionError::OpenCv("unexpected pixel layout".into()))
}

fn rgb_to_bgr_mat(img: &RgbImage) -> Result<Mat, VisionError> {
    let view =
        Mat::new_rows_cols_with_bytes::<Vec3b>(img.height as i32, img.width as i32, &img.data)?;
    let mut bgr = Mat::default();
    imgproc::cvt_color_def(&view, &mut bgr, imgproc::COLOR_RGB2BGR)?;
    Ok(bgr)
}

/// Writes an image (format from the extension, e.g. `.png`).
pub fn save_image(path: &Path, img: &RgbImage) -> Result<(), VisionError> {
    let bgr = rgb_to_bgr_mat(img)?;
    let ok = imgcodecs::imwrite_def(path.to_string_lossy().as_ref(), &bgr)
        .map_err(|e| io_err(path, e))?;
    if !ok {
        return Err(io_err(path, "could not write the image"));
    }
    Ok(())
}

/// An image as JPEG bytes (`quality` 0..=100), e.g. a camera frame for a live view.
pub fn encode_jpeg(img: &RgbImage, quality: i32) -> Result<Vec<u8>, VisionError> {
    let bgr = rgb_to_bgr_mat(img)?;
    let mut buf = Vector::<u8>::new();
    let params = Vector::<i32>::from_slice(&[imgcodecs::IMWRITE_JPEG_QUALITY, quality]);
    if !imgcodecs::imencode(".jpg", &bgr, &mut buf, &params)? {
        return Err(VisionError::OpenCv(
            "could not encode the image as JPEG".into(),
        ));
    }
    Ok(buf.to_vec())
}

const EXTENSIONS: [&str; 6] = ["png", "jpg", "jpeg", "bmp", "tif", "tiff"];

/// The six face images of `dir` in URFDLB order. A face `X` is `X.<ext>`, `x.<ext>` or
/// `rubiks-side-X.<ext>` (png, jpg, jpeg, bmp, tif, tiff).
pub fn find_face_images(dir: &Path) -> Result<[PathBuf; 6], VisionError> {
    if !dir.is_dir() {
        let what = if dir.exists() {
            "not a directory: --images takes the directory of six face photos (U.png .. B.png)"
        } else {
            "no such directory: --images takes the directory of six face photos (U.png .. B.png)"
        };
        return Err(io_err(dir, what));
    }
    let mut out: Vec<PathBuf> = Vec::with_capacity(6);
    for face in Face::ALL {
        let l = face.letter();
        let stems = [
            l.to_string(),
            l.to_ascii_lowercase().to_string(),
            format!("rubiks-side-{l}"),
        ];
        let mut tried = Vec::new();
        let mut found = None;
        'search: for stem in &stems {
            for ext in EXTENSIONS {
                let p = dir.join(format!("{stem}.{ext}"));
                if p.is_file() {
                    found = Some(p);
                    break 'search;
                }
            }
            tried.push(format!("{stem}.png"));
        }
        match found {
            Some(p) => out.push(p),
            None => {
                return Err(VisionError::MissingFace {
                    face: l,
                    dir: dir.display().to_string(),
                    tried: format!("{} (also .jpg .bmp .tif)", tried.join(", ")),
                })
            }
        }
    }
    Ok(out.try_into().expect("six faces"))
}

fn poly(q: &Quad) -> Vector<Point> {
    q.iter()
        .map(|p| Point::new(p[0].round() as i32, p[1].round() as i32))
        .collect()
}

/// Draws a reading on a copy of its image: candidate regions (thin grey), the fitted grid's
/// stickers (green where a region supported them, orange where placed from the grid, blue
/// from a rig), the sampled regions filled with their measured colour, and a label per
/// sticker (`labels[i]`, image order; e.g. the resolved face letter).
pub fn annotate(
    img: &RgbImage,
    reading: &FaceReading,
    labels: Option<&[String]>,
) -> Result<RgbImage, VisionError> {
    let mut m = rgb_to_bgr_mat(img)?;
    let scale = (img.width.max(img.height) as f64 / 640.0).max(0.5);
    let thick = (2.0 * scale).round().max(1.0) as i32;
    for q in &reading.candidates {
        imgproc::polylines(
            &mut m,
            &poly(q),
            true,
            Scalar::new(160.0, 160.0, 160.0, 0.0),
            (thick / 2).max(1),
            imgproc::LINE_AA,
            0,
        )?;
    }
    for (i, s) in reading.stickers.iter().enumerate() {
        let outline = if reading.from_rig {
            Scalar::new(255.0, 128.0, 0.0, 0.0)
        } else if s.detected {
            Scalar::new(0.0, 220.0, 0.0, 0.0)
        } else {
            Scalar::new(0.0, 140.0, 255.0, 0.0)
        };
        imgproc::polylines(
            &mut m,
            &poly(&s.quad),
            true,
            outline,
            thick,
            imgproc::LINE_AA,
            0,
        )?;
        let fill = Scalar::new(s.rgb[2], s.rgb[1], s.rgb[0], 0.0);
        let mut pts: Vector<Vector<Point>> = Vector::new();
        pts.push(poly(&s.sampled));
        imgproc::fill_poly_def(&mut m, &pts, fill)?;
        imgproc::polylines(
            &mut m,
            &poly(&s.sampled),
            true,
            Scalar::new(0.0, 0.0, 0.0, 0.0),
            1,
            imgproc::LINE_AA,
            0,
        )?;
        if let Some(label) = labels.and_then(|l| l.get(i)) {
            let c = super::geom::quad_centre(&s.quad);
            let fs = 0.6 * scale;
            let org = Point::new((c[0] - 9.0 * fs) as i32, (c[1] + 9.0 * fs) as i32);
            for (col, t) in [
                (Scalar::new(0.0, 0.0, 0.0, 0.0), thick + 2),
                (Scalar::new(255.0, 255.0, 255.0, 0.0), thick),
            ] {
                imgproc::put_text(
                    &mut m,
                    label,
                    org,
                    imgproc::FONT_HERSHEY_SIMPLEX,
                    fs,
                    col,
                    t,
                    imgproc::LINE_AA,
                    false,
                )?;
            }
        }
    }
    let _ = core::Size::default();
    mat_to_rgb(&m)
}
