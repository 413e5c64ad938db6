//! The budget guard (§9.4). Per-read ceilings are soft: `read` clamps to them, marks the
//! result degraded and says `BUDGET_SOFT_LIMIT`. Session limits are hard: once
//! `max_reads_per_session` reads or `max_total_read_lines` lines were sent, reads are refused
//! with `BUDGET_EXCEEDED` (reason `BUDGET_HARD_LIMIT`) and a search to run instead. At 80% of
//! a session limit every answer warns and suggests a search. `search` and `manage` are
//! never blocked.

use loupe_core::{Config, ErrorCode, NextCall, ToolError};
use serde_json::json;

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
    let reads = metrics.reads_count as f64 / config.max_reads_per_session.max(1) as f64;
    let lines = metrics.reads_lines_total as f64 / config.max_total_read_lines.max(1) as f64;
    reads.max(lines)
}

/// The session's state, and the warning to give (at 80% and over).
pub(crate) fn state(config: &Config, metrics: &Metrics) -> (BudgetState, Option<String>) {
    let fraction = used(config, metrics);
    let usage = format!(
        "{}/{} reads, {}/{} lines",
        metrics.reads_count, config.max_reads_per_session, metrics.reads_lines_total, config.max_total_read_lines
    );
    if fraction >= 1.0 {
        (
            BudgetState::HardLimit,
            Some(format!("read budget used up ({usage}): further reads are refused; search still works")),
        )
    } else if fraction >= 0.8 {
        (
            BudgetState::SoftLimit,
            Some(format!("read budget at {}% ({usage}): narrow with search", (fraction * 100.0) as u64)),
        )
    } else {
        (BudgetState::Normal, None)
    }
}

/// The refusal of a read once a session limit is reached.
pub(crate) fn hard_limit(config: &Config, metrics: &Metrics, search_query: &str) -> Option<ToolError> {
    let over_reads = metrics.reads_count >= config.max_reads_per_session as u64;
    let over_lines = metrics.reads_lines_total >= config.max_total_read_lines as u64;
    if !over_reads && !over_lines {
        return None;
    }
    let what = if over_reads {
        format!("{} of {} reads (max_reads_per_session)", metrics.reads_count, config.max_reads_per_session)
    } else {
        format!("{} of {} lines (max_total_read_lines)", metrics.reads_lines_total, config.max_total_read_lines)
    };
    Some(
        ToolError::new(
            ErrorCode::BudgetExceeded,
            format!("Read budget exceeded: this session used {what}. Use search to narrow scope"),
            "search for what you need; a new session_id (a new task) starts a fresh budget",
        )
        .with_next_call(NextCall::new("search", json!({"query": search_query}))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soft_at_eighty_percent_and_hard_at_the_limit() {
        let config = Config { max_reads_per_session: 10, max_total_read_lines: 1000, ..Config::default() };
        let mut metrics = Metrics { reads_count: 7, reads_lines_total: 100, ..Metrics::default() };
        assert_eq!(state(&config, &metrics).0, BudgetState::Normal);
        assert!(hard_limit(&config, &metrics, "x").is_none());
        metrics.reads_count = 8;
        let (budget, warning) = state(&config, &metrics);
        assert_eq!(budget, BudgetState::SoftLimit);
        assert!(warning.unwrap().contains("80%"));
        metrics.reads_count = 9;
        metrics.reads_lines_total = 1000;
        assert_eq!(state(&config, &metrics).0, BudgetState::HardLimit);
        let refusal = hard_limit(&config, &metrics, "parse").unwrap();
        assert_eq!(refusal.code, ErrorCode::BudgetExceeded);
        assert_eq!(refusal.next_calls[0].render(), r#"search {"query":"parse"}"#);
    }
}
