//! Compile-time behaviour of `#[retry]`: every misuse is one clear error (goldens in
//! `tests/ui/fail`), and every supported shape compiles (`tests/ui/pass`). With feature
//! `tower`, the layer's misuses too (`tests/ui/fail/tower`).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
    #[cfg(feature = "tower")]
    t.compile_fail("tests/ui/fail/tower/*.rs");
}
