"""A board's secret and the seeds it draws: unpredictable while the board is open, auditable after.

A verified board re-executes a submitted policy on a job seed the submitter cannot know in
advance (a policy tuned to the episodes of a known seed would otherwise pass the re-execution),
yet every seed it drew must be checkable by anyone once the board closes. The board therefore
keeps a secret of 32 random bytes outside its folder (:func:`new_secret`, :func:`write_secret`),
publishes its SHA-256 when it opens (:func:`secret_digest`), draws each submission's seed from
the secret and the submission's name (:func:`hidden_seed`), and reveals the secret when it
closes: anyone then checks it against the published digest (:func:`check_secret`) and
recomputes every draw.

The secret is the text of 64 lowercase hexadecimal digits, and that text (its UTF-8 bytes) is
what is hashed and what keys the draws, so an auditor needs nothing but the revealed string.

Functions: new_secret, secret_digest, read_secret, write_secret, check_secret, hidden_seed.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
from pathlib import Path

from arcadebench.errors import InputError, InvalidArgument

__all__ = [
    "SEED_BITS",
    "SEED_CONTEXT",
    "check_secret",
    "hidden_seed",
    "new_secret",
    "read_secret",
    "secret_digest",
    "write_secret",
]

SEED_CONTEXT = b"arcadebench-leaderboard/1\0"
"""What the message of every draw starts with: a draw of this scheme, version 1, and no other
use of the same secret, can give the same bytes."""

SEED_BITS = 63
"""The bits of a hidden seed: a non-negative signed 64-bit integer (see :func:`hidden_seed`)."""

_SECRET = re.compile(r"[0-9a-f]{64}")
_FIX = "give the board's secret file, as write_secret(new_secret()) wrote it"


def new_secret() -> str:
    """A new board secret: 32 bytes from the operating system's CSPRNG, as 64 hex digits.

    Example:
        >>> secret = new_secret()
        >>> len(secret), secret == secret.lower(), new_secret() != secret
        (64, True, True)
    """
    return secrets.token_hex(32)


def secret_digest(secret: str) -> str:
    """``sha256:<hex>`` of the secret's text: what the board publishes when it opens.

    Publishing the digest commits the board to its secret without revealing it: a secret
    revealed later that hashes to another digest is not the one the draws were made with.

    Example:
        >>> secret_digest("0" * 64)
        'sha256:60e05bd1b195af2f94112fa7197a5c88289058840ce7c6df9693756bc6250f55'
    """
    _check_secret_text(secret)
    return "sha256:" + hashlib.sha256(secret.encode("utf-8")).hexdigest()


def read_secret(path: str | os.PathLike[str]) -> str:
    """The secret in ``path`` (surrounding whitespace stripped).

    Raises:
        InputError: the file is missing or unreadable, or holds no secret (64 lowercase
            hexadecimal digits); the message never quotes the file's content.
    """
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise InputError(file, None, f"no such file; {_FIX}") from None
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise InputError(file, None, f"cannot read the secret ({reason}); {_FIX}") from None
    if not _SECRET.fullmatch(text):
        raise InputError(
            file,
            None,
            f"holds no board secret (64 lowercase hexadecimal digits; it has {len(text)} "
            f"characters); {_FIX}",
        )
    return text


def write_secret(path: str | os.PathLike[str], secret: str) -> None:
    """Write ``secret`` to a new file readable by its owner only (mode 0o600).

    An existing file is never replaced: the draws made with the secret it holds could no longer
    be audited once the board reveals another one. The file is created exclusively
    (``O_EXCL``), so two boards opened at once cannot both write it.

    Raises:
        InvalidArgument: ``secret`` is no secret, or ``path`` exists already.
        InputError: the file cannot be created (its folder missing, no permission).
    """
    _check_secret_text(secret)
    file = os.fspath(path)
    try:
        descriptor = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise InvalidArgument(
            f"`path` must be a new file (a board's secret is never overwritten: the seeds drawn "
            f"with it could no longer be audited), got {file!r}, which exists; keep it, or "
            "give another path"
        ) from None
    except OSError as error:
        raise InputError(
            file,
            None,
            f"cannot create the secret file ({error.strerror or error}); check the folder",
        ) from None
    with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
        stream.write(secret + "\n")
        stream.flush()
        os.fsync(stream.fileno())


def check_secret(secret: str, digest: str, *, source: str | os.PathLike[str] | None = None) -> None:
    """Refuse a secret whose digest is not the one the board published.

    Args:
        secret: the secret to check (read from ``source``, or revealed).
        digest: the board's published ``sha256:<hex>``.
        source: where the secret came from, for the message (a file).

    Raises:
        InvalidArgument: ``secret_digest(secret) != digest``.

    Example:
        >>> check_secret("0" * 64, secret_digest("0" * 64))
    """
    if secret_digest(secret) != digest:
        where = f"in {os.fspath(source)}" if source is not None else "given"
        raise InvalidArgument(
            f"the secret {where} is not the one this board published ({digest}): use the "
            "board's secret file"
        )


def hidden_seed(secret: str, submission: str, policy_sha256: str) -> int:
    """The job seed the board plays ``submission``'s policy on.

    ``HMAC-SHA256(key = the secret's UTF-8 text, message = SEED_CONTEXT + the submission's name
    + NUL + the policy file's SHA-256, in UTF-8)``, its first 8 bytes read big-endian, masked to
    :data:`SEED_BITS` bits. An HMAC, not a hash of the name alone: a submitter who knows the name
    but not the secret cannot predict the seed, nor choose a name whose seed suits the policy;
    once the secret is revealed, anyone recomputes every draw from the names and hashes. The
    policy's hash is in the message so that a seed seen once (in a rejection, or in the public
    re-run logs of an accepted row) is worth nothing to the next submission: a policy written for
    that seed is another file, with another hash, and is played on another seed.

    The runner takes any non-negative integer as a job seed (episode ``i`` is seeded from
    ``SeedSequence(seed, spawn_key=(i,))``, :func:`~arcadebench.records.episode_seeds`, and
    the run id is its decimal text); 63 bits keep it a non-negative signed 64-bit integer for
    numpy arrays, Ray and JSON readers alike.

    Example:
        >>> a = hidden_seed("0" * 64, "ppo-v1", "sha256:" + "ab" * 32)
        >>> a == hidden_seed("0" * 64, "ppo-v1", "sha256:" + "ab" * 32) < 2**63
        True
    """
    _check_secret_text(secret)
    if not isinstance(submission, str) or not submission:
        raise InvalidArgument(f"`submission` must be a non-empty name, got {submission!r}")
    if not isinstance(policy_sha256, str) or not policy_sha256:
        raise InvalidArgument(
            f"`policy_sha256` must be the policy file's SHA-256, got {policy_sha256!r}"
        )
    message = SEED_CONTEXT + submission.encode("utf-8") + b"\0" + policy_sha256.encode("utf-8")
    digest = hmac.new(secret.encode("utf-8"), message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") & ((1 << SEED_BITS) - 1)


def _check_secret_text(secret: object) -> None:
    if not isinstance(secret, str) or not _SECRET.fullmatch(secret):
        shown = f"a str of {len(secret)} characters" if isinstance(secret, str) else repr(secret)
        raise InvalidArgument(
            "`secret` must be 64 lowercase hexadecimal digits (new_secret() or read_secret()), "
            f"got {shown}"
        )
