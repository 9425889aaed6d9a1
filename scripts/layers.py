#!/usr/bin/env python3
"""The runtime's layers, checked: no module imports a layer above its own, and no two files
import each other.

The layers (ARCHITECTURE.md), from the bottom: `policy/`, `fleet/`, `classify/`, `run/`, then the
faces (`retry.rs`, `private.rs` and `private/`, `middleware/`). A path `crate::x::…` names the
layer of `x`: a layer's folder, or a name `lib.rs` re-exports (`crate::sleep` is `run/`'s).
`lib.rs` itself, which only declares and re-exports, may name any layer.

    python3 scripts/layers.py        (exit 1 and a line per violation)
"""

import pathlib
import re
import sys

SRC = pathlib.Path(__file__).resolve().parent.parent / "retry-runtime" / "src"
LAYERS = ["policy", "fleet", "classify", "run", "faces"]
FACES = {"retry", "private", "middleware", "__private"}


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def layer_of_module(name):
    if name in LAYERS[:-1]:
        return name
    if name in FACES:
        return "faces"
    return None


def reexports(text):
    """Name -> the module it comes from, for every `pub use a::…` of `lib.rs` (and its inline
    modules, such as `hooks`), braces expanded."""
    names = {}
    for m in re.finditer(r"pub\s+use\s+(?:crate::)?([\w:]+?)(?:::\{([^}]*)\}|::(\w+)|\s*;)", text):
        path, group, single = m.group(1), m.group(2), m.group(3)
        first = path.split("::")[0]
        items = [single] if single else []
        if group:
            items = [i.strip().split(" as ")[-1] for i in group.split(",") if i.strip()]
        if not group and not single:
            items = [path.split("::")[-1]]
        for item in items:
            names.setdefault(item, first)
    return names


def main():
    lib = strip_comments((SRC / "lib.rs").read_text())
    names = reexports(lib)
    problems = []
    imports = {}
    for path in sorted(SRC.rglob("*.rs")):
        rel = path.relative_to(SRC)
        if rel.as_posix() == "lib.rs":
            continue
        own = layer_of_module(rel.parts[0].removesuffix(".rs"))
        if own is None:
            problems.append(f"{rel}: in no layer (add it to scripts/layers.py)")
            continue
        text = strip_comments(path.read_text())
        seen = set()
        for m in re.finditer(r"\bcrate::(\w+)(?:::(\w+))?", text):
            first, second = m.group(1), m.group(2)
            module = first
            if layer_of_module(first) is None:
                module = names.get(first)
                if first == "hooks" and second:
                    module = names.get(second)
            target = layer_of_module(module) if module else None
            if target is None:
                continue
            if LAYERS.index(target) > LAYERS.index(own):
                problems.append(f"{rel}: imports `crate::{first}` from {target}/, above {own}/")
            # The file it names, for the cycle check: a folder's own file or module.
            if first in LAYERS[:-1] and second:
                seen.add(f"{first}/{second}")
        imports[rel.with_suffix("").as_posix()] = seen
    for a, targets in imports.items():
        for b in targets:
            base = b.split("/")
            if a != b and a.startswith(base[0]) and any(
                t == a or a.startswith(t + "/") for t in imports.get(b, ())
            ):
                if a < b:
                    problems.append(f"{a}.rs and {b}.rs import each other")
    for p in sorted(set(problems)):
        print(f"layers: {p}")
    if problems:
        sys.exit(1)
    print(f"layers: {len(imports)} files, every import downward, no two importing each other")


if __name__ == "__main__":
    main()
