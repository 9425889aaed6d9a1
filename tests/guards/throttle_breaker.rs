//! Adaptive throttling and the circuit breaker (`throttle = …`, `breaker = …`, and the closure
//! API's `Retry::throttle`/`Retry::breaker`): the throttle's rejections follow the SRE book's
//! formula; the breaker counts calls, opens, refuses, probes and closes exactly; both on sync,
//! async, hedged and closure-API calls, on tokio's paused clock.

use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use retry_jitter::breaker::BreakerState;
use retry_jitter::hedge::Hedge;
use retry_jitter::{
    retry, sleep, testing, AdaptiveThrottle, CircuitBreaker, CircuitOpen, GiveUp, GiveUpReason,
    Policy, Retry, Throttled,
};

fn down() -> io::Error {
    io::Error::from(io::ErrorKind::ConnectionRefused)
}

fn is<T: std::error::Error + 'static>(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<T>())
}

#[test]
fn the_throttle_rejects_as_the_formula_says() {
    // requests − 2·accepts over requests + 1, drawn with seeded jitter: over 100,000 attempts
    // to a service that answers one in five, the rejections are the sum of the probabilities
    // asked for, within five standard deviations.
    static T: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(3600));
    testing::seed_jitter(42);
    let (mut expected, mut variance, mut rejected) = (0.0f64, 0.0f64, 0u32);
    for i in 0..100_000u32 {
        let p = T.rejection_probability(sleep::now);
        expected += p;
        variance += p * (1.0 - p);
        if T.admit(sleep::now) {
            T.answered(sleep::now, i % 5 == 0);
        } else {
            rejected += 1;
        }
    }
    let sigma = variance.sqrt();
    assert!(
        (f64::from(rejected) - expected).abs() < 5.0 * sigma,
        "{rejected} rejected, {expected:.0} ± {sigma:.0} expected"
    );
    assert!(rejected > 10_000, "the service answers little: {rejected}");
}

#[test]
fn the_throttle_probability_is_the_formula() {
    let t = AdaptiveThrottle::new(2.0, Duration::from_secs(3600));
    for i in 0..1000 {
        t.answered(sleep::now, i < 100);
    }
    // 1000 requests answered, 100 accepted: (1000 − 200) / 1001.
    assert_eq!(t.counts(sleep::now), (1000, 100));
    let p = t.rejection_probability(sleep::now);
    assert!((p - 800.0 / 1001.0).abs() < 1e-12, "{p}");
    // An attempt let through counts for nothing until it is answered; one rejected counts as
    // a request at once.
    testing::seed_jitter(1);
    let (mut admitted, mut rejected) = (0, 0);
    for _ in 0..100 {
        if t.admit(sleep::now) {
            admitted += 1;
        } else {
            rejected += 1;
        }
    }
    assert!(
        admitted > 0 && rejected > 0,
        "{admitted} admitted, {rejected} rejected"
    );
    assert_eq!(t.counts(sleep::now), (1000 + rejected, 100));
}

static THROTTLE_CALLS: AtomicU32 = AtomicU32::new(0);
static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(1.0, Duration::from_secs(3600));

#[retry(attempts = 3, base = "0ms", throttle = &THROTTLE, on = retry_jitter::transient)]
fn throttled_sync() -> Result<(), io::Error> {
    THROTTLE_CALLS.fetch_add(1, Ordering::Relaxed);
    Err(down())
}

#[test]
fn a_throttled_attempt_is_not_made_and_ends_the_call() {
    // k = 1, a service that never answers: after the first unanswered attempt, nearly every
    // attempt is rejected; a rejected one is not made and the call ends with `Throttled`.
    testing::seed_jitter(7);
    let mut throttled = 0;
    for _ in 0..200 {
        if let Err(e) = throttled_sync() {
            if is::<Throttled>(&e) {
                throttled += 1;
            }
        }
    }
    let made = THROTTLE_CALLS.load(Ordering::Relaxed);
    assert!(throttled > 150, "{throttled} calls throttled");
    assert!(made < 200, "{made} attempts made for 600 asked for");
}

/// A breaker that opens at 5 calls of which all failed, breaks for 5 s.
fn breaker() -> CircuitBreaker {
    CircuitBreaker::new(1.0, 5, Duration::from_secs(60), Duration::from_secs(5))
}

static BREAKER_A: CircuitBreaker =
    CircuitBreaker::new(1.0, 5, Duration::from_secs(60), Duration::from_secs(5));
static CALLS_A: AtomicU32 = AtomicU32::new(0);
static UP_A: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 3, base = "0ms", breaker = &BREAKER_A, on = retry_jitter::transient)]
async fn guarded_async() -> Result<u32, io::Error> {
    CALLS_A.fetch_add(1, Ordering::Relaxed);
    if UP_A.load(Ordering::Relaxed) == 0 {
        return Err(down());
    }
    Ok(1)
}

#[tokio::test(start_paused = true)]
async fn the_breaker_counts_calls_opens_probes_and_closes() {
    let clock = sleep::tokio_now;
    // Five calls of three failing attempts: 15 attempts, then the breaker opens.
    for n in 1..=5 {
        assert!(!is::<CircuitOpen>(&guarded_async().await.unwrap_err()));
        assert_eq!(CALLS_A.load(Ordering::Relaxed), 3 * n);
        let open = n == 5;
        assert_eq!(
            BREAKER_A.state(clock) == BreakerState::Open,
            open,
            "after {n} calls"
        );
    }
    // Open: a call fails at once, the body not called.
    assert!(is::<CircuitOpen>(&guarded_async().await.unwrap_err()));
    assert_eq!(CALLS_A.load(Ordering::Relaxed), 15);
    // After the break, one probe: it fails (three attempts), and the breaker opens again.
    tokio::time::advance(Duration::from_secs(5)).await;
    assert_eq!(BREAKER_A.state(clock), BreakerState::HalfOpen);
    assert!(!is::<CircuitOpen>(&guarded_async().await.unwrap_err()));
    assert_eq!(CALLS_A.load(Ordering::Relaxed), 18);
    assert_eq!(BREAKER_A.state(clock), BreakerState::Open);
    assert!(is::<CircuitOpen>(&guarded_async().await.unwrap_err()));
    // The service is back: the next probe succeeds and closes the breaker.
    UP_A.store(1, Ordering::Relaxed);
    tokio::time::advance(Duration::from_secs(5)).await;
    assert_eq!(guarded_async().await.unwrap(), 1);
    assert_eq!(BREAKER_A.state(clock), BreakerState::Closed);
    assert_eq!(guarded_async().await.unwrap(), 1);
    assert_eq!(CALLS_A.load(Ordering::Relaxed), 20);
}

#[test]
fn one_probe_at_a_time_and_min_calls_and_ratio() {
    let b = breaker();
    let clock = sleep::now;
    for _ in 0..4 {
        b.admit(clock);
        assert_eq!(b.ended(clock, false), None, "under min_calls");
    }
    b.admit(clock);
    assert_eq!(b.ended(clock, false), Some(BreakerState::Open));
    assert_eq!(b.admit(clock), retry_jitter::breaker::Admission::Refuse);
    // A ratio of one half: 2 failures of 4 open it, 1 of 4 does not.
    let half = CircuitBreaker::new(0.5, 4, Duration::from_secs(60), Duration::from_secs(5));
    for success in [true, true, false] {
        half.ended(clock, success);
    }
    assert_eq!(half.state(clock), BreakerState::Closed);
    assert_eq!(half.ended(clock, false), Some(BreakerState::Open));
}

#[tokio::test(start_paused = true)]
async fn failures_leave_the_window() {
    let b = CircuitBreaker::new(1.0, 3, Duration::from_secs(16), Duration::from_secs(5));
    let clock = sleep::tokio_now;
    b.ended(clock, false);
    b.ended(clock, false);
    // 16 s later the two failures have left the window: a third does not open the breaker.
    tokio::time::advance(Duration::from_secs(16)).await;
    assert_eq!(b.ended(clock, false), None);
    assert_eq!(b.state(clock), BreakerState::Closed);
}

#[tokio::test(start_paused = true)]
async fn the_closure_api_and_hedged_calls_are_guarded_too() {
    static B: CircuitBreaker =
        CircuitBreaker::new(1.0, 2, Duration::from_secs(60), Duration::from_secs(5));
    let calls = AtomicU32::new(0);
    let gave_up = std::sync::Mutex::new(Vec::new());
    let r = Retry::new(Policy::new().with_attempts(2).with_base(Duration::ZERO))
        .on(retry_jitter::transient)
        .give_up(|_: &io::Error, g: &GiveUp| gave_up.lock().unwrap().push(g.reason))
        .hedge(Hedge::After(Duration::from_millis(50)))
        .breaker(&B);
    for _ in 0..3 {
        let _ = r
            .call_async(|| {
                calls.fetch_add(1, Ordering::Relaxed);
                async { Err::<(), _>(down()) }
            })
            .await;
    }
    // Two calls of two attempts, then the third is refused without a call.
    assert_eq!(calls.load(Ordering::Relaxed), 4);
    assert_eq!(
        *gave_up.lock().unwrap(),
        [
            GiveUpReason::Attempts,
            GiveUpReason::Attempts,
            GiveUpReason::CircuitOpen
        ]
    );

    static T: AdaptiveThrottle = AdaptiveThrottle::new(1.0, Duration::from_secs(3600));
    testing::seed_jitter(3);
    let sync = Retry::new(Policy::new().with_attempts(3).with_base(Duration::ZERO))
        .on(retry_jitter::transient)
        .throttle(&T);
    let throttled = (0..100)
        .filter(|_| {
            sync.call(|| Err::<(), _>(down()))
                .is_err_and(|e| is::<Throttled>(&e))
        })
        .count();
    assert!(throttled > 50, "{throttled}");
}

#[test]
fn eight_threads_lose_no_update() {
    static B: CircuitBreaker = CircuitBreaker::new(
        1.0,
        u32::MAX,
        Duration::from_secs(3600),
        Duration::from_secs(5),
    );
    static T: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(3600));
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..1_000_000 {
                    B.ended(sleep::now, true);
                    T.answered(sleep::now, true);
                }
            });
        }
    });
    // 8,000,000 calls, each counted once (one slot: the test runs in far less than an hour).
    assert_eq!(B.calls(sleep::now), (8_000_000, 0));
    assert_eq!(B.state(sleep::now), BreakerState::Closed);
    assert_eq!(T.counts(sleep::now), (8_000_000, 8_000_000));
    assert_eq!(T.rejection_probability(sleep::now), 0.0);
}

#[tokio::test(start_paused = true)]
async fn a_hedge_the_throttle_rejects_is_not_started_and_the_first_attempt_goes_on() {
    static T: AdaptiveThrottle = AdaptiveThrottle::new(1.0, Duration::from_secs(3600));
    testing::seed_jitter(11);
    let calls = AtomicU32::new(0);
    let r = Retry::new(Policy::new().with_attempts(3))
        .hedge(Hedge::After(Duration::from_millis(50)))
        .throttle(&T);
    let out = r
        .call_async(|| {
            calls.fetch_add(1, Ordering::Relaxed);
            async {
                // While the first attempt runs, the service is seen failing everything else:
                // by the hedge delay the throttle rejects nearly every attempt.
                for _ in 0..10_000 {
                    let _ = T.admit(tokio_now_clock());
                    T.answered(tokio_now_clock(), false);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
                Ok::<_, io::Error>(7)
            }
        })
        .await;
    assert_eq!(out.unwrap(), 7);
    assert_eq!(
        calls.load(Ordering::Relaxed),
        1,
        "the hedge was not started"
    );
    assert!(T.rejection_probability(tokio_now_clock()) > 0.99);
}

fn tokio_now_clock() -> retry_jitter::time::Clock {
    sleep::tokio_now
}
