"""Level switches of the joint Sonic env: load a save state, or start another game's emulator.

stable-retro allows one emulator per process, so ``JointSonicEnv`` (benchmarks/envs/joint.py)
switches to a level of *another game* by closing the emulator and building that level's environment,
and to a level of the *same game* by loading the level's save state into the running emulator at
reset. This times, on the Sonic protocol's Airstriker test integration (same code path; the Sonic
ROMs do not ship), the median of:

- ``reset``: a plain reset of the current level (the baseline any episode pays);
- ``same game``: reset to another level of the same game (state swap + reset);
- ``other game``: reset to a level of the other game (close + new emulator + wrappers + reset);
- ``make``: building a level's environment from scratch (``arcadebench.make``) and closing it.

    .venv/bin/python perf/bench_sonic_joint.py [--repeat 40]

Writes perf/results/bench_sonic_joint.json.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from _timing import median, parser, table, timed, write_json

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))

from sonic_helpers import write_sonic_airstriker  # type: ignore[import-not-found]  # noqa: E402 - tests/, on sys.path at run time only

import arcadebench  # noqa: E402
from arcadebench.benchmarks.envs.joint import JointSonicEnv  # noqa: E402


def repeated(function: Callable[[], object], repeat: int) -> float:
    """Median seconds of ``function()`` over ``repeat`` calls in a row.

    Not interleaved: each case is a sequence of level switches that needs its own previous level.
    """
    return median([timed(function) for _ in range(repeat)])


def main() -> None:
    cli = parser(__doc__)
    cli.add_argument("--repeat", type=int, default=40)
    args = cli.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        spec = str(write_sonic_airstriker(Path(tmp)))
        env = JointSonicEnv(
            spec, levels=["AirstrikerA-Zone0", "AirstrikerA-Zone1", "AirstrikerB-Zone0"]
        )
        env.reset(seed=0, options={"level": "AirstrikerA-Zone0"})
        cases: dict[str, float] = {}
        cases["reset"] = repeated(
            lambda: env.reset(options={"level": "AirstrikerA-Zone0"}), args.repeat
        )
        flip = iter(["AirstrikerA-Zone1", "AirstrikerA-Zone0"] * args.repeat)
        cases["same game"] = repeated(lambda: env.reset(options={"level": next(flip)}), args.repeat)
        other = iter(["AirstrikerB-Zone0", "AirstrikerA-Zone0"] * args.repeat)
        cases["other game"] = repeated(
            lambda: env.reset(options={"level": next(other)}), args.repeat
        )
        env.close()
        cases["make"] = repeated(
            lambda: arcadebench.make(spec, "AirstrikerA-Zone2").close(), args.repeat
        )
    base = cases["reset"]
    rows = [[name, seconds * 1e3, seconds / base] for name, seconds in cases.items()]
    print(table(["case", "median ms", "x reset"], rows, "joint env level switches"))
    write_json("bench_sonic_joint", {"repeat": args.repeat, "median_seconds": cases})


if __name__ == "__main__":
    main()
