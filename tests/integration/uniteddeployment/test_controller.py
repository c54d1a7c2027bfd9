"""The UnitedDeployment controller on the real control plane (CloneSet subsets): one CloneSet per
subset, named and labelled as upstream's, replicas from the allocation; scaling through ``/scale``
re-allocates; a removed subset's CloneSet goes; status sums the subsets."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, CONTROLLER_REVISIONS, PODS, STATEFULSETS, UNITEDDEPLOYMENTS
from tests.support.nodes import NodePool
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")
JSON = dict[str, Any]
SUBSET = "apps.kruise.io/subset-name"
REVISION = "apps.kruise.io/controller-revision-hash"
RESERVED = "apps.kruise.io/united-deployment-reserved-pod"


def united(replicas: int = 6) -> JSON:
    labels = {"app": "shop"}
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "UnitedDeployment",
        "metadata": {"name": "shop"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "cloneSetTemplate": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "selector": {"matchLabels": labels},
                        "template": {
                            "metadata": {"labels": labels},
                            "spec": {"containers": [{"name": "web", "image": "registry.example.com/web:1"}]},
                        },
                    },
                }
            },
            "topology": {
                "subsets": [
                    {
                        "name": "subset-a",
                        "replicas": 1,
                        "nodeSelectorTerm": {
                            "matchExpressions": [
                                {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}
                            ]
                        },
                    },
                    {"name": "subset-b", "replicas": "50%", "patch": {"metadata": {"labels": {"zone": "b"}}}},
                    {"name": "subset-c"},
                ]
            },
        },
    }


async def subsets(kube: KubeClient, namespace: str) -> dict[str, JSON]:
    found = await kube.list(CLONESETS, namespace)
    return {
        cs["metadata"]["labels"][SUBSET]: cs
        for cs in found["items"]
        if not cs["metadata"].get("deletionTimestamp")
    }


async def replicas_by_subset(kube: KubeClient, namespace: str) -> dict[str, int]:
    return {name: cs["spec"]["replicas"] for name, cs in (await subsets(kube, namespace)).items()}


async def test_subset_clonesets_follow_the_topology(kube: KubeClient, namespace: str) -> None:
    ud = await kube.create(UNITEDDEPLOYMENTS, united(), namespace)

    async def allocated() -> dict[str, int] | None:
        got = await replicas_by_subset(kube, namespace)
        return got if got == {"subset-a": 1, "subset-b": 3, "subset-c": 2} else None

    await eventually(allocated, timeout=60, what="three subset CloneSets 1/3/2")
    by_subset = await subsets(kube, namespace)
    a = by_subset["subset-a"]
    assert a["metadata"]["name"].startswith("shop-subset-a-")
    assert a["metadata"]["ownerReferences"][0]["uid"] == ud["metadata"]["uid"]
    assert a["spec"]["selector"]["matchLabels"] == {"app": "shop", SUBSET: "subset-a"}
    term = a["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert term["nodeSelectorTerms"][0]["matchExpressions"][0]["key"] == "kubernetes.io/os"
    revision = a["metadata"]["labels"][REVISION]
    b = by_subset["subset-b"]
    assert b["spec"]["template"]["metadata"]["labels"]["zone"] == "b", "subset-b's patch is applied"
    assert (
        b["metadata"]["annotations"]["apps.kruise.io/subset-patch"] == '{"metadata":{"labels":{"zone":"b"}}}'
    )
    assert "zone" not in a["spec"]["template"]["metadata"]["labels"]
    assert a["spec"]["template"]["metadata"]["labels"][REVISION] == revision

    async def summed() -> JSON | None:
        got = await kube.get(UNITEDDEPLOYMENTS, "shop", namespace)
        status = got.get("status") or {}
        allocated = status.get("subsetReplicas") == {"subset-a": 1, "subset-b": 3, "subset-c": 2}
        return got if allocated and status.get("replicas") == 6 else None

    stored = await eventually(summed, timeout=60, what="status.subsetReplicas and the subsets' 6 pods")
    status = stored["status"]
    assert status["updateStatus"]["updatedRevision"] == revision
    assert status["labelSelector"] == "app=shop"
    assert {c["type"]: c["status"] for c in status["conditions"]} == {
        "SubsetProvisioned": "True",
        "SubsetUpdated": "True",
        "UnitedDeploymentUpdated": "True",
    }

    # HPA's door: /scale re-allocates (50% of 8 is 4, the rest 3)
    scale = {"spec": {"replicas": 8}}
    await kube.patch(UNITEDDEPLOYMENTS, "shop", scale, namespace, patch_type="merge", subresource="scale")

    async def rescaled() -> bool:
        return await replicas_by_subset(kube, namespace) == {"subset-a": 1, "subset-b": 4, "subset-c": 3}

    await eventually(rescaled, timeout=60, what="re-allocation after /scale")

    # a subset removed from the topology loses its CloneSet; the rest take its replicas
    kept = united()["spec"]["topology"]["subsets"][:2]
    kept[1].pop("replicas")
    await kube.patch(
        UNITEDDEPLOYMENTS, "shop", {"spec": {"topology": {"subsets": kept}}}, namespace, patch_type="merge"
    )

    async def shrunk() -> bool:
        return await replicas_by_subset(kube, namespace) == {"subset-a": 1, "subset-b": 7}

    await eventually(shrunk, timeout=60, what="subset-c deleted, subset-b takes the rest")


async def test_template_change_moves_every_subset_to_the_new_revision(
    kube: KubeClient, namespace: str
) -> None:
    await kube.create(UNITEDDEPLOYMENTS, united(), namespace)

    async def revisions() -> set[str] | None:
        got = await subsets(kube, namespace)
        return {cs["metadata"]["labels"][REVISION] for cs in got.values()} if len(got) == 3 else None

    (first,) = await eventually(revisions, timeout=60, what="three subsets")
    template = united()["spec"]["template"]
    template["cloneSetTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"] = (
        "registry.example.com/web:2"
    )
    await kube.patch(
        UNITEDDEPLOYMENTS, "shop", {"spec": {"template": template}}, namespace, patch_type="merge"
    )

    async def moved() -> bool:
        got = await subsets(kube, namespace)
        images = {cs["spec"]["template"]["spec"]["containers"][0]["image"] for cs in got.values()}
        labels = {cs["metadata"]["labels"][REVISION] for cs in got.values()}
        return images == {"registry.example.com/web:2"} and len(labels) == 1 and first not in labels

    await eventually(moved, timeout=60, what="every subset CloneSet at the new revision")


async def test_adaptive_moves_unschedulable_pods_to_the_next_subset(kube: KubeClient, namespace: str) -> None:
    """Upstream's e2e "adaptive united deployment basic": subset-a's pods can never be scheduled
    (no node has its zone); after rescheduleCriticalSeconds they move to subset-b."""
    body = united(4)
    body["spec"]["topology"] = {
        "scheduleStrategy": {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 3}},
        "subsets": [
            {
                "name": "subset-a",
                "maxReplicas": 2,
                "nodeSelectorTerm": {
                    "matchExpressions": [{"key": "kruise-test/zone", "operator": "In", "values": ["nowhere"]}]
                },
            },
            {"name": "subset-b"},
        ],
    }
    await kube.create(UNITEDDEPLOYMENTS, body, namespace)

    async def moved() -> bool:
        return await replicas_by_subset(kube, namespace) == {"subset-a": 0, "subset-b": 4}

    await eventually(moved, timeout=90, what="subset-a's unschedulable pods moved to subset-b")

    async def marked() -> JSON | None:
        stored = await kube.get(UNITEDDEPLOYMENTS, "shop", namespace)
        statuses = {s["name"]: s for s in (stored.get("status") or {}).get("subsetStatuses") or []}
        conditions = statuses.get("subset-a", {}).get("conditions") or []
        return conditions[0] if conditions else None

    # the status is written after the subsets in the same round
    condition = await eventually(marked, timeout=30, what="subset-a's Schedulable condition")
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "Schedulable",
        "False",
        "reschedule",
    )
    assert condition["message"] == "timeout pending pods found"


async def test_an_orphan_subset_cloneset_is_adopted_and_a_strayed_one_released(
    kube: KubeClient, namespace: str
) -> None:
    """Upstream's ClaimOwnedObjects: an orphan CloneSet selected by the UnitedDeployment and
    labelled for subset-a becomes subset-a's (no second one is made); one relabelled away is let go."""
    template = united()["spec"]["template"]["cloneSetTemplate"]
    orphan = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "shop-subset-a-old", "labels": {"app": "shop", SUBSET: "subset-a"}},
        "spec": {**template["spec"], "replicas": 1},
    }
    await kube.create(CLONESETS, orphan, namespace)
    ud = await kube.create(UNITEDDEPLOYMENTS, united(), namespace)

    async def adopted() -> JSON | None:
        got = await subsets(kube, namespace)
        if len(got) != 3 or got["subset-a"]["metadata"]["name"] != "shop-subset-a-old":
            return None
        refs = got["subset-a"]["metadata"].get("ownerReferences") or []
        return got if [r["uid"] for r in refs] == [ud["metadata"]["uid"]] else None

    await eventually(adopted, timeout=60, what="the orphan adopted as subset-a, three subsets in all")
    await kube.patch(
        CLONESETS,
        "shop-subset-a-old",
        {"metadata": {"labels": {"app": "gone"}}},
        namespace,
        patch_type="merge",
    )

    async def released() -> bool:
        stray = await kube.get(CLONESETS, "shop-subset-a-old", namespace)
        return not stray["metadata"].get("ownerReferences")

    await eventually(released, timeout=60, what="the relabelled CloneSet released")


async def test_advanced_statefulset_subsets(kube: KubeClient, namespace: str) -> None:
    """An ``advancedStatefulSetTemplate`` makes one Advanced StatefulSet per subset, the partition in
    ``rollingUpdate``; switching the template to a CloneSet one replaces them with CloneSets."""
    body = united(3)
    cloneset_template = body["spec"]["template"].pop("cloneSetTemplate")
    body["spec"]["template"]["advancedStatefulSetTemplate"] = {
        "metadata": {"labels": {"app": "shop"}},
        "spec": {**cloneset_template["spec"], "serviceName": "shop"},
    }
    body["spec"]["topology"]["subsets"] = [{"name": "subset-a", "replicas": 1}, {"name": "subset-b"}]
    body["spec"]["updateStrategy"] = {"type": "Manual", "manualUpdate": {"partitions": {"subset-b": 1}}}
    await kube.create(UNITEDDEPLOYMENTS, body, namespace)

    async def made() -> dict[str, JSON] | None:
        found = await kube.list(STATEFULSETS, namespace)
        got = {s["metadata"]["labels"][SUBSET]: s for s in found["items"]}
        return (
            got
            if {n: s["spec"]["replicas"] for n, s in got.items()} == {"subset-a": 1, "subset-b": 2}
            else None
        )

    sets = await eventually(made, timeout=60, what="two Advanced StatefulSets 1/2")
    assert sets["subset-b"]["spec"]["updateStrategy"]["rollingUpdate"]["partition"] == 1
    assert sets["subset-b"]["metadata"]["name"].startswith("shop-subset-b-")

    await kube.patch(
        UNITEDDEPLOYMENTS,
        "shop",
        {"spec": {"template": {"advancedStatefulSetTemplate": None, "cloneSetTemplate": cloneset_template}}},
        namespace,
        patch_type="merge",
    )

    async def switched() -> bool:
        left = [
            s
            for s in (await kube.list(STATEFULSETS, namespace))["items"]
            if not s["metadata"].get("deletionTimestamp")
        ]
        return not left and await replicas_by_subset(kube, namespace) == {"subset-a": 1, "subset-b": 2}

    await eventually(switched, timeout=60, what="CloneSets in place of the Advanced StatefulSets")


async def test_elastic_allocation_fills_minimums_then_maximums(kube: KubeClient, namespace: str) -> None:
    """Upstream's e2e "united deployment with elastic allocator" and its doc example: 5 replicas,
    subset-a 2..4, subset-b from 2 unbounded -> 3 and 2; scaled to 9 -> 4 and 5."""
    body = united(5)
    body["spec"]["topology"]["subsets"] = [
        {"name": "subset-a", "minReplicas": 2, "maxReplicas": 4},
        {"name": "subset-b", "minReplicas": 2},
    ]
    await kube.create(UNITEDDEPLOYMENTS, body, namespace)

    async def allocated(want: dict[str, int]) -> bool:
        return await replicas_by_subset(kube, namespace) == want

    await eventually(lambda: allocated({"subset-a": 3, "subset-b": 2}), timeout=60, what="3 and 2")
    await kube.patch(UNITEDDEPLOYMENTS, "shop", {"spec": {"replicas": 9}}, namespace, patch_type="merge")
    await eventually(lambda: allocated({"subset-a": 4, "subset-b": 5}), timeout=60, what="4 and 5")


async def test_template_history_is_kept_trimmed_and_rolled_back(kube: KubeClient, namespace: str) -> None:
    """Upstream revision.go: each template is a ControllerRevision ``shop-<hash>`` owned by the
    UnitedDeployment; the status and the subsets name the newest; history beyond
    ``revisionHistoryLimit`` goes once not live; going back to a template still in the history
    bumps that revision's number instead of creating one."""
    body = united()
    body["spec"]["revisionHistoryLimit"] = 2
    ud = await kube.create(UNITEDDEPLOYMENTS, body, namespace)

    async def history() -> dict[str, JSON]:
        found = await kube.list(CONTROLLER_REVISIONS, namespace)
        return {
            r["metadata"]["name"]: r
            for r in found["items"]
            if r["metadata"]["ownerReferences"][0]["uid"] == ud["metadata"]["uid"]
        }

    async def settled_on(image: str) -> tuple[str, dict[str, JSON]] | None:
        """The revision every subset and the status name once the template ``image`` is rolled
        out and current, with the history then."""
        got = await subsets(kube, namespace)
        images = {cs["spec"]["template"]["spec"]["containers"][0]["image"] for cs in got.values()}
        labels = {cs["metadata"]["labels"][REVISION] for cs in got.values()}
        status = (await kube.get(UNITEDDEPLOYMENTS, "shop", namespace)).get("status") or {}
        updated = (status.get("updateStatus") or {}).get("updatedRevision")
        if (
            len(got) != 3
            or images != {image}
            or labels != {updated}
            or status.get("currentRevision") != updated
        ):
            return None
        revisions = await history()
        return (updated, revisions) if updated in revisions else None

    async def set_image(tag: str) -> None:
        template = united()["spec"]["template"]
        template["cloneSetTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"] = (
            f"registry.example.com/web:{tag}"
        )
        await kube.patch(
            UNITEDDEPLOYMENTS, "shop", {"spec": {"template": template}}, namespace, patch_type="merge"
        )

    first, revisions = await eventually(
        lambda: settled_on("registry.example.com/web:1"), timeout=90, what="revision 1 everywhere"
    )
    assert list(revisions) == [first]
    r1 = revisions[first]
    assert r1["revision"] == 1
    assert first == f"shop-{r1['metadata']['labels']['controller.kubernetes.io/hash']}"
    assert r1["metadata"]["labels"]["app"] == "shop"
    owner = r1["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["uid"], owner["controller"]) == (
        "UnitedDeployment",
        ud["metadata"]["uid"],
        True,
    )
    assert r1["data"]["spec"]["template"]["$patch"] == "replace"

    # an orphaned revision matching the selector is adopted back, not hashed around (controlledHistories)
    orphaned = {"metadata": {"ownerReferences": [], "resourceVersion": r1["metadata"]["resourceVersion"]}}
    await kube.patch(CONTROLLER_REVISIONS, first, orphaned, namespace, patch_type="merge")

    async def adopted() -> JSON | None:
        found = await kube.get(CONTROLLER_REVISIONS, first, namespace)
        refs = found["metadata"].get("ownerReferences") or []
        return found if [r["uid"] for r in refs] == [ud["metadata"]["uid"]] else None

    await eventually(adopted, timeout=60, what="the orphaned revision adopted again")
    assert list(await history()) == [first]
    stored = await kube.get(UNITEDDEPLOYMENTS, "shop", namespace)
    assert "collisionCount" not in stored["status"], "no second name was needed"

    names = [first]
    for tag in ("2", "3", "4"):
        await set_image(tag)
        latest, revisions = await eventually(
            lambda tag=tag: settled_on(f"registry.example.com/web:{tag}"),
            timeout=90,
            what=f"web:{tag} rolled out",
        )
        assert latest not in names and revisions[latest]["revision"] == len(names) + 1
        names.append(latest)

    async def trimmed() -> dict[str, JSON] | None:
        revisions = await history()
        return revisions if set(revisions) == set(names[-2:]) else None

    revisions = await eventually(trimmed, timeout=60, what="the history trimmed to the last 2 revisions")

    # roll back to web:3, still in the history: that revision becomes number 5
    await set_image("3")
    back, revisions = await eventually(
        lambda: settled_on("registry.example.com/web:3"), timeout=90, what="web:3 rolled back"
    )
    assert back == names[2]
    assert revisions[back]["revision"] == 5
    assert set(revisions) == set(names[-2:]), "no new revision for a template already in the history"


async def test_reservation_keeps_unschedulable_pods_reserved_and_adds_substitutes(
    kube: KubeClient, namespace: str
) -> None:
    """Upstream's e2e "adaptive united deployment with unschedulable pods reserved": subsets 0
    and 1 select a node label no node has yet; after rescheduleCriticalSeconds their pods are
    labelled reserved and stay, and subset-2 gets temporary substitutes; scaling goes to subset-2
    only. Reserved pods are counted apart and left out of the HPA selector. Once a node of the
    test's pool takes subset-0's label, its pods start, leave the reservation after
    unschedulableDuration and subset-0 takes every replica back (4/0/0, nothing reserved)."""
    pool = NodePool(kube)
    try:
        await _reservation_scenario(kube, namespace, pool)
    finally:
        await pool.close()


async def _reservation_scenario(kube: KubeClient, namespace: str, pool: NodePool) -> None:
    enabled = {n: f"kruise-test/{pool.prefix}-subset-{n}" for n in (0, 1)}
    (node,) = await pool.add_nodes(1, {enabled[0]: "false", enabled[1]: "false"})
    body = united(2)
    body["spec"]["topology"] = {
        "scheduleStrategy": {
            "type": "Adaptive",
            "adaptive": {
                "reserveUnschedulablePods": True,
                "rescheduleCriticalSeconds": 3,
                "unschedulableDuration": 1,
            },
        },
        "subsets": [
            *(
                {
                    "name": f"subset-{n}",
                    "nodeSelectorTerm": {
                        "matchExpressions": [{"key": enabled[n], "operator": "In", "values": ["true"]}]
                    },
                }
                for n in (0, 1)
            ),
            {"name": "subset-2"},
        ],
    }
    await kube.create(UNITEDDEPLOYMENTS, body, namespace)

    async def reserved_by_subset() -> dict[str, int]:
        found = await kube.list(PODS, namespace)
        counts = {"subset-0": 0, "subset-1": 0, "subset-2": 0}
        for pod in found["items"]:
            labels = pod["metadata"].get("labels") or {}
            if pod["metadata"].get("deletionTimestamp") or labels.get(SUBSET) not in counts:
                continue
            counts[labels[SUBSET]] += labels.get(RESERVED) == "true"
        return counts

    async def settled(replicas: tuple[int, int, int], reserved: tuple[int, int, int]) -> JSON | None:
        names = ("subset-0", "subset-1", "subset-2")
        if await replicas_by_subset(kube, namespace) != dict(zip(names, replicas, strict=True)):
            return None
        if await reserved_by_subset() != dict(zip(names, reserved, strict=True)):
            return None
        stored = await kube.get(UNITEDDEPLOYMENTS, "shop", namespace)
        status = stored.get("status") or {}
        counted = status.get("replicas") == sum(replicas) - sum(reserved)
        return stored if counted and status.get("reservedPods", 0) == sum(reserved) else None

    async def scale(replicas: int) -> None:
        await kube.patch(
            UNITEDDEPLOYMENTS, "shop", {"spec": {"replicas": replicas}}, namespace, patch_type="merge"
        )

    stored = await eventually(lambda: settled((2, 2, 2), (2, 2, 0)), timeout=120, what="2/2/2, 4 reserved")
    status = stored["status"]
    statuses = {s["name"]: s for s in status["subsetStatuses"]}
    for name in ("subset-0", "subset-1"):
        condition = statuses[name]["conditions"][0]
        assert (condition["type"], condition["status"]) == ("Schedulable", "False")
        assert statuses[name]["reservedPods"] == 2
    assert statuses["subset-2"]["conditions"][0]["status"] == "True"
    assert "reservedPods" not in statuses["subset-2"]
    assert status["replicas"] == 2, "the 4 reserved pods are not counted"
    assert status["labelSelector"] == f"app=shop,{RESERVED}=false"
    pods = (await kube.list(PODS, namespace))["items"]
    substitutes = [p for p in pods if p["metadata"]["labels"].get(SUBSET) == "subset-2"]
    assert {p["metadata"]["labels"].get(RESERVED) for p in substitutes} == {"false"}

    # an unschedulable subset's rolling update may take all its unready pods (SetMaxUnavailable)
    async def raised() -> bool:
        found = await subsets(kube, namespace)
        return found["subset-0"]["spec"]["updateStrategy"].get("maxUnavailable") == 2

    await eventually(raised, timeout=30, what="subset-0's maxUnavailable raised to 2")

    await scale(4)
    await eventually(lambda: settled((2, 2, 4), (2, 2, 0)), timeout=120, what="scale-up to subset-2")
    await scale(2)
    await eventually(lambda: settled((2, 2, 2), (2, 2, 0)), timeout=120, what="scale-down in subset-2")
    await scale(4)
    await eventually(lambda: settled((2, 2, 4), (2, 2, 0)), timeout=120, what="scale-up again")

    await pool.label(node, {enabled[0]: "true"})
    stored = await eventually(
        lambda: settled((4, 0, 0), (0, 0, 0)), timeout=180, what="subset-0 recovered: 4/0/0"
    )
    conditions = {s["name"]: s["conditions"][0]["status"] for s in stored["status"]["subsetStatuses"]}
    assert conditions == {"subset-0": "True", "subset-1": "True", "subset-2": "True"}
