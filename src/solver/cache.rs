//! On-disk cache of the large tables.
//!
//! File layout (little-endian): magic `CUBOTTBL`, format version (u32), table name (32
//! bytes, NUL-padded), entry count (u64), bits per entry (u32), symmetry count (u32),
//! payload length in bytes (u64), CRC-32 of the payload (u32), then the payload. A file
//! whose header or checksum does not match is never trusted: the table is rebuilt and
//! the caller gets a note saying why.
//!
//! Level: part of `solver`; depends on the tables' storage types. Must not depend on the
//! searches or anything above `solver`. No printing.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::tables::Nibbles;
use super::SolverError;

pub(crate) const MAGIC: &[u8; 8] = b"CUBOTTBL";
/// Bumped whenever a coordinate or table definition changes.
pub(crate) const FORMAT_VERSION: u32 = 1;
const HEADER_LEN: usize = 8 + 4 + 32 + 8 + 4 + 4 + 8 + 4;

/// The cache directory: the given one, else `$CUBOT_CACHE_DIR`, else the platform cache
/// directory + `cubot`.
pub fn cache_dir(explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("CUBOT_CACHE_DIR").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    dirs::cache_dir().map(|d| d.join("cubot"))
}

/// The file a table is cached in.
pub fn table_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.v{FORMAT_VERSION}.tbl"))
}

fn header(name: &str, entries: u64, payload: &[u8]) -> Vec<u8> {
    let mut h = Vec::with_capacity(HEADER_LEN);
    h.extend_from_slice(MAGIC);
    h.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    let mut n = [0u8; 32];
    n[..name.len().min(32)].copy_from_slice(&name.as_bytes()[..name.len().min(32)]);
    h.extend_from_slice(&n);
    h.extend_from_slice(&entries.to_le_bytes());
    h.extend_from_slice(&4u32.to_le_bytes());
    h.extend_from_slice(&16u32.to_le_bytes());
    h.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    h.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    h
}

/// Writes a table (atomically: a temporary file, then a rename).
pub(crate) fn save(path: &Path, name: &str, table: &Nibbles) -> Result<(), SolverError> {
    let io = |e: std::io::Error| SolverError::Table {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let mut payload = Vec::with_capacity(table.words.len() * 8);
    for w in &table.words {
        payload.extend_from_slice(&w.to_le_bytes());
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp).map_err(io)?;
        f.write_all(&header(name, table.len as u64, &payload))
            .map_err(io)?;
        f.write_all(&payload).map_err(io)?;
        f.sync_all().map_err(io)?;
    }
    std::fs::rename(&tmp, path).map_err(io)
}

/// Removes what a process stopped while writing `path` left: its temporary files
/// (`NAME.tmpPID`, see [`save`]) whose process has gone. Where the system cannot say which
/// processes live (no `/proc`), nothing is removed.
pub(crate) fn sweep_stale(path: &Path) {
    let (Some(dir), Some(stem)) = (path.parent(), path.file_stem()) else {
        return;
    };
    let proc_root = Path::new("/proc");
    if !proc_root.join("self").exists() {
        return;
    }
    let prefix = format!("{}.tmp", stem.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix(&prefix) else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !proc_root.join(pid).exists() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Why a cached file was not used.
#[derive(Debug)]
pub(crate) enum LoadFailure {
    Missing,
    Bad(String),
}

/// Reads a table, checking every header field and the checksum.
pub(crate) fn load(path: &Path, name: &str, entries: usize) -> Result<Nibbles, LoadFailure> {
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(LoadFailure::Missing),
        Err(e) => return Err(LoadFailure::Bad(format!("cannot open: {e}"))),
    };
    let mut h = [0u8; HEADER_LEN];
    f.read_exact(&mut h)
        .map_err(|_| LoadFailure::Bad("shorter than its header".into()))?;
    if &h[..8] != MAGIC {
        return Err(LoadFailure::Bad("not a cubot table (bad magic)".into()));
    }
    let u32_at = |o: usize| u32::from_le_bytes(h[o..o + 4].try_into().expect("4 bytes"));
    let u64_at = |o: usize| u64::from_le_bytes(h[o..o + 8].try_into().expect("8 bytes"));
    let version = u32_at(8);
    if version != FORMAT_VERSION {
        return Err(LoadFailure::Bad(format!(
            "format version {version}, this build uses {FORMAT_VERSION}"
        )));
    }
    let stored_name = String::from_utf8_lossy(&h[12..44])
        .trim_end_matches('\0')
        .to_string();
    if stored_name != name {
        return Err(LoadFailure::Bad(format!(
            "holds table {stored_name:?}, expected {name:?}"
        )));
    }
    let (n, bits, syms, plen, crc) = (u64_at(44), u32_at(52), u32_at(56), u64_at(60), u32_at(68));
    if n != entries as u64 || bits != 4 || syms != 16 {
        return Err(LoadFailure::Bad(format!(
            "parameters {n} entries / {bits} bits / {syms} symmetries, expected {entries} / 4 / 16"
        )));
    }
    let words = entries.div_ceil(16);
    if plen != (words * 8) as u64 {
        return Err(LoadFailure::Bad(format!(
            "payload of {plen} bytes, expected {}",
            words * 8
        )));
    }
    let mut table = super::tables::huge_zeroed(words);
    {
        // SAFETY: a u64 slice viewed as bytes: same memory, no alignment requirement.
        let payload: &mut [u8] =
            unsafe { std::slice::from_raw_parts_mut(table.as_mut_ptr() as *mut u8, words * 8) };
        f.read_exact(payload)
            .map_err(|_| LoadFailure::Bad("truncated".into()))?;
    }
    // SAFETY: as above, read-only.
    let payload: &[u8] =
        unsafe { std::slice::from_raw_parts(table.as_ptr() as *const u8, words * 8) };
    let mut rest = [0u8; 1];
    if f.read(&mut rest).map(|n| n > 0).unwrap_or(true) {
        return Err(LoadFailure::Bad("longer than its header says".into()));
    }
    let actual = crc32fast::hash(payload);
    if actual != crc {
        return Err(LoadFailure::Bad(format!(
            "checksum {actual:08x} does not match the stored {crc:08x}"
        )));
    }
    for w in table.iter_mut() {
        *w = u64::from_le(*w);
    }
    Ok(Nibbles {
        words: table,
        len: entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_corruption_is_detected() {
        let dir = tempfile::tempdir().expect("tempdir");
        let t = Nibbles {
            words: (0..100u64).map(|x| x * 0x0123_4567_89ab_cdef).collect(),
            len: 1600,
        };
        let p = table_path(dir.path(), "test");
        assert!(matches!(load(&p, "test", 1600), Err(LoadFailure::Missing)));
        save(&p, "test", &t).expect("save");
        assert_eq!(load(&p, "test", 1600).expect("load"), t);
        assert!(matches!(load(&p, "other", 1600), Err(LoadFailure::Bad(_))));
        assert!(matches!(load(&p, "test", 1601), Err(LoadFailure::Bad(_))));
        let mut bytes = std::fs::read(&p).expect("read");
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&p, &bytes).expect("write");
        match load(&p, "test", 1600) {
            Err(LoadFailure::Bad(r)) => assert!(r.contains("checksum"), "{r}"),
            other => panic!("corruption not detected: {other:?}"),
        }
        std::fs::write(&p, &bytes[..100]).expect("write");
        assert!(matches!(load(&p, "test", 1600), Err(LoadFailure::Bad(_))));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_dead_writers_temporary_file_is_swept_a_live_ones_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = table_path(dir.path(), "test");
        let live = p.with_extension(format!("tmp{}", std::process::id()));
        // Above any pid the kernel hands out (pid_max is at most 2^22).
        let dead = p.with_extension(format!("tmp{}", 1u32 << 23));
        let other = dir.path().join("other.tmp1");
        for f in [&live, &dead, &other] {
            std::fs::write(f, b"half").expect("write");
        }
        sweep_stale(&p);
        assert!(live.exists() && other.exists());
        assert!(!dead.exists());
    }
}
