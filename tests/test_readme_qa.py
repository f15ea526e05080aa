"""README claims a fresh user relies on (QA pass, findings 5 and 6): ignored pipeline outputs,
the response cap, the TRL import paths and the verl tool config's database path."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def in_git() -> None:
    if shutil.which("git") is None or _git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout (or git missing): .gitignore cannot be checked")


def test_pipeline_outputs_are_ignored(in_git) -> None:
    """Every file the README's pipeline writes at the repository root is ignored."""
    written = set(re.findall(r"--out (\S+)", README)) | {"logs/x.eval"}
    written = {w.rstrip("/") + ("/x" if w.endswith("/") else "") for w in written if not w.startswith("$")}
    for path in sorted(written):
        if path.endswith(".duckdb") or "jsonl" in path or path.split("/")[0] in ("scores", "review", "schemas", "logs"):
            assert _git("check-ignore", "-q", "--no-index", path).returncode == 0, f"{path} is not ignored"


def test_tracked_fixtures_stay_tracked(in_git) -> None:
    """Root-anchored patterns: nothing under fixtures/ (or any tracked file) matches an ignore rule."""
    assert _git("ls-files", "-ci", "--exclude-standard").stdout.strip() == ""
    assert _git("ls-files", "fixtures").stdout.strip() != ""


def test_response_cap_is_documented_as_it_is() -> None:
    from verifier.contract import InputLimits, VerifyConfig

    cap = InputLimits().max_response_chars
    assert f"{cap:,}" in README and "max_response_chars" in README and "INPUT_TOO_LARGE" in README
    VerifyConfig(limits=InputLimits(max_response_chars=100_000))  # the README's way to raise it


def test_documented_trl_imports_work() -> None:
    for stmt in re.findall(r"`(from verifier\.adapters\.\w+ import [\w, ]+)`", README):
        exec(stmt, {})  # noqa: S102 - the README's own import lines
    assert "from verifier.adapters.trl_data import" in README


def test_tool_config_yaml_writes_absolute_paths(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("yaml")
    import yaml

    from verifier.adapters.verl_tools import tool_config_yaml

    monkeypatch.chdir(tmp_path)
    config = yaml.safe_load(tool_config_yaml("demo.duckdb", tasks="tasks.jsonl"))
    for entry in config["tools"]:
        assert entry["config"]["db"] == str(tmp_path / "demo.duckdb")
        assert entry["config"]["tasks"] == str(tmp_path / "tasks.jsonl")
