//! Capped exponential backoff and the jitter drawn under its ceiling.

use core::time::Duration;

use crate::policy::rng;

/// How a wait is drawn under its ceiling `c(k) = min(cap, base · 2^(k−1))`.
///
/// ```
/// use retry_jitter::{Backoff, Jitter};
/// use std::time::Duration;
///
/// let b = Backoff::new(Duration::from_millis(200), Duration::from_secs(30)).with_jitter(Jitter::None);
/// assert_eq!(b.jitter(), Jitter::None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Jitter {
    /// Uniform in `[0, c(k)]`: the default, and the one that spreads a herd best.
    #[default]
    Full,
    /// `c(k)/2 + uniform[0, c(k)/2]`: never shorter than half the ceiling.
    Equal,
    /// `min(cap, uniform[base, 3·max(prev, base)])`, `prev` starting at `base` (the AWS
    /// formula).
    ///
    /// It does not follow `c(k)`: each wait grows from the previous one.
    ///
    /// Once `3·prev` passes the cap, most draws are clipped to exactly `cap`.
    ///
    /// So clients that have been failing for a while bunch up at the cap again.
    ///
    /// Prefer [`Jitter::Full`] unless you need its shape.
    Decorrelated,
    /// Exactly `c(k)`: no randomness. Clients that failed together retry together.
    None,
}

/// Capped exponential backoff with jitter: the delay before each retry.
///
/// Retry number `k` (1 for the second call, 2 for the third…) has the ceiling
/// `c(k) = min(cap, base · 2^(k−1))`, computed with saturating arithmetic.
///
/// Its wait is drawn under that ceiling according to [`Jitter`].
///
/// ```
/// use retry_jitter::{Backoff, Jitter};
/// use std::time::Duration;
///
/// let b = Backoff::new(Duration::from_millis(200), Duration::from_secs(1)).with_jitter(Jitter::None);
/// let waits: Vec<_> = b.schedule().take(5).collect();
/// assert_eq!(waits, [200, 400, 800, 1000, 1000].map(Duration::from_millis));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Backoff {
    base: Duration,
    cap: Duration,
    /// gRPC's shape ([`Backoff::grpc`]): its multiplier's `f32` bits.
    ///
    /// 0 for the crate's own shape: doubling, drawn by `jitter`.
    ///
    /// It sits in the padding a `Backoff` has anyway.
    grpc: u32,
    jitter: Jitter,
}

impl Default for Backoff {
    /// 200 ms base, 30 s cap, full jitter.
    ///
    /// ```
    /// use retry_jitter::{Backoff, Jitter};
    /// use std::time::Duration;
    ///
    /// let b = Backoff::default();
    /// assert_eq!((b.base(), b.cap(), b.jitter()), (Duration::from_millis(200), Duration::from_secs(30), Jitter::Full));
    /// ```
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl Backoff {
    /// 200 ms base, 30 s cap, full jitter: the defaults of `#[retry]`.
    ///
    /// ```
    /// use retry_jitter::Backoff;
    /// assert_eq!(Backoff::DEFAULT, Backoff::default());
    /// ```
    pub const DEFAULT: Backoff = Backoff::new(Duration::from_millis(200), Duration::from_secs(30));

    /// Backoff from `base` (the ceiling of the first retry's wait) up to `cap`, with full jitter.
    ///
    /// A `cap` below `base` is allowed: every ceiling is then `cap`.
    ///
    /// ```
    /// use retry_jitter::Backoff;
    /// use std::time::Duration;
    ///
    /// const B: Backoff = Backoff::new(Duration::from_millis(50), Duration::from_secs(5));
    /// assert_eq!(B.ceiling(1), Duration::from_millis(50));
    /// ```
    #[must_use]
    pub const fn new(base: Duration, cap: Duration) -> Self {
        Backoff {
            base,
            cap,
            grpc: 0,
            jitter: Jitter::Full,
        }
    }

    /// gRPC's backoff (gRFC A6's `retryPolicy`, as revised in 2024).
    ///
    /// Retry `n` waits `min(initial · multiplier^(n−1), max)` times a factor drawn uniformly in
    /// `[0.8, 1.2]`: up to 20% past `max`.
    ///
    /// A server's pushback ([`Decision::RetryAfter`](crate::Decision::RetryAfter)) sets the next
    /// wait exactly, of any length.
    ///
    /// After a pushback, the backoff starts again from `initial`.
    ///
    /// The [`Jitter`] does not apply.
    ///
    /// `retry_jitter::tonic`'s service config layer runs it; use it for a gRPC client of your
    /// own that must behave as gRPC's do.
    ///
    /// No cap bounds a pushback: give such a call a deadline (`max_elapsed`, or the caller's).
    ///
    /// A `multiplier` that is not a positive finite number counts as 1 (a constant backoff):
    /// never a panic.
    ///
    /// ```
    /// use retry_jitter::Backoff;
    /// use std::time::Duration;
    ///
    /// let b = Backoff::grpc(Duration::from_millis(100), Duration::from_secs(1), 1.5);
    /// assert_eq!(b.ceiling(3), Duration::from_millis(225));
    /// assert_eq!(b.ceiling(20), Duration::from_secs(1));
    /// let wait = b.delay(3, b.base());
    /// assert!(wait >= Duration::from_millis(180) && wait <= Duration::from_millis(270));
    /// ```
    #[must_use]
    pub fn grpc(initial: Duration, max: Duration, multiplier: f64) -> Self {
        let multiplier = if multiplier.is_finite() && multiplier > 0.0 {
            // Held to what an f32 keeps above zero (a multiplier of 1e-50 is zero in f32,
            // which would read as the crate's own shape).
            (multiplier as f32).clamp(f32::MIN_POSITIVE, f32::MAX)
        } else {
            1.0
        };
        Backoff {
            base: initial,
            cap: max,
            grpc: multiplier.to_bits(),
            jitter: Jitter::Full,
        }
    }

    /// The same backoff (its shape and jitter) between other bounds: for `Policy::with_base`
    /// and `with_cap`.
    pub(crate) const fn with_bounds(mut self, base: Duration, cap: Duration) -> Self {
        self.base = base;
        self.cap = cap;
        self
    }

    /// The base and the cap in nanoseconds, where waits are drawn the common way: full jitter,
    /// the crate's shape, both bounds within 584 years.
    ///
    /// A retry loop converts this once per call and hands it to [`full_draw`](Backoff::full_draw).
    ///
    /// Not inlined: inlined, the async loop's first failure grows by more than the sync one saves.
    pub(crate) fn full_nanos(&self) -> Option<(u64, u64)> {
        match (self.jitter, self.grpc) {
            (Jitter::Full, 0) => self.nanos(),
            _ => None,
        }
    }

    /// [`delay`](Backoff::delay) of retry `k` for a backoff whose [`full_nanos`] are
    /// `base` and `cap`: inline, the same draw.
    ///
    /// [`full_nanos`]: Backoff::full_nanos
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    pub(crate) fn full_draw(base: u64, cap: u64, k: u32) -> Duration {
        Duration::from_nanos(rng::up_to(ceiling_nanos(base, cap, k)))
    }

    /// Whether this is gRPC's backoff: one test, for the loop.
    #[inline]
    pub(crate) const fn is_grpc(&self) -> bool {
        self.grpc != 0
    }

    /// Whether this is gRPC's backoff ([`Backoff::grpc`]), and its multiplier.
    ///
    /// ```
    /// use retry_jitter::Backoff;
    /// use std::time::Duration;
    /// assert_eq!(Backoff::grpc(Duration::from_millis(1), Duration::from_secs(1), 2.0).grpc_multiplier(), Some(2.0));
    /// assert_eq!(Backoff::DEFAULT.grpc_multiplier(), None);
    /// ```
    pub fn grpc_multiplier(&self) -> Option<f64> {
        (self.grpc != 0).then(|| f64::from(f32::from_bits(self.grpc)))
    }

    /// The same backoff with another [`Jitter`].
    ///
    /// ```
    /// use retry_jitter::{Backoff, Jitter};
    /// let b = Backoff::DEFAULT.with_jitter(Jitter::Equal);
    /// assert_eq!(b.jitter(), Jitter::Equal);
    /// ```
    #[must_use]
    pub const fn with_jitter(mut self, jitter: Jitter) -> Self {
        self.jitter = jitter;
        self
    }

    /// The ceiling of the first retry's wait.
    ///
    /// ```
    /// use retry_jitter::Backoff;
    /// assert_eq!(Backoff::DEFAULT.base().as_millis(), 200);
    /// ```
    pub const fn base(&self) -> Duration {
        self.base
    }

    /// No drawn wait is ever longer.
    ///
    /// ```
    /// use retry_jitter::Backoff;
    /// assert_eq!(Backoff::DEFAULT.cap().as_secs(), 30);
    /// ```
    pub const fn cap(&self) -> Duration {
        self.cap
    }

    /// How waits are drawn under the ceiling.
    ///
    /// ```
    /// use retry_jitter::{Backoff, Jitter};
    /// assert_eq!(Backoff::DEFAULT.jitter(), Jitter::Full);
    /// ```
    pub const fn jitter(&self) -> Jitter {
        self.jitter
    }

    /// The ceiling `c(k) = min(cap, base · 2^(k−1))` of retry `k` (1-based).
    ///
    /// `k = 0` (the first call, which is not preceded by a wait) gives zero.
    ///
    /// Saturating: never panics, never overflows, for any `k`, `base` and `cap`.
    ///
    /// ```
    /// use retry_jitter::Backoff;
    /// use std::time::Duration;
    ///
    /// let b = Backoff::DEFAULT;
    /// assert_eq!(b.ceiling(1), Duration::from_millis(200));
    /// assert_eq!(b.ceiling(3), Duration::from_millis(800));
    /// assert_eq!(b.ceiling(u32::MAX), Duration::from_secs(30));
    /// ```
    pub fn ceiling(&self, k: u32) -> Duration {
        if let Some(multiplier) = self.grpc_multiplier() {
            return self.grpc_ceiling(multiplier, k);
        }
        match (nanos_u64(self.base), nanos_u64(self.cap)) {
            (Some(base), Some(cap)) => Duration::from_nanos(ceiling_nanos(base, cap, k)),
            _ => self.wide_ceiling(k),
        }
    }

    /// gRPC's ceiling `min(initial · multiplier^(k−1), max)`, in `f64` seconds; zero for `k = 0`.
    ///
    /// A multiplier that is not a power of two leaves no exact integer form.
    #[cold]
    fn grpc_ceiling(&self, multiplier: f64, k: u32) -> Duration {
        if k == 0 || self.base.is_zero() {
            return Duration::ZERO;
        }
        let exponent = i32::try_from(k - 1).unwrap_or(i32::MAX);
        let secs = self.base.as_secs_f64() * multiplier.powi(exponent);
        // Anything past what a Duration holds: the cap.
        match Duration::try_from_secs_f64(secs) {
            Ok(ceiling) => ceiling.min(self.cap),
            Err(_) if secs > 0.0 => self.cap,
            Err(_) => Duration::ZERO,
        }
    }

    /// [`ceiling`](Backoff::ceiling) for a base or cap beyond `u64` nanoseconds (584 years).
    #[cold]
    fn wide_ceiling(&self, k: u32) -> Duration {
        if k == 0 {
            return Duration::ZERO;
        }
        // base · 2^(k−1) in steps of at most 2^31 (Duration::saturating_mul takes a u32), until
        // it reaches the cap.
        //
        // One step for every k up to 32, at most four for any k (2^94 ns exceeds Duration::MAX).
        //
        // Never a u128 division.
        let mut ceiling = self.base;
        let mut shift = k - 1;
        while shift > 0 && ceiling < self.cap && !ceiling.is_zero() {
            let step = shift.min(31);
            ceiling = ceiling.saturating_mul(1 << step);
            shift -= step;
        }
        ceiling.min(self.cap)
    }

    /// The wait before retry `k` (1-based), drawn under its ceiling.
    ///
    /// `prev` is the previous wait, which [`Jitter::Decorrelated`] grows from.
    ///
    /// Pass `base` before the first retry.
    ///
    /// The result is always `≤ cap` (gRPC's shape: `≤ 1.2 · cap`).
    ///
    /// ```
    /// use retry_jitter::{Backoff, Jitter};
    /// use std::time::Duration;
    ///
    /// let b = Backoff::DEFAULT;
    /// let wait = b.delay(2, b.base());
    /// assert!(wait <= Duration::from_millis(400));
    /// assert_eq!(b.with_jitter(Jitter::None).delay(2, b.base()), Duration::from_millis(400));
    /// ```
    #[inline]
    pub fn delay(&self, k: u32, prev: Duration) -> Duration {
        self.delay_within(self.nanos(), k, prev)
    }

    /// [`delay`](Backoff::delay) out of line, for the retry loops.
    ///
    /// There a wait that is not zero is slept, and its draw is not worth the loop's registers.
    #[inline(never)]
    pub(crate) fn draw(&self, k: u32, prev: Duration) -> Duration {
        self.delay(k, prev)
    }

    /// The base and the cap in nanoseconds, if both fit in a u64 (584 years).
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    fn nanos(&self) -> Option<(u64, u64)> {
        Some((nanos_u64(self.base)?, nanos_u64(self.cap)?))
    }

    /// [`delay`](Backoff::delay), the base and the cap already in nanoseconds (`nanos`).
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    fn delay_within(&self, nanos: Option<(u64, u64)>, k: u32, prev: Duration) -> Duration {
        if self.grpc != 0 {
            return self.grpc_delay(k);
        }
        // Every wait that fits in u64 nanoseconds (584 years) is computed and drawn as one.
        //
        // No Duration arithmetic, and no draw at all for a zero ceiling (`base = "0ns"`).
        let Some((base, cap)) = nanos else {
            return self.wide_delay(k, prev);
        };
        let nanos = match self.jitter {
            Jitter::Full => rng::up_to(ceiling_nanos(base, cap, k)),
            Jitter::Equal => {
                // c/2 + uniform[0, c/2].
                let half = ceiling_nanos(base, cap, k) / 2;
                half + rng::up_to(half)
            }
            Jitter::Decorrelated => {
                // Grown from `base` at least.
                //
                // A `prev` below a third of it would leave no spread at all: a rate-limited
                // wait's `rate_limited_base` above the `base` drawn from before.
                let Some(hi) = nanos_u64(prev).and_then(|prev| prev.max(base).checked_mul(3))
                else {
                    return self.wide_delay(k, prev);
                };
                (base + rng::up_to(hi.saturating_sub(base))).min(cap)
            }
            Jitter::None => ceiling_nanos(base, cap, k),
        };
        Duration::from_nanos(nanos)
    }

    /// gRPC's wait before retry `k`: its ceiling times a factor uniform in `[0.8, 1.2]`.
    #[cold]
    #[inline(never)]
    fn grpc_delay(&self, k: u32) -> Duration {
        let ceiling = self.ceiling(k);
        rng::uniform(ceiling.mul_f64(0.8), ceiling.saturating_add(ceiling / 5))
    }

    /// [`delay`](Backoff::delay) where a bound does not fit in `u64` nanoseconds.
    #[cold]
    #[inline(never)]
    fn wide_delay(&self, k: u32, prev: Duration) -> Duration {
        match self.jitter {
            Jitter::Full => rng::uniform(Duration::ZERO, self.ceiling(k)),
            Jitter::Equal => {
                // c/2 + uniform[0, c/2], drawn as one uniform[c/2, 2·(c/2)].
                let half = self.ceiling(k) / 2;
                rng::uniform(half, half.saturating_mul(2))
            }
            Jitter::Decorrelated => {
                let hi = prev.max(self.base).saturating_mul(3);
                rng::uniform(self.base, hi).min(self.cap)
            }
            Jitter::None => self.ceiling(k),
        }
    }

    /// The waits before retries 1, 2, 3…: an endless iterator (use `take`).
    ///
    /// Each item is drawn fresh, exactly as a retry loop would draw it.
    ///
    /// ```
    /// use retry_jitter::Backoff;
    /// use std::time::Duration;
    ///
    /// let b = Backoff::new(Duration::from_millis(100), Duration::from_secs(1));
    /// for (k, wait) in (1..).zip(b.schedule().take(6)) {
    ///     assert!(wait <= b.ceiling(k));
    /// }
    /// ```
    pub fn schedule(&self) -> Schedule {
        Schedule {
            backoff: *self,
            nanos: self.nanos(),
            k: 0,
            prev: self.base,
        }
    }
}

/// The endless iterator of waits returned by [`Backoff::schedule`].
///
/// ```
/// use retry_jitter::{Backoff, Jitter};
/// let mut s = Backoff::DEFAULT.with_jitter(Jitter::None).schedule();
/// assert_eq!(s.next().map(|d| d.as_millis()), Some(200));
/// ```
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct Schedule {
    backoff: Backoff,
    /// The backoff's base and cap in nanoseconds, converted once.
    nanos: Option<(u64, u64)>,
    k: u32,
    prev: Duration,
}

impl Iterator for Schedule {
    type Item = Duration;

    #[inline]
    fn next(&mut self) -> Option<Duration> {
        self.k = self.k.saturating_add(1);
        let wait = self.backoff.delay_within(self.nanos, self.k, self.prev);
        self.prev = wait;
        Some(wait)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (usize::MAX, None)
    }
}

/// `c(k) = min(cap, base · 2^(k−1))` in nanoseconds; zero for `k = 0`.
#[inline]
fn ceiling_nanos(base: u64, cap: u64, k: u32) -> u64 {
    if k == 0 || base == 0 {
        return 0;
    }
    let shift = k - 1;
    // base · 2^shift fits in u64 exactly when the shift does not pass base's leading zeros.
    //
    // Beyond that, it is past any cap that fits.
    if shift <= base.leading_zeros() {
        (base << shift).min(cap)
    } else {
        cap
    }
}

/// `d` in nanoseconds, if that fits in a u64 (584 years).
#[inline]
const fn nanos_u64(d: Duration) -> Option<u64> {
    match d.as_secs().checked_mul(1_000_000_000) {
        Some(secs) => secs.checked_add(d.subsec_nanos() as u64),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::rng::from_nanos;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    #[test]
    fn ceiling_saturates_at_the_extremes() {
        let b = Backoff::new(Duration::MAX, Duration::MAX);
        assert_eq!(b.ceiling(1), Duration::MAX);
        assert_eq!(b.ceiling(u32::MAX), Duration::MAX);
        let z = Backoff::new(Duration::ZERO, Duration::MAX);
        assert_eq!(z.ceiling(u32::MAX), Duration::ZERO);
        let one = Backoff::new(Duration::from_nanos(1), Duration::MAX);
        assert_eq!(one.ceiling(64), Duration::from_nanos(1 << 63));
        assert_eq!(one.ceiling(200), Duration::MAX);
    }

    /// The delay as it was drawn before it moved to u64 nanoseconds: `Duration` arithmetic and
    /// `SmallRng::random_range` over the nanoseconds.
    fn reference_delay(b: &Backoff, rng: &mut SmallRng, k: u32, prev: Duration) -> Duration {
        let mut uniform = |lo: Duration, hi: Duration| {
            if hi <= lo {
                return lo;
            }
            match (u64::try_from(lo.as_nanos()), u64::try_from(hi.as_nanos())) {
                (Ok(lo), Ok(hi)) => Duration::from_nanos(rng.random_range(lo..=hi)),
                _ => from_nanos(rng.random_range(lo.as_nanos()..=hi.as_nanos())),
            }
        };
        let ceiling = b.wide_ceiling(k);
        match b.jitter {
            Jitter::Full => uniform(Duration::ZERO, ceiling),
            Jitter::Equal => uniform(ceiling / 2, (ceiling / 2).saturating_mul(2)),
            Jitter::Decorrelated => uniform(b.base, prev.max(b.base).saturating_mul(3)).min(b.cap),
            Jitter::None => ceiling,
        }
    }

    /// Every delay and ceiling that fits in u64 nanoseconds is the one the `Duration` code
    /// computed, draw for draw from the same seed.
    ///
    /// So a seeded schedule is the same as before.
    #[test]
    fn nanosecond_delays_are_the_duration_delays() {
        let ms = Duration::from_millis;
        let bounds = [
            (Duration::ZERO, Duration::ZERO),
            (Duration::ZERO, ms(100)),
            (ms(100), Duration::ZERO),
            (Duration::from_nanos(1), Duration::from_nanos(7)),
            (ms(200), Duration::from_secs(30)),
            (Duration::from_secs(3), ms(500)),
            (Duration::new(1, 999_999_999), Duration::from_secs(3600)),
            (Duration::from_secs(1 << 30), Duration::from_secs(1 << 33)),
            (ms(200), Duration::MAX),
            (Duration::from_secs(1 << 40), Duration::MAX),
            (Duration::MAX, Duration::MAX),
        ];
        let jitters = [
            Jitter::Full,
            Jitter::Equal,
            Jitter::Decorrelated,
            Jitter::None,
        ];
        for (i, (base, cap)) in bounds.into_iter().enumerate() {
            for jitter in jitters {
                let b = Backoff::new(base, cap).with_jitter(jitter);
                let seed = 0x5eed + i as u64;
                crate::policy::rng::seed(seed);
                let mut rng = SmallRng::seed_from_u64(seed);
                for k in (0..70).chain([100, 1000, u32::MAX]) {
                    assert_eq!(b.ceiling(k), b.wide_ceiling(k), "{b:?}, k = {k}");
                    for prev in [Duration::ZERO, base, ms(150), Duration::from_secs(5)] {
                        let want = reference_delay(&b, &mut rng, k, prev);
                        assert_eq!(b.delay(k, prev), want, "{b:?}, k = {k}, prev = {prev:?}");
                    }
                }
                crate::policy::rng::seed(seed);
                let mut rng = SmallRng::seed_from_u64(seed);
                let mut prev = base;
                for (k, wait) in (1..).zip(b.schedule().take(40)) {
                    let want = reference_delay(&b, &mut rng, k, prev);
                    assert_eq!(wait, want, "{b:?}, schedule, k = {k}");
                    prev = wait;
                }
            }
        }
    }

    #[test]
    fn from_nanos_round_trips() {
        for d in [Duration::ZERO, Duration::new(3, 7), Duration::MAX] {
            assert_eq!(from_nanos(d.as_nanos()), d);
        }
    }

    #[test]
    fn grpc_ceilings_grow_by_the_multiplier_up_to_the_max() {
        let ms = Duration::from_millis;
        let b = Backoff::grpc(ms(100), Duration::from_secs(1), 1.5);
        let ceilings: Vec<_> = (0..=8).map(|k| b.ceiling(k).as_micros()).collect();
        assert_eq!(
            ceilings,
            [0, 100_000, 150_000, 225_000, 337_500, 506_250, 759_375, 1_000_000, 1_000_000]
        );
        // Any k, any multiplier: never a panic, never past the max.
        for m in [
            f64::NAN,
            -1.0,
            0.0,
            1e-50,
            0.5,
            1.0,
            3.0,
            f64::INFINITY,
            1e300,
        ] {
            let b = Backoff::grpc(ms(100), Duration::from_secs(1), m);
            for k in [1, 2, 40, 1000, u32::MAX] {
                assert!(b.ceiling(k) <= Duration::from_secs(1), "{m} {k}");
            }
        }
        // Not a positive finite number: constant.
        let b = Backoff::grpc(ms(100), Duration::from_secs(1), f64::NAN);
        assert_eq!((b.grpc_multiplier(), b.ceiling(9)), (Some(1.0), ms(100)));
        assert_eq!(
            Backoff::grpc(Duration::ZERO, Duration::MAX, 2.0).ceiling(u32::MAX),
            Duration::ZERO
        );
        assert_eq!(
            Backoff::grpc(Duration::MAX, Duration::MAX, 2.0).ceiling(3),
            Duration::MAX
        );
    }

    #[test]
    fn grpc_waits_are_the_ceiling_times_a_factor_uniform_in_0_8_to_1_2() {
        crate::policy::rng::seed(11);
        let b = Backoff::grpc(Duration::from_millis(100), Duration::from_secs(1), 2.0);
        for k in [1, 3, 10] {
            let c = b.ceiling(k).as_secs_f64();
            let draws: Vec<f64> = (0..20_000)
                .map(|_| b.delay(k, b.base()).as_secs_f64() / c)
                .collect();
            let (lo, hi) = draws
                .iter()
                .fold((f64::MAX, 0.0_f64), |(lo, hi), &f| (lo.min(f), hi.max(f)));
            let mean = draws.iter().sum::<f64>() / draws.len() as f64;
            // Within the bounds, reaching near both, centred on the ceiling.
            //
            // The mean of 20 000 uniform draws on [0.8, 1.2] is within 0.005 of 1 but once in
            // ~10^12.
            assert!(lo >= 0.8 - 1e-9 && hi <= 1.2 + 1e-9, "k = {k}: {lo}..{hi}");
            assert!(lo < 0.801 && hi > 1.199, "k = {k}: {lo}..{hi}");
            assert!((mean - 1.0).abs() < 0.005, "k = {k}: mean {mean}");
        }
        // The shape survives a policy's other bounds.
        let p = crate::Policy::new()
            .with_backoff(b)
            .with_base(Duration::from_millis(10))
            .with_cap(Duration::from_millis(50));
        assert_eq!(p.backoff().grpc_multiplier(), Some(2.0));
        assert_eq!(p.backoff().ceiling(4), Duration::from_millis(50));
    }
}
