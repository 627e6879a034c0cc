//! The simulated brick's direct-command interpreter: decodes a command frame, runs its
//! operations one at a time against the brick's motors, sensors and memory, suspends on
//! OUTPUT_READY / TIMER_READY / SOUND_READY until the motors finish, and encodes the reply.
//!
//! ## Time
//!
//! Bytecode takes time on the brick: LMS2012 runs a program for at most 2000 instructions
//! or 2 ms before it serves the communication module and the other program slots
//! (`lms2012.c`, `PRG_PRIORITY`), so an instruction takes at least about a microsecond,
//! and the ones that call into a driver (OUTPUT_TEST reads the PWM device) far longer.
//! The simulator charges every instruction [`INSTRUCTION_S`] of simulated time: a command
//! runs [`SLICE`] instructions when it arrives and as many in every simulation step after
//! that, between the motors' steps, until it ends. A command that loops (waiting for a
//! motor count, say) therefore runs for as long as its loop needs, the motors moving
//! meanwhile, and, as on the brick, nothing else is answered until it ends.
//!
//! ## Before it runs
//!
//! A command is decoded whole through the [table of operations](protocol::ops) when it
//! arrives and checked as the firmware's validator checks it: a command it refuses (a
//! constant first parameter outside its kind's range, a misaligned variable), one with an
//! operation the table does not hold or that does not decode, or one that gives an output
//! as a constant, gets DIRECT_REPLY_ERROR and none of it runs. What fails while it runs (a
//! NOS out of range, a jump out of the command, nothing on an input) ends it there with an
//! error reply, after the operations before have run.
//!
//! ## Memory
//!
//! A command's local memory starts zeroed; its global memory does not. The firmware keeps
//! one global buffer for direct commands (`c_com.h:1566`, handed to the command slot at
//! `c_com.c:3440`) and clears only the program's own memory when it loads a command
//! (`lms2012.c:1426-1431`; the slot's globals are that buffer, `:1446-1449`). So a command
//! finds in its global bytes what the commands before it left there, and the simulated
//! brick keeps one such buffer. A reply carries the command's global bytes whatever its
//! status (`c_com.c:3508`): an error reply too, as they were.
//!
//! Level: robot (uses [`crate::robot::ev3::protocol`]). No I/O, no printing.

use std::sync::Arc;

use super::vm::{load, narrow, Var};
use super::*;
use crate::robot::ev3::protocol::ops::{self, Instr, Walk};

impl Brick {
    /// Handles one frame; returns the reply bytes to send (if any). A frame arriving while
    /// a command runs waits, unread, and runs after it, in order, as the firmware's
    /// communication module does (see "As the firmware does" in [`super`]'s docs). The
    /// link's faults are not the brick's: [`crate::robot::sim::link`] applies them around
    /// it.
    pub fn handle(&mut self, frame: &[u8]) -> Option<Vec<u8>> {
        if self.suspended.is_some() || !self.queue.is_empty() {
            let counter = frame
                .get(2..4)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .unwrap_or(0);
            self.note(format!(
                "command {counter} arrived while another was running: it waits until that one ends"
            ));
            self.queue.push_back(frame.to_vec());
            return None;
        }
        self.start(frame)
    }

    /// Reads and runs one frame (the brick is free); its reply if it ended at once.
    fn start(&mut self, frame: &[u8]) -> Option<Vec<u8>> {
        self.commands += 1;
        let n = self.commands;
        let program = (frame.len() >= crate::robot::sim::config::PROGRAM_BYTES).then(|| {
            self.programs += 1;
            self.programs
        });
        if program.is_some() && self.faults.stall_program == program {
            self.stall_armed = true;
            self.note(format!(
                "fault injected: the next positioning move from program {} (command {n}) on stalls",
                self.programs
            ));
        }
        if self.faults.stall_at == Some(n) {
            self.stall_armed = true;
            self.note(format!(
                "fault injected: the next positioning move from command {n} on stalls"
            ));
        }
        self.handle_inner(frame)
    }

    fn handle_inner(&mut self, frame: &[u8]) -> Option<Vec<u8>> {
        let f = match decode_command(frame) {
            Ok(f) => f,
            Err(e) => {
                self.note(format!("undecodable frame ({e}): {}", protocol::hex(frame)));
                if frame.len() >= 5 && frame[4] & 0x80 == 0 {
                    let counter = u16::from_le_bytes([frame[2], frame[3]]);
                    return Some(encode_reply(counter, false, &[]));
                }
                return None;
            }
        };
        if f.is_system() {
            if !f.wants_reply() {
                return None;
            }
            let cmd = f.body.first().copied().unwrap_or(0);
            let mut out = vec![0, 0];
            out.extend_from_slice(&f.counter.to_le_bytes());
            out.extend_from_slice(&[protocol::SYSTEM_REPLY_ERROR, cmd, 0x0A]);
            let len = (out.len() - 2) as u16;
            out[..2].copy_from_slice(&len.to_le_bytes());
            return Some(out);
        }
        if f.global > protocol::MAX_GLOBALS {
            self.note(format!(
                "command {} asks for {} bytes of global memory; no reply can carry more than {}: error reply",
                f.counter,
                f.global,
                protocol::MAX_GLOBALS
            ));
            return f.wants_reply().then(|| encode_reply(f.counter, false, &[]));
        }
        let code = ops::walk(&f.body);
        if let Some(why) = refusal(&code) {
            // As the firmware's validator does: the whole command refused before any of it
            // runs.
            self.note(format!(
                "error reply to command {}: {why}; nothing of it runs ({})",
                f.counter,
                protocol::hex(&f.body)
            ));
            return f
                .wants_reply()
                .then(|| encode_reply(f.counter, false, &self.cmd_globals[..f.global]));
        }
        let s = Suspended {
            code: Arc::new(code),
            globals: self.cmd_globals[..f.global].to_vec(),
            locals: vec![0; f.local],
            pc: 0,
            frame: f,
            started: self.clock,
        };
        self.run(s, SLICE)
    }

    /// The reply of a command that ended while time advanced (oldest first), if any.
    #[cfg(test)]
    pub fn poll_suspended(&mut self) -> Option<Vec<u8>> {
        self.take_replies().into_iter().next().map(|(_, r)| r)
    }

    /// Every reply produced while time advanced, with the simulated time it was produced.
    pub fn take_replies(&mut self) -> Vec<(f64, Vec<u8>)> {
        std::mem::take(&mut self.outbox)
    }

    /// Whether a command is running (blocked, or in the middle of its instructions).
    #[cfg(test)]
    pub fn is_waiting(&self) -> bool {
        self.suspended.is_some()
    }

    /// One simulation step's share of the running command, if any; its reply, once it
    /// ends, goes to the outbox stamped with the brick's clock.
    pub(super) fn vm_step(&mut self) {
        if let Some(s) = self.suspended.take() {
            let per_step = (DT / INSTRUCTION_S).round() as usize;
            if let Some(r) = self.run(s, per_step) {
                self.outbox.push((self.clock, r));
            }
        }
        // The brick is free: the frames that waited run, in order, until one blocks.
        while self.suspended.is_none() {
            let Some(f) = self.queue.pop_front() else {
                break;
            };
            if let Some(r) = self.start(&f) {
                self.outbox.push((self.clock, r));
            }
        }
    }

    /// Runs at most `budget` instructions of `s`; the reply if it ended, else `None` with
    /// the command kept running.
    fn run(&mut self, mut s: Suspended, budget: usize) -> Option<Vec<u8>> {
        let code = s.code.clone();
        let mut left = budget;
        let result = loop {
            let Some(ins) = code.instrs.get(s.pc) else {
                break Ok(());
            };
            if left == 0 {
                self.suspended = Some(s);
                return None;
            }
            left -= 1;
            let start = s.pc;
            s.pc += 1;
            match self.exec(ins, &code, &mut s) {
                Ok(true) => {}
                Ok(false) => {
                    // Blocked: back to the blocking op, to try it again.
                    s.pc = start;
                    self.suspended = Some(s);
                    return None;
                }
                Err(e) => break Err(e),
            }
        };
        // What the command left in global memory stays there for the next one.
        self.cmd_globals[..s.globals.len()].copy_from_slice(&s.globals);
        let f = &s.frame;
        if let Err(e) = &result {
            self.note(format!(
                "error reply to command {}: {e} ({})",
                f.counter,
                protocol::hex(&f.body)
            ));
        }
        f.wants_reply()
            .then(|| encode_reply(f.counter, result.is_ok(), &s.globals))
    }

    /// Input parameter `k` of `ins`: a constant as its kind reads it (widened to 32 bits,
    /// then read at the kind's width), or the variable's value at that width.
    pub(super) fn int(&self, ins: &Instr, k: usize, s: &Suspended) -> Result<i32, String> {
        let a = &ins.args[k];
        match a.param {
            Param::Const(v) => Ok(narrow(a.par.kind, v)),
            Param::Global(o) => load(s, (true, o), a.par.kind),
            Param::Local(o) => load(s, (false, o), a.par.kind),
            Param::Str(_) => Err(format!(
                "{}: a string where parameter {} is a number",
                ins.op.name,
                k + 1
            )),
        }
    }

    /// Output parameter `k` of `ins`: the variable it names.
    pub(super) fn dst(&self, ins: &Instr, k: usize) -> Result<Var, String> {
        match ins.args[k].param {
            Param::Global(o) => Ok((true, o)),
            Param::Local(o) => Ok((false, o)),
            ref other => Err(format!(
                "output parameter must be a variable, got {other:?}"
            )),
        }
    }

    pub(super) fn write(&self, s: &mut Suspended, dst: Var, bytes: &[u8]) -> Result<(), String> {
        let mem = if dst.0 { &mut s.globals } else { &mut s.locals };
        let end = dst.1 + bytes.len();
        if end > mem.len() {
            return Err(format!(
                "writes {} bytes at {} beyond {} bytes of {} memory",
                bytes.len(),
                dst.1,
                mem.len(),
                if dst.0 { "global" } else { "local" }
            ));
        }
        mem[dst.1..end].copy_from_slice(bytes);
        Ok(())
    }

    /// The output ports of a NOS bit field that have a motor (an empty port drives
    /// nothing, as on the brick).
    fn motors_of(&self, nos: i32) -> Result<Vec<usize>, String> {
        if !(0..=15).contains(&nos) {
            return Err(format!("bad NOS {nos}"));
        }
        Ok((0..4)
            .filter(|i| nos & (1 << i) != 0)
            .filter(|&i| self.world.output_type(i).is_some())
            .collect())
    }

    /// An output port's letter, for notes.
    pub(super) fn port_letter(&self, port: usize) -> char {
        (b'A' + port as u8) as char
    }

    fn start_job(&mut self, m: usize, job: Job) {
        self.motors[m].job = job;
        self.world.release(m);
        self.motors[m].overshoot = if matches!(job, Job::Step { .. }) {
            self.world.rng().gen_range(0.0..2.5)
        } else {
            0.0
        };
        // A run without a target (homing: a speed run or a time job) is meant to end
        // against a stop: the injected stall hits the next positioning job.
        if self.stall_armed && matches!(job, Job::Step { .. }) {
            self.stall_armed = false;
            self.world.stall(m);
            let port = self.port_letter(m);
            self.note(format!("fault injected: motor {port} stalls"));
        }
    }

    /// Executes one operation (`code`: the command's operations, for jumps); Ok(false) =
    /// must wait.
    fn exec(&mut self, ins: &Instr, code: &Walk, s: &mut Suspended) -> Result<bool, String> {
        match ins.op.code {
            op::NOP | op::SOUND_READY => {}
            op::UI_READ => self.ui_read(ins, s)?,
            op::COM_GET => {
                let name = self.name.clone();
                self.text(ins, s, &name)?;
            }
            op::UI_WRITE => {
                self.int(ins, 0, s)?;
            }
            op::SOUND => {
                for k in 0..ins.op.params.len() {
                    self.int(ins, k, s)?;
                }
            }
            op::TIMER_WAIT => {
                let ms = self.int(ins, 0, s)?;
                let dst = self.dst(ins, 1)?;
                let until = (self.clock * 1000.0) as i32 + ms;
                self.write(s, dst, &until.to_le_bytes())?;
            }
            op::TIMER_READY => {
                let until = self.int(ins, 0, s)?;
                if ((self.clock * 1000.0) as i32) < until {
                    return Ok(false);
                }
            }
            op::INPUT_DEVICE => return self.input_device(ins, s),
            op::OUTPUT_RESET
            | op::OUTPUT_STOP
            | op::OUTPUT_POWER
            | op::OUTPUT_SPEED
            | op::OUTPUT_START
            | op::OUTPUT_POLARITY
            | op::OUTPUT_TEST
            | op::OUTPUT_READY
            | op::OUTPUT_STEP_POWER
            | op::OUTPUT_TIME_POWER
            | op::OUTPUT_STEP_SPEED
            | op::OUTPUT_TIME_SPEED
            | op::OUTPUT_CLR_COUNT => return self.output_motors(ins, s),
            op::OUTPUT_READ | op::OUTPUT_GET_COUNT => self.output_read(ins, s)?,
            _ => self.vm_op(ins, code, s)?,
        }
        Ok(true)
    }

    /// The output ops that take a layer and a motor bit set; Ok(false) = must wait.
    fn output_motors(&mut self, ins: &Instr, s: &mut Suspended) -> Result<bool, String> {
        let _layer = self.int(ins, 0, s)?;
        let nos = self.int(ins, 1, s)?;
        let ms = self.motors_of(nos)?;
        match ins.op.code {
            op::OUTPUT_RESET => {
                for &m in &ms {
                    self.motors[m].move_zero = self.world.angle(m);
                }
            }
            op::OUTPUT_STOP => {
                self.int(ins, 2, s)?;
                for &m in &ms {
                    self.motors[m].job = Job::Idle;
                    self.motors[m].v = 0.0;
                    self.world.release(m);
                }
            }
            op::OUTPUT_POWER | op::OUTPUT_SPEED => {
                let v = self.int(ins, 2, s)?.clamp(-100, 100) as i8;
                for &m in &ms {
                    self.motors[m].pending_speed = v;
                }
            }
            op::OUTPUT_START => {
                for &m in &ms {
                    if !self.motors[m].busy() {
                        let v =
                            self.motors[m].pending_speed as f64 / 100.0 * self.motors[m].full_speed;
                        self.start_job(m, Job::Run { v });
                    }
                }
            }
            op::OUTPUT_POLARITY => {
                let p = self.int(ins, 2, s)?;
                for &m in &ms {
                    self.motors[m].polarity = match p {
                        0 => -self.motors[m].polarity,
                        p if p < 0 => -1.0,
                        _ => 1.0,
                    };
                }
            }
            op::OUTPUT_TEST => {
                let dst = self.dst(ins, 2)?;
                let busy = ms.iter().any(|&m| self.motors[m].busy()) as u8;
                self.write(s, dst, &[busy])?;
            }
            op::OUTPUT_READY => {
                if ms.iter().any(|&m| self.motors[m].busy()) {
                    return Ok(false);
                }
            }
            op::OUTPUT_CLR_COUNT => {
                for &m in &ms {
                    self.motors[m].zero = self.world.angle(m);
                }
            }
            _ => self.output_profile(ins, &ms, s)?,
        }
        Ok(true)
    }

    /// UI_READ: the battery's voltage and level, the firmware and hardware versions, as
    /// `c_ui.c` writes them (see "Brick queries" in the protocol module's docs).
    fn ui_read(&mut self, ins: &Instr, s: &mut Suspended) -> Result<(), String> {
        match ins.op.sub {
            Some(op::UI_READ_GET_VBATT) => {
                let d = self.dst(ins, 0)?;
                self.write(s, d, &(self.world.battery() as f32).to_le_bytes())?;
            }
            Some(op::UI_READ_GET_LBATT) => {
                let d = self.dst(ins, 0)?;
                let mv = (self.world.battery() * 1000.0) as i32;
                let pct = ((mv - 6200) * 100 / (7500 - 6200)).clamp(0, 100);
                self.write(s, d, &[pct as u8])?;
            }
            Some(op::UI_READ_GET_FW_VERS) => {
                let t = self.firmware.clone();
                self.text(ins, s, &t)?;
            }
            _ => {
                let t = self.hardware.clone();
                self.text(ins, s, &t)?;
            }
        }
        Ok(())
    }

    /// LENGTH, *DESTINATION: at most LENGTH − 1 characters of `text` and a zero, as the
    /// firmware's `snprintf` writes them (LENGTH −1, "no check", writes the whole text).
    fn text(&mut self, ins: &Instr, s: &mut Suspended, text: &str) -> Result<(), String> {
        let len = self.int(ins, 0, s)?;
        let d = self.dst(ins, 1)?;
        let room = if len == -1 {
            text.len() + 1
        } else if (1..=127).contains(&len) {
            len as usize
        } else {
            return Err(format!("string LENGTH {len}"));
        };
        let mut bytes: Vec<u8> = text.bytes().take(room - 1).collect();
        bytes.push(0);
        self.write(s, d, &bytes)
    }

    /// STEP_/TIME_ SPEED/POWER: SPEED, P1, P2, P3, BRAKE, started on the motors `ms`.
    fn output_profile(
        &mut self,
        ins: &Instr,
        ms: &[usize],
        s: &mut Suspended,
    ) -> Result<(), String> {
        let speed = self.int(ins, 2, s)?.clamp(-100, 100);
        let mut p = [0.0; 3];
        for (k, x) in p.iter_mut().enumerate() {
            let v = self.int(ins, 3 + k, s)?;
            if v < 0 {
                return Err(format!("negative step/time {v}"));
            }
            *x = v as f64;
        }
        self.int(ins, 6, s)?;
        for &m in ms {
            let vmax = speed.unsigned_abs() as f64 / 100.0 * self.motors[m].full_speed;
            let dir = speed.signum() as f64;
            let job = if matches!(ins.op.code, op::OUTPUT_STEP_SPEED | op::OUTPUT_STEP_POWER) {
                Job::Step {
                    dir,
                    vmax,
                    r: p,
                    done: 0.0,
                    from: self.count(m).round(),
                }
            } else {
                Job::Time {
                    dir,
                    vmax,
                    t: p.map(|ms| ms / 1000.0),
                    elapsed: 0.0,
                }
            };
            if speed != 0 {
                self.start_job(m, job);
            }
        }
        Ok(())
    }

    /// OUTPUT_READ (speed and movement count) or OUTPUT_GET_COUNT (sensor count) of one motor.
    fn output_read(&mut self, ins: &Instr, s: &mut Suspended) -> Result<(), String> {
        let _layer = self.int(ins, 0, s)?;
        let no = self.int(ins, 1, s)?;
        if !(0..4).contains(&no) {
            return Err(format!("motor number {no} out of range (0..3)"));
        }
        // An empty port reads as a motor that never moved.
        let port = no as usize;
        let (count, speed, mv) = match self.world.output_type(port) {
            Some(_) => {
                let m = &self.motors[port];
                (
                    self.count(port),
                    m.speed_pct(),
                    self.world.angle(port) - m.move_zero,
                )
            }
            None => (0.0, 0, 0.0),
        };
        if ins.op.code == op::OUTPUT_READ {
            let d1 = self.dst(ins, 2)?;
            let d2 = self.dst(ins, 3)?;
            self.write(s, d1, &[speed as u8])?;
            self.write(s, d2, &(mv.round() as i32).to_le_bytes())?;
        } else {
            let d = self.dst(ins, 2)?;
            self.write(s, d, &(count.round() as i32).to_le_bytes())?;
        }
        Ok(())
    }

    fn device_at(&self, no: i32) -> Result<(i8, Option<usize>), String> {
        match no {
            0..=3 => Ok((self.world.input_type(no as usize), None)),
            16..=19 => match self.world.output_type((no - 16) as usize) {
                Some(kind) => Ok((kind, Some((no - 16) as usize))),
                None => Ok((device::NONE, None)),
            },
            _ => Err(format!("input {no} out of range")),
        }
    }

    fn input_device(&mut self, ins: &Instr, s: &mut Suspended) -> Result<bool, String> {
        let _layer = self.int(ins, 0, s)?;
        let no = self.int(ins, 1, s)?;
        let (dtype, motor) = self.device_at(no)?;
        match ins.op.sub {
            Some(op::INPUT_GET_TYPEMODE) => {
                let d1 = self.dst(ins, 2)?;
                let d2 = self.dst(ins, 3)?;
                // The mode the brick last set (the firmware's DeviceMode: set when a READY_*
                // asks for another mode, while the sensor still switches).
                let mode = if dtype == device::COLOR && motor.is_none() {
                    self.device_mode[no as usize]
                } else {
                    0
                };
                self.write(s, d1, &[dtype as u8])?;
                self.write(s, d2, &[mode])?;
            }
            Some(op::INPUT_CLR_CHANGES) => {}
            Some(op::INPUT_GET_RAW) => {
                let d = self.dst(ins, 2)?;
                let v = match motor {
                    Some(m) => self.count(m).round() as i32,
                    None => 0,
                };
                self.write(s, d, &v.to_le_bytes())?;
            }
            sub => {
                // READY_PCT, READY_RAW, READY_SI.
                let typ = self.int(ins, 2, s)?;
                let mode = self.int(ins, 3, s)?;
                let n = self.int(ins, 4, s)?;
                if !(0..=8).contains(&n) {
                    return Err(format!("{n} values requested"));
                }
                if typ != 0 && typ as i8 != dtype {
                    return Err(format!(
                        "input {no} holds {} (type {dtype}), asked for type {typ}",
                        device::name(dtype)
                    ));
                }
                let values: Vec<f64> = if dtype == device::NONE {
                    return Err(format!("nothing connected on input {no}"));
                } else if let Some(m) = motor {
                    match mode {
                        1 => vec![self.count(m) / 360.0],
                        2 => vec![self.motors[m].speed_pct() as f64],
                        _ => vec![self.count(m)],
                    }
                } else {
                    match self.ready_sensor(no as usize, mode)? {
                        Some(v) => v,
                        // The sensor switches mode: the program is held (BUSYBREAK).
                        None => return Ok(false),
                    }
                };
                for i in 0..n as usize {
                    let v = values.get(i).copied().unwrap_or(0.0);
                    let d = self.dst(ins, 5 + i)?;
                    // A value the sensor could not give is the firmware's "not a number"
                    // of each width (DATA8_NAN, DATA32_NAN, DATAF_NAN).
                    let bytes = match sub {
                        Some(op::INPUT_READY_PCT) if v.is_nan() => vec![0x80],
                        Some(op::INPUT_READY_RAW) if v.is_nan() => i32::MIN.to_le_bytes().to_vec(),
                        Some(op::INPUT_READY_PCT) => {
                            vec![v.round().clamp(-128.0, 127.0) as i8 as u8]
                        }
                        Some(op::INPUT_READY_RAW) => (v.round() as i32).to_le_bytes().to_vec(),
                        _ => (v as f32).to_le_bytes().to_vec(),
                    };
                    self.write(s, d, &bytes)?;
                }
            }
        }
        Ok(true)
    }
}

/// Why the simulated brick refuses a command before running any of it, if it does: what
/// the firmware's validator refuses ([`ops::validate`]: a constant first parameter outside
/// its kind's range, a misaligned variable), an operation that is not in the table or does
/// not decode (the firmware refuses an unknown opcode or a parameter cut short; an opcode
/// it knows but the table does not, the simulator cannot run), and, the simulator's own
/// rule, an output given as a constant (the firmware writes it into a scratch word,
/// `lms2012.c` `PrimParPointer`, a string past its end).
fn refusal(code: &Walk) -> Option<String> {
    if let Some(e) = &code.error {
        return Some(format!("{e}: not an operation the simulator runs"));
    }
    if let Some(v) = ops::validate(&code.instrs).first() {
        return Some(format!("the firmware's validator refuses it: {v}"));
    }
    code.instrs.iter().find_map(|ins| {
        let k = ins
            .args
            .iter()
            .position(|a| a.par.out && !matches!(a.param, Param::Global(_) | Param::Local(_)))?;
        Some(format!(
            "{} at byte {}: output parameter {} is a constant, not a variable",
            ins.op.name,
            ins.at,
            k + 1
        ))
    })
}

impl Brick {
    /// The values a READY_* reads from the sensor on input port `port` in `mode` (−1:
    /// the mode it is in), as the firmware's `c_input.c` gives them: asking a colour
    /// sensor for another mode makes it switch, and the program is held (`None`) until the
    /// sensor sends in that mode; after [`MAX_DEVICE_BUSY_S`] of waiting every value is
    /// "not a number" (NaN here).
    fn ready_sensor(&mut self, port: usize, mode: i32) -> Result<Option<Vec<f64>>, String> {
        if self.world.input_type(port) == device::COLOR {
            let want = if mode < 0 {
                self.device_mode[port]
            } else {
                mode as u8
            };
            if want > 4 {
                return Err(format!("colour sensor mode {want} not simulated"));
            }
            if self.device_mode[port] != want {
                self.device_mode[port] = want;
                self.world.request_mode(port, want);
            }
            let sending = self.world.sensor(port).is_some_and(|st| st.mode == want);
            if !sending {
                let since = *self.sensor_busy_since[port].get_or_insert(self.clock);
                if self.clock - since < MAX_DEVICE_BUSY_S - 1e-9 {
                    return Ok(None);
                }
                self.sensor_busy_since[port] = None;
                self.note(format!(
                    "the colour sensor on port {} sent nothing in mode {want} for {MAX_DEVICE_BUSY_S} s: not a number",
                    port + 1
                ));
                return Ok(Some(vec![f64::NAN; 8]));
            }
            self.sensor_busy_since[port] = None;
        }
        let values = self
            .world
            .sensor_values(port)
            .ok_or_else(|| format!("nothing to read on input {port}"))?;
        Ok(Some(values.into_iter().map(f64::from).collect()))
    }
}

/// The longest a READY_* waits for a sensor to send in a new mode
/// (`MAX_DEVICE_BUSY_TIME` of `lms2012.h`, 1200 ms).
const MAX_DEVICE_BUSY_S: f64 = 1.2;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::Size;
    use crate::robot::ev3::protocol::{decode_reply, DirectCommand, OutputPort};
    use crate::robot::mindcub3r::model::Primitive;

    use crate::robot::ev3::protocol::from_hex as h;

    fn brick() -> Brick {
        let cfg = SimConfig::default();
        Brick::new(&cfg, FaceletCube::solved(Size::Three))
    }

    #[test]
    fn answers_the_worked_examples_byte_for_byte() {
        let mut b = brick();
        // E1 ping.
        assert_eq!(
            b.handle(&h("06 00 2A 00 00 00 00 01")).unwrap(),
            h("03 00 2A 00 02")
        );
        // E2 LED, no reply.
        assert!(b.handle(&h("08 00 2B 00 80 00 00 82 1B 05")).is_none());
        // E10 reset + clear count.
        assert_eq!(
            b.handle(&h("0B 00 08 00 00 00 00 A2 00 02 B2 00 02"))
                .unwrap(),
            h("03 00 08 00 02")
        );
        // E8 count of C after clearing it: 0.
        b.handle(&h("0B 00 08 00 00 00 00 A2 00 04 B2 00 04"));
        assert_eq!(
            b.handle(&h("09 00 05 00 00 04 00 B3 00 02 60")).unwrap(),
            h("07 00 05 00 02 00 00 00 00")
        );
        // E5 busy? nothing running.
        assert_eq!(
            b.handle(&h("09 00 04 00 00 01 00 A9 00 03 60")).unwrap(),
            h("04 00 04 00 02 00")
        );
        // E6 RGB-RAW: 12 bytes of global memory (once the sensor, in COL-REFLECT since
        // power-up, has switched to RGB-RAW).
        assert!(b
            .handle(&h("0F 00 03 00 00 0C 00 99 1C 00 01 1D 04 03 60 64 68"))
            .is_none());
        b.advance(0.05);
        let r = b.poll_suspended().unwrap();
        assert_eq!(&r[..5], &h("0F 00 03 00 02")[..]);
        // E12 IR proximity on port 4 (index 3): type 33 as LC1.
        let r = b
            .handle(&h("0E 00 0B 00 00 04 00 99 1D 00 03 81 21 00 01 60"))
            .unwrap();
        assert_eq!(r, h("07 00 0B 00 02 00 00 D0 41"));
        // E15: unknown opcode → error reply with the same global size, the bytes as E12
        // left them (global memory outlives a command).
        assert_eq!(
            b.handle(&h("06 00 77 00 00 04 00 FE")).unwrap(),
            h("07 00 77 00 04 00 00 D0 41")
        );
        // E16: name, firmware, battery.
        let r = b
            .handle(&h(
                "17 00 0E 00 00 35 00 D3 0D 81 20 60 81 0A 10 E1 20 81 01 E1 30 81 12 E1 34",
            ))
            .unwrap();
        assert_eq!(&r[..5], &h("38 00 0E 00 02")[..]);
        assert_eq!(&r[5..9], b"EV3\0");
        assert_eq!(&r[5 + 32..5 + 39], b"V1.09H\0");
        assert_eq!(&r[5 + 48..5 + 52], &(8.1f32).to_le_bytes());
        assert_eq!(r[5 + 52], 100);
        // E13 layout: 13 bytes of globals.
        let r = b
            .handle(&h("21 00 0C 00 00 0D 00 99 1D 00 10 07 00 01 60 99 1D 00 11 07 00 01 64 99 1D 00 12 08 00 01 68 A9 00 07 6C"))
            .unwrap();
        assert_eq!(&r[..5], &h("10 00 0C 00 02")[..]);
        assert_eq!(r.len(), 5 + 13);
    }

    #[test]
    fn the_driver_encoding_is_what_the_simulator_decodes() {
        // Every parameter form: GET_COUNT of C with LC1/LC2/LC4 port numbers and GV1/GV2
        // outputs gives the same answer as the shortest form.
        let mut b = brick();
        let mut c = DirectCommand::new();
        let s = c.output_get_count(OutputPort::C);
        let short = decode_reply(&b.handle(&c.encode(1)).unwrap()).unwrap();
        let want = short.i32(s).unwrap();
        for ops in [
            "B3 81 00 81 02 E1 00",
            "B3 82 00 00 82 02 00 E2 00 00",
            "B3 83 00 00 00 00 83 02 00 00 00 60",
        ] {
            let mut frame = h("00 00 09 00 00 04 00");
            frame.extend(h(ops));
            let len = (frame.len() - 2) as u16;
            frame[..2].copy_from_slice(&len.to_le_bytes());
            let r = decode_reply(&b.handle(&frame).unwrap()).unwrap();
            assert!(r.ok, "{ops}");
            assert_eq!(r.i32(s).unwrap(), want, "{ops}");
        }
        // An output parameter given as a constant is malformed → error reply.
        let r = decode_reply(&b.handle(&h("09 00 02 00 00 04 00 B3 00 02 00")).unwrap()).unwrap();
        assert!(!r.ok);
    }

    #[test]
    fn a_command_the_validator_refuses_runs_none_of_it() {
        let mut b = brick();
        let c = OutputPort::C.bit();
        let busy = |b: &mut Brick| {
            let mut cmd = DirectCommand::new();
            let s = cmd.output_test(c);
            decode_reply(&b.handle(&cmd.encode(50)).unwrap())
                .unwrap()
                .i8(s)
                .unwrap()
                != 0
        };
        // A move of C, then MOVE8_32 with DATA8's lowest value as its first parameter: the
        // firmware's validator refuses the whole command, so the move never starts.
        let refused = [
            "17 00 01 00 00 04 00 AE 00 04 81 28 00 82 2C 01 00 01 A6 00 04 32 81 80 60",
            // The same move, then a DATA32 output at global offset 2.
            "17 00 02 00 00 08 00 AE 00 04 81 28 00 82 2C 01 00 01 A6 00 04 B3 00 02 62",
        ];
        for (i, frame) in refused.iter().enumerate() {
            let r = decode_reply(&b.handle(&h(frame)).unwrap()).unwrap();
            assert!(!r.ok, "{frame}");
            b.advance(0.05);
            assert!(!busy(&mut b), "command {i}: the move ran");
        }
        // DATA8's lowest value as a later parameter (BRAKE of the move) is not refused.
        let r = b.handle(&h(
            "14 00 03 00 00 00 00 AE 00 04 81 28 00 82 2C 01 00 81 80 A6 00 04",
        ));
        assert!(decode_reply(&r.unwrap()).unwrap().ok);
        b.advance(0.05);
        assert!(busy(&mut b), "the move runs");
    }

    #[test]
    fn global_memory_keeps_what_the_command_before_left() {
        let mut b = brick();
        // Command 1 writes 0x11223344 at GV0 and 7 at GV4.
        let r = b.handle(&h("0F 00 01 00 00 08 00 3A 83 44 33 22 11 60 3A 07 64"));
        assert_eq!(r.unwrap(), h("0B 00 01 00 02 44 33 22 11 07 00 00 00"));
        // Command 2 has 8 global bytes and writes only GV4: GV0 is what command 1 left.
        let r = b.handle(&h("09 00 02 00 00 08 00 3A 81 63 64"));
        assert_eq!(r.unwrap(), h("0B 00 02 00 02 44 33 22 11 63 00 00 00"));
        // Local memory starts at zero: LV0 copied to GV0.
        let r = b.handle(&h("08 00 03 00 00 04 10 3A 40 60"));
        assert_eq!(r.unwrap(), h("07 00 03 00 02 00 00 00 00"));
        // A refused command's error reply carries the global bytes as they are.
        let r = b.handle(&h("08 00 04 00 00 08 00 3A 05 62"));
        assert_eq!(r.unwrap(), h("0B 00 04 00 04 00 00 00 00 63 00 00 00"));
    }

    #[test]
    fn one_command_at_a_time_the_others_wait() {
        let mut b = brick();
        // E3: a blocking move of B; its reply comes when the move is done.
        assert!(b
            .handle(&h(
                "13 00 01 00 00 00 00 AE 00 02 81 28 1E 82 D2 00 1E 01 AA 00 02"
            ))
            .is_none());
        // Meanwhile a ping, a no-reply STOP of every motor and a system command arrive:
        // they wait, unread, and run after the move, in order, as the firmware does (its
        // communication module reads no channel while a direct command runs).
        assert!(b.handle(&h("06 00 09 00 00 00 00 01")).is_none());
        assert!(b.handle(&h("09 00 0A 00 80 00 00 A3 00 0F 00")).is_none());
        assert!(b.handle(&h("05 00 0B 00 01 9D")).is_none());
        b.advance(0.3);
        assert!(b.poll_suspended().is_none(), "still moving after 0.3 s");
        b.advance(1.0);
        let replies: Vec<Vec<u8>> = b.take_replies().into_iter().map(|(_, r)| r).collect();
        assert_eq!(replies.len(), 3, "{replies:?}");
        assert_eq!(replies[0], h("03 00 01 00 02"));
        assert_eq!(replies[1], h("03 00 09 00 02"));
        // The system command (too short to decode) gets its error reply.
        assert_eq!(replies[2], h("03 00 0B 00 04"));
        // The STOP came after the move had ended: 270° of the turntable at the table = one
        // spin with the arm away.
        let mut expect = FaceletCube::solved(Size::Three);
        expect
            .apply(&crate::cube::Alg::from_moves(vec![Primitive::Spin(1)
                .as_move()
                .unwrap()]))
            .unwrap();
        assert_eq!(b.cube(), expect);
    }

    #[test]
    fn a_command_during_a_no_reply_one_waits_too() {
        let mut b = brick();
        let count_b = |b: &mut Brick, counter: &str| {
            b.handle(&h(&format!("09 00 {counter} 00 00 04 00 B3 00 01 60")))
        };
        let r = count_b(&mut b, "04").unwrap();
        let slot = crate::robot::ev3::protocol::Slot {
            offset: 0,
            kind: crate::robot::ev3::protocol::SlotKind::I32,
        };
        let before = decode_reply(&r).unwrap().i32(slot).unwrap();
        // E3's move sent without a reply wanted: it still runs to the end.
        assert!(b
            .handle(&h(
                "13 00 01 00 80 00 00 AE 00 02 81 28 1E 82 D2 00 1E 01 AA 00 02"
            ))
            .is_none());
        // A reply-wanting command meanwhile runs once the move has ended.
        assert!(count_b(&mut b, "05").is_none());
        b.advance(0.3);
        assert!(b.poll_suspended().is_none(), "the move still runs");
        b.advance(1.2);
        let r = decode_reply(&b.poll_suspended().expect("the count after the move")).unwrap();
        assert_eq!(r.counter, 5);
        let moved = r.i32(slot).unwrap() - before;
        assert!((270..=273).contains(&moved), "{moved}");
        assert!(!b.is_waiting());
        // Free again: answered at once.
        assert_eq!(
            b.handle(&h("06 00 06 00 00 00 00 01")).unwrap(),
            h("03 00 06 00 02")
        );
    }

    /// READY_RAW of the colour sensor on port 2 (input 1) in `mode`, three values.
    fn ready_raw(counter: u8, mode: u8) -> Vec<u8> {
        h(&format!(
            "0F 00 {counter:02X} 00 00 0C 00 99 1C 00 01 1D {mode:02X} 03 60 64 68"
        ))
    }

    /// GET_TYPEMODE of input 1: (type, mode).
    fn typemode(b: &mut Brick) -> (u8, u8) {
        let r = b
            .handle(&h("0B 00 30 00 00 02 00 99 05 00 01 60 61"))
            .unwrap();
        (r[5], r[6])
    }

    #[test]
    fn the_colour_sensor_switches_mode_while_the_program_waits() {
        let mut b = brick();
        // At power-up the sensor is in COL-REFLECT.
        assert_eq!(typemode(&mut b), (29, 0));
        // The first READY_RAW in RGB-RAW waits while the sensor switches.
        let t0 = b.clock;
        assert!(b.handle(&ready_raw(1, 4)).is_none(), "held while switching");
        assert_eq!(typemode_queued(&mut b), None, "nothing runs meanwhile");
        let mut took = None;
        for _ in 0..100 {
            b.advance(DT);
            if let Some((t, r)) = b.take_replies().into_iter().next() {
                let rep = decode_reply(&r).unwrap();
                assert!(rep.ok);
                let rgb = (0..3)
                    .map(|i| i32::from_le_bytes(rep.globals[4 * i..4 * i + 4].try_into().unwrap()));
                assert!(
                    rgb.clone().all(|v| (0..=1023).contains(&v)),
                    "{:?}",
                    rgb.collect::<Vec<_>>()
                );
                took = Some(t - t0);
                break;
            }
        }
        let took = took.expect("a reading once the sensor sends RGB-RAW");
        let switch = crate::robot::sim::world::optics::MODE_SWITCH_S;
        assert!(
            (switch - 1e-9..=switch + 2.0 * DT).contains(&took),
            "{took} s"
        );
        // Now in RGB-RAW: the next reading comes at once, and GET_TYPEMODE says so (the
        // GET_TYPEMODE queued meanwhile ran right after the reading).
        b.take_replies();
        assert_eq!(typemode(&mut b), (29, 4));
        assert!(b.handle(&ready_raw(2, 4)).is_some());
    }

    /// A GET_TYPEMODE sent while a command runs: its reply, if it came at once.
    fn typemode_queued(b: &mut Brick) -> Option<Vec<u8>> {
        b.handle(&h("0B 00 31 00 00 02 00 99 05 00 01 60 61"))
    }

    #[test]
    fn a_sensor_that_never_switches_reads_not_a_number_after_1_2_s() {
        let mut b = brick();
        b.world.deafen_sensor(1);
        assert!(b.handle(&ready_raw(1, 4)).is_none());
        b.advance(1.1);
        assert!(b.take_replies().is_empty(), "still waiting after 1.1 s");
        b.advance(0.2);
        let (_, r) = b
            .take_replies()
            .into_iter()
            .next()
            .expect("given up by 1.3 s");
        let rep = decode_reply(&r).unwrap();
        assert!(rep.ok, "an OK reply, as the firmware's");
        assert_eq!(&rep.globals[..4], &i32::MIN.to_le_bytes());
        assert_eq!(&rep.globals[8..12], &i32::MIN.to_le_bytes());
        assert!(
            b.log.iter().any(|l| l.contains("not a number")),
            "{:?}",
            b.log
        );
    }

    #[test]
    fn a_step_move_held_short_by_a_stop_never_ends() {
        let c = OutputPort::C.bit();
        let mut b = brick();
        let mut counter = 0;
        let mut send = |b: &mut Brick, cmd: &mut DirectCommand| {
            counter += 1;
            decode_reply(&b.handle(&cmd.encode(counter)).unwrap()).unwrap()
        };
        let mut step = |b: &mut Brick, speed: i8, degrees: u32| {
            let mut cmd = DirectCommand::new();
            cmd.output_reset(c)
                .step_speed(c, speed, [0, degrees, 0], true)
                .output_start(c);
            send(b, &mut cmd);
            b.advance(2.0);
            let mut cmd = DirectCommand::new();
            let busy = cmd.output_test(c);
            let r = send(b, &mut cmd);
            r.i8(busy).unwrap() != 0
        };
        // Sensor arm C parked at its stop (physical 0).
        b.world.place(2, 0.0);
        // C +10° into the stop: it stays busy, pushing.
        assert!(step(&mut b, 30, 10));
        // Stopped, then out 300° and back 300° to the stop: the count is reached (in whole
        // degrees) both ways, so both moves end.
        b.handle(&DirectCommand::new().output_stop(c, true).encode(99));
        assert!(!step(&mut b, -30, 300));
        assert!(!step(&mut b, 30, 300), "at {}", b.world.angle(2));
        assert!(b.world.angle(2).abs() < 0.5);
    }
}
