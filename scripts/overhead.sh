#!/usr/bin/env bash
# The success-path bench (benches/overhead.rs) as a table of ratios: each `#[retry]` row over
# its plain twin, from criterion's medians. Target: every ratio ≤ 1.05.
#
#   bash scripts/overhead.sh            run the bench, then print the table
#   bash scripts/overhead.sh --report   print the table of the last run
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" != "--report" ]; then
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    cargo bench --quiet --bench overhead -- --noplot >"$log" 2>&1 || { cat "$log"; exit 1; }
fi
dir=${CARGO_TARGET_DIR:-target}/criterion/success_path

# The median of one row, in ns.
median() {
    grep -o '"median":{[^}]*}[^}]*}' "$dir/$1/new/estimates.json" |
        grep -o '"point_estimate":[0-9.e+-]*' | cut -d: -f2
}

printf '%-24s %10s %10s %7s\n' "body" "plain ns" "retry ns" "ratio"
for row in "sync_" "sync_ by value" "sync_ parse" "sync_ stack slot" \
    "async_" "async_ await" "async_ parse"; do
    kind=${row%%_*}
    rest=${row#*_}
    plain="${kind}_plain${rest}"
    retried="${kind}_#[retry]${rest}"
    p=$(median "$plain")
    r=$(median "$retried")
    awk -v name="$kind${rest:- one multiply}" -v p="$p" -v r="$r" \
        'BEGIN { printf "%-24s %10.2f %10.2f %7.3f\n", name, p, r, r / p }'
done
# The control: two identical hand-written functions. What this ratio strays from 1.000 is
# what the machine and the code's placement move a row, with no retry machinery at all.
p=$(median "sync_plain parse")
t=$(median "sync_plain parse (twin)")
awk -v p="$p" -v t="$t" \
    'BEGIN { printf "%-24s %10.2f %10.2f %7.3f\n", "control: parse twice", p, t, t / p }'
