//! Properties of `Backoff` for every input, and the statistics of full jitter: the tests that
//! would have caught a jitter breaking its cap or a sum that overflows.

use std::time::Duration;

use proptest::prelude::*;
use retry_jitter::{testing, Backoff, Jitter};

fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        Just(Duration::ZERO),
        Just(Duration::MAX),
        Just(Duration::from_nanos(1)),
        (0u64..=u64::MAX, 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
        (0u64..100_000_000_000).prop_map(Duration::from_nanos),
    ]
}

fn retry_number() -> impl Strategy<Value = u32> {
    prop_oneof![Just(0), Just(1), Just(u32::MAX), 0u32..200, any::<u32>()]
}

fn jitter() -> impl Strategy<Value = Jitter> {
    prop_oneof![
        Just(Jitter::Full),
        Just(Jitter::Equal),
        Just(Jitter::Decorrelated),
        Just(Jitter::None)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn ceiling_never_exceeds_cap_and_never_decreases(base in duration(), cap in duration(), k in retry_number()) {
        let b = Backoff::new(base, cap);
        let c = b.ceiling(k);
        prop_assert!(c <= cap);
        prop_assert!(b.ceiling(k.saturating_add(1)) >= c);
        if k >= 1 {
            prop_assert!(c <= base.max(cap), "{c:?}");
            prop_assert_eq!(b.ceiling(1), base.min(cap));
        }
    }

    #[test]
    fn every_jitter_stays_within_its_bounds(
        base in duration(), cap in duration(), k in retry_number(), prev in duration(), jitter in jitter(),
    ) {
        let b = Backoff::new(base, cap).with_jitter(jitter);
        let c = b.ceiling(k);
        let w = b.delay(k, prev);
        match jitter {
            Jitter::Full => prop_assert!(w <= c),
            Jitter::Equal => prop_assert!(w >= c / 2 && w <= c),
            Jitter::None => prop_assert_eq!(w, c),
            Jitter::Decorrelated => {
                prop_assert!(w <= cap);
                prop_assert!(w >= base.min(cap));
                // Grown from `base` at least: a `prev` below it draws up to `3·base`.
                prop_assert!(w <= prev.max(base).saturating_mul(3).min(cap));
            }
        }
    }

    #[test]
    fn a_schedule_never_panics_and_stays_under_the_cap(base in duration(), cap in duration(), jitter in jitter()) {
        let b = Backoff::new(base, cap).with_jitter(jitter);
        for w in b.schedule().take(200) {
            prop_assert!(w <= cap.max(base.min(cap)));
        }
    }
}

/// The Kolmogorov–Smirnov statistic of `draws` (each in units of the ceiling) against
/// uniform[0, 1], and its critical value at α = 0.01.
fn ks_uniform(mut draws: Vec<f64>) -> (f64, f64) {
    draws.sort_by(f64::total_cmp);
    let n = draws.len() as f64;
    let d = draws
        .iter()
        .enumerate()
        .map(|(i, x)| (x.min(1.0) - i as f64 / n).max((i + 1) as f64 / n - x.min(1.0)))
        .fold(0.0, f64::max);
    (d, 1.628 / n.sqrt())
}

const N: usize = 100_000;

#[test]
fn full_jitter_is_uniform_under_its_ceiling() {
    testing::seed_jitter(0x5eed);
    let b = Backoff::new(Duration::from_millis(200), Duration::from_secs(30));
    let k = 4;
    let c = b.ceiling(k).as_secs_f64();
    let draws: Vec<f64> = (0..N)
        .map(|_| b.delay(k, b.base()).as_secs_f64() / c)
        .collect();
    assert!(
        draws.iter().all(|x| (0.0..=1.0).contains(x)),
        "a draw exceeded its ceiling"
    );

    let mean = draws.iter().sum::<f64>() / N as f64;
    assert!(
        (mean - 0.5).abs() <= 0.005,
        "mean {mean} is not within 1% of c/2"
    );

    let (d, critical) = ks_uniform(draws);
    assert!(d < critical, "KS statistic {d} >= {critical}: not uniform");
}

#[test]
fn the_ks_test_rejects_a_jitter_that_overshoots_its_ceiling() {
    // backon's bug in miniature: the ceiling's draw plus up to one more base. The KS test must
    // reject it, or passing it proves nothing.
    testing::seed_jitter(0x5eed);
    let b = Backoff::new(Duration::from_millis(200), Duration::from_secs(30));
    let c = b.ceiling(4);
    let draws: Vec<f64> = (0..N)
        .map(|_| (b.delay(4, b.base()) + b.delay(1, b.base())).as_secs_f64() / c.as_secs_f64())
        .collect();
    let (d, critical) = ks_uniform(draws);
    assert!(
        d > critical,
        "KS statistic {d} did not reject an overshooting jitter"
    );
}
