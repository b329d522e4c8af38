"""``arcadebench leaderboard open|add|build|close``: a verified leaderboard kept in a folder.

``open`` makes a board and its secret (kept outside it), ``add`` checks a submitted run folder
and keeps it or its rejection, ``build`` writes the static site, ``close`` reveals the secret.
Exit status of ``add``: 0 when the submission was accepted, 1 when it was rejected (the board
keeps the reason, for its rejected page), 2 on bad input (nothing recorded).
"""

from __future__ import annotations

import argparse
import sys

from arcadebench.benchmarks.leaderboard import (
    add_submission,
    build_site,
    close_board,
    open_board,
)
from arcadebench.cli import options

__all__ = ["register"]

_SECRET = "the board's secret file, kept outside the board's folder"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``leaderboard`` sub-command and its four actions."""
    parser = options.add_command(
        subparsers,
        "leaderboard",
        help="a verified leaderboard: open, add a run, build its site, close",
        description=(
            "A leaderboard is a folder: submitted runs are verified by replaying every episode "
            "and recomputing their results, a submitted saved policy is played again on seeds "
            "the board draws from a secret kept outside the folder (its SHA-256 published at "
            "open, the secret revealed at close), and `build` writes a static site with one "
            "page per protocol and a page of rejected submissions."
        ),
        example="arcadebench leaderboard add board/ results/ --meta submission.yaml",
    )
    actions = parser.add_subparsers(dest="action", metavar="<action>", required=True)
    opened = options.add_command(
        actions,
        "open",
        help="open a new board in an empty folder, its secret written outside it",
        description="Open a board: write board.json (its settings and the SHA-256 of a new "
        "secret) in BOARD, and the secret itself to --secret-file, which must be outside BOARD "
        "and kept private until the board closes.",
        example="arcadebench leaderboard open board/ --secret-file ~/board.secret",
    )
    opened.add_argument("board", metavar="BOARD", help="a new or empty folder")
    opened.add_argument("--secret-file", required=True, metavar="FILE", help=_SECRET)
    opened.add_argument("--title", help="the board's name, heading its site (default: BOARD's)")
    opened.add_argument(
        "--episodes",
        type=int,
        default=10,
        metavar="N",
        help="episodes a game the board plays a submitted policy for (default: 10)",
    )
    opened.add_argument(
        "--alpha",
        type=float,
        default=0.01,
        help="family-wise error rate of the re-execution test across a submission's games, "
        "Holm-corrected (default: 0.01)",
    )
    opened.set_defaults(handler=_open)
    added = options.add_command(
        actions,
        "add",
        help="check a run's output folder and add it, or keep its rejection",
        description="Verify a run folder as a whole (every episode replayed, every job "
        "complete, results recomputed), under one built-in protocol of the board's version; "
        "with --policy, play the policy on the board's hidden seeds and test the claims game by "
        "game. Exit status: 0 accepted, 1 rejected (the reason is kept on the board), 2 bad "
        "input.",
        example="arcadebench leaderboard add board/ evaluations/ --policy sb3:PPO:ppo.zip "
        "--secret-file ~/board.secret",
    )
    added.add_argument("board", metavar="BOARD", help="the board's folder")
    added.add_argument("run", metavar="RUN_DIR", help="a run's output folder (results.json, logs)")
    added.add_argument(
        "--policy",
        metavar="AGENT",
        help="the saved policy that played the run (any --agent of `arcadebench run`), "
        "re-executed on the board's hidden seeds",
    )
    added.add_argument("--secret-file", metavar="FILE", help=_SECRET + " (with --policy)")
    added.add_argument(
        "--meta",
        metavar="FILE",
        help="the submission's metadata, JSON or YAML: name, authors, paper, code, compute, "
        "date, notes",
    )
    added.add_argument("--name", help="its name on the board (default: the metadata's or agent's)")
    options.add_workers(added, "each replaying or re-executing episodes")
    options.add_backend(added, "the cluster of RAY_ADDRESS, else a local one")
    added.set_defaults(handler=_add, python_words={"secret_file": "--secret-file"})
    built = options.add_command(
        actions,
        "build",
        help="write the board's static site: a page per protocol, the rejected page, JSON",
        description="Write the static site of the board: one page per protocol ranking its "
        "rows by the protocol's headline aggregate, each row's check page with its clips, the "
        "published references marked as not verified, the rejected submissions, and the same "
        "data as JSON. The site works from files, without a server.",
        example="arcadebench leaderboard build board/ --out site/",
    )
    built.add_argument("board", metavar="BOARD", help="the board's folder")
    options.add_out(built, "the site's pages, clips and JSON", "site")
    built.set_defaults(handler=_build)
    closed = options.add_command(
        actions,
        "close",
        help="close the board and reveal its secret, so every draw can be checked",
        description="Close the board: it takes no more submissions, and board.json gets the "
        "secret, whose SHA-256 it published when it opened, so that anyone can recompute the "
        "seeds every policy was re-executed on.",
        example="arcadebench leaderboard close board/ --secret-file ~/board.secret",
    )
    closed.add_argument("board", metavar="BOARD", help="the board's folder")
    closed.add_argument("--secret-file", required=True, metavar="FILE", help=_SECRET)
    closed.set_defaults(handler=_close)


def _open(args: argparse.Namespace) -> int:
    passed = options.keywords(args, "title", "episodes", "alpha")
    board = open_board(args.board, args.secret_file, **passed)
    print(
        f"opened {board.path}: secret {board.settings.secret_sha256} (the secret is in "
        f"{args.secret_file}: keep it private until `arcadebench leaderboard close`)"
    )
    return 0


def _add(args: argparse.Namespace) -> int:
    passed = ("policy", "meta", "name", "secret_file", "workers", "backend")
    record = add_submission(args.board, args.run, **options.keywords(args, *passed))
    if record.status == "rejected":
        print(f"arcadebench: rejected {record.name}: {record.reason}", file=sys.stderr)
        return 1
    print(f"accepted {record.name} on the {(record.spec or {}).get('name')} page: {record.badge}")
    for check in record.checks:
        print(f"  {check['name']}: {check['detail']}")
    return 0


def _build(args: argparse.Namespace) -> int:
    index = build_site(args.board, args.out)
    print(f"wrote the site: {index}")
    return 0


def _close(args: argparse.Namespace) -> int:
    board = close_board(args.board, args.secret_file)
    print(f"closed {board.path} on {board.settings.closed}: its secret is now in board.json")
    return 0
