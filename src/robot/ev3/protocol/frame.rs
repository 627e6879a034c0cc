//! Framing: the length-prefixed messages both sides send, their headers and types; the
//! decoder of a command frame (for the simulated brick) and the splitter of a byte stream
//! into frames.
//!
//! Level: robot (part of the codec; no I/O).
//!
//! ## Framing
//!
//! Every message, in either direction, starts with a two-byte length that counts the bytes
//! *after* it, so a reader takes two bytes, then exactly that many more. A direct command:
//!
//! | Bytes | Field   | Contents |
//! |-------|---------|----------|
//! | 0–1   | length  | `u16`: message size − 2 |
//! | 2–3   | counter | `u16` picked by the host (the driver counts up and wraps); the reply carries the same value |
//! | 4     | type    | see [Message types](#message-types) |
//! | 5–6   | memory  | `u16`: bits 0–9 = bytes of global memory (0..1023), bits 10–15 = bytes of local memory (0..63), i.e. `local << 10 \| global` |
//! | 7…    | operations | opcodes with their parameters, executed in order |
//!
//! Memory header examples: nothing → `00 00`; 4 global bytes → `04 00`; 12 global and 4
//! local → `0x100C` → `0C 10`.
//!
//! A direct reply:
//!
//! | Bytes | Field   | Contents |
//! |-------|---------|----------|
//! | 0–1   | length  | `u16`: 3 + bytes of global memory |
//! | 2–3   | counter | copied from the command |
//! | 4     | status  | `0x02` ok, `0x04` error |
//! | 5…    | globals | the command's whole global memory, whatever its operations left there |
//!
//! A reply to a command without global memory is five bytes, `03 00 cc cc 02`. No message
//! may exceed 1024 bytes including the length field ([`MAX_MESSAGE`]; `MAX_MSG_SIZE` in
//! `c_com.h`). The decoder refuses a frame whose length field disagrees with its size.
//!
//! ## Message types
//!
//! | Byte | Name | Direction | Handled here |
//! |------|------|-----------|--------------|
//! | `0x00` | DIRECT_COMMAND_REPLY    | host → brick | encoded, decoded |
//! | `0x80` | DIRECT_COMMAND_NO_REPLY | host → brick | encoded, decoded |
//! | `0x02` | DIRECT_REPLY            | brick → host | encoded, decoded |
//! | `0x04` | DIRECT_REPLY_ERROR      | brick → host | encoded, decoded |
//! | `0x01` / `0x81` | SYSTEM_COMMAND_REPLY / _NO_REPLY | host → brick | recognised only |
//! | `0x05` | SYSTEM_REPLY_ERROR      | brick → host | encoded by the simulated brick |
//!
//! Bit 7 of a command's type byte means "no reply wanted". System commands (file transfer,
//! mailboxes) are not used: after the type byte comes a system command byte, and the
//! simulated brick answers any of them that wants a reply with length, counter, `0x05`,
//! the echoed system command byte and status `0x0A` (unknown error).

use super::ProtocolError;

/// Message type: direct command, reply wanted.
pub const DIRECT_COMMAND_REPLY: u8 = 0x00;
/// Message type: direct command, no reply.
pub const DIRECT_COMMAND_NO_REPLY: u8 = 0x80;
/// Reply status: ok.
pub const DIRECT_REPLY: u8 = 0x02;
/// Reply status: the command was not (fully) executed.
pub const DIRECT_REPLY_ERROR: u8 = 0x04;
/// System command types (recognised only).
pub const SYSTEM_COMMAND_REPLY: u8 = 0x01;
pub const SYSTEM_COMMAND_NO_REPLY: u8 = 0x81;
pub const SYSTEM_REPLY_ERROR: u8 = 0x05;
/// Largest message on the wire, length field included.
pub const MAX_MESSAGE: usize = 1024;

/// The header every frame (command or reply) starts with: checks the length field against
/// the frame and returns the message counter and the type byte.
pub(super) fn frame_header(frame: &[u8]) -> Result<(u16, u8), ProtocolError> {
    if frame.len() < 5 {
        return Err(ProtocolError::Short {
            len: frame.len(),
            need: 5,
        });
    }
    let field = u16::from_le_bytes([frame[0], frame[1]]) as usize;
    if field != frame.len() - 2 {
        return Err(ProtocolError::Length {
            field,
            actual: frame.len() - 2,
        });
    }
    let counter = u16::from_le_bytes([frame[2], frame[3]]);
    Ok((counter, frame[4]))
}

/// A decoded command frame (simulator side).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandFrame {
    pub counter: u16,
    pub kind: u8,
    pub global: usize,
    pub local: usize,
    /// Operations (direct) or the system command bytes (system).
    pub body: Vec<u8>,
}

impl CommandFrame {
    pub fn wants_reply(&self) -> bool {
        self.kind == DIRECT_COMMAND_REPLY || self.kind == SYSTEM_COMMAND_REPLY
    }

    pub fn is_system(&self) -> bool {
        self.kind == SYSTEM_COMMAND_REPLY || self.kind == SYSTEM_COMMAND_NO_REPLY
    }
}

/// Decodes one framed command (length field included).
pub fn decode_command(frame: &[u8]) -> Result<CommandFrame, ProtocolError> {
    let (counter, kind) = frame_header(frame)?;
    match kind {
        DIRECT_COMMAND_REPLY | DIRECT_COMMAND_NO_REPLY => {
            if frame.len() < 7 {
                return Err(ProtocolError::Short {
                    len: frame.len(),
                    need: 7,
                });
            }
            let mem = u16::from_le_bytes([frame[5], frame[6]]);
            Ok(CommandFrame {
                counter,
                kind,
                global: (mem & 0x3FF) as usize,
                local: (mem >> 10) as usize,
                body: frame[7..].to_vec(),
            })
        }
        SYSTEM_COMMAND_REPLY | SYSTEM_COMMAND_NO_REPLY => Ok(CommandFrame {
            counter,
            kind,
            global: 0,
            local: 0,
            body: frame[5..].to_vec(),
        }),
        other => Err(ProtocolError::Type(other)),
    }
}

/// Splits a byte stream into frames (length-prefixed), tolerating split and merged reads.
#[derive(Debug, Default)]
pub struct FrameBuffer {
    buf: Vec<u8>,
}

impl FrameBuffer {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete frame, if any.
    pub fn pop(&mut self) -> Option<Vec<u8>> {
        if self.buf.len() < 2 {
            return None;
        }
        let len = u16::from_le_bytes([self.buf[0], self.buf[1]]) as usize;
        if self.buf.len() < len + 2 {
            return None;
        }
        let frame: Vec<u8> = self.buf.drain(..len + 2).collect();
        Some(frame)
    }

    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// Drops leading bytes until the buffer starts with what a command's header can be: a
    /// length of 4 (a system command's least) to [`MAX_MESSAGE`] - 2, and, once it has
    /// come, a command type; returns how many went. Bytes that are no EV3 command (a line
    /// robot's text sent to the wrong port) would otherwise be taken as the length of a
    /// frame that never ends, and every command after them swallowed into it.
    pub fn skip_to_command(&mut self) -> usize {
        let mut skipped = 0;
        while self.buf.len() >= 2 {
            let len = u16::from_le_bytes([self.buf[0], self.buf[1]]) as usize;
            let typed = self.buf.get(4).is_none_or(|t| {
                [
                    DIRECT_COMMAND_REPLY,
                    DIRECT_COMMAND_NO_REPLY,
                    SYSTEM_COMMAND_REPLY,
                    SYSTEM_COMMAND_NO_REPLY,
                ]
                .contains(t)
            });
            if (4..=MAX_MESSAGE - 2).contains(&len) && typed {
                break;
            }
            self.buf.remove(0);
            skipped += 1;
        }
        skipped
    }

    pub fn clear(&mut self) {
        self.buf.clear();
    }
}
