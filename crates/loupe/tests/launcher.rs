//! `loupe-mcp`, the command of the packages' own name (`uvx loupe-mcp serve`): it runs the
//! `loupe` beside it with the same arguments, and says so plainly when there is none.

use std::process::Command;

const LOUPE: &str = env!("CARGO_BIN_EXE_loupe");
const LAUNCHER: &str = env!("CARGO_BIN_EXE_loupe-mcp");

#[test]
fn the_launcher_answers_as_the_loupe_beside_it() {
    let loupe = Command::new(LOUPE).args(["--version"]).output().unwrap();
    let launched = Command::new(LAUNCHER).args(["--version"]).output().unwrap();
    assert!(launched.status.success(), "{}", String::from_utf8_lossy(&launched.stderr));
    assert_eq!(launched.stdout, loupe.stdout);
    // Arguments and the exit status are loupe's own.
    let refused = Command::new(LAUNCHER).args(["read", "--no-such-flag"]).output().unwrap();
    let direct = Command::new(LOUPE).args(["read", "--no-such-flag"]).output().unwrap();
    assert_eq!(refused.status.code(), direct.status.code());
    assert!(!refused.status.success());
}

#[test]
fn a_launcher_without_loupe_beside_it_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let alone = dir.path().join(format!("loupe-mcp{}", std::env::consts::EXE_SUFFIX));
    std::fs::copy(LAUNCHER, &alone).unwrap();
    let output = Command::new(&alone).args(["--version"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no `loupe` binary beside this one"), "{stderr}");
}
