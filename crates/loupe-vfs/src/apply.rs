//! The one write path into the repository: placing a file's new bytes atomically, or
//! removing it, after checking that the path is a regular file (or nothing) inside the root.
//!
//! A write goes to a temporary file in the same directory, is flushed to disk, takes the
//! permissions of the file it replaces, and is renamed over it; the directory is synced so
//! the rename survives a crash. A path whose last component is a symlink is refused, and
//! every directory on the way is resolved canonically and must lie inside the root, so
//! nothing is ever written through a symlink or outside the root. Only `journal.rs` calls
//! this module; everything else in the workspace reads.

use std::fs::{self, File};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use loupe_core::RepoPath;

use crate::{Root, VfsError};

/// Permissions for a file that did not exist before (the common umask applied to 0666).
const NEW_FILE_MODE: u32 = 0o644;

impl Root {
    /// The real path a write to `path` lands on: its canonical parent directory (inside the
    /// root, created first when `create_dirs`) joined with its file name. Refuses symlinks,
    /// directories, exclusions and escapes.
    pub(crate) fn write_target(&self, path: &RepoPath, create_dirs: bool) -> Result<PathBuf, VfsError> {
        let outside = || VfsError::OutsideRoot { requested: path.to_string() };
        if path.is_root() {
            return Err(VfsError::IsDirectory { path: path.clone() });
        }
        // The exclusion and containment checks of a read, on the path as asked.
        let resolved = self.resolve(path.as_str())?;
        let parent = path.parent();
        let parent_abs = self.canonical().join(parent.as_str());
        let real_parent = match parent_abs.canonicalize() {
            Ok(real) => real,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound && create_dirs => {
                // `resolve` checked that the nearest existing ancestor is inside the root;
                // create the rest below it, one component at a time, refusing symlinks.
                self.create_dirs_inside(&parent)?;
                parent_abs.canonicalize().map_err(|source| VfsError::Io { path: parent_abs.clone(), source })?
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(VfsError::MissingDirectory { path: parent });
            }
            Err(source) => return Err(VfsError::Io { path: parent_abs, source }),
        };
        if !real_parent.starts_with(self.canonical()) || !real_parent.is_dir() {
            return Err(outside());
        }
        let target = real_parent.join(path.file_name());
        match fs::symlink_metadata(&target) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                return Err(VfsError::Symlink {
                    path: path.clone(),
                    target: resolved.real.map(|real| self.display(&real)),
                });
            }
            Ok(metadata) if metadata.is_dir() => return Err(VfsError::IsDirectory { path: path.clone() }),
            _ => {}
        }
        Ok(target)
    }

    /// The current bytes at a write target, `None` when nothing is there.
    pub(crate) fn current_bytes(&self, target: &Path) -> Result<Option<Vec<u8>>, VfsError> {
        match fs::read(target) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(VfsError::Io { path: target.to_path_buf(), source }),
        }
    }

    fn create_dirs_inside(&self, dir: &RepoPath) -> Result<(), VfsError> {
        let mut at = self.canonical().to_path_buf();
        for component in dir.components() {
            at.push(component);
            match fs::symlink_metadata(&at) {
                Ok(metadata) if metadata.is_dir() => {}
                Ok(metadata) if metadata.file_type().is_symlink() => {
                    let real = at.canonicalize().map_err(|source| VfsError::Io { path: at.clone(), source })?;
                    if !real.starts_with(self.canonical()) || !real.is_dir() {
                        return Err(VfsError::OutsideRoot { requested: dir.to_string() });
                    }
                    at = real;
                }
                Ok(_) => return Err(VfsError::NotADirectory { path: self.display(&at) }),
                Err(_) => fs::create_dir(&at).map_err(|source| VfsError::Io { path: at.clone(), source })?,
            }
        }
        Ok(())
    }

    fn display(&self, real: &Path) -> String {
        real.strip_prefix(self.canonical())
            .map_or_else(|_| real.display().to_string(), |rest| rest.display().to_string())
    }
}

/// Places `bytes` at `target` atomically. `mode` is the permission bits to give the file
/// (the replaced file's, or the recorded ones when a deleted file comes back).
pub(crate) fn write_atomically(target: &Path, bytes: &[u8], mode: Option<u32>) -> Result<(), VfsError> {
    let io = |source| VfsError::Io { path: target.to_path_buf(), source };
    let dir = target.parent().ok_or_else(|| io(std::io::Error::other("no parent directory")))?;
    let mode = match mode {
        Some(mode) => mode,
        None => match fs::symlink_metadata(target) {
            Ok(metadata) => metadata.permissions().mode() & 0o7777,
            Err(_) => NEW_FILE_MODE,
        },
    };
    let mut temporary = tempfile::Builder::new().prefix(".loupe-").suffix(".tmp").tempfile_in(dir).map_err(io)?;
    temporary.write_all(bytes).map_err(io)?;
    temporary.as_file().set_permissions(fs::Permissions::from_mode(mode)).map_err(io)?;
    temporary.as_file().sync_all().map_err(io)?;
    temporary.persist(target).map_err(|error| io(error.error))?;
    sync_dir(dir);
    Ok(())
}

/// Removes the file at `target` (a missing file is already removed).
pub(crate) fn remove(target: &Path) -> Result<(), VfsError> {
    match fs::remove_file(target) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => return Err(VfsError::Io { path: target.to_path_buf(), source }),
    }
    if let Some(dir) = target.parent() {
        sync_dir(dir);
    }
    Ok(())
}

/// The permission bits of the file at `target`, when there is one.
pub(crate) fn mode_of(target: &Path) -> Option<u32> {
    fs::symlink_metadata(target).ok().map(|metadata| metadata.permissions().mode() & 0o7777)
}

/// Makes a rename or removal in `dir` durable. Best effort: some file systems refuse it.
pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(handle) = File::open(dir) {
        let _ = handle.sync_all();
    }
}
