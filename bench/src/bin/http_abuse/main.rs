//! `http_abuse`: `loupe serve --http` under abuse from other local programs (SECURITY.md, H5).
//!
//! Three runs against the real binary, each on a server of its own, each printing one table:
//! 1. Flood: N `initialize` handshakes, never closed; how many sessions the server holds, what
//!    it answers the rest, and its RSS before and after (kB per held session).
//! 2. Slow clients: K connections that send half a request head and then nothing (and K that
//!    send nothing at all); then the time a real client's `initialize` takes, and whether the
//!    idle ones were let go.
//! 3. Stateless sessions: 2026-07-28 requests naming one `clientInfo`, from one connection,
//!    from two, and with a bearer token; which `loupe/session_id` each lands in.
//!
//! The client is raw HTTP/1.1 over `std::net::TcpStream`, so the figures are the server's.
//! Nothing here asserts on time: a miss is reported in the table.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{Value, json};

#[derive(Debug, Parser)]
#[command(
    name = "http_abuse",
    about = "loupe serve --http under a handshake flood, slow clients and shared clientInfo"
)]
struct Args {
    /// The loupe binary to run.
    #[arg(long)]
    loupe: PathBuf,
    /// Handshakes in the flood run.
    #[arg(long, default_value_t = 10_000)]
    handshakes: usize,
    /// Idle connections in the slow-client run.
    #[arg(long, default_value_t = 1_100)]
    idle_connections: usize,
    /// How long the real client's call may take before the slow-client run gives up on it.
    #[arg(long, default_value_t = 60)]
    patience_secs: u64,
    /// The servers' open-file limit (`ulimit -n`): 1024 is the soft limit most Linux
    /// distributions give a process; 0 keeps this process's.
    #[arg(long, default_value_t = 1024)]
    server_nofile: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("http_abuse: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    let root = workspace()?;
    flood(args, &root)?;
    slow_clients(args, &root)?;
    stateless(args, &root)?;
    Ok(())
}

/// A small generated workspace (no download).
fn workspace() -> Result<PathBuf, String> {
    let root = std::env::temp_dir().join(format!("loupe-http-abuse-{}", std::process::id()));
    std::fs::create_dir_all(root.join("src")).map_err(|error| format!("cannot create {}: {error}", root.display()))?;
    let body: String = (1..=200).map(|n| format!("pub fn f{n}() -> u32 {{ {n} }}\n")).collect();
    std::fs::write(root.join("src/lib.rs"), body).map_err(|error| format!("cannot write the workspace: {error}"))?;
    Ok(root)
}

/// One `loupe serve --http 127.0.0.1:0` child.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(args: &Args, root: &Path, token: Option<&str>) -> Result<Server, String> {
        let index = root.with_extension(format!("index-{}", Instant::now().elapsed().as_nanos()));
        // `sh` sets the limit and becomes loupe (exec), so the child's pid is loupe's.
        let mut command = Command::new("sh");
        command.args(["-c", r#"[ "$0" = 0 ] || ulimit -n "$0"; exec "$@""#]).arg(args.server_nofile.to_string());
        command
            .arg(&args.loupe)
            .args(["serve", "--http", "127.0.0.1:0", "--root"])
            .arg(root)
            .arg("--index-dir")
            .arg(&index)
            .env_remove("LOUPE_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(token) = token {
            command.env("LOUPE_TOKEN", token);
        }
        let mut child = command.spawn().map_err(|error| format!("cannot start {}: {error}", args.loupe.display()))?;
        let mut stderr = BufReader::new(child.stderr.take().ok_or("no stderr")?);
        let mut line = String::new();
        while stderr.read_line(&mut line).map_err(|error| error.to_string())? > 0 && !line.contains("serving MCP at") {
            line.clear();
        }
        let port = line
            .trim_end()
            .trim_end_matches("/mcp")
            .rsplit(':')
            .next()
            .and_then(|port| port.parse().ok())
            .ok_or_else(|| format!("no endpoint in {line:?}"))?;
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        Ok(Server { child, port })
    }

    /// The server's resident set, in kB.
    fn rss_kb(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    fn connect(&self) -> Result<Connection, String> {
        Connection::open(self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One keep-alive HTTP/1.1 connection.
struct Connection {
    reader: BufReader<TcpStream>,
    port: u16,
}

/// One answer: the status, the headers (lower-cased names) and the body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(known, _)| known == name).map(|(_, value)| value.as_str())
    }

    /// The JSON-RPC message in the body (an SSE `data:` line or plain JSON).
    fn message(&self) -> Value {
        self.body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|message| message.get("id").is_some())
            .or_else(|| serde_json::from_str(&self.body).ok())
            .unwrap_or(Value::Null)
    }
}

impl Connection {
    fn open(port: u16) -> Result<Connection, String> {
        let stream = TcpStream::connect(("127.0.0.1", port)).map_err(|error| format!("cannot connect: {error}"))?;
        stream.set_read_timeout(Some(Duration::from_secs(120))).map_err(|error| error.to_string())?;
        Ok(Connection { reader: BufReader::new(stream), port })
    }

    fn post(&mut self, headers: &[(&str, &str)], body: &Value) -> Result<Answer, String> {
        let body = body.to_string();
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.port,
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(&body);
        self.reader.get_mut().write_all(request.as_bytes()).map_err(|error| format!("cannot send: {error}"))?;
        self.answer()
    }

    fn answer(&mut self) -> Result<Answer, String> {
        let mut line = String::new();
        self.reader.read_line(&mut line).map_err(|error| format!("no answer: {error}"))?;
        let status = line.split(' ').nth(1).and_then(|status| status.parse().ok()).ok_or("closed without an answer")?;
        let mut headers = Vec::new();
        loop {
            line.clear();
            self.reader.read_line(&mut line).map_err(|error| error.to_string())?;
            let Some((name, value)) = line.trim_end().split_once(':') else { break };
            headers.push((name.trim().to_lowercase(), value.trim().to_owned()));
        }
        let header = |name: &str| headers.iter().find(|(known, _)| known == name).map(|(_, value)| value.clone());
        let mut body = Vec::new();
        if let Some(length) = header("content-length").and_then(|length| length.parse::<usize>().ok()) {
            body.resize(length, 0);
            self.reader.read_exact(&mut body).map_err(|error| error.to_string())?;
        } else if header("transfer-encoding").is_some_and(|value| value.contains("chunked")) {
            loop {
                line.clear();
                self.reader.read_line(&mut line).map_err(|error| error.to_string())?;
                let size = usize::from_str_radix(line.trim(), 16).map_err(|error| format!("bad chunk: {error}"))?;
                let mut chunk = vec![0; size + 2];
                self.reader.read_exact(&mut chunk).map_err(|error| error.to_string())?;
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        } else {
            self.reader.read_to_end(&mut body).map_err(|error| error.to_string())?;
        }
        Ok(Answer { status, headers, body: String::from_utf8_lossy(&body).into_owned() })
    }
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "http-abuse", "version": "1"}}})
}

/// A whole handshake on a fresh connection: its `Mcp-Session-Id`, or the refusal's status and
/// first line of body.
fn handshake(server: &Server) -> Result<Result<String, (u16, String)>, String> {
    let mut connection = server.connect()?;
    let answer = connection.post(&[], &initialize())?;
    let Some(id) = answer.header("mcp-session-id").map(str::to_owned) else {
        let said = answer.message();
        let said = said["error"]["message"].as_str().map_or_else(|| answer.body.clone(), str::to_owned);
        return Ok(Err((answer.status, said.lines().next().unwrap_or_default().to_owned())));
    };
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    connection.post(&[("Mcp-Session-Id", &id)], &initialized)?;
    Ok(Ok(id))
}

fn flood(args: &Args, root: &Path) -> Result<(), String> {
    let mut server = Server::start(args, root, None)?;
    let first = handshake(&server)?.map_err(|(status, said)| format!("the first handshake failed: {status} {said}"))?;
    let mut probe = server.connect()?;
    let status = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "manage", "arguments": {"command": "status"}}});
    probe.post(&[("Mcp-Session-Id", &first)], &status)?;
    std::thread::sleep(Duration::from_millis(500));
    let before = server.rss_kb();
    let started = Instant::now();
    let (mut held, mut refused, mut failed) = (1usize, 0usize, 0usize);
    let mut refusal = String::new();
    for _ in 0..args.handshakes {
        if !server.alive() {
            break;
        }
        match handshake(&server) {
            Ok(Ok(_)) => held += 1,
            Ok(Err((status, said))) => {
                refused += 1;
                if refusal.is_empty() {
                    refusal = format!("{status}: {said}");
                }
            }
            Err(_) => failed += 1,
        }
    }
    let elapsed = started.elapsed();
    std::thread::sleep(Duration::from_millis(500));
    let alive = server.alive();
    let after = server.rss_kb();
    // The first session, made before the flood, still answers.
    let still = match Connection::open(server.port)
        .and_then(|mut connection| connection.post(&[("Mcp-Session-Id", &first)], &status))
    {
        Ok(answer) => format!(
            "{} ({})",
            answer.status,
            if answer.message()["result"].is_object() { "answered" } else { "no result" }
        ),
        Err(error) => error,
    };
    let per_session = after.saturating_sub(before) as f64 / (held.saturating_sub(1)).max(1) as f64;
    println!("## 1. Handshake flood: {} `initialize`s, never closed\n", args.handshakes);
    println!("| figure | value |");
    println!("| --- | --- |");
    println!("| sessions accepted (with the one before the flood) | {held} |");
    println!("| handshakes refused | {refused} |");
    println!(
        "| first refusal | {} |",
        if refusal.is_empty() { "none".to_owned() } else { refusal.replace('|', "\\|") }
    );
    println!("| connections that failed (no answer) | {failed} |");
    println!("| time for the flood | {:.1} s |", elapsed.as_secs_f64());
    println!("| server RSS before / after | {} / {} MB |", before / 1024, after / 1024);
    println!("| RSS per accepted session | {per_session:.1} kB |");
    println!("| server alive after | {alive} |");
    println!("| the session made before the flood, asked `manage status` | {still} |");
    println!();
    Ok(())
}

fn slow_clients(args: &Args, root: &Path) -> Result<(), String> {
    println!("## 2. Slow clients: {} idle connections, then one real client\n", args.idle_connections);
    println!("| idle connections send | opened | real client's `initialize` | idle ones still open after it |");
    println!("| --- | --- | --- | --- |");
    for (label, sent) in [("half a request head", Some("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")), ("nothing", None)]
    {
        let server = Server::start(args, root, None)?;
        let mut idle = Vec::new();
        for _ in 0..args.idle_connections {
            let Ok(mut stream) = TcpStream::connect(("127.0.0.1", server.port)) else { break };
            if let Some(sent) = sent {
                let _ = stream.write_all(sent.as_bytes());
            }
            idle.push(stream);
        }
        std::thread::sleep(Duration::from_millis(300));
        let started = Instant::now();
        let (sender, receiver) = std::sync::mpsc::channel();
        let port = server.port;
        std::thread::spawn(move || {
            let answer = Connection::open(port).and_then(|mut connection| connection.post(&[], &initialize()));
            let _ = sender.send(answer.map(|answer| answer.status));
        });
        let outcome = match receiver.recv_timeout(Duration::from_secs(args.patience_secs)) {
            Ok(Ok(status)) => format!("{status} in {:.3} s", started.elapsed().as_secs_f64()),
            Ok(Err(error)) => format!("failed after {:.3} s: {error}", started.elapsed().as_secs_f64()),
            Err(_) => format!("no answer within {} s", args.patience_secs),
        };
        let still_open = idle
            .iter_mut()
            .map(|stream| {
                let _ = stream.set_nonblocking(true);
                let mut byte = [0u8; 1];
                // Closed by the server: a read returns 0 (or an answer it sent before closing).
                matches!(stream.read(&mut byte), Err(error) if error.kind() == std::io::ErrorKind::WouldBlock)
            })
            .filter(|open| *open)
            .count();
        println!("| {label} | {} | {outcome} | {still_open} |", idle.len());
    }
    println!();
    Ok(())
}

/// The session a 2026-07-28 `manage status` from `client` lands in.
fn stateless_session(connection: &mut Connection, client: &str, token: Option<&str>) -> Result<String, String> {
    let bearer = token.map(|token| format!("Bearer {token}"));
    let mut headers =
        vec![("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", "manage")];
    if let Some(bearer) = &bearer {
        headers.push(("Authorization", bearer));
    }
    let request = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "manage", "arguments": {"command": "status"}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": client, "version": "2.0"}}}});
    let answer = connection.post(&headers, &request)?;
    let message = answer.message();
    message["result"]["_meta"]["loupe/session_id"].as_str().map(str::to_owned).ok_or_else(|| {
        format!("no session stated ({}): {}", answer.status, answer.body.chars().take(300).collect::<String>())
    })
}

fn stateless(args: &Args, root: &Path) -> Result<(), String> {
    println!("## 3. Stateless 2026-07-28 sessions of one `clientInfo` (`claude-code/2.0`)\n");
    println!("| requests | session ids | one session? |");
    println!("| --- | --- | --- |");
    let server = Server::start(args, root, None)?;
    let mut one = server.connect()?;
    let same = [stateless_session(&mut one, "claude-code", None)?, stateless_session(&mut one, "claude-code", None)?];
    let mut other = server.connect()?;
    let elsewhere = stateless_session(&mut other, "claude-code", None)?;
    let row = |label: &str, ids: &[&String]| {
        let shared = ids.windows(2).all(|pair| pair[0] == pair[1]);
        let ids: Vec<&str> = ids.iter().map(|id| id.as_str()).collect();
        println!("| {label} | {} | {} |", ids.join(", "), if shared { "yes" } else { "no" });
    };
    row("no token, two on one connection", &[&same[0], &same[1]]);
    row("no token, a second connection (another program)", &[&same[0], &elsewhere]);
    drop(server);
    let server = Server::start(args, root, Some("bench-token"))?;
    let first = stateless_session(&mut server.connect()?, "claude-code", Some("bench-token"))?;
    let second = stateless_session(&mut server.connect()?, "claude-code", Some("bench-token"))?;
    row("token, two connections", &[&first, &second]);
    let restarted = Server::start(args, root, Some("bench-token"))?;
    let third = stateless_session(&mut restarted.connect()?, "claude-code", Some("bench-token"))?;
    row("token, the same on another server", &[&first, &third]);
    println!();
    Ok(())
}
