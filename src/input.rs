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
//!
//! ## One kind of file, one flag
//!
//! A scan, a colour profile, a camera rig and a robot configuration are each checked to be
//! that kind when read: a file that is plainly another of these kinds (by the keys only that
//! kind has, [`kind_of`]) is refused naming what it is and the flag that takes it, before
//! anything is parsed, and so before a robot moves:
//!
//! | Kind | Flag | Told apart by |
//! |------|------|---------------|
//! | raw scan (JSON) | the positional `SCAN` of `resolve` and `calibrate` | a `facelets` list |
//! | colour profile (TOML) | `--profile` | a `colors` table list |
//! | camera rig (TOML) | `--rig` | `faces`, `size` or `sample_fill`, no `colors` |
//! | robot configuration (TOML) | `--robot-config` | a section `ports`, `motors`, `arm`, `turntable`, `sensor_arm`, `scan`, `timeouts` or `timings` |

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
            FileKind::Profile => "colour profile",
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

impl FileKind {
    /// How a user names a file of this kind on the command line.
    pub fn flag(self) -> &'static str {
        match self {
            FileKind::Scan => "the SCAN argument of `cubot resolve` or `cubot calibrate`",
            FileKind::States => "@FILE or -",
            FileKind::Journal => "--resume or --journal",
            FileKind::Target => "--target-file or `cubot restore FILE`",
            FileKind::Profile => "--profile",
            FileKind::Rig => "--rig",
            FileKind::RobotConfig => "--robot-config",
        }
    }
}

/// Which of the kinds a scan, a profile, a rig or a robot configuration `text` plainly is,
/// by the keys only that kind has (see [One kind of file, one flag](self#one-kind-of-file-one-flag));
/// `None` when it is none of them or could be more than one.
pub fn kind_of(text: &str) -> Option<FileKind> {
    // A run journal: JSON Lines opening with its start record, or with the line a run
    // writes before it scans (alone when nothing turned).
    let first = text.lines().next().unwrap_or("");
    if let Ok(serde_json::Value::Object(m)) = serde_json::from_str::<serde_json::Value>(first) {
        let journal = match m.get("type").and_then(|t| t.as_str()) {
            Some("start") => m.contains_key("first_scan"),
            Some("begun") => m.contains_key("created"),
            _ => false,
        };
        if journal {
            return Some(FileKind::Journal);
        }
    }
    if let Ok(serde_json::Value::Object(m)) = serde_json::from_str::<serde_json::Value>(text) {
        if m.contains_key("facelets") {
            return Some(FileKind::Scan);
        }
        // A state saved by `cubot save`.
        return (m.contains_key("saved") && m.contains_key("state")).then_some(FileKind::Target);
    }
    if let Ok(serde_json::Value::Object(_)) = serde_json::from_str::<serde_json::Value>(first) {
        return None;
    }
    let table: toml::Table = text.parse().ok()?;
    let has = |k: &str| table.contains_key(k);
    let profile = has("colors");
    let rig = !profile && (has("faces") || has("size") || has("sample_fill"));
    let robot = [
        "ports",
        "motors",
        "arm",
        "turntable",
        "sensor_arm",
        "scan",
        "timeouts",
        "timings",
    ]
    .iter()
    .any(|k| has(k));
    match (profile, rig, robot) {
        (true, false, false) => Some(FileKind::Profile),
        (false, true, false) => Some(FileKind::Rig),
        (false, false, true) => Some(FileKind::RobotConfig),
        _ => None,
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
    /// `error` is said in the message (in words) and is not a `source`: a chain printed
    /// by the caller would say it twice.
    #[error("cannot read {kind} {}{}: {}", path.display(), given(*kind), io_words(error))]
    Io {
        path: PathBuf,
        kind: FileKind,
        error: std::io::Error,
    },
    #[error("{kind} {} is {what}, not a regular file{}", path.display(), given(*kind))]
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
    #[error("{kind} {} is not UTF-8 text{}", path.display(), binary_hint(*found))]
    NotText {
        path: PathBuf,
        kind: FileKind,
        /// What the file's first bytes say it is, when they say (`PNG image`).
        found: Option<&'static str>,
    },
    /// Nothing but white space (a file of states says so itself: it may hold comments).
    #[error("{kind} {} is empty{}", path.display(), given(*kind))]
    Empty { path: PathBuf, kind: FileKind },
    #[error("{} is a {found}, not a {kind}: a {found} goes with {}, a {kind} with {}", path.display(), found.flag(), kind.flag())]
    WrongKind {
        path: PathBuf,
        kind: FileKind,
        found: FileKind,
    },
}

/// Which flag a file of `kind` came with, where one flag takes it: " (given with --profile)".
fn given(kind: FileKind) -> String {
    match kind {
        FileKind::Profile | FileKind::Rig | FileKind::RobotConfig | FileKind::Target => {
            format!(" (given with {})", kind.flag())
        }
        _ => String::new(),
    }
}

/// An I/O error in words, without the operating system's error number.
fn io_words(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => {
            let said = e.to_string();
            match said.find(" (os error ") {
                Some(i) => said[..i].to_string(),
                None => said,
            }
        }
    }
}

/// What a binary file is by its first bytes: the images and archives a user may pass by
/// mistake.
fn sniff(bytes: &[u8]) -> Option<&'static str> {
    let magic: [(&[u8], &str); 6] = [
        (b"\x89PNG", "PNG image"),
        (b"\xFF\xD8\xFF", "JPEG image"),
        (b"BM", "BMP image"),
        (b"GIF8", "GIF image"),
        (b"PK\x03\x04", "zip archive"),
        (b"\x1F\x8B", "gzip archive"),
    ];
    magic
        .iter()
        .find(|(m, _)| bytes.starts_with(m))
        .map(|&(_, what)| what)
}

/// What to do with a binary file given where text was expected.
fn binary_hint(found: Option<&str>) -> String {
    match found {
        Some(what) if what.ends_with("image") => format!(
            ": it is a {what}; photos of the faces are read by `cubot scan --images DIR` (six photos U.png .. B.png), which writes a raw scan with --raw-out"
        ),
        Some(what) => format!(": it is a {what}"),
        None => String::new(),
    }
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

/// Reads `path` as text: a regular file of at most `kind`'s limit; `-` is standard input
/// (a pipe, as `cubot synth-scan | cubot resolve -`), bounded the same way.
pub fn read_text(path: &Path, kind: FileKind) -> Result<String, InputFileError> {
    let io = |error| InputFileError::Io {
        path: path.to_path_buf(),
        kind,
        error,
    };
    let too_large = || InputFileError::TooLarge {
        path: path.to_path_buf(),
        kind,
        limit: kind.limit(),
    };
    let mut bytes = Vec::new();
    if path == Path::new("-") {
        std::io::stdin()
            .lock()
            .take(kind.limit() + 1)
            .read_to_end(&mut bytes)
            .map_err(io)?;
    } else {
        let meta = std::fs::metadata(path).map_err(io)?;
        if let Some(what) = not_regular(&meta.file_type()) {
            return Err(InputFileError::NotAFile {
                path: path.to_path_buf(),
                kind,
                what,
            });
        }
        let file = std::fs::File::open(path).map_err(io)?;
        if meta.len() > kind.limit() {
            // A large photo is said to be one, as a small one is.
            let mut head = Vec::new();
            let _ = (&file).take(16).read_to_end(&mut head);
            return Err(match sniff(&head) {
                Some(found) => InputFileError::NotText {
                    path: path.to_path_buf(),
                    kind,
                    found: Some(found),
                },
                None => too_large(),
            });
        }
        file.take(kind.limit() + 1)
            .read_to_end(&mut bytes)
            .map_err(io)?;
    }
    if bytes.len() as u64 > kind.limit() {
        return Err(too_large());
    }
    let text = String::from_utf8(bytes).map_err(|e| InputFileError::NotText {
        path: path.to_path_buf(),
        kind,
        found: sniff(e.as_bytes()),
    })?;
    if text.trim().is_empty() && kind != FileKind::States {
        return Err(InputFileError::Empty {
            path: path.to_path_buf(),
            kind,
        });
    }
    // Every kind is checked; a file of states may also be one saved state (a target).
    let fits =
        |found: FileKind| found == kind || (kind == FileKind::States && found == FileKind::Target);
    if let Some(found) = kind_of(&text).filter(|&f| !fits(f)) {
        return Err(InputFileError::WrongKind {
            path: path.to_path_buf(),
            kind,
            found,
        });
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_told_apart_by_their_own_keys() {
        let cases = [
            (
                "version = 1\n[[colors]]\nface = \"U\"",
                Some(FileKind::Profile),
            ),
            ("version = 1\nsize = 3", Some(FileKind::Rig)),
            ("version = 1\n[faces.U]\nrotate = 0", Some(FileKind::Rig)),
            (
                "version = 1\n[ports]\narm = \"A\"",
                Some(FileKind::RobotConfig),
            ),
            (
                "version = 1\n[timings]\ntilt = 0.7",
                Some(FileKind::RobotConfig),
            ),
            ("{\"size\": 3, \"facelets\": []}", Some(FileKind::Scan)),
            ("version = 1", None),
            ("not toml at all [", None),
            ("{\"type\": \"start\"}", None),
            (
                "{\"type\":\"start\",\"first_scan\":\"UUU\"}\n{\"type\":\"step\"}\n",
                Some(FileKind::Journal),
            ),
            (
                "{\"version\": 1, \"saved\": \"2026\", \"state\": \"UUU\"}",
                Some(FileKind::Target),
            ),
        ];
        for (text, want) in cases {
            assert_eq!(kind_of(text), want, "{text}");
        }
    }

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
        assert!(
            e.to_string().contains("1 MiB limit for a colour profile"),
            "{e}"
        );
        // A file of another kind says what it is and which flag takes it.
        let rig = dir.join("rig.toml");
        std::fs::write(&rig, "version = 1\nsize = 3\n[faces.U]\nrotate = 90\n").unwrap();
        let e = read_text(&rig, FileKind::Profile).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("rig.toml is a camera rig, not a colour profile: a camera rig goes with --rig, a colour profile with --profile"),
            "{e}"
        );
        assert!(read_text(&rig, FileKind::Rig).is_ok());
        let ok = dir.join("ok.toml");
        std::fs::write(&ok, "version = 1\n").unwrap();
        assert_eq!(read_text(&ok, FileKind::Profile).unwrap(), "version = 1\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// A TOML settings file's parse error in one line, in words: "line 3 (`hold = 1x` in
/// `[arm]`), column 9: expected newline", or "missing `version`" for a key the file lacks (no position: the parser points
/// at the whole file, which says nothing), instead of the parser's multi-line excerpt.
pub fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let message = plain_types(&e.message().trim().replace('\n', "; "));
    if let Some(field) = message.strip_prefix("missing field ") {
        return format!("missing {field}");
    }
    match e.span() {
        Some(span) if span.start < text.len() && span != (0..text.len()) => {
            let before = &text[..span.start];
            let line = before.matches('\n').count() + 1;
            let start = before.rfind('\n').map_or(0, |i| i + 1);
            let column = before.len() - start + 1;
            let said: String = text[start..]
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .chars()
                .take(60)
                .collect();
            // The table the line is in, as an unknown key is looked for there.
            let table = before
                .lines()
                .rev()
                .map(str::trim)
                .find(|l| l.starts_with('[') && !said.starts_with('['))
                .and_then(|l| l.split('#').next())
                .map(|h| format!(" in `{}`", h.trim()))
                .unwrap_or_default();
            format!("line {line} (`{said}`{table}), column {column}: {message}")
        }
        _ => message,
    }
}

/// A serde message in a user's words: `expected i8` says which numbers fit, a quoted
/// number that it is a string.
pub fn plain_types(msg: &str) -> String {
    let said = [
        ("expected i8", "expected a whole number from -128 to 127"),
        ("expected u8", "expected a whole number from 0 to 255"),
        ("expected i32", "expected a whole number"),
        ("expected u32", "expected a whole number ≥ 0"),
        ("expected u64", "expected a whole number ≥ 0"),
        ("expected f64", "expected a number"),
    ]
    .iter()
    .fold(msg.to_string(), |m, (a, b)| m.replace(a, b));
    // A string where a number goes.
    let Some((value, wanted)) = said
        .strip_prefix("invalid type: string \"")
        .and_then(|rest| rest.split_once("\", expected "))
        .filter(|(_, wanted)| wanted.contains("number"))
    else {
        return said;
    };
    if value.trim().parse::<f64>().is_err() {
        // `hold = abc`: said as such, not as types.
        format!("\"{value}\" is not a number ({wanted} is wanted here)")
    } else if said.contains("without quotes") {
        said
    } else {
        // `hold = "100"`: a number in quotes is a string to TOML.
        format!("{said} (a number is written without quotes)")
    }
}

#[cfg(test)]
mod toml_tests {
    #[test]
    fn a_quoted_number_is_said_to_be_one() {
        let said = super::plain_types("invalid type: string \"100\", expected i32");
        assert_eq!(
            said,
            "invalid type: string \"100\", expected a whole number (a number is written without quotes)"
        );
        assert_eq!(super::plain_types(&said), said);
        assert_eq!(
            super::plain_types("invalid type: string \"abc\", expected i32"),
            "\"abc\" is not a number (a whole number is wanted here)"
        );
    }

    #[test]
    fn a_toml_error_is_one_line_with_its_place() {
        let text = "version = 1\n[arm]\nhold = 1x\n";
        let e = toml::from_str::<toml::Table>(text).unwrap_err();
        let said = super::toml_error(text, &e);
        assert!(
            said.starts_with("line 3 (`hold = 1x` in `[arm]`), column "),
            "{said}"
        );
        assert!(!said.contains('\n') && !said.contains('|'), "{said}");

        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct V {
            version: u32,
        }
        let text = "# a comment\na = 1\n";
        let e = toml::from_str::<V>(text).unwrap_err();
        assert_eq!(super::toml_error(text, &e), "missing `version`");
    }
}
