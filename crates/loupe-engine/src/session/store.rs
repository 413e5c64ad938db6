//! RuntimeState (§9.2): the per-session state policy decisions are made on, in memory only,
//! with an idle TTL and a cap on the number of sessions (§9.1).
//!
//! Nothing here is persisted or written to disk. A session idle longer than the TTL starts
//! over; when the cap on their number or on their memory is reached the least recently used
//! session is evicted.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::metrics::Metrics;
use crate::read::ReadKey;

/// §9.1: at most this many sessions; the least recently used is evicted.
pub(crate) const MAX_SESSIONS: usize = 4096;

/// What all sessions together may hold, estimated (`Session::heap_bytes`): past it the least
/// recently used go, as past `MAX_SESSIONS`. A session of searches and reads is some 30–100 KB
/// (its search records, issued reads and aggregation map), so the count alone let a server
/// that saw many short sessions hold hundreds of MB for the TTL (the 30-minute soak of
/// `bench/soak/`, a session per 20 reads: +100 MB); this keeps a few hundred such sessions.
pub(crate) const MAX_SESSION_BYTES: usize = 16 << 20;

/// §9.7: refs are valid for the session's last 20 searches.
pub(crate) const SEARCHES_KEPT: usize = 20;

/// Read calls issued by reads (continuations, suggestions) that replay without a ref.
const READ_CALLS_KEPT: usize = 64;

/// One hit a search showed, as the gate and the relevance guard need it.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub(crate) id: String,
    pub(crate) path: String,
    /// The symbol's name, for symbol hits.
    pub(crate) symbol: Option<String>,
    /// The hit's line (a symbol's first line), when it has one.
    pub(crate) line: Option<usize>,
    /// The read's arguments `read {"candidate_id": id}` stands for.
    pub(crate) read: Map<String, Value>,
}

/// What a session remembers of one search.
#[derive(Debug, Clone, Default)]
pub(crate) struct SearchRecord {
    pub(crate) bundle_id: String,
    /// The hits shown, in rank order.
    pub(crate) candidates: Vec<Candidate>,
    /// The `read` next_calls the search issued.
    pub(crate) read_calls: Vec<ReadKey>,
}

/// Lines `first..=last` sent by read number `read`, when the session had sent `at` tokens of reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SentRange {
    pub(crate) first: usize,
    pub(crate) last: usize,
    pub(crate) read: u64,
    pub(crate) at: u64,
}

/// Lines of one file the session received, with the file hash they were sent under.
#[derive(Debug, Clone, Default)]
pub(crate) struct SentFile {
    pub(crate) file_hash: String,
    /// Disjoint ranges, sorted by first line.
    pub(crate) ranges: Vec<SentRange>,
}

/// RuntimeState of one session.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    pub(crate) key: String,
    pub(crate) last_used: Instant,
    /// `heap_bytes` when the store last measured it (after the call that used it).
    measured: usize,
    pub(crate) metrics: Metrics,
    pub(crate) searches: VecDeque<SearchRecord>,
    pub(crate) read_calls: VecDeque<ReadKey>,
    /// Aggregation: what was sent, per path.
    pub(crate) sent: BTreeMap<String, SentFile>,
}

impl Session {
    fn new(key: String, now: Instant) -> Session {
        Session {
            key,
            last_used: now,
            measured: 0,
            metrics: Metrics::default(),
            searches: VecDeque::new(),
            read_calls: VecDeque::new(),
            sent: BTreeMap::new(),
        }
    }

    /// What the session holds on the heap, estimated from its strings and collections: the
    /// measure of the store's memory budget.
    pub(crate) fn heap_bytes(&self) -> usize {
        const ENTRY: usize = 32;
        let searches: usize = self
            .searches
            .iter()
            .map(|search| {
                let candidates: usize = search
                    .candidates
                    .iter()
                    .map(|candidate| {
                        std::mem::size_of::<Candidate>()
                            + candidate.id.capacity()
                            + candidate.path.capacity()
                            + candidate.symbol.as_ref().map_or(0, String::capacity)
                            + map_bytes(&candidate.read)
                    })
                    .sum();
                let reads: usize =
                    search.read_calls.iter().map(|call| std::mem::size_of::<ReadKey>() + call.heap_bytes()).sum();
                std::mem::size_of::<SearchRecord>() + search.bundle_id.capacity() + candidates + reads
            })
            .sum();
        let read_calls: usize =
            self.read_calls.iter().map(|call| std::mem::size_of::<ReadKey>() + call.heap_bytes()).sum();
        let sent: usize = self
            .sent
            .iter()
            .map(|(path, file)| {
                ENTRY
                    + path.capacity()
                    + std::mem::size_of::<SentFile>()
                    + file.file_hash.capacity()
                    + file.ranges.capacity() * std::mem::size_of::<SentRange>()
            })
            .sum();
        std::mem::size_of::<Session>() + self.key.capacity() + searches + read_calls + sent
    }

    pub(crate) fn remember_search(&mut self, record: SearchRecord) {
        self.searches.push_front(record);
        self.searches.truncate(SEARCHES_KEPT);
    }

    pub(crate) fn remember_read_calls(&mut self, calls: impl IntoIterator<Item = ReadKey>) {
        for call in calls {
            if !self.read_calls.contains(&call) {
                self.read_calls.push_front(call);
            }
        }
        self.read_calls.truncate(READ_CALLS_KEPT);
    }
}

/// The estimated heap bytes of a JSON object (a candidate's read arguments): a B-tree node
/// (room for 11 keys and values, some 640 bytes) per 11 entries, and what they point to.
fn map_bytes(map: &Map<String, Value>) -> usize {
    const NODE: usize = 11 * (std::mem::size_of::<String>() + std::mem::size_of::<Value>()) + 16;
    map.len().div_ceil(11) * NODE + map.iter().map(|(key, value)| key.capacity() + value_bytes(value)).sum::<usize>()
}

fn value_bytes(value: &Value) -> usize {
    match value {
        Value::String(text) => text.capacity(),
        Value::Array(items) => items.iter().map(|item| std::mem::size_of::<Value>() + value_bytes(item)).sum(),
        Value::Object(map) => map_bytes(map),
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

/// All sessions of one workspace.
#[derive(Debug)]
pub(crate) struct SessionStore {
    sessions: HashMap<String, Session>,
    ttl: Duration,
    cap: usize,
    /// The memory budget (`MAX_SESSION_BYTES`), and the sum of the sessions' last measures.
    budget: usize,
    bytes: usize,
    /// The session handed out last: its caller may have changed it since, so it is measured
    /// again at the next call (the store's lock was released in between).
    unmeasured: Option<String>,
    /// Calls since the last sweep of expired sessions.
    since_sweep: usize,
}

impl SessionStore {
    pub(crate) fn new(ttl: Duration, cap: usize) -> SessionStore {
        SessionStore::with_budget(ttl, cap, MAX_SESSION_BYTES)
    }

    pub(crate) fn with_budget(ttl: Duration, cap: usize, budget: usize) -> SessionStore {
        SessionStore {
            sessions: HashMap::new(),
            ttl,
            cap: cap.max(1),
            budget,
            bytes: 0,
            unmeasured: None,
            since_sweep: 0,
        }
    }

    /// The session for `key`, created (or started over, when it expired) as needed. Past the
    /// cap on the number of sessions or on their memory, the least recently used others go.
    pub(crate) fn session(&mut self, key: &str, now: Instant) -> &mut Session {
        self.measure_last();
        self.since_sweep += 1;
        if self.since_sweep >= 256 {
            self.sweep(now);
        }
        let expired = self.sessions.get(key).is_some_and(|session| now.duration_since(session.last_used) > self.ttl);
        if expired {
            self.remove(key);
        }
        if !self.sessions.contains_key(key) && self.sessions.len() >= self.cap {
            self.sweep(now);
            while self.sessions.len() >= self.cap && self.evict_oldest(key) {}
        }
        if self.bytes > self.budget {
            self.sweep(now);
            while self.bytes > self.budget && self.evict_oldest(key) {}
        }
        self.unmeasured = Some(key.to_owned());
        let session = self.sessions.entry(key.to_owned()).or_insert_with(|| Session::new(key.to_owned(), now));
        session.last_used = now;
        session
    }

    /// The sessions' memory as last measured (the session in use may have grown since).
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Measures the session handed out last, so `bytes` includes what its call added.
    fn measure_last(&mut self) {
        let Some(key) = self.unmeasured.take() else { return };
        if let Some(session) = self.sessions.get_mut(&key) {
            let now = session.heap_bytes();
            self.bytes = self.bytes - session.measured + now;
            session.measured = now;
        }
    }

    /// Evicts the least recently used session other than `keep`; false when there is none.
    fn evict_oldest(&mut self, keep: &str) -> bool {
        let oldest = self
            .sessions
            .values()
            .filter(|session| session.key != keep)
            .min_by(|a, b| a.last_used.cmp(&b.last_used).then_with(|| a.key.cmp(&b.key)))
            .map(|session| session.key.clone());
        match oldest {
            Some(oldest) => {
                self.remove(&oldest);
                true
            }
            None => false,
        }
    }

    fn remove(&mut self, key: &str) {
        if let Some(session) = self.sessions.remove(key) {
            self.bytes -= session.measured;
        }
    }

    /// The session for `key` when it exists and is live, without creating or touching it.
    pub(crate) fn peek(&self, key: &str, now: Instant) -> Option<&Session> {
        self.sessions.get(key).filter(|session| now.duration_since(session.last_used) <= self.ttl)
    }

    pub(crate) fn len(&self) -> usize {
        self.sessions.len()
    }

    fn sweep(&mut self, now: Instant) {
        self.since_sweep = 0;
        let ttl = self.ttl;
        let mut freed = 0;
        self.sessions.retain(|_, session| {
            let live = now.duration_since(session.last_used) <= ttl;
            if !live {
                freed += session.measured;
            }
            live
        });
        self.bytes -= freed;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_session_expires_after_the_ttl() {
        let mut store = SessionStore::new(Duration::from_secs(60), 10);
        let start = Instant::now();
        store.session("a", start).metrics.search_count = 3;
        assert_eq!(store.session("a", start + Duration::from_secs(59)).metrics.search_count, 3);
        // Idle time counts from the last use, not from creation.
        assert_eq!(store.session("a", start + Duration::from_secs(118)).metrics.search_count, 3);
        assert!(store.peek("a", start + Duration::from_secs(179)).is_none());
        assert_eq!(store.session("a", start + Duration::from_secs(179)).metrics.search_count, 0);
    }

    #[test]
    fn the_cap_evicts_the_least_recently_used() {
        let mut store = SessionStore::new(Duration::from_secs(3600), 3);
        let start = Instant::now();
        for (offset, key) in ["a", "b", "c"].iter().enumerate() {
            store.session(key, start + Duration::from_secs(offset as u64)).metrics.search_count = 1;
        }
        store.session("a", start + Duration::from_secs(10));
        store.session("d", start + Duration::from_secs(11));
        assert_eq!(store.len(), 3);
        let now = start + Duration::from_secs(12);
        assert!(store.peek("b", now).is_none(), "b was the least recently used");
        assert!(store.peek("a", now).is_some() && store.peek("c", now).is_some() && store.peek("d", now).is_some());
    }

    /// A search record as a search of 20 hits leaves it: each hit's id, path and read.
    fn searched(search: usize) -> SearchRecord {
        let candidates = (0..20)
            .map(|hit| {
                let path = format!("django/contrib/admin/views/module_{search}_{hit}.py");
                let mut read = Map::new();
                read.insert("mode".into(), Value::from("file"));
                read.insert("target".into(), Value::from(path.clone()));
                read.insert("lines".into(), Value::from("120-180"));
                Candidate {
                    id: format!("c_{search}_{hit}"),
                    path,
                    symbol: Some(format!("symbol_{hit}")),
                    line: None,
                    read,
                }
            })
            .collect();
        SearchRecord { bundle_id: format!("b_{search}"), candidates, read_calls: Vec::new() }
    }

    /// Issue 14's soak: a client opens a new session every 20 reads, so a server sees
    /// hundreds of sessions within the TTL, each holding its searches. However many sessions
    /// come, the store holds at most its memory budget (plus the session in use), dropping the
    /// least recently used; the count cap alone let them all stay.
    #[test]
    fn rss_many_short_sessions_stay_within_the_memory_budget() {
        let budget = 1 << 20;
        let mut store = SessionStore::with_budget(Duration::from_secs(7200), MAX_SESSIONS, budget);
        let start = Instant::now();
        for task in 0..1000u64 {
            let session = store.session(&format!("task-{task}"), start + Duration::from_millis(task));
            for search in 0..5 {
                session.remember_search(searched(search));
            }
        }
        let now = start + Duration::from_secs(2);
        let one = store.peek("task-999", now).expect("the newest session stays").heap_bytes();
        assert!(one > 10_000, "a session of 5 searches of 20 hits is measured at {one} bytes");
        store.session("probe", now);
        let held: usize = store.sessions.values().map(Session::heap_bytes).sum();
        assert_eq!(held, store.bytes() + store.peek("probe", now).map_or(0, Session::heap_bytes));
        assert!(held <= budget + 2 * one, "the sessions hold {held} bytes, over the budget of {budget}");
        assert!(store.len() < 1000 && store.len() > budget / one / 2, "{} sessions kept", store.len());
        assert!(store.peek("task-0", now).is_none(), "the least recently used went first");
    }

    #[test]
    fn refs_are_kept_for_the_last_twenty_searches() {
        let mut store = SessionStore::new(Duration::from_secs(3600), 3);
        let session = store.session("a", Instant::now());
        for index in 0..25 {
            session.remember_search(SearchRecord { bundle_id: format!("b_{index}"), ..SearchRecord::default() });
        }
        assert_eq!(session.searches.len(), SEARCHES_KEPT);
        assert_eq!(session.searches.front().unwrap().bundle_id, "b_24");
        assert_eq!(session.searches.back().unwrap().bundle_id, "b_5");
    }
}
