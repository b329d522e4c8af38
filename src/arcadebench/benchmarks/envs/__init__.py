"""The environment stage: spec + overrides -> settings -> Gymnasium environments.

Where things are: :mod:`~.ids` (the id grammar), :mod:`~.resolve` (the one resolve step: typed
settings, deviations, options), :mod:`~.atari` (where the Atari protocol is assembled, for one
env and for a batch), :mod:`~.reload_free` (seeded resets without a ROM reload),
:mod:`~.batched` (``make_vec`` on ale-py's vector env), :mod:`~.sonic` and :mod:`~.joint`
(stable-retro levels and joint training), :mod:`~.roms` (ROM checks), and :mod:`~.factory` (the
registered entry point and the registration).
"""

from arcadebench.benchmarks.envs.batched import make_vec
from arcadebench.benchmarks.envs.factory import make, make_protocol_env, register_envs
from arcadebench.benchmarks.envs.ids import env_id, parse_env_id
from arcadebench.benchmarks.envs.joint import register_joint_envs
from arcadebench.benchmarks.envs.resolve import resolve
from arcadebench.benchmarks.envs.sonic import levels

__all__ = [
    "env_id",
    "levels",
    "make",
    "make_protocol_env",
    "make_vec",
    "parse_env_id",
    "register_envs",
    "register_joint_envs",
    "resolve",
]
