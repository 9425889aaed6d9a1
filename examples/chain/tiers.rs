//! A chain of services on loopback, A → B → C, for `examples/chain` and `tests/chain/chain.rs`:
//! A and B each call the next tier through `RetryLayer` over hyper's client (4 attempts), C
//! answers `503`; A and B are served with or without `ChainLayer`.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::any;
use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use retry_jitter::tower::{BoxError, ChainLayer, RetryLayer};
use retry_jitter::Policy;
use tower::{Layer, Service, ServiceExt};

/// The retries of every hop: 4 attempts, full jitter from 20 ms.
pub fn four() -> Policy {
    Policy::new()
        .with_attempts(4)
        .with_base(Duration::from_millis(20))
        .with_cap(Duration::from_millis(200))
}

/// A hop's client: hyper's, through `RetryLayer` with [`four`] attempts of at most 2 s each
/// (the `Duration` in its `Settings`: its timeout, after its budget, the default one per
/// host).
pub type HopClient = retry_jitter::tower::RetryService<
    Client<HttpConnector, Full<Bytes>>,
    retry_jitter::tower::TransportErrors,
    retry_jitter::tower::ByStatus,
    retry_jitter::builder::Settings<retry_jitter::budget::HostBudgets, Duration>,
>;

/// A new hop client.
pub fn hop_client() -> HopClient {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    RetryLayer::new(four())
        .timeout(Duration::from_secs(2))
        .layer(client)
}

/// `GET url` through `client`, with `headers`: the answer's status and headers.
pub async fn get(
    client: &HopClient,
    url: &str,
    headers: &HeaderMap,
) -> Result<(StatusCode, HeaderMap), BoxError> {
    let mut req = http::Request::get(url).body(Full::new(Bytes::new()))?;
    req.headers_mut().extend(headers.clone());
    let resp = client.clone().ready().await?.call(req).await?;
    Ok((resp.status(), resp.headers().clone()))
}

/// What a tier received: its calls, and when each began (after the chain's start).
#[derive(Default)]
pub struct Seen {
    pub calls: AtomicU32,
    pub starts: Mutex<Vec<Instant>>,
}

impl Seen {
    pub fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }
    pub fn last_start(&self) -> Option<Instant> {
        self.starts.lock().unwrap().last().copied()
    }
    fn saw(&self) {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.starts.lock().unwrap().push(Instant::now());
    }
}

/// The three tiers' counts, and A's address.
pub struct Chain {
    pub a: SocketAddr,
    pub seen: [Arc<Seen>; 3],
}

/// What a tier does with a request: calls `next` (A and B), or answers (C).
#[derive(Clone)]
struct Tier {
    seen: Arc<Seen>,
    next: Option<(String, HopClient)>,
    /// C's answer and how long it takes.
    answer: (StatusCode, Duration),
}

async fn serve(State(tier): State<Tier>) -> (StatusCode, HeaderMap) {
    tier.seen.saw();
    match &tier.next {
        // The tier's downstream answer is its own (a 503 stays a 503; an error is a 502).
        Some((url, client)) => match get(client, url, &HeaderMap::new()).await {
            Ok((status, _)) => (status, HeaderMap::new()),
            Err(_) => (StatusCode::BAD_GATEWAY, HeaderMap::new()),
        },
        None => {
            tokio::time::sleep(tier.answer.1).await;
            (tier.answer.0, HeaderMap::new())
        }
    }
}

/// Serve `tier` on a loopback port, with `ChainLayer` when `chained`.
async fn listen(tier: Tier, chained: bool) -> SocketAddr {
    let mut app = axum::Router::new().route("/", any(serve)).with_state(tier);
    if chained {
        app = app.layer(ChainLayer::new());
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// Start C (answering `status` after `delay`), then B and A calling it, served with
/// `ChainLayer` when `chained`.
pub async fn start(chained: bool, status: StatusCode, delay: Duration) -> Chain {
    let seen: [Arc<Seen>; 3] = Default::default();
    let mut next = None;
    let mut addr = None;
    for seen in seen.iter().rev() {
        let tier = Tier {
            seen: seen.clone(),
            next: next.take(),
            answer: (status, delay),
        };
        // A and B retry, so they are served with the layer; C only answers.
        let retries = tier.next.is_some();
        let at = listen(tier, chained && retries).await;
        next = Some((format!("http://{at}/"), hop_client()));
        addr = Some(at);
    }
    Chain {
        a: addr.expect("three tiers"),
        seen,
    }
}
