//! Files a command writes: an existing file is overwritten only when it holds what the
//! command writes; anything else is refused with exit 2 before any work, and left as it was.

use crate::support::{cubot, stderr, stdout};

/// The head of a PNG image: what a mistyped output name most often points at.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

fn file(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_str().unwrap().to_string()
}

/// Runs `args`; checks it was refused over `path` naming `found`, with the file untouched.
fn refused(args: &[&str], path: &str, found: &str) {
    let before = std::fs::read(path).unwrap();
    let o = cubot(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    let want = format!("will not overwrite {path}: it is {found} (this command writes");
    assert!(stderr(&o).contains(&want), "{args:?}: {}", stderr(&o));
    // Before any work: nothing scanned, nothing on stdout.
    assert!(!stderr(&o).contains("scanning"), "{args:?}: {}", stderr(&o));
    assert!(stdout(&o).is_empty(), "{args:?}: {}", stdout(&o));
    assert_eq!(
        std::fs::read(path).unwrap(),
        before,
        "{args:?} changed {path}"
    );
}

#[test]
fn an_output_over_a_file_of_another_kind_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let png = file(&dir, "photo.png", PNG);
    refused(&["calibrate", "--sim", "-o", &png], &png, "a PNG image");
    refused(&["show", "solved", "--svg", &png], &png, "a PNG image");
    refused(&["save", &png, "--sim"], &png, "a PNG image");
    // A raw scan (walkthrough data) under the name given to `save`.
    let raw = dir.path().join("raw.json");
    let raw = raw.to_str().unwrap();
    let prof = dir.path().join("p.toml");
    let o = cubot(&[
        "calibrate",
        "--sim",
        "-o",
        prof.to_str().unwrap(),
        "--raw-out",
        raw,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    refused(&["save", raw, "--sim"], raw, "a raw scan");
    // A colour profile is not an SVG picture, nor a saved state.
    let prof = prof.to_str().unwrap();
    refused(&["show", "solved", "--svg", prof], prof, "a colour profile");
    refused(&["save", prof, "--sim"], prof, "a colour profile");
}

#[test]
fn an_output_over_a_file_of_its_own_kind_is_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("net.svg");
    let svg = svg.to_str().unwrap();
    let saved = dir.path().join("s.json");
    let saved = saved.to_str().unwrap();
    let prof = dir.path().join("p.toml");
    let prof = prof.to_str().unwrap();
    // Twice each: the second run writes over the first one's file. An empty file is free.
    std::fs::write(saved, "").unwrap();
    for _ in 0..2 {
        for args in [
            vec!["show", "solved", "--svg", svg],
            vec!["save", saved, "--sim", "-q"],
            vec!["calibrate", "--sim", "-q", "-o", prof],
        ] {
            let o = cubot(&args);
            assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        }
    }
    assert!(std::fs::read_to_string(svg).unwrap().contains("<svg"));
    assert!(std::fs::read_to_string(saved)
        .unwrap()
        .contains("\"state\""));
    assert!(std::fs::read_to_string(prof)
        .unwrap()
        .contains("[[colors]]"));
}
