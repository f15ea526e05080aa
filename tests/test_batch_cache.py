"""The evidence-query cache used by batch scoring: normalisation and LRU behaviour."""

from __future__ import annotations

import threading

import pytest

from verifier.sql._cache import QueryCache, active, install, normalize_sql


@pytest.mark.parametrize(
    "a,b",
    [
        ("SELECT a, B FROM Lab_Events WHERE x = 'AbC'", "select a,b\n from lab_events -- comment\n where X='AbC';"),
        ("select count(*) from admissions", "SELECT COUNT( * )   FROM   ADMISSIONS"),
        ('select "PatientId" from patients', "select patientid from PATIENTS"),  # DuckDB: identifiers case-insensitive
    ],
)
def test_cosmetic_variants_share_a_key(a, b):
    assert normalize_sql(a) == normalize_sql(b)


@pytest.mark.parametrize(
    "a,b",
    [
        ("select a from t where x = 'AbC'", "select a from t where x = 'abc'"),  # literals keep their case
        ("select a from t where x = 1", "select a from t where x = 10"),
        ("select a from t", "select b from t"),
        ("select a from t order by a", "select a from t order by a desc"),
    ],
)
def test_different_queries_never_share_a_key(a, b):
    assert normalize_sql(a) != normalize_sql(b)


def test_untokenizable_text_falls_back_to_collapsed_whitespace():
    assert normalize_sql("select $$ open") == normalize_sql("select   $$ open")


def test_get_or_run_caches_by_scope_and_row_cap():
    cache = QueryCache(max_entries=8)
    calls: list[str] = []

    def run(tag: str):
        def f():
            calls.append(tag)
            return tag
        return f

    assert cache.get_or_run("select 1", run("a"), scope="base") == "a"
    assert cache.get_or_run("SELECT 1;", run("b"), scope="base") == "a"  # hit
    assert cache.get_or_run("select 1", run("c"), scope="overlay") == "c"  # other scope
    assert cache.get_or_run("select 1", run("d"), scope="base", row_cap=5) == "d"  # other cap
    assert calls == ["a", "c", "d"]
    assert (cache.hits, cache.misses) == (1, 3)


def test_failures_are_not_cached():
    cache = QueryCache()

    def boom():
        raise RuntimeError("db error")

    for _ in range(2):
        with pytest.raises(RuntimeError):
            cache.get_or_run("select 1", boom)
    assert len(cache) == 0 and cache.misses == 2


def test_lru_bound_and_eviction_order():
    cache = QueryCache(max_entries=2)
    cache.get_or_run("select 1", lambda: 1)
    cache.get_or_run("select 2", lambda: 2)
    cache.get_or_run("select 1", lambda: -1)  # touch 1: 2 is now oldest
    cache.get_or_run("select 3", lambda: 3)
    assert len(cache) == 2
    assert cache.get_or_run("select 1", lambda: -1) == 1
    assert cache.get_or_run("select 2", lambda: 22) == 22  # was evicted
    with pytest.raises(ValueError):
        QueryCache(0)


def test_install_and_active_are_process_wide_and_restorable():
    c = QueryCache()
    previous = install(c)
    try:
        seen = []
        t = threading.Thread(target=lambda: seen.append(active()))
        t.start()
        t.join()
        assert active() is c and seen == [c]
    finally:
        install(previous)
    assert active() is previous


def test_lru_keeps_the_most_recently_used_entries():
    from verifier.sql._cache import LRU

    lru: LRU[str, int] = LRU(2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.get("a") == 1  # "a" becomes the most recent
    lru.put("c", 3)
    assert (lru.get("a"), lru.get("b"), lru.get("c"), len(lru)) == (1, None, 3, 2)
    with pytest.raises(ValueError):
        LRU(0)


def test_worker_start_builds_the_unit_registry(monkeypatch):
    """Lazily built rule registries are built when a worker starts, not inside its first batch."""
    from verifier.contract import VerifyConfig
    from verifier.scoring import default_scorer, make_state
    from verifier.units import registry

    monkeypatch.setattr(registry, "_REGISTRY", None)
    make_state({}, VerifyConfig(), default_scorer, None, 0)
    assert registry._REGISTRY is not None
