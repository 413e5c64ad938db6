//! The handle a caller gives long work: where to report progress, and a flag that stops it.
//!
//! Plain data, no MCP types: the MCP layer turns reports into `notifications/progress` and sets
//! the flag when the client sends `notifications/cancelled`; the CLI and tests pass
//! `Work::default()` (no reports, never cancelled). Work that can take long (the index wait, a
//! `reindex` walk, `analyze` parsing the files a query touches, a directory `diff_preview`)
//! reports from the loop that does it and checks the flag in the same loop, so it stops early,
//! answering with what it has, marked as cut.
//!
//! The handle keeps reports to what MCP allows: `done` only grows, `total` only when known
//! (never 0, never below `done`), none after a cancellation, and no more than one every
//! `REPORT_INTERVAL` (the last step, `done == total`, always goes out).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a call that needs the index waits for a first build (progress goes to callers that
/// asked, MCP: a progress token); past it, the answer comes from what is ready, marked
/// `index_state: building`.
pub(crate) const INDEX_WAIT: Duration = Duration::from_secs(10);

/// While the first index build runs, a search is a direct scan of the files bounded by this
/// much time (on one core, the build not paused for it): an agent searching every second gets
/// its answers at once and the build keeps its pace (issue 35, docs/decisions.md).
pub(crate) const BUILDING_SCAN: Duration = Duration::from_millis(100);

/// While the first index build runs, the files a page of text hits is in are parsed for the
/// definitions their hits are in (`(in name)`) for at most this long; hits in files past it
/// show no definition.
pub(crate) const BUILDING_NOTES: Duration = Duration::from_millis(50);

/// How often the wait reports progress.
const INDEX_POLL: Duration = Duration::from_millis(250);

/// The shortest time between two reports: a walk over 100,000 files reports a few per second,
/// not 100,000 notifications.
const REPORT_INTERVAL: Duration = Duration::from_millis(100);

/// One progress report: `done` of `total` (when the total is known yet), and what is being done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    pub done: u64,
    pub total: Option<u64>,
    pub message: String,
}

type Sink = Box<dyn Fn(&Progress) + Send + Sync>;

/// Why long work stopped before its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stopped {
    /// The caller cancelled the call.
    Cancelled,
    /// The call ran to its time budget (`max_call_secs`).
    TimeBudget(Duration),
    /// The heap grew by more than the call's memory budget (`max_call_mb`, in MiB) while it ran.
    MemoryBudget(u64),
    /// The first index build runs: a direct scan stopped at its budget (`BUILDING_SCAN`).
    Building(Duration),
}

impl Stopped {
    /// The `meta` field that says it: `cancelled`, or the budget that stopped the call.
    pub(crate) fn detail(self) -> (&'static str, serde_json::Value) {
        match self {
            Stopped::Cancelled => ("cancelled", serde_json::Value::Bool(true)),
            Stopped::TimeBudget(budget) => ("time_budget_secs", serde_json::Value::from(budget.as_secs())),
            Stopped::MemoryBudget(mib) => ("memory_budget_mib", serde_json::Value::from(mib)),
            Stopped::Building(budget) => ("building_scan_ms", serde_json::Value::from(budget.as_millis() as u64)),
        }
    }

    /// How an answer says it: `cancelled`, or which budget stopped it.
    pub(crate) fn words(self) -> String {
        match self {
            Stopped::Cancelled => "cancelled".to_owned(),
            Stopped::TimeBudget(budget) => {
                format!("stopped at the call's time budget ({} s, `max_call_secs`)", budget.as_secs())
            }
            Stopped::MemoryBudget(mib) => format!("stopped at the call's memory budget ({mib} MiB, `max_call_mb`)"),
            Stopped::Building(budget) => {
                format!("a {} ms scan of the files likeliest to hold it, not all of them", budget.as_millis())
            }
        }
    }
}

/// A progress-and-cancel handle for one call.
#[derive(Default)]
pub struct Work {
    cancelled: AtomicBool,
    sink: Option<Sink>,
    /// The last report passed on: its `done`, and when. Held while the sink runs, so reports
    /// from several threads reach it in order.
    last: Mutex<Option<(u64, Instant)>>,
    /// The call's time budget and when it runs out, set once when the engine takes the call.
    deadline: OnceLock<(Duration, Instant)>,
    /// A direct scan's budget while the first index build runs, and when it runs out.
    scan_deadline: OnceLock<(Duration, Instant)>,
    /// The call's memory budget in MiB and the heap's size when the call began.
    memory: OnceLock<(u64, u64)>,
    /// Checks since the heap was last read: it is read every `HEAP_CHECK_EVERY` checks.
    checks: std::sync::atomic::AtomicU64,
    /// Set once the heap was seen past the memory budget: every later check says so too, as
    /// the answer that stopped must say why.
    over_memory: AtomicBool,
    /// What the first check that said stop said: the work stopped early for it (`stopped_early`).
    stopped_for: OnceLock<Stopped>,
    /// The heap's allocated bytes now (`heap::figures`; a test's stand-in).
    heap: Option<fn() -> Option<u64>>,
}

/// How many `stopped` checks pass between two reads of the heap (a read costs a system call's
/// worth of time; a loop checks per file or per call site).
const HEAP_CHECK_EVERY: u64 = 64;

fn allocated_now() -> Option<u64> {
    crate::heap::figures().map(|figures| figures.allocated)
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
        Work { sink: Some(Box::new(sink)), ..Work::default() }
    }

    /// Starts the call's time budget (once: the first start holds, so a caller may set a
    /// tighter one than `max_call_secs` before the engine takes the call).
    pub fn start_budget(&self, budget: Duration) {
        let _ = self.deadline.set((budget, Instant::now() + budget));
    }

    /// Bounds the call's scans of the files while the first index build runs (once).
    pub(crate) fn start_scan_budget(&self, budget: Duration) {
        let _ = self.scan_deadline.set((budget, Instant::now() + budget));
    }

    /// Why the work should stop now, if it should: the caller cancelled it, or its time or
    /// memory budget ran out. Every loop that can run long checks it and answers with what it
    /// has, cut; once it says stop, it keeps saying it, and `stopped_early` remembers it.
    pub(crate) fn stopped(&self) -> Option<Stopped> {
        let stopped = self.check();
        if let Some(stopped) = stopped {
            let _ = self.stopped_for.set(stopped);
        }
        stopped
    }

    /// Why a loop of this call stopped before its end, if one did: what an answer says it cut.
    /// (A budget that ran out after the work was done cut nothing.)
    pub(crate) fn stopped_early(&self) -> Option<Stopped> {
        self.stopped_for.get().copied()
    }

    fn check(&self) -> Option<Stopped> {
        if self.is_cancelled() {
            return Some(Stopped::Cancelled);
        }
        if let Some((budget, deadline)) = self.deadline.get()
            && Instant::now() >= *deadline
        {
            return Some(Stopped::TimeBudget(*budget));
        }
        if let Some((budget, deadline)) = self.scan_deadline.get()
            && Instant::now() >= *deadline
        {
            return Some(Stopped::Building(*budget));
        }
        let (mib, start) = self.memory.get()?;
        if self.over_memory.load(Ordering::Relaxed) {
            return Some(Stopped::MemoryBudget(*mib));
        }
        if !self.checks.fetch_add(1, Ordering::Relaxed).is_multiple_of(HEAP_CHECK_EVERY) {
            return None;
        }
        let now = (self.heap.unwrap_or(allocated_now))()?;
        let over = now.saturating_sub(*start) > mib << 20;
        self.over_memory.fetch_or(over, Ordering::Relaxed);
        over.then_some(Stopped::MemoryBudget(*mib))
    }

    /// Starts the call's memory budget (once): how far the heap may grow while it runs. The
    /// heap is the process's, so calls running at once share what they grow; without an
    /// allocator probe (`heap::set_probe`; the binary registers jemalloc's) there is none.
    pub fn start_memory_budget(&self, mib: u64) {
        if let Some(start) = (self.heap.unwrap_or(allocated_now))() {
            let _ = self.memory.set((mib, start));
        }
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

    /// Reports `done` of `total` (`None` while the total is not known), described by `message`
    /// (only made when the report goes out). Dropped when the work is cancelled, when `done`
    /// does not grow, or sooner than `REPORT_INTERVAL` after the last one, unless it is the last
    /// step.
    pub(crate) fn report(&self, done: u64, total: Option<u64>, message: impl FnOnce() -> String) {
        let Some(sink) = &self.sink else { return };
        if self.is_cancelled() {
            return;
        }
        let total = total.filter(|total| *total > 0).map(|total| total.max(done));
        let mut last = self.last.lock().unwrap_or_else(|poison| poison.into_inner());
        if let Some((last_done, at)) = *last
            && (done <= last_done || (total != Some(done) && at.elapsed() < REPORT_INTERVAL))
        {
            return;
        }
        *last = Some((done, Instant::now()));
        sink(&Progress { done, total, message: message() });
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
            self.report(done, Some(total), || index_message(done, total));
            std::thread::sleep(INDEX_POLL);
        }
    }
}

/// What an index build (the first one, or `reindex`) is doing.
pub(crate) fn index_message(done: u64, total: u64) -> String {
    match total {
        0 => "indexing: listing files".to_owned(),
        total => format!("indexing {done} of {total} files"),
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

    /// MCP: the progress value grows with every notification, `total` is sent only when known,
    /// and nothing follows a cancellation.
    #[test]
    fn reports_grow_say_a_total_only_when_known_and_stop_at_a_cancel() {
        let reports = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&reports);
        let work = Work::with_progress(move |progress| seen.lock().unwrap().push(progress.clone()));
        work.report(0, Some(0), || "listing".to_owned());
        work.report(0, Some(40), || "same value again".to_owned());
        std::thread::sleep(REPORT_INTERVAL);
        work.report(3, Some(40), || "3 of 40".to_owned());
        work.report(2, Some(40), || "going back".to_owned());
        // Sooner than the interval: dropped, unless it is the last step.
        work.report(4, Some(40), || "too soon".to_owned());
        work.report(40, Some(40), || "the last step".to_owned());
        std::thread::sleep(REPORT_INTERVAL);
        work.report(41, Some(40), || "a total below done".to_owned());
        work.cancel();
        std::thread::sleep(REPORT_INTERVAL);
        work.report(50, None, || "after the cancel".to_owned());
        let reports = reports.lock().unwrap();
        let seen: Vec<(u64, Option<u64>, &str)> =
            reports.iter().map(|report| (report.done, report.total, report.message.as_str())).collect();
        assert_eq!(
            seen,
            [
                (0, None, "listing"),
                (3, Some(40), "3 of 40"),
                (40, Some(40), "the last step"),
                (41, Some(41), "a total below done")
            ]
        );
    }

    #[test]
    fn a_heap_grown_past_the_memory_budget_stops_the_work() {
        static HEAP: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1 << 30);
        let work = Work { heap: Some(|| Some(HEAP.load(Ordering::Relaxed))), ..Work::default() };
        assert_eq!(work.stopped(), None, "no budget yet");
        work.start_memory_budget(100);
        assert_eq!(work.stopped(), None);
        HEAP.fetch_add(101 << 20, Ordering::Relaxed);
        // Read every `HEAP_CHECK_EVERY` checks: within that many, it stops.
        let stopped = (0..HEAP_CHECK_EVERY).find_map(|_| work.stopped());
        assert_eq!(stopped, Some(Stopped::MemoryBudget(100)));
        assert_eq!(stopped.unwrap().words(), "stopped at the call's memory budget (100 MiB, `max_call_mb`)");
        // Once it said stop, every later check says it (the answer's own check among them).
        assert!((0..HEAP_CHECK_EVERY).all(|_| work.stopped() == Some(Stopped::MemoryBudget(100))));
    }

    /// An answer says it was cut only when a loop stopped for the budget, not when the budget ran
    /// out after the work was done.
    #[test]
    fn only_a_check_that_said_stop_makes_the_work_stopped_early() {
        let work = Work::default();
        work.start_budget(Duration::ZERO);
        assert_eq!(work.stopped_early(), None, "no loop has checked: nothing was cut");
        assert_eq!(work.stopped(), Some(Stopped::TimeBudget(Duration::ZERO)));
        assert_eq!(work.stopped_early(), Some(Stopped::TimeBudget(Duration::ZERO)));
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
