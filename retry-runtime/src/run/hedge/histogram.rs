//! The latency histogram a `pNN` hedge reads its delay from.

use core::fmt;
use core::sync::atomic::{AtomicU32, Ordering};
use core::time::Duration;

/// Buckets: one below 1 µs, then four per doubling from 1.024 µs up to about 37 minutes.
const BUCKETS: usize = 128;
/// The first doubling with buckets of its own: 2^10 ns.
const FIRST_OCTAVE: u32 = 10;

/// A small lock-free histogram of a function's attempt latencies, for `hedge = "pNN"`.
///
/// 128 atomic counters (520 bytes): one bucket below 1 µs, then four per doubling up to ~37
/// minutes.
///
/// Each bucket is at most a quarter of its lower edge wide; longer latencies count in the last.
///
/// Only attempts that end are counted: one dropped because another won is not.
///
/// So under heavy hedging the percentile reads a little low, and a hedge starts a little early.
///
/// It **decays**: after every [`DECAY_EVERY`](LatencyHistogram::DECAY_EVERY) samples, every
/// count is halved.
///
/// So it follows the recent latency (the last few thousand attempts weigh most) without a
/// window to keep.
///
/// Recording is a few relaxed atomic adds, no lock; a percentile is read by summing the counts.
///
/// A percentile is the upper edge of its bucket: a hedge starts a little late rather than early.
///
/// ```
/// use retry_jitter::hedge::LatencyHistogram;
/// use std::time::Duration;
///
/// static H: LatencyHistogram = LatencyHistogram::new();
/// for i in 0..100 {
///     H.record(Duration::from_millis(if i < 95 { 10 } else { 1000 }));
/// }
/// let p50 = H.percentile(50).unwrap();
/// assert!(p50 >= Duration::from_millis(10) && p50 < Duration::from_millis(12));
/// assert!(H.percentile(99).unwrap() >= Duration::from_millis(1000));
/// ```
pub struct LatencyHistogram {
    buckets: [AtomicU32; BUCKETS],
    since_decay: AtomicU32,
}

impl LatencyHistogram {
    /// Samples needed before a percentile is given (and a percentile hedge starts).
    pub const MIN_SAMPLES: u32 = 50;
    /// Samples between two halvings of every count.
    pub const DECAY_EVERY: u32 = 1000;

    /// An empty histogram, for a `static`.
    ///
    /// ```
    /// static H: retry_jitter::hedge::LatencyHistogram = retry_jitter::hedge::LatencyHistogram::new();
    /// assert_eq!(H.samples(), 0);
    /// ```
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        LatencyHistogram {
            buckets: [const { AtomicU32::new(0) }; BUCKETS],
            since_decay: AtomicU32::new(0),
        }
    }

    /// Count one attempt that took `latency`.
    ///
    /// ```
    /// let h = retry_jitter::hedge::LatencyHistogram::new();
    /// h.record(std::time::Duration::from_millis(3));
    /// assert_eq!(h.samples(), 1);
    /// ```
    pub fn record(&self, latency: Duration) {
        let nanos = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
        self.buckets[bucket(nanos)].fetch_add(1, Ordering::Relaxed);
        if self.since_decay.fetch_add(1, Ordering::Relaxed) + 1 >= Self::DECAY_EVERY {
            self.since_decay.store(0, Ordering::Relaxed);
            for b in &self.buckets {
                // Never fails: the closure always returns Some.
                let _ = b.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| Some(n / 2));
            }
        }
    }

    /// The samples counted now (decayed).
    ///
    /// ```
    /// assert_eq!(retry_jitter::hedge::LatencyHistogram::new().samples(), 0);
    /// ```
    pub fn samples(&self) -> u32 {
        self.buckets
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .fold(0u32, u32::saturating_add)
    }

    /// The `percentile`-th percentile latency (clamped to 1–99), or `None` before
    /// [`MIN_SAMPLES`](LatencyHistogram::MIN_SAMPLES) samples.
    ///
    /// ```
    /// let h = retry_jitter::hedge::LatencyHistogram::new();
    /// assert_eq!(h.percentile(95), None);
    /// ```
    pub fn percentile(&self, percentile: u8) -> Option<Duration> {
        let counts: [u32; BUCKETS] =
            core::array::from_fn(|i| self.buckets[i].load(Ordering::Relaxed));
        let total: u64 = counts.iter().map(|&n| u64::from(n)).sum();
        if total < u64::from(Self::MIN_SAMPLES) {
            return None;
        }
        let rank = (total * u64::from(percentile.clamp(1, 99))).div_ceil(100);
        let mut seen = 0u64;
        for (i, &n) in counts.iter().enumerate() {
            seen += u64::from(n);
            if seen >= rank {
                return Some(Duration::from_nanos(upper_edge(i)));
            }
        }
        Some(Duration::from_nanos(upper_edge(BUCKETS - 1)))
    }
}

impl fmt::Debug for LatencyHistogram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LatencyHistogram")
            .field("samples", &self.samples())
            .field("p50", &self.percentile(50))
            .field("p95", &self.percentile(95))
            .finish()
    }
}

/// The bucket of a latency of `nanos`.
fn bucket(nanos: u64) -> usize {
    if nanos < 1 << FIRST_OCTAVE {
        return 0;
    }
    let octave = 63 - nanos.leading_zeros();
    let quarter = (nanos >> (octave - 2)) & 3;
    let index = 1 + (octave - FIRST_OCTAVE) as usize * 4 + quarter as usize;
    index.min(BUCKETS - 1)
}

/// The largest latency bucket `index` holds (its upper edge).
fn upper_edge(index: usize) -> u64 {
    if index == 0 {
        return 1 << FIRST_OCTAVE;
    }
    let octave = FIRST_OCTAVE + ((index - 1) / 4) as u32;
    let quarter = ((index - 1) % 4) as u64;
    (1u64 << octave) + (quarter + 1) * (1u64 << (octave - 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_latency_falls_in_a_bucket_whose_edge_is_at_or_above_it() {
        for nanos in [
            0,
            1,
            1023,
            1024,
            1025,
            1500,
            2047,
            2048,
            10_000_000,
            1 << 40,
            u64::MAX,
        ] {
            let b = bucket(nanos);
            assert!(b < BUCKETS);
            if b < BUCKETS - 1 {
                assert!(upper_edge(b) >= nanos, "{nanos} in {b}");
                assert!(b == 0 || upper_edge(b - 1) <= nanos, "{nanos} in {b}");
            }
        }
        // Each bucket is a quarter of its octave's base wide: at most a quarter of its lower
        // edge.
        for b in 2..BUCKETS {
            let (lo, hi) = (upper_edge(b - 1), upper_edge(b));
            assert!(hi > lo && (hi - lo) * 4 <= lo, "{b}: {lo}..{hi}");
        }
    }

    #[test]
    fn percentiles_follow_the_samples_and_decay_forgets_old_ones() {
        let h = LatencyHistogram::new();
        for _ in 0..49 {
            h.record(Duration::from_millis(10));
        }
        assert_eq!(h.percentile(95), None, "under MIN_SAMPLES");
        h.record(Duration::from_millis(10));
        let p = h.percentile(95).unwrap();
        assert!(p >= Duration::from_millis(10) && p <= Duration::from_micros(12_500));
        // A long run of slow calls: the old fast ones are halved away.
        for _ in 0..5_000 {
            h.record(Duration::from_secs(1));
        }
        assert!(h.percentile(50).unwrap() >= Duration::from_secs(1));
        assert!(h.samples() < 2 * LatencyHistogram::DECAY_EVERY);
    }
}
