//! `Engine`: one workspace root served: the `Workspace` the tools share, the session layer
//! (§9), the latency log and the legacy names' counters, and the dispatcher every adapter calls
//! (`call_in`, `call`, in `dispatch.rs`).

use std::path::Path;
use std::sync::Arc;

use loupe_core::Config;
use loupe_index::Index;

use crate::session;
use crate::workspace::{OpenError, Workspace};

/// loupe's engine for one workspace root.
#[derive(Debug)]
pub struct Engine {
    workspace: Arc<Workspace>,
    /// The session layer (§9): every read and search passes through it.
    session: session::SessionLayer,
    /// Calls per legacy name (§12), for `manage metrics`.
    pub(crate) legacy_calls: crate::legacy::LegacyCounts,
    /// Where calls spend their time, stage by stage (`manage metrics`); a server shares one
    /// with its transport (`with_latency_log`).
    latency: Arc<crate::latency::LatencyLog>,
}

impl Engine {
    /// Opens the engine on `config.root` (which `config::load` always sets).
    pub fn new(config: Config) -> Result<Engine, OpenError> {
        let workspace = Workspace::open(config)?;
        let session = session::SessionLayer::new(workspace.config(), workspace.root_path(), workspace.index_dir());
        Ok(Engine {
            workspace: Arc::new(workspace),
            session,
            legacy_calls: Default::default(),
            latency: Default::default(),
        })
    }

    /// Files the engine's stage durations in `log`, which the server's transport shares.
    pub fn with_latency_log(mut self, log: Arc<crate::latency::LatencyLog>) -> Engine {
        self.latency = log;
        self
    }

    /// Where calls spend their time, stage by stage.
    pub fn latency(&self) -> &Arc<crate::latency::LatencyLog> {
        &self.latency
    }

    /// What the tools share: configuration, root, index, journal and caches.
    pub(crate) fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The index, when this engine has one. Lookups from it are proposals to verify.
    pub fn index(&self) -> Option<&Arc<Index>> {
        self.workspace.index()
    }

    /// Brings the index up to date with the disk (a cold build the first time).
    pub fn refresh_index(&self, progress: &(dyn Fn(usize, usize) + Sync)) -> Option<loupe_index::RefreshStats> {
        self.workspace.refresh_index(progress)
    }

    /// For a long-running server: builds or reconciles the index on a background thread,
    /// then keeps it current with a file watcher. Queries meanwhile are served from what is
    /// ready, marked `index_state: building`.
    pub fn start_background_indexing(&self) {
        self.workspace.start_background_indexing_after(std::time::Duration::ZERO);
    }

    /// `start_background_indexing`, the build held back by `delay` (a test hook, so tests can
    /// watch a server whose build is still running); calls wait for it from now on.
    #[cfg(feature = "test-hooks")]
    pub fn start_background_indexing_after(&self, delay: std::time::Duration) {
        self.workspace.start_background_indexing_after(delay);
    }

    pub fn config(&self) -> &Config {
        self.workspace.config()
    }

    /// The canonical workspace root.
    pub fn root_path(&self) -> &Path {
        self.workspace.root_path()
    }

    pub(crate) fn session_layer(&self) -> &session::SessionLayer {
        &self.session
    }

    /// True while a file watcher keeps the index current.
    pub fn is_watching(&self) -> bool {
        self.workspace.is_watching()
    }

    /// Writes the analytics events still queued (waiting at most `timeout`): for a process
    /// about to exit, since the writer otherwise batches over 25 ms.
    pub fn flush_analytics(&self, timeout: std::time::Duration) {
        self.session.analytics().flush(timeout);
    }

    /// Test hook: analytics go to a queue of `capacity` that nothing drains, so its overflow
    /// (and `drop_count_by_type`) is deterministic. Never for serving.
    #[cfg(feature = "test-hooks")]
    pub fn park_analytics_for_tests(&mut self, capacity: usize) {
        self.session.replace_analytics(session::analytics::AnalyticsQueue::parked(capacity));
    }
}
