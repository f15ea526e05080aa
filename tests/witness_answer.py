"""The typed answer a task's reference gives with its witness applied, through the verifier's own
overlay (``verifier.abstention.Overlay``): construction's witness must make the Noise twin answerable
there too. Shared by the construction and program tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from verifier.abstention import Overlay
from verifier.construction.typed import to_answer


def witness_answer(db: Path, task: Any, answer_spec: dict[str, Any]) -> Any:
    """``to_answer(answer_spec, ...)`` of ``task.reference.sql`` run on ``db`` plus the task's witness."""
    wov = Overlay(db, task.reference.witness)
    try:
        cur = wov.con.execute(task.reference.sql)
        return to_answer(answer_spec, [d[0] for d in cur.description], cur.fetchall())
    finally:
        wov.close()
