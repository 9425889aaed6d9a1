//! `?` in an `async fn`'s attempt written inline (see the macro's `attempt.rs`).
//!
//! There `?` must end the attempt, not the function.
//!
//! So the macro writes out what rustc desugars `?` into.
//!
//! It `break`s to the attempt where rustc `return`s, and uses [`Branch`] for the unstable `Try`:
//!
//! ```text
//! match Branch::branch(operand) {
//!     ControlFlow::Continue(value) => value,
//!     ControlFlow::Break(error) => break 'attempt IsResult::from_err(From::from(error)),
//! }
//! ```
//!
//! As with rustc's `?`, the value's type may come from where it is used
//! (`let n: u32 = s.parse()?`), and the error is converted with `From`.

use core::ops::ControlFlow;
use core::task::Poll;

/// What `?` applies to: its value, or what it ends the attempt with.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "the `?` operator can only be used on a `Result` in a `#[retry]` function, not on `{Self}`",
    label = "cannot use the `?` operator on `{Self}`",
    note = "`#[retry]` retries on an error: give the `?` one, like `.ok_or(MyError)?` for an `Option`"
)]
pub trait Branch {
    /// The value `?` gives.
    type Output;
    /// The error that ends the attempt.
    type Residual;
    /// `Continue` with the value, or `Break` with what ends the attempt.
    fn branch(self) -> ControlFlow<Self::Residual, Self::Output>;
}

// Not recommended, each of them: a `?` on an `Option` is this trait's message alone.
//
// Not a list of these impls with the path of this file.
#[diagnostic::do_not_recommend]
impl<T, F> Branch for Result<T, F> {
    type Output = T;
    type Residual = F;
    #[inline]
    fn branch(self) -> ControlFlow<F, T> {
        match self {
            Ok(value) => ControlFlow::Continue(value),
            Err(error) => ControlFlow::Break(error),
        }
    }
}

#[diagnostic::do_not_recommend]
impl<T, F> Branch for Poll<Result<T, F>> {
    type Output = Poll<T>;
    type Residual = F;
    #[inline]
    fn branch(self) -> ControlFlow<F, Poll<T>> {
        match self {
            Poll::Ready(Ok(value)) => ControlFlow::Continue(Poll::Ready(value)),
            Poll::Ready(Err(error)) => ControlFlow::Break(error),
            Poll::Pending => ControlFlow::Continue(Poll::Pending),
        }
    }
}

#[diagnostic::do_not_recommend]
impl<T, F> Branch for Poll<Option<Result<T, F>>> {
    type Output = Poll<Option<T>>;
    type Residual = F;
    #[inline]
    fn branch(self) -> ControlFlow<F, Poll<Option<T>>> {
        match self {
            Poll::Ready(Some(Ok(value))) => ControlFlow::Continue(Poll::Ready(Some(value))),
            Poll::Ready(Some(Err(error))) => ControlFlow::Break(error),
            Poll::Ready(None) => ControlFlow::Continue(Poll::Ready(None)),
            Poll::Pending => ControlFlow::Continue(Poll::Pending),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_gives_its_value_or_its_error() {
        assert_eq!(Ok::<u32, u8>(7).branch(), ControlFlow::Continue(7));
        assert_eq!(Err::<u32, u8>(3).branch(), ControlFlow::Break(3));
    }

    #[test]
    fn a_poll_of_a_result_is_pending_ready_or_its_error() {
        let ready: Poll<Result<u32, u8>> = Poll::Ready(Ok(7));
        assert_eq!(ready.branch(), ControlFlow::Continue(Poll::Ready(7)));
        let failed: Poll<Result<u32, u8>> = Poll::Ready(Err(3));
        assert_eq!(failed.branch(), ControlFlow::Break(3));
        let pending: Poll<Result<u32, u8>> = Poll::Pending;
        assert_eq!(pending.branch(), ControlFlow::Continue(Poll::Pending));
    }

    #[test]
    fn a_poll_of_an_optional_result_keeps_its_end_and_pending() {
        let item: Poll<Option<Result<u32, u8>>> = Poll::Ready(Some(Ok(7)));
        assert_eq!(item.branch(), ControlFlow::Continue(Poll::Ready(Some(7))));
        let failed: Poll<Option<Result<u32, u8>>> = Poll::Ready(Some(Err(3)));
        assert_eq!(failed.branch(), ControlFlow::Break(3));
        let end: Poll<Option<Result<u32, u8>>> = Poll::Ready(None);
        assert_eq!(end.branch(), ControlFlow::Continue(Poll::Ready(None)));
        let pending: Poll<Option<Result<u32, u8>>> = Poll::Pending;
        assert_eq!(pending.branch(), ControlFlow::Continue(Poll::Pending));
    }
}
