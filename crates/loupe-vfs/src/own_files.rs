//! loupe's own files outside the repository (the index directory, the edit journal): what is
//! planted under one of their names is damage and is cleared, never followed.

use std::fs;
use std::io;
use std::path::Path;

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
