"""GitOps fight detection over the network objects (issue 17 item 2; rollout/trafficfight.py,
rollout/trafficfights.py), run at once with the fight over the workload's partition
(``partition_fight.py``): each is a minute of mostly waiting.

A syncer re-applies the HTTPRoute's Git manifest (one backendRef to ``web``, no weights) every 2 s by
server-side apply as field manager ``argocd-controller`` (force, as Argo CD's self-heal with
``ServerSideApply=true``) while the Rollout's first step wants 20% of the traffic on the canary.
The Rollout shows condition ``Conflict`` (reason ``ReconciliationConflict``) naming the writer within
10 s of the first revert, one Warning event ``TrafficFieldReverted``, and our writes to the route
stay at most 6 in any minute; once the syncer stops our weights hold, the condition goes and the
release completes. The same for a syncer applying ``canary-weight: "0"`` to the canary Ingress
(``<ingress>-canary``, which the Rollout creates and keeps), and for the Istio VirtualService a Lua
script edits (``customNetworkRefs``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from kruise.core.kube import KubeClient, Resource
from kruise.core.kube.resources import EVENTS, NAMESPACES
from kruise.traffic.resources import HTTPROUTES, INGRESSES, VIRTUALSERVICES
from tests.integration.rollouts import helpers as h
from tests.integration.rollouts.partition_fight import partition_fight
from tests.support.namespaces import create_namespace
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

REPLICAS = 5
STEPS: list[dict[str, Any]] = [
    {"replicas": 1, "traffic": "20%", "pause": {}},
    {"replicas": "100%", "traffic": "100%"},
]
SYNCER = "argocd-controller"
WEIGHT = h.NGINX + "canary-weight"
JSON = dict[str, Any]


@dataclass(frozen=True)
class Front:
    """The network object a syncer fights over: its Git manifest and the value we track on it."""

    resource: Resource
    name: str
    network: str
    routing: JSON
    manifest: Callable[[str], JSON]
    value: Callable[[JSON], Any]
    git: Any  # the value in Git
    ours: Any  # what step 1 writes
    owner: Callable[[JSON], str]  # the field manager owning the value
    fields: str  # a piece of the condition's message


def managers(obj: JSON, *path: str) -> str:
    for entry in obj["metadata"].get("managedFields") or []:
        node: Any = entry.get("fieldsV1") or {}
        for key in path:
            node = node.get(f"f:{key}") if isinstance(node, dict) else None
        if node is not None:
            return str(entry.get("manager"))
    return ""


def canary_ingress_manifest(namespace: str) -> JSON:
    """A Git copy of the canary Ingress that pins its weight at 0."""
    meta = {"name": "web-canary", "namespace": namespace, "annotations": {WEIGHT: "0"}}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": meta}


ROUTE = Front(
    HTTPROUTES,
    "web",
    "httproute",
    h.ROUTING_GATEWAY,
    h.httproute,
    h.route_weights,
    {"web": 1},
    {"web": 80, "web-canary": 20},
    lambda obj: managers(obj, "spec", "rules"),
    "spec.rules[0].backendRefs",
)
INGRESS = Front(
    INGRESSES,
    "web-canary",
    "ingress",
    h.ROUTING_INGRESS,
    canary_ingress_manifest,
    lambda obj: (obj["metadata"].get("annotations") or {}).get(WEIGHT),
    "0",
    "20",
    lambda obj: managers(obj, "metadata", "annotations", WEIGHT),
    f"metadata.annotations[{WEIGHT}]",
)

ISTIO = Front(
    VIRTUALSERVICES,
    "web",
    "istio",
    h.ROUTING_ISTIO,
    h.virtual_service,
    h.vs_weights,
    {"web": None},
    {"web": 80, "web-canary": 20},
    lambda obj: managers(obj, "spec", "http"),
    "spec.http[0].route",
)


async def syncer(kube: KubeClient, namespace: str, front: Front, reverts: list[float]) -> None:
    """Argo CD's self-heal: the Git manifest every 2 s (server-side apply, force) once the object exists."""
    body = front.manifest(namespace)
    while True:
        live = await kube.get_or_none(front.resource, front.name, namespace)
        if live is not None:
            await kube.patch(
                front.resource,
                front.name,
                body,
                namespace,
                patch_type="apply",
                field_manager=SYNCER,
                force=True,
            )
            if front.value(live) != front.git:
                reverts.append(time.monotonic())
        await asyncio.sleep(2)


async def our_writes(
    kube: KubeClient, namespace: str, front: Front, writes: list[tuple[float, Any, str]]
) -> None:
    """Each change of the value away from Git's: (time, value, field manager owning it)."""
    last: Any = front.git
    rv = (await kube.list(front.resource, namespace))["metadata"]["resourceVersion"]
    only = f"metadata.name={front.name}"
    async for event in kube.watch(front.resource, namespace, resource_version=rv, field_selector=only):
        if event.type not in ("ADDED", "MODIFIED"):
            continue
        value = front.value(event.object)
        if value != last and value != front.git:
            writes.append((time.monotonic(), value, front.owner(event.object)))
        last = value


async def fight(kube: KubeClient, namespace: str, front: Front) -> None:
    """A minute of fight during step 1, then the syncer stops and the release completes."""
    await h.start(
        kube, namespace, h.rollout(namespace, STEPS, front.routing), front.network, replicas=REPLICAS
    )
    reverts: list[float] = []
    moves: list[tuple[float, Any, str]] = []
    watcher = asyncio.create_task(our_writes(kube, namespace, front, moves))
    sync = asyncio.create_task(syncer(kube, namespace, front, reverts))
    try:
        await asyncio.sleep(1)
        t0 = time.monotonic()
        await h.set_image(kube, namespace, h.V2)

        cond = await eventually(
            lambda: h.conflict(kube, namespace), timeout=60, interval=0.2, what="Conflict"
        )
        shown = time.monotonic()
        first_write = min(t for t, _, _ in moves)
        first_revert = min(r for r in reverts if r > first_write)
        assert cond["reason"] == "ReconciliationConflict" and SYNCER in cond["message"], cond
        kind = front.resource.kind
        assert f"{kind} {front.name}" in cond["message"] and front.fields in cond["message"], cond
        to_condition = shown - first_revert
        assert to_condition <= 10, f"{to_condition:.1f}s from the first revert to the condition"

        await asyncio.sleep(max(0.0, first_write + 65 - time.monotonic()))  # a minute of fight
        writes = [t for t, _, _ in moves]
        busiest = max(len([w for w in writes if s <= w < s + 60]) for s in writes)
        print(
            f"\n{kind} fight: condition {to_condition:.1f}s after the first revert; {len(writes)} writes and "
            f"{len(reverts)} reverts in {time.monotonic() - t0:.0f}s; busiest minute {busiest} writes "
            f"(at {[round(t - first_write, 1) for t in writes]} s)"
        )
        assert busiest <= 6, [(round(t - t0, 1), value, owner) for t, value, owner in moves]
        assert {owner for _, _, owner in moves} == {"kruise-manager"}
        assert [value for _, value, _ in moves] == [front.ours] * len(moves)
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
        await h.wait_paused_at(kube, namespace, 1, timeout=120)

        async def held() -> JSON | None:  # the next re-assert (at most 60 s away) holds
            ro = await h.get_rollout(kube, namespace)
            live = await kube.get(front.resource, front.name, namespace)
            return ro if front.value(live) == front.ours and not h.condition(ro, "Conflict") else None

        await eventually(held, timeout=90, what="our value holding and the Conflict condition cleared")
        await h.approve(kube, namespace)
        await h.wait_completed(kube, namespace, timeout=90)
        assert not h.condition(await h.get_rollout(kube, namespace), "Conflict")
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher


async def test_syncers_reverting_partition_route_ingress_and_lua_weights_are_named_backed_off_and_outlasted(
    kube: KubeClient, namespace: str
) -> None:
    """The CloneSet partition, HTTPRoute, canary Ingress and Lua-managed VirtualService fights at
    once, one namespace each; a failure names its object."""

    async def fought(ns: str, what: str, one: Awaitable[None]) -> None:
        try:
            await one
        except Exception as e:
            e.add_note(f"in the {what} fight (namespace {ns})")
            raise

    others = [await create_namespace(kube, f"{namespace[:30]}-{i}") for i in (1, 2, 3)]
    try:
        async with asyncio.TaskGroup() as fights:
            for ns, front in zip(others, (ROUTE, INGRESS, ISTIO), strict=True):
                fights.create_task(fought(ns, front.resource.kind, fight(kube, ns, front)))
            fights.create_task(fought(namespace, "partition", partition_fight(kube, namespace)))
    finally:
        for ns in others:
            await kube.delete(NAMESPACES, ns, missing_ok=True)
