//! Colour calibration profiles (`calibration/*.toml`): six colour centroids in CIELAB and,
//! for the EV3 sensor, the per-channel gains, learned from a scan of a solved cube.
//!
//! Level: part of `color`; depends on `cube` and `color::raw`. Must not depend on the
//! resolver or anything above `color`. No printing.
//!
//! ```toml
//! version = 1
//! name = "standard"
//! scale = "rgb8"                 # or "ev3-raw" / "unit": the scale it was learned on
//! gains = [303.5, 498.8, 294.1]  # EV3 only: counts per unit reflectance, R G B
//!
//! [[colors]]
//! face = "U"                     # the face whose centre had this colour when calibrated
//! lab = [93.1, -0.4, 2.2]        # mean CIELAB (D65) after white balance
//! spread = [3.0, 1.2, 1.9]       # standard deviation per Lab channel
//! ```

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::raw::Scale;
use crate::cube::Face;

/// The current profile format version.
pub const PROFILE_VERSION: u32 = 1;

/// One learned colour.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProfileColor {
    /// Face letter (U R F D L B) the colour belonged to on the calibration cube.
    pub face: char,
    pub lab: [f64; 3],
    pub spread: [f64; 3],
}

/// A colour profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<Scale>,
    /// EV3: counts per unit reflectance for R, G, B.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gains: Option<[f64; 3]>,
    pub colors: Vec<ProfileColor>,
    /// Each sticker of the calibration scan (Lab, after white balance), in facelet order
    /// (54 or 24): where every physical sticker of the cube reads, worn ones included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stickers: Option<Vec<[f64; 3]>>,
}

/// Why a profile cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error(transparent)]
    Read(#[from] crate::input::InputFileError),
    #[error("cannot write profile {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("profile {path} is not a colour profile as `cubot calibrate` writes one: {message}")]
    Toml { path: String, message: String },
    #[error("profile version {found} is not supported (this build reads version {expected})")]
    Version { found: u32, expected: u32 },
    #[error("profile has {found} colours: expected 6, one per face")]
    Colors { found: usize },
    #[error("profile colour {index}: face {face:?} is not one of U R F D L B, or repeats")]
    Face { index: usize, face: char },
    #[error("profile has {found} stickers: expected 54 (3x3x3) or 24 (2x2x2)")]
    Stickers { found: usize },
    #[error("profile value {what} = {value} is not usable")]
    Value { what: String, value: f64 },
}

impl Profile {
    /// Checks the version, the six faces and the numbers.
    pub fn check(&self) -> Result<(), ProfileError> {
        if self.version != PROFILE_VERSION {
            return Err(ProfileError::Version {
                found: self.version,
                expected: PROFILE_VERSION,
            });
        }
        if self.colors.len() != 6 {
            return Err(ProfileError::Colors {
                found: self.colors.len(),
            });
        }
        let mut seen = [false; 6];
        for (index, c) in self.colors.iter().enumerate() {
            let f = Face::from_letter(c.face).ok_or(ProfileError::Face {
                index,
                face: c.face,
            })?;
            if std::mem::replace(&mut seen[f.index()], true) {
                return Err(ProfileError::Face {
                    index,
                    face: c.face,
                });
            }
            for (k, &v) in c.lab.iter().chain(c.spread.iter()).enumerate() {
                if !v.is_finite() || (k >= 3 && v <= 0.0) {
                    return Err(ProfileError::Value {
                        what: format!("colors[{index}]"),
                        value: v,
                    });
                }
            }
        }
        if let Some(st) = &self.stickers {
            if st.len() != 24 && st.len() != 54 {
                return Err(ProfileError::Stickers { found: st.len() });
            }
            for (index, v) in st.iter().flatten().enumerate() {
                if !v.is_finite() {
                    return Err(ProfileError::Value {
                        what: format!("stickers[{}]", index / 3),
                        value: *v,
                    });
                }
            }
        }
        if let Some(g) = self.gains {
            for v in g {
                if !v.is_finite() || v <= 0.0 {
                    return Err(ProfileError::Value {
                        what: "gains".into(),
                        value: v,
                    });
                }
            }
        }
        Ok(())
    }

    pub fn from_toml(text: &str, path: &str) -> Result<Profile, ProfileError> {
        let p: Profile = toml::from_str(text).map_err(|e| ProfileError::Toml {
            path: path.to_string(),
            message: crate::input::toml_error(text, &e),
        })?;
        p.check()?;
        Ok(p)
    }

    pub fn load(path: &Path) -> Result<Profile, ProfileError> {
        let text = crate::input::read_text(path, crate::input::FileKind::Profile)?;
        Profile::from_toml(&text, &path.display().to_string())
    }

    pub fn to_toml(&self) -> String {
        let body = toml::to_string(self).expect("a profile serialises");
        format!(
            "# cubot colour profile (see calibration/README.md). Lab = CIELAB D65 after white \
             balance;\n# gains = EV3 counts per unit reflectance (R, G, B).\n{body}"
        )
    }

    pub fn save(&self, path: &Path) -> Result<(), ProfileError> {
        std::fs::write(path, self.to_toml()).map_err(|source| ProfileError::Io {
            path: path.display().to_string(),
            source,
        })
    }

    /// The calibration scan's stickers grouped by the face whose colour they show (face
    /// order U R F D L B); empty when the profile did not keep them.
    pub fn stickers_by_face(&self) -> [Vec<[f64; 3]>; 6] {
        let mut out: [Vec<[f64; 3]>; 6] = Default::default();
        if let Some(st) = &self.stickers {
            let per = st.len() / 6;
            for (i, s) in st.iter().enumerate() {
                let face = self
                    .colors
                    .get(i / per.max(1))
                    .and_then(|c| Face::from_letter(c.face));
                if let Some(f) = face {
                    out[f.index()].push(*s);
                }
            }
        }
        out
    }

    /// The centroids in face order U R F D L B.
    pub fn centroids(&self) -> [[f64; 3]; 6] {
        let mut out = [[0.0; 3]; 6];
        for c in &self.colors {
            if let Some(f) = Face::from_letter(c.face) {
                out[f.index()] = c.lab;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_checks() {
        let colors = Face::ALL
            .iter()
            .map(|f| ProfileColor {
                face: f.letter(),
                lab: [50.0, f.index() as f64, -1.0],
                spread: [1.0, 1.0, 1.0],
            })
            .collect();
        let p = Profile {
            version: PROFILE_VERSION,
            name: Some("t".into()),
            scale: Some(Scale::Ev3Raw),
            gains: Some([300.0, 500.0, 290.0]),
            colors,
            stickers: None,
        };
        let back = Profile::from_toml(&p.to_toml(), "x").unwrap();
        assert_eq!(back, p);
        assert_eq!(back.centroids()[2], [50.0, 2.0, -1.0]);
        let v2 = p.to_toml().replace("version = 1", "version = 2");
        assert!(matches!(
            Profile::from_toml(&v2, "x"),
            Err(ProfileError::Version { found: 2, .. })
        ));
        let dup = p.to_toml().replacen("face = \"R\"", "face = \"U\"", 1);
        assert!(matches!(
            Profile::from_toml(&dup, "x"),
            Err(ProfileError::Face { .. })
        ));
        assert!(matches!(
            Profile::from_toml("nonsense", "x"),
            Err(ProfileError::Toml { .. })
        ));
    }
}
