//! The shape of `src/`, checked: the module levels of `lib.rs` hold, no modules import each
//! other in a circle at any level, and nothing reads a path outside the installed program.
//!
//! Imports are read as text: every `crate::…`, `super::…` and `self::…` path in a file's
//! code (comments and `#[cfg(test)]` modules left out) is resolved to the module it names.
//! Two modules are compared at the first level where their paths part: `crate::robot::ev3`
//! using `crate::robot::link::Link` is an arrow `ev3 -> link` inside `robot`. A name that a
//! parent `mod.rs` re-exports (`pub use child::Name`) counts as an arrow to that child.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::support::root;

/// Which top-level modules each top-level module may use.
const LEVELS: &[(&str, &[&str])] = &[
    ("cube", &[]),
    ("input", &[]),
    ("solver", &["cube", "input"]),
    ("color", &["cube", "input"]),
    ("scan", &["cube", "input", "color"]),
    ("robot", &["cube", "input", "solver", "color"]),
    (
        "job",
        &["cube", "input", "solver", "color", "scan", "robot"],
    ),
    (
        "view",
        &["cube", "input", "solver", "color", "scan", "robot", "job"],
    ),
    (
        "cli",
        &[
            "cube", "input", "solver", "color", "scan", "robot", "job", "view",
        ],
    ),
];

struct Module {
    /// Module path below `crate`, e.g. `["robot", "ev3", "driver"]`.
    path: Vec<String>,
    /// `mod.rs` (or `lib.rs`): its children live in its folder.
    is_dir: bool,
    /// The code, without comments and without `#[cfg(test)]` items.
    code: String,
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read src")
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file up to its first `#[cfg(test)]`, with `//` comments removed.
fn code_of(text: &str) -> String {
    let mut code = String::new();
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") {
            break;
        }
        let line = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        code.push_str(line);
        code.push('\n');
    }
    code
}

fn modules() -> Vec<Module> {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .into_iter()
        .filter(|f| f.file_name().is_some_and(|n| n != "main.rs"))
        .map(|f| {
            let rel = f.strip_prefix(&src).expect("below src");
            let mut path: Vec<String> = rel
                .iter()
                .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
                .collect();
            let last = path.last().cloned().unwrap_or_default();
            let is_dir = last == "mod" || last == "lib";
            if is_dir {
                path.pop();
            }
            let text = std::fs::read_to_string(&f).expect("read a source file");
            Module {
                path,
                is_dir,
                code: code_of(&text),
            }
        })
        .collect()
}

/// Every path written as `crate::a::b`, `super::a` or `self::a` in `code`, including the
/// members of `{…}` groups of a `use`, made absolute from the module `at`.
fn paths_in(code: &str, at: &Module) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    for start in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(i) = code[from..].find(start) {
            let i = from + i;
            from = i + start.len();
            if i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_') {
                continue;
            }
            let mut base: Vec<String> = match start {
                "crate::" => Vec::new(),
                "self::" => at.path.clone(),
                _ => {
                    // `super` of a file `a/b.rs` is `a`; of `a/b/mod.rs` it is `a` too.
                    let mut p = at.path.clone();
                    p.pop();
                    p
                }
            };
            let mut rest = &code[from..];
            while let Some(r) = rest.strip_prefix("super::") {
                base.pop();
                rest = r;
            }
            collect_tail(rest, base, &mut out);
        }
    }
    out
}

/// Reads `a::b::{c, d::e}` at the start of `rest` onto `base`, pushing every full path.
fn collect_tail(rest: &str, mut base: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut rest = rest;
    loop {
        let ident: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if ident.is_empty() {
            if let Some(group) = rest.strip_prefix('{') {
                let end = matching_brace(group);
                for part in split_top(&group[..end]) {
                    collect_tail(part.trim_start(), base.clone(), out);
                }
            } else {
                out.push(base);
            }
            return;
        }
        rest = &rest[ident.len()..];
        base.push(ident);
        match rest.strip_prefix("::") {
            Some(r) => rest = r,
            None => {
                out.push(base);
                return;
            }
        }
    }
}

fn matching_brace(s: &str) -> usize {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return i,
            '}' => depth -= 1,
            _ => {}
        }
    }
    s.len()
}

fn split_top(s: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut last) = (Vec::new(), 0usize, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&s[last..i]);
                last = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[last..]);
    parts
}

/// The arrows: (folder path, from child, to child), each once.
fn arrows(mods: &[Module]) -> BTreeSet<(Vec<String>, String, String)> {
    let by_path: BTreeMap<&[String], &Module> =
        mods.iter().map(|m| (m.path.as_slice(), m)).collect();
    let is_module = |p: &[String]| by_path.contains_key(p);
    // Names a folder module re-exports from one of its children: (folder, name) -> child.
    let mut reexports: BTreeMap<(Vec<String>, String), String> = BTreeMap::new();
    for m in mods.iter().filter(|m| m.is_dir) {
        for stmt in m.code.split(';') {
            let Some(i) = stmt.find("pub use ") else {
                continue;
            };
            let mut tail = Vec::new();
            collect_tail(stmt[i + 8..].trim_start(), Vec::new(), &mut tail);
            for p in tail {
                let first = p.first().map(String::as_str).unwrap_or("self");
                let p: Vec<String> = if first == "self" { p[1..].to_vec() } else { p };
                if p.len() >= 2 {
                    let child = p[0].clone();
                    let name = p.last().cloned().unwrap_or_default();
                    reexports.insert((m.path.clone(), name), child);
                }
            }
        }
    }
    let mut out = BTreeSet::new();
    for m in mods {
        for p in paths_in(&m.code, m) {
            let common = m.path.iter().zip(&p).take_while(|(a, b)| a == b).count();
            if common >= m.path.len() || common >= p.len() {
                continue; // a module using its own children, or itself
            }
            let folder = m.path[..common].to_vec();
            let from = m.path[common].clone();
            let mut child_path = folder.clone();
            child_path.push(p[common].clone());
            let to = if is_module(&child_path) {
                p[common].clone()
            } else if let Some(c) = reexports.get(&(folder.clone(), p[common].clone())) {
                c.clone()
            } else {
                continue; // an item of the folder's own module, or not ours
            };
            if from != to {
                out.insert((folder, from, to));
            }
        }
    }
    out
}

#[test]
fn top_level_modules_use_only_the_levels_below_them() {
    let mods = modules();
    let mut wrong = Vec::new();
    for (folder, from, to) in arrows(&mods) {
        if !folder.is_empty() {
            continue;
        }
        let Some((_, allowed)) = LEVELS.iter().find(|(m, _)| *m == from) else {
            wrong.push(format!("{from} is not in the table of levels"));
            continue;
        };
        if !allowed.contains(&to.as_str()) {
            wrong.push(format!("{from} uses {to}"));
        }
    }
    assert!(wrong.is_empty(), "modules out of level: {wrong:?}");
}

#[test]
fn no_import_circles_at_any_level() {
    let mods = modules();
    let mut graphs: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (folder, from, to) in arrows(&mods) {
        graphs
            .entry(folder)
            .or_default()
            .entry(from)
            .or_default()
            .insert(to);
    }
    let mut circles = Vec::new();
    for (folder, g) in &graphs {
        if let Some(c) = find_cycle(g) {
            circles.push(format!("crate::{}: {}", folder.join("::"), c.join(" -> ")));
        }
    }
    assert!(circles.is_empty(), "import circles: {circles:#?}");
}

/// One cycle of `g`, if any, as the list of its nodes with the first repeated at the end.
fn find_cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            match state.get(m.as_str()).copied().unwrap_or(0) {
                1 => {
                    let i = stack.iter().position(|s| s == m).unwrap_or(0);
                    let mut c = stack[i..].to_vec();
                    c.push(m.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(m, g, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, g, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn the_program_reads_no_path_fixed_at_build_time() {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read a source file");
        for (i, line) in text.lines().enumerate() {
            if line.contains("CARGO_MANIFEST_DIR") || line.contains("../shared") {
                found.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "build-time or outside paths in src: {found:#?}"
    );
}

#[test]
fn the_checker_sees_a_circle_when_there_is_one() {
    let m = |path: &[&str], code: &str| Module {
        path: path.iter().map(|s| s.to_string()).collect(),
        is_dir: false,
        code: code.to_string(),
    };
    let mods = vec![
        m(&["a", "x"], "use super::y::Y;"),
        m(&["a", "y"], "use crate::a::{x::X, z};"),
        m(&["a", "z"], ""),
    ];
    let arrows = arrows(&mods);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (_, from, to) in &arrows {
        g.entry(from.clone()).or_default().insert(to.clone());
    }
    assert!(arrows.contains(&(vec!["a".into()], "y".into(), "z".into())));
    assert_eq!(
        find_cycle(&g),
        Some(vec!["x".to_string(), "y".to_string(), "x".to_string()])
    );
}
