"""Run a test against a manager started with feature gates the session manager leaves off.

The session's ``kruise manager`` is stopped (it hands the leader Lease back) and a replica with
``--feature-gates=...`` leads in its place; afterwards the replica stops and the session manager
starts again, leading and re-registering its webhooks (as ``test_manager_restart`` does).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from kruise.rollouts.manager.process import ManagerProcess
from tests.support.cluster import TestCluster


@contextlib.asynccontextmanager
async def manager_with_gates(
    manager: ManagerProcess, cluster: TestCluster, workdir: Path, gates: str = "", *, name: str = "gated"
) -> AsyncIterator[ManagerProcess]:
    """``gates``: the ``--feature-gates`` value, e.g. ``"PreparingUpdateAsUpdate=true"`` (none
    when empty: a plain replica of the session manager)."""
    await asyncio.to_thread(manager.stop)
    extra = (f"--feature-gates={gates}",) if gates else ()
    gated = ManagerProcess(
        cluster.kubeconfig, workdir / name, extra_args=(*manager.extra_args, *extra), name=name
    )
    await asyncio.to_thread(gated.start)
    try:
        yield gated
    finally:
        await asyncio.to_thread(gated.stop)
        await asyncio.to_thread(manager.start)
