"""The installed distribution's version (``ehr-verifier``), recorded in every verdict."""

from __future__ import annotations

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("ehr-verifier")
except _metadata.PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0+source"
