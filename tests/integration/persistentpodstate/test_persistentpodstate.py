"""PersistentPodState on the real control plane: a native StatefulSet (run by
kube-controller-manager) or an Advanced StatefulSet on KWOK nodes of two zones asks for one through
its annotations, as upstream's e2e ``test/e2e/apps/persistent_pod_state.go`` "statefulset node
topology": each ready pod's zone and node are recorded, a deleted pod comes back
pinned to its zone (``nodeSelector``) and preferring its node, a scale-in forgets the states of
the pods gone, and removing the annotation removes the object. Plus the validating webhook's
refusals."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kruise.core.errors import ApiError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import (
    MUTATING_WEBHOOKS,
    NATIVE_STATEFULSETS,
    NODES,
    PODS,
    STATEFULSETS,
    Resource,
)
from kruise.core.webhook.configuration import MUTATING_NAME
from kruise.workloads.api.persistentpodstate import INJECTED_ANNOTATION, PERSISTENTPODSTATES
from tests.support.nodes import ZONE_LABEL, zoned_pool
from tests.support.wait import eventually, wait_observed

pytestmark = pytest.mark.usefixtures("manager")
JSON = dict[str, Any]
ZONE = ZONE_LABEL
HOST = "kubernetes.io/hostname"
POOL = "pps-pool"


@pytest.fixture
async def pool(kube: KubeClient) -> AsyncIterator[str]:
    """Two KWOK nodes, one per zone, labelled with the pool's own label: the pool's prefix."""
    async with zoned_pool(kube, POOL, {"zone-a": 1, "zone-b": 1}) as prefix:
        yield prefix


def statefulset(name: str, pool: str, replicas: int, api_version: str) -> JSON:
    labels = {"app": name}
    return {
        "apiVersion": api_version,
        "kind": "StatefulSet",
        "metadata": {
            "name": name,
            "annotations": {
                "kruise.io/auto-generate-persistent-pod-state": "true",
                "kruise.io/required-persistent-topology": ZONE,
                "kruise.io/preferred-persistent-topology": HOST,
            },
        },
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "nodeSelector": {POOL: pool},
                    "terminationGracePeriodSeconds": 0,
                    "containers": [{"name": "web", "image": "registry.example.com/web:1"}],
                },
            },
        },
    }


async def states_matching_nodes(kube: KubeClient, name: str, namespace: str, count: int) -> JSON | None:
    """The PPS's podStates once they are ``count`` and each records its pod's node and zone."""
    pps = await kube.get_or_none(PERSISTENTPODSTATES, name, namespace)
    states = ((pps or {}).get("status") or {}).get("podStates") or {}
    if len(states) != count:
        return None
    for pod_name, state in states.items():
        pod = await kube.get_or_none(PODS, pod_name, namespace)
        if pod is None or pod["spec"].get("nodeName") != state.get("nodeName"):
            return None
        node = await kube.get(NODES, state["nodeName"])
        labels = node["metadata"]["labels"]
        if state.get("nodeTopologyLabels") != {ZONE: labels[ZONE], HOST: labels[HOST]}:
            return None
    return dict(states)


@pytest.mark.parametrize("workload", [NATIVE_STATEFULSETS, STATEFULSETS], ids=["native", "advanced"])
async def test_statefulset_node_topology(
    kube: KubeClient, namespace: str, pool: str, workload: Resource
) -> None:
    await kube.create(workload, statefulset("web", pool, 3, workload.api_version), namespace)
    pps = await eventually(lambda: kube.get_or_none(PERSISTENTPODSTATES, "web", namespace), what="generated")
    assert pps["spec"]["requiredPersistentTopology"] == {"nodeTopologyKeys": [ZONE]}
    assert pps["spec"]["preferredPersistentTopology"] == [
        {"weight": 100, "preference": {"nodeTopologyKeys": [HOST]}}
    ]
    states = await eventually(
        lambda: states_matching_nodes(kube, "web", namespace, 3), timeout=60, what="states"
    )

    async def in_scope() -> bool:  # the pod webhook now sees this StatefulSet's pods, no others
        config = await kube.get(MUTATING_WEBHOOKS, MUTATING_NAME)
        (hook,) = [h for h in config["webhooks"] if h["name"] == "mpod.kb.io"]
        expression = " ".join(c["expression"] for c in hook.get("matchConditions") or [])
        return f"request.namespace == '{namespace}'" in expression and "r.name == 'web'" in expression

    await eventually(in_scope, what="mpod.kb.io's condition names this PersistentPodState's StatefulSet")

    # a deleted pod comes back pinned to the zone it had, preferring its node
    old = await kube.get(PODS, "web-1", namespace)
    await kube.delete(PODS, "web-1", namespace, grace_period_seconds=0)

    async def recreated() -> JSON | None:
        pod = await kube.get_or_none(PODS, "web-1", namespace)
        return pod if pod is not None and pod["metadata"]["uid"] != old["metadata"]["uid"] else None

    pod = await eventually(recreated, timeout=60, what="web-1 re-created")
    assert pod["metadata"]["annotations"][INJECTED_ANNOTATION] == "web"
    assert pod["spec"]["nodeSelector"] == {POOL: pool, ZONE: states["web-1"]["nodeTopologyLabels"][ZONE]}
    preferred = pod["spec"]["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    host = {"key": HOST, "operator": "In", "values": [states["web-1"]["nodeName"]]}
    assert preferred == [{"weight": 100, "preference": {"matchExpressions": [host]}}]

    # scale in: the states of the pods gone are dropped
    await kube.patch(workload, "web", {"spec": {"replicas": 1}}, namespace, patch_type="merge")
    await eventually(lambda: states_matching_nodes(kube, "web", namespace, 1), timeout=60, what="scaled in")

    # auto-generation turned off: the PersistentPodState goes
    off = {"metadata": {"annotations": {"kruise.io/auto-generate-persistent-pod-state": "false"}}}
    await kube.patch(workload, "web", off, namespace, patch_type="merge")

    async def gone() -> bool:
        return await kube.get_or_none(PERSISTENTPODSTATES, "web", namespace) is None

    await eventually(gone, what="PersistentPodState deleted")


def pps(name: str, target: str, **spec: Any) -> JSON:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "PersistentPodState",
        "metadata": {"name": name},
        "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": target}, **spec},
    }


async def test_validating_webhook_refuses_conflicts_and_missing_topology(
    kube: KubeClient, namespace: str
) -> None:
    required = {"nodeTopologyKeys": [ZONE]}
    await kube.create(PERSISTENTPODSTATES, pps("first", "db", requiredPersistentTopology=required), namespace)
    # the manager's informer (the webhook reads the same) holds "first"
    await wait_observed(lambda: kube.get(PERSISTENTPODSTATES, "first", namespace), what="first")
    with pytest.raises(ApiError, match="targetReference is in conflict with other PersistentPodState first"):
        await kube.create(
            PERSISTENTPODSTATES, pps("second", "db", requiredPersistentTopology=required), namespace
        )
    with pytest.raises(
        ApiError, match="TopologyConstraint and TopologyPreference cannot be empty at the same time"
    ):
        await kube.create(PERSISTENTPODSTATES, pps("third", "other"), namespace)
    moved = {"spec": {"targetRef": {"name": "moved"}}}
    with pytest.raises(
        ApiError, match=re.escape("spec.targetRef: Required value: targetRef cannot be modified")
    ):
        await kube.patch(PERSISTENTPODSTATES, "first", moved, namespace, patch_type="merge")
    names = [p["metadata"]["name"] for p in (await kube.list(PERSISTENTPODSTATES, namespace))["items"]]
    assert names == ["first"]
    stored = await kube.get(PERSISTENTPODSTATES, "first", namespace)
    assert stored["spec"]["targetRef"]["name"] == "db"
