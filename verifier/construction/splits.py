"""Train/test splits and tracks for Clean-Noise pairs.

Rules (issue 5 point 5):
- patient-level pairs go to the split of their patient(s); patients are split
  once, by seed, so train and test patients are disjoint;
- programs flagged ``structure_disjoint`` are held out of training: their pairs
  are test only (patient-level ones drawn from test patients);
- the test split is balanced: the same number of pairs in every
  (scope, noise type) cell, so both scopes and all three noise types have equal
  shares. Patient-level test pairs beyond a cell's share are dropped (they
  cannot move to train without sharing patients); population pairs are moved
  to train. At most half of a cell's in-domain population pairs go to test.
"""

from __future__ import annotations

import random
from collections import defaultdict

from .engine import Pair

#: Share of patients assigned to the test split.
TEST_PATIENT_SHARE = 0.35


def split_patients(patient_ids: list[int], seed: int) -> dict[int, str]:
    """Assign each patient to ``train`` or ``test`` (35 % test), deterministically by seed."""
    ids = sorted(set(patient_ids))
    random.Random(f"patients:{seed}").shuffle(ids)
    n_test = round(len(ids) * TEST_PATIENT_SHARE)
    return {p: ("test" if i < n_test else "train") for i, p in enumerate(ids)}


def patient_rule(patient_split: dict[int, str], held_out: bool):
    """Predicate for the engine: a reason to reject the pair's patients, or None."""

    def check(patients: frozenset[int]) -> str | None:
        splits = {patient_split.get(p, "train") for p in patients}
        if len(splits) > 1:
            return "patients_straddle_split"
        if held_out and splits != {"test"}:
            return "held_out_program_train_patient"
        return None

    return check


def _set(pair: Pair, split: str, track: str) -> None:
    for t in (pair.clean, pair.noise):
        t.split = split
        t.track = track


def assign_splits(pairs: list[Pair], patient_split: dict[int, str], seed: int) -> tuple[list[Pair], int]:
    """Set split and track on every pair and balance the test split.

    Returns:
        (kept pairs, number dropped to balance the test split).
    """
    rng = random.Random(f"splits:{seed}")
    fixed: dict[tuple[str, str], list[Pair]] = defaultdict(list)
    pool: dict[tuple[str, str], list[Pair]] = defaultdict(list)
    kept: list[Pair] = []
    for p in pairs:
        cell = (p.spec.scope, p.spec.noise)
        held = p.spec.track == "structure_disjoint"
        if p.spec.scope == "patient":
            split = patient_split.get(next(iter(p.patients)), "train") if p.patients else "train"
            if split == "test" or held:
                fixed[cell].append(p)
            else:
                _set(p, "train", "in_domain")
                kept.append(p)
        elif held:
            fixed[cell].append(p)
        else:
            pool[cell].append(p)
    cells = [(s, n) for s in ("patient", "population") for n in ("record", "value", "query")]
    avail = [len(fixed[c]) + len(pool[c]) // 2 for c in cells]
    target = min(avail) if avail else 0
    if target == 0:
        # A database too small to fill every cell (e.g. a tiny synthetic
        # hospital): keep everything, unbalanced, rather than an empty test split.
        target = max(len(fixed[c]) + len(pool[c]) for c in cells)
    dropped = 0
    for c in cells:
        f, pl = list(fixed[c]), list(pool[c])
        rng.shuffle(f)
        rng.shuffle(pl)
        take_fixed = f[:target]
        dropped += len(f) - len(take_fixed)
        take_pool = pl[: max(0, target - len(take_fixed))]
        for p in take_fixed + take_pool:
            _set(p, "test", p.spec.track)
            kept.append(p)
        for p in pl[len(take_pool):]:
            _set(p, "train", "in_domain")
            kept.append(p)
    return kept, dropped
