//! A line-level stdio connection to `loupe serve`, for the tests that speak raw JSON-RPC: the
//! inputs rmcp's client would never send, and sessions whose every line is checked as it comes.

#![allow(dead_code, unreachable_pub)]

use std::fmt::Display;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

pub struct Lines {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Lines {
    /// Spawns `command` with stdin and stdout piped (stderr discarded); a thread reads stdout
    /// line by line, so a test can wait with a timeout.
    pub fn spawn(mut command: Command) -> Lines {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("loupe serve starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Lines { child, stdin, lines }
    }

    /// Writes `message` and a newline, and flushes.
    pub fn send(&mut self, message: impl Display) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line the server writes.
    pub fn receive(&self, timeout: Duration) -> Result<String, RecvTimeoutError> {
        self.lines.recv_timeout(timeout)
    }

    /// Closes stdin, which ends the server's input.
    pub fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs one `loupe` command on `root` with its own `index_dir`, feeding `stdin` and setting
/// `env`; the test hooks are off unless `env` turns them on.
pub fn loupe(root: &Path, index_dir: &Path, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_loupe"));
    command
        .args(args)
        .arg("--root")
        .arg(root)
        .arg("--index-dir")
        .arg(index_dir)
        .env_remove("LOUPE_TEST_HOOKS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}
