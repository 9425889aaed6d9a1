//! The expansion: the original function, same attributes and signature, with a retry loop for
//! a body. Sync functions hand a closure to the runtime's blocking loop; `async fn`s loop here,
//! the attempt written inline (attempt.rs) or, where that cannot keep its meaning, in a nested
//! `async` block, each turn ending in the runtime's `LoopState::failed`. A `#[track_caller]`
//! sync fn loops here too, its attempt inline, so that the caller's location reaches it.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{GenericArgument, Ident, PathArguments, ReturnType, Type};

use crate::args::{Args, AttemptsArg, DurationArg, HedgeArg};
use crate::async_trait;
use crate::attempt;
use crate::item::{Features, Item};
use crate::params::{self, Rebind};
use crate::respan::respan;

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

/// A generated local: invisible to the user's code (mixed-site hygiene), located at `at` so that
/// the calls it appears in are reported there.
fn local(name: &str, at: Span) -> Ident {
    Ident::new(name, Span::mixed_site().located_at(at))
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

/// Whether one of `pats` binds `name`. (Indexed: see `walk.rs` on syn's iterators.)
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
    let async_trait = item.async_trait.take();
    let body = match &async_trait {
        Some(async_trait) => async_trait.body.clone(),
        None => item.body.take().unwrap_or_default(),
    };
    let rebind = params::rebind(
        &mut item.sig,
        &p,
        async_trait.is_some(),
        &body,
        &args.values,
        &ret,
    );
    let cx = Cx::new(args, p, &ret, &item.sig.ident, is_async);
    // A receiver each attempt has its own copy of: the body's `self` is that copy.
    let body = match &rebind.self_alias {
        Some(alias) => params::rename_self(&body, alias),
        None => body,
    };
    // A `break` or `continue` outside the user's loops stays the error it is without us.
    let body = attempt::fence_loop_exits(body);
    let sync_inline = sync_inline(&cx, &item, &body)?;

    let new_body = if let (Some((_, hedge)), true) = (&args.hedge, is_async) {
        hedged(&cx, hedge, &rebind, &body)
    } else if is_async {
        async_loop(&cx, &rebind, &body)
    } else if let Some(inline) = sync_inline {
        sync_inline_loop(&cx, inline, &rebind)
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

/// What every shape of the new body is written with: the paths, the return type, what the keys
/// decide, and the generated locals. Everything the expansion adds is spanned at the return
/// type unless it stands for a key's value: an error about the return type then has one span,
/// and is reported once.
struct Cx<'a> {
    args: &'a Args,
    /// `#krate::__private`, and the same spanned at the return type.
    p: TokenStream,
    p_ret: TokenStream,
    /// The return type, `impl Trait` erased to `_`, and where it is written.
    ret: Type,
    ret_span: Span,
    /// The function's name, for the runtime's events.
    name: syn::LitStr,
    is_async: bool,
    /// A policy of literals is a constant: nothing to store (not even in an async fn's future),
    /// nothing to compute per call.
    policy_const: bool,
    /// The last error is kept through a wait only where a deadline may end the call after it
    /// (`max_elapsed`, or a `policy` that may have one): elsewhere the future holds nothing of
    /// the error type across any `.await`, and is `Send` whatever it is.
    keeps_last: bool,
    /// `Loop::<R>`, through which every call about `R` goes.
    for_ret: TokenStream,
    /// The `sleep` key's function, else tokio's.
    sleep: TokenStream,
    /// The clock the waits are measured on.
    clock: TokenStream,
    /// The start time: a local where a time budget may be set, else a constant `None`.
    start: TokenStream,
    policy_l: Ident,
    hooks_l: Ident,
    state_l: Ident,
    out_l: Ident,
    delay_l: Ident,
    last_l: Ident,
    start_l: Ident,
    timeout_l: Ident,
    /// The label of an attempt written inline, which its `return`s and `?`s break to.
    label: syn::Lifetime,
}

impl<'a> Cx<'a> {
    fn new(args: &'a Args, p: TokenStream, ret: &Type, ident: &Ident, is_async: bool) -> Self {
        let ret_span = ret.span();
        let ret = erase_impl_trait(ret);
        let name = syn::LitStr::new(&ident.unraw().to_string(), ret_span);
        let p_ret = respan(&p, ret_span);
        let policy_const = policy_is_const(args);
        // The state, like the outcome below, has the return type's own span (not a mixed-site
        // one): the after-wait call that takes it then reports `R` not being a `Result` where
        // the other calls do, once.
        let policy_l = if policy_const {
            Ident::new("__RETRY_POLICY", Span::mixed_site().located_at(ret_span))
        } else {
            local("__retry_policy", ret_span)
        };
        // The outcome is bound after the attempt, where the body cannot see it: it can have the
        // return type's own span, so that `succeeded(&outcome)`'s error (`R` is not a `Result`)
        // is reported where the others are, and once.
        let (state_l, out_l) = (
            Ident::new("__retry_state", ret_span),
            Ident::new("__retry_out", ret_span),
        );
        let sleep = match &args.sleep {
            Some((_, sleep)) => sleep.to_token_stream(),
            None => quote!(#p::tokio_sleep),
        };
        // The clock the waits are measured on: the `clock` key's, else tokio's whenever it is
        // built in (with a `sleep` of the user's too: a paused test clock then still holds; off
        // a tokio runtime it is the system clock), else the monotonic system clock.
        let clock = match &args.clock {
            Some((_, clock)) => clock.to_token_stream(),
            None if Features::BUILT.tokio && is_async => quote!(#p::tokio_now),
            None => quote!(#p::now),
        };
        // The start time is kept only where a time budget may be set: otherwise it is a
        // constant `None`, and the future does not carry it.
        let start_l = local("__retry_start", ret_span);
        let start = if args.policy.is_some() || args.max_elapsed.is_some() {
            start_l.to_token_stream()
        } else {
            quote!(::core::option::Option::None)
        };
        let timeout_l = if matches!(args.timeout, Some((_, DurationArg::Lit { .. }))) {
            Ident::new("__RETRY_TIMEOUT", Span::mixed_site().located_at(ret_span))
        } else {
            local("__retry_timeout", ret_span)
        };
        Cx {
            args,
            for_ret: quote_spanned!(ret_span=> #p_ret::Loop::<#ret>),
            p,
            p_ret,
            name,
            is_async,
            policy_const,
            keeps_last: args.policy.is_some() || args.max_elapsed.is_some(),
            sleep,
            clock,
            start,
            policy_l,
            hooks_l: local("__retry_hooks", ret_span),
            state_l,
            out_l,
            delay_l: local("__retry_delay", ret_span),
            last_l: local("__retry_last", ret_span),
            start_l,
            timeout_l,
            label: syn::Lifetime {
                apostrophe: Span::mixed_site().located_at(ret_span),
                ident: local("__retry_attempt", ret_span),
            },
            ret,
            ret_span,
        }
    }

    /// The start time, where a time budget may be set.
    fn start_item(&self) -> TokenStream {
        let Cx {
            p,
            policy_l,
            clock,
            start_l,
            ..
        } = self;
        if self.args.policy.is_some() || self.args.max_elapsed.is_some() {
            quote!(let #start_l = #p::start_time(&#policy_l, #clock);)
        } else {
            TokenStream::new()
        }
    }

    /// Makes `?` and `return` in the body infer against the declared return type.
    fn pin(&self) -> TokenStream {
        let (ret, pin_l) = (&self.ret, local("__retry_pin", self.ret_span));
        quote_spanned! {self.ret_span=>
            if let ::core::option::Option::Some(#pin_l) = ::core::option::Option::None::<#ret> {
                return #pin_l;
            }
        }
    }

    /// `attempt = n`: the body's `n`, the number of the attempt running. A closure (the
    /// blocking loop's, a hedge's) is handed it as its parameter.
    fn attempt_param(&self) -> TokenStream {
        match &self.args.attempt {
            Some((_, name)) => name.to_token_stream(),
            None => quote!(_),
        }
    }

    /// `attempt = n` in a loop written here: read off the state.
    fn attempt_bind(&self) -> TokenStream {
        let Cx { p, state_l, .. } = self;
        match &self.args.attempt {
            Some((_, name)) => quote_spanned! {name.span()=>
                let #name: u32 = #p::LoopState::attempt(&#state_l);
            },
            None => TokenStream::new(),
        }
    }

    /// The conversion of a cut attempt into the function's error,
    /// `R::from_err(E::from(TimedOut))`, spanned at the `timeout` key: a missing
    /// `From<TimedOut>` is reported there.
    fn timed_out(&self, key: &Ident) -> TokenStream {
        let (p_key, ret_key) = (
            respan(&self.p, key.span()),
            respan(&self.ret.to_token_stream(), key.span()),
        );
        quote_spanned!(key.span()=> #p_key::timed_out::<#ret_key>)
    }
}

/// The policy, the `timeout` and the hooks, bound before any attempt.
fn setup(cx: &Cx) -> TokenStream {
    let Cx {
        p,
        p_ret,
        policy_l,
        timeout_l,
        hooks_l,
        ..
    } = cx;
    let policy = policy(cx.args, p);
    let policy_item = if cx.policy_const {
        quote!(const #policy_l: #p::Policy = #policy;)
    } else {
        quote!(let #policy_l: #p::Policy = #policy;)
    };
    let timeout_item = match &cx.args.timeout {
        Some((_, lit @ DurationArg::Lit { .. })) => {
            let value = lit.to_tokens(p);
            quote!(const #timeout_l: #p::Duration = #value;)
        }
        Some((_, expr)) => {
            let value = expr.to_tokens(p);
            quote!(let #timeout_l: #p::Duration = #value;)
        }
        None => TokenStream::new(),
    };
    let Hooks {
        on,
        notify,
        give_up,
        budget,
        trace,
        on_ok,
        breaker,
        throttle,
    } = hooks(cx);
    quote_spanned! {cx.ret_span=>
        #policy_item
        #timeout_item
        let #hooks_l = #p_ret::Hooks {
            on: #on,
            notify: #notify,
            give_up: #give_up,
            budget: #budget,
            trace: #trace,
            on_ok: #on_ok,
            guard: (#breaker, #throttle),
        };
    }
}

/// The value of each field of the runtime's `Hooks`.
struct Hooks {
    on: TokenStream,
    notify: TokenStream,
    give_up: TokenStream,
    budget: TokenStream,
    trace: TokenStream,
    on_ok: TokenStream,
    breaker: TokenStream,
    throttle: TokenStream,
}

/// The hooks the keys give, and stand-ins that do nothing for the keys not given.
fn hooks(cx: &Cx) -> Hooks {
    let Cx { p, p_ret, .. } = cx;
    let args = cx.args;
    // No `on`: an error type that implements `Transient` is classified by it, any other is
    // retried on every error (autoref specialisation on the return type, see `DefaultOn`).
    let chooser = default_on_chooser(&cx.ret);
    let on = hook(
        cx,
        &args.on,
        "classifier",
        quote!(_, _),
        quote_spanned! {cx.ret_span=> {
            #[allow(unused_imports)]
            use #p_ret::{OnEvery as _, OnTransient as _};
            (&&#p_ret::DefaultOn::<#chooser>::new()).default_on()
        }},
    );
    // A closure gets its signature from `notifier`; any other value (a fn path, a `Notify`
    // value of the user's own type, which hears of hedges and retried `Ok`s) is checked as a
    // `Notify` by `notify_value`.
    let notifier = match &args.notify {
        Some(syn::Expr::Closure(_)) | None => "notifier",
        Some(_) => "notify_value",
    };
    let notify = hook(
        cx,
        &args.notify,
        notifier,
        quote!(_),
        quote!(#p_ret::NoNotify),
    );
    let on_ok = hook(
        cx,
        &args.on_ok,
        "ok_classifier",
        quote!(_, _),
        quote!(#p_ret::AcceptOk),
    );
    let give_up = hook(
        cx,
        &args.give_up,
        "give_up_hook",
        quote!(_),
        quote!(#p_ret::NoGiveUp),
    );
    let budget = match &args.budget {
        Some(budget) => {
            let p_at = respan(p, budget.span());
            quote_spanned!(budget.span()=> #p_at::budget(#budget))
        }
        None => quote!(#p_ret::NoBudget),
    };
    Hooks {
        on,
        notify,
        give_up,
        budget,
        trace: trace(cx),
        on_ok,
        breaker: guard(cx, &args.breaker, "breaker_guard"),
        throttle: guard(cx, &args.throttle, "throttle_guard"),
    }
}

/// `on`, `notify`, `on_ok` and `give_up` get their closure signatures from the return type,
/// through helpers spanned at the key's value: a mismatch is reported there. `.keep()` hands the
/// hook on, or a stand-in for a wrong one, which nothing reports again (see `Hook`).
fn hook(
    cx: &Cx,
    value: &Option<syn::Expr>,
    helper: &str,
    generics: TokenStream,
    none: TokenStream,
) -> TokenStream {
    match value {
        Some(value) => {
            let span = value.span();
            let (p_at, ret_at) = (respan(&cx.p, span), respan(&cx.ret.to_token_stream(), span));
            let generics = respan(&generics, span);
            let helper = Ident::new(helper, span);
            quote_spanned! {span=> {
                #[allow(unused_imports)]
                use #p_at::{Keep as _, KeepUnchecked as _};
                #p_at::#helper::<#ret_at, #generics>(#value).keep()
            }}
        }
        None => none,
    }
}

/// The breaker and the throttle, through helpers spanned at their keys: an error type without
/// the `From` they need is reported there.
fn guard(cx: &Cx, arg: &Option<(Ident, syn::Expr)>, helper: &str) -> TokenStream {
    match arg {
        Some((key, value)) => {
            let (p_key, ret_key) = (
                respan(&cx.p, key.span()),
                respan(&cx.ret.to_token_stream(), key.span()),
            );
            let helper = Ident::new(helper, key.span());
            quote_spanned!(key.span()=> #p_key::#helper::<#ret_key>(#value))
        }
        None => {
            let p_ret = &cx.p_ret;
            quote!(#p_ret::NoGuard)
        }
    }
}

/// The tracer, where the `tracing` feature is built in: each retry's event at `trace_level`,
/// the error shown as its type allows.
fn trace(cx: &Cx) -> TokenStream {
    let Cx {
        p_ret,
        ret,
        ret_span,
        ..
    } = cx;
    let ret_span = *ret_span;
    if !Features::BUILT.tracing {
        return quote!(#p_ret::NoTrace);
    }
    let level = cx
        .args
        .trace_level
        .clone()
        .unwrap_or_else(|| Ident::new("WARN", ret_span));
    let error = quote_spanned! {ret_span=>
        {
            #[allow(unused_imports)]
            use #p_ret::{ShowDebug as _, ShowDisplay as _, ShowNothing as _};
            (&&&#p_ret::ShownOutcome::<#ret>::new()).render_fn()
        }
    };
    // With `on_ok`, a retried value is shown too (`Debug`, where its type has it).
    let render = if cx.args.on_ok.is_some() {
        quote_spanned! {ret_span=>
            (#error, {
                #[allow(unused_imports)]
                use #p_ret::{ShowValueDebug as _, ShowValueNothing as _};
                (&&#p_ret::ShownValue::<#ret>::new()).value_fn()
            })
        }
    } else {
        error
    };
    quote_spanned! {ret_span=>
        #p_ret::tracer(#p_ret::Level::#level, #render)
    }
}

/// `#[track_caller]` on a sync fn: the attempt is written inline in the function, where the
/// caller's location reaches it; in the closure the runtime's loop calls, it would not (a
/// closure cannot be `#[track_caller]`). A body that cannot be written inline is an error.
fn sync_inline(cx: &Cx, item: &Item, body: &TokenStream) -> syn::Result<Option<attempt::Inline>> {
    let track_caller = item
        .attrs
        .iter()
        .find(|a| a.path().is_ident("track_caller"));
    match track_caller {
        Some(attr) if !cx.is_async && could_be_result(&cx.ret) => {
            match attempt::inline(body, &cx.label, &cx.p, cx.ret_span) {
                Ok(inline) => Ok(Some(inline)),
                Err(opaque) => Err(track_caller_error(opaque, attr)),
            }
        }
        _ => Ok(None),
    }
}

/// A hedged `async fn`: attempts side by side, each one a future made by a `move` closure (a
/// shared borrow is copied into it, a by-value argument cloned for it), run by the runtime's
/// hedging loop.
fn hedged(cx: &Cx, hedge: &HedgeArg, rebind: &Rebind, body: &TokenStream) -> TokenStream {
    let Cx {
        p,
        p_ret,
        ret,
        ret_span,
        name,
        for_ret,
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
    // A `const` policy borrowed (promoted to a `'static`, nothing of it kept in the future); a
    // computed one moved in, not borrowed from this future beside it.
    let policy_arg = if cx.policy_const {
        quote!(&#policy_l)
    } else {
        quote!(#policy_l)
    };
    let hedged = quote_spanned! {ret_span=>
        #for_ret::hedged(#p::Started { policy: #policy_arg, clock: #clock, start: #start }, &#hooks_l, #name, #hedge, #timeout, #sleep, #make_l, #last)
    };
    let (setup, start_item, attempt_param, pin) =
        (setup(cx), cx.start_item(), cx.attempt_param(), cx.pin());
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
        #hedged.await
    }
}

/// An `async fn`'s loop, each turn an attempt, then its outcome judged, then the wait.
fn async_loop(cx: &Cx, rebind: &Rebind, body: &TokenStream) -> TokenStream {
    let Cx {
        p,
        p_ret,
        ret,
        state_l,
        out_l,
        delay_l,
        sleep,
        ..
    } = cx;
    let sleep_l = local("__retry_sleep", cx.ret_span);
    let outcome = async_attempt(cx, rebind, body);
    let (setup, start_item, admit, attempt_bind) =
        (setup(cx), cx.start_item(), admit(cx), cx.attempt_bind());
    let Judge {
        verdict,
        succeeded,
        paid,
        failed,
        cont_pat,
        last_val,
        last_bind,
        after_wait,
    } = judge(cx);
    quote! {
        #setup
        #start_item
        let mut #state_l = #p_ret::LoopState::<#ret>::new();
        loop {
            #admit
            #attempt_bind
            // The outcome is scoped to this block, so that it is not kept across the
            // `.await` of the wait: the future does not hold it (only the last error, where
            // a deadline may need it after the wait).
            let (#sleep_l, #last_bind) = {
                #outcome
                // A body that never returns (`todo!()`) leaves this unreachable: not the
                // user's code, so not the user's warning.
                #[allow(unreachable_code)]
                {
                    #verdict
                    if #succeeded {
                        #paid;
                        return #out_l;
                    }
                    // The wait is made into its (boxed) timer here, so that neither the
                    // outcome nor the delay is kept across the `.await`.
                    match #failed {
                        #p::ControlFlow::Break(#out_l) => return #out_l,
                        #p::ControlFlow::Continue(#cont_pat) => {
                            (#p::sleep_boxed(#delay_l, #sleep), #last_val)
                        }
                    }
                }
            };
            #sleep_l.await;
            #after_wait
        }
    }
}

/// An `async fn`'s attempt, binding the outcome and whether the deadline cut it. Inline where
/// its `return`s and `?`s can be rewritten to end it (see attempt.rs), else a nested `async`
/// block, which ends at them by itself. With a `timeout`, the attempt is a nested future raced
/// against a timer of its limit; a cut one fails with `E::from(TimedOut)`, converted at the
/// key, where a missing `From` is reported.
fn async_attempt(cx: &Cx, rebind: &Rebind, body: &TokenStream) -> TokenStream {
    let Cx {
        p,
        ret,
        ret_span,
        out_l,
        policy_l,
        clock,
        start,
        sleep,
        timeout_l,
        label,
        ..
    } = cx;
    let ret_span = *ret_span;
    let inline = could_be_result(ret)
        .then(|| attempt::inline(body, label, p, ret_span).ok())
        .flatten();
    // The attempt's own arguments are made before the block (`outside`, in the scope that
    // awaits it) and moved into it: the block owns them, as the function does, and holds no
    // borrow of them across an `.await`.
    let (outside, inside) = rebind.moved_in();
    let pin = cx.pin();
    let nested = quote! {
        async {
            #inside
            #pin
            { #body }
        }
    };
    match &cx.args.timeout {
        Some((key, _)) => {
            let cut_l = local("__retry_cut", ret_span);
            let (limit_l, deadline_l, race_l) = (
                local("__retry_limit", ret_span),
                local("__retry_deadline", ret_span),
                local("__retry_race", ret_span),
            );
            let timed_out = cx.timed_out(key);
            quote! {
                let (#out_l, #cut_l): (#ret, bool) = {
                    #outside
                    let #p::Limit { duration: #limit_l, deadline: #deadline_l } =
                        #p::Limit::of(#timeout_l, #p::Started { policy: #policy_l, clock: #clock, start: #start });
                    // The attempt and its timer raced in place, in the function's own
                    // future: stored once, with no borrow of either beside them.
                    let #race_l = #p::Race::new(#nested, #sleep(#limit_l), #limit_l, #clock as #p::Clock);
                    match #race_l.await {
                        ::core::result::Result::Ok(#out_l) => (#out_l, false),
                        ::core::result::Result::Err(#cut_l) => {
                            (#timed_out(#cut_l), #deadline_l)
                        }
                    }
                };
            }
        }
        None => {
            let attempt = match inline {
                Some(attempt::Inline { stmts, labelled }) => {
                    let label = labelled.then(|| quote!(#label:));
                    quote!(#label { #rebind #stmts })
                }
                None => quote!({ #outside #nested.await }),
            };
            quote! {
                let #out_l: #ret = #attempt;
            }
        }
    }
}

/// A `#[track_caller]` sync fn: the async loop's shape, its attempt inline, waiting with the
/// blocking sleep the runtime's loop uses.
fn sync_inline_loop(cx: &Cx, inline: attempt::Inline, rebind: &Rebind) -> TokenStream {
    let Cx {
        p,
        p_ret,
        ret,
        state_l,
        out_l,
        delay_l,
        label,
        ..
    } = cx;
    let attempt::Inline { stmts, labelled } = inline;
    let label = labelled.then(|| quote!(#label:));
    let (setup, start_item, admit, attempt_bind) =
        (setup(cx), cx.start_item(), admit(cx), cx.attempt_bind());
    let Judge {
        verdict,
        succeeded,
        paid,
        failed,
        cont_pat,
        last_val,
        last_bind,
        after_wait,
    } = judge(cx);
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
            let #last_bind = {
                #verdict
                if #succeeded {
                    #paid;
                    return #out_l;
                }
                match #failed {
                    #p::ControlFlow::Break(#out_l) => return #out_l,
                    #p::ControlFlow::Continue(#cont_pat) => {
                        #p::sleep_blocking(#delay_l);
                        #last_val
                    }
                }
            };
            #after_wait
        }
    }
}

/// Any other sync fn: the attempt a closure, handed to the runtime's blocking loop.
fn sync_closure(cx: &Cx, sig: &syn::Signature, rebind: &Rebind, body: &TokenStream) -> TokenStream {
    let Cx {
        name,
        for_ret,
        policy_l,
        hooks_l,
        ..
    } = cx;
    let args = cx.args;
    let op_l = local("__retry_op", cx.ret_span);
    // `move`: the attempt owns its copies of the arguments (a reference is copied, a by-value
    // argument moved in and cloned per call), so nothing needs a stack slot on the success
    // path. Unless a hook borrows one of them too: then the attempt borrows.
    let hooks = [&args.on, &args.notify, &args.give_up, &args.budget];
    let capture = (!params::named_by(sig, hooks.into_iter().flatten())).then(|| quote!(move));
    let run_blocking = quote_spanned! {cx.ret_span=>
        #for_ret::run_blocking(#policy_l, &#hooks_l, #name, #op_l)
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

/// Before each attempt of a loop written here, the guards are asked (the runtime's loops ask
/// them themselves); without a guard, nothing.
fn admit(cx: &Cx) -> TokenStream {
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
struct Judge {
    /// What the outcome is: a success (an `Ok`, unless `on_ok` retries it), an error, or an
    /// `Ok` to retry.
    verdict: TokenStream,
    /// Whether it is a success.
    succeeded: TokenStream,
    /// A success's accounting (`LoopState::succeeded`).
    paid: TokenStream,
    /// The step after a failure: `Break` with the outcome to return, or `Continue` with the
    /// wait (`cont_pat`), and the last outcome where it is kept (`last_val`, bound to
    /// `last_bind` through the wait).
    failed: TokenStream,
    cont_pat: TokenStream,
    last_val: TokenStream,
    last_bind: TokenStream,
    /// What runs after the wait.
    after_wait: TokenStream,
}

/// How a loop written here judges an attempt's outcome, and what it keeps through the wait.
fn judge(cx: &Cx) -> Judge {
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

/// `#[track_caller]` on a sync fn whose attempt cannot be written inline: said on what keeps it
/// from being, with what to write instead.
fn track_caller_error(opaque: attempt::Opaque, attr: &syn::Attribute) -> syn::Error {
    const WHY: &str = "so each attempt would run in a closure, and a closure cannot be \
                       `#[track_caller]`";
    match opaque {
        attempt::Opaque::Macro { path, known } => {
            let mut name = String::new();
            for s in &path.segments {
                if !name.is_empty() {
                    name.push_str("::");
                }
                name.push_str(&s.ident.to_string());
            }
            let message = if known {
                format!(
                    "`#[retry]` cannot keep `#[track_caller]` with a `?` or `return` inside \
                     `{name}!(…)`, where it cannot rewrite them to end the attempt, {WHY}; \
                     move them out of the macro's arguments (`let value = f()?;` before it), \
                     or remove `#[track_caller]`"
                )
            } else {
                format!(
                    "`#[retry]` cannot keep `#[track_caller]` with `{name}!` in the body: a \
                     macro other than the standard library's may hide a `return`, {WHY}; call \
                     `{name}!` from a function of your own that the body calls, or remove \
                     `#[track_caller]`"
                )
            };
            syn::Error::new_spanned(path, message)
        }
        attempt::Opaque::Verbatim(span) => syn::Error::new(
            span,
            format!(
                "`#[retry]` cannot keep `#[track_caller]` with this in the body: syntax it \
                 cannot read, which may hide a `return` or `?`, {WHY}; remove \
                 `#[track_caller]`"
            ),
        ),
        attempt::Opaque::Unparsed => syn::Error::new_spanned(
            attr,
            format!(
                "`#[retry]` cannot keep `#[track_caller]` on a body it cannot read, {WHY}; \
                 remove `#[track_caller]`"
            ),
        ),
    }
}

fn policy_is_const(args: &Args) -> bool {
    let lit = |d: &Option<DurationArg>| !matches!(d, Some(DurationArg::Expr(_)));
    args.policy.is_none()
        && !matches!(args.attempts, Some(AttemptsArg::Expr(_)))
        && lit(&args.base)
        && lit(&args.cap)
        && lit(&args.max_elapsed)
}

/// The `Policy` expression: a `policy = …` key, or the defaults changed by the keys given.
fn policy(args: &Args, p: &TokenStream) -> TokenStream {
    if let Some(policy) = &args.policy {
        let head = quote_spanned!(policy.span()=> #p::policy);
        return quote!(#head(#policy));
    }
    let mut out = quote!(#p::Policy::new());
    match &args.attempts {
        Some(AttemptsArg::Lit(n, span)) => out.extend(quote_spanned!(*span=> .with_attempts(#n))),
        Some(AttemptsArg::Expr(e)) => out.extend(quote_spanned!(e.span()=> .with_attempts(#e))),
        None => {}
    }
    for (arg, setter) in [
        (&args.base, "with_base"),
        (&args.cap, "with_cap"),
        (&args.max_elapsed, "with_max_elapsed"),
    ] {
        if let Some(arg) = arg {
            let setter = Ident::new(setter, Span::call_site());
            let value = arg.to_tokens(p);
            out.extend(quote!(.#setter(#value)));
        }
    }
    if let Some(jitter) = &args.jitter {
        out.extend(quote!(.with_jitter(#p::Jitter::#jitter)));
    }
    out
}

/// Whether the return type may be a `Result` (or an alias of one). Where it visibly is not, the
/// one error about it is all the user should see, and a `?` that suits it (on an `Option` in a
/// function returning an `Option`) must not be another: the attempt stays a nested block, where
/// `?` is rustc's own.
fn could_be_result(ret: &Type) -> bool {
    match ret {
        Type::Path(path) => path.path.segments.last().is_some_and(|last| {
            !["Option", "Poll", "ControlFlow"]
                .iter()
                .any(|name| last.ident == name)
        }),
        Type::Group(group) => could_be_result(&group.elem),
        Type::Paren(paren) => could_be_result(&paren.elem),
        _ => false,
    }
}

/// The return type the default `on` is chosen on: `()` for each erased `impl Trait` (a `_`,
/// which nothing there would infer). The choice looks at the error type only; an opaque one
/// (`impl Error`) is not known to be `Transient`, so every error is retried.
fn default_on_chooser(ret: &Type) -> Type {
    struct Fill;
    impl crate::walk::VisitMut for Fill {
        fn visit_type_mut(&mut self, ty: &mut Type) {
            match ty {
                Type::Infer(_) => *ty = syn::parse_quote!(()),
                _ => crate::walk::visit_type_mut(self, ty),
            }
        }
    }
    let mut ty = ret.clone();
    crate::walk::VisitMut::visit_type_mut(&mut Fill, &mut ty);
    ty
}

/// `impl Trait` cannot be named in an expression: replace it with `_`, left to inference.
fn erase_impl_trait(ty: &Type) -> Type {
    let mut ty = ty.clone();
    erase(&mut ty);
    ty
}

fn erase(ty: &mut Type) {
    match ty {
        Type::ImplTrait(_) => *ty = syn::parse_quote!(_),
        Type::Reference(r) => erase(&mut r.elem),
        Type::Ptr(p) => erase(&mut p.elem),
        Type::Slice(s) => erase(&mut s.elem),
        Type::Array(a) => erase(&mut a.elem),
        Type::Paren(p) => erase(&mut p.elem),
        Type::Group(g) => erase(&mut g.elem),
        Type::Tuple(t) => {
            for i in 0..t.elems.len() {
                erase(&mut t.elems[i]);
            }
        }
        Type::Path(path) => {
            if let Some(q) = &mut path.qself {
                erase(&mut q.ty);
            }
            for seg in &mut path.path.segments {
                if let PathArguments::AngleBracketed(a) = &mut seg.arguments {
                    for i in 0..a.args.len() {
                        if let GenericArgument::Type(t) = &mut a.args[i] {
                            erase(t);
                        }
                    }
                }
            }
        }
        _ => {}
    }
}
