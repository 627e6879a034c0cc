//! The `cubot` command line. The only module that prints.
//!
//! Level: top; depends on every other module, nothing depends on it. This file declares the
//! commands and routes each to its module; shared argument types live in [`args`], shared
//! helpers in [`common`], benchmarks in [`bench`](mod@bench).
//!
//! Exit codes: 0 ok; 1 a well-formed "no" (a readable state that is not a legal cube, an
//! ambiguous scan, no solution within the limits, a target not reached); 2 an operational
//! error or malformed input (bad usage, text that is not a facelet string, start and target
//! in different symbols, I/O, a dead serial port, a robot that stops answering); 130
//! Ctrl-C where nothing moves, or a second Ctrl-C. A command answering several states (`-`,
//! `@FILE`) answers each on its own line and exits with the gravest answer's code
//! ([`Answer`]).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// `println!` for command output: when stdout is closed early (`cubot … | head`) the
/// line is dropped instead of the panic `println!` would raise, and the command ends as
/// it would have (a batch `solve -` stops after its current chunk).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        $crate::cli::output::note_write(writeln!(std::io::stdout().lock(), $($arg)*));
    }};
}

/// `eprintln!` for messages: when stderr is closed early (`cubot run … 2>&1 | head`), the
/// message is dropped instead of the panic `eprintln!` would raise, so a run on a robot
/// goes on to its end (or its stop) and leaves the robot as a run always does.
/// A progress bar on screen is cleared first and drawn again below the line, so that the
/// line starts at the left margin (see [`output::above_bar`]).
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        $crate::cli::output::above_bar(|| {
            let _ = writeln!(std::io::stderr().lock(), $($arg)*);
        });
    }};
}

/// `print!` with the same treatment of a closed stdout as [`outln!`].
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        $crate::cli::output::note_write(write!(std::io::stdout().lock(), $($arg)*));
    }};
}

pub mod args;
pub mod bench;
pub mod camera;
pub mod color;
pub mod common;
pub mod connect;
pub mod cube;
pub mod input;
pub mod journals;
pub mod outfile;
pub mod output;
pub mod robot;
pub mod run;
pub mod scan;
pub mod scan_images;
pub mod session;
pub mod solve;
pub mod timings;
pub mod view;

pub use args::Global;
pub use output::Out;

/// What a command concluded when it did not fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Exit 0.
    Ok,
    /// Exit 1: a well-formed "no".
    No,
}

/// One answer of a command that answers its inputs one by one (`validate -`, `solve @FILE`):
/// the command exits with its gravest answer's code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Answer {
    /// Exit 0.
    Yes,
    /// Exit 1: a well-formed "no" (a readable state that is not a legal cube).
    No,
    /// Exit 2: malformed input (text that is not a facelet string, start and target in
    /// different symbols); the answer's own line says what is wrong.
    BadInput,
}

impl Answer {
    /// The graver of two answers.
    pub fn and(self, other: Answer) -> Answer {
        self.max(other)
    }

    /// The command's outcome: malformed input is an error already told ([`AnswerTold`]).
    pub fn exit(self) -> CmdResult {
        match self {
            Answer::Yes => Ok(Exit::Ok),
            Answer::No => Ok(Exit::No),
            Answer::BadInput => Err(AnswerTold.into()),
        }
    }
}

/// The error of a command whose malformed input was told in its answers (stdout): exit 2
/// with nothing more printed.
#[derive(Debug, thiserror::Error)]
#[error("malformed input (see the answers on stdout)")]
pub struct AnswerTold;

pub type CmdResult = anyhow::Result<Exit>;

const EXIT_HELP: &str =
    "Exit codes: 0 ok; 1 a well-formed \"no\" (invalid cube, ambiguous scan, no solution \
within the limits, target not reached); 2 operational error (bad usage, unreadable input, I/O, \
serial port, robot); 130 Ctrl-C where nothing moves, or a second Ctrl-C.";

/// Scan, resolve, validate, solve and execute on a cube robot.
#[derive(Parser, Debug)]
#[command(name = "cubot", version, about, after_help = EXIT_HELP)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Check a state: prints `valid` or every problem found.
    Validate(cube::ValidateArgs),
    /// Draw the unfolded net (terminal colours, or an SVG file).
    Show(cube::ShowArgs),
    /// Apply moves to a state and print the result.
    Apply(cube::ApplyArgs),
    /// Seeded uniformly random states, one a line.
    Random(cube::RandomArgs),
    /// Print the inverse of a move sequence.
    Invert(cube::MovesArgs),
    /// Cancel and merge moves in a sequence.
    Simplify(cube::MovesArgs),
    /// Solve a state (to solved or to a target).
    Solve(solve::SolveArgs),
    /// Build, check or locate the solver's cached tables.
    Tables(solve::TablesArgs),
    /// Resolve a raw colour scan to a cube.
    Resolve(color::ResolveArgs),
    /// Learn a colour profile from a scan of a solved cube: a scan file, or a scan on the robot.
    Calibrate(color::CalibrateArgs),
    /// Generate seeded synthetic scans.
    SynthScan(color::SynthScanArgs),
    /// Scan a cube: from face images, a camera or the robot's colour sensor.
    Scan(scan::ScanArgs),
    /// Detect the sticker grid once and store it as a camera rig (fixed sticker regions).
    CalibrateCamera(camera::CalibrateCameraArgs),
    /// Cameras.
    Camera(camera::CameraArgs),
    /// Ports a brick may be on: EV3s on USB and serial ports (Bluetooth), with the bricks' names.
    Ports(robot::PortsArgs),
    /// The simulated EV3 MindCub3r brick (or line-protocol robot) on a pseudo-terminal.
    Sim(robot::SimArgs),
    /// Check a MindCub3r before its first run, or drive it step by step (home, tilt, spin, turn, read).
    Robot(robot::RobotArgs),
    /// The whole job: scan, resolve, solve, plan, execute, verify.
    Run(run::RunArgs),
    /// Scan the cube on the robot and store its state.
    Save(run::SaveArgs),
    /// Put the cube on the robot into a saved state.
    Restore(run::RestoreArgs),
    /// The run journals, newest first, with what became of each run; --prune old ones.
    Journals(journals::JournalsArgs),
    /// Benchmarks.
    Bench(bench::BenchArgs),
    /// The live page's history: past runs' journals, listed and replayed in a browser.
    View(view::ViewCmdArgs),
}

/// Runs the program; maps the outcome to the documented exit codes.
pub fn main() -> ExitCode {
    use clap::{CommandFactory, FromArgMatches};
    let cli = match negative_numbers_read(Cli::command())
        .try_get_matches()
        .and_then(|m| {
            remember_given(&m);
            Cli::from_arg_matches(&m)
        }) {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let global = cli.global.clone();
    output::set_wire_log(global.verbose >= 2);
    let result = dispatch(cli.command, &global);
    let code = match result {
        Ok(Exit::Ok) => 0,
        Ok(Exit::No) => 1,
        Err(e) if e.is::<AnswerTold>() => 2,
        Err(e) => connect::last_word(|| {
            output::clear_bar();
            if global.json {
                output::json_line(
                    &serde_json::json!({"type": "error", "message": output::error_message(&e)}),
                );
            }
            // A stop the user asked for is the command's account, not an error.
            let head = if connect::is_user_stop(&e) {
                ""
            } else {
                "error: "
            };
            errln!("{head}{}", output::error_message(&e));
            2
        }),
    };
    let code = match output::output_failure() {
        Some(why) if code != 2 => {
            errln!("error: the output could not be written to standard output ({why}): it is incomplete");
            2
        }
        _ => code,
    };
    // A live page nobody opened during a short run stays up a while (`--view-linger`).
    view::linger(code);
    ExitCode::from(code)
}

/// Every option that takes a value reads `-1` as its value, not as an unknown flag, so a
/// negative number is refused by the option's own check in words ("invalid value '-1' for
/// '--max-rescans <N>'"); no flag of cubot's looks like a number.
fn negative_numbers_read(cmd: clap::Command) -> clap::Command {
    let subcommands: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    let mut cmd = cmd.mut_args(|a| {
        if a.get_action().takes_values() {
            a.allow_negative_numbers(true)
        } else {
            a
        }
    });
    for name in subcommands {
        cmd = cmd.mut_subcommand(name, negative_numbers_read);
    }
    cmd
}

/// The options given on the command line of the subcommand (by their ids), as against
/// those at their defaults: `run --resume` refuses a flag that the journal decides.
static GIVEN: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

fn remember_given(m: &clap::ArgMatches) {
    let mut given = Vec::new();
    if let Some((_, sub)) = m.subcommand() {
        for id in sub.ids() {
            // An id can be listed that this level does not define (a global option of a
            // nested subcommand): asking its source would panic.
            if sub.try_get_raw(id.as_str()).is_err() {
                continue;
            }
            if sub.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine) {
                given.push(id.as_str().to_string());
            }
        }
    }
    let _ = GIVEN.set(given);
}

/// Whether the option `id` (its field's name) was given on the command line.
pub(crate) fn given(id: &str) -> bool {
    GIVEN.get().is_some_and(|g| g.iter().any(|x| x == id))
}

/// Bad usage (exit 2), said as clap says it; with `--json` anywhere on the command line
/// also as an `error` line on stdout, as every other error is. Help and version are no
/// errors.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
        || matches!(
            e.kind(),
            ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        )
    {
        let _ = e.print();
        return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
    }
    let negative = negative_count(&e);
    if std::env::args_os().skip(1).any(|a| a == "--json") {
        let text = negative.clone().unwrap_or_else(|| e.render().to_string());
        // The message's first paragraph, without the usage and the hint after it.
        let message: Vec<&str> = text
            .lines()
            .take_while(|l| !l.trim().is_empty())
            .map(|l| l.trim().trim_start_matches("error: "))
            .collect();
        let message = message.join(" ");
        output::json_line(&serde_json::json!({"type": "error", "message": message}));
    }
    match negative {
        Some(text) => errln!("{}", text.trim_end()),
        None => _ = e.print(),
    }
    ExitCode::from(2)
}

/// A negative number given for an option that counts (unsigned): clap's message, its reason
/// (Rust's "invalid digit found in string") said in the user's words.
fn negative_count(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    use std::error::Error;
    let negative = matches!(
        e.get(ContextKind::InvalidValue),
        Some(ContextValue::String(v)) if v.starts_with('-')
    );
    let reason = e.source()?.downcast_ref::<std::num::ParseIntError>()?;
    let invalid_digit = *reason.kind() == std::num::IntErrorKind::InvalidDigit;
    (e.kind() == ErrorKind::ValueValidation && negative && invalid_digit).then(|| {
        e.render()
            .to_string()
            .replacen(&reason.to_string(), "give a whole number, 0 or more", 1)
    })
}

fn dispatch(command: Command, g: &Global) -> CmdResult {
    match command {
        Command::Validate(a) => cube::validate(a, g),
        Command::Show(a) => cube::show(a, g),
        Command::Apply(a) => cube::apply(a, g),
        Command::Random(a) => cube::random(a, g),
        Command::Invert(a) => cube::invert(a, g),
        Command::Simplify(a) => cube::simplify(a, g),
        Command::Solve(a) => solve::solve(a, g),
        Command::Tables(a) => solve::tables(a, g),
        Command::Resolve(a) => color::resolve(a, g),
        Command::Calibrate(a) => color::calibrate(a, g),
        Command::SynthScan(a) => color::synth_scan(a, g),
        Command::Scan(a) => scan::scan(a, g),
        Command::CalibrateCamera(a) => camera::calibrate_camera(a, g),
        Command::Camera(a) => camera::camera(a, g),
        Command::Ports(a) => robot::ports(a, g),
        Command::Sim(a) => robot::sim(a, g),
        Command::Robot(a) => robot::robot(a, g),
        Command::Run(a) => run::run(a, g),
        Command::Save(a) => run::save(a, g),
        Command::Restore(a) => run::restore(a, g),
        Command::Journals(a) => journals::journals(a, g),
        Command::Bench(a) => bench::bench(a, g),
        Command::View(a) => view::view(a, g),
    }
}
