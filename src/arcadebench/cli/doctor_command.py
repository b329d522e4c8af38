"""``arcadebench doctor``: what this machine can play, and what to do about what it cannot.

It prints the versions that matter (Python, Gymnasium, ale-py, stable-retro), checks that both
emulators run headless (in a child process without ``$DISPLAY``: stable-retro's default render
mode opens a window), lists every retro game with its ROM status (imported? the dump the
protocol expects, by SHA-1?) and how many of its levels each split has, counts the Atari ROMs
ale-py bundles, and ends with one line per problem saying how to fix it.

Exit status: 0 when the emulators run and every game the installation itself provides is
playable (ale-py bundles the Atari ROMs); 1 when something is broken, or when a spec named on the
command line needs ROMs that are not imported (Sonic's are not redistributable: without a spec
named, they are listed as a to-do, not a failure); 2 on bad input.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
from importlib import metadata

from arcadebench._table import render_table
from arcadebench._version import __version__
from arcadebench.benchmarks.envs.roms import IMPORT_COMMAND, rom_status
from arcadebench.benchmarks.envs.sonic import levels
from arcadebench.cli import options
from arcadebench.specs import list_specs, load_spec

__all__ = ["register"]

_PROBE_TIMEOUT = 120.0
_PROBE = """
import sys
which = sys.argv[1]
if which == "stable-retro":
    import stable_retro
    env = stable_retro.make("Airstriker-Genesis-v0", render_mode=None)
    obs, _ = env.reset()
    for _ in range(4):
        obs, *_ = env.step(env.action_space.sample())
    env.close()
else:
    from ale_py.env import AtariEnv
    env = AtariEnv("pong", render_mode=None)
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(0)
    env.close()
print("x".join(map(str, obs.shape)))
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``doctor`` sub-command."""
    parser = options.add_command(
        subparsers,
        "doctor",
        help="what this machine can play: ROMs, emulators, versions",
        description=(
            "Check what this machine can play: versions, headless emulation, the retro ROMs "
            "(imported, right SHA-1) and the Atari ROMs of every protocol, and print what to do "
            "for the missing ones. Exit status 1 when something is not playable."
        ),
        example="arcadebench doctor sonic --levels",
    )
    parser.add_argument(
        "specs",
        nargs="*",
        metavar="SPEC",
        help="built-in spec names or YAML files (default: every built-in spec)",
    )
    parser.add_argument("--levels", action="store_true", help="also list every retro level")
    parser.add_argument(
        "--no-probe",
        action="store_true",
        help="skip starting the emulators (the headless check, a few seconds)",
    )
    parser.set_defaults(handler=_doctor)


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def _probe(which: str) -> tuple[bool, str]:
    """Start ``which`` emulator in a child process without a display; (ok, detail)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE, which],
            capture_output=True,
            text=True,
            env=env,
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return False, f"no answer within {_PROBE_TIMEOUT:.0f} s"
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        return False, lines[-1] if lines else f"exit status {done.returncode}"
    shape = done.stdout.strip().splitlines()[-1]
    game = "Airstriker-Genesis-v0" if which == "stable-retro" else "pong"
    return True, f"{game} reset and stepped without a display (frames {shape})"


def _doctor(args: argparse.Namespace) -> int:
    specs = [load_spec(name) for name in (args.specs or list_specs())]
    problems: list[str] = []
    failures: list[str] = []  # what makes the exit status 1
    print(f"arcadebench {__version__} doctor\n")
    rows: list[list[object]] = [["python", platform.python_version()], ["arcadebench", __version__]]
    rows += [[name, _version(name)] for name in ("gymnasium", "ale-py", "stable-retro", "numpy")]
    print(render_table(["component", "version"], rows, title="versions"))

    if not args.no_probe:
        rows = []
        for which in ("stable-retro", "ale-py"):
            ok, detail = _probe(which)
            rows.append([which, "ok" if ok else "FAILED", detail])
            if not ok:
                problems.append(f"{which} does not run headless here: {detail}")
                failures.append(problems[-1])
        print(
            "\n"
            + render_table(["emulator", "headless", "detail"], rows, title="headless emulation")
        )

    for spec in (s for s in specs if s.platform == "retro"):
        records = levels(spec)
        rows = []
        for game in spec.retro_games:
            status = rom_status(spec, game)
            splits = [
                sum(r.game == game and r.split == s for r in records) for s in ("train", "test")
            ]
            sha1 = (status.sha1 or "-")[:12]
            rows.append([game, status.game_id, status.state, sha1, *splits, status.path or "-"])
            problem = status.problem()
            if problem:
                problems.append(problem)
                if args.specs:  # asked about this spec by name: it cannot be played
                    failures.append(problem)
        columns = ["game", "stable-retro id", "rom", "sha1", "train", "test", "file"]
        title = f"{spec.name}: retro ROMs ({spec.source})"
        print("\n" + render_table(columns, rows, title=title))
        test = [r for r in records if r.split == "test"]
        print(
            f"playable: {sum(r.playable for r in records)} of {len(records)} levels, "
            f"{sum(r.playable for r in test)} of {len(test)} test levels"
        )
        if args.levels:
            rows = [[r.name, r.split, r.state, r.playable, r.env_id] for r in records]
            columns = ["level", "split", "state", "playable", "id"]
            print("\n" + render_table(columns, rows, title=f"{spec.name} levels"))

    atari = [s for s in specs if s.platform == "atari"]
    if atari:
        from ale_py.roms import get_rom_path

        rows = []
        for spec in atari:
            missing = [game for game in spec.games if get_rom_path(game) is None]
            present = len(spec.games) - len(missing)
            rows.append([spec.name, present, len(spec.games), ", ".join(missing) or "-"])
            if missing:
                problems.append(
                    f"{spec.name}: ale-py {_version('ale-py')} lacks the ROMs of "
                    f"{', '.join(missing)}; upgrade it (pip install -U ale-py), which bundles them"
                )
                failures.append(problems[-1])
        title = "Atari ROMs (bundled with ale-py)"
        print("\n" + render_table(["spec", "present", "games", "missing"], rows, title=title))

    print()
    if not problems:
        print("everything is playable.")
        return 0
    print(f"to do ({len(problems)}):")
    for problem in dict.fromkeys(problems):
        print(f"- {problem}")
    if any(IMPORT_COMMAND in p for p in problems):
        print(
            "\nROMs are imported into stable-retro's own data directory, so its site-packages must "
            "be writable; the importer matches files (zips too) by SHA-1 and prints "
            "'Imported N games'. Then run `arcadebench doctor` again, and "
            "`pytest -m sonic_rom` for the tests that need the ROMs."
        )
    return 1 if failures else 0
