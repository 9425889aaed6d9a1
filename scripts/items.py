#!/usr/bin/env python3
"""The facade's items as its docs list them: the entries of `retry_jitter`'s all-items page,
in all, at the root, and per module (issue 56: about 20 at the root, at most 80 in all).

    RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace --all-features
    python3 scripts/items.py            (add -v for every entry, module by module)

An entry is a `<li><a href="…">` of `target/doc/retry_jitter/all.html`; one whose href has
no `/` is at the root. The modules themselves are not entries (rustdoc lists none).
"""

import collections
import html
import os
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
PAGE = TARGET / "doc" / "retry_jitter" / "all.html"


def main():
    if not PAGE.exists():
        sys.exit(f"items: no {PAGE}; run `cargo doc --no-deps --workspace --all-features` first")
    text = PAGE.read_text()
    # The section headings' links (`#structs`, `#traits`, …) are not items.
    hrefs = re.findall(r'<li><a href="([^"]+)"', text)
    entries = [html.unescape(h) for h in hrefs if not h.startswith("#")]
    modules = collections.defaultdict(list)
    for href in entries:
        folder, _, page = href.rpartition("/")
        name = page.removesuffix(".html").split(".", 1)[-1]
        modules[folder or "(root)"].append(name)
    print(f"items: {len(entries)} in all, {len(modules.get('(root)', []))} at the root")
    for folder, names in sorted(modules.items(), key=lambda kv: (kv[0] != "(root)", kv[0])):
        line = f"  {folder}: {len(names)}"
        if "-v" in sys.argv[1:]:
            line += " (" + ", ".join(sorted(names)) + ")"
        print(line)


if __name__ == "__main__":
    main()
