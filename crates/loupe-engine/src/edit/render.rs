//! The reply: one header, per file its status and bounded diff, then what was cut and how to undo.

use loupe_core::{NextCall, tokens};
use loupe_vfs::FileChange;
use serde_json::{Value, json};

use super::symbol_ops::Notes;
use super::{FileReport, Options};
use crate::reasons::ReasonCode;
use crate::response::{Face, Outcome, Part, next_line};
use crate::workspace::Workspace;

/// The reply: one header, per file its status and bounded diff, then what was cut and how
/// to undo. Both faces are bounded by the response ceiling: the diffs share
/// `max_preview_chars` and the token ceiling, a file whose line no longer fits is counted, not
/// listed, and `meta.files` carries the same cut diffs the face shows (`diff_truncated`), with
/// a call that shows the rest of each cut diff.
pub(super) fn render(
    workspace: &Workspace,
    options: &Options,
    reports: &[FileReport],
    transaction_id: Option<String>,
    reason_codes: Vec<ReasonCode>,
    proposals: &[FileChange],
    notes: Notes,
) -> Outcome {
    let config = workspace.config();
    let added: usize = reports.iter().map(|report| report.diff.added).sum();
    let removed: usize = reports.iter().map(|report| report.diff.removed).sum();
    let clean = if reports.iter().all(|report| report.syntax == "ok") { " · syntax ok" } else { "" };
    let mut face = match (&transaction_id, options.dry_run) {
        (_, true) => {
            format!("edit · dry run, nothing written · {} file(s) · +{added} -{removed}{clean}\n", reports.len())
        }
        // A rename of a checked identifier leaves the syntax as it was: only a break is news.
        (Some(id), false) if notes.only_renames => format!("edit · applied {id}\n"),
        // Symbol operations say what each did, where: the header need not count.
        (Some(id), false) if notes.only_symbols => format!("edit · applied {id}{clean}\n"),
        (Some(id), false) => format!("edit · applied {id} · {} file(s) · +{added} -{removed}{clean}\n", reports.len()),
        (None, false) => "edit · nothing to change: the files already hold this text\n".to_owned(),
    };
    for line in &notes.lines {
        face.push_str(line);
        face.push('\n');
    }
    // An applied edit's reply is a summary: the diffs when they are small (the change's
    // neighbourhood, to see it landed where meant), else counts and the call that shows them.
    let diff_tokens: usize = reports.iter().map(|report| tokens::count(&report.diff.text)).sum();
    let show_diffs = options.dry_run || options.diff || diff_tokens <= SMALL_DIFF_TOKENS;
    // An applied call of symbol operations answers with what each did, where (a rename: its
    // sites): the symbol named the place, so no file lines, no diffs unless asked, no read of them
    // offered (`diff: true`, or `read diff_preview`, shows them; meta.files has the hashes).
    let sites_only = notes.only_symbols && transaction_id.is_some() && !options.dry_run && !options.diff;
    let mut budget_chars = config.max_preview_chars;
    let mut token_budget = config.max_response_tokens.saturating_sub(REPLY_FOOTER_TOKENS);
    let mut next_calls = Vec::new();
    let mut cuts = Vec::new();
    let mut files_json = Vec::new();
    let mut listed = 0;
    for report in reports {
        // The new hash guards the next edit (`expected_hash`); the old one is the undo's business.
        let hash = report.new_hash.as_ref().map_or_else(|| "deleted".to_owned(), |hash| format!("hash {hash}"));
        // A clean parse is the header's news once, not every file's.
        let syntax = match report.syntax {
            "errors" => format!(" · syntax errors: {}", report.syntax_errors),
            "ok" => String::new(),
            other => format!(" · syntax {other}"),
        };
        let fuzzy = if report.fuzzy_used { " · fuzzy match" } else { "" };
        let line = format!(
            "{} · {} +{} -{} · {hash}{syntax}{fuzzy}\n",
            report.path, report.change, report.diff.added, report.diff.removed
        );
        let line_tokens = tokens::count(&line);
        if listed > 0 && line_tokens > token_budget {
            break;
        }
        token_budget = token_budget.saturating_sub(line_tokens);
        listed += 1;
        if !sites_only {
            face.push_str(&line);
        }
        let (shown, cut) = if show_diffs && !sites_only {
            bounded(&report.diff.text, &mut budget_chars, &mut token_budget)
        } else {
            ("", false)
        };
        face.push_str(shown);
        if cut {
            cuts.push(report.path.to_string());
            if next_calls.len() < MAX_REST_CALLS {
                next_calls.extend(rest_of_diff(workspace, options, report, proposals, shown.lines().count()));
            }
        }
        let mut file_json = json!({
            "path": report.path.as_str(),
            "applied": transaction_id.is_some(),
            "change": report.change,
            "diff": shown,
            "added": report.diff.added,
            "removed": report.diff.removed,
            "old_hash": report.old_hash.as_ref().map(|hash| hash.as_str()),
            "new_hash": report.new_hash.as_ref().map(|hash| hash.as_str()),
            "syntax": report.syntax,
            "syntax_errors": report.syntax_errors,
            "fuzzy_used": report.fuzzy_used,
        });
        if cut {
            file_json["diff_truncated"] = Value::Bool(true);
        }
        files_json.push(file_json);
    }
    let unlisted = reports.len() - listed;
    if !cuts.is_empty() {
        let named: Vec<&str> = cuts.iter().take(5).map(String::as_str).collect();
        let more =
            if cuts.len() > named.len() { format!(" and {} more", cuts.len() - named.len()) } else { String::new() };
        let rest = if options.dry_run {
            "the calls below show the rest of each (diff_preview by cursor, the proposal is not resent)"
        } else {
            "the calls below read the edited regions; manage history lists the transaction"
        };
        face.push_str(&format!(
            "── diff cut to fit max_preview_chars={} / max_response_tokens={} for {}{more}; {rest} [DIFF_TRUNCATED]\n",
            config.max_preview_chars,
            config.max_response_tokens,
            named.join(", ")
        ));
    }
    if unlisted > 0 {
        let see = if transaction_id.is_some() {
            "manage history lists every file of the transaction"
        } else {
            "preview fewer files per call to see each"
        };
        face.push_str(&format!(
            "── {unlisted} more file(s) not listed (the reply reached max_response_tokens={}); {see} [DIFF_TRUNCATED]\n",
            config.max_response_tokens
        ));
        if transaction_id.is_some() {
            next_calls.push(NextCall::new("manage", json!({"command": "history"})));
        }
    }
    if !show_diffs && !sites_only {
        // The edit is applied: the call that shows its diff reads the files, it does not repeat
        // the edit. In git, a diff against HEAD (one call); else the changed regions.
        let lines: usize = reports.iter().map(|report| report.diff.added + report.diff.removed).sum();
        let listed = &reports[..listed];
        let in_git = crate::workspace::git::open_repository(workspace).is_ok();
        let how = if in_git {
            let target = match listed {
                [only] => only.path.as_str(),
                _ => ".",
            };
            next_calls.push(NextCall::new("read", json!({"mode": "diff_preview", "target": target})));
            "the diff against HEAD"
        } else {
            let before = next_calls.len();
            next_calls.extend(
                listed
                    .iter()
                    .take(MAX_REST_CALLS)
                    .filter_map(|report| rest_of_diff(workspace, options, report, proposals, 0)),
            );
            // A deleted file has no new text to read.
            if next_calls.len() > before { "the changed lines" } else { "" }
        };
        match how {
            "" => face.push_str(&format!("── diffs not shown ({lines} changed lines)\n")),
            how => face
                .push_str(&format!("── diffs not shown ({lines} changed lines); the first call below shows {how}\n")),
        }
    }
    if reason_codes.contains(&ReasonCode::SyntaxErrorsIntroduced) {
        face.push_str(
            "── warning: this edit leaves syntax errors in a file that parsed cleanly [SYNTAX_ERRORS_INTRODUCED]\n",
        );
    }
    if reason_codes.contains(&ReasonCode::FuzzyMatch) {
        face.push_str(
            "── old_string did not match exactly; a unique whitespace-tolerant match was used [FUZZY_MATCH]\n",
        );
    }
    next_calls.extend(notes.next_calls);
    for call in &next_calls {
        face.push_str(&next_line(call));
    }
    // The undo call is the text face's last line; the structured face's `transaction_id`
    // carries it (the tool description names `manage undo`), so `next_calls` keeps only the
    // calls a next step needs.
    let undo = transaction_id
        .as_ref()
        .map(|id| next_line(&NextCall::new("manage", json!({"command": "undo", "transaction_id": id}))));
    let truncated = !cuts.is_empty() || unlisted > 0;
    let mut all_codes = reason_codes;
    if truncated {
        all_codes.push(ReasonCode::DiffTruncated);
    }
    let target = reports.first().map(|report| report.path.to_string());
    let mut face = Face::text(face);
    if let Some(undo) = undo {
        face.parts.push(Part::Carried(Box::new(Part::text(undo))));
    }
    let mut outcome = Outcome::success("edit", None, target, face).with_metadata(options.metadata);
    outcome.act.truncated = truncated;
    outcome.act.transaction_id = transaction_id;
    outcome.act.reason_codes = all_codes;
    outcome.act.next_calls = next_calls;
    let detail = &mut outcome.detail;
    detail.insert("dry_run".into(), Value::Bool(options.dry_run));
    detail.insert("files".into(), Value::from(files_json));
    if unlisted > 0 {
        detail.insert("files_total".into(), Value::from(reports.len()));
    }
    detail.insert("fuzzy_used".into(), Value::Bool(reports.iter().any(|report| report.fuzzy_used)));
    if !notes.sites.is_empty() {
        detail.insert("sites".into(), Value::from(notes.sites));
    }
    if !notes.left_behind.is_empty() {
        detail.insert("left_behind".into(), Value::from(notes.left_behind));
    }
    outcome
}

/// Diffs up to this many tokens, all files together, are shown in an applied edit's reply.
const SMALL_DIFF_TOKENS: usize = 150;

/// What the reply keeps free of the token ceiling for its footer and next calls.
const REPLY_FOOTER_TOKENS: usize = 500;

/// The most calls a reply offers for the rest of cut diffs.
const MAX_REST_CALLS: usize = 3;

/// How to see the rest of a cut diff: a dry run's proposal continues through `diff_preview`
/// against the file on disk by a cursor (the server keeps the proposal, the call does not
/// carry it); an applied edit's new text is read where it changed.
fn rest_of_diff(
    workspace: &Workspace,
    options: &Options,
    report: &FileReport,
    proposals: &[FileChange],
    shown_lines: usize,
) -> Option<NextCall> {
    if options.dry_run {
        let proposal = proposals.iter().find(|change| change.path == report.path)?;
        let new = proposal.new_bytes.as_deref()?;
        let old = workspace.root().resolve(report.path.as_str()).ok().and_then(|resolved| {
            resolved.real.as_ref()?;
            workspace.root().read(&resolved, workspace.config().max_file_bytes).ok().map(|file| file.bytes)
        });
        return Some(crate::read::diff_preview::proposal_continuation(
            workspace,
            report.path.as_str(),
            old.as_deref(),
            new,
            shown_lines + 1,
        ));
    }
    let ((first, last), _) = (report.touched?, report.new_hash.as_ref()?);
    Some(NextCall::new(
        "read",
        json!({"mode": "snippet", "target": report.path.as_str(), "start_line": first, "end_line": last.max(first)}),
    ))
}

/// Takes whole lines of `text` while the character and token budgets last.
fn bounded<'a>(text: &'a str, chars_left: &mut usize, tokens_left: &mut usize) -> (&'a str, bool) {
    let mut end = 0;
    let mut used_chars = 0;
    for line in text.split_inclusive('\n') {
        let count = line.chars().count();
        if used_chars + count > *chars_left {
            break;
        }
        used_chars += count;
        end += line.len();
    }
    let mut shown = &text[..end];
    let mut token_count = tokens::count(shown);
    while token_count > *tokens_left && !shown.is_empty() {
        let keep = shown[..shown.len() - 1].rfind('\n').map_or(0, |at| at + 1);
        shown = &shown[..keep];
        token_count = tokens::count(shown);
    }
    *chars_left -= shown.chars().count();
    *tokens_left -= token_count;
    (shown, shown.len() < text.len())
}
