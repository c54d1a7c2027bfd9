"""GitOps fight detection over the network objects (issue 17 item 2; rollout/trafficfight.py,
rollout/trafficfights.py).

A syncer re-applies the HTTPRoute's Git manifest (one backendRef to ``web``, no weights) every 2 s by
server-side apply as field manager ``argocd-controller`` (force, as Argo CD's self-heal with
``ServerSideApply=true``) while the Rollout's first step wants 20% of the traffic on the canary.
The Rollout shows condition ``Conflict`` (reason ``ReconciliationConflict``) naming the writer within
10 s of the first revert, one Warning event ``TrafficFieldReverted``, and our writes to the route
stay at most 6 in any minute; once the syncer stops our weights hold, the condition goes and the
release completes.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import EVENTS
from kruise.traffic.resources import HTTPROUTES
from tests.integration.rollouts import helpers as h
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

REPLICAS = 5
STEPS: list[dict[str, Any]] = [
    {"replicas": 1, "traffic": "20%", "pause": {}},
    {"replicas": "100%", "traffic": "100%"},
]
SYNCER = "argocd-controller"
GIT = {"web": 1}
JSON = dict[str, Any]


async def syncer(kube: KubeClient, namespace: str, reverts: list[float]) -> None:
    """Argo CD's self-heal: the Git manifest of the route every 2 s (server-side apply, force)."""
    body = h.httproute(namespace)
    while True:
        before = h.route_weights(await kube.get(HTTPROUTES, "web", namespace))
        await kube.patch(
            HTTPROUTES, "web", body, namespace, patch_type="apply", field_manager=SYNCER, force=True
        )
        if before != GIT:
            reverts.append(time.monotonic())
        await asyncio.sleep(2)


def rules_owner(route: JSON) -> str:
    for entry in route["metadata"].get("managedFields") or []:
        if "f:rules" in ((entry.get("fieldsV1") or {}).get("f:spec") or {}):
            return str(entry.get("manager"))
    return ""


async def our_writes(
    kube: KubeClient, namespace: str, rv: str, writes: list[tuple[float, JSON, str]]
) -> None:
    """Each change of the weights away from Git's: (time, weights, field manager owning the rules)."""
    last: JSON = GIT
    async for event in kube.watch(
        HTTPROUTES, namespace, resource_version=rv, field_selector="metadata.name=web"
    ):
        if event.type != "MODIFIED":
            continue
        weights = h.route_weights(event.object)
        if weights != last and weights != GIT:
            writes.append((time.monotonic(), weights, rules_owner(event.object)))
        last = weights


async def conflict(kube: KubeClient, namespace: str) -> JSON | None:
    cond = h.condition(await h.get_rollout(kube, namespace), "Conflict")
    return cond if cond.get("status") == "True" else None


async def test_a_syncer_reverting_the_route_weights_is_named_backed_off_and_outlasted(
    kube: KubeClient, namespace: str
) -> None:
    await h.start(
        kube, namespace, h.rollout(namespace, STEPS, h.ROUTING_GATEWAY), "httproute", replicas=REPLICAS
    )
    reverts: list[float] = []
    moves: list[tuple[float, JSON, str]] = []
    route = await kube.get(HTTPROUTES, "web", namespace)
    watcher = asyncio.create_task(our_writes(kube, namespace, route["metadata"]["resourceVersion"], moves))
    sync = asyncio.create_task(syncer(kube, namespace, reverts))
    try:
        await asyncio.sleep(1)
        t0 = time.monotonic()
        await h.set_image(kube, namespace, h.V2)

        cond = await eventually(lambda: conflict(kube, namespace), timeout=60, interval=0.2, what="Conflict")
        shown = time.monotonic()
        first_write = min(t for t, _, _ in moves)
        first_revert = min(r for r in reverts if r > first_write)
        assert cond["reason"] == "ReconciliationConflict" and SYNCER in cond["message"], cond
        assert "HTTPRoute web" in cond["message"] and "backendRefs" in cond["message"], cond
        to_condition = shown - first_revert
        assert to_condition <= 10, f"{to_condition:.1f}s from the first revert to the condition"

        await asyncio.sleep(max(0.0, first_write + 65 - time.monotonic()))  # a minute of fight
        fight = [t for t, _, _ in moves]
        busiest = max(len([w for w in fight if s <= w < s + 60]) for s in fight)
        print(
            f"\nroute fight: condition {to_condition:.1f}s after the first revert; {len(fight)} writes and "
            f"{len(reverts)} reverts in {time.monotonic() - t0:.0f}s; busiest minute {busiest} writes "
            f"(at {[round(t - first_write, 1) for t in fight]} s)"
        )
        assert busiest <= 6, [(round(t - t0, 1), w, owner) for t, w, owner in moves]
        assert {owner for _, _, owner in moves} == {"kruise-manager"}
        assert {tuple(sorted(w.items())) for _, w, _ in moves} == {(("web", 80), ("web-canary", 20))}
        assert len(reverts) >= 5, "the syncer kept reverting"
        events = [
            e
            for e in (await kube.list(EVENTS, namespace))["items"]
            if e.get("reason") == "TrafficFieldReverted" and e.get("type") == "Warning"
        ]
        assert len(events) == 1 and events[0]["involvedObject"]["kind"] == "Rollout", events
        assert SYNCER in events[0]["message"]
        assert h.canary_status(await h.get_rollout(kube, namespace)).get("currentStepIndex") == 1
    finally:
        sync.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sync

    try:
        await h.wait_paused_at(kube, namespace, 1, timeout=120)  # our weights hold: the step converged
        assert h.route_weights(await kube.get(HTTPROUTES, "web", namespace)) == {"web": 80, "web-canary": 20}

        async def cleared() -> JSON | None:
            ro = await h.get_rollout(kube, namespace)
            return ro if not h.condition(ro, "Conflict") else None

        await eventually(cleared, timeout=30, what="the Conflict condition cleared")
        await h.approve(kube, namespace)
        await h.wait_completed(kube, namespace, timeout=90)
        assert not h.condition(await h.get_rollout(kube, namespace), "Conflict")
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
