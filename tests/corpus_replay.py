"""Replay of an adjudicated episode corpus, shared by the corpus tests (``test_episode_corpus*.py``)."""

from __future__ import annotations

from pathlib import Path

from verifier import Task, Trajectory, VerifyConfig, verify
from verifier.scoring._agreement import Agreement, Episode, compare, format_agreement, read_episodes


def replay(corpus: Path, db: Path) -> tuple[list[Episode], Agreement]:
    """Every episode of ``corpus`` (a folder of JSON Lines) scored by the current verifier on ``db``,
    and the comparison with the reviewers (printed, so a failing run shows every disagreement)."""
    episodes = read_episodes(corpus)
    config = VerifyConfig(db_path=str(db))
    a = compare(episodes, [verify(ep.trajectory, ep.task, config) for ep in episodes])
    print("\n" + format_agreement(a))
    return episodes, a


def replayed(episode: dict, db: Path, final_response: str | None = None):
    """The verifier's verdict on one corpus episode (a JSON object of a corpus file) on ``db``, its final response
    replaced by ``final_response`` when given (a form appended to an honest Reasoning)."""
    traj = Trajectory.model_validate(episode["trajectory"])
    if final_response is not None:
        traj = traj.model_copy(update={"final_response": final_response})
    return verify(traj, Task.model_validate(episode["task"]), VerifyConfig(db_path=str(db)))


def assert_known_false_accepts(a: Agreement, known: set[str]) -> None:
    """No false accept beyond ``known``, and every known one still is one (remove it when fixed)."""
    found = {row[0] for row in a.false_accepts}
    assert found <= known, format_agreement(a)
    assert found == known, f"fixed, remove from KNOWN_FALSE_ACCEPTS: {sorted(known - found)}"
