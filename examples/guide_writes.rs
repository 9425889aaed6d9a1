use retry_jitter::reqwest::{check, Error};
use retry_jitter::retry;

// A POST that reached the server may have been applied: retry it only because the server
// de-duplicates by `Idempotency-Key`, and every attempt carries the same key.
#[retry(attempts = 4, base = "50ms", timeout = "5s", on = retry_jitter::transient)]
async fn pay(client: &reqwest::Client, api: &str, key: &str, order: &str) -> Result<String, Error> {
    let resp = client
        .post(format!("{api}/payments"))
        .header("Idempotency-Key", key)
        .header("Content-Type", "application/json")
        .body(order.to_owned()) // `.json(&order)` with reqwest's `json` feature and serde
        .send()
        .await?;
    Ok(check(resp).await?.text().await?)
}

async fn checkout(client: &reqwest::Client, api: &str, order: &str) -> Result<String, Error> {
    let key = new_key(); // once per payment, outside the retried function: not per attempt
    pay(client, api, &key, order).await
}

/// A key unique to this payment (a v4 UUID in a real program: `uuid::Uuid::new_v4()`).
fn new_key() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    format!("payment-{nanos}")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let api = stand_in::start().await?; // e.g. "https://payments.example/v1"
    let client = reqwest::Client::new();
    let receipt = checkout(&client, &api, r#"{"order": 7, "amount": 100}"#).await?;
    println!("{receipt}");
    Ok(())
}

/// A stand-in for a payments API on a loopback port that de-duplicates by `Idempotency-Key`:
/// the first request with a key is applied, but its answer is lost (`502`, as a proxy would
/// say); a repeat of the key gets the first one's result, and nothing is applied twice.
mod stand_in {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use axum::extract::State;
    use axum::http::{HeaderMap, StatusCode};
    use axum::routing::post;

    type Applied = Arc<Mutex<HashMap<String, u32>>>;

    pub async fn start() -> std::io::Result<String> {
        let app = axum::Router::new()
            .route("/payments", post(pay))
            .with_state(Applied::default());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        tokio::spawn(async move { axum::serve(listener, app).await });
        Ok(format!("http://{addr}"))
    }

    async fn pay(State(applied): State<Applied>, headers: HeaderMap) -> (StatusCode, String) {
        let Some(key) = headers.get("idempotency-key").and_then(|k| k.to_str().ok()) else {
            return (
                StatusCode::BAD_REQUEST,
                "an Idempotency-Key is required".into(),
            );
        };
        let mut applied = applied.lock().unwrap();
        let seen = applied.entry(key.to_owned()).or_default();
        *seen += 1;
        match *seen {
            1 => (StatusCode::BAD_GATEWAY, String::new()), // applied; the answer lost
            n => (
                StatusCode::OK,
                format!("payment {key}: applied once, asked {n} times"),
            ),
        }
    }
}
