//! The MCP server: rmcp's `ServerHandler` over the engine.
//!
//! Owns the protocol-facing decisions: which protocol revisions are offered (the `initialize`
//! handshake up to 2025-11-25; 2026-07-28 through `server/discover` and per-request `_meta`),
//! which root the engine opens (§2: the `--root` flag, else the client's roots, else
//! `LOUPE_ROOT`, else the working directory's repository; a 2026-07-28 request has no roots),
//! which session a call belongs to (§9.1, including the stateless 2026-07-28 HTTP requests),
//! and turning each engine `Response` into a `CallToolResult` with both faces. Engine calls
//! run on the blocking pool; a panic inside one becomes an `INTERNAL` result for that call and
//! the server keeps serving.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use loupe_core::config::LegacyTools;
use loupe_core::{ErrorCode, ToolError};
use loupe_engine::config::{Sources, choose_root, listing_config, load};
use loupe_engine::latency::{LatencyLog, Stage};
use loupe_engine::legacy::legacy_tool;
use loupe_engine::{CallContext, Engine, Progress, Response, Work, params};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams, GetPromptResponse,
    Implementation, InitializeRequestParams, InitializeResult, ListPromptsResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion, ServerCapabilities, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use crate::tools::tools_for;
use crate::transport::GuardedTransport;

/// The newest revision this server speaks over the `initialize` handshake. A client offering
/// a newer one in `initialize` is answered with this one.
pub const NEWEST_PROTOCOL: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// The newest revision served at all: 2026-07-28 has no handshake; its clients find it with
/// `server/discover` and name it in every request's `_meta`.
pub const NEWEST_INLINE_PROTOCOL: ProtocolVersion = ProtocolVersion::V_2026_07_28;

/// Every revision served, oldest first: the handshake ones and the per-request one.
pub fn served_protocols() -> &'static [ProtocolVersion] {
    ProtocolVersion::known_up_to(&NEWEST_INLINE_PROTOCOL)
}

/// The request methods passed on to rmcp; every other request gets -32601 at once.
const SERVED_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "logging/setLevel",
];

/// Where a stateless request's derived session id is stated in a tool result's `_meta` (§9.1).
pub const SESSION_META_KEY: &str = "loupe/session_id";

/// How long a server whose client left waits for a running first index build.
const BUILD_GRACE: Duration = Duration::from_secs(120);

/// How long an interrupted build may take to persist its checkpoint: the SDKs send SIGKILL
/// about 2 s after SIGTERM.
const CHECKPOINT_WAIT: Duration = Duration::from_millis(1500);

/// How long a closing connection waits for the analytics writer.
const ANALYTICS_FLUSH: Duration = Duration::from_millis(500);

/// How long an answer waits for its call's progress notifications to go out first.
const PROGRESS_FLUSH: Duration = Duration::from_secs(1);

/// How long the first tool call waits for the client to answer `roots/list`.
const ROOTS_TIMEOUT: Duration = Duration::from_secs(5);

const INSTRUCTIONS: &str = "loupe serves code under a token budget. Search first: whole-file, symbol and outline reads need a ref \
from a search (its candidate_id or bundle_id, or a copied next_calls entry); exact windows (snippet start_line..end_line) pass without one. \
Follow the `→ next:` call at the end of a result to continue. Lines are 1-based and inclusive. manage(command=guidance) explains the rest.";

/// Test hook: with `LOUPE_TEST_HOOKS=1`, reading this target panics inside the engine call,
/// so tests can prove a panic costs one call and not the server.
const PANIC_TARGET: &str = "__loupe_test_panic__";

#[derive(Clone)]
pub struct LoupeServer {
    sources: Arc<Sources>,
    engine: Arc<Mutex<Option<Arc<Engine>>>>,
    test_hooks: bool,
    /// Test hook (`LOUPE_TEST_INDEX_DELAY_MS` with `LOUPE_TEST_HOOKS=1`): hold the first build
    /// back this long so tests can observe a server whose index is still building.
    index_delay: Option<Duration>,
    /// Test hook (`LOUPE_TEST_INDEX_FILE_DELAY_MS` with `LOUPE_TEST_HOOKS=1`): every file of a
    /// build takes this much longer, so tests can end a session in the middle of one.
    #[cfg_attr(not(feature = "test-hooks"), allow(dead_code))]
    file_delay: Option<Duration>,
    /// Test hook (`LOUPE_TEST_ANALYTICS_CAPACITY` with `LOUPE_TEST_HOOKS=1`): analytics go to
    /// an undrained queue of this size, so tests can overflow it deterministically.
    #[cfg_attr(not(feature = "test-hooks"), allow(dead_code))]
    analytics_capacity: Option<usize>,
    /// This connection's identity for the session layer (§9.1): a UUID issued by the server.
    /// One stdio process is one connection.
    connection: Arc<CallContext>,
    /// Where calls spend their time, stage by stage: shared by the transport, every
    /// connection and the engine (`manage metrics`).
    latency: Arc<LatencyLog>,
    /// Drawn at start and never shown: keys the stateless sessions' ids (§9.1), so another
    /// program cannot compute one.
    session_secret: [u8; 32],
}

impl LoupeServer {
    /// A server whose engine opens on first use. When `sources` has a `--root` flag the
    /// client's roots are never asked for.
    pub fn new(sources: Sources) -> LoupeServer {
        // Read only in a build with the `test-hooks` feature (the tests'); a release build has none.
        let test_hooks = cfg!(feature = "test-hooks")
            && sources.env.iter().any(|(key, value)| key == "LOUPE_TEST_HOOKS" && value == "1");
        let hook = |name: &str| -> Option<u64> {
            let (_, value) = sources.env.iter().find(|(key, _)| key == name)?;
            value.parse().ok().filter(|_| test_hooks)
        };
        let index_delay = hook("LOUPE_TEST_INDEX_DELAY_MS").map(Duration::from_millis);
        let file_delay = hook("LOUPE_TEST_INDEX_FILE_DELAY_MS").map(Duration::from_millis);
        let analytics_capacity = hook("LOUPE_TEST_ANALYTICS_CAPACITY").map(|capacity| capacity as usize);
        let connection = Arc::new(CallContext::new(uuid::Uuid::new_v4().to_string()));
        LoupeServer {
            sources: Arc::new(sources),
            engine: Arc::new(Mutex::new(None)),
            test_hooks,
            index_delay,
            file_delay,
            analytics_capacity,
            connection,
            latency: Arc::default(),
            session_secret: random_secret(),
        }
    }

    /// A server on an engine that is already open.
    pub fn with_engine(sources: Sources, engine: Engine) -> LoupeServer {
        let server = LoupeServer::new(sources);
        let engine = Arc::new(server.prepared(engine));
        server.start_indexing(&engine);
        *server.engine.try_lock().expect("a new server's engine lock is free") = Some(engine);
        server
    }

    /// The same server (engine, root, configuration) for another connection: one Streamable HTTP
    /// session (`Mcp-Session-Id`) is one connection for the session layer (§9.1).
    pub fn for_new_connection(&self) -> LoupeServer {
        LoupeServer { connection: Arc::new(CallContext::new(uuid::Uuid::new_v4().to_string())), ..self.clone() }
    }

    /// Writes the queued analytics events and lets a running first index build finish and
    /// persist (bounded): what every transport does when its last client leaves.
    pub(crate) async fn wind_down(&self, terminated: &CancellationToken) {
        if let Some(engine) = self.engine.lock().await.as_ref() {
            let engine = Arc::clone(engine);
            let _ = tokio::task::spawn_blocking(move || engine.flush_analytics(ANALYTICS_FLUSH)).await;
        }
        if let Some(engine) = self.engine.lock().await.as_ref() {
            finish_index_build(engine, terminated).await;
        }
    }

    /// The log the transport files its stages in.
    pub fn latency(&self) -> Arc<LatencyLog> {
        Arc::clone(&self.latency)
    }

    /// The engine as this server runs it: sharing its latency log, with the test hooks set.
    fn prepared(&self, engine: Engine) -> Engine {
        #[cfg_attr(not(feature = "test-hooks"), allow(unused_mut))]
        let mut engine = engine.with_latency_log(self.latency());
        #[cfg(feature = "test-hooks")]
        {
            if let Some(capacity) = self.analytics_capacity {
                engine.park_analytics_for_tests(capacity);
            }
            if let (Some(delay), Some(index)) = (self.file_delay, engine.index()) {
                index.slow_down_for_tests(delay);
            }
        }
        engine
    }

    fn start_indexing(&self, engine: &Arc<Engine>) {
        match self.index_delay {
            #[cfg(feature = "test-hooks")]
            Some(delay) => engine.start_background_indexing_after(delay),
            _ => engine.start_background_indexing(),
        }
    }

    fn root_flag_given(&self) -> bool {
        self.sources.flags.iter().any(|(key, _)| key == "root")
    }

    /// The engine, opening it on first use on the root §2 names.
    async fn engine(&self, context: &RequestContext<RoleServer>) -> Result<Arc<Engine>, ToolError> {
        let mut slot = self.engine.lock().await;
        if let Some(engine) = slot.as_ref() {
            return Ok(engine.clone());
        }
        let mut sources = (*self.sources).clone();
        if !self.root_flag_given() {
            sources.client_roots = client_roots(context).await;
        }
        // No root named and started in `/` or the home directory: every call says how to name
        // one, and the next call tries again (client roots may have arrived).
        choose_root(&sources).map_err(|message| {
            ToolError::invalid_args(
                message,
                "restart with `--root <dir>`, set LOUPE_ROOT, or open a folder in your client",
            )
        })?;
        let (config, warnings) = load(&sources).map_err(config_error)?;
        for warning in warnings {
            tracing::warn!("{warning}");
        }
        let engine = Arc::new(self.prepared(Engine::new(config).map_err(config_error)?));
        tracing::info!(root = %engine.root_path().display(), "engine open");
        self.start_indexing(&engine);
        *slot = Some(engine.clone());
        Ok(engine)
    }

    /// Whether the legacy names are listed (§12): the open engine's configuration, else the
    /// one the sources give before a root is known.
    /// What `tools/list` shows: the legacy names' setting and whether the server is read-only.
    async fn listing(&self) -> (LegacyTools, bool) {
        match self.engine.lock().await.as_ref() {
            Some(engine) => (engine.config().legacy_tools, engine.config().read_only),
            None => {
                let config = listing_config(&self.sources);
                (config.legacy_tools, config.read_only)
            }
        }
    }

    /// Runs one tool call; with it, the session id derived for a stateless request (§9.1).
    async fn call(
        &self,
        name: &str,
        arguments: Value,
        context: &RequestContext<RoleServer>,
    ) -> (Response, Option<String>) {
        let received = Instant::now();
        // Failures outside the engine still name the tool that was called (a legacy name's
        // replacement).
        let tool_name = params::tool(name)
            .map(|spec| spec.name)
            .or_else(|| legacy_tool(name).map(|legacy| legacy.tool))
            .unwrap_or("unknown");
        let engine = match self.engine(context).await {
            Ok(engine) => engine,
            Err(error) => return (Response::failure(tool_name, error), None),
        };
        let panic_requested = self.test_hooks && arguments.get("target").and_then(Value::as_str) == Some(PANIC_TARGET);
        let tool = name.to_owned();
        // A connection id the client sends in `_meta` is kept as telemetry only; the session
        // key is always the server-issued one (§9.1).
        let client_connection_id = ["connection_id", "connectionId"]
            .iter()
            .find_map(|key| context.meta.get(*key).and_then(Value::as_str))
            .map(str::to_owned);
        let connection = CallContext { connection_id: self.connection.connection_id.clone(), client_connection_id };
        let mut arguments = arguments;
        let derived = match stateless_session_id(context, &self.session_secret) {
            // `strict_session_id` asks the client to pin its session: nothing is derived for it.
            Some(derived) if !engine.config().strict_session_id => pin_session(&mut arguments, derived),
            _ => None,
        };
        let (work, progress) = work_for(context);
        let work = Arc::new(work);
        // `notifications/cancelled` for this request stops the work (rmcp cancels the token).
        let cancelled = context.ct.clone();
        let canceller = Arc::clone(&work);
        let watch = tokio::spawn(async move {
            cancelled.cancelled().await;
            canceller.cancel();
        });
        let running = Arc::clone(&work);
        let joined = tokio::task::spawn_blocking(move || {
            engine.latency().record(Stage::Queue, received.elapsed());
            if panic_requested {
                panic!("test hook: panic inside a tool call");
            }
            engine.call_with(&connection, &tool, arguments, &running)
        })
        .await;
        watch.abort();
        // Every progress notification of the call goes out before its answer.
        if let Some(progress) = progress {
            progress.flush().await;
        }
        match joined {
            Ok(response) => (response, derived),
            Err(join_error) => {
                tracing::error!("tool `{name}` failed: {join_error}");
                let error = ToolError::new(
                    ErrorCode::Internal,
                    format!("loupe hit an internal error while running `{name}`; the server is still running"),
                    "retry once; if it fails again, report it with the arguments you sent",
                );
                (Response::failure(tool_name, error), derived)
            }
        }
    }
}

/// The call's progress-and-cancel handle. A client that sent a progress token gets the
/// engine's reports as `notifications/progress` (sent in order from a task of their own, so the
/// engine never waits on the client) and may be made to wait for a first index build; a client
/// without one is answered at once, from what is ready. Once the request is cancelled
/// (rmcp cancels the request's token on `notifications/cancelled`), no report is sent, not
/// even one already queued; the engine's handle stops reporting too.
fn work_for(context: &RequestContext<RoleServer>) -> (Work, Option<ProgressSender>) {
    let Some(token) = context.meta.get_progress_token() else { return (Work::default(), None) };
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel::<Report>();
    let peer = context.peer.clone();
    let cancelled = context.ct.clone();
    tokio::spawn(async move {
        while let Some(report) = receiver.recv().await {
            let progress = match report {
                Report::Progress(progress) => progress,
                Report::Flushed(done) => {
                    let _ = done.send(());
                    continue;
                }
            };
            if cancelled.is_cancelled() {
                continue;
            }
            let mut notification =
                ProgressNotificationParam::new(token.clone(), progress.done as f64).with_message(progress.message);
            if let Some(total) = progress.total {
                notification = notification.with_total(total as f64);
            }
            if peer.notify_progress(notification).await.is_err() {
                return;
            }
        }
    });
    let reports = sender.clone();
    let work = Work::with_progress(move |progress| {
        let _ = reports.send(Report::Progress(progress.clone()));
    });
    (work, Some(ProgressSender { sender }))
}

/// What the engine's reports for one call become, in order: progress notifications, and the
/// marks `ProgressSender::flush` waits for.
enum Report {
    Progress(Progress),
    Flushed(tokio::sync::oneshot::Sender<()>),
}

/// The sending side of a call's progress notifications.
struct ProgressSender {
    sender: tokio::sync::mpsc::UnboundedSender<Report>,
}

impl ProgressSender {
    /// Returns once every report sent so far has been handed to the client (bounded: a client
    /// that stopped reading does not hold the answer back).
    async fn flush(self) {
        let (done, flushed) = tokio::sync::oneshot::channel();
        if self.sender.send(Report::Flushed(done)).is_ok() {
            let _ = tokio::time::timeout(PROGRESS_FLUSH, flushed).await;
        }
    }
}

/// The client's roots as directory paths, when it offers roots and answers in time.
///
/// Roots are gone from protocol 2026-07-28 on (SEP-2577; a server may not send it requests):
/// a request at that revision has none, and §2 then goes on to `LOUPE_ROOT` and the working
/// directory's repository. The handshake revisions have them, ranked above `LOUPE_ROOT`.
#[allow(deprecated)]
async fn client_roots(context: &RequestContext<RoleServer>) -> Vec<PathBuf> {
    if context.protocol_version().is_some_and(|version| !version.has_initialize()) {
        return Vec::new();
    }
    let offers_roots = context.peer.peer_info().is_some_and(|info| info.capabilities.roots.is_some());
    if !offers_roots {
        return Vec::new();
    }
    let answer = tokio::time::timeout(ROOTS_TIMEOUT, context.peer.list_roots()).await;
    let roots = match answer {
        Ok(Ok(result)) => result.roots,
        Ok(Err(error)) => {
            tracing::warn!("roots/list failed: {error}");
            return Vec::new();
        }
        Err(_) => {
            tracing::warn!("roots/list got no answer in {ROOTS_TIMEOUT:?}");
            return Vec::new();
        }
    };
    roots
        .iter()
        .filter_map(|root| match loupe_core::path::parse_user_path(root.uri.as_str()) {
            loupe_core::path::UserPath::Absolute(path) => Some(PathBuf::from(path)),
            loupe_core::path::UserPath::Relative(_) => None,
        })
        .collect()
}

/// The session id of a stateless request (§9.1): a 2026-07-28 request over HTTP comes without
/// `Mcp-Session-Id`, so no connection holds its session. The id is a keyed hash, under this
/// server's secret, of the client's self-reported `clientInfo` (name and version) and of what
/// proves who sent it: the bearer token when the server has one (the same client lands in the
/// same session on every request, whatever its connection), else the TCP connection (another
/// program cannot land in it, whatever `clientInfo` it names). Without a token a client keeps
/// its session across connections by sending the stated id back as `session_id`. Neither the
/// token nor the secret is stored or shown. `None` for every other request: stdio (one process
/// is one connection, whatever the revision) and HTTP requests of a handshake session.
fn stateless_session_id(context: &RequestContext<RoleServer>, secret: &[u8; 32]) -> Option<String> {
    let parts = context.extensions.get::<axum::http::request::Parts>()?;
    if parts.headers.contains_key("mcp-session-id") {
        return None;
    }
    let token = parts
        .headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .filter(|token| !token.is_empty());
    let holder = match (token, parts.extensions.get::<crate::http::ConnectionTag>()) {
        (Some(token), _) => format!("token:{token}"),
        (None, Some(connection)) => format!("connection:{}", connection.id()),
        // Not served by `serve_http`'s connections: nothing ties two requests together.
        (None, None) => format!("request:{}", uuid::Uuid::new_v4()),
    };
    let client = context.meta.client_info();
    let (name, version) = client.as_ref().map_or(("", ""), |info| (info.name.as_str(), info.version.as_str()));
    let mut hasher = blake3::Hasher::new_keyed(secret);
    for part in [holder.as_str(), name, version] {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    let hash = hasher.finalize().to_hex();
    Some(format!("client-{}", &hash[..32]))
}

/// 32 bytes no other process can predict (two version-4 UUIDs: 244 random bits from the OS).
fn random_secret() -> [u8; 32] {
    let mut secret = [0u8; 32];
    secret[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    secret[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    secret
}

/// Pins a stateless call to `derived` unless it names a session itself; the id that keys it.
fn pin_session(arguments: &mut Value, derived: String) -> Option<String> {
    if arguments.is_null() {
        *arguments = Value::Object(serde_json::Map::new());
    }
    let object = arguments.as_object_mut()?;
    let named = ["session_id", "sessionId"]
        .iter()
        .find_map(|key| object.get(*key).and_then(Value::as_str).filter(|id| !id.trim().is_empty()));
    if let Some(named) = named {
        return Some(named.to_owned());
    }
    object.insert("session_id".into(), Value::from(derived.clone()));
    Some(derived)
}

fn config_error(message: impl std::fmt::Display) -> ToolError {
    ToolError::new(
        ErrorCode::Internal,
        format!("loupe could not start on this workspace: {message}"),
        "fix the configuration (loupe.toml, LOUPE_* variables or flags) and restart the server",
    )
}

/// Both faces of a response as an MCP tool result.
pub fn to_call_tool_result(response: &Response) -> CallToolResult {
    let mut result = if response.ok {
        CallToolResult::success(vec![ContentBlock::text(response.face.clone())])
    } else {
        CallToolResult::error(vec![ContentBlock::text(response.face.clone())])
    };
    result.structured_content = Some(response.structured());
    result
}

impl ServerHandler for LoupeServer {
    // `enable_logging`: deprecated from protocol 2026-07-28 on (SEP-2577), served by every
    // revision this server negotiates.
    #[allow(deprecated)]
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().enable_prompts().enable_logging().build())
            .with_server_info(Implementation::new("loupe", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(NEWEST_PROTOCOL)
            .with_instructions(INSTRUCTIONS)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(served_protocols())
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        tracing::info!(
            client = %request.client_info.name,
            offered = %request.protocol_version,
            "initialize"
        );
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let (legacy, read_only) = self.listing().await;
        Ok(ListToolsResult::with_all_items(tools_for(legacy, read_only)))
    }

    /// The workflows as prompts (`prompts.rs`), which clients offer as slash commands.
    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(crate::prompts::prompts()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        crate::prompts::get(&request.name, request.arguments.as_ref()).map(Into::into)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools_for(LegacyTools::Listed, false).into_iter().find(|tool| tool.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        // The legacy names (§12) are callable even when hidden; a disabled one is answered by
        // the engine with LEGACY_TOOL_DISABLED, a tool result, not a protocol error.
        if params::tool(&name).is_none() && legacy_tool(&name).is_none() {
            // The name quoted bounded: a refusal never echoes a caller's megabyte.
            let shown: String = name.chars().take(100).collect();
            let cut = if shown.len() < name.len() { "…" } else { "" };
            return Err(McpError::invalid_params(
                format!("unknown tool `{shown}{cut}`; available tools: {}", params::tool_names().join(", ")),
                None,
            ));
        }
        let arguments = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let (response, derived) = self.call(&name, arguments, &context).await;
        let started = Instant::now();
        let mut result = to_call_tool_result(&response);
        self.latency.record(Stage::Convert, started.elapsed());
        if let Some(session_id) = derived {
            let mut meta = serde_json::Map::new();
            meta.insert(SESSION_META_KEY.into(), Value::from(session_id));
            result.meta = Some(rmcp::model::MetaObject(meta));
        }
        Ok(result.into())
    }

    /// `logging/setLevel`: this connection is sent loupe's log events at `level` and above, as
    /// `notifications/message` (`logging.rs`); before it asks, none.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        crate::logging::subscribe(&self.connection.connection_id, context.peer.clone(), request.level);
        Ok(())
    }

    async fn on_roots_list_changed(&self, _context: rmcp::service::NotificationContext<RoleServer>) {
        if !self.root_flag_given() {
            // The next call opens the engine on the client's new first root.
            *self.engine.lock().await = None;
        }
    }
}

/// Why a server could not start, or ended with an error.
#[derive(Debug)]
pub enum ServeError {
    /// `--http` options it must not start with (beyond loopback without a token, a zero cap).
    Options(String),
    /// The address cannot be listened on.
    Listen { addr: std::net::SocketAddr, source: std::io::Error },
    /// The MCP session failed to start or ended with an error.
    Session(String),
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServeError::Options(reason) | ServeError::Session(reason) => f.write_str(reason),
            ServeError::Listen { addr, source } => write!(f, "cannot listen on {addr}: {source}"),
        }
    }
}

impl std::error::Error for ServeError {}

/// Serves MCP over stdin/stdout until the client closes the connection, or SIGTERM or SIGINT.
pub async fn serve_stdio(server: LoupeServer) -> Result<(), ServeError> {
    // Listening from the start: a SIGTERM that arrives while the connection winds down must
    // not be missed (nor kill the process before the index build is kept).
    let terminated = termination();
    let transport = GuardedTransport::new(tokio::io::stdin(), tokio::io::stdout(), SERVED_METHODS, served_protocols())
        .with_latency(server.latency());
    let handle = server.clone();
    let running = server
        .serve(transport)
        .await
        .map_err(|error| ServeError::Session(format!("MCP session failed to start: {error}")))?;
    let ended = tokio::select! {
        ended = running.waiting() => ended.map(drop).map_err(|error| ServeError::Session(format!("MCP session ended with an error: {error}"))),
        () = terminated.cancelled() => Ok(()),
    };
    // The connection is over: write the analytics events still queued before the process exits.
    // A client that closed stdin right after its call (scripts, one-shot runs, Inspector) must
    // not lose the index build it started: finish it, so it is persisted, or, when SIGTERM says
    // the client is done waiting (the SDKs send it about 2 s after closing stdin), keep what
    // it built as a checkpoint the next session resumes from.
    handle.wind_down(&terminated).await;
    ended
}

/// A token cancelled by SIGTERM or SIGINT (listening from now on).
pub(crate) fn termination() -> CancellationToken {
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        #[cfg(unix)]
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = terminate.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
        // Windows has no SIGTERM: Ctrl-C (and Ctrl-Break, a console closing) end the server.
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
        cancel.cancel();
    });
    token
}

/// Waits for a running first index build to finish and persist, for at most `BUILD_GRACE` or
/// until `terminated`; then interrupts it, and waits (at most `CHECKPOINT_WAIT`) while it
/// persists what it built as a checkpoint.
pub(crate) async fn finish_index_build(engine: &Engine, terminated: &CancellationToken) {
    let Some(index) = engine.index() else { return };
    if index.state() != loupe_engine::IndexState::Building || !index.is_writer() {
        return;
    }
    let idle = || {
        let index = Arc::clone(index);
        tokio::task::spawn_blocking(move || index.wait_idle())
    };
    if !terminated.is_cancelled() {
        tracing::info!("the client closed the connection; finishing the index build");
        let built = async {
            while index.state() == loupe_engine::IndexState::Building {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            // The build marks the index ready before it persists: let the persist finish.
            let _ = idle().await;
        };
        tokio::select! {
            () = built => {
                tracing::info!("index build finished after the client left");
                return;
            }
            () = terminated.cancelled() => tracing::info!("stopped waiting for the index build: terminated"),
            () = tokio::time::sleep(BUILD_GRACE) => tracing::info!("stopped waiting for the index build after {BUILD_GRACE:?}"),
        }
    }
    index.interrupt_build();
    match tokio::time::timeout(CHECKPOINT_WAIT, idle()).await {
        Ok(_) => tracing::info!("the index build so far is kept as a checkpoint"),
        Err(_) => tracing::warn!("the index checkpoint took longer than {CHECKPOINT_WAIT:?}; exiting without it"),
    }
}
