//! The colour-sensor scan as programs on the brick: one direct command per face
//! ([Programs on the brick](crate::robot::ev3::protocol#programs-on-the-brick)) that tilts
//! the cube if the face needs it, reads the centre and the ring while the turntable turns,
//! and answers with every reading and the motor counts it was taken at. The link is used
//! once per face, whatever its latency. The same programs read a chosen set of faces only
//! ([`MindCub3r::read_faces`], for a check that needs no full scan); the design is in
//! [Scan on the brick](crate::robot::mindcub3r#scan-on-the-brick).
//!
//! Level: robot (part of the machine). No printing.

use super::super::scan::{revolution_turns, ring_samples, scan_map_turning, FaceRead};
use super::builder::{reply_offset, reply_word, report_held, stage_name, Builder, Held};
use super::*;
use crate::robot::ev3::protocol::{Cmp, DirectCommand, Operand, Var, Width};

/// Words of one reading in the reply: R, G, B, turntable count, sensor-arm count.
const REC: usize = 5;
/// Most samples a face has (centre and eight).
const MAX_SAMPLES: usize = 9;

/// What one face's program does.
struct FaceSpec<'a> {
    face: usize,
    /// Tilt first (from the arm away, the sensor arm anywhere over or off the cube).
    tilt: bool,
    samples: &'a [(Sample, usize)],
    /// Ring direction (+1 `y`, −1 `y'`) and the quarters the revolution goes on after its
    /// full turn (the next step's spin).
    dir: i8,
    extra: i8,
    /// Table angle (since start-up) where the face starts.
    base: f64,
    /// Bring the sensor arm back to clear and wait for it (the last face).
    last: bool,
}

/// Where the program's results are in the reply.
struct Layout {
    err: Var,
    recs: usize,
    stages: Vec<String>,
    /// The program's own deadline (ms since it started).
    deadline_ms: i32,
    /// None: the face's waits poll the busy flag alone (see [`Builder::wait_idle`]).
    held: Option<Held>,
}

impl MindCub3r {
    /// Puts the colour sensor in RGB-RAW, at rest. LEGO's firmware starts a colour sensor
    /// in mode 0; the first READY_RAW in another mode switches it and holds the program
    /// until the sensor sends in that mode (up to 1.2 s, `MAX_DEVICE_BUSY_TIME`). Inside a
    /// scan program that hold falls between the turntable count a sample is filed with and
    /// the reading itself, while the table turns (22-30 ms, 6-8 table degrees on the
    /// firmware brick, `ev3-firmware-audit.md` A1). A sensor that cannot switch gives
    /// 'not a number' values, ignored here: the scan's plausibility check catches them.
    pub(super) fn sensor_mode(&mut self) -> Result<(), Ev3Error> {
        let input = self.config.ports.color_sensor - 1;
        let mut c = DirectCommand::new();
        c.ready_raw(input, device::COLOR, device::COLOR_RGB_RAW, 3);
        // A read that switches the mode once: asked again, it changes nothing more.
        self.ev3
            .query(
                &format!(
                    "putting the colour sensor (port {}) in its RGB-RAW mode",
                    input + 1
                ),
                &c,
            )
            .map(|_| ())
    }

    /// The colour-sensor scan with one program on the brick per face (see the module docs).
    pub(super) fn scan_on_brick(
        &mut self,
        size: Size,
        progress: &mut dyn FnMut(ScanProgress),
        preview: &mut dyn FnMut(&RawScan),
    ) -> Result<RawScan, RobotError> {
        self.ensure_homed()?;
        self.frame = Some((size, Permutation::identity(size.stickers())));
        let turns = revolution_turns();
        let dirs: [i8; 6] = std::array::from_fn(|i| turns[i].0);
        let map = scan_map_turning(size, self.config.scan.sensor_side, &dirs);
        let total = map.len();
        let mut facelets = vec![[0.0; 3]; size.stickers()];
        let mut missed = Vec::new();
        let mut done = 0;
        // Homed: the reading begins.
        progress(ScanProgress {
            done,
            total,
            face_step: 0,
            readings: &[],
        });
        for (step, prims) in scan_steps().iter().enumerate() {
            self.check_interrupt()?;
            let samples: Vec<(Sample, usize)> = map
                .iter()
                .filter(|(s, _, _)| *s == step)
                .map(|&(_, s, i)| (s, i))
                .collect();
            if step + 1 == scan_steps().len() {
                let mut unread: Vec<usize> = samples.iter().map(|&(_, i)| i).collect();
                unread.extend_from_slice(&missed);
                let partial = RawScan::new(size, Scale::Ev3Raw, facelets.clone());
                preview(&partial.with_unread(&unread));
            }
            let spec = FaceSpec {
                face: step,
                tilt: prims.contains(&Primitive::Tilt),
                samples: &samples,
                dir: turns[step].0,
                extra: turns[step].1,
                base: self.table_deg,
                last: step + 1 == scan_steps().len(),
            };
            let readings = self.guard(|r| r.run_face(size, &spec))?;
            let mut read = Vec::with_capacity(samples.len());
            for ((_, index), rgb) in samples.iter().zip(readings) {
                match rgb {
                    Some(rgb) => {
                        facelets[*index] = rgb;
                        read.push((*index, rgb));
                    }
                    None => missed.push(*index),
                }
                done += 1;
            }
            progress(ScanProgress {
                done,
                total,
                face_step: step,
                readings: &read,
            });
        }
        let at_rest = missed.len();
        if !missed.is_empty() {
            // Samples the program could not take within their window: read at rest.
            let again = self.rescan(&missed)?;
            for (i, rgb) in missed.into_iter().zip(again) {
                facelets[i] = rgb;
            }
        }
        let mut scan = RawScan::new(size, Scale::Ev3Raw, facelets);
        scan.provenance = Some(serde_json::json!({
            "source": "ev3-colour-sensor",
            "port": self.ev3.port_name(),
            "sensor_side": self.config.scan.sensor_side,
            "on_brick": true,
            "read_at_rest": at_rest,
        }));
        Ok(scan)
    }

    /// Reads only some faces ([`FaceRead`]: the primitives that bring each up, which face of
    /// the cube as it sits now it is): readings at the facelet indices of the cube as it
    /// sat when the reading began (`None`: not read), which starts a new frame as a scan
    /// does. On the brick each face is the scan's own program (a tilt that ends the moves
    /// before it, the revolution, a spin that begins the next face's moves folded into the
    /// revolution); otherwise each face is read as the host-polled scan reads it.
    pub fn read_faces(
        &mut self,
        size: Size,
        steps: &[FaceRead],
    ) -> Result<Vec<Option<[f64; 3]>>, RobotError> {
        self.ensure_homed()?;
        self.begin_frame(size);
        let side = self.config.scan.sensor_side;
        let on_brick = self.config.scan.on_brick;
        let mut out = vec![None; size.stickers()];
        let mut frame = Permutation::identity(size.stickers());
        let mut missed = Vec::new();
        let mut folded = false;
        for (k, step) in steps.iter().enumerate() {
            self.check_interrupt()?;
            for &p in &step.before {
                frame = frame.then(&perm_of(size, p));
            }
            // What the host still has to do before this face (a spin may have been done
            // by the previous face's revolution).
            let mut host: Vec<Primitive> = step.before[usize::from(folded)..].to_vec();
            let tilt = on_brick && host.last() == Some(&Primitive::Tilt);
            if tilt {
                host.pop();
            }
            for p in host {
                self.execute(p)?;
            }
            let next = steps.get(k + 1).map(|n| n.before.as_slice()).unwrap_or(&[]);
            let (dir, extra) = match next.first() {
                Some(&Primitive::Spin(e)) if on_brick => (e.signum(), e),
                _ => (1, 0),
            };
            folded = extra != 0;
            let samples: Vec<(Sample, usize)> = ring_samples(size, side, dir)
                .into_iter()
                .map(|s| (s, frame.0[s.position] as usize))
                .collect();
            if on_brick {
                // The sensor arm goes back to clear where the host moves the cube next.
                let host_next = next.len() > usize::from(folded)
                    && !(next.len() == usize::from(folded) + 1
                        && next.last() == Some(&Primitive::Tilt));
                let spec = FaceSpec {
                    face: step.face,
                    tilt,
                    samples: &samples,
                    dir,
                    extra,
                    base: self.table_deg,
                    last: k + 1 == steps.len() || host_next,
                };
                let readings = self.guard(|r| r.run_face(size, &spec))?;
                for ((_, index), rgb) in samples.iter().zip(readings) {
                    match rgb {
                        Some(rgb) => out[*index] = Some(rgb),
                        None => missed.push(*index),
                    }
                }
            } else {
                let readings = self.guard(|r| r.scan_face(size, &samples))?;
                for ((_, index), rgb) in samples.iter().zip(readings) {
                    out[*index] = Some(rgb);
                }
            }
        }
        if !missed.is_empty() {
            let again = self.rescan(&missed)?;
            for (i, rgb) in missed.into_iter().zip(again) {
                out[i] = Some(rgb);
            }
        }
        Ok(out)
    }

    /// Builds, sends and reads back one face's program; the readings in sample order
    /// (`None`: not taken within its window, to be read at rest).
    fn run_face(
        &mut self,
        size: Size,
        spec: &FaceSpec<'_>,
    ) -> Result<Vec<Option<[f64; 3]>>, RobotError> {
        let t = self.config.turntable.clone();
        let end_deg = spec.base + spec.dir as f64 * 360.0 + 90.0 * spec.extra as f64;
        let (cmd, layout) = self.face_program(size, spec, end_deg)?;
        let name = format!("scan program of the scan's face {} of 6", spec.face + 1);
        let wait =
            Duration::from_millis(layout.deadline_ms.max(0) as u64) + self.ev3.timeouts.reply;
        // Where the program may take each motor, for the driver's plausibility checks.
        let (a, s) = (&self.config.arm, &self.config.sensor_arm);
        let arm = [a.away, a.clear, a.hold, a.hold_2x2, a.tilt_apex];
        let sensor = [s.parked, s.clear, s.centre, s.corner_2x2]
            .into_iter()
            .chain(s.edge)
            .chain(s.corner);
        let (slo, shi) = sensor.fold((i32::MAX, i32::MIN), |(l, h), v| (l.min(v), h.max(v)));
        let over = (t.over_rotation as f64 * t.ratio).abs().round() as i32;
        let (from, to) = (self.table.target, self.table_target(end_deg));
        self.ev3.may_move(
            self.arm.port,
            *arm.iter().min().unwrap_or(&0),
            *arm.iter().max().unwrap_or(&0),
        );
        self.ev3.may_move(self.sensor.port, slo, shi);
        self.ev3
            .may_move(self.table.port, from.min(to) - over, from.max(to) + over);
        let reply = self.ev3.call_within(&name, &cmd, wait);
        // Whatever happened, the motors moved on the brick.
        self.ev3.forget_counts();
        let reply = reply?;
        if let Some(held) = layout.held {
            report_held(&mut self.ev3, &reply, &name, held, &layout.stages)?;
        }
        let word = |at: usize| reply_word(&reply, &name, at);
        let err = word(reply_offset(layout.err))?;
        if err != 0 {
            self.arm_state = ArmState::Unknown;
            self.sensor_at = None;
            return Err(RobotError::ProgramTimeout {
                face: spec.face,
                stage: stage_name(&layout.stages, err, &name)?,
                ms: layout.deadline_ms.max(0) as u64,
            });
        }
        // The program's motions, in the bookkeeping.
        if spec.tilt {
            self.moved(Primitive::Tilt);
        }
        self.table_deg = end_deg;
        self.table.target = self.table_target(end_deg);
        if spec.extra != 0 {
            self.moved(Primitive::Spin(spec.extra));
        }
        self.arm_state = ArmState::Away;
        self.arm.target = self.config.arm.away;
        self.sensor.target = self.config.sensor_arm.clear;
        self.sensor_at = spec.last.then_some(self.config.sensor_arm.clear);
        let mut out = Vec::with_capacity(spec.samples.len());
        for (i, (s, _)) in spec.samples.iter().enumerate() {
            let at = layout.recs + 4 * REC * i;
            let rgb = [word(at)?, word(at + 4)?, word(at + 8)?].map(|v| v as f64);
            let (table, sensor) = (word(at + 12)?, word(at + 16)?);
            let target = self.sample_target(size, s);
            let mut ok = (sensor - target).abs() <= self.config.scan.sensor_tolerance;
            // A reading the sensor cannot give is a reply garbled on the way: read again.
            ok &= device::rgb_raw_possible(&rgb);
            if s.kind != SensorPosition::Centre {
                let angle =
                    (table - self.table_zero) as f64 / (t.ratio * t.sign as f64) - spec.base;
                ok &= (angle - s.angle).abs() <= self.config.scan.window;
            }
            out.push(ok.then_some(rgb));
        }
        Ok(out)
    }

    /// One face's program and where its results land.
    fn face_program(
        &self,
        size: Size,
        spec: &FaceSpec<'_>,
        end_deg: f64,
    ) -> Result<(DirectCommand, Layout), RobotError> {
        let cfg = &self.config;
        let (a, t, s) = (&cfg.arm, &cfg.turntable, &cfg.sensor_arm);
        let hold = self.hold_angle(size);
        let dir_motor = spec.dir as i32 * t.sign as i32;
        let end_count = self.table_target(end_deg);
        let ring: Vec<Sample> = spec
            .samples
            .iter()
            .map(|(s, _)| *s)
            .filter(|s| s.kind != SensorPosition::Centre)
            .collect();
        let centre = spec
            .samples
            .iter()
            .find(|(s, _)| s.kind == SensorPosition::Centre)
            .map(|(s, _)| self.sample_target(size, s));
        let ring_targets: Vec<i32> = ring.iter().map(|x| self.sample_target(size, x)).collect();
        let table_targets: Vec<i32> = ring
            .iter()
            .map(|x| self.table_target(spec.base + x.angle))
            .collect();
        // Ramps of the ring's sensor-arm moves: the configured ramp, or less if the ring's
        // positions are closer together than two ramps.
        let closest = ring_targets
            .windows(2)
            .map(|w| (w[1] - w[0]).unsigned_abs())
            .filter(|&d| d > 2)
            .min()
            .unwrap_or(u32::MAX);
        let ring_ramp = s.ramp.min(closest.saturating_sub(4) / 2);
        let deadline_ms = self.face_deadline_ms(size, spec, end_deg);
        let mut b = Builder::new(cfg, deadline_ms, self.ev3.timeouts.stall);
        let err = b.p.global(Width::B4);
        let recs = b.p.global_array(Width::B4, REC * MAX_SAMPLES);
        let starts = b.p.global_array(Width::B4, ring.len().max(1));
        b.p.mov(Width::B4, Width::B4, 0, err);
        for (i, &st) in ring_targets.iter().enumerate() {
            b.p.mov(Width::B4, Width::B4, st, starts.word(i));
        }
        let (arm, table, sensor) = (b.arm, b.table, b.sensor);
        let c = |v: i32| Operand::Const(v);
        if spec.tilt {
            // Arm to hold while the sensor arm goes out of its way; tilt once both are there.
            b.running_to(table, self.table.target);
            b.wait_idle(&[table], "the turntable's revolution");
            b.call_move(arm, c(hold), a.speed, (a.ramp_up, a.ramp_down));
            b.call_move(sensor, c(s.clear), s.speed, (s.ramp, s.ramp));
            b.wait_idle(
                &[arm, sensor],
                "the tilt arm moving to hold the cube and the sensor arm clear of it",
            );
            b.settle(arm, a.settle_ms);
            b.call_move(arm, c(a.tilt_apex), a.tilt_speed, (a.ramp_up, a.ramp_down));
            b.wait_idle(&[arm], "tilting the cube, the tilt arm pushing it over");
            b.call_move(arm, c(hold), a.back_speed, (a.ramp_up, a.ramp_down * 2));
            b.wait_idle(
                &[arm],
                "tilting the cube, the tilt arm coming back to hold it",
            );
            // The arm leaves at once: only a pause between moves.
            b.pause(a.settle_ms);
        }
        // Arm away while the sensor arm comes in over the cube.
        let first = ring_targets.first().copied().or(centre).unwrap_or(s.clear);
        b.call_move(arm, c(a.away), a.speed, (a.ramp_up, a.ramp_down));
        b.call_move(sensor, c(first), s.speed, (s.ramp, s.ramp));
        // The revolution may start once the arm is past `clear`, on its way away.
        b.stage("the tilt arm moving clear of the cube");
        let away = b.p.label();
        b.p.bind(away);
        b.check_deadline();
        b.p.get_count(arm, b.cnt);
        b.p.jr_if(Cmp::Gt, Width::B4, b.cnt, a.clear.max(a.away), away);
        // The revolution, the ring read on the fly.
        b.call_move(table, c(end_count), t.scan_speed, (t.ramp_up, t.ramp_down));
        if !ring.is_empty() {
            let first_rec = if centre.is_some() { REC as i32 } else { 0 };
            // Sample k's turntable count: the first one's plus k steps (within a count of
            // each sample's own rounding).
            let t0 = table_targets[0];
            let step = if ring.len() > 1 {
                (table_targets[ring.len() - 1] - t0) as f64 / (ring.len() - 1) as f64
            } else {
                0.0
            }
            .round() as i32;
            b.p.mov(Width::B1, Width::B1, 0, b.k);
            let top = b.p.label();
            b.p.bind(top);
            b.p.read_index(Width::B4, starts, b.k, b.mt);
            let mt = Operand::Var(b.mt);
            b.call_move(sensor, mt, s.speed, (ring_ramp, ring_ramp));
            b.p.mov(Width::B1, Width::B4, b.k, b.ttgt);
            b.p.mul(Width::B4, b.ttgt, step, b.ttgt);
            b.p.add(Width::B4, b.ttgt, t0, b.ttgt);
            b.stage("the turntable reaching a sticker");
            let (wait, read) = (b.p.label(), b.p.label());
            b.p.bind(wait);
            b.check_deadline();
            b.p.get_count(table, b.cnt);
            let before = if dir_motor > 0 { Cmp::Lt } else { Cmp::Gt };
            b.p.jr_if(before, Width::B4, b.cnt, b.ttgt, wait);
            b.p.get_count(sensor, b.scnt);
            b.p.sub(Width::B4, b.scnt, b.mt, b.d);
            b.abs_d();
            b.p.jr_if(Cmp::LtEq, Width::B4, b.d, cfg.scan.sensor_tolerance, read);
            // The sensor arm is not there yet: wait while the sticker is within the window.
            if dir_motor > 0 {
                b.p.sub(Width::B4, b.cnt, b.ttgt, b.d);
            } else {
                b.p.sub(Width::B4, b.ttgt, b.cnt, b.d);
            }
            let window = (cfg.scan.window * t.ratio).round() as i32;
            b.p.jr_if(Cmp::Lt, Width::B4, b.d, window, wait);
            b.p.bind(read);
            b.read_rgb();
            b.p.mul(Width::B1, b.k, REC as i32, b.idx);
            b.p.add(Width::B1, b.idx, first_rec, b.idx);
            b.store(recs);
            b.p.add(Width::B1, b.k, 1, b.k);
            b.p.jr_if(Cmp::Lt, Width::B1, b.k, ring.len() as i32, top);
        }
        if let Some(centre) = centre {
            // The centre last: it is on the turntable's axis, so it reads the same while
            // the table runs on or slows down, and the ring's first sticker is not missed
            // for want of time to get from the centre to the corner radius.
            b.call_move(sensor, c(centre), s.speed, (s.ramp, s.ramp));
            b.wait_sensor_near(centre, "sensor arm over the centre");
            b.read_rgb();
            b.p.get_count(table, b.cnt);
            b.p.mov(Width::B1, Width::B1, 0, b.idx);
            b.store(recs);
        }
        // The sensor arm goes out at once (the next face's tilt waits for it).
        b.call_move(sensor, c(s.clear), s.speed, (s.ramp, s.ramp));
        if spec.last {
            b.wait_idle(&[table, sensor], "the turntable's revolution");
        }
        let held = b.held;
        let (cmd, stages) = b.end(err);
        let cmd = cmd.map_err(|why| RobotError::Program {
            face: spec.face,
            why,
        })?;
        Ok((
            cmd,
            Layout {
                err,
                recs: reply_offset(recs),
                stages,
                deadline_ms,
                held,
            },
        ))
    }

    /// The program's own time limit: twice the nominal time of its moves and pauses (as
    /// the driver's [time budgets](crate::robot::ev3::driver::motion#time-budgets)), plus the
    /// configured allowance.
    fn face_deadline_ms(&self, size: Size, spec: &FaceSpec<'_>, end_deg: f64) -> i32 {
        let (a, t, s) = (
            &self.config.arm,
            &self.config.turntable,
            &self.config.sensor_arm,
        );
        let arm_ramps = (a.ramp_up, a.ramp_down);
        let hold = self.hold_angle(size) as f64;
        let mut secs = 0.0;
        if spec.tilt {
            let swing = (a.tilt_apex as f64 - hold).abs();
            secs += self
                .arm
                .nominal_secs(hold - a.away as f64, a.speed, arm_ramps)
                + self.arm.nominal_secs(swing, a.tilt_speed, arm_ramps)
                + self.arm.nominal_secs(swing, a.back_speed, arm_ramps)
                + self
                    .sensor
                    .nominal_secs((s.centre - s.clear) as f64, s.speed, (s.ramp, s.ramp))
                + 2.0 * a.settle_ms as f64 / 1000.0;
        }
        let turn = (end_deg - spec.base).abs() * t.ratio;
        secs += self
            .arm
            .nominal_secs(hold - a.away as f64, a.speed, arm_ramps)
            + a.settle_ms as f64 / 1000.0
            + self
                .table
                .nominal_secs(turn, t.scan_speed, (t.ramp_up, t.ramp_down))
            + 2.0
                * self
                    .sensor
                    .nominal_secs((s.centre - s.clear) as f64, s.speed, (s.ramp, s.ramp));
        let ms = 2000.0 * secs + self.ev3.timeouts.move_extra.as_millis() as f64;
        ms.min(i32::MAX as f64) as i32
    }

    /// The bookkeeping of a whole-cube move the brick made (as [`MindCub3r::execute`] keeps it).
    fn moved(&mut self, p: Primitive) {
        self.orientation = self.orientation.after(p);
        if let Some((size, frame)) = self.frame.take() {
            self.frame = Some((size, frame.then(&perm_of(size, p))));
        }
        self.last = Some(p);
    }
}
