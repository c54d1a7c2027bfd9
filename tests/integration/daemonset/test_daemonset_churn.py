"""Churn: nodes come and go and the image changes while a watch records every pod (DESIGN §3).

The controller reconciles from informer caches that lag the API server (pods, nodes, revisions);
only its expectations keep it from placing a second pod on a node it has already served. A watch
started before the churn applies every pod event in order, so no intermediate state is missed.
Whatever the interleaving:

- without surge (maxUnavailable 1) no node ever runs two live pods;
- with maxSurge 1 no node ever runs three, and at no moment do more than maxSurge nodes run a
  second pod beside a Ready one. Upstream replaces an old pod that is not Ready at once, outside
  the surge budget, so in this variant the image changes only once every pod is Ready (nodes keep
  coming and going meanwhile): every old pod a surge pod joins is then available;

and the DaemonSet settles with one Ready pod of the last image on every node that exists. Pods of
a deleted node stay until kube-controller-manager's pod garbage collector removes them (40 s);
the controller stops counting them at once, and so does the watch.
``KRUISE_CHURN_SEED`` replays another sequence.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections import Counter
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from tests.integration.cloneset.helpers import PodWatcher
from tests.integration.daemonset.helpers import (
    NAME_LABEL,
    create,
    new_daemonset,
    node_label,
    ready,
    set_container,
    wait_on_nodes,
    wait_status,
)
from tests.support.nodes import NodePool

pytestmark = pytest.mark.usefixtures("manager")
CHANGES = 30
IMAGES = [f"registry.example.com/fluentd:v2.{minor}" for minor in range(4)]


class NodeWatcher(PodWatcher):
    """A :class:`PodWatcher` of a DaemonSet's pods that also records, per moment, the most live pods
    on one node and how many nodes ran a second live pod beside a Ready one."""

    def __init__(self, kube: KubeClient, namespace: str, name: str) -> None:
        super().__init__(kube, namespace, name)
        self.selector = f"{NAME_LABEL}={name}"
        self.max_on_a_node = 0
        self.max_surging = 0
        self.worst: list[str] = []
        self.gone: set[str] = set()  # deleted nodes: their pods wait for the pod garbage collector

    def _record(self) -> None:
        super()._record()
        by_node: dict[str, list[dict[str, Any]]] = {}
        for name in self.running():
            pod = self.pods[name]
            node = pod["spec"].get("nodeName") or _pinned(pod)
            if node not in self.gone:
                by_node.setdefault(node, []).append(pod)
        most = max((len(p) for p in by_node.values()), default=0)
        surging = sum(1 for p in by_node.values() if len(p) > 1 and any(ready(x) for x in p))
        if most > self.max_on_a_node or surging > self.max_surging:
            self.worst = sorted(f"{n}:{len(p)}" for n, p in by_node.items() if len(p) > 1)
        self.max_on_a_node = max(self.max_on_a_node, most)
        self.max_surging = max(self.max_surging, surging)


def _pinned(pod: dict[str, Any]) -> str:
    terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    return str(terms["nodeSelectorTerms"][0]["matchFields"][0]["values"][0])


@pytest.mark.timeout(600)
@pytest.mark.parametrize("surge", [False, True], ids=["max-unavailable-1", "max-surge-1"])
async def test_churn_keeps_one_pod_per_node_within_surge_and_converges(
    kube: KubeClient, namespace: str, nodes: NodePool, surge: bool
) -> None:
    seed = int(os.environ.get("KRUISE_CHURN_SEED", "20241201"))
    rng = random.Random(seed)
    rolling = {"maxSurge": 1, "maxUnavailable": 0} if surge else {"maxUnavailable": 1}
    live = await nodes.add_nodes(4, node_label(nodes))
    await create(kube, namespace, new_daemonset("churn", nodes, rolling=rolling, image=IMAGES[0]))
    await wait_on_nodes(kube, namespace, "churn", live)
    watcher = NodeWatcher(kube, namespace, "churn")
    await watcher.start()
    image, done = IMAGES[0], Counter[str]()
    gone: tuple[str, ...] = ()
    try:
        for _ in range(CHANGES if not surge else CHANGES * 2 // 3):
            roll = rng.random() * (1.0 if not surge else 0.75)  # fewer (settled) image changes with surge
            if roll < 0.3 and len(live) < 7:
                live += await nodes.add_nodes(1, node_label(nodes))
                done["node added"] += 1
            elif roll < 0.5 and len(live) > 2:
                removed = live.pop(rng.randrange(len(live)))
                watcher.gone.add(removed)
                gone = tuple(watcher.gone)  # pods there wait for the pod GC, uncounted by the controller
                await nodes.remove_nodes(removed)
                done["node removed"] += 1
            else:
                if surge:  # old pods all Ready, so every new pod beside one counts against maxSurge
                    await wait_on_nodes(
                        kube, namespace, "churn", live, image=image, timeout=120, ignoring=gone
                    )
                image = rng.choice([i for i in IMAGES if i != image])
                await set_container(kube, namespace, "churn", image=image)
                done["image changed"] += 1
            await asyncio.sleep(rng.uniform(0.05, 0.4))
        await wait_on_nodes(kube, namespace, "churn", live, image=image, timeout=120, ignoring=gone)
        count = len(live)
        await wait_status(
            kube, namespace, "churn", timeout=60, desiredNumberScheduled=count, updatedNumberScheduled=count
        )
    finally:
        await watcher.stop()

    print(
        f"churn surge={surge} seed {seed} ({dict(done)}): at most {watcher.max_on_a_node} live pods on a "
        f"node, {watcher.max_surging} nodes surging at once, {watcher.events} events"
    )
    assert watcher.events > CHANGES, "the watch saw the churn"
    assert done["node added"] and done["node removed"] and done["image changed"], f"seed {seed}: {done}"
    if surge:
        assert watcher.max_on_a_node <= 2, f"seed {seed}: three pods on a node ({watcher.worst})"
        assert watcher.max_surging <= 1, f"seed {seed}: more than maxSurge nodes surging ({watcher.worst})"
    else:
        assert watcher.max_on_a_node == 1, f"seed {seed}: two live pods on a node ({watcher.worst})"
