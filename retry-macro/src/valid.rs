//! Every semantic check of the macro.
//!
//! The checks run between parsing (args.rs, item.rs) and expansion (expand/).
//!
//! So the expansion cannot fail.
//!
//! - Keys that cannot go together.
//! - A key on the wrong kind of fn.
//! - A function that cannot be retried.
//! - A body its expansion could not keep.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ReturnType, Signature};

use crate::args::{set_by_policy, Args, AttemptsArg, DurationArg};
use crate::duration;
use crate::inline_attempt::{self, NotInline};
use crate::item::Item;
use crate::signature::{
    is_borrowed_impl, receiver_type, returned_borrows, strip_group, ReturnedBorrow,
};

/// The facade's features the expansion depends on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Features {
    pub tokio: bool,
    pub tracing: bool,
}

impl Features {
    /// The features this build of the macro was compiled with.
    ///
    /// The facade forwards them.
    pub(crate) const BUILT: Features = Features {
        tokio: cfg!(feature = "tokio"),
        tracing: cfg!(feature = "tracing"),
    };
}

const DEFAULT_BASE_NANOS: u128 = 200_000_000;
const DEFAULT_CAP_NANOS: u128 = 30_000_000_000;

/// The attribute's errors, all reported together.
///
/// They start with args.rs's errors of reading.
///
/// Each key's value is checked in its place among those.
///
/// Then the keys are checked against each other.
pub(crate) fn args(args: &Args) -> syn::Result<()> {
    let mut errors: Vec<syn::Error> = Vec::new();
    let mut reported = 0;
    for (key, before) in &args.keys {
        if let Some(error) = value_error(args, key) {
            errors.extend_from_slice(&args.errors[reported..*before]);
            reported = *before;
            errors.push(error);
        }
    }
    errors.extend_from_slice(&args.errors[reported..]);
    errors.extend(between_keys(args));
    combined(errors)
}

/// A value its key reads but cannot mean.
fn value_error(args: &Args, key: &Ident) -> Option<syn::Error> {
    match &args.attempts {
        Some(AttemptsArg::Lit(0, span)) if key == "attempts" => Some(syn::Error::new(
            *span,
            "`attempts = 0` would never call the function: `attempts` counts every call, \
             the first included; write `attempts = 1` for no retries",
        )),
        _ => None,
    }
}

/// Checks between keys, returning the first that fails.
///
/// `policy` is checked against the keys it replaces.
///
/// `cap` is checked against `base`.
fn between_keys(args: &Args) -> Option<syn::Error> {
    if args.policy.is_some() {
        if let Some((key, _)) = args
            .keys
            .iter()
            .find(|(k, _)| set_by_policy(&k.to_string()))
        {
            return Some(syn::Error::new(
                key.span(),
                format!(
                    "`{key}` cannot be combined with `policy`: the policy already sets it; \
                     set it on the Policy instead (`Policy::new().with_{key}(…)`) \
                     or remove `policy`"
                ),
            ));
        }
    }
    let lit = |arg: &Option<DurationArg>| match arg {
        Some(DurationArg::Lit { nanos, lit }) => Some((*nanos, lit.span())),
        _ => None,
    };
    let (base, cap) = (lit(&args.base), lit(&args.cap));
    // `rate_limited_base` above the cap makes every rate-limited wait the cap.
    let cap_known = match (cap, &args.cap) {
        (Some((c, _)), _) => Some(c),
        (None, None) => Some(DEFAULT_CAP_NANOS),
        _ => None,
    };
    if let (Some((r, span)), Some(c)) = (lit(&args.rate_limited_base), cap_known) {
        if c < r {
            let (r, c) = (duration::show(r), duration::show(c));
            let default = if args.cap.is_none() {
                "the default, "
            } else {
                ""
            };
            return Some(syn::Error::new(
                span,
                format!(
                    "`rate_limited_base` ({r}) is above `cap` ({default}{c}): every wait \
                     after a rate-limited error would be cut to the cap; raise `cap` to at \
                     least {r} or lower `rate_limited_base`"
                ),
            ));
        }
    }
    let (base_nanos, cap_nanos, span) = match (base, cap, &args.base, &args.cap) {
        (Some((b, _)), Some((c, span)), _, _) => (b, c, span),
        (Some((b, span)), None, _, None) => (b, DEFAULT_CAP_NANOS, span),
        (None, Some((c, span)), None, _) => (DEFAULT_BASE_NANOS, c, span),
        _ => return None,
    };
    if cap_nanos < base_nanos {
        let (b, c) = (duration::show(base_nanos), duration::show(cap_nanos));
        let default = |arg: &Option<DurationArg>| if arg.is_none() { "the default, " } else { "" };
        return Some(syn::Error::new(
            span,
            format!(
                "`cap` ({}{c}) is below `base` ({}{b}): every wait would be cut to the cap; \
                 raise `cap` to at least {b} or lower `base`",
                default(&args.cap),
                default(&args.base)
            ),
        ));
    }
    None
}

/// Everything that makes a function impossible to retry.
///
/// Each error is on its token; all are reported together.
///
/// `features`: whether an `async fn` without `sleep` has tokio's timer.
///
/// It also says whether trace events can be emitted (feature `tracing`).
pub(crate) fn item(args: &Args, item: &Item, features: Features) -> syn::Result<()> {
    let mut errors: Vec<syn::Error> = Vec::new();
    let sig = &item.sig;
    if let Some(c) = &sig.constness {
        errors.push(syn::Error::new(
            c.span(),
            "`#[retry]` cannot make a `const fn` retry: waiting is not possible in const \
             evaluation; remove `const`",
        ));
    }
    if item.body.is_none() {
        errors.push(syn::Error::new(
            sig.ident.span(),
            "`#[retry]` needs a body to retry, and this trait method has none; \
             put `#[retry]` on the method in each `impl`, or give the method a default body",
        ));
    }
    if let ReturnType::Default = sig.output {
        errors.push(syn::Error::new(
            sig.paren_token.span.close(),
            "`#[retry]` needs a function that returns a `Result`: retrying decides on the \
             error; add a return type like `-> Result<(), MyError>`",
        ));
    }
    let output = match (&item.async_trait, &sig.output) {
        (Some(async_trait), _) => Some(&async_trait.output),
        (None, ReturnType::Type(_, ret)) => Some(&**ret),
        (None, ReturnType::Default) => None,
    };
    if let Some(error) = output.and_then(returns_option) {
        errors.push(error);
    }
    // A sync fn's attempts run in a closure, unless it is `#[track_caller]` (expand/sync.rs).
    let closure = !item.is_async() && !item.attrs.iter().any(|a| a.path().is_ident("track_caller"));
    if let Some(error) = output.and_then(|output| borrow_of_mut(sig, output, closure)) {
        errors.push(error);
    }
    if let Some(v) = &sig.variadic {
        errors.push(syn::Error::new(
            v.span(),
            "`#[retry]` cannot retry a variadic function: remove `...`",
        ));
    }
    if !item.is_async() {
        if let Some((key, _)) = &args.sleep {
            errors.push(syn::Error::new(
                key.span(),
                "`sleep` is the timer of `async fn`s; a sync function waits with \
                 `std::thread::sleep`: remove `sleep`",
            ));
        }
        if let Some((key, _)) = &args.clock {
            errors.push(syn::Error::new(
                key.span(),
                "`clock` is the clock of an `async fn`'s timer; a sync function is timed \
                 on the monotonic system clock: remove `clock`",
            ));
        }
        if let Some((key, _)) = &args.hedge {
            errors.push(syn::Error::new(
                key.span(),
                "`hedge` runs attempts side by side, and a sync function runs one at a \
                 time: make the function `async`, or remove `hedge`",
            ));
        }
        if let Some((key, _)) = &args.timeout {
            errors.push(syn::Error::new(
                key.span(),
                "`timeout` cannot cut a sync function: a running sync call cannot be \
                 interrupted; make the function `async`, or set the timeout on the I/O \
                 itself (`TcpStream::set_read_timeout`, reqwest's `ClientBuilder::timeout`) \
                 and remove `timeout`",
            ));
        }
    } else if args.sleep.is_none() && !features.tokio {
        // async-trait puts the `async` token's span on `fn`.
        let at = match &sig.asyncness {
            Some(asyncness) => asyncness.span,
            None => sig.fn_token.span,
        };
        errors.push(syn::Error::new(
            at,
            "an `async fn` needs a timer to wait between attempts: enable retry-jitter's \
             `tokio` feature, or give one with `sleep = my_runtime::sleep`",
        ));
    }
    if args.hedge.is_some() && item.is_async() {
        for arg in &sig.inputs {
            if let Some(error) = hedged_as_ref(arg) {
                errors.push(error);
            }
            if let Some(span) = exclusive_borrow(arg) {
                errors.push(syn::Error::new(
                    span,
                    "`hedge` runs attempts side by side, and they cannot share a `&mut` \
                     borrow: take this argument by `&` (with interior mutability if it must \
                     change) or by value (it is cloned per attempt), or remove `hedge`",
                ));
            }
        }
    }
    if let (Some(level), false) = (&args.trace_level, features.tracing) {
        errors.push(syn::Error::new(
            level.span(),
            "`trace_level` sets the level of trace events, and there are none without \
             retry-jitter's `tracing` feature: enable it, or remove `trace_level`",
        ));
    }
    combined(errors)
}

/// An `impl AsRef<U>` argument of a hedged function.
///
/// Each attempt is given a shared borrow of it (rebind.rs).
///
/// A hedged attempt is its own future, made by a closure.
///
/// Such an attempt cannot hold that borrow.
fn hedged_as_ref(arg: &FnArg) -> Option<syn::Error> {
    let FnArg::Typed(arg) = arg else { return None };
    let syn::Type::ImplTrait(it) = &*arg.ty else {
        return None;
    };
    if !is_borrowed_impl(&arg.ty) {
        return None;
    }
    let target = it.bounds.iter().find_map(|bound| match bound {
        syn::TypeParamBound::Trait(t) => t.path.segments.last().and_then(|s| match &s.arguments {
            syn::PathArguments::AngleBracketed(a) if s.ident == "AsRef" => a.args.get(0),
            _ => None,
        }),
        _ => None,
    })?;
    let pat = &arg.pat;
    Some(syn::Error::new_spanned(
        &arg.ty,
        format!(
            "`hedge` runs attempts side by side, each a future of its own, and an `impl AsRef` \
             argument is lent to each attempt, not owned by it: take `{pat}: &{target}` (a \
             caller holding an `impl AsRef<{target}>` passes `.as_ref()`), or an owned type \
             that is `Clone` (it is cloned per attempt)",
            pat = pat.to_token_stream(),
            target = target.to_token_stream(),
        ),
    ))
}

/// The span of an argument that is an exclusive borrow.
///
/// Those are `&mut T`, `&mut self` and `self: Pin<&mut Self>`.
///
/// Hedged attempts could not share such an argument.
fn exclusive_borrow(arg: &FnArg) -> Option<Span> {
    fn exclusive(ty: &syn::Type) -> bool {
        match ty {
            syn::Type::Reference(r) => r.mutability.is_some(),
            syn::Type::Group(g) => exclusive(&g.elem),
            syn::Type::Paren(p) => exclusive(&p.elem),
            syn::Type::Path(p) => p.path.segments.last().is_some_and(|last| {
                last.ident == "Pin"
                    && matches!(&last.arguments, syn::PathArguments::AngleBracketed(a)
                        if (0..a.args.len()).any(|i| matches!(&a.args[i], syn::GenericArgument::Type(t) if exclusive(t))))
            }),
            _ => false,
        }
    }
    match arg {
        FnArg::Receiver(r) => exclusive(&receiver_type(r)).then(|| r.span()),
        FnArg::Typed(t) => exclusive(&t.ty).then(|| t.span()),
    }
}

/// A function written to return an `Option<T>`.
///
/// The error at the type suggests `on_ok` or `.ok_or(..)`.
///
/// The type check's "return `Result<Option<T>, YourError>`" would help less.
///
/// Any other non-`Result` type is left to that check.
///
/// That check sees through aliases.
fn returns_option(output: &syn::Type) -> Option<syn::Error> {
    let syn::Type::Path(path) = strip_group(output) else {
        return None;
    };
    if path.qself.is_some() {
        return None;
    }
    let last = path.path.segments.last()?;
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let (1, Some(syn::GenericArgument::Type(value))) = (args.args.len(), args.args.first()) else {
        return None;
    };
    if last.ident != "Option" {
        return None;
    }
    let value = value.to_token_stream();
    Some(syn::Error::new_spanned(
        output,
        format!(
            "`#[retry]` needs a function that returns a `Result`, not `Option<{value}>`: it \
             retries on an error. To retry while the value is `None`, return \
             `Result<Option<{value}>, YourError>` and add `on_ok = |v| v.is_none()`; to make a \
             `None` an error, return `Result<{value}, YourError>` and write \
             `.ok_or(YourError)?` in the body"
        ),
    ))
}

/// A return type that may borrow from a `&mut` argument.
///
/// `&mut self` counts too.
///
/// With such a return type, the retried function cannot compile.
///
/// Each attempt re-borrows the argument.
///
/// The borrow checker cannot see that the returning attempt is the last.
///
/// That holds for any borrow out of a sync fn's closure (`closure`).
///
/// It holds for a maybe-mutable borrow wherever the attempt runs.
///
/// It is reported here, on the borrow.
///
/// rustc's errors would be about a closure or loop the user never wrote.
fn borrow_of_mut(sig: &Signature, output: &syn::Type, closure: bool) -> Option<syn::Error> {
    let ReturnedBorrow { name, at, .. } = returned_borrows(sig, output)
        .into_iter()
        .find(|borrow| closure || !borrow.shared)?;
    Some(syn::Error::new(
        at,
        format!(
            "`#[retry]` cannot return a borrow of `{name}`: each attempt re-borrows that `&mut` \
             for itself, and the borrow checker cannot see that the attempt which returns is \
             the last; return an owned value (`.to_owned()`, `.clone()`), or retry a \
             function that does not return the borrow and take it from `{name}` after the call"
        ),
    ))
}

/// The keys against the function's arguments, kind and body.
///
/// It runs on a function [`item`] accepts.
///
/// The first check that fails gives the one error.
pub(crate) fn expansion(args: &Args, item: &Item) -> syn::Result<()> {
    attempt_name(args, &item.sig)?;
    awaited(args, item.is_async())?;
    track_caller(args, item)
}

/// `attempt = name` must not hide the body's argument `name`.
fn attempt_name(args: &Args, sig: &Signature) -> syn::Result<()> {
    let Some((key, name)) = &args.attempt else {
        return Ok(());
    };
    let shadows = sig.inputs.iter().any(|input| match input {
        FnArg::Receiver(_) => name == "self",
        FnArg::Typed(arg) => binds(&arg.pat, name),
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

/// Whether one of `pats` binds `name`.
///
/// Indexed: `Punctuated`'s iterators are boxed `dyn` iterators.
///
/// Their vtable is compiled for each element type.
fn any_binds<P>(pats: &syn::punctuated::Punctuated<syn::Pat, P>, name: &Ident) -> bool {
    (0..pats.len()).any(|i| binds(&pats[i], name))
}

/// An async closure given to `notify`, `give_up` or `stats` is awaited by the function.
///
/// The function must be an `async fn`.
///
/// With an async `notify`, the function must not be hedged.
///
/// The runtime's hedging loop calls `notify` itself.
fn awaited(args: &Args, is_async: bool) -> syn::Result<()> {
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

/// `#[track_caller]` on a sync fn inlines its attempt (expand/sync.rs).
///
/// So a body that cannot be inline is an error.
///
/// The error points at what keeps the body from being inline.
///
/// Checked on the body the expansion inlines, made as it makes it.
///
/// That is rebind.rs's body.
///
/// Its `self` is renamed where each attempt has its own.
///
/// Its loop exits are fenced.
fn track_caller(args: &Args, item: &Item) -> syn::Result<()> {
    let (Some(attr), Some(body), ReturnType::Type(_, ret)) =
        (item.inline_track_caller(), &item.body, &item.sig.output)
    else {
        return Ok(());
    };
    // The signature rebound as the expansion rebinds it (a copy).
    //
    // Only which `self` the body is given is read.
    //
    // The facade's path is left out of the values.
    let rebind = crate::rebind::rebind(
        &mut item.sig.clone(),
        &TokenStream::new(),
        false,
        body,
        &args.values,
        ret,
    );
    let body = rebind.attempt_body(body.clone());
    // Whether the body can be inline does not depend on its label or paths.
    let label = syn::Lifetime::new("'attempt", Span::call_site());
    match inline_attempt::rewrite(&body, &label, &TokenStream::new(), ret.span()) {
        Ok(_) => Ok(()),
        Err(not_inline) => Err(track_caller_error(not_inline, attr)),
    }
}

/// `#[track_caller]` on a sync fn whose attempt cannot be inline.
///
/// The error points at the obstacle and says what to write instead.
fn track_caller_error(not_inline: NotInline, attr: &syn::Attribute) -> syn::Error {
    const WHY: &str = "so each attempt would run in a closure, and a closure cannot be \
                       `#[track_caller]`";
    match not_inline {
        NotInline::Macro { path, known } => {
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
        NotInline::Verbatim(span) => syn::Error::new(
            span,
            format!(
                "`#[retry]` cannot keep `#[track_caller]` with this in the body: syntax it \
                 cannot read, which may hide a `return` or `?`, {WHY}; remove \
                 `#[track_caller]`"
            ),
        ),
        NotInline::Unparsed => syn::Error::new_spanned(
            attr,
            format!(
                "`#[retry]` cannot keep `#[track_caller]` on a body it cannot read, {WHY}; \
                 remove `#[track_caller]`"
            ),
        ),
    }
}

/// The errors as one, in order, or none.
fn combined(errors: Vec<syn::Error>) -> syn::Result<()> {
    let mut errors = errors.into_iter();
    match errors.next() {
        None => Ok(()),
        Some(mut first) => {
            first.extend(errors);
            Err(first)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(args: &str, item: &str, tokio: bool) -> Result<(), String> {
        let args: Args = syn::parse_str(args).map_err(|e| e.to_string())?;
        let item: Item = syn::parse_str(item).map_err(|e| e.to_string())?;
        let features = Features {
            tokio,
            tracing: false,
        };
        super::item(&args, &item, features).map_err(|e| e.to_string())
    }

    #[test]
    fn a_borrow_of_a_mut_argument_cannot_be_returned() {
        let rejected = |sig: &str| {
            let item: Item = syn::parse_str(&format!("{sig} {{ todo!() }}")).unwrap();
            let args: Args = syn::parse_str("").unwrap();
            let features = Features {
                tokio: true,
                tracing: false,
            };
            super::item(&args, &item, features)
                .err()
                .map(|e| e.to_string())
                .filter(|e| e.contains("cannot return a borrow"))
        };
        for sig in [
            "fn f(v: &mut Vec<u8>) -> Result<&u8, E>",
            "fn f(&mut self) -> Result<&str, E>",
            "fn f<'a>(s: &str, v: &'a mut X) -> Result<&'a str, E>",
            "fn f(self: Pin<&mut Self>) -> Result<&u8, E>",
            "fn f(&mut self) -> Result<impl Iterator<Item = u8> + '_, E>",
            // Mutable, or maybe: no loop can hand it out twice, inline or not.
            "async fn f(&mut self) -> Result<&mut u8, E>",
            "async fn f(&mut self) -> Result<Guard<'_, u8>, E>",
            "#[track_caller] fn f(v: &mut X) -> Result<&mut u8, E>",
            // Through an outlives bound, or `Self`'s lifetimes.
            "async fn run<'e, 'c: 'e>(&'c mut self) -> Result<impl Stream + 'e, E>",
            "fn run<'e, 'c>(&'c mut self) -> Result<&'e u8, E> where 'c: 'e",
            "fn new(dst: &'d mut String) -> Result<Self, E>",
            "async fn new(dst: &'d mut String) -> Result<Option<Self>, E>",
        ] {
            let error = rejected(sig).unwrap_or_else(|| panic!("{sig}: accepted"));
            assert!(error.contains("re-borrows that `&mut`"), "{error}");
        }
        assert!(rejected("fn f(cache: &mut C) -> Result<&u8, E>")
            .unwrap()
            .contains("`cache`"));
        for sig in [
            "fn f(&self) -> Result<&str, E>",
            "fn f(&self, buf: &mut Vec<u8>) -> Result<&str, E>",
            "fn f<'a>(s: &'a str, v: &mut X) -> Result<&'a str, E>",
            "fn f(&mut self) -> Result<&'static str, E>",
            "fn f(v: &mut X, w: &Y) -> Result<u8, E>",
            "fn f(v: &mut X) -> Result<fn(&u8) -> u8, E>",
            "fn f(&mut self) -> Result<Box<dyn Fn(&u8)>, E>",
            // A shared borrow, from an attempt written inline: rustc judges.
            "async fn f(&mut self, key: &str) -> Result<&str, E>",
            "async fn f<'a>(v: &'a mut X) -> Result<&'a str, E>",
            "#[track_caller] fn f(&mut self) -> Result<&str, E>",
            // `Self` with the function's own lifetimes, or a `&mut` it does not carry.
            "fn f<'d>(dst: &'d mut String) -> Result<Self, E>",
            "fn f(&mut self, dst: &mut String) -> Result<Self, E>",
            "fn f(dst: &'static mut String) -> Result<Self, E>",
        ] {
            assert_eq!(rejected(sig), None, "{sig}");
        }
    }

    #[test]
    fn trace_level_without_the_tracing_feature_is_rejected() {
        let item = "fn f() -> Result<(), ()> { Ok(()) }";
        let err = check("trace_level = info", item, true).unwrap_err();
        assert!(err.contains("`tracing` feature"), "{err}");
        assert_eq!(check("", item, true), Ok(()));
    }

    #[test]
    fn an_async_fn_without_a_timer_is_rejected_on_its_async_token() {
        let item = "async fn f() -> Result<(), ()> { Ok(()) }";
        let err = check("", item, false).unwrap_err();
        assert!(
            err.contains("enable retry-jitter's `tokio` feature"),
            "{err}"
        );
        assert!(err.contains("sleep = my_runtime::sleep"), "{err}");
        assert_eq!(check("sleep = my_sleep", item, false), Ok(()));
        assert_eq!(check("", item, true), Ok(()));
    }

    #[test]
    fn the_async_error_is_spanned_at_async() {
        let args: Args = syn::parse_str("").unwrap();
        let item: Item = syn::parse_str("pub async fn f() -> Result<(), ()> { Ok(()) }").unwrap();
        let features = Features {
            tokio: false,
            tracing: false,
        };
        let err = super::item(&args, &item, features).unwrap_err();
        let start = err.span().start();
        assert_eq!((start.line, start.column), (1, 4));
    }

    /// Each message of the attribute's errors, in order.
    fn args_errors(attr: &str) -> Vec<String> {
        let args: Args = syn::parse_str(attr).unwrap();
        match super::args(&args) {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn a_value_error_is_told_in_its_place_among_the_errors_of_reading() {
        let errors = args_errors(r#"base = 5, attempts = 0, cap = 7, policy = p"#);
        let starts: Vec<&str> = errors.iter().map(|e| &e[..12]).collect();
        assert_eq!(
            starts,
            [
                "a bare numbe",
                "`attempts = ",
                "a bare numbe",
                "`base` canno"
            ],
            "{errors:?}"
        );
        let errors = args_errors(r#"cap = "1s", cap = "2s", attempts = 0, atempts = 1"#);
        assert!(errors[0].starts_with("duplicate key `cap`"), "{errors:?}");
        assert!(errors[1].starts_with("`attempts = 0`"), "{errors:?}");
        assert!(errors[2].starts_with("unknown key `atempts`"), "{errors:?}");
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert_eq!(args_errors("attempts = 1"), Vec::<String>::new());
    }

    fn expansion_error(attr: &str, item: &str) -> Option<String> {
        let args: Args = syn::parse_str(attr).unwrap();
        let item: Item = syn::parse_str(item).unwrap();
        expansion(&args, &item).err().map(|e| e.to_string())
    }

    #[test]
    fn the_keys_against_the_function_one_error_the_first() {
        let err = expansion_error(
            "attempt = n, notify = async |_| {}",
            "fn f(n: u32) -> Result<(), E> { Ok(()) }",
        )
        .unwrap();
        assert!(err.contains("would hide the argument `n`"), "{err}");
        let err = expansion_error(
            "attempt = m, notify = async |_| {}",
            "fn f(n: u32) -> Result<(), E> { Ok(()) }",
        )
        .unwrap();
        assert!(err.contains("an async `notify` hook is awaited"), "{err}");
        let err = expansion_error(
            "",
            "#[track_caller] fn f() -> Result<(), E> { anyhow::bail!(\"no\") }",
        )
        .unwrap();
        assert!(err.contains("with `anyhow::bail!` in the body"), "{err}");
        // Async, or not a `Result`: no inline attempt, nothing to check.
        for item in [
            "#[track_caller] async fn f() -> Result<(), E> { anyhow::bail!(\"no\") }",
            "#[track_caller] fn f() -> Option<u8> { my_macro!() }",
        ] {
            assert_eq!(expansion_error("", item), None, "{item}");
        }
    }

    #[test]
    fn track_caller_is_checked_on_the_body_the_expansion_inlines() {
        // A `break` outside the user's loops is fenced off, its value with it.
        //
        // The error is rustc's.
        assert_eq!(
            expansion_error(
                "",
                "#[track_caller] fn f() -> Result<(), E> { break my_macro!(); }"
            ),
            None
        );
        // A `&mut self` the body passes on is each attempt's own, renamed.
        //
        // `x.self`, which syn cannot read, becomes a field it can.
        //
        // rustc then says what is wrong.
        let item = "#[track_caller] fn f(&mut self) -> Result<(), E> { g(self)?; x.self; Ok(()) }";
        assert_eq!(expansion_error("", item), None);
        let item: Item = syn::parse_str(item).unwrap();
        let label = syn::Lifetime::new("'attempt", Span::call_site());
        let as_written = item.body.unwrap();
        let p = TokenStream::new();
        assert!(matches!(
            inline_attempt::rewrite(&as_written, &label, &p, Span::call_site()),
            Err(NotInline::Unparsed)
        ));
    }
}
