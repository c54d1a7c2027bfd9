"""Advanced DaemonSet behaviours beyond upstream's e2e names (issue: Advanced DaemonSet, item 6).

Nodes come and go mid-rollout, taints keep daemons off (until tolerated, NoExecute evicts), a
cordoned node keeps its daemon, ``paused`` stops updates but not creations, ``partition`` keeps
pods old (in place, same UIDs), ``rollingUpdate.selector`` limits the update to matching nodes,
a node that stops reporting (NotReady) keeps its pod and its place in the counts, and a
``preNormal`` hook holds each new pod (PreparingNormal, unavailable to the update) until hooked.
"""

from __future__ import annotations

import asyncio

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import NODES, PODS
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
TAINT = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}


async def test_a_node_added_mid_rollout_gets_the_new_revision(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    names = await nodes.add_nodes(3, node_label(nodes))
    await create(kube, namespace, new_daemonset("ds", nodes, minReadySeconds=3))
    await wait_on_nodes(kube, namespace, "ds", names)
    await check_status(kube, namespace, "ds", 3)
    await set_container(kube, namespace, "ds", image=NEW_IMAGE)
    await asyncio.sleep(1)  # one old pod replaced, the others wait for minReadySeconds
    assert sum(1 for p in await pods(kube, namespace, "ds") if image_of(p) == NEW_IMAGE) < 3
    (added,) = await nodes.add_nodes(1, node_label(nodes))
    placed = await wait_on_nodes(kube, namespace, "ds", [*names, added], image=NEW_IMAGE, timeout=90)
    ds = await check_status(kube, namespace, "ds", 4)
    assert label(placed[added], HASH) == ds["status"]["daemonSetHash"]


async def test_a_node_removed_mid_rollout_does_not_stall_it(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    names = await nodes.add_nodes(4, node_label(nodes))
    await create(kube, namespace, new_daemonset("ds", nodes, minReadySeconds=2))
    await wait_on_nodes(kube, namespace, "ds", names)
    await set_container(kube, namespace, "ds", image=NEW_IMAGE)
    # the update starts from the last node by name: the first still runs its old pod
    await nodes.remove_nodes(names[0])
    await wait_status(
        kube,
        namespace,
        "ds",
        timeout=90,
        desiredNumberScheduled=3,
        updatedNumberScheduled=3,
        numberAvailable=3,
    )
    live = {p["spec"]["nodeName"]: image_of(p) for p in await pods(kube, namespace, "ds")}
    assert {n: live.get(n) for n in names[1:]} == dict.fromkeys(names[1:], NEW_IMAGE)


async def test_tainted_nodes_are_skipped_unless_tolerated(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    plain = await nodes.add_nodes(2, node_label(nodes))
    tainted = await nodes.add_nodes(1, node_label(nodes), [TAINT])
    await create(kube, namespace, new_daemonset("ds", nodes))
    await wait_on_nodes(kube, namespace, "ds", plain)
    await wait_status(kube, namespace, "ds", desiredNumberScheduled=2, numberReady=2)
    toleration = {"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"}
    spec = (await get(kube, namespace, "ds"))["spec"]["template"]["spec"]
    await patch_spec(kube, namespace, "ds", {"template": {"spec": {**spec, "tolerations": [toleration]}}})
    await wait_on_nodes(kube, namespace, "ds", [*plain, *tainted], timeout=90)
    # a NoExecute taint nobody tolerates evicts the daemon
    await nodes.taint(plain[0], [{"key": "maintenance", "effect": "NoExecute"}])
    await wait_on_nodes(kube, namespace, "ds", [plain[1], *tainted], timeout=60)
    await wait_status(kube, namespace, "ds", desiredNumberScheduled=2, numberMisscheduled=0)


async def test_a_cordoned_node_keeps_and_gets_its_daemon(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    names = await nodes.add_nodes(2, node_label(nodes))
    await nodes.cordon(names[1])
    await create(kube, namespace, new_daemonset("ds", nodes))
    await wait_on_nodes(kube, namespace, "ds", names)
    await check_status(kube, namespace, "ds", 2)


async def test_paused_stops_updates_but_not_creations(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    names = await nodes.add_nodes(2, node_label(nodes))
    await create(kube, namespace, new_daemonset("ds", nodes, rolling={"paused": True}))
    before = await wait_on_nodes(kube, namespace, "ds", names)
    await set_container(kube, namespace, "ds", image=NEW_IMAGE)
    (added,) = await nodes.add_nodes(1, node_label(nodes))
    placed = await wait_on_nodes(kube, namespace, "ds", [*names, added])
    await asyncio.sleep(3)
    current = {p["spec"]["nodeName"]: p for p in await pods(kube, namespace, "ds")}
    assert {n: current[n]["metadata"]["uid"] for n in names} == {
        n: before[n]["metadata"]["uid"] for n in names
    }
    assert image_of(placed[added]) == NEW_IMAGE, "a new node gets the current template"
    await wait_status(kube, namespace, "ds", desiredNumberScheduled=3, updatedNumberScheduled=1)
    await patch_spec(kube, namespace, "ds", {"updateStrategy": {"rollingUpdate": {"paused": False}}})
    await wait_on_nodes(kube, namespace, "ds", [*names, added], image=NEW_IMAGE, timeout=90)


async def test_partition_keeps_that_many_pods_old_in_place(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    names = await nodes.add_nodes(5, node_label(nodes))
    rolling = {"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 2, "partition": 3}
    await create(kube, namespace, new_daemonset("ds", nodes, rolling=rolling))
    before = await wait_on_nodes(kube, namespace, "ds", names)
    await set_container(kube, namespace, "ds", image=NEW_IMAGE)
    ds = await wait_status(kube, namespace, "ds", timeout=60, updatedNumberScheduled=2, numberReady=5)
    await asyncio.sleep(3)
    after = {p["spec"]["nodeName"]: p for p in await pods(kube, namespace, "ds")}
    changed = [n for n in names if image_of(after[n]) == NEW_IMAGE]
    assert len(changed) == 2
    for node in names:
        assert after[node]["metadata"]["uid"] == before[node]["metadata"]["uid"], "no pod recreated"
        restarts = after[node]["status"]["containerStatuses"][0]["restartCount"]
        was = before[node]["status"]["containerStatuses"][0]["restartCount"]
        assert restarts == was + (1 if node in changed else 0)
        assert (label(after[node], HASH) == ds["status"]["daemonSetHash"]) == (node in changed)
    await patch_spec(kube, namespace, "ds", {"updateStrategy": {"rollingUpdate": {"partition": "40%"}}})
    await wait_status(kube, namespace, "ds", timeout=60, updatedNumberScheduled=3)


async def test_rolling_update_selector_updates_only_matching_nodes(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    names = await nodes.add_nodes(4, node_label(nodes))
    for name in names[1:3]:
        await nodes.label(name, {"canary": "true"})
    rolling = {"maxUnavailable": 4, "selector": {"matchLabels": {"canary": "true"}}}
    await create(kube, namespace, new_daemonset("ds", nodes, rolling=rolling))
    await wait_on_nodes(kube, namespace, "ds", names)
    await set_container(kube, namespace, "ds", image=NEW_IMAGE)
    await wait_status(kube, namespace, "ds", timeout=60, updatedNumberScheduled=2, numberReady=4)
    await asyncio.sleep(3)
    images = {p["spec"]["nodeName"]: image_of(p) for p in await pods(kube, namespace, "ds")}
    assert {n for n, i in images.items() if i == NEW_IMAGE} == set(names[1:3])
    await nodes.label(names[0], {"canary": "true"})  # the selector now matches a third node
    await wait_status(kube, namespace, "ds", timeout=60, updatedNumberScheduled=3)


async def test_a_not_ready_node_keeps_its_pod_and_its_place(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    names = await nodes.add_nodes(2, node_label(nodes))
    await create(kube, namespace, new_daemonset("ds", nodes))
    before = await wait_on_nodes(kube, namespace, "ds", names)
    await nodes.set_ready(names[0], False)
    await asyncio.sleep(2)
    ds = await get(kube, namespace, "ds")
    assert ds["status"]["desiredNumberScheduled"] == 2
    still = {p["spec"]["nodeName"]: p["metadata"]["uid"] for p in await pods(kube, namespace, "ds")}
    assert still == {n: p["metadata"]["uid"] for n, p in before.items()}
    await nodes.set_ready(names[0], True)

    async def ready_again() -> bool:
        node = await kube.get_or_none(NODES, names[0])
        conditions = (node or {}).get("status", {}).get("conditions") or []
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)

    await eventually(ready_again, timeout=30, what="KWOK reports the node Ready again")


STATE = "lifecycle.apps.kruise.io/state"
Placement = dict[str, tuple[str | None, str]]
"""node -> (lifecycle state, pod UID) of the live pods running one image."""


async def test_a_pre_normal_hook_holds_each_new_pod_until_hooked(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    """lifecycle.preNormal: pods start PreparingNormal and turn Normal once the user's controller
    adds the hook's label; until then the rolling update counts a new pod as unavailable, so with
    maxUnavailable 1 it replaces the next old pod only after the last new one was hooked."""
    names = await nodes.add_nodes(2, node_label(nodes))
    body = new_daemonset("ds", nodes, rolling={"maxUnavailable": 1})
    body["spec"]["lifecycle"] = {"preNormal": {"labelsHandler": {"example.io/warmed": "true"}}}
    await create(kube, namespace, body)
    placed = await wait_on_nodes(kube, namespace, "ds", names)
    assert {label(p, STATE) for p in placed.values()} == {"PreparingNormal"}

    async def hook(node: str) -> None:
        pod = next(
            p for p in await pods(kube, namespace, "ds") if node_of(p) == node and image_of(p) == image
        )
        patch = {"metadata": {"labels": {"example.io/warmed": "true"}}}
        await kube.patch(PODS, pod["metadata"]["name"], patch, namespace)

    async def running(wanted: str, count: int, state: str | None = None) -> list[Placement] | None:
        found = {
            node_of(p): (label(p, STATE), str(p["metadata"]["uid"]))
            for p in await pods(kube, namespace, "ds")
            if image_of(p) == wanted and node_of(p)  # scheduled (kube-scheduler binds it later)
        }
        enough = len(found) == count and (state is None or {s for s, _ in found.values()} == {state})
        return [found] if enough else None

    image = IMAGE
    for node in names:
        await hook(node)
    await eventually(lambda: running(IMAGE, 2, "Normal"), timeout=30, what="both pods Normal once hooked")

    await set_container(kube, namespace, "ds", image=NEW_IMAGE)
    image = NEW_IMAGE
    (first,) = await eventually(lambda: running(NEW_IMAGE, 1), timeout=60, what="one pod replaced")
    ((replaced, (state, _)),) = first.items()
    assert state == "PreparingNormal"
    (other,) = [n for n in names if n != replaced]
    await asyncio.sleep(3)
    assert await running(NEW_IMAGE, 1) == [first], "the next old pod waits for the new one to be hooked"
    assert await running(IMAGE, 1) == [{other: ("Normal", placed[other]["metadata"]["uid"])}]

    await hook(replaced)
    (both,) = await eventually(lambda: running(NEW_IMAGE, 2), timeout=60, what="the second pod replaced")
    assert both[replaced][0] == "Normal" and both[other][0] == "PreparingNormal"
