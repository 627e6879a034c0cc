//! Argument types shared by the commands: the options every command takes ([`Global`]) and
//! the typed values clap checks at parse time ([`PaletteArg`], [`SizeArg`], [`RobotKind`],
//! [`ScannerKind`]).
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
    /// Where solver tables are cached (else $CUBOT_CACHE_DIR, else the platform cache dir).
    #[arg(long, global = true, value_name = "DIR")]
    pub cache_dir: Option<std::path::PathBuf>,
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
