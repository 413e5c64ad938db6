//! The handle a caller gives long work: where to report progress, and a flag that stops it.
//!
//! Plain data, no MCP types: the MCP layer turns reports into `notifications/progress` and sets
//! the flag when the client sends `notifications/cancelled`; the CLI and tests pass
//! `Work::default()` (no reports, never cancelled). Work that can take long checks the flag
//! between steps (a chunk of files, a poll of the index) and stops early, answering with what it
//! has, marked as cut.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a call that needs the index waits for a first build (progress goes to callers that
/// asked, MCP: a progress token); past it, the answer comes from what is ready, marked
/// `index_state: building`.
pub(crate) const INDEX_WAIT: Duration = Duration::from_secs(10);

/// How often the wait reports progress.
const INDEX_POLL: Duration = Duration::from_millis(250);

/// One progress report: `done` of `total` (when the total is known yet), and what is being done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    pub done: u64,
    pub total: Option<u64>,
    pub message: String,
}

type Sink = Box<dyn Fn(&Progress) + Send + Sync>;

/// A progress-and-cancel handle for one call.
#[derive(Default)]
pub struct Work {
    cancelled: AtomicBool,
    sink: Option<Sink>,
}

impl std::fmt::Debug for Work {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Work")
            .field("cancelled", &self.is_cancelled())
            .field("reports_progress", &self.sink.is_some())
            .finish()
    }
}

impl Work {
    /// A handle whose progress goes to `sink` (called on the engine's thread: keep it quick).
    pub fn with_progress(sink: impl Fn(&Progress) + Send + Sync + 'static) -> Work {
        Work { cancelled: AtomicBool::new(false), sink: Some(Box::new(sink)) }
    }

    /// Asks the work to stop; it answers with what it has.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    /// Whether the caller asked to be told of progress (and so accepts to wait for it).
    pub fn reports_progress(&self) -> bool {
        self.sink.is_some()
    }

    pub(crate) fn report(&self, done: u64, total: Option<u64>, message: impl Into<String>) {
        if let Some(sink) = &self.sink {
            sink(&Progress { done, total, message: message.into() });
        }
    }

    /// Waits for the index's first build while `building` says so, reporting progress, for at
    /// most `limit`; stops at once when the work is cancelled.
    pub(crate) fn wait_for_index(&self, building: impl Fn() -> Option<(u64, u64)>, limit: Duration) {
        let started = Instant::now();
        while let Some((done, total)) = building() {
            if self.is_cancelled() || started.elapsed() >= limit {
                return;
            }
            // Before the walk has counted the files, the total is not known: say so, not 0.
            let total = (total > 0).then_some(total.max(done));
            let message = match total {
                Some(total) => format!("indexing {done} of {total} files"),
                None => "indexing: listing files".to_owned(),
            };
            self.report(done, total, message);
            std::thread::sleep(INDEX_POLL);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    #[test]
    fn the_wait_reports_progress_and_stops_when_cancelled() {
        let reports = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&reports);
        let work = Arc::new(Work::with_progress(move |progress| seen.lock().unwrap().push(progress.clone())));
        let polls = std::sync::atomic::AtomicU64::new(0);
        let canceller = Arc::clone(&work);
        work.wait_for_index(
            || {
                let poll = polls.fetch_add(1, Ordering::Relaxed);
                if poll == 2 {
                    canceller.cancel();
                }
                Some((poll * 10, if poll == 0 { 0 } else { 100 }))
            },
            Duration::from_secs(60),
        );
        let reports = reports.lock().unwrap();
        assert_eq!(reports.len(), 2, "{reports:?}");
        assert_eq!(reports[0].total, None, "an unknown total is not reported as 0");
        assert_eq!((reports[1].done, reports[1].total), (10, Some(100)));
    }

    #[test]
    fn without_a_sink_nothing_is_reported_and_the_wait_ends_when_built() {
        let work = Work::default();
        assert!(!work.reports_progress());
        let polls = std::sync::atomic::AtomicU64::new(0);
        work.wait_for_index(|| (polls.fetch_add(1, Ordering::Relaxed) < 1).then_some((1, 2)), Duration::from_secs(60));
        assert_eq!(polls.load(Ordering::Relaxed), 2);
    }
}
