//! The steps of a loop written here, around each attempt: ask the guards, judge the outcome,
//! wait, resume.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned, ToTokens};

use super::context::{local, Context};

/// Before each attempt of a loop written here, the guards are asked.
///
/// The runtime's loops ask them themselves. Without a guard, nothing.
pub(super) fn admit(cx: &Context) -> TokenStream {
    let Context {
        p_ret,
        ret_loop,
        state_l,
        hooks_l,
        out_l,
        name,
        clock,
        ..
    } = cx;
    if cx.args.throttle.is_some() || cx.args.breaker.is_some() {
        quote_spanned! {cx.ret_span=>
            if let #p_ret::ControlFlow::Break(#out_l) = #ret_loop::admit(&#state_l, &#hooks_l, #name, #clock) {
                return #out_l;
            }
        }
    } else {
        TokenStream::new()
    }
}

/// What follows an attempt in a loop written here: judge its outcome, return a success, make
/// the wait.
pub(super) struct AfterAttempt {
    /// What the outcome is: a success (an `Ok`, unless `on_ok` retries it), an error, or an
    /// `Ok` to retry.
    pub(super) verdict: TokenStream,
    /// Whether it is a success.
    pub(super) succeeded: TokenStream,
    /// A success's accounting (`LoopState::succeeded`).
    pub(super) on_success: TokenStream,
    /// The step after a failure: `Break` with the outcome to return, or `Continue` with the
    /// wait (`wait_pattern`).
    ///
    /// With `Continue`, the last outcome too where it is kept: `last_value`, bound to
    /// `last_pattern` through the wait.
    pub(super) on_failure: TokenStream,
    pub(super) wait_pattern: TokenStream,
    pub(super) last_value: TokenStream,
    pub(super) last_pattern: TokenStream,
    /// What runs after the wait.
    pub(super) after_wait: TokenStream,
}

/// How a loop written here judges an attempt's outcome, and what it keeps through the wait.
pub(super) fn after_attempt(cx: &Context) -> AfterAttempt {
    let Context {
        p,
        name,
        ret_loop,
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
    // Without a possible deadline, the step hands back the wait alone.
    //
    // No last outcome is returned through memory and dropped.
    let (failed_fn, wait_pattern, last_value, last_pattern, last_arg) = if cx.keeps_last {
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
    AfterAttempt {
        verdict: quote_spanned! {ret_span=>
            let #verdict_l = #ret_loop::verdict(&#out_l, &#hooks_l);
        },
        succeeded: quote_spanned! {ret_span=>
            #verdict_l.accepted()
        },
        // Not through `Loop::<R>`: nothing here is about `R`.
        //
        // An `impl Trait` in it (erased to `_`) would be left for inference with nothing to
        // infer it from.
        on_success: quote_spanned! {ret_span=>
            #p::LoopState::succeeded(&#state_l, &#hooks_l, #name, #clock)
        },
        on_failure: quote_spanned! {ret_span=>
            #ret_loop::#failed_fn(&mut #state_l, #p::Started { policy: &#policy_l, clock: #clock, start: #start }, #out_l, #verdict_l, &#hooks_l, #name, #cut)
        },
        wait_pattern,
        last_value,
        last_pattern,
        after_wait,
    }
}

/// After the wait: however long the timer slept, no attempt starts past the deadline or once
/// the call is cancelled.
///
/// The retry about to run spends the budget tokens it took.
///
/// Without a deadline or a budget there is nothing to do, and no code.
///
/// Unreachable after a body that never returns, like the rest of the turn.
///
/// `last` is the last outcome kept through the wait, or `None`.
fn after_wait(cx: &Context, last: TokenStream) -> TokenStream {
    let Context {
        p_ret,
        name,
        ret_loop,
        hooks_l,
        state_l,
        out_l,
        ..
    } = cx;
    let last_kept = local("__retry_last_kept", cx.ret_span);
    let args = cx.args;
    // An `async fn` with `cancel` keeps the last outcome through the next attempt, which a
    // cancel drops (see `cancellable`).
    if cx.is_async && args.cancel.is_some() {
        let Context { p, kept_l, .. } = cx;
        return quote_spanned! {cx.ret_span=>
            #[allow(unreachable_code)]
            let () = match #p::LoopState::resumed_keeping(&mut #state_l, #last, &#hooks_l, #name) {
                #p_ret::ControlFlow::Break(#out_l) => return #out_l,
                #p_ret::ControlFlow::Continue(#last_kept) => #kept_l = #last_kept,
            };
        };
    }
    // Every function has a budget but for `budget = none`: its own, or the one given.
    if args.budget_none.is_none()
        || args.policy.is_some()
        || args.max_elapsed.is_some()
        || args.cancel.is_some()
    {
        quote_spanned! {cx.ret_span=>
            #[allow(unreachable_code)]
            let () = if let #p_ret::ControlFlow::Break(#out_l) =
                #ret_loop::resumed(&mut #state_l, #last, &#hooks_l, #name)
            {
                return #out_l;
            };
        }
    } else {
        TokenStream::new()
    }
}
