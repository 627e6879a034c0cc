//! Colour resolution: raw sticker readings → CIELAB → the most likely legal cube, with
//! per-sticker confidence.
//!
//! Level: depends on `cube` only. No printing.

pub mod raw;

pub use raw::{RawScan, RawScanError, Scale};
