//! Spans for generated tokens: where rustc reports what goes wrong in them.

use proc_macro2::{Group, Span, TokenStream, TokenTree};

/// The same tokens, all spanned at `span`, the groups' delimiters included: an error in them
/// (a bound not met by a path the expansion names) is then reported at `span`, the user's
/// token they stand for.
pub(crate) fn respan(tokens: &TokenStream, span: Span) -> TokenStream {
    // A loop, not `map(…).collect()`: collecting a new iterator type into a `TokenStream`
    // compiles many more of proc-macro2's and std's functions in the user's build.
    let mut out = TokenStream::new();
    for mut tt in tokens.clone() {
        if let TokenTree::Group(g) = &tt {
            let mut group = Group::new(g.delimiter(), respan(&g.stream(), span));
            group.set_span(span);
            tt = group.into();
        } else {
            tt.set_span(span);
        }
        out.extend([tt]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn every_token_and_group_gets_the_span() {
        let span = Span::mixed_site();
        let out = respan(&quote!(::a::b(c, [d])), span);
        fn all(tokens: TokenStream, span: Span) {
            for tt in tokens {
                assert_eq!(format!("{:?}", tt.span()), format!("{span:?}"));
                if let TokenTree::Group(g) = tt {
                    all(g.stream(), span);
                }
            }
        }
        all(out, span);
    }
}
