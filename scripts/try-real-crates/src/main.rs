//! Puts `#[::retry_jitter::retry(attempts = 2)]` on every function of a crate's sources whose
//! return type is syntactically a `Result` (`Result<..>`, `io::Result<T>`, `fmt::Result`, any
//! path ending in `Result`), to see what the attribute does to code it was not written for.
//!
//! Skipped: `const fn`, trait methods without a body, `#[test]` fns, `#[cfg(test)]` items (and
//! everything inside them), and whatever sits inside a macro invocation (`macro_rules!` bodies
//! and item macros are token trees, never parsed).
//!
//! Usage: annotate-retry [--format-only] [--probe] [--skip FILE] [--manifest FILE] SRC_DIR
//!
//! `RETRY_KEYS` replaces the attribute's keys (`attempts = 2`): `scripts/try-real-crates.sh`
//! documents a run with `cancel`.
//!
//! Every `.rs` file under SRC_DIR is parsed and, when it parses, rewritten in place with
//! prettyplease (so `--format-only` makes the baseline: the same text without the attribute).
//! Each candidate function has an id `relative/path.rs#N` (N: its rank among the candidates of
//! that file, in source order); ids listed in the `--skip` file (one a line) are not annotated.
//! `--probe` starts each candidate's body with `let retry_probe_N = ();` (N its rank), whose
//! unused-variable warning tells that rustc compiled it (it is not cfg'd out).
//! The manifest gets one line per candidate, tab-separated:
//! `id  file  first_line  last_line  annotated(0/1)  name`, lines of the rewritten file.

use std::collections::HashSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{Attribute, ImplItemFn, ItemFn, ItemImpl, ItemMod, ItemTrait, ReturnType, Signature, TraitItemFn, Type};

fn returns_result(sig: &Signature) -> bool {
    let ReturnType::Type(_, ty) = &sig.output else { return false };
    let mut ty: &Type = ty;
    loop {
        match ty {
            Type::Paren(p) => ty = &p.elem,
            Type::Group(g) => ty = &g.elem,
            Type::Path(p) => return p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == "Result"),
            _ => return false,
        }
    }
}

/// `#[test]`, `#[tokio::test]`, `#[bench]`, or a `#[cfg(..)]` that names `test` anywhere.
fn is_test(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        let p = a.path();
        if p.segments.last().is_some_and(|s| s.ident == "test" || s.ident == "bench") {
            return true;
        }
        if p.is_ident("cfg") {
            let mut found = false;
            let _ = a.parse_nested_meta(|m| {
                found |= mentions_test(&m);
                Ok(())
            });
            return found || a.meta.require_list().is_ok_and(|l| l.tokens.to_string().split(|c: char| !c.is_alphanumeric() && c != '_').any(|w| w == "test"));
        }
        false
    })
}

fn mentions_test(m: &syn::meta::ParseNestedMeta) -> bool {
    m.path.is_ident("test")
}

struct Candidate {
    id: String,
    name: String,
    annotated: bool,
}

struct Annotator<'a> {
    file: String,
    rank: usize,
    skip: &'a HashSet<String>,
    format_only: bool,
    probe: bool,
    scope: Vec<String>,
    out: Vec<Candidate>,
}

impl Annotator<'_> {
    /// Whether the fn is a candidate (then annotated unless skipped, and probed under `--probe`).
    fn consider(&mut self, attrs: &mut Vec<Attribute>, sig: &Signature, has_body: bool) -> Option<syn::Stmt> {
        if !has_body || sig.constness.is_some() || !returns_result(sig) || is_test(attrs) {
            return None;
        }
        let id = format!("{}#{}", self.file, self.rank);
        self.rank += 1;
        let mut name = self.scope.join("::");
        if !name.is_empty() {
            name.push_str("::");
        }
        name.push_str(&sig.ident.to_string());
        let annotated = !self.format_only && !self.skip.contains(&id);
        // The attribute's keys: `attempts = 2`, or $RETRY_KEYS (e.g. with a `cancel`).
        let keys: proc_macro2::TokenStream =
            std::env::var("RETRY_KEYS").unwrap_or_else(|_| "attempts = 2".into()).parse().expect("RETRY_KEYS");
        if annotated {
            attrs.push(syn::parse_quote!(#[::retry_jitter::retry(#keys)]));
        }
        let probe = syn::Ident::new(&format!("retry_probe_{}", self.rank - 1), proc_macro2::Span::call_site());
        self.out.push(Candidate { id, name, annotated });
        self.probe.then(|| syn::parse_quote!(#[warn(unused_variables)] let #probe = ();))
    }
}

fn type_name(ty: &Type) -> String {
    quote::quote!(#ty).to_string().replace(' ', "")
}

impl VisitMut for Annotator<'_> {
    fn visit_item_mod_mut(&mut self, m: &mut ItemMod) {
        if is_test(&m.attrs) {
            return;
        }
        self.scope.push(m.ident.to_string());
        visit_mut::visit_item_mod_mut(self, m);
        self.scope.pop();
    }
    fn visit_item_impl_mut(&mut self, i: &mut ItemImpl) {
        if is_test(&i.attrs) {
            return;
        }
        let mut s = type_name(&i.self_ty);
        if let Some((_, t, _)) = &i.trait_ {
            s = format!("<{s} as {}>", quote::quote!(#t).to_string().replace(' ', ""));
        }
        self.scope.push(s);
        visit_mut::visit_item_impl_mut(self, i);
        self.scope.pop();
    }
    fn visit_item_trait_mut(&mut self, t: &mut ItemTrait) {
        if is_test(&t.attrs) {
            return;
        }
        self.scope.push(format!("trait {}", t.ident));
        visit_mut::visit_item_trait_mut(self, t);
        self.scope.pop();
    }
    fn visit_item_fn_mut(&mut self, f: &mut ItemFn) {
        if is_test(&f.attrs) {
            return;
        }
        let sig = f.sig.clone();
        if let Some(s) = self.consider(&mut f.attrs, &sig, true) {
            f.block.stmts.insert(0, s);
        };
        self.scope.push(format!("{}()", f.sig.ident));
        visit_mut::visit_item_fn_mut(self, f);
        self.scope.pop();
    }
    fn visit_impl_item_fn_mut(&mut self, f: &mut ImplItemFn) {
        if is_test(&f.attrs) {
            return;
        }
        let sig = f.sig.clone();
        if let Some(s) = self.consider(&mut f.attrs, &sig, true) {
            f.block.stmts.insert(0, s);
        };
        self.scope.push(format!("{}()", f.sig.ident));
        visit_mut::visit_impl_item_fn_mut(self, f);
        self.scope.pop();
    }
    fn visit_trait_item_fn_mut(&mut self, f: &mut TraitItemFn) {
        if is_test(&f.attrs) {
            return;
        }
        let sig = f.sig.clone();
        let has_body = f.default.is_some();
        if let Some(s) = self.consider(&mut f.attrs, &sig, has_body) {
            f.default.as_mut().unwrap().stmts.insert(0, s);
        }
        self.scope.push(format!("{}()", f.sig.ident));
        visit_mut::visit_trait_item_fn_mut(self, f);
        self.scope.pop();
    }
}

/// After printing: the line ranges of the functions carrying our attribute, in source order.
#[derive(Default)]
struct Ranges(Vec<(usize, usize)>);

impl Ranges {
    fn note(&mut self, attrs: &[Attribute], span: proc_macro2::Span) {
        if attrs.iter().any(is_ours) {
            self.0.push((span.start().line, span.end().line));
        }
    }
}

fn is_ours(a: &Attribute) -> bool {
    let p = a.path();
    p.leading_colon.is_some() && p.segments.len() == 2 && p.segments[0].ident == "retry_jitter" && p.segments[1].ident == "retry"
}

impl<'ast> syn::visit::Visit<'ast> for Ranges {
    fn visit_item_fn(&mut self, f: &'ast ItemFn) {
        self.note(&f.attrs, f.span());
        syn::visit::visit_item_fn(self, f);
    }
    fn visit_impl_item_fn(&mut self, f: &'ast ImplItemFn) {
        self.note(&f.attrs, f.span());
        syn::visit::visit_impl_item_fn(self, f);
    }
    fn visit_trait_item_fn(&mut self, f: &'ast TraitItemFn) {
        self.note(&f.attrs, f.span());
        syn::visit::visit_trait_item_fn(self, f);
    }
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut probe = false;
    let (mut format_only, mut skip_file, mut manifest, mut dir) = (false, None, None, None);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--format-only" => format_only = true,
            "--probe" => probe = true,
            "--skip" => skip_file = args.next(),
            "--manifest" => manifest = args.next(),
            _ => dir = Some(PathBuf::from(a)),
        }
    }
    let dir = dir.expect("usage: annotate-retry [--format-only] [--skip FILE] [--manifest FILE] SRC_DIR");
    let skip: HashSet<String> = skip_file
        .map(|f| fs::read_to_string(f).unwrap_or_default().lines().map(|l| l.trim().to_string()).filter(|l| !l.is_empty()).collect())
        .unwrap_or_default();
    let mut files = Vec::new();
    rs_files(&dir, &mut files);
    let mut lines = String::new();
    let (mut total, mut annotated) = (0, 0);
    for path in files {
        let rel = path.strip_prefix(&dir).unwrap().to_string_lossy().into_owned();
        let text = fs::read_to_string(&path).unwrap();
        let mut ast = match syn::parse_file(&text) {
            Ok(ast) => ast,
            Err(e) => {
                eprintln!("annotate-retry: {rel}: not parsed, left as it is: {e}");
                continue;
            }
        };
        let mut v = Annotator { file: rel.clone(), rank: 0, skip: &skip, format_only, probe, scope: Vec::new(), out: Vec::new() };
        v.visit_file_mut(&mut ast);
        let printed = prettyplease::unparse(&ast);
        let mut ranges = Ranges::default();
        syn::visit::Visit::visit_file(&mut ranges, &syn::parse_file(&printed).expect("prettyplease output parses"));
        let mut ranges = ranges.0.into_iter();
        for c in &v.out {
            total += 1;
            let (a, b) = if c.annotated {
                annotated += 1;
                ranges.next().expect("one range per annotated fn")
            } else {
                (0, 0)
            };
            lines.push_str(&format!("{}\t{}\t{}\t{}\t{}\t{}\n", c.id, rel, a, b, c.annotated as u8, c.name));
        }
        fs::write(&path, printed).unwrap();
    }
    if let Some(m) = manifest {
        fs::File::create(m).unwrap().write_all(lines.as_bytes()).unwrap();
    }
    eprintln!("annotate-retry: {total} candidate fns, {annotated} annotated");
}
