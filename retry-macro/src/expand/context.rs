//! What every shape of the new body is written with.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{GenericArgument, Ident, PathArguments, Type};

use crate::args::{Args, AttemptsArg, DurationArg};
use crate::respan::respan;
use crate::valid::Features;

/// A generated local: invisible to the user's code (mixed-site hygiene).
///
/// It is located at `at`.
///
/// So the calls it appears in are reported there.
pub(super) fn local(name: &str, at: Span) -> Ident {
    Ident::new(name, Span::mixed_site().located_at(at))
}

/// What every shape of the new body is written with.
///
/// It holds the paths, return type, keys' choices and generated locals.
///
/// Everything the expansion adds is spanned at the return type.
///
/// What stands for a key's value is the exception.
///
/// An error about the return type then has one span.
///
/// So it is reported once.
pub(super) struct Context<'a> {
    pub(super) args: &'a Args,
    /// `#krate::__private`, and the same spanned at the return type.
    pub(super) p: TokenStream,
    pub(super) p_ret: TokenStream,
    /// The return type, `impl Trait` erased to `_`, and where it is written.
    pub(super) ret: Type,
    /// Whether the return type had an `impl Trait` (now `_` in [`Context::ret`]).
    ///
    /// Then it cannot be checked on its own, before the loop infers it.
    pub(super) ret_has_impl: bool,
    pub(super) ret_span: Span,
    /// The function's name, for the runtime's events.
    pub(super) name: syn::LitStr,
    pub(super) is_async: bool,
    /// A policy of literals is a constant.
    ///
    /// Nothing to store, not even in an async fn's future.
    ///
    /// Nothing to compute per call.
    pub(super) policy_const: bool,
    /// Whether the last error is kept through a wait.
    ///
    /// It is kept only where a deadline or a cancel may end the call after the wait.
    ///
    /// That is `max_elapsed`, a `policy` that may have one, or `cancel`.
    ///
    /// Elsewhere the future holds nothing of the error type across any `.await`.
    ///
    /// So the future is `Send` whatever that type is.
    pub(super) keeps_last: bool,
    /// `Loop::<R>`, through which every call about `R` goes.
    pub(super) ret_loop: TokenStream,
    /// The `sleep` key's function, else tokio's.
    pub(super) sleep: TokenStream,
    /// The clock the waits are measured on.
    pub(super) clock: TokenStream,
    /// The start time: a local where a time budget may be set.
    ///
    /// Else a constant `None`.
    pub(super) start: TokenStream,
    /// The names of the generated locals (`_l`).
    ///
    /// - The policy and the hooks.
    /// - The loop's state and an attempt's outcome.
    /// - The wait, and the last outcome kept through it.
    /// - The start time and the `timeout`.
    pub(super) policy_l: Ident,
    pub(super) hooks_l: Ident,
    /// The call's recorder of its figures.
    ///
    /// It serves `stats` and an `async fn`'s awaited hooks.
    pub(super) stats_l: Ident,
    /// How `notify`, `give_up` and `stats` are called.
    pub(super) notify: Calling,
    pub(super) give_up: Calling,
    pub(super) stats: Calling,
    pub(super) state_l: Ident,
    pub(super) out_l: Ident,
    pub(super) delay_l: Ident,
    pub(super) last_l: Ident,
    /// With `cancel`, in an `async fn`: the last outcome.
    ///
    /// That outcome is kept through the next attempt.
    pub(super) kept_l: Ident,
    pub(super) start_l: Ident,
    pub(super) timeout_l: Ident,
    /// The label of an inline attempt.
    ///
    /// Its `return`s and `?`s break to it.
    pub(super) label: syn::Lifetime,
}

impl<'a> Context<'a> {
    pub(super) fn new(
        args: &'a Args,
        p: TokenStream,
        ret: &Type,
        ident: &Ident,
        is_async: bool,
    ) -> Self {
        let ret_span = ret.span();
        let (ret, ret_has_impl) = erase_impl_trait(ret);
        let name = syn::LitStr::new(&ident.unraw().to_string(), ret_span);
        let p_ret = respan(&p, ret_span);
        let policy_const = policy_is_const(args);
        // The state is spanned at the return type, not mixed-site.
        //
        // So is the outcome below.
        //
        // The after-wait call taking the state may then report `R` not being a `Result`.
        //
        // That call reports it where the other calls do, once.
        let policy_l = if policy_const {
            Ident::new("__RETRY_POLICY", Span::mixed_site().located_at(ret_span))
        } else {
            local("__retry_policy", ret_span)
        };
        // The outcome is bound after the attempt, unseen by the body.
        //
        // So it can have the return type's own span.
        //
        // `succeeded(&outcome)` may report that `R` is not a `Result`.
        //
        // That error is then reported with the others, once.
        let (state_l, out_l) = (
            Ident::new("__retry_state", ret_span),
            Ident::new("__retry_out", ret_span),
        );
        let sleep = match &args.sleep {
            Some((_, sleep)) => sleep.to_token_stream(),
            None => quote!(#p::tokio_sleep),
        };
        // The clock the waits are measured on: the `clock` key's.
        //
        // Else tokio's clock whenever tokio is built in, even with the user's `sleep`.
        //
        // A paused test clock then still holds.
        //
        // Off a tokio runtime, tokio's clock is the system clock.
        //
        // Else the monotonic system clock.
        let clock = match &args.clock {
            Some((_, clock)) => clock.to_token_stream(),
            None if Features::BUILT.tokio && is_async => quote!(#p::tokio_now),
            None => quote!(#p::now),
        };
        // The start time is kept only where a time budget may be set.
        //
        // Otherwise it is a constant `None`.
        //
        // The future then does not carry the start time.
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
        // A hook an `async fn` may await.
        //
        // That is an async closure, or a path (sorted by type).
        //
        // In a hedged `async fn`, `notify` is not such a hook.
        //
        // The runtime's hedging loop calls its hooks itself.
        let hedged = args.hedge.is_some();
        let notify = Calling::of(&args.notify, is_async && !hedged);
        let (give_up, stats) = (
            Calling::of(&args.give_up, is_async),
            Calling::of(&args.stats, is_async),
        );
        Context {
            args,
            ret_loop: quote_spanned!(ret_span=> #p_ret::Loop::<#ret>),
            p,
            p_ret,
            name,
            is_async,
            policy_const,
            keeps_last: args.policy.is_some()
                || args.max_elapsed.is_some()
                || args.cancel.is_some()
                || notify.awaits(),
            notify,
            give_up,
            stats,
            sleep,
            clock,
            start,
            policy_l,
            hooks_l: local("__retry_hooks", ret_span),
            stats_l: local("__retry_stats", ret_span),
            state_l,
            out_l,
            delay_l: local("__retry_delay", ret_span),
            last_l: local("__retry_last", ret_span),
            kept_l: local("__retry_kept", ret_span),
            start_l,
            timeout_l,
            label: syn::Lifetime {
                apostrophe: Span::mixed_site().located_at(ret_span),
                ident: local("__retry_attempt", ret_span),
            },
            ret,
            ret_has_impl,
            ret_span,
        }
    }

    /// The start time, where a time budget may be set.
    pub(super) fn start_item(&self) -> TokenStream {
        let Context {
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
    pub(super) fn pin(&self) -> TokenStream {
        let (ret, pin_l) = (&self.ret, local("__retry_pin", self.ret_span));
        quote_spanned! {self.ret_span=>
            if let ::core::option::Option::Some(#pin_l) = ::core::option::Option::None::<#ret> {
                return #pin_l;
            }
        }
    }

    /// `attempt = n`: the body's `n`, the running attempt's number.
    ///
    /// A closure (the blocking loop's, a hedge's) is handed it as its parameter.
    pub(super) fn attempt_param(&self) -> TokenStream {
        match &self.args.attempt {
            Some((_, name)) => name.to_token_stream(),
            None => quote!(_),
        }
    }

    /// `attempt = n` in a loop written here: read off the state.
    pub(super) fn attempt_bind(&self) -> TokenStream {
        let Context { p, state_l, .. } = self;
        match &self.args.attempt {
            Some((_, name)) => quote_spanned! {name.span()=>
                let #name: u32 = #p::LoopState::attempt(&#state_l);
            },
            None => TokenStream::new(),
        }
    }

    /// The conversion of a cut attempt into the function's error,
    /// `R::from_err(E::from(TimedOut))`.
    ///
    /// A missing `From<TimedOut>` is reported at the `timeout` key.
    pub(super) fn timed_out(&self, key: &Ident) -> TokenStream {
        let (p_key, ret_key) = (
            respan(&self.p, key.span()),
            respan(&self.ret.to_token_stream(), key.span()),
        );
        quote_spanned!(key.span()=> <_ as #p_key::FromTimedOut>::timed_out::<#ret_key>)
    }
}

/// How a hook key's value is called.
///
/// - By the loop: a sync hook.
/// - Awaited by the `async fn` itself: an async closure.
/// - Either, as its type says: a path in an `async fn`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Calling {
    /// No value, or a sync one.
    Sync,
    /// An async closure.
    Async,
    /// A path or another value, in an `async fn`.
    Either,
}

impl Calling {
    /// How `value` is called, in a function whose hooks `may_await`.
    fn of(value: &Option<syn::Expr>, may_await: bool) -> Self {
        match value {
            Some(syn::Expr::Closure(c)) if c.asyncness.is_some() => Calling::Async,
            Some(syn::Expr::Closure(_)) | None => Calling::Sync,
            Some(_) if may_await => Calling::Either,
            Some(_) => Calling::Sync,
        }
    }

    /// Whether the function may await it.
    pub(super) fn awaits(self) -> bool {
        self != Calling::Sync
    }
}

/// Replaces `impl Trait` with `_`, left to inference.
///
/// `impl Trait` cannot be named in an expression.
///
/// It also returns whether there was one to replace.
fn erase_impl_trait(ty: &Type) -> (Type, bool) {
    let mut ty = ty.clone();
    let erased = erase(&mut ty);
    (ty, erased)
}

fn erase(ty: &mut Type) -> bool {
    match ty {
        Type::ImplTrait(_) => {
            *ty = syn::parse_quote!(_);
            true
        }
        Type::Reference(r) => erase(&mut r.elem),
        Type::Ptr(p) => erase(&mut p.elem),
        Type::Slice(s) => erase(&mut s.elem),
        Type::Array(a) => erase(&mut a.elem),
        Type::Paren(p) => erase(&mut p.elem),
        Type::Group(g) => erase(&mut g.elem),
        Type::Tuple(t) => {
            let mut erased = false;
            for i in 0..t.elems.len() {
                erased |= erase(&mut t.elems[i]);
            }
            erased
        }
        Type::Path(path) => {
            let mut erased = false;
            if let Some(q) = &mut path.qself {
                erased |= erase(&mut q.ty);
            }
            for seg in &mut path.path.segments {
                if let PathArguments::AngleBracketed(a) = &mut seg.arguments {
                    for i in 0..a.args.len() {
                        if let GenericArgument::Type(t) = &mut a.args[i] {
                            erased |= erase(t);
                        }
                    }
                }
            }
            erased
        }
        _ => false,
    }
}

/// Whether the policy is known at compile time.
///
/// That needs no `policy` key, and a literal for every key it is made of.
///
/// It is then a `const`, and the loop reads it as one.
pub(super) fn policy_is_const(args: &Args) -> bool {
    let lit = |d: &Option<DurationArg>| !matches!(d, Some(DurationArg::Expr(_)));
    args.policy.is_none()
        && !matches!(args.attempts, Some(AttemptsArg::Expr(_)))
        && lit(&args.base)
        && lit(&args.cap)
        && lit(&args.max_elapsed)
        && lit(&args.rate_limited_base)
}
