//! Colour readings: RGB-RAW of the colour sensor, alone or with a motor's count, read again
//! when the reply cannot be true.
//!
//! Level: robot (part of the driver). No printing.
//!
//! ## Sampling while moving
//!
//! Scanning reads the colour sensor while the turntable turns, so the turntable move is
//! started (not waited for) and each sample is one command holding OUTPUT_GET_COUNT of the
//! motors, INPUT_DEVICE READY_RAW of the colour sensor (type 29, mode 4, three values) and
//! OUTPUT_TEST: one round trip gives a reading together with where the table was.

use super::{Ev3, Ev3Error, READ_RETRIES};
use crate::robot::ev3::protocol::{self, device, DirectCommand, OutputPort, Reply};

impl Ev3 {
    /// RGB-RAW of the colour sensor on `input` (0..3).
    pub fn read_rgb(&mut self, input: u8) -> Result<[f64; 3], Ev3Error> {
        let mut c = DirectCommand::new();
        let s = c.ready_raw(input, device::COLOR, device::COLOR_RGB_RAW, 3);
        let name = format!("reading the colour sensor on port {}", input + 1);
        Ok(self.query_rgb(&name, &c, &s, |_| Ok(()))?.0)
    }

    /// Colour reading and one motor's count in one round trip (sampling on the fly).
    pub fn read_rgb_at(
        &mut self,
        input: u8,
        port: OutputPort,
    ) -> Result<([f64; 3], i32), Ev3Error> {
        let mut c = DirectCommand::new();
        let count = c.output_get_count(port);
        let s = c.ready_raw(input, device::COLOR, device::COLOR_RGB_RAW, 3);
        let name = format!(
            "reading the colour sensor on port {} and motor {port}'s position",
            input + 1
        );
        // A garbled colour is asked again: the sample then carries the later count it was
        // taken at.
        let (rgb, at) = self.query_rgb(&name, &c, &s, |r| r.i32(count))?;
        Ok((rgb, self.check_count(&name, port, at)?))
    }

    /// Sends `c`, whose reply holds an RGB-RAW reading at `slots` and whatever else `also`
    /// reads from it, until the colour is one the sensor can give
    /// ([`device::rgb_raw_possible`]); a garbled one is asked again up to the read retries.
    fn query_rgb<T>(
        &mut self,
        name: &str,
        c: &DirectCommand,
        slots: &[protocol::Slot],
        also: impl Fn(&Reply) -> Result<T, protocol::ProtocolError>,
    ) -> Result<([f64; 3], T), Ev3Error> {
        let mut tries = 0;
        loop {
            let r = self.query(name, c)?;
            let mut out = [0.0; 3];
            for (o, &slot) in out.iter_mut().zip(slots) {
                *o = r.i32(slot).map_err(|e| Self::malformed(name, e))? as f64;
            }
            let more = also(&r).map_err(|e| Self::malformed(name, e))?;
            if device::rgb_raw_possible(&out) {
                return Ok((out, more));
            }
            if tries >= READ_RETRIES {
                return Err(Ev3Error::Malformed {
                    command: name.to_string(),
                    detail: format!("RGB-RAW {out:?} outside 0..{}", device::RGB_RAW_MAX),
                });
            }
            tries += 1;
            self.recoveries += 1;
        }
    }
}
