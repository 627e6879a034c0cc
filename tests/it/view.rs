//! Integration tests: the live page (`--view`, `cubot view`), opened in a real browser
//! (headless Chromium over the DevTools protocol, `browser.rs`) during simulated runs, and
//! checked as a person would check it: the net the page shows against the cube the
//! simulator holds, the doubt's stickers framed, the progress at its end, a stop with its
//! resume command, the Stop button. The safety checks (the token, bounded streams, 100
//! connections during a run) speak HTTP directly and need no browser. Screenshots are
//! written under target/view-screenshots/, with the figures the browser measured.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::browser::{shots, Browser};
use super::stops::{names, Sim};
use super::support::cache_dir;

/// `cubot ARGS --json -q --view`, running, with the page's URL.
struct Viewed {
    child: Child,
    url: String,
    lines: Receiver<String>,
}

fn start(args: &[&str]) -> Viewed {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cubot"))
        .args(args)
        .args(["--json", "-q", "--view"])
        .env("CUBOT_CACHE_DIR", cache_dir())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start cubot");
    let out = child.stdout.take().unwrap();
    let (tx, lines) = channel();
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    let first = lines
        .recv_timeout(Duration::from_secs(60))
        .expect("a first line");
    let v: Value = serde_json::from_str(&first).expect("JSON");
    assert_eq!(v["type"], "view", "{v}");
    let url = v["url"].as_str().unwrap().to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    Viewed { child, url, lines }
}

impl Viewed {
    /// Waits for the command to end: its exit code and its JSON lines after the first.
    fn finish(mut self) -> (Option<i32>, Vec<Value>) {
        let t0 = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(t0.elapsed() < Duration::from_secs(240), "cubot never ended");
            std::thread::sleep(Duration::from_millis(20));
        };
        let lines = self
            .lines
            .try_iter()
            .filter_map(|l| serde_json::from_str(&l).ok())
            .collect();
        (status.code(), lines)
    }

    /// The address (`127.0.0.1:PORT`) and the token's path (`/TOKEN/`).
    fn parts(&self) -> (String, String) {
        let rest = self.url.trim_start_matches("http://");
        let i = rest.find('/').unwrap();
        (rest[..i].to_string(), rest[i..].to_string())
    }
}

impl Drop for Viewed {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const WAIT: Duration = Duration::from_secs(180);
const FAST: &[&str] = &["--search-ms", "300", "--solutions", "3"];

/// What the browser measured: the first state after the start, and how late each live
/// message was shown; written beside the screenshots and checked loosely (the goals,
/// 1 s and 100 ms, are figures measured here, not assertions on a shared machine).
fn latency(b: &mut Browser, name: &str) {
    let p = b.eval(
        "(() => { const l = window.cubotView.lags.slice().sort((a, b) => a - b); \
         return {first: window.cubotView.firstShown, n: l.length, max: l[l.length - 1] || 0, \
         median: l[Math.floor(l.length / 2)] || 0, p99: l[Math.floor(l.length * 0.99)] || 0, \
         worst: window.cubotView.worst}; })()",
    );
    eprintln!(
        "{name}: first state {} ms after the start; {} live messages, lateness median {} ms, \
         99th {} ms, max {} ms; worst by type {}",
        p["first"], p["n"], p["median"], p["p99"], p["max"], p["worst"]
    );
    std::fs::create_dir_all(shots()).unwrap();
    std::fs::write(shots().join(format!("{name}.json")), p.to_string()).unwrap();
    assert!(p["n"].as_u64().unwrap() > 10, "{p}");
    assert!(p["first"].as_f64().unwrap() < 5000.0, "{p}");
    assert!(p["max"].as_f64().unwrap() < 1000.0, "{p}");
}

fn attr(b: &mut Browser, selector: &str, name: &str) -> Value {
    b.eval(&format!(
        "(() => {{ const e = document.querySelector({selector:?}); return e ? e.getAttribute({name:?}) : null; }})()"
    ))
}

fn solved(s: &str) -> bool {
    super::stops::solved(s)
}

#[test]
fn the_page_follows_a_mindcub3r_run_from_each_sensor_reading_to_the_end() {
    let Some(mut b) = Browser::launch("mindcub3r run") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let sim = Sim::start(dir.path(), &["--seed", "5", "--speed", "20"]);
    let j = dir.path().join("j.jsonl");
    let v = start(
        &[
            &["run", "--port", &sim.path, "--journal", j.to_str().unwrap()],
            FAST,
        ]
        .concat(),
    );
    b.navigate(&v.url);
    b.wait_for("document.querySelector('#scan-net svg')", WAIT);
    b.wait_for(
        "document.querySelector('#phase').dataset.phase === 'done'",
        WAIT,
    );
    let (code, lines) = v.finish();
    assert_eq!(code, Some(0), "{lines:?}");
    // The net the page resolved is the simulator's cube (up to the naming of colours).
    let cube = attr(&mut b, "#resolved-net svg", "data-cube");
    assert_eq!(names(cube.as_str().unwrap()), names(&sim.initial));
    // Every sticker was placed on the scanner's net as it was read.
    assert_eq!(attr(&mut b, "#scan-net svg", "data-read"), "54");
    // The progress reached the end, and the cube as it should be now is solved.
    let done = attr(&mut b, "#runbar", "data-done");
    assert_eq!(done, attr(&mut b, "#runbar", "data-total"));
    assert!(done.as_str().unwrap().parse::<u32>().unwrap() > 10);
    let now = attr(&mut b, "#now-net svg", "data-state");
    assert!(solved(now.as_str().unwrap()), "{now}");
    assert_eq!(
        b.eval("document.querySelectorAll('#plan li.current').length"),
        0,
        "past the last action"
    );
    latency(&mut b, "run-mindcub3r");
    b.screenshot(&shots().join("run-mindcub3r.png"), 1280, false);
    b.screenshot_of(
        &shots().join("readme-run.png"),
        1100,
        "header, #scanner, #resolution, #run",
    );
    // On a phone's width nothing runs off the side.
    b.viewport(390, 844, true);
    let fits = b.eval("document.documentElement.scrollWidth <= window.innerWidth + 1");
    assert_eq!(fits, true);
    b.screenshot(&shots().join("run-mindcub3r-phone.png"), 390, true);
}

/// The cube a line simulator of `seed` starts with (as `run --sim --robot line` starts it).
fn line_cube(seed: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    Sim::start(dir.path(), &["--robot", "line", "--seed", seed])
        .initial
        .clone()
}

#[test]
fn the_page_shows_the_camera_frames_with_their_grid_and_the_net_read_from_them() {
    let Some(mut b) = Browser::launch("camera run") else {
        return;
    };
    let seed = "7";
    let truth = line_cube(seed);
    let v = start(
        &[
            &[
                "run",
                "--sim",
                "--robot",
                "line",
                "--scanner",
                "camera",
                "--seed",
                seed,
                "--speed",
                "5",
            ],
            FAST,
        ]
        .concat(),
    );
    b.navigate(&v.url);
    // A frame with its nine stickers, its pixels fetched while the run goes on.
    b.wait_for(
        "document.querySelector('#frame svg[data-loaded]') && document.querySelectorAll('#frame polygon').length === 9",
        WAIT,
    );
    b.wait_for(
        "document.querySelector('#phase').dataset.phase === 'done'",
        WAIT,
    );
    let (code, lines) = v.finish();
    assert_eq!(code, Some(0), "{lines:?}");
    let cube = attr(&mut b, "#resolved-net svg", "data-cube");
    assert_eq!(names(cube.as_str().unwrap()), names(&truth));
    assert_eq!(attr(&mut b, "#scan-net svg", "data-read"), "54");
    latency(&mut b, "run-camera");
    b.screenshot(&shots().join("run-camera.png"), 1280, false);
}

/// Line-robot seeds whose seeded misread leaves the first scan in doubt (misread.rs).
const DOUBT_SEEDS: &[&str] = &["4", "7", "10", "26", "32", "34", "36"];

#[test]
fn a_doubt_is_shown_with_its_stickers_framed_in_the_rival_cubes_colours() {
    let Some(mut b) = Browser::launch("doubt") else {
        return;
    };
    for seed in DOUBT_SEEDS {
        let dir = tempfile::tempdir().unwrap();
        let sim = Sim::start(
            dir.path(),
            &[
                "--robot", "line", "--seed", seed, "--speed", "50", "--faults", "misread",
            ],
        );
        let j = dir.path().join("j.jsonl");
        let v = start(
            &[
                &[
                    "run",
                    "--port",
                    &sim.path,
                    "--robot",
                    "line",
                    "--journal",
                    j.to_str().unwrap(),
                ],
                FAST,
            ]
            .concat(),
        );
        b.navigate(&v.url);
        let (code, lines) = v.finish();
        if code != Some(1) {
            continue; // this seed's misread did not leave a doubt today
        }
        let no = lines.last().unwrap();
        assert_eq!(no["type"], "no", "{no}");
        b.wait_for(
            "document.querySelector('#phase').dataset.phase === 'ended: no'",
            WAIT,
        );
        let doubtful = attr(&mut b, "#resolved-net svg", "data-doubtful");
        let doubtful: Vec<&str> = doubtful.as_str().unwrap().split(',').collect();
        assert_eq!(
            doubtful.len(),
            no["doubt"]["stickers"].as_array().unwrap().len()
        );
        assert_eq!(
            b.eval("document.querySelectorAll('#resolved-net .cell.doubt rect.frame').length"),
            doubtful.len(),
        );
        // Each framed sticker names the rival cube's colour there, which differs.
        let rivals = b.eval(
            "[...document.querySelectorAll('#resolved-net .cell.doubt')].map(g => [g.dataset.letter, g.dataset.rival])",
        );
        for pair in rivals.as_array().unwrap() {
            assert_ne!(pair[0], pair[1], "{rivals}");
            assert_eq!(pair[1].as_str().unwrap().len(), 1, "{rivals}");
        }
        let verdict = b.eval("document.querySelector('#verdict').textContent");
        assert!(verdict.as_str().unwrap().contains("in doubt"), "{verdict}");
        b.screenshot(&shots().join("doubt.png"), 1280, false);
        b.screenshot_of(
            &shots().join("readme-doubt.png"),
            1100,
            "#scanner, #resolution",
        );
        return;
    }
    panic!("no seed of {DOUBT_SEEDS:?} left the first scan in doubt");
}

/// The page's stop panel against the command's own `interrupted` line.
fn check_stop_panel(b: &mut Browser, lines: &[Value]) {
    let i = lines
        .iter()
        .find(|l| l["type"] == "interrupted")
        .expect("an interrupted line");
    b.wait_for("!document.querySelector('#stopped').hidden", WAIT);
    let resume = b.eval("document.querySelector('#resume').textContent");
    assert_eq!(resume, i["resume"]);
    let states =
        b.eval("[...document.querySelectorAll('#stop-nets svg')].map(s => s.dataset.state)");
    let states: Vec<&str> = states
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    let stated: Vec<&str> = match i["candidates"].as_array().unwrap().as_slice() {
        [] => vec![i["state"].as_str().unwrap()],
        c => c.iter().map(|s| s.as_str().unwrap()).collect(),
    };
    assert_eq!(states, stated);
    assert_eq!(
        b.eval("document.querySelector('#phase').dataset.phase"),
        "stopped"
    );
}

#[test]
fn a_stall_stops_the_run_and_the_page_shows_where_the_cube_is_and_the_resume_command() {
    let Some(mut b) = Browser::launch("stall") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let sim = Sim::start(
        dir.path(),
        &["--seed", "39", "--speed", "100", "--faults", "stall@p12"],
    );
    let j = dir.path().join("j.jsonl");
    let v = start(&[
        "run",
        "--port",
        &sim.path,
        "--journal",
        j.to_str().unwrap(),
        "--search-ms",
        "0",
        "--solutions",
        "3",
    ]);
    b.navigate(&v.url);
    let (code, lines) = v.finish();
    assert_eq!(code, Some(2), "{lines:?}");
    check_stop_panel(&mut b, &lines);
    let motors = b.eval("document.querySelector('#stop-motors').textContent");
    assert!(motors.as_str().unwrap().contains("motors"), "{motors}");
    b.screenshot(&shots().join("stall.png"), 1280, false);
    b.screenshot_of(
        &shots().join("readme-stop.png"),
        1100,
        "header, #stopped, #scanner, #resolution",
    );
}

/// A simulated run slow enough to be stopped part way, as the Stop button tests stop it.
const STOPPABLE_RUN: &[&str] = &[
    "run",
    "--sim",
    "--seed",
    "11",
    "--speed",
    "5",
    "--search-ms",
    "0",
    "--solutions",
    "3",
];

#[test]
fn the_stop_button_does_what_ctrl_c_does() {
    let Some(mut b) = Browser::launch("stop button") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j.jsonl");
    let v = start(&[STOPPABLE_RUN, &["--journal", j.to_str().unwrap()]].concat());
    b.navigate(&v.url);
    b.wait_for("+document.querySelector('#runbar').dataset.done >= 3", WAIT);
    let t0 = Instant::now();
    b.eval("document.querySelector('#stop').click()");
    let (code, lines) = v.finish();
    eprintln!(
        "stop button: the run ended {:?} after the click",
        t0.elapsed()
    );
    assert_eq!(code, Some(2), "{lines:?}");
    check_stop_panel(&mut b, &lines);
    b.screenshot(&shots().join("stop-button.png"), 1280, false);
}

#[test]
fn history_replays_a_past_run() {
    let Some(mut b) = Browser::launch("history") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("run-1.jsonl");
    let o = super::support::cubot(&[
        "run",
        "--sim",
        "--seed",
        "4",
        "--speed",
        "5000",
        "--search-ms",
        "0",
        "--solutions",
        "3",
        "-q",
        "--journal",
        j.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let v = start(&["view", j.to_str().unwrap()]);
    b.navigate(&v.url);
    b.wait_for("!document.querySelector('#summary').hidden", WAIT);
    let now = attr(&mut b, "#now-net svg", "data-state");
    assert!(solved(now.as_str().unwrap()), "{now}");
    let listed = b.wait_for("document.querySelector('#journals').textContent", WAIT);
    assert!(listed.as_str().unwrap().contains("run-1.jsonl"), "{listed}");
    b.screenshot(&shots().join("history.png"), 1280, false);
}

/// One HTTP request over a fresh connection: the status code and the body read within a
/// second.
fn http(addr: &str, request: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while let Ok(n) = s.read(&mut chunk) {
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let text = String::from_utf8_lossy(&buf).to_string();
    let code = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, text)
}

fn get(addr: &str, path: &str) -> (u16, String) {
    http(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
    )
}

#[test]
fn every_request_needs_the_token_streams_are_bounded_and_100_connections_leave_the_run_alone() {
    let args = [
        "run",
        "--sim",
        "--seed",
        "3",
        "--speed",
        "50",
        "--search-ms",
        "0",
        "--solutions",
        "3",
    ];
    let plain = super::support::cubot(&[&args[..], &["--json", "-q"]].concat());
    assert!(plain.status.success());
    let want: Value =
        serde_json::from_str(super::support::stdout(&plain).lines().last().unwrap()).unwrap();
    let v = start(&args);
    let (addr, prefix) = v.parts();
    assert_eq!(get(&addr, &prefix).0, 200);
    assert_eq!(get(&addr, "/").0, 403);
    assert_eq!(get(&addr, "/00000000000000000000000000000000/").0, 403);
    assert_eq!(
        get(&addr, &format!("{}events", &prefix[..prefix.len() - 2])).0,
        403
    );
    // A page another site serves cannot stop the run: it does not know the token.
    let stop = format!(
        "POST /stop HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    assert_eq!(http(&addr, &stop).0, 403);
    // Another host name (DNS rebinding) is refused even with the token.
    let (code, _) = http(
        &addr,
        &format!("GET {prefix} HTTP/1.1\r\nHost: evil.example:80\r\nConnection: close\r\n\r\n"),
    );
    assert_eq!(code, 403);
    // Eight event streams at most.
    let streams: Vec<TcpStream> = (0..8)
        .map(|_| {
            let mut s = TcpStream::connect(&addr).unwrap();
            s.write_all(format!("GET {prefix}events HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
                .unwrap();
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut head = [0u8; 15];
            s.read_exact(&mut head).unwrap();
            assert_eq!(&head, b"HTTP/1.1 200 OK");
            s
        })
        .collect();
    assert_eq!(get(&addr, &format!("{prefix}events")).0, 503);
    drop(streams);
    // 100 connections opened and dropped while the run goes on: some at once, some half
    // way through a request, some after their stream began.
    for k in 0..100 {
        let mut s = TcpStream::connect(&addr).unwrap();
        match k % 4 {
            0 => {}
            1 => {
                let _ = s.write_all(b"GET /");
            }
            2 => {
                let _ = s.write_all(
                    format!("GET {prefix}events HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes(),
                );
                let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
                let _ = s.read(&mut [0u8; 64]);
            }
            _ => {
                let _ = s
                    .write_all(format!("GET {prefix} HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes());
            }
        }
    }
    let (code, lines) = v.finish();
    assert_eq!(code, Some(0));
    let got = lines.last().unwrap();
    for k in [
        "first_scan",
        "solution",
        "final_state",
        "reached_target",
        "actions",
    ] {
        assert_eq!(got[k], want[k], "{k}");
    }
}

/// The page's Stop, pressed over HTTP as the page does, stops the run like Ctrl-C, and
/// the run says it was the page's (not Ctrl-C's: a user who did not press a key is not
/// told they did).
#[test]
fn a_stop_from_the_page_is_said_to_be_the_pages() {
    let v = start(STOPPABLE_RUN);
    let (addr, prefix) = v.parts();
    let t0 = Instant::now();
    loop {
        let l = v
            .lines
            .recv_timeout(Duration::from_secs(120))
            .expect("a planned line");
        if serde_json::from_str::<Value>(&l).unwrap()["type"] == "planned" {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(120), "no plan");
    }
    let stop = format!(
        "POST {prefix}stop HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    assert_eq!(http(&addr, &stop).0, 200);
    let (code, lines) = v.finish();
    assert_eq!(code, Some(2), "{lines:?}");
    let i = lines
        .iter()
        .find(|l| l["type"] == "interrupted")
        .expect("an interrupted line");
    assert_eq!(
        i["reason"], "stopped by the user: Stop on the live page",
        "{i}"
    );
}

#[test]
fn a_camera_rig_is_aligned_and_saved_from_the_page() {
    let Some(mut b) = Browser::launch("calibrate-camera") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let rig = dir.path().join("rig.toml");
    let v = start(&[
        "calibrate-camera",
        "--sim",
        "--seed",
        "3",
        "-o",
        rig.to_str().unwrap(),
    ]);
    b.navigate(&v.url);
    b.wait_for("!document.querySelector('#save').hidden", WAIT);
    b.wait_for(
        "document.querySelector('#frame svg[data-grid=\"complete\"][data-loaded]')",
        WAIT,
    );
    b.screenshot(&shots().join("calibrate-camera.png"), 1280, false);
    b.eval("document.querySelector('#save').click()");
    let (code, lines) = v.finish();
    assert_eq!(code, Some(0), "{lines:?}");
    let text = std::fs::read_to_string(&rig).expect("the rig was written");
    assert!(text.contains("stickers"), "{text}");
    let faces = lines
        .iter()
        .filter(|l| l["type"] == "calibrated-face")
        .count();
    assert_eq!(faces, 6, "{lines:?}");
}

#[test]
fn calibrating_a_no_white_cube_shows_its_six_colour_classes() {
    let Some(mut b) = Browser::launch("calibrate") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("nowhite.toml");
    let v = start(&[
        "calibrate",
        "--sim",
        "--palette",
        "no-white",
        "--speed",
        "20",
        "-o",
        profile.to_str().unwrap(),
    ]);
    b.navigate(&v.url);
    b.wait_for("!document.querySelector('#calibration').hidden", WAIT);
    let (code, lines) = v.finish();
    assert_eq!(code, Some(0), "{lines:?}");
    assert!(profile.is_file());
    assert_eq!(attr(&mut b, "#calibration-plot svg", "data-classes"), "6");
    assert_eq!(attr(&mut b, "#scan-net svg", "data-read"), "54");
    // A solved cube: each face one colour on the page's resolved net.
    let cube = attr(&mut b, "#resolved-net svg", "data-cube");
    assert!(solved(cube.as_str().unwrap()), "{cube}");
    b.screenshot(&shots().join("calibrate-no-white.png"), 1280, false);
    b.screenshot_of(
        &shots().join("readme-calibrate.png"),
        1100,
        "#scanner, #resolution, #calibration",
    );
}

/// `cubot ARGS --view` (no `-q`) with stdout and stderr read line by line as they come.
struct Piped {
    child: Child,
    out: Receiver<String>,
    err: Receiver<String>,
}

fn lines_of(r: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for l in BufReader::new(r).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    rx
}

fn piped(args: &[&str]) -> Piped {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cubot"))
        .args(args)
        .arg("--view")
        .env("CUBOT_CACHE_DIR", cache_dir())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start cubot");
    let out = lines_of(child.stdout.take().unwrap());
    let err = lines_of(child.stderr.take().unwrap());
    Piped { child, out, err }
}

impl Piped {
    /// The stderr lines up to the first that contains `what`.
    fn err_until(&self, what: &str) -> Vec<String> {
        let mut seen = Vec::new();
        while let Ok(l) = self.err.recv_timeout(WAIT) {
            let hit = l.contains(what);
            seen.push(l);
            if hit {
                return seen;
            }
        }
        panic!("no stderr line with {what:?}; saw {seen:?}");
    }

    /// The exit code, waited for at most `wait`.
    fn code(&mut self, wait: Duration) -> Option<i32> {
        let t0 = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code();
            }
            assert!(t0.elapsed() < wait, "cubot did not leave within {wait:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Piped {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn addr_and_prefix(url: &str) -> (String, String) {
    let rest = url.trim_start_matches("http://");
    let i = rest.find('/').unwrap();
    (rest[..i].to_string(), rest[i..].to_string())
}

/// Reads an event stream until a message of type `end`: every message's type.
fn read_stream_to_the_end(addr: &str, prefix: &str) -> Vec<String> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(format!("GET {prefix}events HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .unwrap();
    let mut types = Vec::new();
    for l in BufReader::new(s).lines() {
        let l = l.expect("the stream goes on until the end");
        if let Some(data) = l.strip_prefix("data: ") {
            let v: Value = serde_json::from_str(data).unwrap();
            types.push(v["type"].as_str().unwrap().to_string());
            if v["type"] == "end" {
                return types;
            }
        }
    }
    panic!("the stream closed before the end: {types:?}");
}

#[test]
fn a_page_opened_after_a_short_command_ended_still_gets_all_of_it_then_the_command_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("nw.toml");
    let mut c = piped(&[
        "calibrate",
        "--sim",
        "--palette",
        "no-white",
        "--speed",
        "500",
        "--json",
        "-o",
        profile.to_str().unwrap(),
    ]);
    let seen = c.err_until("the page stays up for 60 s");
    let url = seen
        .iter()
        .find_map(|l| l.strip_prefix("view: http://"))
        .map(|u| format!("http://{u}"))
        .expect("the URL on stderr");
    // The job is over (its profile is written) and the page is still served.
    assert!(profile.is_file());
    let (addr, prefix) = addr_and_prefix(&url);
    assert_eq!(get(&addr, &prefix).0, 200);
    // Fetching the page alone is not seeing it: the command waits for the event stream.
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        c.child.try_wait().unwrap().is_none(),
        "left before a page read the end"
    );
    let types = read_stream_to_the_end(&addr, &prefix);
    assert_eq!(types[0], "hello");
    assert!(types.iter().any(|t| t == "calibration"), "{types:?}");
    // It leaves once the end was delivered (well before the 60 s), with the job's code.
    assert_eq!(c.code(Duration::from_secs(30)), Some(0));
    // --json: stdout has the command's JSON lines only, nothing about the page staying up.
    let out: Vec<String> = c.out.try_iter().collect();
    assert!(
        out.iter().all(|l| serde_json::from_str::<Value>(l).is_ok()),
        "{out:?}"
    );
    assert!(!out.iter().any(|l| l.contains("stays up")), "{out:?}");
}

#[test]
fn ctrl_c_while_an_unopened_page_stays_up_leaves_with_the_commands_own_code() {
    // An empty tray: the run fails (exit 2) before anything turns.
    let run = [
        "run",
        "--sim",
        "--faults",
        "empty",
        "--speed",
        "500",
        "--search-ms",
        "0",
    ];
    let mut c = piped(&run);
    let seen = c.err_until("the page stays up for 60 s");
    assert!(
        seen.iter()
            .any(|l| l.starts_with("error: the scan sees no cube")),
        "the command's own error comes first: {seen:?}"
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(c.child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    assert_eq!(c.code(Duration::from_secs(30)), Some(2), "not 130");
    c.err_until("view: left (Ctrl-C)");

    // --view-linger bounds the wait; -q says nothing about it.
    let mut c = piped(&[&run[..], &["--view-linger", "1", "-q"]].concat());
    assert_eq!(c.code(Duration::from_secs(50)), Some(2));
    let err: Vec<String> = c.err.try_iter().collect();
    assert!(!err.iter().any(|l| l.contains("stays up")), "{err:?}");
}

#[test]
fn a_command_that_fails_before_its_work_does_not_keep_its_page_up() {
    // No such camera: the error says all there is; the page has nothing more to show.
    let dir = tempfile::tempdir().unwrap();
    let rig = dir.path().join("rig.toml");
    let mut c = piped(&[
        "calibrate-camera",
        "--camera",
        "97",
        "-o",
        rig.to_str().unwrap(),
    ]);
    assert_eq!(c.code(Duration::from_secs(20)), Some(2));
    let err: Vec<String> = c.err.try_iter().collect();
    assert!(
        err.iter().any(|l| l.starts_with("error: camera 97")),
        "{err:?}"
    );
    assert!(!err.iter().any(|l| l.contains("stays up")), "{err:?}");
    // The camera is opened before the page is served: no address for a page of nothing.
    assert!(!err.iter().any(|l| l.starts_with("view:")), "{err:?}");
}

#[test]
fn ctrl_c_while_a_camera_rig_waits_for_save_exits_130_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let rig = dir.path().join("simrig.toml");
    let c = piped(&["calibrate-camera", "--sim", "-o", rig.to_str().unwrap()]);
    let seen = c.err_until("view: http://");
    let url = format!(
        "http://{}",
        seen.last().unwrap().split("http://").nth(1).unwrap()
    );
    let (addr, prefix) = addr_and_prefix(&url);
    // A camera frame on the stream: the alignment waits for Save.
    let mut s = TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(format!("GET {prefix}events HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .unwrap();
    let framed = BufReader::new(s)
        .lines()
        .map_while(Result::ok)
        .any(|l| l.contains(r#""type":"camera-frame""#));
    assert!(framed);
    let mut c = c;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(c.child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    assert_eq!(c.code(Duration::from_secs(30)), Some(130));
    let err: Vec<String> = c.err.try_iter().collect();
    assert!(
        err.iter()
            .any(|l| l.contains("before Save: no rig written")),
        "{err:?}"
    );
    assert!(
        !err.iter().any(|l| l.contains("the robot stops")),
        "{err:?}"
    );
    assert!(!rig.exists());
}

#[test]
fn view_refuses_a_file_that_is_not_a_journal_and_lists_only_journals() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A scan and a profile given to `cubot view`.
    let scan = super::support::root().join("samples/realdata/cases/rcr-3x3x3-random-01.json");
    let profile = super::support::root().join("calibration/standard.toml");
    for (file, what) in [
        (&scan, "not a one-line JSON record"),
        (&profile, "not a one-line JSON record"),
    ] {
        let o = super::support::cubot(&["view", file.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2));
        let err = super::support::stderr(&o);
        assert!(
            err.contains("is not a run journal") && err.contains(what),
            "{err}"
        );
    }
    // A journal, and a `resolve --json` output saved as .jsonl beside it.
    let o = super::support::cubot(&[
        "run",
        "--sim",
        "--seed",
        "4",
        "--speed",
        "5000",
        "--search-ms",
        "0",
        "-q",
        "--journal",
        d.join("run-1.jsonl").to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let o = super::support::cubot(&[
        "resolve",
        scan.to_str().unwrap(),
        "--profile",
        profile.to_str().unwrap(),
        "--json",
    ]);
    std::fs::write(d.join("resolved.jsonl"), &o.stdout).unwrap();
    let o = super::support::cubot(&["view", d.join("resolved.jsonl").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        super::support::stderr(&o).contains("is not a run journal: its first line is a"),
        "{}",
        super::support::stderr(&o)
    );
    let v = start(&["view", d.join("run-1.jsonl").to_str().unwrap()]);
    let (addr, prefix) = v.parts();
    let (code, body) = get(&addr, &format!("{prefix}journals"));
    assert_eq!(code, 200);
    let json = &body[body.find("\r\n\r\n").unwrap() + 4..];
    let listed: Value = serde_json::from_str(json).unwrap();
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["run-1.jsonl"]);
    assert_eq!(
        get(&addr, &format!("{prefix}journal/resolved.jsonl")).0,
        404
    );
}

/// `cubot view latest` replays the newest journal of the cache directory, and says so
/// plainly when there is none yet.
#[test]
fn view_latest_takes_the_newest_journal() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().to_str().unwrap();
    let o = super::support::cubot(&["view", "latest", "--cache-dir", cache]);
    assert_eq!(o.status.code(), Some(2));
    let err = super::support::stderr(&o);
    assert!(
        err.contains("latest: no journal in") && err.contains("yet"),
        "{err}"
    );
    let journals = dir.path().join("journals");
    std::fs::create_dir_all(&journals).unwrap();
    let o = super::support::cubot(&[
        "run",
        "--sim",
        "--seed",
        "4",
        "--speed",
        "5000",
        "--search-ms",
        "0",
        "-q",
        "--journal",
        journals.join("run-1.jsonl").to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let v = start(&["view", "latest", "--cache-dir", cache]);
    let (addr, prefix) = v.parts();
    let (code, body) = get(&addr, &format!("{prefix}journals"));
    assert_eq!(code, 200);
    assert!(body.contains("run-1.jsonl"), "{body}");
}
