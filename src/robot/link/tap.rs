//! A link that records what goes past: every write of the host and every read it gets, in
//! order, for a wire audit or a capture. It knows no protocol.
//!
//! Level: robot (link). No printing.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::{Link, LinkError};

/// One event on a tapped link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Traffic {
    /// Bytes the host wrote.
    Host(Vec<u8>),
    /// Bytes a read handed to the host.
    Robot(Vec<u8>),
    /// The host dropped what was received and not yet read.
    Discarded,
    /// The link was closed and opened again.
    Reopened,
}

/// The record a [`TapLink`] keeps; clone it to read it while the link is in use.
#[derive(Clone, Debug, Default)]
pub struct Tap(Arc<Mutex<Vec<Traffic>>>);

impl Tap {
    /// Everything recorded so far (and clears the record).
    pub fn take(&self) -> Vec<Traffic> {
        std::mem::take(&mut *self.lock())
    }

    fn push(&self, t: Traffic) {
        self.lock().push(t);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Traffic>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A link wrapped so that everything on it is recorded in its [`Tap`].
pub struct TapLink {
    inner: Box<dyn Link>,
    tap: Tap,
}

impl TapLink {
    pub fn new(inner: Box<dyn Link>) -> (TapLink, Tap) {
        let tap = Tap::default();
        (
            TapLink {
                inner,
                tap: tap.clone(),
            },
            tap,
        )
    }
}

impl Link for TapLink {
    fn read(&mut self, buf: &mut [u8], deadline: Instant) -> Result<usize, LinkError> {
        let n = self.inner.read(buf, deadline)?;
        if n > 0 {
            self.tap.push(Traffic::Robot(buf[..n].to_vec()));
        }
        Ok(n)
    }

    fn write_all(&mut self, bytes: &[u8]) -> Result<(), LinkError> {
        self.tap.push(Traffic::Host(bytes.to_vec()));
        self.inner.write_all(bytes)
    }

    fn discard_input(&mut self) {
        self.tap.push(Traffic::Discarded);
        self.inner.discard_input()
    }

    fn reopen(&mut self) -> Result<(), LinkError> {
        self.tap.push(Traffic::Reopened);
        self.inner.reopen()
    }

    fn name(&self) -> String {
        self.inner.name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::robot::link::MemoryLink;

    #[test]
    fn records_both_directions_in_order() {
        let m = MemoryLink::with_responder(|w| vec![w.iter().rev().copied().collect()]);
        let (mut l, tap) = TapLink::new(Box::new(m));
        l.write_all(&[1, 2, 3]).unwrap();
        let mut buf = [0u8; 8];
        let n = l.read(&mut buf, Instant::now()).unwrap();
        l.discard_input();
        assert_eq!(
            tap.take(),
            vec![
                Traffic::Host(vec![1, 2, 3]),
                Traffic::Robot(buf[..n].to_vec()),
                Traffic::Discarded
            ]
        );
        assert!(tap.take().is_empty());
    }
}
