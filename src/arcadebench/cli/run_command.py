"""``arcadebench run <spec>``: play an agent through a protocol, then print and save the scores.

What it prints fits a screen for one game (:func:`summary`: the protocol's headline aggregates,
the scores per game, the closest published results; then where the files are); ``--verbose``
prints every table, as ``arcadebench score`` does.

Exit status: 0 when every job finished, 1 when some failed (the others are scored and the
failures listed), 2 on bad input, 130 when interrupted (finished episodes are kept; continue
with ``--resume``).
"""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
from pathlib import Path

from arcadebench._table import count
from arcadebench.benchmarks.runner.evaluate import RESULTS_FILE, evaluate
from arcadebench.benchmarks.runner.messages import Failure, FailureKind
from arcadebench.benchmarks.scoring.normalise import headline_metric
from arcadebench.benchmarks.scoring.results import Results
from arcadebench.benchmarks.scoring.tables import results_table
from arcadebench.cli import options, warnings_printed
from arcadebench.errors import JobsFailed
from arcadebench.specs.model import DEFAULT_REFERENCES

__all__ = ["PYTHON_WORDS", "closest_references", "register", "summary"]

_PASSED = (
    *"episodes steps split seeds workers device map_actions resume overwrite name".split(),
    *"backend address episode_time_limit progress reps".split(),
)
"""The options ``evaluate()`` is given as its parameters of the same names."""
PYTHON_WORDS = options.python_words("games", *_PASSED, num_envs="--envs", log_dir="--out")
"""``evaluate()``'s parameter names and the options that set them: errors use the CLI's words."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``run`` sub-command."""
    parser = options.add_command(
        subparsers,
        "run",
        help="play an agent through a protocol's games and score it",
        description=(
            "Play an agent through every game or level of a protocol, in parallel worker "
            "processes, writing the episode logs and results.json to --out; then print the "
            "protocol's aggregates, the scores per game and the closest published results "
            "(--verbose: every table). A rerun plays only what is missing."
        ),
        example="arcadebench run atari5 --agent random --episodes 1",
    )
    options.add_spec_argument(parser)
    parser.add_argument(
        "--agent",
        default="random",
        help="random, noop, jerk (Sonic's scripted baseline), a saved model: sb3:ALGO:model.zip "
        "(stable-baselines3, e.g. sb3:PPO:model.zip), torchscript:policy.pt or onnx:policy.onnx "
        "(greedy unless :stochastic is appended), or module:attr: a policy, a batched agent "
        "with act_batch, an act/observe agent or a factory (default: random)",
    )
    parser.add_argument(
        "--episodes",
        type=int,
        metavar="N",
        help="complete episodes per game and seed; for atari100k and dqn2015, the evaluation "
        "episodes after training (default: the protocol's 100 and 30)",
    )
    parser.add_argument(
        "--steps",
        type=int,
        metavar="T",
        help="agent steps per game and seed instead of episodes (default for Sonic: the "
        "1M-step budget); for atari100k and dqn2015, a learning agent's training steps (default: "
        "the protocol's budget) before its evaluation episodes",
    )
    games = parser.add_mutually_exclusive_group()
    options.add_games(games, "the spec's default games")
    games.add_argument(
        "--split",
        metavar="SELECTION",
        help="a game selection: train or test (Sonic), all, or a subset name (e.g. Atari-10)",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        default=[0],
        metavar="SEED",
        help="one run per game and seed (default: 0)",
    )
    options.add_workers(parser, "each loading the agent once")
    parser.add_argument(
        "--envs",
        type=int,
        metavar="N",
        help="environments per worker in which a batched agent (a saved model, act_batch, "
        "random, noop) plays at once, one call per step for all (default: 8, 32 on a CUDA "
        "device, 1 for random and noop, which gain nothing from batches); the episodes are the "
        "same whatever N",
    )
    parser.add_argument(
        "--device",
        default="cpu",
        help="where a saved model runs: cpu, cuda, cuda:1... (default: cpu)",
    )
    parser.add_argument(
        "--map-actions",
        action="store_true",
        help="play a model trained on another ALE action set (all 18 actions, or the game's "
        "minimal set) on that set, each action keeping its meaning; recorded as a deviation",
    )
    options.add_out(
        parser,
        "each agent's logs in a folder of its own and results.json, one column per agent; a "
        "rerun plays only what is missing",
        "results",
    )
    parser.add_argument(
        "--name",
        metavar="LABEL",
        help="the run's label in the logs, tables, figures and LaTeX, e.g. --name 'PPO (ours)' "
        "(default: the agent's name, e.g. a saved model's file stem)",
    )
    rerun = parser.add_mutually_exclusive_group()
    rerun.add_argument(
        "--resume",
        action="store_true",
        help="continue logs that hold fewer episodes or steps than asked (complete jobs are "
        "never played again)",
    )
    rerun.add_argument(
        "--overwrite",
        action="store_true",
        help="first remove the logs of this run's name under the spec in --out (and "
        "results.json): e.g. to evaluate a retrained model again",
    )
    options.add_backend(parser, "an existing cluster (--address) or a local one")
    parser.add_argument(
        "--address", help="the address of an existing Ray cluster (with --backend ray)"
    )
    parser.add_argument(
        "--episode-time-limit",
        type=float,
        metavar="SEC",
        help="stop a job whose episode takes longer than this (a hanging agent)",
    )
    parser.add_argument(
        "--progress",
        choices=("auto", "bars", "lines", "off"),
        default="auto",
        help="the progress display; auto: bars on a terminal, lines otherwise (default: auto)",
    )
    options.add_reps(parser)
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="print every table: all the aggregates and per-game scores, every published "
        "result beside yours (as `arcadebench score` does)",
    )
    parser.set_defaults(handler=_run, python_words=PYTHON_WORDS)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _run(args: argparse.Namespace) -> int:
    command = _command(args)
    if args.agent and ":" in args.agent:
        sys.path.insert(0, str(Path.cwd()))  # module:attr agents next to where the command runs
    previous = signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops as cleanly as Ctrl-C
    out = Path(args.out)
    try:
        with warnings_printed(once=True):
            try:
                results = evaluate(
                    args.agent,
                    args.spec,
                    args.games,
                    num_envs=args.envs,
                    log_dir=out,
                    command=command,
                    **options.keywords(args, *_PASSED),
                )
                failures: list[tuple[str, Failure]] = []
            except JobsFailed as error:
                results, failures = error.results, error.failures
    except KeyboardInterrupt:
        print(
            f"arcadebench: interrupted; the finished episodes are kept in {out}. "
            f"Continue with: {command}{'' if args.resume else ' --resume'}",
            file=sys.stderr,
        )
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)
    if results is not None:
        print(results.table() if args.verbose else summary(results))
        jobs = results.provenance.get("jobs", {})
        if jobs.get("played") == 0:
            print(
                f"\nnothing to play: {count(jobs.get('already_complete', 0), 'job')} asked for, "
                f"all complete in {out} (another --out, or more --episodes with --resume, "
                "plays more)",
                file=sys.stderr,
            )
        more = "" if args.verbose else " (every table: the same command with --verbose)"
        print(f"\nlogs and {RESULTS_FILE} in {out}{more}", file=sys.stderr)
    if failures:
        scored = "the others are scored above" if results is not None else "nothing was scored"
        print(f"\n{count(len(failures), 'job')} failed ({scored}):", file=sys.stderr)
        for key, reason in failures:
            print(f"  {key}: {reason}", file=sys.stderr)
        for kind in dict.fromkeys(failure.kind for _, failure in failures):
            print(ADVICE[kind].format(out=out), file=sys.stderr)
        return 1
    return 0


ADVICE: dict[FailureKind, str] = {
    FailureKind.AGENT_RAISED: "the agent raised: fix it (the traceback is in each job's "
    ".stderr.txt beside its log), then play the missing episodes with: --out {out} --resume",
    FailureKind.INVALID_ACTION: "the agent chose actions the environment does not have: give it "
    "the environment's action set (or --map-actions for a model of another ALE action set), "
    "then play the missing episodes with: --out {out} --resume",
    FailureKind.ENVIRONMENT: "an environment failed (the traceback is in each job's .stderr.txt "
    "beside its log); re-run the missing episodes with: --out {out} --resume",
    FailureKind.LOG: "a job's log refused it (in use, or another run's): use another --out, or "
    "continue it with: --out {out} --resume",
    FailureKind.WORKER_DIED: "a worker process died (its last output is in each job's "
    ".stderr.txt beside its log); re-run the missing episodes with: --out {out} --resume",
    FailureKind.WORKER_HUNG: "an episode ran past --episode-time-limit (the agent or the "
    "emulator hangs): fix the hang or raise the limit, then --out {out} --resume",
    FailureKind.NODE_LOST: "a Ray node was lost; its finished episodes are logged: re-run the "
    "missing ones on the nodes that remain with: --out {out} --resume",
    FailureKind.NO_CPU: "the Ray cluster had no CPU for the workers: start a worker node "
    "(`ray start --address=<head>`), then --out {out} --resume",
    FailureKind.NOT_PLAYED: "re-run the missing episodes with: --out {out} --resume",
}
"""What to do about a run's failed jobs, by why they failed (one line per kind seen)."""


def summary(results: Results) -> str:
    """What ``run`` prints without ``--verbose``: a screen for one game.

    The aggregates and per-game scores of the protocol's headline metric (HNS; HWRNS for SABER
    and HWR) with the single-number aggregates (a subset's estimate, the breakthroughs, the
    missing games) and the notes, then one block of the closest published results
    (:func:`closest_references`). ``--verbose`` prints :meth:`Results.table`: every metric, and
    every published result beside yours.
    """
    spec = results.protocol
    metrics = {headline_metric(spec)} if spec is not None else None
    return results_table(results, 2, closest_references(results), metrics=metrics)


def closest_references(results: Results) -> tuple[str, ...]:
    """The published results most like ``results``: up to four, all of one kind.

    In this order, the first kind the spec has: the per-game results obtained under this very
    protocol, which are scored here on the games played; the first table the protocol's papers
    printed under it (over all of their games); the per-game results obtained under another
    protocol; the first printed table.

    Example:
        >>> from arcadebench.benchmarks.scoring.results import score
        >>> closest_references(score("atari5", {"me": {"pong": -20.0}}, reps=0))
        ('MuZero (Table 3)', 'Agent57 (Table 3)', 'Ape-X (Table 3)', 'IQN (Table 3)')
        >>> closest_references(score("saber", {"me": {"asterix": 200.0}}, reps=0))
        ('Rainbow-IQN (single actor, Table 4)',)
        >>> closest_references(score("saber", {"me": {"pong": -20.0}}, reps=0))
        ('Rainbow (Table 3, "No limit (SABER)")', 'Rainbow-IQN (Table 3, "No limit (SABER)")')
    """
    spec = results.protocol
    if spec is None:
        return ()
    games = {game for block in results.algorithms.values() for game in block["games"]}
    per_game = [name for name, ref in spec.published_scores.items() if games & set(ref.scores)]
    own_tables = [table for table in spec.published if table.protocol is None]
    kinds = (
        [name for name in per_game if spec.published_scores[name].protocol is None],
        list(own_tables[0].names()) if own_tables else [],
        per_game,
        list(spec.published[0].names()) if spec.published else [],
    )
    return tuple(next((kind for kind in kinds if kind), [])[:DEFAULT_REFERENCES])


def _command(args: argparse.Namespace) -> str:
    """The command line, rebuilt from the parsed arguments (for the results' provenance)."""
    words = ["arcadebench", "run", args.spec, "--agent", args.agent]
    for option in "name episodes steps split workers envs device out backend address".split():
        value = getattr(args, option)
        if value is not None and (option, value) != ("device", "cpu"):
            words += [f"--{option}", str(value)]
    if args.episode_time_limit is not None:
        words += ["--episode-time-limit", str(args.episode_time_limit)]
    for option in ("games", "seeds"):
        if getattr(args, option):
            words += [f"--{option}", *map(str, getattr(args, option))]
    if args.map_actions:
        words.append("--map-actions")
    if args.resume:
        words.append("--resume")
    return shlex.join(words)
