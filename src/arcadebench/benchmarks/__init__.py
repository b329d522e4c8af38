"""The pipeline's stages, one package each: environments, scoring, subset, runner, report, check.

See DEVELOPING.md, "The map": ``envs`` and ``scoring`` are independent, ``subset`` uses
``scoring``, and ``runner``, ``report`` and ``conformance`` sit on top.
"""

__all__: list[str] = []
