//! The attribute's grammar, `#[retry(key = value, …)]`.
//!
//! This module reads each key's value, or gives the error of reading it.
//!
//! What the keys mean together is valid.rs's to check.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, Lit, LitStr, Token};

use crate::duration;

/// A key of the attribute: its name and reader.
///
/// The reader puts the key's value into [`Args`].
///
/// A `Key` also says whether `policy` sets it too.
///
/// A key `policy` sets cannot be combined with `policy` (valid.rs).
struct Key {
    name: &'static str,
    set: Set,
    in_policy: bool,
}

type Set = fn(&mut Args, &Ident, Expr) -> syn::Result<()>;

impl Key {
    const fn new(name: &'static str, set: Set) -> Key {
        Key {
            name,
            set,
            in_policy: false,
        }
    }

    /// A key `policy` sets too.
    const fn of_policy(name: &'static str, set: Set) -> Key {
        Key {
            name,
            set,
            in_policy: true,
        }
    }
}

/// Every key, in the order errors list them.
///
/// The parser, unknown-key error and `policy` check read this one list.
///
/// So none of them can miss a key.
const KEYS: &[Key] = &[
    Key::of_policy("attempts", |a, _, v| put(&mut a.attempts, attempts(v)?)),
    Key::of_policy("base", |a, _, v| put(&mut a.base, duration_arg(v)?)),
    Key::of_policy("cap", |a, _, v| put(&mut a.cap, duration_arg(v)?)),
    Key::of_policy("jitter", |a, _, v| {
        put(&mut a.jitter, word(v, "jitter", JITTERS, "full")?)
    }),
    Key::new("on", |a, _, v| put(&mut a.on, v)),
    Key::new("on_ok", |a, _, v| put(&mut a.on_ok, v)),
    Key::new("attempt", |a, key, v| {
        put(&mut a.attempt, (key.clone(), binding(v)?))
    }),
    Key::of_policy("max_elapsed", |a, _, v| {
        put(&mut a.max_elapsed, duration_arg(v)?)
    }),
    Key::of_policy("rate_limited_base", |a, _, v| {
        put(&mut a.rate_limited_base, duration_arg(v)?)
    }),
    Key::new("notify", |a, _, v| put(&mut a.notify, v)),
    Key::new("sleep", |a, key, v| put(&mut a.sleep, (key.clone(), v))),
    Key::new("give_up", |a, _, v| put(&mut a.give_up, v)),
    Key::new("stats", |a, _, v| put(&mut a.stats, v)),
    Key::new("budget", |a, _, v| match none_word(&v) {
        Some(none) => put(&mut a.budget_none, none),
        None => put(&mut a.budget, v),
    }),
    Key::new("throttle", |a, key, v| {
        put(&mut a.throttle, (key.clone(), v))
    }),
    Key::new("breaker", |a, key, v| put(&mut a.breaker, (key.clone(), v))),
    Key::new("cancel", |a, _, v| put(&mut a.cancel, v)),
    Key::new("policy", |a, _, v| put(&mut a.policy, v)),
    Key::new("trace_level", |a, _, v| {
        put(&mut a.trace_level, word(v, "trace_level", LEVELS, "warn")?)
    }),
    Key::new("timeout", |a, key, v| {
        put(&mut a.timeout, (key.clone(), duration_arg(v)?))
    }),
    Key::new("hedge", |a, key, v| {
        put(&mut a.hedge, (key.clone(), hedge_arg(v)?))
    }),
    Key::new("clock", |a, key, v| put(&mut a.clock, (key.clone(), v))),
    Key::new("crate", |a, _, v| put(&mut a.krate, crate_path(v)?)),
];

/// A key's value, read.
fn put<T>(slot: &mut Option<T>, value: T) -> syn::Result<()> {
    *slot = Some(value);
    Ok(())
}

/// The word `none`, as in `budget = none`.
fn none_word(v: &Expr) -> Option<Ident> {
    match v {
        Expr::Path(p) if p.qself.is_none() && p.path.is_ident("none") => {
            p.path.get_ident().cloned()
        }
        _ => None,
    }
}

/// Whether `policy` sets the key `name` too.
pub(crate) fn set_by_policy(name: &str) -> bool {
    KEYS.iter().any(|key| key.in_policy && key.name == name)
}

/// The levels of `trace_level`, by the word the attribute uses.
pub(crate) const LEVELS: &[(&str, &str)] = &[
    ("error", "ERROR"),
    ("warn", "WARN"),
    ("info", "INFO"),
    ("debug", "DEBUG"),
    ("trace", "TRACE"),
];

/// A duration key's value: a literal parsed here, or an expression of type `Duration`.
pub(crate) enum DurationArg {
    Lit { nanos: u128, lit: LitStr },
    Expr(Box<Expr>),
}

/// `attempts`: a literal `u32` read here, or a `u32` expression.
///
/// 0 is valid.rs's error.
pub(crate) enum AttemptsArg {
    Lit(u32, Span),
    Expr(Box<Expr>),
}

/// The `jitter` kinds, by the name the attribute uses.
pub(crate) const JITTERS: &[(&str, &str)] = &[
    ("full", "Full"),
    ("equal", "Equal"),
    ("decorrelated", "Decorrelated"),
    ("none", "None"),
];

#[derive(Default)]
pub(crate) struct Args {
    pub attempts: Option<AttemptsArg>,
    pub base: Option<DurationArg>,
    pub cap: Option<DurationArg>,
    pub max_elapsed: Option<DurationArg>,
    /// `rate_limited_base`: the base of the waits after a `Decision::RateLimited`.
    pub rate_limited_base: Option<DurationArg>,
    /// The runtime's variant name (`Full`…), spanned at the user's word.
    pub jitter: Option<Ident>,
    pub on: Option<Expr>,
    /// `on_ok`: which `Ok` values are retried.
    pub on_ok: Option<Expr>,
    /// `attempt = name`: the key and the name.
    ///
    /// The body sees the attempt's number under that name.
    pub attempt: Option<(Ident, Ident)>,
    pub notify: Option<Expr>,
    pub give_up: Option<Expr>,
    /// `stats`: a `Fn(&RetryStats)` told the call's figures at its end.
    pub stats: Option<Expr>,
    /// `budget = &X`: the budget shared instead of the function's own.
    pub budget: Option<Expr>,
    /// `budget = none`: no budget at all (the word, for spans).
    pub budget_none: Option<Ident>,
    /// `throttle`, and the key's name.
    ///
    /// A missing `From<Throttled>` is reported at that name.
    pub throttle: Option<(Ident, Expr)>,
    /// `breaker`, and the key's name.
    ///
    /// A missing `From<CircuitOpen>` is reported at that name.
    pub breaker: Option<(Ident, Expr)>,
    /// `cancel`: a `&CancelToken` expression.
    pub cancel: Option<Expr>,
    /// The `tracing::Level` constant's name (`WARN`…), spanned at the user's word.
    pub trace_level: Option<Ident>,
    /// `sleep`, and the key's name, where its errors are spanned.
    pub sleep: Option<(Ident, Expr)>,
    pub policy: Option<Expr>,
    pub krate: Option<syn::Path>,
    /// `timeout`, and the key's name, where its errors are spanned.
    pub timeout: Option<(Ident, DurationArg)>,
    /// `hedge`, and the key's own name.
    pub hedge: Option<(Ident, HedgeArg)>,
    /// `clock`, and the key's name.
    ///
    /// `max_elapsed` and `timeout` are measured on that clock.
    pub clock: Option<(Ident, Expr)>,
    /// Every key's value as written.
    ///
    /// These values show what the keys may name (`attempts = tries`).
    ///
    /// For the rebinding of the arguments (rebind.rs).
    pub values: Vec<Expr>,
    /// The keys in the order written; a key given twice appears once.
    ///
    /// Each comes with how many `errors` came before it.
    ///
    /// valid.rs reports each value check in its place among them.
    pub keys: Vec<(Ident, usize)>,
    /// The errors of reading, in order:
    ///
    /// - An unknown key.
    /// - A key given twice.
    /// - A value its key cannot read.
    ///
    /// valid.rs reports them with its own.
    ///
    /// So one pass tells them all.
    pub errors: Vec<syn::Error>,
}

impl Parse for Args {
    /// The keys read, each error of reading kept in `errors`.
    ///
    /// An `Err` only where the tokens are not `key = value, …` at all.
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut args = Args::default();
        while !input.is_empty() {
            let key = Ident::parse_any(input)?;
            if !input.peek(Token![=]) {
                return Err(syn::Error::new(
                    key.span(),
                    format!("expected `{key} = value`: every key of #[retry] takes a value"),
                ));
            }
            input.parse::<Token![=]>()?;
            let value: Expr = input.parse()?;
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
            let name = key.to_string();
            if args.keys.iter().any(|(k, _)| *k == name) {
                args.errors.push(syn::Error::new(
                    key.span(),
                    format!("duplicate key `{name}`: give each key once; remove this one"),
                ));
                continue;
            }
            args.keys.push((key.clone(), args.errors.len()));
            args.values.push(value.clone());
            if let Err(e) = args.set(&key, value) {
                args.errors.push(e);
            }
        }
        Ok(args)
    }
}

impl Args {
    fn set(&mut self, key: &Ident, value: Expr) -> syn::Result<()> {
        let name = key.to_string();
        match KEYS.iter().find(|k| k.name == name) {
            Some(k) => (k.set)(self, key, value),
            None => {
                let hint = closest(&name)
                    .map(|k| format!(" (did you mean `{k}`?)"))
                    .unwrap_or_default();
                let mut names = String::new();
                for k in KEYS {
                    push_name(&mut names, k.name);
                }
                Err(syn::Error::new(
                    key.span(),
                    format!("unknown key `{name}`{hint}: valid keys are {names}"),
                ))
            }
        }
    }
}

fn attempts(value: Expr) -> syn::Result<AttemptsArg> {
    let int = match ungroup(&value) {
        Expr::Lit(ExprLit {
            lit: Lit::Int(int), ..
        }) => int,
        // `attempts = "3"`: rustc's own error would point into `Policy::with_attempts`.
        Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) => {
            let text = lit.value();
            let n = text
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|&n| n > 0)
                .map_or_else(|| "3".to_owned(), |n| n.to_string());
            return Err(syn::Error::new(
                lit.span(),
                format!(
                    "`attempts` is a number of calls, not a string: write `attempts = {n}`, \
                     without quotes (or a `u32` expression)"
                ),
            ));
        }
        _ => return Ok(AttemptsArg::Expr(Box::new(value))),
    };
    let n: u32 = int.base10_parse().map_err(|_| {
        syn::Error::new(
            int.span(),
            "`attempts` is a `u32`: write a whole number from 1 to 4294967295",
        )
    })?;
    Ok(AttemptsArg::Lit(n, int.span()))
}

fn duration_arg(value: Expr) -> syn::Result<DurationArg> {
    match ungroup(&value) {
        Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) => match duration::parse(&lit.value()) {
            Ok(nanos) => Ok(DurationArg::Lit {
                nanos,
                lit: lit.clone(),
            }),
            Err(msg) => Err(syn::Error::new(lit.span(), msg)),
        },
        Expr::Lit(ExprLit {
            lit: Lit::Int(int), ..
        }) => Err(syn::Error::new(
            int.span(),
            format!(
                "a bare number has no unit: write a duration literal such as \"{}ms\", \
                 or a `Duration` expression",
                int.base10_digits()
            ),
        )),
        _ => Ok(DurationArg::Expr(Box::new(value))),
    }
}

/// The expression inside a `macro_rules!` fragment's invisible group.
///
/// Such groups are None-delimited.
///
/// An example is `cap = $cap` with `$cap:literal`.
///
/// This serves the keys whose value is read here.
fn ungroup(expr: &Expr) -> &Expr {
    match expr {
        Expr::Group(group) => ungroup(&group.expr),
        other => other,
    }
}

/// `hedge`: a delay, literal or expression.
///
/// It may instead be a percentile of recent latency (`"p95"`).
pub(crate) enum HedgeArg {
    After(DurationArg),
    Percentile(u8, Span),
}

fn hedge_arg(value: Expr) -> syn::Result<HedgeArg> {
    if let Expr::Lit(ExprLit {
        lit: Lit::Str(lit), ..
    }) = ungroup(&value)
    {
        if let Some(digits) = lit.value().strip_prefix('p') {
            return match digits.parse::<u8>() {
                Ok(n @ 1..=99) => Ok(HedgeArg::Percentile(n, lit.span())),
                _ => Err(syn::Error::new(
                    lit.span(),
                    format!(
                        "`hedge = \"{}\"` is not a percentile: write `\"pNN\"` with NN from 1 \
                         to 99 (`\"p95\"`: hedge after the function's recent 95th-percentile \
                         latency), or a delay such as `\"50ms\"`",
                        lit.value()
                    ),
                )),
            };
        }
    }
    duration_arg(value).map(HedgeArg::After)
}

/// A key whose value is one of a few words (`jitter = full`).
///
/// Gives the runtime's name for it, spanned at the user's word.
fn word(value: Expr, key: &str, words: &[(&str, &str)], default: &str) -> syn::Result<Ident> {
    let word = match ungroup(&value) {
        Expr::Path(p) if p.qself.is_none() => p.path.get_ident().cloned(),
        _ => None,
    };
    if let Some(word) = word {
        if let Some((_, runtime)) = words.iter().find(|(name, _)| word == name) {
            return Ok(Ident::new(runtime, word.span()));
        }
    }
    let mut names = String::new();
    for (name, _) in words {
        push_name(&mut names, name);
    }
    Err(syn::Error::new(
        value.span(),
        format!(
            "unknown {key} `{}`: write one of {names} (default `{default}`)",
            value.to_token_stream(),
        ),
    ))
}

/// `attempt = name`: a plain identifier, naming a `u32` in the body.
fn binding(value: Expr) -> syn::Result<Ident> {
    match ungroup(&value) {
        Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => match p.path.get_ident() {
            Some(ident) => Ok(ident.clone()),
            None => Err(syn::Error::new(
                value.span(),
                "`attempt` names the attempt's number in the body: write one identifier, \
                 like `attempt = n`, not a path",
            )),
        },
        _ => Err(syn::Error::new(
            value.span(),
            format!(
                "`attempt` names the attempt's number in the body: write one identifier, \
                 like `attempt = n`, not `{}`",
                value.to_token_stream()
            ),
        )),
    }
}

fn crate_path(value: Expr) -> syn::Result<syn::Path> {
    match ungroup(&value) {
        Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) => lit.parse::<syn::Path>().map_err(|_| {
            syn::Error::new(
                lit.span(),
                format!(
                    "`{}` is not a path: write the path of the retry_jitter crate, \
                     like `crate = \"::my_reexports::retry_jitter\"`",
                    lit.value()
                ),
            )
        }),
        _ => Err(syn::Error::new(
            value.span(),
            "`crate` takes a string literal: write `crate = \"::path::to::retry_jitter\"`",
        )),
    }
}

/// `name` quoted at the end of a list of names: `` `a`, `b` ``.
///
/// A loop, not an iterator chain.
///
/// Each adapter is a handful of functions compiled in the user's build.
fn push_name(list: &mut String, name: &str) {
    if !list.is_empty() {
        list.push_str(", ");
    }
    list.push('`');
    list.push_str(name);
    list.push('`');
}

/// The valid key closest to a misspelt one, if any is close.
fn closest(word: &str) -> Option<&'static str> {
    fn distance(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut prev = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let cur = row[j + 1];
                row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
                prev = cur;
            }
        }
        row[b.len()]
    }
    // The nearest; among ties, the first alphabetically.
    let mut best: Option<(usize, &'static str)> = None;
    for k in KEYS {
        let d = distance(word, k.name);
        let better = match best {
            None => true,
            Some(b) => (d, k.name) < b,
        };
        if d <= 2.max(k.name.len() / 3) && better {
            best = Some((d, k.name));
        }
    }
    best.map(|(_, k)| k)
}

impl DurationArg {
    /// The value as a `Duration` expression.
    pub(crate) fn to_tokens(&self, private: &TokenStream) -> TokenStream {
        match self {
            DurationArg::Lit { nanos, lit } => {
                let secs = (nanos / 1_000_000_000) as u64;
                let sub = (nanos % 1_000_000_000) as u32;
                quote::quote_spanned!(lit.span()=> #private::Duration::new(#secs, #sub))
            }
            DurationArg::Expr(e) => e.to_token_stream(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proc_macro2::{Delimiter, Group, TokenTree};
    use quote::quote;

    /// The attribute read, and checked as the macro checks it.
    ///
    /// valid.rs reports the errors of reading with its own.
    fn read(tokens: TokenStream) -> syn::Result<Args> {
        let args: Args = syn::parse2(tokens)?;
        crate::valid::args(&args)?;
        Ok(args)
    }

    /// `key = value` with the value in an invisible group, as a `macro_rules!` fragment is.
    fn grouped(key: &str, value: TokenStream) -> syn::Result<Args> {
        let key = Ident::new(key, Span::call_site());
        let value = TokenTree::Group(Group::new(Delimiter::None, value));
        read(quote!(#key = #value))
    }

    #[test]
    fn every_key_of_the_table_is_read_and_listed() {
        for key in KEYS {
            let value = match key.name {
                "attempts" => quote!(3),
                "base" | "cap" | "max_elapsed" | "rate_limited_base" | "timeout" | "hedge" => {
                    quote!("1s")
                }
                "jitter" => quote!(none),
                "trace_level" => quote!(info),
                "crate" => quote!("::x"),
                _ => quote!(f),
            };
            // `crate` is a keyword: not an `Ident` to make, a token to parse.
            let name: TokenStream = key.name.parse().unwrap();
            let args = read(quote!(#name = #value));
            assert!(args.is_ok(), "{}", key.name);
            let with_policy = read(quote!(policy = p, #name = #value));
            let excluded = with_policy
                .err()
                .is_some_and(|e| e.to_string().contains("cannot be combined with `policy`"));
            assert_eq!(excluded, key.in_policy, "{}", key.name);
        }
        let err = read(quote!(atempts = 3)).err().unwrap().to_string();
        assert!(err.contains("(did you mean `attempts`?)"), "{err}");
        for key in KEYS {
            assert!(err.contains(&format!("`{}`", key.name)), "{err}");
        }
    }

    #[test]
    fn literals_from_macro_rules_are_read_through_their_invisible_group() {
        let args = grouped("cap", quote!("1s")).unwrap();
        assert!(matches!(
            args.cap,
            Some(DurationArg::Lit {
                nanos: 1_000_000_000,
                ..
            })
        ));
        let args = grouped("attempts", quote!(3)).unwrap();
        assert!(matches!(args.attempts, Some(AttemptsArg::Lit(3, _))));
        let args = grouped("jitter", quote!(none)).unwrap();
        assert_eq!(args.jitter.unwrap().to_string(), "None");
        let args = grouped("crate", quote!("::x::retry_jitter")).unwrap();
        assert_eq!(args.krate.unwrap().segments.len(), 2);
        let err = grouped("base", quote!("1 parsec")).err().unwrap();
        assert!(err.to_string().contains("parsec"), "{err}");
    }
}
