//! The guide, on docs.rs: one page per task, each a doc-only module.
//!
//! The guide: each task, from its `[dependencies]` to a program you can paste into `src/main.rs`
//! and run. Every program here is compiled by `cargo test`, and each recipe is also a file under
//! [`examples/`](https://github.com/retry-jitter/retry-jitter/tree/main/examples) that CI builds
//! and runs.
//!
//! # A reading order
//!
//! New to the crate? Take the pages in this order, from one retried function to a fleet of
//! services:
//!
//! 1. [`attribute`]: `#[retry]` on a function, and what the function becomes; every other page
//!    adds keys to it.
//! 2. [`errors`]: which errors are worth retrying, the one choice the defaults cannot make for
//!    you.
//! 3. [`deadlines`]: a retried call must end; `timeout` bounds each attempt, `max_elapsed` the
//!    whole call.
//! 4. [`protecting`]: per-call limits still let a fleet multiply the load on a service that is
//!    down; the budget on by default, and the guards that stop sending.
//! 5. [`http_clients`], [`grpc`] or [`databases`]: the page for your client, its table of what is
//!    retried, and a whole program.
//! 6. [`writes`]: before you retry anything that changes state: a `POST`, a transaction.
//! 7. [`observability`]: see the retries you now make, in logs and metrics.
//! 8. [`testing`]: check them in your tests, in no real time.
//! 9. [`chain`]: when your service is one tier of several, retry at one of them.
//! 10. [`simulations`]: why the defaults are what they are, from the herd's numbers.
//!
//! [`hedging`] (a slow tail) and [`polling`] (a value not ready yet, replicas to fail over
//! across) each answer one need: the menu below finds them.
//!
//! # By task
//!
//! | what do you want to do | read |
//! |---|---|
//! | retry a function: the attribute, what the function becomes, hooks that await (`async` `notify`, `give_up`, `stats`), the closure API (`Retry`) | [`attribute`] |
//! | look up a key: its values, its default, what it means | [`#[retry]`](macro@crate::retry) |
//! | choose which errors are retried (`on`, `Decision`, `Transient`) | [`errors`] |
//! | back off under a higher ceiling when the server limits you (`Decision::RateLimited`: ceilings from `rate_limited_base`, 1 s, under `cap`) | [`errors`] |
//! | retry HTTP calls: reqwest, hyper's client under `RetryLayer`, reqwest-middleware | [`http_clients`] |
//! | retry gRPC calls (tonic) | [`grpc`] |
//! | retry a `POST` without charging twice | [`writes`] |
//! | run a chain of services that retries at one tier, and a service's edge | [`chain`] |
//! | retry database transactions (sqlx, PostgreSQL) | [`databases`] |
//! | keep retries from overloading a service: budgets, throttle, breaker | [`protecting`] |
//! | cut the slow tail: hedging | [`hedging`] |
//! | bound a call in time: `timeout`, `max_elapsed`, a caller's deadline; stop it: `CancelToken`, `cancel` | [`deadlines`] |
//! | poll until ready, fail over across replicas (`on_ok`, `attempt`) | [`polling`] |
//! | see retries: logs (`RUST_LOG=retry_jitter=debug`), metrics, OpenTelemetry, a call's figures (`RetryStats`, `stats`, `call_with_stats`) | [`observability`] |
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
