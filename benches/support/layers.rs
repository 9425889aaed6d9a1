//! The tower layer's success path (`bash scripts/instructions.sh`, built with feature
//! `tower`): one request through a service whose first attempt answers `Ok` at once, plain,
//! under tower's own `Retry` with a policy that never retries, and under our `RetryLayer`:
//! a `u64`, an `http::Request<UnsyncBoxBody>`, and an `http::Request<Full<Bytes>>` (hyper's
//! most common client's request).
//! Each function makes the service once and returns a closure that sends one request and
//! polls its future once (it is ready: nothing waits).

use std::convert::Infallible;
use std::future::{ready, Ready};
use std::hint::black_box;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Empty, Full};
use retry_jitter::tower::RetryLayer;
use retry_jitter::Policy;
use tower::{Layer, Service};

/// The inner service: doubles the number it is sent.
#[derive(Clone, Copy)]
pub struct Double;

impl Service<u64> for Double {
    type Response = u64;
    type Error = Infallible;
    type Future = Ready<Result<u64, Infallible>>;
    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn call(&mut self, x: u64) -> Self::Future {
        ready(Ok(black_box(x) * 2))
    }
}

pub type Body = UnsyncBoxBody<Bytes, Infallible>;

/// The inner HTTP service: answers 200 with an empty body, whatever the request's body.
#[derive(Clone, Copy)]
pub struct Answer;

impl<B> Service<http::Request<B>> for Answer {
    type Response = http::Response<()>;
    type Error = Infallible;
    type Future = Ready<Result<http::Response<()>, Infallible>>;
    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        drop(black_box(req));
        ready(Ok(http::Response::new(())))
    }
}

/// tower's `Retry` with a policy that keeps a copy of the request (as any retrying policy
/// must) and never retries.
#[derive(Clone, Copy)]
pub struct Never;

impl<E> tower::retry::Policy<u64, u64, E> for Never {
    type Future = Ready<()>;
    fn retry(&mut self, _: &mut u64, _: &mut Result<u64, E>) -> Option<Self::Future> {
        None
    }
    fn clone_request(&mut self, req: &u64) -> Option<u64> {
        Some(*req)
    }
}

/// tower's `Retry` over HTTP requests: a policy that clones the whole request (an
/// `http::Request<Full<Bytes>>` is `Clone`) and never retries.
#[derive(Clone, Copy)]
pub struct NeverCloned;

impl<Res, E> tower::retry::Policy<http::Request<Full<Bytes>>, Res, E> for NeverCloned {
    type Future = Ready<()>;
    fn retry(
        &mut self,
        _: &mut http::Request<Full<Bytes>>,
        _: &mut Result<Res, E>,
    ) -> Option<Self::Future> {
        None
    }
    fn clone_request(
        &mut self,
        req: &http::Request<Full<Bytes>>,
    ) -> Option<http::Request<Full<Bytes>>> {
        Some(req.clone())
    }
}

/// A `POST` with a small JSON body in a `Full<Bytes>` (static bytes: cloning them is no
/// allocation), made per call in the three `Full` rows.
pub fn request_full() -> http::Request<Full<Bytes>> {
    let mut req = http::Request::new(Full::new(Bytes::from_static(b"{\"order\": 1}")));
    *req.method_mut() = http::Method::POST;
    req
}

pub fn layer_full_plain() -> Answer {
    Answer
}

pub fn layer_full_tower_retry() -> tower::retry::Retry<NeverCloned, Answer> {
    tower::retry::RetryLayer::new(NeverCloned).layer(Answer)
}

pub fn layer_full_ours() -> impl Service<http::Request<Full<Bytes>>, Response = http::Response<()>>
{
    RetryLayer::new(Policy::default()).layer(Answer)
}

/// A request with an empty body, made per call in both HTTP rows.
pub fn request() -> http::Request<Body> {
    http::Request::new(Empty::new().boxed_unsync())
}

pub fn layer_plain() -> Double {
    Double
}

pub fn layer_tower_retry() -> tower::retry::Retry<Never, Double> {
    tower::retry::RetryLayer::new(Never).layer(Double)
}

pub fn layer_ours() -> impl Service<u64, Response = u64> {
    RetryLayer::new(Policy::default())
        .clone_requests()
        .layer(Double)
}

pub fn layer_http_plain() -> Answer {
    Answer
}

pub fn layer_http_ours() -> impl Service<http::Request<Body>, Response = http::Response<()>> {
    RetryLayer::new(Policy::default()).layer(Answer)
}
