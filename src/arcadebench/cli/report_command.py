"""``arcadebench report <results.json | logs>... --out DIR``: figures and a self-contained HTML.

``--paper DIR`` writes a paper's figure set instead: rliable's four figures and the per-game
table as PDF and PNG, and the tables as LaTeX and Markdown. ``--references NAME... | none``
chooses the published references shown (by default the first four of the spec's own protocol);
``--clips`` shows each result's best and worst episodes. ``--compare`` and ``--episodes``, their
old names, are still taken with a warning.
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

from arcadebench._table import count
from arcadebench.cli import options, warnings_printed
from arcadebench.errors import InvalidArgument, install_hint

if TYPE_CHECKING:
    from arcadebench.specs import Spec

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``report`` sub-command."""
    parser = options.add_command(
        subparsers,
        "report",
        help="figures and one self-contained report.html from results or logs",
        description=(
            "Write PNG figures and one self-contained report.html (no network, images inlined): "
            "the protocol card, per-game and aggregate tables with CIs, and plots, with several "
            "results and published references side by side. Inputs: results JSONs (arcadebench "
            "score --json, a run's results.json), episode logs or log directories, score CSV/JSON "
            "files; everything but results JSONs is scored first. Needs matplotlib: "
            f"{install_hint('report', 'matplotlib')}."
        ),
        example="arcadebench report results/ --out report/",
    )
    parser.add_argument(
        "inputs",
        nargs="*",
        metavar="input",
        help="results JSONs, episode logs (.jsonl), log directories or score files",
    )
    options.add_out(parser, "report.html and its figures", "report")
    parser.add_argument(
        "--paper",
        metavar="DIR",
        help="write a paper's figure set to DIR instead of the HTML page: aggregates with "
        "intervals, performance profiles, probability of improvement, sample-efficiency curves "
        "and the per-game table, each as PDF and PNG, and tables.tex / tables.md",
    )
    parser.add_argument(
        "--figure-width",
        type=float,
        metavar="INCHES",
        help="with --paper: every figure's width, 2 to 8 inches (default: 3.25, a column of a "
        "two-column paper; 6.75 spans both)",
    )
    parser.add_argument(
        "--font-size",
        type=float,
        metavar="PT",
        help="with --paper: the size of the figures' text, 6 to 12 points (default: 8)",
    )
    parser.add_argument(
        "--clips",
        action="store_true",
        help="show each result's best and worst episode of every game as GIF clips, replayed "
        "from the logs' recordings (the inputs must include its logs or its run directory)",
    )
    options.add_spec(parser, "to report the inputs under", "the one the inputs name")
    options.add_references(
        parser,
        "the first four the spec has of its own protocol",
        note=", in the figures, the page and the --paper tables",
    )
    parser.add_argument(
        "--list-references",
        metavar="SPEC",
        help="list the references --references accepts for SPEC and exit",
    )
    parser.add_argument(
        "--metric",
        help="per-game metric of the figures (default: the spec's "
        "headline metric, e.g. hwrns for SABER)",
    )
    options.add_ci(parser)
    options.add_reps(parser)
    options.add_seed(parser, "the bootstrap's")
    options.add_deprecated(parser, "--compare", "--references")
    options.add_deprecated(parser, "--episodes", "--clips")
    parser.set_defaults(handler=_report)


def _report(args: argparse.Namespace) -> int:
    from arcadebench.benchmarks.report import FIGURES, load_report_data, write_paper, write_report
    from arcadebench.benchmarks.report.episodes import CLIP_PREFIX
    from arcadebench.benchmarks.report.style import require_matplotlib
    from arcadebench.specs import load_spec

    if args.list_references:
        _list_references(load_spec(args.list_references))
        return 0
    if not args.paper and (args.figure_width is not None or args.font_size is not None):
        raise InvalidArgument(
            "`--figure-width` and `--font-size` size the figures of --paper; add --paper DIR "
            "(the HTML page's figures are drawn for a screen)"
        )
    if args.references is not None:
        # `--references A B results.json`: nargs="+" took the input too; give it back
        moved = [c for c in args.references if _looks_like_input(c)]
        args.inputs = [*args.inputs, *moved]
        args.references = [c for c in args.references if c not in moved] or None
    if not args.inputs:
        raise InvalidArgument(
            "`input` must name at least one results JSON, log or score file, got none; "
            "e.g. arcadebench report results/results.json --out report"
        )
    with warnings_printed():
        require_matplotlib()  # before anything is read, as report() does
        passed = ("spec", "references", "metric", "ci", "reps", "seed")
        data = load_report_data(args.inputs, **options.keywords(args, *passed))
        if args.paper:
            sizes = {"figure_width": args.figure_width, "font_size": args.font_size}
            written = write_paper(
                data, args.paper, **{k: v for k, v in sizes.items() if v is not None}
            )
        else:
            path = write_report(data, args.out, episodes=args.clips)
    if args.paper:
        stems = list(dict.fromkeys(p.stem for p in written if p.suffix == ".pdf"))
        print(
            f"wrote {args.paper}: {len(stems)} figures as PDF and PNG ({', '.join(stems)}), "
            "tables.tex, tables.md"
        )
    else:
        figures = [f"{name}.png" for name, *_ in FIGURES if (path.parent / f"{name}.png").exists()]
        clips = sorted(path.parent.glob(f"{CLIP_PREFIX}*.gif"))
        shown = f", {count(len(clips), 'episode')} replayed" if args.clips else ""
        print(f"wrote {path} ({len(figures)} figures: {', '.join(figures)}{shown})")
    for other in data.others:
        theirs, changing = other.data.spec.name, len(other.diff.score_changing)
        print(
            f"results under {theirs} are in a section of their own, not ranked with "
            f"{data.spec.name}'s: {changing} of the protocols' differences change scores "
            f"(arcadebench diff {data.spec.name} {theirs})"
        )
    return 0


def _list_references(spec: Spec) -> None:
    """The references of ``spec``, each work they come from cited once below, numbered."""
    from arcadebench._table import render_table
    from arcadebench.benchmarks.report import list_references

    works: dict[str, int] = {}
    rows = []
    for ref in list_references(spec):
        source = ref.where or ref.citation
        if ref.work:
            number = works.setdefault(ref.work, len(works) + 1)
            source = f"[{number}] {ref.where}".rstrip()
        games = ref.games or "aggregates"
        rows.append([ref.name, ref.kind, games, ref.protocol or "this spec's", source])
    columns = ["reference", "kind", "games", "protocol", "source"]
    title = f"references for {spec.name} (use with --references)"
    print(render_table(columns, rows, title=title, wrap={"protocol": 40, "source": 60}))
    if works:
        print("\nworks cited")
        for work, number in works.items():
            print(textwrap.fill(work, 100, initial_indent=f"[{number}] ", subsequent_indent="    "))


def _looks_like_input(name: str) -> bool:
    path = Path(name)
    return path.is_dir() or (
        path.suffix.lower() in (".json", ".jsonl", ".csv", ".tsv") and path.exists()
    )
