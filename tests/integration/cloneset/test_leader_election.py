"""Two ``kruise manager`` replicas: one Lease, one active controller, and a takeover.

The session ``manager`` fixture is the first replica and holds ``kruise-system/kruise-manager``.
A second replica (its own identity, ports and certificates) waits on the Lease while serving
webhooks; CloneSets keep converging through the leader. When the leader stops, the Lease moves
to the second replica and it reconciles new CloneSets. Afterwards the first replica is started
again and the second stopped, so later tests find the session manager leading as before.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import LEASES
from kruise.rollouts.manager.process import ManagerProcess
from tests.integration.cloneset.helpers import create, new_cloneset, patch_spec, wait_status
from tests.support.cluster import TestCluster
from tests.support.wait import eventually

LEASE_NAMESPACE, LEASE_NAME = "kruise-system", "kruise-manager"
BECAME_LEADER = re.compile(r"became leader of kruise-system/kruise-manager as (\S+)")


async def _lease(kube: KubeClient) -> dict[str, Any]:
    return dict((await kube.get(LEASES, LEASE_NAME, LEASE_NAMESPACE)).get("spec") or {})


def _identity(proc: ManagerProcess) -> str | None:
    found = BECAME_LEADER.findall(proc.log_path.read_text(errors="replace")) if proc.log_path.exists() else []
    return found[-1] if found else None


async def test_one_leader_reconciles_and_the_standby_takes_over(
    kube: KubeClient, cluster: TestCluster, manager: ManagerProcess, namespace: str, tmp_path: Path
) -> None:
    """Leader election (kruise-manager ``--enable-leader-election``): exactly one replica runs the
    controllers; when it stops, another takes the Lease and reconciles."""
    first = (await _lease(kube))["holderIdentity"]
    assert first, "the session manager holds the lease"
    second = ManagerProcess(cluster.kubeconfig, tmp_path / "second", name="second")
    await asyncio.to_thread(second.start)
    try:
        # both replicas run; the lease stays with the first and is renewed by it
        before = await _lease(kube)
        await asyncio.sleep(4)  # two retry periods: a contender would have tried by now
        after = await _lease(kube)
        assert after["holderIdentity"] == first
        assert after["renewTime"] != before["renewTime"], "the leader keeps renewing"
        assert _identity(second) is None and "starting controllers" not in second.log_tail(200)

        await create(kube, namespace, new_cloneset("led", 2))
        await wait_status(kube, namespace, "led", readyReplicas=2)

        # the leader goes away: the standby takes over and reconciles
        await asyncio.to_thread(manager.stop)

        async def taken_over() -> str | None:
            holder = (await _lease(kube)).get("holderIdentity")
            return holder if holder and holder != first else None

        successor = await eventually(taken_over, timeout=20, what="lease taken over by the standby")

        async def second_leads() -> str | None:
            return _identity(second)

        assert successor == await eventually(second_leads, what="the second replica logs its leadership")
        await create(kube, namespace, new_cloneset("after", 2))
        await wait_status(kube, namespace, "after", readyReplicas=2)
        await patch_spec(kube, namespace, "led", {"replicas": 3})
        await wait_status(kube, namespace, "led", readyReplicas=3)
    finally:
        # restore the session manager as the leader for the tests that follow
        if manager.proc is None or manager.proc.poll() is not None:
            await asyncio.to_thread(manager.start)  # re-registers the webhooks at its own port
        await asyncio.to_thread(second.stop)

        async def first_leads_again() -> bool:
            holder = (await _lease(kube)).get("holderIdentity")
            return bool(holder) and holder == _identity(manager) and holder != _identity(second)

        await eventually(first_leads_again, timeout=20, what="the session manager leads again")
