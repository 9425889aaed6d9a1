//! Which errors of a protocol or a client are worth retrying: `Transient` impls and status
//! tables, each behind its feature.

#[cfg(feature = "http")]
pub(crate) mod headers;
#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "reqwest")]
pub mod reqwest;
#[cfg(feature = "sqlx")]
pub mod sqlx;
#[cfg(feature = "tonic")]
pub mod tonic;
#[cfg(feature = "http")]
pub(crate) mod transport;
