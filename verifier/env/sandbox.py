"""The environment's Python worker: ``verifier.pysandbox`` under its historical import path.

The sandbox moved to ``verifier.pysandbox`` (a lower layer) so that ``verifier.abstention`` can
re-run a cited Python step inside the same OS boundary; this module keeps
``verifier.env.sandbox`` importable with the same names.
"""

from __future__ import annotations

from .. import pysandbox as _pysandbox
from ..pysandbox import *  # noqa: F401,F403 - re-exported

__all__ = list(_pysandbox.__all__)
