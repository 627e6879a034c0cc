//! What can go wrong in a job, with the evidence: one enum for the whole run, built
//! `#[from]` the lower modules' errors (the line robot, the MindCub3r, the planner, the
//! journal, the solver, the colour resolver, cube validation) and typed variants for what
//! the job itself finds.
//!
//! Level: job. Nothing below `job` depends on it; it does not print.

use std::path::PathBuf;

use crate::color::raw::Scale;
use crate::color::resolve::ResolveError;
use crate::cube::{InvalidCube, Size};
use crate::robot::line::LineError;
use crate::robot::mindcub3r::cost::PlanError;
use crate::robot::mindcub3r::RobotError;
#[cfg(feature = "vision")]
use crate::scan::VisionError;
use crate::solver::SolverError;

use super::journal::{Action, JournalError};
use super::kind::{RobotKind, ScannerKind};
use super::target::TargetError;

/// What went wrong, with the evidence. [`RunError::is_no`] tells a well-formed "no"
/// (exit 1) from an operational failure (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A line robot without colour sensors cannot scan.
    #[error("scan failed: robot {robot:?} has no colour sensors (CAPS scan=0); cubot needs a robot that reads its own stickers")]
    NoColourSensor { robot: String },
    /// The robot holds a cube of another size than the one asked for.
    #[error("scan failed: the robot holds a {holds}x{holds}x{holds} cube, not {wanted} ({evidence}); nothing was turned: run with --size {holds}, or put a {wanted} in the robot")]
    WrongSize {
        holds: usize,
        wanted: Size,
        /// How it shows: the robot's own word, or what the sensor saw.
        evidence: String,
    },
    /// Single faces were asked of a robot that reads only whole scans.
    #[error("scan failed: this robot cannot read single faces")]
    NoFaceReads,
    /// The robot no longer knows which facelet each top position shows.
    #[error("scan failed: the scan frame was lost")]
    ScanFrameLost,
    /// The checking re-scan's colours cannot be paired with the first scan's.
    #[error("scan failed: the re-scan after execution is not the first scan's cube: {0}")]
    RescanColours(String),
    /// The camera scanner failed.
    #[cfg(feature = "vision")]
    #[error("scan failed: {0}")]
    Camera(#[from] CameraError),
    /// Re-reads left a doubt: a rival legal cube is too close to the best one to tell, or
    /// no legal cube fits clear readings (`contradiction`).
    #[error(
        "the scan {}: stickers {} ({}); {}",
        match rescans {
            0 => "is in doubt (not re-scanned)".to_string(),
            1 => "stays in doubt after 1 re-scan".to_string(),
            n => format!("stays in doubt after {n} re-scans"),
        },
        doubt_names(doubtful, best),
        if let Some(rule) = contradiction {
            format!("read clearly, every time, as colours no legal cube has there; the cube as read, {as_read}, breaks a rule of real cubes: {rule}")
        } else if *profile_disagrees {
            "where the readings alone and the colour profile say different cubes: a profile of another cube, or learned in another light? Run without --profile, or learn one on this cube (`cubot calibrate`)".to_string()
        } else {
            format!("where the best guess and its rival legal cubes within the doubt window differ; the closest {margin:.1} nats behind")
        },
        if contradiction.is_some() {
            format!("best guess {best}, the nearest legal cube; nothing was turned. Look at the cube in the robot: a corner turned in place, an edge flipped or a piece put back wrong is set right by hand, then run again; if the cube is sound, the sensor misreads those stickers: --best-effort executes the best guess and checks the result")
        } else {
            format!("best guess {best}; nothing was turned (--best-effort executes the best guess and checks the result)")
        }
    )]
    Ambiguous {
        /// Facelet indices of the cube as the scan began.
        doubtful: Vec<usize>,
        rescans: usize,
        /// The resolver's most likely legal cube (facelets, the scan's own symbols).
        best: String,
        /// Nats from the best to its closest rival.
        margin: f64,
        /// The readings alone and the colour profile point at different cubes.
        profile_disagrees: bool,
        /// No legal cube fits clear readings: the rule the cube as read breaks
        /// ([`crate::color::resolve::Resolution::contradiction`]).
        contradiction: Option<String>,
        /// The cube as read (facelets, the scan's own symbols).
        as_read: String,
    },
    /// The colour profile was learned on another scale than the scanner reads; the message
    /// names the command that learns one with this robot's scanner.
    #[error(
        "the colour profile was learned on scale {} but the scanner reads {}: learn one with this scanner, `{}` (with the same --port or --sim, the cube solved in the robot)",
        profile.name(),
        scale.name(),
        calibrate_command(*robot, *scanner)
    )]
    ProfileScale {
        profile: Scale,
        /// The scale the scanner reads.
        scale: Scale,
        robot: RobotKind,
        scanner: ScannerKind,
    },
    /// The resolver found no legal cube in the readings, even after re-reading them.
    #[error("{0}")]
    Unresolved(ResolveError),
    /// The resolved cube fails validation.
    #[error("the scanned cube is not a legal cube: {0}")]
    Invalid(#[from] InvalidCube),
    #[error("bad target: {0}")]
    Target(#[from] TargetError),
    #[error("{}", solve_failed(.0))]
    Solve(#[from] SolverError),
    /// Every solution the solver gave fails the check that it reaches the target.
    #[error("no solution: the solver returned no solution that reaches the target")]
    NoCandidate,
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error("robot: {0}")]
    Line(#[from] LineError),
    #[error("robot: {0}")]
    Mindcub3r(#[from] RobotError),
    /// A plan for another robot reached the MindCub3r.
    #[error("robot: {0:?} is not a MindCub3r primitive")]
    NotAPrimitive(Action),
    /// The stop flag was set: by Ctrl-C, or by the live page's Stop (`from_page`).
    #[error("robot: stopped by the user ({})", stop_words(*from_page))]
    Stopped { from_page: bool },
    /// The simulator's read-back shares no colouring with the cube the job believes in.
    #[error("robot: the simulator's cube does not match the scanned one at all")]
    SimulatorMismatch,
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// Execution stopped: where the cube is.
    #[error("{0}")]
    Interrupted(Box<Interruption>),
    /// A robot failed outside execution; its motors were then stopped (`note` says whether
    /// the robot confirmed it).
    #[error("{cause}; {note}{}", held_note(cause, false))]
    Stopping {
        cause: Box<RunError>,
        note: &'static str,
    },
    /// A resume found another cube in the robot than the journal's.
    #[error("the cube in the robot is not the journal's cube ({why}): {}; nothing was turned: put the journal's cube back in and resume, or start a new run", states_note(journal_state, seen))]
    NotTheJournalsCube {
        why: String,
        /// Robot frame, first-scan symbols.
        journal_state: String,
        seen: String,
    },
    /// Every reading of a scan is dark: the sensor is covered or the tray holds no cube.
    #[error("the scan sees no cube: {0}; nothing was turned: put the cube in the tray (or uncover the sensor), then run again")]
    NoCube(String),
    /// A resume could not establish which state the cube is in.
    #[error("cannot tell where the cube is: the robot cannot read its stickers or say its state, and the journal leaves {0} states possible")]
    Undecided(usize),
}

/// The two cubes of a refused resume, each named once: a cube of other colours in the
/// journal's arrangement reads as the same letters (first-scan symbols).
fn states_note(journal: &str, seen: &str) -> String {
    // Each face of one colour: a solved cube, however it is turned whole.
    let solved = |s: &str| {
        let c: Vec<char> = s.chars().collect();
        Size::from_stickers(c.len()).is_some_and(|size| {
            c.chunks(size.n() * size.n())
                .all(|f| f.iter().all(|&x| x == f[0]))
        })
    };
    if journal == seen {
        format!("its stickers lie as the journal's cube's ({journal}), in other colours")
    } else if solved(journal) && solved(seen) {
        format!("both are solved cubes, the robot's in other colours (the journal's {journal}, the robot's {seen}, each in its own scan's letters)")
    } else {
        format!("the journal's is {journal}, the robot's is {seen}")
    }
}

/// How the cube sits in the robot, when that is not how the first scan saw it (a robot
/// that turns the whole cube); nothing when the two read alike.
fn sits_note(state: &str, robot_state: &str) -> String {
    if state == robot_state {
        String::new()
    } else {
        format!(" ({robot_state} as it sits in the robot)")
    }
}

/// Where a stopped execution left the cube, and why it stopped.
#[derive(Debug, thiserror::Error)]
#[error("{}\n  the cube is now {state}{}{}\n  {}{}\n  journal {}", stop_head(cause, steps_words(*steps, *of, candidates)), sits_note(state, robot_state), in_flight_note(candidates, robot_candidates), motors_note(*motors_stopped, cause), held_line(cause), journal.display())]
pub struct Interruption {
    /// What stopped the execution.
    pub cause: RunError,
    pub journal: PathBuf,
    /// Cube frame of the first scan, first-scan symbols.
    pub state: String,
    /// As it sits in the robot now.
    pub robot_state: String,
    pub steps: usize,
    /// The run's actions in all when it stopped: those done and the plan's rest.
    pub of: usize,
    pub seconds: f64,
    /// When the robot could not tell whether the actions in flight happened: the cube
    /// frame state after each prefix of them (the first is `state`).
    pub candidates: Vec<String>,
    /// The same states as the robot holds them (robot frame).
    pub robot_candidates: Vec<String>,
    /// Whether the robot confirmed that its motors stopped (`None`: not asked).
    pub motors_stopped: Option<bool>,
}

/// A stop's first line: who stopped it and when, or when and why.
fn stop_head(cause: &RunError, when: String) -> String {
    match cause {
        RunError::Stopped { from_page } => format!("stopped ({}) {when}", stop_words(*from_page)),
        other => format!("stopped {when}: {}", other.reason()),
    }
}

/// How far execution went: `after N of M actions`, or, stopped before its first action
/// with none in flight, that nothing turned (and why a resume then is worth it: it keeps
/// the scan, which a run started again does over).
fn steps_words(steps: usize, of: usize, candidates: &[String]) -> String {
    match (steps, candidates.is_empty()) {
        (0, true) => {
            "after the scan, before the first robot action (nothing turned; a resume keeps the scan)"
                .to_string()
        }
        (n, _) => format!("after {n} of {of} action{}", if of == 1 { "" } else { "s" }),
    }
}

/// `U3 F5 ...`: the stickers in doubt by name.
fn doubt_names(doubtful: &[usize], best: &str) -> String {
    match Size::from_stickers(best.chars().count()) {
        Some(size) => crate::color::resolve::facelet_names(doubtful, size),
        None => format!("{doubtful:?}"),
    }
}

/// The other states the cube may be in: each once, and one that is the same cube only
/// turned whole in the robot said so (with its robot frame), never the first state again.
fn in_flight_note(candidates: &[String], robot_candidates: &[String]) -> String {
    let mut others: Vec<String> = Vec::new();
    for (k, c) in candidates.iter().enumerate().skip(1) {
        let robot = robot_candidates.get(k);
        let text = if *c != candidates[0] {
            match robot {
                Some(r) if r != c => format!("{c} ({r} as it sits in the robot)"),
                _ => c.clone(),
            }
        } else if robot.is_some() && robot != robot_candidates.first() {
            let robot = robot.map(String::as_str).unwrap_or_default();
            if robot == candidates[0] {
                // Its robot-frame letters would repeat the first state's cube-frame ones.
                "the same cube turned whole in the robot, sitting there as the first scan saw it"
                    .to_string()
            } else {
                format!("the same cube turned whole in the robot ({robot} as it sits there)")
            }
        } else {
            continue;
        };
        if !others.contains(&text) {
            others.push(text);
        }
    }
    if others.is_empty() {
        return String::new();
    }
    format!(
        ", or, if the actions in flight happened, {}",
        others.join(" or ")
    )
}

/// What to do when a motor was held short of where it was sent, in every stop's account:
/// once layers have turned, the cube is what holds a motor most often (a layer left out of
/// square); before any turned, whatever blocks the robot or a cube set in crooked.
pub fn held_advice(turned: bool) -> &'static str {
    if turned {
        "a motor was held, most often by the cube: a layer an earlier turn left out of \
         square, or the cube sitting crooked in the robot; square it by hand without \
         turning a layer, and see that nothing blocks the robot"
    } else {
        "a motor was held: see that nothing blocks the turntable or the arms and that the \
         cube sits square in the tray"
    }
}

/// [`held_advice`] when a motor was held, before what comes next: a resume once layers
/// have turned, running again when none has.
fn held_note(cause: &RunError, turned: bool) -> String {
    if cause.held() {
        let next = if turned { "resume" } else { "run again" };
        format!("; {}, before you {next}", held_advice(turned))
    } else {
        String::new()
    }
}

/// [`held_note`] on a line of its own, for a stop's account (one line per fact).
fn held_line(cause: &RunError) -> String {
    held_note(cause, true).replacen("; ", "\n  ", 1)
}

/// Who stopped the job, in the user's words.
pub fn stop_words(from_page: bool) -> &'static str {
    if from_page {
        "Stop on the live page"
    } else {
        "Ctrl-C"
    }
}

/// A stop the robot did not confirm, in words.
pub const UNCONFIRMED_STOP: &str = "the robot did not confirm the stop (no reply); a MindCub3r's motions are bounded on the brick and stop by themselves: if a motor still runs, switch the robot off";

/// [`UNCONFIRMED_STOP`] for a robot of which nothing bounds a motion but its own firmware.
pub const UNCONFIRMED_LINE_STOP: &str =
    "the robot did not confirm the stop (no reply): if a motor still runs, switch the robot off";

/// What an unconfirmed stop means after `cause`: only a MindCub3r's motions are known to
/// be bounded on the robot.
pub fn unconfirmed_stop(cause: &RunError) -> &'static str {
    match cause {
        RunError::Line(_) => UNCONFIRMED_LINE_STOP,
        RunError::Stopping { cause, .. } => unconfirmed_stop(cause),
        _ => UNCONFIRMED_STOP,
    }
}

fn motors_note(stopped: Option<bool>, cause: &RunError) -> &'static str {
    match stopped {
        Some(true) => "motors stopped",
        Some(false) => unconfirmed_stop(cause),
        None => "the robot was not asked to stop",
    }
}

impl RunError {
    /// Whether a motor was held short of where it was sent (see [`RobotError::held`]).
    pub fn held(&self) -> bool {
        match self {
            RunError::Mindcub3r(e) => e.held(),
            RunError::Line(e) => e.held(),
            RunError::Stopping { cause, .. } => cause.held(),
            _ => false,
        }
    }

    /// A well-formed "no" (exit 1) rather than an operational error (exit 2).
    pub fn is_no(&self) -> bool {
        matches!(
            self,
            RunError::Ambiguous { .. }
                | RunError::NotTheJournalsCube { .. }
                | RunError::Unresolved(_)
                | RunError::Invalid(_)
                | RunError::Target(_)
                | RunError::Solve(_)
                | RunError::NoCandidate
        )
    }

    /// Why the robot stopped, as the journal records it: a robot's own failure without the
    /// `robot:` prefix, anything else as displayed.
    pub fn reason(&self) -> String {
        match self {
            RunError::Line(e) => e.to_string(),
            RunError::Mindcub3r(e) => e.to_string(),
            RunError::NotAPrimitive(a) => format!("{a:?} is not a MindCub3r primitive"),
            RunError::Stopped { from_page } => {
                format!("stopped by the user: {}", stop_words(*from_page))
            }
            RunError::SimulatorMismatch => {
                "the simulator's cube does not match the scanned one at all".into()
            }
            other => other.to_string(),
        }
    }
}

#[cfg(feature = "vision")]
/// Why the camera scanner could not read the cube.
#[derive(Debug, thiserror::Error)]
pub enum CameraError {
    #[error(
        "--scanner camera renders its frames on the simulator; a camera on a real robot is \
         not supported yet (use --sim, or --scanner sensor)"
    )]
    NoSimulator,
    #[error("camera: {0}")]
    Vision(#[from] VisionError),
    #[error("face step {step}: the top face shows facelets {top:?}, not one face")]
    NotOneFace { step: usize, top: Vec<usize> },
    #[error("the robot holds a cube of {stickers} stickers, not a {size}")]
    CubeSize { stickers: usize, size: Size },
    #[error("the face sequence never showed face {0}")]
    FaceNotShown(char),
    #[error("six camera frames expected")]
    SixFrames,
    #[error("a re-read needs a camera scan first")]
    NotScanned,
    #[error("sticker {want} does not exist on a {size}")]
    NoSuchSticker { want: usize, size: Size },
    #[error("camera: the frame for sticker {want} gave {got} stickers")]
    FrameStickers { want: usize, got: usize },
}

/// The command that learns a colour profile with this robot and scanner (a solved cube in
/// the robot): the scanner's own scale, which a profile must match.
pub fn calibrate_command(robot: RobotKind, scanner: ScannerKind) -> String {
    let robot = match robot {
        RobotKind::Mindcub3r => "",
        RobotKind::Line => " --robot line",
    };
    let scanner = match scanner {
        ScannerKind::Sensor => "",
        ScannerKind::Camera => " --scanner camera",
    };
    format!("cubot calibrate{robot}{scanner} -o FILE")
}

/// A solver's failure as a run says it: "no solution" once (the solver's own "no solution
/// within ..." says it already).
fn solve_failed(e: &SolverError) -> String {
    match e {
        SolverError::NoSolution {
            timed_out: false, ..
        } => format!("{e}: allow longer solutions with --max-length"),
        // A run's solver calls are bounded in time; a short --max-length makes the search
        // prove in vain that nothing that short exists, which is what runs out of time.
        SolverError::NoSolution { .. } => {
            format!("{e} of each solver call in a run: allow longer solutions with --max-length")
        }
        _ => format!("no solution: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_states_in_flight_are_named_once_each_never_the_first_again() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        // A whole-cube spin in flight: the same cube, only turned in the robot.
        let note = in_flight_note(&s(&["AAA", "AAA"]), &s(&["AAA", "BBB"]));
        assert_eq!(
            note,
            ", or, if the actions in flight happened, the same cube turned whole in the robot (BBB as it sits there)"
        );
        assert_eq!(in_flight_note(&s(&["AAA", "AAA"]), &s(&["AAA", "AAA"])), "");
        // Turned whole to sit as the first scan saw it: not the first state's letters again.
        assert_eq!(
            in_flight_note(&s(&["AAA", "AAA"]), &s(&["BBB", "AAA"])),
            ", or, if the actions in flight happened, the same cube turned whole in the robot, sitting there as the first scan saw it"
        );
        assert_eq!(
            in_flight_note(&s(&["AAA", "CCC", "CCC"]), &s(&["A", "C", "C"])),
            ", or, if the actions in flight happened, CCC (C as it sits in the robot)"
        );
        assert_eq!(
            in_flight_note(&s(&["AAA", "CCC"]), &s(&["AAA", "CCC"])),
            ", or, if the actions in flight happened, CCC"
        );
    }

    #[test]
    fn two_solved_cubes_turned_differently_are_said_to_be_solved_not_two_states() {
        let journal = "DDDDDDDDDRRRRRRRRRBBBBBBBBBUUUUUUUUULLLLLLLLLFFFFFFFFF";
        let seen = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB";
        assert!(states_note(journal, seen).starts_with("both are solved cubes"));
        let scrambled = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBF";
        assert!(states_note(scrambled, seen).starts_with("the journal's is"));
    }

    #[test]
    fn a_solve_that_runs_out_of_time_in_a_run_says_what_to_change() {
        let e = SolverError::NoSolution {
            limit: "the time limit of 10000 ms".into(),
            timed_out: true,
        };
        let said = solve_failed(&e);
        assert!(
            said.starts_with("no solution within the time limit of 10000 ms"),
            "{said}"
        );
        assert!(
            said.contains("allow longer solutions with --max-length"),
            "{said}"
        );
        let e = SolverError::NoSolution {
            limit: "12 moves (htm)".into(),
            timed_out: false,
        };
        assert!(solve_failed(&e).ends_with(": allow longer solutions with --max-length"));
    }
}
