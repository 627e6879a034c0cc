//! The live view (feature `view`): one local page that shows what a command sees and
//! does while it runs: the scanner (camera frames with the sticker grid and sampled
//! colours, sensor readings placed on the net as they arrive, re-reads marked), the
//! resolution (the net, doubtful stickers framed in the rival cube's colours, the a*b*
//! classes), the run (phase, plan, the current action, predicted against measured time,
//! the cube as it should be now), a stop (where the cube is, the resume command; a Stop
//! button), calibration (the classes; Save for a camera rig) and history (past journals
//! replayed).
//!
//! ## Design
//!
//! ```text
//!  job thread ── RunEvent ──▶ cli closure ──▶ View::event ──(JSON, stamped)──▶ Hub ─┐
//!                  │                              │ camera frames: newest-only slot  │
//!                  └──▶ terminal (unchanged)      └──▶ frame thread (≤ 8/s, JPEG) ──▶┤
//!                                                                                   ▼
//!   browser ◀── Server-Sent Events ── one thread per page (≤ 8) ◀── bounded queue per page
//! ```
//!
//! * **Crates.** HTTP is `tiny_http` (a small synchronous server: four small
//!   dependencies, no async runtime, a few seconds of build; axum or hyper would bring
//!   tokio for one local page). Events go to the page as Server-Sent Events, which the
//!   browser's `EventSource` reads and reconnects by itself; no WebSocket is needed for a
//!   stream in one direction (Stop and Save are plain POSTs).
//! * **Endpoints**, all under `/TOKEN/`: the page (`''`, `view.js`, `view.css`), `events`
//!   (the stream), `frame/ID` (a camera frame, JPEG), `journals` and `journal/NAME`
//!   (history), `stop` and `save` (POST). Any other path, or a wrong token, gets 403.
//! * **Safety.** The token is 128 bits from the operating system's random source; the
//!   server binds 127.0.0.1 on a free port unless another address is given; on loopback a
//!   request naming another host is refused (DNS rebinding). The page loads nothing from
//!   elsewhere (a strict Content-Security-Policy) and is read-only apart from Stop (which
//!   sets the flag Ctrl-C sets) and Save.
//! * **Bounds.** At most [`hub::MAX_STREAMS`] event streams; each page has a queue of
//!   [`hub::QUEUE`] messages and starts over from the replay when it falls behind; the log
//!   a late page is replayed is bounded ([`hub::LOG`]) and keeps only the newest of
//!   superseded kinds (progress, the cube after each action, frames); camera frames are
//!   encoded off the job's thread at most [`FRAMES_PER_SECOND`] a second (the newest
//!   waits, older ones are dropped) and [`hub::FRAMES_KEPT`] are kept. The job's thread
//!   only serialises an event and pushes it: it never waits for a page.
//! * **Assets** are compiled in (`include_str!`): hand-written HTML, CSS and script that
//!   draw SVG; no network, no build step.
//!
//! Every message is a JSON object with `type` (a [`RunEvent`]'s, or one of the command's
//! own: `hello`, `phase`, `stopped`, `summary`, `end`, `note`, `calibration`) and `t`, the
//! Unix time in milliseconds when it was published, from which the page measures how late
//! it shows each one.
//!
//! Level: between `job` and `cli`: may use every module but `cli`; nothing below `cli`
//! knows it exists but through the [`RunEvent`]s it is given. No printing.

pub mod history;
pub mod hub;
mod server;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use rand::RngCore;
use serde_json::{json, Value};

use crate::job::report::FrameImage;
use crate::job::RunEvent;

use hub::{Hub, Keep};

/// Camera frames sent to the pages per second at most.
pub const FRAMES_PER_SECOND: u32 = 8;

/// Why the view could not start.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error("cannot serve the view on {addr}: {why}")]
    Bind { addr: SocketAddr, why: String },
    #[error("no random token for the view: {0}")]
    Random(String),
}

/// Why a listening socket could not be had, in a user's words (the operating system's
/// own when it is none of the usual).
fn bind_words(e: &(dyn std::error::Error + 'static)) -> String {
    use std::io::ErrorKind;
    let Some(io) = e.downcast_ref::<std::io::Error>() else {
        return e.to_string();
    };
    match io.kind() {
        ErrorKind::AddrNotAvailable => "that address is not one of this computer's (--view-addr 127.0.0.1:PORT for this computer, 0.0.0.0:PORT for every network)".into(),
        ErrorKind::AddrInUse => "that port is taken by another program (another cubot with --view?); choose another port, or 0 for any free one".into(),
        ErrorKind::PermissionDenied => "ports under 1024 need root; choose one from 1024 up (e.g. 8080), or 0 for any free one".into(),
        _ => io.to_string(),
    }
}

/// What a view serves.
#[derive(Clone, Debug)]
pub struct ViewOptions {
    /// Where to listen (port 0: a free one).
    pub addr: SocketAddr,
    /// What the page is about (the command).
    pub title: String,
    /// The flag the Stop button sets (the one Ctrl-C sets); `None`: no Stop button.
    pub stop: Option<Arc<AtomicBool>>,
    /// Set with `stop` by the Stop button only, so that the command can say who stopped
    /// it (the page or Ctrl-C).
    pub stop_pressed: Option<Arc<AtomicBool>>,
    /// The flag the Save button sets; `None`: no Save button.
    pub save: Option<Arc<AtomicBool>>,
    /// The journals directory the history lists.
    pub journals: Option<PathBuf>,
    /// Robot seconds per wall second of the robot (a simulator's speed; 1 for a robot).
    pub time_scale: f64,
}

impl Default for ViewOptions {
    fn default() -> Self {
        ViewOptions {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            title: "cubot".into(),
            stop: None,
            stop_pressed: None,
            save: None,
            journals: None,
            time_scale: 1.0,
        }
    }
}

/// A camera frame waiting to be encoded and sent.
struct PendingFrame {
    meta: Value,
    image: FrameImage,
}

/// The newest camera frame not yet sent, and whether the view has ended.
type FrameSlot = (Mutex<(Option<PendingFrame>, bool)>, Condvar);

/// A running view (see the module docs). Dropping it ends the page's streams.
pub struct View {
    hub: Arc<Hub>,
    server: Arc<tiny_http::Server>,
    url: String,
    started: f64,
    frames: Arc<FrameSlot>,
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

fn token() -> Result<String, ViewError> {
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng
        .try_fill_bytes(&mut bytes)
        .map_err(|e| ViewError::Random(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// How a message of type `kind` is kept for pages that connect later.
fn keep_of(kind: &str) -> Keep {
    match kind {
        "scan-progress" | "executing" | "phase" => Keep::Latest,
        "camera-frame" => Keep::Frame,
        _ => Keep::Log,
    }
}

/// The type names messages use, as `'static` (the hub keys on them).
fn kind_name(v: &Value) -> &'static str {
    const KINDS: &[&str] = &[
        "hello",
        "phase",
        "scan-progress",
        "readings",
        "camera-frame",
        "resolution",
        "scanned",
        "solved",
        "planned",
        "executes",
        "executing",
        "verifying",
        "checked",
        "resumed",
        "stopped",
        "summary",
        "end",
        "note",
        "calibration",
        "journal-open",
    ];
    let t = v["type"].as_str().unwrap_or("note");
    KINDS.iter().copied().find(|k| *k == t).unwrap_or("note")
}

impl View {
    /// Starts serving; the page's URL (token included) is [`View::url`].
    pub fn start(opts: ViewOptions) -> Result<View, ViewError> {
        let started = now_ms();
        let server = tiny_http::Server::http(opts.addr).map_err(|e| ViewError::Bind {
            addr: opts.addr,
            why: bind_words(e.as_ref()),
        })?;
        let addr = server
            .server_addr()
            .to_ip()
            .ok_or_else(|| ViewError::Bind {
                addr: opts.addr,
                why: "not an IP address".into(),
            })?;
        let token = token()?;
        let prefix = format!("/{token}/");
        let url = format!("http://{addr}{prefix}");
        let hosts = if addr.ip().is_loopback() {
            vec![
                addr.to_string(),
                format!("localhost:{}", addr.port()),
                format!("127.0.0.1:{}", addr.port()),
            ]
        } else {
            Vec::new()
        };
        let hub = Arc::new(Hub::new());
        hub.set_hello(
            json!({
                "type": "hello", "t": started, "title": opts.title, "started": started,
                "time_scale": opts.time_scale, "stop": opts.stop.is_some(),
                "save": opts.save.is_some(), "history": opts.journals.is_some(),
                "frames_per_second": FRAMES_PER_SECOND,
            })
            .to_string(),
        );
        let shared = Arc::new(server::Shared {
            hub: hub.clone(),
            prefix,
            hosts,
            stop: opts.stop,
            stop_pressed: opts.stop_pressed,
            save: opts.save,
            journals: opts.journals,
        });
        let server = Arc::new(server);
        let s = server.clone();
        std::thread::Builder::new()
            .name("view-http".into())
            .spawn(move || server::serve(s, shared))
            .map_err(|e| ViewError::Bind {
                addr,
                why: e.to_string(),
            })?;
        let frames: Arc<FrameSlot> = Arc::new((Mutex::new((None, false)), Condvar::new()));
        let (f, h) = (frames.clone(), hub.clone());
        std::thread::Builder::new()
            .name("view-frames".into())
            .spawn(move || encode_frames(&f, &h))
            .map_err(|e| ViewError::Bind {
                addr,
                why: e.to_string(),
            })?;
        Ok(View {
            hub,
            server,
            url,
            started,
            frames,
        })
    }

    /// The page's address, token included.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// When the view started (Unix milliseconds).
    pub fn started(&self) -> f64 {
        self.started
    }

    /// Pages connected now.
    pub fn streams(&self) -> usize {
        self.hub.streams()
    }

    /// A job's event, stamped now.
    pub fn event(&self, e: &RunEvent) {
        let t = now_ms();
        let Ok(mut v) = serde_json::to_value(e) else {
            return;
        };
        v["t"] = json!(t);
        if let RunEvent::CameraFrame { image, .. } = e {
            let mut slot = self.frames.0.lock().unwrap_or_else(|p| p.into_inner());
            slot.0 = Some(PendingFrame {
                meta: v,
                image: image.clone(),
            });
            drop(slot);
            self.frames.1.notify_all();
            return;
        }
        self.publish(v);
    }

    /// A message of the command's own (`value` must be an object with a `type`), stamped
    /// now.
    pub fn note(&self, mut value: Value) {
        value["t"] = json!(now_ms());
        self.publish(value);
    }

    fn publish(&self, v: Value) {
        let kind = kind_name(&v);
        self.hub.publish(kind, keep_of(kind), v.to_string());
    }

    /// Whether a page has ever connected to this view (it may have left since).
    pub fn ever_connected(&self) -> bool {
        self.hub.ever_subscribed()
    }

    /// Waits, at most `wait`, until a page, connected now or later, has been sent
    /// everything published so far (the whole replay, the end included); whether one was.
    pub fn delivered_to_a_page(&self, wait: Duration) -> bool {
        self.hub.delivered_to_one(wait)
    }

    /// Waits, at most `wait`, until the connected pages have been sent everything (the
    /// command has ended and is about to exit).
    pub fn drain(&self, wait: Duration) {
        self.hub.drain(wait);
    }
}

impl Drop for View {
    fn drop(&mut self) {
        self.hub.close();
        let mut slot = self.frames.0.lock().unwrap_or_else(|p| p.into_inner());
        slot.1 = true;
        drop(slot);
        self.frames.1.notify_all();
        self.server.unblock();
    }
}

/// The frame thread: the newest pending frame, at most [`FRAMES_PER_SECOND`] a second,
/// encoded and sent (older ones waiting are dropped).
fn encode_frames(slot: &FrameSlot, hub: &Hub) {
    let gap = Duration::from_secs(1) / FRAMES_PER_SECOND;
    let mut last: Option<Instant> = None;
    loop {
        if let Some(wait) = last.and_then(|l| gap.checked_sub(l.elapsed())) {
            std::thread::sleep(wait);
        }
        let mut s = slot.0.lock().unwrap_or_else(|p| p.into_inner());
        while s.0.is_none() && !s.1 {
            s = slot.1.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        if s.1 {
            return;
        }
        let Some(PendingFrame { mut meta, image }) = s.0.take() else {
            continue;
        };
        drop(s);
        last = Some(Instant::now());
        if let Some(bytes) = encode_jpeg(&image) {
            meta["frame"] = json!(hub.put_frame(bytes));
        }
        hub.publish("camera-frame", Keep::Frame, meta.to_string());
    }
}

#[cfg(feature = "vision")]
fn encode_jpeg(image: &FrameImage) -> Option<Vec<u8>> {
    crate::scan::io::encode_jpeg(&image.0, 80).ok()
}

/// Without OpenCV the page draws a frame's grid and colours without its pixels.
#[cfg(not(feature = "vision"))]
fn encode_jpeg(_image: &FrameImage) -> Option<Vec<u8>> {
    None
}
