//! The `#[retry]` attribute of [retry-jitter](https://docs.rs/retry-jitter).
//!
//! Depend on `retry-jitter`, not on this crate.
//!
//! The attribute's expansion names the facade's paths (`::retry_jitter::__private`), and the
//! facade documents the attribute.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The pipeline, in order:
//
// - args.rs reads the attribute;
// - item.rs reads the function (with async_trait.rs and signature.rs);
// - valid.rs makes every semantic check, so that what follows cannot fail;
// - rebind.rs and receiver.rs give each attempt its own arguments (binding.rs, one argument's);
// - loop_exits.rs and inline_attempt.rs rewrite the body;
// - expand/ writes the new body.
//
// Helpers: duration.rs (duration literals), respan.rs (spans), walk.rs (syntax tree walks).
mod args;
mod async_trait;
mod binding;
mod duration;
mod expand;
mod inline_attempt;
mod item;
mod loop_exits;
mod rebind;
mod receiver;
mod respan;
mod signature;
mod valid;
mod walk;

use proc_macro::TokenStream;

/// Turn a function returning `Result` into a retry loop with capped exponential backoff and
/// full jitter.
///
/// The keys, their values, defaults and meaning:
/// [`retry_jitter::retry`](https://docs.rs/retry-jitter/latest/retry_jitter/attr.retry.html#keys).
#[proc_macro_attribute]
pub fn retry(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::retry(args.into(), item.into()).into()
}
