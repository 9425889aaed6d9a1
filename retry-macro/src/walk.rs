//! The walks over a function's body and types that the expansion needs, written out.
//!
//! Not syn's `visit-mut`: it walks every node, and each visitor instantiates the whole walk.
//!
//! And a user's syn (shared with tokio-macros, which does not use it) would be built with one
//! more feature.
//!
//! These walks go where a `return`, a `?`, a `break`, a macro call or the receiver's `self` can
//! be, and no further:
//!
//! - a body: statements, expressions, blocks, match arms and their guards, closures' and
//!   `async` blocks' bodies.
//!   - A guard is in the arm's pattern, in syn 3.
//!   - Not nested items: they have their own body ([`VisitMut::visit_item_mut`] sees them and
//!     stops).
//!   - Nor types, nor the rest of patterns: a macro there expands to a type or a pattern, never
//!     to a `return`.
//! - a type: references, lifetimes, paths (`Self`), generic arguments, bounds.
//!   - The walker chooses whether to enter fn pointers and `Fn(..)` sugar, whose lifetimes are
//!     their own.
//!
//! The names are syn's, so a visitor reads as it would with syn's trait.

use syn::{
    Block, Expr, ExprPath, GenericArgument, Item, Lifetime, Macro, Pat, PathArguments, ReturnType,
    Stmt, Type, TypeParamBound,
};

/// `self` as the walks take it: one walk, compiled once, for every visitor.
///
/// A generic walk would be compiled again for each.
pub(crate) trait AsDyn {
    fn as_dyn(&mut self) -> &mut dyn VisitMut;
}

impl<T: VisitMut> AsDyn for T {
    fn as_dyn(&mut self) -> &mut dyn VisitMut {
        self
    }
}

/// A visitor of a body or a type; each method's default walks into the node's parts.
pub(crate) trait VisitMut: AsDyn {
    fn visit_stmt_mut(&mut self, stmt: &mut Stmt) {
        visit_stmt_mut(self.as_dyn(), stmt);
    }

    fn visit_block_mut(&mut self, block: &mut Block) {
        for stmt in &mut block.stmts {
            self.visit_stmt_mut(stmt);
        }
    }

    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        visit_expr_mut(self.as_dyn(), expr);
    }

    fn visit_pat_mut(&mut self, pat: &mut Pat) {
        visit_pat_mut(self.as_dyn(), pat);
    }

    /// A path in an expression (`self`, `x`, `Vec::new`). Its generic arguments are not walked.
    fn visit_expr_path_mut(&mut self, _: &mut ExprPath) {}

    /// A macro call, in a statement, an expression or a pattern.
    fn visit_macro_mut(&mut self, _: &mut Macro) {}

    /// A nested item (`fn`, `impl`, `struct`…): not walked.
    fn visit_item_mut(&mut self, _: &mut Item) {}

    fn visit_type_mut(&mut self, ty: &mut Type) {
        visit_type_mut(self.as_dyn(), ty);
    }

    fn visit_type_reference_mut(&mut self, r: &mut syn::TypeReference) {
        visit_type_reference_mut(self.as_dyn(), r);
    }

    fn visit_type_path_mut(&mut self, path: &mut syn::TypePath) {
        visit_type_path_mut(self.as_dyn(), path);
    }

    fn visit_type_fn_ptr_mut(&mut self, f: &mut syn::TypeFnPtr) {
        for i in 0..f.inputs.len() {
            let arg = &mut f.inputs[i];
            self.visit_type_mut(&mut arg.ty);
        }
        visit_return_type_mut(self.as_dyn(), &mut f.output);
    }

    fn visit_parenthesized_generic_arguments_mut(
        &mut self,
        args: &mut syn::ParenthesizedGenericArguments,
    ) {
        for i in 0..args.inputs.len() {
            let arg = &mut args.inputs[i];
            self.visit_type_mut(&mut arg.ty);
        }
        visit_return_type_mut(self.as_dyn(), &mut args.output);
    }

    /// A lifetime in a type, other than a reference's own (`&'a T`: see
    /// [`VisitMut::visit_type_reference_mut`]).
    fn visit_lifetime_mut(&mut self, _: &mut Lifetime) {}
}

pub(crate) fn visit_stmt_mut(v: &mut dyn VisitMut, stmt: &mut Stmt) {
    match stmt {
        Stmt::Local(local) => {
            v.visit_pat_mut(&mut local.pat);
            if let Some(init) = &mut local.init {
                v.visit_expr_mut(&mut init.expr);
                if let Some((_, diverge)) = &mut init.diverge {
                    v.visit_expr_mut(diverge);
                }
            }
        }
        Stmt::Item(item) => v.visit_item_mut(item),
        Stmt::Expr(expr, _) => v.visit_expr_mut(expr),
        Stmt::Macro(mac) => v.visit_macro_mut(&mut mac.mac),
    }
}

/// Each part of `expr` that is an expression, a block, a pattern or a macro call, in the order
/// they are written.
pub(crate) fn visit_expr_mut(v: &mut dyn VisitMut, expr: &mut Expr) {
    let all = |v: &mut dyn VisitMut,
               exprs: &mut syn::punctuated::Punctuated<Expr, syn::Token![,]>| {
        for i in 0..exprs.len() {
            let e = &mut exprs[i];
            v.visit_expr_mut(e);
        }
    };
    match expr {
        Expr::Array(e) => all(v, &mut e.elems),
        Expr::Assign(e) => {
            v.visit_expr_mut(&mut e.left);
            v.visit_expr_mut(&mut e.right);
        }
        Expr::Async(e) => v.visit_block_mut(&mut e.block),
        Expr::Await(e) => v.visit_expr_mut(&mut e.base),
        Expr::Binary(e) => {
            v.visit_expr_mut(&mut e.left);
            v.visit_expr_mut(&mut e.right);
        }
        Expr::Block(e) => v.visit_block_mut(&mut e.block),
        Expr::Break(e) => visit_opt(v, &mut e.expr),
        Expr::Call(e) => {
            v.visit_expr_mut(&mut e.func);
            all(v, &mut e.args);
        }
        Expr::Cast(e) => v.visit_expr_mut(&mut e.expr),
        Expr::Closure(e) => {
            for i in 0..e.inputs.len() {
                let input = &mut e.inputs[i];
                v.visit_pat_mut(input);
            }
            v.visit_expr_mut(&mut e.body);
        }
        Expr::Const(e) => v.visit_block_mut(&mut e.block),
        Expr::Field(e) => v.visit_expr_mut(&mut e.base),
        Expr::ForLoop(e) => {
            v.visit_pat_mut(&mut e.pat);
            v.visit_expr_mut(&mut e.expr);
            v.visit_block_mut(&mut e.body);
        }
        Expr::Group(e) => v.visit_expr_mut(&mut e.expr),
        Expr::If(e) => {
            v.visit_expr_mut(&mut e.cond);
            v.visit_block_mut(&mut e.then_branch);
            if let Some((_, other)) = &mut e.else_branch {
                v.visit_expr_mut(other);
            }
        }
        Expr::Index(e) => {
            v.visit_expr_mut(&mut e.expr);
            v.visit_expr_mut(&mut e.index);
        }
        Expr::Let(e) => {
            v.visit_pat_mut(&mut e.pat);
            v.visit_expr_mut(&mut e.expr);
        }
        Expr::Loop(e) => v.visit_block_mut(&mut e.body),
        Expr::Macro(e) => v.visit_macro_mut(&mut e.mac),
        Expr::Match(e) => {
            v.visit_expr_mut(&mut e.expr);
            for arm in &mut e.arms {
                v.visit_pat_mut(&mut arm.pat);
                v.visit_expr_mut(&mut arm.body);
            }
        }
        Expr::MethodCall(e) => {
            v.visit_expr_mut(&mut e.receiver);
            all(v, &mut e.args);
        }
        Expr::Paren(e) => v.visit_expr_mut(&mut e.expr),
        Expr::Path(e) => v.visit_expr_path_mut(e),
        Expr::Range(e) => {
            visit_opt(v, &mut e.start);
            visit_opt(v, &mut e.end);
        }
        Expr::RawAddr(e) => v.visit_expr_mut(&mut e.expr),
        Expr::Reference(e) => v.visit_expr_mut(&mut e.expr),
        Expr::Repeat(e) => {
            v.visit_expr_mut(&mut e.expr);
            v.visit_expr_mut(&mut e.len);
        }
        Expr::Return(e) => visit_opt(v, &mut e.expr),
        Expr::Struct(e) => {
            for i in 0..e.fields.len() {
                let field = &mut e.fields[i];
                v.visit_expr_mut(&mut field.expr);
            }
            visit_opt(v, &mut e.rest);
        }
        Expr::Try(e) => v.visit_expr_mut(&mut e.expr),
        Expr::TryBlock(e) => v.visit_block_mut(&mut e.block),
        Expr::Tuple(e) => all(v, &mut e.elems),
        Expr::Unary(e) => v.visit_expr_mut(&mut e.expr),
        Expr::Unsafe(e) => v.visit_block_mut(&mut e.block),
        Expr::While(e) => {
            v.visit_expr_mut(&mut e.cond);
            v.visit_block_mut(&mut e.body);
        }
        Expr::Yield(e) => visit_opt(v, &mut e.expr),
        // `continue`, `_`, literals, tokens syn keeps unparsed (the visitor's own
        // `visit_expr_mut` looks at them), and syntax newer than this walk.
        _ => {}
    }
}

fn visit_opt(v: &mut dyn VisitMut, expr: &mut Option<Box<Expr>>) {
    if let Some(expr) = expr {
        v.visit_expr_mut(expr);
    }
}

/// A pattern's guards (`x if x > limit`) and macro calls, where a body's expressions can be.
pub(crate) fn visit_pat_mut(v: &mut dyn VisitMut, pat: &mut Pat) {
    match pat {
        Pat::Guard(p) => {
            v.visit_pat_mut(&mut p.pat);
            v.visit_expr_mut(&mut p.guard);
        }
        Pat::Ident(p) => {
            if let Some((_, sub)) = &mut p.subpat {
                v.visit_pat_mut(sub);
            }
        }
        Pat::Macro(p) => v.visit_macro_mut(&mut p.mac),
        Pat::Or(p) => {
            for i in 0..p.cases.len() {
                let p = &mut p.cases[i];
                v.visit_pat_mut(p);
            }
        }
        Pat::Paren(p) => v.visit_pat_mut(&mut p.pat),
        Pat::Reference(p) => v.visit_pat_mut(&mut p.pat),
        Pat::Slice(p) => {
            for i in 0..p.elems.len() {
                let p = &mut p.elems[i];
                v.visit_pat_mut(p);
            }
        }
        Pat::Struct(p) => {
            for i in 0..p.fields.len() {
                let field = &mut p.fields[i];
                v.visit_pat_mut(&mut field.pat);
            }
        }
        Pat::Tuple(p) => {
            for i in 0..p.elems.len() {
                let p = &mut p.elems[i];
                v.visit_pat_mut(p);
            }
        }
        Pat::TupleStruct(p) => {
            for i in 0..p.elems.len() {
                let p = &mut p.elems[i];
                v.visit_pat_mut(p);
            }
        }
        Pat::Type(p) => v.visit_pat_mut(&mut p.pat),
        // Constants, literals, paths, ranges, `..`, `_`: no guard, no macro call.
        _ => {}
    }
}

/// Each type, lifetime and bound in `ty`, in the order they are written.
pub(crate) fn visit_type_mut(v: &mut dyn VisitMut, ty: &mut Type) {
    match ty {
        Type::Array(t) => v.visit_type_mut(&mut t.elem),
        Type::FnPtr(t) => v.visit_type_fn_ptr_mut(t),
        Type::Group(t) => v.visit_type_mut(&mut t.elem),
        Type::ImplTrait(t) => visit_bounds_mut(v, &mut t.bounds),
        Type::Paren(t) => v.visit_type_mut(&mut t.elem),
        Type::Path(t) => v.visit_type_path_mut(t),
        Type::Ptr(t) => v.visit_type_mut(&mut t.elem),
        Type::Reference(t) => v.visit_type_reference_mut(t),
        Type::Slice(t) => v.visit_type_mut(&mut t.elem),
        Type::TraitObject(t) => visit_bounds_mut(v, &mut t.bounds),
        Type::Tuple(t) => {
            for i in 0..t.elems.len() {
                let t = &mut t.elems[i];
                v.visit_type_mut(t);
            }
        }
        // `_`, `!`, a macro call, tokens syn keeps unparsed.
        _ => {}
    }
}

pub(crate) fn visit_type_reference_mut(v: &mut dyn VisitMut, r: &mut syn::TypeReference) {
    if let Some(lifetime) = &mut r.lifetime {
        v.visit_lifetime_mut(lifetime);
    }
    v.visit_type_mut(&mut r.elem);
}

pub(crate) fn visit_type_path_mut(v: &mut dyn VisitMut, path: &mut syn::TypePath) {
    if let Some(qself) = &mut path.qself {
        v.visit_type_mut(&mut qself.ty);
    }
    visit_path_mut(v, &mut path.path);
}

fn visit_path_mut(v: &mut dyn VisitMut, path: &mut syn::Path) {
    for i in 0..path.segments.len() {
        let segment = &mut path.segments[i];
        match &mut segment.arguments {
            PathArguments::AngleBracketed(args) => visit_generic_args_mut(v, args),
            PathArguments::Parenthesized(args) => {
                v.visit_parenthesized_generic_arguments_mut(args);
            }
            PathArguments::None => {}
        }
    }
}

fn visit_generic_args_mut(v: &mut dyn VisitMut, args: &mut syn::AngleBracketedGenericArguments) {
    for i in 0..args.args.len() {
        let arg = &mut args.args[i];
        match arg {
            GenericArgument::Lifetime(l) => v.visit_lifetime_mut(l),
            GenericArgument::Type(t) => v.visit_type_mut(t),
            GenericArgument::AssocType(a) => {
                if let Some(generics) = &mut a.generics {
                    visit_generic_args_mut(v, generics);
                }
                v.visit_type_mut(&mut a.ty);
            }
            GenericArgument::Constraint(c) => {
                if let Some(generics) = &mut c.generics {
                    visit_generic_args_mut(v, generics);
                }
                visit_bounds_mut(v, &mut c.bounds);
            }
            // Constants.
            _ => {}
        }
    }
}

fn visit_bounds_mut<P>(
    v: &mut dyn VisitMut,
    bounds: &mut syn::punctuated::Punctuated<TypeParamBound, P>,
) {
    for b in 0..bounds.len() {
        let bound = &mut bounds[b];
        match bound {
            TypeParamBound::Trait(t) => {
                if let Some(bound_lifetimes) = &mut t.lifetimes {
                    for i in 0..bound_lifetimes.lifetimes.len() {
                        let param = &mut bound_lifetimes.lifetimes[i];
                        if let syn::GenericParam::Lifetime(param) = param {
                            v.visit_lifetime_mut(&mut param.lifetime);
                            for j in 0..param.bounds.len() {
                                let bound = &mut param.bounds[j];
                                v.visit_lifetime_mut(bound);
                            }
                        }
                    }
                }
                visit_path_mut(v, &mut t.path);
            }
            TypeParamBound::Lifetime(l) => v.visit_lifetime_mut(l),
            TypeParamBound::PreciseCapture(c) => {
                for i in 0..c.params.len() {
                    let param = &mut c.params[i];
                    if let syn::CapturedParam::Lifetime(l) = param {
                        v.visit_lifetime_mut(l);
                    }
                }
            }
            _ => {}
        }
    }
}

fn visit_return_type_mut(v: &mut dyn VisitMut, output: &mut ReturnType) {
    if let ReturnType::Type(_, ty) = output {
        v.visit_type_mut(ty);
    }
}
