//! Which robot and which scanner a job drives: names the job's modules share (the
//! connection, the robot trait, the scan, the errors) without importing one another.
//!
//! Level: job. Depends on nothing; no printing.

/// Which robot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RobotKind {
    /// LEGO EV3 MindCub3r (EV3 direct commands).
    Mindcub3r,
    /// A line-protocol robot (one motor per face, or five).
    Line,
}

impl RobotKind {
    /// The name a journal records ([`crate::job::RunRobot::kind`]).
    pub fn from_journal(kind: &str) -> RobotKind {
        match kind {
            "line" => RobotKind::Line,
            _ => RobotKind::Mindcub3r,
        }
    }
}

/// What reads the stickers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScannerKind {
    /// The robot's own colour sensor(s).
    Sensor,
    /// A fixed camera looking at the top face (the simulator renders frames).
    Camera,
}
