"""Sphinx configuration of arcadebench's documentation site (``python3 dev.py docs``).

Sphinx with the furo theme, as Gymnasium's site: the library's docstrings are Google style full
of Sphinx roles (``:func:``, ``:mod:``), which autodoc and napoleon render and cross-link, and
sphinx-argparse documents the command line from its parser. Pages are Markdown (MyST). The
protocol pages and the API reference's list of names are generated at every build from the
specs and ``arcadebench.__all__`` (``_ext/arcadebench_pages.py``), so they cannot drift. The
build is strict: ``-W --keep-going -n``, a broken link or cross-reference fails it.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

import arcadebench  # noqa: E402 - the package documented, after the extension path

project = "arcadebench"
author = "The arcadebench developers"
copyright = "2026, The arcadebench developers"  # noqa: A001 - Sphinx's name
release = arcadebench.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinxarg.ext",
    "arcadebench_pages",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "__pycache__", "_ext"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

html_theme = "furo"
html_title = f"arcadebench {release}"
html_static_path: list[str] = []

autodoc_typehints = "description"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": True}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True  # "Attributes:" as fields: dataclass members are documented once
napoleon_use_rtype = False  # a "Returns:" line's words before a colon are prose, not a type

# -n: every cross-reference must resolve. What lives outside this site (the standard library,
# numpy, Gymnasium...) has no inventory offline, so those targets are named here, never ours.
# The optional extras' frameworks are mocked while the API is read: `python3 dev.py docs`
# installs only the docs and report extras, and a module such as training/sb3.py imports
# stable-baselines3 at its top (tests/test_docs_site.py builds with them made unimportable)
autodoc_mock_imports = ["stable_baselines3", "torch", "ray", "onnxruntime", "onnx", "envpool"]

nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(os|collections\.abc|typing|typing_extensions|pathlib|enum|numbers)\..*"),
    (r"py:.*", r"(np|numpy|gym|gymnasium|matplotlib|ray|torch|stable_baselines3)\..*"),
    (r"py:.*", r"(NDArray|ArrayLike|PathLike|Path|Any|Callable|Mapping|Sequence|Iterable)"),
    (r"py:.*", r"(Iterator|Collection|Literal|TypeAlias|Protocol|Self|IO|BinaryIO|TextIO)"),
    (r"py:class", r"(float|int|str|bool|bytes|dict|list|tuple|set|frozenset|object|type)"),
    (r"py:.*", r"(argparse|collections|types|ale_py|stable_retro|retro)\..*"),
    (r"py:class", r"(Figure|VectorEnv|VecEnv|Env|Wrapper|Space)"),
    # napoleon reads "name (in points): ..." as a type: words that are no class name are prose
    (r"py:class", r".* .*|[a-z][a-z_]*"),
    (r"py:class", r".*\._\w+|.*\.[A-Z]"),  # private classes and type variables in annotations
]
