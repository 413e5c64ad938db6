//! A bare MCP client for the benchmark: `loupe serve` as a child process, spoken to in raw
//! newline-delimited JSON-RPC over its stdin and stdout (no MCP library on this side, so the
//! client adds as little as a client can to the round trip).

use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub(crate) const PROTOCOL_VERSION: &str = "2025-11-25";

/// One running `loupe serve`.
pub(crate) struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    line: String,
}

/// The session layer's policy for this benchmark: it measures 300-line reads, thousands of
/// them in one session, so the gate (which refuses windows over 200 lines without a search
/// ref) is off and the session budgets are out of reach. The layer itself still runs.
pub(crate) const SESSION_FLAGS: &[&str] =
    &["--gate-mode", "off", "--max-reads-per-session", "1000000000", "--max-total-read-lines", "1000000000000"];

/// The `loupe serve` command line, with no `LOUPE_*` variable inherited from the caller so
/// runs are comparable. `max_preview_chars` 0 keeps the shipped ceiling.
pub(crate) fn serve_command(loupe: &Path, root: &Path, max_preview_chars: usize) -> Command {
    let mut command = Command::new(loupe);
    command.arg("serve").arg("--root").arg(root).args(SESSION_FLAGS);
    if max_preview_chars > 0 {
        command.arg("--max-preview-chars").arg(max_preview_chars.to_string());
    }
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("LOUPE_") {
            command.env_remove(key);
        }
    }
    command
}

impl Server {
    pub(crate) fn spawn(mut command: Command) -> io::Result<Server> {
        let mut child = command.spawn()?;
        let stdin = child.stdin.take().ok_or_else(|| io::Error::other("child has no stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| io::Error::other("child has no stdout"))?;
        Ok(Server { child, stdin: Some(stdin), stdout: BufReader::with_capacity(1 << 20, stdout), line: String::new() })
    }

    /// Writes `lines` (each already ending in a newline) and flushes.
    pub(crate) fn send(&mut self, lines: &str) -> io::Result<()> {
        let stdin = self.stdin.as_mut().ok_or_else(|| io::Error::other("stdin already closed"))?;
        stdin.write_all(lines.as_bytes())?;
        stdin.flush()
    }

    /// The next line from the server, without its newline.
    pub(crate) fn receive(&mut self) -> io::Result<&str> {
        self.line.clear();
        if self.stdout.read_line(&mut self.line)? == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "loupe serve closed its stdout"));
        }
        Ok(self.line.trim_end_matches(['\r', '\n']))
    }

    /// `initialize`, its answer, then `notifications/initialized`.
    pub(crate) fn initialize(&mut self) -> Result<(), String> {
        self.send(&handshake()).map_err(|error| format!("sending initialize: {error}"))?;
        let answer = self.receive().map_err(|error| format!("reading the initialize answer: {error}"))?;
        check_result(answer, 0)?;
        Ok(())
    }

    /// Closes stdin (the server exits on end of input) and reaps the child, killing it if it
    /// has not exited within five seconds.
    pub(crate) fn close(mut self) -> Result<(), String> {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => return Ok(()),
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
                Ok(None) => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return Err("loupe serve did not exit after its stdin closed; killed it".into());
                }
                Err(error) => return Err(format!("waiting for loupe serve: {error}")),
            }
        }
    }
}

/// `initialize` (id 0) and `notifications/initialized`, as two lines.
pub(crate) fn handshake() -> String {
    let initialize = json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "loupe-bench", "version": env!("CARGO_PKG_VERSION")}
        }
    });
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    format!("{initialize}\n{initialized}\n")
}

/// One `tools/call` of `read` as a line.
pub(crate) fn read_call(id: u64, arguments: &Value) -> String {
    let call = json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {"name": "read", "arguments": arguments}
    });
    format!("{call}\n")
}

/// Checks that `line` is the successful answer to request `id`; returns its `result`.
pub(crate) fn check_result(line: &str, id: u64) -> Result<Value, String> {
    let short = || line.chars().take(300).collect::<String>();
    let message: Value = serde_json::from_str(line).map_err(|error| format!("not JSON ({error}): {}", short()))?;
    if message.get("id").and_then(Value::as_u64) != Some(id) {
        return Err(format!("expected the answer to request {id}, got: {}", short()));
    }
    let Some(result) = message.get("result") else {
        return Err(format!("request {id} failed: {}", short()));
    };
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return Err(format!("tool call {id} returned isError: {}", short()));
    }
    Ok(result.clone())
}
