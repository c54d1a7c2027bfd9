"""The pure core of the ResourceDistribution controller: which namespaces a distributor targets,
what each copy must look like, and the status that results.

Mirrors ``pkg/controller/resourcedistribution`` (``utils.go``, ``doReconcile``) of OpenKruise:

- targets (:func:`target_namespaces`): ``allNamespaces`` takes every existing namespace, else
  ``includedNamespaces.list`` (existing or not) plus those matching ``namespaceLabelSelector``
  (when it has terms); ``excludedNamespaces.list`` is then removed, and ``kube-system`` and
  ``kube-public`` are never targets (upstream master; v1.8.4 only documented it);
- a copy is the resource with the target namespace, a controller ownerReference to the RD and
  annotations ``kruise.io/resourcedistribution.resource.hashcode`` (SHA-256 of the resource
  JSON) and ``kruise.io/resourcedistribution.resource.from`` (the RD's name); an update keeps
  the old copy's extra labels, annotations and finalizers (``mergeMetadata``) and is only made
  when anything but ``metadata``/``status`` differs (``needToUpdate``);
- a same-named object not controlled by the RD is never touched: ``ConflictOccurred``;
  a target namespace missing or terminating: ``NamespaceNotExists``;
- copies in namespaces no longer targeted are deleted (only those the RD controls);
- status: ``desired`` = targets, ``succeeded`` = targets distributed without error,
  ``failed`` = the difference, six conditions in upstream's order (``True`` with the failed
  namespaces and the last error as ``reason``, else ``False``/``Succeeded``), a condition's
  ``lastTransitionTime`` kept while its status does not change.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kruise.workloads.api.resourcedistribution import (
    CONDITION_TYPES,
    RESOURCE_FROM_ANNOTATION,
    RESOURCE_HASH_ANNOTATION,
    ConditionView,
    StatusView,
    TargetsView,
)
from kruise.workloads.objects import (
    KubeObject,
    is_being_deleted,
    labels,
    mapping,
    metadata,
    name,
    sequence,
    uid,
)
from kruise.workloads.selector import selector_matches

__all__ = [
    "CONFLICT",
    "CREATE_FAILED",
    "DELETE_FAILED",
    "GET_FAILED",
    "NOT_EXISTS",
    "SUPPORTED_KINDS",
    "SYSTEM_NAMESPACES",
    "UPDATE_FAILED",
    "Failure",
    "Plan",
    "desired_copy",
    "is_controlled_by",
    "listed_names",
    "needs_update",
    "new_status",
    "plan",
    "resource_hash",
    "target_namespaces",
]

SYSTEM_NAMESPACES = frozenset({"kube-system", "kube-public"})
"""Never distributed to, whatever the targets say."""
SUPPORTED_KINDS = frozenset({"Secret", "ConfigMap"})
"""The core/v1 kinds a distributor may carry (upstream's ``supportedGKList``)."""

GET_FAILED, CREATE_FAILED, UPDATE_FAILED, DELETE_FAILED, CONFLICT, NOT_EXISTS = range(6)
"""Indices into :data:`~kruise.workloads.api.resourcedistribution.CONDITION_TYPES`."""

CONFLICT_REASON = (
    "conflict with existing resources because of the same namespace, group, version, kind and name"
)
NOT_EXISTS_REASON = "namespace not found or is terminating"


@dataclass(frozen=True)
class Failure:
    """One namespace that failed: its condition index (:data:`CONFLICT`, ...) and the error text."""

    condition: int
    namespace: str
    reason: str


@dataclass
class Plan:
    """What one round does: ``create``/``update`` bodies per namespace, copies to ``delete``
    (namespace -> uid), the targets' count and the failures known before any write."""

    desired: int = 0
    create: dict[str, dict[str, Any]] = field(default_factory=dict)
    update: dict[str, dict[str, Any]] = field(default_factory=dict)
    delete: dict[str, str] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)


def listed_names(targets: Mapping[str, Any], key: str) -> list[str]:
    """The names in ``targets[key].list`` (``includedNamespaces``/``excludedNamespaces``)."""
    return [str(mapping(n).get("name") or "") for n in sequence(mapping(targets.get(key)).get("list"))]


def target_namespaces(
    targets: TargetsView | Mapping[str, Any], namespaces: Iterable[KubeObject]
) -> tuple[list[str], list[str]]:
    """``(matched, unmatched)`` namespace names, each sorted (``listNamespacesForDistributor``).

    ``namespaces`` are the existing Namespace objects; an included name that does not exist is
    matched (it then fails as ``NamespaceNotExists``). Raises
    :class:`~kruise.workloads.selector.SelectorError` for a malformed selector.
    """
    existing = {name(ns): ns for ns in namespaces}
    matched: set[str] = set()
    if targets.get("allNamespaces"):
        matched.update(existing)
    else:
        matched.update(listed_names(targets, "includedNamespaces"))
        selector = mapping(targets.get("namespaceLabelSelector"))
        if selector.get("matchLabels") or selector.get("matchExpressions"):
            matched.update(n for n, ns in existing.items() if selector_matches(selector, labels(ns)))
    matched -= set(listed_names(targets, "excludedNamespaces"))
    matched -= SYSTEM_NAMESPACES
    matched.discard("")
    return sorted(matched), sorted(set(existing) - matched)


def resource_hash(resource: Mapping[str, Any]) -> str:
    """SHA-256 hex of the resource as the API server serialises it to the controller (compact
    JSON, keys sorted, ``<``/``>``/``&`` escaped as Go's encoder does)."""
    text = json.dumps(resource, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return hashlib.sha256(text.encode()).hexdigest()


def is_controlled_by(obj: KubeObject, rd: KubeObject) -> bool:
    """Whether ``obj``'s controller ownerReference is ``rd`` (by UID when both have one, else by
    kind and name; ``isControlledByDistributor``)."""
    for ref in sequence(metadata(obj).get("ownerReferences")):
        ref = mapping(ref)
        if not ref.get("controller"):
            continue
        if ref.get("uid") and uid(rd):
            return str(ref["uid"]) == uid(rd)
        return ref.get("kind") == "ResourceDistribution" and ref.get("name") == name(rd)
    return False


def _owner_ref(rd: KubeObject) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ResourceDistribution",
        "name": name(rd),
        "uid": uid(rd),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def desired_copy(rd: KubeObject, namespace: str, old: KubeObject | None = None) -> dict[str, Any]:
    """The copy of ``rd``'s resource for ``namespace`` (``makeResourceObject``); with ``old`` (the
    existing copy) its extra labels, annotations and finalizers are kept and its
    ``resourceVersion`` is the precondition of the update."""
    resource = mapping(mapping(rd.get("spec")).get("resource"))
    new = copy.deepcopy(dict(resource))
    meta: dict[str, Any] = dict(mapping(new.get("metadata")))
    new_labels = dict(mapping(meta.get("labels")))
    new_annotations = dict(mapping(meta.get("annotations")))
    finalizers = list(sequence(meta.get("finalizers")))
    owners = [dict(mapping(r)) for r in sequence(meta.get("ownerReferences"))]
    if old is not None:
        old_meta = metadata(old)
        for k, v in mapping(old_meta.get("labels")).items():
            new_labels.setdefault(k, v)
        for k, v in mapping(old_meta.get("annotations")).items():
            new_annotations.setdefault(k, v)
        finalizers = sorted(set(finalizers) | set(sequence(old_meta.get("finalizers"))))
        owners = [dict(mapping(r)) for r in sequence(old_meta.get("ownerReferences"))]
        if old_meta.get("resourceVersion"):
            meta["resourceVersion"] = old_meta["resourceVersion"]
    ref = _owner_ref(rd)
    owners = [ref if o.get("uid") == uid(rd) else o for o in owners]
    if ref not in owners:
        owners.append(ref)
    new_annotations[RESOURCE_HASH_ANNOTATION] = resource_hash(resource)
    new_annotations[RESOURCE_FROM_ANNOTATION] = name(rd)
    meta.update(namespace=namespace, ownerReferences=owners, annotations=new_annotations)
    if new_labels:
        meta["labels"] = new_labels
    if finalizers:
        meta["finalizers"] = finalizers
    meta.pop("uid", None)
    meta.pop("creationTimestamp", None)
    new["metadata"] = meta
    return new


def needs_update(old: KubeObject, new: KubeObject) -> bool:
    """Anything but ``metadata`` and ``status`` differs (``needToUpdate``)."""

    def body(obj: KubeObject) -> dict[str, Any]:
        return {k: v for k, v in obj.items() if k not in ("metadata", "status")}

    return body(old) != body(new)


def plan(rd: KubeObject, namespaces: Sequence[KubeObject], existing: Mapping[str, KubeObject]) -> Plan | None:
    """The round for ``rd`` given every Namespace and ``existing`` (namespace -> the object of
    the resource's kind and name there, whoever owns it). ``None`` when the resource is not a
    Secret or ConfigMap with a name (the webhook refuses those; upstream does nothing)."""
    resource = mapping(mapping(rd.get("spec")).get("resource"))
    if resource.get("kind") not in SUPPORTED_KINDS or not name(resource):
        return None
    targets = mapping(mapping(rd.get("spec")).get("targets"))
    matched, unmatched = target_namespaces(targets, namespaces)
    by_name = {name(ns): ns for ns in namespaces}
    out = Plan(desired=len(matched))
    for ns in matched:
        namespace = by_name.get(ns)
        if namespace is None or is_being_deleted(namespace):
            out.failures.append(Failure(NOT_EXISTS, ns, NOT_EXISTS_REASON))
            continue
        old = existing.get(ns)
        if old is None:
            out.create[ns] = desired_copy(rd, ns)
        elif not is_controlled_by(old, rd):
            out.failures.append(Failure(CONFLICT, ns, CONFLICT_REASON))
        else:
            new = desired_copy(rd, ns, old)
            if needs_update(old, new):
                out.update[ns] = new
    for ns in unmatched:
        old = existing.get(ns)
        if old is not None and not is_being_deleted(by_name[ns]) and is_controlled_by(old, rd):
            out.delete[ns] = uid(old)
    return out


def new_status(
    rd: KubeObject,
    desired: int,
    failures: Sequence[Failure],
    now: str,
) -> StatusView:
    """The status after a round (``calculateNewStatus``): ``failures`` are every failed namespace
    of the round (distribution and cleanup); ``succeeded`` counts the targets without a failure
    (a cleanup failure is in an untargeted namespace); ``now`` is the RFC 3339 time stamped on a
    condition whose status changed."""
    conditions: list[ConditionView] = [
        {"type": t, "status": "False", "reason": "Succeeded"} for t in CONDITION_TYPES
    ]
    for f in failures:
        cond = conditions[f.condition]
        cond["status"] = "True"
        cond["reason"] = f.reason
        cond.setdefault("failedNamespace", []).append(f.namespace)
    old = [mapping(c) for c in sequence(mapping(rd.get("status")).get("conditions"))]
    for i, cond in enumerate(conditions):
        if (
            len(old) == len(conditions)
            and old[i].get("status") == cond["status"]
            and old[i].get("lastTransitionTime")
        ):
            cond["lastTransitionTime"] = str(old[i]["lastTransitionTime"])
        else:
            cond["lastTransitionTime"] = now
    targets_failed = len({f.namespace for f in failures if f.condition != DELETE_FAILED})
    succeeded = max(0, desired - targets_failed)
    return {
        "desired": desired,
        "succeeded": succeeded,
        "failed": desired - succeeded,
        "observedGeneration": int(metadata(rd).get("generation") or 0),
        "conditions": conditions,
    }
