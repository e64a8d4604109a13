#!/usr/bin/env python3
"""Import circles between the source files of each crate.

Reads every non-test source file of a crate (from `src/lib.rs` down through
`mod` declarations), collects the paths it names into its own crate, resolves
each to the file that defines the item, and reports the strongly connected
components of that file graph with two files or more: files that import from
each other, directly or round a loop. Also reports the files over 800 lines
and the longest file.

    python3 verification/import_graph.py                 # report, exit 0
    python3 verification/import_graph.py --deny core     # exit 1 on a circle in core
    python3 verification/import_graph.py --edges core    # print core's graph too
    python3 verification/import_graph.py --summary       # one line for CI

What counts as an edge a -> b (a imports from b):
- `use crate::..`, `use super::..`, `use self::..` and `use child::..`
  (also inside nested groups `{..}`), and paths `crate::x::Y`,
  `super::Y`, `self::x::Y`, `child::Y` and `$crate::x::Y` in code.
- A path resolves to the deepest module it names; the item after that
  module is looked up among the module's own `use` bindings (public or not:
  a child may use its parent's private imports), so an import of a
  re-export counts to the file that defines the item. A glob re-export is
  followed when the globbed module's file defines the name. Otherwise the
  edge goes to the module's file (a name it defines, or one the script
  cannot tell). Inline modules belong to their file.
- Containment is not an import: `mod x;` and `pub use x::Item` (the module
  publishing its child's items) in the file that declares `x` add no edge.
  A private `use x::Item` or an `x::Item` path in code does, and an edge
  from a child back up to its parent (`use super::Item` where the parent
  file defines `Item`) always counts: a parent that also imports from its
  child is a circle.
- Test code is left out: `tests.rs` and `tests/` files, `mod tests`, and
  any item or module under `#[cfg(test)]` (or `cfg(all(test, ..))`);
  so are doc-only items (`#[cfg(doc)]`, `#[cfg(doctest)]`). Comments, doc
  comments and string literals are not code.
- Feature-gated modules are read like any other: the graph is the union of
  every feature set. `#[path = ..]` attributes are not read (none is used).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

CRATES = ("core", "std-adapter", "redis-adapter")
LONG_FILE = 800

# ---------------------------------------------------------------- tokens


def tokenize(text: str) -> list[str]:
    """Rust tokens, enough for paths: identifiers, `::`, brackets, `;`, `#`,
    `$`, `=`, and other punctuation one character at a time. Comments,
    strings, characters and lifetimes are dropped; numbers become `0`."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif m := re.compile(r'(?:b|c)?r(#*)"').match(text, i):
            end = '"' + m.group(1)
            j = text.find(end, m.end())
            i = n if j < 0 else j + len(end)
        elif c == '"' or (c in "bc" and text.startswith('"', i + 1)):
            i = text.index('"', i) + 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif c == "'" or (c == "b" and text.startswith("'", i + 1)):
            i = text.index("'", i) + 1
            if i < n and text[i] == "\\":
                j = text.find("'", i + 2)
                i = n if j < 0 else j + 1
            elif i + 1 < n and text[i + 1] == "'":
                i += 2
            else:  # a lifetime or label
                m = re.compile(r"\w*").match(text, i)
                i = m.end()
        elif m := re.compile(r"(?:r#)?([A-Za-z_]\w*)").match(text, i):
            out.append(m.group(1))
            i = m.end()
        elif c.isdigit():
            i = re.compile(r"\w*").match(text, i).end()
            out.append("0")
        elif text.startswith("::", i):
            out.append("::")
            i += 2
        else:
            out.append(c)
            i += 1
    return out


def matching(tokens: list[str], i: int) -> int:
    """Index just past the bracket that closes the one at `i`."""
    pairs = {"{": "}", "(": ")", "[": "]"}
    opening, closing = tokens[i], pairs[tokens[i]]
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j] == opening:
            depth += 1
        elif tokens[j] == closing:
            depth -= 1
            if depth == 0:
                return j + 1
    return len(tokens)


def cfg_excludes(attr: list[str]) -> bool:
    """Whether an attribute's tokens (inside `#[..]`) make its item test or
    doc-only code: `cfg(test)`, `cfg(all(test, ..))`, `cfg(doc)`,
    `cfg(doctest)`; not `cfg(not(test))` nor `cfg(any(test, ..))`."""
    if not attr or attr[0] != "cfg":
        return False
    if "any" in attr:
        return False
    for k, t in enumerate(attr):
        if t in ("test", "doc", "doctest") and not (k >= 2 and attr[k - 2] == "not"):
            return True
    return False


def is_ident(t: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z_]\w*", t))


# ---------------------------------------------------------------- use trees


def use_tree(tokens: list[str], i: int, prefix: list[str], out: list) -> int:
    """Parses one use tree at `i` under `prefix`; appends (path, binding) to
    `out` (binding: the name it brings into scope, `*` for a glob, None for
    `_`). Returns the index after the tree."""
    path = list(prefix)
    if tokens[i] == "::":
        # `::name` is always another crate.
        path = ["::"]
        i += 1
    while True:
        t = tokens[i]
        if t == "{":
            i += 1
            while tokens[i] != "}":
                i = use_tree(tokens, i, path, out)
                if tokens[i] == ",":
                    i += 1
            return i + 1
        if t == "*":
            out.append((path, "*"))
            return i + 1
        path = path + [t]
        i += 1
        if tokens[i] == "::":
            i += 1
            continue
        binding = t
        if tokens[i] == "as":
            binding = tokens[i + 1]
            i += 2
        if t == "self":
            path = path[:-1]
            if binding == "self":
                binding = path[-1] if path else None
        out.append((path, None if binding == "_" else binding))
        return i


# ---------------------------------------------------------------- crate model


@dataclass
class Module:
    path: tuple[str, ...]
    file: Path
    dir: Path  # where `mod x;` inside this module looks for x
    children: dict[str, "Module"] = field(default_factory=dict)
    # name a `use` brings into scope -> the paths it names, as written
    bindings: dict[str, list] = field(default_factory=dict)
    # paths of `use path::*`, as written
    globs: list = field(default_factory=list)


@dataclass
class Ref:
    """A path named in `module`'s code or use declarations."""

    module: Module
    path: list[str]
    reexport: bool  # a `pub use` (any `pub(..)`): containment if it points down


class Crate:
    def __init__(self, src: Path):
        self.src = src
        root = src / "lib.rs"
        if not root.exists():
            root = src / "main.rs"
        self.root = Module((), root, src)
        self.files: dict[Path, Module] = {}
        self.refs: list[Ref] = []
        self._read(self.root)

    # -- reading

    def _read(self, module: Module) -> None:
        self.files[module.file] = module
        tokens = tokenize(module.file.read_text(encoding="utf-8"))
        self._scope(tokens, 0, len(tokens), module)

    @staticmethod
    def _child_file(parent: Module, name: str) -> tuple[Path, Path] | None:
        for f, d in ((parent.dir / f"{name}.rs", parent.dir / name), (parent.dir / name / "mod.rs", parent.dir / name)):
            if f.exists():
                return f, d
        return None

    def _scope(self, tokens: list[str], i: int, end: int, module: Module) -> None:
        excluded = False
        public = False
        while i < end:
            t = tokens[i]
            if t == "#":
                j = i + 1
                if j < end and tokens[j] == "!":
                    j += 1
                if j < end and tokens[j] == "[":
                    close = matching(tokens, j)
                    attr = tokens[j + 1 : close - 1]
                    excluded |= cfg_excludes(attr)
                    i = close
                    continue
            if t == "pub":
                public = True
                i += 1
                if i < end and tokens[i] == "(":
                    i = matching(tokens, i)
                continue
            if t == "mod" and i + 1 < end and is_ident(tokens[i + 1]):
                name = tokens[i + 1]
                after = tokens[i + 2] if i + 2 < end else ";"
                if after == "{":
                    close = matching(tokens, i + 2)
                    if not (excluded or name == "tests"):
                        child = Module(module.path + (name,), module.file, module.dir / name)
                        module.children[name] = child
                        self._scope(tokens, i + 3, close - 1, child)
                    i = close
                else:
                    if not (excluded or name == "tests"):
                        found = self._child_file(module, name)
                        if found:
                            child = Module(module.path + (name,), *found)
                            module.children[name] = child
                            self._read(child)
                    i += 3
                excluded, public = False, False
                continue
            if t == "use":
                semi = tokens.index(";", i)
                if not excluded:
                    trees: list = []
                    use_tree(tokens, i + 1, [], trees)
                    for path, binding in trees:
                        if binding == "*":
                            module.globs.append(path)
                        elif binding:
                            module.bindings.setdefault(binding, []).append(path)
                        self.refs.append(Ref(module, path, public))
                i = semi + 1
                excluded, public = False, False
                continue
            if excluded and t not in (";", "}"):
                # Skip the item: up to `;` at this level or the end of its
                # first block.
                j = i
                while j < end and tokens[j] not in (";", "{"):
                    j = matching(tokens, j) if tokens[j] in "([" else j + 1
                i = matching(tokens, j) if j < end and tokens[j] == "{" else j + 1
                excluded, public = False, False
                continue
            if t in ("crate", "super", "self") or (t == "$" and i + 1 < end and tokens[i + 1] == "crate"):
                if t == "$":
                    i += 1
                    t = "crate"
                prev = tokens[i - 1] if i else ""
                if i + 1 < end and tokens[i + 1] == "::" and prev not in ("::", ".", "in"):
                    path, j = self._code_path(tokens, i, end)
                    self.refs.append(Ref(module, path, False))
                    i = j
                    continue
            elif is_ident(t) and i + 1 < end and tokens[i + 1] == "::":
                prev = tokens[i - 1] if i else ""
                if prev not in ("::", ".") and t in module.children:
                    path, j = self._code_path(tokens, i, end)
                    self.refs.append(Ref(module, path, False))
                    i = j
                    continue
            if t in (";", "{", "}"):
                excluded, public = False, False
            i += 1

    @staticmethod
    def _code_path(tokens: list[str], i: int, end: int) -> tuple[list[str], int]:
        path = [tokens[i]]
        i += 1
        while i + 1 < end and tokens[i] == "::" and is_ident(tokens[i + 1]):
            path.append(tokens[i + 1])
            i += 2
        return path, i

    # -- resolving

    def _module_at(self, path: tuple[str, ...]) -> Module:
        m = self.root
        for seg in path:
            m = m.children[seg]
        return m

    def _absolute(self, module: Module, path: list[str]) -> list[str] | None:
        """`path` as written in `module`, from the crate root; None for
        another crate's path."""
        if not path:
            return None
        head = path[0]
        if head == "crate":
            return path[1:]
        if head == "::":
            return None
        if head in ("self", "super"):
            base = list(module.path)
            k = 0
            while k < len(path) and path[k] in ("self", "super"):
                if path[k] == "super":
                    if not base:
                        return None
                    base.pop()
                k += 1
            return base + path[k:]
        if head in module.children:
            return list(module.path) + path
        return None

    def resolve(self, module: Module, path: list[str], seen=None) -> tuple[Path, Module] | None:
        """The file that defines what `path` (as written in `module`)
        names, and the module it resolved to."""
        abs_path = self._absolute(module, path)
        if abs_path is None:
            return None
        seen = set() if seen is None else seen
        m = self.root
        k = 0
        while k < len(abs_path) and abs_path[k] in m.children:
            m = m.children[abs_path[k]]
            k += 1
        rest = abs_path[k:]
        if not rest:
            return m.file, m
        name = rest[0]
        key = (m.path, name)
        if key in seen:
            return m.file, m
        seen.add(key)
        for target in m.bindings.get(name, []):
            through = self._absolute(m, target)
            if through is None:
                continue  # another crate's item, re-exported here
            found = self.resolve(m, target + rest[1:], seen)
            if found:
                return found
        if not defines(m.file, name):
            for glob in m.globs:
                g = self._absolute(m, glob)
                if g is None:
                    continue
                try:
                    gm = self._module_at(tuple(g))
                except KeyError:
                    continue
                if defines(gm.file, name):
                    return self.resolve(m, glob + rest, seen)
        return m.file, m

    def graph(self) -> dict[Path, set[Path]]:
        edges: dict[Path, set[Path]] = {f: set() for f in self.files}
        for ref in self.refs:
            found = self.resolve(ref.module, ref.path)
            if not found:
                continue
            target, target_module = found
            source = ref.module.file
            if target == source:
                continue
            if ref.reexport and is_below(target_module.path, ref.module.path):
                continue  # a module publishing its child's item
            edges[source].add(target)
        return edges


def is_below(path: tuple[str, ...], ancestor: tuple[str, ...]) -> bool:
    return len(path) > len(ancestor) and path[: len(ancestor)] == ancestor


_DEFS: dict[Path, str] = {}


def defines(file: Path, name: str) -> bool:
    if file not in _DEFS:
        _DEFS[file] = " ".join(tokenize(file.read_text(encoding="utf-8")))
    pattern = rf"\b(?:fn|struct|enum|union|trait|type|const|static|mod|macro_rules !) {re.escape(name)}\b"
    return re.search(pattern, _DEFS[file]) is not None


# ---------------------------------------------------------------- graph


def circles(edges: dict[Path, set[Path]]) -> list[list[Path]]:
    """Strongly connected components with two nodes or more (Tarjan)."""
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    stack: list[Path] = []
    on: set[Path] = set()
    out: list[list[Path]] = []
    counter = [0]

    def visit(v: Path) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(1000, 4 * len(edges) + 100))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


@dataclass
class Report:
    name: str
    package: str
    files: list[Path]
    edges: dict[Path, set[Path]]
    circles: list[list[Path]]
    long_files: list[tuple[Path, int]]
    longest: tuple[Path, int]


def package_name(crate_dir: Path) -> str:
    toml = crate_dir / "Cargo.toml"
    if toml.exists():
        m = re.search(r'^\[package\][^\[]*?^name\s*=\s*"([^"]+)"', toml.read_text(), re.M | re.S)
        if m:
            return m.group(1)
    return crate_dir.name


def analyse(crate_dir: Path, name: str | None = None) -> Report:
    crate = Crate(crate_dir / "src")
    edges = crate.graph()
    lines = {f: len(f.read_text(encoding="utf-8").splitlines()) for f in crate.files}
    longest = max(lines.items(), key=lambda kv: (kv[1], str(kv[0])))
    return Report(
        name=name or crate_dir.name,
        package=package_name(crate_dir),
        files=sorted(crate.files),
        edges=edges,
        circles=circles(edges),
        long_files=sorted(((f, n) for f, n in lines.items() if n > LONG_FILE), key=lambda kv: -kv[1]),
        longest=longest,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("crates", nargs="*", default=list(CRATES), help="crate folders (default: %(default)s)")
    parser.add_argument("--root", default=".", help="the workspace root")
    parser.add_argument("--deny", action="append", default=[], metavar="CRATE", help="fail on a circle in CRATE")
    parser.add_argument("--edges", action="append", default=[], metavar="CRATE", help="print CRATE's file graph")
    parser.add_argument("--summary", action="store_true", help="print one line for all crates, last")
    args = parser.parse_args(argv)
    root = Path(args.root)
    deny = {d for arg in args.deny for d in arg.split(",") if d}
    failed = []
    reports = []
    for name in args.crates:
        crate_dir = root / name
        r = analyse(crate_dir, name)
        reports.append(r)

        def rel(f: Path) -> str:
            return str(f.relative_to(root))

        print(
            f"{r.name} ({r.package}): {len(r.files)} files, {len(r.circles)} import circle(s); "
            f"{len(r.long_files)} file(s) over {LONG_FILE} lines; longest {rel(r.longest[0])} ({r.longest[1]} lines)"
        )
        for k, comp in enumerate(r.circles, 1):
            print(f"  circle {k} ({len(comp)} files): " + ", ".join(rel(f) for f in comp))
        for f, n in r.long_files:
            print(f"  over {LONG_FILE}: {rel(f)} ({n} lines)")
        if name in args.edges:
            for f in r.files:
                targets = ", ".join(rel(t) for t in sorted(r.edges[f]))
                print(f"  {rel(f)} -> {targets}")
        if name in deny and r.circles:
            failed.append(name)
    if args.summary:
        circ = ", ".join(
            f"{r.package} {len(r.circles)}"
            + (f" ({', '.join(str(len(c)) for c in r.circles)} files)" if r.circles else "")
            for r in reports
        )
        longf = ", ".join(f"{r.package} {len(r.long_files)}" for r in reports)
        longest = ", ".join(f"{r.package} {r.longest[0].name} {r.longest[1]}" for r in reports)
        print(f"import circles: {circ}; files over {LONG_FILE} lines: {longf}; longest: {longest}")
    unknown = deny - {r.name for r in reports}
    if unknown:
        print(f"--deny names no crate read: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    if failed:
        print(f"import circles in denied crate(s): {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
