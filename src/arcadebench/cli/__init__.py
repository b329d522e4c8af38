"""The ``arcadebench`` command: one sub-command per ``<command>_command.py`` module here.

Each such module defines ``register(subparsers)``, which adds its sub-command and sets
``handler``; modules are discovered, not listed. Any :class:`ArcadebenchError` becomes one line
on stderr and exit status 2; Ctrl-C exits with 130.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from arcadebench._version import __version__
from arcadebench.errors import ArcadebenchError

__all__ = ["main"]


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arcadebench",
        description="Published Atari and Sonic evaluation protocols: run, score and report.",
    )
    parser.add_argument("--version", action="version", version=f"arcadebench {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="<command>", required=True)
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if module.name.endswith("_command"):
            importlib.import_module(f"{__name__}.{module.name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _build_parser().parse_args(argv)
    try:
        return args.handler(args) or 0
    except ArcadebenchError as error:
        print(f"arcadebench: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("arcadebench: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
