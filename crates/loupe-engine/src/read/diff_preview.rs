//! `read` mode `diff_preview` (§5): a file on disk against `HEAD`, the git index or any
//! revision (a branch, tag, commit, `main...` for what this branch did since it forked), two
//! revisions against each other (`A..B`, `A...B`), proposed `content` against a baseline or the
//! file on disk (`WORKTREE`); one symbol of a file (`path` + `target`: its own lines); or a
//! directory as the review: each changed file's changed symbols with the uses left of the risky
//! ones, riskiest first, the diffs inline only when they are small.
//!
//! What differs between the two sides is `workspace/changes.rs`'s, which symbols changed and
//! their uses `workspace/review.rs`'s; this module renders them under the budget and pages them.

use loupe_core::{ContentHash, ErrorCode, NextCall, ToolError, text, tokens};
use loupe_git::{Baseline, Repository};
use loupe_graph::Confidence;

use crate::workspace::changes::{Change, Collected, Sides, blob_side, collect_changes};
use crate::workspace::git::git_error;
use serde_json::{Map, Value, json};

use super::Against;
use crate::reasons::ReasonCode;
use crate::response::{Face, Location, MetadataLevel, Outcome, next_line};
use crate::work::{Stopped, Work};
use crate::workspace::Workspace;
use crate::workspace::proposals::{PROPOSED_BYTES, PROPOSED_ENTRIES};

/// What a diff compares with (`against`): a keyword, or a revision git resolves (§5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Compare {
    Keyword(Against),
    /// A branch, tag, commit id, `HEAD~2`, `@{upstream}`, `A..B` or `A...B`, as given.
    Revision(String),
}

impl Compare {
    /// Text that may name a revision: one word of at most 256 characters, no control
    /// characters (git's own names have neither spaces nor controls).
    pub(crate) fn is_revision_text(text: &str) -> bool {
        let text = text.trim();
        !text.is_empty() && text.len() <= 256 && !text.chars().any(|c| c.is_control() || c.is_whitespace())
    }

    fn is(&self, keyword: Against) -> bool {
        *self == Compare::Keyword(keyword)
    }
}

impl std::fmt::Display for Compare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Compare::Keyword(keyword) => keyword.fmt(f),
            Compare::Revision(spec) => f.write_str(spec),
        }
    }
}

/// The two sides of a diff, with what a cursor pins of `against`: its code, and for a
/// revision its text.
struct DiffSides {
    sides: Sides,
    code: u8,
    salt: String,
}

impl std::ops::Deref for DiffSides {
    type Target = Sides;

    fn deref(&self) -> &Sides {
        &self.sides
    }
}

impl DiffSides {
    fn of(repository: &Repository, request: &DiffRequest) -> Result<DiffSides, ToolError> {
        match &request.against {
            Compare::Keyword(keyword) => Ok(DiffSides::keyword(*keyword)),
            Compare::Revision(spec) => Ok(DiffSides {
                sides: Sides::revision(repository, spec, ("read", &request.original, "against"))?,
                code: 3,
                salt: spec.clone(),
            }),
        }
    }

    fn keyword(keyword: Against) -> DiffSides {
        DiffSides { sides: Sides::keyword(keyword), code: against_code(keyword), salt: String::new() }
    }

    /// The tag a cursor of this diff of `target` carries: the target's, salted with a
    /// revision's text so a cursor of `against: main` does not page `against: v1`.
    fn tag(&self, target: &str) -> [u8; 4] {
        if self.salt.is_empty() { path_tag(target) } else { path_tag(&format!("{target}\0{}", self.salt)) }
    }
}

/// A diff_preview request, as `read/parse.rs` parsed it.
#[derive(Debug, Clone)]
pub(crate) struct DiffRequest {
    pub(crate) target: String,
    /// A symbol of `target` (a file) whose diff alone is asked for (`path` + `target`).
    pub(crate) symbol: Option<String>,
    pub(crate) against: Compare,
    pub(crate) content: Option<String>,
    pub(crate) context: usize,
    pub(crate) max_tokens: Option<usize>,
    pub(crate) max_chars: Option<usize>,
    pub(crate) metadata: Option<MetadataLevel>,
    /// The first line of the diff to show (1-based): how a cut single-file diff continues.
    pub(crate) offset: usize,
    /// Where a cut diff continues (a file diff's line, a directory listing's entry).
    pub(crate) cursor: Option<String>,
    /// The arguments as given, for the continuation call.
    pub(crate) original: Map<String, Value>,
}

pub(crate) fn run(workspace: &Workspace, request: &DiffRequest, work: &Work) -> Result<Outcome, ToolError> {
    let repository = crate::workspace::git::open_repository(workspace)
        .map_err(|error| git_error(error).with_next_call(without_git(workspace, request)))?;
    let resolved = workspace
        .root()
        .resolve(&request.target)
        .map_err(|error| crate::errors::vfs_error(error, crate::errors::Access::Read))?;
    let sides = DiffSides::of(&repository, request)?;
    // A directory on disk, or one only the compared commits hold (a package the branch deleted):
    // a path that is no file on either side but has files under it there.
    let is_dir = match &resolved.real {
        Some(real) => real.is_dir(),
        None => {
            let dir = resolved.path.as_str();
            let holds = |baseline: Baseline| {
                repository.blob(baseline, dir, 0).ok().flatten().is_none()
                    && repository.tracked(baseline, dir).is_ok_and(|files| !files.is_empty())
            };
            holds(sides.baseline)
                || sides.new_commit.as_ref().is_some_and(|(commit, _)| holds(Baseline::Commit(*commit)))
        }
    };
    let cursor = request.cursor.as_deref().map(|text| decode_cursor(request, text)).transpose()?;
    if is_dir || resolved.path.is_root() {
        if request.symbol.is_some() {
            return Err(ToolError::invalid_args(
                "`path` names the file a symbol is in; it is a directory",
                "name the symbol's file in `path`, or drop `path` to review the directory",
            )
            .with_next_call(continuation(
                request,
                &[("target", Value::from(request.target.as_str()))],
                &["path"],
            )));
        }
        if request.content.is_some() {
            return Err(ToolError::invalid_args(
                "`content` is a proposed text for one file; the target is a directory",
                "name a file as the target, or drop `content` for the directory's status",
            ));
        }
        return directory(workspace, &repository, request, &sides, resolved.path.as_str(), cursor, work);
    }
    let path = resolved.path.to_string();
    // A symbol's diff pages by its own cursors: the file's do not continue it.
    let tag_target = match &request.symbol {
        Some(symbol) => format!("{path}\0{symbol}"),
        None => path.clone(),
    };
    if cursor.as_ref().is_some_and(|cursor| cursor.directory || !cursor.is_for(&tag_target, &sides)) {
        return Err(ToolError::invalid_args(
            format!("this cursor was issued for another diff, not `{path}` against {}", sides.old_label),
            "use a cursor with the target and `against` it came from, or drop `cursor`",
        )
        .with_next_call(continuation(request, &[], &["cursor"])));
    }
    let worktree = match &resolved.real {
        Some(_) if sides.new_commit.is_none() => Some(
            workspace
                .root()
                .read(&resolved, workspace.config().max_file_bytes)
                .map_err(|error| crate::errors::vfs_error(error, crate::errors::Access::Read))?
                .bytes,
        ),
        _ => None,
    };
    // The proposed text: as sent, or, for a cursor that continues a proposal, as kept by the
    // server when the cut page was answered (the caller does not send it twice).
    let proposed: Option<std::sync::Arc<Vec<u8>>> = match (&request.content, &cursor) {
        (Some(content), _) => Some(std::sync::Arc::new(content.as_bytes().to_vec())),
        (None, Some(cursor)) if cursor.proposed => match workspace.proposed.get(&cursor.new) {
            Some(bytes) => Some(bytes),
            None => {
                return Err(ToolError::new(
                    ErrorCode::Conflict,
                    format!(
                        "the proposed `content` this cursor continues is no longer held (the server keeps the last {PROPOSED_ENTRIES} proposed texts, {} MB at most)",
                        PROPOSED_BYTES >> 20
                    ),
                    format!(
                        "send the call again with the same `content` and \"offset\": {} instead of `cursor`",
                        cursor.next
                    ),
                )
                .with_detail("offset", Value::from(cursor.next)));
            }
        },
        _ => None,
    };
    let limit = workspace.config().max_file_bytes;
    let mut note = None;
    let old_side = |note: &mut Option<String>| -> Result<Option<Vec<u8>>, ToolError> {
        let blob = repository.blob(sides.baseline, &path, limit).map_err(git_error)?;
        Ok(blob.map(|blob| blob_side(blob, &sides.old_label, note)))
    };
    let (old, new, old_label, new_label) = match (&proposed, &sides.new_commit) {
        (None, _) if request.against.is(Against::Worktree) => {
            return Err(ToolError::invalid_args(
                "against=WORKTREE compares proposed `content` with the file on disk; without `content` there is nothing to compare",
                "pass `content`, or compare the file on disk with HEAD, INDEX or a revision",
            )
            .with_next_call(NextCall::new("read", json!({"mode": "diff_preview", "target": path, "against": "HEAD"}))));
        }
        (Some(_), Some(_)) => {
            return Err(ToolError::invalid_args(
                "`content` is compared with one baseline; a range (`A..B`, `A...B`) names two commits",
                "name one revision in `against` (or `A...` for the merge base), or drop `content`",
            )
            .with_next_call(continuation(request, &[], &["content", "cursor"])));
        }
        (None, Some((commit, label))) => {
            let blob = repository.blob(Baseline::Commit(*commit), &path, limit).map_err(git_error)?;
            let new = blob.map(|blob| blob_side(blob, label, &mut note));
            (old_side(&mut note)?, new, sides.old_label.clone(), label.clone())
        }
        (None, None) => (old_side(&mut note)?, worktree.clone(), sides.old_label.clone(), "WORKTREE".to_owned()),
        (Some(content), None) if request.against.is(Against::Worktree) => {
            (worktree.clone(), Some(content.as_ref().clone()), "WORKTREE".to_owned(), "proposed".to_owned())
        }
        (Some(content), None) => {
            (old_side(&mut note)?, Some(content.as_ref().clone()), sides.old_label.clone(), "proposed".to_owned())
        }
    };
    if old.is_none() && new.is_none() {
        // Not a file: a symbol of the tree as it is now, named without its file.
        if request.symbol.is_none()
            && is_symbol_name(&request.target)
            && let Ok(found) =
                crate::workspace::symbols::resolve(workspace, "read", &request.target, None, &request.original)
        {
            let symbol =
                DiffRequest { target: found.path.to_string(), symbol: Some(request.target.clone()), ..request.clone() };
            return run(workspace, &symbol, work);
        }
        return Err(ToolError::new(
            ErrorCode::FileNotFound,
            format!(
                "`{}` is neither {} nor in {old_label}",
                crate::errors::quoted(&path),
                if new_label == "WORKTREE" { "on disk".to_owned() } else { format!("in {new_label}") }
            ),
            "check the path; list what changed with read {\"mode\":\"diff_preview\",\"target\":\".\"}",
        )
        .with_next_call(NextCall::new("read", json!({"mode": "diff_preview", "target": "."}))));
    }
    let (old, new, first_lines, symbol_state, members) = match &request.symbol {
        None => (old, new, (1, 1), None, Default::default()),
        Some(symbol) => {
            let cut = cut_to_symbol(&path, symbol, old.as_deref(), new.as_deref(), request)?;
            (cut.old, cut.new, cut.first_lines, Some(cut.state), cut.members)
        }
    };
    let (old_hash, new_hash) = (hash8(old.as_deref()), hash8(new.as_deref()));
    let offset = match &cursor {
        Some(cursor) if cursor.old != old_hash || cursor.new != new_hash => {
            return Err(changed_since_cursor(
                workspace,
                request,
                &sides,
                (&path, &tag_target),
                proposed.is_some(),
                old_hash,
                new_hash,
            ));
        }
        Some(cursor) => cursor.next,
        None => request.offset,
    };
    let status = match (&old, &new) {
        (None, _) => "A",
        (_, None) => "D",
        (Some(old), Some(new)) if old == new => "=",
        _ => "M",
    };
    let change = Change { status, path: path.clone(), old_path: None, old, new, note, similarity: None, mode: None };
    // A type's own lines only: a hunk that changes only its members' lines is their diff.
    let inside = |spans: &[Lines], line: &usize| spans.iter().any(|(start, end)| (start..=end).contains(&line));
    let own = |removes: &[usize], adds: &[usize]| {
        removes.iter().any(|line| !inside(&members.0, line)) || adds.iter().any(|line| !inside(&members.1, line))
    };
    let (diff_text, added, removed, members_left_out) = render_change_kept(&change, request.context, first_lines, &own);
    let symbol_state = match symbol_state {
        Some("body changed") if added + removed == 0 && members_left_out > 0 => Some("only its members changed"),
        state => state,
    };
    let mut face = match (&request.symbol, symbol_state) {
        (Some(symbol), Some(state)) => {
            format!("diff_preview · {path} · {symbol} · {new_label} vs {old_label} · {state} · +{added} -{removed}")
        }
        _ => format!(
            "diff_preview · {path} · {new_label} vs {old_label} · {} · +{added} -{removed}",
            status_word(status)
        ),
    };
    let file_hash = worktree.as_deref().map(ContentHash::of);
    if let Some(hash) = &file_hash {
        face.push_str(&format!(" · hash {hash}"));
    }
    face.push('\n');
    // A whole file's first page names its changed symbols above the diff.
    if request.symbol.is_none() && offset == 1 && change.note.is_none() {
        let sides = crate::workspace::review::FileSides {
            path: &path,
            old_path: None,
            old: change.old.as_deref(),
            new: change.new.as_deref(),
        };
        let limit = workspace.config().max_file_bytes as usize;
        face.push_str(&symbol_rows(&crate::workspace::review::symbols_of(workspace, &sides, limit)));
    }
    let budget = Budget::new(workspace, request);
    let total_lines = diff_text.lines().count();
    if offset > 1 && offset > total_lines {
        return Err(ToolError::invalid_args(
            format!("`offset` {offset} is past the end of this diff ({total_lines} lines)"),
            "drop `offset` to see the diff from its start",
        ));
    }
    let skip: usize = diff_text.split_inclusive('\n').take(offset - 1).map(str::len).sum();
    let page = budget.take(&diff_text[skip..], tokens::count(&face) + FILE_FOOTER_TOKENS);
    let shown_lines = page.lines;
    if offset > 1 {
        face.push_str(&format!("(diff lines {}–{} of {total_lines})\n", offset, offset - 1 + shown_lines));
    }
    face.push_str(&page.face);
    if status == "=" {
        face.push_str(&format!("(no difference: {new_label} and {old_label} hold the same bytes)\n"));
    }
    if members_left_out > 0 {
        face.push_str(&format!(
            "({members_left_out} hunk(s) inside its members not shown: a member's diff is its own, `target` Type.member)\n"
        ));
    }
    let mut next_calls = Vec::new();
    let mut next_cursor = None;
    let cut_by = page.cut.then(|| page.by.unwrap_or(Cap::Tokens));
    if let Some(cap) = cut_by {
        let last_shown = offset - 1 + shown_lines;
        face.push_str(&format!(
            "── diff cut after line {last_shown} of {total_lines} by {} [{}]\n",
            budget.limit_name(cap),
            crate::reasons::joined(&budget.codes(cut_by))
        ));
        if let Some(content) = &proposed {
            workspace.proposed.keep(new_hash, content);
        }
        let cursor = DiffCursor {
            directory: false,
            against: sides.code,
            proposed: proposed.is_some(),
            old: old_hash,
            new: new_hash,
            tag: sides.tag(&tag_target),
            next: last_shown + 1,
        }
        .encode();
        next_calls.push(continuation(request, &[("cursor", Value::from(cursor.as_str()))], &["offset", "content"]));
        next_cursor = Some(cursor);
    }
    budget.note_clamp(&mut face, cut_by);
    for call in &next_calls {
        face.push_str(&next_line(call));
    }
    let mut outcome = answer(face, &path, (&budget, cut_by), next_calls, next_cursor, request);
    outcome.act.file_hash = file_hash.map(|hash| hash.to_string());
    // The diff lines this page shows, cut where the face was cut: never the whole diff.
    outcome.content = Some(page.text);
    let detail = &mut outcome.detail;
    detail.insert("status".into(), Value::from(status));
    detail.insert("added".into(), Value::from(added));
    detail.insert("removed".into(), Value::from(removed));
    Ok(outcome)
}

/// A follow-up call of this diff: the caller's arguments with some set and some removed.
fn continuation(request: &DiffRequest, set: &[(&str, Value)], remove: &[&str]) -> NextCall {
    let mut arguments = request.original.clone();
    for key in remove {
        arguments.remove(*key);
    }
    for (key, value) in set {
        arguments.insert((*key).to_owned(), value.clone());
    }
    NextCall { tool: "read".into(), arguments }
}

/// The cursor's diff is not this one any more: `CONFLICT`, with a fresh start of the diff as
/// it is now. A proposal still held continues from a new cursor at line 1, so the fresh call
/// does not carry `content` either.
fn changed_since_cursor(
    workspace: &Workspace,
    request: &DiffRequest,
    sides: &DiffSides,
    (path, tag_target): (&str, &str),
    proposed: bool,
    old: [u8; 8],
    new: [u8; 8],
) -> ToolError {
    let fresh = if proposed && request.content.is_none() {
        let cursor = DiffCursor {
            directory: false,
            against: sides.code,
            proposed: true,
            old,
            new,
            tag: sides.tag(tag_target),
            next: 1,
        };
        workspace.proposed.touch(&new);
        continuation(request, &[("cursor", Value::from(cursor.encode()))], &["offset"])
    } else {
        continuation(request, &[], &["cursor", "offset"])
    };
    ToolError::new(
        ErrorCode::Conflict,
        format!(
            "`{}` or its {} baseline changed since this cursor was issued",
            crate::errors::quoted(path),
            sides.old_label
        ),
        "the diff is not the one the cursor paged; start it again from its first line",
    )
    .with_next_call(fresh)
    .with_detail("path", Value::from(path))
}

/// The status list of a directory, then each file's diff while the budget lasts. The list is
/// itself paged: a tree with more changed files than the response ceiling holds lists what
/// fits, counts the rest, and continues by a cursor over the sorted list.
fn directory(
    workspace: &Workspace,
    repository: &Repository,
    request: &DiffRequest,
    sides: &DiffSides,
    dir: &str,
    cursor: Option<DiffCursor>,
    work: &Work,
) -> Result<Outcome, ToolError> {
    if request.against.is(Against::Worktree) {
        return Err(ToolError::invalid_args(
            "against=WORKTREE needs proposed `content` for one file; a directory compares with HEAD or INDEX",
            "drop `against` (HEAD) or pass against=INDEX",
        )
        .with_next_call(NextCall::new(
            "read",
            json!({"mode": "diff_preview", "target": dir_label(dir), "against": "HEAD"}),
        )));
    }
    let label = dir_label(dir);
    if cursor.as_ref().is_some_and(|cursor| !cursor.directory || !cursor.is_for(&label, sides)) {
        return Err(ToolError::invalid_args(
            format!("this cursor was issued for another diff, not `{label}` against {}", sides.old_label),
            "use a cursor with the target and `against` it came from, or drop `cursor`",
        )
        .with_next_call(continuation(request, &[], &["cursor"])));
    }
    let (changes, hidden, compared_total) = match collect_changes(workspace, repository, sides, dir, work)? {
        Collected::Done { changes, hidden, compared_total } => (changes, hidden, compared_total),
        Collected::Stopped { found, compared, stopped } => {
            return Ok(stopped_listing(workspace, request, sides, &label, found, compared, stopped));
        }
    };

    // The changed symbols of every file, and the riskiest first: files by their riskiest
    // change (then by path), each file's symbols riskiest first.
    let file_sides: Vec<crate::workspace::review::FileSides<'_>> = changes
        .iter()
        .map(|change| crate::workspace::review::FileSides {
            path: &change.path,
            old_path: change.old_path.as_deref(),
            old: change.old.as_deref().filter(|_| change.note.is_none()),
            new: change.new.as_deref().filter(|_| change.note.is_none()),
        })
        .collect();
    let review = crate::workspace::review::review(workspace, work, &file_sides);
    drop(file_sides);
    let mut order: Vec<usize> = (0..changes.len()).collect();
    let file_rank =
        |at: usize| review.files[at].iter().map(crate::workspace::review::Reviewed::rank).min().unwrap_or(u8::MAX);
    order.sort_by_key(|&at| file_rank(at));
    let mut reviewed: Vec<Option<(Change, Vec<crate::workspace::review::Reviewed>)>> =
        changes.into_iter().zip(review.files).map(Some).collect();
    let (changes, symbols): (Vec<Change>, Vec<Vec<crate::workspace::review::Reviewed>>) =
        order.iter().filter_map(|&at| reviewed[at].take()).unzip();

    // The list a cursor pages: its entries and order, not the files' contents.
    let listing_hash = {
        let mut hasher = blake3::Hasher::new();
        for change in &changes {
            for part in [change.status, change.path.as_str(), change.old_path.as_deref().unwrap_or("")] {
                hasher.update(part.as_bytes());
                hasher.update(b"\0");
            }
        }
        let mut hash = [0; 8];
        hash.copy_from_slice(&hasher.finalize().as_bytes()[..8]);
        hash
    };
    let start = match &cursor {
        Some(cursor) if cursor.old != listing_hash => {
            return Err(ToolError::new(
                ErrorCode::Conflict,
                format!("the changed files under `{label}` are not the ones this cursor paged"),
                "files changed since the cursor was issued; list them again from the start",
            )
            .with_next_call(continuation(request, &[], &["cursor", "offset"])));
        }
        Some(cursor) => cursor.next.saturating_sub(1).min(changes.len()),
        None => 0,
    };

    let steps = compared_total + changes.len() as u64;
    let mut rendered: Vec<(String, usize, usize)> = Vec::with_capacity(changes.len());
    for (diffed, change) in changes.iter().enumerate() {
        if let Some(stopped) = work.stopped() {
            let compared = (compared_total as usize, compared_total);
            return Ok(stopped_listing(workspace, request, sides, &label, changes, compared, stopped));
        }
        work.report(compared_total + diffed as u64 + 1, Some(steps), || {
            format!("diff_preview: diffing file {} of {}", diffed + 1, changes.len())
        });
        rendered.push(render_change(change, request.context, (1, 1)));
    }
    let total_added: usize = rendered.iter().map(|(_, added, _)| added).sum();
    let total_removed: usize = rendered.iter().map(|(_, _, removed)| removed).sum();
    let symbol_count: usize = symbols.iter().map(Vec::len).sum();
    let mut face = format!(
        "diff_preview · {label} · {} vs {} · {} file(s) changed · +{total_added} -{total_removed}{}\n",
        sides.new_label(),
        sides.old_label,
        changes.len(),
        if symbol_count > 0 { format!(" · {symbol_count} symbol(s)") } else { String::new() }
    );
    if changes.is_empty() {
        face.push_str("(no changes)\n");
    }
    // Excluded files (§3.1) are neither read nor diffed; say how many were left out, so
    // a changed secret does not vanish from the count without a word.
    if hidden > 0 {
        face.push_str(&format!("({hidden} tracked file(s) under the exclusions not compared)\n"));
    }
    // The list takes what the token ceiling leaves after the header and a footer; one entry
    // always shows, so paging advances.
    let budget = Budget::new(workspace, request);
    let list_budget = budget.tokens.saturating_sub(tokens::count(&face) + LIST_FOOTER_TOKENS);
    let width = changes[start..]
        .iter()
        .take(LIST_WIDTH_SAMPLE)
        .map(|change| display_name(change).chars().count())
        .max()
        .unwrap_or(0);
    // `meta.files` is on the structured face only at `full`; there its entries must fit too.
    let full = request.metadata.unwrap_or(workspace.config().structured_content) == MetadataLevel::Full;
    let mut list = String::new();
    let mut list_tokens = 0;
    let mut end = start;
    let mut files = Vec::new();
    for ((change, (_, added, removed)), reviewed) in
        changes[start..].iter().zip(&rendered[start..]).zip(&symbols[start..])
    {
        // A rename says how much it kept; a binary file says so (its counts are 0).
        let binary = [&change.old, &change.new].iter().any(|side| side.as_deref().is_some_and(text::looks_binary));
        let mut line = format!(
            "{}  {:<width$}  +{added} -{removed}{}{}{}\n",
            change.status,
            display_name(change),
            change.similarity.map(|share| format!(" ({share}% kept)")).unwrap_or_default(),
            if binary { " binary" } else { "" },
            change.mode_change().map(|mode| format!(" {mode}")).unwrap_or_default(),
        );
        line.push_str(&symbol_rows(reviewed));
        let mut entry = json!({
            "path": change.path, "old_path": change.old_path, "status": change.status, "added": added,
            "removed": removed,
        });
        // What most entries lack is left out, not written as null, false or [].
        if let Some(share) = change.similarity {
            entry["similarity"] = Value::from(share);
        }
        if binary {
            entry["binary"] = Value::Bool(true);
        }
        if let Some(mode) = change.mode_change() {
            entry["mode"] = Value::from(mode);
        }
        if !reviewed.is_empty() {
            entry["symbols"] = Value::from(reviewed.iter().map(symbol_json).collect::<Vec<_>>());
        }
        let cost =
            if full { tokens::count(&line).max(tokens::count(&entry.to_string())) } else { tokens::count(&line) };
        if end > start && list_tokens + cost > list_budget {
            break;
        }
        list_tokens += cost;
        list.push_str(&line);
        files.push(entry);
        end += 1;
    }
    let list_cut = end < changes.len();
    if start > 0 || list_cut {
        face.push_str(&format!("(files {}–{end} of {})\n", start + 1, changes.len()));
    }
    let list_at = face.len()..face.len() + list.len();
    face.push_str(&list);
    if start == 0 && !review.tests.is_empty() {
        let shown: Vec<String> =
            review.tests.iter().take(TESTS_SHOWN).map(|(path, names)| format!("{path} ({names})")).collect();
        let more = review.tests.len().saturating_sub(TESTS_SHOWN);
        face.push_str(&format!(
            "tests naming changed symbols: {}{}\n",
            shown.join(", "),
            if more > 0 { format!(", +{more} more") } else { String::new() }
        ));
    }
    if let Some(note) = &review.note {
        face.push_str(&format!("({note})\n"));
    }
    let mut used = tokens::count(&face) + 80;
    let mut shown_text = String::new();
    let mut cut_at = None;
    let mut next_calls = Vec::new();
    let mut next_cursor = None;
    let mut list_cut_by = None;
    // Small diffs come inline (one call is cheaper than a call per file); a review of more
    // names the calls that show each symbol's diff and each file's.
    let diff_bytes: usize = rendered.iter().map(|(text, _, _)| text.len()).sum();
    let inline = !list_cut && start == 0 && diff_bytes <= INLINE_DIFF_BYTES;
    if list_cut {
        // The list filled the page: the diffs come with a narrower target or one file at a time.
        let cursor = DiffCursor {
            directory: true,
            against: sides.code,
            proposed: false,
            old: listing_hash,
            new: [0; 8],
            tag: sides.tag(&label),
            next: end + 1,
        }
        .encode();
        face.push_str(&format!(
            "── list cut after file {end} of {} by {}; {} more file(s) not listed [{}]\n",
            changes.len(),
            budget.limit_name(Cap::Tokens),
            changes.len() - end,
            crate::reasons::joined(&budget.codes(Some(Cap::Tokens)))
        ));
        list_cut_by = Some(Cap::Tokens);
        if let Some(narrower) = narrower_targets(&changes[end..], dir) {
            face.push_str(&format!("── narrower targets: {narrower}\n"));
        }
        next_calls.push(continuation(request, &[("cursor", Value::from(cursor.as_str()))], &["offset"]));
        next_cursor = Some(cursor);
    } else if inline {
        for (index, (text, _, _)) in rendered.iter().enumerate().skip(start) {
            let (shown, by) = budget.take_more(text, &mut used, face.len());
            face.push_str(shown);
            shown_text.push_str(shown);
            if by.is_some() {
                cut_at = Some((index, by));
                break;
            }
        }
    }
    if !inline && !changes.is_empty() {
        let against = request.against.to_string();
        face.push_str(&format!(
            "── a symbol's diff: read {{\"against\":\"{against}\",\"mode\":\"diff_preview\",\"path\":\"<file>\",\"target\":\"<symbol>\"}}; a file's: \"target\":\"<file>\"\n"
        ));
        // The riskiest symbols' diffs first, then the first file's.
        let riskiest = changes[start..end]
            .iter()
            .zip(&symbols[start..end])
            .flat_map(|(change, reviewed)| reviewed.iter().map(move |symbol| (change, symbol)))
            .filter(|(_, symbol)| symbol.rank() <= 2);
        let mut calls: Vec<(u8, NextCall)> = riskiest
            .map(|(change, symbol)| {
                let target =
                    if change.new.is_some() { &change.path } else { change.old_path.as_ref().unwrap_or(&change.path) };
                (symbol.rank(), symbol_diff_call(&against, target, &symbol.change.name))
            })
            .collect();
        calls.sort_by_key(|(rank, _)| *rank);
        next_calls.extend(calls.into_iter().map(|(_, call)| call).take(SYMBOL_CALLS_SHOWN));
        if next_calls.len() < SYMBOL_CALLS_SHOWN + 1
            && let Some(change) = changes.get(start)
        {
            next_calls.push(NextCall::new(
                "read",
                json!({"mode": "diff_preview", "target": change.path, "against": against}),
            ));
        }
    }
    // Every diff shown whole names its file and counts: the list would say it twice.
    // (A list of plain modifications only: the diffs do not tell untracked from added, nor a
    // mode; and without symbols, which the diffs do not name with their uses.)
    let all_modified = changes.iter().all(|change| change.status == "M" && change.mode.is_none()) && symbol_count == 0;
    if start == 0 && !list_cut && cut_at.is_none() && !shown_text.is_empty() && all_modified {
        face.replace_range(list_at, "");
    }
    let cut_by = list_cut_by.or(cut_at.and_then(|(_, by)| by));
    if let Some((index, by)) = cut_at {
        face.push_str(&format!(
            "── diffs cut in {} by {}; {} more file(s) not shown [{}]\n",
            changes[index].path,
            budget.limit_name(by.unwrap_or(Cap::Tokens)),
            changes.len() - index - 1,
            crate::reasons::joined(&budget.codes(by))
        ));
        for change in changes[index..].iter().take(3) {
            next_calls.push(NextCall::new(
                "read",
                json!({"mode": "diff_preview", "target": change.path, "against": request.against.to_string()}),
            ));
        }
    }
    budget.note_clamp(&mut face, cut_by);
    for call in &next_calls {
        face.push_str(&next_line(call));
    }
    let mut outcome = answer(face, &label, (&budget, cut_by), next_calls, next_cursor, request);
    // The diffs this page shows, as shown.
    outcome.content = Some(shown_text);
    let detail = &mut outcome.detail;
    detail.insert("files".into(), Value::from(files));
    if start > 0 || list_cut {
        detail.insert("files_total".into(), Value::from(changes.len()));
    }
    detail.insert("added".into(), Value::from(total_added));
    detail.insert("removed".into(), Value::from(total_removed));
    if let Some(branch) = repository.branch() {
        detail.insert("branch".into(), Value::from(branch));
    }
    Ok(outcome)
}

/// The answer of a directory preview stopped early (cancelled by the client, or at the call's
/// time budget): the changed files found among the first `compared` of `total`, as many as the
/// token ceiling holds, marked as cut (`DIFF_TRUNCATED`), with the same call as the next one.
fn stopped_listing(
    workspace: &Workspace,
    request: &DiffRequest,
    sides: &DiffSides,
    label: &str,
    mut changes: Vec<Change>,
    (compared, total): (usize, u64),
    stopped: Stopped,
) -> Outcome {
    changes.sort_by(|a, b| a.path.cmp(&b.path));
    let budget = Budget::new(workspace, request);
    let again = continuation(request, &[], &[]);
    let mut face = format!(
        "diff_preview · {label} · {} vs {} · {} after comparing {compared} of {total} files · {} changed so far\n",
        sides.new_label(),
        sides.old_label,
        stopped.words(),
        changes.len()
    );
    let footer = format!(
        "── {}: the list above is partial and shows no diffs [{}]\n",
        stopped.words(),
        ReasonCode::DiffTruncated
    );
    let room = budget.tokens.saturating_sub(tokens::count(&face) + tokens::count(&footer) + LIST_FOOTER_TOKENS);
    let mut used = 0;
    for change in &changes {
        let line = format!("{}  {}\n", change.status, display_name(change));
        used += tokens::count(&line);
        if used > room {
            break;
        }
        face.push_str(&line);
    }
    face.push_str(&footer);
    face.push_str(&next_line(&again));
    let mut outcome = answer(face, label, (&budget, None), vec![again], None, request);
    outcome.act.truncated = true;
    outcome.act.reason_codes.push(ReasonCode::DiffTruncated);
    let (key, value) = stopped.detail();
    outcome.detail.insert(key.into(), value);
    outcome
}

/// What a cut list's footer and continuation cost, kept free when the list is laid out.
const LIST_FOOTER_TOKENS: usize = 250;

/// A directory's diffs up to this size come inline, after the list.
const INLINE_DIFF_BYTES: usize = 1600;

/// How many test files the review names, and how many symbol diffs it offers as next calls.
const TESTS_SHOWN: usize = 6;
const SYMBOL_CALLS_SHOWN: usize = 3;

/// At most this many files of a symbol's uses are named on its row, and lines of each.
const USE_FILES_SHOWN: usize = 4;
const USE_LINES_SHOWN: usize = 4;

/// At most this many names on one grouped row of a file's symbols.
const NAMES_PER_ROW: usize = 8;

/// The symbol diff of `name` in `path` against `against`.
fn symbol_diff_call(against: &str, path: &str, name: &str) -> NextCall {
    NextCall::new("read", json!({"mode": "diff_preview", "against": against, "path": path, "target": name}))
}

/// A file's changed symbols under its list line: each one with uses left in the tree on a row
/// of its own with them, the others grouped by how they changed.
fn symbol_rows(symbols: &[crate::workspace::review::Reviewed]) -> String {
    use loupe_syntax::changes::ChangeKind;
    let mut rows = String::new();
    let shown_name = |symbol: &crate::workspace::review::Reviewed| match (&symbol.change.from, &symbol.moved_from_file)
    {
        (Some(_), Some(file)) => format!("{} ← {file}", symbol.change.name),
        (Some(from), None) => format!("{} ← {from}", symbol.change.name),
        _ => symbol.change.name.clone(),
    };
    // Grouped by change, moves from another file by that file (`moved from a.py: f, g`).
    type Group<'a> = (ChangeKind, Option<&'a str>);
    let mut grouped: Vec<(Group<'_>, Vec<String>)> = Vec::new();
    for symbol in symbols {
        match &symbol.refs {
            Some(refs) if refs.resolved() > 0 => {
                // Grouped by file: `pkg/use.py:1,5`; those matched by name alone counted after.
                let mut files: Vec<(&str, Vec<String>)> = Vec::new();
                for (path, line, _) in
                    refs.sites.iter().filter(|(_, _, confidence)| *confidence != Confidence::NameOnly)
                {
                    match files.last_mut() {
                        Some((last, lines)) if last == path => lines.push(line.to_string()),
                        _ => files.push((path, vec![line.to_string()])),
                    }
                }
                let rest = files.len().saturating_sub(USE_FILES_SHOWN);
                // At most `USE_LINES_SHOWN` lines per file: `src/app.py:493,740,772,803 +11`.
                let sites: Vec<String> = files
                    .iter()
                    .take(USE_FILES_SHOWN)
                    .map(|(path, lines)| {
                        let more = lines.len().saturating_sub(USE_LINES_SHOWN);
                        let shown = lines[..lines.len().min(USE_LINES_SHOWN)].join(",");
                        if more > 0 { format!("{path}:{shown} +{more}") } else { format!("{path}:{shown}") }
                    })
                    .collect();
                let name_only = refs.sites.len() - refs.resolved();
                rows.push_str(&format!(
                    "   {} {} · {}{} use(s): {}{}{}\n",
                    symbol.change.change.as_str(),
                    shown_name(symbol),
                    refs.resolved(),
                    if refs.more { "+" } else { "" },
                    sites.join(", "),
                    if rest > 0 { format!(", +{rest} file(s)") } else { String::new() },
                    if name_only > 0 { format!(" (+{name_only} by name only)") } else { String::new() },
                ));
            }
            _ => {
                let key = (symbol.change.change, symbol.moved_from_file.as_deref());
                let name = if key.1.is_some() { symbol.change.name.clone() } else { shown_name(symbol) };
                match grouped.iter_mut().find(|(group, _)| *group == key) {
                    Some((_, names)) => names.push(name),
                    None => grouped.push((key, vec![name])),
                }
            }
        }
    }
    for ((kind, from_file), names) in grouped {
        let more = names.len().saturating_sub(NAMES_PER_ROW);
        let names: Vec<String> = names.into_iter().take(NAMES_PER_ROW).collect();
        rows.push_str(&format!(
            "   {}{}: {}{}\n",
            kind.as_str(),
            from_file.map(|file| format!(" from {file}")).unwrap_or_default(),
            names.join(", "),
            if more > 0 { format!(" +{more}") } else { String::new() }
        ));
    }
    rows
}

/// A changed symbol in `meta.files` (`full`).
fn symbol_json(symbol: &crate::workspace::review::Reviewed) -> Value {
    let change = &symbol.change;
    let mut entry = json!({
        "change": change.change.as_str(), "name": change.name, "kind": change.kind.as_str(),
        "line": change.new.or(change.old).map(|span| span.start_line), "public": change.public,
    });
    if let Some(from) = &change.from {
        entry["from"] = Value::from(from.as_str());
    }
    if let Some(file) = &symbol.moved_from_file {
        entry["from_file"] = Value::from(file.as_str());
    }
    if let Some(refs) = &symbol.refs {
        entry["uses"] = Value::from(
            refs.sites
                .iter()
                .map(|(path, line, confidence)| json!([path, line, confidence.as_str()]))
                .collect::<Vec<_>>(),
        );
        if refs.more {
            entry["uses_more"] = Value::Bool(true);
        }
    }
    entry
}

/// How many entries set the list's column width (a page never shows more than a few thousand).
const LIST_WIDTH_SAMPLE: usize = 4096;

/// The directories just below `dir` that hold the most of the files not listed, with their
/// counts: a narrower target that may fit in one answer.
fn narrower_targets(rest: &[Change], dir: &str) -> Option<String> {
    let prefix_len = if dir.is_empty() { 0 } else { dir.len() + 1 };
    let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for change in rest {
        let below = &change.path[prefix_len.min(change.path.len())..];
        if let Some((first, _)) = below.split_once('/') {
            *counts.entry(&change.path[..prefix_len + first.len()]).or_default() += 1;
        }
    }
    let mut ranked: Vec<(&str, usize)> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let shown: Vec<String> =
        ranked.iter().take(5).map(|(path, count)| format!("{} ({count})", crate::errors::quoted(path))).collect();
    (!shown.is_empty()).then(|| shown.join(", "))
}

/// The unified diff of one change, with its counts; binary content is named, not shown. The
/// sides start at lines `first_lines` of their files (a symbol's lines; else 1).
fn render_change(change: &Change, context: usize, first_lines: (usize, usize)) -> (String, usize, usize) {
    let (text, added, removed, _) = render_change_kept(change, context, first_lines, &|_, _| true);
    (text, added, removed)
}

/// `render_change` with only the hunks `keep` accepts (see `loupe_git::unified_diff_kept`), and
/// how many it left out.
fn render_change_kept(
    change: &Change,
    context: usize,
    first_lines: (usize, usize),
    keep: &dyn Fn(&[usize], &[usize]) -> bool,
) -> (String, usize, usize, usize) {
    let old_label = match (&change.old, &change.old_path) {
        (None, _) => "/dev/null".to_owned(),
        (Some(_), Some(old_path)) => format!("a/{old_path}"),
        (Some(_), None) => format!("a/{}", change.path),
    };
    let new_label = if change.new.is_some() { format!("b/{}", change.path) } else { "/dev/null".to_owned() };
    if let Some(note) = &change.note {
        return (format!("--- {old_label}\n+++ {new_label}\n{note}\n"), 0, 0, 0);
    }
    let binary = [&change.old, &change.new].iter().any(|side| side.as_deref().is_some_and(text::looks_binary));
    if binary {
        if change.old == change.new {
            return (String::new(), 0, 0, 0);
        }
        return (format!("--- {old_label}\n+++ {new_label}\nBinary files differ\n"), 0, 0, 0);
    }
    let decode = |bytes: &Option<Vec<u8>>| {
        bytes.as_deref().and_then(|bytes| text::decode(bytes).ok()).map(|d| d.text).unwrap_or_default()
    };
    let diff = loupe_git::unified_diff_kept(
        &decode(&change.old),
        &decode(&change.new),
        (&old_label, &new_label),
        context,
        first_lines,
        keep,
    );
    let mut text = diff.text;
    if text.is_empty() && change.old_path.is_some() {
        text = format!("--- {old_label}\n+++ {new_label}\n(renamed, content unchanged)\n");
    }
    (text, diff.added, diff.removed, diff.left_out)
}

/// Whether `text` reads as a symbol name (`make_response`, `Flask.make_response`,
/// `Config::load`) rather than a path: identifiers joined by `.`, `::` or `/`.
fn is_symbol_name(text: &str) -> bool {
    let parts: Vec<&str> = text.split(['.', '/']).flat_map(|part| part.split("::")).collect();
    parts.iter().all(|part| {
        part.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
            && part.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$')
    })
}

/// One symbol's lines on each side of a diff, where the sides' files start them, and how the
/// symbol changed.
struct SymbolCut {
    old: Option<Vec<u8>>,
    new: Option<Vec<u8>>,
    first_lines: (usize, usize),
    /// A type's members with a body, on each side (their diffs are their own).
    members: (Vec<Lines>, Vec<Lines>),
    state: &'static str,
}

/// Cuts both sides of a file's diff to the definition `symbol` names (found as `read` mode
/// `symbol` finds it: `name`, `Type.method`, `Type::method`).
fn cut_to_symbol(
    path: &str,
    symbol: &str,
    old: Option<&[u8]>,
    new: Option<&[u8]>,
    request: &DiffRequest,
) -> Result<SymbolCut, ToolError> {
    let file_diff = || continuation(request, &[("target", Value::from(path))], &["path", "cursor", "offset"]);
    let Some(lang) = loupe_syntax::Lang::from_path(path) else {
        return Err(ToolError::invalid_args(
            format!("`{}` is not in a language loupe reads symbols of", crate::errors::quoted(path)),
            "diff the whole file: drop `path` and name the file in `target`",
        )
        .with_next_call(file_diff()));
    };
    let (container, name) = crate::workspace::symbols::split_target(symbol);
    let find = |bytes: Option<&[u8]>| -> Option<SymbolSide> {
        let text = text::decode(bytes?).ok()?.text;
        let definitions = loupe_syntax::parse_with(lang, &text, loupe_syntax::Extract::Definitions).definitions;
        let mut found: Vec<&loupe_syntax::Definition> = definitions
            .iter()
            .filter(|definition| {
                definition.name == name
                    && crate::workspace::symbols::container_matches(definition.container.as_deref(), container)
            })
            .collect();
        if found.iter().any(|definition| definition.kind != loupe_syntax::SymbolKind::Impl) {
            found.retain(|definition| definition.kind != loupe_syntax::SymbolKind::Impl);
        }
        let definition = found.first()?;
        let span = definition.span;
        let lines: String =
            text.split_inclusive('\n').skip(span.start_line - 1).take(span.end_line + 1 - span.start_line).collect();
        // A type's members with a body have diffs of their own (the review names them).
        let members: Vec<Lines> = if loupe_syntax::changes::is_function(definition.kind) {
            Vec::new()
        } else {
            definitions
                .iter()
                .filter(|member| {
                    member.depth == definition.depth + 1
                        && member.body.is_some()
                        && span.start_line <= member.span.start_line
                        && member.span.end_line <= span.end_line
                })
                .map(|member| (member.span.start_line, member.span.end_line))
                .collect()
        };
        Some(SymbolSide {
            text: lines.into_bytes(),
            first: span.start_line,
            signature: definition.signature.clone(),
            members,
        })
    };
    let (old, new) = (find(old), find(new));
    let state = match (&old, &new) {
        (None, None) => {
            return Err(ToolError::new(
                ErrorCode::SymbolNotFound,
                format!(
                    "no definition of `{}` in `{}` on either side",
                    crate::errors::quoted(symbol),
                    crate::errors::quoted(path)
                ),
                "check the name against the file's outline, or diff the whole file",
            )
            .with_next_call(file_diff()));
        }
        (None, Some(_)) => "added",
        (Some(_), None) => "removed",
        (Some(old), Some(new)) if old.text == new.text => "unchanged",
        (Some(old), Some(new)) if old.signature != new.signature => "signature changed",
        _ => "body changed",
    };
    let first = |side: &Option<SymbolSide>| side.as_ref().map_or(1, |side| side.first);
    let members = |side: &Option<SymbolSide>| side.as_ref().map(|side| side.members.clone()).unwrap_or_default();
    Ok(SymbolCut {
        first_lines: (first(&old), first(&new)),
        members: (members(&old), members(&new)),
        old: old.map(|side| side.text),
        new: new.map(|side| side.text),
        state,
    })
}

/// Lines `start..=end` of a file.
type Lines = (usize, usize);

/// A symbol's definition on one side: its lines, where they start, its signature, and (a type)
/// its members' lines.
struct SymbolSide {
    text: Vec<u8>,
    first: usize,
    signature: String,
    members: Vec<Lines>,
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

/// A diff_preview answer for `target`: what both kinds (a file, a directory) share.
/// A cut diff is `DIFF_TRUNCATED`, and `PREVIEW_DEGRADED` too when a server ceiling (not the
/// caller's own cap) cut it; a caller's cap above a ceiling is `BUDGET_SOFT_LIMIT`. Either makes
/// the answer degraded, and `applied_limits` names the caps in force (§3.5).
fn answer(
    face: String,
    target: &str,
    (budget, cut_by): (&Budget, Option<Cap>),
    next_calls: Vec<NextCall>,
    next_cursor: Option<String>,
    request: &DiffRequest,
) -> Outcome {
    let mut outcome = Outcome::success("read", Some("diff_preview".into()), Some(target.to_owned()), Face::text(face))
        .with_metadata(request.metadata);
    outcome.location = Some(Location { file: target.to_owned(), line: None, end_line: None });
    let codes = budget.codes(cut_by);
    outcome.act.truncated = cut_by.is_some();
    outcome.act.preview_degraded = codes.iter().any(|code| *code != ReasonCode::DiffTruncated);
    outcome.act.next_calls = next_calls;
    outcome.act.next_cursor = next_cursor;
    outcome.act.reason_codes = codes;
    outcome.detail.insert("applied_limits".into(), Value::Object(budget.applied()));
    if let Some(cap) = cut_by {
        outcome.detail.insert("truncated_by".into(), Value::from(budget.limit_key(cap)));
    }
    outcome.detail.insert("against".into(), Value::from(request.against.to_string()));
    outcome.detail.insert("context_lines".into(), Value::from(request.context));
    outcome
}

/// What to read instead when there is no git baseline: the file itself, or a directory's outline.
/// (Issued with the refusal, so the session's gate lets it through.)
fn without_git(workspace: &Workspace, request: &DiffRequest) -> NextCall {
    let directory = workspace
        .root()
        .resolve(&request.target)
        .ok()
        .and_then(|resolved| resolved.real)
        .is_some_and(|real| real.is_dir());
    let mode = if directory { "outline" } else { "file" };
    NextCall::new("read", json!({"mode": mode, "target": request.target}))
}

/// Which cap of a diff cut it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cap {
    Chars,
    Tokens,
}

/// The caps on the diff text: characters and tokens, each the caller's (at most the server's
/// ceiling) or the ceiling itself.
struct Budget {
    chars: usize,
    tokens: usize,
    /// The caller's own cap binds (it is at or under the ceiling).
    chars_from_caller: bool,
    tokens_from_caller: bool,
    /// The caller asked above a ceiling and got the ceiling.
    clamped: bool,
}

impl Budget {
    fn new(workspace: &Workspace, request: &DiffRequest) -> Budget {
        let config = workspace.config();
        let within = |asked: Option<usize>, ceiling: usize| asked.is_some_and(|asked| asked <= ceiling);
        Budget {
            chars: request.max_chars.map_or(config.max_preview_chars, |chars| chars.min(config.max_preview_chars)),
            tokens: request
                .max_tokens
                .map_or(config.max_response_tokens, |tokens| tokens.min(config.max_response_tokens)),
            chars_from_caller: within(request.max_chars, config.max_preview_chars),
            tokens_from_caller: within(request.max_tokens, config.max_response_tokens),
            clamped: request.max_chars.is_some_and(|chars| chars > config.max_preview_chars)
                || request.max_tokens.is_some_and(|tokens| tokens > config.max_response_tokens),
        }
    }

    /// The name of a cap, as `applied_limits` and the cut line name it.
    fn limit_key(&self, cap: Cap) -> &'static str {
        match cap {
            Cap::Chars => "max_preview_chars",
            Cap::Tokens if self.tokens_from_caller => "max_tokens",
            Cap::Tokens => "max_response_tokens",
        }
    }

    /// `name=value` of a cap, for a cut line.
    fn limit_name(&self, cap: Cap) -> String {
        let value = if cap == Cap::Chars { self.chars } else { self.tokens };
        format!("{}={value}", self.limit_key(cap))
    }

    /// Every cap in force, by name (`meta.applied_limits`).
    fn applied(&self) -> Map<String, Value> {
        let mut applied = Map::new();
        applied.insert(self.limit_key(Cap::Chars).into(), Value::from(self.chars));
        applied.insert(self.limit_key(Cap::Tokens).into(), Value::from(self.tokens));
        applied
    }

    /// The reason codes of an answer cut by `cut_by` (or not cut).
    fn codes(&self, cut_by: Option<Cap>) -> Vec<ReasonCode> {
        let mut codes = Vec::new();
        if self.clamped {
            codes.push(ReasonCode::BudgetSoftLimit);
        }
        if let Some(cap) = cut_by {
            let from_caller = if cap == Cap::Chars { self.chars_from_caller } else { self.tokens_from_caller };
            if !from_caller {
                codes.push(ReasonCode::PreviewDegraded);
            }
            codes.push(ReasonCode::DiffTruncated);
        }
        codes
    }

    /// An answer that was not cut still says when a cap was clamped to a ceiling.
    fn note_clamp(&self, face: &mut String, cut_by: Option<Cap>) {
        if self.clamped && cut_by.is_none() {
            face.push_str(&format!(
                "── asked above a server ceiling, clamped to {} / {} [BUDGET_SOFT_LIMIT]\n",
                self.limit_name(Cap::Chars),
                self.limit_name(Cap::Tokens)
            ));
        }
    }

    /// Whole lines of a single diff after `overhead_tokens`; when not even its first line fits,
    /// that line is cut at a UTF-8 boundary and marked, so a page always advances.
    fn take(&self, text: &str, overhead_tokens: usize) -> Page {
        let mut used = overhead_tokens;
        let (shown, by) = self.take_more(text, &mut used, 0);
        if !shown.is_empty() || text.is_empty() {
            let lines = shown.lines().count();
            return Page { face: shown.to_owned(), text: shown.to_owned(), lines, cut: by.is_some(), by };
        }
        let line = text.split_inclusive('\n').next().unwrap_or_default();
        let body = line.trim_end_matches('\n');
        let room = self.chars.saturating_sub(LINE_CUT_MARKER_CHARS);
        let mut end = body.char_indices().nth(room).map_or(body.len(), |(index, _)| index);
        let tokens_left = self.tokens.saturating_sub(overhead_tokens + LINE_CUT_MARKER_CHARS);
        let mut kept = text::truncate_at_char_boundary(body, end);
        while !kept.is_empty() && tokens::count(kept) > tokens_left {
            end = kept.len() / 2;
            kept = text::truncate_at_char_boundary(body, end);
        }
        let face = format!("{kept}…[line cut: {} more bytes]\n", body.len() - kept.len());
        // Like a read, a page continues when lines follow; the cut line's rest is counted in its marker.
        Page { face, text: kept.to_owned(), lines: 1, cut: text.len() > line.len(), by }
    }

    /// Whole lines of `text` that still fit after `used` tokens and `face_chars` characters.
    fn take_more<'a>(&self, text: &'a str, used: &mut usize, face_chars: usize) -> (&'a str, Option<Cap>) {
        let chars_left = self.chars.saturating_sub(face_chars);
        let tokens_left = self.tokens.saturating_sub(*used);
        let mut end = 0;
        let mut chars = 0;
        let mut by = None;
        for line in text.split_inclusive('\n') {
            let count = line.chars().count();
            if chars + count > chars_left {
                by = Some(Cap::Chars);
                break;
            }
            chars += count;
            end += line.len();
        }
        let mut shown = &text[..end];
        let mut count = tokens::count(shown);
        while count > tokens_left && !shown.is_empty() {
            by = Some(Cap::Tokens);
            let keep = shown[..shown.len() - 1].rfind('\n').map_or(0, |at| at + 1);
            shown = &shown[..keep];
            count = tokens::count(shown);
        }
        *used += count;
        (shown, by.filter(|_| shown.len() < text.len()))
    }
}

/// One page of a single diff: what the face shows, what `text` carries (the same lines, a cut
/// line without its marker), how many diff lines it covers, and whether more follows.
struct Page {
    face: String,
    text: String,
    lines: usize,
    cut: bool,
    /// The cap that cut the page (for a line cut mid-line, the one that cut it).
    by: Option<Cap>,
}

/// Room for the marker of a line cut mid-line.
const LINE_CUT_MARKER_CHARS: usize = 40;

/// Where a cut diff continues (§3.5): for one file, the hashes of both sides and the next line
/// of the diff; for a directory, the hash of its list of changed files and the next entry.
/// Anything else than the diff it was issued for is refused, never silently misapplied.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DiffCursor {
    directory: bool,
    against: u8,
    /// The new side is a proposed text the server keeps (see `ProposedTexts`).
    proposed: bool,
    old: [u8; 8],
    new: [u8; 8],
    tag: [u8; 4],
    /// The 1-based diff line (file) or list entry (directory) the next page starts at.
    next: usize,
}

const DIFF_CURSOR_VERSION: u8 = 0xD1;
const DIFF_CURSOR_BYTES: usize = 1 + 1 + 8 + 8 + 4 + 4;

impl DiffCursor {
    fn encode(&self) -> String {
        use base64::Engine as _;
        let mut bytes = Vec::with_capacity(DIFF_CURSOR_BYTES);
        bytes.push(DIFF_CURSOR_VERSION);
        bytes.push(u8::from(self.directory) << 4 | (self.against & 3) << 2 | u8::from(self.proposed));
        bytes.extend_from_slice(&self.old);
        bytes.extend_from_slice(&self.new);
        bytes.extend_from_slice(&self.tag);
        bytes.extend_from_slice(&u32::try_from(self.next).unwrap_or(u32::MAX).to_be_bytes());
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    }

    fn decode(text: &str) -> Option<DiffCursor> {
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text.trim()).ok()?;
        if bytes.len() != DIFF_CURSOR_BYTES || bytes[0] != DIFF_CURSOR_VERSION || bytes[1] & !0b1_1101 != 0 {
            return None;
        }
        let next = u32::from_be_bytes(bytes[22..26].try_into().ok()?) as usize;
        (next >= 1).then(|| DiffCursor {
            directory: bytes[1] & 0b1_0000 != 0,
            against: (bytes[1] >> 2) & 3,
            proposed: bytes[1] & 1 != 0,
            old: bytes[2..10].try_into().unwrap_or_default(),
            new: bytes[10..18].try_into().unwrap_or_default(),
            tag: bytes[18..22].try_into().unwrap_or_default(),
            next,
        })
    }

    fn is_for(&self, target: &str, sides: &DiffSides) -> bool {
        self.tag == sides.tag(target) && self.against == sides.code
    }
}

fn decode_cursor(request: &DiffRequest, text: &str) -> Result<DiffCursor, ToolError> {
    DiffCursor::decode(text).ok_or_else(|| {
        ToolError::invalid_args(
            "`cursor` is not a diff_preview cursor issued by loupe",
            "pass the `next_cursor` value exactly as returned, or drop `cursor` to start over",
        )
        .with_next_call(continuation(request, &[], &["cursor"]))
    })
}

/// A keyword's cursor code; a revision is 3 (`Sides::of`), its text in the cursor's tag.
fn against_code(against: Against) -> u8 {
    match against {
        Against::Head => 0,
        Against::Index => 1,
        Against::Worktree => 2,
    }
}

/// The first 8 bytes of a side's BLAKE3 hash (those of `ContentHash`); all zero for a side
/// that does not exist.
fn hash8(bytes: Option<&[u8]>) -> [u8; 8] {
    let mut hash = [0; 8];
    if let Some(bytes) = bytes {
        hash.copy_from_slice(&blake3::hash(bytes).as_bytes()[..8]);
    }
    hash
}

fn path_tag(path: &str) -> [u8; 4] {
    let mut tag = [0; 4];
    tag.copy_from_slice(&blake3::hash(path.as_bytes()).as_bytes()[..4]);
    tag
}

/// The call that shows a proposed text's diff against the file on disk from diff line `next`
/// on, by a cursor: the text is kept like a cut preview's, so the call does not carry it (an
/// `edit` dry run whose reply cut a diff offers this).
pub(crate) fn proposal_continuation(
    workspace: &Workspace,
    path: &str,
    old: Option<&[u8]>,
    new: &[u8],
    next: usize,
) -> NextCall {
    let new_hash = hash8(Some(new));
    workspace.proposed.keep(new_hash, &std::sync::Arc::new(new.to_vec()));
    let cursor = DiffCursor {
        directory: false,
        against: against_code(Against::Worktree),
        proposed: true,
        old: hash8(old),
        new: new_hash,
        tag: path_tag(path),
        next,
    };
    NextCall::new(
        "read",
        json!({"mode": "diff_preview", "target": path, "against": "WORKTREE", "cursor": cursor.encode()}),
    )
}

/// What a cut file diff's page line, footer and cursor continuation cost at most, kept free
/// when the page is laid out.
const FILE_FOOTER_TOKENS: usize = 120;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_cursor_round_trips_and_refuses_garbage() {
        let cursor = DiffCursor {
            directory: false,
            against: 2,
            proposed: true,
            old: hash8(Some(b"a")),
            new: hash8(None),
            tag: path_tag("src/a.rs"),
            next: 45,
        };
        let encoded = cursor.encode();
        assert_eq!(encoded.len(), 35);
        assert_eq!(DiffCursor::decode(&encoded), Some(cursor.clone()));
        assert!(cursor.is_for("src/a.rs", &DiffSides::keyword(Against::Worktree)));
        assert!(!cursor.is_for("src/a.rs", &DiffSides::keyword(Against::Head)));
        assert_eq!(DiffCursor::decode("garbage"), None);
        assert_eq!(
            DiffCursor::decode(
                &crate::read::cursor::ReadCursor::new(
                    &loupe_core::ContentHash::of(b"x"),
                    &loupe_core::RepoPath::normalize("a").unwrap(),
                    2,
                    0
                )
                .encode()
            ),
            None
        );
    }
}
