//! Stable-Rust fuzzing of the journal's record decoders: a record's `manifest.json`
//! (`decode_manifest`: the JSON, its checksum and `check_manifest`) and the byte strings it places
//! in its `data` file (`blob_at`, the bounds check and hash behind `read_blob`). Start-up recovery,
//! undo, redo and history trust a record only through these two, so they are fuzzed in memory,
//! without a journal opened per case (`tests/journal_hardening.rs`,
//! `r13_random_damage_to_a_real_record_never_stops_the_journal`, covers the whole start-up on
//! damaged records, at a few milliseconds a case).
//!
//! Each case damages a real record, written by `Journal::apply` once (an edit of four files:
//! one modified, one created in a subdirectory, one deleted, one created in two directories
//! the edit made), or an undo record and a pending
//! record made from it: bit flips, truncation, overwritten runs, inserted and removed bytes, or
//! a JSON field of the manifest set to any value (huge and negative numbers, escaping paths,
//! malformed hashes, wrong shapes), re-sealed with a fresh checksum half of the time so the
//! checks behind the checksum are reached, or left without one (records older than the
//! checksum have none); and damage to the data file. The properties: nothing panics, nothing
//! allocates by a damaged length (the address space is capped, so such an allocation aborts
//! the run), and a manifest that decodes holds only what loupe writes (a known state and kind,
//! the id its directory names, distinct normal paths and created directories, hashes with
//! their bytes placed, modes that are permission bits), and bytes read back have their hash and fit the data.
//!
//! Run long: `LOUPE_FUZZ_CASES=1000000 cargo test --release -p loupe-vfs --locked --lib fuzz --
//! --nocapture` (default 256 cases). What a run found is kept below as named regression tests.

use std::io::Cursor;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use loupe_core::{ContentHash, RepoPath};
use proptest::prelude::*;
use proptest::sample::Index as At;
use proptest::test_runner::{Config, TestRunner};
use serde_json::Value;

use crate::journal::{Manifest, blob_at, checksum, decode_manifest};
use crate::{Exclusions, FileChange, Journal, Plan, Root};

/// Cases per harness: `LOUPE_FUZZ_CASES`, 256 by default so CI stays fast.
fn cases() -> u32 {
    std::env::var("LOUPE_FUZZ_CASES").ok().and_then(|value| value.parse().ok()).unwrap_or(256)
}

/// The records every case damages: (manifest bytes, the directory name it belongs to), and
/// the data file they share.
struct Records {
    manifests: Vec<(Vec<u8>, Option<String>)>,
    data: Vec<u8>,
}

fn records() -> &'static Records {
    static RECORDS: OnceLock<Records> = OnceLock::new();
    RECORDS.get_or_init(|| {
        let repo = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        std::fs::write(repo.path().join("a.txt"), b"alpha\r\nbeta\r\n").unwrap();
        std::fs::write(repo.path().join("c.txt"), b"gone soon").unwrap();
        std::fs::create_dir(repo.path().join("sub")).unwrap();
        let root = Root::open(repo.path(), Exclusions::new(&[], &[]).unwrap()).unwrap();
        let (journal, _) = Journal::open(root, state.path().join("journal")).unwrap();
        let path = |path: &str| RepoPath::normalize(path).unwrap();
        let plan = Plan {
            changes: vec![
                FileChange {
                    path: path("a.txt"),
                    expected: Some(ContentHash::of(b"alpha\r\nbeta\r\n")),
                    new_bytes: Some(b"alpha\r\nBETA\r\n".to_vec()),
                },
                FileChange { path: path("sub/b.txt"), expected: None, new_bytes: Some(b"new file\n".to_vec()) },
                FileChange { path: path("c.txt"), expected: Some(ContentHash::of(b"gone soon")), new_bytes: None },
                FileChange { path: path("made/deep/d.txt"), expected: None, new_bytes: Some(b"d".to_vec()) },
            ],
            create_dirs: true,
        };
        let applied = journal.apply(plan).unwrap();
        assert_eq!(applied.transaction_id, "tx-1");
        let record = state.path().join("journal/0000000001");
        let committed = std::fs::read(record.join("manifest.json")).unwrap();
        let data = std::fs::read(record.join("data")).unwrap();
        let name = Some("0000000001".to_owned());
        let manifest = decode_manifest(&committed, name.as_deref()).unwrap();
        assert_eq!(manifest.created_dirs, ["made", "made/deep"]);
        let seal = |mut manifest: Manifest| {
            manifest.checksum = None;
            manifest.checksum = Some(checksum(&manifest));
            serde_json::to_vec_pretty(&manifest).unwrap()
        };
        let mut pending = manifest.clone();
        pending.state = "pending".into();
        let mut undo = manifest.clone();
        undo.kind = "undo".into();
        undo.of = Some(manifest.id.clone());
        let manifests = vec![(committed, name.clone()), (seal(pending), name), (seal(undo), None)];
        for (bytes, name) in &manifests {
            decode_manifest(bytes, name.as_deref()).unwrap();
        }
        Records { manifests, data }
    })
}

/// Raw damage to a byte string.
#[derive(Debug, Clone)]
enum Damage {
    Flip { at: At, bit: u8 },
    Truncate(At),
    Overwrite { at: At, run: Vec<u8> },
    Insert { at: At, run: Vec<u8> },
    Remove { at: At, len: usize },
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        4 => (any::<At>(), 0u8..8).prop_map(|(at, bit)| Damage::Flip { at, bit }),
        1 => any::<At>().prop_map(Damage::Truncate),
        2 => (any::<At>(), prop::collection::vec(any::<u8>(), 1..24)).prop_map(|(at, run)| Damage::Overwrite { at, run }),
        1 => (any::<At>(), prop::collection::vec(any::<u8>(), 1..16)).prop_map(|(at, run)| Damage::Insert { at, run }),
        1 => (any::<At>(), 1usize..16).prop_map(|(at, len)| Damage::Remove { at, len }),
    ]
}

fn apply(bytes: &mut Vec<u8>, damages: &[Damage]) {
    for damage in damages {
        match damage {
            Damage::Flip { at, bit } if !bytes.is_empty() => {
                let at = at.index(bytes.len());
                bytes[at] ^= 1 << bit;
            }
            Damage::Truncate(at) => bytes.truncate(at.index(bytes.len() + 1)),
            Damage::Overwrite { at, run } if !bytes.is_empty() => {
                let at = at.index(bytes.len());
                for (offset, byte) in run.iter().enumerate() {
                    if let Some(slot) = bytes.get_mut(at + offset) {
                        *slot = *byte;
                    }
                }
            }
            Damage::Insert { at, run } => {
                let at = at.index(bytes.len() + 1);
                bytes.splice(at..at, run.iter().copied());
            }
            Damage::Remove { at, len } if !bytes.is_empty() => {
                let at = at.index(bytes.len());
                bytes.drain(at..(at + len).min(bytes.len()));
            }
            _ => {}
        }
    }
}

/// Values a damaged or forged field may hold.
fn field_value() -> impl Strategy<Value = Value> {
    let number = prop_oneof![
        Just(u64::MAX),
        Just(1 << 63),
        Just(1 << 62),
        Just(u64::from(u32::MAX)),
        Just(0o7777),
        Just(0o10000),
        Just(0o104755),
        Just(9_999_999_999),
        Just(10_000_000_000),
        0u64..64,
        any::<u64>(),
    ];
    let text = prop_oneof![
        Just("a.txt".to_owned()),
        Just("sub/b.txt".to_owned()),
        Just("made".to_owned()),
        Just("./a.txt".to_owned()),
        Just("sub/../a.txt".to_owned()),
        Just("/a.txt".to_owned()),
        Just("a.txt/".to_owned()),
        Just("../outside.txt".to_owned()),
        Just("/etc/passwd".to_owned()),
        Just(String::new()),
        Just(".".to_owned()),
        Just("a\0b".to_owned()),
        Just("tx-1".to_owned()),
        Just("tx-2".to_owned()),
        Just("pending".to_owned()),
        Just("committed".to_owned()),
        Just("edit".to_owned()),
        Just("undo".to_owned()),
        Just("redo".to_owned()),
        Just(ContentHash::of(b"x").to_string()),
        Just("0123456789abcdeg".to_owned()),
        ".{0,20}",
    ];
    prop_oneof![
        3 => number.clone().prop_map(Value::from),
        1 => (-5i64..0).prop_map(Value::from),
        1 => Just(Value::from(1.5)),
        3 => text.clone().prop_map(Value::from),
        2 => prop::collection::vec(text, 0..3).prop_map(Value::from),
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::from),
        3 => (number.clone(), number).prop_map(|(a, b)| Value::from(vec![a, b])),
        1 => Just(Value::from(vec![1u64])),
        1 => Just(Value::from(vec![1u64, 2, 3])),
        1 => Just(serde_json::json!({"path": "a.txt"})),
    ]
}

/// A change to the manifest's JSON: one field of the record or of one of its files set,
/// removed or added; a file entry duplicated or removed.
#[derive(Debug, Clone)]
enum Edit {
    Set { file: Option<At>, field: At, value: Value },
    Remove { file: Option<At>, field: At },
    DuplicateFile(At),
    RemoveFile(At),
}

const RECORD_FIELDS: &[&str] =
    &["id", "seq", "kind", "of", "state", "undone", "time", "files", "created_dirs", "checksum", "extra"];
const FILE_FIELDS: &[&str] = &["path", "old", "new", "old_mode", "new_mode", "old_at", "new_at", "extra"];

fn json_edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        6 => (prop::option::of(any::<At>()), any::<At>(), field_value())
            .prop_map(|(file, field, value)| Edit::Set { file, field, value }),
        1 => (prop::option::of(any::<At>()), any::<At>()).prop_map(|(file, field)| Edit::Remove { file, field }),
        1 => any::<At>().prop_map(Edit::DuplicateFile),
        1 => any::<At>().prop_map(Edit::RemoveFile),
    ]
}

/// What the seal does after the JSON edits: keep the old checksum (now usually wrong), reseal
/// (a fresh checksum, when the JSON still has a manifest's shape), or drop it.
#[derive(Debug, Clone, Copy)]
enum Seal {
    Keep,
    Reseal,
    Drop,
}

#[derive(Debug, Clone)]
enum ManifestDamage {
    Bytes(Vec<Damage>),
    Json(Vec<Edit>, Seal),
    Whole(Vec<u8>),
}

fn manifest_damage() -> impl Strategy<Value = ManifestDamage> {
    let seal = prop_oneof![1 => Just(Seal::Keep), 3 => Just(Seal::Reseal), 1 => Just(Seal::Drop)];
    prop_oneof![
        4 => prop::collection::vec(damage(), 0..4).prop_map(ManifestDamage::Bytes),
        8 => (prop::collection::vec(json_edit(), 1..4), seal).prop_map(|(edits, seal)| ManifestDamage::Json(edits, seal)),
        1 => prop::collection::vec(any::<u8>(), 0..400).prop_map(ManifestDamage::Whole),
    ]
}

fn edit_json(value: &mut Value, edit: &Edit) {
    let Some(record) = value.as_object_mut() else { return };
    let files_len = record.get("files").and_then(Value::as_array).map_or(0, Vec::len);
    match edit {
        Edit::Set { file: None, field, value } => {
            record.insert(RECORD_FIELDS[field.index(RECORD_FIELDS.len())].to_owned(), value.clone());
        }
        Edit::Remove { file: None, field } => {
            record.remove(RECORD_FIELDS[field.index(RECORD_FIELDS.len())]);
        }
        Edit::Set { file: Some(file), field, value } if files_len > 0 => {
            if let Some(entry) = record["files"][file.index(files_len)].as_object_mut() {
                entry.insert(FILE_FIELDS[field.index(FILE_FIELDS.len())].to_owned(), value.clone());
            }
        }
        Edit::Remove { file: Some(file), field } if files_len > 0 => {
            if let Some(entry) = record["files"][file.index(files_len)].as_object_mut() {
                entry.remove(FILE_FIELDS[field.index(FILE_FIELDS.len())]);
            }
        }
        Edit::DuplicateFile(file) if files_len > 0 => {
            if let Some(files) = record.get_mut("files").and_then(Value::as_array_mut) {
                let copy = files[file.index(files_len)].clone();
                files.push(copy);
            }
        }
        Edit::RemoveFile(file) if files_len > 0 => {
            if let Some(files) = record.get_mut("files").and_then(Value::as_array_mut) {
                files.remove(file.index(files_len));
            }
        }
        _ => {}
    }
}

/// The manifest bytes a case feeds the decoder.
fn damaged_manifest(original: &[u8], damage: &ManifestDamage) -> Vec<u8> {
    match damage {
        ManifestDamage::Whole(bytes) => bytes.clone(),
        ManifestDamage::Bytes(damages) => {
            let mut bytes = original.to_vec();
            apply(&mut bytes, damages);
            bytes
        }
        ManifestDamage::Json(edits, seal) => {
            let mut value: Value = serde_json::from_slice(original).unwrap();
            for edit in edits {
                edit_json(&mut value, edit);
            }
            match seal {
                Seal::Keep => {}
                Seal::Drop => {
                    if let Some(record) = value.as_object_mut() {
                        record.remove("checksum");
                    }
                }
                Seal::Reseal => {
                    if let Ok(mut manifest) = serde_json::from_value::<Manifest>(value.clone()) {
                        manifest.checksum = None;
                        manifest.checksum = Some(checksum(&manifest));
                        return serde_json::to_vec_pretty(&manifest).unwrap();
                    }
                }
            }
            serde_json::to_vec_pretty(&value).unwrap()
        }
    }
}

/// What loupe itself writes into a record, so what a decoded one must hold.
fn check_decoded(manifest: &Manifest, name: Option<&str>) -> Result<(), String> {
    if !matches!(manifest.state.as_str(), "pending" | "committed") {
        return Err(format!("state {}", manifest.state));
    }
    match name {
        Some(name) => {
            if manifest.kind != "edit" || name.parse::<u64>().ok() != Some(manifest.seq) {
                return Err(format!("kind {} seq {} in {name}", manifest.kind, manifest.seq));
            }
            if manifest.id != format!("tx-{}", manifest.seq) {
                return Err(format!("id {} for seq {}", manifest.id, manifest.seq));
            }
        }
        None => {
            if !matches!(manifest.kind.as_str(), "undo" | "redo") || manifest.of.is_none() {
                return Err(format!("op record of kind {} naming {:?}", manifest.kind, manifest.of));
            }
        }
    }
    for dir in &manifest.created_dirs {
        let normal = RepoPath::normalize(dir);
        if normal.as_ref().is_none_or(|path| path.is_root() || path.as_str() != dir) || dir.contains('\0') {
            return Err(format!("created directory {dir:?}"));
        }
    }
    let mut seen = std::collections::HashSet::new();
    for file in &manifest.files {
        let normal = RepoPath::normalize(&file.path);
        if normal.as_ref().is_none_or(|path| path.is_root() || path.as_str() != file.path) || file.path.contains('\0') {
            return Err(format!("path {:?}", file.path));
        }
        if !seen.insert(file.path.as_str()) {
            return Err(format!("path {:?} twice", file.path));
        }
        for (hash, at) in [(&file.old, file.old_at), (&file.new, file.new_at)] {
            if let Some(hash) = hash
                && (ContentHash::parse(hash).is_none() || at.is_none())
            {
                return Err(format!("hash {hash:?} at {at:?}"));
            }
        }
        for mode in [file.old_mode, file.new_mode].into_iter().flatten() {
            if mode > 0o7777 {
                return Err(format!("mode {mode:o} of {:?}", file.path));
            }
        }
    }
    Ok(())
}

/// Counts of what the journal harness saw, for `bench/results/fuzz.md`.
#[derive(Default)]
struct Counts {
    executions: AtomicU64,
    decoded: AtomicU64,
    blobs_read: AtomicU64,
    blobs_refused: AtomicU64,
}

#[test]
fn fuzz_journal_record_decoding() {
    crate::testing::cap_address_space();
    let records = records();
    let counts = Counts::default();
    let strategy = (
        0..records.manifests.len(),
        manifest_damage(),
        prop::collection::vec(damage(), 0..3),
        prop_oneof![6 => Just(None), 1 => Just(Some("0000000002")), 1 => Just(Some("9999999999"))],
    );
    let started = Instant::now();
    let config = Config { cases: cases(), failure_persistence: None, max_shrink_iters: 10_000, ..Config::default() };
    let result = TestRunner::new(config).run(&strategy, |(which, damage, data_damage, other_name)| {
        counts.executions.fetch_add(1, Ordering::Relaxed);
        let (original, name) = &records.manifests[which];
        let name = other_name.or(name.as_deref());
        let manifest = damaged_manifest(original, &damage);
        let mut data = records.data.clone();
        apply(&mut data, &data_damage);
        let Ok(decoded) = decode_manifest(&manifest, name) else { return Ok(()) };
        counts.decoded.fetch_add(1, Ordering::Relaxed);
        if let Err(what) = check_decoded(&decoded, name) {
            return Err(proptest::test_runner::TestCaseError::fail(format!(
                "a record loupe never writes decoded ({what}): {}",
                String::from_utf8_lossy(&manifest)
            )));
        }
        for file in &decoded.files {
            for (hash, at) in [(&file.old, file.old_at), (&file.new, file.new_at)] {
                let (Some(hash), Some(at)) = (hash, at) else { continue };
                match blob_at(Cursor::new(&data), data.len() as u64, at, hash) {
                    Ok(bytes) => {
                        counts.blobs_read.fetch_add(1, Ordering::Relaxed);
                        prop_assert!(bytes.len() <= data.len());
                        let got = ContentHash::of(&bytes);
                        prop_assert_eq!(got.as_str(), hash.as_str());
                    }
                    Err(_) => {
                        counts.blobs_refused.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }
        Ok(())
    });
    eprintln!(
        "fuzz harness journal_record: {} executions in {:.1} s: {} manifests decoded, {} blobs read back, {} refused",
        counts.executions.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64(),
        counts.decoded.load(Ordering::Relaxed),
        counts.blobs_read.load(Ordering::Relaxed),
        counts.blobs_refused.load(Ordering::Relaxed),
    );
    if let Err(error) = result {
        panic!("fuzz harness journal_record failed: {error}");
    }
}

// What the harness found (J1–J3): the decoder accepted records loupe never writes. Each is now
// refused as damaged, so start-up quarantines the record instead of acting on it.

fn committed() -> Manifest {
    let (bytes, name) = &records().manifests[0];
    decode_manifest(bytes, name.as_deref()).unwrap()
}

fn sealed(mut manifest: Manifest) -> Vec<u8> {
    manifest.checksum = None;
    manifest.checksum = Some(checksum(&manifest));
    serde_json::to_vec_pretty(&manifest).unwrap()
}

#[test]
fn j1_a_record_naming_a_file_twice_is_damaged() {
    let mut manifest = committed();
    let mut twice = manifest.files[1].clone();
    twice.path = manifest.files[0].path.clone();
    manifest.files.push(twice);
    let error = decode_manifest(&sealed(manifest), Some("0000000001")).unwrap_err();
    assert!(error.contains("twice"), "{error}");
}

#[test]
fn j2_a_record_path_that_is_not_normal_is_damaged() {
    for path in ["./a.txt", "/a.txt", "sub//b.txt", "sub/../a.txt", "a.txt/", "a\0.txt"] {
        let mut manifest = committed();
        manifest.files[0].path = path.to_owned();
        let error = decode_manifest(&sealed(manifest), Some("0000000001")).unwrap_err();
        assert!(error.contains("not a normal path"), "{path:?}: {error}");
    }
}

#[test]
fn j3_a_mode_beyond_permission_bits_is_damaged() {
    for mode in [0o104_755, 0o10000, u32::MAX] {
        let mut manifest = committed();
        manifest.files[0].old_mode = Some(mode);
        let error = decode_manifest(&sealed(manifest), Some("0000000001")).unwrap_err();
        assert!(error.contains("permission bits"), "{mode:o}: {error}");
    }
    // A setuid bit loupe found on the file is kept: it is a permission bit.
    let mut manifest = committed();
    manifest.files[0].old_mode = Some(0o4755);
    decode_manifest(&sealed(manifest), Some("0000000001")).unwrap();
}

/// J3 through start-up: an interrupted record whose mode carries more than permission bits
/// is quarantined, and the file is left as it is. Before the fix recovery rolled `a.txt` back
/// with mode 07777 (`fchmod` keeps the low twelve bits: setuid, setgid, sticky, world-writable).
#[test]
fn j3_recovery_never_restores_a_file_with_a_forged_mode() {
    let repo = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(repo.path().join("a.txt"), b"alpha\r\nBETA\r\n").unwrap();
    let record = state.path().join("journal/0000000001");
    std::fs::create_dir_all(&record).unwrap();
    let mut manifest = committed();
    manifest.state = "pending".into();
    manifest.files.truncate(1);
    manifest.files[0].old_mode = Some(0o107_777);
    std::fs::write(record.join("manifest.json"), sealed(manifest)).unwrap();
    std::fs::write(record.join("data"), &records().data).unwrap();
    let root = Root::open(repo.path(), Exclusions::new(&[], &[]).unwrap()).unwrap();
    let (_journal, recovery) = Journal::open(root, state.path().join("journal")).unwrap();
    assert_eq!(recovery.quarantined.len(), 1, "{recovery:?}");
    let file = repo.path().join("a.txt");
    assert_eq!(std::fs::read(&file).unwrap(), b"alpha\r\nBETA\r\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o7000, 0);
    }
}
