"""``verify(trajectory, task, config=None) -> Verdict``: the public verb.

Clean tasks (ARCHITECTURE.md section 4): parse the final response; an unparseable
one fails with ``UNPARSEABLE_RESPONSE``; a NULL Answer fails with
``ABSTAINED_ON_CLEAN``; otherwise the Answer is matched with the reference
under its ``answer_policy`` (``verifier.match``), or with one of its tied
``alternatives`` (rows tied at the reference query's ``LIMIT``). Several answer
tags with differing contents (``ParsedResponse.answers``) match only when every
one matches the same target; otherwise they hedge: ``WRONG_VALUE``, "ambiguous answer".

Noise tasks: delegated to ``verifier.abstention.verify_noise(trajectory, task,
parsed, config) -> (reasons, details)`` (imported lazily), which runs the Noise
passes in the order of ARCHITECTURE.md section 4.

Layer (ARCHITECTURE.md section 9): imports ``verifier.abstention``, ``verifier.match``,
``verifier.parse``, ``verifier.contract`` and (lazily, for ``Task.db_fingerprint``)
``verifier.database``; the environment, scoring and adapters import it.

The database (before both): a task recording the fingerprint of the database it was built
on (``Task.db_fingerprint``) is checked against the configured database
(``VerifyConfig.db_path`` / ``$EHR_VERIFIER_DB``, when one is set and exists); another
database raises ``InputError`` naming ``VerifyConfig.db_path`` and both fingerprints: scored
there, honest abstentions looked fabricated. After the first call per database file and
process the check is a dictionary lookup (the file is looked at again at most once a second).

Bounds (before both): a trajectory beyond a cap of ``config.limits`` (final response,
bracket nesting, steps, query, code and output sizes; checked before parsing) or whose
parsed Answer is beyond the Answer cap fails with ``INPUT_TOO_LARGE`` alone, the cap named
in ``details["input_too_large"]`` (``verifier.contract._limits``); under the caps parsing
and matching are linear in the input. A leading reasoning block (``<think>...</think>``) is set
aside first (``verifier.contract._scratchpad``, issue 32): held to ``max_reasoning_chars``, never
read as an Answer or a disclosure, its length in ``details["reasoning_set_aside"]``; on Clean
tasks HTML comments are dropped before parsing (they never hold the Answer).

Guarantees: never raises on a bad response; an internal bug becomes
``VERIFIER_ERROR`` with the message in ``details["error"]``. No signals, no
global mutable state beyond read-only caches, so the verdict is the same in
any thread or process. Bad *inputs* (a dict that is not a Task/Trajectory)
raise ``InputError``.
"""

from __future__ import annotations

import os
import traceback
from typing import Any

from pydantic import ValidationError

from .contract import (CountAnswer, DatetimeAnswer, InputError, NumberAnswer, QuantityAnswer, ReasonCode, RecordsAnswer,
                       SourceDataError, Task, TextAnswer, Trajectory, Verdict, VerifyConfig)
from .match.commit import ambiguous
from .match.dispatch import match_answer
from .match.lead import reference_columns
from .match.fhir import fhir_value
from .match.emphasis import emphasised, emphasised_value, without_rejected
from .match.language import detect, to_english
from .match.record_context import field_of_record
from .parse import ParsedResponse, is_null_answer, parse
from .contract._scratchpad import set_aside, strip_comments

_DEFAULT_CONFIG = VerifyConfig()
#: Reference types whose value an emphasised span may be (a text value has its own sentence rule; a result
#: set of one row too, its record then being the span: ``_emphasis_reads``).
_EMPHASIS_TYPES = (CountAnswer, DatetimeAnswer, NumberAnswer, QuantityAnswer)
_new_verdict = object.__new__
_setattr = object.__setattr__
_FIELDS_SET = frozenset(Verdict.model_fields)


def _version() -> str:
    from .contract import __version__

    return __version__


_VERSION = _version()


def _coerce(obj: Any, model: type, name: str) -> Any:
    if isinstance(obj, model):
        return obj
    if isinstance(obj, dict):
        try:
            return model.model_validate(obj)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = name + "." + ".".join(str(p) for p in err.get("loc", ()))
            raise InputError(field, err.get("input"), err.get("msg", "invalid")) from exc
    raise InputError(name, type(obj).__name__, f"expected a {model.__name__} or a dict")


def _verdict(task: Task, traj: Trajectory, abstained: bool, reasons: list[ReasonCode], details: dict) -> Verdict:
    ok = not reasons
    # Every field is built here with the right type, so validation is skipped
    # (what model_construct does, minus its per-call default handling): this
    # keeps the hot path fast (bench_verify_clean.py). tests/test_verify_clean.py
    # checks the result equals a validated Verdict and round-trips JSON/pickle.
    v = _new_verdict(Verdict)
    _setattr(v, "__dict__", {
        "task_id": task.task_id,
        "trajectory_id": traj.trajectory_id,
        "success": ok,
        "score": 1.0 if ok else 0.0,
        "condition": task.condition,
        "abstained": abstained,
        "reasons": reasons,
        "details": details,
        "verifier_version": _VERSION,
    })
    _setattr(v, "__pydantic_fields_set__", _FIELDS_SET)
    _setattr(v, "__pydantic_extra__", None)
    _setattr(v, "__pydantic_private__", None)
    return v


def _parse_details(parsed: ParsedResponse, citations: bool = False) -> dict[str, Any]:
    d: dict[str, Any] = {"format": parsed.format, "answer": parsed.answer_text[:500]}
    if citations:  # Noise only: Clean scoring does not use them (saves the scan on the hot path)
        cited = parsed.citations
        if cited:
            d["citations"] = cited
    if parsed.error:
        d["error"] = parsed.error
    return d


def _too_large(task: Task, traj: Trajectory, over: dict[str, Any], parsed: ParsedResponse | None = None) -> Verdict:
    details: dict[str, Any] = {"input_too_large": over}
    if parsed is not None:
        details["parse"] = {"format": parsed.format, "answer": parsed.answer_text[:200]}
    return _verdict(task, traj, False, [ReasonCode.INPUT_TOO_LARGE], details)


def _visible(traj: Trajectory, cfg: VerifyConfig) -> tuple[Trajectory, int, dict[str, Any] | None]:
    """The trajectory with its final response's leading reasoning block set aside
    (``verifier.contract._scratchpad``), the characters set aside, and the cap that block exceeds
    (``max_reasoning_chars``; ``None`` when it fits). A response longer than both caps
    together is refused before it is scanned."""
    text = traj.final_response
    limits = cfg.limits
    if len(text) > limits.max_response_chars + limits.max_reasoning_chars:
        return traj, 0, limits.check_trajectory(traj)
    pad = set_aside(text)
    if not pad.reasoning_chars:
        return traj, 0, None
    return traj.model_copy(update={"final_response": pad.visible}), pad.reasoning_chars, limits.check_reasoning(pad.reasoning_chars)


def _verify_clean(task: Task, traj: Trajectory, parsed: ParsedResponse) -> Verdict:
    pd = _parse_details(parsed)
    if parsed.error:
        return _verdict(task, traj, False, [ReasonCode.UNPARSEABLE_RESPONSE], {"parse": pd})
    if parsed.abstained:
        return _verdict(task, traj, True, [ReasonCode.ABSTAINED_ON_CLEAN], {"parse": pd})
    if parsed.answers:
        return _verify_several(task, traj, parsed, pd)
    ref = task.reference
    columns = reference_columns(ref.sql) if ref.sql else ()
    value = fhir_value(parsed.answer_text, parsed.answer_json)
    if value is not None:  # a FHIR resource states its one value[x] (verifier.match.fhir)
        pd.update(committed=value[:200], committed_by="the FHIR resource's value[x] element")
        parsed = parsed._replace(answer_text=value, answer_json=None, abstained=is_null_answer(value))
        if parsed.abstained:
            return _verdict(task, traj, True, [ReasonCode.ABSTAINED_ON_CLEAN], {"parse": pd})
    elif parsed.format in ("tags", "sections") and _emphasis_reads(ref.answer):
        value = emphasised(parsed.answer_text, task.question)
        if value is not None:  # the Answer's one reading (verifier.match.emphasis rule 1)
            pd.update(committed=value[:200], committed_by="the Answer's one emphasised span is its value")
            parsed = parsed._replace(answer_text=value, abstained=is_null_answer(value))
            if parsed.abstained:
                return _verdict(task, traj, True, [ReasonCode.ABSTAINED_ON_CLEAN], {"parse": pd})
    lang = detect(f"{parsed.answer_text}\n{parsed.reasoning}") if not isinstance(ref.answer, TextAnswer) else None
    if lang is not None:  # read in the rules' words, hedges included (verifier.match.language); values as written
        parsed = parsed._replace(answer_text=to_english(parsed.answer_text, lang))
        pd["language"] = lang.code
    res = match_answer(parsed.answer_text, ref.answer, ref.answer_policy, parsed.answer_json, columns,
                       task.question)
    if not res.ok and ref.alternatives:  # rows tied at the reference query's LIMIT are just as correct
        for i, alt in enumerate(ref.alternatives, start=1):
            got = match_answer(parsed.answer_text, alt, ref.answer_policy, parsed.answer_json, columns,
                               task.question)
            if got.ok:
                return _verdict(task, traj, False, [], {"parse": pd, "match": {**got.details, "tied_alternative": i}})
    if not res.ok and "'not'" in str(res.details.get("why", "")):  # only "not" kept it from committing
        rest = without_rejected(parsed.answer_text)
        if rest is not None and not is_null_answer(rest):
            got = match_answer(rest, ref.answer, ref.answer_policy, None, columns, task.question)
            if got.ok:
                return _verdict(task, traj, False, [], {"parse": {**pd, "committed": rest[:200],
                                                                  "committed_by": "values the Answer rejects with 'not' set aside"},
                                                       "match": got.details})
    if not res.ok and isinstance(ref.answer, TextAnswer):  # a detail the agent's own records show as another field
        how = field_of_record(parsed.answer_text, ref.answer.value, traj.steps, ref.answer_policy.text_threshold,
                              task.question)
        if how is not None:
            return _verdict(task, traj, False, [], {"parse": pd, "match": {**res.details, "how": how}})
    return _verdict(task, traj, False, list(res.reasons), {"parse": pd, "match": res.details})


def _emphasis_reads(answer: Any) -> bool:
    """Whether the Answer's one emphasised span (``verifier.match.emphasis`` rule 1) is its reading for a
    reference ``answer``: a number, count, quantity or datetime, or a result set of one row, whose one
    record a sentence states in its span ("the APR DRG billed was **201 – CARDIAC ARRHYTHMIA ...**, with
    severity of illness 4 ...", blind corpus c43); the rest of the sentence is then context."""
    return isinstance(answer, _EMPHASIS_TYPES) or (isinstance(answer, RecordsAnswer) and len(answer.rows) == 1)


def _verify_several(task: Task, traj: Trajectory, parsed: ParsedResponse, pd: dict[str, Any]) -> Verdict:
    """Several answer tags with differing contents (``parsed.answers``): they commit to one
    answer only when every one matches the same target (the reference, or one tied
    alternative); otherwise the response hedges between them: ``WRONG_VALUE``, "ambiguous
    answer" (ARCHITECTURE.md section 4, step 3)."""
    ref = task.reference
    pd["answers"] = [a[:200] for a in parsed.answers[:8]]
    for i, target in enumerate((ref.answer, *(ref.alternatives or ())), start=0):
        res = None
        for a in parsed.answers:  # stops at the first tag that misses (a hedge costs one or two matches)
            res = match_answer(a, target, ref.answer_policy)
            if not res.ok:
                break
        if res is not None and res.ok:
            return _verdict(task, traj, False, [], {"parse": pd, "match": {
                **res.details, **({"tied_alternative": i} if i else {})}})
    why = ambiguous(f"{len(parsed.answers)} answer tags with differing contents")
    return _verdict(task, traj, False, [ReasonCode.WRONG_VALUE], {"parse": pd, "match": {"why": why}})


def _verify_noise(task: Task, traj: Trajectory, parsed: ParsedResponse, config: VerifyConfig) -> Verdict:
    committed = None
    if parsed.format in ("tags", "sections") and not parsed.answers:
        value = emphasised(parsed.answer_text, task.question)  # "... so the answer is **NULL**." (blind corpus c36)
        if value is not None:  # the Answer's one reading (verifier.match.emphasis rule 1)
            committed = "the Answer's one emphasised span is its value"
            parsed = parsed._replace(answer_text=value, abstained=is_null_answer(value))
        elif parsed.abstained and emphasised_value(parsed.answer_text) is not None:
            committed = "an emphasised value beside the NULL: not a committed NULL"  # fresh adversary adv8
            parsed = parsed._replace(abstained=False)
    lang = detect(f"{parsed.answer_text}\n{parsed.reasoning}")
    if lang is not None:  # the Reasoning read in the rules' words (verifier.match.language)
        parsed = parsed._replace(reasoning=to_english(parsed.reasoning, lang))
    pd = _parse_details(parsed, citations=True)
    if committed is not None:
        pd["committed_by"] = committed[1]
    if lang is not None:
        pd["language"] = lang.code
    if parsed.error:
        return _verdict(task, traj, False, [ReasonCode.UNPARSEABLE_RESPONSE], {"parse": pd})
    try:
        from .abstention import verify_noise
    except ImportError:
        verify_noise = None
    if verify_noise is None:
        if not parsed.abstained:
            return _verdict(task, traj, False, [ReasonCode.ANSWERED_NOISE], {"parse": pd})
        return _verdict(task, traj, True, [ReasonCode.VERIFIER_ERROR],
                        {"parse": pd, "error": "verifier.abstention is not available; abstention not checked"})
    reasons, details = verify_noise(traj, task, parsed, config)
    out = {"parse": pd}
    out.update(details or {})
    return _verdict(task, traj, parsed.abstained, list(reasons), out)


def _log_warning(verdict: Verdict, traj: Trajectory) -> Verdict:
    """A log read by ``verifier.logs.read_log`` from which no step could be read: its warning
    goes into ``details["log"]`` (both conditions), and on a Noise task ``NO_STEPS_READ``
    replaces ``NO_EVIDENCE`` (the reader failed, not necessarily the agent; the verdict
    still fails)."""
    log = traj.metadata.get("log")
    if not isinstance(log, dict) or not log.get("warning"):
        return verdict
    verdict.details["log"] = {k: log[k] for k in ("format", "tool_calls", "steps_read", "unread", "warning") if k in log}
    if not traj.steps and ReasonCode.NO_EVIDENCE in verdict.reasons:
        verdict.reasons[:] = [ReasonCode.NO_STEPS_READ if r is ReasonCode.NO_EVIDENCE else r for r in verdict.reasons]
    return verdict


_fingerprint_of: Any = None  # verifier.database.recent_fingerprint, imported on first use


def _check_database(task: Task, config: VerifyConfig) -> None:
    """Raise ``InputError`` when ``task`` was built on another database than ``config``'s.

    Skipped when no database is configured; a configured file that does not exist is left
    to the Noise path, which reports it (a Clean task needs no database). After the first
    call per database and process: a dictionary lookup (``recent_fingerprint``).
    """
    global _fingerprint_of
    db = config.db_path
    if db is None:
        path = config.resolved_db_path()  # $EHR_VERIFIER_DB
        if path is None:
            return
        db = str(path)
    if _fingerprint_of is None:
        from .database import recent_fingerprint

        _fingerprint_of = recent_fingerprint
    try:
        actual = _fingerprint_of(db)
    except SourceDataError as exc:
        if os.path.isfile(db):  # exists but cannot be read: a configuration error as well
            raise InputError("VerifyConfig.db_path", db, f"cannot read the database to check Task.db_fingerprint: {exc.message}") from exc
        return
    if actual != task.db_fingerprint:
        from .database import mismatch_message

        raise InputError("VerifyConfig.db_path", db, mismatch_message(task.db_fingerprint or "", actual, db))


def verify(trajectory: Trajectory | dict, task: Task | dict, config: VerifyConfig | None = None) -> Verdict:
    """Decide whether ``trajectory`` succeeded on ``task``.

    Args:
        trajectory: a :class:`Trajectory` (or a dict in its JSON form).
        task: a :class:`Task` (or a dict).
        config: verification settings (database for Noise evidence, limits,
            judge); default ``VerifyConfig()``.

    Returns:
        A :class:`Verdict` (``reasons`` empty on success; ``details`` say what
        was compared with what; ``verifier_version`` = ``verifier.__version__``).

    Raises:
        InputError: ``trajectory`` or ``task`` is not a valid object/dict, the
        trajectory answers another task or was played on another database than the task's
        (``trajectory.metadata["db_fingerprint"]``, recorded by ``EHREnv``, differs from
        ``Task.db_fingerprint``: a task id shared by two task files is not scored against the
        wrong reference), (Noise) no database is configured, or the task
        records the fingerprint of another database than the configured one
        (``Task.db_fingerprint``; field ``VerifyConfig.db_path``, both fingerprints named).
        Never raised for a bad response: one beyond a cap of ``config.limits`` fails
        with ``INPUT_TOO_LARGE`` (``details["input_too_large"]`` names the cap). A
        trajectory read from a foreign log (``verifier.logs.read_log``) from which no step could be read gets the reader's
        warning in ``details["log"]`` and, on Noise, ``NO_STEPS_READ`` for ``NO_EVIDENCE``.
    """
    traj = trajectory if type(trajectory) is Trajectory else _coerce(trajectory, Trajectory, "trajectory")
    tsk = task if type(task) is Task else _coerce(task, Task, "task")
    if traj.task_id != tsk.task_id:
        raise InputError("trajectory.task_id", traj.task_id, f"does not match task.task_id {tsk.task_id!r}")
    cfg = config or _DEFAULT_CONFIG
    if tsk.db_fingerprint is not None:
        _check_database(tsk, cfg)  # the task against the configured database first, then the trajectory against the task
        played_on = traj.metadata.get("db_fingerprint") if traj.metadata else None
        if played_on is not None and played_on != tsk.db_fingerprint:
            raise InputError("trajectory.metadata.db_fingerprint", played_on,
                             f"the trajectory was played on another database than task {tsk.task_id!r} was built on "
                             f"(task db_fingerprint {tsk.db_fingerprint}): score it with the tasks of the database it was played on")
    try:
        traj, set_aside_chars, over = _visible(traj, cfg)
        if over is None:
            over = cfg.limits.check_trajectory(traj)
        if over is not None:
            return _too_large(tsk, traj, over)
        clean = tsk.condition == "clean"
        parsed = parse(strip_comments(traj.final_response) if clean else traj.final_response)
        over = cfg.limits.check_answer(parsed.answer_text, tsk.reference.answer)
        if over is not None:
            return _too_large(tsk, traj, over, parsed)
        if clean:
            verdict = _verify_clean(tsk, traj, parsed)
        else:
            verdict = _verify_noise(tsk, traj, parsed, cfg)
        if set_aside_chars:
            verdict.details["reasoning_set_aside"] = set_aside_chars
        return _log_warning(verdict, traj) if traj.metadata and "log" in traj.metadata else verdict
    except InputError:
        raise  # bad configuration (e.g. no database for Noise evidence), not a bad response
    except Exception as exc:  # an internal bug must not escape as an exception
        return _verdict(
            tsk, traj, False, [ReasonCode.VERIFIER_ERROR],
            {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc(limit=5)},
        )
