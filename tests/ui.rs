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

/// What follows our message in a misuse's error names none of the crate's insides: nothing
/// under `__private`, no file of the crate's own sources. Read from the goldens, so that a
/// regenerated golden that brings one back fails here.
///
/// `STILL_SHOWING` lists the goldens that still do: each one fixed leaves the list, and a
/// golden that is clean while still listed fails too, so the list only shrinks. What is left
/// is rustc's to print, after our message:
/// - `layer-over-requests-it-cannot-retry`: `svc.call(7u32)` in method form is E0599, which
///   points at `RetryService`'s definition whenever its source file is readable (no attribute
///   hides it). In `Service::call` form, rustc names the impl of `Replay` for `HttpRequests`
///   (marking it `#[diagnostic::do_not_recommend]` too would hide the body message behind
///   `Replay`'s) and the one impl of `ClassifyOk` for `ByStatus` (a type's one impl is shown
///   even when marked; a second, hidden impl moves the hint to the `Serve`/`Service` impls).
/// - `on-transient-for-an-error-without-transient`: `on = retry_jitter::transient` is a path
///   to a generic `fn`, instantiated where the key's checking `fn` and the loop name it: our
///   message three times, each with rustc's "required by a bound in `transient`" and its
///   file. One error would need the key's check to see the path is `transient` (left).
/// - `oneshot-over-a-body-it-cannot-replay`: `.oneshot(req)` and `.ready()` on a layer over a
///   body it cannot replay are E0599 for the same reason (`ServiceExt`'s methods need the
///   `Service` impl the body fails); the HTTP guide page quotes it and says what to write.
/// - `on-ok-before-clone-requests`: `clone_requests()`'s `where OnOk: OkBeforeCloneRequests`
///   is reported as the method's bound, with its file (a bound on the impl instead makes it
///   E0599; no error at all means keeping an `on_ok` set before, a change to `RetryLayer`'s
///   `OnOk` parameter).
#[test]
fn misuse_messages_show_none_of_the_crates_insides() {
    const STILL_SHOWING: &[&str] = &[
        "on-transient-for-an-error-without-transient.stderr",
        "tower/layer-over-requests-it-cannot-retry.stderr",
        "tower/oneshot-over-a-body-it-cannot-replay.stderr",
        "tower/on-ok-before-clone-requests.stderr",
    ];
    let mut dirty = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from("tests/ui/fail")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "stderr") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let inside = ["__private", "retry-runtime/", "retry-macro/", "$WORKSPACE/"];
            let shown: Vec<&str> = text
                .lines()
                .filter(|line| inside.iter().any(|i| line.contains(i)))
                .collect();
            let name = path
                .strip_prefix("tests/ui/fail")
                .unwrap()
                .to_str()
                .unwrap();
            let listed = STILL_SHOWING.contains(&name);
            match (shown.is_empty(), listed) {
                (false, false) => dirty.push(format!("{name}:\n  {}", shown.join("\n  "))),
                (true, true) => dirty.push(format!("{name}: clean now, take it off STILL_SHOWING")),
                _ => {}
            }
        }
    }
    assert!(dirty.is_empty(), "{}", dirty.join("\n"));
}
