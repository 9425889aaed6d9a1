//! The retry loop where services retry: client middleware, each behind its feature. Each face
//! drives the closure API's loop ([`Retry`](crate::Retry)); none has a loop of its own. A
//! response is an `Ok` to the client, yet a 503 is worth retrying: the faces classify
//! responses with [`Retry::on_ok`](crate::Retry::on_ok).

mod builder;
#[cfg(feature = "reqwest-middleware")]
pub mod reqwest_middleware;
#[cfg(feature = "tower")]
pub mod tower;
mod writes;
