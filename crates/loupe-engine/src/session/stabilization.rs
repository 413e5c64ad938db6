//! `meta.stabilization` (§9.8) and the one footer line the model reads.
//!
//! Every `read` and `search` answer, errors included, carries the object; the text face
//! gets a single `── session …` line only when there is something to say (a warning, a
//! relevance miss, a gate verdict in `warn` mode). Nothing when all is normal.

use loupe_core::tokens;
use serde_json::{Map, Value, json};

use super::budget::BudgetState;
use super::store::Candidate;
use crate::reasons::{ReasonCode, joined, ordered};
use crate::response::Outcome;

#[derive(Debug, Default)]
pub(crate) struct Stabilization {
    pub(crate) budget_state: Option<BudgetState>,
    /// True when the session is at 80% of a limit or over: the next action is a search.
    pub(crate) budget_pressed: bool,
    /// Each warning with its registered code (`LOW_RELEVANCE`, `BUDGET_NEAR_LIMIT`, a gate
    /// reason in `warn` mode): `{code, message}` in the envelope.
    pub(crate) warnings: Vec<(ReasonCode, String)>,
    /// Codes the session layer adds to the response's own.
    pub(crate) reason_codes: Vec<ReasonCode>,
    pub(crate) metrics_snapshot: Value,
    pub(crate) context_bundle: Option<(String, Value)>,
    pub(crate) alternatives: Option<Vec<Candidate>>,
    /// Codes and messages for the footer line.
    pub(crate) footer_codes: Vec<ReasonCode>,
    pub(crate) footer_messages: Vec<String>,
}

impl Stabilization {
    /// Adds the footer line to a successful answer when there is something to say and it
    /// fits the caller's `max_tokens`; `token_estimate` stays the face's exact count.
    pub(crate) fn add_footer(&self, outcome: &mut Outcome, max_tokens: Option<u64>) {
        if !outcome.ok || self.footer_messages.is_empty() {
            return;
        }
        let codes =
            if self.footer_codes.is_empty() { String::new() } else { format!(" [{}]", joined(&self.footer_codes)) };
        let line = format!("── session{codes}: {}\n", self.footer_messages.join("; "));
        if let Some(limit) = max_tokens
            && (outcome.face.tokens() + tokens::count(&line)) as u64 > limit
        {
            return;
        }
        outcome.face.push(line);
    }

    /// Writes `meta.stabilization` and merges the reason codes into `meta.reason_codes` in
    /// the fixed order.
    pub(crate) fn attach(self, outcome: &mut Outcome) {
        let mut codes = std::mem::take(&mut outcome.act.reason_codes);
        if let Some(code) = outcome.error.as_ref().and_then(|error| ReasonCode::parse(error.code.as_str())) {
            codes.push(code);
        }
        codes.extend(self.reason_codes.iter().copied());
        codes.sort();
        codes.dedup();
        let soft = codes.contains(&ReasonCode::BudgetSoftLimit);
        outcome.act.reason_codes = codes.clone();
        let codes = ordered(codes);
        let next_calls = serde_json::to_value(&outcome.act.next_calls).unwrap_or_else(|_| json!([]));
        let first_tool = outcome.act.next_calls.first().map(|call| call.tool.clone());
        let suggested = if self.budget_pressed { Some("search".to_owned()) } else { first_tool };
        let budget_state = self.budget_state.unwrap_or(BudgetState::Normal);
        let budget_state = if soft { budget_state.max(BudgetState::SoftLimit) } else { budget_state };
        let mut object = Map::new();
        object.insert("budget_state".into(), Value::from(budget_state.as_str()));
        object.insert("suggested_next_action".into(), Value::from(suggested.unwrap_or_else(|| "none".into())));
        let warnings: Vec<Value> =
            self.warnings.iter().map(|(code, message)| json!({"code": code.as_str(), "message": message})).collect();
        object.insert("warnings".into(), Value::from(warnings));
        object.insert("reason_codes".into(), json!(codes));
        object.insert("metrics_snapshot".into(), self.metrics_snapshot);
        object.insert("next_calls".into(), next_calls);
        if let Some((id, items)) = self.context_bundle {
            object.insert("context_bundle_id".into(), Value::from(id));
            object.insert("bundle_items".into(), items);
        }
        if let Some(alternatives) = &self.alternatives {
            let listed: Vec<Value> =
                alternatives.iter().map(|c| json!({"path": c.path, "candidate_id": c.id})).collect();
            object.insert("alternatives".into(), Value::from(listed));
        }
        outcome.detail.insert("stabilization".into(), Value::Object(object));
    }
}
