#!/usr/bin/env python3
"""The runtime's layers, checked: no module imports a layer above its own; and, in both crates,
no two files of one folder import each other (by `crate::`, `super::` or `self::` paths,
`use` trees expanded; test modules left out).

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


MACRO_SRC = SRC.parent.parent / "retry-macro" / "src"


def expand_tree(tree):
    """The paths of a `use` tree (`a::{b, c::{d, e}}`), each as a list of segments."""
    tree = re.sub(r"\s+as\s+\w+", "", tree)
    tree = re.sub(r"\s+", "", tree)
    depth, cut = 0, None
    for i, ch in enumerate(tree):
        if ch == "{" and depth == 0:
            cut = i
            break
        depth += ch == "{"
    if cut is None:
        return [[seg.split(" as ")[0] for seg in tree.split("::") if seg]]
    prefix = [seg for seg in tree[:cut].split("::") if seg]
    inner = tree[cut + 1 : tree.rindex("}")]
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 0:
            parts.append(inner[start:i])
            start = i + 1
    parts.append(inner[start:])
    return [prefix + rest for part in parts if part for rest in expand_tree(part)]


def module_of(rel):
    """A file's module path: `a/b.rs` is `a::b`, `a/mod.rs` and `lib.rs` their folder's."""
    parts = list(rel.with_suffix("").parts)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return tuple(parts)


def sibling_cycles(src):
    """`a <-> b` for each two files of one folder that name each other."""
    files = {module_of(f.relative_to(src)): f for f in sorted(src.rglob("*.rs"))}
    names = {}
    for module, path in files.items():
        text = strip_comments(path.read_text())
        text = re.split(r"#\[cfg\((?:test|all\(test, not\(loom\)\))\)\]\s*mod\s+tests\b", text)[0]
        paths = []
        for m in re.finditer(r"\buse\s+((?:crate|super|self)::[^;]+);", text):
            paths.extend(expand_tree(m.group(1)))
        text = re.sub(r"\buse\s+[^;]+;", "", text)
        paths.extend(m.group(0).split("::") for m in re.finditer(r"\b(?:crate|super|self)(?:::\w+)+", text))
        named = set()
        for segs in paths:
            head, rest = segs[0], segs[1:]
            base = [] if head == "crate" else list(module[:-1]) if head == "super" else list(module)
            full = base + rest
            for k in range(len(full), 0, -1):
                if tuple(full[:k]) in files:
                    if tuple(full[:k]) != module:
                        named.add(tuple(full[:k]))
                    break
        names[module] = named
    cycles = []
    for a, targets in names.items():
        for b in targets:
            if a < b and a[:-1] == b[:-1] and a in names.get(b, ()):
                cycles.append(f"{src.parent.name}: {'/'.join(a)}.rs and {'/'.join(b)}.rs import each other")
    return cycles


def main():
    lib = strip_comments((SRC / "lib.rs").read_text())
    names = reexports(lib)
    # `lib.rs`'s own modules of re-exports (`hooks`, `budget`, …): a path through one names
    # the layer of the item it re-exports.
    inline = set(re.findall(r"\bpub\s+mod\s+(\w+)\s*\{", lib))
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
                if first in inline and second:
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
    for src in (SRC, MACRO_SRC):
        problems.extend(sibling_cycles(src))
    for p in sorted(set(problems)):
        print(f"layers: {p}")
    if problems:
        sys.exit(1)
    print(f"layers: {len(imports)} files, every import downward, no two importing each other")


if __name__ == "__main__":
    main()
