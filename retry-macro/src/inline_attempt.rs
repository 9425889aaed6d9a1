//! Attempts inlined in their retry loop (`async fn`, `#[track_caller]` sync fn).
//!
//! Inline, the body is part of the function's own state machine, as without `#[retry]`.
//!
//! In a nested `async` block it would be a second one, polled through one more layer.
//!
//! Closures, `async` blocks and nested items keep their own `return` and `?`.
//!
//! Outside them, rewriting does what the nested block gave for free:
//!
//! | in the body | becomes | so that |
//! |---|---|---|
//! | `return value` | `break 'attempt value` | it ends the attempt, not the call |
//! | `operand?` | `match Branch::branch(operand) { Continue(v) => v, Break(e) => break 'attempt IsResult::from_err(From::from(e)) }` | an error ends the attempt, converted by `From` as `?` converts it (rustc's desugaring of `?`, with the runtime's `Branch` for the unstable `Try`) |
//!
//! No rewriting reaches inside a macro call.
//!
//! A macro call may expand to a `return` (`anyhow::bail!`).
//!
//! It may also hide a `?` in its arguments.
//!
//! So only std's and the logging crates' macros stay inline.
//!
//! They must also have no `return` or `?` in their arguments.
//!
//! Logging macros must be reached through their crate: `tracing::info!`.
//!
//! Other macros and unparsable bodies keep the nested block.
//!
//! The nested block is slower, never wrong.
//!
//! [`NotInline`] says which it was.
//!
//! A sync fn's attempt runs in a closure, except under `#[track_caller]`.
//!
//! A closure cannot be `#[track_caller]`.
//!
//! In one, the caller's location would not reach the body.
//!
//! Under `#[track_caller]` the attempt is inline.
//!
//! There a body that cannot be inline is an error naming what is in the way.

use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned, ToTokens};
use syn::parse::Parser;
use syn::{Block, Expr, Ident, Lifetime, Macro};

use crate::respan::respan;
use crate::walk::{self as visit_mut, VisitMut};

/// An attempt's body, rewritten to run inline.
pub(crate) struct InlineAttempt {
    /// The body's statements.
    pub stmts: TokenStream,
    /// Whether they `break` to the attempt's label.
    ///
    /// The label is written only then: an unused label is a warning.
    pub labelled: bool,
}

/// Why an attempt cannot be inline.
///
/// It names the body's first possible exit that no rewriting reaches.
pub(crate) enum NotInline {
    /// A body syn does not parse.
    Unparsed,
    /// A call of an unknown macro, which may `return` (`known: false`).
    ///
    /// Or one with a `return` or `?` in its arguments.
    Macro { path: syn::Path, known: bool },
    /// Tokens syn keeps unparsed, holding a `return` or `?`.
    Verbatim(Span),
}

/// The body inlined under `label`, or why it must stay nested.
///
/// `private` is the facade's `__private` path.
///
/// `span` is the return type's.
///
/// What needs `R` to be a `Result` is spanned there.
///
/// As elsewhere in the expansion, it is then reported once.
pub(crate) fn rewrite(
    body: &TokenStream,
    label: &Lifetime,
    private: &TokenStream,
    span: Span,
) -> Result<InlineAttempt, NotInline> {
    let mut stmts = Block::parse_within
        .parse2(body.clone())
        .map_err(|_| NotInline::Unparsed)?;
    let mut rewrite = Rewrite {
        label,
        private,
        span,
        labelled: false,
        not_inline: None,
    };
    for stmt in &mut stmts {
        rewrite.visit_stmt_mut(stmt);
    }
    if let Some(not_inline) = rewrite.not_inline {
        return Err(not_inline);
    }
    let mut tokens = TokenStream::new();
    for stmt in &stmts {
        stmt.to_tokens(&mut tokens);
    }
    Ok(InlineAttempt {
        stmts: tokens,
        labelled: rewrite.labelled,
    })
}

struct Rewrite<'a> {
    label: &'a Lifetime,
    private: &'a TokenStream,
    span: Span,
    /// A `return` or `?` became a `break` to the label.
    labelled: bool,
    /// The first way out of the function that skips rewriting.
    not_inline: Option<NotInline>,
}

impl Rewrite<'_> {
    /// `operand?` as rustc desugars it, but ending the attempt.
    ///
    /// See the runtime's `Branch` and `IsResult`.
    ///
    /// The operand's fallible steps are spanned at the `?`.
    ///
    /// That is where rustc reports its own.
    ///
    /// The step that needs `R` to be a `Result` is spanned at the return type.
    fn question_mark(&self, operand: &Expr, mark: syn::Token![?]) -> TokenStream {
        let (label, span) = (self.label, self.span);
        let at = mark.span;
        // Spanned at the `?`, with no hygiene of their own.
        //
        // A mixed-site span would be reported at the attribute.
        //
        // No user name is in scope where they are bound.
        let [value, error] = ["__retry_value", "__retry_error"].map(|name| Ident::new(name, at));
        let flow = quote_spanned!(at=> ::core::ops::ControlFlow);
        let private = respan(self.private, at);
        // The trait's method, not a generic function.
        //
        // The operand's type is then checked once.
        //
        // The result's projections do not check it again.
        let branch = quote_spanned!(at=> #private::Branch::branch);
        // `From::from` is called here, in the user's function.
        //
        // So a `#[track_caller]` `From` gets the location rustc's `?` gives.
        //
        // The call's parentheses carry it: the start of `operand?`.
        //
        // The path is spanned at the `?`, where rustc reports a missing `From`.
        let start = operand
            .to_token_stream()
            .into_iter()
            .next()
            .map_or(at, |first| first.span());
        let mut args = Group::new(Delimiter::Parenthesis, error.to_token_stream());
        args.set_span(start);
        let converted = quote_spanned!(at=> ::core::convert::From::from #args);
        // The whole call is spanned at the return type.
        //
        // Then its bound `R: IsResult` is reported once, with the others.
        //
        // The conversion inside it is spanned at the `?`.
        let private_ret = respan(self.private, span);
        let outcome = quote_spanned!(span=> #private_ret::IsResult::from_err(#converted));
        // In parentheses: `f()?.g()` must not become a `match` statement and `.g()`.
        //
        // The conversion counts as the user's, unlike rustc's desugared `?`.
        //
        // So `clippy::useless_conversion` fires when the error types already match.
        //
        // The lint is allowed on the arm, which holds nothing of the user's.
        quote_spanned! {at=>
            (match #branch(#operand) {
                #flow::Continue(#value) => #value,
                #[allow(clippy::useless_conversion)]
                #flow::Break(#error) => break #label #outcome,
            })
        }
    }
}

impl VisitMut for Rewrite<'_> {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        match expr {
            // Their own `return` and `?`: not the attempt's.
            Expr::Closure(_) | Expr::Async(_) | Expr::Const(_) | Expr::TryBlock(_) => {}
            Expr::Return(ret) => {
                if let Some(value) = &mut ret.expr {
                    self.visit_expr_mut(value);
                }
                let label = self.label;
                let (attrs, value) = (&ret.attrs, &ret.expr);
                let brk = quote_spanned!(ret.return_token.span=> break);
                // Attributes kept: a `#[cfg(..)] return …;` that is off stays off.
                *expr = Expr::Verbatim(quote!(#(#attrs)* #brk #label #value));
                self.labelled = true;
            }
            Expr::Try(question) => {
                self.visit_expr_mut(&mut question.expr);
                let attrs = &question.attrs;
                let rewritten = self.question_mark(&question.expr, question.question_token);
                *expr = Expr::Verbatim(quote!(#(#attrs)* #rewritten));
                self.labelled = true;
            }
            // Tokens syn leaves unparsed may hold a `return` or `?`.
            Expr::Verbatim(tokens) => {
                if leaves(tokens) && self.not_inline.is_none() {
                    self.not_inline = Some(NotInline::Verbatim(
                        tokens
                            .clone()
                            .into_iter()
                            .next()
                            .map_or(self.span, |t| t.span()),
                    ));
                }
            }
            _ => visit_mut::visit_expr_mut(self, expr),
        }
    }

    /// A nested `fn`, `impl`…: its own body.
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}

    fn visit_macro_mut(&mut self, mac: &mut Macro) {
        let known = is_known(mac);
        if (!known || leaves(&mac.tokens)) && self.not_inline.is_none() {
            self.not_inline = Some(NotInline::Macro {
                path: mac.path.clone(),
                known,
            });
        }
    }
}

/// Std macros that never expand to a `return` of their own.
///
/// They may be bare (`println!`) or through their crate (`std::println!`).
const STD_MACROS: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "cfg",
    "column",
    "concat",
    "dbg",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "env",
    "eprint",
    "eprintln",
    "file",
    "format",
    "format_args",
    "include_bytes",
    "include_str",
    "line",
    "matches",
    "module_path",
    "option_env",
    "panic",
    "print",
    "println",
    "stringify",
    "todo",
    "unimplemented",
    "unreachable",
    "vec",
    "write",
    "writeln",
];

/// Logging macros (`tracing`, `log`), only through their crate: `tracing::warn!`.
///
/// A bare `error!` may well be the user's own, and return.
const LOG_MACROS: &[&str] = &["debug", "error", "event", "info", "trace", "warn"];

/// A macro that never expands to a `return` of its own.
///
/// It has a known name, reached as the table above says.
///
/// A call of it stays inline if its arguments hold no `return` or `?` either.
fn is_known(mac: &Macro) -> bool {
    let mut names: Vec<String> = Vec::new();
    for s in &mac.path.segments {
        names.push(s.ident.to_string());
    }
    let mut segments: Vec<&str> = Vec::new();
    for s in &names {
        segments.push(s);
    }
    match segments.as_slice() {
        [name] => STD_MACROS.contains(name),
        ["std" | "core" | "alloc", name] => STD_MACROS.contains(name),
        ["tracing" | "log", name] => LOG_MACROS.contains(name),
        _ => false,
    }
}

/// Whether tokens hold a `return` or a `?`, at any depth.
fn leaves(tokens: &TokenStream) -> bool {
    tokens.clone().into_iter().any(|tt| match tt {
        TokenTree::Ident(ident) => ident == "return",
        TokenTree::Punct(punct) => punct.as_char() == '?',
        TokenTree::Group(group) => leaves(&group.stream()),
        TokenTree::Literal(_) => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(body: TokenStream) -> Option<(String, bool)> {
        let label = Lifetime::new("'attempt", Span::call_site());
        rewrite(&body, &label, &quote!(p), Span::call_site())
            .ok()
            .map(|i| (i.stmts.to_string(), i.labelled))
    }

    #[test]
    fn return_and_question_mark_end_the_attempt() {
        let (out, labelled) = rewritten(quote! {
            let x = f()?;
            if x { return Err(e); }
            Ok(x)
        })
        .expect("inline");
        assert!(labelled);
        assert!(out.contains("break 'attempt Err (e)"), "{out}");
        assert!(out.contains("p :: Branch :: branch (f ())"), "{out}");
        assert!(
            out.contains(
                "break 'attempt p :: IsResult :: from_err (:: core :: convert :: From :: from"
            ),
            "{out}"
        );
        assert!(!out.contains("return"), "{out}");
    }

    #[test]
    fn attributes_on_a_rewritten_statement_are_kept() {
        let (out, _) = rewritten(quote! {
            #[cfg(feature = "x")]
            trace_op()?;
            #[cfg(feature = "y")]
            return Err(e);
            Ok(())
        })
        .expect("inline");
        assert!(
            out.contains("# [cfg (feature = \"x\")] (match p :: Branch :: branch (trace_op ())"),
            "{out}"
        );
        assert!(
            out.contains("# [cfg (feature = \"y\")] break 'attempt Err (e)"),
            "{out}"
        );
    }

    #[test]
    fn closures_async_blocks_and_items_keep_their_own() {
        let (out, labelled) = rewritten(quote! {
            let c = || -> Result<(), E> { g()?; return Ok(()) };
            let a = async { g()?; Ok::<_, E>(()) };
            fn inner() -> Result<(), E> { g()?; return Ok(()) }
            Ok(())
        })
        .expect("inline");
        assert!(!labelled, "{out}");
        assert_eq!(out.matches("return").count(), 2, "{out}");
        assert!(!out.contains("break"), "{out}");
    }

    #[test]
    fn no_exit_needs_no_label() {
        let (_, labelled) = rewritten(quote!(let x = 1; println!("{x:?}"); Ok(x))).expect("inline");
        assert!(!labelled);
    }

    #[test]
    fn macros_that_may_leave_keep_the_nested_block() {
        assert!(rewritten(quote!(anyhow::bail!("no"); Ok(()))).is_none());
        assert!(rewritten(quote!(let s = format!("{}", f()?); Ok(s))).is_none());
        assert!(rewritten(quote!(my_macro!(); Ok(()))).is_none());
        assert!(rewritten(quote!(tokio::select! { _ = a => {} }; Ok(()))).is_none());
        assert!(rewritten(quote!(tracing::info!("ok"); log::warn!("w"); Ok(()))).is_some());
        assert!(rewritten(quote!(std::println!("ok"); Ok(()))).is_some());
        // A bare logging name may be the user's own macro.
        assert!(rewritten(quote!(error!(Timeout); Ok(()))).is_none());
        assert!(rewritten(quote!(tracing::bail!("no"); Ok(()))).is_none());
    }

    #[test]
    fn what_keeps_an_attempt_from_being_inline_is_named() {
        let why = |body: TokenStream| {
            let label = Lifetime::new("'attempt", Span::call_site());
            match rewrite(&body, &label, &quote!(p), Span::call_site()) {
                Ok(_) => "inline".to_owned(),
                Err(NotInline::Macro { path, known }) => {
                    format!("{} {known}", path.to_token_stream())
                }
                Err(NotInline::Verbatim(_)) => "verbatim".to_owned(),
                Err(NotInline::Unparsed) => "unparsed".to_owned(),
            }
        };
        assert_eq!(
            why(quote!(anyhow::bail!("no"); Ok(()))),
            "anyhow :: bail false"
        );
        assert_eq!(why(quote!(Ok(format!("{}", f()?)))), "format true");
        // The first in the body.
        assert_eq!(why(quote!(a!(); b!(); Ok(()))), "a false");
        assert_eq!(why(quote!(let = ;)), "unparsed");
        assert_eq!(why(quote!(println!("{}", 1); Ok(()))), "inline");
    }
}
