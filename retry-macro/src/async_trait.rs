//! `#[retry]` under `#[async_trait]`: async-trait expands first, and turns
//!
//! ```text
//! async fn f(&self, x: T) -> R { body }
//! ```
//!
//! into a function returning a boxed future, whose body is that future:
//!
//! ```text
//! fn f<'life0, 'async_trait>(&'life0 self, x: T)
//!     -> Pin<Box<dyn Future<Output = R> + Send + 'async_trait>>
//! { Box::pin(async move { let __self = self; let x = x; let __ret: R = { body }; __ret }) }
//! ```
//!
//! Retrying the function would retry the boxing of a future, which never fails.
//!
//! So the shape is recognised, and the inner `async` block is what is retried.
//!
//! tracing-attributes does the same for `#[instrument]` (its `AsyncInfo`).
//!
//! The function becomes `Box::pin(async move { <retry loop whose attempt is the block's
//! statements> })`.
//!
//! So another attribute that recognises the shape (`#[instrument]` under `#[retry]`) still
//! does.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::parse::Parser;
use syn::{Attribute, Block, Expr, GenericArgument, PathArguments, ReturnType, Signature, Stmt};
use syn::{Type, TypeParamBound};

use crate::signature::strip_group;

/// A function written the way async-trait writes an `async fn`.
pub(crate) struct AsyncTrait {
    /// The future's `Output`: the `R` that is retried.
    pub output: Type,
    /// The statements of the function's body before the boxed future (async-trait writes none).
    pub before: TokenStream,
    /// The callee, as written (`Box::pin`).
    pub pin: Expr,
    /// The `async` block's attributes, its `async` and `move` tokens.
    pub attrs: Vec<Attribute>,
    pub async_token: syn::Token![async],
    pub capture: Option<syn::Token![move]>,
    /// The `async` block's statements: the attempt.
    pub body: TokenStream,
}

/// The shape, if `sig` and `body` have it: a sync fn returning
/// `Pin<Box<dyn Future<Output = R> …>>` whose body ends in `Box::pin(async … { … })`.
pub(crate) fn recognise(sig: &Signature, body: &TokenStream) -> Option<AsyncTrait> {
    if sig.asyncness.is_some() {
        return None;
    }
    let ReturnType::Type(_, ret) = &sig.output else {
        return None;
    };
    let output = future_output(ret)?.clone();
    let mut stmts = Block::parse_within.parse2(body.clone()).ok()?;
    let Some(Stmt::Expr(last, None)) = stmts.pop() else {
        return None;
    };
    let Expr::Call(call) = ungroup(last) else {
        return None;
    };
    let pin = ungroup(*call.func);
    let is_box_pin = match &pin {
        Expr::Path(path) => {
            let segments = &path.path.segments;
            let n = segments.len();
            n >= 2 && segments[n - 2].ident == "Box" && segments[n - 1].ident == "pin"
        }
        _ => false,
    };
    let mut args = call.args.into_iter();
    let (Some(arg), None, true) = (args.next(), args.next(), is_box_pin) else {
        return None;
    };
    let Expr::Async(block) = ungroup(arg) else {
        return None;
    };
    let mut before = TokenStream::new();
    for stmt in &stmts {
        stmt.to_tokens(&mut before);
    }
    let mut inner = TokenStream::new();
    for stmt in &block.block.stmts {
        stmt.to_tokens(&mut inner);
    }
    Some(AsyncTrait {
        output,
        before,
        pin,
        attrs: block.attrs,
        async_token: block.async_token,
        capture: block.capture,
        body: inner,
    })
}

/// `R` in `Pin<Box<dyn Future<Output = R> + …>>` (any path to `Pin`, `Box` and `Future`).
fn future_output(ty: &Type) -> Option<&Type> {
    let boxed = only_type_argument(ty, "Pin")?;
    let Type::TraitObject(object) = strip_group(only_type_argument(boxed, "Box")?) else {
        return None;
    };
    object.bounds.iter().find_map(|bound| {
        let TypeParamBound::Trait(bound) = bound else {
            return None;
        };
        let last = bound.path.segments.last()?;
        let PathArguments::AngleBracketed(args) = &last.arguments else {
            return None;
        };
        if last.ident != "Future" {
            return None;
        }
        for i in 0..args.args.len() {
            if let GenericArgument::AssocType(assoc) = &args.args[i] {
                if assoc.ident == "Output" {
                    return Some(&assoc.ty);
                }
            }
        }
        None
    })
}

/// `T` in `name<T>`.
fn only_type_argument<'a>(ty: &'a Type, name: &str) -> Option<&'a Type> {
    let Type::Path(path) = strip_group(ty) else {
        return None;
    };
    let last = path.path.segments.last()?;
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match (last.ident == name, args.args.len(), args.args.get(0)) {
        (true, 1, Some(GenericArgument::Type(ty))) => Some(ty),
        _ => None,
    }
}

fn ungroup(expr: Expr) -> Expr {
    match expr {
        Expr::Group(group) => ungroup(*group.expr),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn recognised(item: TokenStream) -> Option<AsyncTrait> {
        let item: syn::ItemFn = syn::parse2(item).unwrap();
        let body = item
            .block
            .stmts
            .iter()
            .map(ToTokens::to_token_stream)
            .collect();
        recognise(&item.sig, &body)
    }

    #[test]
    fn async_traits_expansion_is_recognised() {
        let found = recognised(quote! {
            fn f<'life0, 'async_trait>(&'life0 self, x: u8)
                -> ::core::pin::Pin<Box<dyn ::core::future::Future<Output = Result<u8, E>>
                    + ::core::marker::Send + 'async_trait>>
            where 'life0: 'async_trait, Self: 'async_trait
            {
                Box::pin(async move {
                    let __self = self;
                    let x = x;
                    let __ret: Result<u8, E> = { Ok(x) };
                    #[allow(unreachable_code)]
                    __ret
                })
            }
        })
        .expect("recognised");
        assert_eq!(
            found.output.to_token_stream().to_string(),
            "Result < u8 , E >"
        );
        assert!(found.capture.is_some());
        assert!(found.before.is_empty());
        assert!(found.body.to_string().starts_with("let __self = self ;"));
    }

    #[test]
    fn other_shapes_are_not() {
        // An async fn, a future not boxed by `Box::pin`, a `Box::pin` of something else.
        assert!(recognised(quote!(
            async fn f() -> Result<(), ()> {
                Ok(())
            }
        ))
        .is_none());
        assert!(recognised(quote! {
            fn f() -> Pin<Box<dyn Future<Output = Result<(), ()>>>> { make() }
        })
        .is_none());
        assert!(recognised(quote! {
            fn f() -> Pin<Box<dyn Future<Output = Result<(), ()>>>> { Box::pin(fut) }
        })
        .is_none());
        assert!(recognised(quote! {
            fn f() -> Result<(), ()> { Box::pin(async move { Ok(()) }) }
        })
        .is_none());
    }
}
