//! The annotated function: its attributes, signature and body (kept as tokens), and the checks
//! on it that need no types.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{Attribute, FnArg, ReturnType, Signature, Token, Visibility};

use crate::args::Args;
use crate::async_trait::{self, AsyncTrait};
use crate::walk::VisitMut;

/// The facade's features the expansion depends on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Features {
    pub tokio: bool,
    pub tracing: bool,
}

impl Features {
    /// The features this build of the macro was compiled with (the facade forwards them).
    pub(crate) const BUILT: Features = Features {
        tokio: cfg!(feature = "tokio"),
        tracing: cfg!(feature = "tracing"),
    };
}

pub(crate) struct Item {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub sig: Signature,
    /// The body's tokens, braces excluded; `None` for a trait method without a body.
    pub body: Option<TokenStream>,
    /// The span of the body's braces (or of the `;`).
    pub body_span: proc_macro2::Span,
    /// The body with its braces, or the `;`, exactly as written.
    pub tail: TokenStream,
    /// The function as `#[async_trait]` writes an `async fn`: its inner future is retried.
    pub async_trait: Option<AsyncTrait>,
}

impl Parse for Item {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        let sig: Signature = input.parse()?;
        if input.peek(Token![;]) {
            let semi: Token![;] = input.parse()?;
            return Ok(Item {
                attrs,
                vis,
                sig,
                body: None,
                body_span: semi.span,
                tail: semi.into_token_stream(),
                async_trait: None,
            });
        }
        let body: proc_macro2::TokenTree = input.parse()?;
        let Some(group) = brace_group(body.clone()) else {
            return Err(syn::Error::new(
                body.span(),
                "expected the function's body `{ … }`",
            ));
        };
        let async_trait = async_trait::recognise(&sig, &group.stream());
        Ok(Item {
            attrs,
            vis,
            sig,
            body: Some(group.stream()),
            body_span: group.span(),
            tail: group.into_token_stream(),
            async_trait,
        })
    }
}

/// The body's braces, also when a `macro_rules!` passed it as `$body:block`: then it arrives
/// wrapped in an invisible (None-delimited) group.
fn brace_group(tree: proc_macro2::TokenTree) -> Option<proc_macro2::Group> {
    let proc_macro2::TokenTree::Group(group) = tree else {
        return None;
    };
    match group.delimiter() {
        proc_macro2::Delimiter::Brace => Some(group),
        proc_macro2::Delimiter::None => {
            let mut inner = group.stream().into_iter();
            match (inner.next(), inner.next()) {
                (Some(tree), None) => brace_group(tree),
                _ => None,
            }
        }
        _ => None,
    }
}

impl ToTokens for Item {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let Item {
            attrs,
            vis,
            sig,
            tail,
            ..
        } = self;
        tokens.extend(quote!(#(#attrs)* #vis #sig #tail));
    }
}

impl Item {
    /// An `async fn`, or one `#[async_trait]` has made.
    pub(crate) fn is_async(&self) -> bool {
        self.sig.asyncness.is_some() || self.async_trait.is_some()
    }

    /// Everything that makes a function impossible to retry, each error on its token.
    /// `features`: whether an `async fn` without `sleep = …` has a timer (feature `tokio`), and
    /// whether trace events can be emitted (feature `tracing`).
    pub(crate) fn check(&self, args: &Args, features: Features) -> syn::Result<()> {
        let mut errors: Vec<syn::Error> = Vec::new();
        let sig = &self.sig;
        if let Some(c) = &sig.constness {
            errors.push(syn::Error::new(
                c.span(),
                "`#[retry]` cannot make a `const fn` retry: waiting is not possible in const \
                 evaluation; remove `const`",
            ));
        }
        if self.body.is_none() {
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
        let output = match (&self.async_trait, &sig.output) {
            (Some(async_trait), _) => Some(&async_trait.output),
            (None, ReturnType::Type(_, ret)) => Some(&**ret),
            (None, ReturnType::Default) => None,
        };
        // A sync fn's attempts run in a closure, unless it is `#[track_caller]` (see expand.rs).
        let closure =
            !self.is_async() && !self.attrs.iter().any(|a| a.path().is_ident("track_caller"));
        if let Some(error) = output.and_then(|output| borrow_of_mut(sig, output, closure)) {
            errors.push(error);
        }
        if let Some(v) = &sig.variadic {
            errors.push(syn::Error::new(
                v.span(),
                "`#[retry]` cannot retry a variadic function: remove `...`",
            ));
        }
        if !self.is_async() {
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
        if args.hedge.is_some() && self.is_async() {
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
        let mut errors = errors.into_iter();
        match errors.next() {
            None => Ok(()),
            Some(mut first) => {
                first.extend(errors);
                Err(first)
            }
        }
    }
}

/// An `impl AsRef<U>` argument of a hedged function: each attempt is given a shared borrow of it
/// (params.rs), which a hedged attempt, a future of its own made by a closure, cannot hold.
fn hedged_as_ref(arg: &FnArg) -> Option<syn::Error> {
    let FnArg::Typed(arg) = arg else { return None };
    let syn::Type::ImplTrait(it) = &*arg.ty else {
        return None;
    };
    if !crate::params::is_borrowed_impl(&arg.ty) {
        return None;
    }
    let target = it.bounds.iter().find_map(|bound| match bound {
        syn::TypeParamBound::Trait(t) => t.path.segments.last().and_then(|s| match &s.arguments {
            syn::PathArguments::AngleBracketed(a) if s.ident == "AsRef" => a.args.first(),
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

/// The span of an argument that is an exclusive borrow (`&mut T`, `&mut self`,
/// `self: Pin<&mut Self>`), which hedged attempts could not share.
fn exclusive_borrow(arg: &FnArg) -> Option<proc_macro2::Span> {
    fn exclusive(ty: &syn::Type) -> bool {
        match ty {
            syn::Type::Reference(r) => r.mutability.is_some(),
            syn::Type::Group(g) => exclusive(&g.elem),
            syn::Type::Paren(p) => exclusive(&p.elem),
            syn::Type::Path(p) => p.path.segments.last().is_some_and(|last| {
                last.ident == "Pin"
                    && matches!(&last.arguments, syn::PathArguments::AngleBracketed(a)
                        if a.args.iter().any(|g| matches!(g, syn::GenericArgument::Type(t) if exclusive(t))))
            }),
            _ => false,
        }
    }
    match arg {
        FnArg::Receiver(r) => exclusive(&receiver_type(r)).then(|| r.span()),
        FnArg::Typed(t) => exclusive(&t.ty).then(|| t.span()),
    }
}

/// The receiver's type, as written or implied: `Self` for `self`, `&'a mut Self` for `&'a mut
/// self` (spanned at the `&` and at `self`), the type of `self: Box<Self>`. syn 2 kept this type
/// in the `Receiver`; syn 3 keeps how the receiver was written (`ReceiverKind`) instead.
pub(crate) fn receiver_type(r: &syn::Receiver) -> syn::Type {
    let this = syn::Type::Path(syn::TypePath {
        attrs: Vec::new(),
        qself: None,
        path: syn::Ident::new("Self", r.self_token.span).into(),
    });
    match &r.kind {
        syn::ReceiverKind::Reference(and_token, lifetime, mutability) => {
            syn::Type::Reference(syn::TypeReference {
                attrs: Vec::new(),
                and_token: *and_token,
                lifetime: lifetime.clone(),
                mutability: *mutability,
                elem: Box::new(this),
            })
        }
        syn::ReceiverKind::Typed(_, ty) => (**ty).clone(),
        _ => this,
    }
}

/// A borrow of a `&mut` argument (or `&mut self`) that the return type may hold.
pub(crate) struct ReturnedBorrow {
    /// The argument's name as written (`self` for the receiver).
    pub name: String,
    /// Where the return type holds it.
    pub at: proc_macro2::Span,
    /// Whether it is held only as a shared reference (`&T`). An attempt written inline (an
    /// `async fn`'s, a `#[track_caller]` sync fn's) may return one, if the body takes it
    /// without re-borrowing the argument mutably: rustc judges it. Held any other way (`&mut
    /// T`, a lifetime in a path or a bound, `Self` carrying the impl's lifetimes) it may be a
    /// `&mut`, which no loop can hand out twice.
    pub shared: bool,
}

/// The borrows of `&mut` arguments the return type `output` may hold, read from the signature:
/// an elided output lifetime that comes from a `&mut` receiver or a lone `&mut` argument; a
/// named one that a `&mut` argument carries, or that outlives it (`'c: 'e`); `Self`, which may
/// carry any lifetime of the `impl`'s (one the function does not declare). (A lifetime hidden
/// in a path, `Guard<T>` for `Guard<'_, T>`, is not seen.)
pub(crate) fn returned_borrows(sig: &Signature, output: &syn::Type) -> Vec<ReturnedBorrow> {
    let lifetimes = |ty: &syn::Type| {
        let mut found = Lifetimes::default();
        found.visit_type_mut(&mut ty.clone());
        found
    };
    let returned = lifetimes(output);
    // Each argument's name, its lifetimes, and whether it is the receiver.
    let inputs: Vec<(String, Lifetimes, bool)> = sig
        .inputs
        .iter()
        .map(|arg| match arg {
            FnArg::Receiver(r) => ("self".to_owned(), lifetimes(&receiver_type(r)), true),
            FnArg::Typed(t) => (t.pat.to_token_stream().to_string(), lifetimes(&t.ty), false),
        })
        .collect();
    // Where an elided lifetime of the output comes from: the receiver, if it is a reference;
    // else the only lifetime of the inputs, if there is one.
    let with_lifetimes: Vec<_> = inputs
        .iter()
        .filter(|(_, l, _)| !l.all.is_empty())
        .collect();
    let elided_from = match with_lifetimes.iter().find(|(_, _, receiver)| *receiver) {
        Some(receiver) => Some(*receiver),
        None => match with_lifetimes[..] {
            [only] if only.1.all.len() == 1 => Some(only),
            _ => None,
        },
    };
    let outlives = outlives(sig);
    // The lifetimes that may stand in for `named`: itself, and those that outlive it.
    let longer = |named: &String| {
        let mut set = vec![named.clone()];
        while let Some(more) = outlives
            .iter()
            .find(|(long, short)| set.contains(short) && !set.contains(long))
        {
            set.push(more.0.clone());
        }
        set
    };
    let declared: Vec<String> = sig
        .generics
        .lifetimes()
        .map(|l| l.lifetime.ident.to_string())
        .collect();
    let mut borrows = Vec::new();
    for (lifetime, at, shared) in &returned.all {
        let from: Vec<&(String, Lifetimes, bool)> = match lifetime {
            None => elided_from
                .filter(|(_, l, _)| l.first_is_mut)
                .into_iter()
                .collect(),
            Some(named) => {
                let set = longer(named);
                inputs
                    .iter()
                    .filter(|(_, l, _)| l.mutable.iter().any(|m| set.contains(m)))
                    .collect()
            }
        };
        borrows.extend(from.into_iter().map(|(name, _, _)| ReturnedBorrow {
            name: name.clone(),
            at: *at,
            shared: *shared,
        }));
    }
    for at in &returned.selves {
        let of_impl = |l: &String| l != "static" && !declared.contains(l);
        borrows.extend(
            inputs
                .iter()
                .filter(|(_, l, _)| l.mutable.iter().any(of_impl))
                .map(|(name, _, _)| ReturnedBorrow {
                    name: name.clone(),
                    at: *at,
                    shared: false,
                }),
        );
    }
    borrows
}

/// The signature's outlives bounds, `('long, 'short)` for each `'long: 'short` (by name).
fn outlives(sig: &Signature) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    let mut add = |long: &syn::Lifetime, bounds: &mut dyn Iterator<Item = &syn::Lifetime>| {
        for short in bounds {
            pairs.push((long.ident.to_string(), short.ident.to_string()));
        }
    };
    for param in sig.generics.lifetimes() {
        add(&param.lifetime, &mut param.bounds.iter());
    }
    if let Some(clause) = &sig.generics.where_clause {
        for predicate in &clause.predicates {
            if let syn::WherePredicate::Lifetime(p) = predicate {
                add(&p.lifetime, &mut p.bounds.iter());
            }
        }
    }
    pairs
}

/// A return type that may hold a borrow of a `&mut` argument or `&mut self` where the retried
/// function cannot compile: each attempt re-borrows that argument for itself, and the borrow
/// checker cannot see that an attempt which returns is the last. That is so for any borrow
/// returned out of the closure a sync fn's attempts run in (`closure`), and for one that may be
/// mutable wherever the attempt runs; its errors would be about a closure or a loop the user
/// never wrote. Said here, with the rule, on the borrow in the return type.
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

/// The lifetimes a type names: each `&` (its lifetime, `None` if elided) and each lifetime
/// (`'_` as `None`), with where it is written and whether it is a shared reference's; and those
/// of `&mut` references; and where it names `Self`. Not those of `fn` pointers and `Fn(…)`
/// bounds, which are their own.
#[derive(Default)]
struct Lifetimes {
    all: Vec<(Option<String>, proc_macro2::Span, bool)>,
    mutable: Vec<String>,
    /// Whether the first is a `&mut` (the one an elided output lifetime then refers to).
    first_is_mut: bool,
    /// Each `Self` (or `Self::…`).
    selves: Vec<proc_macro2::Span>,
}

impl VisitMut for Lifetimes {
    fn visit_type_reference_mut(&mut self, r: &mut syn::TypeReference) {
        let name = r
            .lifetime
            .as_ref()
            .map(|l| l.ident.to_string())
            .filter(|n| n != "_");
        if self.all.is_empty() {
            self.first_is_mut = r.mutability.is_some();
        }
        self.all
            .push((name.clone(), r.and_token.span, r.mutability.is_none()));
        if let (Some(name), Some(_)) = (name, r.mutability) {
            self.mutable.push(name);
        }
        self.visit_type_mut(&mut r.elem);
    }

    fn visit_lifetime_mut(&mut self, l: &mut syn::Lifetime) {
        let name = Some(l.ident.to_string()).filter(|n| n != "_");
        self.all.push((name, l.apostrophe, false));
    }

    fn visit_type_path_mut(&mut self, path: &mut syn::TypePath) {
        if let (None, Some(first)) = (&path.qself, path.path.segments.first()) {
            if first.ident == "Self" {
                self.selves.push(first.ident.span());
            }
        }
        crate::walk::visit_type_path_mut(self, path);
    }

    fn visit_type_fn_ptr_mut(&mut self, _: &mut syn::TypeFnPtr) {}

    fn visit_parenthesized_generic_arguments_mut(
        &mut self,
        _: &mut syn::ParenthesizedGenericArguments,
    ) {
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
        item.check(&args, features).map_err(|e| e.to_string())
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
            item.check(&args, features)
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
            // Issue 17, class 7: through an outlives bound, or `Self`'s lifetimes.
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
            // Issue 17, class 8: a shared borrow, from an attempt written inline: rustc judges.
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
        let err = item.check(&args, features).unwrap_err();
        let start = err.span().start();
        assert_eq!((start.line, start.column), (1, 4));
    }
}
