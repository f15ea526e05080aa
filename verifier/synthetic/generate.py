"""Generate the synthetic default hospital: simulate it in memory, then write it.

``simulate`` runs the generator steps in a fixed order on one seeded
``random.Random``; ``generate_hospital`` writes the result as MIMIC-IV v2.2
``hosp/*.csv.gz`` and ``icu/*.csv.gz`` plus the gap manifest ``gaps.json``.
"""

from __future__ import annotations

from pathlib import Path

from ..contract import InputError
from .billing import make_billing
from .dictionaries import make_dictionaries
from .gaps import GAPS_FILE, Gap, write_gaps
from .hospital import Hospital
from .icu import make_icu
from .labs import make_labs
from .meds import make_meds
from .micro import make_micro
from .people import make_people
from .plant import plant_and_record
from .writer import write_tables


def simulate(seed: int = 0, n_patients: int = 50) -> Hospital:
    """Build the whole hospital in memory (rows of every source table and the planted gaps).

    Args:
        seed: any int; the same seed always gives the same hospital.
        n_patients: number of patients (>= 20 so that every gap can be planted).

    Raises:
        InputError: ``seed`` not an int or ``n_patients`` out of range.
    """
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise InputError("seed", seed, "must be an integer")
    if not isinstance(n_patients, int) or isinstance(n_patients, bool) or n_patients > 100_000:
        raise InputError("n_patients", n_patients, "must be an integer between 20 and 100000")
    h = Hospital(seed)
    make_people(h, n_patients)
    make_labs(h)
    make_meds(h)
    make_micro(h)
    make_icu(h)
    make_billing(h)
    make_dictionaries(h)
    plant_and_record(h)
    return h


def generate_hospital(out_dir: str | Path, seed: int = 0, n_patients: int = 50) -> Path:
    """Write a deterministic synthetic hospital in the MIMIC-IV v2.2 CSV layout.

    Writes ``out_dir/hosp/<table>.csv.gz`` and ``out_dir/icu/<table>.csv.gz`` for all
    31 source tables of rules/schema.toml (source column names and order; empty
    values are NULL; gzip with mtime 0, so files are byte-identical for the same
    seed) and ``out_dir/gaps.json`` (the planted gaps, see ``gaps.py``).

    Args:
        out_dir: folder to write into (created if missing; existing table files are replaced).
        seed: random seed.
        n_patients: number of patients (>= 20).

    Returns:
        ``out_dir`` as a Path (pass it to ``verifier.database.build_database``).

    Raises:
        InputError: bad ``seed``/``n_patients``, or ``out_dir`` exists and is not a folder.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError("out_dir", str(out), "exists and is not a folder")
    h = simulate(seed, n_patients)
    out.mkdir(parents=True, exist_ok=True)
    write_tables(h.tables, out)
    write_gaps(h.gaps, out / GAPS_FILE)
    return out


def planted_gaps(seed: int = 0, n_patients: int = 50) -> list[Gap]:
    """The gaps of the hospital ``generate_hospital(..., seed, n_patients)`` writes, without writing it.

    Raises:
        InputError: ``n_patients`` too small to plant every gap.
    """
    return simulate(seed, n_patients).gaps
