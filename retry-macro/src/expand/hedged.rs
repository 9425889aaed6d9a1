//! A hedged `async fn`: attempts side by side, run by the runtime's hedging loop.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Ident;

use super::awaited::awaited_at_end;
use super::context::{local, Context};
use super::keys::setup;
use crate::args::HedgeArg;
use crate::rebind::Rebind;

/// A hedged `async fn`: attempts side by side, each one a future made by a `move` closure (a
/// shared borrow is copied into it, a by-value argument cloned for it), run by the runtime's
/// hedging loop.
pub(super) fn hedged(
    cx: &Context,
    hedge: &HedgeArg,
    rebind: &Rebind,
    body: &TokenStream,
) -> TokenStream {
    let Context {
        p,
        p_ret,
        ret,
        ret_span,
        name,
        ret_loop,
        policy_l,
        hooks_l,
        clock,
        start,
        sleep,
        timeout_l,
        ..
    } = cx;
    let ret_span = *ret_span;
    let make_l = local("__retry_make", ret_span);
    let hedge = match hedge {
        HedgeArg::After(delay) => {
            let delay = delay.to_tokens(p);
            quote!(#p::Hedge::After(#delay))
        }
        HedgeArg::Percentile(n, span) => {
            let latency = Ident::new("__RETRY_LATENCY", Span::mixed_site().located_at(*span));
            quote_spanned! {*span=>
                {
                    static #latency: #p::LatencyHistogram = #p::LatencyHistogram::new();
                    #p::Hedge::Percentile(&#latency, #n)
                }
            }
        }
    };
    let timeout = match &cx.args.timeout {
        Some((key, _)) => {
            let timed_out = cx.timed_out(key);
            quote!(::core::option::Option::Some((#timeout_l, #timed_out)))
        }
        None => quote_spanned!(ret_span=> #p_ret::no_timeout::<#ret>()),
    };
    let last = if cx.keeps_last {
        quote!(::core::option::Option::None)
    } else {
        quote!(#p::Discard)
    };
    // A `const` policy is borrowed: promoted to a `'static`, nothing of it kept in the future.
    //
    // A computed one is moved in, not borrowed from this future beside it.
    let policy_arg = if cx.policy_const {
        quote!(&#policy_l)
    } else {
        quote!(#policy_l)
    };
    let hedged = quote_spanned! {ret_span=>
        #ret_loop::hedged(#p::Started { policy: #policy_arg, clock: #clock, start: #start }, &#hooks_l, #name, #hedge, #timeout, #sleep, #make_l, #last)
    };
    let (setup, start_item, attempt_param, pin) =
        (setup(cx), cx.start_item(), cx.attempt_param(), cx.pin());
    let run = awaited_at_end(cx, quote!(#hedged.await));
    quote! {
        #setup
        #start_item
        let #make_l = move |#attempt_param: u32| {
            #rebind
            async move {
                #pin
                { #body }
            }
        };
        #run
    }
}
