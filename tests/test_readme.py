"""The README's promises that a reader copies: its Clean-task example runs as printed, and its figure exists."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def _example(name: str) -> str:
    m = re.search(rf"<!-- readme-example: {name} -->\n```python\n(.*?)```", README, re.S)
    assert m, f"README example {name!r} not found"
    return m.group(1)


def test_clean_task_example_runs_as_printed():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(_example("clean-task"), "README.md", "exec"), {})
    lines = out.getvalue().splitlines()
    assert lines == [
        " 4.1 mEq/L: success=True reasons=[]",
        "4.1 mmol/L: success=True reasons=[]",
        "       4.1: success=True reasons=[]",
        " 4.2 mEq/L: success=False reasons=['WRONG_VALUE']",
        "      NULL: success=False reasons=['ABSTAINED_ON_CLEAN']",
    ]


def test_clean_task_example_needs_the_analyte_for_mmol():
    """What the README says about ``analyte``: without it, 4.1 mmol/L is INCOMPATIBLE_UNIT against 4.1 mEq/L."""
    code = _example("clean-task").replace('"answer_policy": {"analyte": "potassium"},', '"answer_policy": {},')
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert "4.1 mmol/L: success=False reasons=['INCOMPATIBLE_UNIT']" in out.getvalue().splitlines()


def test_readme_figure_is_committed():
    for ref in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README):
        data = (REPO / ref).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", ref
    assert "docs/report.png" in README
