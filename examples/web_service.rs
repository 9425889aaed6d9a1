//! `cargo run --example web_service --features reqwest,metrics`: an axum service whose handler
//! calls a flaky upstream (a second axum server in the same process) through a `#[retry]` async
//! fn using reqwest. Both listen on 127.0.0.1 ephemeral ports; a bounded batch of requests goes
//! to the service, and for each the example prints how many upstream calls it took and how
//! long. The service serves its retry metrics at `GET /metrics` (Prometheus text, through
//! metrics-exporter-prometheus), and the example ends by scraping them.

#[path = "../tests/support/upstream.rs"]
mod upstream;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
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
    metrics: PrometheusHandle,
}

/// The service: `/orders/{path…}` and `/metrics`, listening on a loopback port.
async fn start_service(
    upstream: SocketAddr,
    metrics: PrometheusHandle,
) -> std::io::Result<SocketAddr> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .map_err(std::io::Error::other)?;
    let app = Router::new()
        .route("/orders/{*path}", get(order))
        .route(
            "/metrics",
            get(|State(s): State<Service>| async move { s.metrics.render() }),
        )
        .with_state(Service {
            client,
            upstream,
            metrics,
        });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let service = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(service)
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
    let metrics = PrometheusBuilder::new().install_recorder()?;
    let (upstream, calls) = upstream::start().await?;
    let service = start_service(upstream, metrics).await?;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()?;
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
    println!("GET /metrics (the retry metrics, Prometheus text):");
    let scraped = client
        .get(format!("http://{service}/metrics"))
        .send()
        .await?
        .text()
        .await?;
    for line in scraped.lines().filter(|l| l.starts_with("retry_jitter_")) {
        println!("  {line}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of the sample `name{labels}` in Prometheus text.
    fn sample(text: &str, name_and_labels: &str) -> Option<f64> {
        text.lines()
            .find_map(|l| l.strip_prefix(name_and_labels)?.trim().parse().ok())
    }

    #[tokio::test]
    async fn metrics_are_served_at_slash_metrics_and_scraped_over_loopback() {
        let metrics = PrometheusBuilder::new().install_recorder().unwrap();
        let (upstream, _) = upstream::start().await.unwrap();
        let service = start_service(upstream, metrics).await.unwrap();
        let client = reqwest::Client::new();
        let get = |path: &str| client.get(format!("http://{service}{path}")).send();
        // Two 500s then a 200: 2 retries, 1 recovery; a 404: 1 give-up, stopped.
        assert_eq!(get("/orders/flaky/500/2/m1").await.unwrap().status(), 200);
        assert_eq!(get("/orders/status/404/m2").await.unwrap().status(), 404);
        let text = get("/metrics").await.unwrap().text().await.unwrap();
        let f = r#"function="fetch_order""#;
        assert_eq!(
            sample(&text, &format!("retry_jitter_retries_total{{{f}}}")),
            Some(2.0),
            "{text}"
        );
        assert_eq!(
            sample(&text, &format!("retry_jitter_recovered_total{{{f}}}")),
            Some(1.0)
        );
        let stopped = format!(r#"retry_jitter_give_ups_total{{{f},reason="stopped"}}"#);
        assert_eq!(sample(&text, &stopped), Some(1.0), "{text}");
        assert!(text.contains("retry_jitter_retry_delay_seconds"), "{text}");
    }
}
