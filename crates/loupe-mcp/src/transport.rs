//! The guarded stdio transport: newline-delimited JSON-RPC 2.0 between the MCP client and
//! rmcp's server loop.
//!
//! It owns the byte framing of the connection (one JSON message per line on the way in and on
//! the way out) and the answers to every incoming line that rmcp would otherwise mishandle:
//! syntax errors (-32700), batches and other non-requests (-32600), request methods the server
//! does not serve (-32601) and requests whose params do not fit (-32602), each with the
//! request's own id so that no client is left waiting. Before a lifecycle is open (an
//! `initialize` handshake, or a first request carrying the 2026-07-28 per-request `_meta`) it
//! answers a request that opens neither with a -32602 that says how to open one, and keeps
//! rmcp's pre-lifecycle loop alive by dropping the notifications and responses that would end
//! it. `server/discover` and `ping` pass through at any time (rmcp answers both).
//!
//! It must not know anything about loupe's tools or schemas, must not answer a request that it
//! passes on to rmcp, must never reply to a response or a notification, and must never write
//! anything to the output except whole JSON-RPC lines (diagnostics go to `tracing`).

use std::sync::{Arc, OnceLock};
use std::time::Instant;
use std::{io, time::Duration};

use loupe_engine::latency::{LatencyLog, Stage};

use rmcp::{
    RoleServer,
    model::{
        self, ClientJsonRpcMessage, ClientNotification, ClientRequest, ConstString, ErrorCode, GetMeta, ProtocolVersion,
    },
    transport::Transport,
};
use serde::Deserialize;
use serde_json::{Map, Value};
use tokio::{
    io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader},
    sync::mpsc,
    task::JoinHandle,
};

/// The longest line accepted; the rest of a longer line is skipped and answered -32600.
const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;
/// Read buffer size for the incoming stream.
const READ_BUFFER_BYTES: usize = 64 * 1024;
/// A line buffer that grew beyond this for one big message is released afterwards.
const KEEP_LINE_CAPACITY: usize = 1024 * 1024;
/// How long `close` waits for the writer task to flush what is queued.
const CLOSE_FLUSH_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest method name (or other client text) quoted back in an error message or a log line.
const MAX_QUOTED_CHARS: usize = 200;
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The answer to a request that comes before any lifecycle and cannot open one.
const NO_LIFECYCLE: &str = "Invalid params: no session is open: send `initialize` first (protocol 2025-11-25 and \
earlier), or carry `_meta` with `io.modelcontextprotocol/protocolVersion` and \
`io.modelcontextprotocol/clientCapabilities` on every request (protocol 2026-07-28; `server/discover` lists the \
revisions served)";

/// Notifications passed on to rmcp once `initialize` has gone through; all others are dropped.
const FORWARDED_NOTIFICATIONS: &[&str] = &[
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
];

/// A newline-delimited JSON-RPC transport for [`rmcp::RoleServer`] that answers malformed,
/// unsupported and unknown input itself instead of handing it to rmcp.
///
/// Reading happens in [`Transport::receive`]; writing happens in a task spawned by
/// [`GuardedTransport::new`], which serialises [`Transport::send`] output and the guard's own
/// error replies onto the writer one whole line at a time.
pub struct GuardedTransport {
    read: BufReader<Box<dyn AsyncRead + Send + Unpin>>,
    /// The line being assembled. It lives here, not in `receive`, because rmcp polls `receive`
    /// inside a `select!` and drops it mid-line whenever another branch wins; the next call
    /// resumes where the dropped one stopped.
    line: Vec<u8>,
    /// Skipping the tail of an oversized line (already answered) up to its newline.
    discarding: bool,
    max_line_bytes: usize,
    served_methods: &'static [&'static str],
    /// The protocol revisions the server accepts in a request's own `_meta` (rmcp answers the
    /// others with -32001 and stays before the lifecycle).
    inline_versions: &'static [ProtocolVersion],
    /// A lifecycle is open: an `initialize` request, or a request with complete per-request
    /// `_meta` naming a served revision, has been passed on to rmcp.
    initialized: bool,
    lines_out: Option<mpsc::UnboundedSender<Vec<u8>>>,
    writer: Option<JoinHandle<()>>,
    /// Where the time of receiving, serialising and writing goes (`with_latency`).
    latency: Arc<OnceLock<Arc<LatencyLog>>>,
}

impl GuardedTransport {
    /// `served_methods`: the request methods passed through to rmcp; any other request method
    /// with an id is answered -32601 directly. It must include `initialize` or no session can
    /// start, and normally `ping` and `server/discover`, which rmcp answers even before a
    /// lifecycle. `inline_versions`: the revisions a request may name in its own `_meta` to open
    /// the per-request (2026-07-28) lifecycle, as the server's `supported_protocol_versions`.
    ///
    /// Spawns the writer task on the current tokio runtime, so it must be called from within
    /// one (it panics otherwise, like [`tokio::spawn`]).
    pub fn new<R, W>(
        read: R,
        write: W,
        served_methods: &'static [&'static str],
        inline_versions: &'static [ProtocolVersion],
    ) -> Self
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let (lines_out, lines_in) = mpsc::unbounded_channel();
        let latency = Arc::new(OnceLock::new());
        let writer = tokio::spawn(write_lines(write, lines_in, Arc::clone(&latency)));
        let read: Box<dyn AsyncRead + Send + Unpin> = Box::new(read);
        Self {
            read: BufReader::with_capacity(READ_BUFFER_BYTES, read),
            line: Vec::new(),
            discarding: false,
            max_line_bytes: MAX_LINE_BYTES,
            served_methods,
            inline_versions,
            initialized: false,
            lines_out: Some(lines_out),
            writer: Some(writer),
            latency,
        }
    }

    /// Files the durations of the `receive`, `send` and `write` stages in `log`.
    pub fn with_latency(self, log: Arc<LatencyLog>) -> Self {
        let _ = self.latency.set(log);
        self
    }

    fn record(&self, stage: Stage, duration: Duration) {
        if let Some(log) = self.latency.get() {
            log.record(stage, duration);
        }
    }

    #[cfg(test)]
    fn with_max_line_bytes(mut self, max_line_bytes: usize) -> Self {
        self.max_line_bytes = max_line_bytes;
        self
    }

    /// Reads until `self.line` holds one whole line (without its `\n`).
    ///
    /// Cancel-safe: the only await is `fill_buf`, which consumes nothing, and every byte taken
    /// from the reader is recorded in `self` before the next await.
    async fn read_line(&mut self) -> LineRead {
        loop {
            let (consumed, step) = {
                let available = match self.read.fill_buf().await {
                    Ok(available) => available,
                    Err(error) => return LineRead::Io(error),
                };
                if available.is_empty() {
                    // A last line without a newline still counts, once.
                    if !self.discarding && !self.line.is_empty() {
                        return LineRead::Line;
                    }
                    return LineRead::Eof;
                }
                let newline = available.iter().position(|&b| b == b'\n');
                let (content, take) = match newline {
                    Some(at) => (at, at + 1),
                    None => (available.len(), available.len()),
                };
                let step = if self.discarding {
                    if newline.is_some() { Step::DiscardDone } else { Step::More }
                } else if self.line.len().saturating_add(content) > self.max_line_bytes {
                    self.line = Vec::new();
                    if newline.is_some() { Step::Oversized } else { Step::OversizedDiscarding }
                } else {
                    self.line.extend_from_slice(&available[..content]);
                    if newline.is_some() { Step::Line } else { Step::More }
                };
                (take, step)
            };
            self.read.consume(consumed);
            match step {
                Step::Line => return LineRead::Line,
                Step::More => {}
                Step::DiscardDone => self.discarding = false,
                Step::Oversized => return LineRead::Oversized,
                Step::OversizedDiscarding => {
                    self.discarding = true;
                    return LineRead::Oversized;
                }
            }
        }
    }

    /// Classifies one line: returns the message for rmcp, or `None` after answering or dropping.
    fn handle_line(&mut self, line: &[u8]) -> Option<ClientJsonRpcMessage> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let line = line.strip_prefix(UTF8_BOM).unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        if crate::message_size::holds_more_values_than(line, crate::message_size::MAX_JSON_VALUES) {
            let id = crate::message_size::request_id(line).unwrap_or(Value::Null);
            tracing::warn!("message with too many JSON values refused");
            self.reply_error(&id, ErrorCode::INVALID_REQUEST, &crate::message_size::too_many_values_message());
            return None;
        }
        let value: Value = match serde_json::from_slice(line) {
            Ok(value) => value,
            Err(error) => {
                tracing::warn!(%error, "unparsable JSON line");
                self.reply_error(&Value::Null, ErrorCode::PARSE_ERROR, &format!("Parse error: {error}"));
                return None;
            }
        };
        let object = match value {
            Value::Object(object) => object,
            Value::Array(_) => {
                tracing::warn!("JSON-RPC batch received; batches are not supported");
                self.reply_error(
                    &Value::Null,
                    ErrorCode::INVALID_REQUEST,
                    "Invalid Request: JSON-RPC batches are not supported",
                );
                return None;
            }
            _ => {
                tracing::warn!("JSON value that is not an object received");
                self.reply_error(
                    &Value::Null,
                    ErrorCode::INVALID_REQUEST,
                    "Invalid Request: expected a JSON-RPC 2.0 object",
                );
                return None;
            }
        };
        let is_response = object.contains_key("result") || object.contains_key("error");
        match (object.contains_key("method"), object.get("id")) {
            (true, Some(_)) => self.handle_request(object),
            (true, None) => self.handle_notification(object),
            (false, _) if is_response => self.handle_response(object),
            (false, id) => {
                let id = id.filter(|id| id_is_echoable(id)).cloned().unwrap_or(Value::Null);
                tracing::warn!("object without method, result or error received");
                self.reply_error(
                    &id,
                    ErrorCode::INVALID_REQUEST,
                    "Invalid Request: expected a method, a result or an error",
                );
                None
            }
        }
    }

    fn handle_request(&mut self, object: Map<String, Value>) -> Option<ClientJsonRpcMessage> {
        let Some(id) = object.get("id").filter(|id| id_is_echoable(id)).cloned() else {
            tracing::warn!("request with an id that is not a string or a number");
            self.reply_error(
                &Value::Null,
                ErrorCode::INVALID_REQUEST,
                "Invalid Request: id must be a string or a number",
            );
            return None;
        };
        let invalid_request = |reason: &str| format!("Invalid Request: {reason}");
        let Some(method) = object.get("method").and_then(Value::as_str) else {
            self.reply_error(&id, ErrorCode::INVALID_REQUEST, &invalid_request("method must be a string"));
            return None;
        };
        let method = method.to_owned();
        if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            self.reply_error(&id, ErrorCode::INVALID_REQUEST, &invalid_request(r#"jsonrpc must be "2.0""#));
            return None;
        }
        if object.contains_key("result") || object.contains_key("error") {
            self.reply_error(
                &id,
                ErrorCode::INVALID_REQUEST,
                &invalid_request("a request cannot carry a result or an error"),
            );
            return None;
        }
        if id.as_str().is_none() && id.as_i64().is_none() {
            // rmcp's RequestId holds an i64: 1.5 or 2^63 cannot be represented, so cannot be served.
            self.reply_error(
                &id,
                ErrorCode::INVALID_REQUEST,
                &invalid_request("numeric id must be an integer in the i64 range"),
            );
            return None;
        }
        if !self.served_methods.contains(&method.as_str()) {
            tracing::debug!(method = clip(&method), %id, "answering unserved method with -32601");
            self.reply_error(&id, ErrorCode::METHOD_NOT_FOUND, &format!("Method not found: {}", clip(&method)));
            return None;
        }
        if object.get("params").is_some_and(|params| !params.is_object() && !params.is_null()) {
            self.reply_error(&id, ErrorCode::INVALID_PARAMS, "Invalid params: params must be a JSON object");
            return None;
        }
        let object = Value::Object(object);
        // rmcp's ClientRequest falls back to CustomRequest when a standard method's params do
        // not fit its typed variant, and rmcp would then answer -32601; a typed check names the
        // field at fault instead.
        let is_typed = TYPED_METHODS.contains(&method.as_str());
        let params_error = match ClientJsonRpcMessage::deserialize(&object) {
            Ok(ClientJsonRpcMessage::Request(request))
                if !(is_typed && matches!(request.request, ClientRequest::CustomRequest(_))) =>
            {
                if !self.initialized && !self.opens_or_precedes_a_lifecycle(&request.request) {
                    tracing::debug!(method = clip(&method), %id, "request before any lifecycle; answering -32602");
                    self.reply_error(&id, ErrorCode::INVALID_PARAMS, NO_LIFECYCLE);
                    return None;
                }
                return Some(ClientJsonRpcMessage::Request(request));
            }
            Ok(_) => match typed_request_check(&method, &object) {
                Some(Err(error)) => error.to_string(),
                _ => "params do not match the method".to_owned(),
            },
            Err(error) => match typed_request_check(&method, &object) {
                Some(Err(typed)) => typed.to_string(),
                _ => error.to_string(),
            },
        };
        tracing::debug!(method = clip(&method), %id, error = %params_error, "answering -32602");
        self.reply_error(&id, ErrorCode::INVALID_PARAMS, &format!("Invalid params: {params_error}"));
        None
    }

    /// Before a lifecycle: whether rmcp may have `request`. `initialize` opens the handshake
    /// lifecycle; a request whose `_meta` names a served revision with the client's capabilities
    /// opens the per-request one; `ping` and `server/discover` (which rmcp checks itself) open
    /// none and pass. A request with complete `_meta` naming a revision not served passes too:
    /// rmcp answers it -32001 with the revisions it serves.
    fn opens_or_precedes_a_lifecycle(&mut self, request: &ClientRequest) -> bool {
        match request {
            ClientRequest::InitializeRequest(_) => {
                self.initialized = true;
                true
            }
            ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => true,
            request => {
                let meta = request.get_meta();
                if !meta.missing_required_keys(&ProtocolVersion::V_2026_07_28).is_empty() {
                    return false;
                }
                let Some(version) = meta.protocol_version() else { return false };
                self.initialized = self.inline_versions.contains(&version);
                true
            }
        }
    }

    fn handle_notification(&mut self, object: Map<String, Value>) -> Option<ClientJsonRpcMessage> {
        let method = object.get("method").and_then(Value::as_str).unwrap_or_default().to_owned();
        if !self.initialized {
            // rmcp's pre-initialize loop ends the session on any notification.
            tracing::debug!(method = clip(&method), "dropping notification received before initialize");
            return None;
        }
        if !FORWARDED_NOTIFICATIONS.contains(&method.as_str()) {
            tracing::debug!(method = clip(&method), "dropping notification the server does not handle");
            return None;
        }
        match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(object)) {
            Ok(ClientJsonRpcMessage::Notification(notification))
                if !matches!(notification.notification, ClientNotification::CustomNotification(_)) =>
            {
                Some(ClientJsonRpcMessage::Notification(notification))
            }
            Ok(_) => {
                tracing::debug!(method = clip(&method), "dropping notification with malformed params");
                None
            }
            Err(error) => {
                tracing::debug!(method = clip(&method), %error, "dropping malformed notification");
                None
            }
        }
    }

    fn handle_response(&mut self, object: Map<String, Value>) -> Option<ClientJsonRpcMessage> {
        if !self.initialized {
            // The server has sent no request yet, and rmcp's pre-initialize loop ends the
            // session on any response.
            tracing::debug!("dropping response received before initialize");
            return None;
        }
        match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(object)) {
            Ok(message @ (ClientJsonRpcMessage::Response(_) | ClientJsonRpcMessage::Error(_))) => Some(message),
            Ok(_) => {
                tracing::debug!("dropping response that did not parse as one");
                None
            }
            Err(error) => {
                // Never answer a response: a peer doing the same would loop forever.
                tracing::debug!(%error, "dropping malformed response");
                None
            }
        }
    }

    /// Queues `{"jsonrpc":"2.0","id":<id>,"error":{"code":..,"message":..}}` for the writer.
    fn reply_error(&self, id: &Value, code: ErrorCode, message: &str) {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":{message}}}}}"#,
            code = code.0,
            message = Value::from(message),
        );
        let sent = self.lines_out.as_ref().is_some_and(|out| out.send(line.into_bytes()).is_ok());
        if !sent {
            tracing::debug!(code = code.0, "output is closed; error reply dropped");
        }
    }
}

impl Transport<RoleServer> for GuardedTransport {
    type Error = io::Error;

    fn send(
        &mut self,
        item: model::ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let lines_out = self.lines_out.clone();
        let latency = self.latency.get().cloned();
        async move {
            let started = Instant::now();
            let line = serde_json::to_vec(&item)?;
            if let Some(log) = latency {
                log.record(Stage::Send, started.elapsed());
            }
            let lines_out =
                lines_out.ok_or_else(|| io::Error::new(io::ErrorKind::NotConnected, "transport is closed"))?;
            lines_out.send(line).map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the output writer has stopped"))
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            match self.read_line().await {
                LineRead::Line => {}
                LineRead::Oversized => {
                    tracing::warn!(max = self.max_line_bytes, "line too long; skipping it");
                    let message = format!("Invalid Request: message exceeds {} bytes", self.max_line_bytes);
                    self.reply_error(&Value::Null, ErrorCode::INVALID_REQUEST, &message);
                    continue;
                }
                LineRead::Eof => {
                    tracing::debug!("input closed");
                    return None;
                }
                LineRead::Io(error) => {
                    tracing::warn!(%error, "reading input failed");
                    return None;
                }
            }
            let mut line = std::mem::take(&mut self.line);
            let started = Instant::now();
            let message = self.handle_line(&line);
            self.record(Stage::Receive, started.elapsed());
            line.clear();
            if line.capacity() <= KEEP_LINE_CAPACITY {
                self.line = line;
            }
            if message.is_some() {
                return message;
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // The writer finishes once every sender is gone, after writing what is queued.
        drop(self.lines_out.take());
        let Some(writer) = self.writer.take() else {
            return Ok(());
        };
        match tokio::time::timeout(CLOSE_FLUSH_TIMEOUT, writer).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(io::Error::other(error)),
            Err(_) => {
                tracing::warn!("output writer did not finish flushing in time");
                Ok(())
            }
        }
    }
}

enum LineRead {
    Line,
    Oversized,
    Eof,
    Io(io::Error),
}

enum Step {
    Line,
    More,
    DiscardDone,
    Oversized,
    OversizedDiscarding,
}

/// The writer task: one whole line per message, each followed by `\n` and a flush.
async fn write_lines<W>(
    mut write: W,
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
    latency: Arc<OnceLock<Arc<LatencyLog>>>,
) where
    W: AsyncWrite + Unpin,
{
    while let Some(mut line) = lines.recv().await {
        line.push(b'\n');
        let started = Instant::now();
        let written = match write.write_all(&line).await {
            Ok(()) => write.flush().await,
            Err(error) => Err(error),
        };
        if let Some(log) = latency.get() {
            log.record(Stage::Write, started.elapsed());
        }
        if let Err(error) = written {
            tracing::warn!(%error, "writing output failed; no more messages will be sent");
            return;
        }
    }
    if let Err(error) = write.shutdown().await {
        tracing::debug!(%error, "shutting down output failed");
    }
}

/// Ids that can be put back in an error reply: JSON-RPC allows strings and numbers.
fn id_is_echoable(id: &Value) -> bool {
    id.is_string() || id.is_number()
}

/// At most [`MAX_QUOTED_CHARS`] characters of client text.
fn clip(text: &str) -> &str {
    text.char_indices().nth(MAX_QUOTED_CHARS).map_or(text, |(at, _)| &text[..at])
}

macro_rules! typed_requests {
    ($($request:ident: $method:ident),* $(,)?) => {
        /// The request methods for which rmcp has a typed `ClientRequest` variant.
        const TYPED_METHODS: &[&str] = &[$(<model::$method as ConstString>::VALUE),*];

        /// `None` if rmcp has no typed request for `method`; otherwise the result of
        /// deserializing `request` as that type.
        // rmcp still parses the deprecated logging and resources/subscribe requests.
        #[allow(deprecated)]
        fn typed_request_check(method: &str, request: &Value) -> Option<Result<(), serde_json::Error>> {
            $(
                if method == <model::$method as ConstString>::VALUE {
                    return Some(model::$request::deserialize(request).map(drop));
                }
            )*
            None
        }
    };
}

typed_requests! {
    PingRequest: PingRequestMethod,
    InitializeRequest: InitializeResultMethod,
    DiscoverRequest: DiscoverRequestMethod,
    CompleteRequest: CompleteRequestMethod,
    SetLevelRequest: SetLevelRequestMethod,
    GetPromptRequest: GetPromptRequestMethod,
    ListPromptsRequest: ListPromptsRequestMethod,
    ListResourcesRequest: ListResourcesRequestMethod,
    ListResourceTemplatesRequest: ListResourceTemplatesRequestMethod,
    ReadResourceRequest: ReadResourceRequestMethod,
    SubscriptionsListenRequest: SubscriptionsListenRequestMethod,
    SubscribeRequest: SubscribeRequestMethod,
    UnsubscribeRequest: UnsubscribeRequestMethod,
    CallToolRequest: CallToolRequestMethod,
    ListToolsRequest: ListToolsRequestMethod,
    GetTaskRequest: GetTaskMethod,
    UpdateTaskRequest: UpdateTaskMethod,
    CancelTaskRequest: CancelTaskMethod,
    ListSkillsRequest: ListSkillsRequestMethod,
    GetSkillRequest: GetSkillRequestMethod,
    ReadResourceDirectoryRequest: ReadResourceDirectoryRequestMethod,
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rmcp::model::ProtocolVersion;
    use rmcp::{
        model::{
            ClientJsonRpcMessage, ClientNotification, ClientRequest, ErrorData, NumberOrString, ServerJsonRpcMessage,
            ServerResult,
        },
        transport::Transport,
    };
    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

    use super::GuardedTransport;

    const SERVED: &[&str] = &["initialize", "ping", "server/discover", "tools/list", "tools/call"];
    const VERSIONS: &[ProtocolVersion] = &[ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28];
    const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"test","version":"1"}}"#;
    const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#;
    const TOOLS_LIST: &str = r#"{"jsonrpc":"2.0","id":"abc","method":"tools/list"}"#;
    const WAIT: Duration = Duration::from_secs(5);

    /// The client's ends of the two pipes.
    struct Client {
        to_server: DuplexStream,
        from_server: Lines<BufReader<DuplexStream>>,
    }

    impl Client {
        async fn write(&mut self, text: &str) {
            self.to_server.write_all(text.as_bytes()).await.unwrap();
        }

        async fn raw_reply(&mut self) -> String {
            tokio::time::timeout(WAIT, self.from_server.next_line())
                .await
                .expect("no reply in time")
                .unwrap()
                .expect("output closed")
        }

        async fn reply(&mut self) -> Value {
            serde_json::from_str(&self.raw_reply().await).unwrap()
        }

        /// Asserts the next line is a JSON-RPC error with this id and code; returns its message.
        async fn expect_error(&mut self, id: Value, code: i32) -> String {
            let reply = self.reply().await;
            let object = reply.as_object().unwrap();
            assert_eq!(object.len(), 3, "unexpected members in {reply}");
            assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
            assert_eq!(reply["id"], id, "{reply}");
            assert_eq!(reply["error"]["code"], code, "{reply}");
            reply["error"]["message"].as_str().unwrap().to_owned()
        }
    }

    fn connect() -> (GuardedTransport, Client) {
        let (to_server, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, from_server) = tokio::io::duplex(1 << 16);
        let transport = GuardedTransport::new(server_in, server_out, SERVED, VERSIONS);
        let from_server = BufReader::new(from_server).lines();
        (transport, Client { to_server, from_server })
    }

    async fn receive(transport: &mut GuardedTransport) -> ClientJsonRpcMessage {
        tokio::time::timeout(WAIT, transport.receive()).await.expect("no message in time").expect("input closed")
    }

    /// Receives a request, checking its id; returns the rmcp request.
    async fn receive_request(transport: &mut GuardedTransport, id: NumberOrString) -> ClientRequest {
        match receive(transport).await {
            ClientJsonRpcMessage::Request(request) => {
                assert_eq!(request.id, id);
                request.request
            }
            other => panic!("expected a request, got {other:?}"),
        }
    }

    async fn initialize(transport: &mut GuardedTransport, client: &mut Client) {
        client.write(&format!("{INITIALIZE}\n")).await;
        let request = receive_request(transport, NumberOrString::Number(0)).await;
        assert!(matches!(request, ClientRequest::InitializeRequest(_)), "{request:?}");
    }

    /// Sends a marker through `send` and checks it is the next line out, i.e. nothing
    /// (no stray error reply) was written before it.
    async fn expect_nothing_else_written(transport: &mut GuardedTransport, client: &mut Client) {
        let marker = ServerJsonRpcMessage::response(ServerResult::empty(()), NumberOrString::String("marker".into()));
        transport.send(marker).await.unwrap();
        assert_eq!(client.reply().await, json!({"jsonrpc": "2.0", "id": "marker", "result": {}}));
    }

    #[tokio::test]
    async fn malformed_json_is_answered_and_the_next_request_still_served_in_order() {
        let (mut transport, mut client) = connect();
        client.write(&format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\n{INITIALIZE}\n")).await;
        initialize(&mut transport, &mut client).await;
        let message = client.expect_error(Value::Null, -32700).await;
        assert!(message.starts_with("Parse error: "), "{message}");
        // The initialize response follows the parse error, in the order they were produced.
        let response = ServerJsonRpcMessage::response(ServerResult::empty(()), NumberOrString::Number(0));
        transport.send(response).await.unwrap();
        assert_eq!(client.reply().await, json!({"jsonrpc": "2.0", "id": 0, "result": {}}));
    }

    #[tokio::test]
    async fn server_discover_passes_before_and_after_a_lifecycle() {
        let (mut transport, mut client) = connect();
        client
            .write(&format!("{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"server/discover\",\"params\":{{{META}}}}}\n"))
            .await;
        let request = receive_request(&mut transport, NumberOrString::Number(3)).await;
        assert!(matches!(request, ClientRequest::DiscoverRequest(_)), "{request:?}");
        initialize(&mut transport, &mut client).await;
        client.write("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"server/discover\",\"params\":{}}\n").await;
        let request = receive_request(&mut transport, NumberOrString::Number(4)).await;
        assert!(matches!(request, ClientRequest::DiscoverRequest(_)), "{request:?}");
        expect_nothing_else_written(&mut transport, &mut client).await;
    }

    #[tokio::test]
    async fn a_request_before_any_lifecycle_is_told_how_to_open_one() {
        let (mut transport, mut client) = connect();
        client.write(&format!("{TOOLS_LIST}\n")).await;
        // Incomplete per-request metadata (no client capabilities) opens nothing either.
        client
            .write("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}\n")
            .await;
        // Notifications before a lifecycle are still dropped.
        client.write("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").await;
        client
            .write(&format!("{{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\",\"params\":{{{META}}}}}\n"))
            .await;
        let request = receive_request(&mut transport, NumberOrString::Number(6)).await;
        assert!(matches!(request, ClientRequest::ListToolsRequest(_)), "{request:?}");
        for id in [json!("abc"), json!(5)] {
            let message = client.expect_error(id, -32602).await;
            assert!(message.contains("send `initialize` first"), "{message}");
            assert!(message.contains("io.modelcontextprotocol/clientCapabilities"), "{message}");
        }
        // The per-request lifecycle is open: requests without `_meta` go on to rmcp, which
        // judges them per request.
        client.write(&format!("{TOOLS_LIST}\n")).await;
        let request = receive_request(&mut transport, NumberOrString::String("abc".into())).await;
        assert!(matches!(request, ClientRequest::ListToolsRequest(_)), "{request:?}");
        expect_nothing_else_written(&mut transport, &mut client).await;
    }

    #[tokio::test]
    async fn a_revision_not_served_leaves_the_lifecycle_closed() {
        let (mut transport, mut client) = connect();
        let unserved = META.replace("2026-07-28", "2099-01-01");
        client
            .write(&format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{{{unserved}}}}}\n"))
            .await;
        // rmcp answers that one (-32001); the guard still holds the next bare request back.
        let request = receive_request(&mut transport, NumberOrString::Number(1)).await;
        assert!(matches!(request, ClientRequest::ListToolsRequest(_)), "{request:?}");
        client.write(&format!("{TOOLS_LIST}\n")).await;
        client.write("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n").await;
        let request = receive_request(&mut transport, NumberOrString::Number(2)).await;
        assert!(matches!(request, ClientRequest::PingRequest(_)), "{request:?}");
        client.expect_error(json!("abc"), -32602).await;
    }

    #[tokio::test]
    async fn unknown_methods_are_method_not_found_with_ids_echoed() {
        let (mut transport, mut client) = connect();
        initialize(&mut transport, &mut client).await;
        client.write("{\"jsonrpc\":\"2.0\",\"id\":\"q-1\",\"method\":\"foo/bar\"}\n").await;
        client.write("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"resources/list\"}\n").await;
        client.write(&format!("{TOOLS_LIST}\n")).await;
        let request = receive_request(&mut transport, NumberOrString::String("abc".into())).await;
        assert!(matches!(request, ClientRequest::ListToolsRequest(_)), "{request:?}");
        assert_eq!(client.expect_error(json!("q-1"), -32601).await, "Method not found: foo/bar");
        assert_eq!(client.expect_error(json!(0), -32601).await, "Method not found: resources/list");
    }

    #[tokio::test]
    async fn invalid_params_are_answered_with_the_request_id() {
        let (mut transport, mut client) = connect();
        initialize(&mut transport, &mut client).await;
        client.write("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{}}\n").await;
        client.write("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":5}\n").await;
        client
            .write("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"tools/call\",\"params\":{\"name\":\"t\",\"arguments\":5}}\n")
            .await;
        client.write("{\"jsonrpc\":\"1.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}\n").await;
        client.write("{\"id\":10,\"method\":\"tools/list\"}\n").await;
        client.write("{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}\n").await;
        let request = receive_request(&mut transport, NumberOrString::Number(11)).await;
        assert!(matches!(request, ClientRequest::CallToolRequest(_)), "{request:?}");
        assert_eq!(client.expect_error(json!(7), -32602).await, "Invalid params: missing field `name`");
        assert_eq!(client.expect_error(json!(8), -32602).await, "Invalid params: params must be a JSON object");
        let message = client.expect_error(json!("x"), -32602).await;
        assert!(message.starts_with("Invalid params: invalid type"), "{message}");
        client.expect_error(json!(9), -32600).await;
        client.expect_error(json!(10), -32600).await;
    }

    #[tokio::test]
    async fn malformed_initialize_is_invalid_params_and_does_not_open_the_session() {
        let (mut transport, mut client) = connect();
        client
            .write("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\"}}}\n")
            .await;
        // Still before initialize: this notification must be dropped, not passed to rmcp.
        client.write("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").await;
        initialize(&mut transport, &mut client).await;
        assert_eq!(client.expect_error(json!(1), -32602).await, "Invalid params: missing field `version`");
    }

    #[tokio::test]
    async fn notifications_and_responses_before_initialize_are_dropped() {
        let (mut transport, mut client) = connect();
        client.write("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").await;
        client
            .write("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}\n")
            .await;
        client.write("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n").await;
        initialize(&mut transport, &mut client).await;

        client.write("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").await;
        match receive(&mut transport).await {
            ClientJsonRpcMessage::Notification(n) => {
                assert!(matches!(n.notification, ClientNotification::InitializedNotification(_)), "{n:?}")
            }
            other => panic!("expected a notification, got {other:?}"),
        }
        // Unhandled or malformed notifications are dropped silently after initialize too.
        client.write("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/foo\"}\n").await;
        client.write("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n").await;
        client.write(&format!("{TOOLS_LIST}\n")).await;
        let request = receive_request(&mut transport, NumberOrString::String("abc".into())).await;
        assert!(matches!(request, ClientRequest::ListToolsRequest(_)), "{request:?}");
        // After initialize, responses (to roots/list and the like) go through.
        client.write("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n").await;
        assert!(matches!(receive(&mut transport).await, ClientJsonRpcMessage::Response(_)));
        expect_nothing_else_written(&mut transport, &mut client).await;
    }

    #[tokio::test]
    async fn batches_and_non_requests_are_invalid_requests() {
        let (mut transport, mut client) = connect();
        client.write(&format!("[{INITIALIZE}]\n")).await;
        client.write("42\n").await;
        client.write("{\"jsonrpc\":\"2.0\",\"id\":5}\n").await;
        client.write("{\"jsonrpc\":\"2.0\",\"foo\":1}\n").await;
        client.write("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}\n").await;
        client.write("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}\n").await;
        client.write("{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"method\":\"ping\",\"result\":{}}\n").await;
        // Responses without a usable id are never answered (that could loop with the peer).
        client.write("{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,\"message\":\"x\"}}\n").await;
        client.to_server.shutdown().await.unwrap();
        assert!(tokio::time::timeout(WAIT, transport.receive()).await.unwrap().is_none());

        let message = client.expect_error(Value::Null, -32600).await;
        assert!(message.contains("batch"), "{message}");
        client.expect_error(Value::Null, -32600).await;
        client.expect_error(json!(5), -32600).await;
        client.expect_error(Value::Null, -32600).await;
        client.expect_error(Value::Null, -32600).await;
        client.expect_error(json!(1.5), -32600).await;
        client.expect_error(json!("r"), -32600).await;
        expect_nothing_else_written(&mut transport, &mut client).await;
    }

    #[tokio::test]
    async fn blank_lines_crlf_and_bom_are_tolerated() {
        let (mut transport, mut client) = connect();
        client.write(&format!("\n\r\n  \t\n\u{feff}{INITIALIZE}\r\n\r\n{TOOLS_LIST}\r\n")).await;
        let request = receive_request(&mut transport, NumberOrString::Number(0)).await;
        assert!(matches!(request, ClientRequest::InitializeRequest(_)), "{request:?}");
        let request = receive_request(&mut transport, NumberOrString::String("abc".into())).await;
        assert!(matches!(request, ClientRequest::ListToolsRequest(_)), "{request:?}");
        expect_nothing_else_written(&mut transport, &mut client).await;
    }

    #[tokio::test]
    async fn oversized_lines_are_skipped_and_answered() {
        let (transport, mut client) = connect();
        let mut transport = transport.with_max_line_bytes(64);
        let padding = "x".repeat(300);
        client
            .write(&format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"p\":\"{padding}\"}}}}\n"
            ))
            .await;
        client.write("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n").await;
        let request = receive_request(&mut transport, NumberOrString::Number(2)).await;
        assert!(matches!(request, ClientRequest::PingRequest(_)), "{request:?}");
        let message = client.expect_error(Value::Null, -32600).await;
        assert!(message.contains("exceeds 64 bytes"), "{message}");
    }

    #[tokio::test]
    async fn a_receive_dropped_mid_line_loses_nothing() {
        let (mut transport, mut client) = connect();
        let (head, tail) = INITIALIZE.split_at(40);
        client.write(head).await;
        // rmcp polls receive() inside select! and drops it when another branch wins.
        let dropped = tokio::time::timeout(Duration::from_millis(20), transport.receive()).await;
        assert!(dropped.is_err());
        client.write(&format!("{tail}\n")).await;
        let request = receive_request(&mut transport, NumberOrString::Number(0)).await;
        assert!(matches!(request, ClientRequest::InitializeRequest(_)), "{request:?}");
    }

    #[tokio::test]
    async fn a_last_line_without_newline_is_read_then_eof() {
        let (mut transport, mut client) = connect();
        client.write(INITIALIZE).await;
        client.to_server.shutdown().await.unwrap();
        let request = receive_request(&mut transport, NumberOrString::Number(0)).await;
        assert!(matches!(request, ClientRequest::InitializeRequest(_)), "{request:?}");
        assert!(tokio::time::timeout(WAIT, transport.receive()).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn send_writes_one_line_of_json_and_close_flushes() {
        let (mut transport, mut client) = connect();
        let error = ErrorData::invalid_params("first line\nsecond line", Some(json!({"k": "\r\n"})));
        let message = ServerJsonRpcMessage::error(error, Some(NumberOrString::String("abc".into())));
        transport.send(message).await.unwrap();
        transport.close().await.unwrap();
        let line = client.raw_reply().await;
        let reply: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(reply["id"], "abc");
        assert_eq!(reply["error"]["code"], -32602);
        assert_eq!(reply["error"]["message"], "first line\nsecond line");
        // Closing ends the output after the queued line, and later sends fail.
        assert!(client.from_server.next_line().await.unwrap().is_none());
        let late = ServerJsonRpcMessage::response(ServerResult::empty(()), NumberOrString::Number(1));
        assert!(transport.send(late).await.is_err());
    }

    struct Bare;
    impl rmcp::ServerHandler for Bare {}

    #[tokio::test]
    async fn rmcp_server_survives_the_probes_that_used_to_kill_or_stall_it() {
        use rmcp::ServiceExt;

        let (transport, mut client) = connect();
        let server = tokio::spawn(async move { Bare.serve(transport).await.unwrap().waiting().await });
        client.write("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").await;
        client
            .write(&format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{{{META}}}}}\n"))
            .await;
        client.write("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{}}\n").await;
        client.write("not json\n").await;
        client.write(&format!("{INITIALIZE}\n")).await;
        client.write("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").await;
        client.write(&format!("{TOOLS_LIST}\n")).await;
        client.write("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{}}\n").await;
        client.write("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}\n").await;

        let mut replies = std::collections::HashMap::new();
        for _ in 0..7 {
            let reply = client.reply().await;
            replies.insert(reply["id"].to_string(), reply);
        }
        assert_eq!(replies["1"]["result"]["supportedVersions"][0], "2024-11-05", "{}", replies["1"]);
        assert_eq!(replies["2"]["error"]["code"], -32602);
        assert_eq!(replies["null"]["error"]["code"], -32700);
        assert!(replies["0"]["result"]["serverInfo"].is_object(), "{}", replies["0"]);
        assert!(replies["\"abc\""]["result"]["tools"].is_array(), "{}", replies["\"abc\""]);
        assert_eq!(replies["7"]["error"]["code"], -32602);
        assert_eq!(replies["8"]["result"], json!({}));

        client.to_server.shutdown().await.unwrap();
        tokio::time::timeout(WAIT, server).await.unwrap().unwrap().unwrap();
        assert!(client.from_server.next_line().await.unwrap().is_none());
    }
}
