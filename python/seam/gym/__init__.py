"""Seam's pass-ordering gym: a Session over XLA HLO graph passes (the C++
core in seam._core.gym) and a Gymnasium environment on top of it."""

import os as _os

# A wheel carries a copy of the corpus; prefer it to the source tree the
# extension was built from (which may be gone), unless the user chose one.
_packaged_corpus = _os.path.join(_os.path.dirname(_os.path.dirname(__file__)), "corpus")
if not _os.environ.get("SEAM_CORPUS_DIR") and _os.path.isdir(_packaged_corpus):
    _os.environ["SEAM_CORPUS_DIR"] = _packaged_corpus

from .._core.gym import (  # noqa: E402
    Session,
    action_count,
    action_description,
    action_descriptions,
    action_index,
    action_name,
    action_names,
    beam_search,
    corpus_benchmarks,
    corpus_directory,
    feature_names,
    greedy_search,
    observation_spaces,
    opcode_names,
    random_search,
    reward_spaces,
    search,
    stop_action,
    validate_pass_order,
)
from . import corpus  # noqa: E402
from .env import LogObservation, PassOrderingEnv  # noqa: E402
from .masked_env import MaskedPassOrderingEnv  # noqa: E402

__version__ = "0.1.0"

ENV_ID = "seam_gym/PassOrdering-v0"
MASKED_ENV_ID = "seam_gym/MaskedPassOrdering-v0"


def _register() -> None:
    import gymnasium

    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="seam.gym.env:PassOrderingEnv")
    if MASKED_ENV_ID not in gymnasium.registry:
        gymnasium.register(id=MASKED_ENV_ID, entry_point="seam.gym.masked_env:MaskedPassOrderingEnv")


_register()

__all__ = [
    "ENV_ID",
    "MASKED_ENV_ID",
    "LogObservation",
    "MaskedPassOrderingEnv",
    "PassOrderingEnv",
    "Session",
    "action_count",
    "action_description",
    "action_descriptions",
    "action_index",
    "action_name",
    "action_names",
    "beam_search",
    "corpus",
    "corpus_benchmarks",
    "corpus_directory",
    "feature_names",
    "greedy_search",
    "observation_spaces",
    "opcode_names",
    "random_search",
    "reward_spaces",
    "search",
    "stop_action",
    "validate_pass_order",
]
