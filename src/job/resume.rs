//! `run --resume`: finish what a journal records, after checking the cube before anything
//! turns.
//!
//! The journal allows a few states (the last confirmed one, and the state after each prefix
//! of what was in flight when the run stopped). The resume first establishes which one the
//! robot holds ([`super::observe`]: a few stickers, the robot's own word, or a full scan;
//! reading stickers may spin and tilt the cube, it never turns a layer), then:
//! * **continues** from it when it is one of them;
//! * **plans again** from what it sees when it is another state of the same cube;
//! * **refuses** (exit 1, [`RunError::NotTheJournalsCube`], both states printed) when it is
//!   not the journal's cube at all, before any layer turns.
//!
//! What it saw and decided, and the new plan, are appended to the journal: the first run's
//! steps and its reason for stopping stay. A resume never reads a simulator's own cube to
//! decide: it knows only what a real robot would tell it.
//!
//! Level: job. No printing.

use crate::robot::mindcub3r::cost::{Arm, RobotState};
use crate::robot::mindcub3r::frames::to_cube;

use super::error::RunError;
use super::execute::{finish, JournalMode, Position, Start};
use super::journal::{self, JournalRecord, JournalResume};
use super::observe::{candidates, observe, Known, Seen};
use super::options::RunOptions;
use super::report::{RunEvent, RunReport};
use super::robot::RunRobot;
use super::solve::Tools;
use super::target::TargetError;

/// Checks the cube against the journal, then finishes the job (see the module docs).
pub fn resume(
    robot: &mut dyn RunRobot,
    tools: &Tools,
    rec: &JournalRecord,
    opts: &RunOptions,
    events: &mut dyn FnMut(RunEvent),
) -> Result<RunReport, RunError> {
    let symbols = rec.symbols;
    let first_scan = journal::decode(&rec.start.first_scan, &symbols)
        .ok_or(TargetError::Journal("first_scan"))?;
    let target =
        journal::decode(&rec.start.target, &symbols).ok_or(TargetError::Journal("target"))?;
    let cands = candidates(rec);
    let known = Known {
        symbols,
        colors: &rec.start.colors,
        raw_colors: &rec.start.raw_colors,
        raw_scale: rec.start.raw_scale.as_deref(),
        first_scan: &first_scan,
    };
    let seen = observe(
        robot,
        &cands,
        &known,
        &tools.resolve,
        opts.max_rescans,
        events,
    )?;
    let (cube, robot_frame, decision) = match &seen.seen {
        Seen::Agrees(k) => {
            let c = &cands[*k];
            (
                to_cube(&c.robot, &c.orientation),
                c.robot.clone(),
                "continue",
            )
        }
        Seen::Differs { cube, orientation } => (
            cube.clone(),
            crate::robot::mindcub3r::frames::to_robot(cube, orientation),
            "replan",
        ),
        Seen::Foreign { seen: s, why } => {
            if let Ok(mut j) = journal::Journal::append(&opts.journal, rec) {
                let _ = j.resume(&JournalResume {
                    created: journal::now_rfc3339(),
                    seen: s.clone(),
                    by: seen.by.clone(),
                    decision: "refuse".into(),
                });
            }
            let _ = robot.stop();
            return Err(RunError::NotTheJournalsCube {
                why: why.clone(),
                journal_state: journal::encode(&cands[0].robot, &symbols),
                seen: s.clone(),
            });
        }
    };
    let seen_text = journal::encode(&robot_frame, &symbols);
    events(RunEvent::Resumed {
        seen: journal::encode(&cube, &symbols),
        robot_seen: seen_text.clone(),
        by: seen.by.clone(),
        decision: decision.into(),
        candidates: cands.len(),
        robot_candidates: cands
            .iter()
            .map(|c| journal::encode(&c.robot, &symbols))
            .collect(),
    });
    let start = Start {
        position: Position {
            cube,
            robot: RobotState {
                orientation: robot.orientation(),
                arm: Arm::Away,
                turntable: 0,
            },
            first_scan,
            target,
        },
        first_colors: rec.start.colors.clone(),
        raw_colors: rec.start.raw_colors.clone(),
        raw_scale: rec.start.raw_scale.clone(),
        scan_confident: true,
        rescans: 0,
        resumed: true,
        connected_cube: Some(cands[0].robot.clone()),
        journal: JournalMode::Append {
            record: Box::new(rec.clone()),
            resume: JournalResume {
                created: journal::now_rfc3339(),
                seen: seen_text,
                by: seen.by,
                decision: decision.into(),
            },
        },
        round: rec.round,
    };
    finish(robot, tools, &start, opts, events)
}
