"""The leaderboard's learned-policy section: D / R per cell and the geomeans
read from the policy's evaluation and the searches' rows."""

import importlib.util
import json
import math
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def leaderboard():
    spec = importlib.util.spec_from_file_location("gym_leaderboard", ROOT / "bench" / "gym_leaderboard.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def evaluation_rows():
    # Policy 20% faster than the default on one module, 10% slower on the other.
    return [
        {"benchmark": "file:///c/convnet.a.hlo", "cost_us": 80.0, "default_cost_us": 100.0, "walltime_s": 0.2,
         "default_over_policy": 1.25, "pass_spec": "dce"},
        {"benchmark": "file:///c/transformer.b.hlo", "cost_us": 55.0, "default_cost_us": 50.0, "walltime_s": 0.1,
         "default_over_policy": 50 / 55, "pass_spec": "cse"},
    ]


def test_policy_section_ratios_and_geomeans(leaderboard, tmp_path):
    runs = tmp_path / "runs.jsonl"
    with open(runs, "w") as f:
        for module, cost in (("convnet.a.hlo", 90.0), ("transformer.b.hlo", 50.0)):
            for agent in leaderboard.AGENTS:
                f.write(json.dumps({"module": module, "protocol": "policy-budget", "agent": agent,
                                    "best_cost_us": cost, "walltime_s": 10.0}) + "\n")
    lines = leaderboard.policy_section({"modules": evaluation_rows(), "train_seconds": 600,
                                        "args": {"test_families": "transformer,convnet"}},
                                       str(runs), str(tmp_path / "absent.json"))
    text = "\n".join(lines)
    assert "| convnet.a.hlo | 100 | 80 (1.250) | – | – | – | 90 (1.111) | 90 (1.111) | 90 (1.111) |" in text
    geomean_row = next(line for line in lines if line.startswith("| **geomean"))
    policy = math.sqrt(1.25 * 50 / 55)
    beam = math.sqrt(100 / 90 * 1.0)
    assert f"**{policy:.4f}** (2)" in geomean_row
    assert geomean_row.count(f"**{beam:.4f}** (2)") == 3
    assert "trained 10 min" in text
    assert "Measured" not in text  # no measured file, no measured table


def test_policy_section_measured_table(leaderboard, tmp_path):
    measured = tmp_path / "measured.json"
    measured.write_text(json.dumps({"date": "2026-12-04", "repeat": 9, "rounds": 3, "rows": [
        {"module": "convnet.a.hlo", "default_cost_us": 100.0, "policy_cost_us": 80.0, "default_ms": 2.0,
         "policy_ms": 1.6}]}))
    lines = leaderboard.policy_section({"modules": evaluation_rows()}, str(tmp_path / "none.jsonl"), str(measured))
    assert "| convnet.a.hlo | 100 → 80 | 2.000 → 1.600 | 1.250x |" in lines


def test_policy_section_on_a_sample_reports_the_policy_on_every_module(leaderboard, tmp_path):
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps({"module": "convnet.a.hlo", "protocol": "policy-budget", "agent": "beam",
                                "best_cost_us": 90.0, "walltime_s": 10.0}) + "\n")
    lines = leaderboard.policy_section({"modules": evaluation_rows()}, str(runs), "")
    assert not any(line.startswith("| transformer.b.hlo") for line in lines)
    assert any(line.startswith("| convnet.a.hlo") for line in lines)
    every = next(line for line in lines if line.startswith("The policy on all 2"))
    assert f"**{math.sqrt(1.25 * 50 / 55):.4f}**" in every


def test_compared_modules_keep_the_real_models_and_a_seeded_sample(leaderboard):
    rows = [{"benchmark": f"file:///c/convnet.{i}.hlo"} for i in range(10)] + [
        {"benchmark": "corpus/xla_resnet50_keras_jax_f32.hlo"}]
    picked = leaderboard.compared_modules(rows, 3)
    assert picked[0]["benchmark"].startswith("corpus/") and len(picked) == 4
    assert picked == leaderboard.compared_modules(rows, 3)
    assert len(leaderboard.compared_modules(rows, 0)) == 11
