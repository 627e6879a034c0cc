//! The READMEs are a contract: every command they show runs here, and its shown output is
//! checked.
//!
//! * A ` ```console ` block is a transcript: each `$ ` line is run (`> ` lines continue it, as
//!   a shell shows a here-document), in one scratch directory per README (so a file one
//!   command writes is there for the next), with `samples/` and a copy of `calibration/`;
//!   what follows it is the expected output, stdout and stderr together (stderr is not a
//!   terminal here, so no progress bars). `…` elides: a line of its own stands for any
//!   lines, inside a line for any text (snapbox's `...` and `[..]`).
//! * In a ` ```sh ` block each command runs and must exit as [`EXIT`] says (0 unless
//!   listed); its output is not shown, so not checked.
//! * A command that needs hardware runs on the simulator instead ([`ON_THE_SIMULATOR`]: the
//!   README's command, the one run here, and why); one that cannot run here at all is in
//!   [`NOT_RUN`] with the reason. Both lists are checked against the READMEs: an entry whose
//!   command is no longer there fails, so none is skipped silently.
//! * Every `cubot ...` the READMEs name, in blocks, in prose and in the command table, has
//!   its flags checked against `cubot ... --help`: a flag renamed in the code without the
//!   docs fails here.
//! * The `mindcub3r.toml` table's defaults are the built-in ones, and the picture's angles.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::support::{cache_dir, root};

/// The READMEs that are checked.
const FILES: [&str; 2] = ["README.md", "calibration/README.md"];

/// Commands that need hardware, run on the simulator instead: (file, the README's command,
/// the command run here).
const ON_THE_SIMULATOR: &[(&str, &str, &str)] = &[
    (
        "README.md",
        "cubot calibrate -o mycube.toml --name \"my cube\"",
        "cubot calibrate -o mycube.toml --name \"my cube\" --sim",
    ),
    (
        "README.md",
        "cubot run --port usb --profile mycube.toml",
        // "a profile the robot learned": the one here was learned from photos.
        "cubot calibrate -o robot.toml --sim && cubot run --sim --profile robot.toml",
    ),
    (
        "README.md",
        "cubot scan --robot --port /dev/rfcomm0",
        "cubot scan --robot --sim",
    ),
    (
        "README.md",
        "cubot calibrate -o mycube.toml",
        "cubot calibrate -o mycube.toml --sim",
    ),
    (
        "README.md",
        "cubot run --profile mycube.toml",
        "cubot run --sim --profile mycube.toml",
    ),
    (
        "README.md",
        "cubot save saved.json; cubot run --target-file saved.json",
        "cubot save saved.json --sim; cubot run --sim --seed 2 --target-file saved.json",
    ),
];

/// Commands that cannot run here, with the reason. Their `cubot` flags are still checked.
const NOT_RUN: &[(&str, &str, &str)] = &[
    (
        "README.md",
        "bash scripts/demo.sh",
        "installs system packages and builds the release binary; its `cubot run --sim` is the console block below it",
    ),
    (
        "README.md",
        "bash scripts/test.sh",
        "runs this test suite",
    ),
    (
        "README.md",
        "cubot scan --images photos/ --raw-out solved.json",
        "the user's own photos (scan --images runs on the sample photos in tests/it/scan.rs)",
    ),
    (
        "README.md",
        "cubot scan --images photos/",
        "the user's own photos",
    ),
    (
        "README.md",
        "cubot scan --camera 0",
        "a webcam",
    ),
    (
        "README.md",
        "echo 'KERNEL==\"hidraw*\", ATTRS{idVendor}==\"0694\", ATTRS{idProduct}==\"0005\", TAG+=\"uaccess\"' | sudo tee /etc/udev/rules.d/70-lego-ev3.rules && sudo udevadm control --reload",
        "a udev rule for a real brick (root, system files)",
    ),
    (
        "README.md",
        "bluetoothctl",
        "Bluetooth pairing with a real brick",
    ),
    (
        "README.md",
        "sudo rfcomm bind 0 AA:BB:CC:DD:EE:FF 1",
        "Bluetooth binding of a real brick",
    ),
    (
        "README.md",
        "cargo build --release --no-default-features --features cli",
        "another build of the crate (CI builds the default features)",
    ),
    (
        "README.md",
        "cargo build --release --no-default-features --features cli,serial,usb",
        "another build of the crate (CI builds the default features)",
    ),
];

/// Commands that run but are not expected to exit 0: (file, command, exit code).
const EXIT: &[(&str, &str, i32)] = &[
    (
        "README.md",
        "cubot resolve samples/realdata/cases/rcr-3x3x3-random-02-v2017.json --svg doubt.svg",
        1,
    ),
    (
        "README.md",
        "cubot robot check --sim --faults battery=6350,swap=AC",
        1,
    ),
];

/// Files a README's commands expect the user to have made before (their scan, their
/// photos' scan), made here by commands that stand for the user's: (file, name, command).
const FIXTURES: &[(&str, &str, &str)] = &[
    (
        "README.md",
        "solved.json",
        "cubot synth-scan --palette no-white --state solved --seed 1 > solved.json",
    ),
    (
        "README.md",
        "scan.json",
        "cubot synth-scan --palette no-white --seed 5 > scan.json",
    ),
];

/// One fenced block of a README.
struct Block {
    line: usize,
    lang: String,
    body: Vec<String>,
}

fn read(file: &str) -> String {
    std::fs::read_to_string(root().join(file)).expect("read the README")
}

/// The fenced code blocks of a markdown text (fences may be indented, as in a list).
fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(usize, String, String, Vec<String>)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        match open.take() {
            None => {
                if let Some(lang) = trimmed.strip_prefix("```") {
                    open = Some((
                        i + 1,
                        lang.trim().to_string(),
                        indent.to_string(),
                        Vec::new(),
                    ));
                }
            }
            Some((start, lang, ind, mut body)) => {
                if trimmed.starts_with("```") {
                    out.push(Block {
                        line: start,
                        lang,
                        body,
                    });
                } else {
                    body.push(line.strip_prefix(ind.as_str()).unwrap_or(line).to_string());
                    open = Some((start, lang, ind, body));
                }
            }
        }
    }
    out
}

/// The commands of a `sh` block: comments dropped, `\` continuations joined.
fn sh_commands(b: &Block) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in &b.body {
        let code = strip_comment(line);
        let code = code.trim_end();
        if let Some(head) = code.strip_suffix('\\') {
            cur.push_str(head.trim());
            cur.push(' ');
            continue;
        }
        cur.push_str(code.trim());
        let cmd = std::mem::take(&mut cur);
        if !cmd.trim().is_empty() {
            out.push(cmd.trim().to_string());
        }
    }
    out
}

/// A line without its `# comment` (a `#` after a space, outside quotes).
fn strip_comment(line: &str) -> String {
    let (mut single, mut double) = (false, false);
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && prev.is_whitespace() => return line[..i].to_string(),
            _ => {}
        }
        prev = c;
    }
    line.to_string()
}

/// One command of a transcript and the output shown after it.
struct Shown {
    command: String,
    output: String,
}

/// The commands of a `console` block with their shown outputs.
fn console_commands(b: &Block) -> Vec<Shown> {
    let mut out: Vec<Shown> = Vec::new();
    let mut in_command = false;
    for line in &b.body {
        if let Some(cmd) = line.strip_prefix("$ ") {
            out.push(Shown {
                command: cmd.to_string(),
                output: String::new(),
            });
            in_command = true;
        } else if let (Some(more), true, Some(last)) =
            (line.strip_prefix("> "), in_command, out.last_mut())
        {
            last.command.push('\n');
            last.command.push_str(more);
        } else if let Some(last) = out.last_mut() {
            in_command = false;
            last.output.push_str(line);
            last.output.push('\n');
        } else {
            panic!("console block line {:?} before any `$ ` command", line);
        }
    }
    out
}

/// The scratch directory of one README: samples/ linked, calibration/ copied.
fn sandbox() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("scratch directory");
    std::os::unix::fs::symlink(root().join("samples"), dir.path().join("samples")).unwrap();
    std::os::unix::fs::symlink(root().join("scripts"), dir.path().join("scripts")).unwrap();
    let cal = dir.path().join("calibration");
    std::fs::create_dir(&cal).unwrap();
    for e in std::fs::read_dir(root().join("calibration")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), cal.join(e.file_name())).unwrap();
    }
    dir
}

/// Runs one command line with bash in `dir`, `cubot` being the built binary.
fn run_line(dir: &Path, command: &str) -> (i32, String) {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_cubot"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("{command}\n"))
        .current_dir(dir)
        .env("PATH", path)
        .env("CUBOT_CACHE_DIR", cache_dir())
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .output()
        .expect("run bash");
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr);
    if !err.is_empty() {
        // Shown together as a terminal shows them; a transcript redirects `2>&1` itself.
        text.push_str(&err);
    }
    (out.status.code().unwrap_or(-1), text)
}

/// Runs a transcript's command with stdout and stderr on one pipe, in the order written.
fn run_console(dir: &Path, command: &str) -> (i32, String) {
    run_line(dir, &format!("{{ {command}\n}} 2>&1"))
}

/// `…` to snapbox's elisions: alone on a line `...`, inside a line `[..]`.
fn to_snapbox(shown: &str) -> String {
    if shown.is_empty() {
        return String::new();
    }
    shown
        .lines()
        .map(|l| {
            if l.trim() == "…" {
                "...".to_string()
            } else {
                l.replace('…', "[..]")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

fn exit_of(file: &str, command: &str) -> i32 {
    EXIT.iter()
        .find(|(f, c, _)| *f == file && *c == command)
        .map_or(0, |e| e.2)
}

/// Runs every block of `file`; returns the failures.
fn run_file(file: &str) -> Vec<String> {
    let dir = sandbox();
    let mut failures = Vec::new();
    for (f, name, cmd) in FIXTURES {
        if *f == file {
            let (code, out) = run_line(dir.path(), cmd);
            assert_eq!(code, 0, "fixture {name}: {out}");
        }
    }
    for b in blocks(&read(file)) {
        match b.lang.as_str() {
            "console" => {
                for shown in console_commands(&b) {
                    let (code, actual) = run_console(dir.path(), &shown.command);
                    let want = exit_of(file, &shown.command);
                    if code != want {
                        failures.push(format!(
                            "{file}:{}: `{}` exited {code}, the README implies {want}:\n{actual}",
                            b.line, shown.command
                        ));
                        continue;
                    }
                    let expected = to_snapbox(&shown.output);
                    if let Err(e) = snapbox::Assert::new()
                        .action(snapbox::assert::Action::Verify)
                        .try_eq(None, actual.clone().into(), expected.into())
                    {
                        failures.push(format!(
                            "{file}:{}: `{}` prints another output than the README shows:\n{e}",
                            b.line, shown.command
                        ));
                    }
                }
            }
            "sh" => {
                for cmd in sh_commands(&b) {
                    if NOT_RUN.iter().any(|(f, c, _)| *f == file && *c == cmd) {
                        continue;
                    }
                    let run = ON_THE_SIMULATOR
                        .iter()
                        .find(|(f, c, _)| *f == file && *c == cmd)
                        .map_or(cmd.as_str(), |s| s.2);
                    if !run.starts_with("cubot ") {
                        failures.push(format!(
                            "{file}:{}: `{cmd}` is not a cubot command: list it in NOT_RUN with the reason",
                            b.line
                        ));
                        continue;
                    }
                    let (code, out) = run_line(dir.path(), run);
                    let want = exit_of(file, &cmd);
                    if code != want {
                        failures.push(format!(
                            "{file}:{}: `{run}` exited {code}, not {want}:\n{out}",
                            b.line
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    failures
}

#[test]
fn readme_commands_run_and_print_what_it_shows() {
    let failures = run_file("README.md");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn calibration_readme_commands_run_and_print_what_it_shows() {
    let failures = run_file("calibration/README.md");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every command of a README's blocks, as written.
fn block_commands(file: &str) -> Vec<String> {
    let mut out = Vec::new();
    for b in blocks(&read(file)) {
        match b.lang.as_str() {
            "console" => out.extend(console_commands(&b).into_iter().map(|s| s.command)),
            "sh" => out.extend(sh_commands(&b)),
            _ => {}
        }
    }
    out
}

#[test]
fn every_command_not_run_or_run_on_the_simulator_is_still_in_its_readme() {
    for (file, cmd, why) in NOT_RUN {
        assert!(!why.is_empty());
        assert!(
            block_commands(file).iter().any(|c| c == cmd),
            "NOT_RUN lists `{cmd}`, which {file} no longer shows: remove it from the list"
        );
    }
    for (file, cmd, _) in ON_THE_SIMULATOR {
        assert!(
            block_commands(file).iter().any(|c| c == cmd),
            "ON_THE_SIMULATOR lists `{cmd}`, which {file} no longer shows"
        );
    }
    for (file, cmd, _) in EXIT {
        assert!(
            block_commands(file).iter().any(|c| c == cmd),
            "EXIT lists `{cmd}`, which {file} no longer shows"
        );
    }
}

/// `cubot WORDS... --help`, cached.
fn help(cache: &mut BTreeMap<String, Option<String>>, words: &[&str]) -> Option<String> {
    let key = words.join(" ");
    cache
        .entry(key)
        .or_insert_with(|| {
            let out = Command::new(env!("CARGO_BIN_EXE_cubot"))
                .args(words)
                .arg("--help")
                .env("COLUMNS", "300")
                .output()
                .expect("run cubot --help");
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
        })
        .clone()
}

/// Checks one `cubot ...` text: its subcommand exists and every `--flag` in it is in the
/// help of that subcommand (or, for a command with subcommands, of one of them).
fn check_flags(
    cache: &mut BTreeMap<String, Option<String>>,
    text: &str,
    problems: &mut Vec<String>,
) {
    let words: Vec<&str> = text.split_whitespace().collect();
    let Some(first) = words
        .get(1)
        .map(|w| w.trim_matches(|c| c == '`' || c == ';'))
    else {
        return;
    };
    if first.starts_with('-') || first.is_empty() || first.chars().any(|c| c.is_uppercase()) {
        return;
    }
    let mut path = vec![first];
    if help(cache, &path).is_none() {
        problems.push(format!("`{text}`: no command `cubot {first}`"));
        return;
    }
    if let Some(second) = words.get(2) {
        let second = second.trim_matches(|c| c == '`' || c == ';');
        let mut nested = path.clone();
        nested.push(second);
        if !second.starts_with('-') && help(cache, &nested).is_some() {
            path = nested;
        }
    }
    let mut text_of_help = help(cache, &path).unwrap_or_default();
    // A command with subcommands (robot, bench, tables): its flags may be any of theirs.
    if path.len() == 1 {
        let subs: Vec<String> = text_of_help
            .lines()
            .skip_while(|l| !l.starts_with("Commands:"))
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            .filter_map(|l| l.split_whitespace().next().map(str::to_string))
            .collect();
        for s in subs {
            if let Some(h) = help(cache, &[first, &s]) {
                text_of_help.push_str(&h);
            }
        }
    }
    for w in &words {
        let w = w.trim_matches(|c: char| "`;,.()\"'".contains(c));
        let Some(flag) = w.strip_prefix("--") else {
            continue;
        };
        let flag = flag.split(['=', '|']).next().unwrap_or("");
        if flag.is_empty() || !flag.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
            continue;
        }
        let needle = format!("--{flag}");
        let found = text_of_help.match_indices(&needle).any(|(i, _)| {
            let after = text_of_help[i + needle.len()..].chars().next();
            !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
        });
        if !found {
            problems.push(format!(
                "`{text}`: `cubot {}` has no flag --{flag}",
                path.join(" ")
            ));
        }
    }
}

/// Every `cubot ...` in a README: block commands, inline code in the prose, and the rows
/// of the command table (`| `validate STATE` | ... |`, flags of the row's command).
fn every_cubot_text(file: &str) -> Vec<String> {
    let text = read(file);
    let mut out: Vec<String> = block_commands(file)
        .iter()
        .flat_map(|c| {
            c.split([';', '|', '&'])
                .map(str::trim)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|c| c.starts_with("cubot "))
        .collect();
    let mut in_block = false;
    let mut heading = "";
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            continue;
        }
        if line.starts_with("## ") {
            heading = line;
        }
        // A row of the command table: the command's flags are everywhere in the row.
        if let (Some(row), "## Commands") = (line.strip_prefix("| `"), heading) {
            let cmd = row.split('`').next().unwrap_or("");
            let head = cmd.split(['|', ' ']).next().unwrap_or("");
            if !head.is_empty() && head.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
                let flags: Vec<&str> = line
                    .split(['`', ' ', ','])
                    .filter(|w| w.starts_with("--"))
                    .collect();
                out.push(format!("cubot {head} {}", flags.join(" ")));
                continue;
            }
        }
        for (k, span) in line.split('`').enumerate() {
            if k % 2 == 1 && span.starts_with("cubot ") {
                out.push(span.to_string());
            }
        }
    }
    out
}

#[test]
fn every_flag_the_readmes_name_exists() {
    let mut cache = BTreeMap::new();
    let mut problems = Vec::new();
    for file in FILES {
        for text in every_cubot_text(file) {
            check_flags(&mut cache, &text, &mut problems);
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn readmes_stay_users_guides_under_25_kb() {
    for file in FILES {
        let bytes = read(file).len();
        assert!(bytes < 25_000, "{file} is {bytes} bytes");
    }
}

/// A README value as TOML: `(−655)` → -655, `("A")` → "A", `([−655, −650])` → an array.
fn toml_value(text: &str) -> toml::Value {
    let t = text.replace('−', "-");
    toml::from_str::<toml::Table>(&format!("v = {t}"))
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .remove("v")
        .unwrap()
}

fn same(a: &toml::Value, b: &toml::Value) -> bool {
    match (a, b) {
        (toml::Value::Integer(x), toml::Value::Float(y))
        | (toml::Value::Float(y), toml::Value::Integer(x)) => (*x as f64 - y).abs() < 1e-9,
        (toml::Value::Float(x), toml::Value::Float(y)) => (x - y).abs() < 1e-9,
        (toml::Value::Array(x), toml::Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        _ => a == b,
    }
}

#[test]
fn the_robot_configuration_table_shows_the_built_in_defaults() {
    use cubot::robot::mindcub3r::model::TIMING_KEYS;
    use cubot::robot::mindcub3r::Config;
    let defaults = toml::Value::try_from(Config::default()).unwrap();
    let text = read("calibration/README.md");
    let start = text
        .find("| section | key (default) | meaning |")
        .expect("the table");
    let mut section = String::new();
    let mut checked = 0;
    for line in text[start..].lines().skip(2) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split(" | ").collect();
        let first = cells[0].trim_start_matches('|').trim().trim_matches('`');
        if !first.is_empty() {
            section = first.to_string();
        }
        let keys = cells[1];
        if section == "timings.round_trips" {
            let inside = keys.split('(').nth(1).unwrap().trim_end_matches(')');
            let values: Vec<f64> = inside.split(", ").map(|v| v.parse().unwrap()).collect();
            let table = &defaults["timings"]["round_trips"];
            for (k, v) in TIMING_KEYS.iter().zip(values) {
                assert!(
                    same(&table[k], &toml::Value::Float(v)),
                    "timings.round_trips.{k}: README {v}, built in {}",
                    table[k]
                );
                checked += 1;
            }
            continue;
        }
        // `key` (default), or several `a`, `b` (same default) pairs.
        let mut names: Vec<String> = Vec::new();
        for (k, part) in keys.split('`').enumerate() {
            if k % 2 == 1 {
                names.push(part.to_string());
                continue;
            }
            if let Some(open) = part.find('(') {
                let close = part.rfind(')').expect("a closing parenthesis");
                let value = toml_value(&part[open + 1..close]);
                for name in names.drain(..) {
                    let built_in = &defaults[section.as_str()][name.as_str()];
                    assert!(
                        same(built_in, &value),
                        "calibration/README.md says {section}.{name} defaults to {value}; built in: {built_in}"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 60, "only {checked} defaults checked");
    // The shipped file is the built-in defaults (so the table is the file's too).
    let shipped = Config::load(&root().join("calibration/mindcub3r.toml")).unwrap();
    assert_eq!(shipped, Config::default());
}

#[test]
fn the_positions_picture_shows_the_default_angles() {
    use cubot::robot::mindcub3r::Config;
    let svg = read("calibration/positions.svg").replace('−', "-");
    let c = Config::default();
    let s = &c.sensor_arm;
    let (emin, emax) = (s.edge.iter().min().unwrap(), s.edge.iter().max().unwrap());
    let (cmin, cmax) = (
        s.corner.iter().min().unwrap(),
        s.corner.iter().max().unwrap(),
    );
    for label in [
        format!("parked {}", s.parked),
        format!("clear {}", s.clear),
        format!("centre {}", s.centre),
        format!("edge {emax} … {emin}"),
        format!("corner {cmax} … {cmin}"),
        format!("corner_2x2 {}", s.corner_2x2),
        format!("away {}", c.arm.away),
        format!("clear {}", c.arm.clear),
        format!("hold {}", c.arm.hold),
        format!("tilt_apex {}", c.arm.tilt_apex),
    ] {
        assert!(svg.contains(&label), "positions.svg does not say {label:?}");
    }
    assert!(read("calibration/README.md").contains("](positions.svg)"));
}

#[test]
fn the_harness_catches_a_changed_output_and_honours_its_elisions() {
    let check = |actual: &str, shown: &str| {
        snapbox::Assert::new()
            .action(snapbox::assert::Action::Verify)
            .try_eq(None, actual.to_string().into(), to_snapbox(shown).into())
            .is_ok()
    };
    assert!(check("wrote mycube.toml\n", "wrote mycube.toml\n"));
    assert!(!check("written: mycube.toml\n", "wrote mycube.toml\n"));
    assert!(check("a\nb 12.5 s\nc\n", "a\nb … s\nc\n"));
    assert!(check("a\nx\ny\nc\n", "a\n…\nc\n"));
    assert!(!check("a\nb\n", "a\nc\n"));
    assert!(check("", ""));
    assert!(!check("unexpected\n", ""));
}
