"""KWOK Nodes a test adds, labels, taints, cordons, marks NotReady and deletes.

The session cluster's nodes are shared by every test (three KWOK nodes, and a real kubelet node
while the real-node group runs), so a test that needs nodes of its own adds them here with labels
only it uses, selects them with those labels, and the pool deletes them afterwards. A node is
KWOK's when it carries ``kwok.x-k8s.io/node: fake``: KWOK then reports it Ready and plays the
kubelet for the pods bound to it. :meth:`NodePool.set_ready` with ``False`` takes the annotation
away first (KWOK would report it Ready again at once) and writes ``Ready: False`` as a kubelet
that stopped posting would leave it; ``True`` gives the node back to KWOK.

Deleting a node leaves its pods to kube-controller-manager's pod garbage collector, as in a real
cluster (it deletes pods bound to a missing node after a 40 s quarantine); :meth:`NodePool.close`
deletes the pods of the nodes it removes at once, so nothing outlives the test.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

from kruise.core.errors import KruiseError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import NODES, PODS
from kruise.core.localcluster.components import FAKE_NODE_ANNOTATION, fake_node

JSON = dict[str, Any]
ZONE_LABEL = "topology.kubernetes.io/zone"


class NodePool:
    """The nodes one test added (names ``kwok-<test id>-<i>``)."""

    def __init__(self, kube: KubeClient, prefix: str | None = None) -> None:
        self.kube = kube
        self.prefix = prefix or f"kwok-{uuid.uuid4().hex[:6]}"
        self.names: list[str] = []
        self._count = 0

    async def add_nodes(
        self, n: int, labels: dict[str, str] | None = None, taints: list[dict[str, str]] | None = None
    ) -> list[str]:
        """Create ``n`` KWOK nodes with ``labels`` and ``taints``; returns their names."""
        names = []
        for _ in range(n):
            name = f"{self.prefix}-{self._count}"
            self._count += 1
            await self.kube.create(NODES, fake_node(name, labels, taints))
            self.names.append(name)
            names.append(name)
        return names

    async def remove_nodes(self, *names: str) -> None:
        """Delete the nodes (their pods stay for the pod garbage collector, as in a cluster)."""
        for name in names:
            await self.kube.delete(NODES, name, missing_ok=True)
            if name in self.names:
                self.names.remove(name)

    async def label(self, name: str, labels: dict[str, str | None]) -> JSON:
        """Merge ``labels`` into the node's (``None`` removes a key)."""
        return await self.kube.patch(NODES, name, {"metadata": {"labels": labels}}, patch_type="merge")

    async def taint(self, name: str, taints: list[dict[str, str]]) -> JSON:
        """Replace the node's taints."""
        return await self.kube.patch(NODES, name, {"spec": {"taints": taints or None}}, patch_type="merge")

    async def cordon(self, name: str, unschedulable: bool = True) -> JSON:
        """``kubectl cordon`` (``spec.unschedulable``); ``False`` uncordons."""
        return await self.kube.patch(
            NODES, name, {"spec": {"unschedulable": unschedulable or None}}, patch_type="merge"
        )

    async def set_ready(self, name: str, ready: bool) -> None:
        """NotReady: KWOK lets go of the node and ``Ready`` turns False; Ready: KWOK takes it back."""
        key, value = FAKE_NODE_ANNOTATION
        if ready:
            await self.kube.patch(
                NODES, name, {"metadata": {"annotations": {key: value}}}, patch_type="merge"
            )
            return
        await self.kube.patch(NODES, name, {"metadata": {"annotations": {key: None}}}, patch_type="merge")
        condition = {
            "type": "Ready",
            "status": "False",
            "reason": "NodeStatusUnknown",
            "message": "Kubelet stopped posting node status.",
        }
        await self.kube.patch(
            NODES, name, {"status": {"conditions": [condition]}}, patch_type="strategic", subresource="status"
        )

    async def close(self) -> None:
        """Delete every node still in the pool and the pods bound to them."""
        for name in list(self.names):
            try:
                pods = (await self.kube.list(PODS, field_selector=f"spec.nodeName={name}"))["items"]
            except KruiseError:
                pods = []
            for pod in pods:
                meta = pod["metadata"]
                await self.kube.delete(
                    PODS, meta["name"], meta["namespace"], grace_period_seconds=0, missing_ok=True
                )
        await self.remove_nodes(*self.names)


@contextlib.asynccontextmanager
async def zoned_pool(kube: KubeClient, label: str, zones: dict[str, int]) -> AsyncIterator[str]:
    """``zones[z]`` KWOK nodes in each zone ``z`` (``topology.kubernetes.io/zone``), all labelled
    ``label: <prefix>``; yields the prefix (the value a test selects its own nodes by) and
    deletes the nodes and their pods afterwards."""
    nodes = NodePool(kube)
    try:
        for zone, count in zones.items():
            await nodes.add_nodes(count, {ZONE_LABEL: zone, label: nodes.prefix})
        yield nodes.prefix
    finally:
        await nodes.close()
