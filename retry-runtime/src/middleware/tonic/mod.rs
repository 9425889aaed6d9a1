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
//! A tower layer over a tonic `Channel` (any service taking `http::Request<tonic::body::Body>`),
//! so that a generated client works on top of it unchanged. It runs the crate's one retry loop
//! ([`RetryLayer`](crate::tower::RetryLayer)'s: one loop per method entry, made with the layer),
//! with gRFC A6's rules where they differ from the crate's defaults:
//!
//! - **Which method, which policy.** Each call gets the `methodConfig` entry of its path
//!   (`/pkg.Service/Method`): the one naming that method, else its service, else the default
//!   (the empty name). A call whose entry has no `retryPolicy`, or which no entry names, is
//!   sent once, untouched.
//! - **A method given a policy is sent more than once because the config says so**, as in
//!   every gRPC client: the config is the user's word that the method is safe to repeat (a
//!   `retryPolicy` sends it again after a failure, a `hedgingPolicy` sends copies before any
//!   answer). Its calls are retried on what the policy lists, whatever the HTTP method (every
//!   gRPC call is a `POST`), so give a policy only to methods a repeat cannot harm.
//! - **Attempts and codes.** `maxAttempts` attempts at most (5 at most, as the parser reads
//!   it). A trailers-only answer (the status in its headers, as a server answers a call it
//!   failed before replying) is retried only if its code is in `retryableStatusCodes`; any
//!   other code is returned as it is. An answer whose headers came without a status has begun:
//!   the call is committed, and whatever its trailers say is the answer. An error of the
//!   channel is what a gRPC client reports as `UNAVAILABLE`: retried when that code is listed,
//!   or when it proves the request never left (a refused connection or stream).
//! - **Transparent retries.** An attempt the channel proves never reached the server's
//!   application is sent again at once, counted neither against `maxAttempts` nor by the
//!   throttle, and without `grpc-previous-rpc-attempts` of its own: one the server's transport
//!   refused (an HTTP/2 `REFUSED_STREAM`, a stream beyond a `GOAWAY`) once per attempt, as A6
//!   says; one that never left the client (hyper handing back a request queued on a
//!   connection that closed) until the call's deadline, or once per attempt when the call has
//!   none, so that it never spins. A refused connection is not one: a gRPC client fails a
//!   call on a channel that cannot connect (`UNAVAILABLE`, retried when listed), and sending
//!   it again at once would spin on the connect. Hedged calls and methods without a policy
//!   make none (gRPC C-core makes them on every call).
//! - **Backoff: A6's, not full jitter.** Retry `n` waits
//!   `min(initialBackoff · backoffMultiplier^(n−1), maxBackoff)` times a factor drawn
//!   uniformly in `[0.8, 1.2]` ([`Backoff::grpc`](crate::Backoff::grpc)), as every gRPC client
//!   draws it (A6 as revised in 2024), where `#[retry]` draws in `[0, ceiling]`.
//! - **Pushback: the server's word, exactly.** A retryable answer carrying
//!   `grpc-retry-pushback-ms` is retried after exactly that many milliseconds (not added to a
//!   draw, not refused past `maxBackoff`, as a `Retry-After` is elsewhere), and the backoff
//!   after it starts again from `initialBackoff`; a negative or malformed value ends the call
//!   (and counts as a failure for the throttle).
//! - **`perAttemptRecvTimeout`** limits each attempt: one not answered in time is cancelled and
//!   retried, whatever the codes listed; when it was the last, the call ends `CANCELLED`, as
//!   in gRPC C-core.
//! - **The call's deadline**, the shorter of its `grpc-timeout` and its method's `timeout`,
//!   bounds every attempt and every wait: no attempt starts after it, and one still running
//!   is cut. The call then ends with `DEADLINE_EXCEEDED`. Each attempt sends the time left as
//!   its `grpc-timeout`, and each retry carries `grpc-previous-rpc-attempts`.
//! - **Throttling.** With `retryThrottling`, the layer has one
//!   [`RetryThrottling`](crate::RetryThrottling), shared by every clone of its services (one
//!   channel, one throttle): each attempt that fails with a retryable code takes a token,
//!   each call that succeeds gives `tokenRatio` back, and no retry is made while the tokens
//!   are at or below half of `maxTokens`. Without it, no budget at all: A6 clients have none.
//!   Where it differs from C-core: a committed call (its headers came first) counts as a
//!   success when its headers come, whatever its trailers then say; C-core counts its final
//!   status.
//! - **Request bodies** of up to 256 KiB are replayed (gRPC C-core's retry buffer); a call
//!   with a larger request is sent once.
//! - **`waitForReady`** is read but does not apply to a layer: waiting for a connection is the
//!   channel's, under the layer.
//! - **gRFC A96's figures** (feature `metrics`): once per call, at its end, the histograms
//!   `grpc.client.call.retries` (`{retry}`), `grpc.client.call.transparent_retries`
//!   (`{transparent_retry}`), `grpc.client.call.hedges` (`{hedge}`) and
//!   `grpc.client.call.retry_delay` (seconds with no attempt in flight), labelled
//!   `grpc.method` (the path without its `/`) and `grpc.target`
//!   ([`target`](ServiceConfigLayer::target), `"unknown"` unless named); a zero is not
//!   recorded, as A96 says.
//! - **The hooks every face has**: [`notify`](ServiceConfigLayer::notify),
//!   [`give_up`](ServiceConfigLayer::give_up), [`stats`](ServiceConfigLayer::stats),
//!   [`cancel`](ServiceConfigLayer::cancel), [`throttle`](ServiceConfigLayer::throttle),
//!   [`breaker`](ServiceConfigLayer::breaker), `trace` and the awaited `*_async` hooks, with
//!   the names and meaning they
//!   have on [`RetryLayer`](crate::tower::RetryLayer) and `#[retry]`, for the calls of
//!   methods with a policy (a call sent once runs no loop). A call the breaker or the
//!   throttle refuses ends `UNAVAILABLE`.
//! - **`hedgingPolicy`**: up to `maxAttempts` copies of the call, each `hedgingDelay` after
//!   the one before (`0s`: all at once), run by the loop's hedging
//!   ([`RetryLayer::hedge`](crate::tower::RetryBuilder::hedge)); the first answer wins and the
//!   copies still running are dropped. A fatal code (one not in `nonFatalStatusCodes`) ends
//!   the call with that status and drops the rest. **A6's rules win over the crate's own
//!   hedging here:** a non-fatal code (even `RESOURCE_EXHAUSTED`) sends the next copy at
//!   once, and a pushback of `n` ms sends it `n` ms later, where `#[retry(hedge = …)]` keeps
//!   to its delay. The throttle holds copies back as it holds retries, and counts each copy
//!   that fails with a non-fatal code. Where it still differs from A6: a negative pushback
//!   ends the call, dropping the copies still running (A6 sends no more but lets them
//!   finish).

#[cfg(feature = "metrics")]
mod a96;
mod classify;
mod layer;

pub use crate::classify::tonic::{classify, classify_code, ServiceConfig, ServiceConfigError};
pub use layer::{ServiceConfigLayer, ServiceConfigService};

pub mod future {
    //! The future of a [`ServiceConfigService`](super::ServiceConfigService): a user meets it
    //! in types only, as tower's own `tower::retry::future::ResponseFuture`.
    pub use super::layer::ResponseFuture;
}
