//! Session metrics (§9.3), exactly as named, counted at the one control point.
//!
//! Reads count when they succeed; refused reads do not. `reads_lines_total` counts the lines
//! actually sent (lines elided by aggregation are not sent again); spans are the windows as
//! shown (first to last line), elided or not.

use serde_json::{Value, json};

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Metrics {
    pub(crate) reads_count: u64,
    pub(crate) reads_lines_total: u64,
    pub(crate) reads_chars_total: u64,
    pub(crate) reads_tokens_total: u64,
    pub(crate) search_count: u64,
    /// Reads that came after at least one search in the session.
    pub(crate) reads_after_search: u64,
    pub(crate) read_span_total: u64,
    pub(crate) max_read_span: u64,
    pub(crate) preview_degraded_count: u64,
    pub(crate) tokens_saved_estimate: u64,
    /// Reads and lines since the session's last search that returned hits: what the budget
    /// guard counts (§9.4), so a search opens a fresh allowance.
    pub(crate) allowance_reads: u64,
    pub(crate) allowance_lines: u64,
}

/// What one successful read contributes.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ReadSample {
    pub(crate) lines_sent: u64,
    pub(crate) chars: u64,
    pub(crate) tokens: u64,
    pub(crate) span: u64,
    pub(crate) degraded: bool,
    pub(crate) tokens_saved: u64,
}

impl Metrics {
    pub(crate) fn record_read(&mut self, sample: ReadSample) {
        if self.search_count > 0 {
            self.reads_after_search += 1;
        }
        self.reads_count += 1;
        self.reads_lines_total += sample.lines_sent;
        self.allowance_reads += 1;
        self.allowance_lines += sample.lines_sent;
        self.reads_chars_total += sample.chars;
        self.reads_tokens_total += sample.tokens;
        self.read_span_total += sample.span;
        self.max_read_span = self.max_read_span.max(sample.span);
        self.preview_degraded_count += u64::from(sample.degraded);
        self.tokens_saved_estimate += sample.tokens_saved;
    }

    /// A search; one that returned hits opens a fresh read allowance.
    pub(crate) fn record_search(&mut self, found: bool) {
        self.search_count += 1;
        if found {
            self.allowance_reads = 0;
            self.allowance_lines = 0;
        }
    }

    /// Reads that followed a search, over all reads (0 before any read).
    pub(crate) fn read_after_search_ratio(&self) -> f64 {
        if self.reads_count == 0 { 0.0 } else { round3(self.reads_after_search as f64 / self.reads_count as f64) }
    }

    pub(crate) fn avg_read_span(&self) -> f64 {
        if self.reads_count == 0 { 0.0 } else { round3(self.read_span_total as f64 / self.reads_count as f64) }
    }

    /// The §9.3 names, in the §9.3 order.
    pub(crate) fn snapshot(&self) -> Value {
        json!({
            "reads_count": self.reads_count,
            "reads_lines_total": self.reads_lines_total,
            "reads_chars_total": self.reads_chars_total,
            "reads_tokens_total": self.reads_tokens_total,
            "search_count": self.search_count,
            "read_after_search_ratio": self.read_after_search_ratio(),
            "avg_read_span": self.avg_read_span(),
            "max_read_span": self.max_read_span,
            "preview_degraded_count": self.preview_degraded_count,
            "tokens_saved_estimate": self.tokens_saved_estimate,
        })
    }
}

fn round3(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_exact_after_a_fixed_sequence() {
        let mut metrics = Metrics::default();
        metrics.record_read(ReadSample { lines_sent: 10, chars: 100, tokens: 30, span: 10, ..ReadSample::default() });
        metrics.record_search(true);
        metrics.record_read(ReadSample {
            lines_sent: 5,
            chars: 50,
            tokens: 20,
            span: 20,
            degraded: true,
            tokens_saved: 7,
        });
        metrics.record_read(ReadSample { lines_sent: 0, chars: 10, tokens: 5, span: 30, ..ReadSample::default() });
        assert_eq!(
            metrics.snapshot(),
            json!({"reads_count": 3, "reads_lines_total": 15, "reads_chars_total": 160, "reads_tokens_total": 55,
                   "search_count": 1, "read_after_search_ratio": 0.667, "avg_read_span": 20.0, "max_read_span": 30,
                   "preview_degraded_count": 1, "tokens_saved_estimate": 7})
        );
    }
}
