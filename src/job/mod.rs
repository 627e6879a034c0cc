//! The whole job as a library: scan → resolve (re-scanning doubtful stickers) → validate →
//! solve to the target (from the symmetric variants of the problem) → plan the cheapest
//! execution for this robot → execute with a journal → check (and, off the target, solve
//! again from what the check saw: another round); and `save` (scan and store a
//! state), `restore` (a run to a saved state) and `resume` (finish what a journal records).
//! `cubot run`, `save`, `restore` and `bench robot` are thin layers over this.
//!
//! | file          | what                                                                |
//! |---------------|---------------------------------------------------------------------|
//! | `bricks`      | the same seeded job on two simulated bricks, side by side            |
//! | `connect`     | a robot over a serial port, or a simulator started on a pty          |
//! | `robot`       | [`RunRobot`]: what the job needs of a robot; [`RobotPlan`]; [`Planning`] |
//! | `line`        | the line-protocol robot                                              |
//! | `mindcub3r`   | the MindCub3r                                                        |
//! | `camera`      | a camera over either robot's top face (feature `vision`)             |
//! | `scan`        | scan and resolve with re-reads                                       |
//! | `colours`     | [`Resolved`]; matching colours between scans by their Lab values     |
//! | `target`      | the target: solved, a state, or a saved state; saved-state files     |
//! | `solve`       | candidates from the solver, and its robot-cost search                |
//! | `options`     | [`RunOptions`]: what a run is asked                                  |
//! | `run`         | [`run()`] (scan, thinking ahead during its last face, then [`finish`]) and [`save`] |
//! | `execute`     | [`finish`]: rounds of solve, plan ([`think`]), execute (journaled), check; report |
//! | `report`      | [`RunEvent`] progress and the final [`RunReport`]                    |
//! | `resume`      | [`resume()`]: check the cube against a journal, then [`finish`]       |
//! | `observe`     | which of the states a journal allows the robot holds (few stickers)  |
//! | `verify`      | the check after a round: read-back, re-scan, or tracking only        |
//! | `journal`     | the execution journal (JSON Lines) and reading it back               |
//! | `journals`    | the journals in the cache: listed newest first, `latest`, pruning     |
//! | `error`       | [`RunError`]                                                         |
//!
//! Level: job: above `robot`, `scan`, `solver`, `color` and `cube`, which must not depend
//! on it; only `cli` does. No printing: progress goes to a [`RunEvent`] callback.

pub mod bricks;
#[cfg(feature = "vision")]
pub mod camera;
pub mod colours;
pub mod connect;
pub mod error;
pub mod execute;
pub mod journal;
pub mod journals;
pub mod kind;
pub mod line;
pub mod mindcub3r;
pub mod observe;
pub mod options;
pub mod report;
pub mod resume;
pub mod robot;
pub mod run;
pub mod scan;
pub mod solve;
pub mod target;
pub mod verify;

pub use colours::{color_centroids, match_colors, Resolved};
pub use connect::{connect, ConnectError, ConnectOptions, Link, RobotKind, ScannerKind};
pub use error::{stop_words, RunError};
pub use execute::{finish, think, JournalMode, Position, Start, Thought};
pub use options::RunOptions;
pub use report::{RunEvent, RunReport};
pub use resume::resume;
pub use robot::{Answer, Planning, Progress, RobotPlan, RunRobot};
pub use run::{run, save};
pub use scan::{scan_and_resolve, Scanned, FRAME_DOUBT};
pub use solve::Tools;
pub use target::{
    check_spec, parse_saved, read_saved, target_cube, SavedState, TargetError, TargetSpec,
};
