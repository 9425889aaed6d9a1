//! The steps of a loop written here, around each attempt: ask the guards, judge the outcome,
//! wait, resume.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned, ToTokens};

use super::context::{local, Cx};

/// Before each attempt of a loop written here, the guards are asked (the runtime's loops ask
/// them themselves); without a guard, nothing.
pub(super) fn admit(cx: &Cx) -> TokenStream {
    let Cx {
        p_ret,
        for_ret,
        state_l,
        hooks_l,
        out_l,
        name,
        clock,
        ..
    } = cx;
    if cx.args.throttle.is_some() || cx.args.breaker.is_some() {
        quote_spanned! {cx.ret_span=>
            if let #p_ret::ControlFlow::Break(#out_l) = #for_ret::admit(&#state_l, &#hooks_l, #name, #clock) {
                return #out_l;
            }
        }
    } else {
        TokenStream::new()
    }
}

/// The pieces of a loop written here that judge an attempt's outcome and make the wait.
pub(super) struct Judge {
    /// What the outcome is: a success (an `Ok`, unless `on_ok` retries it), an error, or an
    /// `Ok` to retry.
    pub(super) verdict: TokenStream,
    /// Whether it is a success.
    pub(super) succeeded: TokenStream,
    /// A success's accounting (`LoopState::succeeded`).
    pub(super) paid: TokenStream,
    /// The step after a failure: `Break` with the outcome to return, or `Continue` with the
    /// wait (`cont_pat`), and the last outcome where it is kept (`last_val`, bound to
    /// `last_bind` through the wait).
    pub(super) failed: TokenStream,
    pub(super) cont_pat: TokenStream,
    pub(super) last_val: TokenStream,
    pub(super) last_bind: TokenStream,
    /// What runs after the wait.
    pub(super) after_wait: TokenStream,
}

/// How a loop written here judges an attempt's outcome, and what it keeps through the wait.
pub(super) fn judge(cx: &Cx) -> Judge {
    let Cx {
        p,
        name,
        for_ret,
        policy_l,
        hooks_l,
        state_l,
        out_l,
        delay_l,
        last_l,
        clock,
        start,
        ..
    } = cx;
    let ret_span = cx.ret_span;
    let verdict_l = local("__retry_verdict", ret_span);
    // Whether the deadline cut the attempt: only a `timeout` can.
    let cut = match cx.args.timeout {
        Some(_) => local("__retry_cut", ret_span).to_token_stream(),
        None => quote!(false),
    };
    // Without a possible deadline, the step hands back the wait alone: no last outcome to
    // return through memory and drop.
    let (failed_fn, cont_pat, last_val, last_bind, last_arg) = if cx.keeps_last {
        (
            quote_spanned!(ret_span=> failed),
            quote!((#delay_l, #last_l)),
            last_l.to_token_stream(),
            last_l.to_token_stream(),
            last_l.to_token_stream(),
        )
    } else {
        (
            quote_spanned!(ret_span=> failed_wait),
            delay_l.to_token_stream(),
            quote!(()),
            quote!(_),
            quote!(::core::option::Option::None),
        )
    };
    let after_wait = after_wait(cx, last_arg);
    Judge {
        verdict: quote_spanned! {ret_span=>
            let #verdict_l = #for_ret::verdict(&#out_l, &#hooks_l);
        },
        succeeded: quote_spanned! {ret_span=>
            #verdict_l.accepted()
        },
        // Not through `Loop::<R>`: nothing here is about `R`, and an `impl Trait` in it (erased
        // to `_`) would be left for inference with nothing to infer it from.
        paid: quote_spanned! {ret_span=>
            #p::LoopState::succeeded(&#state_l, &#hooks_l, #name, #clock)
        },
        failed: quote_spanned! {ret_span=>
            #for_ret::#failed_fn(&mut #state_l, #p::Started { policy: &#policy_l, clock: #clock, start: #start }, #out_l, #verdict_l, &#hooks_l, #name, #cut)
        },
        cont_pat,
        last_val,
        last_bind,
        after_wait,
    }
}

/// After the wait: however long the timer slept, no attempt starts past the deadline, and the
/// retry about to run spends the budget tokens it took. Without a deadline or a budget there is
/// nothing to do, and no code. (Unreachable after a body that never returns, like the rest of
/// the turn.) `last` is the last outcome kept through the wait, or `None`.
fn after_wait(cx: &Cx, last: TokenStream) -> TokenStream {
    let Cx {
        p_ret,
        name,
        for_ret,
        hooks_l,
        state_l,
        out_l,
        ..
    } = cx;
    let args = cx.args;
    if args.budget.is_some() || args.policy.is_some() || args.max_elapsed.is_some() {
        quote_spanned! {cx.ret_span=>
            #[allow(unreachable_code)]
            let () = if let #p_ret::ControlFlow::Break(#out_l) =
                #for_ret::resumed(&mut #state_l, #last, &#hooks_l, #name)
            {
                return #out_l;
            };
        }
    } else {
        TokenStream::new()
    }
}
