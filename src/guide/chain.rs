//! A chain of services that retries at one tier, keeps to its caller's deadline, and trusts only
//! what it should.
//!
//! Services come in chains — gateway → service → data layer — and when every tier retries its
//! downstream, the retries multiply: three tiers of 4 attempts send **64** calls to the bottom
//! service for one call at the top. And nothing tells the lower tiers how long the caller will
//! wait, so they keep retrying for a caller that gave up long ago.
//! [`ChainLayer`](crate::tower::ChainLayer) (feature `tower`) is the server end of a hop: put it
//! on an axum `Router` or a tonic `Server`, and each request's handler runs in a scope that every
//! retry loop polled inside it sees — `#[retry]`, `Retry`, `RetryLayer` and `RetryMiddleware`
//! alike.
//!
//! ```toml
//! [dependencies]
//! retry-jitter = { version = "0.1", features = ["tower"] }
//! axum = "0.8"
//! hyper-util = { version = "0.1", features = ["client-legacy", "http1", "tokio"] }
//! http-body-util = "0.1"
//! bytes = "1"
//! http = "1"
//! tower = { version = "0.5", features = ["util"] }
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! ```
//!
//! `cargo run --example guide_chain --features tower` runs this service, outside clients' first
//! stop, and a stand-in of the tier below that answers `503` after 100 ms. With its own deadline
//! of 300 ms the shop answers `503` with `x-should-retry: false` after about 300 ms, the inventory
//! called three times, not four:
//!
//! ```rust,no_run
#![doc = include_str!("../../examples/guide_chain.rs")]
//! ```
//!
//! # What the layer does
//!
//! - **Down: the caller's deadline.** `ChainLayer::new()` reads the time the caller has left:
//!   `x-envoy-expected-rq-timeout-ms` (milliseconds) on an HTTP request (another name with
//!   `.deadline_header(name)`), `grpc-timeout` on a gRPC one (up to 8 digits and a unit, `H` `M`
//!   `S` `m` `u` `n`; a request is gRPC by its `content-type` while the HTTP header keeps its
//!   default name, and past a renamed one only with `.grpc()`, the setting for a gRPC service).
//!   `0` is no deadline (as Envoy reads it), of several values the smallest counts, and a
//!   malformed or absent header is no deadline; `.deadline(duration)` adds one of the service's
//!   own. Inside the scope every loop's deadline is the earlier of its own `max_elapsed` and the
//!   request's: an attempt's `timeout` is cut to what is left, and no attempt starts after it
//!   (`GiveUpReason::Elapsed`). Each attempt a `RetryLayer` or `RetryMiddleware` sends from inside
//!   a scope carries the time it has left — the smallest of its `timeout`, its loop's deadline and
//!   the caller's — in the same header (whole milliseconds, rounded down but never to 0, which
//!   Envoy reads as "no timeout"; gRPC: `grpc-timeout`), so the next tier keeps to it too. A
//!   deadline the request already carries in that header is lowered to it, never raised.
//! - **Up: "already retried".** When a loop inside the scope gave up on a failure it retried, or
//!   would have retried but for a limit (its attempts, once it retried; time, budget, throttle,
//!   breaker, a server's wait past its `cap`), or
//!   because its own downstream said "don't retry", and the handler answers with something its
//!   caller would retry (HTTP `5xx` or `429`; gRPC `UNAVAILABLE` or `RESOURCE_EXHAUSTED`), the
//!   layer adds `x-should-retry: false` (gRPC: `grpc-retry-pushback-ms: -1`, in the trailers or in
//!   the headers of a trailers-only answer). This crate's clients stop on both — `RetryLayer`,
//!   `RetryMiddleware`, and `#[retry(on = retry_jitter::transient)]` around `reqwest::check` — and
//!   a tier that stopped on it passes it on, so the chain retries at the one tier next to the
//!   failure. A failure no loop gave up on (the tier's own error) is left as it is, and so is one
//!   a loop of one attempt ended on after its attempt (`attempts = 1`: a tier that fails fast
//!   and leaves the retry to the tier above), and one its `CancelToken` ended (a shutdown: the
//!   caller may still try another replica).
//! - **Attempts, counted across the hop.** A gRPC request `RetryLayer` sends again carries
//!   `grpc-previous-rpc-attempts` (gRPC's A6); `.attempt_header(name)` on `RetryLayer` and
//!   `RetryMiddleware` sends every HTTP attempt's number (1, 2, …) in a header of that name.
//!
//! `cargo run --example chain --features tower` runs three tiers on loopback, each calling the
//! next with 4 attempts, the bottom answering `503`; the calls each tier received:
//!
//! ```text
//!                             A        B        C
//! without ChainLayer          4       16       64
//! with ChainLayer             1        1        4
//! ```
//!
//! With a caller deadline of 300 ms and a bottom that takes 100 ms per answer, the last attempt
//! begins before 300 ms and the client has its answer (marked "don't retry") at about 300 ms,
//! instead of after B's four attempts and A's and the client's retries of them.
//!
//! # Trust: what to do at a service's edge
//!
//! A request's headers are whatever its sender wrote. `ChainLayer::new()` believes the deadline a
//! request carries: use it behind your own proxies and between your own services, where a deadline
//! header is one of yours (Envoy strips its own from requests that come from outside).
//!
//! **A service that outside clients reach takes `ChainLayer::edge()`**: it reads no deadline from
//! the request, whatever its headers and `content-type` say, and still scopes each request and
//! marks its give-ups; give it a deadline of its own with `.deadline(duration)`, as the program
//! above does.
//!
//! Either way what one request carries bounds that request's loops alone: a stranger's `1` cuts
//! the stranger's own call short. An attempt cut, or a call ended, by the caller's deadline counts
//! for nothing in a shared `CircuitBreaker` or `AdaptiveThrottle` (it says nothing of the service
//! called; the loop's own `timeout` and `max_elapsed` count as ever), so no caller opens a breaker
//! that others share.
//!
//! Beside the deadline, no inbound header is read. `ChainLayer::new()` reads the deadline header
//! and `content-type` (to tell a gRPC request); no retry loop reads the request its handler was
//! sent. The server's word (`Retry-After`, `x-amz-retry-after`, `x-should-retry`,
//! `stripe-should-retry`, `x-envoy-overloaded`, `grpc-retry-pushback-ms`) is read from answers
//! only: a caller who writes one on its request changes nothing. A loop reads only the request it
//! sends (the method, `Idempotency-Key`, `content-type`, a deadline it carries): copy inbound
//! headers onto it only where you trust them.
//!
//! # Work a handler spawns, and work requests share
//!
//! The scope follows the handler's future (and its response body), not the tasks it spawns: a
//! `tokio::spawn`ed future sees no scope unless it is handed one. Wrap it in
//! [`in_chain`](crate::tower::in_chain) where the handler spawns it —
//! `tokio::spawn(in_chain(async move { … }))` — and its loops keep to the caller's deadline and
//! report their give-ups as the handler's own do. Work that several requests await — a fetch
//! shared by a single flight, a cache's loader — is polled by whichever request comes first and
//! would keep to that request's deadline: wrap it in [`out_of_chain`](crate::tower::out_of_chain)
//! and it runs outside every scope. Blocking work on `spawn_blocking` has no scope; give it a
//! `max_elapsed` of its own.
//!
//! The [`simulations`](crate::guide::simulations) page has the chain model: what retrying at every tier
//! costs a failing service at depths 1 to 4, with and without ratio budgets.
