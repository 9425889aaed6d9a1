//! A chain of services that retries at one tier (issue 30): three axum services on loopback,
//! A → B → C, each hop through `RetryLayer` over hyper's client with 4 attempts, C answering
//! `503` — the calls each tier receives for one call of the client's, with and without
//! `ChainLayer`, and the caller's deadline carried down the chain.

#[path = "../examples/chain/tiers.rs"]
mod tiers;

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
    let deadline = start + Duration::from_millis(300);
    let last = chain.seen[2].last_start().expect("C was called");
    assert!(
        last < deadline,
        "an attempt began at C {:?} after the deadline",
        last - deadline
    );
    assert!(
        calls[2] < 4,
        "C got {} calls within 300 ms of 100 ms each",
        calls[2]
    );
    assert_eq!(calls[..2], [1, 1]);
    // B's last attempt was cut at the deadline: the answer comes back within it, plus the
    // hops' own time.
    assert!(
        took < Duration::from_millis(300 + 250),
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
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let client = tiers::hop_client();
    let (status, answer) = tiers::get(&client, &format!("http://{addr}/"), &HeaderMap::new())
        .await
        .unwrap();
    assert_eq!(status, 500);
    assert!(!answer.contains_key("x-should-retry"));
    assert_eq!(calls.load(Ordering::SeqCst), 4);
}
