"""Evidence for a Noise abstention: which queries count, and did the agent really see them.

ARCHITECTURE.md section 4 ("Noise abstentions", steps 2-3).

Extraction (``extract_evidence``):
    * every SQL step, in order (a step with a recorded error is kept, marked
      failed: it can only ever yield ``EVIDENCE_QUERY_FAILED``);
    * the SQL executed inside Python steps: ``Step.sql`` as recorded by the
      environment; for trajectories from elsewhere (``Step.sql`` empty), the
      string literals passed to ``execute``/``sql``/``query``/``read_sql``...
      calls, recovered by parsing the Python with ``ast`` (``sql_in_python``);
    * when the final response cites steps (``[step 3]``), only cited steps.

Fabrication (``output_matches``): each evidence query is re-executed
read-only and its result compared with what the trajectory recorded. The
rule, most specific first:
    1. structured rows recorded (``Step.columns``/``Step.rows``): same column
       names (case-insensitive) and the same multiset of rows, cells compared
       canonically (``canon_cell``: numbers to 10 significant digits, ISO
       datetimes, ``None``); when the re-execution reaches the row cap, the
       recorded rows must reach it too. The recorded text, if any, must then
       also pass rule 2 or 3;
    2. text in ``verifier.sql.render_result`` form (a ``(N rows...)``
       footer): the same header, the same row count ``N``, and every shown row
       (canonical cells) found among the re-executed rows, order-free;
    3. any other ("foreign") text: durations ("0.02 s") and a pandas-style
       row index (0, 1, 2, ... at the start of the lines after the header)
       are ignored; an empty-result claim (``[]``, ``0 rows``,
       ``Empty DataFrame``, ``no rows``...) on a non-empty result is
       fabricated; otherwise every number in the text must be a number of the
       re-executed result (its rendered cells and column names, compared at
       the text's stated decimals) or its row count.
    Python steps are not compared here (their printed output is the agent code's
    transformation of the rows): a Python step judged by its printout is re-run in the
    sandbox and must reproduce it (``_printed``).
    The environment's observation framing (a leading ``[step N]`` line, a
    trailing ``[only the first N rows were fetched]``) is removed first, so
    outputs logged as chat tool messages compare like recorded ones.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Hashable, Iterable, Literal, Sequence, TypeVar

from ..contract import DisplayConfig, Step, Trajectory
from ..sql import QueryResult, format_cell, render_result, visible_rows
from ._canon import canon_cell, canon_shown

Origin = Literal["sql", "python_recorded", "python_ast"]
T = TypeVar("T")


@dataclass(frozen=True)
class EvidenceQuery:
    """One query that may serve as evidence.

    Attributes:
        step: 1-based index of the step it came from.
        position: 0-based position among the step's queries (Python steps may run several).
        sql: the query text as the agent wrote it.
        origin: ``sql`` step, Python step's ``recorded`` SQL, or recovered by ``ast``.
        failed: the recorded error when the step failed (then never evidence).
        step_ref: the step itself (for recorded output and rows).
    """

    step: int
    position: int
    sql: str
    origin: Origin
    failed: str | None = None
    step_ref: Step | None = field(default=None, repr=False, compare=False)


@dataclass
class EvidenceSet:
    """What ``extract_evidence`` found.

    Attributes:
        queries: the candidate evidence queries, in trajectory order.
        cited: the valid cited step indices (empty: no citation restriction).
        invalid_citations: cited indices that name no step.
        unresolved: ``(step, reason)`` for Python calls whose SQL could not be
            recovered statically (e.g. an f-string with a variable).
    """

    queries: list[EvidenceQuery]
    cited: list[int] = field(default_factory=list)
    invalid_citations: list[int] = field(default_factory=list)
    unresolved: list[tuple[int, str]] = field(default_factory=list)


# ---------------------------------------------------------------- extraction
#: Method or function names whose first argument is a SQL string.
SQL_CALLS = frozenset({
    "execute", "executemany", "sql", "query", "read_sql", "read_sql_query", "run_sql", "fetchdf_sql",
    "run_query", "raw_sql",
})


def _const_str(node: ast.AST, env: dict[str, str]) -> str | None:
    """Statically evaluate a string expression: literals, ``+`` concatenation,
    constant-only f-strings, names bound to such strings, ``dedent(...)``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _const_str(node.left, env), _const_str(node.right, env)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                parts.append(v.value)
            elif isinstance(v, ast.FormattedValue) and v.conversion == -1 and v.format_spec is None:
                inner = _const_str(v.value, env)
                if inner is None:
                    return None
                parts.append(inner)
            else:
                return None
        return "".join(parts)
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.Call) and node.args and not node.keywords:
        fname = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if fname in ("dedent", "strip"):
            return _const_str(node.args[0], env)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "strip" and not node.args:
        return _const_str(node.func.value, env)
    return None


def sql_in_python(code: str) -> tuple[list[str], list[str]]:
    """Recover the SQL strings a piece of Python passes to query calls.

    Walks the statements in source order, tracking simple assignments of
    string constants (``q = "SELECT ..."``), and collects the first argument
    (or ``sql=``/``query=`` keyword) of calls named in ``SQL_CALLS``
    (``con.execute(q)``, ``db.sql("...")``, ``pd.read_sql(q, con)``).

    Args:
        code: Python source.

    Returns:
        ``(sqls, unresolved)``: the SQL texts in call order, and a short
        description of each call whose argument is not a static string.
        Unparseable Python gives ``([], ["python does not parse: ..."])``.
    """
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError) as exc:
        return [], [f"python does not parse: {exc}"]
    env: dict[str, str] = {}
    sqls: list[str] = []
    unresolved: list[str] = []

    class Visitor(ast.NodeVisitor):
        def visit_Assign(self, node: ast.Assign) -> None:
            self.generic_visit(node)
            value = _const_str(node.value, env)
            for target in node.targets:
                if isinstance(target, ast.Name):
                    if value is None:
                        env.pop(target.id, None)
                    else:
                        env[target.id] = value

        def visit_Call(self, node: ast.Call) -> None:
            self.generic_visit(node)
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if name not in SQL_CALLS:
                return
            arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg in ("sql", "query")), None)
            if arg is None:
                return
            text = _const_str(arg, env)
            if text is None:
                unresolved.append(f"{name}() at line {node.lineno}: argument is not a static string")
            elif text.strip():
                sqls.append(text)

    Visitor().visit(tree)
    return sqls, unresolved


def extract_evidence(trajectory: Trajectory, citations: Iterable[int] | None = None) -> EvidenceSet:
    """Collect the candidate evidence queries of a trajectory.

    Args:
        trajectory: the episode.
        citations: 1-based step indices cited by the final response
            (``ParsedResponse.citations``); empty or ``None`` means no
            restriction. Indices naming no step are reported, not used.

    Returns:
        An ``EvidenceSet`` (queries in trajectory order).
    """
    n = len(trajectory.steps)
    cited_all = sorted(set(int(c) for c in (citations or [])))
    cited = [c for c in cited_all if 1 <= c <= n]
    invalid = [c for c in cited_all if not 1 <= c <= n]
    out = EvidenceSet(queries=[], cited=cited, invalid_citations=invalid)
    keep = set(cited) if cited_all else None
    for step in trajectory.steps:
        if keep is not None and step.index not in keep:
            continue
        failed = step.error or None
        if step.kind == "sql":
            out.queries.append(EvidenceQuery(step.index, 0, step.code, "sql", failed, step))
            continue
        if step.sql:
            sqls, origin = list(step.sql), "python_recorded"
        else:
            sqls, unresolved = sql_in_python(step.code)
            origin = "python_ast"
            out.unresolved += [(step.index, u) for u in unresolved]
        for pos, text in enumerate(sqls):
            out.queries.append(EvidenceQuery(step.index, pos, text, origin, failed, step))  # type: ignore[arg-type]
    return out


def canon_rows(rows: Iterable[Sequence[Any]]) -> list[tuple[Any, ...]]:
    """``canon_cell`` applied to every cell of every row."""
    return [tuple(canon_cell(v) for v in row) for row in rows]


def memo_on(obj: Any, key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``, memoised on ``obj`` itself under ``key``.

    For values derived from a ``QueryResult`` (frozen, and shared through the
    batch query cache, so one result object serves every GRPO sample of a
    task): the memo lives and dies with the object, so it can never be
    served for another result. ``compute`` must be a pure function of ``obj``
    (and of what ``key`` names).
    """
    memo = obj.__dict__.get("_memo")
    if memo is None:
        memo = obj.__dict__["_memo"] = {}
    try:
        return memo[key]
    except KeyError:
        value = memo[key] = compute()
        return value


def result_canon(result: QueryResult) -> list[tuple[Any, ...]]:
    """``canon_rows(result.rows)``, memoised on ``result`` (callers must not mutate it)."""
    return memo_on(result, "canon", lambda: canon_rows(result.rows))


def display_key(display: DisplayConfig | None) -> Hashable:
    """A hashable identity of the display limits (``None``: the defaults)."""
    return None if display is None else tuple(sorted(display.model_dump().items()))


def visible_canon(result: QueryResult, display: DisplayConfig | None) -> list[tuple[Any, ...]]:
    """``canon_rows(visible_rows(...))`` of ``result`` under ``display``, memoised on ``result``."""
    return memo_on(result, ("visible", display_key(display)),
                   lambda: canon_rows(visible_rows(result.rows, result.columns, display)))


@lru_cache(maxsize=4096)
def _canon_recorded(rows: tuple[tuple[Any, ...], ...]) -> list[tuple[Any, ...]]:
    return canon_rows(rows)


def _recorded_canon(rows: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
    """``canon_rows`` of a step's recorded rows, memoised by content (GRPO samples
    of a task record the same rows). Cells that compare equal canonicalise to
    equal values, so sharing an entry between equal keys changes no comparison."""
    try:
        return _canon_recorded(tuple(tuple(r) for r in rows))
    except TypeError:  # an unhashable cell (a list from a foreign trajectory)
        return canon_rows(rows)


# ---------------------------------------------------------------- fabrication
_FOOTER = re.compile(r"\((\d+) rows?(?:, showing first (\d+))?\)")
_EMPTY_CLAIM = re.compile(
    r"\s*(?:\[\s*\]|\(\s*\)|\{\s*\}|empty( dataframe| result| set)?.*|\(?0 rows?\)?.*|no rows.*|no results?.*|none)\s*",
    re.IGNORECASE | re.DOTALL,
)
_TOKEN_NUMBER = re.compile(r"\d+(?:\.\d+)?")
#: Lines the environment adds around a rendered result in the agent's observation.
_OBS_HEAD = re.compile(r"\A\s*\[step \d+\][ \t]*\n")
_OBS_TAIL = re.compile(r"\n\[only the first \d+ rows were fetched\]\s*\Z")


def _sub_multiset(part: Iterable[tuple[Any, ...]], whole: Iterable[tuple[Any, ...]]) -> bool:
    return not (Counter(part) - Counter(whole))


def _match_structured(step: Step, result: QueryResult) -> tuple[bool, str]:
    cols = [c.lower() for c in step.columns or []]
    if cols != [c.lower() for c in result.columns]:
        return False, f"recorded columns {step.columns} differ from re-executed {result.columns}"
    recorded = _recorded_canon(step.rows or [])
    actual = result_canon(result)
    if result.truncated:
        # both sides stopped at a row cap: which rows came first is not defined
        ok = len(recorded) >= len(actual)
        return ok, ("both results reach the row cap" if ok else f"recorded {len(recorded)} rows; the database has more than {len(actual)}")
    if Counter(recorded) == memo_on(result, "counter", lambda: Counter(actual)):
        return True, f"same {len(actual)} rows"
    return False, f"recorded {len(recorded)} rows differ from the {len(actual)} re-executed rows"


def _match_rendered(text: str, result: QueryResult) -> tuple[bool, str]:
    lines = text.rstrip().splitlines()
    footer = _FOOTER.fullmatch(lines[-1].strip())
    assert footer is not None
    body = lines[:-1]
    if body and body[-1].strip() == "[truncated]":
        body = body[:-2]  # the marker and the line it cut
    header, shown = (body[0], body[1:]) if body else ("", [])
    if [h.strip().lower() for h in header.split(" | ")] != [c.lower() for c in result.columns]:
        return False, f"recorded header {header!r} differs from re-executed columns {result.columns}"
    n = int(footer.group(1))
    if not result.truncated and n != len(result.rows):
        return False, f"recorded {n} rows, the database returns {len(result.rows)}"
    if result.truncated and n < len(result.rows):
        return False, f"recorded {n} rows, the database returns more than {len(result.rows)}"
    width = len(result.columns)
    cells = [tuple(canon_cell(c) for c in line.split(" | ")) for line in shown]
    if any(len(c) != width for c in cells):
        # a cell holding " | " or a line break is ambiguous: compare rendered lines instead
        actual_lines = Counter(
            line for r in result.rows for line in " | ".join(format_cell(v) for v in r).split("\n")
        )
        ok = not (Counter(shown) - actual_lines)
    else:
        ok = _sub_multiset(cells, memo_on(result, "canon_shown", lambda: [tuple(canon_shown(v) for v in r)
                                                                            for r in result.rows]))
    return ok, ("shown rows are rows of the re-executed result" if ok else "shown rows are not produced by the database")


def _numbers(text: str) -> list[tuple[float, int]]:
    out = []
    for tok in _TOKEN_NUMBER.findall(text):
        decimals = len(tok.split(".")[1]) if "." in tok else 0
        out.append((float(tok), decimals))
    return out


_DURATION = re.compile(r"\d+(?:\.\d+)?\s*(?:ms|msec|s|sec|secs|seconds?|milliseconds?)\b", re.IGNORECASE)
_INDEXED_LINE = re.compile(r"[ \t]*(\d+)[ \t]+(?=\S)")


def _drop_frame_index(text: str) -> str:
    """Remove a pandas-style row index (lines after the header starting 0, 1, 2, ...)."""
    lines = text.splitlines()
    if len(lines) < 2:
        return text
    body = lines[1:]
    heads = [_INDEXED_LINE.match(line) for line in body]
    if all(heads) and [int(m.group(1)) for m in heads] == list(range(len(body))):  # type: ignore[union-attr]
        body = [line[m.end():] for line, m in zip(body, heads)]  # type: ignore[union-attr]
        return "\n".join([lines[0], *body])
    return text


def _match_foreign(text: str, result: QueryResult) -> tuple[bool, str]:
    text = _drop_frame_index(_DURATION.sub(" ", text))
    if _EMPTY_CLAIM.fullmatch(text):
        if result.rows:
            return False, f"recorded output claims an empty result; the database returns {len(result.rows)} row(s)"
        return True, "empty result, as recorded"
    rendered = render_result(result.columns, result.rows, DisplayConfig(max_rows=max(1, len(result.rows)), max_chars=10**9))
    known = sorted({v for v, _ in _numbers(rendered)} | {float(len(result.rows))})
    for value, decimals in _numbers(text):
        tol = 0.5 * 10 ** (-decimals) + 1e-9 * abs(value)
        i = bisect_left(known, value - tol)
        if i >= len(known) or known[i] > value + tol:
            return False, f"recorded number {value:g} is not in the re-executed result"
    return True, "every recorded number is in the re-executed result"


def output_matches(step: Step, result: QueryResult, display: DisplayConfig | None = None) -> tuple[bool, str]:
    """Whether ``step``'s recorded output could have come from ``result``.

    Args:
        step: the trajectory step (SQL step; Python steps are not compared).
        result: the read-only re-execution of the step's query.
        display: the environment's display limits (for the exact-render fast path).

    Returns:
        ``(matches, why)``; the rule is in the module docstring.
    """
    if step.kind != "sql":
        return True, "python output is not compared (agent code transforms the rows)"
    if step.columns is not None and step.rows is not None:
        ok, why = _match_structured(step, result)
        if not ok or not (step.output or "").strip():
            return ok, why
    text = _OBS_TAIL.sub("", _OBS_HEAD.sub("", step.output or "")).strip("\n")
    if not text.strip():
        return True, "no recorded output to compare"
    if text == memo_on(result, ("render", display_key(display)), lambda: render_result(result.columns, result.rows, display)):
        return True, "recorded output equals the re-rendered result"
    if _FOOTER.fullmatch(text.rstrip().splitlines()[-1].strip()):
        return _match_rendered(text, result)
    return _match_foreign(text, result)


_NULL_TEXTS = ("none", "null", "nan", "<na>", "nat")
#: A printed line that shows an empty result: the whole line (stripped) is an empty
#: container, "Empty DataFrame...", "0 rows", "no rows/results", "None", a lone 0 or
#: "<name>: 0" / "<name> = 0". A 0 inside other text ("exit code 0") is not one.
_EMPTY_LINE = re.compile(
    r"\s*(?:\[\s*\]|\(\s*\)|\{\s*\}|empty\b.*|\(?0 rows?\)?.*|no (?:rows|results?)\b.*|none|0|"
    r"[\w ().\[\]'\"]{1,40}\s*[:=]\s*(?:0|\[\s*\]|none))\s*",
    re.IGNORECASE,
)


def _cell_shown(value: Any, text: str, lowered: str, numbers: list[tuple[float, int]]) -> bool:
    c = canon_cell(value)
    if c is None:
        return any(t in lowered for t in _NULL_TEXTS)
    if isinstance(c, bool):
        return str(c).lower() in lowered
    if isinstance(c, float):
        return any(abs(n - abs(c)) <= 0.5 * 10 ** (-d) + 1e-9 * abs(c) for n, d in numbers)  # numbers are read unsigned
    return str(c).lower() in lowered or format_cell(value).strip().lower() in lowered


_PY_DATETIME = re.compile(r"datetime\.(datetime|date)\((\d{1,4}), (\d{1,2}), (\d{1,2})(?:, (\d{1,2}), (\d{1,2})(?:, (\d{1,2}))?(?:, \d+)?)?\)")


def _iso_datetimes(text: str) -> str:
    """Python's repr of datetimes (``datetime.datetime(2153, 4, 13, 19, 45)``, how a printed row
    of ``db.sql(...).rows`` shows them) rewritten as the ISO text a result cell canonicalises to."""
    def iso(m: re.Match[str]) -> str:
        y, mo, d = (int(g) for g in m.group(2, 3, 4))
        if m.group(1) == "date":
            return f"{y:04d}-{mo:02d}-{d:02d}"
        h, mi, sec = (int(g or 0) for g in m.group(5, 6, 7))
        return f"{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{sec:02d}"
    return _PY_DATETIME.sub(iso, text) if "datetime." in text else text


def reflected_in_output(step: Step, result: QueryResult, display: DisplayConfig | None = None) -> tuple[bool, str]:
    """Whether a query's re-executed result visibly shows in a Python step's printed output.

    For SQL recovered from Python code by ``ast`` (no ``Step.sql`` recorded),
    the verifier does not know the call ever ran (``if False: con.execute(...)``);
    for SQL a Python step ran (``Step.sql``), it does not know the agent saw the
    rows (the code may print only a table's size). Either query counts as
    evidence on its rows only if its result is reflected in what the step
    printed (else the step is judged by its printout, ``_printed``). Rule: with visible rows (``render.visible_rows`` under
    ``display``), every cell of at least one visible row appears in the output
    text (numbers at the text's stated decimals, text case-insensitively, NULL
    as None/NULL/NaN/<NA>/NaT, datetimes also in Python's ``datetime.datetime(...)`` repr); with an empty result, the output shows an empty
    result on a line of its own (``[]``, ``()``, "Empty DataFrame", "0 rows", "no rows",
    "None", a lone ``0``, ``n: 0``; not a 0 inside other text such as "exit code 0").

    Args:
        step: the Python step (its ``output``).
        result: the query's read-only re-execution.
        display: the environment's display limits.

    Returns:
        ``(reflected, why)``.
    """
    text = _iso_datetimes((step.output or "").strip())
    if not text:
        return False, "the step recorded no output, so nothing shows the query ran"
    lowered = text.lower()
    rows = visible_rows(result.rows, result.columns, display)
    if not rows:
        ok = any(_EMPTY_LINE.fullmatch(line) for line in text.splitlines())
        return ok, ("the output shows the empty result" if ok else "the result is empty and the output does not show it")
    numbers = _numbers(text)
    for row in rows:
        if all(_cell_shown(v, text, lowered, numbers) for v in row):
            return True, "a row of the re-executed result appears in the step's output"
    return False, "no row of the re-executed result appears in the step's output: the query may never have run"
