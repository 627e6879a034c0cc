//! # cubot
//!
//! Makes a cube-solving robot work with real, imperfect cubes. One run, as
//! [`job::run()`] does it:
//!
//! ```text
//!  robot colour sensor (robot::mindcub3r::MindCub3r, robot::line::LineRobot)
//!  or camera (scan::*, job::camera) ──RawScan──▶ color::resolve::resolve ──Resolution──┐
//!                                                                                      │
//!  ┌── cube::validate ◀──FaceletCube (or doubt: the stickers named, re-read) ◀─────────┘
//!  │
//!  └─FaceletCube──▶ solver::Solver (two-phase 3x3x3, optimal 2x2x2, any state to target)
//!                   + solver::costed (solutions cheap for the robot)  ──Alg (N best)──┐
//!                                                                                     │
//!  robot::mindcub3r::planner::Planner::choose ◀───────────────────────────────────────┘
//!      │ Plan: mindcub3r::model::Primitive (tilt, spin, turn), cheapest on the robot's timings
//!      ▼
//!  job::RunRobot::execute ─ ev3::driver::Ev3 (direct commands) ─ ev3::link::Ev3Link ─┐
//!      │  each step journaled (job::journal::Journal)  line::LineRobot (MOVE) ────────┤
//!      ▼                                                     robot::link::Link ◀──────┘
//!  job::verify (read-back or re-scan) ──▶ job::RunReport     (serial port, pty, memory)
//! ```
//!
//! The simulators in [`robot::sim`] are real peers on a pseudo-terminal: they speak the same
//! EV3 direct commands and line protocol as the hardware, so every path above runs without
//! a robot.
//!
//! Module levels (a module depends only on the ones listed for it; no import circles at any
//! level, checked by the `layout` integration test):
//!
//! | module   | depends on                                 | what                                              |
//! |----------|--------------------------------------------|---------------------------------------------------|
//! | `cube`   | nothing                                    | model, notation, validation, pictures             |
//! | `input`  | nothing                                    | bounded reading of the files a user names         |
//! | `solver` | `cube`                                     | two-phase 3x3x3, optimal 2x2x2, costed search     |
//! | `color`  | `cube`                                     | raw readings → CIELAB → legal cube, with doubt    |
//! | `scan`   | `color`, `cube`                            | image files, camera, sticker detection (OpenCV)   |
//! | `robot`  | `cube`, `solver`, `color`                  | link, EV3 protocol and driver, MindCub3r, line robot, simulators |
//! | `job`    | all of the above                           | run, save, restore, resume, journal, verification |
//! | `view`   | all of the above                           | the live page: HTTP, event stream, assets (feature `view`) |
//! | `cli`    | everything                                 | the `cubot` program (the only place that prints)  |
//!
//! Features: `cli` (the program), `serial` (serialport), `vision` (OpenCV), `camera`
//! (nokhwa), `bench-peers` (min2phase in `cubot bench solve`), `view` (tiny_http, the
//! live page of `--view`); all on by default.

pub mod color;
pub mod cube;
pub mod input;
pub mod job;
pub mod robot;
pub mod scan;
pub mod solver;
#[cfg(feature = "view")]
pub mod view;

#[cfg(feature = "cli")]
pub mod cli;
