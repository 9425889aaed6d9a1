//! The retry loop as client middleware, against real servers on loopback: hyper's client
//! through `RetryLayer` to an axum upstream, a tonic client over a `Channel` through
//! `RetryLayer` to a real tonic server (a hand-written service and codec: no protoc), and
//! reqwest-middleware's client through `RetryMiddleware`.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::loopback;
use crate::scripted;
use scripted::upstream;

use axum::extract::State;
use axum::routing::any;
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use retry_jitter::tower::RetryLayer;
use retry_jitter::Policy;
use tower::ServiceExt;

/// A policy with waits short enough for a test, and long caps for `Retry-After: 1`.
fn quick() -> Policy {
    Policy::new()
        .with_attempts(3)
        .with_base(Duration::from_millis(5))
        .with_cap(Duration::from_secs(5))
}

mod tower_hyper {
    use super::*;
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;

    type Body = BoxBody<Bytes, std::io::Error>;

    fn full(bytes: impl Into<Bytes>) -> Body {
        Full::new(bytes.into())
            .map_err(|never| match never {})
            .boxed()
    }

    /// A body of `chunks`, of no known size (a stream): the layer learns its size only by
    /// sending it.
    struct Chunks(VecDeque<Bytes>);

    impl http_body::Body for Chunks {
        type Data = Bytes;
        type Error = std::io::Error;
        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<http_body::Frame<Bytes>, std::io::Error>>> {
            Poll::Ready(self.0.pop_front().map(|c| Ok(http_body::Frame::data(c))))
        }
    }

    async fn send(
        addr: SocketAddr,
        layer: RetryLayer,
        body: Body,
    ) -> http::Response<hyper::body::Incoming> {
        let client = Client::builder(TokioExecutor::new()).build_http::<Body>();
        let svc = tower::ServiceBuilder::new().layer(layer).service(client);
        let req = http::Request::post(format!("http://{addr}/orders"))
            .body(body)
            .unwrap();
        svc.oneshot(req).await.unwrap()
    }

    #[tokio::test]
    async fn a_post_is_retried_with_its_body_byte_exact() {
        let (addr, up) = upstream(&[(503, None), (503, None)]).await;
        let payload: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
        let resp = send(addr, RetryLayer::new(quick()), full(payload.clone())).await;
        assert_eq!(resp.status(), 200);
        assert_eq!(up.calls(), 3);
        for body in up.bodies.lock().unwrap().iter() {
            assert_eq!(body.as_ref(), payload.as_slice());
        }
        let echoed = resp.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(echoed.as_ref(), payload.as_slice());
    }

    #[tokio::test]
    async fn a_streamed_body_is_recorded_while_sent_and_replayed() {
        let (addr, up) = upstream(&[(503, None)]).await;
        let chunks: VecDeque<Bytes> = (0..8u8).map(|i| Bytes::from(vec![i; 1000])).collect();
        let expected: Vec<u8> = chunks.iter().flat_map(|c| c.to_vec()).collect();
        let resp = send(addr, RetryLayer::new(quick()), Chunks(chunks).boxed()).await;
        assert_eq!(resp.status(), 200);
        assert_eq!(up.calls(), 2);
        for body in up.bodies.lock().unwrap().iter() {
            assert_eq!(body.as_ref(), expected.as_slice());
        }
    }

    #[tokio::test]
    async fn a_body_over_the_limit_is_sent_once() {
        // 70 KiB, known size: never buffered.
        let (addr, up) = upstream(&[(503, None), (503, None)]).await;
        let resp = send(addr, RetryLayer::new(quick()), full(vec![7u8; 70 * 1024])).await;
        assert_eq!(resp.status(), 503, "the first answer is the answer");
        assert_eq!(up.calls(), 1);
        assert_eq!(up.bodies.lock().unwrap()[0].len(), 70 * 1024);

        // 70 KiB streamed, size unknown: goes over the limit while it is sent.
        let (addr, up) = upstream(&[(503, None), (503, None)]).await;
        let chunks = (0..10).map(|_| Bytes::from(vec![7u8; 7 * 1024])).collect();
        let resp = send(addr, RetryLayer::new(quick()), Chunks(chunks).boxed()).await;
        assert_eq!(resp.status(), 503);
        assert_eq!(up.calls(), 1);
        assert_eq!(up.bodies.lock().unwrap()[0].len(), 70 * 1024);
    }

    #[tokio::test]
    async fn with_body_limit_raises_the_limit() {
        let (addr, up) = upstream(&[(503, None)]).await;
        let layer = RetryLayer::new(quick()).with_body_limit(128 * 1024);
        let resp = send(addr, layer, full(vec![7u8; 70 * 1024])).await;
        assert_eq!(resp.status(), 200);
        assert_eq!(up.calls(), 2);
    }

    #[tokio::test]
    async fn retry_after_is_waited() {
        let (addr, up) = upstream(&[(503, Some("1"))]).await;
        let started = Instant::now();
        let resp = send(addr, RetryLayer::new(quick()), full("x")).await;
        assert_eq!(resp.status(), 200);
        assert_eq!(up.calls(), 2);
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
    }

    #[tokio::test]
    async fn a_retry_after_beyond_the_cap_stops_at_once() {
        // `Retry-After: 3600` against a cap of 5 s: no wait that long, no retry, no sleep.
        let (addr, up) = upstream(&[(503, Some("3600"))]).await;
        let started = Instant::now();
        let resp = send(addr, RetryLayer::new(quick()), full("x")).await;
        assert_eq!((resp.status().as_u16(), up.calls()), (503, 1));
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
    }

    #[tokio::test]
    async fn a_404_is_the_answer() {
        let (addr, up) = upstream(&[(404, None)]).await;
        let resp = send(addr, RetryLayer::new(quick()), full("x")).await;
        assert_eq!((resp.status().as_u16(), up.calls()), (404, 1));
    }

    #[tokio::test]
    async fn a_refused_connection_is_retried_then_returned() {
        // A port nothing listens on.
        let addr = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let calls = Arc::new(AtomicU32::new(0));
        let seen = calls.clone();
        let layer = RetryLayer::new(quick()).on(move |e: &retry_jitter::tower::BoxError| {
            seen.fetch_add(1, Ordering::SeqCst);
            retry_jitter::hooks::Classify::classify(&retry_jitter::tower::TransportErrors, e)
        });
        let client = Client::builder(TokioExecutor::new()).build_http::<Body>();
        let svc = tower::ServiceBuilder::new().layer(layer).service(client);
        let req = http::Request::post(format!("http://{addr}/"))
            .body(full("x"))
            .unwrap();
        assert!(svc.oneshot(req).await.is_err());
        assert_eq!(
            calls.load(Ordering::SeqCst),
            3,
            "each refusal classified, retried"
        );
    }
}

use crate::grpc_raw;

mod grpc {
    use super::grpc_raw::Raw;
    use super::*;
    use tonic::transport::Channel;
    use tonic::{Code, Status};

    /// A tonic server failing with the scripted statuses, then echoing: its address and its
    /// count of calls.
    async fn server(script: Vec<Status>) -> (SocketAddr, Arc<AtomicU32>) {
        let calls = Arc::new(AtomicU32::new(0));
        let counted = calls.clone();
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        let addr = super::grpc_raw::serve(move |req: tonic::Request<Bytes>| {
            counted.fetch_add(1, Ordering::SeqCst);
            let next = script.lock().unwrap().pop_front();
            async move {
                match next {
                    Some(status) => Err(status),
                    None => Ok(tonic::Response::new(req.into_inner())),
                }
            }
        })
        .await;
        (addr, calls)
    }

    async fn call(addr: SocketAddr, message: &'static str) -> Result<Bytes, Status> {
        let channel = Channel::from_shared(format!("http://{addr}"))
            .unwrap()
            .connect()
            .await
            .unwrap();
        let svc = tower::ServiceBuilder::new()
            .layer(RetryLayer::new(quick()).with_name("flaky"))
            .service(channel);
        let mut client = tonic::client::Grpc::new(svc);
        client.ready().await.unwrap();
        let path = http::uri::PathAndQuery::from_static("/test.Svc/Echo");
        let resp = client
            .unary(tonic::Request::new(Bytes::from(message)), path, Raw)
            .await?;
        Ok(resp.into_inner())
    }

    #[tokio::test]
    async fn unavailable_twice_then_ok() {
        let (addr, calls) = server(vec![
            Status::unavailable("restarting"),
            Status::unavailable("restarting"),
        ])
        .await;
        assert_eq!(call(addr, "hello").await.unwrap(), "hello");
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn resource_exhausted_waits_the_pushback() {
        let mut slow_down = Status::resource_exhausted("quota");
        slow_down
            .metadata_mut()
            .insert("grpc-retry-pushback-ms", "1000".parse().unwrap());
        let (addr, calls) = server(vec![slow_down]).await;
        let started = Instant::now();
        assert_eq!(call(addr, "again").await.unwrap(), "again");
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_negative_pushback_stops() {
        let mut stop = Status::resource_exhausted("quota");
        stop.metadata_mut()
            .insert("grpc-retry-pushback-ms", "-1".parse().unwrap());
        let (addr, calls) = server(vec![stop]).await;
        assert_eq!(
            call(addr, "x").await.unwrap_err().code(),
            Code::ResourceExhausted
        );
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn invalid_argument_is_tried_once() {
        let (addr, calls) = server(vec![Status::invalid_argument("no name")]).await;
        let err = call(addr, "x").await.unwrap_err();
        assert_eq!(
            (err.code(), err.message()),
            (Code::InvalidArgument, "no name")
        );
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}

mod reqwest_mw {
    use super::*;
    use reqwest_middleware::{ClientBuilder, ClientWithMiddleware};
    use retry_jitter::reqwest_middleware::RetryMiddleware;

    fn client(m: RetryMiddleware) -> ClientWithMiddleware {
        ClientBuilder::new(reqwest::Client::new()).with(m).build()
    }

    #[tokio::test]
    async fn a_post_is_retried_with_its_body() {
        let (addr, up) = upstream(&[(503, None), (503, None)]).await;
        let resp = client(RetryMiddleware::new(quick()))
            .post(format!("http://{addr}/orders"))
            .body("one order")
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.text().await.unwrap(), "one order");
        assert_eq!(up.calls(), 3);
        assert!(up.bodies.lock().unwrap().iter().all(|b| b == "one order"));
    }

    /// A `GET` through `RetryMiddleware::new(quick())` to an upstream answering `script`: the
    /// status it returned, the calls the upstream got, and how long it took.
    async fn get(script: &[(u16, Option<&'static str>)]) -> (u16, usize, Duration) {
        let (addr, up) = upstream(script).await;
        let started = Instant::now();
        let resp = client(RetryMiddleware::new(quick()))
            .get(format!("http://{addr}/stock"))
            .send()
            .await
            .unwrap();
        (resp.status().as_u16(), up.calls(), started.elapsed())
    }

    #[tokio::test]
    async fn retry_after_is_honoured() {
        let (status, calls, took) = get(&[(429, Some("1"))]).await;
        assert_eq!((status, calls), (200, 2));
        assert!(took >= Duration::from_secs(1), "{took:?}");
    }

    #[tokio::test]
    async fn a_retry_after_beyond_the_cap_stops_at_once() {
        let (status, calls, took) = get(&[(503, Some("3600"))]).await;
        assert_eq!((status, calls), (503, 1));
        assert!(took < Duration::from_secs(1), "{took:?}");
    }

    #[tokio::test]
    async fn a_404_is_tried_once() {
        let (status, calls, _) = get(&[(404, None)]).await;
        assert_eq!((status, calls), (404, 1));
    }

    #[tokio::test]
    async fn a_streaming_body_is_sent_once() {
        let (addr, up) = upstream(&[(503, None), (503, None)]).await;
        let body = reqwest::Body::wrap(Full::new(Bytes::from("streamed")));
        let resp = client(RetryMiddleware::new(quick()))
            .post(format!("http://{addr}/upload"))
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!((resp.status().as_u16(), up.calls()), (503, 1));
        assert_eq!(up.bodies.lock().unwrap()[0], "streamed");
    }
}

/// The loop's other keys through the layer: a budget, a timeout, a hedge (no network: a
/// `service_fn`, on tokio's paused clock).
mod layer_keys {
    use super::*;
    use retry_jitter::hedge::Hedge;
    use retry_jitter::tower::BoxError;
    use retry_jitter::RetryBudget;

    /// A service whose n-th call (from 0) sleeps `slow(n)`, then answers `n`.
    fn sleepy(
        slow: fn(u32) -> Duration,
    ) -> (
        Arc<AtomicU32>,
        impl tower::Service<u32, Response = u32, Error = BoxError, Future: Send> + Clone + Send,
    ) {
        let calls = Arc::new(AtomicU32::new(0));
        let seen = calls.clone();
        let svc = tower::service_fn(move |_: u32| {
            let n = seen.fetch_add(1, Ordering::SeqCst);
            async move {
                tokio::time::sleep(slow(n)).await;
                if n == 0 {
                    Err::<u32, BoxError>(
                        std::io::Error::from(std::io::ErrorKind::ConnectionReset).into(),
                    )
                } else {
                    Ok(n)
                }
            }
        });
        (calls, svc)
    }

    #[tokio::test(start_paused = true)]
    async fn an_empty_budget_sends_once() {
        static EMPTY: RetryBudget = RetryBudget::new(0);
        let (calls, svc) = sleepy(|_| Duration::ZERO);
        let layer = RetryLayer::new(quick()).clone_requests().budget(&EMPTY);
        let svc = tower::ServiceBuilder::new().layer(layer).service(svc);
        assert!(svc.oneshot(1).await.is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_budget_with_tokens_retries() {
        static BUDGET: RetryBudget = RetryBudget::new(500);
        let (calls, svc) = sleepy(|_| Duration::ZERO);
        let layer = RetryLayer::new(quick()).clone_requests().budget(&BUDGET);
        let svc = tower::ServiceBuilder::new().layer(layer).service(svc);
        assert_eq!(svc.oneshot(1).await.unwrap(), 1);
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_timeout_cuts_a_slow_attempt() {
        // The first call would take a minute and then fail; the second answers at once.
        let (calls, svc) = sleepy(|n| {
            if n == 0 {
                Duration::from_secs(60)
            } else {
                Duration::ZERO
            }
        });
        let layer = RetryLayer::new(quick())
            .clone_requests()
            .timeout(Duration::from_millis(100));
        let svc = tower::ServiceBuilder::new().layer(layer).service(svc);
        let started = tokio::time::Instant::now();
        assert_eq!(svc.oneshot(1).await.unwrap(), 1);
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert!(started.elapsed() < Duration::from_secs(1));
    }

    #[tokio::test(start_paused = true)]
    async fn a_hedge_answers_beside_a_slow_first_attempt() {
        let (calls, svc) = sleepy(|n| {
            if n == 0 {
                Duration::from_secs(1)
            } else {
                Duration::from_millis(10)
            }
        });
        let layer = RetryLayer::new(quick())
            .clone_requests()
            .hedge(Hedge::After(Duration::from_millis(50)));
        let svc = tower::ServiceBuilder::new().layer(layer).service(svc);
        let started = tokio::time::Instant::now();
        assert_eq!(svc.oneshot(1).await.unwrap(), 1);
        assert_eq!(started.elapsed(), Duration::from_millis(60));
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn reqwest_middleware_budget_and_timeout() {
        use retry_jitter::reqwest_middleware::RetryMiddleware;
        static EMPTY: RetryBudget = RetryBudget::new(0);
        let (addr, up) = upstream(&[(503, None), (503, None)]).await;
        let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
            .with(
                RetryMiddleware::new(quick())
                    .budget(&EMPTY)
                    .timeout(Duration::from_secs(5))
                    .hedge(Hedge::After(Duration::from_secs(5))),
            )
            .build();
        let resp = client.get(format!("http://{addr}/b")).send().await.unwrap();
        assert_eq!((resp.status().as_u16(), up.calls()), (503, 1));
    }

    #[tokio::test]
    async fn reqwest_middleware_hedges_a_slow_first_attempt() {
        use retry_jitter::reqwest_middleware::RetryMiddleware;
        // A server whose first call takes 5 s and the others none, echoing the body; the
        // middleware hedges after 50 ms: a second call, with the body, answered long before the
        // first would have been.
        let calls = Arc::new(AtomicU32::new(0));
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let state = (calls.clone(), bodies.clone());
        type Seen = (Arc<AtomicU32>, Arc<Mutex<Vec<Bytes>>>);
        let echo = |State((calls, bodies)): State<Seen>, body: Bytes| async move {
            bodies.lock().unwrap().push(body.clone());
            if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                tokio::time::sleep(Duration::from_secs(5)).await;
            }
            body
        };
        let app = axum::Router::new()
            .route("/{*path}", any(echo))
            .with_state(state);
        let addr = loopback::serve(app).await;
        let started = Instant::now();
        let hedged = RetryMiddleware::new(quick()).hedge(Hedge::After(Duration::from_millis(50)));
        let resp = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
            .with(hedged)
            .build()
            .put(format!("http://{addr}/orders/7"))
            .body("one order")
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.text().await.unwrap(), "one order");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        // The hedge, and on a slow machine perhaps one more of the 3 attempts.
        let calls = calls.load(Ordering::SeqCst);
        assert!((2..=3).contains(&calls), "{calls} calls");
        assert!(bodies.lock().unwrap().iter().all(|b| b == "one order"));
    }
}

/// A hedge of an `http::Request` sends the recorded body, byte-exact, beside the first attempt.
#[tokio::test(start_paused = true)]
async fn a_hedge_replays_the_recorded_body() {
    use retry_jitter::hedge::Hedge;
    type Body = BoxBody<Bytes, Infallible>;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let bodies = seen.clone();
    let upstream = tower::service_fn(move |req: http::Request<Body>| {
        let bodies = bodies.clone();
        async move {
            let body = req.into_body().collect().await?.to_bytes();
            let first = {
                let mut b = bodies.lock().unwrap();
                b.push(body.clone());
                b.len() == 1
            };
            // The first attempt is slow; the hedge answers in 10 ms.
            let slow = if first { 1000 } else { 10 };
            tokio::time::sleep(Duration::from_millis(slow)).await;
            Ok::<_, Infallible>(http::Response::new(body))
        }
    });
    let layer = RetryLayer::new(quick()).hedge(Hedge::After(Duration::from_millis(50)));
    let svc = tower::ServiceBuilder::new().layer(layer).service(upstream);
    let started = tokio::time::Instant::now();
    // A PUT: a POST without a key is never hedged.
    let req = http::Request::put("/")
        .body(Full::from("hedged").boxed())
        .unwrap();
    let resp = svc.oneshot(req).await.unwrap();
    assert_eq!(resp.body().as_ref(), b"hedged");
    assert_eq!(started.elapsed(), Duration::from_millis(60));
    assert_eq!(*seen.lock().unwrap(), vec![Bytes::from("hedged"); 2]);
}

/// `.clone_requests()` is for services that are not HTTP: every `Ok` is the answer, as in
/// tower's own `Retry`, so a service over any response type is wrapped with no other call, and
/// its errors are retried by the layer's `on`.
mod clone_requests {
    use super::*;
    use retry_jitter::hedge::Hedge;
    use retry_jitter::tower::BoxError;
    use retry_jitter::RetryBudget;

    /// A service over `u32` whose first two calls fail with a reset connection (an error the
    /// default `on` retries), then answer the request doubled.
    fn fails_twice() -> (
        Arc<AtomicU32>,
        impl tower::Service<u32, Response = u32, Error = BoxError, Future: Send> + Clone + Send,
    ) {
        let calls = Arc::new(AtomicU32::new(0));
        let seen = calls.clone();
        let svc = tower::service_fn(move |n: u32| {
            let call = seen.fetch_add(1, Ordering::SeqCst);
            async move {
                if call < 2 {
                    let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
                    Err::<u32, BoxError>(reset.into())
                } else {
                    Ok(n * 2)
                }
            }
        });
        (calls, svc)
    }

    #[tokio::test(start_paused = true)]
    async fn a_u32_service_is_retried_with_no_other_call() {
        let (calls, svc) = fails_twice();
        let layer = RetryLayer::new(Policy::default()).clone_requests();
        let svc = tower::ServiceBuilder::new().layer(layer).service(svc);
        assert_eq!(svc.oneshot(21).await.unwrap(), 42);
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn a_budgeted_u32_service_is_retried_with_no_other_call() {
        static BUDGET: RetryBudget = RetryBudget::new(500);
        let (calls, svc) = fails_twice();
        let layer = RetryLayer::new(Policy::default())
            .clone_requests()
            .budget(&BUDGET);
        let svc = tower::ServiceBuilder::new().layer(layer).service(svc);
        assert_eq!(svc.oneshot(21).await.unwrap(), 42);
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn a_hedged_u32_service_is_retried_with_no_other_call() {
        let (calls, svc) = fails_twice();
        let layer = RetryLayer::new(Policy::default())
            .clone_requests()
            .hedge(Hedge::After(Duration::from_millis(50)));
        let svc = tower::ServiceBuilder::new().layer(layer).service(svc);
        assert_eq!(svc.oneshot(21).await.unwrap(), 42);
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    /// tower's own retry tests (`tower/tests/retry`), ported: a service of `&str` requests and
    /// `&str` responses (standing in for tower-test's `Mock<&str, &str>`) answering `script` in
    /// order, each request it got recorded; tower's policy is the layer's `on` and attempts.
    fn mock(
        script: &[Result<&'static str, &'static str>],
    ) -> (
        Arc<Mutex<Vec<&'static str>>>,
        impl tower::Service<&'static str, Response = &'static str, Error = BoxError, Future: Send>
            + Clone
            + Send,
    ) {
        let got = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(script.iter().copied().collect::<VecDeque<_>>()));
        let seen = got.clone();
        let svc = tower::service_fn(move |req: &'static str| {
            seen.lock().unwrap().push(req);
            let answer = script
                .lock()
                .unwrap()
                .pop_front()
                .expect("a scripted answer");
            async move { answer.map_err(BoxError::from) }
        });
        (got, svc)
    }

    /// Attempts as tower's `Limit(n)` counts retries: `n` retries, `n + 1` attempts.
    fn limit(retries: u32) -> Policy {
        Policy::default().with_attempts(retries + 1)
    }

    #[tokio::test(start_paused = true)]
    async fn retry_errors() {
        let (got, svc) = mock(&[Err("retry me"), Ok("world")]);
        let layer = RetryLayer::new(limit(4))
            .clone_requests()
            .on(|_: &BoxError| true);
        let svc = tower::ServiceBuilder::new().layer(layer).service(svc);
        assert_eq!(svc.oneshot("hello").await.unwrap(), "world");
        assert_eq!(*got.lock().unwrap(), ["hello"; 2]);
    }

    #[tokio::test(start_paused = true)]
    async fn retry_limit() {
        let (got, svc) = mock(&[Err("retry 1"), Err("retry 2"), Err("retry 3")]);
        let layer = RetryLayer::new(limit(2))
            .clone_requests()
            .on(|_: &BoxError| true);
        let svc = tower::ServiceBuilder::new().layer(layer).service(svc);
        assert_eq!(
            svc.oneshot("hello").await.unwrap_err().to_string(),
            "retry 3"
        );
        assert_eq!(*got.lock().unwrap(), ["hello"; 3]);
    }

    #[tokio::test(start_paused = true)]
    async fn retry_error_inspection() {
        let (got, svc) = mock(&[Err("retry 1"), Err("reject")]);
        let layer = RetryLayer::new(limit(4))
            .clone_requests()
            .on(|e: &BoxError| e.to_string() != "reject");
        let svc = tower::ServiceBuilder::new().layer(layer).service(svc);
        assert_eq!(
            svc.oneshot("hello").await.unwrap_err().to_string(),
            "reject"
        );
        assert_eq!(*got.lock().unwrap(), ["hello"; 2]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_success_is_the_answer() {
        let (got, svc) = mock(&[Ok("world")]);
        let layer = RetryLayer::new(limit(4)).clone_requests();
        let svc = tower::ServiceBuilder::new().layer(layer).service(svc);
        assert_eq!(svc.oneshot("hello").await.unwrap(), "world");
        assert_eq!(*got.lock().unwrap(), ["hello"]);
    }

    /// An `http::Response` is an `Ok` like any other here: a `503` is the answer. (HTTP
    /// services take `.clone_bodies()`, below, or the bodies the layer replays.)
    #[tokio::test(start_paused = true)]
    async fn an_http_answer_is_not_read() {
        let (calls, upstream) = answers_503_then_200();
        let layer = RetryLayer::new(Policy::new().with_attempts(3)).clone_requests();
        let svc = tower::ServiceBuilder::new().layer(layer).service(upstream);
        let resp = svc.oneshot(http::Request::new(String::new())).await;
        assert_eq!(resp.unwrap().status(), 503);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}

/// An upstream of `http::Request<String>`s answering `503`, then `200`: its calls.
fn answers_503_then_200() -> (
    Arc<AtomicU32>,
    impl tower::Service<
            http::Request<String>,
            Response = http::Response<String>,
            Error = Infallible,
            Future: Send,
        > + Clone
        + Send,
) {
    let calls = Arc::new(AtomicU32::new(0));
    let counted = calls.clone();
    let upstream = tower::service_fn(move |_: http::Request<String>| {
        let n = counted.fetch_add(1, Ordering::SeqCst);
        async move {
            let status = if n == 0 { 503 } else { 200 };
            let resp = http::Response::builder().status(status).body(String::new());
            Ok::<_, Infallible>(resp.unwrap())
        }
    });
    (calls, upstream)
}

/// `.clone_bodies()` classifies an `http::Response` by its status, as `RetryLayer::new` does:
/// a `503` is retried, not returned after one call.
#[tokio::test(start_paused = true)]
async fn clone_bodies_classifies_http_responses_by_status() {
    let (calls, upstream) = answers_503_then_200();
    let layer = RetryLayer::new(Policy::new().with_attempts(3)).clone_bodies();
    let svc = tower::ServiceBuilder::new().layer(layer).service(upstream);
    let resp = svc.oneshot(http::Request::new(String::new())).await;
    assert_eq!(resp.unwrap().status(), 200);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

/// A call in flight is held in a user's own struct under its public name,
/// `ResponseFuture<RetryService<S>, Req>` (as tower's `Retry` future is named), and awaited
/// later: a `503` answered first, then the `200`, through the loop the future turns into.
#[tokio::test(start_paused = true)]
async fn a_call_in_flight_is_held_as_a_named_response_future() {
    use retry_jitter::tower::future::ResponseFuture;
    use retry_jitter::tower::RetryService;
    use tower::{Layer, Service};

    #[derive(Clone)]
    struct Echo(Arc<AtomicU32>);
    impl Service<http::Request<Full<Bytes>>> for Echo {
        type Response = http::Response<Full<Bytes>>;
        type Error = Infallible;
        type Future = std::future::Ready<Result<Self::Response, Infallible>>;
        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }
        fn call(&mut self, req: http::Request<Full<Bytes>>) -> Self::Future {
            let status = if self.0.fetch_add(1, Ordering::SeqCst) == 0 {
                503
            } else {
                200
            };
            let resp = http::Response::builder()
                .status(status)
                .body(req.into_body());
            std::future::ready(Ok(resp.unwrap()))
        }
    }
    struct Pending {
        call: ResponseFuture<RetryService<Echo>, http::Request<Full<Bytes>>>,
    }

    let calls = Arc::new(AtomicU32::new(0));
    let mut svc: RetryService<Echo> = RetryLayer::new(quick()).layer(Echo(calls.clone()));
    let req = http::Request::post("/orders").header("idempotency-key", "k1");
    let req = req.body(Full::from("one order")).unwrap();
    let pending = Pending {
        call: svc.ready().await.unwrap().call(req),
    };
    let resp = pending.call.await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.into_body().collect().await.unwrap().to_bytes(),
        "one order"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}
