"""Train/test splits and tracks for Clean-Noise pairs.

Rules (issue 5 point 5):
- patient-level pairs go to the split of their patient(s); patients are split
  once, by seed, so train and test patients are disjoint;
- programs flagged ``structure_disjoint`` are held out of training: their pairs
  are test only (patient-level ones drawn from test patients);
- the test split is balanced over scope x noise type, as the paper's (issue 33
  point 5): each of the six cells gets the same number of pairs, the largest the
  scarcest cell allows (``_balanced_allocation``). Only on a database too small to
  fill every cell does it fall back to equal scope totals and equal noise-type
  totals (``_totals_allocation``). Patient-level test pairs beyond it are
  dropped (they cannot move to train without sharing patients); population
  pairs beyond it go to train. At most 60 % of a cell's in-domain population
  pairs go to test.
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


def _balanced_allocation(pat: dict[str, int], pop: dict[str, int]) -> tuple[dict[str, int], dict[str, int]]:
    """Largest test allocation with the same count in every scope x noise-type cell.

    Args:
        pat / pop: pairs available for test per noise type (``record``, ``value``,
            ``query``), patient- and population-level.

    Returns:
        (patient counts, population counts) per noise type: every cell gets the
        scarcest cell's availability. When some cell has none, the totals-balanced
        allocation of ``_totals_allocation`` instead.
    """
    m = min(min(pat.values()), min(pop.values()))
    if m == 0:
        return _totals_allocation(pat, pop)
    return {n: m for n in pat}, {n: m for n in pop}


def _totals_allocation(pat: dict[str, int], pop: dict[str, int]) -> tuple[dict[str, int], dict[str, int]]:
    """Largest test allocation with equal scope totals and equal noise-type totals.

    Finds the largest T (a multiple of 6) with per-noise counts p_n <= pat[n],
    q_n <= pop[n], p_n + q_n = T/3 and sum(p) = sum(q) = T/2. When no cell can
    be filled at all (tiny databases), falls back to everything available.
    """
    noises = list(pat)
    for total in range(6 * ((sum(pat.values()) + sum(pop.values())) // 6), 0, -6):
        per_noise, half = total // 3, total // 2
        lo = {n: max(0, per_noise - pop[n]) for n in noises}
        hi = {n: min(pat[n], per_noise) for n in noises}
        if any(lo[n] > hi[n] for n in noises) or not (sum(lo.values()) <= half <= sum(hi.values())):
            continue
        p = dict(lo)
        rest = half - sum(p.values())
        for n in noises:
            add = min(rest, hi[n] - p[n])
            p[n] += add
            rest -= add
        return p, {n: per_noise - p[n] for n in noises}
    return dict(pat), dict(pop)


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
    noises = ("record", "value", "query")
    pat_av = {n: len(fixed[("patient", n)]) for n in noises}
    pop_fixed = {n: len(fixed[("population", n)]) for n in noises}
    pop_av = {n: pop_fixed[n] + (len(pool[("population", n)]) * 3) // 5 for n in noises}
    alloc = _balanced_allocation(pat_av, pop_av)
    dropped = 0
    for n in noises:
        for scope, want in (("patient", alloc[0][n]), ("population", alloc[1][n])):
            c = (scope, n)
            f, pl = list(fixed[c]), list(pool[c])
            rng.shuffle(f)
            rng.shuffle(pl)
            take_fixed = f[:want]
            dropped += len(f) - len(take_fixed)
            take_pool = pl[: max(0, want - len(take_fixed))]
            for p in take_fixed + take_pool:
                _set(p, "test", p.spec.track)
                kept.append(p)
            for p in pl[len(take_pool):]:
                _set(p, "train", "in_domain")
                kept.append(p)
    return kept, dropped
