//! An in-memory link for tests: records what is written, answers through a closure (or
//! from bytes queued beforehand) and delivers in small chunks to exercise reassembly.
//!
//! Level: robot (link). No printing.

use std::collections::VecDeque;
use std::time::Instant;

use super::{Link, LinkError};

type Responder = Box<dyn FnMut(&[u8]) -> Vec<Vec<u8>> + Send>;

/// An in-memory link. Nothing can arrive without a write, so a read with nothing queued
/// answers "nothing before the deadline" at once instead of waiting for it.
pub struct MemoryLink {
    /// Every write, in order.
    pub sent: Vec<Vec<u8>>,
    incoming: VecDeque<u8>,
    responder: Option<Responder>,
    /// Most bytes one read delivers.
    pub chunk: usize,
}

impl Default for MemoryLink {
    fn default() -> Self {
        MemoryLink::new()
    }
}

impl MemoryLink {
    pub fn new() -> MemoryLink {
        MemoryLink {
            sent: Vec::new(),
            incoming: VecDeque::new(),
            responder: None,
            chunk: 3,
        }
    }

    /// Every write is passed to `f`, whose returned byte strings are queued for reading.
    pub fn with_responder(f: impl FnMut(&[u8]) -> Vec<Vec<u8>> + Send + 'static) -> Self {
        MemoryLink {
            responder: Some(Box::new(f)),
            ..MemoryLink::new()
        }
    }

    /// Queues bytes for reading.
    pub fn queue(&mut self, bytes: &[u8]) {
        self.incoming.extend(bytes);
    }
}

impl Link for MemoryLink {
    fn read(&mut self, buf: &mut [u8], _deadline: Instant) -> Result<usize, LinkError> {
        let n = self.chunk.max(1).min(self.incoming.len()).min(buf.len());
        for (dst, src) in buf.iter_mut().zip(self.incoming.drain(..n)) {
            *dst = src;
        }
        Ok(n)
    }

    fn write_all(&mut self, bytes: &[u8]) -> Result<(), LinkError> {
        self.sent.push(bytes.to_vec());
        if let Some(r) = self.responder.as_mut() {
            for out in r(bytes) {
                self.incoming.extend(out);
            }
        }
        Ok(())
    }

    fn discard_input(&mut self) {
        self.incoming.clear();
    }

    fn name(&self) -> String {
        "memory".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_link_answers_in_chunks() {
        let mut l = MemoryLink::with_responder(|m| vec![vec![m[0], 1, 2, 3, 4]]);
        l.chunk = 2;
        l.write_all(&[9]).unwrap();
        let mut buf = [0u8; 8];
        let mut got = Vec::new();
        loop {
            let n = l.read(&mut buf, Instant::now()).unwrap();
            if n == 0 {
                break;
            }
            assert!(n <= 2);
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(got, vec![9, 1, 2, 3, 4]);
        assert_eq!(l.sent, vec![vec![9]]);
    }
}
