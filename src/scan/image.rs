//! A plain 8-bit RGB image ([`RgbImage`]) that the rest of the crate can use without OpenCV
//! types: renders produce it, detection and sampling read it, cameras fill it.
//!
//! Level: bottom of `scan` (pure Rust, no OpenCV); depends on nothing in the crate. Must not
//! depend on detection or anything above `scan`.

/// Interleaved 8-bit RGB, row-major, no padding: pixel `(x, y)` is at `3 * (y * width + x)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RgbImage {
    pub width: usize,
    pub height: usize,
    pub data: Vec<u8>,
}

impl RgbImage {
    /// A `width` x `height` image filled with `fill`.
    pub fn new(width: usize, height: usize, fill: [u8; 3]) -> RgbImage {
        let mut data = Vec::with_capacity(width * height * 3);
        for _ in 0..width * height {
            data.extend_from_slice(&fill);
        }
        RgbImage {
            width,
            height,
            data,
        }
    }

    /// Wraps raw RGB bytes; `None` when the length does not match.
    pub fn from_raw(width: usize, height: usize, data: Vec<u8>) -> Option<RgbImage> {
        (data.len() == width * height * 3).then_some(RgbImage {
            width,
            height,
            data,
        })
    }

    /// The pixel at `(x, y)` (panics outside the image: callers clip first).
    #[inline]
    pub fn get(&self, x: usize, y: usize) -> [u8; 3] {
        let i = 3 * (y * self.width + x);
        [self.data[i], self.data[i + 1], self.data[i + 2]]
    }

    #[inline]
    pub fn put(&mut self, x: usize, y: usize, rgb: [u8; 3]) {
        let i = 3 * (y * self.width + x);
        self.data[i..i + 3].copy_from_slice(&rgb);
    }

    /// Whether the image has no pixels.
    pub fn is_empty(&self) -> bool {
        self.width == 0 || self.height == 0
    }

    /// The image turned a quarter clockwise `quarters` times.
    pub fn rotated(&self, quarters: u8) -> RgbImage {
        let q = quarters % 4;
        if q == 0 {
            return self.clone();
        }
        let (w, h) = (self.width, self.height);
        let (nw, nh) = if q % 2 == 1 { (h, w) } else { (w, h) };
        let mut out = RgbImage::new(nw, nh, [0, 0, 0]);
        for y in 0..h {
            for x in 0..w {
                let (nx, ny) = match q {
                    1 => (h - 1 - y, x),
                    2 => (w - 1 - x, h - 1 - y),
                    _ => (y, w - 1 - x),
                };
                out.put(nx, ny, self.get(x, y));
            }
        }
        out
    }
}

/// Rec. 601 luma of an 8-bit RGB pixel.
#[inline]
pub fn luma(p: [u8; 3]) -> f64 {
    0.299 * p[0] as f64 + 0.587 * p[1] as f64 + 0.114 * p[2] as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_moves_corners_clockwise() {
        let mut img = RgbImage::new(3, 2, [0, 0, 0]);
        img.put(0, 0, [1, 0, 0]);
        let r = img.rotated(1);
        assert_eq!((r.width, r.height), (2, 3));
        assert_eq!(r.get(1, 0), [1, 0, 0]);
        assert_eq!(img.rotated(4), img);
        assert_eq!(img.rotated(1).rotated(3), img);
    }

    #[test]
    fn from_raw_checks_length() {
        assert!(RgbImage::from_raw(2, 2, vec![0; 11]).is_none());
        assert!(RgbImage::from_raw(2, 2, vec![0; 12]).is_some());
    }
}
