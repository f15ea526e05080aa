"""Helpers of the Python sandbox's parent side: value encoding and the in-process mode's namespaces.

``encode_value`` turns DuckDB values into the JSON the worker decodes
(``_worker._decode``). ``network_namespace_available`` and
``mount_namespace_available`` tell whether ``unshare`` can give the weaker
``in_process`` isolation its network and read-only mount namespaces here.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
import shutil
import subprocess
import sys
from functools import lru_cache
from typing import Any


def encode_value(value: Any) -> Any:
    """JSON-safe tagged encoding of a DuckDB value (decoded by the worker).

    Returns:
        None, bool, int, str and finite floats unchanged; lists and dicts
        recursively; other values as ``{"$t": tag, "v": text}`` (datetime,
        date, time, timedelta in seconds, decimal, base64 bytes, non-finite
        float), anything else as ``str(value)``.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$t": "float", "v": repr(value)}
    if isinstance(value, dt.datetime):
        return {"$t": "datetime", "v": value.isoformat()}
    if isinstance(value, dt.date):
        return {"$t": "date", "v": value.isoformat()}
    if isinstance(value, dt.time):
        return {"$t": "time", "v": value.isoformat()}
    if isinstance(value, dt.timedelta):
        return {"$t": "timedelta", "v": value.total_seconds()}
    if isinstance(value, decimal.Decimal):
        return {"$t": "decimal", "v": str(value)}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$t": "bytes", "v": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, (list, tuple)):
        return [encode_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode_value(v) for k, v in value.items()}
    return str(value)


def _unshare_works(flags: tuple[str, ...]) -> bool:
    exe = shutil.which("unshare")
    if not exe or not sys.platform.startswith("linux"):
        return False
    try:
        done = subprocess.run([exe, *flags, "--", sys.executable, "-c", "pass"], capture_output=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@lru_cache(maxsize=1)
def network_namespace_available() -> bool:
    """True when ``unshare --net`` can start a process here (root on Linux)."""
    return _unshare_works(("--net",))


@lru_cache(maxsize=1)
def mount_namespace_available() -> bool:
    """True when ``unshare --mount --propagation private`` works and ``mount`` exists (root on Linux)."""
    return shutil.which("mount") is not None and _unshare_works(("--mount", "--propagation", "private"))


__all__ = ["encode_value", "mount_namespace_available", "network_namespace_available"]
