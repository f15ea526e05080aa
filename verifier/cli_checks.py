"""Up-front checks of the CLI's file arguments, run before any work (``verifier.cli``).

Each check raises a typed error naming the option and the path; the CLI boundary prints it as
``error: <path>: <what is wrong>`` and exits with code 2. Checking first means that a typo in
``--out`` fails in a second, not after minutes of task construction, and that an empty input
fails instead of writing an empty report.
"""

from __future__ import annotations

from pathlib import Path

from .contract import InputError, SourceDataError, Task, load_tasks

#: DuckDB's storage magic: bytes 8..11 of every database file.
_DUCKDB_MAGIC = b"DUCK"


def require_db(db: Path, option: str = "--db") -> None:
    """Check that ``db`` is an existing DuckDB database file.

    Raises:
        SourceDataError: naming ``option`` and the path: a directory, not found, or not a DuckDB database.
    """
    if db.is_dir():
        raise SourceDataError(db, f"{option}: is a directory, not a DuckDB database file")
    if not db.is_file():
        raise SourceDataError(db, f"{option}: DuckDB database file not found")
    with open(db, "rb") as fh:
        head = fh.read(12)
    if head[8:12] != _DUCKDB_MAGIC:
        raise SourceDataError(db, f"{option}: not a DuckDB database file (build one with `ehr-verifier build-db`)")


def require_tasks(path: Path) -> dict[str, Task]:
    """Load a tasks JSONL file that holds at least one task.

    Returns:
        ``{task_id: Task}`` (non-empty).

    Raises:
        SourceDataError: the file holds no task (``<path>: no tasks``).
        InputError / OSError: as ``load_tasks``.
    """
    tasks = load_tasks(path)
    if not tasks:
        raise SourceDataError(path, "no tasks")
    return tasks


def require_lines(path: Path, what: str = "trajectories") -> int:
    """Count the non-blank lines of a JSONL input, which must have one.

    Returns:
        The number of lines (blank ones included, as ``score`` numbers them).

    Raises:
        SourceDataError: only blank lines (``<path>: no trajectories``).
        OSError: unreadable (a directory, missing).
    """
    total, filled = 0, False
    with open(path, "rb") as fh:
        for line in fh:
            total += 1
            filled = filled or bool(line.strip())
    if not filled:
        raise SourceDataError(path, f"no {what}")
    return total


def require_out_file(out: Path, option: str = "--out") -> None:
    """Check that ``out`` can be written as a file: its folder exists and it is not a directory.

    Raises:
        InputError: field ``option``, value the path.
    """
    if out.is_dir():
        raise InputError(option, str(out), "is a directory; give a file path to write")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(option, str(out), f"folder {str(parent)!r} does not exist (create it first)")


def require_out_dir(out: Path, option: str = "--out") -> None:
    """Check that ``out`` is a folder or can be created as one (it is not an existing file).

    Raises:
        InputError: field ``option``, value the path.
    """
    if out.exists() and not out.is_dir():
        raise InputError(option, str(out), "is an existing file; --out is the folder verdicts.jsonl, summary.json "
                         "and report.png are written into")


def require_schema_detail(value: str) -> str:
    """Check a ``--schema-detail`` value (``verifier.database.SCHEMA_DETAILS``) before any work.

    Raises:
        InputError: another value (field ``--schema-detail``).
    """
    from .database import SCHEMA_DETAILS

    if value not in SCHEMA_DETAILS:
        raise InputError("--schema-detail", value, f"expected one of {list(SCHEMA_DETAILS)}")
    return value
