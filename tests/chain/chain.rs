//! A chain of services that retries at one tier (issue 30): three axum services on loopback,
//! A → B → C, each hop through `RetryLayer` over hyper's client with 4 attempts, C answering
//! `503` — the calls each tier receives for one call of the client's, with and without
//! `ChainLayer`, and the caller's deadline carried down the chain.

#[path = "../../examples/chain/tiers.rs"]
mod tiers;

use crate::loopback;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, HeaderValue, StatusCode};
use retry_jitter::tower::ChainLayer;

/// One call of the client's to A: its status and headers, and the three tiers' counts.
async fn one_call(chain: &tiers::Chain, headers: &HeaderMap) -> (StatusCode, HeaderMap, [u32; 3]) {
    let client = tiers::hop_client();
    let (status, answer) = tiers::get(&client, &format!("http://{}/", chain.a), headers)
        .await
        .expect("A answers");
    (status, answer, chain.seen.each_ref().map(|s| s.calls()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_chain_layer_every_tier_retries_and_c_gets_64_calls() {
    let chain = tiers::start(false, StatusCode::SERVICE_UNAVAILABLE, Duration::ZERO).await;
    let (status, answer, calls) = one_call(&chain, &HeaderMap::new()).await;
    assert_eq!(calls, [4, 16, 64]);
    assert_eq!(status, 503);
    assert!(!answer.contains_key("x-should-retry"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_chain_layer_only_the_tier_next_to_the_failure_retries() {
    let chain = tiers::start(true, StatusCode::SERVICE_UNAVAILABLE, Duration::ZERO).await;
    let (status, answer, calls) = one_call(&chain, &HeaderMap::new()).await;
    // B retried C 4 times and said so; A and the client did not retry again.
    assert_eq!(calls, [1, 1, 4]);
    assert_eq!(status, 503);
    assert_eq!(answer["x-should-retry"], "false");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_callers_deadline_bounds_every_tier_below() {
    // C takes 100 ms per answer: B's four attempts would take 400 ms and more.
    let delay = Duration::from_millis(100);
    let chain = tiers::start(true, StatusCode::SERVICE_UNAVAILABLE, delay).await;
    let mut headers = HeaderMap::new();
    headers.insert(
        "x-envoy-expected-rq-timeout-ms",
        HeaderValue::from_static("300"),
    );
    let start = Instant::now();
    let (status, answer, calls) = one_call(&chain, &headers).await;
    let took = start.elapsed();
    // On the real clock (real sockets: tokio's paused clock jumps to the next timer, an
    // attempt's timeout, while a loopback hop is in flight), so the bounds below allow a
    // loaded machine's hops; the exact times are `in_scope`'s, on the paused clock. What is
    // exact here: C answers each call after 100 ms, so B's four attempts need 300 ms before
    // the fourth begins, past the deadline B was sent (at most the 300 ms A had, counted from
    // A's scope, before A's handler began).
    assert!(
        (1..4).contains(&calls[2]),
        "C got {} calls within 300 ms of 100 ms each",
        calls[2]
    );
    assert_eq!(calls[..2], [1, 1]);
    // No attempt began after the deadline: C's last call came before it, plus one hop (B to
    // C) on a loaded machine.
    let a_came = chain.seen[0].starts.lock().unwrap()[0];
    let deadline = a_came + Duration::from_millis(300);
    let hop = Duration::from_secs(1);
    let last = chain.seen[2].last_start().expect("C was called");
    assert!(
        last < deadline + hop,
        "an attempt began at C {:?} after the deadline",
        last - deadline
    );
    // The answer waited for C's first answer (100 ms) or for the deadline, and came back
    // around the deadline, within a loaded machine's hop of it.
    assert!(
        took >= delay && took < Duration::from_millis(300) + hop,
        "answered after {took:?}"
    );
    // B's attempt cut at the deadline is B's 502; marked, so nobody above retries it.
    assert!(status.is_server_error(), "{status}");
    assert_eq!(answer["x-should-retry"], "false");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tiers_own_error_is_left_unmarked_and_its_caller_retries_it() {
    // A tier served with ChainLayer that fails by itself: no loop inside gave up.
    let calls = Arc::new(AtomicU32::new(0));
    let counted = calls.clone();
    let app = axum::Router::new()
        .route(
            "/",
            axum::routing::get(move || {
                counted.fetch_add(1, Ordering::SeqCst);
                async { StatusCode::INTERNAL_SERVER_ERROR }
            }),
        )
        .layer(ChainLayer::new());
    let addr = loopback::serve(app).await;
    let client = tiers::hop_client();
    let (status, answer) = tiers::get(&client, &format!("http://{addr}/"), &HeaderMap::new())
        .await
        .unwrap();
    assert_eq!(status, 500);
    assert!(!answer.contains_key("x-should-retry"));
    assert_eq!(calls.load(Ordering::SeqCst), 4);
}

/// A handler under `ChainLayer` (no sockets: `tower::service_fn`, tokio's paused clock) that
/// runs `Retry` against an attempt taking `attempt_takes` and failing, and reports how it
/// ended: the give-up reason, the calls made, and when each began.
mod in_scope {
    use super::*;
    use retry_jitter::tower::in_chain;
    use retry_jitter::{
        CircuitBreaker, GiveUp, GiveUpReason, Policy, Retry, RetryBudget, TimedOut,
    };
    use std::sync::Mutex;
    use tower::{Service, ServiceExt};

    #[derive(Debug)]
    struct Failed;
    impl From<TimedOut> for Failed {
        fn from(_: TimedOut) -> Self {
            Failed
        }
    }

    #[derive(Default)]
    struct Ended {
        reason: Mutex<Option<GiveUpReason>>,
        starts: Mutex<Vec<tokio::time::Instant>>,
    }

    /// The handler's loop: 10 attempts, waits of 20 ms to 40 ms (no jitter), each attempt cut at
    /// 1 s, failing after `takes`.
    async fn the_loop(ended: Arc<Ended>, takes: Duration) -> Result<(), Failed> {
        let policy = Policy::new()
            .with_attempts(10)
            .with_base(Duration::from_millis(20))
            .with_cap(Duration::from_millis(40))
            .with_jitter(retry_jitter::Jitter::None);
        let give_up = ended.clone();
        Retry::new(policy)
            .timeout(Duration::from_secs(1))
            .give_up(move |_: &Failed, g: &GiveUp| {
                *give_up.reason.lock().unwrap() = Some(g.reason);
            })
            .call_async(|| {
                ended
                    .starts
                    .lock()
                    .unwrap()
                    .push(tokio::time::Instant::now());
                async move {
                    tokio::time::sleep(takes).await;
                    Err::<(), _>(Failed)
                }
            })
            .await
    }

    /// One request with `headers` through `ChainLayer` to a handler running [`the_loop`]
    /// (on a spawned task when `spawned`, handed the scope with `in_chain` when `handed`).
    async fn serve(
        headers: &[(&'static str, &'static str)],
        takes: Duration,
        spawned: Option<bool>,
    ) -> (Answer, Arc<Ended>) {
        let ended = Arc::new(Ended::default());
        let seen = ended.clone();
        let handler = tower::service_fn(move |_: http::Request<String>| {
            let ended = seen.clone();
            async move {
                let out = match spawned {
                    None => the_loop(ended, takes).await,
                    Some(handed) => {
                        let work = the_loop(ended, takes);
                        let task = if handed {
                            tokio::spawn(in_chain(work))
                        } else {
                            tokio::spawn(work)
                        };
                        task.await.unwrap()
                    }
                };
                answered(out.is_ok())
            }
        });
        let mut req = http::Request::new(String::new());
        for (name, value) in headers {
            req.headers_mut()
                .insert(*name, HeaderValue::from_static(value));
        }
        (through_chain(handler, req).await, ended)
    }

    /// A handler's answer: `200` when its work succeeded, else `503`.
    fn answered(ok: bool) -> Result<http::Response<String>, std::convert::Infallible> {
        let status = if ok { 200 } else { 503 };
        Ok(http::Response::builder()
            .status(status)
            .body(String::new())
            .unwrap())
    }

    /// The answer of a handler served with `ChainLayer`.
    type Answer = http::Response<retry_jitter::tower::body::ChainBody<String>>;

    /// `req` through `ChainLayer` to `handler`.
    async fn through_chain<H>(handler: H, req: http::Request<String>) -> Answer
    where
        H: Service<
            http::Request<String>,
            Response = http::Response<String>,
            Error = std::convert::Infallible,
        >,
    {
        let mut svc = tower::ServiceBuilder::new()
            .layer(ChainLayer::new())
            .service(handler);
        svc.ready().await.unwrap().call(req).await.unwrap()
    }

    fn reason(ended: &Ended) -> Option<GiveUpReason> {
        *ended.reason.lock().unwrap()
    }

    fn starts(ended: &Ended, from: tokio::time::Instant) -> Vec<u128> {
        let starts = ended.starts.lock().unwrap();
        starts.iter().map(|s| (*s - from).as_millis()).collect()
    }

    #[tokio::test(start_paused = true)]
    async fn no_attempt_starts_after_the_callers_deadline() {
        let t0 = tokio::time::Instant::now();
        let header = [("x-envoy-expected-rq-timeout-ms", "100")];
        let (resp, ended) = serve(&header, Duration::from_millis(10), None).await;
        // Attempts at 0, 30, 80 (10 ms each, waits 20 then 40); the next would begin at 130.
        assert_eq!(starts(&ended, t0), [0, 30, 80]);
        assert_eq!(reason(&ended), Some(GiveUpReason::Elapsed));
        assert_eq!(resp.headers()["x-should-retry"], "false");
    }

    #[tokio::test(start_paused = true)]
    async fn an_attempts_timeout_is_cut_to_what_the_caller_has_left() {
        let t0 = tokio::time::Instant::now();
        let header = [("x-envoy-expected-rq-timeout-ms", "100")];
        let (resp, ended) = serve(&header, Duration::from_secs(60), None).await;
        // The one attempt is cut at 100 ms, not at its own 1 s timeout.
        assert_eq!(starts(&ended, t0), [0]);
        assert_eq!(t0.elapsed(), Duration::from_millis(100));
        assert_eq!(reason(&ended), Some(GiveUpReason::Elapsed));
        assert_eq!(resp.status(), 503);
    }

    #[tokio::test(start_paused = true)]
    async fn a_grpc_timeout_is_the_callers_deadline_and_a_malformed_one_is_none() {
        let t0 = tokio::time::Instant::now();
        let grpc = [
            ("content-type", "application/grpc"),
            ("grpc-timeout", "100000u"),
        ];
        let (_, ended) = serve(&grpc, Duration::from_millis(10), None).await;
        assert_eq!(starts(&ended, t0), [0, 30, 80]);
        // Malformed: no deadline from the caller, the loop makes its 10 attempts.
        let t0 = tokio::time::Instant::now();
        let bad = [("x-envoy-expected-rq-timeout-ms", "100ms")];
        let (resp, ended) = serve(&bad, Duration::from_millis(10), None).await;
        assert_eq!(starts(&ended, t0).len(), 10);
        assert_eq!(reason(&ended), Some(GiveUpReason::Attempts));
        assert_eq!(resp.headers()["x-should-retry"], "false");
    }

    #[tokio::test(start_paused = true)]
    async fn a_spawned_task_is_in_the_scope_only_when_handed_it() {
        let header = [("x-envoy-expected-rq-timeout-ms", "100")];
        let t0 = tokio::time::Instant::now();
        let (resp, ended) = serve(&header, Duration::from_millis(10), Some(true)).await;
        assert_eq!(starts(&ended, t0), [0, 30, 80]);
        assert_eq!(resp.headers()["x-should-retry"], "false");
        // Not handed: no deadline, and its give-up is not the tier's.
        let t0 = tokio::time::Instant::now();
        let (resp, ended) = serve(&header, Duration::from_millis(10), Some(false)).await;
        assert_eq!(starts(&ended, t0).len(), 10);
        assert!(!resp.headers().contains_key("x-should-retry"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_tier_that_fails_fast_leaves_the_retry_to_its_caller() {
        // `attempts = 1` at this tier (guide::protecting's advice for the tiers below the one that
        // retries): its failure is not "already retried", whatever limit ended it.
        let handler = tower::service_fn(|_: http::Request<String>| async {
            let once = Policy::new().with_attempts(1);
            let out: Result<(), &str> = Retry::new(once).call_async(|| async { Err("down") }).await;
            answered(out.is_ok())
        });
        let resp = through_chain(handler, http::Request::new(String::new())).await;
        assert_eq!(resp.status(), 503);
        assert!(!resp.headers().contains_key("x-should-retry"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_tier_that_fails_fast_cut_by_the_callers_deadline_leaves_the_retry_to_its_caller() {
        // Issue 49: a loop of one attempt whose attempt the caller's 100 ms cut (`Elapsed`)
        // would not have retried anyway: no limit kept it from retrying.
        let ended = Arc::new(Ended::default());
        let seen = ended.clone();
        let handler = tower::service_fn(move |_: http::Request<String>| {
            let give_up = seen.clone();
            async move {
                let out = Retry::new(Policy::new().with_attempts(1))
                    .timeout(Duration::from_secs(1))
                    .give_up(move |_: &Failed, g: &GiveUp| {
                        *give_up.reason.lock().unwrap() = Some(g.reason);
                    })
                    .call_async(|| async {
                        tokio::time::sleep(Duration::from_secs(60)).await;
                        Err::<(), _>(Failed)
                    })
                    .await;
                answered(out.is_ok())
            }
        });
        let t0 = tokio::time::Instant::now();
        let mut req = http::Request::new(String::new());
        req.headers_mut().insert(
            "x-envoy-expected-rq-timeout-ms",
            HeaderValue::from_static("100"),
        );
        let resp = through_chain(handler, req).await;
        assert_eq!(t0.elapsed(), Duration::from_millis(100));
        assert_eq!(reason(&ended), Some(GiveUpReason::Elapsed));
        assert_eq!(resp.status(), 503);
        assert!(!resp.headers().contains_key("x-should-retry"));
    }

    #[tokio::test(start_paused = true)]
    async fn outside_a_scope_a_loop_keeps_its_own_limits() {
        let ended = Arc::new(Ended::default());
        let t0 = tokio::time::Instant::now();
        let _ = the_loop(ended.clone(), Duration::from_millis(10)).await;
        assert_eq!(starts(&ended, t0).len(), 10);
        assert_eq!(reason(&ended), Some(GiveUpReason::Attempts));
    }

    /// A tier whose handler's loop (3 attempts, no waits, every one failing, under `budget`
    /// when given) gave up, and which then answers `status`: its answer through `ChainLayer`,
    /// and the attempts the loop made.
    async fn after_a_give_up(status: u16, budget: Option<&'static RetryBudget>) -> (Answer, u32) {
        let calls = Arc::new(AtomicU32::new(0));
        let seen = calls.clone();
        let handler = tower::service_fn(move |_: http::Request<String>| {
            let calls = seen.clone();
            async move {
                let policy = Policy::new().with_attempts(3).with_base(Duration::ZERO);
                let fail = || {
                    calls.fetch_add(1, Ordering::SeqCst);
                    async { Err::<(), _>("down") }
                };
                let _ = match budget {
                    Some(budget) => Retry::new(policy).budget(budget).call_async(fail).await,
                    None => Retry::new(policy).call_async(fail).await,
                };
                Ok::<_, std::convert::Infallible>(
                    http::Response::builder()
                        .status(status)
                        .body(String::new())
                        .unwrap(),
                )
            }
        });
        let resp = through_chain(handler, http::Request::new(String::new())).await;
        (resp, calls.load(Ordering::SeqCst))
    }

    #[tokio::test(start_paused = true)]
    async fn only_an_answer_its_caller_would_retry_is_marked() {
        // After a loop that gave up on its attempts: a 5xx or a 429 is marked "don't retry",
        // an answer the caller would not retry anyway is left as it is.
        for (status, marked) in [
            (503, true),
            (500, true),
            (429, true),
            (404, false),
            (400, false),
            (200, false),
        ] {
            let (resp, calls) = after_a_give_up(status, None).await;
            assert_eq!((resp.status().as_u16(), calls), (status, 3));
            let said = resp.headers().get("x-should-retry");
            assert_eq!(said.is_some_and(|v| v == "false"), marked, "{status}");
            assert_eq!(said.is_some(), marked, "{status}: nothing else is said");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_loop_its_budget_stopped_marks_the_tier() {
        // An empty budget refuses the first retry: the loop stopped on a limit, not on its
        // classifier, and the tier's 503 says so.
        static EMPTY: RetryBudget = RetryBudget::new(0);
        let (resp, calls) = after_a_give_up(503, Some(&EMPTY)).await;
        assert_eq!(calls, 1);
        assert_eq!(resp.headers()["x-should-retry"], "false");
    }

    #[tokio::test(start_paused = true)]
    async fn a_loop_its_open_breaker_refused_marks_the_tier() {
        // A breaker opened by one failed call (outside any scope): the handler's loop is
        // refused before its body runs, a limit and not its classifier, and the tier's 503
        // says so.
        static BREAKER: CircuitBreaker =
            CircuitBreaker::new(1.0, 1, Duration::from_secs(60), Duration::from_secs(60));
        let down = || async { Err::<(), _>(std::io::Error::other("down")) };
        let once = Policy::new().with_attempts(1);
        assert!(Retry::new(once)
            .breaker(&BREAKER)
            .call_async(down)
            .await
            .is_err());
        let calls = Arc::new(AtomicU32::new(0));
        let seen = calls.clone();
        let handler = tower::service_fn(move |_: http::Request<String>| {
            let calls = seen.clone();
            async move {
                let out = Retry::new(Policy::new().with_attempts(3))
                    .breaker(&BREAKER)
                    .call_async(|| {
                        calls.fetch_add(1, Ordering::SeqCst);
                        async { Err::<(), _>(std::io::Error::other("down")) }
                    })
                    .await;
                answered(out.is_ok())
            }
        });
        let resp = through_chain(handler, http::Request::new(String::new())).await;
        assert_eq!(
            calls.load(Ordering::SeqCst),
            0,
            "the open breaker let the body run"
        );
        assert_eq!(resp.status(), 503);
        assert_eq!(resp.headers()["x-should-retry"], "false");
    }

    /// guide::chain's "Blocking work on `spawn_blocking` has no scope": a blocking loop (each
    /// attempt blocks its thread 5 ms, no wait between them) under a caller that has 1 ms, run in
    /// the handler or on `spawn_blocking`; the calls it made, and the tier's answer. On tokio's
    /// real clock: what blocks a thread does not move a paused one.
    async fn a_blocking_loop(on_spawn_blocking: bool) -> (Answer, u32) {
        let calls = Arc::new(AtomicU32::new(0));
        let seen = calls.clone();
        let handler = tower::service_fn(move |_: http::Request<String>| {
            let calls = seen.clone();
            async move {
                let work = move || {
                    let policy = Policy::new().with_attempts(3).with_base(Duration::ZERO);
                    Retry::new(policy).call(|| {
                        calls.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(5));
                        Err::<(), _>("down")
                    })
                };
                let out = if on_spawn_blocking {
                    tokio::task::spawn_blocking(work).await.unwrap()
                } else {
                    work()
                };
                answered(out.is_ok())
            }
        });
        let mut req = http::Request::new(String::new());
        req.headers_mut().insert(
            "x-envoy-expected-rq-timeout-ms",
            HeaderValue::from_static("1"),
        );
        let resp = through_chain(handler, req).await;
        (resp, calls.load(Ordering::SeqCst))
    }

    #[tokio::test]
    async fn blocking_work_on_spawn_blocking_has_no_scope() {
        // Run in the handler's poll, the loop keeps to the caller's deadline: no attempt after
        // the first, and its give-up is the tier's.
        let (resp, calls) = a_blocking_loop(false).await;
        assert_eq!(calls, 1);
        assert_eq!(resp.headers()["x-should-retry"], "false");
        // On `spawn_blocking`: its own 3 attempts, and its give-up is not the tier's.
        let (resp, calls) = a_blocking_loop(true).await;
        assert_eq!(calls, 3);
        assert!(!resp.headers().contains_key("x-should-retry"));
    }
}
