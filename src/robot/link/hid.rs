//! USB: over its cable the EV3's stock firmware is a HID device (LEGO's vendor id
//! `0x0694`, the EV3's product id `0x0005`), not a serial port. The same direct commands
//! travel in HID reports instead of a byte stream; [`HidLink`] turns reports back into the
//! byte link every robot uses, so the EV3 driver above cannot tell USB from Bluetooth.
//!
//! Level: robot (link). Knows the EV3's two-byte length field and nothing else of its
//! protocol. No printing.
//!
//! ## Report framing
//!
//! The brick's HID interface has two interrupt endpoints, one each way, whose transfers are
//! [`REPORT_SIZE`] = 1024 bytes on a high-speed (USB 2.0) port, the usual case, and 64
//! bytes on a full-speed one (`d_usbdev/usb_function.c` of the LMS2012 sources: endpoint
//! descriptors and request lengths; the `ev3_dc` package reads 1024 bytes per transfer).
//! Reports are unnumbered. One message travels in one report, never split and never two
//! in one: a direct command or reply is at most 1024 bytes with its length field
//! ([`MAX_MESSAGE`](crate::robot::ev3::protocol::MAX_MESSAGE)). A brick on a full-speed
//! port (an old USB 1.1 hub) would need messages split into 64-byte reports, which this
//! link does not do.
//!
//! | Direction | What is handed to the HID layer | On the wire |
//! |-----------|---------------------------------|-------------|
//! | host → brick | `00` (the report id: the EV3's reports are unnumbered), the message, zeros up to 1024 bytes after the id: 1025 bytes | 1024 bytes |
//! | brick → host | — | 1024 bytes: the message, then padding that means nothing |
//!
//! A received report is cut after `2 + length` bytes, the message's own length field;
//! whatever follows is padding. `hidapi` wants the report id as the first byte of every
//! write and strips it again for an unnumbered report, so exactly the 1024 report bytes
//! reach the cable.
//!
//! Not tested on a brick here: the framing above is what LEGO's sources and `ev3_dc`
//! describe, and the tests run it against the simulated brick through an in-memory HID
//! pipe ([`report_pipe`]), which checks every report's size and id as a device would.
//! Whether a brick also accepts a short (unpadded) report is not known, so reports are
//! always padded.
//!
//! ## Opening
//!
//! [`open_usb`] (feature `usb`, through the `hidapi` crate) opens the one EV3 on USB, or
//! the one at a given HID path; [`list_bricks`] lists them. On Linux the user needs
//! read-write access to the brick's `/dev/hidraw*` node (a udev rule, see the README).

use std::collections::VecDeque;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use super::{Link, LinkError};

/// LEGO's USB vendor id.
pub const LEGO_VENDOR_ID: u16 = 0x0694;
/// The EV3 brick's USB product id.
pub const EV3_PRODUCT_ID: u16 = 0x0005;
/// Bytes in one HID report of the EV3, either direction.
pub const REPORT_SIZE: usize = 1024;

/// HID reports of one device: `hidapi`'s, or the in-memory pipe of the simulated brick.
pub trait Reports: Send {
    /// Writes one output report: the report id, then [`REPORT_SIZE`] bytes.
    fn write_report(&mut self, data: &[u8]) -> std::io::Result<()>;
    /// Reads one input report into `buf`, waiting at most `timeout`; `Ok(0)` when none came.
    fn read_report(&mut self, buf: &mut [u8], timeout: Duration) -> std::io::Result<usize>;
}

/// Reopens a device after a fault.
type Reopen = Box<dyn FnMut() -> Result<Box<dyn Reports>, LinkError> + Send>;

/// The byte link over HID reports (see [Report framing](self#report-framing)).
pub struct HidLink {
    reports: Box<dyn Reports>,
    name: String,
    /// Bytes written but not yet a whole message.
    out: Vec<u8>,
    /// Message bytes received but not yet read.
    incoming: VecDeque<u8>,
    reopen: Option<Reopen>,
}

impl HidLink {
    /// A link over `reports`, called `name` in messages.
    pub fn new(reports: Box<dyn Reports>, name: impl Into<String>) -> HidLink {
        HidLink {
            reports,
            name: name.into(),
            out: Vec::new(),
            incoming: VecDeque::new(),
            reopen: None,
        }
    }

    fn io(&self, what: &'static str, source: std::io::Error) -> LinkError {
        LinkError::Io {
            port: self.name.clone().into(),
            what,
            source,
        }
    }

    /// Sends every whole message in `out`, each in one report.
    fn flush_messages(&mut self) -> Result<(), LinkError> {
        while self.out.len() >= 2 {
            let len = 2 + u16::from_le_bytes([self.out[0], self.out[1]]) as usize;
            if len > REPORT_SIZE {
                self.out.clear();
                return Err(self.io(
                    "write",
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        format!(
                            "a message of {len} bytes does not fit one {REPORT_SIZE}-byte report"
                        ),
                    ),
                ));
            }
            if self.out.len() < len {
                break;
            }
            let report = output_report(&self.out[..len]);
            self.out.drain(..len);
            self.reports
                .write_report(&report)
                .map_err(|e| self.io("write", e))?;
        }
        Ok(())
    }
}

/// The output report carrying `message`: report id 0, the message, zero padding.
pub fn output_report(message: &[u8]) -> Vec<u8> {
    let mut r = vec![0u8; 1 + REPORT_SIZE];
    r[1..1 + message.len()].copy_from_slice(message);
    r
}

/// The message an input report carries: its first `2 + length` bytes (`None` when the
/// report is too short for its own length field).
pub fn report_message(report: &[u8]) -> Option<&[u8]> {
    if report.len() < 2 {
        return None;
    }
    let len = 2 + u16::from_le_bytes([report[0], report[1]]) as usize;
    report.get(..len)
}

impl Link for HidLink {
    fn read(&mut self, buf: &mut [u8], deadline: Instant) -> Result<usize, LinkError> {
        if self.incoming.is_empty() {
            let mut report = vec![0u8; REPORT_SIZE];
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Ok(0);
                }
                let n = self
                    .reports
                    .read_report(&mut report, left)
                    .map_err(|e| self.io("read", e))?;
                if n == 0 {
                    continue;
                }
                match report_message(&report[..n]) {
                    Some(m) => {
                        self.incoming.extend(m);
                        break;
                    }
                    // A report that cannot hold its own message: hand it on as it is, so
                    // the frame decoder above reports it.
                    None => {
                        self.incoming.extend(&report[..n]);
                        break;
                    }
                }
            }
        }
        let n = buf.len().min(self.incoming.len());
        for (dst, src) in buf.iter_mut().zip(self.incoming.drain(..n)) {
            *dst = src;
        }
        Ok(n)
    }

    fn write_all(&mut self, bytes: &[u8]) -> Result<(), LinkError> {
        self.out.extend_from_slice(bytes);
        self.flush_messages()
    }

    fn discard_input(&mut self) {
        self.incoming.clear();
        let mut report = vec![0u8; REPORT_SIZE];
        while matches!(self.reports.read_report(&mut report, Duration::ZERO), Ok(n) if n > 0) {}
    }

    fn reopen(&mut self) -> Result<(), LinkError> {
        if let Some(f) = self.reopen.as_mut() {
            self.reports = f()?;
        }
        self.out.clear();
        self.incoming.clear();
        Ok(())
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}

/// The host's end of an in-memory HID connection ([`report_pipe`]).
pub struct PipeHost {
    to_device: Sender<Vec<u8>>,
    from_device: Receiver<Vec<u8>>,
}

/// The device's end of an in-memory HID connection: it takes the host's output reports
/// and sends input reports, each checked to be a report of the EV3's size.
pub struct PipeDevice {
    from_host: Receiver<Vec<u8>>,
    to_host: Sender<Vec<u8>>,
    /// Output reports refused for their size or id, with why.
    pub refused: Vec<String>,
}

/// An in-memory HID connection, as the simulated brick serves one.
pub fn report_pipe() -> (PipeHost, PipeDevice) {
    let (to_device, from_host) = channel();
    let (to_host, from_device) = channel();
    (
        PipeHost {
            to_device,
            from_device,
        },
        PipeDevice {
            from_host,
            to_host,
            refused: Vec::new(),
        },
    )
}

fn gone() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the device is gone")
}

impl Reports for PipeHost {
    fn write_report(&mut self, data: &[u8]) -> std::io::Result<()> {
        self.to_device.send(data.to_vec()).map_err(|_| gone())
    }

    fn read_report(&mut self, buf: &mut [u8], timeout: Duration) -> std::io::Result<usize> {
        match self.from_device.recv_timeout(timeout) {
            Ok(r) => {
                let n = r.len().min(buf.len());
                buf[..n].copy_from_slice(&r[..n]);
                Ok(n)
            }
            Err(RecvTimeoutError::Timeout) => Ok(0),
            Err(RecvTimeoutError::Disconnected) => Err(gone()),
        }
    }
}

impl PipeDevice {
    /// The next output report's message (the report id and padding taken off), waiting at
    /// most `timeout`. A report of the wrong size or id is refused (kept in
    /// [`refused`](Self::refused)), as a USB stack refuses it.
    pub fn recv(&mut self, timeout: Duration) -> Option<Vec<u8>> {
        let r = self.from_host.recv_timeout(timeout).ok()?;
        if r.len() != 1 + REPORT_SIZE || r[0] != 0 {
            self.refused.push(format!(
                "an output report of {} bytes with id {:?}: an EV3 report is the id 0 and {REPORT_SIZE} bytes",
                r.len(),
                r.first()
            ));
            return None;
        }
        match report_message(&r[1..]) {
            Some(m) => Some(m.to_vec()),
            None => {
                self.refused
                    .push("an output report whose length field runs past its end".into());
                None
            }
        }
    }

    /// Sends `message` in one input report, padded to [`REPORT_SIZE`].
    pub fn send(&mut self, message: &[u8]) {
        let mut r = vec![0u8; REPORT_SIZE];
        let n = message.len().min(REPORT_SIZE);
        r[..n].copy_from_slice(&message[..n]);
        let _ = self.to_host.send(r);
    }
}

/// An EV3 found on USB.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsbBrick {
    /// The HID path to open it by (`/dev/hidraw3` on Linux).
    pub path: String,
    /// The USB serial number (the brick's Bluetooth address, as the firmware reports it).
    pub serial: Option<String>,
}

#[cfg(feature = "usb")]
mod device {
    use std::ffi::CString;
    use std::time::Duration;

    use super::{HidLink, Reports, UsbBrick, EV3_PRODUCT_ID, LEGO_VENDOR_ID};
    use crate::robot::link::LinkError;

    struct Hidapi(hidapi::HidDevice);

    fn io(e: hidapi::HidError) -> std::io::Error {
        std::io::Error::other(e.to_string())
    }

    impl Reports for Hidapi {
        fn write_report(&mut self, data: &[u8]) -> std::io::Result<()> {
            let n = self.0.write(data).map_err(io)?;
            if n < data.len().saturating_sub(1) {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::WriteZero,
                    format!("{n} of {} bytes of a report written", data.len()),
                ));
            }
            Ok(())
        }

        fn read_report(&mut self, buf: &mut [u8], timeout: Duration) -> std::io::Result<usize> {
            let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
            self.0.read_timeout(buf, ms).map_err(io)
        }
    }

    fn enumerate_err(e: hidapi::HidError) -> LinkError {
        LinkError::Enumerate {
            source: std::io::Error::other(e.to_string()),
        }
    }

    /// Every EV3 on USB.
    pub fn list_bricks() -> Result<Vec<UsbBrick>, LinkError> {
        let api = hidapi::HidApi::new().map_err(enumerate_err)?;
        let mut out: Vec<UsbBrick> = api
            .device_list()
            .filter(|d| d.vendor_id() == LEGO_VENDOR_ID && d.product_id() == EV3_PRODUCT_ID)
            .map(|d| UsbBrick {
                path: d.path().to_string_lossy().into_owned(),
                serial: d.serial_number().map(str::to_string),
            })
            .collect();
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out.dedup_by(|a, b| a.path == b.path);
        Ok(out)
    }

    fn open_path(path: &str) -> Result<Box<dyn Reports>, LinkError> {
        let open_err = |e: hidapi::HidError| LinkError::Open {
            path: format!("usb:{path}").into(),
            source: std::io::Error::other(e.to_string()),
        };
        let api = hidapi::HidApi::new().map_err(open_err)?;
        let c = CString::new(path).map_err(|e| LinkError::Open {
            path: format!("usb:{path}").into(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, e),
        })?;
        Ok(Box::new(Hidapi(api.open_path(&c).map_err(open_err)?)))
    }

    /// Opens the EV3 at `path` (a HID path from [`list_bricks`]), or the only one on USB.
    pub fn open_usb(path: Option<&str>) -> Result<HidLink, LinkError> {
        let path = match path {
            Some(p) => p.to_string(),
            None => {
                let bricks = list_bricks()?;
                match bricks.as_slice() {
                    [one] => one.path.clone(),
                    [] => return Err(LinkError::NoUsbBrick),
                    many => {
                        return Err(LinkError::SeveralUsbBricks {
                            paths: many.iter().map(|b| b.path.clone()).collect(),
                        })
                    }
                }
            }
        };
        let reports = open_path(&path)?;
        let mut link = HidLink::new(reports, format!("usb:{path}"));
        let again = path.clone();
        link.reopen = Some(Box::new(move || open_path(&again)));
        Ok(link)
    }
}

#[cfg(feature = "usb")]
pub use device::{list_bricks, open_usb};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_travels_in_one_padded_report_each_way() {
        let (host, mut dev) = report_pipe();
        let mut link = HidLink::new(Box::new(host), "usb:test");
        // Two messages written in pieces: each goes out as soon as it is whole.
        link.write_all(&[6, 0, 1, 0]).unwrap();
        assert!(dev.recv(Duration::from_millis(5)).is_none());
        link.write_all(&[0, 0, 0, 1, 3, 0, 9]).unwrap();
        assert_eq!(
            dev.recv(Duration::from_millis(50)).unwrap(),
            vec![6, 0, 1, 0, 0, 0, 0, 1]
        );
        link.write_all(&[0, 2]).unwrap();
        assert_eq!(
            dev.recv(Duration::from_millis(50)).unwrap(),
            vec![3, 0, 9, 0, 2]
        );
        assert!(dev.refused.is_empty());
        // A reply report: padding after the message is dropped.
        dev.send(&[3, 0, 1, 0, 2]);
        let mut buf = [0u8; 64];
        let n = link
            .read(&mut buf, Instant::now() + Duration::from_millis(50))
            .unwrap();
        assert_eq!(&buf[..n], &[3, 0, 1, 0, 2]);
        assert_eq!(
            link.read(&mut buf, Instant::now() + Duration::from_millis(5))
                .unwrap(),
            0
        );
    }

    #[test]
    fn reports_of_the_wrong_shape_are_refused_and_messages_too_long_are_errors() {
        let (mut host, mut dev) = report_pipe();
        host.write_report(&[0, 3, 0, 1, 0, 2]).unwrap();
        assert!(dev.recv(Duration::from_millis(50)).is_none());
        assert!(dev.refused[0].contains("6 bytes"), "{:?}", dev.refused);
        let mut link = HidLink::new(Box::new(host), "usb:test");
        let mut long = vec![0u8; 1100];
        long[..2].copy_from_slice(&(1098u16).to_le_bytes());
        assert!(link.write_all(&long).is_err());
        assert_eq!(output_report(&[1, 2]).len(), 1025);
    }
}
