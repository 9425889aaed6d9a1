// A body type `RetryLayer` cannot replay, sent the way the guide sends requests: `.oneshot(req)`
// and `.ready().await?.call(req)`. rustc reports E0599 on the method, not the crate's message
// (which `Service::call(&mut svc, req)` shows, see clone-body-it-cannot-replay): the guide's
// "When it does not compile" paragraph quotes this error and says what to write.
use bytes::Bytes;
use http_body::{Body, Frame};
use retry_jitter::tower::RetryLayer;
use retry_jitter::Policy;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use tower::{Layer, Service, ServiceExt};

struct Stream(Option<Bytes>);

impl Body for Stream {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.take().map(|b| Ok(Frame::data(b))))
    }
}

async fn sent() -> Result<(), Infallible> {
    let layered = || {
        RetryLayer::new(Policy::default()).layer(tower::service_fn(
            |_: http::Request<Stream>| async { Ok::<_, Infallible>(http::Response::new(())) },
        ))
    };
    let req = http::Request::post("/orders").body(Stream(None)).unwrap();
    let _ = layered().oneshot(req).await;
    let mut svc = layered();
    let req = http::Request::post("/orders").body(Stream(None)).unwrap();
    let _ = svc.ready().await?.call(req).await;
    Ok(())
}

fn main() {
    let _ = sent();
}
