//! Retrying a write without applying it twice.
//!
//! A retried `POST` that reached the server may create a second order or charge a card twice: the
//! attempt that failed on the client may have succeeded on the server (the answer was lost, the
//! connection cut after the request was sent, a proxy timed out). RFC 9110 §9.2.2 names the
//! methods that are safe to repeat: `GET`, `HEAD`, `OPTIONS`, `TRACE`, `PUT`, `DELETE`.
//!
//! **An annotated function decides for itself**: the attribute sees a function, not a request.
//! Retry a `POST` in one only when the server de-duplicates it: send an `Idempotency-Key` header
//! whose value is made *once*, outside the retried function, and passed in, so every attempt
//! carries the same key. (Or narrow `on` to failures that prove nothing was sent: a refused
//! connection, a `408`, `425`, `429` or `503`.)
//!
//! ```toml
//! [dependencies]
//! retry-jitter = { version = "0.1", features = ["reqwest"] } # Rust 1.88
//! reqwest = "0.13"
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! axum = "0.8" # only for the stand-in server the program starts on loopback
//! ```
//!
//! `cargo run --example guide_writes --features reqwest`:
//!
//! ```rust,no_run
#![doc = include_str!("../../examples/guide_writes.rs")]
//! ```
//!
//! # The middleware faces decide by themselves
//!
//! `RetryLayer` and `RetryMiddleware` ([`http_clients`](crate::guide::http_clients)) see each request's
//! method and headers, and apply the rule for you:
//!
//! - `GET`, `HEAD`, `OPTIONS`, `TRACE`, `PUT`, `DELETE`, and any request with an `Idempotency-Key`
//!   (or `X-Idempotency-Key`) that is not empty or blank, are retried on the whole table.
//! - Any other method (`POST`, `PATCH`, …) without a key is sent again only on what proves it was
//!   not applied: a failed connect, an HTTP/2 stream the server refused (`REFUSED_STREAM`) or never
//!   processed (above a `GOAWAY`'s last stream id), `408`, `425`, `429`, `503`, or the server's
//!   `x-should-retry: true`. Never on a `500`, `502`, `504`, the face's own `timeout`, or a
//!   connection closed after the request was sent.
//! - `.idempotent()` vouches that every request through the face is safe to repeat: the whole
//!   table for every method.
//! - `.idempotency_key()` gives each `POST`/`PATCH` without a key a random (v4 UUID)
//!   `Idempotency-Key`, the same on every attempt and new per call, and then retries it on the
//!   whole table. A key the caller set is kept; an empty or blank one is no key, and is replaced.
//! - A hedge is a second send: a request the rule does not let send twice is never hedged.
//! - A classifier of your own (`.on`, `.on_ok`) decides for every method.
//!
//! `tests/writes/writes.rs` counts on real servers what each face sends: a `POST` answered `500`, a
//! `PATCH` answered `502` or `504`, a `POST` cut by the face's `timeout` and one whose connection
//! closed after the server read it are each sent once; a `POST` answered `503`, `429`, `408` or
//! `425`, or whose connect failed, four times; with a key, four times with that key; with an empty
//! or blank key, as with none. The `guide_hyper` and `guide_reqwest_middleware` recipes show it.
//!
//! # Databases and other writes
//!
//! A write outside a transaction — one auto-committed `INSERT`, a call to another service — that
//! reached the server before the connection broke is done; so is a transaction whose connection
//! was lost during `COMMIT`. Give such a write a key made once, and let the server drop the repeat
//! (`INSERT … ON CONFLICT (id) DO NOTHING`): see [`databases`](crate::guide::databases).
//!
//! # Hedging
//!
//! [`hedging`](crate::guide::hedging) sends a second copy while the first still runs: dropping the loser
//! cancels the client's future, not the server's work. Hedge only what is safe to do twice.
