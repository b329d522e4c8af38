"""Where the tests' files are: the ``tests/`` directory (its ``data/``) and the repository."""

import importlib.util
import os
from pathlib import Path
from types import ModuleType

TESTS = Path(__file__).resolve().parent
DATA = TESTS / "data"
REPO = TESTS.parent
PYTHONPATH_WITH_TESTS = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))
"""The PYTHONPATH of a process that imports the tests' helper modules (``runner_agents``...)."""


def docs_generator() -> ModuleType:
    """``docs/generate.py``, the script that writes the generated pages of docs/."""
    spec = importlib.util.spec_from_file_location("docs_generate", REPO / "docs" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
