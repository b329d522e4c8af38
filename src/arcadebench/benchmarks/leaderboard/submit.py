"""Check a submitted run and put it on the board, or keep only its rejection and the reason.

``arcadebench leaderboard add BOARD RUN_DIR [--policy AGENT] [--meta FILE]`` takes the output
folder of a run (its ``results.json``, logs and recordings). In order, a submission must:

1. be a readable run folder of one agent under one built-in protocol, the version of the
   board's page for it (rows are only ever compared within one spec hash), under a free name;
2. verify as a whole (:func:`arcadebench.verify` of its results file): every episode replays
   in the emulator, every job holds its episodes once each from its seeds, and every number of
   the results file follows from the logs. A run too long to replay whole (more frames than
   the board's ``sample_above_frames``) replays a random sample of the board's ``sample``
   episodes a log, its completeness and results checks still whole, and its badge says so;
3. where a saved policy is given, reproduce on seeds the board draws from its secret
   (:mod:`~arcadebench.benchmarks.leaderboard.reexecute`): the policy file must be the one the
   logs' headers record (its SHA-256), and only an evaluation can be re-executed (a protocol
   scored after training, or a frozen policy's episodes): a learning run's training episodes
   cannot be played again by its final policy.

The board checks a copy of the folder, inside the board, and keeps exactly what it checked.
A rejection keeps no part of the run, only its record (the reason, for the rejected page). Bad
*input* (no board, a missing folder, unreadable metadata, a wrong secret) is an error instead:
nothing is recorded.

What a badge proves: ``replay-verified``, that the episodes reproduce in the emulator under the
protocol their logs declare and that the results follow from them; not which agent played
them. ``re-executed on hidden seeds``, besides, that the submitted policy file, played by the
board on seeds no one could know in advance, scores what the submission claims (per game, at
the board's family-wise error rate); not that this policy was *trained* under the protocol.

Functions: add_submission, read_meta.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from arcadebench._table import count
from arcadebench.benchmarks.leaderboard.board import (
    SUBMISSION_FILE,
    Board,
    Submission,
    load_board,
    now,
    submission_name,
)
from arcadebench.benchmarks.leaderboard.rankings import short_hash
from arcadebench.benchmarks.leaderboard.reexecute import policy_sha256, reexecute, scored_returns
from arcadebench.benchmarks.leaderboard.secret import check_secret, hidden_seed, read_secret
from arcadebench.benchmarks.replay import verify
from arcadebench.benchmarks.replay.claims import read_claim
from arcadebench.benchmarks.replay.logs import find_logs, log_header
from arcadebench.benchmarks.report import report
from arcadebench.errors import ArcadebenchError, InputError, InvalidArgument
from arcadebench.specs import Spec, list_specs, load_spec, read_yaml

__all__ = ["add_submission", "read_meta"]

META_KEYS = ("name", "authors", "paper", "code", "compute", "date", "notes")
"""What a submission's metadata may say (each optional); anything else is refused."""

_RESULTS = "results.json"


class _Rejected(Exception):
    """A submission that fails a check; its message is the one-line reason."""


def read_meta(path: str | os.PathLike[str] | None) -> dict[str, Any]:
    """A submission's metadata from a JSON or YAML file (YAML read as specs are read).

    Raises:
        InputError: an unreadable file, invalid JSON or YAML, not a mapping, or unknown keys.
    """
    if path is None:
        return {}
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(str(file), None, f"cannot be read: {error}") from None
    if file.suffix == ".json":
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as error:
            raise InputError(str(file), None, f"is not valid JSON: {error}") from None
    else:
        data = read_yaml(text, str(file))
    if not isinstance(data, Mapping):
        raise InputError(str(file), None, "must be a mapping of " + ", ".join(META_KEYS))
    unknown = sorted(str(k) for k in data if k not in META_KEYS)
    if unknown:
        raise InputError(
            str(file),
            None,
            f"has unknown keys {unknown}: a submission's metadata may say " + ", ".join(META_KEYS),
        )
    return {str(k): _plain(v) for k, v in data.items()}


def add_submission(
    board: str | os.PathLike[str] | Board,
    run_dir: str | os.PathLike[str],
    *,
    policy: str | None = None,
    meta: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    name: str | None = None,
    secret_file: str | os.PathLike[str] | None = None,
    workers: int | None = None,
    backend: Literal["local", "ray"] = "local",
) -> Submission:
    """Check the run in ``run_dir`` (module docstring) and add it to ``board``, or reject it.

    Args:
        board: the board's folder (``arcadebench leaderboard open``).
        run_dir: a run's output folder: ``results.json``, its logs and recordings.
        policy: the saved policy that played it (any agent ``arcadebench run --agent`` takes),
            to be re-executed on hidden seeds.
        meta: the submission's metadata (a JSON or YAML file, or a mapping): ``name``,
            ``authors``, ``paper``, ``code``, ``compute``, ``date``, ``notes``.
        name: its name on the board (default: the metadata's name, else the agent's).
        secret_file: the board's secret, needed to draw the seeds of a re-execution.
        workers: processes replaying (and re-executing) at once (default: one per core).
        backend: ``"local"`` or ``"ray"``, for the replays and the re-execution.

    Returns:
        The record: ``status`` says whether it was accepted; a rejection's ``reason`` says why
        (and :attr:`Submission.folder` is ``None``).

    Raises:
        ArcadebenchError: bad input, nothing recorded: no board, a closed one, no such folder,
            unreadable metadata, a policy without the board's secret or for training episodes.
    """
    board = board if isinstance(board, Board) else load_board(board)
    board.check_open()
    run = Path(run_dir)
    if not run.is_dir():
        raise InvalidArgument(f"`run_dir` must be a run's output folder, got {str(run)!r}")
    details = dict(meta) if isinstance(meta, Mapping) else read_meta(meta)
    secret = None
    if policy is not None:
        if secret_file is None:
            raise InvalidArgument(
                "`secret_file` must be given with a policy: the board draws the seeds it plays "
                "the policy on from its secret (--secret-file)"
            )
        secret = read_secret(secret_file)
        check_secret(secret, board.settings.secret_sha256)
    document = _read_results(run)
    label = name or details.get("name") or _agent_name(document) or run.resolve().name
    try:
        checked = submission_name(str(label))
    except InvalidArgument:
        checked = "submission"
    incoming = board.path / ".incoming" / checked
    known: dict[str, Any] = {}  # what the checks found, kept with a rejection
    with board.changing():  # accepted, or its rejection recorded; nothing else of the run stays
        try:
            return _accept(
                board, run, incoming, details, document, policy, secret, workers, backend, known
            )
        except _Rejected as rejected:
            record = Submission(
                name=checked,
                status="rejected",
                reason=str(rejected),
                added=now(),
                meta=details,
                **known,
            )
            board.rejected_folder.mkdir(parents=True, exist_ok=True)
            stamp = record.added.replace(":", "").replace("-", "")
            record.write(board.rejected_folder / f"{stamp}-{checked}.json")
            return record
        finally:  # what was accepted has moved into place
            shutil.rmtree(incoming, ignore_errors=True)
            if incoming.parent.is_dir() and not any(incoming.parent.iterdir()):
                incoming.parent.rmdir()


def _accept(
    board: Board,
    run: Path,
    incoming: Path,
    meta: Mapping[str, Any],
    document: Any,
    policy: str | None,
    secret: str | None,
    workers: int | None,
    backend: Literal["local", "ray"],
    known: dict[str, Any],
) -> Submission:
    """Check a submission in a copy inside the board, and move the copy into place.

    ``incoming``: where the copy is checked, named as the submission; what the checks find goes
    into ``known`` (the spec, the agent...), which a rejection keeps.
    """
    name = incoming.name
    if isinstance(document, _Rejected):
        raise document
    if not isinstance(document, Mapping) or not isinstance(document.get("algorithms"), Mapping):
        raise _Rejected(f"damaged folder: {_RESULTS} is not an arcadebench results file")
    spec, spec_record = _protocol(board, document, known)
    headers = _headers(run, spec_record)
    algorithm, entry = _one_agent(document)
    known["algorithm"] = algorithm
    if board.taken(name):
        raise _Rejected(f"the name {name!r} is taken on this board: submit under another (--name)")
    _regular_files_only(run)
    shutil.rmtree(incoming, ignore_errors=True)
    try:
        shutil.copytree(run, incoming / "run", symlinks=True)
    except (OSError, shutil.Error) as error:
        raise _Rejected(f"damaged folder: it cannot be copied: {_first(error)}") from None
    copy = incoming / "run"
    logs = [copy / log.relative_to(run) for log in headers]  # the copies the board keeps
    outside = [
        str(p)
        for p in read_claim(copy / _RESULTS).inputs
        if not p.resolve().is_relative_to(copy.resolve())
    ]
    if outside:
        raise _Rejected(
            f"{_RESULTS} was scored from inputs outside its folder ({outside[0]}): a submission "
            "holds everything it claims; score the logs inside the folder"
        )
    evaluation = spec.evaluation.scored == "after_training" or entry.get("frozen_policy") is True
    scored: Literal["training", "evaluation"] = "evaluation" if evaluation else "training"
    if policy is not None and scored == "training":
        raise InvalidArgument(
            f"`policy` re-executes an evaluation, but {algorithm!r} under {spec.name} scores "
            "training episodes, which its final policy cannot play again: submit without "
            "--policy (the row is replay-verified)"
        )
    frames = _total_frames(entry)
    sample = board.settings.sample if frames > board.settings.sample_above_frames else None
    found = verify(copy / _RESULTS, sample=sample, workers=workers, backend=backend)
    episodes = sum(len(r.episodes) for r in found.runs)
    verified = sum(r.tally("verified") for r in found.runs)
    verification: dict[str, Any] = {
        "logs": len(found.runs),
        "episodes": episodes,
        "verified": verified,
        "sample": found.sample,
        "sample_seed": found.sample_seed,
        "frames": frames,
    }
    known["verification"] = verification
    if not found.ok or verified == 0:
        raise _Rejected(f"verification failed: {_failures(found)}")
    fingerprint = verification["fingerprint"] = _fingerprint(logs)  # lines verified in bounds
    for other in board.accepted():
        if (other.verification or {}).get("fingerprint") == fingerprint:
            raise _Rejected(
                f"the same episodes as the accepted {other.name!r}: a run is submitted once"
            )
    agent = known["agent"] = _agent(headers)
    if policy is not None and agent.get("learns") is True:
        raise InvalidArgument(
            f"`policy` must be a frozen policy, but the logs record a learning agent "
            f"({agent.get('name')!r}): re-executing it would train it again; submit without "
            "--policy (the row is replay-verified), or evaluate the trained policy and submit that"
        )
    what = f"a sample of at most {count(sample, 'episode')} a log" if sample else "every episode"
    checks: list[dict[str, Any]] = [
        {"name": "protocol", "ok": True, "detail": _protocol_detail(spec_record)},
        {
            "name": "replay",
            "ok": True,
            "detail": f"{verified:,} of {episodes:,} episodes re-simulated and verified "
            f"({what}) in {count(len(found.runs), 'log')}; every job complete, each episode "
            "from its seed",
        },
        {"name": "results", "ok": True, "detail": "every number of results.json recomputed"},
    ]
    reexecution = None
    if policy is not None and secret is not None:  # played on the board's hidden seed
        digest = policy_sha256(policy, spec)
        if digest is None or digest != agent.get("sha256"):
            raise _Rejected(
                f"the policy is not the one that played the run: its SHA-256 is "
                f"{short_hash(digest)}, the logs record {short_hash(agent.get('sha256'))}"
            )
        claimed = scored_returns(spec, logs)
        try:
            outcome = reexecute(
                policy,
                spec,
                claimed,
                episodes=board.settings.episodes,
                seed=hidden_seed(secret, name, digest),
                alpha=board.settings.alpha,
                log_dir=incoming / "reexecution",
                workers=workers,
                backend=backend,
            )
        except ArcadebenchError as error:
            raise _Rejected(f"the policy could not be re-executed: {_first(error)}") from None
        reexecution = {**outcome.as_dict(), "summary": outcome.summary()}
        if not outcome.ok:
            known["reexecution"] = reexecution
            raise _Rejected(outcome.summary())
        checks.append({"name": "re-execution", "ok": True, "detail": reexecution["summary"]})
    report([copy], incoming / "report", spec=spec, episodes=True)
    record = Submission(
        name=name,
        status="accepted",
        reason=None,
        added=now(),
        meta=meta,
        spec=spec_record,
        algorithm=algorithm,
        scored=scored,
        badge="re-executed on hidden seeds" if reexecution else "replay-verified",
        checks=tuple(checks),
        verification=verification,
        reexecution=reexecution,
        agent=agent,
        versions=_versions(document),
    )
    record.write(incoming / SUBMISSION_FILE)
    board.submissions_folder.mkdir(parents=True, exist_ok=True)
    os.replace(incoming, board.submissions_folder / name)
    return replace(record, folder=board.submissions_folder / name)


def _fingerprint(logs: Iterable[Path]) -> str:
    """The SHA-256 of the logs' episode lines: the same episodes give it, whatever the folder."""
    digest = hashlib.sha256()
    for log in logs:
        lines = log.read_bytes().splitlines()
        for line in sorted(lines[1:]):  # the episodes, whatever their order; not the header
            digest.update(hashlib.sha256(line).digest())
    return "sha256:" + digest.hexdigest()


def _regular_files_only(run: Path) -> None:
    """Refuse a folder with a link or a special file: the board keeps what it checked, only."""
    for path in sorted(run.rglob("*")):
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            what = "a link" if path.is_symlink() else "not a regular file"
            raise _Rejected(
                f"damaged folder: {path.relative_to(run)} is {what}; a submission is regular "
                "files (copy what it points to into the folder)"
            )


def _read_results(run: Path) -> Any:
    """The run's results file read as JSON, or the rejection of a folder without a readable one."""
    path = run / _RESULTS
    if not path.is_file():
        return _Rejected(
            f"damaged folder: it has no {_RESULTS}; submit the output folder of "
            "`arcadebench run` (or score the logs into it with `arcadebench score --json`)"
        )
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
        return _Rejected(f"damaged folder: {_RESULTS} cannot be read: {_first(error)}")


def _protocol(
    board: Board, document: Mapping[str, Any], known: dict[str, Any]
) -> tuple[Spec, dict[str, Any]]:
    """The built-in spec the results were scored under, at the version of the board's page."""
    claimed = document.get("spec")
    if not isinstance(claimed, Mapping) or not isinstance(claimed.get("name"), str):
        raise _Rejected(f"damaged folder: {_RESULTS} names no spec")
    record = known["spec"] = {k: claimed.get(k) for k in ("name", "version", "hash")}
    if record["name"] not in list_specs():
        raise _Rejected(f"the board ranks built-in protocols only, and {record['name']!r} is none")
    spec = load_spec(str(record["name"]))
    page = board.page_spec(spec.name)
    if page is not None and page.get("hash") != record["hash"]:
        raise _Rejected(
            f"another version of {spec.name} than this board's page ({short_hash(record['hash'])}, "
            f"the page's {short_hash(page.get('hash'))}): rows are only compared within one spec "
            "hash"
        )
    return spec, record


def _headers(run: Path, spec: Mapping[str, Any]) -> dict[Path, Any]:
    """Each log's header, all of one protocol: the results' (else the rejection of the mix)."""
    try:
        headers = {log: log_header(log) for log in find_logs([run])}
    except ArcadebenchError as error:
        raise _Rejected(f"damaged folder: {error}") from None
    others = sorted(
        {
            f"{header.get('spec')} ({short_hash(header.get('spec_hash'))})"
            for header in headers.values()
            if header.get("spec_hash") != spec["hash"]
        }
    )
    if others:
        raise _Rejected(
            f"mixed protocols in one folder: {spec['name']} ({short_hash(spec['hash'])}) and "
            f"{', '.join(others)}: submit each protocol's run in a folder of its own"
        )
    return headers


def _one_agent(document: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    """The one agent the results file scores, and its block."""
    names = list(document["algorithms"])
    if len(names) != 1:
        raise _Rejected(
            f"a submission is one agent's run, but {_RESULTS} scores {len(names)} "
            f"({', '.join(map(repr, names[:4]))}): give each agent an output folder of its own "
            "(`arcadebench run --out`)"
        )
    entry = document["algorithms"][names[0]]
    if not isinstance(entry, Mapping):
        raise _Rejected(f"damaged folder: {_RESULTS}'s {names[0]!r} is not a mapping")
    return names[0], entry


def _agent(headers: Mapping[Path, Mapping[str, Any]]) -> dict[str, Any]:
    """The agent block the logs' headers record: one agent, or the rejection of several."""
    blocks = {json.dumps(header.get("agent"), sort_keys=True) for header in headers.values()}
    if len(blocks) != 1:
        raise _Rejected(f"the logs were played by {len(blocks)} different agents, not one")
    block = json.loads(blocks.pop())
    return block if isinstance(block, dict) else {}


def _agent_name(document: Any) -> str | None:
    """The one agent a run folder's results name, if they could be read."""
    try:
        names = list(document["algorithms"])
    except (KeyError, TypeError):
        return None
    return names[0] if len(names) == 1 else None


def _total_frames(entry: Mapping[str, Any]) -> int:
    """The frames a run's games were played for, summed over the games and their runs."""
    total = 0.0
    games = entry.get("games")
    for block in games.values() if isinstance(games, Mapping) else ():
        if isinstance(block, Mapping) and isinstance(block.get("frames"), int | float):
            runs = block.get("runs")
            total += float(block["frames"]) * (len(runs) if isinstance(runs, list) else 1)
    return int(total)


def _failures(found: Any) -> str:
    """The failed logs' first problems, three at most."""
    failed = [run for run in found.runs if not run.ok]
    shown = [f"{run.log}: {run.first_problem()}" for run in failed[:3]]
    shown += [r.summary() for r in found.results if not r.ok][:1]
    more = f" (and {len(failed) - 3} more logs)" if len(failed) > 3 else ""
    text = "; ".join(shown) + more if shown else "no episode was verified"
    return " ".join(text.split())  # one line: a results check lists its values a line each


def _protocol_detail(spec: Mapping[str, Any]) -> str:
    return f"{spec['name']} v{spec['version']} ({short_hash(spec['hash'])}), the board's version"


def _versions(document: Mapping[str, Any]) -> dict[str, Any]:
    provenance = document.get("provenance")
    keys = ("arcadebench", "numpy", "gymnasium", "ale_py", "stable_retro", "python")
    if not isinstance(provenance, Mapping):
        return {}
    return {k: provenance[k] for k in keys if k in provenance}


def _first(error: BaseException) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def _plain(value: Any) -> Any:
    """Metadata as JSON keeps it (YAML dates become text)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)
