//! `--view` on the commands that scan, calibrate or drive a robot, and `cubot view` (the
//! history of past runs): the command line's side of the live page (`crate::view`).
//!
//! A command that takes `--view` starts a [`Live`] before it connects, hands it every
//! [`RunEvent`] beside its terminal output (which does not change), and says how it ended.
//! Without feature `view` the flag is refused with a clear message; [`Live`] is then
//! always off.
//!
//! Level: `cli`. Depends on `view` (feature `view`), `job` and the shared cli types.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Result;
use serde_json::{json, Value};

use super::{CmdResult, Exit, Global};
use crate::job::RunEvent;

/// The live page's flags, shared by the commands that take them.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ViewArgs {
    /// Serve a live page of what the command sees and does, on 127.0.0.1 at a free port;
    /// its address (with a random token) is printed on stderr as `view: URL`.
    #[arg(long, global = true)]
    pub view: bool,
    /// Serve the live page on this address instead (implies --view), e.g. 0.0.0.0:8080
    /// to watch from a phone on the same network: anyone who has the URL can stop the run.
    #[arg(long, global = true, value_name = "ADDR")]
    pub view_addr: Option<SocketAddr>,
    /// When the command ends before any page has opened, keep serving the page (the whole
    /// run, its end included) until one has shown it, for at most this long [default: 60;
    /// 0: leave at once].
    #[arg(long, global = true, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub view_linger: Option<u64>,
}

/// How long a page nobody opened is kept up after the command, unless `--view-linger` says.
pub const LINGER: u64 = 60;

/// How long a page that connected after the command ended is given to draw the end.
#[cfg(feature = "view")]
const DRAW: std::time::Duration = std::time::Duration::from_millis(500);

impl ViewArgs {
    pub fn wanted(&self) -> bool {
        self.view || self.view_addr.is_some()
    }
}

/// `cubot view`: the history of past runs.
#[derive(clap::Args, Debug)]
pub struct ViewCmdArgs {
    /// A journal to replay at once: a file name in the cache directory's journals/, a
    /// path to a journal elsewhere, or `latest` (the newest).
    pub journal: Option<PathBuf>,
    #[command(flatten)]
    pub view: ViewArgs,
}

/// What a live page is asked to serve.
pub struct LiveOptions {
    pub stop: Option<Arc<AtomicBool>>,
    pub save: Option<Arc<AtomicBool>>,
    /// Robot seconds per wall second (a simulator's `--speed`).
    pub time_scale: f64,
    /// Another journals directory than the cache directory's.
    pub journals: Option<PathBuf>,
}

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            stop: None,
            save: None,
            time_scale: 1.0,
            journals: None,
        }
    }
}

/// The command's live page, or nothing when `--view` was not given.
#[derive(Default)]
pub struct Live {
    #[cfg(feature = "view")]
    view: Option<Arc<crate::view::View>>,
    /// How long the page is kept up after the command when no page has opened it.
    #[cfg(feature = "view")]
    linger: std::time::Duration,
    #[cfg(feature = "view")]
    quiet: bool,
    /// The stop flag (Ctrl-C's): a command stopped by it does not keep its page up.
    #[cfg(feature = "view")]
    stop: Option<Arc<AtomicBool>>,
    /// Whether the command got to its work (a job's event, a line of its own): one that
    /// failed before (a camera that does not open, a file that is not there) has nothing
    /// for the page to show that its error did not say, and does not keep the page up.
    #[cfg(feature = "view")]
    worked: AtomicBool,
}

/// The command line as typed, for the page's title.
#[cfg(feature = "view")]
fn command_line() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    format!("cubot {}", args.join(" "))
}

impl Live {
    /// No page.
    pub fn off() -> Live {
        Live::default()
    }

    /// Starts the page when `a` asks for one, and says where it is (stderr, and a `view`
    /// line with `--json`).
    #[cfg(feature = "view")]
    pub fn start(a: &ViewArgs, g: &Global, o: LiveOptions) -> Result<Live> {
        if !a.wanted() {
            return Ok(Live::off());
        }
        let stop = o.stop.clone();
        // Where `run` writes its journals and `cubot journals` lists them.
        let journals = Some(
            o.journals
                .unwrap_or_else(|| super::journals::journal_dir(g)),
        );
        let view = crate::view::View::start(crate::view::ViewOptions {
            addr: a
                .view_addr
                .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0))),
            title: command_line(),
            stop_pressed: o.stop.as_ref().map(|_| super::connect::page_stop()),
            stop: o.stop,
            save: o.save,
            journals,
            time_scale: o.time_scale,
        })?;
        if g.json {
            super::output::json_line(&json!({"type": "view", "url": view.url()}));
        }
        errln!("view: {}", view.url());
        Ok(Live {
            view: Some(Arc::new(view)),
            linger: std::time::Duration::from_secs(a.view_linger.unwrap_or(LINGER)),
            quiet: g.quiet,
            stop,
            worked: AtomicBool::new(false),
        })
    }

    /// Without feature `view`: refuses the flag.
    #[cfg(not(feature = "view"))]
    pub fn start(a: &ViewArgs, _g: &Global, _o: LiveOptions) -> Result<Live> {
        if a.wanted() {
            anyhow::bail!("--view: this cubot was rebuilt without feature view");
        }
        Ok(Live::off())
    }

    /// Whether a page is served.
    pub fn on(&self) -> bool {
        #[cfg(feature = "view")]
        let on = self.view.is_some();
        #[cfg(not(feature = "view"))]
        let on = false;
        on
    }

    /// A job's event.
    pub fn event(&self, _e: &RunEvent) {
        #[cfg(feature = "view")]
        if let Some(v) = &self.view {
            self.worked
                .store(true, std::sync::atomic::Ordering::Relaxed);
            v.event(_e);
        }
    }

    /// A message of the command's own (an object with a `type`).
    pub fn note(&self, _value: Value) {
        #[cfg(feature = "view")]
        if let Some(v) = &self.view {
            if !matches!(_value["type"].as_str(), Some("phase" | "end")) {
                self.worked
                    .store(true, std::sync::atomic::Ordering::Relaxed);
            }
            v.note(_value);
        }
    }

    /// The phase the command is in (`connect`, `home`, ...).
    pub fn phase(&self, phase: &str) {
        self.note(json!({"type": "phase", "phase": phase}));
    }

    /// A line for the page's log.
    pub fn text(&self, text: &str) {
        self.note(json!({"type": "note", "text": text}));
    }

    /// Says how the command ended (`exit`, and the error's message) and gives the pages
    /// up to a second to receive it before the process exits. When no page has ever
    /// connected (a short simulated run is over before a person opens the URL), the page is
    /// to be kept up after the command has said everything ([`linger`]). A command stopped
    /// by Ctrl-C leaves at once.
    pub fn end(&self, exit: u8, message: Option<String>) {
        if !self.on() {
            return;
        }
        self.note(json!({"type": "end", "exit": exit, "message": message}));
        #[cfg(feature = "view")]
        if let Some(v) = &self.view {
            v.drain(std::time::Duration::from_secs(1));
            let stopped = self
                .stop
                .as_ref()
                .is_some_and(|s| s.load(std::sync::atomic::Ordering::SeqCst));
            let worked = self.worked.load(std::sync::atomic::Ordering::Relaxed);
            if v.ever_connected() || stopped || self.linger.is_zero() || !worked {
                return;
            }
            if let Ok(mut l) = LINGER_AFTER.lock() {
                *l = Some(Lingering {
                    view: v.clone(),
                    wait: self.linger,
                    quiet: self.quiet,
                });
            }
        }
    }

    /// [`Live::end`] with a command's result.
    pub fn ended(&self, r: &CmdResult) {
        match r {
            Ok(Exit::Ok) => self.end(0, None),
            Ok(Exit::No) => self.end(1, None),
            Err(e) => self.end(2, Some(super::output::error_message(e))),
        }
    }
}

/// A page nobody has opened yet, kept up once the command has said everything.
#[cfg(feature = "view")]
struct Lingering {
    view: Arc<crate::view::View>,
    wait: std::time::Duration,
    quiet: bool,
}

/// Set by [`Live::end`] when the page is to be kept up; taken by [`linger`].
#[cfg(feature = "view")]
static LINGER_AFTER: std::sync::Mutex<Option<Lingering>> = std::sync::Mutex::new(None);

/// The last thing before the process exits with `exit`: when the command's page ended
/// before anyone opened it, keeps serving it (the whole run, its end included) until a page
/// has been sent it all and had a moment to draw it, for at most `--view-linger` seconds,
/// and says so on stderr; Ctrl-C meanwhile leaves at once with `exit` (the command has
/// ended: nothing moves).
pub fn linger(_exit: u8) {
    #[cfg(feature = "view")]
    {
        let Some(l) = LINGER_AFTER.lock().ok().and_then(|mut l| l.take()) else {
            return;
        };
        super::connect::stop_on_ctrlc();
        let note = if l.quiet { "" } else { "view: left (Ctrl-C)" };
        super::connect::quitting_at_once(note, i32::from(_exit), || {
            // Said once Ctrl-C leaves at once, so a Ctrl-C that follows the words works.
            if !l.quiet {
                errln!(
                    "view: the command has ended; the page stays up for {} s or until it is \
                     opened (Ctrl-C to leave now)",
                    l.wait.as_secs()
                );
            }
            if l.view.delivered_to_a_page(l.wait) {
                std::thread::sleep(DRAW);
            }
        });
    }
}

/// Refuses a file that is not a run journal (a scan, a profile, a `resolve --json` output),
/// saying what its first line is.
fn not_a_journal(_path: &std::path::Path) -> Result<()> {
    #[cfg(feature = "view")]
    if let Err(why) = crate::view::history::is_journal(_path) {
        anyhow::bail!(
            "{} is not a run journal: {why} (`cubot view` replays the journals `cubot run` \
             writes; `cubot journals` lists them)",
            _path.display()
        );
    }
    Ok(())
}

/// `cubot view`: serves the history (and replays `journal`) until Ctrl-C.
pub fn view(a: ViewCmdArgs, g: &Global) -> CmdResult {
    // `latest` (unless a file of that name is at hand): the newest journal, whatever
    // became of its run.
    let journal = match a.journal {
        Some(p) if p.as_os_str() == "latest" && !p.is_file() => {
            let dir = super::journals::journal_dir(g);
            let newest = crate::job::journals::list(&dir)
                .map_err(|e| anyhow::anyhow!("cannot list the journals in {}: {e}", dir.display()))?
                .into_iter()
                .next()
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "latest: no journal in {} yet (`cubot run` writes one per run)",
                        dir.display()
                    )
                })?;
            Some(newest.path)
        }
        other => other,
    };
    let (journals, open) = match &journal {
        Some(p) if p.is_file() => {
            not_a_journal(p)?;
            let dir = p
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("."));
            (
                Some(dir),
                p.file_name().map(|n| n.to_string_lossy().to_string()),
            )
        }
        Some(p) if p.components().count() > 1 => {
            anyhow::bail!(
                "{}: no such journal (`cubot journals` lists them)",
                p.display()
            )
        }
        Some(name) => {
            let dir = super::journals::journal_dir(g);
            if !dir.join(name).is_file() {
                anyhow::bail!(
                    "{}: no such journal in {} (`cubot journals` lists them)",
                    name.display(),
                    dir.display()
                );
            }
            not_a_journal(&dir.join(name))?;
            (None, Some(name.to_string_lossy().to_string()))
        }
        None => (None, None),
    };
    let wanted = ViewArgs {
        view: true,
        view_addr: a.view.view_addr,
        view_linger: None,
    };
    let live = Live::start(
        &wanted,
        g,
        LiveOptions {
            journals,
            ..LiveOptions::default()
        },
    )?;
    live.phase("history");
    if let Some(name) = open {
        live.note(json!({"type": "journal-open", "name": name}));
    }
    if !g.quiet {
        errln!("serving the history of runs; Ctrl-C ends");
    }
    // Nothing moves here: Ctrl-C ends the process at once (exit 130), as for `sim --pty`.
    let stop = super::connect::stop_on_ctrlc();
    super::connect::standing_still("view: ended (Ctrl-C)", || {
        while !stop.load(std::sync::atomic::Ordering::SeqCst) {
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    });
    Ok(Exit::Ok)
}
