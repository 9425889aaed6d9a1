// A body type of the user's own, `Clone` but without a `ReplayBody` impl, under
// `RetryLayer::new`: the message offers `.clone_bodies()` first.
use bytes::Bytes;
use http_body::{Body, Frame};
use retry_jitter::tower::RetryLayer;
use retry_jitter::Policy;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use tower::{Layer, Service};

#[derive(Clone)]
struct MyBody(Option<Bytes>);

impl Body for MyBody {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.take().map(|b| Ok(Frame::data(b))))
    }
}

async fn a_clone_body() {
    let upstream = tower::service_fn(|_: http::Request<MyBody>| async {
        Ok::<_, Infallible>(http::Response::new(()))
    });
    let mut svc = RetryLayer::new(Policy::default()).layer(upstream);
    let req = http::Request::post("/orders").body(MyBody(None)).unwrap();
    let _ = Service::call(&mut svc, req).await;
}

fn main() {
    let _ = a_clone_body();
}
