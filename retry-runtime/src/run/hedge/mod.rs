//! Hedged requests: when an attempt has not answered within the hedge delay, the next one starts
//! beside it, and the first success wins (`#[retry(hedge = "50ms")]`, [`Retry::hedge`](crate::Retry::hedge)).
//!
//! Retries fix errors; hedging fixes slowness. A call whose latency has a heavy tail (most
//! answers in 10 ms, one in a hundred in a second) spends its tail waiting on the slow one;
//! a second copy sent once the first has taken longer than almost every call does (its 95th
//! percentile) usually answers first — "The Tail at Scale" (Dean & Barroso, 2013) cut a 99.9th
//! percentile from 1,800 ms to 74 ms this way for 2% more requests.
//!
//! Hedge only what is safe to do twice: reads, and writes the server makes idempotent. Every
//! hedge is a call: it counts against `attempts`, takes a [`RetryBudget`](crate::RetryBudget)
//! token like a retry, and is traced.
//!
//! The configuration ([`Hedge`]; the closure API's stand-in, `Unset`, is in
//! [`hooks`](crate::hooks)) is in `config`, the latency
//! histogram a `pNN` hedge reads ([`LatencyHistogram`]) in `histogram`, and the hedging loop
//! itself, which races the attempts, in `race`.

pub(crate) mod config;
mod histogram;
mod race;

pub use config::Hedge;
pub(crate) use config::HedgeWith;
pub use histogram::LatencyHistogram;
pub(crate) use race::hedged_lazily;
pub use race::{Discard, KeepLast};
