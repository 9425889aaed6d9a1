//! Hedged requests: when an attempt has not answered within the hedge delay, the next one starts
//! beside it, and the first success wins (`#[retry(hedge = "50ms")]`, [`Retry::hedge`](crate::Retry::hedge)).
//!
//! Retries fix errors; hedging fixes slowness.
//!
//! A call with a heavy latency tail spends that tail waiting on the slow attempt.
//!
//! A second copy sent past the 95th percentile usually answers first.
//!
//! "The Tail at Scale" (Dean & Barroso, 2013) cut a 99.9th percentile from 1,800 ms to 74 ms
//! this way, for 2% more requests.
//!
//! Hedge only what is safe to do twice: reads, and writes the server makes idempotent.
//!
//! Every hedge is a call: it counts against `attempts`, takes a budget share like a retry, and
//! is traced.
//!
//! The guide's `hedging` page has the walkthrough.
//!
//! - `config`: the configuration ([`Hedge`]; the closure API's stand-in, `Unset`, is in
//!   [`hooks`](crate::hooks)).
//! - `histogram`: the latency histogram a `pNN` hedge reads ([`LatencyHistogram`]).
//! - `race`: the hedging loop, which races the attempts.

pub(crate) mod config;
mod histogram;
mod race;

pub use config::Hedge;
pub(crate) use config::HedgeWith;
pub use histogram::LatencyHistogram;
pub(crate) use race::hedged_lazily;
pub use race::{Discard, KeepLast};
