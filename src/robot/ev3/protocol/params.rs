//! Parameters: how a constant or a variable is written after an opcode, the encoder's
//! shortest forms and the decoder of every form.
//!
//! Level: robot (part of the codec; no I/O).
//!
//! ## Parameter encoding
//!
//! Each parameter opens with a descriptor byte whose bit 7 selects the short (one byte in
//! all) or the long form.
//!
//! | Short form bits | Name | Meaning |
//! |-----------------|------|---------|
//! | `0 0 s v v v v v` | LC0 | constant, 6-bit two's complement in bits 0–5 (bit 5 is the sign): −32..31 |
//! | `0 1 0 i i i i i` | LV0 | local variable at byte offset 0..31 |
//! | `0 1 1 i i i i i` | GV0 | global variable at byte offset 0..31 |
//!
//! In the long form bit 6 marks a variable (clear: a constant), bit 5 a global variable
//! (clear: local), bits 3–4 the address and handle forms used for arrays (the decoder
//! refuses them), and bits 0–2 say what follows: 1 → one byte, 2 → two, 3 → four, 0 or 4
//! → a zero-terminated string (constants only).
//!
//! | First byte | Name | Followed by |
//! |------------|------|-------------|
//! | `0x81` / `0x82` / `0x83` | LC1 / LC2 / LC4 | a signed 8 / 16 / 32-bit constant |
//! | `0x84` | LCS | ASCII bytes, then `0x00` |
//! | `0xC1` / `0xC2` / `0xC3` | LV1 / LV2 / LV4 | an unsigned local offset of 1 / 2 / 4 bytes |
//! | `0xE1` / `0xE2` / `0xE3` | GV1 / GV2 / GV4 | an unsigned global offset of 1 / 2 / 4 bytes |
//!
//! The brick's virtual machine widens a constant to 32 bits and the opcode then reads it as
//! the type it expects, so any constant form may carry any integer parameter whose value
//! fits. The decoder therefore accepts every form above; [`push_const`] writes the shortest,
//! as `ev3_dc` does:
//!
//! | Value | Form | Size |
//! |-------|------|------|
//! | −32 ..= 31 | LC0 | 1 byte |
//! | −127 ..= 127 | LC1 | 2 bytes |
//! | −32767 ..= 32767 | LC2 | 3 bytes |
//! | anything else | LC4 | 5 bytes |
//!
//! [`push_global`] writes GV0 for offsets below 32, GV1 below 256, GV2 above. Output
//! parameters (marked `*` in [Opcodes](super#opcodes)) must be variables; this code always gives
//! global ones. Reference encodings (the codec's first golden test checks all of them):
//!
//! | Value | Bytes | Value | Bytes |
//! |-------|-------|-------|-------|
//! | 0 | `00` | 270 | `82 0E 01` |
//! | 31 | `1F` | −270 | `82 F2 FE` |
//! | −1 | `3F` | 540 | `82 1C 02` |
//! | −5 | `3B` | 1080 | `82 38 04` |
//! | −32 | `20` | −1080 | `82 C8 FB` |
//! | 32 | `81 20` | 32767 | `82 FF 7F` |
//! | −33 | `81 DF` | 32768 | `83 00 80 00 00` |
//! | 60 | `81 3C` | −40000 | `83 C0 63 FF FF` |
//! | 100 | `81 64` | GV0 at 0 / 4 / 8 | `60` / `64` / `68` |
//! | −100 | `81 9C` | LV0 at 0 | `40` |

use super::ProtocolError;

/// A decoded parameter (see [Parameter encoding](self#parameter-encoding)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Param {
    Const(i32),
    Str(String),
    Local(usize),
    Global(usize),
}

/// Appends the shortest constant form of `v` (LC0, LC1, LC2 or LC4).
pub fn push_const(buf: &mut Vec<u8>, v: i32) {
    if (-32..=31).contains(&v) {
        buf.push((v as u8) & 0x3F);
    } else if (-127..=127).contains(&v) {
        buf.push(0x81);
        buf.push(v as i8 as u8);
    } else if (-32767..=32767).contains(&v) {
        buf.push(0x82);
        buf.extend_from_slice(&(v as i16).to_le_bytes());
    } else {
        buf.push(0x83);
        buf.extend_from_slice(&v.to_le_bytes());
    }
}

/// Appends a global-variable reference (GV0 when it fits, else GV1/GV2).
pub fn push_global(buf: &mut Vec<u8>, offset: usize) {
    if offset < 32 {
        buf.push(0x60 | offset as u8);
    } else if offset < 256 {
        buf.push(0xE1);
        buf.push(offset as u8);
    } else {
        buf.push(0xE2);
        buf.extend_from_slice(&(offset as u16).to_le_bytes());
    }
}

/// Decodes one parameter at `*pos`, advancing it. Accepts every form of [Parameter encoding](self#parameter-encoding), not only the shortest.
pub fn decode_param(bytes: &[u8], pos: &mut usize) -> Result<Param, ProtocolError> {
    let at = *pos;
    let err = |what: &str| ProtocolError::Param {
        at,
        what: what.to_string(),
    };
    let first = *bytes.get(at).ok_or_else(|| err("missing"))?;
    *pos += 1;
    if first & 0x80 == 0 {
        let value = (first & 0x1F) as usize;
        return Ok(match first & 0x60 {
            0x40 => Param::Local(value),
            0x60 => Param::Global(value),
            _ => {
                let mut v = (first & 0x3F) as i32;
                if first & 0x20 != 0 {
                    v |= !0x3F;
                }
                Param::Const(v)
            }
        });
    }
    let variable = first & 0x40 != 0;
    let global = first & 0x20 != 0;
    if first & 0x18 != 0 {
        return Err(err("address/handle forms are not supported"));
    }
    let size = first & 0x07;
    if !variable && (size == 4 || size == 0) {
        let rest = &bytes[*pos..];
        let end = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| err("unterminated string"))?;
        let s = String::from_utf8_lossy(&rest[..end]).into_owned();
        *pos += end + 1;
        return Ok(Param::Str(s));
    }
    let n = match size {
        1 => 1,
        2 => 2,
        3 => 4,
        _ => return Err(err(&format!("bad size code {size}"))),
    };
    let data = bytes
        .get(*pos..*pos + n)
        .ok_or_else(|| err("truncated value"))?;
    *pos += n;
    let value = match n {
        1 => data[0] as i8 as i32,
        2 => i16::from_le_bytes([data[0], data[1]]) as i32,
        _ => i32::from_le_bytes([data[0], data[1], data[2], data[3]]),
    };
    Ok(if !variable {
        Param::Const(value)
    } else {
        // Variable offsets are unsigned.
        let off = match n {
            1 => data[0] as usize,
            2 => u16::from_le_bytes([data[0], data[1]]) as usize,
            _ => u32::from_le_bytes([data[0], data[1], data[2], data[3]]) as usize,
        };
        if global {
            Param::Global(off)
        } else {
            Param::Local(off)
        }
    })
}
