"""The evidence budget in proportion to the task's honest work (issue 31 point 4; ARCHITECTURE.md
section 4, step 4).

A trajectory's evidence may cost at most what the task's own reference evidence must read, times a
fixed rate, plus a small floor: ``floor + rate x rows``, where ``rows`` is the number of rows of
the tables the reference query reads (``VerifyConfig.evidence_budget_floor_s``,
``VerifyConfig.evidence_budget_s_per_row``), and never more than
``VerifyConfig.evidence_time_budget_s``. The rows are counted in the database, not timed: the
budget is the same on every machine, under any load, in any worker and for any batch order, so the
verdicts stay byte-identical (a budget from a measured time would move with the load and with
which process measured it). An honest verification reads those rows at least once (the reference
runs on the base, its overlays and the perturbations), so a heavy trajectory costs at most a
fixed multiple of the honest work on that task, not a fixed number of seconds that dwarfs a cheap
task's verification.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ..contract import VerifyConfig
from ..sql import thread_connection

_ROWS: dict[tuple[str, float, str], int] = {}


def table_rows(db: Path, tables: Iterable[str]) -> int:
    """Rows of ``tables`` in the database ``db`` (a name the database does not hold counts 0).

    Args:
        db: the DuckDB file (read-only).
        tables: table or view names as the reference query names them (``_analyse``'s tables read).

    Returns:
        The total row count (exact ``count(*)``, memoised per file, its modification time and
        table). Raises nothing: a table that cannot be counted counts 0 (the floor remains).
    """
    path = str(Path(db).resolve())
    stamp = Path(path).stat().st_mtime
    total = 0
    for name in sorted(set(tables)):
        key = (path, stamp, name.lower())
        if key not in _ROWS:
            try:
                quoted = '"' + name.replace('"', '""') + '"'
                _ROWS[key] = int(thread_connection(path).execute(f"SELECT count(*) FROM {quoted}").fetchone()[0])
            except Exception:  # noqa: BLE001 - not a table of this database: no rows to budget for
                _ROWS[key] = 0
        total += _ROWS[key]
    return total


def proportional_budget_s(rows: int, config: VerifyConfig, python: bool = False) -> float:
    """The evidence budget of a trajectory whose task's reference reads ``rows`` rows.

    Args:
        rows: rows of the tables the task's reference query reads (``table_rows``).
        config: the verification settings.
        python: the response cites a Python step (its replays handle the rows in Python, at
            ``evidence_budget_s_per_python_row`` for at most ``row_cap`` rows: a Python step
            receives no more per query).

    Returns:
        CPU seconds: ``min(evidence_time_budget_s, evidence_budget_floor_s + per_row)`` (> 0),
        ``per_row`` = ``evidence_budget_s_per_row x rows``, or with ``python`` the larger of that
        and ``evidence_budget_s_per_python_row x min(rows, row_cap)``.
    """
    per_row = config.evidence_budget_s_per_row * rows
    if python:
        per_row = max(per_row, config.evidence_budget_s_per_python_row * min(rows, config.row_cap))
    return min(config.evidence_time_budget_s, config.evidence_budget_floor_s + per_row)
