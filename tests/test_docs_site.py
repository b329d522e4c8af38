"""The documentation site: built strictly as `python3 dev.py docs` builds it, opened in Chromium.

The build fails on any warning, broken link or unresolved cross-reference. The built site is
served on localhost and rendered by headless Chromium: its home page and a protocol page show
their content with no console error, and the search, asked through a ``?q=`` URL as a reader's
bookmark would, finds the protocol.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from chromium import dump_dom, needs_chromium
from testdata import REPO

import arcadebench
from arcadebench.specs import list_specs, load_spec

# the search script runs its query before the DOM is dumped
SEARCH_TIME = "--virtual-time-budget=5000"


def _dev():
    """dev.py as a module: the test builds the site with the command it documents."""
    import importlib.util

    loaded = importlib.util.spec_from_file_location("dev", REPO / "dev.py")
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    return module


# what `python3 dev.py docs` does not install (it installs the docs and report extras only)
OPTIONAL = ("stable_baselines3", "torch", "ray", "onnxruntime", "onnx", "envpool")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built as a fresh clone builds it: the optional extras' frameworks unimportable."""
    out = tmp_path_factory.mktemp("site") / "html"
    absent = tmp_path_factory.mktemp("absent")
    for module in OPTIONAL:
        (absent / module).mkdir()
        (absent / module / "__init__.py").write_text(
            f"raise ModuleNotFoundError('no {module} here: the docs extras do not install it')\n"
        )
    command = _dev().docs_command(out)
    command[0] = str(Path(__import__("sys").executable))
    env = {**os.environ, "PYTHONPATH": str(absent)}
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900, env=env)
    assert done.returncode == 0, (done.stdout + done.stderr)[-5000:]
    assert "WARNING" not in done.stderr and "ERROR" not in done.stderr, done.stderr[-5000:]
    return out


@pytest.fixture(scope="module")
def served(site) -> Iterator[str]:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_every_protocol_has_a_page_from_its_spec(site):
    for name in list_specs():
        spec = load_spec(name)
        page = (site / "_generated" / "protocols" / f"{name}.html").read_text(encoding="utf-8")
        assert spec.hash in page and spec.title.split(":")[0] in page, name
        assert f"{name}.yaml" not in page or "literal-block" in page  # the spec file, set out
    api = (site / "_generated" / "api.html").read_text(encoding="utf-8")
    for name in set(arcadebench.__all__) - {"__version__"}:
        assert f'id="arcadebench.{name}"' in api, f"arcadebench.{name} is not in the API reference"
    cli = (site / "reference" / "cli.html").read_text(encoding="utf-8")
    assert all(f">{command}<" in cli or f"{command}</" in cli for command in ("run", "score"))


def render(url: str, profile: Path) -> tuple[str, list[str]]:
    return dump_dom(url, profile, SEARCH_TIME)


@needs_chromium
def test_the_site_renders_and_searches_in_chromium(served, tmp_path):
    home, console = render(f"{served}/index.html", tmp_path / "profile")
    assert console == [], console
    assert "<article" in home and "arcadebench" in home and 'href="_generated/api.html"' in home
    saber, console = render(f"{served}/_generated/protocols/saber.html", tmp_path / "profile")
    assert console == [], console
    assert "Sticky actions" in saber and "<table" in saber
    found, console = render(f"{served}/search.html?q=sticky", tmp_path / "profile")
    assert console == [], console
    summary = re.search(r"found (\d+) pages? matching", found)
    assert summary and int(summary.group(1)) >= 1, found[-2000:]
    assert "protocols/saber.html" in found  # the protocol page is among the results
