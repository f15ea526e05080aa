"""Benchmark: the slowest ``verify()`` per kind of adversarial response (issue 15, bounded inputs).

A reward that a single sampled response can stall is a denial of service on training. For each kind
below, responses are built at several sizes and scored against real tasks of the synthetic hospital
(taken with their successful episodes from the committed corpus ``fixtures/episodes/synthetic``); the baseline is the same task scored with an ordinary response, in
the same run. It prints, per kind, the slowest verify() in milliseconds, its ratio to the baseline, and
the reason codes (``VERIFIER_ERROR`` must never appear); then the same at the caps: the largest
response of that kind that ``VerifyConfig.limits`` still verifies (found by bisection on its size;
beyond it the verdict is ``INPUT_TOO_LARGE``), slowest of 3 runs.

Kinds: a JSON answer nested deeply; unclosed code fences; a 10 MB reasoning; a million numbers in a
Clean count answer; 10^4 step citations; 10^4 answer tags; run-on reasonings whose every word is an
aggregate or a back-reference to the eligible units, or an allowed statement about them (the
five-unit rule's reading). Each kind runs on a Clean count, a Clean records, a Noise and a
population Noise task with two eligible units ("small cell", where the five-unit rule applies).

    python benchmarks/bench_adversarial_inputs.py [--db synth.duckdb] [--scale 1.0] [--kind NAME ...]

``--scale`` multiplies every size (0.1 for a quick look); ``--kind`` keeps only the named kinds.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Callable

from verifier import VerifyConfig, verify
from verifier.contract import Task, Trajectory
from verifier.scoring._agreement import read_episodes

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "episodes" / "synthetic"


def _synthetic_db(work: Path) -> Path:
    from verifier.database import build_database
    from verifier.synthetic import generate_hospital

    db = work / "hospital.duckdb"
    build_database(generate_hospital(work / "hospital", seed=0), db)
    return db


def _kinds(scale: float) -> dict[str, Callable[[int], str]]:
    def n(x: float) -> int:
        return max(1, int(x * scale))

    return {
        "deep JSON answer": lambda k: '{"answer": ' + "[" * n(100_000 * k) + "1" + "]" * n(100_000 * k) + ', "reasoning": "x"}',
        "unclosed code fences": lambda k: "```\n<answer>1</answer>\n" * n(8_000 * k),
        "10 MB reasoning": lambda k: "<answer>NULL</answer><reasoning>" + "no record [step 1] " * n(500_000 * k) + "</reasoning>",
        "a million numbers": lambda k: "<answer>" + " ".join(str(i) for i in range(n(1_000_000 * k))) + "</answer>",
        "10^4 citations": lambda k: "<answer>NULL</answer><reasoning>" + " ".join(f"[step {i}]" for i in range(n(10_000 * k))) + "</reasoning>",
        "10^4 answer tags": lambda k: "<answer>1</answer>" * n(10_000 * k) + "<reasoning>x</reasoning>",
        # a blind review's run-on texts for the five-unit rule (no clause break; every word an aggregate
        # or a back-reference): quadratic before 2026-12-02 (37 s and 8.8 s at the caps)
        "run-on aggregates": lambda k: "<answer>NULL</answer><reasoning>" + "mean 7 " * n(100_000 * k) + "</reasoning>",
        "run-on back-references": lambda k: "<answer>NULL</answer><reasoning>" + "them 3 days both of those " * n(30_000 * k) + "</reasoning>",
        # the same reading on a run-on text that discloses nothing (every count bounded, every
        # reference to the units): no early stop, every pass reads the whole text
        "run-on allowed statements": lambda k: "<answer>NULL</answer><reasoning>" + "all of them are under 5 patients " * n(30_000 * k) + "</reasoning>",
        # a second review's: combining marks in falling class order (NFKD of the whole text sorts them,
        # quadratically), and one long exponent (a context pattern rescanned the digit run per start)
        "combining marks": lambda k: "<answer>NULL</answer><reasoning>a" + "\u0301" * n(100_000 * k) + "\u0316" * n(100_000 * k) + "</reasoning>",
        "a long exponent": lambda k: "<answer>5 x 10^-" + "9" * n(100_000 * k) + "</answer><reasoning>x</reasoning>",
        # a review's densest mix: a referring word before six bounds (anchors every two characters)
        "run-on references to bounds": lambda k: "<answer>NULL</answer><reasoning>" + "them <5<5<5<5<5<5 " * n(50_000 * k) + "</reasoning>",
        # the densest bounds: one every three characters, each tight for the small cell's two units
        "run-on bounds": lambda k: "<answer>NULL</answer><reasoning>" + "<3 " * n(300_000 * k) + "</reasoning>",
        # the structural reading (issue 30 point 3): a label naming the cohort before every allowed value,
        # and a table whose header names the cohort (one value per cell), both disclosing nothing
        "run-on cohort labels": lambda k: "<answer>NULL</answer><reasoning>" + "Eligible admissions: fewer than five. " * n(30_000 * k) + "</reasoning>",
        "run-on cohort table": lambda k: "<answer>NULL</answer><reasoning>| Eligible admissions | n |\n|---|---|\n" + "| fewer than 5 | 9 |\n" * n(50_000 * k) + "</reasoning>",
    }


def _time(traj: Trajectory, task: Task, config: VerifyConfig) -> tuple[float, list[str]]:
    t0 = time.perf_counter()
    v = verify(traj, task, config)
    return (time.perf_counter() - t0) * 1000, [getattr(r, "value", str(r)) for r in v.reasons]


def _bad(traj: Trajectory, task: Task, text: str) -> Trajectory:
    return Trajectory(trajectory_id=traj.trajectory_id, task_id=task.task_id, steps=list(traj.steps), final_response=text)


def _at_cap(make: Callable[[float], str], traj: Trajectory, task: Task, config: VerifyConfig) -> tuple[float, int, list[str]]:
    """The slowest of 3 verify() calls on the largest response of this kind under the caps."""
    lo, hi = 0.0, 1.0
    for _ in range(30):
        mid = (lo + hi) / 2
        if "INPUT_TOO_LARGE" in _time(_bad(traj, task, make(mid)), task, config)[1]:
            hi = mid
        else:
            lo = mid
    text = make(lo)
    runs = [_time(_bad(traj, task, text), task, config) for _ in range(3)]
    ms = max(r[0] for r in runs)
    return ms, len(text), runs[0][1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, help="built synthetic hospital (default: build one in a temporary folder)")
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies every input size")
    ap.add_argument("--kind", action="append", help="only this kind of input (repeatable; default: every kind)")
    a = ap.parse_args(argv)
    episodes = read_episodes(CORPUS)
    picks: dict[str, tuple[Task, Trajectory]] = {}
    for ep in episodes:
        ref = ep.task.reference
        kind = ep.task.condition if ep.task.condition == "noise" else (ref.answer.type if ref.answer else "")
        if kind in ("count", "records", "noise") and kind not in picks and ep.outcome == "success":
            picks[kind] = (ep.task, ep.trajectory)
        # a population Noise task with two eligible units: the five-unit rule's reading runs in full
        # (every pass, "both" included), so the run-on kinds measure it at the caps
        if (kind == "noise" and ep.task.scope == "population" and ref.eligible_units == 2
                and "small cell" not in picks and ep.outcome == "success"):
            picks["small cell"] = (ep.task, ep.trajectory)
    with tempfile.TemporaryDirectory() as tmp:
        config = VerifyConfig(db_path=str(a.db or _synthetic_db(Path(tmp))))
        print(f"{'kind':<22} {'task':<8} {'size':>10} {'slowest ms':>11} {'baseline ms':>12} {'ratio':>8}  reasons")
        for name, make in _kinds(a.scale).items():
            if a.kind and name not in a.kind:
                continue
            for kind, (task, traj) in sorted(picks.items()):
                base_ms = min(_time(traj, task, config)[0] for _ in range(3))  # warm: connections, caches
                worst = (0.0, 0, [])
                for k in (0.25, 0.5, 1.0):
                    text = make(k)
                    bad = Trajectory(trajectory_id=traj.trajectory_id, task_id=task.task_id, steps=list(traj.steps),
                                     final_response=text)
                    ms, reasons = _time(bad, task, config)
                    if ms >= worst[0]:
                        worst = (ms, len(text), reasons)
                ms, size, reasons = worst
                print(f"{name:<22} {kind:<8} {size:>10,} {ms:>11.1f} {base_ms:>12.1f} {ms / max(base_ms, 1e-3):>8.1f}  "
                      f"{','.join(reasons) or 'success'}")
                ms, size, reasons = _at_cap(make, traj, task, config)
                print(f"{'  at the caps':<22} {kind:<8} {size:>10,} {ms:>11.1f} {base_ms:>12.1f} "
                      f"{ms / max(base_ms, 1e-3):>8.1f}  {','.join(reasons) or 'success'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

