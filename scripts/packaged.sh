#!/usr/bin/env bash
# The crates as a registry would serve them: `cargo package --workspace` packs each package and
# builds it from its packed sources against the others as packed; then a small consumer, in a
# folder outside the workspace, is built and run against the three `.crate` files unpacked
# (a `#[retry]` async fn on tokio), with nothing of the workspace on its path.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

# A target directory of its own, new each run: cargo takes a crate from a registry (here the
# temporary one of the packed crates) to be the same as long as its name and version are, so
# an earlier run's packed crates, unpacked and built in a kept directory, would stand in for
# this run's (0.1.0 both times).
packed=$(mktemp -d)
consumer=$(mktemp -d)
trap 'rm -rf "$packed" "$consumer"' EXIT

CARGO_TARGET_DIR="$packed" cargo package --workspace --locked --allow-dirty 2>&1 \
    | grep -v '^warning: ignoring \(test\|benchmark\|example\)'
ls -l "$packed"/package/*.crate

mkdir -p "$consumer/crates" "$consumer/app/src"
for crate in retry-jitter retry-jitter-macro retry-jitter-runtime; do
  tar -xzf "$packed/package/$crate-0.1.0.crate" -C "$consumer/crates"
done
cat > "$consumer/app/Cargo.toml" <<'TOML'
[package]
name = "consumer"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
retry-jitter = "=0.1.0"
tokio = { version = "1", features = ["macros", "rt"] }

# The packed crates in place of crates.io's: what `cargo publish` would upload.
[patch.crates-io]
retry-jitter = { path = "../crates/retry-jitter-0.1.0" }
retry-jitter-macro = { path = "../crates/retry-jitter-macro-0.1.0" }
retry-jitter-runtime = { path = "../crates/retry-jitter-runtime-0.1.0" }

[workspace]
TOML
cat > "$consumer/app/src/main.rs" <<'RS'
use std::io;
use std::sync::atomic::{AtomicU32, Ordering};

use retry_jitter::retry;

static CALLS: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 3, base = "1ms", on = retry_jitter::transient)]
async fn flaky() -> io::Result<u32> {
    let n = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
    if n < 3 {
        return Err(io::ErrorKind::ConnectionReset.into());
    }
    Ok(n)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    assert_eq!(flaky().await.unwrap(), 3);
    println!("consumer: the packed crates retried twice and succeeded on call 3");
}
RS
# Its own lock and target, kept between runs in the workspace's target folder.
CARGO_TARGET_DIR="$repo/target/consumer" cargo run --quiet --manifest-path "$consumer/app/Cargo.toml"
