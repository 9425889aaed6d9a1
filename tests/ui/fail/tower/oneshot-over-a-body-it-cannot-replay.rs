// A body type `RetryLayer::new` cannot replay (the tests' own `MyBody`: `Clone`, no
// `ReplayBody` impl), sent the way the guide sends requests: `.oneshot(req)` and
// `.ready().await?.call(req)`. rustc reports E0599 on the method, not the crate's message
// (which `Service::call(&mut svc, req)` shows, see clone-body-it-cannot-replay): the guide's
// "When it does not compile" paragraph quotes this error and says what to write.
#[path = "../../../support/my_body.rs"]
mod my_body;

use my_body::MyBody;
use retry_jitter::tower::RetryLayer;
use retry_jitter::Policy;
use std::convert::Infallible;
use tower::{Layer, Service, ServiceExt};

async fn sent() -> Result<(), Infallible> {
    let layered = || {
        RetryLayer::new(Policy::default()).layer(tower::service_fn(
            |_: http::Request<MyBody>| async { Ok::<_, Infallible>(http::Response::new(())) },
        ))
    };
    let req = http::Request::post("/orders").body(MyBody::new("order")).unwrap();
    let _ = layered().oneshot(req).await;
    let mut svc = layered();
    let req = http::Request::post("/orders").body(MyBody::new("order")).unwrap();
    let _ = svc.ready().await?.call(req).await;
    Ok(())
}

fn main() {
    let _ = sent();
}
