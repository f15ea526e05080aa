"""Noise abstentions: is a NULL answer backed by evidence that shows the unmet requirement?

Owns evidence extraction from the trajectory, the deterministic/interpretable evidence rule,
re-execution against the counterfactual witness (and its re-keyed variant, and the decoy and
nuisance perturbations judged on the part of the result in scope), the five-unit rule, the reasoning check and the optional
LLM judge; one small pass per module, run in order by ``verify_noise``.
Imports ``verifier.contract`` and ``verifier.sql``.
"""

from ._decoy import ENTITY_COLUMNS, decoy_markers, decoy_witness, item_nuisance, task_named_values
from ._evidence import canon_cell, extract_evidence, output_matches, sql_in_python
from ._fixtures import fixtures_dir, load_cases
from ._invariance import change_tolerated, nuisance_tolerated
from ._noise import verify_noise
from ._opaque import opaque_syntax, volatile
from ._reasoning import check_reasoning
from ._rekey import rekeyed_witness
from ._small_cell import check_small_cell
from ._warm import warm_decoy_lookups
from ._witness import Overlay, overlay_for

__all__ = [
    "ENTITY_COLUMNS", "Overlay", "canon_cell", "change_tolerated", "check_reasoning", "check_small_cell",
    "decoy_markers", "decoy_witness", "extract_evidence", "fixtures_dir", "item_nuisance", "load_cases",
    "nuisance_tolerated", "opaque_syntax", "output_matches", "overlay_for", "rekeyed_witness", "sql_in_python",
    "task_named_values", "verify_noise", "volatile", "warm_decoy_lookups",
]
