//! Retrying HTTP calls against a real axum upstream on loopback, through reqwest.
#![cfg(feature = "reqwest")]

#[path = "support/upstream.rs"]
mod upstream;

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use retry_jitter::reqwest::{check, Error};
use retry_jitter::{retry, RetryEvent};

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
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });

    let resp = client()
        .get(format!("http://{addr}/user"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), http::StatusCode::OK);
    assert_eq!(resp.text().await.unwrap(), "ok after 3 calls");
    assert_eq!(calls.get("/flaky/500/2/svc"), 3);
}
