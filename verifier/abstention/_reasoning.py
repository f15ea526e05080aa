"""Does the Reasoning name the unmet requirement? (deterministic check)

ARCHITECTURE.md section 4 point 6, issue 4 item 6. The task's
``UnmetRequirement.key_terms`` are what a Reasoning must name, e.g.
``["Potassium", "admission 22595853"]``. Every key term must be named; a
term may list alternatives separated by ``|`` (``"potassium|K+"``).

Matching, after normalisation (Unicode to ASCII, lower case, ``_``/``-`` and
punctuation to spaces, number words to digits, the phrase synonyms of
``rules/noise.toml`` ``[reasoning]`` such as "hadm id" -> "admission" and the clinical
shorthand "adm", "pt", "ED", "dx"; a time unit abbreviated after a number, "11 d", is its
name, ``unit_abbreviations``):
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
from ..parse import _citations
from ._decoy import ENTITY_COLUMNS
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
    #: ``unit_abbreviations``: "<number> <abbreviation>" -> "<number> <unit>" ("11 d" -> "11 day")
    unit_after_number: tuple[re.Pattern[str], dict[str, str]] | None = None
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
    #: ``selecting_words``: an ordinal of a key term must itself be named
    selecting: frozenset[str] = frozenset()


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
    ) + tuple(
        (re.compile(rf"\b{re.escape(_basic(a))}\b(?=\s+\d)"), _basic(b), _basic(a))
        for a, b in rs.get("bound_synonyms", [])
    )
    return ReasoningRules(
        threshold=float(rs["fuzz_threshold"]),
        min_fuzzy_length=int(rs["min_fuzzy_length"]),
        min_prefix_length=int(rs.get("min_prefix_length", 4)),
        word_fraction=float(rs["word_fraction"]),
        selecting=frozenset(normalise_numbers(w.lower()) for w in rs.get("selecting_words", [])),
        stopwords=frozenset(w.lower() for w in rs.get("stopwords", [])),
        synonyms=syn,
        unit_after_number=(re.compile(rf"(?<=\d) ({'|'.join(sorted(map(re.escape, ua), key=len, reverse=True))})\b"), dict(ua))
        if (ua := rs.get("unit_abbreviations")) else None,
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
    """kind -> (any scope-reference phrase, the kind named with a number), both on normalised text (a
    date after the kind, "ICU stay 2123-02-26 12:12", is no number of it: blind corpus c32b)."""
    out = {}
    for kind, phrases in rules().scope_references:
        k = normalise(kind)
        refs = "|".join(re.escape(normalise(p)) for p in phrases)
        out[k] = (re.compile(rf"\b(?:{refs})\b"), re.compile(rf"\b{re.escape(k)}(?: (?:id|number|no|num))? (\d+)\b(?! \d{{1,2}} \d{{1,2}}\b)"))
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


#: Symbols that stand for words in a terse Reasoning (blind corpus c38, a symbol-heavy note-taker: "procs after
#: ICU-out day = ∅ → NULL", "adms with admin after first abnormal INR = fewer than 5 → five-unit rule"): read as
#: the words, before other symbols are dropped: the empty set is "none", a check mark "yes", an arrow "so" (a
#: clause after "so" goes on about its sentence's subject, as one after "but" does: ``_CONTRAST_BEFORE``).
_SYMBOL_WORDS = (("∅", " none "), ("⌀", " none "), ("→", " so "), ("⇒", " so "), ("⟹", " so "), ("≠", " not equal "), ("∄", " there is no "), ("∉", " not in "), ("✗", " no "),
                 ("✘", " no "), ("❌", " no "), ("✔", " yes "), ("✓", " yes "), ("✅", " yes "), ("≥", " at least "),
                 ("≤", " at most "), ("∩", " and "))


def _basic(text: str) -> str:
    text = _REDACTED.sub(" redacted ", text)  # before "_" becomes a space
    if not text.isascii():
        for sym, word in _SYMBOL_WORDS:
            if sym in text:
                text = text.replace(sym, word)
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
    r = rules()
    if r.unit_after_number is not None:
        pat, names = r.unit_after_number
        out = pat.sub(lambda m: " " + names[m.group(1)], out)
    for pattern, repl, phrase in r.synonyms:
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
    if any(w in r.selecting and w not in token_set for w in content):
        return False  # "second admission" is not named by "the fifth admission"

    def said(w: str) -> bool:
        return (w in token_set or (len(w) >= r.min_prefix_length and any(t.startswith(w) for t in tokens))
                or (len(w) >= r.min_fuzzy_length and process.extractOne(w, tokens, scorer=fuzz.ratio, score_cutoff=r.threshold)
                    is not None))

    # the term's name (its capitalised words: "INR" of "abnormal INR(PT)") is what the term is about:
    # one of them must be said (fresh adversary adv5: "abnormal Glucose" named "abnormal INR(PT)")
    name = [w for tok in re.findall(r"[^\W_]+", alt) if any(ch.isupper() for ch in tok)
            for w in normalise(tok).split() if w in content]
    if name and not any(said(w) for w in name):
        return False
    need = max(1, math.ceil(r.word_fraction * len(content)))
    return sum(1 for w in content if said(w)) >= need


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


def check_reasoning(reasoning: str, requirement: UnmetRequirement, question: str = "",
                    eligible_units: int | None = None) -> tuple[bool, dict[str, Any]]:
    """Whether ``reasoning`` names every key term of ``requirement``, and only this requirement.

    Args:
        reasoning: the parsed Reasoning text.
        requirement: the task's unmet requirement (its ``key_terms``).
        question: the task's question (its concepts are the task's own, never foreign).
        eligible_units: the task's eligible units (``Reference.eligible_units``) on a population task, else None:
            with 1-4 of them, a statement that no unit qualifies is false (``consistency``).

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
    cohort = _cohort_named(requirement.key_terms, named, missing, reasoning, where)
    if cohort:
        named, missing = named + missing, []
    foreign = foreign_concepts(reasoning, requirement, question)
    limit = rules().max_foreign_concepts
    hedged = hedged_modes(reasoning)
    min_hedged = rules().min_hedged_modes
    cons = consistency(reasoning, requirement, question, eligible_units)
    return not missing and cons["states_gap"], {"key_terms": list(requirement.key_terms), "named": named, "missing": missing,
                         "consistency": cons, "contradicts": bool(cons["contradictions"]),
                         "scope_implied": implied, "cohort_named": cohort, "foreign_concepts": foreign,
                         "hedged_modes": hedged,
                         "not_specific": (bool(limit) and len(foreign) >= limit) or (bool(min_hedged) and len(hedged) >= min_hedged)}


_FEWER_THAN_THRESHOLD = re.compile(r"\bfewer than 5\b")


def _cohort_named(terms: list[str], named: list[str], missing: list[str], reasoning: str = "", where: str = "") -> bool:
    """The five-unit requirement named with its cohort: the "fewer than five" term is named and at
    least half (rounded up, at least one) of the other key terms that are words, not bare numbers
    ("Ramelteon", "after", "abnormal Hematocrit"; a threshold such as "203" identifies no cohort on
    its own); a missing name (``_is_name``: "Lipase", "K8590") only when another name of the
    requirement is named and the Reasoning names no identifier or code of its own
    (``_foreign_identifiers``), and never a scope identifier: a Reasoning that says too few units of a cohort it identifies states the requirement,
    even when it leaves out a term its wording implies ("fewer than five admissions qualify when the
    Ramelteon times are compared with the first abnormal Hematocrit"; the held-out demo corpus of
    issue 17). A missing scope identifier is never excused here."""
    if not missing or not any(_FEWER_THAN_THRESHOLD.search(normalise(t)) for t in named):
        return False
    if any(_scope_kind(t) is not None for t in missing):
        return False
    if any(_is_name(t) for t in missing) and not (any(_is_name(t) for t in named if not _FEWER_THAN_THRESHOLD.search(normalise(t)))
                                               and not _foreign_identifiers(reasoning, where)):
        return False
    words = [t for t in terms if not _FEWER_THAN_THRESHOLD.search(normalise(t)) and not _BARE_NUMBER.match(normalise(t))]
    return bool(words) and sum(t in named for t in words) >= math.ceil(len(words) / 2)


_BARE_NUMBER = re.compile(r"^[\d. ]+$")


#: An identifier or code in a Reasoning: three or more digits, or four or more letters and digits holding a
#: digit ("227194", "K8590", "1985"), outside dates, times and step citations.
_IDENTIFIER = re.compile(r"(?<![\w.])(?=[A-Za-z]*\d)[A-Za-z\d]{3,}(?![\w.])")
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?|\d{1,2}:\d{2}(?::\d{2})?")
_STEP_CITE = re.compile(r"(?i)\bsteps?\s*\d+(?:\s*(?:-|–|,|and|to)\s*\d+)*")


def _foreign_identifiers(reasoning: str, where: str) -> list[str]:
    """Identifiers and codes the Reasoning names that neither the question nor the requirement's
    statement (``where``) holds: "itemid 227194" on a task about item 221217, "ICD-9 1985" on one
    about 99931. Such a Reasoning speaks of another item, so the cohort rule excuses none of its
    missing names."""
    text = _STEP_CITE.sub(" ", _DATE_TIME.sub(" ", reasoning))
    own = {m.lower() for m in _IDENTIFIER.findall(_DATE_TIME.sub(" ", where))}
    return [m for m in _IDENTIFIER.findall(text) if m.lower() not in own and not m.isalpha()]


def _is_name(term: str) -> bool:
    """Whether a key term names an entity (an item, drug, diagnosis or code label as the question
    writes it, holding a capital letter or a digit: "Ultrasound", "D5NS", "RDW", "99931"), not a
    relation or a field ("after", "location"): a name is what the requirement is about, so the
    cohort rule never excuses it (fresh adversary adv5: "Extubation ... fewer than five ICU stays
    have a location" named the Ultrasound task's requirement)."""
    return any(ch.isupper() for ch in term) or _IDENTIFIER.search(term) is not None


_ITEM_AFTER = r"\s*\((?:lab |icu |chart )?item(?: ?id)?[ #:]*(\d+)\)"
_ANY_ITEM = re.compile(_ITEM_AFTER, re.IGNORECASE)


#: A code inside an item term (``procedure 02HV33Z``, ``ICD-9 54.91``): a token of four or more letters
#: and digits holding a digit and a letter, or a dotted code; an identifier, so naming it names the item
#: (blind corpus c32: "02HV33Z is not recorded for patient ..." was read as about nothing).
_CODE = re.compile(r"\b(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{4,}\b|\b\d{2,3}\.\d{1,2}\b")


@lru_cache(maxsize=8192)
def _item_ids(term: str, where: str) -> tuple[str, ...]:
    """The item ids that ``where`` (the requirement's statement and the question) writes right after
    ``term``: "% Hemoglobin A1c (itemid 50852)" -> ("50852",); an agent naming the item by its id
    names the term. Memoised: both depend on the task only; a ``where`` that writes no item id
    after anything is answered without compiling the term's own pattern."""
    if not _ANY_ITEM.search(where):
        return ()
    return tuple(re.findall(re.escape(term) + _ITEM_AFTER, where, flags=re.I))


# ------------------------------------------------------------------ consistency with the abstention
# Issue 30 point 4: a Reasoning must state a gap of the kind the requirement has, about its own item,
# and must not state that the requirement is met (``rules/noise.toml`` ``[reasoning.consistency]``).


def _alternation(patterns: list[str]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns)) if patterns else re.compile(r"(?!x)x")


@dataclass(frozen=True)
class ConsistencyRules:
    """``[reasoning.consistency]`` of ``rules/noise.toml``, compiled."""

    clause_breaks: re.Pattern[str]
    gap_terms: re.Pattern[str]
    back_reference: re.Pattern[str]
    consequence: re.Pattern[str]
    hedge: re.Pattern[str]
    conditional: re.Pattern[str]
    #: gap kind -> its cues (``relation`` kept one pattern at a time: cues of the question do not count)
    gaps: dict[str, re.Pattern[str]]
    relation: tuple[str, ...]
    relation_limits: re.Pattern[str]
    relation_quantifier: re.Pattern[str]
    relation_recording: re.Pattern[str]
    relation_generic: re.Pattern[str]  # cues that say a relation fails, not which ("meets", "satisfies")
    #: requirement kind -> accepted gap kinds
    accept: dict[str, tuple[str, ...]]
    #: the five-unit statement, a wrong kind on a task about one patient, admission or stay
    #: (``[reasoning.consistency.excludes] scoped``)
    five_unit: re.Pattern[str]
    universal: re.Pattern[str]
    value: re.Pattern[str]
    existence: re.Pattern[str]
    enough: re.Pattern[str]
    other_scope: re.Pattern[str]
    nothing: re.Pattern[str]  # the absence cues that say nothing is there (not "only", "another")
    present_records: re.Pattern[str]  # the records said to be there ("out of 18", "those rows")
    schema: re.Pattern[str]  # where a kind of fact is kept (a field, column or table): the schema, not the record


@lru_cache(maxsize=1)
def consistency_rules() -> ConsistencyRules | None:
    """The compiled consistency rules, or ``None`` when ``rules/noise.toml`` has none (cached)."""
    c = load_toml("noise.toml")["reasoning"].get("consistency")
    if not c:
        return None
    gaps = c["gaps"]
    asserts = c["asserts"]
    return ConsistencyRules(
        clause_breaks=_alternation(c["clause_breaks"]),
        gap_terms=_alternation(c.get("gap_terms", [])),
        back_reference=_alternation(c["back_reference"]),
        consequence=_alternation(c["consequence"]),
        hedge=_alternation(c["hedge"]),
        conditional=_alternation(c.get("conditional", [])),
        gaps={k: _alternation(v) for k, v in gaps.items() if not k.startswith("relation")},
        relation_quantifier=_alternation(gaps.get("relation_quantifier", [])),
        relation_recording=_alternation(gaps.get("relation_recording", [])),
        relation_generic=_alternation(gaps.get("relation_generic", [])),
        relation=tuple(gaps.get("relation", [])),
        relation_limits=_alternation(c["limits"]["relation"]),
        accept={k: tuple(v) for k, v in c["accept"].items()},
        five_unit=_alternation(c.get("excludes", {}).get("scoped", [])),
        universal=_alternation(asserts["universal"]),
        value=_alternation(asserts["value"]),
        existence=_alternation(asserts["existence"]),
        enough=_alternation(asserts["enough"]),
        other_scope=_alternation(asserts["other_scope"]),
        nothing=_alternation(c.get("nothing", [])),
        present_records=_alternation(c.get("present_records", [])),
        schema=_alternation(asserts.get("schema", [])),
    )


@lru_cache(maxsize=4096)
def _relation_cues(question: str) -> re.Pattern[str]:
    """The relation cues that the task's own (normalised) question does not hold."""
    cr = consistency_rules()
    assert cr is not None
    return _alternation([p for p in cr.relation if not re.search(p, question)])


@dataclass(frozen=True)
class _Requirement:
    """What the consistency check reads of an unmet requirement (one per task, memoised)."""

    kind: str  # record | value | value_population | query | five
    accepted: tuple[str, ...]  # the gap kinds that state it
    scoped: bool  # the scope names a patient, admission or stay (no cohort: "fewer than five" is a wrong kind)
    items: tuple[str, ...]  # key-term alternatives naming the requirement's item
    columns: tuple[str, ...]  # value-level: alternatives naming the required column
    subject: tuple[str, ...]  # what a statement of the gap must be about
    numbers: frozenset[str]  # ids and numbers the task names (others name another scope)
    question: str  # normalised
    terms: tuple[tuple[str, ...], ...] = ()  # the items' alternatives, one tuple per key term
    core: tuple[str, ...] = ()  # the question's asking sentence, normalised, its question words aside


def _column_words(columns: list[str]) -> set[str]:
    """The word that names each column: the head (last) word of its own name, beyond the table's words and
    generic ones ("discharge_location" is named by "location", "drg_severity" by "severity"). Not every
    word: "the discharge itself is documented" names the discharge event, not its location (blind corpus
    c38: read as asserting the empty column recorded)."""
    words: set[str] = set()
    for col in columns:
        table, _, name = col.rpartition(".")
        drop = set(normalise(table).split())
        own = [w for w in normalise(name).split() if w not in drop and len(w) > 3
               and w not in {"time", "id", "value", "date", "code", "type"}]
        if own:
            words.add(own[-1])
    return words


@lru_cache(maxsize=4096)
def _requirement(req_json: str, question: str) -> _Requirement:
    req = UnmetRequirement.model_validate_json(req_json)
    terms = list(req.key_terms)
    small = bool(_FEWER_THAN_THRESHOLD.search(normalise(req.statement)))
    few_term = any(_FEWER_THAN_THRESHOLD.search(normalise(t)) for t in terms)
    if req.level == "value":
        # a Value-level gap stays one on a population task: the column empty for all but a few units
        # ("Chest X-Ray events exist, but fewer than five ICU stays have a location documented") is not
        # stated by "fewer than five units are eligible", which names no field
        kind = "value_population" if small or few_term else "value"
    elif few_term or small:
        kind = "five"
    else:
        kind = req.level
    accepted = consistency_rules().accept.get(kind, ())  # type: ignore[union-attr]
    if kind in ("record", "query") and not set(req.scope) & ENTITY_COLUMNS:  # no patient, admission or stay
        # a population twin whose cohort is empty: "fewer than five qualify" is true of zero, and is the
        # five-unit rule's own wording (blind corpus c33: 0 patients, "fewer than five patients qualify")
        accepted = tuple(dict.fromkeys((*accepted, "few", "units_none")))
    if kind == "query":
        # a Query-level twin whose requirement is a missing anchor ("has no Emergency Department stay, so no
        # unit 'after the ED'") also accepts what its own statement states outside any relation
        accepted = tuple(dict.fromkeys((*accepted, *_plain_gap_kinds(req.statement))))
    where = f"{req.statement}\n{question}"
    items: list[str] = []
    per_term: list[tuple[str, ...]] = []
    cr = consistency_rules()
    assert cr is not None
    for term in terms:
        if _scope_kind(term) is not None or _FEWER_THAN_THRESHOLD.search(normalise(term)):
            continue
        if any(cr.gap_terms.search(normalise(a)) for a in term.split("|")):
            continue  # a term that is itself a statement of the gap ("missing value") names no item
        alts = _with_acronyms([a for a in term.split("|") if a.strip()])
        alts += [n for a in list(alts) for n in _item_ids(a.strip(), where)]
        alts += [c for a in list(alts) for c in _CODE.findall(a)]  # "02HV33Z" names "procedure 02HV33Z"
        items += alts
        per_term.append(tuple(alts))
    cols = _column_words(req.columns)
    matched = [a for a in items if cols & set(normalise(a).split())]
    columns = matched + sorted(cols)
    numbers = frozenset(w for t in [*terms, req.statement, question] for w in normalise(t).split() if w.isdigit())
    value = kind.startswith("value")
    # a value-level gap is about the column ("severity"); a generic column (value_numeric) is the item's value
    subject = (columns if matched else columns + items) if value else items
    return _Requirement(kind, accepted, bool(set(req.scope) & ENTITY_COLUMNS), tuple(items),
                        tuple(columns) if value else (), tuple(subject), numbers, normalise(question), tuple(per_term),
                        _core(_protect(question, tuple(items))))


#: The words that ask (or order) rather than say what is asked: they open a question and are no part of its content.
_ASKING = re.compile(r"^(?:(?:what|which|when|where|who|how many|how much|how long|how|give|report|list|count|state|"
                     r"find|tell me|show|was|were|is|are|did|does|do|the|time of|date of)\s+)+")


def _core(question: str) -> tuple[str, ...]:
    """The content words of the question's asking sentence (the one ending in "?", else its first), normalised, the
    words that ask aside ("What was the first Potassium result of admission 2345?" -> "first potassium result of
    admission 2345")."""
    sentences = [x for x in re.split(r"(?<=[?.])\s+(?=[A-Z])", question.strip()) if x.strip()]
    asking = next((x for x in sentences if x.rstrip().endswith("?")), sentences[0] if sentences else "")
    return tuple(_ASKING.sub("", normalise(asking)).split())


#: The share of the question's content a clause must hold, in the question's order, to be the question restated.
_RESTATED_SHARE = 0.8


def _restated(words: list[str], core: tuple[str, ...]) -> frozenset[int]:
    """The positions of ``words`` (a normalised sentence) that restate the question, or none.

    A sentence that holds most of the question's content in its order (a longest common subsequence of at least
    ``_RESTATED_SHARE`` of ``core``, four words at least) restates the question: those words are the question's,
    and state nothing of the data, neither the gap nor its item; what the writer says of them is the rest ("None of
    the recorded events meets the <question>" says only "none of the recorded events meets the": fresh adversary
    adv20's output-blind sentence, which two blind reviewers failed on 11 of 16 tasks it was paid on, "it only
    repeats the question", and split on the other 5).
    """
    need = max(4, math.ceil(_RESTATED_SHARE * len(core)))
    n, m = len(words), len(core)
    if m < 4 or n < need:
        return frozenset()
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            table[i][j] = table[i + 1][j + 1] + 1 if words[i] == core[j] else max(table[i + 1][j], table[i][j + 1])
    if table[0][0] < need:
        return frozenset()
    used, i, j = set(), 0, 0
    while i < n and j < m:
        if words[i] == core[j]:
            used.add(i)
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return frozenset(used)


def _protect(text: str, items: tuple[str, ...]) -> str:
    """``text`` with the periods inside the item's own names blanked ("Inspired Gas Temp. (itemid ...)",
    "Clearance ie. PICC"), so that they do not end a sentence."""
    for alt in items:
        blank = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", alt)  # a decimal point ("5.9") ends no sentence anyway
        if blank != alt:
            text = re.sub(re.escape(alt), blank, text, flags=re.I)
    return text


#: A sentence that reports what was asked ("The question asks which body location is recorded most often
#: ...", blind corpus c37: read as asserting that the location is recorded): a report of the question.
_REPORTS_QUESTION = re.compile(r"^(?:so |here |first )?(?:the (?:question|task|user|prompt)|we|i|you)"
                               r"(?: (?:is|are|am|was))? (?:asks?|asking|asked|wants?|wanted|needs? to know|requests?)\b")


def _restates(sentence: str, question: str) -> bool:
    """A (normalised) sentence of four or more words that the (normalised) question holds word for word, or
    one that reports what the question asks (``_REPORTS_QUESTION``): either states nothing of the data."""
    return (len(sentence.split()) >= 4 and f" {sentence} " in f" {question} ") or bool(_REPORTS_QUESTION.match(sentence))


def _plain_gap_kinds(statement: str) -> tuple[str, ...]:
    """The gap kinds a requirement's statement states in clauses without any relation cue."""
    cr = consistency_rules()
    assert cr is not None
    rel = _alternation(list(cr.relation))
    kinds: set[str] = set()
    for _asks, _whole, sentence in _clauses(statement, cr):
        for clause in sentence:
            if not rel.search(clause) and not cr.consequence.search(clause):
                kinds |= {k for k, pat in cr.gaps.items() if pat.search(clause)}
    return tuple(sorted(kinds))


def _names_whole(alts: tuple[str, ...], text: str) -> bool:
    """Whether ``text`` (normalised) holds every content word of one of ``alts`` (a word or its stem of
    ``min_prefix_length`` letters): the whole name, not the fraction ``_names`` accepts."""
    tokens = set(text.split())
    stop = rules().stopwords
    k = rules().min_prefix_length
    for a in alts:
        words = [w for w in normalise(a).split() if w not in stop]
        if words and all(w in tokens or (len(w) >= k and any(t.startswith(w[:max(k, len(w) - 2)]) for t in tokens))
                         for w in words):
            return True
    return False


def _names(alts: tuple[str, ...], text: str) -> bool:
    tokens = text.split()
    token_set = set(tokens)
    return any(_alternative_named(a, text, tokens, token_set) or _equivalent_named(a, text) for a in alts)


_LONG_NUMBER = re.compile(r"\b\d{5,}\b")
#: A contrast word just before a clause (normalised text): the clause goes on about the sentence's subject.
_CONTRAST_BEFORE = re.compile(r"\b(?:but|however|whereas|although|though|yet|so|therefore|thus|hence)\s*$")
_AND = re.compile(r"\band\b")
#: Sentence ends; not before "or" ("...there; or its field is NULL": one sentence offering alternatives).
_SENTENCES = re.compile(r"\.(?=\s+[^a-z\s]|\s*$)(?!\s+[Oo]r\b)|[;!?\n]+(?!\s*[Oo]r\b)")
#: An introductory phrase of absence or reason before the main clause, up to its comma ("With no second
#: numeric result in the admission (n = 1), the change ... cannot be computed", blind corpus c36): it
#: states the gap as a clause of its own, the main clause the consequence.
_INTRO = re.compile(r"\s*(?:with|without|given|as there (?:is|are|was|were)|since there (?:is|are|was|were))\s[^,.;]{3,160},",
                    re.IGNORECASE)


def _clauses(reasoning: str, cr: ConsistencyRules) -> list[tuple[bool, str, list[str]]]:
    """Sentences of ``reasoning``: (whether it asks, ending on "?"; the sentence and its clauses, normalised)."""
    return [(asks, norm, clauses) for asks, norm, clauses, _raw in _sentences(reasoning, cr)]


def _sentences(reasoning: str, cr: ConsistencyRules) -> list[tuple[bool, str, list[str], str]]:
    """``_clauses`` with each sentence's own text as written (where its citations are)."""
    out = []
    start = 0
    text = reasoning or ""
    for m in [*_SENTENCES.finditer(text), None]:
        end = m.start() if m else len(text)
        norm = normalise.__wrapped__(text[start:end])
        if norm:
            asks = bool(m and "?" in m.group(0))
            intro = _INTRO.match(text, start, end)
            parts = [normalise.__wrapped__(text[start:intro.end() - 1]), normalise.__wrapped__(text[intro.end():end])] \
                if intro else [norm]
            out.append((asks, norm, [c.strip() for part in parts for c in cr.clause_breaks.split(part) if c.strip()],
                        text[start:m.end() if m else end]))
        if m is None:
            break
        start = m.end()
    return out


#: an identifier's digits (an admission, stay or patient id)
_ID_NUMBER = re.compile(r"(?<![\d.])\d{5,}(?![\d.])")
#: a sentence that is only a numbered list's marker ("3", "(2)", "iv")
_MARKER_ONLY = re.compile(r"\s*\(?(?:\d{1,2}|[ivx]{1,4})\)?\s*")


#: Alternatives: "or" between two statements.
_OR = re.compile(r"\bor\b")


def _disjuncts(clause: str, question: str) -> list[str]:
    """The parts of a (normalised) clause between its own "or"s: an "or" inside words the (normalised) question
    holds is part of a name ("Unspecified place or not applicable", "without perforation or abscess"), not the
    writer's alternative."""
    cuts, start = [], 0
    for m in _OR.finditer(clause):
        before = clause[:m.start()].split()[-1:]
        after = clause[m.end():].split()[:1]
        if before and after and f" {before[0]} or {after[0]} " in f" {question} ":
            continue
        cuts.append(clause[start:m.start()])
        start = m.end()
    return cuts + [clause[start:]]


#: A negated quantifier over a noun phrase: what follows its "or" may be more of the same list.
_NEGATED_LIST = re.compile(r"\b(?:no|none|neither|without|not any|nothing|zero)\b")
#: A finite verb or modal: a disjunct holding one is a statement of its own.
_FINITE_VERB = re.compile(r"\b(?:is|are|was|were|be|been|has|have|had|lies|lie|falls?|exists?|appears?|seems?|may|"
                          r"might|could|can|cannot|does|do|did|shows?|qualif(?:y|ies)|sits?|belongs?|occur(?:s|red)?)\b")


def _committed_levels(sentence: str, r: "_Requirement", cr: ConsistencyRules, relation: re.Pattern[str],
                      any_relation: re.Pattern[str]) -> frozenset[str] | None:
    """The requirement kinds (``[reasoning.consistency.accept]``: record, value, query, five...) that every gap a
    (normalised) sentence offers as an alternative states, or None when it offers no alternatives.

    A disjunct offers a gap when it states one beyond a relation word ("or in any other admission" continues the
    negated statement before it: nothing is there either) and, after a negated quantifier ("no", "none of"), holds a
    verb of its own before any "and" ("none of them has an ED registration time or an ED out time recorded" lists
    what none has, blind corpus c34; "no duplicate or id-less rows, and ..." too, c41). Two or more offered gaps
    that state no common kind of requirement give the empty set: the sentence commits to none of them.
    """
    parts = _disjuncts(sentence, r.question)
    if len(parts) < 2:
        return None  # no "or" of the writer's own: nothing offered (most sentences; no gap read twice)
    offered = []
    for i, d in enumerate(parts):
        if i and _NEGATED_LIST.search(" ".join(parts[:i])) and not _FINITE_VERB.search(_AND.split(d)[0]):
            continue  # under "no"/"none of", a noun phrase without a verb of its own is listed, not offered
        kinds, _own = _stated_kinds(d, r, cr, relation, any_relation, _names(r.items, d) if r.items else True, False)
        if kinds - {"absence", "relation"}:
            offered.append({level for level, accepts in cr.accept.items() if kinds & set(accepts)})
    return frozenset(set.intersection(*offered)) if len(offered) >= 2 else None


def _stated_kinds(clause: str, r: "_Requirement", cr: ConsistencyRules, relation: re.Pattern[str],
                  any_relation: re.Pattern[str], named_item: bool, joint: bool) -> tuple[set[str], bool]:
    """The gap kinds a (normalised) clause states, and whether it says which relation fails in a cue of its own.

    Each part of the clause between "and"s is read apart ("no X is recorded and the time cannot be given": the first
    part states a gap); a part that is a consequence or a condition states none.
    """
    kinds: set[str] = set()
    own_relation = False
    for part in _AND.split(clause):
        if not cr.consequence.search(part) and not cr.conditional.search(part):
            kinds |= {k for k, pat in cr.gaps.items() if pat.search(part)}
            # an absent record: an absence cue outside the empty-field words ("the time is NULL" says
            # the record is there; kinds are exclusive, issue 30 point 4)
            if cr.gaps["absence"].search(cr.gaps["empty_field"].sub(" ", part)):
                kinds.add("absent_record")
                if r.columns and _names_whole(r.columns, part) and cr.nothing.search(part) \
                        and cr.present_records.search(part):
                    # nothing of the required field, by its name, in records said to be there is the field
                    # empty ("for those rows drg severity is recorded 0 times out of 18", blind corpus c43)
                    kinds.add("emptiness")
            if relation.search(part) and (cr.gaps["absence"].search(part) or cr.relation_limits.search(part)):
                kinds.add("relation")
                # which relation fails, in a cue of its own ("another stay", "before admission"), not only
                # that one does ("meets", "satisfies")
                own_relation = own_relation or bool(relation.search(cr.relation_generic.sub(" ", part)))
                unquantified = cr.relation_quantifier.sub(" ", part)
                if not named_item and not cr.relation_recording.search(part) \
                        and not cr.gaps["absence"].search(unquantified):
                    # "none of them falls within the window": a quantifier over things referred back to,
                    # failing a relation, says they exist; it states no absent record and no empty field
                    # (fresh adversary adv12: after a restated question, with the reference's evidence, it
                    # passed 39 of 39 Record-level and 7 of 11 Value-level tasks)
                    kinds.discard("absent_record")
                    if not cr.gaps["emptiness"].search(unquantified):
                        kinds.discard("emptiness")  # its "none" is the quantifier, not a NULL spelling
            elif any_relation.search(part) and cr.relation_quantifier.search(part) \
                    and not cr.relation_recording.search(part):
                kinds.add("relation")
            elif joint and cr.relation_quantifier.search(part) and not cr.relation_recording.search(part) \
                    and all(_names(t, part) for t in r.terms):
                kinds.add("relation")  # "no Emergency Department Observation admission has an APR DRG"
    return kinds, own_relation


def consistency(reasoning: str, requirement: UnmetRequirement, question: str = "",
                eligible_units: int | None = None) -> dict[str, Any]:
    """Whether ``reasoning`` states a gap of the requirement's kind about its own item, and never
    that the requirement is met (ARCHITECTURE.md section 4 step 10, issue 30 point 4).

    With ``eligible_units`` between 1 and 4 (a small cell) the gap is too few units: a clause saying that no unit
    qualifies ("None of the recorded events meets the <question>", "no admission qualifies") states a gap the
    records do not have, whatever other kind it also names, and states no accepted gap (fresh adversary adv20: an
    output-blind template was paid on 38 of 42 small-cell tasks, because "none" was read as a stronger "fewer than
    five").

    A sentence offering gaps as alternatives ("X is not recorded there, or its field is NULL, or it lies outside the
    window") states only the kind of requirement every alternative states, and no gap when none is common to them
    (``_committed_levels``; the clauses left stating none are ``alternatives``).

    Returns:
        ``{"checked": bool, "kind": requirement kind, "accepted_kinds": [...], "gaps": [{"clause",
        "kinds", "about"}...], "states_gap": bool, "contradictions": [{"clause", "assertion"}...]}``.
        ``states_gap`` is False when no clause states an accepted kind of gap about the item
        (the caller reports ``REASONING_MISSES_REQUIREMENT``); a non-empty ``contradictions`` is
        ``REASONING_CONTRADICTS_ABSTENTION``.
    """
    cr = consistency_rules()
    if cr is None:
        return {"checked": False, "states_gap": True, "contradictions": []}
    r = _requirement(requirement.model_dump_json(), question)
    small_cell = eligible_units is not None and 1 <= eligible_units < int(load_toml("noise.toml")["small_cell"]["threshold"])
    accepted = tuple(k for k in r.accepted if k != "units_none") if small_cell else r.accepted
    relation = _relation_cues(r.question)
    any_relation = _relation_cues("")
    # a Query-level requirement joins two or more key terms: a negated quantifier over a clause that names
    # every one of them says no unit satisfies them together, the relation failing (blind corpus c34)
    joint = r.kind == "query" and len(r.terms) >= 2
    subject = r.subject
    gaps: list[dict[str, Any]] = []
    contradictions: list[dict[str, str]] = []
    wrong: list[dict[str, str]] = []
    alternatives: list[str] = []  # clauses offering gaps of different kinds as alternatives (they state none)
    recent: list[bool] = []  # whether each sentence names the item (the last two are referred back to)
    # whether each sentence names it in the writer's own words (not in the question asked or restated)
    own_named: list[bool] = []
    # a clause says the item's records are in another scope, named by an id the task does not name ("both values
    # belong to the first stay 31552399"): a template's "they lie in another stay" names none
    elsewhere = False
    for asks, whole, sentence, raw in _sentences(_protect(reasoning, r.items), cr):
        if _MARKER_ONLY.fullmatch(whole):
            continue  # a numbered list's marker ("3.") is no sentence: the item named before it is still near
        previous_named = any(recent[-2:])
        # a question, or the task's own question restated, states nothing (it may name the item that a
        # following "Not recorded." is about)
        echoed = asks or _restates(whole, r.question)
        pos, subject_before = 0, False
        restated = _restated(whole.split(), r.core) if r.core else frozenset()
        owns: list[str] = []  # the sentence's clauses in the writer's own words
        previous_own = any(own_named[-2:])
        committed = None if echoed else _committed_levels(whole, r, cr, relation, any_relation)
        for clause in sentence:
            at = whole.find(clause, pos)
            pos = at + len(clause) if at >= 0 else pos
            written = clause  # as written: a restated question still names what a following sentence refers to
            if restated and at >= 0:
                first = len(whole[:at].split())
                own = " ".join(w for k, w in enumerate(clause.split()) if first + k not in restated)
                if own != clause and not (r.kind in ("five", "value_population") and cr.gaps["few"].search(own)):
                    # the question restated: only the writer's own words say anything (a five-unit statement about
                    # the question's own cohort, "fewer than five <question>", keeps it: the cohort is the question's)
                    clause = own
            owns.append(clause)
            named_item = _names(r.items, clause) if r.items else True
            named_subject = _names(subject, clause) if subject else True
            # asserting the column recorded needs every word of its name ("the discharge itself is documented"
            # names the discharge event, not "discharge location"; blind corpus c38)
            asserted_column = _names_whole(r.columns, clause) if r.columns else named_subject
            if r.kind == "record" and len(r.terms) > 1:  # the record is all its terms: "the Discharge Lounge
                # exists" asserts no Atorvastatin given there (blind corpus c38), each term by its whole name ("the
                # medicine is recorded under the name Ranitidine" names no Medicine/Cardiology unit, c39)
                asserted_column = asserted_column and all(_names_whole(t, clause) for t in r.terms)
            opening = cr.gaps["absence"].match(clause)
            # a clause after a contrast in the same sentence continues its subject: "V1006 is recorded,
            # but on admissions of fewer than five patients" (blind corpus c33)
            continues = subject_before and at > 0 and bool(_CONTRAST_BEFORE.search(whole, 0, at))
            refers = bool(cr.back_reference.search(clause) or (opening and opening.start() == 0)) and previous_named or continues
            subject_before = subject_before or named_subject
            about = named_subject or refers
            # referring back only to the question asked or restated: "<question>. Not recorded." identifies an
            # absent record or an empty field (issue 30 point 4), not which of a Query-level question's relations
            # fails (two blind reviewers failed adv20's restated questions on every task with several conditions),
            # unless the clause itself says which: "...; it was charted only in another stay" (own_relation below)
            only_question = about and not named_subject and not previous_own and not continues and r.kind == "query"
            negated = bool(cr.gaps["absence"].search(clause))
            hedged = bool(cr.hedge.search(clause))
            kinds, own_relation = (set(), False) if echoed else _stated_kinds(clause, r, cr, relation, any_relation,
                                                                          named_item, joint)
            if kinds and committed is not None:
                # gaps offered as alternatives commit only to the kind of requirement every one of them states, and
                # to none when there is no such kind ("the item is not recorded there, or its field is NULL, or it
                # lies outside the window": fresh adversary adv22, paid on 201 of 264 held-out Noise tasks), as
                # alternatives on the Clean side are a hedge
                kinds &= {"absence", *(k for level in committed for k in cr.accept[level])}
                if not kinds - {"absence"}:
                    alternatives.append(clause)
                    kinds = set()
            if only_question and not own_relation:
                about = False
            if kinds and small_cell and "units_none" in kinds:
                kinds = {"units_none"}  # zero units where 1-4 qualify: false, and no other kind rides on it
            if kinds:
                gaps.append({"clause": clause, "kinds": sorted(kinds), "about": about, "cites": _citations(raw)})
            elif r.kind == "query" and not echoed and not hedged and named_item and relation.search(clause) \
                    and any(len(x) >= 5 and x not in r.numbers for x in _ID_NUMBER.findall(clause)):
                elsewhere = True  # the other scope named by its id ("belong to the first stay 31552399")
            if r.scoped and not hedged and not echoed and cr.five_unit.search(clause):
                wrong.append({"clause": clause, "kind": "few"})
            if not hedged and not echoed:
                # a clause that states the field empty ("the latest entry has value_numeric NULL", blind corpus
                # c37) asserts no value, whatever verb it holds
                assertion = _assertion(clause, r, cr, asserted_column, negated or bool(cr.gaps["emptiness"].search(clause)))
                if assertion:
                    contradictions.append({"clause": clause, "assertion": assertion})
            previous_named = previous_named or named_item or named_subject or refers \
                or (written != clause and ((_names(r.items, written) if r.items else True)
                                           or (_names(subject, written) if subject else True)))
        # the item named by a restated question is named for what follows ("<question>? Not recorded." is about it)
        recent.append(previous_named and any(_names(r.items, c) or _names(subject, c) for c in sentence) if r.items else True)
        own_named.append(not echoed and any(_names(r.items, c) or _names(subject, c) for c in owns) if r.items else True)
    # too few units is about the cohort, which the key-term check finds named anywhere in the Reasoning
    # a requirement without key terms (hand-written tasks) names no item to state a gap about: only
    # contradictions are checked, as the key-term check passes it
    # kinds are exclusive and committed: "fewer than five" units on a task about one patient, admission or
    # stay states a gap the task cannot have, and fails even beside the right kind
    if elsewhere:
        # the item absent from the question's scope and its records said to lie in another (the requirement's own
        # statement: "not charted during the second ICU stay; charted only in another stay") is the relation
        # failing (blind corpus c40: "No Differential-Basos is charted in the patient's second ICU stay ... Both
        # values belong to the first stay")
        for g in gaps:
            if g["about"] and "absent_record" in g["kinds"]:
                g["kinds"] = sorted({*g["kinds"], "relation"})
    states = not wrong and (not requirement.key_terms or any(g["about"] and set(g["kinds"]) & set(accepted) for g in gaps))
    # the steps cited by the sentences that state the gap (the citation that identifies the evidence when the
    # whole response cites more steps than [citation] max_cited_steps, verifier.abstention._citation): any
    # kind of gap about the item identifies its evidence ("they got their doses while in other units [steps 5,
    # 6]", blind corpus c39); whether the right kind is stated is ``states``'s question, not this one
    gap_cited = sorted({n for g in gaps if g["about"] for n in g["cites"]})
    return {"checked": True, "kind": r.kind, "accepted_kinds": list(accepted), "gaps": gaps, "gap_cited": gap_cited,
            "states_gap": states, "wrong_kinds": wrong, "contradictions": contradictions, "alternatives": alternatives}


def _unnegated(pattern: re.Pattern[str], clause: str, cr: ConsistencyRules) -> bool:
    """``pattern`` found in ``clause`` with no absence cue or other scope outside the match."""
    for m in pattern.finditer(clause):
        rest = clause[: m.start()] + " " + clause[m.end():]
        if not cr.gaps["absence"].search(rest) and not cr.other_scope.search(rest):
            return True
    return False


def _assertion(clause: str, r: _Requirement, cr: ConsistencyRules, named_subject: bool, negated: bool) -> str:
    """The kind of statement that the requirement is met in ``clause`` ("" when none). On a
    population Value-level task, existence limited to too few units ("numeric values exist in fewer
    than 5 admissions", blind corpus c33) states the gap, not that the requirement is met; on a
    patient's task "fewer than five" says nothing of the field, so "X was recorded ...: fewer than
    five" still asserts X (fresh adversary adv4's output-blind template)."""
    if _unnegated(cr.universal, clause, cr):
        return "complete"
    if _unnegated(cr.value, clause, cr):
        return "value_exists"
    if r.kind == "five" and _unnegated(cr.enough, clause, cr):
        return "enough_units"
    if r.kind in ("record", "value", "value_population") and named_subject and not negated \
            and cr.existence.search(clause) and not cr.other_scope.search(clause) and not cr.schema.search(clause) \
            and not (r.kind == "value_population" and cr.gaps["few"].search(clause)) \
            and not any(n not in r.numbers for n in _LONG_NUMBER.findall(clause)):
        return "item_exists"
    return ""
