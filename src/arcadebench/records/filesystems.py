"""Whether a log directory is on a network file system, where a run's shared files cannot hold.

A run written by several processes shares ``<run>.counters`` through ``mmap`` and coordinates
with POSIX record locks (:mod:`~arcadebench.records.live`). Both hold between the processes of
one machine. Across machines sharing a directory they do not: NFS and SMB give close-to-open
consistency, a shared mapping is not coherent between two clients, and record locks depend on
the server's lock manager (``nolock`` and ``local_lock`` mounts keep them on each client), so
budgets and checkpoints would silently diverge between nodes. The run therefore refuses a second
writing process there, and the way to train across machines is a run held by one process with
environments anywhere on a Ray cluster (:mod:`arcadebench.benchmarks.training.ray_run`).

On Linux the type comes from ``/proc/self/mountinfo``: the mount holding the directory (the
longest mount point above it; a later mount over the same point hides an earlier one), whose
type names FUSE file systems by their program (``fuse.sshfs``). Elsewhere nothing is detected.

Functions: mount_type, network_filesystem.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["NETWORK_TYPES", "mount_type", "network_filesystem"]

NETWORK_TYPES = frozenset(
    {
        # kernel clients of file servers
        "nfs",
        "nfs4",
        "cifs",
        "smb3",
        "smbfs",
        "9p",
        "afs",
        "ncpfs",
        "coda",
        # cluster and parallel file systems mounted from many machines
        "ceph",
        "glusterfs",
        "lustre",
        "gpfs",
        "beegfs",
        # FUSE clients of remote storage (the type is ``fuse.<program>``)
        "fuse.sshfs",
        "fuse.s3fs",
        "fuse.rclone",
        "fuse.gcsfuse",
        "fuse.glusterfs",
        "fuse.ceph-fuse",
        "fuse.juicefs",
        "fuse.davfs2",
        "fuse.goofys",
        "fuse.mountpoint-s3",
        "davfs",
    }
)
"""File system types whose files other machines can write at the same time."""

_ESCAPE = re.compile(r"\\([0-7]{3})")


def _unescape(field: str) -> str:
    """A mountinfo path: the kernel writes space, tab, newline and backslash as octal escapes."""
    return _ESCAPE.sub(lambda match: chr(int(match.group(1), 8)), field)


def mount_type(path: str | os.PathLike[str], mountinfo: str) -> str | None:
    r"""The type of the file system holding ``path``, read from ``mountinfo`` text.

    ``path`` should be absolute and resolved (symbolic links followed); ``None`` when no mount
    holds it (an empty or foreign text).

    Example:
        >>> mountinfo = (
        ...     "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
        ...     "40 27 0:52 / /mnt/lab\\040data rw - nfs4 srv:/export rw,vers=4.2\n"
        ... )
        >>> mount_type("/mnt/lab data/logs", mountinfo), mount_type("/mnt/lab", mountinfo)
        ('nfs4', 'ext4')
    """
    target = Path(path).parts
    found: str | None = None
    depth = -1
    for line in mountinfo.splitlines():
        fields = line.split()
        if "-" not in fields[6:]:
            continue
        separator = fields.index("-", 6)
        if len(fields) <= separator + 1 or len(fields) < 5:
            continue
        point = Path(_unescape(fields[4])).parts
        if len(point) >= depth and target[: len(point)] == point:
            found, depth = fields[separator + 1], len(point)  # a later mount hides an earlier
    return found


def network_filesystem(path: str | os.PathLike[str]) -> str | None:
    """The network file system type holding ``path`` (``"nfs4"``, ``"fuse.sshfs"``...), or ``None``.

    The path need not exist yet (a log directory is made on first use): its nearest existing
    parent decides. ``None`` also where mounts cannot be read (not Linux).
    """
    try:
        mountinfo = Path("/proc/self/mountinfo").read_text(errors="replace")
    except OSError:
        return None
    kind = mount_type(Path(path).resolve(), mountinfo)
    return kind if kind in NETWORK_TYPES else None
