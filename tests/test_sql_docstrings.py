"""The private helpers of the dialect passes say what they take, give and raise.

The failure kind: helpers of ``verifier.sql._sqltypes`` and ``verifier.sql._sqlite_passes``
(node builders, type readers, the SQLite passes themselves) had no docstring or a one-liner,
so a reader could not tell their argument shapes, what they return, what they raise, or
which SQLite/PostgreSQL rule they implement (house rule: every function states its arguments,
returns, errors and rule source). Checked from the source, at every nesting level.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SQL = Path(__file__).resolve().parent.parent / "verifier" / "sql"
MODULES = ("_sqltypes.py", "_sqlite_passes.py")


def _functions(path: Path) -> list[ast.FunctionDef]:
    return [n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.FunctionDef)]


@pytest.mark.parametrize("module", MODULES)
def test_every_helper_states_args_returns_and_errors(module: str) -> None:
    functions = _functions(SQL / module)
    assert len(functions) >= 4
    for fn in functions:
        doc = ast.get_docstring(fn) or ""
        where = f"{module}:{fn.lineno} {fn.name}"
        assert doc, f"{where}: no docstring"
        params = [a.arg for a in fn.args.args + fn.args.kwonlyargs]
        if params:
            assert "Args:" in doc, f"{where}: the docstring does not state its arguments"
            for name in params:
                assert f"{name}:" in doc or f"{name}," in doc, f"{where}: argument {name} is not described"
        returns_none = isinstance(fn.returns, ast.Constant) and fn.returns.value is None
        assert returns_none or "Returns:" in doc, f"{where}: the docstring does not state what it returns"
        if any(isinstance(n, ast.Raise) for n in ast.walk(fn)) or "fail(" in ast.unparse(fn):
            assert "Raises:" in doc or fn.name == "fail", f"{where}: raises without saying so"
