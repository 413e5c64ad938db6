//! Reason codes (§9.9): the fixed enum every policy decision is expressed in, and the
//! registry of descriptions shipped inside the binary.
//!
//! The enum is authoritative: decisions are made on codes, never on message text, and the
//! registry (`reason_registry.json`) only describes them. Codes are always reported in the
//! enum's order, so the same decisions give the same bytes.

use serde_json::Value;

/// The registry, compiled in.
pub(crate) const REGISTRY_JSON: &str = include_str!("reason_registry.json");

/// Every reason code, core first in the §9.9 order, then the extensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum ReasonCode {
    SearchFirstRequired,
    SearchRefRequired,
    CandidateRefRequired,
    BudgetSoftLimit,
    BudgetHardLimit,
    LowRelevanceOutsideTopk,
    PreviewDegraded,
    // Extensions, described in the registry.
    SessionIdRequired,
    NoMatch,
    DuplicateReadElided,
    LegacyToolDeprecated,
}

impl ReasonCode {
    /// In reporting order.
    pub(crate) const ALL: [ReasonCode; 11] = [
        ReasonCode::SearchFirstRequired,
        ReasonCode::SearchRefRequired,
        ReasonCode::CandidateRefRequired,
        ReasonCode::BudgetSoftLimit,
        ReasonCode::BudgetHardLimit,
        ReasonCode::LowRelevanceOutsideTopk,
        ReasonCode::PreviewDegraded,
        ReasonCode::SessionIdRequired,
        ReasonCode::NoMatch,
        ReasonCode::DuplicateReadElided,
        ReasonCode::LegacyToolDeprecated,
    ];

    /// The seven codes of the §9.9 core enum.
    #[cfg(test)]
    pub(crate) const CORE: usize = 7;

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ReasonCode::SearchFirstRequired => "SEARCH_FIRST_REQUIRED",
            ReasonCode::SearchRefRequired => "SEARCH_REF_REQUIRED",
            ReasonCode::CandidateRefRequired => "CANDIDATE_REF_REQUIRED",
            ReasonCode::BudgetSoftLimit => "BUDGET_SOFT_LIMIT",
            ReasonCode::BudgetHardLimit => "BUDGET_HARD_LIMIT",
            ReasonCode::LowRelevanceOutsideTopk => "LOW_RELEVANCE_OUTSIDE_TOPK",
            ReasonCode::PreviewDegraded => "PREVIEW_DEGRADED",
            ReasonCode::SessionIdRequired => "SESSION_ID_REQUIRED",
            ReasonCode::NoMatch => "NO_MATCH",
            ReasonCode::DuplicateReadElided => "DUPLICATE_READ_ELIDED",
            ReasonCode::LegacyToolDeprecated => "LEGACY_TOOL_DEPRECATED",
        }
    }

    pub(crate) fn parse(code: &str) -> Option<ReasonCode> {
        ReasonCode::ALL.into_iter().find(|reason| reason.as_str() == code)
    }
}

/// Codes as strings in the fixed order, without duplicates. Strings that are not codes
/// (none are expected) keep their relative order after the known ones.
pub(crate) fn ordered(codes: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut known: Vec<ReasonCode> = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    for code in codes {
        match ReasonCode::parse(&code) {
            Some(reason) if !known.contains(&reason) => known.push(reason),
            Some(_) => {}
            None if !unknown.contains(&code) => unknown.push(code),
            None => {}
        }
    }
    known.sort();
    known.into_iter().map(|reason| reason.as_str().to_owned()).chain(unknown).collect()
}

/// The parsed registry (it is compiled in and checked by a test, so parsing cannot fail at
/// run time; a broken file would give an empty object).
pub(crate) fn registry() -> Value {
    serde_json::from_str(REGISTRY_JSON).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_lists_every_code_once_in_enum_order() {
        let registry = registry();
        let listed: Vec<&str> = ["core", "extensions"]
            .iter()
            .flat_map(|part| registry[part].as_array().unwrap().iter())
            .map(|entry| entry["code"].as_str().unwrap())
            .collect();
        let expected: Vec<&str> = ReasonCode::ALL.iter().map(|code| code.as_str()).collect();
        assert_eq!(listed, expected);
        assert_eq!(registry["core"].as_array().unwrap().len(), ReasonCode::CORE);
        for entry in registry["core"].as_array().unwrap().iter().chain(registry["extensions"].as_array().unwrap()) {
            assert!(
                entry["description"].is_string() && entry["severity"].is_string() && entry["next_calls"].is_array()
            );
        }
    }

    #[test]
    fn codes_are_reported_in_enum_order_whatever_order_they_came_in() {
        let shuffled =
            ["PREVIEW_DEGRADED", "NO_MATCH", "SEARCH_FIRST_REQUIRED", "BUDGET_SOFT_LIMIT", "PREVIEW_DEGRADED"];
        let ordered = ordered(shuffled.iter().map(|code| (*code).to_owned()));
        assert_eq!(ordered, ["SEARCH_FIRST_REQUIRED", "BUDGET_SOFT_LIMIT", "PREVIEW_DEGRADED", "NO_MATCH"]);
    }
}
