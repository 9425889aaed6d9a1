use super::*;
use std::sync::OnceLock;
use std::time::Instant;

fn fixed() -> Instant {
    static AT: OnceLock<Instant> = OnceLock::new();
    *AT.get_or_init(Instant::now)
}

#[test]
fn slot_numbers_compare_across_the_wrap() {
    assert!(later(1, 0));
    assert!(!later(0, 1));
    assert!(later(0, u32::MAX));
    assert!(!later(5, 5));
}

#[test]
fn a_ratio_is_counted_in_millionths_rounded() {
    for (ratio, per_call) in [
        (0.01, 10_000),
        (0.2, 200_000),
        (0.6, 600_000),
        (10.0, 10_000_000),
    ] {
        assert_eq!(
            RatioBudget::new(ratio, 0, Duration::from_secs(1)).per_call,
            per_call
        );
    }
    assert_eq!(
        RatioBudget::new(1e-7, 0, Duration::from_secs(1)).per_call,
        0
    );
}

#[test]
fn the_floor_is_min_per_sec_times_the_window_and_saturates() {
    let b = RatioBudget::new(0.0, 10, Duration::from_millis(1_500));
    assert_eq!(b.available(fixed), 15);
    let huge = RatioBudget::new(10.0, u32::MAX, Duration::MAX);
    assert_eq!(huge.balance.load(Ordering::Relaxed), MAX_FLOOR as i64);
    assert_eq!(huge.granularity(), Duration::from_nanos(u64::MAX));
    let tiny = RatioBudget::new(1.0, 0, Duration::from_nanos(3));
    assert_eq!(tiny.granularity(), Duration::from_nanos(1));
}

#[test]
#[should_panic(expected = "ratio must be in 0.0..=10.0")]
fn a_ratio_above_ten_panics() {
    let _ = RatioBudget::new(10.000_001, 0, Duration::from_secs(1));
}

#[test]
#[should_panic(expected = "ratio must be in 0.0..=10.0")]
fn a_negative_ratio_panics() {
    let _ = RatioBudget::new(-0.0001, 0, Duration::from_secs(1));
}

#[test]
#[should_panic(expected = "window must be longer than zero")]
fn a_zero_window_panics() {
    let _ = RatioBudget::new(0.2, 10, Duration::ZERO);
}

#[test]
fn a_full_slot_refuses_rather_than_forgets() {
    let b = RatioBudget::new(0.0, 0, Duration::from_secs(1));
    b.retries[0].store(pack(0, u32::MAX), Ordering::Relaxed);
    b.balance.store(2 * UNIT, Ordering::Relaxed);
    assert!(!b.try_retry(fixed));
    assert_eq!(b.available(fixed), 2);
}
