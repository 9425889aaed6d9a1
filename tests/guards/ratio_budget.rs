//! `RatioBudget`: exact accounting for every ratio, the floor, the window on tokio's paused
//! clock, and conservation under 8 threads.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use retry_jitter::sleep::tokio_now;
use retry_jitter::time::Clock;
use retry_jitter::RatioBudget;

/// A clock that never moves: nothing leaves the window.
fn frozen() -> Instant {
    static AT: OnceLock<Instant> = OnceLock::new();
    *AT.get_or_init(Instant::now)
}

/// Ask for retries until refused; how many were granted.
fn drain(b: &RatioBudget, clock: Clock) -> u64 {
    let mut granted = 0;
    while b.try_retry(clock) {
        granted += 1;
        assert!(granted < 10_000_000, "a budget that never runs dry");
    }
    granted
}

/// `floor(ratio × calls + min_per_sec × window_secs)`, in integers: the ratio in millionths.
fn expected(millionths: u64, calls: u64, min_per_sec: u64, window_ms: u64) -> u64 {
    (millionths * calls * 1_000 + min_per_sec * window_ms * 1_000_000) / 1_000_000_000
}

#[test]
fn every_ratio_grants_exactly_its_share_of_the_calls() {
    for (ratio, millionths) in [
        (0.01, 10_000),
        (0.2, 200_000),
        (0.6, 600_000),
        (1.0, 1_000_000),
        (10.0, 10_000_000),
    ] {
        for calls in [0, 1, 7, 99, 100, 1_000, 12_345] {
            for (min_per_sec, window_ms) in [(0, 10_000), (3, 1_500), (10, 10_000)] {
                let b = RatioBudget::new(ratio, min_per_sec, Duration::from_millis(window_ms));
                for _ in 0..calls {
                    b.begin(frozen);
                }
                let want = expected(millionths, calls, u64::from(min_per_sec), window_ms);
                assert_eq!(
                    u64::from(b.available(frozen)),
                    want,
                    "{ratio} × {calls} + {min_per_sec}/s × {window_ms} ms available"
                );
                assert_eq!(
                    drain(&b, frozen),
                    want,
                    "{ratio} × {calls} + {min_per_sec}/s × {window_ms} ms granted"
                );
                assert_eq!(b.available(frozen), 0);
            }
        }
    }
}

#[test]
fn sixty_percent_is_sixty_percent_not_one_retry_per_call() {
    // tower's TpsBudget turns 0.6 into one retry per ⌊1 / 0.6⌋ = 1 call: 100% (tower#857).
    let b = RatioBudget::new(0.6, 0, Duration::from_secs(10));
    for _ in 0..1_000 {
        b.begin(frozen);
    }
    assert_eq!(drain(&b, frozen), 600);
}

#[test]
fn calls_made_while_retrying_pay_for_more_retries_as_they_come() {
    let b = RatioBudget::new(0.2, 0, Duration::from_secs(10));
    let mut granted = 0;
    for calls in 1..=1_000u64 {
        b.begin(frozen);
        if b.try_retry(frozen) {
            granted += 1;
        }
        // Never more than a fifth of the calls so far, and never behind by a whole retry.
        assert_eq!(granted, calls / 5, "after {calls} calls");
    }
}

#[test]
fn the_floor_alone_grants_min_per_sec_times_the_window() {
    let b = RatioBudget::new(0.0, 10, Duration::from_secs(10));
    assert_eq!(drain(&b, frozen), 100);
    let none = RatioBudget::new(0.0, 0, Duration::from_secs(10));
    for _ in 0..1_000 {
        none.begin(frozen);
    }
    assert_eq!(drain(&none, frozen), 0);
}

#[test]
fn a_refund_gives_one_retry_back_and_a_success_changes_nothing() {
    let b = RatioBudget::new(0.5, 0, Duration::from_secs(10));
    for _ in 0..4 {
        b.begin(frozen);
    }
    let ticket = b.take_retry(frozen).unwrap();
    assert!(b.try_retry(frozen));
    assert!(!b.try_retry(frozen));
    b.refund(ticket);
    assert_eq!(b.available(frozen), 1);
    b.succeeded_after(0);
    b.succeeded_after(5);
    assert_eq!(b.available(frozen), 1);
}

#[tokio::test(start_paused = true)]
async fn calls_and_retries_leave_the_window_sixteen_slots_after_their_own() {
    let b = RatioBudget::new(0.2, 0, Duration::from_secs(10));
    assert_eq!(b.granularity(), Duration::from_millis(625));
    for _ in 0..1_000 {
        b.begin(tokio_now);
    }
    for _ in 0..50 {
        assert!(b.try_retry(tokio_now));
    }
    assert_eq!(b.available(tokio_now), 150);
    // The last slot of the window: [9.375 s, 10 s) after the first.
    tokio::time::advance(Duration::from_millis(9_999)).await;
    assert_eq!(b.available(tokio_now), 150);
    // Calls and retries of t = 0 both leave at 10 s.
    tokio::time::advance(Duration::from_millis(1)).await;
    assert_eq!(b.available(tokio_now), 0);
    assert!(!b.try_retry(tokio_now));
}

#[tokio::test(start_paused = true)]
async fn the_window_slides_slot_by_slot() {
    let b = RatioBudget::new(1.0, 0, Duration::from_secs(16)); // 1 s slots
    for second in 0..16u64 {
        // A clock reading first, so that the calls of each second are dated in it.
        assert_eq!(u64::from(b.available(tokio_now)), 10 * second);
        for _ in 0..10 {
            b.begin(tokio_now);
        }
        tokio::time::advance(Duration::from_secs(1)).await;
    }
    // Second 16: the calls of second 0 have left; 15 seconds of 10 are left.
    assert_eq!(b.available(tokio_now), 150);
    tokio::time::advance(Duration::from_secs(5)).await;
    assert_eq!(b.available(tokio_now), 100);
    // A silence longer than the window: nothing is left but the floor (none here).
    tokio::time::advance(Duration::from_secs(3_600)).await;
    assert_eq!(b.available(tokio_now), 0);
}

#[tokio::test(start_paused = true)]
async fn retries_that_leave_the_window_give_the_floor_back() {
    let b = RatioBudget::new(0.0, 1, Duration::from_secs(10));
    assert_eq!(drain(&b, tokio_now), 10);
    tokio::time::advance(Duration::from_secs(5)).await;
    assert!(!b.try_retry(tokio_now));
    tokio::time::advance(Duration::from_secs(5)).await;
    assert_eq!(drain(&b, tokio_now), 10);
}

/// Issue 27's low call rate: one call every 500 ms, ratio 0.5, window 10 s. After 31.5 s of
/// healthy traffic the 20 calls of the last 10 s pay for 10 retries (the calls dated one in
/// 64 to a stale reading paid for none).
#[tokio::test(start_paused = true)]
async fn every_call_counts_in_the_slot_of_its_own_time_at_a_low_rate() {
    let b = RatioBudget::new(0.5, 0, Duration::from_secs(10));
    for _ in 0..63 {
        b.begin(tokio_now);
        tokio::time::advance(Duration::from_millis(500)).await;
    }
    b.begin(tokio_now); // t = 31.5 s
                        // The window's 16 slots of 625 ms: [21.875 s, 31.5 s]: the calls of 22 s to 31.5 s.
    assert_eq!(b.available(tokio_now), 10);
    assert_eq!(drain(&b, tokio_now), 10);
}

/// One call an hour for a day of virtual time, window 2 h (slots of 7.5 min), ratio 1: after
/// each call the window holds exactly that call and the one an hour before.
#[tokio::test(start_paused = true)]
async fn one_call_an_hour_for_a_day_is_counted_to_the_call() {
    let b = RatioBudget::new(1.0, 0, Duration::from_secs(7_200));
    for hour in 0..24u32 {
        b.begin(tokio_now);
        assert_eq!(b.available(tokio_now), (hour + 1).min(2), "hour {hour}");
        tokio::time::advance(Duration::from_secs(1_800)).await;
        assert_eq!(b.available(tokio_now), (hour + 1).min(2), "hour {hour}:30");
        tokio::time::advance(Duration::from_secs(1_800)).await;
    }
}

// tower's `TpsBudget` tests (tower/src/retry/budget/tps_budget.rs), ported: `deposit` is a
// call's `begin`, `withdraw` a retry; tower's window is its `ttl`.

#[test]
fn tower_tps_empty() {
    let b = RatioBudget::new(1.0, 0, Duration::from_secs(1));
    assert!(!b.try_retry(frozen));
}

#[tokio::test(start_paused = true)]
async fn tower_tps_leaky() {
    let b = RatioBudget::new(1.0, 0, Duration::from_secs(1));
    b.begin(tokio_now);
    tokio::time::advance(Duration::from_secs(3)).await;
    assert!(!b.try_retry(tokio_now));
}

#[tokio::test(start_paused = true)]
async fn tower_tps_slots() {
    let b = RatioBudget::new(0.5, 0, Duration::from_secs(1));
    b.begin(tokio_now);
    b.begin(tokio_now);
    tokio::time::advance(Duration::from_millis(901)).await;
    // 900 ms later, the deposits are still valid.
    assert!(b.try_retry(tokio_now));
    // A blank slate.
    tokio::time::advance(Duration::from_millis(2_001)).await;
    b.begin(tokio_now);
    tokio::time::advance(Duration::from_millis(301)).await;
    b.begin(tokio_now);
    tokio::time::advance(Duration::from_millis(801)).await;
    b.begin(tokio_now);
    // The first deposit has expired, the second is still valid and makes one retry with the
    // third.
    assert!(b.try_retry(tokio_now));
    assert!(!b.try_retry(tokio_now));
}

#[test]
fn tower_tps_reserve() {
    let b = RatioBudget::new(1.0, 5, Duration::from_secs(1));
    for _ in 0..5 {
        assert!(b.try_retry(frozen));
    }
    assert!(!b.try_retry(frozen));
}

/// Issue 27's late refund, on the budget itself: ratio 1, no floor, window 16 s. 8 calls
/// take 8 retries at t = 0 that wait; 8 more take 8 that run at t = 8 s; the first 8 are
/// refunded at t = 16.5 s, after their slot left the window. The refunds are dropped: the
/// window holds 8 calls and 8 retries, and grants nothing more.
#[tokio::test(start_paused = true)]
async fn a_refund_after_its_slot_left_the_window_is_dropped() {
    let b = RatioBudget::new(1.0, 0, Duration::from_secs(16));
    let waiting: Vec<_> = (0..8)
        .map(|_| {
            b.begin(tokio_now);
            b.take_retry(tokio_now).unwrap()
        })
        .collect();
    tokio::time::advance(Duration::from_secs(8)).await;
    for _ in 0..8 {
        b.begin(tokio_now);
        assert!(b.try_retry(tokio_now));
    }
    tokio::time::advance(Duration::from_millis(8_500)).await;
    assert_eq!(b.available(tokio_now), 0);
    for ticket in waiting {
        b.refund(ticket);
    }
    assert_eq!(b.available(tokio_now), 0);
    // A refund while its slot is in the window goes back to that slot, and leaves with it.
    b.begin(tokio_now);
    let ticket = b.take_retry(tokio_now).unwrap();
    b.refund(ticket);
    assert_eq!(b.available(tokio_now), 1);
    tokio::time::advance(Duration::from_secs(8)).await; // t = 24.5 s: t = 8 s has left
    assert_eq!(b.available(tokio_now), 1);
    tokio::time::advance(Duration::from_secs(8)).await; // t = 32.5 s: so has t = 16.5 s
    assert_eq!(b.available(tokio_now), 0);
}

/// The same through the closure API: the first 8 callers' retries wait on a 20 s server hint
/// and are dropped (the callers' own timeout) at t = 16.5 s; the next 8 callers' retries at
/// t = 8 s run and fail with an 8.6 s hint. Their second retries, at t = 16.6 s, are over the
/// ratio (the window holds their 8 calls and 8 retries) and refused: the service sees 8 + 16
/// calls, not the 8 + 24 the dropped refunds paid for when they were taken from the retries
/// of t = 8 s (issue 27).
#[tokio::test(start_paused = true)]
async fn through_the_loop_a_dropped_retry_after_its_slot_left_pays_for_nothing() {
    use retry_jitter::{Decision, GiveUpReason, Policy, Retry};
    use std::sync::{Arc, Mutex};
    static B: RatioBudget = RatioBudget::new(1.0, 0, Duration::from_secs(16));
    let gave_up = Arc::new(Mutex::new(Vec::new()));
    let retry = || {
        let gave_up = Arc::clone(&gave_up);
        Retry::new(
            Policy::new()
                .with_attempts(3)
                .with_base(Duration::ZERO)
                .with_cap(Duration::from_secs(60)),
        )
        .on(|e: &(u32, Duration)| Decision::RetryAfter(e.1))
        .give_up(move |_: &(u32, Duration), g: &retry_jitter::GiveUp| {
            gave_up.lock().unwrap().push(g.reason)
        })
        .budget(&B)
    };
    let first_calls = Arc::new(AtomicU64::new(0));
    let second_calls = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let calls = Arc::clone(&first_calls);
        let r = retry();
        tasks.push(tokio::spawn(async move {
            let call = r.call_async(|| {
                calls.fetch_add(1, Ordering::Relaxed);
                async { Err::<(), _>((0, Duration::from_secs(20))) }
            });
            let _ = tokio::time::timeout(Duration::from_millis(16_500), call).await;
        }));
    }
    tokio::time::sleep(Duration::from_secs(8)).await;
    for _ in 0..8 {
        let calls = Arc::clone(&second_calls);
        let r = retry();
        tasks.push(tokio::spawn(async move {
            let gave_up = r
                .call_async(|| {
                    let n = calls.fetch_add(1, Ordering::Relaxed);
                    async move {
                        // The first attempts ask to come back at once, the retries in 8.6 s.
                        let hint = if n < 8 { 0 } else { 8_600 };
                        Err::<(), _>((1, Duration::from_millis(hint)))
                    }
                })
                .await;
            assert!(gave_up.is_err());
        }));
    }
    // t = 16.2 s: the budget is read (another caller's call, a dashboard), so the slot of
    // t = 0 has been emptied, its retries given back, when the first callers are dropped.
    tokio::time::sleep(Duration::from_millis(8_200)).await;
    assert_eq!(B.available(tokio_now), 0);
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(first_calls.load(Ordering::Relaxed), 8);
    assert_eq!(
        second_calls.load(Ordering::Relaxed),
        16,
        "8 calls, 8 retries"
    );
    let reasons = gave_up.lock().unwrap().clone();
    assert_eq!(reasons, vec![GiveUpReason::BudgetEmpty; 8]);
}

static READS: AtomicUsize = AtomicUsize::new(0);

fn counted() -> Instant {
    READS.fetch_add(1, Ordering::Relaxed);
    frozen()
}

#[test]
fn every_call_reads_the_clock_once_and_a_success_never() {
    let b = RatioBudget::new(0.2, 0, Duration::from_secs(10));
    for _ in 0..640 {
        b.begin(counted);
        b.succeeded_after(0);
    }
    assert_eq!(READS.load(Ordering::Relaxed), 640);
    assert_eq!(b.available(frozen), 128);
}

#[test]
fn eight_threads_of_a_million_operations_conserve_retries_exactly() {
    const THREADS: u64 = 8;
    const OPS: u64 = 1_000_000;
    static BUDGET: RatioBudget = RatioBudget::new(0.6, 0, Duration::from_secs(10));
    let (begun, granted, refunded) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (begun, granted, refunded) = (&begun, &granted, &refunded);
            s.spawn(move || {
                let (mut b, mut g, mut r) = (0, 0, 0);
                let mut held = Vec::new();
                for i in 0..OPS {
                    // Per 10 operations: 5 calls, 4 retries asked (more than 60% of 5 can
                    // pay for), and one of the granted retries given back.
                    match (i + t) % 10 {
                        0..=4 => {
                            BUDGET.begin(frozen);
                            b += 1;
                        }
                        5 if !held.is_empty() => {
                            BUDGET.refund(held.pop().unwrap());
                            r += 1;
                        }
                        _ => {
                            if let Some(ticket) = BUDGET.take_retry(frozen) {
                                held.push(ticket);
                                g += 1;
                            }
                        }
                    }
                }
                begun.fetch_add(b, Ordering::Relaxed);
                granted.fetch_add(g, Ordering::Relaxed);
                refunded.fetch_add(r, Ordering::Relaxed);
            });
        }
    });
    let (begun, granted, refunded) = (
        begun.into_inner(),
        granted.into_inner(),
        refunded.into_inner(),
    );
    assert_eq!(begun, THREADS * OPS / 2);
    let held = granted - refunded;
    let share = begun * 6 / 10;
    // Not one retry made up or lost: what is held and what is left make the share exactly.
    assert_eq!(u64::from(BUDGET.available(frozen)) + held, share);
    // And retries were asked for more often than the calls paid for them: all of it was
    // taken but what each thread's last few operations (calls, a refund) left.
    assert!(held + 5 * THREADS >= share, "{held} held of {share}");
}

// The `budget` key and `Retry::budget` take a `RatioBudget` as they take a `RetryBudget`.

mod through_the_loop {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Duration;

    use retry_jitter::{retry, GiveUp, GiveUpReason, Policy, RatioBudget, Retry};

    /// No share of the calls, a floor of 2 retries over the (long) window.
    const fn floor_of_two() -> RatioBudget {
        RatioBudget::new(0.0, 1, Duration::from_secs(2))
    }

    static SYNC: RatioBudget = floor_of_two();
    static SYNC_CALLS: AtomicU32 = AtomicU32::new(0);

    #[retry(attempts = 5, base = "0ms", budget = &SYNC)]
    fn always_down_sync() -> Result<(), &'static str> {
        SYNC_CALLS.fetch_add(1, Ordering::Relaxed);
        Err("down")
    }

    #[test]
    fn the_budget_key_on_a_sync_fn_stops_retrying_when_the_share_is_spent() {
        assert_eq!(always_down_sync(), Err("down"));
        assert_eq!(
            SYNC_CALLS.load(Ordering::Relaxed),
            3,
            "1 call + the floor's 2 retries"
        );
        assert_eq!(always_down_sync(), Err("down"));
        assert_eq!(SYNC_CALLS.load(Ordering::Relaxed), 4, "no retry left");
    }

    static ASYNC: RatioBudget = floor_of_two();
    static ASYNC_CALLS: AtomicU32 = AtomicU32::new(0);

    #[retry(attempts = 5, base = "10ms", budget = &ASYNC)]
    async fn always_down_async() -> Result<(), &'static str> {
        ASYNC_CALLS.fetch_add(1, Ordering::Relaxed);
        Err("down")
    }

    static HEDGED: RatioBudget = floor_of_two();
    static HEDGED_CALLS: AtomicU32 = AtomicU32::new(0);

    #[retry(attempts = 5, base = "10ms", budget = &HEDGED, hedge = "50ms")]
    async fn hanging_hedged() -> Result<(), &'static str> {
        HEDGED_CALLS.fetch_add(1, Ordering::Relaxed);
        tokio::time::sleep(Duration::from_secs(1)).await;
        Err("down")
    }

    #[tokio::test(start_paused = true)]
    async fn the_budget_key_on_async_and_hedged_fns() {
        assert_eq!(always_down_async().await, Err("down"));
        assert_eq!(ASYNC_CALLS.load(Ordering::Relaxed), 3);
        // Two hedges take the floor's two retries; then no more attempts start.
        assert_eq!(hanging_hedged().await, Err("down"));
        assert_eq!(HEDGED_CALLS.load(Ordering::Relaxed), 3);
    }

    #[test]
    fn the_closure_api_reports_budget_empty() {
        static B: RatioBudget = floor_of_two();
        let reasons = std::sync::Mutex::new(Vec::new());
        let r = Retry::new(Policy::new().with_attempts(5).with_base(Duration::ZERO))
            .budget(&B)
            .give_up(|_: &&str, g: &GiveUp| reasons.lock().unwrap().push((g.reason, g.calls)));
        let mut calls = 0;
        let _ = r.call(|| {
            calls += 1;
            Err::<(), _>("down")
        });
        assert_eq!(calls, 3);
        assert_eq!(*reasons.lock().unwrap(), [(GiveUpReason::BudgetEmpty, 3)]);
    }

    #[test]
    fn a_share_of_the_calls_made_pays_for_retries() {
        // 50% of the calls: ten first-try successes pay for five retries.
        static B: RatioBudget = RatioBudget::new(0.5, 0, Duration::from_secs(60));
        let r = Retry::new(Policy::new().with_attempts(100).with_base(Duration::ZERO)).budget(&B);
        for _ in 0..10 {
            assert_eq!(r.call(|| Ok::<_, ()>(())), Ok(()));
        }
        let mut calls = 0;
        let _ = r.call(|| {
            calls += 1;
            Err::<(), _>(())
        });
        // Eleven calls made (this one too): 5.5 retries' worth, 5 granted.
        assert_eq!(calls, 6);
    }
}
