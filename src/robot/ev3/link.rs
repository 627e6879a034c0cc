//! EV3 framing on top of a byte link: every message starts with its length (two bytes,
//! little-endian, not counting themselves), so a reader collects bytes until one whole
//! message is there, whatever the chunks the link delivered.
//!
//! Level: robot (uses [`crate::robot::link`] and [`super::protocol`]'s frame buffer).
//! No printing.

use std::time::{Duration, Instant};

use super::protocol::audit::Audit;
use super::protocol::FrameBuffer;
use crate::robot::link::{Link, LinkError, Traffic};

/// A link that sends EV3 messages and receives them whole.
pub struct Ev3Link {
    link: Box<dyn Link>,
    frames: FrameBuffer,
}

impl Ev3Link {
    pub fn new(link: Box<dyn Link>) -> Ev3Link {
        Ev3Link {
            link,
            frames: FrameBuffer::default(),
        }
    }

    pub fn send(&mut self, bytes: &[u8]) -> Result<(), LinkError> {
        self.link.write_all(bytes)
    }

    /// One whole message, length field included, or `None` if none was complete within
    /// `timeout`.
    pub fn recv_message(&mut self, timeout: Duration) -> Result<Option<Vec<u8>>, LinkError> {
        let deadline = Instant::now() + timeout;
        let mut buf = [0u8; 1024];
        loop {
            if let Some(f) = self.frames.pop() {
                return Ok(Some(f));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            match self.link.read(&mut buf, deadline)? {
                0 => return Ok(None),
                n => self.frames.push(&buf[..n]),
            }
        }
    }

    /// Drops what was received but not yet read, framed or not.
    pub fn discard_input(&mut self) {
        self.link.discard_input();
        self.frames.clear();
    }

    /// Closes and reopens the link, dropping any partial message.
    pub fn reopen(&mut self) -> Result<(), LinkError> {
        self.link.reopen()?;
        self.frames.clear();
        Ok(())
    }

    pub fn name(&self) -> String {
        self.link.name()
    }
}

/// Runs the [wire audit](super::protocol::audit) over what a
/// [`TapLink`](crate::robot::link::TapLink) recorded, to its end.
pub fn audit(traffic: &[Traffic]) -> Audit {
    let mut a = Audit::new();
    for t in traffic {
        match t {
            Traffic::Host(b) => a.host(b),
            Traffic::Robot(b) => a.brick(b),
            Traffic::Discarded | Traffic::Reopened => a.brick_discarded(),
        }
    }
    a.finish();
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::robot::link::MemoryLink;

    #[test]
    fn messages_are_reassembled_from_chunks() {
        let mut m = MemoryLink::with_responder(|m| vec![vec![3, 0, m[2], m[3], 2]]);
        m.chunk = 2;
        let mut t = Ev3Link::new(Box::new(m));
        t.send(&[6, 0, 9, 0, 0, 0, 0, 1]).unwrap();
        let got = t.recv_message(Duration::from_millis(10)).unwrap();
        assert_eq!(got, Some(vec![3, 0, 9, 0, 2]));
        assert_eq!(t.recv_message(Duration::from_millis(10)).unwrap(), None);
    }
}
