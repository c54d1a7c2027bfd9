"""Churn: many quick spec changes never push a CloneSet above its surge budget (DESIGN §3).

A watch records every pod transition while the test changes ``replicas`` and the image
30 times within a few seconds. The controller reconciles from an informer cache that lags the
API server; only its scale expectations keep it from creating pods it has already created.
Whatever the interleaving, the number of pods holding a replica slot (not terminating, not
finished) must never exceed ``max(replicas) + maxSurge`` over the specs in effect, and the
CloneSet must settle on the last spec with every pod at the last revision. It runs with
ReCreate (every image change replaces pods) and InPlaceIfPossible (pods patched in place,
resourceVersion expectations, surge pods at the new revision). ``KRUISE_CHURN_SEED`` replays
another sequence of changes.
"""

from __future__ import annotations

import asyncio
import os
import random

import pytest

from kruise.core.kube import KubeClient
from tests.integration.cloneset.helpers import (
    REVISION,
    PodWatcher,
    create,
    get,
    image_of,
    label,
    new_cloneset,
    patch_spec,
    wait_pods,
    wait_status,
)

pytestmark = pytest.mark.usefixtures("manager")
MAX_SURGE = 2
CHANGES = 30
IMAGES = [f"registry.example.com/nginx:1.{minor}" for minor in range(20, 24)]


@pytest.mark.parametrize("update_type", ["ReCreate", "InPlaceIfPossible"])
async def test_churn_never_exceeds_replicas_plus_surge_and_converges(
    kube: KubeClient, namespace: str, update_type: str
) -> None:
    """Expectations guarantee under churn: bounded pod count, then convergence to the final spec."""
    seed = int(os.environ.get("KRUISE_CHURN_SEED", "20240601"))
    rng = random.Random(seed)
    strategy = {"type": update_type, "maxSurge": MAX_SURGE, "maxUnavailable": 1}
    await create(kube, namespace, new_cloneset("churn", 3, strategy=strategy, image=IMAGES[0]))
    await wait_status(kube, namespace, "churn", readyReplicas=3)

    watcher = PodWatcher(kube, namespace, "churn")
    await watcher.start()
    replicas_seen, image = [3], IMAGES[0]
    try:
        for _ in range(CHANGES):
            change: dict[str, object] = {}
            roll = rng.random()
            if roll < 0.6:
                change["replicas"] = rng.randint(1, 6)
            if roll >= 0.4:
                image = rng.choice([i for i in IMAGES if i != image])
                change["template"] = {"spec": {"containers": [{"name": "nginx", "image": image}]}}
            await patch_spec(kube, namespace, "churn", change)
            if "replicas" in change:
                replicas_seen.append(int(str(change["replicas"])))
            await asyncio.sleep(rng.uniform(0.02, 0.15))
        final = replicas_seen[-1]
        cs = await wait_status(
            kube,
            namespace,
            "churn",
            timeout=50,
            replicas=final,
            readyReplicas=final,
            updatedReplicas=final,
            updatedReadyReplicas=final,
        )
        pods = await wait_pods(kube, namespace, "churn", final)
    finally:
        await watcher.stop()

    bound = max(replicas_seen) + MAX_SURGE
    print(f"churn {update_type} seed {seed}: max {watcher.max_running} of {bound}, {watcher.events} events")
    assert watcher.events > CHANGES, "the watch saw the churn"
    assert watcher.max_running <= bound, (
        f"seed {seed}: {watcher.max_running} pods held slots at once ({watcher.max_at}), "
        f"bound {bound} = max replicas {max(replicas_seen)} + maxSurge {MAX_SURGE}"
    )
    status = (await get(kube, namespace, "churn"))["status"]
    assert status["currentRevision"] == status["updateRevision"] == cs["status"]["updateRevision"]
    assert all(label(p, REVISION) == status["updateRevision"] for p in pods)
    assert all(image_of(p) == image for p in pods)
