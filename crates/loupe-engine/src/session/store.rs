//! RuntimeState (§9.2): the per-session state policy decisions are made on, in memory only,
//! with an idle TTL and a cap on the number of sessions (§9.1).
//!
//! Nothing here is persisted or written to disk. A session idle longer than the TTL starts
//! over; when the cap is reached the least recently used session is evicted.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::metrics::Metrics;
use crate::read::ReadKey;

/// §9.1: at most this many sessions; the least recently used is evicted.
pub(crate) const MAX_SESSIONS: usize = 4096;

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
            metrics: Metrics::default(),
            searches: VecDeque::new(),
            read_calls: VecDeque::new(),
            sent: BTreeMap::new(),
        }
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

/// All sessions of one engine.
#[derive(Debug)]
pub(crate) struct SessionStore {
    sessions: HashMap<String, Session>,
    ttl: Duration,
    cap: usize,
    /// Calls since the last sweep of expired sessions.
    since_sweep: usize,
}

impl SessionStore {
    pub(crate) fn new(ttl: Duration, cap: usize) -> SessionStore {
        SessionStore { sessions: HashMap::new(), ttl, cap: cap.max(1), since_sweep: 0 }
    }

    /// The session for `key`, created (or started over, when it expired) as needed.
    pub(crate) fn session(&mut self, key: &str, now: Instant) -> &mut Session {
        self.since_sweep += 1;
        if self.since_sweep >= 256 {
            self.sweep(now);
        }
        let expired = self.sessions.get(key).is_some_and(|session| now.duration_since(session.last_used) > self.ttl);
        if expired {
            self.sessions.remove(key);
        }
        if !self.sessions.contains_key(key) && self.sessions.len() >= self.cap {
            self.sweep(now);
            while self.sessions.len() >= self.cap {
                let Some(oldest) = self
                    .sessions
                    .values()
                    .min_by(|a, b| a.last_used.cmp(&b.last_used).then_with(|| a.key.cmp(&b.key)))
                    .map(|session| session.key.clone())
                else {
                    break;
                };
                self.sessions.remove(&oldest);
            }
        }
        let session = self.sessions.entry(key.to_owned()).or_insert_with(|| Session::new(key.to_owned(), now));
        session.last_used = now;
        session
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
        self.sessions.retain(|_, session| now.duration_since(session.last_used) <= ttl);
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
