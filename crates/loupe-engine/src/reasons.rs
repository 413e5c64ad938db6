//! Reason codes (§9.9): the fixed enum every policy decision is expressed in, and the
//! registry of descriptions shipped inside the binary.
//!
//! The enum is authoritative: decisions are made on codes, never on message text, and the
//! registry (`reason_registry.json`) only describes them. Codes are always reported in the
//! enum's order, so the same decisions give the same bytes.

use serde_json::Value;

/// The registry, compiled in.
pub(crate) const REGISTRY_JSON: &str = include_str!("reason_registry.json");

/// Defines the enum, its strings and `ALL` from one list, so a code cannot be spelled twice.
macro_rules! reason_codes {
    ($($variant:ident = $code:literal,)*) => {
        /// Every reason code, core first in the §9.9 order, then the extensions. An `Outcome`
        /// holds these, never strings: a code that is not here (and so, by the registry test,
        /// not in `reason_registry.json`) cannot be emitted.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub(crate) enum ReasonCode {
            $($variant,)*
        }

        impl ReasonCode {
            /// In reporting order.
            pub(crate) const ALL: &[ReasonCode] = &[$(ReasonCode::$variant,)*];

            pub(crate) fn as_str(self) -> &'static str {
                match self {
                    $(ReasonCode::$variant => $code,)*
                }
            }
        }
    };
}

reason_codes! {
    SearchFirstRequired = "SEARCH_FIRST_REQUIRED",
    SearchRefRequired = "SEARCH_REF_REQUIRED",
    CandidateRefRequired = "CANDIDATE_REF_REQUIRED",
    BudgetSoftLimit = "BUDGET_SOFT_LIMIT",
    BudgetHardLimit = "BUDGET_HARD_LIMIT",
    LowRelevanceOutsideTopk = "LOW_RELEVANCE_OUTSIDE_TOPK",
    PreviewDegraded = "PREVIEW_DEGRADED",
    // Extensions, described in the registry.
    SessionIdRequired = "SESSION_ID_REQUIRED",
    NoMatch = "NO_MATCH",
    DuplicateReadElided = "DUPLICATE_READ_ELIDED",
    LegacyToolDeprecated = "LEGACY_TOOL_DEPRECATED",
    LowRelevance = "LOW_RELEVANCE",
    BudgetNearLimit = "BUDGET_NEAR_LIMIT",
    DiffTruncated = "DIFF_TRUNCATED",
    FuzzyMatch = "FUZZY_MATCH",
    SyntaxErrorsIntroduced = "SYNTAX_ERRORS_INTRODUCED",
    LeftDangling = "LEFT_DANGLING",
    RollbackIncomplete = "ROLLBACK_INCOMPLETE",
}

impl ReasonCode {
    /// The seven codes of the §9.9 core enum.
    #[cfg(test)]
    pub(crate) const CORE: usize = 7;

    pub(crate) fn parse(code: &str) -> Option<ReasonCode> {
        ReasonCode::ALL.iter().copied().find(|reason| reason.as_str() == code)
    }
}

impl std::fmt::Display for ReasonCode {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// Codes in the fixed order, without duplicates, as the strings the faces show.
pub(crate) fn ordered(codes: impl IntoIterator<Item = ReasonCode>) -> Vec<String> {
    let mut known: Vec<ReasonCode> = codes.into_iter().collect();
    known.sort();
    known.dedup();
    known.into_iter().map(|reason| reason.as_str().to_owned()).collect()
}

/// `CODE, CODE` in the fixed order, for a footer's brackets.
pub(crate) fn joined(codes: &[ReasonCode]) -> String {
    ordered(codes.iter().copied()).join(", ")
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
        use ReasonCode::*;
        let shuffled = [PreviewDegraded, NoMatch, SearchFirstRequired, BudgetSoftLimit, PreviewDegraded];
        let ordered = ordered(shuffled);
        assert_eq!(ordered, ["SEARCH_FIRST_REQUIRED", "BUDGET_SOFT_LIMIT", "PREVIEW_DEGRADED", "NO_MATCH"]);
    }
}
