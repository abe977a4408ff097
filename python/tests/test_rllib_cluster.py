"""The RLlib training script on a local two-node Ray cluster (a head and a
worker node, each a raylet process of its own, as `ray start` makes them on
separate machines; stopping it leaves any other Ray instance running): two
iterations with two env runner processes, a checkpoint, the evaluation on
the test families, and a restart from the checkpoint. Needs ray[rllib] and
torch (pip install .[train]); skipped without them, as in CI
(scripts/run_tests.sh --full runs it)."""

import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time

import pytest

pytest.importorskip("ray.rllib")
pytest.importorskip("torch")

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "scripts", "train_rllib.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def seam_path():
    """PYTHONPATH with the directory this process imports seam from first,
    every entry absolute: the script and Ray's workers start elsewhere
    (run_tests.sh gives PYTHONPATH=build/python, relative to the checkout)."""
    import seam

    entries = [os.path.dirname(os.path.dirname(os.path.abspath(seam.__file__)))]
    entries += [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return os.pathsep.join(dict.fromkeys(entries))


def alive_nodes(address, env):
    done = subprocess.run(
        [sys.executable, "-c", f"import ray; ray.init(address='{address}'); "
                               "print(sum(n['Alive'] for n in ray.nodes()))"],
        env=env, capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    return int(lines[-1]) if done.returncode == 0 and lines else 0


@pytest.fixture
def cluster():
    """A head and a worker node, each `ray start --block` in a process of its
    own, stopped by SIGTERM to those two alone: `ray stop` would stop every
    Ray instance on the machine, a user's training run among them."""
    ray = os.path.join(os.path.dirname(sys.executable), "ray")
    port = free_port()
    address = f"127.0.0.1:{port}"
    # A short temporary directory of its own (Ray's socket paths must fit 107
    # bytes), where the cluster's address file goes too: a plain ray.init()
    # elsewhere on the machine does not find this cluster.
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")
    # Ray's token authentication with a token of this cluster's own, which
    # every node and the driver read from the environment.
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(16),
               PYTHONPATH=seam_path())
    nodes = []
    try:
        nodes.append(subprocess.Popen([ray, "start", "--head", "--block", f"--port={port}", "--num-cpus=1",
                                       f"--temp-dir={temp}", "--include-dashboard=false", "--disable-usage-stats"],
                                      env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_for(lambda: alive_nodes(address, env) == 1)
        nodes.append(subprocess.Popen([ray, "start", f"--address={address}", "--block", "--num-cpus=2"],
                                      env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_for(lambda: alive_nodes(address, env) == 2)
        yield address, env
    finally:
        for node in reversed(nodes):
            node.terminate()
            try:
                node.wait(timeout=60)
            except subprocess.TimeoutExpired:
                node.kill()


def wait_for(condition, seconds=120):
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            raise TimeoutError("the Ray cluster did not come up")
        time.sleep(1)


def run(args, env, cwd):
    done = subprocess.run([sys.executable, SCRIPT, *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def test_two_runners_on_a_two_node_cluster_train_checkpoint_and_evaluate(cluster, tmp_path):
    address, env = cluster
    assert alive_nodes(address, env) == 2

    out = tmp_path / "run"
    common = ["--address", address, "--num-env-runners", "2", "--random-graphs", "2",
              "--train-batch", "128", "--minibatch", "64", "--epochs", "1", "--max-steps", "8",
              "--out-dir", str(out)]
    stdout = run(common + ["--iterations", "2", "--checkpoint-every", "1"], env, tmp_path)
    assert "iter 2:" in stdout

    progress = [json.loads(line) for line in (out / "progress.jsonl").read_text().splitlines()]
    assert [p["iteration"] for p in progress] == [1, 2]
    assert progress[1]["env_steps"] >= 2 * 128 > progress[0]["env_steps"] > 0
    assert (out / "checkpoint" / "rllib_checkpoint.json").exists()
    assert list((out / "tensorboard").iterdir())

    split = json.loads((out / "split.json").read_text())
    evaluation = json.loads((out / "evaluation.json").read_text())
    assert [m["benchmark"] for m in evaluation["modules"]] == split["test"]
    for module in evaluation["modules"]:
        assert module["family"] in ("transformer", "convnet")
        assert module["cost_us"] > 0 and module["default_cost_us"] > 0
        assert module["validated"]["ops"] == module["ops"] and not module["validated"]["differences"]
    assert any(m["validated"]["interpreted"] for m in evaluation["modules"])
    assert 0 < evaluation["geomean_default_over_policy"] < 10

    # Restarting from the checkpoint evaluates the same policy again.
    run(common + ["--restore", str(out / "checkpoint"), "--eval-only", "--no-interpret"], env, tmp_path)
    again = json.loads((out / "evaluation.json").read_text())
    assert again["geomean_default_over_policy"] == pytest.approx(evaluation["geomean_default_over_policy"])
