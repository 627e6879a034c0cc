//! The raw scan format: one `[r, g, b]` reading per sticker, in URFDLB facelet order.
//!
//! JSON shape (documented in `calibration/README.md`):
//!
//! ```json
//! { "size": 3, "scale": "rgb8", "facelets": [[r, g, b], ...], "provenance": {...} }
//! ```
//!
//! `scale` is `"rgb8"` (8-bit camera sRGB, 0..255) or `"ev3-raw"` (EV3 colour sensor
//! RGB-RAW counts, nominal 0..1020, no white balance). It may be left out: the real-data case files
//! under `samples/realdata/cases` carry a free-text `value_scale` instead, which is read, and
//! failing that the scale is inferred from the values. Unknown fields are ignored, so those
//! case files load as they are.
//!
//! Optional `"sigma": [[sr, sg, sb], ...]` (one per reading, same order and scale): each
//! reading's own standard error per channel, as measured by the source (the image sampler
//! fills it from the pixels it averaged). Where it is absent (EV3 and sensor scans, the
//! real-data case files) the resolver uses its fixed model of the device's noise.
//!
//! Optional `"unread": [i, ...]`: facelet indices that were not read (a face the scanner
//! skipped). Their entries in `facelets` (and `sigma`) are placeholders, never checked or
//! used: an unread sticker carries no evidence, and the resolver fills it in from the cube's
//! rules. A file without the field has every sticker read, as before.
//!
//! Level: part of `color`; depends on `cube::Size` and `cube::Face`. Must not depend on the resolver or
//! anything above `color`.

use serde::{Deserialize, Serialize};

use crate::cube::{Face, Size};

/// EV3 colour sensor RGB-RAW counts for a white sticker, channel by channel (as read on
/// real cubes by the sensor at the MindCub3r's scanning distance).
pub const EV3_WHITE_COUNTS: [f64; 3] = [258.0, 424.0, 250.0];

/// What the numbers of a reading mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scale {
    /// 8-bit sRGB from a camera, 0..255.
    Rgb8,
    /// EV3 colour sensor RGB-RAW counts (0..1020 nominal), channels not balanced.
    Ev3Raw,
    /// Unit-length RGB vectors (some EV3 programs normalise each reading).
    Unit,
}

impl Scale {
    /// The name used in scan files (`scale`).
    pub fn name(self) -> &'static str {
        match self {
            Scale::Rgb8 => "rgb8",
            Scale::Ev3Raw => "ev3-raw",
            Scale::Unit => "unit",
        }
    }

    /// The largest value a reading on this scale can take: 255 for 8-bit sRGB, 1023 for
    /// the EV3 sensor's 10-bit counts (nominal full scale 1020), 1 for a unit vector's
    /// component.
    pub fn max_value(self) -> f64 {
        match self {
            Scale::Rgb8 => 255.0,
            Scale::Ev3Raw => 1023.0,
            Scale::Unit => 1.0,
        }
    }
}

/// Why a file is not a scan.
#[derive(Debug, thiserror::Error)]
pub enum RawScanError {
    /// The parser's message (carried in the text, not chained as a source, so that it is
    /// printed once).
    #[error("not valid JSON ({0}); a scan file is the JSON that `cubot scan --raw-out FILE` or `cubot synth-scan` writes")]
    Json(String),
    /// JSON, but not a scan's fields (serde's message, as for `Json`).
    #[error("JSON without a scan's fields ({0}); a scan file is the JSON that `cubot scan --raw-out FILE` or `cubot synth-scan` writes")]
    Shape(String),
    /// A `scale` that is none of [`Scale`]'s names (the value as written in the file).
    #[error("the scan's \"scale\" is {0}, which is not a scale cubot knows: it takes \"rgb8\" (a camera's 8-bit RGB, 0..255), \"ev3-raw\" (the EV3 colour sensor's RGB-RAW counts, 0..1023) or \"unit\" (unit-length RGB vectors), or no scale at all (inferred from the largest value)")]
    UnknownScale(String),
    #[error("size {0}: only 2 (2x2x2) and 3 (3x3x3) are supported")]
    Size(u64),
    #[error("{found} reading{} for a {size}: expected {expected}", if *found == 1 { "" } else { "s" })]
    Count {
        size: Size,
        found: usize,
        expected: usize,
    },
    #[error("unread facelet {index}: a {size} has facelets 0..{stickers}")]
    UnreadIndex {
        index: usize,
        size: Size,
        stickers: usize,
    },
    #[error("unread facelet {index} ({facelet}) is listed twice")]
    UnreadTwice { index: usize, facelet: String },
    #[error("{found} sigma entries for {expected} readings")]
    SigmaCount { found: usize, expected: usize },
    #[error("sigma of reading {index} ({facelet}): {value} is not a usable standard error")]
    Sigma {
        index: usize,
        facelet: String,
        value: f64,
    },
    #[error("reading {index} ({facelet}): {value} is not a usable colour value")]
    Value {
        index: usize,
        facelet: String,
        value: f64,
    },
    /// A value above what the scan's scale (declared, or inferred from the largest value)
    /// can hold.
    #[error("reading {index} ({facelet}): {value} is above {max}, the largest value on the {} scale (rgb8 readings are 0..255, ev3-raw 0..1023, unit 0..1)", scale.name())]
    Range {
        index: usize,
        facelet: String,
        value: f64,
        scale: Scale,
        max: f64,
    },
}

/// A scan: one reading per sticker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RawScan {
    pub size: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<Scale>,
    pub facelets: Vec<[f64; 3]>,
    /// Each reading's own standard error per channel (same scale as `facelets`), when the
    /// source measured it; `None`: the resolver's device noise model applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigma: Option<Vec<[f64; 3]>>,
    /// Facelets that were not read, in increasing order (see the module docs); empty: all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unread: Vec<usize>,
    /// Free-form: where the readings came from (device, file, date).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<serde_json::Value>,
    /// The real-data case files' scale description, used when `scale` is absent.
    #[serde(default, skip_serializing)]
    pub value_scale: Option<String>,
}

impl RawScan {
    pub fn new(size: Size, scale: Scale, facelets: Vec<[f64; 3]>) -> RawScan {
        RawScan {
            size: size.n() as u64,
            scale: Some(scale),
            facelets,
            sigma: None,
            unread: Vec::new(),
            provenance: None,
            value_scale: None,
        }
    }

    /// Parses and checks a scan (sizes, counts, finite non-negative values).
    pub fn from_json(text: &str) -> Result<RawScan, RawScanError> {
        let scan: RawScan = serde_json::from_str(text).map_err(|e| {
            // An unknown scale is said as such, not as serde's unknown variant.
            let scale = serde_json::from_str::<serde_json::Value>(text)
                .ok()
                .and_then(|v| v.get("scale").cloned())
                .filter(|s| !s.is_null());
            match scale {
                Some(s) if serde_json::from_value::<Scale>(s.clone()).is_err() => {
                    RawScanError::UnknownScale(s.to_string())
                }
                _ if e.classify() == serde_json::error::Category::Data => {
                    RawScanError::Shape(e.to_string())
                }
                _ => RawScanError::Json(e.to_string()),
            }
        })?;
        scan.check()?;
        Ok(scan)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a scan serialises")
    }

    pub fn cube_size(&self) -> Size {
        Size::from_n(self.size as usize).expect("checked by check()")
    }

    /// Checks the shape and values.
    pub fn check(&self) -> Result<(), RawScanError> {
        let size = Size::from_n(self.size as usize).ok_or(RawScanError::Size(self.size))?;
        if self.facelets.len() != size.stickers() {
            return Err(RawScanError::Count {
                size,
                found: self.facelets.len(),
                expected: size.stickers(),
            });
        }
        let facelet = |index: usize| {
            let face = crate::cube::Face::ALL[index / size.per_face()];
            format!("{}{}", face.letter(), index % size.per_face() + 1)
        };
        let mut unread = vec![false; size.stickers()];
        for &index in &self.unread {
            match unread.get_mut(index) {
                None => {
                    return Err(RawScanError::UnreadIndex {
                        index,
                        size,
                        stickers: size.stickers(),
                    })
                }
                Some(true) => {
                    return Err(RawScanError::UnreadTwice {
                        index,
                        facelet: facelet(index),
                    })
                }
                Some(u) => *u = true,
            }
        }
        let read = |&(index, _): &(usize, _)| !unread[index];
        for (index, rgb) in self.facelets.iter().enumerate().filter(read) {
            for &value in rgb {
                if !value.is_finite() || value < 0.0 {
                    return Err(RawScanError::Value {
                        index,
                        facelet: facelet(index),
                        value,
                    });
                }
            }
        }
        // Every value must fit the scale (a unit vector's component may round a hair
        // above 1).
        let scale = self.effective_scale();
        let max = scale.max_value();
        for (index, rgb) in self.facelets.iter().enumerate().filter(read) {
            for &value in rgb {
                if value > max * (1.0 + 1e-6) {
                    return Err(RawScanError::Range {
                        index,
                        facelet: facelet(index),
                        value,
                        scale,
                        max,
                    });
                }
            }
        }
        if let Some(sigma) = &self.sigma {
            if sigma.len() != self.facelets.len() {
                return Err(RawScanError::SigmaCount {
                    found: sigma.len(),
                    expected: self.facelets.len(),
                });
            }
            for (index, s) in sigma.iter().enumerate().filter(read) {
                for &value in s {
                    if !value.is_finite() || value < 0.0 {
                        return Err(RawScanError::Sigma {
                            index,
                            facelet: facelet(index),
                            value,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether facelet `i` was read.
    pub fn is_read(&self, i: usize) -> bool {
        !self.unread.contains(&i)
    }

    /// Whether every facelet was read.
    pub fn is_complete(&self) -> bool {
        self.unread.is_empty()
    }

    /// One flag per facelet: whether it was read.
    pub fn read_mask(&self) -> Vec<bool> {
        let mut read = vec![true; self.facelets.len()];
        for &i in &self.unread {
            if let Some(r) = read.get_mut(i) {
                *r = false;
            }
        }
        read
    }

    /// This scan with the facelets `unread` (and those already unread) marked unread, their
    /// readings (and standard errors) set to zero placeholders.
    pub fn with_unread(&self, unread: &[usize]) -> RawScan {
        let mut out = self.clone();
        out.unread.extend_from_slice(unread);
        out.unread.sort_unstable();
        out.unread.dedup();
        for &i in &out.unread {
            if let Some(v) = out.facelets.get_mut(i) {
                *v = [0.0; 3];
            }
            if let Some(s) = out.sigma.as_mut().and_then(|s| s.get_mut(i)) {
                *s = [0.0; 3];
            }
        }
        out
    }

    /// This scan with every facelet of `face` unread (as a scanner that skipped that face
    /// would report it).
    pub fn without_face(&self, face: Face) -> RawScan {
        let per = self.cube_size().per_face();
        let first = face.index() * per;
        let idx: Vec<usize> = (first..first + per).collect();
        self.with_unread(&idx)
    }

    /// The scale: declared, else read from `value_scale`, else inferred from the values.
    pub fn effective_scale(&self) -> Scale {
        if let Some(s) = self.scale {
            return s;
        }
        if let Some(v) = &self.value_scale {
            let v = v.to_ascii_lowercase();
            if v.contains("ev3") || v.contains("rgb-raw") {
                return Scale::Ev3Raw;
            }
            if v.contains("unit") {
                return Scale::Unit;
            }
            if v.contains("8-bit") || v.contains("0..255") {
                return Scale::Rgb8;
            }
        }
        let max = self
            .facelets
            .iter()
            .enumerate()
            .filter(|&(i, _)| self.is_read(i))
            .flat_map(|(_, c)| c.iter())
            .fold(0.0f64, |a, &b| a.max(b));
        if max <= 1.0 {
            Scale::Unit
        } else if max > 255.0 {
            Scale::Ev3Raw
        } else {
            Scale::Rgb8
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_scale_is_named_with_the_scales_there_are() {
        let e = RawScan::from_json("{\"size\": 3, \"scale\": \"srgb\", \"facelets\": []}")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("the scan's \"scale\" is \"srgb\", which is not"),
            "{e}"
        );
        for known in ["\"rgb8\"", "\"ev3-raw\"", "\"unit\""] {
            assert!(e.contains(known), "{e}");
        }
        assert!(!e.contains("variant"), "{e}");
    }

    #[test]
    fn errors_say_their_cause_once() {
        // The cause is in the message, not also chained as a source (an error chain
        // printer such as anyhow's `{:#}` would repeat it).
        let e = RawScan::from_json("{\"size\": 3, \"facelets\": [[1e400, 0, 0]]}").unwrap_err();
        assert!(matches!(e, RawScanError::Json(_) | RawScanError::Shape(_)));
        assert!(std::error::Error::source(&e).is_none());
        assert_eq!(e.to_string().matches("out of range").count(), 1, "{e}");
    }

    #[test]
    fn values_beyond_the_scale_are_refused() {
        let scan = |scale: &str, v: f64| {
            let mut readings: Vec<String> = (0..54).map(|_| "[10, 20, 30]".to_string()).collect();
            readings[13] = format!("[{v}, 20, 30]");
            RawScan::from_json(&format!(
                "{{\"size\": 3,{scale} \"facelets\": [{}]}}",
                readings.join(",")
            ))
        };
        assert!(scan(" \"scale\": \"rgb8\",", 255.0).is_ok());
        assert!(scan(" \"scale\": \"ev3-raw\",", 1020.0).is_ok());
        assert!(scan("", 1020.0).is_ok()); // inferred: EV3 counts
        let e = scan(" \"scale\": \"rgb8\",", 300.0).unwrap_err();
        assert!(matches!(
            e,
            RawScanError::Range {
                index: 13,
                scale: Scale::Rgb8,
                ..
            }
        ));
        assert!(e.to_string().contains("R5"), "{e}");
        // Inferred: nothing holds 1e30.
        let e = scan("", 1e30).unwrap_err();
        assert!(
            matches!(
                e,
                RawScanError::Range {
                    scale: Scale::Ev3Raw,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn unread_is_optional_checked_and_round_trips() {
        // A file from before the field: every sticker read, and it writes no `unread`.
        let readings: Vec<String> = (0..54).map(|_| "[10, 20, 30]".to_string()).collect();
        let base = format!("{{\"size\": 3, \"facelets\": [{}]", readings.join(","));
        let old = RawScan::from_json(&format!("{base}}}")).unwrap();
        assert!(old.is_complete() && old.read_mask().iter().all(|&r| r));
        assert!(!old.to_json().contains("unread"));
        // A face left unread: placeholders are not checked (here far above the scale) and
        // the field round-trips.
        let r = old.without_face(Face::R);
        assert_eq!(r.unread, (9..18).collect::<Vec<_>>());
        assert!(!r.is_read(9) && r.is_read(8) && r.is_read(18));
        let mut odd = r.clone();
        odd.facelets[12] = [5000.0, -1.0, 0.0];
        assert!(odd.check().is_ok());
        assert_eq!(odd.effective_scale(), old.effective_scale());
        assert_eq!(RawScan::from_json(&r.to_json()).unwrap(), r);
        // Indices out of range or listed twice are refused.
        let bad = format!("{base}, \"unread\": [3, 54]}}");
        assert!(matches!(
            RawScan::from_json(&bad),
            Err(RawScanError::UnreadIndex { index: 54, .. })
        ));
        let twice = format!("{base}, \"unread\": [12, 12]}}");
        match RawScan::from_json(&twice) {
            Err(RawScanError::UnreadTwice { index: 12, facelet }) => assert_eq!(facelet, "R4"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn sigma_is_optional_checked_and_round_trips() {
        let readings: Vec<String> = (0..54).map(|_| "[10, 20, 30]".to_string()).collect();
        let base = format!("{{\"size\": 3, \"facelets\": [{}]", readings.join(","));
        let plain = RawScan::from_json(&format!("{base}}}")).unwrap();
        assert!(plain.sigma.is_none());
        assert!(!plain.to_json().contains("sigma"));
        let sig: Vec<String> = (0..54).map(|_| "[0.5, 0.5, 0.5]".to_string()).collect();
        let with =
            RawScan::from_json(&format!("{base}, \"sigma\": [{}]}}", sig.join(","))).unwrap();
        assert_eq!(with.sigma.as_ref().map(Vec::len), Some(54));
        assert_eq!(RawScan::from_json(&with.to_json()).unwrap(), with);
        let short = format!("{base}, \"sigma\": [{}]}}", sig[..53].join(","));
        assert!(matches!(
            RawScan::from_json(&short),
            Err(RawScanError::SigmaCount { found: 53, .. })
        ));
        let mut bad = sig.clone();
        bad[9] = "[0.5, -1, 0.5]".into();
        let bad = format!("{base}, \"sigma\": [{}]}}", bad.join(","));
        match RawScan::from_json(&bad) {
            Err(RawScanError::Sigma {
                index: 9, facelet, ..
            }) => assert_eq!(facelet, "R1"),
            other => panic!("{other:?}"),
        }
    }
}
