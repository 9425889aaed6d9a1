//! `ServiceConfigLayer` beside gRPC's own C-core client, call by call (issue 55): each
//! scenario is a service config and a server's scripted answers; a tonic server on loopback
//! answers the call of each client in turn, and counts the attempts it gets. The C-core
//! client is Python's `grpcio` (`scripts/grpc_cclient.py`), run with the same JSON.
//!
//!     bash scripts/with-grpcio.sh cargo run --example grpc_conformance --features tower,tonic
//!
//! Prints a row per scenario (attempts and final code for each client) and exits non-zero if
//! any row differs.

use std::pin::Pin;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use retry_jitter::tonic::{ServiceConfig, ServiceConfigLayer};
use tonic::{Code, Status};
use tower::Layer;

#[path = "../tests/support/grpc_raw.rs"]
mod grpc_raw;

/// What the server does with one attempt.
#[derive(Clone, Copy, Debug)]
enum Reply {
    Ok,
    /// A trailers-only answer with this code.
    Fail(Code),
    /// This code, and `grpc-retry-pushback-ms: value`.
    Pushback(Code, &'static str),
    /// Headers first (the call is committed), then this code in the trailers.
    HeadersThen(Code),
}

/// A scenario: its name, the policy's fields and `retryThrottling` (if any), and the replies
/// by attempt (past the list, the last).
struct Scenario {
    name: &'static str,
    policy: &'static str,
    throttling: &'static str,
    replies: &'static [Reply],
    /// Why the two clients differ here by design; empty where they must agree.
    differs: &'static str,
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "retry",
        policy: r#""maxAttempts": 3, "retryableStatusCodes": ["ABORTED"]"#,
        throttling: "",
        replies: &[Reply::Fail(Code::Aborted), Reply::Ok],
        differs: "",
    },
    Scenario {
        name: "retry_too_many_attempts",
        policy: r#""maxAttempts": 2, "retryableStatusCodes": ["ABORTED"]"#,
        throttling: "",
        replies: &[Reply::Fail(Code::Aborted)],
        differs: "",
    },
    Scenario {
        name: "max_attempts_above_5_is_5",
        policy: r#""maxAttempts": 7, "retryableStatusCodes": ["ABORTED"]"#,
        throttling: "",
        replies: &[Reply::Fail(Code::Aborted)],
        differs: "",
    },
    Scenario {
        name: "retry_non_retriable_status",
        policy: r#""maxAttempts": 3, "retryableStatusCodes": ["ABORTED"]"#,
        throttling: "",
        replies: &[Reply::Fail(Code::InvalidArgument)],
        differs: "",
    },
    Scenario {
        name: "codes_as_numbers_and_lower_case",
        policy: r#""maxAttempts": 4, "retryableStatusCodes": [10, "unavailable"]"#,
        throttling: "",
        replies: &[
            Reply::Fail(Code::Aborted),
            Reply::Fail(Code::Unavailable),
            Reply::Ok,
        ],
        differs: "C-core rejects the config (it reads upper-case names only); issue 55 asks for names in any case and numbers",
    },
    Scenario {
        name: "retry_server_pushback_delay",
        policy: r#""maxAttempts": 3, "retryableStatusCodes": ["ABORTED"]"#,
        throttling: "",
        replies: &[Reply::Pushback(Code::Aborted, "30"), Reply::Ok],
        differs: "",
    },
    Scenario {
        name: "retry_server_pushback_disabled",
        policy: r#""maxAttempts": 3, "retryableStatusCodes": ["ABORTED"]"#,
        throttling: "",
        replies: &[Reply::Pushback(Code::Aborted, "-1"), Reply::Ok],
        differs: "",
    },
    Scenario {
        name: "retry_throttled",
        policy: r#""maxAttempts": 3, "retryableStatusCodes": ["ABORTED"]"#,
        throttling: r#", "retryThrottling": { "maxTokens": 2, "tokenRatio": 1 }"#,
        replies: &[Reply::Fail(Code::Aborted)],
        differs: "",
    },
    Scenario {
        name: "throttle_from_10_the_fifth_failure_is_not_retried",
        policy: r#""maxAttempts": 5, "retryableStatusCodes": ["ABORTED"]"#,
        throttling: r#", "retryThrottling": { "maxTokens": 10, "tokenRatio": 0.1 }"#,
        replies: &[Reply::Fail(Code::Aborted)],
        differs: "",
    },
    Scenario {
        name: "retry_recv_initial_metadata",
        policy: r#""maxAttempts": 3, "retryableStatusCodes": ["ABORTED"]"#,
        throttling: "",
        replies: &[Reply::HeadersThen(Code::Aborted), Reply::Ok],
        differs: "",
    },
];

/// The service config of a scenario: `/service/method` with its retry policy.
fn config(s: &Scenario) -> String {
    format!(
        r#"{{"methodConfig": [{{"name": [{{"service": "service", "method": "method"}}],
            "retryPolicy": {{"initialBackoff": "0.01s", "maxBackoff": "0.05s",
                             "backoffMultiplier": 2, {}}}}}]{}}}"#,
        s.policy, s.throttling
    )
}

/// The server of one client's call: answers attempt `n` with `replies[n]` (the last past the
/// list), and counts them.
#[derive(Clone)]
struct Server {
    replies: &'static [Reply],
    attempts: Arc<AtomicUsize>,
}

impl tonic::server::NamedService for Server {
    const NAME: &'static str = "service";
}

type Answer = Pin<
    Box<
        dyn std::future::Future<
                Output = Result<http::Response<tonic::body::Body>, std::convert::Infallible>,
            > + Send,
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
        let n = self.attempts.fetch_add(1, Ordering::SeqCst);
        let reply = self.replies[n.min(self.replies.len() - 1)];
        if let Reply::HeadersThen(code) = reply {
            return Box::pin(async move { Ok(headers_then(code)) });
        }
        let handler = tower::service_fn(move |req: tonic::Request<Bytes>| async move {
            match reply {
                Reply::Fail(code) => Err(Status::new(code, "scripted")),
                Reply::Pushback(code, value) => {
                    let mut status = Status::new(code, "scripted");
                    let value = value.parse().expect("a header value");
                    status
                        .metadata_mut()
                        .insert("grpc-retry-pushback-ms", value);
                    Err(status)
                }
                _ => Ok(tonic::Response::new(req.into_inner())),
            }
        });
        let mut grpc = tonic::server::Grpc::new(grpc_raw::Raw);
        Box::pin(async move { Ok(grpc.unary(handler, req).await) })
    }
}

/// Headers without a status (the call is committed), then trailers with `code`.
fn headers_then(code: Code) -> http::Response<tonic::body::Body> {
    let mut trailers = http::HeaderMap::new();
    trailers.insert("grpc-status", (code as i32).into());
    let body = http_body_util::StreamBody::new(futures_once(trailers));
    http::Response::builder()
        .header("content-type", "application/grpc")
        .body(tonic::body::Body::new(body))
        .expect("a response")
}

/// A body of one trailers frame.
fn futures_once(
    trailers: http::HeaderMap,
) -> impl tonic::codegen::tokio_stream::Stream<Item = Result<http_body::Frame<Bytes>, Status>> {
    tonic::codegen::tokio_stream::iter([Ok(http_body::Frame::trailers(trailers))])
}

/// A server for one call: its address and its count of attempts.
async fn serve(replies: &'static [Reply]) -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    let attempts = Arc::new(AtomicUsize::new(0));
    let server = Server {
        replies,
        attempts: attempts.clone(),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let addr = listener.local_addr().expect("an address");
    let incoming = tonic::transport::server::TcpIncoming::from(listener);
    let serving = tonic::transport::Server::builder()
        .add_service(server)
        .serve_with_incoming(incoming);
    tokio::spawn(serving);
    (addr, attempts)
}

/// Our call: the final code.
async fn ours(addr: std::net::SocketAddr, json: &str) -> Code {
    let config = ServiceConfig::from_json(json).expect("a valid config");
    let channel = tonic::transport::Channel::from_shared(format!("http://{addr}"))
        .expect("a uri")
        .connect_lazy();
    let mut client = tonic::client::Grpc::new(ServiceConfigLayer::new(config).layer(channel));
    if client.ready().await.is_err() {
        return Code::Unavailable;
    }
    let path = http::uri::PathAndQuery::from_static("/service/method");
    let request = tonic::Request::new(Bytes::from_static(b"foo"));
    match client
        .unary::<_, Bytes, _>(request, path, grpc_raw::Raw)
        .await
    {
        Ok(_) => Code::Ok,
        Err(status) => status.code(),
    }
}

/// C-core's call, through Python's `grpcio`: the final code's name.
fn c_core(addr: std::net::SocketAddr, json: &str) -> String {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(python)
        .args([
            "scripts/grpc_cclient.py",
            &addr.to_string(),
            "/service/method",
            json,
        ])
        .output()
        .expect("python3 runs (bash scripts/with-grpcio.sh installs grpcio)");
    assert!(
        out.status.success(),
        "grpc_cclient.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A code's name as gRPC spells it (`ABORTED`).
fn name(code: Code) -> String {
    format!("{code:?}")
        .chars()
        .enumerate()
        .flat_map(|(i, c)| {
            let gap = (i > 0 && c.is_uppercase()).then_some('_');
            gap.into_iter().chain(c.to_uppercase())
        })
        .collect()
}

#[tokio::main]
async fn main() {
    println!(
        "{:<52} {:>14} {:>20}   same",
        "scenario", "ours", "C-core (grpcio)"
    );
    let mut differ = 0;
    for s in SCENARIOS {
        let json = config(s);
        let (addr, attempts) = serve(s.replies).await;
        let code = name(ours(addr, &json).await);
        let ours = (attempts.load(Ordering::SeqCst), code);
        let (addr, attempts) = serve(s.replies).await;
        let code = tokio::task::spawn_blocking(move || c_core(addr, &json))
            .await
            .expect("the C-core call");
        let theirs = (attempts.load(Ordering::SeqCst), code);
        let same = ours == theirs;
        let verdict = match (same, s.differs) {
            (true, _) => "yes".to_owned(),
            (false, "") => "NO".to_owned(),
            (false, why) => format!("no, by design: {why}"),
        };
        differ += usize::from(!same && s.differs.is_empty());
        println!(
            "{:<52} {:>14} {:>20}   {verdict}",
            s.name,
            format!("{} {}", ours.0, ours.1),
            format!("{} {}", theirs.0, theirs.1),
        );
    }
    if differ > 0 {
        eprintln!("{differ} scenario(s) differ from gRPC's own client");
        std::process::exit(1);
    }
}
