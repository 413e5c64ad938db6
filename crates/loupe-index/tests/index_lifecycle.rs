//! The index's life: a cold build, a restart that sees changes made while stopped, a format
//! change that rebuilds cleanly, two processes on one root, and the watcher following edits.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use loupe_core::config::DEFAULT_EXCLUDE;
use loupe_index::trigram::plan_literal;
use loupe_index::{Index, IndexOptions, IndexState};
use loupe_vfs::{Exclusions, Root};

fn root(dir: &Path) -> Root {
    let exclude: Vec<String> = DEFAULT_EXCLUDE.iter().map(|s| (*s).to_owned()).collect();
    Root::open(dir, Exclusions::new(&exclude, &[]).unwrap()).unwrap()
}

fn open(dir: &Path, index_dir: &Path) -> Index {
    Index::open(root(dir), IndexOptions { index_dir: index_dir.to_path_buf(), max_file_bytes: 1 << 20, threads: 2 })
}

pub(crate) fn write(dir: &Path, path: &str, body: &str) {
    let full = dir.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, body).unwrap();
}

pub(crate) fn candidates(index: &Index, literal: &str) -> Vec<String> {
    index.text_candidates(&plan_literal(literal)).iter().map(|path| path.as_str().to_owned()).collect()
}

fn workspace() -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "src/lib.rs", "pub fn alpha_one() {}\npub struct Beta;\n");
    write(dir.path(), "src/util.py", "def gamma_two():\n    return 2\n");
    write(dir.path(), "notes.md", "delta three\n");
    (dir, tempfile::tempdir().unwrap())
}

#[test]
fn cold_build_then_restart_sees_changes_made_while_stopped() {
    let (dir, index_dir) = workspace();
    let index = open(dir.path(), index_dir.path());
    assert_eq!(index.state(), IndexState::Building);
    let stats = index.refresh(&|_, _| {});
    assert!(stats.full_rebuild);
    assert_eq!((stats.walked, stats.reindexed), (3, 3));
    assert_eq!(index.symbols_named("alpha_one").len(), 1);
    assert_eq!(candidates(&index, "gamma_two"), ["src/util.py"]);
    drop(index);

    // While stopped: one file edited, one added, one deleted.
    write(dir.path(), "src/lib.rs", "pub fn alpha_renamed() {}\npub struct Beta;\n");
    write(dir.path(), "src/new.go", "package main\n\nfunc Epsilon() {}\n");
    std::fs::remove_file(dir.path().join("notes.md")).unwrap();

    let index = open(dir.path(), index_dir.path());
    assert_eq!(index.state(), IndexState::Building, "opening loads nothing");
    assert!(index.load_snapshot());
    assert_eq!(index.state(), IndexState::Ready, "a valid snapshot is served before any refresh");
    assert_eq!(index.symbols_named("alpha_one").len(), 1, "still the snapshot");
    let stats = index.refresh(&|_, _| {});
    assert_eq!((stats.unchanged, stats.removed), (1, 1), "{stats:?}");
    assert!(index.symbols_named("alpha_one").is_empty());
    assert_eq!(index.symbols_named("alpha_renamed").len(), 1);
    assert_eq!(index.symbols_named("Epsilon").len(), 1);
    assert!(candidates(&index, "delta three").is_empty());
    assert_eq!(candidates(&index, "alpha_renamed"), ["src/lib.rs"]);
}

/// The files over the size limit are not indexed: searches read them directly, so the index
/// lists them. A loaded snapshot lists them before this process has walked the tree (a warm
/// server's first searches missed them, and a benchmark took "none to summarise" for settled),
/// and a changed path joins or leaves the list as a walk would put it.
#[test]
fn the_files_over_the_size_limit_are_known_from_the_snapshot_and_follow_changes() {
    let (dir, index_dir) = workspace();
    let small = |dir: &Path, index_dir: &Path| {
        Index::open(root(dir), IndexOptions { index_dir: index_dir.to_path_buf(), max_file_bytes: 64, threads: 2 })
    };
    let large = "x".repeat(100);
    write(dir.path(), "big/table.h", &large);
    let index = small(dir.path(), index_dir.path());
    index.refresh(&|_, _| {});
    let listed =
        |index: &Index| index.oversized().into_iter().map(|entry| entry.path.as_str().to_owned()).collect::<Vec<_>>();
    assert_eq!(listed(&index), ["big/table.h"]);
    drop(index);

    let index = small(dir.path(), index_dir.path());
    assert!(listed(&index).is_empty(), "opening loads nothing");
    assert!(index.load_snapshot());
    assert_eq!(listed(&index), ["big/table.h"], "known before any walk");
    let entry = &index.oversized()[0];
    assert_eq!(entry.size, 100);

    // Grows over the limit, shrinks under it, is deleted: one update each, no walk.
    write(dir.path(), "a/grown.rs", &large);
    index.update_paths(&[loupe_core::RepoPath::normalize("a/grown.rs").unwrap()]);
    assert_eq!(listed(&index), ["a/grown.rs", "big/table.h"], "in path order");
    write(dir.path(), "big/table.h", "small\n");
    std::fs::remove_file(dir.path().join("a/grown.rs")).unwrap();
    index.update_paths(&[
        loupe_core::RepoPath::normalize("a/grown.rs").unwrap(),
        loupe_core::RepoPath::normalize("big/table.h").unwrap(),
    ]);
    assert!(listed(&index).is_empty());
    assert_eq!(candidates(&index, "small"), ["big/table.h"], "indexed once under the limit");
}

#[test]
fn a_format_change_or_corrupt_snapshot_rebuilds_cleanly() {
    let (dir, index_dir) = workspace();
    open(dir.path(), index_dir.path()).refresh(&|_, _| {});
    std::fs::write(index_dir.path().join("tables.bin"), b"not a snapshot").unwrap();
    let index = open(dir.path(), index_dir.path());
    assert_eq!(index.state(), IndexState::Building);
    let stats = index.refresh(&|_, _| {});
    assert!(stats.full_rebuild);
    assert_eq!(index.symbols_named("Beta").len(), 1);
}

#[test]
fn two_indexes_on_one_root_have_one_writer() {
    let (dir, index_dir) = workspace();
    let first = open(dir.path(), index_dir.path());
    let second = open(dir.path(), index_dir.path());
    assert!(first.is_writer());
    assert!(!second.is_writer());
    first.refresh(&|_, _| {});
    second.refresh(&|_, _| {});
    assert_eq!(second.symbols_named("gamma_two").len(), 1);
    drop(first);
    let third = open(dir.path(), index_dir.path());
    assert!(third.is_writer(), "the lock is released when the writer goes away");
}

/// The fixture workspace, indexed, with a watcher on it.
fn watched_workspace() -> (tempfile::TempDir, tempfile::TempDir, Arc<Index>, loupe_index::IndexWatcher) {
    let (dir, index_dir) = workspace();
    let index = Arc::new(open(dir.path(), index_dir.path()));
    index.refresh(&|_, _| {});
    let watcher = loupe_index::watch(Arc::clone(&index)).unwrap();
    (dir, index_dir, index, watcher)
}

/// Polls `done` until it holds, failing with `what` after 10 s.
fn wait_for(what: &str, done: impl Fn() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < Duration::from_secs(10), "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_watcher_makes_a_new_file_searchable() {
    let (dir, _index_dir, index, _watcher) = watched_workspace();
    write(dir.path(), "src/fresh.rs", "pub fn zeta_watched() {}\n");
    wait_for("the watcher never picked up the new file", || !index.symbols_named("zeta_watched").is_empty());
    assert_eq!(candidates(&index, "zeta_watched"), ["src/fresh.rs"]);
    std::fs::remove_file(dir.path().join("src/fresh.rs")).unwrap();
    wait_for("the watcher never saw the deletion", || index.symbols_named("zeta_watched").is_empty());
}

/// A file written after the index's last walk but before its watcher started made no event:
/// the watcher's start reconciles with the disk, so it is found all the same.
#[test]
fn a_file_written_before_the_watcher_started_is_found() {
    let (dir, index_dir) = workspace();
    let index = Arc::new(open(dir.path(), index_dir.path()));
    index.refresh(&|_, _| {});
    write(dir.path(), "src/between.rs", "pub fn written_in_the_gap() {}\n");
    assert!(index.symbols_named("written_in_the_gap").is_empty(), "the index has not seen it yet");
    let _watcher = loupe_index::watch(Arc::clone(&index)).unwrap();
    wait_for("a file written before the watcher started was never found", || {
        !index.symbols_named("written_in_the_gap").is_empty()
    });
    assert_eq!(candidates(&index, "written_in_the_gap"), ["src/between.rs"]);
}

/// A watcher prepared before a refresh (as a server's first build is) queues what changes
/// after its watches exist, and applies it once started: a file written after the refresh's
/// walk needs no walk of its own.
#[test]
fn a_prepared_watcher_applies_what_changed_before_it_started() {
    let (dir, index_dir) = workspace();
    let index = Arc::new(open(dir.path(), index_dir.path()));
    let prepared = loupe_index::prepare_watch(Arc::clone(&index)).unwrap();
    index.refresh(&|_, _| {});
    write(dir.path(), "src/during.rs", "pub fn written_while_building() {}\n");
    std::thread::sleep(Duration::from_millis(200));
    assert!(index.symbols_named("written_while_building").is_empty(), "nothing is applied before the start");
    let _watcher = prepared.start().unwrap();
    wait_for("a change queued before the start was never applied", || {
        !index.symbols_named("written_while_building").is_empty()
    });
    assert_eq!(candidates(&index, "written_while_building"), ["src/during.rs"]);
}

/// S1 at its source: reading files in a watched tree (as every search does, and any other
/// process may) is no event at all for the watcher, while a write is applied.
#[cfg(target_os = "linux")]
#[test]
fn s1_reads_in_a_watched_tree_are_not_events() {
    let (dir, _index_dir, index, watcher) = watched_workspace();
    for _ in 0..50 {
        for file in ["src/lib.rs", "src/util.py", "notes.md"] {
            std::fs::read(dir.path().join(file)).unwrap();
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(watcher.paths_applied(), 0, "reads were taken for changes");
    write(dir.path(), "src/lib.rs", "pub fn omega_written() {}\n");
    wait_for("the write was never applied", || !index.symbols_named("omega_written").is_empty());
    assert!(watcher.paths_applied() >= 1);
    // A directory made after the watch started is watched too, and its files are read.
    write(dir.path(), "later/deep/new.rs", "pub fn psi_in_new_dir() {}\n");
    wait_for("the new directory was never read", || !index.symbols_named("psi_in_new_dir").is_empty());
    write(dir.path(), "later/deep/second.rs", "pub fn chi_second() {}\n");
    wait_for("the new directory is not watched", || !index.symbols_named("chi_second").is_empty());
    drop(watcher);
}

/// A query that asks for the snapshot while another thread is loading it waits for that load
/// and sees the index ready, rather than finding it "loaded" with nothing in it.
#[test]
fn concurrent_snapshot_loads_both_see_the_loaded_index() {
    let (dir, index_dir) = workspace();
    for index in 0..40 {
        write(dir.path(), &format!("more/file_{index}.rs"), &format!("pub fn generated_{index}() {{}}\n"));
    }
    open(dir.path(), index_dir.path()).refresh(&|_, _| {});
    for _ in 0..5 {
        let index = Arc::new(open(dir.path(), index_dir.path()));
        let barrier = Arc::new(std::sync::Barrier::new(2));
        let loaders: Vec<_> = (0..2)
            .map(|_| {
                let (index, barrier) = (Arc::clone(&index), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    index.load_snapshot()
                })
            })
            .collect();
        for loader in loaders {
            assert!(loader.join().unwrap(), "a loader returned before the snapshot was in memory");
        }
        assert_eq!(index.symbols_named("generated_7").len(), 1);
    }
}

/// Candidates and files come in path order, also for files added after the build (whose doc
/// ids come last).
#[test]
fn files_added_later_still_come_in_path_order() {
    let (dir, index_dir) = workspace();
    let index = open(dir.path(), index_dir.path());
    index.refresh(&|_, _| {});
    write(dir.path(), "aaa/first.rs", "pub fn shared_marker() {}\n");
    write(dir.path(), "src/middle.rs", "pub fn shared_marker() {}\n");
    write(dir.path(), "zzz/last.rs", "pub fn shared_marker() {}\n");
    let added: Vec<_> = ["zzz/last.rs", "aaa/first.rs", "src/middle.rs"]
        .iter()
        .map(|path| loupe_core::RepoPath::normalize(path).unwrap())
        .collect();
    index.update_paths(&added);
    assert_eq!(candidates(&index, "shared_marker"), ["aaa/first.rs", "src/middle.rs", "zzz/last.rs"]);
    let files: Vec<String> = index.files().iter().map(|record| record.path.as_str().to_owned()).collect();
    let mut sorted = files.clone();
    sorted.sort();
    assert_eq!(files, sorted);
    assert_eq!(files.len(), 6);
}

fn imports_of(index: &Index, path: &str) -> Vec<String> {
    let path = loupe_core::RepoPath::normalize(path).unwrap();
    index
        .links_of(&path)
        .map(|links| links.imports.iter().map(|import| import.module.clone()).collect())
        .unwrap_or_default()
}

#[test]
fn imports_and_type_relations_follow_edits_and_survive_a_restart() {
    let (dir, index_dir) = workspace();
    write(dir.path(), "src/app.py", "import os\nfrom .util import gamma_two\n\nclass App(Base):\n    pass\n");
    let index = open(dir.path(), index_dir.path());
    index.refresh(&|_, _| {});
    assert_eq!(imports_of(&index, "src/app.py"), ["os", "util"]);
    let mut seen = Vec::new();
    index.for_each_links(&mut |record, links| {
        for relation in &links.type_relations {
            seen.push(format!("{}: {} < {}", record.path.as_str(), relation.subtype, relation.supertype));
        }
    });
    assert_eq!(seen, ["src/app.py: App < Base"]);

    let before = index.generation();
    write(dir.path(), "src/app.py", "import sys\n");
    index.update_paths(&[loupe_core::RepoPath::normalize("src/app.py").unwrap()]);
    assert!(index.generation() > before, "a re-indexed file moves the generation");
    assert_eq!(imports_of(&index, "src/app.py"), ["sys"]);
    let mut relations = 0;
    index.for_each_links(&mut |_, links| relations += links.type_relations.len());
    assert_eq!(relations, 0, "the class is gone with its relation");
    drop(index);

    // Edited while stopped: the snapshot's links are served, then reconciled.
    write(
        dir.path(),
        "src/app.py",
        "import json
",
    );
    let index = open(dir.path(), index_dir.path());
    assert!(index.load_snapshot());
    assert_eq!(imports_of(&index, "src/lib.rs"), Vec::<String>::new());
    assert_eq!(imports_of(&index, "src/app.py"), ["os", "util"], "links come back from the snapshot");
    index.refresh(&|_, _| {});
    assert_eq!(imports_of(&index, "src/app.py"), ["json"]);
}

/// The first minute on a repository: a build the end of a session interrupts is kept as a
/// checkpoint. Loaded, it serves what it holds as `building`; the next build copies those
/// files instead of parsing them again, picks up a file changed meanwhile, and ends with the
/// same answers as a cold build.
#[test]
fn an_interrupted_build_is_a_checkpoint_the_next_build_resumes_from() {
    let dir = tempfile::tempdir().unwrap();
    for n in 0..12 {
        write(dir.path(), &format!("src/m{n:02}.py"), &format!("def func_{n:02}():\n    return {n}\n"));
    }
    let index_dir = tempfile::tempdir().unwrap();
    let index = Arc::new(open(dir.path(), index_dir.path()));
    // The session ends when 5 files are done (the check comes after each file).
    let stopper = Arc::clone(&index);
    let stats = index.refresh(&move |done, _| {
        if done == 5 {
            stopper.interrupt_build();
        }
    });
    assert!(stats.interrupted && stats.full_rebuild, "{stats:?}");
    assert_eq!(stats.reindexed, 5, "{stats:?}");
    assert_eq!(index.state(), IndexState::Building, "an interrupted build is not ready");
    assert_eq!(index.symbols_named("func_04").len(), 1, "what was built is served meanwhile");
    drop(index);
    let leftovers: Vec<_> = std::fs::read_dir(index_dir.path())
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // Meanwhile a checkpointed file changes.
    write(dir.path(), "src/m01.py", "def func_renamed():\n    return 1\n");
    let index = open(dir.path(), index_dir.path());
    assert!(!index.load_snapshot(), "a checkpoint does not make the index ready");
    assert_eq!(index.state(), IndexState::Building);
    assert_eq!(index.symbols_named("func_03").len(), 1, "the checkpoint is served");
    assert!(index.symbols_named("func_09").is_empty(), "beyond the checkpoint: not yet");
    let stats = index.refresh(&|_, _| {});
    assert!(!stats.interrupted && stats.full_rebuild, "{stats:?}");
    assert_eq!((stats.reused, stats.reindexed), (4, 8), "{stats:?}");
    assert_eq!(index.state(), IndexState::Ready);

    // The same answers as a cold build of the same tree.
    let cold_dir = tempfile::tempdir().unwrap();
    let cold = open(dir.path(), cold_dir.path());
    cold.refresh(&|_, _| {});
    for name in ["func_00", "func_01", "func_renamed", "func_04", "func_05", "func_11"] {
        let resumed: Vec<_> = index.symbols_named(name).into_iter().map(|hit| (hit.path, hit.symbol)).collect();
        let built: Vec<_> = cold.symbols_named(name).into_iter().map(|hit| (hit.path, hit.symbol)).collect();
        assert_eq!(resumed, built, "{name}");
    }
    assert_eq!(candidates(&index, "return 7"), candidates(&cold, "return 7"));
    assert_eq!(candidates(&index, "func_02"), ["src/m02.py"]);
    assert_eq!(index.status().files, 12);
    drop(index);
    // Persisted complete: the next session is ready from its snapshot.
    let index = open(dir.path(), index_dir.path());
    assert!(index.load_snapshot());
}

/// A checkpoint whose missing files were deleted before the next session covers the whole tree:
/// the next refresh has nothing to parse, and still writes the snapshot back as complete.
#[test]
fn a_checkpoint_that_covers_the_tree_is_persisted_complete() {
    let dir = tempfile::tempdir().unwrap();
    for n in 0..6 {
        write(dir.path(), &format!("src/m{n}.py"), &format!("def func_{n}():\n    return {n}\n"));
    }
    let index_dir = tempfile::tempdir().unwrap();
    let index = Arc::new(open(dir.path(), index_dir.path()));
    let stopper = Arc::clone(&index);
    assert!(
        index
            .refresh(&move |done, _| if done == 3 {
                stopper.interrupt_build()
            })
            .interrupted
    );
    drop(index);
    for n in 3..6 {
        std::fs::remove_file(dir.path().join(format!("src/m{n}.py"))).unwrap();
    }
    let index = open(dir.path(), index_dir.path());
    let stats = index.refresh(&|_, _| {});
    assert!(!stats.full_rebuild && stats.reindexed == 0, "{stats:?}");
    assert_eq!(index.state(), IndexState::Ready);
    drop(index);
    assert!(open(dir.path(), index_dir.path()).load_snapshot(), "the snapshot on disk is complete now");
}
