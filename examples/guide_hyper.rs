use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use retry_jitter::tower::RetryLayer;
use retry_jitter::Policy;
use tower::ServiceExt;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let api = stand_in::start().await?; // your service's base URL

    // hyper's client as it is, the retry loop around it: 4 attempts, each cut after 2 s.
    let client: Client<HttpConnector, Full<Bytes>> =
        Client::builder(TokioExecutor::new()).build_http();
    let orders = tower::ServiceBuilder::new()
        .layer(
            RetryLayer::new(
                Policy::new()
                    .with_attempts(4)
                    .with_base(Duration::from_millis(50)),
            )
            .timeout(Duration::from_secs(2))
            .with_name("orders"),
        )
        .service(client);

    // A PUT may be sent again: the 503s are retried, the same bytes each time.
    let put =
        http::Request::put(format!("{api}/orders/7")).body(Full::from(r#"{"sku": "A-1"}"#))?;
    let resp = orders.clone().oneshot(put).await?;
    println!("PUT  /orders/7                      -> {}", resp.status());

    // A POST without an Idempotency-Key may have been applied: a 502 is returned, sent once.
    let post =
        http::Request::post(format!("{api}/orders")).body(Full::from(r#"{"sku": "B-2"}"#))?;
    let resp = orders.clone().oneshot(post).await?;
    println!("POST /orders                        -> {}", resp.status());

    // The same POST with a key the server de-duplicates by: retried like the PUT.
    let post = http::Request::post(format!("{api}/orders"))
        .header("idempotency-key", "order-b-2")
        .body(Full::from(r#"{"sku": "B-2"}"#))?;
    let resp = orders.clone().oneshot(post).await?;
    println!("POST /orders, Idempotency-Key set   -> {}", resp.status());
    Ok(())
}

/// A stand-in for the service on a loopback port: each request (by method, path and
/// Idempotency-Key) fails twice — a PUT with `503`, a POST with `502` — then succeeds.
mod stand_in {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use axum::extract::{Request, State};
    use axum::http::{Method, StatusCode};

    type Calls = Arc<Mutex<HashMap<String, u32>>>;

    pub async fn start() -> std::io::Result<String> {
        let app = axum::Router::new()
            .fallback(answer)
            .with_state(Calls::default());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        tokio::spawn(async move { axum::serve(listener, app).await });
        Ok(format!("http://{addr}"))
    }

    async fn answer(State(calls): State<Calls>, req: Request) -> StatusCode {
        let key = req
            .headers()
            .get("idempotency-key")
            .map(|k| k.to_str().unwrap_or(""));
        let id = format!("{} {} {key:?}", req.method(), req.uri().path());
        let n = {
            let mut calls = calls.lock().unwrap();
            let n = calls.entry(id).or_default();
            *n += 1;
            *n
        };
        match (req.method(), n) {
            (&Method::POST, 1 | 2) => StatusCode::BAD_GATEWAY,
            (_, 1 | 2) => StatusCode::SERVICE_UNAVAILABLE,
            (&Method::POST, _) => StatusCode::CREATED,
            _ => StatusCode::OK,
        }
    }
}
