//! `break` and `continue` outside the user's own loops, fenced off so that they stay the error
//! they are without `#[retry]`.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::parse::Parser;
use syn::{Block, Expr};

use crate::walk::{self as visit_mut, VisitMut};

/// The body with each `break` or `continue` outside the user's own loops (and labelled blocks)
/// put in a `const` block of its own.
///
/// There it is rustc's E0268 ("`break` outside of a loop"), as without `#[retry]`.
///
/// It neither leaves the retry loop, nor is reported inside a closure the user never wrote.
///
/// The body is unchanged where there is none, or where syn cannot parse it.
pub(crate) fn fence_loop_exits(body: TokenStream) -> TokenStream {
    let Ok(mut stmts) = Block::parse_within.parse2(body.clone()) else {
        return body;
    };
    let mut fence = LoopExits {
        depth: 0,
        found: false,
    };
    for stmt in &mut stmts {
        fence.visit_stmt_mut(stmt);
    }
    if !fence.found {
        return body;
    }
    let mut tokens = TokenStream::new();
    for stmt in &stmts {
        stmt.to_tokens(&mut tokens);
    }
    tokens
}

struct LoopExits {
    /// How many of the user's loops and labelled blocks enclose the expression visited.
    depth: usize,
    found: bool,
}

impl LoopExits {
    /// `break` (its value dropped: the error is about the `break`) or `continue`, alone in a
    /// `const` block.
    fn fence(&mut self, expr: &mut Expr, keyword: TokenStream) {
        *expr = Expr::Verbatim(quote!(const { #keyword }));
        self.found = true;
    }

    fn inside(&mut self, f: impl FnOnce(&mut Self)) {
        self.depth += 1;
        f(self);
        self.depth -= 1;
    }
}

impl VisitMut for LoopExits {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        match expr {
            // Their own control flow: rustc reports a `break` in them as it would anyway.
            Expr::Closure(_) | Expr::Async(_) | Expr::Const(_) => {}
            Expr::Break(syn::ExprBreak {
                label: None,
                break_token,
                ..
            }) if self.depth == 0 => {
                let keyword = break_token.to_token_stream();
                self.fence(expr, keyword);
            }
            Expr::Continue(syn::ExprContinue {
                label: None,
                continue_token,
                ..
            }) if self.depth == 0 => {
                let keyword = continue_token.to_token_stream();
                self.fence(expr, keyword);
            }
            Expr::Loop(l) => self.inside(|v| v.visit_block_mut(&mut l.body)),
            Expr::While(w) => {
                self.visit_expr_mut(&mut w.cond);
                self.inside(|v| v.visit_block_mut(&mut w.body));
            }
            Expr::ForLoop(f) => {
                self.visit_expr_mut(&mut f.expr);
                self.inside(|v| v.visit_block_mut(&mut f.body));
            }
            // An unlabelled `break` in a labelled block is rustc's E0695, with or without us.
            Expr::Block(b) if b.label.is_some() => {
                self.inside(|v| v.visit_block_mut(&mut b.block));
            }
            _ => visit_mut::visit_expr_mut(self, expr),
        }
    }

    /// A nested `fn`, `impl`…: its own body.
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_break_or_continue_outside_the_users_loops_is_fenced_off() {
        let out = fence_loop_exits(quote! {
            if a { continue; }
            if b { break Ok(1); }
            loop { if c { break; } continue; }
            while d { break }
            for x in y { continue }
            'l: { if e { break 'l; } }
            let f = || loop { break };
            Ok(0)
        })
        .to_string();
        assert_eq!(out.matches("const {").count(), 2, "{out}");
        assert!(out.contains("if a { const { continue } ; }"), "{out}");
        assert!(out.contains("if b { const { break } ; }"), "{out}");
        let body = quote!(loop { break; } Ok(0));
        assert_eq!(fence_loop_exits(body.clone()).to_string(), body.to_string());
    }
}
