//! Replies: decoding a reply frame and reading the values its global memory carries (the
//! driver's side), encoding one (the simulated brick's side).
//!
//! Level: robot (part of the codec; no I/O).

use super::frame::frame_header;
use super::{ProtocolError, Slot, DIRECT_REPLY, DIRECT_REPLY_ERROR};

/// A decoded reply.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    pub counter: u16,
    pub ok: bool,
    pub globals: Vec<u8>,
}

impl Reply {
    fn bytes(&self, slot: Slot) -> Result<&[u8], ProtocolError> {
        let n = slot.kind.size();
        self.globals
            .get(slot.offset..slot.offset + n)
            .ok_or(ProtocolError::Global {
                have: self.globals.len(),
                need: n,
                offset: slot.offset,
            })
    }

    pub fn i8(&self, slot: Slot) -> Result<i8, ProtocolError> {
        Ok(self.bytes(slot)?[0] as i8)
    }

    pub fn i32(&self, slot: Slot) -> Result<i32, ProtocolError> {
        let b = self.bytes(slot)?;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn f32(&self, slot: Slot) -> Result<f32, ProtocolError> {
        let b = self.bytes(slot)?;
        Ok(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A string slot's text, up to its terminating zero (one is required within the slot).
    pub fn string(&self, slot: Slot) -> Result<String, ProtocolError> {
        let b = self.bytes(slot)?;
        let end = b.iter().position(|&c| c == 0).ok_or_else(|| {
            ProtocolError::Other(format!(
                "the string at global {} does not end within its {} bytes",
                slot.offset,
                b.len()
            ))
        })?;
        Ok(String::from_utf8_lossy(&b[..end]).into_owned())
    }
}

/// Decodes one framed reply (length field included).
pub fn decode_reply(frame: &[u8]) -> Result<Reply, ProtocolError> {
    let (counter, kind) = frame_header(frame)?;
    let ok = match kind {
        DIRECT_REPLY => true,
        DIRECT_REPLY_ERROR => false,
        other => return Err(ProtocolError::Type(other)),
    };
    Ok(Reply {
        counter,
        ok,
        globals: frame[5..].to_vec(),
    })
}

/// Encodes a reply (simulator side).
pub fn encode_reply(counter: u16, ok: bool, globals: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(5 + globals.len());
    out.extend_from_slice(&((3 + globals.len()) as u16).to_le_bytes());
    out.extend_from_slice(&counter.to_le_bytes());
    out.push(if ok { DIRECT_REPLY } else { DIRECT_REPLY_ERROR });
    out.extend_from_slice(globals);
    out
}
