"""The advanced Deployment controller on its own, driven through the Deployment's annotations.

Upstream scenarios (``KR:test/e2e/deployment_test.go`` "Advanced Deployment Checker"): "update
with partition", "update with scale up", "update with scale down", "update with MaxSurge=1,
MaxUnavailable=0", "update with MaxSurge=0, MaxUnavailable=1", "continuous update", "rollback",
"scale down old unhealthy first" (unhealthy: a readiness gate KWOK honours, set False).
As there, no Rollout: the test takes the Deployment under control itself (control annotation,
``paused``, ``Recreate``, ``rollouts.kruise.io/deployment-strategy``) and moves the partition.
Plus one case of ours: a ReplicaSet name collision bumps ``status.collisionCount``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import DEPLOYMENTS, PODS, REPLICASETS
from kruise.rollouts.advanceddeployment.replicasets import template_hash
from tests.integration.rollouts.workload_support import (
    V1,
    V2,
    V3,
    deployment,
    pods_by_image,
    set_image,
    wait_pods,
)
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")
JSON = dict[str, Any]
STRATEGY = "rollouts.kruise.io/deployment-strategy"


def _strategy(partition: int | str, surge: int, unavailable: int) -> str:
    body = {
        "rollingStyle": "Partition",
        "rollingUpdate": {"maxUnavailable": unavailable, "maxSurge": surge},
        "partition": partition,
    }
    return json.dumps(body, separators=(",", ":"))


async def _settled(
    kube: KubeClient, namespace: str, replicas: int = 5, surge: int = 1, unavailable: int = 0
) -> None:
    d = deployment(namespace, replicas)
    d["spec"]["strategy"]["rollingUpdate"] = {"maxSurge": surge, "maxUnavailable": unavailable}
    await kube.create(DEPLOYMENTS, d, namespace)
    await wait_pods(kube, namespace, {V1: replicas})
    # settled means every pod Ready too: the fenceposts' sampler counts ready pods from the start,
    # and on a loaded machine KWOK may still be reporting the last pods Ready here
    await _status(kube, namespace, {"readyReplicas": replicas, "availableReplicas": replicas})
    body = {
        "metadata": {
            "annotations": {
                "batchrelease.rollouts.kruise.io/control-info": '{"kind":"BatchRelease","name":"test"}',
                STRATEGY: _strategy(0, surge, unavailable),
            }
        },
        "spec": {"paused": True, "strategy": {"type": "Recreate", "rollingUpdate": None}},
    }
    await kube.patch(DEPLOYMENTS, "web", body, namespace, patch_type="merge")


async def _partition(
    kube: KubeClient, namespace: str, partition: int | str, surge: int = 1, unavailable: int = 0
) -> None:
    body = {"metadata": {"annotations": {STRATEGY: _strategy(partition, surge, unavailable)}}}
    await kube.patch(DEPLOYMENTS, "web", body, namespace, patch_type="merge")


async def _scale(kube: KubeClient, namespace: str, replicas: int) -> None:
    await kube.patch(DEPLOYMENTS, "web", {"spec": {"replicas": replicas}}, namespace, patch_type="merge")


async def _status(kube: KubeClient, namespace: str, want: JSON) -> None:
    async def probe() -> bool:
        d = await kube.get(DEPLOYMENTS, "web", namespace)
        st = d.get("status") or {}
        return all(st.get(k, 0) == v for k, v in want.items())  # counts of 0 are omitted

    await eventually(probe, timeout=30, what=f"Deployment status {want}")


class _Sampler:
    """Polls the pods while a release runs: the most pods and the fewest ready ones seen."""

    def __init__(self, kube: KubeClient, namespace: str) -> None:
        self.kube, self.namespace = kube, namespace
        self.most, self.fewest_ready = 0, 10**6
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            pods = [
                p
                for p in (await self.kube.list(PODS, self.namespace, label_selector="app=web"))["items"]
                if not p["metadata"].get("deletionTimestamp")
            ]
            ready = sum(
                1
                for p in pods
                if any(
                    c["type"] == "Ready" and c["status"] == "True"
                    for c in (p.get("status") or {}).get("conditions") or []
                )
            )
            self.most, self.fewest_ready = max(self.most, len(pods)), min(self.fewest_ready, ready)
            await asyncio.sleep(0.05)

    def __enter__(self) -> _Sampler:
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *_: object) -> None:
        assert self._task is not None
        self._task.cancel()


async def test_update_with_partition(kube: KubeClient, namespace: str) -> None:
    await _settled(kube, namespace)
    await set_image(kube, namespace, "Deployment", V2)
    await _partition(kube, namespace, 3)
    await wait_pods(kube, namespace, {V1: 2, V2: 3})
    await _status(
        kube, namespace, {"replicas": 5, "updatedReplicas": 3, "readyReplicas": 5, "availableReplicas": 5}
    )

    # kube-controller-manager writes the Deployment status and the advanced Deployment controller
    # the extra-status annotation, both on the same ReplicaSet event: either may land first
    async def extra_status() -> JSON:
        d = await kube.get(DEPLOYMENTS, "web", namespace)
        extra: JSON = json.loads(d["metadata"]["annotations"]["rollouts.kruise.io/deployment-extra-status"])
        return extra if extra.get("updatedReadyReplicas") == 3 else {}

    extra = await eventually(extra_status, timeout=30, what="the extra status counts the 3 updated pods")
    assert extra == {"updatedReadyReplicas": 3, "expectedUpdatedReplicas": 3}
    await _partition(kube, namespace, "100%")
    await wait_pods(kube, namespace, {V2: 5})
    await _status(kube, namespace, {"updatedReplicas": 5, "availableReplicas": 5})


async def test_update_with_scale_up(kube: KubeClient, namespace: str) -> None:
    await _settled(kube, namespace)
    await set_image(kube, namespace, "Deployment", V2)
    await _partition(kube, namespace, "40%")
    await wait_pods(kube, namespace, {V1: 3, V2: 2})
    await _scale(kube, namespace, 10)
    await wait_pods(kube, namespace, {V1: 6, V2: 4})


async def test_update_with_scale_down(kube: KubeClient, namespace: str) -> None:
    await _settled(kube, namespace, replicas=10)
    await set_image(kube, namespace, "Deployment", V2)
    await _partition(kube, namespace, "40%")
    await wait_pods(kube, namespace, {V1: 6, V2: 4})
    await _scale(kube, namespace, 5)
    # a scaling event is shared in proportion (upstream's sync): 6 x 6/11 -> 3 old, 4 x 6/11 -> 2
    # new, upstream's CheckReplicas(deployment, 5, 5, 2)
    await wait_pods(kube, namespace, {V1: 3, V2: 2})
    await _status(kube, namespace, {"replicas": 5, "updatedReplicas": 2, "availableReplicas": 5})
    await _partition(kube, namespace, "100%")
    await wait_pods(kube, namespace, {V2: 5})


@pytest.mark.parametrize(
    ("surge", "unavailable"),
    [
        pytest.param(1, 0, id="MaxSurge=1, MaxUnavailable=0"),
        pytest.param(0, 1, id="MaxSurge=0, MaxUnavailable=1"),
    ],
)
async def test_update_with_fenceposts(kube: KubeClient, namespace: str, surge: int, unavailable: int) -> None:
    await _settled(kube, namespace, surge=surge, unavailable=unavailable)
    await set_image(kube, namespace, "Deployment", V2)
    with _Sampler(kube, namespace) as seen:
        await _partition(kube, namespace, "100%", surge, unavailable)
        await wait_pods(kube, namespace, {V2: 5}, timeout=60)
        await _status(kube, namespace, {"updatedReplicas": 5, "availableReplicas": 5})
    assert seen.most <= 5 + max(surge, 1)  # maxSurge 0: the new ReplicaSet's first pod (see rolling.py)
    assert seen.fewest_ready >= 5 - unavailable


async def test_continuous_update(kube: KubeClient, namespace: str) -> None:
    await _settled(kube, namespace)
    await set_image(kube, namespace, "Deployment", V2)
    await _partition(kube, namespace, 2)
    await wait_pods(kube, namespace, {V1: 3, V2: 2})
    await set_image(kube, namespace, "Deployment", V3)
    await _partition(kube, namespace, 4)
    await eventually(
        lambda: _count(kube, namespace, V3, 4), timeout=40, what="4 pods on v3, the rest on older revisions"
    )
    await _partition(kube, namespace, "100%")
    await wait_pods(kube, namespace, {V3: 5})


async def _count(kube: KubeClient, namespace: str, image: str, want: int) -> bool:
    pods = await pods_by_image(kube, namespace)
    return pods.get(image) == want and sum(pods.values()) == 5


async def test_rollback(kube: KubeClient, namespace: str) -> None:
    await _settled(kube, namespace)
    await set_image(kube, namespace, "Deployment", V2)
    await _partition(kube, namespace, 3)
    await wait_pods(kube, namespace, {V1: 2, V2: 3})
    await set_image(kube, namespace, "Deployment", V1)  # the v1 ReplicaSet is the new one again
    await _partition(kube, namespace, "100%")
    await wait_pods(kube, namespace, {V1: 5})
    await _status(kube, namespace, {"updatedReplicas": 5, "availableReplicas": 5})


async def test_a_replicaset_name_collision_bumps_the_collision_count(
    kube: KubeClient, namespace: str
) -> None:
    """Not an upstream case: kube's own collision handling, which the new ReplicaSet's naming needs."""
    await kube.create(DEPLOYMENTS, deployment(namespace, 3), namespace)
    await wait_pods(kube, namespace, {V1: 3})
    hold = {"spec": {"paused": True, "strategy": {"type": "Recreate", "rollingUpdate": None}}}
    await kube.patch(DEPLOYMENTS, "web", hold, namespace, patch_type="merge")
    await set_image(kube, namespace, "Deployment", V2)
    d = await kube.get(DEPLOYMENTS, "web", namespace)
    taken = f"web-{template_hash(d['spec']['template'], None)}"
    other = {"metadata": {"labels": {"app": "other"}}, "spec": {"containers": [{"name": "x", "image": V3}]}}
    foreign = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": taken, "namespace": namespace},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "other"}}, "template": other},
    }
    await kube.create(REPLICASETS, foreign, namespace)
    control = {
        "metadata": {
            "annotations": {
                "batchrelease.rollouts.kruise.io/control-info": '{"kind":"BatchRelease","name":"test"}',
                STRATEGY: _strategy(2, 1, 0),
            }
        }
    }
    await kube.patch(DEPLOYMENTS, "web", control, namespace, patch_type="merge")
    await wait_pods(kube, namespace, {V1: 1, V2: 2})
    d = await kube.get(DEPLOYMENTS, "web", namespace)
    assert d["status"]["collisionCount"] == 1
    untouched = (await kube.get(REPLICASETS, taken, namespace))["spec"]["template"]
    assert untouched["spec"]["containers"][0]["image"] == V3


GATE = "example.com/healthy"


async def _gate(kube: KubeClient, namespace: str, pod: str, healthy: bool) -> None:
    condition = {
        "type": GATE,
        "status": "True" if healthy else "False",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    body = {"status": {"conditions": [condition]}}
    await kube.patch(PODS, pod, body, namespace, subresource="status", patch_type="strategic")


async def _pods_of(kube: KubeClient, namespace: str) -> list[JSON]:
    items = (await kube.list(PODS, namespace, label_selector="app=web"))["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def _ready(pod: JSON) -> bool:
    return any(
        c["type"] == "Ready" and c["status"] == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


async def test_scale_down_old_unhealthy_first(kube: KubeClient, namespace: str) -> None:
    d = deployment(namespace)
    d["spec"]["template"]["spec"]["readinessGates"] = [{"conditionType": GATE}]
    await kube.create(DEPLOYMENTS, d, namespace)

    async def five() -> list[JSON] | None:
        pods = await _pods_of(kube, namespace)
        return pods if len(pods) == 5 else None

    pods = sorted(p["metadata"]["name"] for p in await eventually(five, timeout=40, what="5 pods"))
    unhealthy = set(pods[:2])
    for name in pods:
        await _gate(kube, namespace, name, healthy=name not in unhealthy)

    async def three_ready() -> bool:
        return sum(_ready(p) for p in await _pods_of(kube, namespace)) == 3

    await eventually(three_ready, timeout=30, what="3 ready pods, 2 unhealthy")
    body = {
        "metadata": {
            "annotations": {
                "batchrelease.rollouts.kruise.io/control-info": '{"kind":"BatchRelease","name":"test"}',
                STRATEGY: _strategy(2, 1, 0),
            }
        },
        "spec": {"paused": True, "strategy": {"type": "Recreate", "rollingUpdate": None}},
    }
    await kube.patch(DEPLOYMENTS, "web", body, namespace, patch_type="merge")
    # v2 drops the gate, so its pods become ready by themselves
    change = {
        "spec": {"template": {"spec": {"containers": [{"name": "web", "image": V2}], "readinessGates": None}}}
    }
    await kube.patch(DEPLOYMENTS, "web", change, namespace, patch_type="strategic")
    await wait_pods(kube, namespace, {V1: 3, V2: 2})
    old = [p for p in await _pods_of(kube, namespace) if p["spec"]["containers"][0]["image"] == V1]
    assert {p["metadata"]["name"] for p in old}.isdisjoint(unhealthy)  # the unhealthy ones went first
    assert all(_ready(p) for p in old)


async def test_scale_down_old_unhealthy_first_with_a_broken_image(kube: KubeClient, namespace: str) -> None:
    """Upstream's own flow of "scale down old unhealthy first": partition 1 over an image that
    never becomes Ready (``busybox:not-exists``, KWOK's broken-image stage) gives 6 pods, 5
    available, 1 updated (maxUnavailable 0 keeps every old pod); a third template arriving with
    the strategy paused in the same update (as the spec's ``UpdateDeployment``) rolls nothing, and
    the scale back to 5 removes the unhealthy pod first: 5 pods, 5 available, 0 updated."""
    await _settled(kube, namespace)
    await set_image(kube, namespace, "Deployment", "busybox:not-exists")
    await _partition(kube, namespace, 1)
    await _status(kube, namespace, {"replicas": 6, "availableReplicas": 5, "updatedReplicas": 1})
    paused = json.dumps(json.loads(_strategy(1, 1, 0)) | {"paused": True}, separators=(",", ":"))
    body = {
        "metadata": {"annotations": {STRATEGY: paused}},
        "spec": {"template": {"spec": {"containers": [{"name": "web", "image": V3}]}}},
    }
    await kube.patch(DEPLOYMENTS, "web", body, namespace, patch_type="strategic")
    await _status(kube, namespace, {"replicas": 5, "availableReplicas": 5, "updatedReplicas": 0})
    await wait_pods(kube, namespace, {V1: 5})


async def test_a_paused_strategy_spreads_a_scale_up_proportionally(kube: KubeClient, namespace: str) -> None:
    """``sync``/``scale`` while the strategy annotation is paused (what the hold webhook writes when
    a third version arrives mid-release): no rolling, the scaling event is shared in proportion
    to the ReplicaSets' sizes, 6 + 4 of 10 becoming 12 + 8 of 20 (the maxSurge of 1 and the
    rounding leftover included), then back to 6 + 4."""
    await _settled(kube, namespace, replicas=10)
    await set_image(kube, namespace, "Deployment", V2)
    await _partition(kube, namespace, 4)
    await wait_pods(kube, namespace, {V1: 6, V2: 4})
    await _status(kube, namespace, {"readyReplicas": 10, "updatedReplicas": 4})
    paused = {
        "metadata": {
            "annotations": {STRATEGY: json.dumps({**json.loads(_strategy(4, 1, 0)), "paused": True})}
        },
        "spec": {"template": {"spec": {"containers": [{"name": "web", "image": V3}]}}},
    }
    await kube.patch(DEPLOYMENTS, "web", paused, namespace, patch_type="strategic")
    await _scale(kube, namespace, 20)
    await wait_pods(kube, namespace, {V1: 12, V2: 8})
    await asyncio.sleep(2)
    assert await pods_by_image(kube, namespace) == {V1: 12, V2: 8}, "no V3 ReplicaSet while paused"
    await _scale(kube, namespace, 10)
    await wait_pods(kube, namespace, {V1: 6, V2: 4})


# ------------------------------------------------- upstream's Deployment, created under control
UPSTREAM_STRATEGY: JSON = {"rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
"""``KR:test/e2e/test_data/deployment/deployment.yaml``'s strategy annotation: no ``rollingStyle``."""


async def _created_under_control(kube: KubeClient, namespace: str) -> None:
    """Upstream's checker Deployment: created ``paused``, ``Recreate``, with a control annotation and
    a strategy annotation without ``rollingStyle`` (so kube's controller never makes a ReplicaSet);
    the advanced Deployment controller creates the first one with every pod."""
    d = deployment(namespace)
    d["metadata"]["annotations"] = {
        "batchrelease.rollouts.kruise.io/control-info": '{"kind":"BatchRelease","name":"rollouts-demo"}',
        STRATEGY: json.dumps(UPSTREAM_STRATEGY),
    }
    d["spec"].update(paused=True, strategy={"type": "Recreate"})
    await kube.create(DEPLOYMENTS, d, namespace)
    await _check(kube, namespace, 5, 5, 5)


async def _update(kube: KubeClient, namespace: str, image: str) -> None:
    """Upstream's ``UpdateDeployment``: the new template with the strategy ``paused``."""
    await set_image(kube, namespace, "Deployment", image)
    strategy = {**UPSTREAM_STRATEGY, "paused": True, "partition": 0}
    await kube.patch(
        DEPLOYMENTS,
        "web",
        {"metadata": {"annotations": {STRATEGY: json.dumps(strategy)}}},
        namespace,
        patch_type="merge",
    )


async def _check(kube: KubeClient, namespace: str, replicas: int, available: int, updated: int) -> None:
    """Upstream's ``CheckReplicas``: the Deployment status (a count left out is 0, as Go reads it),
    the live pods, and the ReplicaSets."""
    want = {"replicas": replicas, "availableReplicas": available, "updatedReplicas": updated}

    async def counted() -> bool:
        st = (await kube.get(DEPLOYMENTS, "web", namespace)).get("status") or {}
        return all(int(st.get(k) or 0) == v for k, v in want.items())

    await eventually(counted, timeout=30, what=f"Deployment status {want}")
    await eventually(lambda: _live_pods(kube, namespace, replicas), timeout=30, what=f"{replicas} live pods")
    d = await kube.get(DEPLOYMENTS, "web", namespace)
    rss = [
        r
        for r in (await kube.list(REPLICASETS, namespace))["items"]
        if not r["metadata"].get("deletionTimestamp")
    ]
    image = d["spec"]["template"]["spec"]["containers"][0]["image"]
    new = [r for r in rss if r["spec"]["template"]["spec"]["containers"][0]["image"] == image]
    assert sum(int(r["status"].get("replicas") or 0) for r in new) == updated
    assert sum(int(r["status"].get("replicas") or 0) for r in rss) == replicas
    assert sum(int(r["status"].get("availableReplicas") or 0) for r in rss) == available


async def _live_pods(kube: KubeClient, namespace: str, want: int) -> bool:
    return sum((await pods_by_image(kube, namespace)).values()) == want


async def _partition_checked(kube: KubeClient, namespace: str, partition: int, replicas: int = 5) -> None:
    """Upstream's ``UpdatePartitionWithCheck``: the strategy unpaused at ``partition``, then every
    pod available and ``partition`` of them updated."""
    strategy = {**UPSTREAM_STRATEGY, "partition": partition}
    await kube.patch(
        DEPLOYMENTS,
        "web",
        {"metadata": {"annotations": {STRATEGY: json.dumps(strategy)}}},
        namespace,
        patch_type="merge",
    )
    await _check(kube, namespace, replicas, replicas, min(partition, replicas))


async def test_advanced_deployment_checker_update_with_partition(kube: KubeClient, namespace: str) -> None:
    """Upstream "Advanced Deployment Checker > update with partition" (``deployment_test.go:232``;
    it failed in ``CheckReplicas`` at ``:149``: no ReplicaSet was ever made).

    Upstream rule (``NewController``): a Deployment under rollout control (control annotation,
    ``paused``, ``Recreate``) is processed whatever its strategy's ``rollingStyle`` except
    ``Canary``, none included; with no old pods ``NewRSNewReplicas`` gives the first ReplicaSet
    ``spec.replicas`` pods whatever the partition."""
    await _created_under_control(kube, namespace)
    await _update(kube, namespace, V2)
    for partition in (0, 1, 2, 3, 5):
        await _partition_checked(kube, namespace, partition)
    await wait_pods(kube, namespace, {V2: 5})


async def test_advanced_deployment_checker_update_with_scale_up(kube: KubeClient, namespace: str) -> None:
    """Upstream "Advanced Deployment Checker > update with scale up" (``deployment_test.go:246``):
    at partition 2 of 5, scaling to 10 is a scaling event shared in proportion (``isScalingEvent``,
    ``sync``): 2 x 13/7 -> 4 new pods, 3 x 13/7 -> 6 old, ``CheckReplicas(10, 10, 4)``."""
    await _created_under_control(kube, namespace)
    await _update(kube, namespace, V2)
    for partition in (0, 1, 2):
        await _partition_checked(kube, namespace, partition)
    await _scale(kube, namespace, 10)
    await _check(kube, namespace, 10, 10, 4)
    await wait_pods(kube, namespace, {V1: 6, V2: 4})
    for partition in (7, 10):
        await _partition_checked(kube, namespace, partition, replicas=10)
