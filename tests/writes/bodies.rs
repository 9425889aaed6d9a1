//! The bodies hyper users send (issue 29 point 3): hyper-util's legacy
//! `Client<HttpConnector, Full<Bytes>>` (and one sending `String`, one `Empty<Bytes>`) wrapped
//! by `RetryLayer::new` as it is, against a real axum server on loopback that answers `503`
//! twice, then `200`: the server receives the body byte-exact on every attempt, and a body
//! over the limit is sent once. A `Full<Bytes>` is not copied for its retries: each attempt
//! sends the same bytes, shared. And every attempt carries the first attempt's whole head,
//! whichever way its body is kept (an in-process inner service, which sees the extensions).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use crate::loopback;

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::any;
use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use retry_jitter::tower::RetryLayer;
use retry_jitter::Policy;
use tower::{Service, ServiceExt};

/// What the server received: each call's method and body.
#[derive(Default)]
struct Seen {
    calls: Mutex<Vec<(http::Method, Bytes)>>,
    script: Mutex<VecDeque<u16>>,
}

impl Seen {
    fn calls(&self) -> Vec<(http::Method, Bytes)> {
        self.calls.lock().unwrap().clone()
    }
}

/// An axum server on loopback answering the statuses of `script` in order, then `200` with
/// the body it received.
async fn server(script: &[u16]) -> (SocketAddr, Arc<Seen>) {
    let seen = Arc::new(Seen {
        calls: Mutex::new(Vec::new()),
        script: Mutex::new(script.iter().copied().collect()),
    });
    async fn handle(
        State(seen): State<Arc<Seen>>,
        method: http::Method,
        body: Bytes,
    ) -> (StatusCode, Bytes) {
        seen.calls.lock().unwrap().push((method, body.clone()));
        let status = seen.script.lock().unwrap().pop_front().unwrap_or(200);
        (StatusCode::from_u16(status).unwrap(), body)
    }
    let app = axum::Router::new()
        .route("/{*path}", any(handle))
        .with_state(seen.clone());
    let addr = loopback::serve(app).await;
    (addr, seen)
}

/// The policy a new user writes.
fn policy() -> Policy {
    Policy::new().with_attempts(4)
}

/// Bytes that are not all alike: a body cut or reordered would not compare equal.
fn payload(len: usize) -> Bytes {
    (0..len).map(|i| (i * 7 % 251) as u8).collect()
}

#[tokio::test]
async fn a_full_bytes_client_is_wrapped_and_its_body_replayed_byte_exact() {
    let (addr, seen) = server(&[503, 503]).await;
    let client: Client<HttpConnector, Full<Bytes>> =
        Client::builder(TokioExecutor::new()).build_http();
    let svc = tower::ServiceBuilder::new()
        .layer(RetryLayer::new(policy()))
        .service(client);
    let body = payload(20_000);
    let req = http::Request::post(format!("http://{addr}/orders"))
        .body(Full::new(body.clone()))
        .unwrap();
    let resp = svc.oneshot(req).await.unwrap();
    assert_eq!(resp.status(), 200);
    let calls = seen.calls();
    assert_eq!(calls.len(), 3, "503 twice, then 200");
    for (method, received) in calls {
        assert_eq!(method, http::Method::POST);
        assert_eq!(received, body, "byte-exact on every attempt");
    }
    let echoed = resp.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(echoed, body);
}

#[tokio::test]
async fn a_string_client_is_wrapped_and_its_body_replayed_byte_exact() {
    let (addr, seen) = server(&[503, 503]).await;
    let client: Client<HttpConnector, String> = Client::builder(TokioExecutor::new()).build_http();
    let svc = tower::ServiceBuilder::new()
        .layer(RetryLayer::new(policy()))
        .service(client);
    let body = "{\"item\": \"é, ü and 漢字\", \"quantity\": 3}".repeat(100);
    let req = http::Request::put(format!("http://{addr}/items/7"))
        .header("content-type", "application/json")
        .body(body.clone())
        .unwrap();
    let resp = svc.oneshot(req).await.unwrap();
    assert_eq!(resp.status(), 200);
    let calls = seen.calls();
    assert_eq!(calls.len(), 3);
    for (method, received) in calls {
        assert_eq!(method, http::Method::PUT);
        assert_eq!(received, body.as_bytes());
    }
}

#[tokio::test]
async fn an_empty_client_is_wrapped_and_retried() {
    let (addr, seen) = server(&[503, 503]).await;
    let client: Client<HttpConnector, Empty<Bytes>> =
        Client::builder(TokioExecutor::new()).build_http();
    let svc = tower::ServiceBuilder::new()
        .layer(RetryLayer::new(policy()))
        .service(client);
    let req = http::Request::get(format!("http://{addr}/items"))
        .body(Empty::new())
        .unwrap();
    let resp = svc.oneshot(req).await.unwrap();
    assert_eq!(resp.status(), 200);
    let calls = seen.calls();
    assert_eq!(calls.len(), 3);
    assert!(calls
        .iter()
        .all(|(m, b)| m == http::Method::GET && b.is_empty()));
}

#[tokio::test]
async fn a_full_body_over_the_limit_is_sent_once() {
    // The default limit, 64 KiB: 70 KiB is sent once, and its first answer is the answer.
    let (addr, seen) = server(&[503, 503]).await;
    let client: Client<HttpConnector, Full<Bytes>> =
        Client::builder(TokioExecutor::new()).build_http();
    let mut svc = tower::ServiceBuilder::new()
        .layer(RetryLayer::new(policy()))
        .service(client.clone());
    let body = payload(70 * 1024);
    let req = http::Request::post(format!("http://{addr}/uploads"))
        .body(Full::new(body.clone()))
        .unwrap();
    let resp = svc.ready().await.unwrap().call(req).await.unwrap();
    assert_eq!(resp.status(), 503, "the first answer is the answer");
    assert_eq!(seen.calls().len(), 1);
    assert_eq!(seen.calls()[0].1, body, "sent whole, once");

    // A lower limit: a `String` body one byte over it is sent once; one at it exactly, replayed.
    for (body, status, calls) in [("seventeen bytes!!", 503, 1), ("sixteen bytes!!!", 200, 3)] {
        let (addr, seen) = server(&[503, 503]).await;
        let client: Client<HttpConnector, String> =
            Client::builder(TokioExecutor::new()).build_http();
        let svc = tower::ServiceBuilder::new()
            .layer(RetryLayer::new(policy()).with_body_limit(16))
            .service(client);
        let req = http::Request::post(format!("http://{addr}/notes"))
            .body(body.to_string())
            .unwrap();
        let resp = svc.oneshot(req).await.unwrap();
        assert_eq!(resp.status(), status, "{body}");
        assert_eq!(seen.calls().len(), calls, "{body}");
    }
}

/// A `Full<Bytes>` is cloned for each attempt, not recorded: every attempt's body hands out
/// the caller's own `Bytes`, the same memory, never a copy.
#[tokio::test(start_paused = true)]
async fn a_full_body_is_shared_not_copied() {
    let body = payload(4096);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let upstream = tower::service_fn(move |req: http::Request<Full<Bytes>>| {
        let record = record.clone();
        async move {
            let frame = req.into_body().frame().await.unwrap().unwrap();
            let data = frame.into_data().unwrap();
            let mut seen = record.lock().unwrap();
            seen.push((data.as_ptr() as usize, data.len()));
            let status = if seen.len() < 3 { 503 } else { 200 };
            Ok::<_, std::convert::Infallible>(
                http::Response::builder().status(status).body(()).unwrap(),
            )
        }
    });
    let svc = tower::ServiceBuilder::new()
        .layer(RetryLayer::new(policy()))
        .service(upstream);
    let req = http::Request::post("/orders")
        .body(Full::new(body.clone()))
        .unwrap();
    let resp = svc.oneshot(req).await.unwrap();
    assert_eq!(resp.status(), 200);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    for &(ptr, len) in seen.iter() {
        assert_eq!((ptr, len), (body.as_ptr() as usize, body.len()));
    }
}

/// What an in-process inner service saw of one attempt: the whole head (an extension never
/// crosses the wire, so no server could report it) and the body's bytes.
type Head = (
    http::Method,
    http::Uri,
    http::Version,
    http::HeaderMap,
    Option<&'static str>,
    Bytes,
);

/// `req` through `RetryLayer::new` around a service that records each attempt's head and body
/// and answers `503` twice, then `200`: what each of the three attempts carried.
async fn heads_of<B>(req: http::Request<B>) -> Vec<Head>
where
    B: retry_jitter::tower::body::ReplayBody,
    B::Error: std::fmt::Debug,
{
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let inner = tower::service_fn(move |req: http::Request<B>| {
        let log = log.clone();
        async move {
            let (head, body) = req.into_parts();
            let bytes = body.collect().await.unwrap().to_bytes();
            let ext = head.extensions.get::<&'static str>().copied();
            let mut log = log.lock().unwrap();
            log.push((
                head.method,
                head.uri,
                head.version,
                head.headers,
                ext,
                bytes,
            ));
            let status = if log.len() < 3 { 503 } else { 200 };
            Ok::<_, std::convert::Infallible>(
                http::Response::builder().status(status).body(()).unwrap(),
            )
        }
    });
    let svc = tower::ServiceBuilder::new()
        .layer(RetryLayer::new(policy()).idempotent())
        .service(inner);
    assert_eq!(svc.oneshot(req).await.unwrap().status(), 200);
    let heads = seen.lock().unwrap().clone();
    heads
}

/// A request with every part of its head set to something other than its default.
fn full_head<B>(body: B) -> http::Request<B> {
    let mut req = http::Request::put("http://orders.internal/orders/7?dry=no")
        .version(http::Version::HTTP_2)
        .header("x-trace", "a1")
        .header("content-type", "application/json")
        .body(body)
        .unwrap();
    req.extensions_mut().insert("tenant-9");
    req
}

#[tokio::test]
async fn every_attempt_carries_the_first_attempts_whole_head_for_both_ways_of_keeping_a_body() {
    let body = payload(3_000);
    let cloned = heads_of(full_head(Full::new(body.clone()))).await;
    let recorded = heads_of(full_head(Full::new(body.clone()).boxed_unsync())).await;
    for heads in [cloned, recorded] {
        assert_eq!(heads.len(), 3, "503 twice, then 200");
        let (method, uri, version, headers, ext, bytes) = &heads[0];
        assert_eq!(method, http::Method::PUT);
        assert_eq!(uri, "http://orders.internal/orders/7?dry=no");
        assert_eq!(*version, http::Version::HTTP_2);
        assert_eq!(headers["x-trace"], "a1");
        assert_eq!(*ext, Some("tenant-9"), "extensions are kept");
        assert_eq!(bytes, &body);
        assert!(heads.iter().all(|h| h == &heads[0]), "{heads:?}");
    }
}

/// A body of frames with no known end (`is_end_stream` is the default, `false`), as a stream's
/// is.
struct Frames(VecDeque<http_body::Frame<Bytes>>);

impl http_body::Body for Frames {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, std::io::Error>>> {
        std::task::Poll::Ready(self.0.pop_front().map(Ok))
    }
}

#[tokio::test(start_paused = true)]
async fn a_retry_carries_the_trailers_of_a_body_its_first_attempt_sent_whole() {
    // The first attempt's transport reads the body through its trailers and drops it without
    // polling for its end (as HTTP/2 does: the trailers carry END_STREAM), then its connection
    // resets. The retry sends the same data and the same trailers.
    type Body = http_body_util::combinators::UnsyncBoxBody<Bytes, std::io::Error>;
    let received = Arc::new(Mutex::new(Vec::new()));
    let seen = received.clone();
    let sent = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let upstream = tower::service_fn(move |req: http::Request<Body>| {
        let first = sent.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0;
        let seen = seen.clone();
        async move {
            let mut body = req.into_body();
            if first {
                while let Some(frame) = body.frame().await {
                    if frame.unwrap().is_trailers() {
                        break;
                    }
                }
                drop(body);
                let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
                return Err::<http::Response<()>, retry_jitter::tower::BoxError>(reset.into());
            }
            let whole = body.collect().await.unwrap();
            let trailers = whole.trailers().cloned();
            seen.lock().unwrap().push((whole.to_bytes(), trailers));
            Ok(http::Response::new(()))
        }
    });
    let svc = tower::ServiceBuilder::new()
        .layer(RetryLayer::new(Policy::new().with_attempts(3)))
        .service(upstream);
    let mut trailers = http::HeaderMap::new();
    trailers.insert("x-checksum", http::HeaderValue::from_static("abc"));
    let frames = VecDeque::from([
        http_body::Frame::data(Bytes::from("abc")),
        http_body::Frame::trailers(trailers.clone()),
    ]);
    let req = http::Request::put("/orders/7")
        .body(Body::new(Frames(frames)))
        .unwrap();
    let resp = svc.oneshot(req).await.unwrap();
    assert_eq!(resp.status(), 200);
    let received = received.lock().unwrap();
    assert_eq!(*received, [(Bytes::from("abc"), Some(trailers))]);
}
