"""Metrics over verdicts, never inside ``verify`` (inspect_ai keeps scorers apart from metrics).

Owns success rates by condition, noise type, scope, intent and track; NULL rate and abstention
validity; unbiased pass@k and pass^k; EHRSQL's RS(c). Imports only ``verifier.contract``.
"""

from ._metrics import (
    pass_at_k,
    pass_hat_k,
    pass_k_table,
    per_task_counts,
    rate,
    reason_distribution,
    reliability_score,
    split_records,
    summarize,
)

__all__ = [
    "pass_at_k", "pass_hat_k", "pass_k_table", "per_task_counts", "rate", "reason_distribution",
    "reliability_score", "split_records", "summarize",
]
