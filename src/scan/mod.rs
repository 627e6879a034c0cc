//! Scan sources: image files and cameras (sticker detection with OpenCV), producing
//! [`RawScan`]s for the colour resolver.
//!
//! Level: depends on `color` and `cube`. No printing.

pub use crate::color::raw::{RawScan, RawScanError, Scale};
