"""One torch thread for the tests that run networks (``one_torch_thread``, a module fixture).

A tiny CNN gains nothing from a second thread, and while the suite keeps every core busy an idle
OpenMP thread spins, burning CPU for nothing. The suite sets ``OMP_NUM_THREADS=1`` already, but
only as a default a developer may override; these tests need it whatever the environment says.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

__all__ = ["one_torch_thread"]


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread() -> Iterator[None]:
    """Torch on one thread for the module, as it was afterwards."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
