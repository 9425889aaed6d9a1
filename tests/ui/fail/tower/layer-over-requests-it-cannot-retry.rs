// A request type `RetryLayer::new` cannot send again, and a hyper client whose body it cannot
// replay: each error says what to do (issue 29 point 3).
use bytes::Bytes;
use http_body_util::{Full, Limited};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use retry_jitter::tower::RetryLayer;
use retry_jitter::Policy;
use tower::{Layer, Service};

async fn numbers() {
    let double = tower::service_fn(|n: u32| async move { Ok::<_, std::convert::Infallible>(n * 2) });
    let mut svc = RetryLayer::new(Policy::default()).layer(double);
    let _ = svc.call(7u32).await;
    let _ = Service::call(&mut svc, 7u32).await;
}

async fn a_body_it_cannot_replay() {
    let client: Client<HttpConnector, Limited<Full<Bytes>>> =
        Client::builder(TokioExecutor::new()).build_http();
    let mut svc = RetryLayer::new(Policy::default()).layer(client);
    let req = http::Request::new(Limited::new(Full::new(Bytes::from("one order")), 1024));
    let _ = Service::call(&mut svc, req).await;
}

fn main() {
    let _ = (numbers(), a_body_it_cannot_replay());
}
