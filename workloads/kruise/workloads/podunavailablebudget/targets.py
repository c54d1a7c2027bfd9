"""Which pods a PodUnavailableBudget counts and how many it expects (reads the informer cache).

Upstream's ``GetPodsForPub`` with its ``ControllerFinder``:

- ``targetRef`` (CloneSet, Deployment, ReplicaSet, native or Advanced StatefulSet): the active pods
  the workload controls (a Deployment's through its ReplicaSets) and the workload's
  ``spec.replicas``; a workload missing or being deleted counts nothing. Kinds not listed (upstream
  falls back to any kind's ``scale`` subresource) are not resolved here: no pods, 0 expected.
- ``selector``: the namespace's active pods it matches (an empty or malformed selector matches
  nothing), expecting the sum of ``spec.replicas`` of their distinct controllers (a ReplicaSet
  owned by a Deployment counts as that Deployment).
- The PUB annotation ``pub.kruise.io/protect-total-replicas`` overrides the expected count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kruise.core.informer.store import JSON
from kruise.core.kube.resources import (
    CLONESETS,
    DEPLOYMENTS,
    NATIVE_STATEFULSETS,
    PODS,
    REPLICASETS,
    STATEFULSETS,
    Resource,
)
from kruise.core.runtime import OWNER_UID, CacheReader, controller_ref
from kruise.workloads.api.podunavailablebudget import PROTECT_TOTAL_REPLICAS_ANNOTATION
from kruise.workloads.objects import annotations_of, is_being_deleted, labels, mapping, namespace, spec, uid
from kruise.workloads.pods import is_active
from kruise.workloads.podunavailablebudget.validation import api_group
from kruise.workloads.selector import SelectorError, selector_matches

__all__ = ["WORKLOADS", "pods_and_expected", "workload_of", "workload_resource"]

WORKLOADS: tuple[Resource, ...] = (CLONESETS, DEPLOYMENTS, NATIVE_STATEFULSETS, STATEFULSETS, REPLICASETS)
"""The workload kinds a budget resolves (their replicas wake the controller)."""


def workload_resource(api_version: str, kind: str) -> Resource | None:
    """The cached resource for a ``targetRef``/ownerReference (matched by API group and kind)."""
    group = api_group(api_version)
    for res in WORKLOADS:
        if res.kind == kind and res.group == group:
            return res
    return None


def _replicas(workload: Mapping[str, Any]) -> int:
    value = spec(workload).get("replicas")
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def workload_of(cache: CacheReader, obj: Mapping[str, Any]) -> tuple[Resource, JSON] | None:
    """The workload controlling ``obj`` (a pod or a ReplicaSet), climbing from a ReplicaSet to
    its Deployment; ``None`` when there is none in the cache."""
    ref = controller_ref(obj)
    if ref is None:
        return None
    res = workload_resource(str(ref.get("apiVersion") or ""), str(ref.get("kind") or ""))
    if res is None:
        return None
    found = cache.get(res, f"{namespace(obj)}/{ref.get('name')}")
    if found is None or (ref.get("uid") and uid(found) != ref.get("uid")):
        return None
    if res is REPLICASETS:
        above = workload_of(cache, found)
        if above is not None and above[0] is DEPLOYMENTS:
            return above
    return res, found


def _owned_pods(cache: CacheReader, owner: JSON) -> list[JSON]:
    return [p for p in cache.by_index(PODS, OWNER_UID, uid(owner)) if is_active(p)]


def _target_pods(cache: CacheReader, ns: str, ref: Mapping[str, Any]) -> tuple[list[JSON], int]:
    res = workload_resource(str(ref.get("apiVersion") or ""), str(ref.get("kind") or ""))
    if res is None:
        return [], 0
    workload = cache.get(res, f"{ns}/{ref.get('name')}")
    if workload is None or is_being_deleted(workload):
        return [], 0
    expected = _replicas(workload)
    if expected == 0:
        return [], 0
    if res is DEPLOYMENTS:
        pods = [
            p for rs in cache.by_index(REPLICASETS, OWNER_UID, uid(workload)) for p in _owned_pods(cache, rs)
        ]
        return pods, expected
    return _owned_pods(cache, workload), expected


def _selected(selector: Mapping[str, Any], pod_labels: Mapping[str, str]) -> bool:
    try:
        return selector_matches(selector, pod_labels)
    except SelectorError:
        return False


def _expected_for(cache: CacheReader, pods: Iterable[JSON]) -> int:
    scales: dict[str, int] = {}
    for pod in pods:
        found = workload_of(cache, pod)
        if found is None or is_being_deleted(found[1]):
            continue
        scales[uid(found[1])] = _replicas(found[1])
    return sum(scales.values())


def pods_and_expected(
    cache: CacheReader, pub: Mapping[str, Any], pods_in_namespace: Iterable[JSON]
) -> tuple[list[JSON], int]:
    """``(pods, expected)`` for ``pub``; ``pods_in_namespace`` are the pods of its namespace."""
    pub_spec = spec(pub)
    ns = namespace(pub)
    target = pub_spec.get("targetRef")
    if target is not None:
        pods, expected = _target_pods(cache, ns, mapping(target))
    else:
        selector = mapping(pub_spec.get("selector"))
        if not selector.get("matchLabels") and not selector.get("matchExpressions"):
            return [], 0
        pods = [p for p in pods_in_namespace if is_active(p) and _selected(selector, labels(p))]
        expected = -1
    override = annotations_of(pub).get(PROTECT_TOTAL_REPLICAS_ANNOTATION)
    if override:
        try:
            return pods, int(override)
        except ValueError:
            pass
    if expected < 0:
        expected = _expected_for(cache, pods)
    return pods, expected
