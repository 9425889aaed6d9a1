//! reqwest: `Transient` for its errors, and an error for non-success responses that carries the
//! status, the `Retry-After` hint and the body (feature `reqwest`).
//!
//! ```no_run
//! use retry_runtime::reqwest::{check, Error};
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
use std::time::SystemTime;

use http::StatusCode;

use crate::http::{classify_status, classify_status_with_hint, retry_after};
use crate::{Decision, Transient};

/// A reqwest call that failed: in transport, or with a non-success status.
#[derive(Debug)]
pub enum Error {
    /// The request could not be sent or its response read.
    Transport(reqwest::Error),
    /// The server answered with a status that is not a success.
    Status(StatusError),
}

/// A response whose status is not a success, with what a retry decision needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusError {
    /// The status.
    pub status: StatusCode,
    /// The server's `Retry-After`, parsed when the response arrived.
    pub retry_after: Option<Duration>,
    /// The body, as text (empty if it could not be read).
    pub body: String,
}

impl fmt::Display for StatusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {}", self.status)?;
        if let Some(hint) = self.retry_after {
            write!(f, " (retry after {hint:?})")?;
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
            Error::Transport(e) => write!(f, "{e}"),
            Error::Status(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Transport(e) => Some(e),
            Error::Status(e) => Some(e),
        }
    }
}

impl From<reqwest::Error> for Error {
    fn from(e: reqwest::Error) -> Self {
        Error::Transport(e)
    }
}

impl From<StatusError> for Error {
    fn from(e: StatusError) -> Self {
        Error::Status(e)
    }
}

impl Error {
    /// The HTTP status, if the server answered.
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            Error::Transport(e) => e.status(),
            Error::Status(e) => Some(e.status),
        }
    }
}

/// The response if its status is a success; otherwise a [`StatusError`] with the status, the
/// parsed `Retry-After` and the body text.
///
/// ```no_run
/// # async fn f(resp: reqwest::Response) -> Result<(), retry_runtime::reqwest::Error> {
/// let body = retry_runtime::reqwest::check(resp).await?.text().await?;
/// # Ok(()) }
/// ```
pub async fn check(resp: reqwest::Response) -> Result<reqwest::Response, StatusError> {
    let status = resp.status();
    if status.is_success() {
        return Ok(resp);
    }
    let retry_after = retry_after(resp.headers(), SystemTime::now());
    let body = resp.text().await.unwrap_or_default();
    Err(StatusError {
        status,
        retry_after,
        body,
    })
}

/// Timeouts, refused or broken connections and failures to send are retried; a request that
/// could not be built, a redirect loop, a body or a decoding failure are not; a status error
/// (from `error_for_status`) is classified by [`classify_status`].
///
/// ```
/// use retry_runtime::{Decision, Transient};
/// let err = reqwest::Client::new().get("not a url").build().unwrap_err();
/// assert_eq!(err.decision(), Decision::Stop);
/// ```
impl Transient for reqwest::Error {
    fn decision(&self) -> Decision {
        if let Some(status) = self.status() {
            return classify_status(status);
        }
        if self.is_builder() || self.is_redirect() || self.is_decode() || self.is_body() {
            return Decision::Stop;
        }
        Decision::from(self.is_timeout() || self.is_connect() || self.is_request())
    }
}

/// By status, honouring the server's `Retry-After` on a retried status.
///
/// ```
/// use retry_runtime::reqwest::StatusError;
/// use retry_runtime::{Decision, Transient};
/// use std::time::Duration;
///
/// let e = StatusError { status: http::StatusCode::SERVICE_UNAVAILABLE, retry_after: Some(Duration::from_secs(1)), body: String::new() };
/// assert_eq!(e.decision(), Decision::RetryAfter(Duration::from_secs(1)));
/// ```
impl Transient for StatusError {
    fn decision(&self) -> Decision {
        classify_status_with_hint(self.status, self.retry_after)
    }
}

/// The transport error's or the status error's decision.
///
/// ```
/// use retry_runtime::reqwest::{Error, StatusError};
/// use retry_runtime::{Decision, Transient};
/// let e = Error::Status(StatusError { status: http::StatusCode::NOT_FOUND, retry_after: None, body: String::new() });
/// assert_eq!(e.decision(), Decision::Stop);
/// ```
impl Transient for Error {
    fn decision(&self) -> Decision {
        match self {
            Error::Transport(e) => e.decision(),
            Error::Status(e) => e.decision(),
        }
    }
}
