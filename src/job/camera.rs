//! The camera scanner of a job: a fixed camera looks at the top face while the robot
//! presents each face to it. On the simulators the frames are
//! rendered (`scan::render`) from the simulated cube's sticker colours as the synthetic
//! palette shows them (`color::synth`, seeded), then read by the real vision pipeline
//! (`scan::detect`) into an `Rgb8` [`RawScan`] for the normal resolver path.
//!
//! The MindCub3r presents faces with its colour-sensor scan's face sequence
//! ([`Mc3Run::present_faces`]), so its orientation bookkeeping is the scan's; the line robot
//! has fixed motors and no reorientation, so its simulator shows all six faces directly.
//!
//! Level: job (combines `robot` with `scan`, which the robot level may not depend on).
//! Feature `vision`. No printing.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::color::raw::{RawScan, Scale};
use crate::color::synth::{Appearance, Conditions, Palette};
use crate::cube::{Alg, Face, FaceletCube, Size};
use crate::robot::mindcub3r::cost::RobotState;
use crate::robot::mindcub3r::model::Orientation;
use crate::scan::detect::{read_face, scan_faces, FaceReading};
use crate::scan::image::RgbImage;
use crate::scan::render::{render_face, RenderOptions};
use crate::scan::VisionError;

use super::error::{CameraError, RunError};
use super::journal::Action;
use super::line::LineRun;
use super::mindcub3r::Mc3Run;
use super::report::{FrameImage, FrameSticker, RunEvent};
use super::robot::{Answer, Planning, Progress, RobotPlan, RunRobot, ScanStep};
use crate::solver::costed::SequenceCost;

/// The robot under the camera.
pub enum Presenter {
    Mc3(Box<Mc3Run>),
    Line(Box<LineRun>),
}

/// A robot whose scans come from a camera over the top face.
pub struct CameraRun {
    robot: Presenter,
    camera: Camera,
    size: Option<Size>,
}

/// The simulated camera: the cube's look under the light, and the frames it has taken.
struct Camera {
    appearance: Appearance,
    render: RenderOptions,
    seed: u64,
    /// Frames taken so far (each frame gets its own render seed and noise).
    frames: u64,
}

impl CameraRun {
    /// `palette` and `seed`: the simulated cube's look under the simulated light.
    pub fn new(robot: Presenter, palette: Palette, seed: u64) -> CameraRun {
        CameraRun {
            robot,
            camera: Camera {
                appearance: Appearance::new(palette, Conditions::for_palette(palette), seed),
                render: RenderOptions::default(),
                seed,
                frames: 0,
            },
            size: None,
        }
    }

    fn inner(&self) -> &dyn RunRobot {
        match &self.robot {
            Presenter::Mc3(r) => r.as_ref(),
            Presenter::Line(r) => r.as_ref(),
        }
    }

    fn inner_mut(&mut self) -> &mut dyn RunRobot {
        match &mut self.robot {
            Presenter::Mc3(r) => r.as_mut(),
            Presenter::Line(r) => r.as_mut(),
        }
    }
}

fn no_sim() -> CameraError {
    CameraError::NoSimulator
}

/// Frames taken of one view before giving up on finding the cube in them (a real camera
/// retakes a frame when, say, the arm hides a sticker row).
const TAKES: usize = 4;

impl Camera {
    /// A frame of the stickers `shown` in which the vision pipeline finds the cube: retaken
    /// (fresh light noise and pose) up to [`TAKES`] times; the last failure otherwise.
    fn readable_frame(
        &mut self,
        n: usize,
        shown: &[(Face, usize)],
    ) -> Result<(RgbImage, FaceReading), RunError> {
        let mut last = None;
        for _ in 0..TAKES {
            let img = self.frame(n, shown);
            match read_face(&img, n, None) {
                Ok(reading) => return Ok((img, reading)),
                Err(e) => last = Some(e),
            }
        }
        Err(CameraError::Vision(
            last.unwrap_or_else(|| VisionError::Other("no frame taken".into())),
        )
        .into())
    }

    /// One camera frame of the stickers `shown` (each: its colour and the facelet index it
    /// stands for, image row-major), rendered and seeded.
    fn frame(&mut self, n: usize, shown: &[(Face, usize)]) -> RgbImage {
        let (seed, k) = (self.seed, self.frames);
        self.frames += 1;
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xca3e_7a00 ^ k.wrapping_mul(0x9e37_79b9));
        let colors: Vec<[u8; 3]> = shown
            .iter()
            .map(|&(color, facelet)| {
                self.appearance
                    .reading(color, facelet, facelet, Scale::Rgb8, &mut rng)
                    .map(|v| v.round().clamp(0.0, 255.0) as u8)
            })
            .collect();
        render_face(
            &colors,
            n,
            &self.render,
            seed.wrapping_add(k.wrapping_mul(7919)),
        )
    }
}

/// A camera frame as read, as an event ([`RunEvent::CameraFrame`]): the image, the stickers
/// found on it and the face it shows, when known.
pub fn frame_event(img: &RgbImage, reading: &FaceReading, face: Option<Face>) -> RunEvent {
    RunEvent::CameraFrame {
        face: face.map(Face::letter),
        n: reading.n,
        width: img.width,
        height: img.height,
        stickers: reading
            .stickers
            .iter()
            .map(|s| FrameSticker {
                quad: s.quad,
                rgb: s.rgb,
                detected: s.detected,
            })
            .collect(),
        image: FrameImage(std::sync::Arc::new(img.clone())),
    }
}

/// Each sticker's sampled colour at the facelet index its position stands for (`at`, image
/// row-major).
fn sampled(reading: &FaceReading, at: &[usize]) -> Vec<(usize, [f64; 3])> {
    reading
        .stickers
        .iter()
        .zip(at)
        .map(|(s, &f)| (f, s.rgb))
        .collect()
}

/// What the top face shows: for each top position (row-major), the colour of the sticker
/// there on `cube` and the facelet index `top` says it stands for.
fn top_shown(cube: &FaceletCube, top: &[usize]) -> Vec<(Face, usize)> {
    top.iter()
        .enumerate()
        .map(|(p, &f)| (cube.colors()[p], f))
        .collect()
}

/// The quarter turns (clockwise) that bring a top-face image (grid row-major = top
/// positions) into the facelet order of the face it shows; `top[p]` is the facelet index
/// top position `p` shows.
fn quarters_to_facelet_order(n: usize, top: &[usize]) -> Option<(Face, u8)> {
    let per = n * n;
    let face = *Face::ALL.get(top.first()? / per)?;
    (0..4u8).find_map(|q| {
        let ok = top.iter().enumerate().all(|(p, &f)| {
            let (mut r, mut c) = (p / n, p % n);
            for _ in 0..q {
                (r, c) = (c, n - 1 - r);
            }
            f == face.index() * per + r * n + c
        });
        ok.then_some((face, q))
    })
}

impl RunRobot for CameraRun {
    fn kind(&self) -> &'static str {
        self.inner().kind()
    }

    fn scan(
        &mut self,
        size: Size,
        progress: &mut dyn FnMut(ScanStep<'_>),
    ) -> Result<(RawScan, Orientation), RunError> {
        let n = size.n();
        let per = size.per_face();
        self.size = Some(size);
        let camera = &mut self.camera;
        let mut images: [Option<RgbImage>; 6] = Default::default();
        let orientation = match &mut self.robot {
            Presenter::Mc3(r) => r.present_faces(size, &mut |step, top, sim| {
                let sim = sim.ok_or_else(no_sim)?;
                let cube = sim.cube();
                let (img, reading) = camera.readable_frame(n, &top_shown(&cube, top))?;
                let (face, q) =
                    quarters_to_facelet_order(n, top).ok_or_else(|| CameraError::NotOneFace {
                        step,
                        top: top.to_vec(),
                    })?;
                let event = frame_event(&img, &reading, Some(face));
                let read = sampled(&reading, top);
                images[face.index()] = Some(img.rotated(q));
                progress(ScanStep {
                    done: (step + 1) * per,
                    total: 6 * per,
                    readings: &read,
                    frame: Some(&event),
                });
                Ok(())
            })?,
            Presenter::Line(r) => {
                let sim = r.sim.as_ref().ok_or_else(no_sim)?;
                let cube = sim.cube();
                if cube.colors().len() != size.stickers() {
                    return Err(CameraError::CubeSize {
                        stickers: cube.colors().len(),
                        size,
                    }
                    .into());
                }
                for face in Face::ALL {
                    let shown: Vec<(Face, usize)> = (0..per)
                        .map(|i| {
                            let f = face.index() * per + i;
                            (cube.colors()[f], f)
                        })
                        .collect();
                    let (img, reading) = camera.readable_frame(n, &shown)?;
                    let event = frame_event(&img, &reading, Some(face));
                    let at: Vec<usize> = shown.iter().map(|&(_, f)| f).collect();
                    let read = sampled(&reading, &at);
                    images[face.index()] = Some(img);
                    progress(ScanStep {
                        done: (face.index() + 1) * per,
                        total: 6 * per,
                        readings: &read,
                        frame: Some(&event),
                    });
                }
                Orientation::IDENTITY
            }
        };
        let images: Vec<RgbImage> = images
            .into_iter()
            .enumerate()
            .map(|(i, img)| img.ok_or(CameraError::FaceNotShown(Face::ALL[i].letter())))
            .collect::<Result<_, _>>()?;
        let images: [RgbImage; 6] = images.try_into().map_err(|_| CameraError::SixFrames)?;
        let mut raw = scan_faces(&images, n, None).map_err(CameraError::Vision)?;
        raw.provenance = Some(serde_json::json!({
            "source": "camera",
            "robot": self.inner().kind(),
            "simulated": true,
        }));
        Ok((raw, orientation))
    }

    fn scanner(&self) -> super::kind::ScannerKind {
        super::kind::ScannerKind::Camera
    }

    fn scan_scale(&self) -> Option<Scale> {
        Some(Scale::Rgb8)
    }

    fn rescan(&mut self, stickers: &[usize]) -> Result<Vec<[f64; 3]>, RunError> {
        let size = self.size.ok_or(CameraError::NotScanned)?;
        let (n, per) = (size.n(), size.per_face());
        let camera = &mut self.camera;
        let mut out = Vec::with_capacity(stickers.len());
        for &want in stickers {
            if want >= size.stickers() {
                return Err(CameraError::NoSuchSticker { want, size }.into());
            }
            // A fresh frame of the face showing the sticker; read it where it stands.
            let (img, at) = match &mut self.robot {
                Presenter::Mc3(r) => {
                    let (pos, sim) = r.present_sticker(want)?;
                    let cube = sim.ok_or_else(no_sim)?.cube();
                    let top = r.robot.top_facelets().ok_or(RunError::ScanFrameLost)?;
                    (camera.readable_frame(n, &top_shown(&cube, &top))?.0, pos)
                }
                Presenter::Line(r) => {
                    let cube = r.sim.as_ref().ok_or_else(no_sim)?.cube();
                    let base = want / per * per;
                    let shown: Vec<(Face, usize)> =
                        (base..base + per).map(|f| (cube.colors()[f], f)).collect();
                    (camera.readable_frame(n, &shown)?.0, want - base)
                }
            };
            let reading = read_face(&img, n, None).map_err(CameraError::Vision)?;
            let s = reading.stickers.get(at).ok_or(CameraError::FrameStickers {
                want,
                got: reading.stickers.len(),
            })?;
            out.push(s.rgb);
        }
        Ok(out)
    }

    fn planning(&self) -> Option<Box<dyn Planning + Send + Sync>> {
        self.inner().planning()
    }

    fn plan(&self, candidates: &[Alg], start: &RobotState) -> Result<RobotPlan, RunError> {
        self.inner().plan(candidates, start)
    }

    fn sequence_cost(&self, start: &RobotState) -> Option<SequenceCost> {
        self.inner().sequence_cost(start)
    }

    fn execute(
        &mut self,
        plan: &RobotPlan,
        progress: &mut dyn FnMut(Progress<'_>) -> Result<(), RunError>,
    ) -> Result<(), RunError> {
        self.inner_mut().execute(plan, progress)
    }

    fn settle(&mut self, in_flight: &[Action], cause: &RunError) -> Answer {
        self.inner_mut().settle(in_flight, cause)
    }

    fn rebase(&mut self, base: Orientation) {
        self.inner_mut().rebase(base)
    }

    fn stop(&mut self) -> Option<bool> {
        self.inner_mut().stop()
    }

    fn own_state(&mut self) -> Option<FaceletCube> {
        self.inner_mut().own_state()
    }

    fn orientation(&self) -> Orientation {
        self.inner().orientation()
    }

    fn mark_frame(&mut self, size: Size, base: Orientation) {
        self.size = Some(size);
        self.inner_mut().mark_frame(size, base)
    }

    fn read_back(&mut self) -> Option<(FaceletCube, FaceletCube)> {
        self.inner_mut().read_back()
    }

    fn sim_clock(&self) -> Option<f64> {
        self.inner().sim_clock()
    }

    fn reorients(&self) -> bool {
        self.inner().reorients()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_top_needs_no_turn() {
        let top: Vec<usize> = (0..9).collect();
        assert_eq!(quarters_to_facelet_order(3, &top), Some((Face::U, 0)));
    }

    #[test]
    fn a_spun_face_is_turned_back() {
        // The U face after y: the top position p shows the facelet the y permutation puts
        // there; one of the four quarter turns must restore the facelet order.
        let y = crate::cube::Move {
            kind: crate::cube::MoveKind::Rotation(crate::cube::Axis::Y),
            turn: crate::cube::Turn::Cw,
        };
        let perm = y.permutation(Size::Three);
        let top: Vec<usize> = perm.0[..9].iter().map(|&i| i as usize).collect();
        let (face, q) = quarters_to_facelet_order(3, &top).expect("a rotation of U");
        assert_eq!(face, Face::U);
        assert!(q == 1 || q == 3, "{q}");
    }

    #[test]
    fn a_mixed_top_is_rejected() {
        let mut top: Vec<usize> = (0..9).collect();
        top.swap(0, 1);
        assert_eq!(quarters_to_facelet_order(3, &top), None);
    }
}
