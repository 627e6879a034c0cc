//! One byte link for every robot: read what arrives before a deadline, write, discard
//! what is buffered, reopen after a fault. No protocol lives here: the EV3's
//! length-prefixed frames sit on top of it in [`crate::robot::ev3::link`], the line
//! protocol's `\n`-terminated lines in [`crate::robot::line::host`].
//!
//! Implementations: [`tty::TtyLink`] (a terminal opened by path in raw mode: the
//! simulators' pseudo-terminals, and every port when the `serial` feature is off),
//! `SerialLink` (feature `serial`: the `serialport` crate, for Bluetooth `rfcomm` ttys and
//! USB serial adapters), [`hid::HidLink`] (the EV3 over its USB cable, a HID device: feature
//! `usb` opens real ones through `hidapi`; the simulated brick serves one in memory) and
//! [`memory::MemoryLink`] (in memory, for tests). [`open`] picks
//! one from a path and an optional baud rate. [`tap::TapLink`] wraps any of them and
//! records the traffic both ways (for the EV3 wire audit).
//!
//! Level: robot, the lowest (uses neither `cube` nor any robot module). No printing.

pub mod hid;
pub mod memory;
#[cfg(feature = "serial")]
pub mod serial;
pub mod tap;
pub mod tty;

use std::path::{Path, PathBuf};
use std::time::Instant;

pub use hid::HidLink;
pub use memory::MemoryLink;
#[cfg(feature = "serial")]
pub use serial::{list_ports, SerialLink};
pub use tap::{Tap, TapLink, Traffic};
pub use tty::TtyLink;

/// What a link can fail with; every variant names the port.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("cannot open {}: {source}", path.display())]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot open {}: not a terminal ({source})", path.display())]
    NotATerminal {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot open {}: another program holds it (another cubot, or a terminal program): end that one, then try again", path.display())]
    InUse { path: PathBuf },
    #[error("cannot open {}: unsupported baud rate {baud}", path.display())]
    Baud { path: PathBuf, baud: u32 },
    #[error("{what} on {}: {source}", port.display())]
    Io {
        port: PathBuf,
        what: &'static str,
        source: std::io::Error,
    },
    #[error("{} was closed by the other side", port.display())]
    Closed { port: PathBuf },
    #[error("cannot list ports: {source}")]
    Enumerate { source: std::io::Error },
    #[error("no EV3 on USB: plug the brick in with its USB cable (the port on top of the brick marked PC) and switch it on")]
    NoUsbBrick,
    #[error("{} EV3 bricks on USB ({}): name one with --port usb:PATH or its name (see `cubot ports`)", paths.len(), paths.join(", "))]
    SeveralUsbBricks { paths: Vec<String> },
    #[error("this cubot was rebuilt without feature `usb`: cannot open {}", path.display())]
    NoUsb { path: PathBuf },
}

/// A byte link to a robot.
pub trait Link: Send {
    /// Reads the bytes that have arrived into `buf`, waiting until `deadline` for the first
    /// one. `Ok(0)` means nothing arrived before the deadline.
    fn read(&mut self, buf: &mut [u8], deadline: Instant) -> Result<usize, LinkError>;
    /// Writes all of `bytes` and flushes them.
    fn write_all(&mut self, bytes: &[u8]) -> Result<(), LinkError>;
    /// Drops any bytes received but not yet read.
    fn discard_input(&mut self);
    /// Closes and reopens the link (after a fault). Default: nothing to do.
    fn reopen(&mut self) -> Result<(), LinkError> {
        Ok(())
    }
    /// The port's name, for messages.
    fn name(&self) -> String;
}

impl<T: Link + ?Sized> Link for Box<T> {
    fn read(&mut self, buf: &mut [u8], deadline: Instant) -> Result<usize, LinkError> {
        (**self).read(buf, deadline)
    }
    fn write_all(&mut self, bytes: &[u8]) -> Result<(), LinkError> {
        (**self).write_all(bytes)
    }
    fn discard_input(&mut self) {
        (**self).discard_input()
    }
    fn reopen(&mut self) -> Result<(), LinkError> {
        (**self).reopen()
    }
    fn name(&self) -> String {
        (**self).name()
    }
}

/// Whether `path` names a brick on USB: `usb` (the only one) gives `Some(None)`,
/// `usb:PATH` (a HID path from [`hid::list_bricks`]) gives `Some(Some(PATH))`.
pub fn usb_name(path: &Path) -> Option<Option<&str>> {
    let s = path.to_str()?;
    if s == "usb" {
        return Some(None);
    }
    s.strip_prefix("usb:").map(Some)
}

/// Opens the port at `path`: `usb` or `usb:PATH` opens an EV3 on USB ([`hid::HidLink`],
/// feature `usb`); anything else is a terminal in raw mode (8 bits, no echo, no line
/// editing, no CR/LF translation, no flow control).
///
/// Without a baud rate the terminal's speed is left as it is and the port is opened as a
/// plain terminal ([`TtyLink`]): that is how the simulators' pseudo-terminals, which have no
/// speed, are opened. With one, the port is opened through `serialport` at that rate
/// (feature `serial`), or as a plain terminal set to it when that feature is off.
pub fn open(path: &Path, baud: Option<u32>) -> Result<Box<dyn Link>, LinkError> {
    if let Some(usb) = usb_name(path) {
        #[cfg(feature = "usb")]
        return Ok(Box::new(hid::open_usb(usb)?));
        #[cfg(not(feature = "usb"))]
        {
            let _ = usb;
            return Err(LinkError::NoUsb {
                path: path.to_path_buf(),
            });
        }
    }
    match baud {
        None => Ok(Box::new(TtyLink::open(path, None)?)),
        #[cfg(feature = "serial")]
        Some(b) => Ok(Box::new(SerialLink::open(path, b)?)),
        #[cfg(not(feature = "serial"))]
        Some(b) => Ok(Box::new(TtyLink::open(path, Some(b))?)),
    }
}
