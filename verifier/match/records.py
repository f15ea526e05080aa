"""Records (result sets) compared by column name.

Columns are matched case-insensitively, ignoring spaces, underscores and
hyphens (``Admission ID`` = ``admission_id`` = ``AdmissionID``). The
submission must contain every required column (``answer_policy.
required_columns``, else all reference columns): otherwise
``MISSING_COLUMNS``. Extra submitted columns are ignored.

Cells are compared by the reference cell's type: ``None`` accepts an empty
cell or a NULL spelling; ``bool`` yes/no/true/false; ``int`` exactly;
``float`` under the numeric rule of ``verifier.match.numbers``; dates and
datetimes at the precision the reference has (a ``date`` at day precision, a
``datetime`` at seconds, where a written minute is enough when the reference
second is 0); ``str`` as text (normalisation, synonyms, fuzzy threshold).

A one-row reference also matches the row stated in prose
(``verifier.match.prose``: ``DRG 871 - SEPTICEMIA ...``, ``code=871, ...``).

An Answer stating an empty result (``extract.is_empty_answer``: ``[]``,
``[] (no prescriptions found)``, ``no rows``) has zero rows: it matches an
empty reference and misses every row of another (issue 17 kind 8).

Rows:
- ``key_columns`` set: rows are paired on their key cells; reference keys
  without a submitted row are ``MISSING_RECORDS``, submitted keys not in the
  reference ``EXTRA_RECORDS``, paired rows with differing cells
  ``WRONG_CELLS``.
- no key columns: whole rows are paired (multiset); leftover reference and
  submitted rows that agree on at least half of the compared columns are
  reported as ``WRONG_CELLS``, the rest as ``MISSING_RECORDS`` /
  ``EXTRA_RECORDS``.
- ``order``: ``multiset`` counts duplicates, ``set`` ignores them,
  ``ordered`` additionally requires row i to match row i (``WRONG_ORDER``).

Large result sets: rows (and key cells) are first paired through a hash of
their exact canonical form, so a shuffled 10,000-row answer is linear; the
tolerant pairwise passes run only within ``GREEDY_LIMIT`` row comparisons.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any, Sequence

from ..contract import AnswerPolicy, ReasonCode, RecordsAnswer
from .datetimes import datetimes_equal
from .extract import (
    extract_boolean,
    extract_datetimes,
    extract_list,
    extract_numbers,
    extract_records,
    is_empty_answer,
)
from .numbers import _round_ref, tolerance_rule, within
from .prose import match_prose_row
from .result import MatchResult, failure, success
from .text import normalise_text, text_equivalent

_COLNORM = re.compile(r"[\s_\-]+")
_NULL_CELL = re.compile(r"^\s*(?:|null|none|n/a|nan|-|—)\s*$", re.I)


def is_null_cell(text: str) -> bool:
    """An empty cell, or NULL / None / N/A / NaN / a dash."""
    return bool(_NULL_CELL.match(text))


def _colkey(name: str) -> str:
    return _COLNORM.sub("", str(name).casefold())


def _as_text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def cell_matches(sub: Any, ref: Any, policy: AnswerPolicy, rule: tuple) -> bool:
    """Does a submitted cell (string or JSON scalar) match a typed reference cell?"""
    if ref is None:
        return sub is None or is_null_cell(_as_text(sub))
    if sub is None:
        return False
    if isinstance(ref, bool):
        got = sub if isinstance(sub, bool) else extract_boolean(_as_text(sub))
        return got is ref
    if isinstance(ref, (int, float)):
        if isinstance(sub, bool):
            return False
        if isinstance(sub, (int, float)):
            val = float(sub)
        else:
            nums = extract_numbers(_as_text(sub), skip_dates=False)
            if len(nums) != 1:
                return False
            val = nums[0].value
        if isinstance(ref, int):
            return val == ref
        return within(val, ref, rule)
    if isinstance(ref, (dt.datetime, dt.date)):
        if isinstance(sub, dt.datetime):
            sval, sprec = sub, "second"
        elif isinstance(sub, dt.date):
            sval, sprec = dt.datetime(sub.year, sub.month, sub.day), "day"
        else:
            toks = extract_datetimes(_as_text(sub))
            if len(toks) != 1:
                return False
            sval, sprec = toks[0].value, toks[0].precision
        if isinstance(ref, dt.datetime):
            rprec = "second"
            if ref.second == 0 and sprec == "minute":
                rprec = "minute"
            return datetimes_equal(sval, sprec, ref, rprec)
        return datetimes_equal(sval, sprec, dt.datetime(ref.year, ref.month, ref.day), "day")
    return text_equivalent(_as_text(sub), str(ref), policy.text_threshold)[0]


def _rows_equal(srow: Sequence[Any], rrow: Sequence[Any], policy: AnswerPolicy, rule: tuple) -> bool:
    return all(cell_matches(s, r, policy, rule) for s, r in zip(srow, rrow))


_NO_KEY = object()
#: Row comparisons allowed for the tolerant (greedy) passes; beyond it unpaired
#: rows are reported as missing/extra without tolerant re-pairing.
GREEDY_LIMIT = 250_000


def _ref_key(ref: Any, rule: tuple) -> Any:
    """Exact canonical form of a reference cell (for the hashed first pass)."""
    if ref is None or isinstance(ref, bool):
        return ref
    if isinstance(ref, (int, float)):
        return _round_ref(float(ref), rule[1]) if rule[0] == "decimals" and isinstance(ref, float) else float(ref)
    if isinstance(ref, dt.datetime):
        return ref.isoformat()
    if isinstance(ref, dt.date):
        return dt.datetime(ref.year, ref.month, ref.day).isoformat()
    return normalise_text(str(ref))


def _sub_key(sub: Any, ref: Any, rule: tuple) -> Any:
    """Canonical form of a submitted cell read as the reference cell's type, or a
    value equal to nothing when it cannot be read exactly. Equal keys imply
    ``cell_matches`` (up to the float slack of the rounding rule, which the
    hashed pass does not apply); unequal keys go to the tolerant pass."""
    if ref is None or sub is None:
        return _NO_KEY
    if isinstance(ref, bool):
        got = sub if isinstance(sub, bool) else extract_boolean(_as_text(sub))
        return _NO_KEY if got is None else got
    if isinstance(ref, (int, float)):
        if isinstance(sub, bool):
            return _NO_KEY
        if isinstance(sub, (int, float)):
            val = float(sub)
        else:
            nums = extract_numbers(_as_text(sub), skip_dates=False)
            if len(nums) != 1:
                return _NO_KEY
            val = nums[0].value
        if rule[0] == "decimals" and isinstance(ref, float):
            return _round_ref(val, rule[1])
        return val
    if isinstance(ref, dt.date):
        toks = extract_datetimes(_as_text(sub))
        if len(toks) != 1:
            return _NO_KEY
        value, prec = toks[0].value, toks[0].precision
        if isinstance(ref, dt.datetime):
            return value.isoformat() if prec in ("minute", "second") else _NO_KEY
        return dt.datetime(value.year, value.month, value.day).isoformat() if prec in _DAY_OR_FINER else _NO_KEY
    return normalise_text(_as_text(sub))


_DAY_OR_FINER = frozenset(("day", "hour", "minute", "second"))


def _pair(subs: list[list[Any]], refs: list[list[Any]], policy: AnswerPolicy, rule: tuple):
    """Whole-row pairing; returns (pairs, unmatched ref idx, unmatched sub idx).

    First pass: rows whose cells are exactly equal in canonical form are paired
    through a hash table (linear time for large result sets); second pass:
    greedy pairing of the leftovers under the tolerant cell rules.
    """
    used = [False] * len(subs)
    pairs: list[tuple[int, int]] = []
    leftover: list[int] = []
    if refs and subs:
        # one prototype per column: the type of its first non-NULL reference cell
        proto = [next((r[c] for r in refs if r[c] is not None), None) for c in range(len(refs[0]))]
        ptypes = [type(p) for p in proto]
        buckets: dict[tuple, list[int]] = {}
        for j, s in enumerate(subs):
            key = tuple(_sub_key(c, p, rule) for c, p in zip(s, proto))
            if _NO_KEY not in key:
                buckets.setdefault(key, []).append(j)
        for i, r in enumerate(refs):
            hit = None
            if all(type(c) is t for c, t in zip(r, ptypes)):
                hit = buckets.get(tuple(_ref_key(c, rule) for c in r))
            if hit:
                j = hit.pop()
                used[j] = True
                pairs.append((i, j))
                continue
            leftover.append(i)
    else:
        leftover = list(range(len(refs)))
    missing = []
    if len(leftover) * len(subs) > GREEDY_LIMIT:  # too large for tolerant pairing: report as is
        return pairs, leftover, [j for j, u in enumerate(used) if not u]
    for i in leftover:
        r = refs[i]
        for j, s in enumerate(subs):
            if not used[j] and _rows_equal(s, r, policy, rule):
                used[j] = True
                pairs.append((i, j))
                break
        else:
            missing.append(i)
    extra = [j for j, u in enumerate(used) if not u]
    return pairs, missing, extra


def _dedupe(rows: list[list[Any]], key=lambda r: json.dumps([_as_text(c).casefold() for c in r])) -> list[list[Any]]:
    seen, out = set(), []
    for r in rows:
        k = key(r)
        if k not in seen:
            seen.add(k)
            out.append(r)
    return out


def match_records(text: str, ref: RecordsAnswer, policy: AnswerPolicy, json_value: Any = None) -> MatchResult:
    """Compare a table in the Answer with the reference result set (see module docstring).

    A one-row reference may also be stated in prose (``verifier.match.prose``,
    issue 17 kind 3): when the table comparison fails, the prose reading is
    tried; if it fails too, the table comparison's reasons are returned."""
    res = _match_table(text, ref, policy, json_value)
    if res.ok or len(ref.rows) != 1 or isinstance(json_value, (dict, list)):
        return res
    prose = match_prose_row(text, ref, policy)
    return res if prose is None else prose


def _transposed(cols: list[str], rows: list[list[Any]], required: list[str]) -> tuple[list[str], list[list[Any]]]:
    """A one-record table written vertically, one field per row (``| field | value |`` with the
    reference's columns as first-column cells: c34 agent C's ``| drg_code | 193 |``), read as the one
    record it is: its first column names the fields, its second holds the values. Any other table is
    returned as it is. The record's fields are those the rows name, so a vertical table states one
    record exactly as the horizontal one would (no candidate gained)."""
    if len(cols) != 2 or not rows or any(len(r) != 2 for r in rows):
        return cols, rows
    names = [_colkey(str(r[0])) for r in rows]
    want = {_colkey(c) for c in required}
    if not want or not want <= set(names) or want & {_colkey(c) for c in cols} or len(set(names)) != len(names):
        return cols, rows
    return [str(r[0]) for r in rows], [[r[1] for r in rows]]


def _match_table(text: str, ref: RecordsAnswer, policy: AnswerPolicy, json_value: Any = None) -> MatchResult:
    if is_empty_answer(text, json_value):  # "[] (no prescriptions found)": an empty result, not a row
        base = {"compared": "records", "reference_rows": len(ref.rows), "submitted_rows": 0, "submitted": "empty"}
        if not ref.rows:
            return success(**base)
        return failure(ReasonCode.MISSING_RECORDS, **base,
                       missing_rows=[[_as_text(c) for c in r] for r in ref.rows[:20]])
    table = extract_records(text, json_value)
    single = ref.columns[0] if len(ref.columns) == 1 else (
        policy.required_columns[0] if len(policy.required_columns) == 1 else None)
    if table is None and single is not None:  # a list, or a scalar for a single-cell result set
        items = json_value if isinstance(json_value, list) else extract_list(text)
        table = ([single], [[it] for it in items])
    if table is None:
        return failure(ReasonCode.WRONG_TYPE, expected="records", reference_columns=list(ref.columns),
                       why="no table found in the Answer (Markdown table, JSON list of objects or CSV)")
    required = policy.required_columns or list(ref.columns)
    scols, srows = _transposed(table[0], table[1], required)
    sidx = {_colkey(c): i for i, c in enumerate(scols)}
    rkeys = {c: _colkey(c) for c in ref.columns}
    missing_cols = [c for c in required if _colkey(c) not in sidx]
    base: dict[str, Any] = {"compared": "records", "reference_rows": len(ref.rows), "submitted_rows": len(srows),
                            "order": policy.order, "key_columns": list(policy.key_columns)}
    if missing_cols:
        return failure(ReasonCode.MISSING_COLUMNS, missing_columns=missing_cols,
                       submitted_columns=[str(c) for c in scols], **base)
    cols = [c for c in ref.columns if rkeys[c] in sidx]
    ridx = [ref.columns.index(c) for c in cols]
    refs = [[row[i] for i in ridx] for row in ref.rows]
    spos = [sidx[rkeys[c]] for c in cols]
    subs = [[(r[p] if p < len(r) else None) for p in spos] for r in srows]
    rule = tolerance_rule(policy, None, "number")
    if policy.order == "set":
        refs = _dedupe(refs)
        subs = _dedupe(subs)
    reasons: list[ReasonCode] = []
    keys = [c for c in policy.key_columns if _colkey(c) in {_colkey(x) for x in cols}]
    if keys:
        kpos = [[_colkey(c) for c in cols].index(_colkey(k)) for k in keys]
        used = [False] * len(subs)
        missing, wrong, pairs = [], [], []
        proto = refs[0] if refs else []
        by_key: dict[tuple, list[int]] = {}
        for j, s in enumerate(subs):
            by_key.setdefault(tuple(_sub_key(s[p], proto[p], rule) for p in kpos), []).append(j)
        scan = len(refs) * len(subs) <= GREEDY_LIMIT
        for i, r in enumerate(refs):
            hit = by_key.get(tuple(_ref_key(r[p], rule) for p in kpos), [])
            cand = [j for j in hit if not used[j] and all(cell_matches(subs[j][p], r[p], policy, rule) for p in kpos)]
            if not cand and scan:
                cand = [j for j, s in enumerate(subs)
                        if not used[j] and all(cell_matches(s[p], r[p], policy, rule) for p in kpos)]
            if not cand:
                missing.append(i)
                continue
            j = next((j for j in cand if _rows_equal(subs[j], r, policy, rule)), cand[0])
            used[j] = True
            pairs.append((i, j))
            if not _rows_equal(subs[j], r, policy, rule):
                wrong.append((i, j))
        extra = [j for j, u in enumerate(used) if not u]
    else:
        pairs, missing, extra = _pair(subs, refs, policy, rule)
        wrong = []
        if missing and extra and len(missing) * len(extra) <= GREEDY_LIMIT:
            still_missing, taken = [], set()
            for i in missing:
                best = None
                for j in extra:
                    if j in taken:
                        continue
                    agree = sum(cell_matches(s, r, policy, rule) for s, r in zip(subs[j], refs[i]))
                    if agree * 2 >= len(cols) and (best is None or agree > best[1]):
                        best = (j, agree)
                if best is None:
                    still_missing.append(i)
                else:
                    taken.add(best[0])
                    wrong.append((i, best[0]))
            missing = still_missing
            extra = [j for j in extra if j not in taken]
    if missing:
        reasons.append(ReasonCode.MISSING_RECORDS)
        base["missing_rows"] = [[_as_text(c) for c in refs[i]] for i in missing[:20]]
    if extra:
        reasons.append(ReasonCode.EXTRA_RECORDS)
        base["extra_rows"] = [[_as_text(c) for c in subs[j]] for j in extra[:20]]
    if wrong:
        reasons.append(ReasonCode.WRONG_CELLS)
        base["wrong_cells"] = [
            {"row": i, "column": cols[p], "reference": _as_text(refs[i][p]), "submitted": _as_text(subs[j][p])}
            for i, j in wrong[:20]
            for p in range(len(cols))
            if not cell_matches(subs[j][p], refs[i][p], policy, rule)
        ][:50]
    if not reasons and policy.order == "ordered":
        if len(subs) != len(refs) or not all(_rows_equal(s, r, policy, rule) for s, r in zip(subs, refs)):
            reasons.append(ReasonCode.WRONG_ORDER)
    return failure(*reasons, **base) if reasons else success(**base)
