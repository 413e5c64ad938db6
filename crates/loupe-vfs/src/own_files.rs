//! loupe's own files outside the repository (the index directory, the edit journal): what is
//! planted under one of their names is damage and is cleared, never followed.

use std::fs;
use std::io;
use std::path::Path;

/// How many names (hard links) an open file has, on every platform (`GetFileInformationByHandle`
/// on Windows, through `cap-fs-ext`).
pub fn link_count(file: &fs::File) -> io::Result<u64> {
    let metadata = cap_std::fs::Metadata::from_file(file)?;
    Ok(cap_fs_ext::MetadataExt::nlink(&metadata))
}

/// How [`open_own`] opens a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnAccess {
    Read,
    /// For reading, through a link (the user's config file, which dotfile managers link).
    ReadThroughLinks,
    /// For writing, created when missing (mode 0644 on Unix), never truncated: a lock file.
    Write,
}

/// Opens one of loupe's own files (or the user's config): never through a link planted under
/// its name unless asked, never blocking
/// on a FIFO, and only a regular file (anything else is `InvalidData`). The platform's own
/// flags for that are here, once: `O_NOFOLLOW | O_NONBLOCK` on Unix,
/// `FILE_FLAG_OPEN_REPARSE_POINT` on Windows.
pub fn open_own(path: &Path, access: OwnAccess) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    match access {
        OwnAccess::Read | OwnAccess::ReadThroughLinks => options.read(true),
        OwnAccess::Write => options.write(true).create(true).truncate(false),
    };
    #[cfg(unix)]
    {
        use rustix::fs::OFlags;
        use std::os::unix::fs::OpenOptionsExt;
        let links = if access == OwnAccess::ReadThroughLinks { OFlags::empty() } else { OFlags::NOFOLLOW };
        options.custom_flags((links | OFlags::NONBLOCK).bits() as i32);
        options.mode(0o644);
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        /// `FILE_FLAG_OPEN_REPARSE_POINT`: a link is opened itself (and refused below).
        const OPEN_REPARSE_POINT: u32 = 0x0020_0000;
        if access != OwnAccess::ReadThroughLinks {
            options.custom_flags(OPEN_REPARSE_POINT);
        }
    }
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is not a regular file; it will be replaced", path.display()),
        ));
    }
    Ok(file)
}

/// Makes `path` writable by a rename or a create: whatever is there and is not a regular file
/// (a directory, a symbolic link, a FIFO or device node) is damage in loupe's own directory and
/// is removed. A link is removed itself, never what it points to; a directory with everything
/// beneath it (`remove_dir_all` does not follow links inside it).
pub fn clear_way(path: &Path) -> io::Result<()> {
    let Ok(metadata) = fs::symlink_metadata(path) else { return Ok(()) };
    if metadata.is_file() {
        return Ok(());
    }
    tracing::warn!("{} is not a regular file; replacing it", path.display());
    if metadata.is_dir() { fs::remove_dir_all(path) } else { fs::remove_file(path) }
}
