//! The process's heap as its allocator counts it: what `manage metrics` carries in its full
//! envelope (`metrics.heap`), so that a soak can tell memory the program holds (`allocated`)
//! from memory the allocator keeps mapped (`resident`), and a leak from retention.
//!
//! Libraries do not choose the allocator; a binary does, and registers how to read it with
//! `set_probe` once at start. Without a probe (the engine in tests, a library user) there are
//! no figures, and `manage metrics` leaves the field out.

use std::sync::OnceLock;

/// The allocator's own counts, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapFigures {
    /// Which allocator counted them.
    pub allocator: &'static str,
    /// Bytes in blocks the program holds now.
    pub allocated: u64,
    /// Bytes in pages the allocator keeps mapped and resident (held, free or metadata).
    pub resident: u64,
}

static PROBE: OnceLock<fn() -> Option<HeapFigures>> = OnceLock::new();

/// Registers how to read the heap; the first registration wins.
pub fn set_probe(probe: fn() -> Option<HeapFigures>) {
    let _ = PROBE.set(probe);
}

/// The heap now, when a probe is registered and it answers.
pub fn figures() -> Option<HeapFigures> {
    PROBE.get().and_then(|probe| probe())
}
