//! Scan sources: face images and cameras, producing [`RawScan`]s for the colour resolver.
//!
//! Level: above `color`; depends on `color` (raw scans) and `cube`. Must not depend on `solver`,
//! `robot`, `job` or `cli`. No printing; progress goes through callbacks and failures
//! through [`VisionError`].
//!
//! Pipeline for one face image ([`detect::read_face`], feature `vision`):
//!
//! 1. **Candidates** ([`detect`]): the image is reduced by an integer factor to at most
//!    [`detect::WORK_SIZE`] pixels on its long side; Canny edges of the per-pixel channel
//!    maximum (dark blue and green stickers stay bright against black plastic) and of the
//!    chroma (a coloured sticker against a grey arm of its brightness) are dilated, and
//!    the regions they enclose whose shape is a filled, convex, roughly square
//!    quadrilateral of plausible size become candidate stickers; thin and oblong ones are
//!    kept as strips (a sticker partly under an arm).
//! 2. **Grid** ([`grid`]): candidates of similar size are put on a lattice (axes from their
//!    edge directions, pitch from neighbour distances), strips completed to the squares
//!    they were cut from may fill nodes no whole sticker takes, the map is refined to a
//!    homography, and the n x n window with the most supports is the face (between equal
//!    lattices, the one whose cells look most like stickers on dark plastic). Stickers
//!    without a candidate (hidden by a robot arm, glare) are recovered from the fitted
//!    grid; a frame where no lattice holds enough candidates is refused
//!    ([`VisionError::NoCube`]).
//! 3. **Sampling** ([`sample`]), at full resolution: the centred part of each sticker
//!    (`sample_fill` of its side; of a strip-supported one, the centre of the strip), dropping the darkest and brightest pixels (border,
//!    specular highlights) and colour outliers; the mean of the rest. A sticker whose
//!    centre is clipped to a plateau also gets a reading from its unsaturated pixels, the
//!    second opinion for a scan in doubt ([`detect::unclipped_scan`]).
//! 4. **Orientation** ([`rig`]): each face's image grid is turned into facelet order as
//!    the rig says (default: the rubiks-cube-tracker convention, photos upright as in the
//!    net), giving a [`RawScan`] (`Scale::Rgb8`) via [`detect::scan_faces`].
//!
//! Fixed-rig mode: a [`rig::Rig`] with stored sticker regions is sampled there directly.
//!
//! Pure-Rust parts, available without OpenCV: [`image::RgbImage`], [`render`] (seeded
//! synthetic camera views of a face: `render_face(colors, n, &RenderOptions, seed)`),
//! [`rig`], [`sample`], [`grid`], [`geom`]. Cameras ([`camera`], feature `camera`) use
//! nokhwa.

pub mod geom;
pub mod grid;
pub mod image;
pub mod render;
pub mod rig;
pub mod sample;

#[cfg(feature = "camera")]
pub mod camera;
#[cfg(feature = "vision")]
pub mod detect;
#[cfg(feature = "vision")]
pub mod io;

pub use crate::color::raw::{RawScan, RawScanError, Scale};
pub use image::RgbImage;
pub use rig::{Orientation, Rig, RigFace};

/// Why a scan from images or a camera failed.
#[derive(Debug, thiserror::Error)]
pub enum VisionError {
    #[error(
        "no cube found in a {width}x{height} frame: {candidates} sticker-like region{}, at most \
         {best} on one {n}x{n} grid (need {needed})", if *candidates == 1 { "" } else { "s" }
    )]
    NoCube {
        width: usize,
        height: usize,
        n: usize,
        candidates: usize,
        best: usize,
        needed: usize,
    },
    #[error(
        "the {n}x{n} grid found reaches outside the {width}x{height} frame (sticker {sticker})"
    )]
    OutOfFrame {
        width: usize,
        height: usize,
        n: usize,
        sticker: usize,
    },
    /// What went wrong on one face (the message carries the cause, so it is not also
    /// chained as a source: `{:#}` would print it twice).
    #[error("face {face}: {error}")]
    Face { face: char, error: Box<VisionError> },
    #[error("{path}: {reason}")]
    Io { path: String, reason: String },
    #[error(transparent)]
    Read(#[from] crate::input::InputFileError),
    #[error("no image for face {face} in {dir} (tried {tried})")]
    MissingFace {
        face: char,
        dir: String,
        tried: String,
    },
    #[error("rig calibration: {0}")]
    Rig(String),
    #[error("rig calibration has {rig} stickers per face side but the scan asks for {asked}")]
    SizeMismatch { rig: usize, asked: usize },
    #[error("opencv: {0}")]
    OpenCv(String),
    #[error("camera {index}: {reason}{}", found.as_ref().map(|f| format!("; cameras found: {f} (`cubot camera list`; without a camera, six photos scan with `--images DIR`)")).unwrap_or_default())]
    Camera {
        index: u32,
        reason: String,
        /// The cameras there are, when it did not open (`None`: it was open).
        found: Option<String>,
    },
    #[error("{0}")]
    Other(String),
}

#[cfg(feature = "vision")]
impl From<opencv::Error> for VisionError {
    fn from(e: opencv::Error) -> Self {
        VisionError::OpenCv(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::VisionError;

    #[test]
    fn a_face_error_says_its_cause_once() {
        // The cause is in the message, not also chained as a source (an error chain
        // printer such as anyhow's `{:#}` would repeat it).
        let v = VisionError::Face {
            face: 'U',
            error: Box::new(VisionError::Other("blurred".into())),
        };
        assert!(std::error::Error::source(&v).is_none());
        assert_eq!(v.to_string(), "face U: blurred");
    }
}
