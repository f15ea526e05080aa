"""Turn a played and adjudicated study into an episode corpus (JSON Lines; ``verifier.scoring._agreement``).

A study folder is what ``../shared/tools/agent_harness.py`` writes for one agent: ``config.json`` (the tasks
file and database it played on), ``questions.json`` (opaque question id -> task id) and ``traj/<QID>.json``
(the trajectory as played). Adjudications are JSON Lines written by blind reviewers, one object per case:
``{"case": "<agent folder>/<QID>", "outcome": "success"|"failure", "task": "valid"|"ambiguous"|"invalid",
"why": "..."}``. Two reviewers per case; where they disagree, ``--resolution FILE`` (the same format, from a
third reviewer) decides, and an unresolved disagreement is an error.

    python benchmarks/episodes_from_study.py --study STUDY --brief "terse, Python-heavy" \
        --reviews R1.jsonl R2.jsonl [--resolution R3.jsonl] --out corpus.jsonl

Episodes over the real MIMIC-IV demo are demo-derived data: keep them outside the repository, except a small
adjudicated extract committed under ``fixtures/episodes/demo_*/`` with the demo's ODbL attribution (a
``NOTICE.md`` and ``LICENSE-ODbL.txt`` beside it, as ``demo_c34`` and ``demo_c35`` have).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _reviews(paths: list[str], reviewer_names: list[str]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for path, name in zip(paths, reviewer_names):
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                d = json.loads(line)
                out.setdefault(d["case"], []).append({"reviewer": name, "outcome": d["outcome"],
                                                      "task": d.get("task"), "why": d.get("why", "")})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", required=True, help="an agent's study folder")
    ap.add_argument("--brief", required=True, help="the style the agent was briefed with")
    ap.add_argument("--reviews", nargs=2, required=True, help="two blind reviewers' JSONL files")
    ap.add_argument("--resolution", help="a third reviewer's JSONL for the disagreements")
    ap.add_argument("--out", required=True, help="corpus JSONL to append to")
    a = ap.parse_args(argv)
    study = Path(a.study)
    cfg = json.loads((study / "config.json").read_text())
    qmap = json.loads((study / "questions.json").read_text())
    tasks = {}
    with open(cfg["tasks"], encoding="utf-8") as fh:
        for line in fh:
            t = json.loads(line)
            if t["task_id"] in qmap.values():
                tasks[t["task_id"]] = t
    reviews = _reviews(a.reviews, ["R1", "R2"])
    third = _reviews([a.resolution], ["R3"]) if a.resolution else {}
    n = 0
    with open(a.out, "a", encoding="utf-8") as out:
        for qid, tid in sorted(qmap.items()):
            tp = study / "traj" / f"{qid}.json"
            if not tp.exists():
                continue
            case = f"{study.name}/{qid}"
            revs = reviews.get(case, [])
            if len(revs) != 2:
                sys.exit(f"{case}: expected two reviews, found {len(revs)}")
            outcomes = {r["outcome"] for r in revs}
            validity = {r["task"] for r in revs}
            if len(outcomes) == 1 and len(validity) == 1:
                outcome, valid, resolution = revs[0]["outcome"], revs[0]["task"], "agreed"
            elif case in third:
                outcome, valid, resolution = third[case][0]["outcome"], third[case][0]["task"], "third reviewer"
                revs = revs + third[case]
            else:
                sys.exit(f"{case}: the reviewers disagree and no --resolution decides it")
            ep = {"episode_id": case, "agent": study.name, "brief": a.brief, "task": tasks[tid],
                  "trajectory": json.loads(tp.read_text()),
                  "adjudication": {"outcome": outcome, "task_validity": valid, "resolution": resolution,
                                   "reviews": revs}}
            out.write(json.dumps(ep, ensure_ascii=False, separators=(",", ":")) + "\n")
            n += 1
    print(f"{n} episodes from {study} -> {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
