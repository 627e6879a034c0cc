//! The firmware brick's process: LEGO's VM started from a build folder, with the device
//! shim preloaded, in a private copy of its runtime tree, and the world link's socket.
//!
//! A build folder (made by `scripts/firmware-brick.sh`) holds `bin/lms2012` (the VM),
//! `lib/libcubot_brick.so` (the shim, with LEGO's d_pwm inside) and `root/` (the tree the
//! VM starts in: the stock UI program, device types). Each brick gets its own copy of all
//! three in a temporary folder, so bricks never share files, and the folder goes when the
//! brick does.
//!
//! The VM and its libraries are copied, not run from the build folder, because a running
//! process's code must never change under it. A rebuild rewrites the build's files, and a
//! library rewritten in place (a `cp` onto it; target/ trees seeded with hard links share
//! those files with other trees) is pulled from under every process that maps it: pages
//! read past its momentary end give SIGBUS, and relocated pages read again from the file
//! come back unrelocated (a jump to 0x8d26 in c_com: SIGSEGV). Four VMs of two stop
//! campaigns died that way within 15 ms of each other while another tree rebuilt, and
//! emptying the build's libraries under a running brick reproduces it every time
//! (`a_running_firmware_brick_survives_its_build_being_rewritten`). The copy costs about
//! 2 MB and a few milliseconds a brick.
//!
//! A brick's folder goes when the brick is dropped; a simulator ended by SIGKILL (as stop
//! campaigns end theirs) drops nothing, so each new brick first removes the folders of
//! processes that no longer exist ([`sweep_stale`]; a folder's name holds its owner's
//! process id, and the owner's VM ends with it, its world link closed).
//!
//! Level: robot (simulators). Spawns one process; no printing.

use std::fs;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use nix::sys::socket::{recv, send, socketpair, AddressFamily, MsgFlags, SockFlag, SockType};

/// Why the firmware brick cannot start or stopped talking.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error(
        "no firmware brick is built in {}{}: {missing} is missing; build it with \
         `scripts/firmware-brick.sh` from LEGO's EV3 sources, or name a build with \
         --lms2012 DIR or CUBOT_LMS2012_DIR",
        dir.display(),
        relative_to_here(dir)
    )]
    NotBuilt { dir: PathBuf, missing: &'static str },
    #[error("cannot prepare the firmware brick's folder {dir}: {source}")]
    Folder {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot open the world link: {0}")]
    Socket(#[source] nix::Error),
    #[error("cannot start the firmware brick {vm}: {source}")]
    Spawn {
        vm: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("the firmware brick's process ended ({status}); its log: {log}")]
    Ended { status: String, log: PathBuf },
    #[error("the firmware brick said nothing for {0:?}")]
    Silent(Duration),
    #[error("the world link failed: {0}")]
    Link(#[source] nix::Error),
}

/// For a relative folder: the directory it is relative to (a user who ran the command
/// elsewhere than the checkout sees where it was looked for).
fn relative_to_here(dir: &Path) -> String {
    match std::env::current_dir() {
        Ok(here) if dir.is_relative() => format!(" (relative to {})", here.display()),
        _ => String::new(),
    }
}

/// The files a build folder must hold.
const PARTS: [&str; 3] = ["bin/lms2012", "lib/libcubot_brick.so", "root"];

/// Checks that `dir` holds a firmware brick build.
pub fn check_build(dir: &Path) -> Result<(), ProcessError> {
    for part in PARTS {
        if !dir.join(part).exists() {
            return Err(ProcessError::NotBuilt {
                dir: dir.to_path_buf(),
                missing: part,
            });
        }
    }
    Ok(())
}

/// A running VM and our end of its world link. Ends the process on drop.
pub struct BrickProcess {
    child: Child,
    link: OwnedFd,
    /// The private folder (removed on drop).
    folder: PathBuf,
    buf: Vec<u8>,
}

impl BrickProcess {
    /// Starts the VM of the build in `dir`.
    pub fn spawn(dir: &Path) -> Result<BrickProcess, ProcessError> {
        check_build(dir)?;
        let dir = dir.canonicalize().map_err(|source| ProcessError::Folder {
            dir: dir.to_path_buf(),
            source,
        })?;
        let folder = private_folder()?;
        // bin/ holds the VM alone (its run path finds lib/ beside it, $ORIGIN/../lib).
        let vm = folder.join("bin/lms2012");
        let copied = fs::create_dir(folder.join("bin"))
            .and_then(|()| fs::copy(dir.join("bin/lms2012"), &vm).map(drop))
            .and_then(|()| copy_tree(&dir.join("lib"), &folder.join("lib")));
        copied.map_err(|source| ProcessError::Folder {
            dir: folder.clone(),
            source,
        })?;
        let root = folder.join("root");
        copy_tree(&dir.join("root"), &root).map_err(|source| ProcessError::Folder {
            dir: root.clone(),
            source,
        })?;
        let log =
            fs::File::create(folder.join("vm.log")).map_err(|source| ProcessError::Folder {
                dir: folder.clone(),
                source,
            })?;
        let log2 = log.try_clone().map_err(|source| ProcessError::Folder {
            dir: folder.clone(),
            source,
        })?;
        let (ours, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .map_err(ProcessError::Socket)?;
        let fd = theirs.as_raw_fd();
        let mut cmd = Command::new(&vm);
        cmd.current_dir(&root)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("LD_PRELOAD", folder.join("lib/libcubot_brick.so"))
            .env("CUBOT_BRICK_FD", fd.to_string())
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2);
        // SAFETY: only async-signal-safe calls between fork and exec: fcntl on one fd,
        // setpgid.
        unsafe {
            cmd.pre_exec(move || {
                // The child's end of the link survives exec (it was made close-on-exec so
                // that no other child inherits it).
                if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                    return Err(io::Error::last_os_error());
                }
                // A process group of its own: a Ctrl-C at the terminal signals the whole
                // foreground group, and the brick must go on answering while cubot stops
                // the robot (a real brick does not hear it). It still ends with cubot: its
                // end of the link closes, and the shim exits.
                if libc::setpgid(0, 0) < 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd
            .spawn()
            .map_err(|source| ProcessError::Spawn { vm, source })?;
        drop(theirs);
        Ok(BrickProcess {
            child,
            link: ours,
            folder,
            buf: vec![0; 1 << 17],
        })
    }

    /// The VM's own output (its printouts), for diagnostics.
    pub fn log_path(&self) -> PathBuf {
        self.folder.join("vm.log")
    }

    /// Sends one message.
    pub fn send(&mut self, m: &[u8]) -> Result<(), ProcessError> {
        loop {
            match send(self.link.as_raw_fd(), m, MsgFlags::MSG_NOSIGNAL) {
                Ok(_) => return Ok(()),
                Err(nix::errno::Errno::EINTR) => continue,
                Err(nix::errno::Errno::EPIPE) | Err(nix::errno::Errno::ECONNRESET) => {
                    return Err(self.ended())
                }
                Err(e) => return Err(ProcessError::Link(e)),
            }
        }
    }

    /// The next message, waiting at most `wait` (wall time).
    pub fn recv(&mut self, wait: Duration) -> Result<&[u8], ProcessError> {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        let ms = wait.as_millis().min(i32::MAX as u128) as i32;
        let mut fds = [PollFd::new(self.link.as_fd(), PollFlags::POLLIN)];
        match poll(
            &mut fds,
            PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX),
        ) {
            Ok(0) => return Err(ProcessError::Silent(wait)),
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => return Err(ProcessError::Silent(wait)),
            Err(e) => return Err(ProcessError::Link(e)),
        }
        match recv(self.link.as_raw_fd(), &mut self.buf, MsgFlags::empty()) {
            Ok(0) => Err(self.ended()),
            Ok(n) => Ok(&self.buf[..n]),
            Err(nix::errno::Errno::ECONNRESET) => Err(self.ended()),
            Err(e) => Err(ProcessError::Link(e)),
        }
    }

    /// The process has gone: how it ended.
    fn ended(&mut self) -> ProcessError {
        let status = match self.child.wait() {
            Ok(s) => s.to_string(),
            Err(e) => e.to_string(),
        };
        ProcessError::Ended {
            status,
            log: self.log_path(),
        }
    }
}

/// The world link's QUIT message: the process ends (see the wire's table).
pub const QUIT: &[u8] = b"Q";

impl Drop for BrickProcess {
    fn drop(&mut self) {
        let _ = send(self.link.as_raw_fd(), QUIT, MsgFlags::MSG_NOSIGNAL);
        for _ in 0..50 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = fs::remove_dir_all(&self.folder);
    }
}

/// The start of every brick folder's name; the owner's process id follows.
const FOLDER_PREFIX: &str = "cubot-lms2012-";

/// Removes the brick folders in `base` whose owner process has ended (a simulator killed
/// before it could drop its brick). A folder whose owner's id is in use is kept, whoever
/// uses it now. Returns how many went.
pub fn sweep_stale(base: &Path) -> usize {
    use nix::errno::Errno;
    use nix::sys::signal::kill;
    use nix::unistd::Pid;
    let Ok(entries) = fs::read_dir(base) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) = name
            .to_str()
            .and_then(|n| n.strip_prefix(FOLDER_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<i32>().ok())
            .filter(|&pid| pid > 0)
        else {
            continue;
        };
        let gone = kill(Pid::from_raw(owner), None) == Err(Errno::ESRCH);
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if gone && is_dir && fs::remove_dir_all(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// A new folder of our own under the temporary directory (the leftovers of ended
/// processes swept first).
fn private_folder() -> Result<PathBuf, ProcessError> {
    let base = std::env::temp_dir();
    sweep_stale(&base);
    let pid = std::process::id();
    for n in 0u32.. {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = base.join(format!("{FOLDER_PREFIX}{pid}-{stamp:08x}-{n}"));
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 100 => continue,
            Err(source) => return Err(ProcessError::Folder { dir, source }),
        }
    }
    unreachable!("the loop returns")
}

/// Copies a folder tree (files, folders and symbolic links as links).
fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let dest = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &dest)?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(entry.path())?, &dest)?;
        } else {
            fs::copy(entry.path(), &dest)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweeping_removes_the_folders_of_ended_processes_only() {
        let base = tempfile::tempdir().unwrap();
        let mut child = Command::new("true").spawn().unwrap();
        let ended = child.id();
        child.wait().unwrap();
        let me = std::process::id();
        let dead = base
            .path()
            .join(format!("{FOLDER_PREFIX}{ended}-0badf00d-0"));
        let mine = base.path().join(format!("{FOLDER_PREFIX}{me}-0badf00d-0"));
        let other = base.path().join(format!("other-{ended}-0"));
        let file = base.path().join(format!("{FOLDER_PREFIX}{ended}-file"));
        for d in [&dead, &mine, &other] {
            fs::create_dir_all(d.join("root/sys")).unwrap();
        }
        fs::write(&file, b"").unwrap();
        assert_eq!(sweep_stale(base.path()), 1);
        assert!(!dead.exists());
        assert!(mine.exists() && other.exists() && file.exists());
    }
}
