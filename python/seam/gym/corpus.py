"""The gym's modules by model family, and the train/test split.

Two sources: the corpus of real models (corpus/<file>, ../shared/hlo) and
the generated corpus (bench/gym/corpus in a source tree: <family>.<variant>.hlo,
written by its make_corpus.py). The split is by family, so a test module's
family is never seen in training: transformer blocks (GPT-2, GPT-NeoX, BERT
among the real models) and conv nets are held out.
"""

from __future__ import annotations

import glob
import os
from typing import Iterable, Optional, Sequence

# Real models: (family, substrings of file names), first match wins.
REAL_MODEL_FAMILIES = [
    ("transformer", ("gpt2", "gptneox", "bert")),
    ("convnet", ("resnet", "mobilenet", "efficientnet")),
    ("llm", ("gemma", "llama", "maxtext")),
    ("recsys", ("dlrm",)),
    ("mlp", ("toy_nn", "maml", "jaxrl", "hlo_test")),
    ("norm", ("layer_norm",)),
    ("attention", ("mha_block",)),
    ("optimizer", ("linear_module_adam",)),
    ("jax_program", ("jax_issue",)),
    ("optimized_hlo", ("xnn", "gpu_tests")),
]
TEST_FAMILIES = ("transformer", "convnet")
RANDOM_FAMILY = "random"
# Real models the interpreter takes minutes for (over 20 s each here; every
# other module takes seconds at most): replays check them with the verifier.
SLOW_TO_INTERPRET = ("gptneox", "efficientnet", "mobilenet", "gemma", "llama", "maxtext")


def slow_to_interpret(uri: str) -> bool:
    name = os.path.basename(uri)
    return uri.startswith("corpus/") and any(key in name for key in SLOW_TO_INTERPRET)


def generated_corpus_dir() -> Optional[str]:
    """Where the generated corpus is: $SEAM_GYM_CORPUS, the wheel's copy, or
    bench/gym/corpus of the source tree the package runs from; None if none."""
    if os.environ.get("SEAM_GYM_CORPUS"):
        return os.environ["SEAM_GYM_CORPUS"]
    here = os.path.dirname(os.path.abspath(__file__))
    # seam/gym_corpus in a wheel; python/seam/gym and build/python/seam/gym in a tree.
    for up in ("../gym_corpus", "../../../bench/gym/corpus", "../../../../bench/gym/corpus"):
        candidate = os.path.normpath(os.path.join(here, up))
        if os.path.isdir(candidate):
            return candidate
    return None


def family_of(uri: str) -> str:
    """The model family of a benchmark URI."""
    if uri.startswith("generator/random/"):
        return RANDOM_FAMILY
    name = uri.rsplit("/", 1)[-1]
    if uri.startswith("file://") and name.endswith(".hlo") and name.count(".") >= 2:
        return name.split(".", 1)[0]  # the generated corpus: <family>.<variant>.hlo
    lower = name.lower()
    for family, keys in REAL_MODEL_FAMILIES:
        if any(key in lower for key in keys):
            return family
    return "other"


def generated_benchmarks(directory: Optional[str] = None) -> list[str]:
    """file:// URIs of the generated corpus's modules, sorted."""
    directory = directory or generated_corpus_dir()
    if directory is None:
        return []
    return ["file://" + os.path.abspath(p) for p in sorted(glob.glob(os.path.join(directory, "*.hlo")))]


def all_benchmarks(directory: Optional[str] = None, random_graphs: int = 0) -> list[str]:
    """The real models' corpus, the generated corpus and `random_graphs`
    seeds of the random generator."""
    from .._core import gym as _core

    return (_core.corpus_benchmarks() + generated_benchmarks(directory) +
            [f"generator/random/{seed}" for seed in range(random_graphs)])


def within_ops(uris: Iterable[str], max_ops: int) -> list[str]:
    """The benchmarks of at most `max_ops` ops at the canonical start: what
    training samples, since a step on a larger module costs seconds."""
    from .._core.gym import Session

    probe = Session(canonical_start=True)
    small = []
    for uri in uris:
        probe.reset(uri)
        if probe.initial_ops <= max_ops:
            small.append(uri)
    return small


def split(benchmarks: Iterable[str], test_families: Sequence[str] = TEST_FAMILIES):
    """(train, test): the benchmarks outside and inside the test families."""
    benchmarks = list(benchmarks)
    train = [b for b in benchmarks if family_of(b) not in test_families]
    test = [b for b in benchmarks if family_of(b) in test_families]
    return train, test
