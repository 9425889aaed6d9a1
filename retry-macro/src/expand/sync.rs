//! A sync fn's shapes.
//!
//! - The attempt a closure the runtime's blocking loop calls.
//! - Under `#[track_caller]`, a loop written here with the attempt inline.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use super::context::{local, Context};
use super::keys::setup;
use super::loop_steps::{admit, after_attempt, AfterAttempt};
use crate::inline_attempt::{self, InlineAttempt};
use crate::item::Item;
use crate::rebind::Rebind;

/// A sync fn that is not `#[track_caller]`: the attempt a closure, handed to the runtime's
/// blocking loop.
pub(super) fn sync_closure(
    cx: &Context,
    sig: &syn::Signature,
    rebind: &Rebind,
    body: &TokenStream,
) -> TokenStream {
    let Context {
        name,
        ret_loop,
        policy_l,
        hooks_l,
        ..
    } = cx;
    let args = cx.args;
    let op_l = local("__retry_op", cx.ret_span);
    // `move`: the attempt owns its copies of the arguments.
    //
    // A reference is copied; a by-value argument is moved in and cloned per call.
    //
    // So nothing needs a stack slot on the success path.
    //
    // Unless a hook borrows one of them too: then the attempt borrows.
    let hooks = [
        &args.on,
        &args.notify,
        &args.give_up,
        &args.stats,
        &args.budget,
        &args.cancel,
    ];
    let capture =
        (!crate::rebind::named_by(sig, hooks.into_iter().flatten())).then(|| quote!(move));
    let run_blocking = quote_spanned! {cx.ret_span=>
        #ret_loop::run_blocking(#policy_l, &#hooks_l, #name, #op_l)
    };
    let (setup, attempt_param, pin) = (setup(cx), cx.attempt_param(), cx.pin());
    quote! {
        #setup
        let #op_l = #capture |#attempt_param: u32| {
            #rebind
            #pin
            { #body }
        };
        #run_blocking
    }
}

/// `#[track_caller]` on a sync fn: the attempt is written inline in the function.
///
/// There the caller's location reaches it.
///
/// In the closure the runtime's loop calls, it would not: a closure cannot be
/// `#[track_caller]`.
///
/// valid.rs has rejected a body that cannot be written inline.
///
/// One that got here anyway is the macro's bug, said loudly.
///
/// Never a closure that would drop the caller's location without a word.
pub(super) fn track_caller_attempt(
    cx: &Context,
    item: &Item,
    body: &TokenStream,
) -> Option<InlineAttempt> {
    item.inline_track_caller()?;
    let inline = inline_attempt::rewrite(body, &cx.label, &cx.p, cx.ret_span);
    Some(inline.unwrap_or_else(|_| unreachable!("valid.rs lets through only a body it can inline")))
}

/// A `#[track_caller]` sync fn: the async loop's shape, its attempt inline, waiting with the
/// blocking sleep the runtime's loop uses.
pub(super) fn track_caller_loop(
    cx: &Context,
    inline: InlineAttempt,
    rebind: &Rebind,
) -> TokenStream {
    let Context {
        p,
        p_ret,
        ret,
        ret_loop,
        state_l,
        out_l,
        delay_l,
        hooks_l,
        label,
        ..
    } = cx;
    let InlineAttempt { stmts, labelled } = inline;
    // With `cancel`, the wait ends at once when the token is cancelled.
    let wait = match &cx.args.cancel {
        Some(_) => quote!(#ret_loop::sleep_blocking_or_cancel(#delay_l, &#hooks_l)),
        None => quote!(#p::sleep_blocking(#delay_l)),
    };
    let label = labelled.then(|| quote!(#label:));
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
    quote! {
        #setup
        #start_item
        let mut #state_l = #p_ret::LoopState::<#ret>::new();
        loop {
            #admit
            #attempt_bind
            let #out_l: #ret = #label { #rebind #stmts };
            // A body that never returns leaves this unreachable: not the user's warning.
            #[allow(unreachable_code)]
            let #last_pattern = {
                #verdict
                if #succeeded {
                    #on_success;
                    return #out_l;
                }
                match #on_failure {
                    #p::ControlFlow::Break(#out_l) => return #out_l,
                    #p::ControlFlow::Continue(#wait_pattern) => {
                        #wait;
                        #last_value
                    }
                }
            };
            #after_wait
        }
    }
}
