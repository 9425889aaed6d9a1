//! The per-attempt copies of by-value arguments and of a by-value `self`.
//!
//! Cloned, or re-borrowed where `Self` is a `&mut`, with the message on the user's token when
//! neither can be.

use core::marker::PhantomData;

/// The by-value arguments of a retried function are cloned for each attempt.
///
/// `#[retry]` calls `CloneArg::clone_arg(&x)`, the trait's own method, not a function bounded
/// by it.
///
/// A type that is not `Clone` is then this message alone.
///
/// No "required by a bound in", and no path of this crate's files, follows it.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`#[retry]` calls the body once per attempt, so the by-value argument type `{Self}` must be `Clone`",
    label = "this argument is cloned for each attempt",
    note = "take it by reference (`&{Self}`), or implement or derive `Clone` for it (a generic type such as `Vec<T>` or `Option<T>` is `Clone` when its parameters are: bound them with `Clone`, or derive `Clone` on them); a type that is not yours to change (an extractor, like axum's `Path`) can stay in a function that calls a retried one with what the body needs from it"
)]
pub trait CloneArg {
    /// A fresh copy for the next attempt.
    fn clone_arg(&self) -> Self;
}

// Not recommended, as `CloneSelf`'s.
//
// A `Vec<B>` or `Option<NotClone>` that is not `Clone` for its inner type is then reported as
// this trait's message on the argument, not as `B: Clone`.
#[diagnostic::do_not_recommend]
impl<T: Clone> CloneArg for T {
    #[inline]
    fn clone_arg(&self) -> Self {
        self.clone()
    }
}

/// A receiver taken by value (`self`, `self: Arc<Self>`…) is cloned for each attempt.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`#[retry]` calls the body once per attempt, so `self` taken by value as `{Self}` must be `Clone`",
    label = "`self` is cloned for each attempt",
    note = "take `&self` or `&mut self`, or make `Self` `Clone`; where the body needs a handle it can own (to spawn a task), take `self: &Arc<Self>` and clone the `Arc`, or `self: Arc<Self>`"
)]
pub trait CloneSelf {
    /// A fresh copy for the next attempt.
    fn clone_self(&self) -> Self;
}

// Not recommended: a `Box<Self>` that is not `Clone` is then reported as this trait's message.
//
// Not as `Box<Self>: Clone`, which says nothing of retrying.
#[diagnostic::do_not_recommend]
impl<T: Clone> CloneSelf for T {
    #[inline]
    fn clone_self(&self) -> Self {
        self.clone()
    }
}

/// How an attempt gets its own `self` taken by value as `Self`.
///
/// Re-borrowed where `Self` is a `&mut T`: never `Clone` (serde's
/// `impl Serializer for &mut Serializer<W>`).
///
/// Else cloned.
///
/// Chosen by autoref specialisation, `(&&SelfKind::<Self>::new()).kind()`, with
/// [`ReborrowKind`] and [`CloneKind`] in scope.
///
/// Where `Self` is known to be a `&mut`, the first applies; anywhere else (a type parameter
/// too), the second.
pub struct SelfKind<T: ?Sized>(PhantomData<fn(&T)>);

impl<T: ?Sized> SelfKind<T> {
    /// The chooser.
    #[allow(clippy::new_without_default)]
    #[inline]
    pub const fn new() -> Self {
        SelfKind(PhantomData)
    }
}

/// `self` is a `&mut`: each attempt re-borrows it.
pub struct ByReborrow;
/// `self` is cloned for each attempt.
pub struct ByClone;

/// [`SelfKind`]'s arm for a `&mut T`.
pub trait ReborrowKind {
    /// [`ByReborrow`].
    fn kind(&self) -> ByReborrow;
}

impl<T: ?Sized> ReborrowKind for &SelfKind<&mut T> {
    #[inline]
    fn kind(&self) -> ByReborrow {
        ByReborrow
    }
}

/// [`SelfKind`]'s arm for any other type.
pub trait CloneKind {
    /// [`ByClone`].
    fn kind(&self) -> ByClone;
}

impl<T: ?Sized> CloneKind for SelfKind<T> {
    #[inline]
    fn kind(&self) -> ByClone {
        ByClone
    }
}

/// An attempt's own `self` of type `T`, made the way the kind says.
///
/// On the kind, not on `T`: no list of the other kinds' impls follows the message.
///
/// The expansion calls the trait's own method, `OwnSelf::own_self(kind, &mut self)`.
///
/// The impls are not recommended: a `T` that is not `Clone` is this message alone.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`#[retry]` calls the body once per attempt, so `self` taken by value as `{T}` must be `Clone`",
    label = "`self` is cloned for each attempt",
    note = "take `&self` or `&mut self`, or make `Self` `Clone`; where the body needs a handle it can own (to spawn a task), take `self: &Arc<Self>` and clone the `Arc`, or `self: Arc<Self>`"
)]
pub trait OwnSelf<'s, T> {
    /// A clone of `self`, or a re-borrow of it for `'s`.
    type Own;
    /// The attempt's `self`.
    fn own_self(self, receiver: &'s mut T) -> Self::Own;
}

#[diagnostic::do_not_recommend]
impl<'s, T: CloneSelf> OwnSelf<'s, T> for ByClone {
    type Own = T;
    #[inline]
    fn own_self(self, receiver: &'s mut T) -> T {
        receiver.clone_self()
    }
}

// Not recommended, either: a `Self` that is not `Clone` is then not followed by this impl.
#[diagnostic::do_not_recommend]
impl<'s, T: ?Sized + 's> OwnSelf<'s, &mut T> for ByReborrow {
    type Own = &'s mut T;
    #[inline]
    fn own_self(self, receiver: &'s mut &mut T) -> &'s mut T {
        receiver
    }
}

/// A by-value `self` that is a `&mut` cannot be returned, or a borrow of it.
///
/// Each attempt re-borrows it for itself.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`#[retry]` cannot return a borrow of `self`: `Self` is a `&mut`, which each attempt re-borrows for itself, and the borrow checker cannot see that the attempt which returns is the last",
    label = "this may hold a borrow of `self`",
    note = "return an owned value, or retry a function that does not return the borrow and call it from this one"
)]
pub trait Unborrowed: Sized {
    /// The kind of a by-value `self` where the return type may hold a borrow of it.
    ///
    /// It may when it names `Self` or a lifetime of the `impl`'s.
    ///
    /// A kind that would re-borrow is refused, at `kind`, which the expansion spans at the
    /// return type.
    ///
    /// The kind then goes to [`OwnSelf::own_self`], whose call is spanned at `self`.
    ///
    /// So a `Self` that is not `Clone` is one error, there.
    #[inline]
    fn unborrowed(self) -> Self {
        self
    }
}

// Not recommended: the message is then not followed by this impl and its file.
#[diagnostic::do_not_recommend]
impl Unborrowed for ByClone {}
