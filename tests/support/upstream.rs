//! A flaky upstream HTTP service on loopback, shared by `tests/web/web.rs` and
//! `examples/web_service.rs`: real axum, real sockets, 127.0.0.1 only.
//!
//! `GET /flaky/{kind}/{failures}/{id}` fails its first `failures` calls (per `id`) with `kind` —
//! `503` (with `Retry-After: 1`), `429`, `500` — then answers 200. `GET /status/{code}/{id}`
//! always answers `code`. `GET /hang/{id}` accepts the request and never answers (the
//! connection stays open, no status line is ever sent): for timeouts. Every call is counted per
//! path.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

/// Calls seen, per path.
#[derive(Clone, Default)]
pub struct Calls(Arc<Mutex<HashMap<String, u32>>>);

impl Calls {
    /// Count a call to `path`; the count including it.
    fn hit(&self, path: String) -> u32 {
        let mut calls = self.0.lock().expect("no handler panicked");
        let n = calls.entry(path).or_default();
        *n += 1;
        *n
    }

    /// How many calls `path` has seen.
    pub fn get(&self, path: &str) -> u32 {
        self.0
            .lock()
            .expect("no handler panicked")
            .get(path)
            .copied()
            .unwrap_or(0)
    }
}

async fn flaky(
    State(calls): State<Calls>,
    Path((kind, failures, id)): Path<(u16, u32, String)>,
) -> Response {
    let n = calls.hit(format!("/flaky/{kind}/{failures}/{id}"));
    if n > failures {
        return (StatusCode::OK, format!("ok after {n} calls")).into_response();
    }
    let status = StatusCode::from_u16(kind).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if status == StatusCode::SERVICE_UNAVAILABLE {
        (status, [("retry-after", "1")], "down for maintenance").into_response()
    } else {
        (status, format!("failure {n}")).into_response()
    }
}

async fn fixed(State(calls): State<Calls>, Path((code, id)): Path<(u16, String)>) -> Response {
    calls.hit(format!("/status/{code}/{id}"));
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, format!("always {code}")).into_response()
}

async fn hang(State(calls): State<Calls>, Path(id): Path<String>) -> Response {
    calls.hit(format!("/hang/{id}"));
    std::future::pending().await
}

/// Start the upstream on an ephemeral loopback port: its address and its call counts.
pub async fn start() -> std::io::Result<(SocketAddr, Calls)> {
    let calls = Calls::default();
    let app = Router::new()
        .route("/flaky/{kind}/{failures}/{id}", get(flaky))
        .route("/status/{code}/{id}", get(fixed))
        .route("/hang/{id}", get(hang))
        .with_state(calls.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok((addr, calls))
}
