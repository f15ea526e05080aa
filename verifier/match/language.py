"""Responses written in another language, read in the words the rules are written in (blind corpus c36;
``rules/languages.toml``).

The Answer and Reasoning rules (context phrases, hedge words, gap kinds, key terms) are written in
English. A response in another language is first recognised by its function words (``detect``), then
rewritten word by word into the rules' vocabulary (``to_english``): "menos de cinco admisiones
elegibles" is "fewer than five admissions eligible", "2,54 (media ..., escala 1-4; 2,5395 sobre 76
admisiones)" is "2.54 (mean ..., scale 1-4; 2.5395 over 76 admissions)". Hedge words are rewritten
too ("o", "quizás"), so a hedge in the language fails as it does in English: the rewriting gives a
response no reading an English response would not get. Languages are data (one table each).

Layer: ``verifier.contract`` (rule tables) only.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from ..contract import load_toml

_WORD = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True)
class Language:
    """One table of ``rules/languages.toml``, compiled."""

    code: str
    markers: frozenset[str]
    min_hits: int
    min_share: float
    decimal_comma: bool
    pattern: re.Pattern[str]
    replacement: dict[str, str]
    elision: re.Pattern[str] | None = None
    accented: tuple[tuple[re.Pattern[str], str], ...] = ()
    script: str | None = None  # a script written without spaces (Han): read by characters, phrases anywhere
    punctuation: tuple[tuple[str, str], ...] = ()


def fold(text: str, case: bool = True) -> str:
    """Accents removed (NFKD, combining marks dropped), case-folded unless ``case`` is False."""
    s = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return s.casefold() if case else s


@lru_cache(maxsize=1)
def languages() -> tuple[Language, ...]:
    """The tables of ``rules/languages.toml`` (cached)."""
    out = []
    for code, t in load_toml("languages.toml").items():
        if code in ("en", "counts"):  # the rules' own language (its markers only); the count words of any language
            continue
        script = t.get("script")
        pairs = sorted(((a if script else fold(a), b) for a, b in t.get("words", [])), key=lambda p: -len(p[0]))
        alt = "|".join(re.escape(a).replace(r"\ ", r"\s+") for a, _ in pairs)
        # a script without spaces has no word boundaries: its phrases are read wherever they stand
        pattern = re.compile(f"(?:{alt})") if script else re.compile(rf"(?<![\w/-])(?:{alt})(?![\w/-])", re.IGNORECASE)
        out.append(Language(code, frozenset(fold(w) for w in t.get("markers", [])), int(t.get("min_hits", 3)),
                            float(t.get("min_share", 0.06)), bool(t.get("decimal_comma", False)),
                            pattern, {a: b for a, b in pairs},
                            re.compile(rf"(?i)\b({'|'.join(map(re.escape, t['elision']))})['’](?=\w)") if t.get("elision") else None,
                            tuple((re.compile(rf"(?<![\w/-]){re.escape(a)}(?![\w/-])"), b) for a, b in t.get("accented", [])),
                            script, tuple((a, b) for a, b in t.get("punctuation", []))))
    return tuple(out)


#: the code-point blocks of the CJK unified and compatibility ideographs (Unicode 15.1: URO, extensions A-I,
#: compatibility ideographs and their supplement): the characters whose Unicode name starts "CJK UNIFIED
#: IDEOGRAPH" or "CJK COMPATIBILITY IDEOGRAPH", read by range rather than by name on the hot path
_HAN = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2A6DF), (0x2A700, 0x2EE5F),
        (0x2F800, 0x2FA1F), (0x30000, 0x323AF))


def in_script(ch: str, script: str) -> bool:
    """Whether the character ``ch`` belongs to ``script`` ("Han": a CJK unified or compatibility ideograph, by
    its code-point block; another script by the start of its Unicode name)."""
    if script == "Han":
        o = ord(ch)
        return o >= 0x3400 and any(lo <= o <= hi for lo, hi in _HAN)
    return unicodedata.name(ch, "").startswith(script.upper())


def detect(text: str) -> Language | None:
    """The language ``text`` is written in when it is one of the tables' (module docstring), else ``None``
    (English, or a language without a table).

    Args:
        text: a response or part of one.

    Returns:
        The table whose markers stand in the text often enough: at least ``min_hits`` distinct markers
        making at least ``min_share`` of its words, and more of them than of the English function
        words of ``[en]``; of several such tables, the one with the most markers in the text.
    """
    for lang in languages():  # a script written without spaces: its share of the letters decides
        if lang.script is not None and not text.isascii():  # ASCII holds no letter of another script
            own = sum(in_script(c, lang.script) for c in text if c.isalpha())
            others = len([w for w in _WORD.findall(text) if not any(in_script(c, lang.script) for c in w)])
            if own >= lang.min_hits and own >= lang.min_share * (own + others):  # a character is about a word
                return lang
    words = _WORD.findall(fold(text).replace("'", " ").replace("’", " "))
    if not words:
        return None
    english = sum(w in _english() for w in words)
    best, most = None, english
    for lang in languages():  # the language whose markers stand most often (Spanish and French share "la", "de")
        if lang.script is not None:
            continue
        hits = [w for w in words if w in lang.markers]
        if len(set(hits)) >= lang.min_hits and len(hits) >= lang.min_share * len(words) and len(hits) > most:
            best, most = lang, len(hits)
    return best


@lru_cache(maxsize=1)
def _english() -> frozenset[str]:
    return frozenset(load_toml("languages.toml").get("en", {}).get("markers", []))


_DECIMAL_COMMA = re.compile(r"(?<![\d,.])(\d+),(\d+)(?![\d,]|\.\d)")
#: A number with thousands points and a decimal comma ("13.230,07 mL", blind corpus c39): the writer's
#: convention, so its other point-grouped numbers ("≈ 8.670 mL") are thousands too.
_THOUSANDS_POINT = re.compile(r"(?<![\d,.])\d{1,3}(?:\.\d{3})+(?=,\d)")
_POINT_GROUPED = re.compile(r"(?<![\d,.])\d{1,3}(?:\.\d{3})+(?![\d]|[.,]\d)")


_SPACES = re.compile(r"[ \t]{2,}")
_OPEN_SPACE = re.compile(r"\([ \t]+")
_TIGHT = re.compile(r"[ \t]+([),.;:!?])")


def decimal_points(text: str, lang: Language) -> str:
    """``text`` with its numbers written as the rules read them: where ``lang`` writes a decimal comma
    (``decimal_comma``), "24,9" is "24.9" (a list "1,2,3" is left alone), and where the text also groups thousands
    with points ("13.230,07"), its point-grouped numbers are thousands ("8.670" -> "8670"). Words are unchanged.

    Args:
        text: any text; lang: ``detect``'s result for it.

    Returns:
        The text, numbers rewritten; unchanged when the language writes decimal points.
    """
    if not lang.decimal_comma:
        return text
    if _THOUSANDS_POINT.search(text):
        text = _POINT_GROUPED.sub(lambda m: m.group().replace(".", ""), text)
        text = _THOUSANDS_POINT.sub(lambda m: m.group().replace(".", ""), text)
    return _DECIMAL_COMMA.sub(r"\1.\2", text)


def to_english(text: str, lang: Language) -> str:
    """``text`` (in ``lang``) rewritten into the rules' vocabulary: accent-folded, each word or phrase of
    the table replaced (in any case, never a word joined to a slash: "mmol/L" is a unit; other words
    keep their case, so units and names are as written), and a decimal comma written as a point where the language
    uses one ("2,54" -> "2.54"; a list "1,2,3" is left alone); where the text writes thousands with points
    beside a decimal comma ("13.230,07"), its point-grouped numbers are read as thousands ("8.670" -> "8670").

    Args:
        text: the response text; lang: ``detect``'s result for it.

    Returns:
        The rewritten text. Identifiers, codes, units and numbers are unchanged.
    """
    if lang.script is not None:  # read by characters: each phrase a word between spaces, the script's punctuation ours
        s = text
        for a, b in lang.punctuation:
            s = s.replace(a, b)
        s = lang.pattern.sub(lambda m: f" {lang.replacement[m.group()]} ", s)
        return _TIGHT.sub(r"\1", _OPEN_SPACE.sub("(", _SPACES.sub(" ", s)))  # spaced as English is written
    s = text
    for pattern, word in lang.accented:  # before folding accents merges them with other words
        s = pattern.sub(word, s)
    s = fold(s, case=False)
    if lang.elision is not None:
        s = lang.elision.sub(r"\1 ", s)
    s = decimal_points(s, lang)

    def sub(m: re.Match[str]) -> str:
        got = lang.replacement.get(" ".join(m.group().casefold().split()), m.group())
        return got[:1].upper() + got[1:] if m.group()[:1].isupper() else got  # a sentence still starts here

    return lang.pattern.sub(sub, s)


_ALTERNATIVE_WORDS = frozenset({"or", "maybe", "probably", "possibly", "otherwise", "either", "presumably"})


@lru_cache(maxsize=1)
def alternatives() -> frozenset[str]:
    """Words of every table that stand for an English alternative or hedge word ("o", "u", "oder", "bzw",
    "ou", "sinon", "quizas"...), accent-folded and lower case: a hedge in any language the rules read is
    one wherever it stands, also in a sentence too short to tell its language."""
    out = set()
    for lang in languages():
        out |= {k for k, v in lang.replacement.items() if v in _ALTERNATIVE_WORDS and " " not in k}
    return frozenset(out)


@lru_cache(maxsize=1)
def _counts() -> tuple[re.Pattern[str], dict[str, str]]:
    pairs = sorted(((fold(a), b) for a, b in load_toml("languages.toml").get("counts", {}).get("words", [])),
                   key=lambda p: -len(p[0]))
    han = [a for a, _ in pairs if any(in_script(c, "Han") for c in a)]
    alt = "|".join(re.escape(a).replace(r"\ ", r"\s+") for a, _ in pairs if a not in han)
    # Han has no word boundaries: its count words are read wherever they stand ("Only 两 admissions")
    return re.compile(rf"(?<![\w/-])(?:{alt})(?![\w/-])" + (f"|{'|'.join(map(re.escape, han))}" if han else ""),
                      re.IGNORECASE), dict(pairs)


def count_words(text: str) -> str:
    """``text`` with the count words of ``rules/languages.toml`` ``[counts]`` written in English, whatever the
    text's language (accents folded first): "Solo dos ingresos" is "only two admissions". For the five-unit
    rule, which must read a count in any language wherever it stands, also one sentence inside English."""
    pattern, table = _counts()
    s = fold(text, case=False)
    return pattern.sub(lambda m: _spaced(m, table.get(" ".join(m.group().casefold().split()), m.group())), s)


def _spaced(m: re.Match[str], word: str) -> str:
    """``word`` in place of ``m``, with a space on a side where a letter or digit stands against it (a Han count
    word between Han characters: "只有两个住院" -> "只有 two 个住院")."""
    s, i, j = m.string, m.start(), m.end()
    return (" " if i > 0 and s[i - 1].isalnum() else "") + word + (" " if j < len(s) and s[j].isalnum() else "")
