//! The faces' default budget, one per host: `RetryLayer` and `RetryMiddleware` against real
//! servers on loopback, counting the attempts each server saw.
//!
//! Every call is made one after the other with no wait between attempts, so the counts are
//! exact: a host's budget allows its retries while they stay within its floor (100 over
//! the 10 s window) plus 20% of its calls. The real clock is kept (the servers' sockets need
//! it): the calls of a test take well under the window.

#![cfg(all(feature = "tower", feature = "reqwest-middleware"))]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::loopback;

use axum::http::StatusCode;
use axum::routing::any;
use retry_jitter::http::Failed;
use retry_jitter::{GiveUp, GiveUpReason, Policy, RetryBudget};

/// Five attempts, no wait between them.
fn now() -> Policy {
    Policy::new().with_attempts(5).with_base(Duration::ZERO)
}

/// A server on loopback answering every request `503`, and the requests it saw.
async fn down() -> (SocketAddr, Arc<AtomicU32>) {
    let seen = Arc::new(AtomicU32::new(0));
    let count = Arc::clone(&seen);
    let app = axum::Router::new().route(
        "/{*path}",
        any(move || {
            count.fetch_add(1, Ordering::SeqCst);
            async { StatusCode::SERVICE_UNAVAILABLE }
        }),
    );
    (loopback::serve(app).await, seen)
}

/// The attempts `seen` counted since the last time asked.
fn taken(seen: &AtomicU32) -> u32 {
    seen.swap(0, Ordering::SeqCst)
}

/// Retries a host with `calls` calls behind it grants, at most: the floor plus 20%.
fn allowed(calls: u32) -> u32 {
    100 + calls / 5
}

/// The reasons the `give_up` hook heard, in order.
#[derive(Clone, Default)]
struct Reasons(Arc<Mutex<Vec<GiveUpReason>>>);

impl Reasons {
    fn push(&self, g: &GiveUp) {
        self.0.lock().unwrap().push(g.reason);
    }
    fn last(&self) -> Option<GiveUpReason> {
        self.0.lock().unwrap().last().copied()
    }
    fn count(&self, reason: GiveUpReason) -> usize {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|&&r| r == reason)
            .count()
    }
}

mod tower_face {
    use super::*;
    use bytes::Bytes;
    use http_body_util::Full;
    use hyper_util::client::legacy::connect::HttpConnector;
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::{TokioExecutor, TokioIo};
    use retry_jitter::tower::{BoxError, RetryLayer};
    use tower::{Layer, Service, ServiceExt};

    type Hyper = Client<HttpConnector, Full<Bytes>>;

    fn hyper() -> Hyper {
        Client::builder(TokioExecutor::new()).build_http()
    }

    /// `calls` calls of `GET {authority}/x` through `svc`, one after the other.
    async fn get<S>(svc: &S, authority: &str, calls: u32)
    where
        S: Service<http::Request<Full<Bytes>>, Error = BoxError> + Clone,
    {
        for _ in 0..calls {
            let req = http::Request::get(format!("http://{authority}/x"))
                .body(Full::new(Bytes::new()))
                .unwrap();
            let _ = svc.clone().oneshot(req).await;
        }
    }

    #[tokio::test]
    async fn a_host_that_is_down_gets_the_floor_and_a_fifth_of_the_calls() {
        let (addr, seen) = down().await;
        let reasons = Reasons::default();
        let heard = reasons.clone();
        let svc = RetryLayer::new(now())
            .give_up(move |_: &Failed<'_, BoxError>, g: &GiveUp| heard.push(g))
            .layer(hyper());
        get(&svc, &addr.to_string(), 200).await;
        // 200 calls: 100 + 40 retries, where five attempts each would have sent 1,000.
        assert_eq!(taken(&seen), 200 + allowed(200));
        assert_eq!(reasons.last(), Some(GiveUpReason::BudgetEmpty));
        // The first 26 calls spend all their retries: 104 within the floor and 20% of 26.
        assert_eq!(reasons.count(GiveUpReason::Attempts), 26);
    }

    #[tokio::test]
    async fn another_host_keeps_its_own_budget_while_the_first_is_drained() {
        let ((a, seen_a), (b, seen_b)) = (down().await, down().await);
        let svc = RetryLayer::new(now()).layer(hyper());
        get(&svc, &a.to_string(), 200).await;
        assert_eq!(taken(&seen_a), 200 + allowed(200));
        // Another port, another authority: its floor is whole.
        get(&svc, &b.to_string(), 20).await;
        assert_eq!(taken(&seen_b), 20 * 5);
        // And the first is still drained (its 201st call: 0.2 of a retry left).
        get(&svc, &a.to_string(), 1).await;
        assert_eq!(taken(&seen_a), 1);
    }

    #[tokio::test]
    async fn clones_of_a_layer_share_its_budgets() {
        let (addr, seen) = down().await;
        let layer = RetryLayer::new(now());
        let (one, two) = (layer.clone().layer(hyper()), layer.layer(hyper()));
        get(&one, &addr.to_string(), 100).await;
        get(&two, &addr.to_string(), 100).await;
        assert_eq!(taken(&seen), 200 + allowed(200));
    }

    #[tokio::test]
    async fn budget_none_makes_every_attempt() {
        let (addr, seen) = down().await;
        let svc = RetryLayer::new(now()).budget_none().layer(hyper());
        get(&svc, &addr.to_string(), 200).await;
        assert_eq!(taken(&seen), 200 * 5);
    }

    #[tokio::test]
    async fn an_explicit_budget_replaces_the_default() {
        // 10 tokens, 5 a retry: two retries, for every host together.
        static TEN: RetryBudget = RetryBudget::new(10);
        let ((a, seen_a), (b, seen_b)) = (down().await, down().await);
        let svc = RetryLayer::new(now()).budget(&TEN).layer(hyper());
        get(&svc, &a.to_string(), 1).await;
        assert_eq!(taken(&seen_a), 3);
        get(&svc, &b.to_string(), 1).await;
        assert_eq!(taken(&seen_b), 1, "the budget is shared, not per host");
    }

    #[tokio::test]
    async fn a_handful_of_calls_retries_as_without_a_budget() {
        let (addr, seen) = down().await;
        let svc = RetryLayer::new(now()).layer(hyper());
        get(&svc, &addr.to_string(), 20).await;
        assert_eq!(taken(&seen), 20 * 5);
    }

    #[tokio::test]
    async fn a_success_at_the_first_attempt_counts_as_a_call() {
        // A host that answers 200 ten times then 503: the ten successes (sent by the layer's
        // first-attempt path, without the loop) are counted, funding two more retries.
        let seen = Arc::new(AtomicU32::new(0));
        let count = Arc::clone(&seen);
        let app = axum::Router::new().route(
            "/{*path}",
            any(move || {
                let n = count.fetch_add(1, Ordering::SeqCst);
                async move {
                    match n < 10 {
                        true => StatusCode::OK,
                        false => StatusCode::SERVICE_UNAVAILABLE,
                    }
                }
            }),
        );
        let addr = loopback::serve(app).await;
        let svc = RetryLayer::new(now()).layer(hyper());
        get(&svc, &addr.to_string(), 10).await;
        assert_eq!(taken(&seen), 10);
        get(&svc, &addr.to_string(), 200).await;
        assert_eq!(taken(&seen), 200 + allowed(210));
    }

    /// A client whose every connection goes to `addr`, whatever the authority asked (as
    /// `curl --resolve`): a stranger's requests to many hosts, served by one server.
    fn pinned(
        addr: SocketAddr,
    ) -> Client<
        impl hyper_util::client::legacy::connect::Connect + Clone + Send + Sync + 'static,
        Full<Bytes>,
    > {
        let connector = tower::service_fn(move |_: http::Uri| {
            Box::pin(async move {
                let stream = tokio::net::TcpStream::connect(addr).await?;
                Ok::<_, std::io::Error>(TokioIo::new(stream))
            })
        });
        Client::builder(TokioExecutor::new()).build(connector)
    }

    #[tokio::test]
    async fn a_stranger_s_many_authorities_take_no_other_host_s_budget() {
        let ((mine, seen_mine), (theirs, seen_theirs)) = (down().await, down().await);
        let layer = RetryLayer::new(now());
        let svc = layer.clone().layer(hyper());
        let stranger = layer.layer(pinned(theirs));
        get(&svc, &mine.to_string(), 1).await;
        assert_eq!(taken(&seen_mine), 5);
        // 200 hosts: the 63 slots left each get a floor of their own; the 137 after them
        // share the overflow budget, which they drain.
        for i in 0..200 {
            get(&stranger, &format!("host-{i}.stranger.test"), 1).await;
        }
        assert_eq!(taken(&seen_theirs), 63 * 5 + 137 + allowed(137));
        // Nor do their names with a user, or in capitals, reach this host's budget: one more
        // host of theirs would be the overflow's, drained.
        get(&stranger, "user@HOST-0.STRANGER.test", 1).await;
        assert_eq!(taken(&seen_theirs), 5, "host-0's own budget");
        get(&stranger, "one-more.stranger.test", 1).await;
        assert_eq!(taken(&seen_theirs), 1, "the overflow's");
        // This host's budget is whole: 20 calls, 80 retries.
        get(&svc, &mine.to_string(), 20).await;
        assert_eq!(taken(&seen_mine), 20 * 5);
    }
}

mod reqwest_face {
    use super::*;
    use reqwest_middleware::{ClientBuilder, ClientWithMiddleware, Error};
    use retry_jitter::reqwest_middleware::RetryMiddleware;

    fn client(m: impl reqwest_middleware::Middleware) -> ClientWithMiddleware {
        ClientBuilder::new(reqwest::Client::new()).with(m).build()
    }

    /// `calls` calls of `GET http://{authority}/x` through `client`, one after the other.
    async fn get(client: &ClientWithMiddleware, authority: &str, calls: u32) {
        for _ in 0..calls {
            let _ = client.get(format!("http://{authority}/x")).send().await;
        }
    }

    #[tokio::test]
    async fn a_host_that_is_down_gets_the_floor_and_a_fifth_of_the_calls() {
        let (addr, seen) = down().await;
        let reasons = Reasons::default();
        let heard = reasons.clone();
        let client = client(
            RetryMiddleware::new(now())
                .give_up(move |_: &Failed<'_, Error>, g: &GiveUp| heard.push(g)),
        );
        get(&client, &addr.to_string(), 200).await;
        assert_eq!(taken(&seen), 200 + allowed(200));
        assert_eq!(reasons.last(), Some(GiveUpReason::BudgetEmpty));
        assert_eq!(reasons.count(GiveUpReason::Attempts), 26);
    }

    #[tokio::test]
    async fn another_host_keeps_its_own_budget_while_the_first_is_drained() {
        let ((a, seen_a), (b, seen_b)) = (down().await, down().await);
        let client = client(RetryMiddleware::new(now()));
        get(&client, &a.to_string(), 200).await;
        assert_eq!(taken(&seen_a), 200 + allowed(200));
        get(&client, &b.to_string(), 20).await;
        assert_eq!(taken(&seen_b), 20 * 5);
        get(&client, &a.to_string(), 1).await;
        assert_eq!(taken(&seen_a), 1);
    }

    #[tokio::test]
    async fn budget_none_makes_every_attempt() {
        let (addr, seen) = down().await;
        let client = client(RetryMiddleware::new(now()).budget_none());
        get(&client, &addr.to_string(), 200).await;
        assert_eq!(taken(&seen), 200 * 5);
    }

    #[tokio::test]
    async fn an_explicit_budget_replaces_the_default() {
        static TEN: RetryBudget = RetryBudget::new(10);
        let ((a, seen_a), (b, seen_b)) = (down().await, down().await);
        let client = client(RetryMiddleware::new(now()).budget(&TEN));
        get(&client, &a.to_string(), 1).await;
        assert_eq!(taken(&seen_a), 3);
        get(&client, &b.to_string(), 1).await;
        assert_eq!(taken(&seen_b), 1, "the budget is shared, not per host");
    }

    #[tokio::test]
    async fn a_handful_of_calls_retries_as_without_a_budget() {
        let (addr, seen) = down().await;
        let client = client(RetryMiddleware::new(now()));
        get(&client, &addr.to_string(), 20).await;
        assert_eq!(taken(&seen), 20 * 5);
    }

    #[tokio::test]
    async fn a_stranger_s_many_authorities_take_no_other_host_s_budget() {
        let ((mine, seen_mine), (theirs, seen_theirs)) = (down().await, down().await);
        // The stranger's hosts all resolve to their server (`ClientBuilder::resolve`).
        let names: Vec<String> = (0..200)
            .map(|i| format!("host-{i}.stranger.test"))
            .collect();
        let mut resolving = reqwest::Client::builder();
        for name in names
            .iter()
            .map(String::as_str)
            .chain(["one-more.stranger.test"])
        {
            resolving = resolving.resolve(name, theirs);
        }
        let m = RetryMiddleware::new(now());
        let client = ClientBuilder::new(resolving.build().unwrap())
            .with(m)
            .build();
        let mine = format!("127.0.0.1:{}", mine.port());
        get(&client, &mine, 1).await;
        assert_eq!(taken(&seen_mine), 5);
        for name in &names {
            get(&client, name, 1).await;
        }
        assert_eq!(taken(&seen_theirs), 63 * 5 + 137 + allowed(137));
        get(&client, "one-more.stranger.test", 1).await;
        assert_eq!(taken(&seen_theirs), 1, "the overflow's");
        get(&client, &mine, 20).await;
        assert_eq!(taken(&seen_mine), 20 * 5);
    }
}
