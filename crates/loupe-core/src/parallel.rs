//! Work spread over threads, results taken in order: the one pattern the index build and
//! search verification share; and `Spare`, the pool their large scratch values return to.
//!
//! Owns nothing but the scheduling: items are handed out one at a time from a shared counter
//! (so threads finish together whatever the item sizes), helpers' results travel over a
//! bounded channel (so a slow consumer holds back the helpers rather than buffering
//! everything), and are released to the consumer strictly in item order. The calling thread
//! is one of the workers: between items it releases what is ready, so a search over a few
//! hundred files spawns one thread on two cores, and results rarely wait for a wake-up.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock, PoisonError};

/// The cores this process may use, asked once (`available_parallelism` reads cgroup files on
/// every call); 1 when unknown.
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// Runs `work` on every item on `threads` threads, the caller's among them (each with its own
/// `scratch()` value), and hands the results to `consume` in item order, until `consume`
/// returns false; the workers then stop after the item at hand, and results not yet consumed
/// are dropped. With one thread (or one item) everything runs on the caller's thread.
pub fn map_in_order<T, S, R>(
    items: &[T],
    threads: usize,
    scratch: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, &T) -> R + Sync,
    mut consume: impl FnMut(usize, R) -> bool,
) where
    T: Sync,
    R: Send,
{
    let threads = threads.min(items.len());
    if threads <= 1 {
        let mut state = scratch();
        for (index, item) in items.iter().enumerate() {
            if !consume(index, work(&mut state, item)) {
                return;
            }
        }
        return;
    }
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::sync_channel::<(usize, R)>(threads * 64);
        for _ in 1..threads {
            let (sender, next, stop, scratch, work) = (sender.clone(), &next, &stop, &scratch, &work);
            scope.spawn(move || {
                let mut state = scratch();
                while !stop.load(Ordering::Relaxed) {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(index) else { break };
                    if sender.send((index, work(&mut state, item))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        let mut state = scratch();
        let mut pending: BTreeMap<usize, R> = BTreeMap::new();
        let mut expected = 0;
        loop {
            pending.extend(receiver.try_iter());
            while let Some(result) = pending.remove(&expected) {
                if !consume(expected, result) {
                    stop.store(true, Ordering::Relaxed);
                    return;
                }
                expected += 1;
            }
            // Take an item while any are left; after that, wait for the helpers' last ones.
            let index = next.fetch_add(1, Ordering::Relaxed);
            if let Some(item) = items.get(index) {
                pending.insert(index, work(&mut state, item));
                continue;
            }
            match receiver.recv() {
                Ok((index, result)) => {
                    pending.insert(index, result);
                }
                // Every helper is done, and everything they sent was released above.
                Err(mpsc::RecvError) => return,
            }
        }
    });
}

/// Scratch values kept between uses, at most one per core, lent to whichever thread asks next:
/// large buffers that are costly to make (fresh pages fault in on first touch) but must not
/// pile up one per thread, since a server's threads come and go (tokio's blocking pool, scoped
/// workers, the watcher).
pub struct Spare<T> {
    kept: Mutex<Vec<T>>,
    /// Whether a returned value is worth keeping (a buffer grown for one huge file is not).
    keep: fn(&T) -> bool,
}

impl<T> Spare<T> {
    /// An empty pool that keeps what `keep` approves of.
    pub const fn new(keep: fn(&T) -> bool) -> Spare<T> {
        Spare { kept: Mutex::new(Vec::new()), keep }
    }

    /// A kept value, or `make()`; it returns to the pool when the loan is dropped, unless the
    /// thread is panicking (a value left half-updated is not lent again).
    pub fn lend(&self, make: impl FnOnce() -> T) -> Lent<'_, T> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner).pop();
        Lent { value: Some(kept.unwrap_or_else(make)), spare: self }
    }
}

/// A value lent from a [`Spare`] pool.
pub struct Lent<'a, T> {
    value: Option<T>,
    spare: &'a Spare<T>,
}

impl<T> std::ops::Deref for Lent<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.value.as_ref().unwrap_or_else(|| unreachable!("taken only on drop"))
    }
}

impl<T> std::ops::DerefMut for Lent<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.value.as_mut().unwrap_or_else(|| unreachable!("taken only on drop"))
    }
}

impl<T> Drop for Lent<'_, T> {
    fn drop(&mut self) {
        let Some(value) = self.value.take() else { return };
        if std::thread::panicking() || !(self.spare.keep)(&value) {
            return;
        }
        let mut kept = self.spare.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() < cores().max(2) {
            kept.push(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::map_in_order;

    #[test]
    fn results_arrive_in_item_order_on_any_number_of_threads() {
        let items: Vec<u64> = (0..500).collect();
        for threads in [1, 2, 4] {
            let mut seen = Vec::new();
            // Uneven work, so that threads finish out of order.
            let work = |calls: &mut u64, item: &u64| {
                *calls += 1;
                let spin: u64 = (0..(item % 7) * 1000).map(std::hint::black_box).sum();
                std::hint::black_box(spin);
                *item
            };
            map_in_order(
                &items,
                threads,
                || 0u64,
                work,
                |index, value| {
                    seen.push((index, value));
                    true
                },
            );
            let expected: Vec<(usize, u64)> = items.iter().map(|&item| (item as usize, item)).collect();
            assert_eq!(seen, expected, "{threads} threads");
        }
    }

    #[test]
    fn consume_returning_false_stops_at_that_item() {
        let items: Vec<usize> = (0..10_000).collect();
        for threads in [1, 3] {
            let mut seen = Vec::new();
            map_in_order(
                &items,
                threads,
                || (),
                |_, item| *item,
                |index, value| {
                    seen.push(value);
                    index < 41
                },
            );
            assert_eq!(seen, (0..=41).collect::<Vec<_>>(), "{threads} threads");
        }
    }

    #[test]
    fn a_spare_value_is_lent_again_unless_it_is_not_worth_keeping() {
        static POOL: super::Spare<Vec<u8>> = super::Spare::new(|buffer| buffer.capacity() <= 64);
        {
            let mut buffer = POOL.lend(Vec::new);
            buffer.extend_from_slice(b"abc");
        }
        assert_eq!(&*POOL.lend(Vec::new), b"abc", "the kept buffer comes back");
        {
            let mut big = POOL.lend(Vec::new);
            big.clear();
            big.reserve(1000);
        }
        assert!(POOL.lend(Vec::new).is_empty(), "a buffer over the size kept was dropped");
    }
}
