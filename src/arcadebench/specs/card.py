"""A protocol card: the settings, rules and references of a spec as readable (label, value) rows.

One data structure, rendered as text by ``arcadebench show`` and as HTML by the report, so the
two can never disagree.

Example:
    >>> from arcadebench.specs import load_spec
    >>> card = protocol_card(load_spec("saber"))
    >>> dict(card["Environment"])["Max stuck time"]
    '18,000 frames (5 min) without reward, then truncate'
"""

from __future__ import annotations

from arcadebench.specs.model import AtariSettings, Normalisation, RetroSettings, Spec

__all__ = ["clipping", "default_selection", "frames_to_time", "protocol_card"]

FRAMES_PER_SECOND = 60  # Atari 2600 and Genesis (NTSC); every paper converts frames at 60 fps

Card = dict[str, list[tuple[str, str]]]


def frames_to_time(frames: int) -> str:
    """Human duration of ``frames`` emulator frames at 60 fps (``108000`` → ``30 min``)."""
    seconds = frames / FRAMES_PER_SECOND
    if seconds >= 3600 and seconds % 3600 == 0:
        return f"{seconds / 3600:g} h"
    if seconds >= 60:
        return f"{seconds / 60:g} min"
    return f"{seconds:g} s"


def clipping(norm: Normalisation, floor: str, cap: str) -> str:
    """``", <floor> F %, <cap> C %"``: a normalised score's clips in words, ``""`` if none."""
    bounds = ((floor, norm.floor), (cap, norm.cap))
    clip = [f"{word} {value:g} %" for word, value in bounds if value is not None]
    return f", {', '.join(clip)}" if clip else ""


def default_selection(spec: Spec) -> str | None:
    """The selection (``all``, a subset, a split) whose games are the spec's default games."""
    splits = ("train", "test") if spec.levels else ()
    chosen = (s for s in ("all", *spec.subsets, *splits) if spec.games_of(s) == spec.default_games)
    return next(chosen, None)


def _action_set(env: AtariSettings, spec: Spec) -> str:
    if not env.full_action_space:
        return "minimal (game-specific)"
    exceptions = ", ".join(f"{g} {n}" for g, n in spec.action_count_exceptions.items())
    return "full, 18 actions" + (f" (emulator exceptions: {exceptions})" if exceptions else "")


def _life_information(env: AtariSettings) -> str:
    if env.life_information:
        return "allowed"
    if env.life_loss_terminal_in_training:
        return (
            "not in info; in the training environment a lost life ends the learner's episode "
            "(the game goes on), evaluation episodes end on game over only"
        )
    return "not allowed: episodes end on game over only"


def _atari_rows(env: AtariSettings, spec: Spec) -> list[tuple[str, str]]:
    cap = env.max_episode_frames
    return [
        ("Frame skip", f"{env.frameskip} frames per agent step"),
        (
            "Sticky actions",
            f"p = {env.repeat_action_probability} per frame (ALE repeat_action_probability)",
        ),
        ("Action set", _action_set(env, spec)),
        ("Life information", _life_information(env)),
        (
            "No-op starts",
            f"{env.noop_starts[0]} to {env.noop_starts[1]} no-op frames after every reset, "
            "their number drawn from the env's seed"
            if env.noop_starts
            else "none",
        ),
        (
            "Max episode length",
            f"{cap:,} frames ({frames_to_time(cap)}), truncation" if cap else "none",
        ),
        (
            "Max stuck time",
            f"{env.max_stuck_frames:,} frames ({frames_to_time(env.max_stuck_frames)}) "
            "without reward, then truncate"
            if env.max_stuck_frames
            else "none",
        ),
        (
            "Rollover guard",
            f"a reward < {env.rollover_threshold:,.0f} is a score-counter wrap: "
            f"{env.rollover_correction:,.0f} is added back and the original reported"
            if env.rollover_threshold is not None and env.rollover_correction is not None
            else "none",
        ),
    ]


def _retro_rows(env: RetroSettings, spec: Spec) -> list[tuple[str, str]]:
    actions = spec.action_sets.get(env.action_set)
    action_text = (
        f"{env.action_set} (Discrete({len(actions)}))" if actions else "buttons (MultiBinary)"
    )
    return [
        ("Frame skip", f"{env.frameskip} frames per timestep"),
        (
            "Sticky frame skip",
            f"first frame of a step keeps the previous action with p = {env.sticky_probability}",
        ),
        (
            "Episode end",
            f"level complete, life lost, or {env.max_episode_timesteps:,} timesteps (truncation)",
        ),
        (
            "Reward",
            f"{env.progress_scale:g} x horizontal progress + completion bonus up to "
            f"{env.completion_bonus:g}, decaying to 0 at {env.bonus_horizon_frames:,} frames",
        ),
        ("Observation", "x".join(str(d) for d in env.observation_shape) + " RGB"),
        ("Action set", action_text),
    ]


def _scoring_rows(spec: Spec) -> list[tuple[str, str]]:
    scoring, evaluation = spec.scoring, spec.evaluation
    rows = []
    for norm in scoring.normalised:
        clip = clipping(norm, "floored at", "capped at")
        rows.append((norm.name.upper(), f"100 (x - random) / |{norm.reference} - random|{clip}"))
    rows.append(("Aggregates", ", ".join(scoring.aggregates)))
    if scoring.classes:
        bins = ", ".join(
            f"{name} < {upper:g} %"
            if upper is not None
            else f"{name} >= {scoring.classes[-2][1]:g} %"
            for name, upper in scoring.classes
        )
        rows.append(("Classes", f"of {str(scoring.classes_of).upper()}: {bins}"))
    if scoring.breakthrough:
        of, threshold = scoring.breakthrough.of, scoring.breakthrough.threshold
        rows.append(("Breakthroughs", f"games with {of.upper()} >= {threshold:g} %"))
    if scoring.log_transform:
        transform = scoring.log_transform.replace("(0, x)", "(0, HNS_g)")
        rows.append(("Subset estimate", f"10^(sum c_g {transform}) - 1"))
    after, last_k = evaluation.scored == "after_training", evaluation.episode_aggregate == "last_k"
    if last_k:
        checkpoints = ", ".join(f"{c / 1e6:g}M" for c in evaluation.checkpoints)
        per_game = (
            f"mean of the last {evaluation.k} training episodes before {checkpoints} frames "
            "and at the end"
        )
    elif after:
        per_game = (
            f"mean return of {evaluation.episodes} evaluation episodes after training, in the "
            "evaluation environment (gym.make(id, phase='evaluation'))"
        )
    else:
        per_game = "mean return of all complete episodes"
    rows.append(("Per-game score", per_game))
    if after and not last_k and evaluation.policy:
        rows.append(("Evaluation policy", f"{evaluation.policy} (the agent's; recorded)"))
    training = " of training" if after else ""
    if evaluation.budget_frames:
        rows.append(("Budget", f"{evaluation.budget_frames:,} frames{training} per run"))
    if evaluation.budget_steps:
        unit = "timesteps per level" if spec.platform == "retro" else "agent steps"
        rows.append(("Budget", f"{evaluation.budget_steps:,} {unit}{training} per run"))
    return rows


def protocol_card(spec: Spec) -> Card:
    """Sections of (label, value) rows for ``spec``: identity, environment, scoring, games, notes.

    Notes say where the spec chose between a paper's text, its authors' code and other sources.
    """
    card: Card = {
        "Protocol": [
            ("Name", spec.name),
            ("Title", spec.title),
            ("Version", f"{spec.version} (environments v{spec.env_version})"),
            ("Hash", spec.hash),
            ("Citation", spec.citation),
            *([("URL", spec.url)] if spec.url else []),
        ]
    }
    if isinstance(spec.environment, AtariSettings):
        card["Environment"] = _atari_rows(spec.environment, spec)
    elif isinstance(spec.environment, RetroSettings):
        card["Environment"] = _retro_rows(spec.environment, spec)
    card["Scoring"] = _scoring_rows(spec)
    default = default_selection(spec) or ", ".join(spec.default_games)
    games = [("Games", f"{len(spec.games)}"), ("Default selection", default)]
    if spec.levels:
        for split in ("train", "test"):
            games.append((f"{split.capitalize()} levels", f"{len(spec.games_of(split))}"))
    for subset in spec.subsets.values():
        weights = ", ".join(
            f"{g} {c:g}" for g, c in zip(subset.games, subset.coefficients, strict=True)
        )
        games.append((subset.name, weights))
    card["Games"] = games
    if spec.notes:
        card["Notes"] = list(spec.notes)
    return card
