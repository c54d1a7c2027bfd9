"""The issue's acceptance scenario with upstream's ``guestbook-ds`` (applied unchanged).

``docs/samples``' Advanced DaemonSet (``kruise/DaemonSet/001-guestbook-ds.yaml``): no node
selector, Standard, maxUnavailable 1, partition 0. Applied as written it runs one Ready pod on
every eligible node of the session cluster (its three KWOK nodes) plus the nodes this test adds,
five in all as the issue has it (more if the cluster has more). Then, in one story:

- a sixth node gets its pod within seconds; deleting that node takes it out of the counts at once
  and kube-controller-manager's pod garbage collector removes its pod (40 s later);
- switched to InPlaceIfPossible with ``partition: 3`` (nodes - 2), an image change updates exactly
  2 pods, and the status says so. Those two are recreated: pods created under Standard lack the
  ``InPlaceUpdateReady`` readiness gate, and upstream's ``canPodInPlaceUpdate`` then recreates
  (a readiness gate cannot be added to a pod). The next image change updates the same two nodes
  (nodes are walked by name) in place: same UIDs, restartCount + 1;
- with ``rollingUpdate.selector`` matching 2 nodes and partition 0, only those nodes' pods change;
- with ``maxSurge: 1`` (maxUnavailable 0) an image change replaces every pod while a watch never
  sees more than one pod beyond one per node.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
import yaml

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import DAEMONSETS, NODES
from tests.integration.cloneset.helpers import PodWatcher
from tests.integration.daemonset.helpers import (
    get,
    image_of,
    node_of,
    patch_spec,
    pods,
    ready,
    wait_on_nodes,
    wait_status,
)
from tests.support.corpus import UPSTREAM_EXAMPLES
from tests.support.nodes import NodePool
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

GUESTBOOK = UPSTREAM_EXAMPLES / "kruise/DaemonSet/001-guestbook-ds.yaml"
NAME, SELECTOR = "guestbook-ds", "app=guestbook-daemon"
V2, V3, V4, V5 = (f"openkruise/guestbook:v{n}" for n in (2, 3, 4, 5))
JSON = dict[str, Any]
IN_PLACE_GATE = "InPlaceUpdateReady"


def _restarts(pod: JSON) -> int:
    return sum(int(c.get("restartCount") or 0) for c in pod["status"].get("containerStatuses") or [])


def _gates(pod: JSON) -> list[str]:
    return [str(g.get("conditionType")) for g in pod["spec"].get("readinessGates") or []]


def _container(image: str) -> JSON:
    """The guestbook's container with another image (a merge patch replaces the list)."""
    return {
        "containers": [
            {"name": "daemon", "image": image, "resources": {"limits": {"cpu": "100m", "memory": "200Mi"}}}
        ]
    }


async def _placed(kube: KubeClient, namespace: str) -> list[str]:
    """Wait until the DaemonSet settles with a Ready pod per desired node; returns those nodes."""

    async def probe() -> list[list[str]] | None:
        st = (await get(kube, namespace, NAME)).get("status") or {}
        live = await pods(kube, namespace, NAME, selector=SELECTOR)
        on = sorted({node_of(p) for p in live if ready(p)})
        desired = st.get("desiredNumberScheduled")
        settled = desired and st.get("numberReady") == desired == len(on) == len(live)
        return [on] if settled else None

    (nodes,) = await eventually(probe, timeout=90, what=f"{NAME} settled, one Ready pod per node")
    return nodes


async def _on_nodes(kube: KubeClient, namespace: str, nodes: list[str], **kw: Any) -> dict[str, JSON]:
    """One Ready pod on each of ``nodes``; pods on nodes not in the cluster any more are left out."""
    present = {n["metadata"]["name"] for n in (await kube.list(NODES))["items"]}
    gone = {node_of(p) for p in await pods(kube, namespace, NAME, selector=SELECTOR)} - present
    return await wait_on_nodes(kube, namespace, NAME, nodes, selector=SELECTOR, ignoring=tuple(gone), **kw)


@pytest.mark.timeout(600)
async def test_guestbook_ds_applies_unchanged_and_rolls_out_by_partition_selector_and_surge(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    body = yaml.safe_load(GUESTBOOK.read_text())
    await kube.create(DAEMONSETS, body, namespace)
    base = await _placed(kube, namespace)
    mine = await nodes.add_nodes(max(2, 5 - len(base)), {"guestbook": nodes.prefix})
    every = [*base, *mine]
    count = len(every)
    v1 = await _on_nodes(kube, namespace, every, timeout=60)
    assert {image_of(p) for p in v1.values()} == {body["spec"]["template"]["spec"]["containers"][0]["image"]}

    # a sixth node gets its pod within seconds; deleting the node drops it from the counts
    started = time.monotonic()
    (sixth,) = await nodes.add_nodes(1)
    await _on_nodes(kube, namespace, [*every, sixth], timeout=30)
    print(f"guestbook-ds: a new node's pod Ready after {time.monotonic() - started:.1f} s")
    orphan = next(p for p in await pods(kube, namespace, NAME, selector=SELECTOR) if node_of(p) == sixth)
    await nodes.remove_nodes(sixth)
    await wait_status(kube, namespace, NAME, desiredNumberScheduled=count, numberReady=count)

    # InPlaceIfPossible with partition nodes-2: exactly two pods updated, in place
    partition = count - 2
    rolling = {"rollingUpdateType": "InPlaceIfPossible", "partition": partition, "maxUnavailable": 1}
    await patch_spec(
        kube,
        namespace,
        NAME,
        {"updateStrategy": {"rollingUpdate": rolling}, "template": {"spec": _container(V2)}},
    )
    await wait_status(kube, namespace, NAME, timeout=90, updatedNumberScheduled=2, numberReady=count)
    gated = await _on_nodes(kube, namespace, every)
    updated = sorted(n for n, p in gated.items() if image_of(p) == V2)
    assert len(updated) == 2, f"partition {partition} of {count}: {updated}"
    for node in every:
        same = gated[node]["metadata"]["uid"] == v1[node]["metadata"]["uid"]
        assert same == (node not in updated), f"{node}: only the two updated pods are recreated"
    assert all(IN_PLACE_GATE in _gates(gated[n]) for n in updated), "recreated with the gate"

    # the next image change: the same two nodes, now in place
    await patch_spec(kube, namespace, NAME, {"template": {"spec": _container(V3)}})
    await wait_status(kube, namespace, NAME, timeout=90, updatedNumberScheduled=2, numberReady=count)
    after = await _on_nodes(kube, namespace, every)
    assert sorted(n for n, p in after.items() if image_of(p) == V3) == updated
    for node in every:
        assert after[node]["metadata"]["uid"] == gated[node]["metadata"]["uid"], f"{node}: recreated"
        assert _restarts(after[node]) == _restarts(gated[node]) + (node in updated), node

    # rollingUpdate.selector matching two nodes (partition 0): only their pods change
    chosen = sorted(mine, key=lambda n: n in updated)[:2]  # old pods first
    for node in chosen:
        await nodes.label(node, {"guestbook-canary": "true"})
    rolling = {"partition": 0, "selector": {"matchLabels": {"guestbook-canary": "true"}}}
    await patch_spec(
        kube,
        namespace,
        NAME,
        {"updateStrategy": {"rollingUpdate": rolling}, "template": {"spec": _container(V4)}},
    )
    await wait_status(kube, namespace, NAME, timeout=90, updatedNumberScheduled=2, numberReady=count)
    selected = await _on_nodes(kube, namespace, every)
    assert sorted(n for n, p in selected.items() if image_of(p) == V4) == sorted(chosen)
    assert all(
        selected[n]["metadata"]["uid"] == after[n]["metadata"]["uid"] for n in every if n not in chosen
    )

    # the deleted node's pod is gone by now or soon (it would count as a live pod below)
    async def collected() -> bool:
        live = {
            p["metadata"]["uid"]
            for p in await pods(kube, namespace, NAME, selector=SELECTOR, everything=True)
        }
        return orphan["metadata"]["uid"] not in live

    await eventually(collected, timeout=90, what="the deleted node's pod garbage-collected")

    # maxSurge 1: every pod replaced, never more than one pod beyond one per node
    watcher = PodWatcher(kube, namespace, "guestbook-daemon")
    await watcher.start()
    try:
        rolling = {
            "rollingUpdateType": "Standard",
            "maxSurge": 1,
            "maxUnavailable": 0,
            "partition": 0,
            "selector": None,
        }
        await patch_spec(
            kube,
            namespace,
            NAME,
            {"updateStrategy": {"rollingUpdate": rolling}, "template": {"spec": _container(V5)}},
        )
        surged = await _on_nodes(kube, namespace, every, image=V5, timeout=180)
    finally:
        await watcher.stop()
    assert all(surged[n]["metadata"]["uid"] != selected[n]["metadata"]["uid"] for n in every), "recreated"
    assert count < watcher.max_running <= count + 1, (
        f"surge: {watcher.max_running} live pods ({watcher.max_at})"
    )
    await wait_status(kube, namespace, NAME, updatedNumberScheduled=count, numberAvailable=count)
