//! Feature `tracing` with the middleware faces (issue 29): each resent attempt of `RetryLayer`
//! and `RetryMiddleware` runs in a span carrying OpenTelemetry's stable
//! `http.request.resend_count` (1, 2, …), the first attempt in none, against a real axum server
//! on loopback that answers 503 twice, then 200.

use std::fmt;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::loopback;

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::any;
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty};
use retry_jitter::Policy;
use tower::ServiceExt;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// The `http.request.resend_count` of every span opened, in order.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<String>>>, Arc<AtomicU64>);

struct Count<'a>(&'a mut Option<String>);

impl Visit for Count<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "http.request.resend_count" {
            *self.0 = Some(format!("{value:?}"));
        }
    }
}

impl Subscriber for Spans {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut count = None;
        span.record(&mut Count(&mut count));
        if let Some(count) = count {
            self.0.lock().unwrap().push(count);
        }
        Id::from_u64(self.1.fetch_add(1, Ordering::Relaxed) + 1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// 503 twice, then 200.
async fn server() -> SocketAddr {
    let calls = Arc::new(AtomicU32::new(0));
    let answer = |State(calls): State<Arc<AtomicU32>>| async move {
        match calls.fetch_add(1, Ordering::SeqCst) {
            0 | 1 => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::OK,
        }
    };
    let app = axum::Router::new()
        .route("/{*path}", any(answer))
        .with_state(calls);
    let addr = loopback::serve(app).await;
    addr
}

fn quick() -> Policy {
    Policy::new()
        .with_attempts(4)
        .with_base(Duration::from_millis(2))
        .with_cap(Duration::from_millis(10))
}

#[tokio::test(flavor = "current_thread")]
async fn each_resend_of_the_tower_layer_carries_its_count() {
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;
    use retry_jitter::tower::RetryLayer;
    type Body = BoxBody<Bytes, std::io::Error>;

    let addr = server().await;
    let spans = Spans::default();
    let _guard = tracing::subscriber::set_default(spans.clone());
    let client = Client::builder(TokioExecutor::new()).build_http::<Body>();
    let svc = tower::ServiceBuilder::new()
        .layer(RetryLayer::new(quick()))
        .service(client);
    let req = http::Request::get(format!("http://{addr}/items"))
        .body(Empty::new().map_err(|never| match never {}).boxed())
        .unwrap();
    assert_eq!(svc.oneshot(req).await.unwrap().status(), 200);
    assert_eq!(*spans.0.lock().unwrap(), ["1", "2"]);
}

#[tokio::test(flavor = "current_thread")]
async fn each_resend_of_the_reqwest_middleware_carries_its_count() {
    use retry_jitter::reqwest_middleware::RetryMiddleware;

    let addr = server().await;
    let spans = Spans::default();
    let _guard = tracing::subscriber::set_default(spans.clone());
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(RetryMiddleware::new(quick()))
        .build();
    let resp = client
        .get(format!("http://{addr}/items"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(*spans.0.lock().unwrap(), ["1", "2"]);
}
