//! `loupe-mcp`: the name loupe's packages are published under (PyPI and npm hold an unrelated
//! `loupe`), so that `uvx loupe-mcp serve` and `pipx run loupe-mcp serve` find a command of the
//! package's own name. It runs the `loupe` beside it with the same arguments: on Unix by
//! replacing itself with it (signals, stdio and the exit status are loupe's own), on Windows as
//! a child with the same stdio, whose exit code it returns.

use std::path::PathBuf;
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let Some(loupe) = sibling() else {
        eprintln!("loupe-mcp: no `loupe` binary beside this one; reinstall the package");
        return ExitCode::from(2);
    };
    let mut command = Command::new(&loupe);
    command.args(std::env::args_os().skip(1));
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let error = command.exec();
        eprintln!("loupe-mcp: cannot run {}: {error}", loupe.display());
        ExitCode::from(2)
    }
    #[cfg(not(unix))]
    match command.status() {
        Ok(status) => ExitCode::from(status.code().map_or(1, |code| u8::try_from(code).unwrap_or(1))),
        Err(error) => {
            eprintln!("loupe-mcp: cannot run {}: {error}", loupe.display());
            ExitCode::from(2)
        }
    }
}

/// `loupe` (`loupe.exe`) in the directory of this executable, links resolved (pipx links its
/// commands from another directory).
fn sibling() -> Option<PathBuf> {
    let here = dunce::canonicalize(std::env::current_exe().ok()?).ok()?;
    let loupe = here.parent()?.join(format!("loupe{}", std::env::consts::EXE_SUFFIX));
    loupe.is_file().then_some(loupe)
}
