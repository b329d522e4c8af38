"""Where the tests' files are: the ``tests/`` directory (its ``data/``) and the repository."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
DATA = TESTS / "data"
REPO = TESTS.parent
