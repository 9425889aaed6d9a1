//! Retrying HTTP calls against a real axum upstream on loopback, through reqwest; and against
//! raw loopback servers that misbehave (stall, send too much, cut the connection).
#![cfg(feature = "reqwest")]

use crate::upstream;

use crate::loopback;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use retry_jitter::reqwest::{check, Error, StatusError};

// `check`'s documented bounds on reading an error body.
const MAX_ERROR_BODY: usize = 64 * 1024;
const ERROR_BODY_IDLE_TIMEOUT: Duration = Duration::from_millis(250);
const ERROR_BODY_TIMEOUT: Duration = Duration::from_secs(1);
use retry_jitter::{retry, Decision, RetryEvent, Transient};

static RETRIES: AtomicU32 = AtomicU32::new(0);

fn count(_: &Error, _: &RetryEvent) {
    RETRIES.fetch_add(1, Ordering::SeqCst);
}

#[retry(attempts = 4, base = "20ms", cap = "2s", on = retry_jitter::transient)]
async fn get(client: &reqwest::Client, url: &str) -> Result<String, Error> {
    let resp = client.get(url).send().await?;
    Ok(check(resp).await?.text().await?)
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .expect("a client")
}

#[tokio::test]
async fn a_503_with_retry_after_1_is_retried_after_at_least_one_second() {
    let (addr, calls) = upstream::start().await.unwrap();
    let started = Instant::now();
    let body = get(&client(), &format!("http://{addr}/flaky/503/1/a")).await;
    assert_eq!(body.unwrap(), "ok after 2 calls");
    assert_eq!(calls.get("/flaky/503/1/a"), 2);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_500_and_a_429_are_retried_until_the_upstream_recovers() {
    let (addr, calls) = upstream::start().await.unwrap();
    let c = client();
    assert_eq!(
        get(&c, &format!("http://{addr}/flaky/500/2/b"))
            .await
            .unwrap(),
        "ok after 3 calls"
    );
    assert_eq!(calls.get("/flaky/500/2/b"), 3);
    assert_eq!(
        get(&c, &format!("http://{addr}/flaky/429/1/c"))
            .await
            .unwrap(),
        "ok after 2 calls"
    );
    assert_eq!(calls.get("/flaky/429/1/c"), 2);
}

#[tokio::test]
async fn a_404_and_a_400_are_tried_once() {
    let (addr, calls) = upstream::start().await.unwrap();
    let c = client();
    for code in [404u16, 400] {
        let err = get(&c, &format!("http://{addr}/status/{code}/d"))
            .await
            .unwrap_err();
        assert_eq!(err.status().map(|s| s.as_u16()), Some(code));
        assert_eq!(
            calls.get(&format!("/status/{code}/d")),
            1,
            "{code} was retried"
        );
        let Error::Status(status) = err else {
            panic!("not a status error")
        };
        assert_eq!(status.body, format!("always {code}"));
    }
}

#[tokio::test]
async fn a_429_storm_stops_at_attempts_with_the_last_error() {
    let (addr, calls) = upstream::start().await.unwrap();
    let err = get(&client(), &format!("http://{addr}/status/429/e"))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(http::StatusCode::TOO_MANY_REQUESTS));
    assert_eq!(calls.get("/status/429/e"), 4);
}

#[retry(attempts = 3, base = "10ms", on = retry_jitter::transient, notify = count)]
async fn get_counted(client: &reqwest::Client, url: &str) -> Result<String, Error> {
    let resp = client.get(url).send().await?;
    Ok(check(resp).await?.text().await?)
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_returned_as_the_last_error() {
    // A port that was just free on loopback, and nothing listening on it.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    RETRIES.store(0, Ordering::SeqCst);
    let err = get_counted(&client(), &format!("http://127.0.0.1:{port}/"))
        .await
        .unwrap_err();
    let Error::Transport(e) = err else {
        panic!("not a transport error")
    };
    assert!(e.is_connect(), "{e}");
    assert_eq!(RETRIES.load(Ordering::SeqCst), 2, "3 attempts: 2 retries");
}

#[tokio::test]
async fn a_service_handler_calling_the_upstream_retries_inside_the_request() {
    use axum::extract::State;
    use axum::routing::get as route;

    let (up, calls) = upstream::start().await.unwrap();
    let upstream_url = format!("http://{up}/flaky/500/2/svc");
    let app = axum::Router::new()
        .route(
            "/user",
            route(|State(url): State<String>| async move {
                match get(&client(), &url).await {
                    Ok(body) => (http::StatusCode::OK, body),
                    Err(e) => (http::StatusCode::BAD_GATEWAY, e.to_string()),
                }
            }),
        )
        .with_state(upstream_url);
    let addr = loopback::serve(app).await;

    let resp = client()
        .get(format!("http://{addr}/user"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), http::StatusCode::OK);
    assert_eq!(resp.text().await.unwrap(), "ok after 3 calls");
    assert_eq!(calls.get("/flaky/500/2/svc"), 3);
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_and_is_retried() {
    let (addr, calls) = upstream::start().await.unwrap();
    let impatient = reqwest::Client::builder()
        .timeout(Duration::from_millis(100))
        .build()
        .unwrap();
    let err = get(&impatient, &format!("http://{addr}/hang/f"))
        .await
        .unwrap_err();
    let Error::Transport(e) = err else {
        panic!("not a transport error: {err:?}")
    };
    assert!(e.is_timeout(), "{e:?}");
    assert_eq!(calls.get("/hang/f"), 4);
}

#[retry(attempts = 4, base = "20ms", cap = "2s", timeout = "200ms", max_elapsed = "5s", on = retry_jitter::transient)]
async fn get_within(client: &reqwest::Client, url: &str) -> Result<String, Error> {
    let resp = client.get(url).send().await?;
    Ok(check(resp).await?.text().await?)
}

#[retry(attempts = 4, timeout = "10s", max_elapsed = "300ms", on = retry_jitter::transient)]
async fn get_by_deadline(client: &reqwest::Client, url: &str) -> Result<String, Error> {
    let resp = client.get(url).send().await?;
    Ok(check(resp).await?.text().await?)
}

#[tokio::test]
async fn the_timeout_key_cuts_a_server_that_never_answers_with_a_client_that_would_wait_forever() {
    let (addr, calls) = upstream::start().await.unwrap();
    let patient = reqwest::Client::new(); // no timeout of its own
    let started = Instant::now();
    let err = get_within(&patient, &format!("http://{addr}/hang/g"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::TimedOut(_)), "{err:?}");
    assert_eq!(calls.get("/hang/g"), 4);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );

    // The deadline cuts the first attempt, and ends the call.
    let started = Instant::now();
    let err = get_by_deadline(&patient, &format!("http://{addr}/hang/h"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::TimedOut(_)), "{err:?}");
    assert_eq!(calls.get("/hang/h"), 1);
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(2),
        "{took:?}"
    );
}

/// A raw loopback HTTP server, for answers axum will not give: each connection gets a thread
/// that reads the request, counts it, and hands the socket to `answer`.
fn raw_server(answer: impl Fn(TcpStream) + Send + Sync + 'static) -> (SocketAddr, Arc<AtomicU32>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let requests = Arc::new(AtomicU32::new(0));
    let (answer, counted) = (Arc::new(answer), requests.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let (answer, counted) = (answer.clone(), counted.clone());
            std::thread::spawn(move || {
                let mut request = [0; 4096];
                if matches!(stream.read(&mut request), Ok(n) if n > 0) {
                    counted.fetch_add(1, Ordering::SeqCst);
                    answer(stream);
                }
            });
        }
    });
    (addr, requests)
}

/// A 503 asking for `Retry-After: 1` and announcing `length` bytes of body.
fn head_503(length: u64) -> String {
    format!(
        "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: {length}\r\n\r\n"
    )
}

/// `check` on a GET of `addr`: the status error, and how long the call took.
async fn status_error(addr: SocketAddr) -> (StatusError, Duration) {
    let started = Instant::now();
    let resp = client()
        .get(format!("http://{addr}/"))
        .send()
        .await
        .unwrap();
    let err = check(resp).await.expect_err("a 503");
    (err, started.elapsed())
}

#[tokio::test]
async fn a_503_whose_body_stalls_after_1_mib_returns_promptly_with_the_hint_and_64_kib() {
    let (addr, _) = raw_server(|mut stream| {
        let _ = stream.write_all(head_503(4 << 20).as_bytes());
        let _ = stream.write_all(&vec![b'x'; 1 << 20]);
        std::thread::sleep(Duration::from_secs(30)); // stalled, the connection open
    });
    let (err, took) = status_error(addr).await;
    assert_eq!(err.status, http::StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(err.retry_after, Some(Duration::from_secs(1)));
    assert_eq!(err.decision(), Decision::RetryAfter(Duration::from_secs(1)));
    assert_eq!(err.body.len(), MAX_ERROR_BODY);
    assert!(err.body.bytes().all(|b| b == b'x'));
    assert!(took < ERROR_BODY_TIMEOUT, "{took:?}");
}

#[tokio::test]
async fn a_503_whose_body_stalls_early_keeps_what_arrived() {
    let (addr, _) = raw_server(|mut stream| {
        let _ = stream.write_all(head_503(1000).as_bytes());
        let _ = stream.write_all(b"overloaded");
        std::thread::sleep(Duration::from_secs(30));
    });
    let (err, took) = status_error(addr).await;
    assert_eq!(err.body, "overloaded");
    assert_eq!(err.retry_after, Some(Duration::from_secs(1)));
    assert!(took >= ERROR_BODY_IDLE_TIMEOUT, "{took:?}");
    assert!(
        took < ERROR_BODY_TIMEOUT + Duration::from_secs(1),
        "{took:?}"
    );
}

#[tokio::test]
async fn a_503_whose_body_trickles_is_cut_at_the_total_bound() {
    let (addr, _) = raw_server(|mut stream| {
        let _ = stream.write_all(head_503(1000).as_bytes());
        for _ in 0..1000 {
            if stream.write_all(b"x").is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    let (err, took) = status_error(addr).await;
    assert!(
        !err.body.is_empty() && err.body.len() <= 12,
        "{:?}",
        err.body
    );
    assert!(took >= ERROR_BODY_TIMEOUT, "{took:?}");
    assert!(
        took < ERROR_BODY_TIMEOUT + Duration::from_secs(1),
        "{took:?}"
    );
}

#[tokio::test]
async fn a_503_with_a_256_mib_body_keeps_64_kib_and_is_not_downloaded() {
    const HUGE: u64 = 256 << 20;
    let (sent_tx, sent_rx) = mpsc::channel();
    let (addr, _) = raw_server(move |mut stream| {
        let _ = stream.write_all(head_503(HUGE).as_bytes());
        let block = vec![b'x'; 64 << 10];
        let mut sent = 0u64;
        while sent < HUGE && stream.write_all(&block).is_ok() {
            sent += block.len() as u64;
        }
        let _ = sent_tx.send(sent);
    });
    let (err, took) = status_error(addr).await;
    assert_eq!(err.body.len(), MAX_ERROR_BODY);
    assert!(took < ERROR_BODY_TIMEOUT, "{took:?}");
    // The client dropped the connection: the server's writes fail long before 256 MiB (what
    // it sent is what the loopback socket buffers held, a few MiB).
    let sent = tokio::task::spawn_blocking(move || sent_rx.recv_timeout(Duration::from_secs(10)))
        .await
        .unwrap()
        .expect("the server stopped writing");
    assert!(sent < 32 << 20, "the server sent {} MiB", sent >> 20);
}

#[retry(attempts = 3, base = "10ms", on = retry_jitter::transient)]
async fn get_thrice(client: &reqwest::Client, url: &str) -> Result<String, Error> {
    let resp = client.get(url).send().await?;
    Ok(check(resp).await?.text().await?)
}

#[tokio::test]
async fn a_200_cut_mid_body_is_retried_like_an_unexpected_eof() {
    let (addr, requests) = raw_server(|mut stream| {
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789");
    });
    let err = get_thrice(&client(), &format!("http://{addr}/"))
        .await
        .unwrap_err();
    assert_eq!(
        requests.load(Ordering::SeqCst),
        3,
        "all three attempts made"
    );
    let Error::Transport(e) = &err else {
        panic!("not a transport error: {err:?}")
    };
    assert!(e.is_decode(), "{e:?}");
    let mut cause = std::error::Error::source(e);
    let io = std::iter::from_fn(|| {
        let now = cause?;
        cause = now.source();
        Some(now)
    })
    .find_map(|c| c.downcast_ref::<std::io::Error>())
    .expect("an io::Error down the chain");
    assert_eq!(io.kind(), std::io::ErrorKind::UnexpectedEof);
    assert_eq!(err.decision(), Decision::Retry);
}

#[tokio::test]
async fn an_error_prints_each_message_once_down_its_source_chain() {
    let (addr, _) = raw_server(|mut stream| {
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789");
    });
    let err = get_thrice(&client(), &format!("http://{addr}/"))
        .await
        .unwrap_err();
    let mut messages = vec![err.to_string()];
    let mut cause = std::error::Error::source(&err);
    while let Some(c) = cause {
        messages.push(c.to_string());
        cause = c.source();
    }
    // error decoding response body / error reading a body from connection / end of file …
    assert!(messages.len() >= 3, "{messages:?}");
    for (i, m) in messages.iter().enumerate() {
        assert!(
            !messages[i + 1..]
                .iter()
                .any(|later| later.contains(m.as_str())),
            "{m:?} is printed twice: {messages:?}"
        );
    }
}

/// `get_thrice` on a raw server that answers every request with `head`: the error, and how
/// many requests the server saw.
async fn thrice_against(head: Vec<u8>) -> (Error, u32) {
    let head = Arc::new(head);
    let (addr, requests) = raw_server(move |mut stream| {
        let _ = stream.write_all(&head);
    });
    let err = get_thrice(&client(), &format!("http://{addr}/"))
        .await
        .unwrap_err();
    (err, requests.load(Ordering::SeqCst))
}

#[tokio::test]
async fn a_response_head_that_cannot_be_parsed_is_fetched_once() {
    let mut many = b"HTTP/1.1 200 OK\r\n".to_vec();
    for i in 0..10_000 {
        many.extend_from_slice(format!("x-h{i}: v\r\n").as_bytes());
    }
    many.extend_from_slice(b"Content-Length: 0\r\n\r\n");
    let mut long = b"HTTP/1.1 200 OK\r\nx-long: ".to_vec();
    long.extend(std::iter::repeat_n(b'a', 1 << 20));
    long.extend_from_slice(b"\r\nContent-Length: 0\r\n\r\n");
    let bad_status = b"HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n".to_vec();
    for (what, head) in [
        ("10,000 headers", many),
        ("a 1 MiB header line", long),
        ("an invalid status line", bad_status),
    ] {
        let (err, requests) = thrice_against(head).await;
        assert_eq!(requests, 1, "{what}: fetched once, not retried ({err:?})");
        assert_eq!(err.decision(), Decision::Stop, "{what}: {err:?}");
    }
}

#[tokio::test]
async fn https_on_a_reqwest_without_tls_stops_at_once() {
    RETRIES.store(0, Ordering::SeqCst);
    let err = get_counted(&client(), "https://127.0.0.1:1/")
        .await
        .unwrap_err();
    let Error::Transport(e) = &err else {
        panic!("not a transport error: {err:?}")
    };
    assert!(e.is_connect(), "reqwest calls it a connect error: {e:?}");
    assert_eq!(err.decision(), Decision::Stop, "{e:?}");
    assert_eq!(RETRIES.load(Ordering::SeqCst), 0, "not retried");
}

#[retry(attempts = 1, timeout = "500ms", on = retry_jitter::transient)]
async fn get_once_within(client: &reqwest::Client, url: &str) -> Result<String, Error> {
    let resp = client.get(url).send().await?;
    Ok(check(resp).await?.text().await?)
}

#[retry(attempts = 1, timeout = "500ms", hedge = "2s", on = retry_jitter::transient)]
async fn get_hedged_within(client: &reqwest::Client, url: &str) -> Result<String, Error> {
    let resp = client.get(url).send().await?;
    Ok(check(resp).await?.text().await?)
}

/// A server answering 503 `Retry-After: 1` whose body trickles, a byte every 50 ms for 3 s.
fn trickling_503() -> SocketAddr {
    raw_server(|mut stream| {
        let _ = stream.write_all(head_503(60).as_bytes());
        for _ in 0..60 {
            if stream.write_all(b"x").is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    })
    .0
}

/// The 503 came back, with its hint and what arrived of its body, within the attempt.
///
/// On the real clock (the server is a thread that sleeps between bytes), so the time is
/// bounded as a loaded machine keeps it: the read of the body went on past its first bytes
/// (it ends 5 ms before the attempt's 500 ms, or after a 250 ms stall of the trickle, never
/// sooner) and stopped long before the trickle's 3 s. That it ended within the attempt is the
/// `Status` error itself: an attempt cut by its `timeout` returns `TimedOut`, losing the 503.
fn assert_kept_503(out: Result<String, Error>, took: Duration) {
    let err = out.expect_err("a 503");
    let Error::Status(e) = &err else {
        panic!("the 503 was lost: {err:?} after {took:?}")
    };
    assert_eq!(e.status, http::StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(e.retry_after, Some(Duration::from_secs(1)));
    assert!(!e.body.is_empty() && e.body.len() < 60, "{:?}", e.body);
    assert!(
        took >= Duration::from_millis(250) && took < Duration::from_secs(2),
        "{took:?}"
    );
}

#[tokio::test]
async fn a_503_whose_body_trickles_past_the_timeout_keeps_its_status_and_hint() {
    let c = client();
    let url = format!("http://{}/", trickling_503());
    let started = Instant::now();
    assert_kept_503(get_once_within(&c, &url).await, started.elapsed());

    let started = Instant::now();
    assert_kept_503(get_hedged_within(&c, &url).await, started.elapsed());

    let r = retry_jitter::Retry::new(retry_jitter::Policy::new().with_attempts(1))
        .timeout(Duration::from_millis(500));
    let started = Instant::now();
    let out = r
        .call_async(|| async {
            let resp = c.get(&url).send().await?;
            Ok(check(resp).await?.text().await?)
        })
        .await;
    assert_kept_503(out, started.elapsed());
}
