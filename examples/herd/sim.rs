//! Virtual time: an event queue ordered by time, ties broken by insertion order, so a run is
//! deterministic for a given seed.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Events of type `E` waiting for their time (in nanoseconds of virtual time).
pub struct Queue<E> {
    heap: BinaryHeap<Reverse<(u64, u64, Slot<E>)>>,
    seq: u64,
}

/// Wraps an event so the heap orders by (time, seq) alone.
struct Slot<E>(E);

impl<E> PartialEq for Slot<E> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl<E> Eq for Slot<E> {}
impl<E> PartialOrd for Slot<E> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Slot<E> {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

impl<E> Queue<E> {
    /// An empty queue with room for `capacity` events.
    pub fn with_capacity(capacity: usize) -> Self {
        Queue {
            heap: BinaryHeap::with_capacity(capacity),
            seq: 0,
        }
    }

    /// Schedule `event` at time `at`.
    pub fn push(&mut self, at: u64, event: E) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, Slot(event))));
    }

    /// The earliest event and its time.
    pub fn pop(&mut self) -> Option<(u64, E)> {
        self.heap.pop().map(|Reverse((at, _, Slot(e)))| (at, e))
    }
}

/// A seed for one run of one scenario, mixed from its parts (splitmix64), so that every run is
/// reproducible on its own, whatever thread runs it.
pub fn seed_for(parts: &[u64]) -> u64 {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for p in parts {
        x ^= p
            .wrapping_add(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(x << 6)
            .wrapping_add(x >> 2);
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^= x >> 31;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_come_out_in_time_order_and_ties_in_insertion_order() {
        let mut q = Queue::with_capacity(4);
        q.push(30, "c");
        q.push(10, "a");
        q.push(30, "d");
        q.push(20, "b");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, [(10, "a"), (20, "b"), (30, "c"), (30, "d")]);
    }
}
