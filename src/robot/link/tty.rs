//! A terminal opened by path on a raw file descriptor: a pseudo-terminal of a simulator,
//! or (when the `serial` feature is off) a serial port.
//!
//! Level: robot (link). No printing.

use std::io::Write;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{Link, LinkError};

/// A terminal in raw mode.
pub struct TtyLink {
    path: PathBuf,
    baud: Option<u32>,
    fd: OwnedFd,
}

impl TtyLink {
    /// Opens a terminal read-write in raw mode (speed left as it is when `baud` is `None`).
    pub fn open(path: &Path, baud: Option<u32>) -> Result<TtyLink, LinkError> {
        Ok(TtyLink {
            path: path.to_path_buf(),
            baud,
            fd: open_raw(path, baud)?,
        })
    }

    fn io(&self, what: &'static str, e: impl Into<std::io::Error>) -> LinkError {
        LinkError::Io {
            port: self.path.clone(),
            what,
            source: e.into(),
        }
    }
}

fn baud_rate(path: &Path, baud: u32) -> Result<nix::sys::termios::BaudRate, LinkError> {
    use nix::sys::termios::BaudRate;
    Ok(match baud {
        9600 => BaudRate::B9600,
        19200 => BaudRate::B19200,
        38400 => BaudRate::B38400,
        57600 => BaudRate::B57600,
        115200 => BaudRate::B115200,
        230400 => BaudRate::B230400,
        other => {
            return Err(LinkError::Baud {
                path: path.to_path_buf(),
                baud: other,
            })
        }
    })
}

fn open_raw(path: &Path, baud: Option<u32>) -> Result<OwnedFd, LinkError> {
    use nix::fcntl::{open, OFlag};
    use nix::sys::stat::Mode;
    use nix::sys::termios;
    let err = |e: nix::Error| LinkError::Open {
        path: path.to_path_buf(),
        source: e.into(),
    };
    let raw = open(
        path,
        OFlag::O_RDWR | OFlag::O_NOCTTY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(err)?;
    // SAFETY: `open` returned a fresh descriptor that nothing else owns.
    let fd = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(raw) };
    let mut t = termios::tcgetattr(fd.as_fd()).map_err(|e| LinkError::NotATerminal {
        path: path.to_path_buf(),
        source: e.into(),
    })?;
    termios::cfmakeraw(&mut t);
    if let Some(b) = baud {
        termios::cfsetspeed(&mut t, baud_rate(path, b)?).map_err(err)?;
    }
    termios::tcsetattr(fd.as_fd(), termios::SetArg::TCSANOW, &t).map_err(err)?;
    Ok(fd)
}

impl Link for TtyLink {
    fn read(&mut self, buf: &mut [u8], deadline: Instant) -> Result<usize, LinkError> {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(0);
            }
            let ms = PollTimeout::try_from(left.as_millis().clamp(1, 60_000) as u32)
                .unwrap_or(PollTimeout::MAX);
            let mut fds = [PollFd::new(self.fd.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, ms) {
                Ok(0) => continue,
                Ok(_) => {}
                Err(nix::Error::EINTR) => continue,
                Err(e) => return Err(self.io("poll", e)),
            }
            let revents = fds[0].revents().unwrap_or(PollFlags::empty());
            if revents.contains(PollFlags::POLLIN) {
                match nix::unistd::read(self.fd.as_raw_fd(), buf) {
                    Ok(0) | Err(nix::Error::EIO) => {
                        return Err(LinkError::Closed {
                            port: self.path.clone(),
                        })
                    }
                    Ok(n) => return Ok(n),
                    Err(nix::Error::EAGAIN) | Err(nix::Error::EINTR) => {}
                    Err(e) => return Err(self.io("read", e)),
                }
            } else if revents.intersects(PollFlags::POLLHUP | PollFlags::POLLERR) {
                // A pty whose other side is gone: nothing will come; wait out the deadline
                // so a silent robot and a vanished one look alike to the caller.
                std::thread::sleep(left.min(Duration::from_millis(20)));
            }
        }
    }

    fn write_all(&mut self, bytes: &[u8]) -> Result<(), LinkError> {
        let fd = self.fd.try_clone().map_err(|e| self.io("write", e))?;
        let mut f = std::fs::File::from(fd);
        f.write_all(bytes)
            .and_then(|_| f.flush())
            .map_err(|e| self.io("write", e))
    }

    fn discard_input(&mut self) {
        let _ = nix::sys::termios::tcflush(self.fd.as_fd(), nix::sys::termios::FlushArg::TCIFLUSH);
    }

    fn reopen(&mut self) -> Result<(), LinkError> {
        self.fd = open_raw(&self.path, self.baud)?;
        Ok(())
    }

    fn name(&self) -> String {
        self.path.display().to_string()
    }
}
