"""Issue 34, point 4: the declared versions match what works, and the dev extra gives pip the
bounds its dependencies impose, so a fresh ``pip install -e ".[dev]"`` does not backtrack.

On main ``verl>=0.5`` admitted 0.5/0.6 (no ``agent_data`` in ``tool.execute``: every tool call
failed), ``datasets>=3`` admitted releases without the ``Json`` feature, and the dev extra left
``openai`` and ``boto3`` unbounded: pip tried ~67 openai 3.x and ~20 boto3 1.44.x releases first.
"""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

REPO = Path(__file__).resolve().parent.parent


def _extras() -> dict[str, list[Requirement]]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = {name: [Requirement(r) for r in reqs] for name, reqs in project["optional-dependencies"].items()}
    extras[""] = [Requirement(r) for r in project["dependencies"]]
    return extras


def _spec(extra: str, name: str):
    found = [r.specifier for r in _extras()[extra] if r.name.lower() == name]
    assert found, f"{name} not declared in extra {extra!r}"
    spec = found[0]
    for more in found[1:]:
        spec &= more
    return spec


def test_verl_extra_needs_the_agent_loop_release():
    spec = _spec("verl", "verl")
    assert not spec.contains("0.6.1") and not spec.contains("0.5.0") and spec.contains("0.7.0")


@pytest.mark.parametrize("extra", ["hf", "trl", "dev"])
def test_datasets_has_the_json_feature(extra):
    spec = _spec(extra, "datasets")
    assert not spec.contains("3.6.0") and spec.contains("4.0.0")


def _upper_bounds(requirer: str, package: str) -> list[Version]:
    """The upper bounds the installed ``requirer`` puts on ``package`` (unconditional requirements)."""
    try:
        reqs = [Requirement(r) for r in metadata.requires(requirer) or []]
    except metadata.PackageNotFoundError:
        pytest.skip(f"{requirer} is not installed (dev extra)")
    out = []
    for r in reqs:
        if r.name.lower() == package and (r.marker is None or "extra" not in str(r.marker)):
            out += [Version(s.version) for s in r.specifier if s.operator in ("<", "<=", "==")]
    return out


@pytest.mark.parametrize(("requirer", "package", "bounded"), [
    ("verifiers", "openai", "openai"),      # verifiers pins openai<3
    ("aiobotocore", "botocore", "boto3"),   # inspect_ai's aiobotocore pins botocore; boto3 follows botocore's version
])
def test_dev_extra_bounds_what_its_dependencies_pin(requirer, package, bounded):
    """Every release the dev extra admits for ``bounded`` lies under the pin ``requirer`` sets."""
    bounds = _upper_bounds(requirer, package)
    assert bounds, f"{requirer} no longer bounds {package}: the hint in pyproject.toml can go"
    spec = _spec("dev", bounded)
    ours = [Version(s.version) for s in spec if s.operator in ("<", "<=")]
    assert ours, f"dev extra declares no upper bound on {bounded}: pip starts from its newest release and backtracks"
    assert min(ours) <= min(bounds), (str(spec), [str(b) for b in bounds])
