#!/usr/bin/env python3
"""Comment paragraphs in the crates' sources (the guide's pages aside: they are the guide):
how many, their median length in words, how many run past 80 words, and the count of
`#[inline(always)]`. A paragraph: consecutive comment lines (`//`, `///`, `//!`) of one kind,
split at an empty comment line or a list item; code blocks and table rows are left out.

    python3 scripts/comments.py [DIRS…]      (TOP=N also lists the N longest)"""
import re, sys, statistics, pathlib
roots = [pathlib.Path(p) for p in ([a for a in sys.argv[1:] if not a.startswith("-")] or ["src", "retry-runtime/src", "retry-macro/src"])]
paras = []
inline_always = 0
for root in roots:
    for f in sorted(root.rglob("*.rs")):
        if "guide" in f.parts: continue
        lines = f.read_text().splitlines()
        cur, kind, fence, start = [], None, False, 0
        def flush():
            global cur
            if cur:
                words = sum(len(l.split()) for l in cur)
                if words:
                    paras.append((words, f"{f}:{start}"))
            cur = []
        for i, line in enumerate(lines, 1):
            inline_always += line.count("#[inline(always)]")
            m = re.match(r"\s*(//!|///|//)\s?(.*)$", line)
            if not m:
                flush(); kind = None; fence = False; continue
            k, text = m.group(1), m.group(2)
            if k != kind:
                flush(); kind = k; fence = False
            if text.strip().startswith("```"):
                flush(); fence = not fence; continue
            if fence or text.strip().startswith("|") or text.strip().startswith("#") and k != "//":
                flush(); continue
            if not text.strip():
                flush(); continue
            if re.match(r"\s*([-*]|\d+\.)\s", text):
                flush()
            if not cur:
                start = i
            cur.append(text)
        flush()
ws = [w for w, _ in paras]
print(f"paragraphs {len(ws)}  median {statistics.median(ws)}  over 80: {sum(w > 80 for w in ws)}  inline(always): {inline_always}")
if True:
    for w, at in sorted(paras, reverse=True)[:int(__import__('os').environ.get('TOP', '0'))]:
        print(w, at)
