//! The timed race of finding R3 (docs/findings.md), not run in CI: while one thread exchanges a
//! directory of the root with a symlink to the outside (`renameat2(RENAME_EXCHANGE)`, every ~2 ms),
//! others create, overwrite, delete, undo and redo files in that directory through the journal and
//! read one of its files. Prints how many writes and reads ran and how many landed outside the root
//! or returned outside bytes; exits 1 if any did.
//!
//! `cargo run --release -p loupe-vfs --example race_exchange -- [seconds=20]`

// Linux only: the race exchanges a directory with a link by `renameat2(RENAME_EXCHANGE)`.
#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("race_exchange runs on Linux only (it needs renameat2(RENAME_EXCHANGE))");
    std::process::exit(2);
}

#[cfg(target_os = "linux")]
fn main() {
    linux::race();
}

#[cfg(target_os = "linux")]
mod linux {
    use std::fs;
    use std::path::Path;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::time::{Duration, Instant};

    use loupe_core::{ContentHash, RepoPath};
    use loupe_vfs::{ApplyError, Exclusions, FileChange, Journal, Plan, Root};

    #[derive(Default)]
    struct Counts {
        exchanges: AtomicU64,
        writes_applied: AtomicU64,
        writes_refused: AtomicU64,
        writes_stale: AtomicU64,
        /// Why writes were refused, by error variant.
        refusals: std::sync::Mutex<std::collections::BTreeMap<String, u64>>,
        undo_redo: AtomicU64,
        reads_inside: AtomicU64,
        reads_refused: AtomicU64,
        reads_outside: AtomicU64,
    }

    pub(crate) fn race() {
        let seconds: u64 = std::env::args().nth(1).and_then(|arg| arg.parse().ok()).unwrap_or(20);
        let repo = tempfile::tempdir().expect("a temporary directory");
        let outside = tempfile::tempdir().expect("a temporary directory");
        let state = tempfile::tempdir().expect("a temporary directory");
        fs::create_dir(repo.path().join("sub")).expect("sub/");
        fs::write(repo.path().join("sub/read.txt"), "inside\n").expect("sub/read.txt");
        fs::write(outside.path().join("read.txt"), "OUTSIDE\n").expect("outside/read.txt");
        std::os::unix::fs::symlink(outside.path(), repo.path().join("sublink")).expect("sublink");

        let root = Root::open(repo.path(), Exclusions::new(&[".git/".into()], &[]).expect("rules")).expect("root");
        let journal = Arc::new(Journal::open(root.clone(), state.path().join("journal")).expect("journal").0);
        let counts = Arc::new(Counts::default());
        let stop = Arc::new(AtomicBool::new(false));
        let deadline = Instant::now() + Duration::from_secs(seconds);

        let exchanger = {
            let (repo, counts, stop) = (repo.path().to_path_buf(), Arc::clone(&counts), Arc::clone(&stop));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let exchanged = rustix::fs::renameat_with(
                        rustix::fs::CWD,
                        repo.join("sub"),
                        rustix::fs::CWD,
                        repo.join("sublink"),
                        rustix::fs::RenameFlags::EXCHANGE,
                    );
                    if exchanged.is_ok() {
                        counts.exchanges.fetch_add(1, Ordering::Relaxed);
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
            })
        };
        let writers: Vec<_> = (0..2)
            .map(|writer| {
                let (journal, counts, stop) = (Arc::clone(&journal), Arc::clone(&counts), Arc::clone(&stop));
                let repo = repo.path().to_path_buf();
                std::thread::spawn(move || write_loop(writer, &repo, &journal, &counts, &stop))
            })
            .collect();
        let reader = {
            let (root, counts, stop) = (root.clone(), Arc::clone(&counts), Arc::clone(&stop));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match root.resolve("sub/read.txt").and_then(|resolved| root.read(&resolved, 1024)) {
                        Ok(file) if file.bytes == b"OUTSIDE\n" => counts.reads_outside.fetch_add(1, Ordering::Relaxed),
                        Ok(_) => counts.reads_inside.fetch_add(1, Ordering::Relaxed),
                        Err(_) => counts.reads_refused.fetch_add(1, Ordering::Relaxed),
                    };
                }
            })
        };
        while Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        stop.store(true, Ordering::Relaxed);
        exchanger.join().expect("exchanger");
        reader.join().expect("reader");
        for writer in writers {
            writer.join().expect("writer");
        }

        let escaped = files_in(outside.path()).into_iter().filter(|name| name != "read.txt").count();
        let outside_read_changed = fs::read(outside.path().join("read.txt")).ok().as_deref() != Some(&b"OUTSIDE\n"[..]);
        let get = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        println!("race_exchange: {seconds} s, {} exchanges of sub/ with a link to the outside", get(&counts.exchanges));
        println!(
            "writes: {} applied, {} refused, {} stale, {} undo/redo applied",
            get(&counts.writes_applied),
            get(&counts.writes_refused),
            get(&counts.writes_stale),
            get(&counts.undo_redo)
        );
        println!("refusals by reason: {:?}", counts.refusals.lock().map(|reasons| reasons.clone()).unwrap_or_default());
        println!(
            "reads: {} inside, {} refused, {} returned outside bytes",
            get(&counts.reads_inside),
            get(&counts.reads_refused),
            get(&counts.reads_outside)
        );
        println!("files written outside the root: {escaped}; outside file changed: {outside_read_changed}");
        if escaped > 0 || outside_read_changed || get(&counts.reads_outside) > 0 {
            std::process::exit(1);
        }
    }

    /// Creates, overwrites and deletes `sub/w<writer>-<n>.txt`, with an undo and a redo now and
    /// then. Whatever the exchange does, each call either applies inside the root or is refused.
    fn write_loop(writer: usize, repo: &Path, journal: &Journal, counts: &Counts, stop: &AtomicBool) {
        let mut round = 0u64;
        while !stop.load(Ordering::Relaxed) {
            round += 1;
            let path = RepoPath::normalize(&format!("sub/w{writer}-{}.txt", round % 8)).expect("a path");
            let new = format!("round {round}\n").into_bytes();
            // Expect what is there now (read by path: the racer's bookkeeping, not loupe's).
            let current = fs::read(repo.join(path.as_str())).ok();
            let change = FileChange {
                path,
                expected: current.as_deref().map(ContentHash::of),
                new_bytes: if round.is_multiple_of(5) { None } else { Some(new) },
            };
            let counter = match journal.apply(Plan { changes: vec![change], create_dirs: false }) {
                Ok(_) => &counts.writes_applied,
                Err(ApplyError::Stale(_)) => &counts.writes_stale,
                Err(error) => {
                    let kind = format!("{error:?}").split([' ', '(', '{']).take(2).collect::<Vec<_>>().join(" ");
                    if let Ok(mut reasons) = counts.refusals.lock() {
                        *reasons.entry(kind).or_insert(0) += 1;
                    }
                    &counts.writes_refused
                }
            };
            counter.fetch_add(1, Ordering::Relaxed);
            if round.is_multiple_of(7) && journal.undo(None, true).is_ok() {
                counts.undo_redo.fetch_add(1, Ordering::Relaxed);
                if journal.redo(None, true).is_ok() {
                    counts.undo_redo.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    fn files_in(dir: &Path) -> Vec<String> {
        let mut names = Vec::new();
        let mut pending = vec![dir.to_path_buf()];
        while let Some(dir) = pending.pop() {
            for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
                if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                    pending.push(entry.path());
                } else {
                    names.push(entry.file_name().to_string_lossy().into_owned());
                }
            }
        }
        names
    }
}
