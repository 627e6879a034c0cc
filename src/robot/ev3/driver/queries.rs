//! Questions to the brick: what is plugged in where, its name, versions and battery, and
//! the motors' polarity.
//!
//! Level: robot (part of the driver). No printing.
//!
//! ## Device check
//!
//! Ports differ between builds, so at start-up INPUT_DEVICE GET_TYPEMODE is asked for every
//! expected device (motors as inputs 16..19, sensors as 0..3). On any mismatch the error
//! lists every port, what was expected and what was found.
//!
//!
//! ## Polarity
//!
//! The firmware restores a motor's default direction only when a user program starts or
//! ends, not when a host connects (see [Polarity](crate::robot::ev3::protocol#polarity)),
//! so [`Ev3::set_polarity`] exists for the robot to set it on every connect (the MindCub3r
//! does). The turntable's sense is a calibration sign, not a polarity. On LEGO's firmware
//! OUTPUT_POLARITY also re-applies to each motor the power its last job left set (d_pwm
//! sets the power again on POLARITY, and a coast stop or a job's end does not clear it):
//! after an earlier session ended in a coast stop, an idle motor would start running at
//! its driver's floor duty (about 20 % for the medium motor) until its next command. So
//! [`Ev3::set_polarity`] stops the motors (coast) in the same command.
//!
//!
//! ## Brick queries
//!
//! [`Ev3::brick_info`] asks in one round trip for the brick's name, firmware and hardware
//! versions, battery voltage and level; [`Ev3::typemodes`] for the device type and mode of
//! several inputs. Both only read.

use super::{BrickInfo, Ev3, Ev3Error};
use crate::robot::ev3::protocol::{DirectCommand, OutputPort};

impl Ev3 {
    /// Type and mode of the device on an input (sensor port 0..3 or motor 16..19).
    pub fn typemode(&mut self, input: u8) -> Result<(i8, i8), Ev3Error> {
        let mut c = DirectCommand::new();
        let (t, m) = c.get_typemode(input);
        let name = format!("asking which device is on input {input}");
        let r = self.query(&name, &c)?;
        Ok((
            r.i8(t).map_err(|e| Self::malformed(&name, e))?,
            r.i8(m).map_err(|e| Self::malformed(&name, e))?,
        ))
    }

    /// Type and mode of the devices on several inputs (sensor ports 0..3, motors 16..19), in
    /// one round trip, in the order given.
    pub fn typemodes(&mut self, inputs: &[u8]) -> Result<Vec<(i8, i8)>, Ev3Error> {
        let mut c = DirectCommand::new();
        let slots: Vec<_> = inputs.iter().map(|&i| c.get_typemode(i)).collect();
        let name = format!("asking which devices are on inputs {inputs:?}");
        let r = self.query(&name, &c)?;
        slots
            .into_iter()
            .map(|(t, m)| {
                Ok((
                    r.i8(t).map_err(|e| Self::malformed(&name, e))?,
                    r.i8(m).map_err(|e| Self::malformed(&name, e))?,
                ))
            })
            .collect()
    }

    /// The brick's name, firmware and hardware versions and battery, in one round trip.
    pub fn brick_info(&mut self) -> Result<BrickInfo, Ev3Error> {
        let mut c = DirectCommand::new();
        let name = c.brick_name(32);
        let fw = c.firmware_version(16);
        let hw = c.hardware_version(16);
        let volts = c.battery_volts();
        let level = c.battery_level();
        let what = "asking the brick's name, firmware and battery";
        let r = self.query(what, &c)?;
        let m = |e| Self::malformed(what, e);
        Ok(BrickInfo {
            name: r.string(name).map_err(m)?,
            firmware: r.string(fw).map_err(m)?,
            hardware: r.string(hw).map_err(m)?,
            battery_volts: r.f32(volts).map_err(m)? as f64,
            battery_level: r.i8(level).map_err(m)?.clamp(0, 100) as u8,
        })
    }

    /// OUTPUT_POLARITY of the motors in `nos`: 1 normal, −1 reversed (see
    /// [Polarity](crate::robot::ev3::driver::queries#polarity)), and OUTPUT_STOP (coast) of the
    /// same motors after it: LEGO's firmware re-applies their last power on POLARITY.
    pub fn set_polarity(&mut self, nos: u8, pol: i8) -> Result<(), Ev3Error> {
        let mut c = DirectCommand::new();
        c.output_polarity(nos, pol).output_stop(nos, false);
        let ports: String = OutputPort::ALL
            .iter()
            .filter(|p| nos & p.bit() != 0)
            .map(|p| p.letter())
            .collect();
        self.call(
            &format!(
                "setting the direction of motor{} {ports} ({})",
                if ports.len() == 1 { "" } else { "s" },
                if pol < 0 { "reversed" } else { "normal" }
            ),
            &c,
        )
        .map(|_| ())
    }
}
