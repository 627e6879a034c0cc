//! A serial port through the `serialport` crate (feature `serial`): the EV3's Bluetooth
//! `rfcomm` tty, a USB serial adapter of an Arduino, or any terminal given a baud rate.
//!
//! Level: robot (link). No printing.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{Link, LinkError};

/// A serial port in raw mode. Reads poll with a short timeout so that a read honours its
/// deadline.
pub struct SerialLink {
    path: PathBuf,
    baud: u32,
    port: serialport::TTYPort,
}

fn open(path: &Path, baud: u32) -> Result<serialport::TTYPort, LinkError> {
    let port = serialport::new(path.to_string_lossy(), baud)
        .timeout(Duration::from_millis(20))
        .open_native()
        .map_err(|e| {
            let source: std::io::Error = e.into();
            // A device that opens but is no terminal (`/dev/null`, a disk) cannot be a
            // serial port (asked only after the port's open failed).
            let no_terminal = {
                use std::os::unix::fs::OpenOptionsExt;
                std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(nix::libc::O_NOCTTY | nix::libc::O_NONBLOCK)
                    .open(path)
                    .is_ok_and(|f| !nix::unistd::isatty(f.as_raw_fd()).unwrap_or(false))
            };
            // One that another process holds locked (as this one locks its own).
            let held = {
                use std::os::unix::fs::OpenOptionsExt;
                std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(nix::libc::O_NOCTTY | nix::libc::O_NONBLOCK)
                    .open(path)
                    .is_ok_and(|f| {
                        matches!(
                            nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockSharedNonblock),
                            Err((_, nix::errno::Errno::EWOULDBLOCK))
                        )
                    })
            };
            let path = path.to_path_buf();
            if held {
                LinkError::InUse { path }
            } else if no_terminal {
                LinkError::NotATerminal { path, source }
            } else {
                LinkError::Open { path, source }
            }
        })?;
    // The line discipline must be fully raw ("The byte link" in the EV3 driver's docs): no echo, no canonical mode, no CR/LF
    // translation, no XON/XOFF, 8 bits.
    let fd = port.as_raw_fd();
    // SAFETY: `fd` is a valid open descriptor owned by `port` for this call.
    let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    if let Ok(mut t) = nix::sys::termios::tcgetattr(borrowed) {
        nix::sys::termios::cfmakeraw(&mut t);
        let _ = nix::sys::termios::tcsetattr(borrowed, nix::sys::termios::SetArg::TCSANOW, &t);
    }
    Ok(port)
}

impl SerialLink {
    pub fn open(path: &Path, baud: u32) -> Result<SerialLink, LinkError> {
        Ok(SerialLink {
            path: path.to_path_buf(),
            baud,
            port: open(path, baud)?,
        })
    }
}

impl Link for SerialLink {
    fn read(&mut self, buf: &mut [u8], deadline: Instant) -> Result<usize, LinkError> {
        use std::io::ErrorKind;
        loop {
            if Instant::now() >= deadline {
                return Ok(0);
            }
            match self.port.read(buf) {
                // A pty whose master closed reads 0 (or EIO): the link is gone.
                Ok(0) => {
                    return Err(LinkError::Closed {
                        port: self.path.clone(),
                    })
                }
                Ok(n) => return Ok(n),
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::TimedOut | ErrorKind::WouldBlock | ErrorKind::Interrupted
                    ) => {}
                Err(e) if e.raw_os_error() == Some(libc::EIO) => {
                    return Err(LinkError::Closed {
                        port: self.path.clone(),
                    })
                }
                Err(e) => {
                    return Err(LinkError::Io {
                        port: self.path.clone(),
                        what: "read",
                        source: e,
                    })
                }
            }
        }
    }

    fn write_all(&mut self, bytes: &[u8]) -> Result<(), LinkError> {
        self.port
            .write_all(bytes)
            .and_then(|_| self.port.flush())
            .map_err(|e| LinkError::Io {
                port: self.path.clone(),
                what: "write",
                source: e,
            })
    }

    fn discard_input(&mut self) {
        use serialport::SerialPort;
        let _ = self.port.clear(serialport::ClearBuffer::Input);
    }

    fn reopen(&mut self) -> Result<(), LinkError> {
        self.port = open(&self.path, self.baud)?;
        Ok(())
    }

    fn name(&self) -> String {
        self.path.display().to_string()
    }
}

/// Serial ports the system reports, with a description.
pub fn list_ports() -> Result<Vec<(String, String)>, LinkError> {
    let ports =
        serialport::available_ports().map_err(|e| LinkError::Enumerate { source: e.into() })?;
    Ok(ports
        .into_iter()
        .map(|p| {
            let what = match p.port_type {
                serialport::SerialPortType::UsbPort(u) => format!(
                    "USB {:04x}:{:04x} {}",
                    u.vid,
                    u.pid,
                    u.product.unwrap_or_default()
                ),
                serialport::SerialPortType::BluetoothPort => "Bluetooth".into(),
                serialport::SerialPortType::PciPort => "PCI serial".into(),
                // A built-in UART or one the system does not describe.
                serialport::SerialPortType::Unknown => "serial".into(),
            };
            (p.port_name, what)
        })
        .collect())
}
