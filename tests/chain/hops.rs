//! A chain of services (issue 30, points 1–4), against real servers on loopback that record
//! what each call carried: gRPC's attempt count on a retry (`grpc-previous-rpc-attempts`), a
//! tier that gave up answering "don't retry" upstream (`grpc-retry-pushback-ms: -1`,
//! `x-should-retry: false`) and one that did not leaving its answer as it is, and the caller's
//! deadline carried down a hop (`grpc-timeout`, `x-envoy-expected-rq-timeout-ms` or the name
//! `.deadline_header` gives) by `RetryLayer` over a tonic `Channel` and `RetryMiddleware` over
//! reqwest, inside the scope `ChainLayer` opens for a tonic or axum handler.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::loopback;

use crate::my_body;

use bytes::Bytes;
use http::{HeaderMap, HeaderName};
use retry_jitter::tower::{ChainLayer, RetryLayer};
use retry_jitter::Policy;

/// `attempts` attempts, waits of a few milliseconds.
fn quick(attempts: u32) -> Policy {
    Policy::new()
        .with_attempts(attempts)
        .with_base(Duration::from_millis(2))
        .with_cap(Duration::from_millis(10))
}

/// What a server got: when each call came and its headers, in order.
#[derive(Default)]
struct Seen(Mutex<Vec<(Instant, HeaderMap)>>);

impl Seen {
    fn record(&self, headers: &HeaderMap) {
        let call = (Instant::now(), headers.clone());
        self.0.lock().unwrap().push(call);
    }

    fn arrivals(&self) -> Vec<Instant> {
        self.0.lock().unwrap().iter().map(|&(at, _)| at).collect()
    }

    fn calls(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    /// The value of header `name` in each call (`None`: absent).
    fn values(&self, name: &str) -> Vec<Option<String>> {
        let calls = self.0.lock().unwrap();
        calls
            .iter()
            .map(|(_, h)| h.get(name).map(|v| v.to_str().unwrap().to_owned()))
            .collect()
    }

    /// The value of header `name` in each call, which every call carried, read by `parse`.
    fn all<T>(&self, name: &str, parse: impl Fn(&str) -> Option<T>) -> Vec<T> {
        self.values(name)
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                let v = v.unwrap_or_else(|| panic!("call {} carried no {name}", i + 1));
                parse(&v).unwrap_or_else(|| panic!("call {} carried {name}: {v:?}", i + 1))
            })
            .collect()
    }
}

/// `values` as [`Seen::values`] returns them.
fn owned(values: &[Option<&str>]) -> Vec<Option<String>> {
    values.iter().map(|v| v.map(str::to_owned)).collect()
}

/// The times left the calls carried: each in `(0, at_most]` (less than a millisecond left is
/// sent as 1, never 0, which Envoy reads as "no timeout"), and none later than the one before
/// (each attempt of one loop has as much time as the one before it, or less).
fn shrinking(lefts: &[Duration], at_most: Duration) {
    assert!(!lefts.is_empty());
    assert!(
        lefts.iter().all(|left| *left > Duration::ZERO),
        "a call was sent no time at all: {lefts:?}"
    );
    assert!(
        lefts[0] > Duration::ZERO && lefts[0] <= at_most,
        "the first call had {:?}, not in (0, {at_most:?}]: {lefts:?}",
        lefts[0]
    );
    assert!(
        lefts.windows(2).all(|w| w[1] <= w[0]),
        "a later attempt had more time: {lefts:?}"
    );
}

use crate::grpc_raw;

mod grpc {
    use super::*;
    use std::convert::Infallible;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use super::grpc_raw::Raw;
    use retry_jitter::Retry;
    use tonic::server::NamedService;
    use tonic::transport::{Channel, Server};
    use tonic::{Code, Request, Status};

    const PUSHBACK: &str = "grpc-retry-pushback-ms";

    type Answer = Pin<Box<dyn Future<Output = Result<Bytes, Status>> + Send>>;
    /// A unary handler: the request's message in, the answer out.
    type Handler = Arc<dyn Fn(Bytes) -> Answer + Send + Sync>;

    fn handler<F, Fut>(f: F) -> Handler
    where
        F: Fn(Bytes) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Bytes, Status>> + Send + 'static,
    {
        Arc::new(move |message| Box::pin(f(message)))
    }

    /// A handler answering `UNAVAILABLE` to every call, with no retry loop of its own.
    fn unavailable() -> Handler {
        handler(|_| async { Err(Status::unavailable("down")) })
    }

    /// The unary service `test.Chain/Call`: records each call's headers as they came off the
    /// wire, then runs its handler.
    #[derive(Clone)]
    struct Unary {
        seen: Arc<Seen>,
        handler: Handler,
    }

    impl NamedService for Unary {
        const NAME: &'static str = "test.Chain";
    }

    impl tower::Service<http::Request<tonic::body::Body>> for Unary {
        type Response = http::Response<tonic::body::Body>;
        type Error = Infallible;
        type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, req: http::Request<tonic::body::Body>) -> Self::Future {
            self.seen.record(req.headers());
            let handler = self.handler.clone();
            if req.uri().path() == "/test.Chain/Stream" {
                return Box::pin(async move {
                    let svc = tower::service_fn(move |req: Request<Bytes>| {
                        let message = req.into_inner();
                        let stream = ThenHandler {
                            first: Some(message.clone()),
                            rest: Some(handler(message)),
                        };
                        async move { Ok::<_, Status>(tonic::Response::new(stream)) }
                    });
                    Ok(tonic::server::Grpc::new(Raw)
                        .server_streaming(svc, req)
                        .await)
                });
            }
            Box::pin(async move {
                let svc = tower::service_fn(move |req: Request<Bytes>| {
                    let answer = handler(req.into_inner());
                    async move { answer.await.map(tonic::Response::new) }
                });
                Ok(tonic::server::Grpc::new(Raw).unary(svc, req).await)
            })
        }
    }

    /// The answer of `test.Chain/Stream`: the request's message, then the handler's answer,
    /// its future polled as the body is sent (after the answer's headers): a failure ends the
    /// stream, its status in the trailers.
    struct ThenHandler {
        first: Option<Bytes>,
        rest: Option<Answer>,
    }

    impl tonic::codegen::tokio_stream::Stream for ThenHandler {
        type Item = Result<Bytes, Status>;

        fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            if let Some(first) = self.first.take() {
                return Poll::Ready(Some(Ok(first)));
            }
            let Some(rest) = self.rest.as_mut() else {
                return Poll::Ready(None);
            };
            let answer = std::task::ready!(rest.as_mut().poll(cx));
            self.rest = None;
            Poll::Ready(Some(answer))
        }
    }

    /// A tonic server on loopback running `handler`, under `ChainLayer` when `chained`.
    async fn serve(handler: Handler, chained: bool) -> (SocketAddr, Arc<Seen>) {
        let seen = Arc::new(Seen::default());
        let svc = Unary {
            seen: seen.clone(),
            handler,
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let incoming = tonic::transport::server::TcpIncoming::from(listener);
        if chained {
            let mut server = Server::builder().layer(ChainLayer::new());
            tokio::spawn(server.add_service(svc).serve_with_incoming(incoming));
        } else {
            let mut server = Server::builder();
            tokio::spawn(server.add_service(svc).serve_with_incoming(incoming));
        }
        (addr, seen)
    }

    fn channel(addr: SocketAddr) -> Channel {
        Channel::from_shared(format!("http://{addr}"))
            .unwrap()
            .connect_lazy()
    }

    /// `channel` through a `RetryLayer` of `attempts` attempts.
    fn retrying(channel: Channel, attempts: u32) -> <RetryLayer as tower::Layer<Channel>>::Service {
        tower::Layer::layer(&RetryLayer::new(quick(attempts)), channel)
    }

    /// One call of `test.Chain/Call` through `svc`.
    async fn call<S>(svc: S, request: Request<Bytes>) -> Result<Bytes, Status>
    where
        S: tonic::client::GrpcService<tonic::body::Body>,
        S::ResponseBody: http_body::Body<Data = Bytes> + Send + 'static,
        <S::ResponseBody as http_body::Body>::Error: Into<retry_jitter::tower::BoxError>,
    {
        let mut client = tonic::client::Grpc::new(svc);
        client
            .ready()
            .await
            .map_err(|e| Status::unknown(e.into().to_string()))?;
        let path = http::uri::PathAndQuery::from_static("/test.Chain/Call");
        Ok(client.unary(request, path, Raw).await?.into_inner())
    }

    fn message(text: &'static str) -> Request<Bytes> {
        Request::new(Bytes::from_static(text.as_bytes()))
    }

    /// A `grpc-timeout` value (1 to 8 digits and a unit) as a duration.
    fn grpc_timeout(value: &str) -> Option<Duration> {
        let (digits, unit) = value.split_at(value.len().checked_sub(1)?);
        if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let n: u64 = digits.parse().ok()?;
        Some(match unit {
            "H" => Duration::from_secs(n * 3600),
            "M" => Duration::from_secs(n * 60),
            "S" => Duration::from_secs(n),
            "m" => Duration::from_millis(n),
            "u" => Duration::from_micros(n),
            "n" => Duration::from_nanos(n),
            _ => return None,
        })
    }

    /// Point 4 (gRPC's A6): a retry says how many attempts came before it; the first attempt
    /// says nothing, and outside every chain's scope no attempt carries a deadline.
    #[tokio::test]
    async fn a_grpc_retry_carries_the_number_of_attempts_before_it() {
        let (addr, seen) = serve(unavailable(), false).await;
        let err = call(retrying(channel(addr), 4), message("x"))
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::Unavailable);
        assert_eq!(
            seen.values("grpc-previous-rpc-attempts"),
            owned(&[None, Some("1"), Some("2"), Some("3")])
        );
        assert_eq!(seen.values("grpc-timeout"), owned(&[None; 4]));
    }

    /// A tier served under `ChainLayer` whose handler answers `UNAVAILABLE` after what its
    /// message says: `layer`, a `RetryLayer` loop of 3 attempts against `bottom` (which answers
    /// `UNAVAILABLE`) that gives up; `closure`, a `Retry` loop of 3 attempts that gives up;
    /// `exhausted` and `not found`, that loop, then `RESOURCE_EXHAUSTED` or `NOT_FOUND`;
    /// anything else, nothing (the tier's own failure).
    async fn tier_after_a_loop(bottom: SocketAddr) -> (SocketAddr, Arc<Seen>) {
        let down = channel(bottom);
        let tier = handler(move |m: Bytes| {
            let down = down.clone();
            async move {
                let answer = match &m[..] {
                    b"exhausted" => Status::resource_exhausted("this tier is out of capacity"),
                    b"not found" => Status::not_found("no such order"),
                    _ => Status::unavailable("this tier failed"),
                };
                match &m[..] {
                    b"layer" => {
                        let _ = call(retrying(down, 3), Request::new(m)).await;
                    }
                    b"closure" | b"exhausted" | b"not found" => {
                        let out: Result<(), &str> = Retry::new(quick(3))
                            .call_async(|| async { Err("down") })
                            .await;
                        assert!(out.is_err());
                    }
                    _ => {}
                }
                Err(answer)
            }
        });
        serve(tier, true).await
    }

    fn pushback(status: &Status) -> Option<&str> {
        status.metadata().get(PUSHBACK).map(|v| v.to_str().unwrap())
    }

    /// Point 3: a tier whose loop gave up (on attempts) forbids its caller's retries, whatever
    /// the loop's face, and a `RetryLayer` client obeys: one call at the tier, not four.
    #[tokio::test]
    async fn a_grpc_tier_whose_loop_gave_up_answers_pushback_minus_one() {
        let (bottom, at_bottom) = serve(unavailable(), false).await;
        let (tier, at_tier) = tier_after_a_loop(bottom).await;
        for (mode, bottom_calls) in [("layer", 3), ("closure", 3)] {
            let before = at_tier.calls();
            let err = call(retrying(channel(tier), 4), message(mode))
                .await
                .unwrap_err();
            assert_eq!(err.code(), Code::Unavailable, "{mode}");
            assert_eq!(pushback(&err), Some("-1"), "{mode}");
            assert_eq!(at_tier.calls() - before, 1, "{mode}: the client retried");
            assert_eq!(at_bottom.calls(), bottom_calls, "{mode}");
        }
    }

    /// After a loop gave up, a tier marks only an answer its caller would retry: a
    /// `RESOURCE_EXHAUSTED` gets pushback `-1` and is not retried, a `NOT_FOUND` is left as it
    /// is (and not retried either: the gRPC table does not retry it).
    #[tokio::test]
    async fn a_grpc_tier_marks_only_what_its_caller_would_retry() {
        let (bottom, _) = serve(unavailable(), false).await;
        let (tier, at_tier) = tier_after_a_loop(bottom).await;
        for (mode, code, said) in [
            ("exhausted", Code::ResourceExhausted, Some("-1")),
            ("not found", Code::NotFound, None),
        ] {
            let before = at_tier.calls();
            let err = call(retrying(channel(tier), 4), message(mode))
                .await
                .unwrap_err();
            assert_eq!((err.code(), pushback(&err)), (code, said), "{mode}");
            assert_eq!(at_tier.calls() - before, 1, "{mode}: the client retried");
        }
    }

    /// Point 3: the same tier failing on its own (no loop gave up) leaves its answer as it is,
    /// and its caller retries it.
    #[tokio::test]
    async fn a_grpc_tiers_own_failure_is_left_retryable() {
        let (bottom, at_bottom) = serve(unavailable(), false).await;
        let (tier, at_tier) = tier_after_a_loop(bottom).await;
        let err = call(retrying(channel(tier), 4), message("own"))
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::Unavailable);
        assert_eq!(pushback(&err), None);
        assert_eq!(at_tier.calls(), 4);
        assert_eq!(at_bottom.calls(), 0);
    }

    /// One call of `test.Chain/Stream` on a plain channel: the messages, then how the stream
    /// ended.
    async fn stream(addr: SocketAddr, request: Request<Bytes>) -> (Vec<Bytes>, Result<(), Status>) {
        let mut client = tonic::client::Grpc::new(channel(addr));
        client.ready().await.unwrap();
        let path = http::uri::PathAndQuery::from_static("/test.Chain/Stream");
        let mut stream = client
            .server_streaming(request, path, Raw)
            .await
            .unwrap()
            .into_inner();
        let mut messages = Vec::new();
        loop {
            match stream.message().await {
                Ok(Some(message)) => messages.push(message),
                Ok(None) => return (messages, Ok(())),
                Err(status) => return (messages, Err(status)),
            }
        }
    }

    /// Point 3 in the trailers: a streaming answer that already began (`200`, a message sent)
    /// when the tier's loop gives up, polled as the body is sent, ends with `UNAVAILABLE` and
    /// `grpc-retry-pushback-ms: -1` in its trailers; a stream the tier ends on its own failure
    /// carries no pushback.
    #[tokio::test]
    async fn a_grpc_stream_whose_loop_gave_up_carries_the_pushback_in_its_trailers() {
        let (bottom, at_bottom) = serve(unavailable(), false).await;
        let (tier, _) = tier_after_a_loop(bottom).await;
        for (mode, said) in [
            ("layer", Some("-1")),
            ("closure", Some("-1")),
            ("own", None),
        ] {
            let (messages, end) = stream(tier, message(mode)).await;
            assert_eq!(messages, [mode], "{mode}: the message before the failure");
            let status = end.unwrap_err();
            assert_eq!(status.code(), Code::Unavailable, "{mode}");
            assert_eq!(pushback(&status), said, "{mode}");
        }
        assert_eq!(at_bottom.calls(), 3, "the layer's loop, in the body");
    }

    /// A tier under `ChainLayer` relaying each call to `down` through a `RetryLayer` of 4
    /// attempts, answering a failure with a fresh status of its code (not the one it got,
    /// whose metadata would carry a pushback up by itself).
    async fn relay(down: SocketAddr) -> (SocketAddr, Arc<Seen>) {
        let down = channel(down);
        let relay = handler(move |m: Bytes| {
            let svc = retrying(down.clone(), 4);
            async move {
                let out = call(svc, Request::new(m)).await;
                out.map_err(|s| Status::new(s.code(), s.message().to_owned()))
            }
        });
        serve(relay, true).await
    }

    /// Point 3 across two hops: client → top → middle → bottom (`UNAVAILABLE`), each calling
    /// the next through a `RetryLayer` of 4 attempts. Only the middle tier retries (4 calls at
    /// the bottom, not 64): the top hears its "don't retry" and passes it on.
    #[tokio::test]
    async fn a_grpc_chain_of_three_retries_only_next_to_the_failure() {
        let (bottom, at_bottom) = serve(unavailable(), false).await;
        let (middle, at_middle) = relay(bottom).await;
        let (top, at_top) = relay(middle).await;
        let err = call(retrying(channel(top), 4), message("x"))
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::Unavailable);
        assert_eq!(pushback(&err), Some("-1"));
        let calls = (at_top.calls(), at_middle.calls(), at_bottom.calls());
        assert_eq!(calls, (1, 1, 4));
    }

    /// A tier under `ChainLayer` calling `bottom` through a `RetryLayer` of 4 attempts with a
    /// 5 s timeout each, and answering what it answers.
    async fn tier_calling(bottom: SocketAddr) -> (SocketAddr, Arc<Seen>) {
        let down = channel(bottom);
        let tier = handler(move |m: Bytes| {
            let layer = RetryLayer::new(quick(4)).timeout(Duration::from_secs(5));
            let svc = tower::Layer::layer(&layer, down.clone());
            async move { call(svc, Request::new(m)).await }
        });
        serve(tier, true).await
    }

    /// A server answering `UNAVAILABLE` to its first two calls, then echoing.
    async fn unavailable_twice() -> (SocketAddr, Arc<Seen>) {
        let calls = Arc::new(AtomicU32::new(0));
        let flaky = handler(move |m: Bytes| {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            async move {
                if n < 2 {
                    Err(Status::unavailable("restarting"))
                } else {
                    Ok(m)
                }
            }
        });
        serve(flaky, false).await
    }

    /// Point 2: a caller's `grpc-timeout` of 300 ms bounds what each attempt the tier sends
    /// down may take, though the tier's own timeout is 5 s: every attempt carries the time
    /// left of the 300, less and less.
    #[tokio::test]
    async fn a_grpc_callers_deadline_is_carried_down() {
        let (bottom, at_bottom) = unavailable_twice().await;
        let (tier, at_tier) = tier_calling(bottom).await;
        let mut req = message("deadline");
        req.set_timeout(Duration::from_millis(300));
        assert_eq!(call(channel(tier), req).await.unwrap(), "deadline");
        let theirs = at_tier.all("grpc-timeout", grpc_timeout);
        assert_eq!(theirs, [Duration::from_millis(300)], "what the tier got");
        let lefts = at_bottom.all("grpc-timeout", grpc_timeout);
        assert_eq!(lefts.len(), 3, "{lefts:?}");
        shrinking(&lefts, Duration::from_millis(300));
        assert!(lefts.iter().all(|&left| left > Duration::ZERO), "{lefts:?}");
    }

    /// Point 2, the other way round: a caller with no deadline leaves each attempt the tier's
    /// own timeout, 5 s (so the 300 ms above came from the caller).
    #[tokio::test]
    async fn a_grpc_caller_without_a_deadline_leaves_the_tiers_timeout() {
        let (bottom, at_bottom) = unavailable_twice().await;
        let (tier, _) = tier_calling(bottom).await;
        assert_eq!(call(channel(tier), message("none")).await.unwrap(), "none");
        let lefts = at_bottom.all("grpc-timeout", grpc_timeout);
        assert_eq!(lefts.len(), 3, "{lefts:?}");
        for left in lefts {
            assert!(
                left > Duration::from_secs(4) && left <= Duration::from_secs(5),
                "{left:?}"
            );
        }
    }
}

mod http_hops {
    use super::*;
    use axum::extract::State;
    use axum::http::StatusCode;
    use axum::routing::any;
    use hyper::body::Incoming;
    use hyper_util::client::legacy::connect::HttpConnector;
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;
    use my_body::MyBody;
    use reqwest_middleware::{ClientBuilder, ClientWithMiddleware};
    use retry_jitter::reqwest_middleware::RetryMiddleware;

    const ENVOY: &str = "x-envoy-expected-rq-timeout-ms";
    const RENAMED: &str = "x-deadline-ms";
    const ATTEMPT: &str = "x-attempt";

    fn millis(value: &str) -> Option<Duration> {
        value.parse().ok().map(Duration::from_millis)
    }

    /// An axum server on loopback answering every call `503`, recording its headers.
    async fn downstream() -> (String, Arc<Seen>) {
        slow_downstream(Duration::ZERO).await
    }

    /// [`downstream`], answering each call `delay` after it came.
    async fn slow_downstream(delay: Duration) -> (String, Arc<Seen>) {
        let seen = Arc::new(Seen::default());
        let answer = move |State(seen): State<Arc<Seen>>, headers: HeaderMap| async move {
            seen.record(&headers);
            tokio::time::sleep(delay).await;
            StatusCode::SERVICE_UNAVAILABLE
        };
        let app = axum::Router::new()
            .route("/{*path}", any(answer))
            .with_state(seen.clone());
        let addr = loopback::serve(app).await;
        (format!("http://{addr}/down"), seen)
    }

    /// Headers a handler's own request carries.
    type Carried = &'static [(&'static str, &'static str)];

    type TierState = (ClientWithMiddleware, String, Arc<Seen>, Carried);

    /// A tier served under `layer` whose handler calls `url` through `client` and answers
    /// with the status it got (and none of its headers), recording the headers of its calls.
    async fn tier(
        layer: ChainLayer,
        client: ClientWithMiddleware,
        url: String,
    ) -> (String, Arc<Seen>) {
        tier_sending(layer, client, url, &[]).await
    }

    /// [`tier`], its handler's request carrying `carried`.
    async fn tier_sending(
        layer: ChainLayer,
        client: ClientWithMiddleware,
        url: String,
        carried: Carried,
    ) -> (String, Arc<Seen>) {
        let seen = Arc::new(Seen::default());
        let call_down = |State((client, url, seen, carried)): State<TierState>,
                         headers: HeaderMap| async move {
            seen.record(&headers);
            let mut req = client.get(url);
            for &(name, value) in carried {
                req = req.header(name, value);
            }
            match req.send().await {
                Ok(resp) => resp.status(),
                Err(_) => StatusCode::BAD_GATEWAY,
            }
        };
        let app = axum::Router::new()
            .route("/{*path}", any(call_down))
            .with_state((client, url, seen.clone(), carried))
            .layer(layer);
        let addr = loopback::serve(app).await;
        (format!("http://{addr}/tier"), seen)
    }

    fn client(middleware: impl reqwest_middleware::Middleware) -> ClientWithMiddleware {
        ClientBuilder::new(reqwest::Client::new())
            .with(middleware)
            .build()
    }

    /// Four attempts, each numbered in `x-attempt`.
    fn numbered() -> RetryMiddleware {
        RetryMiddleware::new(quick(4)).attempt_header(HeaderName::from_static(ATTEMPT))
    }

    /// A call of the tier at `url` carrying `headers`: its status and `x-should-retry`.
    async fn call_tier(
        url: &str,
        headers: &[(&'static str, &'static str)],
    ) -> (u16, Option<String>) {
        let mut req = reqwest::Client::new().get(url);
        for &(name, value) in headers {
            req = req.header(name, value);
        }
        let resp = req.send().await.unwrap();
        let said = resp
            .headers()
            .get("x-should-retry")
            .map(|v| v.to_str().unwrap().to_owned());
        (resp.status().as_u16(), said)
    }

    fn one_to_four() -> Vec<Option<String>> {
        owned(&[Some("1"), Some("2"), Some("3"), Some("4")])
    }

    /// Points 2 and 4 over HTTP: inside the scope of a request carrying Envoy's 300 ms, each
    /// attempt `RetryMiddleware` sends down carries its number and the time left of the 300,
    /// less and less; the tier, whose loop gave up, answers "don't retry".
    #[tokio::test]
    async fn an_http_attempt_inside_a_scope_carries_its_number_and_the_callers_time_left() {
        let (down, seen) = downstream().await;
        let (tier, _) = tier(ChainLayer::new(), client(numbered()), down).await;
        let answer = call_tier(&tier, &[(ENVOY, "300")]).await;
        assert_eq!(answer, (503, Some("false".to_owned())));
        assert_eq!(seen.values(ATTEMPT), one_to_four());
        shrinking(&seen.all(ENVOY, millis), Duration::from_millis(300));
    }

    /// The time an attempt carries is the smallest of its caller's, its loop's deadline and
    /// its own `timeout`: under a caller with 300 ms, a loop with a `max_elapsed` of 100 ms
    /// sends no more than 100, and one whose attempts have 60 ms each no more than 60.
    #[tokio::test]
    async fn an_http_attempt_carries_the_least_of_the_callers_time_its_deadline_and_its_timeout() {
        let (down, seen) = downstream().await;
        let own = RetryMiddleware::new(quick(4).with_max_elapsed(Duration::from_millis(100)));
        let (bounded, _) = tier(ChainLayer::new(), client(own), down).await;
        call_tier(&bounded, &[(ENVOY, "300")]).await;
        shrinking(&seen.all(ENVOY, millis), Duration::from_millis(100));

        let (down, seen) = downstream().await;
        let cut = RetryMiddleware::new(quick(4)).timeout(Duration::from_millis(60));
        let (cut_short, _) = tier(ChainLayer::new(), client(cut), down).await;
        call_tier(&cut_short, &[(ENVOY, "300")]).await;
        let lefts = seen.all(ENVOY, millis);
        assert_eq!(lefts.len(), 4);
        shrinking(&lefts, Duration::from_millis(60));
    }

    /// Points 2 and 3 across two hops: client → top → middle → downstream (`503`), each calling
    /// the next through a `RetryMiddleware` of 4 attempts, the client's request carrying
    /// Envoy's 300 ms. Only the middle tier retries (4 calls downstream, not 64), and the
    /// deadline reaches the bottom: each hop carries no more than the hop above it got.
    #[tokio::test]
    async fn an_http_chain_of_three_retries_next_to_the_failure_within_the_callers_deadline() {
        let (down, at_bottom) = downstream().await;
        let (middle, at_middle) = tier(ChainLayer::new(), client(numbered()), down).await;
        let (top, at_top) = tier(ChainLayer::new(), client(numbered()), middle).await;
        let resp = client(numbered())
            .get(top)
            .header(ENVOY, "300")
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 503);
        assert_eq!(resp.headers()["x-should-retry"], "false");
        let calls = (at_top.calls(), at_middle.calls(), at_bottom.calls());
        assert_eq!(calls, (1, 1, 4));
        assert_eq!(at_top.values(ENVOY), owned(&[Some("300")]));
        let middle_had = at_middle.all(ENVOY, millis);
        shrinking(&middle_had, Duration::from_millis(300));
        shrinking(&at_bottom.all(ENVOY, millis), middle_had[0]);
    }

    /// Point 2, the deadline kept: inside the scope of a request carrying 300 ms, a loop of 50
    /// attempts against a downstream taking 50 ms each (2.5 s in all) starts none after the
    /// deadline (each came before it, plus a margin for the hop), ends near it
    /// (`GiveUpReason::Elapsed`, far short of its 50 attempts), and the tier answers "don't
    /// retry" soon after it.
    ///
    /// On the real clock (real sockets: tokio's paused clock jumps to the next timer while a
    /// loopback hop is in flight), so each bound is one a loaded machine keeps: exact where
    /// the loop's own arithmetic gives it (no more than 7 attempts of 50 ms in 300 ms; no
    /// answer before 290 ms, as a loop whose waits are at most 10 ms gives up only when the
    /// next would end past the deadline), generous where a hop's time counts. The exact times
    /// are `tests/chain/chain.rs`'s, on the paused clock.
    #[tokio::test]
    async fn no_http_attempt_starts_after_the_callers_deadline() {
        let (down, seen) = slow_downstream(Duration::from_millis(50)).await;
        let middleware = RetryMiddleware::new(quick(50));
        let (tier, at_tier) = tier(ChainLayer::new(), client(middleware), down).await;
        let sent = Instant::now();
        let answer = call_tier(&tier, &[(ENVOY, "300")]).await;
        let took = sent.elapsed();
        assert_eq!(answer, (503, Some("false".to_owned())));
        // The tier's deadline is 300 ms from its scope, made before its handler began.
        let deadline = at_tier.arrivals()[0] + Duration::from_millis(300);
        // One hop, tier to downstream, on a loaded machine.
        let margin = Duration::from_secs(1);
        let arrivals = seen.arrivals();
        assert!(
            (1..=7).contains(&arrivals.len()),
            "{} attempts in 300 ms of 50 ms each",
            arrivals.len()
        );
        for (i, at) in arrivals.iter().enumerate() {
            assert!(
                *at <= deadline + margin,
                "attempt {} came {:?} after the deadline",
                i + 1,
                *at - deadline
            );
        }
        shrinking(&seen.all(ENVOY, millis), Duration::from_millis(300));
        // The last attempt (not cut: no timeout) ends about 50 ms past the deadline; the 50
        // attempts would have taken 2.5 s.
        assert!(
            took >= Duration::from_millis(290) && took < Duration::from_secs(2),
            "answered after {took:?}"
        );
    }

    /// Point 2, an attempt cut: the tier's 5 s `timeout` is cut to the 300 ms its caller has
    /// left, so an attempt at a downstream taking 2 s ends at the deadline, and with it the
    /// loop (it was the deadline, not the timeout): one call, and the tier answers well
    /// within the 2 s, "don't retry".
    #[tokio::test]
    async fn an_http_attempts_timeout_is_cut_to_the_callers_deadline() {
        let (down, seen) = slow_downstream(Duration::from_secs(2)).await;
        let middleware = RetryMiddleware::new(quick(4)).timeout(Duration::from_secs(5));
        let (tier, _) = tier(ChainLayer::new(), client(middleware), down).await;
        let sent = Instant::now();
        let answer = call_tier(&tier, &[(ENVOY, "300")]).await;
        let took = sent.elapsed();
        assert_eq!(answer, (502, Some("false".to_owned())));
        assert_eq!(seen.calls(), 1);
        assert!(
            took >= Duration::from_millis(250) && took < Duration::from_secs(1),
            "answered after {took:?}"
        );
    }

    /// A tier served under `layer` whose handler calls `url` through hyper's client under
    /// `retry`, and answers with the status it got.
    async fn hyper_tier(layer: ChainLayer, retry: RetryLayer, url: String) -> String {
        hyper_tier_carrying(layer, retry, url, &[]).await
    }

    /// [`hyper_tier`], its calls carrying the headers `carried`.
    async fn hyper_tier_carrying(
        layer: ChainLayer,
        retry: RetryLayer,
        url: String,
        carried: Carried,
    ) -> String {
        use http_body_util::{combinators::BoxBody, BodyExt, Full};
        fn empty() -> BoxBody<Bytes, std::io::Error> {
            Full::new(Bytes::new())
                .map_err(|never| match never {})
                .boxed()
        }
        hyper_tier_sending(layer, retry, url, empty, carried).await
    }

    /// [`hyper_tier`], its calls carrying the body `body` makes and the headers `carried`,
    /// under any `retry` layer.
    async fn hyper_tier_sending<R, B>(
        layer: ChainLayer,
        retry: R,
        url: String,
        body: fn() -> B,
        carried: Carried,
    ) -> String
    where
        B: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
        B::Error: Into<retry_jitter::tower::BoxError>,
        R: tower::Layer<Client<HttpConnector, B>> + Clone + Send + Sync + 'static,
        R::Service: tower::Service<http::Request<B>, Response = http::Response<Incoming>> + Send,
        <R::Service as tower::Service<http::Request<B>>>::Future: Send,
    {
        use tower::ServiceExt;
        let call_down = move |State((retry, url)): State<(R, String)>| async move {
            let client = Client::builder(TokioExecutor::new()).build_http::<B>();
            let svc = retry.layer(client);
            let mut req = http::Request::get(url).body(body()).unwrap();
            for &(name, value) in carried {
                let value = http::HeaderValue::from_static(value);
                req.headers_mut().insert(name, value);
            }
            match svc.oneshot(req).await {
                Ok(resp) => resp.status(),
                Err(_) => StatusCode::BAD_GATEWAY,
            }
        };
        let app = axum::Router::new()
            .route("/{*path}", any(call_down))
            .with_state((retry, url))
            .layer(layer);
        let addr = loopback::serve(app).await;
        format!("http://{addr}/tier")
    }

    /// Points 2 and 4 through `RetryLayer` over hyper (HTTP mode): its attempts, sent from
    /// inside a scope, carry their number in the header `.attempt_header` names and the time
    /// left in the one `.deadline_header` names (which the tier's `ChainLayer` reads too).
    #[tokio::test]
    async fn a_retry_layers_http_attempts_carry_their_number_and_time_left() {
        let name = HeaderName::from_static(RENAMED);
        let (down, seen) = downstream().await;
        let retry = RetryLayer::new(quick(4))
            .attempt_header(HeaderName::from_static(ATTEMPT))
            .deadline_header(name.clone());
        let tier = hyper_tier(ChainLayer::new().deadline_header(name), retry, down).await;
        let answer = call_tier(&tier, &[(RENAMED, "300")]).await;
        assert_eq!(answer, (503, Some("false".to_owned())));
        assert_eq!(seen.values(ATTEMPT), one_to_four());
        assert_eq!(seen.values(ENVOY), owned(&[None; 4]));
        shrinking(&seen.all(RENAMED, millis), Duration::from_millis(300));
    }

    /// `.clone_bodies()` over a body of the user's own `Clone` type sends what crosses the hop
    /// as the replayed bodies' mode does: each attempt from inside a scope carries its number
    /// and the time left of the caller's 300 ms.
    #[tokio::test]
    async fn a_clone_bodies_attempt_carries_its_number_and_the_callers_time_left() {
        let (down, seen) = downstream().await;
        let retry = RetryLayer::new(quick(4))
            .clone_bodies()
            .attempt_header(HeaderName::from_static(ATTEMPT));
        let body = || MyBody::new("one order");
        let tier = hyper_tier_sending(ChainLayer::new(), retry, down, body, &[]).await;
        let answer = call_tier(&tier, &[(ENVOY, "300")]).await;
        assert_eq!(answer, (503, Some("false".to_owned())));
        assert_eq!(seen.values(ATTEMPT), one_to_four());
        shrinking(&seen.all(ENVOY, millis), Duration::from_millis(300));
    }

    /// Point 4 outside every scope: the same client called from the test numbers its
    /// attempts, and sends no deadline (it has none to carry).
    #[tokio::test]
    async fn an_http_attempt_outside_every_scope_carries_its_number_and_no_deadline() {
        let (down, seen) = downstream().await;
        let resp = client(numbered()).get(down).send().await.unwrap();
        assert_eq!(resp.status(), 503);
        assert_eq!(seen.values(ATTEMPT), one_to_four());
        assert_eq!(seen.values(ENVOY), owned(&[None; 4]));
    }

    /// Issue 49: a deadline a handler's request already carries is never raised by the scope
    /// it is sent from. Under a caller with 5 s, a request carrying 100 ms leaves with 100 ms
    /// or less on each of its attempts, through `RetryMiddleware` (Envoy's header) and through
    /// `RetryLayer` over hyper (the header `.deadline_header` names); one carrying 60 s is
    /// lowered to what the caller has left. The smaller wins.
    #[tokio::test]
    async fn a_deadline_the_request_carries_is_never_raised_by_the_scope() {
        let (down, seen) = downstream().await;
        let carried = &[(ENVOY, "100")];
        let (tier, _) = tier_sending(ChainLayer::new(), client(numbered()), down, carried).await;
        let answer = call_tier(&tier, &[(ENVOY, "5000")]).await;
        assert_eq!(answer, (503, Some("false".to_owned())));
        assert_eq!(seen.values(ATTEMPT), one_to_four());
        shrinking(&seen.all(ENVOY, millis), Duration::from_millis(100));

        let (down, seen) = downstream().await;
        let carried = &[(ENVOY, "60000")];
        let (tier, _) = tier_sending(ChainLayer::new(), client(numbered()), down, carried).await;
        call_tier(&tier, &[(ENVOY, "5000")]).await;
        shrinking(&seen.all(ENVOY, millis), Duration::from_millis(5000));

        let name = HeaderName::from_static(RENAMED);
        let (down, seen) = downstream().await;
        let retry = RetryLayer::new(quick(4))
            .attempt_header(HeaderName::from_static(ATTEMPT))
            .deadline_header(name.clone());
        let layer = ChainLayer::new().deadline_header(name);
        let carried = &[(RENAMED, "100")];
        let tier = hyper_tier_carrying(layer, retry, down, carried).await;
        let answer = call_tier(&tier, &[(RENAMED, "5000")]).await;
        assert_eq!(answer, (503, Some("false".to_owned())));
        assert_eq!(seen.values(ATTEMPT), one_to_four());
        shrinking(&seen.all(RENAMED, millis), Duration::from_millis(100));
    }

    /// Point 2: `.deadline_header` renames the header in both directions: the tier's
    /// `ChainLayer` reads the caller's deadline from it (not from Envoy's, which it now
    /// ignores), and the tier's `RetryMiddleware` sends the time left in it (not in Envoy's).
    #[tokio::test]
    async fn deadline_header_renames_the_header_both_ways() {
        let name = HeaderName::from_static(RENAMED);
        let (down, seen) = downstream().await;
        let middleware = numbered().deadline_header(name.clone());
        let layer = ChainLayer::new().deadline_header(name);
        let (tier, _) = tier(layer, client(middleware), down).await;
        // Envoy's header says 5 s: it is not the one read.
        let answer = call_tier(&tier, &[(RENAMED, "300"), (ENVOY, "5000")]).await;
        assert_eq!(answer.0, 503);
        assert_eq!(seen.values(ENVOY), owned(&[None; 4]));
        shrinking(&seen.all(RENAMED, millis), Duration::from_millis(300));
        // Envoy's header alone is no deadline: nothing to carry (no timeout either).
        let answer = call_tier(&tier, &[(ENVOY, "300")]).await;
        assert_eq!(answer.0, 503);
        assert_eq!(seen.calls(), 8);
        let second: Vec<_> = seen.values(RENAMED).split_off(4);
        assert_eq!(second, owned(&[None; 4]));
        assert_eq!(seen.values(ENVOY), owned(&[None; 8]));
    }
}

/// Point 3 for `#[retry]` fns: a fn that gave up inside a handler's scope marks the handler's
/// `503` "don't retry", a fn stopped by its classifier does not.
mod give_up {
    use super::*;
    use axum::http::StatusCode;
    use axum::routing::get;
    use reqwest_middleware::ClientBuilder;
    use retry_jitter::reqwest_middleware::RetryMiddleware;
    use retry_jitter::retry;

    #[derive(Debug)]
    struct Down;

    static GIVES_UP_ASYNC: AtomicU32 = AtomicU32::new(0);
    static GIVES_UP_SYNC: AtomicU32 = AtomicU32::new(0);
    static REFUSED: AtomicU32 = AtomicU32::new(0);
    static NOT_FOUND: AtomicU32 = AtomicU32::new(0);
    static OWN: AtomicU32 = AtomicU32::new(0);

    #[retry(attempts = 3, base = "5ms")]
    async fn gives_up_async() -> Result<(), Down> {
        GIVES_UP_ASYNC.fetch_add(1, Ordering::SeqCst);
        Err(Down)
    }

    #[retry(attempts = 3, base = "5ms")]
    fn gives_up_sync() -> Result<(), Down> {
        GIVES_UP_SYNC.fetch_add(1, Ordering::SeqCst);
        Err(Down)
    }

    /// Its classifier stops on every error.
    #[retry(attempts = 3, base = "5ms", on = |_| false)]
    async fn refused() -> Result<(), Down> {
        REFUSED.fetch_add(1, Ordering::SeqCst);
        Err(Down)
    }

    /// The default classifier stops on `NotFound` (`Transient` for `io::Error`).
    #[retry(attempts = 3, base = "5ms")]
    async fn not_found() -> std::io::Result<()> {
        NOT_FOUND.fetch_add(1, Ordering::SeqCst);
        Err(std::io::ErrorKind::NotFound.into())
    }

    fn answer(ok: bool) -> StatusCode {
        if ok {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        }
    }

    /// A server under `ChainLayer`, one route per fn, each answering `503` when it fails.
    async fn server() -> String {
        let app = axum::Router::new()
            .route(
                "/async",
                get(|| async { answer(gives_up_async().await.is_ok()) }),
            )
            .route("/sync", get(|| async { answer(gives_up_sync().is_ok()) }))
            .route(
                "/refused",
                get(|| async { answer(refused().await.is_ok()) }),
            )
            .route(
                "/not-found",
                get(|| async { answer(not_found().await.is_ok()) }),
            )
            .route(
                "/own",
                get(|| async {
                    OWN.fetch_add(1, Ordering::SeqCst);
                    answer(false)
                }),
            )
            .layer(ChainLayer::new());
        let addr = loopback::serve(app).await;
        format!("http://{addr}")
    }

    /// A call of `url` by a `RetryMiddleware` client of 4 attempts: the last answer's status
    /// and `x-should-retry`.
    async fn call(url: String) -> (u16, Option<String>) {
        let client = ClientBuilder::new(reqwest::Client::new())
            .with(RetryMiddleware::new(quick(4)))
            .build();
        let resp = client.get(url).send().await.unwrap();
        let said = resp
            .headers()
            .get("x-should-retry")
            .map(|v| v.to_str().unwrap().to_owned());
        (resp.status().as_u16(), said)
    }

    /// A fn that gave up on attempts, async or sync: the answer says "don't retry", and the
    /// client calls once (3 calls of the fn, not 12).
    #[tokio::test]
    async fn a_retry_fn_that_gave_up_marks_the_answer() {
        let server = server().await;
        for (route, calls) in [("async", &GIVES_UP_ASYNC), ("sync", &GIVES_UP_SYNC)] {
            let answer = call(format!("{server}/{route}")).await;
            assert_eq!(answer, (503, Some("false".to_owned())), "{route}");
            assert_eq!(calls.load(Ordering::SeqCst), 3, "{route}");
        }
    }

    /// A fn its classifier stopped (a permanent error, by `on` or by the default classifier)
    /// did not give up for a limit: the answer is left retryable, and the client retries it
    /// (4 calls of the fn, one per attempt of the client's). So is a handler's own 503.
    #[tokio::test]
    async fn a_stop_or_the_handlers_own_failure_is_not_marked() {
        let server = server().await;
        let routes = [
            ("refused", &REFUSED),
            ("not-found", &NOT_FOUND),
            ("own", &OWN),
        ];
        for (route, calls) in routes {
            let answer = call(format!("{server}/{route}")).await;
            assert_eq!(answer, (503, None), "{route}");
            assert_eq!(calls.load(Ordering::SeqCst), 4, "{route}");
        }
    }
}

/// guide::http_clients' reqwest pattern as a chain: A → B → C on loopback, A and B each calling the
/// tier below with a `#[retry(on = retry_jitter::transient)]` fn around `reqwest::check` (4
/// attempts), C answering `503`, each tier under `ChainLayer`. B retries C and gives up; its
/// `x-should-retry: false` reaches A through `check`'s error, and A does not retry B.
mod check_in_a_chain {
    use super::*;
    use axum::extract::State;
    use axum::http::StatusCode;
    use axum::routing::get;
    use reqwest_middleware::ClientBuilder;
    use retry_jitter::reqwest::{check, Error};
    use retry_jitter::reqwest_middleware::RetryMiddleware;
    use retry_jitter::retry;

    #[retry(attempts = 4, base = "2ms", cap = "10ms", on = retry_jitter::transient)]
    async fn call_down(client: &reqwest::Client, url: &str) -> Result<String, Error> {
        let resp = client.get(url).send().await?;
        Ok(check(resp).await?.text().await?)
    }

    /// How a tier calls the one below.
    #[derive(Clone, Copy, Debug)]
    enum Hop {
        /// `call_down`: `#[retry]` around `check`.
        RetryFn,
        /// `RetryMiddleware` of 4 attempts.
        Middleware,
    }

    /// The status the call of `url` through `hop` ended with (`502` when none came).
    async fn through(hop: Hop, url: &str) -> StatusCode {
        let client = reqwest::Client::new();
        let status = match hop {
            Hop::RetryFn => match call_down(&client, url).await {
                Ok(_) => Some(StatusCode::OK),
                Err(e) => e.status(),
            },
            Hop::Middleware => {
                let client = ClientBuilder::new(client)
                    .with(RetryMiddleware::new(quick(4)))
                    .build();
                client.get(url).send().await.ok().map(|r| r.status())
            }
        };
        status.unwrap_or(StatusCode::BAD_GATEWAY)
    }

    /// How a tier calls the tier below and its URL; `None` for the bottom.
    type Below = Option<(Hop, String)>;

    /// A tier under `ChainLayer` counting its calls: it answers `503` (C), or what its call
    /// of the tier below ended with (A and B).
    async fn tier(calls: Arc<AtomicU32>, below: Below) -> String {
        let serve = |State((calls, below)): State<(Arc<AtomicU32>, Below)>| async move {
            calls.fetch_add(1, Ordering::SeqCst);
            match below {
                Some((hop, url)) => through(hop, &url).await,
                None => StatusCode::SERVICE_UNAVAILABLE,
            }
        };
        let app = axum::Router::new()
            .route("/", get(serve))
            .with_state((calls, below))
            .layer(ChainLayer::new());
        format!("http://{}/", loopback::serve(app).await)
    }

    /// One plain call of A, A calling B through `top`: A's status and `x-should-retry`, and
    /// the calls each tier got.
    async fn one_call(top: Hop) -> (u16, Option<String>, [u32; 3]) {
        let calls: [Arc<AtomicU32>; 3] = Default::default();
        let c = tier(calls[2].clone(), None).await;
        let b = tier(calls[1].clone(), Some((Hop::RetryFn, c))).await;
        let a = tier(calls[0].clone(), Some((top, b))).await;
        let resp = reqwest::get(a).await.unwrap();
        let said = resp
            .headers()
            .get("x-should-retry")
            .map(|v| v.to_str().unwrap().to_owned());
        let counts = calls.each_ref().map(|c| c.load(Ordering::SeqCst));
        (resp.status().as_u16(), said, counts)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_retry_fn_around_check_hears_the_tier_below_and_c_gets_4_calls() {
        for top in [Hop::RetryFn, Hop::Middleware] {
            let (status, said, calls) = one_call(top).await;
            // B retried C 4 times and said so; A heard it, as RetryMiddleware does.
            assert_eq!(calls, [1, 1, 4], "A calling B through {top:?}");
            assert_eq!(status, 503, "{top:?}");
            // A stopped on B's word and passes it on.
            assert_eq!(said.as_deref(), Some("false"), "{top:?}");
        }
    }
}

/// Issue 49: which give-ups mark a tier's answer "don't retry". A tier under `ChainLayer` on
/// loopback whose handler calls a downstream on loopback (answering `503`, with `Retry-After:
/// 60` past the default 30 s cap when asked) in a `Retry` loop around `reqwest::check`, given a
/// shutdown token, and answers with the status it got. Marked only when the loop retried, or
/// would have but for a limit; a cancelled loop and a loop of one attempt leave the answer as
/// it is.
mod marks {
    use super::*;
    use axum::extract::State;
    use axum::http::StatusCode;
    use axum::routing::get;
    use retry_jitter::reqwest::{check, Error};
    use retry_jitter::{CancelToken, GiveUp, GiveUpReason, Retry};

    /// What the downstream does: answer `Retry-After: 60` with its `503`, and cancel the
    /// tier's shutdown token as its `cancel_at`th call comes (`0`: never).
    #[derive(Clone)]
    struct Down {
        seen: Arc<Seen>,
        hint: bool,
        cancel_at: usize,
        shutdown: Arc<CancelToken>,
    }

    /// The tier's handler: its loop's policy, the downstream's URL, its shutdown token, and the
    /// reason each of its loops gave up for.
    #[derive(Clone)]
    struct Tier {
        policy: Policy,
        url: String,
        shutdown: Arc<CancelToken>,
        ended: Arc<Mutex<Vec<GiveUpReason>>>,
    }

    async fn answer_down(State(down): State<Down>, headers: HeaderMap) -> (StatusCode, HeaderMap) {
        down.seen.record(&headers);
        if down.seen.calls() == down.cancel_at {
            down.shutdown.cancel();
        }
        let mut answer = HeaderMap::new();
        if down.hint {
            answer.insert("retry-after", http::HeaderValue::from_static("60"));
        }
        (StatusCode::SERVICE_UNAVAILABLE, answer)
    }

    async fn call_down(State(tier): State<Tier>) -> StatusCode {
        let client = reqwest::Client::new();
        let ended = tier.ended.clone();
        let out = Retry::new(tier.policy)
            .on(retry_jitter::transient::<Error>)
            .give_up(move |_: &Error, g: &GiveUp| ended.lock().unwrap().push(g.reason))
            .cancel(&tier.shutdown)
            .call_async(|| async {
                let resp = client.get(&tier.url).send().await?;
                check(resp).await.map(drop).map_err(Error::from)
            })
            .await;
        match out {
            Ok(()) => StatusCode::OK,
            Err(e) => e.status().unwrap_or(StatusCode::BAD_GATEWAY),
        }
    }

    /// One call of a tier (under `ChainLayer::new()`) whose loop runs `policy` against a
    /// downstream that answers as `hint` and `cancel_at` say (`cancelled`: the token is
    /// cancelled before the call): the tier's status and `x-should-retry`, the reasons its loop
    /// gave up for, and the calls the downstream got.
    async fn one_call(
        policy: Policy,
        hint: bool,
        cancel_at: usize,
        cancelled: bool,
    ) -> ((u16, Option<String>), Vec<GiveUpReason>, usize) {
        let shutdown = Arc::new(CancelToken::new());
        if cancelled {
            shutdown.cancel();
        }
        let seen = Arc::new(Seen::default());
        let down = Down {
            seen: seen.clone(),
            hint,
            cancel_at,
            shutdown: shutdown.clone(),
        };
        let app = axum::Router::new()
            .route("/", get(answer_down))
            .with_state(down);
        let url = format!("http://{}/", loopback::serve(app).await);
        let ended = Arc::new(Mutex::new(Vec::new()));
        let tier = Tier {
            policy,
            url,
            shutdown,
            ended: ended.clone(),
        };
        let app = axum::Router::new()
            .route("/", get(call_down))
            .with_state(tier)
            .layer(ChainLayer::new());
        let url = format!("http://{}/", loopback::serve(app).await);
        // Every wait in these loops is ended by a cancel or is never waited: a hang is a bug.
        let resp = tokio::time::timeout(Duration::from_secs(30), reqwest::get(url))
            .await
            .expect("the tier answered")
            .unwrap();
        let said = resp
            .headers()
            .get("x-should-retry")
            .map(|v| v.to_str().unwrap().to_owned());
        let reasons = ended.lock().unwrap().clone();
        ((resp.status().as_u16(), said), reasons, seen.calls())
    }

    /// `attempts` attempts whose waits (10 s and more) only a cancel ends.
    fn long_waits(attempts: u32) -> Policy {
        Policy::new()
            .with_attempts(attempts)
            .with_base(Duration::from_secs(10))
            .with_cap(Duration::from_secs(20))
            .with_jitter(retry_jitter::Jitter::None)
    }

    /// Case (a): a loop of one attempt, its token cancelled (a shutdown under way): its first
    /// attempt runs, and the loop ends `Cancelled`. A tier told to fail fast leaves the retry
    /// to its caller: the `503` goes up unmarked.
    #[tokio::test]
    async fn a_fail_fast_loop_ended_by_a_cancelled_token_leaves_the_answer_as_it_is() {
        let (answer, reasons, calls) = one_call(long_waits(1), false, 0, true).await;
        assert_eq!(reasons, [GiveUpReason::Cancelled]);
        assert_eq!(calls, 1);
        assert_eq!(answer, (503, None));
    }

    /// Case (b): a loop of one attempt answered `Retry-After: 60`, past its 30 s cap: it ends
    /// `HintBeyondCap`, but it would not have retried anyway: the `503` goes up unmarked.
    #[tokio::test]
    async fn a_fail_fast_loop_ended_by_a_retry_after_past_its_cap_leaves_the_answer_as_it_is() {
        let (answer, reasons, calls) = one_call(long_waits(1), true, 0, false).await;
        assert_eq!(reasons, [GiveUpReason::HintBeyondCap]);
        assert_eq!(calls, 1);
        assert_eq!(answer, (503, None));
    }

    /// The same hint to a loop of 4 attempts: it would have retried but for its cap, a limit
    /// of retrying, so the tier says it is done (its caller would meet the same hint).
    #[tokio::test]
    async fn a_loop_of_four_ended_by_a_retry_after_past_its_cap_marks_the_answer() {
        let (answer, reasons, calls) = one_call(long_waits(4), true, 0, false).await;
        assert_eq!(reasons, [GiveUpReason::HintBeyondCap]);
        assert_eq!(calls, 1);
        assert_eq!(answer, (503, Some("false".to_owned())));
    }

    /// Case (c): a loop of 4 attempts whose shutdown token is cancelled as its first call
    /// reaches the downstream: the 10 s wait before its retry ends at once, the loop ends
    /// `Cancelled`, and its `503` is not "already retried": the caller may try another replica
    /// during the shutdown. Cancelled after a retry (as its second call arrives, which is
    /// dropped), it is still the shutdown, not a limit of retrying, that ended it: unmarked
    /// too.
    #[tokio::test]
    async fn a_loop_ended_by_a_shutdown_token_leaves_its_503_as_it_is() {
        let (answer, reasons, calls) = one_call(long_waits(4), false, 1, false).await;
        assert_eq!(reasons, [GiveUpReason::Cancelled]);
        assert_eq!(calls, 1);
        assert_eq!(answer, (503, None));

        let policy = quick(4).with_cap(Duration::from_secs(20));
        let (answer, reasons, calls) = one_call(policy, false, 2, false).await;
        assert_eq!(reasons, [GiveUpReason::Cancelled]);
        assert_eq!(calls, 2);
        assert_eq!(answer, (503, None));
    }

    /// And a loop of 4 whose attempts all failed: it retried, and says so.
    #[tokio::test]
    async fn a_loop_that_spent_its_attempts_marks_the_answer() {
        let (answer, reasons, calls) = one_call(quick(4), false, 0, false).await;
        assert_eq!(reasons, [GiveUpReason::Attempts]);
        assert_eq!(calls, 4);
        assert_eq!(answer, (503, Some("false".to_owned())));
    }
}
