//! The budget guard (§9.4). Per-read ceilings are soft: `read` clamps to them, marks the
//! result degraded and says `BUDGET_SOFT_LIMIT`. Session limits steer, they never end a
//! session: they count the reads and lines since the session's last search that returned hits
//! (the allowance), so once `max_reads_per_session` reads or `max_total_read_lines` lines were
//! sent since then, a read is refused with `BUDGET_EXCEEDED` (reason `BUDGET_HARD_LIMIT`) and
//! two next calls: a search that finds the read's own target (a file search for its name, a
//! symbol search for its symbol), which opens a fresh allowance, then the read itself, which the
//! session then serves. At 80% of an allowance every answer warns (`BUDGET_NEAR_LIMIT`) and
//! suggests a search.
//! Totals since the session began stay in the metrics. `search` and `manage` are never blocked.

use loupe_core::{Config, ErrorCode, NextCall, ToolError};

use super::metrics::Metrics;

/// §9.8 `budget_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum BudgetState {
    Normal,
    SoftLimit,
    HardLimit,
}

impl BudgetState {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            BudgetState::Normal => "NORMAL",
            BudgetState::SoftLimit => "SOFT_LIMIT",
            BudgetState::HardLimit => "HARD_LIMIT",
        }
    }
}

/// The fraction of the session's budget used: the larger of reads and lines.
fn used(config: &Config, metrics: &Metrics) -> f64 {
    let reads = metrics.allowance_reads as f64 / config.max_reads_per_session.max(1) as f64;
    let lines = metrics.allowance_lines as f64 / config.max_total_read_lines.max(1) as f64;
    reads.max(lines)
}

/// What is left of the allowance: (reads, lines).
pub(crate) fn left(config: &Config, metrics: &Metrics) -> (u64, u64) {
    (
        (config.max_reads_per_session as u64).saturating_sub(metrics.allowance_reads),
        (config.max_total_read_lines as u64).saturating_sub(metrics.allowance_lines),
    )
}

/// The session's state, and the warning to give (at 80% and over).
pub(crate) fn state(config: &Config, metrics: &Metrics) -> (BudgetState, Option<String>) {
    let fraction = used(config, metrics);
    let usage = format!(
        "{}/{} reads, {}/{} lines since the last search",
        metrics.allowance_reads, config.max_reads_per_session, metrics.allowance_lines, config.max_total_read_lines
    );
    if fraction >= 1.0 {
        (BudgetState::HardLimit, Some(format!("read allowance used up ({usage}): search before the next read")))
    } else if fraction >= 0.8 {
        (
            BudgetState::SoftLimit,
            Some(format!("read allowance at {}% ({usage}): narrow with search", (fraction * 100.0) as u64)),
        )
    } else {
        (BudgetState::Normal, None)
    }
}

/// The refusal of a read once the allowance is used up: search (which opens a fresh
/// allowance), then this read again.
pub(crate) fn hard_limit(config: &Config, metrics: &Metrics, search: NextCall, read: NextCall) -> Option<ToolError> {
    let over_reads = metrics.allowance_reads >= config.max_reads_per_session as u64;
    let over_lines = metrics.allowance_lines >= config.max_total_read_lines as u64;
    if !over_reads && !over_lines {
        return None;
    }
    let what = if over_reads {
        format!("{} reads (max_reads_per_session = {})", metrics.allowance_reads, config.max_reads_per_session)
    } else {
        format!("{} lines (max_total_read_lines = {})", metrics.allowance_lines, config.max_total_read_lines)
    };
    Some(
        ToolError::new(
            ErrorCode::BudgetExceeded,
            format!("Read budget exceeded: {what} since this session's last search. Use search to narrow scope"),
            "search (a search with hits opens a fresh allowance), then read; the next calls do both",
        )
        .with_next_call(search)
        .with_next_call(read),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soft_at_eighty_percent_and_hard_at_the_limit_of_the_allowance() {
        let config = Config { max_reads_per_session: 10, max_total_read_lines: 1000, ..Config::default() };
        let search = || NextCall::new("search", serde_json::json!({"query": "parse"}));
        let read = || NextCall::new("read", serde_json::json!({"mode": "file", "target": "a.rs"}));
        let mut metrics = Metrics { allowance_reads: 7, allowance_lines: 100, reads_count: 70, ..Metrics::default() };
        assert_eq!(state(&config, &metrics).0, BudgetState::Normal, "totals do not count, the allowance does");
        assert!(hard_limit(&config, &metrics, search(), read()).is_none());
        metrics.allowance_reads = 8;
        let (budget, warning) = state(&config, &metrics);
        assert_eq!(budget, BudgetState::SoftLimit);
        assert!(warning.unwrap().contains("80%"));
        metrics.allowance_reads = 9;
        metrics.allowance_lines = 1000;
        assert_eq!(state(&config, &metrics).0, BudgetState::HardLimit);
        let refusal = hard_limit(&config, &metrics, search(), read()).unwrap();
        assert_eq!(refusal.code, ErrorCode::BudgetExceeded);
        assert_eq!(refusal.next_calls[0].render(), r#"search {"query":"parse"}"#);
        assert_eq!(refusal.next_calls[1].tool, "read");
        metrics.record_search(false);
        assert_eq!(state(&config, &metrics).0, BudgetState::HardLimit, "a search without hits opens nothing");
        metrics.record_search(true);
        assert_eq!((state(&config, &metrics).0, left(&config, &metrics)), (BudgetState::Normal, (10, 1000)));
    }
}
