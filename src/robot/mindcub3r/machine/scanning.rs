//! The colour-sensor scan polled by the host: each face's revolution read on the fly, one
//! round trip a sample, and the re-reads of chosen stickers; then whole-cube moves that
//! bring a chosen facelet to the top (the programs on the brick that scan are in
//! `onbrick`).
//!
//! Level: robot (part of the machine). No printing.

use super::*;

impl MindCub3r {
    /// One RGB-RAW reading.
    pub fn read_rgb(&mut self) -> Result<[f64; 3], RobotError> {
        let port = self.config.ports.color_sensor - 1;
        Ok(self.ev3.read_rgb(port)?)
    }

    /// One RGB-RAW reading with the sensor arm over the top face's centre, where a 3x3x3
    /// has a sticker and a 2x2x2 the gap where four pieces meet.
    pub fn read_top_centre(&mut self) -> Result<[f64; 3], RobotError> {
        self.execute(Primitive::Sensor(SensorPosition::Centre))?;
        self.read_rgb()
    }

    /// One RGB-RAW reading with the table turned `offset` table degrees from where it
    /// stands, as the scan turns it for a sample (corners are read 45° round from square),
    /// then turned back square: the arm goes away first, so no layer turns.
    pub fn read_rgb_turned(&mut self, offset: f64) -> Result<[f64; 3], RobotError> {
        if offset == 0.0 {
            return self.read_rgb();
        }
        self.guard(|r| {
            r.arm_to(ArmState::Away)?;
            let (base, speed) = (r.table_deg, r.config.turntable.speed);
            r.table_to(base + offset, speed, "table to the sample's angle")?;
            let rgb = r.read_rgb();
            r.table_to(base, speed, "table back square")?;
            rgb
        })
    }

    pub(super) fn sample_target(&self, size: Size, s: &Sample) -> i32 {
        let a = &self.config.sensor_arm;
        match (s.kind, size) {
            (SensorPosition::Centre, _) => a.centre,
            (SensorPosition::Corner, Size::Two) => a.corner_2x2,
            (SensorPosition::Corner, _) => a.corner[s.slot % 4],
            (SensorPosition::Edge, _) => a.edge[s.slot % 4],
            _ => a.clear,
        }
    }

    /// The colour-sensor scan → readings at the URFDLB facelet indices of the cube as it
    /// sat before the scan. The cube ends in the orientation given in
    /// [Scan order](crate::robot::mindcub3r#scan-order).
    pub fn scan(
        &mut self,
        size: Size,
        progress: &mut dyn FnMut(ScanProgress),
    ) -> Result<RawScan, RobotError> {
        self.scan_with_preview(size, progress, &mut |_| {})
    }

    /// [`MindCub3r::scan`], and on the brick (`scan.on_brick`) `preview` is handed the
    /// readings so far just before the last face's program is sent: the last face's
    /// stickers (and any sample missed on the fly) marked unread. Whoever resolves the
    /// cube may start on them while the robot reads the last face.
    pub fn scan_with_preview(
        &mut self,
        size: Size,
        progress: &mut dyn FnMut(ScanProgress),
        preview: &mut dyn FnMut(&RawScan),
    ) -> Result<RawScan, RobotError> {
        if self.config.scan.on_brick {
            return self.scan_on_brick(size, progress, preview);
        }
        self.ensure_homed()?;
        self.frame = Some((size, Permutation::identity(size.stickers())));
        let map = scan_map(size, self.config.scan.sensor_side);
        let total = map.len();
        let mut facelets = vec![[0.0; 3]; size.stickers()];
        let mut done = 0;
        for (step, prims) in scan_steps().iter().enumerate() {
            for &p in prims {
                self.execute(p)?;
            }
            self.check_interrupt()?;
            let samples: Vec<(Sample, usize)> = map
                .iter()
                .filter(|(s, _, _)| *s == step)
                .map(|&(_, s, i)| (s, i))
                .collect();
            let readings = self.guard(|r| r.scan_face(size, &samples))?;
            let mut read = Vec::with_capacity(samples.len());
            for ((_, index), rgb) in samples.iter().zip(readings) {
                facelets[*index] = rgb;
                read.push((*index, rgb));
                done += 1;
            }
            progress(ScanProgress {
                done,
                total,
                face_step: step,
                readings: &read,
            });
        }
        let mut scan = RawScan::new(size, Scale::Ev3Raw, facelets);
        scan.provenance = Some(serde_json::json!({
            "source": "ev3-colour-sensor",
            "port": self.ev3.port_name(),
            "sensor_side": self.config.scan.sensor_side,
        }));
        Ok(scan)
    }

    /// Reads one face: centre at rest, then one revolution sampling on the fly; samples
    /// missed on the fly are read at rest afterwards.
    pub(super) fn scan_face(
        &mut self,
        size: Size,
        samples: &[(Sample, usize)],
    ) -> Result<Vec<[f64; 3]>, RobotError> {
        let mut out: Vec<Option<[f64; 3]>> = vec![None; samples.len()];
        // Arm away and sensor arm in at the same time (the sensor may reach over the cube
        // while the tilt arm swings between hold and away, never while it tilts).
        let first = samples
            .first()
            .map(|(s, _)| self.sample_target(size, s))
            .unwrap_or(self.config.sensor_arm.clear);
        self.arm_away_and_sensor_to(first)?;
        let base = self.table_deg;
        let mut ring = Vec::new();
        for (i, (s, _)) in samples.iter().enumerate() {
            if s.kind == SensorPosition::Centre {
                let t = self.sample_target(size, s);
                self.sensor_to(t, "sensor arm to the centre")?;
                out[i] = Some(self.read_rgb()?);
            } else {
                ring.push(i);
            }
        }
        if self.config.scan.on_the_fly && !ring.is_empty() {
            self.revolution(size, samples, &ring, base, &mut out)?;
        }
        // Anything not read yet: stop-and-go at rest.
        for &i in &ring {
            if out[i].is_some() {
                continue;
            }
            let s = samples[i].0;
            let speed = self.config.turntable.speed;
            self.table_to(base + s.angle, speed, "turntable to a sticker")?;
            let t = self.sample_target(size, &s);
            self.sensor_to(t, "sensor arm over a sticker")?;
            out[i] = Some(self.read_rgb()?);
        }
        let end = base + 360.0;
        if (self.table_deg - end).abs() > 0.5 {
            let speed = self.config.turntable.speed;
            self.table_to(end, speed, "turntable back to square")?;
        }
        self.sensor_clear()?;
        Ok(out.into_iter().map(|o| o.unwrap_or([0.0; 3])).collect())
    }

    /// One revolution of the turntable with the sensor over one ring of stickers: the table
    /// turns through 360° at scan speed while each round trip reads both counts and the
    /// colour, and the sensor arm moves on to the next ring position as soon as a sample
    /// has its reading.
    pub(super) fn revolution(
        &mut self,
        size: Size,
        samples: &[(Sample, usize)],
        ring: &[usize],
        base: f64,
        out: &mut [Option<[f64; 3]>],
    ) -> Result<(), RobotError> {
        let t = self.config.turntable.clone();
        let color = self.config.ports.color_sensor - 1;
        let first = self.sample_target(size, &samples[ring[0]].0);
        self.sensor_to(first, "sensor arm to the first sticker ring")?;
        let end = base + 360.0;
        let target = self.table_target(end);
        let mut table = self.table;
        let d = self.ev3.start_move_to(
            &mut table,
            target,
            t.scan_speed,
            (t.ramp_up, t.ramp_down),
            true,
        )?;
        self.table = table;
        let budget = Duration::from_secs_f64(
            2.0 * self
                .table
                .nominal_secs(d as f64, t.scan_speed, (t.ramp_up, t.ramp_down)),
        ) + self.ev3.timeouts.move_extra;
        let started = std::time::Instant::now();
        let mut cursor = RingCursor {
            samples,
            ring,
            next: 0,
            best: None,
            sensor_target: first,
        };
        let mut last_move = (self.ev3.count(self.table.port)?, std::time::Instant::now());
        loop {
            if self
                .interrupt
                .as_ref()
                .is_some_and(|f| f.load(Ordering::SeqCst))
            {
                let stopped = self.ev3.stop_all().is_ok();
                return Err(Ev3Error::Interrupted {
                    command: "scanning revolution".into(),
                    stopped,
                }
                .into());
            }
            let sample = self.scan_sample(color)?;
            let angle = (sample.table - self.table_zero) as f64 / (t.ratio * t.sign as f64) - base;
            let now = std::time::Instant::now();
            if (sample.table - last_move.0).abs() >= 2 {
                last_move = (sample.table, now);
            } else if sample.table_busy
                && (sample.table - target).abs() > 3
                && now - last_move.1 >= self.ev3.timeouts.stall
            {
                return Err(Ev3Error::Stalled {
                    command: "scanning revolution".into(),
                    port: self.table.port,
                    position: sample.table,
                    target,
                    ms: (now - last_move.1).as_millis() as u64,
                }
                .into());
            }
            self.follow_ring(size, &mut cursor, angle, &sample, out)?;
            if !sample.table_busy {
                break;
            }
            if started.elapsed() > budget {
                return Err(Ev3Error::MoveTimeout {
                    command: "scanning revolution".into(),
                    port: self.table.port,
                    position: sample.table,
                    target,
                    ms: budget.as_millis() as u64,
                }
                .into());
            }
            std::thread::sleep(self.ev3.timeouts.poll);
        }
        // Let a sensor-arm move started near the end finish.
        let sensor = self.sensor;
        self.ev3
            .wait("sensor arm settle", &[sensor], Duration::from_secs(3))?;
        self.table_deg = end;
        Ok(())
    }

    /// One round trip during a revolution: turntable and sensor-arm counts, the colour
    /// sensor's raw RGB and whether the turntable is still busy.
    fn scan_sample(&mut self, color: u8) -> Result<ScanSample, RobotError> {
        let mut c = DirectCommand::new();
        let tb = c.output_get_count(self.table.port);
        let sc = c.output_get_count(self.sensor.port);
        let rgb = c.ready_raw(color, device::COLOR, device::COLOR_RGB_RAW, 3);
        let busy = c.output_test(self.table.bit_nos() | self.sensor.bit_nos());
        let name = "scan sample (the colour, and where the turntable and the sensor arm are)";
        let r = self.ev3.query(name, &c)?;
        let get = |s| {
            r.i32(s).map_err(|e| Ev3Error::Malformed {
                command: name.into(),
                detail: e.to_string(),
            })
        };
        let (table, sensor) = (get(tb)?, get(sc)?);
        let (tp, sp) = (self.table.port, self.sensor.port);
        Ok(ScanSample {
            table: self.ev3.check_count(name, tp, table)?,
            sensor: self.ev3.check_count(name, sp, sensor)?,
            rgb: [
                get(rgb[0])? as f64,
                get(rgb[1])? as f64,
                get(rgb[2])? as f64,
            ],
            table_busy: r.i8(busy).unwrap_or(0) != 0,
        })
    }

    /// Takes the reading of `sample` (table at `angle` from the ring's start) for the ring
    /// positions it serves: the closest reading within the window is kept, and once the
    /// table is past a position the sensor arm starts towards the next one.
    fn follow_ring(
        &mut self,
        size: Size,
        cursor: &mut RingCursor<'_>,
        angle: f64,
        sample: &ScanSample,
        out: &mut [Option<[f64; 3]>],
    ) -> Result<(), RobotError> {
        let window = self.config.scan.window;
        let tol = self.config.scan.sensor_tolerance;
        let ring = cursor.ring;
        while cursor.next < ring.len() {
            let k = cursor.next;
            let s = cursor.samples[ring[k]].0;
            let err = angle - s.angle;
            if err.abs() <= window
                && (sample.sensor - cursor.sensor_target).abs() <= tol
                && cursor.best.is_none_or(|(e, _)| err.abs() < e)
            {
                cursor.best = Some((err.abs(), sample.rgb));
            }
            // Past this sample (or at it with a reading): keep the best reading and
            // start moving the sensor arm for the next one at once.
            if err > window
                || (cursor.best.is_some() && err >= 0.0)
                || (!sample.table_busy && k + 1 == ring.len() && err > -window)
            {
                if let Some((_, rgb)) = cursor.best.take() {
                    out[ring[k]] = Some(rgb);
                }
                cursor.next = k + 1;
                if cursor.next < ring.len() {
                    let next = self.sample_target(size, &cursor.samples[ring[cursor.next]].0);
                    if next != cursor.sensor_target {
                        cursor.sensor_target = next;
                        let sp = self.config.sensor_arm.speed;
                        let ramp = self.config.sensor_arm.ramp;
                        let mut sensor = self.sensor;
                        self.ev3
                            .start_move_to(&mut sensor, next, sp, (ramp, ramp), true)?;
                        self.sensor = sensor;
                        self.sensor_at = Some(next);
                    }
                }
                continue;
            }
            break;
        }
        Ok(())
    }

    /// Re-reads single stickers (facelet indices of the last scan's frame). The cube must
    /// not have had a layer turned since the scan.
    pub fn rescan(&mut self, stickers: &[usize]) -> Result<Vec<[f64; 3]>, RobotError> {
        let (size, _) = self.frame.clone().ok_or(RobotError::RescanWithoutScan)?;
        let side = self.config.scan.sensor_side;
        let samples = face_samples(size, side);
        let mut out = Vec::new();
        for &want in stickers {
            if want >= size.stickers() {
                return Err(RobotError::NoSuchSticker {
                    sticker: want,
                    size,
                });
            }
            let pos = self.bring_to_top(want)?;
            let s = *samples
                .iter()
                .find(|s| s.position == pos)
                .ok_or(RobotError::Unreadable { sticker: want })?;
            let rgb = self.guard(|r| {
                r.arm_to(ArmState::Away)?;
                let base = r.table_deg;
                let speed = r.config.turntable.speed;
                if s.kind != SensorPosition::Centre {
                    r.table_to(base + s.angle, speed, "turntable to a sticker")?;
                }
                let t = r.sample_target(size, &s);
                r.sensor_to(t, "sensor arm over a sticker")?;
                let rgb = r.read_rgb()?;
                r.sensor_clear()?;
                if s.kind != SensorPosition::Centre {
                    // Back to where it was (same orientation).
                    let back = base + if s.angle >= 180.0 { 360.0 } else { 0.0 };
                    r.table_to(back, speed, "turntable back to square")?;
                }
                Ok(rgb)
            })?;
            out.push(rgb);
        }
        Ok(out)
    }

    /// Starts a new scan frame (as a scan does) for a scanner other than the colour sensor
    /// (e.g. a camera over the top face): facelet indices are then those of the cube as it
    /// sits now, and whole-cube moves keep the frame.
    pub fn begin_frame(&mut self, size: Size) {
        self.frame = Some((size, Permutation::identity(size.stickers())));
    }

    /// For each top-face position (robot frame, row-major), the facelet index (frame of the
    /// last scan start) it shows now; `None` before any scan.
    pub fn top_facelets(&self) -> Option<Vec<usize>> {
        self.frame
            .as_ref()
            .map(|(size, f)| f.0[..size.per_face()].iter().map(|&i| i as usize).collect())
    }

    /// Brings facelet `want` (frame of the last scan start) to the top face with as few
    /// whole-cube moves as possible; returns the top-face position it is at then.
    pub fn bring_to_top(&mut self, want: usize) -> Result<usize, RobotError> {
        let (size, _) = self.frame.clone().ok_or(RobotError::NoScanFrame)?;
        if want >= size.stickers() {
            return Err(RobotError::NoSuchSticker {
                sticker: want,
                size,
            });
        }
        let plan = self.plan_to_top(size, want);
        for p in plan {
            self.execute(p)?;
        }
        self.check_interrupt()?;
        let (_, frame) = self.frame.clone().ok_or(RobotError::FrameLost)?;
        frame
            .0
            .iter()
            .position(|&o| o as usize == want)
            .ok_or(RobotError::NotInFrame { sticker: want })
    }

    fn plan_to_top(&self, size: Size, want: usize) -> Vec<Primitive> {
        let (_, frame) = self.frame.clone().expect("checked by the caller");
        let per = size.per_face();
        let on_top = |f: &Permutation| {
            f.0.iter()
                .position(|&o| o as usize == want)
                .is_some_and(|p| p < per)
        };
        // Breadth-first over whole-cube moves (cost ≈ seconds from the timings).
        let moves = [
            Primitive::Tilt,
            Primitive::Spin(1),
            Primitive::Spin(-1),
            Primitive::Spin(2),
        ];
        let mut queue = std::collections::VecDeque::from([(frame, Vec::<Primitive>::new())]);
        while let Some((f, path)) = queue.pop_front() {
            if on_top(&f) {
                return path;
            }
            if path.len() >= 4 {
                continue;
            }
            for &m in &moves {
                let mut p = path.clone();
                p.push(m);
                queue.push_back((f.then(&perm_of(size, m)), p));
            }
        }
        Vec::new()
    }
}

/// One round trip of a scanning revolution.
struct ScanSample {
    /// Turntable and sensor-arm sensor counts.
    table: i32,
    sensor: i32,
    /// Raw RGB of the colour sensor.
    rgb: [f64; 3],
    table_busy: bool,
}

/// Where a scanning revolution is in its ring of samples.
struct RingCursor<'a> {
    samples: &'a [(Sample, usize)],
    ring: &'a [usize],
    /// The next ring position to read.
    next: usize,
    /// The best reading of that position so far: (angle error, RGB).
    best: Option<(f64, [f64; 3])>,
    /// Where the sensor arm was sent.
    sensor_target: i32,
}
