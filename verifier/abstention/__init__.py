"""Noise abstentions: is a NULL answer backed by evidence that shows the unmet requirement?

Owns evidence extraction from the trajectory, re-execution against the counterfactual witness
(and its re-keyed and decoy variants), the five-unit rule, the reasoning check and the optional
LLM judge; one small pass per module, run in order by ``verify_noise``.
Imports ``verifier.contract`` and ``verifier.sql``.
"""

from ._decoy import ENTITY_COLUMNS, decoy_witness, task_named_values
from ._evidence import canon_cell, extract_evidence, output_matches, sql_in_python
from ._fixtures import fixtures_dir, load_cases
from ._noise import verify_noise
from ._reasoning import check_reasoning
from ._rekey import rekeyed_witness
from ._small_cell import check_small_cell
from ._witness import Overlay, overlay_for

__all__ = [
    "ENTITY_COLUMNS", "Overlay", "canon_cell", "check_reasoning", "check_small_cell", "decoy_witness",
    "extract_evidence", "fixtures_dir", "load_cases", "output_matches", "overlay_for", "rekeyed_witness",
    "sql_in_python", "task_named_values", "verify_noise",
]
