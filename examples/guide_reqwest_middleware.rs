use std::time::Duration;

use retry_jitter::reqwest_middleware::RetryMiddleware;
use retry_jitter::{Policy, RetryBudget};

// One budget for every call this client makes: when the service is down, retries stop.
static BUDGET: RetryBudget = RetryBudget::new(500);

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let api = stand_in::start().await?; // your API's base URL

    let policy = Policy::new()
        .with_attempts(4)
        .with_base(Duration::from_millis(50));
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(
            RetryMiddleware::new(policy)
                .budget(&BUDGET)
                .timeout(Duration::from_secs(2))
                // Every POST without a key gets one, the same on each attempt: retried safely.
                .idempotency_key()
                .with_name("payments"),
        )
        .build();

    // A 503 with `Retry-After: 1`: the next attempt waits at least a second.
    let resp = client.get(format!("{api}/balance")).send().await?;
    println!("GET  /balance  -> {} {}", resp.status(), resp.text().await?);

    // A POST answered 502 once: sent again with the same Idempotency-Key.
    let resp = client
        .post(format!("{api}/payments"))
        .body(r#"{"amount": 100}"#)
        .send()
        .await?;
    println!("POST /payments -> {} {}", resp.status(), resp.text().await?);
    Ok(())
}

/// A stand-in for the API on a loopback port: `/balance` answers `503` with `Retry-After: 1`
/// once, then `200`; `/payments` answers `502` once, then `201` naming the key it was sent.
mod stand_in {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    use axum::extract::State;
    use axum::http::{HeaderMap, StatusCode};
    use axum::response::IntoResponse;
    use axum::routing::{get, post};

    pub async fn start() -> std::io::Result<String> {
        let app = axum::Router::new()
            .route("/balance", get(balance))
            .route("/payments", post(pay))
            .with_state(Arc::new([AtomicU32::new(0), AtomicU32::new(0)]));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        tokio::spawn(async move { axum::serve(listener, app).await });
        Ok(format!("http://{addr}"))
    }

    async fn balance(State(calls): State<Arc<[AtomicU32; 2]>>) -> impl IntoResponse {
        match calls[0].fetch_add(1, Ordering::SeqCst) {
            0 => (
                StatusCode::SERVICE_UNAVAILABLE,
                [("retry-after", "1")],
                "busy",
            ),
            _ => (StatusCode::OK, [("retry-after", "0")], "100 EUR"),
        }
    }

    async fn pay(
        State(calls): State<Arc<[AtomicU32; 2]>>,
        headers: HeaderMap,
    ) -> (StatusCode, String) {
        let key = headers
            .get("idempotency-key")
            .and_then(|k| k.to_str().ok())
            .unwrap_or("none");
        match calls[1].fetch_add(1, Ordering::SeqCst) {
            0 => (StatusCode::BAD_GATEWAY, String::new()),
            _ => (
                StatusCode::CREATED,
                format!("paid once, Idempotency-Key {key}"),
            ),
        }
    }
}
