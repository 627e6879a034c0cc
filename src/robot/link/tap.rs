//! A link that records what goes past: every write of the host and every read it gets, in
//! order, for a wire audit or a capture, each stamped with the time it went past (seconds
//! of wall clock since the tap began, or of a clock the tap is given, such as a simulated
//! brick's). It knows no protocol.
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

/// A clock a tap stamps its events with (seconds).
pub type Clock = Arc<dyn Fn() -> f64 + Send + Sync>;

/// The record a [`TapLink`] keeps; clone it to read it while the link is in use.
#[derive(Clone)]
pub struct Tap {
    record: Arc<Mutex<Vec<(f64, Traffic)>>>,
    clock: Clock,
}

impl Default for Tap {
    /// A tap stamping with seconds of wall clock since it was made.
    fn default() -> Tap {
        let t0 = Instant::now();
        Tap::with_clock(Arc::new(move || t0.elapsed().as_secs_f64()))
    }
}

impl std::fmt::Debug for Tap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tap")
            .field("events", &self.lock().len())
            .finish()
    }
}

impl Tap {
    /// A tap stamping its events with `clock`.
    pub fn with_clock(clock: Clock) -> Tap {
        Tap {
            record: Arc::default(),
            clock,
        }
    }

    /// Everything recorded so far (and clears the record).
    pub fn take(&self) -> Vec<Traffic> {
        self.take_timed().into_iter().map(|(_, t)| t).collect()
    }

    /// Everything recorded so far with the time each went past (and clears the record).
    pub fn take_timed(&self) -> Vec<(f64, Traffic)> {
        std::mem::take(&mut *self.lock())
    }

    fn push(&self, t: Traffic) {
        let now = (self.clock)();
        self.lock().push((now, t));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(f64, Traffic)>> {
        self.record.lock().unwrap_or_else(|e| e.into_inner())
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
        (TapLink::recording(inner, tap.clone()), tap)
    }

    /// `inner` recorded into `tap` (a clone of it), as it is.
    pub fn recording(inner: Box<dyn Link>, tap: Tap) -> TapLink {
        TapLink { inner, tap }
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

    #[test]
    fn stamps_with_the_clock_it_is_given() {
        let m = MemoryLink::with_responder(|w| vec![w.to_vec()]);
        let tick = Arc::new(Mutex::new(0.0));
        let t = tick.clone();
        let tap = Tap::with_clock(Arc::new(move || *t.lock().unwrap()));
        let mut l = TapLink::recording(Box::new(m), tap.clone());
        l.write_all(&[1]).unwrap();
        *tick.lock().unwrap() = 2.5;
        let mut buf = [0u8; 4];
        l.read(&mut buf, Instant::now()).unwrap();
        let got = tap.take_timed();
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].0, got[1].0), (0.0, 2.5));
    }
}
