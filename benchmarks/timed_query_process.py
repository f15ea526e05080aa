"""A query process with CPU timers, for ``stage_breakdown.py`` (issue 15).

``python benchmarks/timed_query_process.py READ_FD WRITE_FD`` serves exactly as
``python -m verifier.sql._child`` does (it runs that module's ``_serve``), with the CPU seconds of
its work attributed by connection: opening each connection (``open|KEY``: the read-only database,
a witness overlay) and executing on it (``exec|KEY``), unpickling requests (``unpickle``) and
pickling replies (``pickle``). On SIGUSR1 it writes ``{"seconds": {...}, "counts": {...},
"cpu": total CPU seconds}`` as JSON to ``$EHR_VERIFIER_TIMED_CHILD_OUT.<pid>``; the rest of its CPU
(the serving loop, pipe reads and writes) is the total minus the timed parts. ``install()``
makes ``verifier.sql._guard.QueryProcess`` start this script instead of the real child (for the
breakdown's pass only; ``uninstall()`` restores it). The library itself carries no timers.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from typing import Any

OUT_ENV = "EHR_VERIFIER_TIMED_CHILD_OUT"

_seconds: dict[str, float] = defaultdict(float)
_counts: Counter[str] = Counter()
_current: list[Any] = [None]


class _TimedPickle:
    """Stands in for the ``pickle`` module inside ``verifier.sql._child``."""

    HIGHEST_PROTOCOL = pickle.HIGHEST_PROTOCOL

    @staticmethod
    def loads(data: bytes) -> Any:
        c0 = time.process_time()
        value = pickle.loads(data)
        _seconds["unpickle"] += time.process_time() - c0
        if isinstance(value, tuple) and len(value) == 7:  # a request: (key, factory, args, sql, ...)
            key, factory = value[0], value[1]
            _current[0] = key
            if factory is not None:
                value = (key, _timed(f"open|{key!r}", factory), *value[2:])
        return value

    @staticmethod
    def dumps(obj: Any, *args: Any, **kwargs: Any) -> bytes:
        c0 = time.process_time()
        try:
            return pickle.dumps(obj, *args, **kwargs)
        finally:
            _seconds["pickle"] += time.process_time() - c0


def _timed(label: str, fn: Any) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        c0 = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            _seconds[label] += time.process_time() - c0
            _counts[label] += 1
    return wrapper


def _dump(*_: Any) -> None:
    path = f"{os.environ[OUT_ENV]}.{os.getpid()}"
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        json.dump({"seconds": _seconds, "counts": _counts, "cpu": time.process_time()}, fh)
    os.replace(path + ".tmp", path)


def _main() -> None:
    from verifier.sql import _child

    original = _child.execute_checked

    def execute(*args: Any, **kwargs: Any) -> Any:
        return _timed(f"exec|{_current[0]!r}", original)(*args, **kwargs)

    _child.pickle = _TimedPickle  # type: ignore[assignment]
    _child.execute_checked = execute  # type: ignore[assignment]
    os.dup2(2, 1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.signal(signal.SIGUSR1, _dump)
    _child._serve(int(sys.argv[1]), int(sys.argv[2]))


_POPEN = subprocess.Popen


def _popen(args: Any, *a: Any, **k: Any) -> Any:
    if isinstance(args, list) and args[1:3] == ["-m", "verifier.sql._child"]:
        args = [args[0], os.path.abspath(__file__), *args[3:]]
    return _POPEN(args, *a, **k)


def install(out_prefix: str) -> None:
    """Make query processes started from now on in this process timed ones, writing to ``out_prefix.<pid>``."""
    from verifier.sql import _guard

    os.environ[OUT_ENV] = out_prefix
    _guard.subprocess.Popen = _popen  # type: ignore[attr-defined]


def uninstall() -> None:
    """Undo ``install``."""
    from verifier.sql import _guard

    _guard.subprocess.Popen = _POPEN  # type: ignore[attr-defined]


def read(pid: int, out_prefix: str, timeout_s: float = 30.0) -> dict[str, Any]:
    """Ask child ``pid`` for its counters (SIGUSR1) and return them (``{"seconds", "counts", "cpu"}``)."""
    path = f"{out_prefix}.{pid}"
    if os.path.exists(path):
        os.remove(path)
    os.kill(pid, signal.SIGUSR1)
    deadline = time.monotonic() + timeout_s
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"the timed query process {pid} did not write its counters")
        time.sleep(0.01)
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


if __name__ == "__main__":
    sys.path.pop(0)  # this script's folder: the child imports the installed verifier only
    _main()
