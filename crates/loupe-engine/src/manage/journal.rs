//! `manage` `undo`, `redo` and `history` (§8.3): the edit journal (`loupe-vfs`).
//!
//! Undo and redo write through the journal like an edit (same lock, same crash safety) and
//! update the index before they return. Must not write into the repository any other way.

use loupe_core::{ErrorCode, NextCall, RepoPath, ToolError};
use loupe_vfs::journal::{Applied, KEEP_TRANSACTIONS};
use serde_json::{Value, json};

use crate::edit::apply_error;
use crate::engine::Engine;
use crate::response::{Outcome, next_line};

/// How many transactions `history` lists by default.
const DEFAULT_HISTORY: usize = 20;

/// `undo` (`reverse`) or `redo`: the last transaction, or `transaction_id`.
pub(super) fn undo(engine: &Engine, id: Option<&str>, force: bool, reverse: bool) -> Result<Outcome, ToolError> {
    let command = if reverse { "undo" } else { "redo" };
    if engine.config().read_only {
        return Err(ToolError::new(
            ErrorCode::ReadOnly,
            format!("this loupe server is read-only: {command} is refused"),
            "restart loupe without `read_only` (or `--read-only`) to change files",
        ));
    }
    let Some(journal) = engine.workspace().journal() else {
        return Err(ToolError::new(
            ErrorCode::IoError,
            "the edit journal could not be opened, so there is nothing to undo or redo",
            "check that the index directory is writable (see the server log), then restart loupe",
        ));
    };
    let _serial = engine.workspace().edit_lock.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let result = if reverse { journal.undo(id, force) } else { journal.redo(id, force) };
    let applied = result.map_err(|error| {
        let mut error = apply_error(error);
        if error.code == ErrorCode::Conflict {
            let listing = error.message.split_once('\n').map_or("", |(_, rest)| rest).to_owned();
            error.message = format!("cannot {command}: file(s) changed since the transaction; nothing was written:\n{listing}");
            error.hint = format!(
                "the file changed after the transaction; re-read it, or {command} anyway with \"force\": true (that discards the later change)"
            );
            let mut arguments = json!({"command": command, "force": true});
            if let Some(id) = id {
                arguments["transaction_id"] = Value::from(id);
            }
            error.next_calls.push(NextCall::new("manage", arguments));
        }
        error
    })?;
    if let Some(index) = engine.index() {
        let paths: Vec<RepoPath> = applied.files.iter().map(|file| file.path.clone()).collect();
        index.update_paths(&paths);
    }
    Ok(render_replay(command, &applied))
}

fn render_replay(command: &'static str, applied: &Applied) -> Outcome {
    let id = &applied.transaction_id;
    let done = if command == "undo" { "undone" } else { "redone" };
    let mut face = format!("{command} · {id} {done} · {} file(s)\n", applied.files.len());
    let mut files = Vec::new();
    for file in &applied.files {
        let old = file.old_hash.as_ref().map_or("∅".to_owned(), ToString::to_string);
        let new = file.new_hash.as_ref().map_or("∅".to_owned(), ToString::to_string);
        let change = match (&file.old_hash, &file.new_hash) {
            (None, _) => "recreated",
            (_, None) => "removed",
            _ => "restored",
        };
        face.push_str(&format!("{} · {change} · {old} → {new}\n", file.path));
        files.push(json!({"path": file.path.as_str(), "change": change, "old_hash": file.old_hash.as_ref().map(|h| h.as_str()), "new_hash": file.new_hash.as_ref().map(|h| h.as_str())}));
    }
    let opposite = if command == "undo" { "redo" } else { "undo" };
    let next = NextCall::new("manage", json!({"command": opposite, "transaction_id": id}));
    face.push_str(&next_line(&next));
    let mut outcome = super::answer(face);
    outcome.act.transaction_id = Some(id.to_string());
    outcome.act.next_calls = vec![next];
    outcome.detail.insert("files".into(), Value::from(files));
    outcome
}

pub(super) fn history(engine: &Engine, limit: Option<u64>) -> Result<Outcome, ToolError> {
    let limit = limit.map_or(DEFAULT_HISTORY, |limit| (limit as usize).clamp(1, KEEP_TRANSACTIONS));
    let transactions =
        engine.workspace().journal().map(|journal| journal.history(KEEP_TRANSACTIONS)).unwrap_or_default();
    let shown: Vec<_> = transactions.iter().take(limit).collect();
    let mut face = format!(
        "history · {} of {} transaction(s), newest first (the journal keeps the last {KEEP_TRANSACTIONS})\n",
        shown.len(),
        transactions.len()
    );
    for transaction in &shown {
        let files: Vec<String> =
            transaction.files.iter().map(|file| format!("{} ({})", file.path, file.change)).collect();
        let state = if transaction.undone { " · undone" } else { "" };
        face.push_str(&format!("{} · {}{state} · {}\n", transaction.id, utc(transaction.time), files.join(", ")));
    }
    let mut next_calls = Vec::new();
    if let Some(last) = transactions.iter().find(|transaction| !transaction.undone) {
        next_calls.push(NextCall::new("manage", json!({"command": "undo", "transaction_id": last.id})));
    }
    if shown.len() < transactions.len() {
        face.push_str(&format!("── {} older transaction(s) not shown\n", transactions.len() - shown.len()));
        next_calls.push(NextCall::new("manage", json!({"command": "history", "limit": transactions.len()})));
    }
    for call in &next_calls {
        face.push_str(&next_line(call));
    }
    let mut outcome = super::answer(face);
    outcome.act.truncated = shown.len() < transactions.len();
    outcome.act.next_calls = next_calls;
    outcome.detail.insert("transactions".into(), serde_json::to_value(&shown).unwrap_or_default());
    Ok(outcome)
}

/// `2026-11-21 10:55:02Z` from seconds since the epoch (civil-from-days, proleptic Gregorian).
fn utc(seconds: u64) -> String {
    let days = (seconds / 86_400) as i64;
    let rest = seconds % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}Z", rest / 3600, rest % 3600 / 60, rest % 60)
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_formats_known_instants() {
        assert_eq!(super::utc(0), "1970-01-01 00:00:00Z");
        assert_eq!(super::utc(1_700_000_000), "2023-11-14 22:13:20Z");
    }
}
