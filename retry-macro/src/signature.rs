//! What the signature says, read from its syntax.
//!
//! - The receiver's type.
//! - The borrows of `&mut` arguments the return type may hold.
//! - The `impl AsRef` arguments an attempt can borrow.
//! - Whether the return type may be a `Result`.
//!
//! valid.rs, item.rs, rebind.rs and the expansion ask this module.
//!
//! It asks none of them.

use quote::ToTokens;
use syn::punctuated::Punctuated;
use syn::{FnArg, Signature, Token, Type};

use crate::walk::VisitMut;

/// The receiver's type, as written or implied.
///
/// - `Self` for `self`.
/// - `&'a mut Self` for `&'a mut self`, spanned at the `&` and `self`.
/// - The type of `self: Box<Self>`.
///
/// syn's `Receiver` keeps its spelling, `ReceiverKind`, not its type.
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

/// A `&mut` argument's borrow the return type may hold.
///
/// The argument may be `&mut self`.
pub(crate) struct ReturnedBorrow {
    /// The argument's name as written (`self` for the receiver).
    pub name: String,
    /// Where the return type holds it.
    pub at: proc_macro2::Span,
    /// Whether it is held only as a shared reference (`&T`).
    ///
    /// An inline attempt may return one.
    ///
    /// Inline attempts are an `async fn`'s and a `#[track_caller]` sync fn's.
    ///
    /// It may if the body takes the borrow without re-borrowing the argument mutably.
    ///
    /// rustc judges whether it does.
    ///
    /// Held any other way, it may be a `&mut`.
    ///
    /// No loop can hand that out twice.
    ///
    /// The other ways:
    ///
    /// - `&mut T`.
    /// - A lifetime in a path or a bound.
    /// - `Self` carrying the impl's lifetimes.
    pub shared: bool,
}

/// The `&mut` borrows the return type `output` may hold.
///
/// They are read from the signature:
///
/// - an elided output lifetime that comes from a `&mut` receiver or a lone `&mut` argument;
/// - a named one that a `&mut` argument carries, or that outlives it (`'c: 'e`);
/// - `Self`, which may carry any lifetime of the `impl`'s (one the function does not declare).
///
/// A lifetime hidden in a path (`Guard<T>` for `Guard<'_, T>`) is not seen.
pub(crate) fn returned_borrows(sig: &Signature, output: &syn::Type) -> Vec<ReturnedBorrow> {
    let lifetimes = |ty: &syn::Type| {
        let mut found = Lifetimes::default();
        found.visit_type_mut(&mut ty.clone());
        found
    };
    let returned = lifetimes(output);
    // Each argument's name, lifetimes, and whether it is the receiver.
    //
    // Loops rather than iterator chains.
    //
    // Each adapter is a handful of functions compiled in the user's build.
    let mut inputs: Vec<(String, Lifetimes, bool)> = Vec::new();
    for arg in &sig.inputs {
        inputs.push(match arg {
            FnArg::Receiver(r) => ("self".to_owned(), lifetimes(&receiver_type(r)), true),
            FnArg::Typed(t) => (t.pat.to_token_stream().to_string(), lifetimes(&t.ty), false),
        });
    }
    // Where an elided lifetime of the output comes from.
    //
    // The receiver, if it is a reference.
    //
    // Else the inputs' only lifetime, if there is one.
    let mut with_lifetimes: Vec<&(String, Lifetimes, bool)> = Vec::new();
    let mut receiver = None;
    for input in &inputs {
        if !input.1.all.is_empty() {
            with_lifetimes.push(input);
            if input.2 && receiver.is_none() {
                receiver = Some(input);
            }
        }
    }
    let elided_from = match receiver {
        Some(receiver) => Some(receiver),
        None => match with_lifetimes[..] {
            [only] if only.1.all.len() == 1 => Some(only),
            _ => None,
        },
    };
    let outlives = outlives(sig);
    // The lifetimes that may stand in for `named`.
    //
    // They are `named` itself and those that outlive it.
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
    let mut declared: Vec<String> = Vec::new();
    for l in sig.generics.lifetimes() {
        declared.push(l.lifetime.ident.to_string());
    }
    let mut borrows = Vec::new();
    for (lifetime, at, shared) in &returned.all {
        let mut add = |name: &String| {
            borrows.push(ReturnedBorrow {
                name: name.clone(),
                at: *at,
                shared: *shared,
            })
        };
        match lifetime {
            None => {
                if let Some((name, l, _)) = elided_from {
                    if l.first_is_mut {
                        add(name);
                    }
                }
            }
            Some(named) => {
                let set = longer(named);
                for (name, l, _) in &inputs {
                    if l.mutable.iter().any(|m| set.contains(m)) {
                        add(name);
                    }
                }
            }
        }
    }
    for at in &returned.selves {
        for (name, l, _) in &inputs {
            if l.mutable
                .iter()
                .any(|l| l != "static" && !declared.contains(l))
            {
                borrows.push(ReturnedBorrow {
                    name: name.clone(),
                    at: *at,
                    shared: false,
                });
            }
        }
    }
    borrows
}

/// The signature's outlives bounds, `('long, 'short)` for each `'long: 'short` (by name).
fn outlives(sig: &Signature) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    let mut add = |long: &syn::Lifetime, bounds: &Punctuated<syn::Lifetime, Token![+]>| {
        for i in 0..bounds.len() {
            pairs.push((long.ident.to_string(), bounds[i].ident.to_string()));
        }
    };
    for param in sig.generics.lifetimes() {
        add(&param.lifetime, &param.bounds);
    }
    if let Some(clause) = &sig.generics.where_clause {
        for i in 0..clause.predicates.len() {
            if let syn::WherePredicate::Lifetime(p) = &clause.predicates[i] {
                add(&p.lifetime, &p.bounds);
            }
        }
    }
    pairs
}

/// The lifetimes a type names.
///
/// - Each `&` (its lifetime, `None` if elided) and each lifetime (`'_` as `None`).
/// - With each, where it is written and whether it is a shared reference's.
/// - Those of `&mut` references.
/// - Where it names `Self`.
///
/// Not those of `fn` pointers and `Fn(…)` bounds, which are their own.
#[derive(Default)]
struct Lifetimes {
    all: Vec<(Option<String>, proc_macro2::Span, bool)>,
    mutable: Vec<String>,
    /// Whether the first is a `&mut`.
    ///
    /// An elided output lifetime then refers to it.
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

/// An `impl AsRef<Path>` (`impl AsRef<str> + Send`…) argument.
///
/// Each attempt can borrow it rather than clone it.
///
/// `&T: AsRef<U>` wherever `T: AsRef<U>`.
///
/// So the argument need not be `Clone` (`tokio::fs`'s signatures).
///
/// It accepts only bounds that `&T` keeps.
///
/// One that consumes (`Into<PathBuf>`) needs a value of its own.
pub(crate) fn is_borrowed_impl(ty: &Type) -> bool {
    let Type::ImplTrait(it) = strip_group(ty) else {
        return false;
    };
    let trait_name = |bound: &syn::TypeParamBound| match bound {
        syn::TypeParamBound::Trait(t)
            if t.maybe.is_none()
                && t.modifiers.require_empty().is_ok()
                && t.lifetimes.is_none() =>
        {
            t.path.segments.last().map(|s| s.ident.to_string())
        }
        _ => None,
    };
    it.bounds
        .iter()
        .any(|b| trait_name(b).as_deref() == Some("AsRef"))
        && it.bounds.iter().all(|b| {
            matches!(b, syn::TypeParamBound::Lifetime(_))
                || matches!(
                    trait_name(b).as_deref(),
                    Some("AsRef" | "Send" | "Sync" | "Unpin" | "Debug" | "Display")
                )
        })
}

/// `ty` without the invisible groups (`macro_rules!` fragments) and parentheses around it.
pub(crate) fn strip_group(ty: &Type) -> &Type {
    match ty {
        Type::Group(g) => strip_group(&g.elem),
        Type::Paren(p) => strip_group(&p.elem),
        other => other,
    }
}

/// Whether the return type may be a `Result` (or an alias of one).
///
/// Where it visibly is not, the one error about it is all the user should see.
///
/// A `?` that suits the return type must not add another.
///
/// An example is an `Option`'s `?` in a function returning an `Option`.
///
/// So the attempt stays a nested block, where `?` is rustc's own.
pub(crate) fn could_be_result(ret: &Type) -> bool {
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
