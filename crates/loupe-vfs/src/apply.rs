//! The one write path into the repository: placing a file's new bytes atomically, or
//! removing it, after checking that the path is a regular file (or nothing) inside the root.
//!
//! Every operation opens the file's directory beneath the root by handle (`beneath.rs`) and
//! checks, on that handle, that the file it would touch really lies inside the root, is not
//! excluded (so `gitlink/hooks/x` with `gitlink -> .git` is refused like `.git/hooks/x`), is
//! not loupe's own configuration, and is a regular file or nothing (never a symlink, a
//! directory, a FIFO or a device). Then, through that directory handle only: the new bytes go
//! to a temporary file created new (never through an entry that exists), are flushed, take the
//! permissions of the file they replace, and are renamed over it beneath the handle; the
//! directory is synced so the rename survives a crash (where the platform can sync one). Removal
//! is an unlink beneath that handle; missing directories are created one component at a time
//! under a checked handle. No path is resolved again between a check and its use. Only `journal.rs` calls this module;
//! everything else in the workspace reads.

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, OpenOptions};
use loupe_core::RepoPath;

use crate::beneath::{Kind, Missing, RacePoint, Want, check_kind, io_error};
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
    dir: Dir,
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
        // Refuses a symlink by name (an open that does not follow it fails differently per
        // platform), then opens without following, so one planted in between fails the open.
        if self.existing_mode(&directory, path)?.is_none() {
            return Ok(None);
        }
        let file = match directory.dir.open_with(&directory.name, &Want::File.options(FollowSymlinks::No)) {
            Ok(file) => file.into_std(),
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(io_error(path, error)),
        };
        let metadata = file.metadata().map_err(|source| io_error(path, source))?;
        check_kind(path, Kind::of_std(metadata.file_type()))?;
        let mut bytes = Vec::new();
        (&file).read_to_end(&mut bytes).map_err(|source| io_error(path, source))?;
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
        place(&directory.dir, &directory.name, bytes, mode).map_err(|source| io_error(path, source))
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
        match directory.dir.remove_file(&directory.name) {
            Ok(()) => {}
            Err(error) if error.kind() == ErrorKind::NotFound => {}
            Err(error) => return Err(io_error(path, error)),
        }
        sync(&directory.dir);
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
        let Ok(opened) = self.open_beneath(dir, Want::Directory, Missing::Refuse) else { return removed };
        if self.check_excluded(&opened.real).is_err() {
            return removed;
        }
        let (directory, real) = opened.into_dir();
        let Ok(entries) = directory.entries() else { return removed };
        for entry in entries.filter_map(Result::ok) {
            let Ok(name) = entry.file_name().into_string() else { continue };
            if !is_temporary_name(&name) {
                continue;
            }
            let Ok(metadata) = directory.symlink_metadata(&name) else { continue };
            if Kind::of_cap(metadata.file_type()) != Kind::File || metadata.len() > longest {
                continue;
            }
            let options = Want::File.options(FollowSymlinks::No);
            let Ok(file) = directory.open_with(&name, &options) else { continue };
            let mut bytes = Vec::new();
            let read = file.into_std().take(longest.saturating_add(1)).read_to_end(&mut bytes);
            if read.is_err() || !is_ours(&bytes) {
                continue;
            }
            if directory.remove_file(&name).is_ok() {
                removed.push(real.join(&name));
            }
        }
        if !removed.is_empty() {
            sync(&directory);
        }
        removed
    }

    /// The directories above `path` that do not exist yet, outermost first, by their real
    /// root-relative paths: what writing it with `create_dirs` would create.
    pub(crate) fn missing_directories(&self, path: &RepoPath) -> Vec<RepoPath> {
        let mut missing = Vec::new();
        let mut dir = path.parent();
        loop {
            match self.open_beneath(&dir, Want::Directory, Missing::Refuse) {
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
        let Ok(parent) = self.open_beneath(&dir.parent(), Want::Directory, Missing::Refuse) else { return false };
        let (parent, real) = parent.into_dir();
        if self.check_excluded(&real.join(dir.file_name())).is_err() {
            return false;
        }
        // Never through a symlink in its place: removing a directory does not follow one.
        let is_directory = parent
            .symlink_metadata(dir.file_name())
            .is_ok_and(|metadata| Kind::of_cap(metadata.file_type()) == Kind::Directory);
        let removed = is_directory && parent.remove_dir(dir.file_name()).is_ok();
        if removed {
            sync(&parent);
        }
        removed
    }

    /// What every loupe writing this root locks. On Unix the root directory this `Root`
    /// holds, opened again readable (an `O_PATH` descriptor cannot be locked): through the
    /// handle, not the path, which may name another directory by now.
    #[cfg(not(windows))]
    pub fn root_lock_file(&self) -> std::io::Result<File> {
        Ok(self.handle().open_with(".", &Want::Directory.options(FollowSymlinks::Yes))?.into_std())
    }

    /// What every loupe writing this root locks. Windows cannot lock a directory
    /// (`LockFileEx` wants a file), and nothing is written into the repository for a lock: a
    /// file in the user's temporary directory named after the root's canonical path (its case
    /// folded, as the file system folds it).
    #[cfg(windows)]
    pub fn root_lock_file(&self) -> std::io::Result<File> {
        let key = loupe_core::ContentHash::of(self.canonical().to_string_lossy().to_lowercase().as_bytes());
        let path = std::env::temp_dir().join(format!("loupe-root-{key}.lock"));
        crate::clear_way(&path)?;
        crate::open_own(&path, crate::OwnAccess::Write)
    }

    /// Opens the directory of `path` beneath the root (creating what is missing when asked)
    /// and checks the file it names, by its real path, before anything is touched there.
    fn open_directory(&self, path: &RepoPath, create_dirs: bool) -> Result<Directory, VfsError> {
        self.check_writable(path)?;
        let missing = if create_dirs { Missing::Create } else { Missing::Refuse };
        let opened = self.open_beneath(&path.parent(), Want::Directory, missing).map_err(|error| match error {
            VfsError::NotFound { .. } => VfsError::MissingDirectory { path: path.parent() },
            other => other,
        })?;
        let (dir, real) = opened.into_dir();
        self.check_writable(&real.join(path.file_name()))?;
        Ok(Directory { dir, name: path.file_name().to_owned() })
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
        match directory.dir.symlink_metadata(&directory.name) {
            Ok(metadata) => {
                let kind = Kind::of_cap(metadata.file_type());
                if kind == Kind::Symlink {
                    return Err(VfsError::Symlink { path: path.clone(), target: self.link_target(path) });
                }
                check_kind(path, kind)?;
                Ok(Some(mode_bits(&metadata.permissions())))
            }
            Err(error) if error.kind() == ErrorKind::NotFound => Ok(None),
            Err(error) => Err(io_error(path, error)),
        }
    }

    /// Where a symlink points, root-relative, when that is inside the root (for the message).
    fn link_target(&self, path: &RepoPath) -> Option<String> {
        let real = self.resolve(path.as_str()).ok()?.real?;
        self.relative_of_canonical(&real).map(|relative| relative.to_string())
    }
}

/// The permission bits loupe keeps of a file: the mode on Unix; on Windows only whether it is
/// read-only (0o444) or not (0o644).
fn mode_bits(permissions: &cap_std::fs::Permissions) -> u32 {
    #[cfg(unix)]
    {
        use cap_std::fs::PermissionsExt;
        permissions.mode() & 0o7777
    }
    #[cfg(not(unix))]
    {
        if permissions.readonly() { 0o444 } else { NEW_FILE_MODE }
    }
}

/// Makes a rename or removal in `dir` durable. Best effort: some file systems (and Windows,
/// for a directory) refuse it.
fn sync(dir: &Dir) {
    // Opened again readable: a handle only walked through (`O_PATH`) cannot be synced.
    if let Ok(handle) = dir.open_with(".", &Want::Directory.options(FollowSymlinks::Yes)) {
        let _ = handle.sync_all();
    }
}

/// Places `bytes` as `name` in `dir` atomically: a new temporary file, flushed, given `mode`,
/// renamed over `name`; the temporary file is removed when any step fails.
fn place(dir: &Dir, name: &str, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let (temporary, mut file) = create_temporary(dir)?;
    let written =
        file.write_all(bytes).and_then(|()| set_permissions(&file, mode)).and_then(|()| file.sync_all()).and_then(
            |()| {
                drop(file);
                dir.rename(&temporary, dir, name)
            },
        );
    if let Err(error) = written {
        let _ = dir.remove_file(&temporary);
        return Err(error);
    }
    sync(dir);
    Ok(())
}

/// Gives `file` the permission bits of [`mode_bits`].
fn set_permissions(file: &File, mode: u32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let mut permissions = file.metadata()?.permissions();
        permissions.set_readonly(mode & 0o222 == 0);
        file.set_permissions(permissions)
    }
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
fn create_temporary(directory: &Dir) -> std::io::Result<(String, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut options = OpenOptions::new();
    options.write(true).create_new(true).follow(FollowSymlinks::No);
    #[cfg(unix)]
    cap_std::fs::OpenOptionsExt::mode(&mut options, 0o600);
    for _ in 0..16 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.subsec_nanos());
        let name = format!(
            "{TEMPORARY_PREFIX}{:x}-{:x}{nanos:x}{TEMPORARY_SUFFIX}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        match directory.open_with(&name, &options) {
            Ok(file) => return Ok((name, file.into_std())),
            Err(error) if error.kind() == ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(error),
        }
    }
    Err(std::io::Error::new(ErrorKind::AlreadyExists, "no free temporary file name"))
}

/// Places `bytes` at `target`, a path in loupe's own state directory (the journal), not in
/// the repository, atomically. Its temporary file is named as the repository's are, so one
/// [`is_temporary_name`] finds a crash's leftovers in both.
pub(crate) fn write_atomically(target: &Path, bytes: &[u8], mode: Option<u32>) -> Result<(), VfsError> {
    let io = |source| VfsError::Io { path: target.to_path_buf(), source };
    let dir = target.parent().ok_or_else(|| io(std::io::Error::other("no parent directory")))?;
    let name =
        target.file_name().and_then(|name| name.to_str()).ok_or_else(|| io(std::io::Error::other("no file name")))?;
    let directory = Dir::open_ambient_dir(dir, cap_std::ambient_authority()).map_err(io)?;
    let mode = match mode {
        Some(mode) => mode,
        None => match directory.symlink_metadata(name) {
            Ok(metadata) => mode_bits(&metadata.permissions()),
            Err(_) => NEW_FILE_MODE,
        },
    };
    place(&directory, name, bytes, mode).map_err(io)
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
        let directory = Dir::open_ambient_dir(dir.path(), cap_std::ambient_authority()).unwrap();
        for _ in 0..3 {
            let (name, _file) = create_temporary(&directory).unwrap();
            assert!(is_temporary_name(&name), "{name}");
        }
        // What `write_atomically` leaves behind is named the same way.
        write_atomically(&dir.path().join("manifest.json"), b"{}", None).unwrap();
        for entry in std::fs::read_dir(dir.path()).unwrap() {
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
