//! Colour resolution: raw sticker readings → CIELAB → the most likely legal cube, with
//! per-sticker confidence.
//!
//! Level: above `cube`, beside `solver`; depends on `cube` only. Must not depend on `solver`,
//! `scan`, `robot`, `job` or `cli`. No printing.

pub mod raw;
pub mod synth;

pub use raw::{RawScan, RawScanError, Scale};
pub use synth::{synth_scan, Appearance, Conditions, Palette};
pub mod profile;
pub mod resolve;
pub mod search;

pub use profile::Profile;
pub use resolve::{resolve, Resolution, ResolveError, ResolveOptions, StickerVerdict};
pub mod calibrate;
pub mod svg;
