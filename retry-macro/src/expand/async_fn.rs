//! An `async fn`'s loop, written here, and its attempt: inline, in a nested `async` block, or
//! raced against a `timeout`.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::Ident;

use super::awaited::{awaited_at_end, awaited_notify};
use super::context::{local, Context};
use super::keys::setup;
use super::loop_steps::{admit, after_attempt, AfterAttempt};
use crate::inline_attempt::{self, InlineAttempt};
use crate::rebind::Rebind;
use crate::signature::could_be_result;

/// An `async fn`'s loop, each turn an attempt, then its outcome judged, then the wait.
pub(super) fn async_loop(cx: &Context, rebind: &Rebind, body: &TokenStream) -> TokenStream {
    let Context {
        p,
        p_ret,
        ret,
        ret_loop,
        state_l,
        out_l,
        delay_l,
        hooks_l,
        sleep,
        ..
    } = cx;
    let sleep_l = local("__retry_sleep", cx.ret_span);
    // With `cancel`, the wait ends at once when the token is cancelled.
    let wait = match &cx.args.cancel {
        Some(_) => quote!(#ret_loop::sleep_or_cancel(#delay_l, #sleep, &#hooks_l)),
        None => quote!(#p::sleep_boxed(#delay_l, #sleep)),
    };
    let outcome = async_attempt(cx, rebind, body);
    let (setup, start_item, admit, attempt_bind) =
        (setup(cx), cx.start_item(), admit(cx), cx.attempt_bind());
    let AfterAttempt {
        verdict,
        succeeded,
        on_success,
        on_failure,
        wait_pattern,
        last_value,
        last_pattern,
        after_wait,
    } = after_attempt(cx);
    // With an awaited `notify`, the timer is made after it.
    //
    // A slow hook adds to the call's time, as a sync one does.
    let notify = awaited_notify(cx);
    let (first_l, made, make_after) = if notify.is_empty() {
        (&sleep_l, wait, TokenStream::new())
    } else {
        (delay_l, quote!(#delay_l), quote!(let #sleep_l = #wait;))
    };
    let kept = cx.args.cancel.is_some().then(|| {
        let kept_l = &cx.kept_l;
        quote!(let mut #kept_l = ::core::option::Option::None;)
    });
    let run = quote! {
        #start_item
        let mut #state_l = #p_ret::LoopState::<#ret>::new();
        #kept
        loop {
            #admit
            #attempt_bind
            // The outcome is scoped to this block: it is not kept across the wait's `.await`.
            //
            // The future holds only the last error, where a deadline may need it after the wait.
            let (#first_l, #last_pattern) = {
                #outcome
                // A body that never returns (`todo!()`) leaves this unreachable.
                //
                // That is not the user's code, so not the user's warning.
                #[allow(unreachable_code)]
                {
                    #verdict
                    if #succeeded {
                        #on_success;
                        return #out_l;
                    }
                    // The wait is made into its (boxed) timer here.
                    //
                    // So neither the outcome nor the delay is kept across the `.await`.
                    match #on_failure {
                        #p::ControlFlow::Break(#out_l) => return #out_l,
                        #p::ControlFlow::Continue(#wait_pattern) => {
                            (#made, #last_value)
                        }
                    }
                }
            };
            #notify
            #make_after
            #sleep_l.await;
            #after_wait
        }
    };
    let run = awaited_at_end(cx, run);
    quote! {
        #setup
        #run
    }
}

/// An `async fn`'s attempt, binding the outcome (and, with a `timeout`, whether the deadline
/// cut it).
fn async_attempt(cx: &Context, rebind: &Rebind, body: &TokenStream) -> TokenStream {
    match &cx.args.timeout {
        Some((key, _)) => timed_attempt(cx, key, rebind, body),
        None => untimed_attempt(cx, rebind, body),
    }
}

/// The attempt as a nested `async` block.
///
/// Its own arguments are made before the block (`outside`, in the scope that awaits it), and
/// moved into it (`inside`).
///
/// The block owns them, as the function does, and holds no borrow of them across an `.await`.
fn nested_attempt(cx: &Context, rebind: &Rebind, body: &TokenStream) -> (TokenStream, TokenStream) {
    let (outside, inside) = rebind.moved_in();
    let pin = cx.pin();
    let nested = quote! {
        async {
            #inside
            #pin
            { #body }
        }
    };
    (outside, nested)
}

/// Without a `timeout`: inline where its `return`s and `?`s can be rewritten to end it (see
/// inline_attempt.rs).
///
/// Else a nested `async` block, which ends at them by itself.
fn untimed_attempt(cx: &Context, rebind: &Rebind, body: &TokenStream) -> TokenStream {
    let Context {
        p,
        ret,
        ret_span,
        out_l,
        label,
        ..
    } = cx;
    // With `cancel`, the attempt is a future, raced against the token (see `cancellable`).
    let inline = (could_be_result(ret) && cx.args.cancel.is_none())
        .then(|| inline_attempt::rewrite(body, label, p, *ret_span).ok())
        .flatten();
    let attempt = match inline {
        Some(InlineAttempt { stmts, labelled }) => {
            let label = labelled.then(|| quote!(#label:));
            quote!(#label { #rebind #stmts })
        }
        None if cx.args.cancel.is_some() => {
            // The race is awaited inside the block that made the attempt's arguments.
            //
            // So the attempt may borrow them (a `Copy` one is captured by reference).
            let (outside, nested) = nested_attempt(cx, rebind, body);
            let raced = cancellable(cx, nested);
            quote!({ #outside #raced })
        }
        None => {
            let (outside, nested) = nested_attempt(cx, rebind, body);
            quote!({ #outside #nested.await })
        }
    };
    quote! {
        let #out_l: #ret = #attempt;
    }
}

/// With `cancel`, an attempt after a failure raced against the token.
///
/// It gives what the attempt ended with.
///
/// Should the token be cancelled first, the attempt is dropped, and the last outcome returned,
/// given up as cancelled.
///
/// Without a kept outcome (the first attempt), the attempt alone.
fn cancellable(cx: &Context, attempt: TokenStream) -> TokenStream {
    let Context {
        p,
        kept_l,
        hooks_l,
        state_l,
        name,
        ..
    } = cx;
    let last_l = local("__retry_cancelled_last", cx.ret_span);
    let ended_l = local("__retry_ended", cx.ret_span);
    quote! {
        match #p::attempt_or_cancel_in(#attempt, #kept_l.take(), &#hooks_l).await {
            ::core::result::Result::Ok(#ended_l) => #ended_l,
            ::core::result::Result::Err(#last_l) => {
                return #p::LoopState::cancelled(&mut #state_l, #last_l, &#hooks_l, #name);
            }
        }
    }
}

/// With a `timeout`: the attempt a nested future raced against a timer of its limit.
///
/// A cut one fails with `E::from(TimedOut)`, converted at the key, where a missing `From` is
/// reported.
fn timed_attempt(cx: &Context, key: &Ident, rebind: &Rebind, body: &TokenStream) -> TokenStream {
    let Context {
        p,
        ret,
        ret_span,
        out_l,
        policy_l,
        clock,
        start,
        sleep,
        timeout_l,
        ..
    } = cx;
    let ret_span = *ret_span;
    let (outside, nested) = nested_attempt(cx, rebind, body);
    let cut_l = local("__retry_cut", ret_span);
    let (limit_l, deadline_l, race_l) = (
        local("__retry_limit", ret_span),
        local("__retry_deadline", ret_span),
        local("__retry_race", ret_span),
    );
    let timed_out = cx.timed_out(key);
    // With `cancel`, the race itself raced against the token.
    let ended = if cx.args.cancel.is_some() {
        cancellable(cx, race_l.to_token_stream())
    } else {
        quote!(#race_l.await)
    };
    let raced = quote! {
        match #ended {
            ::core::result::Result::Ok(#out_l) => (#out_l, false),
            ::core::result::Result::Err(#cut_l) => (#timed_out(#cut_l), #deadline_l),
        }
    };
    quote! {
        let (#out_l, #cut_l): (#ret, bool) = {
            #outside
            let #p::Limit { duration: #limit_l, deadline: #deadline_l } =
                #p::Limit::of(#timeout_l, #p::Started { policy: #policy_l, clock: #clock, start: #start });
            // The attempt and its timer raced in place, in the function's own
            // future: stored once, with no borrow of either beside them.
            let #race_l = #p::Race::new(#nested, #sleep(#limit_l), #limit_l, #clock as #p::Clock);
            #raced
        };
    }
}
