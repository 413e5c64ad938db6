//! Logging to the client (MCP `logging`): a `tracing` layer that forwards loupe's own events at or
//! above the level a connected client chose with `logging/setLevel` to it as
//! `notifications/message`.
//!
//! The binary installs `client_log_layer()` beside its stderr layer, once per process; each
//! connection (the stdio client, every Streamable HTTP session) subscribes by `logging/setLevel`.
//! A client that never asks is sent nothing. Events are formatted on the thread that emits them
//! and handed to a bounded queue with `try_send`, so a slow or gone client never blocks the engine:
//! when the queue is full the event is dropped and counted, and the next message sent says how
//! many were. One task drains the queue and sends to every subscribed connection whose level the
//! event meets; a connection whose send fails is forgotten. Only events of loupe's crates
//! (`loupe*` targets) are forwarded: rmcp's own events (it logs what it sends) would feed back.

// Logging is deprecated from protocol 2026-07-28 on (SEP-2577); every revision this server
// negotiates has it.
#![allow(deprecated)]

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex, OnceLock};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::mpsc;
use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, Filter};

/// How many formatted events may wait for the client; past it they are dropped, and counted.
const QUEUE: usize = 1024;

/// No client asked: the threshold that lets nothing through.
const NOBODY: u8 = u8::MAX;

/// The connections that asked for log messages, and what they asked for.
static CLIENTS: LazyLock<Clients> = LazyLock::new(|| Clients {
    threshold: AtomicU8::new(NOBODY),
    subscribed: Mutex::new(Vec::new()),
    queue: OnceLock::new(),
    dropped: AtomicU64::new(0),
});

struct Clients {
    /// The lowest severity any connection asked for (`severity`), `NOBODY` when none did: the
    /// one check an event pays when no client listens.
    threshold: AtomicU8,
    subscribed: Mutex<Vec<Subscribed>>,
    /// The queue's sending side, made (with its draining task) by the first `subscribe`.
    queue: OnceLock<mpsc::Sender<Message>>,
    /// Events dropped because the queue was full, not yet told to a client.
    dropped: AtomicU64,
}

#[derive(Clone)]
struct Subscribed {
    connection: String,
    peer: Peer<RoleServer>,
    severity: u8,
}

/// One event, formatted.
struct Message {
    level: LoggingLevel,
    logger: String,
    text: String,
}

/// The layer that forwards loupe's events to subscribed clients, with its own filter (it sees
/// debug events of loupe's crates even when the stderr filter is `warn`).
pub fn client_log_layer<S>() -> impl Layer<S>
where
    S: Subscriber + for<'lookup> tracing_subscriber::registry::LookupSpan<'lookup>,
{
    ClientLog.with_filter(ClientFilter)
}

/// Subscribes `connection` (through `peer`) to the events at `level` and above, replacing what
/// it asked before. Called from `logging/setLevel`, on the async runtime.
pub(crate) fn subscribe(connection: &str, peer: Peer<RoleServer>, level: LoggingLevel) {
    let clients = &*CLIENTS;
    clients.queue.get_or_init(|| {
        let (sender, receiver) = mpsc::channel(QUEUE);
        tokio::spawn(drain(receiver));
        sender
    });
    let mut subscribed = lock(&clients.subscribed);
    subscribed.retain(|client| client.connection != connection);
    subscribed.push(Subscribed { connection: connection.to_owned(), peer, severity: severity(level) });
    refresh_threshold(&subscribed);
}

/// Sends each queued event to the connections whose level it meets, in the order they came.
async fn drain(mut receiver: mpsc::Receiver<Message>) {
    while let Some(message) = receiver.recv().await {
        let rank = severity(message.level);
        let clients: Vec<Subscribed> =
            lock(&CLIENTS.subscribed).iter().filter(|client| client.severity <= rank).cloned().collect();
        let dropped = CLIENTS.dropped.swap(0, Ordering::Relaxed);
        let text = match dropped {
            0 => message.text,
            dropped => format!("{} ({dropped} earlier log messages dropped: the client read too slowly)", message.text),
        };
        for client in clients {
            let notification = LoggingMessageNotificationParam::new(message.level, Value::from(text.as_str()))
                .with_logger(&message.logger);
            if client.peer.notify_logging_message(notification).await.is_err() {
                let mut subscribed = lock(&CLIENTS.subscribed);
                subscribed.retain(|known| known.connection != client.connection);
                refresh_threshold(&subscribed);
            }
        }
    }
}

fn refresh_threshold(subscribed: &[Subscribed]) {
    let lowest = subscribed.iter().map(|client| client.severity).min().unwrap_or(NOBODY);
    CLIENTS.threshold.store(lowest, Ordering::Relaxed);
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// MCP's severities in order (RFC 5424's, lowest first).
fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// A `tracing` level as MCP's (trace events are never forwarded).
fn mcp_level(level: Level) -> LoggingLevel {
    match level {
        Level::ERROR => LoggingLevel::Error,
        Level::WARN => LoggingLevel::Warning,
        Level::INFO => LoggingLevel::Info,
        _ => LoggingLevel::Debug,
    }
}

/// Whether an event is loupe's own (not rmcp's, tokio's, …).
fn is_loupes(metadata: &Metadata<'_>) -> bool {
    metadata.is_event() && metadata.target().starts_with("loupe") && *metadata.level() <= Level::DEBUG
}

/// Lets through loupe's events at or above the lowest level a client asked for.
struct ClientFilter;

impl<S> Filter<S> for ClientFilter {
    fn enabled(&self, metadata: &Metadata<'_>, _context: &Context<'_, S>) -> bool {
        is_loupes(metadata) && severity(mcp_level(*metadata.level())) >= CLIENTS.threshold.load(Ordering::Relaxed)
    }

    fn callsite_enabled(&self, metadata: &'static Metadata<'static>) -> Interest {
        // Whether a client listens changes at run time: ask per event, for loupe's only.
        if is_loupes(metadata) { Interest::sometimes() } else { Interest::never() }
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::DEBUG)
    }
}

struct ClientLog;

impl<S: Subscriber> Layer<S> for ClientLog {
    fn on_event(&self, event: &Event<'_>, _context: Context<'_, S>) {
        let Some(queue) = CLIENTS.queue.get() else { return };
        let metadata = event.metadata();
        let mut text = Text::default();
        event.record(&mut text);
        let message =
            Message { level: mcp_level(*metadata.level()), logger: metadata.target().to_owned(), text: text.0 };
        if queue.try_send(message).is_err() {
            CLIENTS.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// An event as one line: its message, then its other fields as `name=value`.
#[derive(Default)]
struct Text(String);

impl Visit for Text {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let fields = std::mem::take(&mut self.0);
            let _ = write!(self.0, "{value:?}{fields}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            let fields = std::mem::take(&mut self.0);
            self.0 = format!("{value}{fields}");
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severities_follow_mcp_and_tracing_levels_map_onto_them() {
        let order = [
            LoggingLevel::Debug,
            LoggingLevel::Info,
            LoggingLevel::Notice,
            LoggingLevel::Warning,
            LoggingLevel::Error,
            LoggingLevel::Critical,
            LoggingLevel::Alert,
            LoggingLevel::Emergency,
        ];
        assert!(order.windows(2).all(|pair| severity(pair[0]) < severity(pair[1])));
        assert_eq!(mcp_level(Level::WARN), LoggingLevel::Warning);
        assert_eq!(mcp_level(Level::TRACE), LoggingLevel::Debug);
        // `notice` lets warnings through and holds info back.
        assert!(severity(mcp_level(Level::WARN)) >= severity(LoggingLevel::Notice));
        assert!(severity(mcp_level(Level::INFO)) < severity(LoggingLevel::Notice));
    }
}
