"""The speed-ups of the Noise checks' text passes change no result (issue 15, bounded inputs).

``verifier.abstention._patterns`` puts first-character look-aheads in front of word alternations
(``initials``) and skips searches whose text lacks a required literal (``Screened``);
``_back_reference`` screens its bound and composition checks by positions found once per text;
``disclosure`` stops at ``MAX_HITS`` snippets. Each is checked against the plain computation on
texts made of the rules' own words, where the screens matter.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.abstention import _back_reference as br
from verifier.abstention import _reasoning
from verifier.abstention._patterns import Screened, initials, required_literal
from verifier.abstention._small_cell import MAX_HITS, disclosure
from verifier.contract import load_toml

_RULES = load_toml("noise.toml")
_SC = _RULES["small_cell"]
#: words the five-unit rule reads, and filler
_VOCAB = sorted({*_SC["unit_nouns"], *_SC["aggregate_words"], *_SC["bound_prefixes"], *_SC["count_words"],
                 *_SC["back_reference"]["referring"], *_SC["back_reference"]["composition_verbs"],
                 "the", "eligible", "which", "fewer than 5", "than", "of", "same", "patient", "days", "5", "2", "3",
                 "12", "4.5", ".", ";", ",", "\n", "NULL", "step 2", "ID 4"})
_TEXTS = st.lists(st.one_of(st.sampled_from(_VOCAB), st.integers(0, 60).map(str)), max_size=40).map(" ".join)


@pytest.mark.parametrize("source,literal", [
    (r"\bfewer than 5\b", "fewer than 5"), (r"\bdoses?\b", "dose"), (r"(?<![\d.])0(?![\d.])", "0"),
    (r"\bnot (?:a )?single\b", "single"), (r"a|bcd", ""), (r"(?i)abc", ""), (r"\w+", ""),
])
def test_the_required_literal_is_in_every_match(source: str, literal: str) -> None:
    assert required_literal(source) == literal


_REASONING_PATTERNS = sorted({s.pattern.pattern for _, pats in _reasoning.rules().concepts for s in pats}
                             | {s.pattern.pattern for _, pats in _reasoning.rules().hedged_modes for s in pats}
                             | {s.pattern.pattern for _, acc in _reasoning.rules().equivalents for s in acc})


@settings(max_examples=300, deadline=None)
@given(source=st.sampled_from(_REASONING_PATTERNS),
       words=st.lists(st.sampled_from(["fewer than 5", "dose", "doses", "no", "null", "icu", "stay", "readmitted",
                                       "not a single", "0", "10", "the", "entered", "was never in the", "unit",
                                       "missing value", "may", "could", "transfer", "24 hours"]), max_size=12))
def test_a_screened_search_finds_what_the_plain_search_finds(source: str, words: list[str]) -> None:
    text = " ".join(words)
    screened = Screened(source)
    assert (screened.search(text) is None) == (re.search(source, text) is None), (source, text)


@settings(max_examples=300, deadline=None)
@given(text=_TEXTS)
def test_initials_change_no_match(text: str) -> None:
    for words in (_SC["aggregate_words"], _SC["bound_prefixes"], _SC["count_words"], _SC["back_reference"]["referring"]):
        body = rf"\b(?:{'|'.join(re.escape(w) for w in sorted(words, key=len, reverse=True))})\b"
        plain, fast = re.compile(body, re.I), re.compile(initials(words) + body, re.I)
        assert [m.span() for m in plain.finditer(text)] == [m.span() for m in fast.finditer(text)], text


@settings(max_examples=300, deadline=None)
@given(text=_TEXTS)
def test_the_screened_bound_and_composition_checks_are_exact(text: str) -> None:
    r = br.rules()
    bounds = br._Bounds(text)
    for m in r.counted.finditer(text):
        plain = r.bound_before.search(text, max(0, m.start("num") - 16), m.start("num")) is not None
        assert bounds.before(m) == plain, text
    _composition_screen_keeps_every_match(text)


def _composition_screen_keeps_every_match(text: str) -> None:
    r = br.rules()
    composing = [m.start() for m in r.composing.finditer(text)]
    breaks = br.clause_breaks(text)
    for pos in range(len(text) + 1):
        if r.composed.match(text, pos):
            assert br._composes(composing, breaks, pos), (text, pos)


@settings(max_examples=300, deadline=None)
@given(filler=st.lists(st.sampled_from(["and", "of", "admissions", "x", ".", ";", "4.5", "\n", "which"]), max_size=24),
       word=st.sampled_from(_SC["back_reference"]["referring"] + ["which"]),
       verb=st.sampled_from(_SC["back_reference"]["composition_verbs"]))
def test_the_composition_screen_keeps_every_composed_count(filler: list[str], word: str, verb: str) -> None:
    """"<count> ... these belong to fewer than 5 ...": near the count, far from it, across breaks."""
    _composition_screen_keeps_every_match(f"J189 is coded on 7 admissions {' '.join(filler)} {word} {verb} fewer than 5 patients.")


@settings(max_examples=200, deadline=None)
@given(text=_TEXTS, n=st.integers(1, 4))
def test_the_reading_stops_only_after_max_hits(text: str, n: int) -> None:
    """Fewer than MAX_HITS repeats (every honest text): all of them; and a limit never hides the
    first snippet."""
    full = br.back_references(text, n, frozenset({5.0}))
    limited = br.back_references(text, n, frozenset({5.0}), limit=1)
    assert bool(full) == bool(limited)
    assert set(limited) <= set(full)


def test_a_run_on_disclosing_text_lists_at_most_max_hits() -> None:
    text = "NULL. Fewer than five patients qualify; " + "their mean is 7, " * 2000
    found = disclosure(text, 2, "How many patients had diagnosis 42983?")
    assert found and len(found) <= MAX_HITS
    assert any("mean is 7" in s for s in found)


def _points_at_units_plain(text: str, n: int, pos: int) -> bool:
    """``_Anchors.points_at_units`` as a scan of the lookback window (the code before 2026-12-02)."""
    r = br.rules()
    bounds = br._Bounds(text)
    allowed = [(m.start(), m.end()) for m in r.allowed_anchor.finditer(text)]
    other = [(m.start(), m.end()) for m in r.other_anchor.finditer(text)]
    other += [(m.start(), m.end()) for m in r.counted.finditer(text)
              if float(m["num"]) >= r.threshold and float(m["num"]) != n and not bounds.before(m)]
    lo = max(0, pos - br._LOOKBACK)

    def last(spans: list[tuple[int, int]]) -> int:
        return max((b for a, b in spans if lo <= a < pos and b <= pos), default=-1)

    return last(other) <= last(allowed)


@settings(max_examples=300, deadline=None)
@given(text=_TEXTS, n=st.integers(1, 4))
def test_the_anchor_lookup_equals_a_scan(text: str, n: int) -> None:
    r = br.rules()
    counted = list(r.counted.finditer(text))
    anchors = br._Anchors(text, n, counted, br._Bounds(text))
    for pos in range(0, len(text) + 1, 3):
        assert anchors.points_at_units(pos) == _points_at_units_plain(text, n, pos), (text, pos)


def _about_plain(text: str, start: int, end: int) -> bool:
    """``_disguise._Units.about`` computed directly: the exact patterns on the text itself, no
    positions found in advance and no bisection (the module docstring's rule)."""
    from verifier.abstention import _disguise

    r = _disguise.rules()
    if r.about_units_after.match(text[end:end + 80]):
        return True
    clause_start = max((m.end() for m in re.finditer(r"[.;\n]", text[:start])), default=0)
    lo = max(clause_start, start - 25)
    return r.eligibility.search(text[lo:start]) is not None


_UNIT_TEXTS = st.builds(lambda words, sep: sep.join(words), st.lists(st.one_of(
    st.sampled_from(_VOCAB + _RULES["small_cell"]["disguise"]["eligibility_words"] + ["<3", "under 2", "at most 3"]),
    st.integers(0, 9).map(str)), max_size=40), st.sampled_from([" ", "", "_", "-"]))  # glued words too


@settings(max_examples=600, deadline=None)
@given(text=_UNIT_TEXTS)
def test_the_units_screen_changes_no_answer(text: str) -> None:
    """``_Units.near`` (bisection only) settles most bounds of a run-on text before ``about``'s
    exact patterns run, and unit nouns are found only after a non-letter or at the phrase's end
    (tight bounds: 9 -> 3 ms on "<3 " at the 12,000-character cap): ``about`` still answers what the
    plain computation answers, for every bound and every span, words glued together included."""
    from verifier.abstention import _disguise

    units = _disguise._Units(text)
    spans = [m.span() for m in _disguise.rules().bound.finditer(text)]
    spans += [(a, b) for a in range(0, len(text) + 1, 5) for b in (a, min(len(text), a + 3))]
    for a, b in spans:
        assert units.about(a, b) == _about_plain(text, a, b), (text, a, b)
