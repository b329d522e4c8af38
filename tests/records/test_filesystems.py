"""A run's files on a network file system: found from the mount table, one writing process.

No network file system can be mounted here, so the classifier is checked on mount-table text
(the kernel's format, escapes included) and the refusal through the run's probe
(``LiveRun.filesystem_probe``), told that the log directory is on NFS: a second process is
refused in one line naming the Ray path, while one process (several environments in it too)
writes the run as on a local disk. This machine's own directories are local.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from arcadebench.errors import LogInUse
from arcadebench.records import RunRecorder, log_path, network_filesystem
from arcadebench.records.filesystems import NETWORK_TYPES, mount_type
from arcadebench.records.live import LiveRun
from arcadebench.specs import load_spec

MOUNTINFO = r"""22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
61 27 0:52 / /home rw,relatime shared:30 - nfs4 files:/export/home rw,vers=4.2,hard,proto=tcp
62 61 0:53 / /home/ann/scratch rw,relatime - ext4 /dev/vdb rw
63 27 0:54 / /mnt/lab\040data rw,nosuid - fuse.sshfs ann@lab:/data rw,user_id=0
64 27 0:55 / /mnt/share rw - cifs //srv/share rw,vers=3.1.1
65 27 0:56 / /mnt/share rw - tmpfs tmpfs rw
66 27 0:57 / /mnt/guest rw - 9p hostshare rw,trans=virtio
"""


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/home/ann/logs", "nfs4"),
        ("/home/ann/scratch/logs", "ext4"),  # a local disk mounted inside the NFS home
        ("/home", "nfs4"),
        ("/homework", "ext4"),  # a longer name is no mount point's child
        ("/mnt/lab data/runs", "fuse.sshfs"),  # \040 is a space
        ("/mnt/share/runs", "tmpfs"),  # the later mount hides the earlier one
        ("/mnt/guest", "9p"),
        ("/tmp/runs", "ext4"),
    ],
)
def test_the_mount_holding_a_path(path, kind):
    assert mount_type(path, MOUNTINFO) == kind


def test_which_types_are_network_file_systems():
    assert {"nfs", "nfs4", "cifs", "smb3", "9p", "fuse.sshfs"} <= NETWORK_TYPES
    assert not {"ext4", "xfs", "btrfs", "tmpfs", "overlay", "fuse"} & NETWORK_TYPES
    assert mount_type("/data", "") is None


def test_this_machines_temporary_directory_is_local(tmp_path):
    assert network_filesystem(tmp_path / "not" / "made" / "yet") is None


HOLDER = """
import sys
from arcadebench.records import RunRecorder
from arcadebench.records.live import LiveRun
from arcadebench.specs import load_spec
LiveRun.filesystem_probe = staticmethod(lambda path: "nfs4")
first = RunRecorder(load_spec("saber"), "pong")
first.open(sys.argv[1], resume=False)
second = RunRecorder(load_spec("saber"), "pong")  # another env of this process joins it
second.open(sys.argv[1], resume=False)
print(first.stream, second.stream, flush=True)
sys.stdin.read()  # hold the run until the test is done
"""


def test_on_a_network_file_system_a_second_process_is_refused(tmp_path, monkeypatch):
    log = log_path(tmp_path, "saber", "pong", "0")
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HOLDER), str(log)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().split() == ["0", "1"]
        monkeypatch.setattr(LiveRun, "filesystem_probe", staticmethod(lambda path: "nfs4"))
        recorder = RunRecorder(load_spec("saber"), "pong")
        with pytest.raises(LogInUse) as refused:
            recorder.open(log, resume=False)
        message = str(refused.value)
        assert "\n" not in message and f"{tmp_path / 'saber' / 'pong'} is on a network" in message
        assert "(nfs4)" in message and "arcadebench.benchmarks.training.ray_run" in message
    finally:
        holder.communicate("", timeout=60)
    recorder.open(log, resume=False)  # the run's process is gone: this one holds it now
    assert recorder.stream == 0
    recorder.close()
