"""CloneSet canary rollout with Ingress > V1->V2: Percentage, 20%, and rollback(v1); V1->V2:
disable quickly rollback policy without traffic routing (rolling back in batches, last test).

At step 1 (2 canary pods, 5% of the traffic) the user reverts the CloneSet's template to v1.
The Rollout cancels (Progressing reason Cancelling, then Completed with ``Succeeded=False`` and
upstream's "Rollout progressing has been canceled", which ``kruise rollout status`` turns into a
non-zero exit code) and finalises in the rollback order (``KR#229``): traffic goes back to the
stable Service *before* the workload is released, so no request reaches the bad version while its
pods roll back.

The order is checked on the API server's own clock: kube-apiserver stamps every write with the
etcd revision as ``resourceVersion``, shared by all kinds, so the HTTPRoute write that drops the
canary backend must carry a smaller revision than the CloneSet write that releases the partition.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from kruise.core.errors import KruiseError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, SERVICES, Resource
from kruise.rollouts.resources import BATCH_RELEASES, ROLLOUTS
from kruise.traffic.resources import HTTPROUTES
from tests.integration.rollouts import helpers as h
from tests.support.cluster import TestCluster

pytestmark = pytest.mark.usefixtures("manager")


async def record(
    kube: KubeClient, res: Resource, namespace: str, into: list[tuple[int, dict[str, Any]]]
) -> None:
    """Append every version of ``res`` objects in ``namespace`` as (revision, object)."""
    start = (await kube.list(res, namespace))["metadata"]["resourceVersion"]
    with contextlib.suppress(KruiseError):
        async for event in kube.watch(res, namespace, resource_version=start, timeout_seconds=120):
            if event.type in ("ADDED", "MODIFIED"):
                into.append((int(event.object["metadata"]["resourceVersion"]), event.object))


async def test_rollback_at_step_one_routes_traffic_to_stable_first_and_reads_as_cancelled(
    kube: KubeClient, namespace: str, cluster: TestCluster
) -> None:
    ro = h.rollout(namespace, h.REFERENCE_STEPS, h.ROUTING_GATEWAY)
    await h.start(kube, namespace, ro, "httproute")
    await h.set_image(kube, namespace, h.V2)
    await h.wait_paused_at(kube, namespace, 1)
    assert await h.pods_by_image(kube, namespace) == {h.V1: 8, h.V2: 2}
    assert h.route_weights(await kube.get(HTTPROUTES, "web", namespace)) == {"web": 95, "web-canary": 5}

    routes: list[tuple[int, dict[str, Any]]] = []
    clonesets: list[tuple[int, dict[str, Any]]] = []
    rollouts: list[tuple[int, dict[str, Any]]] = []
    watchers = [
        asyncio.create_task(record(kube, HTTPROUTES, namespace, routes)),
        asyncio.create_task(record(kube, CLONESETS, namespace, clonesets)),
        asyncio.create_task(record(kube, ROLLOUTS, namespace, rollouts)),
    ]
    await asyncio.sleep(0.5)  # both watches established
    try:
        await h.set_image(kube, namespace, h.V1)  # the user rolls the template back
        ro = await h.wait_completed(kube, namespace)
    finally:
        for task in watchers:
            task.cancel()
    cancelling = {
        h.condition(r, "Progressing")["message"]
        for _, r in rollouts
        if h.condition(r, "Progressing").get("reason") == "Cancelling"
    }
    assert cancelling == {"The workload has been rolled back and the rollout process will be canceled"}
    assert h.condition(ro, "Succeeded")["status"] == "False"
    assert ro["status"]["phase"] == "Healthy"
    assert h.condition(ro, "Progressing")["message"] == "Rollout progressing has been canceled"
    assert ro["status"]["message"] == "Rollout progressing has been canceled"
    assert h.canary_status(ro)["currentStepState"] != "Completed"
    shown = h.kruise("rollout", "status", "rollout/web", "-n", namespace, "--no-watch", cluster=cluster)
    assert shown.returncode == 1, shown.stdout + shown.stderr
    await h.wait_pods(kube, namespace, {h.V1: 10})

    def released(cs: dict[str, Any]) -> bool:
        return cs["spec"]["updateStrategy"].get("partition") in (None, 0)

    def routed_to_stable(route: dict[str, Any]) -> bool:
        return [r["name"] for r in route["spec"]["rules"][0]["backendRefs"]] == ["web"]

    release_rev = min(rev for rev, cs in clonesets if released(cs))
    restore_rev = min(rev for rev, route in routes if routed_to_stable(route))
    assert restore_rev < release_rev, "traffic must be back on stable before the workload is released"

    cs = await kube.get(CLONESETS, "web", namespace)
    assert (
        cs["status"]["updatedReplicas"] == 10
        and cs["status"]["currentRevision"] == cs["status"]["updateRevision"]
    )
    assert "rollouts.kruise.io/in-progressing" not in (cs["metadata"].get("annotations") or {})
    assert await kube.get_or_none(SERVICES, "web-canary", namespace) is None
    assert await h.selector(kube, namespace) == {"app": "web"}
    assert await kube.get_or_none(BATCH_RELEASES, "web", namespace) is None


async def test_v1_v2_disable_quickly_rollback_policy_without_traffic_routing(
    kube: KubeClient, namespace: str
) -> None:
    """CloneSet canary rollout with Ingress > V1->V2: disable quickly rollback policy without traffic
    routing. With ``rollouts.kruise.io/rollback-in-batch: "true"`` a rollback at step 3 does not
    cancel: the Rollout starts over at step 1 with the stable revision as its canary, and only the
    pods that run v2 go back, step by step; the release then completes (``Succeeded=True``)."""
    steps = [
        {"replicas": "20%", "pause": {}},
        {"replicas": "40%", "pause": {"duration": 1}},
        {"replicas": "60%", "pause": {}},
        {"replicas": "100%", "pause": {"duration": 1}},
    ]
    ro = h.rollout(namespace, steps)
    ro["metadata"]["annotations"] = {"rollouts.kruise.io/rollback-in-batch": "true"}
    await h.start(kube, namespace, ro, replicas=5)
    stable_rev, _ = await h.revisions(kube, namespace)
    await h.set_image(kube, namespace, h.V2)
    await h.wait_paused_at(kube, namespace, 1)
    await h.approve(kube, namespace)
    await h.wait_paused_at(kube, namespace, 3)
    assert await h.pods_by_image(kube, namespace) == {h.V1: 2, h.V2: 3}

    await h.set_image(kube, namespace, h.V1)
    ro = await h.wait_paused_at(kube, namespace, 1)
    cs = h.canary_status(ro)
    assert cs["canaryRevision"] == stable_rev and cs["nextStepIndex"] == 2
    assert h.condition(ro, "Progressing")["reason"] == "InRolling"
    # the 2 pods already on v1 need nothing; 20% of the 3 others go back
    assert await h.pods_by_image(kube, namespace) == {h.V1: 3, h.V2: 2}
    br = await kube.get(BATCH_RELEASES, "web", namespace)
    assert br["metadata"]["annotations"]["rollouts.kruise.io/rollback-in-batch"] == "true"
    assert br["status"]["canaryStatus"]["noNeedUpdateReplicas"] == 2

    await h.approve(kube, namespace)
    await h.wait_paused_at(kube, namespace, 3)
    assert await h.pods_by_image(kube, namespace) == {h.V1: 4, h.V2: 1}
    await h.approve(kube, namespace)
    ro = await h.wait_completed(kube, namespace)
    assert h.condition(ro, "Succeeded")["status"] == "True"
    await h.wait_pods(kube, namespace, {h.V1: 5})
    cs_obj = await kube.get(CLONESETS, "web", namespace)
    assert cs_obj["spec"]["updateStrategy"].get("partition") in (None, 0)
    assert await kube.get_or_none(BATCH_RELEASES, "web", namespace) is None
