//! Where an engine `read` spends its time: the steps of `read(mode=snippet)` replayed one by
//! one through the same public functions the engine calls (vfs resolve and read, BLAKE3 hash,
//! decode, ignore check, rendering the numbered lines, one o200k_base count), each timed on
//! its own. A replica, not the engine itself: the engine is not instrumented, so this tells
//! which step dominates, not the exact split of one call.

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use loupe_core::{Config, ContentHash, text, tokens};
use loupe_vfs::{Exclusions, Root};

use crate::stats::Samples;

/// The steps, in the order the engine runs them.
pub(crate) const STEPS: &[&str] = &[
    "resolve path",
    "read bytes",
    "hash (blake3)",
    "decode + split lines",
    "ignore check",
    "render lines",
    "count tokens",
];

/// Per-step samples, indexed like `STEPS`.
pub(crate) fn measure(
    config: &Config,
    root_dir: &Path,
    target: &str,
    windows: &[(usize, usize)],
) -> Result<Vec<Samples>, String> {
    let exclusions = Exclusions::new(&config.exclude, &config.allow).map_err(|error| error.to_string())?;
    let root = Root::open(root_dir, exclusions).map_err(|error| format!("{error:?}"))?;
    let mut samples: Vec<Samples> = STEPS.iter().map(|_| Samples::with_capacity(windows.len())).collect();
    for &(first, last) in windows {
        let mut clock = Instant::now();
        let mut lap = |step: usize, samples: &mut Vec<Samples>| {
            let now = Instant::now();
            samples[step].push(now - clock);
            clock = now;
        };
        let resolved = root.resolve(target).map_err(|error| format!("{error:?}"))?;
        lap(0, &mut samples);
        let file = root.read(&resolved, config.max_file_bytes).map_err(|error| format!("{error:?}"))?;
        lap(1, &mut samples);
        black_box(ContentHash::of(&file.bytes));
        lap(2, &mut samples);
        let decoded = text::decode(&file.bytes).map_err(|_| format!("`{target}` decodes as binary"))?;
        lap(3, &mut samples);
        black_box(root.is_ignored(&resolved.path, false));
        lap(4, &mut samples);
        let mut payload = String::new();
        let mut chars = 0;
        for number in first..=last {
            let line = text::numbered_line(number, decoded.line(number)) + "\n";
            chars += line.chars().count();
            payload.push_str(&line);
        }
        black_box(chars);
        lap(5, &mut samples);
        black_box(tokens::count(&payload));
        lap(6, &mut samples);
    }
    Ok(samples)
}
