"""Analyte table (``rules/analytes.toml``): molar masses, valences, IU bridges.

Used to convert mass <-> molar (through the molar mass), mEq <-> mmol (through
the valence) and IU <-> U (enzymes) for one named analyte.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..contract import RulesError, UnitError, load_toml, rules_path

_NORM = re.compile(r"[\s\-_]+")


@dataclass(frozen=True, slots=True)
class Analyte:
    """One analyte's conversion constants.

    Attributes:
        key: the table key (e.g. ``"glucose"``).
        molar_mass: g/mol of the reported entity, or ``None``.
        valence: absolute ionic charge (mEq per mmol), or ``None``.
        iu_per_u: IU per enzyme unit (1 U = 1 umol/min), or ``None``.
        source: where the constants come from.
    """

    key: str
    molar_mass: float | None
    valence: int | None
    iu_per_u: float | None
    source: str


def _norm(name: str) -> str:
    return _NORM.sub("_", name.strip().casefold())


@lru_cache(maxsize=1)
def _table() -> dict[str, Analyte]:
    raw = load_toml("analytes.toml")
    out: dict[str, Analyte] = {}
    for key, entry in raw.items():
        if not isinstance(entry, dict) or "source" not in entry:
            raise RulesError(rules_path("analytes.toml"), f"[{key}] needs a table with a 'source'")
        mm, val, iu = entry.get("molar_mass"), entry.get("valence"), entry.get("iu_per_u")
        for name, v in (("molar_mass", mm), ("valence", val), ("iu_per_u", iu)):
            if v is not None and (not isinstance(v, (int, float)) or v <= 0):
                raise RulesError(rules_path("analytes.toml"), f"[{key}] {name} must be a positive number, got {v!r}")
        a = Analyte(key, float(mm) if mm else None, int(val) if val else None, float(iu) if iu else None, entry["source"])
        for name in [key, *entry.get("aliases", [])]:
            out.setdefault(_norm(name), a)
    return out


def get_analyte(name: str) -> Analyte:
    """Look up an analyte by key or alias (case-, space- and hyphen-insensitive).

    Raises:
        UnitError: the analyte is not in ``rules/analytes.toml``.
    """
    a = _table().get(_norm(name))
    if a is None:
        raise UnitError(name, "unknown analyte (add it to rules/analytes.toml)")
    return a


def analyte_keys() -> list[str]:
    """Sorted keys of every analyte in the table."""
    return sorted({a.key for a in _table().values()})
