"""Wall time and peak resident memory of a block of code.

Torch allocates CPU tensors outside Python's allocator, so ``tracemalloc`` misses most of an attack's memory.
Instead a background thread samples the process's resident set size (``/proc/self/statm``) every few
milliseconds; the peak over the block, and its excess over the size at entry, are reported. Where ``/proc``
is unavailable the peak falls back to ``tracemalloc`` (Python and numpy allocations only) and says so.
"""

from __future__ import annotations

import os
import threading
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

_STATM = "/proc/self/statm"
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass
class Usage:
    """Resources used by a block.

    Attributes
    ----------
    wall_time : float
        Seconds from entry to exit.
    peak_rss_mb : float
        Peak resident set size of the process during the block (MiB).
    peak_extra_mb : float
        Peak minus the resident size at entry (MiB): the block's own footprint.
    method : str
        ``"rss"`` or ``"tracemalloc"``.
    """

    wall_time: float = 0.0
    peak_rss_mb: float = 0.0
    peak_extra_mb: float = 0.0
    method: str = "rss"


def _rss_bytes() -> int:
    with open(_STATM, "rb") as fh:
        return int(fh.read().split()[1]) * _PAGE


@contextmanager
def measure(interval: float = 0.005) -> Iterator[Usage]:
    """Measure wall time and peak memory of the ``with`` block; the yielded :class:`Usage` fills in on exit."""
    usage = Usage()
    if os.path.exists(_STATM):
        base = _rss_bytes()
        peak = [base]
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(interval):
                peak[0] = max(peak[0], _rss_bytes())

        thread = threading.Thread(target=sample, daemon=True)
        thread.start()
        start = time.perf_counter()
        try:
            yield usage
        finally:
            usage.wall_time = time.perf_counter() - start
            stop.set()
            thread.join()
            peak[0] = max(peak[0], _rss_bytes())
            usage.peak_rss_mb = peak[0] / 2**20
            usage.peak_extra_mb = (peak[0] - base) / 2**20
        return
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()
    try:
        yield usage
    finally:
        usage.wall_time = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        if started:
            tracemalloc.stop()
        usage.peak_rss_mb = peak / 2**20
        usage.peak_extra_mb = (peak - base) / 2**20
        usage.method = "tracemalloc"
