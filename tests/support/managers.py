"""A test's own manager replica in place of the session one, and ways to kill and revive it.

A SIGKILLed (or fenced) leader cannot hand its Lease back, so before a restart the test expires
it (``renewTime`` in the past), which a new replica would otherwise wait out (15 s).
:class:`Supervisor` plays the kubelet's restart policy: a replica that exits (a leader that lost
its Lease exits on purpose) is started again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

from kruise.core.errors import KruiseError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import LEASES
from kruise.rollouts.manager.process import ManagerProcess
from tests.support.cluster import TestCluster

LEASE_NAMESPACE, LEASE_NAME = "kruise-system", "kruise-manager"


@contextlib.asynccontextmanager
async def own_replica(
    session: ManagerProcess,
    cluster: TestCluster,
    workdir: Path,
    *,
    extra_args: tuple[str, ...] = (),
    env: Mapping[str, str] | None = None,
) -> AsyncIterator[ManagerProcess]:
    """Stop the session manager (it hands the Lease back), run this replica, restore afterwards."""
    await asyncio.to_thread(session.stop)
    own = ManagerProcess(
        cluster.kubeconfig,
        workdir,
        extra_args=(*session.extra_args, *extra_args),
        name="replica",
        env=env,
    )
    await asyncio.to_thread(own.start)
    try:
        yield own
    finally:
        await asyncio.to_thread(own.stop)
        await asyncio.to_thread(session.start)  # leads again and re-registers its webhooks


async def expire_lease(kube: KubeClient) -> None:
    lease = await kube.get(LEASES, LEASE_NAME, LEASE_NAMESPACE)
    lease["spec"]["renewTime"] = "2000-01-01T00:00:00.000000Z"
    await kube.replace(LEASES, lease)


async def kill_and_restart(kube: KubeClient, proc: ManagerProcess) -> None:
    await asyncio.to_thread(proc.kill)
    await expire_lease(kube)
    await asyncio.to_thread(proc.start)


class Supervisor:
    """Starts ``proc`` again whenever it has exited (and expires the Lease it may still hold)."""

    def __init__(self, kube: KubeClient, proc: ManagerProcess) -> None:
        self.kube = kube
        self.proc = proc
        self.restarts = 0
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Supervisor:
        self._task = asyncio.create_task(self._watch())
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(0.5)
            if self.proc.proc is None or self.proc.proc.poll() is None:
                continue
            self.restarts += 1
            with contextlib.suppress(KruiseError):
                await expire_lease(self.kube)
            try:
                await asyncio.to_thread(self.proc.start, 60.0)
            except RuntimeError:  # the API server may still be coming back: try again
                continue
