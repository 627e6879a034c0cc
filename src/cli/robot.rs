//! `ports`, `sim`, `robot ...` (filled in by the EV3 work).

use super::{CmdResult, Global};

#[derive(clap::Args, Debug)]
pub struct PortsArgs {}

#[derive(clap::Args, Debug)]
pub struct SimArgs {}

#[derive(clap::Args, Debug)]
pub struct RobotArgs {}

pub fn ports(_a: PortsArgs, _g: &Global) -> CmdResult {
    anyhow::bail!("the robot is not part of this build yet")
}

pub fn sim(_a: SimArgs, _g: &Global) -> CmdResult {
    anyhow::bail!("the robot is not part of this build yet")
}

pub fn robot(_a: RobotArgs, _g: &Global) -> CmdResult {
    anyhow::bail!("the robot is not part of this build yet")
}
