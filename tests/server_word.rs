//! The server's word on retrying wins (issue 29): `x-should-retry: false`,
//! `stripe-should-retry: false` and `x-envoy-overloaded` stop a status the table retries;
//! `x-should-retry: true` retries one it stops on — through `RetryLayer` over hyper's client
//! and `RetryMiddleware` over reqwest, against a real axum server on loopback that counts the
//! calls it gets.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[path = "support/loopback.rs"]
mod loopback;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::routing::any;
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty};
use retry_jitter::Policy;
use tower::ServiceExt;

/// Three attempts, short waits.
fn quick() -> Policy {
    Policy::new()
        .with_attempts(3)
        .with_base(Duration::from_millis(2))
        .with_cap(Duration::from_millis(20))
}

/// A server answering every call with `status` and the one header `name: value` (none if
/// `name` is empty); and the calls it got.
async fn server(
    status: u16,
    name: &'static str,
    value: &'static str,
) -> (SocketAddr, Arc<AtomicU32>) {
    let calls = Arc::new(AtomicU32::new(0));
    let answer = move |State(calls): State<Arc<AtomicU32>>| async move {
        calls.fetch_add(1, Ordering::Relaxed);
        let mut headers = HeaderMap::new();
        if !name.is_empty() {
            headers.insert(
                HeaderName::from_static(name),
                HeaderValue::from_static(value),
            );
        }
        (StatusCode::from_u16(status).unwrap(), headers)
    };
    let app = axum::Router::new()
        .route("/{*path}", any(answer))
        .with_state(calls.clone());
    let addr = loopback::serve(app).await;
    (addr, calls)
}

/// (status, header, value, calls expected of 3 attempts at most)
const CASES: [(u16, &str, &str, u32); 6] = [
    (503, "", "", 3),
    (503, "x-should-retry", "false", 1),
    (503, "stripe-should-retry", "false", 1),
    (503, "x-envoy-overloaded", "true", 1),
    (409, "x-should-retry", "true", 3),
    (200, "x-should-retry", "true", 1),
];

#[tokio::test]
async fn through_the_tower_layer_over_hyper() {
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;
    use retry_jitter::tower::RetryLayer;
    type Body = BoxBody<Bytes, std::io::Error>;

    for (status, name, value, expected) in CASES {
        let (addr, calls) = server(status, name, value).await;
        let client = Client::builder(TokioExecutor::new()).build_http::<Body>();
        let svc = tower::ServiceBuilder::new()
            .layer(RetryLayer::new(quick()))
            .service(client);
        let req = http::Request::get(format!("http://{addr}/items"))
            .body(Empty::new().map_err(|never| match never {}).boxed())
            .unwrap();
        let resp = svc.oneshot(req).await.unwrap();
        assert_eq!(resp.status().as_u16(), status);
        assert_eq!(
            calls.load(Ordering::Relaxed),
            expected,
            "{status} with {name}: {value}"
        );
    }
}

#[tokio::test]
async fn through_the_reqwest_middleware() {
    use reqwest_middleware::ClientBuilder;
    use retry_jitter::reqwest_middleware::RetryMiddleware;

    for (status, name, value, expected) in CASES {
        let (addr, calls) = server(status, name, value).await;
        let client = ClientBuilder::new(reqwest::Client::new())
            .with(RetryMiddleware::new(quick()))
            .build();
        let resp = client
            .get(format!("http://{addr}/items"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), status);
        assert_eq!(
            calls.load(Ordering::Relaxed),
            expected,
            "{status} with {name}: {value}"
        );
    }
}
