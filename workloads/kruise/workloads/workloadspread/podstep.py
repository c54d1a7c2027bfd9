"""WorkloadSpread's step of the mutating pod webhook (``mpod.kb.io``) and its pod-scope terms.

On a pod CREATE (:class:`WsPodMutator`), as upstream's ``pkg/util/workloadspread`` handler:

1. the pod's controller names the workload: a CloneSet (``apps.kruise.io``), a ReplicaSet
   (``apps``; the Deployment controlling that ReplicaSet when there is one), a Job (``batch``) or
   a StatefulSet (``apps``/``apps.kruise.io``);
2. the namespace's WorkloadSpread whose ``targetRef`` has that group, kind and name (the first
   found) is read fresh from the API server, :func:`~.subsets.record_creation` picks the subset
   and the new ``subsetStatuses`` are written to the status subresource with that read's
   resourceVersion (a conflict reads again, up to :data:`RETRIES` times, as upstream's
   ``RetryOnConflict``);
3. the pod gets the subset's constraints, patch and ``apps.kruise.io/matched-workloadspread``
   (:func:`~.subsets.inject_into_pod`).

No subset with room (or no status yet) leaves the pod unchanged. A failed status write refuses
the pod (HTTP 500), as upstream's handler returns the error. ``targetFilter`` is not applied.

:func:`pod_terms` scopes the pod webhook to the target workloads' pods (a Deployment's pods by its
ReplicaSets' ``<name>-`` prefix).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, cast

from kruise.core.errors import ApiError, ConflictError, NotFoundError
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import REPLICASETS
from kruise.core.runtime import CacheReader, controller_ref
from kruise.core.webhook import AdmissionRequest
from kruise.workloads.api.workloadspread import WORKLOADSPREADS, TargetView, WorkloadSpreadView
from kruise.workloads.objects import KubeObject, mapping, name, namespace, spec
from kruise.workloads.podwebhook import PodMutationError
from kruise.workloads.sidecarset.scope import cel_literal
from kruise.workloads.workloadspread.subsets import inject_into_pod, record_creation
from kruise.workloads.workloadspread.validation import same_target

__all__ = ["RETRIES", "WsPodMutator", "pod_terms", "target_of_pod"]

RETRIES = 5
_OWNER_KINDS = {"CloneSet": "apps.kruise.io", "ReplicaSet": "apps", "Job": "batch", "StatefulSet": ""}


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def target_of_pod(pod: KubeObject, replicaset: KubeObject | None) -> TargetView | None:
    """The workload a pod belongs to (see the module doc); ``replicaset`` is the pod's controlling
    ReplicaSet when it has one (its own controller, a Deployment, is then the target)."""
    ref = controller_ref(pod)
    if ref is None:
        return None
    kind, api_version = str(ref.get("kind") or ""), str(ref.get("apiVersion") or "")
    if kind not in _OWNER_KINDS:
        return None
    group = _group(api_version)
    if kind == "StatefulSet" and group not in ("apps", "apps.kruise.io"):
        return None
    if kind != "StatefulSet" and group != _OWNER_KINDS[kind]:
        return None
    if kind == "ReplicaSet" and replicaset is not None:
        owner = controller_ref(replicaset)
        if (
            owner is not None
            and owner.get("kind") == "Deployment"
            and _group(str(owner.get("apiVersion"))) == "apps"
        ):
            return {
                "apiVersion": str(owner.get("apiVersion")),
                "kind": "Deployment",
                "name": str(owner.get("name")),
            }
    return {"apiVersion": api_version, "kind": kind, "name": str(ref.get("name") or "")}


def pod_terms(workloadspreads: Iterable[KubeObject]) -> list[str]:
    """CEL terms over the pod being created, one per WorkloadSpread: a pod of its namespace whose
    controller is the target (a Deployment's: a ReplicaSet named ``<deployment>-...``). A name CEL
    cannot quote safely is skipped (such a pod is not spread)."""
    terms: set[str] = set()
    for ws in workloadspreads:
        ref = mapping(spec(ws).get("targetRef"))
        kind = str(ref.get("kind") or "")
        target, where = cel_literal(str(ref.get("name") or "")), cel_literal(namespace(ws))
        if target in (None, "''") or where in (None, "''") or not kind:
            continue
        if kind == "Deployment":
            prefix = cel_literal(f"{ref.get('name')}-")
            match = f"r.kind == 'ReplicaSet' && r.name.startsWith({prefix})"
        else:
            match = f"r.kind == {cel_literal(kind)} && r.name == {target}"
        owned = (
            "has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(r, "
            f"has(r.controller) && r.controller && {match})"
        )
        terms.add(f"(request.namespace == {where} && {owned})")
    return sorted(terms)


class WsPodMutator:
    """The WorkloadSpread step of the mutating pod webhook (see the module docstring)."""

    name = "workloadspread"

    def __init__(self, kube: KubeClient, cache: CacheReader) -> None:
        self.kube = kube
        self.cache = cache

    async def _replicaset(self, pod: KubeObject) -> KubeObject | None:
        ref = controller_ref(pod)
        if ref is None or ref.get("kind") != "ReplicaSet":
            return None
        return await self.kube.get_or_none(REPLICASETS, str(ref.get("name")), namespace(pod))

    async def mutate(self, pod: dict[str, Any], request: AdmissionRequest) -> bool:
        target = target_of_pod(pod, await self._replicaset(pod))
        if target is None:
            return False
        ns = namespace(pod)
        matched = next(
            (
                w
                for w in self.cache.list(WORKLOADSPREADS)
                if namespace(w) == ns
                and same_target(cast(TargetView, mapping(spec(w).get("targetRef"))), target)
            ),
            None,
        )
        if matched is None:
            return False
        pod_name = str((pod.get("metadata") or {}).get("name") or "")
        for _ in range(RETRIES):
            try:
                ws = cast(WorkloadSpreadView, await self.kube.get(WORKLOADSPREADS, name(matched), ns))
            except NotFoundError:
                return False
            statuses = (ws.get("status") or {}).get("subsetStatuses") or []
            recorded = record_creation(statuses, pod_name, datetime.now(UTC))
            if recorded.subset is None:
                return False
            if recorded.statuses is not None:
                body = {**ws, "status": {**(ws.get("status") or {}), "subsetStatuses": recorded.statuses}}
                try:
                    await self.kube.replace(WORKLOADSPREADS, cast(dict[str, Any], body), subresource="status")
                except ConflictError:
                    continue
                except ApiError as err:
                    raise PodMutationError(str(err)) from err
            subset = next(
                (s for s in (ws.get("spec") or {}).get("subsets") or [] if s.get("name") == recorded.subset),
                None,
            )
            if subset is None:
                return False
            injected = inject_into_pod(pod, subset, name(ws), recorded.uid)
            pod.clear()
            pod.update(injected)
            return True
        raise PodMutationError(f"update WorkloadSpread({ns}/{name(matched)}) status: too many conflicts")
