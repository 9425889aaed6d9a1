//! How a trace shows a function's outcome, whichever the types allow.
//!
//! Its error with `Display` or `Debug`; an `Ok` value that `on_ok` retried with `Debug`; or
//! nothing.

use core::fmt::{Debug, Display};
use core::marker::PhantomData;

use crate::run::hooks::Rendered;

pub use crate::run::hooks::{tracer, Level};

/// How the trace shows the error of an outcome `R`.
pub type RenderFn<R> = for<'e> fn(&'e R) -> Rendered<'e>;

/// Autoref specialisation on the function's return type `R`.
///
/// `(&&&ShownOutcome::<R>::new()).render_fn()` shows the error with `Display` if its type has
/// it, else `Debug`, else not at all.
///
/// Decided where the type is known, with no bound, and with no projection of `R`.
///
/// If `R` is not a `Result`, the fallback applies: nothing here adds to the one error about it.
pub struct ShownOutcome<R>(PhantomData<fn(&R)>);

impl<R> ShownOutcome<R> {
    /// The chooser.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        ShownOutcome(PhantomData)
    }
}

/// The `Display` arm.
pub trait ShowDisplay<R> {
    /// The renderer.
    fn render_fn(&self) -> RenderFn<R>;
}
impl<T, E: Display> ShowDisplay<Result<T, E>> for &&ShownOutcome<Result<T, E>> {
    fn render_fn(&self) -> RenderFn<Result<T, E>> {
        |r| {
            r.as_ref()
                .err()
                .map_or(Rendered::Nothing, |e| Rendered::Display(e))
        }
    }
}

/// The `Debug` arm.
pub trait ShowDebug<R> {
    /// The renderer.
    fn render_fn(&self) -> RenderFn<R>;
}
impl<T, E: Debug> ShowDebug<Result<T, E>> for &ShownOutcome<Result<T, E>> {
    fn render_fn(&self) -> RenderFn<Result<T, E>> {
        |r| {
            r.as_ref()
                .err()
                .map_or(Rendered::Nothing, |e| Rendered::Debug(e))
        }
    }
}

/// Autoref specialisation on `R`'s `Ok` type, as [`ShownOutcome`] on its error.
///
/// `(&&ShownValue::<R>::new()).value_fn()` shows an `Ok` value (that `on_ok` retried) with
/// `Debug` if its type has it, else not at all.
pub struct ShownValue<R>(PhantomData<fn(&R)>);

impl<R> ShownValue<R> {
    /// The chooser.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        ShownValue(PhantomData)
    }
}

/// The `Debug` arm for values.
pub trait ShowValueDebug<R> {
    /// The renderer.
    fn value_fn(&self) -> RenderFn<R>;
}
impl<T: Debug, E> ShowValueDebug<Result<T, E>> for &ShownValue<Result<T, E>> {
    fn value_fn(&self) -> RenderFn<Result<T, E>> {
        |r| {
            r.as_ref()
                .ok()
                .map_or(Rendered::Nothing, |v| Rendered::Value(v))
        }
    }
}

/// The fallback for values: not shown.
pub trait ShowValueNothing<R> {
    /// The renderer.
    fn value_fn(&self) -> RenderFn<R>;
}
impl<R> ShowValueNothing<R> for ShownValue<R> {
    fn value_fn(&self) -> RenderFn<R> {
        |_| Rendered::Nothing
    }
}

/// The fallback: not shown.
pub trait ShowNothing<R> {
    /// The renderer.
    fn render_fn(&self) -> RenderFn<R>;
}
impl<R> ShowNothing<R> for ShownOutcome<R> {
    fn render_fn(&self) -> RenderFn<R> {
        |_| Rendered::Nothing
    }
}
