"""Packaging: a non-editable install must carry every subpackage and data file."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _setuptools() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_subpackage_is_listed():
    listed = set(_setuptools()["packages"])
    found = {
        ".".join(p.parent.relative_to(REPO).parts)
        for p in (REPO / "verifier").rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    assert found - listed == set(), f"add to [tool.setuptools] packages: {sorted(found - listed)}"
    assert "verifier._rules" in listed


def test_every_data_file_is_covered_by_package_data():
    cfg = _setuptools()
    data = cfg["package-data"]
    packages = set(cfg["packages"])
    missing = []
    for path in (REPO / "verifier").rglob("*"):
        if path.suffix not in {".toml", ".txt", ".json"} or "__pycache__" in path.parts:
            continue
        # the nearest enclosing package owns the file
        owner = path.parent
        while ".".join(owner.relative_to(REPO).parts) not in packages:
            owner = owner.parent
        pkg = ".".join(owner.relative_to(REPO).parts)
        rel = path.relative_to(owner).as_posix()
        patterns = data.get(pkg, []) + data.get("*", [])
        if not any(Path(rel).match(pat) and rel.count("/") == pat.count("/") for pat in patterns):
            missing.append(f"{pkg}: {rel}")
    assert missing == [], f"not shipped in a wheel: {missing}"
