"""Which PersistentPodState keys a pod or StatefulSet event wakes (upstream's event handlers)."""

from __future__ import annotations

from typing import Any, cast

from kruise.core.informer import Delta, EventType
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import Resource
from kruise.core.runtime import CacheReader
from kruise.workloads.api.persistentpodstate import INJECTED_ANNOTATION
from kruise.workloads.persistentpodstate.controller import PersistentPodStateController

STS = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web"}
PPS = {"metadata": {"name": "web-pps", "namespace": "ns"}, "spec": {"targetRef": STS}}
AUTO = {
    "kruise.io/auto-generate-persistent-pod-state": "true",
    "kruise.io/required-persistent-topology": "topology.kubernetes.io/zone",
}


class _Cache:
    def list(self, resource: Resource) -> list[dict[str, Any]]:
        return [PPS]


controller = PersistentPodStateController(cast(KubeClient, None), cast(CacheReader, _Cache()))


def _pod(ready: bool, owner: dict[str, Any] = STS, **meta: Any) -> dict[str, Any]:
    ref = {**owner, "uid": "u", "controller": True}
    status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    return {
        "metadata": {"name": "web-0", "namespace": "ns", "ownerReferences": [ref], **meta},
        "status": status,
    }


def pod_keys(kind: EventType, obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    return list(controller.pod_keys(Delta(kind, obj, old)))


def test_pod_ready_terminating_or_deleted_wakes_its_pps() -> None:
    assert pod_keys(EventType.MODIFIED, _pod(True), _pod(False)) == ["ns/web-pps"]
    assert pod_keys(EventType.DELETED, _pod(False)) == ["ns/web-pps"]
    terminating = _pod(True, deletionTimestamp="2024-01-01T00:00:00Z")
    assert pod_keys(EventType.MODIFIED, terminating, _pod(True)) == ["ns/web-pps"]
    assert pod_keys(EventType.MODIFIED, _pod(True), _pod(True)) == []
    assert pod_keys(EventType.ADDED, _pod(True)) == []


def test_pod_injected_annotation_names_the_pps_and_other_owners_wake_nothing() -> None:
    injected = _pod(False, annotations={INJECTED_ANNOTATION: "named"})
    assert pod_keys(EventType.DELETED, injected) == ["ns/named"]
    assert pod_keys(EventType.DELETED, _pod(False, {**STS, "kind": "ReplicaSet"})) == []
    assert pod_keys(EventType.DELETED, _pod(False, {**STS, "name": "db"})) == []


def _sts(annotations: dict[str, str], replicas: int = 2, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "ns", "annotations": annotations, **meta},
        "spec": {"replicas": replicas},
    }


def sts_keys(kind: EventType, obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    return list(controller.statefulset_keys(Delta(kind, obj, old)))


def test_statefulset_annotations_ask_for_generation() -> None:
    generate = "ns/generate#apps/v1#StatefulSet#web"
    assert sts_keys(EventType.ADDED, _sts(AUTO)) == [generate]
    assert sts_keys(EventType.ADDED, _sts({})) == []
    assert sts_keys(EventType.MODIFIED, _sts({}), _sts(AUTO)) == [generate]
    assert sts_keys(EventType.MODIFIED, _sts(AUTO), _sts(AUTO)) == []


def test_statefulset_deleted_or_scaled_wakes_the_pps_targeting_it() -> None:
    assert sts_keys(EventType.DELETED, _sts({})) == ["ns/web-pps"]
    assert sts_keys(EventType.MODIFIED, _sts({}, replicas=1), _sts({})) == ["ns/web-pps"]
    deleting = _sts({}, deletionTimestamp="2024-01-01T00:00:00Z")
    assert sts_keys(EventType.MODIFIED, deleting, _sts({})) == ["ns/web-pps"]
