//! Byte transports for EV3 direct commands: a trait, an in-memory implementation for unit
//! tests and (feature `serial`) a serial-port implementation for the brick's Bluetooth
//! `rfcomm` tty or the simulator's pseudo-terminal.
//!
//! Level: robot. No printing.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::ev3::protocol::FrameBuffer;

/// What a transport can fail with.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error("cannot open {port}: {reason}")]
    Open { port: String, reason: String },
    #[error("{what} on {port}: {source}")]
    Io {
        port: String,
        what: &'static str,
        source: std::io::Error,
    },
    #[error("no complete message within {ms} ms on {port}")]
    Timeout { port: String, ms: u64 },
    #[error("{port} was closed by the other side")]
    Closed { port: String },
}

/// Sends bytes and receives framed messages (2-byte little-endian length prefix).
pub trait Transport: Send {
    fn send(&mut self, bytes: &[u8]) -> Result<(), TransportError>;
    /// One whole message, length field included.
    fn recv_message(&mut self, timeout: Duration) -> Result<Vec<u8>, TransportError>;
    /// Closes and reopens the link (after a fault). Default: nothing to do.
    fn reconnect(&mut self) -> Result<(), TransportError> {
        Ok(())
    }
    /// Drops any bytes received but not yet consumed.
    fn discard_input(&mut self) {}
    /// The port's name, for messages.
    fn name(&self) -> String;
}

impl<T: Transport + ?Sized> Transport for Box<T> {
    fn send(&mut self, bytes: &[u8]) -> Result<(), TransportError> {
        (**self).send(bytes)
    }
    fn recv_message(&mut self, timeout: Duration) -> Result<Vec<u8>, TransportError> {
        (**self).recv_message(timeout)
    }
    fn reconnect(&mut self) -> Result<(), TransportError> {
        (**self).reconnect()
    }
    fn discard_input(&mut self) {
        (**self).discard_input()
    }
    fn name(&self) -> String {
        (**self).name()
    }
}

type Responder = Box<dyn FnMut(&[u8]) -> Vec<Vec<u8>> + Send>;

/// An in-memory transport: records what is sent and answers through a closure (or from
/// bytes queued with [`MemoryTransport::queue`]), delivering bytes in chunks of
/// `chunk` to exercise reassembly.
pub struct MemoryTransport {
    pub sent: Vec<Vec<u8>>,
    incoming: VecDeque<u8>,
    frames: FrameBuffer,
    responder: Option<Responder>,
    pub chunk: usize,
}

impl Default for MemoryTransport {
    fn default() -> Self {
        MemoryTransport::new()
    }
}

impl MemoryTransport {
    pub fn new() -> MemoryTransport {
        MemoryTransport {
            sent: Vec::new(),
            incoming: VecDeque::new(),
            frames: FrameBuffer::default(),
            responder: None,
            chunk: 3,
        }
    }

    /// Every sent message is passed to `f`, whose returned byte strings are queued.
    pub fn with_responder(f: impl FnMut(&[u8]) -> Vec<Vec<u8>> + Send + 'static) -> Self {
        MemoryTransport {
            responder: Some(Box::new(f)),
            ..MemoryTransport::new()
        }
    }

    pub fn queue(&mut self, bytes: &[u8]) {
        self.incoming.extend(bytes);
    }
}

impl Transport for MemoryTransport {
    fn send(&mut self, bytes: &[u8]) -> Result<(), TransportError> {
        self.sent.push(bytes.to_vec());
        if let Some(r) = self.responder.as_mut() {
            for out in r(bytes) {
                self.incoming.extend(out);
            }
        }
        Ok(())
    }

    fn recv_message(&mut self, timeout: Duration) -> Result<Vec<u8>, TransportError> {
        loop {
            if let Some(f) = self.frames.pop() {
                return Ok(f);
            }
            if self.incoming.is_empty() {
                return Err(TransportError::Timeout {
                    port: self.name(),
                    ms: timeout.as_millis() as u64,
                });
            }
            let n = self.chunk.max(1).min(self.incoming.len());
            let chunk: Vec<u8> = self.incoming.drain(..n).collect();
            self.frames.push(&chunk);
        }
    }

    fn discard_input(&mut self) {
        self.incoming.clear();
        self.frames.clear();
    }

    fn name(&self) -> String {
        "memory".into()
    }
}

/// Reads framed messages from any `std::io::Read` whose reads time out (serial ports).
pub fn recv_framed(
    reader: &mut dyn std::io::Read,
    frames: &mut FrameBuffer,
    port: &str,
    timeout: Duration,
) -> Result<Vec<u8>, TransportError> {
    let deadline = Instant::now() + timeout;
    let mut buf = [0u8; 1024];
    loop {
        if let Some(f) = frames.pop() {
            return Ok(f);
        }
        if Instant::now() >= deadline {
            return Err(TransportError::Timeout {
                port: port.to_string(),
                ms: timeout.as_millis() as u64,
            });
        }
        match reader.read(&mut buf) {
            Ok(0) => {
                // A pty whose master closed reads 0 (or EIO): the link is gone.
                return Err(TransportError::Closed {
                    port: port.to_string(),
                });
            }
            Ok(n) => frames.push(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.raw_os_error() == Some(libc::EIO) => {
                return Err(TransportError::Closed {
                    port: port.to_string(),
                })
            }
            Err(e) => {
                return Err(TransportError::Io {
                    port: port.to_string(),
                    what: "read",
                    source: e,
                })
            }
        }
    }
}

#[cfg(feature = "serial")]
pub use serial::{list_ports, SerialTransport};

#[cfg(feature = "serial")]
mod serial {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    /// A serial port (Bluetooth `rfcomm` tty, USB serial adapter or a pty slave) in raw
    /// mode. Reads poll with a short timeout so `recv_message` honours its deadline.
    pub struct SerialTransport {
        path: String,
        port: serialport::TTYPort,
        frames: FrameBuffer,
    }

    fn open(path: &str) -> Result<serialport::TTYPort, TransportError> {
        let port = serialport::new(path, 115_200)
            .timeout(Duration::from_millis(20))
            .open_native()
            .map_err(|e| TransportError::Open {
                port: path.to_string(),
                reason: e.to_string(),
            })?;
        // Make sure the line discipline is fully raw (doc §2): no echo, no canonical mode,
        // no CR/LF translation, no XON/XOFF, 8 bits.
        let fd = port.as_raw_fd();
        // SAFETY: `fd` is a valid open descriptor owned by `port` for this call.
        let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        if let Ok(mut t) = nix::sys::termios::tcgetattr(borrowed) {
            nix::sys::termios::cfmakeraw(&mut t);
            let _ = nix::sys::termios::tcsetattr(borrowed, nix::sys::termios::SetArg::TCSANOW, &t);
        }
        Ok(port)
    }

    impl SerialTransport {
        pub fn open(path: &str) -> Result<SerialTransport, TransportError> {
            Ok(SerialTransport {
                path: path.to_string(),
                port: open(path)?,
                frames: FrameBuffer::default(),
            })
        }
    }

    impl Transport for SerialTransport {
        fn send(&mut self, bytes: &[u8]) -> Result<(), TransportError> {
            self.port
                .write_all(bytes)
                .and_then(|_| self.port.flush())
                .map_err(|e| TransportError::Io {
                    port: self.path.clone(),
                    what: "write",
                    source: e,
                })
        }

        fn recv_message(&mut self, timeout: Duration) -> Result<Vec<u8>, TransportError> {
            recv_framed(&mut self.port, &mut self.frames, &self.path, timeout)
        }

        fn reconnect(&mut self) -> Result<(), TransportError> {
            self.port = open(&self.path)?;
            self.frames.clear();
            Ok(())
        }

        fn discard_input(&mut self) {
            use serialport::SerialPort;
            let _ = self.port.clear(serialport::ClearBuffer::Input);
            self.frames.clear();
        }

        fn name(&self) -> String {
            self.path.clone()
        }
    }

    /// Serial ports the system reports, with a description.
    pub fn list_ports() -> Result<Vec<(String, String)>, TransportError> {
        let ports = serialport::available_ports().map_err(|e| TransportError::Open {
            port: "(enumeration)".into(),
            reason: e.to_string(),
        })?;
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
                    serialport::SerialPortType::PciPort => "PCI".into(),
                    serialport::SerialPortType::Unknown => "unknown".into(),
                };
                (p.port_name, what)
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_transport_reassembles_chunks() {
        let mut t = MemoryTransport::with_responder(|m| vec![vec![3, 0, m[2], m[3], 2]]);
        t.chunk = 2;
        t.send(&[6, 0, 9, 0, 0, 0, 0, 1]).unwrap();
        let got = t.recv_message(Duration::from_millis(10)).unwrap();
        assert_eq!(got, vec![3, 0, 9, 0, 2]);
        assert!(matches!(
            t.recv_message(Duration::from_millis(10)),
            Err(TransportError::Timeout { .. })
        ));
    }
}
