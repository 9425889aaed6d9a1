//! The receiver: how each attempt gets a `self` of its own (the `self` rows of rebind.rs's
//! table).
//!
//! And the body's `self`, renamed to it.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned, ToTokens};
use syn::parse::Parser;
use syn::spanned::Spanned;
use syn::{Block, Ident, Receiver, Type};

use crate::binding::Binding;
use crate::signature::{receiver_type, strip_group};
use crate::walk::VisitMut;

/// How the body uses its receiver.
pub(crate) struct SelfUse {
    /// Whether a `&mut self` is re-borrowed (else it is used as it is).
    pub(crate) reborrow: bool,
    /// Whether a `self` by value is made with `own_self` (re-borrowed if `Self` is a `&mut`),
    /// else cloned.
    pub(crate) own: bool,
    /// Where the return type's `Ok` type may hold a borrow of a `self` by value.
    ///
    /// It does when it names `Self`, or a lifetime the function does not declare: the `impl`'s.
    pub(crate) returned: Option<Span>,
}

/// Where the `Ok` type of `output` (its first type argument: `Result<T, E>`, `io::Result<T>`)
/// names `Self` or a lifetime not in `declared` (nor `'static`).
pub(crate) fn may_hold_self(declared: &[String], output: &Type) -> Option<Span> {
    let Type::Path(path) = strip_group(output) else {
        return None;
    };
    let syn::PathArguments::AngleBracketed(args) = &path.path.segments.last()?.arguments else {
        return None;
    };
    let ok = (0..args.args.len()).find_map(|i| match &args.args[i] {
        syn::GenericArgument::Type(ty) => Some(ty),
        _ => None,
    })?;
    fn find(tokens: TokenStream, declared: &[String]) -> Option<Span> {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        tokens.iter().enumerate().find_map(|(i, tt)| match tt {
            TokenTree::Ident(ident) if ident == "Self" => Some(ident.span()),
            TokenTree::Punct(p) if p.as_char() == '\'' => match tokens.get(i + 1) {
                Some(TokenTree::Ident(name))
                    if !declared.iter().any(|d| name == d) && name != "static" && name != "_" =>
                {
                    Some(p.span())
                }
                _ => None,
            },
            TokenTree::Group(group) => find(group.stream(), declared),
            _ => None,
        })
    }
    find(ok.to_token_stream(), declared)
}

/// The receiver's rebinding, where each attempt needs a `self` of its own.
pub(crate) fn receiver_binding(
    receiver: &mut Receiver,
    private: &TokenStream,
    usage: &SelfUse,
) -> Option<Binding> {
    let span = receiver.self_token.span;
    let source = Ident::new("__retry_self", Span::mixed_site().located_at(span));
    let self_token = receiver.self_token;
    let ty = receiver_type(receiver);
    let (mutability, value) = match strip_group(&ty) {
        Type::Reference(r) if r.mutability.is_none() => return None,
        Type::Reference(_) if !usage.reborrow => return None,
        // A body that passes `self` on (`Parser::new(self)`, `fetch_one(self)`) moves it where
        // the callee is generic.
        //
        // So each attempt moves its own re-borrow.
        Type::Reference(_) => (None, quote_spanned!(span=> &mut *#self_token)),
        ty if is_pin_mut(ty) => {
            // `Pin::as_mut` takes `&mut self`: the binding must be `mut`.
            //
            // A `mut` of the user's is for the body, which changes the `Pin` (`self.field = …`
            // through `DerefMut`): it goes to each attempt's re-borrow.
            let mutability = receiver.mutability.replace(syn::Token![mut](span));
            (
                mutability,
                quote_spanned!(span=> ::core::pin::Pin::as_mut(&mut #self_token)),
            )
        }
        Type::Path(path) if usage.own && path.qself.is_none() && path.path.is_ident("Self") => {
            // `self` as `Self`, which may be a `&mut` (never `Clone`).
            //
            // The attempt's `self` is `own_self`'s, which takes `&mut self`: the signature's
            // binding is `mut`.
            //
            // The user's `mut` moves to each attempt's own `self`.
            let mutability = receiver.mutability.replace(syn::Token![mut](span));
            let private_at = |at: Span| crate::respan::respan(private, at);
            // The kind, spanned where it is checked.
            //
            // At the return type that may hold a borrow of a re-borrowed `self` (a `Self` that
            // is a `&mut`); else at `self`.
            let at = usage.returned.unwrap_or(span);
            let p_at = private_at(at);
            let kind = quote_spanned! {at=> {
                #[allow(unused_imports)]
                use #p_at::{CloneKind as _, ReborrowKind as _};
                (&&#p_at::SelfKind::<Self>::new()).kind()
            }};
            let p_self = private_at(span);
            // `unborrowed`'s call, as `own_self`'s, is spanned at `self`; only its argument at
            // the return type.
            //
            // A `Self` that is not `Clone` is then one error, at `self`, not two.
            let kind = match usage.returned {
                Some(_) => quote_spanned!(span=> #p_self::Unborrowed::unborrowed(#kind)),
                None => kind,
            };
            (
                mutability,
                quote_spanned!(span=> #p_self::OwnSelf::own_self(#kind, &mut #self_token)),
            )
        }
        _ => {
            // The `mut` moves from the signature to each attempt's copy, which is what changes.
            let mutability = receiver.mutability.take();
            (
                mutability,
                quote_spanned!(receiver.span()=> #private::CloneSelf::clone_self(&#self_token)),
            )
        }
    };
    Some(Binding {
        attrs: Vec::new(),
        expects: Vec::new(),
        pat: quote!(#mutability #source),
        source,
        value,
    })
}

/// `Pin<&mut Self>` (or any `Pin<&mut T>`).
fn is_pin_mut(ty: &Type) -> bool {
    let Type::Path(path) = ty else { return false };
    let Some(last) = path.path.segments.last() else {
        return false;
    };
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return false;
    };
    last.ident == "Pin"
        && matches!(
            args.args.get(0),
            Some(syn::GenericArgument::Type(t))
                if matches!(strip_group(t), Type::Reference(r) if r.mutability.is_some())
        )
}

/// The body with its `self` renamed `alias`, outside the items nested in it.
///
/// An `fn` or `impl` in the body has a `self` of its own.
///
/// `self::path` is a module path, and stays.
pub(crate) fn rename_self(body: &TokenStream, alias: &Ident) -> TokenStream {
    let Ok(mut stmts) = Block::parse_within.parse2(body.clone()) else {
        // A body syn cannot parse has no items it can see either: every `self` is the receiver.
        return rename_in_tokens(body.clone(), alias);
    };
    let mut rename = RenameSelf(alias);
    let mut out = TokenStream::new();
    for stmt in &mut stmts {
        rename.visit_stmt_mut(stmt);
        stmt.to_tokens(&mut out);
    }
    out
}

struct RenameSelf<'a>(&'a Ident);

impl VisitMut for RenameSelf<'_> {
    fn visit_expr_path_mut(&mut self, path: &mut syn::ExprPath) {
        if path.qself.is_none() && path.path.is_ident("self") {
            let span = path.path.segments[0].ident.span();
            let mut alias = self.0.clone();
            alias.set_span(alias.span().located_at(span));
            path.path.segments[0].ident = alias;
        }
    }

    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        match expr {
            syn::Expr::Verbatim(tokens) => *tokens = rename_in_tokens(tokens.clone(), self.0),
            _ => crate::walk::visit_expr_mut(self, expr),
        }
    }

    /// A nested `fn`, `impl`…: its own `self`.
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}

    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        mac.tokens = rename_in_tokens(mac.tokens.clone(), self.0);
    }
}

/// Every `self` not followed by `::`, at any depth.
fn rename_in_tokens(tokens: TokenStream, alias: &Ident) -> TokenStream {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let path_follows = |i: usize| {
        matches!(
            (tokens.get(i + 1), tokens.get(i + 2)),
            (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                if a.as_char() == ':' && b.as_char() == ':'
        )
    };
    let mut out = TokenStream::new();
    for (i, tt) in tokens.iter().enumerate() {
        out.extend([match tt {
            TokenTree::Ident(ident) if ident == "self" && !path_follows(i) => {
                let mut alias = alias.clone();
                alias.set_span(alias.span().located_at(ident.span()));
                TokenTree::Ident(alias)
            }
            TokenTree::Group(group) => {
                let mut renamed = proc_macro2::Group::new(
                    group.delimiter(),
                    rename_in_tokens(group.stream(), alias),
                );
                renamed.set_span(group.span());
                TokenTree::Group(renamed)
            }
            other => other.clone(),
        }]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rebind::Rebind;
    use syn::Signature;

    fn alias() -> Ident {
        Ident::new("__retry_self", Span::call_site())
    }

    /// The rebinding for a body that uses every argument named here.
    fn rebind(sig: &mut Signature, private: &TokenStream, async_trait: bool) -> Rebind {
        let body = quote!(self x b c d a);
        crate::rebind::rebind(sig, private, async_trait, &body, &[], &syn::parse_quote!(R))
    }

    #[test]
    fn self_is_renamed_in_the_body_closures_and_macros_not_in_items_or_paths() {
        let body = quote! {
            let me = self.clone();
            let f = move || self.len();
            println!("{}", self.name);
            self::helper(&self);
            impl X { fn g(&self) -> u8 { self.0 } }
            fn h() { self::helper(); }
            Ok(Self::wrap(self))
        };
        let out = rename_self(&body, &alias()).to_string();
        assert_eq!(out.matches("__retry_self").count(), 5, "{out}");
        assert!(out.contains("self :: helper (& __retry_self)"), "{out}");
        assert!(out.contains("fn g (& self) -> u8 { self . 0 }"), "{out}");
        assert!(out.contains("Self :: wrap (__retry_self)"), "{out}");
    }

    #[test]
    fn a_body_syn_cannot_parse_is_renamed_token_by_token() {
        let out = rename_self(&quote!(self.x +), &alias()).to_string();
        assert_eq!(out, "__retry_self . x +");
    }

    #[test]
    fn receivers_by_value_are_cloned_and_pin_mut_reborrowed() {
        let mut sig: Signature = syn::parse_quote!(fn f(mut self: Arc<Self>, x: u8) -> R);
        let r = rebind(&mut sig, &quote!(p), false);
        let out = r.to_token_stream().to_string();
        assert!(
            out.contains("let mut __retry_self = p :: CloneSelf :: clone_self (& self)"),
            "{out}"
        );
        assert_eq!(
            sig.inputs.first().unwrap().to_token_stream().to_string(),
            "self : Arc < Self >"
        );

        let mut sig: Signature = syn::parse_quote!(fn f(self: Pin<&mut Self>) -> R);
        let r = rebind(&mut sig, &quote!(p), false);
        let out = r.to_token_stream().to_string();
        assert!(
            out.contains(":: core :: pin :: Pin :: as_mut (& mut self)"),
            "{out}"
        );
        assert!(sig
            .inputs
            .first()
            .unwrap()
            .to_token_stream()
            .to_string()
            .starts_with("mut self"));
        assert!(!out.contains("let mut __retry_self"), "{out}");

        // A `mut` of the user's is the re-borrow's, which the body changes.
        let mut sig: Signature = syn::parse_quote!(fn f(mut self: Pin<&mut Self>) -> R);
        let r = rebind(&mut sig, &quote!(p), false);
        let out = r.to_token_stream().to_string();
        assert!(out.starts_with("let mut __retry_self ="), "{out}");
        assert!(sig
            .inputs
            .first()
            .unwrap()
            .to_token_stream()
            .to_string()
            .starts_with("mut self"));

        for receiver in [quote!(&self), quote!(self: &Arc<Self>)] {
            let mut sig: Signature = syn::parse_quote!(fn f(#receiver) -> R);
            let r = rebind(&mut sig, &quote!(p), false);
            assert!(r.self_alias.is_none(), "{receiver}");
        }
        // A `&mut self` is re-borrowed per attempt, as a `&mut T` is: a body can pass `self` on.
        //
        // async-trait's too, whose `self` is a local.
        for async_trait in [false, true] {
            let mut sig: Signature = syn::parse_quote!(fn f(&mut self) -> R);
            let body = quote!(Parser::new(self).parse());
            let output = syn::parse_quote!(R);
            let r = crate::rebind::rebind(&mut sig, &quote!(p), async_trait, &body, &[], &output);
            assert!(r.self_alias.is_some());
            assert_eq!(
                r.to_token_stream().to_string(),
                "let __retry_self = & mut * self ;"
            );
        }
    }

    #[test]
    fn a_mut_self_the_body_only_reads_and_writes_through_is_used_as_it_is() {
        let output = syn::parse_quote!(R);
        for (body, reborrowed) in [
            (
                quote!(self.calls += 1; *self = S::new(); Ok(self.m())),
                false,
            ),
            (quote!(self::helper(); Ok(())), false),
            (quote!(helper(self)), true),
            (quote!(write!(self, "x")), true),
            (quote!(let s = self; Ok(s.n)), true),
        ] {
            let mut sig: Signature = syn::parse_quote!(fn f(&mut self) -> R);
            let r = crate::rebind::rebind(&mut sig, &quote!(p), false, &body, &[], &output);
            assert_eq!(r.self_alias.is_some(), reborrowed, "{body}");
        }
    }

    #[test]
    fn a_self_by_value_is_owned_by_its_kind_and_a_returned_borrow_checked() {
        let rebind = |sig: &mut Signature, keys: &[syn::Expr], output: syn::Type| {
            let body = quote!(self);
            crate::rebind::rebind(sig, &quote!(p), false, &body, keys, &output)
                .to_token_stream()
                .to_string()
        };
        let mut sig: Signature = syn::parse_quote!(fn f(mut self) -> R);
        let out = rebind(&mut sig, &[], syn::parse_quote!(Result<(), E>));
        assert!(
            out.starts_with("let mut __retry_self = p :: OwnSelf :: own_self ("),
            "{out}"
        );
        assert!(out.contains("SelfKind :: < Self >"), "{out}");
        assert!(out.ends_with("& mut self) ;"), "{out}");
        assert!(sig.to_token_stream().to_string().contains("(mut self)"));
        // The `Ok` type may hold `'a` of the `impl`'s, or `Self`: a re-borrow is refused.
        for output in [
            syn::parse_quote!(Result<Compound<'a, W>, E>),
            syn::parse_quote!(Result<Self::Seq, Self::Error>),
        ] {
            let mut sig: Signature = syn::parse_quote!(fn f(self) -> R);
            let out = rebind(&mut sig, &[], output);
            // One call of `own_self`, spanned at `self`, given the kind checked apart.
            assert!(
                out.starts_with(
                    "let __retry_self = p :: OwnSelf :: own_self (p :: Unborrowed :: unborrowed ({"
                ),
                "{out}"
            );
        }
        for output in [
            syn::parse_quote!(Result<(), Self::Error>),
            syn::parse_quote!(Result<&'static str, E>),
        ] {
            let mut sig: Signature = syn::parse_quote!(fn f<'b>(self, x: &'b u8) -> R);
            let out = rebind(&mut sig, &[], output);
            assert!(out.contains("p :: OwnSelf :: own_self ("), "{out}");
            assert!(!out.contains("unborrowed"), "{out}");
        }
        let mut sig: Signature = syn::parse_quote!(fn f<'b>(self) -> R);
        let out = rebind(&mut sig, &[], syn::parse_quote!(Result<&'b u8, E>));
        assert!(out.contains("p :: OwnSelf :: own_self ("), "{out}");
        // A key borrows `self`: cloned.
        let mut sig: Signature = syn::parse_quote!(fn f(self) -> R);
        let out = rebind(
            &mut sig,
            &[syn::parse_quote!(|_| self.ok())],
            syn::parse_quote!(R),
        );
        assert_eq!(
            out,
            "let __retry_self = p :: CloneSelf :: clone_self (& self) ;"
        );
    }
}
