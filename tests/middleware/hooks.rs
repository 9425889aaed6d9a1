//! `RetryLayer` and `RetryMiddleware` with the loop's hooks and guards, against a real server on
//! loopback: what the server receives and what the caller and the hooks get, as under
//! `#[retry]`. A response retried for its status (a 503) is a failure to the hooks
//! (`Failed::Status`), the breaker, the throttle and the figures, and still the caller's answer.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::scripted;
use scripted::upstream;

use retry_jitter::hooks::HookFuture;
use retry_jitter::http::Failed;
use retry_jitter::{
    AdaptiveThrottle, CancelToken, CircuitBreaker, CircuitOpen, GiveUp, Policy, RetryEvent,
    RetryStats, Throttled,
};

/// Three attempts, waits short enough for a test.
fn quick() -> Policy {
    Policy::new()
        .with_attempts(3)
        .with_base(Duration::from_millis(2))
        .with_cap(Duration::from_millis(20))
}

/// Thirty seconds of wait after a failure: only a cancel ends the call sooner.
fn slow() -> Policy {
    quick()
        .with_base(Duration::from_secs(30))
        .with_cap(Duration::from_secs(30))
}

/// Cancel `token` as soon as `up` has seen its first request.
fn cancel_after_first(up: &Arc<scripted::Upstream>, token: &CancelToken) {
    let (seen, cancel) = (Arc::clone(up), token.clone());
    tokio::spawn(async move {
        while seen.calls() == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        cancel.cancel();
    });
}

/// What the hooks heard, in order, as lines.
#[derive(Clone, Default)]
struct Heard(Arc<Mutex<Vec<String>>>);

impl Heard {
    fn push(&self, line: String) {
        self.0.lock().unwrap().push(line);
    }
    fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// How a hook shows what failed: the status, or that it was an error.
fn shown<E>(failed: &Failed<'_, E>) -> String {
    match failed {
        Failed::Status(status) => status.as_u16().to_string(),
        Failed::Error(_) => "error".to_owned(),
        _ => "other".to_owned(),
    }
}

/// `$face::new(quick())` with `notify`, `give_up` and `stats` hooks (the face's error `$error`)
/// that write what they hear to `$heard`.
macro_rules! hooked {
    ($face:ident, $error:ty, $heard:expr) => {{
        let (n, g, s) = ($heard.clone(), $heard.clone(), $heard.clone());
        $face::new(quick())
            .notify(move |f: &Failed<'_, $error>, ev: &RetryEvent| {
                n.push(format!("notify {} attempt {}", shown(f), ev.attempt));
            })
            .give_up(move |f: &Failed<'_, $error>, g2: &GiveUp| {
                g.push(
                    format!("give_up {} {:?} after {}", shown(f), g2.reason, g2.calls)
                        .to_lowercase(),
                );
            })
            .stats(move |st: &RetryStats| {
                s.push(format!(
                    "stats {} attempts, gave up: {:?}",
                    st.attempts, st.gave_up
                ));
            })
    }};
}

/// The lines the hooks of a call of three attempts answered 503 each hear.
fn three_503s() -> Vec<String> {
    vec![
        "notify 503 attempt 1".to_owned(),
        "notify 503 attempt 2".to_owned(),
        "give_up 503 attempts after 3".to_owned(),
        "stats 3 attempts, gave up: Some(Attempts)".to_owned(),
    ]
}

/// What the async hooks of a call of three attempts answered 503 each hear, when each
/// `notify_async` takes 30 ms: the server's count as it starts and as it ends (equal: nothing
/// is sent while it runs).
fn three_503s_awaited() -> Vec<String> {
    vec![
        "notify_async 503 attempt 1, calls 1 then 1".to_owned(),
        "notify_async 503 attempt 2, calls 2 then 2".to_owned(),
        "give_up_async 503 attempts".to_owned(),
        "stats_async 3 attempts".to_owned(),
    ]
}

/// `$face::new(quick())` with `notify_async` (30 ms, reading `$up`'s count before and after),
/// `give_up_async` and `stats_async` hooks that write what they hear to `$heard`.
macro_rules! awaited {
    ($face:ident, $error:ty, $heard:expr, $up:expr) => {{
        let (n, g, s, up) = (
            $heard.clone(),
            $heard.clone(),
            $heard.clone(),
            Arc::clone(&$up),
        );
        $face::new(quick())
            .notify_async(
                move |f: Failed<'_, $error>, ev: &RetryEvent| -> HookFuture<'_> {
                    let (n, up) = (n.clone(), Arc::clone(&up));
                    let line = format!("notify_async {} attempt {}", shown(&f), ev.attempt);
                    Box::pin(async move {
                        let before = up.calls();
                        tokio::time::sleep(Duration::from_millis(30)).await;
                        n.push(format!("{line}, calls {before} then {}", up.calls()));
                    })
                },
            )
            .give_up_async(
                move |f: Failed<'_, $error>, g2: &GiveUp| -> HookFuture<'_> {
                    let line =
                        format!("give_up_async {} {:?}", shown(&f), g2.reason).to_lowercase();
                    let g = g.clone();
                    Box::pin(async move { g.push(line) })
                },
            )
            .stats_async(move |st: &RetryStats| -> HookFuture<'_> {
                let s = s.clone();
                Box::pin(async move { s.push(format!("stats_async {} attempts", st.attempts)) })
            })
    }};
}

mod tower_hyper {
    use super::*;
    use bytes::Bytes;
    use http_body_util::Full;
    use hyper_util::client::legacy::connect::HttpConnector;
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;
    use retry_jitter::tower::{BoxError, RetryLayer};
    use tower::{Layer, Service, ServiceExt};

    type Hyper = Client<HttpConnector, Full<Bytes>>;

    /// `GET /stock` through `layer` over hyper's client: the status, or the layer's error.
    async fn get<L>(addr: std::net::SocketAddr, layer: &L) -> Result<u16, BoxError>
    where
        L: Layer<Hyper>,
        L::Service: Service<
            http::Request<Full<Bytes>>,
            Response = http::Response<hyper::body::Incoming>,
            Error = BoxError,
        >,
    {
        let client = Client::builder(TokioExecutor::new()).build_http();
        let req = http::Request::get(format!("http://{addr}/stock"))
            .body(Full::new(Bytes::new()))
            .unwrap();
        let resp = layer.layer(client).oneshot(req).await?;
        Ok(resp.status().as_u16())
    }

    #[tokio::test]
    async fn the_hooks_are_told_each_503_and_the_caller_still_gets_it() {
        let (addr, up) = upstream(&[(503, None), (503, None), (503, None)]).await;
        let heard = Heard::default();
        let layer = hooked!(RetryLayer, BoxError, heard);
        assert_eq!(get(addr, &layer).await.unwrap(), 503);
        assert_eq!(up.calls(), 3);
        assert_eq!(heard.lines(), three_503s());
    }

    #[tokio::test]
    async fn a_first_503_the_layer_sent_alone_is_told_as_a_failure() {
        // No guard and no `stats` hook: the layer sends the first attempt itself and hands
        // its answer to the loop, which sorts it as the attempts it makes.
        let (addr, up) = upstream(&[(503, None), (503, None)]).await;
        let heard = Heard::default();
        let n = heard.clone();
        let layer =
            RetryLayer::new(quick()).notify(move |f: &Failed<'_, BoxError>, ev: &RetryEvent| {
                n.push(format!("notify {} attempt {}", shown(f), ev.attempt));
            });
        assert_eq!(get(addr, &layer).await.unwrap(), 200);
        assert_eq!(up.calls(), 3);
        assert_eq!(
            heard.lines(),
            ["notify 503 attempt 1", "notify 503 attempt 2"]
        );
    }

    #[tokio::test]
    async fn the_async_hooks_are_awaited_and_nothing_is_sent_while_notify_runs() {
        let (addr, up) = upstream(&[(503, None); 3]).await;
        let heard = Heard::default();
        let layer = awaited!(RetryLayer, BoxError, heard, up);
        assert_eq!(get(addr, &layer).await.unwrap(), 503);
        assert_eq!(up.calls(), 3);
        assert_eq!(heard.lines(), three_503s_awaited());
    }

    #[tokio::test]
    async fn a_recovered_call_is_not_a_give_up() {
        let (addr, up) = upstream(&[(503, None)]).await;
        let heard = Heard::default();
        let (n, s) = (heard.clone(), heard.clone());
        let layer = RetryLayer::new(quick())
            .notify(move |f: &Failed<'_, BoxError>, ev: &RetryEvent| {
                n.push(format!("notify {} attempt {}", shown(f), ev.attempt));
            })
            .stats(move |st: &RetryStats| {
                s.push(format!(
                    "stats {} attempts, gave up: {:?}",
                    st.attempts, st.gave_up
                ));
            });
        assert_eq!(get(addr, &layer).await.unwrap(), 200);
        assert_eq!(up.calls(), 2);
        assert_eq!(
            heard.lines(),
            ["notify 503 attempt 1", "stats 2 attempts, gave up: None"]
        );
    }

    #[tokio::test]
    async fn a_breaker_opened_by_503s_refuses_the_next_call_unsent() {
        static BREAKER: CircuitBreaker =
            CircuitBreaker::new(0.5, 1, Duration::from_secs(60), Duration::from_secs(60));
        let (addr, up) = upstream(&[(503, None), (503, None), (503, None)]).await;
        let layer = RetryLayer::new(quick()).breaker(&BREAKER);
        assert_eq!(get(addr, &layer).await.unwrap(), 503);
        assert_eq!(up.calls(), 3);
        // The call ended on a 503: a failure to the breaker, which opens.
        let refused = get(addr, &layer).await.unwrap_err();
        assert!(refused.is::<CircuitOpen>(), "{refused}");
        assert_eq!(up.calls(), 3);
    }

    #[tokio::test]
    async fn a_throttle_sheds_requests_answered_503() {
        static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(1.0, Duration::from_secs(60));
        let (addr, up) = upstream(&[(503, None); 40]).await;
        let layer = RetryLayer::new(quick().with_attempts(1)).throttle(&THROTTLE);
        let mut throttled = 0;
        for _ in 0..40 {
            match get(addr, &layer).await {
                Ok(status) => assert_eq!(status, 503),
                Err(e) => {
                    assert!(e.is::<Throttled>(), "{e}");
                    throttled += 1;
                }
            }
        }
        // Every answer a 503, none accepted: after the first few, most requests are shed
        // (each with a chance of n/(n+1) after n requests).
        assert!(throttled >= 20, "{throttled} of 40 shed");
        assert_eq!(up.calls() + throttled, 40);
    }

    #[tokio::test]
    async fn a_cancelled_token_ends_the_wait_and_sends_nothing_more() {
        let (addr, up) = upstream(&[(503, None), (503, None)]).await;
        let token = CancelToken::new();
        let layer = RetryLayer::new(slow()).cancel(&token);
        let started = Instant::now();
        cancel_after_first(&up, &token);
        assert_eq!(get(addr, &layer).await.unwrap(), 503);
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(up.calls(), 1);
    }

    /// `GET /stock` through `layer`: the figures the response carries, if any.
    async fn figures<L>(addr: std::net::SocketAddr, layer: &L) -> (u16, Option<RetryStats>)
    where
        L: Layer<Hyper>,
        L::Service: Service<
            http::Request<Full<Bytes>>,
            Response = http::Response<hyper::body::Incoming>,
            Error = BoxError,
        >,
    {
        let client = Client::builder(TokioExecutor::new()).build_http();
        let req = http::Request::get(format!("http://{addr}/stock"))
            .body(Full::new(Bytes::new()))
            .unwrap();
        let resp = layer.layer(client).oneshot(req).await.unwrap();
        (
            resp.status().as_u16(),
            resp.extensions().get::<RetryStats>().cloned(),
        )
    }

    #[tokio::test]
    async fn every_response_carries_its_call_s_figures_when_asked() {
        let layer = RetryLayer::new(quick()).stats_in_response();
        let (addr, up) = upstream(&[(503, None)]).await;
        let (status, stats) = figures(addr, &layer).await;
        let stats = stats.expect("the figures in the response");
        assert_eq!((status, stats.attempts, stats.gave_up), (200, 2, None));
        assert_eq!(up.calls(), 2);
        // A first success carries them too; a call that ends on a 503, as a give-up.
        let (addr, _) = upstream(&[]).await;
        let (_, stats) = figures(addr, &layer).await;
        assert_eq!(stats.map(|s| (s.attempts, s.gave_up)), Some((1, None)));
        let (addr, up) = upstream(&[(503, None); 3]).await;
        let (status, stats) = figures(addr, &layer).await;
        assert_eq!((status, up.calls()), (503, 3));
        assert_eq!(
            stats.map(|s| (s.attempts, s.gave_up)),
            Some((3, Some(retry_jitter::GiveUpReason::Attempts)))
        );
        // Without it, none.
        let (addr, _) = upstream(&[(503, None)]).await;
        assert_eq!(figures(addr, &RetryLayer::new(quick())).await, (200, None));
    }

    #[tokio::test]
    async fn a_transport_error_is_told_as_an_error() {
        // Nothing listens there: every attempt is a refused connection.
        let addr = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap()
        };
        let told = Arc::new(AtomicU32::new(0));
        let seen = told.clone();
        let layer =
            RetryLayer::new(quick()).notify(move |f: &Failed<'_, BoxError>, _: &RetryEvent| {
                assert!(matches!(f, Failed::Error(_)), "{f}");
                seen.fetch_add(1, Ordering::SeqCst);
            });
        assert!(get(addr, &layer).await.is_err());
        assert_eq!(told.load(Ordering::SeqCst), 2);
    }
}

mod reqwest_mw {
    use super::*;
    use reqwest_middleware::{ClientBuilder, Error};
    use retry_jitter::reqwest_middleware::RetryMiddleware;

    /// `GET /stock` through a client with `m`: the status, or the middleware's error.
    async fn get(
        addr: std::net::SocketAddr,
        m: impl reqwest_middleware::Middleware,
    ) -> Result<u16, Error> {
        let client = ClientBuilder::new(reqwest::Client::new()).with(m).build();
        let resp = client.get(format!("http://{addr}/stock")).send().await?;
        Ok(resp.status().as_u16())
    }

    /// Whether `e` is a middleware error made from a `T`.
    fn made_from<T: std::error::Error + Send + Sync + 'static>(e: &Error) -> bool {
        std::error::Error::source(e).is_some_and(|s| s.is::<T>())
            || matches!(e, Error::Middleware(inner) if inner.is::<T>())
    }

    #[tokio::test]
    async fn the_hooks_are_told_each_503_and_the_caller_still_gets_it() {
        let (addr, up) = upstream(&[(503, None), (503, None), (503, None)]).await;
        let heard = Heard::default();
        let m = hooked!(RetryMiddleware, Error, heard);
        assert_eq!(get(addr, m).await.unwrap(), 503);
        assert_eq!(up.calls(), 3);
        assert_eq!(heard.lines(), three_503s());
    }

    #[tokio::test]
    async fn the_async_hooks_are_awaited_and_nothing_is_sent_while_notify_runs() {
        let (addr, up) = upstream(&[(503, None); 3]).await;
        let heard = Heard::default();
        let m = awaited!(RetryMiddleware, Error, heard, up);
        assert_eq!(get(addr, m).await.unwrap(), 503);
        assert_eq!(up.calls(), 3);
        assert_eq!(heard.lines(), three_503s_awaited());
    }

    #[tokio::test]
    async fn every_response_carries_its_call_s_figures_when_asked() {
        let (addr, up) = upstream(&[(503, None)]).await;
        let client = ClientBuilder::new(reqwest::Client::new())
            .with(RetryMiddleware::new(quick()).stats_in_response())
            .build();
        let resp = client
            .get(format!("http://{addr}/stock"))
            .send()
            .await
            .unwrap();
        let stats = resp
            .extensions()
            .get::<RetryStats>()
            .cloned()
            .expect("the figures");
        assert_eq!(
            (resp.status().as_u16(), stats.attempts, stats.gave_up),
            (200, 2, None)
        );
        assert_eq!(up.calls(), 2);
        let client = ClientBuilder::new(reqwest::Client::new())
            .with(RetryMiddleware::new(quick()))
            .build();
        let resp = client
            .get(format!("http://{addr}/stock"))
            .send()
            .await
            .unwrap();
        assert!(resp.extensions().get::<RetryStats>().is_none());
    }

    #[tokio::test]
    async fn a_breaker_opened_by_503s_refuses_the_next_call_unsent() {
        static BREAKER: CircuitBreaker =
            CircuitBreaker::new(0.5, 1, Duration::from_secs(60), Duration::from_secs(60));
        let (addr, up) = upstream(&[(503, None), (503, None), (503, None)]).await;
        let m = RetryMiddleware::new(quick()).breaker(&BREAKER);
        assert_eq!(get(addr, m.clone()).await.unwrap(), 503);
        assert_eq!(up.calls(), 3);
        let refused = get(addr, m).await.unwrap_err();
        assert!(made_from::<CircuitOpen>(&refused), "{refused:?}");
        assert_eq!(up.calls(), 3);
    }

    #[tokio::test]
    async fn a_throttle_sheds_requests_answered_503() {
        static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(1.0, Duration::from_secs(60));
        let (addr, up) = upstream(&[(503, None); 40]).await;
        let m = RetryMiddleware::new(quick().with_attempts(1)).throttle(&THROTTLE);
        let mut throttled = 0;
        for _ in 0..40 {
            match get(addr, m.clone()).await {
                Ok(status) => assert_eq!(status, 503),
                Err(e) => {
                    assert!(made_from::<Throttled>(&e), "{e:?}");
                    throttled += 1;
                }
            }
        }
        assert!(throttled >= 20, "{throttled} of 40 shed");
        assert_eq!(up.calls() + throttled, 40);
    }

    #[tokio::test]
    async fn a_cancelled_token_ends_the_wait_and_sends_nothing_more() {
        let (addr, up) = upstream(&[(503, None), (503, None)]).await;
        let token = CancelToken::new();
        let m = RetryMiddleware::new(slow()).cancel(&token);
        let started = Instant::now();
        cancel_after_first(&up, &token);
        assert_eq!(get(addr, m).await.unwrap(), 503);
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(up.calls(), 1);
    }
}
