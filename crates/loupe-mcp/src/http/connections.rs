//! The TCP connections of `serve_http`: accepted here, each served by hyper (HTTP/1.1) with a
//! time limit on request heads, and counted against a cap.
//!
//! Owns the one defence against clients that hold connections without finishing a request
//! (slowloris, half-open connections): a connection is *busy* only from the moment its request
//! body has been read whole (`ConnectionTag::busy`, taken in `http.rs`) until its response body
//! is dropped; otherwise it is *idle*. Hyper closes a connection whose request head is not
//! complete within `header_timeout` (which also bounds keep-alive idleness between requests).
//! At `max_connections` a new connection takes the place of the connection idle the longest;
//! when every one is busy, it is answered 503 and closed. So idle connections never starve a
//! client that sends a request. Knows nothing of MCP: requests go to the router it is given.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// How long a stopping server lets its connections finish the requests in flight.
const DRAIN: Duration = Duration::from_secs(2);

/// The read buffer of a connection, and so the largest request head.
const HEAD_BUFFER: usize = 64 << 10;

/// How long the accept loop pauses after a failed accept (out of file descriptors, mostly),
/// so that it does not spin while the connections it holds wind down.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// The connection a request arrived on: in every request's extensions.
#[derive(Clone)]
pub(crate) struct ConnectionTag {
    slot: Arc<Slot>,
}

impl ConnectionTag {
    /// A number no other connection of this server has had.
    pub(crate) fn id(&self) -> u64 {
        self.slot.id
    }

    /// Marks the connection busy until the returned guard is dropped.
    pub(crate) fn busy(&self) -> Busy {
        let mut state = self.slot.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.busy += 1;
        Busy { slot: Arc::clone(&self.slot) }
    }
}

/// While alive, the connection it came from is not idle (see the module comment).
pub(crate) struct Busy {
    slot: Arc<Slot>,
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut state = self.slot.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.busy -= 1;
        if state.busy == 0 {
            state.idle_since = Instant::now();
        }
    }
}

/// One live connection.
struct Slot {
    id: u64,
    state: Mutex<SlotState>,
    /// Cancelled to close the connection at once (it was idle the longest at the cap).
    evicted: CancellationToken,
}

struct SlotState {
    busy: usize,
    idle_since: Instant,
}

/// The live connections.
#[derive(Default)]
struct Table {
    slots: Mutex<HashMap<u64, Arc<Slot>>>,
}

impl Table {
    /// Takes connection `id` in, making room at `max` by closing the connection idle the
    /// longest; `None` when all `max` are busy.
    fn admit(&self, id: u64, max: usize) -> Option<Arc<Slot>> {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        if slots.len() >= max {
            let longest_idle = slots
                .values()
                .filter_map(|slot| {
                    let state = slot.state.lock().unwrap_or_else(PoisonError::into_inner);
                    (state.busy == 0).then_some((state.idle_since, slot.id))
                })
                .min()?;
            if let Some(evicted) = slots.remove(&longest_idle.1) {
                tracing::debug!(
                    connection = evicted.id,
                    "closing the connection idle the longest: at the connection cap"
                );
                evicted.evicted.cancel();
            }
        }
        let slot = Arc::new(Slot {
            id,
            state: Mutex::new(SlotState { busy: 0, idle_since: Instant::now() }),
            evicted: CancellationToken::new(),
        });
        slots.insert(id, Arc::clone(&slot));
        Some(slot)
    }

    fn remove(&self, id: u64) {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
    }

    fn is_empty(&self) -> bool {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner).is_empty()
    }
}

/// How connections are held.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnectionLimits {
    pub(crate) max_connections: usize,
    pub(crate) header_timeout: Duration,
}

/// Accepts connections and serves `router` on them until `stop`; then lets the requests in
/// flight finish (bounded) and returns.
pub(crate) async fn serve_connections(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    stop: CancellationToken,
) {
    let table = Arc::new(Table::default());
    let mut next_id = 0u64;
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop.cancelled() => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) => {
                tracing::warn!("accepting a connection failed: {error}");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        next_id += 1;
        let Some(slot) = table.admit(next_id, limits.max_connections) else {
            tokio::spawn(refuse(stream, limits.max_connections));
            continue;
        };
        tokio::spawn(serve_one(stream, slot, router.clone(), limits.header_timeout, stop.clone(), Arc::clone(&table)));
    }
    let drained = async {
        while !table.is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let _ = tokio::time::timeout(DRAIN + Duration::from_millis(200), drained).await;
}

/// Serves one connection until it closes, is evicted, or the server stops.
async fn serve_one(
    stream: TcpStream,
    slot: Arc<Slot>,
    router: Router,
    header_timeout: Duration,
    stop: CancellationToken,
    table: Arc<Table>,
) {
    let _ = stream.set_nodelay(true);
    let tag = ConnectionTag { slot: Arc::clone(&slot) };
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let mut request = request.map(Body::new);
        request.extensions_mut().insert(tag.clone());
        router.clone().oneshot(request)
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    // A request head over 64 KiB is answered 431: an idle connection holds at most that much.
    builder.timer(TokioTimer::new()).header_read_timeout(header_timeout).max_buf_size(HEAD_BUFFER);
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        served = connection.as_mut() => {
            if let Err(error) = served {
                tracing::debug!(connection = slot.id, "connection ended: {error}");
            }
        }
        () = slot.evicted.cancelled() => {}
        () = stop.cancelled() => {
            connection.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(DRAIN, connection).await;
        }
    }
    table.remove(slot.id);
}

/// Answers a connection over the cap, all of whose peers are busy, and closes it.
async fn refuse(mut stream: TcpStream, max: usize) {
    let body = format!(
        "loupe is serving {max} connections, every one with a request in flight (the most it holds); retry in a \
         moment, or restart it with a higher --http-max-connections\n"
    );
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), stream.write_all(response.as_bytes())).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn make_busy(slot: &Arc<Slot>) -> Busy {
        ConnectionTag { slot: Arc::clone(slot) }.busy()
    }

    #[test]
    fn at_the_cap_the_connection_idle_the_longest_makes_room_and_busy_ones_never_do() {
        let table = Table::default();
        let first = table.admit(1, 2).unwrap();
        let second = table.admit(2, 2).unwrap();
        let busy_first = make_busy(&first);
        let third = table.admit(3, 2).expect("the idle one makes room");
        assert!(second.evicted.is_cancelled() && !first.evicted.is_cancelled());
        let _busy_third = make_busy(&third);
        assert!(table.admit(4, 2).is_none(), "every connection is busy");
        drop(busy_first);
        assert!(table.admit(5, 2).is_some(), "the first went idle again");
        assert!(first.evicted.is_cancelled() && !third.evicted.is_cancelled());
    }
}
