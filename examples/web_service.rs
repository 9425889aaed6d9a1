//! `cargo run --example web_service --features reqwest`: an axum service whose handler calls a
//! flaky upstream (a second axum server in the same process) through a `#[retry]` async fn
//! using reqwest. Both listen on 127.0.0.1 ephemeral ports; a bounded batch of requests goes to
//! the service, and for each the example prints how many upstream calls it took and how long.

#[path = "../tests/support/upstream.rs"]
mod upstream;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use retry_jitter::reqwest::{check, Error};
use retry_jitter::{retry, RetryEvent};

fn log(e: &Error, ev: &RetryEvent) {
    println!(
        "    upstream call {} failed ({e}); retrying in {:?}",
        ev.attempt, ev.delay
    );
}

/// The upstream call, retried: 5xx and 429 are retried (a 503's `Retry-After` honoured),
/// a 4xx is returned at once, an attempt that has not answered in 500 ms is cut and retried,
/// and the whole call never takes more than 5 s.
#[retry(attempts = 4, base = "50ms", cap = "2s", timeout = "500ms", max_elapsed = "5s", on = retry_jitter::transient, notify = log)]
async fn fetch_order(client: &reqwest::Client, url: &str) -> Result<String, Error> {
    let resp = client.get(url).send().await?;
    Ok(check(resp).await?.text().await?)
}

#[derive(Clone)]
struct Service {
    client: reqwest::Client,
    upstream: SocketAddr,
}

/// `GET /orders/{path…}` asks the upstream for `/{path…}`.
async fn order(State(s): State<Service>, Path(path): Path<String>) -> (StatusCode, String) {
    let url = format!("http://{}/{path}", s.upstream);
    match fetch_order(&s.client, &url).await {
        Ok(body) => (StatusCode::OK, body),
        Err(e) => (
            e.status()
                .filter(|s| s.is_client_error())
                .unwrap_or(StatusCode::BAD_GATEWAY),
            e.to_string(),
        ),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (upstream, calls) = upstream::start().await?;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()?;
    let app = Router::new()
        .route("/orders/{*path}", get(order))
        .with_state(Service {
            client: client.clone(),
            upstream,
        });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let service = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });
    println!("upstream on {upstream}, service on {service}\n");

    let batch = [
        ("a healthy upstream", "flaky/500/0/r1"),
        ("two 500s, then 200", "flaky/500/2/r2"),
        ("one 429, then 200", "flaky/429/1/r3"),
        ("503 with Retry-After: 1, then 200", "flaky/503/1/r4"),
        ("404: never retried", "status/404/r5"),
        ("500 until the attempts run out", "status/500/r6"),
        (
            "an upstream that never answers: cut at the timeout",
            "hang/r7",
        ),
    ];
    for (what, path) in batch {
        println!("GET /orders/{path} ({what})");
        let started = Instant::now();
        let resp = client
            .get(format!("http://{service}/orders/{path}"))
            .send()
            .await?;
        let status = resp.status();
        let body = resp.text().await?;
        println!(
            "  -> {status} in {:.0?}: {} upstream call(s); {body}\n",
            started.elapsed(),
            calls.get(&format!("/{path}"))
        );
    }
    Ok(())
}
