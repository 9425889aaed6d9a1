//! Whether an attempt's body can be sent again is decided from that attempt's body alone, never
//! from which task ran first: hyper's connection task (which drops or gives back the body) or
//! the call's loop (which judges the attempt's outcome). `RetryLayer::new` over hyper-util's
//! client, against real servers on loopback that count what they get, many rounds on a
//! multi-thread runtime and on a current-thread one:
//!
//! - a body given back by a connection reset mid-body is sent again, whole, over HTTP/1 and
//!   HTTP/2, with or without a hedge waiting for it;
//! - a streaming body the server answered `503` before reading it is sent once, and the `503`
//!   is the answer, with or without a hedge waiting for it.
//!
//! And, in process: a body given back by an attempt cut by the layer's timeout is the retry's;
//! a body its service holds after failing is not waited for past a moment.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::combinators::BoxBody;
use http_body_util::BodyExt;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use retry_jitter::hedge::Hedge;
use retry_jitter::tower::RetryLayer;
use retry_jitter::Policy;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tower::{Layer, ServiceExt};

use crate::h2_frames;

type Boxed = BoxBody<Bytes, io::Error>;

/// Rounds per test and runtime.
const ROUNDS: usize = 25;
/// The upload's size, and where the first connection is reset.
const LEN: usize = 32 * 1024;
const RESET_AFTER: usize = 8 * 1024;

/// Four attempts, short waits.
fn four() -> Policy {
    Policy::new()
        .with_attempts(4)
        .with_base(Duration::from_millis(2))
        .with_cap(Duration::from_millis(10))
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Bytes that are not all alike: a body cut or reordered would not compare equal.
fn payload(len: usize) -> Bytes {
    (0..len).map(|i| (i * 7 % 251) as u8).collect()
}

/// An upload of known size in 1 KiB chunks that stops for `pause` once `RESET_AFTER` bytes are
/// out (its source is slower than the network): the reset comes while it is being sent.
struct Upload {
    data: Bytes,
    at: usize,
    pause: Option<Pin<Box<tokio::time::Sleep>>>,
    pause_for: Duration,
}

fn upload(pause_for: Duration) -> Boxed {
    Upload {
        data: payload(LEN),
        at: 0,
        pause: None,
        pause_for,
    }
    .boxed()
}

impl Body for Upload {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = &mut *self;
        if this.at == this.data.len() {
            return Poll::Ready(None);
        }
        if this.at == RESET_AFTER && !this.pause_for.is_zero() {
            let pause_for = this.pause_for;
            let sleep = this
                .pause
                .get_or_insert_with(|| Box::pin(tokio::time::sleep(pause_for)));
            if sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            this.pause_for = Duration::ZERO;
        }
        let end = (this.at + 1024).min(this.data.len());
        let chunk = this.data.slice(this.at..end);
        this.at = end;
        Poll::Ready(Some(Ok(Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.at == self.data.len()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact((self.data.len() - self.at) as u64)
    }
}

/// A streaming upload (no size hint): a 1 KiB chunk every 10 ms from a task, until the body
/// is dropped.
fn trickle() -> Boxed {
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(1);
    tokio::spawn(async move {
        for _ in 0..1000 {
            if tx.send(payload(1024)).await.is_err() {
                return;
            }
            tokio::time::sleep(ms(10)).await;
        }
    });
    Trickle(rx).boxed()
}

struct Trickle(tokio::sync::mpsc::Receiver<Bytes>);

impl Body for Trickle {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        self.0
            .poll_recv(cx)
            .map(|chunk| chunk.map(|c| Ok(Frame::data(c))))
    }
}

/// What a server got: the request heads, and the bodies received whole.
#[derive(Default)]
struct Seen {
    heads: AtomicU32,
    whole: Mutex<Vec<Bytes>>,
    connections: AtomicU32,
}

impl Seen {
    fn heads(&self) -> u32 {
        self.heads.load(Ordering::SeqCst)
    }
    fn whole(&self) -> Vec<Bytes> {
        self.whole.lock().unwrap().clone()
    }
}

/// What a server does with a request.
#[derive(Clone, Copy)]
enum Plan {
    /// Its first connection is reset (TCP RST) once `RESET_AFTER` body bytes are in, `after`
    /// that; the others read each body whole and answer `200`.
    ResetFirst { after: Duration },
    /// Answer `503` `after` the head, before reading the body.
    Refuse { after: Duration },
}

/// An HTTP/1 server on loopback, raw, playing `plan`.
async fn h1(plan: Plan) -> (SocketAddr, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let counted = seen.clone();
    let addr = h2_frames::serve_each(move |conn| h1_connection(conn, plan, counted.clone())).await;
    (addr, seen)
}

async fn h1_connection(mut conn: TcpStream, plan: Plan, seen: Arc<Seen>) {
    let first = seen.connections.fetch_add(1, Ordering::SeqCst) == 0;
    let mut got = Vec::new();
    loop {
        // The head.
        let head_end = loop {
            if let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            let mut buf = [0u8; 4096];
            match conn.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        };
        seen.heads.fetch_add(1, Ordering::SeqCst);
        let head = String::from_utf8_lossy(&got[..head_end]).to_ascii_lowercase();
        got.drain(..head_end);
        match plan {
            Plan::Refuse { after } => {
                tokio::time::sleep(after).await;
                let answer = "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
                let _ = conn.write_all(answer.as_bytes()).await;
                h2_frames::close(conn).await;
                return;
            }
            Plan::ResetFirst { after } => {
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map(|v| v.trim().parse().unwrap())
                    .expect("an upload of known size");
                let want = if first { RESET_AFTER } else { len };
                while got.len() < want {
                    let mut buf = [0u8; 4096];
                    match conn.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
                }
                if first {
                    tokio::time::sleep(after).await;
                    conn.set_zero_linger().unwrap();
                    return; // dropped: reset
                }
                let body: Vec<u8> = got.drain(..len).collect();
                seen.whole.lock().unwrap().push(body.into());
                let answer = "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
                if conn.write_all(answer.as_bytes()).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// An HTTP/2 server (prior knowledge) on loopback, h2's own, playing `plan`.
async fn h2(plan: Plan) -> (SocketAddr, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let counted = seen.clone();
    let addr =
        h2_frames::serve_each(move |socket| h2_connection(socket, plan, counted.clone())).await;
    (addr, seen)
}

async fn h2_connection(socket: TcpStream, plan: Plan, seen: Arc<Seen>) {
    let first = seen.connections.fetch_add(1, Ordering::SeqCst) == 0;
    socket.set_zero_linger().unwrap();
    let Ok(mut conn) = h2::server::handshake(socket).await else {
        return;
    };
    // A request whose connection is to be reset hands its stream back here: the connection is
    // dropped first (its socket reset), so that the stream is never reset on its own.
    let (reset, mut to_reset) = tokio::sync::mpsc::unbounded_channel();
    loop {
        let (req, mut respond) = tokio::select! {
            accepted = conn.accept() => match accepted {
                Some(Ok(stream)) => stream,
                _ => return,
            },
            Some(stream) = to_reset.recv() => {
                drop(conn);
                drop(stream);
                return;
            }
        };
        seen.heads.fetch_add(1, Ordering::SeqCst);
        let (seen, reset) = (seen.clone(), reset.clone());
        tokio::spawn(async move {
            let answer = |status: u16| http::Response::builder().status(status).body(()).unwrap();
            let mut body = req.into_body();
            let after = match plan {
                Plan::Refuse { after } => {
                    tokio::time::sleep(after).await;
                    let _ = respond.send_response(answer(503), true);
                    return;
                }
                Plan::ResetFirst { after } => after,
            };
            let mut got = Vec::new();
            while let Some(Ok(data)) = body.data().await {
                let _ = body.flow_control().release_capacity(data.len());
                got.extend_from_slice(&data);
                if first && got.len() >= RESET_AFTER {
                    tokio::time::sleep(after).await;
                    let _ = reset.send((body, respond));
                    return;
                }
            }
            if body.is_end_stream() {
                seen.whole.lock().unwrap().push(got.into());
                let _ = respond.send_response(answer(200), true);
            }
        });
    }
}

type Response = http::Response<hyper::body::Incoming>;
type BoxError = retry_jitter::tower::BoxError;

/// One `PUT` of `body` through `svc`: its status, or the error's text.
async fn put<S>(svc: S, addr: SocketAddr, body: Boxed) -> Result<u16, String>
where
    S: tower::Service<http::Request<Boxed>, Response = Response, Error = BoxError>,
{
    let req = http::Request::put(format!("http://{addr}/uploads/7"))
        .body(body)
        .unwrap();
    match svc.oneshot(req).await {
        Ok(resp) => Ok(resp.status().as_u16()),
        Err(e) => Err(format!("{e:?}")),
    }
}

/// hyper's client, HTTP/2 only if `http2`.
fn client(http2: bool) -> Client<HttpConnector, Boxed> {
    Client::builder(TokioExecutor::new())
        .http2_only(http2)
        .build_http()
}

/// A reset mid-body, `ROUNDS` times: the call succeeds, and every body the server got whole is
/// the upload, byte-exact.
async fn reset_mid_body_is_retried(http2: bool, hedged: bool) {
    let mut failed = Vec::new();
    for round in 0..ROUNDS {
        // Hedged: the reset waits for the hedge to be started (it waits for the body), and
        // the upload's pause ends after the reset.
        let (after, pause) = if hedged {
            (ms(20), ms(60))
        } else {
            (ms(0), ms(30))
        };
        let plan = Plan::ResetFirst { after };
        let (addr, seen) = if http2 {
            h2(plan).await
        } else {
            h1(plan).await
        };
        let layer = RetryLayer::new(four());
        let got = if hedged {
            // A client per attempt: a hedge is sent on a connection of its own, never on the
            // one that was reset (which a shared client may hand out until it learns of it).
            let fresh = tower::service_fn(move |req| client(http2).request(req));
            let svc = layer.hedge(Hedge::After(ms(5))).layer(fresh);
            put(svc, addr, upload(pause)).await
        } else {
            put(layer.layer(client(http2)), addr, upload(pause)).await
        };
        let whole = seen.whole();
        if got != Ok(200) || whole.is_empty() {
            failed.push(format!(
                "round {round}: {got:?}, {} bodies whole",
                whole.len()
            ));
        }
        assert!(
            whole.iter().all(|b| *b == payload(LEN)),
            "round {round}: byte-exact"
        );
    }
    assert!(
        failed.is_empty(),
        "{} of {ROUNDS} rounds failed: {failed:#?}",
        failed.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hedged_put_whose_first_connection_resets_mid_body_succeeds_multi_thread() {
    reset_mid_body_is_retried(true, true).await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_hedged_put_whose_first_connection_resets_mid_body_succeeds_current_thread() {
    reset_mid_body_is_retried(true, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_put_reset_mid_body_is_retried_over_http1_multi_thread() {
    reset_mid_body_is_retried(false, false).await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_put_reset_mid_body_is_retried_over_http1_current_thread() {
    reset_mid_body_is_retried(false, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_put_reset_mid_body_is_retried_over_http2_multi_thread() {
    reset_mid_body_is_retried(true, false).await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_put_reset_mid_body_is_retried_over_http2_current_thread() {
    reset_mid_body_is_retried(true, false).await;
}

/// A streaming upload answered `503` before it was read, `ROUNDS` times: the `503` is the
/// answer, and the server saw one request. Hedged, the answer comes once the hedge waits for
/// the body: it never gets it.
async fn a_stream_answered_first_is_sent_once(http2: bool, hedged: bool) {
    let mut failed = Vec::new();
    for round in 0..ROUNDS {
        let plan = Plan::Refuse {
            after: if hedged { ms(20) } else { Duration::ZERO },
        };
        let (addr, seen) = if http2 {
            h2(plan).await
        } else {
            h1(plan).await
        };
        let layer = RetryLayer::new(four());
        let got = if hedged {
            let svc = layer.hedge(Hedge::After(ms(5))).layer(client(http2));
            put(svc, addr, trickle()).await
        } else {
            put(layer.layer(client(http2)), addr, trickle()).await
        };
        if got != Ok(503) || seen.heads() != 1 {
            failed.push(format!(
                "round {round}: {got:?}, sent {} times",
                seen.heads()
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {ROUNDS} rounds failed: {failed:#?}",
        failed.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_body_answered_503_first_is_sent_once_over_http1_multi_thread() {
    a_stream_answered_first_is_sent_once(false, false).await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_streaming_body_answered_503_first_is_sent_once_over_http1_current_thread() {
    a_stream_answered_first_is_sent_once(false, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_body_answered_503_first_is_sent_once_over_http2_multi_thread() {
    a_stream_answered_first_is_sent_once(true, false).await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_streaming_body_answered_503_first_is_sent_once_over_http2_current_thread() {
    a_stream_answered_first_is_sent_once(true, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hedge_never_sends_a_streaming_body_answered_503_first_multi_thread() {
    a_stream_answered_first_is_sent_once(false, true).await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_hedge_never_sends_a_streaming_body_answered_503_first_current_thread() {
    a_stream_answered_first_is_sent_once(false, true).await;
}

/// An attempt cut by the layer's timeout before its service read the body: the body, given
/// back when the cut attempt's request is dropped, is the retry's, whole.
#[tokio::test(start_paused = true)]
async fn a_body_given_back_by_an_attempt_cut_by_the_timeout_is_sent_by_the_retry() {
    let calls = Arc::new(AtomicU32::new(0));
    let received = Arc::new(Mutex::new(Vec::new()));
    let (counted, seen) = (calls.clone(), received.clone());
    let upstream = tower::service_fn(move |req: http::Request<Boxed>| {
        let first = counted.fetch_add(1, Ordering::SeqCst) == 0;
        let seen = seen.clone();
        async move {
            if first {
                // Holds the request, unread, until the timeout drops it.
                let _held = req;
                return std::future::pending().await;
            }
            let body = req.into_body().collect().await.unwrap().to_bytes();
            seen.lock().unwrap().push(body);
            Ok::<_, BoxError>(http::Response::new(()))
        }
    });
    let svc = RetryLayer::new(four()).timeout(ms(50)).layer(upstream);
    let req = http::Request::put("/uploads/7")
        .body(upload(Duration::ZERO))
        .unwrap();
    let resp = svc.oneshot(req).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert!(
        *received.lock().unwrap() == [payload(LEN)],
        "sent whole by the retry"
    );
}

/// A service that fails while it still holds the body (it goes on sending it elsewhere): the
/// verdict waits a moment for the body, then takes it for still being sent — the call ends on
/// that error, sent once, and is not held for as long as the body is.
#[tokio::test(start_paused = true)]
async fn a_body_held_after_its_attempt_failed_is_not_sent_again_and_does_not_hold_the_call() {
    let calls = Arc::new(AtomicU32::new(0));
    let counted = calls.clone();
    let upstream = tower::service_fn(move |req: http::Request<Boxed>| {
        counted.fetch_add(1, Ordering::SeqCst);
        // The body outlives the attempt, unfinished, for a minute.
        tokio::spawn(async move {
            let _held = req;
            tokio::time::sleep(Duration::from_secs(60)).await;
        });
        let reset = io::Error::from(io::ErrorKind::ConnectionReset);
        async move { Err::<http::Response<()>, BoxError>(reset.into()) }
    });
    let svc = RetryLayer::new(four()).layer(upstream);
    let req = http::Request::put("/uploads/7")
        .body(upload(Duration::ZERO))
        .unwrap();
    let started = tokio::time::Instant::now();
    let err = svc.oneshot(req).await.unwrap_err();
    assert!(err.to_string().contains("reset"), "{err}");
    assert_eq!(calls.load(Ordering::SeqCst), 1, "sent once");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}
