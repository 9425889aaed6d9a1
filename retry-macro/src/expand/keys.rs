//! How each attribute key becomes code: the policy, the `timeout`, and the hooks the runtime's
//! loop calls.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{Ident, Type};

use super::awaited::{awaited, sync_part, AsyncCheck};
use super::context::{Calling, Context};
use super::hook::{hook, Check};
use crate::args::{Args, AttemptsArg, DurationArg};
use crate::respan::respan;
use crate::valid::Features;

/// The policy, the `timeout` and the hooks, bound before any attempt.
pub(super) fn setup(cx: &Context) -> TokenStream {
    let Context {
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
    let HookFields {
        on,
        notify,
        give_up,
        budget,
        trace,
        on_ok,
        breaker,
        throttle,
    } = hooks(cx);
    // The return type checked first, by `IsResult`'s own (empty, inlined) method.
    //
    // A type that is not a `Result` gets that message alone, not the loop's bound and its file
    // again.
    //
    // A type with an `impl Trait` cannot be named here: the loop checks it.
    let ret = &cx.ret;
    let ret_check = (!cx.ret_has_impl).then(|| {
        quote_spanned!(cx.ret_span=> #p_ret::IsResult::returned(::core::marker::PhantomData::<#ret>);)
    });
    // The cancel token, beside the guards, only where `cancel` is given.
    //
    // Without it, the guards' type, and so the expansion, is unchanged.
    let guard = match &cx.args.cancel {
        Some(token) => {
            let span = token.span();
            let p_at = respan(p, span);
            quote_spanned!(span=> ((#breaker, #throttle), #p_at::CancelArg::cancelling(#token)))
        }
        None => quote!((#breaker, #throttle)),
    };
    // The call's figures, kept by a recorder made as the call starts, among the guards.
    //
    // Only where `stats` is given or a hook is awaited: the recorder keeps what it is handed.
    //
    // Without them, the expansion is unchanged.
    let awaits = [cx.notify, cx.give_up, cx.stats]
        .into_iter()
        .any(Calling::awaits);
    let (recorder, guard) = match (&cx.args.stats, awaits) {
        (None, false) => (TokenStream::new(), guard),
        _ => {
            let Context {
                clock,
                name,
                stats_l,
                ..
            } = cx;
            let hook = match cx.stats {
                Calling::Sync if cx.args.stats.is_some() => {
                    hook(cx, &cx.args.stats, Check::Stats, TokenStream::new())
                }
                Calling::Sync | Calling::Async => quote!(#p::Unset),
                Calling::Either => hook(
                    cx,
                    &sync_part("stats", &cx.args.stats),
                    Check::StatsValue,
                    TokenStream::new(),
                ),
            };
            // Every call's figures for an awaited `stats`.
            //
            // The event and error kept for an awaited `notify`; an awaited `give_up` alone reads
            // only a give-up.
            let hook = if awaits {
                let (all, notify) = (cx.stats.awaits(), cx.notify.awaits());
                quote!(#p::ReadAfter::<_, #all, #notify>(#hook))
            } else {
                hook
            };
            (
                quote!(let #stats_l = #p::Recorder::new(#hook, #clock, #name);),
                quote!((#guard, &#stats_l)),
            )
        }
    };
    let awaited = [
        (cx.notify, &cx.args.notify, "notify", AsyncCheck::Notify),
        (cx.give_up, &cx.args.give_up, "give_up", AsyncCheck::GiveUp),
        (cx.stats, &cx.args.stats, "stats", AsyncCheck::Stats),
    ]
    .into_iter()
    .map(|(calling, value, key, check)| awaited(cx, calling, value, key, check));
    quote_spanned! {cx.ret_span=>
        #ret_check
        #policy_item
        #timeout_item
        #(#awaited)*
        #recorder
        let #hooks_l = #p_ret::Hooks {
            on: #on,
            notify: #notify,
            give_up: #give_up,
            budget: #budget,
            trace: #trace,
            on_ok: #on_ok,
            guard: #guard,
        };
    }
}

/// The tokens of each field of the runtime's `Hooks`.
struct HookFields {
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
fn hooks(cx: &Context) -> HookFields {
    let Context { p, p_ret, .. } = cx;
    let args = cx.args;
    // No `on`: an error type that implements `Transient` is classified by it.
    //
    // Any other is retried on every error (autoref specialisation on the return type, see
    // `DefaultOn`).
    let chooser = default_on_chooser(&cx.ret);
    let on = hook(
        cx,
        &args.on,
        Check::On,
        quote_spanned! {cx.ret_span=> {
            #[allow(unused_imports)]
            use #p_ret::{OnEvery as _, OnTransient as _};
            (&&#p_ret::DefaultOn::<#chooser>::new()).default_on()
        }},
    );
    // A closure gets its signature from `notifier`.
    //
    // Any other value is checked as a `Notify` by `notify_value`: a fn path, or a `Notify` value
    // of the user's own type, which hears of hedges and retried `Ok`s.
    let notifier = match &args.notify {
        Some(syn::Expr::Closure(_)) | None => Check::Notify,
        Some(_) => Check::NotifyValue,
    };
    let notify = match cx.notify {
        Calling::Sync => hook(cx, &args.notify, notifier, quote!(#p_ret::Unset)),
        Calling::Async => quote!(#p_ret::Unset),
        Calling::Either => hook(
            cx,
            &sync_part("notify", &args.notify),
            notifier,
            quote!(#p_ret::Unset),
        ),
    };
    let on_ok = hook(cx, &args.on_ok, Check::OnOk, quote!(#p_ret::AcceptOk));
    let give_up = match cx.give_up {
        Calling::Sync => hook(cx, &args.give_up, Check::GiveUp, quote!(#p_ret::Unset)),
        Calling::Async => quote!(#p_ret::Unset),
        Calling::Either => hook(
            cx,
            &sync_part("give_up", &args.give_up),
            Check::GiveUpValue,
            quote!(#p_ret::Unset),
        ),
    };
    let budget = match &args.budget {
        Some(budget) => {
            let p_at = respan(p, budget.span());
            quote_spanned!(budget.span()=> #p_at::BudgetArg::budget(#budget))
        }
        None if args.budget_none.is_some() => quote!(#p_ret::Unset),
        // The function's own budget: one `static` per annotated function.
        //
        // Every call of it shares it, whatever its generic arguments.
        //
        // It is reached through a type of no size, so the hooks the loop is handed hold nothing
        // for it.
        //
        // A success path that keeps nothing on the stack needs no frame.
        None => quote! {{
            struct __RetryJitterBudget;
            impl #p_ret::Budget for __RetryJitterBudget {
                type Shared = #p_ret::DefaultBudget;
                #[inline]
                fn get(&self) -> #p_ret::Option<&#p_ret::DefaultBudget> {
                    static BUDGET: #p_ret::DefaultBudget = #p_ret::DefaultBudget::new();
                    #p_ret::Option::Some(&BUDGET)
                }
            }
            __RetryJitterBudget
        }},
    };
    HookFields {
        on,
        notify,
        give_up,
        budget,
        trace: trace(cx),
        on_ok,
        breaker: guard(cx, &args.breaker, ("FromCircuitOpen", "breaker_guard")),
        throttle: guard(cx, &args.throttle, ("FromThrottled", "throttle_guard")),
    }
}

/// The breaker and the throttle, through helpers spanned at their keys.
///
/// An error type without the `From` they need is reported there.
fn guard(
    cx: &Context,
    arg: &Option<(Ident, syn::Expr)>,
    (from, helper): (&str, &str),
) -> TokenStream {
    match arg {
        Some((key, value)) => {
            let (p_key, ret_key) = (
                respan(&cx.p, key.span()),
                respan(&cx.ret.to_token_stream(), key.span()),
            );
            let (from, helper) = (Ident::new(from, key.span()), Ident::new(helper, key.span()));
            quote_spanned!(key.span()=> <_ as #p_key::#from>::#helper::<#ret_key>(#value))
        }
        None => {
            let p_ret = &cx.p_ret;
            quote!(#p_ret::Unset)
        }
    }
}

/// The tracer, where the `tracing` feature is built in.
///
/// Each retry's event is at `trace_level`, the error shown as its type allows.
fn trace(cx: &Context) -> TokenStream {
    let Context {
        p_ret,
        ret,
        ret_span,
        ..
    } = cx;
    let ret_span = *ret_span;
    if !Features::BUILT.tracing {
        return quote!(#p_ret::Unset);
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
        (&args.rate_limited_base, "with_rate_limited_base"),
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

/// The return type the default `on` is chosen on.
///
/// `()` stands for each erased `impl Trait`: a `_`, which nothing there would infer.
///
/// The choice looks at the error type only.
///
/// An opaque one (`impl Error`) is not known to be `Transient`, so every error is retried.
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
