//! The `#[retry]` attribute of [retry-jitter](https://docs.rs/retry-jitter).
//!
//! Depend on `retry-jitter`, not on this crate: the attribute's expansion names the facade's
//! paths (`::retry_jitter::__private`), and the facade documents the attribute.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod args;
mod async_trait;
mod attempt;
mod duration;
mod expand;
mod item;
mod rebind;
mod receiver;
mod respan;
mod signature;
mod walk;

use proc_macro::TokenStream;

/// Turn a function returning `Result` into a retry loop with capped exponential backoff and
/// full jitter. See the `retry-jitter` crate for the keys and their meaning.
#[proc_macro_attribute]
pub fn retry(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::retry(args.into(), item.into()).into()
}
