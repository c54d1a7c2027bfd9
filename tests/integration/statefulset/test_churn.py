"""Churn: quick spec changes never make an Advanced StatefulSet create a pod it must not have.

A watch records every pod transition (list, then watch from its resourceVersion: nothing missed)
while the test changes ``replicas``, ``reserveOrdinals`` and the image 30 times within seconds.
The controller decides from an informer cache that lags the API server; its scale and
resourceVersion expectations keep it from acting twice on what it has not seen yet. Whatever the
interleaving:

- a pod is only ever created at an ordinal some spec written so far allowed (in its range, not
  reserved), so never at an ordinal every spec reserved;
- the pods holding a slot (not terminating) never outnumber the ordinals those specs allowed,
  and with replicas-only churn never ``max(replicas)``;
- the set settles on the last spec: exactly its ordinals, every pod Ready at the last revision.

``KRUISE_CHURN_SEED`` replays another sequence.
"""

from __future__ import annotations

import asyncio
import os
import random
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.workloads.statefulset.identity import replica_range
from tests.integration.cloneset.helpers import PodWatcher
from tests.integration.statefulset.helpers import (
    create,
    new_statefulset,
    ordinals,
    patch_spec,
    revision_of,
    wait_running_and_ready,
    wait_status,
)

pytestmark = pytest.mark.usefixtures("manager")
CHANGES = 30
IMAGES = [f"registry.example.com/nginx:1.{minor}" for minor in range(20, 24)]


def allowed(replicas: int, reserve: list[int]) -> set[int]:
    spec = {"spec": {"replicas": replicas, "reserveOrdinals": reserve}}
    return set(replica_range(spec, start_ordinal_gate=False).ordinals())


class CreationLog(PodWatcher):
    """The pod watcher, also recording each pod's first appearance as (ordinal, event number)."""

    def __init__(self, kube: KubeClient, namespace: str, name: str) -> None:
        super().__init__(kube, namespace, name)
        self.created: list[tuple[int, float]] = []
        self._seen: set[str] = set()

    def _record(self) -> None:
        super()._record()
        loop = asyncio.get_running_loop()
        for name, pod in self.pods.items():
            key = pod["metadata"].get("uid") or name
            if key not in self._seen:
                self._seen.add(key)
                self.created.append((int(name.rsplit("-", 1)[1]), loop.time()))


@pytest.mark.parametrize("churn", ["replicas", "reserveOrdinals"])
async def test_churn_never_creates_a_pod_no_spec_allowed_and_converges(
    kube: KubeClient, namespace: str, churn: str
) -> None:
    seed = int(os.environ.get("KRUISE_CHURN_SEED", "20240601"))
    rng = random.Random(seed)
    body = new_statefulset(
        "churn", 3, image=IMAGES[0], parallel=True, in_place=True, rolling={"maxUnavailable": 2}
    )
    await create(kube, namespace, body)
    await wait_running_and_ready(kube, namespace, "churn", 3)
    loop = asyncio.get_running_loop()
    replicas, reserve, image = 3, [], IMAGES[0]
    specs: list[tuple[float, set[int]]] = [(loop.time(), allowed(replicas, reserve))]
    watcher = CreationLog(kube, namespace, "churn")
    await watcher.start()
    replicas_seen = [replicas]
    try:
        for _ in range(CHANGES):
            change: dict[str, Any] = {}
            roll = rng.random()
            if roll < 0.5:
                replicas = rng.randint(1, 5)
                change["replicas"] = replicas
            if churn == "reserveOrdinals" and rng.random() < 0.6:
                reserve = sorted(rng.sample(range(6), rng.randint(0, 2)))
                change["reserveOrdinals"] = reserve
            if roll >= 0.5:
                image = rng.choice([i for i in IMAGES if i != image])
                change["template"] = {"spec": {"containers": [{"name": "nginx", "image": image}]}}
            stamp = loop.time()
            await patch_spec(kube, namespace, "churn", change)
            specs.append((stamp, allowed(replicas, reserve)))
            replicas_seen.append(replicas)
            await asyncio.sleep(rng.uniform(0.02, 0.15))
        final = allowed(replicas, reserve)
        sts = await wait_status(
            kube,
            namespace,
            "churn",
            timeout=90,
            replicas=replicas,
            readyReplicas=replicas,
            updatedReplicas=replicas,
        )
        pods = await wait_running_and_ready(kube, namespace, "churn", replicas, timeout=60)
    finally:
        await watcher.stop()

    assert watcher.events > CHANGES, "the watch saw the churn"
    for ordinal, at in watcher.created:
        ever = set().union(*(s for stamp, s in specs if stamp <= at))
        assert ordinal in ever, f"seed {seed}: pod {ordinal} created, allowed so far: {sorted(ever)}"
    union = set().union(*(s for _, s in specs))
    assert watcher.max_running <= len(union), f"seed {seed}: {watcher.max_at}"
    if churn == "replicas":
        assert watcher.max_running <= max(replicas_seen), (
            f"seed {seed}: {watcher.max_at} > {max(replicas_seen)}"
        )
    assert set(ordinals(pods)) == final
    update = sts["status"]["updateRevision"]
    assert all(revision_of(p) == update for p in pods)
    assert {p["spec"]["containers"][0]["image"] for p in pods} == {image}
