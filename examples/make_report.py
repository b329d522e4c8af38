"""Evaluate an agent, then report it next to published agents: figures and one HTML page.

    python examples/make_report.py                           # Atari-5, one episode per game
    python examples/make_report.py --games qbert phoenix     # quicker
    python examples/make_report.py --seeds 0 1 2 --figure aggregates \
        --figure-to docs/report-example.png                  # the README's figure

A real evaluation with the runner (`arcadebench.evaluate`, the random agent, one worker process
per game), then `arcadebench.benchmarks.report.report` on the run's results.json with published
references: the human baseline (Atari-5 Table 12), DQN and Rainbow as published (per-game scores
from the Atari-5 authors' data set) and Rainbow's Table 3 estimate. The same as

    arcadebench run atari5 --agent random --episodes 1 --out results/make_report
    arcadebench report results/make_report/results.json --out results/make_report/report \\
        --references human "DQN (noop)" "Rainbow (noop)" "Rainbow DQN (Table 3)"
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import arcadebench
from arcadebench.benchmarks.report import report

REFERENCES = ["human", "DQN (noop)", "Rainbow (noop)", "Rainbow DQN (Table 3)"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", help="default: the spec's games (the Atari-5 five)")
    parser.add_argument("--episodes", type=int, default=1)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="one run per seed")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default="results/make_report")
    parser.add_argument("--figure", default="per_game", help="the figure --figure-to copies")
    parser.add_argument("--figure-to", help="copy that figure here (e.g. docs/report-example.png)")
    args = parser.parse_args()

    arcadebench.evaluate(
        "random",
        "atari5",
        args.games,
        episodes=args.episodes,
        seeds=args.seeds,
        workers=args.workers,
        log_dir=args.out,
        progress="off",
    )
    results = Path(args.out) / "results.json"
    html = report([results], Path(args.out) / "report", references=REFERENCES, reps=1000)
    print(f"report: {html}")
    for png in sorted(html.parent.glob("*.png")):
        print(f"figure: {png}")
    if args.figure_to:
        Path(args.figure_to).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(html.parent / f"{args.figure}.png", args.figure_to)
        print(f"copied {args.figure}.png to {args.figure_to}")


if __name__ == "__main__":  # required: worker processes import this file
    main()
