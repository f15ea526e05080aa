"""Typed errors raised by ehr-verifier.

Every error names the offending field (or file) and value, so that a user can
fix the input without reading the code. ``verify`` itself never raises on a
bad *response*; it returns a Verdict with a reason code. These errors are for
bad *inputs* to the library (tasks, trajectories, files, configuration).
"""

from __future__ import annotations

from typing import Any


class VerifierError(Exception):
    """Base class of every error this package raises on purpose."""


class _Missing:
    """The value of a required field that is absent (``repr`` is ``<missing>``)."""

    def __repr__(self) -> str:
        return "<missing>"

    def __reduce__(self) -> str:
        return "MISSING"


#: ``InputError.value`` of a required field that is absent from its object.
MISSING: Any = _Missing()


class InputError(VerifierError, ValueError):
    """An input object or record is invalid.

    Args:
        field: dotted path of the offending field (e.g. ``"steps[2].kind"``).
        value: the offending value (shown truncated to 200 characters), or
            ``MISSING`` when a required field is absent (shown ``<missing>``,
            never the parent object it is missing from).
        message: what is wrong and what was expected.
    """

    def __init__(self, field: str, value: Any, message: str) -> None:
        self.field = field
        self.value = value
        self.message = message
        shown = repr(value)
        if len(shown) > 200:
            shown = shown[:197] + "..."
        super().__init__(f"{field}={shown}: {message}")


class SourceDataError(VerifierError):
    """A source data file (MIMIC-IV CSV, MEDS parquet) is missing or unreadable.

    Args:
        path: the file or folder at fault.
        message: what is wrong with it.
    """

    def __init__(self, path: Any, message: str) -> None:
        self.path = str(path)
        self.message = message
        super().__init__(f"{self.path}: {message}")


class UnsafeQueryError(VerifierError):
    """A query was rejected before execution (writes, external access, not parseable).

    Args:
        sql: the rejected query text.
        reason: why it was rejected (e.g. ``"statement INSERT is not a read"``).
    """

    def __init__(self, sql: str, reason: str) -> None:
        self.sql = sql
        self.reason = reason
        super().__init__(f"query rejected: {reason}")


class UnitError(VerifierError, ValueError):
    """A unit string cannot be parsed, or two units cannot be converted.

    Args:
        unit: the unit string at fault.
        message: why (unknown unit, incompatible dimensions, missing analyte).
    """

    def __init__(self, unit: str, message: str) -> None:
        self.unit = unit
        self.message = message
        super().__init__(f"unit {unit!r}: {message}")


class RulesError(VerifierError):
    """A file under ``rules/`` is malformed.

    Args:
        path: the rules file.
        message: what entry is wrong and how.
    """

    def __init__(self, path: Any, message: str) -> None:
        self.path = str(path)
        super().__init__(f"{self.path}: {message}")


class SandboxUnavailable(VerifierError):
    """Python steps cannot run: the operating-system sandbox is missing or broken here.

    Raised by ``verifier.env`` when a Python step needs the bubblewrap sandbox
    (the default isolation) and it cannot start, unless the user opted into
    the weaker in-process isolation (``PythonLimits.isolation="in_process"``
    or ``EHR_VERIFIER_PYTHON_ISOLATION=in_process``). SQL steps are unaffected.

    Args:
        message: why (bwrap not found, namespaces refused, ...) and how to fix it.
    """

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)
