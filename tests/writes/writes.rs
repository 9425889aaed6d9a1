//! Never send a write twice (issue 29): a request whose method is not idempotent (`POST`,
//! `PATCH`) and which carries no `Idempotency-Key` is retried only on what proves it was not
//! applied — through `RetryLayer` over hyper's client and `RetryMiddleware` over reqwest,
//! against real servers on loopback that count what they get. `.idempotent()` and
//! `.idempotency_key()` open the whole table.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::loopback;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::any;
use bytes::Bytes;
use http::Method;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use retry_jitter::hedge::Hedge;
use retry_jitter::reqwest_middleware::RetryMiddleware;
use retry_jitter::tower::RetryLayer;
use retry_jitter::Policy;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower::{Layer, ServiceExt};

use crate::h2_frames;

use crate::my_body;
use my_body::MyBody;

type Body = BoxBody<Bytes, std::io::Error>;

/// Four attempts, short waits.
fn four() -> Policy {
    Policy::new()
        .with_attempts(4)
        .with_base(Duration::from_millis(2))
        .with_cap(Duration::from_millis(10))
}

/// What a server got: its calls, and each call's idempotency key.
#[derive(Default)]
struct Seen {
    calls: AtomicU32,
    keys: Mutex<Vec<Option<String>>>,
}

impl Seen {
    fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }
    fn keys(&self) -> Vec<Option<String>> {
        self.keys.lock().unwrap().clone()
    }
}

/// A server answering every call with `status` after `delay`, recording its key.
async fn server(status: u16, delay: Duration) -> (SocketAddr, Arc<Seen>) {
    server_saying(status, delay, None).await
}

/// [`server`], its answers carrying `x-should-retry: <said>` when `said` is given.
async fn server_saying(
    status: u16,
    delay: Duration,
    said: Option<&'static str>,
) -> (SocketAddr, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let answer = move |State(seen): State<Arc<Seen>>, headers: HeaderMap| async move {
        seen.calls.fetch_add(1, Ordering::SeqCst);
        let key = ["idempotency-key", "x-idempotency-key"]
            .iter()
            .find_map(|name| headers.get(*name))
            .map(|v| v.to_str().unwrap().to_owned());
        seen.keys.lock().unwrap().push(key);
        tokio::time::sleep(delay).await;
        let mut answer = HeaderMap::new();
        if let Some(said) = said {
            answer.insert("x-should-retry", said.parse().unwrap());
        }
        (StatusCode::from_u16(status).unwrap(), answer)
    };
    let app = axum::Router::new()
        .route("/{*path}", any(answer))
        .with_state(seen.clone());
    let addr = loopback::serve(app).await;
    (addr, seen)
}

/// A raw TCP server that reads each request whole, counts it, and closes the connection
/// without answering: the request may have been applied.
async fn closes_after_reading() -> (SocketAddr, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let counted = seen.clone();
    let addr = h2_frames::serve_each(move |mut conn| {
        let seen = counted.clone();
        async move {
            let mut got = Vec::new();
            let mut buf = [0u8; 1024];
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                match conn.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
            seen.calls.fetch_add(1, Ordering::SeqCst);
            let _ = conn.shutdown().await;
        }
    })
    .await;
    (addr, seen)
}

/// A request through hyper's client under `layer`; its status, or the error's text.
async fn via_hyper<L>(
    layer: L,
    method: Method,
    url: String,
    key: Option<&str>,
) -> Result<u16, String>
where
    L: tower::Layer<Client<HttpConnector, Body>>,
    L::Service: tower::Service<
        http::Request<Body>,
        Response = http::Response<hyper::body::Incoming>,
        Error = retry_jitter::tower::BoxError,
    >,
{
    let body = Full::from("one order")
        .map_err(|never| match never {})
        .boxed();
    via_hyper_sending(layer, method, url, key, body).await
}

/// [`via_hyper`], its request carrying `body`, for a client of that body type.
async fn via_hyper_sending<L, B>(
    layer: L,
    method: Method,
    url: String,
    key: Option<&str>,
    body: B,
) -> Result<u16, String>
where
    B: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<retry_jitter::tower::BoxError>,
    L: tower::Layer<Client<HttpConnector, B>>,
    L::Service: tower::Service<
        http::Request<B>,
        Response = http::Response<hyper::body::Incoming>,
        Error = retry_jitter::tower::BoxError,
    >,
{
    let client = Client::builder(TokioExecutor::new()).build_http::<B>();
    let svc = layer.layer(client);
    let mut req = http::Request::builder().method(method).uri(url);
    if let Some(key) = key {
        req = req.header("idempotency-key", key);
    }
    match svc.oneshot(req.body(body).unwrap()).await {
        Ok(resp) => Ok(resp.status().as_u16()),
        Err(e) => Err(e.to_string()),
    }
}

/// A request through reqwest under `middleware`; its status, or the error's text.
async fn via_reqwest<M>(
    middleware: M,
    method: Method,
    url: String,
    key: Option<&str>,
) -> Result<u16, String>
where
    M: reqwest_middleware::Middleware,
{
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(middleware)
        .build();
    let mut req = client.request(method, url).body("one order");
    if let Some(key) = key {
        req = req.header("idempotency-key", key);
    }
    match req.send().await {
        Ok(resp) => Ok(resp.status().as_u16()),
        Err(e) => Err(e.to_string()),
    }
}

/// The calls a fresh server of `status` got from one request of `method`, through each face
/// built by `$build` from its constructor: `(hyper, reqwest)`.
macro_rules! calls {
    ($status:expr, $method:expr, |$b:ident| $build:expr) => {
        calls!($status, $method, None, |$b| $build)
    };
    ($status:expr, $method:expr, $key:expr, |$b:ident| $build:expr) => {{
        let (addr, hy) = server($status, Duration::ZERO).await;
        let $b = RetryLayer::new(four());
        let got = via_hyper($build, $method, format!("http://{addr}/orders"), $key).await;
        assert_eq!(got, Ok($status), "hyper");
        let (addr, rq) = server($status, Duration::ZERO).await;
        let $b = RetryMiddleware::new(four());
        let got = via_reqwest($build, $method, format!("http://{addr}/orders"), $key).await;
        assert_eq!(got, Ok($status), "reqwest");
        ((hy.calls(), rq.calls()), (hy, rq))
    }};
}

#[tokio::test]
async fn a_write_that_may_have_been_applied_is_sent_once() {
    for (status, method) in [
        (500, Method::POST),
        (502, Method::PATCH),
        (504, Method::PATCH),
        (500, Method::PATCH),
    ] {
        let (calls, _) = calls!(status, method.clone(), |b| b);
        assert_eq!(calls, (1, 1), "{method} answered {status}");
    }
}

#[tokio::test]
async fn a_write_refused_before_processing_is_retried() {
    for status in [503, 429, 408, 425] {
        let (calls, _) = calls!(status, Method::POST, |b| b);
        assert_eq!(calls, (4, 4), "POST answered {status}");
    }
}

#[tokio::test]
async fn idempotent_methods_keep_the_whole_table() {
    for (status, method) in [
        (500, Method::GET),
        (502, Method::PUT),
        (504, Method::DELETE),
        (500, Method::HEAD),
    ] {
        let (calls, _) = calls!(status, method.clone(), |b| b);
        assert_eq!(calls, (4, 4), "{method} answered {status}");
    }
}

#[tokio::test]
async fn a_write_with_a_key_is_retried_with_the_same_key() {
    let (calls, (hy, rq)) = calls!(500, Method::POST, Some("order-7"), |b| b);
    assert_eq!(calls, (4, 4));
    for seen in [hy, rq] {
        assert_eq!(seen.keys(), vec![Some("order-7".to_owned()); 4]);
    }
}

#[tokio::test]
async fn idempotent_vouches_for_every_request() {
    let (calls, _) = calls!(500, Method::POST, |b| b.idempotent());
    assert_eq!(calls, (4, 4));
}

#[tokio::test]
async fn idempotency_key_gives_one_key_per_call_the_same_on_each_attempt() {
    let (calls, (hy, rq)) = calls!(500, Method::POST, |b| b.idempotency_key());
    assert_eq!(calls, (4, 4));
    let (again, (hy2, rq2)) = calls!(500, Method::POST, |b| b.idempotency_key());
    assert_eq!(again, (4, 4));
    for (first, second) in [(hy, hy2), (rq, rq2)] {
        let (one, two) = (first.keys(), second.keys());
        let key = one[0].clone().expect("a POST gets a key");
        assert_eq!(
            one,
            vec![Some(key.clone()); 4],
            "the same key on every attempt"
        );
        assert_eq!(key.len(), 36, "a hyphenated UUID: {key}");
        assert_eq!(&key[14..15], "4", "version 4: {key}");
        assert_ne!(two[0].as_ref(), Some(&key), "a new key for each call");
    }
    // A key the caller set is kept; a GET gets none.
    let (_, (hy, rq)) = calls!(503, Method::POST, Some("mine"), |b| b.idempotency_key());
    assert_eq!(hy.keys(), vec![Some("mine".to_owned()); 4]);
    assert_eq!(rq.keys(), vec![Some("mine".to_owned()); 4]);
    let (calls, (hy, rq)) = calls!(500, Method::GET, |b| b.idempotency_key());
    assert_eq!(calls, (4, 4));
    assert_eq!(hy.keys(), vec![None; 4]);
    assert_eq!(rq.keys(), vec![None; 4]);
}

#[tokio::test]
async fn an_empty_or_blank_key_is_no_key() {
    // The server has nothing to de-duplicate by: the POST's 500 may have been applied.
    for blank in ["", "   ", "\t"] {
        let (calls, _) = calls!(500, Method::POST, Some(blank), |b| b);
        assert_eq!(calls, (1, 1), "a POST with key {blank:?}");
    }
}

#[tokio::test]
async fn idempotency_key_replaces_an_empty_or_blank_key() {
    for blank in ["", "   "] {
        let (calls, (hy, rq)) = calls!(500, Method::POST, Some(blank), |b| b.idempotency_key());
        assert_eq!(calls, (4, 4), "{blank:?}");
        for seen in [hy, rq] {
            let keys = seen.keys();
            let key = keys[0].clone().expect("a key");
            assert_eq!(key.len(), 36, "a fresh UUID in place of {blank:?}: {key:?}");
            assert_eq!(keys, vec![Some(key); 4], "the same key on every attempt");
        }
    }
}

/// A request of `method` with a body of the user's own `Clone` type ([`MyBody`]), through
/// hyper's client under `layer`, to a fresh server answering `status`: the answer, and what
/// the server got.
async fn with_my_body<L>(layer: L, status: u16, method: Method) -> (Result<u16, String>, Arc<Seen>)
where
    L: tower::Layer<Client<HttpConnector, MyBody>>,
    L::Service: tower::Service<
        http::Request<MyBody>,
        Response = http::Response<hyper::body::Incoming>,
        Error = retry_jitter::tower::BoxError,
    >,
{
    let (addr, seen) = server(status, Duration::ZERO).await;
    let url = format!("http://{addr}/orders");
    let got = via_hyper_sending(layer, method, url, None, MyBody::new("one order")).await;
    (got, seen)
}

/// `.clone_bodies()` reads a request with a `Clone` body of the user's own as the replayed
/// bodies' mode does: a `POST` answered `500` may have been applied and is sent once; a `POST`
/// answered `503` was refused and a `GET` answered `500` may be repeated: both are retried.
#[tokio::test]
async fn clone_bodies_keeps_the_write_rule() {
    let layer = || RetryLayer::new(four()).clone_bodies();
    let (got, seen) = with_my_body(layer(), 500, Method::POST).await;
    assert_eq!((got, seen.calls()), (Ok(500), 1), "a POST answered 500");
    let (got, seen) = with_my_body(layer(), 503, Method::POST).await;
    assert_eq!((got, seen.calls()), (Ok(503), 4), "a POST answered 503");
    let (got, seen) = with_my_body(layer(), 503, Method::GET).await;
    assert_eq!((got, seen.calls()), (Ok(503), 4), "a GET answered 503");
    let (got, seen) = with_my_body(layer(), 500, Method::GET).await;
    assert_eq!((got, seen.calls()), (Ok(500), 4), "a GET answered 500");
    assert_eq!(seen.keys(), vec![None; 4], "a GET gets no key");
}

/// `.idempotency_key()` with `.clone_bodies()`, set before or after it: a `POST` gets an
/// `Idempotency-Key`, the same on every attempt, and is retried on a `500`.
#[tokio::test]
async fn clone_bodies_gives_a_write_its_idempotency_key() {
    let before = RetryLayer::new(four()).idempotency_key().clone_bodies();
    let after = RetryLayer::new(four()).clone_bodies().idempotency_key();
    for (got, seen) in [
        with_my_body(before, 500, Method::POST).await,
        with_my_body(after, 500, Method::POST).await,
    ] {
        assert_eq!((got, seen.calls()), (Ok(500), 4));
        let keys = seen.keys();
        let key = keys[0].clone().expect("a POST gets a key");
        assert_eq!(keys, vec![Some(key); 4], "the same key on every attempt");
    }
}

/// How slow the servers of the timeout tests are, and the faces' `timeout`.
const SLOW: Duration = Duration::from_millis(300);
const CUT: Duration = Duration::from_millis(40);

/// The calls a server answering after [`SLOW`] got from one `method` request through each face
/// with a `timeout` of [`CUT`], each request ending in the timeout's error: `(hyper, reqwest)`.
async fn calls_cut_by_the_timeout(method: Method) -> (u32, u32) {
    let (addr, hy) = server(200, SLOW).await;
    let layer = RetryLayer::new(four()).timeout(CUT);
    let got = via_hyper(layer, method.clone(), format!("http://{addr}/orders"), None).await;
    assert!(got.is_err(), "{got:?}");
    let (addr, rq) = server(200, SLOW).await;
    let middleware = RetryMiddleware::new(four()).timeout(CUT);
    let got = via_reqwest(middleware, method, format!("http://{addr}/orders"), None).await;
    assert!(got.is_err(), "{got:?}");
    (hy.calls(), rq.calls())
}

#[tokio::test]
async fn a_write_cut_by_the_timeout_is_not_sent_again() {
    assert_eq!(calls_cut_by_the_timeout(Method::POST).await, (1, 1));
    // Vouched for, it is.
    let (addr, hy) = server(200, SLOW).await;
    let url = format!("http://{addr}/orders");
    let layer = RetryLayer::new(four()).timeout(CUT).idempotent();
    assert!(via_hyper(layer, Method::POST, url, None).await.is_err());
    assert_eq!(hy.calls(), 4);
}

#[tokio::test]
async fn an_idempotent_request_cut_by_the_timeout_is_sent_again() {
    // guide::http_clients' error column: each face's own `timeout` is retried, where the method
    // allows it.
    assert_eq!(calls_cut_by_the_timeout(Method::GET).await, (4, 4));
}

/// The calls a server answering `200` after [`SLOW`] got from one `method` request (with
/// `key`) through each face hedged after [`CUT`]: `(hyper, reqwest)`.
async fn calls_hedged(method: Method, key: Option<&str>) -> (u32, u32) {
    let hedge = Hedge::After(CUT);
    let (addr, hy) = server(200, SLOW).await;
    let layer = RetryLayer::new(four()).hedge(hedge);
    let got = via_hyper(layer, method.clone(), format!("http://{addr}/orders"), key).await;
    assert_eq!(got, Ok(200), "hyper");
    let (addr, rq) = server(200, SLOW).await;
    let middleware = RetryMiddleware::new(four()).hedge(hedge);
    let got = via_reqwest(middleware, method, format!("http://{addr}/orders"), key).await;
    assert_eq!(got, Ok(200), "reqwest");
    (hy.calls(), rq.calls())
}

#[tokio::test]
async fn a_write_without_a_key_is_never_hedged() {
    // The server is still working on the first when the hedge delay passes: a hedge would be
    // a second order.
    assert_eq!(calls_hedged(Method::POST, None).await, (1, 1));
    assert_eq!(calls_hedged(Method::PATCH, None).await, (1, 1));
    // With a key, or a method safe to repeat, hedged as before: a hedge after each delay.
    assert_eq!(calls_hedged(Method::POST, Some("order-9")).await, (4, 4));
    assert_eq!(calls_hedged(Method::GET, None).await, (4, 4));
    // Vouched for, or keyed by the layer, a write is hedged too.
    let (addr, seen) = server(200, SLOW).await;
    let url = format!("http://{addr}/orders");
    let layer = RetryLayer::new(four())
        .hedge(Hedge::After(CUT))
        .idempotent();
    assert_eq!(via_hyper(layer, Method::POST, url, None).await, Ok(200));
    assert_eq!(seen.calls(), 4);
    let (addr, seen) = server(200, SLOW).await;
    let url = format!("http://{addr}/orders");
    let keyed = RetryMiddleware::new(four())
        .hedge(Hedge::After(CUT))
        .idempotency_key();
    assert_eq!(via_reqwest(keyed, Method::POST, url, None).await, Ok(200));
    assert_eq!(seen.calls(), 4);
    let keys = seen.keys();
    assert!(
        keys[0].is_some() && keys.iter().all(|k| *k == keys[0]),
        "{keys:?}"
    );
}

/// A middleware after the retry one that fails every request it is handed, counting them.
struct Refuses(Arc<AtomicU32>);

#[derive(Debug)]
struct NotAllowed;

impl std::fmt::Display for NotAllowed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not allowed")
    }
}

impl std::error::Error for NotAllowed {}

#[async_trait::async_trait]
impl reqwest_middleware::Middleware for Refuses {
    async fn handle(
        &self,
        _: reqwest::Request,
        _: &mut http::Extensions,
        _: reqwest_middleware::Next<'_>,
    ) -> reqwest_middleware::Result<reqwest::Response> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Err(reqwest_middleware::Error::middleware(NotAllowed))
    }
}

#[tokio::test]
async fn another_middleware_s_error_is_not_retried() {
    let (addr, seen) = server(200, Duration::ZERO).await;
    let handed = Arc::new(AtomicU32::new(0));
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(RetryMiddleware::new(four()))
        .with(Refuses(handed.clone()))
        .build();
    let got = client.get(format!("http://{addr}/stock")).send().await;
    assert!(got.is_err(), "{got:?}");
    assert_eq!(
        handed.load(Ordering::SeqCst),
        1,
        "a GET, and still sent once"
    );
    assert_eq!(seen.calls(), 0);
}

#[tokio::test]
async fn a_classifier_of_your_own_decides_for_every_method() {
    // A POST answered 500, which the default rule sends once, retried because `on_ok` says so.
    let (addr, hy) = server(500, Duration::ZERO).await;
    let layer = RetryLayer::new(four())
        .on_ok(|r: &http::Response<hyper::body::Incoming>| r.status() == 500);
    let got = via_hyper(layer, Method::POST, format!("http://{addr}/orders"), None).await;
    assert_eq!(got, Ok(500));
    let (addr, rq) = server(500, Duration::ZERO).await;
    let middleware = RetryMiddleware::new(four()).on_ok(|r: &reqwest::Response| r.status() == 500);
    let got = via_reqwest(
        middleware,
        Method::POST,
        format!("http://{addr}/orders"),
        None,
    )
    .await;
    assert_eq!(got, Ok(500));
    assert_eq!((hy.calls(), rq.calls()), (4, 4));
    // `AcceptOk` takes every answer: a GET answered 503 is the answer, sent once.
    let (calls, _) = calls!(503, Method::GET, |b| b.on_ok(retry_jitter::hooks::AcceptOk));
    assert_eq!(calls, (1, 1));
}

#[tokio::test]
async fn idempotency_key_gives_a_patch_its_key_too() {
    let (calls, (hy, rq)) = calls!(502, Method::PATCH, |b| b.idempotency_key());
    assert_eq!(calls, (4, 4));
    for seen in [hy, rq] {
        let keys = seen.keys();
        let key = keys[0].clone().expect("a PATCH gets a key");
        assert_eq!(key.len(), 36, "a hyphenated UUID: {key}");
        assert_eq!(keys, vec![Some(key); 4], "the same key on every attempt");
    }
}

#[tokio::test]
async fn a_write_whose_connection_closed_after_it_was_read_is_sent_once() {
    for (method, expected) in [(Method::POST, 1), (Method::GET, 4)] {
        let (addr, hy) = closes_after_reading().await;
        let url = format!("http://{addr}/orders");
        let got = via_hyper(RetryLayer::new(four()), method.clone(), url, None).await;
        assert!(got.is_err(), "{got:?}");
        let (addr, rq) = closes_after_reading().await;
        let url = format!("http://{addr}/orders");
        let got = via_reqwest(RetryMiddleware::new(four()), method.clone(), url, None).await;
        assert!(got.is_err(), "{got:?}");
        assert_eq!((hy.calls(), rq.calls()), (expected, expected), "{method}");
    }
}

/// A port nothing listens on: bound, then let go.
async fn closed_port() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap()
}

#[tokio::test]
async fn a_write_whose_connect_failed_is_retried_through_the_layer() {
    let addr = closed_port().await;
    let attempts = Arc::new(AtomicU32::new(0));
    let counted = attempts.clone();
    let counter = tower::layer::layer_fn(move |inner| {
        let counted = counted.clone();
        tower::util::MapRequest::new(inner, move |req: http::Request<Body>| {
            counted.fetch_add(1, Ordering::SeqCst);
            req
        })
    });
    let layer = tower::layer::util::Stack::new(counter, RetryLayer::new(four()));
    let got = via_hyper(layer, Method::POST, format!("http://{addr}/orders"), None).await;
    assert!(got.is_err(), "{got:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), 4);
}

/// A middleware after the retry one: it sees each attempt.
struct CountAttempts(Arc<AtomicU32>);

#[async_trait::async_trait]
impl reqwest_middleware::Middleware for CountAttempts {
    async fn handle(
        &self,
        req: reqwest::Request,
        extensions: &mut http::Extensions,
        next: reqwest_middleware::Next<'_>,
    ) -> reqwest_middleware::Result<reqwest::Response> {
        self.0.fetch_add(1, Ordering::SeqCst);
        next.run(req, extensions).await
    }
}

#[tokio::test]
async fn a_write_whose_connect_failed_is_retried_through_the_middleware() {
    let addr = closed_port().await;
    let attempts = Arc::new(AtomicU32::new(0));
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(RetryMiddleware::new(four()))
        .with(CountAttempts(attempts.clone()))
        .build();
    let got = client
        .post(format!("http://{addr}/orders"))
        .body("one order")
        .send()
        .await;
    assert!(got.is_err(), "{got:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn the_server_s_word_wins_over_the_method_rule() {
    // A 500 answering a POST, which the rule sends once, marked safe to retry by the server.
    for (said, expected) in [(Some("true"), 4), (None, 1)] {
        let (addr, hy) = server_saying(500, Duration::ZERO, said).await;
        let url = format!("http://{addr}/orders");
        assert_eq!(
            via_hyper(RetryLayer::new(four()), Method::POST, url, None).await,
            Ok(500)
        );
        let (addr, rq) = server_saying(500, Duration::ZERO, said).await;
        let url = format!("http://{addr}/orders");
        let got = via_reqwest(RetryMiddleware::new(four()), Method::POST, url, None).await;
        assert_eq!(got, Ok(500));
        assert_eq!((hy.calls(), rq.calls()), (expected, expected), "{said:?}");
    }
    // A 503 marked "don't" stops even a GET.
    let (addr, hy) = server_saying(503, Duration::ZERO, Some("false")).await;
    let url = format!("http://{addr}/orders");
    assert_eq!(
        via_hyper(RetryLayer::new(four()), Method::GET, url, None).await,
        Ok(503)
    );
    assert_eq!(hy.calls(), 1);
}

/// An HTTP/2 server (prior knowledge, no TLS) that refuses every stream before processing it
/// (`RST_STREAM` with `REFUSED_STREAM`), counting them.
async fn refuses_streams() -> (SocketAddr, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let counted = seen.clone();
    let addr = h2_frames::serve_each(move |socket| {
        let seen = counted.clone();
        async move {
            let Ok(mut conn) = h2::server::handshake(socket).await else {
                return;
            };
            while let Some(Ok((_, mut respond))) = conn.accept().await {
                seen.calls.fetch_add(1, Ordering::SeqCst);
                respond.send_reset(h2::Reason::REFUSED_STREAM);
            }
        }
    })
    .await;
    (addr, seen)
}

#[tokio::test]
async fn a_write_whose_stream_was_refused_is_retried_through_the_layer() {
    for method in [Method::POST, Method::GET] {
        let (addr, seen) = refuses_streams().await;
        let got = via_hyper_h2(method.clone(), addr).await;
        assert!(got.is_err(), "{method}");
        assert_eq!(
            seen.calls(),
            4,
            "{method}: refused before processing, so retried"
        );
    }
}

/// What a server that sends `GOAWAY` got: connections, streams it read on a connection it sent
/// `GOAWAY` on, and streams it answered.
#[derive(Default)]
struct GoneAway {
    connections: AtomicU32,
    read_then_gone_away: AtomicU32,
    answered: AtomicU32,
}

impl GoneAway {
    /// `(connections, streams read then gone away from, streams answered)`.
    fn counts(&self) -> (u32, u32, u32) {
        (
            self.connections.load(Ordering::SeqCst),
            self.read_then_gone_away.load(Ordering::SeqCst),
            self.answered.load(Ordering::SeqCst),
        )
    }
}

/// An HTTP/2 server (prior knowledge) whose first `go_away` connections each read one request
/// whole (to its `END_STREAM`), then send `GOAWAY` with `last_stream_id` and `reason` (and
/// `debug` data) and close; later connections answer every request `200` (h2's server).
/// Written frame by frame, as h2's server sends `GOAWAY` only with the last stream it read.
async fn goes_away(
    go_away: u32,
    last_stream_id: u32,
    reason: h2::Reason,
    debug: &'static [u8],
) -> (SocketAddr, Arc<GoneAway>) {
    let seen = Arc::new(GoneAway::default());
    let counted = seen.clone();
    let addr = h2_frames::serve_each(move |mut conn| {
        let seen = counted.clone();
        // Counted as it is accepted, in order: the first `go_away` connections go away.
        let nth = seen.connections.fetch_add(1, Ordering::SeqCst);
        async move {
            if nth >= go_away {
                let Ok(mut h2) = h2::server::handshake(conn).await else {
                    return;
                };
                while let Some(Ok((_, mut respond))) = h2.accept().await {
                    seen.answered.fetch_add(1, Ordering::SeqCst);
                    let _ = respond.send_response(http::Response::new(()), true);
                }
                return;
            }
            h2_frames::read_request(&mut conn).await.unwrap();
            seen.read_then_gone_away.fetch_add(1, Ordering::SeqCst);
            let frame = h2_frames::go_away(last_stream_id, reason.into(), debug);
            conn.write_all(&frame).await.unwrap();
            h2_frames::close(conn).await;
        }
    })
    .await;
    (addr, seen)
}

/// A request of `method` through `RetryLayer` over hyper's HTTP/2 client; its status, or the
/// error down its source chain.
async fn via_hyper_h2(method: Method, addr: SocketAddr) -> Result<u16, String> {
    let client = Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http::<Body>();
    let svc = RetryLayer::new(four()).layer(client);
    let body = Full::from("one order")
        .map_err(|never| match never {})
        .boxed();
    let req = http::Request::builder()
        .method(method)
        .uri(format!("http://{addr}/orders"))
        .body(body)
        .unwrap();
    match svc.oneshot(req).await {
        Ok(resp) => Ok(resp.status().as_u16()),
        Err(e) => {
            let mut chain = vec![e.to_string()];
            let mut cause = e.source();
            while let Some(c) = cause {
                chain.push(c.to_string());
                cause = c.source();
            }
            Err(chain.join(": "))
        }
    }
}

#[tokio::test]
async fn a_write_on_a_stream_beyond_a_goaway_is_retried_on_a_new_connection() {
    for (reason, debug) in [
        (h2::Reason::NO_ERROR, &b""[..]),
        (h2::Reason::ENHANCE_YOUR_CALM, &b"shedding load"[..]),
    ] {
        for method in [Method::POST, Method::GET] {
            // GOAWAY with last stream 0: the client's stream 1 was never processed.
            let (addr, seen) = goes_away(1, 0, reason, debug).await;
            let got = via_hyper_h2(method.clone(), addr).await;
            assert_eq!(got, Ok(200), "{method} {reason:?}");
            assert_eq!(seen.counts(), (2, 1, 1), "{method} {reason:?}");
        }
    }
}

#[tokio::test]
async fn a_write_at_or_below_a_goaway_s_last_stream_id_is_sent_once() {
    // GOAWAY with last stream 1, then the connection closes: the server may have processed
    // the client's stream 1. Every connection does so.
    for (method, expected) in [(Method::POST, 1), (Method::GET, 4)] {
        let (addr, seen) = goes_away(u32::MAX, 1, h2::Reason::INTERNAL_ERROR, b"").await;
        let got = via_hyper_h2(method.clone(), addr).await;
        assert!(got.is_err(), "{method}: {got:?}");
        assert_eq!(seen.counts(), (expected, expected, 0), "{method}: {got:?}");
    }
}
