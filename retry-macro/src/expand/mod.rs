//! The expansion: the original function, same attributes and signature, with a retry loop for
//! a body.
//!
//! This file is the entry; then, one file per job:
//!
//! - context.rs: what every shape is written with (paths, return type, generated locals)
//! - keys.rs: what each key of the attribute becomes (the policy, the `timeout`, the hooks)
//! - awaited.rs: the hooks an `async fn` awaits (async `notify`, `give_up`, `stats`)
//! - loop_steps.rs: the steps around an attempt in a loop written here
//! - sync.rs: a sync fn, its attempt a closure the runtime's blocking loop calls, or inline in
//!   a loop written here under `#[track_caller]`, so that the caller's location reaches it
//! - async_fn.rs: an `async fn`'s loop, its attempt inline (inline_attempt.rs), nested in an
//!   `async` block, or raced against a `timeout`
//! - hedged.rs: a hedged `async fn`, run by the runtime's hedging loop

mod async_fn;
mod awaited;
mod context;
mod hedged;
mod hook;
mod keys;
mod loop_steps;
mod sync;

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::ReturnType;

use crate::args::Args;
use crate::async_trait;
use crate::item::Item;
use crate::valid::{self, Features};

use self::async_fn::async_loop;
use self::context::Context;
use self::hedged::hedged;
use self::sync::{sync_closure, track_caller_attempt, track_caller_loop};

/// The whole macro: the attribute and the function read (args.rs, item.rs), checked
/// (valid.rs), then written, which cannot fail.
///
/// On any error, the output is the errors **and** the function unchanged.
///
/// So call sites and IDEs keep working, and the user sees one error, not a cascade.
pub(crate) fn retry(args: TokenStream, input: TokenStream) -> TokenStream {
    let item: Item = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(e) => return with_error(e, input),
    };
    let args: Args = match syn::parse2(args) {
        Ok(args) => args,
        Err(e) => return with_error(e, input),
    };
    if let Err(e) = valid::args(&args) {
        return with_error(e, input);
    }
    if let Err(e) = valid::item(&args, &item, Features::BUILT) {
        return with_error(e, item.into_token_stream());
    }
    if let Err(e) = valid::expansion(&args, &item) {
        return with_error(e, input);
    }
    expand(&args, item)
}

fn with_error(error: syn::Error, item: TokenStream) -> TokenStream {
    let mut out = error.to_compile_error();
    out.extend(item);
    out
}

/// The function with its new body, for arguments and a function valid.rs has accepted.
fn expand(args: &Args, mut item: Item) -> TokenStream {
    let krate = match &args.krate {
        Some(path) => path.to_token_stream(),
        None => quote!(::retry_jitter),
    };
    let p = quote!(#krate::__private);
    // valid.rs rejects a function without a return type.
    //
    // Should one get here, it is emitted unchanged rather than the macro panicking.
    let ret = match (&item.async_trait, item.sig.output.clone()) {
        // The future's output: `#[async_trait]` has made the function return a boxed future.
        (Some(async_trait), _) => Box::new(async_trait.output.clone()),
        (None, ReturnType::Type(_, ret)) => ret,
        (None, ReturnType::Default) => return item.into_token_stream(),
    };
    let is_async = item.is_async();
    let async_trait = item.async_trait.take();
    let body = match &async_trait {
        Some(async_trait) => async_trait.body.clone(),
        None => item.body.take().unwrap_or_default(),
    };
    let rebind = crate::rebind::rebind(
        &mut item.sig,
        &p,
        async_trait.is_some(),
        &body,
        &args.values,
        &ret,
    );
    let cx = Context::new(args, p, &ret, &item.sig.ident, is_async);
    let body = rebind.attempt_body(body);
    let track_caller_attempt = track_caller_attempt(&cx, &item, &body);

    let new_body = if let (Some((_, hedge)), true) = (&args.hedge, is_async) {
        hedged(&cx, hedge, &rebind, &body)
    } else if is_async {
        async_loop(&cx, &rebind, &body)
    } else if let Some(inline) = track_caller_attempt {
        track_caller_loop(&cx, inline, &rebind)
    } else {
        sync_closure(&cx, &item.sig, &rebind, &body)
    };

    // Under `#[async_trait]`, the retry loop is the boxed future.
    let new_body = match async_trait {
        Some(async_trait::AsyncTrait {
            before,
            pin,
            attrs,
            async_token,
            capture,
            ..
        }) => quote!(#before #pin(#(#attrs)* #async_token #capture { #new_body })),
        None => new_body,
    };
    let Item {
        attrs,
        vis,
        sig,
        body_span,
        ..
    } = &item;
    // The new body goes in the original braces: the function's span stays the user's.
    //
    // So lints on the function itself (`dead_code`…) still fire.
    let mut body = proc_macro2::Group::new(proc_macro2::Delimiter::Brace, new_body);
    body.set_span(*body_span);
    quote! {
        #(#attrs)*
        #vis #sig #body
    }
}
