//! Opening repository files and directories beneath the root by directory handle (§3.1).
//!
//! Every open of a file in the repository goes through [`Root::open_beneath`], relative to the
//! root directory the `Root` holds open. The kernel resolves the path below that handle
//! (`openat2` with `RESOLVE_BENEATH`, which keeps relative symlinks inside the root working and
//! refuses anything that climbs out); where it refuses (an absolute symlink that points back
//! inside the root) or is missing, a walk resolves one component at a time with
//! `openat(O_NOFOLLOW)` under the directory handle it already holds, expanding symlinks itself
//! and never letting `..` climb above the root. The opened descriptor's real path is then read
//! back from the kernel (`/proc/self/fd`) and must lie inside the root; callers check it against
//! the exclusions. What follows (reading, creating the temporary file, renaming, unlinking,
//! creating a directory) is done through that descriptor, so no path is resolved again between
//! the check and the use, and a directory swapped for a symlink in between changes nothing.
//!
//! Files are opened non-blocking and without a controlling terminal, and callers serve regular
//! files only: a FIFO, a socket or a device is refused before a byte is read from it.

use std::collections::VecDeque;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use loupe_core::RepoPath;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::{Root, VfsError};

/// How many symlinks (and entries that changed while being opened) one path may pass
/// through, as the kernel's own limit on symlinks.
const MAX_DETOURS: u32 = 40;

/// A point between a check and the use it guards, where a test may change the tree (a hook is
/// set only in a build with the `test-hooks` feature).
#[cfg_attr(not(feature = "test-hooks"), allow(unreachable_pub))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RacePoint {
    /// The path-level checks passed; nothing is opened yet.
    Checked,
    /// The file or its directory is open and its real path verified; nothing is read or
    /// written yet.
    Opened,
}

type RaceCallback = dyn Fn(RacePoint, &RepoPath) + Send + Sync;

/// The test hook of [`Root::set_race_hook`]; empty in production.
#[derive(Clone, Default)]
pub(crate) struct RaceHook(Option<Arc<RaceCallback>>);

impl std::fmt::Debug for RaceHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "RaceHook(set)" } else { "RaceHook(none)" })
    }
}

/// A file or directory opened beneath the root, with the root-relative path it really has.
pub(crate) struct Opened {
    pub(crate) fd: OwnedFd,
    pub(crate) real: RepoPath,
}

/// What to do about a directory missing on the way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Missing {
    Refuse,
    /// Create it (`mkdirat`, one component at a time, under the directory above it).
    Create,
}

/// Flags to read a file with: a FIFO must not block the open, a terminal must not become ours.
pub(crate) fn read_flags() -> OFlags {
    OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC
}

/// Flags for a directory that files are created, renamed and unlinked in (and synced).
pub(crate) fn directory_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC
}

/// Flags for a directory only walked through: no read permission needed where `O_PATH` exists.
fn passage_flags() -> OFlags {
    #[cfg(target_os = "linux")]
    let access = OFlags::PATH;
    #[cfg(not(target_os = "linux"))]
    let access = OFlags::RDONLY;
    access | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// Opens the workspace root itself, the handle everything else is opened beneath.
pub(crate) fn open_root(canonical: &Path) -> Result<OwnedFd, std::io::Error> {
    Ok(rustix::fs::open(canonical, passage_flags(), Mode::empty())?)
}

/// The name of a file type loupe refuses to read or write, for messages.
pub(crate) fn kind_name(kind: FileType) -> &'static str {
    match kind {
        FileType::Fifo => "FIFO",
        FileType::Socket => "socket",
        FileType::CharacterDevice => "character device",
        FileType::BlockDevice => "block device",
        FileType::Directory => "directory",
        FileType::Symlink => "symlink",
        _ => "special file",
    }
}

impl Root {
    /// Test hook: `hook` runs at every [`RacePoint`] of a read or write, with the path as
    /// asked, so a test can swap the tree between a check and its use. Not for production.
    #[cfg(feature = "test-hooks")]
    pub fn set_race_hook(&mut self, hook: impl Fn(RacePoint, &RepoPath) + Send + Sync + 'static) {
        self.race_hook = RaceHook(Some(Arc::new(hook)));
    }

    pub(crate) fn race(&self, point: RacePoint, path: &RepoPath) {
        if let Some(hook) = &self.race_hook.0 {
            hook(point, path);
        }
    }

    pub(crate) fn handle(&self) -> BorrowedFd<'_> {
        self.directory.as_fd()
    }

    /// Opens `path` (root-relative, as asked) with `flags`, beneath the root, following
    /// symlinks only while they stay inside it. Refuses an escape with `OutsideRoot`; the
    /// caller checks `real` against the exclusions and the opened file's type.
    pub(crate) fn open_beneath(&self, path: &RepoPath, flags: OFlags, missing: Missing) -> Result<Opened, VfsError> {
        #[cfg(target_os = "linux")]
        if missing == Missing::Refuse
            && let Some(opened) = self.open_by_kernel(path, flags)?
        {
            return Ok(opened);
        }
        let opened = self.open_by_walk(path, flags, missing)?;
        // The walk knows the names it took; the kernel knows where the directory is now.
        match self.real_path_of(&opened.fd, path)? {
            Some(real) => Ok(Opened { real, ..opened }),
            None => Ok(opened),
        }
    }

    /// One `openat2` below the root handle. `None` sends the caller to the walk, which
    /// handles what the kernel refuses (absolute symlinks inside the root) and explains errors.
    #[cfg(target_os = "linux")]
    fn open_by_kernel(&self, path: &RepoPath, flags: OFlags) -> Result<Option<Opened>, VfsError> {
        use rustix::fs::ResolveFlags;
        let name = if path.is_root() { "." } else { path.as_str() };
        let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
        match rustix::fs::openat2(self.handle(), name, flags | OFlags::CLOEXEC, Mode::empty(), resolve) {
            Ok(fd) => Ok(self.real_path_of(&fd, path)?.map(|real| Opened { fd, real })),
            // Escapes are `EXDEV`; a missing component is simply missing.
            Err(Errno::NOENT) => Err(VfsError::NotFound { path: path.clone() }),
            Err(_) => Ok(None),
        }
    }

    /// Resolves `path` one component at a time under handles already held: `openat` with
    /// `O_NOFOLLOW` for each directory, symlinks read with `readlinkat` and expanded here,
    /// `..` taken from the stack of directories walked (so it never climbs above the root).
    fn open_by_walk(&self, path: &RepoPath, flags: OFlags, missing: Missing) -> Result<Opened, VfsError> {
        let outside = || VfsError::OutsideRoot { requested: path.to_string() };
        let io = |errno: Errno| VfsError::Io { path: PathBuf::from(path.display()), source: errno.into() };
        let mut pending: VecDeque<String> = path.components().map(str::to_owned).collect();
        let mut stack: Vec<OwnedFd> = Vec::new();
        let mut real = RepoPath::root();
        let mut detours = 0;
        let mut detour = || {
            detours += 1;
            if detours > MAX_DETOURS { Err(io(Errno::LOOP)) } else { Ok(()) }
        };
        while let Some(name) = pending.pop_front() {
            match name.as_str() {
                "" | "." => continue,
                ".." => {
                    stack.pop().ok_or_else(outside)?;
                    real = real.parent();
                    continue;
                }
                _ => {}
            }
            let dir = stack.last().map_or(self.handle(), AsFd::as_fd);
            let here = real.join(&name);
            let stat = match rustix::fs::statat(dir, name.as_str(), AtFlags::SYMLINK_NOFOLLOW) {
                Ok(stat) => stat,
                Err(Errno::NOENT) if missing == Missing::Create => {
                    // Never create a directory where nothing may be written (`.git/`, secrets).
                    self.check_excluded(&here)?;
                    match rustix::fs::mkdirat(dir, name.as_str(), Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(errno) => return Err(io(errno)),
                    }
                    detour()?;
                    pending.push_front(name);
                    continue;
                }
                Err(Errno::NOENT) => return Err(VfsError::NotFound { path: path.clone() }),
                Err(errno) => return Err(io(errno)),
            };
            let kind = FileType::from_raw_mode(stat.st_mode);
            if kind == FileType::Symlink {
                detour()?;
                let target = rustix::fs::readlinkat(dir, name.as_str(), Vec::new()).map_err(io)?;
                let target = target.into_string().map_err(|_| io(Errno::ILSEQ))?;
                // A `RepoPath` never holds a control character, so neither does a link's way.
                if target.chars().any(char::is_control) {
                    return Err(io(Errno::ILSEQ));
                }
                let parts = if target.starts_with('/') {
                    stack.clear();
                    real = RepoPath::root();
                    self.link_inside_root(&target).ok_or_else(outside)?
                } else {
                    target.split('/').map(str::to_owned).collect()
                };
                for part in parts.into_iter().rev() {
                    pending.push_front(part);
                }
                continue;
            }
            let last = pending.is_empty();
            if last && !matches!(kind, FileType::RegularFile | FileType::Directory) {
                // A FIFO, socket or device: every caller wants a file or a directory, and
                // opening one can block, fail (`ENXIO`) or have side effects.
                return Err(VfsError::NotRegular { path: path.clone(), kind: kind_name(kind) });
            }
            if !last && kind != FileType::Directory {
                return Err(VfsError::NotADirectory { path: here.to_string() });
            }
            let open_flags = if last { flags | OFlags::NOFOLLOW | OFlags::CLOEXEC } else { passage_flags() };
            match rustix::fs::openat(dir, name.as_str(), open_flags, Mode::empty()) {
                Ok(fd) if last => return Ok(Opened { fd, real: here }),
                Ok(fd) => {
                    stack.push(fd);
                    real = here;
                }
                // The entry changed between `statat` and `openat` (it became a symlink, or
                // went away): look at it again.
                Err(Errno::LOOP | Errno::NOTDIR | Errno::NOENT) => {
                    detour()?;
                    pending.push_front(name);
                }
                Err(errno) => return Err(io(errno)),
            }
        }
        // No component left: the root itself, or a directory reached through `..` or a link.
        let dir = stack.last().map_or(self.handle(), AsFd::as_fd);
        let fd = rustix::fs::openat(dir, ".", flags | OFlags::CLOEXEC, Mode::empty()).map_err(io)?;
        Ok(Opened { fd, real })
    }

    /// The components of an absolute symlink target below the root (as given or canonical),
    /// unresolved: the walk takes them one by one. `None` when it points elsewhere.
    fn link_inside_root(&self, target: &str) -> Option<Vec<String>> {
        let target = Path::new(target);
        [self.canonical(), self.given()].into_iter().filter(|base| base.is_absolute()).find_map(|base| {
            let rest = target.strip_prefix(base).ok()?;
            rest.iter().map(|part| part.to_str().map(str::to_owned)).collect()
        })
    }

    /// Where the kernel says an opened descriptor is, root-relative; `OutsideRoot` when it is
    /// not under the root, `None` when the kernel cannot say (no `/proc`).
    #[cfg(target_os = "linux")]
    fn real_path_of(&self, fd: &OwnedFd, requested: &RepoPath) -> Result<Option<RepoPath>, VfsError> {
        use std::os::fd::AsRawFd;
        let Ok(real) = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())) else {
            return Ok(None);
        };
        match self.relative_of_canonical(&real) {
            Some(relative) => Ok(Some(relative)),
            None => Err(VfsError::OutsideRoot { requested: requested.to_string() }),
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn real_path_of(&self, _fd: &OwnedFd, _requested: &RepoPath) -> Result<Option<RepoPath>, VfsError> {
        Ok(None)
    }

    /// Reads the regular file at `path` (as asked), opened beneath the root by handle:
    /// its real path must be inside the root and not excluded, and it must be a regular file
    /// of at most `max_bytes` (a FIFO, socket or device is refused without reading).
    pub(crate) fn read_regular(&self, path: &RepoPath, max_bytes: u64) -> Result<Vec<u8>, VfsError> {
        let io = |source: std::io::Error| VfsError::Io { path: PathBuf::from(path.display()), source };
        self.check_excluded(path)?;
        self.race(RacePoint::Checked, path);
        let opened = self.open_beneath(path, read_flags(), Missing::Refuse)?;
        self.check_excluded(&opened.real)?;
        self.race(RacePoint::Opened, path);
        let stat = rustix::fs::fstat(&opened.fd).map_err(|errno| io(errno.into()))?;
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => {}
            FileType::Directory => return Err(VfsError::IsDirectory { path: path.clone() }),
            other => return Err(VfsError::NotRegular { path: path.clone(), kind: kind_name(other) }),
        }
        let size = u64::try_from(stat.st_size).unwrap_or(0);
        if size > max_bytes {
            return Err(VfsError::TooLarge { path: path.clone(), size, limit: max_bytes });
        }
        let bytes = read_sized(&File::from(opened.fd), size, max_bytes).map_err(io)?;
        if bytes.len() as u64 > max_bytes {
            return Err(VfsError::TooLarge { path: path.clone(), size: bytes.len() as u64, limit: max_bytes });
        }
        Ok(bytes)
    }
}

/// The bytes of an open regular file whose `fstat` said `size`, never more than `max_bytes`
/// plus one (so a file that grew past the limit is seen to have). One `read` into a buffer of
/// the stated size plus one and one more that meets the end: `read_to_end` on a `Take` grows
/// its reads from 8 KiB and spends a third call on a typical source file.
pub(crate) fn read_sized(file: &File, size: u64, max_bytes: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    read_sized_into(file, size, max_bytes, &mut bytes)?;
    Ok(bytes)
}

/// `read_sized` into `bytes` (replacing what it held), so a caller reading file after file
/// reuses one buffer, zeroed in place (a zeroed allocation per file, `vec![0; n]`, came from
/// fresh pages, and a search reading hundreds of files spent a third of its time faulting them
/// in).
pub(crate) fn read_sized_into(mut file: &File, size: u64, max_bytes: u64, bytes: &mut Vec<u8>) -> std::io::Result<()> {
    use std::io::Read;
    let cap = max_bytes.saturating_add(1);
    bytes.clear();
    bytes.resize(size.saturating_add(1).min(cap) as usize, 0);
    let mut filled = 0;
    loop {
        if filled == bytes.len() {
            // Grown since the fstat: take the rest the ordinary way, still within the limit.
            bytes.truncate(filled);
            file.take(cap - filled as u64).read_to_end(bytes)?;
            return Ok(());
        }
        match file.read(&mut bytes[filled..]) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    bytes.truncate(filled);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{read_sized, read_sized_into};

    /// The stated size is only where reading starts: a file that grew since its `fstat` is read
    /// to its end, and never past the limit plus one byte (which tells the caller it is over).
    #[test]
    fn a_sized_read_follows_growth_up_to_the_limit_plus_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        std::fs::write(&path, b"0123456789").unwrap();
        let file = std::fs::File::open(&path).unwrap();
        assert_eq!(read_sized(&file, 10, 100).unwrap(), b"0123456789");
        let at_start = || std::fs::File::open(&path).unwrap();
        assert_eq!(read_sized(&at_start(), 4, 100).unwrap(), b"0123456789", "grown since the fstat");
        assert_eq!(read_sized(&at_start(), 4, 6).unwrap(), b"0123456", "the limit plus one");
        assert_eq!(read_sized(&at_start(), 40, 100).unwrap(), b"0123456789", "shrunk since");
        let mut buffer = b"left over from the last file, longer".to_vec();
        read_sized_into(&at_start(), 10, 100, &mut buffer).unwrap();
        assert_eq!(buffer, b"0123456789", "the buffer holds this file only");
        std::fs::write(&path, b"").unwrap();
        read_sized_into(&at_start(), 0, 100, &mut buffer).unwrap();
        assert!(buffer.is_empty());
    }
}
