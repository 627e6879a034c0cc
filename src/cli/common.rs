//! Helpers more than one command needs, one of each: loading the solver, the cache
//! directory, progress bars on stderr and a per-thread CPU clock for benchmarks.
//!
//! Level: `cli`. Depends on `solver` and on [`super::args`] and [`super::output`]; no command
//! module is imported here.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::args::Global;
use super::output::progress_allowed;
use crate::solver::{ProgressFn, Solver, TableOptions};

/// The cache directory: `--cache-dir`, else `$CUBOT_CACHE_DIR` (when not empty), else the
/// platform cache directory + `cubot`; `None` when the platform has none. The solver's
/// tables and the run journals live there.
pub fn cache_dir(g: &Global) -> Option<PathBuf> {
    crate::solver::cache::cache_dir(g.cache_dir.as_deref())
}

/// A progress bar on stderr labelled `label`, or `None` when `--quiet` or stderr is not a
/// terminal. The caller sets its length and position.
pub fn progress_bar(g: &Global, label: &str) -> Option<indicatif::ProgressBar> {
    if !progress_allowed(g) {
        return None;
    }
    // Built with `with_*`, which draw nothing: a bar shows once the caller sets it
    // (`set_prefix` would draw it at once, side by side with the run's other bars).
    let b = indicatif::ProgressBar::new(1)
        .with_style(
            indicatif::ProgressStyle::with_template("{prefix:>10} [{bar:30}] {pos}/{len} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
        )
        .with_prefix(label.to_string());
    Some(b)
}

/// Loads the solver's tables from the cache (building any missing, old or corrupt one, or
/// every one when `rebuild` is set: `cubot tables build --force`) with a progress bar while
/// building; prints the solver's notes (e.g. "no cache directory") as warnings on stderr
/// unless `--quiet`. Commands call it through `connect::load_solver`, which says what a
/// Ctrl-C meanwhile stopped.
pub(super) fn tables(g: &Global, rebuild: bool) -> Result<Solver> {
    let bar = progress_bar(g, "tables").map(Arc::new);
    let progress: Option<ProgressFn> = match bar.clone() {
        Some(b) => {
            let f: ProgressFn = Arc::new(move |label: &str, done: u64, total: u64| {
                b.set_message(label.to_string());
                b.set_length(total);
                b.set_position(done);
            });
            Some(f)
        }
        // Not a terminal: one line of text says what the wait is for.
        None if !g.quiet => {
            let said = Arc::new(AtomicBool::new(false));
            let dir = cache_dir(g);
            let f: ProgressFn = Arc::new(move |_label: &str, _done: u64, _total: u64| {
                if !said.swap(true, Ordering::Relaxed) {
                    errln!(
                        "building the solver's tables (once: about 20 s; {})",
                        dir.as_deref()
                            .map(|d| format!("141 MiB on disk, kept in {}", d.display()))
                            .unwrap_or_else(|| "kept in memory only".into())
                    );
                }
            });
            Some(f)
        }
        None => None,
    };
    let solver = Solver::new(&TableOptions {
        cache_dir: g.cache_dir.clone(),
        progress,
        rebuild,
    })
    .context("cannot load the solver tables")?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if !g.quiet {
        for n in solver.notes() {
            errln!("warning: {n}");
        }
    }
    Ok(solver)
}

/// Set once [`thread_cpu`] had to answer with the wall clock.
static CPU_CLOCK_MISSING: AtomicBool = AtomicBool::new(false);

/// CPU time used by the calling thread: on a loaded machine the wall clock measures the
/// neighbours, this measures the work.
///
/// Failure policy (the one for every benchmark): where the per-thread CPU clock cannot be
/// read, the answer is the wall-clock time since the first reading of this process, so
/// differences of two readings stay meaningful durations; [`warn_if_cpu_clock_missing`]
/// then says on stderr that the "cpu" figures are wall-clock times.
pub fn thread_cpu() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the pointer to our local.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    if rc != 0 {
        static START: OnceLock<Instant> = OnceLock::new();
        CPU_CLOCK_MISSING.store(true, Ordering::Relaxed);
        return START.get_or_init(Instant::now).elapsed();
    }
    Duration::new(
        t.tv_sec.max(0) as u64,
        t.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// After a benchmark: if [`thread_cpu`] fell back to the wall clock, says so on stderr
/// (also under `--quiet`: the figures would be misread otherwise).
pub fn warn_if_cpu_clock_missing() {
    if CPU_CLOCK_MISSING.load(Ordering::Relaxed) {
        errln!(
            "warning: no per-thread CPU clock on this system: the cpu timings above are \
             wall-clock times"
        );
    }
}

/// A file a command will write, checked before the robot moves or a long computation
/// starts: not a directory, and its directory exists and is writable. `what` names the flag
/// or argument in the message.
pub fn check_writable(path: &std::path::Path, what: &str) -> Result<()> {
    if path.is_dir() {
        anyhow::bail!(
            "{what} {}: is a directory; give a file name",
            path.display()
        );
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.is_dir() {
        anyhow::bail!(
            "{what} {}: the directory {} does not exist (nothing was done)",
            path.display(),
            dir.display()
        );
    }
    if path.exists() {
        if nix::unistd::access(path, nix::unistd::AccessFlags::W_OK).is_err() {
            anyhow::bail!(
                "{what} {}: cannot write there (permission denied; nothing was done)",
                path.display()
            );
        }
        return Ok(());
    }
    // A new file is made and removed again: only that tells a directory where nothing can
    // be created (`/proc`, a read-only mount) from one where it can, whoever runs it.
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(path);
            Ok(())
        }
        Err(e) => anyhow::bail!(
            "{what} {}: cannot create a file in {} ({e}); nothing was done",
            path.display(),
            dir.display(),
        ),
    }
}

/// The files shipped in `calibration/`, which a command that writes a configuration or a
/// profile must not overwrite unless told to (`--force`).
pub const SHIPPED_FILES: [&str; 5] = [
    "mindcub3r.toml",
    "standard.toml",
    "no-white.toml",
    "ev3-standard.toml",
    "camera-1920x1080-example.toml",
];

/// Whether `path` names one of the [`SHIPPED_FILES`] in a `calibration` directory.
pub fn is_shipped_config(path: &std::path::Path) -> bool {
    let mut parts = path.components().rev();
    matches!(
        (parts.next(), parts.next()),
        (Some(f), Some(d)) if SHIPPED_FILES.iter().any(|s| f.as_os_str() == *s) && d.as_os_str() == "calibration"
    )
}
