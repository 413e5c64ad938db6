//! AnalyticsState (§9.2): events go through a bounded queue to a batch writer thread that
//! appends JSON lines to `<index dir>/analytics.jsonl`, off the hot path.
//!
//! The queue holds 2000 events; when it is full the newest event is dropped and counted by
//! its type. Putting an event never blocks and never does IO. Nothing here feeds a policy
//! decision: RuntimeState (`store.rs`) does that.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};

use serde_json::{Map, Value, json};

/// §9.2: `maxsize = 2000`.
pub(crate) const QUEUE_CAPACITY: usize = 2000;

/// Events written per batch at most.
const BATCH: usize = 512;

/// After the first event of a batch, the writer waits this long for more, so a busy session
/// costs one append per interval rather than one per call.
const BATCH_WINDOW: std::time::Duration = std::time::Duration::from_millis(25);

/// One analytics event: its type (`read`, `search`, `refusal`, `manage`) and its fields.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub(crate) event_type: &'static str,
    pub(crate) fields: Map<String, Value>,
}

/// What the writer thread shares with the producers.
#[derive(Debug, Default)]
struct WriterState {
    /// Events appended to the file.
    written: AtomicU64,
    /// Events taken off the queue, appended or not (an unwritable file loses them).
    handled: AtomicU64,
    /// Set by `flush`: the writer stops waiting for more events and writes now.
    flush: std::sync::atomic::AtomicBool,
}

/// The producer side: a bounded queue and the counters `manage metrics` reports.
#[derive(Debug)]
pub(crate) struct AnalyticsQueue {
    sender: Option<SyncSender<Event>>,
    /// Held only by a queue without a writer (tests), so that nothing drains it.
    _parked: Option<Mutex<Receiver<Event>>>,
    enqueued: AtomicU64,
    writer: std::sync::Arc<WriterState>,
    drops: Mutex<BTreeMap<&'static str, u64>>,
    path: Option<PathBuf>,
}

impl AnalyticsQueue {
    /// A queue drained by a writer thread appending to `path`.
    pub(crate) fn with_writer(path: PathBuf) -> AnalyticsQueue {
        AnalyticsQueue::rotating_at(path, MAX_ANALYTICS_BYTES)
    }

    /// `with_writer`, rotating the file once it holds `max_bytes`.
    fn rotating_at(path: PathBuf, max_bytes: u64) -> AnalyticsQueue {
        let (sender, receiver) = sync_channel(QUEUE_CAPACITY);
        let writer = std::sync::Arc::new(WriterState::default());
        let state = std::sync::Arc::clone(&writer);
        let file_path = path.clone();
        let spawned = std::thread::Builder::new()
            .name("loupe-analytics".into())
            .spawn(move || write_batches(&receiver, &file_path, &state, max_bytes));
        let sender = match spawned {
            Ok(_) => Some(sender),
            Err(error) => {
                tracing::warn!("cannot start the analytics writer: {error}; analytics are off");
                None
            }
        };
        AnalyticsQueue {
            sender,
            _parked: None,
            enqueued: AtomicU64::new(0),
            writer,
            drops: Mutex::new(BTreeMap::new()),
            path: Some(path),
        }
    }

    /// Analytics off (`analytics = false`): every event is discarded without being counted
    /// as a drop.
    pub(crate) fn disabled() -> AnalyticsQueue {
        AnalyticsQueue {
            sender: None,
            _parked: None,
            enqueued: AtomicU64::new(0),
            writer: std::sync::Arc::default(),
            drops: Mutex::new(BTreeMap::new()),
            path: None,
        }
    }

    /// A queue of `capacity` that nothing drains, so overflow is deterministic (tests).
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn parked(capacity: usize) -> AnalyticsQueue {
        let (sender, receiver) = sync_channel(capacity);
        AnalyticsQueue {
            sender: Some(sender),
            _parked: Some(Mutex::new(receiver)),
            enqueued: AtomicU64::new(0),
            writer: std::sync::Arc::default(),
            drops: Mutex::new(BTreeMap::new()),
            path: None,
        }
    }

    /// Never blocks: a full queue drops this (the newest) event and counts it by type.
    pub(crate) fn put(&self, event: Event) {
        let Some(sender) = &self.sender else { return };
        let event_type = event.event_type;
        match sender.try_send(event) {
            Ok(()) => {
                self.enqueued.fetch_add(1, Ordering::Relaxed);
            }
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                if let Ok(mut drops) = self.drops.lock() {
                    *drops.entry(event_type).or_default() += 1;
                }
            }
        }
    }

    /// Asks the writer to write what it holds now and waits (at most `timeout`) until every
    /// queued event was handled. For a process about to exit; never on the hot path.
    pub(crate) fn flush(&self, timeout: std::time::Duration) {
        if self.sender.is_none() || self._parked.is_some() {
            return;
        }
        let started = std::time::Instant::now();
        self.writer.flush.store(true, Ordering::Release);
        while self.writer.handled.load(Ordering::Acquire) < self.enqueued.load(Ordering::Acquire)
            && started.elapsed() < timeout
        {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        self.writer.flush.store(false, Ordering::Release);
    }

    /// `drop_count_by_type`, always present (empty when nothing was dropped).
    pub(crate) fn drop_count_by_type(&self) -> BTreeMap<&'static str, u64> {
        self.drops.lock().map(|drops| drops.clone()).unwrap_or_default()
    }

    /// The counters for `manage metrics`.
    pub(crate) fn counters(&self) -> Value {
        json!({
            "enabled": self.sender.is_some(),
            "queue_capacity": QUEUE_CAPACITY,
            "enqueued": self.enqueued.load(Ordering::Relaxed),
            "written": self.writer.written.load(Ordering::Relaxed),
            "drop_count_by_type": self.drop_count_by_type(),
            "file": self.path.as_ref().map(|path| path.display().to_string()),
        })
    }
}

/// The size at which `analytics.jsonl` is rotated.
const MAX_ANALYTICS_BYTES: u64 = 16 << 20;

/// The writer: waits for an event, takes whatever else is queued (up to a batch), appends
/// them as JSON lines, repeats until every sender is gone.
#[allow(clippy::disallowed_methods, reason = "the analytics log, in the index directory (§9.2)")]
fn write_batches(receiver: &Receiver<Event>, path: &std::path::Path, state: &WriterState, max_bytes: u64) {
    let mut file = None;
    while let Ok(first) = receiver.recv() {
        let window_end = std::time::Instant::now() + BATCH_WINDOW;
        while std::time::Instant::now() < window_end && !state.flush.load(Ordering::Acquire) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let mut batch = vec![first];
        while batch.len() < BATCH
            && let Ok(event) = receiver.try_recv()
        {
            batch.push(event);
        }
        // Bounded: past `max_bytes` the file becomes `analytics.jsonl.1` (the
        // one before is dropped) and a new one starts, so a server left running keeps at most
        // twice that on disk.
        if file.as_ref().and_then(|out: &std::fs::File| out.metadata().ok()).is_some_and(|m| m.len() >= max_bytes) {
            file = None;
            let _ = std::fs::rename(path, path.with_extension("jsonl.1"));
        }
        if file.is_none() {
            if let Some(parent) = path.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            file = std::fs::OpenOptions::new().create(true).append(true).open(path).ok();
        }
        if let Some(out) = file.as_mut() {
            let mut text = String::new();
            for event in &batch {
                let mut object = event.fields.clone();
                object.insert("type".into(), Value::from(event.event_type));
                text.push_str(&Value::Object(object).to_string());
                text.push('\n');
            }
            if out.write_all(text.as_bytes()).and_then(|()| out.flush()).is_ok() {
                state.written.fetch_add(batch.len() as u64, Ordering::Relaxed);
            }
        }
        state.handled.fetch_add(batch.len() as u64, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(event_type: &'static str) -> Event {
        Event { event_type, fields: Map::new() }
    }

    #[test]
    fn overflow_drops_the_newest_and_counts_by_type_deterministically() {
        let queue = AnalyticsQueue::parked(QUEUE_CAPACITY);
        for index in 0..QUEUE_CAPACITY + 30 {
            queue.put(event(if index % 3 == 0 { "search" } else { "read" }));
        }
        let drops = queue.drop_count_by_type();
        // Events 2000..2029: indices divisible by 3 are searches (2001, 2004, ... 2028: 10).
        assert_eq!(drops.get("search"), Some(&10));
        assert_eq!(drops.get("read"), Some(&20));
        assert_eq!(queue.counters()["enqueued"], json!(QUEUE_CAPACITY));
        assert_eq!(queue.counters()["drop_count_by_type"], json!({"read": 20, "search": 10}));
    }

    #[test]
    fn put_never_blocks_on_a_full_queue() {
        let queue = AnalyticsQueue::parked(1);
        let started = std::time::Instant::now();
        for _ in 0..10_000 {
            queue.put(event("read"));
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        assert_eq!(queue.drop_count_by_type().get("read"), Some(&9_999));
    }

    #[test]
    fn the_writer_appends_json_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("analytics.jsonl");
        let queue = AnalyticsQueue::with_writer(path.clone());
        let mut fields = Map::new();
        fields.insert("tool".into(), Value::from("read"));
        queue.put(Event { event_type: "read", fields });
        queue.put(event("search"));
        queue.flush(std::time::Duration::from_secs(10));
        assert_eq!(queue.counters()["written"], json!(2));
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
        assert_eq!(lines, [json!({"tool": "read", "type": "read"}), json!({"type": "search"})]);
    }

    /// `analytics.jsonl` once grew without bound. Past its size it becomes `.1` and starts over.
    #[test]
    fn h7b_the_analytics_file_is_rotated_at_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("analytics.jsonl");
        let queue = AnalyticsQueue::rotating_at(path.clone(), 200);
        for _ in 0..40 {
            queue.put(event("search"));
            queue.flush(std::time::Duration::from_secs(10));
        }
        let current = std::fs::metadata(&path).unwrap().len();
        let previous = std::fs::metadata(path.with_extension("jsonl.1")).unwrap().len();
        assert!(current <= 200 + 64 && previous <= 200 + 64, "{current} / {previous}");
        assert_eq!(queue.counters()["written"], json!(40));
    }

    #[test]
    fn disabled_analytics_count_nothing() {
        let queue = AnalyticsQueue::disabled();
        queue.put(event("read"));
        assert_eq!(queue.counters()["enabled"], json!(false));
        assert!(queue.drop_count_by_type().is_empty());
    }
}
