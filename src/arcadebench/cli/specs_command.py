"""``arcadebench specs`` (the protocols) and ``arcadebench show <spec>`` (a protocol card)."""

from __future__ import annotations

import argparse
import textwrap

from arcadebench._table import count, render_table
from arcadebench.benchmarks.envs.ids import env_id
from arcadebench.cli import options
from arcadebench.specs import Spec, list_specs, load_spec
from arcadebench.specs.card import protocol_card

__all__ = ["register"]

_TEXT_WIDTH = 100  # the card's notes are wrapped to this terminal width


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``specs`` and ``show`` sub-commands."""
    specs = options.add_command(
        subparsers,
        "specs",
        help="list the protocols, their games, versions and hashes",
        description=(
            "List the built-in protocols: platform, games (all, and played by default), "
            "version, content hash and an example environment id."
        ),
        example="arcadebench specs --ids atari5",
    )
    specs.add_argument("--ids", metavar="SPEC", help="also list every environment id of SPEC")
    specs.set_defaults(handler=_specs)
    show = options.add_command(
        subparsers,
        "show",
        help="print a protocol card: settings, games, constants, rules",
        description=(
            "Print a protocol's card (its paper, environment settings, scoring and evaluation "
            "rules, and where the spec chose between a paper's text and its code), then its "
            "normalisation constants, per-game models, levels and published results."
        ),
        example="arcadebench show saber --brief",
    )
    options.add_spec_argument(show)
    show.add_argument("--brief", action="store_true", help="the card only, without the game tables")
    show.set_defaults(handler=_show)


def _specs(args: argparse.Namespace) -> int:
    rows = []
    for name in list_specs():
        spec = load_spec(name)
        example = env_id(spec, spec.default_games[0]) if spec.platform != "none" else "-"
        games = (len(spec.games), len(spec.default_games))
        rows.append([name, spec.platform, *games, spec.version, spec.short_hash, example])
    columns = ["spec", "platform", "games", "default", "version", "hash", "example id"]
    print(render_table(columns, rows))
    print(
        "\n`arcadebench show <spec>` prints a protocol card; "
        "`--ids <spec>` lists its environment ids."
    )
    if args.ids:
        spec = load_spec(args.ids)
        rows = [[g, env_id(spec, g)] for g in spec.games]
        print("\n" + render_table(["game", "id"], rows, title=f"{spec.name} ids"))
    return 0


def _show(args: argparse.Namespace) -> int:
    spec = load_spec(args.spec)
    for section, rows in protocol_card(spec).items():
        print(f"== {section}")
        width = max(len(label) for label, _ in rows)
        for label, value in rows:
            lines = (
                textwrap.wrap(value, max(_TEXT_WIDTH - width - 4, 40))
                if section == "Notes"  # prose; the other rows are read (and grepped) whole
                else [value]
            )
            print(f"  {label.ljust(width)}  {lines[0]}")
            for line in lines[1:]:
                print(" " * (width + 4) + line)
        print()
    if not args.brief:
        print("\n\n".join(_detail_tables(spec)))
    return 0


def _detail_tables(spec: Spec) -> list[str]:
    tables = []
    if spec.constants:
        columns = [
            c
            for c in ("random", "human", "world_record")
            if any(getattr(g, c) is not None for g in spec.constants.values())
        ]
        rows = [
            [game, *(getattr(c, col) for col in columns), "*" if c.extrapolated else ""]
            for game, c in spec.constants.items()
        ]
        title = f"Normalisation constants ({spec.constants_source})"
        table = render_table(["game", *columns, ""], rows, title=title)
        if any(c.extrapolated for c in spec.constants.values()):
            table += (
                f"\n* extrapolated: {spec.constants_source} marks the world record as "
                "extrapolated from the reported one"
            )
        tables.append(table)
    for pred in spec.predictions.values():
        rows = [[game, *coefs] for game, coefs in pred.models.items()]
        columns = ["game", "c", *(f"x{i + 1}" for i in range(len(pred.inputs)))]
        title = f"{pred.name} per-game models ({pred.source}); x = {', '.join(pred.inputs)}"
        tables.append(render_table(columns, rows, title=title, digits=3))
    if spec.levels:
        rows = [
            [
                lv.name,
                lv.split,
                lv.game.removesuffix("-v0") + "-v0",
                lv.state,
                spec.retro_games[lv.game].level_end_x[(lv.zone, lv.act)],
            ]
            for lv in spec.levels.values()
        ]
        tables.append(
            render_table(["level", "split", "retro game", "state", "end x"], rows, title="Levels")
        )
    for published in spec.published:
        rows = [[name, *values] for name, values in published.rows.items()]
        title = f"Published results ({published.source})"
        if published.protocol:
            title += f"; obtained under another protocol: {published.protocol}"
        tables.append(render_table(["", *published.columns], rows, title=title, digits=2))
    if spec.published_scores:
        lines = ["Published per-game results (arcadebench report --references NAME)"]
        for ref in spec.published_scores.values():
            runs = f", {count(ref.runs, 'run')}" if ref.runs else ""
            under = (
                f"another protocol: {ref.protocol}" if ref.protocol else f"this one ({spec.name})"
            )
            text = f"{ref.name}: {count(len(ref.scores), 'game')}{runs}. Obtained under {under}."
            lines += textwrap.wrap(text, 100, initial_indent="- ", subsequent_indent="  ")
            lines += textwrap.wrap(
                f"Source: {ref.source}", 100, initial_indent="  ", subsequent_indent="  "
            )
        tables.append("\n".join(lines))
    return tables
