"""One test per ``It`` of upstream's e2e ``test/e2e/apps/v1alpha1/workloadspread.go`` (three of
them live in test_workloadspread.py: "elastic deployment, zone-a=2, zone-b=nil", "reschedule
subset-a" and "manage the pods that were created before workloadspread"). Each builds the same
WorkloadSpread and workload on KWOK nodes of two zones (kube-scheduler binds the pods) and
asserts the facts upstream asserts: pods per subset, the matched annotation, the injected
required node term, the subset's patch, the deletion cost and the subset statuses."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import AsyncIterator

import pytest

from kruise.core.errors import ApiError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import (
    CLONESETS,
    CONFIGMAPS,
    CRDS,
    DAEMONSETS,
    DEPLOYMENTS,
    NODES,
    PODS,
    SERVICES,
    STATEFULSETS,
    Resource,
)
from kruise.workloads.api.workloadspread import MATCHED_ANNOTATION, WORKLOADSPREADS
from kruise.workloads.workloadspread.subsets import DELETION_COST_ANNOTATION
from tests.integration.workloadspread.test_workloadspread import POOL, ZONE, pod_webhook_in_scope, workload
from tests.support.nodes import zoned_pool
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")
JSON = dict[str, object]
PRIORITY_CLASSES = Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass")
CLONESET = ("apps.kruise.io/v1alpha1", "CloneSet")
IMAGE_2 = "registry.example.com/web:2"


@pytest.fixture
async def pool(kube: KubeClient) -> AsyncIterator[str]:
    """Upstream's nodes: one worker in zone a, two in zone b (labelled with this pool's label)."""
    async with zoned_pool(kube, POOL, {"a": 1, "b": 2}) as prefix:
        yield prefix


def zone_term(zone: str) -> JSON:
    return {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}


def subset(name: str, *, zone: str | None = None, cap: object = None, patch: JSON | None = None) -> JSON:
    """A subset; ``zone`` its required node term, ``patch`` (default: annotation ``subset:
    <name>``) its patch, ``cap`` its maxReplicas (None: unlimited)."""
    out: JSON = {"name": name, "patch": patch or {"metadata": {"annotations": {"subset": name}}}}
    if zone is not None:
        out["requiredNodeSelectorTerm"] = zone_term(zone)
    if cap is not None:
        out["maxReplicas"] = cap
    return out


async def create_spread(
    kube: KubeClient, namespace: str, target: tuple[str, str], subsets: list[JSON], *, scope: bool = True
) -> JSON:
    """WorkloadSpread ``spread`` on workload ``web``, once its statuses exist and (``scope``) the
    mutating pod webhook sees it."""
    api_version, kind = target
    ws: JSON = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": "spread"},
        "spec": {"targetRef": {"apiVersion": api_version, "kind": kind, "name": "web"}, "subsets": subsets},
    }
    created = await kube.create(WORKLOADSPREADS, ws, namespace)

    async def initialised() -> bool:
        got = await kube.get(WORKLOADSPREADS, "spread", namespace)
        return len((got.get("status") or {}).get("subsetStatuses") or []) == len(subsets)

    await eventually(initialised, what="the WorkloadSpread's subset statuses")
    if scope:
        await pod_webhook_in_scope(kube, namespace)
    return created


def matched_subset(pod: JSON) -> str | None:
    raw = (pod["metadata"].get("annotations") or {}).get(MATCHED_ANNOTATION)  # type: ignore[attr-defined]
    return None if raw is None else str(json.loads(raw)["subset"])


async def live_pods(kube: KubeClient, namespace: str) -> list[JSON]:
    pods = (await kube.list(PODS, namespace, label_selector="app=web"))["items"]
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")]


def statuses(ws: JSON) -> list[tuple[str, int, int, int, int]]:
    """(name, replicas, missingReplicas, len(creatingPods), len(deletingPods)) per subset."""
    return [
        (
            s["name"],
            s.get("replicas", 0),
            s["missingReplicas"],
            len(s.get("creatingPods") or {}),
            len(s.get("deletingPods") or {}),
        )
        for s in (ws.get("status") or {}).get("subsetStatuses") or []  # type: ignore[attr-defined]
    ]


async def settle(
    kube: KubeClient,
    namespace: str,
    per_subset: dict[str | None, int],
    *,
    image: str | None = None,
    status: list[tuple[str, int, int, int, int]] | None = None,
    check: tuple[list[JSON], dict[str, str] | None] | None = None,
) -> list[JSON]:
    """Wait until ``web``'s live pods are all bound (and run ``image``), ``per_subset`` of them
    (None: unmatched) in each subset, (``status``) the WorkloadSpread's statuses equal it and
    (``check``: subsets, costs) :func:`assert_pods` holds."""

    async def settled() -> list[JSON]:
        pods = await live_pods(kube, namespace)
        assert all(p["spec"].get("nodeName") for p in pods), "unbound pods"
        if image:
            assert all(c["image"] == image for p in pods for c in p["spec"]["containers"]), "old image"
        counts = Counter(matched_subset(p) for p in pods)
        assert counts == Counter(per_subset), (
            f"per subset {counts}: {[(p['spec']['nodeName'], matched_subset(p)) for p in pods]}"
        )
        if status is not None:
            got = statuses(await kube.get(WORKLOADSPREADS, "spread", namespace))
            assert got == status, f"statuses {got}"
        if check is not None:
            await assert_pods(kube, pods, *check)
        return pods

    return await eventually(settled, timeout=90, what=f"pods per subset {per_subset}, statuses {status}")


async def assert_pods(
    kube: KubeClient, pods: list[JSON], subsets: list[JSON], costs: dict[str, str] | None
) -> None:
    """Upstream's per-pod checks: a matched pod names ``spread``, carries its subset's required
    term as its first node selector term, its patch and deletion cost ``costs[subset]``, and is
    bound in the subset's zone; an unmatched pod has no deletion cost. ``costs`` None: not
    checked (upstream checks none for a StatefulSet)."""
    by_name = {str(s["name"]): s for s in subsets}
    for pod in pods:
        annotations: dict[str, str] = pod["metadata"].get("annotations") or {}  # type: ignore[attr-defined]
        name = matched_subset(pod)
        if name is None:
            assert DELETION_COST_ANNOTATION not in annotations
            continue
        assert json.loads(annotations[MATCHED_ANNOTATION])["name"] == "spread"
        if costs is not None:
            assert annotations.get(DELETION_COST_ANNOTATION) == costs[name]
        assert annotations["subset"] == name
        term = by_name[name].get("requiredNodeSelectorTerm")
        if term is not None:
            spec: dict[str, object] = pod["spec"]  # type: ignore[assignment]
            node_affinity = spec["affinity"]["nodeAffinity"]  # type: ignore[index]
            first = node_affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
            assert first["matchExpressions"] == term["matchExpressions"]  # type: ignore[index]
            node = await kube.get(NODES, str(spec["nodeName"]))
            assert [node["metadata"]["labels"][ZONE]] == term["matchExpressions"][0]["values"]  # type: ignore[index]


def preferring_zone_b(obj: JSON) -> JSON:
    """``obj`` (a workload) with its pod template preferring zone b (weight 100)."""
    preferred = [{"weight": 100, "preference": zone_term("b")}]
    obj["spec"]["template"]["spec"]["affinity"] = {  # type: ignore[index]
        "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}
    }
    return obj


async def update_spread(kube: KubeClient, namespace: str, subsets: list[JSON]) -> None:
    """Replace the subsets and wait for the controller to observe the new generation (as
    upstream's ``UpdateWorkloadSpread``)."""
    await kube.patch(WORKLOADSPREADS, "spread", {"spec": {"subsets": subsets}}, namespace, patch_type="merge")

    async def observed() -> bool:
        ws = await kube.get(WORKLOADSPREADS, "spread", namespace)
        return bool((ws.get("status") or {}).get("observedGeneration") == ws["metadata"]["generation"])

    await eventually(observed, what="the WorkloadSpread's new generation observed")


async def set_image(kube: KubeClient, res: Resource, namespace: str, image: str) -> None:
    containers = [{"name": "web", "image": image}]
    patch = {"spec": {"template": {"spec": {"containers": containers}}}}
    await kube.patch(res, "web", patch, namespace, patch_type="merge")


async def scale(kube: KubeClient, res: Resource, namespace: str, replicas: int) -> None:
    await kube.patch(res, "web", {"spec": {"replicas": replicas}}, namespace, patch_type="merge")


async def test_deploy_in_two_zone_the_type_of_max_replicas_is_integer(
    kube: KubeClient, namespace: str, pool: str
) -> None:
    """CloneSet of 6 under zone-a=3, zone-b=3: 3 pods each (costs 200, 100); the same after an
    image update; caps 2/2 and 4 replicas: 2 each; caps 4/4 and 8 replicas: 4 each."""
    subsets = [subset("zone-a", zone="a", cap=3), subset("zone-b", zone="b", cap=3)]
    await create_spread(kube, namespace, CLONESET, subsets)
    await kube.create(CLONESETS, workload(*CLONESET, "web", pool, 6), namespace)
    costs = {"zone-a": "200", "zone-b": "100"}

    def even(n: int) -> list[tuple[str, int, int, int, int]]:
        return [("zone-a", n, 0, 0, 0), ("zone-b", n, 0, 0, 0)]

    await settle(kube, namespace, {"zone-a": 3, "zone-b": 3}, status=even(3), check=(subsets, costs))
    await set_image(kube, CLONESETS, namespace, IMAGE_2)
    await settle(
        kube, namespace, {"zone-a": 3, "zone-b": 3}, image=IMAGE_2, status=even(3), check=(subsets, costs)
    )
    for cap, replicas in ((2, 4), (4, 8)):
        await update_spread(kube, namespace, [{**s, "maxReplicas": cap} for s in subsets])
        await scale(kube, CLONESETS, namespace, replicas)
        await settle(
            kube, namespace, {"zone-a": cap, "zone-b": cap}, status=even(cap), check=(subsets, costs)
        )


@pytest.fixture
async def priority_class(kube: KubeClient) -> AsyncIterator[str]:
    """A PriorityClass of value 100 (cluster-scoped: a unique name, deleted afterwards)."""
    name = f"ws-priority-{uuid.uuid4().hex[:6]}"
    await kube.create(PRIORITY_CLASSES, {"metadata": {"name": name}, "value": 100, "globalDefault": False})
    try:
        yield name
    finally:
        await kube.delete(PRIORITY_CLASSES, name, missing_ok=True)


async def test_only_one_subset_zone_a_nil(
    kube: KubeClient, namespace: str, pool: str, priority_class: str
) -> None:
    """One uncapped subset whose patch also sets a priorityClassName: every pod (2, 6, 6 after an
    image update) is in it, with that class and its priority 100, cost 100, missingReplicas -1."""
    patch: JSON = {
        "metadata": {"annotations": {"subset": "zone-a"}},
        "spec": {"priorityClassName": priority_class},
    }
    subsets = [subset("zone-a", zone="a", patch=patch)]
    await create_spread(kube, namespace, CLONESET, subsets)
    await kube.create(CLONESETS, workload(*CLONESET, "web", pool, 2), namespace)
    steps = [(2, None), (6, None), (6, IMAGE_2)]
    for replicas, image in steps:
        await scale(kube, CLONESETS, namespace, replicas)
        if image:
            await set_image(kube, CLONESETS, namespace, image)
        status = [("zone-a", replicas, -1, 0, 0)]
        pods = await settle(
            kube,
            namespace,
            {"zone-a": replicas},
            image=image,
            status=status,
            check=(subsets, {"zone-a": "100"}),
        )
        for pod in pods:
            assert (pod["spec"]["priorityClassName"], pod["spec"]["priority"]) == (priority_class, 100)  # type: ignore[index]


async def test_only_one_subset_zone_a_2(kube: KubeClient, namespace: str, pool: str) -> None:
    """One subset capped at 2: 2 pods in it; scaled to 6, the 4 others are unmatched and have no
    deletion cost; scaled back to 2, the matched 2 remain. The template prefers zone b, so the
    unmatched pods land there (on zone a's node the controller would adopt them into the subset,
    as upstream's ``matchesSubset`` does for any fitting node)."""
    subsets = [subset("zone-a", zone="a", cap=2)]
    await create_spread(kube, namespace, CLONESET, subsets)
    await kube.create(CLONESETS, preferring_zone_b(workload(*CLONESET, "web", pool, 2)), namespace)
    status = [("zone-a", 2, 0, 0, 0)]
    for replicas in (2, 6, 2):
        await scale(kube, CLONESETS, namespace, replicas)
        expected: dict[str | None, int] = {"zone-a": 2}
        if replicas > 2:
            expected[None] = replicas - 2
        await settle(kube, namespace, expected, status=status, check=(subsets, {"zone-a": "100"}))


async def test_manage_existing_pods_by_only_preferred_node_selector_then_deletion_subset_b(
    kube: KubeClient, namespace: str, pool: str
) -> None:
    """A CloneSet's 3 pods, preferring zone b, exist before a WorkloadSpread whose subsets only
    prefer zones (a: 20/10, capped 3; b: 10/20): all 3 are adopted into subset-b (cost 100); once
    subset-b is removed from the spec their cost is -200."""

    def preferring(name: str, weight_a: int, weight_b: int, cap: object = None) -> JSON:
        out: JSON = {
            "name": name,
            "tolerations": [{"key": "node-taint", "operator": "Exists", "effect": "NoSchedule"}],
            "preferredNodeSelectorTerms": [
                {"weight": weight_a, "preference": zone_term("a")},
                {"weight": weight_b, "preference": zone_term("b")},
            ],
        }
        if cap is not None:
            out["maxReplicas"] = cap
        return out

    await kube.create(CLONESETS, preferring_zone_b(workload(*CLONESET, "web", pool, 3)), namespace)
    await settle(kube, namespace, {None: 3})
    subsets = [preferring("subset-a", 20, 10, cap=3), preferring("subset-b", 10, 20)]
    await create_spread(kube, namespace, CLONESET, subsets, scope=False)

    async def costs_are(cost: str) -> bool:
        pods = await live_pods(kube, namespace)
        return [(p["metadata"].get("annotations") or {}).get(DELETION_COST_ANNOTATION) for p in pods] == [
            cost
        ] * 3

    await settle(kube, namespace, {"subset-b": 3})
    await eventually(lambda: costs_are("100"), what="the adopted pods' deletion cost 100")
    ws = await kube.get(WORKLOADSPREADS, "spread", namespace)
    assert [(s[0], s[1]) for s in statuses(ws)] == [("subset-a", 0), ("subset-b", 3)]
    await update_spread(kube, namespace, subsets[:1])
    await eventually(lambda: costs_are("-200"), what="deletion cost -200 once subset-b is gone")


async def test_manage_statefulset_pods_only_with_patch(kube: KubeClient, namespace: str, pool: str) -> None:
    """An Advanced StatefulSet of 5 under subsets with only patches (a=2, b=2, c unlimited):
    statuses count 2/2/1 and the pods carry their subset's patch 2/2/1."""
    subsets = [subset("subset-a", cap=2), subset("subset-b", cap=2), subset("subset-c")]
    await create_spread(kube, namespace, ("apps.kruise.io/v1alpha1", "StatefulSet"), subsets)
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web"},
        "spec": {"clusterIP": "None", "selector": {"app": "web"}, "ports": [{"port": 80}]},
    }
    await kube.create(SERVICES, service, namespace)
    sts = workload("apps.kruise.io/v1beta1", "StatefulSet", "web", pool, 5)
    sts["spec"]["serviceName"] = "web"  # type: ignore[index]
    await kube.create(STATEFULSETS, sts, namespace)
    status = [("subset-a", 2, 0, 0, 0), ("subset-b", 2, 0, 0, 0), ("subset-c", 1, -1, 0, 0)]
    pods = await settle(kube, namespace, {"subset-a": 2, "subset-b": 2, "subset-c": 1}, status=status)
    subsets_by_annotation = Counter(
        (p["metadata"].get("annotations") or {}).get("subset")  # type: ignore[attr-defined]
        for p in pods
    )
    assert subsets_by_annotation == {"subset-a": 2, "subset-b": 2, "subset-c": 1}
    await assert_pods(kube, pods, subsets, None)


TFJOBS = Resource("kubeflow.org", "v1", "tfjobs", "TFJob")
# upstream's e2e configuration (test/kruise-e2e-config.yaml)
CUSTOM_WHITELIST = {
    "workloads": [
        {
            "Group": "kubeflow.org",
            "Version": "v1",
            "Kind": "TFJob",
            "ReplicasPath": "spec.tfReplicaSpecs.MASTER.replicas",
        },
        {"Group": "apps.kruise.io", "Kind": "DaemonSet"},
    ]
}


@pytest.fixture
async def custom_whitelist(kube: KubeClient) -> AsyncIterator[None]:
    """``kruise-configuration`` (manager namespace ``kruise-system``) with upstream's e2e white
    list, and a TFJob CRD (``kubeflow.org/v1``, schemaless) for its custom workload; the key and
    the CRD are removed afterwards (the ConfigMap too when nothing else is left in it)."""
    key = "WorkloadSpread_Watch_Custom_Workload_WhiteList"
    data = {key: json.dumps(CUSTOM_WHITELIST)}
    if await kube.get_or_none(CONFIGMAPS, "kruise-configuration", "kruise-system") is None:
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "kruise-configuration"},
            "data": data,
        }
        await kube.create(CONFIGMAPS, body, "kruise-system")
    else:
        await kube.patch(
            CONFIGMAPS, "kruise-configuration", {"data": data}, "kruise-system", patch_type="merge"
        )
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "tfjobs.kubeflow.org"},
        "spec": {
            "group": "kubeflow.org",
            "scope": "Namespaced",
            "names": {"plural": "tfjobs", "singular": "tfjob", "kind": "TFJob", "listKind": "TFJobList"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
            ],
        },
    }
    await kube.create(CRDS, crd)

    async def established() -> bool:
        got = await kube.get(CRDS, "tfjobs.kubeflow.org")
        conditions = (got.get("status") or {}).get("conditions") or []
        return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

    await eventually(established, what="the TFJob CRD established")
    try:
        yield
    finally:
        await kube.delete(CRDS, "tfjobs.kubeflow.org", missing_ok=True)
        config = await kube.get_or_none(CONFIGMAPS, "kruise-configuration", "kruise-system")
        if config is not None:
            left = {k: v for k, v in (config.get("data") or {}).items() if k != key}
            if left:
                await kube.patch(
                    CONFIGMAPS,
                    "kruise-configuration",
                    {"data": {key: None}},
                    "kruise-system",
                    patch_type="merge",
                )
            else:
                await kube.delete(CONFIGMAPS, "kruise-configuration", "kruise-system", missing_ok=True)


async def test_job_like_custom_workload(
    kube: KubeClient, namespace: str, pool: str, custom_whitelist: None
) -> None:
    """Upstream's custom workloads of the white list (subsets capped only): a malformed
    targetFilter is refused; an Advanced DaemonSet (listed without replicasPath) of 3 pods under
    a=2, b=5 counts 2/0 and 1/4; a TFJob whose MASTER replicas (its replicasPath) are 5 under
    20%/80% with 1 PS + 3 MASTER pods counts 1/0 and 3/1; a TFJob filtered to its workers
    (replicasPathList Worker.replicas = 4) under 25%/75% with 1 PS + 1 MASTER + 2 workers counts
    1/0 and 1/2. The pods are the TFJob's own (created by the test, as upstream's fakes)."""

    def spread(name: str, api_version: str, kind: str, caps: tuple[object, object]) -> JSON:
        subsets = [{"name": "subset-a", "maxReplicas": caps[0]}, {"name": "subset-b", "maxReplicas": caps[1]}]
        target = {"apiVersion": api_version, "kind": kind, "name": name.removeprefix("ws-")}
        return {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "WorkloadSpread",
            "metadata": {"name": name},
            "spec": {"targetRef": target, "subsets": subsets},
        }

    async def counted(name: str, expected: list[tuple[int, int]]) -> None:
        async def probe() -> bool:
            ws = await kube.get(WORKLOADSPREADS, name, namespace)
            got = [
                (s.get("replicas", 0), s["missingReplicas"])
                for s in (ws.get("status") or {}).get("subsetStatuses") or []
            ]
            assert got == expected, f"{name}: {got}"
            return True

        await eventually(probe, timeout=60, what=f"{name}'s subsets {expected}")

    invalid = spread("ws-invalid-target-filter", "apps.kruise.io/v1alpha1", "DaemonSet", (2, 5))
    invalid["spec"]["targetFilter"] = {"selector": {"matchExpressions": [{"key": "key", "operator": "In"}]}}  # type: ignore[index]
    with pytest.raises(ApiError):
        await kube.create(WORKLOADSPREADS, invalid, namespace)

    await kube.create(
        WORKLOADSPREADS, spread("ws-no-replicas", "apps.kruise.io/v1alpha1", "DaemonSet", (2, 5)), namespace
    )
    await pod_webhook_in_scope(kube, namespace)
    ads = workload("apps.kruise.io/v1alpha1", "DaemonSet", "no-replicas", pool, 0)
    del ads["spec"]["replicas"]  # type: ignore[attr-defined]
    await kube.create(DAEMONSETS, ads, namespace)
    await counted("ws-no-replicas", [(2, 0), (1, 4)])

    async def tfjob(name: str, ps: int, master: int, worker: int, created: tuple[int, int, int]) -> None:
        specs = {"PS": {"replicas": ps}, "MASTER": {"replicas": master}, "Worker": {"replicas": worker}}
        job = await kube.create(
            TFJOBS,
            {
                "apiVersion": "kubeflow.org/v1",
                "kind": "TFJob",
                "metadata": {"name": name},
                "spec": {"tfReplicaSpecs": specs},
            },
            namespace,
        )
        owner = {
            "apiVersion": "kubeflow.org/v1",
            "kind": "TFJob",
            "name": name,
            "uid": job["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
        roles = [("ps", f"tfjob-{name}-ps-{i}") for i in range(created[0])]
        roles += [("master", f"tfjob-{name}-master-{i}") for i in range(created[1])]
        roles += [("worker", f"fake-tfjob-{name}-worker-{i}") for i in range(created[2])]
        for role, pod_name in roles:
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": pod_name,
                    "labels": {"app": "tfjob", "role": role},
                    "ownerReferences": [owner],
                },
                "spec": {
                    "nodeSelector": {POOL: pool},
                    "terminationGracePeriodSeconds": 0,
                    "containers": [{"name": "main", "image": "registry.example.com/web:1"}],
                },
            }
            await kube.create(PODS, pod, namespace)

    await kube.create(
        WORKLOADSPREADS,
        spread("ws-replicas-whitelist", "kubeflow.org/v1", "TFJob", ("20%", "80%")),
        namespace,
    )
    await tfjob("replicas-whitelist", 1, 5, 0, (1, 3, 0))
    await counted("ws-replicas-whitelist", [(1, 0), (3, 1)])

    filtered = spread("ws-with-filter", "kubeflow.org/v1", "TFJob", ("25%", "75%"))
    filtered["spec"]["targetFilter"] = {  # type: ignore[index]
        "selector": {"matchLabels": {"role": "worker"}},
        "replicasPathList": ["spec.tfReplicaSpecs.Worker.replicas"],
    }
    await kube.create(WORKLOADSPREADS, filtered, namespace)
    await tfjob("with-filter", 1, 1, 4, (1, 1, 2))
    await counted("ws-with-filter", [(1, 0), (1, 2)])


async def test_job_like_custom_workload_pods_created_before_are_adopted(
    kube: KubeClient, namespace: str, pool: str, custom_whitelist: None
) -> None:
    """Beyond upstream's e2e, its controller's adoption for a custom target: a TFJob's two pods,
    bound in zone a and zone b before the WorkloadSpread exists, are annotated with the subset
    their node fits and counted (zone-a=1: 1/0, zone-b uncapped: 1/-1)."""
    job = await kube.create(
        TFJOBS,
        {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "early"}, "spec": {}},
        namespace,
    )
    owner = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "name": "early",
        "uid": job["metadata"]["uid"],
        "controller": True,
    }
    for zone in ("a", "b"):
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"early-{zone}", "labels": {"app": "web"}, "ownerReferences": [owner]},
            "spec": {
                "nodeSelector": {POOL: pool, ZONE: zone},
                "terminationGracePeriodSeconds": 0,
                "containers": [{"name": "main", "image": "registry.example.com/web:1"}],
            },
        }
        await kube.create(PODS, pod, namespace)
    await settle(kube, namespace, {None: 2})
    subsets = [subset("zone-a", zone="a", cap=1), subset("zone-b", zone="b")]
    ws: JSON = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": "spread"},
        "spec": {
            "targetRef": {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "name": "early"},
            "subsets": subsets,
        },
    }
    await kube.create(WORKLOADSPREADS, ws, namespace)
    pods = await settle(
        kube, namespace, {"zone-a": 1, "zone-b": 1}, status=[("zone-a", 1, 0, 0, 0), ("zone-b", 1, -1, 0, 0)]
    )
    assert {p["metadata"]["name"]: matched_subset(p) for p in pods} == {
        "early-a": "zone-a",
        "early-b": "zone-b",
    }  # type: ignore[index]


async def test_elastic_deploy_for_deployment_zone_a_2_zone_b_nil(
    kube: KubeClient, namespace: str, pool: str
) -> None:
    """A Deployment under zone-a=2, zone-b=nil: 2 replicas both in zone-a (cost 200); 6: 2 and 4
    (cost 100), zone-a's status full; after an image update (a rolling update: the new
    ReplicaSet's pods are counted in their own revision's ``versionedSubsetStatuses``, so 2 of
    them take zone-a again) 2 and 4, only the new revision left in the versioned statuses; back
    to 2: zone-a only."""
    subsets = [subset("zone-a", zone="a", cap=2), subset("zone-b", zone="b")]
    await create_spread(kube, namespace, ("apps/v1", "Deployment"), subsets)
    await kube.create(DEPLOYMENTS, workload("apps/v1", "Deployment", "web", pool, 2), namespace)
    costs = {"zone-a": "200", "zone-b": "100"}
    await settle(kube, namespace, {"zone-a": 2}, check=(subsets, costs))
    await scale(kube, DEPLOYMENTS, namespace, 6)
    status = [("zone-a", 2, 0, 0, 0), ("zone-b", 4, -1, 0, 0)]
    await settle(kube, namespace, {"zone-a": 2, "zone-b": 4}, status=status, check=(subsets, costs))
    await set_image(kube, DEPLOYMENTS, namespace, IMAGE_2)
    pods = await settle(
        kube, namespace, {"zone-a": 2, "zone-b": 4}, image=IMAGE_2, status=status, check=(subsets, costs)
    )
    (new_hash,) = {p["metadata"]["labels"]["pod-template-hash"] for p in pods}  # type: ignore[index]

    async def only_new_revision() -> bool:
        assert versioned(await kube.get(WORKLOADSPREADS, "spread", namespace)) == {new_hash: status}
        return True

    await eventually(only_new_revision, what="versionedSubsetStatuses of the new revision only")
    await scale(kube, DEPLOYMENTS, namespace, 2)
    await settle(kube, namespace, {"zone-a": 2}, check=(subsets, costs))


def versioned(ws: JSON) -> dict[str, list[tuple[str, int, int, int, int]]]:
    """:func:`statuses` of each revision of ``status.versionedSubsetStatuses``."""
    entries = (ws.get("status") or {}).get("versionedSubsetStatuses") or {}  # type: ignore[attr-defined]
    return {
        version: statuses({"status": {"subsetStatuses": subset_statuses}})
        for version, subset_statuses in entries.items()
    }


async def test_elastic_deploy_for_deployment_rollout_counts_the_new_revision_per_subset(
    kube: KubeClient, namespace: str, pool: str
) -> None:
    """Upstream's per-revision accounting caught mid-rollout: a Deployment of 6 (zone-a=2,
    zone-b=nil) rolls to a template no node fits (maxSurge 2, maxUnavailable 0), so its 2 surge
    pods stay Pending beside the 6 old ones. Counted in their own revision, both new pods take
    zone-a (full of old pods in ``subsetStatuses``); ``versionedSubsetStatuses`` holds both
    revisions; the old revision's pods get their deletion costs with the subsets reversed (zone-a
    100, zone-b 200), the latest revision's in order (zone-a 200)."""
    subsets = [subset("zone-a", zone="a", cap=2), subset("zone-b", zone="b")]
    await create_spread(kube, namespace, ("apps/v1", "Deployment"), subsets)
    deployment = workload("apps/v1", "Deployment", "web", pool, 6)
    deployment["spec"]["strategy"] = {  # type: ignore[index]
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 2, "maxUnavailable": 0},
    }
    await kube.create(DEPLOYMENTS, deployment, namespace)
    await settle(kube, namespace, {"zone-a": 2, "zone-b": 4})
    patch = {"spec": {"template": {"spec": {"nodeSelector": {POOL: "no-such-pool"}}}}}
    await kube.patch(DEPLOYMENTS, "web", patch, namespace, patch_type="merge")

    async def mid_rollout() -> bool:
        pods = await live_pods(kube, namespace)
        new = [p for p in pods if not p["spec"].get("nodeName")]  # type: ignore[attr-defined]
        old = [p for p in pods if p["spec"].get("nodeName")]  # type: ignore[attr-defined]
        assert (len(old), len(new)) == (6, 2), f"{len(old)} old, {len(new)} new pods"
        assert Counter(matched_subset(p) for p in new) == {"zone-a": 2}
        assert Counter(matched_subset(p) for p in old) == {"zone-a": 2, "zone-b": 4}
        (old_hash,) = {p["metadata"]["labels"]["pod-template-hash"] for p in old}  # type: ignore[index]
        (new_hash,) = {p["metadata"]["labels"]["pod-template-hash"] for p in new}  # type: ignore[index]
        ws = await kube.get(WORKLOADSPREADS, "spread", namespace)
        assert versioned(ws) == {
            old_hash: [("zone-a", 2, 0, 0, 0), ("zone-b", 4, -1, 0, 0)],
            new_hash: [("zone-a", 2, 0, 0, 0), ("zone-b", 0, -1, 0, 0)],
        }
        assert statuses(ws) == [("zone-a", 4, 0, 0, 0), ("zone-b", 4, -1, 0, 0)]
        costs = Counter(
            (
                p in new,
                matched_subset(p),
                (p["metadata"].get("annotations") or {}).get(DELETION_COST_ANNOTATION),
            )  # type: ignore[attr-defined]
            for p in pods
        )
        assert costs == {(False, "zone-a", "100"): 2, (False, "zone-b", "200"): 4, (True, "zone-a", "200"): 2}
        return True

    await eventually(mid_rollout, timeout=90, what="the rollout's new pods counted in their own revision")


async def test_deploy_in_two_zone_cloneset_partition_counts_one_version(
    kube: KubeClient, namespace: str, pool: str
) -> None:
    """A CloneSet canary (image update with partition 3) under zone-a=2, zone-b=nil: upstream
    versions only Deployment/ReplicaSet pods, so the CloneSet's pods of both revisions are counted
    together under ``versionIgnored``; a replaced pod's room is given back by its deletion record,
    so the spread stays 2/4 with 3 pods at the new image."""
    subsets = [subset("zone-a", zone="a", cap=2), subset("zone-b", zone="b")]
    await create_spread(kube, namespace, CLONESET, subsets)
    await kube.create(CLONESETS, workload(*CLONESET, "web", pool, 6), namespace)
    status = [("zone-a", 2, 0, 0, 0), ("zone-b", 4, -1, 0, 0)]
    costs = {"zone-a": "200", "zone-b": "100"}
    await settle(kube, namespace, {"zone-a": 2, "zone-b": 4}, status=status, check=(subsets, costs))
    containers = [{"name": "web", "image": IMAGE_2}]
    patch = {"spec": {"updateStrategy": {"partition": 3}, "template": {"spec": {"containers": containers}}}}
    await kube.patch(CLONESETS, "web", patch, namespace, patch_type="merge")

    async def canary() -> bool:
        pods = await live_pods(kube, namespace)
        images = Counter(c["image"] for p in pods for c in p["spec"]["containers"])  # type: ignore[index]
        assert images == {IMAGE_2: 3, "registry.example.com/web:1": 3}, f"images {images}"
        ws = await kube.get(WORKLOADSPREADS, "spread", namespace)
        assert versioned(ws) == {"versionIgnored": status}
        return True

    await eventually(canary, timeout=90, what="the canary's pods counted under versionIgnored")
    await settle(kube, namespace, {"zone-a": 2, "zone-b": 4}, status=status, check=(subsets, costs))
