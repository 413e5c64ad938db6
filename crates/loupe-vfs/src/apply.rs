//! The one write path into the repository: placing a file's new bytes atomically, or
//! removing it, after checking that the path is a regular file (or nothing) inside the root.
//!
//! Every operation opens the file's directory beneath the root by handle (`beneath.rs`) and
//! checks, on that handle, that the file it would touch really lies inside the root, is not
//! excluded (so `gitlink/hooks/x` with `gitlink -> .git` is refused like `.git/hooks/x`), is
//! not loupe's own configuration, and is a regular file or nothing (never a symlink, a
//! directory, a FIFO or a device). Then, through that directory handle only: the new bytes go
//! to a temporary file created with `O_CREAT|O_EXCL|O_NOFOLLOW`, are flushed, take the
//! permissions of the file they replace, and are renamed over it with `renameat`; the
//! directory is synced so the rename survives a crash. Removal is `unlinkat`; missing
//! directories are created with `mkdirat`, one component at a time under a checked handle. No
//! path is resolved again between a check and its use. Only `journal.rs` calls this module;
//! everything else in the workspace reads.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use loupe_core::RepoPath;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::beneath::{Missing, RacePoint, directory_flags, kind_name, read_flags};
use crate::{Root, VfsError};

/// Permissions for a file that did not exist before (the common umask applied to 0666).
const NEW_FILE_MODE: u32 = 0o644;

/// loupe's own configuration, relative to the root: readable, never written by `edit` (§3.1).
const CONFIG_FILES: &[&str] = &["loupe.toml", ".loupe/config.toml"];

/// A file a write may touch, checked by [`Root::write_target`]. It holds no descriptor (a
/// plan may name thousands of files): each operation opens the directory again beneath the
/// root and repeats the checks on that handle before it touches anything.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    path: RepoPath,
    /// Its directory does not exist yet; `write_target(path, true)` creates it.
    pending: bool,
}

impl Target {
    /// A new file whose missing directories are created once the plan's preconditions hold.
    pub(crate) fn pending(path: RepoPath) -> Target {
        Target { path, pending: true }
    }

    pub(crate) fn is_pending(&self) -> bool {
        self.pending
    }

    pub(crate) fn path(&self) -> &RepoPath {
        &self.path
    }
}

/// A file's directory, opened beneath the root and checked.
struct Directory {
    fd: OwnedFd,
    name: String,
}

impl Root {
    /// Checks that `path` can be written: its directory (created first when `create_dirs`)
    /// opens beneath the root, the file it names is not excluded and not loupe's config, and
    /// what is there now is a regular file or nothing.
    pub(crate) fn write_target(&self, path: &RepoPath, create_dirs: bool) -> Result<Target, VfsError> {
        if path.is_root() {
            return Err(VfsError::IsDirectory { path: path.clone() });
        }
        // The containment and exclusion checks of a read, by path, for their explanations.
        self.resolve(path.as_str())?;
        let directory = self.open_directory(path, create_dirs)?;
        self.existing_mode(&directory, path)?;
        Ok(Target { path: path.clone(), pending: false })
    }

    /// The current bytes of a target, `None` when nothing is there. Regular files only: a
    /// FIFO is never opened blocking (it would hold the journal's lock forever).
    pub(crate) fn current_bytes(&self, target: &Target) -> Result<Option<Vec<u8>>, VfsError> {
        let path = &target.path;
        let directory = self.open_directory(path, false)?;
        let flags = read_flags() | OFlags::NOFOLLOW;
        let fd = match rustix::fs::openat(&directory.fd, directory.name.as_str(), flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(Errno::LOOP) => return Err(VfsError::Symlink { path: path.clone(), target: self.link_target(path) }),
            Err(errno) => return Err(io_error(path, errno.into())),
        };
        let stat = rustix::fs::fstat(&fd).map_err(|errno| io_error(path, errno.into()))?;
        check_kind(path, FileType::from_raw_mode(stat.st_mode))?;
        let mut bytes = Vec::new();
        File::from(fd).read_to_end(&mut bytes).map_err(|source| io_error(path, source))?;
        Ok(Some(bytes))
    }

    /// The permission bits of the file at `target`, when there is one.
    pub(crate) fn mode_of(&self, target: &Target) -> Option<u32> {
        let directory = self.open_directory(&target.path, false).ok()?;
        self.existing_mode(&directory, &target.path).ok().flatten()
    }

    /// Places `bytes` at `target` atomically. `mode` is the permission bits to give the file
    /// (the replaced file's, or the recorded ones when a deleted file comes back).
    pub(crate) fn replace_file(&self, target: &Target, bytes: &[u8], mode: Option<u32>) -> Result<(), VfsError> {
        let path = &target.path;
        self.race(RacePoint::Checked, path);
        let directory = self.open_directory(path, target.pending)?;
        self.race(RacePoint::Opened, path);
        // Refuses a symlink, directory or device that appeared since `write_target`.
        let existing = self.existing_mode(&directory, path)?;
        let mode = mode.or(existing).unwrap_or(NEW_FILE_MODE);
        let (temporary, mut file) = create_temporary(&directory.fd).map_err(|source| io_error(path, source))?;
        let written = file
            .write_all(bytes)
            .and_then(|()| file.set_permissions(fs::Permissions::from_mode(mode)))
            .and_then(|()| file.sync_all())
            .and_then(|()| {
                rustix::fs::renameat(&directory.fd, temporary.as_str(), &directory.fd, directory.name.as_str())
                    .map_err(std::io::Error::from)
            });
        if let Err(source) = written {
            let _ = rustix::fs::unlinkat(&directory.fd, temporary.as_str(), AtFlags::empty());
            return Err(io_error(path, source));
        }
        // Best effort: some file systems refuse to sync a directory.
        let _ = rustix::fs::fsync(&directory.fd);
        Ok(())
    }

    /// Removes the file at `target` (a missing file is already removed).
    pub(crate) fn remove_file(&self, target: &Target) -> Result<(), VfsError> {
        let path = &target.path;
        self.race(RacePoint::Checked, path);
        let directory = match self.open_directory(path, false) {
            Ok(directory) => directory,
            Err(VfsError::MissingDirectory { .. }) => return Ok(()),
            Err(error) => return Err(error),
        };
        self.race(RacePoint::Opened, path);
        if self.existing_mode(&directory, path)?.is_none() {
            return Ok(());
        }
        match rustix::fs::unlinkat(&directory.fd, directory.name.as_str(), AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(errno) => return Err(io_error(path, errno.into())),
        }
        let _ = rustix::fs::fsync(&directory.fd);
        Ok(())
    }

    /// Removes from the directory `dir` (opened beneath the root by handle, never a symlink
    /// in its place) the temporary files an interrupted write left: named exactly as
    /// [`create_temporary`] names them, regular files, at most `longest` bytes, and holding
    /// bytes `is_ours` accepts. Returns their root-relative (real) paths. Nothing is removed
    /// in an excluded directory (loupe never writes there).
    pub(crate) fn remove_temporaries(
        &self,
        dir: &RepoPath,
        longest: u64,
        is_ours: impl Fn(&[u8]) -> bool,
    ) -> Vec<RepoPath> {
        let mut removed = Vec::new();
        let Ok(opened) = self.open_beneath(dir, directory_flags(), Missing::Refuse) else { return removed };
        if self.check_excluded(&opened.real).is_err() {
            return removed;
        }
        let Ok(entries) = rustix::fs::Dir::read_from(&opened.fd) else { return removed };
        for entry in entries.filter_map(Result::ok) {
            let Ok(name) = entry.file_name().to_str() else { continue };
            if !is_temporary_name(name) {
                continue;
            }
            let name = name.to_owned();
            let Ok(stat) = rustix::fs::statat(&opened.fd, name.as_str(), AtFlags::SYMLINK_NOFOLLOW) else { continue };
            let size = u64::try_from(stat.st_size).unwrap_or(u64::MAX);
            if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile || size > longest {
                continue;
            }
            let flags = read_flags() | OFlags::NOFOLLOW;
            let Ok(fd) = rustix::fs::openat(&opened.fd, name.as_str(), flags, Mode::empty()) else { continue };
            let mut bytes = Vec::new();
            if File::from(fd).take(longest.saturating_add(1)).read_to_end(&mut bytes).is_err() || !is_ours(&bytes) {
                continue;
            }
            if rustix::fs::unlinkat(&opened.fd, name.as_str(), AtFlags::empty()).is_ok() {
                removed.push(opened.real.join(&name));
            }
        }
        if !removed.is_empty() {
            let _ = rustix::fs::fsync(&opened.fd);
        }
        removed
    }

    /// The directories above `path` that do not exist yet, outermost first, by their real
    /// root-relative paths: what writing it with `create_dirs` would create.
    pub(crate) fn missing_directories(&self, path: &RepoPath) -> Vec<RepoPath> {
        let mut missing = Vec::new();
        let mut dir = path.parent();
        loop {
            match self.open_beneath(&dir, directory_flags(), Missing::Refuse) {
                Ok(opened) => {
                    let mut real = opened.real;
                    return missing
                        .into_iter()
                        .rev()
                        .map(|name: String| {
                            real = real.join(&name);
                            real.clone()
                        })
                        .collect();
                }
                Err(VfsError::NotFound { .. }) if !dir.is_root() => {
                    missing.push(dir.file_name().to_owned());
                    dir = dir.parent();
                }
                Err(_) => return Vec::new(),
            }
        }
    }

    /// Removes the directory `dir` (root-relative) if it is empty, by handle beneath the root:
    /// a directory an edit created, when the edit is undone or rolled back. A directory that
    /// holds anything, a file or a symlink in its place, and anything excluded stay. Returns
    /// whether it was removed.
    pub(crate) fn remove_empty_directory(&self, dir: &RepoPath) -> bool {
        if dir.is_root() || self.check_excluded(dir).is_err() {
            return false;
        }
        let Ok(parent) = self.open_beneath(&dir.parent(), directory_flags(), Missing::Refuse) else { return false };
        if self.check_excluded(&parent.real.join(dir.file_name())).is_err() {
            return false;
        }
        let removed = rustix::fs::unlinkat(&parent.fd, dir.file_name(), AtFlags::REMOVEDIR).is_ok();
        if removed {
            let _ = rustix::fs::fsync(&parent.fd);
        }
        removed
    }

    /// The root directory this `Root` holds, opened again readable for `flock` (which an
    /// `O_PATH` descriptor does not support): through the handle, not the path, which may
    /// name another directory by now.
    pub(crate) fn reopen_root(&self) -> std::io::Result<File> {
        Ok(File::from(rustix::fs::openat(self.handle(), ".", directory_flags(), Mode::empty())?))
    }

    /// Opens the directory of `path` beneath the root (creating what is missing when asked)
    /// and checks the file it names, by its real path, before anything is touched there.
    fn open_directory(&self, path: &RepoPath, create_dirs: bool) -> Result<Directory, VfsError> {
        self.check_writable(path)?;
        let missing = if create_dirs { Missing::Create } else { Missing::Refuse };
        let opened = self.open_beneath(&path.parent(), directory_flags(), missing).map_err(|error| match error {
            VfsError::NotFound { .. } => VfsError::MissingDirectory { path: path.parent() },
            other => other,
        })?;
        self.check_writable(&opened.real.join(path.file_name()))?;
        Ok(Directory { fd: opened.fd, name: path.file_name().to_owned() })
    }

    /// Writes never touch an excluded file or loupe's own configuration.
    fn check_writable(&self, path: &RepoPath) -> Result<(), VfsError> {
        self.check_excluded(path)?;
        if CONFIG_FILES.contains(&path.as_str()) {
            return Err(VfsError::ConfigFile { path: path.clone() });
        }
        Ok(())
    }

    /// The permission bits of the regular file in `directory`, `None` when nothing is there;
    /// refuses anything else (a symlink, a directory, a FIFO, a device).
    fn existing_mode(&self, directory: &Directory, path: &RepoPath) -> Result<Option<u32>, VfsError> {
        match rustix::fs::statat(&directory.fd, directory.name.as_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => {
                let kind = FileType::from_raw_mode(stat.st_mode);
                if kind == FileType::Symlink {
                    return Err(VfsError::Symlink { path: path.clone(), target: self.link_target(path) });
                }
                check_kind(path, kind)?;
                // `st_mode` is a `u16` on some Unixes.
                #[allow(clippy::useless_conversion)]
                let mode = u32::from(stat.st_mode);
                Ok(Some(mode & 0o7777))
            }
            Err(Errno::NOENT) => Ok(None),
            Err(errno) => Err(io_error(path, errno.into())),
        }
    }

    /// Where a symlink points, root-relative, when that is inside the root (for the message).
    fn link_target(&self, path: &RepoPath) -> Option<String> {
        let real = self.resolve(path.as_str()).ok()?.real?;
        self.relative_of_canonical(&real).map(|relative| relative.to_string())
    }
}

/// Regular files only; a directory and the rest are refused by name.
fn check_kind(path: &RepoPath, kind: FileType) -> Result<(), VfsError> {
    match kind {
        FileType::RegularFile => Ok(()),
        FileType::Directory => Err(VfsError::IsDirectory { path: path.clone() }),
        other => Err(VfsError::NotRegular { path: path.clone(), kind: kind_name(other) }),
    }
}

fn io_error(path: &RepoPath, source: std::io::Error) -> VfsError {
    VfsError::Io { path: PathBuf::from(path.display()), source }
}

/// The name [`create_temporary`] gives its files: `.loupe-` the process id in hex, `-`, a
/// counter and the sub-second nanoseconds in hex run together, `.tmp`.
const TEMPORARY_PREFIX: &str = ".loupe-";
const TEMPORARY_SUFFIX: &str = ".tmp";

/// True for exactly the names [`create_temporary`] gives (so crash recovery removes only
/// loupe's own leftovers): lower-case hex, a `u32` process id (1 to 8 digits), then a `u64`
/// counter and `u32` nanoseconds (2 to 24 digits together).
pub(crate) fn is_temporary_name(name: &str) -> bool {
    let hex = |part: &str, digits: std::ops::RangeInclusive<usize>| {
        digits.contains(&part.len()) && part.bytes().all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'))
    };
    name.strip_prefix(TEMPORARY_PREFIX)
        .and_then(|rest| rest.strip_suffix(TEMPORARY_SUFFIX))
        .and_then(|unique| unique.split_once('-'))
        .is_some_and(|(pid, rest)| hex(pid, 1..=8) && hex(rest, 2..=24))
}

/// Creates `.loupe-<unique>.tmp` in `directory`, never following or reusing an entry.
fn create_temporary(directory: &OwnedFd) -> std::io::Result<(String, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    for _ in 0..16 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.subsec_nanos());
        let name = format!(
            "{TEMPORARY_PREFIX}{:x}-{:x}{nanos:x}{TEMPORARY_SUFFIX}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        match rustix::fs::openat(directory, name.as_str(), flags, Mode::from_raw_mode(0o600)) {
            Ok(fd) => return Ok((name, File::from(fd))),
            Err(Errno::EXIST) => continue,
            Err(errno) => return Err(errno.into()),
        }
    }
    Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, "no free temporary file name"))
}

/// Places `bytes` at `target`, a path in loupe's own state directory (the journal), not in
/// the repository, atomically. Its temporary file is named as the repository's are, so one
/// [`is_temporary_name`] finds a crash's leftovers in both.
pub(crate) fn write_atomically(target: &Path, bytes: &[u8], mode: Option<u32>) -> Result<(), VfsError> {
    let io = |source| VfsError::Io { path: target.to_path_buf(), source };
    let dir = target.parent().ok_or_else(|| io(std::io::Error::other("no parent directory")))?;
    let name = target.file_name().ok_or_else(|| io(std::io::Error::other("no file name")))?;
    let mode = match mode {
        Some(mode) => mode,
        None => match fs::symlink_metadata(target) {
            Ok(metadata) => metadata.permissions().mode() & 0o7777,
            Err(_) => NEW_FILE_MODE,
        },
    };
    let directory = rustix::fs::open(dir, directory_flags(), Mode::empty()).map_err(|errno| io(errno.into()))?;
    let (temporary, mut file) = create_temporary(&directory).map_err(io)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.set_permissions(fs::Permissions::from_mode(mode)))
        .and_then(|()| file.sync_all())
        .and_then(|()| {
            rustix::fs::renameat(&directory, temporary.as_str(), &directory, name).map_err(std::io::Error::from)
        });
    if let Err(source) = written {
        let _ = rustix::fs::unlinkat(&directory, temporary.as_str(), AtFlags::empty());
        return Err(io(source));
    }
    // Best effort: some file systems refuse to sync a directory.
    let _ = rustix::fs::fsync(&directory);
    Ok(())
}

/// Makes a rename or removal in `dir` (loupe's state directory) durable. Best effort: some
/// file systems refuse it.
pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(handle) = File::open(dir) {
        let _ = handle.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_are_exactly_the_ones_create_temporary_gives() {
        let dir = tempfile::tempdir().unwrap();
        let directory = rustix::fs::open(dir.path(), directory_flags(), Mode::empty()).unwrap();
        for _ in 0..3 {
            let (name, _file) = create_temporary(&directory).unwrap();
            assert!(is_temporary_name(&name), "{name}");
        }
        // What `write_atomically` leaves behind is named the same way.
        write_atomically(&dir.path().join("manifest.json"), b"{}", None).unwrap();
        for entry in fs::read_dir(dir.path()).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            assert!(name == "manifest.json" || is_temporary_name(&name), "{name}");
        }
        let max = format!(".loupe-{:x}-{:x}{:x}.tmp", u32::MAX, u64::MAX, 999_999_999_u32);
        assert!(is_temporary_name(&max), "{max}");
        for name in [
            ".loupe-.tmp",
            ".loupe-1f-.tmp",
            ".loupe-1f-2.tmp",
            ".loupe--2a3b.tmp",
            ".loupe-1f-2a3b.tmp.bak",
            "loupe-1f-2a3b.tmp",
            "x.loupe-1f-2a3b.tmp",
            ".loupe-1F-2a3b.tmp",
            ".loupe-1f-2a-3b.tmp",
            ".loupe-1f-2a 3b.tmp",
            ".loupe-123456789-2a3b.tmp",
            ".loupe-Ab12Cd.tmp",
            ".loupe-abc123.tmp",
        ] {
            assert!(!is_temporary_name(name), "{name}");
        }
        let long = format!(".loupe-1f-{}.tmp", "a".repeat(25));
        assert!(!is_temporary_name(&long));
    }
}
