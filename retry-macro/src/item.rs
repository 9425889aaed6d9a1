//! The annotated function: its attributes, signature and body (kept as tokens), and the checks
//! on it that need no types.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{Attribute, FnArg, ReturnType, Signature, Token, Visibility};

use crate::args::Args;
use crate::async_trait::{self, AsyncTrait};
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
        if let Some(error) = output.and_then(returns_option) {
            errors.push(error);
        }
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
/// (rebind.rs), which a hedged attempt, a future of its own made by a closure, cannot hold.
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

/// A return type that may hold a borrow of a `&mut` argument (or `&mut self`) where the retried
/// function cannot compile: each attempt re-borrows the argument, and the borrow checker cannot
/// see that the attempt which returns is the last. So for any borrow out of a sync fn's closure
/// (`closure`), and for one that may be mutable wherever the attempt runs. Reported here, on the
/// borrow, since rustc's errors would be about a closure or a loop the user never wrote.
/// A function written to return an `Option<T>`: told what helps, the `on_ok` key or `.ok_or(..)`,
/// at the type, rather than by the type check's "return `Result<Option<T>, YourError>`". (Any
/// other type that is not a `Result` is left to that check, which sees through aliases.)
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
        let err = item.check(&args, features).unwrap_err();
        let start = err.span().start();
        assert_eq!((start.line, start.column), (1, 4));
    }
}
