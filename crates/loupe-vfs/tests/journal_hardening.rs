//! The journal against what hardening round two did to it (findings R6, R12, R13, R17 and R18 in
//! docs/findings.md): two writers on one root with different journal dirs, a process killed
//! mid-edit leaving temporary files, damaged records, a read-only server at start-up and the
//! journal directory deleted under a running server.
//!
//! The multi-process cases run this test binary again as the second process:
//! `child_process_entry` does nothing unless `LOUPE_JOURNAL_TEST_CHILD` names a role.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use loupe_core::ContentHash;
use loupe_core::config::DEFAULT_EXCLUDE;
use loupe_vfs::journal::Hooks;
use loupe_vfs::{ApplyError, Exclusions, Journal, Root};
use serde_json::Value;

use crate::journal::{change, plan};

const CHILD: &str = "LOUPE_JOURNAL_TEST_CHILD";

fn root_at(dir: &Path) -> Root {
    let exclude: Vec<String> = DEFAULT_EXCLUDE.iter().map(|s| (*s).to_owned()).collect();
    Root::open(dir, Exclusions::new(&exclude, &[]).unwrap()).unwrap()
}

fn open(repo: &Path, journal_dir: &Path) -> (Journal, loupe_vfs::journal::Recovery) {
    Journal::open(root_at(repo), journal_dir.to_path_buf()).unwrap()
}

fn repo_with(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    for (path, bytes) in files {
        let full = repo.path().join(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, bytes).unwrap();
    }
    repo
}

fn read(repo: &Path, path: &str) -> Option<Vec<u8>> {
    fs::read(repo.join(path)).ok()
}

/// The name libtest knows [`child_process_entry`] by: its module path in the one test binary
/// (`journal_hardening::child_process_entry`), without the binary's own name.
fn child_test_name() -> String {
    let module = module_path!().split_once("::").map_or("", |(_, rest)| rest);
    format!("{module}::child_process_entry")
}

/// Runs this test binary as a second process in `role`.
fn child(role: &str, repo: &Path, journal_dir: &Path, env: &[(&str, &str)]) -> std::process::Output {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", &child_test_name(), "--nocapture", "--test-threads=1"])
        .env(CHILD, role)
        .env("LOUPE_JOURNAL_TEST_REPO", repo)
        .env("LOUPE_JOURNAL_TEST_DIR", journal_dir)
        .env_remove("LOUPE_TEST_HOOKS");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

/// The second process of the multi-process tests (a no-op in a normal run).
#[test]
fn child_process_entry() {
    let Ok(role) = std::env::var(CHILD) else { return };
    let repo = PathBuf::from(std::env::var("LOUPE_JOURNAL_TEST_REPO").unwrap());
    let dir = PathBuf::from(std::env::var("LOUPE_JOURNAL_TEST_DIR").unwrap());
    let (journal, _) = open(&repo, &dir);
    match role.as_str() {
        // Hooks come from the environment: `LOUPE_TEST_ABORT_AFTER_WRITES` kills this
        // process between two file writes of this two-file edit.
        "crash" => {
            let _ = journal.apply(plan(vec![
                change("a.txt", Some(A_OLD), Some(A_NEW)),
                change("sub/b.txt", Some(B_OLD), Some(B_NEW)),
            ]));
            panic!("the abort hook did not fire");
        }
        "counter" => {
            let rounds = std::env::var("LOUPE_JOURNAL_TEST_ROUNDS").unwrap().parse().unwrap();
            println!("ACKNOWLEDGED {}", count_up(&journal, &repo, rounds));
        }
        // Started while another writer holds the root: recovery waits for the first edit.
        "late-recovery" => {
            println!("OPENED");
            for _ in 0..200 {
                if journal.apply(plan(vec![change("c.txt", Some(b"c"), Some(b"C"))])).is_ok() {
                    println!("APPLIED");
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            panic!("the edit never went through");
        }
        other => panic!("unknown role {other}"),
    }
}

// ---------------------------------------------------------------------------------------
// Writers are serialised per root, whatever their journal dir.

/// Increments the counter held in both `a.txt` and `sub/b.txt` (one two-file transaction per
/// round), retrying when a file changed since it was read. Returns the edits acknowledged.
fn count_up(journal: &Journal, repo: &Path, rounds: usize) -> usize {
    let mut acknowledged = 0;
    for _ in 0..rounds {
        loop {
            let a = fs::read(repo.join("a.txt")).unwrap();
            let b = fs::read(repo.join("sub/b.txt")).unwrap();
            let n: u64 = String::from_utf8_lossy(&a).trim().parse().unwrap();
            let next = format!("{}\n", n + 1);
            let result = journal.apply(plan(vec![
                change("a.txt", Some(&a), Some(next.as_bytes())),
                change("sub/b.txt", Some(&b), Some(next.as_bytes())),
            ]));
            match result {
                Ok(_) => {
                    acknowledged += 1;
                    break;
                }
                Err(ApplyError::Stale(_)) => continue,
                Err(error) => panic!("{error}"),
            }
        }
    }
    acknowledged
}

#[test]
fn r6_two_writers_on_one_root_with_different_journal_dirs_lose_no_edit() {
    let repo = repo_with(&[("a.txt", b"0\n"), ("sub/b.txt", b"0\n")]);
    let state = tempfile::tempdir().unwrap();
    let rounds = 40;
    // Two threads of this process and a second process, each with its own journal dir.
    let (first, _) = open(repo.path(), &state.path().join("one"));
    let (second, _) = open(repo.path(), &state.path().join("two"));
    let process = std::thread::scope(|scope| {
        let first = scope.spawn(|| count_up(&first, repo.path(), rounds));
        let second = scope.spawn(|| count_up(&second, repo.path(), rounds));
        let output = child("counter", repo.path(), &state.path().join("three"), &[("LOUPE_JOURNAL_TEST_ROUNDS", "40")]);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let stdout = String::from_utf8_lossy(&output.stdout);
        let line =
            stdout.lines().find_map(|line| line.split_once("ACKNOWLEDGED ").map(|(_, count)| count)).expect(&stdout);
        let acknowledged: usize = line.trim().parse().unwrap();
        acknowledged + first.join().unwrap() + second.join().unwrap()
    });
    assert_eq!(process, 3 * rounds);
    let expected = format!("{}\n", 3 * rounds);
    // No acknowledged edit lost, no transaction half applied.
    assert_eq!(String::from_utf8(read(repo.path(), "a.txt").unwrap()).unwrap(), expected);
    assert_eq!(String::from_utf8(read(repo.path(), "sub/b.txt").unwrap()).unwrap(), expected);
}

/// Another process writes the next file between the check under the lock and its rename.
fn race_next_file(done: usize, target: &Path) {
    if done == 1 {
        fs::write(target, b"someone else").unwrap();
    }
}

#[test]
fn r6_a_file_changed_between_check_and_write_is_stale_and_the_rest_rolled_back() {
    let repo = repo_with(&[("a.txt", b"a"), ("sub/b.txt", b"b")]);
    let state = tempfile::tempdir().unwrap();
    let (mut journal, _) = open(repo.path(), &state.path().join("journal"));
    journal.set_hooks(Hooks { before_write: Some(race_next_file), ..Hooks::default() });
    let error = journal
        .apply(plan(vec![change("a.txt", Some(b"a"), Some(b"A")), change("sub/b.txt", Some(b"b"), Some(b"B"))]))
        .unwrap_err();
    let ApplyError::Stale(stale) = error else { panic!("{error}") };
    assert_eq!(stale.len(), 1);
    assert_eq!(stale[0].path.as_str(), "sub/b.txt");
    assert_eq!(stale[0].actual, Some(ContentHash::of(b"someone else")));
    assert_eq!(read(repo.path(), "a.txt").unwrap(), b"a", "the file already written is rolled back");
    assert_eq!(read(repo.path(), "sub/b.txt").unwrap(), b"someone else", "the racer's write is kept");
    assert!(journal.history(10).is_empty());
}

/// Another process rewrites the file loupe has just written, and then the next one.
fn race_both_files(done: usize, target: &Path) {
    if done == 1 {
        fs::write(target.parent().unwrap().parent().unwrap().join("a.txt"), b"racer").unwrap();
        fs::write(target, b"someone else").unwrap();
    }
}

#[test]
fn r6_rolling_back_never_overwrites_a_change_made_since_the_write() {
    let repo = repo_with(&[("a.txt", b"a"), ("sub/b.txt", b"b")]);
    let state = tempfile::tempdir().unwrap();
    let (mut journal, _) = open(repo.path(), &state.path().join("journal"));
    journal.set_hooks(Hooks { before_write: Some(race_both_files), ..Hooks::default() });
    let result =
        journal.apply(plan(vec![change("a.txt", Some(b"a"), Some(b"A")), change("sub/b.txt", Some(b"b"), Some(b"B"))]));
    // The racer's change is kept, and the answer names the file it could not roll back.
    let Err(ApplyError::RollbackIncomplete { cause, left }) = result else { panic!("{result:?}") };
    assert!(matches!(*cause, ApplyError::Stale(_)), "{cause:?}");
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!((left[0].0.as_str(), left[0].1.as_str()), ("a.txt", "it changed after the edit wrote it"));
    assert_eq!(read(repo.path(), "a.txt").unwrap(), b"racer");
    assert_eq!(read(repo.path(), "sub/b.txt").unwrap(), b"someone else");
}

/// Swaps the directory of the file loupe has just created for a link to a directory outside,
/// then fails the next write: the rollback cannot reach the created file beneath the root.
fn swap_created_dir(done: usize, target: &Path) {
    if done == 1 {
        let root = target.parent().unwrap().parent().unwrap();
        let outside = root.parent().unwrap().join(format!("{}-outside", root.file_name().unwrap().to_string_lossy()));
        fs::create_dir_all(&outside).unwrap();
        fs::rename(root.join("new"), outside.join("moved")).unwrap();
        loupe_vfs::testing::symlink(&outside, root.join("new")).unwrap();
        fs::write(target, b"someone else").unwrap();
    }
}

/// H8: a failed edit whose rollback cannot reach a file it created (its directory swapped for a
/// link) names that file, with why, instead of only logging "left as it is"; nothing is written
/// or removed outside the root.
#[test]
fn h8_a_rollback_that_cannot_reach_a_file_names_it() {
    let repo = repo_with(&[("sub/b.txt", b"b"), ("new/.keep", b"")]);
    let state = tempfile::tempdir().unwrap();
    let (mut journal, _) = open(repo.path(), &state.path().join("journal"));
    journal.set_hooks(Hooks { before_write: Some(swap_created_dir), ..Hooks::default() });
    let result =
        journal.apply(plan(vec![change("new/a.txt", None, Some(b"A")), change("sub/b.txt", Some(b"b"), Some(b"B"))]));
    let Err(ApplyError::RollbackIncomplete { cause, left }) = result else { panic!("{result:?}") };
    assert!(matches!(*cause, ApplyError::Stale(_)), "{cause:?}");
    assert_eq!(left.iter().map(|(path, _)| path.as_str()).collect::<Vec<_>>(), ["new/a.txt"], "{left:?}");
    assert!(left[0].1.starts_with("cannot read it to restore it"), "{left:?}");
    // The file moved outside with its directory is untouched there: nothing outside was removed.
    let outside =
        repo.path().parent().unwrap().join(format!("{}-outside", repo.path().file_name().unwrap().to_string_lossy()));
    assert_eq!(fs::read(outside.join("moved/a.txt")).unwrap(), b"A");
    assert_eq!(read(repo.path(), "sub/b.txt").unwrap(), b"someone else");
    assert!(journal.history(10).is_empty());
    fs::remove_dir_all(outside).unwrap();
}

// ---------------------------------------------------------------------------------------
// A real interrupted transaction: a process killed between the two writes of an edit.

const A_OLD: &[u8] = b"alpha old\n";
const A_NEW: &[u8] = b"alpha new, longer than before\n";
const B_OLD: &[u8] = b"beta old\n";
const B_NEW: &[u8] = b"beta new, longer than before\n";

/// A repository and journal as a `kill -9` after the first write of a two-file edit leaves
/// them: `a.txt` holds its new bytes, `sub/b.txt` its old ones, the record is pending.
fn crashed() -> (tempfile::TempDir, tempfile::TempDir) {
    let repo = repo_with(&[("a.txt", A_OLD), ("sub/b.txt", B_OLD), ("c.txt", b"c")]);
    let state = tempfile::tempdir().unwrap();
    let output = child(
        "crash",
        repo.path(),
        &state.path().join("journal"),
        &[("LOUPE_TEST_HOOKS", "1"), ("LOUPE_TEST_ABORT_AFTER_WRITES", "1")],
    );
    assert!(!output.status.success());
    assert_eq!(read(repo.path(), "a.txt").unwrap(), A_NEW);
    assert_eq!(read(repo.path(), "sub/b.txt").unwrap(), B_OLD);
    (repo, state)
}

fn pending_manifest(state: &Path) -> PathBuf {
    state.join("journal/0000000001/manifest.json")
}

#[test]
fn r6_a_writer_that_never_lets_go_delays_recovery_instead_of_disabling_edits() {
    use std::io::BufRead;
    let (repo, state) = crashed();
    // A hung writer holds the root's lock while a server starts.
    let hung = root_at(repo.path()).root_lock_file().unwrap();
    hung.lock().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &child_test_name(), "--nocapture", "--test-threads=1"])
        .env(CHILD, "late-recovery")
        .env("LOUPE_JOURNAL_TEST_REPO", repo.path())
        .env("LOUPE_JOURNAL_TEST_DIR", state.path().join("journal"))
        .env("LOUPE_TEST_HOOKS", "1")
        .env("LOUPE_TEST_LOCK_WAIT_MS", "200")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let opened = lines.by_ref().map_while(Result::ok).any(|line| line.contains("OPENED"));
    assert!(opened, "the journal opens while another writer holds the root");
    assert_eq!(read(repo.path(), "a.txt").unwrap(), A_NEW, "nothing is recovered without the lock");
    drop(hung);
    // Read to the end: the child writes its test summary after the line we look for.
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let applied = rest.iter().any(|line| line.contains("APPLIED"));
    assert!(child.wait().unwrap().success() && applied);
    assert_eq!(read(repo.path(), "a.txt").unwrap(), A_OLD, "the first edit recovered the journal");
    assert_eq!(read(repo.path(), "sub/b.txt").unwrap(), B_OLD);
    assert_eq!(read(repo.path(), "c.txt").unwrap(), b"C");
}

// The temporary files of an interrupted write are removed, and only those.

#[test]
fn r12_recovery_removes_the_temp_files_a_killed_edit_left_and_only_those() {
    let (repo, state) = crashed();
    // Killed while writing `sub/b.txt` (a prefix of its new bytes was in the temporary file),
    // and earlier while restoring `a.txt` (a prefix of its old bytes). Named as `apply.rs`
    // names its temporary files: `.loupe-<pid>-<counter><nanos>.tmp`, in hex.
    fs::write(repo.path().join("sub/.loupe-1f2e-3a4b5c.tmp"), &B_NEW[..7]).unwrap();
    fs::write(repo.path().join(".loupe-1f2e-0c0d0e.tmp"), A_OLD).unwrap();
    // Not loupe's: other names (tempfile's, which loupe no longer uses, among them), other
    // content, not a regular file.
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("victim"), &B_NEW[..4]).unwrap();
    let keep = [
        ("sub/.loupe-1f2e-7777.tmp", &b"my notes"[..]),
        ("sub/loupe-1f2e-3a4b5c.tmp", &B_NEW[..3]),
        ("sub/.loupe-1f2e-3a4b5c.tmp.bak", &B_NEW[..3]),
        ("sub/.loupe-Ab12Cd.tmp", &B_NEW[..3]),
        ("c.loupe-1f2e-3a4b5c.tmp", A_OLD),
    ];
    for (path, bytes) in keep {
        fs::write(repo.path().join(path), bytes).unwrap();
    }
    loupe_vfs::testing::symlink(outside.path().join("victim"), repo.path().join("sub/.loupe-1f2e-4444.tmp")).unwrap();

    let (journal, recovery) = open(repo.path(), &state.path().join("journal"));
    assert_eq!(recovery.rolled_back, ["tx-1"]);
    let mut removed = recovery.temp_files_removed.clone();
    removed.sort();
    assert_eq!(removed, [".loupe-1f2e-0c0d0e.tmp", "sub/.loupe-1f2e-3a4b5c.tmp"]);
    assert!(!repo.path().join("sub/.loupe-1f2e-3a4b5c.tmp").exists());
    assert!(!repo.path().join(".loupe-1f2e-0c0d0e.tmp").exists());
    for (path, bytes) in keep {
        assert_eq!(read(repo.path(), path).unwrap(), bytes, "{path}");
    }
    assert!(fs::symlink_metadata(repo.path().join("sub/.loupe-1f2e-4444.tmp")).unwrap().file_type().is_symlink());
    assert_eq!(fs::read(outside.path().join("victim")).unwrap(), &B_NEW[..4]);
    assert_eq!(read(repo.path(), "a.txt").unwrap(), A_OLD);
    assert_eq!(read(repo.path(), "sub/b.txt").unwrap(), B_OLD);
    journal.apply(plan(vec![change("c.txt", Some(b"c"), Some(b"C"))])).unwrap();
}

// Damaged records are quarantined, start-up goes on, edits stay enabled.

/// A record made valid-looking again for a reader that trusts it: the checksum is dropped,
/// as in a record written before checksums existed.
fn rewrite_manifest(state: &Path, edit: impl FnOnce(&mut Value)) {
    let path = pending_manifest(state);
    let mut manifest: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    manifest.as_object_mut().unwrap().remove("checksum");
    edit(&mut manifest);
    fs::write(path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
}

/// What must hold after any damage: start-up succeeded, nothing but old or new bytes was
/// written, a rolled-back transaction is rolled back whole, nothing is left to recover,
/// and edits work.
fn assert_survives(repo: &Path, state: &Path) -> loupe_vfs::journal::Recovery {
    let (journal, recovery) = open(repo, &state.join("journal"));
    let a = read(repo, "a.txt").unwrap();
    let b = read(repo, "sub/b.txt").unwrap();
    assert!(a == A_OLD || a == A_NEW, "a.txt: {:?}", String::from_utf8_lossy(&a));
    assert!(b == B_OLD || b == B_NEW, "sub/b.txt: {:?}", String::from_utf8_lossy(&b));
    if !recovery.rolled_back.is_empty() {
        assert_eq!((a.as_slice(), b.as_slice()), (A_OLD, B_OLD), "{recovery:?}");
    } else {
        assert!(!recovery.quarantined.is_empty() || a == A_OLD, "{recovery:?}");
    }
    let _ = journal.history(10);
    let _ = journal.undo(None, false);
    let current = read(repo, "c.txt").unwrap();
    journal.apply(plan(vec![change("c.txt", Some(&current), Some(b"edited"))])).unwrap();
    drop(journal);
    let (_, again) = open(repo, &state.join("journal"));
    assert!(again.rolled_back.is_empty() && again.quarantined.is_empty(), "{again:?}");
    recovery
}

#[test]
fn r13_a_huge_length_in_a_record_is_bounded_by_the_data_file() {
    for at in [[0u64, 1 << 62], [0, u64::MAX], [u64::MAX - 1, 4], [1 << 40, 8]] {
        let (repo, state) = crashed();
        rewrite_manifest(state.path(), |manifest| manifest["files"][0]["old_at"] = Value::from(at.to_vec()));
        let (journal, recovery) = open(repo.path(), &state.path().join("journal"));
        assert_eq!(recovery.quarantined.len(), 1, "{at:?}: {recovery:?}");
        assert!(recovery.quarantined[0].starts_with("quarantine/0000000001-"), "{recovery:?}");
        assert!(state.path().join("journal").join(&recovery.quarantined[0]).join("manifest.json").is_file());
        // Its files are left as the crash left them, and named.
        assert_eq!(read(repo.path(), "a.txt").unwrap(), A_NEW);
        assert!(recovery.left_alone.contains(&"a.txt".to_owned()), "{recovery:?}");
        journal.apply(plan(vec![change("c.txt", Some(b"c"), Some(b"C"))])).unwrap();
    }
}

#[test]
fn r13_truncated_and_bit_flipped_records_are_quarantined_and_edits_go_on() {
    // Truncated data: the old bytes of a.txt are gone.
    let (repo, state) = crashed();
    let data = state.path().join("journal/0000000001/data");
    fs::OpenOptions::new().write(true).open(&data).unwrap().set_len(3).unwrap();
    let _ = assert_survives(repo.path(), state.path());
    assert_eq!(read(repo.path(), "a.txt").unwrap(), A_NEW);

    // A flipped bit in the data: the right length, the wrong bytes are never written.
    let (repo, state) = crashed();
    let data = state.path().join("journal/0000000001/data");
    let mut bytes = fs::read(&data).unwrap();
    bytes[2] ^= 0x10;
    fs::write(&data, bytes).unwrap();
    let _ = assert_survives(repo.path(), state.path());
    assert_eq!(read(repo.path(), "a.txt").unwrap(), A_NEW);

    // A flipped bit in the manifest: its checksum no longer matches.
    let (repo, state) = crashed();
    let manifest = pending_manifest(state.path());
    let mut text = fs::read_to_string(&manifest).unwrap();
    text = text.replacen("sub/b.txt", "sub/c.txt", 1);
    fs::write(&manifest, text).unwrap();
    let recovery = assert_survives(repo.path(), state.path());
    assert_eq!(recovery.quarantined.len(), 1, "{recovery:?}");

    // A truncated manifest, and an unparseable `op/` record.
    let (repo, state) = crashed();
    let manifest = pending_manifest(state.path());
    let text = fs::read(&manifest).unwrap();
    fs::write(&manifest, &text[..text.len() / 2]).unwrap();
    fs::create_dir_all(state.path().join("journal/op")).unwrap();
    fs::write(state.path().join("journal/op/manifest.json"), b"{\"id\": 1").unwrap();
    let _ = assert_survives(repo.path(), state.path());
    assert!(state.path().join("journal/quarantine").read_dir().unwrap().count() >= 2);
}

/// A small deterministic generator (xorshift), so a failing case can be replayed by number.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound.max(1) as u64) as usize
    }
}

/// Random damage to a real interrupted record (the manifest, with or without its checksum,
/// or the data): start-up never fails or panics, never writes anything but recorded bytes,
/// and the journal stays usable. `LOUPE_JOURNAL_FUZZ_CASES` raises the number of cases.
#[test]
fn r13_random_damage_to_a_real_record_never_stops_the_journal() {
    let cases: u64 = std::env::var("LOUPE_JOURNAL_FUZZ_CASES").ok().and_then(|cases| cases.parse().ok()).unwrap_or(60);
    let (pristine_repo, pristine_state) = crashed();
    let (mut rolled_back, mut quarantined) = (0, 0);
    let manifest_bytes = fs::read(pending_manifest(pristine_state.path())).unwrap();
    let data_bytes = fs::read(pristine_state.path().join("journal/0000000001/data")).unwrap();
    for case in 0..cases {
        let mut random = Random(0x9E37_79B9_7F4A_7C15 ^ (case + 1).wrapping_mul(0x2545_F491_4F6C_DD1D));
        let repo = repo_with(&[("a.txt", A_NEW), ("sub/b.txt", B_OLD), ("c.txt", b"c")]);
        let state = tempfile::tempdir().unwrap();
        let record = state.path().join("journal/0000000001");
        fs::create_dir_all(&record).unwrap();
        let mut manifest = manifest_bytes.clone();
        let mut data = data_bytes.clone();
        match random.below(6) {
            0 => {
                for _ in 0..=random.below(3) {
                    let at = random.below(manifest.len());
                    manifest[at] ^= 1 << random.below(8);
                }
            }
            1 => {
                for _ in 0..=random.below(3) {
                    let at = random.below(data.len());
                    data[at] ^= 1 << random.below(8);
                }
            }
            2 => manifest.truncate(random.below(manifest.len())),
            3 => data.truncate(random.below(data.len())),
            _ => {
                // A record without a checksum, so only the bounds and hashes stand guard:
                // random numbers where the offsets, lengths and modes are.
                let mut value: Value = serde_json::from_slice(&manifest).unwrap();
                value.as_object_mut().unwrap().remove("checksum");
                let file = random.below(2);
                let field = ["old_at", "new_at", "old_mode", "new_mode"][random.below(4)];
                let number = match random.below(3) {
                    0 => random.next(),
                    1 => 1 << random.below(64),
                    _ => random.next() % 64,
                };
                value["files"][file][field] = match field {
                    "old_at" | "new_at" => Value::from(vec![random.next() % 64, number]),
                    _ => Value::from((number & 0o7777) | 0o600),
                };
                manifest = serde_json::to_vec_pretty(&value).unwrap();
            }
        }
        fs::write(record.join("manifest.json"), &manifest).unwrap();
        fs::write(record.join("data"), &data).unwrap();
        let run = std::panic::catch_unwind(|| assert_survives(repo.path(), state.path()));
        let Ok(recovery) = run else { panic!("case {case} failed") };
        rolled_back += usize::from(!recovery.rolled_back.is_empty());
        quarantined += usize::from(!recovery.quarantined.is_empty());
    }
    // The damage reaches both outcomes: records still sound enough to roll back, and
    // records that are quarantined.
    eprintln!("{cases} cases: {rolled_back} rolled back, {quarantined} quarantined");
    assert!(rolled_back > 0 && quarantined > 0, "{rolled_back} rolled back, {quarantined} quarantined");
    drop(pristine_repo);
}

// A read-only server never writes, not even to recover.

fn listing(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut entries = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in fs::read_dir(&at).unwrap().filter_map(Result::ok) {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                stack.push(path.clone());
                entries.push((path, Vec::new()));
            } else {
                entries.push((path.clone(), fs::read(&path).unwrap_or_default()));
            }
        }
    }
    entries.sort();
    entries
}

#[test]
fn r17_a_read_only_journal_leaves_an_interrupted_transaction_for_a_writable_start() {
    let (repo, state) = crashed();
    fs::write(repo.path().join("sub/.loupe-1f2e-3a4b5c.tmp"), &B_NEW[..5]).unwrap();
    let journal_dir = state.path().join("journal");
    let before = (listing(repo.path()), listing(state.path()));
    let (journal, recovery) = Journal::open_read_only(root_at(repo.path()), journal_dir.clone()).unwrap();
    assert_eq!(recovery.pending_left, ["tx-1"]);
    assert!(recovery.rolled_back.is_empty() && recovery.temp_files_removed.is_empty());
    let refused = journal.apply(plan(vec![change("c.txt", Some(b"c"), Some(b"C"))]));
    assert!(refused.is_err());
    assert!(journal.undo(None, false).is_err());
    assert!(journal.history(10).is_empty());
    assert_eq!((listing(repo.path()), listing(state.path())), before, "nothing was written");
    drop(journal);

    // The next writable start recovers it.
    let (_, recovery) = open(repo.path(), &journal_dir);
    assert_eq!(recovery.rolled_back, ["tx-1"]);
    assert_eq!(read(repo.path(), "a.txt").unwrap(), A_OLD);
    assert!(!repo.path().join("sub/.loupe-1f2e-3a4b5c.tmp").exists());
}

#[test]
fn r17_a_read_only_journal_does_not_create_its_directory() {
    let repo = repo_with(&[("a.txt", b"a")]);
    let state = tempfile::tempdir().unwrap();
    let (journal, recovery) = Journal::open_read_only(root_at(repo.path()), state.path().join("journal")).unwrap();
    assert_eq!(recovery, loupe_vfs::journal::Recovery::default());
    assert!(journal.history(5).is_empty());
    assert!(!state.path().join("journal").exists());
}

// The journal directory deleted under a running server comes back on the next edit.

#[test]
fn r18_the_journal_dir_deleted_under_a_running_server_is_created_again() {
    let repo = repo_with(&[("a.txt", b"1")]);
    let state = tempfile::tempdir().unwrap();
    let (journal, _) = open(repo.path(), &state.path().join("index/journal"));
    assert_eq!(journal.apply(plan(vec![change("a.txt", Some(b"1"), Some(b"2"))])).unwrap().transaction_id, "tx-1");
    fs::remove_dir_all(state.path().join("index")).unwrap();
    let applied = journal.apply(plan(vec![change("a.txt", Some(b"2"), Some(b"3"))])).unwrap();
    assert_eq!(applied.transaction_id, "tx-2", "ids never repeat while the server runs");
    assert!(state.path().join("index/journal/lock").is_file());
    assert_eq!(read(repo.path(), "a.txt").unwrap(), b"3");
    journal.undo(None, false).unwrap();
    assert_eq!(read(repo.path(), "a.txt").unwrap(), b"2");
}
