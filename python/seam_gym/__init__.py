"""The gym's former name: `import seam_gym` is `seam.gym`."""

import sys

from seam import gym as _gym

sys.modules[__name__] = _gym
