"""train_rllib.py's progress line from RLlib's result dicts (no Ray needed)."""

import importlib.util
import math
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("train_rllib", ROOT / "python" / "scripts" / "train_rllib.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["train_rllib"] = module
    spec.loader.exec_module(module)
    return module


def test_progress_line_reads_the_runners_metrics(script):
    result = {"training_iteration": 4, "env_runners": {"num_env_steps_sampled_lifetime": 8192.0,
                                                       "episode_return_mean": 0.5, "episode_len_mean": 21.0,
                                                       "num_episodes": 97}}
    line = script.progress_line(result, 12.345)
    assert line == {"iteration": 4, "env_steps": 8192, "episode_return_mean": 0.5, "episode_len_mean": 21.0,
                    "episodes": 97, "elapsed_s": 12.35}


def test_progress_line_of_an_iteration_that_completed_no_episode(script):
    # RLlib reports NaN (or nothing) for the episode metrics of such an iteration.
    nan = float("nan")
    line = script.progress_line({"training_iteration": 5, "env_runners": {
        "num_env_steps_sampled_lifetime": 10240, "episode_return_mean": nan, "num_episodes": nan}}, 1.0)
    assert line["episodes"] == 0 and line["env_steps"] == 10240
    assert math.isnan(line["episode_return_mean"]) and math.isnan(line["episode_len_mean"])
