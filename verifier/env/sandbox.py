"""The environment's Python worker: ``verifier.pysandbox`` under its historical import path.

The sandbox moved to ``verifier.pysandbox`` (a lower layer) so that ``verifier.abstention`` can
re-run a cited Python step inside the same OS boundary; this module keeps
``verifier.env.sandbox`` importable with the same names.
"""

from __future__ import annotations

from ..pysandbox import (  # noqa: F401 - re-exported
    ISOLATION_ENV,
    STATE_LOST,
    PythonLimits,
    PythonResult,
    PythonSandbox,
    RunSql,
    SandboxUnavailable,
    WorkerDied,
    default_isolation,
    mount_namespace_available,
    network_namespace_available,
    sandbox_status,
)

__all__ = [
    "ISOLATION_ENV", "PythonLimits", "PythonResult", "PythonSandbox", "RunSql", "STATE_LOST", "SandboxUnavailable",
    "WorkerDied", "default_isolation", "mount_namespace_available", "network_namespace_available", "sandbox_status",
]
