//! A request body type of a user's own: `Clone`, one chunk, and no `ReplayBody` impl, so
//! `RetryLayer` retries it only through `.clone_bodies()`.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

/// One chunk of bytes, sent once per copy.
#[derive(Clone, Debug)]
pub struct MyBody(Option<Bytes>);

impl MyBody {
    pub fn new(text: &'static str) -> Self {
        MyBody(Some(Bytes::from_static(text.as_bytes())))
    }
}

impl Body for MyBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.take().map(|chunk| Ok(Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.0.as_ref().map_or(0, |c| c.len() as u64))
    }
}
