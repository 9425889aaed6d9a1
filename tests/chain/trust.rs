//! What a stranger's request can do to a service under `ChainLayer`, on real axum servers on
//! loopback: a deadline header is believed only where the user grants it (`ChainLayer::new`
//! behind their own proxies, never `ChainLayer::edge`), read as Envoy reads it (`0` is no
//! deadline, of several the smallest), and never switched to `grpc-timeout` by the client's
//! `content-type` past a renamed header; an attempt cut by a caller's deadline moves no
//! breaker or throttle that other callers share; `out_of_chain` keeps shared work out of every
//! request's scope.

use crate::loopback;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, StatusCode};
use axum::routing::get;
use retry_jitter::reqwest_middleware::RetryMiddleware;
use retry_jitter::tower::{out_of_chain, ChainLayer};
use retry_jitter::{AdaptiveThrottle, CircuitBreaker, Policy, Retry, RetryBudget};

const ENVOY: &str = "x-envoy-expected-rq-timeout-ms";

/// What a downstream got: its calls, and the deadline header each carried.
///
/// While `hold` is set, a call that arrives gets no answer for a minute.
#[derive(Default)]
struct Down {
    calls: AtomicU32,
    deadlines: Mutex<Vec<Option<u64>>>,
    hold: AtomicBool,
}

impl Down {
    fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }
    /// Hold the answers to the calls that arrive from now (`true`) or stop holding them.
    ///
    /// A test whose callers' attempts must be cut holds them: a runtime stalled past the
    /// downstream's delay would otherwise find the answer ready when it polls the attempt, and
    /// a ready attempt is never cut.
    fn hold(&self, on: bool) {
        self.hold.store(on, Ordering::SeqCst);
    }
    fn deadlines(&self) -> Vec<Option<u64>> {
        self.deadlines.lock().unwrap().clone()
    }
}

/// `f`'s output, with the answers to the calls that arrive at `down` meanwhile held.
async fn held<F: std::future::Future>(down: &Down, f: F) -> F::Output {
    down.hold(true);
    let out = f.await;
    down.hold(false);
    out
}

/// A downstream answering `status` after `delay`, recording the deadline each call carried.
async fn downstream(status: u16, delay: Duration) -> (SocketAddr, Arc<Down>) {
    let down = Arc::new(Down::default());
    let answer = move |State(down): State<Arc<Down>>, headers: HeaderMap| async move {
        down.calls.fetch_add(1, Ordering::SeqCst);
        let deadline = headers
            .get(ENVOY)
            .map(|v| v.to_str().unwrap().parse().unwrap());
        down.deadlines.lock().unwrap().push(deadline);
        let held = down.hold.load(Ordering::SeqCst);
        tokio::time::sleep(if held { Duration::from_secs(60) } else { delay }).await;
        StatusCode::from_u16(status).unwrap()
    };
    let app = axum::Router::new()
        .route("/", get(answer))
        .with_state(down.clone());
    (loopback::serve(app).await, down)
}

/// Four attempts, short waits.
fn four() -> Policy {
    Policy::new()
        .with_attempts(4)
        .with_base(Duration::from_millis(2))
        .with_cap(Duration::from_millis(10))
}

/// A tier under `layer` whose handler calls `down` through `RetryMiddleware` (four attempts)
/// and answers with its status, or `502` when the call failed.
async fn tier(layer: ChainLayer, down: SocketAddr) -> SocketAddr {
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(RetryMiddleware::new(four()))
        .build();
    let handler = move || {
        let client = client.clone();
        async move {
            match client.get(format!("http://{down}/")).send().await {
                Ok(resp) => StatusCode::from_u16(resp.status().as_u16()).unwrap(),
                Err(_) => StatusCode::BAD_GATEWAY,
            }
        }
    };
    let app = axum::Router::new().route("/", get(handler)).layer(layer);
    loopback::serve(app).await
}

/// One request to `addr` carrying `headers` (a name twice is two field lines): its status.
async fn call(addr: SocketAddr, headers: &[(&str, &str)]) -> u16 {
    let mut req = reqwest::Client::new().get(format!("http://{addr}/"));
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    req.send().await.unwrap().status().as_u16()
}

#[tokio::test]
async fn a_zero_deadline_is_no_deadline() {
    // Envoy reads 0 as "no timeout": the tier's loop makes its four attempts, and sends no
    // deadline on.
    let (down, seen) = downstream(503, Duration::ZERO).await;
    let top = tier(ChainLayer::new(), down).await;
    assert_eq!(call(top, &[(ENVOY, "0")]).await, 503);
    assert_eq!(seen.calls(), 4);
    assert_eq!(seen.deadlines(), vec![None; 4]);
}

#[tokio::test]
async fn the_servers_word_in_a_callers_request_changes_no_loop() {
    // What a server says in its answers, sent instead by a caller in its request: read from
    // answers only, so the tier's loop still makes its four attempts on its downstream's 503.
    let (down, seen) = downstream(503, Duration::ZERO).await;
    let top = tier(ChainLayer::new(), down).await;
    let words = [
        ("x-should-retry", "false"),
        ("stripe-should-retry", "false"),
        ("retry-after", "3600"),
        ("x-amz-retry-after", "3600000"),
        ("grpc-retry-pushback-ms", "-1"),
        ("x-envoy-overloaded", "true"),
        ("grpc-previous-rpc-attempts", "4"),
    ];
    assert_eq!(call(top, &words).await, 503);
    assert_eq!(seen.calls(), 4);
}

#[tokio::test]
async fn of_several_deadlines_the_smallest_counts() {
    // The client's 5000, then a proxy's 60 appended: as two field lines, and as one.
    for headers in [
        &[(ENVOY, "5000"), (ENVOY, "60")][..],
        &[(ENVOY, "5000, 60")][..],
        &[(ENVOY, "60"), (ENVOY, "junk"), (ENVOY, "0")][..],
    ] {
        let (down, seen) = downstream(200, Duration::ZERO).await;
        let top = tier(ChainLayer::new(), down).await;
        assert_eq!(call(top, headers).await, 200);
        let sent = seen.deadlines()[0].expect("the deadline is sent on");
        assert!(sent <= 60 && sent > 0, "{headers:?} sent {sent} ms on");
    }
}

#[tokio::test]
async fn a_clients_content_type_does_not_switch_a_renamed_header_to_grpc_timeout() {
    let (down, seen) = downstream(503, Duration::ZERO).await;
    let name = HeaderName::from_static("x-internal-deadline-ms");
    let top = tier(ChainLayer::new().deadline_header(name), down).await;
    let grpc = [("content-type", "application/grpc"), ("grpc-timeout", "1m")];
    assert_eq!(call(top, &grpc).await, 503);
    assert_eq!(seen.calls(), 4, "1 ms from grpc-timeout cut the loop");
    // The renamed header is what counts.
    let (down, seen) = downstream(200, Duration::ZERO).await;
    let name = HeaderName::from_static("x-internal-deadline-ms");
    let top = tier(ChainLayer::new().deadline_header(name), down).await;
    assert_eq!(call(top, &[("x-internal-deadline-ms", "80")]).await, 200);
    assert!(seen.deadlines()[0].is_some_and(|ms| ms <= 80));
}

#[tokio::test]
async fn a_grpc_service_reads_grpc_timeout_by_its_own_setting() {
    // `.grpc()`: the service says every request is gRPC, whatever its `content-type`; the
    // renamed HTTP header is then not read.
    let (down, seen) = downstream(200, Duration::ZERO).await;
    let name = HeaderName::from_static("x-internal-deadline-ms");
    let top = tier(ChainLayer::new().deadline_header(name).grpc(), down).await;
    let headers = [("grpc-timeout", "80m"), ("x-internal-deadline-ms", "5000")];
    assert_eq!(call(top, &headers).await, 200);
    let sent = seen.deadlines()[0].expect("the deadline is sent on");
    assert!(sent > 0 && sent <= 80, "{sent} ms");
    // At the edge, `.grpc()` reads nothing either.
    let (down, seen) = downstream(200, Duration::ZERO).await;
    let top = tier(ChainLayer::edge().grpc(), down).await;
    assert_eq!(call(top, &[("grpc-timeout", "80m")]).await, 200);
    assert_eq!(seen.deadlines(), vec![None]);
}

#[tokio::test]
async fn the_edge_reads_no_deadline_and_keeps_its_own() {
    let strangers = [
        &[(ENVOY, "1")][..],
        &[("content-type", "application/grpc"), ("grpc-timeout", "1m")][..],
    ];
    for headers in strangers {
        let (down, seen) = downstream(503, Duration::ZERO).await;
        let edge = ChainLayer::edge().deadline(Duration::from_millis(400));
        let top = tier(edge, down).await;
        // Still scoped: the give-up is marked, and the service's own deadline is sent on.
        assert_eq!(call(top, headers).await, 503);
        assert_eq!(seen.calls(), 4, "{headers:?}");
        for sent in seen.deadlines() {
            let sent = sent.expect("the edge's own deadline is sent on");
            assert!(sent > 300 && sent <= 400, "{headers:?}: {sent} ms");
        }
    }
    // Without a deadline of its own, the edge has none.
    let (down, seen) = downstream(200, Duration::ZERO).await;
    let top = tier(ChainLayer::edge(), down).await;
    assert_eq!(call(top, &[(ENVOY, "1")]).await, 200);
    assert_eq!(seen.deadlines(), vec![None]);
}

/// A client with no pooled connections: a connection left by an attempt cut mid-request is
/// never handed to the next caller, so every call's outcome is its own.
fn unpooled() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap()
}

/// One attempt of a tier's call to `down`: a non-success status is an error.
async fn fetch(client: reqwest::Client, down: SocketAddr) -> std::io::Result<reqwest::Response> {
    let resp = client.get(format!("http://{down}/")).send().await;
    resp.map_err(std::io::Error::other)?
        .error_for_status()
        .map_err(std::io::Error::other)
}

/// A tier under `ChainLayer::new()` whose handler calls `down` once per request with `Retry`
/// (one attempt, cut at `timeout`) under a shared breaker or throttle: `200` when the call
/// succeeded, else `503`.
async fn guarded_tier(
    down: SocketAddr,
    timeout: Duration,
    breaker: Option<&'static CircuitBreaker>,
    throttle: Option<&'static AdaptiveThrottle>,
) -> SocketAddr {
    let client = unpooled();
    let handler = move || {
        let client = client.clone();
        async move {
            let fetch = || fetch(client.clone(), down);
            let once = Retry::new(Policy::new().with_attempts(1)).timeout(timeout);
            let out = match (breaker, throttle) {
                (Some(b), _) => once.breaker(b).call_async(fetch).await,
                (_, Some(t)) => once.throttle(t).call_async(fetch).await,
                (None, None) => once.call_async(fetch).await,
            };
            match out {
                Ok(_) => StatusCode::OK,
                Err(_) => StatusCode::SERVICE_UNAVAILABLE,
            }
        }
    };
    let app = axum::Router::new()
        .route("/", get(handler))
        .layer(ChainLayer::new());
    loopback::serve(app).await
}

/// `n` requests carrying `headers` at once, from as many clients: their statuses.
async fn at_once(
    addr: SocketAddr,
    n: usize,
    headers: &'static [(&'static str, &'static str)],
) -> Vec<u16> {
    let calls: Vec<_> = (0..n)
        .map(|_| tokio::spawn(async move { call(addr, headers).await }))
        .collect();
    let mut statuses = Vec::new();
    for c in calls {
        statuses.push(c.await.unwrap());
    }
    statuses
}

/// Let what the calls before sent (a request whose attempt was cut as it was written) reach
/// the downstream, so that what it counts next is the next calls alone.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(100)).await;
}

/// How long the healthy downstream of the guard tests takes to answer.
const HEALTHY: Duration = Duration::from_millis(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callers_deadline_does_not_open_a_shared_breaker() {
    static BREAKER: CircuitBreaker =
        CircuitBreaker::new(0.5, 10, Duration::from_secs(60), Duration::from_secs(60));
    let (down, seen) = downstream(200, HEALTHY).await;
    let top = guarded_tier(down, Duration::from_secs(5), Some(&BREAKER), None).await;
    // Ten strangers with 1 ms: each attempt is cut by its own caller's deadline.
    assert_eq!(
        held(&seen, at_once(top, 10, &[(ENVOY, "1")])).await,
        vec![503; 10]
    );
    // Every later caller still gets through to the healthy downstream.
    settle().await;
    let before = seen.calls();
    assert_eq!(at_once(top, 10, &[]).await, vec![200; 10]);
    assert_eq!(seen.calls() - before, 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callers_deadline_does_not_drive_a_shared_throttle() {
    static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(60));
    let (down, seen) = downstream(200, HEALTHY).await;
    let top = guarded_tier(down, Duration::from_secs(5), None, Some(&THROTTLE)).await;
    assert_eq!(
        held(&seen, at_once(top, 40, &[(ENVOY, "1")])).await,
        vec![503; 40]
    );
    settle().await;
    let before = seen.calls();
    assert_eq!(at_once(top, 10, &[]).await, vec![200; 10]);
    assert_eq!(
        seen.calls() - before,
        10,
        "the throttle refused ordinary calls"
    );
}

/// A tier under `ChainLayer::new()` whose handler calls `down` with `Retry` (four attempts)
/// under a shared budget: `200` when the call succeeded, else `503`.
async fn budgeted_tier(down: SocketAddr, budget: &'static RetryBudget) -> SocketAddr {
    let client = unpooled();
    let handler = move || {
        let client = client.clone();
        async move {
            let fetch = || fetch(client.clone(), down);
            match Retry::new(four()).budget(budget).call_async(fetch).await {
                Ok(_) => StatusCode::OK,
                Err(_) => StatusCode::SERVICE_UNAVAILABLE,
            }
        }
    };
    let app = axum::Router::new()
        .route("/", get(handler))
        .layer(ChainLayer::new());
    loopback::serve(app).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strangers_deadlines_do_not_drain_a_shared_budget() {
    // Three retries' worth (5 tokens each).
    static BUDGET: RetryBudget = RetryBudget::new(15);
    let (down, seen) = downstream(503, HEALTHY).await;
    let top = budgeted_tier(down, &BUDGET).await;
    // Ten strangers at once, each with 1 ms, said three ways: one value, two values, and as
    // gRPC (its content-type on this HTTP route, and `grpc-timeout`). Each call's first
    // attempt (not cut: this loop has no timeout) ends past its caller's deadline, so the loop
    // retries nothing and no token is taken.
    for headers in [
        &[(ENVOY, "1")][..],
        &[(ENVOY, "1, 5000")][..],
        &[("content-type", "application/grpc"), ("grpc-timeout", "1m")][..],
    ] {
        assert_eq!(
            at_once(top, 10, headers).await,
            vec![503; 10],
            "{headers:?}"
        );
    }
    assert_eq!(
        BUDGET.available(),
        15,
        "a stranger's deadline spent the budget"
    );
    // An ordinary caller still gets its three retries.
    settle().await;
    let before = seen.calls();
    assert_eq!(call(top, &[]).await, 503);
    assert_eq!(seen.calls() - before, 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loops_own_timeout_still_counts_in_the_breaker() {
    static BREAKER: CircuitBreaker =
        CircuitBreaker::new(0.5, 10, Duration::from_secs(60), Duration::from_secs(60));
    let (down, seen) = downstream(200, HEALTHY).await;
    // The tier's own 1 ms timeout: its attempts fail whoever calls, and that is the breaker's
    // business.
    let top = guarded_tier(down, Duration::from_millis(1), Some(&BREAKER), None).await;
    assert_eq!(held(&seen, at_once(top, 10, &[])).await, vec![503; 10]);
    settle().await;
    let before = seen.calls();
    assert_eq!(call(top, &[]).await, 503);
    assert_eq!(
        seen.calls(),
        before,
        "the open breaker let the call through"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_shared_between_requests_runs_out_of_every_scope() {
    // A fetch several requests await (a single flight): whichever request polls it first, it
    // keeps to no request's deadline.
    let (down, seen) = downstream(200, Duration::from_millis(50)).await;
    let shared: Arc<tokio::sync::OnceCell<u16>> = Arc::default();
    let handler = move || {
        let shared = shared.clone();
        async move {
            let fetch = || async move {
                let policy = Policy::new().with_attempts(1);
                let resp = Retry::new(policy)
                    .timeout(Duration::from_secs(5))
                    .call_async(|| async move {
                        let resp = reqwest::get(format!("http://{down}/")).await;
                        resp.map_err(std::io::Error::other)
                    })
                    .await;
                resp.map_or(503, |r| r.status().as_u16())
            };
            let status = *shared.get_or_init(|| out_of_chain(fetch())).await;
            StatusCode::from_u16(status).unwrap()
        }
    };
    let app = axum::Router::new()
        .route("/", get(handler))
        .layer(ChainLayer::new());
    let top = loopback::serve(app).await;
    let leader = tokio::spawn(async move { call(top, &[(ENVOY, "1")]).await });
    tokio::time::sleep(Duration::from_millis(10)).await;
    let follower = call(top, &[]).await;
    assert_eq!((leader.await.unwrap(), follower), (200, 200));
    assert_eq!(seen.calls(), 1);
    assert_eq!(
        seen.deadlines(),
        vec![None],
        "no request's deadline was sent on"
    );
}
