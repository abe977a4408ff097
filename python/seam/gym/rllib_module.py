"""MaskedPPOModule: RLlib's default PPO torch module over the encoding of a
MaskedPassOrderingEnv observation, its logits of masked actions pushed to
the float minimum so the policy never samples a pass known to do nothing.

Imports Ray and torch: only the RLlib training script loads it.
"""

from __future__ import annotations

import torch
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.utils.torch_utils import FLOAT_MIN


class MaskedPPOModule(DefaultPPOTorchRLModule):
    """Networks built for the "observations" entry of a dict observation
    space; every forward pass reads the "action_mask" entry beside it."""

    def __init__(self, *, observation_space=None, **kwargs):
        if not hasattr(observation_space, "spaces") or set(observation_space.spaces) != {"observations", "action_mask"}:
            raise ValueError("MaskedPPOModule needs a Dict observation space of 'observations' and 'action_mask'")
        self.masked_observation_space = observation_space
        super().__init__(observation_space=observation_space["observations"], **kwargs)

    @staticmethod
    def _split(batch):
        """(mask, the batch with the encoding as its observations); the
        batch itself is left as it came, for the module's other calls."""
        observations = batch[Columns.OBS]
        if not isinstance(observations, dict):
            return batch.get("action_mask"), batch
        inner = dict(batch)
        inner[Columns.OBS] = observations["observations"]
        return observations["action_mask"], inner

    @staticmethod
    def _masked(out, mask):
        if mask is not None:
            out[Columns.ACTION_DIST_INPUTS] = out[Columns.ACTION_DIST_INPUTS] + torch.clamp(torch.log(mask), min=FLOAT_MIN)
        return out

    def _forward(self, batch, **kwargs):
        mask, inner = self._split(batch)
        return self._masked(super()._forward(inner, **kwargs), mask)

    def _forward_train(self, batch, **kwargs):
        mask, inner = self._split(batch)
        return self._masked(super()._forward_train(inner, **kwargs), mask)

    def compute_values(self, batch, embeddings=None):
        return super().compute_values(self._split(batch)[1], embeddings)
