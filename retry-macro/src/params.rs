//! Per-attempt rebinding of the arguments: each attempt gets its own copy of what it may use up.
//!
//! | argument | signature becomes | each attempt starts with |
//! |---|---|---|
//! | `x: &T` | unchanged | nothing (a shared borrow is reused) |
//! | `x: &mut T` | unchanged | `let x = &mut *x;` (a re-borrow) |
//! | `x: T` | unchanged | `let x = clone_arg(&x);` |
//! | `mut x: T` | `x: T` | `let mut x = clone_arg(&x);` |
//! | `(a, b): T` | `__retry_arg0: T` | `let (a, b) = clone_arg(&__retry_arg0);` |
//!
//! `#[cfg]` attributes on an argument are copied onto its rebinding.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{FnArg, Ident, Pat, PatIdent, Signature, Type};

/// Rewrite the signature's patterns as the table says, and return the rebinding statements.
pub(crate) fn rebind(sig: &mut Signature, private: &TokenStream) -> TokenStream {
    let mut out = TokenStream::new();
    for (index, arg) in sig.inputs.iter_mut().enumerate() {
        let FnArg::Typed(arg) = arg else { continue };
        let cfgs: Vec<_> = arg
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("cfg"))
            .collect();
        let ty = &*arg.ty;
        // How an attempt gets its own value out of the argument `source`.
        let value = |source: &Ident| match strip_group(ty) {
            Type::Reference(r) if r.mutability.is_some() => quote!(&mut *#source),
            Type::Reference(_) => quote!(#source),
            _ => quote_spanned!(ty.span()=> #private::clone_arg(&#source)),
        };
        match &mut *arg.pat {
            Pat::Wild(_) => {}
            Pat::Ident(PatIdent {
                by_ref: None,
                mutability,
                ident,
                subpat: None,
                attrs,
            }) if attrs.is_empty() => {
                let needs_own_copy =
                    !matches!(strip_group(ty), Type::Reference(r) if r.mutability.is_none());
                if needs_own_copy || mutability.is_some() {
                    let mutability = mutability.take();
                    let value = value(ident);
                    out.extend(quote!(#(#cfgs)* let #mutability #ident = #value;));
                }
            }
            pat => {
                let source = Ident::new(&format!("__retry_arg{index}"), Span::mixed_site());
                let value = value(&source);
                out.extend(quote!(#(#cfgs)* let #pat = #value;));
                *arg.pat = Pat::Ident(PatIdent {
                    attrs: Vec::new(),
                    by_ref: None,
                    mutability: None,
                    ident: source,
                    subpat: None,
                });
            }
        }
    }
    out
}

fn strip_group(ty: &Type) -> &Type {
    match ty {
        Type::Group(g) => strip_group(&g.elem),
        Type::Paren(p) => strip_group(&p.elem),
        other => other,
    }
}
