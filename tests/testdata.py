"""Where the tests' files are: the ``tests/`` directory (its ``data/``) and the repository."""

import importlib.util
from pathlib import Path
from types import ModuleType

TESTS = Path(__file__).resolve().parent
DATA = TESTS / "data"
REPO = TESTS.parent


def docs_generator() -> ModuleType:
    """``docs/generate.py``, the script that writes the generated pages of docs/."""
    spec = importlib.util.spec_from_file_location("docs_generate", REPO / "docs" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
