"""The controller's writes: the status a round computes, and the auto-generated object."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import NATIVE_STATEFULSETS, NODES, PODS, STATEFULSETS, Resource
from kruise.core.runtime import CacheReader
from kruise.workloads.api.persistentpodstate import PERSISTENTPODSTATES
from kruise.workloads.persistentpodstate.controller import PersistentPodStateController

ZONE = "topology.kubernetes.io/zone"
JSON = dict[str, Any]


class _Kube:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, ...]] = []

    async def create(self, res: Resource, body: JSON, namespace: str) -> JSON:
        self.calls.append(("create", res, body))
        return body

    async def replace(self, res: Resource, body: JSON, *, subresource: str | None = None) -> JSON:
        self.calls.append(("replace", res, body, subresource))
        return body

    async def delete(self, res: Resource, name: str, namespace: str, **_: Any) -> None:
        self.calls.append(("delete", res, name, namespace))


class _Cache:
    def __init__(self, objects: dict[tuple[Resource, str], JSON], pods: tuple[JSON, ...] = ()) -> None:
        self.objects = objects
        self.pods = list(pods)

    def get(self, res: Resource, key: str) -> JSON | None:
        return self.objects.get((res, key))

    def by_index(self, res: Resource, index: str, value: str) -> list[JSON]:
        assert res == PODS and value == "sts-uid"
        return self.pods

    def list(self, res: Resource) -> list[JSON]:
        return [o for (r, _), o in self.objects.items() if r == res]


def _run(
    objects: dict[tuple[Resource, str], JSON], key: str, pods: tuple[JSON, ...] = ()
) -> list[tuple[Any, ...]]:
    kube = _Kube()
    controller = PersistentPodStateController(
        cast(KubeClient, kube), cast(CacheReader, _Cache(objects, pods))
    )
    asyncio.run(controller.reconcile(key))
    return kube.calls


def _pod(name: str, node: str) -> JSON:
    ready = [{"type": "Ready", "status": "True"}]
    return {
        "metadata": {"name": name},
        "spec": {"nodeName": node},
        "status": {"phase": "Running", "conditions": ready},
    }


def test_status_records_pods_and_forgets_those_past_the_reserved_replicas() -> None:
    pps = {
        "metadata": {"name": "db", "namespace": "ns", "generation": 2, "resourceVersion": "7"},
        "spec": {
            "targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "db"},
            "requiredPersistentTopology": {"nodeTopologyKeys": [ZONE]},
        },
        "status": {
            "observedGeneration": 1,
            "podStates": {"db-3": {"nodeName": "n1"}, "db-4": {"nodeName": "n1"}},
        },
    }
    sts = {"metadata": {"name": "db", "uid": "sts-uid"}, "spec": {"replicas": 3, "reserveOrdinals": [1]}}
    objects = {
        (PERSISTENTPODSTATES, "ns/db"): pps,
        (STATEFULSETS, "ns/db"): sts,
        (NODES, "n1"): {"metadata": {"name": "n1", "labels": {ZONE: "a", "x": "y"}}},
    }
    calls = _run(objects, "ns/db", (_pod("db-0", "n1"), _pod("db-2", "gone")))
    ((verb, res, body, sub),) = calls
    assert (verb, res, sub) == ("replace", PERSISTENTPODSTATES, "status")
    assert body["metadata"]["resourceVersion"] == "7"
    # db-3 is within 3 replicas with ordinal 1 reserved (0, 2, 3); db-4 is not and has no pod
    assert body["status"] == {
        "observedGeneration": 2,
        "podStates": {
            "db-0": {"nodeName": "n1", "nodeTopologyLabels": {ZONE: "a"}, "annotations": {}},
            "db-3": {"nodeName": "n1"},
        },
    }
    settled = {**objects, (PERSISTENTPODSTATES, "ns/db"): {**pps, "status": body["status"]}}
    assert _run(settled, "ns/db", (_pod("db-0", "n1"),)) == []  # nothing changed: no write


AUTO = {
    "kruise.io/auto-generate-persistent-pod-state": "true",
    "kruise.io/required-persistent-topology": ZONE,
}
KEY = "ns/generate#apps/v1#StatefulSet#web"


def _sts(annotations: dict[str, str]) -> JSON:
    return {
        "metadata": {"name": "web", "namespace": "ns", "uid": "u", "annotations": annotations},
        "spec": {},
    }


def test_generation_creates_updates_and_deletes() -> None:
    ((verb, res, body),) = _run({(NATIVE_STATEFULSETS, "ns/web"): _sts(AUTO)}, KEY)
    assert (verb, res) == ("create", PERSISTENTPODSTATES)
    assert body["spec"]["requiredPersistentTopology"] == {"nodeTopologyKeys": [ZONE]}
    stale = {"metadata": {"name": "web", "namespace": "ns"}, "spec": {"targetRef": {}}}
    objects = {(NATIVE_STATEFULSETS, "ns/web"): _sts(AUTO), (PERSISTENTPODSTATES, "ns/web"): stale}
    ((verb, _, updated, _),) = _run(objects, KEY)
    assert verb == "replace" and updated["spec"] == body["spec"]
    off = {(NATIVE_STATEFULSETS, "ns/web"): _sts({}), (PERSISTENTPODSTATES, "ns/web"): stale}
    assert _run(off, KEY) == [("delete", PERSISTENTPODSTATES, "web", "ns")]
    incomplete = {
        (NATIVE_STATEFULSETS, "ns/web"): _sts({"kruise.io/auto-generate-persistent-pod-state": "true"})
    }
    assert _run(incomplete, KEY) == []
