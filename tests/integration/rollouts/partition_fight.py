"""GitOps fight detection over the workload (issue 17 item 2; workloads/fight.py,
batchrelease/fights.py); run by ``test_gitops_fights.py`` beside the traffic fights.

A syncer re-applies the CloneSet's Git manifest every 2 s by server-side apply as field manager
``argocd-controller`` (force, as Argo CD's self-heal with ``ServerSideApply=true``); the manifest
pins ``updateStrategy.partition`` at every replica (a manual canary kept in Git). During the canary
the Rollout shows condition ``Conflict`` (reason ``ReconciliationConflict``) naming the writer
within 10 s of the first revert, one Warning event ``WorkloadFieldReverted``, the counter
``kruise_rollout_conflicts_total``, and our writes to the partition stay at most 6 in any minute;
once the syncer stops the value holds, the condition goes and the Rollout completes.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, EVENTS
from tests.integration.rollouts import helpers as h
from tests.support.wait import eventually

REPLICAS = 5
STEPS: list[dict[str, Any]] = [{"replicas": 1, "pause": {}}, {"replicas": "100%"}]
SYNCER = "argocd-controller"
JSON = dict[str, Any]


async def syncer(kube: KubeClient, namespace: str, reverts: list[float]) -> None:
    """Argo CD's self-heal: the Git manifest's partition every 2 s (server-side apply, force)."""
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {"updateStrategy": {"partition": REPLICAS}},
    }
    while True:
        before = (await kube.get(CLONESETS, "web", namespace))["spec"]["updateStrategy"].get("partition")
        await kube.patch(
            CLONESETS, "web", body, namespace, patch_type="apply", field_manager=SYNCER, force=True
        )
        if before != REPLICAS:
            reverts.append(time.monotonic())
        await asyncio.sleep(2)


def partition_owner(cloneset: JSON) -> str:
    for entry in cloneset["metadata"].get("managedFields") or []:
        strategy = ((entry.get("fieldsV1") or {}).get("f:spec") or {}).get("f:updateStrategy") or {}
        if "f:partition" in strategy:
            return str(entry.get("manager"))
    return ""


async def our_writes(kube: KubeClient, namespace: str, rv: str, writes: list[tuple[float, Any, str]]) -> None:
    """Each change of the partition to another value than Git's: (time, value, field manager owning it). The
    watch shows the objects with their ``managedFields``."""
    last: Any = REPLICAS
    only_web = "metadata.name=web"
    async for event in kube.watch(CLONESETS, namespace, resource_version=rv, field_selector=only_web):
        if event.type != "MODIFIED":
            continue
        value = event.object["spec"].get("updateStrategy", {}).get("partition")
        if value != last and value != REPLICAS:
            writes.append((time.monotonic(), value, partition_owner(event.object)))
        last = value


async def partition_fight(kube: KubeClient, namespace: str) -> None:
    """A minute of fight over the partition during step 1, then the syncer stops and the release
    completes."""
    await h.start(kube, namespace, h.rollout(namespace, STEPS), replicas=REPLICAS)
    reverts: list[float] = []
    moves: list[tuple[float, Any, str]] = []
    cs = await kube.get(CLONESETS, "web", namespace)
    watcher = asyncio.create_task(our_writes(kube, namespace, cs["metadata"]["resourceVersion"], moves))
    sync = asyncio.create_task(syncer(kube, namespace, reverts))
    try:
        await asyncio.sleep(1)
        t0 = time.monotonic()
        await h.set_image(kube, namespace, h.V2)  # the hold sets "100%" in that request

        cond = await eventually(
            lambda: h.conflict(kube, namespace), timeout=30, interval=0.2, what="the Conflict condition"
        )
        shown = time.monotonic()
        writes = [t for t, value, _ in moves if value not in (REPLICAS, "100%")]
        first_write = min(writes)
        first_revert = min(r for r in reverts if r > first_write)  # of our first write
        assert cond["reason"] == "ReconciliationConflict" and SYNCER in cond["message"], cond
        assert "spec.updateStrategy.partition" in cond["message"], cond
        to_condition = shown - first_revert
        assert to_condition <= 10, f"{to_condition:.1f}s from the first revert to the condition"

        await asyncio.sleep(max(0.0, t0 + 65 - time.monotonic()))  # a minute of fight
        writes = [t for t, value, _ in moves if value not in (REPLICAS, "100%")]
        fight = [w for w in writes if w >= t0]
        busiest = max(len([w for w in fight if s <= w < s + 60]) for s in fight)
        print(
            f"\nfight: condition {to_condition:.1f}s after the first revert; {len(fight)} writes and "
            f"{len(reverts)} reverts in {time.monotonic() - t0:.0f}s; busiest minute {busiest} writes"
        )
        assert busiest <= 6, [(round(t - t0, 1), value, owner) for t, value, owner in moves]
        assert {owner for t, value, owner in moves if value not in (REPLICAS, "100%")} == {"kruise-manager"}
        assert len(reverts) >= 5, "the syncer kept reverting"
        events = [
            e
            for e in (await kube.list(EVENTS, namespace))["items"]
            if e.get("reason") == "WorkloadFieldReverted" and e.get("type") == "Warning"
        ]
        assert len(events) == 1 and events[0]["involvedObject"]["kind"] == "Rollout", events
        assert SYNCER in events[0]["message"]
    finally:
        sync.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sync

    try:
        await h.wait_paused_at(kube, namespace, 1, timeout=120)  # our partition holds: batch 1 is Ready

        async def cleared() -> JSON | None:
            ro = await h.get_rollout(kube, namespace)
            return ro if not h.condition(ro, "Conflict") else None

        await eventually(cleared, timeout=30, what="the Conflict condition cleared")
        await h.approve(kube, namespace)
        await h.wait_completed(kube, namespace, timeout=90)
        await h.wait_pods(kube, namespace, {h.V2: REPLICAS}, timeout=60)
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
