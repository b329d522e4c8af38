"""Training with other libraries on the protocols: stable-baselines3 (:mod:`~.sb3`).

Imported on demand (``arcadebench.benchmarks.training.sb3`` needs ``arcadebench[sb3]``), so
``import arcadebench`` never imports torch.
"""

__all__: list[str] = []
