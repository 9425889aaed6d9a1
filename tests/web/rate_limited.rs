//! A server limiting the rate (HTTP 429, gRPC `RESOURCE_EXHAUSTED`, with no hint) gets its own
//! backoff: `Decision::RateLimited`, waits drawn from `rate_limited_base` (1 s unless set)
//! under the same cap; a hint still wins; a `RetryBudget` may price it apart.
#![cfg(all(feature = "reqwest", feature = "tonic"))]

use crate::loopback;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use retry_jitter::reqwest::{check, Error};
use retry_jitter::{
    retry, testing, transient, Decision, Jitter, Policy, Retry, RetryBudget, RetryEvent, Transient,
};

const MS: fn(u64) -> Duration = Duration::from_millis;

/// The waits a sync call slept, its decisions given one per failed attempt.
fn waits(policy: Policy, decisions: &[Decision]) -> Vec<Duration> {
    let mut next = decisions.iter().copied();
    let (_, slept) = testing::record_sleeps(|| {
        Retry::new(policy)
            .on(|d: &Decision| *d)
            .call(|| match next.next() {
                Some(d) => Err(d),
                None => Ok(()),
            })
    });
    slept
}

#[test]
fn a_rate_limited_failure_waits_from_its_own_base_under_the_same_cap() {
    let policy = Policy::new()
        .with_base(MS(50))
        .with_jitter(Jitter::None)
        .with_attempts(5);
    // The default base of a server limiting the rate: 1 s, doubling.
    let rl = [Decision::RateLimited; 3];
    assert_eq!(waits(policy, &rl), [MS(1000), MS(2000), MS(4000)]);
    // Each wait draws from the base of its own decision, at the retry's own exponent.
    let mixed = [Decision::Retry, Decision::RateLimited, Decision::Retry];
    assert_eq!(waits(policy, &mixed), [MS(50), MS(2000), MS(200)]);
    // Set apart, and capped by the policy's one cap.
    let policy = policy.with_rate_limited_base(MS(300)).with_cap(MS(1000));
    assert_eq!(waits(policy, &rl), [MS(300), MS(600), MS(1000)]);
    // Full jitter draws below the ceiling, as for any retry.
    let full = Policy::new()
        .with_attempts(9)
        .with_cap(Duration::from_secs(60));
    testing::seed_jitter(7);
    let drawn = waits(full, &[Decision::RateLimited; 8]);
    for (k, wait) in drawn.iter().enumerate() {
        assert!(*wait <= Duration::from_secs(1 << k), "{k}: {wait:?}");
    }
    assert!(drawn.iter().any(|w| *w > MS(200)), "{drawn:?}");
}

/// Issue 49: every jitter mode spreads rate-limited waits, drawn from `rate_limited_base` with
/// its own spread. A decorrelated draw grew from `base` (200 ms), below a third of
/// `rate_limited_base`: every client then waited exactly 1 s, a throttled fleet back together.
#[test]
fn every_jitter_mode_spreads_a_rate_limited_wait() {
    let second = Duration::from_secs(1);
    // (mode, the first rate-limited wait's bounds)
    let modes = [
        (Jitter::Full, Duration::ZERO, second),
        (Jitter::Equal, second / 2, second),
        (Jitter::Decorrelated, second, 3 * second),
    ];
    testing::seed_jitter(49);
    for (jitter, lo, hi) in modes {
        let policy = Policy::new()
            .with_jitter(jitter)
            .with_attempts(2)
            .with_cap(Duration::from_secs(30));
        let drawn: Vec<Duration> = (0..100)
            .flat_map(|_| waits(policy, &[Decision::RateLimited]))
            .collect();
        assert_eq!(drawn.len(), 100);
        assert!(
            drawn.iter().all(|w| (lo..=hi).contains(w)),
            "{jitter:?}: {drawn:?}"
        );
        let (min, max) = (drawn.iter().min().unwrap(), drawn.iter().max().unwrap());
        // 100 uniform draws: the least in the range's first tenth, the most in its last, but
        // for a chance of 2·0.9^100 (5e-5) a seed; the seed is fixed.
        assert!(*min < lo + (hi - lo) / 10, "{jitter:?}: least {min:?}");
        assert!(*max > hi - (hi - lo) / 10, "{jitter:?}: most {max:?}");
    }
    // Under a cap below the rate-limited base, every mode waits the cap: nothing longer.
    for jitter in [Jitter::Full, Jitter::Equal, Jitter::Decorrelated] {
        let policy = Policy::new()
            .with_jitter(jitter)
            .with_attempts(4)
            .with_cap(MS(300));
        for wait in waits(policy, &[Decision::RateLimited; 3]) {
            assert!(wait <= MS(300), "{jitter:?}: {wait:?}");
        }
    }
}

#[retry(attempts = 4, base = "10ms", rate_limited_base = "100ms", cap = "250ms", jitter = none, on = |d: &Decision| *d)]
fn keyed(decisions: &Mutex<Vec<Decision>>) -> Result<(), Decision> {
    match decisions.lock().unwrap().pop() {
        Some(d) => Err(d),
        None => Ok(()),
    }
}

#[test]
fn the_attribute_s_key_sets_the_base() {
    let decisions = Mutex::new(vec![
        Decision::Retry,
        Decision::RateLimited,
        Decision::RateLimited,
    ]);
    let (out, slept) = testing::record_sleeps(|| keyed(&decisions));
    assert_eq!(out, Ok(()));
    assert_eq!(slept, [MS(100), MS(200), MS(40)]);
}

#[test]
fn the_tables_say_rate_limited_without_a_hint_and_retry_after_with_one() {
    use retry_jitter::http::classify_response;
    let now = std::time::SystemTime::now();
    let mut headers = http::HeaderMap::new();
    assert_eq!(
        classify_response(http::StatusCode::TOO_MANY_REQUESTS, &headers, now),
        Decision::RateLimited
    );
    assert_eq!(
        classify_response(http::StatusCode::SERVICE_UNAVAILABLE, &headers, now),
        Decision::Retry
    );
    // AWS's hint, in milliseconds, clamped to 5 s.
    headers.insert("x-amz-retry-after", "1500".parse().unwrap());
    assert_eq!(
        classify_response(http::StatusCode::TOO_MANY_REQUESTS, &headers, now),
        Decision::RetryAfter(MS(1500))
    );
    headers.insert("x-amz-retry-after", "90000".parse().unwrap());
    assert_eq!(
        classify_response(http::StatusCode::SERVICE_UNAVAILABLE, &headers, now),
        Decision::RetryAfter(MS(5000))
    );
    headers.insert("retry-after", "2".parse().unwrap());
    assert_eq!(
        classify_response(http::StatusCode::TOO_MANY_REQUESTS, &headers, now),
        Decision::RetryAfter(MS(2000))
    );
    // gRPC: RESOURCE_EXHAUSTED without a pushback, and with one.
    let status = tonic::Status::resource_exhausted("quota");
    assert_eq!(transient(&status), Decision::RateLimited);
    let mut status = tonic::Status::resource_exhausted("quota");
    status
        .metadata_mut()
        .insert("grpc-retry-pushback-ms", "700".parse().unwrap());
    assert_eq!(status.decision(), Decision::RetryAfter(MS(700)));
    assert_eq!(
        transient(&tonic::Status::unavailable("down")),
        Decision::Retry
    );
}

static SERVED: AtomicU32 = AtomicU32::new(0);
static DELAYS: Mutex<Vec<(u32, Duration)>> = Mutex::new(Vec::new());

fn heard(_: &Error, event: &RetryEvent) {
    DELAYS.lock().unwrap().push((event.attempt, event.delay));
}

#[retry(attempts = 4, base = "1ms", rate_limited_base = "40ms", jitter = none, notify = heard)]
async fn fetch(client: &reqwest::Client, url: &str) -> Result<String, Error> {
    let resp = client.get(url).send().await?;
    Ok(check(resp).await?.text().await?)
}

/// A real server on loopback answering 429 with no hint twice, then 503, then 200: the 429s
/// wait from the rate-limited base, the 503 from the base (the waits read from `notify`).
#[tokio::test]
async fn a_real_429_without_a_hint_backs_off_from_the_rate_limited_base() {
    let app = axum::Router::new().route(
        "/",
        get(|| async {
            match SERVED.fetch_add(1, Ordering::SeqCst) {
                0 | 1 => (StatusCode::TOO_MANY_REQUESTS, HeaderMap::new(), "slow down"),
                2 => (StatusCode::SERVICE_UNAVAILABLE, HeaderMap::new(), "busy"),
                _ => (StatusCode::OK, HeaderMap::new(), "done"),
            }
        }),
    );
    let addr = loopback::serve(app).await;
    let client = reqwest::Client::new();
    let body = fetch(&client, &format!("http://{addr}/")).await.unwrap();
    assert_eq!(body, "done");
    assert_eq!(SERVED.load(Ordering::SeqCst), 4);
    assert_eq!(
        *DELAYS.lock().unwrap(),
        [(1, MS(40)), (2, MS(80)), (3, MS(4))]
    );
}

static HINTED: AtomicU32 = AtomicU32::new(0);
static HINT_GIVE_UPS: Mutex<Vec<(retry_jitter::GiveUpReason, u32)>> = Mutex::new(Vec::new());

fn gave_up(_: &Error, g: &retry_jitter::GiveUp) {
    HINT_GIVE_UPS.lock().unwrap().push((g.reason, g.calls));
}

/// The README's example, its `Retry-After` comment checked: a hint past `cap` ends the call.
#[retry(attempts = 4, base = "200ms", cap = "5s", timeout = "2s", max_elapsed = "10s", give_up = gave_up)]
async fn fetch_hinted(client: &reqwest::Client, url: &str) -> Result<String, Error> {
    let resp = client.get(url).send().await?;
    Ok(check(resp).await?.text().await?)
}

/// A real server answering `429` with `Retry-After: 60`, past the 5 s `cap`: one call, then the
/// 429 returned at once (`HintBeyondCap`), not a minute's wait.
#[tokio::test]
async fn a_real_retry_after_past_cap_ends_the_call_at_once() {
    let app = axum::Router::new().route(
        "/",
        get(|| async {
            HINTED.fetch_add(1, Ordering::SeqCst);
            let mut headers = HeaderMap::new();
            headers.insert("retry-after", "60".parse().unwrap());
            (StatusCode::TOO_MANY_REQUESTS, headers, "slow down")
        }),
    );
    let addr = loopback::serve(app).await;
    let started = std::time::Instant::now();
    let out = fetch_hinted(&reqwest::Client::new(), &format!("http://{addr}/")).await;
    assert_eq!(out.unwrap_err().status().map(|s| s.as_u16()), Some(429));
    assert_eq!(HINTED.load(Ordering::SeqCst), 1);
    assert_eq!(
        *HINT_GIVE_UPS.lock().unwrap(),
        [(retry_jitter::GiveUpReason::HintBeyondCap, 1)]
    );
    // Not the minute asked for (a bound a loaded machine keeps: nothing is waited at all).
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn a_budget_prices_each_kind_and_gives_back_what_was_taken() {
    let run = |budget: &RetryBudget, decisions: &[Decision]| {
        let mut next = decisions.iter().copied();
        let calls = Arc::new(AtomicU32::new(0));
        let c = calls.clone();
        let policy = Policy::new()
            .with_base(Duration::ZERO)
            .with_rate_limited_base(Duration::ZERO)
            .with_attempts(9);
        let out = Retry::new(policy)
            .on(|d: &Decision| *d)
            .budget(budget)
            .call(|| {
                c.fetch_add(1, Ordering::SeqCst);
                match next.next() {
                    Some(d) => Err(d),
                    None => Ok(()),
                }
            });
        (out, calls.load(Ordering::SeqCst))
    };
    // The AWS SDKs' 2026 prices: 14 a retry, 5 a retry after throttling.
    let budget = RetryBudget::new(20).with_costs(14, 5);
    assert_eq!(
        run(&budget, &[Decision::RateLimited; 8]),
        (Err(Decision::RateLimited), 5)
    );
    assert_eq!(budget.available(), 0);
    let budget = RetryBudget::new(20).with_costs(14, 5);
    assert_eq!(
        run(&budget, &[Decision::Retry; 8]),
        (Err(Decision::Retry), 2)
    );
    assert_eq!(budget.available(), 6);
    // A call that recovers gives back exactly what its retries took: 5 + 5 + 14.
    let budget = RetryBudget::new(30).with_costs(14, 5);
    let recovering = [
        Decision::RateLimited,
        Decision::Retry,
        Decision::RateLimited,
    ];
    assert_eq!(run(&budget, &recovering), (Ok(()), 4));
    assert_eq!(budget.available(), 30);
    // A single cost prices both kinds, as before.
    let budget = RetryBudget::new(10).with_retry_cost(5);
    assert_eq!(
        run(&budget, &[Decision::RateLimited; 8]),
        (Err(Decision::RateLimited), 3)
    );
}

/// 64 calls in flight on a multi-thread runtime, each limited twice before it succeeds: the
/// budget priced by kind is never overdrawn, and at the end it holds exactly what the calls
/// that gave up took (a call that recovered gave back its 5 + 5).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_budget_priced_by_kind_under_64_calls_in_flight() {
    static BUDGET: RetryBudget = RetryBudget::new(500).with_costs(14, 5);
    let policy = Policy::new()
        .with_base(Duration::ZERO)
        .with_rate_limited_base(Duration::ZERO)
        .with_attempts(3);
    let mut calls = Vec::new();
    for _ in 0..64 {
        calls.push(tokio::spawn(async move {
            let made = Arc::new(AtomicU32::new(0));
            let m = made.clone();
            let out = Retry::new(policy)
                .on(|d: &Decision| *d)
                .budget(&BUDGET)
                .call_async(move || {
                    let n = m.fetch_add(1, Ordering::SeqCst);
                    async move {
                        tokio::task::yield_now().await;
                        if n < 2 {
                            Err(Decision::RateLimited)
                        } else {
                            Ok(())
                        }
                    }
                })
                .await;
            (out, made.load(Ordering::SeqCst))
        }));
    }
    let mut kept = 0;
    for call in calls {
        let (out, made) = call.await.unwrap();
        match out {
            Ok(()) => assert_eq!(made, 3),
            Err(Decision::RateLimited) => kept += 5 * (made - 1),
            Err(other) => panic!("{other:?}"),
        }
        assert!(BUDGET.available() <= 500);
    }
    assert_eq!(BUDGET.available(), 500 - kept);
}
