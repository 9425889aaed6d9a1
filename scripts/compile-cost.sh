#!/usr/bin/env bash
# The compile cost of one annotated fn: a crate of N `async fn`s (default 100), each awaited by
# `main`, built four ways, and the CPU seconds (user + sys) of that crate's own rebuild
# (its dependencies built before, incremental off) — the cost a user pays per annotated fn,
# against the same for `#[tracing::instrument]` and for backon's attribute, `#[backon]`.
#
#   bash scripts/compile-cost.sh [N] [RUNS]     (defaults 100 fns, 3 runs: the median is printed)
#
#   plain       async fn fN(x: u64) -> Result<u64, Flaky>
#   retry       the same under #[retry_jitter::retry(base = "10ms", cap = "100ms", attempts = 3)]
#   instrument  the same under #[tracing::instrument]
#   backon      the same under #[backon_macros::backon(backoff = policy)] (backon-macros 1),
#               `policy` one fn of the crate (the attribute takes a path): backon's
#               ExponentialBuilder, 10ms to 100ms, with jitter, 2 retries (3 attempts);
#               backon's default sleeper (tokio's)
#
# Prints each variant's seconds, the added seconds per fn, and retry's per-fn cost as a share
# of instrument's and of backon's. REPO=<another checkout> measures that one; OUT (default
# /tmp/compile-cost).
set -euo pipefail
repo=${REPO:-$(cd "$(dirname "$0")/.." && pwd)}
N=${1:-100}
RUNS=${2:-3}
OUT=${OUT:-/tmp/compile-cost}
export CARGO_INCREMENTAL=0
d=$OUT/app
rm -rf "$d"; mkdir -p "$d/src"
cat >"$d/Cargo.toml" <<EOF
[package]
name = "compile-cost"
version = "0.1.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
tokio = { version = "1", features = ["macros", "rt-multi-thread", "time"] }
retry-jitter = { path = "$repo" }
tracing = "0.1"
backon = "1"
backon-macros = "1"
EOF

source_of() { # variant
  local attr=
  case $1 in
    retry) attr='#[retry_jitter::retry(base = "10ms", cap = "100ms", attempts = 3)]' ;;
    instrument) attr='#[tracing::instrument]' ;;
    backon) attr='#[backon_macros::backon(backoff = policy)]' ;;
  esac
  echo '#[derive(Debug)]'
  echo 'pub struct Flaky;'
  echo 'async fn once(x: u64) -> Result<u64, Flaky> { if x == u64::MAX { Err(Flaky) } else { Ok(x + 1) } }'
  if [ "$1" = backon ]; then
    # The attribute takes a path, not an expression: the backoff is a fn of the crate.
    echo 'fn policy() -> backon::ExponentialBuilder {'
    echo '    backon::ExponentialBuilder::default()'
    echo '        .with_min_delay(std::time::Duration::from_millis(10))'
    echo '        .with_max_delay(std::time::Duration::from_millis(100))'
    echo '        .with_jitter()'
    echo '        .with_max_times(2)'
    echo '}'
  fi
  for i in $(seq 1 "$N"); do
    printf '%s\nasync fn f%d(x: u64) -> Result<u64, Flaky> {\n    once(x).await\n}\n' "$attr" "$i"
  done
  echo '#[tokio::main]'
  echo 'async fn main() {'
  echo '    let mut sum = 0;'
  for i in $(seq 1 "$N"); do
    printf '    sum += f%d(%d).await.unwrap_or(0);\n' "$i" "$i"
  done
  echo '    println!("{sum}");'
  echo '}'
}

# The dependencies, built once (every variant's).
source_of plain >"$d/src/main.rs"
(cd "$d" && cargo generate-lockfile --quiet)
for v in plain retry instrument backon; do
  source_of "$v" >"$d/src/main.rs"
  cargo build --quiet --manifest-path "$d/Cargo.toml"
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A secs
for run in $(seq 1 "$RUNS"); do
  for v in plain retry instrument backon; do
    source_of "$v" >"$d/src/main.rs"
    /usr/bin/time -f '%U %S' -o "$d/time" cargo build --quiet --manifest-path "$d/Cargo.toml"
    secs[$v]+="$(awk '{ printf "%.2f", $1 + $2 }' "$d/time") "
  done
done

declare -A m
for v in plain retry instrument backon; do
  m[$v]=$(tr ' ' '\n' <<<"${secs[$v]}" | grep . | median)
  echo "$v: ${secs[$v]}(median ${m[$v]} s)"
done
awk -v n="$N" -v p="${m[plain]}" -v r="${m[retry]}" -v i="${m[instrument]}" -v b="${m[backon]}" 'BEGIN {
  printf "per fn: #[retry] %.1f ms, #[tracing::instrument] %.1f ms, ratio %.2fx\n",
    (r - p) / n * 1000, (i - p) / n * 1000, (r - p) / (i - p)
  printf "per fn: #[backon] %.1f ms, #[retry] / #[backon] %.2fx\n", (b - p) / n * 1000, (r - p) / (b - p)
}'
