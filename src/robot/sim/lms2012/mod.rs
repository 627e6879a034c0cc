//! The firmware brick: LEGO's own EV3 firmware as the brick cubot talks to.
//!
//! Level: robot (simulators). No printing.

pub mod process;
pub mod wire;
