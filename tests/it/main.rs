//! The integration tests: one test binary (link time), one module per area.

mod bricks;
mod browser;
mod calibrate;
mod check;
mod cli_cube;
mod color;
mod contract;
mod cube;
mod firmware;
mod firmware_audit;
mod firmware_host;
mod inputs;
mod layout;
mod misread;
mod outputs;
mod readme;
mod robot;
mod run;
mod scan;
mod solver;
mod stops;
mod support;
mod view;
mod wire;
mod world;
