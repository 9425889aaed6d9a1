//! Feature `tracing`: what the breaker and the middleware faces emit names the crate, as the
//! retry events do (`tests/tracing/metadata.rs`): the circuit breaker's state changes (WARN,
//! `function`, `state`) and the `retry_attempt` span a face's resent attempt runs in (INFO,
//! `http.request.resend_count`) say `retry_jitter` for target and module path, and no file,
//! line or name of the runtime's sources.
#![cfg(feature = "tracing")]

use std::io;
use std::time::Duration;

use retry_jitter::{CircuitBreaker, Policy, Retry};
use tracing::Level;

use crate::trace_recorder;
use trace_recorder::{capture, record, Recorded};

/// A breaker event's fields: `function` and the new `state`.
fn assert_breaker_event(event: &Recorded, state: &str) {
    assert_eq!(event.name, "circuit breaker", "{event:#?}");
    assert_eq!(event.level, Level::WARN, "{event:#?}");
    assert_eq!(
        event.names(),
        ["message", "function", "state"],
        "{event:#?}"
    );
    assert_eq!(event.get("message"), Some("circuit breaker"));
    assert_eq!(event.get("function"), Some("payments"));
    assert_eq!(event.get("state"), Some(state));
}

#[test]
fn the_breaker_s_state_changes_name_the_crate() {
    // Opens at two calls that all failed; breaks for 20 ms.
    let breaker = CircuitBreaker::new(1.0, 2, Duration::from_secs(60), Duration::from_millis(20));
    let retry = Retry::new(Policy::new().with_attempts(1).with_base(Duration::ZERO))
        .with_name("payments")
        .breaker(&breaker);
    let down = || Err::<(), _>(io::Error::from(io::ErrorKind::ConnectionRefused));

    let events = capture(|| {
        assert!(retry.call(down).is_err());
        assert!(retry.call(down).is_err());
        // Open: refused without a call, and no change to tell of.
        let mut called = false;
        let refused = retry.call(|| {
            called = true;
            Ok::<_, io::Error>(())
        });
        assert!(refused.is_err() && !called);
    });
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_breaker_event(&events[0], "Open");

    std::thread::sleep(Duration::from_millis(30));
    let events = capture(|| {
        // The break is over: this call is the probe, and it closes the breaker.
        assert!(retry.call(|| Ok::<_, io::Error>(())).is_ok());
    });
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_breaker_event(&events[0], "HalfOpen");
    assert_breaker_event(&events[1], "Closed");
}

#[cfg(feature = "tower")]
mod tower_layer {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    use bytes::Bytes;
    use http_body_util::Full;
    use retry_jitter::tower::{BoxError, RetryLayer};
    use tower::ServiceExt;

    use super::*;

    /// A layer over a service that answers `fail()` to its first two calls, then 200: the
    /// status the layer answers.
    async fn twice_then_ok(fail: fn() -> Result<http::Response<()>, BoxError>) -> http::StatusCode {
        let calls = Arc::new(AtomicU32::new(0));
        let seen = calls.clone();
        let upstream = tower::service_fn(move |_: http::Request<Full<Bytes>>| {
            let n = seen.fetch_add(1, Ordering::SeqCst);
            async move {
                match n {
                    0 | 1 => fail(),
                    _ => Ok(http::Response::new(())),
                }
            }
        });
        let policy = Policy::new()
            .with_attempts(4)
            .with_base(Duration::from_millis(2));
        let svc = tower::ServiceBuilder::new()
            .layer(RetryLayer::new(policy))
            .service(upstream);
        let req = http::Request::get("http://127.0.0.1:8080/items")
            .body(Full::new(Bytes::new()))
            .unwrap();
        let status = svc.oneshot(req).await.unwrap().status();
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        status
    }

    /// The spans of a layer's call whose first two attempts `fail`: each checked for its
    /// metadata (by `record`), then for its name, level and count.
    fn assert_resends_name_the_crate(fail: fn() -> Result<http::Response<()>, BoxError>) {
        let recorded = record(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .unwrap();
            assert_eq!(rt.block_on(twice_then_ok(fail)), 200);
        });
        let spans = recorded.spans();
        assert_eq!(spans.len(), 2, "the first attempt has no span: {spans:#?}");
        for (span, count) in spans.iter().zip(["1", "2"]) {
            assert_eq!(span.name, "retry_attempt", "{span:#?}");
            assert_eq!(span.level, Level::INFO, "{span:#?}");
            assert_eq!(span.names(), ["http.request.resend_count"], "{span:#?}");
            assert_eq!(span.get("http.request.resend_count"), Some(count));
        }
        assert_eq!(spans[0].callsite, spans[1].callsite, "one callsite");
    }

    #[test]
    fn each_resend_after_a_503_runs_in_a_span_that_names_the_crate() {
        assert_resends_name_the_crate(|| {
            Ok(http::Response::builder().status(503).body(()).unwrap())
        });
    }

    #[test]
    fn each_resend_after_an_error_runs_in_a_span_that_names_the_crate() {
        assert_resends_name_the_crate(|| {
            Err(io::Error::from(io::ErrorKind::ConnectionReset).into())
        });
    }
}

/// The events of the middleware faces' calls (feature `tracing` on, no `.trace(..)`: the
/// attribute's levels): what they say of a request is its method, scheme, host and path, of a
/// response its status: never a header value, a query string or a body.
#[cfg(all(feature = "tower", feature = "reqwest-middleware"))]
mod calls {
    use super::*;

    use crate::scripted::upstream;

    use bytes::Bytes;
    use http_body_util::Full;
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;
    use retry_jitter::reqwest_middleware::RetryMiddleware;
    use retry_jitter::tower::RetryLayer;
    use tower::ServiceExt;

    const SECRET: &str = "SECRET-c0ffee";

    fn quick() -> Policy {
        Policy::new()
            .with_attempts(3)
            .with_base(Duration::from_millis(1))
            .with_cap(Duration::from_millis(5))
    }

    /// What `f` emits, run on a runtime of this thread, where the recorder listens.
    fn events_of<F: std::future::Future<Output = ()>>(f: impl FnOnce() -> F) -> Vec<Recorded> {
        capture(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(f())
        })
    }

    /// The events' messages, in order; and no field of any holds the secret.
    fn messages(events: &[Recorded]) -> Vec<&str> {
        for event in events {
            for (name, value) in &event.fields {
                assert!(!value.contains(SECRET), "{name} = {value}: {event:#?}");
                assert!(!value.contains("token="), "{name} = {value}: {event:#?}");
            }
        }
        events.iter().filter_map(|e| e.get("message")).collect()
    }

    /// A request through `RetryLayer` (hyper's client), with a secret in a header and in the
    /// query.
    async fn through_the_layer(
        method: &str,
        script: &[(u16, Option<&'static str>)],
    ) -> (u16, usize) {
        let (addr, up) = upstream(script).await;
        let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
        let svc = tower::ServiceBuilder::new()
            .layer(RetryLayer::new(quick()))
            .service(client);
        let req = http::Request::builder()
            .method(method)
            .uri(format!("http://{addr}/orders?token={SECRET}"))
            .header("authorization", format!("Bearer {SECRET}"))
            .body(Full::new(Bytes::from(SECRET)))
            .unwrap();
        let status = svc.oneshot(req).await.unwrap().status().as_u16();
        (status, up.calls())
    }

    /// The same through `RetryMiddleware` (reqwest).
    async fn through_the_middleware(
        method: reqwest::Method,
        script: &[(u16, Option<&'static str>)],
    ) -> (u16, usize) {
        let (addr, up) = upstream(script).await;
        let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
            .with(RetryMiddleware::new(quick()))
            .build();
        let resp = client
            .request(method, format!("http://{addr}/orders?token={SECRET}"))
            .header("authorization", format!("Bearer {SECRET}"))
            .body(SECRET)
            .send()
            .await
            .unwrap();
        (resp.status().as_u16(), up.calls())
    }

    #[test]
    fn both_faces_say_retrying_and_giving_up_with_the_status_alone() {
        let events = events_of(|| async {
            assert_eq!(through_the_layer("GET", &[(503, None); 3]).await, (503, 3));
        });
        assert_eq!(messages(&events), ["retrying", "retrying", "giving up"]);
        assert_eq!(events[0].level, Level::WARN);
        assert_eq!(
            events[0].get("error"),
            Some("status 503 Service Unavailable")
        );
        assert_eq!(events[0].get("function"), Some("tower"));
        assert_eq!(events[2].get("reason"), Some("attempts spent"));
        let events = events_of(|| async {
            let got = through_the_middleware(reqwest::Method::GET, &[(503, None); 3]).await;
            assert_eq!(got, (503, 3));
        });
        assert_eq!(messages(&events), ["retrying", "retrying", "giving up"]);
        assert_eq!(
            events[1].get("error"),
            Some("status 503 Service Unavailable")
        );
        assert_eq!(events[1].get("function"), Some("reqwest"));
    }

    #[test]
    fn a_recovered_call_says_so_one_level_below() {
        let events = events_of(|| async {
            assert_eq!(through_the_layer("GET", &[(503, None)]).await, (200, 2));
            let got = through_the_middleware(reqwest::Method::GET, &[(503, None)]).await;
            assert_eq!(got, (200, 2));
        });
        assert_eq!(
            messages(&events),
            ["retrying", "recovered", "retrying", "recovered"]
        );
        assert_eq!(events[1].level, Level::INFO);
    }

    #[test]
    fn a_keyless_post_answered_500_leaves_one_not_sent_again_event() {
        let events = events_of(|| async {
            // 500 on a write without a key: it may have been applied, so it is not sent again.
            assert_eq!(through_the_layer("POST", &[(500, None)]).await, (500, 1));
            let got = through_the_middleware(reqwest::Method::POST, &[(500, None)]).await;
            assert_eq!(got, (500, 1));
        });
        assert_eq!(messages(&events), ["not sent again", "not sent again"]);
        for event in &events {
            assert_eq!(event.level, Level::WARN);
            assert_eq!(event.get("why"), Some("a write without an idempotency key"));
            let request = event.get("request").unwrap();
            assert!(request.starts_with("POST http://127.0.0.1:"), "{request}");
            assert!(request.ends_with("/orders"), "{request}");
        }
    }
}
