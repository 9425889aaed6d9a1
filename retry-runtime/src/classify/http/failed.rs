//! What a hook of an HTTP face is told failed: an error, or a response retried for its status.

use http::StatusCode;

/// What failed in an attempt of [`RetryLayer`](crate::tower::RetryLayer) or
/// [`RetryMiddleware`](crate::reqwest_middleware::RetryMiddleware), as their `notify` and
/// `give_up` hooks are told.
///
/// The face's error, or a response retried for its status: a `503`, a `429`, the server's
/// `x-should-retry`.
///
/// A response a user's `on_ok` retries (polling) is an answer, not a failure.
///
/// Those hooks are not told of it.
///
/// ```
/// use retry_jitter::http::Failed;
/// use http::StatusCode;
///
/// fn describe(failed: &Failed<'_, std::io::Error>) -> String {
///     match failed {
///         Failed::Error(e) => format!("error: {e}"),
///         Failed::Status(status) => format!("answered {status}"),
///         _ => "something else".to_owned(),
///     }
/// }
/// assert_eq!(describe(&Failed::Status(StatusCode::SERVICE_UNAVAILABLE)), "answered 503 Service Unavailable");
/// ```
#[non_exhaustive]
#[derive(Debug)]
pub enum Failed<'a, E> {
    /// The face's error (tower: [`BoxError`](crate::tower::BoxError);
    /// reqwest-middleware: `reqwest_middleware::Error`).
    Error(&'a E),
    /// A response retried for its status, or for what the server said of it.
    Status(StatusCode),
}

impl<E> Clone for Failed<'_, E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E> Copy for Failed<'_, E> {}

impl<E: core::fmt::Display> core::fmt::Display for Failed<'_, E> {
    /// The error's `Display`, or the status: what the faces' events say of a failure.
    ///
    /// ```
    /// use retry_jitter::http::Failed;
    /// assert_eq!(Failed::<String>::Status(http::StatusCode::TOO_MANY_REQUESTS).to_string(), "status 429 Too Many Requests");
    /// ```
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Failed::Error(e) => e.fmt(f),
            Failed::Status(status) => write!(f, "status {status}"),
        }
    }
}
