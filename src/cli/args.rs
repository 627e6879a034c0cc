//! Argument types shared by the commands: the options every command takes ([`Global`]) and
//! the typed values clap checks at parse time ([`PaletteArg`], [`SizeArg`], [`RobotKind`],
//! [`ScannerKind`]), and the checks every numeric flag goes through at parse time
//! ([`finite_non_negative`], [`finite_positive`], [`unit_interval`], [`sim_speed`],
//! [`latency_ms`], [`millis`]): a value that is not finite or not in its range is refused
//! by clap with the flag named (exit 2) before any command runs.
//!
//! Level: `cli`. Depends on `cube` and `color` for the types the values convert into;
//! nothing here prints or reads files.

use crate::color::synth::Palette;
use crate::cube::Size;

/// Options every subcommand takes.
#[derive(clap::Args, Debug, Clone)]
pub struct Global {
    /// Print JSON Lines (one object per line, each with a "type") instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    /// More detail on stderr.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// No progress bars or notes on stderr.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Where solver tables and run journals are kept (else $CUBOT_CACHE_DIR, else the platform cache dir).
    #[arg(long, global = true, value_name = "DIR", value_parser = cache_folder)]
    pub cache_dir: Option<std::path::PathBuf>,
}

/// `--cache-dir`: a folder, made when missing; refused at once when it names a file (the
/// tables would be built for nothing and then not saved).
fn cache_folder(s: &str) -> Result<std::path::PathBuf, String> {
    let p = std::path::PathBuf::from(s);
    match std::fs::metadata(&p) {
        Ok(m) if !m.is_dir() => Err(format!(
            "{s} is a file, not a folder: --cache-dir names the folder where the solver's tables and the run journals are kept (it is made when missing)"
        )),
        _ => Ok(p),
    }
}

/// Fastest simulated speed (`--speed` of `sim` and `run --sim`): simulated seconds per wall
/// second. Faster than this, the simulator's waits round to nothing and it spins.
pub const MAX_SIM_SPEED: f64 = 10_000.0;

/// Longest simulated transport latency (`sim --latency`), in milliseconds.
pub const MAX_LATENCY_MS: f64 = 60_000.0;

/// Longest time limit in milliseconds a flag accepts (`--timeout`, `--search-ms`): one day.
pub const MAX_MILLIS: u64 = 86_400_000;

fn finite(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number"))?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("{s} is not a finite number"))
    }
}

fn in_range(s: &str, lo: f64, hi: f64, lo_open: bool, what: &str) -> Result<f64, String> {
    let v = finite(s)?;
    let low_ok = if lo_open { v > lo } else { v >= lo };
    if low_ok && v <= hi {
        Ok(v)
    } else {
        Err(format!("{} is out of range: {what}", s.trim()))
    }
}

/// A finite number ≥ 0 (thresholds, spreads).
pub fn finite_non_negative(s: &str) -> Result<f64, String> {
    in_range(s, 0.0, f64::MAX, false, "expected a finite number ≥ 0")
}

/// A finite number > 0.
pub fn finite_positive(s: &str) -> Result<f64, String> {
    in_range(s, 0.0, f64::MAX, true, "expected a finite number > 0")
}

/// A share: a number in 0..=1.
pub fn unit_interval(s: &str) -> Result<f64, String> {
    in_range(s, 0.0, 1.0, false, "expected a number from 0 to 1")
}

/// A simulator speed: > 0 and at most [`MAX_SIM_SPEED`].
pub fn sim_speed(s: &str) -> Result<f64, String> {
    in_range(
        s,
        0.0,
        MAX_SIM_SPEED,
        true,
        &format!("expected a number > 0 and at most {MAX_SIM_SPEED}"),
    )
}

/// A seed: any whole number from 0 to 2^64 - 1 (the same seed, the same cube and noise).
pub fn seed(s: &str) -> Result<u64, String> {
    s.trim().parse::<u64>().map_err(|_| {
        format!(
            "expected a whole number from 0 to {} (any: the same seed gives the same result)",
            u64::MAX
        )
    })
}

/// A simulated latency in ms: 0 to [`MAX_LATENCY_MS`].
pub fn latency_ms(s: &str) -> Result<f64, String> {
    in_range(
        s,
        0.0,
        MAX_LATENCY_MS,
        false,
        &format!("expected milliseconds from 0 to {MAX_LATENCY_MS}"),
    )
}

/// A count of at least 1.
pub fn at_least_one(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(v) => Ok(v),
        Err(_) => Err(format!("{s:?} is not a whole number ≥ 1")),
    }
}

/// A time limit in whole milliseconds: 0 to [`MAX_MILLIS`].
pub fn millis(s: &str) -> Result<u64, String> {
    let v: u64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a whole number of milliseconds"))?;
    if v <= MAX_MILLIS {
        Ok(v)
    } else {
        Err(format!(
            "{v} is out of range: at most {MAX_MILLIS} ms (one day)"
        ))
    }
}

/// A sticker palette of the synthetic scans and the simulated cube (`--palette`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaletteArg {
    /// White, red, green, yellow, orange, blue on U R F D L B.
    Standard,
    /// A speedcube with pink in place of white.
    #[value(alias = "nowhite")]
    NoWhite,
    /// Fluorescent stickers.
    Fluorescent,
    /// An old cube: yellowed white, dull colours.
    Faded,
}

impl PaletteArg {
    /// Every palette, in the order benchmarks report them.
    pub const ALL: [PaletteArg; 4] = [
        PaletteArg::Standard,
        PaletteArg::NoWhite,
        PaletteArg::Fluorescent,
        PaletteArg::Faded,
    ];
}

impl From<PaletteArg> for Palette {
    fn from(p: PaletteArg) -> Palette {
        match p {
            PaletteArg::Standard => Palette::Standard,
            PaletteArg::NoWhite => Palette::NoWhite,
            PaletteArg::Fluorescent => Palette::Fluorescent,
            PaletteArg::Faded => Palette::Faded,
        }
    }
}

/// A cube size (`--size 3` or `--size 2`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeArg {
    /// 3x3x3.
    #[value(name = "3")]
    Three,
    /// 2x2x2.
    #[value(name = "2")]
    Two,
}

impl SizeArg {
    /// Stickers along an edge: 3 or 2.
    pub fn n(self) -> usize {
        Size::from(self).n()
    }
}

impl From<SizeArg> for Size {
    fn from(s: SizeArg) -> Size {
        match s {
            SizeArg::Three => Size::Three,
            SizeArg::Two => Size::Two,
        }
    }
}

/// The robot a job drives (`--robot`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RobotKind {
    /// LEGO EV3 MindCub3r (EV3 direct commands).
    Mindcub3r,
    /// A line-protocol robot (one motor per face, or five).
    Line,
}

/// How a job reads the cube's colours (`--scanner`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScannerKind {
    /// The robot's own colour sensor(s).
    Sensor,
    /// A fixed camera looking at the top face (the simulator renders frames).
    Camera,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_flags_refuse_what_is_not_finite_or_in_range() {
        for bad in ["nan", "NaN", "inf", "-inf", "1e309", "", "x", "-1"] {
            assert!(finite_non_negative(bad).is_err(), "{bad}");
            assert!(finite_positive(bad).is_err(), "{bad}");
            assert!(sim_speed(bad).is_err(), "{bad}");
            assert!(latency_ms(bad).is_err(), "{bad}");
            assert!(unit_interval(bad).is_err(), "{bad}");
        }
        assert_eq!(finite_non_negative("0"), Ok(0.0));
        assert!(finite_positive("0").is_err());
        assert!(sim_speed("1e9").is_err());
        assert_eq!(sim_speed("10000"), Ok(MAX_SIM_SPEED));
        assert!(unit_interval("1.5").is_err());
        assert_eq!(millis("1500"), Ok(1500));
        assert!(millis("18446744073709551615").is_err());
        assert!(millis("-1").is_err());
        assert_eq!(at_least_one("0"), Err("must be at least 1".to_string()));
        assert_eq!(at_least_one("7"), Ok(7));
        assert!(at_least_one("-1").is_err());
    }

    #[test]
    fn palette_values_match_the_palette_names() {
        use clap::ValueEnum;
        for p in PaletteArg::ALL {
            let name = p
                .to_possible_value()
                .expect("visible")
                .get_name()
                .to_string();
            assert_eq!(name, Palette::from(p).name());
        }
        assert_eq!(
            PaletteArg::ALL.map(Palette::from),
            Palette::ALL,
            "same order as the library's list"
        );
    }
}

/// Which brick a simulated MindCub3r runs on.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BrickArg {
    /// cubot's own simulated brick.
    #[default]
    Ours,
    /// LEGO's EV3 firmware (lms2012) with LEGO's motor driver, built by
    /// `scripts/firmware-brick.sh`.
    Lms2012,
}

/// The simulated brick's choice, for every command that can start one.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct BrickArgs {
    /// The simulated MindCub3r's brick (with --sim, or `sim --pty`): `ours` (cubot's simulated brick) or `lms2012`
    /// (LEGO's own EV3 firmware and motor driver, built by scripts/firmware-brick.sh).
    #[arg(long, global = true, value_enum, default_value_t = BrickArg::Ours)]
    pub brick: BrickArg,
    /// With --brick lms2012: the firmware brick's build folder (default:
    /// $CUBOT_LMS2012_DIR, else target/lms2012).
    #[arg(long, global = true, value_name = "DIR")]
    pub lms2012: Option<std::path::PathBuf>,
}

impl BrickArgs {
    /// Refuses a choice that would be ignored: a brick for a real robot (it brings its own)
    /// or for the line robot (it has no EV3 brick), and a firmware build folder for cubot's
    /// own brick.
    pub fn check(&self, sim: bool, mindcub3r: bool) -> anyhow::Result<()> {
        if self.brick == BrickArg::Ours && self.lms2012.is_none() {
            return Ok(());
        }
        let flags = match (self.brick, &self.lms2012) {
            (BrickArg::Lms2012, Some(_)) => "--brick and --lms2012 choose",
            (BrickArg::Lms2012, None) => "--brick chooses",
            (BrickArg::Ours, _) => "--lms2012 chooses",
        };
        if !sim {
            anyhow::bail!(
                "{flags} the simulator's brick: add --sim, or leave it out for a real robot"
            );
        }
        if !mindcub3r {
            anyhow::bail!("{flags} the MindCub3r's simulated EV3 brick: the line robot has none, leave it out");
        }
        if self.brick == BrickArg::Ours {
            anyhow::bail!(
                "--lms2012 DIR is the firmware brick's build folder: add --brick lms2012"
            );
        }
        Ok(())
    }

    pub fn kind(&self) -> crate::robot::sim::lms2012::BrickKind {
        use crate::robot::sim::lms2012::BrickKind;
        match self.brick {
            BrickArg::Ours => BrickKind::Ours,
            BrickArg::Lms2012 => BrickKind::Lms2012(self.lms2012.clone()),
        }
    }
}
