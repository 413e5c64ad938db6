//! Where a call's time goes, stage by stage, over the last calls: what `manage metrics` carries
//! in its full envelope (`metadata: "full"`, `metrics.latency`) and the MCP benchmark reads, so that a slower answer shows the stage it happened in.
//!
//! The stages follow a call through a server: the transport reads and parses its line
//! (`receive`), the handler hands it to the blocking pool (`queue`), the engine answers
//! (`engine`, of which `tool` is the tool itself and `render` the two faces and the token
//! count), the answer becomes a `CallToolResult` (`convert`), is serialised onto the writer
//! (`send`) and written to the client (`write`). Each stage keeps its last `WINDOW` durations;
//! the engine's own stages are collected on the calling thread (`timed`) and filed by
//! `Engine::call_with`, the others by the MCP adapter that measures them.
//!
//! Must stay cheap (a lock and a ring write per stage) and never affect an answer.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Durations kept per stage.
const WINDOW: usize = 2048;

/// A step of a call's path through the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The transport: the client's line read and parsed into a message.
    Receive,
    /// The MCP handler: from the request to the engine starting on the blocking pool.
    Queue,
    /// The whole engine call: parsing, the session layer, the tool, rendering.
    Engine,
    /// The tool itself (search, read, …) inside the engine call.
    Tool,
    /// Both faces and the exact token count of the text face.
    Render,
    /// The engine's answer made into the protocol's result (structured content included).
    Convert,
    /// The answer serialised to one JSON line for the writer.
    Send,
    /// The line written and flushed to the client.
    Write,
}

impl Stage {
    /// Every stage, in the order a call meets them.
    pub const ALL: [Stage; 8] = [
        Stage::Receive,
        Stage::Queue,
        Stage::Engine,
        Stage::Tool,
        Stage::Render,
        Stage::Convert,
        Stage::Send,
        Stage::Write,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Receive => "receive",
            Stage::Queue => "queue",
            Stage::Engine => "engine",
            Stage::Tool => "tool",
            Stage::Render => "render",
            Stage::Convert => "convert",
            Stage::Send => "send",
            Stage::Write => "write",
        }
    }

    /// Its place in `ALL` (the variants are declared in that order).
    fn slot(self) -> usize {
        self as usize
    }
}

/// One stage's figures over the window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StageFigures {
    pub stage: Stage,
    /// Durations recorded since the start (the window holds at most `WINDOW` of them).
    pub count: u64,
    pub p50: Duration,
    pub p95: Duration,
}

/// The last durations of every stage, for one server (shared by its connections).
#[derive(Debug)]
pub struct LatencyLog {
    rings: Mutex<Vec<Ring>>,
}

#[derive(Debug, Default)]
struct Ring {
    recent: VecDeque<Duration>,
    count: u64,
}

impl Default for LatencyLog {
    fn default() -> Self {
        LatencyLog { rings: Mutex::new((0..Stage::ALL.len()).map(|_| Ring::default()).collect()) }
    }
}

impl LatencyLog {
    pub fn record(&self, stage: Stage, duration: Duration) {
        let Ok(mut rings) = self.rings.lock() else { return };
        let ring = &mut rings[stage.slot()];
        if ring.recent.len() == WINDOW {
            ring.recent.pop_front();
        }
        ring.recent.push_back(duration);
        ring.count += 1;
    }

    /// The stages with at least one duration, in path order.
    pub fn figures(&self) -> Vec<StageFigures> {
        let Ok(rings) = self.rings.lock() else { return Vec::new() };
        Stage::ALL
            .iter()
            .zip(rings.iter())
            .filter(|(_, ring)| !ring.recent.is_empty())
            .map(|(&stage, ring)| {
                let mut sorted: Vec<Duration> = ring.recent.iter().copied().collect();
                sorted.sort_unstable();
                let at = |quantile: f64| sorted[((sorted.len() - 1) as f64 * quantile).round() as usize];
                StageFigures { stage, count: ring.count, p50: at(0.5), p95: at(0.95) }
            })
            .collect()
    }

    /// Files the stages `timed` collected on this thread since the last call.
    pub(crate) fn file_pending(&self) {
        for (stage, duration) in PENDING.with(|pending| std::mem::take(&mut *pending.borrow_mut())) {
            self.record(stage, duration);
        }
    }
}

thread_local! {
    /// The engine's stages of the call running on this thread, until `file_pending`.
    static PENDING: RefCell<Vec<(Stage, Duration)>> = const { RefCell::new(Vec::new()) };
}

/// Runs `work`, noting its duration as `stage` of the call running on this thread.
pub(crate) fn timed<T>(stage: Stage, work: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let value = work();
    let elapsed = started.elapsed();
    PENDING.with(|pending| pending.borrow_mut().push((stage, elapsed)));
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_percentiles_of_the_last_window_in_path_order() {
        assert!(Stage::ALL.iter().enumerate().all(|(at, stage)| stage.slot() == at), "ALL is in declaration order");
        let log = LatencyLog::default();
        for micros in 1..=100u64 {
            log.record(Stage::Write, Duration::from_micros(micros));
        }
        for _ in 0..WINDOW + 10 {
            log.record(Stage::Receive, Duration::from_micros(7));
        }
        let figures = log.figures();
        let stages: Vec<Stage> = figures.iter().map(|figure| figure.stage).collect();
        assert_eq!(stages, vec![Stage::Receive, Stage::Write], "only stages with durations, in path order");
        assert_eq!(figures[0].count, (WINDOW + 10) as u64);
        assert_eq!(figures[0].p50, Duration::from_micros(7));
        assert_eq!(figures[1].p50, Duration::from_micros(51));
        assert_eq!(figures[1].p95, Duration::from_micros(95));
    }

    #[test]
    fn timed_stages_are_filed_once_by_the_thread_that_ran_them() {
        let log = LatencyLog::default();
        let value = timed(Stage::Tool, || 41 + 1);
        assert_eq!(value, 42);
        timed(Stage::Render, || ());
        log.file_pending();
        log.file_pending();
        let counts: Vec<(Stage, u64)> = log.figures().iter().map(|figure| (figure.stage, figure.count)).collect();
        assert_eq!(counts, vec![(Stage::Tool, 1), (Stage::Render, 1)]);
    }
}
