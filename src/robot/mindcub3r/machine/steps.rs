//! The primitives on the host's side: each motor move of the tilt arm, the turntable and
//! the colour-sensor arm, with the settling, the over-rotation and the bookkeeping of the
//! move that changes the cube (see [What a stop leaves](super#what-a-stop-leaves)).
//!
//! Level: robot (part of the machine). No printing.

use super::*;

impl MindCub3r {
    /// Waits until the tilt arm has come to rest (see [`Self::settle_motor`]): a tilt
    /// must start from an arm at rest at hold.
    pub(super) fn settle(&mut self) -> Result<(), RobotError> {
        self.settle_motor(self.arm.port)
    }

    /// Waits until a motor's count stands still over the settle pause (at least 20 ms) of
    /// the brick's time, a second at most. A move's job ends at its count while the motor
    /// still runs on and its brake pulls the overshoot back (see
    /// [Settling](crate::robot::ev3::driver::motion#settling), and `machine::builder`'s
    /// `settle`, the same rule on the brick): the next move, relative to the count read
    /// before it, must start from the motor at rest.
    pub(super) fn settle_motor(&mut self, port: OutputPort) -> Result<(), RobotError> {
        self.settled_count(port).map(|_| ())
    }

    /// [`Self::settle_motor`], and the count the motor came to rest at.
    pub(super) fn settled_count(&mut self, port: OutputPort) -> Result<i32, RobotError> {
        let window = Duration::from_millis(self.config.arm.settle_ms.max(20));
        Ok(self.ev3.settle(port, window, Duration::from_secs(1))?)
    }

    fn move_motor(
        &mut self,
        which: OutputPort,
        what: &str,
        target: i32,
        speed: i8,
        ramps: (u32, u32),
    ) -> Result<(), RobotError> {
        self.check_interrupt()?;
        self.await_tail()?;
        let mut m = if which == self.arm.port {
            self.arm
        } else if which == self.table.port {
            self.table
        } else {
            self.sensor
        };
        let res = self.ev3.move_to(what, &mut m, target, speed, ramps);
        if which == self.arm.port {
            self.arm = m;
        } else if which == self.table.port {
            self.table = m;
        } else {
            self.sensor = m;
        }
        res?;
        if which == self.table.port {
            // The turntable too runs on past a move's end and is braked back.
            self.settle_motor(which)?;
        }
        Ok(())
    }

    pub(super) fn hold_angle(&self, size: Size) -> i32 {
        match size {
            Size::Three => self.config.arm.hold,
            Size::Two => self.config.arm.hold_2x2,
        }
    }

    pub(super) fn arm_to(&mut self, s: ArmState) -> Result<(), RobotError> {
        if self.arm_state == s {
            return Ok(());
        }
        let a = self.config.arm.clone();
        let size = self.frame.as_ref().map(|f| f.0).unwrap_or(Size::Three);
        let (target, what) = match s {
            ArmState::Away => (a.away, "arm away"),
            _ => (self.hold_angle(size), "arm to hold"),
        };
        self.move_motor(
            self.arm.port,
            what,
            target,
            a.speed,
            (a.ramp_up, a.ramp_down),
        )?;
        self.settle()?;
        self.arm_state = s;
        Ok(())
    }

    pub(super) fn sensor_to(&mut self, target: i32, what: &str) -> Result<(), RobotError> {
        if self.sensor_at == Some(target) {
            return Ok(());
        }
        let s = self.config.sensor_arm.clone();
        self.move_motor(self.sensor.port, what, target, s.speed, (s.ramp, s.ramp))?;
        self.sensor_at = Some(target);
        Ok(())
    }

    pub(super) fn arm_away_and_sensor_to(&mut self, sensor_target: i32) -> Result<(), RobotError> {
        if self.arm_state == ArmState::Away || self.sensor_at == Some(sensor_target) {
            self.arm_to(ArmState::Away)?;
            return self.sensor_to(sensor_target, "sensor arm in");
        }
        let a = self.config.arm.clone();
        let s = self.config.sensor_arm.clone();
        let (mut arm, mut sensor) = (self.arm, self.sensor);
        let da =
            self.ev3
                .start_move_to(&mut arm, a.away, a.speed, (a.ramp_up, a.ramp_down), true)?;
        let ds =
            self.ev3
                .start_move_to(&mut sensor, sensor_target, s.speed, (s.ramp, s.ramp), true)?;
        self.arm = arm;
        self.sensor = sensor;
        let secs = arm
            .nominal_secs(da as f64, a.speed, (a.ramp_up, a.ramp_down))
            .max(sensor.nominal_secs(ds as f64, s.speed, (s.ramp, s.ramp)));
        let budget = Duration::from_secs_f64(2.0 * secs) + self.ev3.timeouts.move_extra;
        self.ev3
            .wait("arm away + sensor arm in", &[arm, sensor], budget)?;
        self.settle()?;
        self.arm_state = ArmState::Away;
        self.sensor_at = Some(sensor_target);
        Ok(())
    }

    pub(super) fn sensor_clear(&mut self) -> Result<(), RobotError> {
        let clear = self.config.sensor_arm.clear;
        // Anything further out than "clear" is clear too.
        if self.sensor_at.is_some_and(|p| p >= clear) {
            return Ok(());
        }
        self.sensor_to(clear, "sensor arm to clear")
    }

    pub(super) fn table_target(&self, deg: f64) -> i32 {
        let t = &self.config.turntable;
        self.table_zero + (deg * t.ratio * t.sign as f64).round() as i32
    }

    /// Moves the table to an absolute angle (table degrees since start-up).
    pub(super) fn table_to(&mut self, deg: f64, speed: i8, what: &str) -> Result<(), RobotError> {
        let t = self.config.turntable.clone();
        let target = self.table_target(deg);
        self.move_motor(
            self.table.port,
            what,
            target,
            speed,
            (t.ramp_up, t.ramp_down),
        )?;
        self.table_deg = deg;
        Ok(())
    }

    /// Executes one primitive (moving the arm first where its precondition needs it).
    pub fn execute(&mut self, p: Primitive) -> Result<(), RobotError> {
        self.check_interrupt()?;
        self.ensure_homed()?;
        self.attempt = Some((p, None));
        self.guard(|r| r.execute_inner(p))?;
        self.attempt = None;
        self.after_primitive(p);
        Ok(())
    }

    /// The bookkeeping of a primitive that happened: the cube's orientation, the scan
    /// frame (lost by a layer turn), the last primitive.
    pub(super) fn after_primitive(&mut self, p: Primitive) {
        self.orientation = self.orientation.after(p);
        if let Some((size, frame)) = self.frame.take() {
            match p {
                Primitive::Turn(_) => {}
                Primitive::Tilt | Primitive::Spin(_) => {
                    self.frame = Some((size, frame.then(&perm_of(size, p))))
                }
                _ => self.frame = Some((size, frame)),
            }
        }
        self.last = Some(p);
    }

    fn execute_inner(&mut self, p: Primitive) -> Result<(), RobotError> {
        match p {
            Primitive::ArmAway => self.arm_to(ArmState::Away),
            Primitive::ArmHold => self.arm_to(ArmState::Hold),
            Primitive::Tilt => {
                self.sensor_clear()?;
                self.arm_to(ArmState::Hold)?;
                let a = self.config.arm.clone();
                self.effect_begins(self.arm.port, self.arm.target, a.tilt_apex, true);
                self.move_motor(
                    self.arm.port,
                    "tilting the cube, the tilt arm pushing it over",
                    a.tilt_apex,
                    a.tilt_speed,
                    (a.ramp_up, a.ramp_down),
                )?;
                self.effect_done();
                let size = self.frame.as_ref().map(|f| f.0).unwrap_or(Size::Three);
                let hold = self.hold_angle(size);
                self.move_motor(
                    self.arm.port,
                    "tilting the cube, the tilt arm coming back to hold it",
                    hold,
                    a.back_speed,
                    (a.ramp_up, a.ramp_down * 2),
                )?;
                self.settle()?;
                Ok(())
            }
            Primitive::Spin(k) => {
                let k = check_quarter(k)?;
                self.arm_to(ArmState::Away)?;
                let deg = self.table_deg + 90.0 * k as f64;
                let speed = self.config.turntable.speed;
                let to = self.table_target(deg);
                self.effect_begins(self.table.port, self.table.target, to, false);
                self.table_to(deg, speed, &format!("spin {k:+}"))?;
                self.effect_done();
                Ok(())
            }
            Primitive::Turn(k) => {
                let k = check_quarter(k)?;
                self.sensor_clear()?;
                self.arm_to(ArmState::Hold)?;
                let t = self.config.turntable.clone();
                let deg = self.table_deg + 90.0 * k as f64;
                let target = self.table_target(deg);
                let over = t.over_rotation * (k.signum() as i32) * t.sign as i32;
                let what = format!("turning a layer ({k:+} quarter)");
                self.effect_begins(self.table.port, self.table.target, target, false);
                self.move_motor(
                    self.table.port,
                    &format!("{what}: the turntable going a little past the quarter before it comes back"),
                    target + over,
                    t.turn_speed,
                    (t.ramp_up, t.ramp_down),
                )?;
                self.effect_done();
                self.move_motor(
                    self.table.port,
                    &format!("{what}: the turntable coming back to the quarter"),
                    target,
                    t.over_rotation_speed,
                    (0, 0),
                )?;
                self.table_deg = deg;
                Ok(())
            }
            Primitive::Sensor(pos) => {
                let s = self.config.sensor_arm.clone();
                let target = match pos {
                    SensorPosition::Parked => s.parked,
                    SensorPosition::Clear => s.clear,
                    SensorPosition::Corner => s.corner[0],
                    SensorPosition::Edge => s.edge[0],
                    SensorPosition::Centre => s.centre,
                };
                if !matches!(pos, SensorPosition::Parked | SensorPosition::Clear) {
                    // The sensor reaches over the top face: the tilt arm must be away.
                    self.arm_to(ArmState::Away)?;
                }
                self.sensor_to(target, &format!("sensor arm to {pos}"))
            }
            Primitive::Read => self.read_rgb().map(|_| ()),
        }
    }

    /// The cube-changing move of the primitive under way is about to be sent.
    fn effect_begins(&mut self, port: OutputPort, from: i32, to: i32, tilt: bool) {
        if let Some((_, effect)) = self.attempt.as_mut() {
            *effect = Some(Effect {
                port,
                from,
                to,
                done: false,
                tilt,
            });
        }
    }

    /// ... and the brick confirmed it finished.
    fn effect_done(&mut self) {
        if let Some((_, Some(e))) = self.attempt.as_mut() {
            e.done = true;
        }
    }
}
