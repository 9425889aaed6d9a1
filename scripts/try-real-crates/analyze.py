#!/usr/bin/env python3
"""Reads `cargo check --message-format=json` output of an annotated crate copy.

analyze.py MANIFEST CHECK_JSON CRATE_ROOT OUT_PREFIX
Writes OUT_PREFIX.errors (rendered errors, each headed by the fn it falls in),
OUT_PREFIX.warnings (rendered warnings), OUT_PREFIX.failed (ids of the fns with an error,
one a line) and prints a one-line count. Exit code 0.
"""
import json, sys, os

manifest, check, root, out = sys.argv[1:5]
fns = []
for line in open(manifest):
    fid, f, a, b, ann, name = line.rstrip("\n").split("\t")
    if ann == "1":
        fns.append((fid, "src/" + f, int(a), int(b), name))

def locate(span):
    """The innermost annotated fn holding this span (following macro expansions outward)."""
    while span is not None:
        fname = span["file_name"]
        if fname.startswith(root):
            fname = os.path.relpath(fname, root)
        best = None
        for fid, f, a, b, name in fns:
            if f == fname and a <= span["line_start"] <= b:
                if best is None or (b - a) < (best[3] - best[2]):
                    best = (fid, f, a, b, name)
        if best:
            return best
        exp = span.get("expansion")
        span = exp["span"] if exp else None
    return None

errors, warnings, failed = [], [], {}
for line in open(check):
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") != "compiler-message":
        continue
    msg = m["message"]
    if msg["level"] not in ("error", "warning"):
        continue
    if msg["message"].startswith(("aborting due to", "could not compile")) or msg["message"].endswith("warnings emitted") or msg["message"].endswith("warning emitted"):
        continue
    prim = [s for s in msg["spans"] if s["is_primary"]]
    where = locate(prim[0]) if prim else None
    head = f"== {where[0]} {where[4]}" if where else "== (in no annotated fn)"
    code = (msg.get("code") or {}).get("code") or ""
    entry = f"{head}\n-- [{code}] {msg['message']}\n{msg['rendered']}"
    if msg["level"] == "error":
        errors.append(entry)
        if where:
            failed.setdefault(where[0], []).append(msg["message"])
    else:
        warnings.append((msg["message"], entry))

open(out + ".errors", "w").write("\n".join(errors))
open(out + ".warnings", "w").write("\n".join(e for _, e in warnings))
open(out + ".warnmsgs", "w").write("".join(m.replace("\n", " ") + "\n" for m, _ in warnings))
open(out + ".failed", "w").write("".join(k + "\n" for k in failed))
unmapped = sum(1 for e in errors if e.startswith("== (in no"))
print(f"{len(fns)} annotated, {len(errors)} errors in {len(failed)} fns, {unmapped} errors outside any annotated fn, {len(warnings)} warnings")
