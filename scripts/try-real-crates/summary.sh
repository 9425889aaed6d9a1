#!/usr/bin/env bash
# Summary of one crate's run of scripts/try-real-crates.sh: $1 = $OUT/NAME-VERSION.
# Prints the fns annotated (and how many of them rustc compiles at all), the fns with an error (over all rounds), and the errors by message,
# with the types, paths and names in backticks folded to `…`.
w=$1
total=$(awk -F'\t' '$5==1' "$w/round-1.manifest" | wc -l)
live=$(wc -l <"$w/compiled-candidates")
failed=$(cat "$w"/round-*.failed | sort -u | wc -l)
echo "$(basename "$w"): $total annotated ($live of them not cfg'd out), $((live-failed)) compiled, $failed with an error"
cat "$w"/round-*.errors | grep -- '^-- ' | sed -E 's/`[^`]*`/`…`/g' | sort | uniq -c | sort -rn
echo "warnings: base $(wc -l <"$w/base.warnmsgs"), last round $(wc -l <"$(ls "$w"/round-*.warnmsgs | sort -V | tail -1)")"
diff <(sort "$w/base.warnmsgs") <(sort "$(ls "$w"/round-*.warnmsgs | sort -V | tail -1)") | grep '^[<>]' | sort | uniq -c
