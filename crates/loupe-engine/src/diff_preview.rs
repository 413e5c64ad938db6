//! `read` mode `diff_preview` (§5): a file on disk against `HEAD` or the git index, proposed
//! `content` against `HEAD`, `INDEX` or the file on disk (`WORKTREE`), or a directory as a
//! status list with +/- counts followed by diffs under the budget.
//!
//! Baselines come from `loupe-git` (in-process, no `git` process); worktree bytes come through
//! `loupe-vfs` like every read. Worktree files are compared byte for byte with the blobs
//! (clean/smudge filters such as `core.autocrlf` are not applied).

use std::collections::BTreeSet;

use loupe_core::{ContentHash, ErrorCode, NextCall, RepoPath, ToolError, text, tokens};
use loupe_git::{Baseline, GitError, Repository};
use serde_json::{Map, Value, json};

use crate::engine::Engine;
use crate::response::{Location, MetadataLevel, Response, next_line};

/// A diff_preview request, as `read.rs` parsed it.
#[derive(Debug, Clone)]
pub(crate) struct DiffRequest {
    pub(crate) target: String,
    /// `HEAD`, `INDEX` or `WORKTREE`.
    pub(crate) against: String,
    pub(crate) content: Option<String>,
    pub(crate) context: usize,
    pub(crate) max_tokens: Option<usize>,
    pub(crate) max_chars: Option<usize>,
    pub(crate) metadata: MetadataLevel,
    /// The first line of the diff to show (1-based): how a cut single-file diff continues.
    pub(crate) offset: usize,
    /// The arguments as given, for the continuation call.
    pub(crate) original: Map<String, Value>,
}

/// One changed file of a directory preview.
#[derive(Debug)]
struct Change {
    status: &'static str,
    path: String,
    old_path: Option<String>,
    old: Option<Vec<u8>>,
    new: Option<Vec<u8>>,
}

pub(crate) fn run(engine: &Engine, request: &DiffRequest) -> Result<Response, ToolError> {
    let repository = open_repository(engine)?;
    let resolved = engine
        .root()
        .resolve(&request.target)
        .map_err(|error| crate::errors::vfs_error(error, crate::errors::Access::Read))?;
    let is_dir = resolved.real.as_ref().is_some_and(|real| real.is_dir());
    if is_dir || resolved.path.is_root() {
        if request.content.is_some() {
            return Err(ToolError::invalid_args(
                "`content` is a proposed text for one file; the target is a directory",
                "name a file as the target, or drop `content` for the directory's status",
            ));
        }
        return directory(engine, &repository, request, resolved.path.as_str());
    }
    let path = resolved.path.to_string();
    let worktree = match &resolved.real {
        Some(_) => Some(
            engine
                .root()
                .read(&resolved, engine.config().max_file_bytes)
                .map_err(|error| crate::errors::vfs_error(error, crate::errors::Access::Read))?
                .bytes,
        ),
        None => None,
    };
    let (old, new, old_label, new_label) = match (&request.content, request.against.as_str()) {
        (None, "WORKTREE") => {
            return Err(ToolError::invalid_args(
                "against=WORKTREE compares proposed `content` with the file on disk; without `content` there is nothing to compare",
                "pass `content`, or compare the file on disk with HEAD or INDEX",
            )
            .with_next_call(NextCall::new("read", json!({"mode": "diff_preview", "target": path, "against": "HEAD"}))));
        }
        (None, against) => {
            let baseline = repository.blob(baseline_of(against), &path).map_err(git_error)?;
            (baseline, worktree.clone(), against.to_owned(), "WORKTREE".to_owned())
        }
        (Some(content), "WORKTREE") => {
            (worktree.clone(), Some(content.as_bytes().to_vec()), "WORKTREE".to_owned(), "proposed".to_owned())
        }
        (Some(content), against) => {
            let baseline = repository.blob(baseline_of(against), &path).map_err(git_error)?;
            (baseline, Some(content.as_bytes().to_vec()), against.to_owned(), "proposed".to_owned())
        }
    };
    if old.is_none() && new.is_none() {
        return Err(ToolError::new(
            ErrorCode::FileNotFound,
            format!("`{path}` is neither on disk nor in {}", request.against),
            "check the path; list what changed with read {\"mode\":\"diff_preview\",\"target\":\".\"}",
        )
        .with_next_call(NextCall::new("read", json!({"mode": "diff_preview", "target": "."}))));
    }
    let status = match (&old, &new) {
        (None, _) => "A",
        (_, None) => "D",
        (Some(old), Some(new)) if old == new => "=",
        _ => "M",
    };
    let change = Change { status, path: path.clone(), old_path: None, old, new };
    let (diff_text, added, removed) = render_change(&change, request.context);
    let mut face =
        format!("diff_preview · {path} · {new_label} vs {old_label} · {} · +{added} -{removed}", status_word(status));
    let file_hash = worktree.as_deref().map(ContentHash::of);
    if let Some(hash) = &file_hash {
        face.push_str(&format!(" · hash {hash}"));
    }
    face.push('\n');
    let budget = Budget::new(engine, request);
    let total_lines = diff_text.lines().count();
    let skip: usize = diff_text.split_inclusive('\n').take(request.offset - 1).map(str::len).sum();
    if request.offset > 1 && request.offset > total_lines {
        return Err(ToolError::invalid_args(
            format!("`offset` {} is past the end of this diff ({total_lines} lines)", request.offset),
            "drop `offset` to see the diff from its start",
        ));
    }
    let (shown, cut) = budget.take(&diff_text[skip..], tokens::count(&face) + 80);
    if request.offset > 1 {
        face.push_str(&format!(
            "(diff lines {}–{} of {total_lines})\n",
            request.offset,
            request.offset - 1 + shown.lines().count()
        ));
    }
    face.push_str(shown);
    if status == "=" {
        face.push_str(&format!("(no difference: {new_label} and {old_label} hold the same bytes)\n"));
    }
    let mut next_calls = Vec::new();
    if cut {
        let last_shown = request.offset - 1 + shown.lines().count();
        face.push_str(&format!(
            "── diff cut after line {last_shown} of {total_lines} by {} [DIFF_TRUNCATED]\n",
            budget.binding_name()
        ));
        let mut arguments = request.original.clone();
        arguments.insert("offset".into(), Value::from(last_shown + 1));
        next_calls.push(NextCall { tool: "read".into(), arguments });
    }
    for call in &next_calls {
        face.push_str(&next_line(call));
    }
    let mut meta = base_meta(&face, cut, &next_calls, request);
    meta.insert("file_hash".into(), file_hash.map(|hash| Value::from(hash.as_str())).unwrap_or(Value::Null));
    meta.insert("status".into(), Value::from(status));
    meta.insert("added".into(), Value::from(added));
    meta.insert("removed".into(), Value::from(removed));
    Ok(Response {
        ok: true,
        tool: "read",
        mode: Some("diff_preview".into()),
        target: Some(path.clone()),
        meta,
        text: Some(diff_text),
        location: Some(Location { file: path, line: None, end_line: None }),
        error: None,
        face,
        metadata: request.metadata,
    })
}

/// The repository around the root, with the root's exclusions (§3.1) applied to its
/// baselines: `HEAD` and the git index hold whatever was ever committed or staged, secrets
/// included, and what the worktree walk leaves out must not come back from them as "deleted"
/// or "added". A path that does not normalise is hidden too.
pub(crate) fn open_repository(engine: &Engine) -> Result<Repository, ToolError> {
    let exclusions = engine.root().exclusions().clone();
    let repository = Repository::discover(engine.root().canonical()).map_err(git_error)?;
    Ok(repository.hiding(Box::new(move |path| {
        RepoPath::normalize(path).is_none_or(|path| exclusions.matching_pattern(&path).is_some())
    })))
}

/// The status list of a directory, then each file's diff while the budget lasts.
fn directory(
    engine: &Engine,
    repository: &Repository,
    request: &DiffRequest,
    dir: &str,
) -> Result<Response, ToolError> {
    if request.against == "WORKTREE" {
        return Err(ToolError::invalid_args(
            "against=WORKTREE needs proposed `content` for one file; a directory compares with HEAD or INDEX",
            "drop `against` (HEAD) or pass against=INDEX",
        )
        .with_next_call(NextCall::new(
            "read",
            json!({"mode": "diff_preview", "target": dir_label(dir), "against": "HEAD"}),
        )));
    }
    let baseline = baseline_of(&request.against);
    let tracked = repository.tracked(baseline, dir).map_err(git_error)?;
    let in_index = if baseline == Baseline::Index {
        tracked.clone()
    } else {
        repository.tracked(Baseline::Index, dir).map_err(git_error)?
    };
    let prefix = if dir.is_empty() { String::new() } else { format!("{dir}/") };
    let on_disk: BTreeSet<String> = engine
        .root()
        .walk(engine.walk_options())
        .into_iter()
        .map(|entry| entry.path.to_string())
        .filter(|path| path.starts_with(&prefix))
        .collect();
    let read_worktree = |path: &str| -> Option<Vec<u8>> {
        let resolved = engine.root().resolve(path).ok()?;
        engine.root().read(&resolved, engine.config().max_file_bytes).ok().map(|file| file.bytes)
    };
    let mut added: Vec<Change> = Vec::new();
    let mut deleted: Vec<Change> = Vec::new();
    let mut changes: Vec<Change> = Vec::new();
    let all: BTreeSet<&String> = tracked.keys().chain(on_disk.iter()).collect();
    for path in all {
        let worktree =
            if on_disk.contains(path) { read_worktree(path) } else { tracked_on_disk(engine, path, &read_worktree) };
        match (tracked.get(path), worktree) {
            (Some(id), Some(bytes)) => {
                if loupe_git::blob_id(&bytes) != *id {
                    let old = repository.object_bytes(*id).map_err(git_error)?;
                    changes.push(Change {
                        status: "M",
                        path: path.clone(),
                        old_path: None,
                        old: Some(old),
                        new: Some(bytes),
                    });
                }
            }
            (Some(id), None) => {
                let old = repository.object_bytes(*id).map_err(git_error)?;
                deleted.push(Change { status: "D", path: path.clone(), old_path: None, old: Some(old), new: None });
            }
            (None, Some(bytes)) => {
                let status = if in_index.contains_key(path) { "A" } else { "?" };
                added.push(Change { status, path: path.clone(), old_path: None, old: None, new: Some(bytes) });
            }
            (None, None) => {}
        }
    }
    pair_renames(&mut added, &mut deleted, &mut changes);
    changes.extend(added);
    changes.extend(deleted);
    changes.sort_by(|a, b| a.path.cmp(&b.path));

    let label = dir_label(dir);
    let rendered: Vec<(String, usize, usize)> =
        changes.iter().map(|change| render_change(change, request.context)).collect();
    let total_added: usize = rendered.iter().map(|(_, added, _)| added).sum();
    let total_removed: usize = rendered.iter().map(|(_, _, removed)| removed).sum();
    let mut face = format!(
        "diff_preview · {label} · WORKTREE vs {} · {} file(s) changed · +{total_added} -{total_removed}\n",
        request.against,
        changes.len()
    );
    if changes.is_empty() {
        face.push_str("(no changes)\n");
    }
    let width = changes.iter().map(|change| display_name(change).chars().count()).max().unwrap_or(0);
    let mut files = Vec::new();
    for (change, (_, added, removed)) in changes.iter().zip(&rendered) {
        face.push_str(&format!("{}  {:<width$}  +{added} -{removed}\n", change.status, display_name(change)));
        files.push(json!({"path": change.path, "old_path": change.old_path, "status": change.status, "added": added, "removed": removed}));
    }
    let budget = Budget::new(engine, request);
    let mut used = tokens::count(&face) + 80;
    let mut all_text = String::new();
    let mut cut_at = None;
    for (index, (text, _, _)) in rendered.iter().enumerate() {
        all_text.push_str(text);
        if cut_at.is_some() {
            continue;
        }
        let (shown, cut) = budget.take_more(text, &mut used, face.len());
        face.push_str(shown);
        if cut {
            cut_at = Some(index);
        }
    }
    let mut next_calls = Vec::new();
    if let Some(index) = cut_at {
        face.push_str(&format!(
            "── diffs cut in {} by {}; {} more file(s) not shown [DIFF_TRUNCATED]\n",
            changes[index].path,
            budget.binding_name(),
            changes.len() - index - 1
        ));
        for change in changes[index..].iter().take(3) {
            next_calls.push(NextCall::new(
                "read",
                json!({"mode": "diff_preview", "target": change.path, "against": request.against}),
            ));
        }
    }
    for call in &next_calls {
        face.push_str(&next_line(call));
    }
    let mut meta = base_meta(&face, cut_at.is_some(), &next_calls, request);
    meta.insert("files".into(), Value::from(files));
    meta.insert("added".into(), Value::from(total_added));
    meta.insert("removed".into(), Value::from(total_removed));
    if let Some(branch) = repository.branch() {
        meta.insert("branch".into(), Value::from(branch));
    }
    Ok(Response {
        ok: true,
        tool: "read",
        mode: Some("diff_preview".into()),
        target: Some(label.clone()),
        meta,
        text: Some(all_text),
        location: Some(Location { file: label, line: None, end_line: None }),
        error: None,
        face,
        metadata: request.metadata,
    })
}

/// A tracked path the walk did not list (ignored after being committed): read it directly.
fn tracked_on_disk(engine: &Engine, path: &str, read: &dyn Fn(&str) -> Option<Vec<u8>>) -> Option<Vec<u8>> {
    let resolved = engine.root().resolve(path).ok()?;
    resolved.real.as_ref().filter(|real| real.is_file())?;
    read(path)
}

/// Pairs a deleted file with a new one of the same or similar content (at least half of the
/// lines kept) as a rename, git's default threshold.
fn pair_renames(added: &mut Vec<Change>, deleted: &mut Vec<Change>, changes: &mut Vec<Change>) {
    let mut index = 0;
    while index < deleted.len() {
        let old = deleted[index].old.clone().unwrap_or_default();
        let best = added
            .iter()
            .enumerate()
            .map(|(at, candidate)| (at, similarity(&old, candidate.new.as_deref().unwrap_or_default())))
            .filter(|(_, score)| *score >= 0.5)
            .max_by(|a, b| a.1.total_cmp(&b.1));
        match best {
            Some((at, _)) => {
                let new = added.remove(at);
                let gone = deleted.remove(index);
                changes.push(Change {
                    status: "R",
                    path: new.path,
                    old_path: Some(gone.path),
                    old: gone.old,
                    new: new.new,
                });
            }
            None => index += 1,
        }
    }
}

/// The share of lines two texts have in common (1.0 for identical bytes).
fn similarity(old: &[u8], new: &[u8]) -> f64 {
    if old == new {
        return 1.0;
    }
    let (old_text, new_text) = (String::from_utf8_lossy(old), String::from_utf8_lossy(new));
    let diff = loupe_git::unified_diff(&old_text, &new_text, "a", "b", 0);
    let old_lines = old_text.lines().count();
    let new_lines = new_text.lines().count();
    let kept = old_lines.saturating_sub(diff.removed);
    if old_lines.max(new_lines) == 0 { 0.0 } else { kept as f64 / old_lines.max(new_lines) as f64 }
}

/// The unified diff of one change, with its counts; binary content is named, not shown.
fn render_change(change: &Change, context: usize) -> (String, usize, usize) {
    let old_label = match (&change.old, &change.old_path) {
        (None, _) => "/dev/null".to_owned(),
        (Some(_), Some(old_path)) => format!("a/{old_path}"),
        (Some(_), None) => format!("a/{}", change.path),
    };
    let new_label = if change.new.is_some() { format!("b/{}", change.path) } else { "/dev/null".to_owned() };
    let binary = [&change.old, &change.new].iter().any(|side| side.as_deref().is_some_and(text::looks_binary));
    if binary {
        if change.old == change.new {
            return (String::new(), 0, 0);
        }
        return (format!("--- {old_label}\n+++ {new_label}\nBinary files differ\n"), 0, 0);
    }
    let decode = |bytes: &Option<Vec<u8>>| {
        bytes.as_deref().and_then(|bytes| text::decode(bytes).ok()).map(|d| d.text).unwrap_or_default()
    };
    let diff = loupe_git::unified_diff(&decode(&change.old), &decode(&change.new), &old_label, &new_label, context);
    let mut text = diff.text;
    if text.is_empty() && change.old_path.is_some() {
        text = format!("--- {old_label}\n+++ {new_label}\n(renamed, content unchanged)\n");
    }
    (text, diff.added, diff.removed)
}

fn display_name(change: &Change) -> String {
    match &change.old_path {
        Some(old) => format!("{old} → {}", change.path),
        None => change.path.clone(),
    }
}

fn status_word(status: &str) -> &'static str {
    match status {
        "A" => "new file",
        "D" => "deleted",
        "=" => "unchanged",
        _ => "modified",
    }
}

fn dir_label(dir: &str) -> String {
    if dir.is_empty() { ".".into() } else { dir.to_owned() }
}

fn baseline_of(against: &str) -> Baseline {
    if against == "INDEX" { Baseline::Index } else { Baseline::Head }
}

fn base_meta(face: &str, truncated: bool, next_calls: &[NextCall], request: &DiffRequest) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert("truncated".into(), Value::Bool(truncated));
    meta.insert("token_estimate".into(), Value::from(tokens::count(face)));
    meta.insert("preview_degraded".into(), Value::Bool(false));
    meta.insert("next_cursor".into(), Value::Null);
    meta.insert("against".into(), Value::from(request.against.as_str()));
    meta.insert("context_lines".into(), Value::from(request.context));
    let reason_codes: Vec<&str> = if truncated { vec!["DIFF_TRUNCATED"] } else { Vec::new() };
    meta.insert("reason_codes".into(), json!(reason_codes));
    meta.insert("next_calls".into(), serde_json::to_value(next_calls).unwrap_or_default());
    meta
}

fn git_error(error: GitError) -> ToolError {
    match error {
        GitError::NotARepository { .. } => ToolError::new(
            ErrorCode::GitUnavailable,
            format!("{error}: diff_preview needs a git baseline"),
            "run loupe on a git work tree, or compare files with read mode='file'",
        ),
        GitError::Read { .. } => ToolError::new(
            ErrorCode::GitUnavailable,
            error.to_string(),
            "check the repository with `git status`; a corrupt or unsupported repository cannot be diffed",
        ),
    }
}

/// The caps on the diff text: characters and tokens.
struct Budget {
    chars: usize,
    tokens: usize,
    chars_from_caller: bool,
    tokens_from_caller: bool,
}

impl Budget {
    fn new(engine: &Engine, request: &DiffRequest) -> Budget {
        let config = engine.config();
        Budget {
            chars: request.max_chars.map_or(config.max_preview_chars, |chars| chars.min(config.max_preview_chars)),
            tokens: request
                .max_tokens
                .map_or(config.max_response_tokens, |tokens| tokens.min(config.max_response_tokens)),
            chars_from_caller: request.max_chars.is_some(),
            tokens_from_caller: request.max_tokens.is_some(),
        }
    }

    fn binding_name(&self) -> String {
        if self.tokens_from_caller {
            format!("max_tokens={}", self.tokens)
        } else if self.chars_from_caller {
            format!("max_preview_chars={}", self.chars)
        } else {
            format!("max_preview_chars={} / max_response_tokens={}", self.chars, self.tokens)
        }
    }

    fn take<'a>(&self, text: &'a str, overhead_tokens: usize) -> (&'a str, bool) {
        let mut used = overhead_tokens;
        self.take_more(text, &mut used, 0)
    }

    /// Whole lines of `text` that still fit after `used` tokens and `face_chars` characters.
    fn take_more<'a>(&self, text: &'a str, used: &mut usize, face_chars: usize) -> (&'a str, bool) {
        let chars_left = self.chars.saturating_sub(face_chars);
        let tokens_left = self.tokens.saturating_sub(*used);
        let mut end = 0;
        let mut chars = 0;
        for line in text.split_inclusive('\n') {
            let count = line.chars().count();
            if chars + count > chars_left {
                break;
            }
            chars += count;
            end += line.len();
        }
        let mut shown = &text[..end];
        let mut count = tokens::count(shown);
        while count > tokens_left && !shown.is_empty() {
            let keep = shown[..shown.len() - 1].rfind('\n').map_or(0, |at| at + 1);
            shown = &shown[..keep];
            count = tokens::count(shown);
        }
        *used += count;
        (shown, shown.len() < text.len())
    }
}
