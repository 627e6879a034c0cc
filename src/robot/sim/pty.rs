//! The server both simulators run on: it serves a [`Peer`] from a thread over an
//! [`Endpoint`]. Each round it hands the peer the bytes the host wrote, lets the peer's
//! simulated time follow wall time (`speed` simulated seconds per wall second), and sends
//! the peer's replies once their simulated delivery time (the moment they were produced
//! plus the link latency) has come.
//!
//! The usual endpoint is a pseudo-terminal ([`PtyServer`]): a pty pair, both sides raw,
//! whose slave stays open so the master never sees a hang-up while a host reconnects. The
//! simulated brick also serves an in-memory USB HID pipe
//! ([`spawn_hid`](crate::robot::sim::brick::spawn_hid)) through [`Server::spawn`].
//!
//! Level: robot (simulators). Knows no protocol. No printing.

use std::collections::VecDeque;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What cannot start.
#[derive(Debug, thiserror::Error)]
pub enum PtyError {
    #[error("cannot open a pseudo-terminal: {0}")]
    Open(#[source] nix::Error),
    #[error("cannot put the pseudo-terminal in raw mode: {0}")]
    Raw(#[source] nix::Error),
    #[error("the pseudo-terminal has no path: {0}")]
    Path(#[source] nix::Error),
    #[error("cannot start the simulator thread: {0}")]
    Thread(#[source] std::io::Error),
}

/// One side of a conversation: a simulated robot that consumes the host's bytes and
/// produces its own over simulated time.
pub trait Peer: Send + 'static {
    /// Bytes the host wrote, as they arrive.
    fn receive(&mut self, bytes: &[u8]);
    /// Runs the peer's simulated time up to `now` (seconds since the start), pushing every
    /// reply into `out` stamped with the simulated time it was produced; returns the peer's
    /// clock.
    fn run_until(&mut self, now: f64, out: &mut Vec<(f64, Vec<u8>)>) -> f64;
}

/// Where a peer's bytes come from and go to.
pub trait Endpoint: Send + 'static {
    /// Bytes the host sent, waiting about a millisecond at most.
    fn recv(&mut self, buf: &mut [u8]) -> Option<usize>;
    /// Replies due to the host, in order.
    fn send(&mut self, replies: &[Vec<u8>]);
}

/// A peer served from a thread over an endpoint. Stops on drop.
pub struct Server {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Serves `peer` over `endpoint` from a thread called `name`. `latency` (simulated
    /// seconds) is added to the delivery time of every reply.
    pub fn spawn(
        name: &str,
        endpoint: impl Endpoint,
        peer: impl Peer,
        speed: f64,
        latency: f64,
    ) -> Result<Server, PtyError> {
        let stop = Arc::new(AtomicBool::new(false));
        let round = Round {
            endpoint,
            speed: speed.max(1e-3),
            latency: latency.max(0.0),
            stop: stop.clone(),
        };
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || round.serve(peer))
            .map_err(PtyError::Thread)?;
        Ok(Server {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops serving.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A running pty server. Stops (and closes the pty) on drop.
pub struct PtyServer {
    path: PathBuf,
    server: Server,
}

fn set_raw(fd: impl AsFd) -> Result<(), PtyError> {
    use nix::sys::termios;
    let mut t = termios::tcgetattr(fd.as_fd()).map_err(PtyError::Raw)?;
    termios::cfmakeraw(&mut t);
    termios::tcsetattr(fd.as_fd(), termios::SetArg::TCSANOW, &t).map_err(PtyError::Raw)
}

impl PtyServer {
    /// Opens a pty and serves `peer` on its master from a thread called `name`.
    /// `latency` (simulated seconds) is added to the delivery time of every reply.
    pub fn spawn(
        name: &str,
        peer: impl Peer,
        speed: f64,
        latency: f64,
    ) -> Result<PtyServer, PtyError> {
        let pty = nix::pty::openpty(None, None).map_err(PtyError::Open)?;
        set_raw(&pty.master)?;
        set_raw(&pty.slave)?;
        let path = nix::unistd::ttyname(&pty.slave).map_err(PtyError::Path)?;
        let end = PtyEnd {
            master: pty.master,
            _slave: pty.slave,
        };
        let server = Server::spawn(name, end, peer, speed, latency)?;
        Ok(PtyServer { path, server })
    }

    /// The pty slave path a host opens as if it were the robot's serial port.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stops serving.
    pub fn stop(&mut self) {
        self.server.stop();
    }
}

/// The serving thread's side.
struct Round<E> {
    endpoint: E,
    speed: f64,
    latency: f64,
    stop: Arc<AtomicBool>,
}

impl<E: Endpoint> Round<E> {
    fn serve(mut self, mut peer: impl Peer) {
        let start = Instant::now();
        let mut buf = [0u8; 1024];
        let mut produced: Vec<(f64, Vec<u8>)> = Vec::new();
        // Replies waiting for their simulated delivery time.
        let mut queue: VecDeque<(f64, Vec<u8>)> = VecDeque::new();
        let mut out: Vec<Vec<u8>> = Vec::new();
        while !self.stop.load(Ordering::SeqCst) {
            if let Some(n) = self.endpoint.recv(&mut buf) {
                peer.receive(&buf[..n]);
            }
            // Simulated time follows wall time.
            let now = start.elapsed().as_secs_f64() * self.speed;
            let clock = peer.run_until(now, &mut produced);
            queue.extend(produced.drain(..).map(|(t, r)| (t + self.latency, r)));
            while queue.front().is_some_and(|(due, _)| *due <= clock) {
                if let Some((_, r)) = queue.pop_front() {
                    out.push(r);
                }
            }
            if !out.is_empty() {
                self.endpoint.send(&out);
                out.clear();
            }
        }
    }
}

/// A pty's master side as an endpoint.
struct PtyEnd {
    master: OwnedFd,
    // Kept open so the master never sees a hang-up while the host reconnects.
    _slave: OwnedFd,
}

impl Endpoint for PtyEnd {
    fn recv(&mut self, buf: &mut [u8]) -> Option<usize> {
        self.read(buf)
    }

    /// A byte stream: the replies due in one round go out in one write.
    fn send(&mut self, replies: &[Vec<u8>]) {
        let out = replies.concat();
        self.write(&out);
    }
}

impl PtyEnd {
    /// What the host wrote, waiting at most a millisecond.
    fn read(&self, buf: &mut [u8]) -> Option<usize> {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        let mut fds = [PollFd::new(self.master.as_fd(), PollFlags::POLLIN)];
        let readable = match poll(&mut fds, PollTimeout::from(1u8)) {
            Ok(n) if n > 0 => fds[0]
                .revents()
                .is_some_and(|r| r.contains(PollFlags::POLLIN)),
            _ => false,
        };
        if !readable {
            return None;
        }
        match nix::unistd::read(self.master.as_raw_fd(), buf) {
            Ok(n) if n > 0 => Some(n),
            _ => None,
        }
    }

    fn write(&self, out: &[u8]) {
        let mut written = 0;
        while written < out.len() {
            match nix::unistd::write(&self.master, &out[written..]) {
                Ok(n) => written += n,
                Err(nix::errno::Errno::EAGAIN) | Err(nix::errno::Errno::EINTR) => {
                    std::thread::sleep(Duration::from_millis(1))
                }
                Err(_) => break,
            }
        }
    }
}
