//! The bodies.
//!
//! - How a [`RetryService`](super::RetryService) sends a request's body again
//!   ([`ReplayBody`]).
//! - A body is cloned, or recorded within a limit as an attempt sends it and sent again by the
//!   next.
//! - The body of a [`ChainLayer`](super::ChainLayer)'s responses.

use core::future::Future;

use bytes::Bytes;
use http_body::Body;

pub use super::chain::ChainBody;
pub use record::Replayer;

/// How [`RetryLayer::new`](super::RetryLayer::new)'s mode keeps a body: as its type's
/// [`ReplayBody`] impl says.
///
/// ```
/// use retry_jitter::tower::HttpRequests;
/// use retry_jitter::tower::body::ByBodyType;
/// let _: HttpRequests<ByBodyType> = HttpRequests::default();
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ByBodyType;

mod record;

/// A request body type [`RetryLayer::new`](super::RetryLayer::new) can send again.
///
/// The body type says how a call keeps it for its next attempts ([`Kept`](ReplayBody::Kept)):
///
/// - [`Cloned`]: a `Clone` body is cloned for each attempt, nothing recorded.
///   - http-body-util's `Full<Bytes>` (its `Bytes` shared, not copied) and `Empty<Bytes>`.
///   - `String`, copied once when kept and once per retry.
/// - [`Replayer`]: any other body is recorded as the first attempt sends it.
///   - It is replayed wrapped in the body type again ([`WrapBody`]).
///   - http-body-util's `BoxBody` and `UnsyncBoxBody`.
///   - With feature `tonic`, `tonic::body::Body` (a `Channel`'s).
///
/// A `Clone` body of another type is cloned the same way through
/// [`clone_bodies`](super::RetryLayer::clone_bodies), with no impl of this trait.
///
/// Either way, a body whose size hint is over the layer's
/// [`with_body_limit`](super::RetryLayer::with_body_limit) bytes is sent once.
///
/// A recorded body that turns out larger as it is sent is not replayed.
///
/// A cloned body of no known size is cloned whole: cloning buffers nothing.
///
/// The three above know their sizes.
///
/// ```
/// use bytes::Bytes;
/// use http_body_util::combinators::BoxBody;
/// use http_body_util::Full;
/// use retry_jitter::tower::body::{Cloned, ReplayBody, Replayer};
///
/// fn kept_by<B: ReplayBody<Kept = K>, K>() {}
/// kept_by::<Full<Bytes>, Cloned>();
/// kept_by::<String, Cloned>();
/// kept_by::<BoxBody<Bytes, std::io::Error>, Replayer<BoxBody<Bytes, std::io::Error>>>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`RetryLayer` cannot send a request body of type `{Self}` again",
    label = "a request with this body cannot be retried",
    note = "if `{Self}` is `Clone`, clone it for each attempt: `RetryLayer::new(policy).clone_bodies()` keeps the status table, the method rule, `Idempotency-Key` and the hop headers",
    note = "otherwise send `Full<Bytes>`, `Empty<Bytes>` or `String`, or box the body (`BodyExt::boxed`, `BodyExt::boxed_unsync`), or implement `retry_jitter::tower::body::ReplayBody` for `{Self}`"
)]
pub trait ReplayBody: Body<Data = Bytes> + Send + Sized + 'static {
    /// How a call keeps this body for its next attempts: [`Cloned`] or [`Replayer<Self>`].
    type Kept: KeepBody<Self>;
}

/// How a call keeps a request body of type `B` for its next attempts, and makes each next
/// attempt's body from it.
///
/// [`Cloned`] or [`Replayer`], the way a [`ReplayBody`] names.
///
/// ```
/// use bytes::Bytes;
/// use http_body_util::Full;
/// use retry_jitter::tower::body::{Cloned, KeepBody};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let mut req = http::Request::post("/orders")
///     .body(Full::new(Bytes::from("one order")))
///     .unwrap();
/// let (cloned, kept) = Cloned::keep(&mut req, 64).expect("within the limit");
/// assert!(KeepBody::<Full<Bytes>>::replayable(&cloned)); // a cloned body always is
/// let (head, body) = kept.into_parts();
/// assert_eq!(head.method, http::Method::POST);
/// let _again: Full<Bytes> = cloned.replay(body).await;
/// // Over the limit: sent once, nothing kept.
/// assert!(Cloned::keep(&mut req, 4).is_none());
/// # }
/// ```
#[doc(hidden)]
pub trait KeepBody<B>: Send + Sync + Sized + 'static {
    /// What each next attempt's body is made from, cloned for it.
    ///
    /// Nothing for the recorder (the bytes are in the recorder); the body itself for [`Cloned`].
    type Owned: Clone + Send + 'static;

    /// What is kept of the first attempt's request `req` for the next ones.
    ///
    /// This, and the request's head with what their bodies are made from.
    ///
    /// `None` when the body cannot be sent again: it is known to be over `limit` bytes, and is
    /// sent once.
    ///
    /// Done in place: the recorder puts its recording body in `req`; [`Cloned`] clones `req`
    /// whole.
    fn keep(req: &mut http::Request<B>, limit: usize)
        -> Option<(Self, http::Request<Self::Owned>)>;

    /// Whether a next attempt's body can be made, as far as the body kept for the call says.
    ///
    /// Asked when the attempt that ended did not say it for its own body.
    fn replayable(&self) -> bool;

    /// The next attempt's body, once it can be made.
    ///
    /// A hedge may start while the first attempt still sends the body.
    fn replay(&self, owned: Self::Owned) -> impl Future<Output = B> + Send + '_;

    /// [`replay`](KeepBody::replay), and which of the kept body's attempts it is.
    ///
    /// The first attempt's is `0`; [`judge`](KeepBody::judge) is asked of this number.
    #[doc(hidden)]
    fn replay_attempt(&self, owned: Self::Owned) -> impl Future<Output = (B, u32)> + Send + '_ {
        async move { (self.replay(owned).await, 0) }
    }

    /// Once attempt `sent`'s call ended, whether its request can be sent again.
    ///
    /// `failed`: it ended with an error, no answer.
    ///
    /// Decided from what became of that attempt's body alone.
    ///
    /// `None` when nothing is kept per attempt: then [`replayable`](KeepBody::replayable)
    /// decides.
    #[doc(hidden)]
    fn judge(&self, sent: u32, failed: bool) -> impl Future<Output = Option<bool>> + Send + '_ {
        let _ = (sent, failed);
        core::future::ready(None)
    }

    /// Attempt `sent` ended without a verdict: cut by its timeout.
    ///
    /// The rest of the body it gives back, if any, may be sent by the next attempt.
    #[doc(hidden)]
    fn release(&self, sent: u32) {
        let _ = sent;
    }
}

/// How a `Clone` body is kept: the body itself, cloned for each attempt.
///
/// No recorder. A `Full<Bytes>`'s clone shares its bytes (`Bytes` is reference-counted).
///
/// ```
/// use bytes::Bytes;
/// use http_body_util::{Empty, Full};
/// use retry_jitter::tower::body::{Cloned, ReplayBody};
///
/// fn cloned<B: ReplayBody<Kept = Cloned>>() {}
/// cloned::<Full<Bytes>>();
/// cloned::<Empty<Bytes>>();
/// cloned::<String>();
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Cloned;

impl<B: Body<Data = Bytes> + Clone + Send + 'static> KeepBody<B> for Cloned {
    type Owned = B;

    /// The request cloned whole, as tower's own `Retry` policies do.
    #[inline]
    fn keep(req: &mut http::Request<B>, limit: usize) -> Option<(Cloned, http::Request<B>)> {
        if known_over(req.body(), limit) {
            return None;
        }
        Some((Cloned, req.clone()))
    }

    fn replayable(&self) -> bool {
        true
    }

    fn replay(&self, body: B) -> impl Future<Output = B> + Send + '_ {
        core::future::ready(body)
    }
}

impl ReplayBody for http_body_util::Full<Bytes> {
    type Kept = Cloned;
}

impl ReplayBody for http_body_util::Empty<Bytes> {
    type Kept = Cloned;
}

impl ReplayBody for String {
    type Kept = Cloned;
}

/// A body type that can hold any body of its error type: a boxed body.
///
/// A [`Replayer`] wraps its replay in it: the inner service takes the same `http::Request<B>`
/// it always did.
///
/// Implemented for http-body-util's boxed bodies and, with feature `tonic`,
/// `tonic::body::Body`.
///
/// ```
/// use bytes::Bytes;
/// use http_body_util::{combinators::UnsyncBoxBody, BodyExt, Full};
/// use retry_jitter::tower::body::WrapBody;
///
/// // The layer calls this with its replaying body; any body of the same error type works.
/// let body = Full::new(Bytes::from("x")).map_err(|never| match never {});
/// let _: UnsyncBoxBody<Bytes, std::io::Error> = WrapBody::from_replay(body);
/// ```
pub trait WrapBody: Body<Data = Bytes> + Send + Sized + 'static {
    /// `replay`, as a `Self`.
    fn from_replay<R>(replay: R) -> Self
    where
        R: Body<Data = Bytes, Error = Self::Error> + Send + Sync + 'static;
}

impl<E: 'static> WrapBody for http_body_util::combinators::UnsyncBoxBody<Bytes, E>
where
    Self: Send,
{
    fn from_replay<R>(replay: R) -> Self
    where
        R: Body<Data = Bytes, Error = E> + Send + Sync + 'static,
    {
        Self::new(replay)
    }
}

impl<E: Send + 'static> ReplayBody for http_body_util::combinators::UnsyncBoxBody<Bytes, E>
where
    Self: Send,
{
    type Kept = Replayer<Self>;
}

impl<E: 'static> WrapBody for http_body_util::combinators::BoxBody<Bytes, E>
where
    Self: Send,
{
    fn from_replay<R>(replay: R) -> Self
    where
        R: Body<Data = Bytes, Error = E> + Send + Sync + 'static,
    {
        Self::new(replay)
    }
}

impl<E: Send + 'static> ReplayBody for http_body_util::combinators::BoxBody<Bytes, E>
where
    Self: Send,
{
    type Kept = Replayer<Self>;
}

#[cfg(feature = "tonic")]
impl WrapBody for tonic::body::Body {
    fn from_replay<R>(replay: R) -> Self
    where
        R: Body<Data = Bytes, Error = tonic::Status> + Send + Sync + 'static,
    {
        tonic::body::Body::new(replay)
    }
}

#[cfg(feature = "tonic")]
impl ReplayBody for tonic::body::Body {
    type Kept = Replayer<Self>;
}

/// Whether `body` is known, before it is sent, to be over `limit` bytes.
///
/// Such a body is sent once, as it is, whatever keeps bodies.
pub(super) fn known_over(body: &impl Body, limit: usize) -> bool {
    body.size_hint().lower() > limit as u64
}
