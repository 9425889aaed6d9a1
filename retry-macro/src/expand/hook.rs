//! The hook keys' values (`on`, `on_ok`, `notify`, `give_up`, `stats`, sync or awaited),
//! checked by a generic `fn` of the expansion's own, named after the key.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::Ident;

use super::context::Context;
use crate::respan::respan;

/// How a hook key's value is checked: the bounds of the `fn` named after the key.
#[derive(Clone, Copy)]
pub(super) enum Check {
    On,
    OnOk,
    Notify,
    NotifyValue,
    GiveUp,
    GiveUpValue,
    Stats,
    StatsValue,
    /// An async closure an `async fn` awaits, kept as `Awaited`.
    AwaitNotify,
    AwaitGiveUp,
    AwaitStats,
}

impl Check {
    /// The checking `fn`, generic over the return type `R`, and the generic arguments it is
    /// called with.
    ///
    /// Those are the key's name, its generics and bounds, and the hook's.
    fn signature(self, p: &TokenStream) -> (&'static str, TokenStream, TokenStream) {
        match self {
            Check::On => (
                "on",
                quote!(<R: #p::IsResult, D: #p::OnReturns, F: ::core::ops::Fn(&R::Err) -> D>),
                quote!(#p::OnKey),
            ),
            Check::OnOk => (
                "on_ok",
                quote!(<R: #p::IsResult, D: #p::OnOkReturns, F: ::core::ops::Fn(&R::Ok) -> D>),
                quote!(#p::OnOkKey),
            ),
            Check::Notify => (
                "notify",
                quote!(<R: #p::IsResult, F: ::core::ops::Fn(&R::Err, &#p::RetryEvent)>),
                quote!(#p::NotifyKey),
            ),
            Check::NotifyValue => (
                "notify",
                quote!(<R: #p::IsResult, F: #p::Notify<R::Err>>),
                quote!(#p::NotifyKey),
            ),
            Check::GiveUp => (
                "give_up",
                quote!(<R: #p::IsResult, F: ::core::ops::Fn(&R::Err, &#p::GiveUp)>),
                quote!(#p::GiveUpKey),
            ),
            Check::Stats => (
                "stats",
                quote!(<R: #p::IsResult, F: ::core::ops::Fn(&#p::RetryStats)>),
                quote!(#p::StatsKey),
            ),
            // A path's sync part (a stand-in where it is awaited), as `notify`'s.
            Check::GiveUpValue => (
                "give_up",
                quote!(<R: #p::IsResult, F: #p::GiveUpHook<R::Err>>),
                quote!(#p::GiveUpKey),
            ),
            Check::StatsValue => (
                "stats",
                quote!(<R: #p::IsResult, F: #p::StatsHook>),
                quote!(#p::StatsKey),
            ),
            Check::AwaitNotify => (
                "notify",
                quote!(<R: #p::IsResult, F: ::core::ops::AsyncFn(&R::Err, &#p::RetryEvent)>),
                quote!(#p::AwaitNotifyKey),
            ),
            Check::AwaitGiveUp => (
                "give_up",
                quote!(<R: #p::IsResult, F: ::core::ops::AsyncFn(&R::Err, &#p::GiveUp)>),
                quote!(#p::AwaitGiveUpKey),
            ),
            Check::AwaitStats => (
                "stats",
                quote!(<R: #p::IsResult, F: ::core::ops::AsyncFn(&#p::RetryStats)>),
                quote!(#p::AwaitStatsKey),
            ),
        }
    }
}

/// `on`, `notify`, `on_ok` and `give_up` get their closure signatures from the return type.
///
/// That is done through a generic `fn` of the expansion's own, named after the key and spanned
/// at its value.
///
/// A closure gets its signature before it is first called.
///
/// A mismatch is reported there, "required by a bound in `on`", with no runtime function after
/// it.
///
/// The `fn` is an item of a block that only names it; the value is outside that block.
///
/// So a user's own `fn on` stays theirs.
///
/// `.keep()` hands the hook on, or a stand-in for a wrong one, which nothing reports again (see
/// `Hook`).
pub(super) fn hook(
    cx: &Context,
    value: &Option<syn::Expr>,
    check: Check,
    none: TokenStream,
) -> TokenStream {
    match value {
        Some(value) => {
            let span = value.span();
            let (p_at, ret_at) = (respan(&cx.p, span), respan(&cx.ret.to_token_stream(), span));
            let (name, generics, key) = check.signature(&p_at);
            let (generics, key) = (respan(&generics, span), respan(&key, span));
            let name = Ident::new(name, span);
            let args = match check {
                Check::On | Check::OnOk => quote_spanned!(span=> #ret_at, _, _),
                _ => quote_spanned!(span=> #ret_at, _),
            };
            quote_spanned! {span=> {
                #[allow(unused_imports)]
                use #p_at::{Keep as _, KeepUnchecked as _};
                ({
                    #[inline]
                    fn #name #generics(hook: F) -> #p_at::Hook<R, F, #key> {
                        #p_at::Hook::new(hook)
                    }
                    #name::<#args>
                })(#value)
                .keep()
            }}
        }
        None => none,
    }
}
