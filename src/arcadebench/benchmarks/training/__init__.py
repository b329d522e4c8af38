"""Training with other libraries on the protocols.

- stable-baselines3 (:mod:`~.sb3`, ``arcadebench[sb3]``): a ``VecEnv`` over ``make_vec``, a
  callback, saved models as agents;
- a training run on a Ray cluster (:mod:`~.ray_run`, ``arcadebench[ray]``; RLlib with
  ``arcadebench[rllib]``): one owner holding the log, the counters and the budget, environments
  on any node built by an env creator, for RLlib and plain Ray actors;
- the scores at frame checkpoints every integration shows (:mod:`~.protocol_view`).

Each is imported on demand, so ``import arcadebench`` never imports torch or Ray.
"""

__all__: list[str] = []
