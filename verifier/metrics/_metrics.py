"""Metrics computed from verdicts (and tasks), never inside ``verify``.

ARCHITECTURE.md section 8 (inspect_ai anchor): a verdict explains one trajectory;
metrics aggregate many. Everything here is a pure function of verdict records
(``Verdict`` models or the dicts ``verify_batch`` writes, error records
included) and, optionally, the tasks they refer to (for noise type, scope,
intent, track and the Clean twin of a Noise task).

Definitions (rates are fractions in [0, 1]; ``None`` when the denominator is 0):

* success rate: successes / verdicts, per condition and per group;
* NULL rate (Noise): verdicts whose Answer parsed as NULL / Noise verdicts;
* abstention validity (Noise): successes / NULL answers, i.e. how often an
  abstention was backed by valid evidence;
* pass@k and pass^k: unbiased estimators from ``n`` samples per task with
  ``c`` successes (Chen et al. 2021, "Evaluating Large Language Models Trained
  on Code", for pass@k; Yao et al. 2024, tau-bench, for pass^k), averaged over
  the tasks that have at least ``k`` samples;
* RS(c): the EHRSQL 2024 reliability score (see ``reliability_score``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from math import comb
from typing import Any, Iterable, Mapping, Sequence

from pydantic import BaseModel

from ..contract import Task

#: Default k values for pass@k / pass^k (only those <= the largest sample count are reported).
DEFAULT_KS: tuple[int, ...] = (1, 2, 4, 8, 16)
#: Default RS penalties; ``"N"`` means a penalty equal to the number of scored items (EHRSQL's RS(N)).
DEFAULT_RS_PENALTIES: tuple[float | str, ...] = (0, 5, 10, "N")


def _as_dict(item: Any) -> dict[str, Any]:
    if isinstance(item, BaseModel):
        return item.model_dump(mode="json")
    if isinstance(item, Mapping):
        return dict(item)
    raise TypeError(f"expected a Verdict or a verdict/error record dict, got {type(item).__name__}")


def split_records(records: Iterable[Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Separate verdicts from error records.

    Args:
        records: ``Verdict`` models or dicts as written by ``verify_batch``
            (a dict with an ``"error"`` key is an error record).

    Returns:
        ``(verdicts, errors)`` as lists of dicts, input order kept.

    Raises:
        TypeError: an item is neither a model nor a mapping.
    """
    verdicts: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    for item in records:
        d = _as_dict(item)
        (errors if "error" in d else verdicts).append(d)
    return verdicts, errors


def rate(num: int, den: int) -> float | None:
    """``num / den`` or ``None`` when ``den`` is 0."""
    return num / den if den else None


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one task: ``1 - C(n-c, k) / C(n, k)``.

    The probability that at least one of ``k`` samples drawn without
    replacement from the ``n`` observed ones is a success (Chen et al. 2021).

    Args:
        n: samples for the task (>= 1).
        c: successful samples (0 <= c <= n).
        k: sample budget (1 <= k <= n).

    Returns:
        A probability in [0, 1].

    Raises:
        ValueError: on counts outside those ranges.
    """
    _check_counts(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k for one task: ``C(c, k) / C(n, k)``.

    The probability that all of ``k`` samples drawn without replacement are
    successes (tau-bench's reliability metric, Yao et al. 2024).

    Args / Raises: as ``pass_at_k``.
    """
    _check_counts(n, c, k)
    return comb(c, k) / comb(n, k)


def _check_counts(n: int, c: int, k: int) -> None:
    if n < 1 or not 0 <= c <= n:
        raise ValueError(f"need n >= 1 and 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={n}")


def per_task_counts(verdicts: Iterable[Any]) -> dict[str, tuple[int, int]]:
    """``{task_id: (n samples, c successes)}`` from verdicts (error records ignored)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for v in verdicts:
        d = _as_dict(v)
        if "error" in d:
            continue
        counts[d["task_id"]][0] += 1
        counts[d["task_id"]][1] += int(bool(d["success"]))
    return {t: (n, c) for t, (n, c) in sorted(counts.items())}


def pass_k_table(counts: Mapping[str, tuple[int, int]], ks: Sequence[int] = DEFAULT_KS) -> dict[str, dict[str, float | int]]:
    """pass@k and pass^k averaged over tasks, for each k.

    Args:
        counts: ``{task_id: (n, c)}`` (see ``per_task_counts``).
        ks: the k values; a k larger than every task's n is left out.

    Returns:
        ``{str(k): {"pass_at_k": float, "pass_hat_k": float, "tasks": int}}``
        where ``tasks`` is how many tasks had ``n >= k`` (only those count).
    """
    out: dict[str, dict[str, float | int]] = {}
    for k in sorted(set(ks)):
        eligible = [(n, c) for n, c in counts.values() if n >= k]
        if not eligible:
            continue
        out[str(k)] = {
            "pass_at_k": sum(pass_at_k(n, c, k) for n, c in eligible) / len(eligible),
            "pass_hat_k": sum(pass_hat_k(n, c, k) for n, c in eligible) / len(eligible),
            "tasks": len(eligible),
        }
    return out


def reliability_score(verdicts: Iterable[Any], penalty: float | str = 10, *, require_evidence: bool = False) -> float | None:
    """EHRSQL 2024 reliability score RS(c), as a compatibility metric.

    Source: G. Lee, S. Kweon, S. Bae, E. Choi, "Overview of the EHRSQL 2024
    Shared Task on Reliable Text-to-SQL Modeling on Electronic Health
    Records", Clinical NLP Workshop @ NAACL 2024 (arXiv:2405.06673), and the
    task's official scorer (github glee4810/ehrsql-2024,
    ``scoring_program/reliability_score.py``). Per item:

    * answerable (our Clean), answered correctly: +1;
    * answerable, abstained: 0;
    * answerable, answered wrongly: -c;
    * unanswerable (our Noise), abstained: +1;
    * unanswerable, answered: -c.

    RS(c) is the mean over items. ``penalty="N"`` gives RS(N), the penalty
    equal to the number of items (one wrong answer cancels everything).

    Args:
        verdicts: Verdict models or records (error records are skipped).
        penalty: c >= 0, or ``"N"``.
        require_evidence: this project's stricter variant: a Noise abstention
            scores +1 only when the verdict succeeded (evidence re-executed and
            valid), else 0 (an unsupported refusal is neither rewarded nor
            penalised). ``False`` reproduces EHRSQL.

    Returns:
        The score (in [-c, 1]) or ``None`` when there is no verdict.

    Raises:
        ValueError: a negative penalty or a string other than ``"N"``.
    """
    items = [d for d in map(_as_dict, verdicts) if "error" not in d]
    if isinstance(penalty, str):
        if penalty != "N":
            raise ValueError(f"penalty must be a number >= 0 or 'N', got {penalty!r}")
        c = float(len(items))
    else:
        c = float(penalty)
        if c < 0:
            raise ValueError(f"penalty must be >= 0, got {penalty!r}")
    if not items:
        return None
    total = 0.0
    for d in items:
        if d["condition"] == "clean":
            total += 1.0 if d["success"] else (0.0 if d["abstained"] else -c)
        elif d["abstained"]:
            total += 1.0 if (d["success"] or not require_evidence) else 0.0
        else:
            total += -c
    return total / len(items)


def _group_stats(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    wins = sum(1 for d in rows if d["success"])
    return {"n": n, "success_rate": rate(wins, n)}


def _noise_stats(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out = _group_stats(rows)
    nulls = [d for d in rows if d["abstained"]]
    out["null_rate"] = rate(len(nulls), len(rows))
    out["abstention_validity"] = rate(sum(1 for d in nulls if d["success"]), len(nulls))
    return out


def _by_condition(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "clean": _group_stats([d for d in rows if d["condition"] == "clean"]),
        "noise": _noise_stats([d for d in rows if d["condition"] == "noise"]),
    }


def reason_distribution(verdicts: Iterable[Any]) -> dict[str, dict[str, int]]:
    """Count reason codes by condition: ``{"clean": {code: n}, "noise": {code: n}}``.

    Codes are ordered by decreasing count, then alphabetically (deterministic);
    successful verdicts count under the pseudo-code ``"SUCCESS"``.
    """
    counts: dict[str, Counter[str]] = {"clean": Counter(), "noise": Counter()}
    for d in map(_as_dict, verdicts):
        if "error" in d:
            continue
        codes = d.get("reasons") or []
        if d["success"]:
            counts[d["condition"]]["SUCCESS"] += 1
        for code in dict.fromkeys(codes):  # a code counts once per verdict
            counts[d["condition"]][str(code)] += 1
    return {cond: dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))) for cond, c in counts.items()}


def summarize(
    records: Iterable[Any],
    tasks: Mapping[str, Task] | None = None,
    *,
    ks: Sequence[int] = DEFAULT_KS,
    rs_penalties: Sequence[float | str] = DEFAULT_RS_PENALTIES,
) -> dict[str, Any]:
    """The summary written to ``summary.json``.

    Args:
        records: verdicts and error records (``Verdict`` models or dicts).
        tasks: ``{task_id: Task}``; needed for the breakdowns by noise type,
            scope, intent and track (without it they are empty).
        ks: k values for pass@k / pass^k.
        rs_penalties: penalties for RS(c).

    Returns:
        A JSON-serialisable dict with keys ``n_records``, ``n_verdicts``,
        ``n_errors``, ``errors_by_type``, ``clean`` (n, success_rate,
        abstention_rate), ``noise`` (n, success_rate, null_rate,
        abstention_validity), ``by_noise_type`` (per type: the Noise stats plus
        ``clean_twin`` stats of the Clean tasks sharing a pair_id),
        ``by_scope``, ``by_intent``, ``by_track`` (each ``{group: {"clean":
        stats, "noise": stats}}``), ``pass_at_k``, ``pass_hat_k`` (``{k:
        value}``), ``pass_k_tasks`` (``{k: tasks counted}``), ``pass_k_by_condition``,
        ``rs`` and ``rs_evidence`` (``{penalty: RS}``), ``reasons`` (see
        ``reason_distribution``) and ``duplicate_trajectory_ids`` (verdicts whose
        trajectory_id an earlier verdict already had: each still counts as a
        sample, so a concatenation of two runs with the same ids inflates n).
        Keys of every mapping are sorted.

        Error records (unreadable lines, unknown tasks, scorer failures) are
        counted in ``n_errors``/``errors_by_type`` and are not samples: rates
        and pass@k are over verdicts only, so check ``n_errors`` before
        comparing runs.
    """
    verdicts, errors = split_records(records)
    tasks = tasks or {}
    clean = [d for d in verdicts if d["condition"] == "clean"]
    noise = [d for d in verdicts if d["condition"] == "noise"]
    clean_stats = _group_stats(clean)
    clean_stats["abstention_rate"] = rate(sum(1 for d in clean if d["abstained"]), len(clean))

    def task_of(d: dict[str, Any]) -> Task | None:
        return tasks.get(d["task_id"])

    by: dict[str, dict[str, list[dict[str, Any]]]] = {"scope": defaultdict(list), "intent": defaultdict(list), "track": defaultdict(list)}
    by_noise: dict[str, list[dict[str, Any]]] = defaultdict(list)
    clean_by_pair: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for d in verdicts:
        t = task_of(d)
        if t is None:
            continue
        by["scope"][t.scope].append(d)
        by["intent"][t.intent].append(d)
        by["track"][t.track].append(d)
        if t.condition == "noise" and t.noise_type:
            by_noise[t.noise_type].append(d)
        elif t.condition == "clean":
            clean_by_pair[t.pair_id].append(d)

    by_noise_type: dict[str, Any] = {}
    for ntype in sorted(by_noise):
        rows = by_noise[ntype]
        stats = _noise_stats(rows)
        pairs = sorted({tasks[d["task_id"]].pair_id for d in rows})
        stats["clean_twin"] = _group_stats([d for p in pairs for d in clean_by_pair.get(p, [])])
        by_noise_type[ntype] = stats

    counts = per_task_counts(verdicts)
    table = pass_k_table(counts, ks)
    by_cond_counts = {"clean": per_task_counts(clean), "noise": per_task_counts(noise)}
    return {
        "n_records": len(verdicts) + len(errors),
        "n_verdicts": len(verdicts),
        "n_errors": len(errors),
        "errors_by_type": dict(sorted(Counter(str(e["error"].get("type")) for e in errors).items())),
        "clean": clean_stats,
        "noise": _noise_stats(noise),
        "by_noise_type": by_noise_type,
        "by_scope": {g: _by_condition(rows) for g, rows in sorted(by["scope"].items())},
        "by_intent": {g: _by_condition(rows) for g, rows in sorted(by["intent"].items())},
        "by_track": {g: _by_condition(rows) for g, rows in sorted(by["track"].items())},
        "pass_at_k": {k: v["pass_at_k"] for k, v in table.items()},
        "pass_hat_k": {k: v["pass_hat_k"] for k, v in table.items()},
        "pass_k_tasks": {k: v["tasks"] for k, v in table.items()},
        "pass_k_by_condition": {
            cond: {k: {"pass_at_k": v["pass_at_k"], "pass_hat_k": v["pass_hat_k"]} for k, v in pass_k_table(cc, ks).items()}
            for cond, cc in by_cond_counts.items()
        },
        "rs": {str(p): reliability_score(verdicts, p) for p in rs_penalties},
        "rs_evidence": {str(p): reliability_score(verdicts, p, require_evidence=True) for p in rs_penalties},
        "reasons": reason_distribution(verdicts),
        "duplicate_trajectory_ids": len(verdicts) - len({str(d.get("trajectory_id")) for d in verdicts}),
    }
