"""The confined Python worker: where agent Python runs, and only there (issue 11).

``PythonSandbox`` (``_sandbox``) starts one worker process per episode (``_worker``, standard
library only) under bubblewrap (``_bwrap``) with a seccomp filter (``_seccomp``) and resource
limits (``PythonLimits``); the worker never opens the database, its ``db.sql`` queries come back
to the parent through a ``run_sql`` callback. ``_inprocess`` holds the value encoding and the
weaker, opt-in ``in_process`` mode's namespace probes.

Users: ``verifier.env`` (an episode's Python steps) and ``verifier.abstention`` (re-running a
cited Python step on the base database and on the task's witness overlay to judge what it
printed, ARCHITECTURE.md section 4). Layer: imports only ``verifier.contract``.
"""

from __future__ import annotations

from ..contract import SandboxUnavailable
from ._inprocess import mount_namespace_available, network_namespace_available
from ._sandbox import (
    ISOLATION_ENV,
    STATE_LOST,
    PythonLimits,
    PythonResult,
    PythonSandbox,
    RunSql,
    WorkerDied,
    default_isolation,
    sandbox_status,
)

__all__ = [
    "ISOLATION_ENV", "PythonLimits", "PythonResult", "PythonSandbox", "RunSql", "STATE_LOST", "SandboxUnavailable",
    "WorkerDied", "default_isolation", "mount_namespace_available", "network_namespace_available", "sandbox_status",
]
