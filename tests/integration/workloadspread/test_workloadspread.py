"""WorkloadSpread on the shared embedded cluster: pods of a Deployment or CloneSet spread over two
zones of KWOK nodes (kube-scheduler binds them), scale-in by deletion cost, and the validating
webhook's refusals (upstream's messages) that change nothing."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

from kruise.core.errors import ApiError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import (
    CLONESETS,
    DEPLOYMENTS,
    MUTATING_WEBHOOKS,
    NODES,
    PODS,
    VALIDATING_WEBHOOKS,
    Resource,
)
from kruise.core.webhook.configuration import MUTATING_NAME, VALIDATING_NAME
from kruise.workloads.api.workloadspread import MATCHED_ANNOTATION, WORKLOADSPREADS
from kruise.workloads.workloadspread.subsets import DELETION_COST_ANNOTATION
from tests.integration.podunavailablebudget.test_pub import evict
from tests.support.nodes import ZONE_LABEL, zoned_pool
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")
JSON = dict[str, object]
ZONE = ZONE_LABEL
POOL = "ws-pool"


def workloadspread(
    name: str,
    target: str,
    *,
    api_version: str = "apps/v1",
    kind: str = "Deployment",
    cap_a: object = 2,
    cap_b: object = None,
    pool: str | None = None,
    strategy: JSON | None = None,
) -> JSON:
    """Subsets ``subset-a`` (``cap_a``) and ``subset-b`` (``cap_b``; None: unlimited) by zone, and
    by the pool's own label when ``pool`` is given."""

    def subset(zone: str, cap: object) -> JSON:
        expressions = [{"key": ZONE, "operator": "In", "values": [zone]}]
        if pool is not None:
            expressions.append({"key": POOL, "operator": "In", "values": [pool]})
        out: JSON = {"name": f"subset-{zone}", "requiredNodeSelectorTerm": {"matchExpressions": expressions}}
        if cap is not None:
            out["maxReplicas"] = cap
        return out

    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": name},
        "spec": {
            "targetRef": {"apiVersion": api_version, "kind": kind, "name": target},
            "subsets": [subset("a", cap_a), subset("b", cap_b)],
            **({"scheduleStrategy": strategy} if strategy else {}),
        },
    }


async def test_validating_webhook_refusals_change_nothing(kube: KubeClient, namespace: str) -> None:
    await kube.create(WORKLOADSPREADS, workloadspread("first", "web"), namespace)
    await asyncio.sleep(3)  # the webhook reads the manager's informer (no controller writes a status yet)
    with pytest.raises(
        ApiError, match=re.escape("ws.spec.targetRef is in conflict with other WorkloadSpread first")
    ):
        await kube.create(WORKLOADSPREADS, workloadspread("second", "web"), namespace)
    with pytest.raises(ApiError, match="the maxReplicas type of all subsets must be the same"):
        await kube.create(WORKLOADSPREADS, workloadspread("third", "other", cap_b="50%"), namespace)
    moved = {"spec": {"targetRef": {"name": "moved"}}}
    with pytest.raises(ApiError, match="change TargetReference is not permitted for WorkloadSpread"):
        await kube.patch(WORKLOADSPREADS, "first", moved, namespace, patch_type="merge")
    names = [w["metadata"]["name"] for w in (await kube.list(WORKLOADSPREADS, namespace))["items"]]
    assert names == ["first"]
    stored = await kube.get(WORKLOADSPREADS, "first", namespace)
    assert stored["spec"]["targetRef"]["name"] == "web"


@pytest.fixture
async def pool(kube: KubeClient) -> AsyncIterator[str]:
    """Two KWOK nodes per zone (a, b), labelled with the pool's own label: the pool's prefix."""
    async with zoned_pool(kube, POOL, {"a": 2, "b": 2}) as prefix:
        yield prefix


def workload(api_version: str, kind: str, name: str, pool: str, replicas: int) -> JSON:
    labels = {"app": name}
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "nodeSelector": {POOL: pool},
                    "terminationGracePeriodSeconds": 0,
                    "containers": [{"name": "web", "image": "registry.example.com/web:1"}],
                },
            },
        },
    }


async def zones_of_pods(kube: KubeClient, namespace: str, app: str) -> dict[str, str]:
    """Live pod name -> zone of the node it is bound to ("" while unscheduled)."""
    pods = (await kube.list(PODS, namespace, label_selector=f"app={app}"))["items"]
    out: dict[str, str] = {}
    for pod in pods:
        if pod["metadata"].get("deletionTimestamp"):
            continue
        node = pod["spec"].get("nodeName")
        zone = ""
        if node:
            zone = (await kube.get(NODES, node))["metadata"]["labels"].get(ZONE, "")
        out[pod["metadata"]["name"]] = zone
    return out


def zone_counts(zones: dict[str, str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for zone in zones.values():
        counts[zone] = counts.get(zone, 0) + 1
    return counts


@pytest.mark.parametrize(
    ("res", "api_version", "kind"),
    [(DEPLOYMENTS, "apps/v1", "Deployment"), (CLONESETS, "apps.kruise.io/v1alpha1", "CloneSet")],
    ids=["deployment", "cloneset"],
)
async def test_elastic_deployment_zone_a_2_zone_b_nil(
    kube: KubeClient, namespace: str, pool: str, res: Resource, api_version: str, kind: str
) -> None:
    """Upstream's "elastic deployment, zone-a=2, zone-b=nil": 6 replicas place 2 pods in zone a
    and 4 in zone b (bound by kube-scheduler); scaling to 3 removes zone b's pods first."""
    await spread_ready(
        kube, namespace, pool, [("subset-a", 2), ("subset-b", -1)], api_version=api_version, kind=kind
    )
    await kube.create(res, workload(api_version, kind, "web", pool, 6), namespace)

    async def placed(expected: dict[str, int]) -> dict[str, str] | None:
        zones = await zones_of_pods(kube, namespace, "web")
        return zones if zone_counts(zones) == expected else None

    zones = await eventually(lambda: placed({"a": 2, "b": 4}), timeout=60, what="2 pods in zone a, 4 in b")
    await assert_matched(kube, namespace, zones, with_uid=kind == "Deployment")

    async def costs_set() -> bool:
        pods = (await kube.list(PODS, namespace, label_selector="app=web"))["items"]
        costs = {p["metadata"].get("annotations", {}).get(DELETION_COST_ANNOTATION) for p in pods}
        return costs == {"200", "100"}

    await eventually(costs_set, what="deletion costs 200 (zone a) and 100 (zone b)")
    await kube.patch(res, "web", {"spec": {"replicas": 3}}, namespace, patch_type="merge")
    await eventually(lambda: placed({"a": 2, "b": 1}), timeout=60, what="zone b scaled in first")


async def assert_matched(kube: KubeClient, namespace: str, zones: dict[str, str], *, with_uid: bool) -> None:
    """Every pod's matched annotation names ``spread`` and the subset of its zone."""
    for pod_name in zones:
        pod = await kube.get(PODS, pod_name, namespace)
        matched = json.loads(pod["metadata"]["annotations"][MATCHED_ANNOTATION])
        assert (matched["name"], matched["subset"]) == ("spread", f"subset-{zones[pod_name]}")
        # a ReplicaSet's pods have no name at admission: recorded by a generated uid, in the
        # capped subset-a only (upstream records nothing for an uncapped subset)
        assert bool(matched.get("uid")) is (with_uid and zones[pod_name] == "a")


async def spread_ready(
    kube: KubeClient,
    namespace: str,
    pool: str,
    subsets: list[tuple[str, int]],
    *,
    api_version: str = "apps/v1",
    kind: str = "Deployment",
    strategy: JSON | None = None,
) -> None:
    """``spread`` (workload ``web``, zone a capped at 2, ``strategy`` its ``scheduleStrategy``)
    created, initialised to ``subsets`` (name, missingReplicas) and in the mutating pod webhook's
    scope."""
    spread = workloadspread("spread", "web", api_version=api_version, kind=kind, pool=pool, strategy=strategy)
    await kube.create(WORKLOADSPREADS, spread, namespace)

    async def initialised() -> bool:
        ws = await kube.get(WORKLOADSPREADS, "spread", namespace)
        statuses = (ws.get("status") or {}).get("subsetStatuses") or []
        return [(s["name"], s["missingReplicas"]) for s in statuses] == subsets

    await eventually(initialised, what="the WorkloadSpread's subset statuses")
    await pod_webhook_in_scope(kube, namespace)


async def pod_webhook_in_scope(kube: KubeClient, namespace: str) -> None:
    """Wait until ``mpod.kb.io``'s match condition names ``namespace`` (a WorkloadSpread there is
    seen by the mutating pod webhook)."""

    async def in_scope() -> bool:
        config = await kube.get(MUTATING_WEBHOOKS, MUTATING_NAME)
        (hook,) = [h for h in config["webhooks"] if h["name"] == "mpod.kb.io"]
        expression = " ".join(c["expression"] for c in hook.get("matchConditions") or [])
        return f"request.namespace == '{namespace}'" in expression

    await eventually(in_scope, what="mpod.kb.io's condition names this WorkloadSpread's workload")


def subset_entries(ws: JSON) -> list[JSON]:
    """Every subset status of ``ws``: ``subsetStatuses`` and each revision's
    ``versionedSubsetStatuses`` (the ones the pod webhooks record in)."""
    status: JSON = ws.get("status") or {}  # type: ignore[assignment]
    versioned: dict[str, list[JSON]] = status.get("versionedSubsetStatuses") or {}  # type: ignore[assignment]
    overall: list[JSON] = status.get("subsetStatuses") or []  # type: ignore[assignment]
    return [*overall, *(e for entries in versioned.values() for e in entries)]


@dataclass
class Seen:
    """What a watch of ``spread`` saw: subset name -> every pod name its ``deletingPods`` ever held,
    and -> the most room (``missingReplicas``) any of its entries ever gave."""

    deleting: dict[str, set[str]] = field(default_factory=dict)
    room: dict[str, int] = field(default_factory=dict)


@contextlib.asynccontextmanager
async def deleting_seen(kube: KubeClient, namespace: str) -> AsyncIterator[Seen]:
    """Watch ``spread`` while the block runs (:class:`Seen`)."""
    seen = Seen()

    async def watch() -> None:
        start = (await kube.list(WORKLOADSPREADS, namespace))["metadata"]["resourceVersion"]
        async for event in kube.watch(WORKLOADSPREADS, namespace, resource_version=start):
            for status in subset_entries(event.object):
                subset = str(status["name"])
                seen.deleting.setdefault(subset, set()).update(status.get("deletingPods") or {})
                room = int(status.get("missingReplicas", 0))  # type: ignore[call-overload]
                seen.room[subset] = max(seen.room.get(subset, room), room)

    task = asyncio.create_task(watch())
    await asyncio.sleep(0.5)  # the watch is open before the first write it must see
    try:
        yield seen
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@pytest.mark.parametrize("how", ["delete", "evict"])
async def test_deleted_pod_is_recorded_and_replaced_in_its_subset(
    kube: KubeClient, namespace: str, pool: str, how: str
) -> None:
    """Upstream's pod validating webhook: deleting (or evicting) a zone-a pod of a Deployment under
    a WorkloadSpread records it in subset-a's ``deletingPods`` before that is admitted, so
    the ReplicaSet's replacement is admitted into subset-a (not the uncapped subset-b); the
    controller drops the record once the pod is gone. A pod without the matched annotation is
    deleted without being recorded (``vpod.kb.io`` is not even called for it)."""
    await spread_ready(kube, namespace, pool, [("subset-a", 2), ("subset-b", -1)])
    config = await kube.get(VALIDATING_WEBHOOKS, VALIDATING_NAME)
    (hook,) = [h for h in config["webhooks"] if h["name"] == "vpod.kb.io"]
    expression = " ".join(c["expression"] for c in hook.get("matchConditions") or [])
    assert f"'{MATCHED_ANNOTATION}' in oldObject.metadata.annotations" in expression

    async def evictions_in_scope() -> bool:
        config = await kube.get(VALIDATING_WEBHOOKS, VALIDATING_NAME)
        (hook,) = [h for h in config["webhooks"] if h["name"] == "vpodeviction.kb.io"]
        return f"'{namespace}'" in " ".join(c["expression"] for c in hook.get("matchConditions") or [])

    await eventually(evictions_in_scope, what="vpodeviction.kb.io's condition names this namespace")
    await kube.create(DEPLOYMENTS, workload("apps/v1", "Deployment", "web", pool, 3), namespace)

    async def placed(expected: dict[str, int]) -> dict[str, str] | None:
        zones = await zones_of_pods(kube, namespace, "web")
        return zones if zone_counts(zones) == expected else None

    zones = await eventually(lambda: placed({"a": 2, "b": 1}), timeout=60, what="2 pods in zone a, 1 in b")

    async def settled() -> bool:  # the admissions' creatingPods are gone: subset-a is full
        ws = await kube.get(WORKLOADSPREADS, "spread", namespace)
        entries = [e for e in subset_entries(ws) if e["name"] == "subset-a"]
        return all(e["missingReplicas"] == 0 and not e.get("creatingPods") for e in entries)

    await eventually(settled, what="subset-a full, its creations seen")
    victim = next(p for p, zone in sorted(zones.items()) if zone == "a")
    bare = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "bare", "labels": {"app": "bare"}},
        "spec": {
            "nodeSelector": {POOL: pool},
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "c", "image": "registry.example.com/web:1"}],
        },
    }
    await kube.create(PODS, bare, namespace)
    async with deleting_seen(kube, namespace) as seen:
        if how == "evict":
            await evict(kube, namespace, victim)
        else:
            await kube.delete(PODS, victim, namespace)
        after = await eventually(
            lambda: placed({"a": 2, "b": 1}), timeout=60, what="the replacement placed in zone a"
        )
        assert victim not in after and set(after) != set(zones)
        await kube.delete(PODS, "bare", namespace)

        async def bare_gone() -> bool:
            return await kube.get_or_none(PODS, "bare", namespace) is None

        await eventually(bare_gone, what="the pod without the annotation gone")

        async def dropped() -> bool:
            ws = await kube.get(WORKLOADSPREADS, "spread", namespace)
            return not any(s.get("deletingPods") for s in subset_entries(ws))

        await eventually(dropped, what="the deletion record dropped once its pod is gone")
    assert seen.deleting.get("subset-a") == {victim}
    assert not seen.deleting.get("subset-b")
    await assert_matched(kube, namespace, after, with_uid=True)


async def test_a_burst_of_deletions_is_recorded_whole(kube: KubeClient, namespace: str, pool: str) -> None:
    """Eight pods of a Deployment under two capped subsets (4 and 4) deleted at once: each DELETE
    is recorded in its subset's ``deletingPods`` and admitted (the webhook's writes to one
    WorkloadSpread take turns instead of conflicting each other out of their retries), and the
    replacements fill the subsets back to 4 and 4. No subset ever offers more room than its cap:
    the API server's second validation of each zero-grace DELETE, which carries the pod as it was
    before the first, does not record the deletion again once the controller has dropped it (a
    replacement admitted on that room would over-fill the subset)."""
    spread = workloadspread("spread", "web", cap_a=4, cap_b=4, pool=pool)
    await kube.create(WORKLOADSPREADS, spread, namespace)

    async def initialised() -> bool:
        ws = await kube.get(WORKLOADSPREADS, "spread", namespace)
        return len((ws.get("status") or {}).get("subsetStatuses") or []) == 2

    await eventually(initialised, what="the WorkloadSpread's subset statuses")
    await pod_webhook_in_scope(kube, namespace)
    await kube.create(DEPLOYMENTS, workload("apps/v1", "Deployment", "web", pool, 8), namespace)

    async def placed() -> dict[str, str] | None:
        zones = await zones_of_pods(kube, namespace, "web")
        return zones if zone_counts(zones) == {"a": 4, "b": 4} else None

    zones = await eventually(placed, timeout=60, what="4 pods in each zone")

    async def settled() -> bool:  # the admissions' creatingPods are gone
        ws = await kube.get(WORKLOADSPREADS, "spread", namespace)
        return not any(e.get("creatingPods") for e in subset_entries(ws))

    await eventually(settled, what="the creations seen by the controller")
    async with deleting_seen(kube, namespace) as seen:
        await asyncio.gather(*(kube.delete(PODS, pod, namespace) for pod in zones))
        after = await eventually(placed, timeout=60, what="8 replacements, 4 in each zone")
    assert not set(after) & set(zones)
    by_zone = {z: {p for p, pz in zones.items() if pz == z} for z in ("a", "b")}
    assert seen.deleting.get("subset-a") == by_zone["a"] and seen.deleting.get("subset-b") == by_zone["b"]
    assert set(seen.room) == {"subset-a", "subset-b"} and max(seen.room.values()) <= 4, seen.room


async def test_pods_created_before_the_workloadspread_are_adopted_by_their_nodes_zone(
    kube: KubeClient, namespace: str, pool: str
) -> None:
    """Upstream's controller adopts the target's pods that have no matched annotation: each goes
    to the subset its node fits (zone a or b), gets the annotation, and the status counts it."""
    await kube.create(DEPLOYMENTS, workload("apps/v1", "Deployment", "web", pool, 4), namespace)

    async def bound() -> dict[str, str] | None:
        zones = await zones_of_pods(kube, namespace, "web")
        return zones if len(zones) == 4 and all(zones.values()) else None

    zones = await eventually(bound, timeout=60, what="4 pods bound before the WorkloadSpread")
    for pod_name in zones:
        pod = await kube.get(PODS, pod_name, namespace)
        assert MATCHED_ANNOTATION not in (pod["metadata"].get("annotations") or {})
    counts = zone_counts(zones)
    await kube.create(WORKLOADSPREADS, workloadspread("spread", "web", pool=pool), namespace)

    async def counted() -> list[tuple[str, int, int]] | None:
        ws = await kube.get(WORKLOADSPREADS, "spread", namespace)
        statuses = (ws.get("status") or {}).get("subsetStatuses") or []
        got = [(s["name"], s["replicas"], s["missingReplicas"]) for s in statuses]
        return got if sum(r for _, r, _ in got) == 4 else None

    statuses = await eventually(counted, timeout=60, what="the 4 pods counted in the subsets")
    a, b = counts.get("a", 0), counts.get("b", 0)
    assert statuses == [("subset-a", a, max(2 - a, 0)), ("subset-b", b, -1)]
    await assert_matched(kube, namespace, zones, with_uid=False)


async def test_target_filter_selects_the_pods_and_gives_the_replicas(
    kube: KubeClient, namespace: str, pool: str
) -> None:
    """Upstream's ``targetFilter``: the selector picks the pods spread (here all of ``web``'s) and
    ``replicasPathList`` the replicas percentages resolve against: ``spec.minReadySeconds`` 2, so
    zone a's 50% is 1 pod (not 3 of 6) and the other 5 go to zone b."""
    spread = workloadspread("spread", "web", cap_a="50%", pool=pool)
    spread["spec"]["targetFilter"] = {  # type: ignore[index]
        "selector": {"matchLabels": {"app": "web"}},
        "replicasPathList": ["spec.minReadySeconds"],
    }
    await kube.create(WORKLOADSPREADS, spread, namespace)
    deployment = workload("apps/v1", "Deployment", "web", pool, 0)  # scaled up once in scope
    deployment["spec"]["minReadySeconds"] = 2  # type: ignore[index]
    await kube.create(DEPLOYMENTS, deployment, namespace)

    async def initialised() -> bool:
        ws = await kube.get(WORKLOADSPREADS, "spread", namespace)
        statuses = (ws.get("status") or {}).get("subsetStatuses") or []
        return [(s["name"], s["missingReplicas"]) for s in statuses][:1] == [("subset-a", 1)]

    await eventually(initialised, what="subset-a's room from the filtered replicas (50% of 2)")
    await pod_webhook_in_scope(kube, namespace)
    await kube.patch(DEPLOYMENTS, "web", {"spec": {"replicas": 6}}, namespace, patch_type="merge")

    async def placed() -> dict[str, str] | None:
        zones = await zones_of_pods(kube, namespace, "web")
        return zones if zone_counts(zones) == {"a": 1, "b": 5} else None

    zones = await eventually(placed, timeout=60, what="1 pod in zone a, 5 in b")
    await assert_matched(kube, namespace, zones, with_uid=True)


@pytest.fixture
async def zone_b_only(kube: KubeClient) -> AsyncIterator[str]:
    """Two KWOK nodes in zone b and none in zone a: a pod placed in zone a cannot be scheduled."""
    async with zoned_pool(kube, POOL, {"b": 2}) as prefix:
        yield prefix


async def test_adaptive_reschedules_pods_stuck_in_a_full_subset(
    kube: KubeClient, namespace: str, zone_b_only: str
) -> None:
    """Upstream's Adaptive strategy: subset-a's pods stay Pending (no zone-a node), so after
    ``rescheduleCriticalSeconds`` the controller marks subset-a ``Schedulable=False``
    (``PodUnschedulable``) and deletes them; their replacements skip subset-a and land in zone b.
    The last subset is never marked unschedulable."""
    strategy = {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 2}}
    await spread_ready(kube, namespace, zone_b_only, [("subset-a", 2), ("subset-b", -1)], strategy=strategy)
    await kube.create(DEPLOYMENTS, workload("apps/v1", "Deployment", "web", zone_b_only, 4), namespace)

    async def all_in_b() -> dict[str, str] | None:
        zones = await zones_of_pods(kube, namespace, "web")
        return zones if zone_counts(zones) == {"b": 4} else None

    zones = await eventually(all_in_b, timeout=90, what="every pod rescheduled into zone b")
    await assert_matched(kube, namespace, zones, with_uid=True)
    ws = await kube.get(WORKLOADSPREADS, "spread", namespace)
    conditions = {
        s["name"]: [(c["type"], c["status"], c["reason"]) for c in s.get("conditions") or []]
        for s in ws["status"]["subsetStatuses"]
    }
    assert conditions == {
        "subset-a": [("Schedulable", "False", "PodUnschedulable")],
        "subset-b": [("Schedulable", "True", "Sufficient")],
    }
