"""CPU seconds of a sandboxed worker, read from the host (issue 31 point 2).

The verifier charges a replayed Python step what its code cost in CPU seconds, not in wall
seconds: wall seconds grow with the machine's load (a step that reads a whole table took 0.6 s
alone and over 2 s next to a busy test run, and the same trajectory was judged
``EVIDENCE_BUDGET_EXCEEDED`` once in twenty re-scorings), CPU seconds do not. The count is read
by this side from ``/proc`` (the worker's own report could be forged by the code it runs): the
CPU time of every process in the tree under the worker's host process (bubblewrap, its init, the
worker), each as user + system time of its threads plus that of the children it reaped
(``/proc/<pid>/stat`` fields 14-17, in clock ticks). The kernel's ``children`` lists are not
available on every kernel, so the tree is found from each process's parent id.
"""

from __future__ import annotations

import os

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: str) -> tuple[int, int] | None:
    """``(parent pid, CPU ticks incl. reaped children)`` of ``pid``, or ``None`` when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[1]), sum(int(x) for x in fields[11:15])
    except (OSError, ValueError, IndexError):
        return None


def tree_cpu_seconds(root: int) -> float | None:
    """CPU seconds (user + system) used so far by process ``root`` and all its descendants,
    including descendants that ended and were reaped inside the tree.

    Args:
        root: a host process id (the ``Popen`` pid of the worker).

    Returns:
        Seconds (clock-tick resolution, 10 ms on Linux), or ``None`` when ``/proc`` cannot be
        read here or ``root`` is gone.
    """
    stats: dict[int, tuple[int, int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    for name in names:
        if name.isdigit():
            st = _stat(name)
            if st is not None:
                stats[int(name)] = st
    if root not in stats:
        return None
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += stats[pid][1]
        todo.extend(children.get(pid, ()))
    return total / _TICKS


__all__ = ["tree_cpu_seconds"]
