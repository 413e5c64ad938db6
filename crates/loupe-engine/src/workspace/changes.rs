//! What changed between two sides of the repository (§5): a baseline (`HEAD`, the git index,
//! a commit) and a commit or the working tree, file by file, with both versions' bytes and
//! renames paired. `read diff_preview` renders it; `analyze impact` of a range walks from it.
//! Baselines come from `loupe-git` (in-process); worktree bytes through `loupe-vfs` like every
//! read, compared byte for byte with the blobs (no clean/smudge filters).

use std::collections::{BTreeMap, BTreeSet};

use loupe_core::ToolError;
use loupe_git::{Baseline, Repository};
use serde_json::{Map, Value};

use crate::params::Against;
use crate::work::{Stopped, Work};
use crate::workspace::Workspace;
use crate::workspace::git::{git_error, named, unresolved};

/// The two sides of a comparison, resolved once per call.
pub(crate) struct Sides {
    /// The old side, where a file's bytes are looked up.
    pub(crate) baseline: Baseline,
    /// How the answer names the old side: `HEAD`, `INDEX`, `v1.2 (1a2b3c4)`, `merge base
    /// 1a2b3c4 of main (5e6f7a8) and HEAD (9b0c1d2)`.
    pub(crate) old_label: String,
    /// The new side when the revision names one (`A..B`, `A...B`), with its label; else the
    /// working tree.
    pub(crate) new_commit: Option<(loupe_git::ObjectId, String)>,
}

impl Sides {
    /// The sides of a revision `spec`, given in the argument `key` of a `tool` call with
    /// `original`'s arguments (a refusal offers that call with the nearest names).
    pub(crate) fn revision(
        repository: &Repository,
        spec: &str,
        call: (&str, &Map<String, Value>, &str),
    ) -> Result<Sides, ToolError> {
        let resolved = repository.resolve(spec).map_err(|error| unresolved(repository, call, spec, error))?;
        let named = |side: &loupe_git::Side| named(&side.name, &repository.short(side.commit));
        let old_label = match &resolved.merge_base_of {
            Some([left, right]) => {
                format!("merge base {} of {} and {}", repository.short(resolved.old.commit), named(left), named(right))
            }
            None => named(&resolved.old),
        };
        Ok(Sides {
            baseline: Baseline::Commit(resolved.old.commit),
            old_label,
            new_commit: resolved.new.as_ref().map(|side| (side.commit, named(side))),
        })
    }

    pub(crate) fn keyword(keyword: Against) -> Sides {
        Sides {
            baseline: if keyword == Against::Index { Baseline::Index } else { Baseline::Head },
            old_label: keyword.to_string(),
            new_commit: None,
        }
    }

    pub(crate) fn new_label(&self) -> &str {
        self.new_commit.as_ref().map_or("WORKTREE", |(_, label)| label.as_str())
    }
}

/// One changed file of a directory preview.
#[derive(Debug)]
pub(crate) struct Change {
    pub(crate) status: &'static str,
    pub(crate) path: String,
    pub(crate) old_path: Option<String>,
    pub(crate) old: Option<Vec<u8>>,
    pub(crate) new: Option<Vec<u8>>,
    /// Why the change is named and not diffed (a side over `max_file_bytes`, whose bytes were
    /// never read: `old`/`new` then hold nothing for it).
    pub(crate) note: Option<String>,
    /// A rename's share of lines kept, in percent.
    pub(crate) similarity: Option<u8>,
    /// Whether the file is executable on each side, when that changed (`100644 → 100755`).
    pub(crate) mode: Option<(bool, bool)>,
}

impl Change {
    /// `mode 100644 → 100755` when the executable bit changed.
    pub(crate) fn mode_change(&self) -> Option<String> {
        let octal = |executable: bool| if executable { "100755" } else { "100644" };
        self.mode.map(|(old, new)| format!("mode {} → {}", octal(old), octal(new)))
    }
}

/// A blob's bytes for a diff; a blob over `max_file_bytes` (its size read from the object's
/// header) gives no bytes and a note that says why it is not diffed.
pub(crate) fn blob_side(blob: loupe_git::Blob, baseline: impl std::fmt::Display, note: &mut Option<String>) -> Vec<u8> {
    match blob {
        loupe_git::Blob::Bytes(bytes) => bytes,
        loupe_git::Blob::Large { size } => {
            *note = Some(large_note(&format!("in {baseline}"), size));
            Vec::new()
        }
    }
}

pub(crate) fn large_note(where_: &str, size: u64) -> String {
    format!("(large file: {} {where_}, over max_file_bytes; not diffed)", loupe_core::text::human_bytes(size))
}

/// The files a revision range (`main...`, `v1..v2`, `HEAD~3`: `against` as §5 takes it, given
/// in `original`'s argument `key`) changed under the root, each with the bytes of both sides
/// (none for a side over `max_file_bytes`), and how the answer names the two sides: what
/// `analyze impact` of a range starts from. A walk stopped early gives what it found.
pub(crate) fn range_changes(
    workspace: &Workspace,
    spec: &str,
    (tool, original, key): (&str, &Map<String, Value>, &str),
    work: &Work,
) -> Result<(Vec<Change>, String), ToolError> {
    let repository = crate::workspace::git::open_repository(workspace).map_err(git_error)?;
    let sides = Sides::revision(&repository, spec, (tool, original, key))?;
    let label = format!("{} vs {}", sides.new_label(), sides.old_label);
    let mut changes = match collect_changes(workspace, &repository, &sides, "", work)? {
        Collected::Done { changes, .. } => changes,
        Collected::Stopped { found, .. } => found,
    };
    for change in &mut changes {
        if change.note.is_some() {
            (change.old, change.new) = (None, None);
        }
    }
    Ok((changes, label))
}

/// What comparing a directory found: every changed file (renames paired, sorted by path),
/// how many tracked files the exclusions hid, how many files were compared; or, stopped early,
/// the changes found among the first files compared.
pub(crate) enum Collected {
    Done { changes: Vec<Change>, hidden: usize, compared_total: u64 },
    Stopped { found: Vec<Change>, compared: (usize, u64), stopped: Stopped },
}

/// Compares every file under `dir` on both sides (`sides`: a baseline, and a commit or the
/// working tree), reading each changed file's two versions.
pub(crate) fn collect_changes(
    workspace: &Workspace,
    repository: &Repository,
    sides: &Sides,
    dir: &str,
    work: &Work,
) -> Result<Collected, ToolError> {
    let baseline = sides.baseline;
    let loupe_git::Tracked { files: tracked, executables: old_executables, hidden } =
        repository.tracked_under(baseline, dir).map_err(git_error)?;
    let in_index = if baseline == Baseline::Index {
        tracked.clone()
    } else {
        repository.tracked(Baseline::Index, dir).map_err(git_error)?
    };
    let prefix = if dir.is_empty() { String::new() } else { format!("{dir}/") };
    // Each file on disk with its size and modification time (none walked when two commits are
    // compared: the working tree is not a side).
    let on_disk: BTreeMap<String, (u64, u64)> = match sides.new_commit {
        Some(_) => BTreeMap::new(),
        None => workspace
            .root()
            .walk(workspace.walk_options())
            .into_iter()
            .map(|entry| (entry.path.as_str().to_owned(), (entry.size, entry.mtime_ns)))
            .filter(|(path, _)| path.starts_with(&prefix))
            .collect(),
    };
    let limit = workspace.config().max_file_bytes;
    let read_worktree = |path: &str| -> OnDisk {
        let Ok(resolved) = workspace.root().resolve(path) else { return OnDisk::Missing };
        match workspace.root().read(&resolved, limit) {
            Ok(file) => OnDisk::Bytes(file.bytes, file.executable),
            Err(loupe_vfs::VfsError::TooLarge { size, .. }) => OnDisk::Large(size),
            Err(_) => OnDisk::Missing,
        }
    };
    let mut added: Vec<Change> = Vec::new();
    let mut deleted: Vec<Change> = Vec::new();
    let mut changes: Vec<Change> = Vec::new();
    // The new side: a commit's files (`A..B`, `A...B`), or the files on disk.
    // The executable bit on each side: the commits' modes; on disk the file's own bit, where
    // files carry one (on Windows git itself does not look at it).
    let (new_files, new_executables) = match &sides.new_commit {
        Some((commit, _)) => {
            let new = repository.tracked_under(Baseline::Commit(*commit), dir).map_err(git_error)?;
            (Some(new.files), Some(new.executables))
        }
        None => (None, None),
    };
    let worktree_modes = cfg!(unix);
    let all: BTreeSet<&String> = match &new_files {
        Some(new_files) => tracked.keys().chain(new_files.keys()).collect(),
        None => tracked.keys().chain(on_disk.keys()).collect(),
    };
    // Two steps per file a client hears of: comparing every file, then diffing the changed ones
    // (that total is known once the comparison is done). A cancelled call stops in either loop
    // and answers with the changed files found so far.
    let compared_total = all.len() as u64;
    for (compared, path) in all.into_iter().enumerate() {
        if let Some(stopped) = work.stopped() {
            let found = added.into_iter().chain(deleted).chain(changes).collect();
            return Ok(Collected::Stopped { found, compared: (compared, compared_total), stopped });
        }
        work.report(compared as u64 + 1, Some(compared_total), || {
            format!("diff_preview: comparing file {} of {compared_total}", compared + 1)
        });
        let change = |status, old, new, note| Change {
            status,
            path: path.clone(),
            old_path: None,
            old,
            new,
            note,
            similarity: None,
            mode: None,
        };
        let was_executable = old_executables.contains(path);
        // A file whose executable bit alone changed: named, nothing to diff.
        let mode_only = |now: bool| Change {
            mode: Some((was_executable, now)),
            ..change("M", Some(Vec::new()), Some(Vec::new()), Some("(mode change only)".to_owned()))
        };
        if let Some(new_files) = &new_files {
            let mut note = None;
            let mut side = |id: &loupe_git::ObjectId, label: &str| -> Result<Vec<u8>, ToolError> {
                Ok(blob_side(repository.object(*id, limit).map_err(git_error)?, label, &mut note))
            };
            let new_label = sides.new_label();
            let now_executable = new_executables.as_ref().is_some_and(|set| set.contains(path));
            match (tracked.get(path), new_files.get(path)) {
                (Some(old), Some(new)) if old == new => {
                    if was_executable != now_executable {
                        changes.push(mode_only(now_executable));
                    }
                }
                (Some(old), Some(new)) => {
                    let (old, new) = (side(old, &sides.old_label)?, side(new, new_label)?);
                    let mode = (was_executable != now_executable).then_some((was_executable, now_executable));
                    changes.push(Change { mode, ..change("M", Some(old), Some(new), note) });
                }
                (Some(old), None) => {
                    let old = side(old, &sides.old_label)?;
                    deleted.push(change("D", Some(old), None, note));
                }
                (None, Some(new)) => {
                    let new = side(new, new_label)?;
                    added.push(change("A", None, Some(new), note));
                }
                (None, None) => {}
            }
            continue;
        }
        let worktree = if on_disk.contains_key(path) {
            read_worktree(path)
        } else {
            tracked_on_disk(workspace, path, &read_worktree)
        };
        let mut note = None;
        match (tracked.get(path), worktree) {
            (Some(id), OnDisk::Bytes(bytes, executable)) => {
                let mode = (worktree_modes && executable != was_executable).then_some((was_executable, executable));
                if loupe_git::blob_id(&bytes) != *id {
                    let old = blob_side(repository.object(*id, limit).map_err(git_error)?, &sides.old_label, &mut note);
                    changes.push(Change { mode, ..change("M", Some(old), Some(bytes), note) });
                } else if mode.is_some() {
                    changes.push(mode_only(executable));
                }
            }
            // Over the read limit on disk: unchanged when git's index vouches for it by size
            // and mtime and holds the baseline's blob; else named, never read whole.
            (Some(id), OnDisk::Large(size)) => {
                let mtime = on_disk.get(path).map_or(0, |(_, mtime)| *mtime);
                if repository.index_blob_if_unchanged(path, size, mtime) != Some(*id) {
                    changes.push(change("M", Some(Vec::new()), Some(Vec::new()), Some(large_note("on disk", size))));
                }
            }
            (Some(id), OnDisk::Missing) => {
                let old = blob_side(repository.object(*id, limit).map_err(git_error)?, &sides.old_label, &mut note);
                deleted.push(change("D", Some(old), None, note));
            }
            (None, OnDisk::Bytes(bytes, _)) => {
                let status = if in_index.contains_key(path) { "A" } else { "?" };
                added.push(change(status, None, Some(bytes), None));
            }
            (None, OnDisk::Large(size)) => {
                let status = if in_index.contains_key(path) { "A" } else { "?" };
                added.push(change(status, None, Some(Vec::new()), Some(large_note("on disk", size))));
            }
            (None, OnDisk::Missing) => {}
        }
    }
    pair_renames(&mut added, &mut deleted, &mut changes);
    changes.extend(added);
    changes.extend(deleted);
    changes.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Collected::Done { changes, hidden, compared_total })
}

/// A tracked path the walk did not list (ignored after being committed): read it directly.
fn tracked_on_disk(workspace: &Workspace, path: &str, read: &dyn Fn(&str) -> OnDisk) -> OnDisk {
    let on_disk =
        workspace.root().resolve(path).ok().and_then(|resolved| resolved.real).is_some_and(|real| real.is_file());
    if on_disk { read(path) } else { OnDisk::Missing }
}

/// A worktree file as a directory preview reads it: its bytes, only its size when it is over
/// `max_file_bytes` (never read whole), or nothing when it is not there to read.
enum OnDisk {
    /// Its bytes, and whether it is executable.
    Bytes(Vec<u8>, bool),
    Large(u64),
    Missing,
}

/// Pairs a deleted file with a new one of the same or similar content (at least half of the
/// lines kept) as a rename, git's default threshold.
fn pair_renames(added: &mut Vec<Change>, deleted: &mut Vec<Change>, changes: &mut Vec<Change>) {
    let mut index = 0;
    while index < deleted.len() {
        // A side that was not read (too large) pairs with nothing.
        if deleted[index].note.is_some() {
            index += 1;
            continue;
        }
        let old = deleted[index].old.clone().unwrap_or_default();
        let best = added
            .iter()
            .enumerate()
            .filter(|(_, candidate)| candidate.note.is_none())
            .map(|(at, candidate)| (at, similarity(&old, candidate.new.as_deref().unwrap_or_default())))
            .filter(|(_, score)| *score >= 0.5)
            .max_by(|a, b| a.1.total_cmp(&b.1));
        match best {
            Some((at, score)) => {
                let new = added.remove(at);
                let gone = deleted.remove(index);
                changes.push(Change {
                    status: "R",
                    path: new.path,
                    old_path: Some(gone.path),
                    old: gone.old,
                    new: new.new,
                    note: None,
                    similarity: Some((score * 100.0).floor() as u8),
                    mode: None,
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
