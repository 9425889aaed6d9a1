//! Every walk down an error's source chain that reads what the transport said of a failed
//! call.
//!
//! The errors read: hyper's, hyper-util's and h2's, and the `io::Error` under them.
//!
//! An error is matched by its type where we can name it.
//!
//! `io::Error` always; hyper's with feature `reqwest`, which builds hyper anyway.
//!
//! Everything else is matched by its message, each named once below with the version it was
//! read from.
//!
//! h2 is in no build of ours: reqwest is built without HTTP/2.
//!
//! The tower face classifies errors of a hyper the user builds, not one of ours.

use std::error::Error as StdError;

#[cfg(feature = "reqwest")]
use crate::policy::transient::Transient;
#[cfg(feature = "reqwest")]
use crate::policy::Decision;

/// One error of a source chain.
type Cause<'a> = &'a (dyn StdError + 'static);

/// hyper-util 0.1's legacy client, a connect that failed (`client::legacy::Error::is_connect`).
const CONNECT_FAILED: &str = "client error (Connect)";

/// hyper 1's `Error::is_incomplete_message`: the connection closed before the response.
#[cfg(any(feature = "tower", feature = "reqwest"))]
const INCOMPLETE_MESSAGE: &str = "connection closed before message completed";

/// h2 0.4: a stream the server reset with `REFUSED_STREAM` (RFC 9113 §8.7).
const REFUSED_STREAM: &str =
    "stream error received: refused stream before processing any application logic";

/// h2 0.4: a stream failed by a `GOAWAY` the server sent, whatever its reason.
///
/// The reason, and the debug data if any, follow.
const GOAWAY_RECEIVED: &str = "connection error received: ";

/// hyper-util 0.1's `HttpConnector` asked for a scheme other than `http` (no TLS compiled in).
#[cfg(feature = "reqwest")]
const SCHEME_NOT_HTTP: &str = "invalid URL, scheme is not http";

/// hyper 1's response head parse errors, as a client sees them.
///
/// Matched by message although hyper gives `Error::is_parse`: that also covers hyper's internal
/// error, which is retried.
#[cfg(feature = "reqwest")]
const HEAD_UNPARSEABLE: &[&str] = &[
    "invalid HTTP version parsed",
    "invalid HTTP version parsed (found HTTP2 preface)",
    "invalid HTTP header parsed",
    "invalid content-length parsed",
    "invalid transfer-encoding parsed",
    "unexpected transfer-encoding parsed",
    "message head is too large",
    "invalid HTTP status-code parsed",
];

/// `error` and its sources, in order.
fn chain<'a>(error: Cause<'a>) -> impl Iterator<Item = Cause<'a>> {
    core::iter::successors(Some(error), |&e| e.source())
}

/// Whether `error` itself is hyper's "connection closed before message completed".
#[cfg(any(feature = "tower", feature = "reqwest"))]
fn is_incomplete_message(error: Cause<'_>) -> bool {
    #[cfg(feature = "reqwest")]
    if let Some(hyper) = error.downcast_ref::<hyper::Error>() {
        return hyper.is_incomplete_message();
    }
    error.to_string() == INCOMPLETE_MESSAGE
}

/// Whether `error` itself (not its sources) is h2's error for an HTTP/2 stream the server did
/// not process.
///
/// RFC 9113 says such a stream may be retried whatever the request:
///
/// - a stream the server reset with `REFUSED_STREAM` (§8.7);
/// - a stream above the last stream id of a `GOAWAY` the server sent.
///   §6.8 calls it "not processed": the client may retry it on a new connection.
///   h2 fails each such stream, and one opened after the `GOAWAY` arrived, with the `GOAWAY`
///   itself, whatever its error code.
///
/// A stream at or below the last stream id is never failed with it: it runs on.
///
/// If the connection then closes, it fails as a reset or a broken pipe, which prove nothing.
fn is_unprocessed_stream(error: Cause<'_>) -> bool {
    says_unprocessed(&error.to_string())
}

/// Whether an error's message is an HTTP/2 stream's the server did not process.
fn says_unprocessed(message: &str) -> bool {
    message == REFUSED_STREAM || message.starts_with(GOAWAY_RECEIVED)
}

/// Whether a cause down `error`'s source chain, `error` included, proves its request was never
/// sent.
///
/// A refused connection, hyper-util's failed connect, or an HTTP/2 stream the server did not
/// process. See [`never_sent`](crate::http::never_sent).
pub(crate) fn never_sent(error: Cause<'_>) -> bool {
    chain(error).any(|e| {
        let refused = e
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused);
        refused || is_unprocessed_stream(e) || e.to_string() == CONNECT_FAILED
    })
}

/// hyper 1: a request still queued when its connection closed, handed back unsent
/// (`client::dispatch`'s `Envelope`).
///
/// Its error, and that error's cause.
#[cfg(feature = "tonic")]
const CANCELED_UNSENT: (&str, &str) = ("operation was canceled", "connection closed");

/// Where down `error`'s source chain its attempt is proved to have stopped, for gRPC's
/// transparent retries.
///
/// - Never written: hyper handed a queued request back as its connection closed.
/// - Refused by the server's transport: an HTTP/2 stream refused, or beyond a `GOAWAY`.
///
/// A refused connect proves it too, yet is not transparent.
///
/// A gRPC client fails a call on a channel that cannot connect with `UNAVAILABLE`.
///
/// Sending again at once would spin on the connect.
#[cfg(feature = "tonic")]
pub(crate) fn unseen(error: Cause<'_>) -> crate::policy::Transparent {
    use crate::policy::Transparent;
    for e in chain(error) {
        // Each link's message rendered once; its cause's only when it matched.
        let message = e.to_string();
        if says_unprocessed(&message) {
            return Transparent::NotSeenByServer;
        }
        if message == CANCELED_UNSENT.0
            && e.source().map(ToString::to_string).as_deref() == Some(CANCELED_UNSENT.1)
        {
            return Transparent::NotSentOnWire;
        }
    }
    Transparent::No
}

/// What the first cause down `error`'s chain that says something decides, for the tower face's
/// [`TransportErrors`](crate::tower::TransportErrors).
///
/// - The layer's timeout, a failed connect, a closed connection or an unprocessed stream:
///   retry.
/// - An `io::Error` (and with `tonic`, a `tonic::Status`): by its own table.
/// - Nothing at all: stop.
#[cfg(feature = "tower")]
pub(crate) fn decision(error: Cause<'_>) -> crate::Decision {
    use crate::policy::transient::Transient;
    use crate::Decision;
    for e in chain(error) {
        if e.is::<crate::TimedOut>() {
            return Decision::Retry;
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            return io.decision();
        }
        #[cfg(feature = "tonic")]
        if let Some(status) = e.downcast_ref::<tonic::Status>() {
            return status.decision();
        }
        if e.to_string() == CONNECT_FAILED || is_incomplete_message(e) || is_unprocessed_stream(e) {
            return Decision::Retry;
        }
    }
    Decision::Stop
}

/// The decision for a body error from its causes, `error` itself left out.
///
/// A connection cut or reset mid-body is an `io::Error` down the chain, decided by the io table.
///
/// hyper's closed connection is retried.
///
/// `None` when no cause says anything: a complete body that did not decode.
#[cfg(feature = "reqwest")]
pub(crate) fn body_cause(error: Cause<'_>) -> Option<Decision> {
    chain(error).skip(1).find_map(|e| {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            return Some(io.decision());
        }
        is_incomplete_message(e).then_some(Decision::Retry)
    })
}

/// Whether a cause down `error`'s chain, `error` itself left out, fails the same way however
/// often the call is made.
///
/// An `https://` URL on a connector without TLS, or a response head that does not parse.
#[cfg(feature = "reqwest")]
pub(crate) fn never_succeeds(error: Cause<'_>) -> bool {
    chain(error).skip(1).any(|e| {
        let message = e.to_string();
        message == SCHEME_NOT_HTTP || HEAD_UNPARSEABLE.contains(&message.as_str())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt;

    /// An error with a message, caused by another.
    #[derive(Debug)]
    struct Chain(&'static str, Option<Box<dyn StdError + 'static>>);

    impl fmt::Display for Chain {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl StdError for Chain {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            self.1.as_deref()
        }
    }

    /// hyper-util's error over hyper's over h2's `message`.
    fn through_hyper(message: &'static str) -> Chain {
        let h2 = Chain(message, None);
        let hyper = Chain("http2 error", Some(Box::new(h2)));
        Chain("client error (SendRequest)", Some(Box::new(hyper)))
    }

    #[test]
    fn a_stream_the_server_did_not_process_was_never_sent() {
        // h2 0.4's messages for a stream above a GOAWAY's last stream id (any error code, with
        // or without debug data).
        //
        // And for one refused with REFUSED_STREAM.
        for unprocessed in [
            "connection error received: not a result of an error",
            "connection error received: detected excessive load generating behavior (b\"shed\")",
            "connection error received: unexpected internal error encountered",
            "stream error received: refused stream before processing any application logic",
        ] {
            assert!(never_sent(&through_hyper(unprocessed)), "{unprocessed}");
        }
        // A stream at or below the last stream id fails as a broken pipe or a reset.
        //
        // A GOAWAY the client sent itself (h2 found the server at fault, or its user closed)
        // says nothing of what the server did.
        for maybe_applied in [
            "stream closed because of a broken pipe",
            "stream error received: unexpected internal error encountered",
            "connection error detected: unspecific protocol error detected",
            "connection error sent by user: not a result of an error",
            "connection closed before message completed",
        ] {
            assert!(
                !never_sent(&through_hyper(maybe_applied)),
                "{maybe_applied}"
            );
        }
    }

    #[test]
    fn a_refused_connection_or_a_failed_connect_was_never_sent() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert!(never_sent(&Chain("send", Some(Box::new(refused)))));
        assert!(never_sent(&Chain(CONNECT_FAILED, None)));
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert!(!never_sent(&Chain("send", Some(Box::new(reset)))));
    }

    #[cfg(feature = "reqwest")]
    #[test]
    fn a_body_error_is_decided_by_its_first_io_cause() {
        let chain = |inner| Chain("decode", Some(Box::new(Chain("body", Some(inner)))));
        let closed = Box::new(Chain(INCOMPLETE_MESSAGE, None));
        assert_eq!(body_cause(&chain(closed)), Some(Decision::Retry));
        assert_eq!(
            body_cause(&chain(Box::new(Chain("expected value", None)))),
            None
        );
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert_eq!(
            body_cause(&Chain("body", Some(Box::new(reset)))),
            Some(Decision::Retry)
        );
        let invalid = std::io::Error::from(std::io::ErrorKind::InvalidData);
        assert_eq!(
            body_cause(&Chain("body", Some(Box::new(invalid)))),
            Some(Decision::Stop)
        );
        // The error itself is not its own cause.
        assert_eq!(body_cause(&Chain(INCOMPLETE_MESSAGE, None)), None);
    }

    #[cfg(feature = "reqwest")]
    #[test]
    fn a_head_that_does_not_parse_or_a_scheme_without_tls_never_succeeds() {
        for message in HEAD_UNPARSEABLE.iter().copied().chain([SCHEME_NOT_HTTP]) {
            assert!(never_succeeds(&Chain(
                "send",
                Some(Box::new(Chain(message, None)))
            )));
            assert!(!never_succeeds(&Chain(message, None)), "{message}");
        }
        assert!(!never_succeeds(&Chain(
            "send",
            Some(Box::new(Chain("reset", None)))
        )));
    }
}
