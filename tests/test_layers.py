"""The package layout that ARCHITECTURE.md promises, checked from the code's own imports.

- The layers are read from the ``layers`` block of ARCHITECTURE.md (top first). A module may
  import modules of its own package and of layers strictly below its own; packages on one line
  are peers and may not import each other. Every import counts, including those inside
  functions (lazy imports still bind layers).
- No import cycles between modules.
- The top level of ``verifier/`` holds at most 8 modules besides the packages.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PKG = REPO / "verifier"


def _layers() -> list[list[str]]:
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    m = re.search(r"```layers\n(.*?)```", text, re.S)
    assert m, "ARCHITECTURE.md has no ```layers block"
    return [line.split("#")[0].split() for line in m.group(1).splitlines() if line.split("#")[0].strip()]


def _modules() -> dict[str, Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        parts = list(p.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Absolute names of the ``verifier`` modules that module ``name`` imports (anywhere in it)."""
    is_pkg = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target != "verifier" and not target.startswith("verifier."):  # not the verifiers package
                continue
            subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES]
            found.update(subs or [target])
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name == "verifier" or a.name.startswith("verifier."))
    found.discard(name)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _unit(module: str) -> str:
    """The layer unit of a module: its top-level package or module under ``verifier``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "verifier"


def test_every_package_and_top_level_module_has_a_layer() -> None:
    named = {u for line in _layers() for u in line}
    units = {_unit(m) for m in MODULES} - {"verifier"}
    assert units <= named, f"not placed in ARCHITECTURE.md's layers: {sorted(units - named)}"
    assert named <= units, f"ARCHITECTURE.md names layers that do not exist: {sorted(named - units)}"


def test_imports_point_down_the_layers() -> None:
    rank = {u: i for i, line in enumerate(reversed(_layers())) for u in line}
    wrong = []
    for mod, targets in GRAPH.items():
        if mod == "verifier":  # the facade re-exports the public API from every layer
            continue
        for t in targets:
            a, b = _unit(mod), _unit(t)
            if a == b:
                continue
            if b == "verifier":
                wrong.append(f"{mod} imports the package root (import the defining module instead)")
            elif rank[b] >= rank[a]:
                wrong.append(f"{mod} ({a}, layer {rank[a]}) imports {t} ({b}, layer {rank[b]})")
    assert not wrong, "\n".join(sorted(wrong))


def test_no_import_cycles() -> None:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH.get(v, ()):
            if w not in GRAPH:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


def test_top_level_holds_at_most_eight_modules() -> None:
    top = sorted(p.name for p in PKG.glob("*.py"))
    assert len(top) <= 8, top


@pytest.mark.parametrize("package", sorted(p.parent.name for p in PKG.glob("*/__init__.py")))
def test_each_package_says_what_it_is_owns_and_may_import(package: str) -> None:
    doc = ast.get_docstring(ast.parse((PKG / package / "__init__.py").read_text(encoding="utf-8")))
    assert doc and len(doc.splitlines()) >= 3, f"verifier.{package}: the __init__ docstring should say what the concept is, what it owns and what it may import"
    assert re.search(r"\bimport", doc, re.I), f"verifier.{package}: the docstring does not say what it may import"


def test_the_checker_sees_a_violation() -> None:
    """The layer check is not vacuous: an upward import is found in a synthetic graph."""
    rank = {u: i for i, line in enumerate(reversed(_layers())) for u in line}
    assert rank["contract"] < rank["verify"] < rank["cli"]
    assert "verifier.contract" in GRAPH["verifier.verify"] or any(t.startswith("verifier.contract") for t in GRAPH["verifier.verify"])
