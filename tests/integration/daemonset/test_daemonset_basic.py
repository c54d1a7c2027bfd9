"""Advanced DaemonSet through ``kruise manager`` on the real control plane, with KWOK nodes.

Named after every ``It`` of upstream's "DaemonSet > Basic DaemonSet functionality
[DaemonSetBasic]" (``test/e2e/apps/v1alpha1/daemonset.go``). Upstream runs its daemons on every
node of the cluster; here each test adds KWOK nodes labelled for it and the DaemonSet selects them
(the session's nodes are shared), which is the only difference. kube-scheduler binds the pods
(they carry node affinity on ``metadata.name``) and KWOK plays the kubelet, in-place restarts
included.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import PODS
from tests.integration.daemonset.helpers import (
    HASH,
    IMAGE,
    NEW_IMAGE,
    check_status,
    create,
    get,
    image_of,
    label,
    new_daemonset,
    node_label,
    node_of,
    patch_spec,
    pods,
    set_container,
    wait_on_nodes,
    wait_status,
)
from tests.support.nodes import NodePool
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")


async def test_should_run_and_stop_simple_daemon(kube: KubeClient, namespace: str, nodes: NodePool) -> None:
    """A pod on every node; a deleted pod is replaced."""
    names = await nodes.add_nodes(3, node_label(nodes))
    await create(kube, namespace, new_daemonset("e2e-ds", nodes))
    placed = await wait_on_nodes(kube, namespace, "e2e-ds", names)
    await check_status(kube, namespace, "e2e-ds", 3)
    victim = placed[names[0]]
    await kube.delete(PODS, victim["metadata"]["name"], namespace)
    revived = await wait_on_nodes(kube, namespace, "e2e-ds", names)
    assert revived[names[0]]["metadata"]["uid"] != victim["metadata"]["uid"]
    assert {n: p["metadata"]["uid"] for n, p in revived.items() if n != names[0]} == {
        n: p["metadata"]["uid"] for n, p in placed.items() if n != names[0]
    }


async def test_should_run_and_stop_complex_daemon(kube: KubeClient, namespace: str, nodes: NodePool) -> None:
    """nodeSelector: no node is blue, then one is (a pod), then it is green (gone); the
    DaemonSet switches to green and RollingUpdate (a pod again)."""
    names = await nodes.add_nodes(2, node_label(nodes))
    ds = new_daemonset("e2e-ds", nodes)
    ds["spec"]["template"]["spec"]["nodeSelector"]["color"] = "blue"
    await create(kube, namespace, ds)
    await wait_on_nodes(kube, namespace, "e2e-ds", [])
    await wait_status(kube, namespace, "e2e-ds", desiredNumberScheduled=0, currentNumberScheduled=0)
    await nodes.label(names[0], {"color": "blue"})
    await wait_on_nodes(kube, namespace, "e2e-ds", [names[0]])
    await check_status(kube, namespace, "e2e-ds", 1)
    await nodes.label(names[0], {"color": "green"})
    await wait_on_nodes(kube, namespace, "e2e-ds", [])
    await patch_spec(
        kube,
        namespace,
        "e2e-ds",
        {
            "template": {"spec": {"nodeSelector": {"color": "green"}}},
            "updateStrategy": {"type": "RollingUpdate"},
        },
    )
    await wait_on_nodes(kube, namespace, "e2e-ds", [names[0]])
    await check_status(kube, namespace, "e2e-ds", 1)


async def test_should_retry_creating_failed_daemon_pods(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    """A pod whose phase the kubelet reports Failed is deleted and replaced."""
    names = await nodes.add_nodes(2, node_label(nodes))
    await create(kube, namespace, new_daemonset("e2e-ds", nodes))
    placed = await wait_on_nodes(kube, namespace, "e2e-ds", names)
    await check_status(kube, namespace, "e2e-ds", 2)
    failed = placed[names[1]]
    await kube.patch(
        PODS, failed["metadata"]["name"], {"status": {"phase": "Failed"}}, namespace, subresource="status"
    )
    revived = await wait_on_nodes(kube, namespace, "e2e-ds", names)
    assert revived[names[1]]["metadata"]["uid"] != failed["metadata"]["uid"]

    async def gone() -> bool:
        return await kube.get_or_none(PODS, failed["metadata"]["name"], namespace) is None

    await eventually(gone, timeout=30, what="the failed pod deleted")


async def test_should_only_inplace_image_if_update_daemonset_image_with_inplace_update_strategy(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    """InPlaceIfPossible, maxUnavailable 5: an image change keeps every pod (same UID, same node),
    restarts its container (restartCount + 1) and the pods carry the InPlaceUpdateReady gate."""
    names = await nodes.add_nodes(3, node_label(nodes))
    rolling = {"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 5}
    await create(
        kube, namespace, new_daemonset("e2e-ds", nodes, rolling=rolling, strategy_type="RollingUpdate")
    )
    before = await wait_on_nodes(kube, namespace, "e2e-ds", names)
    await check_status(kube, namespace, "e2e-ds", 3)
    await set_container(kube, namespace, "e2e-ds", image=NEW_IMAGE)
    after = await wait_on_nodes(kube, namespace, "e2e-ds", names, image=NEW_IMAGE)
    ds = await check_status(kube, namespace, "e2e-ds", 3)
    for node, pod in after.items():
        assert pod["metadata"]["uid"] == before[node]["metadata"]["uid"], "not recreated"
        assert label(pod, HASH) == ds["status"]["daemonSetHash"]
        gates = [g["conditionType"] for g in pod["spec"]["readinessGates"]]
        assert "InPlaceUpdateReady" in gates
        restarts = pod["status"]["containerStatuses"][0]["restartCount"]
        assert restarts == before[node]["status"]["containerStatuses"][0]["restartCount"] + 1


async def test_should_upgrade_inplace_if_update_image_and_recreate_if_update_others(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    """InPlaceIfPossible: an image change keeps the pods, an env change recreates them."""
    names = await nodes.add_nodes(2, node_label(nodes))
    rolling = {"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 20}
    await create(
        kube, namespace, new_daemonset("e2e-ds", nodes, rolling=rolling, strategy_type="RollingUpdate")
    )
    cases = [
        ({"image": NEW_IMAGE}, True),
        ({"image": NEW_IMAGE, "env": [{"name": "foo", "value": "bar"}]}, False),
    ]
    for container, kept in cases:
        before = await wait_on_nodes(kube, namespace, "e2e-ds", names)
        await check_status(kube, namespace, "e2e-ds", 2)
        await set_container(kube, namespace, "e2e-ds", **container)
        await asyncio.sleep(2)
        after = await wait_on_nodes(kube, namespace, "e2e-ds", names, image=NEW_IMAGE)
        await check_status(kube, namespace, "e2e-ds", 2)
        same = [after[n]["metadata"]["uid"] == before[n]["metadata"]["uid"] for n in names]
        assert same == [kept] * len(names), f"{container}: kept in place {same}"
        assert all(
            "InPlaceUpdateReady" in [g["conditionType"] for g in p["spec"]["readinessGates"]]
            for p in after.values()
        )


async def test_should_upgrade_one_by_one_on_steps_if_there_is_pre_delete_hook(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    """A preDelete hook holds the first pod to replace in PreparingDelete (no pod deleted);
    released, it goes and exactly one pod of the new revision replaces it."""
    names = await nodes.add_nodes(3, node_label(nodes))
    rolling = {"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 1}
    ds = new_daemonset("e2e-ds", nodes, rolling=rolling, strategy_type="RollingUpdate")
    ds["spec"]["lifecycle"] = {"preDelete": {"labelsHandler": {"my-pre-delete": "true"}}}
    ds["spec"]["template"]["metadata"]["labels"]["my-pre-delete"] = "true"
    ds["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m"}}
    await create(kube, namespace, ds)
    before = await wait_on_nodes(kube, namespace, "e2e-ds", names)
    await check_status(kube, namespace, "e2e-ds", 3)
    await set_container(
        kube,
        namespace,
        "e2e-ds",
        resources={"requests": {"cpu": "120m"}},
        env=[{"name": "test", "value": "test"}],
    )
    ds_now = await eventually(lambda: _observed(kube, namespace, 2), timeout=30, what="observedGeneration 2")
    new_hash = ds_now["status"]["daemonSetHash"]

    async def one_preparing_delete() -> dict | None:
        found = await pods(kube, namespace, "e2e-ds", everything=True)
        held = [p for p in found if label(p, "lifecycle.apps.kruise.io/state") == "PreparingDelete"]
        return held[0] if len(held) == 1 else None

    held = await eventually(one_preparing_delete, timeout=30, what="one pod in PreparingDelete")
    await asyncio.sleep(2)
    still = await pods(kube, namespace, "e2e-ds", everything=True)
    assert sorted(p["metadata"]["name"] for p in still) == sorted(
        p["metadata"]["name"] for p in before.values()
    )
    await kube.patch(
        PODS, held["metadata"]["name"], {"metadata": {"labels": {"my-pre-delete": None}}}, namespace
    )

    async def deleted_and_replaced() -> bool:
        if await kube.get_or_none(PODS, held["metadata"]["name"], namespace) is not None:
            return False
        found = await pods(kube, namespace, "e2e-ds")
        return sum(1 for p in found if label(p, HASH) == new_hash) == 1

    await eventually(deleted_and_replaced, timeout=60, what="the held pod gone and one new pod")


async def _observed(kube: KubeClient, namespace: str, generation: int) -> dict | None:
    ds = await get(kube, namespace, "e2e-ds")
    return ds if (ds.get("status") or {}).get("observedGeneration") == generation else None


async def test_should_successfully_surging_update_daemonset_with_minreadyseconds(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    """maxSurge 100%, minReadySeconds 10: a new pod beside every old one (the old ones not
    terminating), then only new pods, each Ready for longer than minReadySeconds."""
    names = await nodes.add_nodes(3, node_label(nodes))
    rolling = {"maxSurge": "100%", "maxUnavailable": 0}
    await create(
        kube,
        namespace,
        new_daemonset("e2e-ds", nodes, rolling=rolling, strategy_type="RollingUpdate", minReadySeconds=10),
    )
    old = await wait_on_nodes(kube, namespace, "e2e-ds", names, timeout=60)
    await check_status(kube, namespace, "e2e-ds", 3)
    await set_container(kube, namespace, "e2e-ds", image=NEW_IMAGE)
    surged: set[str] = set()

    async def all_surged() -> bool:
        for pod in await pods(kube, namespace, "e2e-ds", everything=True):
            if image_of(pod) == NEW_IMAGE and node_of(pod):
                mine = old[node_of(pod)]
                fresh = await kube.get_or_none(PODS, mine["metadata"]["name"], namespace)
                if fresh is not None:
                    assert not fresh["metadata"].get("deletionTimestamp") or node_of(pod) in surged
                    surged.add(node_of(pod))
        return surged == set(names)

    await eventually(all_surged, timeout=60, interval=0.5, what="a surge pod beside every old pod")
    after = await wait_on_nodes(kube, namespace, "e2e-ds", names, image=NEW_IMAGE, timeout=90)
    for node, pod in after.items():
        assert pod["metadata"]["name"] != old[node]["metadata"]["name"]
        since = next(c for c in pod["status"]["conditions"] if c["type"] == "Ready")["lastTransitionTime"]
        ready_for = datetime.now(UTC) - datetime.fromisoformat(since.replace("Z", "+00:00"))
        assert ready_for.total_seconds() > 10
    assert image_of(after[names[0]]) == NEW_IMAGE != IMAGE
