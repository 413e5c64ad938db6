//! A bare MCP client for the warm-start measurement: `loupe serve` as a child process, spoken
//! to in raw newline-delimited JSON-RPC over its stdin and stdout.

use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const PROTOCOL_VERSION: &str = "2025-11-25";

/// One running `loupe serve`.
pub(crate) struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

/// What a `search` answer said, as far as the benchmark cares.
#[derive(Debug, Clone)]
pub(crate) struct SearchAnswer {
    pub(crate) index_state: String,
    pub(crate) total: u64,
}

impl Server {
    /// Spawns `loupe serve --root ROOT --index-dir INDEX` with no `LOUPE_*` variable inherited.
    pub(crate) fn spawn(loupe: &Path, root: &Path, index_dir: &Path) -> io::Result<Server> {
        let mut command = Command::new(loupe);
        command.arg("serve").arg("--root").arg(root).arg("--index-dir").arg(index_dir);
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("LOUPE_") {
                command.env_remove(key);
            }
        }
        let mut child = command.spawn()?;
        let stdin = child.stdin.take().ok_or_else(|| io::Error::other("child has no stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| io::Error::other("child has no stdout"))?;
        Ok(Server { child, stdin: Some(stdin), stdout: BufReader::with_capacity(1 << 20, stdout) })
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes `lines` (each ending in a newline) and flushes.
    pub(crate) fn send(&mut self, lines: &str) -> io::Result<()> {
        let stdin = self.stdin.as_mut().ok_or_else(|| io::Error::other("stdin already closed"))?;
        stdin.write_all(lines.as_bytes())?;
        stdin.flush()
    }

    /// Reads lines until the answer to request `id`, skipping notifications.
    pub(crate) fn answer(&mut self, id: u64) -> Result<Value, String> {
        self.answer_sized(id).map(|(answer, _)| answer)
    }

    /// `answer`, with the size of its line in bytes.
    pub(crate) fn answer_sized(&mut self, id: u64) -> Result<(Value, usize), String> {
        let mut line = String::new();
        loop {
            line.clear();
            let read =
                self.stdout.read_line(&mut line).map_err(|error| format!("reading from loupe serve: {error}"))?;
            if read == 0 {
                return Err("loupe serve closed its stdout".into());
            }
            let message: Value = serde_json::from_str(line.trim_end())
                .map_err(|error| format!("not JSON ({error}): {}", line.chars().take(200).collect::<String>()))?;
            if message.get("id").and_then(Value::as_u64) == Some(id) {
                let result = message.get("result").cloned().ok_or_else(|| format!("request {id} failed: {message}"))?;
                return Ok((result, line.len()));
            }
        }
    }

    /// `manage` `command` (the full envelope) as request `id`, and its answer.
    pub(crate) fn manage(&mut self, id: u64, command: &str) -> Result<Value, String> {
        self.send(&tool_call(id, "manage", json!({"command": command, "metadata": "full"})))
            .map_err(|error| error.to_string())?;
        self.answer(id)
    }

    /// Kills the child (SIGKILL) and reaps it.
    pub(crate) fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Closes stdin (the server exits on end of input) and reaps the child, killing it after
    /// `grace`.
    pub(crate) fn close(mut self, grace: Duration) -> Result<(), String> {
        drop(self.stdin.take());
        let deadline = Instant::now() + grace;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => return Ok(()),
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                Ok(None) => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return Err(format!("loupe serve did not exit within {grace:?} of its stdin closing; killed it"));
                }
                Err(error) => return Err(format!("waiting for loupe serve: {error}")),
            }
        }
    }
}

/// A server the bench lets go of without `kill` or `close` (an error on the way) is killed, so
/// that no `loupe serve` outlives its measurement and loads the machine under the next one.
impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
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
            "clientInfo": {"name": "loupe-index-bench", "version": env!("CARGO_PKG_VERSION")}
        }
    });
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    format!("{initialize}\n{initialized}\n")
}

/// One `tools/call` of `tool` with `arguments`, as a line.
pub(crate) fn tool_call(id: u64, tool: &str, arguments: Value) -> String {
    let call =
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}});
    format!("{call}\n")
}

/// One `tools/call` of a literal `search` as a line (the full envelope: its `meta` has the
/// index state and the total).
pub(crate) fn search_call(id: u64, query: &str) -> String {
    tool_call(id, "search", json!({"query": query, "type": "text", "metadata": "full"}))
}

/// The index state and total of a `tools/call` result for `search`.
pub(crate) fn parse_search(result: &Value) -> Result<SearchAnswer, String> {
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return Err(format!("search returned isError: {}", result.to_string().chars().take(300).collect::<String>()));
    }
    let meta = result.pointer("/structuredContent/meta").ok_or("search answer without structuredContent.meta")?;
    Ok(SearchAnswer {
        index_state: meta.get("index_state").and_then(Value::as_str).unwrap_or("?").to_owned(),
        total: meta.get("total").and_then(Value::as_u64).unwrap_or(0),
    })
}
