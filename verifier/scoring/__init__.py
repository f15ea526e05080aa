"""Scoring many trajectories: batch verification, the Ray backend, reports and training-data export.

Owns ``verify_batch`` (process pool or Ray, JSONL in, one record per line out), the report table
and figure, and SFT/DPO export. Imports ``verifier.verify`` and everything below it, and
``verifier.metrics``; ``verifier.adapters``, the CLI and the demo sit above it.
"""

from ._batch import BatchVerifier, verify_batch
from ._export import (
    completion_messages,
    export_file,
    export_records,
    pairing_mismatch,
    read_verdicts,
    verdict_index,
)
from ._jsonl import iter_lines, verify_file
from ._figure import report_figure, top_codes
from ._report import (
    comparison_table,
    plot_report,
    print_comparison,
    print_report,
    score_agents,
    summary_table,
)
from ._worker import default_scorer, make_state

__all__ = [
    "BatchVerifier", "comparison_table", "completion_messages", "default_scorer", "export_file",
    "export_records", "iter_lines", "make_state", "pairing_mismatch", "plot_report", "print_comparison",
    "print_report", "read_verdicts", "report_figure", "top_codes", "score_agents", "summary_table", "verdict_index", "verify_batch",
    "verify_file",
]
