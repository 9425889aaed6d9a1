//! The expansion: the original function, same attributes and signature, with a retry loop for
//! a body. This file is the entry; then, one file per job:
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
use syn::{Ident, ReturnType};

use crate::args::Args;
use crate::async_trait;
use crate::item::{Features, Item};
use crate::loop_exits::fence_loop_exits;

use self::async_fn::async_loop;
use self::context::Context;
use self::hedged::hedged;
use self::sync::{sync_closure, track_caller_attempt, track_caller_loop};

/// The whole macro: on any error, the errors **and** the function unchanged, so that call sites
/// and IDEs keep working and the user sees one error, not a cascade.
pub(crate) fn retry(args: TokenStream, input: TokenStream) -> TokenStream {
    let item: Item = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(e) => return with_error(e, input),
    };
    let args: Args = match syn::parse2(args) {
        Ok(args) => args,
        Err(e) => return with_error(e, input),
    };
    if let Err(e) = item.check(&args, Features::BUILT) {
        return with_error(e, item.into_token_stream());
    }
    expand(&args, item).unwrap_or_else(|e| with_error(e, input))
}

fn with_error(error: syn::Error, item: TokenStream) -> TokenStream {
    let mut out = error.to_compile_error();
    out.extend(item);
    out
}

/// `attempt = name` must not hide an argument of the same name from the body.
fn check_attempt_name(args: &Args, sig: &syn::Signature) -> syn::Result<()> {
    let Some((key, name)) = &args.attempt else {
        return Ok(());
    };
    let shadows = sig.inputs.iter().any(|input| match input {
        syn::FnArg::Receiver(_) => name == "self",
        syn::FnArg::Typed(arg) => binds(&arg.pat, name),
    });
    if shadows {
        return Err(syn::Error::new(
            key.span(),
            format!(
                "`{key} = {name}` would hide the argument `{name}` from the body: name the \
                 attempt's number something else, like `{key} = attempt_number`"
            ),
        ));
    }
    Ok(())
}

/// An async closure given to `notify`, `give_up` or `stats` is awaited by the function: it
/// must be an `async fn`, and `notify`'s must not be hedged (the runtime's hedging loop calls
/// `notify` itself).
fn check_awaited(args: &Args, is_async: bool) -> syn::Result<()> {
    let keys = [
        ("notify", &args.notify),
        ("give_up", &args.give_up),
        ("stats", &args.stats),
    ];
    for (key, value) in keys {
        let Some(syn::Expr::Closure(syn::ExprClosure {
            asyncness: Some(token),
            ..
        })) = value
        else {
            continue;
        };
        if !is_async {
            return Err(syn::Error::new(
                token.span,
                format!(
                    "an async `{key}` hook is awaited by the function, and only an `async fn` \
                     can await it: make the function `async`, or give `{key}` a closure \
                     without `async`"
                ),
            ));
        }
        if key == "notify" && args.hedge.is_some() {
            return Err(syn::Error::new(
                token.span,
                "an async `notify` hook cannot be used with `hedge`: the hedging loop calls \
                 `notify` itself, between attempts it keeps running; give `notify` a closure \
                 without `async` (`give_up` and `stats` can be async with `hedge`)",
            ));
        }
    }
    Ok(())
}

/// Whether `pat` binds `name`.
fn binds(pat: &syn::Pat, name: &Ident) -> bool {
    match pat {
        syn::Pat::Ident(p) => {
            p.ident == *name || p.subpat.as_ref().is_some_and(|(_, p)| binds(p, name))
        }
        syn::Pat::Tuple(t) => any_binds(&t.elems, name),
        syn::Pat::TupleStruct(t) => any_binds(&t.elems, name),
        syn::Pat::Struct(s) => (0..s.fields.len()).any(|i| binds(&s.fields[i].pat, name)),
        syn::Pat::Slice(s) => any_binds(&s.elems, name),
        syn::Pat::Reference(r) => binds(&r.pat, name),
        syn::Pat::Paren(p) => binds(&p.pat, name),
        syn::Pat::Type(t) => binds(&t.pat, name),
        syn::Pat::Or(o) => any_binds(&o.cases, name),
        _ => false,
    }
}

/// Whether one of `pats` binds `name`. (Indexed: `Punctuated`'s iterators are boxed `dyn`
/// iterators, whose vtable each element type compiles.)
fn any_binds<P>(pats: &syn::punctuated::Punctuated<syn::Pat, P>, name: &Ident) -> bool {
    (0..pats.len()).any(|i| binds(&pats[i], name))
}

/// The function with its new body, or the one error that only writing it finds.
fn expand(args: &Args, mut item: Item) -> syn::Result<TokenStream> {
    check_attempt_name(args, &item.sig)?;
    let krate = match &args.krate {
        Some(path) => path.to_token_stream(),
        None => quote!(::retry_jitter),
    };
    let p = quote!(#krate::__private);
    // Item::check rejects a function without a return type; should one get here, it is
    // emitted unchanged rather than the macro panicking.
    let ret = match (&item.async_trait, item.sig.output.clone()) {
        // The future's output: `#[async_trait]` has made the function return a boxed future.
        (Some(async_trait), _) => Box::new(async_trait.output.clone()),
        (None, ReturnType::Type(_, ret)) => ret,
        (None, ReturnType::Default) => return Ok(item.into_token_stream()),
    };
    let is_async = item.is_async();
    check_awaited(args, is_async)?;
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
    // A receiver each attempt has its own copy of: the body's `self` is that copy.
    let body = match &rebind.self_alias {
        Some(alias) => crate::receiver::rename_self(&body, alias),
        None => body,
    };
    // A `break` or `continue` outside the user's loops stays the error it is without us.
    let body = fence_loop_exits(body);
    let track_caller_attempt = track_caller_attempt(&cx, &item, &body)?;

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
    // The new body in the original braces: the function's span stays the user's, so lints on
    // the function itself (`dead_code`…) still fire.
    let mut body = proc_macro2::Group::new(proc_macro2::Delimiter::Brace, new_body);
    body.set_span(*body_span);
    Ok(quote! {
        #(#attrs)*
        #vis #sig #body
    })
}
