//! Reading a file the user named, bounded: the one way every level reads its input files
//! (scans, state lists, journals, saved states, profiles, rigs, robot configurations).
//!
//! Level: the bottom, beside `cube`: it imports nothing from the crate, so every level
//! (`color`, `scan`, `robot`, `job`, `cli`) can use it; `cube` itself stays pure.
//!
//! A name that is not a regular file (a directory, `/dev/zero`, a FIFO, a socket) is refused
//! before it is opened, and a file is read through a cap one byte above its kind's limit, so
//! an endless or enormous input costs at most that limit in memory: 16 MiB for data
//! (scans, states, journals, saved states), 1 MiB for TOML settings.

use std::io::Read;
use std::path::{Path, PathBuf};

/// What an input file is meant to hold; decides its size limit and names it in errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A raw colour scan (JSON).
    Scan,
    /// States or move sequences, one a line.
    States,
    /// A run journal (JSON Lines).
    Journal,
    /// A target: a saved state (JSON) or a state on its first line.
    Target,
    /// A colour profile (TOML).
    Profile,
    /// A camera rig (TOML).
    Rig,
    /// A robot configuration (TOML).
    RobotConfig,
}

/// 16 MiB: the limit for data files.
pub const DATA_LIMIT: u64 = 16 << 20;
/// 1 MiB: the limit for TOML settings.
pub const TOML_LIMIT: u64 = 1 << 20;

impl FileKind {
    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            FileKind::Scan => "scan",
            FileKind::States => "states file",
            FileKind::Journal => "journal",
            FileKind::Target => "target file",
            FileKind::Profile => "profile",
            FileKind::Rig => "camera rig",
            FileKind::RobotConfig => "robot configuration",
        }
    }

    /// The largest file of this kind that is read, in bytes.
    pub fn limit(self) -> u64 {
        match self {
            FileKind::Profile | FileKind::Rig | FileKind::RobotConfig => TOML_LIMIT,
            _ => DATA_LIMIT,
        }
    }
}

impl std::fmt::Display for FileKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why an input file was not read.
#[derive(Debug, thiserror::Error)]
pub enum InputFileError {
    #[error("cannot read {kind} {}: {source}", path.display())]
    Io {
        path: PathBuf,
        kind: FileKind,
        source: std::io::Error,
    },
    #[error("{kind} {} is {what}, not a regular file", path.display())]
    NotAFile {
        path: PathBuf,
        kind: FileKind,
        what: &'static str,
    },
    #[error("{kind} {} is larger than the {} MiB limit for a {kind}", path.display(), limit >> 20)]
    TooLarge {
        path: PathBuf,
        kind: FileKind,
        limit: u64,
    },
    #[error("{kind} {} is not UTF-8 text", path.display())]
    NotText { path: PathBuf, kind: FileKind },
}

/// What a file system entry is, in words, when it is not a regular file.
fn not_regular(t: &std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    if t.is_file() {
        None
    } else if t.is_dir() {
        Some("a directory")
    } else if t.is_char_device() {
        Some("a character device")
    } else if t.is_block_device() {
        Some("a block device")
    } else if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_socket() {
        Some("a socket")
    } else {
        Some("not a file")
    }
}

/// Reads `path` as text: a regular file of at most `kind`'s limit.
pub fn read_text(path: &Path, kind: FileKind) -> Result<String, InputFileError> {
    let io = |source| InputFileError::Io {
        path: path.to_path_buf(),
        kind,
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if let Some(what) = not_regular(&meta.file_type()) {
        return Err(InputFileError::NotAFile {
            path: path.to_path_buf(),
            kind,
            what,
        });
    }
    let too_large = || InputFileError::TooLarge {
        path: path.to_path_buf(),
        kind,
        limit: kind.limit(),
    };
    if meta.len() > kind.limit() {
        return Err(too_large());
    }
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(kind.limit() + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > kind.limit() {
        return Err(too_large());
    }
    String::from_utf8(bytes).map_err(|_| InputFileError::NotText {
        path: path.to_path_buf(),
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_directories_and_large_files_are_refused() {
        let e = read_text(Path::new("/dev/zero"), FileKind::Scan).unwrap_err();
        assert!(matches!(
            e,
            InputFileError::NotAFile {
                what: "a character device",
                ..
            }
        ));
        assert!(
            e.to_string()
                .contains("scan /dev/zero is a character device"),
            "{e}"
        );
        let e = read_text(Path::new("/"), FileKind::Journal).unwrap_err();
        assert!(matches!(
            e,
            InputFileError::NotAFile {
                what: "a directory",
                ..
            }
        ));
        let dir = std::env::temp_dir().join(format!("cubot-file-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let big = dir.join("big.toml");
        std::fs::write(&big, vec![b'#'; (TOML_LIMIT + 1) as usize]).unwrap();
        let e = read_text(&big, FileKind::Profile).unwrap_err();
        assert!(matches!(
            e,
            InputFileError::TooLarge {
                limit: TOML_LIMIT,
                ..
            }
        ));
        assert!(e.to_string().contains("1 MiB limit for a profile"), "{e}");
        let ok = dir.join("ok.toml");
        std::fs::write(&ok, "version = 1\n").unwrap();
        assert_eq!(read_text(&ok, FileKind::Profile).unwrap(), "version = 1\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
