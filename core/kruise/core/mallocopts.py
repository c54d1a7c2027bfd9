"""glibc malloc settings for the long-running manager (issue 28: memory flat over time).

glibc serves a request of at least ``M_MMAP_THRESHOLD`` bytes (128 KiB) from its own ``mmap`` and
unmaps it on free, but by default it raises that threshold to the size of each such block freed
(up to 32 MiB). After the first TLS connection closes, the 256 KiB read buffer of every later
one (asyncio's ``SSLProtocol``), and the large bodies of list and watch responses, come from the
heap instead, where freed memory stays in the process: RSS only follows its own high-water mark.
Pinning the threshold (which also stops the dynamic adjustment) makes these blocks go back to the
system when freed. Measured in docs/benchmarks.md ("Manager memory over 10 rounds, issue 28").
"""

from __future__ import annotations

import ctypes
import logging
import os
from collections.abc import Callable, Mapping

log = logging.getLogger(__name__)

M_MMAP_THRESHOLD = -3
"""glibc's ``mallopt`` parameter number (malloc.h)."""

MMAP_THRESHOLD = 128 * 1024
"""Bytes: glibc's initial threshold, kept fixed."""


def _glibc_mallopt() -> Callable[[int, int], int] | None:
    try:
        libc = ctypes.CDLL(None)
        mallopt: Callable[[int, int], int] = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to pin
        return None
    return mallopt


def pin_mmap_threshold(
    env: Mapping[str, str] = os.environ,
    mallopt: Callable[[int, int], int] | None = None,
) -> bool:
    """Fix glibc's mmap threshold at :data:`MMAP_THRESHOLD`; True when set.

    Leaves it alone (False) when the user chose one (``MALLOC_MMAP_THRESHOLD_`` in ``env``, read by
    glibc itself at start) or when the C library has no ``mallopt``. ``mallopt`` is for tests."""
    if "MALLOC_MMAP_THRESHOLD_" in env:
        return False
    call = mallopt or _glibc_mallopt()
    if call is None:
        return False
    ok = bool(call(M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    if not ok:
        log.debug("mallopt(M_MMAP_THRESHOLD) refused")
    return ok
