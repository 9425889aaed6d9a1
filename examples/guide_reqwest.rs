use std::time::Duration;

use retry_jitter::reqwest::{check, Error};
use retry_jitter::{retry, RetryEvent};

// Retried: 408, 425, 429, every 5xx but 501 and 505, a refused or reset connection, an attempt
// cut by `timeout`. A `Retry-After` up to `cap` (2 s) is waited, plus the draw; a longer one
// ends the call. Returned at once: 404 and every other 4xx.
#[retry(
    attempts = 4,
    base = "100ms",
    cap = "2s",
    timeout = "2s",
    max_elapsed = "10s",
    on = retry_jitter::transient,
    notify = log_retry
)]
async fn fetch_user(client: &reqwest::Client, api: &str, id: u64) -> Result<String, Error> {
    let resp = client.get(format!("{api}/users/{id}")).send().await?;
    Ok(check(resp).await?.text().await?)
}

fn log_retry(e: &Error, ev: &RetryEvent) {
    println!(
        "  {} call {} failed: {e}; retrying in {:?}",
        ev.function, ev.attempt, ev.delay
    );
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let api = stand_in::start().await?; // your API's base URL, e.g. "https://api.example.com"
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(1))
        .build()?;

    println!("user 42, from a service that answers 503 twice:");
    println!("  -> {}", fetch_user(&client, &api, 42).await?);

    println!("user 0, who does not exist:");
    let err = fetch_user(&client, &api, 0).await.unwrap_err();
    println!("  -> {err} (status {:?}, one call)", err.status());
    Ok(())
}

/// A stand-in for the API on a loopback port: `/users/42` answers `503` to its first two
/// calls, then `200`; any other user is `404`.
mod stand_in {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    use axum::extract::{Path, State};
    use axum::http::StatusCode;
    use axum::routing::get;

    pub async fn start() -> std::io::Result<String> {
        let calls = Arc::new(AtomicU32::new(0));
        let app = axum::Router::new()
            .route("/users/{id}", get(user))
            .with_state(calls);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        tokio::spawn(async move { axum::serve(listener, app).await });
        Ok(format!("http://{addr}"))
    }

    async fn user(
        State(calls): State<Arc<AtomicU32>>,
        Path(id): Path<u64>,
    ) -> (StatusCode, String) {
        if id != 42 {
            return (StatusCode::NOT_FOUND, "no such user".into());
        }
        match calls.fetch_add(1, Ordering::SeqCst) {
            0 | 1 => (StatusCode::SERVICE_UNAVAILABLE, "restarting".into()),
            _ => (StatusCode::OK, r#"{"id": 42, "name": "Ada"}"#.into()),
        }
    }
}
