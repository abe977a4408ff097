"""The reward check's statistics: pairs the cost model ranks as measured,
pairs it prices alike kept apart, and interleaved medians."""

import importlib.util
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reward_check():
    sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location("reward_check", ROOT / "bench" / "gym" / "reward_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pairs_priced_alike_are_counted_apart(reward_check):
    costs = [100.0, 100.5, 150.0, 90.0]
    times = [1.0, 2.0, 3.0, 1.02]
    # Beyond 5%: (0,1) priced alike; (0,2), (1,2), (1,3), (2,3) told apart;
    # (0,3) is noise. (1,3): cost 100.5 > 90 and time 2.0 > 1.02, alike.
    agree, apart, alike = reward_check.agreeing_pairs(costs, times, margin=0.05, cost_tie=0.01)
    assert (agree, apart, alike) == (4, 4, 1)
    # Beyond 60% only (0,1) 2x, (0,2) 3x, (1,3) 1.96x, (2,3) 2.9x remain; (1,2) is 1.5x.
    assert reward_check.agreeing_pairs(costs, times, 0.05, 0.01, least=0.6) == (3, 3, 1)
    wrong = reward_check.agreeing_pairs([2.0, 1.0], [1.0, 2.0], 0.05, 0.01)
    assert wrong == (0, 1, 0)


def test_spearman(reward_check):
    assert reward_check.spearman([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert reward_check.spearman([1, 2, 3], [30, 20, 10]) == pytest.approx(-1.0)
    assert reward_check.spearman([1, 1, 1], [1, 2, 3]) is None


def test_interleaved_medians_and_failures(reward_check, monkeypatch):
    import gym_leaderboard

    calls = []

    def fake_bench(path, spec, repeat):
        calls.append(spec)
        if spec == "broken":
            raise subprocess.CalledProcessError(1, "seam", stderr="bad spec")
        return {"a": [3.0, 1.0, 2.0], "b": [5.0, 4.0, 6.0]}[spec][sum(c == spec for c in calls) - 1]

    monkeypatch.setattr(gym_leaderboard, "bench_ms", fake_bench)
    medians, times = gym_leaderboard.interleaved_ms("m.hlo", {"x": "a", "y": "b", "z": "broken"}, rounds=3, repeat=1)
    assert medians == {"x": 2.0, "y": 5.0}
    assert times["z"] is None
    # Every round runs each live spec once, in order; a failed one is not retried.
    assert calls == ["a", "b", "broken", "a", "b", "a", "b"]
