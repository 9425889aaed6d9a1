#!/usr/bin/env bash
# The Rust versions the README claims, feature by feature, kept true.
#
# 1. Offline: for each feature, the highest `rust-version` among the packages that feature
#    builds (as the lock file resolves them) must not exceed the version claimed for it below
#    (the README's table). A dependency update that needs a newer Rust fails here.
# 2. Where the toolchain can be installed (rustup, minimal profile), the facade is checked with
#    it, feature by feature. A machine that cannot fetch a toolchain says so and skips.
set -euo pipefail
cd "$(dirname "$0")/.."

# feature=claimed minimum; "default" is the facade's default features.
claims=(
  default=1.85 tokio=1.85 tracing=1.85 http=1.85 metrics=1.85 tower=1.85
  reqwest=1.88 reqwest-middleware=1.88 tonic=1.88 sqlx=1.94
)
declared=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
[ "${claims[0]#default=}" = "$declared" ] || {
  echo "msrv: Cargo.toml says rust-version $declared, the claims say ${claims[0]#default=}"; exit 1; }

cargo metadata --format-version 1 --locked > target/msrv-metadata.json
failed=0
for claim in "${claims[@]}"; do
  feature=${claim%%=*} want=${claim#*=}
  flags=(-p retry-jitter -e normal --prefix none -f '{p}' --locked --target x86_64-unknown-linux-gnu)
  [ "$feature" = default ] || flags+=(--no-default-features -F "$feature")
  needs=$(cargo tree "${flags[@]}" | python3 -c '
import json, sys
meta = json.load(open("target/msrv-metadata.json"))
rv = {(p["name"], p["version"]): p.get("rust_version") for p in meta["packages"]}
best, who = (0,), "nothing"
for line in sys.stdin:
    parts = line.split()
    if len(parts) < 2:
        continue
    r = rv.get((parts[0], parts[1].lstrip("v")))
    if r and tuple(map(int, r.split("."))) > best:
        best, who = tuple(map(int, r.split("."))), parts[0]
print(".".join(map(str, best[:2])), who)
')
  version=${needs% *}
  if python3 -c "import sys; a,b=[tuple(map(int,v.split('.'))) for v in sys.argv[1:]]; sys.exit(a>b)" "$version" "$want"; then
    echo "msrv: $feature needs $needs (claimed $want)"
  else
    echo "msrv: $feature needs Rust $needs, above the $want claimed: update the README's table and this script"
    failed=1
  fi
done
[ "$failed" = 0 ] || exit 1

# One check per toolchain: the features claimed at that version together (each feature alone is
# `cargo hack`'s step, on the current toolchain).
for want in $(printf '%s\n' "${claims[@]#*=}" | sort -u); do
  features=$(printf '%s\n' "${claims[@]}" | sed -n "s/^\([a-z-]*\)=$want\$/\1/p" | grep -v '^default$' | paste -sd, -)
  if ! rustup toolchain list | grep -q "^$want" && ! rustup toolchain install "$want" --profile minimal >/dev/null 2>&1; then
    echo "msrv: Rust $want cannot be installed on this machine: $features not built with it"
    continue
  fi
  flags=(-p retry-jitter --locked -F "$features")
  # The claim for the default features is the declared rust-version's.
  [ "$want" = "$declared" ] || flags+=(--no-default-features)
  CARGO_TARGET_DIR=target/msrv-$want cargo "+$want" check "${flags[@]}"
  echo "msrv: $features checked with Rust $want"
done
