// A classifier of `Ok`s set before `.clone_requests()`, which sets `AcceptOk`: the message
// says to set it after, rather than dropping it unseen.
use retry_jitter::tower::RetryLayer;
use retry_jitter::Policy;

fn main() {
    let _ = RetryLayer::new(Policy::default())
        .on_ok(|n: &u32| *n == 0)
        .clone_requests();
}
