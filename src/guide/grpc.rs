//! Retrying gRPC calls with tonic: the loop as a layer around a `Channel`, `#[retry]` on a
//! function that makes its request, or the service config your other gRPC clients read.
//!
//! ```toml
//! [dependencies]
//! retry-jitter = { version = "0.1", features = ["tower", "tonic"] } # Rust 1.88
//! tonic = "0.14"
//! tower = { version = "0.5", features = ["util"] }
//! http = "1"
//! bytes = "1"
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! ```
//!
//! `cargo run --example guide_tonic --features tower,tonic` runs this program. To run without
//! protoc, its stand-in server and its client send raw bytes (the `Raw` codec at the bottom); with
//! tonic-build's generated client, `InventoryClient::new(channel)` takes the retried channel in
//! place of `tonic::client::Grpc::new(channel)`, and `client.stock(request)` is the call.
//!
//! ```rust,no_run
#![doc = include_str!("../../examples/guide_tonic.rs")]
//! ```
//!
//! # Which codes are retried
//!
//! Feature `tonic` implements [`Transient`](crate::Transient) for `tonic::Status`, by
//! [`tonic::classify_code`](crate::tonic::classify_code):
//!
//! - `UNAVAILABLE` is retried;
//! - `RESOURCE_EXHAUSTED` too, waiting the server's `grpc-retry-pushback-ms` (gRPC's A6); a
//!   negative or malformed pushback stops, as A6 says;
//! - every other code stops.
//!
//! The [`tonic`](crate::tonic) module has the table with its reasons, and Envoy's wider set
//! (`cancelled`, `deadline-exceeded`, `internal`) for calls that are idempotent.
//!
//! `RetryLayer` over a `Channel` classifies answers the same way, a trailers-only error by its
//! `grpc-status` header; it records the request's body while it is sent and replays it, and each
//! retry carries `grpc-previous-rpc-attempts` (A6). A gRPC call is always a `POST` and keeps the
//! gRPC table: the method rule of [`writes`](crate::guide::writes) is for plain HTTP.
//!
//! `timeout` with `#[retry]` needs `From<TimedOut>` for the error type, which `tonic::Status` has
//! not (a type neither of us owns): wrap it in an error of your own that has it, or give the layer
//! its `.timeout(..)`, as above.
//!
//! A service that answers gRPC calls and calls others in turn: see [`chain`](crate::guide::chain) for
//! `grpc-timeout` carried down and `grpc-retry-pushback-ms: -1` sent up.
//!
//! # gRPC's service config: the JSON your other clients read
//!
//! A service whose clients are written in several languages writes its retry rules once, as a
//! service config ([gRFC A6](https://github.com/grpc/proposal/blob/master/A6-client-retries.md)):
//! C++, Java, Go and Python clients read the same JSON. [`ServiceConfig::from_json`] reads it
//! with gRPC's own rules, and [`ServiceConfigLayer`] applies it to a tonic `Channel`, as part 3 of
//! the program above does with grpc-java's example config pasted as it is (only its name changed
//! to this service's). Each call gets its method's `retryPolicy` or `hedgingPolicy` by its path
//! (the method's entry, else its service's, else the default), the channel's `retryThrottling`
//! bounds what all its calls retry, and a method without a policy is sent once. A bad config is
//! an error naming the JSON path and the rule it breaks
//! (`methodConfig[0].retryPolicy.maxAttempts: must be an integer greater than 1`).
//!
//! A method the config gives a policy is sent more than once because the config says so, as in
//! every gRPC client: the config is your word that the method is safe to repeat. `waitForReady`
//! is read and does not apply: a layer cannot hold a call until the channel is ready.
//!
//! With feature `metrics`, each call through the layer records gRFC A96's figures at its end:
//! `grpc.client.call.retries`, `grpc.client.call.transparent_retries`, `grpc.client.call.hedges`
//! and `grpc.client.call.retry_delay` (seconds with no attempt in flight), labelled `grpc.method` and `grpc.target` (the layer's
//! [`target`](crate::tonic::ServiceConfigLayer::target)), a zero not recorded, beside the
//! crate's own `retry_jitter_*` metrics.
//!
//! ## What differs from `#[retry]`'s defaults on this face, and why
//!
//! On this face A6 wins, so that a call retried here behaves as the same call from any other
//! gRPC client:
//!
//! | | `#[retry]`, `RetryLayer` | `ServiceConfigLayer` (A6) |
//! |---|---|---|
//! | the wait before retry `n` | full jitter: uniform in `[0, min(cap, base·2^(n−1))]` | `min(maxBackoff, initialBackoff·multiplier^(n−1))` × uniform `[0.8, 1.2]` ([`Backoff::grpc`](crate::Backoff::grpc)) |
//! | a server's pushback (`grpc-retry-pushback-ms`) | a lower bound: the hint plus the drawn wait; past the cap, no retry | the wait exactly, of any length (the deadline bounds it), and the backoff starts again after it |
//! | a negative or malformed pushback | no retry | no retry, and the attempt still counts for the throttle |
//! | what bounds a fleet's retries | a budget per host, on by default (20% of calls) | `retryThrottling` if the config has it ([`RetryThrottling`](crate::budget::RetryThrottling): C-core's token arithmetic), else nothing, as in gRPC |
//! | a hedged call's failure | waits the backoff before the next copy | `nonFatalStatusCodes` send the next copy at once, any other code ends the call (even `RESOURCE_EXHAUSTED`) |
//! | the codes retried | the gRPC table (`UNAVAILABLE`, `RESOURCE_EXHAUSTED`) | the method's `retryableStatusCodes`, nothing else |
//! | an attempt that never reached the server's application | a retry like any other, counted | sent again at once, uncounted (a transparent retry, A6) |
//!
//! Full jitter spreads a herd best, which is why it is the crate's default; A6's narrower jitter
//! keeps a client's waits close to the schedule its config promises, and the services that
//! publish configs size their `retryThrottling` for it. A call retried by a layer like this one in
//! a fleet of mixed clients takes its share of the same throttle math as the others.
//!
//! ## Conformance: gRPC's own retry tests
//!
//! gRPC's end-to-end retry tests (`test/core/end2end/tests/retry_*.cc` in grpc/grpc) are the list
//! of behaviours. Each that applies to unary and server-streaming calls is a test of the same name
//! in `tests/grpc/service_config.rs`, against a tonic server on loopback, with the same config,
//! the same answers from the server and the same attempt counts and final status:
//!
//! | gRPC's test | here |
//! |---|---|
//! | `retry` | passes |
//! | `retry_too_many_attempts` | passes |
//! | `retry_non_retriable_status` | passes |
//! | `retry_server_pushback_delay` | passes |
//! | `retry_server_pushback_disabled` | passes |
//! | `retry_throttled` | passes |
//! | `retry_per_attempt_recv_timeout` | passes |
//! | `retry_per_attempt_recv_timeout_on_last_attempt` | passes |
//! | `retry_recv_initial_metadata` | passes: headers commit the call |
//! | `retry_recv_message` | passes as `a_server_streaming_call_is_retried_until_its_headers_come` (a message comes after the headers, which commit first) |
//! | `retry_cancel_during_delay` | passes |
//! | `retry_exceeds_buffer_size_in_initial_batch` | passes (C-core's 256 KiB buffer) |
//! | `retry_transparent_goaway` | passes, with a retry policy on the method (gRPC's runs without one; here a method without a policy is sent once): the call that went away is sent again at once, uncounted, without `grpc-previous-rpc-attempts` |
//! | `retry_transparent_not_sent_on_wire` | passes, the channel a stand-in (hyper fails a request unsent only in a race): sent again until the call's deadline; without one, once per attempt |
//! | `retry_transparent_max_concurrent_streams` | applies in part: the queued call fails with the server's `GOAWAY` and is sent again at once, as in `retry_transparent_goaway`; the rest waits for a restarted server with `waitForReady`, which a layer cannot do: not ported |
//! | `retry_cancel_after_first_attempt_starts`, `retry_cancellation` | apply as the drop of the call's future: covered by `retry_cancel_during_delay`'s drop, not ported apart |
//! | `retry_streaming`, `retry_streaming_after_commit`, `retry_streaming_succeeds_before_replay_finished`, `retry_exceeds_buffer_size_in_delay`, `retry_exceeds_buffer_size_in_subsequent_batch` | client and bidirectional streaming, which this list leaves out (unary and server-streaming calls only): not ported |
//! | `retry_disabled` | a channel argument of C-core's (`grpc.enable_retries=0`): here, not adding the layer |
//! | `retry_lb_drop`, `retry_lb_fail` | a load balancer's pick, below a layer: does not apply |
//! | `retry_cancel_with_multiple_send_batches`, `retry_non_retriable_status_before_recv_trailing_metadata_started`, `retry_non_retriable_status_before_trailers`, `retry_recv_message_replay`, `retry_recv_trailing_metadata_error`, `retry_send_initial_metadata_refs`, `retry_send_op_fails`, `retry_send_recv_batch`, `retry_unref_before_finish`, `retry_unref_before_recv` | C-core's batch API and its filters' internals: no such thing in tonic |
//!
//! Hedging has no end-to-end test in C-core (which does not hedge); the `hedgingPolicy` tests in
//! the same file follow A6's text.
//!
//! **Beside gRPC's own client.** `examples/grpc_conformance.rs` runs each of ten scenarios
//! twice against the same loopback server: once through this layer, once through gRPC's
//! C-core client (Python's `grpcio`, with the same JSON), and compares the attempts the
//! server got and the final code, call by call (CI runs it:
//! `bash scripts/with-grpcio.sh cargo run --example grpc_conformance --features tower,tonic`).
//! Nine agree: a retry, too many attempts, `maxAttempts` above 5, a code not listed, the
//! pushback's delay and its refusal, two throttles, and headers that commit the call. One
//! differs by design: C-core rejects a config naming codes by number or in lower case, which
//! this layer reads.
//!
//! [`ServiceConfig::from_json`]: crate::tonic::ServiceConfig::from_json
//! [`ServiceConfigLayer`]: crate::tonic::ServiceConfigLayer
