//! The hooks an `async fn` awaits: `notify`, `give_up` and `stats` given an async closure.
//!
//! Or given a path, sorted by its type (`__private::Probe`) into the sync hook the loop calls
//! and the one the function awaits.
//!
//! The function awaits them after the step (`notify`), or after the loop (`give_up`, `stats`).

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::Ident;

use super::context::{local, Calling, Context};
use super::hook::{hook, Check};
use crate::respan::respan;

/// The local a key's value sorted by its type leaves for the loop.
///
/// The sync hook, or a stand-in where the value is awaited.
pub(super) fn sync_part(key: &str, value: &Option<syn::Expr>) -> Option<syn::Expr> {
    let at = value.as_ref().map_or_else(Span::call_site, Spanned::span);
    let local = local(&format!("__retry_{key}_sync"), at);
    Some(syn::parse_quote!(#local))
}

/// The local of a key's awaited hook.
pub(super) fn async_part(key: &str) -> Ident {
    local(&format!("__retry_{key}_async"), Span::call_site())
}

/// What an awaited hook's `AsyncFn` takes.
#[derive(Clone, Copy)]
pub(super) enum AsyncCheck {
    Notify,
    GiveUp,
    Stats,
}

/// A hook key's value the function may await, bound before the hooks.
///
/// An async closure is the awaited hook, given its signature by a generic `fn` named after the
/// key (as a sync one's).
///
/// A path is sorted by its type into the sync hook the loop calls and the awaited one; one of
/// them is a stand-in.
///
/// A sync value, nothing.
pub(super) fn awaited(
    cx: &Context,
    calling: Calling,
    value: &Option<syn::Expr>,
    key: &str,
    check: AsyncCheck,
) -> TokenStream {
    let Some(value) = value else {
        return TokenStream::new();
    };
    let span = value.span();
    let (p_at, ret_at) = (respan(&cx.p, span), respan(&cx.ret.to_token_stream(), span));
    let sync_l = local(&format!("__retry_{key}_sync"), span);
    let async_l = async_part(key);
    let key_type = match check {
        AsyncCheck::Notify => quote!(#p_at::NotifyKey),
        AsyncCheck::GiveUp => quote!(#p_at::GiveUpKey),
        AsyncCheck::Stats => quote!(#p_at::StatsKey),
    };
    match calling {
        Calling::Sync => TokenStream::new(),
        Calling::Async => {
            // Checked as a sync hook is (`keys::hook`).
            //
            // A wrong one is this one error, and a stand-in that nothing reports again.
            let check = match check {
                AsyncCheck::Notify => Check::AwaitNotify,
                AsyncCheck::GiveUp => Check::AwaitGiveUp,
                AsyncCheck::Stats => Check::AwaitStats,
            };
            let hook = hook(cx, &Some(value.clone()), check, TokenStream::new());
            quote_spanned!(span=> let #async_l = #hook;)
        }
        Calling::Either => quote_spanned! {span=>
            let (#sync_l, #async_l) = {
                #[allow(unused_imports)]
                use #p_at::{AsyncArm as _, SyncArm as _};
                let hook = #value;
                (&&#p_at::Probe::<#ret_at, _, #key_type>::of(&hook)).kind().split(hook)
            };
        },
    }
}

/// Before a retry's wait, an awaited `notify` hook, with the last error and the retry's event.
///
/// That is what a sync one is told. Nothing without one.
pub(super) fn awaited_notify(cx: &Context) -> TokenStream {
    if !cx.notify.awaits() {
        return TokenStream::new();
    }
    let Context {
        p,
        last_l,
        stats_l,
        clock,
        ..
    } = cx;
    let (error_l, event_l, outcome_l) = (
        local("__retry_error", cx.ret_span),
        local("__retry_event", cx.ret_span),
        local("__retry_outcome", cx.ret_span),
    );
    let hook = async_part("notify");
    quote_spanned! {cx.ret_span=>
        if let (::core::option::Option::Some(#error_l), ::core::option::Option::Some(#event_l)) = (
            #last_l.as_ref().and_then(|#outcome_l| #p::IsResult::as_err(#outcome_l)),
            #stats_l.event(),
        ) {
            #hook.call_notify(#error_l, &#event_l).await;
        }
        // The wait starts after the hook: its time is not waited.
        #stats_l.wait_starts(#clock);
    }
}

/// The loop of an `async fn` (`run`, whose `return`s end it), then its awaited hooks.
///
/// `give_up`, with the last error should retrying have ended with one, and `stats`.
///
/// The loop alone without them.
pub(super) fn awaited_at_end(cx: &Context, run: TokenStream) -> TokenStream {
    if !cx.give_up.awaits() && !cx.stats.awaits() {
        return run;
    }
    let Context { p, stats_l, .. } = cx;
    let (out_l, error_l, give_up_l, figures_l) = (
        local("__retry_returned", cx.ret_span),
        local("__retry_error", cx.ret_span),
        local("__retry_give_up", cx.ret_span),
        local("__retry_figures", cx.ret_span),
    );
    let give_up = cx.give_up.awaits().then(|| {
        let hook = async_part("give_up");
        quote! {
            if let (::core::option::Option::Some(#error_l), ::core::option::Option::Some(#give_up_l)) =
                (#p::IsResult::as_err(&#out_l), #stats_l.give_up())
            {
                #hook.call_give_up(#error_l, &#give_up_l).await;
            }
        }
    });
    let stats = cx.stats.awaits().then(|| {
        let hook = async_part("stats");
        quote! {
            if let ::core::option::Option::Some(#figures_l) = #stats_l.stats() {
                #hook.call_stats(&#figures_l).await;
            }
        }
    });
    quote_spanned! {cx.ret_span=>
        let #out_l = async { #run }.await;
        #give_up
        #stats
        #out_l
    }
}
