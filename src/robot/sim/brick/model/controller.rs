//! Our brick's motor controller: the job each output port runs (a step or time profile, a
//! speed run, nothing), the tacho counts it keeps, and the kinematic drive it gives the
//! world every step.
//!
//! Level: robot (simulators). Drives [`crate::robot::sim::world`] only through
//! [`Drive`]. No I/O, no printing.

use crate::robot::sim::world::Drive;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Job {
    Idle,
    /// Degrees: ramp-up, constant, ramp-down; travelled so far; the sensor count (whole
    /// degrees) the job started from.
    Step {
        dir: f64,
        vmax: f64,
        r: [f64; 3],
        done: f64,
        from: f64,
    },
    /// Seconds: ramp-up, constant, ramp-down; elapsed so far.
    Time {
        dir: f64,
        vmax: f64,
        t: [f64; 3],
        elapsed: f64,
    },
    /// OUTPUT_SPEED/POWER + START: runs until stopped.
    Run {
        v: f64,
    },
}

/// One output port's motor as the brick's controller sees it.
#[derive(Clone, Debug)]
pub(super) struct SimMotor {
    pub full_speed: f64,
    /// Sensor count = angle − zero (the world's angle of the port's motor).
    pub zero: f64,
    /// Movement count = angle − move_zero.
    pub move_zero: f64,
    pub job: Job,
    /// Present speed (deg/s, signed), measured over the last step.
    pub v: f64,
    pub pending_speed: i8,
    pub polarity: f64,
    pub overshoot: f64,
}

/// What a motor's job asked of the world in one step.
#[derive(Clone, Copy, Debug)]
pub(super) struct Plan {
    /// The movement the job asked for (motor degrees).
    ds: f64,
    /// The job's profile ends with this step.
    finish: bool,
    /// The mechanism could not move when the step began.
    stuck: bool,
}

impl SimMotor {
    pub fn new(full_speed: f64, angle: f64, zero: f64) -> SimMotor {
        SimMotor {
            full_speed,
            zero,
            move_zero: angle,
            job: Job::Idle,
            v: 0.0,
            pending_speed: 0,
            polarity: 1.0,
            overshoot: 0.0,
        }
    }

    pub fn busy(&self) -> bool {
        matches!(self.job, Job::Step { .. } | Job::Time { .. })
    }

    /// The drive for the next step of `dt` (and what the job expects of it); `stuck`:
    /// the world's mechanism cannot move now.
    pub fn plan(&mut self, dt: f64, stuck: bool) -> (Drive, Option<Plan>) {
        let (dir, v, finish) = match &mut self.job {
            Job::Idle => {
                self.v = 0.0;
                return (Drive::Idle, None);
            }
            Job::Run { v } => (v.signum(), v.abs(), false),
            Job::Step {
                dir, vmax, r, done, ..
            } => {
                let total = r[0] + r[1] + r[2];
                let s = *done;
                let v = if s < r[0] {
                    *vmax * (s / r[0].max(1e-9)).sqrt().max(0.2)
                } else if s > r[0] + r[1] {
                    *vmax * ((total - s) / r[2].max(1e-9)).sqrt().max(0.15)
                } else {
                    *vmax
                };
                let ds = v * dt;
                let finish = s + ds >= total;
                (*dir, v, finish)
            }
            Job::Time {
                dir,
                vmax,
                t,
                elapsed,
            } => {
                let e = *elapsed;
                let total = t[0] + t[1] + t[2];
                let v = if e < t[0] {
                    *vmax * (e / t[0].max(1e-9)).max(0.1)
                } else if e > t[0] + t[1] {
                    *vmax * ((total - e) / t[2].max(1e-9)).max(0.05)
                } else {
                    *vmax
                };
                *elapsed += dt;
                (*dir, v, *elapsed >= total)
            }
        };
        let velocity = dir * v * self.polarity;
        let mut ds = velocity * dt;
        let mut drive = Drive::Velocity(velocity);
        if let Job::Step { r, done, .. } = &self.job {
            if finish {
                ds = dir * self.polarity * ((r[0] + r[1] + r[2] - done) + self.overshoot);
                drive = Drive::Velocity(ds / dt);
            }
        }
        (drive, Some(Plan { ds, finish, stuck }))
    }

    /// The job's bookkeeping after the world moved the motor by `moved` (its count now
    /// `count`, whole degrees).
    pub fn settle(&mut self, dt: f64, plan: Option<Plan>, moved: f64, count: f64) {
        let Some(plan) = plan else {
            return;
        };
        if plan.stuck {
            self.v = 0.0;
            return;
        }
        self.v = moved / dt;
        let mut finish = plan.finish;
        let pol = self.polarity;
        if let Job::Step {
            dir, r, done, from, ..
        } = &mut self.job
        {
            // A step job ends only when its count is reached, as the firmware's
            // step-limited outputs do (the count is in whole tacho degrees): held short by a
            // stop or an obstacle, the motor stays busy, pushing, until it is stopped.
            let total = r[0] + r[1] + r[2];
            let held = (moved - plan.ds).abs() > 1e-9;
            *done = (*done + moved.abs()).min(total);
            let counted = (count - *from) * *dir * pol;
            finish = if held { counted >= total } else { finish };
        }
        if finish {
            self.job = Job::Idle;
            self.v = 0.0;
        }
    }

    pub fn speed_pct(&self) -> i8 {
        (self.v / self.full_speed * 100.0)
            .round()
            .clamp(-100.0, 100.0) as i8
    }
}
