//! `validate`, `show`, `apply`, `random`, `invert`, `simplify`: the command-line face of
//! [`crate::cube`].
//!
//! Level: `cli`. Depends on `cube` and the shared cli argument and input helpers.

use anyhow::{Context, Result};
use rand::SeedableRng;
use serde_json::json;

use super::args::SizeArg;
use super::input::{at_line, for_each_state, single_state};
use super::output::{color_stdout, json_line};
use super::{Answer, CmdResult, Exit, Global};
use crate::cube::{
    net_svg, net_text, random_state, validate as check, Alg, FaceletCube, NetStyle, Size,
};

#[derive(clap::Args, Debug)]
pub struct ValidateArgs {
    /// A facelet string (54 or 24 symbols, URFDLB order), `solved` (see --size), @FILE, or
    /// - for stdin (one a line).
    pub state: String,
    /// Size of `solved`.
    #[arg(long, value_enum, default_value_t = SizeArg::Three)]
    pub size: SizeArg,
}

#[derive(clap::Args, Debug)]
pub struct ShowArgs {
    /// A facelet string, @FILE, `solved` or - for stdin.
    pub state: String,
    /// Also write the net as an SVG file.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<std::path::PathBuf>,
    /// Size of `solved`.
    #[arg(long, value_enum, default_value_t = SizeArg::Three)]
    pub size: SizeArg,
}

#[derive(clap::Args, Debug)]
pub struct ApplyArgs {
    /// A facelet string, @FILE, `solved` (see --size) or - for stdin.
    pub state: String,
    /// Moves, e.g. "R U R' U'" or "(R U R' U')3".
    pub moves: String,
    /// Size of `solved`.
    #[arg(long, value_enum, default_value_t = SizeArg::Three)]
    pub size: SizeArg,
}

#[derive(clap::Args, Debug)]
pub struct RandomArgs {
    /// Cube size.
    #[arg(long, value_enum, default_value_t = SizeArg::Three)]
    pub size: SizeArg,
    /// Random seed (the same seed gives the same states); printed on stderr when left out.
    #[arg(long)]
    pub seed: Option<u64>,
    /// How many states (at least 1).
    #[arg(long, default_value_t = 1, value_parser = super::args::at_least_one)]
    pub count: u64,
}

#[derive(clap::Args, Debug)]
pub struct MovesArgs {
    /// A move sequence.
    pub moves: String,
    /// Print in the numeric style (R1 R2 R3).
    #[arg(long)]
    pub numeric: bool,
}

/// Parses a state that may be the word `solved`.
pub fn parse_state(s: &str, size: Size) -> Result<FaceletCube, crate::cube::ParseError> {
    if s.eq_ignore_ascii_case("solved") {
        return Ok(FaceletCube::solved(size));
    }
    FaceletCube::parse(s)
}

/// Every problem of an invalid cube as JSON: its fields plus a `message`.
pub fn problems_json(invalid: &crate::cube::InvalidCube) -> Vec<serde_json::Value> {
    invalid
        .problems
        .iter()
        .map(|p| {
            let mut v = serde_json::to_value(p).unwrap_or(json!({}));
            v["message"] = json!(p.to_string());
            v
        })
        .collect()
}

pub fn validate(a: ValidateArgs, g: &Global) -> CmdResult {
    // `solved` is a legal state, as `show` and `apply` read it.
    let check = |s: &str| match s.trim().eq_ignore_ascii_case("solved") {
        true => Ok(FaceletCube::solved(a.size.into())),
        false => check(s),
    };
    for_each_state(&a.state, |line, s| match check(s) {
        Ok(cube) => {
            if g.json {
                json_line(
                    // The facelet string, also for a word such as `solved`.
                    &json!({"type": "validation", "state": cube.to_string(), "line": line, "valid": true, "size": cube.size().n()}),
                );
            } else {
                outln!("valid");
            }
            Ok(Answer::Yes)
        }
        Err(invalid) => {
            if g.json {
                let problems = problems_json(&invalid);
                json_line(
                    &json!({"type": "validation", "state": s, "line": line, "valid": false, "problems": problems}),
                );
            } else {
                let list: Vec<String> = invalid.problems.iter().map(|p| p.to_string()).collect();
                // Not a cube's facelet string at all (exit 2) is told apart from a real
                // cube that is illegal (exit 1) by its first word.
                let word = if invalid.is_unreadable() {
                    "malformed"
                } else {
                    "invalid"
                };
                outln!("{word}{}: {}", at_line(line), list.join("; "));
            }
            if invalid.is_unreadable() {
                if let Some(hint) = super::input::file_hint(s) {
                    errln!("hint: {hint}");
                }
            }
            // Not a facelet string at all is bad input; a readable state that is not a
            // legal cube is the well-formed "no".
            Ok(if invalid.is_unreadable() {
                Answer::BadInput
            } else {
                Answer::No
            })
        }
    })
}

pub fn show(a: ShowArgs, g: &Global) -> CmdResult {
    if let Some(p) = &a.svg {
        super::outfile::check_output(p, "--svg", super::outfile::Writes::Svg)?;
    }
    let text = single_state(&a.state)?;
    let cube = match parse_state(&text, Size::from(a.size)) {
        Ok(c) => c,
        Err(e) => {
            errln!("cannot draw {text:?}: {e}");
            if let Some(hint) = super::input::file_hint(&text).filter(|_| e.is_unreadable()) {
                errln!("hint: {hint}");
            }
            return if e.is_unreadable() {
                Answer::BadInput.exit()
            } else {
                Ok(Exit::No)
            };
        }
    };
    let style = NetStyle::for_cube(&cube);
    if let Some(path) = &a.svg {
        std::fs::write(path, net_svg(&cube, &style))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if g.json {
        json_line(
            &json!({"type": "net", "state": cube.to_string(), "size": cube.size().n(),
            "svg": a.svg.as_ref().map(|p| p.display().to_string())}),
        );
    } else {
        out!("{}", net_text(&cube, &style, color_stdout()));
    }
    Ok(Exit::Ok)
}

pub fn apply(a: ApplyArgs, g: &Global) -> CmdResult {
    let alg = Alg::parse(&a.moves).with_context(|| format!("cannot read moves {:?}", a.moves))?;
    let size = Size::from(a.size);
    for_each_state(&a.state, |line, s| {
        let mut cube = match parse_state(s, size) {
            Ok(c) => c,
            Err(e) => {
                if g.json {
                    json_line(
                        &json!({"type": "error", "state": s, "line": line, "message": e.to_string()}),
                    );
                } else {
                    outln!("error{}: {e}", at_line(line));
                }
                return Ok(if e.is_unreadable() {
                    Answer::BadInput
                } else {
                    Answer::No
                });
            }
        };
        if let Err(mv) = cube.apply(&alg) {
            anyhow::bail!(
                "{mv} needs a middle layer, which a {} does not have",
                cube.size()
            );
        }
        if g.json {
            json_line(
                &json!({"type": "state", "state": cube.to_string(), "solved": cube.is_solved()}),
            );
        } else {
            outln!("{cube}");
        }
        Ok(Answer::Yes)
    })
}

pub fn random(a: RandomArgs, g: &Global) -> CmdResult {
    let seed = a.seed.unwrap_or_else(rand::random);
    if a.seed.is_none() && !g.quiet {
        errln!("seed {seed}");
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..a.count {
        let cube = random_state(Size::from(a.size), &mut rng);
        if g.json {
            json_line(&json!({"type": "state", "state": cube.to_string(), "seed": seed}));
        } else {
            outln!("{cube}");
        }
    }
    Ok(Exit::Ok)
}

fn print_alg(alg: &Alg, numeric: bool, g: &Global) {
    let text = if numeric {
        alg.to_numeric()
    } else {
        alg.to_string()
    };
    if g.json {
        json_line(&json!({"type": "moves", "moves": text, "htm": alg.htm(), "qtm": alg.qtm()}));
    } else {
        outln!("{text}");
    }
}

pub fn invert(a: MovesArgs, g: &Global) -> CmdResult {
    let alg = Alg::parse(&a.moves).with_context(|| format!("cannot read moves {:?}", a.moves))?;
    print_alg(&alg.inverse(), a.numeric, g);
    Ok(Exit::Ok)
}

pub fn simplify(a: MovesArgs, g: &Global) -> CmdResult {
    let alg = Alg::parse(&a.moves).with_context(|| format!("cannot read moves {:?}", a.moves))?;
    print_alg(&alg.simplified(), a.numeric, g);
    Ok(Exit::Ok)
}
