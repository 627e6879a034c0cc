//! Live cameras via nokhwa: listing them and grabbing RGB frames.
//!
//! Level: part of `scan` (feature `camera`); depends on `scan::image`. Must not depend on the
//! detection or anything above `scan`.

use nokhwa::pixel_format::RgbFormat;
use nokhwa::utils::{ApiBackend, CameraIndex, RequestedFormat, RequestedFormatType};
use nokhwa::Camera;

use super::image::RgbImage;
use super::VisionError;

/// One camera the platform reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CameraInfo {
    pub index: String,
    pub name: String,
    pub description: String,
}

/// The cameras found (an empty list when there are none or the backend cannot be queried;
/// the reason is in the error).
pub fn list_cameras() -> Result<Vec<CameraInfo>, VisionError> {
    let infos = nokhwa::query(ApiBackend::Auto).map_err(|e| VisionError::Camera {
        index: 0,
        reason: format!("cannot query cameras: {e}"),
        found: None,
    })?;
    Ok(infos
        .iter()
        .map(|i| CameraInfo {
            index: i.index().to_string(),
            name: i.human_name(),
            description: i.description().to_string(),
        })
        .collect())
}

/// Why camera `index` did not open, in words: on Linux its device node is looked at first
/// (absent: no such camera; not readable: a permission to get), else the backend's reason.
fn open_failure(index: u32, backend: &str) -> String {
    let node = std::path::PathBuf::from(format!("/dev/video{index}"));
    if cfg!(target_os = "linux") {
        if !node.exists() {
            return format!("no such camera (there is no {})", node.display());
        }
        if std::fs::File::open(&node)
            .is_err_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied)
        {
            return format!(
                "this user may not open {}: join the `video` group (`sudo adduser $USER video`, then log in again)",
                node.display()
            );
        }
    }
    format!("cannot open ({backend})")
}

fn found_text() -> String {
    match list_cameras() {
        Ok(v) if v.is_empty() => "none".into(),
        Ok(v) => v
            .iter()
            .map(|c| format!("{} ({})", c.index, c.name))
            .collect::<Vec<_>>()
            .join(", "),
        Err(e) => format!("none ({e})"),
    }
}

/// An open camera streaming RGB frames.
pub struct Capture {
    camera: Camera,
    index: u32,
}

impl Capture {
    /// Opens camera `index` at its highest resolution. The error lists the cameras found.
    pub fn open(index: u32) -> Result<Capture, VisionError> {
        let format =
            RequestedFormat::new::<RgbFormat>(RequestedFormatType::AbsoluteHighestResolution);
        let mut camera =
            Camera::new(CameraIndex::Index(index), format).map_err(|e| VisionError::Camera {
                index,
                reason: open_failure(index, &e.to_string()),
                found: Some(found_text()),
            })?;
        camera.open_stream().map_err(|e| VisionError::Camera {
            index,
            reason: format!("cannot start streaming: {e}"),
            found: Some(found_text()),
        })?;
        Ok(Capture { camera, index })
    }

    /// Grabs one frame (after dropping `skip` frames, so that exposure settles).
    pub fn frame(&mut self, skip: usize) -> Result<RgbImage, VisionError> {
        let err = |e: nokhwa::NokhwaError, index| VisionError::Camera {
            index,
            reason: format!("cannot read a frame: {e}"),
            found: None,
        };
        for _ in 0..skip {
            self.camera.frame().map_err(|e| err(e, self.index))?;
        }
        let buf = self.camera.frame().map_err(|e| err(e, self.index))?;
        let res = buf.resolution();
        let (w, h) = (res.width() as usize, res.height() as usize);
        let mut data = vec![0u8; w * h * 3];
        buf.decode_image_to_buffer::<RgbFormat>(&mut data)
            .map_err(|e| err(e, self.index))?;
        RgbImage::from_raw(w, h, data).ok_or_else(|| VisionError::Camera {
            index: self.index,
            reason: "frame size does not match its resolution".into(),
            found: None,
        })
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        let _ = self.camera.stop_stream();
    }
}
