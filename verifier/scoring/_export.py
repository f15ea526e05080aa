"""Training-data export: successful trajectories for SFT, success/failure pairs for DPO.

Issue 7 item 6. Trajectories become the chat records TRL's ``SFTTrainer`` and
``DPOTrainer`` read (``verifier.scoring._chat_format``: messages with dict tool-call
arguments, tool messages with ``name``, a ``tools`` column). The task's ``reference``
(SQL, answer, unmet requirement, witness) is never written; only ``task_id``,
``condition`` and the trajectory's id travel as metadata.

Verdicts are matched to trajectories by ``trajectory_id``; every paired
verdict is first checked against its trajectory (``pairing_mismatch``:
task, condition, parsed Answer, cited steps, evidence queries), so another
agent's verdicts under the same ids are refused instead of exported.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal, Mapping

from ..contract import Step, Task, Trajectory
from ._chat_format import completion_messages, dpo_record, prompt_messages, sft_record  # noqa: F401 - re-exported

Kind = Literal["sft", "dpo"]


# ----------------------------------------------------------------- pairing check
_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.casefold()))


def _answer_words(answer: str) -> set[str]:
    """Words of a recorded Answer; a JSON Answer (written with ``\\u`` escapes) is re-read first."""
    try:
        value = json.loads(answer)
    except ValueError:
        return _words(answer)
    return _words(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def _parse_mismatch(traj: Trajectory, verdict: Mapping[str, Any], recorded: Mapping[str, Any]) -> str | None:
    """Compare ``details.parse`` (and ``abstained``) with the trajectory's own final response."""
    from ..parse import parse

    answer = recorded.get("answer")
    if not isinstance(answer, str):
        return None
    parsed = parse(traj.final_response)
    abstained = verdict.get("abstained")
    if isinstance(abstained, bool) and abstained != parsed.abstained:
        return (f"it records abstained={abstained} with the Answer {answer[:80]!r}, the trajectory's final response "
                f"answers {parsed.answer_text[:80]!r}")
    cites = recorded.get("citations", []) if verdict.get("condition") == "noise" or "citations" in recorded else None
    if parsed.answer_text[:500] == answer and (cites is None or cites == parsed.citations):
        return None
    # Not what this version's parser reads: still accepted when the Answer's words and the cited
    # step numbers are all in the final response (a verdict written by another parser version).
    words = _words(traj.final_response)
    if _answer_words(answer) <= words and all(str(c) in words for c in (cites or [])):
        return None
    return (f"it records the Answer {answer[:80]!r}" + (f" citing steps {cites}" if cites else "")
            + f", the trajectory's final response answers {parsed.answer_text[:80]!r}")


#: ``recorded_output`` texts of ``evidence.output_matches`` that state the row count the step showed.
_SAME_ROWS = re.compile(r"same (\d+) rows|recorded (\d+) rows differ from the \d+ re-executed rows")
_FOOTER_AT_END = re.compile(r"\((\d+) rows?(?:, showing first \d+)?\)\s*(?:\n\[only the first \d+ rows were fetched\]\s*)?\Z")


def _rows_shown(step: Step, query: Mapping[str, Any]) -> tuple[int, int] | None:
    """``(rows per verdict, rows per step)`` when the verdict's output comparison contradicts the step, else ``None``.

    Same SQL, different recorded output (an honest step and a fabricated one):
    ``recorded output equals the re-rendered result`` means the step's output
    ends with the re-executed result's footer ``(base_rows rows)``;
    ``same N rows`` / ``recorded N rows differ ...`` count the step's structured rows.
    """
    said = query.get("recorded_output")
    if not isinstance(said, str):
        return None
    m = _SAME_ROWS.fullmatch(said)
    if m is not None and step.rows is not None:
        n = int(m[1] or m[2])
        return None if n == len(step.rows) else (n, len(step.rows))
    base = query.get("base_rows")
    if said == "recorded output equals the re-rendered result" and isinstance(base, int):
        footer = _FOOTER_AT_END.search(step.output or "")
        if footer is not None and int(footer[1]) != base:
            return base, int(footer[1])
    return None


def _evidence_mismatch(traj: Trajectory, evidence: Mapping[str, Any]) -> str | None:
    """Compare ``details.evidence`` (cited steps, queries and their SQL) with the trajectory's steps."""
    n = len(traj.steps)
    cited, invalid = evidence.get("cited") or [], evidence.get("invalid_citations") or []
    if any(not (isinstance(c, int) and 1 <= c <= n) for c in cited) or any(isinstance(c, int) and 1 <= c <= n for c in invalid):
        return f"its evidence cites steps {cited} (invalid: {invalid}), the trajectory has {n} step(s)"
    for q in evidence.get("queries") or []:
        if not isinstance(q, Mapping):
            continue
        step_no, origin, sql = q.get("step"), q.get("origin"), q.get("sql")
        if not isinstance(step_no, int) or not 1 <= step_no <= n:
            return f"its evidence reads step {step_no!r}, the trajectory has {n} step(s)"
        step = traj.steps[step_no - 1]
        source: str | None = None
        if origin == "sql":
            source = step.code if step.kind == "sql" else None
        elif origin == "python_recorded":
            pos = q.get("position")
            source = step.sql[pos] if step.kind == "python" and isinstance(pos, int) and 0 <= pos < len(step.sql) else None
        elif origin == "python_ast":
            source = step.code if step.kind == "python" else None
        else:
            continue
        if source is None or (isinstance(sql, str) and not " ".join(source.split()).startswith(" ".join(sql.split()))):
            return f"its evidence query {str(sql)[:80]!r} ({origin}) is not what step {step_no} ({step.kind}) ran"
        shown = _rows_shown(step, q)
        if shown is not None:
            return f"its evidence says step {step_no} showed {shown[0]} row(s), the trajectory's step shows {shown[1]}"
    # Every SQL step, and every SQL a Python step recorded, is an evidence query when the
    # response cites no step, else those of the cited steps (``evidence.extract_evidence``).
    keep = set(cited) if cited or invalid else set(range(1, n + 1))
    seen = {(q.get("step"), q.get("position")) for q in evidence.get("queries") or [] if isinstance(q, Mapping)}
    for step in traj.steps:
        expected = 1 if step.kind == "sql" else len(step.sql)
        missing = [p for p in range(expected) if (step.index, p) not in seen]
        if step.index in keep and missing:
            return f"its evidence has no query of step {step.index}, which the trajectory ran and " + (
                "cites" if cited else "does not exclude by citing other steps")
    return None


def pairing_mismatch(traj: Trajectory, verdict: Mapping[str, Any], task: Task | None = None) -> str | None:
    """Why ``verdict`` is not the verdict of ``traj``, or ``None`` when nothing it records contradicts it.

    Verdicts are matched to trajectories by ``trajectory_id`` only, and every
    reference agent's rollouts are ``<task_id>#<sample>``: another agent's
    verdicts pair silently. This compares what a verdict (``Verdict``
    JSON, ``ehr-verifier score`` output) already records with the trajectory,
    cheaply (one ``verifier.parse.parse`` of the final response, no SQL run):

    * ``task_id`` equals the trajectory's; ``condition`` equals ``task``'s;
    * ``details.parse``: the Answer (first 500 characters), the ``abstained``
      flag and (Noise) the cited steps equal those parsed from the
      trajectory's final response; a verdict from another parser version
      still passes when its Answer's words and cited step numbers all occur
      in the final response, but a different ``abstained`` never does;
    * ``details.evidence``: cited step numbers are steps of the trajectory
      and invalid ones are not; each evidence query's step exists, has the
      kind of its origin, and ran that SQL (whitespace-normalised prefix,
      the verdict keeps 2000 characters); every query the trajectory's
      (cited) steps ran has a record; a row count the output comparison
      states (``same N rows``, ``recorded N rows differ ...``, or the
      re-rendered footer ``(base_rows rows)``) is the step's own, so an
      honest step and a fabricated one running the same SQL are told apart.

    Fields a record lacks (hand-written verdicts, ``TIMEOUT`` or
    ``VERIFIER_ERROR`` verdicts without parse details) are not checked, so a
    correct pairing is never refused.

    Args:
        traj: the trajectory.
        verdict: its verdict record (a dict in ``Verdict`` JSON form).
        task: the trajectory's task, for the ``condition`` check (optional).

    Returns:
        A short explanation of the first contradiction, or ``None``.
    """
    vt = verdict.get("task_id")
    if vt is not None and vt != traj.task_id:
        return f"its task_id is {vt!r}, the trajectory's is {traj.task_id!r}"
    vc = verdict.get("condition")
    if task is not None and vc is not None and vc != task.condition:
        return f"its condition is {vc!r}, the task's is {task.condition!r}"
    details = verdict.get("details")
    if not isinstance(details, Mapping):
        return None
    parse_d, evidence = details.get("parse"), details.get("evidence")
    why = _parse_mismatch(traj, verdict, parse_d) if isinstance(parse_d, Mapping) else None
    if why is None and isinstance(evidence, Mapping):
        why = _evidence_mismatch(traj, evidence)
    return why


def check_pairing(traj: Trajectory, verdict: Mapping[str, Any], task: Task | None = None, *, where: str = "") -> None:
    """Refuse a verdict that does not belong to ``traj`` (see ``pairing_mismatch``).

    Args:
        traj, verdict, task: as ``pairing_mismatch``.
        where: prefix of the error's field (e.g. ``"<path>:line 3: "``).

    Raises:
        InputError: field ``<where>trajectory_id``, value the trajectory id,
            message saying the verdict does not belong to this trajectory and why.
    """
    from ..contract import InputError

    why = pairing_mismatch(traj, verdict, task)
    if why is not None:
        raise InputError(
            f"{where}trajectory_id", traj.trajectory_id,
            f"the verdict with this trajectory_id does not belong to this trajectory: {why}. Verdicts are matched by "
            "trajectory_id and every agent's rollouts are <task_id>#<sample>: export each trajectories file with the "
            "verdicts scored from that same file",
        )


def export_records(
    kind: Kind,
    trajectories: Iterable[Trajectory],
    verdicts: Mapping[str, Mapping[str, Any]],
    tasks: Mapping[str, Task],
    *,
    schema: str = "",
    max_pairs_per_task: int | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield SFT examples or DPO pairs.

    Args:
        kind: ``"sft"``: every trajectory whose verdict succeeded, in input
            order. ``"dpo"``: per task (in order of first appearance), the
            i-th successful trajectory paired with the i-th failed one, in
            input order, up to ``max_pairs_per_task``.
        trajectories: the trajectories.
        verdicts: ``{trajectory_id: verdict record}`` (``success`` is read);
            a trajectory without a verdict, or whose task is unknown, is skipped.
            Every verdict paired with a trajectory is checked with
            ``check_pairing`` first.
        tasks: ``{task_id: Task}``.
        schema: schema description for the opening message.
        max_pairs_per_task: cap on DPO pairs per task (``None``: no cap; else >= 1).

    Raises:
        ValueError: unknown ``kind`` (raised here, before iteration).
        InputError: ``max_pairs_per_task`` < 1 (raised here); while iterating,
            a verdict that does not belong to its trajectory (field
            ``trajectory N: trajectory_id``, N counting trajectories from 1).
    """
    if kind not in ("sft", "dpo"):
        raise ValueError(f"kind must be 'sft' or 'dpo', got {kind!r}")
    _check_max_pairs(max_pairs_per_task)
    located = ((f"trajectory {n}: ", t) for n, t in enumerate(trajectories, start=1))
    return _records(kind, located, verdicts, tasks, schema, max_pairs_per_task)


def _check_max_pairs(value: int | None) -> None:
    from ..contract import InputError

    if value is not None and value < 1:
        raise InputError("max_pairs_per_task", value, "must be >= 1")


def _records(
    kind: Kind,
    located: Iterable[tuple[str, Trajectory]],
    verdicts: Mapping[str, Mapping[str, Any]],
    tasks: Mapping[str, Task],
    schema: str,
    max_pairs_per_task: int | None,
    skipped: list[str] | None = None,
) -> Iterator[dict[str, Any]]:
    """``export_records`` over ``(where, trajectory)`` items; ``where`` prefixes pairing errors.

    ``skipped`` (when given) receives ``"<where>why"`` for each trajectory of an unknown task.
    """
    wins: dict[str, list[Trajectory]] = defaultdict(list)
    losses: dict[str, list[Trajectory]] = defaultdict(list)
    order: list[str] = []
    for where, traj in located:
        v = verdicts.get(traj.trajectory_id)
        task = tasks.get(traj.task_id)
        if task is None and skipped is not None:
            skipped.append(f"{where}task_id {traj.task_id!r} is not in the tasks file")
        if v is None or task is None or "error" in v:
            continue
        check_pairing(traj, v, task, where=where)
        if kind == "sft":
            if v.get("success"):
                yield sft_record(traj, task, schema)
            continue
        if traj.task_id not in wins and traj.task_id not in losses:
            order.append(traj.task_id)
        (wins if v.get("success") else losses)[traj.task_id].append(traj)
    for task_id in order:
        pairs = list(zip(wins[task_id], losses[task_id]))
        for chosen, rejected in pairs[: max_pairs_per_task] if max_pairs_per_task is not None else pairs:
            yield dpo_record(chosen, rejected, tasks[task_id], schema)


def _raw_lines(path: str | Path) -> Iterator[tuple[int, bytes]]:
    """``(line number from 1, bytes)`` of a JSONL file, as ``ehr-verifier score`` numbers them.

    Lines end at ``\n`` only; a UTF-8 byte-order mark at the start of the file is
    dropped (``verifier.scoring.iter_lines``, the reader ``score`` uses).
    """
    from ._jsonl import iter_lines

    yield from enumerate(iter_lines(path), start=1)


def _decode(raw: bytes, field: str) -> str:
    """``raw`` as UTF-8 text; else ``InputError(field, the line with bad bytes replaced, ...)``."""
    from ..contract import InputError

    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(field, raw.decode("utf-8", "replace").strip()[:200],
                         f"not valid UTF-8 (byte {exc.start} of the line: {exc.reason}); save the file as UTF-8") from None


def export_file(
    kind: Kind,
    trajectories_path: str | Path,
    tasks: Mapping[str, Task],
    out: str | Path,
    *,
    verdicts: Mapping[str, Mapping[str, Any]],
    schema: str = "",
    max_pairs_per_task: int | None = None,
    skipped: list[str] | None = None,
) -> int:
    """Write ``export_records`` to ``out`` as JSONL; returns the number of lines.

    Lines of ``trajectories_path`` that are not valid trajectories are skipped
    (they have error records, not verdicts), including lines that are not
    UTF-8 unless a verdict would pair with them. A UTF-8 byte-order mark at
    the start of the file is ignored; lines end at ``\n`` and are numbered
    as ``ehr-verifier score`` numbers them. ``out`` is replaced only when the
    export succeeds.

    Args:
        kind: ``"sft"`` or ``"dpo"`` (see ``export_records``).
        trajectories_path: trajectories JSONL (the file that was scored).
        tasks: ``{task_id: Task}``.
        out: JSONL file to write.
        verdicts: ``{trajectory_id: verdict record}`` (``verdict_index``).
        schema: schema description for the opening message.
        max_pairs_per_task: DPO cap per task (``None``: no cap; else >= 1).
        skipped: when given, receives one ``"<path>:line N: why"`` per line that could not be used
            (not UTF-8, not a valid trajectory, or a task_id not in ``tasks``), so callers can report them.

    Raises:
        InputError: ``max_pairs_per_task`` < 1 (field ``max_pairs_per_task``,
            before anything is read); two lines share a ``trajectory_id``
            (e.g. two agents' rollouts concatenated, both ``<task_id>#0``):
            verdicts are matched by id, so the export would pair the wrong
            verdicts (field ``<path>:line N: trajectory_id``, value the id);
            a verdict does not belong to the trajectory it pairs with
            (``check_pairing``; same field); a line that is not UTF-8 would
            pair with a verdict (field ``<path>:line N``).
        ValueError: unknown ``kind``.
        OSError: ``trajectories_path`` unreadable or ``out`` not writable.
    """
    from ..contract import InputError, validate

    def trajs() -> Iterator[tuple[str, Trajectory]]:
        first_line: dict[str, int] = {}
        for n, raw in _raw_lines(trajectories_path):
            try:
                line = _decode(raw, f"{trajectories_path}:line {n}")
            except InputError as exc:
                tid = _paired_id(raw, verdicts)
                if tid is not None:
                    raise InputError(exc.field, exc.value, f"{exc.message}; the verdict of trajectory_id {tid!r} "
                                     "pairs with this line, so it cannot be skipped") from None
                if skipped is not None:
                    skipped.append(f"{trajectories_path}:line {n}: not UTF-8")
                continue
            if not line.strip():
                continue
            try:
                traj = validate(Trajectory, line)
            except InputError as exc:
                if skipped is not None:
                    skipped.append(f"{trajectories_path}:line {n}: not a trajectory ({exc.message[:120]})")
                continue
            if traj.trajectory_id in first_line:
                raise InputError(
                    f"{trajectories_path}:line {n}: trajectory_id", traj.trajectory_id,
                    f"duplicated trajectory_id (first at line {first_line[traj.trajectory_id]}); verdicts are "
                    "matched by id, so give every trajectory a unique id (roll each agent out with its own "
                    "`ehr-verifier rollout --id-prefix AGENT-`)",
                )
            first_line[traj.trajectory_id] = n
            yield f"{trajectories_path}:line {n}: ", traj

    if kind not in ("sft", "dpo"):
        raise ValueError(f"kind must be 'sft' or 'dpo', got {kind!r}")
    _check_max_pairs(max_pairs_per_task)
    out = Path(out)
    tmp = out.with_name(f".{out.name}.tmp")
    n = 0
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            for rec in _records(kind, trajs(), verdicts, tasks, schema, max_pairs_per_task, skipped):
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
                n += 1
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return n


def _paired_id(raw: bytes, verdicts: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The trajectory_id of a non-UTF-8 line (read with bad bytes replaced) when a verdict pairs with it, else ``None``."""
    from ..contract import InputError, validate

    try:
        tid = validate(Trajectory, raw.decode("utf-8", "replace")).trajectory_id
    except InputError:
        return None
    v = verdicts.get(tid)
    return tid if v is not None and "error" not in v else None


def read_verdicts(path: str | Path) -> Iterator[dict[str, Any]]:
    """The records of a ``verdicts.jsonl`` (``ehr-verifier score`` output), one per non-blank line.

    A UTF-8 byte-order mark at the start of the file is ignored; lines end at ``\n``.

    Args:
        path: the verdicts file.

    Yields:
        Each line's JSON object (verdict or error record), in file order.

    Raises:
        InputError: a line is not UTF-8, or not a JSON object (field
            ``<path>:line N``, value the line's first 200 characters); a
            truncated, hand-edited or re-encoded file fails here with its
            line, not deep inside the export.
        OSError: the file cannot be read.
    """
    from ..contract import InputError

    for n, raw in _raw_lines(path):
        line = _decode(raw, f"{path}:line {n}")
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:line {n}", line.strip()[:200], f"not valid JSON ({exc.msg})") from None
        if not isinstance(record, dict):
            raise InputError(f"{path}:line {n}", line.strip()[:200], "expected a verdict or error record (a JSON object)")
        yield record


def verdict_index(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{trajectory_id: verdict record}`` from verdict/error records (error records skipped).

    Raises:
        InputError: two verdicts share a ``trajectory_id`` (field
            ``trajectory N: trajectory_id``, N counting records from 1, i.e. the
            line of ``verdicts.jsonl`` and of the scored trajectories file; the
            message suggests ``rollout --id-prefix``).
    """
    from ..contract import InputError

    index: dict[str, dict[str, Any]] = {}
    first: dict[str, int] = {}
    for n, r in enumerate(records, start=1):
        if "error" in r or r.get("trajectory_id") is None:
            continue
        tid = str(r["trajectory_id"])
        if tid in index:
            raise InputError(f"trajectory {n}: trajectory_id", tid,
                             f"duplicated trajectory_id (first at trajectory {first[tid]} of the scored file); verdicts "
                             "are matched by id, so give every trajectory a unique id (roll each agent out with its "
                             "own `ehr-verifier rollout --id-prefix AGENT-`)")
        index[tid], first[tid] = dict(r), n
    return index
