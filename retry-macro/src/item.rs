//! The annotated function: its attributes, signature and body (kept as tokens).

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, ReturnType, Signature, Token, Visibility};

use crate::async_trait::{self, AsyncTrait};
use crate::signature::could_be_result;

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

/// The body's braces, also when a `macro_rules!` passed it as `$body:block`.
///
/// Then it arrives wrapped in an invisible (None-delimited) group.
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

    /// The `#[track_caller]` of a sync fn that may return a `Result`.
    ///
    /// Its attempt is then written inline in the function (expand/sync.rs), where the caller's
    /// location reaches it.
    pub(crate) fn inline_track_caller(&self) -> Option<&Attribute> {
        let ReturnType::Type(_, ret) = &self.sig.output else {
            return None;
        };
        if self.is_async() || !could_be_result(ret) {
            return None;
        }
        self.attrs
            .iter()
            .find(|a| a.path().is_ident("track_caller"))
    }
}
