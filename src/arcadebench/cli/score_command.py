"""``arcadebench score <spec> <file>...``: score results or episode logs, print and save them.

Beside the protocol's numbers: the probability of improvement between algorithms (every pair,
or ``--compare X Y``), sample-efficiency curves from the logs (``--curve``), the tables in
LaTeX or Markdown to paste into a paper (``--format``), and the spec's published references
beside them (``--references NAME... | none``).
"""

from __future__ import annotations

import argparse
import re
import shlex

from arcadebench.benchmarks.scoring.results import Results, score
from arcadebench.cli import in_cli_words, options, warnings_printed, write_file
from arcadebench.errors import InvalidArgument

__all__ = ["parse_frames", "register"]

_UNITS = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9}
_CLI_WORDS = {"compare": "--compare", "curve": "--curve"}


def parse_frames(text: str) -> int:
    """A frame count as typed: ``10M``, ``500k``, ``2.5M``, ``1e6``, ``200_000_000``, ``1,000``.

    Example:
        >>> [parse_frames(t) for t in ("10M", "500k", "2.5M", "1e6", "200_000_000")]
        [10000000, 500000, 2500000, 1000000, 200000000]
    """
    match = re.fullmatch(r"\s*([0-9][0-9_,]*(?:\.[0-9]+)?(?:e[0-9]+)?)\s*([kmb]?)\s*", text.lower())
    value = None
    if match:
        number = float(match.group(1).replace("_", "").replace(",", "")) * _UNITS[match.group(2)]
        value = int(number) if number.is_integer() and number > 0 else None
    if value is None:
        raise argparse.ArgumentTypeError(
            f"`--curve` frames must be positive whole frame counts (10M, 500k, 1e6), got {text!r}"
        )
    return value


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``score`` sub-command."""
    parser = options.add_command(
        subparsers,
        "score",
        help="score results (CSV/JSON) or episode logs against a protocol",
        description=(
            "Score raw per-game results or episode logs against a protocol: normalised scores, "
            "aggregates, Atari-X estimates and stratified bootstrap confidence intervals, the "
            "probability of improvement between algorithms, and sample-efficiency curves from "
            "logs. Inputs: CSV `game,score[,algorithm][,run][,frames]`, "
            "JSON {algorithm: {game: score | [runs]}}, "
            "episode logs (.jsonl) or directories of them, or a results JSON to re-score."
        ),
        example="arcadebench score atari5 rainbow.csv --json rainbow.json",
    )
    options.add_spec_argument(parser)
    parser.add_argument(
        "files", nargs="+", metavar="file", help="score files, episode logs or log directories"
    )
    options.add_json(parser, "the results")
    parser.add_argument(
        "--csv", metavar="FILE", help="also write the results to FILE as a tidy CSV"
    )
    options.add_ci(parser)
    options.add_reps(parser)
    options.add_seed(parser, "the bootstrap's")
    parser.add_argument(
        "--compare",
        nargs=2,
        action="append",
        metavar=("X", "Y"),
        help="give P(X > Y), the probability of improvement (Agarwal et al. 2021), for these "
        "two algorithms; repeat for more pairs (default: every pair)",
    )
    parser.add_argument(
        "--curve",
        nargs="*",
        type=parse_frames,
        metavar="FRAMES",
        help="sample-efficiency curves from the logs: every aggregate, with intervals, at these "
        "training frame counts (10M, 500k...) and the protocol's checkpoints; without "
        "FRAMES, at about 20 round counts up to the longest run",
    )
    options.add_format(
        parser,
        {
            "table": "plain-text tables",
            "latex": "the aggregate, per-game and improvement tables as LaTeX (booktabs) to "
            "paste into a paper",
            "markdown": "the same tables as Markdown",
        },
    )
    options.add_references(
        parser,
        "with --format latex or markdown, the first four obtained under the spec's own "
        "protocol; in the plain table, every one",
        note="; put it after the files",
    )
    parser.add_argument(
        "--other-protocols",
        nargs="*",
        metavar="RESULTS",
        help="with --format latex|markdown: also the published references obtained under "
        "another protocol, and these results JSONs of other specs, each in tables of their "
        "own headed by what differs",
    )
    parser.set_defaults(handler=_score)


def _score(args: argparse.Namespace) -> int:
    others = _other_results(args)
    words = ["arcadebench", "score", args.spec, *args.files]
    for option in ("json", "csv", "ci", "reps", "seed"):
        if getattr(args, option) is not None:
            words += [f"--{option}", str(getattr(args, option))]
    for x, y in args.compare or ():
        words += ["--compare", x, y]
    if args.curve is not None:
        words += ["--curve", *(str(f) for f in args.curve)]
    command = " ".join(shlex.quote(w) for w in words)
    curve: bool | list[int] = False if args.curve is None else (args.curve or True)
    with warnings_printed():  # also when an error follows (e.g. a log without episodes)
        try:
            results = score(
                args.spec,
                args.files,
                command=command,
                compare=[(x, y) for x, y in args.compare] if args.compare else None,
                curve=curve,
                **options.keywords(args, "ci", "reps", "seed"),
            )
        except InvalidArgument as error:
            raise InvalidArgument(in_cli_words(str(error), _CLI_WORDS)) from None
    if others:
        _check_others(results, others, args.other_protocols)
    if args.format == "table":
        print(results.table(references=args.references))
    else:
        paper = results.to_latex if args.format == "latex" else results.to_markdown
        other_protocols = args.other_protocols is not None
        print(paper(other_protocols=other_protocols, others=others, references=args.references))
    for path, write in ((args.json, results.to_json), (args.csv, results.to_csv)):
        if path:
            write_file(write, path, "the results")
    return 0


def _other_results(args: argparse.Namespace) -> list[Results]:
    """The ``--other-protocols`` results JSONs, read before anything is scored."""
    if args.other_protocols is None:
        return []
    if args.format == "table":
        raise InvalidArgument(
            "`--other-protocols` must go with --format latex or markdown, got the plain-text "
            "table, which shows every published reference already, each with its protocol"
        )
    return [Results.from_json(path) for path in args.other_protocols]


def _check_others(results: Results, others: list[Results], paths: list[str]) -> None:
    """Results of the very spec scored are inputs, not another protocol's."""
    for path, other in zip(paths, others, strict=True):
        if other.spec.get("hash") == results.spec.get("hash"):
            raise InvalidArgument(
                f"`--other-protocols` must name results of other specs, got {path}, of "
                f"{results.spec.get('name')} itself; score it with the other inputs instead"
            )
