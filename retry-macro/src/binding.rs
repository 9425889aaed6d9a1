//! One argument's rebinding for an attempt: made by rebind.rs (and receiver.rs, for `self`),
//! written where the attempt runs.

use proc_macro2::TokenStream;
use syn::{Attribute, Ident};

/// The rebinding of one argument.
pub(crate) struct Binding {
    /// The argument's `#[cfg]`s and lint attributes (`#[allow(..)]`…), which hold for each
    /// attempt's copy as for the argument.
    pub(crate) attrs: Vec<Attribute>,
    /// Its `#[expect(..)]`s, moved from the signature: the copy is what the body uses, or not.
    pub(crate) expects: Vec<Attribute>,
    /// The attempt's pattern (`x`, `mut x`, `(a, b)`).
    pub(crate) pat: TokenStream,
    /// The name the signature gives the argument.
    pub(crate) source: Ident,
    /// The attempt's own value, made from `source`.
    pub(crate) value: TokenStream,
}
