//! # cubot
//!
//! Makes a cube-solving robot work with real, imperfect cubes:
//!
//! ```text
//!  ScanSource ──RawScan──▶ color::resolve ──FaceletCube──▶ cube::validate ──CubieCube──▶ solver
//!                                                                                          │ Alg
//!  robot::driver ◀──MotionPlan── robot::planner ◀──────────────────────────────────────────┘
//! ```
//!
//! Module levels (a module may depend only on those above it):
//!
//! | module   | depends on            | what                                                  |
//! |----------|-----------------------|-------------------------------------------------------|
//! | `cube`   | nothing               | model, notation, validation, pictures                 |
//! | `solver` | `cube`                | two-phase 3x3x3, optimal 2x2x2, any state to target    |
//! | `color`  | `cube`                | raw readings → CIELAB → legal cube with confidence    |
//! | `scan`   | `color`, `cube`       | image files, camera, sticker detection                |
//! | `robot`  | `cube`, `solver`, `color` | EV3 protocol, transports, driver, planner, simulators |
//! | `cli`    | everything            | the `cubot` program (the only place that prints)      |
//!
//! Features: `cli` (the program), `serial` (serialport), `vision` (OpenCV), `camera`
//! (nokhwa), `bench-peers` (min2phase in `cubot bench solve`); all on by default.

pub mod color;
pub mod cube;
pub mod job;
pub mod robot;
pub mod scan;
pub mod solver;

#[cfg(feature = "cli")]
pub mod cli;
