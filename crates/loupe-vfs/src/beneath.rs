//! Opening repository files and directories beneath the root by directory handle (§3.1).
//!
//! Every open of a file in the repository goes through [`Root::open_beneath`], relative to the
//! root directory the `Root` holds open, on every platform through one mechanism: `cap-std`
//! (docs/decisions.md, "Containment"). It resolves the path below that handle and refuses
//! anything that climbs out (on Linux with `openat2(RESOLVE_BENEATH)`, on macOS and Windows by
//! opening one component at a time under handles it holds; on Windows `NtCreateFile` relative
//! to a directory handle, reparse points — symlinks and junctions — resolved inside the root).
//! Where it refuses (an absolute symlink that points back inside the root) or a missing
//! directory is to be created, a walk here resolves one component at a time under the handle
//! it already holds, expanding symlinks itself and never letting `..` climb above the root. The
//! opened handle's real path is then read back from the kernel (Linux `/proc/self/fd`, macOS
//! `F_GETPATH`, Windows `GetFinalPathNameByHandleW`) and must lie inside the root; callers check
//! it against the exclusions, so another spelling of a name (a case, a Windows short name, a
//! Unicode form) that reaches `.git` or a secret is refused by what the file really is. What
//! follows (reading, creating the temporary file, renaming, unlinking, creating a directory)
//! is done through that handle, so no path is resolved again between the check and the use,
//! and a directory swapped for a symlink in between changes nothing.
//!
//! Files are opened non-blocking and without a controlling terminal, and callers serve regular
//! files only: a FIFO, a socket or a device is refused before a byte is read from it.

use std::collections::VecDeque;
use std::fs::File;
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt, OpenOptionsMaybeDirExt};
use cap_std::fs::{Dir, OpenOptions};
use loupe_core::RepoPath;

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
    pub(crate) file: File,
    pub(crate) real: RepoPath,
}

impl Opened {
    /// The opened directory as a handle to open, create, rename and remove beneath.
    pub(crate) fn into_dir(self) -> (Dir, RepoPath) {
        (Dir::from_std_file(self.file), self.real)
    }
}

/// What to do about a directory missing on the way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Missing {
    Refuse,
    /// Create it (one component at a time, under the directory above it).
    Create,
}

/// What an open is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Want {
    /// A file to read: a FIFO must not block the open, a terminal must not become ours.
    File,
    /// A directory that files are listed, created, renamed and unlinked in (and synced).
    Directory,
}

impl Want {
    /// The options of an open for this, following a symlink at the end or not.
    pub(crate) fn options(self, follow: FollowSymlinks) -> OpenOptions {
        let mut options = OpenOptions::new();
        // A directory readable (not `O_PATH`), so it can be listed, locked and synced.
        options.read(true).follow(follow).maybe_dir(self == Want::Directory);
        #[cfg(unix)]
        cap_std::fs::OpenOptionsExt::custom_flags(&mut options, self.unix_flags().bits() as i32);
        options
    }

    /// Never blocking (a FIFO); a file never becomes our controlling terminal; a directory
    /// only where a directory is wanted, so a FIFO in its place fails the open.
    #[cfg(unix)]
    pub(crate) fn unix_flags(self) -> rustix::fs::OFlags {
        use rustix::fs::OFlags;
        match self {
            Want::File => OFlags::NONBLOCK | OFlags::NOCTTY,
            Want::Directory => OFlags::DIRECTORY | OFlags::NONBLOCK,
        }
    }
}

/// The kinds of entry loupe tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Directory,
    Symlink,
    /// A FIFO, a socket, a device: never opened for reading or replaced.
    Other(&'static str),
}

/// A function giving the [`Kind`] of a `std` or a `cap-std` file type: the same methods,
/// through each one's own Unix extension trait.
macro_rules! kind_of {
    ($name:ident, $file_type:ty, $unix_ext:path) => {
        pub(crate) fn $name(file_type: $file_type) -> Kind {
            #[cfg(unix)]
            use $unix_ext;
            if file_type.is_symlink() {
                return Kind::Symlink;
            }
            if file_type.is_dir() {
                return Kind::Directory;
            }
            if file_type.is_file() {
                return Kind::File;
            }
            #[cfg(unix)]
            for (is, name) in [
                (file_type.is_fifo(), "FIFO"),
                (file_type.is_socket(), "socket"),
                (file_type.is_char_device(), "character device"),
                (file_type.is_block_device(), "block device"),
            ] {
                if is {
                    return Kind::Other(name);
                }
            }
            Kind::Other("special file")
        }
    };
}

impl Kind {
    kind_of!(of_std, std::fs::FileType, std::os::unix::fs::FileTypeExt);
    kind_of!(of_cap, cap_std::fs::FileType, cap_std::fs::FileTypeExt);

    /// The name of a kind loupe refuses to read or write, for messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::File => "file",
            Kind::Directory => "directory",
            Kind::Symlink => "symlink",
            Kind::Other(name) => name,
        }
    }
}

/// Opens the workspace root itself, the handle everything else is opened beneath.
pub(crate) fn open_root(canonical: &Path) -> Result<Dir, std::io::Error> {
    Dir::open_ambient_dir(canonical, cap_std::ambient_authority())
}

/// Whether an open failed because the entry is not what was walked past (it changed into a
/// symlink, or away, in between): the walk looks at it again.
fn changed_in_between(error: &std::io::Error) -> bool {
    if matches!(error.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) {
        return true;
    }
    #[cfg(unix)]
    if rustix::io::Errno::from_io_error(error) == Some(rustix::io::Errno::LOOP) {
        return true;
    }
    false
}

/// The parts of a symlink's target, as the walk takes them.
fn link_parts(target: &Path) -> Vec<String> {
    target
        .components()
        .filter_map(|component| match component {
            Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
            Component::ParentDir => Some("..".to_owned()),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
        })
        .collect()
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

    pub(crate) fn handle(&self) -> &Dir {
        &self.directory
    }

    /// Opens `path` (root-relative, as asked) for `want`, beneath the root, following
    /// symlinks only while they stay inside it. Refuses an escape with `OutsideRoot`; the
    /// caller checks `real` against the exclusions and the opened file's type.
    pub(crate) fn open_beneath(&self, path: &RepoPath, want: Want, missing: Missing) -> Result<Opened, VfsError> {
        let opened = match missing {
            Missing::Refuse => match self.open_by_cap_std(path, want)? {
                Some(opened) => opened,
                None => self.open_by_walk(path, want, missing)?,
            },
            Missing::Create => self.open_by_walk(path, want, missing)?,
        };
        // The walk knows the names it took; the kernel knows where the file is now.
        let opened = match self.real_path_of(&opened.file, path)? {
            Some(real) => Opened { real, ..opened },
            None => opened,
        };
        if want == Want::Directory {
            let metadata = opened.file.metadata().map_err(|source| io_error(path, source))?;
            if !metadata.is_dir() {
                return Err(VfsError::NotADirectory { path: path.to_string() });
            }
        }
        Ok(opened)
    }

    /// One open by `cap-std` below the root handle. `None` sends the caller to the walk, which
    /// handles what it refuses (absolute symlinks inside the root) and explains errors.
    fn open_by_cap_std(&self, path: &RepoPath, want: Want) -> Result<Option<Opened>, VfsError> {
        let name = if path.is_root() { "." } else { path.as_str() };
        match self.handle().open_with(name, &want.options(FollowSymlinks::Yes)) {
            Ok(file) => Ok(Some(Opened { file: file.into_std(), real: path.clone() })),
            // An escape is refused as such; a missing component is simply missing.
            Err(error) if error.kind() == ErrorKind::NotFound => Err(VfsError::NotFound { path: path.clone() }),
            Err(_) => Ok(None),
        }
    }

    /// Resolves `path` one component at a time under handles already held: each directory
    /// opened without following a symlink, symlinks read and expanded here, `..` taken from
    /// the stack of directories walked (so it never climbs above the root).
    fn open_by_walk(&self, path: &RepoPath, want: Want, missing: Missing) -> Result<Opened, VfsError> {
        let outside = || VfsError::OutsideRoot { requested: path.to_string() };
        let io = |source: std::io::Error| io_error(path, source);
        let mut pending: VecDeque<String> = path.components().map(str::to_owned).collect();
        let mut stack: Vec<Dir> = Vec::new();
        let mut real = RepoPath::root();
        let mut detours = 0;
        let mut detour = || {
            detours += 1;
            if detours > MAX_DETOURS {
                Err(io(std::io::Error::other("too many levels of symbolic links")))
            } else {
                Ok(())
            }
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
            let dir = stack.last().unwrap_or(self.handle());
            let here = real.join(&name);
            let kind = match dir.symlink_metadata(&name) {
                Ok(metadata) => Kind::of_cap(metadata.file_type()),
                Err(error) if error.kind() == ErrorKind::NotFound && missing == Missing::Create => {
                    // Never create a directory where nothing may be written (`.git/`, secrets).
                    self.check_excluded(&here)?;
                    match dir.create_dir(&name) {
                        Ok(()) => {}
                        Err(error) if error.kind() == ErrorKind::AlreadyExists => {}
                        Err(error) => return Err(io(error)),
                    }
                    detour()?;
                    pending.push_front(name);
                    continue;
                }
                Err(error) if error.kind() == ErrorKind::NotFound => {
                    return Err(VfsError::NotFound { path: path.clone() });
                }
                Err(error) => return Err(io(error)),
            };
            if kind == Kind::Symlink {
                detour()?;
                let target = dir.read_link_contents(&name).map_err(io)?;
                let text = target.to_str().ok_or_else(|| io(ErrorKind::InvalidData.into()))?;
                // A `RepoPath` never holds a control character, so neither does a link's way.
                if text.chars().any(char::is_control) {
                    return Err(io(ErrorKind::InvalidData.into()));
                }
                let parts = if target.has_root() || target.is_absolute() {
                    stack.clear();
                    real = RepoPath::root();
                    self.link_inside_root(&target).ok_or_else(outside)?
                } else {
                    link_parts(&target)
                };
                for part in parts.into_iter().rev() {
                    pending.push_front(part);
                }
                continue;
            }
            let last = pending.is_empty();
            if last && let Kind::Other(kind) = kind {
                // A FIFO, socket or device: every caller wants a file or a directory, and
                // opening one can block, fail or have side effects.
                return Err(VfsError::NotRegular { path: path.clone(), kind });
            }
            if !last && kind != Kind::Directory {
                return Err(VfsError::NotADirectory { path: here.to_string() });
            }
            let opened = if last {
                dir.open_with(&name, &want.options(FollowSymlinks::No)).map(cap_std::fs::File::into_std)
            } else {
                dir.open_dir_nofollow(&name).map(Dir::into_std_file)
            };
            match opened {
                Ok(file) if last => return Ok(Opened { file, real: here }),
                Ok(file) => {
                    stack.push(Dir::from_std_file(file));
                    real = here;
                }
                // The entry changed between the look and the open (it became a symlink, or
                // went away): look at it again.
                Err(error) if changed_in_between(&error) => {
                    detour()?;
                    pending.push_front(name);
                }
                Err(error) => return Err(io(error)),
            }
        }
        // No component left: the root itself, or a directory reached through `..` or a link.
        let dir = stack.last().unwrap_or(self.handle());
        let file = dir.open_with(".", &want.options(FollowSymlinks::Yes)).map_err(io)?.into_std();
        Ok(Opened { file, real })
    }

    /// The components of an absolute symlink target below the root (as given or canonical),
    /// unresolved: the walk takes them one by one. `None` when it points elsewhere.
    fn link_inside_root(&self, target: &Path) -> Option<Vec<String>> {
        let target = crate::plain_path(target);
        [self.canonical(), self.given()].into_iter().filter(|base| base.is_absolute()).find_map(|base| {
            let rest = target.strip_prefix(crate::plain_path(base)).ok()?;
            rest.iter().map(|part| part.to_str().map(str::to_owned)).collect()
        })
    }

    /// Where the kernel says an opened handle is, root-relative; `OutsideRoot` when it is not
    /// under the root, `None` when the system cannot say (no `/proc`, an unknown platform).
    fn real_path_of(&self, file: &File, requested: &RepoPath) -> Result<Option<RepoPath>, VfsError> {
        let Some(real) = kernel_path(file) else { return Ok(None) };
        match self.relative_of_canonical(&crate::plain_path(&real)) {
            Some(relative) => Ok(Some(relative)),
            None => Err(VfsError::OutsideRoot { requested: requested.to_string() }),
        }
    }

    /// Reads the regular file at `path` (as asked), opened beneath the root by handle:
    /// its real path must be inside the root and not excluded, and it must be a regular file
    /// of at most `max_bytes` (a FIFO, socket or device is refused without reading).
    pub(crate) fn read_regular(&self, path: &RepoPath, max_bytes: u64) -> Result<Vec<u8>, VfsError> {
        self.read_regular_with_mode(path, max_bytes).map(|(bytes, _)| bytes)
    }

    /// `read_regular`, and whether the opened file is executable by its owner (Unix; false
    /// where files carry no such bit), from the same handle's metadata.
    pub(crate) fn read_regular_with_mode(&self, path: &RepoPath, max_bytes: u64) -> Result<(Vec<u8>, bool), VfsError> {
        let io = |source: std::io::Error| io_error(path, source);
        self.check_excluded(path)?;
        self.race(RacePoint::Checked, path);
        let opened = self.open_beneath(path, Want::File, Missing::Refuse)?;
        self.check_excluded(&opened.real)?;
        self.race(RacePoint::Opened, path);
        let metadata = opened.file.metadata().map_err(io)?;
        check_kind(path, Kind::of_std(metadata.file_type()))?;
        let size = metadata.len();
        if size > max_bytes {
            return Err(VfsError::TooLarge { path: path.clone(), size, limit: max_bytes });
        }
        let bytes = read_sized(&opened.file, size, max_bytes).map_err(io)?;
        if bytes.len() as u64 > max_bytes {
            return Err(VfsError::TooLarge { path: path.clone(), size: bytes.len() as u64, limit: max_bytes });
        }
        Ok((bytes, is_executable(&metadata)))
    }
}

#[cfg(unix)]
fn is_executable(metadata: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    metadata.permissions().mode() & 0o100 != 0
}

#[cfg(not(unix))]
fn is_executable(_: &std::fs::Metadata) -> bool {
    false
}

/// Regular files only; a directory and the rest are refused by name.
pub(crate) fn check_kind(path: &RepoPath, kind: Kind) -> Result<(), VfsError> {
    match kind {
        Kind::File => Ok(()),
        Kind::Directory => Err(VfsError::IsDirectory { path: path.clone() }),
        other => Err(VfsError::NotRegular { path: path.clone(), kind: other.name() }),
    }
}

pub(crate) fn io_error(path: &RepoPath, source: std::io::Error) -> VfsError {
    VfsError::Io { path: PathBuf::from(path.display()), source }
}

/// Where the system says an open handle's file is, when it can say.
#[cfg(target_os = "linux")]
fn kernel_path(file: &File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

#[cfg(target_vendor = "apple")]
fn kernel_path(file: &File) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let path = rustix::fs::getpath(file).ok()?;
    Some(PathBuf::from(std::ffi::OsString::from_vec(path.into_bytes())))
}

#[cfg(windows)]
fn kernel_path(file: &File) -> Option<PathBuf> {
    winx::file::get_file_path(file).ok()
}

#[cfg(not(any(target_os = "linux", target_vendor = "apple", windows)))]
fn kernel_path(_file: &File) -> Option<PathBuf> {
    None
}

/// Opens the file at `relative` beneath the directory `root` for reading, never through a
/// symbolic link on the way or at the end (one is refused as `ErrorKind::InvalidInput`) and
/// never blocking: for a repository file read before there is a [`Root`] (its configuration).
pub fn open_without_links(root: &Path, relative: &Path) -> std::io::Result<File> {
    let through_link =
        || std::io::Error::new(ErrorKind::InvalidInput, "a symbolic link is on the way; links are not followed here");
    let mut dir = Dir::open_ambient_dir(root, cap_std::ambient_authority())?;
    let mut parts = relative.components().peekable();
    while let Some(part) = parts.next() {
        let Component::Normal(name) = part else { return Err(through_link()) };
        if dir.symlink_metadata(name)?.is_symlink() {
            return Err(through_link());
        }
        if parts.peek().is_none() {
            return Ok(dir.open_with(name, &Want::File.options(FollowSymlinks::No))?.into_std());
        }
        dir = dir.open_dir_nofollow(name)?;
    }
    Err(ErrorKind::NotFound.into())
}

/// Fills `bytes` from `offset` of `file`, leaving its cursor alone where the platform can.
pub fn read_exact_at(file: &File, bytes: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, bytes, offset)
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::FileExt;
        let mut filled = 0;
        while filled < bytes.len() {
            match file.seek_read(&mut bytes[filled..], offset + filled as u64) {
                Ok(0) => return Err(ErrorKind::UnexpectedEof.into()),
                Ok(read) => filled += read,
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
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
