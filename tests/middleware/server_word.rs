//! The server's word on retrying wins (issue 29): `x-should-retry: false`,
//! `stripe-should-retry: false` and `x-envoy-overloaded` stop a status the table retries;
//! `x-should-retry: true` retries one it stops on; every field line of these headers is heard,
//! "don't" winning — through `RetryLayer` over hyper's client and `RetryMiddleware` over
//! reqwest, against a real axum server on loopback that counts the calls it gets.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::loopback;

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

/// The header lines of an answer, each `(name, value)` a field line of its own, in order.
type Lines = &'static [(&'static str, &'static str)];

/// A server answering every call with `status` and the header `lines`; and the calls it got.
async fn server(status: u16, lines: Lines) -> (SocketAddr, Arc<AtomicU32>) {
    let calls = Arc::new(AtomicU32::new(0));
    let answer = move |State(calls): State<Arc<AtomicU32>>| async move {
        calls.fetch_add(1, Ordering::Relaxed);
        let mut headers = HeaderMap::new();
        for &(name, value) in lines {
            headers.append(
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

/// (method, status, the answer's header lines, calls expected of 3 attempts at most)
const CASES: [(&str, u16, Lines, u32); 13] = [
    ("GET", 503, &[], 3),
    ("GET", 503, &[("x-should-retry", "false")], 1),
    ("GET", 503, &[("stripe-should-retry", "false")], 1),
    ("GET", 503, &[("x-envoy-overloaded", "true")], 1),
    ("GET", 409, &[("x-should-retry", "true")], 3),
    ("GET", 200, &[("x-should-retry", "true")], 1),
    // A POST's 500, which the method rule sends once, marked safe by the server...
    ("POST", 500, &[("x-should-retry", "true")], 3),
    // ...unless another line says "don't": every line is heard, "don't" wins.
    (
        "POST",
        500,
        &[("x-should-retry", "true"), ("x-should-retry", "false")],
        1,
    ),
    (
        "POST",
        500,
        &[
            ("stripe-should-retry", "true"),
            ("stripe-should-retry", "false"),
        ],
        1,
    ),
    (
        "GET",
        503,
        &[
            ("stripe-should-retry", "true"),
            ("stripe-should-retry", "false"),
        ],
        1,
    ),
    (
        "POST",
        500,
        &[
            ("x-should-retry", "true"),
            ("x-envoy-overloaded", "true"),
            ("x-envoy-overloaded", "true"),
        ],
        1,
    ),
    // Lines a proxy folded into one.
    ("POST", 500, &[("x-should-retry", "true, false")], 1),
    // A 409 marked "do" on one line and "don't" on the next.
    (
        "GET",
        409,
        &[("x-should-retry", "true"), ("x-should-retry", "false")],
        1,
    ),
];

#[tokio::test]
async fn through_the_tower_layer_over_hyper() {
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;
    use retry_jitter::tower::RetryLayer;
    type Body = BoxBody<Bytes, std::io::Error>;

    for (method, status, lines, expected) in CASES {
        let (addr, calls) = server(status, lines).await;
        let client = Client::builder(TokioExecutor::new()).build_http::<Body>();
        let svc = tower::ServiceBuilder::new()
            .layer(RetryLayer::new(quick()))
            .service(client);
        let req = http::Request::builder()
            .method(method)
            .uri(format!("http://{addr}/items"))
            .body(Empty::new().map_err(|never| match never {}).boxed())
            .unwrap();
        let resp = svc.oneshot(req).await.unwrap();
        assert_eq!(resp.status().as_u16(), status);
        assert_eq!(
            calls.load(Ordering::Relaxed),
            expected,
            "{method} answered {status} with {lines:?}"
        );
    }
}

#[tokio::test]
async fn through_the_reqwest_middleware() {
    use reqwest_middleware::ClientBuilder;
    use retry_jitter::reqwest_middleware::RetryMiddleware;

    for (method, status, lines, expected) in CASES {
        let (addr, calls) = server(status, lines).await;
        let client = ClientBuilder::new(reqwest::Client::new())
            .with(RetryMiddleware::new(quick()))
            .build();
        let resp = client
            .request(method.parse().unwrap(), format!("http://{addr}/items"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), status);
        assert_eq!(
            calls.load(Ordering::Relaxed),
            expected,
            "{method} answered {status} with {lines:?}"
        );
    }
}
