"""Evaluate an agent through a protocol with the Python API: the runner, its logs and its scores.

    python examples/evaluate_random.py                       # Atari-5, one episode per game
    python examples/evaluate_random.py --episodes 3 --seeds 0 1 --games qbert phoenix

The same as `arcadebench run atari5 --agent random --episodes 1`: one worker process per
(game, seed), episode logs in --out/random/atari5/<game>/<seed>.jsonl, results.json next to them.
Running it again plays nothing and prints the same table; more --episodes need --resume.
"""

from __future__ import annotations

import argparse

import arcadebench


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="atari5")
    parser.add_argument("--games", nargs="+", help="default: the spec's games (the Atari-5 five)")
    parser.add_argument("--episodes", type=int, default=1)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default="results/evaluate_random")
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()

    results = arcadebench.evaluate(
        "random",  # or "noop", "my_module:MyAgent", a callable obs -> action, an object...
        args.spec,
        args.games,
        episodes=args.episodes,
        seeds=args.seeds,  # one run per seed; the same seeds give the same episodes
        workers=args.workers,
        log_dir=args.out,
        resume=args.resume,
    )
    print(results.table())  # aggregates first, then per game
    aggregates = results.algorithms["random"]["aggregates"]
    if "atari5" in aggregates:
        print(f"\nAtari-5 estimate of the 57-game median HNS: {aggregates['atari5']:.2f}")


if __name__ == "__main__":  # required: worker processes import this file
    main()
