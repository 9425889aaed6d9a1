//! An axum upstream on loopback that answers a script of statuses, in order, then `200` with
//! the body echoed, and keeps the body of every call it saw: what the middleware tests count.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::any;
use bytes::Bytes;

/// What the upstream saw, and how it answers.
#[derive(Default)]
pub struct Upstream {
    /// The body of each call, as received.
    pub bodies: Mutex<Vec<Bytes>>,
    /// Answers, one per call, then 200 for ever: (status, Retry-After).
    script: Mutex<VecDeque<(u16, Option<&'static str>)>>,
}

impl Upstream {
    pub fn calls(&self) -> usize {
        self.bodies.lock().unwrap().len()
    }
}

/// An axum upstream on loopback answering `script` in order, then 200 with the body echoed.
pub async fn upstream(script: &[(u16, Option<&'static str>)]) -> (SocketAddr, Arc<Upstream>) {
    let state = Arc::new(Upstream {
        bodies: Mutex::new(Vec::new()),
        script: Mutex::new(script.iter().copied().collect()),
    });
    async fn handle(State(s): State<Arc<Upstream>>, body: Bytes) -> (StatusCode, HeaderMap, Bytes) {
        s.bodies.lock().unwrap().push(body.clone());
        let (status, retry_after) = s.script.lock().unwrap().pop_front().unwrap_or((200, None));
        let mut headers = HeaderMap::new();
        if let Some(v) = retry_after {
            headers.insert("retry-after", v.parse().unwrap());
        }
        (StatusCode::from_u16(status).unwrap(), headers, body)
    }
    let app = axum::Router::new()
        .route("/{*path}", any(handle))
        .with_state(state.clone());
    let addr = super::loopback::serve(app).await;
    (addr, state)
}
