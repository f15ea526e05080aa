"""Task construction: Clean-Noise pairs built and verified from the database.

Public API (issue 5):
    make_tasks(db_path, *, seed=0, pairs=None, progress=False) -> (list[Task], ConstructionReport)
    write_tasks(tasks, out) -> int
    print_summary(report, console)
    load_programs() -> tuple[ProgramSpec, ...]

Programs are data: ``verifier/construction/programs/<intent>.toml``.

Layer: construction owns the task programs and their verification on the database; it imports
only ``verifier.contract`` (models, rule tables).
"""

from __future__ import annotations

from .make import make_tasks, write_tasks
from .report import ConstructionReport, print_summary
from .spec import ProgramSpec, load_programs

__all__ = ["ConstructionReport", "ProgramSpec", "load_programs", "make_tasks", "print_summary", "write_tasks"]
