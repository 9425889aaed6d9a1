//! gRPC's service config applied by `retry_jitter::tonic::ServiceConfigLayer` (issue 55, point
//! 2): a tonic client over a real `Channel`, against a real tonic server on loopback (a
//! hand-written service and codec: no protoc) that records each attempt it gets. The tests
//! named `retry_*` are gRPC's own end-to-end retry tests (`test/core/end2end/tests/retry_*.cc`
//! in grpc/grpc), ported to unary calls: the same service config, the same answers from the
//! server, the same attempt counts and final status.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::HeaderMap;
use retry_jitter::tonic::{ServiceConfig, ServiceConfigLayer, ServiceConfigService};
use tonic::transport::Channel;
use tonic::{Code, Status};
use tower::Layer;

use crate::grpc_raw;
use crate::h2_frames;

use grpc_raw::Raw;

/// What the server does with one attempt.
#[derive(Clone, Debug)]
enum Reply {
    /// Answers `OK` with the request's bytes.
    Ok,
    /// Fails with this code (a trailers-only answer).
    Fail(Code),
    /// Fails with this code and `grpc-retry-pushback-ms: value`.
    Pushback(Code, &'static str),
    /// Answers as the reply after this long.
    After(Duration, Box<Reply>),
    /// Sends its headers (with `key1: val1`), then fails with this code in its trailers.
    HeadersThen(Code),
    /// A server-streaming answer: the request's bytes as one message, then this code.
    StreamThen(Code),
}

/// Every attempt the server got: when, to which path, with which headers.
#[derive(Default)]
struct Seen(Mutex<Vec<(Instant, String, HeaderMap)>>);

impl Seen {
    fn calls(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    fn paths(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|(_, p, _)| p.clone())
            .collect()
    }

    fn arrivals(&self) -> Vec<Instant> {
        self.0.lock().unwrap().iter().map(|&(at, ..)| at).collect()
    }

    /// The value of header `name` in each attempt (`None`: absent).
    fn values(&self, name: &str) -> Vec<Option<String>> {
        let calls = self.0.lock().unwrap();
        calls
            .iter()
            .map(|(_, _, h)| h.get(name).map(|v| v.to_str().unwrap().to_owned()))
            .collect()
    }
}

/// The server: attempt `n` (0-based, over all paths) answered with `script(n)`.
type Script = Arc<dyn Fn(usize) -> Reply + Send + Sync>;

#[derive(Clone)]
struct Server {
    seen: Arc<Seen>,
    script: Script,
}

type Answer = Pin<
    Box<
        dyn Future<Output = Result<http::Response<tonic::body::Body>, std::convert::Infallible>>
            + Send,
    >,
>;

impl tower::Service<http::Request<tonic::body::Body>> for Server {
    type Response = http::Response<tonic::body::Body>;
    type Error = std::convert::Infallible;
    type Future = Answer;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<tonic::body::Body>) -> Answer {
        let n = {
            let mut seen = self.seen.0.lock().unwrap();
            let call = (
                Instant::now(),
                req.uri().path().to_owned(),
                req.headers().clone(),
            );
            seen.push(call);
            seen.len() - 1
        };
        let reply = (self.script)(n);
        if let Reply::HeadersThen(code) = reply {
            return Box::pin(async move { Ok(headers_then(code)) });
        }
        if req.uri().path().ends_with("Stream") {
            let handler = tower::service_fn(move |req: tonic::Request<Bytes>| {
                let reply = reply.clone();
                async move { stream(reply, req.into_inner()) }
            });
            let grpc = async move {
                let mut grpc = tonic::server::Grpc::new(Raw);
                Ok(grpc.server_streaming(handler, req).await)
            };
            return Box::pin(grpc);
        }
        let handler = tower::service_fn(move |req: tonic::Request<Bytes>| {
            let reply = reply.clone();
            async move { answer(reply, req.into_inner()).await }
        });
        Box::pin(async move { Ok(tonic::server::Grpc::new(Raw).unary(handler, req).await) })
    }
}

type Messages = tonic::codegen::tokio_stream::Iter<std::vec::IntoIter<Result<Bytes, Status>>>;

/// A server-streaming answer: failed before its headers (trailers-only), or its messages.
fn stream(reply: Reply, body: Bytes) -> Result<tonic::Response<Messages>, Status> {
    let messages = match reply {
        Reply::Fail(code) => return Err(Status::new(code, "xyz")),
        Reply::StreamThen(code) => vec![Ok(body), Err(Status::new(code, "xyz"))],
        _ => vec![Ok(body)],
    };
    Ok(tonic::Response::new(tonic::codegen::tokio_stream::iter(
        messages,
    )))
}

/// An answer whose headers come first, without a status, then trailers with `code`: not a
/// trailers-only answer.
fn headers_then(code: Code) -> http::Response<tonic::body::Body> {
    let mut trailers = HeaderMap::new();
    trailers.insert("grpc-status", (code as i32).to_string().parse().unwrap());
    trailers.insert("grpc-message", "xyz".parse().unwrap());
    http::Response::builder()
        .header("content-type", "application/grpc")
        .header("key1", "val1")
        .body(tonic::body::Body::new(TrailersLater(Some(trailers))))
        .unwrap()
}

/// A body of trailers alone, sent after the headers.
struct TrailersLater(Option<HeaderMap>);

impl http_body::Body for TrailersLater {
    type Data = Bytes;
    type Error = std::convert::Infallible;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        Poll::Ready(self.0.take().map(|t| Ok(http_body::Frame::trailers(t))))
    }
}

async fn answer(mut reply: Reply, body: Bytes) -> Result<tonic::Response<Bytes>, Status> {
    loop {
        return match reply {
            Reply::Ok => Ok(tonic::Response::new(body)),
            Reply::Fail(code) => Err(Status::new(code, "xyz")),
            Reply::Pushback(code, value) => {
                let mut status = Status::new(code, "xyz");
                let value = value.parse().unwrap();
                status
                    .metadata_mut()
                    .insert("grpc-retry-pushback-ms", value);
                Err(status)
            }
            Reply::After(wait, then) => {
                tokio::time::sleep(wait).await;
                reply = *then;
                continue;
            }
            Reply::HeadersThen(code) | Reply::StreamThen(code) => Err(Status::new(code, "xyz")),
        };
    }
}

/// The server under two service names, `service` and `other` (tonic routes by service).
macro_rules! named {
    ($($ty:ident = $name:literal),+) => {$(
        #[derive(Clone)]
        struct $ty(Server);
        impl tonic::server::NamedService for $ty {
            const NAME: &'static str = $name;
        }
        impl tower::Service<http::Request<tonic::body::Body>> for $ty {
            type Response = http::Response<tonic::body::Body>;
            type Error = std::convert::Infallible;
            type Future = Answer;
            fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
                self.0.poll_ready(cx)
            }
            fn call(&mut self, req: http::Request<tonic::body::Body>) -> Answer {
                self.0.call(req)
            }
        }
    )+};
}

named!(Service = "service", Other = "other");

/// A tonic server on loopback answering every attempt by `script`: a channel to it, and what
/// it saw.
async fn serve(script: impl Fn(usize) -> Reply + Send + Sync + 'static) -> (Channel, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let server = Server {
        seen: seen.clone(),
        script: Arc::new(script),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let incoming = tonic::transport::server::TcpIncoming::from(listener);
    let serving = tonic::transport::Server::builder()
        .add_service(Service(server.clone()))
        .add_service(Other(server))
        .serve_with_incoming(incoming);
    tokio::spawn(serving);
    let channel = Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_lazy();
    (channel, seen)
}

/// Replies by attempt: the `i`-th attempt gets `replies[i]`, the ones past the list the last.
fn replies(replies: &[Reply]) -> impl Fn(usize) -> Reply + Send + Sync + 'static {
    let replies = replies.to_vec();
    move |n| replies[n.min(replies.len() - 1)].clone()
}

type Client = tonic::client::Grpc<ServiceConfigService<Channel>>;

fn client(json: &str, channel: Channel) -> Client {
    let config = ServiceConfig::from_json(json).unwrap();
    tonic::client::Grpc::new(ServiceConfigLayer::new(config).layer(channel))
}

/// One unary call of `path` carrying `body`, through any layer's client.
async fn call_with<T>(
    client: &mut tonic::client::Grpc<T>,
    path: &'static str,
    body: Bytes,
) -> Result<Bytes, Status>
where
    T: tonic::client::GrpcService<tonic::body::Body>,
    T::ResponseBody: http_body::Body<Data = Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    client
        .ready()
        .await
        .map_err(|e| Status::unknown(e.into().to_string()))?;
    let path = http::uri::PathAndQuery::from_static(path);
    let resp = client.unary(tonic::Request::new(body), path, Raw).await?;
    Ok(resp.into_inner())
}

async fn call<T>(client: &mut tonic::client::Grpc<T>, path: &'static str) -> Result<Bytes, Status>
where
    T: tonic::client::GrpcService<tonic::body::Body>,
    T::ResponseBody: http_body::Body<Data = Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    call_with(client, path, Bytes::from_static(b"foo")).await
}

/// gRPC's tests' config: `/service/method` with a `retryPolicy` retrying `ABORTED`, with
/// `extra` fields in the policy and `top` fields beside `methodConfig`.
fn config(max_attempts: u32, backoff: &str, extra: &str, top: &str) -> String {
    format!(
        r#"{{
  "methodConfig": [{{
    "name": [{{ "service": "service", "method": "method" }}],
    "retryPolicy": {{
      "maxAttempts": {max_attempts},
      "initialBackoff": "{backoff}",
      "maxBackoff": "120s",
      "backoffMultiplier": 1.6,
      {extra}
      "retryableStatusCodes": ["ABORTED"]
    }}
  }}]{top}
}}"#
    )
}

/// gRPC's waits of a second, made short for a test.
const QUICK: &str = "0.01s";

// --- gRPC's end-to-end retry tests, ported -------------------------------------------------

/// `retry`: the first attempt gets `ABORTED`, the second `OK`; the retry carries
/// `grpc-previous-rpc-attempts: 1`, the first none.
#[tokio::test]
async fn retry() {
    let (channel, seen) = serve(replies(&[Reply::Fail(Code::Aborted), Reply::Ok])).await;
    let mut client = client(&config(3, QUICK, "", ""), channel);
    assert_eq!(call(&mut client, "/service/method").await.unwrap(), "foo");
    assert_eq!(seen.calls(), 2);
    assert_eq!(
        seen.values("grpc-previous-rpc-attempts"),
        [None, Some("1".into())]
    );
}

/// `retry_too_many_attempts`: two attempts allowed, both `ABORTED`: the second's status.
#[tokio::test]
async fn retry_too_many_attempts() {
    let (channel, seen) = serve(replies(&[Reply::Fail(Code::Aborted)])).await;
    let mut client = client(&config(2, QUICK, "", ""), channel);
    let status = call(&mut client, "/service/method").await.unwrap_err();
    assert_eq!((status.code(), status.message()), (Code::Aborted, "xyz"));
    assert_eq!(seen.calls(), 2);
}

/// `retry_non_retriable_status`: a code not in `retryableStatusCodes` is returned at once.
#[tokio::test]
async fn retry_non_retriable_status() {
    let (channel, seen) = serve(replies(&[Reply::Fail(Code::InvalidArgument)])).await;
    let mut client = client(&config(3, QUICK, "", ""), channel);
    let status = call(&mut client, "/service/method").await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert_eq!(seen.calls(), 1);
}

/// `retry_server_pushback_delay`: the server's pushback sets the wait, exactly: 50 ms, where
/// the policy's backoff (`initialBackoff` 1 s) would have waited 0.8 s at least.
#[tokio::test]
async fn retry_server_pushback_delay() {
    let first = Reply::Pushback(Code::Aborted, "50");
    let (channel, seen) = serve(replies(&[first, Reply::Ok])).await;
    let mut client = client(&config(3, "1s", "", ""), channel);
    assert_eq!(call(&mut client, "/service/method").await.unwrap(), "foo");
    let at = seen.arrivals();
    assert_eq!(at.len(), 2);
    let waited = at[1] - at[0];
    assert!(waited >= Duration::from_millis(50), "{waited:?}");
    assert!(
        waited < Duration::from_millis(800),
        "the backoff's, not the pushback's: {waited:?}"
    );
}

/// `retry_server_pushback_disabled`: a pushback of `-1` ends the call with that answer.
#[tokio::test]
async fn retry_server_pushback_disabled() {
    let second = Reply::Pushback(Code::Aborted, "-1");
    let (channel, seen) = serve(replies(&[Reply::Fail(Code::Aborted), second])).await;
    let mut client = client(&config(3, QUICK, "", ""), channel);
    let status = call(&mut client, "/service/method").await.unwrap_err();
    assert_eq!(status.code(), Code::Aborted);
    assert_eq!(seen.calls(), 2);
}

/// `retry_throttled`: `maxTokens` 2: one failure leaves 1 token, half the bucket: no retry.
#[tokio::test]
async fn retry_throttled() {
    let throttling = r#", "retryThrottling": { "maxTokens": 2, "tokenRatio": 1.0 }"#;
    let (channel, seen) = serve(replies(&[Reply::Fail(Code::Aborted), Reply::Ok])).await;
    let mut client = client(&config(2, QUICK, "", throttling), channel);
    let status = call(&mut client, "/service/method").await.unwrap_err();
    assert_eq!(status.code(), Code::Aborted);
    assert_eq!(seen.calls(), 1);
}

/// `retry_per_attempt_recv_timeout`: the first attempt is not answered within
/// `perAttemptRecvTimeout` and is retried; the second gets `ABORTED`, the third `OK`; each
/// retry carries its number of previous attempts.
#[tokio::test]
async fn retry_per_attempt_recv_timeout() {
    let hang = Reply::After(Duration::from_secs(5), Box::new(Reply::Ok));
    let (channel, seen) = serve(replies(&[hang, Reply::Fail(Code::Aborted), Reply::Ok])).await;
    let timeout = r#""perAttemptRecvTimeout": "0.2s","#;
    let mut client = client(&config(3, QUICK, timeout, ""), channel);
    let start = Instant::now();
    assert_eq!(call(&mut client, "/service/method").await.unwrap(), "foo");
    assert!(start.elapsed() >= Duration::from_millis(200));
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "not the hanging attempt's answer"
    );
    assert_eq!(
        seen.values("grpc-previous-rpc-attempts"),
        [None, Some("1".into()), Some("2".into())]
    );
}

/// `retry_per_attempt_recv_timeout_on_last_attempt`: neither attempt is answered in time;
/// the call ends `CANCELLED`, with C-core's message.
#[tokio::test]
async fn retry_per_attempt_recv_timeout_on_last_attempt() {
    let hang = Reply::After(Duration::from_secs(5), Box::new(Reply::Ok));
    let (channel, seen) = serve(replies(&[hang])).await;
    let timeout = r#""perAttemptRecvTimeout": "0.2s","#;
    let mut client = client(&config(2, QUICK, timeout, ""), channel);
    let start = Instant::now();
    let status = call(&mut client, "/service/method").await.unwrap_err();
    assert_eq!(
        (status.code(), status.message()),
        (Code::Cancelled, "retry perAttemptRecvTimeout exceeded")
    );
    assert!(start.elapsed() >= Duration::from_millis(400));
    assert!(start.elapsed() < Duration::from_secs(4));
    assert_eq!(
        seen.values("grpc-previous-rpc-attempts"),
        [None, Some("1".into())]
    );
}

/// `retry_recv_initial_metadata`: headers that arrive before the status commit the call; an
/// `ABORTED` in its trailers is returned, not retried.
#[tokio::test]
async fn retry_recv_initial_metadata() {
    let (channel, seen) = serve(replies(&[Reply::HeadersThen(Code::Aborted), Reply::Ok])).await;
    let mut client = client(&config(2, QUICK, "", ""), channel);
    let status = call(&mut client, "/service/method").await.unwrap_err();
    assert_eq!((status.code(), status.message()), (Code::Aborted, "xyz"));
    assert_eq!(seen.calls(), 1);
}

/// `retry_cancel_during_delay`: a call dropped during its backoff sends nothing more.
#[tokio::test]
async fn retry_cancel_during_delay() {
    let (channel, seen) = serve(replies(&[Reply::Fail(Code::Aborted), Reply::Ok])).await;
    let mut client = client(&config(3, "1s", "", ""), channel);
    let dropped = tokio::time::timeout(
        Duration::from_millis(300),
        call(&mut client, "/service/method"),
    )
    .await;
    assert!(dropped.is_err(), "still waiting: {dropped:?}");
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(seen.calls(), 1);
}

/// `retry_exceeds_buffer_size_in_initial_batch`: a request larger than the retry buffer
/// (256 KiB, C-core's default) commits the call: sent once, its answer returned.
#[tokio::test]
async fn retry_exceeds_buffer_size_in_initial_batch() {
    let aborted = Reply::Fail(Code::Aborted);
    let (channel, seen) = serve(replies(&[aborted.clone(), aborted, Reply::Ok])).await;
    let mut client = client(&config(3, QUICK, "", ""), channel);
    let large = Bytes::from(vec![b'x'; 300 * 1024]);
    let status = call_with(&mut client, "/service/method", large)
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Aborted);
    assert_eq!(seen.calls(), 1);
    // Within the buffer, the same call is retried.
    let small = Bytes::from(vec![b'x'; 200 * 1024]);
    assert_eq!(
        call_with(&mut client, "/service/method", small)
            .await
            .unwrap()
            .len(),
        200 * 1024
    );
    assert_eq!(seen.calls(), 3);
}

// --- The layer's own rules -----------------------------------------------------------------

/// A method no entry gives a policy is sent once, untouched.
#[tokio::test]
async fn a_method_without_a_policy_is_sent_once() {
    let (channel, seen) = serve(replies(&[Reply::Fail(Code::Aborted)])).await;
    let mut client = client(&config(3, QUICK, "", ""), channel);
    let status = call(&mut client, "/service/other").await.unwrap_err();
    assert_eq!(status.code(), Code::Aborted);
    assert_eq!(seen.calls(), 1);
    assert_eq!(seen.values("grpc-timeout"), [None]);
}

/// The entry naming the method wins over its service's, which wins over the default.
#[tokio::test]
async fn the_most_specific_config_wins() {
    let policy = |n: u32| {
        format!(
            r#""retryPolicy": {{ "maxAttempts": {n}, "initialBackoff": "0.01s", "maxBackoff": "0.01s",
               "backoffMultiplier": 1, "retryableStatusCodes": ["ABORTED"] }}"#
        )
    };
    let json = format!(
        r#"{{ "methodConfig": [
            {{ "name": [{{}}], {} }},
            {{ "name": [{{ "service": "service" }}], {} }},
            {{ "name": [{{ "service": "service", "method": "method" }}], {} }}
        ] }}"#,
        policy(2),
        policy(3),
        policy(4)
    );
    let (channel, seen) = serve(replies(&[Reply::Fail(Code::Aborted)])).await;
    let mut client = client(&json, channel);
    for (path, attempts) in [
        ("/service/method", 4),
        ("/service/other", 3),
        ("/other/method", 2),
    ] {
        let before = seen.calls();
        let status = call(&mut client, path).await.unwrap_err();
        assert_eq!(status.code(), Code::Aborted);
        assert_eq!(seen.calls() - before, attempts, "{path}");
        assert!(seen.paths()[before..].iter().all(|p| p == path));
    }
}

/// Every retry carries how many attempts came before it.
#[tokio::test]
async fn grpc_previous_rpc_attempts_on_every_retry() {
    let (channel, seen) = serve(replies(&[Reply::Fail(Code::Aborted)])).await;
    let mut client = client(&config(4, QUICK, "", ""), channel);
    call(&mut client, "/service/method").await.unwrap_err();
    assert_eq!(
        seen.values("grpc-previous-rpc-attempts"),
        [None, Some("1".into()), Some("2".into()), Some("3".into())]
    );
}

/// One throttle per layer, shared by every service it makes and their clones: from a full
/// bucket of 10 (ratio 0.1), three failures of one client's call, then two of another's
/// (the fifth failure in a row leaves 5 tokens, half: not retried), then one of a third's.
#[tokio::test]
async fn the_throttle_is_shared_by_the_clones_of_the_layers_services() {
    let throttling = r#", "retryThrottling": { "maxTokens": 10, "tokenRatio": 0.1 }"#;
    let (channel, seen) = serve(replies(&[Reply::Fail(Code::Aborted)])).await;
    let config = ServiceConfig::from_json(&config(3, QUICK, "", throttling)).unwrap();
    let layer = ServiceConfigLayer::new(config);
    let service = layer.layer(channel.clone());
    let mut a = tonic::client::Grpc::new(service.clone());
    let mut b = tonic::client::Grpc::new(service);
    let mut c = tonic::client::Grpc::new(layer.clone().layer(channel));
    let mut counts = Vec::new();
    for client in [&mut a, &mut b, &mut c] {
        let before = seen.calls();
        let status = call(client, "/service/method").await.unwrap_err();
        assert_eq!(status.code(), Code::Aborted);
        counts.push(seen.calls() - before);
    }
    assert_eq!(counts, [3, 2, 1]);
}

/// A pushback that says "don't retry" still takes a token: from 10 (ratio 0.1), four calls
/// refused at once leave 6; the next call's failure leaves 5, half: not retried.
#[tokio::test]
async fn a_pushback_that_refuses_a_retry_still_counts_for_the_throttle() {
    let throttling = r#", "retryThrottling": { "maxTokens": 10, "tokenRatio": 0.1 }"#;
    let refused = Reply::Pushback(Code::Aborted, "-1");
    let (channel, seen) = serve(move |n| match n {
        0..4 => refused.clone(),
        _ => Reply::Fail(Code::Aborted),
    })
    .await;
    let mut client = client(&config(3, QUICK, "", throttling), channel);
    for _ in 0..4 {
        call(&mut client, "/service/method").await.unwrap_err();
    }
    assert_eq!(seen.calls(), 4);
    call(&mut client, "/service/method").await.unwrap_err();
    assert_eq!(seen.calls(), 5, "the fifth failure is throttled");
}

/// Without `retryThrottling`, no budget at all: every call makes all its attempts.
#[tokio::test]
async fn without_retry_throttling_no_budget_stops_a_retry() {
    let (channel, seen) = serve(replies(&[Reply::Fail(Code::Aborted)])).await;
    let mut client = client(&config(5, "0.001s", "", ""), channel);
    for _ in 0..10 {
        call(&mut client, "/service/method").await.unwrap_err();
    }
    assert_eq!(seen.calls(), 50);
}

/// The method's `timeout` is the call's deadline: it goes out as `grpc-timeout`, cuts an
/// attempt still running, and the call ends `DEADLINE_EXCEEDED`.
#[tokio::test]
async fn the_methods_timeout_bounds_the_call() {
    let json = r#"{ "methodConfig": [{
        "name": [{ "service": "service" }],
        "timeout": "0.3s",
        "retryPolicy": { "maxAttempts": 5, "initialBackoff": "0.01s", "maxBackoff": "0.01s",
                         "backoffMultiplier": 1, "retryableStatusCodes": ["ABORTED"] }
    }] }"#;
    let hang = Reply::After(Duration::from_secs(5), Box::new(Reply::Ok));
    let (channel, seen) = serve(replies(&[hang])).await;
    let mut client = client(json, channel);
    let start = Instant::now();
    let status = call(&mut client, "/service/method").await.unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    assert!(start.elapsed() >= Duration::from_millis(300));
    assert!(start.elapsed() < Duration::from_secs(3));
    assert_eq!(seen.calls(), 1);
    let sent = seen.values("grpc-timeout")[0].clone().unwrap();
    assert!(
        sent.ends_with('u') || sent.ends_with('m') || sent.ends_with('n'),
        "{sent}"
    );
}

/// A call's own deadline (`grpc-timeout`, from tonic's `set_timeout`) shorter than its
/// method's `timeout` bounds it instead, and each retry is sent with what is left.
#[tokio::test]
async fn the_calls_own_deadline_when_shorter() {
    let json = r#"{ "methodConfig": [{
        "name": [{ "service": "service" }],
        "timeout": "10s",
        "retryPolicy": { "maxAttempts": 5, "initialBackoff": "0.05s", "maxBackoff": "0.05s",
                         "backoffMultiplier": 1, "retryableStatusCodes": ["ABORTED"] }
    }] }"#;
    let slow = Reply::After(
        Duration::from_millis(100),
        Box::new(Reply::Fail(Code::Aborted)),
    );
    let (channel, seen) = serve(replies(&[slow])).await;
    let mut client = client(json, channel);
    client.ready().await.unwrap();
    let mut request = tonic::Request::new(Bytes::from_static(b"foo"));
    request.set_timeout(Duration::from_millis(400));
    let path = http::uri::PathAndQuery::from_static("/service/method");
    let start = Instant::now();
    let outcome = client.unary::<_, Bytes, _>(request, path, Raw).await;
    let status = outcome.unwrap_err();
    assert!(
        matches!(status.code(), Code::DeadlineExceeded | Code::Aborted),
        "{status:?}"
    );
    assert!(start.elapsed() < Duration::from_secs(2));
    // Attempts of 100 ms, waits of 50 ms (±20%) within 400 ms: at most 3 attempts.
    assert!((2..=3).contains(&seen.calls()), "{}", seen.calls());
    let sent = seen.values("grpc-timeout");
    assert!(sent.iter().all(Option::is_some), "{sent:?}");
}

/// A code the policy does not retry ends the call counted neither way (gRPC C-core counts a
/// success for `OK` alone): from a bucket of 3 (ratio 1) drained to 1, three
/// `INVALID_ARGUMENT`s give nothing back, and the next failure is not retried; three `OK`s
/// fill it again, and the next failing call is retried once.
#[tokio::test]
async fn a_code_not_retried_counts_neither_way_for_the_throttle() {
    let throttling = r#", "retryThrottling": { "maxTokens": 3, "tokenRatio": 1 }"#;
    let (channel, seen) = serve(|n| match n {
        0..2 => Reply::Fail(Code::Aborted),
        2..5 => Reply::Fail(Code::InvalidArgument),
        5 => Reply::Fail(Code::Aborted),
        6..9 => Reply::Ok,
        _ => Reply::Fail(Code::Aborted),
    })
    .await;
    let mut client = client(&config(5, QUICK, "", throttling), channel);
    call(&mut client, "/service/method").await.unwrap_err();
    assert_eq!(
        seen.calls(),
        2,
        "3 → 2, retried; 2 → 1, half of 3 or less: not"
    );
    for _ in 0..3 {
        let status = call(&mut client, "/service/method").await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument);
    }
    call(&mut client, "/service/method").await.unwrap_err();
    assert_eq!(seen.calls(), 6, "1 → 0: not retried");
    for _ in 0..3 {
        call(&mut client, "/service/method").await.unwrap();
    }
    call(&mut client, "/service/method").await.unwrap_err();
    assert_eq!(seen.calls(), 11, "3 → 2, retried; 2 → 1: not");
}

// --- hedgingPolicy ---------------------------------------------------------------------------

/// `/service/method` with a `hedgingPolicy`: `max_attempts` copies, `delay` apart, going on
/// after `UNAVAILABLE`.
fn hedging(max_attempts: u32, delay: &str, top: &str) -> String {
    format!(
        r#"{{
  "methodConfig": [{{
    "name": [{{ "service": "service", "method": "method" }}],
    "hedgingPolicy": {{
      "maxAttempts": {max_attempts},
      "hedgingDelay": "{delay}",
      "nonFatalStatusCodes": ["UNAVAILABLE"]
    }}
  }}]{top}
}}"#
    )
}

fn slow(wait_ms: u64, then: Reply) -> Reply {
    Reply::After(Duration::from_millis(wait_ms), Box::new(then))
}

/// A copy not answered within `hedgingDelay` gets the next beside it; the first answer wins,
/// and the hedge carries `grpc-previous-rpc-attempts`.
#[tokio::test]
async fn hedging_sends_the_next_copy_after_the_delay() {
    let (channel, seen) = serve(replies(&[slow(3_000, Reply::Ok), Reply::Ok])).await;
    let mut client = client(&hedging(3, "0.1s", ""), channel);
    let start = Instant::now();
    assert_eq!(call(&mut client, "/service/method").await.unwrap(), "foo");
    assert!(start.elapsed() >= Duration::from_millis(100));
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "the hedge answered"
    );
    assert_eq!(seen.calls(), 2);
    assert_eq!(
        seen.values("grpc-previous-rpc-attempts"),
        [None, Some("1".into())]
    );
    let at = seen.arrivals();
    assert!(at[1] - at[0] >= Duration::from_millis(100));
}

/// `maxAttempts` copies at most; a `hedgingDelay` of 0 sends them all at once.
#[tokio::test]
async fn hedging_with_no_delay_sends_every_copy_at_once() {
    let (channel, seen) = serve(replies(&[slow(300, Reply::Ok)])).await;
    let mut client = client(&hedging(3, "0s", ""), channel);
    assert_eq!(call(&mut client, "/service/method").await.unwrap(), "foo");
    assert_eq!(seen.calls(), 3);
    let at = seen.arrivals();
    assert!(
        at[2] - at[0] < Duration::from_millis(200),
        "{:?}",
        at[2] - at[0]
    );
}

/// A fatal code (one not in `nonFatalStatusCodes`) ends the call with it, the copy still
/// running dropped, no further copy sent.
#[tokio::test]
async fn a_fatal_code_ends_the_hedged_call() {
    let (channel, seen) = serve(replies(&[
        slow(2_000, Reply::Ok),
        Reply::Fail(Code::InvalidArgument),
    ]))
    .await;
    let mut client = client(&hedging(3, "0.05s", ""), channel);
    let start = Instant::now();
    let status = call(&mut client, "/service/method").await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(start.elapsed() < Duration::from_secs(1));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(seen.calls(), 2);
}

/// A non-fatal code lets the other copies run: the first copy's late answer is the call's.
#[tokio::test]
async fn a_non_fatal_code_lets_the_other_copies_run() {
    let unavailable = Reply::Fail(Code::Unavailable);
    let (channel, seen) = serve(replies(&[slow(300, Reply::Ok), unavailable])).await;
    let mut client = client(&hedging(3, "0.05s", ""), channel);
    assert_eq!(call(&mut client, "/service/method").await.unwrap(), "foo");
    assert_eq!(seen.calls(), 3);
}

/// The throttle holds hedges back as it holds retries, and counts each copy that fails: from
/// 2 tokens, a call whose two copies fail leaves none, and the next call's hedge is not sent;
/// its success gives one back, still half: not the next one's either.
#[tokio::test]
async fn the_throttle_holds_hedges_back() {
    let throttling = r#", "retryThrottling": { "maxTokens": 2, "tokenRatio": 1 }"#;
    let (channel, seen) = serve(|n| match n {
        0 => Reply::Fail(Code::Unavailable),
        1 => Reply::Fail(Code::Unavailable),
        _ => slow(300, Reply::Ok),
    })
    .await;
    let mut client = client(&hedging(2, "0s", throttling), channel);
    call(&mut client, "/service/method").await.unwrap_err();
    assert_eq!(seen.calls(), 2, "both copies, the bucket full");
    assert_eq!(call(&mut client, "/service/method").await.unwrap(), "foo");
    assert_eq!(
        seen.calls(),
        3,
        "no hedge while the bucket is at half or below"
    );
    assert_eq!(call(&mut client, "/service/method").await.unwrap(), "foo");
    assert_eq!(seen.calls(), 4, "1 token of 2: half");
    assert_eq!(call(&mut client, "/service/method").await.unwrap(), "foo");
    assert_eq!(seen.calls(), 6, "2 tokens: the hedge is sent");
}

/// A server-streaming call is retried while its answer is trailers-only; once its headers
/// came, it is committed: its messages reach the caller, and a failure after them is the
/// caller's to see, not retried.
#[tokio::test]
async fn a_server_streaming_call_is_retried_until_its_headers_come() {
    let json = r#"{ "methodConfig": [{
        "name": [{ "service": "service" }],
        "retryPolicy": { "maxAttempts": 3, "initialBackoff": "0.01s", "maxBackoff": "0.01s",
                         "backoffMultiplier": 1, "retryableStatusCodes": ["ABORTED"] }
    }] }"#;
    let failed = Reply::Fail(Code::Aborted);
    let (channel, seen) = serve(replies(&[failed, Reply::StreamThen(Code::Aborted)])).await;
    let mut client = client(json, channel);
    client.ready().await.unwrap();
    let path = http::uri::PathAndQuery::from_static("/service/ListStream");
    let request = tonic::Request::new(Bytes::from_static(b"foo"));
    let mut messages = client
        .server_streaming::<_, Bytes, _>(request, path, Raw)
        .await
        .unwrap()
        .into_inner();
    assert_eq!(messages.message().await.unwrap().unwrap(), "foo");
    let status = messages.message().await.unwrap_err();
    assert_eq!(status.code(), Code::Aborted);
    assert_eq!(seen.calls(), 2);
}

/// The future of a call through the layer is `Send`: a client can be used from spawned tasks.
#[tokio::test]
async fn a_call_through_the_layer_is_send() {
    fn send<T: Send>(t: T) -> T {
        t
    }
    let (channel, seen) = serve(replies(&[Reply::Ok])).await;
    let mut client = client(&config(2, QUICK, "", ""), channel);
    let task = tokio::spawn(send(
        async move { call(&mut client, "/service/method").await },
    ));
    assert_eq!(task.await.unwrap().unwrap(), "foo");
    assert_eq!(seen.calls(), 1);
}

/// A6: a non-fatal code sends the next copy at once, not after its `hedgingDelay`.
#[tokio::test]
async fn a_non_fatal_code_sends_the_next_copy_at_once() {
    let unavailable = Reply::Fail(Code::Unavailable);
    let (channel, seen) = serve(replies(&[slow(3_000, Reply::Ok), unavailable, Reply::Ok])).await;
    let mut client = client(&hedging(3, "0.5s", ""), channel);
    assert_eq!(call(&mut client, "/service/method").await.unwrap(), "foo");
    assert_eq!(seen.calls(), 3);
    let at = seen.arrivals();
    assert!(at[1] - at[0] >= Duration::from_millis(500));
    assert!(
        at[2] - at[1] < Duration::from_millis(250),
        "{:?}",
        at[2] - at[1]
    );
}

/// A6: a pushback of `n` ms on a non-fatal code sends the next copy `n` ms later.
#[tokio::test]
async fn a_pushback_sets_when_the_next_copy_goes() {
    let pushed = Reply::Pushback(Code::Unavailable, "100");
    let (channel, seen) = serve(replies(&[slow(3_000, Reply::Ok), pushed, Reply::Ok])).await;
    let mut client = client(&hedging(3, "0.5s", ""), channel);
    assert_eq!(call(&mut client, "/service/method").await.unwrap(), "foo");
    let at = seen.arrivals();
    assert_eq!(at.len(), 3);
    let gap = at[2] - at[1];
    assert!(gap >= Duration::from_millis(100), "{gap:?}");
    assert!(
        gap < Duration::from_millis(400),
        "not the hedging delay: {gap:?}"
    );
}

// --- What a stranger sends: malformed and extreme headers, both ways ------------------------

/// A server's pushback that is not a number of milliseconds gRPC reads (empty, a word, a
/// fraction, a sign, past C-core's `int64`) says "don't retry", as A6 reads a malformed one:
/// the call ends on that answer. (One past `u64` used to be read as the longest wait, and the
/// call, with no deadline, slept for good.)
#[tokio::test]
async fn a_malformed_pushback_ends_the_call_on_its_answer() {
    let past = ["9223372036854775808", "18446744073709551616"];
    for value in ["", "soon", "1.5", "+5", " 5", "-0", past[0], past[1]] {
        let (channel, seen) = serve(replies(&[Reply::Pushback(Code::Aborted, value)])).await;
        let mut client = client(&config(5, QUICK, "", ""), channel);
        let status = call(&mut client, "/service/method").await.unwrap_err();
        assert_eq!(
            (status.code(), seen.calls()),
            (Code::Aborted, 1),
            "{value:?}"
        );
    }
}

/// A pushback longer than the call may wait (an hour, the call's deadline 300 ms away) does not
/// hold the caller for it: the call ends at once with the server's answer, sent once.
#[tokio::test]
async fn a_pushback_past_the_calls_deadline_ends_the_call_at_once() {
    let json = r#"{ "methodConfig": [{
        "name": [{ "service": "service" }],
        "timeout": "0.3s",
        "retryPolicy": { "maxAttempts": 5, "initialBackoff": "0.01s", "maxBackoff": "0.01s",
                         "backoffMultiplier": 1, "retryableStatusCodes": ["ABORTED"] }
    }] }"#;
    let (channel, seen) = serve(replies(&[Reply::Pushback(Code::Aborted, "3600000")])).await;
    let mut client = client(json, channel);
    let start = Instant::now();
    let status = call(&mut client, "/service/method").await.unwrap_err();
    assert_eq!((status.code(), seen.calls()), (Code::Aborted, 1));
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
}

/// A caller's `grpc-timeout` that is not one (a word, no unit, too many digits) is ignored:
/// the call keeps its method's policy, retried as any other.
#[tokio::test]
async fn a_callers_malformed_grpc_timeout_is_ignored() {
    for value in ["soon", "100", "123456789S", "-5S", "5X"] {
        let (channel, seen) = serve(replies(&[Reply::Fail(Code::Aborted), Reply::Ok])).await;
        let mut client = client(&config(3, QUICK, "", ""), channel);
        client.ready().await.unwrap();
        let mut request = tonic::Request::new(Bytes::from_static(b"foo"));
        request
            .metadata_mut()
            .insert("grpc-timeout", value.parse().unwrap());
        let path = http::uri::PathAndQuery::from_static("/service/method");
        let answer = client.unary::<_, Bytes, _>(request, path, Raw).await;
        assert_eq!(
            answer.map(|a| a.into_inner()).ok(),
            Some(Bytes::from_static(b"foo")),
            "{value:?}"
        );
        assert_eq!(seen.calls(), 2, "{value:?}");
    }
}

/// What one caller sends never changes what another gets: a caller whose deadline has all but
/// passed (`grpc-timeout: 1n`) is cut before the server answers, and takes nothing from the
/// channel's throttle (3 tokens: a failure leaves 2, above half, and the next is retried; two
/// leave 1, and it is not). So the next caller's failure is retried once, then refused.
#[tokio::test]
async fn a_callers_spent_deadline_takes_nothing_from_the_throttle() {
    let json = r#"{ "methodConfig": [{
        "name": [{ "service": "service" }],
        "retryPolicy": { "maxAttempts": 5, "initialBackoff": "0.01s", "maxBackoff": "0.01s",
                         "backoffMultiplier": 1, "retryableStatusCodes": ["ABORTED"] }
    }], "retryThrottling": { "maxTokens": 3, "tokenRatio": 0.1 } }"#;
    let slow = Reply::After(
        Duration::from_millis(200),
        Box::new(Reply::Fail(Code::Aborted)),
    );
    let (channel, seen) = serve(replies(&[slow])).await;
    let mut client = client(json, channel);
    client.ready().await.unwrap();
    let mut request = tonic::Request::new(Bytes::from_static(b"foo"));
    request.set_timeout(Duration::from_nanos(1));
    let path = http::uri::PathAndQuery::from_static("/service/stranger");
    let status = client
        .unary::<_, Bytes, _>(request, path, Raw)
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    // The next caller (its attempts told apart by their path: the stranger's may reach the
    // server late): two failures, the second refused a retry by the throttle.
    let status = call(&mut client, "/service/method").await.unwrap_err();
    assert_eq!(status.code(), Code::Aborted);
    let mine = seen
        .paths()
        .iter()
        .filter(|p| *p == "/service/method")
        .count();
    assert_eq!(mine, 2);
}

// --- gRFC A96: each call's retry figures (feature `metrics`) ----------------------------------

/// One record per call at its end, of each figure that is not zero, labelled `grpc.method`
/// and `grpc.target`: a call retried twice records 2 retries and its time with no attempt in
/// flight; a call answered at once records nothing; a hedged call its hedges.
#[cfg(feature = "metrics")]
#[test]
fn a96_each_calls_retries_hedges_and_delay_once_at_its_end() {
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};

    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    metrics::with_local_recorder(&recorder, || {
        rt.block_on(async {
            let script = replies(&[
                Reply::Fail(Code::Aborted),
                Reply::Fail(Code::Aborted),
                Reply::Ok,
            ]);
            let (channel, _) = serve(script).await;
            let config = ServiceConfig::from_json(&config(5, QUICK, "", "")).unwrap();
            let layer = ServiceConfigLayer::new(config).target("greeter");
            let mut client = tonic::client::Grpc::new(layer.layer(channel));
            assert_eq!(call(&mut client, "/service/method").await.unwrap(), "foo");
            // Answered at once: nothing to record.
            assert_eq!(call(&mut client, "/service/method").await.unwrap(), "foo");

            let (channel, _) = serve(replies(&[slow(300, Reply::Ok), Reply::Ok])).await;
            let mut hedged = client_of(&hedging(3, "0.05s", ""), channel, "hedged");
            assert_eq!(call(&mut hedged, "/service/method").await.unwrap(), "foo");
        });
    });
    let mut seen = Vec::new();
    for (key, _, _, value) in snapshotter.snapshot().into_vec() {
        let key = key.key();
        let label = |name: &str| {
            key.labels()
                .find(|l| l.key() == name)
                .map(|l| l.value().to_owned())
        };
        // The crate's own metrics (`retry_jitter_*`) are recorded too: A96's alone here.
        let DebugValue::Histogram(values) = value else {
            continue;
        };
        if !key.name().starts_with("grpc.") {
            continue;
        }
        let values: Vec<f64> = values.into_iter().map(|v| v.into_inner()).collect();
        seen.push((
            key.name().to_owned(),
            label("grpc.method"),
            label("grpc.target"),
            values,
        ));
    }
    seen.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let method = Some("service/method".to_owned());
    assert_eq!(seen.len(), 3, "{seen:?}");
    let (hedges, retries, delay) = (&seen[0], &seen[1], &seen[2]);
    assert_eq!(
        (
            retries.0.as_str(),
            &retries.1,
            retries.2.as_deref(),
            &retries.3[..]
        ),
        (
            "grpc.client.call.retries",
            &method,
            Some("greeter"),
            &[2.0][..]
        )
    );
    assert_eq!(
        (
            hedges.0.as_str(),
            &hedges.1,
            hedges.2.as_deref(),
            &hedges.3[..]
        ),
        (
            "grpc.client.call.hedges",
            &method,
            Some("hedged"),
            &[1.0][..]
        )
    );
    // Two waits of 10 ms ±20% (`QUICK`, multiplier 1.6): at least 16 ms with none in flight.
    assert_eq!(delay.0, "grpc.client.call.retry_delay");
    assert_eq!((delay.2.as_deref(), delay.3.len()), (Some("greeter"), 1));
    assert!(delay.3[0] >= 0.016 && delay.3[0] < 1.0, "{delay:?}");
}

/// A client over a layer for `target` of the config `json`.
#[cfg(feature = "metrics")]
fn client_of(json: &str, channel: Channel, target: &str) -> Client {
    let config = ServiceConfig::from_json(json).unwrap();
    let layer = ServiceConfigLayer::new(config).target(target);
    tonic::client::Grpc::new(layer.layer(channel))
}

// --- A gRPC call is a POST: a server that answers 500, one that closes after reading -------

/// A raw HTTP/2 server that reads each call whole, counts it, then closes the connection
/// without answering (the server may have run it); a channel to it.
async fn reads_then_closes() -> (Channel, Arc<std::sync::atomic::AtomicU32>) {
    use std::sync::atomic::{AtomicU32, Ordering};
    let calls = Arc::new(AtomicU32::new(0));
    let counted = calls.clone();
    let addr = h2_frames::serve_each(move |mut conn| {
        let calls = counted.clone();
        async move {
            if h2_frames::read_request(&mut conn).await.is_ok() {
                calls.fetch_add(1, Ordering::SeqCst);
            }
            h2_frames::close(conn).await;
        }
    })
    .await;
    let channel = Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_lazy();
    (channel, calls)
}

/// An HTTP/2 server (h2's) answering every request `500` with no `grpc-status`, counting them.
async fn answers_500() -> (Channel, Arc<std::sync::atomic::AtomicU32>) {
    use std::sync::atomic::{AtomicU32, Ordering};
    let calls = Arc::new(AtomicU32::new(0));
    let counted = calls.clone();
    let addr = h2_frames::serve_each(move |conn| {
        let calls = counted.clone();
        async move {
            let Ok(mut conn) = h2::server::handshake(conn).await else {
                return;
            };
            while let Some(Ok((_, mut respond))) = conn.accept().await {
                calls.fetch_add(1, Ordering::SeqCst);
                let answer = http::Response::builder().status(500).body(()).unwrap();
                let _ = respond.send_response(answer, true);
            }
        }
    })
    .await;
    let channel = Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_lazy();
    (channel, calls)
}

/// A server that answers HTTP `500` (no `grpc-status`: gRPC reads it as `UNKNOWN`) gets the
/// call once when the policy does not list `UNKNOWN`, and `maxAttempts` times when it does:
/// the config is the word that the method may be sent again, whatever its HTTP method.
#[tokio::test]
async fn a_post_answered_500_is_sent_again_only_if_the_config_lists_unknown() {
    use std::sync::atomic::Ordering;
    for (codes, sent) in [(r#""ABORTED""#, 1), (r#""UNKNOWN""#, 3)] {
        let (channel, calls) = answers_500().await;
        let json = config(3, QUICK, "", "").replace(r#""ABORTED""#, codes);
        let mut client = client(&json, channel);
        let status = call(&mut client, "/service/method").await.unwrap_err();
        assert_eq!(status.code(), Code::Unknown, "{status:?}");
        assert_eq!(calls.load(Ordering::SeqCst), sent, "{codes}");
    }
}

/// A server that reads the call whole and closes the connection may have run it: the
/// channel's error is gRPC's `UNAVAILABLE`, sent again only where the policy lists it.
#[tokio::test]
async fn a_post_to_a_server_that_closes_after_reading_is_sent_again_only_if_listed() {
    use std::sync::atomic::Ordering;
    for (codes, sent) in [(r#""ABORTED""#, 1), (r#""UNAVAILABLE""#, 3)] {
        let (channel, calls) = reads_then_closes().await;
        let json = config(3, QUICK, "", "").replace(r#""ABORTED""#, codes);
        let mut client = client(&json, channel);
        call(&mut client, "/service/method").await.unwrap_err();
        assert_eq!(calls.load(Ordering::SeqCst), sent, "{codes}");
    }
}

// --- Transparent retries: an attempt that never reached the server's application ------------

/// The server of [`serve`] behind a listener whose first `going_away` connections each read a
/// call whole and answer it with `GOAWAY` (last stream id 0: the server processed none), then
/// close: a channel to it, what the server's application saw, and how many calls went away.
async fn serve_going_away(
    script: impl Fn(usize) -> Reply + Send + Sync + 'static,
    going_away: usize,
) -> (Channel, Arc<Seen>, Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let seen = Arc::new(Seen::default());
    let server = Server {
        seen: seen.clone(),
        script: Arc::new(script),
    };
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<std::io::Result<tokio::net::TcpStream>>();
    let incoming = tonic::codegen::tokio_stream::wrappers::UnboundedReceiverStream::new(rx);
    let serving = tonic::transport::Server::builder()
        .add_service(Service(server))
        .serve_with_incoming(incoming);
    tokio::spawn(serving);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let gone = Arc::new(AtomicUsize::new(0));
    let counted = gone.clone();
    tokio::spawn(async move {
        for n in 0.. {
            let (mut conn, _) = listener.accept().await.unwrap();
            if n >= going_away {
                let _ = tx.send(Ok(conn));
                continue;
            }
            let counted = counted.clone();
            tokio::spawn(async move {
                if h2_frames::read_request(&mut conn).await.is_ok() {
                    counted.fetch_add(1, Ordering::SeqCst);
                    let frame = h2_frames::go_away(0, 0, b"");
                    let _ = tokio::io::AsyncWriteExt::write_all(&mut conn, &frame).await;
                }
                h2_frames::close(conn).await;
            });
        }
    });
    let channel = Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_lazy();
    (channel, seen, gone)
}

/// `retry_transparent_goaway`: a call on a connection that goes away before the server
/// processed it is sent again at once, without counting against `maxAttempts`: with two
/// attempts, the `ABORTED` that follows is still retried, and the call succeeds. Neither
/// the call sent again nor the first the server sees carries `grpc-previous-rpc-attempts`
/// (gRPC sends none for a transparent retry). gRPC's test runs without a retry policy; here
/// a method without one is sent once, so the method has one.
#[tokio::test]
async fn retry_transparent_goaway() {
    use std::sync::atomic::Ordering;
    let (channel, seen, gone) =
        serve_going_away(replies(&[Reply::Fail(Code::Aborted), Reply::Ok]), 1).await;
    let mut client = client(&config(2, QUICK, "", ""), channel);
    assert_eq!(call(&mut client, "/service/method").await.unwrap(), "foo");
    assert_eq!((gone.load(Ordering::SeqCst), seen.calls()), (1, 2));
    assert_eq!(
        seen.values("grpc-previous-rpc-attempts"),
        [None, Some("1".into())]
    );
}

/// An attempt refused by the server's transport is sent again once: a server that always
/// goes away gets each of the two attempts twice, and the call ends with the channel's error
/// (as tonic reads an HTTP/2 `GOAWAY`).
#[tokio::test]
async fn an_attempt_that_went_away_is_sent_again_once_per_attempt() {
    use std::sync::atomic::Ordering;
    let (channel, seen, gone) = serve_going_away(replies(&[Reply::Ok]), usize::MAX).await;
    let mut client = client(&config(2, QUICK, "", ""), channel);
    let status = call(&mut client, "/service/method").await.unwrap_err();
    assert!(status.message().contains("h2 protocol error"), "{status:?}");
    assert_eq!((gone.load(Ordering::SeqCst), seen.calls()), (4, 0));
}

/// A transparent retry takes nothing from the throttle: from a bucket of 3 (ratio 1), an
/// attempt that went away, then an `ABORTED`, leave 2 tokens, above half: the `ABORTED` is
/// retried and the call succeeds (had the first taken a token, 1 would be left: no retry).
#[tokio::test]
async fn a_transparent_retry_takes_nothing_from_the_throttle() {
    use std::sync::atomic::Ordering;
    let throttled = r#", "retryThrottling": { "maxTokens": 3, "tokenRatio": 1 }"#;
    let (channel, seen, gone) =
        serve_going_away(replies(&[Reply::Fail(Code::Aborted), Reply::Ok]), 1).await;
    let mut client = client(&config(5, QUICK, "", throttled), channel);
    assert_eq!(call(&mut client, "/service/method").await.unwrap(), "foo");
    assert_eq!((gone.load(Ordering::SeqCst), seen.calls()), (1, 2));
}

/// A request hyper handed back unsent (queued for a connection that closed: "operation was
/// canceled", caused by "connection closed"), as a channel fails it.
#[derive(Debug)]
struct Unsent(Closed);

#[derive(Debug)]
struct Closed;

impl std::fmt::Display for Unsent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("operation was canceled")
    }
}

impl std::error::Error for Unsent {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

impl std::fmt::Display for Closed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection closed")
    }
}

impl std::error::Error for Closed {}

/// `retry_transparent_not_sent_on_wire`: a call that never left the client is sent again at
/// once until its deadline, however many times, uncounted; without a deadline, once per
/// attempt (never a spin). hyper fails a request this way only in a race (its connection
/// closing while it waits), so the channel here is a stand-in that follows a script of
/// answers, one per send.
///
/// Without a deadline, "once per attempt" is told from "once per call" by a second attempt
/// that meets an unsent failure too: unsent (resent, attempt 1), `ABORTED` (attempt 1
/// counted, retried), unsent (attempt 2: resent only if each attempt gets its own), `OK`: 4
/// sends and `OK`. Once per call, the second unsent would end the call (its `UNAVAILABLE` is
/// not listed, and the attempts are spent) after 3 sends. Five unsent sends in a row, without
/// a deadline, end the call after 2: the resend's own failure is not resent (no spin).
#[tokio::test]
async fn retry_transparent_not_sent_on_wire() {
    const U: Wire = Wire::Unsent;
    const OK: Wire = Wire::Status(Code::Ok);
    const ABORTED: Wire = Wire::Status(Code::Aborted);
    let cases: [(bool, &[Wire], u32, bool); 3] = [
        (true, &[U, U, U, U, U, OK], 6, true),
        (false, &[U, U, U, U, U, OK], 2, false),
        (false, &[U, ABORTED, U, OK], 4, true),
    ];
    for (deadline, script, sends, answered) in cases {
        let json = config(2, QUICK, "", "");
        let (answer, sent) = stand_in_call(&json, deadline, script).await;
        let status = answer.as_ref().map(|a| a.headers()["grpc-status"].clone());
        let ok = matches!(&status, Ok(code) if code == "0");
        assert_eq!(ok, answered, "deadline: {deadline}, {script:?}: {status:?}");
        assert_eq!(sent, sends, "deadline: {deadline}, {script:?}");
    }
}

/// A refused connection is not a transparent retry, even with a deadline (sending again at
/// once would spin on the connect): with `UNAVAILABLE` listed, each of three attempts is
/// sent once and counted, and the call ends on the last refusal.
#[tokio::test]
async fn a_refused_connection_is_retried_as_counted_attempts_not_transparently() {
    let json = config(3, QUICK, "", "").replace(r#""ABORTED""#, r#""UNAVAILABLE""#);
    let mut script = vec![Wire::Refused; 10];
    script.push(Wire::Status(Code::Ok));
    let (answer, sent) = stand_in_call(&json, true, &script).await;
    assert!(answer.is_err());
    assert_eq!(sent, 3);
}

/// What the stand-in channel of [`stand_in_call`] does with one send.
#[derive(Clone, Copy, Debug)]
enum Wire {
    /// Fails it as hyper fails a request it never wrote ([`Unsent`]).
    Unsent,
    /// Fails it as a refused connect.
    Refused,
    /// Answers it with this code (trailers-only).
    Status(Code),
}

/// One call of `/service/method` (with `grpc-timeout: 10S` if `deadline`) through a layer of
/// the service config `json` over a stand-in channel whose `n`-th send gets `script[n]` (past
/// the script, its last): the outcome, and the sends the channel got.
async fn stand_in_call(
    json: &str,
    deadline: bool,
    script: &[Wire],
) -> (
    Result<http::Response<tonic::body::Body>, retry_jitter::tower::BoxError>,
    u32,
) {
    use retry_jitter::tower::BoxError;
    use std::sync::atomic::{AtomicU32, Ordering};
    use tower::{Service as _, ServiceExt as _};
    let sent = Arc::new(AtomicU32::new(0));
    let counted = sent.clone();
    let script = script.to_vec();
    let channel = tower::service_fn(move |_: http::Request<tonic::body::Body>| {
        let n = counted.fetch_add(1, Ordering::SeqCst) as usize;
        let wire = script[n.min(script.len() - 1)];
        async move {
            let code = match wire {
                Wire::Unsent => return Err(Box::new(Unsent(Closed)) as BoxError),
                Wire::Refused => {
                    let error = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
                    return Err(Box::new(error) as BoxError);
                }
                Wire::Status(code) => code as i32,
            };
            let answer = http::Response::builder()
                .header("content-type", "application/grpc")
                .header("grpc-status", code.to_string())
                .body(tonic::body::Body::empty())
                .unwrap();
            Ok(answer)
        }
    });
    let config = ServiceConfig::from_json(json).unwrap();
    let mut service = ServiceConfigLayer::new(config).layer(channel);
    let mut request = http::Request::post("http://service/service/method")
        .header("content-type", "application/grpc");
    if deadline {
        request = request.header("grpc-timeout", "10S");
    }
    let request = request.body(tonic::body::Body::empty()).unwrap();
    let answer = service.ready().await.unwrap().call(request).await;
    (answer, sent.load(Ordering::SeqCst))
}

/// A96's `grpc.client.call.transparent_retries`: a call whose first send went away and whose
/// next was answered records one transparent retry, and no retry (the attempt was not
/// counted).
#[cfg(feature = "metrics")]
#[test]
fn a96_records_a_calls_transparent_retries() {
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};

    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    metrics::with_local_recorder(&recorder, || {
        rt.block_on(async {
            let (channel, seen, _) = serve_going_away(replies(&[Reply::Ok]), 1).await;
            let config = ServiceConfig::from_json(&config(2, QUICK, "", "")).unwrap();
            // A user's `stats` hook hears the same figures, beside A96's.
            let stats = Arc::new(Mutex::new(None));
            let kept = stats.clone();
            let layer = ServiceConfigLayer::new(config).target("greeter").stats(
                move |s: &retry_jitter::RetryStats| {
                    *kept.lock().unwrap() = Some((s.attempts, s.transparent_retries));
                },
            );
            let mut client = tonic::client::Grpc::new(layer.layer(channel));
            assert_eq!(call(&mut client, "/service/method").await.unwrap(), "foo");
            assert_eq!(seen.calls(), 1);
            assert_eq!(*stats.lock().unwrap(), Some((1, 1)));
        });
    });
    let grpc: Vec<(String, Vec<f64>)> = snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .filter(|(key, ..)| key.key().name().starts_with("grpc."))
        .filter_map(|(key, _, _, value)| match value {
            DebugValue::Histogram(values) => Some((
                key.key().name().to_owned(),
                values.into_iter().map(|v| v.into_inner()).collect(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        grpc,
        [("grpc.client.call.transparent_retries".to_owned(), vec![1.0])]
    );
}

// --- The hooks every face has: notify, give_up, stats, cancel, breaker ---------------------

/// `notify` hears each retry, `give_up` the end, `stats` the call's figures: the same hooks,
/// with the same names and meaning, as `RetryLayer`'s and `#[retry]`'s.
#[tokio::test]
async fn the_layer_tells_notify_give_up_and_stats() {
    use retry_jitter::http::Failed;
    use retry_jitter::tower::BoxError;
    use retry_jitter::{GiveUp, GiveUpReason, RetryEvent, RetryStats};
    let (channel, seen) = serve(replies(&[Reply::Fail(Code::Aborted)])).await;
    let told = Arc::new(Mutex::new(Vec::new()));
    let (notified, gave_up, figures) = (told.clone(), told.clone(), told.clone());
    let config = ServiceConfig::from_json(&config(3, QUICK, "", "")).unwrap();
    let layer = ServiceConfigLayer::new(config)
        .notify(move |_: &Failed<'_, BoxError>, ev: &RetryEvent| {
            notified
                .lock()
                .unwrap()
                .push(format!("retry {}", ev.attempt));
        })
        .give_up(move |_: &Failed<'_, BoxError>, g: &GiveUp| {
            let reason = g.reason == GiveUpReason::Attempts;
            gave_up
                .lock()
                .unwrap()
                .push(format!("gave up {} {reason}", g.calls));
        })
        .stats(move |s: &RetryStats| {
            figures
                .lock()
                .unwrap()
                .push(format!("stats {}", s.attempts));
        });
    let mut client = tonic::client::Grpc::new(layer.layer(channel));
    let status = call(&mut client, "/service/method").await.unwrap_err();
    assert_eq!((status.code(), seen.calls()), (Code::Aborted, 3));
    assert_eq!(
        *told.lock().unwrap(),
        ["retry 1", "retry 2", "gave up 3 true", "stats 3"]
    );
}

/// A cancelled token stops the retries: the call ends with its first answer.
#[tokio::test]
async fn the_layer_stops_retrying_once_cancelled() {
    let (channel, seen) = serve(replies(&[Reply::Fail(Code::Aborted), Reply::Ok])).await;
    let shutdown = retry_jitter::CancelToken::new();
    shutdown.cancel();
    let config = ServiceConfig::from_json(&config(3, QUICK, "", "")).unwrap();
    let layer = ServiceConfigLayer::new(config).cancel(&shutdown);
    let mut client = tonic::client::Grpc::new(layer.layer(channel));
    let status = call(&mut client, "/service/method").await.unwrap_err();
    assert_eq!((status.code(), seen.calls()), (Code::Aborted, 1));
}

/// A breaker counts each call; once open, a call ends at once, sent nowhere.
#[tokio::test]
async fn the_layers_breaker_refuses_calls_while_open() {
    static BREAKER: retry_jitter::CircuitBreaker =
        retry_jitter::CircuitBreaker::new(0.5, 1, Duration::from_secs(60), Duration::from_secs(60));
    let (channel, seen) = serve(replies(&[Reply::Fail(Code::Aborted)])).await;
    let config = ServiceConfig::from_json(&config(2, QUICK, "", "")).unwrap();
    let layer = ServiceConfigLayer::new(config).breaker(&BREAKER);
    let mut client = tonic::client::Grpc::new(layer.layer(channel));
    let status = call(&mut client, "/service/method").await.unwrap_err();
    assert_eq!((status.code(), seen.calls()), (Code::Aborted, 2));
    let status = call(&mut client, "/service/method").await.unwrap_err();
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    assert_eq!(seen.calls(), 2, "sent nowhere");
}

/// The awaited hooks: `notify_async` before each wait, `give_up_async` and `stats_async` at
/// the end, each awaited before the call returns.
#[tokio::test]
async fn the_layer_awaits_its_async_hooks() {
    use retry_jitter::hooks::HookFuture;
    use retry_jitter::http::Failed;
    use retry_jitter::tower::BoxError;
    use retry_jitter::{GiveUp, RetryEvent, RetryStats};
    let (channel, seen) = serve(replies(&[Reply::Fail(Code::Aborted)])).await;
    let told = Arc::new(Mutex::new(Vec::new()));
    let (notified, gave_up, figures) = (told.clone(), told.clone(), told.clone());
    let config = ServiceConfig::from_json(&config(2, QUICK, "", "")).unwrap();
    let layer = ServiceConfigLayer::new(config)
        .notify_async(
            move |_: Failed<'_, BoxError>, ev: &RetryEvent| -> HookFuture<'_> {
                let (told, line) = (notified.clone(), format!("retry {}", ev.attempt));
                Box::pin(async move {
                    tokio::task::yield_now().await;
                    told.lock().unwrap().push(line);
                })
            },
        )
        .give_up_async(
            move |_: Failed<'_, BoxError>, g: &GiveUp| -> HookFuture<'_> {
                let (told, line) = (gave_up.clone(), format!("gave up {}", g.calls));
                Box::pin(async move { told.lock().unwrap().push(line) })
            },
        )
        .stats_async(move |s: &RetryStats| -> HookFuture<'_> {
            let (told, line) = (figures.clone(), format!("stats {}", s.attempts));
            Box::pin(async move { told.lock().unwrap().push(line) })
        });
    let mut client = tonic::client::Grpc::new(layer.layer(channel));
    let status = call(&mut client, "/service/method").await.unwrap_err();
    assert_eq!((status.code(), seen.calls()), (Code::Aborted, 2));
    assert_eq!(*told.lock().unwrap(), ["retry 1", "gave up 2", "stats 2"]);
}

/// `with_name` names the calls as `RetryLayer::with_name` does: the hooks hear it, `"tonic"`
/// without it.
#[tokio::test]
async fn the_layer_names_its_calls() {
    use retry_jitter::http::Failed;
    use retry_jitter::tower::BoxError;
    use retry_jitter::{RetryEvent, RetryStats};
    for (name, heard) in [(None, "tonic"), (Some("billing"), "billing")] {
        let (channel, _) = serve(replies(&[Reply::Fail(Code::Aborted), Reply::Ok])).await;
        let told = Arc::new(Mutex::new(Vec::new()));
        let (notified, figures) = (told.clone(), told.clone());
        let config = ServiceConfig::from_json(&config(2, QUICK, "", "")).unwrap();
        let mut layer = ServiceConfigLayer::new(config);
        if let Some(name) = name {
            layer = layer.with_name(name);
        }
        let layer = layer
            .notify(move |_: &Failed<'_, BoxError>, ev: &RetryEvent| {
                notified.lock().unwrap().push(ev.function);
            })
            .stats(move |s: &RetryStats| figures.lock().unwrap().push(s.function));
        let mut client = tonic::client::Grpc::new(layer.layer(channel));
        call(&mut client, "/service/method").await.unwrap();
        assert_eq!(*told.lock().unwrap(), [heard, heard]);
    }
}

/// `stats_in_response` puts a call's figures in its response's extensions, as
/// `RetryLayer::stats_in_response` does.
#[tokio::test]
async fn the_layer_puts_the_figures_in_the_response() {
    use retry_jitter::RetryStats;
    let (channel, seen) = serve(replies(&[Reply::Fail(Code::Aborted), Reply::Ok])).await;
    let config = ServiceConfig::from_json(&config(3, QUICK, "", "")).unwrap();
    let layer = ServiceConfigLayer::new(config).stats_in_response();
    let mut client = tonic::client::Grpc::new(layer.layer(channel));
    client.ready().await.unwrap();
    let path = http::uri::PathAndQuery::from_static("/service/method");
    let request = tonic::Request::new(Bytes::from_static(b"foo"));
    let resp = client.unary(request, path, Raw).await.unwrap();
    let stats = resp.extensions().get::<RetryStats>().expect("the figures");
    assert_eq!((stats.attempts, stats.gave_up, seen.calls()), (2, None, 2));
}

// --- What the layer's docs promise of transparent retries and of its guards -----------------

/// A transparent retry is no retry to `notify` and is counted apart in `stats`: an attempt
/// that went away, then `ABORTED`, then `OK`: `notify` hears the one counted retry (as attempt
/// 1), and `stats` 2 attempts and 1 transparent retry.
#[tokio::test]
async fn a_transparent_retry_is_told_to_no_notify_and_counted_apart_in_stats() {
    use retry_jitter::http::Failed;
    use retry_jitter::tower::BoxError;
    use retry_jitter::{RetryEvent, RetryStats};
    use std::sync::atomic::Ordering;
    let script = replies(&[Reply::Fail(Code::Aborted), Reply::Ok]);
    let (channel, seen, gone) = serve_going_away(script, 1).await;
    let told = Arc::new(Mutex::new(Vec::new()));
    let (notified, figures) = (told.clone(), told.clone());
    let config = ServiceConfig::from_json(&config(3, QUICK, "", "")).unwrap();
    let layer = ServiceConfigLayer::new(config)
        .notify(move |_: &Failed<'_, BoxError>, ev: &RetryEvent| {
            notified
                .lock()
                .unwrap()
                .push(format!("retry {}", ev.attempt));
        })
        .stats(move |s: &RetryStats| {
            let line = format!("stats {} {}", s.attempts, s.transparent_retries);
            figures.lock().unwrap().push(line);
        });
    let mut client = tonic::client::Grpc::new(layer.layer(channel));
    assert_eq!(call(&mut client, "/service/method").await.unwrap(), "foo");
    assert_eq!((gone.load(Ordering::SeqCst), seen.calls()), (1, 2));
    assert_eq!(*told.lock().unwrap(), ["retry 1", "stats 2 1"]);
}

/// A hedged method makes no transparent retry: a first copy that went away is a non-fatal
/// `UNAVAILABLE` (a channel error) the race counts, and the next copy goes at once, not after
/// the `hedgingDelay` of 1 s: 2 attempts, none transparent.
#[tokio::test]
async fn a_hedged_method_makes_no_transparent_retry() {
    use retry_jitter::RetryStats;
    use std::sync::atomic::Ordering;
    let (channel, seen, gone) = serve_going_away(replies(&[Reply::Ok]), 1).await;
    let figures = Arc::new(Mutex::new(None));
    let kept = figures.clone();
    let config = ServiceConfig::from_json(&hedging(2, "1s", "")).unwrap();
    let layer = ServiceConfigLayer::new(config).stats(move |s: &RetryStats| {
        *kept.lock().unwrap() = Some((s.attempts, s.transparent_retries));
    });
    let mut client = tonic::client::Grpc::new(layer.layer(channel));
    let start = Instant::now();
    assert_eq!(call(&mut client, "/service/method").await.unwrap(), "foo");
    assert!(
        start.elapsed() < Duration::from_millis(900),
        "{:?}",
        start.elapsed()
    );
    assert_eq!((gone.load(Ordering::SeqCst), seen.calls()), (1, 1));
    assert_eq!(
        *figures.lock().unwrap(),
        Some((2, 0)),
        "(attempts, transparent)"
    );
}

/// A method without a policy makes no transparent retry: sent once, untouched, its call
/// that went away ends with the channel's error.
#[tokio::test]
async fn a_method_without_a_policy_makes_no_transparent_retry() {
    use std::sync::atomic::Ordering;
    let (channel, seen, gone) = serve_going_away(replies(&[Reply::Ok]), 1).await;
    let mut client = client(&config(3, QUICK, "", ""), channel);
    let status = call(&mut client, "/service/other").await.unwrap_err();
    assert!(status.message().contains("h2 protocol error"), "{status:?}");
    assert_eq!((gone.load(Ordering::SeqCst), seen.calls()), (1, 0));
}

/// `throttle`: an `AdaptiveThrottle` (k = 1) asked before every attempt. Against a server that
/// answers every attempt `ABORTED` (listed: retryable, so each adds a request and no accept),
/// the rejection probability after `n` requests is `n / (n + 1)`: soon an attempt is refused,
/// not sent, and its call ends `UNAVAILABLE`. Each call either makes both its attempts and ends
/// `ABORTED`, or has one refused (a refused retry: 1 sent; a refused first attempt: none), and
/// the throttle's counts are exactly the attempts sent plus those refused, no accepts.
#[tokio::test]
async fn the_layers_adaptive_throttle_refuses_attempts_of_a_failing_server() {
    use retry_jitter::{sleep, AdaptiveThrottle};
    static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(1.0, Duration::from_secs(60));
    retry_jitter::testing::seed_jitter(55);
    let (channel, seen) = serve(replies(&[Reply::Fail(Code::Aborted)])).await;
    let config = ServiceConfig::from_json(&config(2, QUICK, "", "")).unwrap();
    let layer = ServiceConfigLayer::new(config).throttle(&THROTTLE);
    let mut client = tonic::client::Grpc::new(layer.layer(channel));
    assert_eq!(THROTTLE.rejection_probability(sleep::now), 0.0);
    let mut refused = 0;
    let mut unsent = None;
    for n in 0..100 {
        let before = seen.calls();
        let status = call(&mut client, "/service/method").await.unwrap_err();
        let sent = seen.calls() - before;
        match status.code() {
            Code::Aborted => assert_eq!(sent, 2, "call {n}: both attempts let through"),
            Code::Unavailable => {
                assert!(sent < 2, "call {n}: {sent} sent, yet refused");
                refused += 1;
            }
            other => panic!("call {n}: {other:?}"),
        }
        let counts = ((seen.calls() + refused) as u64, 0);
        assert_eq!(THROTTLE.counts(sleep::now), counts, "call {n}");
        if sent == 0 {
            unsent = Some(n);
            break;
        }
    }
    let n = unsent.expect("a call refused before its first attempt");
    assert!(n > 0, "the first call's first attempt: nothing had failed");
    assert!(THROTTLE.rejection_probability(sleep::now) > 0.5);
}

/// `cancel` ends a wait at once: a token cancelled while the call waits out a backoff of 10 s
/// (8 s at least, jittered) ends the call with its first answer, sent once.
#[tokio::test]
async fn the_layers_cancel_ends_a_wait_at_once() {
    let (channel, seen) = serve(replies(&[Reply::Fail(Code::Aborted), Reply::Ok])).await;
    let shutdown = retry_jitter::CancelToken::new();
    let config = ServiceConfig::from_json(&config(3, "10s", "", "")).unwrap();
    let layer = ServiceConfigLayer::new(config).cancel(&shutdown);
    let mut client = tonic::client::Grpc::new(layer.layer(channel));
    let (token, watched) = (shutdown.clone(), seen.clone());
    tokio::spawn(async move {
        while watched.calls() < 1 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // The answer is on its way: the call is in its wait by then.
        tokio::time::sleep(Duration::from_millis(100)).await;
        token.cancel();
    });
    let start = Instant::now();
    let status = call(&mut client, "/service/method").await.unwrap_err();
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(100),
        "ended before the cancel: {took:?}"
    );
    assert!(
        took < Duration::from_secs(1),
        "the wait was not cut: {took:?}"
    );
    assert_eq!((status.code(), seen.calls()), (Code::Aborted, 1));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(seen.calls(), 1, "nothing sent after the cancel");
}
