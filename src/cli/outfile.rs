//! Files a command writes, checked before any work: one rule for every output path
//! (`-o`, `--svg`, `--raw-out`, `save FILE`, `--journal`, `--write`).
//!
//! Level: `cli`. Depends on [`crate::input`] (which tells the kinds of cubot's own files
//! apart) and [`super::common::check_writable`].
//!
//! An existing file is overwritten only if its content is of the kind the command writes
//! (a colour profile over a colour profile, an SVG over an SVG, a saved target over a saved
//! target). Anything else (a picture, a scan under a name meant for a saved state, a file
//! that cannot be told) is refused with exit 2 before the robot moves or a long
//! computation starts, naming what the file is: a mistyped name must not cost the user a
//! photo or walkthrough data. An empty file is taken as free (a name made with `touch` or
//! `mktemp`).

use crate::input::{kind_of, FileKind};
use std::path::Path;

/// What a command writes to an output path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writes {
    /// One of cubot's own files, told apart by [`kind_of`].
    File(FileKind),
    /// An SVG picture.
    Svg,
}

impl Writes {
    fn name(self) -> String {
        match self {
            Writes::File(FileKind::Scan) => "a raw scan".into(),
            Writes::File(FileKind::Target) => "a saved state".into(),
            Writes::File(k) => format!("a {k}"),
            Writes::Svg => "an SVG picture".into(),
        }
    }
}

/// What an existing file holds, in words for a message (`a PNG image`, `a scan`), or `None`
/// when it is of the kind `writes` (or empty), so that it may be overwritten.
fn what_is_in_the_way(bytes: &[u8], writes: Writes) -> Option<String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    const MAGIC: [(&[u8], &str); 8] = [
        (b"\x89PNG", "a PNG image"),
        (b"\xff\xd8\xff", "a JPEG image"),
        (b"GIF8", "a GIF image"),
        (b"%PDF", "a PDF document"),
        (b"PK\x03\x04", "a zip archive"),
        (b"\x7fELF", "a program"),
        (b"BM", "a BMP image"),
        (b"\x1f\x8b", "a gzip archive"),
    ];
    if let Some((_, name)) = MAGIC.iter().find(|(m, _)| bytes.starts_with(m)) {
        return Some((*name).into());
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Some("a binary file".into());
    };
    let svg = text.contains("<svg");
    let found = kind_of(text);
    match (writes, found) {
        (Writes::Svg, _) if svg => None,
        (Writes::File(w), Some(f)) if w == f => None,
        // `--write` edits a robot configuration in place, keeping what is there: any
        // TOML table it cannot place (a configuration of a few settings) will do.
        (Writes::File(FileKind::RobotConfig), None) if text.parse::<toml::Table>().is_ok() => None,
        (_, Some(FileKind::Scan)) => Some("a raw scan".into()),
        (_, Some(FileKind::Target)) => Some("a saved state".into()),
        (_, Some(f)) => Some(format!("a {f}")),
        (_, None) if svg => Some("an SVG picture".into()),
        (_, None) => Some("a file of another kind".into()),
    }
}

/// Checks an output path before any work: [`super::common::check_writable`], and an
/// existing file is refused unless it holds what the command writes (see the module
/// docs). `what` names the flag or argument (`-o`, `--svg`, `save`).
pub fn check_output(path: &Path, what: &str, writes: Writes) -> anyhow::Result<()> {
    if path.is_file() {
        // The head tells every kind apart but a whole JSON or TOML one; those are small.
        let bytes = std::fs::read(path).unwrap_or_default();
        if let Some(found) = what_is_in_the_way(&bytes, writes) {
            anyhow::bail!(
                "will not overwrite {}: it is {found} (this command writes {}); give another name or remove it",
                path.display(),
                writes.name()
            );
        }
    }
    super::common::check_writable(path, what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_overwritten_only_by_its_own_kind() {
        let profile = b"version = 1\n[[colors]]\nface = \"U\"\n";
        let scan = br#"{"facelets": []}"#;
        let saved = br#"{"saved": "x", "state": "y"}"#;
        let svg = b"<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>";
        let png = b"\x89PNG\r\n\x1a\n....";
        let p = Writes::File(FileKind::Profile);
        assert_eq!(what_is_in_the_way(profile, p), None);
        assert_eq!(what_is_in_the_way(b"", p), None);
        assert_eq!(what_is_in_the_way(png, p).as_deref(), Some("a PNG image"));
        assert_eq!(what_is_in_the_way(scan, p).as_deref(), Some("a raw scan"));
        assert_eq!(what_is_in_the_way(svg, Writes::Svg), None);
        assert_eq!(
            what_is_in_the_way(profile, Writes::Svg).as_deref(),
            Some("a colour profile")
        );
        let t = Writes::File(FileKind::Target);
        assert_eq!(what_is_in_the_way(saved, t), None);
        assert_eq!(what_is_in_the_way(scan, t).as_deref(), Some("a raw scan"));
        assert_eq!(
            what_is_in_the_way(b"notes\n", t).as_deref(),
            Some("a file of another kind")
        );
        let r = Writes::File(FileKind::RobotConfig);
        assert_eq!(what_is_in_the_way(b"version = 1\n", r), None);
        assert_eq!(
            what_is_in_the_way(profile, r).as_deref(),
            Some("a colour profile")
        );
    }
}
