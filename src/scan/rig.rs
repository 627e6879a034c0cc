//! Fixed-camera rig calibration: for each face, how its photo is turned relative to the
//! facelet order, and (optionally) where its stickers are in the frame.
//!
//! A rig file is versioned TOML (`calibration/<rig>.toml`, written by
//! `cubot calibrate-camera`):
//!
//! ```toml
//! version = 1
//! name = "lego-webcam"
//! size = 3                 # 3 = 3x3x3, 2 = 2x2x2
//! sample_fill = 0.55       # share of a sticker's side that is sampled (centred)
//!
//! [faces.U]
//! rotate = 0               # quarter turns clockwise, in degrees: 0, 90, 180, 270
//! mirror = false           # then mirrored left-right
//! image_size = [320, 240]  # the frame the regions below were measured on
//! stickers = [[[x, y], [x, y], [x, y], [x, y]], ...]   # n*n quads, image row-major
//! ```
//!
//! **Orientation.** The stickers of a face image are numbered as seen, row by row from the
//! top-left. The face's facelets (URFDLB order, each face row-major as in the net in
//! `cube`) are that grid *turned clockwise by `rotate` degrees, then mirrored left-right
//! if `mirror`*. `rotate = 0, mirror = false` means "the photo already shows the face the
//! way the net draws it", which is the convention of the photo sets of the open-source
//! rubiks-cube-tracker project ([`Rig::tracker`]).
//!
//! A face without `stickers` is found by detection; a face with them is sampled there
//! directly (fixed-rig mode) unless the caller asks for detection. Regions are scaled when
//! a frame's size differs from `image_size`.
//!
//! Level: part of `scan` (pure Rust, no OpenCV); depends on `cube` and the scan geometry.
//! Must not depend on `solver`, `robot` or anything above `scan`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::geom::Quad;
use super::VisionError;
use crate::cube::Face;

/// The rig file version this build reads and writes.
pub const RIG_VERSION: u32 = 1;

/// Default share of a sticker's side that is sampled.
pub const DEFAULT_SAMPLE_FILL: f64 = 0.55;

/// How a face image is turned relative to the facelet order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Orientation {
    /// Degrees clockwise: 0, 90, 180 or 270.
    #[serde(default)]
    pub rotate: u16,
    /// Mirrored left-right after the rotation.
    #[serde(default)]
    pub mirror: bool,
}

impl Orientation {
    /// The facelet index (within the face, row-major) of image cell `(row, col)`.
    pub fn facelet_of(&self, n: usize, row: usize, col: usize) -> usize {
        let (mut r, mut c) = (row, col);
        for _ in 0..(self.rotate / 90) % 4 {
            (r, c) = (c, n - 1 - r);
        }
        if self.mirror {
            c = n - 1 - c;
        }
        r * n + c
    }

    /// Reorders `n*n` values in image row-major order into facelet order.
    pub fn to_facelets<T: Clone>(&self, n: usize, image_order: &[T]) -> Vec<T> {
        let mut out = image_order.to_vec();
        for row in 0..n {
            for col in 0..n {
                out[self.facelet_of(n, row, col)] = image_order[row * n + col].clone();
            }
        }
        out
    }

    fn check(&self, face: Face) -> Result<(), VisionError> {
        if self.rotate % 90 != 0 || self.rotate >= 360 {
            return Err(VisionError::Rig(format!(
                "face {}: rotate = {} (use 0, 90, 180 or 270)",
                face.letter(),
                self.rotate
            )));
        }
        Ok(())
    }
}

/// One face of a rig.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct RigFace {
    #[serde(flatten)]
    pub orientation: Orientation,
    /// `[width, height]` of the frame the stickers were measured on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_size: Option<[usize; 2]>,
    /// Sticker quads in image pixels, image row-major (empty: detect).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stickers: Vec<Quad>,
}

impl RigFace {
    /// The sticker quads scaled to a `width` x `height` frame (`None` if none stored).
    pub fn regions_for(&self, width: usize, height: usize) -> Option<Vec<Quad>> {
        if self.stickers.is_empty() {
            return None;
        }
        let (sx, sy) = match self.image_size {
            Some([w, h]) if w > 0 && h > 0 => (width as f64 / w as f64, height as f64 / h as f64),
            _ => (1.0, 1.0),
        };
        Some(
            self.stickers
                .iter()
                .map(|q| q.map(|p| [p[0] * sx, p[1] * sy]))
                .collect(),
        )
    }
}

/// A camera rig: orientation (and optionally fixed sticker regions) for each face.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rig {
    pub version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Cube size, 2 or 3.
    pub size: usize,
    #[serde(default = "default_fill")]
    pub sample_fill: f64,
    /// Keyed by face letter `U R F D L B`; a missing face means identity orientation and
    /// detection.
    #[serde(default)]
    pub faces: BTreeMap<String, RigFace>,
}

fn default_fill() -> f64 {
    DEFAULT_SAMPLE_FILL
}

impl Rig {
    /// Identity orientation on every face, no stored regions.
    pub fn new(size: usize) -> Rig {
        Rig {
            version: RIG_VERSION,
            name: None,
            size,
            sample_fill: DEFAULT_SAMPLE_FILL,
            faces: BTreeMap::new(),
        }
    }

    /// The convention of the rubiks-cube-tracker photo sets: every photo shows its face as
    /// the net draws it (U with B at the top, D with F at the top, the side faces upright).
    pub fn tracker(size: usize) -> Rig {
        let mut rig = Rig::new(size);
        rig.name = Some("rubiks-cube-tracker".into());
        rig
    }

    /// The face entry (default when absent).
    pub fn face(&self, face: Face) -> RigFace {
        self.faces
            .get(&face.letter().to_string())
            .cloned()
            .unwrap_or_default()
    }

    pub fn set_face(&mut self, face: Face, rf: RigFace) {
        self.faces.insert(face.letter().to_string(), rf);
    }

    /// Parses and checks a rig file's text.
    pub fn from_toml(text: &str) -> Result<Rig, VisionError> {
        let v: toml::Value = toml::from_str(text).map_err(|e| {
            VisionError::Rig(format!("not TOML: {}", crate::input::toml_error(text, &e)))
        })?;
        match v.get("version").and_then(|v| v.as_integer()) {
            Some(x) if x == RIG_VERSION as i64 => {}
            Some(x) => {
                return Err(VisionError::Rig(format!(
                    "version {x}: this build reads rig files of version {RIG_VERSION}"
                )))
            }
            None => return Err(VisionError::Rig("no `version` (expected 1)".into())),
        }
        let rig: Rig = v.try_into().map_err(|e: toml::de::Error| {
            VisionError::Rig(e.message().trim().replace('\n', "; "))
        })?;
        rig.check()?;
        Ok(rig)
    }

    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a rig serialises")
    }

    pub fn load(path: &Path) -> Result<Rig, VisionError> {
        let text = crate::input::read_text(path, crate::input::FileKind::Rig)?;
        Rig::from_toml(&text).map_err(|e| match e {
            VisionError::Rig(m) => VisionError::Rig(format!("{}: {m}", path.display())),
            e => e,
        })
    }

    pub fn save(&self, path: &Path) -> Result<(), VisionError> {
        std::fs::write(path, self.to_toml()).map_err(|e| VisionError::Io {
            path: path.display().to_string(),
            reason: e.to_string(),
        })
    }

    fn check(&self) -> Result<(), VisionError> {
        if self.size != 2 && self.size != 3 {
            return Err(VisionError::Rig(format!(
                "size = {}: only 2 and 3 are supported",
                self.size
            )));
        }
        if !(self.sample_fill > 0.05 && self.sample_fill <= 1.0) {
            return Err(VisionError::Rig(format!(
                "sample_fill = {}: use a share in (0.05, 1]",
                self.sample_fill
            )));
        }
        for (key, rf) in &self.faces {
            let face = key
                .chars()
                .next()
                .filter(|_| key.len() == 1)
                .and_then(Face::from_letter)
                .ok_or_else(|| {
                    VisionError::Rig(format!("faces.{key}: not a face letter (U R F D L B)"))
                })?;
            rf.orientation.check(face)?;
            if !rf.stickers.is_empty() && rf.stickers.len() != self.size * self.size {
                return Err(VisionError::Rig(format!(
                    "face {key}: {} sticker regions for a {}x{} face",
                    rf.stickers.len(),
                    self.size,
                    self.size
                )));
            }
            if rf
                .stickers
                .iter()
                .flatten()
                .flatten()
                .any(|v| !v.is_finite())
            {
                return Err(VisionError::Rig(format!(
                    "face {key}: a sticker corner is not a number"
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orientation_maps_cells() {
        let o = Orientation {
            rotate: 90,
            mirror: false,
        };
        // Turning clockwise brings the image's bottom-left corner to the top-left.
        assert_eq!(o.facelet_of(3, 2, 0), 0);
        assert_eq!(o.facelet_of(3, 0, 0), 2);
        let m = Orientation {
            rotate: 0,
            mirror: true,
        };
        assert_eq!(m.to_facelets(2, &[1, 2, 3, 4]), vec![2, 1, 4, 3]);
        let full = Orientation {
            rotate: 180,
            mirror: false,
        };
        assert_eq!(
            full.to_facelets(3, &[0, 1, 2, 3, 4, 5, 6, 7, 8]),
            vec![8, 7, 6, 5, 4, 3, 2, 1, 0]
        );
    }

    #[test]
    fn toml_round_trip_and_version_check() {
        let mut rig = Rig::tracker(3);
        rig.set_face(
            Face::U,
            RigFace {
                orientation: Orientation {
                    rotate: 270,
                    mirror: true,
                },
                image_size: Some([320, 240]),
                stickers: vec![[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]; 9],
            },
        );
        let text = rig.to_toml();
        assert_eq!(Rig::from_toml(&text).unwrap(), rig);
        let bad = text.replace("version = 1", "version = 7");
        assert!(Rig::from_toml(&bad)
            .unwrap_err()
            .to_string()
            .contains("version 7"));
        let bad = text.replace("rotate = 270", "rotate = 45");
        assert!(Rig::from_toml(&bad).is_err());
    }
}
