"""Does the Reasoning name the unmet requirement? (deterministic check)

ARCHITECTURE.md section 4 point 6, issue 4 item 6. The task's
``UnmetRequirement.key_terms`` are what a Reasoning must name, e.g.
``["Potassium", "admission 22595853"]``. Every key term must be named; a
term may list alternatives separated by ``|`` (``"potassium|K+"``).

Matching, after normalisation (Unicode to ASCII, lower case, ``_``/``-`` and
punctuation to spaces, number words to digits, the phrase synonyms of
``rules/noise.toml`` ``[reasoning]`` such as "hadm id" -> "admission"):
    * every token of the term holding a digit (ids, codes, counts) must appear
      as a whole token of the Reasoning, exactly; except that a scope
      identifier, a term "<kind> <number>" whose kind is listed in
      ``[reasoning.scope_references]`` ("admission 22595853"), is also named by
      one of that kind's scope phrases ("this hospital stay", "the admission"),
      provided the Reasoning never names the kind with another number
      ("admission 22595854"); and when the Reasoning names every other key term and no
      entity of that kind with any number, the scope is implied (``scope_implied``: "the first
      Heparin dose is not recorded" speaks of the question's own admission; issue 17);
    * a redacted value written as underscores (``'___'``, MIMIC-IV de-identification) reads
      as the word "redacted", an accepted statement of a missing value;
    * a term "Name (ABBR)" is also named by the acronym or by the name alone ("CVICU"),
      and by the accepted restatements of ``[[reasoning.equivalents]]`` (issue 17 kind 5);
    * the term's other words (stopwords dropped) must be named: the whole
      phrase appears, or at least ``word_fraction`` of them (rounded up, at
      least one) each match a Reasoning word: exactly, as its prefix (a stem
      such as "readmi", at least ``min_prefix_length`` letters), or with
      rapidfuzz ``ratio`` >= ``fuzz_threshold`` (words shorter than
      ``min_fuzzy_length`` only exactly).
So "Potassium, Whole Blood" is named by "no whole-blood potassium", and
"admission 22595853" by "hadm_id 22595853" but not by "admission 22595854".
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rapidfuzz import fuzz, process

from ..contract import UnmetRequirement, load_toml
from ._patterns import Screened
from ._small_cell import normalise_numbers


@dataclass(frozen=True)
class ReasoningRules:
    """``rules/noise.toml`` ``[reasoning]``, compiled (number words: ``small_cell.normalise_numbers``)."""

    threshold: float
    min_fuzzy_length: int
    min_prefix_length: int
    word_fraction: float
    stopwords: frozenset[str]
    #: (the phrase as a word-bounded pattern, its replacement, the phrase), longest phrases first
    synonyms: tuple[tuple[re.Pattern[str], str, str], ...]
    #: ``[reasoning.scope_references]``: kind (normalised, e.g. "admission") -> raw phrases
    scope_references: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: ``[[reasoning.equivalents]]``: (key-term pattern, accepted statements), on normalised text
    equivalents: tuple[tuple[re.Pattern[str], tuple[Screened, ...]], ...] = ()
    #: ``[reasoning.specificity]``: concept -> patterns, and the count of foreign concepts that fails
    concepts: tuple[tuple[str, tuple[Screened, ...]], ...] = ()
    max_foreign_concepts: int = 0
    #: ``[reasoning.hedged_modes]``: generic failure mode -> patterns, the hedge words, the count that fails
    hedged_modes: tuple[tuple[str, tuple[Screened, ...]], ...] = ()
    hedge: re.Pattern[str] | None = None
    not_hedge: re.Pattern[str] | None = None
    min_hedged_modes: int = 0


@lru_cache(maxsize=1)
def rules() -> ReasoningRules:
    """The compiled reasoning rules (cached).

    Raises:
        RulesError: ``rules/noise.toml`` missing or malformed.
    """
    data = load_toml("noise.toml")
    rs = data["reasoning"]
    syn = tuple(
        (re.compile(rf"\b{re.escape(_basic(a))}\b"), _basic(b), _basic(a))
        for a, b in sorted(rs.get("synonyms", []), key=lambda p: len(p[0]), reverse=True)
    )
    return ReasoningRules(
        threshold=float(rs["fuzz_threshold"]),
        min_fuzzy_length=int(rs["min_fuzzy_length"]),
        min_prefix_length=int(rs.get("min_prefix_length", 4)),
        word_fraction=float(rs["word_fraction"]),
        stopwords=frozenset(w.lower() for w in rs.get("stopwords", [])),
        synonyms=syn,
        scope_references=tuple((k, tuple(v)) for k, v in sorted(rs.get("scope_references", {}).items())),
        equivalents=tuple((re.compile(e["term"]), tuple(Screened(a) for a in e["accept"]))
                          for e in rs.get("equivalents", [])),
        concepts=tuple((k, tuple(Screened(p) for p in v))
                       for k, v in sorted(rs.get("specificity", {}).get("concepts", {}).items())),
        max_foreign_concepts=int(rs.get("specificity", {}).get("max_foreign_concepts", 0)),
        hedged_modes=tuple((k, tuple(Screened(p) for p in v))
                           for k, v in sorted(rs.get("hedged_modes", {}).get("modes", {}).items())),
        hedge=re.compile(rf"\b(?:{'|'.join(re.escape(w) for w in hm['hedge_words'])})\b")
        if (hm := rs.get("hedged_modes", {})).get("hedge_words") else None,
        not_hedge=re.compile(rf"\b(?:{'|'.join(re.escape(normalise_phrase) for normalise_phrase in hm['not_hedges'])})\b")
        if (hm := rs.get("hedged_modes", {})).get("not_hedges") else None,
        min_hedged_modes=int(rs.get("hedged_modes", {}).get("min_modes", 0)),
    )


@lru_cache(maxsize=1)
def _scope_patterns() -> dict[str, tuple[re.Pattern[str], re.Pattern[str]]]:
    """kind -> (any scope-reference phrase, the kind named with a number), both on normalised text."""
    out = {}
    for kind, phrases in rules().scope_references:
        k = normalise(kind)
        refs = "|".join(re.escape(normalise(p)) for p in phrases)
        out[k] = (re.compile(rf"\b(?:{refs})\b"), re.compile(rf"\b{re.escape(k)}(?: (?:id|number|no|num))? (\d+)\b"))
    return out


def _scope_kind(term: str) -> tuple[str, str] | None:
    """``(kind, number)`` when ``term`` is a scope identifier "<kind> <number>" of
    ``[reasoning.scope_references]`` ("admission 22595853"), else ``None``."""
    words = normalise(term).split()
    if len(words) < 2 or not words[-1].isdigit() or any(ch.isdigit() for w in words[:-1] for ch in w):
        return None
    kind = " ".join(words[:-1])
    return (kind, words[-1]) if kind in _scope_patterns() else None


def _kind_named_with_number(kind: str, text: str) -> bool:
    return bool(_scope_patterns()[kind][1].search(text))


def _scope_named(words: list[str], numeric: list[str], text: str) -> bool:
    """A key term "<kind> <number>" named by a scope reference, the kind never named with another number."""
    if len(numeric) != 1 or words[-1] != numeric[0]:
        return False
    pats = _scope_patterns().get(" ".join(words[:-1]))
    if pats is None:
        return False
    ref, named_id = pats
    if any(m.group(1) != numeric[0] for m in named_id.finditer(text)):
        return False
    return bool(ref.search(text))


#: MIMIC-IV de-identification writes a redacted value as three or more underscores ('___').
_REDACTED = re.compile(r"_{3,}")


def _basic(text: str) -> str:
    text = _REDACTED.sub(" redacted ", text)  # before "_" becomes a space
    if not text.isascii():
        # one character at a time: NFKD of the whole text also reorders combining marks, which is
        # quadratic in a run of them (100-200 ms on 12,000), and they are dropped just below
        text = "".join(ch if ch.isascii() else unicodedata.normalize("NFKD", ch) for ch in text)
    text = text.encode("ascii", "ignore").decode()
    text = re.sub(r"[^a-z0-9.]+", " ", text.lower())
    text = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", text)  # keep decimal points only
    return " ".join(text.split())


@lru_cache(maxsize=8192)
def normalise(text: str) -> str:
    """Normalised text for matching (see module docstring).

    Memoised (a pure function of ``text`` and the rules): a task's key terms, question and
    statement are normalised once per process, not once per trajectory and check (issue 15:
    the reasoning check's per-trajectory cost; at most 8,192 strings are kept).
    """
    out = normalise_numbers(_basic(text))
    for pattern, repl, phrase in rules().synonyms:
        if phrase in out:  # the phrase itself first: most texts hold few of the phrases (issue 15)
            out = pattern.sub(repl, out)
    return out


def _alternative_named(alt: str, text: str, tokens: list[str], token_set: set[str]) -> bool:
    r = rules()
    words = normalise(alt).split()
    if not words:
        return False
    numeric = [w for w in words if any(ch.isdigit() for ch in w)]
    if any(w not in token_set for w in numeric):
        return _scope_named(words, numeric, text)
    content = [w for w in words if w not in numeric and w not in r.stopwords]
    if not content:
        return True
    if re.search(rf"\b{re.escape(' '.join(content))}\b", text):
        return True
    need = max(1, math.ceil(r.word_fraction * len(content)))
    named = 0
    for w in content:
        if w in token_set:
            named += 1
        elif len(w) >= r.min_prefix_length and any(t.startswith(w) for t in tokens):
            named += 1
        elif len(w) >= r.min_fuzzy_length and process.extractOne(w, tokens, scorer=fuzz.ratio, score_cutoff=r.threshold):
            named += 1
    return named >= need


_ACRONYM = re.compile(r"^(?P<name>.*?)\s*\((?P<abbr>[A-Z][A-Za-z0-9/&-]{1,11})\)\s*$")


def _with_acronyms(alts: list[str]) -> list[str]:
    """Alternatives plus, for "Name (ABBR)", the acronym and the name alone ("CVICU")."""
    out = list(alts)
    for a in alts:
        m = _ACRONYM.match(a.strip())
        if m and sum(ch.isupper() for ch in m.group("abbr")) >= 2:
            out += [m.group("abbr"), m.group("name")]
    return out


def _equivalent_named(alt: str, text: str) -> bool:
    """A key term stated another way (``[[reasoning.equivalents]]``: "none", "all NULL", "all before ...")."""
    term = normalise(alt)
    return any(pat.search(term) and any(a.search(text) for a in accept) for pat, accept in rules().equivalents)


def foreign_concepts(reasoning: str, requirement: UnmetRequirement, question: str = "") -> list[str]:
    """Requirement concepts of other programs (``[reasoning.specificity]``) that ``reasoning`` names
    and the task's own question, statement and key terms do not (sorted names)."""
    text = normalise(reasoning or "")
    own = _own_concepts(normalise(" ".join([question, requirement.statement, *requirement.key_terms])))
    return [name for name, pats in rules().concepts
            if name not in own and any(p.search(text) for p in pats)]


_SENTENCE = re.compile(r"[.;!?\n]+")


def hedged_modes(reasoning: str) -> list[str]:
    """The generic failure modes (``[reasoning.hedged_modes]``: a missing record, an empty value, a
    contradiction, a time window, an order, a link to the same patient or admission) that
    ``reasoning`` names in sentences holding a hedge word ("may", "might", "could"...; "could not"
    is not one), sorted.
    ``min_modes`` of them or more is a template listing every way a question can fail, which
    identifies no requirement (the caller reports ``REASONING_NOT_SPECIFIC``)."""
    r = rules()
    if r.hedge is None or not r.hedged_modes:
        return []
    found: set[str] = set()
    for sentence in _SENTENCE.split(reasoning or ""):
        text = normalise(sentence)
        if r.not_hedge is not None:
            text = r.not_hedge.sub(" ", text)  # "could not find" states an absence, it hedges nothing
        if r.hedge.search(text):
            found.update(name for name, pats in r.hedged_modes if any(p.search(text) for p in pats))
    return sorted(found)


@lru_cache(maxsize=4096)
def _own_concepts(own: str) -> frozenset[str]:
    """The requirement concepts (``[reasoning.specificity]``) a task's own normalised text names
    (the same for every response to the task)."""
    return frozenset(name for name, pats in rules().concepts if any(p.search(own) for p in pats))


def check_reasoning(reasoning: str, requirement: UnmetRequirement, question: str = "") -> tuple[bool, dict[str, Any]]:
    """Whether ``reasoning`` names every key term of ``requirement``, and only this requirement.

    Args:
        reasoning: the parsed Reasoning text.
        requirement: the task's unmet requirement (its ``key_terms``).
        question: the task's question (its concepts are the task's own, never foreign).

    Returns:
        ``(ok, details)``: ``ok`` when every key term is named (``named``, ``missing``; a term is
        also named by an accepted restatement of ``[[reasoning.equivalents]]``, issue 17 kind 5).
        ``details["not_specific"]`` is True when the Reasoning names at least
        ``max_foreign_concepts`` requirement concepts of other programs (``foreign_concepts``,
        issue 18 point 3) or lists at least ``[reasoning.hedged_modes] min_modes`` generic failure
        modes in hedged sentences (``hedged_modes``); the caller reports
        ``REASONING_NOT_SPECIFIC``. With no key terms the
        key-term check passes (``details["key_terms"] == []``).
    """
    text = normalise(reasoning or "")
    tokens = text.split()
    token_set = set(tokens)
    named: list[str] = []
    missing: list[str] = []
    where = f"{requirement.statement}\n{question}"
    for term in requirement.key_terms:
        alts = _with_acronyms([a for a in term.split("|") if a.strip()])
        alts += [n for a in list(alts) for n in _item_ids(a.strip(), where)]
        ok = any(_alternative_named(a, text, tokens, token_set) for a in alts) or any(_equivalent_named(a, text) for a in alts)
        (named if ok else missing).append(term)
    # the task's own scope, implied (issue 17): a Reasoning that names every other key term (the
    # requirement itself: "the first Heparin dose is not recorded") and names no entity of the
    # scope's kind with a number speaks of the question's own patient, admission or stay
    implied = []
    if missing and len(missing) < len(requirement.key_terms):
        scopes = {t: _scope_kind(t) for t in missing}
        if all(scopes.values()):
            implied = [t for t, ks in scopes.items() if ks and not _kind_named_with_number(ks[0], text)]
            if len(implied) == len(missing):
                named += implied
                missing = []
            else:
                implied = []
    # a population requirement stated as too few units of a cohort named by most of its terms
    cohort = _cohort_named(requirement.key_terms, named, missing)
    if cohort:
        named, missing = named + missing, []
    foreign = foreign_concepts(reasoning, requirement, question)
    limit = rules().max_foreign_concepts
    hedged = hedged_modes(reasoning)
    min_hedged = rules().min_hedged_modes
    return not missing, {"key_terms": list(requirement.key_terms), "named": named, "missing": missing,
                         "scope_implied": implied, "cohort_named": cohort, "foreign_concepts": foreign,
                         "hedged_modes": hedged,
                         "not_specific": (bool(limit) and len(foreign) >= limit) or (bool(min_hedged) and len(hedged) >= min_hedged)}


_FEWER_THAN_THRESHOLD = re.compile(r"\bfewer than 5\b")


def _cohort_named(terms: list[str], named: list[str], missing: list[str]) -> bool:
    """The five-unit requirement named with its cohort: the "fewer than five" term is named and at
    least half (rounded up, at least one) of the other key terms that are words, not bare numbers
    ("Ramelteon", "after", "abnormal Hematocrit"; a threshold such as "203" identifies no cohort on
    its own): a Reasoning that says too few units of a cohort it identifies states the requirement,
    even when it leaves out a term its wording implies ("fewer than five admissions qualify when the
    Ramelteon times are compared with the first abnormal Hematocrit"; the held-out demo corpus of
    issue 17). A missing scope identifier is never excused here."""
    if not missing or not any(_FEWER_THAN_THRESHOLD.search(normalise(t)) for t in named):
        return False
    if any(_scope_kind(t) is not None for t in missing):
        return False
    words = [t for t in terms if not _FEWER_THAN_THRESHOLD.search(normalise(t)) and not _BARE_NUMBER.match(normalise(t))]
    return bool(words) and sum(t in named for t in words) >= math.ceil(len(words) / 2)


_BARE_NUMBER = re.compile(r"^[\d. ]+$")


_ITEM_AFTER = r"\s*\((?:lab |icu |chart )?item(?: ?id)?[ #:]*(\d+)\)"
_ANY_ITEM = re.compile(_ITEM_AFTER, re.IGNORECASE)


@lru_cache(maxsize=8192)
def _item_ids(term: str, where: str) -> tuple[str, ...]:
    """The item ids that ``where`` (the requirement's statement and the question) writes right after
    ``term``: "% Hemoglobin A1c (itemid 50852)" -> ("50852",); an agent naming the item by its id
    names the term. Memoised: both depend on the task only; a ``where`` that writes no item id
    after anything is answered without compiling the term's own pattern."""
    if not _ANY_ITEM.search(where):
        return ()
    return tuple(re.findall(re.escape(term) + _ITEM_AFTER, where, flags=re.I))
