//! Synthetic scans: a physically-motivated model of what a camera or an EV3 colour sensor
//! reads from a real, imperfect cube under real light.
//!
//! Level: part of `color`; depends on `cube` and `color::raw`. Must not depend on the resolver
//! (it is the resolver's test bench) or anything above `color`. No printing. Every random
//! choice is seeded.
//!
//! The model, in linear light:
//!
//! ```text
//! signal[c] = reflectance[c] · illuminant[c] · brightness · falloff(position) · exposure
//! ```
//!
//! * `reflectance`: the palette's base colour for the sticker's face (linear-RGB
//!   reflectance; fluorescent pigments exceed 1 in their emission band), worn toward a dull,
//!   slightly yellow grey by a per-sticker fade amount (UV, grease, handling), with a small
//!   per-sticker pigment variation.
//! * `illuminant`: the colour of the light, a per-channel log-normal cast (warm/cool and
//!   green/magenta) drawn once per appearance; for the EV3 sensor it is its own LED, so the
//!   cast is replaced by the sensor's channel gains (white ≈ `[258, 424, 250]` counts, blue
//!   weakest per unit reflectance, each unit a little different).
//! * `brightness`: per-sticker log-normal gloss/tilt spread, stable across reads of the
//!   same physical sticker (`sticker_id`).
//! * `falloff`: a radial vignette from the face centre (camera) or, for the EV3, a
//!   systematic level per sticker kind (centre / edge / corner: the arm holds the sensor at
//!   a different distance for each), plus a per-face light level.
//! * per-read sensor noise (proportional + a floor), then the output transfer: 8-bit sRGB
//!   gamma with clipping at 255 for a camera, counts clipped at 1020 for the EV3, or the
//!   EV3 counts normalised to unit length.

use std::str::FromStr;

use palette::{LinSrgb, Srgb};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub use super::raw::EV3_WHITE_COUNTS;
use super::raw::{RawScan, Scale};
use crate::cube::{corner_sticker, CornerSlot, EdgeSlot, Face, FaceletCube, Size, EDGE_FACELETS};
/// EV3 RGB-RAW full scale.
pub const EV3_FULL_SCALE: f64 = 1020.0;

/// A cube's sticker set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Palette {
    /// The Western scheme: white, red, green, yellow, orange, blue on U R F D L B.
    Standard,
    /// A speedcube with no white face: pink replaces white (next to red and orange).
    NoWhite,
    /// Fluorescent stickers: saturated, some channels above a white's reflectance.
    Fluorescent,
    /// A 20-year-old cube: chalky, yellowed white, desaturated, dirty colours.
    Faded,
}

impl Palette {
    pub const ALL: [Palette; 4] = [
        Palette::Standard,
        Palette::NoWhite,
        Palette::Fluorescent,
        Palette::Faded,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Palette::Standard => "standard",
            Palette::NoWhite => "no-white",
            Palette::Fluorescent => "fluorescent",
            Palette::Faded => "faded",
        }
    }

    /// Linear-RGB reflectance of each face's colour (indexed by `Face::index`).
    pub fn reflectances(self) -> [[f64; 3]; 6] {
        // U, R, F, D, L, B
        match self {
            Palette::Standard => [
                [0.80, 0.80, 0.77],  // white
                [0.50, 0.025, 0.03], // red
                [0.02, 0.38, 0.10],  // green
                [0.80, 0.68, 0.03],  // yellow
                [0.85, 0.22, 0.02],  // orange
                [0.01, 0.08, 0.45],  // blue
            ],
            Palette::NoWhite => [
                [0.80, 0.16, 0.40],  // pink
                [0.50, 0.025, 0.03], // red
                [0.02, 0.38, 0.10],  // green
                [0.80, 0.68, 0.03],  // yellow
                [0.85, 0.22, 0.02],  // orange
                [0.01, 0.08, 0.45],  // blue
            ],
            Palette::Fluorescent => [
                [0.85, 0.85, 0.85], // white
                [0.95, 0.04, 0.10], // fluorescent red
                [0.10, 0.95, 0.12], // fluorescent green
                [1.05, 1.00, 0.05], // fluorescent yellow
                [1.20, 0.33, 0.02], // fluorescent orange
                [0.02, 0.30, 0.85], // bright blue
            ],
            Palette::Faded => [
                [0.62, 0.58, 0.42], // yellowed white
                [0.38, 0.07, 0.06], // dull red
                [0.07, 0.28, 0.12], // dull green
                [0.66, 0.56, 0.10], // pale yellow
                [0.62, 0.20, 0.06], // brownish orange
                [0.05, 0.11, 0.32], // dull blue
            ],
        }
    }
}

impl std::fmt::Display for Palette {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown palette name.
#[derive(Debug, thiserror::Error)]
#[error("unknown palette {0:?}: expected standard, no-white, fluorescent or faded")]
pub struct UnknownPalette(pub String);

impl FromStr for Palette {
    type Err = UnknownPalette;
    fn from_str(s: &str) -> Result<Palette, UnknownPalette> {
        match s.to_ascii_lowercase().as_str() {
            "standard" => Ok(Palette::Standard),
            "no-white" | "nowhite" => Ok(Palette::NoWhite),
            "fluorescent" => Ok(Palette::Fluorescent),
            "faded" => Ok(Palette::Faded),
            _ => Err(UnknownPalette(s.to_string())),
        }
    }
}

/// The imperfections of one cube under one light (all dimensionless).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Conditions {
    /// σ of the per-sticker log brightness (gloss, tilt, dirt).
    pub brightness_spread: f64,
    /// Mean per-sticker wear: fraction mixed toward dull grey (0 new, 1 fully grey).
    pub fade: f64,
    /// σ of the per-channel log cast of the light (camera) / of the sensor unit's gains
    /// around the nominal ones (EV3).
    pub cast: f64,
    /// Fractional light loss at the face corners relative to the centre (camera), or the
    /// spread of the per-position level (EV3).
    pub vignette: f64,
    /// Per-read noise, as a fraction of the signal (plus a floor of a quarter of it on the
    /// white level).
    pub noise: f64,
    /// Overall exposure: 1.0 puts a white sticker just under full scale; above clips.
    pub exposure: f64,
}

impl Default for Conditions {
    fn default() -> Conditions {
        Conditions::for_palette(Palette::Standard)
    }
}

impl Conditions {
    /// Typical conditions for a cube with this palette.
    pub fn for_palette(palette: Palette) -> Conditions {
        match palette {
            Palette::Standard => Conditions {
                brightness_spread: 0.08,
                fade: 0.03,
                cast: 0.08,
                vignette: 0.15,
                noise: 0.02,
                exposure: 0.9,
            },
            Palette::NoWhite => Conditions {
                brightness_spread: 0.08,
                fade: 0.04,
                cast: 0.08,
                vignette: 0.15,
                noise: 0.02,
                exposure: 0.9,
            },
            Palette::Fluorescent => Conditions {
                brightness_spread: 0.10,
                fade: 0.02,
                cast: 0.08,
                vignette: 0.15,
                noise: 0.02,
                exposure: 1.0,
            },
            Palette::Faded => Conditions {
                brightness_spread: 0.12,
                fade: 0.12,
                cast: 0.10,
                vignette: 0.18,
                noise: 0.025,
                exposure: 0.9,
            },
        }
    }
}

/// Per physical sticker: how it differs from its palette colour.
#[derive(Clone, Copy, Debug)]
struct StickerLook {
    brightness: f64,
    fade: f64,
    pigment: [f64; 3],
}

/// One physical cube (palette + wear) under one light, seen by one camera or sensor.
#[derive(Clone, Debug)]
pub struct Appearance {
    pub palette: Palette,
    pub conditions: Conditions,
    stickers: Vec<StickerLook>,
    /// Camera: the light's per-channel multiplier (cast).
    illuminant: [f64; 3],
    /// EV3: counts per unit reflectance, channel by channel.
    ev3_gain: [f64; 3],
    /// Per-face light level (the face's angle to the light).
    face_level: [f64; 6],
    /// EV3: level per sticker kind (corner, edge, centre) times a per-position jitter.
    ev3_kind_level: [f64; 3],
    ev3_position_jitter: Vec<f64>,
    /// The fade target: dull grey, a little yellow.
    grey: [f64; 3],
}

/// A standard normal deviate (Box–Muller).
pub(crate) fn gauss(rng: &mut dyn RngCore) -> f64 {
    let u1: f64 = rng.gen_range(f64::EPSILON..1.0);
    let u2: f64 = rng.gen::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

impl Appearance {
    pub fn new(palette: Palette, conditions: Conditions, seed: u64) -> Appearance {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5EED_C010_u64);
        let c = conditions;
        let stickers = (0..54)
            .map(|_| {
                let brightness = (c.brightness_spread * gauss(&mut rng)).exp();
                // Wear is skewed: most stickers near the mean, a few much worse.
                let fade = (c.fade * (0.5 * gauss(&mut rng)).exp()).clamp(0.0, 0.9);
                let pigment = std::array::from_fn(|_| (0.03 * gauss(&mut rng)).exp());
                StickerLook {
                    brightness,
                    fade,
                    pigment,
                }
            })
            .collect();
        let illuminant = {
            // Warm/cool along red-blue plus an independent green/magenta tint.
            let warm = c.cast * gauss(&mut rng);
            let tint = 0.5 * c.cast * gauss(&mut rng);
            [(warm).exp(), (tint).exp(), (-warm).exp()]
        };
        let ev3_gain = std::array::from_fn(|k| {
            EV3_WHITE_COUNTS[k] / Palette::Standard.reflectances()[0][k]
                * (0.5 * c.cast * gauss(&mut rng)).exp()
        });
        let face_level = std::array::from_fn(|_| (0.5 * c.vignette * gauss(&mut rng)).exp());
        let ev3_kind_level = std::array::from_fn(|_| (c.vignette * gauss(&mut rng)).exp());
        let ev3_position_jitter = (0..54)
            .map(|_| (0.3 * c.vignette * gauss(&mut rng)).exp())
            .collect();
        let grey = [0.42, 0.40, 0.34];
        Appearance {
            palette,
            conditions,
            stickers,
            illuminant,
            ev3_gain,
            face_level,
            ev3_kind_level,
            ev3_position_jitter,
            grey,
        }
    }

    /// The sticker's linear reflectance after wear (stable for `sticker_id`).
    fn reflectance(&self, color: Face, sticker_id: usize) -> [f64; 3] {
        let base = self.palette.reflectances()[color.index()];
        let look = &self.stickers[sticker_id % self.stickers.len()];
        std::array::from_fn(|k| {
            let r = base[k] * look.pigment[k];
            ((1.0 - look.fade) * r + look.fade * self.grey[k]) * look.brightness
        })
    }

    /// One reading of a sticker of colour `color` (which face's colour it shows), the
    /// physical sticker `sticker_id` (its solved-state facelet index), read at facelet
    /// `position`, in `scale`, with per-read noise from `rng`.
    pub fn reading(
        &self,
        color: Face,
        sticker_id: usize,
        position: usize,
        scale: Scale,
        rng: &mut dyn RngCore,
    ) -> [f64; 3] {
        let refl = self.reflectance(color, sticker_id);
        let c = &self.conditions;
        // Which face and where on it: 3x3x3 indices (< 54); 2x2x2 scans pass < 24 and are
        // treated as corner stickers.
        let (face, kind, radius2) = position_geometry(position);
        match scale {
            Scale::Rgb8 => {
                let fall = (1.0 - c.vignette * radius2 / 2.0).max(0.05) * self.face_level[face];
                let lin: [f64; 3] = std::array::from_fn(|k| {
                    let s = refl[k] * self.illuminant[k] * fall * c.exposure;
                    let n = c.noise * (s + 0.25 * c.exposure) * gauss(rng);
                    (s + n).clamp(0.0, 1.0)
                });
                let srgb: Srgb<f64> = Srgb::from_linear(LinSrgb::new(lin[0], lin[1], lin[2]));
                [srgb.red, srgb.green, srgb.blue].map(|v| (v * 255.0).round().clamp(0.0, 255.0))
            }
            Scale::Ev3Raw | Scale::Unit => {
                let level = self.ev3_kind_level[kind]
                    * self.ev3_position_jitter[position % 54]
                    * c.exposure
                    / 0.9;
                let counts: [f64; 3] = std::array::from_fn(|k| {
                    let s = refl[k] * self.ev3_gain[k] * level;
                    let floor = 0.25 * EV3_WHITE_COUNTS[k] * 0.1;
                    let n = c.noise * (s + floor) * gauss(rng);
                    // Mean of five integer reads: quantised to 0.2.
                    ((s + n).clamp(0.0, EV3_FULL_SCALE) * 5.0).round() / 5.0
                });
                if scale == Scale::Unit {
                    let norm = counts.iter().map(|v| v * v).sum::<f64>().sqrt().max(1e-9);
                    counts.map(|v| v / norm)
                } else {
                    counts
                }
            }
        }
    }
}

/// (face index, sticker kind 0 corner / 1 edge / 2 centre, squared distance from the face
/// centre in sticker units) of a 3x3x3 facelet index.
fn position_geometry(position: usize) -> (usize, usize, f64) {
    let face = (position / 9) % 6;
    let k = position % 9;
    let (row, col) = ((k / 3) as f64 - 1.0, (k % 3) as f64 - 1.0);
    let kind = match k {
        4 => 2,
        1 | 3 | 5 | 7 => 1,
        _ => 0,
    };
    (face, kind, row * row + col * col)
}

/// The 3x3x3 facelet index a 2x2x2 facelet index sits at (its corner sticker).
fn pocket_to_3x3(i: usize) -> usize {
    let (face, k) = (i / 4, i % 4);
    face * 9 + [0, 2, 6, 8][k]
}

/// For each facelet of `cube`, where the same physical sticker sits on the solved cube:
/// a piece is known by its colours, and each of its stickers by its colour. A facelet of a
/// piece that no real cube has keeps its own index.
fn home_facelets(cube: &FaceletCube) -> Vec<usize> {
    let size = cube.size();
    let c = cube.colors();
    let mut home: Vec<usize> = (0..size.stickers()).collect();
    for slot in 0..8 {
        let here: [usize; 3] = std::array::from_fn(|k| corner_sticker(size, slot, k));
        let cols = here.map(|i| c[i]);
        let piece = CornerSlot::ALL.iter().position(|p| {
            let f = p.faces();
            cols.iter().all(|x| f.contains(x)) && f.iter().all(|x| cols.contains(x))
        });
        if let Some(p) = piece {
            let faces = CornerSlot::ALL[p].faces();
            for (k, &i) in here.iter().enumerate() {
                if let Some(j) = faces.iter().position(|&f| f == cols[k]) {
                    home[i] = corner_sticker(size, p, j);
                }
            }
        }
    }
    if size == Size::Three {
        for here in EDGE_FACELETS {
            let cols = here.map(|i| c[i]);
            let piece = EdgeSlot::ALL.iter().position(|p| {
                let f = p.faces();
                cols.iter().all(|x| f.contains(x)) && f.iter().all(|x| cols.contains(x))
            });
            if let Some(p) = piece {
                let faces = EdgeSlot::ALL[p].faces();
                for (k, &i) in here.iter().enumerate() {
                    if let Some(j) = faces.iter().position(|&f| f == cols[k]) {
                        home[i] = EDGE_FACELETS[p][j];
                    }
                }
            }
        }
    }
    home
}

/// A synthetic scan of `cube`: each facelet read once at its own position. Each physical
/// sticker keeps its own look (wear, gloss) wherever the cube's turns put it: its identity
/// is its home on the solved cube, found from its piece's colours.
pub fn synth_scan(
    cube: &FaceletCube,
    appearance: &Appearance,
    scale: Scale,
    rng: &mut dyn RngCore,
) -> RawScan {
    let size = cube.size();
    let home = home_facelets(cube);
    let three = |i: usize| match size {
        Size::Three => i,
        Size::Two => pocket_to_3x3(i),
    };
    let facelets = cube
        .colors()
        .iter()
        .enumerate()
        .map(|(i, &color)| appearance.reading(color, three(home[i]), three(i), scale, rng))
        .collect();
    let mut scan = RawScan::new(size, scale, facelets);
    scan.provenance = Some(serde_json::json!({
        "synthetic": true,
        "palette": appearance.palette.name(),
        "conditions": appearance.conditions,
    }));
    scan
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ev3_white_matches_the_real_sensor_roughly() {
        let c = Conditions {
            brightness_spread: 0.0,
            fade: 0.0,
            cast: 0.0,
            vignette: 0.0,
            noise: 0.0,
            exposure: 0.9,
        };
        let a = Appearance::new(Palette::Standard, c, 1);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let w = a.reading(Face::U, 4, 4, Scale::Ev3Raw, &mut rng);
        for k in 0..3 {
            assert!(
                (w[k] - EV3_WHITE_COUNTS[k]).abs() / EV3_WHITE_COUNTS[k] < 0.06,
                "{w:?}"
            );
        }
        assert!(w[2] < w[1] && w[0] < w[1]);
    }

    #[test]
    fn seeded_and_in_range() {
        let cube = FaceletCube::solved(Size::Three);
        for p in Palette::ALL {
            let a = Appearance::new(p, Conditions::for_palette(p), 7);
            let s1 = synth_scan(&cube, &a, Scale::Rgb8, &mut ChaCha8Rng::seed_from_u64(3));
            let s2 = synth_scan(&cube, &a, Scale::Rgb8, &mut ChaCha8Rng::seed_from_u64(3));
            assert_eq!(s1, s2);
            s1.check().unwrap();
            assert!(s1.facelets.iter().flatten().all(|&v| v <= 255.0));
            let e = synth_scan(&cube, &a, Scale::Ev3Raw, &mut ChaCha8Rng::seed_from_u64(3));
            e.check().unwrap();
            let u = synth_scan(&cube, &a, Scale::Unit, &mut ChaCha8Rng::seed_from_u64(3));
            for f in &u.facelets {
                let n: f64 = f.iter().map(|v| v * v).sum();
                assert!((n - 1.0).abs() < 1e-9);
            }
        }
        let two = FaceletCube::solved(Size::Two);
        let a = Appearance::new(Palette::Faded, Conditions::for_palette(Palette::Faded), 1);
        let s = synth_scan(&two, &a, Scale::Rgb8, &mut ChaCha8Rng::seed_from_u64(1));
        assert_eq!(s.facelets.len(), 24);
    }

    #[test]
    fn a_sticker_is_stable_across_reads() {
        let p = Palette::Faded;
        let a = Appearance::new(p, Conditions::for_palette(p), 11);
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let r1 = a.reading(Face::R, 13, 13, Scale::Rgb8, &mut rng);
        let r2 = a.reading(Face::R, 13, 13, Scale::Rgb8, &mut rng);
        for k in 0..3 {
            assert!((r1[k] - r2[k]).abs() < 25.0, "{r1:?} {r2:?}");
        }
    }

    #[test]
    fn a_sticker_keeps_its_look_where_the_turns_put_it() {
        use crate::cube::Alg;
        let mut cube = FaceletCube::solved(Size::Three);
        assert_eq!(home_facelets(&cube), (0..54).collect::<Vec<_>>());
        cube.apply(&Alg::parse("R U F' D2 L B'").unwrap()).unwrap();
        let home = home_facelets(&cube);
        let solved = FaceletCube::solved(Size::Three);
        for (i, &h) in home.iter().enumerate() {
            // The sticker at i came from h, which shows the same colour when solved.
            assert_eq!(solved.colors()[h], cube.colors()[i], "{i} <- {h}");
        }
        let mut sorted = home.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..54).collect::<Vec<_>>());
        let mut pocket = FaceletCube::solved(Size::Two);
        pocket.apply(&Alg::parse("R U F'").unwrap()).unwrap();
        let home = home_facelets(&pocket);
        let solved = FaceletCube::solved(Size::Two);
        for (i, &h) in home.iter().enumerate() {
            assert_eq!(solved.colors()[h], pocket.colors()[i]);
        }
    }

    #[test]
    fn palette_names_round_trip() {
        for p in Palette::ALL {
            assert_eq!(p.name().parse::<Palette>().unwrap(), p);
        }
        assert!("western".parse::<Palette>().is_err());
    }
}
