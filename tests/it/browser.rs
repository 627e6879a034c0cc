//! A headless Chromium (Debian's `chromium`, installed by scripts/setup.sh) driven over the
//! Chrome DevTools Protocol: a WebSocket to the browser, one page target, and the few
//! commands the view's tests need (navigate, evaluate, set the viewport, screenshot).
//! Nothing is downloaded; without Chromium the tests that need it say so and skip.

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tungstenite::{Message, WebSocket};

/// The browser, if one is installed.
pub fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
    })
}

/// A headless browser with one page open.
pub struct Browser {
    child: Child,
    ws: WebSocket<TcpStream>,
    session: String,
    next: u64,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts Chromium, or says why the test skips and returns `None`.
    pub fn launch(test: &str) -> Option<Browser> {
        let Some(exe) = chromium() else {
            eprintln!("{test}: skipped: no Chromium on PATH (scripts/setup.sh installs Debian's chromium)");
            return None;
        };
        let profile = tempfile::tempdir().expect("a profile directory");
        let mut cmd = Command::new(exe);
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--remote-debugging-port=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
        // Its own process group, so that dropping it ends every process it started.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().expect("start chromium");
        let err = child.stderr.take().expect("stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if let Some(i) = line.find("ws://") {
                    let _ = tx.send(line[i..].trim().to_string());
                }
            }
        });
        let url = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("chromium names its DevTools address");
        let addr = url
            .trim_start_matches("ws://")
            .split('/')
            .next()
            .unwrap()
            .to_string();
        let stream = TcpStream::connect(&addr).expect("connect to DevTools");
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let (ws, _) =
            tungstenite::client::client(url.as_str(), stream).expect("DevTools handshake");
        let mut b = Browser {
            child,
            ws,
            session: String::new(),
            next: 0,
            _profile: profile,
        };
        let target = b.call("Target.createTarget", json!({"url": "about:blank"}), false);
        let id = target["targetId"].as_str().unwrap().to_string();
        let attached = b.call(
            "Target.attachToTarget",
            json!({"targetId": id, "flatten": true}),
            false,
        );
        b.session = attached["sessionId"].as_str().unwrap().to_string();
        b.viewport(1280, 900, false);
        Some(b)
    }

    /// Sends a command and waits for its answer (events in between are dropped).
    fn call(&mut self, method: &str, params: Value, on_page: bool) -> Value {
        self.next += 1;
        let id = self.next;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if on_page {
            msg["sessionId"] = json!(self.session);
        }
        self.ws
            .send(Message::text(msg.to_string()))
            .expect("send to DevTools");
        loop {
            let m = self.ws.read().expect("a DevTools message");
            let Message::Text(t) = m else { continue };
            let v: Value = serde_json::from_str(t.as_str()).expect("DevTools JSON");
            if v["id"] == json!(id) {
                assert!(v["error"].is_null(), "{method}: {}", v["error"]);
                return v["result"].clone();
            }
        }
    }

    pub fn viewport(&mut self, width: u32, height: u32, mobile: bool) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}),
            true,
        );
    }

    pub fn navigate(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url}), true);
    }

    /// The value of a script expression (awaited when it is a promise).
    pub fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
            true,
        );
        if !r["exceptionDetails"].is_null() {
            panic!("{expr}: {}", r["exceptionDetails"]);
        }
        r["result"]["value"].clone()
    }

    /// Waits until `expr` is truthy (checked every 20 ms) and returns its value.
    pub fn wait_for(&mut self, expr: &str, within: Duration) -> Value {
        let t0 = Instant::now();
        loop {
            let v = self.eval(&format!(
                "(() => {{ try {{ return {expr}; }} catch (e) {{ return null; }} }})()"
            ));
            let truthy = !(v.is_null() || v == json!(false) || v == json!(0) || v == json!(""));
            if truthy {
                return v;
            }
            assert!(
                t0.elapsed() < within,
                "the page never showed {expr} within {within:?}; it shows: {}",
                self.eval("document.body.innerText.slice(0, 3000)")
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Lays the page out `width` wide and as high as it is.
    fn whole_page(&mut self, width: u32, mobile: bool) {
        self.viewport(width, 900, mobile);
        let h = self
            .eval("Math.ceil(document.documentElement.scrollHeight)")
            .as_u64()
            .unwrap_or(900) as u32;
        self.viewport(width, h.clamp(300, 8000), mobile);
    }

    /// Captures a PNG (`params` of `Page.captureScreenshot`) to `path`.
    fn capture(&mut self, path: &Path, params: Value) {
        let shot = self.call("Page.captureScreenshot", params, true);
        let png = base64(shot["data"].as_str().expect("screenshot data"));
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(path, png).expect("write the screenshot");
        self.viewport(1280, 900, false);
    }

    /// A PNG of the whole page, `width` wide, written to `path`.
    pub fn screenshot(&mut self, path: &Path, width: u32, mobile: bool) {
        self.whole_page(width, mobile);
        self.capture(path, json!({"format": "png"}));
    }

    /// A PNG of the part of the page the elements `selector` matches cover, the page laid
    /// out `width` wide (the pictures in the README).
    pub fn screenshot_of(&mut self, path: &Path, width: u32, selector: &str) {
        self.whole_page(width, false);
        let clip = self.eval(&format!(
            "(() => {{ const rs = [...document.querySelectorAll({selector:?})].filter(e => !e.hidden).map(e => e.getBoundingClientRect()); \
             const x = Math.min(...rs.map(r => r.left)) - 8, y = Math.min(...rs.map(r => r.top)) - 8; \
             return {{x: Math.max(0, x), y: Math.max(0, y), width: Math.max(...rs.map(r => r.right)) - x + 8, \
                     height: Math.max(...rs.map(r => r.bottom)) - y + 8, scale: 1}}; }})()"
        ));
        self.capture(path, json!({"format": "png", "clip": clip}));
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.ws.close(None);
        // SAFETY: signals the process group this test started (its id is the child's).
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

/// Standard base64 to bytes.
fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let digits: Vec<u8> = text.bytes().filter_map(value).collect();
    digits
        .chunks(4)
        .flat_map(|c| {
            let n = c
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, &d)| n | (d as u32) << (18 - 6 * i));
            let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
            bytes.into_iter().take(c.len().saturating_sub(1))
        })
        .collect()
}

/// Where the tests write their screenshots (test output, under target/).
pub fn shots() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .map(|t| t.join("view-screenshots"))
        .unwrap_or_else(|| PathBuf::from("target/view-screenshots"))
}

#[test]
fn base64_decodes() {
    assert_eq!(base64("aGVsbG8="), b"hello");
    assert_eq!(base64("aGk="), b"hi");
    assert_eq!(base64("YWJj"), b"abc");
}
