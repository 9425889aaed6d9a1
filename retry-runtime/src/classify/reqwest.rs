//! reqwest: `Transient` for its errors (feature `reqwest`).
//!
//! It also gives an error for non-success responses.
//!
//! The error carries the status and the `Retry-After` hint.
//!
//! It also carries the server's word on retrying and the body's start.
//!
//! [`check`] decides on the response's head.
//!
//! The status, `Retry-After` and the server's word come from the headers.
//!
//! The server's word: `x-should-retry`, `stripe-should-retry`, `x-envoy-overloaded`.
//!
//! The body it keeps for the error message is bounded.
//!
//! Its size is bounded to 64 KiB.
//!
//! Its read's time is bounded: 250 ms without a chunk, 1 s in all.
//!
//! So a huge error body cannot fill memory.
//!
//! A stalled one cannot hold the call.
//!
//! | error | decision |
//! |---|---|
//! | a non-success status from [`check`] ([`StatusError`]) | as [`classify_response`](crate::http::classify_response) decides: by [`classify_status`], the server's word winning, honouring `Retry-After` |
//! | a non-success status from reqwest's `error_for_status` (it keeps no header) | by [`classify_status`] |
//! | a timeout (connect, read, whole request, body) | retry |
//! | a refused, reset or failed connection; a request that could not be sent | retry |
//! | a connection cut mid-body (`Content-Length` not reached, a chunked body cut) | retry, as `io::ErrorKind::UnexpectedEof` |
//! | a request that could not be built, a redirect loop or limit | stop |
//! | an `https://` URL on a reqwest built without TLS (this crate's own `reqwest` has none): reqwest calls it a connect error, but it is a configuration error that never succeeds | stop |
//! | a response head that cannot be parsed (an invalid status line, too many headers, a header line too large, an invalid header): the same server sends the same head again | stop |
//! | a malformed body (bad chunk encoding), a complete body that does not decode (bad JSON) | stop |
//! | [`Error::TimedOut`] (the attempt ran past `#[retry(timeout = …)]`) | retry |
//!
//! ```no_run
//! use retry_jitter::reqwest::{check, Error};
//!
//! // Under `#[retry(on = retry_jitter::transient)]`, a 503 with `Retry-After: 2` waits at
//! // least 2 s, a 404 is returned at once, a refused connection is retried.
//! async fn get_user(client: &reqwest::Client, id: u64) -> Result<String, Error> {
//!     let resp = client.get(format!("http://127.0.0.1:8080/users/{id}")).send().await?;
//!     Ok(check(resp).await?.text().await?)
//! }
//! ```

use core::fmt;
use core::time::Duration;
use std::error::Error as StdError;
use std::time::SystemTime;

use http::StatusCode;

#[cfg(doc)]
use crate::classify::http::classify_response;
use crate::classify::http::{classify_status, decide_response, retry_after, server_says_retry};
use crate::classify::transport::{body_cause, never_succeeds};
use crate::fleet::{CircuitOpen, Throttled};
use crate::policy::transient::Transient;
use crate::policy::Decision;
use crate::policy::TimedOut;

/// A reqwest call that failed.
///
/// It failed in transport, by status, or past its time limit.
///
/// Its `Display` is the inner error's.
///
/// Its [`source`](std::error::Error::source) is the inner error's source, as for `std::io::Error`.
///
/// A reporter printing an error and its sources prints each message once.
///
/// ```
/// use retry_jitter::reqwest::Error;
/// use std::error::Error as _;
///
/// let inner = reqwest::Client::new().get("not a url").build().unwrap_err();
/// let (display, source) = (inner.to_string(), inner.source().map(|s| s.to_string()));
/// let e = Error::from(inner);
/// assert_eq!(e.to_string(), display);
/// assert_eq!(e.source().map(|s| s.to_string()), source);
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The request could not be sent or its response read.
    Transport(reqwest::Error),
    /// The server answered with a non-success status.
    Status(StatusError),
    /// The attempt ran past its time limit and was dropped.
    ///
    /// The limit is `#[retry(timeout = …)]`.
    TimedOut(TimedOut),
    /// The adaptive throttle (`throttle = …`) rejected the attempt.
    ///
    /// The attempt was not sent.
    Throttled(Throttled),
    /// The circuit breaker (`breaker = …`) is open.
    ///
    /// The request was not sent.
    CircuitOpen(CircuitOpen),
}

/// A non-success response, with what a retry decision needs.
///
/// ```
/// use retry_jitter::reqwest::StatusError;
/// use std::time::Duration;
///
/// let e = StatusError {
///     status: http::StatusCode::TOO_MANY_REQUESTS,
///     retry_after: Some(Duration::from_secs(3)),
///     server_says_retry: None,
///     body: "slow down".into(),
/// };
/// assert_eq!(e.to_string(), "HTTP 429 Too Many Requests (retry after 3s): slow down");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusError {
    /// The status.
    pub status: StatusCode,
    /// The server's `Retry-After`, parsed when the response arrived.
    pub retry_after: Option<Duration>,
    /// What the server said of retrying, read on arrival.
    ///
    /// [`server_says_retry`](crate::http::server_says_retry) reads it from three headers.
    ///
    /// It reads every line of `x-should-retry`, `stripe-should-retry` and `x-envoy-overloaded`.
    ///
    /// - `Some(false)` stops whatever the status.
    /// - Inside a `ChainLayer`'s scope, `Some(false)` also has the tier answer "don't retry".
    /// - `Some(true)` retries a failure the table stops on.
    /// - `None` leaves the status to decide.
    pub server_says_retry: Option<bool>,
    /// The start of the body, as text, at most 64 KiB.
    ///
    /// Invalid UTF-8 is replaced.
    ///
    /// It is what arrived before the read stopped.
    ///
    /// The read stops at that size, the body's end, a stall, or a transport error.
    ///
    /// Empty if nothing arrived.
    pub body: String,
}

/// The most of an error body [`check`] keeps: 64 KiB.
///
/// It is kept in [`StatusError::body`].
///
/// The rest is never read; the connection is dropped instead.
pub(crate) const MAX_ERROR_BODY: usize = 64 * 1024;

/// How long [`check`] waits for an error body's next chunk: 250 ms.
///
/// Then it stops reading and keeps what arrived.
pub(crate) const ERROR_BODY_IDLE_TIMEOUT: Duration = Duration::from_millis(250);

/// The longest [`check`] spends reading an error body: 1 s.
///
/// That holds however slowly it trickles in.
pub(crate) const ERROR_BODY_TIMEOUT: Duration = Duration::from_secs(1);

/// How long before its attempt's end [`check`] stops reading an error body: 5 ms.
///
/// The attempt's end is set by its `timeout`.
///
/// So its read ends before the attempt's timer cuts it.
///
/// The attempt's end is learnt a little after its timer starts.
pub(crate) const ATTEMPT_END_MARGIN: Duration = Duration::from_millis(5);

impl fmt::Display for StatusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {}", self.status)?;
        if let Some(hint) = self.retry_after {
            write!(f, " (retry after {hint:?})")?;
        }
        match self.server_says_retry {
            Some(false) => f.write_str(" (the server says not to retry)")?,
            Some(true) => f.write_str(" (the server says to retry)")?,
            None => {}
        }
        if !self.body.is_empty() {
            write!(f, ": {}", self.body)?;
        }
        Ok(())
    }
}

impl std::error::Error for StatusError {}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Transport(e) => fmt::Display::fmt(e, f),
            Error::Status(e) => fmt::Display::fmt(e, f),
            Error::TimedOut(e) => fmt::Display::fmt(e, f),
            Error::Throttled(e) => fmt::Display::fmt(e, f),
            Error::CircuitOpen(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            Error::Transport(e) => e.source(),
            Error::Status(e) => e.source(),
            Error::TimedOut(e) => e.source(),
            Error::Throttled(e) => e.source(),
            Error::CircuitOpen(e) => e.source(),
        }
    }
}

/// An attempt the throttle rejected (`throttle = …`): not retried.
///
/// ```
/// use retry_jitter::reqwest::Error;
/// use retry_jitter::{Decision, Throttled, Transient};
/// assert_eq!(Error::from(Throttled).decision(), Decision::Stop);
/// ```
impl From<Throttled> for Error {
    fn from(e: Throttled) -> Self {
        Error::Throttled(e)
    }
}

/// A call the breaker refused (`breaker = …`): not retried.
///
/// ```
/// use retry_jitter::reqwest::Error;
/// use retry_jitter::{CircuitOpen, Decision, Transient};
/// assert_eq!(Error::from(CircuitOpen).decision(), Decision::Stop);
/// ```
impl From<CircuitOpen> for Error {
    fn from(e: CircuitOpen) -> Self {
        Error::CircuitOpen(e)
    }
}

/// The `?` of a reqwest call.
///
/// ```
/// use retry_jitter::reqwest::Error;
/// let e = Error::from(reqwest::Client::new().get("not a url").build().unwrap_err());
/// assert!(matches!(e, Error::Transport(_)));
/// ```
impl From<reqwest::Error> for Error {
    fn from(e: reqwest::Error) -> Self {
        Error::Transport(e)
    }
}

/// The `?` of [`check`].
///
/// ```
/// use retry_jitter::reqwest::{Error, StatusError};
/// let e = Error::from(StatusError { status: http::StatusCode::NOT_FOUND, retry_after: None, server_says_retry: None, body: String::new() });
/// assert_eq!(e.to_string(), "HTTP 404 Not Found");
/// ```
impl From<StatusError> for Error {
    fn from(e: StatusError) -> Self {
        Error::Status(e)
    }
}

/// An attempt cut by `#[retry(timeout = …)]`.
///
/// This error type works with `timeout`.
///
/// ```
/// use retry_jitter::reqwest::Error;
/// use retry_jitter::{Decision, TimedOut, Transient};
///
/// let e = Error::from(TimedOut);
/// assert!(matches!(e, Error::TimedOut(TimedOut)));
/// assert_eq!((e.decision(), e.status()), (Decision::Retry, None));
/// assert_eq!(e.to_string(), "the attempt timed out");
/// ```
impl From<TimedOut> for Error {
    fn from(e: TimedOut) -> Self {
        Error::TimedOut(e)
    }
}

impl Error {
    /// The HTTP status, if the server answered.
    ///
    /// ```
    /// use retry_jitter::reqwest::{Error, StatusError};
    /// use retry_jitter::TimedOut;
    /// use http::StatusCode;
    ///
    /// let e = Error::from(StatusError { status: StatusCode::BAD_GATEWAY, retry_after: None, server_says_retry: None, body: String::new() });
    /// assert_eq!(e.status(), Some(StatusCode::BAD_GATEWAY));
    /// assert_eq!(Error::from(TimedOut).status(), None);
    /// ```
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            Error::Transport(e) => e.status(),
            Error::Status(e) => Some(e.status),
            Error::TimedOut(_) | Error::Throttled(_) | Error::CircuitOpen(_) => None,
        }
    }
}

/// The response if its status is a success.
///
/// Otherwise a [`StatusError`] with the status and the parsed `Retry-After`.
///
/// It also has the server's word on retrying and the body's start.
///
/// The decision is made on the head, as [`classify_response`](crate::http::classify_response) does.
///
/// The status, `Retry-After` and the server's word come from the headers.
///
/// So a broken body cannot change the decision.
///
/// The server's word is every line of three headers.
///
/// They are `x-should-retry`, `stripe-should-retry` and `x-envoy-overloaded`.
///
/// A "don't" wins.
///
/// A success reads no header.
///
/// The body is then read, chunk by chunk, for the error message only.
///
/// The read stops, keeping what arrived, at the first of:
///
/// - 64 KiB; the rest is never read, and the connection dropped;
/// - the body's end, or a transport error reading it;
/// - 250 ms without a new chunk: a stalled body;
/// - 1 s after the read began: a trickling body;
/// - the end of the attempt, if it has a time limit.
///   - That limit is `#[retry(timeout = …)]` or [`Retry::timeout`](crate::Retry::timeout).
///   - The deadline `max_elapsed` sets with it is one too.
///   - The read ends 5 ms before the attempt's cut.
///   - So the status and its `Retry-After`, which decided the outcome, are returned.
///   - They are not lost to a `TimedOut` (see
///     [`attempt_time_left`](crate::policy::attempt_time_left)).
///
/// So a failed attempt spends at most 1 s on its error body.
///
/// It keeps at most 64 KiB of it.
///
/// The time limits run on tokio's timer and clock.
///
/// So do reqwest's own timeouts.
///
/// A paused clock in tests pauses them too.
///
/// The runtime needs its time driver enabled.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// # use std::io::{Read, Write};
/// # let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
/// # let url = format!("http://{}/", server.local_addr().unwrap());
/// # std::thread::spawn(move || {
/// #     let (mut s, _) = server.accept().unwrap();
/// #     let _ = s.read(&mut [0; 4096]);
/// #     let head = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 2\r\nContent-Length: 4\r\n\r\n";
/// #     s.write_all(format!("{head}busy").as_bytes()).unwrap();
/// # });
/// use retry_jitter::reqwest::check;
/// use retry_jitter::{Decision, Transient};
/// use std::time::Duration;
///
/// // `url` answers 503, `Retry-After: 2`, body "busy".
/// let resp = reqwest::get(url).await.unwrap();
/// let err = check(resp).await.unwrap_err();
/// assert_eq!((err.status.as_u16(), err.body.as_str()), (503, "busy"));
/// assert_eq!(err.decision(), Decision::RetryAfter(Duration::from_secs(2)));
/// # }
/// ```
pub async fn check(mut resp: reqwest::Response) -> Result<reqwest::Response, StatusError> {
    let status = resp.status();
    if status.is_success() {
        return Ok(resp);
    }
    let retry_after = retry_after(resp.headers(), SystemTime::now());
    let server_says_retry = server_says_retry(resp.headers());
    let body = read_error_body(&mut resp).await;
    drop(resp);
    Err(StatusError {
        status,
        retry_after,
        server_says_retry,
        body,
    })
}

/// The start of `resp`'s body, within the bounds [`check`] documents.
async fn read_error_body(resp: &mut reqwest::Response) -> String {
    use tokio::time::{timeout, Instant};

    // Within the attempt's own limit, if any.
    //
    // The read ends before the attempt is cut.
    let most = match crate::policy::attempt_time_left() {
        Some(left) => ERROR_BODY_TIMEOUT.min(left.saturating_sub(ATTEMPT_END_MARGIN)),
        None => ERROR_BODY_TIMEOUT,
    };
    let end = Instant::now() + most;
    let expected = resp.content_length().unwrap_or(0);
    let mut kept = Vec::with_capacity(expected.min(MAX_ERROR_BODY as u64) as usize);
    while kept.len() < MAX_ERROR_BODY {
        let wait = ERROR_BODY_IDLE_TIMEOUT.min(end.saturating_duration_since(Instant::now()));
        match timeout(wait, resp.chunk()).await {
            Ok(Ok(Some(chunk))) => {
                let take = chunk.len().min(MAX_ERROR_BODY - kept.len());
                kept.reserve_exact(take);
                kept.extend_from_slice(&chunk[..take]);
            }
            // The end, a transport error, a stall, or time is up.
            Ok(Ok(None)) | Ok(Err(_)) | Err(_) => break,
        }
    }
    text(kept)
}

/// `bytes` as text of at most [`MAX_ERROR_BODY`] bytes.
///
/// A character cut by the size limit is dropped.
///
/// Invalid UTF-8 is replaced.
fn text(mut bytes: Vec<u8>) -> String {
    // A multi-byte character cut at the end: drop its first bytes.
    let len = bytes.len();
    if let Some(back) = (1..=len.min(3)).find(|&back| bytes[len - back] & 0xC0 != 0x80) {
        let lead = bytes[len - back];
        let width = match lead {
            0xF0.. => 4,
            0xE0.. => 3,
            0xC0.. => 2,
            _ => 1,
        };
        if width > back {
            bytes.truncate(len - back);
        }
    }
    let mut text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    // A replacement character is 3 bytes.
    //
    // So invalid bytes may have grown the text.
    if text.len() > MAX_ERROR_BODY {
        let mut end = MAX_ERROR_BODY;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

/// Retried: timeouts, refused or broken connections, failures to send.
///
/// A body cut mid-way counts as a broken connection.
///
/// Not retried: a request that could not be built, a redirect loop.
///
/// Nor an `https://` URL on a reqwest without TLS.
///
/// Nor a response head that cannot be parsed, or a malformed body.
///
/// Nor a complete body that fails to decode.
///
/// A status error (from `error_for_status`) is classified by [`classify_status`].
///
/// The module's table has it all.
///
/// An `https://` URL on a reqwest without a TLS feature fails.
///
/// reqwest flags its error [`is_connect`](reqwest::Error::is_connect).
///
/// This crate depends on reqwest with `default-features = false`.
///
/// No retry can succeed, so the call stops at once.
///
/// The source chain says `invalid URL, scheme is not http`.
///
/// To call `https://` URLs, enable one of reqwest's TLS features.
///
/// Enable `rustls` or `native-tls` in your own dependency on reqwest.
///
/// A body cut mid-way is a *decode* error for reqwest.
///
/// Its message: `error decoding response body`.
///
/// That error is caused by hyper's `error reading a body from connection`.
///
/// hyper's is caused in turn by an `io::Error` of kind `UnexpectedEof`.
///
/// The source chain is read, and that `io::Error` decides.
///
/// It decides by the same table as [`io::Error`](std::io::Error)'s `Transient`.
///
/// ```
/// use retry_jitter::{Decision, Transient};
/// let err = reqwest::Client::new().get("not a url").build().unwrap_err();
/// assert_eq!(err.decision(), Decision::Stop);
/// ```
impl Transient for reqwest::Error {
    fn decision(&self) -> Decision {
        if let Some(status) = self.status() {
            return classify_status(status);
        }
        if self.is_builder() || self.is_redirect() {
            return Decision::Stop;
        }
        if self.is_timeout() {
            return Decision::Retry;
        }
        if never_succeeds(self) {
            return Decision::Stop;
        }
        if self.is_decode() || self.is_body() {
            return body_cause(self).unwrap_or(Decision::Stop);
        }
        Decision::from(self.is_connect() || self.is_request())
    }
}

/// As [`classify_response`](crate::http::classify_response) decides on the response's head.
///
/// It goes by status, honouring `Retry-After` on a retried status.
///
/// For a failure, the server's word wins over the table.
///
/// `Some(false)` stops, `Some(true)` retries.
///
/// Inside a `ChainLayer`'s scope, a "don't" may also reach the tier.
///
/// A "don't" on a status the table retries has the tier answer "don't retry" too.
///
/// ```
/// use retry_jitter::reqwest::StatusError;
/// use retry_jitter::{Decision, Transient};
/// use std::time::Duration;
///
/// let e = StatusError { status: http::StatusCode::SERVICE_UNAVAILABLE, retry_after: Some(Duration::from_secs(1)), server_says_retry: None, body: String::new() };
/// assert_eq!(e.decision(), Decision::RetryAfter(Duration::from_secs(1)));
/// // A tier below that already retried: `x-should-retry: false`.
/// let e = StatusError { server_says_retry: Some(false), ..e };
/// assert_eq!(e.decision(), Decision::Stop);
/// // A 409 the server marks `x-should-retry: true`.
/// let e = StatusError { status: http::StatusCode::CONFLICT, retry_after: None, server_says_retry: Some(true), body: String::new() };
/// assert_eq!(e.decision(), Decision::Retry);
/// ```
impl Transient for StatusError {
    fn decision(&self) -> Decision {
        decide_response(
            self.status,
            true,
            || self.server_says_retry,
            || self.retry_after,
        )
    }
}

/// The transport error's, the status error's or [`TimedOut`]'s decision.
///
/// ```
/// use retry_jitter::reqwest::{Error, StatusError};
/// use retry_jitter::{Decision, TimedOut, Transient};
/// let e = Error::Status(StatusError { status: http::StatusCode::NOT_FOUND, retry_after: None, server_says_retry: None, body: String::new() });
/// assert_eq!(e.decision(), Decision::Stop);
/// assert_eq!(Error::from(TimedOut).decision(), Decision::Retry);
/// ```
impl Transient for Error {
    fn decision(&self) -> Decision {
        match self {
            Error::Transport(e) => e.decision(),
            Error::Status(e) => e.decision(),
            Error::TimedOut(e) => e.decision(),
            Error::Throttled(e) => e.decision(),
            Error::CircuitOpen(e) => e.decision(),
        }
    }
}

#[cfg(test)]
mod tests;
