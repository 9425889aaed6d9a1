//! Two counts over a trailing window, lock-free: a ring of slots.
//!
//! Each slot is one atomic word holding its number and both counts.
//!
//! So a slot the clock has left behind is recognised, and started afresh by whoever reaches it
//! first.
//!
//! The throttle counts requests and accepts in it; the breaker, calls and failures.

use core::time::Duration;
use std::sync::OnceLock;
use std::time::Instant;

use core::sync::atomic::{AtomicU64, Ordering};

use crate::policy::Clock;

/// The slots the window is cut into.
pub(crate) const SLOTS: usize = 16;
/// Bits of a slot word: its number's low 16 bits, then two counts of 24 bits each.
const TAG_BITS: u32 = 16;
const COUNT_BITS: u32 = 24;
const COUNT_MAX: u64 = (1 << COUNT_BITS) - 1;
const TAG_MASK: u64 = (1 << TAG_BITS) - 1;

const fn pack(tag: u64, a: u64, b: u64) -> u64 {
    ((tag & TAG_MASK) << (2 * COUNT_BITS)) | (a << COUNT_BITS) | b
}

const fn unpack(word: u64) -> (u64, u64, u64) {
    (
        word >> (2 * COUNT_BITS),
        (word >> COUNT_BITS) & COUNT_MAX,
        word & COUNT_MAX,
    )
}

/// A window's time line: nanoseconds since its first clock reading, cut into [`SLOTS`] slots of
/// `window / 16` (whole nanoseconds, at least 1).
///
/// The windows here and the ratio budget's rings all number their slots on it.
pub(crate) struct SlotClock {
    slot_nanos: u64,
    origin: OnceLock<Instant>,
}

impl SlotClock {
    pub(crate) const fn new(window: Duration) -> Self {
        SlotClock {
            slot_nanos: slot_nanos(window),
            origin: OnceLock::new(),
        }
    }

    /// A slot's length in nanoseconds.
    pub(crate) const fn slot_nanos(&self) -> u64 {
        self.slot_nanos
    }

    /// Nanoseconds since the first reading of this time line, on `clock`.
    #[inline]
    pub(crate) fn nanos(&self, clock: Clock) -> u64 {
        let now = clock();
        let origin = *self.origin.get_or_init(|| now);
        u64::try_from(now.saturating_duration_since(origin).as_nanos()).unwrap_or(u64::MAX)
    }

    /// The number of the slot `nanos` falls in (the first reading's is 0).
    #[inline]
    pub(crate) const fn slot_of(&self, nanos: u64) -> u64 {
        nanos / self.slot_nanos
    }
}

/// Two counts (`a`, `b`) over the trailing window, in [`SLOTS`] slots of `window / 16`.
///
/// A count stays in the window for between 15/16 of it and all of it.
///
/// A slot holds at most 16,777,215 of each count; more saturate.
///
/// Slot numbers repeat every 2¹⁶ slots (4,096 windows).
///
/// A slot no count reached for exactly a multiple of that would show its old counts again,
/// until the clock moves past it. For a 10 s window, that is 11 hours.
pub(crate) struct Window {
    clock: SlotClock,
    slots: [AtomicU64; SLOTS],
}

impl Window {
    pub(crate) const fn new(window: Duration) -> Self {
        Window {
            clock: SlotClock::new(window),
            slots: [const { AtomicU64::new(0) }; SLOTS],
        }
    }

    /// Nanoseconds since the first reading of this window, on `clock`.
    pub(crate) fn nanos(&self, clock: Clock) -> u64 {
        self.clock.nanos(clock)
    }

    /// The number of the slot `nanos` falls in.
    ///
    /// Counting starts at slot `SLOTS`, so no live slot is numbered like the empty words' 0.
    fn slot(&self, nanos: u64) -> u64 {
        self.clock.slot_of(nanos).saturating_add(SLOTS as u64)
    }

    /// Add `a` and `b` to the slot of `nanos`.
    pub(crate) fn add(&self, nanos: u64, a: u64, b: u64) {
        let slot = self.slot(nanos);
        let cell = &self.slots[(slot % SLOTS as u64) as usize];
        let tag = slot & TAG_MASK;
        // Never fails: the closure always returns Some.
        let _ = cell.fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
            let (old, x, y) = unpack(word);
            Some(if old == tag {
                pack(tag, (x + a).min(COUNT_MAX), (y + b).min(COUNT_MAX))
            } else {
                pack(tag, a.min(COUNT_MAX), b.min(COUNT_MAX))
            })
        });
    }

    /// Both counts over the window that ends at `nanos`.
    pub(crate) fn sums(&self, nanos: u64) -> (u64, u64) {
        let now = self.slot(nanos);
        let (mut a, mut b) = (0, 0);
        for k in 0..SLOTS as u64 {
            let slot = now - k;
            let (tag, x, y) =
                unpack(self.slots[(slot % SLOTS as u64) as usize].load(Ordering::Acquire));
            if tag == slot & TAG_MASK {
                a += x;
                b += y;
            }
        }
        (a, b)
    }

    /// Forget every count.
    pub(crate) fn clear(&self) {
        for cell in &self.slots {
            cell.store(0, Ordering::Release);
        }
    }
}

/// A slot's length: `window / 16`, at least 1 ns.
const fn slot_nanos(window: Duration) -> u64 {
    let nanos = window.as_nanos() / SLOTS as u128;
    if nanos == 0 {
        1
    } else if nanos > u64::MAX as u128 {
        u64::MAX
    } else {
        nanos as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_stay_for_the_window_and_then_leave_it() {
        let w = Window::new(Duration::from_secs(16)); // 1 s slots
        w.add(0, 3, 1);
        w.add(500_000_000, 2, 0);
        assert_eq!(w.sums(900_000_000), (5, 1));
        w.add(5_000_000_000, 1, 1);
        assert_eq!(w.sums(15_999_999_999), (6, 2));
        // 16 s on, the first slot has left the window; the one at 5 s has not.
        assert_eq!(w.sums(16_000_000_000), (1, 1));
        assert_eq!(w.sums(21_000_000_000), (0, 0));
        // A slot reused after it left is started afresh (the one at 5 s is still in).
        w.add(16_500_000_000, 1, 0);
        assert_eq!(w.sums(16_500_000_000), (2, 1));
        w.clear();
        assert_eq!(w.sums(16_500_000_000), (0, 0));
    }

    #[test]
    fn a_slot_saturates_instead_of_overflowing_into_its_neighbour() {
        let w = Window::new(Duration::from_secs(16));
        w.add(0, COUNT_MAX, 0);
        w.add(0, 5, 0);
        assert_eq!(w.sums(0), (COUNT_MAX, 0));
    }
}
