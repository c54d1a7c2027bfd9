"""A release through an API server restart and a 10 s etcd freeze (SIGSTOP of the test cluster's
etcd, by the PID the LocalCluster recorded): the release completes with every step's pod counts
and weights, and no step stays stuck.

The reference release (CloneSet ``web``, 10 pods, HTTPRoute, steps 20%/50%/100% with 5%/50%/100%
of the traffic): the API server is restarted while step 1 moves pods, etcd frozen while step 2
moves pods or traffic. A manager that loses its Lease while etcd is frozen exits, as it must;
:class:`~tests.support.managers.Supervisor` starts it again as a kubelet would.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from kruise.core.errors import KruiseError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import SERVICES
from kruise.rollouts.manager.process import ManagerProcess
from kruise.rollouts.resources import BATCH_RELEASES
from kruise.traffic.resources import HTTPROUTES
from tests.integration.rollouts import helpers as h
from tests.support.cluster import TestCluster
from tests.support.managers import Supervisor

T = TypeVar("T")
JSON = dict[str, Any]
ETCD_FREEZE_SECONDS = 10.0
STEP_TIMEOUT = 150.0
"""The longest a step may take through a fault (a lost Lease is waited out, up to 15 s, plus a
manager restart and kopf's relist) before it counts as stuck."""


async def through(wait: Callable[[], Awaitable[T]], timeout: float = STEP_TIMEOUT) -> T:
    """``wait()`` again whenever the API server cannot be reached, until ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return await wait()
        except KruiseError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.5)


async def reach(kube: KubeClient, namespace: str, step: int, *states: str) -> JSON:
    """The Rollout once it is at ``step`` in one of ``states`` (polled fast: states are brief)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ro = await h.get_rollout(kube, namespace)
        cs = h.canary_status(ro)
        if cs.get("currentStepIndex") == step and cs.get("currentStepState") in states:
            return ro
        await asyncio.sleep(0.05)
    raise AssertionError(f"the Rollout never reached step {step} in {states}")


@pytest.mark.usefixtures("replica")
async def test_a_release_completes_through_an_api_server_restart_and_an_etcd_freeze(
    kube: KubeClient, cluster: TestCluster, namespace: str, replica: ManagerProcess
) -> None:
    if cluster.local is None:
        pytest.skip("needs the embedded control plane (its processes are restarted and frozen)")
    local = cluster.local
    assert local.state is not None
    ro = h.rollout(namespace, h.REFERENCE_STEPS, h.ROUTING_GATEWAY)
    await h.start(kube, namespace, ro, "httproute")
    async with Supervisor(kube, replica) as supervisor:
        await h.set_image(kube, namespace, h.V2)
        await reach(kube, namespace, 1, "StepUpgrade")
        down = await asyncio.to_thread(local.restart_apiserver, down_seconds=2.0)
        started = time.monotonic()
        await through(lambda: h.wait_paused_at(kube, namespace, 1, timeout=STEP_TIMEOUT))
        step1 = time.monotonic() - started
        assert await h.pods_by_image(kube, namespace) == {h.V1: 8, h.V2: 2}
        assert h.route_weights(await kube.get(HTTPROUTES, "web", namespace)) == {"web": 95, "web-canary": 5}

        await h.approve(kube, namespace)
        await reach(kube, namespace, 2, "StepUpgrade", "StepTrafficRouting")
        etcd = local.state.pids["etcd"]
        os.kill(etcd, signal.SIGSTOP)
        try:
            await asyncio.sleep(ETCD_FREEZE_SECONDS)
        finally:
            os.kill(etcd, signal.SIGCONT)
        started = time.monotonic()
        await through(lambda: h.wait_paused_at(kube, namespace, 2, timeout=STEP_TIMEOUT))
        step2 = time.monotonic() - started
        assert await h.pods_by_image(kube, namespace) == {h.V1: 5, h.V2: 5}
        assert h.route_weights(await kube.get(HTTPROUTES, "web", namespace)) == {"web": 50, "web-canary": 50}

        await through(lambda: h.approve(kube, namespace))
        done = await through(lambda: h.wait_completed(kube, namespace, timeout=STEP_TIMEOUT))
        assert h.condition(done, "Succeeded")["status"] == "True"
        await h.wait_pods(kube, namespace, {h.V2: 10})
        route = await kube.get(HTTPROUTES, "web", namespace)
        assert [r["name"] for r in route["spec"]["rules"][0]["backendRefs"]] == ["web"]
        assert await kube.get_or_none(SERVICES, "web-canary", namespace) is None
        assert await kube.get_or_none(BATCH_RELEASES, "web", namespace) is None
    print(
        f"\n[kruise] API server down {down:.1f}s, step 1 paused {step1:.1f}s after it was back;"
        f" etcd frozen {ETCD_FREEZE_SECONDS:.0f}s, step 2 paused {step2:.1f}s after;"
        f" manager restarts: {supervisor.restarts}"
    )
