//! The options of `bench resolve` and what one resolution of a labelled scan came to:
//! shared by the synthetic, real-data and profiled benchmarks, so that none of them
//! depends on another for these.
//!
//! Level: `cli`. Depends on `cube`, `color` and the synthetic-scan options of
//! [`crate::cli::color`].

use std::path::PathBuf;

use crate::cli::args::{PaletteArg, SizeArg};
use crate::cli::color::{parse_scale, ConditionArgs};
use crate::color::{RawScan, Resolution, ResolveError, Scale};
use crate::cube::{Face, FaceletCube, Size};

#[derive(clap::Args, Debug)]
pub struct BenchResolveArgs {
    /// Scans per condition.
    #[arg(long, default_value_t = 10_000, value_parser = crate::cli::args::at_least_one)]
    pub count: u64,
    /// Palettes (comma-separated); all four when left out.
    #[arg(long, value_enum, value_delimiter = ',', ignore_case = true)]
    pub palette: Vec<PaletteArg>,
    /// Scales (comma-separated): rgb8, ev3-raw, unit.
    #[arg(long, value_delimiter = ',', value_parser = parse_scale, default_value = "rgb8,ev3-raw")]
    pub scale: Vec<Scale>,
    /// Cube size.
    #[arg(long, value_enum, default_value_t = SizeArg::Three)]
    pub size: SizeArg,
    /// First seed.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = crate::cli::args::seed)]
    pub seed: u64,
    /// Instead of synthetic scans, resolve every case file (`*.json` with `expected`, like
    /// samples/realdata/cases) in this directory and report per case and per group.
    #[arg(long, value_name = "DIR")]
    pub realdata: Option<PathBuf>,
    /// With `--realdata`: leave one source out. Each source's scans are resolved under
    /// model constants and a margin calibration chosen on the other sources only.
    #[arg(long, requires = "realdata")]
    pub cross_validate: bool,
    /// With `--realdata`: also resolve N scans re-dealt from each labelled scan (its pieces'
    /// readings dealt into random cubes), seeded by `--seed`.
    #[arg(long, default_value_t = 0, value_name = "N", requires = "realdata",
          value_parser = clap::value_parser!(u64).range(0..=1000))]
    pub redeal: u64,
    /// With `--redeal`: also write each re-dealt scan to this directory as a case file
    /// (`<case>-redealt-<k>.json`, with its `expected` cube), to look at one closely.
    #[arg(long, value_name = "DIR", requires = "redeal")]
    pub write_redealt: Option<PathBuf>,
    /// Model constants other than the defaults, `NAME=VALUE` separated by commas (nu,
    /// light_prior, spread_prior, noise_scale, clipped_sigma, profile_weight, mean_spread, temperature); with `--cross-validate`, where the choice starts.
    #[arg(long, value_delimiter = ',')]
    pub model: Vec<String>,
    /// Resolve each synthetic scan twice: without a profile, and with one learned
    /// (`calibrate`) from a scan of the same cube, solved, in the same light; with
    /// `--realdata`: each labelled solved scan is a profile for the other scans of its source,
    /// size and scale.
    #[arg(long)]
    pub with_profile: bool,
    /// Leave one face of every scan unread before resolving it, so that the same seeded
    /// scans are scored with six faces and with five; comma-separated choices, each
    /// reported on its own: none (all six read), U, R, F, D, L, B, or last (R, the face the
    /// MindCub3r reads last, in the frame of the cube as it started).
    #[arg(long, value_delimiter = ',', value_parser = parse_unread_face,
          conflicts_with = "with_profile", value_name = "FACES")]
    pub unread_face: Vec<UnreadFace>,
    /// Doubt threshold in nats (see `resolve --doubt`).
    #[arg(long, allow_negative_numbers = true, default_value_t = crate::color::resolve::DEFAULT_DOUBT_NATS,
          value_parser = crate::cli::args::finite_non_negative)]
    pub doubt: f64,
    /// Worker threads (timings are per scan on one thread each).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    #[command(flatten)]
    pub conditions: Box<ConditionArgs>,
}

/// One choice of `--unread-face`: every face read, or one face left unread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnreadFace(pub Option<Face>);

impl UnreadFace {
    /// As the option names it: `none`, or the face's letter.
    pub fn name(self) -> String {
        self.0
            .map_or("none".to_string(), |f| f.letter().to_string())
    }

    /// `scan` with this face's stickers unread (unchanged for `none`).
    pub fn apply(self, scan: &RawScan) -> RawScan {
        match self.0 {
            Some(face) => scan.without_face(face),
            None => scan.clone(),
        }
    }
}

fn parse_unread_face(s: &str) -> Result<UnreadFace, String> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("none") {
        return Ok(UnreadFace(None));
    }
    if t.eq_ignore_ascii_case("last") {
        return Ok(UnreadFace(Some(Face::R)));
    }
    let mut chars = t.chars();
    match (chars.next().map(|c| c.to_ascii_uppercase()), chars.next()) {
        (Some(c), None) => Face::from_letter(c).map(|f| UnreadFace(Some(f))),
        _ => None,
    }
    .ok_or_else(|| format!("unknown face {s:?}: expected none, U, R, F, D, L, B or last"))
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Outcome {
    Exact,
    /// In doubt; whether the best guess is the scanned cube.
    Doubt(bool),
    Wrong,
    Invalid,
}

/// What a resolution of a scan of `cube` came to.
pub(super) fn outcome(r: &Result<Resolution, ResolveError>, cube: &FaceletCube) -> Outcome {
    let is = |res: &Resolution| match cube.size() {
        Size::Three => res.cube.colors() == cube.colors(),
        Size::Two => {
            FaceletCube::parse(&cube.to_letters())
                .map(|c| c.colors().to_vec())
                .ok()
                .as_deref()
                == Some(res.cube.colors())
        }
    };
    match r {
        Ok(res) if is(res) => Outcome::Exact,
        Ok(_) => Outcome::Wrong,
        Err(ResolveError::Ambiguous { best, .. }) => Outcome::Doubt(is(best)),
        Err(_) => Outcome::Invalid,
    }
}
