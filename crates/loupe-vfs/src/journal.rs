//! The edit journal: every write into the repository is a transaction recorded here first,
//! so a call applies whole or not at all, survives a crash, and can be undone and redone.
//!
//! Layout under the journal directory (in the index dir, outside the repository):
//! `lock` (an OS file lock held while a transaction runs, so two processes never
//! interleave), one directory per edit transaction (`0000000042/`: `manifest.json` and `data`,
//! the old and new bytes of every file, one after the other), and `op/` for an undo or redo in
//! flight. A manifest is written `pending` before the first file is touched and rewritten
//! `committed` after the last; a failure in between restores every file already written, and
//! opening the journal after a crash rolls a `pending` transaction back (a committed undo or
//! redo is completed). The last [`KEEP_TRANSACTIONS`] edit transactions are kept.
//!
//! Every plan carries the hash each file must still have; `apply` re-checks them all, under
//! the lock, before anything is written. This is the only place that does.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use loupe_core::{ContentHash, RepoPath};
use serde::{Deserialize, Serialize};

use crate::apply::{Target, sync_dir, write_atomically};
use crate::{Root, VfsError};

/// How many edit transactions the journal keeps for undo.
pub const KEEP_TRANSACTIONS: usize = 100;

const MANIFEST: &str = "manifest.json";
const DATA_FILE: &str = "data";
const OPERATION_DIR: &str = "op";
const LOCK_FILE: &str = "lock";

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
}

impl std::fmt::Display for ApplyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApplyError::Stale(stale) => write!(f, "{} file(s) changed since they were read", stale.len()),
            ApplyError::Vfs(error) => write!(f, "{error}"),
            ApplyError::DuplicatePath(path) => write!(f, "the plan names `{path}` twice"),
            ApplyError::NothingToDo { command } => write!(f, "nothing to {command}"),
            ApplyError::UnknownTransaction { id, reason } => write!(f, "transaction `{id}`: {reason}"),
        }
    }
}

impl std::error::Error for ApplyError {}

impl From<VfsError> for ApplyError {
    fn from(error: VfsError) -> ApplyError {
        ApplyError::Vfs(error)
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
    /// Files an interrupted transaction left in a third state (neither old nor new): kept.
    pub left_alone: Vec<String>,
}

/// Test-only fault injection, enabled from the environment only with `LOUPE_TEST_HOOKS=1`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hooks {
    /// Fail with an IO error after this many files were written (rollback path).
    pub fail_after_writes: Option<usize>,
    /// Abort the process after this many files were written (crash recovery path).
    pub abort_after_writes: Option<usize>,
}

impl Hooks {
    fn from_env() -> Hooks {
        if std::env::var("LOUPE_TEST_HOOKS").as_deref() != Ok("1") {
            return Hooks::default();
        }
        let number = |key: &str| std::env::var(key).ok().and_then(|value| value.parse().ok());
        Hooks {
            fail_after_writes: number("LOUPE_TEST_FAIL_AFTER_WRITES"),
            abort_after_writes: number("LOUPE_TEST_ABORT_AFTER_WRITES"),
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
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Manifest {
    id: String,
    seq: u64,
    /// `edit`, `undo` or `redo`.
    kind: String,
    /// For undo/redo: the edit transaction it reverses or repeats.
    of: Option<String>,
    /// `pending` or `committed`.
    state: String,
    undone: bool,
    time: u64,
    files: Vec<ManifestFile>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct ManifestFile {
    path: String,
    old: Option<String>,
    new: Option<String>,
    old_mode: Option<u32>,
    new_mode: Option<u32>,
    /// Where the old and new bytes are in the record's `data` file: (offset, length).
    old_at: Option<(u64, u64)>,
    new_at: Option<(u64, u64)>,
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

/// Both locks: this process's and the OS lock other processes respect.
struct Held<'a> {
    _in_process: MutexGuard<'a, ()>,
    file: fs::File,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

impl Journal {
    /// Opens (creating) the journal in `dir` and repairs an interrupted transaction.
    pub fn open(root: Root, dir: PathBuf) -> Result<(Journal, Recovery), VfsError> {
        fs::create_dir_all(&dir).map_err(|source| VfsError::Io { path: dir.clone(), source })?;
        let journal = Journal { root, dir, in_process: Mutex::new(()), hooks: Hooks::from_env() };
        let recovery = journal.recover()?;
        Ok((journal, recovery))
    }

    /// Replaces the fault-injection hooks (tests).
    pub fn set_hooks(&mut self, hooks: Hooks) {
        self.hooks = hooks;
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Applies a plan whole, or changes nothing. Every file's precondition is checked under
    /// the lock first; all stale files are reported together.
    pub fn apply(&self, plan: Plan) -> Result<Applied, ApplyError> {
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
        for write in &mut writes {
            if write.target.is_pending() {
                write.target = self.root.write_target(&write.path, true)?;
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
        };
        self.run(&tx_dir, &mut manifest, &writes)?;
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
        let _held = self.lock().ok();
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

    /// Undo (`reverse`) or redo one transaction through an `op/` record.
    fn replay(&self, tx_dir: &Path, original: &Manifest, reverse: bool, force: bool) -> Result<Applied, ApplyError> {
        let mut writes = Vec::new();
        let mut stale = Vec::new();
        for file in &original.files {
            let path = RepoPath::normalize(&file.path).ok_or_else(|| unknown(&original.id))?;
            let (from, to, from_mode, to_mode) = if reverse {
                (&file.new, &file.old, file.new_mode, file.old_mode)
            } else {
                (&file.old, &file.new, file.old_mode, file.new_mode)
            };
            let target = self.root.write_target(&path, true)?;
            let current = self.root.current_bytes(&target)?;
            let actual = current.as_deref().map(ContentHash::of);
            let expected = from.as_deref().and_then(ContentHash::parse);
            if actual != expected && !force {
                stale.push(Stale { path, expected, actual, actual_bytes: current });
                continue;
            }
            let new = match to {
                Some(_) => Some(read_blob(tx_dir, if reverse { file.old_at } else { file.new_at })?),
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
        };
        self.run(&op_dir, &mut manifest, &writes)?;
        self.finish_operation(&op_dir, &manifest)?;
        Ok(applied(original.id.clone(), &writes))
    }

    /// Records `writes` as pending in `tx_dir`, performs them, and marks them committed.
    /// A failure midway restores every file already written and removes the record.
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

        for (done, write) in writes.iter().enumerate() {
            if self.hooks.abort_after_writes == Some(done) {
                std::process::abort();
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
                for written in writes[..done].iter().rev() {
                    restore(&self.root, written);
                }
                let _ = fs::remove_dir_all(tx_dir);
                return Err(ApplyError::Vfs(error));
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
            original.undone = undone;
            write_manifest(&dir, &original)?;
        }
        let _ = fs::remove_dir_all(op_dir);
        sync_dir(&self.dir);
        Ok(())
    }

    fn recover(&self) -> Result<Recovery, VfsError> {
        let _held = self.lock().map_err(|error| match error {
            ApplyError::Vfs(error) => error,
            other => VfsError::Io { path: self.dir.clone(), source: std::io::Error::other(other.to_string()) },
        })?;
        let mut recovery = Recovery::default();
        let mut records: Vec<(PathBuf, Manifest)> = self.all_records(true);
        if let Ok(manifest) = read_manifest(&self.dir.join(OPERATION_DIR)) {
            records.push((self.dir.join(OPERATION_DIR), manifest));
        } else {
            let _ = fs::remove_dir_all(self.dir.join(OPERATION_DIR));
        }
        for (dir, manifest) in records {
            if manifest.state == "committed" {
                if manifest.kind != "edit" {
                    let _ = self.finish_operation(&dir, &manifest);
                    recovery.completed.push(manifest.id.clone());
                }
                continue;
            }
            // Pending: put back every file that already holds the new bytes.
            for file in &manifest.files {
                let Some(path) = RepoPath::normalize(&file.path) else { continue };
                let Ok(target) = self.root.write_target(&path, false) else {
                    recovery.left_alone.push(file.path.clone());
                    continue;
                };
                // A FIFO or device put there since is refused, not read; it stays as found.
                let Ok(current) = self.root.current_bytes(&target) else {
                    recovery.left_alone.push(file.path.clone());
                    continue;
                };
                let actual = current.as_deref().map(|bytes| ContentHash::of(bytes).to_string());
                if actual == file.old {
                    continue;
                }
                if actual != file.new {
                    recovery.left_alone.push(file.path.clone());
                    continue;
                }
                match &file.old {
                    Some(_) => {
                        let bytes = read_blob(&dir, file.old_at).map_err(|error| match error {
                            ApplyError::Vfs(error) => error,
                            other => {
                                VfsError::Io { path: dir.clone(), source: std::io::Error::other(other.to_string()) }
                            }
                        })?;
                        self.root.replace_file(&target, &bytes, file.old_mode)?;
                    }
                    None => self.root.remove_file(&target)?,
                }
            }
            let _ = fs::remove_dir_all(&dir);
            recovery.rolled_back.push(manifest.id.clone());
        }
        sync_dir(&self.dir);
        Ok(recovery)
    }

    /// Committed edit transactions, oldest first.
    fn transactions(&self) -> Vec<(PathBuf, Manifest)> {
        self.all_records(false)
            .into_iter()
            .filter(|(_, manifest)| manifest.state == "committed" && manifest.kind == "edit")
            .collect()
    }

    /// Every numbered record, oldest first; with `include_broken`, unreadable ones are
    /// removed (a crash while the manifest itself was being written).
    fn all_records(&self, include_broken: bool) -> Vec<(PathBuf, Manifest)> {
        let Ok(entries) = fs::read_dir(&self.dir) else { return Vec::new() };
        let mut records: Vec<(PathBuf, Manifest)> = Vec::new();
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.len() != 10 || !name.bytes().all(|byte| byte.is_ascii_digit()) {
                continue;
            }
            match read_manifest(&entry.path()) {
                Ok(manifest) => records.push((entry.path(), manifest)),
                Err(_) if include_broken => {
                    let _ = fs::remove_dir_all(entry.path());
                }
                Err(_) => {}
            }
        }
        records.sort_by_key(|(_, manifest)| manifest.seq);
        records
    }

    fn next_seq(&self) -> Result<u64, ApplyError> {
        let last = self.all_records(false).last().map_or(0, |(_, manifest)| manifest.seq);
        let counter = self.dir.join("last_seq");
        let stored = fs::read_to_string(&counter).ok().and_then(|text| text.trim().parse::<u64>().ok()).unwrap_or(0);
        let next = last.max(stored) + 1;
        fs::write(&counter, next.to_string()).map_err(|source| VfsError::Io { path: counter.clone(), source })?;
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

    fn lock(&self) -> Result<Held<'_>, ApplyError> {
        let in_process = self.in_process.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let path = self.dir.join(LOCK_FILE);
        let io = |source| ApplyError::Vfs(VfsError::Io { path: path.clone(), source });
        let file = fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path).map_err(io)?;
        file.lock().map_err(io)?;
        Ok(Held { _in_process: in_process, file })
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

/// Best-effort restoration of one file after a failed transaction.
fn restore(root: &Root, write: &Write) {
    let result = match &write.old {
        Some(bytes) => root.replace_file(&write.target, bytes, write.old_mode),
        None => root.remove_file(&write.target),
    };
    if let Err(error) = result {
        tracing::error!("cannot restore `{}` after a failed edit: {error}", write.path);
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

fn read_blob(dir: &Path, at: Option<(u64, u64)>) -> Result<Vec<u8>, ApplyError> {
    use std::io::{Read, Seek, SeekFrom};
    let path = dir.join(DATA_FILE);
    let io = |source| ApplyError::Vfs(VfsError::Io { path: path.clone(), source });
    let Some((offset, length)) = at else {
        return Err(io(std::io::Error::other("the record holds no bytes for this file")));
    };
    let mut file = fs::File::open(&path).map_err(io)?;
    file.seek(SeekFrom::Start(offset)).map_err(io)?;
    let mut bytes = vec![0; length as usize];
    file.read_exact(&mut bytes).map_err(io)?;
    Ok(bytes)
}

fn write_manifest(dir: &Path, manifest: &Manifest) -> Result<(), ApplyError> {
    let bytes = serde_json::to_vec_pretty(manifest).unwrap_or_default();
    write_atomically(&dir.join(MANIFEST), &bytes, Some(0o600))?;
    Ok(())
}

fn read_manifest(dir: &Path) -> Result<Manifest, String> {
    let bytes = fs::read(dir.join(MANIFEST)).map_err(|error| error.to_string())?;
    serde_json::from_slice(&bytes).map_err(|error| error.to_string())
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs())
}
