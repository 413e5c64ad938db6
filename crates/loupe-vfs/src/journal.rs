//! The edit journal: every write into the repository is a transaction recorded here first,
//! so a call applies whole or not at all, survives a crash, and can be undone and redone.
//!
//! Layout under the journal directory (in the index dir, outside the repository):
//! `lock` (an OS file lock held while a transaction runs), one directory per edit transaction
//! (`0000000042/`: `manifest.json` and `data`, the old and new bytes of every file, one after
//! the other), `op/` for an undo or redo in flight, and `quarantine/` for records that were
//! found damaged. A manifest is written `pending` before the first file is touched and
//! rewritten `committed` after the last; a failure in between restores every file already
//! written, and opening the journal after a crash rolls a `pending` transaction back (a
//! committed undo or redo is completed) and removes the temporary files it left beside its
//! targets. The last [`KEEP_TRANSACTIONS`] edit transactions are kept.
//!
//! Writers are serialised per root, not per journal: besides the journal's own lock, every
//! apply, undo, redo and recovery holds an OS lock (`flock`) on the root directory itself, so
//! two servers on one root with different index dirs never interleave, and nothing is written
//! into the repository to achieve it.
//!
//! Every plan carries the hash each file must still have; `apply` re-checks them all, under
//! the locks, before anything is written, and each file once more right before it is
//! replaced (a process that does not take the lock, such as an editor, may have changed it
//! meanwhile): the first mismatch rolls back what was written and answers the stale file.
//!
//! A record is data from disk, so it is checked before it is trusted: every manifest carries
//! a checksum, every length is bounded by the data file's real size, and every byte string
//! read back must have the hash the manifest gives it. A record that fails any check is
//! moved to `quarantine/` with a warning, and start-up goes on with edits enabled.
//!
//! The journal never touches a repository file by path: every read, re-check, write, removal
//! and temp-file cleanup goes through `apply.rs` ([`Target`], `Root::current_bytes`,
//! `replace_file`, `remove_file`, `remove_temporaries`), beneath the root by directory handle.
//! Only the journal's own files (in the index dir) are opened by path.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use loupe_core::{ContentHash, RepoPath};
use serde::{Deserialize, Serialize};

use crate::apply::{Target, is_temporary_name, sync_dir, write_atomically};
use crate::{Root, VfsError};

/// How many edit transactions the journal keeps for undo.
pub const KEEP_TRANSACTIONS: usize = 100;

const MANIFEST: &str = "manifest.json";
const DATA_FILE: &str = "data";
const OPERATION_DIR: &str = "op";
const LOCK_FILE: &str = "lock";
const LAST_SEQ_FILE: &str = "last_seq";
const QUARANTINE_DIR: &str = "quarantine";
/// Record directories are named by their sequence number in ten digits.
const SEQ_DIGITS: usize = 10;
const MAX_SEQ: u64 = 9_999_999_999;
/// A manifest lists paths and hashes; anything larger is not one loupe wrote.
const MAX_MANIFEST_BYTES: u64 = 64 << 20;
/// How long an apply waits for another writer of the same root before giving up.
const LOCK_WAIT: Duration = Duration::from_secs(30);

/// One file of a plan: what it must hold now and what it will hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: RepoPath,
    /// The hash the file must still have; `None`: the file must not exist.
    pub expected: Option<ContentHash>,
    /// The new bytes; `None` deletes the file.
    pub new_bytes: Option<Vec<u8>>,
}

/// An edit as a value: the files it changes, each with its precondition.
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct Plan {
    pub changes: Vec<FileChange>,
    /// Create missing parent directories of new files.
    pub create_dirs: bool,
}

/// A file whose content is not what the plan (or an undo) expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stale {
    pub path: RepoPath,
    pub expected: Option<ContentHash>,
    pub actual: Option<ContentHash>,
    /// The bytes there now, for showing the region that differs.
    pub actual_bytes: Option<Vec<u8>>,
}

#[derive(Debug)]
pub enum ApplyError {
    /// Files changed since the plan was made (or since the transaction, for undo).
    Stale(Vec<Stale>),
    /// A path could not be written (outside, excluded, symlink, missing directory, IO).
    Vfs(VfsError),
    /// A plan named the same file twice.
    DuplicatePath(RepoPath),
    /// Nothing left to undo or redo.
    NothingToDo { command: &'static str },
    /// `transaction_id` names no transaction the journal keeps (or one in the wrong state).
    UnknownTransaction { id: String, reason: String },
    /// The transaction failed for `cause`, and rolling back what it had written left these
    /// files as they are (each with why): changed since the write, or no longer reachable
    /// beneath the root (a directory swapped for a link). Nothing else of it remains.
    RollbackIncomplete { cause: Box<ApplyError>, left: Vec<(RepoPath, String)> },
}

impl std::fmt::Display for ApplyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApplyError::Stale(stale) => write!(f, "{} file(s) changed since they were read", stale.len()),
            ApplyError::Vfs(error) => write!(f, "{error}"),
            ApplyError::DuplicatePath(path) => write!(f, "the plan names `{path}` twice"),
            ApplyError::NothingToDo { command } => write!(f, "nothing to {command}"),
            ApplyError::UnknownTransaction { id, reason } => write!(f, "transaction `{id}`: {reason}"),
            ApplyError::RollbackIncomplete { cause, left } => {
                write!(f, "{cause}; {} file(s) it wrote could not be rolled back", left.len())
            }
        }
    }
}

impl std::error::Error for ApplyError {}

impl From<VfsError> for ApplyError {
    fn from(error: VfsError) -> ApplyError {
        ApplyError::Vfs(error)
    }
}

impl ApplyError {
    fn into_vfs(self, dir: &Path) -> VfsError {
        match self {
            ApplyError::Vfs(error) => error,
            other => VfsError::Io { path: dir.to_path_buf(), source: std::io::Error::other(other.to_string()) },
        }
    }
}

/// One file as a transaction changed it.
#[derive(Debug, Clone)]
pub struct AppliedFile {
    pub path: RepoPath,
    pub old_hash: Option<ContentHash>,
    pub new_hash: Option<ContentHash>,
}

/// A transaction that was written (or undone, or redone).
#[derive(Debug, Clone)]
pub struct Applied {
    pub transaction_id: String,
    pub files: Vec<AppliedFile>,
}

/// A transaction as `history` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct TransactionSummary {
    pub id: String,
    /// Seconds since the Unix epoch when it was applied.
    pub time: u64,
    pub undone: bool,
    pub files: Vec<HistoryFile>,
}

#[derive(Debug, Clone, Serialize)]
pub struct HistoryFile {
    pub path: String,
    /// `modified`, `created` or `deleted`.
    pub change: &'static str,
}

/// What opening the journal found and repaired.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Interrupted transactions whose files were restored.
    pub rolled_back: Vec<String>,
    /// Interrupted undo/redo operations that had finished writing and were completed.
    pub completed: Vec<String>,
    /// Files an interrupted transaction left in a third state (neither old nor new), or that
    /// could not be restored: kept as they are.
    pub left_alone: Vec<String>,
    /// Damaged records moved to `quarantine/` (their names there), with why.
    pub quarantined: Vec<String>,
    /// Temporary files an interrupted write left in the repository, removed (root-relative).
    pub temp_files_removed: Vec<String>,
    /// Read-only: interrupted transactions found and left for the next writable start.
    pub pending_left: Vec<String>,
}

/// Test-only fault injection, enabled from the environment only with `LOUPE_TEST_HOOKS=1`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hooks {
    /// Fail with an IO error after this many files were written (rollback path).
    pub fail_after_writes: Option<usize>,
    /// Abort the process after this many files were written (crash recovery path).
    pub abort_after_writes: Option<usize>,
    /// Called with the number of files written so far and the next target, right before
    /// that target is re-checked and replaced: another process racing the write, on cue.
    pub before_write: Option<fn(usize, &Path)>,
    /// How long to wait for another writer's lock (30 s when `None`).
    pub lock_wait: Option<Duration>,
}

impl Hooks {
    /// The hooks `LOUPE_TEST_*` ask for, with `LOUPE_TEST_HOOKS=1`: only in a build with the
    /// `test-hooks` feature (tests enable it; a release build has none).
    #[cfg(not(feature = "test-hooks"))]
    fn from_env() -> Hooks {
        Hooks::default()
    }

    #[cfg(feature = "test-hooks")]
    fn from_env() -> Hooks {
        if std::env::var("LOUPE_TEST_HOOKS").as_deref() != Ok("1") {
            return Hooks::default();
        }
        let number = |key: &str| std::env::var(key).ok().and_then(|value| value.parse().ok());
        Hooks {
            fail_after_writes: number("LOUPE_TEST_FAIL_AFTER_WRITES"),
            abort_after_writes: number("LOUPE_TEST_ABORT_AFTER_WRITES"),
            before_write: None,
            lock_wait: number("LOUPE_TEST_LOCK_WAIT_MS").map(|millis: usize| Duration::from_millis(millis as u64)),
        }
    }
}

/// The journal of one workspace root.
#[derive(Debug)]
pub struct Journal {
    root: Root,
    dir: PathBuf,
    in_process: Mutex<()>,
    hooks: Hooks,
    /// Opened for a read-only server: never writes, not even to recover.
    read_only: bool,
    /// The highest sequence number used while this process runs, so ids never repeat even
    /// when the journal directory is deleted under it.
    last_seq: AtomicU64,
    /// Start-up could not take the locks in time: the next writer recovers first.
    recovery_due: AtomicBool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Manifest {
    pub(crate) id: String,
    pub(crate) seq: u64,
    /// `edit`, `undo` or `redo`.
    pub(crate) kind: String,
    /// For undo/redo: the edit transaction it reverses or repeats.
    pub(crate) of: Option<String>,
    /// `pending` or `committed`.
    pub(crate) state: String,
    pub(crate) undone: bool,
    pub(crate) time: u64,
    pub(crate) files: Vec<ManifestFile>,
    /// The directories the transaction created for its files (`create_dirs`), outermost
    /// first: undoing or rolling it back removes those still empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) created_dirs: Vec<String>,
    /// The hash of the manifest serialised without this field: a damaged record is never
    /// mistaken for an instruction. Records written before it existed have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) checksum: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ManifestFile {
    pub(crate) path: String,
    pub(crate) old: Option<String>,
    pub(crate) new: Option<String>,
    pub(crate) old_mode: Option<u32>,
    pub(crate) new_mode: Option<u32>,
    /// Where the old and new bytes are in the record's `data` file: (offset, length).
    pub(crate) old_at: Option<(u64, u64)>,
    pub(crate) new_at: Option<(u64, u64)>,
}

/// One file write of a transaction, resolved to its real location.
struct Write {
    path: RepoPath,
    target: Target,
    old: Option<Vec<u8>>,
    new: Option<Vec<u8>>,
    old_mode: Option<u32>,
    new_mode: Option<u32>,
}

/// Every lock a writer holds: this process's, the root's (other servers on the same root,
/// whatever their index dir) and the journal's (other processes on the same journal).
/// Closing the files releases the OS locks.
struct Held<'a> {
    _in_process: MutexGuard<'a, ()>,
    root: Option<fs::File>,
    _journal: fs::File,
}

/// What scanning the journal directory found.
#[derive(Default)]
struct Scan {
    /// Readable, consistent records (numbered ones oldest first, then `op/`).
    good: Vec<(PathBuf, Manifest)>,
    /// Records whose manifest is unreadable, inconsistent or fails its checksum.
    damaged: Vec<(PathBuf, String)>,
    /// Directories without a manifest: a crash before the record was complete, when nothing
    /// had been written into the repository yet.
    incomplete: Vec<PathBuf>,
}

/// Opens `journal/lock` for `flock`: never through a link, never blocking, and anything but a
/// regular file planted under its name (a directory, a FIFO) is cleared (`clear_way`) and the
/// file made again, as the index does with its own files: a planted `journal/lock` directory
/// disabled every edit.
fn open_lock_file(path: &Path) -> std::io::Result<fs::File> {
    crate::clear_way(path)?;
    crate::open_own(path, crate::OwnAccess::Write)
}

impl Journal {
    /// Opens (creating) the journal in `dir` and repairs an interrupted transaction.
    /// When another writer holds the root for longer than the lock wait (a hung server),
    /// the journal opens all the same and recovers under the lock of the first edit.
    pub fn open(root: Root, dir: PathBuf) -> Result<(Journal, Recovery), VfsError> {
        fs::create_dir_all(&dir).map_err(|source| VfsError::Io { path: dir.clone(), source })?;
        let journal = Journal::new(root, dir, false);
        let recovered = journal.acquire().map(|held| journal.recover(&held));
        match recovered {
            Ok(recovery) => Ok((journal, recovery)),
            Err(error) if is_lock_timeout(&error) => {
                tracing::warn!("{error}; the edit journal is recovered by the first edit instead");
                journal.recovery_due.store(true, Ordering::SeqCst);
                Ok((journal, Recovery::default()))
            }
            Err(error) => Err(error.into_vfs(&journal.dir)),
        }
    }

    /// Opens the journal for a read-only server: nothing is written, in the repository or
    /// the journal. An interrupted transaction is not rolled back but named (with a warning)
    /// in [`Recovery::pending_left`], for the next writable start; `apply`, `undo` and `redo`
    /// are refused.
    pub fn open_read_only(root: Root, dir: PathBuf) -> Result<(Journal, Recovery), VfsError> {
        let journal = Journal::new(root, dir, true);
        let mut recovery = Recovery::default();
        let scan = journal.scan();
        for (dir, manifest) in &scan.good {
            if manifest.state == "pending" || manifest.kind != "edit" {
                tracing::warn!(
                    "read-only: the interrupted transaction `{}` ({}) was left as it is; a writable start of loupe will recover it",
                    manifest.id,
                    dir.display()
                );
                recovery.pending_left.push(manifest.id.clone());
            }
        }
        for (dir, reason) in &scan.damaged {
            tracing::warn!("read-only: the journal record {} is damaged ({reason}); left as it is", dir.display());
        }
        Ok((journal, recovery))
    }

    fn new(root: Root, dir: PathBuf, read_only: bool) -> Journal {
        Journal {
            root,
            dir,
            in_process: Mutex::new(()),
            hooks: Hooks::from_env(),
            read_only,
            last_seq: AtomicU64::new(0),
            recovery_due: AtomicBool::new(false),
        }
    }

    /// Replaces the fault-injection hooks (tests).
    #[cfg(feature = "test-hooks")]
    pub fn set_hooks(&mut self, hooks: Hooks) {
        self.hooks = hooks;
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Applies a plan whole, or changes nothing. Every file's precondition is checked under
    /// the locks first; all stale files are reported together.
    pub fn apply(&self, plan: Plan) -> Result<Applied, ApplyError> {
        self.refuse_if_read_only()?;
        let _held = self.lock()?;
        let mut seen = HashSet::new();
        for change in &plan.changes {
            if !seen.insert(change.path.clone()) {
                return Err(ApplyError::DuplicatePath(change.path.clone()));
            }
        }
        let mut writes = Vec::with_capacity(plan.changes.len());
        let mut stale = Vec::new();
        for change in plan.changes {
            let target = self.root.write_target(&change.path, false).or_else(|error| match error {
                VfsError::MissingDirectory { .. } if plan.create_dirs && change.new_bytes.is_some() => {
                    // Directories are created only once every precondition holds (below).
                    Ok(Target::pending(change.path.clone()))
                }
                other => Err(other),
            })?;
            let old = if target.is_pending() { None } else { self.root.current_bytes(&target)? };
            let actual = old.as_deref().map(ContentHash::of);
            if actual != change.expected {
                stale.push(Stale {
                    path: change.path.clone(),
                    expected: change.expected.clone(),
                    actual,
                    actual_bytes: old.clone(),
                });
                continue;
            }
            let old_mode = if target.is_pending() { None } else { self.root.mode_of(&target) };
            writes.push(Write {
                path: change.path,
                target,
                new_mode: if change.new_bytes.is_some() { old_mode } else { None },
                old_mode,
                old,
                new: change.new_bytes,
            });
        }
        if !stale.is_empty() {
            return Err(ApplyError::Stale(stale));
        }
        let mut created_dirs: Vec<RepoPath> = Vec::new();
        for write in &mut writes {
            if write.target.is_pending() {
                let missing = self.root.missing_directories(&write.path);
                match self.root.write_target(&write.path, true) {
                    Ok(target) => write.target = target,
                    Err(error) => {
                        created_dirs.extend(missing);
                        self.remove_created_dirs(&created_dirs);
                        return Err(error.into());
                    }
                }
                for dir in missing {
                    if !created_dirs.contains(&dir) {
                        created_dirs.push(dir);
                    }
                }
            }
        }
        let seq = self.next_seq()?;
        let id = transaction_id(seq);
        let tx_dir = self.dir.join(format!("{seq:010}"));
        let mut manifest = Manifest {
            id: id.clone(),
            seq,
            kind: "edit".into(),
            of: None,
            state: "pending".into(),
            undone: false,
            time: now(),
            files: Vec::new(),
            created_dirs: created_dirs.iter().map(ToString::to_string).collect(),
            checksum: None,
        };
        if let Err(error) = self.run(&tx_dir, &mut manifest, &writes) {
            self.remove_created_dirs(&created_dirs);
            return Err(error);
        }
        // A new edit ends every redo chain.
        for (dir, old) in self.transactions() {
            if old.undone {
                let _ = fs::remove_dir_all(dir);
            }
        }
        self.prune();
        Ok(applied(id, &writes))
    }

    /// Reverses the last edit transaction not yet undone (or `id`). Every file must still
    /// hold what the transaction wrote, unless `force`.
    pub fn undo(&self, id: Option<&str>, force: bool) -> Result<Applied, ApplyError> {
        self.refuse_if_read_only()?;
        let _held = self.lock()?;
        let transactions = self.transactions();
        let chosen = match id {
            Some(id) => transactions.iter().find(|(_, manifest)| manifest.id == id).ok_or_else(|| unknown(id))?,
            None => transactions
                .iter()
                .rev()
                .find(|(_, manifest)| !manifest.undone)
                .ok_or(ApplyError::NothingToDo { command: "undo" })?,
        };
        if chosen.1.undone {
            return Err(ApplyError::UnknownTransaction {
                id: chosen.1.id.clone(),
                reason: "it is already undone; redo it first".into(),
            });
        }
        self.replay(&chosen.0, &chosen.1, true, force)
    }

    /// Re-applies the most recently undone transaction (or `id`).
    pub fn redo(&self, id: Option<&str>, force: bool) -> Result<Applied, ApplyError> {
        self.refuse_if_read_only()?;
        let _held = self.lock()?;
        let transactions = self.transactions();
        let chosen = match id {
            Some(id) => transactions.iter().find(|(_, manifest)| manifest.id == id).ok_or_else(|| unknown(id))?,
            None => transactions
                .iter()
                .find(|(_, manifest)| manifest.undone)
                .ok_or(ApplyError::NothingToDo { command: "redo" })?,
        };
        if !chosen.1.undone {
            return Err(ApplyError::UnknownTransaction {
                id: chosen.1.id.clone(),
                reason: "it is not undone, so there is nothing to redo".into(),
            });
        }
        self.replay(&chosen.0, &chosen.1, false, force)
    }

    /// The kept transactions, newest first, at most `limit`.
    pub fn history(&self, limit: usize) -> Vec<TransactionSummary> {
        // Manifests are replaced atomically, so reading them needs no lock; taking it would
        // create the journal directory, which a read-only server must not.
        let _held = if self.read_only { None } else { self.lock().ok() };
        self.transactions()
            .into_iter()
            .rev()
            .take(limit)
            .map(|(_, manifest)| TransactionSummary {
                id: manifest.id.clone(),
                time: manifest.time,
                undone: manifest.undone,
                files: manifest
                    .files
                    .iter()
                    .map(|file| HistoryFile {
                        path: file.path.clone(),
                        change: match (&file.old, &file.new) {
                            (None, _) => "created",
                            (_, None) => "deleted",
                            _ => "modified",
                        },
                    })
                    .collect(),
            })
            .collect()
    }

    fn refuse_if_read_only(&self) -> Result<(), ApplyError> {
        if !self.read_only {
            return Ok(());
        }
        Err(ApplyError::Vfs(VfsError::Io {
            path: self.dir.clone(),
            source: std::io::Error::new(
                std::io::ErrorKind::ReadOnlyFilesystem,
                "the journal was opened read-only (the server is read-only); restart loupe without `read_only` to change files",
            ),
        }))
    }

    /// Undo (`reverse`) or redo one transaction through an `op/` record.
    fn replay(&self, tx_dir: &Path, original: &Manifest, reverse: bool, force: bool) -> Result<Applied, ApplyError> {
        // The directories a file needs back are created before the checks: a refusal or a
        // failure removes them again (those still empty).
        let mut created = Vec::new();
        let result = self.replay_creating(tx_dir, original, reverse, force, &mut created);
        if result.is_err() {
            self.remove_created_dirs(&created);
        }
        result
    }

    fn replay_creating(
        &self,
        tx_dir: &Path,
        original: &Manifest,
        reverse: bool,
        force: bool,
        created: &mut Vec<RepoPath>,
    ) -> Result<Applied, ApplyError> {
        let mut writes = Vec::new();
        let mut stale = Vec::new();
        for file in &original.files {
            let path = RepoPath::normalize(&file.path).ok_or_else(|| unknown(&original.id))?;
            let (from, to, from_mode, to_mode) = if reverse {
                (&file.new, &file.old, file.new_mode, file.old_mode)
            } else {
                (&file.old, &file.new, file.old_mode, file.new_mode)
            };
            for dir in self.root.missing_directories(&path) {
                if !created.contains(&dir) {
                    created.push(dir);
                }
            }
            let target = self.root.write_target(&path, true)?;
            let current = self.root.current_bytes(&target)?;
            let actual = current.as_deref().map(ContentHash::of);
            let expected = from.as_deref().and_then(ContentHash::parse);
            if actual != expected && !force {
                stale.push(Stale { path, expected, actual, actual_bytes: current });
                continue;
            }
            let new = match to {
                Some(hash) => {
                    let at = if reverse { file.old_at } else { file.new_at };
                    match read_blob(tx_dir, at, hash) {
                        Ok(bytes) => Some(bytes),
                        Err(reason) => {
                            let name = self.quarantine(tx_dir, &reason);
                            return Err(ApplyError::Vfs(VfsError::Io {
                                path: tx_dir.to_path_buf(),
                                source: std::io::Error::other(format!(
                                    "the journal record of `{}` is damaged ({reason}) and was moved to {name}; it cannot be {}, nothing was written",
                                    original.id,
                                    if reverse { "undone" } else { "redone" }
                                )),
                            }));
                        }
                    }
                }
                None => None,
            };
            let old_mode = if current.is_some() { self.root.mode_of(&target) } else { from_mode };
            writes.push(Write { path, target, old: current, new, old_mode, new_mode: to_mode });
        }
        if !stale.is_empty() {
            return Err(ApplyError::Stale(stale));
        }
        let op_dir = self.dir.join(OPERATION_DIR);
        let _ = fs::remove_dir_all(&op_dir);
        let mut manifest = Manifest {
            id: original.id.clone(),
            seq: original.seq,
            kind: if reverse { "undo" } else { "redo" }.into(),
            of: Some(original.id.clone()),
            state: "pending".into(),
            undone: false,
            time: now(),
            files: Vec::new(),
            created_dirs: Vec::new(),
            checksum: None,
        };
        self.run(&op_dir, &mut manifest, &writes)?;
        self.finish_operation(&op_dir, &manifest)?;
        Ok(applied(original.id.clone(), &writes))
    }

    /// Records `writes` as pending in `tx_dir`, performs them, and marks them committed.
    /// Each file is re-checked right before it is replaced; a mismatch or a failure midway
    /// restores every file already written and removes the record.
    fn run(&self, tx_dir: &Path, manifest: &mut Manifest, writes: &[Write]) -> Result<(), ApplyError> {
        let io = |source| VfsError::Io { path: tx_dir.to_path_buf(), source };
        fs::create_dir_all(tx_dir).map_err(io)?;
        // Every old and new byte goes into one `data` file: one fsync for the whole record.
        let mut data = Blobs::create(tx_dir)?;
        for write in writes {
            let old_at = write.old.as_deref().map(|bytes| data.append(bytes)).transpose()?;
            let new_at = write.new.as_deref().map(|bytes| data.append(bytes)).transpose()?;
            manifest.files.push(ManifestFile {
                path: write.path.to_string(),
                old: write.old.as_deref().map(|bytes| ContentHash::of(bytes).to_string()),
                new: write.new.as_deref().map(|bytes| ContentHash::of(bytes).to_string()),
                old_mode: write.old_mode,
                new_mode: write.new_mode,
                old_at,
                new_at,
            });
        }
        data.sync()?;
        write_manifest(tx_dir, manifest)?;
        sync_dir(&self.dir);

        // Rolls back the first `done` writes; a file it must leave as it is (changed since, or
        // no longer reachable beneath the root) is named in the error, never only logged.
        let undo_written = |done: usize, cause: ApplyError| {
            let mut left = Vec::new();
            for written in writes[..done].iter().rev() {
                if let Err(reason) = restore(&self.root, written) {
                    left.push((written.path.clone(), reason));
                }
            }
            let _ = fs::remove_dir_all(tx_dir);
            left.reverse();
            if left.is_empty() { cause } else { ApplyError::RollbackIncomplete { cause: Box::new(cause), left } }
        };
        for (done, write) in writes.iter().enumerate() {
            if self.hooks.abort_after_writes == Some(done) {
                std::process::abort();
            }
            if let Some(hook) = self.hooks.before_write {
                hook(done, &self.root.canonical().join(write.path.as_str()));
            }
            // The last look before the rename: another process may have changed the file
            // since the check under the lock (it need not respect the lock).
            let now = match self.root.current_bytes(&write.target) {
                Ok(now) => now,
                Err(error) => return Err(undo_written(done, ApplyError::Vfs(error))),
            };
            if now.as_deref().map(ContentHash::of) != write.old.as_deref().map(ContentHash::of) {
                let stale = ApplyError::Stale(vec![Stale {
                    path: write.path.clone(),
                    expected: write.old.as_deref().map(ContentHash::of),
                    actual: now.as_deref().map(ContentHash::of),
                    actual_bytes: now,
                }]);
                return Err(undo_written(done, stale));
            }
            let result = if self.hooks.fail_after_writes == Some(done) {
                Err(VfsError::Io {
                    path: PathBuf::from(write.path.as_str()),
                    source: std::io::Error::other("injected failure"),
                })
            } else {
                match &write.new {
                    Some(bytes) => self.root.replace_file(&write.target, bytes, write.new_mode),
                    None => self.root.remove_file(&write.target),
                }
            };
            if let Err(error) = result {
                return Err(undo_written(done, ApplyError::Vfs(error)));
            }
        }
        manifest.state = "committed".into();
        write_manifest(tx_dir, manifest)?;
        Ok(())
    }

    /// A committed undo/redo: flip the original's `undone`, then drop the op record.
    fn finish_operation(&self, op_dir: &Path, operation: &Manifest) -> Result<(), ApplyError> {
        let undone = operation.kind == "undo";
        if let Some(of) = &operation.of
            && let Some((dir, mut original)) = self.transactions().into_iter().find(|(_, manifest)| &manifest.id == of)
        {
            if undone {
                self.remove_created_dirs(&dir_paths(&original));
            }
            original.undone = undone;
            write_manifest(&dir, &original)?;
        }
        let _ = fs::remove_dir_all(op_dir);
        sync_dir(&self.dir);
        Ok(())
    }

    /// Repairs what an interrupted process left, under the locks `held`.
    fn recover(&self, held: &Held<'_>) -> Recovery {
        let mut recovery = Recovery::default();
        let scan = self.scan();
        for dir in scan.incomplete {
            let _ = fs::remove_dir_all(dir);
        }
        for (dir, reason) in scan.damaged {
            recovery.quarantined.push(self.quarantine(&dir, &reason));
        }
        for (dir, manifest) in scan.good {
            // A crash while a manifest was being replaced leaves its temporary file here.
            remove_temp_files_in_record(&dir);
            if manifest.state == "committed" {
                if manifest.kind != "edit" {
                    let _ = self.finish_operation(&dir, &manifest);
                    recovery.completed.push(manifest.id.clone());
                }
                continue;
            }
            self.roll_back(&dir, &manifest, held.root.is_some(), &mut recovery);
        }
        sync_dir(&self.dir);
        recovery
    }

    /// Puts back every file of a pending record that already holds the new bytes, removes
    /// the temporary files its writes left, and drops the record. A record whose bytes are
    /// damaged is quarantined before anything is written: its files stay as they are.
    /// Temporary files are removed only while the root's lock is held (`root_locked`): without
    /// it another server of this root may be writing one right now.
    fn roll_back(&self, dir: &Path, manifest: &Manifest, root_locked: bool, recovery: &mut Recovery) {
        enum Step {
            Restore(Target, Vec<u8>, Option<u32>),
            Remove(Target),
        }
        let mut steps = Vec::new();
        // The directories the record's writes went to, with the bytes they were writing.
        let mut temp_dirs: BTreeMap<RepoPath, Vec<Vec<u8>>> = BTreeMap::new();
        let mut left_alone = Vec::new();
        for file in &manifest.files {
            // `scan` checked that every path normalises.
            let Some(path) = RepoPath::normalize(&file.path) else { continue };
            let Ok(target) = self.root.write_target(&path, false) else {
                left_alone.push(file.path.clone());
                continue;
            };
            let blobs = temp_dirs.entry(path.parent()).or_default();
            for (at, hash) in [(file.old_at, &file.old), (file.new_at, &file.new)] {
                if let Some(hash) = hash
                    && let Ok(bytes) = read_blob(dir, at, hash)
                {
                    blobs.push(bytes);
                }
            }
            // A FIFO or device put there since is refused, not read; it stays as found.
            let current = match self.root.current_bytes(&target) {
                Ok(current) => current,
                Err(error) => {
                    tracing::warn!("cannot read `{}` to roll back `{}`: {error}", file.path, manifest.id);
                    left_alone.push(file.path.clone());
                    continue;
                }
            };
            let actual = current.as_deref().map(|bytes| ContentHash::of(bytes).to_string());
            if actual == file.old {
                continue;
            }
            if actual != file.new {
                left_alone.push(file.path.clone());
                continue;
            }
            match &file.old {
                Some(hash) => match read_blob(dir, file.old_at, hash) {
                    Ok(bytes) => steps.push(Step::Restore(target, bytes, file.old_mode)),
                    Err(reason) => {
                        let name = self.quarantine(dir, &reason);
                        tracing::error!(
                            "cannot roll back the interrupted transaction `{}`: its record is damaged ({reason}); moved to {name}, its files were left as they are: {}",
                            manifest.id,
                            manifest.files.iter().map(|file| file.path.as_str()).collect::<Vec<_>>().join(", ")
                        );
                        recovery.quarantined.push(name);
                        recovery.left_alone.extend(manifest.files.iter().map(|file| file.path.clone()));
                        return;
                    }
                },
                None => steps.push(Step::Remove(target)),
            }
        }
        let mut failed = false;
        for step in steps {
            let (target, result) = match step {
                Step::Restore(target, bytes, mode) => {
                    let result = self.root.replace_file(&target, &bytes, mode);
                    (target, result)
                }
                Step::Remove(target) => {
                    let result = self.root.remove_file(&target);
                    (target, result)
                }
            };
            if let Err(error) = result {
                tracing::error!("cannot roll back `{}` of `{}`: {error}", target.path(), manifest.id);
                left_alone.push(target.path().to_string());
                failed = true;
            }
        }
        if root_locked {
            for (parent, blobs) in &temp_dirs {
                let longest = blobs.iter().map(Vec::len).max().unwrap_or(0) as u64;
                // Only a prefix of bytes the record was writing there: a user's file of a
                // similar name is kept.
                let removed = self
                    .root
                    .remove_temporaries(parent, longest, |bytes| blobs.iter().any(|blob| blob.starts_with(bytes)));
                for path in removed {
                    tracing::warn!("removed `{path}`, a temporary file an interrupted edit left");
                    recovery.temp_files_removed.push(path.to_string());
                }
            }
        }
        if !failed && left_alone.is_empty() {
            self.remove_created_dirs(&dir_paths(manifest));
        }
        recovery.left_alone.extend(left_alone);
        if failed {
            // Keep what is needed to finish by hand.
            recovery.quarantined.push(self.quarantine(dir, "a file could not be restored"));
        } else {
            let _ = fs::remove_dir_all(dir);
        }
        recovery.rolled_back.push(manifest.id.clone());
    }

    /// Removes the directories a transaction created (`created_dirs`, outermost first), deepest
    /// first, each only while it is empty.
    fn remove_created_dirs(&self, dirs: &[RepoPath]) {
        for dir in dirs.iter().rev() {
            self.root.remove_empty_directory(dir);
        }
    }

    /// Moves a damaged record out of the way, into `quarantine/`, and says so. Returns its
    /// name there.
    fn quarantine(&self, dir: &Path, reason: &str) -> String {
        let quarantine = self.dir.join(QUARANTINE_DIR);
        let name = dir.file_name().map_or_else(|| "record".into(), |name| name.to_string_lossy().into_owned());
        let mut destination = quarantine.join(format!("{name}-{}", now()));
        let mut counter = 1;
        while destination.exists() {
            destination = quarantine.join(format!("{name}-{}-{counter}", now()));
            counter += 1;
        }
        let shown = format!("{QUARANTINE_DIR}/{}", destination.file_name().unwrap_or_default().to_string_lossy());
        let moved = fs::create_dir_all(&quarantine).and_then(|()| fs::rename(dir, &destination));
        match moved {
            Ok(()) => tracing::warn!(
                "the journal record {} is damaged ({reason}); moved to {} for inspection",
                dir.display(),
                destination.display()
            ),
            Err(error) => {
                // It cannot stay where it is (it would be found damaged at every start).
                tracing::warn!(
                    "the journal record {} is damaged ({reason}) and cannot be moved to {} ({error}); removed",
                    dir.display(),
                    quarantine.display()
                );
                let _ = fs::remove_dir_all(dir);
            }
        }
        sync_dir(&self.dir);
        shown
    }

    /// Committed edit transactions, oldest first.
    fn transactions(&self) -> Vec<(PathBuf, Manifest)> {
        self.scan()
            .good
            .into_iter()
            .filter(|(_, manifest)| manifest.state == "committed" && manifest.kind == "edit")
            .collect()
    }

    /// Every record: numbered ones oldest first, then `op/`. Changes nothing.
    fn scan(&self) -> Scan {
        let mut scan = Scan::default();
        let Ok(entries) = fs::read_dir(&self.dir) else { return scan };
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.len() != SEQ_DIGITS || !name.bytes().all(|byte| byte.is_ascii_digit()) {
                continue;
            }
            match read_record(&entry.path(), Some(&name)) {
                Ok(Some(manifest)) => scan.good.push((entry.path(), manifest)),
                Ok(None) => scan.incomplete.push(entry.path()),
                Err(reason) => scan.damaged.push((entry.path(), reason)),
            }
        }
        scan.good.sort_by_key(|(_, manifest)| manifest.seq);
        let op_dir = self.dir.join(OPERATION_DIR);
        if op_dir.is_dir() {
            match read_record(&op_dir, None) {
                Ok(Some(manifest)) => scan.good.push((op_dir, manifest)),
                Ok(None) => scan.incomplete.push(op_dir),
                Err(reason) => scan.damaged.push((op_dir, reason)),
            }
        }
        scan
    }

    fn next_seq(&self) -> Result<u64, ApplyError> {
        let last = self.scan().good.iter().map(|(_, manifest)| manifest.seq).max().unwrap_or(0);
        let counter = self.dir.join(LAST_SEQ_FILE);
        let stored = fs::File::open(&counter)
            .ok()
            .and_then(|file| {
                let mut text = String::new();
                file.take(32).read_to_string(&mut text).ok()?;
                text.trim().parse::<u64>().ok()
            })
            .filter(|stored| *stored < MAX_SEQ)
            .unwrap_or(0);
        let next = last.max(stored).max(self.last_seq.load(Ordering::Relaxed)) + 1;
        if next > MAX_SEQ {
            return Err(ApplyError::Vfs(VfsError::Io {
                path: self.dir.clone(),
                source: std::io::Error::other(
                    "the journal has run out of transaction numbers; move the journal directory away",
                ),
            }));
        }
        fs::write(&counter, next.to_string()).map_err(|source| VfsError::Io { path: counter.clone(), source })?;
        self.last_seq.store(next, Ordering::Relaxed);
        Ok(next)
    }

    fn prune(&self) {
        let transactions = self.transactions();
        if transactions.len() > KEEP_TRANSACTIONS {
            for (dir, _) in &transactions[..transactions.len() - KEEP_TRANSACTIONS] {
                let _ = fs::remove_dir_all(dir);
            }
        }
    }

    /// Takes every lock, in the one order all processes use (this process's, the root's, the
    /// journal's), so two writers never wait on each other in a cycle. The journal directory
    /// is created again if it was deleted under a running server.
    fn lock(&self) -> Result<Held<'_>, ApplyError> {
        let held = self.acquire()?;
        if self.recovery_due.swap(false, Ordering::SeqCst) {
            let recovery = self.recover(&held);
            tracing::warn!(?recovery, "recovered the edit journal, which another writer had held at start-up");
        }
        Ok(held)
    }

    fn acquire(&self) -> Result<Held<'_>, ApplyError> {
        let in_process = self.in_process.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let root = self.lock_root()?;
        let path = self.dir.join(LOCK_FILE);
        let io = |source| ApplyError::Vfs(VfsError::Io { path: path.clone(), source });
        fs::create_dir_all(&self.dir).map_err(|source| VfsError::Io { path: self.dir.clone(), source })?;
        let file = open_lock_file(&path).map_err(io)?;
        wait_for_lock(&file, "the edit journal", self.hooks.lock_wait).map_err(io)?;
        Ok(Held { _in_process: in_process, root, _journal: file })
    }

    /// An exclusive `flock` on the root directory itself: every loupe writing this root
    /// takes it, whatever its index dir, and nothing is written into the repository for it.
    /// `None` when the file system does not support locks (then the journal lock and the
    /// re-check of each file before it is replaced are what is left).
    fn lock_root(&self) -> Result<Option<fs::File>, ApplyError> {
        let canonical = self.root.canonical();
        let io = |source| ApplyError::Vfs(VfsError::Io { path: canonical.to_path_buf(), source });
        let directory = self.root.root_lock_file().map_err(io)?;
        match wait_for_lock(&directory, "the workspace root", self.hooks.lock_wait) {
            Ok(()) => Ok(Some(directory)),
            Err(error) if lock_unsupported(&error) => {
                tracing::warn!(
                    "cannot lock the workspace root {} ({error}); two loupe servers on this root with different index dirs are not serialised",
                    canonical.display()
                );
                Ok(None)
            }
            Err(error) => Err(io(error)),
        }
    }
}

/// Waits, for at most [`LOCK_WAIT`], for an exclusive lock: a writer that never lets go
/// (a hung process) makes the next writer fail with a message, not hang.
fn wait_for_lock(file: &fs::File, what: &str, wait: Option<Duration>) -> std::io::Result<()> {
    let wait = wait.unwrap_or(LOCK_WAIT);
    let deadline = Instant::now() + wait;
    let mut pause = Duration::from_millis(1);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(fs::TryLockError::Error(error)) => return Err(error),
            Err(fs::TryLockError::WouldBlock) if Instant::now() >= deadline => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::WouldBlock,
                    format!(
                        "another loupe process has held the lock on {what} for {} ms; retry once it is done, or stop it",
                        wait.as_millis()
                    ),
                ));
            }
            Err(fs::TryLockError::WouldBlock) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
        }
    }
}

fn is_lock_timeout(error: &ApplyError) -> bool {
    matches!(error, ApplyError::Vfs(VfsError::Io { source, .. }) if source.kind() == std::io::ErrorKind::WouldBlock)
}

fn lock_unsupported(error: &std::io::Error) -> bool {
    if error.kind() == std::io::ErrorKind::Unsupported {
        return true;
    }
    #[cfg(target_os = "linux")]
    {
        use rustix::io::Errno;
        // No lock daemon (NFS), no `flock` (some FUSE file systems), or NFS's emulation,
        // which wants a descriptor open for writing, and a directory cannot be.
        Errno::from_io_error(error).is_some_and(|errno| [Errno::NOLCK, Errno::OPNOTSUPP, Errno::BADF].contains(&errno))
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// A record's own directory holds only what the journal wrote: a temporary file there is a
/// manifest replacement a crash interrupted.
fn remove_temp_files_in_record(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.filter_map(Result::ok) {
        if entry.file_name().to_str().is_some_and(is_temporary_name) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Transaction ids are `tx-<n>`: short, ordered, the same for the same history.
fn transaction_id(seq: u64) -> String {
    format!("tx-{seq}")
}

fn unknown(id: &str) -> ApplyError {
    ApplyError::UnknownTransaction {
        id: id.to_owned(),
        reason: format!("not in the journal (it keeps the last {KEEP_TRANSACTIONS} transactions)"),
    }
}

fn applied(id: String, writes: &[Write]) -> Applied {
    Applied {
        transaction_id: id,
        files: writes
            .iter()
            .map(|write| AppliedFile {
                path: write.path.clone(),
                old_hash: write.old.as_deref().map(ContentHash::of),
                new_hash: write.new.as_deref().map(ContentHash::of),
            })
            .collect(),
    }
}

/// Restoration of one file after a failed transaction, only while it still holds what the
/// transaction wrote: a change someone made since is never overwritten. `Err` says why the file
/// was left as it is.
fn restore(root: &Root, write: &Write) -> Result<(), String> {
    // Read beneath the root by handle; a symlink, FIFO or device put there since is refused
    // (never opened, never replaced).
    let left = |reason: String| {
        tracing::error!("`{}` left as it is after a failed edit: {reason}", write.path);
        Err(reason)
    };
    let current = match root.current_bytes(&write.target) {
        Ok(current) => current,
        Err(error) => return left(format!("cannot read it to restore it ({error})")),
    };
    if current.as_deref().map(ContentHash::of) != write.new.as_deref().map(ContentHash::of) {
        return left("it changed after the edit wrote it".to_owned());
    }
    let result = match &write.old {
        Some(bytes) => root.replace_file(&write.target, bytes, write.old_mode),
        None => root.remove_file(&write.target),
    };
    match result {
        Ok(()) => Ok(()),
        Err(error) => left(format!("cannot restore it ({error})")),
    }
}

/// The `data` file of a record being written.
struct Blobs {
    path: PathBuf,
    file: fs::File,
    length: u64,
}

impl Blobs {
    fn create(dir: &Path) -> Result<Blobs, ApplyError> {
        let path = dir.join(DATA_FILE);
        let file = fs::File::create(&path).map_err(|source| VfsError::Io { path: path.clone(), source })?;
        Ok(Blobs { path, file, length: 0 })
    }

    fn append(&mut self, bytes: &[u8]) -> Result<(u64, u64), ApplyError> {
        std::io::Write::write_all(&mut self.file, bytes)
            .map_err(|source| VfsError::Io { path: self.path.clone(), source })?;
        let at = (self.length, bytes.len() as u64);
        self.length += bytes.len() as u64;
        Ok(at)
    }

    fn sync(self) -> Result<(), ApplyError> {
        self.file.sync_all().map_err(|source| VfsError::Io { path: self.path, source })?;
        Ok(())
    }
}

/// Reads the bytes a record stored at `at`, which must have the hash `expected`. The length
/// is checked against the data file's real size before anything is allocated. The error
/// says what is wrong with the record.
fn read_blob(dir: &Path, at: Option<(u64, u64)>, expected: &str) -> Result<Vec<u8>, String> {
    let Some(at) = at else {
        return Err("the record holds no bytes for a file".into());
    };
    let path = dir.join(DATA_FILE);
    let file = fs::File::open(&path).map_err(|error| format!("cannot open its data: {error}"))?;
    let size = file.metadata().map_err(|error| format!("cannot read its data: {error}"))?.len();
    blob_at(file, size, at, expected)
}

/// The bytes at `(offset, length)` of a record's data, `size` bytes long, which must have the
/// hash `expected`; the bounds are checked before anything is allocated.
pub(crate) fn blob_at(
    mut data: impl Read + std::io::Seek,
    size: u64,
    (offset, length): (u64, u64),
    expected: &str,
) -> Result<Vec<u8>, String> {
    use std::io::SeekFrom;
    let end = offset
        .checked_add(length)
        .filter(|end| *end <= size)
        .ok_or_else(|| format!("it places {length} bytes at offset {offset} in a data file of {size} bytes"))?;
    let length = usize::try_from(end - offset).map_err(|_| "a length beyond this machine's memory".to_owned())?;
    data.seek(SeekFrom::Start(offset)).map_err(|error| format!("cannot read its data: {error}"))?;
    let mut bytes = vec![0; length];
    data.read_exact(&mut bytes).map_err(|error| format!("cannot read its data: {error}"))?;
    if ContentHash::of(&bytes).as_str() != expected {
        return Err("its data does not have the hash its manifest gives".into());
    }
    Ok(bytes)
}

fn write_manifest(dir: &Path, manifest: &Manifest) -> Result<(), ApplyError> {
    let mut sealed = manifest.clone();
    sealed.checksum = Some(checksum(&sealed));
    let bytes = serde_json::to_vec_pretty(&sealed).unwrap_or_default();
    write_atomically(&dir.join(MANIFEST), &bytes, Some(0o600))?;
    Ok(())
}

/// The hash of a manifest serialised without its checksum.
pub(crate) fn checksum(manifest: &Manifest) -> String {
    let mut unsealed = manifest.clone();
    unsealed.checksum = None;
    ContentHash::of(&serde_json::to_vec(&unsealed).unwrap_or_default()).to_string()
}

/// Reads and checks a record's manifest. `Ok(None)`: there is none (the record was never
/// completed). `Err`: it is damaged, and why. `name` is the numbered directory's name, which
/// the manifest's sequence number must match (`None` for `op/`).
fn read_record(dir: &Path, name: Option<&str>) -> Result<Option<Manifest>, String> {
    let path = dir.join(MANIFEST);
    let file = match fs::File::open(&path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(format!("cannot open its manifest: {error}")),
    };
    let size = file.metadata().map_err(|error| format!("cannot read its manifest: {error}"))?.len();
    if size > MAX_MANIFEST_BYTES {
        return Err(format!("its manifest is {size} bytes, over the {MAX_MANIFEST_BYTES}-byte limit"));
    }
    let mut bytes = Vec::new();
    file.take(MAX_MANIFEST_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|error| format!("cannot read its manifest: {error}"))?;
    decode_manifest(&bytes, name).map(Some)
}

/// Parses and checks a manifest's bytes (`name` as for [`read_record`]).
pub(crate) fn decode_manifest(bytes: &[u8], name: Option<&str>) -> Result<Manifest, String> {
    let manifest: Manifest =
        serde_json::from_slice(bytes).map_err(|error| format!("its manifest does not parse: {error}"))?;
    check_manifest(&manifest, name)?;
    Ok(manifest)
}

/// A record's `created_dirs` as paths (`check_manifest` made sure each is normal).
fn dir_paths(manifest: &Manifest) -> Vec<RepoPath> {
    manifest.created_dirs.iter().filter_map(|dir| RepoPath::normalize(dir)).collect()
}

/// A path as loupe records it: normal (`./a`, `a//b` or `/a` would name one file under two
/// spellings), not the root, no NUL.
fn is_recorded_path(path: &str) -> bool {
    RepoPath::normalize(path).is_some_and(|normal| !normal.is_root() && normal.as_str() == path) && !path.contains('\0')
}

/// The facts every record loupe writes holds; a manifest that breaks one is damaged.
fn check_manifest(manifest: &Manifest, name: Option<&str>) -> Result<(), String> {
    if let Some(stored) = &manifest.checksum
        && *stored != checksum(manifest)
    {
        return Err("its manifest does not match its checksum".into());
    }
    if !matches!(manifest.state.as_str(), "pending" | "committed") {
        return Err(format!("unknown state `{}`", manifest.state));
    }
    match name {
        Some(name) => {
            if manifest.kind != "edit" || name.parse::<u64>().ok() != Some(manifest.seq) {
                return Err("its manifest does not belong to this directory".into());
            }
            if manifest.id != transaction_id(manifest.seq) {
                return Err(format!("its id `{}` does not match its number", manifest.id));
            }
        }
        None => {
            if !matches!(manifest.kind.as_str(), "undo" | "redo") || manifest.of.is_none() {
                return Err("an undo/redo record that names no transaction".into());
            }
        }
    }
    if let Some(dir) = manifest.created_dirs.iter().find(|dir| !is_recorded_path(dir)) {
        return Err(format!("the directory `{}` is not a normal path inside the root", dir.escape_debug()));
    }
    let mut seen = HashSet::new();
    for file in &manifest.files {
        if !is_recorded_path(&file.path) {
            return Err(format!(
                "the path `{}` is not a normal path of a file inside the root",
                file.path.escape_debug()
            ));
        }
        if !seen.insert(file.path.as_str()) {
            return Err(format!("it names `{}` twice", file.path));
        }
        // Modes are recorded as permission bits (`& 0o7777`); more would reach `fchmod`.
        if let Some(mode) = [file.old_mode, file.new_mode].into_iter().flatten().find(|mode| *mode > 0o7777) {
            return Err(format!("the mode {mode:o} of `{}` is not permission bits", file.path));
        }
        for (hash, at) in [(&file.old, file.old_at), (&file.new, file.new_at)] {
            match hash {
                Some(hash) if ContentHash::parse(hash).is_none() => return Err(format!("`{hash}` is not a hash")),
                Some(_) if at.is_none() => return Err(format!("no bytes recorded for `{}`", file.path)),
                _ => {}
            }
        }
    }
    Ok(())
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_length_beyond_the_data_file_is_refused_before_allocating() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(DATA_FILE), b"0123456789").unwrap();
        let hash = ContentHash::of(b"234").to_string();
        assert_eq!(read_blob(dir.path(), Some((2, 3)), &hash).unwrap(), b"234");
        for at in [(2, 9), (u64::MAX, 2), (0, u64::MAX), (0, 1 << 62), (11, 0)] {
            assert!(read_blob(dir.path(), Some(at), &hash).is_err(), "{at:?}");
        }
        // Right length, wrong bytes.
        assert!(read_blob(dir.path(), Some((3, 3)), &hash).is_err());
    }
}
