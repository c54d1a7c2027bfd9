"""PersistentPodState's webhooks: its own validating webhook and its step of the pod webhook.

- ``vpersistentpodstate.kb.io`` (upstream v1.8's path ``/validate-apps-kruise-io-persistentpodstate``,
  CREATE and UPDATE of ``persistentpodstates``; an UPDATE only when ``spec`` changed):
  :func:`~.validation.validate_pps` against the namespace's other PersistentPodStates (informer
  cache); refused with HTTP 400 and the aggregated message, nothing stored.
- :class:`PpsPodMutator` joins the mutating pod chain (``mpod.kb.io``): a pod created with a
  controller ownerReference to a StatefulSet (``apps`` or ``apps.kruise.io``) whose
  PersistentPodState recorded a state under the pod's name gets that state's topology
  (:func:`~.core.inject`). :func:`pod_terms` scopes the pod webhook to the pods of the
  StatefulSets a PersistentPodState names (kept by the ``pod-webhook-scope`` controller).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from kruise.core.runtime import CacheReader, Read, controller_ref
from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.core.webhook.configuration import WebhookSettings, WebhookSpec
from kruise.workloads.admission.fielderrors import aggregate
from kruise.workloads.admission.workload_webhooks import validating_webhook_spec
from kruise.workloads.api.persistentpodstate import PERSISTENTPODSTATES, PersistentPodStateView
from kruise.workloads.objects import KubeObject, mapping, namespace, spec
from kruise.workloads.persistentpodstate.core import inject, is_statefulset, selected
from kruise.workloads.persistentpodstate.validation import validate_pps
from kruise.workloads.sidecarset.scope import cel_literal

__all__ = [
    "ANY_STATEFULSET_POD",
    "VALIDATE_PATH",
    "PersistentPodStateWebhooks",
    "PpsPodMutator",
    "pod_terms",
    "pps_reads",
    "pps_webhook_specs",
]

VALIDATE_PATH = "/validate-apps-kruise-io-persistentpodstate"

ANY_STATEFULSET_POD = (
    "(has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(r, "
    "has(r.controller) && r.controller && r.kind == 'StatefulSet' && "
    "(r.apiVersion.startsWith('apps/') || r.apiVersion.startsWith('apps.kruise.io/'))))"
)
"""CEL over the pod being created: a StatefulSet controls it (the fallback term for a name CEL
cannot quote safely)."""


def pod_terms(ppss: Iterable[KubeObject]) -> list[str]:
    """The pod webhook's scope terms (CEL over the pod being created), one per PersistentPodState
    of a StatefulSet: true for a pod of its namespace controlled by the StatefulSet its
    ``targetRef`` names, so only pods the step can change reach the webhook and a manager outage
    blocks no other StatefulSet's pods. A name CEL cannot quote safely
    (:func:`~kruise.workloads.sidecarset.scope.cel_literal`) widens its term to
    :data:`ANY_STATEFULSET_POD`."""
    terms: set[str] = set()
    for pps in ppss:
        ref = mapping(spec(pps).get("targetRef"))
        if ref.get("kind") != "StatefulSet":
            continue
        name, where = cel_literal(ref.get("name") or ""), cel_literal(namespace(pps))
        if name in (None, "''") or where in (None, "''"):
            terms.add(ANY_STATEFULSET_POD)
            continue
        owned = (
            "has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(r, "
            f"has(r.controller) && r.controller && r.kind == 'StatefulSet' && r.name == {name})"
        )
        terms.add(f"(request.namespace == {where} && {owned})")
    return sorted(terms)


def pps_reads() -> tuple[Read, ...]:
    """What the PersistentPodState webhooks read from the informers."""
    return (Read(PERSISTENTPODSTATES),)


def pps_webhook_specs(settings: WebhookSettings) -> list[WebhookSpec]:
    """``vpersistentpodstate.kb.io`` (CREATE, and UPDATEs changing the spec)."""
    return [validating_webhook_spec("persistentpodstate", VALIDATE_PATH, settings)]


def _in_namespace(cache: CacheReader, ns: str) -> list[PersistentPodStateView]:
    return [cast(PersistentPodStateView, p) for p in cache.list(PERSISTENTPODSTATES) if namespace(p) == ns]


class PersistentPodStateWebhooks:
    """The PersistentPodState validating webhook's handler."""

    def __init__(self, cache: CacheReader) -> None:
        self.cache = cache

    async def validate(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None:
            return AdmissionResponse.allow()
        obj = cast(PersistentPodStateView, req.object)
        old = cast(PersistentPodStateView, req.old_object) if req.operation == "UPDATE" else None
        others = _in_namespace(self.cache, req.namespace or namespace(req.object))
        errors = validate_pps(obj, old, others)
        if not errors:
            return AdmissionResponse.allow()
        return AdmissionResponse.deny(aggregate(errors), code=400, reason="BadRequest")


class PpsPodMutator:
    """The PersistentPodState step of the mutating pod webhook (see the module docstring)."""

    name = "persistent-pod-state"

    def __init__(self, cache: CacheReader) -> None:
        self.cache = cache

    async def mutate(self, pod: dict[str, Any], request: AdmissionRequest) -> bool:
        ref = controller_ref(pod)
        if ref is None or not is_statefulset(str(ref.get("apiVersion") or ""), str(ref.get("kind") or "")):
            return False
        pps = selected(_in_namespace(self.cache, namespace(pod)), ref)
        return pps is not None and inject(pod, pps)
