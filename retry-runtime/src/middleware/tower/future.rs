//! The futures of the layers' services: a [`RetryService`](super::RetryService)'s
//! [`ResponseFuture`], a [`ChainService`](super::ChainService)'s [`ChainFuture`], and the
//! scopes [`in_chain`](super::in_chain) and [`out_of_chain`](super::out_of_chain) put a future
//! in. A user meets them in types, as tower's own `tower::retry::future::ResponseFuture`.
//! (Each is defined beside what makes it: `ResponseFuture` and `Serve::start`, which returns
//! it, name each other.)

pub use super::chain::{ChainFuture, InChain, OutOfChain};
pub use super::service::{ResponseFuture, RetryFuture};
