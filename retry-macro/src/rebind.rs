//! Per-attempt rebinding of the arguments.
//!
//! Each attempt copies what it may use up.
//!
//! | argument | signature becomes | each attempt starts with |
//! |---|---|---|
//! | `x: &T` | unchanged | nothing (a shared borrow is reused) |
//! | `x: &mut T` | unchanged | `let x = &mut *x;` (a re-borrow) |
//! | `x: T` | unchanged | `let x = CloneArg::clone_arg(&x);` |
//! | `x: impl AsRef<U>` | unchanged | `let x = &x;` (see [`is_borrowed_impl`]) |
//! | `mut x: T` | `x: T` | `let mut x = CloneArg::clone_arg(&x);` |
//! | `(a, b): T` | `__retry_arg0: T` | `let (a, b) = CloneArg::clone_arg(&__retry_arg0);` |
//! | `&self` | unchanged | nothing (a shared borrow is reused) |
//! | `&mut self` | unchanged | `let __retry_self = &mut *self;` |
//! | `self: Pin<&mut Self>` | `mut self: Pin<&mut Self>` | `let __retry_self = self.as_mut();` |
//! | `self`, `mut self` | `mut self` | `let __retry_self = own_self(kind, &mut self);`: re-borrowed if `Self` is a `&mut`, else cloned; the kind is `unborrowed(kind)` where the return type may hold a borrow of `self` |
//! | `self: Arc<Self>`, `self: Box<Self>`… | `self: …` | `let __retry_self = CloneSelf::clone_self(&self);` |
//!
//! `self` cannot be shadowed.
//!
//! Yet each attempt may need a `self` of its own.
//!
//! Where it does, the body's `self` is renamed `__retry_self` (receiver.rs).
//!
//! A `&mut` argument or `&mut self` is not always re-borrowed.
//!
//! It is not where the return type may hold a shared borrow of it.
//!
//! There the body borrows from it itself.
//!
//! In a nested `async` block, the values are made before the block.
//!
//! They are then moved into it ([`Rebind::moved_in`]).
//!
//! `#[cfg]` attributes on an argument are copied onto its rebinding.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{Attribute, FnArg, Ident, Pat, PatIdent, Signature, Type};

use crate::binding::Binding;
use crate::loop_exits::fence_loop_exits;
use crate::receiver::{may_hold_self, receiver_binding, rename_self, SelfUse};
use crate::signature::{is_borrowed_impl, receiver_type, returned_borrows, strip_group};

/// Each attempt's own arguments.
///
/// As tokens: the statements binding them where the attempt runs.
///
/// The attempt runs in the sync closure or the inline `async` attempt.
pub(crate) struct Rebind {
    bindings: Vec<Binding>,
    /// What the body's `self` is renamed to, where each attempt has its own.
    pub self_alias: Option<Ident>,
}

impl ToTokens for Rebind {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        for Binding {
            attrs,
            expects,
            pat,
            value,
            ..
        } in &self.bindings
        {
            tokens.extend(quote!(#(#attrs)* #(#expects)* let #pat = #value;));
        }
    }
}

impl Rebind {
    /// The same bindings for an attempt in a nested `async` block.
    ///
    /// Each value is made before the block (`outside`).
    ///
    /// It is then moved into the block (`inside`).
    ///
    /// The block then owns by-value arguments, like the function.
    ///
    /// It does not borrow them from the function.
    ///
    /// So a `Send + !Sync` argument keeps the future `Send`.
    ///
    /// Examples are `Cell` and a generic `T: Send`.
    pub(crate) fn moved_in(&self) -> (TokenStream, TokenStream) {
        let (mut outside, mut inside) = (TokenStream::new(), TokenStream::new());
        for Binding {
            attrs,
            expects,
            pat,
            source,
            value,
        } in &self.bindings
        {
            outside.extend(quote!(#(#attrs)* let #source = #value;));
            inside.extend(quote!(#(#attrs)* #(#expects)* let #pat = #source;));
        }
        (outside, inside)
    }

    /// The body as each attempt runs it.
    ///
    /// Its `self` is renamed if each attempt owns one (receiver.rs).
    ///
    /// A `break` or `continue` outside the user's loops is fenced off (loop_exits.rs).
    ///
    /// It stays the error it is without `#[retry]`.
    ///
    /// The expansion writes this body.
    ///
    /// valid.rs checks the one a `#[track_caller]` sync fn inlines.
    pub(crate) fn attempt_body(&self, body: TokenStream) -> TokenStream {
        let body = match &self.self_alias {
            Some(alias) => rename_self(&body, alias),
            None => body,
        };
        fence_loop_exits(body)
    }
}

/// Rewrites the signature's patterns per the table; returns the rebindings.
///
/// - `async_trait`: the body is async-trait's, whose `self` is a local the body moves: a
///   `&mut self` is re-borrowed for each attempt.
/// - `body`: the attempt's body. An argument it does not name gets no copy.
///   A key alone may use it (`attempts = tries`): an unused copy would be a warning the function
///   does not have.
/// - `output`: the return type (the future's output under `#[async_trait]`).
///   A `&mut` argument it may hold a shared borrow of is not re-borrowed: the body borrows from
///   the argument itself, as without `#[retry]`.
///   valid.rs rejects the other borrows.
pub(crate) fn rebind(
    sig: &mut Signature,
    private: &TokenStream,
    async_trait: bool,
    body: &TokenStream,
    keys: &[syn::Expr],
    output: &Type,
) -> Rebind {
    let mut returned: Vec<String> = Vec::new();
    for borrow in returned_borrows(sig, output) {
        returned.push(borrow.name);
    }
    let mut lifetimes: Vec<String> = Vec::new();
    for l in sig.generics.lifetimes() {
        lifetimes.push(l.lifetime.ident.to_string());
    }
    let mut bindings = Vec::new();
    let mut self_alias = None;
    for index in 0..sig.inputs.len() {
        let arg = match &mut sig.inputs[index] {
            FnArg::Receiver(receiver) => {
                if !names(body, "self") {
                    continue;
                }
                // A `&mut self` the body passes on (`f(self)`) is re-borrowed.
                //
                // Passed to a generic callee, it would be moved.
                //
                // One only used as a place (`self.x`, `*self`) is left alone.
                //
                // A hook and the body can then borrow disjoint fields.
                //
                // async-trait's `self` is a local the body moves: always re-borrowed.
                //
                // Never where the return type may hold a shared borrow of it.
                let reborrow = async_trait
                    || (passes_on(body, "self") && !returned.iter().any(|name| name == "self"));
                // A by-value `self` whose `Self` may be `&mut` is re-borrowed.
                //
                // See `own_self`.
                //
                // It is not if a key borrows `self` too.
                //
                // A hook would hold that borrow while each attempt takes its own.
                //
                // So a `Self` that is a `&mut` cannot serve.
                let own = !keys.iter().any(|key| names(&key.to_token_stream(), "self"));
                let usage = SelfUse {
                    reborrow,
                    own,
                    returned: may_hold_self(&lifetimes, output),
                };
                if let Some(binding) = receiver_binding(receiver, private, &usage) {
                    self_alias = Some(binding.source.clone());
                    bindings.push(binding);
                }
                continue;
            }
            FnArg::Typed(arg) => arg,
        };
        let ty = &*arg.ty;
        let returned = returned.contains(&arg.pat.to_token_stream().to_string());
        // How an attempt gets its own value from the argument `source`.
        let value = |source: &Ident| match strip_group(ty) {
            Type::Reference(r) if r.mutability.is_some() => quote!(&mut *#source),
            Type::Reference(_) => quote!(#source),
            ty if is_borrowed_impl(ty) => quote!(&#source),
            _ => quote_spanned!(ty.span()=> #private::CloneArg::clone_arg(&#source)),
        };
        let binding = match &mut *arg.pat {
            Pat::Wild(_) => None,
            Pat::Ident(PatIdent {
                by_ref: None,
                mutability,
                ident,
                subpat: None,
                attrs,
            }) if attrs.is_empty() => {
                let needs_own_copy = !returned
                    && !matches!(strip_group(ty), Type::Reference(r) if r.mutability.is_none());
                let name = ident.to_string();
                ((needs_own_copy || mutability.is_some()) && names(body, &name)).then(|| {
                    let mutability = mutability.take();
                    let mut binding = Binding {
                        attrs: Vec::new(),
                        expects: Vec::new(),
                        pat: quote!(#mutability #ident),
                        source: ident.clone(),
                        value: value(ident),
                    };
                    // Named by the body and a key.
                    //
                    // The body's name may be another thing (a field).
                    //
                    // Then the copy is unused, and the argument is not.
                    if keys.iter().any(|key| names(&key.to_token_stream(), &name)) {
                        binding
                            .attrs
                            .push(syn::parse_quote!(#[allow(unused_variables)]));
                    }
                    binding
                })
            }
            pat => {
                // Located at the pattern, not at the attribute.
                //
                // An error about the argument (its type not `Clone`) is reported there.
                let source = Ident::new(
                    &format!("__retry_arg{index}"),
                    Span::mixed_site().located_at(pat.span()),
                );
                let binding = Binding {
                    attrs: Vec::new(),
                    expects: Vec::new(),
                    pat: pat.to_token_stream(),
                    value: value(&source),
                    source: source.clone(),
                };
                *arg.pat = Pat::Ident(PatIdent {
                    attrs: Vec::new(),
                    by_ref: None,
                    mutability: None,
                    ident: source,
                    subpat: None,
                });
                Some(binding)
            }
        };
        if let Some(mut binding) = binding {
            // Copied: `#[cfg]`s and the lint levels the argument is given.
            //
            // Moved: an `#[expect]`, which the copy fulfils or not, as the argument would.
            let mut expects = Vec::new();
            for attr in std::mem::take(&mut arg.attrs) {
                if is_expect(&attr) {
                    expects.push(attr);
                } else {
                    if is_cfg_or_lint(&attr) {
                        binding.attrs.push(attr.clone());
                    }
                    arg.attrs.push(attr);
                }
            }
            binding.expects = expects;
            bindings.push(binding);
        }
    }
    Rebind {
        bindings,
        self_alias,
    }
}

/// `#[cfg]`, `#[cfg_attr]` and the lint levels but `#[expect]`.
///
/// They hold for an argument's copies as for the argument.
fn is_cfg_or_lint(attr: &Attribute) -> bool {
    ["cfg", "cfg_attr", "allow", "warn", "deny", "forbid"]
        .iter()
        .any(|name| attr.path().is_ident(name))
}

/// `#[expect(..)]`, also under `#[cfg_attr(..)]`: fulfilled by one binding only.
fn is_expect(attr: &Attribute) -> bool {
    attr.path().is_ident("expect")
        || (attr.path().is_ident("cfg_attr") && names(&attr.meta.to_token_stream(), "expect"))
}

/// Whether `tokens` name `name`, at any depth.
///
/// It counts identifiers and literals (a format string's `{name}`).
///
/// A false alarm (a field of that name) costs a copy, never a wrong program.
fn names(tokens: &TokenStream, name: &str) -> bool {
    tokens.clone().into_iter().any(|tt| match tt {
        TokenTree::Ident(ident) => ident == name,
        TokenTree::Literal(lit) => lit.to_string().contains(name),
        TokenTree::Group(group) => names(&group.stream(), name),
        TokenTree::Punct(_) => false,
    })
}

/// Whether `tokens` use `name` as a value of its own, at any depth.
///
/// Not as a place (`name.x`, `*name`) or a path (`self::f`).
///
/// Passed on so (`f(self)`, `write!(self, ..)`), a `&mut` is moved where the callee is generic.
///
/// A false alarm costs a re-borrow.
fn passes_on(tokens: &TokenStream, name: &str) -> bool {
    let tokens: Vec<TokenTree> = tokens.clone().into_iter().collect();
    let punct =
        |i: Option<&TokenTree>, c: char| matches!(i, Some(TokenTree::Punct(p)) if p.as_char() == c);
    tokens.iter().enumerate().any(|(i, tt)| match tt {
        TokenTree::Ident(ident) => {
            ident == name
                && !punct(tokens.get(i + 1), '.')
                && !punct(tokens.get(i + 1), ':')
                && !punct(i.checked_sub(1).and_then(|j| tokens.get(j)), '*')
        }
        TokenTree::Group(group) => passes_on(&group.stream(), name),
        _ => false,
    })
}

/// Whether any of `exprs` (the hooks' key expressions) names an argument that a `move` closure
/// could not take while they borrow it.
///
/// That is `self` or any argument but a shared reference.
///
/// A shared reference is copied, not moved.
///
/// Read from the tokens, literals included: `format!("{tag}")` names `tag`.
///
/// A false alarm costs a borrowing closure, never a wrong program.
pub(crate) fn named_by<'a>(
    sig: &Signature,
    exprs: impl IntoIterator<Item = &'a syn::Expr>,
) -> bool {
    let shared =
        |ty: &Type| matches!(strip_group(ty), Type::Reference(r) if r.mutability.is_none());
    let mut taken: Vec<String> = Vec::new();
    for arg in &sig.inputs {
        match arg {
            FnArg::Receiver(r) if !shared(&receiver_type(r)) => taken.push("self".to_owned()),
            FnArg::Typed(arg) if !shared(&arg.ty) => {
                if let Pat::Ident(p) = &*arg.pat {
                    taken.push(p.ident.to_string());
                }
            }
            _ => {}
        }
    }
    if taken.is_empty() {
        return false;
    }
    for expr in exprs {
        let tokens = expr.to_token_stream();
        if taken.iter().any(|name| names(&tokens, name)) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rebinding for a body using every argument named here.
    fn rebind(sig: &mut Signature, private: &TokenStream, async_trait: bool) -> Rebind {
        let body = quote!(self x b c d a);
        super::rebind(sig, private, async_trait, &body, &[], &syn::parse_quote!(R))
    }

    #[test]
    fn a_mut_argument_the_output_may_borrow_shared_is_not_reborrowed() {
        let body = quote!(helper(self); v.push(1); Ok(&self.name));
        let output = syn::parse_quote!(Result<&str, E>);
        let mut sig: Signature = syn::parse_quote!(async fn f(&mut self, v: &mut Vec<u8>) -> R);
        let r = super::rebind(&mut sig, &quote!(p), false, &body, &[], &output);
        assert!(r.self_alias.is_none());
        assert_eq!(r.to_token_stream().to_string(), "let v = & mut * v ;");
        let output = syn::parse_quote!(Result<&'a u8, E>);
        let mut sig: Signature =
            syn::parse_quote!(async fn f<'a>(&mut self, v: &'a mut Vec<u8>) -> R);
        let r = super::rebind(&mut sig, &quote!(p), false, &body, &[], &output);
        assert_eq!(
            r.to_token_stream().to_string(),
            "let __retry_self = & mut * self ;"
        );
    }

    #[test]
    fn an_argument_the_body_does_not_name_is_not_copied() {
        let mut sig: Signature = syn::parse_quote!(
            fn f(self: Arc<Self>, tries: u32, mut tag: String, id: String) -> R
        );
        let keys = [
            syn::parse_quote!(tries),
            syn::parse_quote!(|_| log(&tag, self.x)),
        ];
        let body = quote!(Ok(format!("{id}")));
        let r = super::rebind(
            &mut sig,
            &quote!(p),
            false,
            &body,
            &keys,
            &syn::parse_quote!(R),
        );
        assert!(r.self_alias.is_none());
        assert_eq!(
            r.to_token_stream().to_string(),
            "let id = p :: CloneArg :: clone_arg (& id) ;"
        );
        // The signature keeps its `mut`.
        //
        // The argument is what the hand-written function has.
        assert!(sig
            .to_token_stream()
            .to_string()
            .contains("mut tag : String"));

        // Named by the body and a key.
        //
        // The copy is unused if the body's `tries` is a field.
        let body = quote!(Ok(self.tries));
        let keys = [syn::parse_quote!(tries)];
        let mut sig: Signature = syn::parse_quote!(fn f(&self, tries: u32) -> R);
        let r = super::rebind(
            &mut sig,
            &quote!(p),
            false,
            &body,
            &keys,
            &syn::parse_quote!(R),
        );
        assert_eq!(
            r.to_token_stream().to_string(),
            "# [allow (unused_variables)] let tries = p :: CloneArg :: clone_arg (& tries) ;"
        );
    }

    #[test]
    fn lint_attributes_are_copied_and_expect_moved_to_the_copy() {
        let mut sig: Signature = syn::parse_quote!(
            fn f(
                #[cfg(unix)]
                #[allow(unused_mut)]
                #[expect(unused_variables)]
                #[doc = "kept"]
                mut a: String,
                #[expect(unused_variables)] b: String,
            ) -> R
        );
        let r = super::rebind(
            &mut sig,
            &quote!(p),
            false,
            &quote!(a),
            &[],
            &syn::parse_quote!(R),
        );
        assert_eq!(
            r.to_token_stream().to_string(),
            "# [cfg (unix)] # [allow (unused_mut)] # [expect (unused_variables)] \
             let mut a = p :: CloneArg :: clone_arg (& a) ;"
        );
        let (outside, inside) = r.moved_in();
        assert!(!outside.to_string().contains("expect"), "{outside}");
        assert!(inside.to_string().contains("expect"), "{inside}");
        let sig = sig.to_token_stream().to_string();
        // `a`'s `expect` moved to its copy.
        //
        // `b` has no copy, and keeps its own.
        assert_eq!(sig.matches("expect").count(), 1, "{sig}");
        assert!(
            sig.contains("# [expect (unused_variables)] b : String"),
            "{sig}"
        );
        assert!(sig.contains("# [doc = \"kept\"] a : String"), "{sig}");
    }

    #[test]
    fn hooks_naming_what_the_attempt_takes_are_seen() {
        let sig: Signature =
            syn::parse_quote!(fn f(&mut self, tag: String, id: &u32, (a, b): (u8, u8)) -> R);
        let named = |e: syn::Expr| named_by(&sig, [&e]);
        assert!(named(syn::parse_quote!(|_e| self.limit > 0)));
        assert!(named(syn::parse_quote!(|e, _| log(&tag, e))));
        assert!(named(syn::parse_quote!(|e, _| log(format!("{tag}: {e}")))));
        assert!(!named(syn::parse_quote!(|e| *e > *id)));
        assert!(!named(syn::parse_quote!(is_transient)));
        let shared: Signature = syn::parse_quote!(fn f(&self) -> R);
        assert!(!named_by(&shared, [&syn::parse_quote!(|_| self.ok())]));
    }

    #[test]
    fn an_impl_as_ref_argument_is_borrowed_not_cloned() {
        let mut sig: Signature = syn::parse_quote!(
            fn f(a: impl AsRef<Path>, b: impl AsRef<str> + Send + 'static, c: impl Into<PathBuf>,
                 d: impl AsRef<Path> + Into<PathBuf>, mut e: impl AsRef<Path>) -> R
        );
        let body = quote!(a b c d e);
        let r = super::rebind(
            &mut sig,
            &quote!(p),
            false,
            &body,
            &[],
            &syn::parse_quote!(R),
        );
        assert_eq!(
            r.to_token_stream().to_string(),
            "let a = & a ; let b = & b ; let c = p :: CloneArg :: clone_arg (& c) ; \
             let d = p :: CloneArg :: clone_arg (& d) ; let mut e = & e ;"
        );
    }

    #[test]
    fn a_nested_attempt_gets_its_values_moved_in() {
        let mut sig: Signature =
            syn::parse_quote!(fn f(a: &u8, mut b: String, (c, d): (u8, u8)) -> R);
        let (outside, inside) = rebind(&mut sig, &quote!(p), false).moved_in();
        assert_eq!(
            outside.to_string(),
            "let b = p :: CloneArg :: clone_arg (& b) ; let __retry_arg2 = p :: CloneArg :: clone_arg (& __retry_arg2) ;"
        );
        assert_eq!(
            inside.to_string(),
            "let mut b = b ; let (c , d) = __retry_arg2 ;"
        );
    }
}
