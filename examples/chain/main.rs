//! A chain of services that retries at one tier: three axum services on loopback, A → B → C,
//! a client calling A. The client, A and B each call the next tier through `RetryLayer` over
//! hyper's client with 4 attempts; C answers `503`. Without `ChainLayer` every tier retries
//! its downstream and C gets 4 × 4 × 4 = 64 calls for one call of the client's; with A and B
//! served under `ChainLayer`, B (the tier next to the failure) retries, answers
//! `x-should-retry: false`, and nobody above retries again: 4 calls at C.
//!
//! Then the caller's deadline, carried down: the client gives A 300 ms
//! (`x-envoy-expected-rq-timeout-ms: 300`), C takes 100 ms per answer, and no tier starts an
//! attempt after the deadline.
//!
//! ```text
//! cargo run --example chain --features tower
//! ```

mod tiers;

use std::time::{Duration, Instant};

use axum::http::{HeaderMap, HeaderValue, StatusCode};

#[tokio::main]
async fn main() {
    println!("one call of the client's, C answering 503 (4 attempts at every hop):");
    println!("{:<20} {:>8} {:>8} {:>8}", "", "A", "B", "C");
    for chained in [false, true] {
        let chain = tiers::start(chained, StatusCode::SERVICE_UNAVAILABLE, Duration::ZERO).await;
        let client = tiers::hop_client();
        let url = format!("http://{}/", chain.a);
        let (status, _) = tiers::get(&client, &url, &HeaderMap::new())
            .await
            .expect("A answers");
        let [a, b, c] = chain.seen.each_ref().map(|s| s.calls());
        let name = if chained {
            "with ChainLayer"
        } else {
            "without ChainLayer"
        };
        println!("{name:<20} {a:>8} {b:>8} {c:>8}   (the client got {status})");
    }

    println!();
    println!("a caller deadline of 300 ms, C answering 503 after 100 ms, with ChainLayer:");
    let chain = tiers::start(
        true,
        StatusCode::SERVICE_UNAVAILABLE,
        Duration::from_millis(100),
    )
    .await;
    let client = tiers::hop_client();
    let mut headers = HeaderMap::new();
    headers.insert(
        "x-envoy-expected-rq-timeout-ms",
        HeaderValue::from_static("300"),
    );
    let start = Instant::now();
    let (status, answer) = tiers::get(&client, &format!("http://{}/", chain.a), &headers)
        .await
        .expect("A answers");
    let took = start.elapsed();
    let last = chain.seen[2].last_start().expect("C was called") - start;
    println!(
        "  C got {} calls, the last begun at {} ms (deadline 300 ms)",
        chain.seen[2].calls(),
        last.as_millis()
    );
    println!(
        "  the client got {status} after {} ms, x-should-retry: {}",
        took.as_millis(),
        answer
            .get("x-should-retry")
            .map_or("(none)", |v| v.to_str().unwrap_or("?"))
    );
}
