"""Reason codes attached to a failed Verdict (DESIGN.md section 4).

The codes are a closed, documented vocabulary so that error taxonomies
computed over many verdicts are deterministic.
"""

from __future__ import annotations

from enum import Enum


class ReasonCode(str, Enum):
    """Why a verdict is not a success. Values are stable strings used in JSON."""

    # response
    UNPARSEABLE_RESPONSE = "UNPARSEABLE_RESPONSE"
    # Clean answers
    WRONG_VALUE = "WRONG_VALUE"
    WRONG_UNIT = "WRONG_UNIT"
    INCOMPATIBLE_UNIT = "INCOMPATIBLE_UNIT"
    WRONG_TYPE = "WRONG_TYPE"
    MISSING_RECORDS = "MISSING_RECORDS"
    EXTRA_RECORDS = "EXTRA_RECORDS"
    WRONG_CELLS = "WRONG_CELLS"
    WRONG_ORDER = "WRONG_ORDER"
    MISSING_COLUMNS = "MISSING_COLUMNS"
    ABSTAINED_ON_CLEAN = "ABSTAINED_ON_CLEAN"
    # Noise abstentions
    ANSWERED_NOISE = "ANSWERED_NOISE"
    NO_EVIDENCE = "NO_EVIDENCE"
    EVIDENCE_QUERY_FAILED = "EVIDENCE_QUERY_FAILED"
    EVIDENCE_REJECTED = "EVIDENCE_REJECTED"
    EVIDENCE_FABRICATED = "EVIDENCE_FABRICATED"
    EVIDENCE_NOT_SENSITIVE = "EVIDENCE_NOT_SENSITIVE"
    EVIDENCE_DOES_NOT_SHOW_GAP = "EVIDENCE_DOES_NOT_SHOW_GAP"
    SMALL_CELL_DISCLOSED = "SMALL_CELL_DISCLOSED"
    REASONING_MISSES_REQUIREMENT = "REASONING_MISSES_REQUIREMENT"
    JUDGE_REJECTED = "JUDGE_REJECTED"
    # verifier-side
    VERIFIER_ERROR = "VERIFIER_ERROR"
    TIMEOUT = "TIMEOUT"
