//! `ServiceConfigLayer` beside gRPC's own C-core client, call by call (issue 55): each
//! scenario is a service config and a server's scripted answers; a tonic server on loopback
//! answers the call of each client in turn, and counts the attempts it gets. The C-core
//! client is Python's `grpcio` (`scripts/grpc_cclient.py`), run with the same JSON.
//!
//!     bash scripts/with-grpcio.sh cargo run --example grpc_conformance --features tower,tonic
//!
//! Prints a row per scenario (attempts and final code for each client) and exits non-zero if
//! any row differs, if our client does not give what a row that differs by design says it
//! must, or if either client sends an attempt sooner after a pushback than the pushback said.

use std::pin::Pin;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

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
    /// Where the two clients differ by design: why, and what ours must give. `None` where
    /// they must agree.
    differs: Option<Differs>,
}

/// A row where our client differs from C-core by design.
struct Differs {
    /// Why.
    why: &'static str,
    /// What our client must give instead: its attempts and final code.
    ours: (usize, Code),
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "retry",
        policy: r#""maxAttempts": 3, "retryableStatusCodes": ["ABORTED"]"#,
        throttling: "",
        replies: &[Reply::Fail(Code::Aborted), Reply::Ok],
        differs: None,
    },
    Scenario {
        name: "retry_too_many_attempts",
        policy: r#""maxAttempts": 2, "retryableStatusCodes": ["ABORTED"]"#,
        throttling: "",
        replies: &[Reply::Fail(Code::Aborted)],
        differs: None,
    },
    Scenario {
        name: "max_attempts_above_5_is_5",
        policy: r#""maxAttempts": 7, "retryableStatusCodes": ["ABORTED"]"#,
        throttling: "",
        replies: &[Reply::Fail(Code::Aborted)],
        differs: None,
    },
    Scenario {
        name: "retry_non_retriable_status",
        policy: r#""maxAttempts": 3, "retryableStatusCodes": ["ABORTED"]"#,
        throttling: "",
        replies: &[Reply::Fail(Code::InvalidArgument)],
        differs: None,
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
        // 10 is ABORTED: both codes are listed, so ours retries each and the third attempt
        // answers.
        differs: Some(Differs {
            why: "C-core rejects the config (it reads upper-case names only); issue 55 asks for names in any case and numbers",
            ours: (3, Code::Ok),
        }),
    },
    Scenario {
        name: "retry_server_pushback_delay",
        policy: r#""maxAttempts": 3, "retryableStatusCodes": ["ABORTED"]"#,
        throttling: "",
        replies: &[Reply::Pushback(Code::Aborted, "30"), Reply::Ok],
        differs: None,
    },
    Scenario {
        name: "retry_server_pushback_disabled",
        policy: r#""maxAttempts": 3, "retryableStatusCodes": ["ABORTED"]"#,
        throttling: "",
        replies: &[Reply::Pushback(Code::Aborted, "-1"), Reply::Ok],
        differs: None,
    },
    Scenario {
        name: "retry_throttled",
        policy: r#""maxAttempts": 3, "retryableStatusCodes": ["ABORTED"]"#,
        throttling: r#", "retryThrottling": { "maxTokens": 2, "tokenRatio": 1 }"#,
        replies: &[Reply::Fail(Code::Aborted)],
        differs: None,
    },
    Scenario {
        name: "throttle_from_10_the_fifth_failure_is_not_retried",
        policy: r#""maxAttempts": 5, "retryableStatusCodes": ["ABORTED"]"#,
        throttling: r#", "retryThrottling": { "maxTokens": 10, "tokenRatio": 0.1 }"#,
        replies: &[Reply::Fail(Code::Aborted)],
        differs: None,
    },
    Scenario {
        name: "retry_recv_initial_metadata",
        policy: r#""maxAttempts": 3, "retryableStatusCodes": ["ABORTED"]"#,
        throttling: "",
        replies: &[Reply::HeadersThen(Code::Aborted), Reply::Ok],
        differs: None,
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
/// list), counts them, and records when each arrived.
#[derive(Clone)]
struct Server {
    replies: &'static [Reply],
    attempts: Arc<AtomicUsize>,
    arrivals: Arc<Mutex<Vec<Instant>>>,
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
        let n = {
            let mut arrivals = self.arrivals.lock().expect("not poisoned");
            arrivals.push(Instant::now());
            self.attempts.fetch_add(1, Ordering::SeqCst)
        };
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

/// What the server of one call saw: its count of attempts, and when each arrived.
struct Seen {
    attempts: Arc<AtomicUsize>,
    arrivals: Arc<Mutex<Vec<Instant>>>,
}

impl Seen {
    fn attempts(&self) -> usize {
        self.attempts.load(Ordering::SeqCst)
    }

    /// Each attempt that followed a pushback of `n` ms (`n` ≥ 0) and came sooner: its index,
    /// the gap, and the pushback.
    fn early_after_pushback(&self, replies: &[Reply]) -> Vec<(usize, Duration, Duration)> {
        let arrivals = self.arrivals.lock().expect("not poisoned");
        let mut early = Vec::new();
        for (i, pair) in arrivals.windows(2).enumerate() {
            let Reply::Pushback(_, value) = replies[i.min(replies.len() - 1)] else {
                continue;
            };
            let Ok(ms) = value.parse::<u64>() else {
                continue;
            };
            let (gap, pushback) = (pair[1] - pair[0], Duration::from_millis(ms));
            if gap < pushback {
                early.push((i + 1, gap, pushback));
            }
        }
        early
    }
}

/// A server for one call: its address and what it saw.
async fn serve(replies: &'static [Reply]) -> (std::net::SocketAddr, Seen) {
    let attempts = Arc::new(AtomicUsize::new(0));
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    let server = Server {
        replies,
        attempts: attempts.clone(),
        arrivals: arrivals.clone(),
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
    (addr, Seen { attempts, arrivals })
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
    let (mut differ, mut wrong) = (0, 0);
    for s in SCENARIOS {
        let json = config(s);
        let (addr, seen) = serve(s.replies).await;
        let code = ours(addr, &json).await;
        let (ours, our_code) = ((seen.attempts(), name(code)), code);
        let our_early = seen.early_after_pushback(s.replies);
        let (addr, seen) = serve(s.replies).await;
        let code = tokio::task::spawn_blocking(move || c_core(addr, &json))
            .await
            .expect("the C-core call");
        let theirs = (seen.attempts(), code);
        let their_early = seen.early_after_pushback(s.replies);
        let same = ours == theirs;
        // A row that differs by design still says what ours must give.
        let ours_right = s
            .differs
            .as_ref()
            .is_none_or(|d| d.ours == (ours.0, our_code));
        let verdict = match (&s.differs, same, ours_right) {
            (_, _, false) => "NO: ours is not what the row says it must be".to_owned(),
            (_, true, _) => "yes".to_owned(),
            (None, false, _) => "NO".to_owned(),
            (Some(d), false, true) => format!("no, by design: {}", d.why),
        };
        differ += usize::from(!same && s.differs.is_none());
        wrong += usize::from(!ours_right);
        println!(
            "{:<52} {:>14} {:>20}   {verdict}",
            s.name,
            format!("{} {}", ours.0, ours.1),
            format!("{} {}", theirs.0, theirs.1),
        );
        if let Some(d) = s.differs.as_ref().filter(|_| !ours_right) {
            eprintln!("{}: ours must give {} {}", s.name, d.ours.0, name(d.ours.1));
        }
        for (client, early) in [("our client", &our_early), ("C-core", &their_early)] {
            for (attempt, gap, pushback) in early {
                eprintln!(
                    "{}: {client}'s attempt {} came {gap:?} after the last, within its pushback of {pushback:?}",
                    s.name,
                    attempt + 1
                );
                wrong += 1;
            }
        }
    }
    if wrong > 0 {
        eprintln!("{wrong} check(s) of our client or of the pushback failed");
    }
    if differ > 0 {
        eprintln!("{differ} scenario(s) differ from gRPC's own client");
    }
    if differ > 0 || wrong > 0 {
        std::process::exit(1);
    }
}
