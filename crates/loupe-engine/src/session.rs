//! The session layer (§9): the one control point every `read` and `search` passes through.
//!
//! Before a read: identity (§9.1), the hard budget (§9.4), the gate (§9.7) and, in `block`
//! mode, relevance (§9.5). Then the tool runs unchanged. After it: aggregation (§9.6),
//! metrics (§9.3), relevance and budget warnings, and `meta.stabilization` (§9.8) on the
//! answer, errors included. Searches are recorded so their refs can open the gate.
//! Decisions are made on RuntimeState (`store.rs`, memory only); AnalyticsState goes
//! through a bounded queue to a writer thread (`analytics.rs`), never on the hot path.
//!
//! The store lock is held for the bookkeeping only, never while a tool runs.
//!
//! The layer works on typed data only: the parsed request before a read (`&ReadRequest`,
//! `&SearchRequest`), the tool's `Outcome` after it (face parts, typed act fields), and issued
//! calls kept as `ReadKey`s (what a read reads, not how its arguments were spelled). It builds
//! JSON for the envelope's `stabilization` detail and for the next calls it offers, and reads none.
//!
//! Files: `identity.rs` (`CallContext`, the session keys, `strict_session_id`, lexical path
//! normalisation); `store.rs` (RuntimeState: per-session metrics, the last 20 searches with their
//! bundle, candidates and issued read calls, the read calls issued by reads, the lines sent per
//! file; idle TTL and a 4,096-session cap, least recently used evicted); `gate.rs` (precision and
//! cursor exceptions, issued-call and candidate/bundle matching, refusals with `gate_context`);
//! `budget.rs` (session limits checked before a read, so the read that reaches a limit is served
//! whole and the next is refused; the 80% warning, `BUDGET_NEAR_LIMIT`; `budget_state`);
//! `relevance.rs` (top 10 of the last 3 searches, excluded trees, up to 3 alternatives; a miss is
//! the soft warning `LOW_RELEVANCE` with reason `LOW_RELEVANCE_OUTSIDE_TOPK`; `block` refuses before reading when the
//! path is known from the arguments, a symbol read without `path` is only warned after
//! resolution; reads that came with a ref are not judged); `aggregation.rs` (what each session
//! received: path, file hash, line ranges with the read that sent them; elided runs become one
//! reference line); `metrics.rs` (successful reads only; elided lines are not counted as sent);
//! `stabilization.rs` (`meta.stabilization` and the one `── session …` footer line);
//! `crate::reasons` with `reason_registry.json` (the enum in its fixed order, the registry compiled
//! in); `analytics.rs` (a `sync_channel(2000)` drained by one writer thread appending to
//! `<index dir>/analytics.jsonl` at most once per 25 ms; `Engine::flush_analytics` writes what is
//! queued when a connection or a CLI command ends).
//!
//! What the layer keeps true: every refusal (gate, budget, strict id) carries `next_calls` that
//! pass when replayed as they are, in the same session, and argument errors come before any
//! refusal; a ref is valid only in the session it was issued to, for its last 20 searches, while
//! calls the session was handed in `next_calls` replay without one, and cursors and
//! `diff_preview` are never gated; aggregation compares the file hash the lines were sent under,
//! `token_estimate` stays the exact count of the rewritten face, and the footer is dropped rather
//! than exceed a caller's `max_tokens`; `meta.reason_codes` is always in the enum's order.
//! Sessions live in memory, so a restart forgets them; `manage` and `edit` do not pass through
//! the layer.

mod aggregation;
pub(crate) mod analytics;
mod budget;
mod gate;
mod identity;
mod metrics;
mod relevance;
mod stabilization;
mod store;

use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use loupe_core::config::{GateMode, RelevanceMode};
use loupe_core::{Config, ErrorCode, NextCall, ToolError};
use serde_json::{Map, Value, json};

pub use identity::CallContext;
pub(crate) use identity::normalize_lexically;

use crate::args::Parsed;
use crate::latency::{Stage, timed};
use crate::read::{ReadKey, ReadMode, ReadRequest};
use crate::reasons::ReasonCode;
use crate::response::{MetadataLevel, Outcome, Response};
use crate::search::SearchRequest;
use crate::work::Work;
use crate::workspace::Workspace;
use analytics::{AnalyticsQueue, Event};
use budget::BudgetState;
use gate::{ReadShape, Verdict};
use identity::session_id;
use metrics::ReadSample;
use stabilization::Stabilization;
use store::{Candidate, SearchRecord, Session, SessionStore};

/// The session layer of one workspace.
#[derive(Debug)]
pub(crate) struct SessionLayer {
    workspace_hash: String,
    /// The canonical root, `/`-separated.
    root: String,
    store: Mutex<SessionStore>,
    analytics: AnalyticsQueue,
}

/// A call's answer, not yet rendered (the dispatcher renders every call once), and what its
/// session records of it once it is: the analytics event.
#[derive(Debug)]
pub(crate) struct Answered {
    pub(crate) outcome: Outcome,
    pub(crate) event: Option<PendingEvent>,
}

impl Answered {
    /// An answer outside the session layer: nothing to record.
    pub(crate) fn unrecorded(outcome: Outcome) -> Answered {
        Answered { outcome, event: None }
    }
}

/// The analytics event of a call through the session layer, completed from its rendered answer.
#[derive(Debug)]
pub(crate) struct PendingEvent {
    session_key: String,
    lines_sent: u64,
    tokens_saved: u64,
}

/// A refusal decided before a read runs, with the metrics at that moment.
struct Refusal {
    error: ToolError,
    reason: ReasonCode,
    metrics: Value,
}

impl Refusal {
    /// A refusal before any session was chosen (strict session ids): empty metrics.
    fn unattributed(error: ToolError, reason: ReasonCode) -> Refusal {
        Refusal { error, reason, metrics: metrics::Metrics::default().snapshot() }
    }
}

/// What a refused call asked for, for the refusal's header and next calls.
struct Asked<'a> {
    tool: &'static str,
    mode: Option<String>,
    target: Option<String>,
    session_id: Option<&'a str>,
    metadata: Option<MetadataLevel>,
}

/// A read's gate and relevance decision, made before it runs.
#[derive(Default)]
struct PreRead {
    by_ref: bool,
    warn: Option<(ReasonCode, String)>,
}

impl SessionLayer {
    pub(crate) fn new(config: &Config, canonical_root: &Path, index_dir: &Path) -> SessionLayer {
        let analytics = if config.analytics {
            AnalyticsQueue::with_writer(index_dir.join("analytics.jsonl"))
        } else {
            AnalyticsQueue::disabled()
        };
        SessionLayer::with_parts(config, canonical_root, analytics, store::MAX_SESSIONS)
    }

    pub(crate) fn with_parts(
        config: &Config,
        canonical_root: &Path,
        analytics: AnalyticsQueue,
        max_sessions: usize,
    ) -> SessionLayer {
        SessionLayer {
            workspace_hash: loupe_core::path::workspace_hash(canonical_root),
            root: canonical_root.to_string_lossy().replace('\\', "/").trim_end_matches('/').to_owned(),
            store: Mutex::new(SessionStore::new(Duration::from_secs(config.session_ttl_secs), max_sessions)),
            analytics,
        }
    }

    fn key(&self, context: &CallContext, session_id: Option<&str>) -> String {
        identity::session_key(&self.workspace_hash, identity::session_id(session_id), context)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SessionStore> {
        self.store.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `read` through the session layer: a parsed request (or the reason it did not parse,
    /// which is answered before any refusal of the session layer).
    pub(crate) fn read(
        &self,
        workspace: &Workspace,
        context: &CallContext,
        parsed: Parsed<ReadRequest>,
        work: &Work,
    ) -> Answered {
        let config = workspace.config();
        let request = match parsed {
            Ok(request) => request,
            Err(rejected) => {
                let key = self.key(context, rejected.session_id.as_deref());
                let outcome = rejected.into_outcome();
                return self.after_read(config, &key, None, outcome, PreRead::default());
            }
        };
        if config.strict_session_id && session_id(request.session_id.as_deref()).is_none() {
            let error = self.strict_refusal(config, context, &request);
            let refusal = Refusal::unattributed(error, ReasonCode::SessionIdRequired);
            return self.refuse_read("", &request, refusal);
        }
        let key = self.key(context, request.session_id.as_deref());
        let mut shape = self.shape(config, &request);
        // A file that is not there is the read's to answer (FILE_NOT_FOUND, with the names
        // beside it): a gate refusal would offer reads and a search of a file that is not there.
        shape.missing = matches!(request.mode, ReadMode::File | ReadMode::Outline)
            && workspace.root().resolve(&request.target).is_ok_and(|resolved| resolved.real.is_none());
        let pre = {
            let mut store = self.lock();
            let session = store.session(&key, Instant::now());
            match self.pre_read(config, session, &shape) {
                Ok(pre) => pre,
                Err(refusal) => {
                    // The read a budget refusal offers after its search is issued to the
                    // session: replayed in order, the two calls end in a served read.
                    if refusal.reason == ReasonCode::BudgetHardLimit {
                        session.remember_read_calls(read_calls(&refusal.error.next_calls));
                    }
                    drop(store);
                    return self.refuse_read(&key, &request, *refusal);
                }
            }
        };
        let outcome = timed(Stage::Tool, || crate::read::run(workspace, &request, work));
        self.after_read(config, &key, Some(&request), outcome, pre)
    }

    /// How the gate, the budget and relevance see a read.
    fn shape<'r>(&self, config: &Config, request: &'r ReadRequest) -> ReadShape<'r> {
        let target_path = match request.mode {
            ReadMode::Symbol => request.symbol_path().and_then(|path| normalize_lexically(&self.root, path)),
            _ => normalize_lexically(&self.root, &request.target),
        };
        ReadShape {
            request,
            target_path,
            max_range_lines: config.max_range_lines,
            root: self.root.clone(),
            missing: false,
        }
    }

    /// After a read ran (or was rejected for its arguments): aggregation, relevance, metrics,
    /// budget notes and the stabilization block.
    fn after_read(
        &self,
        config: &Config,
        key: &str,
        request: Option<&ReadRequest>,
        mut outcome: Outcome,
        pre: PreRead,
    ) -> Answered {
        let mut stabilization = Stabilization::default();
        let mut store = self.lock();
        let session = store.session(key, Instant::now());
        let mut saved = 0;
        let mut lines_sent = 0;
        if let Some(request) = request.filter(|_| outcome.ok) {
            let read_number = session.metrics.reads_count + 1;
            let numbered =
                matches!(request.mode, ReadMode::File | ReadMode::Snippet | ReadMode::Symbol) && !request.preview_none;
            let recency =
                aggregation::Recency { now: session.metrics.reads_tokens_total, window: config.dedup_window_tokens };
            let aggregated = match (outcome.target.clone(), numbered) {
                (Some(path), true) => {
                    let sent = session.sent.entry(path).or_default();
                    aggregation::apply(&mut outcome, sent, read_number, request.fresh, recency)
                }
                _ => aggregation::Aggregated::default(),
            };
            if !aggregated.elided.is_empty() {
                stabilization.reason_codes.push(ReasonCode::DuplicateReadElided);
            }
            saved = aggregated.tokens_saved;
            lines_sent = aggregated.lines_sent;
            if let Some((code, message)) = pre.warn {
                stabilization.reason_codes.push(code);
                stabilization.footer_codes.push(code);
                stabilization.warnings.push((code, message.clone()));
                stabilization.footer_messages.push(message);
            }
            // A diff of the working tree reviews changes, not a search's results, and a read by
            // an exact name or an outline is no guess (§9.7 does not gate them; relevance does
            // not judge them either).
            if config.relevance != RelevanceMode::Off
                && !pre.by_ref
                && request.mode.judged_by_relevance()
                && let Some(path) = &outcome.target
                && let Some(alternatives) = relevance::judge(session, path, request.mode == ReadMode::Outline)
            {
                // The seeds' soft warning `LOW_RELEVANCE`, with the core reason that says why.
                let codes = [ReasonCode::LowRelevanceOutsideTopk, ReasonCode::LowRelevance];
                stabilization.reason_codes.extend(codes);
                stabilization.footer_codes.extend(codes);
                let names: Vec<&str> = alternatives.iter().map(|c| c.path.as_str()).collect();
                let message = if names.is_empty() {
                    format!("this target seems unrelated: `{path}` is not among your last searches' results")
                } else {
                    format!(
                        "this target seems unrelated: `{path}` is not among your last searches' results; try {}",
                        names.join(", ")
                    )
                };
                stabilization.warnings.push((ReasonCode::LowRelevance, message.clone()));
                stabilization.footer_messages.push(message);
                stabilization.alternatives = Some(alternatives);
            }
            let mut sample = ReadSample {
                lines_sent: aggregated.lines_sent,
                span: aggregated.span,
                degraded: outcome.act.preview_degraded,
                tokens_saved: aggregated.tokens_saved,
                ..ReadSample::default()
            };
            // The budget after this read decides its warning; the warning is part of what
            // this read sends, so the read is counted once its face is final.
            let mut after = session.metrics.clone();
            after.record_read(sample);
            self.budget_notes(config, &after, &mut stabilization);
            stabilization.add_footer(&mut outcome, request.max_tokens().map(|tokens| tokens as u64));
            sample.chars = outcome.face.chars() as u64;
            sample.tokens = outcome.face.tokens() as u64;
            session.metrics.record_read(sample);
            stabilization.context_bundle = Some(context_bundle(session));
        } else {
            self.budget_notes(config, &session.metrics, &mut stabilization);
        }
        // Continuations and the fixes `read` offers (a suggested path, a restart after a
        // conflict) replay without a ref: they were issued to this session.
        session.remember_read_calls(read_calls(&outcome.act.next_calls));
        stabilization.metrics_snapshot = session.metrics.snapshot();
        let session_key = session.key.clone();
        drop(store);
        stabilization.attach(&mut outcome);
        let event = PendingEvent { session_key, lines_sent, tokens_saved: saved };
        Answered { outcome, event: Some(event) }
    }

    /// `SESSION_ID_REQUIRED` for a read, with next calls that pass in the session they
    /// name: the same read with a `session_id`, or, when the gate would stop that one, the
    /// gate's own next calls carrying the `session_id`.
    fn strict_refusal(&self, config: &Config, context: &CallContext, request: &ReadRequest) -> ToolError {
        let mut error = identity::session_id_required("read", &request.original);
        let Some(retry) = error.next_calls.first().map(|call| call.arguments.clone()) else { return error };
        if config.gate_mode != GateMode::Enforce {
            return error;
        }
        let Ok(retry) = crate::read::parse(Value::Object(retry)) else { return error };
        let key = self.key(context, retry.session_id.as_deref());
        let store = self.lock();
        let session = store.peek(&key, Instant::now());
        if let Verdict::Refuse { error: gate_error, .. } = gate::check(&self.shape(config, &retry), session) {
            let session_id = Value::from(retry.session_id.clone());
            error.next_calls = gate_error
                .next_calls
                .into_iter()
                .map(|mut call| {
                    call.arguments.insert("session_id".into(), session_id.clone());
                    call
                })
                .collect();
        }
        error
    }

    fn pre_read(&self, config: &Config, session: &Session, shape: &ReadShape<'_>) -> Result<PreRead, Box<Refusal>> {
        let gated = shape.request.mode != ReadMode::DiffPreview;
        if gated
            && let Some(error) = budget::hard_limit(
                config,
                &session.metrics,
                gate::search_for(shape),
                NextCall { tool: "read".into(), arguments: shape.request.original.clone() },
            )
        {
            return Err(Box::new(Refusal {
                error,
                reason: ReasonCode::BudgetHardLimit,
                metrics: session.metrics.snapshot(),
            }));
        }
        let mut pre = PreRead::default();
        if config.gate_mode != GateMode::Off && !shape.missing {
            match gate::check(shape, Some(session)) {
                Verdict::Pass { by_ref } => pre.by_ref = by_ref,
                Verdict::Refuse { reason, error } => {
                    if config.gate_mode == GateMode::Enforce {
                        return Err(Box::new(Refusal { error, reason, metrics: session.metrics.snapshot() }));
                    }
                    pre.warn = Some((reason, format!("{} (gate_mode=warn let it through)", error.message)));
                }
            }
        }
        if config.relevance == RelevanceMode::Block
            && shape.request.mode.judged_by_relevance()
            && !pre.by_ref
            && let Some(path) = shape.target_path.as_deref()
            && let Some(alternatives) = relevance::judge(session, path, shape.request.mode == ReadMode::Outline)
        {
            let mut error = ToolError::new(
                ErrorCode::CandidateRefRequired,
                format!("`{path}` is not among the results of your last searches (relevance = block)"),
                "read one of the alternatives, or search for this file first",
            );
            error.next_calls = alternatives.iter().map(gate::read_candidate).collect();
            error
                .next_calls
                .push(NextCall::new("search", json!({"query": search_query(&shape.request.target, Some(path))})));
            let error = error.with_detail(
                "gate_context",
                json!({"expected_target": alternatives.first().map(gate::expected_target), "provided_target": path}),
            );
            return Err(Box::new(Refusal {
                error,
                reason: ReasonCode::LowRelevanceOutsideTopk,
                metrics: session.metrics.snapshot(),
            }));
        }
        Ok(pre)
    }

    /// Warnings at 80% of a session limit and the budget state.
    fn budget_notes(&self, config: &Config, metrics: &metrics::Metrics, stabilization: &mut Stabilization) {
        let (state, warning) = budget::state(config, metrics);
        stabilization.budget_state = Some(state);
        if let Some(warning) = warning {
            stabilization.budget_pressed = true;
            stabilization.reason_codes.push(ReasonCode::BudgetNearLimit);
            stabilization.footer_codes.push(ReasonCode::BudgetNearLimit);
            stabilization.warnings.push((ReasonCode::BudgetNearLimit, warning.clone()));
            stabilization.footer_messages.push(warning);
        }
    }

    /// A refusal by the session layer, with its stabilization.
    fn refuse_read(&self, session_key: &str, request: &ReadRequest, refusal: Refusal) -> Answered {
        let asked = Asked {
            tool: "read",
            mode: Some(request.mode.as_str().to_owned()),
            target: Some(request.target.clone()),
            session_id: request.session_id.as_deref(),
            metadata: request.metadata,
        };
        self.refuse(session_key, asked, refusal)
    }

    fn refuse(&self, session_key: &str, asked: Asked<'_>, refusal: Refusal) -> Answered {
        let Refusal { error, reason, metrics } = refusal;
        let budget_hit = reason == ReasonCode::BudgetHardLimit;
        let mut error = error;
        // The calls offered run in the caller's session, where the refs they carry live.
        if let Some(session_id) = asked.session_id {
            for call in &mut error.next_calls {
                call.arguments.entry("session_id").or_insert_with(|| Value::from(session_id));
            }
        }
        let mut outcome = Outcome::failure(asked.tool, asked.mode, asked.target, error).with_metadata(asked.metadata);
        let stabilization = Stabilization {
            budget_state: Some(if budget_hit { BudgetState::HardLimit } else { BudgetState::Normal }),
            budget_pressed: budget_hit,
            reason_codes: vec![reason],
            metrics_snapshot: metrics,
            ..Stabilization::default()
        };
        stabilization.attach(&mut outcome);
        let event = PendingEvent { session_key: session_key.to_owned(), lines_sent: 0, tokens_saved: 0 };
        Answered { outcome, event: Some(event) }
    }

    /// `search` through the session layer.
    pub(crate) fn search(
        &self,
        workspace: &Workspace,
        context: &CallContext,
        parsed: Parsed<SearchRequest>,
        work: &Work,
    ) -> Answered {
        let config = workspace.config();
        let (key, mut outcome) = match parsed {
            Err(rejected) => (self.key(context, rejected.session_id.as_deref()), rejected.into_outcome()),
            Ok(request) => {
                if config.strict_session_id && session_id(request.session_id.as_deref()).is_none() {
                    let error = identity::session_id_required("search", request.original());
                    let asked = Asked {
                        tool: "search",
                        mode: None,
                        target: Some(request.query.clone()),
                        session_id: None,
                        metadata: request.metadata,
                    };
                    let refusal = Refusal::unattributed(error, ReasonCode::SessionIdRequired);
                    return self.refuse("", asked, refusal);
                }
                (
                    self.key(context, request.session_id.as_deref()),
                    timed(Stage::Tool, || crate::search::run(workspace, &request, work)),
                )
            }
        };
        let now = Instant::now();
        let mut stabilization = Stabilization::default();
        let mut store = self.lock();
        let session = store.session(&key, now);
        if outcome.ok {
            session.metrics.record_search(outcome.act.results.as_ref().is_some_and(|results| !results.is_empty()));
            session.remember_search(search_record(&outcome));
        }
        self.budget_notes(config, &session.metrics, &mut stabilization);
        stabilization.metrics_snapshot = session.metrics.snapshot();
        let session_key = session.key.clone();
        drop(store);
        stabilization.add_footer(&mut outcome, None);
        stabilization.attach(&mut outcome);
        Answered { outcome, event: Some(PendingEvent { session_key, lines_sent: 0, tokens_saved: 0 }) }
    }

    /// A hit one of the session's last searches showed, by its candidate id.
    pub(crate) fn candidate(
        &self,
        context: &CallContext,
        session_id: Option<&str>,
        candidate_id: &str,
    ) -> Option<store::Candidate> {
        let key = self.key(context, session_id);
        let store = self.lock();
        let session = store.peek(&key, Instant::now())?;
        session
            .searches
            .iter()
            .flat_map(|search| search.candidates.iter())
            .find(|candidate| candidate.id == candidate_id)
            .cloned()
    }

    /// The session's metrics and budget for `manage` (without creating the session).
    pub(crate) fn describe(&self, config: &Config, context: &CallContext, session_id: Option<&str>) -> Value {
        let key = self.key(context, session_id);
        let store = self.lock();
        let session = store.peek(&key, Instant::now());
        let metrics = session.map(|session| session.metrics.clone()).unwrap_or_default();
        let (state, warning) = budget::state(config, &metrics);
        let (reads_left, lines_left) = budget::left(config, &metrics);
        json!({
            "key": key,
            "live_sessions": store.len(),
            // Their memory as the store's budget counts it (`store::MAX_SESSION_BYTES`).
            "live_sessions_bytes": store.bytes(),
            "searches_kept": session.map_or(0, |session| session.searches.len()),
            "files_sent": session.map_or(0, |session| session.sent.len()),
            "metrics": metrics.snapshot(),
            "budget": {
                "state": state.as_str(),
                "warning": warning,
                "reads": metrics.reads_count,
                "max_reads_per_session": config.max_reads_per_session,
                "lines": metrics.reads_lines_total,
                "max_total_read_lines": config.max_total_read_lines,
                // The allowance since the last search with hits (§9.4): what the guard counts.
                "reads_left": reads_left,
                "lines_left": lines_left,
            },
        })
    }

    /// A call by a legacy name (§12), for the adoption counts the intent-tools design asks for
    /// (docs/findings.md): one event per call, with the name and its replacement.
    pub(crate) fn record_legacy(&self, context: &CallContext, legacy: &crate::legacy::LegacyTool, disabled: bool) {
        let mut fields = Map::new();
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_millis() as u64);
        fields.insert("ts_ms".into(), Value::from(millis));
        fields.insert("connection".into(), Value::from(context.connection_id.as_str()));
        fields.insert("legacy_tool".into(), Value::from(legacy.name));
        fields.insert("replacement".into(), Value::from(legacy.tool));
        fields.insert("disabled".into(), Value::Bool(disabled));
        self.analytics.put(Event { event_type: "legacy", fields });
    }

    pub(crate) fn analytics(&self) -> &AnalyticsQueue {
        &self.analytics
    }

    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn replace_analytics(&mut self, analytics: AnalyticsQueue) {
        self.analytics = analytics;
    }

    /// The reads an `analyze`, `edit` or `manage` answer offers as next calls (its own, or its
    /// error's) are issued to the session, as a search's and a read's are: they pass the gate as
    /// they are (§9.7).
    pub(crate) fn remember_issued(&self, context: &CallContext, session_id: Option<&str>, outcome: &Outcome) {
        let mut calls = read_calls(&outcome.act.next_calls);
        if let Some(error) = &outcome.error {
            calls.extend(read_calls(&error.next_calls));
        }
        if calls.is_empty() {
            return;
        }
        let key = self.key(context, session_id);
        self.lock().session(&key, Instant::now()).remember_read_calls(calls);
    }

    /// Files a call's analytics event, completed from its rendered answer.
    pub(crate) fn record(&self, context: &CallContext, event: PendingEvent, response: &Response) {
        let PendingEvent { session_key, lines_sent, tokens_saved } = event;
        let event_type = match (response.ok, response.error_code()) {
            (false, Some(code)) if is_session_refusal(code) => "refusal",
            _ => response.tool,
        };
        let mut fields = Map::new();
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_millis() as u64);
        fields.insert("ts_ms".into(), Value::from(millis));
        fields.insert("session".into(), Value::from(session_key));
        // What the client says about its connection: telemetry, never a key (§9.1).
        if let Some(client) = &context.client_connection_id {
            fields.insert("client_connection_id".into(), Value::from(client.as_str()));
        }
        fields.insert("tool".into(), Value::from(response.tool));
        fields.insert("mode".into(), response.mode.clone().map(Value::from).unwrap_or(Value::Null));
        fields.insert("ok".into(), Value::Bool(response.ok));
        fields.insert("code".into(), response.error_code().map(Value::from).unwrap_or(Value::Null));
        fields.insert("reason_codes".into(), json!(response.reason_codes()));
        fields.insert("tokens".into(), Value::from(response.token_estimate));
        fields.insert("lines_sent".into(), Value::from(lines_sent));
        fields.insert("tokens_saved".into(), Value::from(tokens_saved));
        self.analytics.put(Event { event_type, fields });
    }
}

fn is_session_refusal(code: &str) -> bool {
    matches!(
        code,
        "SEARCH_FIRST_REQUIRED"
            | "SEARCH_REF_REQUIRED"
            | "CANDIDATE_REF_REQUIRED"
            | "BUDGET_EXCEEDED"
            | "SESSION_ID_REQUIRED"
    )
}

/// A search query that finds a read's target: its file name, or its last symbol name.
fn search_query(target: &str, path: Option<&str>) -> String {
    let source = path.unwrap_or(target);
    let name = source.rsplit(['/', ':', '.']).find(|part| !part.is_empty()).unwrap_or(source);
    let stem =
        path.and_then(|path| path.rsplit('/').next()).and_then(|file| file.split('.').next()).filter(|s| !s.is_empty());
    stem.unwrap_or(name).to_owned()
}

/// The `read` calls among an answer's next calls, as what they read.
fn read_calls(calls: &[NextCall]) -> Vec<ReadKey> {
    calls
        .iter()
        .filter(|call| call.tool == "read")
        .filter_map(|call| crate::read::parse(Value::Object(call.arguments.clone())).ok())
        .map(|request| request.key())
        .collect()
}

/// What the session keeps of a search: its bundle, its shown hits and its read calls.
fn search_record(outcome: &Outcome) -> SearchRecord {
    let bundle_id = outcome.act.bundle_id.clone().unwrap_or_default();
    let candidates = outcome
        .act
        .results
        .iter()
        .flatten()
        .map(|hit| Candidate {
            id: hit.candidate_id.clone(),
            path: hit.path.clone(),
            symbol: hit.symbol.clone(),
            line: hit.line,
            read: hit.read.arguments.clone(),
        })
        .collect();
    SearchRecord { bundle_id, candidates, read_calls: read_calls(&outcome.act.next_calls) }
}

/// `context_bundle_id` (a stable hash of what the session holds) and `bundle_items`.
fn context_bundle(session: &Session) -> (String, Value) {
    let mut key = String::new();
    let mut items = Vec::new();
    for (path, sent) in &session.sent {
        let mut merged: Vec<(usize, usize)> = Vec::new();
        for &store::SentRange { first, last, .. } in &sent.ranges {
            match merged.last_mut() {
                Some(previous) if previous.1 + 1 >= first => previous.1 = previous.1.max(last),
                _ => merged.push((first, last)),
            }
        }
        if merged.is_empty() {
            continue;
        }
        let lines: Vec<String> = merged.iter().map(|(first, last)| format!("{first}-{last}")).collect();
        let lines = lines.join(",");
        key.push_str(&format!("{path}\u{0}{}\u{0}{lines}\n", sent.file_hash));
        items.push(json!({"path": path, "file_hash": sent.file_hash, "lines": lines}));
    }
    let id = format!("ctx_{}", &blake3::hash(key.as_bytes()).to_hex()[..12]);
    (id, Value::from(items))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_queries_name_the_file_stem_or_the_symbol() {
        assert_eq!(search_query("src/config.rs", Some("src/config.rs")), "config");
        assert_eq!(search_query("Config::load", None), "load");
        assert_eq!(search_query("Config.load", None), "load");
    }
}
