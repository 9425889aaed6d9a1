//! Virtual time: an event queue ordered by time, ties broken by insertion order, so a run is
//! deterministic for a given seed.
//!
//! The queue is a calendar of buckets of simulated time (4.2 ms each by default) rather than
//! one binary heap. A heap of a million events costs a cache miss at nearly every one of its
//! twenty levels on each pop, so its cost per event grew with the herd: 94% of a 300,000-client
//! run was `BinaryHeap::pop` (BENCHMARKS.md, "The herd at a million clients"). Here an event is
//! pushed onto the end of its bucket's `Vec` (no comparison), and a bucket is sorted once, when
//! the clock reaches it, while it fits in cache (a radix sort of the time's low bits, stable, so
//! that a bucket kept in insertion order breaks ties as the heap did). The order is exactly the
//! heap's: by time, then by insertion (the tests check it against a `BinaryHeap` on random
//! inputs). Events that would land more than 69 s ahead of the clock wait in a heap, and events
//! pushed into the current bucket after it was sorted in a small one.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Events of type `E` (`Copy`: the radix sort copies them) waiting for their time (in
/// nanoseconds of virtual time).
pub struct Queue<E> {
    /// log2 of a bucket's width in nanoseconds.
    shift: u32,
    /// Buckets ahead of the current one that are kept as buckets; later events wait in `far`.
    span: u64,
    /// The bucket the clock is in (its index: time >> shift).
    base: u64,
    /// The current bucket's events, sorted latest first: the next one is at the end.
    current: Vec<(u64, E)>,
    /// Events pushed into the current bucket after it was sorted.
    late: BinaryHeap<Reverse<(u64, u64, Slot<E>)>>,
    /// `ahead[k]` holds the events of bucket `base + 1 + k` in the order they were pushed.
    ahead: VecDeque<Vec<(u64, E)>>,
    /// Events more than `span` buckets ahead (rare: a model's far future).
    far: BinaryHeap<Reverse<(u64, u64, Slot<E>)>>,
    /// Emptied buckets, kept for their allocations.
    spare: Vec<Vec<(u64, E)>>,
    /// The radix sort's second buffer.
    scratch: Vec<(u64, E)>,
    seq: u64,
    len: usize,
}

/// Wraps an event so a heap orders by (time, seq) alone.
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

/// 2^22 ns (4.2 ms) buckets: the models' delays are milliseconds (10 ms round trips, 10 ms
/// capacity slots). Narrower buckets are more of them: the ends of the ~7,000 a 30 s spread of
/// retries keeps open fit in a core's cache, those of 30,000 did not (8% slower at 1.05 ms); a
/// bucket's 22 bits of time are two passes of the radix sort.
const SHIFT: u32 = 22;
/// 2^14 buckets ahead (69 s of virtual time): beyond it, a heap.
const SPAN: u64 = 1 << 14;

impl<E: Copy> Queue<E> {
    /// An empty queue with the default buckets.
    pub fn new() -> Self {
        Self::with_buckets(SHIFT, SPAN)
    }

    /// An empty queue of buckets `2^shift` ns wide, `span` of them kept ahead of the clock.
    pub fn with_buckets(shift: u32, span: u64) -> Self {
        Queue {
            shift: shift.min(63),
            span: span.max(1),
            base: 0,
            current: Vec::new(),
            late: BinaryHeap::new(),
            ahead: VecDeque::new(),
            far: BinaryHeap::new(),
            spare: Vec::new(),
            scratch: Vec::new(),
            seq: 0,
            len: 0,
        }
    }

    /// Events waiting.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Schedule `event` at time `at`.
    pub fn push(&mut self, at: u64, event: E) {
        self.seq += 1;
        self.len += 1;
        let index = at >> self.shift;
        if index <= self.base {
            // The current bucket (or the past, which a heap would also give out first).
            self.late.push(Reverse((at, self.seq, Slot(event))));
        } else if index - self.base <= self.span {
            self.bucket(index).push((at, event));
        } else {
            self.far.push(Reverse((at, self.seq, Slot(event))));
        }
    }

    /// The bucket of `index`, one of the `span` ahead of the current one.
    fn bucket(&mut self, index: u64) -> &mut Vec<(u64, E)> {
        let k = (index - self.base - 1) as usize;
        if self.ahead.len() <= k {
            self.ahead.resize_with(k + 1, Vec::new);
        }
        let bucket = &mut self.ahead[k];
        if bucket.capacity() == 0 {
            if let Some(spare) = self.spare.pop() {
                *bucket = spare;
            }
        }
        bucket
    }

    /// The earliest event and its time.
    pub fn pop(&mut self) -> Option<(u64, E)> {
        loop {
            // Ties go to `current`: its events were all pushed before those in `late`.
            let late_first = match (self.current.last(), self.late.peek()) {
                (None, None) => None,
                (Some(_), None) => Some(false),
                (None, Some(_)) => Some(true),
                (Some(c), Some(Reverse(l))) => Some(l.0 < c.0),
            };
            let Some(late_first) = late_first else {
                if self.advance() {
                    continue;
                }
                return None;
            };
            self.len -= 1;
            return if late_first {
                self.late.pop().map(|Reverse((at, _, Slot(e)))| (at, e))
            } else {
                self.current.pop()
            };
        }
    }

    /// Move the clock to the next bucket that may hold events, the current one being empty;
    /// `false` if no event is left.
    fn advance(&mut self) -> bool {
        let next = if !self.ahead.is_empty() {
            self.base + 1
        } else if let Some(Reverse((at, _, _))) = self.far.peek() {
            at >> self.shift
        } else {
            return false;
        };
        self.base = next;
        let mut bucket = self.ahead.pop_front().unwrap_or_default();
        // Far events now within the span come in (the ahead buckets cover base+1 ..= base+span).
        // They come in (time, seq) order, into buckets that nothing has been pushed into since
        // they went far, so every bucket stays in insertion order.
        while let Some(Reverse((at, _, _))) = self.far.peek() {
            let index = at >> self.shift;
            if index - self.base > self.span {
                break;
            }
            let Some(Reverse((at, _, Slot(e)))) = self.far.pop() else {
                break;
            };
            if index == self.base {
                bucket.push((at, e));
            } else {
                self.bucket(index).push((at, e));
            }
        }
        // Latest first, ties latest pushed first, so that the next event is popped off the end.
        sort_latest_first(&mut bucket, self.shift, &mut self.scratch);
        let done = std::mem::replace(&mut self.current, bucket);
        if done.capacity() > 0 {
            self.spare.push(done);
        }
        true
    }
}

/// Sort a bucket's events latest first, the reverse of a stable sort by time (so that popping
/// off the end gives them by time, ties in insertion order), looking only at the low `bits`
/// bits of their times (a bucket's times share the rest): a least-significant-digit radix
/// sort, 11 bits a pass, the digits counted in one read, the last pass writing backwards.
fn sort_latest_first<E: Copy>(v: &mut Vec<(u64, E)>, bits: u32, scratch: &mut Vec<(u64, E)>) {
    const DIGIT: u32 = 11;
    const PASSES: usize = 3;
    let n = v.len();
    if n <= 64 || bits > DIGIT * PASSES as u32 {
        v.sort_by_key(|e| e.0);
        v.reverse();
        return;
    }
    let passes = bits.div_ceil(DIGIT) as usize;
    let mask = (1u64 << DIGIT) - 1;
    let digit = |e: &(u64, E), pass: usize| ((e.0 >> (pass as u32 * DIGIT)) & mask) as usize;
    let mut counts = [[0u32; 1 << DIGIT]; PASSES];
    for e in v.iter() {
        for (pass, c) in counts.iter_mut().enumerate().take(passes) {
            c[digit(e, pass)] += 1;
        }
    }
    // A pass in which every time has the same digit would move nothing.
    let moving: Vec<usize> = (0..passes)
        .filter(|&p| !counts[p].iter().any(|&c| c as usize == n))
        .collect();
    let Some(&last) = moving.last() else {
        v.reverse();
        return;
    };
    if scratch.len() < n {
        scratch.resize(n, v[0]);
    }
    scratch.truncate(n);
    for &pass in &moving {
        let mut start = 0;
        for c in counts[pass].iter_mut() {
            (*c, start) = (start, start + *c);
        }
        let c = &mut counts[pass];
        for e in v.iter() {
            let d = digit(e, pass);
            let at = c[d] as usize;
            c[d] += 1;
            scratch[if pass == last { n - 1 - at } else { at }] = *e;
        }
        std::mem::swap(v, scratch);
    }
}

thread_local! {
    /// The virtual time of the run being simulated on this thread, in ns from `BASE`.
    static NOW: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    static BASE: std::time::Instant = std::time::Instant::now();
}

/// Set this thread's virtual clock to `ns` nanoseconds of its run.
pub fn set_now(ns: u64) {
    NOW.with(|now| now.set(ns));
}

/// The virtual clock of the run on this thread, as a `retry_jitter::time::Clock` for the crate's
/// guards and budgets (each starts counting at its first reading, so a fresh guard of a new run
/// may start again at 0).
pub fn virtual_now() -> std::time::Instant {
    let ns = NOW.with(std::cell::Cell::get);
    BASE.with(|base| *base + std::time::Duration::from_nanos(ns))
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
    use proptest::prelude::*;

    #[test]
    fn events_come_out_in_time_order_and_ties_in_insertion_order() {
        let mut q = Queue::new();
        q.push(30, "c");
        q.push(10, "a");
        q.push(30, "d");
        q.push(20, "b");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, [(10, "a"), (20, "b"), (30, "c"), (30, "d")]);
    }

    /// The queue the herd used before the buckets: one binary heap of (time, seq).
    struct HeapQueue {
        heap: BinaryHeap<Reverse<(u64, u64, u32)>>,
        seq: u64,
    }

    impl HeapQueue {
        fn push(&mut self, at: u64, event: u32) {
            self.seq += 1;
            self.heap.push(Reverse((at, self.seq, event)));
        }
        fn pop(&mut self) -> Option<(u64, u32)> {
            self.heap.pop().map(|Reverse((at, _, e))| (at, e))
        }
    }

    /// What a simulation does: push events, each at or after the time of the last popped one
    /// (or, rarely, before it), and pop some.
    #[derive(Clone, Debug)]
    enum Op {
        /// Push an event this far after the last popped time.
        Push(u64),
        /// Push an event this far *before* the last popped time (a model's mistake: both queues
        /// must still agree).
        PushPast(u64),
        /// Push a hundred events within the next few buckets (enough for the radix sort).
        Burst(u64),
        Pop,
    }

    fn op() -> impl Strategy<Value = Op> {
        // Delays of every scale: the same bucket, the next ones, past the span, u64::MAX.
        let delay = prop_oneof![
            4 => 0u64..64,
            4 => 0u64..5_000,
            2 => 0u64..10_000_000,
            1 => Just(u64::MAX),
            1 => any::<u64>(),
        ];
        prop_oneof![
            6 => delay.prop_map(Op::Push),
            1 => (0u64..2_000).prop_map(Op::PushPast),
            1 => any::<u64>().prop_map(Op::Burst),
            5 => Just(Op::Pop),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// On any sequence of pushes and pops, every pop gives what the old heap gave.
        #[test]
        fn the_buckets_give_events_in_exactly_the_binary_heaps_order(
            shift in 0u32..24,
            span in 1u64..40,
            ops in proptest::collection::vec(op(), 0..400),
        ) {
            let mut buckets = Queue::with_buckets(shift, span);
            let mut heap = HeapQueue { heap: BinaryHeap::new(), seq: 0 };
            let mut now = 0u64;
            let mut id = 0u32;
            for op in ops.iter().chain(std::iter::repeat_n(&Op::Pop, 100 * ops.len())) {
                match *op {
                    Op::Push(d) | Op::PushPast(d) => {
                        let at = match *op {
                            Op::Push(_) => now.saturating_add(d),
                            _ => now.saturating_sub(d),
                        };
                        id += 1;
                        buckets.push(at, id);
                        heap.push(at, id);
                    }
                    Op::Burst(seed) => {
                        let mut x = seed;
                        for _ in 0..100 {
                            x = seed_for(&[x]);
                            let at = now.saturating_add(x % (4u64 << shift) / 3 * 3);
                            id += 1;
                            buckets.push(at, id);
                            heap.push(at, id);
                        }
                    }
                    Op::Pop => {
                        let (b, h) = (buckets.pop(), heap.pop());
                        prop_assert_eq!(b, h);
                        if let Some((at, _)) = b {
                            now = at;
                        }
                    }
                }
                prop_assert_eq!(buckets.len(), heap.heap.len());
            }
            prop_assert_eq!(buckets.pop(), None);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// The radix sort of a bucket is a stable sort by time, reversed, whatever the bucket's width.
        #[test]
        fn a_bucket_is_sorted_as_the_reverse_of_a_stable_sort_by_time(
            bits in 0u32..40,
            high in any::<u64>(),
            times in proptest::collection::vec(any::<u64>(), 0..600),
        ) {
            let low = (1u64 << bits) - 1;
            // One bucket: the times share every bit above `bits`.
            let mut v: Vec<(u64, usize)> = times
                .iter()
                .enumerate()
                .map(|(i, &t)| ((high & !low) | (((t % (low / 8 + 1)) * 8) & low), i))
                .collect();
            let mut expected = v.clone();
            expected.sort_by_key(|e| e.0);
            expected.reverse();
            sort_latest_first(&mut v, bits, &mut Vec::new());
            prop_assert_eq!(v, expected);
        }
    }

    #[test]
    fn two_hundred_thousand_events_and_their_follow_ups_come_out_as_from_the_heap() {
        // Random times over 100 s, many ties: the herd's shape at scale.
        let mut q = Queue::new();
        let mut heap = HeapQueue {
            heap: BinaryHeap::new(),
            seq: 0,
        };
        let mut x = 1u64;
        for i in 0..200_000u32 {
            x = seed_for(&[x]);
            let at = (x % 100_000) * 1_000_000; // whole milliseconds: ties
            q.push(at, i);
            heap.push(at, i);
        }
        while let Some(h) = heap.pop() {
            let b = q.pop();
            assert_eq!(b, Some(h));
            // Each pop schedules a follow-up, as the outage model does.
            if h.1 % 3 == 0 && h.0 < 150_000_000_000 {
                let at = h.0 + 10_000_000 + u64::from(h.1 % 7) * 333;
                q.push(at, h.1 + 1_000_000);
                heap.push(at, h.1 + 1_000_000);
            }
        }
        assert_eq!(q.pop(), None);
    }
}
