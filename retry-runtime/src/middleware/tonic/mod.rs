//! gRPC: which status codes are worth retrying, and the server's pushback (feature `tonic`, on
//! tonic's [`Code`](tonic::Code) and [`Status`](tonic::Status)).
//!
//! gRPC's own retry design ([A6](https://github.com/grpc/proposal/blob/master/A6-client-retries.md))
//! retries only the codes a service lists as retryable, and honours the server's
//! `grpc-retry-pushback-ms` trailer: a non-negative integer is the wait before the next
//! attempt; a negative or malformed value means "do not retry". This table is the default a
//! client can apply without knowing the service:
//!
//! | code | decision | why |
//! |---|---|---|
//! | `UNAVAILABLE` | retry | the service is down for now (a restart, an overload, a lost connection); gRPC names it the retryable code |
//! | `RESOURCE_EXHAUSTED` | `RetryAfter` the `grpc-retry-pushback-ms` the server sends; without one, `RateLimited` (waits drawn from the policy's `rate_limited_base`, 1 s); a negative or malformed pushback stops | a quota or rate limit: waiting, longer, is the fix, and the server may say how long |
//! | `OK` | stop | not a failure |
//! | `CANCELLED`, `DEADLINE_EXCEEDED` | stop | the caller gave up, or its deadline passed: no time is left for a retry to be of use |
//! | `INTERNAL`, `UNKNOWN`, `DATA_LOSS` | stop | the call may have run on the server: resending a non-idempotent call does it twice |
//! | `ABORTED` | stop | a concurrency conflict: the application retries it at a higher level (re-read, then write) |
//! | `INVALID_ARGUMENT`, `NOT_FOUND`, `ALREADY_EXISTS`, `PERMISSION_DENIED`, `UNAUTHENTICATED`, `FAILED_PRECONDITION`, `OUT_OF_RANGE`, `UNIMPLEMENTED` | stop | the request itself is wrong: sending it again gets the same answer |
//!
//! **Envoy's wider set.** Envoy's `retry_on` for gRPC also offers `cancelled`,
//! `deadline-exceeded` and `internal` (beside `unavailable` and `resource-exhausted`). They are
//! safe only for *idempotent* calls (a read, a put with a client-chosen id): the call may have
//! run. For those, widen the table with `on`:
//!
//! ```
//! use retry_jitter::tonic::classify_code;
//! use retry_jitter::Decision;
//! use tonic::Code;
//!
//! // An idempotent read: Envoy's wider set.
//! let on = |code: Code| match code {
//!     Code::Cancelled | Code::DeadlineExceeded | Code::Internal => Decision::Retry,
//!     other => classify_code(other),
//! };
//! assert_eq!(on(Code::Internal), Decision::Retry);
//! assert_eq!(on(Code::InvalidArgument), Decision::Stop);
//! ```
//!
//! **The service's own word.** A service that publishes a gRPC service config (its JSON, by
//! DNS or handed to clients) says which codes its methods retry, how often and how long:
//! [`ServiceConfig::from_json`] reads and checks it, naming the JSON path of any value at fault,
//! and [`ServiceConfigLayer`] applies it to a tonic channel, as gRPC's own clients do.
//!
//! # `ServiceConfigLayer`: a service config applied
//!
//! A tower layer over a tonic `Channel`: a generated client works on top of it unchanged.
//!
//! It runs the crate's one retry loop, [`RetryLayer`](crate::tower::RetryLayer)'s, one per
//! method entry.
//!
//! Where gRFC A6 differs from the crate's defaults, A6 wins. The guide's `grpc` page has the
//! walkthrough and the conformance list. In short:
//!
//! - **Which policy.** A call gets the entry naming its method, else its service, else the
//!   default. A call no policy covers is sent once, untouched.
//! - **The config vouches.** A method given a policy is sent more than once, whatever its HTTP
//!   method (every gRPC call is a `POST`). Give a policy only to methods a repeat cannot harm.
//! - **Attempts.** `maxAttempts` at most, and never more than 5.
//! - **Codes.** A trailers-only answer is retried only if its code is listed.
//! - **Commit.** An answer whose headers came without a status has begun: its trailers are
//!   the answer.
//! - **Channel errors** count as `UNAVAILABLE`. They are retried when that code is listed, or
//!   when they prove the request never left ([`never_sent`](crate::http::never_sent): a
//!   refused or failed connect, a stream the server did not process).
//! - A request hyper hands back unwritten is resent only transparently (below); once that is
//!   spent, the call ends with it.
//! - **Transparent retries.** An attempt that never reached the server's application is sent
//!   again at once, uncounted, without `grpc-previous-rpc-attempts` of its own.
//! - Refused by the server's transport (`REFUSED_STREAM`, beyond a `GOAWAY`): once per attempt.
//! - Never written (hyper hands it back unsent): until the deadline, else once per attempt.
//! - A refused connect is not transparent: sending again at once would spin on the connect.
//! - Hedged calls and methods without a policy make no transparent retry (C-core does).
//! - **Backoff.** Retry `n` waits `min(initialBackoff · backoffMultiplier^(n−1), maxBackoff)`
//!   times a factor in `[0.8, 1.2]` ([`Backoff::grpc`](crate::Backoff::grpc)).
//! - **Pushback.** `grpc-retry-pushback-ms` is the next wait exactly; the backoff then
//!   restarts.
//! - A negative or malformed pushback ends the call, and still counts for the throttle.
//! - **`perAttemptRecvTimeout`** cuts an attempt and retries it. Cut on the last attempt, the
//!   call ends `CANCELLED`.
//! - **Deadline.** The shorter of `grpc-timeout` and the method's `timeout` bounds every
//!   attempt and wait. Past it, the call ends `DEADLINE_EXCEEDED`.
//! - **Throttling.** `retryThrottling` gives the layer one
//!   [`RetryThrottling`](crate::budget::RetryThrottling), shared by its services' clones.
//! - A failed attempt with a listed code takes a token; a success gives `tokenRatio` back.
//! - No retry while the tokens are at or below half of `maxTokens`.
//! - Without `retryThrottling`, no budget at all, as in gRPC.
//! - A committed call counts as a success when its headers come; C-core counts its final
//!   status.
//! - **Request bodies** up to 256 KiB are replayed (C-core's buffer); a larger one is sent once.
//! - **`waitForReady`** is read but does not apply: waiting for a connection is the channel's.
//! - **A96** (feature `metrics`): at a call's end, `grpc.client.call.retries`,
//!   `.transparent_retries`, `.hedges` and `.retry_delay`. Zeros are not recorded.
//! - Their labels: `grpc.method` and `grpc.target` ([`target`](ServiceConfigLayer::target)).
//! - **Hooks.** [`notify`](ServiceConfigLayer::notify),
//!   [`give_up`](ServiceConfigLayer::give_up), [`stats`](ServiceConfigLayer::stats),
//!   [`cancel`](ServiceConfigLayer::cancel), [`throttle`](ServiceConfigLayer::throttle),
//!   [`breaker`](ServiceConfigLayer::breaker), `trace`, the `*_async` ones,
//!   [`with_name`](ServiceConfigLayer::with_name) and
//!   [`stats_in_response`](ServiceConfigLayer::stats_in_response), as on `RetryLayer`.
//! - Not here: `budget` (the config's `retryThrottling` is the budget), and what the config
//!   sets (`on`, `timeout`, `hedge`).
//! - A call the breaker or the throttle refuses ends `UNAVAILABLE`.
//! - **`hedgingPolicy`**: up to `maxAttempts` copies, `hedgingDelay` apart (`0s`: all at
//!   once). The first answer wins.
//! - A fatal code (not in `nonFatalStatusCodes`) ends the call and drops the other copies.
//! - A non-fatal code, even `RESOURCE_EXHAUSTED`, sends the next copy at once.
//! - A pushback of `n` ms sends the next copy `n` ms later.
//! - The throttle holds copies back as it holds retries.
//! - Unlike A6, a negative pushback drops the copies still running (A6 lets them finish).

#[cfg(feature = "metrics")]
mod a96;
mod classify;
mod layer;

pub use crate::classify::tonic::{classify, classify_code, ServiceConfig, ServiceConfigError};
pub use layer::{ServiceConfigLayer, ServiceConfigService};

#[doc(hidden)]
pub mod future {
    //! The future of a [`ServiceConfigService`](super::ServiceConfigService): a user meets it
    //! in types only, as tower's own `tower::retry::future::ResponseFuture`.
    pub use super::layer::ResponseFuture;
}
