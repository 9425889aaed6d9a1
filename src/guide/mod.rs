//! The guide, on docs.rs: one page per task, each a doc-only module.
//!
//! The guide: each task, from its `[dependencies]` to a program you can paste into `src/main.rs`
//! and run. Every program here is compiled by `cargo test`, and each recipe is also a file under
//! [`examples/`](https://github.com/retry-jitter/retry-jitter/tree/main/examples) that CI builds
//! and runs.
//!
//! | what do you want to do | read |
//! |---|---|
//! | retry a function: the keys, their defaults, what they mean | [`attribute`] |
//! | choose which errors are retried (`on`, `Decision`, `Transient`) | [`errors`] |
//! | retry HTTP calls: reqwest, hyper's client under `RetryLayer`, reqwest-middleware | [`http_clients`] |
//! | retry gRPC calls (tonic) | [`grpc`] |
//! | retry a `POST` without charging twice | [`writes`] |
//! | run a chain of services that retries at one tier, and a service's edge | [`chain`] |
//! | retry database transactions (sqlx, PostgreSQL) | [`databases`] |
//! | keep retries from overloading a service: budgets, throttle, breaker | [`protecting`] |
//! | cut the slow tail: hedging | [`hedging`] |
//! | bound a call in time: `timeout`, `max_elapsed`, a caller's deadline; stop it: `cancel` | [`deadlines`] |
//! | poll until ready, fail over across replicas (`on_ok`, `attempt`) | [`polling`] |
//! | see retries: logs (`RUST_LOG=retry_jitter=debug`), metrics, OpenTelemetry | [`observability`] |
//! | test code that retries, in no real time | [`testing`] |
//! | see why: the herd simulations, their tables and charts | [`simulations`] |
//!
//! Every async program here runs on tokio: the crate starts no runtime, so add your own
//! (`tokio = { version = "1", features = ["macros", "rt-multi-thread"] }`). Off tokio, turn the
//! default features off and give `sleep = …` a timer of yours ([`attribute`]).

// Each page is one file, `<page>.rs`, its text in `//!` lines. A page that shows a recipe
// includes the program of `examples/guide_*.rs` whole, in place, inside a
// ```` ```rust,no_run ```` fence: compiled by `cargo test`, and run by CI from `examples/`, so
// not run twice here.

pub mod attribute;

pub mod errors;

pub mod http_clients;

pub mod grpc;

pub mod writes;

pub mod chain;

pub mod databases;

pub mod protecting;

pub mod hedging;

pub mod deadlines;

pub mod polling;

pub mod observability;

pub mod testing;

pub mod simulations;
